/*
 * cd_safe.c - open a policy file only if nobody but root can choose its text.
 *
 * Judging the file alone is not enough: a root-owned 0644 regular file
 * on procfs (/proc/PID/comm of a setuid program started under a chosen name) has text another
 * user picks, and a symlink or a writable directory anywhere on the path lets a user swap the
 * file. So, as OpenSSH's safe_path does for authorized_keys:
 *  - the path is resolved first (realpath), and what is judged is the resolved target;
 *  - every directory from "/" down to the file must be owned by root (or the trusted owner)
 *    and writable by nobody else: no group/other write bit at all, sticky or not, because a
 *    sticky /tmp still lets anyone create the name before root does;
 *  - the directories are opened one by one with openat(O_NOFOLLOW), top down, each judged on
 *    the descriptor, so what is judged is what is opened: once a directory is safe, only root
 *    can change the entries below it;
 *  - the file must not live on a pseudo filesystem whose contents the kernel or a userspace
 *    daemon makes up (procfs, sysfs, debugfs, tracefs, cgroup, FUSE, ...).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cd_safe.h"

/* Filesystems whose files are not text an administrator wrote to a disk. */
static const struct {
	unsigned long magic;
	const char *name;
} pseudo_fs[] = {
	{ PROC_SUPER_MAGIC, "procfs" }, { SYSFS_MAGIC, "sysfs" }, { DEBUGFS_MAGIC, "debugfs" },
	{ TRACEFS_MAGIC, "tracefs" }, { CGROUP_SUPER_MAGIC, "cgroup" },
	{ CGROUP2_SUPER_MAGIC, "cgroup2" }, { SECURITYFS_MAGIC, "securityfs" },
	{ BPF_FS_MAGIC, "bpffs" }, { DEVPTS_SUPER_MAGIC, "devpts" }, { EFIVARFS_MAGIC, "efivarfs" },
	{ PSTOREFS_MAGIC, "pstore" }, { SELINUX_MAGIC, "selinuxfs" }, { SMACK_MAGIC, "smackfs" },
	{ BINFMTFS_MAGIC, "binfmt_misc" }, { NSFS_MAGIC, "nsfs" }, { RDTGROUP_SUPER_MAGIC, "resctrl" },
	{ OPENPROM_SUPER_MAGIC, "openpromfs" }, { USBDEVICE_SUPER_MAGIC, "usbdevfs" },
	{ 0x62656570, "configfs" },
	/* A FUSE daemon, possibly run by a user, answers stat() with whatever owner it likes. */
	{ FUSE_SUPER_MAGIC, "fuse" },
};

static const char *pseudo_fs_name(unsigned long magic)
{
	for (size_t i = 0; i < sizeof(pseudo_fs) / sizeof(pseudo_fs[0]); i++)
		if (pseudo_fs[i].magic == magic)
			return pseudo_fs[i].name;
	return NULL;
}

static void set_why(struct cd_safe_why *why, const char *what, const char *where,
		    const struct stat *st)
{
	why->what = what;
	snprintf(why->where, sizeof(why->where), "%s", where);
	why->uid = st ? st->st_uid : 0;
	why->mode = st ? st->st_mode & 07777 : 0;
}

/* A directory on the way to the policy: root's (or @owner's), and nobody else may write. */
static int dir_is_safe(int fd, const char *where, uid_t owner, struct cd_safe_why *why)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		set_why(why, "is not a directory", where, &st);
	else if (st.st_uid != 0 && st.st_uid != owner)
		set_why(why, "is not owned by root", where, &st);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		set_why(why, (st.st_mode & S_ISVTX) ? "is writable by group or others (sticky or not)"
			: "is writable by group or others", where, &st);
	else
		return 1;
	return 0;
}

/* Open every directory of the absolute, resolved @path top down, judging each on its own
 * descriptor. Returns the descriptor of the last directory and sets *name to the file name in
 * it; -1 on error (errno set) or, with errno 0 and @why filled, when a directory is unsafe. */
static int open_parent(char *path, char **name, uid_t owner, struct cd_safe_why *why)
{
	int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int safe = dfd < 0 ? -1 : dir_is_safe(dfd, "/", owner, why);
	char *p = path + 1, *slash;

	while (safe > 0 && (slash = strchr(p, '/')) != NULL) {
		*slash = '\0';	/* path up to here names the directory in messages */
		int next = openat(dfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(dfd);
		dfd = next;
		errno = saved;
		safe = next < 0 ? -1 : dir_is_safe(next, path, owner, why);
		*slash = '/';
		p = slash + 1;
	}
	if (safe <= 0) {
		int saved = safe < 0 ? errno : 0;
		if (dfd >= 0)
			close(dfd);
		errno = saved;
		return -1;
	}
	*name = p;
	return dfd;
}

int cd_open_safe_at(int dfd, const char *name, const char *shown, int *fdp, struct cd_safe_why *why)
{
	memset(why, 0, sizeof(*why));
	*fdp = -1;
	/* O_NONBLOCK: never hang on a FIFO; O_NOFOLLOW: the name is not a link now. */
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	const char *fs = pseudo_fs_name((unsigned long)sfs.f_type);
	if (fs != NULL) {
		why->what = "is on a pseudo filesystem";
		why->fs = fs;
		snprintf(why->where, sizeof(why->where), "%s", shown);
		close(fd);
		return 0;
	}
	*fdp = fd;
	return 1;
}

int cd_open_safe(const char *path, uid_t owner, int *fdp, struct cd_safe_why *why)
{
	memset(why, 0, sizeof(*why));
	*fdp = -1;
	char *real = realpath(path, NULL);
	if (real == NULL)
		return -1;
	char *name = NULL;
	int dfd = open_parent(real, &name, owner, why);
	/* @path resolved to "/": no name in its last directory, which is the one to open (its
	 * own entry "."; it was judged like every directory), not "" (ENOENT: "missing"). */
	int rc = dfd < 0 ? (why->what ? 0 : -1)
			 : cd_open_safe_at(dfd, *name != '\0' ? name : ".", real, fdp, why);
	int saved = errno;
	if (dfd >= 0)
		close(dfd);
	free(real);
	errno = saved;
	return rc;
}
