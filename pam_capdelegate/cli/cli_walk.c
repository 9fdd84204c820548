/*
 * cli_walk.c - see cli_walk.h.
 *
 * Each thread walks depth first with its own stack of directories (struct frame, on the heap).
 * A directory is read in one go: regular files are checked right away (the thread's working
 * directory is the directory, so lgetxattr takes a bare name), subdirectories are remembered
 * by name and opened later relative to the directory's descriptor. Past a few levels
 * (CLI_WALK_FDS_PER_THREAD, fewer under a low RLIMIT_NOFILE) the oldest descriptors are
 * closed; on the way back up a directory is reopened through ".." of its child and must be the
 * same (device, inode), else it is looked up again by name from the thread's base directory.
 *
 * A thread that finds another thread idle hands it the subdirectory it was about to enter,
 * opened, through a queue that never holds more items than there are idle threads; the walk
 * ends when the queue is empty and no thread holds a directory.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli_out.h"
#include "cli_walk.h"

/* Bigger than any valid value so that an oversized one is seen as such, not as ERANGE. */
#define XATTR_BUF 64
#define DENTS_BUF (64 * 1024)

/* A directory, already open (a root: -1, opened by the thread that takes it), for whichever
 * thread takes it. */
struct item {
	struct item *next;
	int fd;
	dev_t parent_dev;	/* a different device below is a mount point */
	int nosuid;
	int is_root;		/* a PATH argument: always entered, whatever its filesystem */
	const struct cli_dirnote *unsafe;
	char path[];
};

struct walker {
	struct cli_scan *scan;
	int flags;
	int fds;		/* descriptors a thread keeps on its stack besides its base */
	int cwd;		/* the caller's working directory, for relative roots */
	pthread_mutex_t lock;	/* the queue, and everything appended to the scan */
	pthread_cond_t cond;
	struct item *head;
	int queued, idle;	/* also read without the lock, to decide to hand work over */
	int busy;		/* threads holding an item */
	int failed;		/* out of memory: stop */
};

/* One directory on a thread's stack. */
struct frame {
	int fd;			/* -1 while closed to keep descriptors bounded */
	dev_t dev;
	ino_t ino;
	size_t pathlen;		/* its path is the worker's path[0..pathlen) */
	int nosuid;
	const struct cli_dirnote *unsafe;	/* nearest unsafe directory at or above it */
	char *subdirs;		/* subdirectory names still to enter, each NUL-terminated */
	size_t sublen, subpos, subcap;
};

struct worker {
	struct walker *w;
	char *dents;
	char *path;
	size_t pathcap;
	struct frame *frames;
	size_t nframes, framecap;
	size_t lo;		/* frames[0] and frames[lo..nframes) hold descriptors */
	int own_cwd;		/* this thread has a working directory of its own (unshare CLONE_FS) */
	int in_dir;		/* ... and it is the directory being read */
	size_t nregular, ndirs, nskipped;
};

/* Pseudo and remote filesystems (statfs f_type, include/uapi/linux/magic.h and fs/): their
 * files are not local executables an administrator audits, and walking them is slow or hangs. */
static const struct { unsigned long type; const char *name; } skipped_fs[] = {
	{ 0x9fa0, "proc" }, { 0x62656572, "sysfs" }, { 0x1cd1, "devpts" },
	{ 0x64626720, "debugfs" }, { 0x74726163, "tracefs" }, { 0x73636673, "securityfs" },
	{ 0x27e0eb, "cgroup" }, { 0x63677270, "cgroup2" }, { 0xcafe4a11, "bpf" },
	{ 0x6165676c, "pstore" }, { 0x0187, "autofs" }, { 0x62656570, "configfs" },
	{ 0xde5e81e4, "efivarfs" }, { 0x42494e4d, "binfmt_misc" }, { 0xf97cff8c, "selinuxfs" },
	{ 0x19800202, "mqueue" }, { 0x958458f6, "hugetlbfs" }, { 0x65735546, "fuse" },
	{ 0x6969, "nfs" }, { 0x517b, "smb" }, { 0xff534d42, "cifs" }, { 0xfe534d42, "smb2" },
	{ 0x00c36400, "ceph" }, { 0x01021997, "9p" }, { 0x5346414f, "afs" },
	{ 0x73757245, "coda" }, { 0x564c, "ncp" }, { 0x47504653, "gpfs" },
};

static int fstype_skipped(unsigned long type, const char **name)
{
	for (size_t i = 0; i < sizeof(skipped_fs) / sizeof(skipped_fs[0]); i++) {
		if (skipped_fs[i].type == type) {
			*name = skipped_fs[i].name;
			return 1;
		}
	}
	return 0;
}

