/*
 * cd_marks.c - capdelegate-files.conf(5): one mark per line, "PATH CAPS [OPTION ...]".
 *
 * Every byte is hostile, as in the policy: one bad line rejects the whole file, since a marks
 * file half understood would set bits its author did not mean. CAPS is libcap's text form, read
 * by cap_from_text; libcap says nothing about how it read the text, so what it returns is
 * checked against the names the text lists (each a whole libcap name, read by the policy's own
 * scanner) and against what a mark may hold: fI, fE only with fI for the same capabilities, no
 * fP (a file with fP grants to everyone who executes it: delegation bypassed).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd_marks.h"
#include "cd_parse.h"

struct mparser {
	struct cd_marks *m;
	struct cd_log *log;
	size_t alloc;
	int out_of_memory;
};

static void mark_error(struct mparser *p, size_t line, const char *why, const char *tok, size_t len)
{
	cd_token_error(p->log, p->m->shown, &p->m->nerrors, line, why, tok, len);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static size_t field_end(const char *line, size_t i, size_t len)
{
	while (i < len && !is_blank(line[i]))
		i++;
	return i;
}

/* What is wrong with the decoded path @s (@n bytes), or NULL. */
static const char *bad_path(const char *s, size_t n)
{
	if (s[0] != '/')
		return "path is not absolute";
	if (n >= PATH_MAX)
		return "path longer than PATH_MAX";
	if (n == 1 || s[n - 1] == '/')
		return "path names a directory (ends in '/')";
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '/')
			continue;
		size_t k = i + 1;
		while (k < n && s[k] != '/')
			k++;
		size_t c = k - i - 1;
		if (c == 0)
			return "empty path component ('//')";
		if ((c == 1 && s[i + 1] == '.') || (c == 2 && s[i + 1] == '.' && s[i + 2] == '.'))
			return "'.' or '..' in path: write the path itself";
	}
	return NULL;
}

/* The PATH field line[start..end), decoded in place (an escape is longer than its byte) and
 * NUL-terminated. NULL and *why on error. */
static char *scan_path(char *line, size_t start, size_t end, const char **why)
{
	size_t out = start;
	for (size_t i = start; i < end;) {
		unsigned char c = (unsigned char)line[i];
		size_t took;
		if (cd_path_byte_bare(c)) {
			line[out++] = (char)c;
			i++;
		} else if (c == '\\') {
			if ((took = cd_unescape(line + i, &line[out])) == 0) {
				*why = "NUL or control character in path";
				return NULL;
			}
			out++;
			i += took;
		} else {
			*why = c < 0x20 || c == 0x7f ? "control character in line"
			       : c == '#' ? "'#' in path (write it as \\043)"
			       : "byte not allowed bare in a path (write it as \\ooo)";
			return NULL;
		}
	}
	line[out] = '\0';	/* out <= end: the field's own bytes, or the blank after it */
	*why = bad_path(line + start, out - start);
	return *why == NULL ? line + start : NULL;
}

/* The CAPS field (@t, @n bytes, no blank in it): libcap's text for fI or fI+fE. The names
 * before the first operator are read by the policy's scanner (whole libcap names, no "all",
 * no numbers); cap_from_text reads the whole text; both must agree. On error *tok and *toklen
 * say which bytes to show (the whole field unless one name is at fault). */
static const char *scan_caps(const char *t, size_t n, struct cd_mark *mk, size_t *tok, size_t *toklen)
{
	size_t op = 0;
	while (op < n && t[op] != '=' && t[op] != '+' && t[op] != '-')
		op++;
	if (op == n)
		return "no '=', '+' or '-' in capability text (libcap's form: cap_net_raw=i)";
	if (op == 0)
		return "no capability named (libcap reads '=' alone as every capability)";
	if (memchr(t, '#', op) != NULL)
		return "'#' in capability text";
	for (size_t i = op; i < n; i++)
		if (memchr("=+-eip", t[i], 6) == NULL)
			return "flags are e and i after '=', '+' or '-'";
	cd_capmask named;
	struct cd_caps_error err;
	if (cd_scan_caps(t, op, &named, &err, NULL) < 0) {
		if (err.len > 0) {
			*tok = err.off;
			*toklen = err.len;
		}
		return err.why;
	}
	if (named == 0)
		return "no capability named";
	char *text = strndup(t, n);
	if (text == NULL)
		return "out of memory";
	cap_t caps = cap_from_text(text);
	free(text);
	if (caps == NULL)
		return "libcap cannot read this capability text";
	cd_capmask p = cd_cap_flag_mask(caps, CAP_PERMITTED), i = cd_cap_flag_mask(caps, CAP_INHERITABLE),
		   e = cd_cap_flag_mask(caps, CAP_EFFECTIVE);
	cap_free(caps);
	if (p != 0)
		return "fP in a mark: everyone who executes the file would gain it, bypassing delegation";
	if (i == 0)
		return "no fI bit left: a mark gives fI";
	if (i != named)
		return "fI is not the capabilities named";
	if (e != 0 && e != i)
		return "fE only together with fI for the same capabilities (=ei)";
	mk->inheritable = i;
	mk->effective = e != 0;
	return NULL;
}

