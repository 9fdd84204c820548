/*
 * cli_report_read.c - one host's `audit --json` (or `usage --json`) document, read for report
 * and judged whole before report keeps anything of it. Every input byte is hostile: json-c parses with a depth
 * limit, the whole file must be one document (nothing after it but white space), strings must
 * be UTF-8 without NUL, no object may hold a key twice (json-c would keep the last in silence,
 * so the file could name one host or rule to one reader and another to the next), and what
 * the audit says of its host must agree with itself (host against host_hex, a machine_id of
 * machine-id(5)'s form). A file over REPORT_MAX_SIZE or of the wrong shape is rejected whole.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_out.h"
#include "cli_report_read.h"

/* An audit of a large tree is a few MiB; far more is not an audit. */
#define REPORT_MAX_SIZE (64u << 20)
/* The audit document nests 4 deep; json-c's default (32) would allow more than any audit. */
#define REPORT_MAX_DEPTH 16

int cli_report_open(const char *file, struct stat *st, const char **why)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	*st = (struct stat){ 0 };
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		*why = S_ISREG(st->st_mode) ? strerror(errno) : "not a regular file";
		close(fd);
		return -1;
	}
	return fd;
}

/* The whole file, less than REPORT_MAX_SIZE bytes, NUL-terminated; NULL with *why set (NULL
 * when memory ran out). */
static char *read_all(int fd, size_t *len, const char **why)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = n >= REPORT_MAX_SIZE ? NULL : realloc(buf, cap + 1);
			if (nb == NULL) {
				*why = n >= REPORT_MAX_SIZE ? "larger than 64 MiB: not an audit" : NULL;
				break;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*why = strerror(errno);
			break;
		}
		if (r == 0) {
			buf[n] = '\0';
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* One document and nothing after it but white space; NULL with *why set (NULL when memory
 * ran out) and *at the byte where parsing stopped. */
static json_object *parse(const char *buf, size_t len, const char **why, size_t *at)
{
	json_tokener *tok = json_tokener_new_ex(REPORT_MAX_DEPTH);
	if (tok == NULL) {
		*why = NULL;
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *doc = len <= INT32_MAX ? json_tokener_parse_ex(tok, buf, (int)len) : NULL;
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	*at = end;
	if (doc == NULL || e != json_tokener_success) {
		json_object_put(doc);
		*why = e == json_tokener_continue || e == json_tokener_success
			       ? "truncated: the document does not end"
			       : json_tokener_error_desc(e);
		return NULL;
	}
	while (end < len && strchr(" \t\r\n", buf[end]) != NULL && buf[end] != '\0')
		end++;
	if (end != len) {
		*at = end;
		json_object_put(doc);
		*why = "more after the document (trailing garbage)";
		return NULL;
	}
	return doc;
}

/* ---- one key twice in an object ----------------------------------------------------------- */

/* A key of an open object: its decoded bytes in the arena and where it starts in the file. */
struct key {
	size_t off, len, at;
};

struct frame {
	int object, want_key;
	size_t key0, arena0;	/* its first key, and the arena as it was when it opened */
};

struct scan {
	const char *p, *end;
	char *arena;
	size_t alen, acap;
	struct key *keys;
	size_t nkeys, kcap;
	struct frame frames[REPORT_MAX_DEPTH + 1];
	size_t depth;
	int oom;
};

static void put(struct scan *s, const char *bytes, size_t n)
{
	if (s->oom)
		return;
	if (s->alen + n > s->acap) {
		size_t cap = s->acap ? s->acap : 256;
		while (cap < s->alen + n)
			cap *= 2;
		char *na = realloc(s->arena, cap);
		if (na == NULL) {
			s->oom = 1;
			return;
		}
		s->arena = na;
		s->acap = cap;
	}
	memcpy(s->arena + s->alen, bytes, n);
	s->alen += n;
}

static unsigned hex4(const char *p)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++)
		v = v << 4 | (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
	return v;
}

static void put_cp(struct scan *s, unsigned cp)
{
	char u[4];
	size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	static const unsigned char lead[] = { 0, 0, 0xC0, 0xE0, 0xF0 };
	for (size_t i = n - 1; i > 0; i--, cp >>= 6)
		u[i] = (char)(0x80 | (cp & 0x3F));
	u[0] = (char)(lead[n] | cp);
	put(s, u, n);
}

/* \uXXXX at s->p (after the backslash and 'u'), as json-c decodes it: a surrogate pair is one
 * character, a surrogate alone U+FFFD. The text is valid JSON (json-c read it first). */
static void unicode_escape(struct scan *s)
{
	unsigned cp = hex4(s->p);
	s->p += 4;
	if (cp >= 0xD800 && cp <= 0xDBFF && s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u') {
		unsigned lo = hex4(s->p + 2);
		if (lo >= 0xDC00 && lo <= 0xDFFF) {
			s->p += 6;
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		}
	}
	put_cp(s, cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp);
}

/* The string at s->p (its opening quote), decoded into the arena when @keep, else skipped. */
static void string(struct scan *s, int keep)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	s->p++;
	while (s->p < s->end && *s->p != '"') {
		const char *run = s->p;
		while (s->p < s->end && *s->p != '"' && *s->p != '\\')
			s->p++;
		if (keep)
			put(s, run, (size_t)(s->p - run));
		if (s->p >= s->end || *s->p == '"')
			break;
		char c = s->end - s->p >= 2 ? s->p[1] : '\0';
		const char *e = c != '\0' ? strchr(from, c) : NULL;
		s->p += 2;
		if (c == 'u' && s->end - s->p >= 4) {
			if (keep)
				unicode_escape(s);
			else
				s->p += 4;
		} else if (e != NULL && keep) {
			put(s, &to[e - from], 1);
		} else if (e == NULL) {
			s->p = s->end;	/* not JSON: json-c read it, so never so */
		}
	}
	s->p += s->p < s->end;
}

