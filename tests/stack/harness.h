/*
 * harness.h - what test_stack.c and test_module.c share: writing a test file with an exact
 * mode, and reading the child's capability sets back from /proc/self/status (the kernel's own
 * account of them, not libcap's).
 */
#ifndef STACK_HARNESS_H
#define STACK_HARNESS_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* @text into @path with @mode whatever the umask (policies must be 0644, not 0664). */
static inline int write_file(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int rc = fchmod(fd, mode);
	close(fd);
	return n == (ssize_t)strlen(text) && rc == 0 ? 0 : -1;
}

/* One "CapXxx:\t<hex>" field of /proc/self/status; all ones when it is missing. */
static inline unsigned long long cap_status_field(const char *field)
{
	char buf[4096] = "";
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *p = strstr(buf, field);
	return p ? strtoull(p + strlen(field), NULL, 16) : ~0ULL;
}

#endif
