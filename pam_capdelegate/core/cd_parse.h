/*
 * cd_parse.h - private to the policy parser: the state that cd_load.c (files, drop-ins) hands
 * to cd_policy.c (lines), and the capability scanner's internals (byte classes, name memo)
 * that cd_policy.c shares with cd_caps.c. Nothing outside those three files includes it:
 * the rest of the core, the module and the CLI see only cd_policy.h.
 */
#ifndef CD_PARSE_H
#define CD_PARSE_H

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

#endif
