/*
 * cd_load.c - the files of a policy: the main file, then the drop-ins of its directory
 * (capdelegate.d/NAME.conf in byte order), each opened through cd_open_safe and judged on its
 * descriptor, read whole and handed to the line parser (cd_policy.c). One verdict for all of
 * them: any unsafe file, any bad line in any file rejects the whole policy. And one version:
 * a policy that changed while it was read is read again (cd_snapshot.c says how a change is
 * seen), and refused when it keeps changing.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd_parse.h"
#include "cd_safe.h"
#include "cd_snapshot.h"

static const struct cd_load_opts default_opts = { .owner = 0 };

/* One reading of the whole policy: its parser, what the files may still hold, and what each
 * file and directory looked like when it was read. */
struct reading {
	struct parser p;
	size_t budget, max_bytes;
	struct cd_snapshot snap;
};

/* Remember @path as it was read (@st NULL: missing), for the check that nothing changed. */
static enum cd_status remember(struct reading *r, const char *path, const struct stat *st)
{
	if (cd_snapshot_add(&r->snap, path, st) == 0)
		return CD_POLICY_OK;
	r->p.out_of_memory = 1;
	return CD_POLICY_SYSERR;
}

/* The policy's words in the reader's messages, for the file being read now. */
static struct cd_reader policy_reader(const struct parser *p)
{
	return (struct cd_reader){ .log = p->log, .shown = p->shown, .owner = p->opts->owner,
		.kind = "policy", .rejected = "policy rejected, no capabilities granted",
		.nothing = "no capabilities granted" };
}

char *cd_quoted_path(const char *path)
{
	size_t n = strlen(path);
	char *q = malloc(n * 4 + 8);
	if (q != NULL)	/* paths come from options and command lines: escaped like any input */
		cd_quote(q, n * 4 + 8, path, n, n);
	return q;
}

/* A new source for @path, current for messages. NULL when memory runs out (said by finish). */
static struct cd_source *add_source(struct parser *p, const char *path)
{
	struct cd_policy *pol = p->pol;
	struct cd_source *more = realloc(pol->sources, (pol->nsources + 1) * sizeof(*more));
	if (more == NULL) {
		p->out_of_memory = 1;
		return NULL;
	}
	pol->sources = more;
	struct cd_source *src = &pol->sources[pol->nsources];
	memset(src, 0, sizeof(*src));
	src->path = strdup(path);
	src->shown = cd_quoted_path(path);
	if (src->path == NULL || src->shown == NULL) {
		free(src->path);
		free(src->shown);
		p->out_of_memory = 1;
		return NULL;
	}
	pol->nsources++;
	p->shown = src->shown;
	return src;
}

/* @path is at fault for the policy's status: the first one found is the one the verdict names. */
static void blame(struct parser *p, const char *path)
{
	if (p->pol->failed_path == NULL && (p->pol->failed_path = strdup(path)) == NULL)
		p->out_of_memory = 1;	/* the main file is named then: say why (finish) */
}

/* Parse the text just read into @src, the current file, counting its errors apart: a file's
 * verdict names the file the errors are in. 0, or -1 when memory ran out. */
static int parse_source(struct parser *p, struct cd_source *src, size_t len)
{
	size_t before = p->pol->nerrors;
	int rc = cd_parse_text(p, src->text, len);
	src->nerrors = p->pol->nerrors - before;
	return rc;
}

static void log_unsafe_path(const struct cd_reader *r, const struct cd_safe_why *why)
{
	char where[sizeof(why->where) * 4 + 8];
	cd_quote(where, sizeof(where), why->where, strlen(why->where), sizeof(why->where));
	if (why->fs != NULL)
		cd_log(r->log, LOG_ERR, "%s: unsafe %s file (%s %s: %s): %s", r->shown, r->kind,
		       where, why->what, why->fs, r->rejected);
	else
		cd_log(r->log, LOG_ERR, "%s: unsafe %s file (%s %s; owner uid %u, mode %04o): %s",
		       r->shown, r->kind, where, why->what, (unsigned)why->uid, why->mode, r->rejected);
}

