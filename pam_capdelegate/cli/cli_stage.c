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

#include "cli_common.h"
#include "cli_out.h"
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

void cli_log_discard(void *arg, int priority, const char *msg)
{
	(void)arg;
	(void)priority;
	(void)msg;
}

/* Was @s's text read into @pol, and with how many errors? -1: not read (a file before it
 * stopped the load). */
static long stand_in_errors(const struct cd_policy *pol)
{
	for (size_t i = 0; i < pol->nsources; i++)
		if (pol->sources[i].stand_in)
			return (long)pol->sources[i].nerrors;
	return -1;
}

static int rejected(enum cd_status st)
{
	return st == CD_POLICY_SYNTAX || st == CD_POLICY_UNSAFE || st == CD_POLICY_MISSING;
}

void cli_no_worse(struct cli_no_worse *nw, const struct cd_policy *after, const char *config,
		  const char *confdir, const struct cd_stand_in *s)
{
	/* the installed policy's messages would repeat the ones just said, or name files the
	 * staged text replaces: read without them */
	struct cd_log quiet = { .sink = cli_log_discard };
	struct cd_load_opts opts = { .owner = 0, .confdir = confdir };
	nw->own = CLI_ERROR;
	cd_policy_load(&nw->before, config, &opts, &quiet);
	if (after->status == CD_POLICY_SYSERR || nw->before.status == CD_POLICY_SYSERR) {
		nw->verdict = CLI_NO_WORSE_UNREAD;
		return;
	}
	if (!rejected(nw->before.status)) {
		nw->verdict = CLI_NO_WORSE_ACCEPTED;
		return;
	}
	long read_errors = stand_in_errors(after);
	struct cd_policy alone;
	size_t warnings;
	nw->own = cli_check_judge_alone(&alone, s, read_errors < 0, &warnings);
	int unread = alone.status == CD_POLICY_SYSERR;
	cd_policy_free(&alone);
	if (unread)
		nw->verdict = CLI_NO_WORSE_UNREAD;
	else if (nw->own == CLI_ERROR || read_errors > 0)
		nw->verdict = CLI_NO_WORSE_OWN_ERRORS;
	else if (after->failed_path == NULL || strcmp(after->failed_path, s->shown_path) == 0)
		nw->verdict = CLI_NO_WORSE_AT_FAULT;
	else
		nw->verdict = CLI_NO_WORSE;
}

void cli_no_worse_free(struct cli_no_worse *nw)
{
	cd_policy_free(&nw->before);
}

void cli_print_rejection(FILE *out, const struct cd_policy *pol)
{
	cli_text_escape(out, pol->failed_path ? pol->failed_path : pol->path);
	fprintf(out, ": %s", cd_status_str(pol->status));
}

void cli_no_worse_why(FILE *out, const struct cli_no_worse *nw, const struct cd_policy *after,
		      const struct cd_stand_in *s)
{
	switch (nw->verdict) {
	case CLI_NO_WORSE:
		break;
	case CLI_NO_WORSE_UNREAD:
		fputs("the policy could not be read (memory, a read error)", out);
		break;
	case CLI_NO_WORSE_ACCEPTED:
		fputs("the installed policy is accepted: with ", out);
		cli_text_escape(out, s->shown_path);
		fputs(" it would be rejected", out);
		break;
	case CLI_NO_WORSE_OWN_ERRORS:
		cli_text_escape(out, s->shown_path);
		fputs(" has errors of its own (said above)", out);
		break;
	case CLI_NO_WORSE_AT_FAULT:
		fputs("the policy with ", out);
		cli_text_escape(out, s->shown_path);
		fputs(" is rejected at ", out);
		cli_text_escape(out, s->shown_path);
		fputs(" itself", out);
		break;
	}
	if (nw->verdict == CLI_NO_WORSE_ACCEPTED || nw->verdict == CLI_NO_WORSE_AT_FAULT) {
		fputs(" (", out);
		cli_print_rejection(out, after);
		fputc(')', out);
	}
}
