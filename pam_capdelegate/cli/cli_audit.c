/*
 * cli_audit.c - `capdelegate audit`: scan, subjects x files matrix, findings, text output.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cd_apply.h"
#include "cli_audit.h"
#include "cli_common.h"
#include "cli_marks.h"
#include "cli_nss.h"
#include "cli_out.h"

static const char usage[] =
	"usage: capdelegate audit [--config FILE] [--confdir DIR] [--marks FILE] [--json|--tsv]\n"
	"                         [--processes] [--threads N] [--userdb DIR]... [PATH...]\n"
	"\n"
	"List every file carrying security.capability below PATH (default /, local filesystems\n"
	"only), what each policy subject gains by executing it, and findings. Entries that\n"
	"vanished during the scan and errors are listed too. Exit 0 without findings, 1 with\n"
	"findings, 2 on errors (policy rejected, marks file rejected, any PATH or entry that could\n"
	"not be read) or error-level findings (fP-bypass, mark-refused, mark-error, ambient-grant,\n"
	"userdb-invalid, grant-unknown). With --processes, 1 also when a thread holds more than\n"
	"the policy gives its user now (stale-grant).\n"
	"\n"
	"  --config FILE   policy (default " CD_DEFAULT_CONFIG ")\n"
	"  --confdir DIR   its drop-ins, as the module's confdir= (default " CD_DEFAULT_CONFDIR ";\n"
	"                  empty: none)\n"
	"  --marks FILE    declared file marks (default " CD_DEFAULT_MARKS ", if it exists)\n"
	"  --json          one JSON document (schema in capdelegate(8))\n"
	"  --tsv           tab-separated records even on a terminal (the default elsewhere)\n"
	"  --processes     also list running threads with a non-empty inheritable set, and\n"
	"                  report each holding more than the policy gives its user now\n"
	"  --threads N     walk with N threads, N >= 1 (default: one per usable CPU)\n"
	"  --all-fs        also enter pseudo and remote filesystems\n"
	"  --userdb DIR    read systemd's user records (NAME.user) from DIR instead of its search\n"
	"                  path (/etc/userdb, /run/userdb, /run/host/userdb, /usr/local/lib/userdb,\n"
	"                  /usr/lib/userdb); repeat for more, earlier ones first\n";

static int add_finding(struct cli_audit *a, const char *id, const char *path, size_t line,
		       cd_capmask caps, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int add_finding(struct cli_audit *a, const char *id, const char *path, size_t line,
		       cd_capmask caps, const char *fmt, ...)
{
	if (a->nfindings == a->findings_cap) {
		size_t n = a->findings_cap ? 2 * a->findings_cap : 32;
		struct cli_finding *nf = realloc(a->findings, n * sizeof(*nf));
		if (nf == NULL)
			return -1;
		a->findings = nf;
		a->findings_cap = n;
	}
	struct cli_finding *f = &a->findings[a->nfindings];
	*f = (struct cli_finding){ .id = id, .line = line, .caps = caps };
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&f->message, fmt, ap);
	va_end(ap);
	if (rc < 0 || (path != NULL && (f->path = strdup(path)) == NULL)) {
		free(f->message);
		return -1;
	}
	a->nfindings++;
	return 0;
}

/* One subject per distinct (kind, name), its caps the union of its lines, in file order. */
static int build_subjects(struct cli_audit *a)
{
	const struct cd_policy *p = &a->pol;
	a->subjects = calloc(p->nrules + 1, sizeof(*a->subjects));
	if (a->subjects == NULL)
		return -1;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct cd_rule *r = &p->rules[i];
		size_t j;
		for (j = 0; j < a->nsubjects; j++) {
			struct cli_subject *s = &a->subjects[j];
			if (s->kind == r->kind && (r->name == NULL || strcmp(s->name, r->name) == 0))
				break;
		}
		if (j == a->nsubjects)
			a->subjects[a->nsubjects++] = (struct cli_subject){ r->kind, r->name, 0 };
		a->subjects[j].caps |= r->caps;
	}
	return 0;
}

static cd_capmask policy_union(const struct cd_policy *p)
{
	cd_capmask m = 0;
	for (size_t i = 0; i < p->nrules; i++)
		m |= p->rules[i].caps;
	return m;
}

