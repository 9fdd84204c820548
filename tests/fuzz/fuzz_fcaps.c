/*
 * fuzz_fcaps.c - libFuzzer harness for the security.capability decoder (cli_fcaps_decode).
 *
 * The input is the raw xattr value. Besides ASan catching any read past the value (libFuzzer
 * hands us a buffer of exactly @size bytes), the decoder is compared with a second decoder
 * written here from include/uapi/linux/capability.h alone: the kernel accepts exactly 12, 20
 * and 24 bytes for revisions 1, 2 and 3 (security/commoncap.c, get_vfs_caps_from_disk), and a
 * decoder that reports a capability the bytes do not hold would make `capdelegate audit`
 * invent privileges. Any disagreement aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_xattr.h"

#define CHECK(cond) do { if (!(cond)) fail(#cond, __LINE__); } while (0)

static void fail(const char *what, int line)
{
	fprintf(stderr, "fuzz_fcaps.c:%d: oracle violated: %s\n", line, what);
	abort();
}

static uint32_t word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Expected size per revision (index = revision), 0 = not a revision the kernel knows. */
	static const size_t sizes[256] = { [1] = 12, [2] = 20, [3] = 24 };
	struct cli_fcaps f;
	int rc = cli_fcaps_decode(data, size, &f);

	uint32_t magic = size >= 4 ? word(data) : 0;
	unsigned rev = magic >> 24;
	int valid = size >= 4 && sizes[rev] != 0 && size == sizes[rev];

	CHECK((rc == 0) == valid);
	if (!valid) {
		CHECK(rc == -1 && f.revision == 0 && f.error != NULL);
		return 0;
	}
	CHECK(f.revision == (int)rev && f.error == NULL);
	/* Pair i of (permitted, inheritable) words holds capabilities 32*i .. 32*i+31. */
	uint64_t p = word(data + 4), i = word(data + 8);
	if (rev >= 2) {
		p |= (uint64_t)word(data + 12) << 32;
		i |= (uint64_t)word(data + 16) << 32;
	}
	CHECK(f.permitted == p && f.inheritable == i);
	/* Revision 1 holds 32 bits per set: nothing above capability 31 can come from it. */
	if (rev == 1)
		CHECK(f.permitted >> 32 == 0 && f.inheritable >> 32 == 0);
	CHECK(f.effective == (int)(magic & 1));
	CHECK(f.unknown_flags == (magic & 0x00fffffeu));
	CHECK(f.has_rootid == (rev == 3));
	CHECK(f.rootid == (rev == 3 ? word(data + 20) : 0));
	return 0;
}
