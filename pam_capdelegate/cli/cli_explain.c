/*
 * cli_explain.c - `capdelegate explain USER`: the policy lines that match USER and why, the
 * inheritable set login gives USER, and what USER gains by executing each capability file.
 * Resolution is the core's cd_resolve, the function the module calls.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "cd_apply.h"
#include "cli_common.h"
#include "cli_out.h"
#include "cli_userdb.h"

static const char usage[] =
	"usage: capdelegate explain USER [--at TIME] [--config FILE] [--confdir DIR]\n"
	"                               [--userdb DIR]... [--tsv] [PATH...]\n"
	"\n"
	"Show the policy lines matching USER (file:line and why: user, group or default), the\n"
	"inheritable set pI login gives USER, and for every file with capabilities below PATH\n"
	"(default: the directories of $PATH, and /usr) what USER gets when executing it:\n"
	"pP' = (X & fP) | (pI & fI), pE' = fE ? pP' : 0 (X: the bounding set).\n"
	"systemd's user records for USER (NAME.user, UID.user) are shown with what their\n"
	"capabilityAmbientSet adds and their capabilityBoundingSet takes from the grant;\n"
	"--userdb DIR reads them from DIR (repeatable) instead of systemd's search path.\n"
	"--at TIME: the grant of a login at TIME (UTC, 2026-12-14T18:00Z or ...T18:00:05Z; default\n"
	"now): the lines' windows are judged then, and each line naming USER that has a window is\n"
	"shown with it, in force, ended or not yet. NSS and the files are asked as they are now.\n"
	"Aligned tables on a terminal, tab-separated records elsewhere and with --tsv.\n"
	"Exit 0; 2 if USER is unknown, the policy is rejected (login then grants nothing), or a\n"
	"user record of USER cannot be read.\n";

/* TSV or aligned tables (cli_output_form), for every record explain prints. */
static enum cli_form form;

