/*
 * cli_check.c - `capdelegate check`: would the module accept this policy, and is it wise?
 * Errors are the core's own FILE:LINE messages (the text the module logs); warnings are what
 * the module accepts but an administrator should look at twice.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli_common.h"
#include "cli_nss.h"
#include "cli_out.h"
#include "cli_stage.h"

static const char usage[] =
	"usage: capdelegate check [--config FILE] [--confdir DIR] [--warn-within DURATION] [--tsv]\n"
	"       capdelegate check --staged FILE [--as PATH] [--no-worse] [--config FILE]\n"
	"                         [--confdir DIR] [--warn-within DURATION] [--tsv]\n"
	"\n"
	"Validate the policy (default " CD_DEFAULT_CONFIG ") exactly as pam_capdelegate reads it.\n"
	"--staged FILE: judge the whole policy as if FILE were installed at PATH (default: the main\n"
	"file; or a drop-in DIR/NAME.conf), wherever FILE is; FILE's own place is not judged\n"
	"(config management's validate: command). --no-worse: also pass FILE (exit 0, or 1 for\n"
	"warnings of its own) into a policy other files keep rejected, when FILE alone has no\n"
	"errors and the installed policy is rejected already: installing it makes nothing worse.\n"
	"Exit 0: clean. 1: warnings only (unknown users or groups, risky grants, contradictions,\n"
	"names whose octal escape a winbind name could have meant literally, NSS settings under\n"
	"which a group answer can be incomplete: nsswitch.conf's order, nscd's group cache, a\n"
	"name /etc/group and NSS give different gids, lines whose window has ended). Notes name\n"
	"each group line that gives less than \"*\": the grants that rest on NSS answering\n"
	"completely; each line not yet in force; each line ending within DURATION (7d, 36h,\n"
	"90m, 45s; default 7d; 0: none), by the system clock, in UTC.\n"
	"2: errors (the module would grant nothing: a syntax error, or a file or directory on its\n"
	"resolved path that someone other than root can change).\n"
	"After the verdict line, the rules read, then each line's window: aligned on a terminal,\n"
	"tab-separated records elsewhere and with --tsv.\n";

/* Capabilities that amount to root, or to rewriting what root trusts: delegating one of these
 * delegates (nearly) everything. See capabilities(7) and the upstream "capability to root" lists. */
static const char *const risky_caps[] = {
	"cap_sys_admin", "cap_setpcap", "cap_dac_override", "cap_dac_read_search",
	"cap_sys_module", "cap_sys_ptrace", "cap_sys_rawio", "cap_setuid", "cap_setgid",
	"cap_setfcap", "cap_bpf", "cap_chown", "cap_fowner", "cap_fsetid", "cap_mknod",
	"cap_mac_admin", "cap_mac_override", "cap_linux_immutable", "cap_sys_chroot",
	"cap_sys_boot", "cap_checkpoint_restore",
};

static cd_capmask risky_mask(void)
{
	cd_capmask m = 0;
	for (size_t i = 0; i < sizeof(risky_caps) / sizeof(risky_caps[0]); i++) {
		int cap = cd_cap_from_name(risky_caps[i], strlen(risky_caps[i]));
		if (cap >= 0)	/* an older libcap may not know cap_bpf: nothing to warn about */
			m |= (cd_capmask)1 << cap;
	}
	return m;
}

/* "FILE:LINE: MSG" or, with @what, "FILE:LINE: WHAT 'NAME' MSG": every warning names what it
 * is about, the subject or the capabilities. */
static void warn_rule(const struct cd_rule *r, const char *what, const char *msg,
		      cd_capmask caps)
{
	fputs("capdelegate: warning: ", stderr);
	fputs(r->file, stderr);	/* the main file or a drop-in, escaped by the core */
	fprintf(stderr, ":%zu: ", r->line);
	if (what != NULL) {
		fprintf(stderr, "%s '", what);
		cli_print_name(stderr, r->name);
		fputs("' ", stderr);
	}
	fputs(msg, stderr);
	if (caps) {
		fputs(": ", stderr);
		cli_print_caps(stderr, caps);
	}
	fputc('\n', stderr);
}

/* A note, not a warning: "FILE:LINE: KIND 'NAME' cannot be looked up (why): ...". A lookup
 * that fails (a directory down) says nothing about the policy: a deploy is not refused for it. */
