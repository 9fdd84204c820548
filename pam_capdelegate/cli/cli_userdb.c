/*
 * cli_userdb.c - systemd's drop-in JSON user records: a strict JSON reader that keeps only
 * userName, uid and the two capability sets, and the search of the drop-in directories.
 *
 * A hand-written reader rather than json-c: json-c keeps the last of two equal keys without
 * saying so, and systemd refuses a record with a duplicate field (sd_json_dispatch:
 * "Duplicate object field"), so a record holding "capabilityAmbientSet" twice could show us
 * one set while systemd saw another. This reader refuses duplicates, depth bombs, NUL bytes
 * and anything after the object, and says which. tests/fuzz/fuzz_userdb.c holds it against
 * json-c.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli_out.h"
#include "cli_stage.h"
#include "cli_userdb.h"

_Static_assert(CLI_USERDB_MAX_BYTES == 262144, "read_open_record names the bound in its message");

struct reader {
	const unsigned char *p, *end;
	int depth;
	const char *why;	/* first reason the input was refused */
	int oom;
};

/* The keys read; every other key's value is checked as JSON and skipped. */
enum key { K_OTHER, K_USERNAME, K_UID, K_AMBIENT, K_BOUNDING, K_PERMACHINE };

static int refuse(struct reader *r, const char *why)
{
	if (r->why == NULL)
		r->why = why;
	return -1;
}

static void skip_ws(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int hex4(struct reader *r, unsigned *v)
{
	*v = 0;
	if (r->end - r->p < 4)
		return refuse(r, "truncated \\u escape");
	for (int i = 0; i < 4; i++) {
		unsigned char c = *r->p++;
		unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			   : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
		if (d == 16)
			return refuse(r, "bad \\u escape");
		*v = *v << 4 | d;
	}
	return 0;
}

/* \uXXXX (a surrogate pair as one character) as UTF-8 into @out. U+0000 is refused: the
 * decoded text is a C string here, and a name cut at a NUL would not be the name. */
static int unicode_escape(struct reader *r, FILE *out)
{
	unsigned cp, lo;
	if (hex4(r, &cp) < 0)
		return -1;
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return refuse(r, "lone low surrogate in a \\u escape");
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return refuse(r, "lone high surrogate in a \\u escape");
		r->p += 2;
		if (hex4(r, &lo) < 0)
			return -1;
		if (lo < 0xDC00 || lo > 0xDFFF)
			return refuse(r, "high surrogate without its low surrogate");
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	}
	if (cp == 0)
		return refuse(r, "a string holds U+0000");
	if (cp < 0x80) {
		fputc((int)cp, out);
	} else if (cp < 0x800) {
		fputc(0xC0 | cp >> 6, out);
		fputc(0x80 | (cp & 0x3F), out);
	} else if (cp < 0x10000) {
		fputc(0xE0 | cp >> 12, out);
		fputc(0x80 | (cp >> 6 & 0x3F), out);
		fputc(0x80 | (cp & 0x3F), out);
	} else {
		fputc(0xF0 | cp >> 18, out);
		fputc(0x80 | (cp >> 12 & 0x3F), out);
		fputc(0x80 | (cp >> 6 & 0x3F), out);
		fputc(0x80 | (cp & 0x3F), out);
	}
	return 0;
}

static int simple_escape(struct reader *r, FILE *out)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = r->p < r->end ? memchr(from, *r->p, sizeof(from) - 1) : NULL;
	if (r->p < r->end && *r->p == 'u') {
		r->p++;
		return unicode_escape(r, out);
	}
	if (e == NULL)
		return refuse(r, r->p < r->end ? "bad escape in a string" : "truncated string");
	fputc(to[e - from], out);
	r->p++;
	return 0;
}

