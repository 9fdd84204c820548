/*
 * cli_report.c - report FILE...: many hosts' `audit --json` documents in one fleet view: who
 * holds each capability where (the policy lines each audit recorded), the hosts whose marks
 * drifted, every error-level finding, and the subjects whose lines differ between hosts.
 * Every input byte is hostile: json-c parses with a depth limit, the whole file must be one
 * document (nothing after it but white space), strings must be UTF-8 without NUL, and a file
 * over REPORT_MAX_SIZE or of the wrong shape is rejected whole (FILE: why, exit 2).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli_common.h"
#include "cli_out.h"

/* An audit of a large tree is a few MiB; far more is not an audit. */
#define REPORT_MAX_SIZE (64u << 20)
/* The audit document nests 4 deep; json-c's default (32) would allow more than any audit. */
#define REPORT_MAX_DEPTH 16

static const char usage[] =
	"usage: capdelegate report [--json|--tsv] FILE...\n"
	"  A fleet view of the hosts' `capdelegate audit --json` outputs: per capability the\n"
	"  users and groups holding it and on which hosts, drifted marks, error-level findings,\n"
	"  subjects whose policy lines differ between hosts. Exit 0 fine, 1 drift or differences,\n"
	"  2 a file rejected or an error-level finding. See capdelegate(8).\n";

struct host {
	const char *file;
	char *name;		/* host_hex's bytes, else host, else the file name */
	int named_by_file;
	json_object *doc;
};

struct report {
	struct host *hosts;
	size_t nhosts;
	int rc;
};

/* "capdelegate: report: FILE: WHAT[DETAIL]", the file name and the detail escaped. */
static void say_file(const char *file, const char *what, const char *detail)
{
	fputs("capdelegate: report: ", stderr);
	cli_text_escape(stderr, file);
	fprintf(stderr, ": %s", what);
	if (detail != NULL)
		cli_text_escape(stderr, detail);
	fputc('\n', stderr);
}

/* The whole file, less than REPORT_MAX_SIZE bytes, NUL-terminated; NULL with *why set. */
static char *read_all(const char *file, size_t *len, const char **why)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st = { 0 };
	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*why = S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file";
		close(fd);
		return NULL;
	}
	size_t cap = 0, n = 0;
	char *buf = NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = n >= REPORT_MAX_SIZE ? NULL : realloc(buf, cap + 1);
			if (nb == NULL) {
				*why = n >= REPORT_MAX_SIZE ? "larger than 64 MiB: not an audit"
							    : strerror(ENOMEM);
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
			close(fd);
			buf[n] = '\0';
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	close(fd);
	free(buf);
	return NULL;
}

/* One document and nothing after it but white space; NULL with *why set and *at the byte
 * where parsing stopped. */
