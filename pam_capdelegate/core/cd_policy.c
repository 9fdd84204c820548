/*
 * cd_policy.c - the lines of capdelegate.conf(5) into rules (the files are cd_load.c's).
 *
 * Every byte is treated as hostile: every line is validated, and one bad line rejects the whole
 * policy, because a policy that is half understood can grant what its author did not mean (the
 * over-grant pam_cap's fixed 4096-byte fgets produces is the cautionary tale). Each file is
 * parsed whole from one buffer, so a line is never split.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd_parse.h"

/* How much of an offending token an error message shows. */
#define MAX_QUOTED 48

/* Policies repeat whole fields ("cap_net_raw" on line after line): a field byte for byte equal
 * to the last one that parsed has the same meaning, and is not scanned again. */
/* a[0..n) == b[0..n), without a call for the usual capabilities field (8 to 40 bytes) */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
	if (n < 8 || n > 40)
		return memcmp(a, b, n) == 0;
	/* 8 bytes at a time, the last 8 overlapping */
	uint64_t x, y;
	for (size_t k = 0; k < n; k += 8) {
		size_t at = k + 8 <= n ? k : n - 8;
		memcpy(&x, a + at, 8);
		memcpy(&y, b + at, 8);
		if (x != y)
			return 0;
	}
	return 1;
}

static int same_caps_as_last(const struct parser *p, const char *t, size_t len, cd_capmask *out)
{
	if (p->last_caps == NULL || len != p->last_caps_len || !same_bytes(t, p->last_caps, len))
		return 0;
	*out = p->last_mask;
	return 1;
}

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

const char *cd_status_token(enum cd_status st)
{
	switch (st) {
	case CD_POLICY_SYNTAX: return "syntax_error";
	case CD_POLICY_SYSERR: return "system_error";
	case CD_POLICY_OK: case CD_POLICY_MISSING: case CD_POLICY_UNSAFE: break;
	}
	return cd_status_str(st);	/* one word already */
}

void cd_token_error(struct cd_log *log, const char *shown, size_t *nerrors, size_t line,
		    const char *why, const char *tok, size_t len)
{
	(*nerrors)++;
	if (*nerrors > CD_MAX_REPORTED_ERRORS)
		return;
	if (tok != NULL && len > 0) {
		char quoted[MAX_QUOTED * 4 + 8];
		cd_quote(quoted, sizeof(quoted), tok, len, MAX_QUOTED);
		cd_log(log, LOG_ERR, "%s:%zu: %s: '%s'", shown, line, why, quoted);
	} else {
		cd_log(log, LOG_ERR, "%s:%zu: %s", shown, line, why);
	}
}

int cd_grow(void **array, size_t *alloc, size_t used, size_t size)
{
	if (used < *alloc)
		return 0;
	size_t n = *alloc ? *alloc * 2 : 16;
	void *more = n < SIZE_MAX / size ? realloc(*array, n * size) : NULL;
	if (more == NULL)
		return -1;
	*array = more;
	*alloc = n;
	return 0;
}

void cd_log_rejected(struct cd_log *log, const char *shown, size_t nerrors, size_t nhidden,
		     const char *what, const char *nothing)
{
	if (nhidden > 0)
		cd_log(log, LOG_ERR, "%s: %zu more error%s not shown", shown, nhidden,
		       nhidden == 1 ? "" : "s");
	cd_log(log, LOG_ERR, "%s: %s rejected (%zu error%s): %s", shown, what, nerrors,
	       nerrors == 1 ? "" : "s", nothing);
}

static void syntax_error(struct parser *p, size_t line, const char *why, const char *tok, size_t len)
{
	cd_token_error(p->log, p->shown, &p->pol->nerrors, line, why, tok, len);
}

static int store_rule(struct parser *p, const struct cd_rule *tmp)
{
	struct cd_policy *pol = p->pol;
	if (cd_grow((void **)&pol->rules, &p->rules_alloc, pol->nrules, sizeof(*pol->rules)) < 0)
		return -1;
	struct cd_rule *r = &pol->rules[pol->nrules];
	*r = *tmp;	/* the name points into its file's text, NUL-terminated in place */
	r->file = p->shown;
	pol->nrules++;
	return 0;
}

/* Keep a valid line's rule unless the caller's filter drops it (at login, the lines that cannot
 * name the user: most of a long policy). The filter is asked here, inline, so a dropped line
 * costs no further call. -1 when memory ran out. */
