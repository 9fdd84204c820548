/*
 * cli_common.h - what the capdelegate subcommands share: loading the policy through the core
 * (so the CLI reports exactly what the module would do), the exec rule, capability printing.
 */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <stdio.h>

#include "cd_policy.h"
#include "cli_out.h"
#include "cli_walk.h"

/* Exit codes of check and audit: clean, warnings/findings, errors. */
enum { CLI_OK = 0, CLI_WARN = 1, CLI_ERROR = 2 };

/* Load @path (CD_DEFAULT_CONFIG if NULL) and the drop-ins of @confdir (CD_DEFAULT_CONFDIR if
 * NULL, none if ""), as the module does; errors on stderr as FILE:LINE: message. */
enum cd_status cli_load_policy(struct cd_policy *pol, const char *path, const char *confdir);
/* The same with @s (NULL: none) read in place of one of its files (check --staged, edit). */
enum cd_status cli_load_policy_as(struct cd_policy *pol, const char *path, const char *confdir,
				  const struct cd_stand_in *s);

/* The moment a command judges the lines' windows at (capdelegate.conf(5), WINDOWS): @text is
 * "now" or NULL (the system clock, CLOCK_REALTIME, as the module reads it at login) or a UTC
 * time as a policy writes one (2026-12-14T18:00Z). 0, or -1 with the reason on stderr
 * ("capdelegate: CMD: ..."). Never TZ or /etc/localtime: cd_time.c is arithmetic. */
int cli_time_arg(const char *cmd, const char *text, int64_t *at);
/* Judge @pol's windows at @at as the module does at login (cd_policy_at): the lines outside
 * their window leave pol->rules for pol->outside, so that every grant resolved from @pol is
 * login's at that moment. When memory runs out the policy is rejected (status SYSERR, no
 * rules: nothing granted) and said: -1. */
int cli_policy_at(struct cd_policy *pol, int64_t at, const char *cmd);
/* Judge a policy read (status OK; any other is left as it is) at the system clock's now, into
 * *@at: what login gives now. The policy is rejected (nothing granted, said) when the clock
 * cannot be read. */
void cli_policy_now(struct cd_policy *pol, const char *cmd, int64_t *at);
/* cli_load_policy, then cli_policy_now. */
enum cd_status cli_load_policy_now(struct cd_policy *pol, const char *path, const char *confdir,
				   const char *cmd, int64_t *at);
/* Every line of @pol, in force or not (pol->rules, then the lines cli_policy_at moved out),
 * in the order read: for the commands that list lines. Malloc'ed array of pointers into @pol
 * (*n set); NULL when memory ran out. */
const struct cd_rule **cli_policy_all_rules(const struct cd_policy *pol, size_t *n);
/* The lines of @pol that hold for a time (with @u: those that may name @u), in the order
 * read, as "window" records under @title (the table form's heading): FILE:LINE, subject,
 * capabilities, from=, until= ("-": no such bound) and the state at @at. 0, or -1 when memory
 * ran out (said, for @cmd). */
int cli_print_windows(enum cli_form form, const struct cd_policy *pol, int64_t at,
		      const struct cd_user *u, const char *title, const char *cmd);
/* A line's window at @at: "in force", "ended" or "not yet". */
const char *cli_window_state(const struct cd_rule *r, int64_t at);
/* A span of @secs seconds, >= 0, as people read it: "45s", "36m", "5h 12m", "3d 4h", in @buf
 * (48 bytes hold any). */
const char *cli_span(int64_t secs, char *buf, size_t size);
/* "TIME (SPAN ago)", "TIME (in SPAN)" or "TIME (now)": @t seen from @at, in @buf
 * (CLI_WHEN_SIZE bytes hold any), or printed. */
#define CLI_WHEN_SIZE 96
const char *cli_when(int64_t t, int64_t at, char *buf, size_t size);
void cli_print_when(FILE *out, int64_t t, int64_t at);

