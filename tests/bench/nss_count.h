/* nss_count.h - what the NSS counter (nss_count.c, preloaded) hands pam_bench. */
#ifndef NSS_COUNT_H
#define NSS_COUNT_H

#define NSS_COUNT_FUNCS 10

struct nss_count {
	unsigned long calls[NSS_COUNT_FUNCS];	/* per function, in nss_count_name's order */
	unsigned long erange;	/* _r lookups answered ERANGE (asked again with a bigger buffer) */
	unsigned long members;	/* group members carried by the answers */
};

#endif