static inline int keep_rule(struct parser *p, const struct cd_rule *tmp)
{
	if (p->pol->nerrors != 0 ||
	    (p->opts->keep != NULL && !p->opts->keep(tmp, p->opts->keep_arg)))
		return 0;
	return store_rule(p, tmp);
}

/* The first digit 0..3: \400 to \777 name no byte, and are no escape (capdelegate.conf(5)):
 * the backslash is a plain one, as a winbind name's, never wrapped to \000-\377. */
int cd_octal_escape(const char *s)
{
	if (s[0] != '\\' || s[1] < '0' || s[1] > '3' || s[2] < '0' || s[2] > '7' || s[3] < '0' || s[3] > '7')
		return -1;
	return (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
}

size_t cd_unescape(const char *s, char *byte)
{
	int e = cd_octal_escape(s);
	if (e < 0) {
		*byte = '\\';	/* a backslash that escapes nothing is itself */
		return 1;
	}
	if (e < 0x20 || e == 0x7f)
		return 0;	/* NUL and control characters stay refused, escaped or not */
	*byte = (char)e;
	return 4;
}

/* The escapes of one name that a winbind name (DOMAIN\user) could have meant literally: bit k
 * set when byte k of the decoded name came from one (CORP\100234 reads CORP@234). */
struct literal_doubt {
	int any;
	uint64_t at[(CD_MAX_NAME_LEN + 63) / 64];
};

/* Could the "\ooo" at @s, standing for @byte after the name's first byte, be a winbind
 * backslash written as it is? Never for a backslash (\134 is how one is written on purpose);
 * yes for a byte the name could hold bare (nobody escapes a letter or a digit); and, at the
 * name's first backslash, when a digit runs on after the three (a user number: CORP\040123). */
static int escape_may_be_literal(const char *s, unsigned char byte, int first_backslash)
{
	if (byte == '\\')
		return 0;
	if (cd_cclass[byte] == CD_CL_NAME || byte == '@')
		return 1;
	return first_backslash && s[4] >= '0' && s[4] <= '9';
}

static void doubt_escape(struct literal_doubt *d, size_t k)
{
	if (k >= CD_MAX_NAME_LEN)
		return;	/* the name is too long, and rejected */
	if (!d->any) {
		memset(d->at, 0, sizeof(d->at));
		d->any = 1;
	}
	d->at[k / 64] |= (uint64_t)1 << (k % 64);
}

static int doubted(const struct literal_doubt *d, size_t k)
{
	return d->any && k < CD_MAX_NAME_LEN && (d->at[k / 64] >> (k % 64) & 1);
}

/* Names as NSS backends return them: shadow-utils' [A-Za-z0-9_.-], '@' after the first byte
 * (SSSD's alice@corp.example.com), '\' (winbind's CORP\alice), an optional final '$' (Samba
 * machines), and any other byte but NUL and control characters written "\ooo" in octal ("linux
 * admins" is linux\040admins, as fstab and sssd write a space). The name is decoded in place
 * (an escape is longer than its byte) once it is known to be valid: a bad name stays as written
 * for the error message. Returns the index after it, 0 if it is not a valid name:
 * empty, over CD_MAX_NAME_LEN decoded bytes, starting with '-' (it would read as an option
 * elsewhere) or '@' (even escaped), or only "$". line[len] ends every scan (see parse_line). The
 * escapes a winbind name could have meant literally are noted in *doubt. */
static size_t scan_name(char *line, size_t i, char **name, struct literal_doubt *doubt)
{
	size_t start = i;
	/* Most names have no escape: run over their bytes without copying them. */
	const unsigned char *q = (const unsigned char *)line + i, *first = q;
	while (cd_cclass[*q] == CD_CL_NAME || (*q == '@' && q > first))
		q++;
	i = (size_t)((const char *)q - line);
	size_t n = i - start;		/* decoded bytes: the run above, then tail[0..t) */
	char tail[CD_MAX_NAME_LEN];
	size_t t = 0;
	int backslashes = 0;
	for (;;) {
		unsigned char c = (unsigned char)line[i];
		char byte = (char)c;
		size_t took = 1;
		if (c == '\\')
			took = cd_unescape(line + i, &byte);
		else if (cd_cclass[c] != CD_CL_NAME && !(c == '@' && n > 0))
			break;
		if (took == 0 || n >= CD_MAX_NAME_LEN)
			return 0;
		if (took == 4 && n > 0 && escape_may_be_literal(line + i, (unsigned char)byte, backslashes == 0))
			doubt_escape(doubt, n);
		backslashes += c == '\\';
		tail[t++] = byte;
		n++;
		i += took;
	}
	if (line[i] == '$') {	/* an optional final '$' */
		if (n >= CD_MAX_NAME_LEN)
			return 0;
		tail[t++] = '$';
		n++;
		i++;
	}
	char lead = n > t ? line[start] : t > 0 ? tail[0] : '\0';
	if (n == 0 || n > CD_MAX_NAME_LEN || lead == '-' || lead == '@' || (n == 1 && lead == '$'))
		return 0;	/* an escaped '@' first would read back as a group */
	/* The decoded name is shorter than its text when it held escapes: end it here. The byte
	 * at i (a blank, '#' or the line's end) is left for the caller to judge. */
	memcpy(line + start + (n - t), tail, t);
	if (start + n < i)
		line[start + n] = '\0';
	*name = line + start;
	return i;
}

/* Scan the subject at line[i]: "*", "@name" or "name". Returns the index after it, and
 * sets r->kind and r->name (NUL-terminated in place, the line buffer is ours). 0 if bad. */
static size_t scan_subject(struct cd_rule *r, char *line, size_t i, size_t len,
			   struct literal_doubt *doubt)
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
		if ((i = scan_name(line, i, &r->name, doubt)) == 0)
			return 0;
	}
	/* A subject ends at a blank; anything else glued to it makes it a bad subject. */
	if (i < len && cd_class(line[i]) != CD_CL_BLANK && line[i] != '#')
		return 0;
	return i;
}

