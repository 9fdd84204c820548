/*
 * cli_edit_files.c - the files of `capdelegate edit` beside the policy file: the lock, the
 * editor's copy, the new file renamed over the old. Every name is opened relative to the
 * directory's descriptor, created with O_EXCL and never followed when it is a link: what is
 * found at a name this command did not make is never written through.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd_snapshot.h"	/* cd_snapshot_same: the loader's own test of "unchanged" */
#include "cli_common.h"
#include "cli_edit.h"
#include "cli_out.h"

/* "capdelegate: edit: DIR/NAME: WHAT[: strerror]\n", the path escaped. */
static void say(const struct edit_target *t, const char *name, const char *what, int err)
{
	fputs("capdelegate: edit: ", stderr);
	cli_text_escape(stderr, t->dir);
	fputc('/', stderr);
	cli_text_escape(stderr, name);
	fprintf(stderr, ": %s%s%s\n", what, err ? ": " : "", err ? strerror(err) : "");
}

int edit_target_open(struct edit_target *t, const char *path, int is_dropin)
{
	const char *slash = strrchr(path, '/');
	memset(t, 0, sizeof(*t));
	t->dfd = t->lock_fd = -1;
	t->dir = slash == NULL ? strdup(".") : strndup(path, slash == path ? 1 : (size_t)(slash - path));
	t->base = strdup(slash == NULL ? path : slash + 1);
	if (t->dir == NULL || t->base == NULL || asprintf(&t->path, "%s", path) < 0 ||
	    asprintf(&t->lock_name, ".%s.lock", t->base) < 0 ||
	    asprintf(&t->copy_name, ".%s.edit", t->base) < 0 ||
	    asprintf(&t->new_name, ".%s.new", t->base) < 0 ||
	    asprintf(&t->copy_path, "%s/%s", t->dir, t->copy_name) < 0) {
		fputs("capdelegate: edit: out of memory\n", stderr);
		return -1;
	}
	t->dropin = is_dropin ? t->base : NULL;
	/* ".BASE.lock" must be a name the directory can hold */
	if (t->base[0] == '\0' || strlen(t->lock_name) > NAME_MAX) {
		fputs("capdelegate: edit: '", stderr);
		cli_text_escape(stderr, path);
		fputs("': no file name, or too long to have a lock beside it\n", stderr);
		return -1;
	}
	t->dfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dfd < 0) {
		int err = errno;
		fputs("capdelegate: edit: ", stderr);
		cli_text_escape(stderr, t->dir);
		fprintf(stderr, ": cannot open the directory: %s\n", strerror(err));
		return -1;
	}
	return 0;
}

/* What a lock file says: "PID" of the edit, then, once its editor runs, "PID EDITOR START"
 * (START: the editor's start time, /proc/EDITOR/stat's field 22, so that another process that
 * got the pid later is told from it). Zeros for what it does not say. */
struct lock_record {
	long pid, editor;
	unsigned long long start;
};

static struct lock_record lock_owner(int fd)
{
	struct lock_record r = { 0, 0, 0 };
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%ld %ld %llu", &r.pid, &r.editor, &r.start) < 3)
			r.editor = 0, r.start = 0;	/* only a pid: no editor ran yet */
	}
	return r;
}

/* Process @pid's start time (clock ticks after boot), 0 when unknown; *zombie set when it has
 * ended but is not reaped yet (kill(2) still finds it). */
static unsigned long long start_time(long pid, int *zombie)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	*zombie = 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "PID (COMM) STATE f4 ... f21 STARTTIME ...": COMM may hold blanks and parentheses */
	char *p = strrchr(buf, ')');
	char state;
	if (p == NULL || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
				"%*s %*s %*s %*s %*s %llu", &state, &start) != 2)
		return 0;
	*zombie = state == 'Z' || state == 'X';
	return start;
}

/* Does the editor a lock record names still run? When its start time cannot be read, a
 * process of that pid is taken for it: the edit then stops rather than risk a lost save. */
static int editor_runs(const struct lock_record *r)
{
	int zombie;
	if (r->editor <= 0 || (kill((pid_t)r->editor, 0) < 0 && errno == ESRCH))
		return 0;
	unsigned long long now = start_time(r->editor, &zombie);
	return !zombie && (now == 0 || r->start == 0 || now == r->start);
}

