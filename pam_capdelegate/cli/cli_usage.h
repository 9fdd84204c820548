/*
 * cli_usage.h - what usage's files share: the options, the printers (cli_usage_print.c), the
 * proposal (cli_usage_propose.c).
 */
#ifndef CLI_USAGE_H
#define CLI_USAGE_H

#include <stdint.h>
#include <time.h>

#include "cli_out.h"
#include "cli_usage_rec.h"

#define CU_LOG "/var/log/audit/audit.log"
#define CU_DEFAULT_KEY "capdelegate"

struct cli_usage_opts {
	const char *since_text;	/* as given: "90d" */
	const char *key, *marks, *config, *confdir;
	int json, propose;
	enum cli_form form;
	time_t now;
	int64_t since;		/* now - the duration */
	const char *const *inputs;	/* the files read, in order */
	size_t ninputs;
};

/* "30d", "12h": seconds (s, m, h, d, w; at most 100 years), or -1. */
int64_t cli_usage_duration(const char *s);
/* Read the inputs (given: --input; else the default logs) and print. An exit status. */
int cli_usage_run(struct cli_usage_opts *o, char **inputs, size_t ninputs, int given);
/* Print @st's results as o->json, o->propose or records say. An exit status. */
int cli_usage_print(const struct cli_usage_opts *o, struct cu_state *st);
/* --propose: the policy lines to remove or reduce (cli_usage_propose.c); @oldest: the oldest
 * record's time (0: none). An exit status. */
int cli_usage_propose(const struct cli_usage_opts *o, const struct cu_results *res, int64_t oldest);
/* "2026-12-07T10:00:00Z" */
void cli_usage_time(FILE *out, int64_t t);

#endif
