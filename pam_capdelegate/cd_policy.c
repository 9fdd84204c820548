/*
 * cd_policy.c - read capdelegate.conf(5) into rules.
 *
 * Every byte is treated as hostile: the file must be safe (regular, root-owned, not writable by
 * group or others, at most 1 MiB), every line is validated, and one bad line rejects the whole
 * policy, because a policy that is half understood can grant what its author did not mean (the
 * over-grant pam_cap's fixed 4096-byte fgets produces is the cautionary tale). Lines are read
 * with getline, so a line is never split.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd_policy.h"
#include "cd_safe.h"

/* Enough to fix a file; a hostile file must not flood syslog. */
#define MAX_REPORTED_ERRORS 10
/* How much of an offending token an error message shows. */
#define MAX_QUOTED 48

struct parser {
	struct cd_policy *pol;
	const struct cd_load_opts *opts;
	struct cd_log *log;
	size_t rules_alloc;
	int out_of_memory;
	struct cd_cap_memo memo;
};

const char *cd_status_str(enum cd_status st)
{
	switch (st) {
	case CD_POLICY_OK: return "ok";
	case CD_POLICY_MISSING: return "missing";
	case CD_POLICY_UNSAFE: return "unsafe";
	case CD_POLICY_SYNTAX: return "syntax error";
	case CD_POLICY_SYSERR: return "system error";
	}
	return "?";
}

static void syntax_error(struct parser *p, size_t line, const char *why, const char *tok, size_t len)
{
	p->pol->nerrors++;
	if (p->pol->nerrors > MAX_REPORTED_ERRORS)
		return;
	if (tok != NULL && len > 0) {
		char quoted[MAX_QUOTED * 4 + 8];
		cd_quote(quoted, sizeof(quoted), tok, len, MAX_QUOTED);
		cd_log(p->log, LOG_ERR, "%s:%zu: %s: '%s'", p->pol->shown, line, why, quoted);
	} else {
		cd_log(p->log, LOG_ERR, "%s:%zu: %s", p->pol->shown, line, why);
	}
}

static int keep_rule(struct parser *p, const struct cd_rule *tmp)
{
	struct cd_policy *pol = p->pol;

	if (p->opts->keep != NULL && !p->opts->keep(tmp, p->opts->keep_arg))
		return 0;
	if (pol->nrules == p->rules_alloc) {
		size_t n = p->rules_alloc ? p->rules_alloc * 2 : 16;
		struct cd_rule *nr = realloc(pol->rules, n * sizeof(*nr));
		if (nr == NULL)
			return -1;
		pol->rules = nr;
		p->rules_alloc = n;
	}
	struct cd_rule *r = &pol->rules[pol->nrules];
	*r = *tmp;
	if (tmp->name != NULL && (r->name = strdup(tmp->name)) == NULL)
		return -1;
	pol->nrules++;
	return 0;
}

/* User and group names as shadow-utils and NSS accept them: [A-Za-z0-9_.-]+, not starting
 * with '-' (it would read as an option elsewhere), optionally ending in '$' (Samba machines).
 * @s..@len was scanned as name bytes plus an optional final '$'. */
static int valid_name(const char *s, size_t len)
{
	return len > 0 && len <= CD_MAX_NAME_LEN && s[0] != '-' && !(len == 1 && s[0] == '$');
}

/* Scan the subject at line[i]: "*", "@name" or "name". Returns the index after it, and
 * sets r->kind and r->name (NUL-terminated in place, the line buffer is ours). 0 if bad. */
static size_t scan_subject(struct cd_rule *r, char *line, size_t i, size_t len)
{
	if (line[i] == '*') {
		r->kind = CD_SUBJECT_DEFAULT;
		r->name = NULL;
		i++;
	} else {
		r->kind = CD_SUBJECT_USER;
		if (line[i] == '@') {
			r->kind = CD_SUBJECT_GROUP;
			i++;
		}
		size_t name = i;
		while (i < len && cd_class(line[i]) == CD_CL_NAME)
			i++;
		if (i < len && line[i] == '$')
			i++;
		if (!valid_name(line + name, i - name))
			return 0;
		r->name = line + name;
	}
	/* A subject ends at a blank; anything else glued to it makes it a bad subject. */
	if (i < len && cd_class(line[i]) != CD_CL_BLANK && line[i] != '#')
		return 0;
	return i;
}

