/*
 * cd_safe.h - open a file whose text only root can choose (see cd_safe.c for the rules).
 * Used by the policy loader; the CLI's check reports the same verdicts.
 */
#ifndef CD_SAFE_H
#define CD_SAFE_H

#include <stdio.h>
#include <sys/types.h>

/* Why a path was judged unsafe: "<where> <what>", e.g. "/tmp is writable by group or others". */
struct cd_safe_why {
	const char *what;	/* NULL: not judged unsafe */
	const char *fs;		/* the pseudo filesystem's name, when that is why */
	char where[512];	/* the directory or file concerned (resolved), cut if longer */
	uid_t uid;
	unsigned mode;
};

/* Resolve @path and open it read-only (O_NONBLOCK, no controlling tty) if every directory on
 * the resolved path is owned by root or @owner and not writable by group or others, and the
 * file is not on a pseudo filesystem. Returns 1 with *fdp open; 0 when unsafe (@why says why);
 * -1 on error with errno set (ENOENT: the file or a directory is missing). The file itself
 * (type, owner, mode, size) is for the caller to judge on *fdp. */
int cd_open_safe(const char *path, uid_t owner, int *fdp, struct cd_safe_why *why);

/* The last step of cd_open_safe: open @name in the directory @dfd, which the caller has
 * judged safe (so only root can change its entries), without following a link and not on a
 * pseudo filesystem. @shown names it in @why. Same returns as cd_open_safe. */
int cd_open_safe_at(int dfd, const char *name, const char *shown, int *fdp, struct cd_safe_why *why);

#endif