static int already_reported(const struct cli_audit *a, const char *id, const char *path)
{
	for (size_t i = 0; i < a->nfindings; i++)
		if (strcmp(a->findings[i].id, id) == 0 && a->findings[i].path != NULL &&
		    strcmp(a->findings[i].path, path) == 0)
			return 1;
	return 0;
}

/* Who may change a capability file decides who may hand out its capabilities: the file
 * itself, and every directory above it (a writable directory lets one rename the file away
 * and put another in its place). The walk noted those directories (cli_dirnote). */
static int check_dirs(struct cli_audit *a, const struct cli_capfile *f)
{
	for (const struct cli_dirnote *d = f->unsafe_dirs; d != NULL; d = d->parent) {
		if (already_reported(a, "writable-directory", d->path))
			return 0;	/* and so was every directory above it */
		if (add_finding(a, "writable-directory", d->path, 0, 0, "directory above a "
				"capability file is %s: its files can be replaced", d->why) < 0)
			return -1;
	}
	return 0;
}

/* Owner and mode as the walk saw them (lstat relative to the directory). */
static int check_file_perms(struct cli_audit *a, const struct cli_capfile *f)
{
	if (!f->have_stat)
		return 0;	/* gone before it could be examined: listed as vanished */
	if (f->uid != 0)
		return add_finding(a, "writable-file", f->path, 0, 0,
				   "capability file is owned by uid %u", (unsigned)f->uid);
	if (f->mode & (S_IWGRP | S_IWOTH))
		return add_finding(a, "writable-file", f->path, 0, 0,
				   "capability file is writable by %s (mode %04o)",
				   f->mode & S_IWOTH ? "others" : "its group",
				   (unsigned)(f->mode & 07777));
	return 0;
}

/* What the value says: whether it applies here, fP, fI outside the policy. */
static int value_findings(struct cli_audit *a, const struct cli_capfile *f, cd_capmask delegated)
{
	const struct cli_fcaps *c = &f->caps;
	int rc = 0;
	if (f->read_errno != 0)
		return add_finding(a, "unreadable", f->path, 0, 0,
				   "the kernel will not show this security.capability value (%s): "
				   "rewrite it with setcap to know what it grants", c->error);
	if (c->revision == 0)
		return add_finding(a, "malformed", f->path, 0, 0,
				   "security.capability value is malformed (%s): execve of the file "
				   "fails with EINVAL", c->error);
	if (f->nosuid)
		rc |= add_finding(a, "nosuid", f->path, 0, c->permitted | c->inheritable,
				  "file is on a nosuid mount: its capabilities are ignored at exec");
	if (c->has_rootid && c->rootid != 0)
		rc |= add_finding(a, "rootid", f->path, 0, c->permitted | c->inheritable,
				  "revision 3 with rootid %u: capabilities apply only inside the user "
				  "namespace whose root is uid %u, not on this host", (unsigned)c->rootid,
				  (unsigned)c->rootid);
	if (cli_fcaps_ignored(f) != NULL)	/* grants nothing here: fP and fI do not matter */
		return rc;
	if (c->permitted & delegated)
		rc |= add_finding(a, "fP-bypass", f->path, 0, c->permitted & delegated,
				  "fP bypass: every user gains these, which the policy delegates to some");
	if (c->permitted)
		rc |= add_finding(a, "permitted", f->path, 0, c->permitted,
				  "fP grants these to everyone who executes the file, bypassing delegation");
	if (c->inheritable & ~delegated)
		rc |= add_finding(a, "undelegated-inheritable", f->path, 0, c->inheritable & ~delegated,
				  "fI bits no policy line delegates: nobody gains them through this file");
	return rc;
}

/* Every capability file, whatever its value: who can replace it (a revision-1 value the
 * kernel will not show still grants at exec). */
static int file_findings(struct cli_audit *a, const struct cli_capfile *f, cd_capmask delegated)
{
	int rc = value_findings(a, f, delegated);
	rc |= check_file_perms(a, f);
	rc |= check_dirs(a, f);
	return rc;
}

const char *cli_audit_rule_file(const struct cd_policy *pol, const struct cd_rule *r)
{
	for (size_t i = 0; i < pol->nsources; i++)
		if (pol->sources[i].shown == r->file)
			return pol->sources[i].path;
	return pol->path;
}

