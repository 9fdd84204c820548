/*
 * cli_decode.c - `capdelegate decode HEX`: decode a raw security.capability value, such as
 * `getfattr -e hex -n security.capability FILE` prints. It exists because the kernel refuses
 * to store, and getxattr to show, revision-1 and malformed values (security/commoncap.c), so
 * such values can only be read from a disk image (debugfs ea_get) and decoded here.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "cli_out.h"

static const char usage[] =
	"usage: capdelegate decode HEX\n"
	"\n"
	"Decode a raw security.capability value given in hex (an optional 0x prefix, as\n"
	"getfattr -e hex prints it). Prints revision, fP, fI, fE and the rootid of revision 3.\n"
	"Exit 0 if the value is well formed, 1 if the kernel would reject it, 2 on bad usage.\n";

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Hex text to at most @max bytes; -1 if not hex, odd-length or longer than @max. */
static long parse_hex(const char *s, unsigned char *out, size_t max)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	size_t len = strlen(s);
	if (len % 2 != 0 || len / 2 > max)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(len / 2);
}

int cli_decode_main(int argc, char **argv)
{
	unsigned char raw[256];
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	if (argc != 2) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	long n = parse_hex(argv[1], raw, sizeof(raw));
	if (n < 0) {
		fputs("capdelegate: decode: not an even-length hex string of at most 256 bytes: ", stderr);
		cli_text_escape(stderr, argv[1]);
		fputs("; nothing decoded\n", stderr);
		return CLI_ERROR;
	}
	struct cli_fcaps f;
	if (cli_fcaps_decode(raw, (size_t)n, &f) < 0) {
		printf("malformed: %s (%ld bytes)\n", f.error, n);
		return CLI_WARN;
	}
	printf("revision %d\npermitted ", f.revision);
	cli_print_caps(stdout, f.permitted);
	printf("\ninheritable ");
	cli_print_caps(stdout, f.inheritable);
	printf("\neffective %s\n", f.effective ? "yes" : "no");
	if (f.has_rootid)
		printf("rootid %u\n", (unsigned)f.rootid);
	if (f.unknown_flags)
		printf("unknown-flags 0x%08x\n", (unsigned)f.unknown_flags);
	return CLI_OK;
}
