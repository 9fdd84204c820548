/*
 * fuzz_marks.c - libFuzzer harness for the marks parser (cd_marks_parse, the parser
 * cd_marks_load runs on a judged file's bytes), from memory.
 *
 * Oracles, written here from capdelegate-files.conf(5) without asking the parser (a violation
 * aborts):
 *  - a rejected file keeps no mark; no parse logs more than ten errors plus two summary lines,
 *    and every message is printable ASCII;
 *  - an accepted file is re-read by a tokenizer written here: the same marks on the same lines;
 *    each path decodes (\ooo) to the mark's path, is absolute, has no empty, "." or ".."
 *    component, and is declared once; each CAPS field, read by cap_from_text here, has no fP,
 *    fI equal to the mark's and not empty, fE empty or equal to fI; each name before the
 *    operator equals one of libcap's names (cap_to_name over 0..63, any case), never "all" or
 *    a number; the options are "nosuid" at most once;
 *  - round trip: the marks printed as text (cd_path_form, libcap's text) parse to the same marks.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

#include "cd_marks.h"

#define CHECK(cond) do { if (!(cond)) fail(#cond, __LINE__); } while (0)
#define MAX_MESSAGES 12

static void fail(const char *what, int line)
{
	fprintf(stderr, "fuzz_marks.c:%d: oracle violated: %s\n", line, what);
	abort();
}

static size_t nmessages;

static void sink(void *arg, int priority, const char *msg)
{
	(void)arg;
	(void)priority;
	nmessages++;
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
		CHECK(*c >= 0x20 && *c < 0x7f);
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* \ooo decoded; a backslash before anything else is itself. */
static size_t decode(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			out[o++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return o;
}

static int is_cap_name(const char *s, size_t n)
{
	for (int cap = 0; cap < 64; cap++) {
		char *name = cap_to_name(cap);
		int same = name != NULL && strlen(name) == n && strncasecmp(name, s, n) == 0 &&
			   !(name[0] >= '0' && name[0] <= '9');
		cap_free(name);
		if (same)
			return 1;
	}
	return 0;
}

static uint64_t mask_of(cap_t c, cap_flag_t flag)
{
	uint64_t m = 0;
	for (int cap = 0; cap < 64; cap++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(c, cap, flag, &v) == 0 && v == CAP_SET)
			m |= (uint64_t)1 << cap;
	}
	return m;
}

/* The fields of one line of @text; returns how many (at most 8 kept). */
static size_t fields(const char *line, size_t len, const char **f, size_t *fl)
{
	size_t n = 0, i = 0;
	while (i < len) {
		while (i < len && blank(line[i]))
			i++;
		if (i == len || (line[i] == '#' && n != 1))
			break;
		size_t s = i;
		while (i < len && !blank(line[i]))
			i++;
		if (n < 8) {
			f[n] = line + s;
			fl[n] = i - s;
		}
		n++;
	}
	return n;
}

static void check_caps(const struct cd_mark *mk, const char *t, size_t n)
{
	size_t op = strcspn(t, "=+-");
	CHECK(op > 0 && op < n);
	for (size_t s = 0; s < op;) {
		size_t e = s;
		while (e < op && t[e] != ',')
			e++;
		CHECK(e > s && is_cap_name(t + s, e - s));
		s = e + 1;
	}
	char *text = strndup(t, n);
	cap_t c = cap_from_text(text);
	free(text);
	CHECK(c != NULL);
	uint64_t p = mask_of(c, CAP_PERMITTED), i = mask_of(c, CAP_INHERITABLE), e = mask_of(c, CAP_EFFECTIVE);
	cap_free(c);
	CHECK(p == 0 && i != 0 && i == mk->inheritable);
	CHECK(e == 0 ? !mk->effective : (e == i && mk->effective));
}