/* A string (at its opening quote), decoded into a malloc'ed C string; *@s NULL with -1. */
static int read_string(struct reader *r, char **s)
{
	size_t size = 0;
	*s = NULL;
	FILE *out = open_memstream(s, &size);
	if (out == NULL) {
		r->oom = 1;
		return -1;
	}
	int rc = 0;
	r->p++;
	while (rc == 0) {
		if (r->p >= r->end) {
			rc = refuse(r, "truncated string");
		} else if (*r->p == '"') {
			r->p++;
			break;
		} else if (*r->p == '\\') {
			r->p++;
			rc = simple_escape(r, out);
		} else if (*r->p < 0x20) {
			rc = refuse(r, "control character in a string");
		} else {
			/* RFC 8259: text is UTF-8; an invalid byte is not a character of the name */
			size_t n = cli_utf8_seq(r->p, (size_t)(r->end - r->p));
			if (n == 0)
				rc = refuse(r, "invalid UTF-8 in a string");
			fwrite(r->p, 1, n, out);
			r->p += n;
		}
	}
	if (fclose(out) != 0 && rc == 0) {
		r->oom = 1;
		rc = -1;
	}
	if (rc < 0) {
		free(*s);
		*s = NULL;
	}
	return rc;
}

static int skip_digits(struct reader *r)
{
	const unsigned char *start = r->p;
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	return r->p > start ? 0 : refuse(r, "bad number");
}

/* The value of the number text from @start to @r's place when it is a whole number from 0 to
 * 9999999999 written with a fraction or an exponent (1002.0, 1.002e3): systemd's JSON takes a
 * real that converts to an unsigned integer and back unchanged for that integer
 * (sd_json_variant_has_type), so its uid is 1002. 0 when it is one, 1 when not (1002.5), -1 out
 * of memory (@r's oom set: an error, never a record refused as if it had no uid). */
static int whole_real(struct reader *r, const unsigned char *start, uint64_t *v)
{
	char *text = strndup((const char *)start, (size_t)(r->p - start)), *stop = NULL;
	if (text == NULL) {
		r->oom = 1;
		return -1;
	}
	errno = 0;
	double d = strtod(text, &stop);	/* the CLI keeps the C locale: '.' is the point */
	int whole = errno == 0 && *stop == '\0' && d >= 0 && d <= 9999999999.0 &&
		    (double)(uint64_t)d == d;
	free(text);
	if (whole)
		*v = (uint64_t)d;
	return whole ? 0 : 1;
}

/* A number by RFC 8259's grammar. @uid: set to its value when it is a non-negative whole
 * number that fits (plain, or a real systemd reads as one), else left alone (systemd then
 * refuses the record, or has no uid either). */
static int read_number(struct reader *r, int *has_uid, uint64_t *uid)
{
	const unsigned char *start = r->p;
	int plain = 1;
	if (*r->p == '-') {
		r->p++;
		plain = 0;
	}
	if (r->p < r->end && *r->p == '0') {
		r->p++;
		if (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			return refuse(r, "number with a leading zero");
	} else if (skip_digits(r) < 0) {
		return -1;
	}
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		plain = 0;
		if (skip_digits(r) < 0)
			return -1;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		plain = 0;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (skip_digits(r) < 0)
			return -1;
	}
	if (plain && has_uid != NULL && r->p - start <= 10) {
		uint64_t v = 0;
		for (const unsigned char *c = start; c < r->p; c++)
			v = v * 10 + (uint64_t)(*c - '0');
		*has_uid = 1;
		*uid = v;
	} else if (!plain && has_uid != NULL) {
		int rc = whole_real(r, start, uid);
		if (rc < 0)
			return -1;
		if (rc == 0)
			*has_uid = 1;
	}
	return 0;
}

static int literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return refuse(r, r->end - r->p < (long)n ? "truncated" : "not JSON");
	r->p += n;
	return 0;
}

static int skip_value(struct reader *r);

