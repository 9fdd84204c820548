/*
 * cli_marks_cmd.c - `capdelegate marks check` and `capdelegate marks apply`: the declared
 * marks (capdelegate-files.conf(5)) against the files on disk, and setting them.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "cli_common.h"
#include "cli_marks.h"
#include "cli_out.h"

static const char usage[] =
	"usage: capdelegate marks check [--marks FILE] [--json|--tsv]\n"
	"       capdelegate marks apply [--marks FILE] [--dry-run] [--quiet]\n"
	"       capdelegate marks audit-rules [--marks FILE] [--arch LIST]\n"
	"\n"
	"check: each file the marks file (default " CD_DEFAULT_MARKS ") declares, as it is on\n"
	"disk. Exit 0: every file matches. 1: drift or warnings (a file missing, no or other\n"
	"capabilities, fP, a setuid bit). 2: errors (marks file rejected, a file refused or\n"
	"unreadable).\n"
	"apply: set exactly the declared fI/fE (fP empty) and remove setuid/setgid bits of nosuid\n"
	"marks, on the descriptor of each file; every change is printed and logged to syslog\n"
	"(authpriv.notice). Missing files are skipped. Exit 0: every present file matches now.\n"
	"2: some file could not be fixed, or the marks file is rejected. With --dry-run nothing is\n"
	"changed and the exit status is 0 (nothing to do), 1 (changes due) or 2 (errors).\n"
	"audit-rules: the audit rules recording each run of a declared file (see its --help).\n"
	"\n"
	"  --marks FILE   the marks file\n"
	"  --json         check: one JSON document (schema in capdelegate(8))\n"
	"  --tsv          check: tab-separated records even on a terminal\n"
	"  --dry-run      apply: print what would change, change nothing\n"
	"  --quiet        apply: print errors only\n";

struct opts {
	const char *marks;
	int json, dry_run, quiet;
};

static int parse_opts(int argc, char **argv, struct opts *o, int apply)
{
	static const struct option longopts[] = {
		{ "marks", required_argument, NULL, 'm' }, { "json", no_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' }, { "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'm') {
			o->marks = optarg;
		} else if (c == 'j' && !apply) {
			o->json = 1;
		} else if ((c == 'n' || c == 'q') && apply) {
			*(c == 'n' ? &o->dry_run : &o->quiet) = 1;
		} else {
			cli_bad_option(argv, usage);
			return -1;
		}
	}
	if (optind < argc) {
		fputs(usage, stderr);
		return -1;
	}
	return 0;
}

/* The marks file; NULL when there is nothing to do (*rc then says the exit status). A missing
 * default file declares nothing; a missing file named by --marks is an error. */
static struct cd_marks *load(const struct opts *o, struct cd_marks *m, int *rc)
{
	enum cd_status st = cli_load_marks(m, o->marks);
	if (st == CD_POLICY_MISSING) {
		if (o->marks != NULL || !o->quiet)
			fprintf(stderr, "capdelegate: %s: %s: no marks declared\n",
				o->marks != NULL ? "error" : "note", m->shown);
		*rc = o->marks != NULL ? CLI_ERROR : CLI_OK;
		return NULL;
	}
	if (st != CD_POLICY_OK) {
		*rc = CLI_ERROR;
		return NULL;
	}
	return m;
}

/* ---- check --------------------------------------------------------------------------------- */

struct check {
	struct cli_table t;
	int json;
	const char *sep;	/* JSON: before the next state */
	enum cli_mark_level worst;
};

static int check_row(void *arg, const struct cd_mark *mk, const struct cli_mark_disk *d,
		     const char *state, const char *finding, enum cli_mark_level level, cd_capmask caps,
		     const char *msg)
{
	struct check *c = arg;
	(void)finding;
	(void)caps;
	if (level > c->worst)
		c->worst = level;
	if (c->json) {
		printf("%s{\"state\":\"%s\",\"level\":\"%s\",\"message\":", c->sep, state,
		       cli_mark_level_str(level));
		cli_json_string(stdout, msg);
		putchar('}');
		c->sep = ",";
		return 0;
	}
	cap_t want = cd_mark_caps(mk);
	char *declared = want != NULL ? cd_fcaps_text(want) : NULL;
	cap_free(want);
	if (declared == NULL)
		return -1;	/* out of memory: a "?" would be a row that declares nothing */
	FILE *out = cli_table_row(&c->t);
	cli_print_path(out, mk->path);
	fprintf(out, "\t%s\t%s\t%s%s\t%s\t%s", state, cli_mark_level_str(level),
		declared, mk->flags & CD_MARK_NOSUID ? " nosuid" : "",
		d->text ? d->text : "-", msg);
	cli_table_end_row(&c->t);
	free(declared);
	return 0;
}