static size_t token_end(const char *line, size_t i, size_t len)
{
	while (i < len && cd_class(line[i]) != CD_CL_BLANK && line[i] != '#')
		i++;
	return i;
}

static void parse_line(struct parser *p, size_t lineno, char *line, size_t len)
{
	if (memchr(line, '\0', len) != NULL) {
		syntax_error(p, lineno, "NUL byte in line", NULL, 0);
		return;
	}
	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > 0 && line[len - 1] == '\r')	/* a DOS line end is tolerated */
		len--;
	size_t i = cd_skip_blanks(line, 0, len);
	if (i == len || line[i] == '#')
		return;	/* blank or comment line */

	struct cd_rule r = { .line = lineno };
	size_t start = i;
	size_t end = scan_subject(&r, line, i, len);
	if (end == 0) {
		size_t stop = token_end(line, start, len), k = start;
		while (k < stop && cd_class(line[k]) != CD_CL_CTRL)
			k++;
		if (k < stop)
			syntax_error(p, lineno, "control character in line", line + k, 1);
		else
			syntax_error(p, lineno, "bad subject (a user name, @group or *)", line + start,
				     stop - start);
		return;
	}
	i = cd_skip_blanks(line, end, len);
	if (i == len || line[i] == '#') {
		syntax_error(p, lineno, "missing capabilities field after subject", line + start, end - start);
		return;
	}
	struct cd_caps_error err;
	if (cd_scan_caps(line + i, len - i, &r.caps, &err, &p->memo) < 0) {
		syntax_error(p, lineno, err.why, line + i + err.off, err.len);
		return;
	}
	if (r.name != NULL)
		line[end] = '\0';	/* after the parse: end is a blank, '#' or the line end */
	if (p->pol->nerrors == 0 && keep_rule(p, &r) < 0)
		p->out_of_memory = 1;
}

static void log_unsafe_path(const struct cd_policy *pol, const struct cd_safe_why *why,
			    struct cd_log *log)
{
	char where[sizeof(why->where) * 4 + 8];
	cd_quote(where, sizeof(where), why->where, strlen(why->where), sizeof(why->where));
	if (why->fs != NULL)
		cd_log(log, LOG_ERR, "%s: unsafe policy file (%s %s: %s): policy rejected, "
		       "no capabilities granted", pol->shown, where, why->what, why->fs);
	else
		cd_log(log, LOG_ERR, "%s: unsafe policy file (%s %s; owner uid %u, mode %04o): "
		       "policy rejected, no capabilities granted", pol->shown, where, why->what,
		       (unsigned)why->uid, why->mode);
}

/* Open the resolved path through safe directories only (cd_safe.c), without hanging on a FIFO
 * (O_NONBLOCK), then judge the file we actually opened: checking the path first and opening
 * second would be a race. */
