/*
 * cli_walk.c - see cli_walk.h.
 *
 * Directories go through a shared queue served by up to two threads (the machines have two
 * cores). A directory is opened by its full path, so the walk holds one descriptor per thread
 * whatever the depth; only below PATH_MAX does that stop working, and there the walk goes on
 * relative to the parent descriptor (openat, fgetxattr) instead of skipping the subtree.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli_out.h"
#include "cli_walk.h"

/* Bigger than any valid value so that an oversized one is seen as such, not as ERANGE. */
#define XATTR_BUF 64
#define DENTS_BUF (64 * 1024)

struct dirent64_raw {
	ino64_t d_ino;
	off64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct qitem {
	struct qitem *next;
	dev_t dev;
	int nosuid;
	int is_root;	/* a PATH argument: always entered, whatever its filesystem */
	char path[];
};

struct walker {
	struct cli_scan *scan;
	int flags;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct qitem *head;
	int busy;		/* workers holding an item */
	int failed;		/* malloc failed: stop */
};

struct worker {
	struct walker *w;
	char *dents;
	int own_cwd;	/* this thread has its own working directory (unshare CLONE_FS) */
	int in_dir;	/* ... and it is the directory being read: names are relative to it */
	size_t nregular, ndirs, nskipped, nerrors;
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

int cli_fstype_skipped(unsigned long type, const char **name)
{
	for (size_t i = 0; i < sizeof(skipped_fs) / sizeof(skipped_fs[0]); i++) {
		if (skipped_fs[i].type == type) {
			*name = skipped_fs[i].name;
			return 1;
		}
	}
	return 0;
}

static void report(struct worker *k, const char *path, const char *what, int err)
{
	k->nerrors++;
	if (k->w->flags & CLI_WALK_QUIET)
		return;
	flockfile(stderr);
	fputs("capdelegate: ", stderr);
	cli_text_escape(stderr, path);
	fprintf(stderr, ": %s: %s; skipped\n", what, strerror(err));
	funlockfile(stderr);
}

/* @len < 0: the kernel refused to show the value, errno says why (see cli_capfile). */
static int record(struct worker *k, const char *path, const unsigned char *val, ssize_t len,
		  int nosuid)
{
	int read_errno = len < 0 ? errno : 0;
	struct cli_scan *s = k->w->scan;
	int ret = 0;
	pthread_mutex_lock(&k->w->lock);
	if (s->nfiles == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		struct cli_capfile *nf = realloc(s->files, ncap * sizeof(*nf));
		if (nf == NULL) {
			ret = -1;
			goto out;
		}
		s->files = nf;
		s->cap = ncap;
	}
	struct cli_capfile *f = &s->files[s->nfiles];
	*f = (struct cli_capfile){ .nosuid = nosuid, .read_errno = read_errno };
	if ((f->path = strdup(path)) == NULL) {
		ret = -1;
		goto out;
	}
	if (len < 0) {
		f->caps.error = read_errno == EOVERFLOW ? "rootid outside this user namespace" :
				"not shown by the kernel: revision 1 or malformed";
	} else {
		cli_fcaps_decode(val, (size_t)len, &f->caps);
		f->rawlen = (size_t)len < sizeof(f->raw) ? (size_t)len : sizeof(f->raw);
		memcpy(f->raw, val, f->rawlen);
	}
	s->nfiles++;
out:
	pthread_mutex_unlock(&k->w->lock);
	return ret;
}

/* One syscall per file on the fast path: lgetxattr on the bare name, the thread's working
 * directory being the file's directory, so the kernel resolves one component (there is no
 * getxattrat before Linux 6.13). Without a working directory of our own, the full path.
 * Beyond PATH_MAX, open the file relative to its directory (O_NOFOLLOW: a symlink is not a
 * capability file). */
static ssize_t read_fcaps(const struct worker *k, int dirfd, const char *name, const char *path,
			  size_t pathlen, unsigned char *val)
{
	if (k->in_dir)
		return lgetxattr(name, CLI_XATTR_NAME, val, XATTR_BUF);
	if (pathlen < PATH_MAX)
		return lgetxattr(path, CLI_XATTR_NAME, val, XATTR_BUF);
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = fgetxattr(fd, CLI_XATTR_NAME, val, XATTR_BUF);
	int saved = errno;
	close(fd);
	errno = saved;
	return n;
}

/* What getxattr said about one file: a value, a value it will not show, or none. */
static int classify(struct worker *k, const char *path, const unsigned char *val, ssize_t n,
		    int nosuid)
{
	if (n >= 0)
		return record(k, path, val, n, nosuid);
	if (errno == EINVAL || errno == EOVERFLOW || errno == ERANGE) {
		if (errno == ERANGE)	/* longer than any valid value: as good as malformed */
			errno = EINVAL;
		return record(k, path, val, -1, nosuid);
	}
	if (errno != ENODATA && errno != ENOTSUP && errno != ENOENT)
		report(k, path, "cannot read " CLI_XATTR_NAME, errno);
	return 0;
}

static int check_file(struct worker *k, int dirfd, const char *name, const char *path,
		      size_t pathlen, int nosuid)
{
	unsigned char val[XATTR_BUF];
	k->nregular++;
	ssize_t n = read_fcaps(k, dirfd, name, path, pathlen, val);
	return classify(k, path, val, n, nosuid);
}

static int enqueue(struct walker *w, const char *path, size_t len, dev_t dev, int nosuid)
{
	struct qitem *q = malloc(sizeof(*q) + len + 1);
	if (q == NULL)
		return -1;
	q->dev = dev;
	q->nosuid = nosuid;
	q->is_root = 0;
	memcpy(q->path, path, len + 1);
	pthread_mutex_lock(&w->lock);
	q->next = w->head;
	w->head = q;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* A new device below us is a mount point: decide whether to enter it and whether the kernel
 * honours file capabilities there (nosuid mounts ignore them, fs/exec.c bprm_fill_uid and
 * security/commoncap.c get_file_caps both check MNT_NOSUID). */
static int enter_mount(struct worker *k, int fd, const char *path, int is_root, int *nosuid)
{
	struct statfs sfs;
	const char *fsname;
	if (fstatfs(fd, &sfs) < 0) {
		report(k, path, "statfs", errno);
		return 0;
	}
	if (!is_root && (k->w->flags & CLI_WALK_LOCAL_ONLY) &&
	    cli_fstype_skipped((unsigned long)sfs.f_type, &fsname)) {
		k->nskipped++;
		return 0;
	}
	*nosuid = (sfs.f_flags & ST_NOSUID) != 0;
	return 1;
}

static int process_dir(struct worker *k, int fd, char **buf, size_t *bufcap, size_t len,
		       dev_t dev, int nosuid, int is_root);

/* Is the directory @fd the root of a mount? (*mount is left alone otherwise.) A new
 * device says so, and so does STATX_ATTR_MOUNT_ROOT (Linux 5.8), which also catches bind
 * mounts of the same filesystem with other flags (nosuid). Same cost as the fstat it replaces. */
static int dir_is_mount(int fd, dev_t parent, dev_t *here, int *mount)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_TYPE, &stx) < 0)
		return -1;
	*here = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	if (*here != parent)
		*mount = 1;
	if (stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)
		*mount = 1;
	return 0;
}