static void note_lookup_failed(const struct cd_rule *r, const char *kind, int err)
{
	char name[CD_MAX_NAME_LEN * 4 + 8];
	cd_name_form(name, sizeof(name), r->name, CD_MAX_NAME_LEN);
	fprintf(stderr, "capdelegate: note: %s:%zu: %s '%s' cannot be looked up (%s): whether the "
		"line can match is not known here\n", r->file, r->line, kind, name, strerror(err));
}

/* Does NSS know the subject of @r? A warning when it says no; a note when it cannot answer.
 * Memory running out here is this process's, not NSS's answer: *nomem is set. */
static size_t check_subject_known(const struct cd_rule *r, int *nomem)
{
	if (r->kind != CD_SUBJECT_USER && r->kind != CD_SUBJECT_GROUP)
		return 0;
	const char *kind = r->kind == CD_SUBJECT_USER ? "user" : "group";
	int known = r->kind == CD_SUBJECT_USER ? cd_nss_user_exists(r->name) : cd_nss_group_exists(r->name);
	if (known < 0 && errno == ENOMEM) {
		*nomem = 1;
		return 0;
	}
	if (known < 0)
		note_lookup_failed(r, kind, errno);
	if (known != 0)
		return 0;
	warn_rule(r, kind, "unknown to NSS (the line never matches)", 0);
	return 1;
}

static size_t check_rule(const struct cd_rule *r, cd_capmask risky, int *nomem)
{
	size_t warnings = check_subject_known(r, nomem);
	if (r->caps & risky) {
		warn_rule(r, NULL, "grants capabilities that lead to full root", r->caps & risky);
		warnings++;
	}
	return warnings;
}

static int same_subject(const struct cd_rule *a, const struct cd_rule *b)
{
	return a->kind == b->kind && (a->kind == CD_SUBJECT_DEFAULT || strcmp(a->name, b->name) == 0);
}

/* Subject (kind, then name), then line: @x and @y index @all, the lines in the order read. */
static int subject_cmp(const void *x, const void *y, void *all)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const struct cd_rule *a = ((const struct cd_rule **)all)[i];
	const struct cd_rule *b = ((const struct cd_rule **)all)[j];
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	int c = a->kind == CD_SUBJECT_DEFAULT ? 0 : strcmp(a->name, b->name);
	if (c != 0)
		return c;
	return i < j ? -1 : i > j;	/* read order: the main file's lines, then each drop-in's */
}

/* Can @a and @b be in force at one moment (their windows overlap; a line without one always
 * is)? Lines that never are cannot contradict each other. */
static int overlap(const struct cd_rule *a, const struct cd_rule *b)
{
	int64_t start = INT64_MIN, end = INT64_MAX;
	if (a->has_from)
		start = a->from;
	if (b->has_from && b->from > start)
		start = b->from;
	if (a->has_until)
		end = a->until;
	if (b->has_until && b->until < end)
		end = b->until;
	return start < end;
}

/* The rules of one subject, r[0..n) in line order: each "none" line beside a granting one
 * in force at the same time. */
static size_t warn_contradiction(const struct cd_rule **r, size_t n)
{
	size_t warnings = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i]->caps != 0)
			continue;
		const struct cd_rule *grant = NULL;
		cd_capmask all = 0;
		for (size_t j = 0; j < n; j++) {
			if (!overlap(r[i], r[j]))
				continue;
			if (r[j]->caps != 0 && grant == NULL)
				grant = r[j];
			all |= r[j]->caps;
		}
		if (grant == NULL)
			continue;
		fputs("capdelegate: warning: ", stderr);
		fputs(r[i]->file, stderr);
		fprintf(stderr, ":%zu: \"none\" for ", r[i]->line);
		cli_print_subject(stderr, r[i]->kind, r[i]->name);
		fputs(" contradicts ", stderr);
		fputs(grant->file, stderr);
		fprintf(stderr, ":%zu: a subject's lines add up, so the lines of ", grant->line);
		cli_print_subject(stderr, r[i]->kind, r[i]->name);
		fputs(" grant ", stderr);
		cli_print_caps(stderr, all);
		fputc('\n', stderr);
		warnings++;
	}
	return warnings;
}

/* A subject's lines add up (capdelegate.conf(5), RESOLUTION), so "alice none" beside "alice
 * cap_net_raw" takes nothing away: whoever wrote the "none" meant something the module will
 * not do. Every line read, in force now or not. Sorted by subject, so a policy of many lines
 * costs n log n, not n^2 (but for one subject's lines, which are few). */
