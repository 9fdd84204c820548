/*
 * cd_audit.h - one Linux audit record per grant, when the audit socket can be used.
 *
 * Record: type AUDIT_USER (1005), message
 *   op=capdelegate-grant acct="USER" grant=CAPS policy=STATUS rules=FILE:LINE,... [nss=WHY]
 *   [window_ended=FILE:LINE,...]
 * where only acct is encoded here (libaudit's audit_encode_nv_string): the caller passes the
 * other values as single words (cd_status_token, escaped paths), since auparse splits at blanks.
 * plus the exe/hostname/addr/terminal/res fields libaudit adds (hostname and terminal from
 * PAM_RHOST and PAM_TTY; NULL for unknown). No audit support in the
 * kernel, or no permission to write (CAP_AUDIT_WRITE), is not an error: nothing is sent.
 */
#ifndef CD_AUDIT_H
#define CD_AUDIT_H

/* @nss: NULL, or why NSS gave no answer ("failed", "no_user"): the grant is then none.
 * @ended: NULL, or the lines naming the user whose window has ended ("FILE:LINE,..."). */
void cd_audit_grant(const char *user, const char *granted, const char *rules,
		    const char *policy_status, const char *nss, const char *ended, const char *rhost,
		    const char *tty, int success);

#endif