/* add_finding for a policy line: the finding names the line's own file. */
static void name_line_file(struct cli_audit *a, const struct cd_rule *r)
{
	a->findings[a->nfindings - 1].policy_file = cli_audit_rule_file(&a->pol, r);
}

/* What the policy rests on in NSS (cli_nss.h), each item a finding; a failure to record one
 * is kept for policy_findings. */
struct nss_findings {
	struct cli_audit *a;
	int failed;
};

static void add_nss_finding(void *arg, const char *id, const struct cd_rule *r, const char *where,
			    cd_capmask caps, const char *text)
{
	struct nss_findings *nf = arg;
	char shown[CD_MAX_NAME_LEN * 4 + 8];
	if (r != NULL)
		cd_name_form(shown, sizeof(shown), r->name, CD_MAX_NAME_LEN);
	if (add_finding(nf->a, id, where, r ? r->line : 0, caps, "%s%s%s%s", r ? "group '" : "",
			r ? shown : "", r ? "' " : "", text) < 0)
		nf->failed = 1;
	else if (r != NULL)
		name_line_file(nf->a, r);
}

/* Policy lines whose window has ended (capdelegate.conf(5), WINDOWS): login no longer reads
 * them, and audit counts them nowhere else; a session they gave keeps its grant. */
static int ended_findings(struct cli_audit *a)
{
	/* the end as a time only, never "N ago": an audit of the same host and policy is the same
	 * text at each run, so a configuration tool that keeps audits sees no change */
	char when[32];
	for (size_t i = 0; i < a->pol.noutside; i++) {
		const struct cd_rule *r = &a->pol.outside[i];
		if (!r->has_until || r->until > a->at)
			continue;	/* not yet started: it changes nothing now */
		if (add_finding(a, "ended-line", NULL, r->line, r->caps, "policy line ended at %s: "
				"login no longer grants it; sessions opened before keep it "
				"(audit --processes); remove the line",
				cd_time_format(r->until, when, sizeof(when))) < 0)
			return -1;
		name_line_file(a, r);
	}
	return 0;
}

/* Policy lines whose capabilities no scanned file consumes: pI reaches pP' only through fI
 * (ambient aside), so such a grant does nothing for the files found. */
static int policy_findings(struct cli_audit *a)
{
	cd_capmask consumed = 0;
	for (size_t i = 0; i < a->scan.nfiles; i++)
		if (cli_fcaps_ignored(&a->scan.files[i]) == NULL)
			consumed |= a->scan.files[i].caps.inheritable;
	for (size_t i = 0; i < a->pol.nrules; i++) {
		const struct cd_rule *r = &a->pol.rules[i];
		if (!(r->caps & ~consumed))
			continue;
		if (add_finding(a, "unused-grant", NULL, r->line, r->caps & ~consumed,
				"policy line grants capabilities no capability file found consumes "
				"through fI") < 0)
			return -1;
		name_line_file(a, r);
	}
	struct nss_findings nf = { a, 0 };
	if (cli_nss_hazards(&a->pol, add_nss_finding, &nf) < 0 || nf.failed)
		return -1;
	return ended_findings(a);
}

/* Each declared mark whose file is not as declared: a mark-STATE finding (capdelegate(8)). */
static int mark_finding(void *arg, const struct cd_mark *mk, const struct cli_mark_disk *d,
			const char *state, const char *finding, enum cli_mark_level level,
			cd_capmask caps, const char *msg)
{
	(void)d;
	(void)state;
	if (level == CLI_MARK_OK)
		return 0;
	return add_finding(arg, finding, mk->path, 0, caps, "mark line %zu: %s", mk->line, msg);
}

