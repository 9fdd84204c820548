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
int cli_utf8_valid(const char *s);

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

#endif