static int key_cmp(const void *a, const void *b, void *arena)
{
	const struct key *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp((char *)arena + x->off, (char *)arena + y->off, n);
	if (c == 0)
		c = (x->len > y->len) - (x->len < y->len);
	return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

static int same(const struct scan *s, const struct key *a, const struct key *b)
{
	return a->len == b->len && memcmp(s->arena + a->off, s->arena + b->off, a->len) == 0;
}

/* The keys of the object closing now, sorted by name, then place: a key twice is two equal
 * neighbours. The one reported is the second of its name, the earliest such in the file. */
static const struct key *twice(struct scan *s, const struct frame *f)
{
	struct key *k = s->keys + f->key0, *found = NULL;
	size_t n = s->nkeys - f->key0;
	qsort_r(k, n, sizeof(*k), key_cmp, s->arena);
	for (size_t i = 1; i < n; i++)
		if (same(s, &k[i], &k[i - 1]) && (i == 1 || !same(s, &k[i - 1], &k[i - 2])) &&
		    (found == NULL || k[i].at < found->at))
			found = &k[i];
	return found;
}

static void add_key(struct scan *s, size_t at)
{
	if (s->nkeys == s->kcap) {
		size_t cap = s->kcap ? 2 * s->kcap : 64;
		struct key *nk = realloc(s->keys, cap * sizeof(*nk));
		if (nk == NULL) {
			s->oom = 1;
			return;
		}
		s->keys = nk;
		s->kcap = cap;
	}
	size_t off = s->alen;
	string(s, 1);
	/* json-c keeps a key as a C string: what follows a U+0000 in it is not part of it */
	size_t len = s->oom ? 0 : strnlen(s->arena + off, s->alen - off);
	s->keys[s->nkeys++] = (struct key){ off, len, at };
}

/* Walk @buf (one valid JSON document: json-c read it) for an object holding a key twice:
 * 1 with *@dup set (its key malloc'ed into *@key), 0 none, -1 out of memory. */
static int find_twice(const char *buf, size_t len, struct key *dup, char **key)
{
	struct scan s = { .p = buf, .end = buf + len };
	int found = 0;
	while (s.p < s.end && !found && !s.oom) {
		struct frame *top = s.depth ? &s.frames[s.depth - 1] : NULL;
		char c = *s.p;
		if (c == '"' && top != NULL && top->object && top->want_key) {
			top->want_key = 0;
			add_key(&s, (size_t)(s.p - buf));
		} else if (c == '"') {
			string(&s, 0);
		} else if ((c == '{' || c == '[') && s.depth <= REPORT_MAX_DEPTH) {
			s.frames[s.depth++] = (struct frame){ c == '{', c == '{', s.nkeys, s.alen };
			s.p++;
		} else if ((c == '}' || c == ']') && top != NULL) {
			const struct key *k = c == '}' ? twice(&s, top) : NULL;
			if (k != NULL) {
				*dup = *k;
				*key = strndup(s.arena + k->off, k->len);
				found = *key != NULL ? 1 : -1;
			}
			s.nkeys = top->key0;
			s.alen = top->arena0;
			s.depth--;
			s.p++;
		} else {
			if (c == ',' && top != NULL && top->object)
				top->want_key = 1;
			s.p++;
		}
	}
	free(s.arena);
	free(s.keys);
	return s.oom ? -1 : found;
}

/* ---- the keys report reads ----------------------------------------------------------------- */

const char *cli_report_str(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	const char *s = json_object_get_string(v);
	/* UTF-8 (the tokener checked it); a NUL inside would cut the name short */
	return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

static json_object *get_array(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

json_object *cli_report_rules(const struct cli_report_doc *d)
{
	json_object *pol;
	json_object_object_get_ex(d->doc, "policy", &pol);
	return get_array(pol, "rules");
}

json_object *cli_report_findings(const struct cli_report_doc *d)
{
	return get_array(d->doc, "findings");
}

json_object *cli_report_usage_grants(const struct cli_report_doc *d)
{
	return get_array(d->doc, "grants");
}

/* @key: an array of strings. */
static int strings_ok(json_object *o, const char *key)
{
	json_object *c = get_array(o, key);
	if (c == NULL)
		return 0;
	for (size_t i = 0; i < json_object_array_length(c); i++) {
		json_object *v = json_object_array_get_idx(c, i);
		if (!json_object_is_type(v, json_type_string) ||
		    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
			return 0;
	}
	return 1;
}

/* A usage document's grants (capdelegate(8), USAGE): NULL or what is wrong. */
static const char *usage_shape_error(json_object *doc)
{
	json_object *g = get_array(doc, "grants");
	if (g == NULL)
		return "grants: missing or not an array";
	for (size_t i = 0; i < json_object_array_length(g); i++) {
		json_object *x = json_object_array_get_idx(g, i);
		if (!json_object_is_type(x, json_type_object) || cli_report_str(x, "user") == NULL ||
		    !strings_ok(x, "grant") || !strings_ok(x, "used"))
			return "grants[]: an entry without user, grant and used";
	}
	return NULL;
}

/* The keys report reads, of the types capdelegate(8) documents; NULL or what is wrong. */
static const char *shape_error(json_object *doc, int *usage)
{
	json_object *pol, *v;
	if (!json_object_is_type(doc, json_type_object))
		return "not a JSON object";
	if (!json_object_object_get_ex(doc, "version", &v) || !json_object_is_type(v, json_type_int))
		return "no version: not an audit --json document";
	if (json_object_object_get_ex(doc, "kind", &v)) {
		const char *kind = cli_report_str(doc, "kind");
		if (kind == NULL || strcmp(kind, "usage") != 0)
			return "kind: not \"usage\" (an audit --json document has no kind)";
		*usage = 1;
	}
	const char *host = NULL;
	if (json_object_object_get_ex(doc, "host", &v) && cli_report_str(doc, "host") == NULL)
		host = "host: not a string";
	if (json_object_object_get_ex(doc, "host_hex", &v) && cli_report_str(doc, "host_hex") == NULL)
		host = "host_hex: not a string";
	if (*usage)
		return host != NULL ? host : usage_shape_error(doc);
	if (!json_object_object_get_ex(doc, "policy", &pol) ||
	    !json_object_is_type(pol, json_type_object) || get_array(pol, "rules") == NULL)
		return "policy.rules: missing or not an array";
	json_object *rules = get_array(pol, "rules");
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		if (!json_object_is_type(r, json_type_object) || cli_report_str(r, "kind") == NULL ||
		    cli_report_str(r, "subject") == NULL || !strings_ok(r, "caps"))
			return "policy.rules[]: an entry without kind, subject and caps";
		/* version 6 lists every line, each saying whether login read it; a line that
		 * does not say (an audit before version 6: no windows) is in force */
		json_object *f;
		if (json_object_object_get_ex(r, "in_force", &f) &&
		    !json_object_is_type(f, json_type_boolean))
			return "policy.rules[].in_force: not true or false";
	}
	json_object *f = get_array(doc, "findings");
	if (f == NULL)
		return "findings: missing or not an array";
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		if (!json_object_is_type(x, json_type_object) || cli_report_str(x, "id") == NULL ||
		    cli_report_str(x, "path") == NULL || cli_report_str(x, "message") == NULL)
			return "findings[]: an entry without id, path and message";
	}
	return host;
}

/* ---- what the audit says of its host ------------------------------------------------------ */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* host_hex's bytes, malloc'ed: pairs of lower-case hex digits, none 00 (a name is a C
 * string). 0, 1 when @hex is not so, -1 out of memory. */
static int hex_bytes(const char *hex, char **out)
{
	size_t n = strlen(hex);
	*out = NULL;
	if (n % 2 != 0)
		return 1;
	char *s = malloc(n / 2 + 1);
	if (s == NULL)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(s);
			return 1;
		}
		s[i] = (char)(hi << 4 | lo);
	}
	s[n / 2] = '\0';
	*out = s;
	return 0;
}

