/*
 * cli_stage.h - a text in place of one file of the policy, shared by check --staged and edit:
 * reading the text, naming the file it stands for, judging the whole policy with it.
 */
#ifndef CLI_STAGE_H
#define CLI_STAGE_H

#include <stddef.h>

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

#endif
