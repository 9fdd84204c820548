/* cli_usage_print.c - usage's records and its JSON (capdelegate(8), USAGE). */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_usage.h"

/* Version of usage --json's document. 1: the first. */
#define USAGE_SCHEMA_VERSION 1

void cli_usage_time(FILE *out, int64_t t)
{
	struct tm tm;
	time_t tt = (time_t)t;
	char buf[64];
	if (gmtime_r(&tt, &tm) != NULL && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
		fputs(buf, out);
	else
		fprintf(out, "%lld", (long long)t);
}

static void cap_text(FILE *out, int cap)
{
	char buf[16];
	fputs(cd_cap_label(cap, buf, sizeof(buf)), out);
}

/* ---- records ----------------------------------------------------------------------------- */

static void tally_rows(const struct cli_usage_opts *o, const char *kind, struct cu_tally **t, size_t n)
{
	static const char *const cols[] = { "user", "capability", "file", "runs=", "first=", "last=",
					    NULL };
	static const char *const nobody[] = { "file", "runs=", "why=", "first=", "last=", NULL };
	int who = strcmp(kind, "unattributed") != 0;
	struct cli_table tb;
	if (n == 0)
		return;
	cli_table_start(&tb, stdout, o->form, kind, who ? cols : nobody);
	for (size_t i = 0; i < n; i++) {
		FILE *f = cli_table_row(&tb);
		if (who) {
			cli_print_name(f, t[i]->user);
			fputc('\t', f);
			cap_text(f, t[i]->cap);
			fputc('\t', f);
		}
		cli_print_path(f, t[i]->file);
		fprintf(f, "\t%llu\t", (unsigned long long)t[i]->runs);
		if (!who)
			fprintf(f, "%s\t", t[i]->why);
		cli_usage_time(f, t[i]->first);
		fputc('\t', f);
		cli_usage_time(f, t[i]->last);
		cli_table_end_row(&tb);
	}
	cli_table_end(&tb);
}

static void unused_rows(const struct cli_usage_opts *o, const struct cu_results *r)
{
	static const char *const cols[] = { "user", "capability", "sessions=", "last_grant=",
					    "unattributed=", "rules=", NULL };
	struct cli_table tb;
	int started = 0;
	for (size_t i = 0; i < r->nusers; i++) {
		const struct cu_user *u = r->users[i];
		cd_capmask idle = u->last_grant & ~u->used;
		for (int cap = 0; cap < 64; cap++) {
			if (!(idle >> cap & 1))
				continue;
			if (!started++)
				cli_table_start(&tb, stdout, o->form, "unused", cols);
			FILE *f = cli_table_row(&tb);
			cli_print_name(f, u->name);
			fputc('\t', f);
			cap_text(f, cap);
			fprintf(f, "\t%llu\t", (unsigned long long)u->sessions);
			cli_usage_time(f, u->last_at);
			fprintf(f, "\t%llu\t", (unsigned long long)r->nobody_runs[cap]);
			cli_text_escape(f, u->last_rules);
			cli_table_end_row(&tb);
		}
	}
	if (started)
		cli_table_end(&tb);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_name(FILE *out, const char *key, const char *s)
{
	fprintf(out, "\"%s\":", key);
	cli_json_string(out, s);
	fprintf(out, ",\"%s_hex\":", key);
	cli_json_hex(out, s);
}

static void json_cap(FILE *out, int cap)
{
	char buf[16];
	fputs("\"capability\":", out);
	cli_json_string(out, cd_cap_label(cap, buf, sizeof(buf)));
}

static void json_tallies(FILE *out, const char *key, struct cu_tally **t, size_t n)
{
	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{" : "{", out);
		if (t[i]->user != NULL) {
			json_name(out, "user", t[i]->user);
			fputc(',', out);
			json_cap(out, t[i]->cap);
			fputc(',', out);
		} else {
			fprintf(out, "\"why\":\"%s\",", t[i]->why);
		}
		json_name(out, "file", t[i]->file);
		fprintf(out, ",\"runs\":%llu,\"first\":%lld,\"last\":%lld}", (unsigned long long)t[i]->runs,
			(long long)t[i]->first, (long long)t[i]->last);
	}
	fputc(']', out);
}

static void json_users(FILE *out, const struct cu_results *r)
{
	fputs(",\"grants\":[", out);
	for (size_t i = 0; i < r->nusers; i++) {
		const struct cu_user *u = r->users[i];
		fputs(i ? ",{" : "{", out);
		json_name(out, "user", u->name);
		fputs(",\"grant\":", out);
		cli_json_caps(out, u->last_grant);
		fputs(",\"used\":", out);
		cli_json_caps(out, u->used & u->last_grant);
		fputs(",\"unused\":", out);
		cli_json_caps(out, u->last_grant & ~u->used);
		fprintf(out, ",\"sessions\":%llu,\"last_grant\":%lld,", (unsigned long long)u->sessions,
			(long long)u->last_at);
		json_name(out, "rules", u->last_rules);
		fputc('}', out);
	}
	fputc(']', out);
}

static void print_json(const struct cli_usage_opts *o, const struct cu_state *st,
		       const struct cu_results *r)
{
	char host[HOST_NAME_MAX + 1] = "", id[33];
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	printf("{\"version\":%d,\"kind\":\"usage\",", USAGE_SCHEMA_VERSION);
	json_name(stdout, "host", host);
	if (cli_machine_id(id) == 0)
		printf(",\"machine_id\":\"%s\"", id);
	else
		fputs(",\"machine_id\":null", stdout);
	fputc(',', stdout);
	json_name(stdout, "key", o->key);
	printf(",\"since\":%lld,\"until\":%lld,\"inputs\":[", (long long)o->since, (long long)o->now);
	for (size_t i = 0; i < o->ninputs; i++) {
		fputs(i ? ",{" : "{", stdout);
		json_name(stdout, "path", o->inputs[i]);
		fputc('}', stdout);
	}
	printf("],\"oldest_record\":");
	if (st->oldest != 0)
		printf("%lld", (long long)st->oldest);
	else
		fputs("null", stdout);
	printf(",\"records\":%llu,\"runs\":%llu,\"runs_unmarked\":%llu",
	       (unsigned long long)st->records, (unsigned long long)st->runs,
	       (unsigned long long)st->runs_unmarked);
	json_users(stdout, r);
	fputs(",\"unattributed_by_capability\":{", stdout);
	for (int cap = 0, n = 0; cap < 64; cap++) {
		char buf[16];
		if (r->nobody_runs[cap] == 0)
			continue;
		if (n++)
			fputc(',', stdout);
		cli_json_string(stdout, cd_cap_label(cap, buf, sizeof(buf)));
		printf(":%llu", (unsigned long long)r->nobody_runs[cap]);
	}
	fputc('}', stdout);
	json_tallies(stdout, "used", r->used, r->nused);
	json_tallies(stdout, "denied", r->denied, r->ndenied);
	json_tallies(stdout, "unattributed", r->nobody, r->nnobody);
	json_tallies(stdout, "outside", r->outside, r->noutside);
	json_tallies(stdout, "ungained", r->ungained, r->nungained);
	fputs("}\n", stdout);
}

int cli_usage_print(const struct cli_usage_opts *o, struct cu_state *st)
{
	struct cu_results r;
	if (st->oom || cu_results(st, &r) != 0)
		return cli_out_of_memory("usage", "no report"), CLI_ERROR;
	int rc = CLI_OK;
	if (o->propose) {
		rc = cli_usage_propose(o, &r, st->oldest);
	} else if (o->json) {
		print_json(o, st, &r);
	} else {
		tally_rows(o, "used", r.used, r.nused);
		unused_rows(o, &r);
		tally_rows(o, "denied", r.denied, r.ndenied);
		tally_rows(o, "unattributed", r.nobody, r.nnobody);
		tally_rows(o, "outside", r.outside, r.noutside);
		tally_rows(o, "ungained", r.ungained, r.nungained);
	}
	unsigned long long nobody = 0;
	for (size_t i = 0; i < r.nnobody; i++)
		nobody += r.nobody[i]->runs;
	fprintf(stderr, "capdelegate: usage: in the last %s: runs of marked files %llu, attributed "
		"to nobody %llu; runs of other files %llu\n", o->since_text,
		(unsigned long long)(st->runs - st->runs_unmarked), nobody,
		(unsigned long long)st->runs_unmarked);
	/* rotation took the start of the window away: say so, an unused grant may not be */
	if (st->oldest == 0 || st->oldest > st->since) {
		fputs("capdelegate: usage: note: ", stderr);
		if (st->oldest == 0) {
			fputs("no record read", stderr);
		} else {
			fputs("the oldest record read is of ", stderr);
			cli_usage_time(stderr, st->oldest);
		}
		fprintf(stderr, ", within the window (--since %s): runs before it are not seen, and a "
			"grant unused here may have been used then\n", o->since_text);
	}
	cu_results_free(&r);
	if (fflush(stdout) != 0)
		rc = CLI_ERROR;
	return rc;
}
