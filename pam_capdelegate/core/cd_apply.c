/*
 * cd_apply.c - see cd_apply.h. libcap does the kernel's side: cap_get_proc for pI, pP and pE,
 * cap_get_bound for the bounding set, and the IAB API (cap_iab_init, cap_iab_set_proc) to set
 * pI and the ambient set, the two vectors this module changes, and nothing else. When any of
 * those calls fails, pI is emptied by a second path that needs none of them: capget(2) and
 * capset(2) themselves.
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

cd_capmask cd_bounding_set(void)
{
	return bounding_mask(~(cd_capmask)0);
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

/* The second path, when the grant could not be applied through libcap: capset(2) itself, pI
 * emptied, pE and pP as capget(2) reads them. Lowering pI needs no privilege (cap_capset: pI'
 * within pI | pP), and the kernel cuts the ambient set down to pP & pI', so it empties too. No
 * libcap call: its failure (an allocation, its syscall wrapper) is what led here. @seen is
 * the pI this path found and emptied. */
static int clear_inheritable_by_capset(cd_capmask *seen)
{
	struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	memset(data, 0, sizeof(data));
	if (capget(&head, data) < 0)
		return -1;
	*seen = (cd_capmask)data[1].inheritable << 32 | data[0].inheritable;
	data[0].inheritable = data[1].inheritable = 0;
	return capset(&head, data);
}

/* The grant could not be applied (@err from the failed call): never leave the caller's old pI
 * to the user, whichever call failed. */
static int fail_cleared(struct cd_apply_result *r, int err)
{
	r->set_errno = err ? err : EPERM;
	r->granted = r->delegated = 0;
	cd_capmask seen = 0;
	if (clear_inheritable_by_capset(&seen) < 0)
		r->clear_errno = errno ? errno : EPERM;
	else
		r->cleared = seen;
	return -1;
}

int cd_apply_inheritable(cd_capmask wanted, struct cd_apply_result *r)
{
	memset(r, 0, sizeof(*r));
	r->wanted = wanted;
	errno = 0;
	cap_t c = cap_get_proc();
	if (c == NULL)
		return fail_cleared(r, errno ? errno : ENOMEM);
	cd_capmask old_pi = cd_cap_flag_mask(c, CAP_INHERITABLE);	/* all of it: 'cleared' */
	/* pP only where a wanted bit is: it decides 'delegated' and, without CAP_SETPCAP, which
	 * wanted bits the kernel would refuse; no other bit of it is read */
	cd_capmask pp = cd_cap_flag_bits(c, CAP_PERMITTED, wanted);
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

	errno = 0;
	if (set_inheritable(want) < 0)
		return fail_cleared(r, errno);
	r->granted = want;
	r->delegated = want & ~pp;
	return 0;
}