static int marks_findings(struct cli_audit *a)
{
	for (size_t i = 0; i < a->marks.nmarks; i++) {
		struct cli_mark_disk d;
		int rc = cli_mark_inspect(&a->marks.marks[i], &d);
		if (rc == 0)
			rc = cli_mark_states(&a->marks.marks[i], &d, mark_finding, a);
		cli_mark_disk_free(&d);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int error_findings(const struct cli_audit *a)
{
	for (size_t i = 0; i < a->nfindings; i++)
		if (cli_finding_is_error(a->findings[i].id))
			return 1;
	return 0;
}

/* The user's name as the policy spells it (cd_name_form), malloc'ed: finding messages are
 * printed as they are, so a record's hostile bytes go in escaped. */
static char *name_text(const char *name)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	if (f == NULL)
		return NULL;
	cli_print_name(f, name);
	return fclose(f) == 0 ? text : (free(text), NULL);
}

/* systemd 254+ pam_systemd (src/login/pam_systemd.c apply_user_record_settings): the
 * record's ambient set, within its bounding set, raised "also inherit": pI becomes that set
 * and every program the user runs holds it in pA, pP and pE, whatever the policy says; the
 * bounding set then drops (from X and pI) what it leaves out. */
static int record_findings(struct cli_audit *a, const struct cli_userdb_record *r)
{
	cd_capmask grant;
	if (r->error != NULL)
		return add_finding(a, "userdb-invalid", r->path, 0, 0, "user record not audited: %s",
				   r->error);
	if (r->hidden_by != NULL)
		return 0;	/* systemd reads the earlier directory's file of that name */
	if (r->same_as != NULL)
		return 0;	/* reported once, at the name that holds the record */
	char *who = name_text(r->f.user);
	int unknown = who == NULL ? -1 : cli_grant_of(&a->pol, r->f.user, &grant);
	int rc = unknown < 0 ? -1 : 0;
	if (rc == 0 && r->f.has_ambient && r->f.ambient != 0)
		rc = add_finding(a, "ambient-grant", r->path, 0, r->f.ambient, "user record of %s "
				 "raises these in the ambient set at each login (pam_systemd, systemd "
				 "254 and later): the user's systemd --user manager holds them and its "
				 "services inherit them, outside the policy", who);
	if (rc == 0 && r->f.has_bounding && (grant & ~r->f.bounding) != 0)
		rc = add_finding(a, "bounding-drop", r->path, 0, grant & ~r->f.bounding,
				 "user record of %s leaves these out of its capabilityBoundingSet: "
				 "pam_systemd drops them at login, so the policy's grant%s does not "
				 "reach the session", who, unknown ? " (user unknown to NSS: every "
				 "grant of the policy)" : "");
	free(who);
	return rc;
}

static int userdb_findings(struct cli_audit *a)
{
	for (size_t i = 0; i < a->userdb.nrecords; i++) {
		const struct cli_userdb_record *r = &a->userdb.records[i];
		if (r->error != NULL) {
			fputs("capdelegate: audit: error: ", stderr);
			cli_text_escape(stderr, r->path);
			fprintf(stderr, ": %s: user record not audited\n", r->error);
		}
		if (record_findings(a, r) < 0)
			return -1;
	}
	return 0;
}

static int build_findings(struct cli_audit *a)
{
	cd_capmask delegated = policy_union(&a->pol);
	for (size_t i = 0; i < a->scan.nfiles; i++)
		if (file_findings(a, &a->scan.files[i], delegated) < 0)
			return -1;
	if (policy_findings(a) < 0 || marks_findings(a) < 0)
		return -1;
	return userdb_findings(a);
}

/* Who holds a thread and where it runs, for a finding's message: "alice (uid 1001), audit
 * session 5, unit session-5.scope"; every name escaped. NULL when memory ran out. */
static char *holder_text(const struct cli_proc *p)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	if (f == NULL)
		return NULL;
	if (p->user != NULL) {
		cli_print_name(f, p->user);
		fprintf(f, " (uid %u)", (unsigned)p->uid);
	} else {
		fprintf(f, "uid %u (no name in NSS)", (unsigned)p->uid);
	}
	if (p->has_sessionid)
		fprintf(f, ", audit session %u", p->sessionid);
	else
		fputs(", no audit session", f);
	if (p->unit != NULL) {
		fputs(", unit ", f);
		cli_text_escape(f, p->unit);
	}
	return fclose(f) == 0 ? text : (free(text), NULL);
}

/* audit --processes: each thread holding pI beyond what the policy gives its user now
 * (stale-grant), or whose user's grant cannot be computed (grant-unknown); cli_procs_judge
 * judged them. The path names the thread: /proc/PID for a main thread. */
