/*
 * test_load.c - the policy loader against a filesystem that fails or changes under it (issue
 * 18, part 2), each case from a promise of capdelegate.conf(5):
 *  - a symbolic link to a directory in the middle of the path: the directories judged are
 *    those of the resolved path ("any directory on its resolved path"); a directory replaced
 *    by a link once the path was resolved is refused, its target never judged (openat defined
 *    here makes the swap as the walk reaches it);
 *  - every pseudo filesystem the page and cd_safe.c name, FUSE included: real mounts where
 *    this machine has them (procfs, sysfs, cgroup, cgroup2), and all of them through the
 *    statfs type (fstatfs is defined here: the core, linked into this program, calls it);
 *  - readdir failing after it returned the first drop-in (readdir defined here too);
 *  - a drop-in listed, then gone when it is opened (openat defined here), with a "none" line
 *    in it: never a policy read without it;
 *  - a drop-in that is a link to nothing is named as such, and not by the target
 *    of a longer link that replaced it meanwhile (readlinkat defined here);
 *  - one whole version: a file that changes while it is read (read defined here
 *    appends to it once the reader reached its end), a main file renamed over while a drop-in
 *    is opened, a policy changed just now, a policy that never stops changing, a file grown
 *    between its fstat and its read (read defined here), an empty file with old times that
 *    its writer fills while the loader waits for it to settle (nanosleep defined here), a
 *    change stamped while the kernel's coarse clock lagged (clock_gettime defined here: the
 *    clock caught up), a first part whose writer set an old mtime (cp -p, touch -r), a settle
 *    wait cut short by a signal (nanosleep says EINTR once);
 *  - a missing or refused drop-in directory closes none of the caller's descriptors.
 * Runs unprivileged, like test_policy.c (the required owner is the test's own uid).
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/capability.h>

#include "cd_policy.h"
#include "test_dir.h"
#include "test_log.h"

#define BIT(c) ((cd_capmask)1 << (c))

static char tmpdir[PATH_MAX];
/* ---- the interposed calls ---------------------------------------------------------------- */

static int readdir_fail_after_dropin;	/* readdir fails (EIO) once it returned a NAME.conf */
static int readdir_failing;
static const char *open_enoent;		/* openat of this name says ENOENT (listed, then gone) */
static const char *open_unlinks;	/* this name is unlinked just before it is opened, once */
static const char *open_renames[3];	/* opening [0] first renames [1] over [2], once */
static const char *open_dir_linked[3];	/* opening the directory [0] first moves [1] away and
					 * puts a link to [2] at its name, once */
static const char *append_text;		/* appended to a file named *append_suffix when a read */
static const char *append_suffix;	/* reached its end, append_times times (-1: always) */
static int append_times;
static unsigned long fake_fs_type;	/* nonzero: fstatfs of a file named *fake_fs_suffix says it */
static const char *fake_fs_suffix;
static int fake_fs_errno;	/* nonzero: fstatfs of that file fails with it instead */
static const char *grow_text;		/* appended to a file named *grow_suffix before a read of it */
static const char *grow_suffix;		/* gets anything, once (the file grew since its fstat) */
static const char *readlink_longer;	/* readlinkat of this name answers as a longer link would */
static const char *settle_fill_text;	/* written into settle_fill_path when the loader first */
static const char *settle_fill_path;	/* waits for the policy to settle (nanosleep) */
static int settle_waits;	/* the loader's nanosleep calls */
static int settle_eintr_once;	/* the next nanosleep is cut short by a signal (EINTR) at once */
static long coarse_ahead_ms;	/* CLOCK_REALTIME_COARSE reads this much later than it is */
static const char *fstat_eio_suffix;	/* fstat of this file fails (EIO) once it has been read */
static int fstat_eio_armed;
static const char *open_fstat_eio_suffix;	/* fstat of this file fails (EIO), before any read */
static const char *read_eio_suffix;	/* read of this file fails (EIO) */
static int strdup_fail_at;	/* nonzero: the Nth strdup from now fails with ENOMEM */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

struct dirent *readdir(DIR *d)
{
	static struct dirent *(*real)(DIR *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "readdir");
	if (readdir_failing) {
		errno = EIO;
		return NULL;
	}
	struct dirent *e = real(d);
	if (e != NULL && readdir_fail_after_dropin && ends_with(e->d_name, ".conf"))
		readdir_failing = 1;
	return e;
}

int openat(int dfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "openat");
	if (open_enoent != NULL && strcmp(path, open_enoent) == 0) {
		errno = ENOENT;
		return -1;
	}
	if (open_renames[0] != NULL && strcmp(path, open_renames[0]) == 0) {
		open_renames[0] = NULL;
		if (rename(open_renames[1], open_renames[2]) < 0)
			abort();
	}
	if (open_dir_linked[0] != NULL && (flags & O_DIRECTORY) && strcmp(path, open_dir_linked[0]) == 0) {
		char *away;
		open_dir_linked[0] = NULL;
		if (asprintf(&away, "%s.away", open_dir_linked[1]) < 0 || rename(open_dir_linked[1], away) < 0 ||
		    symlink(open_dir_linked[2], open_dir_linked[1]) < 0)
			abort();
		free(away);
	}
	if (open_unlinks != NULL && strcmp(path, open_unlinks) == 0) {
		open_unlinks = NULL;
		if (unlinkat(dfd, path, 0) < 0)
			abort();	/* the case would prove nothing */
	}
	return real(dfd, path, flags, mode);
}

/* The path of @fd ends with @suffix. */
static int fd_named(int fd, const char *suffix)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return ends_with(path, suffix);
}

/* Append @text to the file open as @fd, through a descriptor of its own. */
static void append_to(int fd, const char *text)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	int w = open(link, O_WRONLY | O_APPEND);
	if (w < 0 || write(w, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(w);
}

ssize_t read(int fd, void *buf, size_t size)
{
	static ssize_t (*real)(int, void *, size_t);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "read");
	if (grow_text != NULL && fd_named(fd, grow_suffix)) {
		append_to(fd, grow_text);
		grow_text = NULL;
	}
	if (read_eio_suffix != NULL && fd_named(fd, read_eio_suffix)) {
		errno = EIO;
		return -1;
	}
	ssize_t n = real(fd, buf, size);
	if (fstat_eio_suffix != NULL && fd_named(fd, fstat_eio_suffix))
		fstat_eio_armed = 1;
	if (n == 0 && append_times != 0 && fd_named(fd, append_suffix)) {
		append_to(fd, append_text);
		if (append_times > 0)
			append_times--;
	}
	return n;
}

