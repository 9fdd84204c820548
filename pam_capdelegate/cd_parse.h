/*
 * cd_parse.h - private to the policy core: the parser state that cd_load.c (files, drop-ins)
 * hands to cd_policy.c (lines). Nothing outside cd_load.c and cd_policy.c includes it.
 */
#ifndef CD_PARSE_H
#define CD_PARSE_H

#include "cd_policy.h"

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
