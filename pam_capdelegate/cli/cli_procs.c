/*
 * cli_procs.c - see cli_procs.h. Reads /proc/PID/status, the stable text interface (the
 * Cap* lines are hex masks, fs/proc/array.c render_cap_t).
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_procs.h"

/* The kernel escapes the task name in "Name:" (fs/proc/array.c proc_task_name:
 * seq_escape_str(m, tcomm, ESCAPE_SPACE | ESCAPE_SPECIAL, "\n\\"): only a newline, as "\n",
 * and a backslash, as "\\"; every other byte is raw). Undo it in place to get the comm's own
 * bytes, which the CLI's escapers then escape exactly once. Since every backslash of the comm
 * is escaped, "\n" cannot be a backslash of the comm followed by an 'n'. */
static void unescape_comm(char *s)
{
	char *o = s;
	for (const char *i = s; *i; i++) {
		if (i[0] == '\\' && (i[1] == 'n' || i[1] == '\\'))
			*o++ = *++i == 'n' ? '\n' : '\\';
		else
			*o++ = *i;
	}
	*o = '\0';
}

static void parse_status_line(struct cli_proc *p, const char *line)
{
	if (strncmp(line, "Name:\t", 6) == 0) {
		free(p->comm);
		p->comm = strdup(line + 6);
		if (p->comm != NULL) {
			p->comm[strcspn(p->comm, "\n")] = '\0';
			unescape_comm(p->comm);
		}
	} else if (strncmp(line, "Uid:", 4) == 0) {
		p->uid = (uid_t)strtoul(line + 4, NULL, 10);
	} else if (strncmp(line, "CapInh:", 7) == 0) {
		p->inheritable = strtoull(line + 7, NULL, 16);
	} else if (strncmp(line, "CapPrm:", 7) == 0) {
		p->permitted = strtoull(line + 7, NULL, 16);
	} else if (strncmp(line, "CapEff:", 7) == 0) {
		p->effective = strtoull(line + 7, NULL, 16);
	} else if (strncmp(line, "CapAmb:", 7) == 0) {
		p->ambient = strtoull(line + 7, NULL, 16);
	}
}

/* 0 when read, -1 when the process is gone or unreadable. */
static int read_status(struct cli_proc *p, const char *pid)
{
	char path[64];
	p->pid = (pid_t)strtol(pid, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	FILE *fp = fopen(path, "re");
	if (fp == NULL)
		return -1;
	char *line = NULL;
	size_t alloc = 0;
	/* "Name:" is escaped by the kernel (no newline inside), so lines are lines. */
	while (getline(&line, &alloc, fp) >= 0)
		parse_status_line(p, line);
	free(line);
	fclose(fp);
	return p->comm != NULL ? 0 : -1;
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
		if (!all_digits(de->d_name) || read_status(&p, de->d_name) < 0 || p.inheritable == 0) {
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