static void json_mark_head(const struct cd_mark *mk, const struct cli_mark_disk *d, const char *sep)
{
	printf("%s{\"path\":", sep);
	cli_json_string(stdout, mk->path);
	fputs(",\"path_hex\":", stdout);
	cli_json_hex(stdout, mk->path);
	printf(",\"line\":%zu,\"inheritable\":", mk->line);
	cli_json_caps(stdout, mk->inheritable);
	printf(",\"effective\":%s,\"nosuid\":%s,\"on_disk\":", mk->effective ? "true" : "false",
	       mk->flags & CD_MARK_NOSUID ? "true" : "false");
	if (d->text != NULL)
		cli_json_string(stdout, d->text);
	else
		fputs("null", stdout);
	fputs(",\"states\":[", stdout);
}

static int check_all(const struct cd_marks *m, struct check *c)
{
	for (size_t i = 0; i < m->nmarks; i++) {
		struct cli_mark_disk d;
		if (cli_mark_inspect(&m->marks[i], &d) < 0) {
			cli_mark_disk_free(&d);
			return -1;
		}
		if (c->json) {
			json_mark_head(&m->marks[i], &d, i ? "," : "");
			c->sep = "";
		}
		int rc = cli_mark_states(&m->marks[i], &d, check_row, c);
		if (c->json)
			fputs("]}", stdout);
		cli_mark_disk_free(&d);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int marks_check(int argc, char **argv)
{
	static const char *const cols[] = { "MARK", "STATE", "LEVEL", "DECLARED", "ON-DISK", "WHY", NULL };
	enum cli_form form = cli_output_form(&argc, argv);
	struct opts o = { 0 };
	struct cd_marks m;
	int rc = CLI_OK;
	if (parse_opts(argc, argv, &o, 0) < 0)
		return CLI_ERROR;
	struct cd_marks *mp = load(&o, &m, &rc);
	struct check c = { .json = o.json, .worst = CLI_MARK_OK };
	if (o.json) {
		fputs("{\"version\":1,\"marks\":{\"path\":", stdout);
		cli_json_string(stdout, m.path != NULL ? m.path : "");
		printf(",\"status\":\"%s\"},\"files\":[", mp != NULL ? "ok" : m.status ==
		       CD_POLICY_MISSING ? "missing" : "rejected");
	} else {
		cli_table_start(&c.t, stdout, form, "mark", cols);
	}
	if (mp != NULL && check_all(mp, &c) < 0) {
		fputs("capdelegate: marks: out of memory\n", stderr);
		c.worst = CLI_MARK_ERROR;
	}
	if (o.json)
		fputs("]}\n", stdout);
	else
		cli_table_end(&c.t);
	cd_marks_free(&m);
	if (mp == NULL)
		return rc;
	return c.worst == CLI_MARK_ERROR ? CLI_ERROR : c.worst == CLI_MARK_OK ? CLI_OK : CLI_WARN;
}

/* ---- apply --------------------------------------------------------------------------------- */

struct apply {
	const struct opts *o;
	int failed, changes;
};

/* "PATH: what" with the path in the marks file's form; NULL when memory runs out. */
static char *vline(const char *path, const char *fmt, va_list ap)
{
	char *what = NULL, *shown = cli_path_form(path), *line = NULL;
	if (shown != NULL && vasprintf(&what, fmt, ap) >= 0 &&
	    asprintf(&line, "%s: %s", shown, what) < 0)
		line = NULL;
	free(shown);
	free(what);
	return line;
}

/* One change: printed (not with --quiet) and logged at LOG_NOTICE, the same text. */
static void changed(struct apply *a, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void changed(struct apply *a, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = vline(path, fmt, ap);
	va_end(ap);
	a->changes++;
	if (line != NULL && !a->o->dry_run)
		syslog(LOG_NOTICE, "%s", line);
	if (line != NULL && !a->o->quiet)
		printf("%s%s\n", line, a->o->dry_run ? " (dry run)" : "");
	free(line);
}

/* A file that could not be fixed: on stderr, and logged at LOG_ERR unless a dry run. */
static void apply_error(struct apply *a, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void apply_error(struct apply *a, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = vline(path, fmt, ap);
	va_end(ap);
	fprintf(stderr, "capdelegate: error: %s\n", line != NULL ? line : "out of memory");
	if (line != NULL && !a->o->dry_run)
		syslog(LOG_ERR, "%s", line);
	free(line);
	a->failed = 1;
}

/* The setuid/setgid bits a nosuid mark removes, through the descriptor. 0 or -1. */
static int apply_nosuid(struct apply *a, const struct cd_mark *mk, const struct cli_mark_disk *d)
{
	mode_t sid = d->mode & (S_ISUID | S_ISGID), mode = d->mode & 07777;
	if (!(mk->flags & CD_MARK_NOSUID) || sid == 0)
		return 0;
	if (!a->o->dry_run && fchmod(d->fd, mode & ~sid) < 0) {
		apply_error(a, mk->path, "cannot remove the setuid/setgid bits: %s", strerror(errno));
		return -1;
	}
	changed(a, mk->path, "removed %s (mode %04o -> %04o)", sid == (S_ISUID | S_ISGID) ?
		"setuid and setgid" : sid == S_ISUID ? "setuid" : "setgid", (unsigned)mode,
		(unsigned)(mode & ~sid));
	return 0;
}

static int apply_caps(struct apply *a, const struct cd_mark *mk, const struct cli_mark_disk *d)
{
	if (cli_mark_caps_match(mk, d))
		return 0;
	cap_t want = cd_mark_caps(mk);
	char *text = want != NULL ? cd_fcaps_text(want) : NULL;
	int rc = 0;
	if (text == NULL) {
		apply_error(a, mk->path, "out of memory");
		rc = -1;
	} else if (!a->o->dry_run && cap_set_fd(d->fd, want) < 0) {
		apply_error(a, mk->path, "cannot set %s: %s", text, strerror(errno));
		rc = -1;
	} else {
		changed(a, mk->path, "%s -> %s", d->text, text);
	}
	cap_free(want);
	free(text);
	return rc;
}

/* After the changes: read the file again through a new descriptor; what was set must be
 * what is there (fail closed: a filesystem that drops the value is an error, not a success). */
static void verify(struct apply *a, const struct cd_mark *mk)
{
	struct cli_mark_disk d;
	if (cli_mark_inspect(mk, &d) < 0 || d.fd < 0 || !cli_mark_caps_match(mk, &d) ||
	    ((mk->flags & CD_MARK_NOSUID) && (d.mode & (S_ISUID | S_ISGID))))
		apply_error(a, mk->path, "does not match the mark after apply (on disk: %s)",
			    d.text ? d.text : "unknown");
	cli_mark_disk_free(&d);
}

static int apply_one(struct apply *a, const struct cd_mark *mk)
{
	struct cli_mark_disk d;
	if (cli_mark_inspect(mk, &d) < 0) {
		cli_mark_disk_free(&d);
		return -1;
	}
	int before = a->changes;
	if (d.missing) {
		if (!a->o->quiet) {
			cli_print_path(stdout, mk->path);
			fputs(": no such file (package not installed?): skipped\n", stdout);
		}
	} else if (d.refused != NULL) {
		apply_error(a, mk->path, "%s: not changed", d.refused);
	} else if (d.failed != NULL) {
		apply_error(a, mk->path, "cannot %s: %s: not changed", d.failed, strerror(d.err));
	} else if (apply_nosuid(a, mk, &d) == 0 && apply_caps(a, mk, &d) == 0 &&
		   a->changes > before && !a->o->dry_run) {
		verify(a, mk);
	}
	cli_mark_disk_free(&d);
	return 0;
}

static int marks_apply(int argc, char **argv)
{
	struct opts o = { 0 };
	struct cd_marks m;
	int rc = CLI_OK;
	if (parse_opts(argc, argv, &o, 1) < 0)
		return CLI_ERROR;
	struct cd_marks *mp = load(&o, &m, &rc);
	struct apply a = { .o = &o };
	openlog("capdelegate", LOG_PID, LOG_AUTHPRIV);
	for (size_t i = 0; mp != NULL && i < mp->nmarks; i++) {
		if (apply_one(&a, &mp->marks[i]) < 0) {
			fputs("capdelegate: marks: out of memory\n", stderr);
			a.failed = 1;
			break;
		}
	}
	closelog();
	cd_marks_free(&m);
	if (mp == NULL)
		return rc;
	return a.failed ? CLI_ERROR : o.dry_run && a.changes ? CLI_WARN : CLI_OK;
}

int cli_marks_main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "audit-rules") == 0)	/* its own --help */
		return cli_marks_audit_rules(argc - 1, argv + 1);
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return marks_check(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "apply") == 0)
		return marks_apply(argc - 1, argv + 1);
	fputs(usage, stderr);
	return CLI_ERROR;
}
