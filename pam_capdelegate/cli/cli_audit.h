/*
 * cli_audit.h - `capdelegate audit`: the model built from a policy and a filesystem scan,
 * printed as text (cli_audit.c) or as the JSON document of capdelegate(8) (cli_audit_json.c).
 */
#ifndef CLI_AUDIT_H
#define CLI_AUDIT_H

#include <stdio.h>

#include "cd_marks.h"
#include "cd_policy.h"
#include "cli_procs.h"
#include "cli_userdb.h"
#include "cli_walk.h"

/* A policy subject and the union of its lines: what a user resolved through it gets. */
struct cli_subject {
	enum cd_subject_kind kind;
	const char *name;	/* NULL for "*" */
	cd_capmask caps;
};

struct cli_finding {
	const char *id;		/* stable identifier, see capdelegate(8) FINDINGS */
	char *path;		/* file or directory concerned, or NULL */
	size_t line;		/* policy line concerned, or 0 */
	const char *policy_file;	/* with line: the file of the policy that holds it (raw) */
	cd_capmask caps;	/* capabilities concerned */
	char *message;		/* human text; holds no file names (they are escaped apart) */
};

struct cli_audit {
	char **roots;
	int nroots;
	const char *config;
	const char *confdir;	/* drop-ins: NULL for the default, "" for none */
	struct cd_policy pol;	/* judged at @at: pol.rules holds the lines in force */
	int64_t at;		/* now, as login would judge the lines' windows */
	struct cli_scan scan;
	cd_capmask bound;
	struct cli_subject *subjects;
	size_t nsubjects;
	struct cli_finding *findings;
	size_t nfindings, findings_cap;
	int want_procs;
	struct cli_proc *procs;
	size_t nprocs;
	int incomplete;		/* scan errors (listed), or --processes failed */
	const char *marks_path;	/* --marks, or NULL: CD_DEFAULT_MARKS if it exists */
	struct cd_marks marks;	/* declared marks; drift is reported as mark-* findings */
	const char **userdb_dirs;	/* --userdb DIR..., or systemd's search path */
	size_t nuserdb_dirs;
	struct cli_userdb userdb;	/* systemd's user records: ambient-grant, bounding-drop */
};

void cli_audit_print_json(FILE *out, const struct cli_audit *a);

/* The file of the policy that holds @r (the main file or a drop-in), as a path: findings and
 * the JSON rules name a drop-in's line by its own file. */
const char *cli_audit_rule_file(const struct cd_policy *pol, const struct cd_rule *r);

#endif
