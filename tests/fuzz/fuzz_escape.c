/*
 * fuzz_escape.c - libFuzzer harness for the escapers that put hostile bytes into logs and onto
 * terminals: cd_quote (syslog fields), cli_text_escape (text output), cli_json_string and
 * cli_json_hex (JSON output), and the UTF-8 scanner under them.
 *
 * Input: byte 0 picks cd_quote's limit (1..64), the rest is the text. The oracles do not trust
 * the code under test for anything: UTF-8 is judged by the table of RFC 3629 section 4 written
 * out here, and each output is decoded back by a decoder written here.
 *   - cd_quote: only its documented bytes and \xNN; decodes back to the first `max` bytes; "..."
 *     exactly when it cut; fits the buffer size cd_log.h documents.
 *   - cli_text_escape: no C0, DEL, C1, bidi control or line/paragraph separator raw; valid
 *     UTF-8; a backslash only as \xNN; decodes back to the input.
 *   - cli_json_string: a valid JSON string, none of those characters raw either, that decodes
 *     to the input with every byte that starts no valid UTF-8 sequence replaced by U+FFFD.
 * A violation aborts.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd_log.h"
#include "cli_out.h"

#define CHECK(cond) do { if (!(cond)) fail(#cond, __LINE__); } while (0)

static void fail(const char *what, int line)
{
	fprintf(stderr, "fuzz_escape.c:%d: oracle violated: %s\n", line, what);
	abort();
}

/* RFC 3629 section 4: the length of the well-formed sequence at s, 0 if none starts there. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	static const struct { unsigned char lo, hi, n, lo2, hi2; } rows[] = {
		{ 0x00, 0x7F, 1, 0, 0 },
		{ 0xC2, 0xDF, 2, 0x80, 0xBF },
		{ 0xE0, 0xE0, 3, 0xA0, 0xBF },
		{ 0xE1, 0xEC, 3, 0x80, 0xBF },
		{ 0xED, 0xED, 3, 0x80, 0x9F },
		{ 0xEE, 0xEF, 3, 0x80, 0xBF },
		{ 0xF0, 0xF0, 4, 0x90, 0xBF },
		{ 0xF1, 0xF3, 4, 0x80, 0xBF },
		{ 0xF4, 0xF4, 4, 0x80, 0x8F },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		if (s[0] < rows[r].lo || s[0] > rows[r].hi)
			continue;
		size_t n = rows[r].n;
		if (n > len)
			return 0;
		if (n > 1 && (s[1] < rows[r].lo2 || s[1] > rows[r].hi2))
			return 0;
		for (size_t i = 2; i < n; i++)
			if (s[i] < 0x80 || s[i] > 0xBF)
				return 0;
		return n;
	}
	return 0;
}

static uint32_t code_point(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t cp = s[0] & lead_mask[n];
	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3F);
	return cp;
}

/* What a terminal acts on, what reorders what the reader sees (Trojan Source, CVE-2021-42574),
 * and what hides between visible characters. */
static int is_dangerous(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||	/* C0, DEL, C1 */
	       cp == 0x061C || cp == 0x200E || cp == 0x200F ||		/* ALM, LRM, RLM */
	       (cp >= 0x2028 && cp <= 0x202E) ||	/* LS, PS, LRE, RLE, PDF, LRO, RLO */
	       (cp >= 0x2066 && cp <= 0x2069) ||	/* LRI, RLI, FSI, PDI */
	       /* zero-width space, non-joiner, joiner, word joiner, BOM: two names look alike */
	       (cp >= 0x200B && cp <= 0x200D) || cp == 0x2060 || cp == 0xFEFF;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;	/* the escapers write lower-case hex */
}

/* "\xNN" at s (at least 4 bytes left)? Its byte, else -1. */
static int hex_escape(const char *s, size_t left)
{
	if (left < 4 || s[0] != '\\' || s[1] != 'x' || hexval(s[2]) < 0 || hexval(s[3]) < 0)
		return -1;
	return hexval(s[2]) << 4 | hexval(s[3]);
}

static int quote_literal(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != 0 && strchr("._-@$*,/:+=#", c) != NULL);
}