static size_t check_contradictions(const struct cd_rule **all, size_t n, int *nomem)
{
	size_t *order = calloc(n + 1, sizeof(*order));
	const struct cd_rule **r = calloc(n + 1, sizeof(*r));
	size_t warnings = 0;
	if (order == NULL || r == NULL)
		*nomem = 1;
	for (size_t i = 0; !*nomem && i < n; i++)
		order[i] = i;
	if (!*nomem)
		qsort_r(order, n, sizeof(*order), subject_cmp, all);
	for (size_t i = 0; !*nomem && i < n; i++)
		r[i] = all[order[i]];
	for (size_t i = 0, j; !*nomem && i < n; i = j) {
		for (j = i + 1; j < n && same_subject(r[i], r[j]); j++)
			continue;
		warnings += warn_contradiction(r + i, j - i);
	}
	free(order);
	free(r);
	return warnings;
}

/* Entries of the drop-in directory the module does not read (editor backups, dotfiles, files
 * not named *.conf): an administrator who meant one of them should see that, and why. */
static void list_ignored(const struct cd_policy *pol, const char *dir)
{
	for (size_t i = 0; i < pol->nignored; i++) {
		fputs("capdelegate: note: ", stderr);
		cli_text_escape(stderr, dir);
		fputc('/', stderr);
		cli_text_escape(stderr, pol->ignored[i].name);
		fprintf(stderr, ": not read: %s\n", pol->ignored[i].why);
	}
}

/* A policy file modified this recently may have been rewritten in place just now. */
#define RECENT_EDIT_SECONDS 600

/* The newest file of the policy, when it was modified in the last RECENT_EDIT_SECONDS: a file
 * rewritten in place can be read half-written by a login, and its first part can grant more
 * than the whole (capdelegate.conf(5), CHANGING THE POLICY). Only a rename is safe; check
 * cannot see how the file was written, so it reminds. Named by its resolved path: renamed over
 * a symbolic link, a new file would replace the link, not the policy. */
static void note_recent_edit(const struct cd_policy *pol)
{
	const char *newest = NULL;
	struct timespec at = { 0, 0 };	/* to the nanosecond: files written in one second differ */
	time_t when, now = time(NULL);
	for (size_t i = 0; i < pol->nsources; i++) {
		struct stat st;
		if (pol->sources[i].stand_in)
			continue;	/* not installed: nothing a login reads */
		if (stat(pol->sources[i].path, &st) == 0 &&
		    (newest == NULL || st.st_mtim.tv_sec > at.tv_sec ||
		     (st.st_mtim.tv_sec == at.tv_sec && st.st_mtim.tv_nsec > at.tv_nsec))) {
			newest = pol->sources[i].path;
			at = st.st_mtim;
		}
	}
	when = at.tv_sec;
	char *real = newest != NULL && now - when <= RECENT_EDIT_SECONDS ? realpath(newest, NULL) : NULL;
	if (real == NULL)
		return;
	fputs("capdelegate: note: ", stderr);
	cli_text_escape(stderr, real);
	fprintf(stderr, ": modified %lld seconds ago: install policy files by rename (a temporary "
		"file in the same directory, then mv), never rewrite one in place: a login may read "
		"it half-written (capdelegate edit installs by rename; nothing to do after it)\n",
		(long long)(now > when ? now - when : 0));
	free(real);
}

/* The first line: the file at fault and the status, or the counts of a policy the module reads.
 * A syntax error in several files names the first and counts the others. */
static void print_verdict(const struct cd_policy *pol, size_t warnings)
{
	if (pol->status == CD_POLICY_OK) {
		cli_text_escape(stdout, pol->path);
		fputs(": ok, ", stdout);
		cli_print_count(stdout, pol->nrules + pol->noutside, "rule", "rules");
		fputs(", ", stdout);
		cli_print_count(stdout, warnings, "warning", "warnings");
		putchar('\n');
		return;
	}
	cli_text_escape(stdout, pol->failed_path ? pol->failed_path : pol->path);
	printf(": %s", cd_status_str(pol->status));
	size_t others = 0;
	for (size_t i = 0; pol->status == CD_POLICY_SYNTAX && i < pol->nsources; i++)
		others += pol->sources[i].nerrors > 0;
	if (others > 1) {
		fputs(" (and in ", stdout);
		cli_print_count(stdout, others - 1, "other file", "other files");
		putchar(')');
	}
	fputs(": the module grants nothing\n", stdout);
}

/* What the module reads, one record per rule (in force now or not), after the verdict line
 * (the first line stays the verdict: scripts read it), then the lines' windows. */