/* The loader's second look at a file it has read (is it what was opened?) failing: EIO. */
int fstat(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fstat");
	if (open_fstat_eio_suffix != NULL && fd_named(fd, open_fstat_eio_suffix)) {
		errno = EIO;
		return -1;
	}
	if (fstat_eio_armed && fd_named(fd, fstat_eio_suffix)) {
		fstat_eio_armed = 0;
		errno = EIO;
		return -1;
	}
	return real(fd, st);
}

int fstatfs(int fd, struct statfs *buf)
{
	static int (*real)(int, struct statfs *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fstatfs");
	if (fake_fs_errno && fd_named(fd, fake_fs_suffix)) {
		errno = fake_fs_errno;
		return -1;
	}
	int rc = real(fd, buf);
	if (rc == 0 && fake_fs_type && fd_named(fd, fake_fs_suffix))
		buf->f_type = (typeof(buf->f_type))fake_fs_type;
	return rc;
}

/* The link replaced by a longer one since the loader's fstatat: as much of it as fits. */
ssize_t readlinkat(int dfd, const char *path, char *buf, size_t size)
{
	static ssize_t (*real)(int, const char *, char *, size_t);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "readlinkat");
	ssize_t n = real(dfd, path, buf, size);
	if (n >= 0 && readlink_longer != NULL && strcmp(path, readlink_longer) == 0)
		for (const char *more = "-and-a-longer-name"; (size_t)n < size && *more != '\0'; more++)
			buf[n++] = *more;
	return n;
}

/* The loader's settle wait (cd_snapshot.c): the writer finishes its file meanwhile. */
int nanosleep(const struct timespec *want, struct timespec *left)
{
	settle_waits++;
	if (settle_eintr_once) {	/* a signal came before any of the time went by */
		settle_eintr_once = 0;
		if (left != NULL)
			*left = *want;
		errno = EINTR;
		return -1;
	}
	if (settle_fill_text != NULL) {
		int fd = open(settle_fill_path, O_WRONLY | O_APPEND);
		if (fd < 0 || write(fd, settle_fill_text, strlen(settle_fill_text)) !=
			      (ssize_t)strlen(settle_fill_text))
			abort();
		close(fd);
		settle_fill_text = NULL;
	}
	return clock_nanosleep(CLOCK_MONOTONIC, 0, want, left) == 0 ? 0 : -1;
}

/* The kernel's coarse clock, caught up after a stall: ctime was stamped while the clock lagged
 * (under load the tick that advances it comes late), so now it reads later than the stamp by
 * more than the time really gone by (clock_gettime defined here; other clocks untouched). */
int clock_gettime(clockid_t id, struct timespec *t)
{
	static int (*real)(clockid_t, struct timespec *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real(id, t);
	if (rc == 0 && id == CLOCK_REALTIME_COARSE && coarse_ahead_ms > 0) {
		long long ns = t->tv_nsec + coarse_ahead_ms * 1000000LL;
		t->tv_sec += ns / 1000000000LL;
		t->tv_nsec = ns % 1000000000LL;
	}
	return rc;
}

char *strdup(const char *s)
{
	if (strdup_fail_at > 0 && --strdup_fail_at == 0) {
		errno = ENOMEM;
		return NULL;
	}
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	return d != NULL ? memcpy(d, s, n) : NULL;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	forget_logged();
	readdir_fail_after_dropin = readdir_failing = 0;
	open_enoent = open_unlinks = fake_fs_suffix = append_text = append_suffix = NULL;
	grow_text = grow_suffix = settle_fill_text = settle_fill_path = readlink_longer = NULL;
	fstat_eio_suffix = open_fstat_eio_suffix = read_eio_suffix = NULL;
	fstat_eio_armed = 0;
	coarse_ahead_ms = 0;
	settle_waits = settle_eintr_once = 0;
	open_renames[0] = NULL;
	open_dir_linked[0] = NULL;
	fake_fs_type = 0;
	append_times = 0;
	strdup_fail_at = 0;
	return 0;
}

static void expect_logged(const char *text)
{
	if (strstr(logged(), text) == NULL)
		fail_msg("expected in the log: %s\nlog:\n%s", text, logged());
}

static char *in_tmp(const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", tmpdir, name) > 0);
	return p;
}

static void put(const char *path, const char *text)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, 0644), 0);
	close(fd);
}

static char *fresh_dir(const char *name, mode_t mode)
{
	char *dir = in_tmp(name), *cmd;
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, mode), 0);
	return dir;
}

static enum cd_status load(struct cd_policy *pol, const char *path, const char *confdir)
{
	struct cd_load_opts o = { .owner = getuid(), .confdir = confdir };
	return cd_policy_load(pol, path, &o, &test_log);
}

static cd_capmask grant_of(const struct cd_policy *pol, const char *name, const char **groups)
{
	struct cd_user u = { .name = (char *)name, .groups = (char **)groups, .groups_loaded = 1 };
	while (groups != NULL && groups[u.ngroups] != NULL)
		u.ngroups++;
	struct cd_grant g;
	assert_int_equal(cd_resolve(pol, &u, &g), 0);
	cd_capmask caps = g.caps;
	cd_grant_free(&g);
	return caps;
}

/* ---- an unsafe path's name in the log -------------------------------------------------------- */

/* The log names the unsafe directory whole, every byte that is not plain shown as \xHH (4
 * bytes for 1): a path of ~500 bytes, most of them 0xff, is logged in full, not cut at 3 bytes
 * per byte (seed 12's survivor: a buffer sized 3 bytes per byte cut it with "..."). */
static void test_unsafe_path_logged_whole_when_every_byte_is_escaped(void **state)
{
	(void)state;
	char *resolved = realpath(tmpdir, NULL);	/* the log names the resolved path */
	assert_non_null(resolved);
	size_t base = strlen(resolved), n = base < 400 ? (500 - base - 2) / 2 : 0;
	if (n > 240)
		n = 240;
	char *name = malloc(n + 1), *escaped = malloc(4 * n + 1);
	assert_non_null(name);
	assert_non_null(escaped);
	memset(name, 0xff, n);
	name[n] = '\0';
	for (size_t i = 0; i < n; i++)
		memcpy(escaped + 4 * i, "\\xff", 5);
	char *outer = in_tmp(name), *inner, *p, *want;
	assert_true(asprintf(&inner, "%s/%s", outer, name) > 0);
	assert_true(asprintf(&p, "%s/p.conf", inner) > 0);
	assert_true(asprintf(&want, "/%s/%s is writable by group or others;", escaped, escaped) > 0);
	/* The whole quoted path is longer than 3 bytes per byte of the 512 the reason holds. */
	if (base + strlen(want) <= 3 * 512 + 8)
		fail_msg("the test directory %s is too long for this test", resolved);
	assert_int_equal(mkdir(outer, 0755), 0);
	assert_int_equal(mkdir(inner, 0755), 0);
	assert_int_equal(chmod(inner, 0775), 0);
	put(p, "alice cap_net_raw\n");
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_UNSAFE);
	assert_int_equal(pol.nrules, 0);
	expect_logged(want);
	cd_policy_free(&pol);
	unlink(p);
	rmdir(inner);
	rmdir(outer);
	free(want);
	free(p);
	free(inner);
	free(outer);
	free(escaped);
	free(name);
	free(resolved);
}