/* A valid line whose subject holds an escape a winbind name could have meant literally: the
 * name as read, and how to write the literal one (each doubted byte back as its escape, whose
 * backslash cd_name_form shows as \134). Logged at LOG_WARNING, counted in pol->nwarnings,
 * shown while no more than CD_MAX_REPORTED_ERRORS were. */
static void warn_literal_backslash(struct parser *p, size_t lineno, const struct cd_rule *r,
				   const struct literal_doubt *d)
{
	size_t n = strlen(r->name), k, o = 0, first = n;
	if (++p->pol->nwarnings > CD_MAX_REPORTED_ERRORS) {
		if (p->pol->nwarnings == CD_MAX_REPORTED_ERRORS + 1)
			cd_log(p->log, LOG_WARNING, "%s:%zu: more names read with such octal escapes: "
			       "not shown", p->shown, lineno);
		return;
	}
	char *literal = malloc(4 * n + 1), *read_as = malloc(4 * n + 8), *meant = malloc(16 * n + 8);
	if (literal != NULL && read_as != NULL && meant != NULL) {
		for (k = 0; k < n; k++) {
			if (doubted(d, k)) {
				o += (size_t)snprintf(literal + o, 4 * n + 1 - o, "\\%03o",
						      (unsigned char)r->name[k]);
				first = first < n ? first : k;
			} else {
				literal[o++] = r->name[k];
			}
		}
		literal[o] = '\0';
		cd_name_form(read_as, 4 * n + 8, r->name, n);
		cd_name_form(meant, 16 * n + 8, literal, o);
		const char *at = r->kind == CD_SUBJECT_GROUP ? "@" : "";
		cd_log(p->log, LOG_WARNING, "%s:%zu: %s '%s%s' is read with \\%03o as an octal escape; "
		       "if the winbind name DOMAIN\\user was meant, write its backslash as \\134: "
		       "'%s%s'", p->shown, lineno, cd_subject_kind_str(r->kind), at, read_as,
		       (unsigned char)r->name[first], at, meant);
	} else {
		p->out_of_memory = 1;	/* a warning lost in silence would be another verdict */
	}
	free(literal);
	free(read_as);
	free(meant);
}

static size_t token_end(const char *line, size_t i, size_t len)
{
	while (i < len && cd_class(line[i]) != CD_CL_BLANK && line[i] != '#')
		i++;
	return i;
}

/* Is the word @w at line[i], ending there (at a blank, '#' or the line's end)? */
static int word_at(const char *line, size_t i, size_t len, const char *w)
{
	size_t n = strlen(w);
	return len - i >= n && memcmp(line + i, w, n) == 0 &&
	       (i + n == len || cd_class(line[i + n]) == CD_CL_BLANK || line[i + n] == '#');
}

/* Where the line's window starts (capdelegate.conf(5), WINDOWS): the first word "from" or
 * "until" after a blank, at or after @i and before a comment; @len when the line has none.
 * No capability is named so, so the words cannot be part of the capabilities field. */