/* Do @text (host) and @bytes (host_hex's) name one host? audit writes the bytes as host with
 * every byte that is not part of valid UTF-8 as U+FFFD (capdelegate(8), JSON OUTPUT). */
static int same_name(const char *text, const char *bytes)
{
	static const char fffd[] = "\xef\xbf\xbd";
	const unsigned char *b = (const unsigned char *)bytes;
	size_t len = strlen(bytes);
	for (size_t i = 0; i < len;) {
		size_t n = cli_utf8_seq(b + i, len - i);
		const char *want = n ? bytes + i : fffd;
		size_t wn = n ? n : 3;
		if (strncmp(text, want, wn) != 0)
			return 0;
		text += wn;
		i += n ? n : 1;
	}
	return *text == '\0';
}

/* "WHAT" then @a and @b escaped, as the reason in *@why; -1 out of memory. */
static int reason(char **why, const char *what, const char *a, const char *between, const char *b,
		  const char *after)
{
	size_t size = 0;
	FILE *m = open_memstream(why, &size);
	if (m == NULL)
		return -1;
	fputs(what, m);
	if (a != NULL)
		cli_text_escape(m, a);
	fputs(between, m);
	if (b != NULL)
		cli_text_escape(m, b);
	fputs(after, m);
	if (fclose(m) != 0) {
		free(*why);
		*why = NULL;
		return -1;
	}
	return 0;
}