/* ---- a directory link in the path -------------------------------------------------------- */

/* capdelegate.conf(5): the directories judged are those of the resolved path: a link to a
 * safe directory reads the policy, a link into a directory others may write does not, and the
 * directory holding the link is not on the resolved path. */
static void test_directory_link_in_the_path(void **state)
{
	(void)state;
	char *real = fresh_dir("real", 0755), *gw = fresh_dir("gw", 0775);
	char *inner = in_tmp("gw/inner"), *p;
	assert_int_equal(mkdir(inner, 0755), 0);
	const char *files[] = { "real/p.conf", "gw/p.conf", "gw/inner/p.conf" };
	for (int i = 0; i < 3; i++) {
		p = in_tmp(files[i]);
		put(p, "alice cap_net_raw\n");
		free(p);
	}
	static const struct { const char *link, *target, *load; int ok; const char *unsafe; } cases[] = {
		{ "via-real", "real", "via-real/p.conf", 1, NULL },
		{ "via-gw", "gw", "via-gw/p.conf", 0, "/gw is writable by group or others" },
		{ "via-inner", "gw/inner", "via-inner/p.conf", 0, "/gw is writable by group or others" },
		{ "gw/up-to-real", "../real", "gw/up-to-real/p.conf", 1, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *lnk = in_tmp(cases[i].link);
		unlink(lnk);
		assert_int_equal(symlink(cases[i].target, lnk), 0);
		p = in_tmp(cases[i].load);
		struct cd_policy pol;
		setup(NULL);
		enum cd_status st = load(&pol, p, NULL);
		if (cases[i].ok) {
			if (st != CD_POLICY_OK || grant_of(&pol, "alice", NULL) != BIT(CAP_NET_RAW))
				fail_msg("%s: status %s\n%s", p, cd_status_str(st), logged());
		} else {
			if (st != CD_POLICY_UNSAFE || pol.nrules != 0)
				fail_msg("%s: status %s, %zu rules", p, cd_status_str(st), pol.nrules);
			expect_logged(cases[i].unsafe);
			char *judged;	/* the link is not what is judged */
			assert_true(asprintf(&judged, "%s is ", cases[i].link) > 0);
			assert_null(strstr(logged(), judged));
			free(judged);
		}
		cd_policy_free(&pol);
		free(p);
		free(lnk);
	}
	free(real);
	free(gw);
	free(inner);
}

/* capdelegate.conf(5): each directory of the resolved path is opened in turn without following
 * a link and judged on what was opened. A directory replaced by a link after the path was
 * resolved (here, as the walk reaches it) is not a directory there: the policy is refused,
 * never read from the link's target, a safe-looking directory (inner) inside one others may
 * write (gw2), which a walk that followed the link would judge alone. */
static void test_directory_swapped_for_a_link_after_resolving(void **state)
{
	(void)state;
	char *dir = fresh_dir("swapped", 0755), *gw = fresh_dir("gw2", 0775);
	char *inner = in_tmp("gw2/inner"), *p = in_tmp("swapped/p.conf"), *theirs;
	char *away = in_tmp("swapped.away"), *cmd;
	assert_int_equal(mkdir(inner, 0755), 0);
	assert_true(asprintf(&theirs, "%s/p.conf", inner) > 0);
	put(p, "alice cap_net_raw\n");
	put(theirs, "alice cap_net_raw, cap_sys_admin\n");
	open_dir_linked[0] = "swapped";
	open_dir_linked[1] = dir;
	open_dir_linked[2] = "gw2/inner";
	struct cd_policy pol;
	enum cd_status st = load(&pol, p, NULL);
	if (open_dir_linked[0] != NULL)
		fail_msg("the walk never opened the directory 'swapped'");
	if (st == CD_POLICY_OK || pol.nrules != 0 || grant_of(&pol, "alice", NULL) != 0)
		fail_msg("status %s, %zu rules, alice gets %llx: the link's target was read\n%s",
			 cd_status_str(st), pol.nrules,
			 (unsigned long long)grant_of(&pol, "alice", NULL), logged());
	expect_logged("/swapped/p.conf: cannot open: ");
	expect_logged("no capabilities granted");
	cd_policy_free(&pol);
	unlink(dir);
	assert_true(asprintf(&cmd, "rm -rf '%s' '%s'", away, gw) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(away);
	free(theirs);
	free(p);
	free(inner);
	free(gw);
	free(dir);
}

/* Memory running out as the load starts (the copy of the policy's path): nothing read, no
 * rule kept, a status that is not OK, and the reason logged. */
static void test_out_of_memory_before_reading(void **state)
{
	(void)state;
	char *p = in_tmp("oom.conf");
	put(p, "alice cap_net_raw\n");
	struct cd_policy pol;
	strdup_fail_at = 1;
	enum cd_status st = load(&pol, p, NULL);
	strdup_fail_at = 0;
	assert_int_equal(st, CD_POLICY_SYSERR);
	assert_int_equal(pol.nrules, 0);
	expect_logged("out of memory before the policy was read: no capabilities granted");
	cd_policy_free(&pol);
	free(p);
}

/* ---- pseudo filesystems ------------------------------------------------------------------ */

/* Every pseudo filesystem capdelegate.conf(5) and pam_capdelegate(8) list, and the rest of
 * cd_safe.c's list, by the type statfs reports: a policy there is refused by name. */
static const struct { unsigned long magic; const char *name; } pseudo[] = {
	{ PROC_SUPER_MAGIC, "procfs" }, { SYSFS_MAGIC, "sysfs" }, { DEBUGFS_MAGIC, "debugfs" },
	{ TRACEFS_MAGIC, "tracefs" }, { CGROUP_SUPER_MAGIC, "cgroup" },
	{ CGROUP2_SUPER_MAGIC, "cgroup2" }, { SECURITYFS_MAGIC, "securityfs" },
	{ BPF_FS_MAGIC, "bpffs" }, { DEVPTS_SUPER_MAGIC, "devpts" }, { EFIVARFS_MAGIC, "efivarfs" },
	{ PSTOREFS_MAGIC, "pstore" }, { SELINUX_MAGIC, "selinuxfs" }, { SMACK_MAGIC, "smackfs" },
	{ BINFMTFS_MAGIC, "binfmt_misc" }, { NSFS_MAGIC, "nsfs" }, { RDTGROUP_SUPER_MAGIC, "resctrl" },
	{ OPENPROM_SUPER_MAGIC, "openpromfs" }, { USBDEVICE_SUPER_MAGIC, "usbdevfs" },
	{ 0x62656570, "configfs" }, { FUSE_SUPER_MAGIC, "fuse" },
};

/* Descriptors this process holds (a login reads the policy many times: none may leak). */
static int open_descriptors(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void test_every_pseudo_fs_by_type(void **state)
{
	(void)state;
	char *p = in_tmp("on-pseudo.conf");
	put(p, "alice cap_net_raw\n");
	int fds = open_descriptors();
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++) {
		struct cd_policy pol;
		setup(NULL);
		fake_fs_type = pseudo[i].magic;
		fake_fs_suffix = "/on-pseudo.conf";
		char *want;
		assert_true(asprintf(&want, "on-pseudo.conf is on a pseudo filesystem: %s): policy rejected",
				     pseudo[i].name) > 0);
		if (load(&pol, p, NULL) != CD_POLICY_UNSAFE || pol.nrules != 0)
			fail_msg("%s (0x%lx): not refused\n%s", pseudo[i].name, pseudo[i].magic, logged());
		expect_logged(want);
		free(want);
		cd_policy_free(&pol);
		assert_int_equal(open_descriptors(), fds);	/* the refused file was closed */
	}
	/* fstatfs failing (EIO): which filesystem is unknown, so nothing is granted, said */
	struct cd_policy failed;
	setup(NULL);
	fake_fs_type = 0;
	fake_fs_errno = EIO;
	fake_fs_suffix = "/on-pseudo.conf";
	if (load(&failed, p, NULL) != CD_POLICY_SYSERR || failed.nrules != 0)
		fail_msg("fstatfs failing: not a system error\n%s", logged());
	expect_logged(strerror(EIO));
	cd_policy_free(&failed);
	fake_fs_errno = 0;
	assert_int_equal(open_descriptors(), fds);
	/* Disk and memory filesystems are not pseudo: the same file is read there. */
	static const unsigned long disks[] = { EXT4_SUPER_MAGIC, TMPFS_MAGIC, XFS_SUPER_MAGIC,
					       BTRFS_SUPER_MAGIC };
	for (size_t i = 0; i < sizeof(disks) / sizeof(disks[0]); i++) {
		struct cd_policy pol;
		setup(NULL);
		fake_fs_type = disks[i];
		fake_fs_suffix = "/on-pseudo.conf";
		assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
		cd_policy_free(&pol);
	}
	free(p);
}

/* Every drop-in is opened once, through the directory already judged, and closed: loading a
 * policy with drop-ins (one of them a link to a safe file, judged by its target) again and
 * again holds no more descriptors than before (a login process loads it at each stage). */
static void test_dropins_leave_no_descriptor(void **state)
{
	(void)state;
	char *dir = fresh_dir("fds.d", 0755), *p = in_tmp("fds-main.conf"), *f, *target, *lnk;
	put(p, "alice cap_net_raw\n");
	target = in_tmp("fds-target.conf");
	put(target, "carol cap_syslog\n");
	for (int i = 0; i < 3; i++) {
		assert_true(asprintf(&f, "%s/%d0-part.conf", dir, i + 1) > 0);
		put(f, "bob cap_kill\n");
		free(f);
	}
	assert_true(asprintf(&lnk, "%s/90-link.conf", dir) > 0);
	assert_int_equal(symlink(target, lnk), 0);
	int fds = open_descriptors();
	for (int round = 0; round < 3; round++) {
		struct cd_policy pol;
		assert_int_equal(load(&pol, p, dir), CD_POLICY_OK);
		assert_int_equal(pol.nrules, 5);
		cd_policy_free(&pol);
		assert_int_equal(open_descriptors(), fds);
	}
	free(lnk);
	free(target);
	free(dir);
	free(p);
}

/* The loader closes only what it opened: a drop-in directory that is missing (the usual
 * install) or refused leaves every descriptor of its caller as it was. The module runs inside
 * login and sshd, whose descriptors 0-2 are the user's terminal or connection. */
static void test_dropin_dir_missing_or_refused_closes_nothing_else(void **state)
{
	(void)state;
	char *p = in_tmp("others-main.conf"), *missing = in_tmp("others-missing.d");
	char *open_dir = fresh_dir("others-open.d", 0777);
	put(p, "alice cap_net_raw\n");
	int saved = dup(0), null = open("/dev/null", O_RDONLY);
	assert_true(saved >= 0 && null >= 0);
	assert_int_equal(dup2(null, 0), 0);
	struct stat before, after;
	assert_int_equal(fstat(0, &before), 0);
	const char *dirs[] = { missing, open_dir };
	const enum cd_status want[] = { CD_POLICY_OK, CD_POLICY_UNSAFE };
	for (size_t i = 0; i < 2; i++) {
		struct cd_policy pol;
		assert_int_equal(load(&pol, p, dirs[i]), want[i]);
		cd_policy_free(&pol);
		int open0 = fstat(0, &after) == 0;
		if (!open0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino)
			fail_msg("descriptor 0 closed or replaced by the loader (drop-in directory %s)", dirs[i]);
	}
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	close(null);
	free(open_dir);
	free(missing);
	free(p);
}

/* Drop-ins are read in byte order of their names (capdelegate.conf(5)), whatever order the
 * directory lists them in: eight made in an order neither sorted nor reversed. */
static void test_dropins_read_in_name_order(void **state)
{
	(void)state;
	static const char order[] = "52741630";
	char *dir = fresh_dir("order.d", 0755), *p = in_tmp("order-main.conf"), *f;
	put(p, "main cap_kill\n");
	for (const char *c = order; *c; c++) {
		char text[32];
		snprintf(text, sizeof(text), "u%c cap_kill\n", *c);
		assert_true(asprintf(&f, "%s/%c0-part.conf", dir, *c) > 0);
		put(f, text);
		free(f);
	}
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, dir), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 9);
	assert_string_equal(pol.rules[0].name, "main");
	for (size_t i = 1; i < 9; i++) {
		char want[8];
		snprintf(want, sizeof(want), "u%zu", i - 1);
		assert_string_equal(pol.rules[i].name, want);
	}
	cd_policy_free(&pol);
	free(dir);
	/* two drop-ins are sorted too: in eight directories of two (made second name first), a
	 * filesystem lists some pair out of order (a hash order puts 1 in 2 either way round) */
	for (int d = 0; d < 8; d++) {
		char name[32], *sub;
		snprintf(name, sizeof(name), "pair%d.d", d);
		sub = fresh_dir(name, 0755);
		for (int k = 1; k >= 0; k--) {
			char text[32];
			snprintf(text, sizeof(text), "v%d cap_kill\n", k);
			assert_true(asprintf(&f, "%s/%c%d-x.conf", sub, 'a' + d, k) > 0);
			put(f, text);
			free(f);
		}
		assert_int_equal(load(&pol, p, sub), CD_POLICY_OK);
		assert_int_equal(pol.nrules, 3);
		assert_string_equal(pol.rules[1].name, "v0");
		assert_string_equal(pol.rules[2].name, "v1");
		cd_policy_free(&pol);
		free(sub);
	}
	free(p);
}