/* What is wrong with the file or directory we opened, or NULL. */
static const char *unsafe_inode(const struct stat *st, uid_t owner, int want_dir)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return want_dir ? "not a directory" : "not a regular file";
	if (st->st_uid != owner)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* The resolved path through safe directories only (cd_safe.c), without hanging on a FIFO
 * (O_NONBLOCK), then what we actually opened is judged: checking the path first and opening
 * second would be a race. */
enum cd_status cd_open_judged(const struct cd_reader *r, int dfd, const char *name, const char *path,
			      int want_dir, int *fdp, struct stat *stp)
{
	struct cd_safe_why why;
	/* dfd >= 0: @name is an entry of that directory, judged already (a drop-in); otherwise
	 * the whole @path is walked from / */
	int fd, safe = dfd >= 0 ? cd_open_safe_at(dfd, name, path, &fd, &why)
				: cd_open_safe(path, r->owner, &fd, &why);
	if (dfd >= 0 && safe < 0 && errno == ELOOP)	/* a drop-in that is a link: judge its target */
		safe = cd_open_safe(path, r->owner, &fd, &why);
	if (safe == 0) {
		log_unsafe_path(r, &why);
		return CD_POLICY_UNSAFE;
	}
	if (safe < 0) {
		if (errno == ENOENT)
			return CD_POLICY_MISSING;	/* the caller says what that means */
		cd_log(r->log, LOG_ERR, "%s: cannot open: %m: %s", r->shown, r->nothing);
		return CD_POLICY_SYSERR;
	}
	if (fstat(fd, stp) < 0) {
		cd_log(r->log, LOG_ERR, "%s: cannot stat: %m: %s", r->shown, r->nothing);
		close(fd);
		return CD_POLICY_SYSERR;
	}
	const char *unsafe = unsafe_inode(stp, r->owner, want_dir);
	if (unsafe != NULL) {
		cd_log(r->log, LOG_ERR, "%s: unsafe %s %s (%s; owner uid %u, mode %04o): %s", r->shown,
		       r->kind, want_dir ? "directory" : "file", unsafe, (unsigned)stp->st_uid,
		       (unsigned)(stp->st_mode & 07777), r->rejected);
		close(fd);
		return CD_POLICY_UNSAFE;
	}
	*fdp = fd;
	return CD_POLICY_OK;
}

/* @when: "" when fstat's size says so, " while reading" when the file grew after it. */
static enum cd_status too_big(const struct cd_reader *r, size_t max_bytes, const char *when)
{
	cd_log(r->log, LOG_ERR, "%s: larger than the size limit (%zu bytes for the whole %s)%s: %s",
	       r->shown, max_bytes, r->kind, when, r->rejected);
	return CD_POLICY_UNSAFE;
}

/* The whole file in one buffer, plus a NUL after the last byte so that the last line ends
 * like the others. *budget is what the policy may still hold (all files count): a file that
 * is, or grows while it is read, larger than that gets the verdict of a big file. */
enum cd_status cd_read_all(const struct cd_reader *r, int fd, size_t size, size_t *budget,
			   size_t max_bytes, char **textp, size_t *lenp)
{
	if (size > *budget)
		return too_big(r, max_bytes, "");
	size_t alloc = size + 2, len = 0;
	char *text = malloc(alloc);
	for (;;) {
		if (text == NULL) {
			cd_log(r->log, LOG_ERR, "%s: out of memory: %s", r->shown, r->nothing);
			return CD_POLICY_SYSERR;
		}
		ssize_t n = read(fd, text + len, alloc - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(text);
			cd_log(r->log, LOG_ERR, "%s: read error: %m: %s", r->shown, r->nothing);
			return CD_POLICY_SYSERR;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > *budget) {
			free(text);
			return too_big(r, max_bytes, " while reading");
		}
		if (len == alloc - 1) {	/* it grew since fstat: read on, up to the budget */
			size_t more = alloc * 2 < *budget + 2 ? alloc * 2 : *budget + 2;
			char *bigger = realloc(text, more);
			if (bigger == NULL)
				free(text);
			text = bigger;
			alloc = more;
		}
	}
	text[len] = '\0';
	*budget -= len;
	*textp = text;
	*lenp = len;
	return CD_POLICY_OK;
}