static int print_rules(const struct cd_policy *pol, enum cli_form form)
{
	static const char *const cols[] = { "LINE", "SUBJECT", "CAPABILITIES", NULL };
	struct cli_table t;
	size_t n;
	const struct cd_rule **all = cli_policy_all_rules(pol, &n);
	if (all == NULL)
		return cli_out_of_memory("check", "the rules are not listed");
	if (form == CLI_FORM_TABLE && n > 0)
		putchar('\n');	/* apart from the verdict line */
	cli_table_start(&t, stdout, form, "rule", cols);
	for (size_t i = 0; i < n; i++) {
		const struct cd_rule *r = all[i];
		FILE *out = cli_table_row(&t);
		fprintf(out, "%s:%zu\t", r->file, r->line);	/* r->file is escaped by the core */
		cli_print_subject(out, r->kind, r->name);
		fputc('\t', out);
		cli_print_caps(out, r->caps);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
	free(all);
	if (!pol->at_set)
		return 0;	/* not read: no line to show */
	return cli_print_windows(form, pol, pol->at, NULL, "The lines that hold for a time, at the "
				 "clock's now (capdelegate.conf(5), WINDOWS)", "check");
}

/* Notes of the lines ending within this many seconds (--warn-within; 0: none). */
static int64_t warn_within = 7 * 86400;

/* "FILE:LINE: SUBJECT CAPS": which line, and what it gives. */
static void window_line(const struct cd_rule *r)
{
	fprintf(stderr, "%s:%zu: ", r->file, r->line);
	cli_print_subject(stderr, r->kind, r->name);
	fputc(' ', stderr);
	cli_print_caps(stderr, r->caps);
}

/* Each line's window at the clock's now: one that ended is a warning (login no longer reads
 * it: a grant someone may still count on, or a line to remove); notes for one ending within
 * warn_within and one not yet started. Returns the warnings. */
static size_t check_windows(const struct cd_rule *const *all, size_t n, int64_t now)
{
	char when[CLI_WHEN_SIZE];
	size_t warnings = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cd_rule *r = all[i];
		if (r->has_until && r->until <= now) {
			fputs("capdelegate: warning: ", stderr);
			window_line(r);
			fprintf(stderr, ": ended at %s: login no longer grants it; remove the line\n",
				cli_when(r->until, now, when, sizeof(when)));
			warnings++;
		} else if (r->has_from && r->from > now) {
			fputs("capdelegate: note: ", stderr);
			window_line(r);
			fprintf(stderr, ": not yet in force: starts at %s\n",
				cli_when(r->from, now, when, sizeof(when)));
		} else if (r->has_until && warn_within > 0 && r->until - now <= warn_within) {
			fputs("capdelegate: note: ", stderr);
			window_line(r);
			fprintf(stderr, ": ends at %s\n", cli_when(r->until, now, when, sizeof(when)));
		}
	}
	return warnings;
}

/* check's judgement of the policy read into @pol: its warnings counted into *warnings. The
 * lines' windows are judged at the clock's now, as login judges them: what follows (NSS
 * findings, edit's verdict) sees the lines in force; the lines' own checks see every line. */
static int judge_read(struct cd_policy *pol, enum cd_status st, size_t *warnings)
{
	cd_capmask risky = risky_mask();
	int nomem = 0;
	int64_t now = 0;
	size_t n = 0;
	*warnings = 0;
	cli_policy_now(pol, "check", &now);
	st = st == CD_POLICY_OK ? pol->status : st;
	const struct cd_rule **all = cli_policy_all_rules(pol, &n);
	nomem = all == NULL;
	for (size_t i = 0; i < n && !nomem; i++)
		*warnings += check_rule(all[i], risky, &nomem);
	if (!nomem)
		*warnings += check_contradictions(all, n, &nomem);
	if (!nomem && pol->at_set)
		*warnings += check_windows(all, n, now);
	free(all);
	if (nomem) {	/* a judgement cut short is a system error, as a policy unread is */
		pol->status = CD_POLICY_SYSERR;
		return cli_out_of_memory("check", "the policy's subjects are not all judged"), CLI_ERROR;
	}
	*warnings += pol->nwarnings;	/* the core's, already on stderr as FILE:LINE: message */
	return st != CD_POLICY_OK ? CLI_ERROR : *warnings ? CLI_WARN : CLI_OK;
}

int cli_check_judge(struct cd_policy *pol, const char *config, const char *confdir,
		    const struct cd_stand_in *s, size_t *warnings)
{
	return judge_read(pol, cli_load_policy_as(pol, config, confdir, s), warnings);
}

