/*
 * cli_common.c - see cli_common.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_common.h"
#include "cli_out.h"

enum cd_status cli_load_policy(struct cd_policy *pol, const char *path, const char *confdir)
{
	return cli_load_policy_as(pol, path, confdir, NULL);
}

enum cd_status cli_load_policy_as(struct cd_policy *pol, const char *path, const char *confdir,
				  const struct cd_stand_in *s)
{
	/* No pam handle, no sink: the core writes FILE:LINE: message to stderr, the same text the
	 * module sends to syslog. */
	struct cd_log log = { 0 };
	struct cd_load_opts opts = { .owner = 0, .confdir = confdir ? confdir : CD_DEFAULT_CONFDIR,
				     .stand_in = s };
	return cd_policy_load(pol, path ? path : CD_DEFAULT_CONFIG, &opts, &log);
}

int cli_time_arg(const char *cmd, const char *text, int64_t *at)
{
	const char *why;
	if (text == NULL || strcmp(text, "now") == 0) {
		if (cd_clock_now(at) == 0)
			return 0;
		fprintf(stderr, "capdelegate: %s: cannot read the clock: %s: the lines' windows "
			"cannot be judged\n", cmd, strerror(errno));
		return -1;
	}
	if (cd_time_parse(text, strlen(text), at, &why) == 0)
		return 0;
	fprintf(stderr, "capdelegate: %s: --at '", cmd);
	cli_text_escape(stderr, text);
	fprintf(stderr, "': %s (or: now)\n", why);
	return -1;
}

int cli_policy_at(struct cd_policy *pol, int64_t at, const char *cmd)
{
	if (cd_policy_at(pol, at) == 0)
		return 0;
	/* as the module: a policy whose windows cannot be judged grants nothing */
	pol->status = CD_POLICY_SYSERR;
	pol->nrules = 0;
	return cli_out_of_memory(cmd, "the lines' windows are not judged: the policy is taken as "
				 "rejected (nothing granted)");
}

void cli_policy_now(struct cd_policy *pol, const char *cmd, int64_t *at)
{
	if (pol->status != CD_POLICY_OK)
		return;
	if (cli_time_arg(cmd, NULL, at) == 0) {
		cli_policy_at(pol, *at, cmd);
		return;
	}
	pol->status = CD_POLICY_SYSERR;	/* as at login: no clock, nothing granted */
	pol->nrules = 0;
}

enum cd_status cli_load_policy_now(struct cd_policy *pol, const char *path, const char *confdir,
				   const char *cmd, int64_t *at)
{
	cli_load_policy(pol, path, confdir);
	cli_policy_now(pol, cmd, at);
	return pol->status;
}

/* The place of @r in the order read: its file's index among the sources, then its line. */
static size_t source_of(const struct cd_policy *pol, const struct cd_rule *r)
{
	for (size_t k = 0; k < pol->nsources; k++)
		if (pol->sources[k].shown == r->file)
			return k;
	return pol->nsources;
}

static int read_before(const struct cd_policy *pol, const struct cd_rule *a, const struct cd_rule *b)
{
	size_t sa = source_of(pol, a), sb = source_of(pol, b);
	return sa != sb ? sa < sb : a->line < b->line;
}

const struct cd_rule **cli_policy_all_rules(const struct cd_policy *pol, size_t *n)
{
	const struct cd_rule **all = calloc(pol->nrules + pol->noutside + 1, sizeof(*all));
	size_t i = 0, j = 0;
	*n = 0;
	if (all == NULL)
		return NULL;
	while (i < pol->nrules || j < pol->noutside) {
		if (j == pol->noutside ||
		    (i < pol->nrules && read_before(pol, &pol->rules[i], &pol->outside[j])))
			all[(*n)++] = &pol->rules[i++];
		else
			all[(*n)++] = &pol->outside[j++];
	}
	return all;
}

