/*
 * cli_out.c - see cli_out.h.
 */
#include "config.h"

#include <string.h>

#include "cli_out.h"

static int is_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Lead byte -> sequence length and the smallest code point that length may encode. */
static size_t seq_shape(unsigned char c, unsigned int *min)
{
	if (c < 0x80) { *min = 0; return 1; }
	if ((c & 0xE0) == 0xC0) { *min = 0x80; return 2; }
	if ((c & 0xF0) == 0xE0) { *min = 0x800; return 3; }
	if ((c & 0xF8) == 0xF0) { *min = 0x10000; return 4; }
	return 0;
}

size_t cli_utf8_seq(const unsigned char *s, size_t len)
{
	unsigned int min;
	size_t n = seq_shape(s[0], &min);
	if (n == 0 || n > len)
		return 0;
	unsigned int cp = n == 1 ? s[0] : s[0] & (0x7F >> n);
	for (size_t i = 1; i < n; i++) {
		if (!is_cont(s[i]))
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

int cli_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		size_t n = cli_utf8_seq(p + i, len - i);
		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

/* C1 controls (U+0080..U+009F) are encoded as C2 80..C2 9F; terminals act on some of them. */
static int is_c1(const unsigned char *p, size_t n)
{
	return n == 2 && p[0] == 0xC2 && p[1] < 0xA0;
}

void cli_text_escape(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		size_t n = cli_utf8_seq(p + i, len - i);
		if (n == 1 && p[i] >= 0x20 && p[i] != 0x7F && p[i] != '\\') {
			fputc(p[i], out);
		} else if (n > 1 && !is_c1(p + i, n)) {
			fwrite(p + i, 1, n, out);
		} else {
			/* Escape one byte at a time: a C1 sequence or an invalid byte. */
			size_t k = n > 1 ? n : 1;
			for (size_t j = 0; j < k; j++)
				fprintf(out, "\\x%02x", p[i + j]);
			n = k;
		}
		i += n;
	}
}

static void json_char(FILE *out, unsigned char c)
{
	switch (c) {
	case '"': fputs("\\\"", out); break;
	case '\\': fputs("\\\\", out); break;
	case '\n': fputs("\\n", out); break;
	case '\t': fputs("\\t", out); break;
	case '\r': fputs("\\r", out); break;
	default:
		if (c < 0x20 || c == 0x7F)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}

void cli_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	fputc('"', out);
	for (size_t i = 0; i < len;) {
		size_t n = cli_utf8_seq(p + i, len - i);
		if (n == 1)
			json_char(out, p[i]);
		else if (n > 1)
			fwrite(p + i, 1, n, out);
		else
			fputs("\\ufffd", out);
		i += n ? n : 1;
	}
	fputc('"', out);
}

void cli_json_hex(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fprintf(out, "%02x", *p);
	fputc('"', out);
}
