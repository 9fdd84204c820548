/*
 * cli_usage.c - usage: per user and capability, the runs of marked files each grant made
 * privileged, the grants no run used, the runs a grant did not cover, from the audit trail
 * (capdelegate(8), USAGE). Reads; never changes anything (--propose prints what a person may
 * apply with edit: cli_usage_propose.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_marks.h"
#include "cli_out.h"
#include "cli_usage.h"
#include "cli_usage_read.h"

static const char usage[] =
	"usage: capdelegate usage [--since DURATION] [--json|--tsv|--propose] [--key KEY]\n"
	"                         [--marks FILE] [--config FILE] [--confdir DIR] [--input FILE...]\n"
	"\n"
	"Per user and capability, from the audit trail: the runs of marked files each user's\n"
	"recorded grant made privileged (used), the grants no run used in the window (unused), the\n"
	"runs of marked files whose bits the user's grant did not hold (denied), and the runs that\n"
	"cannot be attributed (unattributed). Changes nothing.\n"
	"  --since DURATION  the window: the last N s, m, h, d or w (default 90d)\n"
	"  --input FILE...   read these logs, in this order (default: " CU_LOG "*,\n"
	"                    the oldest rotation first)\n"
	"  --key KEY         the audit key of the runs (default " CU_DEFAULT_KEY ")\n"
	"  --marks FILE      the marked files and their fI (default " CD_DEFAULT_MARKS ")\n"
	"  --propose         the policy lines to remove or reduce, for a person to apply with\n"
	"                    `capdelegate edit` (--config and --confdir: the policy read)\n"
	"  --json            the same as JSON, with the host (for `capdelegate report`)\n";

/* "30d" and the like: seconds, or -1. At most 100 years. */
int64_t cli_usage_duration(const char *s)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long long n = strtoull(s, &end, 10);
	static const struct { char c; int64_t mul; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
	};
	if (errno != 0 || end[0] == '\0' || end[1] != '\0')
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (*end == units[i].c)
			return n <= 36525ull * 86400 / (unsigned long long)units[i].mul ?
			       (int64_t)n * units[i].mul : -1;
	return -1;
}

/* The rotations of the log, oldest first (audit.log.N ... audit.log.1, audit.log); the other
 * names beside it are not logs auditd writes (a compressed copy: said, not read). */
static int default_inputs(char ***files, size_t *n)
{
	glob_t g;
	*files = NULL;
	*n = 0;
	int rc = glob(CU_LOG "*", 0, NULL, &g);
	if (rc == GLOB_NOMATCH)
		return 0;
	if (rc != 0)
		return -1;
	char **out = calloc(g.gl_pathc + 1, sizeof(*out));
	long *num = calloc(g.gl_pathc + 1, sizeof(*num));
	if (out == NULL || num == NULL) {
		free(out);
		free(num);
		globfree(&g);
		return -1;
	}
	size_t len = strlen(CU_LOG);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i], *suf = p + len;
		char *end = NULL;
		long v = 0;
		if (*suf == '.' && suf[1] >= '1' && suf[1] <= '9')
			v = strtol(suf + 1, &end, 10);
		if (*suf != '\0' && (end == NULL || *end != '\0')) {
			fputs("capdelegate: usage: not read (not a log auditd writes): ", stderr);
			cli_text_escape(stderr, p);
			fputc('\n', stderr);
			continue;
		}
		size_t j = *n;	/* insertion: the highest number first, the live log (0) last */
		while (j > 0 && num[j - 1] < v) {
			out[j] = out[j - 1];
			num[j] = num[j - 1];
			j--;
		}
		if ((out[j] = strdup(p)) == NULL)
			rc = -1;
		num[j] = v;
		(*n)++;
	}
	free(num);
	globfree(&g);
	*files = out;
	return rc;
}

static int read_file(struct cu_state *st, const char *path, const char *key)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *err = NULL;
	if (f == NULL) {
		fputs("capdelegate: usage: ", stderr);
		cli_text_escape(stderr, path);
		fprintf(stderr, ": %s; no report\n", strerror(errno));
		return -1;
	}
	int rc = cu_read_stream(st, f, path, key, &err);
	if (f != stdin)
		fclose(f);
	if (rc != 0) {
		fprintf(stderr, "capdelegate: usage: %s; no report (a record not read could be "
			"any user's run)\n", err ? err : "out of memory");
		free(err);
	}
	return rc;
}