/* "[" or "{" ... with @each called at each element; the depth bound applies here. */
static int container(struct reader *r, char close, int (*each)(struct reader *, void *), void *arg)
{
	if (++r->depth > CLI_USERDB_MAX_DEPTH)
		return refuse(r, "nested deeper than 32 levels");
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return 0;
	}
	for (;;) {
		if (each(r, arg) < 0)
			return -1;
		skip_ws(r);
		if (r->p >= r->end)
			return refuse(r, "truncated");
		if (*r->p == close)
			break;
		if (*r->p != ',')
			return refuse(r, "expected ',' or the end of the array or object");
		r->p++;
		skip_ws(r);
	}
	r->p++;
	r->depth--;
	return 0;
}

static int skip_element(struct reader *r, void *arg)
{
	(void)arg;
	return skip_value(r);
}

static int skip_member(struct reader *r, void *arg)
{
	char *key = NULL;
	(void)arg;
	if (r->p >= r->end || *r->p != '"')
		return refuse(r, r->p >= r->end ? "truncated" : "object key is not a string");
	if (read_string(r, &key) < 0)
		return -1;
	free(key);
	skip_ws(r);
	if (r->p >= r->end || *r->p != ':')
		return refuse(r, r->p >= r->end ? "truncated" : "expected ':' after an object key");
	r->p++;
	skip_ws(r);
	return skip_value(r);
}

static int skip_value(struct reader *r)
{
	if (r->p >= r->end)
		return refuse(r, "truncated");
	switch (*r->p) {
	case '{': return container(r, '}', skip_member, NULL);
	case '[': return container(r, ']', skip_element, NULL);
	case '"': {
		char *s = NULL;
		int rc = read_string(r, &s);
		free(s);
		return rc;
	}
	case 't': return literal(r, "true");
	case 'f': return literal(r, "false");
	case 'n': return literal(r, "null");
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
			return read_number(r, NULL, NULL);
		return refuse(r, "not JSON");
	}
}

/* A capability as systemd's capability_from_name takes it (cap-list.c): a name in any case
 * ("cap_net_raw", "CAP_NET_RAW") or a number. libcap's cap_from_name would also take
 * "cap_net_raw2" as cap_net_raw, so the whole string must be libcap's name for it; of the
 * numbers only plain decimal 0..63 is read, and anything else refuses the record. */
static int cap_bit(const char *s)
{
	size_t n = strlen(s);
	if (n >= 1 && n <= 2 && s[0] >= '0' && s[0] <= '9' && (n == 1 || (s[1] >= '0' && s[1] <= '9'))) {
		int v = n == 1 ? s[0] - '0' : (s[0] - '0') * 10 + (s[1] - '0');
		return (n == 2 && s[0] == '0') || v > 63 ? -1 : v;
	}
	return cd_cap_from_name(s, n);
}

static int cap_element(struct reader *r, void *arg)
{
	cd_capmask *m = arg;
	char *s = NULL;
	if (r->p >= r->end || *r->p != '"')
		return refuse(r, r->p >= r->end ? "truncated" : "a capability set holds a value that is not a string");
	if (read_string(r, &s) < 0)
		return -1;
	int bit = cap_bit(s);
	free(s);
	if (bit < 0)
		return refuse(r, "a capability set names a capability libcap does not know");
	*m |= (cd_capmask)1 << bit;
	return 0;
}

/* A capability set: an array of names, or null (not set, as systemd's strv dispatch). */
static int cap_set(struct reader *r, int *has, cd_capmask *m)
{
	if (r->p < r->end && *r->p == 'n')
		return literal(r, "null");
	if (r->p >= r->end || *r->p != '[')
		return refuse(r, r->p >= r->end ? "truncated" : "a capability set is not an array");
	*m = 0;
	*has = 1;
	return container(r, ']', cap_element, m);
}

/* The sets of one object (the record or a perMachine section), kept in @f below. */
struct section {
	struct cli_userdb_fields *f;
	int top;
	unsigned seen;		/* keys met, by enum key: a second one is refused */
	struct cli_userdb_sets sets;
};

