/*
 * cli_procs.c - see cli_procs.h. Capabilities are per thread (capset(2) changes the calling
 * thread only), so every thread is read: /proc/PID/task/TID/status gives one thread's uid and
 * four sets (CapInh, CapPrm, CapEff, CapAmb: the kernel's hex masks) in one read, the view of
 * one moment; /proc/PID/task/TID/comm its name (its own bytes and a newline, unescaped, unlike
 * status's "Name:"); sessionid and cgroup the login it belongs to.
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
#include <unistd.h>

#include "cli_procs.h"

/* The comm is at most TASK_COMM_LEN - 1 (15) bytes, any but NUL; the kernel adds one '\n'.
 * -1 when the thread is gone, -2 when memory ran out (never a thread skipped in silence). */
static int read_comm(struct cli_proc *p)
{
	char path[80], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)p->pid, (int)p->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[n - 1] != '\n')
		return -1;
	buf[n - 1] = '\0';
	p->comm = strdup(buf);
	return p->comm != NULL ? 0 : -2;
}

/* One "Key:\tHEX" capability line of status into @m; 1 when @line was that key. */
static int cap_field(const char *line, const char *key, cd_capmask *m, unsigned *seen, unsigned bit)
{
	size_t n = strlen(key);
	if (strncmp(line, key, n) != 0)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(line + n, &end, 16);
	if (errno == 0 && end != line + n && (*end == '\n' || *end == '\0')) {
		*m = (cd_capmask)v;
		*seen |= bit;
	}
	return 1;
}

/* The thread's real uid and its four sets. "Name:" is escaped by the kernel (no newline
 * inside), so lines are lines. */
static int read_status(struct cli_proc *p)
{
	char path[80];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)p->pid, (int)p->tid);
	FILE *fp = fopen(path, "re");
	if (fp == NULL)
		return -1;
	char *line = NULL;
	size_t alloc = 0;
	unsigned seen = 0;
	while (seen != 0x1f && getline(&line, &alloc, fp) >= 0) {
		unsigned long uid;
		if (sscanf(line, "Uid:\t%lu", &uid) == 1) {
			p->uid = (uid_t)uid;
			seen |= 0x10;
		} else if (!cap_field(line, "CapInh:\t", &p->inheritable, &seen, 0x1) &&
			   !cap_field(line, "CapPrm:\t", &p->permitted, &seen, 0x2) &&
			   !cap_field(line, "CapEff:\t", &p->effective, &seen, 0x4)) {
			cap_field(line, "CapAmb:\t", &p->ambient, &seen, 0x8);
		}
	}
	free(line);
	fclose(fp);
	return seen == 0x1f ? 0 : -1;
}

/* The name of @p's uid into p->user (NULL when NSS has none, or the lookup failed: then
 * p->user_errno says why). -1 when memory ran out. getpwuid_r, not getpwuid: a failed lookup
 * must not read as "no such user" (errno is only meaningful from the _r form). */
static int user_name(struct cli_proc *p)
{
	struct passwd pw, *res = NULL;
	char *buf = NULL;
	int rc;
	for (size_t size = 1024;; size *= 2) {
		char *nb = realloc(buf, size);
		if (nb == NULL) {
			free(buf);
			return -1;
		}
		buf = nb;
		rc = getpwuid_r(p->uid, &pw, buf, size, &res);
		if (rc != ERANGE || size >= 1024 * 1024)
			break;
	}
	p->user_errno = rc;
	if (rc == 0 && res != NULL && (p->user = strdup(pw.pw_name)) == NULL) {
		free(buf);
		return -1;
	}
	free(buf);
	return rc == ENOMEM ? -1 : 0;
}

/* The thread's audit session id: "4294967295" (AUDIT_SID_UNSET) when no login set its
 * loginuid; no file without CONFIG_AUDIT. Left unset unless a whole number is read. */
