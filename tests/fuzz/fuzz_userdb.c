/*
 * fuzz_userdb.c - libFuzzer harness for the reader of systemd's user records
 * (cli_userdb_parse, the parser audit and explain run on a NAME.user file's bytes).
 *
 * Oracles, written here without asking the reader (a violation aborts):
 *  - json-c (strict, UTF-8 validated, depth 64) parses the same bytes independently. A record
 *    the reader accepts is one JSON object json-c accepts whole, nested 32 levels at most, with
 *    no NUL byte; its userName, and its capability sets read from json-c's tree (the top level
 *    and every perMachine entry; ambient the union, bounding the intersection), equal the
 *    reader's, each name looked up here in a table built from cap_to_name (any case) or as a
 *    decimal number 0..63;
 *  - when json-c accepts what the reader refused, the reason is one JSON does not decide
 *    (a duplicate key, depth, U+0000, a NUL byte, a lone surrogate, the shape of the fields
 *    read: json-c keeps the last of two equal keys, so an unknown name is not judged here;
 *    a raw control character in a string, a number such as 01 or -.5, or bytes that are
 *    not UTF-8 by RFC 3629's table (checked here), which json-c takes and RFC 8259 does not);
 *    an accepted record is valid UTF-8 by that table;
 *  - a reason is always given, and is printable ASCII; the same bytes read twice give the
 *    same answer; an accepted record with a byte appended after it is refused.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

#include "cli_userdb.h"

#define CHECK(cond) do { if (!(cond)) fail(#cond, __LINE__); } while (0)

static void fail(const char *what, int line)
{
	fprintf(stderr, "fuzz_userdb.c:%d: oracle violated: %s\n", line, what);
	abort();
}

static char *names[64];

static void init_names(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	for (int v = 0; v < 64; v++) {
		char *n = cap_to_name(v);
		if (n != NULL && ((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z')))
			names[v] = strdup(n);
		cap_free(n);
	}
}

/* The bit of a capability string, or -1: a name in any case, or decimal 0..63 (no sign, no
 * leading zero). */
static int bit_of(const char *s, size_t len)
{
	if (strlen(s) != len)
		return -1;
	if (len >= 1 && len <= 2 && s[0] >= '0' && s[0] <= '9' &&
	    (len == 1 || (s[0] != '0' && s[1] >= '0' && s[1] <= '9'))) {
		int v = atoi(s);
		return v < 64 ? v : -1;
	}
	for (int v = 0; v < 64; v++)
		if (names[v] != NULL && strcasecmp(names[v], s) == 0)
			return v;
	return -1;
}

struct want {
	int has_ambient, has_bounding, all_known;
	cd_capmask ambient, bounding;
};

/* A capability set in json-c's tree: 0 read, -1 not an array of strings. */
static int set_of(json_object *v, int *known, cd_capmask *m)
{
	*m = 0;
	if (!json_object_is_type(v, json_type_array))
		return -1;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return -1;
		int b = bit_of(json_object_get_string(e), (size_t)json_object_get_string_len(e));
		if (b < 0)
			*known = 0;
		else
			*m |= (cd_capmask)1 << b;
	}
	return 0;
}

static int section(json_object *o, struct want *w)
{
	json_object *v;
	cd_capmask m;
	if (json_object_object_get_ex(o, "capabilityAmbientSet", &v) && v != NULL) {
		if (set_of(v, &w->all_known, &m) < 0)
			return -1;
		w->ambient = w->has_ambient ? w->ambient | m : m;
		w->has_ambient = 1;
	}
	if (json_object_object_get_ex(o, "capabilityBoundingSet", &v) && v != NULL) {
		if (set_of(v, &w->all_known, &m) < 0)
			return -1;
		w->bounding = w->has_bounding ? w->bounding & m : m;
		w->has_bounding = 1;
	}
	return 0;
}

/* The fields from json-c's tree; -1 when their shape is not what the reader takes. */
static int fields_of(json_object *top, struct want *w, const char **user)
{
	json_object *v;
	*w = (struct want){ .all_known = 1 };
	*user = NULL;
	if (json_object_object_get_ex(top, "userName", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return -1;
		*user = json_object_get_string(v);
	}
	if (section(top, w) < 0)
		return -1;
	if (json_object_object_get_ex(top, "perMachine", &v) && v != NULL) {
		if (!json_object_is_type(v, json_type_array))
			return -1;
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *e = json_object_array_get_idx(v, i);
			if (!json_object_is_type(e, json_type_object) || section(e, w) < 0)
				return -1;
		}
	}
	return 0;
}

/* json-c's answer: the tree, or NULL when it refuses the bytes or leaves some unread. */
/* A quote ' outside a "string": json-c 0.16 takes 'text' as a string even with
 * JSON_TOKENER_STRICT; RFC 8259 (and systemd's parser) has no such string. */
