/*
 * cli_walk.h - find every regular file carrying security.capability below some paths, and
 * account for everything that could not be looked at.
 *
 * Built for speed: getdents64 already gives each entry's type, so a regular file costs one
 * lgetxattr on its bare name (the thread's working directory being the file's directory) and
 * nothing else (getcap -r pays lstat + getxattr + more per file). Directories cost openat +
 * statx + getdents64 + close, and a statfs at mount points, which is how pseudo and remote
 * filesystems are skipped and nosuid mounts noticed.
 *
 * Built for any tree: every directory is opened relative to its parent's descriptor, never by
 * its full path, so depth and PATH_MAX do not matter; each thread keeps at most a few
 * descriptors and its own stack of directories on the heap, so neither descriptors nor the C
 * stack grow with depth. What the audit needs to judge a file (owner, mode, the directories
 * above it) is collected during the walk, not looked up again by path.
 */
#ifndef CLI_WALK_H
#define CLI_WALK_H

#include <stddef.h>
#include <sys/types.h>

#include "cli_xattr.h"

/* The most descriptors each thread keeps open besides the directory it was given (older ones
 * are closed and reopened through ".." on the way back up). Threads and descriptors are both
 * lowered to fit RLIMIT_NOFILE. */
#define CLI_WALK_FDS_PER_THREAD 8

/* A directory that someone other than root can change (not owned by root, or writable by its
 * group or others without the sticky bit): whatever lies below it can be replaced. */
struct cli_dirnote {
	const struct cli_dirnote *parent;	/* the next such directory above, or NULL */
	char *path;	/* as walked (below a root), or canonical (above a root) */
	char why[64];	/* "owned by uid 1001", "writable by others (mode 0777)" */
};

struct cli_capfile {
	char *path;		/* as found: the root argument joined with the names below it */
	struct cli_fcaps caps;	/* caps.revision == 0: malformed or unknown (see read_errno) */
	size_t rawlen;		/* bytes of the xattr value */
	unsigned char raw[CLI_XATTR_MAX];
	int nosuid;		/* on a nosuid mount: the kernel ignores its capabilities at exec */
	/* The file has a value the kernel would not show us (caps.revision is 0 then, and what
	 * it grants is unknown, not nothing):
	 * EINVAL: not a revision 2 or 3 value (revision 1, or malformed); getxattr converts only
	 * those (security/commoncap.c cap_inode_getsecurity).
	 * EOVERFLOW: a revision 3 rootid that does not map into our user namespace. */
	int read_errno;
	int have_stat;		/* uid and mode below are known (lstat of the file worked) */
	uid_t uid;
	mode_t mode;
	const struct cli_dirnote *unsafe_dirs;	/* nearest unsafe directory above, or NULL */
};

/* What could not be looked at. @what NULL: vanished (the entry was listed by its directory
 * and was gone when opened: a race with a live system, not an error). */
struct cli_problem {
	char *path;
	const char *what;	/* "cannot open directory", "cannot read security.capability"... */
	int err;		/* errno */
};

struct cli_scan {
	struct cli_capfile *files;
	size_t nfiles, cap;
	size_t nregular;	/* regular files examined */
	size_t ndirs;		/* directories read */
	size_t nskipped_mounts;	/* pseudo/remote mounts not entered */
	struct cli_problem *errors, *vanished;	/* sorted by path after cli_scan_roots */
	size_t nerrors, nvanished, errors_cap, vanished_cap;
	struct cli_dirnote **dirnotes;	/* every note made, to free them */
	size_t ndirnotes, dirnotes_cap;
	int threads;		/* worker threads; 0: one per usable CPU */
};

enum cli_walk_flags {
	CLI_WALK_LOCAL_ONLY = 1,	/* do not enter pseudo (proc, sysfs...) or remote (nfs...) mounts */
};

/* Walk every root (a directory or a single file, symlinks followed for the root itself only)
 * into @scan. A root equal to or below another root that reaches it is not walked again, so
 * each file is reported and counted once, under the enclosing root's path. Errors are listed
 * in @scan and on stderr; the walk goes on. Files, errors and vanished entries end sorted by
 * path. Returns the number of errors (0: nothing was missed but what vanished), or -1 when
 * memory ran out (the scan is incomplete). */
int cli_scan_roots(struct cli_scan *scan, char **roots, int nroots, int flags);
void cli_scan_free(struct cli_scan *scan);

#endif