/* What a process with inheritable set @pi gains by executing a file with @f, per
 * security/commoncap.c (bprm_caps_from_vfs_caps): pP' = (X & fP) | (pI & fI), pE' = fE ? pP' : 0.
 * The ambient set is cleared by an exec of a file with capabilities, so it plays no part.
 * Returns 0 if the kernel ignores the file's capabilities here (see cli_fcaps_ignored). */
struct cli_gain {
	cd_capmask permitted, effective;
};
struct cli_gain cli_exec_gain(cd_capmask pi, cd_capmask bound, const struct cli_capfile *f);
/* Why the kernel would ignore this file's capabilities, or NULL if it honours them. */
const char *cli_fcaps_ignored(const struct cli_capfile *f);

/* The grant login gives user @name under @pol, resolved as explain and the module resolve it.
 * 0: *@grant is it. 1: the user or a group the policy needs cannot be looked up; *@grant is
 * then every capability the policy names (the most login could give). -1: out of memory. */
int cli_grant_of(const struct cd_policy *pol, const char *name, cd_capmask *grant);


/* A policy subject as the policy spells it: name, @group or *. Text (escaped) and JSON. The
 * core only accepts plain names, but printing never relies on that. */
void cli_print_subject(FILE *out, enum cd_subject_kind kind, const char *name);
/* A user or group name in the policy's own form (cd_name_form: linux\040admins, CORP\alice). */
void cli_print_name(FILE *out, const char *name);
/* A file path in the marks file's own form (cd_path_form: \040 for a space), printed or
 * malloc'ed (NULL when memory runs out). */
void cli_print_path(FILE *out, const char *path);
char *cli_path_form(const char *path);
void cli_json_subject(FILE *out, enum cd_subject_kind kind, const char *name);

/* "cap_a,cap_b" or "none" into @out (text), ["cap_a","cap_b"] (JSON). */
void cli_print_caps(FILE *out, cd_capmask m);
/* "1 rule", "2 rules": @n and the word for it, @one only when n is 1. */
void cli_print_count(FILE *out, size_t n, const char *one, const char *many);
void cli_json_caps(FILE *out, cd_capmask m);

/* Options of check and explain: --config FILE and --confdir DIR. Returns the index of the first operand,
 * or -1 (usage printed) on an unknown option. */
int cli_parse_config_opt(int argc, char **argv, const char *usage, const char **config,
			 const char **confdir);

/* After getopt_long returned '?': name the bad option, escaped, then print @usage. opterr is
 * 0 (capdelegate.c): getopt's own message would echo the argument's bytes raw. */
void cli_bad_option(char **argv, const char *usage);

/* Is this option the subcommand's --help? Print @usage and return 1. */
int cli_wants_help(int argc, char **argv, const char *usage);


int cli_check_main(int argc, char **argv);
int cli_explain_main(int argc, char **argv);
int cli_audit_main(int argc, char **argv);
int cli_decode_main(int argc, char **argv);
int cli_import_main(int argc, char **argv);
int cli_marks_main(int argc, char **argv);
int cli_edit_main(int argc, char **argv);
int cli_report_main(int argc, char **argv);
int cli_usage_main(int argc, char **argv);

/* This machine's ID from /etc/machine-id, as systemd reads it, in lower case: 0, or -1 when it
 * is unset or not one (audit --json and usage --json name their host by it). */
int cli_machine_id(char id[33]);

/* Memory ran out where no message says so otherwise: "capdelegate: CMD: out of memory; WHAT
 * FOLLOWS" on stderr (no exit 2 is silent: capdelegate(8), EXIT STATUS). Returns -1. */
int cli_out_of_memory(const char *cmd, const char *consequence);

/* Is a finding of this identifier error level (capdelegate(8), FINDINGS)? audit's exit status
 * and report's error records both ask here. */
int cli_finding_is_error(const char *id);

/* The symbolic name of an errno value ("EACCES"), for error records. */
const char *cli_errno_name(int err);

#endif