static void check_quote(const unsigned char *text, size_t len, size_t max)
{
	/* cd_log.h: "@out must hold 4 * max + 4 bytes". A canary after it catches overruns that
	 * stay inside our own allocation. */
	size_t outsize = 4 * max + 4;
	char *out = malloc(outsize + 16);
	memset(out, 0x5a, outsize + 16);
	cd_quote(out, outsize, (const char *)text, len, max);
	for (size_t i = outsize; i < outsize + 16; i++)
		CHECK(out[i] == 0x5a);
	size_t olen = strlen(out);
	size_t keep = len < max ? len : max;
	int cut = len > max;
	if (cut) {
		CHECK(olen >= 3 && memcmp(out + olen - 3, "...", 3) == 0);
		olen -= 3;
	}
	size_t k = 0;
	for (size_t o = 0; o < olen; k++) {
		int b;
		if (quote_literal((unsigned char)out[o])) {
			b = (unsigned char)out[o++];
		} else {
			b = hex_escape(out + o, olen - o);
			CHECK(b >= 0);
			CHECK(!quote_literal((unsigned char)b));	/* one spelling per byte */
			o += 4;
		}
		CHECK(k < keep && text[k] == b);
	}
	CHECK(k == keep);
	free(out);
}

/* Run @fn on @s into a string; caller frees. */
static char *capture(void (*fn)(FILE *, const char *), const char *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	CHECK(f != NULL);
	fn(f, s);
	CHECK(fclose(f) == 0);
	return buf;
}

static void check_text(const char *s, size_t len)
{
	size_t olen;
	char *out = capture(cli_text_escape, s, &olen);
	const unsigned char *o = (const unsigned char *)out;
	size_t k = 0;
	for (size_t i = 0; i < olen;) {
		int b = hex_escape(out + i, olen - i);
		if (b >= 0) {
			CHECK(k < len && (unsigned char)s[k] == b);
			k++;
			i += 4;
			continue;
		}
		CHECK(o[i] != '\\');
		size_t n = utf8_len(o + i, olen - i);
		CHECK(n > 0);
		CHECK(!is_dangerous(code_point(o + i, n)));
		CHECK(k + n <= len && memcmp(s + k, out + i, n) == 0);
		k += n;
		i += n;
	}
	CHECK(k == len);
	free(out);
}

/* Append code point @cp to @dst as UTF-8. */
static size_t put_utf8(unsigned char *dst, uint32_t cp)
{
	if (cp < 0x80) { dst[0] = (unsigned char)cp; return 1; }
	if (cp < 0x800) { dst[0] = 0xC0 | cp >> 6; dst[1] = 0x80 | (cp & 0x3F); return 2; }
	if (cp < 0x10000) {
		dst[0] = 0xE0 | cp >> 12; dst[1] = 0x80 | (cp >> 6 & 0x3F); dst[2] = 0x80 | (cp & 0x3F);
		return 3;
	}
	dst[0] = 0xF0 | cp >> 18; dst[1] = 0x80 | (cp >> 12 & 0x3F);
	dst[2] = 0x80 | (cp >> 6 & 0x3F); dst[3] = 0x80 | (cp & 0x3F);
	return 4;
}

static int json_u(const char *p, size_t left, uint32_t *cp)
{
	*cp = 0;
	if (left < 6 || p[0] != '\\' || p[1] != 'u')
		return -1;
	for (int i = 2; i < 6; i++) {
		int c = p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 'a' : p[i];
		if (hexval(c) < 0)
			return -1;
		*cp = *cp << 4 | (uint32_t)hexval(c);
	}
	return 0;
}

