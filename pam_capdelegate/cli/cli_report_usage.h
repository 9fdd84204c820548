/*
 * cli_report_usage.h - the interface of cli_report_usage.c: report's view of many hosts'
 * `usage --json` documents, for cli_report.c.
 */
#ifndef CLI_REPORT_USAGE_H
#define CLI_REPORT_USAGE_H

#include <stddef.h>
#include <stdio.h>

#include "cd_policy.h"
#include "cli_out.h"
#include "cli_report_read.h"

/* For each capability number, the hosts whose users' grants hold it, and those where one was
 * used. */
struct cli_report_usage {
	size_t hosts;
	size_t granted[64], used[64];
};

/* What usage document @d says of its host: the capabilities some user's last grant holds and
 * those some run used. 0, or -1 with *@bad a name in it that is no capability (rejected). */
int cli_report_usage_judge(const struct cli_report_doc *d, cd_capmask *granted, cd_capmask *used,
			   const char **bad);
/* Count one host (one admitted document). */
void cli_report_usage_add(struct cli_report_usage *u, cd_capmask granted, cd_capmask used);
/* The records "usage CAPABILITY granted_hosts=N used_hosts=N unused_hosts=N", and the JSON
 * member "usage":[{capability, granted_hosts, used_hosts}]. */
void cli_report_usage_text(const struct cli_report_usage *u, enum cli_form form);
void cli_report_usage_json(FILE *out, const struct cli_report_usage *u);

#endif