/* The file read from @fd, fstat'ed as @before when it was opened, was not written meanwhile.
 * A change makes this reading void (CD_POLICY_SYSERR, never logged: the policy is read again). */
static enum cd_status unchanged_since(struct reading *r, int fd, const char *path, const struct stat *before)
{
	struct stat after;
	if (fstat(fd, &after) < 0) {
		cd_log(r->p.log, LOG_ERR, "%s: cannot stat: %m: no capabilities granted", r->p.shown);
		return CD_POLICY_SYSERR;
	}
	if (!cd_snapshot_same(before, &after)) {
		cd_snapshot_changed(&r->snap, path);
		return CD_POLICY_SYSERR;
	}
	return remember(r, path, &after);
}

/* One file of the policy, parsed: @path, or with @dfd >= 0 the entry @name of that judged
 * directory (@path then only names it). CD_POLICY_MISSING (not logged) when it does not
 * exist. */
static enum cd_status load_file(struct reading *r, int dfd, const char *name, const char *path)
{
	struct parser *p = &r->p;
	struct cd_source *src = add_source(p, path);
	if (src == NULL)
		return CD_POLICY_SYSERR;
	int fd;
	struct stat st;
	size_t len;
	struct cd_reader rd = policy_reader(p);
	enum cd_status status = cd_open_judged(&rd, dfd, name, path, 0, &fd, &st);
	/* a main file created meanwhile is a change; a drop-in's absence is the directory's */
	if (status == CD_POLICY_MISSING && dfd < 0 && remember(r, path, NULL) != CD_POLICY_OK)
		status = CD_POLICY_SYSERR;
	if (status == CD_POLICY_OK) {
		status = cd_read_all(&rd, fd, (size_t)st.st_size, &r->budget, r->max_bytes, &src->text,
				     &len);
		if (status == CD_POLICY_OK)
			status = unchanged_since(r, fd, path, &st);
		close(fd);
	}
	if (status == CD_POLICY_OK && parse_source(p, src, len) < 0)
		status = CD_POLICY_SYSERR;
	if (status != CD_POLICY_OK)
		blame(p, path);
	return status;
}

/* The stand-in's text as one file of the policy, named after the file it came from: counted
 * in the size budget and parsed as if it were read from the place it stands for. */
static enum cd_status load_stand_in(struct reading *r, const struct cd_stand_in *s)
{
	struct parser *p = &r->p;
	struct cd_source *src = add_source(p, s->shown_path);
	if (src == NULL)
		return CD_POLICY_SYSERR;
	src->stand_in = 1;
	struct cd_reader rd = policy_reader(p);
	enum cd_status status = CD_POLICY_OK;
	if (s->len > r->budget) {
		status = too_big(&rd, r->max_bytes, "");
	} else if ((src->text = malloc(s->len + 1)) == NULL) {
		p->out_of_memory = 1;
		status = CD_POLICY_SYSERR;
	} else {
		memcpy(src->text, s->text, s->len);
		src->text[s->len] = '\0';	/* the sentinel the line parser relies on */
		r->budget -= s->len;
		if (parse_source(p, src, s->len) < 0)
			status = CD_POLICY_SYSERR;
	}
	if (status != CD_POLICY_OK)
		blame(p, s->shown_path);
	return status;
}

/* The directory part of @path ("." for a bare name), malloc'ed. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL)
		return strdup(".");
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* The stand-in for the main file @path: its text, and the directory it would be installed in
 * judged as the main file's is (a file there can be swapped by whoever writes the directory). */
static enum cd_status load_main_stand_in(struct reading *r, const char *path,
					 const struct cd_stand_in *s)
{
	struct parser *p = &r->p;
	char *dir = dir_of(path);
	if (dir == NULL) {
		p->out_of_memory = 1;
		return CD_POLICY_SYSERR;
	}
	int fd;
	struct stat st;
	struct cd_reader rd = policy_reader(p);
	enum cd_status status = cd_open_judged(&rd, -1, NULL, dir, 1, &fd, &st);
	if (status == CD_POLICY_OK)
		close(fd);
	else if (status == CD_POLICY_MISSING)	/* not "policy file missing": there is a text */
		cd_log(p->log, LOG_ERR, "%s: its directory is missing: no capabilities granted",
		       p->shown);
	if (status != CD_POLICY_OK) {
		blame(p, dir);
		free(dir);
		return status == CD_POLICY_MISSING ? CD_POLICY_SYSERR : status;
	}
	free(dir);
	return load_stand_in(r, s);
}