/* The host's name: host_hex's bytes (host holds U+FFFD for bytes that are not UTF-8), else
 * host; none when neither is given or the name is empty. 0, 1 rejected (*@why), -1 out of
 * memory. */
static int host_name(struct cli_report_doc *d, char **why)
{
	const char *hex = cli_report_str(d->doc, "host_hex"), *text = cli_report_str(d->doc, "host");
	char *bytes = NULL;
	int rc = hex != NULL ? hex_bytes(hex, &bytes) : 0;
	if (rc == 1)
		return reason(why, "host_hex: not the hex of a host name (pairs of lower-case hex "
			      "digits, no 00)", NULL, "", NULL, "") < 0 ? -1 : 1;
	if (rc < 0)
		return -1;
	if (bytes != NULL && text != NULL && !same_name(text, bytes)) {
		rc = reason(why, "host_hex is ", bytes, ", host is ", text, ": two names") < 0 ? -1 : 1;
		free(bytes);
		return rc;
	}
	if (bytes == NULL && text != NULL && (bytes = strdup(text)) == NULL)
		return -1;
	if (bytes != NULL && bytes[0] == '\0') {
		free(bytes);
		bytes = NULL;
	}
	d->name = bytes;
	return 0;
}

/* machine_id: absent or null (an audit before version 5, or a host whose machine-id is
 * unset), else 32 lower-case hex digits, not all zero (machine-id(5)). 0 or 1 (rejected). */
