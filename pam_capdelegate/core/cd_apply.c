/*
 * cd_apply.c - see cd_apply.h. libcap does the kernel's side: cap_get_proc for pI, pP and pE,
 * cap_get_bound for the bounding set, and the IAB API (cap_iab_init, cap_iab_set_proc) to set
 * pI and the ambient set, the two vectors this module changes, and nothing else.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/capability.h>

#include "cd_apply.h"

#define BIT(cap) ((cd_capmask)1 << (cap))

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
	*pi = cd_cap_flag_mask(c, CAP_INHERITABLE);
	*pp = cd_cap_flag_mask(c, CAP_PERMITTED);
	*pe = cd_cap_flag_mask(c, CAP_EFFECTIVE);
	*bound = bounding_mask(~(cd_capmask)0);
	cap_free(c);
	return 0;
}

/* pI := @m, and the ambient set emptied, through one IAB value built from nothing:
 *  - no ambient bit: an ambient bit would give every program the user runs the capability
 *    (pP' holds pA at exec), where a grant is meant for files marked with it in fI only;
 *  - no bounding bit, so cap_iab_set_proc drops none (libcap re-applies every dropped bit it
 *    is handed, raising CAP_SETPCAP in pE to do so, which a login without it could not).
 * libcap raises CAP_SETPCAP in pE only for bits outside the old pI and pP, which the caller
 * keeps only when CAP_SETPCAP is already in pE. */
static int set_inheritable(cd_capmask m)
{
	cap_iab_t iab = cap_iab_init();
	int rc = iab != NULL ? 0 : -1;
	for (cap_value_t cap = 0; rc == 0 && cap < 64; cap++)
		if ((m & BIT(cap)) && cap_iab_set_vector(iab, CAP_IAB_INH, cap, CAP_SET) < 0)
			rc = -1;
	if (rc == 0)
		rc = cap_iab_set_proc(iab);
	int saved = errno;
	cap_free(iab);
	errno = saved;
	return rc;
}

int cd_apply_inheritable(cd_capmask wanted, struct cd_apply_result *r)
{
	memset(r, 0, sizeof(*r));
	r->wanted = wanted;
	cap_t c = cap_get_proc();
	if (c == NULL) {
		r->set_errno = r->clear_errno = errno ? errno : ENOMEM;
		return -1;
	}
	cd_capmask old_pi = cd_cap_flag_mask(c, CAP_INHERITABLE);
	cd_capmask pp = cd_cap_flag_mask(c, CAP_PERMITTED);
	cap_flag_value_t setpcap = CAP_CLEAR;	/* one bit of pE is all that matters here */
	int have_setpcap = cap_get_flag(c, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap) == 0 &&
			   setpcap == CAP_SET;
	cap_free(c);

	cd_capmask want = wanted;
	r->dropped_bounding = want & ~bounding_mask(want);
	want &= ~r->dropped_bounding;
	if (!have_setpcap) {
		r->dropped_no_setpcap = want & ~(pp | old_pi);
		want &= ~r->dropped_no_setpcap;
	}
	r->cleared = old_pi & ~want;

	int rc = 0;
	if (set_inheritable(want) == 0) {
		r->granted = want;
		r->delegated = want & ~pp;
	} else {
		/* Whatever went wrong, never leave the caller's old pI to the user: clear it. */
		r->set_errno = errno ? errno : EPERM;
		if (set_inheritable(0) < 0)
			r->clear_errno = errno ? errno : EPERM;
		else
			r->cleared = old_pi;
		rc = -1;
	}
	return rc;
}
