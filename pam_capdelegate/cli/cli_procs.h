/*
 * cli_procs.h - running threads with a non-empty inheritable set (what pscap misses: it
 * lists only processes with permitted or effective capabilities). Capabilities belong to a
 * thread, not to a process: each thread is listed on its own.
 */
#ifndef CLI_PROCS_H
#define CLI_PROCS_H

#include <sys/types.h>

#include "cd_policy.h"

/* What audit --processes makes of a thread's pI (capdelegate(8), audit). */
enum cli_proc_state {
	CLI_PROC_UNJUDGED,
	CLI_PROC_WITHIN,	/* pI holds nothing the policy does not give its user now */
	CLI_PROC_STALE,		/* pI holds more: a grant given at login, taken back since */
	CLI_PROC_UNKNOWN,	/* the user's grant cannot be computed (NSS failed) */
	CLI_PROC_ROOT,		/* uid 0, and no user line names its account: not judged */
	CLI_PROC_SERVICE,	/* a system service (no audit session, below /system.slice/) */
};

struct cli_proc {
	pid_t pid;		/* the process (thread group) */
	pid_t tid;		/* the thread: pid for the main thread */
	uid_t uid;		/* real uid (of this thread) */
	char *user;		/* NSS name of uid, or NULL */
	int user_errno;		/* user NULL: 0 when NSS has no name for uid, else the lookup's error */
	char *comm;		/* the task name's own bytes (/proc/PID/comm): hostile text,
			 * escape to print */
	cd_capmask inheritable, permitted, effective, ambient;
	/* The login it belongs to, as far as cheaply known: the audit session id
	 * (/proc/PID/task/TID/sessionid, set by pam_loginuid at login and inherited), and the
	 * system manager's unit that holds its cgroup (session-5.scope, user@1001.service,
	 * cron.service) with whether that cgroup lies below /system.slice/ (a system service). */
	int has_sessionid;
	unsigned sessionid;
	char *unit;		/* hostile text (a user names the cgroups of its own manager) */
	int system_slice;
	/* audit's judgement (cli_procs_judge) */
	enum cli_proc_state state;
	cd_capmask grant;	/* STALE, WITHIN: what the policy gives the user now */
	cd_capmask beyond;	/* STALE: what pI holds beyond it (and beyond what pam_systemd
				 * itself gives a user manager) */
	char *why;		/* UNKNOWN: why that cannot be computed (escaped text) */
};

/* Fill *procs from /proc/PID/task/TID, one entry per thread whose pI is not empty. Threads
 * that vanish while read are skipped. 0, or -1 if /proc cannot be read or memory ran out
 * (reported on stderr). */
int cli_procs_scan(struct cli_proc **procs, size_t *nprocs);
void cli_procs_free(struct cli_proc *procs, size_t nprocs);

/* Judge each thread's pI against what @pol gives its user now (cli_audit_procs.c): the lines'
 * windows judged at the system clock's now whatever @pol was judged at, the user and groups
 * resolved as the module resolves them, failing closed (a lookup that fails makes the thread
 * UNKNOWN, never WITHIN). In a user manager, what pam_systemd gives it (cap_wake_alarm, the
 * user record's ambient set in @db, may be NULL) is not counted. Sets state, grant, beyond
 * and why. 0, or -1 when memory ran out or the clock cannot be read (said). */
struct cli_userdb;
int cli_procs_judge(const struct cd_policy *pol, const struct cli_userdb *db,
		    struct cli_proc *procs, size_t nprocs);
/* "stale", "within", "unknown", "root", "service" (JSON's processes[].state). */
const char *cli_proc_state_str(enum cli_proc_state st);

#endif