/* A drop-in on FUSE (a daemon, maybe a user's, answers stat with any owner) rejects the whole
 * policy, the main file's grants too. */
static void test_dropin_on_fuse(void **state)
{
	(void)state;
	char *dir = fresh_dir("fuse.d", 0755), *p = in_tmp("fuse-main.conf"), *d;
	put(p, "alice cap_net_raw\n");
	assert_true(asprintf(&d, "%s/50-fuse.conf", dir) > 0);
	put(d, "bob cap_kill\n");
	struct cd_policy pol;
	fake_fs_type = FUSE_SUPER_MAGIC;
	fake_fs_suffix = "/50-fuse.conf";
	assert_int_equal(load(&pol, p, dir), CD_POLICY_UNSAFE);
	assert_int_equal(pol.nrules, 0);
	expect_logged("50-fuse.conf is on a pseudo filesystem: fuse): policy rejected");
	cd_policy_free(&pol);
	free(dir);
	free(p);
	free(d);
}

/* Real pseudo files where this machine has them: root-owned regular files whose text the
 * kernel writes. At least procfs and sysfs must be there. */
static void test_real_pseudo_mounts(void **state)
{
	(void)state;
	static const struct { const char *path, *name; } real[] = {
		{ "/proc/self/comm", "procfs" }, { "/sys/kernel/uevent_seqnum", "sysfs" },
		{ "/sys/fs/cgroup/pids/tasks", "cgroup" }, { "/sys/fs/cgroup/cgroup.procs", "cgroup2" },
		{ "/sys/fs/cgroup/unified/cgroup.procs", "cgroup2" },
	};
	int tested = 0;
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		struct statfs sfs;
		if (statfs(real[i].path, &sfs) < 0)
			continue;
		struct cd_policy pol;
		setup(NULL);
		char *want;
		assert_true(asprintf(&want, "is on a pseudo filesystem: %s)", real[i].name) > 0);
		if (load(&pol, real[i].path, NULL) != CD_POLICY_UNSAFE)
			fail_msg("%s: not refused\n%s", real[i].path, logged());
		expect_logged(want);
		free(want);
		cd_policy_free(&pol);
		tested++;
	}
	printf("# %d real pseudo files refused\n", tested);
	assert_true(tested >= 2);
}

