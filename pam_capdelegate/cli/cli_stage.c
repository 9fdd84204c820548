/*
 * cli_stage.c - see cli_stage.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_stage.h"

void cli_text_free(struct cli_text *t)
{
	free(t->bytes);
	t->bytes = NULL;
	t->len = 0;
}

int cli_read_bounded(int fd, size_t limit, struct cli_text *t)
{
	size_t cap = 4096;
	t->len = 0;
	limit++;	/* one byte more: a text over the limit is told from one at it */
	if ((t->bytes = malloc(cap + 1)) == NULL)
		return -2;
	for (;;) {
		if (t->len == cap && cap < limit) {
			cap = cap * 2 < limit ? cap * 2 : limit;
			char *more = realloc(t->bytes, cap + 1);
			if (more == NULL)
				return -2;
			t->bytes = more;
		}
		if (t->len == cap)
			return 0;	/* over the limit: the caller refuses it by its size */
		ssize_t n = read(fd, t->bytes + t->len, cap - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		t->len += (size_t)n;
	}
}

int cli_text_read(int dirfd, const char *name, int own, struct cli_text *t, const char **why)
{
	*t = (struct cli_text){ NULL, 0 };
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
			(own ? O_NOFOLLOW : 0));
	if (fd < 0 && errno == ELOOP && own) {
		*why = "is a symbolic link";
		errno = 0;	/* the why says it all */
		return -1;
	}
	if (fd < 0) {
		*why = "cannot open";
		return -1;
	}
	struct stat st;
	int rc = -1;
	errno = 0;
	if (fstat(fd, &st) < 0)
		*why = "cannot stat";
	else if (!S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if (own && st.st_nlink != 1)
		*why = "has another name (a hard link)";
	else if (cli_read_bounded(fd, CD_MAX_POLICY_BYTES, t) < 0)
		*why = "read error";	/* the core rejects a policy over the limit by its size */
	else
		rc = 0;
	int saved = errno;
	close(fd);
	if (rc < 0)
		cli_text_free(t);
	errno = saved;
	return rc;
}

/* @a and @b name one place: the same text, or the same inode when both exist ("./x", a link
 * to the directory, a trailing '/'). */
static int same_place(const char *a, const char *b)
{
	struct stat sa, sb;
	if (strcmp(a, b) == 0)
		return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int cli_stand_in_place(const char *as, const char *config, const char *confdir,
		       const char **dropin)
{
	*dropin = NULL;
	if (same_place(as, config))
		return 0;
	const char *slash = strrchr(as, '/');
	if (confdir[0] == '\0' || slash == NULL)
		return -1;
	char *dir = strndup(as, slash == as ? 1 : (size_t)(slash - as));
	int in_confdir = dir != NULL && same_place(dir, confdir);
	free(dir);
	if (!in_confdir || !cd_dropin_name_ok(slash + 1))
		return -1;
	*dropin = slash + 1;
	return 0;
}