static size_t find_window(const char *line, size_t i, size_t len)
{
	for (size_t j = i; j < len && line[j] != '#'; j++) {
		if (cd_class(line[j]) != CD_CL_BLANK)
			continue;
		size_t k = cd_skip_blanks(line, j, len);
		if (word_at(line, k, len, "from") || word_at(line, k, len, "until"))
			return k;
		j = k - 1;
	}
	return len;
}

/* One bound of the window: "from TIME" or "until TIME" at line[*i], into *has and *t. 0, or -1
 * after the error was reported. */
static int parse_bound(struct parser *p, size_t lineno, const char *line, size_t *i, size_t len,
		       const char *word, unsigned char *has, int64_t *t, size_t *time_at)
{
	size_t w = *i, n = strlen(word);
	if (*has) {
		syntax_error(p, lineno, "a window has one start ('from') and one end ('until')",
			     line + w, n);
		return -1;
	}
	size_t at = cd_skip_blanks(line, w + n, len), stop = token_end(line, at, len);
	if (at == stop) {
		syntax_error(p, lineno, "a time must follow (2026-12-14T18:00Z)", line + w, n);
		return -1;
	}
	size_t ctrl = cd_find_ctrl(line, at, stop);
	if (ctrl < stop) {
		syntax_error(p, lineno, "control character in line", line + ctrl, 1);
		return -1;
	}
	const char *why;
	if (cd_time_parse(line + at, stop - at, t, &why) < 0) {
		syntax_error(p, lineno, why, line + at, stop - at);
		return -1;
	}
	*has = 1;
	*time_at = at;
	*i = cd_skip_blanks(line, stop, len);
	return 0;
}

/* The window at line[i..len): "from TIME", "until TIME" or both, then perhaps a comment.
 * 0, or -1 after the error was reported. */
static int parse_window(struct parser *p, size_t lineno, const char *line, size_t i, size_t len,
			struct cd_rule *r)
{
	size_t from_at = 0, until_at = 0;
	while (i < len && line[i] != '#') {
		int rc;
		if (word_at(line, i, len, "from"))
			rc = parse_bound(p, lineno, line, &i, len, "from", &r->has_from, &r->from, &from_at);
		else if (word_at(line, i, len, "until"))
			rc = parse_bound(p, lineno, line, &i, len, "until", &r->has_until, &r->until,
					 &until_at);
		else {
			size_t stop = token_end(line, i, len), ctrl = cd_find_ctrl(line, i, stop);
			if (ctrl < stop)
				syntax_error(p, lineno, "control character in line", line + ctrl, 1);
			else
				syntax_error(p, lineno, "after the capabilities, only a window: 'from "
					     "TIME', 'until TIME' or both", line + i, stop - i);
			return -1;
		}
		if (rc < 0)
			return -1;
	}
	size_t ctrl = cd_find_ctrl(line, i, len);
	if (ctrl < len) {
		syntax_error(p, lineno, "control character in line", line + ctrl, 1);
		return -1;
	}
	if (r->has_from && r->has_until && r->until <= r->from) {
		syntax_error(p, lineno, r->until == r->from ? "the window is empty: 'until' equals 'from'"
			     : "the window ends before it starts: 'until' is before 'from'",
			     line + until_at, token_end(line, until_at, len) - until_at);
		return -1;
	}
	return 0;
}

/* One line, without its '\n'. line[len] is the '\n', a '\r' or the NUL after the file's last
 * byte: never a name byte, a blank or '$', so the scans of the subject and of blanks stop there
 * without a bounds check per byte (this loop runs for every line at every login). */
