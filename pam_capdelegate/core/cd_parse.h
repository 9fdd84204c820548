/*
 * cd_parse.h - private to the core's parsers: the state that cd_load.c (files, drop-ins) hands
 * to cd_policy.c (lines), the capability scanner's internals (byte classes, name memo) that
 * cd_policy.c shares with cd_caps.c, and what the marks parser (cd_marks.c) shares with them
 * (the judged file reader, the name escapes). Nothing outside those four files includes it:
 * the rest of the core, the module and the CLI see only cd_policy.h and cd_marks.h.
 */
#ifndef CD_PARSE_H
#define CD_PARSE_H

#include <sys/stat.h>

#include "cd_policy.h"

/* The scanner behind cd_parse_caps() and the policy parser: stops at the end or at '#', and says
 * where in @text the offending token is. @memo (may be NULL) caches the last name looked up,
 * across calls. */
struct cd_caps_error {
	const char *why;
	size_t off, len;
};
struct cd_cap_memo {
	char text[32];
	size_t len;
	int cap;
};
int cd_scan_caps(const char *text, size_t len, cd_capmask *out, struct cd_caps_error *err,
		 struct cd_cap_memo *memo);

/* Byte classes shared by the scanners (cd_caps.c). */
enum { CD_CL_OTHER = 0, CD_CL_NAME, CD_CL_BLANK, CD_CL_COMMA, CD_CL_HASH, CD_CL_CTRL };
extern const unsigned char cd_cclass[256];

static inline unsigned char cd_class(char c)
{
	return cd_cclass[(unsigned char)c];
}

static inline size_t cd_skip_blanks(const char *t, size_t i, size_t len)
{
	while (i < len && cd_class(t[i]) == CD_CL_BLANK)
		i++;
	return i;
}

/* The first control character of t[i..len), or len. A comment is free text but for these: an
 * ESC sequence or a carriage return in it could hide its line's rule on a terminal. */
static inline size_t cd_find_ctrl(const char *t, size_t i, size_t len)
{
	while (i < len && cd_class(t[i]) != CD_CL_CTRL)
		i++;
	return i;
}

/* Enough to fix a policy; a hostile one must not flood syslog. */
#define CD_MAX_REPORTED_ERRORS 10

struct parser {
	struct cd_policy *pol;
	const struct cd_load_opts *opts;
	struct cd_log *log;
	const char *shown;	/* the file being parsed, as messages name it */
	size_t rules_alloc;
	int out_of_memory;
	struct cd_cap_memo memo;
	const char *last_caps;	/* the last CAPABILITIES field that parsed, and its mask */
	size_t last_caps_len;
	cd_capmask last_mask;
};

/* Parse one file's @len bytes (text[len] must be '\0'), adding its rules to p->pol and
 * counting errors in p->pol->nerrors. 0, or -1 when memory ran out. */
int cd_parse_text(struct parser *p, char *text, size_t len);

/* A "\ooo" escape at @s (three octal digits, the first 0..3): the byte it stands for, or -1
 * when @s is not one (then the backslash is itself, as in winbind's CORP\alice). */
int cd_octal_escape(const char *s);
/* At a backslash @s: the byte a name or path holds in *byte, and how many bytes of text it took
 * (4 for "\ooo", 1 for a backslash that escapes nothing); 0 when the escape stands for NUL or a
 * control character, refused escaped or not. */
size_t cd_unescape(const char *s, char *byte);

/* One bad line: counted in *nerrors, logged as "FILE:LINE: why: 'token'" (the token quoted,
 * cut at 48 bytes) while no more than CD_MAX_REPORTED_ERRORS were. */
void cd_token_error(struct cd_log *log, const char *shown, size_t *nerrors, size_t line,
		    const char *why, const char *tok, size_t len);

/* After the last line: how many of the file's @nerrors were not shown (@nhidden), and "FILE:
 * WHAT rejected (N errors): NOTHING". */
void cd_log_rejected(struct cd_log *log, const char *shown, size_t nerrors, size_t nhidden,
		     const char *what, const char *nothing);
/* Room for one more element of @size bytes in *array (*alloc elements, @used in use),
 * doubling. 0, or -1 when memory runs out (*array unchanged). */
int cd_grow(void **array, size_t *alloc, size_t used, size_t size);

/* @path as messages show it (cd_quote, whole), malloc'ed; NULL when memory runs out. */
char *cd_quoted_path(const char *path);

/* Reading a root-chosen file (cd_load.c): who reads it, and the words its messages use. */
struct cd_reader {
	struct cd_log *log;
	const char *shown;	/* the file, as messages name it */
	uid_t owner;		/* its required owner (0 but in unprivileged tests) */
	const char *kind;	/* "policy": "unsafe policy file", "the whole policy" */
	const char *rejected;	/* the verdict on an unsafe file */
	const char *nothing;	/* the consequence of a failed open or read */
};

/* Open @path through cd_open_safe (or, with @dfd >= 0, the entry @name of that judged
 * directory), then judge what was opened: a regular file (a directory if @want_dir) owned by
 * r->owner, writable by nobody else. CD_POLICY_MISSING (not logged) when it does not exist;
 * every other failure is logged. *fdp and *stp on CD_POLICY_OK. */
enum cd_status cd_open_judged(const struct cd_reader *r, int dfd, const char *name, const char *path,
			      int want_dir, int *fdp, struct stat *stp);
/* The whole file in one malloc'ed buffer, plus a NUL after the last byte. *budget is what may
 * still be read (all files count); a file that is, or grows while read, larger is rejected
 * (CD_POLICY_UNSAFE). */
enum cd_status cd_read_all(const struct cd_reader *r, int fd, size_t size, size_t *budget,
			   size_t max_bytes, char **textp, size_t *lenp);

#endif