int edit_lock_note_editor(struct edit_target *t, pid_t editor)
{
	char buf[96];
	int zombie;
	int n = snprintf(buf, sizeof(buf), "%ld %ld %llu\n", (long)getpid(), (long)editor,
			 start_time(editor, &zombie));
	return ftruncate(t->lock_fd, 0) < 0 || pwrite(t->lock_fd, buf, (size_t)n, 0) != n ? -1 : 0;
}

/* One try: open (or create) the lock file and lock it without waiting. 1 locked, 0 someone
 * holds it (*rec says who), -1 error (said). A lock file renamed or removed between our open
 * and our flock is another's, not the one at the name: try again (2). */
static int try_lock(struct edit_target *t, struct lock_record *rec)
{
	int fd = openat(t->dfd, t->lock_name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			0600);
	struct stat st, at;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		say(t, t->lock_name, fd < 0 && errno == ELOOP ? "is a symbolic link: not a lock this command "
		    "made, nothing edited (remove it)" : "cannot use as the lock: nothing edited",
		    fd < 0 && errno != ELOOP ? errno : 0);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*rec = lock_owner(fd);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(fd);
		if (err == EWOULDBLOCK)
			return 0;
		say(t, t->lock_name, "cannot lock", err);
		return -1;
	}
	if (fstatat(t->dfd, t->lock_name, &at, AT_SYMLINK_NOFOLLOW) < 0 || at.st_dev != st.st_dev ||
	    at.st_ino != st.st_ino) {
		close(fd);
		return 2;
	}
	t->lock_fd = fd;
	return 1;
}

/* A leftover at one of our names: a regular file is a killed edit's, removed; anything else
 * was put there by someone else, and the edit stops before touching it. */