/* ---- the drop-in directory changing or failing under the reader -------------------------- */

static char *dave_none_dir(const char *name, char **mainp)
{
	char *dir = fresh_dir(name, 0755), *d;
	*mainp = in_tmp("netops-main.conf");
	put(*mainp, "@netops cap_net_raw\n");
	assert_true(asprintf(&d, "%s/10-ops.conf", dir) > 0);
	put(d, "@netops cap_net_admin\n");
	free(d);
	assert_true(asprintf(&d, "%s/50-dave.conf", dir) > 0);
	put(d, "dave none\n");
	free(d);
	return dir;
}

/* readdir fails after it returned the first drop-in: the rest of the directory is unknown
 * (a "none" line may be in it), so nothing is granted. */
static void test_readdir_fails_after_first_dropin(void **state)
{
	(void)state;
	char *main_path, *dir = dave_none_dir("readdir.d", &main_path);
	struct cd_policy pol;
	readdir_fail_after_dropin = 1;
	assert_int_equal(load(&pol, main_path, dir), CD_POLICY_SYSERR);
	assert_true(readdir_failing);	/* the fault was reached */
	assert_int_equal(pol.nrules, 0);
	expect_logged("/readdir.d: cannot read the directory: Input/output error: no capabilities granted");
	cd_policy_free(&pol);
	free(dir);
	free(main_path);
}

/* A drop-in listed, and gone when it is opened, while the directory looks the same (the
 * listing and the directory disagree): refused, never the policy read without its "none". */
static void test_dropin_gone_when_opened_refused(void **state)
{
	(void)state;
	char *main_path, *dir = dave_none_dir("gone.d", &main_path);
	struct cd_policy pol;
	open_enoent = "50-dave.conf";
	assert_int_equal(load(&pol, main_path, dir), CD_POLICY_SYSERR);
	assert_int_equal(pol.nrules, 0);
	expect_logged("/gone.d/50-dave.conf: vanished while the policy was read: no capabilities granted");
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	cd_policy_free(&pol);
	free(dir);
	free(main_path);
}

/* A drop-in really removed between the listing and its open: the directory changed, so that
 * reading is dropped (its "vanished" never logged) and the policy is read again, now whole
 * without the file: the version the administrator made. */
static void test_dropin_removed_while_read_reads_again(void **state)
{
	(void)state;
	char *main_path, *dir = dave_none_dir("removed.d", &main_path);
	struct cd_policy pol;
	open_unlinks = "50-dave.conf";
	assert_int_equal(load(&pol, main_path, dir), CD_POLICY_OK);
	assert_null(open_unlinks);	/* the fault was reached */
	expect_logged("changed while it was read: reading the policy again");
	assert_null(strstr(logged(), "vanished"));
	assert_int_equal(pol.nsources, 2);	/* the main file and 10-ops.conf: a new listing */
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == (BIT(CAP_NET_RAW) | BIT(CAP_NET_ADMIN)));
	cd_policy_free(&pol);
	free(dir);
	free(main_path);
}

/* Finding 7: a drop-in that is a link to nothing says so, and where it points. */
static void test_dangling_dropin_link_named(void **state)
{
	(void)state;
	char *main_path, *dir = dave_none_dir("dangling.d", &main_path), *lnk;
	assert_true(asprintf(&lnk, "%s/40-gone.conf", dir) > 0);
	assert_int_equal(symlink("/nonexistent-capdelegate/gone.conf", lnk), 0);
	struct cd_policy pol;
	assert_int_equal(load(&pol, main_path, dir), CD_POLICY_SYSERR);
	assert_int_equal(pol.nrules, 0);
	expect_logged("/dangling.d/40-gone.conf: dangling symbolic link to "
		      "'/nonexistent-capdelegate/gone.conf': no capabilities granted");
	assert_null(strstr(logged(), "vanished"));
	cd_policy_free(&pol);
	free(lnk);
	free(dir);
	free(main_path);
}

