/*
 * slow_fsync.c - preloaded into `capdelegate edit` by tests/cli/edit-cases.sh: fsync and
 * fdatasync of a file whose path ends in $SLOW_FSYNC_SUFFIX first create $SLOW_FSYNC_MARK, then
 * wait for $SLOW_FSYNC_GO to exist (10 s at most) before they sync. The test acts while edit
 * waits on the disk, as another writer can on a slow or busy one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void wait_for_go(int fd)
{
	const char *suffix = getenv("SLOW_FSYNC_SUFFIX"), *mark = getenv("SLOW_FSYNC_MARK"),
		   *go = getenv("SLOW_FSYNC_GO");
	char link[64], path[4096];
	if (suffix == NULL || mark == NULL || go == NULL)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	size_t len = strlen(suffix);
	if (n < 0 || (size_t)n < len || memcmp(path + n - len, suffix, len) != 0)
		return;
	int m = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (m >= 0)
		close(m);
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	for (int i = 0; i < 200 && access(go, F_OK) != 0; i++)
		nanosleep(&tick, NULL);
}

int fsync(int fd)
{
	static int (*real)(int);
	wait_for_go(fd);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fsync");
	return real(fd);
}

int fdatasync(int fd)
{
	static int (*real)(int);
	wait_for_go(fd);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fdatasync");
	return real(fd);
}
