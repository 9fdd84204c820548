/*
 * cli_out.h - print hostile bytes (file names, user names, policy text) safely, as text for a
 * terminal or as JSON strings. File names may hold newlines, escape sequences and bytes that
 * are not UTF-8; none of them may break a line of text output or a JSON document.
 */
#ifndef CLI_OUT_H
#define CLI_OUT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 if the bytes there are not
 * valid UTF-8 (overlong forms, surrogates and values above U+10FFFF are invalid). */
size_t cli_utf8_seq(const unsigned char *s, size_t len);

/* Text: printable ASCII and valid UTF-8 as they are; backslash, control characters (C0, DEL,
 * C1), invisible format characters (Unicode Cf, Zl, Zp: bidi overrides and isolates,
 * zero-width characters, U+2028/U+2029; see cli_out.c) and invalid bytes as \xNN, one escape
 * per byte, so one name is one line, reads as what it is, and can be decoded back to its
 * bytes. Every text output of the CLI goes through this one function. */
void cli_text_escape(FILE *out, const char *s);

/* JSON string with quotes: invalid UTF-8 bytes become U+FFFD (the exact bytes are given
 * separately as hex, see cli_json_hex), control and invisible format characters \uXXXX. */
void cli_json_string(FILE *out, const char *s);
/* JSON string of the bytes of s in lower-case hex. */
void cli_json_hex(FILE *out, const char *s);

/* Memory ran out while printing: what was printed goes out (every stream: a table's buffer
 * too), then "report cut short" on stderr and exit 2. Never a record dropped, unlabelled or
 * unaligned in a report that goes on. */
_Noreturn void cli_print_cut_short(void);

/* Records for programs and for people, one writer for check, explain and audit. TSV: a record
 * per line, its kind first, fields separated by tabs (the form scripts read, and the default
 * when stdout is no terminal). Table: the records of one kind aligned in columns under a header
 * line, tables separated by a blank line (a terminal). The fields are written, already escaped
 * (cli_text_escape, cli_print_caps, cli_print_name), to the stream cli_table_row returns,
 * separated by '\t': escaped text holds no tab, so a field never splits, and a column's width
 * is measured on the escaped text a reader sees. */
enum cli_form { CLI_FORM_TSV, CLI_FORM_TABLE };

/* Remove every "--tsv" before "--" from argv (so each command's own option parser never sees
 * it) and say which form stdout gets: a table on a terminal, else TSV. */
enum cli_form cli_output_form(int *argc, char **argv);

/* One table. On the caller's stack; its fields are the writer's own. */
struct cli_table {
	FILE *out;
	enum cli_form form;
	const char *kind;
	const char *const *header;
	const char *title;	/* table form: a heading above the table, or NULL */
	FILE *buf;		/* TSV: the current record; table: every record, one per line */
	char *text;
	size_t len;
};

/* @header: the column names, NULL-terminated, or NULL for no header line. A name ending in '='
 * ("fP=") labels each field of its column in TSV ("fP=none"); the table shows it once, above
 * the column, without the '='. */
void cli_table_start(struct cli_table *t, FILE *out, enum cli_form form, const char *kind,
		     const char *const *header);

/* A heading printed above the table in the table form only (TSV records are unchanged):
 * "== TITLE". Call after cli_table_start. */
void cli_table_title(struct cli_table *t, const char *title);
/* The stream for the fields of the next record. Without memory for a buffer, @out itself, the
 * record printed as TSV without labels. */
FILE *cli_table_row(struct cli_table *t);
/* End the record (its fields written to cli_table_row's stream). */
void cli_table_end_row(struct cli_table *t);
/* Print what is buffered (a table: the header and the aligned rows). */
void cli_table_end(struct cli_table *t);

#endif