/* The same link replaced by a longer one between the loader's look at it and its readlink
 * (the directory looking the same): the message never shows, as this link's target, a name
 * that was neither link's. */
static void test_dangling_link_replaced_not_shown(void **state)
{
	(void)state;
	char *main_path, *dir = dave_none_dir("relinked.d", &main_path), *lnk;
	assert_true(asprintf(&lnk, "%s/40-gone.conf", dir) > 0);
	assert_int_equal(symlink("/nonexistent-capdelegate/gone.conf", lnk), 0);
	readlink_longer = "40-gone.conf";
	struct cd_policy pol;
	assert_int_equal(load(&pol, main_path, dir), CD_POLICY_SYSERR);
	assert_int_equal(pol.nrules, 0);
	expect_logged("/relinked.d/40-gone.conf: replaced while the policy was read: no capabilities granted");
	assert_null(strstr(logged(), "dangling"));
	cd_policy_free(&pol);
	free(lnk);
	free(dir);
	free(main_path);
}

/* ---- one whole version ------------------------------------------------------------------ */

static size_t count_of(const char *text)
{
	size_t n = 0;
	for (const char *p = logged(); (p = strstr(p, text)) != NULL; p++)
		n++;
	return n;
}

/* Written while it was read (here: "ne" and a newline appended once the reader reached the
 * end of "dave no"): that reading is dropped, its syntax error never logged, and the policy
 * is read again whole. */
static void test_file_changed_while_read(void **state)
{
	(void)state;
	char *p = in_tmp("growing.conf");
	put(p, "@netops cap_net_raw\ndave no");
	append_text = "ne\n";
	append_suffix = "/growing.conf";
	append_times = 1;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_int_equal(append_times, 0);	/* the fault was reached */
	assert_int_equal(count_of("changed while it was read: reading the policy again"), 1);
	assert_null(strstr(logged(), "unknown capability"));
	assert_null(strstr(logged(), "rejected"));
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	assert_true(grant_of(&pol, "carol", groups) == BIT(CAP_NET_RAW));
	cd_policy_free(&pol);
	free(p);
}

/* The file cannot be looked at again once read (fstat fails): whether it changed meanwhile is
 * unknown, so nothing is granted from it and the reason is logged. */
static void test_fstat_after_read_fails(void **state)
{
	(void)state;
	char *p = in_tmp("unseen.conf");
	put(p, "alice cap_net_raw\n");
	fstat_eio_suffix = "/unseen.conf";
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_SYSERR);
	assert_int_equal(fstat_eio_armed, 0);	/* the fault was reached */
	expect_logged("cannot stat: Input/output error: no capabilities granted");
	cd_policy_free(&pol);
	free(p);
}

/* A policy that changes at every reading is refused after 4, the reason logged. */
static void test_policy_that_keeps_changing_refused(void **state)
{
	(void)state;
	char *p = in_tmp("restless.conf");
	put(p, "alice cap_net_raw\n");
	append_text = "# again\n";
	append_suffix = "/restless.conf";
	append_times = -1;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_SYSERR);
	assert_int_equal(pol.nrules, 0);
	assert_true(grant_of(&pol, "alice", NULL) == 0);
	assert_int_equal(count_of("reading the policy again"), CD_POLICY_READ_ATTEMPTS - 1);
	expect_logged("/restless.conf: changed while it was read, 4 times in a row: no capabilities granted");
	cd_policy_free(&pol);
	free(p);
}

/* A drop-in that changes at every reading: the refusal names the drop-in, the file that kept
 * changing, not the main file beside it that stood still. */
static void test_dropin_that_keeps_changing_named(void **state)
{
	(void)state;
	char *p = in_tmp("still.conf"), *d = in_tmp("restless.d"), *f = in_tmp("restless.d/10-x.conf");
	put(p, "alice cap_net_raw\n");
	assert_int_equal(mkdir(d, 0755), 0);
	put(f, "bob cap_kill\n");
	append_text = "# again\n";
	append_suffix = "/10-x.conf";
	append_times = -1;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, d), CD_POLICY_SYSERR);
	assert_int_equal(pol.nrules, 0);
	expect_logged("/restless.d/10-x.conf: changed while it was read, 4 times in a row: no capabilities granted");
	assert_int_equal(count_of("still.conf: changed while it was read, 4 times"), 0);
	cd_policy_free(&pol);
	free(p);
	free(d);
	free(f);
}

/* The main file renamed over (a new version) while a drop-in is opened: the files read are
 * no single version (the old main file, drop-ins maybe new), so the policy is read again. */
static void test_main_renamed_over_while_dropins_read(void **state)
{
	(void)state;
	char *dir = fresh_dir("renamed.d", 0755), *p = in_tmp("renamed-main.conf"), *next, *d;
	put(p, "@netops cap_net_raw\n");
	next = in_tmp("renamed-main.conf.new");
	put(next, "@netops cap_net_raw\ndave none\n");
	assert_true(asprintf(&d, "%s/10-ops.conf", dir) > 0);
	put(d, "@netops cap_net_admin\n");
	open_renames[0] = "10-ops.conf";
	open_renames[1] = next;
	open_renames[2] = p;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, dir), CD_POLICY_OK);
	assert_null(open_renames[0]);	/* the fault was reached */
	expect_logged("renamed-main.conf: changed while it was read: reading the policy again");
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	cd_policy_free(&pol);
	free(dir);
	free(p);
	free(next);
	free(d);
}

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A policy written just now may be a writer's pause between two chunks: it is read when it is
 * CD_POLICY_SETTLE_MS old (the coarse clock it is stamped with may lag a few ms). */
static void test_policy_changed_just_now_waits(void **state)
{
	(void)state;
	char *p = in_tmp("fresh.conf");
	put(p, "alice cap_net_raw\n");
	long long t0 = now_ms();
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	long long took = now_ms() - t0;
	printf("# a policy written just now: read after %lld ms\n", took);
	assert_true(took >= CD_POLICY_SETTLE_MS - 10);
	cd_policy_free(&pol);
	free(p);
}

/* A file that grew between the loader's fstat and its read (here by 4 KiB and a "none" line
 * before the first read) is read to its end into a buffer that grows with it; that reading is
 * not one version (the size changed), so the policy is read again, whole. */
