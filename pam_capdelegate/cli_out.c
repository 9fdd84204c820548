/*
 * cli_out.c - see cli_out.h.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "cli_out.h"

static int is_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Lead byte -> sequence length and the smallest code point that length may encode. */
static size_t seq_shape(unsigned char c, uint32_t *min)
{
	if (c < 0x80) { *min = 0; return 1; }
	if ((c & 0xE0) == 0xC0) { *min = 0x80; return 2; }
	if ((c & 0xF0) == 0xE0) { *min = 0x800; return 3; }
	if ((c & 0xF8) == 0xF0) { *min = 0x10000; return 4; }
	return 0;
}

/* Length of the valid sequence at s (its code point in *cp), or 0. */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	uint32_t min;
	size_t n = seq_shape(s[0], &min);
	if (n == 0 || n > len)
		return 0;
	uint32_t c = n == 1 ? s[0] : s[0] & (0x7Fu >> n);
	for (size_t i = 1; i < n; i++) {
		if (!is_cont(s[i]))
			return 0;
		c = c << 6 | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

size_t cli_utf8_seq(const unsigned char *s, size_t len)
{
	uint32_t cp;
	return utf8_decode(s, len, &cp);
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

/* Characters that change what a reader sees without being seen (Unicode categories Cf, Zl
 * and Zp, as of Unicode 15.1): the bidi embeddings, overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069, U+061C, U+200E/F) reorder the text around them, so a file name can make a
 * line of output read as something else ("Trojan Source", CVE-2021-42574); zero-width
 * characters (U+200B..U+200D, U+2060, U+FEFF) make two different names look alike; U+2028
 * and U+2029 break lines in viewers that honour them. Ranges sorted; unassigned code points
 * inside a block (U+2065) are included. */
static const struct {
	uint32_t lo, hi;
} invisible[] = {
	{ 0x00AD, 0x00AD }, { 0x0600, 0x0605 }, { 0x061C, 0x061C }, { 0x06DD, 0x06DD },
	{ 0x070F, 0x070F }, { 0x0890, 0x0891 }, { 0x08E2, 0x08E2 }, { 0x180E, 0x180E },
	{ 0x200B, 0x200F }, { 0x2028, 0x202E }, { 0x2060, 0x206F }, { 0xFEFF, 0xFEFF },
	{ 0xFFF9, 0xFFFB }, { 0x110BD, 0x110BD }, { 0x110CD, 0x110CD }, { 0x13430, 0x1343F },
	{ 0x1BCA0, 0x1BCA3 }, { 0x1D173, 0x1D17A }, { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F },
};

/* C0 and DEL (terminal controls), C1 (U+0080..U+009F: terminals act on some of them, CSI
 * among them) and the invisible characters above: what no output may show raw. */
static int is_hidden(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
		return 1;
	for (size_t i = 0; i < sizeof(invisible) / sizeof(invisible[0]) && cp >= invisible[i].lo; i++)
		if (cp <= invisible[i].hi)
			return 1;
	return 0;
}

/* The one text escaper of the CLI: every name, path and comm any command prints goes through
 * here, so one rule decides what reaches a terminal. Escaping byte by byte keeps it
 * reversible: \xNN always stands for exactly one byte of the input. */
void cli_text_escape(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = utf8_decode(p + i, len - i, &cp);
		if (n > 0 && !is_hidden(cp) && cp != '\\') {
			fwrite(p + i, 1, n, out);
		} else {
			/* An invalid byte alone, or every byte of a hidden character. */
			n = n ? n : 1;
			for (size_t j = 0; j < n; j++)
				fprintf(out, "\\x%02x", p[i + j]);
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

/* \uXXXX, as a UTF-16 surrogate pair above U+FFFF (RFC 8259 section 7). */
static void json_escape_cp(FILE *out, uint32_t cp)
{
	if (cp < 0x10000) {
		fprintf(out, "\\u%04x", (unsigned)cp);
		return;
	}
	cp -= 0x10000;
	fprintf(out, "\\u%04x\\u%04x", (unsigned)(0xD800 + (cp >> 10)),
		(unsigned)(0xDC00 + (cp & 0x3FF)));
}

/* JSON may carry every character raw, but the document is read in terminals and editors
 * too (jq, less, a diff in review): hidden characters (is_hidden) are written as \uXXXX for
 * the same reason as in text. A parser still gets the exact string. */
void cli_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	fputc('"', out);
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = utf8_decode(p + i, len - i, &cp);
		if (n == 1)
			json_char(out, p[i]);
		else if (n > 1 && is_hidden(cp))
			json_escape_cp(out, cp);
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