static int process_findings(struct cli_audit *a)
{
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct cli_proc *p = &a->procs[i];
		if (p->state != CLI_PROC_STALE && p->state != CLI_PROC_UNKNOWN)
			continue;
		char path[64];
		if (p->tid == p->pid)
			snprintf(path, sizeof(path), "/proc/%d", (int)p->pid);
		else
			snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)p->pid, (int)p->tid);
		char *who = holder_text(p), *granted = cd_capmask_to_text(p->grant);
		int rc = who == NULL || granted == NULL ? -1
			 : p->state == CLI_PROC_STALE
			 ? add_finding(a, "stale-grant", path, 0, p->beyond, "%s: "
				       "its inheritable set holds these, which the policy does not give "
				       "the user now (it gives %s); no process can take them from "
				       "another: they stay until the session ends", who, granted)
			 : add_finding(a, "grant-unknown", path, 0, p->inheritable, "%s: what the "
				       "policy gives the user now cannot be computed (%s): its "
				       "inheritable set is not judged", who, p->why);
		free(who);
		free(granted);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* fP, fI and fE of a value the kernel would not show are unknown, not empty: a revision-1
 * value still grants at exec. */
static void print_file(struct cli_table *t, const struct cli_capfile *f)
{
	const char *ignored = cli_fcaps_ignored(f);
	FILE *out = cli_table_row(t);
	cli_text_escape(out, f->path);
	fprintf(out, "\t%d\t", f->caps.revision);
	if (f->read_errno != 0) {
		fputs("unknown\tunknown\tunknown", out);
	} else {
		cli_print_caps(out, f->caps.permitted);
		fputc('\t', out);
		cli_print_caps(out, f->caps.inheritable);
		fprintf(out, "\t%s", f->caps.effective ? "yes" : "no");
	}
	fputc('\t', out);
	if (f->caps.has_rootid)
		fprintf(out, "%u", (unsigned)f->caps.rootid);
	else
		fputc('-', out);
	fprintf(out, "\t%s", ignored ? ignored : "-");
	cli_table_end_row(t);
}

static void print_gains(struct cli_table *t, const struct cli_audit *a, const struct cli_capfile *f)
{
	for (size_t i = 0; i < a->nsubjects; i++) {
		struct cli_gain g = cli_exec_gain(a->subjects[i].caps, a->bound, f);
		if (g.permitted == 0)
			continue;
		FILE *out = cli_table_row(t);
		cli_print_subject(out, a->subjects[i].kind, a->subjects[i].name);
		fputc('\t', out);
		cli_text_escape(out, f->path);
		fputc('\t', out);
		cli_print_caps(out, g.permitted);
		fputc('\t', out);
		cli_print_caps(out, g.effective);
		cli_table_end_row(t);
	}
}

static void print_finding(struct cli_table *t, const struct cli_audit *a, const struct cli_finding *f)
{
	FILE *out = cli_table_row(t);
	fprintf(out, "%s\t", f->id);
	if (f->path != NULL) {
		cli_text_escape(out, f->path);
	} else {
		cli_text_escape(out, f->policy_file ? f->policy_file : a->pol.path);
		fprintf(out, ":%zu", f->line);
	}
	fputc('\t', out);
	cli_print_caps(out, f->caps);
	fprintf(out, "\t%s", f->message);
	cli_table_end_row(t);
}

