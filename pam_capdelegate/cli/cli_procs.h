/*
 * cli_procs.h - running threads with a non-empty inheritable set (what pscap misses: it
 * lists only processes with permitted or effective capabilities). Capabilities belong to a
 * thread, not to a process: each thread is listed on its own.
 */
#ifndef CLI_PROCS_H
#define CLI_PROCS_H

#include <sys/types.h>

#include "cd_policy.h"

struct cli_proc {
	pid_t pid;		/* the process (thread group) */
	pid_t tid;		/* the thread: pid for the main thread */
	uid_t uid;		/* real uid (of this thread) */
	char *user;		/* NSS name of uid, or NULL */
	char *comm;		/* the task name's own bytes (/proc/PID/comm): hostile text,
			 * escape to print */
	cd_capmask inheritable, permitted, effective, ambient;
};

/* Fill *procs from /proc/PID/task/TID, one entry per thread whose pI is not empty. Threads
 * that vanish while read are skipped. 0, or -1 if /proc cannot be read or memory ran out
 * (reported on stderr). */
int cli_procs_scan(struct cli_proc **procs, size_t *nprocs);
void cli_procs_free(struct cli_proc *procs, size_t nprocs);

#endif