static enum key key_of(const char *k, int top)
{
	if (strcmp(k, "capabilityAmbientSet") == 0)
		return K_AMBIENT;
	if (strcmp(k, "capabilityBoundingSet") == 0)
		return K_BOUNDING;
	if (strcmp(k, "uid") == 0)
		return top ? K_UID : K_OTHER;
	if (top && strcmp(k, "userName") == 0)
		return K_USERNAME;
	if (top && strcmp(k, "perMachine") == 0)
		return K_PERMACHINE;
	return K_OTHER;
}

/* @s into @into: the ambient sets' union, the bounding sets' intersection. */
static void merge(struct cli_userdb_sets *into, const struct cli_userdb_sets *s)
{
	if (s->has_ambient) {
		into->ambient = into->has_ambient ? into->ambient | s->ambient : s->ambient;
		into->has_ambient = 1;
	}
	if (s->has_bounding) {
		into->bounding = into->has_bounding ? into->bounding & s->bounding : s->bounding;
		into->has_bounding = 1;
	}
}

/* The record's sets: its top level's merged with its perMachine sections'. */
static void settle(struct cli_userdb_fields *f)
{
	struct cli_userdb_sets all = f->top;
	merge(&all, &f->per_machine);
	f->has_ambient = all.has_ambient;
	f->ambient = all.ambient;
	f->has_bounding = all.has_bounding;
	f->bounding = all.bounding;
}

static int section_object(struct reader *r, struct cli_userdb_fields *f, int top);

static int per_machine_element(struct reader *r, void *arg)
{
	if (r->p >= r->end || *r->p != '{')
		return refuse(r, r->p >= r->end ? "truncated" : "a perMachine entry is not an object");
	return section_object(r, arg, 0);
}

static int user_name(struct reader *r, struct cli_userdb_fields *f)
{
	if (r->p >= r->end || *r->p != '"')
		return refuse(r, r->p >= r->end ? "truncated" : "userName is not a string");
	return read_string(r, &f->user);
}