static void print_problems(FILE *stream, enum cli_form form, const struct cli_scan *scan)
{
	static const char *const vanished_cols[] = { "VANISHED", NULL };
	static const char *const error_cols[] = { "ERROR", "WHAT", "ERRNO", "MESSAGE", NULL };
	struct cli_table t;
	cli_table_start(&t, stream, form, "vanished", vanished_cols);
	for (size_t i = 0; i < scan->nvanished; i++) {
		cli_text_escape(cli_table_row(&t), scan->vanished[i].path);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
	cli_table_start(&t, stream, form, "error", error_cols);
	for (size_t i = 0; i < scan->nerrors; i++) {
		const struct cli_problem *p = &scan->errors[i];
		FILE *out = cli_table_row(&t);
		cli_text_escape(out, p->path);
		fprintf(out, "\t%s\t%s\t%s", p->what, cli_errno_name(p->err), strerror(p->err));
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

static void print_process(struct cli_table *t, const struct cli_proc *p)
{
	FILE *out = cli_table_row(t);
	fprintf(out, "%d\t%d\t", (int)p->pid, (int)p->tid);
	if (p->user != NULL)
		cli_print_name(out, p->user);
	else
		fprintf(out, "%u", (unsigned)p->uid);
	fputc('\t', out);
	cli_text_escape(out, p->comm);
	fputc('\t', out);
	cli_print_caps(out, p->inheritable);
	cli_table_end_row(t);
}

/* The two summary records: no header, they label their own fields. */
static void print_summary(FILE *stream, enum cli_form form, const struct cli_audit *a)
{
	struct cli_table t;
	cli_table_start(&t, stream, form, "# policy", NULL);
	FILE *out = cli_table_row(&t);
	cli_text_escape(out, a->pol.path);
	fprintf(out, "\t%s\t", cd_status_str(a->pol.status));
	cli_print_count(out, a->pol.nrules + a->pol.noutside, "rule", "rules");
	size_t ended = 0;
	for (size_t i = 0; i < a->pol.noutside; i++)
		ended += a->pol.outside[i].has_until && a->pol.outside[i].until <= a->at;
	if (a->pol.noutside > 0)	/* the lines login does not read now */
		fprintf(out, "\t%zu ended\t%zu not yet", ended, a->pol.noutside - ended);
	cli_table_end_row(&t);
	cli_table_end(&t);
	cli_table_start(&t, stream, form, "# scanned", NULL);
	const struct { size_t n; const char *one, *many; } counts[] = {
		{ a->scan.ndirs, "directory", "directories" },
		{ a->scan.nregular, "regular file", "regular files" },
		{ a->scan.nfiles, "capability file", "capability files" },
		{ a->scan.nskipped_mounts, "mount skipped", "mounts skipped" },
		{ a->scan.nvanished, "vanished", "vanished" },
		{ a->scan.nerrors, "error", "errors" },
	};
	out = cli_table_row(&t);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (i > 0)
			fputc('\t', out);
		cli_print_count(out, counts[i].n, counts[i].one, counts[i].many);
	}
	cli_table_end_row(&t);
	cli_table_end(&t);
}

static void print_text(FILE *stream, enum cli_form form, const struct cli_audit *a)
{
	static const char *const file_cols[] = { "FILE", "REV", "fP", "fI", "fE", "ROOTID", "IGNORED", NULL };
	static const char *const gain_cols[] = { "SUBJECT", "EXECUTES", "pP'", "pE'", NULL };
	static const char *const finding_cols[] = { "FINDING", "WHERE", "CAPABILITIES", "WHY", NULL };
	static const char *const process_cols[] = { "PID", "TID", "USER", "COMM", "pI", NULL };
	struct cli_table t;
	print_summary(stream, form, a);
	cli_table_start(&t, stream, form, "file", file_cols);
	for (size_t i = 0; i < a->scan.nfiles; i++)
		print_file(&t, &a->scan.files[i]);
	cli_table_end(&t);
	cli_table_start(&t, stream, form, "gain", gain_cols);
	for (size_t i = 0; i < a->scan.nfiles; i++)
		print_gains(&t, a, &a->scan.files[i]);
	cli_table_end(&t);
	cli_table_start(&t, stream, form, "finding", finding_cols);
	for (size_t i = 0; i < a->nfindings; i++)
		print_finding(&t, a, &a->findings[i]);
	cli_table_end(&t);
	print_problems(stream, form, &a->scan);
	cli_table_start(&t, stream, form, "process", process_cols);
	for (size_t i = 0; i < a->nprocs; i++)
		print_process(&t, &a->procs[i]);
	cli_table_end(&t);
}

static int parse_args(struct cli_audit *a, int argc, char **argv, int *json)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "processes", no_argument, NULL, 'p' }, { "threads", required_argument, NULL, 't' },
		{ "all-fs", no_argument, NULL, 'a' }, { "marks", required_argument, NULL, 'm' },
		{ "confdir", required_argument, NULL, 'd' }, { "userdb", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	int c, flags = CLI_WALK_LOCAL_ONLY;
	char *end;
	long n;
	a->scan.threads = 0;	/* the walker's default */
	/* --userdb may come argc times at most */
	if ((a->userdb_dirs = calloc((size_t)argc + 1, sizeof(*a->userdb_dirs))) == NULL)
		return cli_out_of_memory("audit", "no report");
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		switch (c) {
		case 'c': a->config = optarg; break;
		case 'd': a->confdir = optarg; break;
		case 'j': *json = 1; break;
		case 'p': a->want_procs = 1; break;
		case 'm': a->marks_path = optarg; break;
		case 'a': flags &= ~CLI_WALK_LOCAL_ONLY; break;
		case 'u': a->userdb_dirs[a->nuserdb_dirs++] = optarg; break;
		case 't':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || errno != 0 || n < 1 || n > INT_MAX) {
				fprintf(stderr, "capdelegate: audit: --threads wants a whole number, 1 or more\n");
				return -1;
			}
			a->scan.threads = (int)n;
			break;
		default: fputs(usage, stderr); return -1;
		}
	}
	static char *root_default[] = { "/" };
	a->roots = optind < argc ? argv + optind : root_default;
	a->nroots = optind < argc ? argc - optind : 1;
	return flags;
}