static enum cd_status open_policy(struct cd_policy *pol, const struct cd_load_opts *opts,
				  size_t max_bytes, struct cd_log *log, FILE **fpp)
{
	int fd;
	struct cd_safe_why why;
	int safe = cd_open_safe(pol->path, opts->owner, &fd, &why);
	if (safe == 0) {
		log_unsafe_path(pol, &why, log);
		return CD_POLICY_UNSAFE;
	}
	if (safe < 0) {
		if (errno == ENOENT) {
			cd_log(log, LOG_WARNING, "%s: policy file missing: no capabilities granted", pol->shown);
			return CD_POLICY_MISSING;
		}
		cd_log(log, LOG_ERR, "%s: cannot open: %m: no capabilities granted", pol->shown);
		return CD_POLICY_SYSERR;
	}
	struct stat st;
	const char *unsafe = NULL;
	if (fstat(fd, &st) < 0) {
		cd_log(log, LOG_ERR, "%s: cannot stat: %m: no capabilities granted", pol->shown);
		close(fd);
		return CD_POLICY_SYSERR;
	}
	if (!S_ISREG(st.st_mode))
		unsafe = "not a regular file";
	else if (st.st_uid != opts->owner)
		unsafe = "not owned by root";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		unsafe = "writable by group or others";
	else if ((size_t)st.st_size > max_bytes)
		unsafe = "larger than the size limit";
	if (unsafe != NULL) {
		cd_log(log, LOG_ERR, "%s: unsafe policy file (%s; owner uid %u, mode %04o, %lld bytes): "
		       "policy rejected, no capabilities granted", pol->shown, unsafe,
		       (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (long long)st.st_size);
		close(fd);
		return CD_POLICY_UNSAFE;
	}
	*fpp = fdopen(fd, "r");
	if (*fpp == NULL) {
		close(fd);
		return CD_POLICY_SYSERR;
	}
	return CD_POLICY_OK;
}

static void drop_rules(struct cd_policy *pol)
{
	for (size_t i = 0; i < pol->nrules; i++)
		free(pol->rules[i].name);
	free(pol->rules);
	pol->rules = NULL;
	pol->nrules = 0;
}

static enum cd_status read_rules(struct parser *p, FILE *fp, size_t max_bytes)
{
	struct cd_policy *pol = p->pol;
	char *line = NULL;
	size_t alloc = 0, total = 0;
	ssize_t len;

	while ((len = getline(&line, &alloc, fp)) >= 0) {
		total += (size_t)len;
		if (total > max_bytes) {
			/* It grew after fstat: same verdict as a big file. */
			cd_log(p->log, LOG_ERR, "%s: larger than the size limit (%zu bytes) while reading: "
			       "policy rejected, no capabilities granted", pol->shown, max_bytes);
			free(line);
			return CD_POLICY_UNSAFE;
		}
		pol->nlines++;
		parse_line(p, pol->nlines, line, (size_t)len);
		if (p->out_of_memory)
			break;
	}
	int read_failed = ferror(fp);
	free(line);
	if (p->out_of_memory || read_failed) {
		cd_log(p->log, LOG_ERR, "%s: %s: no capabilities granted", pol->shown,
		       p->out_of_memory ? "out of memory" : "read error");
		return CD_POLICY_SYSERR;
	}
	if (pol->nerrors > 0) {
		if (pol->nerrors > MAX_REPORTED_ERRORS)
			cd_log(p->log, LOG_ERR, "%s: %zu more errors not shown", pol->shown,
			       pol->nerrors - MAX_REPORTED_ERRORS);
		cd_log(p->log, LOG_ERR, "%s: policy rejected (%zu error%s): no capabilities granted",
		       pol->shown, pol->nerrors, pol->nerrors == 1 ? "" : "s");
		return CD_POLICY_SYNTAX;
	}
	return CD_POLICY_OK;
}

enum cd_status cd_policy_load(struct cd_policy *pol, const char *path,
			      const struct cd_load_opts *opts, struct cd_log *log)
{
	static const struct cd_load_opts defaults = { .owner = 0 };
	FILE *fp = NULL;

	if (opts == NULL)
		opts = &defaults;
	size_t max_bytes = opts->max_bytes ? opts->max_bytes : CD_MAX_POLICY_BYTES;
	memset(pol, 0, sizeof(*pol));
	pol->path = strdup(path);
	/* Paths come from options and command lines: print them escaped like any other input. */
	size_t plen = strlen(path);
	pol->shown = malloc(plen * 4 + 8);
	if (pol->path == NULL || pol->shown == NULL)
		return pol->status = CD_POLICY_SYSERR;
	cd_quote(pol->shown, plen * 4 + 8, path, plen, plen);
	pol->status = open_policy(pol, opts, max_bytes, log, &fp);
	if (pol->status != CD_POLICY_OK)
		return pol->status;

	struct parser p = { .pol = pol, .opts = opts, .log = log, .memo = { .cap = -1 } };
	pol->status = read_rules(&p, fp, max_bytes);
	fclose(fp);
	if (pol->status != CD_POLICY_OK)
		drop_rules(pol);
	return pol->status;
}

void cd_policy_free(struct cd_policy *pol)
{
	drop_rules(pol);
	free(pol->path);
	free(pol->shown);
	pol->path = pol->shown = NULL;
}
