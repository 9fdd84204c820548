/*
 * marks_shim.c - an LD_PRELOAD shim for the `marks apply` cases of tests/cli/marks-cases.sh:
 *  - $MARKS_SHIM_DROP set: cap_set_fd reports success and writes nothing, as a filesystem
 *    that takes the value and drops it: apply must read the file again and find out;
 *  - $MARKS_SHIM_SWAP=DECOY:PATH: right after capdelegate first reads the capabilities of
 *    the file at PATH (cap_get_fd, the check), DECOY is renamed over PATH, as someone racing
 *    apply would swap the file between the check and the write: a write by path then lands
 *    on DECOY, a write through the checked descriptor on the file that was judged.
 *  - $MARKS_SHIM_GETFAIL=ERRNO: cap_get_fd fails with ERRNO (EIO: a disk that cannot be read),
 *    which is neither "no value" (ENODATA) nor "a value the kernel will not show" (EINVAL).
 *  - $MARKS_SHIM_SETFAIL=ERRNO: cap_set_fd fails with ERRNO and writes nothing.
 * Deterministic, so no race has to be won for the test to mean something.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

int cap_set_fd(int fd, cap_t caps)
{
	static int (*real)(int, cap_t);
	if (getenv("MARKS_SHIM_DROP") != NULL)
		return 0;
	if (getenv("MARKS_SHIM_SETFAIL") != NULL) {
		errno = atoi(getenv("MARKS_SHIM_SETFAIL"));
		return -1;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "cap_set_fd");
	return real(fd, caps);
}

/* The path @fd was opened as, or "" */
static void fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
}

cap_t cap_get_fd(int fd)
{
	static cap_t (*real)(int);
	static int swapped;
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "cap_get_fd");
	const char *fail = getenv("MARKS_SHIM_GETFAIL");
	if (fail != NULL) {
		errno = atoi(fail);
		return NULL;
	}
	cap_t c = real(fd);
	const char *spec = getenv("MARKS_SHIM_SWAP");
	const char *colon = spec != NULL ? strchr(spec, ':') : NULL;
	char path[PATH_MAX], *decoy;
	if (swapped || colon == NULL)
		return c;
	fd_path(fd, path, sizeof(path));
	if (strcmp(path, colon + 1) != 0)
		return c;
	swapped = 1;
	if ((decoy = strndup(spec, (size_t)(colon - spec))) == NULL || rename(decoy, path) < 0)
		abort();	/* the test would prove nothing */
	free(decoy);
	return c;
}