static void check_path(const struct cd_mark *mk, const char *f, size_t n)
{
	char *dec = malloc(n + 1);
	size_t dn = decode(f, n, dec);
	CHECK(dn == strlen(mk->path) && memcmp(dec, mk->path, dn) == 0);
	free(dec);
	CHECK(mk->path[0] == '/');
	CHECK(strstr(mk->path, "//") == NULL && strstr(mk->path, "/./") == NULL);
	CHECK(strstr(mk->path, "/../") == NULL && mk->path[strlen(mk->path) - 1] != '/');
	size_t l = strlen(mk->path);
	CHECK(!(l >= 2 && strcmp(mk->path + l - 2, "/.") == 0));
	CHECK(!(l >= 3 && strcmp(mk->path + l - 3, "/..") == 0));
	for (size_t k = 0; k < l; k++)
		CHECK((unsigned char)mk->path[k] >= 0x20 && mk->path[k] != 0x7f);
}

/* Re-read @text line by line; each mark line must be the next mark. */
static void reread(const struct cd_marks *m, const char *text, size_t len)
{
	size_t k = 0, lineno = 0;
	for (const char *line = text; line < text + len;) {
		const char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		const char *f[8];
		size_t fl[8], nf = fields(line, n, f, fl);
		if (nf > 0) {
			CHECK(k < m->nmarks && m->marks[k].line == lineno);
			const struct cd_mark *mk = &m->marks[k++];
			check_path(mk, f[0], fl[0]);
			CHECK(nf >= 2);
			check_caps(mk, f[1], fl[1]);
			CHECK(nf <= 3 && (nf == 2 ? mk->flags == 0 : (fl[2] == 6 && memcmp(f[2], "nosuid", 6) == 0 &&
								    mk->flags == CD_MARK_NOSUID)));
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	CHECK(k == m->nmarks);
	for (size_t i = 0; i < m->nmarks; i++)
		for (size_t j = i + 1; j < m->nmarks && j < i + 64; j++)
			CHECK(strcmp(m->marks[i].path, m->marks[j].path) != 0);
}

/* The marks as text parse to the same marks. */
static void round_trip(const struct cd_marks *m)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	CHECK(f != NULL);
	for (size_t i = 0; i < m->nmarks; i++) {
		size_t n = strlen(m->marks[i].path);
		char *form = malloc(4 * n + 4);
		cd_path_form(form, 4 * n + 4, m->marks[i].path, n);
		cap_t c = cd_mark_caps(&m->marks[i]);
		char *t = cd_fcaps_text(c);
		fprintf(f, "%s %s%s\n", form, t, m->marks[i].flags & CD_MARK_NOSUID ? " nosuid" : "");
		free(t);
		cap_free(c);
		free(form);
	}
	CHECK(fclose(f) == 0);
	struct cd_marks again;
	struct cd_log log = { .sink = sink };
	CHECK(cd_marks_parse(&again, "round-trip", out, size, NULL, &log) == CD_POLICY_OK);
	CHECK(again.nmarks == m->nmarks);
	for (size_t i = 0; i < m->nmarks; i++) {
		CHECK(strcmp(again.marks[i].path, m->marks[i].path) == 0);
		CHECK(again.marks[i].inheritable == m->marks[i].inheritable);
		CHECK(again.marks[i].effective == m->marks[i].effective);
		CHECK(again.marks[i].flags == m->marks[i].flags);
	}
	cd_marks_free(&again);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_marks m;
	struct cd_log log = { .sink = sink };
	nmessages = 0;
	enum cd_status st = cd_marks_parse(&m, "fuzz", (const char *)data, size, NULL, &log);
	CHECK(nmessages <= MAX_MESSAGES);
	if (st != CD_POLICY_OK) {
		CHECK(m.nmarks == 0 && m.marks == NULL);
	} else {
		CHECK(nmessages == 0);
		reread(&m, (const char *)data, size);
		round_trip(&m);
	}
	cd_marks_free(&m);
	return 0;
}
