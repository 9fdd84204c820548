/*
 * vanish.c - an LD_PRELOAD shim for tests/cli/run.sh: an entry whose name starts with
 * "vanish" is moved out of the tree (into $VANISH_TO) just before capdelegate opens it or
 * reads its security.capability, as on a live system where an entry is removed or renamed
 * between the directory listing and the open. Deterministic, so the `vanished` accounting can
 * be tested without racing a real writer. An empty directory named "rmdir-while-open*" is
 * removed once opened, just before it is read (getdents64 then fails with ENOENT). With
 * $VANISH_DOTDOT set, every openat of ".." fails as if the directory had been moved, so the
 * walk must find its way back up by name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Move @path (relative to @dirfd) to $VANISH_TO/NAME if its name says so. */
static void maybe_vanish(int dirfd, const char *path)
{
	const char *to = getenv("VANISH_TO");
	char *dest = NULL;
	if (to == NULL || strncmp(base(path), "vanish", 6) != 0)
		return;
	if (asprintf(&dest, "%s/%s", to, base(path)) < 0)
		abort();
	if (renameat(dirfd, path, AT_FDCWD, dest) < 0)
		abort();	/* the test would prove nothing */
	free(dest);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (real == NULL)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	if (getenv("VANISH_DOTDOT") != NULL && strcmp(path, "..") == 0) {
		errno = ENOENT;
		return -1;
	}
	maybe_vanish(dirfd, path);
	return real(dirfd, path, flags, mode);
}

ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	static ssize_t (*real)(const char *, const char *, void *, size_t);
	if (real == NULL)
		real = (ssize_t (*)(const char *, const char *, void *, size_t))dlsym(RTLD_NEXT,
										      "lgetxattr");
	maybe_vanish(AT_FDCWD, path);
	return real(path, name, value, size);
}

/* The walker reads directories through glibc's getdents64(). */
ssize_t getdents64(int fd, void *buf, size_t len)
{
	static ssize_t (*real)(int, void *, size_t);
	if (real == NULL)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "getdents64");
	if (getenv("VANISH_TO") != NULL) {
		char link[64], path[4096];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			if (strncmp(base(path), "rmdir-while-open", 16) == 0 && rmdir(path) < 0 &&
			    errno != ENOENT)
				abort();
		}
	}
	return real(fd, buf, len);
}