int cli_check_judge_alone(struct cd_policy *pol, const struct cd_stand_in *s, int loud,
			  size_t *warnings)
{
	struct cd_log log = { .sink = loud ? NULL : cli_log_discard };
	struct cd_load_opts opts = { .owner = 0 };
	enum cd_status st = cd_policy_parse(pol, s->shown_path, s->text ? s->text : "", s->len,
					    &opts, &log);
	return judge_read(pol, st, warnings);
}

/* What the policy rests on in NSS (cli_nss.h): a narrowing group is a note, the host's
 * settings that can make an answer incomplete are warnings, but notes with --staged: a file
 * being deployed is not refused for the host it lands on (its plain check warns). Written to a
 * memory stream shown after the verdict, so that the verdict line comes first whatever
 * happens later. */
struct nss_notes {
	FILE *out;
	int staged;
	long warnings;
};

static void print_nss_item(void *arg, const char *id, const struct cd_rule *r, const char *where,
			   cd_capmask caps, const char *text)
{
	struct nss_notes *n = arg;
	char name[CD_MAX_NAME_LEN * 4 + 8];
	int warn = strcmp(id, "narrowing-group") != 0 && (!n->staged || r != NULL);
	(void)where;	/* the text names it */
	(void)caps;
	n->warnings += warn;
	fputs(warn ? "capdelegate: warning: " : "capdelegate: note: ", n->out);
	if (r != NULL) {
		cd_name_form(name, sizeof(name), r->name, CD_MAX_NAME_LEN);
		fprintf(n->out, "%s:%zu: group '%s' ", r->file, r->line, name);
	}
	fprintf(n->out, "%s\n", text);
}

struct check_args {
	const char *config, *confdir, *staged, *as;
	int no_worse;
};

/* --warn-within DURATION: a whole number and its unit, d, h, m or s ("7d", "36h"), or 0. 0,
 * or -1 (said). */
static int parse_duration(const char *text, int64_t *secs)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	int64_t unit = *end == 'd' ? 86400 : *end == 'h' ? 3600 : *end == 'm' ? 60 : *end == 's' ? 1 : 0;
	int whole = text[0] >= '0' && text[0] <= '9' && errno == 0 && end != text;
	if (whole && ((v == 0 && *end == '\0') ||
		      (unit != 0 && end[1] == '\0' && v <= INT64_MAX / 86400 / unit))) {
		*secs = (int64_t)v * (unit ? unit : 1);
		return 0;
	}
	fputs("capdelegate: check: --warn-within '", stderr);
	cli_text_escape(stderr, text);
	fputs("': a whole number and its unit, d, h, m or s (7d, 36h, 90m), or 0 for no notes\n",
	      stderr);
	return -1;
}

/* check's options; the index of the first operand, or -1 (usage printed). */
static int parse_check_args(int argc, char **argv, struct check_args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "confdir", required_argument, NULL, 'd' },
		{ "staged", required_argument, NULL, 's' }, { "as", required_argument, NULL, 'a' },
		{ "no-worse", no_argument, NULL, 'w' },
		{ "warn-within", required_argument, NULL, 'W' }, { NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		if (c == 'c')
			a->config = optarg;
		else if (c == 'd')
			a->confdir = optarg;
		else if (c == 's')
			a->staged = optarg;
		else if (c == 'a')
			a->as = optarg;
		else if (c == 'w')
			a->no_worse = 1;
		else if (c == 'W' && parse_duration(optarg, &warn_within) < 0)
			return -1;
		else if (c != 'W') {
			cli_bad_option(argv, usage);
			return -1;
		}
	}
	return optind;
}

/* --staged FILE --as PATH: FILE's text, standing for the policy file PATH names. Its own place
 * is config management's temporary directory, never read by a login: not judged. 0, or -1
 * (said on stderr). */
