/*
 * cd_apply.h - set this process's inheritable set to exactly a resolved grant.
 *
 * Kernel rules relied on (security/commoncap.c cap_capset, since 2.6.24):
 *  - a process may always lower its pI;
 *  - a new pI bit must be in the old pI or in pP, unless CAP_SETPCAP is in pE;
 *  - with CAP_SETPCAP, a new pI bit must still lie within the bounding set;
 *  - the ambient set is cut down to pP & pI, so lowering pI also ends ambient inheritance.
 * The ambient set is emptied here in any case (an ambient bit reaches every program, not only
 * files marked in fI). pE and pP are never changed here.
 */
#ifndef CD_APPLY_H
#define CD_APPLY_H

#include "cd_policy.h"

struct cd_apply_result {
	cd_capmask wanted;		/* what the policy granted */
	cd_capmask granted;		/* what pI now holds */
	cd_capmask delegated;		/* granted bits outside pP: raised through CAP_SETPCAP */
	cd_capmask dropped_bounding;	/* wanted but outside the bounding set (or unknown to the kernel) */
	cd_capmask dropped_no_setpcap;	/* wanted, outside pP and old pI, and no CAP_SETPCAP in pE */
	cd_capmask cleared;		/* bits pI held before that were not granted */
	int set_errno;			/* applying the wanted set failed (pI then cleared) */
	int clear_errno;		/* even clearing pI failed: pI is in an unknown state */
};

/* 0 when pI holds exactly r->granted; -1 when any call on the way failed (see set_errno):
 * pI is then emptied through capset(2) (clear_errno 0), or in an unknown state
 * (clear_errno set). */
int cd_apply_inheritable(cd_capmask wanted, struct cd_apply_result *r);

/* The calling thread's bounding set as a mask: what an exec can still gain from a file's fP
 * (capabilities the kernel does not know count as outside it). */
cd_capmask cd_bounding_set(void);

#endif
