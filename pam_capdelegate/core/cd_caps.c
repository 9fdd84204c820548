/*
 * cd_caps.c - capability names and the CAPABILITIES field of capdelegate.conf(5).
 *
 * Names come from libcap (cap_from_name, cap_to_name), so a libcap that knows a new capability
 * makes it usable here with no table to update. The scanner memoizes the last name it looked
 * up, since policies repeat the same few names line after line.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

#include "cd_parse.h"

#define MAX_CAPS 64		/* capabilities are bits of a 64-bit mask (VERSION_3) */
#define MAX_NAME 64		/* longer than any capability name libcap knows */

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* libcap's cap_from_name is case-insensitive, also takes numbers ("13", "0x10"), and reads
 * only the leading [A-Za-z_] run of its argument without saying how much it consumed: it
 * returns CAP_SYS_ADMIN for "cap_sys_admin-i" and CAP_SETUID for "cap_setuid2". So a token
 * is only looked up when it starts with a letter, and the answer is only believed when
 * libcap's own name for it is the whole token. */
int cd_cap_from_name(const char *name, size_t len)
{
	char buf[MAX_NAME];
	cap_value_t v = -1;	/* libcap does not promise to set it when the name is unknown */

	if (len == 0 || len >= sizeof(buf) || !is_alpha(name[0]))
		return -1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (cap_from_name(buf, &v) < 0 || v < 0 || v >= MAX_CAPS)
		return -1;
	const char *canonical = cd_cap_name(v);
	if (canonical == NULL || strlen(canonical) != len || strncasecmp(canonical, name, len) != 0)
		return -1;
	return v;
}

static char *names_by_cap[MAX_CAPS];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

/* The module is dlopen()ed and dlclose()d for every transaction in some services: free the
 * names when the object is unloaded, or each load would leak them. */
__attribute__((destructor)) static void free_names(void)
{
	for (int cap = 0; cap < MAX_CAPS; cap++) {
		cap_free(names_by_cap[cap]);
		names_by_cap[cap] = NULL;
	}
}

const char *cd_cap_name(int cap)
{
	if (cap < 0 || cap >= MAX_CAPS)
		return NULL;
	pthread_mutex_lock(&names_lock);
	if (names_by_cap[cap] == NULL) {
		char *name = cap_to_name(cap);
		/* libcap prints a capability it has no name for as its number: not a name. */
		if (name != NULL && !is_alpha(name[0]))
			cap_free(name);
		else
			names_by_cap[cap] = name;
	}
	pthread_mutex_unlock(&names_lock);
	return names_by_cap[cap];
}

const char *cd_cap_label(int cap, char *buf, size_t size)
{
	const char *name = cd_cap_name(cap);
	if (name != NULL)
		return name;
	snprintf(buf, size, "cap_%d", cap);	/* a bit libcap has no name for */
	return buf;
}

cd_capmask cd_cap_flag_bits(cap_t caps, cap_flag_t flag, cd_capmask of)
{
	cd_capmask m = 0;
	for (cap_value_t cap = 0; cap < MAX_CAPS; cap++) {
		cap_flag_value_t v = CAP_CLEAR;
		if ((of & ((cd_capmask)1 << cap)) && cap_get_flag(caps, cap, flag, &v) == 0 && v == CAP_SET)
			m |= (cd_capmask)1 << cap;
	}
	return m;
}

cd_capmask cd_cap_flag_mask(cap_t caps, cap_flag_t flag)
{
	return cd_cap_flag_bits(caps, flag, ~(cd_capmask)0);
}

/* Sized, then copied once: this runs for every NOTICE line, where open_memstream would zero a
 * BUFSIZ buffer (calloc) for the few bytes of a name or two. */
char *cd_capmask_to_text(cd_capmask m)
{
	if (m == 0)
		return strdup("none");
	const char *label[MAX_CAPS];
	char num[MAX_CAPS][16];
	size_t n = 0, size = 0;
	for (int cap = 0; cap < MAX_CAPS; cap++) {
		if (m & ((cd_capmask)1 << cap)) {
			label[n] = cd_cap_label(cap, num[n], sizeof(num[n]));
			size += strlen(label[n++]) + 1;	/* and its comma, or the final NUL */
		}
	}
	char *out = malloc(size), *o = out;
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(label[i]);
		memcpy(o, label[i], len);
		o += len;
		*o++ = i + 1 < n ? ',' : '\0';
	}
	return out;
}