static void print_matches(const struct cd_grant *g)
{
	static const char *const cols[] = { "LINE", "VIA", "SUBJECT", "CAPABILITIES", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "match", cols);
	cli_table_title(&t, "The policy's lines that decide the grant");
	for (size_t i = 0; i < g->nmatched; i++) {
		const struct cd_rule *r = g->matched[i];
		FILE *out = cli_table_row(&t);
		fputs(r->file, out);	/* the main file or a drop-in, escaped by the core */
		fprintf(out, ":%zu\t%s\t", r->line, cd_subject_kind_str(g->via));
		cli_print_subject(out, r->kind, r->name);
		fputc('\t', out);
		cli_print_caps(out, r->caps);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

/* A value the kernel would not show (revision 1, which still grants at exec, or malformed)
 * tells us nothing: every field is "unknown", never "none". */
static void print_exec(struct cli_table *t, const struct cli_capfile *f, cd_capmask pi,
		       cd_capmask bound)
{
	struct cli_gain g = cli_exec_gain(pi, bound, f);
	const char *ignored = cli_fcaps_ignored(f);
	FILE *out = cli_table_row(t);
	cli_text_escape(out, f->path);
	if (f->read_errno != 0) {
		fputs("\tunknown\tunknown\tunknown\tunknown\tunknown", out);
	} else {
		fputc('\t', out);
		cli_print_caps(out, f->caps.permitted);
		fputc('\t', out);
		cli_print_caps(out, f->caps.inheritable);
		fprintf(out, "\t%s\t", f->caps.effective ? "yes" : "no");
		cli_print_caps(out, g.permitted);
		fputc('\t', out);
		cli_print_caps(out, g.effective);
	}
	fprintf(out, "\t%s", ignored ? ignored : "-");
	cli_table_end_row(t);
}

/* Is @p equal to or below @root (both canonical)? */
static int covered(const char *p, const char *root)
{
	size_t n = strlen(root);
	if (strcmp(root, "/") == 0)
		return 1;
	return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Add @dir (canonicalized) unless an existing root covers it; drop roots it covers. */
static void add_root(char **out, int *n, const char *dir)
{
	char *p = realpath(dir, NULL);
	if (p == NULL)
		return;	/* a $PATH entry that does not exist holds no files */
	for (int i = 0; i < *n; i++) {
		if (covered(p, out[i])) {
			free(p);
			return;
		}
	}
	for (int i = 0; i < *n;) {
		if (covered(out[i], p)) {
			free(out[i]);
			out[i] = out[--*n];
		} else {
			i++;
		}
	}
	out[(*n)++] = p;
}

/* $PATH's directories and /usr, canonical, none below another: each file is found once. */
static int default_roots(char ***roots)
{
	const char *env = getenv("PATH");
	char *copy = strdup(env ? env : "");
	char **out = copy ? calloc(strlen(copy) / 2 + 3, sizeof(*out)) : NULL;
	int n = 0;
	if (out == NULL) {
		free(copy);
		return -1;
	}
	char *save = NULL;
	for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
		if (tok[0] == '/')	/* a relative entry would depend on where explain runs */
			add_root(out, &n, tok);
	add_root(out, &n, "/usr");
	free(copy);
	*roots = out;
	return n;
}

static void print_user(const struct cd_user *u)
{
	static const char *const cols[] = { "USER", "UID", "GROUPS", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "user", cols);
	cli_table_title(&t, "The user, as NSS returns it");
	FILE *out = cli_table_row(&t);
	cli_print_name(out, u->name);
	fprintf(out, "\t%u\t", (unsigned)u->uid);
	for (size_t i = 0; i < u->ngroups; i++) {
		if (i)
			fputc(',', out);
		cli_print_name(out, u->groups[i]);
	}
	cli_table_end_row(&t);
	cli_table_end(&t);
}

/* A kind with one record: policy, pI, note; under TITLE in the table form (NULL: none). */
static FILE *single_start(struct cli_table *t, const char *kind, const char *const *cols,
			  const char *title)
{
	cli_table_start(t, stdout, form, kind, cols);
	cli_table_title(t, title);
	return cli_table_row(t);
}

static void single_end(struct cli_table *t)
{
	cli_table_end_row(t);
	cli_table_end(t);
}

static int explain_files(cd_capmask pi, char **paths, int npaths)
{
	char **roots = paths;
	int nroots = npaths, failed;
	if (npaths == 0 && (nroots = default_roots(&roots)) < 0)
		return cli_out_of_memory("explain", "no file examined");
	struct cli_scan scan = { .threads = 0 };	/* the walker's default */
	failed = cli_scan_roots(&scan, roots, nroots, CLI_WALK_LOCAL_ONLY);
	cd_capmask bound = cd_bounding_set();	/* this process's, as a login session's */
	static const char *const cols[] = { "FILE", "fP=", "fI=", "fE=", "pP'=", "pE'=", "IGNORED", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "exec", cols);
	cli_table_title(&t, "At exec: what each file gives the user (pP' and pE')");
	for (size_t i = 0; i < scan.nfiles; i++)
		print_exec(&t, &scan.files[i], pi, bound);
	cli_table_end(&t);
	cli_scan_free(&scan);
	if (npaths == 0) {
		for (int i = 0; i < nroots; i++)
			free(roots[i]);
		free(roots);
	}
	if (failed < 0)
		cli_out_of_memory("explain", "the files are not all shown");
	return failed ? -1 : 0;
}

/* Is @path's file name NAME.user or UID.user for @u? Matched on the name, so that a record of
 * the user that cannot be read is shown too. */
static int record_of(const char *path, const struct cd_user *u)
{
	const char *base = strrchr(path, '/');
	char uid[32];
	base = base ? base + 1 : path;
	size_t stem = strlen(base) > 5 ? strlen(base) - 5 : 0;
	snprintf(uid, sizeof(uid), "%u", (unsigned)u->uid);
	return stem > 0 && ((strlen(u->name) == stem && memcmp(base, u->name, stem) == 0) ||
			    (strlen(uid) == stem && memcmp(base, uid, stem) == 0));
}

/* Is @path one of @dirs (the error record of a directory that cannot be read: whether it
 * holds a record of the user is unknown, which is not "it holds none")? */
static int is_dir(const char *path, const char *const *dirs, size_t ndirs)
{
	for (size_t i = 0; i < ndirs; i++)
		if (strcmp(path, dirs[i]) == 0)
			return 1;
	return 0;
}

/* A set, or "-" when the record does not set it (not the same as an empty set). */
static void print_set(FILE *out, int has, cd_capmask m)
{
	if (has)
		cli_print_caps(out, m);
	else
		fputc('-', out);
}

/* One record: its sets, what the ambient set adds (all of it: pam_systemd raises it for
 * every program, outside the policy) and what the bounding set takes from the grant. */
static void print_record(struct cli_table *t, const struct cli_userdb_record *r, cd_capmask grant)
{
	FILE *out = cli_table_row(t);
	cli_text_escape(out, r->path);
	fputc('\t', out);
	print_set(out, r->f.has_ambient, r->f.ambient);
	fputc('\t', out);
	print_set(out, r->f.has_bounding, r->f.bounding);
	fputc('\t', out);
	cli_print_caps(out, r->error == NULL && r->f.has_ambient ? r->f.ambient : 0);
	fputc('\t', out);
	cli_print_caps(out, r->error == NULL && r->f.has_bounding ? grant & ~r->f.bounding : 0);
	fputc('\t', out);
	if (r->error != NULL) {
		fprintf(out, "error: %s", r->error);
	} else if (r->hidden_by != NULL) {
		fputs("hidden by ", out);
		cli_text_escape(out, r->hidden_by);
	} else if (r->same_as != NULL) {
		fputs("same record as ", out);
		cli_text_escape(out, r->same_as);
	} else {
		fputs("applies", out);
		if (r->privileged != NULL) {
			fputs(", with ", out);
			cli_text_escape(out, r->privileged);
		}
	}
	cli_table_end_row(t);
}

/* The user's records in @dirs; -1 if one cannot be read (or memory ran out). */
static int explain_userdb(const struct cd_user *u, cd_capmask grant, const char *const *dirs,
			  size_t ndirs)
{
	static const char *const cols[] = { "RECORD", "ambient=", "bounding=", "adds=", "removes=",
					    "STATE", NULL };
	struct cli_userdb db;
	if (cli_userdb_load(&db, dirs, ndirs) < 0) {
		cli_userdb_free(&db);
		return cli_out_of_memory("explain", "the user records are not all shown");
	}
	int bad = 0;
	struct cli_table t;
	cli_table_start(&t, stdout, form, "userdb", cols);
	cli_table_title(&t, "systemd's user records (pam_systemd, systemd 254 and later)");
	for (size_t i = 0; i < db.nrecords; i++) {
		const struct cli_userdb_record *r = &db.records[i];
		if (!record_of(r->path, u) && !is_dir(r->path, dirs, ndirs))
			continue;
		print_record(&t, r, grant);
		if (r->error != NULL) {
			fputs("capdelegate: explain: error: ", stderr);
			cli_text_escape(stderr, r->path);
			fprintf(stderr, ": %s: the session may not get the grant shown\n", r->error);
			bad = 1;
		}
	}
	cli_table_end(&t);
	cli_userdb_free(&db);
	return bad ? -1 : 0;
}

static void explain_error(const char *name, const char *what)
{
	fputs("capdelegate: explain: ", stderr);
	cli_print_name(stderr, name);
	fprintf(stderr, ": %s: login grants nothing\n", what);
}

/* A group lookup failed: login grants nothing when the grant depends on the groups (-1); when
 * it does not (cd_policy_needs_groups: the user's own line decides, or no line names a group),
 * login does not look them up, and the grant shown here does not use them: say so, and show
 * no groups (0). */
static int groups_failed(struct cd_user *u, const struct cd_policy *pol)
{
	int saved = errno;
	if (saved == ENOMEM)	/* this process's memory, not an answer of NSS: no grant shown */
		return cli_out_of_memory("explain", "nothing explained");
	char *why = cd_user_failure(u, saved);
	int needed = pol->status != CD_POLICY_OK || cd_policy_needs_groups(pol, u);
	if (needed) {
		explain_error(u->name, why ? why : "cannot look up the groups");
	} else {
		fputs("capdelegate: explain: ", stderr);
		cli_print_name(stderr, u->name);
		fprintf(stderr, ": %s: not needed, login does not look the groups up: %s\n",
			why ? why : "cannot look up the groups", cd_policy_names_user(pol, u) ?
			"the user's own line decides" : "the policy names no group");
		for (size_t i = 0; i < u->ngroups; i++)
			free(u->groups[i]);
		u->ngroups = 0;
	}
	free(why);
	return needed ? -1 : 0;
}

/* Options of explain: --config, --confdir, --userdb (repeatable), --at. */
struct explain_opts {
	const char *config, *confdir;
	const char **userdb;
	size_t nuserdb;
	int64_t at;	/* the moment the windows are judged at */
	int at_given;	/* --at was given */
};

/* Does a line of @pol, in force or not, hold for a time? */
static int has_windows(const struct cd_policy *pol)
{
	for (size_t i = 0; i < pol->nrules; i++)
		if (pol->rules[i].has_from || pol->rules[i].has_until)
			return 1;
	return pol->noutside > 0;
}

/* A user whose own lines have all ended (none in force) is resolved as if they were not in
 * the file: the user's groups' lines, then "*", decide. Said once per ended line. */
static void note_own_lines_ended(const struct cd_policy *pol, const struct cd_user *u, int64_t at)
{
	if (cd_policy_names_user(pol, u))
		return;
	for (size_t i = 0; i < pol->noutside; i++) {
		const struct cd_rule *r = &pol->outside[i];
		if (r->kind != CD_SUBJECT_USER || !r->has_until || r->until > at ||
		    !cd_rule_may_match(r, (void *)u))
			continue;
		struct cli_table t;
		FILE *out = single_start(&t, "note", NULL, NULL);
		fprintf(out, "%s:%zu: the user's own line ended at ", r->file, r->line);
		cli_print_when(out, r->until, at);
		fputs(": the lines of the user's groups and \"*\" decide", out);
		single_end(&t);
	}
}

/* The module's order: the account (canonical name), the policy judged at the moment asked
 * (its lines' windows), then the groups the policy needs, where any lookup error means
 * nothing is granted. */

static int cli_explain_user(const char *name, const struct explain_opts *o, char **paths,
			    int npaths)
{
	const char *config = o->config, *confdir = o->confdir;
	struct cd_user u;
	if (cd_user_lookup_passwd(&u, name) < 0) {
		explain_error(name, errno ? strerror(errno) : "user unknown to NSS");
		cd_user_free(&u);
		return CLI_ERROR;
	}
	struct cd_policy pol;
	struct cd_grant g = { 0 };
	enum cd_status st = cli_load_policy(&pol, config, confdir);
	if (pol.path == NULL) {
		cd_user_free(&u);
		return CLI_ERROR;	/* memory ran out before the policy was read (said) */
	}
	if (st == CD_POLICY_OK)
		st = cli_policy_at(&pol, o->at, "explain") < 0 ? pol.status : st;
	if (cd_user_load_groups(&u, &pol) < 0 && groups_failed(&u, &pol) < 0) {
		cd_policy_free(&pol);
		cd_user_free(&u);
		return CLI_ERROR;
	}
	int rc = cd_resolve(&pol, &u, &g);
	if (rc < 0)
		cli_out_of_memory("explain", "the grant shown is not login's");
	static const char *const policy_cols[] = { "POLICY", "STATUS", NULL };
	static const char *const pi_cols[] = { "pI", "VIA", NULL };
	static const char *const at_cols[] = { "AT", NULL };
	char when[32];
	struct cli_table t;
	print_user(&u);
	FILE *out = single_start(&t, "policy", policy_cols, "The policy");
	cli_text_escape(out, pol.path);
	fprintf(out, "\t%s", cd_status_str(st));
	single_end(&t);
	if (o->at_given || has_windows(&pol)) {	/* else no line depends on the moment */
		out = single_start(&t, "at", at_cols, "The moment judged (UTC)");
		fputs(cd_time_format(o->at, when, sizeof(when)), out);
		single_end(&t);
	}
	if (rc == 0)
		rc = cli_print_windows(form, &pol, o->at, &u, "The lines naming the user that hold for "
				       "a time (capdelegate.conf(5), WINDOWS)", "explain");
	note_own_lines_ended(&pol, &u, o->at);
	print_matches(&g);
	out = single_start(&t, "pI", pi_cols, "The inheritable set login gives the user (pI)");
	cli_print_caps(out, g.caps);
	fprintf(out, "\t%s", cd_subject_kind_str(g.via));
	single_end(&t);
	if (u.uid == 0) {	/* security/commoncap.c handle_privileged_root */
		fputs("root gains the whole bounding set at every exec unless SECBIT_NOROOT is set; "
		      "the exec records show the file-capability rule only", single_start(&t, "note", NULL, NULL));
		single_end(&t);
	}
	static const char *const userdb_default[] = CLI_USERDB_DEFAULT_DIRS;
	if (rc == 0)
		rc = explain_userdb(&u, g.caps, o->nuserdb ? o->userdb : userdb_default,
				    o->nuserdb ? o->nuserdb : CLI_USERDB_NDEFAULT);
	if (rc == 0)
		rc = explain_files(g.caps, paths, npaths);
	else
		explain_files(g.caps, paths, npaths);	/* still shown: the exit says not all is known */
	cd_grant_free(&g);
	cd_policy_free(&pol);
	cd_user_free(&u);
	return rc < 0 || st != CD_POLICY_OK ? CLI_ERROR : CLI_OK;
}

static int parse_args(int argc, char **argv, struct explain_opts *o)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "confdir", required_argument, NULL, 'd' },
		{ "userdb", required_argument, NULL, 'u' }, { "at", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *at = NULL;
	int c;
	/* --userdb may come argc times at most */
	if ((o->userdb = calloc((size_t)argc + 1, sizeof(*o->userdb))) == NULL)
		return cli_out_of_memory("explain", "nothing explained");
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'd': o->confdir = optarg; break;
		case 'u': o->userdb[o->nuserdb++] = optarg; break;
		case 't': at = optarg; o->at_given = 1; break;
		default: cli_bad_option(argv, usage); return -1;
		}
	}
	if (cli_time_arg("explain", at, &o->at) < 0)
		return -1;	/* said: nothing explained */
	return optind;
}

int cli_explain_main(int argc, char **argv)
{
	struct explain_opts o = { 0 };
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	form = cli_output_form(&argc, argv);
	int first = parse_args(argc, argv, &o), rc = CLI_ERROR;
	if (first >= 0 && first >= argc)
		fputs(usage, stderr);
	else if (first >= 0)
		rc = cli_explain_user(argv[first], &o, argv + first + 1, argc - first - 1);
	free(o.userdb);
	return rc;
}