static json_object *parse(const char *buf, size_t len, const char **why, size_t *at)
{
	json_tokener *tok = json_tokener_new_ex(REPORT_MAX_DEPTH);
	if (tok == NULL) {
		*why = strerror(ENOMEM);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *doc = len <= INT32_MAX ? json_tokener_parse_ex(tok, buf, (int)len) : NULL;
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (doc == NULL || e != json_tokener_success) {
		*at = end;
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

/* A string member: UTF-8 (the tokener checked), no NUL inside. NULL if missing or not so. */
static const char *get_str(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	const char *s = json_object_get_string(v);
	return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

static json_object *get_array(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

/* caps: an array of strings. */
static int caps_ok(json_object *o)
{
	json_object *c = get_array(o, "caps");
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

/* The keys report reads, of the types capdelegate(8) documents; NULL or what is wrong. */
static const char *shape_error(json_object *doc)
{
	json_object *pol, *v;
	if (!json_object_is_type(doc, json_type_object))
		return "not a JSON object";
	if (!json_object_object_get_ex(doc, "version", &v) || !json_object_is_type(v, json_type_int))
		return "no version: not an audit --json document";
	if (!json_object_object_get_ex(doc, "policy", &pol) ||
	    !json_object_is_type(pol, json_type_object) || get_array(pol, "rules") == NULL)
		return "policy.rules: missing or not an array";
	json_object *rules = get_array(pol, "rules");
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		if (!json_object_is_type(r, json_type_object) || get_str(r, "kind") == NULL ||
		    get_str(r, "subject") == NULL || !caps_ok(r))
			return "policy.rules[]: an entry without kind, subject and caps";
	}
	json_object *f = get_array(doc, "findings");
	if (f == NULL)
		return "findings: missing or not an array";
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		if (!json_object_is_type(x, json_type_object) || get_str(x, "id") == NULL ||
		    get_str(x, "path") == NULL || get_str(x, "message") == NULL)
			return "findings[]: an entry without id, path and message";
	}
	json_object *h;
	if (json_object_object_get_ex(doc, "host", &h) && get_str(doc, "host") == NULL)
		return "host: not a string";
	return NULL;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The host's exact bytes from host_hex (host holds U+FFFD for bytes that are not UTF-8), else
 * host; NULL if neither is usable, or with *@oom set when memory ran out (a name the file
 * has is never replaced by the file name for want of memory). */
static char *host_name(json_object *doc, int *oom)
{
	const char *hex = get_str(doc, "host_hex"), *text = get_str(doc, "host");
	size_t n = hex != NULL ? strlen(hex) : 1;
	if (hex != NULL && n % 2 == 0 && n > 0) {
		char *s = malloc(n / 2 + 1);
		if (s == NULL) {
			*oom = 1;
			return NULL;
		}
		size_t i;
		for (i = 0; i < n / 2; i++) {
			int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				break;
			s[i] = (char)(hi << 4 | lo);
		}
		if (i == n / 2) {
			s[i] = '\0';
			return s;
		}
		free(s);
	}
	char *s = text != NULL && text[0] != '\0' ? strdup(text) : NULL;
	*oom = text != NULL && text[0] != '\0' && s == NULL;
	return s;
}

static int load_host(struct report *r, const char *file)
{
	const char *why = NULL;
	size_t len = 0, at = SIZE_MAX;
	char *buf = read_all(file, &len, &why);
	json_object *doc = buf != NULL ? parse(buf, len, &why, &at) : NULL;
	free(buf);
	if (doc != NULL && (why = shape_error(doc)) != NULL) {
		json_object_put(doc);
		doc = NULL;
	}
	if (doc == NULL && at != SIZE_MAX) {
		fputs("capdelegate: report: ", stderr);
		cli_text_escape(stderr, file);
		fprintf(stderr, ": rejected, not reported: byte %zu: %s\n", at, why);
		return -1;
	}
	if (doc == NULL) {
		say_file(file, "rejected, not reported: ", why);
		return -1;
	}
	struct host *h = &r->hosts[r->nhosts];
	int oom = 0;
	*h = (struct host){ .file = file, .doc = doc, .name = host_name(doc, &oom) };
	if (h->name == NULL && !oom) {
		h->named_by_file = 1;
		h->name = strdup(file);
		say_file(file, "no host name recorded (an audit before version 3?): "
			       "the file name stands for the host", NULL);
	}
	if (h->name == NULL) {
		json_object_put(doc);
		say_file(file, "", strerror(ENOMEM));
		return -1;
	}
	r->nhosts++;
	return 0;
}

/* ---- records ------------------------------------------------------------------------------ */

struct grant {
	const char *cap, *kind, *subject;
	size_t host;
};

static int grant_cmp(const void *a, const void *b)
{
	const struct grant *x = a, *y = b;
	int c = strcmp(x->cap, y->cap);
	if (c == 0)
		c = strcmp(x->kind, y->kind);
	if (c == 0)
		c = strcmp(x->subject, y->subject);
	return c != 0 ? c : (x->host > y->host) - (x->host < y->host);
}

static int is_drift(const char *id)
{
	return strncmp(id, "mark-", 5) == 0 && !cli_finding_is_error(id);
}

/* The next drift (or, with @errors, error-level) finding from host *h's finding *i on, its
 * host left in *h; NULL after the last host. */
static json_object *next_finding(const struct report *r, int errors, size_t *h, size_t *i)
{
	for (; *h < r->nhosts; (*h)++, *i = 0) {
		json_object *f = get_array(r->hosts[*h].doc, "findings");
		while (*i < json_object_array_length(f)) {
			json_object *x = json_object_array_get_idx(f, (*i)++);
			const char *id = get_str(x, "id");
			if (errors ? cli_finding_is_error(id) : is_drift(id))
				return x;
		}
	}
	return NULL;
}

static json_object *rules_of(const struct host *h)
{
	json_object *pol;
	json_object_object_get_ex(h->doc, "policy", &pol);
	return get_array(pol, "rules");
}

/* Every (capability, kind, subject, host) a policy line grants, sorted. */
static struct grant *collect_grants(const struct report *r, size_t *n)
{
	size_t total = 0;
	for (size_t h = 0; h < r->nhosts; h++) {
		json_object *rules = rules_of(&r->hosts[h]);
		for (size_t i = 0; i < json_object_array_length(rules); i++)
			total += json_object_array_length(get_array(json_object_array_get_idx(rules, i), "caps"));
	}
	struct grant *g = calloc(total + 1, sizeof(*g));
	if (g == NULL)
		return NULL;
	size_t k = 0;
	for (size_t h = 0; h < r->nhosts; h++) {
		json_object *rules = rules_of(&r->hosts[h]);
		for (size_t i = 0; i < json_object_array_length(rules); i++) {
			json_object *rule = json_object_array_get_idx(rules, i), *caps = get_array(rule, "caps");
			for (size_t c = 0; c < json_object_array_length(caps); c++)
				g[k++] = (struct grant){ json_object_get_string(json_object_array_get_idx(caps, c)),
							 get_str(rule, "kind"), get_str(rule, "subject"), h };
		}
	}
	qsort(g, k, sizeof(*g), grant_cmp);
	*n = k;
	return g;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A subject's capabilities on one host: the sorted, distinct names of all its lines joined by
 * ',', "none" for lines granting nothing, "-" for no line; malloc'ed. */
static char *subject_caps(const struct host *h, const char *kind, const char *subject)
{
	json_object *rules = rules_of(h);
	const char **names = NULL;
	size_t n = 0, lines = 0;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *rule = json_object_array_get_idx(rules, i), *caps = get_array(rule, "caps");
		if (strcmp(get_str(rule, "kind"), kind) != 0 || strcmp(get_str(rule, "subject"), subject) != 0)
			continue;
		lines++;
		const char **nn = realloc(names, (n + json_object_array_length(caps) + 1) * sizeof(*nn));
		if (nn == NULL) {
			free(names);
			return NULL;
		}
		names = nn;
		for (size_t c = 0; c < json_object_array_length(caps); c++)
			names[n++] = json_object_get_string(json_object_array_get_idx(caps, c));
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (m == NULL) {
		free(names);
		return NULL;
	}
	if (lines == 0 || n == 0)
		fputs(lines == 0 ? "-" : "none", m);
	qsort(names, n, sizeof(*names), str_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
			fprintf(m, "%s%s", i ? "," : "", names[i]);
	free(names);
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

struct subject {
	const char *kind, *subject;
};

static int subject_cmp(const void *a, const void *b)
{
	const struct subject *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);
	return c != 0 ? c : strcmp(x->subject, y->subject);
}

/* Every (kind, subject) some host's policy has a line for, sorted, each once. */
static struct subject *collect_subjects(const struct report *r, size_t *n)
{
	size_t total = 0, k = 0;
	for (size_t h = 0; h < r->nhosts; h++)
		total += json_object_array_length(rules_of(&r->hosts[h]));
	struct subject *s = calloc(total + 1, sizeof(*s));
	if (s == NULL)
		return NULL;
	for (size_t h = 0; h < r->nhosts; h++) {
		json_object *rules = rules_of(&r->hosts[h]);
		for (size_t i = 0; i < json_object_array_length(rules); i++) {
			json_object *rule = json_object_array_get_idx(rules, i);
			s[k++] = (struct subject){ get_str(rule, "kind"), get_str(rule, "subject") };
		}
	}
	qsort(s, k, sizeof(*s), subject_cmp);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (u == 0 || subject_cmp(&s[u - 1], &s[i]) != 0)
			s[u++] = s[i];
	*n = u;
	return s;
}

/* The subject's caps per host (nhosts strings), or NULL when all hosts agree (or no memory:
 * *oom). */
static char **differing(const struct report *r, const struct subject *s, int *oom)
{
	char **caps = calloc(r->nhosts + 1, sizeof(*caps));
	int differ = 0;
	for (size_t h = 0; caps != NULL && h < r->nhosts; h++) {
		caps[h] = subject_caps(&r->hosts[h], s->kind, s->subject);
		if (caps[h] == NULL)
			*oom = 1;
		else if (h > 0 && caps[0] != NULL && strcmp(caps[h], caps[0]) != 0)
			differ = 1;
	}
	if (caps == NULL)
		*oom = 1;
	if (caps != NULL && (!differ || *oom)) {
		for (size_t h = 0; h < r->nhosts; h++)
			free(caps[h]);
		free(caps);
		caps = NULL;
	}
	return caps;
}

static void free_caps(char **caps, size_t n)
{
	for (size_t h = 0; h < n; h++)
		free(caps[h]);
	free(caps);
}

static void worse(struct report *r, int rc)
{
	if (rc > r->rc)
		r->rc = rc;
}

/* ---- text: tables or TSV ------------------------------------------------------------------ */

static void text_hosts(const struct report *r, enum cli_form form)
{
	static const char *const header[] = { "HOST", "FILE", "NAMED BY", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "host", header);
	cli_table_title(&t, "Hosts");
	for (size_t h = 0; h < r->nhosts; h++) {
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, r->hosts[h].name);
		fputc('\t', o);
		cli_text_escape(o, r->hosts[h].file);
		fputs(r->hosts[h].named_by_file ? "\tfile-name" : "\thost-field", o);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

static void text_grants(const struct report *r, enum cli_form form, const struct grant *g,
			size_t n)
{
	static const char *const header[] = { "CAPABILITY", "KIND", "SUBJECT", "HOST", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "grant", header);
	cli_table_title(&t, "Who holds each capability where (policy lines)");
	for (size_t i = 0; i < n; i++) {
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, g[i].cap);
		fputc('\t', o);
		cli_text_escape(o, g[i].kind);
		fputc('\t', o);
		cli_text_escape(o, g[i].subject);
		fputc('\t', o);
		cli_text_escape(o, r->hosts[g[i].host].name);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

/* The column names of the side-by-side table: KIND, SUBJECT, then "HOST=" per host (the TSV
 * labels each field with its host). NULL without memory. */
static char **differ_header(const struct report *r)
{
	char **h = calloc(r->nhosts + 3, sizeof(*h));
	for (size_t i = 0; h != NULL && i < r->nhosts + 2; i++) {
		size_t len = 0;
		FILE *m = open_memstream(&h[i], &len);
		if (m == NULL) {
			free_caps(h, r->nhosts + 2);
			return NULL;
		}
		if (i < 2) {
			fputs(i == 0 ? "KIND" : "SUBJECT", m);
		} else {
			cli_text_escape(m, r->hosts[i - 2].name);
			fputc('=', m);
		}
		if (fclose(m) != 0) {
			free_caps(h, r->nhosts + 2);
			return NULL;
		}
	}
	return h;
}

static int text_differences(struct report *r, enum cli_form form, const struct subject *s,
			    size_t n)
{
	char **header = differ_header(r);
	int oom = header == NULL;
	struct cli_table t;
	cli_table_start(&t, stdout, form, "differs", (const char *const *)header);
	cli_table_title(&t, "Subjects whose policy lines differ between hosts");
	for (size_t i = 0; !oom && i < n; i++) {
		char **caps = differing(r, &s[i], &oom);
		if (caps == NULL)
			continue;
		worse(r, CLI_WARN);
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, s[i].kind);
		fputc('\t', o);
		cli_text_escape(o, s[i].subject);
		for (size_t h = 0; h < r->nhosts; h++) {
			fputc('\t', o);
			cli_text_escape(o, caps[h]);
		}
		cli_table_end_row(&t);
		free_caps(caps, r->nhosts);
	}
	cli_table_end(&t);
	if (header != NULL)
		free_caps(header, r->nhosts + 2);
	return oom ? -1 : 0;
}

static void text_findings(struct report *r, enum cli_form form, int errors)
{
	static const char *const header[] = { "HOST", "FINDING", "PATH", "MESSAGE", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, errors ? "error" : "drift", header);
	cli_table_title(&t, errors ? "Error-level findings" : "Drifted marks");
	size_t h = 0, i = 0;
	for (json_object *x; (x = next_finding(r, errors, &h, &i)) != NULL;) {
		worse(r, errors ? CLI_ERROR : CLI_WARN);
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, r->hosts[h].name);
		fputc('\t', o);
		cli_text_escape(o, get_str(x, "id"));
		fputc('\t', o);
		cli_text_escape(o, get_str(x, "path"));
		fputc('\t', o);
		cli_text_escape(o, get_str(x, "message"));
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_str(FILE *out, const char *key, const char *s, int hex)
{
	fprintf(out, "\"%s\":", key);
	cli_json_string(out, s);
	if (hex) {
		fprintf(out, ",\"%s_hex\":", key);
		cli_json_hex(out, s);
	}
}

static void json_hostref(FILE *out, const struct host *h)
{
	json_str(out, "host", h->name, 1);
}

static void json_grants(FILE *out, const struct report *r, const struct grant *g, size_t n)
{
	fputs("\"grants\":[", out);
	for (size_t i = 0; i < n; i++) {
		int first = i == 0 || strcmp(g[i].cap, g[i - 1].cap) != 0 ||
			    strcmp(g[i].kind, g[i - 1].kind) != 0 ||
			    strcmp(g[i].subject, g[i - 1].subject) != 0;
		if (first) {
			fputs(i ? "]},{" : "{", out);
			json_str(out, "capability", g[i].cap, 0);
			fputc(',', out);
			json_str(out, "kind", g[i].kind, 0);
			fputc(',', out);
			json_str(out, "subject", g[i].subject, 0);
			fputs(",\"hosts\":[", out);
		} else {
			fputc(',', out);
		}
		fputc('{', out);
		json_hostref(out, &r->hosts[g[i].host]);
		fputc('}', out);
	}
	fputs(n ? "]}]" : "]", out);
}

static void json_findings(FILE *out, struct report *r, int errors)
{
	const char *sep = "";
	fprintf(out, "\"%s\":[", errors ? "errors" : "drift");
	size_t h = 0, i = 0;
	for (json_object *x; (x = next_finding(r, errors, &h, &i)) != NULL;) {
		worse(r, errors ? CLI_ERROR : CLI_WARN);
		fprintf(out, "%s{", sep);
		json_hostref(out, &r->hosts[h]);
		fputc(',', out);
		json_str(out, "id", get_str(x, "id"), 0);
		fputc(',', out);
		json_str(out, "path", get_str(x, "path"), 0);
		fputc(',', out);
		json_str(out, "message", get_str(x, "message"), 0);
		fputc('}', out);
		sep = ",";
	}
	fputc(']', out);
}

/* subject_caps's text as JSON: null for no line, else the array of names; -1 when memory
 * ran out (a name is never written as another). */
static int json_caps_text(FILE *out, const char *text)
{
	if (strcmp(text, "-") == 0) {
		fputs("null", out);
		return 0;
	}
	fputc('[', out);
	for (const char *p = strcmp(text, "none") == 0 ? "" : text; *p != '\0';) {
		size_t n = strcspn(p, ",");
		char *name = strndup(p, n);
		if (name == NULL)
			return -1;
		if (p != text)
			fputc(',', out);
		cli_json_string(out, name);
		free(name);
		p += n + (p[n] == ',');
	}
	fputc(']', out);
	return 0;
}

static int json_differences(FILE *out, struct report *r, const struct subject *s, size_t n)
{
	int oom = 0;
	const char *sep = "";
	fputs("\"differs\":[", out);
	for (size_t i = 0; !oom && i < n; i++) {
		char **caps = differing(r, &s[i], &oom);
		if (caps == NULL)
			continue;
		worse(r, CLI_WARN);
		fprintf(out, "%s{", sep);
		json_str(out, "kind", s[i].kind, 0);
		fputc(',', out);
		json_str(out, "subject", s[i].subject, 0);
		fputs(",\"hosts\":[", out);
		for (size_t h = 0; h < r->nhosts; h++) {
			fputs(h ? ",{" : "{", out);
			json_hostref(out, &r->hosts[h]);
			fputs(",\"caps\":", out);
			if (json_caps_text(out, caps[h]) < 0)
				oom = 1;
			fputc('}', out);
		}
		fputs("]}", out);
		sep = ",";
		free_caps(caps, r->nhosts);
	}
	fputc(']', out);
	return oom ? -1 : 0;
}

static int print_json(struct report *r, const char *const *rejected, size_t nrejected,
		      const struct grant *g, size_t ng, const struct subject *s, size_t ns)
{
	FILE *out = stdout;
	fputs("{\"version\":1,\"hosts\":[", out);
	for (size_t h = 0; h < r->nhosts; h++) {
		fputs(h ? ",{" : "{", out);
		json_hostref(out, &r->hosts[h]);
		fputc(',', out);
		json_str(out, "file", r->hosts[h].file, 1);
		fprintf(out, ",\"named_by\":\"%s\"}", r->hosts[h].named_by_file ? "file-name" : "host-field");
	}
	fputs("],\"rejected\":[", out);
	for (size_t i = 0; i < nrejected; i++) {
		fputs(i ? ",{" : "{", out);
		json_str(out, "file", rejected[i], 1);
		fputc('}', out);
	}
	fputs("],", out);
	json_grants(out, r, g, ng);
	fputc(',', out);
	json_findings(out, r, 0);
	fputc(',', out);
	json_findings(out, r, 1);
	fputc(',', out);
	int rc = json_differences(out, r, s, ns);
	fputs("}\n", out);
	return rc;
}

/* ---- the command -------------------------------------------------------------------------- */

int cli_report_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_form form = cli_output_form(&argc, argv);
	int json = 0, c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return CLI_OK;
		}
		if (c != 'j') {
			cli_bad_option(argv, usage);
			return CLI_ERROR;
		}
		json = 1;
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	size_t nfiles = (size_t)(argc - optind), nrejected = 0;
	struct report r = { .hosts = calloc(nfiles, sizeof(*r.hosts)) };
	const char **rejected = calloc(nfiles, sizeof(*rejected));
	if (r.hosts == NULL || rejected == NULL) {
		free(r.hosts);
		free(rejected);
		fprintf(stderr, "capdelegate: report: %s\n", strerror(ENOMEM));
		return CLI_ERROR;
	}
	for (int i = optind; i < argc; i++)
		if (load_host(&r, argv[i]) != 0) {
			rejected[nrejected++] = argv[i];
			worse(&r, CLI_ERROR);
		}
	size_t ng = 0, ns = 0;
	struct grant *g = collect_grants(&r, &ng);
	struct subject *s = collect_subjects(&r, &ns);
	int oom = g == NULL || s == NULL;
	if (!oom && json) {
		oom = print_json(&r, rejected, nrejected, g, ng, s, ns) != 0;
	} else if (!oom) {
		text_hosts(&r, form);
		text_grants(&r, form, g, ng);
		text_findings(&r, form, 0);
		text_findings(&r, form, 1);
		oom = text_differences(&r, form, s, ns) != 0;
	}
	if (oom) {
		fprintf(stderr, "capdelegate: report: %s: the report is incomplete\n", strerror(ENOMEM));
		worse(&r, CLI_ERROR);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "capdelegate: report: standard output: %s\n", strerror(errno));
		worse(&r, CLI_ERROR);
	}
	for (size_t h = 0; h < r.nhosts; h++) {
		free(r.hosts[h].name);
		json_object_put(r.hosts[h].doc);
	}
	free(r.hosts);
	free(rejected);
	free(g);
	free(s);
	return r.rc;
}
