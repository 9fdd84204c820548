/*
 * cd_apply.c - see cd_apply.h. Uses libcap for the process sets, the bounding set and capset.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/capability.h>

#include "cd_apply.h"

#define BIT(cap) ((cd_capmask)1 << (cap))

static cd_capmask mask_of(cap_t c, cap_flag_t flag)
{
	cd_capmask m = 0;
	cap_value_t max = cap_max_bits();
	for (cap_value_t cap = 0; cap < max && cap < 64; cap++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(c, cap, flag, &v) == 0 && v == CAP_SET)
			m |= BIT(cap);
	}
	return m;
}

/* The bits of @of that lie in the bounding set. Each bit costs a prctl(PR_CAPBSET_READ), so at
 * login only the granted bits are asked about. Capabilities the kernel does not know (beyond
 * cap_max_bits) count as outside the bound. */
static cd_capmask bounding_mask(cd_capmask of)
{
	cd_capmask m = 0;
	cap_value_t max = cap_max_bits();
	for (cap_value_t cap = 0; cap < max && cap < 64; cap++)
		if ((of & BIT(cap)) && cap_get_bound(cap) == 1)
			m |= BIT(cap);
	return m;
}

int cd_read_process_caps(cd_capmask *pi, cd_capmask *pp, cd_capmask *pe, cd_capmask *bound)
{
	cap_t c = cap_get_proc();
	if (c == NULL)
		return -1;
	*pi = mask_of(c, CAP_INHERITABLE);
	*pp = mask_of(c, CAP_PERMITTED);
	*pe = mask_of(c, CAP_EFFECTIVE);
	*bound = bounding_mask(~(cd_capmask)0);
	cap_free(c);
	return 0;
}

static int set_inheritable(cap_t c, cd_capmask m)
{
	if (cap_clear_flag(c, CAP_INHERITABLE) < 0)
		return -1;
	for (cap_value_t cap = 0; cap < 64; cap++) {
		cap_value_t v = cap;
		if ((m & BIT(cap)) && cap_set_flag(c, CAP_INHERITABLE, 1, &v, CAP_SET) < 0)
			return -1;
	}
	return cap_set_proc(c);
}

int cd_apply_inheritable(cd_capmask wanted, struct cd_apply_result *r)
{
	memset(r, 0, sizeof(*r));
	r->wanted = wanted;
	cap_t c = cap_get_proc();
	if (c == NULL) {
		r->set_errno = r->clear_errno = errno;
		return -1;
	}
	cd_capmask old_pi = mask_of(c, CAP_INHERITABLE);
	cd_capmask pp = mask_of(c, CAP_PERMITTED);
	int have_setpcap = (mask_of(c, CAP_EFFECTIVE) & BIT(CAP_SETPCAP)) != 0;

	cd_capmask want = wanted;
	r->dropped_bounding = want & ~bounding_mask(want);
	want &= ~r->dropped_bounding;
	if (!have_setpcap) {
		r->dropped_no_setpcap = want & ~(pp | old_pi);
		want &= ~r->dropped_no_setpcap;
	}
	r->cleared = old_pi & ~want;

	if (set_inheritable(c, want) == 0) {
		r->granted = want;
		r->delegated = want & ~pp;
		cap_free(c);
		return 0;
	}
	/* Whatever went wrong, never leave the caller's old pI to the user: clear it. */
	r->set_errno = errno ? errno : EPERM;
	if (set_inheritable(c, 0) < 0)
		r->clear_errno = errno ? errno : EPERM;
	else
		r->cleared = old_pi;
	cap_free(c);
	return -1;
}
