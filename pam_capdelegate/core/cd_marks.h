/*
 * cd_marks.h - the declared file marks, capdelegate-files.conf(5): which file carries which
 * file-inheritable (fI) and file-effective (fE) bits. The policy says who holds a capability in
 * pI; a mark says which file hands it on. Read with the policy's rules (a root-chosen file,
 * FILE:LINE errors, one bad line rejects the whole file); used by `capdelegate marks` and
 * `capdelegate audit`.
 */
#ifndef CD_MARKS_H
#define CD_MARKS_H

#include <stddef.h>
#include <sys/capability.h>
#include <sys/types.h>

#include "cd_policy.h"

#define CD_DEFAULT_MARKS "/etc/security/capdelegate-files.conf"
/* A marks file lists a few files; anything larger is an accident or an attack. */
#define CD_MAX_MARKS_BYTES (1024 * 1024)

enum { CD_MARK_NOSUID = 1 };	/* the file carries no setuid/setgid bit; apply removes one */

struct cd_mark {
	char *path;		/* absolute, decoded (no escapes), in the file's text */
	cd_capmask inheritable;	/* fI: never empty */
	int effective;		/* fE: set for exactly the caps of fI (libcap's "=ei") */
	unsigned flags;		/* CD_MARK_* */
	size_t line;
};

struct cd_marks {
	char *path;		/* the file */
	char *shown;		/* as messages print it (cd_quote) */
	enum cd_status status;	/* CD_POLICY_OK, _MISSING, _UNSAFE, _SYNTAX, _SYSERR */
	size_t nerrors;
	struct cd_mark *marks;	/* in file order; none unless status is OK */
	size_t nmarks;
	size_t nlines;
	char *text;
};

/* Read @path (through cd_open_safe: every directory root's and not writable by others, no
 * pseudo filesystem; the file root's, regular, not writable by others, at most
 * opts->max_bytes or CD_MAX_MARKS_BYTES). Only opts->owner and opts->max_bytes are used.
 * Errors are logged as FILE:LINE: message naming the offending token. A missing file is
 * CD_POLICY_MISSING and not logged: the caller says what that means. */
enum cd_status cd_marks_load(struct cd_marks *m, const char *path, const struct cd_load_opts *opts,
			     struct cd_log *log);
/* The same parse of @len bytes in memory, named @name in messages (fuzzer, tests). */
enum cd_status cd_marks_parse(struct cd_marks *m, const char *name, const char *text, size_t len,
			      const struct cd_load_opts *opts, struct cd_log *log);
void cd_marks_free(struct cd_marks *m);

/* Where a mark's file is on disk, as the caller opened it: the file's identity, and its
 * directory's (resolved through links) so that a file not installed yet is placed too. */
struct cd_mark_where {
	int file_known;		/* the file was opened: dev, ino */
	dev_t dev;
	ino_t ino;
	int dir_known;		/* its directory was opened: dir_dev, dir_ino */
	dev_t dir_dev;
	ino_t dir_ino;
};
/* Fill @w for @mk (zeroed: nothing known). 0, or -1 when memory runs out. */
typedef int (*cd_mark_locate_fn)(void *arg, const struct cd_mark *mk, struct cd_mark_where *w);
/* Two lines of an accepted marks file (status CD_POLICY_OK) that name one file under two paths
 * (a hard link, a linked directory such as merged /usr's /bin -> usr/bin): the file is declared
 * twice, even with the same mark, so each later line is an error naming the first, and the
 * marks file is rejected as for a path written twice (no marks left, CD_POLICY_SYNTAX). The
 * status. */
enum cd_status cd_marks_reject_aliases(struct cd_marks *m, cd_mark_locate_fn locate, void *arg,
				       struct cd_log *log);

/* The file capability set a mark declares (fI, fE as declared, fP empty); NULL when memory runs
 * out. cap_free it. */
cap_t cd_mark_caps(const struct cd_mark *mk);
/* libcap's text for @caps ("cap_net_raw=i"), "none" for an empty set; caller frees with free.
 * NULL when memory runs out. */
char *cd_fcaps_text(cap_t caps);

#endif