static int grow(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	char *nb = realloc(*buf, ncap);
	if (nb == NULL)
		return -1;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/* A subdirectory: queue it by path while its path is usable, else descend through the
 * parent's descriptor right here. */
static int handle_subdir(struct worker *k, int dirfd, const char *name, char **buf,
			 size_t *bufcap, size_t len, dev_t dev, int nosuid)
{
	if (len < PATH_MAX)
		return enqueue(k->w, *buf, len, dev, nosuid);
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		report(k, *buf, "cannot open directory", errno);
		return 0;
	}
	int ret = process_dir(k, fd, buf, bufcap, len, dev, nosuid, 0);
	close(fd);
	/* The child moved our working directory: come back, or use paths from now on. */
	k->in_dir = k->own_cwd && fchdir(dirfd) == 0;
	return ret;
}

static int handle_entry(struct worker *k, int fd, struct dirent64_raw *d, char **buf,
			size_t *bufcap, size_t len, dev_t dev, int nosuid)
{
	const char *name = d->d_name;
	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
		return 0;
	size_t nlen = strlen(name);
	size_t sep = len > 0 && (*buf)[len - 1] != '/';
	if (grow(buf, bufcap, len + sep + nlen + 1) < 0)
		return -1;
	if (sep)
		(*buf)[len] = '/';
	memcpy(*buf + len + sep, name, nlen + 1);
	size_t plen = len + sep + nlen;
	unsigned char type = d->d_type;
	if (type == DT_UNKNOWN) {	/* some filesystems do not fill d_type */
		struct stat st;
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
	}
	int ret = 0;
	if (type == DT_DIR)
		ret = handle_subdir(k, fd, name, buf, bufcap, plen, dev, nosuid);
	else if (type == DT_REG)
		ret = check_file(k, fd, name, *buf, plen, nosuid);
	(*buf)[len] = '\0';
	return ret;
}

/* Read one directory, whose path is (*buf)[0..len). */
static int process_dir(struct worker *k, int fd, char **buf, size_t *bufcap, size_t len,
		       dev_t dev, int nosuid, int is_root)
{
	dev_t here;
	int mount = is_root;	/* a walk root is looked at like a mount point */
	if (dir_is_mount(fd, dev, &here, &mount) < 0) {
		report(k, *buf, "statx", errno);
		return 0;
	}
	if (mount && !enter_mount(k, fd, *buf, is_root, &nosuid))
		return 0;
	k->ndirs++;
	k->in_dir = k->own_cwd && fchdir(fd) == 0;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, k->dents, DENTS_BUF);
		if (n < 0) {
			report(k, *buf, "cannot read directory", errno);
			return 0;
		}
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			struct dirent64_raw *d = (struct dirent64_raw *)(k->dents + off);
			off += d->d_reclen;
			if (handle_entry(k, fd, d, buf, bufcap, len, here, nosuid) < 0)
				return -1;
		}
	}
}

