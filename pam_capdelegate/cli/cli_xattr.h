/*
 * cli_xattr.h - decode the security.capability extended attribute (file capabilities).
 *
 * The on-disk format is the kernel's (include/uapi/linux/capability.h): a little-endian
 * magic_etc word (revision in the top byte, VFS_CAP_FLAGS_EFFECTIVE in bit 0) followed by
 * permitted/inheritable word pairs, and for revision 3 a root uid. Core-free: no libcap, no
 * policy, so the decoder can be tested on raw bytes the kernel would refuse to store.
 */
#ifndef CLI_XATTR_H
#define CLI_XATTR_H

#include <stddef.h>
#include <stdint.h>

#define CLI_XATTR_NAME "security.capability"
/* The largest valid value (revision 3); anything longer is malformed. */
#define CLI_XATTR_MAX 24

struct cli_fcaps {
	int revision;		/* 1, 2 or 3; 0 if the value is malformed */
	uint64_t permitted;	/* fP, bit n = capability n */
	uint64_t inheritable;	/* fI */
	int effective;		/* fE: VFS_CAP_FLAGS_EFFECTIVE */
	int has_rootid;		/* revision 3 only */
	uint32_t rootid;
	uint32_t unknown_flags;	/* magic_etc bits other than revision and effective */
	const char *error;	/* static reason when revision == 0 */
};

/* Decode @len bytes. Returns 0, or -1 with f->revision == 0 and f->error set. Never reads
 * past @len whatever the bytes say. */
int cli_fcaps_decode(const unsigned char *buf, size_t len, struct cli_fcaps *f);

#endif