static void audit_free(struct cli_audit *a)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		free(a->findings[i].path);
		free(a->findings[i].message);
	}
	free(a->findings);
	free(a->subjects);
	cli_procs_free(a->procs, a->nprocs);
	cli_scan_free(&a->scan);
	cd_policy_free(&a->pol);
	cd_marks_free(&a->marks);
	cli_userdb_free(&a->userdb);
	free(a->userdb_dirs);
}

int cli_audit_main(int argc, char **argv)
{
	struct cli_audit a = { 0 };
	int json = 0;
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	enum cli_form form = cli_output_form(&argc, argv);
	int flags = parse_args(&a, argc, argv, &json);
	if (flags < 0) {
		free(a.userdb_dirs);
		return CLI_ERROR;
	}
	/* A rejected policy grants nothing at login: audit on with no rules, and say so. Every
	 * grant below is login's now: the lines' windows judged by the clock (a clock that
	 * cannot be read rejects the policy, as at login). */
	enum cd_status st = cli_load_policy_now(&a.pol, a.config, a.confdir, "audit", &a.at);
	if (a.pol.path == NULL)
		return CLI_ERROR;	/* memory ran out before the policy was read (said) */
	/* No marks file declares nothing; one named by --marks must be there. */
	enum cd_status mst = cli_load_marks(&a.marks, a.marks_path);
	if (mst == CD_POLICY_MISSING && a.marks_path != NULL)
		fprintf(stderr, "capdelegate: error: %s: no such marks file\n", a.marks.shown);
	int marks_bad = mst != CD_POLICY_OK && (mst != CD_POLICY_MISSING || a.marks_path != NULL);
	a.bound = cd_bounding_set();	/* this process's: the best estimate of a login session's */
	int scanned = cli_scan_roots(&a.scan, a.roots, a.nroots, flags);
	a.incomplete = scanned != 0;
	static const char *const userdb_default[] = CLI_USERDB_DEFAULT_DIRS;
	int rc = a.nuserdb_dirs ? cli_userdb_load(&a.userdb, a.userdb_dirs, a.nuserdb_dirs)
		 : cli_userdb_load(&a.userdb, userdb_default, CLI_USERDB_NDEFAULT);
	if (scanned < 0 || rc < 0 || build_subjects(&a) < 0 || build_findings(&a) < 0)
		rc = -1;
	if (rc == 0 && a.want_procs && cli_procs_scan(&a.procs, &a.nprocs) < 0)
		a.incomplete = 1;
	/* each thread's pI against the grant now; a failure to judge is said there, and no
	 * report follows (a thread shown unjudged would read as one within its grant) */
	if (rc == 0 && a.want_procs && cli_procs_judge(&a.pol, &a.userdb, a.procs, a.nprocs) < 0) {
		audit_free(&a);
		return CLI_ERROR;
	}
	if (rc == 0 && a.want_procs && process_findings(&a) < 0)
		rc = -1;
	if (rc < 0) {
		cli_out_of_memory("audit", "no report");
		audit_free(&a);
		return CLI_ERROR;
	}
	if (json)
		cli_audit_print_json(stdout, &a);
	else
		print_text(stdout, form, &a);
	int ret = st != CD_POLICY_OK || a.incomplete || marks_bad || error_findings(&a) ? CLI_ERROR
		  : a.nfindings ? CLI_WARN : CLI_OK;
	audit_free(&a);
	return ret;
}
