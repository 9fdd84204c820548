/*
 * cli_marks.c - a declared mark's file as found on disk (see cli_marks.h).
 *
 * The file is opened as a policy is (cd_safe.h): every directory on its resolved path root's
 * and writable by nobody else, then its last component with O_NOFOLLOW, and it is judged on
 * that descriptor: a regular file, root's, not writable by group or others. apply acts on the
 * same descriptor (fchmod, cap_set_fd), so a path swapped after the check cannot redirect the
 * write; a writable file or directory would let someone put their own program under the mark
 * before the next apply.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd_safe.h"
#include "cli_marks.h"
#include "cli_common.h"

static int locate(void *arg, const struct cd_mark *mk, struct cd_mark_where *w)
{
	struct cli_mark_disk d;
	(void)arg;
	int rc = cli_mark_locate(mk, &d);
	*w = d.where;
	cli_mark_disk_free(&d);
	return rc;
}

enum cd_status cli_load_marks(struct cd_marks *m, const char *path)
{
	struct cd_log log = { 0 };
	struct cd_load_opts opts = { .owner = 0 };
	cd_marks_load(m, path ? path : CD_DEFAULT_MARKS, &opts, &log);
	return cd_marks_reject_aliases(m, locate, NULL, &log);
}

const char *cli_mark_level_str(enum cli_mark_level level)
{
	switch (level) {
	case CLI_MARK_OK: return "ok";
	case CLI_MARK_WARNING: return "warning";
	case CLI_MARK_DRIFT: return "drift";
	case CLI_MARK_ERROR: return "error";
	}
	return "?";
}

static int refuse(struct cli_mark_disk *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct cli_mark_disk *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&d->refused, fmt, ap);
	va_end(ap);
	if (rc < 0)
		d->refused = NULL;
	return rc < 0 ? -1 : 0;
}

static int refuse_unsafe(struct cli_mark_disk *d, const struct cd_safe_why *why)
{
	if (why->fs != NULL)
		return refuse(d, "%s %s: %s", why->where, why->what, why->fs);
	return refuse(d, "%s %s (owner uid %u, mode %04o)", why->where, why->what,
		      (unsigned)why->uid, why->mode);
}

static void failed(struct cli_mark_disk *d, const char *what)
{
	d->failed = what;
	d->err = errno;
}

/* The directory holding @path, judged like a policy's (cd_open_safe), in *dfd. 0 when
 * judged (*dfd < 0: a state is set), -1 when memory runs out. */
