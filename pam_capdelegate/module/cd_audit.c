/* cd_audit.c - see cd_audit.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libaudit.h>

#include "cd_audit.h"

void cd_audit_grant(const char *user, const char *granted, const char *rules,
		    const char *policy_status, const char *nss, const char *ended, const char *rhost,
		    const char *tty, int success)
{
	int fd = audit_open();
	if (fd < 0)
		return;	/* no audit in this kernel: nothing to do */
	/* acct is user-controlled text: encode it the way libaudit's parsers expect. */
	char *acct = audit_encode_nv_string("acct", user, 0);
	char *msg = NULL;
	if (acct != NULL &&
	    asprintf(&msg, "op=capdelegate-grant %s grant=%s policy=%s rules=%s%s%s%s%s", acct,
		     granted ? granted : "?", policy_status, rules, nss ? " nss=" : "", nss ? nss : "",
		     ended ? " window_ended=" : "", ended ? ended : "") >= 0) {
		int saved = errno;
		/* EPERM (no CAP_AUDIT_WRITE) or ECONNREFUSED: audit not usable here, stay quiet. */
		/* hostname and terminal as PAM knows them (sshd's PAM_RHOST, login's PAM_TTY):
		 * libaudit fills addr from the host name, and "?" for what is unknown */
		audit_log_user_message(fd, AUDIT_USER, msg, rhost, NULL, tty, success);
		errno = saved;
	}
	free(msg);
	free(acct);
	audit_close(fd);
}