static int run_item(struct worker *k, struct qitem *q, char **buf, size_t *bufcap)
{
	size_t len = strlen(q->path);
	if (grow(buf, bufcap, len + 1) < 0)
		return -1;
	memcpy(*buf, q->path, len + 1);
	/* A root named on the command line is followed if it is a symlink (/bin -> usr/bin). */
	int fd = open(q->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (q->is_root ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		if (errno != ENOENT)	/* removed while we walked: nothing to audit */
			report(k, q->path, "cannot open directory", errno);
		return 0;
	}
	int ret = process_dir(k, fd, buf, bufcap, len, q->dev, q->nosuid, q->is_root);
	close(fd);
	return ret;
}

static struct qitem *next_item(struct walker *w)
{
	pthread_mutex_lock(&w->lock);
	while (w->head == NULL && w->busy > 0 && !w->failed)
		pthread_cond_wait(&w->cond, &w->lock);
	struct qitem *q = w->failed ? NULL : w->head;
	if (q != NULL) {
		w->head = q->next;
		w->busy++;
	} else {
		pthread_cond_broadcast(&w->cond);	/* nothing left: wake the others to exit */
	}
	pthread_mutex_unlock(&w->lock);
	return q;
}

static void item_done(struct walker *w, int failed)
{
	pthread_mutex_lock(&w->lock);
	w->busy--;
	if (failed)
		w->failed = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void *worker_main(void *arg)
{
	struct worker *k = arg;
	/* A working directory of this thread's own, to look files up by their bare names. */
	k->own_cwd = unshare(CLONE_FS) == 0;
	char *buf = NULL;
	size_t bufcap = 0;
	struct qitem *q;
	while ((q = next_item(k->w)) != NULL) {
		int ret = run_item(k, q, &buf, &bufcap);
		free(q);
		item_done(k->w, ret < 0);
	}
	free(buf);
	return NULL;
}

static int walk_root_file(struct worker *k, const char *root)
{
	unsigned char val[XATTR_BUF];
	int nosuid = 0;
	struct statvfs sv;
	if (statvfs(root, &sv) == 0)
		nosuid = (sv.f_flag & ST_NOSUID) != 0;
	k->nregular++;
	/* A root named on the command line is followed if it is a symlink: the user asked for it. */
	ssize_t n = getxattr(root, CLI_XATTR_NAME, val, XATTR_BUF);
	return classify(k, root, val, n, nosuid);
}

/* Every directory, the root too, is read by worker threads: they change their own working
 * directory, never the caller's. */
static int walk_tree(struct walker *w, struct worker *ks, int nthreads, const char *root)
{
	pthread_t tid[2];
	int started = 0;
	if (enqueue(w, root, strlen(root), 0, 0) < 0)
		return -1;
	w->head->is_root = 1;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, worker_main, &ks[i]) == 0)
			started++;
	if (started == 0) {
		report(&ks[0], root, "cannot start a thread", EAGAIN);
		return -1;
	}
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return w->failed ? -1 : 0;
}

int cli_walk(struct cli_scan *scan, const char *root, int flags)
{
	struct walker w = { .scan = scan, .flags = flags };
	struct worker ks[2] = { { .w = &w }, { .w = &w } };
	int nthreads = scan->threads == 1 ? 1 : 2;
	struct stat st;
	int ret = -1;
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	for (int i = 0; i < nthreads; i++)
		if ((ks[i].dents = malloc(DENTS_BUF)) == NULL)
			goto out;
	if (stat(root, &st) < 0)
		report(&ks[0], root, "cannot examine", errno);
	else if (S_ISDIR(st.st_mode))
		ret = walk_tree(&w, ks, nthreads, root);
	else if (S_ISREG(st.st_mode))
		ret = walk_root_file(&ks[0], root);
	else
		ret = 0;	/* devices, fifos, sockets cannot carry file capabilities that matter */
out:
	while (w.head != NULL) {	/* left over only after a failure */
		struct qitem *q = w.head;
		w.head = q->next;
		free(q);
	}
	for (int i = 0; i < 2; i++) {
		scan->nregular += ks[i].nregular;
		scan->ndirs += ks[i].ndirs;
		scan->nskipped_mounts += ks[i].nskipped;
		scan->nerrors += ks[i].nerrors;
		free(ks[i].dents);
	}
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return ret;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct cli_capfile *)a)->path, ((const struct cli_capfile *)b)->path);
}

void cli_scan_sort(struct cli_scan *scan)
{
	if (scan->nfiles > 1)
		qsort(scan->files, scan->nfiles, sizeof(scan->files[0]), by_path);
}

void cli_scan_free(struct cli_scan *scan)
{
	for (size_t i = 0; i < scan->nfiles; i++)
		free(scan->files[i].path);
	free(scan->files);
	scan->files = NULL;
	scan->nfiles = scan->cap = 0;
}
