/*
 * cli_procs.c - see cli_procs.h. The capability sets come from libcap (cap_get_pid: capget on
 * the pid; cap_iab_get_pid: the ambient vector), the task name from /proc/PID/comm (its own
 * bytes and a newline, unescaped, unlike status's "Name:"), the real uid from status's "Uid:".
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

#include "cli_procs.h"

#define BIT(cap) ((cd_capmask)1 << (cap))

static int read_caps(struct cli_proc *p)
{
	cap_t c = cap_get_pid(p->pid);
	cap_iab_t iab = cap_iab_get_pid(p->pid);
	int rc = c != NULL && iab != NULL ? 0 : -1;
	if (rc == 0) {
		p->inheritable = cd_cap_flag_mask(c, CAP_INHERITABLE);
		p->permitted = cd_cap_flag_mask(c, CAP_PERMITTED);
		p->effective = cd_cap_flag_mask(c, CAP_EFFECTIVE);
		for (cap_value_t cap = 0; cap < 64; cap++)
			if (cap_iab_get_vector(iab, CAP_IAB_AMB, cap) == CAP_SET)
				p->ambient |= BIT(cap);
	}
	cap_free(c);
	cap_free(iab);
	return rc;
}

/* The comm is at most TASK_COMM_LEN - 1 (15) bytes, any but NUL; the kernel adds one '\n'. */
static int read_comm(struct cli_proc *p)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[n - 1] != '\n')
		return -1;
	buf[n - 1] = '\0';
	p->comm = strdup(buf);
	return p->comm != NULL ? 0 : -1;
}

static int read_uid(struct cli_proc *p)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	FILE *fp = fopen(path, "re");
	if (fp == NULL)
		return -1;
	char *line = NULL;
	size_t alloc = 0;
	int rc = -1;
	/* "Name:" is escaped by the kernel (no newline inside), so lines are lines. */
	while (rc < 0 && getline(&line, &alloc, fp) >= 0) {
		unsigned long uid;
		if (sscanf(line, "Uid:\t%lu", &uid) == 1) {
			p->uid = (uid_t)uid;
			rc = 0;
		}
	}
	free(line);
	fclose(fp);
	return rc;
}

/* 0 when read, -1 when the process is gone or unreadable. */
static int read_proc(struct cli_proc *p, const char *pid)
{
	p->pid = (pid_t)strtol(pid, NULL, 10);
	return read_caps(p) == 0 && read_comm(p) == 0 && read_uid(p) == 0 ? 0 : -1;
}

static char *user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	return pw != NULL ? strdup(pw->pw_name) : NULL;
}

static int all_digits(const char *s)
{
	if (*s == '\0' || strlen(s) > 9)	/* pid_max is at most 2^22 */
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int push(struct cli_proc **procs, size_t *n, size_t *cap, struct cli_proc *p)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 32;
		struct cli_proc *np = realloc(*procs, ncap * sizeof(*np));
		if (np == NULL)
			return -1;
		*procs = np;
		*cap = ncap;
	}
	(*procs)[(*n)++] = *p;
	return 0;
}

int cli_procs_scan(struct cli_proc **procs, size_t *nprocs)
{
	size_t cap = 0;
	*procs = NULL;
	*nprocs = 0;
	DIR *d = opendir("/proc");
	if (d == NULL) {
		fprintf(stderr, "capdelegate: /proc: cannot read: %s; processes not listed\n",
			strerror(errno));
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct cli_proc p = { 0 };
		if (!all_digits(de->d_name) || read_proc(&p, de->d_name) < 0 || p.inheritable == 0) {
			free(p.comm);
			continue;
		}
		p.user = user_name(p.uid);
		if (push(procs, nprocs, &cap, &p) < 0) {
			free(p.comm);
			free(p.user);
			break;
		}
	}
	closedir(d);
	return 0;
}

void cli_procs_free(struct cli_proc *procs, size_t nprocs)
{
	for (size_t i = 0; i < nprocs; i++) {
		free(procs[i].comm);
		free(procs[i].user);
	}
	free(procs);
}