int cli_print_windows(enum cli_form form, const struct cd_policy *pol, int64_t at,
		      const struct cd_user *u, const char *title, const char *cmd)
{
	static const char *const cols[] = { "LINE", "SUBJECT", "CAPABILITIES", "from=", "until=",
					    "STATE", NULL };
	char buf[32];
	size_t n;
	const struct cd_rule **all = cli_policy_all_rules(pol, &n);
	if (all == NULL)
		return cli_out_of_memory(cmd, "the lines' windows are not shown");
	struct cli_table t;
	cli_table_start(&t, stdout, form, "window", cols);
	cli_table_title(&t, title);
	for (size_t i = 0; i < n; i++) {
		const struct cd_rule *r = all[i];
		if ((!r->has_from && !r->has_until) || (u != NULL && !cd_rule_may_match(r, (void *)u)))
			continue;
		FILE *out = cli_table_row(&t);
		fprintf(out, "%s:%zu\t", r->file, r->line);	/* r->file is escaped by the core */
		cli_print_subject(out, r->kind, r->name);
		fputc('\t', out);
		cli_print_caps(out, r->caps);
		fprintf(out, "\t%s", r->has_from ? cd_time_format(r->from, buf, sizeof(buf)) : "-");
		fprintf(out, "\t%s", r->has_until ? cd_time_format(r->until, buf, sizeof(buf)) : "-");
		fprintf(out, "\t%s", cli_window_state(r, at));
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
	free(all);
	return 0;
}

const char *cli_window_state(const struct cd_rule *r, int64_t at)
{
	if (r->has_until && at >= r->until)
		return "ended";
	if (r->has_from && at < r->from)
		return "not yet";
	return "in force";
}

const char *cli_span(int64_t secs, char *buf, size_t size)
{
	long long d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60;
	if (d > 0 && h > 0)
		snprintf(buf, size, "%lldd %lldh", d, h);
	else if (d > 0)
		snprintf(buf, size, "%lldd", d);
	else if (h > 0 && m > 0)
		snprintf(buf, size, "%lldh %lldm", h, m);
	else if (h > 0)
		snprintf(buf, size, "%lldh", h);
	else if (m > 0)
		snprintf(buf, size, "%lldm", m);
	else
		snprintf(buf, size, "%llds", (long long)secs);
	return buf;
}

const char *cli_when(int64_t t, int64_t at, char *buf, size_t size)
{
	char time[32], span[48];
	cd_time_format(t, time, sizeof(time));
	if (t == at)
		snprintf(buf, size, "%s (now)", time);
	else
		snprintf(buf, size, t > at ? "%s (in %s)" : "%s (%s ago)", time,
			 cli_span(t > at ? t - at : at - t, span, sizeof(span)));
	return buf;
}

void cli_print_when(FILE *out, int64_t t, int64_t at)
{
	char buf[CLI_WHEN_SIZE];
	fputs(cli_when(t, at, buf, sizeof(buf)), out);
}

int cli_grant_of(const struct cd_policy *pol, const char *name, cd_capmask *grant)
{
	struct cd_user u;
	struct cd_grant g = { 0 };
	errno = 0;
	if (cd_user_lookup(&u, name, pol) < 0) {
		int err = errno;
		cd_user_free(&u);
		if (err == ENOMEM)
			return -1;	/* not "unknown": the caller says memory ran out */
		*grant = 0;
		for (size_t i = 0; i < pol->nrules; i++)
			*grant |= pol->rules[i].caps;
		return 1;
	}
	int rc = cd_resolve(pol, &u, &g);
	*grant = g.caps;
	cd_grant_free(&g);
	cd_user_free(&u);
	return rc < 0 ? -1 : 0;
}

const char *cli_fcaps_ignored(const struct cli_capfile *f)
{
	if (f->read_errno == EINVAL)
		return "value not shown by the kernel: revision 1 (applies at exec) or malformed "
		       "(execve fails)";
	if (f->read_errno == EOVERFLOW)
		return "revision 3 rootid outside this user namespace";
	if (f->caps.revision == 0)
		return "malformed value (execve fails)";
	if (f->nosuid)
		return "nosuid mount";
	/* security/commoncap.c rootid_owns_currentns: a revision-3 value applies only in a user
	 * namespace whose root is rootid; in the initial namespace that is rootid 0 alone. */
	if (f->caps.has_rootid && f->caps.rootid != 0)
		return "revision 3 rootid is not 0 (applies only inside that user namespace)";
	return NULL;
}

struct cli_gain cli_exec_gain(cd_capmask pi, cd_capmask bound, const struct cli_capfile *f)
{
	struct cli_gain g = { 0, 0 };
	if (cli_fcaps_ignored(f) != NULL)
		return g;
	g.permitted = (bound & f->caps.permitted) | (pi & f->caps.inheritable);
	g.effective = f->caps.effective ? g.permitted : 0;
	return g;
}

void cli_print_caps(FILE *out, cd_capmask m)
{
	char num[16];
	if (m == 0) {
		fputs("none", out);
		return;
	}
	const char *sep = "";
	for (int cap = 0; cap < 64; cap++) {
		if (m & ((cd_capmask)1 << cap)) {
			fprintf(out, "%s%s", sep, cd_cap_label(cap, num, sizeof(num)));
			sep = ",";
		}
	}
}

void cli_json_caps(FILE *out, cd_capmask m)
{
	char num[16];
	const char *sep = "";
	fputc('[', out);
	for (int cap = 0; cap < 64; cap++) {
		if (m & ((cd_capmask)1 << cap)) {
			fprintf(out, "%s\"%s\"", sep, cd_cap_label(cap, num, sizeof(num)));
			sep = ",";
		}
	}
	fputc(']', out);
}

void cli_print_count(FILE *out, size_t n, const char *one, const char *many)
{
	fprintf(out, "%zu %s", n, n == 1 ? one : many);
}

void cli_print_subject(FILE *out, enum cd_subject_kind kind, const char *name)
{
	if (kind == CD_SUBJECT_DEFAULT) {
		fputc('*', out);
		return;
	}
	if (kind == CD_SUBJECT_GROUP)
		fputc('@', out);
	cli_print_name(out, name);
}

/* @s in an escaped form (cd_name_form, cd_path_form): printable ASCII, malloc'ed. */
static char *form_of(const char *s, void (*form)(char *, size_t, const char *, size_t))
{
	size_t n = strlen(s);
	char *out = malloc(4 * n + 4);
	if (out != NULL)
		form(out, 4 * n + 4, s, n);
	return out;
}

static void print_form(FILE *out, const char *s, void (*form)(char *, size_t, const char *, size_t))
{
	char *text = form_of(s, form);
	if (text == NULL)
		cli_print_cut_short();	/* a "?" would be another name in a report that goes on */
	fputs(text, out);
	free(text);
}

void cli_print_name(FILE *out, const char *name)
{
	print_form(out, name, cd_name_form);
}

char *cli_path_form(const char *path)
{
	return form_of(path, cd_path_form);
}

void cli_print_path(FILE *out, const char *path)
{
	print_form(out, path, cd_path_form);
}

void cli_json_subject(FILE *out, enum cd_subject_kind kind, const char *name)
{
	char *s = NULL;
	if (kind == CD_SUBJECT_DEFAULT || asprintf(&s, "%s%s", kind == CD_SUBJECT_GROUP ? "@" : "",
						   name) < 0)
		s = NULL;
	cli_json_string(out, s != NULL ? s : "*");
	free(s);
}

void cli_bad_option(char **argv, const char *usage)
{
	/* getopt_long leaves a bad long option (unknown, or missing its argument) just behind
	 * optind; a bad short option may sit inside a cluster ("-jx"): optopt names it. */
	const char *last = optind > 0 ? argv[optind - 1] : "";
	char shortopt[3] = { '-', (char)optopt, '\0' };
	fprintf(stderr, "capdelegate: %s: bad option '", argv[0]);
	cli_text_escape(stderr, optopt == 0 || strncmp(last, "--", 2) == 0 ? last : shortopt);
	fputs("' (unknown, or missing its argument)\n", stderr);
	fputs(usage, stderr);
}

int cli_parse_config_opt(int argc, char **argv, const char *usage, const char **config,
			 const char **confdir)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "confdir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		if (c == 'c')
			*config = optarg;
		else if (c == 'd')
			*confdir = optarg;
		else {
			cli_bad_option(argv, usage);
			return -1;
		}
	}
	return optind;
}

int cli_wants_help(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 1;
		}
	}
	return 0;
}

int cli_finding_is_error(const char *id)
{
	static const char *const errors[] = { "fP-bypass", "mark-refused", "mark-error",
					      "ambient-grant", "userdb-invalid", "grant-unknown" };
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (strcmp(id, errors[i]) == 0)
			return 1;
	return 0;
}

int cli_out_of_memory(const char *cmd, const char *consequence)
{
	fprintf(stderr, "capdelegate: %s: out of memory; %s\n", cmd, consequence);
	return -1;
}

const char *cli_errno_name(int err)
{
	const char *name = strerrorname_np(err);
	return name != NULL ? name : "EUNKNOWN";
}