/* @buf with room for @need elements of @size, growing by doubling; NULL if memory ran out
 * (@buf is still valid then). */
static void *reserve(void *buf, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return buf;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *nb = realloc(buf, ncap * size);
	if (nb != NULL)
		*cap = ncap;
	return nb;
}

/* ---- what the scan collects (under the walker's lock) ------------------------------------ */

static int out_of_memory(struct walker *w)
{
	__atomic_store_n(&w->failed, 1, __ATOMIC_RELAXED);
	return -1;
}

/* The entry was listed and is gone now: ENOENT, or replaced by a symlink (ELOOP under
 * O_NOFOLLOW) or a non-directory (ENOTDIR). */
static int gone(int err)
{
	return err == ENOENT || err == ELOOP || err == ENOTDIR;
}

static int add_problem(struct walker *w, const char *path, const char *what, int err)
{
	struct cli_scan *s = w->scan;
	int vanished = what == NULL;
	struct cli_problem **list = vanished ? &s->vanished : &s->errors;
	size_t *n = vanished ? &s->nvanished : &s->nerrors;
	size_t *cap = vanished ? &s->vanished_cap : &s->errors_cap;
	char *copy = strdup(path);
	pthread_mutex_lock(&w->lock);
	struct cli_problem *room = copy ? reserve(*list, cap, *n + 1, sizeof(**list)) : NULL;
	int rc = room != NULL ? 0 : -1;
	if (rc == 0) {
		*list = room;
		room[(*n)++] = (struct cli_problem){ copy, what, err };
	}
	pthread_mutex_unlock(&w->lock);
	if (rc < 0) {
		free(copy);
		return out_of_memory(w);
	}
	if (!vanished) {
		flockfile(stderr);
		fputs("capdelegate: ", stderr);
		cli_text_escape(stderr, path);
		fprintf(stderr, ": %s: %s; not scanned\n", what, strerror(err));
		funlockfile(stderr);
	}
	return 0;
}

/* An error, or a vanished entry if @err says it is gone and @may_vanish. */
static int problem(struct walker *w, const char *path, const char *what, int err, int may_vanish)
{
	return add_problem(w, path, may_vanish && gone(err) ? NULL : what, err);
}

/* Owner root and no group/other write (or the sticky bit, which keeps others from renaming
 * root's entries away): only root can then swap what lies below. */
static int dir_unsafe(uid_t uid, mode_t mode, char *why, size_t size)
{
	if (uid != 0) {
		snprintf(why, size, "owned by uid %u", (unsigned)uid);
		return 1;
	}
	if ((mode & (S_IWGRP | S_IWOTH)) && !(mode & S_ISVTX)) {
		snprintf(why, size, "writable by %s (mode %04o)",
			 mode & S_IWOTH ? "others" : "its group", (unsigned)(mode & 07777));
		return 1;
	}
	return 0;
}

/* The chain of unsafe directories at and above a directory with @uid and @mode. Returns
 * @parent if it is safe, NULL with w->failed set if memory ran out. */
static const struct cli_dirnote *note_dir(struct walker *w, const char *path, uid_t uid,
					  mode_t mode, const struct cli_dirnote *parent, int *rc)
{
	char why[sizeof(((struct cli_dirnote *)0)->why)];
	if (!dir_unsafe(uid, mode, why, sizeof(why)))
		return parent;
	struct cli_scan *s = w->scan;
	struct cli_dirnote *d = malloc(sizeof(*d));
	char *copy = strdup(path);
	int stored = 0;
	if (d != NULL && copy != NULL) {
		*d = (struct cli_dirnote){ .parent = parent, .path = copy };
		memcpy(d->why, why, sizeof(why));
		pthread_mutex_lock(&w->lock);
		struct cli_dirnote **room = reserve(s->dirnotes, &s->dirnotes_cap, s->ndirnotes + 1,
						    sizeof(d));
		if ((stored = room != NULL)) {
			s->dirnotes = room;
			s->dirnotes[s->ndirnotes++] = d;
		}
		pthread_mutex_unlock(&w->lock);
	}
	if (stored)
		return d;
	free(copy);
	free(d);
	*rc = out_of_memory(w);
	return NULL;
}

/* A file with a security.capability value. @len < 0: the kernel refused to show the value,
 * @read_errno says why (see cli_capfile). @st NULL: owner and mode unknown. */