static int machine_id(struct cli_report_doc *d)
{
	json_object *v;
	d->machine_id[0] = '\0';
	if (!json_object_object_get_ex(d->doc, "machine_id", &v) || json_object_is_type(v, json_type_null))
		return 0;
	const char *id = cli_report_str(d->doc, "machine_id");
	size_t n = 0;
	int nonzero = 0;
	while (id != NULL && n < 32 && hexval(id[n]) >= 0)
		nonzero |= id[n++] != '0';
	if (id == NULL || n != 32 || id[32] != '\0' || !nonzero)
		return 1;
	memcpy(d->machine_id, id, 33);
	return 0;
}

/* ---- the document ------------------------------------------------------------------------- */

/* "byte N: WHAT", N where parsing stopped. */
static int at_reason(char **why, size_t at, const char *what)
{
	if (asprintf(why, "byte %zu: %s", at, what) < 0) {
		*why = NULL;
		return -1;
	}
	return 0;
}

/* The text as parsed: json-c's tree, no key twice in an object. 0, 1 rejected, -1 memory. */
static int read_doc(int fd, struct cli_report_doc *out, char **why)
{
	const char *what = NULL;
	size_t len = 0, at = SIZE_MAX;
	char *buf = read_all(fd, &len, &what), *key = NULL;
	if (buf == NULL)
		return what == NULL ? -1 : (*why = strdup(what)) == NULL ? -1 : 1;
	out->doc = parse(buf, len, &what, &at);
	if (out->doc == NULL) {
		free(buf);
		return what == NULL ? -1 : at_reason(why, at, what) < 0 ? -1 : 1;
	}
	struct key dup = { 0, 0, 0 };
	int rc = find_twice(buf, len, &dup, &key);
	free(buf);
	if (rc == 1) {
		char *where = NULL;
		rc = at_reason(&where, dup.at, "the key \"") < 0 ? -1
		     : reason(why, where, key, "\" twice in one object (json-c would keep the last)",
			      NULL, "") < 0 ? -1 : 1;
		free(where);
		free(key);
	}
	return rc;
}

int cli_report_read(int fd, struct cli_report_doc *out, char **why)
{
	const char *shape;
	*out = (struct cli_report_doc){ 0 };
	*why = NULL;
	int rc = read_doc(fd, out, why);
	close(fd);
	if (rc == 0 && (shape = shape_error(out->doc, &out->usage)) != NULL)
		rc = (*why = strdup(shape)) == NULL ? -1 : 1;
	if (rc == 0)
		rc = host_name(out, why);
	if (rc == 0 && machine_id(out) != 0)
		rc = (*why = strdup("machine_id: neither null nor 32 lower-case hex digits "
				    "(machine-id(5))")) == NULL ? -1 : 1;
	if (rc != 0)
		cli_report_doc_free(out);
	return rc;
}

void cli_report_doc_free(struct cli_report_doc *d)
{
	json_object_put(d->doc);
	free(d->name);
	*d = (struct cli_report_doc){ 0 };
}