static int clear_leftover(struct edit_target *t, const char *name)
{
	struct stat st;
	if (fstatat(t->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : (say(t, name, "cannot stat", errno), -1);
	if (!S_ISREG(st.st_mode)) {
		say(t, name, S_ISLNK(st.st_mode) ? "a symbolic link is in the way of this command's "
		    "own file: nothing edited (remove it)" : "something that is not a regular file is "
		    "in the way of this command's own file: nothing edited (remove it)", 0);
		return -1;
	}
	if (unlinkat(t->dfd, name, 0) < 0) {
		say(t, name, "cannot remove a killed edit's leftover", errno);
		return -1;
	}
	say(t, name, "removed: left by an edit that was killed", 0);
	return 0;
}

/* The lock is another edit's: it runs, or it was killed while its editor runs on. An
 * orphaned editor still saves by the copy's name, and an edit that took the lock over would
 * make its own copy at that name, then install that save with its own text, unseen: so the
 * lock is the editor's too. It inherits the lock's descriptor (run_editor), which keeps the
 * flock held; one that closed it is found by its pid and start time in the lock file. */
static int lock_refused(struct edit_target *t, const struct lock_record *r)
{
	int edit_gone = r->pid > 0 && kill((pid_t)r->pid, 0) < 0 && errno == ESRCH;
	fputs("capdelegate: edit: ", stderr);
	cli_text_escape(stderr, t->path);
	if (edit_gone && editor_runs(r))
		fprintf(stderr, ": the editor (pid %ld) of the edit of pid %ld still runs: that edit "
			"ended without removing ", r->editor, r->pid);
	else if (edit_gone)
		fprintf(stderr, ": the edit of pid %ld ended, but a process it started (its editor) "
			"still holds ", r->pid);
	else if (r->pid > 0)
		fprintf(stderr, " is being edited (pid %ld holds ", r->pid);
	else
		fputs(" is being edited (another edit holds ", stderr);
	cli_text_escape(stderr, t->dir);
	fputc('/', stderr);
	cli_text_escape(stderr, t->lock_name);
	if (edit_gone)
		fputs(", and a save of that editor would be installed with this edit: end the editor, "
		      "or let it end, then try again (remove the lock only if that pid is not the "
		      "editor)\n", stderr);
	else
		fputs("): try again when that edit ends\n", stderr);
	return -1;
}

int edit_lock(struct edit_target *t)
{
	struct lock_record rec = { 0, 0, 0 };
	int rc = 2;
	for (int tries = 0; rc == 2 && tries < 10; tries++)
		rc = try_lock(t, &rec);
	if (rc == 0)
		return lock_refused(t, &rec);
	if (rc != 1) {
		if (rc == 2)
			say(t, t->lock_name, "kept changing while it was locked: nothing edited", 0);
		return -1;
	}
	/* flock is released when its holders die: a pid in a lock we could take is a dead
	 * edit's, and its editor has ended too unless it closed the descriptor it was given */
	if (rec.pid > 0 && editor_runs(&rec)) {
		close(t->lock_fd);
		t->lock_fd = -1;	/* and the lock file stays: it names the editor */
		return lock_refused(t, &rec);
	}
	if (rec.pid > 0)
		fprintf(stderr, "capdelegate: edit: taking over the stale lock of pid %ld (that edit "
			"ended without removing it)\n", rec.pid);
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(t->lock_fd, 0) < 0 || pwrite(t->lock_fd, buf, (size_t)n, 0) != n) {
		say(t, t->lock_name, "cannot write", errno);
		return -1;
	}
	return clear_leftover(t, t->copy_name) < 0 || clear_leftover(t, t->new_name) < 0 ? -1 : 0;
}

/* Write all of @len bytes. 0, or -1 (errno). */
static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The installed file: a symbolic link would be replaced by the rename, not its target, so it
 * is refused; none yet is an empty text (edit NAME creates the drop-in). */
static int read_installed(struct edit_target *t)
{
	struct stat st;
	const char *why;
	if (fstatat(t->dfd, t->base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return say(t, t->base, "cannot stat", errno), -1;
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		return say(t, t->base, "is a symbolic link: edit the file it points to (--config), a "
			   "rename here would replace the link", 0), -1;
	t->seen = st;	/* before the read: a change while reading is seen as one */
	if (cli_text_read(t->dfd, t->base, 0, &t->before, &why) < 0)
		return say(t, t->base, why, errno), -1;
	if (t->before.len > CD_MAX_POLICY_BYTES)
		return say(t, t->base, "larger than a policy may be: not edited", 0), -1;
	t->existed = 1;
	return 0;
}

int edit_make_copy(struct edit_target *t)
{
	if (read_installed(t) < 0)
		return -1;
	int fd = openat(t->dfd, t->copy_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0)
		return say(t, t->copy_name, "cannot create the copy", errno), -1;
	t->made_copy = 1;
	int rc = write_all(fd, t->before.bytes ? t->before.bytes : "", t->before.len);
	int err = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0)
		say(t, t->copy_name, "cannot write the copy", err);
	return rc;
}

int edit_read_copy(struct edit_target *t, struct cli_text *after)
{
	const char *why;
	if (cli_text_read(t->dfd, t->copy_name, 1, after, &why) == 0)
		return 0;
	fputs("capdelegate: edit: ", stderr);
	cli_text_escape(stderr, t->copy_path);
	fprintf(stderr, ": %s%s%s (not a file edit installs): ", why, errno ? ": " : "",
		errno ? strerror(errno) : "");
	cli_text_escape(stderr, t->path);
	fputs(" left untouched\n", stderr);
	return -1;
}

/* Did someone change the installed file since the edit began (or since the last look)? Not
 * through edit, since edit holds the lock: a config-management run, an mv by hand. 1 said (the
 * next look compares with what is there now), 0 as it was, -1 on an error (said). */
static int changed_meanwhile(struct edit_target *t)
{
	struct stat now;
	int present = fstatat(t->dfd, t->base, &now, AT_SYMLINK_NOFOLLOW) == 0;
	if (!present && errno != ENOENT)
		return say(t, t->base, "cannot stat", errno), -1;
	int changed = present != t->existed || (present && !cd_snapshot_same(&now, &t->seen));
	if (!changed)
		return 0;
	fputs("capdelegate: edit: ", stderr);
	cli_text_escape(stderr, t->path);
	fprintf(stderr, " was %s by someone else while you edited: not installed over %s (look at "
		"it, then edit again)\n", present ? (t->existed ? "changed" : "created") : "removed",
		present ? "their version" : "their removal");
	t->existed = present;
	if (present)
		t->seen = now;
	t->theirs_seen = 1;
	return 1;
}

/* The new file, written whole and on disk before its name replaces the old one's: a crash
 * leaves the old file or the new one, never a part. */
static int write_new(struct edit_target *t, const struct cli_text *after)
{
	int fd = openat(t->dfd, t->new_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0)
		return say(t, t->new_name, "cannot create", errno), -1;
	t->made_new = 1;
	const char *what = NULL;
	if (fchown(fd, 0, 0) < 0)
		what = "cannot give it to root";
	else if (fchmod(fd, 0644) < 0)	/* after chown: the umask never decides */
		what = "cannot set mode 0644";
	else if (write_all(fd, after->bytes ? after->bytes : "", after->len) < 0)
		what = "cannot write";
	else if (fsync(fd) < 0)
		what = "cannot write to disk";
	int err = errno;
	if (close(fd) < 0 && what == NULL) {
		what = "cannot write";
		err = errno;
	}
	return what != NULL ? (say(t, t->new_name, what, err), -1) : 0;
}

int edit_install(struct edit_target *t, const struct cli_text *after)
{
	if (write_new(t, after) < 0)
		return -1;
	/* The look comes last, after the write and its fsync, which can take long on a busy
	 * disk: a version renamed into place before it is seen; one renamed in the few
	 * instructions left before our rename would still be replaced (no rename(2) compares). */
	int changed = changed_meanwhile(t);
	if (changed != 0) {
		unlinkat(t->dfd, t->new_name, 0);	/* a next round makes it again (O_EXCL) */
		t->made_new = 0;
		return changed < 0 ? -1 : 1;
	}
	if (renameat(t->dfd, t->new_name, t->dfd, t->base) < 0)
		return say(t, t->base, "cannot rename the new file over it", errno), -1;
	t->made_new = 0;
	t->theirs_seen = 0;
	/* the rename is on disk only once the directory is */
	if (fsync(t->dfd) < 0)
		say(t, ".", "installed, but the directory could not be written to disk", errno);
	return 0;
}

void edit_keep_copy(struct edit_target *t)
{
	char *kept = NULL;
	int err = 0;
	/* link, not rename: a name already there (a kept text of an earlier edit whose pid this
	 * one has now) is never replaced */
	for (int n = 0; n < 100 && kept == NULL; n++) {
		if ((n == 0 ? asprintf(&kept, ".%s.kept-%ld", t->base, (long)getpid()) :
			      asprintf(&kept, ".%s.kept-%ld.%d", t->base, (long)getpid(), n)) < 0) {
			kept = NULL;
			err = ENOMEM;
			break;
		}
		if (linkat(t->dfd, t->copy_name, t->dfd, kept, 0) == 0)
			break;
		err = errno;
		free(kept);
		kept = NULL;
		if (err != EEXIST)
			break;
	}
	fputs("capdelegate: edit: your text for ", stderr);
	cli_text_escape(stderr, t->path);
	if (kept == NULL) {
		/* not removed, then: the copy is where the text is */
		fputs(" is left in ", stderr);
		cli_text_escape(stderr, t->copy_path);
		fprintf(stderr, " (it could not be kept under another name: %s; the next edit of the "
			"file removes it)\n", strerror(err));
		t->made_copy = 0;
		return;
	}
	unlinkat(t->dfd, t->copy_name, 0);
	t->made_copy = 0;
	fputs(" is kept in ", stderr);
	cli_text_escape(stderr, t->dir);
	fputc('/', stderr);
	cli_text_escape(stderr, kept);
	fputs(" (a dotfile: never read as policy)\n", stderr);
	free(kept);
}

void edit_target_close(struct edit_target *t)
{
	if (t->dfd >= 0) {
		/* unlinkat removes a link or FIFO the editor left, never what a link points to */
		if (t->made_copy && unlinkat(t->dfd, t->copy_name, 0) < 0 && errno == EISDIR)
			unlinkat(t->dfd, t->copy_name, AT_REMOVEDIR);
		if (t->made_new)
			unlinkat(t->dfd, t->new_name, 0);
		/* the name first, then the lock: a waiting editor that opened this file sees the name gone */
		if (t->lock_fd >= 0)
			unlinkat(t->dfd, t->lock_name, 0);
		close(t->dfd);
	}
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	cli_text_free(&t->before);
	free(t->dir);
	free(t->base);
	free(t->path);
	free(t->lock_name);
	free(t->copy_name);
	free(t->new_name);
	free(t->copy_path);
	t->dfd = t->lock_fd = -1;
}