static int keep_mark(struct mparser *p, const struct cd_mark *mk)
{
	struct cd_marks *m = p->m;
	if (cd_grow((void **)&m->marks, &p->alloc, m->nmarks, sizeof(*m->marks)) < 0)
		return -1;
	m->marks[m->nmarks++] = *mk;
	return 0;
}

/* OPTION tokens from line[i] on, until the end or a comment. 0, or -1 after an error. */
static int scan_options(struct mparser *p, size_t lineno, const char *line, size_t i, size_t len,
			struct cd_mark *mk)
{
	for (;;) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len || line[i] == '#')
			return 0;
		size_t end = field_end(line, i, len);
		if (end - i == 6 && memcmp(line + i, "nosuid", 6) == 0 && !(mk->flags & CD_MARK_NOSUID)) {
			mk->flags |= CD_MARK_NOSUID;
		} else {
			mark_error(p, lineno, end - i == 6 && memcmp(line + i, "nosuid", 6) == 0 ?
				   "option given twice" : "unknown option", line + i, end - i);
			return -1;
		}
		i = end;
	}
}

static void parse_line(struct mparser *p, size_t lineno, char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')	/* a DOS line end is tolerated */
		len--;
	size_t i = 0;
	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[i] == '#')
		return;
	struct cd_mark mk = { .line = lineno };
	const char *why = NULL;
	size_t start = i, end = field_end(line, i, len);
	size_t caps = end;
	while (caps < len && is_blank(line[caps]))
		caps++;
	size_t caps_end = field_end(line, caps, len);
	/* the options are read before the path is decoded in place over its own bytes */
	if (caps == len || line[caps] == '#') {
		mark_error(p, lineno, "missing capabilities after the path", line + start, end - start);
		return;
	}
	size_t tok = 0, toklen = caps_end - caps;
	if ((why = scan_caps(line + caps, caps_end - caps, &mk, &tok, &toklen)) != NULL) {
		mark_error(p, lineno, why, line + caps + tok, toklen);
		return;
	}
	if (scan_options(p, lineno, line, caps_end, len, &mk) < 0)
		return;
	if ((mk.path = scan_path(line, start, end, &why)) == NULL) {
		mark_error(p, lineno, why, line + start, end - start);
		return;
	}
	if (keep_mark(p, &mk) < 0)
		p->out_of_memory = 1;
}

static int by_path(const void *a, const void *b)
{
	const struct cd_mark *x = *(struct cd_mark *const *)a, *y = *(struct cd_mark *const *)b;
	int c = strcmp(x->path, y->path);
	return c != 0 ? c : (x->line > y->line) - (x->line < y->line);
}

/* A path declared twice: which line wins would be a guess. Sorted, so any number of marks
 * costs n log n; each later line is an error naming the first. */
static void find_duplicates(struct mparser *p)
{
	struct cd_marks *m = p->m;
	if (m->nmarks < 2)
		return;
	struct cd_mark **sorted = malloc(m->nmarks * sizeof(*sorted));
	if (sorted == NULL) {
		p->out_of_memory = 1;
		return;
	}
	for (size_t i = 0; i < m->nmarks; i++)
		sorted[i] = &m->marks[i];
	qsort(sorted, m->nmarks, sizeof(*sorted), by_path);
	size_t first = 0;
	for (size_t i = 1; i < m->nmarks; i++) {
		if (strcmp(sorted[i]->path, sorted[first]->path) != 0) {
			first = i;
			continue;
		}
		char why[64];
		snprintf(why, sizeof(why), "path declared again (first on line %zu)", sorted[first]->line);
		mark_error(p, sorted[i]->line, why, sorted[i]->path, strlen(sorted[i]->path));
	}
	free(sorted);
}