static int has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n > k && strcmp(name + n - k, suffix) == 0;
}

/* Editors and package managers leave files beside the ones an administrator means: only
 * NAME.conf is read, and not .NAME (dotfiles, editor locks). Why the entry @name (readdir's
 * @type) is not read, for check to say; NULL for a drop-in. */
static const char *not_a_dropin(const char *name, unsigned char type)
{
	static const char *const backups[] = {
		"~", "#", ".bak", ".old", ".orig", ".rej", ".swp", ".tmp", ".dpkg-old", ".dpkg-new",
		".dpkg-dist", ".dpkg-bak", ".dpkg-tmp", ".ucf-old", ".ucf-new", ".ucf-dist",
		".rpmnew", ".rpmsave",
	};
	if (name[0] == '.')
		return "a dotfile";
	if (has_suffix(name, ".conf"))
		return NULL;
	for (size_t i = 0; i < sizeof(backups) / sizeof(backups[0]); i++)
		if (has_suffix(name, backups[i]))
			return "a backup file";
	if (type == DT_DIR)
		return "a directory";
	if (type != DT_REG && type != DT_LNK && type != DT_UNKNOWN)
		return "not a regular file";
	return "no .conf suffix (drop-ins are NAME.conf)";
}

static int by_bytes(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cd_dropin_name_ok(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL && not_a_dropin(name, DT_REG) == NULL;
}

/* The stand-in for a drop-in is read whether or not a file of its name exists yet (edit NAME
 * creates one, a staged file may be new): its name joins @names, in byte order. -1 when
 * memory runs out or the name is not a drop-in's (nothing the module would read). */
static int add_stand_in_name(struct parser *p, char ***names, size_t *n)
{
	const struct cd_stand_in *s = p->opts->stand_in;
	if (s == NULL || s->dropin == NULL)
		return 0;
	if (!cd_dropin_name_ok(s->dropin)) {
		cd_log(p->log, LOG_ERR, "%s: not a drop-in name: no capabilities granted",
		       s->shown_path);
		return -1;
	}
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*names)[i], s->dropin) == 0)
			return 0;	/* read in place of that file */
	char **more = realloc(*names, (*n + 1) * sizeof(*more));
	if (more != NULL)
		*names = more;
	if (more == NULL || (more[*n] = strdup(s->dropin)) == NULL) {
		p->out_of_memory = 1;	/* said by finish */
		return -1;
	}
	(*n)++;
	qsort(*names, *n, sizeof(**names), by_bytes);
	return 0;
}

/* One more entry not read. -1 when memory runs out. */
static int skip_entry(struct cd_policy *pol, const char *name, const char *why)
{
	struct cd_skipped *more = realloc(pol->ignored, (pol->nignored + 1) * sizeof(*more));
	if (more == NULL)
		return -1;
	pol->ignored = more;
	if ((more[pol->nignored].name = strdup(name)) == NULL)
		return -1;
	more[pol->nignored++].why = why;
	return 0;
}

/* The names in the directory open at @fd: drop-ins into @names (sorted), the rest into
 * pol->ignored with the reason. -1 when memory runs out or the directory cannot be read
 * (errno). */
static int list_dropins(struct parser *p, int fd, char ***names, size_t *n)
{
	DIR *d = fdopendir(fd);
	if (d == NULL)
		return -1;
	struct dirent *e;
	int rc = 0;
	errno = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		const char *why = not_a_dropin(e->d_name, e->d_type);
		if (why != NULL) {
			if (skip_entry(p->pol, e->d_name, why) < 0) {
				rc = -1;
				break;
			}
			errno = 0;
			continue;
		}
		char **more = realloc(*names, (*n + 1) * sizeof(*more));
		if (more == NULL || (more[*n] = strdup(e->d_name)) == NULL) {
			if (more != NULL)
				*names = more;
			rc = -1;
			break;
		}
		*names = more;
		(*n)++;
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = -1;	/* readdir failed: a drop-in unread is a policy half read */
	int saved = errno;
	closedir(d);
	if (rc == 0 && *n > 1)	/* an empty directory: *names is NULL, which qsort may not get */
		qsort(*names, *n, sizeof(**names), by_bytes);
	errno = saved;
	return rc;
}

