/*
 * cli_report_read.h - the interface of cli_report_read.c: one host's `audit --json` or
 * `usage --json` document, read and judged for report (cli_report.c), which keeps only what it
 * aggregates of each.
 */
#ifndef CLI_REPORT_READ_H
#define CLI_REPORT_READ_H

#include <sys/stat.h>

#include <json-c/json.h>

/* One audit document, judged whole: its shape is the one capdelegate(8) documents for the
 * keys report reads, no object holds a key twice, and its names do not contradict each other. */
struct cli_report_doc {
	json_object *doc;
	char *name;		/* host_hex's bytes, else host; NULL when the audit records none */
	char machine_id[33];	/* 32 lower-case hex digits, or "" when the audit records none */
	int usage;		/* a `usage --json` document ("kind": "usage"), not an audit */
};

/* Open @file for reading: a regular file, its identity in *@st. The descriptor, or -1 with
 * *@why set (a static reason). */
int cli_report_open(const char *file, struct stat *st, const char **why);

/* Read and judge the document on @fd (closed here) into @out. 0: read; 1: rejected, *@why
 * the reason, malloc'ed, its hostile parts escaped ("byte N: ..." where parsing stopped);
 * -1: out of memory. */
int cli_report_read(int fd, struct cli_report_doc *out, char **why);
void cli_report_doc_free(struct cli_report_doc *d);

/* Of a document read: its policy.rules and findings arrays, and a string member the shape
 * check found (NULL if @o has none of that name). */
json_object *cli_report_rules(const struct cli_report_doc *d);
json_object *cli_report_findings(const struct cli_report_doc *d);
/* Of a usage document: its grants array (each entry's grant and used judged string arrays). */
json_object *cli_report_usage_grants(const struct cli_report_doc *d);
const char *cli_report_str(json_object *o, const char *key);

#endif