static void parse_text(struct mparser *p, char *text, size_t len)
{
	char *line = text, *end = text + len;
	size_t lineno = 0;
	while (line < end && !p->out_of_memory) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		lineno++;
		if (memchr(line, '\0', n) != NULL)
			mark_error(p, lineno, "NUL byte in line", NULL, 0);
		else
			parse_line(p, lineno, line, n);
		line += n + 1;
	}
	p->m->nlines = lineno;
	if (!p->out_of_memory)
		find_duplicates(p);
}

static enum cd_status finish(struct mparser *p, enum cd_status status)
{
	struct cd_marks *m = p->m;
	if (p->out_of_memory) {
		cd_log(p->log, LOG_ERR, "%s: out of memory: no file changed", m->shown);
		status = CD_POLICY_SYSERR;
	} else if (status == CD_POLICY_OK && m->nerrors > 0) {
		cd_log_rejected(p->log, m->shown, m->nerrors, m->nerrors > CD_MAX_REPORTED_ERRORS ?
				m->nerrors - CD_MAX_REPORTED_ERRORS : 0, "marks file", "no file changed");
		status = CD_POLICY_SYNTAX;
	}
	if (status != CD_POLICY_OK) {
		free(m->marks);
		m->marks = NULL;
		m->nmarks = 0;
	}
	return m->status = status;
}

static int init_marks(struct cd_marks *m, const char *path)
{
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->shown = cd_quoted_path(path);
	return m->path != NULL && m->shown != NULL ? 0 : -1;
}

static size_t max_bytes(const struct cd_load_opts *opts)
{
	return opts != NULL && opts->max_bytes ? opts->max_bytes : CD_MAX_MARKS_BYTES;
}

enum cd_status cd_marks_load(struct cd_marks *m, const char *path, const struct cd_load_opts *opts,
			     struct cd_log *log)
{
	struct mparser p = { .m = m, .log = log };
	if (init_marks(m, path) < 0) {
		cd_log(log, LOG_ERR, "out of memory before the marks file was read: no file changed");
		return m->status = CD_POLICY_SYSERR;
	}
	struct cd_reader rd = { .log = log, .shown = m->shown, .owner = opts ? opts->owner : 0,
		.kind = "marks", .rejected = "marks file rejected, no file changed",
		.nothing = "no file changed" };
	size_t limit = max_bytes(opts), budget = limit, len;
	struct stat st;
	int fd;
	enum cd_status status = cd_open_judged(&rd, -1, NULL, path, 0, &fd, &st);
	if (status != CD_POLICY_OK)
		return m->status = status;
	status = cd_read_all(&rd, fd, (size_t)st.st_size, &budget, limit, &m->text, &len);
	close(fd);
	if (status == CD_POLICY_OK)
		parse_text(&p, m->text, len);
	return finish(&p, status);
}

enum cd_status cd_marks_parse(struct cd_marks *m, const char *name, const char *text, size_t len,
			      const struct cd_load_opts *opts, struct cd_log *log)
{
	struct mparser p = { .m = m, .log = log };
	if (init_marks(m, name) < 0)
		return m->status = CD_POLICY_SYSERR;
	if (len > max_bytes(opts)) {
		cd_log(log, LOG_ERR, "%s: larger than the size limit (%zu bytes): marks file rejected, "
		       "no file changed", m->shown, max_bytes(opts));
		return finish(&p, CD_POLICY_UNSAFE);
	}
	if ((m->text = malloc(len + 1)) == NULL)
		return finish(&p, CD_POLICY_SYSERR);
	memcpy(m->text, text, len);
	m->text[len] = '\0';
	parse_text(&p, m->text, len);
	return finish(&p, CD_POLICY_OK);
}

/* One identity of a mark's file: its own inode, or its directory's inode and its name there. */
struct alias_key {
	dev_t dev;
	ino_t ino;
	const char *name;	/* NULL: the file's inode; else its last component */
	size_t mark;
};

static int by_key(const void *a, const void *b)
{
	const struct alias_key *x = a, *y = b;
	if ((x->name == NULL) != (y->name == NULL))
		return x->name == NULL ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	int c = x->name != NULL ? strcmp(x->name, y->name) : 0;
	return c != 0 ? c : (x->mark > y->mark) - (x->mark < y->mark);
}