static int single_quoted(const uint8_t *data, size_t size)
{
	int in_string = 0;
	for (size_t i = 0; i < size; i++) {
		if (in_string && data[i] == '\\')
			i++;
		else if (data[i] == '"')
			in_string = !in_string;
		else if (!in_string && data[i] == '\'')
			return 1;
	}
	return 0;
}

static json_object *json_c(const uint8_t *data, size_t size)
{
	if (single_quoted(data, size))
		return NULL;
	struct json_tokener *tok = json_tokener_new_ex(64);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	size_t end = json_tokener_get_parse_end(tok);
	if (json_tokener_get_error(tok) != json_tokener_success)
		o = (json_object_put(o), NULL);
	for (; o != NULL && end < size; end++)
		if (strchr(" \t\r\n", data[end]) == NULL || data[end] == 0)
			o = (json_object_put(o), NULL);
	json_tokener_free(tok);
	return o;
}

static int depth_of(json_object *o)
{
	int d = 0;
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v) {
			(void)k;
			int c = depth_of(v);
			d = c > d ? c : d;
		}
		return d + 1;
	}
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			int c = depth_of(json_object_array_get_idx(o, i));
			d = c > d ? c : d;
		}
		return d + 1;
	}
	return 0;
}

/* Reasons json-c's verdict says nothing about; a raw control character in a string and
 * numbers such as 01 or -.5 are ones RFC 8259 forbids and json-c takes even when strict. */
static int reason_beyond_json(const char *why)
{
	static const char *const ok[] = {
		"duplicate key", "nested deeper", "U+0000", "NUL byte", "surrogate",
		"not a JSON object", "userName is not a string", "perMachine",
		"a capability set", "control character", "leading zero", "bad number",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strstr(why, ok[i]) != NULL)
			return 1;
	return 0;
}

/* Valid UTF-8 by RFC 3629's table (section 4): no overlong form, no surrogate, nothing above
 * U+10FFFF. json-c's check is looser (it takes C0/C1 lead bytes, for one). */
static int utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		size_t len;
		uint8_t lo = 0x80, hi = 0xBF;
		if (c < 0x80) { i++; continue; }
		if (c >= 0xC2 && c <= 0xDF) len = 2;
		else if (c >= 0xE0 && c <= 0xEF) { len = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
		else if (c >= 0xF0 && c <= 0xF4) { len = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
		else return 0;
		if (i + len > n || s[i + 1] < lo || s[i + 1] > hi)
			return 0;
		for (size_t k = 2; k < len; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xBF)
				return 0;
		i += len;
	}
	return 1;
}

static void check_accepted(const uint8_t *data, size_t size, const struct cli_userdb_fields *f)
{
	json_object *o = json_c(data, size);
	struct want w;
	const char *user;
	CHECK(memchr(data, 0, size) == NULL);
	CHECK(utf8_valid(data, size));
	CHECK(o != NULL);
	CHECK(json_object_is_type(o, json_type_object));
	CHECK(depth_of(o) <= CLI_USERDB_MAX_DEPTH);
	CHECK(fields_of(o, &w, &user) == 0);
	CHECK(w.all_known);
	CHECK((user == NULL) == (f->user == NULL));
	CHECK(user == NULL || strcmp(user, f->user) == 0);
	CHECK(w.has_ambient == f->has_ambient && (!w.has_ambient || w.ambient == f->ambient));
	CHECK(w.has_bounding == f->has_bounding && (!w.has_bounding || w.bounding == f->bounding));
	json_object_put(o);
	/* one more byte after the object: refused */
	uint8_t *more = malloc(size + 1);
	struct cli_userdb_fields g;
	const char *why;
	memcpy(more, data, size);
	more[size] = 'x';
	CHECK(cli_userdb_parse((const char *)more, size + 1, &g, &why) == -1);
	free(more);
}

static void check_refused(const uint8_t *data, size_t size, const char *why)
{
	CHECK(why != NULL);
	for (const char *c = why; *c; c++)
		CHECK(*c >= 0x20 && *c < 0x7f);
	json_object *o = json_c(data, size);
	if (o == NULL)
		return;
	CHECK(reason_beyond_json(why) || (strstr(why, "invalid UTF-8") && !utf8_valid(data, size)));
	json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_userdb_fields f, again;
	const char *why, *why2;
	init_names();
	if (size > CLI_USERDB_MAX_BYTES)
		return 0;
	int rc = cli_userdb_parse((const char *)data, size, &f, &why);
	CHECK(rc == 0 || rc == -1);	/* -2 only without memory */
	int rc2 = cli_userdb_parse((const char *)data, size, &again, &why2);
	CHECK(rc == rc2 && (rc == 0 || strcmp(why, why2) == 0));
	if (rc == 0) {
		CHECK((f.user == NULL) == (again.user == NULL));
		check_accepted(data, size, &f);
		cli_userdb_fields_free(&f);
		cli_userdb_fields_free(&again);
	} else {
		check_refused(data, size, why);
	}
	return 0;
}
