/*
 * cli_xattr.c - see cli_xattr.h. Sizes and masks follow include/uapi/linux/capability.h; the
 * kernel (security/commoncap.c, get_vfs_caps_from_disk) accepts exactly these sizes per
 * revision, so we do too: a value the kernel would ignore is reported as malformed.
 */
#include "config.h"

#include "cli_xattr.h"

#define REVISION_MASK	0xFF000000u
#define FLAGS_EFFECTIVE	0x00000001u
#define REVISION_1	0x01000000u	/* one 32-bit pair: 12 bytes */
#define REVISION_2	0x02000000u	/* two pairs, 64-bit sets: 20 bytes */
#define REVISION_3	0x03000000u	/* revision 2 plus a root uid: 24 bytes */

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int malformed(struct cli_fcaps *f, const char *why)
{
	f->revision = 0;
	f->error = why;
	return -1;
}

/* Permitted and inheritable words come in pairs: pair i holds bits 32*i .. 32*i+31. */
static void read_pairs(const unsigned char *p, int npairs, struct cli_fcaps *f)
{
	for (int i = 0; i < npairs; i++) {
		f->permitted |= (uint64_t)le32(p + 8 * i) << (32 * i);
		f->inheritable |= (uint64_t)le32(p + 8 * i + 4) << (32 * i);
	}
}

int cli_fcaps_decode(const unsigned char *buf, size_t len, struct cli_fcaps *f)
{
	*f = (struct cli_fcaps){ 0 };
	if (len < 4)
		return malformed(f, "shorter than the magic word");
	uint32_t magic = le32(buf);
	f->effective = (magic & FLAGS_EFFECTIVE) != 0;
	f->unknown_flags = magic & ~(REVISION_MASK | FLAGS_EFFECTIVE);
	switch (magic & REVISION_MASK) {
	case REVISION_1:
		if (len != 12)
			return malformed(f, "revision 1 value is not 12 bytes");
		read_pairs(buf + 4, 1, f);
		f->revision = 1;
		return 0;
	case REVISION_2:
		if (len != 20)
			return malformed(f, "revision 2 value is not 20 bytes");
		read_pairs(buf + 4, 2, f);
		f->revision = 2;
		return 0;
	case REVISION_3:
		if (len != 24)
			return malformed(f, "revision 3 value is not 24 bytes");
		read_pairs(buf + 4, 2, f);
		f->has_rootid = 1;
		f->rootid = le32(buf + 20);
		f->revision = 3;
		return 0;
	default:
		return malformed(f, "unknown revision");
	}
}