/* The marks as usage needs them: path and fI, sorted. */
static int load_marks(const char *path, struct cd_marks *m, struct cu_mark **out, size_t *n)
{
	enum cd_status st = cli_load_marks(m, path);
	const char *shown = path ? path : CD_DEFAULT_MARKS;
	*out = NULL;
	*n = 0;
	if (st != CD_POLICY_OK) {
		fputs("capdelegate: usage: ", stderr);
		cli_text_escape(stderr, shown);
		fprintf(stderr, ": %s: without the marks no run can be judged; no report\n",
			st == CD_POLICY_MISSING ? "no marks file" : "marks file rejected");
		return -1;
	}
	if ((*out = calloc(m->nmarks + 1, sizeof(**out))) == NULL)
		return cli_out_of_memory("usage", "no report");
	for (size_t i = 0; i < m->nmarks; i++)
		(*out)[i] = (struct cu_mark){ m->marks[i].path, m->marks[i].inheritable };
	*n = m->nmarks;
	cu_marks_sort(*out, *n);
	return 0;
}

int cli_usage_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "since", required_argument, NULL, 's' }, { "input", required_argument, NULL, 'i' },
		{ "key", required_argument, NULL, 'k' }, { "marks", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' }, { "propose", no_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' }, { "confdir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct cli_usage_opts o = { .since_text = "90d", .key = CU_DEFAULT_KEY, .form =
				    cli_output_form(&argc, argv) };
	char **inputs = calloc((size_t)argc + 1, sizeof(*inputs));
	size_t ninputs = 0;
	int c, given = 0;
	if (inputs == NULL)
		return cli_out_of_memory("usage", "no report"), CLI_ERROR;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			free(inputs);
			return CLI_OK;
		case 's': o.since_text = optarg; break;
		case 'i': inputs[ninputs++] = optarg; given = 1; break;
		case 'k': o.key = optarg; break;
		case 'm': o.marks = optarg; break;
		case 'j': o.json = 1; break;
		case 'p': o.propose = 1; break;
		case 'c': o.config = optarg; break;
		case 'd': o.confdir = optarg; break;
		default:
			cli_bad_option(argv, usage);
			free(inputs);
			return CLI_ERROR;
		}
	}
	int64_t span = cli_usage_duration(o.since_text);
	const char *bad = span < 0 ? "--since takes a duration such as 90d, 12h (s, m, h, d, w)" :
			  optind < argc && !given ? "files to read follow --input" :
			  o.json && o.propose ? "--json and --propose: one of them" :
			  o.key[0] == '\0' ? "--key takes a key" : NULL;
	if (bad != NULL) {
		fprintf(stderr, "capdelegate: usage: %s\n%s", bad, usage);
		free(inputs);
		return CLI_ERROR;
	}
	while (optind < argc)
		inputs[ninputs++] = argv[optind++];
	o.now = time(NULL);
	o.since = o.now - span;
	int rc = cli_usage_run(&o, inputs, ninputs, given);
	free(inputs);
	return rc;
}

int cli_usage_run(struct cli_usage_opts *o, char **inputs, size_t ninputs, int given)
{
	/* @inputs stays the caller's; without --input the default logs are read instead */
	struct cd_marks m = { 0 };
	struct cu_mark *marks = NULL;
	size_t nmarks = 0;
	char **found = NULL;
	int rc = CLI_ERROR;
	struct cu_state st;
	int st_ok = 0;
	if (load_marks(o->marks, &m, &marks, &nmarks) != 0)
		goto out;
	if (!given) {
		if (default_inputs(&found, &ninputs) != 0) {
			cli_out_of_memory("usage", "no report");
			goto out;
		}
		if (ninputs == 0) {
			fputs("capdelegate: usage: no audit log at " CU_LOG " (is auditd installed? "
			      "logs from elsewhere: --input FILE); no report\n", stderr);
			goto out;
		}
		inputs = found;
	}
	if (cu_state_init(&st, marks, nmarks, o->since) != 0) {
		cli_out_of_memory("usage", "no report");
		goto out;
	}
	st_ok = 1;
	for (size_t i = 0; i < ninputs; i++)
		if (read_file(&st, inputs[i], o->key) != 0)
			goto out;
	o->inputs = (const char *const *)inputs;
	o->ninputs = ninputs;
	rc = cli_usage_print(o, &st);
out:
	if (st_ok)
		cu_state_free(&st);
	for (size_t i = 0; found != NULL && found[i] != NULL; i++)
		free(found[i]);
	free(found);
	free(marks);
	cd_marks_free(&m);
	return rc;
}