/* Byte classes for the one-pass scanners here and in cd_policy.c: at each login every line
 * of the policy is scanned, so each byte is looked at once, through this table. */
const unsigned char cd_cclass[256] = {
	['\t'] = CD_CL_BLANK, [' '] = CD_CL_BLANK, [','] = CD_CL_COMMA, ['#'] = CD_CL_HASH,
	['_'] = CD_CL_NAME, ['.'] = CD_CL_NAME, ['-'] = CD_CL_NAME,
	['0' ... '9'] = CD_CL_NAME, ['a' ... 'z'] = CD_CL_NAME, ['A' ... 'Z'] = CD_CL_NAME,
	[0x00 ... 0x08] = CD_CL_CTRL, [0x0a ... 0x1f] = CD_CL_CTRL, [0x7f] = CD_CL_CTRL,
	/* everything else (@ * $ and bytes >= 0x80 among them) is CD_CL_OTHER, 0 */
};

static int all_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return len > 0;
}

/* The hint for setcap's text in a capability list ("cap_net_raw=i", "+ep", "-i"). */
#define SETCAP_TEXT "capabilities are listed bare, not as setcap writes them (=, +, - and " \
	"flags): the inheritable set is implied"

/* "cap_net_raw-i": '-' is a name byte, so setcap's removal arrives as one token; a name, '-',
 * then flags only (not "cap_dac_override-1"). */
static int setcap_removal(const char *tok, size_t len)
{
	const char *dash = memchr(tok, '-', len);
	if (dash == NULL || dash + 1 == tok + len || cd_cap_from_name(tok, (size_t)(dash - tok)) < 0)
		return 0;
	for (const char *c = dash + 1; c < tok + len; c++)
		if (strchr("eipEIP", *c) == NULL)
			return 0;
	return 1;
}

/* One capability token into its bit. The memo remembers the last token: policies repeat the
 * same few names on line after line. */
static int parse_cap_token(const char *tok, size_t len, cd_capmask *out, const char **why,
			   struct cd_cap_memo *memo)
{
	if (memo != NULL && memo->len == len && memo->cap >= 0 && memcmp(memo->text, tok, len) == 0) {
		*out |= (cd_capmask)1 << memo->cap;	/* names shorter than memo_at's 8 bytes */
		return 0;
	}
	if (len == 3 && strncasecmp(tok, "all", 3) == 0) {
		*why = "'all' is not allowed: a policy names each capability it grants";
		return -1;
	}
	if (all_digits(tok, len)) {
		*why = "capability numbers are not allowed: use the capability's name";
		return -1;
	}
	int cap = cd_cap_from_name(tok, len);
	if (cap < 0) {
		*why = setcap_removal(tok, len) ? SETCAP_TEXT : "unknown capability";
		return -1;
	}
	if (memo != NULL && len <= sizeof(memo->text)) {
		memcpy(memo->text, tok, len);
		memo->len = len;
		memo->cap = cap;
	}
	*out |= (cd_capmask)1 << cap;
	return 0;
}

/* Does the memoized token start at t[i], whole? Policies repeat the same few names line after
 * line, so this comparison (8 bytes at a time, no call) replaces the byte-by-byte scan and the
 * name lookup for most tokens. The memo only ever holds a token that was a whole valid name.
 * Only a byte that ends a token may follow it (a blank, ',', '#', a control byte, the end):
 * after a name byte it is a longer name, and after any other byte ("cap_net_raw=i") an error
 * that shows the whole token, which the byte-by-byte scan finds where it starts. */
