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

/* Enough to fix a file; a hostile file must not flood syslog. */
#define MAX_REPORTED_ERRORS 10
/* LOGIN_NAME_MAX on Linux is 256; no user or group name is longer. */
#define MAX_NAME_LEN 256
/* How much of an offending token an error message shows. */
#define MAX_QUOTED 48

struct parser {
	struct cd_policy *pol;
	const struct cd_load_opts *opts;
	struct cd_log *log;
	size_t rules_alloc;
	int out_of_memory;
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

/* Show a hostile token safely in a log line: printable ASCII as is, the rest as \xNN. */
static void quote_token(char *out, size_t outsize, const char *tok, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 5 < outsize; i++) {
		unsigned char c = (unsigned char)tok[i];
		if (i == MAX_QUOTED) {
			o += (size_t)snprintf(out + o, outsize - o, "...");
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outsize - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

static void syntax_error(struct parser *p, size_t line, const char *why, const char *tok, size_t len)
{
	p->pol->nerrors++;
	if (p->pol->nerrors > MAX_REPORTED_ERRORS)
		return;
	if (tok != NULL && len > 0) {
		char quoted[MAX_QUOTED * 4 + 8];
		quote_token(quoted, sizeof(quoted), tok, len);
		cd_log(p->log, LOG_ERR, "%s:%zu: %s: '%s'", p->pol->path, line, why, quoted);
	} else {
		cd_log(p->log, LOG_ERR, "%s:%zu: %s", p->pol->path, line, why);
	}
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* User and group names as shadow-utils and NSS accept them: [A-Za-z0-9_.-]+, not starting
 * with '-' (it would read as an option elsewhere), optionally ending in '$' (Samba machines). */
static int valid_name(const char *s, size_t len)
{
	if (len == 0 || len > MAX_NAME_LEN || s[0] == '-')
		return 0;
	if (s[len - 1] == '$')
		len--;
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(s[i]))
			return 0;
	return 1;
}

static int parse_subject(struct cd_rule *r, char *s, size_t len)
{
	if (len == 1 && s[0] == '*') {
		r->kind = CD_SUBJECT_DEFAULT;
		r->name = NULL;
		return 0;
	}
	r->kind = CD_SUBJECT_USER;
	if (s[0] == '@') {
		r->kind = CD_SUBJECT_GROUP;
		s++;
		len--;
	}
	if (!valid_name(s, len))
		return -1;
	s[len] = '\0';	/* the subject is followed by a blank in the line buffer: safe */
	r->name = s;
	return 0;
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

/* Cut the line at '#', drop the line end (a trailing "\r\n" is tolerated) and blanks around.
 * Returns the length left; *start is where the content begins. -1 on a forbidden byte. */
static ssize_t strip_line(struct parser *p, size_t lineno, char *line, size_t len, size_t *start)
{
	if (memchr(line, '\0', len) != NULL) {
		syntax_error(p, lineno, "NUL byte in line", NULL, 0);
		return -1;
	}
	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	char *hash = memchr(line, '#', len);
	if (hash != NULL)
		len = (size_t)(hash - line);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			char why[48];
			snprintf(why, sizeof(why), "control character 0x%02x in line", c);
			syntax_error(p, lineno, why, NULL, 0);
			return -1;
		}
	}
	size_t b = 0;
	while (b < len && is_blank(line[b]))
		b++;
	while (len > b && is_blank(line[len - 1]))
		len--;
	*start = b;
	return (ssize_t)(len - b);
}

static void parse_line(struct parser *p, size_t lineno, char *line, size_t len)
{
	size_t start;
	ssize_t n = strip_line(p, lineno, line, len, &start);
	if (n <= 0)
		return;
	char *s = line + start;
	size_t slen = 0;
	while (slen < (size_t)n && !is_blank(s[slen]))
		slen++;
	char *caps = s + slen;
	size_t clen = (size_t)n - slen;
	while (clen > 0 && is_blank(*caps)) {
		caps++;
		clen--;
	}
	if (clen == 0) {
		syntax_error(p, lineno, "missing capabilities field after subject", s, slen);
		return;
	}

	struct cd_rule r = { .line = lineno };
	struct cd_caps_error err;
	if (cd_parse_caps_at(caps, clen, &r.caps, &err) < 0) {
		syntax_error(p, lineno, err.why, caps + err.off, err.len);
		return;
	}
	if (parse_subject(&r, s, slen) < 0) {
		syntax_error(p, lineno, "bad subject (a user name, @group or *)", s, slen);
		return;
	}
	if (p->pol->nerrors == 0 && keep_rule(p, &r) < 0)
		p->out_of_memory = 1;
}

/* Open without following into a FIFO or device forever (O_NONBLOCK), then judge the file we
 * actually opened: checking the path first and opening second would be a race. */
static enum cd_status open_policy(struct cd_policy *pol, const struct cd_load_opts *opts,
				  size_t max_bytes, struct cd_log *log, FILE **fpp)
{
	int fd = open(pol->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT) {
			cd_log(log, LOG_WARNING, "%s: policy file missing: no capabilities granted", pol->path);
			return CD_POLICY_MISSING;
		}
		cd_log(log, LOG_ERR, "%s: cannot open: %m: no capabilities granted", pol->path);
		return CD_POLICY_SYSERR;
	}
	struct stat st;
	const char *unsafe = NULL;
	if (fstat(fd, &st) < 0) {
		cd_log(log, LOG_ERR, "%s: cannot stat: %m: no capabilities granted", pol->path);
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
		       "policy rejected, no capabilities granted", pol->path, unsafe,
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
			       "policy rejected, no capabilities granted", pol->path, max_bytes);
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
		cd_log(p->log, LOG_ERR, "%s: %s: no capabilities granted", pol->path,
		       p->out_of_memory ? "out of memory" : "read error");
		return CD_POLICY_SYSERR;
	}
	if (pol->nerrors > 0) {
		if (pol->nerrors > MAX_REPORTED_ERRORS)
			cd_log(p->log, LOG_ERR, "%s: %zu more errors not shown", pol->path,
			       pol->nerrors - MAX_REPORTED_ERRORS);
		cd_log(p->log, LOG_ERR, "%s: policy rejected (%zu error%s): no capabilities granted",
		       pol->path, pol->nerrors, pol->nerrors == 1 ? "" : "s");
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
	if (pol->path == NULL)
		return pol->status = CD_POLICY_SYSERR;
	pol->status = open_policy(pol, opts, max_bytes, log, &fp);
	if (pol->status != CD_POLICY_OK)
		return pol->status;

	struct parser p = { .pol = pol, .opts = opts, .log = log };
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
	pol->path = NULL;
}
