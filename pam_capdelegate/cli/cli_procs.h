/*
 * cli_procs.h - running processes with a non-empty inheritable set (what pscap misses: it
 * lists only processes with permitted or effective capabilities).
 */
#ifndef CLI_PROCS_H
#define CLI_PROCS_H

#include <sys/types.h>

#include "cd_policy.h"

struct cli_proc {
	pid_t pid;
	uid_t uid;		/* real uid */
	char *user;		/* NSS name of uid, or NULL */
	char *comm;		/* the task name's own bytes (/proc/PID/comm): hostile text,
			 * escape to print */
	cd_capmask inheritable, permitted, effective, ambient;
};

/* Fill *procs from /proc. Processes that vanish while read are skipped. 0, or -1 if /proc
 * cannot be read (reported on stderr). */
int cli_procs_scan(struct cli_proc **procs, size_t *nprocs);
void cli_procs_free(struct cli_proc *procs, size_t nprocs);

#endif