static inline int memo_at(const struct cd_cap_memo *memo, const char *t, size_t i, size_t len)
{
	if (memo == NULL || memo->cap < 0 || len - i < memo->len || memo->len < 8)
		return 0;
	size_t n = memo->len;
	const char *a = t + i, *b = memo->text;
	for (size_t k = 0; k + 8 <= n; k += 8) {
		uint64_t x, y;
		memcpy(&x, a + k, 8);
		memcpy(&y, b + k, 8);
		if (x != y)
			return 0;
	}
	uint64_t x, y;	/* the last 8 bytes, overlapping: names are at least 8 bytes here */
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	if (x != y)
		return 0;
	int after = i + n < len ? cd_class(t[i + n]) : CD_CL_BLANK;
	return after != CD_CL_NAME && after != CD_CL_OTHER;
}

static int caps_error(struct cd_caps_error *err, const char *why, size_t off, size_t len)
{
	err->why = why;
	err->off = off;
	err->len = len;
	return -1;
}

/* The error for a byte that cannot follow a capability name. */
static int bad_byte(const char *t, size_t i, size_t len, size_t start, struct cd_caps_error *err)
{
	switch (cd_class(t[i])) {
	case CD_CL_CTRL:
		return caps_error(err, "control character in line", i, 1);
	case CD_CL_NAME: {	/* show the word that should have followed a ',' */
		size_t end = i;
		while (end < len && cd_class(t[end]) == CD_CL_NAME)
			end++;
		return caps_error(err, "expected ',' between capabilities", i, end - i);
	}
	default: {	/* a byte no capability name has: show the whole token */
		/* "cap_net_raw=i", "+ep", "-i": setcap's text, the most common mistake */
		int setcap = t[i] == '=' || t[i] == '+' || t[i] == '-';
		while (i < len && (cd_class(t[i]) == CD_CL_NAME || cd_class(t[i]) == CD_CL_OTHER))
			i++;
		return caps_error(err, setcap ? SETCAP_TEXT : "unknown capability", start, i - start);
	}
	}
}

int cd_scan_caps(const char *t, size_t len, cd_capmask *out, struct cd_caps_error *err,
		 struct cd_cap_memo *memo)
{
	size_t i = cd_skip_blanks(t, 0, len), ntokens = 0;
	int saw_none = 0;

	*out = 0;
	err->why = NULL;
	for (;;) {
		size_t start = i;
		if (memo_at(memo, t, i, len)) {
			/* the last token again, whole (what follows is not a name byte) */
			*out |= (cd_capmask)1 << memo->cap;
			i += memo->len;
			ntokens++;
			goto next;
		}
		while (i < len && cd_class(t[i]) == CD_CL_NAME)
			i++;
		size_t toklen = i - start;
		if (i < len && cd_class(t[i]) == CD_CL_OTHER)
			return bad_byte(t, i, len, start, err);
		if (toklen == 0) {
			if (i < len && cd_class(t[i]) == CD_CL_CTRL)
				return caps_error(err, "control character in line", i, 1);
			if (ntokens == 0 && (i >= len || t[i] == '#'))
				return caps_error(err, "missing capabilities field", start, 0);
			/* show the list up to where a name was missing ("cap_a,") */
			size_t end = i < len && t[i] == ',' ? i + 1 : i;
			while (end > 0 && cd_class(t[end - 1]) == CD_CL_BLANK)
				end--;
			return caps_error(err, "empty capability name in list", 0, end);
		}
		if (toklen == 4 && strncasecmp(t + start, "none", 4) == 0)
			saw_none = 1;
		else if (parse_cap_token(t + start, toklen, out, &err->why, memo) < 0)
			return caps_error(err, err->why, start, toklen);
		ntokens++;
next:
		i = cd_skip_blanks(t, i, len);
		if (i >= len)
			break;
		if (t[i] == '#') {	/* a comment: checked for control characters only */
			size_t k = cd_find_ctrl(t, i, len);
			if (k < len)
				return caps_error(err, "control character in line", k, 1);
			break;
		}
		if (t[i] != ',')
			return bad_byte(t, i, len, i, err);
		i = cd_skip_blanks(t, i + 1, len);
	}
	if (saw_none && ntokens > 1)
		return caps_error(err, "'none' cannot be combined with capabilities", 0, i);
	return 0;
}

int cd_parse_caps(const char *text, size_t len, cd_capmask *out, const char **why)
{
	struct cd_caps_error err;
	int rc = cd_scan_caps(text, len, out, &err, NULL);
	*why = err.why;
	return rc;
}