static int record(struct walker *w, const char *path, const unsigned char *val, ssize_t len,
		  int read_errno, int nosuid, const struct stat *st, const struct cli_dirnote *unsafe)
{
	struct cli_scan *s = w->scan;
	struct cli_capfile f = { .nosuid = nosuid, .read_errno = read_errno, .unsafe_dirs = unsafe };
	if (st != NULL)
		f.have_stat = 1, f.uid = st->st_uid, f.mode = st->st_mode;
	if (len < 0) {
		f.caps.error = read_errno == EOVERFLOW ? "rootid outside this user namespace" :
			       "not shown by the kernel: revision 1 or malformed";
	} else {
		cli_fcaps_decode(val, (size_t)len, &f.caps);
		f.rawlen = (size_t)len < sizeof(f.raw) ? (size_t)len : sizeof(f.raw);
		memcpy(f.raw, val, f.rawlen);
	}
	if ((f.path = strdup(path)) == NULL)
		return out_of_memory(w);
	pthread_mutex_lock(&w->lock);
	struct cli_capfile *room = reserve(s->files, &s->cap, s->nfiles + 1, sizeof(f));
	int rc = room != NULL ? 0 : -1;
	if (rc == 0) {
		s->files = room;
		s->files[s->nfiles++] = f;
	}
	pthread_mutex_unlock(&w->lock);
	if (rc < 0) {
		free(f.path);
		return out_of_memory(w);
	}
	return 0;
}

/* What getxattr said about one file (@n, errno): a value, a value it will not show, none, or
 * a failure. @stat_file gives the file's owner and mode when it has a value. */
static int classify(struct walker *w, const char *path, const unsigned char *val, ssize_t n,
		    int nosuid, const struct cli_dirnote *unsafe,
		    int (*stat_file)(void *arg, struct stat *st), void *arg)
{
	int err = n < 0 ? errno : 0;
	if (n < 0 && (err == ENODATA || err == ENOTSUP))
		return 0;
	if (n < 0 && err != EINVAL && err != EOVERFLOW && err != ERANGE)
		return problem(w, path, "cannot read " CLI_XATTR_NAME, err, 1);
	if (err == ERANGE)	/* longer than any valid value: as good as malformed */
		err = EINVAL;
	struct stat st;
	int have = stat_file(arg, &st) == 0;
	if (!have && problem(w, path, "cannot examine", errno, 1) < 0)
		return -1;
	return record(w, path, val, n, err, nosuid, have ? &st : NULL, unsafe);
}

/* ---- one thread's walk ------------------------------------------------------------------- */

/* The worker's path becomes path[0..len) + "/" + name. Returns its length, 0 if out of memory. */
static size_t join(struct worker *k, size_t len, const char *name)
{
	size_t sep = len > 0 && k->path[len - 1] != '/';
	size_t nlen = strlen(name);
	char *room = reserve(k->path, &k->pathcap, len + sep + nlen + 1, 1);
	if (room == NULL)
		return out_of_memory(k->w), 0;
	k->path = room;
	if (sep)
		k->path[len] = '/';
	memcpy(k->path + len + sep, name, nlen + 1);
	return len + sep + nlen;
}

struct at_name {
	int dirfd;
	const char *name;
};

static int stat_at(void *arg, struct stat *st)
{
	const struct at_name *a = arg;
	return fstatat(a->dirfd, a->name, st, AT_SYMLINK_NOFOLLOW);
}

/* One syscall per file on the fast path: lgetxattr on the bare name, the thread's working
 * directory being the file's directory, so the kernel resolves one component (there is no
 * getxattrat before Linux 6.13). Without a working directory of our own, open the file
 * relative to its directory (O_NOFOLLOW: a symlink is not a capability file). */
static ssize_t read_fcaps(const struct worker *k, int dirfd, const char *name, unsigned char *val)
{
	if (k->in_dir)
		return lgetxattr(name, CLI_XATTR_NAME, val, XATTR_BUF);
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = fgetxattr(fd, CLI_XATTR_NAME, val, XATTR_BUF);
	int saved = errno;
	close(fd);
	errno = saved;
	return n;
}

static int check_file(struct worker *k, const struct frame *fr, const char *name)
{
	unsigned char val[XATTR_BUF];
	k->nregular++;
	ssize_t n = read_fcaps(k, fr->fd, name, val);
	if (n < 0 && (errno == ENODATA || errno == ENOTSUP))
		return 0;	/* the common case: no capabilities, no path to build */
	int saved = errno;
	size_t len = join(k, fr->pathlen, name);
	if (len == 0)
		return -1;
	struct at_name at = { fr->fd, name };
	errno = saved;
	int rc = classify(k->w, k->path, val, n, fr->nosuid, fr->unsafe, stat_at, &at);
	k->path[fr->pathlen] = '\0';
	return rc;
}