static int stage(const struct check_args *a, struct cli_text *t, struct cd_stand_in *s)
{
	const char *as = a->as, *why;
	if (cli_stand_in_place(as, a->config, a->confdir, &s->dropin) < 0) {
		fputs("capdelegate: check: --as '", stderr);
		cli_text_escape(stderr, as);
		fputs("' is neither the policy file '", stderr);
		cli_text_escape(stderr, a->config);
		fputs("' nor a drop-in NAME.conf of '", stderr);
		cli_text_escape(stderr, a->confdir);
		fputs("'\n", stderr);
		return -1;
	}
	if (cli_text_read(AT_FDCWD, a->staged, 0, t, &why) < 0) {
		fputs("capdelegate: ", stderr);
		cli_text_escape(stderr, a->staged);
		fprintf(stderr, ": %s%s%s: nothing checked\n", why, errno ? ": " : "",
			errno ? strerror(errno) : "");
		return -1;
	}
	*s = (struct cd_stand_in){ .dropin = s->dropin, .shown_path = a->staged,
				   .text = t->bytes, .len = t->len };
	fputs("capdelegate: note: ", stderr);
	cli_text_escape(stderr, a->staged);
	fputs(" stands for ", stderr);
	cli_text_escape(stderr, as);
	fputs(": the policy is judged as if it were installed there (the staged file's own owner, "
	      "mode and directory are not)\n", stderr);
	return 0;
}

/* --no-worse, the policy with the staged text @s rejected (@after): the text's own verdict when
 * installing it makes nothing worse (cli_stage.h), else 2; the reason on stderr either way. */
static int no_worse(const struct check_args *a, const struct cd_stand_in *s,
		    const struct cd_policy *after)
{
	struct cli_no_worse nw;
	cli_no_worse(&nw, after, a->config, a->confdir, s);
	fputs("capdelegate: note: --no-worse: ", stderr);
	if (nw.verdict == CLI_NO_WORSE) {
		cli_text_escape(stderr, s->shown_path);
		fputs(nw.own == CLI_OK ? " has no errors or warnings of its own" :
		      " has no errors of its own (its warnings are said above)", stderr);
		fputs(" and the installed policy is rejected already (", stderr);
		cli_print_rejection(stderr, &nw.before);
		fputs("): installing it makes nothing worse; the policy stays rejected (", stderr);
		cli_print_rejection(stderr, after);
		fputs(")\n", stderr);
	} else {
		fputs("not passed: ", stderr);
		cli_no_worse_why(stderr, &nw, after, s);
		fputc('\n', stderr);
	}
	int rc = nw.verdict == CLI_NO_WORSE ? nw.own : CLI_ERROR;
	cli_no_worse_free(&nw);
	return rc;
}

int cli_check_main(int argc, char **argv)
{
	struct check_args a = { NULL, NULL, NULL, NULL, 0 };
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	enum cli_form form = cli_output_form(&argc, argv);
	int first = parse_check_args(argc, argv, &a);
	if (first < 0)
		return CLI_ERROR;
	if (first < argc || ((a.as != NULL || a.no_worse) && a.staged == NULL)) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	a.config = a.config ? a.config : CD_DEFAULT_CONFIG;
	a.confdir = a.confdir ? a.confdir : CD_DEFAULT_CONFDIR;
	a.as = a.as ? a.as : a.config;
	struct cli_text text = { NULL, 0 };
	struct cd_stand_in staged = { 0 };
	if (a.staged != NULL && stage(&a, &text, &staged) < 0)
		return CLI_ERROR;
	struct cd_policy pol;
	size_t warnings;
	int rc = cli_check_judge(&pol, a.config, a.confdir, a.staged ? &staged : NULL, &warnings);
	if (pol.path == NULL) {
		cli_text_free(&text);
		return CLI_ERROR;	/* memory ran out before the policy was read (said) */
	}
	if (a.no_worse && rc == CLI_ERROR)
		rc = no_worse(&a, &staged, &pol);
	char *nss_text = NULL;
	size_t nss_len = 0;
	struct nss_notes notes = { open_memstream(&nss_text, &nss_len), a.staged != NULL, 0 };
	long nss = notes.out != NULL ? cli_nss_hazards(&pol, print_nss_item, &notes) : -1;
	if (notes.out != NULL && fclose(notes.out) != 0)
		nss = -1;
	nss = nss < 0 ? -1 : notes.warnings;
	if (nss < 0) {
		cli_out_of_memory("check", "what the policy rests on in NSS is not shown");
		rc = CLI_ERROR;
	} else if (nss > 0) {
		warnings += (size_t)nss;
		rc = rc == CLI_OK ? CLI_WARN : rc;
	}
	list_ignored(&pol, a.confdir);
	note_recent_edit(&pol);
	print_verdict(&pol, warnings);
	if (nss >= 0 && nss_len > 0) {
		fflush(stdout);
		fwrite(nss_text, 1, nss_len, stderr);
	}
	free(nss_text);
	if (print_rules(&pol, form) < 0)
		rc = CLI_ERROR;
	cd_policy_free(&pol);
	cli_text_free(&text);
	return rc;
}
