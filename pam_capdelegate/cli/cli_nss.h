/*
 * cli_nss.h - what a policy rests on in NSS: the group lines whose effect depends on NSS's
 * answers being complete, and the NSS configuration of this host that can make an answer
 * incomplete without an error (pam_capdelegate(8), GROUPS). Shared by check and audit.
 */
#ifndef CLI_NSS_H
#define CLI_NSS_H

#include <stddef.h>

#include "cd_policy.h"

/* What was found, one call per item:
 *  "narrowing-group"  @rule: the first line of a group whose lines give less than "*"
 *                     (@caps: what "*" gives more); a user outside it gets "*" only when NSS
 *                     shows that, and nothing while it cannot. Informational.
 *  "narrowing-group-no-members" @rule: such a group that NSS answers with no members (and the
 *                     local group file does not hold so): nobody can be shown outside it, and
 *                     whoever falls to "*" gets nothing.
 *  "group-name-twice" @rule: a group of the policy that /etc/group holds under another gid
 *                     than NSS answers: two groups of one name.
 *  "nss-order"        the group line of nsswitch.conf lets a later source's "not found" hide
 *                     an earlier source's outage.
 *  "nscd-group-cache" nscd answers the group database: answers as old as its cache.
 * @where: the host's file the item is about (nsswitch.conf, nscd's socket), NULL with @rule.
 * @text is the sentence that follows "group 'NAME' " (with @rule) or stands alone. */
typedef void (*cli_nss_report_fn)(void *arg, const char *id, const struct cd_rule *rule,
				  const char *where, cd_capmask caps, const char *text);

/* Report @pol's dependencies on NSS (nothing for a policy without group lines), reading this
 * host's /etc/nsswitch.conf, /etc/group, /etc/nscd.conf and nscd's socket. Returns how many
 * reports were warnings (all but "narrowing-group"), or -1 if memory ran out. */
long cli_nss_hazards(const struct cd_policy *pol, cli_nss_report_fn fn, void *arg);

#endif