static void parse_line(struct parser *p, size_t lineno, char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')	/* a DOS line end is tolerated */
		len--;
	size_t i = 0;
	while (cd_class(line[i]) == CD_CL_BLANK)
		i++;
	if (i == len)
		return;	/* blank line */
	if (line[i] == '#') {	/* comment line */
		size_t k = cd_find_ctrl(line, i, len);
		if (k < len)
			syntax_error(p, lineno, "control character in line", line + k, 1);
		return;
	}

	struct cd_rule r = { .line = lineno };
	struct literal_doubt doubt;
	doubt.any = 0;
	size_t start = i;
	size_t end = scan_subject(&r, line, i, len, &doubt);
	if (end == 0) {
		size_t stop = token_end(line, start, len), k = start;
		while (k < stop && cd_class(line[k]) != CD_CL_CTRL)
			k++;
		if (k < stop)
			syntax_error(p, lineno, "control character in line", line + k, 1);
		else
			syntax_error(p, lineno, "bad subject (a user name, @group or *)",
				     line + start, stop - start);
		return;
	}
	i = end;
	while (cd_class(line[i]) == CD_CL_BLANK)
		i++;
	if (i == len || line[i] == '#') {
		syntax_error(p, lineno, "missing capabilities field after subject", line + start, end - start);
		return;
	}
	/* The capabilities run to the window, if the line has one (then they never end at the
	 * line's '\n', and parse_repeated_line never takes them for a whole line's rest). */
	size_t window = find_window(line, end, len);
	if (!same_caps_as_last(p, line + i, window - i, &r.caps)) {
		struct cd_caps_error err;
		if (cd_scan_caps(line + i, window - i, &r.caps, &err, &p->memo) < 0) {
			syntax_error(p, lineno, err.why, line + i + err.off, err.len);
			return;
		}
		p->last_caps = line + i;	/* in the file's buffer, which outlives the parse */
		p->last_caps_len = window - i;
		p->last_mask = r.caps;
	}
	if (window < len && parse_window(p, lineno, line, window, len, &r) < 0)
		return;
	if (r.name != NULL)
		line[end] = '\0';	/* after the parse: end is a blank, '#' or the line end */
	if (doubt.any)
		warn_literal_backslash(p, lineno, &r, &doubt);
	if (keep_rule(p, &r) < 0)
		p->out_of_memory = 1;
}

/* The usual line of a long policy, decided without first looking for its end: "NAME CAPS\n" or
 * "@NAME CAPS\n", a name without escapes, blanks, and a capabilities field that is, with its
 * '\n', the same bytes as the last one scanned (which ended at its '\n' too). Those bytes were
 * validated then, so the line is valid. Returns the line's length (up to its '\n'), or 0 for
 * any other line, which the caller parses in full: nothing in it was changed. The scans stop
 * at the '\n' or at the NUL after the file's last byte. */
static size_t parse_repeated_line(struct parser *p, size_t lineno, char *line, const char *end)
{
	const char *last = p->last_caps;
	size_t clen = p->last_caps_len;
	if (last == NULL || last[clen] != '\n')
		return 0;
	struct cd_rule r = { .line = lineno, .kind = CD_SUBJECT_USER, .caps = p->last_mask };
	size_t start = line[0] == '@';
	if (start)
		r.kind = CD_SUBJECT_GROUP;
	const unsigned char *first = (const unsigned char *)line + start, *q = first;
	while (cd_cclass[*q] == CD_CL_NAME || (*q == '@' && q > first))
		q++;
	size_t name_end = (size_t)((const char *)q - line), i = name_end;
	/* the checks of scan_name and scan_subject; an escape or a final '$' goes the long way */
	if (i == start || i - start > CD_MAX_NAME_LEN || line[start] == '-' ||
	    cd_class(line[i]) != CD_CL_BLANK)
		return 0;
	while (cd_class(line[i]) == CD_CL_BLANK)
		i++;
	if ((size_t)(end - (line + i)) <= clen || !same_bytes(line + i, last, clen + 1))
		return 0;
	line[name_end] = '\0';
	r.name = line + start;
	if (keep_rule(p, &r) < 0)
		p->out_of_memory = 1;
	return i + clen;
}

/* Every line of @text (@len bytes, text[len] == '\0'); a NUL byte anywhere in a line rejects
 * it (one memchr over the file tells whether any line needs the check). Errors are counted in
 * pol->nerrors; 0, or -1 when memory ran out. */
int cd_parse_text(struct parser *p, char *text, size_t len)
{
	int has_nul = memchr(text, '\0', len) != NULL;
	char *line = text, *end = text + len;
	size_t lineno = 0;

	while (line < end && !p->out_of_memory) {
		lineno++;
		size_t n = has_nul ? 0 : parse_repeated_line(p, lineno, line, end);
		if (n == 0) {
			char *nl = memchr(line, '\n', (size_t)(end - line));
			n = nl ? (size_t)(nl - line) : (size_t)(end - line);
			const char *nul = has_nul ? memchr(line, '\0', n) : NULL;
			if (nul != NULL)	/* shown up to and with the NUL, as \x00 */
				syntax_error(p, lineno, "NUL byte in line", line, (size_t)(nul - line) + 1);
			else
				parse_line(p, lineno, line, n);
		}
		line += n + 1;
	}
	p->pol->nlines += lineno;
	return p->out_of_memory ? -1 : 0;
}
