/*
 * cli_walk.h - find every regular file carrying security.capability below some paths.
 *
 * Built for speed: getdents64 already gives each entry's type, so a regular file costs one
 * lgetxattr on its path and nothing else (getcap -r pays lstat + getxattr + more per file).
 * Directories cost openat + fstat + getdents64 + close, and a statfs when the device changes
 * (mount points), which is how pseudo and remote filesystems are skipped and nosuid mounts
 * noticed.
 */
#ifndef CLI_WALK_H
#define CLI_WALK_H

#include <stddef.h>
#include <sys/types.h>

#include "cli_xattr.h"

struct cli_capfile {
	char *path;		/* as found: the root argument joined with the names below it */
	struct cli_fcaps caps;	/* caps.revision == 0: malformed value (caps.error says why) */
	size_t rawlen;		/* bytes of the xattr value */
	unsigned char raw[CLI_XATTR_MAX];
	int nosuid;		/* on a nosuid mount: the kernel ignores its capabilities at exec */
	/* The file has a value the kernel would not show us (caps.revision is 0 then):
	 * EINVAL: not a revision 2 or 3 value (revision 1, or malformed); getxattr converts only
	 * those (security/commoncap.c cap_inode_getsecurity).
	 * EOVERFLOW: a revision 3 rootid that does not map into our user namespace. */
	int read_errno;
};

struct cli_scan {
	struct cli_capfile *files;
	size_t nfiles, cap;
	size_t nregular;	/* regular files examined */
	size_t ndirs;		/* directories read */
	size_t nskipped_mounts;	/* pseudo/remote mounts not entered */
	size_t nerrors;		/* errors reported on stderr */
	int threads;		/* worker threads (1 or 2) */
};

enum cli_walk_flags {
	CLI_WALK_LOCAL_ONLY = 1,	/* do not enter pseudo (proc, sysfs...) or remote (nfs...) mounts */
	CLI_WALK_QUIET = 2,		/* do not report unreadable entries on stderr (still counted) */
};

/* Walk @root (a directory or a single file) and append what is found to @scan. Errors name
 * the path and are reported on stderr; the walk goes on. Returns 0, or -1 if @root itself
 * could not be examined. */
int cli_walk(struct cli_scan *scan, const char *root, int flags);
/* Sort files by path (byte order) so that output is stable whatever the directory order. */
void cli_scan_sort(struct cli_scan *scan);
void cli_scan_free(struct cli_scan *scan);

/* Is the filesystem type (statfs f_type) pseudo or remote? Its name in *name. */
int cli_fstype_skipped(unsigned long type, const char **name);

#endif