static int add_subdir(struct frame *fr, const char *name)
{
	size_t n = strlen(name) + 1;
	char *room = reserve(fr->subdirs, &fr->subcap, fr->sublen + n, 1);
	if (room == NULL)
		return -1;
	fr->subdirs = room;
	memcpy(fr->subdirs + fr->sublen, name, n);
	fr->sublen += n;
	return 0;
}

/* Filesystems that do not fill d_type: ask. */
static int entry_type(struct worker *k, const struct frame *fr, const char *name)
{
	struct stat st;
	if (fstatat(fr->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
	int saved = errno;
	if (join(k, fr->pathlen, name) == 0)
		return -1;
	int rc = problem(k->w, k->path, "cannot examine", saved, 1);
	k->path[fr->pathlen] = '\0';
	return rc < 0 ? -1 : DT_UNKNOWN;
}

static int handle_entry(struct worker *k, struct frame *fr, const struct dirent64 *d)
{
	const char *name = d->d_name;
	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
		return 0;
	int type = d->d_type;
	if (type == DT_UNKNOWN && (type = entry_type(k, fr, name)) < 0)
		return -1;
	if (type == DT_DIR)
		return add_subdir(fr, name) < 0 ? out_of_memory(k->w) : 0;
	if (type == DT_REG)
		return check_file(k, fr, name);
	return 0;	/* symlinks are not followed; devices, fifos, sockets hold no capabilities */
}

/* Read the top frame's directory: check its files, remember its subdirectories. */
static int read_dir(struct worker *k)
{
	struct frame *fr = &k->frames[k->nframes - 1];
	k->in_dir = k->own_cwd && fchdir(fr->fd) == 0;
	for (;;) {
		ssize_t n = getdents64(fr->fd, k->dents, DENTS_BUF);
		if (n < 0)	/* ENOENT: removed while open (fs/readdir.c, IS_DEADDIR) */
			return problem(k->w, k->path, "cannot read directory", errno, 1);
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *d = (const struct dirent64 *)(k->dents + off);
			off += d->d_reclen;
			if (handle_entry(k, fr, d) < 0)
				return -1;
		}
	}
}

/* A new device, or STATX_ATTR_MOUNT_ROOT (Linux 5.8, which also catches bind mounts of the
 * same filesystem with other flags), is a mount point: decide whether to enter it and whether
 * the kernel honours file capabilities there (nosuid mounts ignore them, fs/exec.c
 * bprm_fill_uid and security/commoncap.c get_file_caps both check MNT_NOSUID). Returns 1 to
 * enter, 0 to skip, -1 out of memory. */
static int enter_mount(struct worker *k, int fd, int is_root, int *nosuid)
{
	struct statfs sfs;
	const char *fsname;
	if (fstatfs(fd, &sfs) < 0)
		return problem(k->w, k->path, "cannot examine mount", errno, 0);
	if (!is_root && (k->w->flags & CLI_WALK_LOCAL_ONLY) &&
	    fstype_skipped((unsigned long)sfs.f_type, &fsname)) {
		k->nskipped++;
		return 0;
	}
	*nosuid = (sfs.f_flags & ST_NOSUID) != 0;
	return 1;
}

/* Keep at most w->fds descriptors besides the base directory's. */
static void make_room(struct worker *k)
{
	if (k->nframes > k->lo && k->nframes - k->lo >= (size_t)k->w->fds) {
		if (k->frames[k->lo].fd >= 0)
			close(k->frames[k->lo].fd);
		k->frames[k->lo++].fd = -1;
	}
}

/* Enter the directory @fd (its path in k->path[0..len)): push it and read it. The
 * descriptor is the frame's from now on, or closed. */
static int enter_dir(struct worker *k, int fd, size_t len, dev_t parent_dev, int nosuid,
		     int is_root, const struct cli_dirnote *unsafe)
{
	struct statx stx;
	int rc = 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT,
		  STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO, &stx) < 0) {
		rc = problem(k->w, k->path, "cannot examine directory", errno, 0);
		close(fd);
		return rc;
	}
	dev_t dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	if (is_root || dev != parent_dev ||
	    (stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
		int enter = enter_mount(k, fd, is_root, &nosuid);
		if (enter <= 0) {
			close(fd);
			return enter;
		}
	}
	unsafe = note_dir(k->w, k->path, stx.stx_uid, stx.stx_mode, unsafe, &rc);
	struct frame *room = rc < 0 ? NULL : reserve(k->frames, &k->framecap, k->nframes + 1,
						      sizeof(*k->frames));
	if (room == NULL) {
		close(fd);
		return out_of_memory(k->w);
	}
	k->frames = room;
	make_room(k);
	k->frames[k->nframes++] = (struct frame){ .fd = fd, .dev = dev, .ino = stx.stx_ino,
						   .pathlen = len, .nosuid = nosuid,
						   .unsafe = unsafe };
	k->ndirs++;
	return read_dir(k);
}