/* A drop-in listed a moment ago cannot be opened: a link to nothing says so; anything else was
 * removed while the policy was read (and the directory looks the same: otherwise this reading
 * is dropped before its messages are logged). */
static void log_missing_dropin(struct parser *p, int dfd, const char *name)
{
	struct stat st;
	char *target = NULL, *shown = NULL;
	int replaced = 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		/* Room for one byte more than the link held at fstatat: an answer that long is
		 * another link's (replaced in between), whose target is not shown as this one's. */
		size_t size = st.st_size > 0 ? (size_t)st.st_size + 1 : PATH_MAX;
		ssize_t n = (target = malloc(size + 1)) != NULL ? readlinkat(dfd, name, target, size) : -1;
		replaced = n >= 0 && (size_t)n >= size;
		if (n >= 0 && !replaced) {
			target[n] = '\0';
			shown = cd_quoted_path(target);
		}
	}
	if (shown != NULL)
		cd_log(p->log, LOG_ERR, "%s: dangling symbolic link to '%s': no capabilities granted",
		       p->shown, shown);
	else if (replaced)
		cd_log(p->log, LOG_ERR, "%s: replaced while the policy was read: no capabilities "
		       "granted", p->shown);
	else
		cd_log(p->log, LOG_ERR, "%s: vanished while the policy was read: no capabilities "
		       "granted", p->shown);
	free(target);
	free(shown);
}