/* Decode the JSON string at out (RFC 8259 section 7) into dec; its length. */
static size_t json_decode(const char *out, size_t olen, unsigned char *dec)
{
	const unsigned char *o = (const unsigned char *)out;
	size_t d = 0;
	CHECK(olen >= 2 && out[0] == '"' && out[olen - 1] == '"');
	for (size_t i = 1; i < olen - 1;) {
		CHECK(o[i] >= 0x20 && o[i] != '"');
		if (o[i] != '\\') {
			size_t n = utf8_len(o + i, olen - 1 - i);
			CHECK(n > 0);
			CHECK(!is_dangerous(code_point(o + i, n)));	/* JSON is read in terminals too */
			memcpy(dec + d, o + i, n);
			d += n;
			i += n;
			continue;
		}
		CHECK(i + 1 < olen - 1);
		const char *simple = strchr("\"\\/bfnrt", out[i + 1]);
		if (out[i + 1] != 'u') {
			CHECK(simple != NULL && out[i + 1] != '\0');
			dec[d++] = (unsigned char)"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
			i += 2;
			continue;
		}
		uint32_t cp, lo;
		CHECK(json_u(out + i, olen - 1 - i, &cp) == 0);
		i += 6;
		CHECK(cp < 0xDC00 || cp > 0xDFFF);	/* no lone low surrogate */
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			CHECK(json_u(out + i, olen - 1 - i, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF);
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i += 6;
		}
		d += put_utf8(dec + d, cp);
	}
	return d;
}

static void check_json(const char *s, size_t len)
{
	size_t olen;
	char *out = capture(cli_json_string, s, &olen);
	/* Each input byte decodes to at most 3 bytes (U+FFFD). */
	unsigned char *dec = malloc(3 * len + 1), *want = malloc(3 * len + 1);
	size_t dlen = json_decode(out, olen, dec), wlen = 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len((const unsigned char *)s + i, len - i);
		if (n == 0) {
			memcpy(want + wlen, "\xEF\xBF\xBD", 3);
			wlen += 3;
			i++;
		} else {
			memcpy(want + wlen, s + i, n);
			wlen += n;
			i += n;
		}
	}
	CHECK(dlen == wlen && memcmp(dec, want, wlen) == 0);
	free(dec);
	free(want);
	free(out);

	out = capture(cli_json_hex, s, &olen);
	CHECK(olen == 2 * len + 2 && out[0] == '"' && out[olen - 1] == '"');
	for (size_t i = 0; i < len; i++)
		CHECK((hexval(out[1 + 2 * i]) << 4 | hexval(out[2 + 2 * i])) == (unsigned char)s[i]);
	free(out);
}

static void check_utf8(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len; i++)
		CHECK(cli_utf8_seq(u + i, len - i) == utf8_len(u + i, len - i));
}

/* cd_name_form: printable ASCII only, and read back by the policy's own rules ("\ooo" is a
 * byte, any other backslash is itself, '$' bare only last) it is the name again, or its cut
 * prefix followed by "..." when longer than @max. */
static void check_name_form(const char *s, size_t len, size_t max)
{
	size_t size = 4 * max + 4;
	char *out = malloc(size);
	CHECK(out != NULL);
	cd_name_form(out, size, s, max);
	size_t olen = strlen(out), n = 0;
	CHECK(olen < size);
	char *back = malloc(olen + 1);
	CHECK(back != NULL);
	int cut = olen >= 3 && len > max && strcmp(out + olen - 3, "...") == 0;
	size_t end = cut ? olen - 3 : olen;
	for (size_t i = 0; i < end; i++) {
		unsigned char c = (unsigned char)out[i];
		CHECK(c >= 0x21 && c < 0x7f);	/* no space, no control, no byte >= 0x80 */
		CHECK(c != '$' || i == end - 1 || cut);
		if (c == '\\' && i + 3 < end && out[i + 1] >= '0' && out[i + 1] <= '3' &&
		    out[i + 2] >= '0' && out[i + 2] <= '7' && out[i + 3] >= '0' && out[i + 3] <= '7') {
			back[n++] = (char)((out[i + 1] - '0') * 64 + (out[i + 2] - '0') * 8 + (out[i + 3] - '0'));
			i += 3;
		} else {
			back[n++] = (char)c;
		}
	}
	CHECK(cut ? (n <= len && memcmp(back, s, n) == 0) : (n == len && memcmp(back, s, n) == 0));
	free(back);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t max = 1 + data[0] % 64;
	const unsigned char *text = data + 1;
	size_t len = size - 1;

	check_quote(text, len, max);

	/* The CLI's escapers take C strings: the text up to its first NUL. */
	char *s = strndup((const char *)text, len);
	size_t slen = strlen(s);
	check_utf8(s, slen);
	check_text(s, slen);
	check_json(s, slen);
	check_name_form(s, slen, max);
	free(s);
	return 0;
}