static int open_dir(const char *path, struct cli_mark_disk *d, int *dfd)
{
	const char *slash = strrchr(path, '/');	/* the parser wants absolute paths */
	char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (dir == NULL)
		return -1;
	struct cd_safe_why why;
	struct stat st;
	int rc = 0, safe = cd_open_safe(dir, 0, dfd, &why);
	int statted = safe > 0 && fstat(*dfd, &st) == 0;
	if (statted && S_ISDIR(st.st_mode))	/* placed even when refused: two lines still clash */
		d->where = (struct cd_mark_where){ .dir_known = 1, .dir_dev = st.st_dev,
						   .dir_ino = st.st_ino };
	if (safe == 0)
		rc = refuse_unsafe(d, &why);
	else if (safe < 0 && (errno == ENOENT || errno == ENOTDIR))
		d->missing = 1;
	else if (safe < 0)
		failed(d, "open its directory");
	else if (!statted)
		failed(d, "stat its directory");
	else if (!S_ISDIR(st.st_mode))
		d->missing = 1;
	else if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		rc = refuse(d, "%s is writable by someone other than root (owner uid %u, mode %04o)",
			    dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	else
		safe = 2;	/* judged */
	if (safe != 2 && *dfd >= 0) {
		close(*dfd);
		*dfd = -1;
	}
	free(dir);
	return rc;
}

/* The file itself, in the judged directory @dfd. */
static int open_file(const char *path, int dfd, struct cli_mark_disk *d)
{
	struct cd_safe_why why;
	struct stat st;
	int safe = cd_open_safe_at(dfd, strrchr(path, '/') + 1, path, &d->fd, &why);
	if (safe == 0)
		return refuse_unsafe(d, &why);
	if (safe < 0) {
		if (errno == ELOOP)
			return refuse(d, "is a symbolic link: a mark goes on the file itself");
		if (errno == ENOENT)
			d->missing = 1;
		else
			failed(d, "open");
		return 0;
	}
	if (fstat(d->fd, &st) < 0) {
		failed(d, "stat");
		return 0;
	}
	d->mode = st.st_mode;
	d->where.file_known = 1;
	d->where.dev = st.st_dev;
	d->where.ino = st.st_ino;
	if (!S_ISREG(st.st_mode))
		return refuse(d, "is not a regular file");
	if (st.st_uid != 0)
		return refuse(d, "is owned by uid %u, not root", (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return refuse(d, "is writable by group or others (mode %04o)",
			      (unsigned)(st.st_mode & 07777));
	return 0;
}

/* security.capability through libcap, on the descriptor. */
static int read_caps(struct cli_mark_disk *d)
{
	cap_t caps = cap_get_fd(d->fd);
	if (caps == NULL) {
		if (errno == ENODATA)
			return (d->text = strdup("none")) ? 0 : -1;
		/* EINVAL: the kernel shows only revisions 2 and 3 (commoncap.c) */
		if (errno == EINVAL) {
			d->has_caps = d->unreadable = 1;
			return (d->text = strdup("unreadable")) ? 0 : -1;
		}
		failed(d, "read security.capability");
		return 0;
	}
	d->has_caps = 1;
	d->permitted = cd_cap_flag_mask(caps, CAP_PERMITTED);
	d->inheritable = cd_cap_flag_mask(caps, CAP_INHERITABLE);
	d->effective = cd_cap_flag_mask(caps, CAP_EFFECTIVE) != 0;
	d->rootid = cap_get_nsowner(caps);
	char *text = cd_fcaps_text(caps);
	cap_free(caps);
	if (text == NULL)
		return -1;
	if (d->rootid != 0) {
		int rc = asprintf(&d->text, "%s rootid=%u", text, (unsigned)d->rootid);
		free(text);
		return rc < 0 ? (d->text = NULL, -1) : 0;
	}
	d->text = text;
	return 0;
}

int cli_mark_locate(const struct cd_mark *mk, struct cli_mark_disk *d)
{
	*d = (struct cli_mark_disk){ .fd = -1 };
	int dfd = -1;
	if (open_dir(mk->path, d, &dfd) < 0)
		return -1;
	if (dfd < 0)
		return 0;
	int rc = open_file(mk->path, dfd, d);
	close(dfd);
	return rc;
}

int cli_mark_inspect(const struct cd_mark *mk, struct cli_mark_disk *d)
{
	int rc = cli_mark_locate(mk, d);
	if (rc < 0 || d->fd < 0 || d->refused != NULL || d->failed != NULL)
		return rc;
	return read_caps(d);
}

void cli_mark_disk_free(struct cli_mark_disk *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->refused);
	free(d->text);
	*d = (struct cli_mark_disk){ .fd = -1 };
}

int cli_mark_caps_match(const struct cd_mark *mk, const struct cli_mark_disk *d)
{
	return d->has_caps && !d->unreadable && d->permitted == 0 && d->rootid == 0 &&
	       d->inheritable == mk->inheritable && d->effective == mk->effective;
}

/* A state and its audit finding id, both static. */
#define STATE(s) s, "mark-" s

static int say(cli_mark_visit visit, void *arg, const struct cd_mark *mk,
	       const struct cli_mark_disk *d, const char *state, const char *finding,
	       enum cli_mark_level level, cd_capmask caps, const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));
static int say(cli_mark_visit visit, void *arg, const struct cd_mark *mk,
	       const struct cli_mark_disk *d, const char *state, const char *finding,
	       enum cli_mark_level level, cd_capmask caps, const char *fmt, ...)
{
	char *msg;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	rc = visit(arg, mk, d, state, finding, level, caps, msg);
	free(msg);
	return rc;
}

/* What the capabilities on disk say against the mark. */
static int caps_states(const struct cd_mark *mk, const struct cli_mark_disk *d,
		       cli_mark_visit visit, void *arg)
{
	int rc = 0;
	if (d->unreadable)
		return say(visit, arg, mk, d, STATE("unreadable"), CLI_MARK_DRIFT, mk->inheritable,
			   "the kernel will not show its security.capability value (revision 1 or "
			   "malformed): apply rewrites it");
	if (!d->has_caps)
		return say(visit, arg, mk, d, STATE("no-xattr"), CLI_MARK_DRIFT, mk->inheritable,
			   "no security.capability: nobody gains these through the file");
	if (d->permitted) {
		char *caps = cd_capmask_to_text(d->permitted);
		rc = caps == NULL ? -1 : say(visit, arg, mk, d, STATE("fP-bypass"), CLI_MARK_DRIFT,
					     d->permitted, "fP bypass: every user gains %s", caps);
		free(caps);
	}
	if (rc == 0 && (d->inheritable != mk->inheritable || d->effective != mk->effective ||
			d->rootid != 0))
		rc = say(visit, arg, mk, d, STATE("differs"), CLI_MARK_DRIFT,
			 d->inheritable ^ mk->inheritable, "fI, fE or rootid differ from the mark");
	return rc;
}

int cli_mark_states(const struct cd_mark *mk, const struct cli_mark_disk *d, cli_mark_visit visit,
		    void *arg)
{
	if (d->missing)
		return say(visit, arg, mk, d, STATE("missing"), CLI_MARK_WARNING, mk->inheritable,
			   "no such file (package not installed?): skipped");
	if (d->refused != NULL)
		return say(visit, arg, mk, d, STATE("refused"), CLI_MARK_ERROR, mk->inheritable,
			   "%s: not changed", d->refused);
	if (d->failed != NULL)
		return say(visit, arg, mk, d, STATE("error"), CLI_MARK_ERROR, mk->inheritable,
			   "cannot %s: %s", d->failed, strerror(d->err));
	int rc = caps_states(mk, d, visit, arg);
	int sid = d->mode & (S_ISUID | S_ISGID);
	const char *bits = sid == (S_ISUID | S_ISGID) ? "setuid and setgid bits"
			   : sid == S_ISUID ? "setuid bit" : "setgid bit";
	if (rc == 0 && sid && (mk->flags & CD_MARK_NOSUID))
		rc = say(visit, arg, mk, d, STATE("setuid"), CLI_MARK_DRIFT, 0,
			 "%s (mode %04o) on a nosuid mark: apply removes it", bits,
			 (unsigned)(d->mode & 07777));
	else if (rc == 0 && sid)
		rc = say(visit, arg, mk, d, STATE("setuid"), CLI_MARK_WARNING, 0,
			 "%s (mode %04o): the file runs as its owner whatever the mark says (add "
			 "nosuid to remove it)", bits, (unsigned)(d->mode & 07777));
	if (rc == 0 && !sid && cli_mark_caps_match(mk, d))
		rc = say(visit, arg, mk, d, STATE("ok"), CLI_MARK_OK, mk->inheritable, "matches the mark");
	return rc;
}