/* The keys of every mark, @locate asked once per mark; *n set. NULL when memory runs out. */
static struct alias_key *alias_keys(const struct cd_marks *m, cd_mark_locate_fn locate, void *arg,
				    size_t *n)
{
	struct alias_key *keys = malloc(2 * m->nmarks * sizeof(*keys));
	*n = 0;
	for (size_t i = 0; keys != NULL && i < m->nmarks; i++) {
		struct cd_mark_where w = { 0 };
		if (locate(arg, &m->marks[i], &w) < 0) {
			free(keys);
			return NULL;
		}
		if (w.file_known)
			keys[(*n)++] = (struct alias_key){ w.dev, w.ino, NULL, i };
		if (w.dir_known)
			keys[(*n)++] = (struct alias_key){ w.dir_dev, w.dir_ino,
							   strrchr(m->marks[i].path, '/') + 1, i };
	}
	return keys;
}

/* For each mark, the first mark naming its file (@first; SIZE_MAX: none) and whether through
 * its directory (@by_dir), else its inode: the same key in a sorted run, n log n. */
static void alias_runs(struct alias_key *keys, size_t n, size_t *first, char *by_dir)
{
	qsort(keys, n, sizeof(*keys), by_key);
	for (size_t i = 1, run = 0; i < n; i++) {
		struct alias_key k = keys[i];
		k.mark = keys[run].mark;
		if (by_key(&k, &keys[run]) != 0) {
			run = i;
			continue;
		}
		size_t *f = &first[keys[i].mark];
		if (k.mark < *f || (k.mark == *f && k.name != NULL)) {
			*f = k.mark;
			by_dir[keys[i].mark] = k.name != NULL;
		}
	}
}

/* Each later line of a file named twice: an error at that line naming both lines and both
 * paths whole (a path cut short as a token is cut would hide which name is the second one). */
static void alias_errors(struct mparser *p, const size_t *first, const char *by_dir)
{
	struct cd_marks *m = p->m;
	for (size_t i = 0; i < m->nmarks && !p->out_of_memory; i++) {
		if (first[i] == SIZE_MAX)
			continue;
		const struct cd_mark *mk = &m->marks[i], *was = &m->marks[first[i]];
		char *shown = cd_quoted_path(was->path), *again = cd_quoted_path(mk->path), *why = NULL;
		if (shown == NULL || again == NULL ||
		    asprintf(&why, "lines %zu and %zu name one file, '%s' and '%s' (%s): declare it once",
			     was->line, mk->line, shown, again, by_dir[i] ?
			     "one directory reached by two paths" : "hard links to one inode") < 0)
			p->out_of_memory = 1;
		else
			mark_error(p, mk->line, why, NULL, 0);
		free(shown);
		free(again);
		free(why);
	}
}

enum cd_status cd_marks_reject_aliases(struct cd_marks *m, cd_mark_locate_fn locate, void *arg,
				       struct cd_log *log)
{
	struct mparser p = { .m = m, .log = log };
	if (m->status != CD_POLICY_OK || m->nmarks < 2)
		return m->status;
	size_t n, *first = malloc(m->nmarks * sizeof(*first));
	char *by_dir = calloc(m->nmarks, 1);
	struct alias_key *keys = first && by_dir ? alias_keys(m, locate, arg, &n) : NULL;
	if (keys == NULL) {
		p.out_of_memory = 1;
	} else {
		for (size_t i = 0; i < m->nmarks; i++)
			first[i] = SIZE_MAX;
		alias_runs(keys, n, first, by_dir);
		alias_errors(&p, first, by_dir);
	}
	free(keys);
	free(first);
	free(by_dir);
	return finish(&p, CD_POLICY_OK);
}

void cd_marks_free(struct cd_marks *m)
{
	free(m->marks);
	free(m->text);
	free(m->path);
	free(m->shown);
	memset(m, 0, sizeof(*m));
}

cap_t cd_mark_caps(const struct cd_mark *mk)
{
	cap_t caps = cap_init();
	for (int cap = 0; caps != NULL && cap < 64; cap++) {
		if (!(mk->inheritable & ((cd_capmask)1 << cap)))
			continue;
		cap_value_t v = cap;
		if (cap_set_flag(caps, CAP_INHERITABLE, 1, &v, CAP_SET) < 0 ||
		    (mk->effective && cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0)) {
			cap_free(caps);
			caps = NULL;
		}
	}
	return caps;
}

char *cd_fcaps_text(cap_t caps)
{
	if (cd_cap_flag_mask(caps, CAP_PERMITTED) == 0 && cd_cap_flag_mask(caps, CAP_INHERITABLE) == 0 &&
	    cd_cap_flag_mask(caps, CAP_EFFECTIVE) == 0)
		return strdup("none");
	char *text = cap_to_text(caps, NULL);
	if (text == NULL)
		return NULL;
	char *copy = strdup(text);
	cap_free(text);
	return copy;
}