static int section_value(struct reader *r, struct section *s, enum key k)
{
	switch (k) {
	case K_USERNAME: return user_name(r, s->f);
	case K_UID:
		if (r->p < r->end && (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')))
			return read_number(r, &s->f->has_uid, &s->f->uid);
		return skip_value(r);	/* not a uid: the name check then fails for UID.user */
	case K_AMBIENT: return cap_set(r, &s->sets.has_ambient, &s->sets.ambient);
	case K_BOUNDING: return cap_set(r, &s->sets.has_bounding, &s->sets.bounding);
	case K_PERMACHINE:
		if (r->p < r->end && *r->p == 'n')
			return literal(r, "null");
		if (r->p >= r->end || *r->p != '[')
			return refuse(r, r->p >= r->end ? "truncated" : "perMachine is not an array");
		return container(r, ']', per_machine_element, s->f);
	default: return skip_value(r);
	}
}

static int section_member(struct reader *r, void *arg)
{
	struct section *s = arg;
	char *key = NULL;
	if (r->p >= r->end || *r->p != '"')
		return refuse(r, r->p >= r->end ? "truncated" : "object key is not a string");
	if (read_string(r, &key) < 0)
		return -1;
	enum key k = key_of(key, s->top);
	free(key);
	if (k != K_OTHER && (s->seen & 1u << k))
		return refuse(r, "duplicate key (systemd refuses the record)");
	s->seen |= 1u << k;
	skip_ws(r);
	if (r->p >= r->end || *r->p != ':')
		return refuse(r, r->p >= r->end ? "truncated" : "expected ':' after an object key");
	r->p++;
	skip_ws(r);
	return section_value(r, s, k);
}

static int section_object(struct reader *r, struct cli_userdb_fields *f, int top)
{
	struct section s = { .f = f, .top = top };
	if (container(r, '}', section_member, &s) < 0)
		return -1;
	if (top) {
		f->keys = s.seen;
		f->top = s.sets;
	} else {
		merge(&f->per_machine, &s.sets);
	}
	return 0;
}

/* NAME.user-privileged's @over merged into the record @f as systemd merges it
 * (sd_json_variant_merge_object): each top-level key @over holds replaces @f's key of that
 * name whole, a null one too; perMachine is replaced, not joined. */
static void overlay(struct cli_userdb_fields *f, struct cli_userdb_fields *over)
{
	if (over->keys & 1u << K_USERNAME) {
		free(f->user);
		f->user = over->user;
		over->user = NULL;
	}
	if (over->keys & 1u << K_UID) {
		f->has_uid = over->has_uid;
		f->uid = over->uid;
	}
	if (over->keys & 1u << K_AMBIENT) {
		f->top.has_ambient = over->top.has_ambient;
		f->top.ambient = over->top.ambient;
	}
	if (over->keys & 1u << K_BOUNDING) {
		f->top.has_bounding = over->top.has_bounding;
		f->top.bounding = over->top.bounding;
	}
	if (over->keys & 1u << K_PERMACHINE)
		f->per_machine = over->per_machine;
	f->keys |= over->keys;
	settle(f);
}

void cli_userdb_fields_free(struct cli_userdb_fields *f)
{
	free(f->user);
	*f = (struct cli_userdb_fields){ 0 };
}

int cli_userdb_parse(const char *buf, size_t len, struct cli_userdb_fields *out, const char **why)
{
	struct reader r = { .p = (const unsigned char *)buf, .end = (const unsigned char *)buf + len };
	*out = (struct cli_userdb_fields){ 0 };
	*why = NULL;
	if (memchr(buf, '\0', len) != NULL) {
		/* systemd reads the file as a C string: what follows a NUL would be unread */
		*why = "the file holds a NUL byte";
		return -1;
	}
	skip_ws(&r);
	int rc = -1;
	if (r.p >= r.end)
		refuse(&r, "empty");
	else if (*r.p != '{')
		refuse(&r, "not a JSON object");
	else if (section_object(&r, out, 1) == 0) {
		skip_ws(&r);
		rc = r.p == r.end ? 0 : refuse(&r, "trailing bytes after the JSON object");
	}
	if (rc == 0) {
		settle(out);
		return 0;
	}
	cli_userdb_fields_free(out);
	*why = r.why;
	return r.oom ? -2 : -1;
}

/* ---- the drop-in directories ---------------------------------------------------------- */

static struct cli_userdb_record *add_record(struct cli_userdb *db, const char *dir, const char *name)
{
	if (db->nrecords == db->cap) {
		size_t n = db->cap ? 2 * db->cap : 16;
		struct cli_userdb_record *nr = realloc(db->records, n * sizeof(*nr));
		if (nr == NULL)
			return NULL;
		db->records = nr;
		db->cap = n;
	}
	struct cli_userdb_record *rec = &db->records[db->nrecords];
	*rec = (struct cli_userdb_record){ 0 };
	if (asprintf(&rec->path, "%s%s%s", dir, name ? "/" : "", name ? name : "") < 0)
		return NULL;
	db->nrecords++;
	return rec;
}

/* "WHAT: DETAIL" (DETAIL may be NULL) as the record's error. */
static int set_error(struct cli_userdb *db, struct cli_userdb_record *rec, const char *what,
		     const char *detail)
{
	if (asprintf(&rec->error, "%s%s%s", what, detail ? ": " : "", detail ? detail : "") < 0) {
		rec->error = NULL;
		return -1;
	}
	db->nerrors++;
	return 0;
}

/* The record's error about a file read for it: @companion NULL for NAME.user itself, else
 * the path of its NAME.user-privileged ("cannot merge PATH: WHAT: DETAIL"). */
static int file_error(struct cli_userdb *db, struct cli_userdb_record *rec, const char *companion,
		      const char *what, const char *detail)
{
	if (companion == NULL)
		return set_error(db, rec, what, detail);
	char *text = NULL;
	if (asprintf(&text, "cannot merge %s: %s", companion, what) < 0)
		return -1;
	int rc = set_error(db, rec, text, detail);
	free(text);
	return rc;
}

static const char *file_type(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "another kind of file";
}

/* systemd masks a drop-in by a symlink to /dev/null (CONF_FILES_FILTER_MASKED). */
static int is_null_device(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3);
}

/* The name check systemd makes (userdb-dropin.c load_user): NAME.user holds userName NAME,
 * UID.user holds uid UID. */
static const char *name_mismatch(const struct cli_userdb_fields *f, const char *name)
{
	size_t stem = strlen(name) - strlen(".user");
	int digits = stem > 0 && stem <= 10;
	uint64_t uid = 0;
	for (size_t i = 0; i < stem && digits; i++) {
		digits = name[i] >= '0' && name[i] <= '9';
		uid = uid * 10 + (uint64_t)(name[i] - '0');
	}
	if (f->user == NULL)
		return "no userName";
	if (digits)
		return f->has_uid && f->uid == uid ? NULL : "its uid is not the number in the file name";
	if (strlen(f->user) != stem || memcmp(f->user, name, stem) != 0)
		return "its userName is not the file name";
	return NULL;
}

/* Read and parse the open @fd (NAME.user, or with @companion its NAME.user-privileged) into
 * @f, its file's identity into @st. Judge the open descriptor, never the name again: it is
 * what was read. 0 read, 1 refused (the record's error says why), -1 out of memory. */
static int read_fields(struct cli_userdb *db, struct cli_userdb_record *rec, int fd,
		       const char *companion, struct cli_userdb_fields *f, struct stat *st)
{
	struct cli_text t = { NULL, 0 };
	const char *why;
	if (fstat(fd, st) < 0)
		return file_error(db, rec, companion, "cannot examine", strerror(errno)) < 0 ? -1 : 1;
	if (!S_ISREG(st->st_mode))
		return file_error(db, rec, companion, "not a regular file", file_type(st->st_mode)) < 0 ? -1 : 1;
	int rc = cli_read_bounded(fd, CLI_USERDB_MAX_BYTES, &t);
	if (rc == -2)
		rc = -1;
	else if (rc < 0)
		rc = file_error(db, rec, companion, "cannot read", strerror(errno)) < 0 ? -1 : 1;
	else if (t.len > CLI_USERDB_MAX_BYTES)
		rc = file_error(db, rec, companion, "larger than 262144 bytes: refused unread", NULL) < 0 ? -1 : 1;
	else if ((rc = cli_userdb_parse(t.bytes, t.len, f, &why)) == -1)
		rc = file_error(db, rec, companion, companion ? "not a JSON object systemd reads"
					: "not a user record systemd reads", why) < 0 ? -1 : 1;
	else if (rc == -2)
		rc = -1;
	cli_text_free(&t);
	return rc;
}

/* NAME.user-privileged beside the record read from DIR/NAME.user (userdb-dropin.c load_user):
 * systemd merges it when it opens; a name that opens with ENOENT is none (the record is
 * complete); any other failure, and a file that is no JSON object, fail the lookup of the
 * record. A link to /dev/null opens too, and is no JSON object. -1 out of memory. */
static int read_companion(struct cli_userdb *db, struct cli_userdb_record *rec, int dfd,
			  const char *name)
{
	char *pname = NULL, *ppath = NULL;
	struct cli_userdb_fields over = { 0 };
	struct stat st;
	int rc = 0, fd = -1;
	if (asprintf(&pname, "%s-privileged", name) < 0)
		return -1;
	if (asprintf(&ppath, "%s-privileged", rec->path) < 0) {
		free(pname);
		return -1;
	}
	/* judged by stat before it is opened: a FIFO would block the open, a device act on it */
	if (fstatat(dfd, pname, &st, 0) < 0)
		rc = errno == ENOENT ? 0 : file_error(db, rec, ppath, "cannot examine", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = file_error(db, rec, ppath, "not a regular file", file_type(st.st_mode));
	else if ((fd = openat(dfd, pname, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		rc = errno == ENOENT ? 0 : file_error(db, rec, ppath, "cannot open", strerror(errno));
	else if ((rc = read_fields(db, rec, fd, ppath, &over, &st)) == 0) {
		overlay(&rec->f, &over);
		rec->privileged = ppath;
		ppath = NULL;
		rec->pdev = st.st_dev;
		rec->pino = st.st_ino;
	}
	if (fd >= 0)
		close(fd);
	cli_userdb_fields_free(&over);
	free(pname);
	free(ppath);
	return rc < 0 ? -1 : 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Where systemd's lookup of @name stops before directory @dir, if it does: the first earlier
 * name that opens (a record, unless absent, or a mask). NULL if none. */
static const char *hider(const struct cli_userdb *db, size_t dir, const char *name)
{
	const char *rec = NULL, *mask = NULL;
	size_t rec_dir = dir, mask_dir = dir;
	for (size_t i = 0; i + 1 < db->nrecords && rec == NULL; i++) {
		const struct cli_userdb_record *r = &db->records[i];
		if (r->dir < dir && !r->absent && !r->is_dir && strcmp(base_name(r->path), name) == 0) {
			rec = r->path;
			rec_dir = r->dir;
		}
	}
	for (size_t i = 0; i < db->nmasks && mask == NULL; i++)
		if (db->masks[i].dir < dir && strcmp(base_name(db->masks[i].path), name) == 0) {
			mask = db->masks[i].path;
			mask_dir = db->masks[i].dir;
		}
	return mask != NULL && mask_dir < rec_dir ? mask : rec;
}

/* A name linked to /dev/null: no record, but where systemd's lookup stops. */
static int add_mask(struct cli_userdb *db, size_t dir, const char *name)
{
	struct cli_userdb_mask *nm = realloc(db->masks, (db->nmasks + 1) * sizeof(*nm));
	if (nm == NULL)
		return -1;
	db->masks = nm;
	nm[db->nmasks] = (struct cli_userdb_mask){ .dir = dir };
	if (asprintf(&nm[db->nmasks].path, "%s/%s", db->dirs[dir], name) < 0)
		return -1;
	db->nmasks++;
	return 0;
}

/* One entry. A FIFO or device is judged by stat before any open (an open of a device may
 * act on it); the regular file opened is then judged again by fstat. Symlinks are followed,
 * as systemd follows them (UID.user -> NAME.user). */
static int read_record(struct cli_userdb *db, int dfd, size_t dir, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, 0) == 0 && is_null_device(&st))
		return add_mask(db, dir, name);
	struct cli_userdb_record *rec = add_record(db, db->dirs[dir], name);
	if (rec == NULL)
		return -1;
	rec->dir = dir;
	rec->hidden_by = hider(db, dir, name);
	if (fstatat(dfd, name, &st, 0) < 0) {
		rec->absent = errno == ENOENT;
		return set_error(db, rec, "cannot examine", strerror(errno));
	}
	if (!S_ISREG(st.st_mode))
		return set_error(db, rec, "not a regular file", file_type(st.st_mode));
	int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rec->absent = errno == ENOENT;
		return set_error(db, rec, "cannot open", strerror(errno));
	}
	int rc = read_fields(db, rec, fd, NULL, &rec->f, &st);
	close(fd);
	if (rc == 0) {
		rec->dev = st.st_dev;
		rec->ino = st.st_ino;
		rc = read_companion(db, rec, dfd, name);
	}
	const char *why;
	if (rc == 0 && rec->error == NULL && (why = name_mismatch(&rec->f, name)) != NULL)
		rc = set_error(db, rec, why, NULL);
	return rc < 0 ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The names NAME.user of @d, sorted (systemd's order is by name too). */
static int list_names(DIR *d, char ***names, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;
	*names = NULL;
	*n = 0;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (!has_suffix(e->d_name, ".user"))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nn = realloc(*names, cap * sizeof(*nn));
			if (nn == NULL)
				return -1;
			*names = nn;
		}
		if (((*names)[*n] = strdup(e->d_name)) == NULL)
			return -1;
		++*n;
	}
	if (errno != 0)
		return -2;
	qsort(*names, *n, sizeof(**names), by_name);
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A directory that cannot be read is an error record under its own path: its records are
 * unknown, which is not none. */
static int dir_error(struct cli_userdb *db, size_t index, int err)
{
	struct cli_userdb_record *rec = add_record(db, db->dirs[index], NULL);
	if (rec == NULL)
		return -1;
	rec->dir = index;
	rec->is_dir = 1;
	return set_error(db, rec, "cannot read the directory", strerror(err));
}

static int load_dir(struct cli_userdb *db, size_t index)
{
	const char *dir = db->dirs[index];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (dfd < 0)
		return errno == ENOENT ? 0 : dir_error(db, index, errno);
	DIR *d = fdopendir(dfd);
	if (d == NULL) {
		int err = errno;
		close(dfd);
		return dir_error(db, index, err);
	}
	char **names;
	size_t n;
	int rc = list_names(d, &names, &n);
	if (rc == -2)
		rc = dir_error(db, index, errno);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = read_record(db, dirfd(d), index, names[i]);
	free_names(names, n);
	closedir(d);
	return rc;
}

/* @r's file name is its userName's: NAME.user. */
static int named_for_user(const struct cli_userdb_record *r)
{
	const char *base = strrchr(r->path, '/');
	base = base ? base + 1 : r->path;
	if (r->f.user == NULL)
		return 0;
	size_t n = strlen(r->f.user);
	return strncmp(base, r->f.user, n) == 0 && strcmp(base + n, ".user") == 0;
}

/* Two names of one record: one file, and one companion merged into it (or none). */
static int one_file(const struct cli_userdb_record *a, const struct cli_userdb_record *b)
{
	return a->error == NULL && b->error == NULL && a->dev == b->dev && a->ino == b->ino &&
	       (a->privileged != NULL) == (b->privileged != NULL) &&
	       (a->privileged == NULL || (a->pdev == b->pdev && a->pino == b->pino));
}

/* The record that holds the file @db->records[@i] was read from: of the names of that file,
 * the first named for its user, else the first. */
static size_t holder(const struct cli_userdb *db, size_t i)
{
	size_t first = i;
	for (size_t j = 0; j < db->nrecords; j++) {
		if (j != i && !one_file(&db->records[i], &db->records[j]))
			continue;
		if (named_for_user(&db->records[j]))
			return j;
		if (j < first)
			first = j;
	}
	return first;
}

/* systemd writes a user's record as NAME.user and links UID.user to it; audit must report
 * what the record does once, not once per name. */
static void mark_other_names(struct cli_userdb *db)
{
	for (size_t i = 0; i < db->nrecords; i++) {
		if (db->records[i].error != NULL)
			continue;	/* not read: no file to share */
		size_t h = holder(db, i);
		if (h != i)
			db->records[i].same_as = db->records[h].path;
	}
}

int cli_userdb_load(struct cli_userdb *db, const char *const *dirs, size_t ndirs)
{
	*db = (struct cli_userdb){ .dirs = dirs, .ndirs = ndirs };
	for (size_t i = 0; i < ndirs; i++)
		if (load_dir(db, i) < 0)
			return -1;
	mark_other_names(db);
	return 0;
}

void cli_userdb_free(struct cli_userdb *db)
{
	for (size_t i = 0; i < db->nrecords; i++) {
		free(db->records[i].path);
		free(db->records[i].error);
		free(db->records[i].privileged);
		cli_userdb_fields_free(&db->records[i].f);
	}
	free(db->records);
	db->records = NULL;
	db->nrecords = 0;
	for (size_t i = 0; i < db->nmasks; i++)
		free(db->masks[i].path);
	free(db->masks);
	db->masks = NULL;
	db->nmasks = 0;
}
