// SPDX-License-Identifier: GPL-2.0
/*
 * run-as: start a program as a non-root uid with a chosen inheritable set,
 * the way login hands capabilities to a session (busybox setpriv cannot
 * change uids). pI is set while root; setresuid() then clears pP and pE
 * and keeps pI.
 *
 *   run-as UID CAPNUM[,CAPNUM...] PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

static int set_inheritable(const char *list)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint64_t inh = 0;
	char *copy = strdup(list), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long cap = strtoul(tok, &end, 10);

		if (*end || cap > 63) {
			fprintf(stderr, "run-as: bad capability number '%s'\n", tok);
			return -1;
		}
		inh |= 1ULL << cap;
	}
	free(copy);
	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].inheritable = (uint32_t)inh;
	d[1].inheritable = (uint32_t)(inh >> 32);
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

int main(int argc, char **argv)
{
	uid_t uid;

	if (argc < 4 || !strcmp(argv[1], "--help")) {
		fprintf(argc < 4 ? stderr : stdout,
			"usage: run-as UID CAPNUM[,CAPNUM...] PROGRAM [ARGS...]\n"
			"Sets pI to the listed capability numbers, changes to UID (gid too),\n"
			"then execs PROGRAM.\n");
		return argc < 4 ? 2 : 0;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	if (set_inheritable(argv[2])) {
		perror("run-as: capset");
		return 1;
	}
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
		perror("run-as: set ids");
		return 1;
	}
	execv(argv[3], argv + 3);
	fprintf(stderr, "run-as: exec %s: %s\n", argv[3], strerror(errno));
	return 127;
}