/* Look frames[i] up again by name from the nearest frame below it that is open. */
static int reopen_by_name(struct worker *k, size_t i)
{
	size_t a = i;
	while (a > 0 && k->frames[--a].fd < 0)
		;
	int fd = k->frames[a].fd;
	for (size_t m = a + 1; m <= i && fd >= 0; m++) {
		size_t start = k->frames[m - 1].pathlen;
		start += k->path[start] == '/';
		char *name = strndup(k->path + start, k->frames[m].pathlen - start);
		int next = name ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		struct stat st;
		if (next >= 0 && (fstat(next, &st) < 0 || st.st_dev != k->frames[m].dev ||
				  st.st_ino != k->frames[m].ino)) {
			close(next);
			next = -1;
		}
		free(name);
		if (fd != k->frames[a].fd)
			close(fd);
		fd = next;
	}
	return fd;
}

/* Back up from the top frame to its parent, reopening the parent if it was closed. */
static int pop(struct worker *k)
{
	struct frame *top = &k->frames[k->nframes - 1];
	if (k->nframes >= 2 && top[-1].fd < 0) {
		struct frame *up = &top[-1];
		struct stat st;
		int fd = top->fd >= 0 ? openat(top->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != up->dev || st.st_ino != up->ino)) {
			close(fd);	/* moved elsewhere while we were below it */
			fd = -1;
		}
		if (fd < 0)
			fd = reopen_by_name(k, k->nframes - 2);
		up->fd = fd;
		k->lo = k->nframes - 2;
		if (fd < 0 && up->subpos < up->sublen) {
			up->subpos = up->sublen;
			k->path[up->pathlen] = '\0';
			if (problem(k->w, k->path, "directory moved during the scan: the rest of it "
				    "was not read", ESTALE, 0) < 0)
				return -1;
		}
	}
	if (top->fd >= 0)
		close(top->fd);
	free(top->subdirs);
	k->nframes--;
	if (k->lo > k->nframes)
		k->lo = k->nframes;
	return 0;
}

/* Is a thread idle with nothing queued for it? */
static int wants_work(struct walker *w)
{
	return __atomic_load_n(&w->idle, __ATOMIC_RELAXED) >
	       __atomic_load_n(&w->queued, __ATOMIC_RELAXED);
}

