/*
 * cd_caps.c - capability names and the CAPABILITIES field of capdelegate.conf(5).
 *
 * Names come from libcap (cap_to_name), so a libcap that knows a new capability makes it
 * usable here with no table to update. The lookup itself is a small hash table built once,
 * because the module parses every line of the policy at each login and libcap's own
 * cap_from_name scans its whole list per call.
 */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "cd_policy.h"

#define NAME_SLOTS 256		/* power of two, well above the 64 possible names */
#define MAX_CAPS 64		/* capabilities are bits of a 64-bit mask (VERSION_3) */

struct name_slot {
	char *name;		/* lower case, as libcap spells it: "cap_net_raw" */
	size_t len;
	int cap;
};

static struct name_slot name_table[NAME_SLOTS];
static char *names_by_cap[MAX_CAPS];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static unsigned int name_hash(const char *s, size_t len)
{
	unsigned int h = 2166136261u;	/* FNV-1a over the lower-cased bytes */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)tolower((unsigned char)s[i])) * 16777619u;
	return h & (NAME_SLOTS - 1);
}

/* libcap prints a capability it has no name for as its number: that is not a name. */
static int is_number(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void add_name(int cap, char *name)
{
	size_t len = strlen(name);
	unsigned int h = name_hash(name, len);
	while (name_table[h].name != NULL)
		h = (h + 1) & (NAME_SLOTS - 1);
	name_table[h] = (struct name_slot){ .name = name, .len = len, .cap = cap };
	names_by_cap[cap] = name;
}

static void build_names(void)
{
	for (int cap = 0; cap < MAX_CAPS; cap++) {
		char *name = cap_to_name(cap);
		if (name == NULL)
			break;
		if (is_number(name)) {
			cap_free(name);
			break;
		}
		/* Keep our own copy: cap_to_name's memory belongs to libcap's allocator. */
		char *copy = strdup(name);
		cap_free(name);
		if (copy == NULL)
			break;
		for (char *p = copy; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		add_name(cap, copy);
	}
}

/* The PAM module is dlopen()ed and dlclose()d for every transaction in some services: free
 * the table when the object is unloaded, or each load would leak it. */
__attribute__((destructor)) static void free_names(void)
{
	for (int cap = 0; cap < MAX_CAPS; cap++)
		free(names_by_cap[cap]);
	memset(names_by_cap, 0, sizeof(names_by_cap));
	memset(name_table, 0, sizeof(name_table));
}

int cd_cap_from_name(const char *name, size_t len)
{
	pthread_once(&names_once, build_names);
	unsigned int h = name_hash(name, len);
	for (unsigned int n = 0; n < NAME_SLOTS && name_table[h].name != NULL; n++) {
		const struct name_slot *s = &name_table[h];
		if (s->len == len && strncasecmp(s->name, name, len) == 0)
			return s->cap;
		h = (h + 1) & (NAME_SLOTS - 1);
	}
	return -1;
}

const char *cd_cap_name(int cap)
{
	pthread_once(&names_once, build_names);
	if (cap < 0 || cap >= MAX_CAPS)
		return NULL;
	return names_by_cap[cap];
}

char *cd_capmask_to_text(cd_capmask m)
{
	if (m == 0)
		return strdup("none");
	/* libcap's names are under 24 bytes; 64 of them and their commas fit in 2 KiB. */
	char *out = malloc(MAX_CAPS * 32);
	if (out == NULL)
		return NULL;
	out[0] = '\0';
	for (int cap = 0; cap < MAX_CAPS; cap++) {
		if (!(m & ((cd_capmask)1 << cap)))
			continue;
		const char *name = cd_cap_name(cap);
		char num[8];
		if (name == NULL) {
			snprintf(num, sizeof(num), "%d", cap);
			name = num;
		}
		if (out[0] != '\0')
			strcat(out, ",");
		strcat(out, name);
	}
	return out;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int all_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return len > 0;
}

/* One capability token (no blanks, no commas inside) into its bit. */
static int parse_cap_token(const char *tok, size_t len, cd_capmask *out, const char **why)
{
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
		*why = "unknown capability";
		return -1;
	}
	*out |= (cd_capmask)1 << cap;
	return 0;
}

int cd_parse_caps_at(const char *text, size_t len, cd_capmask *out, struct cd_caps_error *err)
{
	size_t i = 0, ntokens = 0;
	int saw_none = 0;

	*out = 0;
	err->why = NULL;
	err->off = err->len = 0;
	for (;;) {
		while (i < len && is_blank(text[i]))
			i++;
		size_t start = i;
		while (i < len && text[i] != ',' && !is_blank(text[i]))
			i++;
		size_t toklen = i - start;
		err->off = start;
		err->len = toklen;
		if (toklen == 0) {
			err->why = ntokens == 0 && i >= len ? "missing capabilities field"
							    : "empty capability name in list";
			return -1;
		}
		if (toklen == 4 && strncasecmp(text + start, "none", 4) == 0)
			saw_none = 1;
		else if (parse_cap_token(text + start, toklen, out, &err->why) < 0)
			return -1;
		ntokens++;
		while (i < len && is_blank(text[i]))
			i++;
		if (i >= len)
			break;
		if (text[i] != ',') {
			err->off = i;
			err->len = 0;
			err->why = "expected ',' between capabilities";
			return -1;
		}
		i++;	/* the comma */
	}
	if (saw_none && ntokens > 1) {
		err->off = 0;
		err->len = len;
		err->why = "'none' cannot be combined with capabilities";
		return -1;
	}
	return 0;
}

int cd_parse_caps(const char *text, size_t len, cd_capmask *out, const char **why)
{
	struct cd_caps_error err;
	int rc = cd_parse_caps_at(text, len, out, &err);
	*why = err.why;
	return rc;
}