static void test_file_grown_since_fstat(void **state)
{
	(void)state;
	char *p = in_tmp("grown.conf");
	put(p, "@netops cap_net_raw\n");
	static char more[4096 + 16];
	memset(more, 0, sizeof(more));
	for (size_t i = 0; i + 64 <= 4096; i += 64)
		memcpy(more + i, "# ............................................................\n", 64);
	strcat(more, "dave none\n");
	grow_text = more;
	grow_suffix = "/grown.conf";
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_null(grow_text);	/* the fault was reached */
	assert_int_equal(count_of("changed while it was read: reading the policy again"), 1);
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	assert_true(grant_of(&pol, "carol", groups) == BIT(CAP_NET_RAW));
	cd_policy_free(&pol);
	free(p);
}

/* An empty policy file may be one being truncated for an in-place rewrite: the kernel sets
 * the size before the times, so for a moment it reads as empty with its old times. An empty
 * file therefore always waits out the settle time, however old it looks; here its writer
 * finishes during that wait and the version it wrote is the one read. */
static void test_empty_file_with_old_times_waits(void **state)
{
	(void)state;
	char *p = in_tmp("emptied.conf");
	put(p, "");
	struct timespec older = { .tv_sec = 0, .tv_nsec = (CD_POLICY_SETTLE_MS + 30) * 1000000L };
	assert_int_equal(clock_nanosleep(CLOCK_MONOTONIC, 0, &older, NULL), 0);
	settle_fill_text = "alice cap_net_raw\n";
	settle_fill_path = p;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_null(settle_fill_text);	/* the loader waited */
	assert_true(grant_of(&pol, "alice", NULL) == BIT(CAP_NET_RAW));
	cd_policy_free(&pol);
	free(p);
}

/* A torn read seen under load: the first half of a policy, written a moment
 * ago, whose ctime the coarse clock stamped while it lagged by 70 ms (measured here: up to
 * 66 ms behind the real clock at load 8). By that clock the file looks older than the settle
 * time, yet its writer is still between two chunks. capdelegate.conf(5): a policy changed
 * within about a second is checked again 50 ms later, since the clock that stamps a change
 * can lag; so the loader waits, the writer's "dave none" arrives, and dave gets nothing. */
static void test_lagging_clock_does_not_skip_the_settle(void **state)
{
	(void)state;
	char *p = in_tmp("torn.conf");
	put(p, "@netops cap_net_raw\n");
	coarse_ahead_ms = CD_POLICY_SETTLE_MS + 20;
	settle_fill_text = "dave none\n";
	settle_fill_path = p;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_null(settle_fill_text);	/* the loader waited */
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	assert_true(grant_of(&pol, "carol", groups) == BIT(CAP_NET_RAW));
	cd_policy_free(&pol);
	free(p);
}

/* capdelegate.conf(5): a change is dated by the file's change time, which the kernel sets and
 * no writer can. A writer that rewrites the policy in place and sets an old modification time
 * as it goes (cp -p, rsync -t, touch -r, tar) leaves its first part with an mtime an hour old,
 * but a ctime of now: the loader waits, the writer's "dave none" arrives, dave gets nothing. */
static void test_old_mtime_set_by_the_writer_still_waits(void **state)
{
	(void)state;
	char *p = in_tmp("old-mtime.conf");
	put(p, "@netops cap_net_raw\n");
	struct timespec now, times[2];
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &now), 0);
	times[0] = times[1] = (struct timespec){ .tv_sec = now.tv_sec - 3600, .tv_nsec = 0 };
	assert_int_equal(utimensat(AT_FDCWD, p, times, 0), 0);
	settle_fill_text = "dave none\n";
	settle_fill_path = p;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	if (settle_fill_text != NULL)
		fail_msg("no wait: the first part, its mtime an hour old, was taken for a policy at rest");
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	assert_true(grant_of(&pol, "carol", groups) == BIT(CAP_NET_RAW));
	cd_policy_free(&pol);
	free(p);
}

/* A signal during the settle wait (a login's SIGALRM, SIGCHLD) does not shorten it: the rest of
 * the time is slept. The writer's "dave none" comes only after the interruption. */
static void test_settle_wait_survives_a_signal(void **state)
{
	(void)state;
	char *p = in_tmp("interrupted.conf");
	put(p, "@netops cap_net_raw\n");
	settle_eintr_once = 1;
	settle_fill_text = "dave none\n";
	settle_fill_path = p;
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_null(settle_fill_text);	/* the wait went on after the signal */
	const char *groups[] = { "netops", NULL };
	assert_true(grant_of(&pol, "dave", groups) == 0);
	cd_policy_free(&pol);
	free(p);
}

/* The other side of the same promise: a policy that has not changed for a while is read
 * without a wait (pam_capdelegate(8): only a login within about a second of a change waits).
 * Its age is what the coarse clock says; 900 ms is within the clock's possible lag and waits
 * once, 2 s is not and does not. */
static void test_policy_at_rest_read_without_a_wait(void **state)
{
	(void)state;
	char *p = in_tmp("rest.conf");
	put(p, "alice cap_net_raw\n");
	struct cd_policy pol;
	coarse_ahead_ms = 900;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_int_equal(settle_waits, 1);
	cd_policy_free(&pol);
	settle_waits = 0;
	coarse_ahead_ms = 2000;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_OK);
	assert_int_equal(settle_waits, 0);
	assert_true(grant_of(&pol, "alice", NULL) == BIT(CAP_NET_RAW));
	cd_policy_free(&pol);
	free(p);
}

/* capdelegate.conf(5): fail closed. The file opened, then not examinable (fstat fails) or not
 * readable (read fails): a system error, nothing granted, the reason logged by name. */
static void test_fstat_or_read_fails(void **state)
{
	(void)state;
	char *p = in_tmp("failing.conf");
	put(p, "alice cap_net_raw\n");
	open_fstat_eio_suffix = "/failing.conf";
	struct cd_policy pol;
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_SYSERR);
	expect_logged("failing.conf: cannot stat: Input/output error: no capabilities granted");
	assert_int_equal(count_of("read error"), 0);
	cd_policy_free(&pol);
	open_fstat_eio_suffix = NULL;
	forget_logged();
	read_eio_suffix = "/failing.conf";
	assert_int_equal(load(&pol, p, NULL), CD_POLICY_SYSERR);
	expect_logged("failing.conf: read error: Input/output error: no capabilities granted");
	assert_true(grant_of(&pol, "alice", NULL) == 0);
	cd_policy_free(&pol);
	free(p);
}

/* The size limit counts what is read, not what fstat said: a file that grows past it between
 * its fstat and its read is rejected as one over the limit. */