static int enqueue(struct walker *w, int fd, const char *path, size_t len, dev_t parent_dev,
		   int nosuid, int is_root, const struct cli_dirnote *unsafe)
{
	struct item *q = malloc(sizeof(*q) + len + 1);
	if (q == NULL) {
		if (fd >= 0)
			close(fd);
		return out_of_memory(w);
	}
	*q = (struct item){ .fd = fd, .parent_dev = parent_dev, .nosuid = nosuid,
			    .is_root = is_root, .unsafe = unsafe };
	memcpy(q->path, path, len);
	q->path[len] = '\0';
	pthread_mutex_lock(&w->lock);
	q->next = w->head;
	w->head = q;
	__atomic_add_fetch(&w->queued, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* Enter the subdirectory @name of the top frame, or hand it to an idle thread. */
static int descend(struct worker *k, const char *name)
{
	struct frame fr = k->frames[k->nframes - 1];
	size_t len = join(k, fr.pathlen, name);
	if (len == 0)
		return -1;
	int fd = openat(fr.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return problem(k->w, k->path, "cannot open directory", errno, 1);
	if (wants_work(k->w))
		return enqueue(k->w, fd, k->path, len, fr.dev, fr.nosuid, 0, fr.unsafe);
	return enter_dir(k, fd, len, fr.dev, fr.nosuid, 0, fr.unsafe);
}

/* Walk the tree of one item, depth first. */
static int run_item(struct worker *k, struct item *q)
{
	size_t len = strlen(q->path);
	char *room = reserve(k->path, &k->pathcap, len + 1, 1);
	if (room == NULL) {
		close(q->fd);
		return out_of_memory(k->w);
	}
	k->path = room;
	memcpy(k->path, q->path, len + 1);
	k->lo = 1;
	/* A root named on the command line is followed if it is a symlink (/bin -> usr/bin). */
	if (q->fd < 0 && (q->fd = openat(k->w->cwd, q->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return problem(k->w, q->path, "cannot open directory", errno, 0);
	if (enter_dir(k, q->fd, len, q->parent_dev, q->nosuid, q->is_root, q->unsafe) < 0)
		return -1;
	while (k->nframes > 0) {
		struct frame *fr = &k->frames[k->nframes - 1];
		k->path[fr->pathlen] = '\0';
		int rc;
		if (__atomic_load_n(&k->w->failed, __ATOMIC_RELAXED))
			return -1;
		if (fr->subpos == fr->sublen) {
			rc = pop(k);
		} else {
			const char *name = fr->subdirs + fr->subpos;
			fr->subpos += strlen(name) + 1;
			rc = descend(k, name);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static struct item *next_item(struct walker *w)
{
	pthread_mutex_lock(&w->lock);
	__atomic_add_fetch(&w->idle, 1, __ATOMIC_RELAXED);
	while (w->head == NULL && w->busy > 0 && !w->failed)
		pthread_cond_wait(&w->cond, &w->lock);
	__atomic_sub_fetch(&w->idle, 1, __ATOMIC_RELAXED);
	struct item *q = w->failed ? NULL : w->head;
	if (q != NULL) {
		w->head = q->next;
		__atomic_sub_fetch(&w->queued, 1, __ATOMIC_RELAXED);
		w->busy++;
	} else {
		pthread_cond_broadcast(&w->cond);	/* nothing left: wake the others to exit */
	}
	pthread_mutex_unlock(&w->lock);
	return q;
}

static void item_done(struct walker *w)
{
	pthread_mutex_lock(&w->lock);
	w->busy--;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void worker_run(struct worker *k)
{
	struct item *q;
	while ((q = next_item(k->w)) != NULL) {
		if (run_item(k, q) < 0)
			out_of_memory(k->w);
		while (k->nframes > 0) {	/* left over only after a failure */
			struct frame *fr = &k->frames[--k->nframes];
			if (fr->fd >= 0)
				close(fr->fd);
			free(fr->subdirs);
		}
		free(q);
		item_done(k->w);
	}
}

static void *worker_main(void *arg)
{
	struct worker *k = arg;
	/* A working directory of this thread's own, to look files up by their bare names. */
	k->own_cwd = unshare(CLONE_FS) == 0;
	worker_run(k);
	return NULL;
}

/* ---- the roots --------------------------------------------------------------------------- */

struct root {
	char *path;	/* as given, trailing slashes removed */
	char *canon;	/* realpath, NULL if it does not resolve */
	int covered;	/* another root walks it */
};

/* Is @p a mount point that the walk would not enter? Mirrors enter_dir and enter_mount. */
static int skipped_mount(const char *p, dev_t parent, dev_t *dev, int flags)
{
	struct statx stx;
	struct statfs sfs;
	const char *fsname;
	if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0)
		return 1;	/* walk it on its own: the error shows there */
	*dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	if (*dev == parent && !(stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return 0;
	if (!(flags & CLI_WALK_LOCAL_ONLY))
		return 0;
	return statfs(p, &sfs) < 0 || fstype_skipped((unsigned long)sfs.f_type, &fsname);
}

/* Does the walk of @outer (canonical) reach @inner (canonical)? Equal, or below it with no
 * skipped mount in between. Both resolved, so no component is a symlink. */
static int reaches(const char *outer, const char *inner, int flags)
{
	size_t n = strlen(outer);
	if (strcmp(outer, "/") == 0)
		n = 0;
	else if (strncmp(inner, outer, n) != 0 || (inner[n] != '\0' && inner[n] != '/'))
		return 0;
	char *p = strdup(inner);
	struct stat st;
	int ok = p != NULL && stat(outer, &st) == 0;
	dev_t dev = ok ? st.st_dev : 0;
	for (size_t i = n + 1; ok && i <= strlen(inner); i++) {
		if (inner[i] != '/' && inner[i] != '\0')
			continue;
		p[i] = '\0';
		ok = !skipped_mount(p, dev, &dev, flags);
		p[i] = inner[i];
	}
	free(p);
	return ok;
}

/* The canonical directory above @canon ("/" for "/x"), in place. */
static char *parent_of(char *canon)
{
	char *slash = strrchr(canon, '/');
	slash[slash == canon] = '\0';
	return canon;
}

/* The unsafe directories from "/" down to @dir (canonical), chained nearest first. */
static const struct cli_dirnote *ancestors(struct walker *w, const char *dir, int *rc)
{
	const struct cli_dirnote *chain = NULL;
	size_t len = strlen(dir);
	char *p = strdup(dir);
	if (p == NULL) {
		*rc = out_of_memory(w);
		return NULL;
	}
	/* "/" first, then each prefix that ends a component: "/a", "/a/b". */
	for (size_t i = 1; *rc == 0 && i <= len; i++) {
		if (i > 1 && dir[i] != '/' && dir[i] != '\0')
			continue;
		const char *prefix = i == 1 ? "/" : p;
		struct stat st;
		p[i] = '\0';
		if (stat(prefix, &st) < 0)
			*rc = problem(w, prefix, "cannot examine", errno, 0);
		else
			chain = note_dir(w, prefix, st.st_uid, st.st_mode, chain, rc);
		p[i] = dir[i];
	}
	free(p);
	return chain;
}

static int stat_path(void *arg, struct stat *st)
{
	return stat(arg, st);
}

/* A root that is a regular file (a symlink to one included: the user named it). */
static int walk_root_file(struct walker *w, const struct root *r, size_t *nregular)
{
	unsigned char val[XATTR_BUF];
	struct statvfs sv;
	int rc = 0, nosuid = statvfs(r->path, &sv) == 0 && (sv.f_flag & ST_NOSUID);
	char *dir = strdup(r->canon);
	if (dir == NULL)
		return out_of_memory(w);
	const struct cli_dirnote *unsafe = ancestors(w, parent_of(dir), &rc);
	free(dir);
	if (rc < 0)
		return -1;
	(*nregular)++;
	ssize_t n = getxattr(r->path, CLI_XATTR_NAME, val, XATTR_BUF);
	return classify(w, r->path, val, n, nosuid, unsafe, stat_path, r->path);
}

static int queue_root(struct walker *w, const struct root *r, size_t *nregular)
{
	struct stat st;
	int rc = 0;
	if (stat(r->path, &st) < 0)
		return problem(w, r->path, "cannot examine", errno, 0);
	if (S_ISREG(st.st_mode))
		return walk_root_file(w, r, nregular);
	if (!S_ISDIR(st.st_mode))
		return 0;	/* devices, fifos, sockets cannot carry file capabilities that matter */
	char *parent = strdup(r->canon);
	if (parent == NULL)
		return out_of_memory(w);
	/* The root directory itself is judged when it is entered, like any other. */
	const struct cli_dirnote *unsafe = strcmp(r->canon, "/") ?
					   ancestors(w, parent_of(parent), &rc) : NULL;
	free(parent);
	if (rc < 0)
		return -1;
	/* Opened by the worker that takes it: a descriptor per root would not be bounded. */
	return enqueue(w, -1, r->path, strlen(r->path), 0, 0, 1, unsafe);
}

/* Resolve every root; mark those another root's walk reaches (the first of equals stays). */
static int prepare_roots(struct walker *w, struct root *rs, char **roots, int nroots)
{
	for (int i = 0; i < nroots; i++) {
		size_t len = strlen(roots[i]);
		while (len > 1 && roots[i][len - 1] == '/')
			len--;
		if ((rs[i].path = strndup(roots[i], len)) == NULL)
			return out_of_memory(w);
		if ((rs[i].canon = realpath(rs[i].path, NULL)) == NULL &&
		    problem(w, rs[i].path, "cannot examine", errno, 0) < 0)
			return -1;
	}
	for (int i = 0; i < nroots; i++)
		for (int j = 0; j < nroots && rs[i].canon && !rs[i].covered; j++)
			if (j != i && rs[j].canon && (j < i || strcmp(rs[i].canon, rs[j].canon)) &&
			    reaches(rs[j].canon, rs[i].canon, w->flags))
				rs[i].covered = 1;
	return 0;
}

/* ---- the whole scan ---------------------------------------------------------------------- */

/* One thread per CPU this process may run on (a cpuset or taskset may allow fewer than are
 * online). */
static int default_threads(void)
{
	cpu_set_t set;
	long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) :
		 sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}

/* Each thread holds its base directory, up to w->fds more on its stack, two while it steps
 * (openat, ".."), and one may be queued for it: keep the total under RLIMIT_NOFILE with a
 * reserve for standard streams, the policy and libc. Fewer threads rather than none spare. */
static void fit_descriptors(struct walker *w, int *nthreads)
{
	struct rlimit rl;
	long budget = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
		      (long)rl.rlim_cur - 16 : 1L << 20;
	if (budget / *nthreads < 5)
		*nthreads = budget / 5 > 1 ? (int)(budget / 5) : 1;
	long spare = budget / *nthreads - 4;
	w->fds = spare < 1 ? 1 : spare > CLI_WALK_FDS_PER_THREAD ? CLI_WALK_FDS_PER_THREAD :
		 (int)spare;
}

/* Every directory is read by worker threads: they change their own working directory, never
 * the caller's. If no thread can be started, the caller walks, by descriptors only. */
static void run_threads(struct worker *ks, int nthreads)
{
	pthread_t *tid = calloc(nthreads, sizeof(*tid));
	int started = 0;
	for (int i = 0; tid != NULL && i < nthreads; i++)
		if (pthread_create(&tid[started], NULL, worker_main, &ks[started]) == 0)
			started++;
	if (started == 0)
		worker_run(&ks[0]);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
}

/* A worker's counts go to the scan, then its memory is released (not a free_ function: those
 * only release memory, and tests/mutations/generate.py never removes a call of one). */
static void retire_worker(struct worker *k, struct cli_scan *scan)
{
	scan->nregular += k->nregular;
	scan->ndirs += k->ndirs;
	scan->nskipped_mounts += k->nskipped;
	free(k->dents);
	free(k->path);
	free(k->frames);
}

static int walk_all(struct walker *w, struct root *rs, int nroots, int nthreads)
{
	struct worker *ks = calloc(nthreads, sizeof(*ks));
	int rc = 0;
	if (ks == NULL)
		return out_of_memory(w);
	for (int i = 0; i < nthreads; i++) {
		ks[i].w = w;
		if ((ks[i].dents = malloc(DENTS_BUF)) == NULL)
			rc = out_of_memory(w);
	}
	for (int i = 0; i < nroots && rc == 0; i++)
		if (rs[i].canon != NULL && !rs[i].covered)
			rc = queue_root(w, &rs[i], &ks[0].nregular);
	if (rc == 0)
		run_threads(ks, nthreads);
	while (w->head != NULL) {	/* left over only after a failure */
		struct item *q = w->head;
		w->head = q->next;
		if (q->fd >= 0)
			close(q->fd);
		free(q);
	}
	for (int i = 0; i < nthreads; i++)
		retire_worker(&ks[i], w->scan);
	free(ks);
	return w->failed ? -1 : 0;
}

static int by_file_path(const void *a, const void *b)
{
	return strcmp(((const struct cli_capfile *)a)->path, ((const struct cli_capfile *)b)->path);
}

static int by_problem_path(const void *a, const void *b)
{
	const struct cli_problem *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x->what && y->what ? strcmp(x->what, y->what) : 0);
}

/* One record per path: a root the walk cannot examine may also be an entry of another root's
 * walk that cannot be opened (overlapping roots), and each path is reported once. @list is
 * sorted by path; the first problem of each path stays. */
static void unique_problems(struct cli_problem *list, size_t *n)
{
	size_t kept = 0;
	for (size_t i = 0; i < *n; i++) {
		if (kept > 0 && strcmp(list[kept - 1].path, list[i].path) == 0) {
			free(list[i].path);
			continue;
		}
		list[kept++] = list[i];
	}
	*n = kept;
}

int cli_scan_roots(struct cli_scan *scan, char **roots, int nroots, int flags)
{
	struct walker w = { .scan = scan, .flags = flags };
	int nthreads = scan->threads >= 1 ? scan->threads : default_threads();
	fit_descriptors(&w, &nthreads);
	/* Workers change their own working directory: relative roots are opened from this one.
	 * O_PATH needs no permission; if even that fails, realpath failed on them already. */
	w.cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w.cwd < 0)
		w.cwd = AT_FDCWD;
	struct root *rs = calloc(nroots > 0 ? (size_t)nroots : 1, sizeof(*rs));
	int rc = -1;
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	if (rs != NULL && prepare_roots(&w, rs, roots, nroots) == 0)
		rc = walk_all(&w, rs, nroots, nthreads);
	for (int i = 0; rs != NULL && i < nroots; i++) {
		free(rs[i].path);
		free(rs[i].canon);
	}
	free(rs);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	if (w.cwd >= 0)
		close(w.cwd);
	if (scan->nfiles > 1)
		qsort(scan->files, scan->nfiles, sizeof(*scan->files), by_file_path);
	if (scan->nerrors > 1) {
		qsort(scan->errors, scan->nerrors, sizeof(*scan->errors), by_problem_path);
		unique_problems(scan->errors, &scan->nerrors);
	}
	if (scan->nvanished > 1) {
		qsort(scan->vanished, scan->nvanished, sizeof(*scan->vanished), by_problem_path);
		unique_problems(scan->vanished, &scan->nvanished);
	}
	return rc < 0 ? -1 : (int)(scan->nerrors > INT_MAX ? INT_MAX : scan->nerrors);
}

static void free_problems(struct cli_problem *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i].path);
	free(list);
}

void cli_scan_free(struct cli_scan *scan)
{
	for (size_t i = 0; i < scan->nfiles; i++)
		free(scan->files[i].path);
	free(scan->files);
	free_problems(scan->errors, scan->nerrors);
	free_problems(scan->vanished, scan->nvanished);
	for (size_t i = 0; i < scan->ndirnotes; i++) {
		free(scan->dirnotes[i]->path);
		free(scan->dirnotes[i]);
	}
	free(scan->dirnotes);
	*scan = (struct cli_scan){ .threads = scan->threads };
}