static enum cd_status load_dropins(struct reading *r, const char *dir)
{
	struct parser *p = &r->p;
	const char *main_shown = p->shown;
	char *dir_shown = cd_quoted_path(dir);
	if (dir_shown == NULL) {
		p->out_of_memory = 1;
		return CD_POLICY_SYSERR;
	}
	p->shown = dir_shown;
	struct stat st;
	char **names = NULL;
	size_t n = 0;
	int fd = -1, lfd;
	struct cd_reader rd = policy_reader(p);
	enum cd_status status = cd_open_judged(&rd, -1, NULL, dir, 1, &fd, &st);
	/* the directory as it was before it was listed: a drop-in added, removed or renamed over
	 * changes it (checked by path after the last drop-in, cd_snapshot.c) */
	if (status == CD_POLICY_MISSING) {
		status = remember(r, dir, NULL);	/* no drop-in directory: no drop-ins */
	} else if (status == CD_POLICY_OK && remember(r, dir, &st) != CD_POLICY_OK) {
		status = CD_POLICY_SYSERR;
	} else if (status == CD_POLICY_OK && ((lfd = dup(fd)) < 0 || list_dropins(p, lfd, &names, &n) < 0)) {
		cd_log(p->log, LOG_ERR, "%s: cannot read the directory: %m: no capabilities granted",
		       dir_shown);
		status = CD_POLICY_SYSERR;
	}
	if (status == CD_POLICY_OK && add_stand_in_name(p, &names, &n) < 0)
		status = CD_POLICY_SYSERR;
	if (status != CD_POLICY_OK)
		blame(p, dir);
	const struct cd_stand_in *s = p->opts->stand_in;
	for (size_t i = 0; i < n && status == CD_POLICY_OK; i++) {
		char *path = NULL;
		if (s != NULL && s->dropin != NULL && strcmp(names[i], s->dropin) == 0) {
			status = load_stand_in(r, s);
		} else if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
			path = NULL;
			p->out_of_memory = 1;
			status = CD_POLICY_SYSERR;
		} else if ((status = load_file(r, fd, names[i], path)) == CD_POLICY_MISSING) {
			/* listed a moment ago: never a policy read without it */
			log_missing_dropin(p, fd, names[i]);
			status = CD_POLICY_SYSERR;
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (fd >= 0)	/* each drop-in was opened relative to it: the directory is walked once */
		close(fd);
	free(dir_shown);
	p->shown = main_shown;
	return status;
}

static void drop_rules(struct cd_policy *pol)
{
	free(pol->rules);
	free(pol->outside);
	pol->rules = pol->outside = NULL;
	pol->nrules = pol->noutside = 0;
}

/* "FILE: policy rejected (N errors)" for each file with errors, under its own name; the
 * errors not shown are counted where they are (the first CD_MAX_REPORTED_ERRORS of the whole
 * policy were shown). */
static void log_rejected_files(struct parser *p)
{
	struct cd_policy *pol = p->pol;
	size_t before = 0;
	for (size_t i = 0; i < pol->nsources; i++) {
		const struct cd_source *src = &pol->sources[i];
		if (src->nerrors == 0)
			continue;
		size_t room = before < CD_MAX_REPORTED_ERRORS ? CD_MAX_REPORTED_ERRORS - before : 0;
		cd_log_rejected(p->log, src->shown, src->nerrors,
				src->nerrors > room ? src->nerrors - room : 0, "policy",
				"no capabilities granted");
		before += src->nerrors;
		blame(p, src->path);
	}
}

/* The verdict for all files: syntax errors summed up once per file, and no rule kept unless
 * OK. Memory can run out while the files at fault are named (blame): then the verdict is
 * out of memory, not a syntax error that names the main file for a drop-in's error. */
static enum cd_status finish(struct parser *p, enum cd_status status)
{
	struct cd_policy *pol = p->pol;
	if (!p->out_of_memory && status == CD_POLICY_OK && pol->nerrors > 0) {
		log_rejected_files(p);
		status = CD_POLICY_SYNTAX;
	}
	if (p->out_of_memory || status == CD_POLICY_SYSERR) {
		if (p->out_of_memory)
			cd_log(p->log, LOG_ERR, "%s: out of memory: no capabilities granted", pol->shown);
		status = CD_POLICY_SYSERR;
	}
	if (status != CD_POLICY_OK)
		drop_rules(pol);
	return pol->status = status;
}

/* Start @pol for the main file @path (the name messages use). -1 when memory runs out. */
static int init_policy(struct cd_policy *pol, const char *path)
{
	memset(pol, 0, sizeof(*pol));
	pol->path = strdup(path);
	pol->shown = cd_quoted_path(path);
	return pol->path != NULL && pol->shown != NULL ? 0 : -1;
}

/* Read the main file and the drop-ins once, into @pol, logging through @log; r->snap says
 * what was read. */
static enum cd_status read_once(struct reading *r, struct cd_policy *pol, const char *path,
				const struct cd_load_opts *opts, struct cd_log *log)
{
	r->max_bytes = r->budget = opts->max_bytes ? opts->max_bytes : CD_MAX_POLICY_BYTES;
	if (init_policy(pol, path) < 0) {
		cd_log(log, LOG_ERR, "out of memory before the policy was read: no capabilities granted");
		return pol->status = CD_POLICY_SYSERR;
	}
	r->p = (struct parser){ .pol = pol, .opts = opts, .log = log, .shown = pol->shown, .memo = { .cap = -1 } };
	const struct cd_stand_in *s = opts->stand_in;
	enum cd_status status = s != NULL && s->dropin == NULL ? load_main_stand_in(r, path, s)
							       : load_file(r, -1, NULL, path);
	if (status == CD_POLICY_MISSING) {
		/* an error, as any reason the module grants nothing (capdelegate(8): exit 2) */
		cd_log(log, LOG_ERR, "%s: policy file missing: no capabilities granted", pol->shown);
		drop_rules(pol);
		return pol->status = CD_POLICY_MISSING;
	}
	r->p.shown = pol->shown;
	if (status == CD_POLICY_OK && opts->confdir != NULL && opts->confdir[0] != '\0')
		status = load_dropins(r, opts->confdir);
	return finish(&r->p, status);
}

/* Every reading changed under us: nothing from any of them. */
static enum cd_status kept_changing(struct cd_policy *pol, const char *path, const char *where,
				    struct cd_log *log)
{
	cd_policy_free(pol);
	if (init_policy(pol, path) < 0) {
		cd_log(log, LOG_ERR, "out of memory: no capabilities granted");
		return pol->status = CD_POLICY_SYSERR;
	}
	char *shown = where != NULL ? cd_quoted_path(where) : NULL;
	cd_log(log, LOG_ERR, "%s: changed while it was read, %d times in a row: no capabilities "
	       "granted (replace the policy by rename, see capdelegate.conf(5))",
	       shown != NULL ? shown : pol->shown, CD_POLICY_READ_ATTEMPTS);
	free(shown);
	return pol->status = CD_POLICY_SYSERR;
}

/* Read until one reading saw a single version (its messages are then logged, the others'
 * dropped), at most CD_POLICY_READ_ATTEMPTS times. */
enum cd_status cd_policy_load(struct cd_policy *pol, const char *path,
			      const struct cd_load_opts *opts, struct cd_log *log)
{
	if (opts == NULL)
		opts = &default_opts;
	for (int attempt = 1;; attempt++) {
		struct reading r = { 0 };
		struct cd_log_held held;
		cd_log_hold(&held, log);
		enum cd_status status = read_once(&r, pol, path, opts, &held.quiet);
		int whole = cd_snapshot_whole(&r.snap, opts->no_settle ? 0 : CD_POLICY_SETTLE_MS);
		int lost = held.lost || held.quiet.lost;	/* a reason not kept, or not formatted */
		cd_log_release(&held, log, whole);
		if (whole && lost && status != CD_POLICY_SYSERR) {
			/* a reason not logged is a verdict not explained: out of memory, as anywhere */
			cd_log(log, LOG_ERR, "%s: out of memory: no capabilities granted", pol->shown);
			drop_rules(pol);
			status = pol->status = CD_POLICY_SYSERR;
		}
		if (whole || attempt == CD_POLICY_READ_ATTEMPTS) {
			if (!whole)
				status = kept_changing(pol, path, r.snap.where, log);
			cd_snapshot_free(&r.snap);
			return status;
		}
		cd_log(log, LOG_DEBUG, "%s: changed while it was read: reading the policy again",
		       r.snap.where != NULL ? r.snap.where : path);
		cd_snapshot_free(&r.snap);
		cd_policy_free(pol);
	}
}

enum cd_status cd_policy_parse(struct cd_policy *pol, const char *name, const char *text, size_t len,
			       const struct cd_load_opts *opts, struct cd_log *log)
{
	if (opts == NULL)
		opts = &default_opts;
	size_t max_bytes = opts->max_bytes ? opts->max_bytes : CD_MAX_POLICY_BYTES;
	if (init_policy(pol, name) < 0) {
		cd_log(log, LOG_ERR, "out of memory before the policy was read: no capabilities granted");
		return pol->status = CD_POLICY_SYSERR;
	}
	struct parser p = { .pol = pol, .opts = opts, .log = log, .shown = pol->shown, .memo = { .cap = -1 } };
	struct cd_source *src = add_source(&p, name);
	if (src == NULL)
		return finish(&p, CD_POLICY_SYSERR);
	if (len > max_bytes) {
		cd_log(log, LOG_ERR, "%s: larger than the size limit (%zu bytes): policy rejected, "
		       "no capabilities granted", pol->shown, max_bytes);
		return finish(&p, CD_POLICY_UNSAFE);
	}
	if ((src->text = malloc(len + 1)) == NULL) {
		p.out_of_memory = 1;
		return finish(&p, CD_POLICY_SYSERR);
	}
	memcpy(src->text, text, len);
	src->text[len] = '\0';	/* the sentinel the line parser relies on */
	return finish(&p, parse_source(&p, src, len) < 0 ? CD_POLICY_SYSERR : CD_POLICY_OK);
}

void cd_policy_free(struct cd_policy *pol)
{
	drop_rules(pol);
	for (size_t i = 0; i < pol->nsources; i++) {
		free(pol->sources[i].path);
		free(pol->sources[i].shown);
		free(pol->sources[i].text);
	}
	for (size_t i = 0; i < pol->nignored; i++)
		free(pol->ignored[i].name);
	free(pol->sources);
	free(pol->ignored);
	free(pol->failed_path);
	free(pol->path);
	free(pol->shown);
	memset(pol, 0, sizeof(*pol));
}