static void test_file_grown_past_the_limit(void **state)
{
	(void)state;
	char *p = in_tmp("growing.conf");
	put(p, "alice cap_net_raw\n");
	static char more[3000];
	memset(more, '#', sizeof(more) - 2);
	more[sizeof(more) - 2] = '\n';
	grow_text = more;
	grow_suffix = "/growing.conf";
	struct cd_load_opts o = { .owner = getuid(), .max_bytes = 1000, .no_settle = 1 };
	struct cd_policy pol;
	assert_int_equal(cd_policy_load(&pol, p, &o, &test_log), CD_POLICY_UNSAFE);
	assert_null(grow_text);	/* the fault was reached */
	expect_logged("growing.conf: larger than the size limit (1000 bytes for the whole policy) while reading");
	assert_true(grant_of(&pol, "alice", NULL) == 0);
	cd_policy_free(&pol);
	free(p);
}

/* A stand-in (check --staged, edit) for a drop-in of a name the module would never read is
 * refused, not read as one; a stand-in for a main file named without a directory is judged in
 * the current directory. */
static void test_stand_in_names(void **state)
{
	(void)state;
	char *dir = fresh_dir("stand", 0755), *p = in_tmp("stand.conf");
	put(p, "alice cap_net_raw\n");
	struct cd_stand_in s = { .dropin = ".hidden.conf", .shown_path = "staged", .text = "bob cap_kill\n",
				 .len = 13 };
	struct cd_load_opts o = { .owner = getuid(), .confdir = dir, .stand_in = &s, .no_settle = 1 };
	struct cd_policy pol;
	assert_int_equal(cd_policy_load(&pol, p, &o, &test_log), CD_POLICY_SYSERR);
	expect_logged("staged: not a drop-in name: no capabilities granted");
	assert_true(grant_of(&pol, "bob", NULL) == 0);
	assert_true(grant_of(&pol, "alice", NULL) == 0);
	cd_policy_free(&pol);
	forget_logged();
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	s.dropin = NULL;
	o.confdir = NULL;
	int fds = open_descriptors();
	enum cd_status st = cd_policy_load(&pol, "bare.conf", &o, &test_log);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(st, CD_POLICY_OK);
	assert_true(grant_of(&pol, "bob", NULL) == BIT(CAP_KILL));
	cd_policy_free(&pol);
	assert_int_equal(open_descriptors(), fds);	/* the judged directory was closed */
	free(p);
	free(dir);
}

/* Without options the module's defaults: root's files only, the size limit of
 * capdelegate.conf(5) (1 MiB). A text over it is rejected whole, its size named. */
static void test_default_options(void **state)
{
	(void)state;
	struct cd_policy pol;
	char *p = in_tmp("none/capdelegate.conf");
	assert_int_equal(cd_policy_load(&pol, p, NULL, &test_log), CD_POLICY_MISSING);
	cd_policy_free(&pol);
	assert_int_equal(cd_policy_parse(&pol, "text", "alice cap_kill\n", 15, NULL, &test_log), CD_POLICY_OK);
	assert_true(grant_of(&pol, "alice", NULL) == BIT(CAP_KILL));
	cd_policy_free(&pol);
	size_t len = CD_MAX_POLICY_BYTES + 1;
	char *big = malloc(len);
	assert_non_null(big);
	memset(big, '#', len);
	memcpy(big, "alice cap_kill\n", 15);
	assert_int_equal(cd_policy_parse(&pol, "big", big, len, NULL, &test_log), CD_POLICY_UNSAFE);
	expect_logged("big: larger than the size limit (1048576 bytes): policy rejected, no capabilities granted");
	assert_true(grant_of(&pol, "alice", NULL) == 0);
	cd_policy_free(&pol);
	free(big);
	free(p);
}

int main(void)
{
	if (make_test_dir(tmpdir, sizeof(tmpdir), "cd-load") < 0)
		return 1;
	test_log.debug = 1;	/* "reading the policy again" is a debug message */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_directory_link_in_the_path, setup),
		cmocka_unit_test_setup(test_directory_swapped_for_a_link_after_resolving, setup),
		cmocka_unit_test_setup(test_unsafe_path_logged_whole_when_every_byte_is_escaped, setup),
		cmocka_unit_test_setup(test_every_pseudo_fs_by_type, setup),
		cmocka_unit_test_setup(test_dropins_leave_no_descriptor, setup),
		cmocka_unit_test_setup(test_dropins_read_in_name_order, setup),
		cmocka_unit_test_setup(test_dropin_dir_missing_or_refused_closes_nothing_else, setup),
		cmocka_unit_test_setup(test_out_of_memory_before_reading, setup),
		cmocka_unit_test_setup(test_dropin_on_fuse, setup),
		cmocka_unit_test_setup(test_real_pseudo_mounts, setup),
		cmocka_unit_test_setup(test_readdir_fails_after_first_dropin, setup),
		cmocka_unit_test_setup(test_dropin_gone_when_opened_refused, setup),
		cmocka_unit_test_setup(test_dropin_removed_while_read_reads_again, setup),
		cmocka_unit_test_setup(test_dangling_dropin_link_named, setup),
		cmocka_unit_test_setup(test_dangling_link_replaced_not_shown, setup),
		cmocka_unit_test_setup(test_file_changed_while_read, setup),
		cmocka_unit_test_setup(test_fstat_after_read_fails, setup),
		cmocka_unit_test_setup(test_policy_that_keeps_changing_refused, setup),
		cmocka_unit_test_setup(test_dropin_that_keeps_changing_named, setup),
		cmocka_unit_test_setup(test_main_renamed_over_while_dropins_read, setup),
		cmocka_unit_test_setup(test_policy_changed_just_now_waits, setup),
		cmocka_unit_test_setup(test_file_grown_since_fstat, setup),
		cmocka_unit_test_setup(test_empty_file_with_old_times_waits, setup),
		cmocka_unit_test_setup(test_lagging_clock_does_not_skip_the_settle, setup),
		cmocka_unit_test_setup(test_old_mtime_set_by_the_writer_still_waits, setup),
		cmocka_unit_test_setup(test_policy_at_rest_read_without_a_wait, setup),
		cmocka_unit_test_setup(test_settle_wait_survives_a_signal, setup),
		cmocka_unit_test_setup(test_fstat_or_read_fails, setup),
		cmocka_unit_test_setup(test_file_grown_past_the_limit, setup),
		cmocka_unit_test_setup(test_stand_in_names, setup),
		cmocka_unit_test_setup(test_default_options, setup),
	};
	int rc = cmocka_run_group_tests_name("load", tests, NULL, NULL);
	char *cmd;
	if (asprintf(&cmd, "rm -rf '%s'", tmpdir) > 0 && system(cmd) != 0)
		rc = 1;
	free(cmd);
	forget_logged();
	return rc;
}