static void read_sessionid(struct cli_proc *p)
{
	char path[80], buf[24];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/sessionid", (int)p->pid, (int)p->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *end;
	errno = 0;
	unsigned long v = strtoul(buf, &end, 10);
	if (errno == 0 && end != buf && (*end == '\0' || *end == '\n') && v < 4294967295UL) {
		p->sessionid = (unsigned)v;
		p->has_sessionid = 1;
	}
}

/* The system manager's unit that holds cgroup path @path into p->unit: its first component
 * named NAME.scope or NAME.service below the slices (session-5.scope, user@1001.service,
 * cron.service), the one `systemctl stop` acts on; deeper ones are a user manager's own
 * (user@1001.service/init.scope). Whether the path lies below /system.slice/. -1 when memory
 * ran out. */
static int unit_of(struct cli_proc *p, const char *path)
{
	p->system_slice = strncmp(path, "/system.slice/", 14) == 0;
	free(p->unit);
	p->unit = NULL;
	for (const char *c = path; *c != '\0';) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		if ((n > 6 && memcmp(c + n - 6, ".scope", 6) == 0) ||
		    (n > 8 && memcmp(c + n - 8, ".service", 8) == 0))
			return (p->unit = strndup(c, n)) == NULL ? -1 : 0;
		c += n + (slash != NULL);
	}
	return 0;
}

/* The thread's systemd cgroup: the "name=systemd" hierarchy's line (cgroup v1, hybrid) or
 * else the unified one's ("0::"). Nothing when unreadable. -1 when memory ran out. */
static int read_cgroup(struct cli_proc *p)
{
	char path[80];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)p->pid, (int)p->tid);
	FILE *fp = fopen(path, "re");
	if (fp == NULL)
		return errno == ENOMEM ? -1 : 0;
	char *line = NULL;
	size_t alloc = 0;
	ssize_t n;
	int rc = 0, named = 0;
	while (rc == 0 && !named && (errno = 0, n = getline(&line, &alloc, fp)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		char *c = strchr(line, ':');
		char *path_part = c ? strchr(c + 1, ':') : NULL;
		if (path_part == NULL)
			continue;
		*c = '\0';	/* the line: ID:CONTROLLERS:PATH */
		*path_part++ = '\0';
		named = strcmp(c + 1, "name=systemd") == 0;
		if (named || strcmp(line, "0") == 0)
			rc = unit_of(p, path_part);
	}
	if (rc == 0 && !named && errno == ENOMEM)
		rc = -1;	/* never a unit left out in silence */
	free(line);
	fclose(fp);
	return rc;
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

/* Every thread of process @pid (a /proc entry) whose pI is not empty. 0, or -1 when out of
 * memory; a process or thread that vanishes while read is skipped. */
static int scan_threads(const char *pid, struct cli_proc **procs, size_t *n, size_t *cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	DIR *d = opendir(path);
	if (d == NULL)
		return 0;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct cli_proc p = { .pid = (pid_t)strtol(pid, NULL, 10) };
		if (!all_digits(de->d_name))
			continue;
		p.tid = (pid_t)strtol(de->d_name, NULL, 10);
		int comm = -1;
		if (read_status(&p) < 0 || p.inheritable == 0 || (comm = read_comm(&p)) == -1) {
			free(p.comm);
			continue;
		}
		read_sessionid(&p);
		if (comm < 0 || user_name(&p) < 0 || read_cgroup(&p) < 0 ||
		    push(procs, n, cap, &p) < 0) {
			free(p.comm);
			free(p.user);
			free(p.unit);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
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
	int rc = 0;
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (all_digits(de->d_name))
			rc = scan_threads(de->d_name, procs, nprocs, &cap);
	closedir(d);
	if (rc < 0)
		fputs("capdelegate: out of memory; processes listed in part\n", stderr);
	return rc;
}

void cli_procs_free(struct cli_proc *procs, size_t nprocs)
{
	for (size_t i = 0; i < nprocs; i++) {
		free(procs[i].comm);
		free(procs[i].user);
		free(procs[i].unit);
		free(procs[i].why);
	}
	free(procs);
}
