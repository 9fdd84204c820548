/*
 * cli_out.c - see cli_out.h.
 */
#include "config.h"

#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

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

/* ---- records: TSV or aligned tables ------------------------------------------------------ */

enum cli_form cli_output_form(int *argc, char **argv)
{
	int tsv = 0, n = 1;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[n++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--tsv") == 0)
			tsv = 1;
		else
			argv[n++] = argv[i];
	}
	*argc = n;
	argv[n] = NULL;
	return !tsv && isatty(STDOUT_FILENO) ? CLI_FORM_TABLE : CLI_FORM_TSV;
}

void cli_table_start(struct cli_table *t, FILE *out, enum cli_form form, const char *kind,
		     const char *const *header)
{
	*t = (struct cli_table){ .out = out, .form = form, .kind = kind, .header = header };
}

void cli_table_title(struct cli_table *t, const char *title)
{
	t->title = title;
}

void cli_print_cut_short(void)
{
	fflush(NULL);
	fputs("capdelegate: error: out of memory while printing: report cut short\n", stderr);
	exit(2);	/* CLI_ERROR */
}

FILE *cli_table_row(struct cli_table *t)
{
	if (t->buf == NULL)
		t->buf = open_memstream(&t->text, &t->len);
	if (t->buf == NULL)
		cli_print_cut_short();
	return t->buf;
}

/* The name of the column whose header entry *@hp is (NULL past the header), its length
 * without a final '=' in *@len; *@hp moves on to the next column's. The callers walk the
 * columns in order: a record of a side-by-side table has a column per host. */
static const char *column_name(const char *const **hp, size_t *len)
{
	const char *h = *hp != NULL ? **hp : NULL;
	if (h != NULL)
		(*hp)++;
	*len = h != NULL ? strlen(h) : 0;
	if (*len > 0 && h[*len - 1] == '=')
		(*len)--;
	return h;
}

/* One TSV record: the kind, then each field, labelled when its column's name ends in '='. */
static void print_tsv(const struct cli_table *t, const char *row, size_t len)
{
	const char *const *hp = t->header;
	fputs(t->kind, t->out);
	for (size_t at = 0; at <= len;) {
		const char *tab = memchr(row + at, '\t', len - at);
		size_t end = tab != NULL ? (size_t)(tab - row) : len;
		size_t hl;
		const char *h = column_name(&hp, &hl);
		fputc('\t', t->out);
		if (h != NULL && h[hl] == '=')
			fwrite(h, 1, hl + 1, t->out);
		fwrite(row + at, 1, end - at, t->out);
		at = end + 1;
	}
	fputc('\n', t->out);
}

void cli_table_end_row(struct cli_table *t)
{
	if (t->form == CLI_FORM_TABLE) {
		fputc('\n', t->buf);
		return;
	}
	if (fclose(t->buf) != 0)
		cli_print_cut_short();
	print_tsv(t, t->text, t->len);
	free(t->text);
	t->buf = NULL;
	t->text = NULL;
}

/* Columns the escaped text takes on a terminal: wcwidth of each character in C.UTF-8 (East
 * Asian wide characters take 2, combining marks 0), 1 where that is unknown. Control and
 * invisible characters never get here: the fields are escaped text. */
static size_t display_width(const char *s, size_t len)
{
	static locale_t utf8;
	static int tried;
	if (!tried) {
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		tried = 1;
	}
	locale_t old = utf8 != (locale_t)0 ? uselocale(utf8) : (locale_t)0;
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = utf8_decode(p + i, len - i, &cp);
		int cw = n > 0 && utf8 != (locale_t)0 ? wcwidth((wchar_t)cp) : 1;
		w += cw < 0 ? 1 : (size_t)cw;
		i += n ? n : 1;
	}
	if (old != (locale_t)0)
		uselocale(old);
	return w;
}

struct cell {
	const char *text;
	size_t len, width;
};

/* Split the buffered records into cells: rows[r * ncols + c]. */
static struct cell *split_cells(const char *text, size_t len, size_t ncols, size_t *nrows)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	struct cell *cells = calloc(n * ncols + 1, sizeof(*cells));
	if (cells == NULL)
		return NULL;
	size_t r = 0, c = 0, start = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] != '\t' && text[i] != '\n')
			continue;
		if (c < ncols)
			cells[r * ncols + c] = (struct cell){ text + start, i - start,
							      display_width(text + start, i - start) };
		c++;
		if (text[i] == '\n') {
			r++;
			c = 0;
		}
		start = i + 1;
	}
	*nrows = n;
	return cells;
}

static size_t count_columns(const struct cli_table *t)
{
	size_t n = 0, fields = 1;
	for (; t->header != NULL && t->header[n] != NULL; n++)
		continue;
	for (size_t i = 0; i < t->len; i++) {
		if (t->text[i] == '\t')
			fields++;
		if (t->text[i] == '\n') {
			n = fields > n ? fields : n;
			fields = 1;
		}
	}
	return n;
}

static void pad(FILE *out, size_t n)
{
	while (n-- > 0)
		fputc(' ', out);
}

/* One line: each cell padded to its column's width and two spaces, the last one not. */
static void print_line(FILE *out, const struct cell *cells, const size_t *width, size_t ncols)
{
	size_t last = ncols;
	while (last > 0 && cells[last - 1].len == 0)
		last--;	/* no trailing blanks */
	for (size_t c = 0; c < last; c++) {
		fwrite(cells[c].text, 1, cells[c].len, out);
		if (c + 1 < last)
			pad(out, width[c] - cells[c].width + 2);
	}
	fputc('\n', out);
}

static void print_table(const struct cli_table *t)
{
	static int tables_printed;	/* a blank line between tables */
	size_t ncols = count_columns(t), nrows = 0;
	struct cell *cells = split_cells(t->text, t->len, ncols, &nrows);
	struct cell *head = calloc(ncols + 1, sizeof(*head));
	size_t *width = calloc(ncols + 1, sizeof(*width));
	if (cells == NULL || head == NULL || width == NULL)
		cli_print_cut_short();
	if (nrows > 0) {
		const char *const *hp = t->header;
		for (size_t c = 0; c < ncols; c++) {
			size_t hl;
			const char *h = column_name(&hp, &hl);
			head[c] = (struct cell){ h != NULL ? h : "", hl, hl };
			width[c] = hl;
			for (size_t r = 0; r < nrows; r++)
				if (cells[r * ncols + c].width > width[c])
					width[c] = cells[r * ncols + c].width;
		}
		if (tables_printed++)
			fputc('\n', t->out);
		if (t->title != NULL)
			fprintf(t->out, "== %s\n", t->title);
		if (t->header != NULL)
			print_line(t->out, head, width, ncols);
		for (size_t r = 0; r < nrows; r++) {
			if (t->header == NULL)	/* no header to say what the record is: its kind does */
				fprintf(t->out, "%s  ", t->kind);
			print_line(t->out, cells + r * ncols, width, ncols);
		}
	}
	free(cells);
	free(head);
	free(width);
}

void cli_table_end(struct cli_table *t)
{
	if (t->buf == NULL)
		return;
	if (fclose(t->buf) != 0)
		cli_print_cut_short();
	if (t->form == CLI_FORM_TABLE)
		print_table(t);
	free(t->text);
	t->buf = NULL;
	t->text = NULL;
}
