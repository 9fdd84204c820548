/*
 * cli_stage.h - a text in place of one file of the policy, shared by check --staged and edit:
 * reading the text, naming the file it stands for, judging the whole policy with it.
 */
#ifndef CLI_STAGE_H
#define CLI_STAGE_H

#include <stddef.h>
#include <stdio.h>

#include "cd_policy.h"

/* The bytes of a file to stand in for a policy file. */
struct cli_text {
	char *bytes;
	size_t len;
};

/* Read the regular file @name (relative to @dirfd, or AT_FDCWD) without hanging on a FIFO,
 * at most one byte more than a policy may hold (so the core's size rule speaks). @own: the
 * file must be the one this command made, not a link (O_NOFOLLOW) and no other name for its
 * inode (a hard link would make the policy another file's twin). 0, or -1 with *why set
 * (errno too when a call failed). */
int cli_text_read(int dirfd, const char *name, int own, struct cli_text *t, const char **why);
void cli_text_free(struct cli_text *t);

/* Read @fd to its end, or to @limit + 1 bytes and no further (a file may grow while it is
 * read; a text over the limit is refused unread beyond it). 0 (t->len > @limit: over), -1
 * on a read error (errno), -2 out of memory; the caller frees t->bytes either way. */
int cli_read_bounded(int fd, size_t limit, struct cli_text *t);

/* Which file of the policy @as names: the main file @config (*dropin NULL) or the drop-in
 * @confdir/NAME.conf (*dropin points to NAME.conf inside @as). -1 when it names neither. */
int cli_stand_in_place(const char *as, const char *config, const char *confdir,
		       const char **dropin);

/* check's judgement of the whole policy, @s (may be NULL) in place of one of its files:
 * errors and warnings on stderr (FILE:LINE: message), the policy left in @pol and the number
 * of warnings in *warnings. Returns check's exit status (CLI_OK, CLI_WARN, CLI_ERROR). */
int cli_check_judge(struct cd_policy *pol, const char *config, const char *confdir,
		    const struct cd_stand_in *s, size_t *warnings);
/* The same judgement of @s's text alone, as if it were the whole policy: its own lines, not
 * its place nor the other files. The core's messages on stderr only when @loud (the caller's
 * whole-policy judgement did not read the text); check's own warnings always. */
int cli_check_judge_alone(struct cd_policy *pol, const struct cd_stand_in *s, int loud,
			  size_t *warnings);

/* A cd_log sink that drops the message: a policy read again, whose messages were said. */
void cli_log_discard(void *arg, int priority, const char *msg);

/* "No worse" (check --staged --no-worse, edit): the policy with @s in place is rejected, but
 * installing @s still makes nothing worse when the installed policy is rejected already (a
 * syntax error, an unsafe file, a missing main file: nothing is granted before or after) and
 * @s has no errors of its own and is not the file at fault. Then one file after another of a
 * policy broken in several can be fixed. Never for an accepted installed policy: nothing
 * passes that makes one rejected. */
enum cli_no_worse_verdict {
	CLI_NO_WORSE,		/* passes */
	CLI_NO_WORSE_UNREAD,	/* a policy could not be read (a system error, said) */
	CLI_NO_WORSE_ACCEPTED,	/* the installed policy is accepted: @s would make it rejected */
	CLI_NO_WORSE_OWN_ERRORS,	/* @s has errors of its own */
	CLI_NO_WORSE_AT_FAULT,	/* the policy with @s is rejected at @s (the size of the whole) */
};
struct cli_no_worse {
	enum cli_no_worse_verdict verdict;
	int own;		/* cli_check_judge_alone's verdict of @s (CLI_ERROR when not judged) */
	struct cd_policy before;	/* the installed policy, read without a message */
};
/* Judge @s so, @after being the rejected policy with it (cli_check_judge's). Free @nw with
 * cli_no_worse_free. */
void cli_no_worse(struct cli_no_worse *nw, const struct cd_policy *after, const char *config,
		  const char *confdir, const struct cd_stand_in *s);
void cli_no_worse_free(struct cli_no_worse *nw);
/* Why @nw did not pass, one clause ("FILE has errors of its own"). */
void cli_no_worse_why(FILE *out, const struct cli_no_worse *nw, const struct cd_policy *after,
		      const struct cd_stand_in *s);
/* "FILE: status" of a rejected policy: the file or directory at fault (the main file when
 * unknown), escaped. */
void cli_print_rejection(FILE *out, const struct cd_policy *pol);

#endif
