/*
 * pam_ambient_stub.c - a stand-in for pam_systemd >= 254 in the system tests (Debian 12 ships
 * systemd 252, whose pam_systemd leaves capabilities alone). From 254 on, pam_systemd's
 * open_session gives the session an ambient set "also inherit": pI is replaced by that set
 * (CAP_WAKE_ALARM by default for seat sessions) and the same bits are raised in pA. This module
 * does that in open_session, so the tests can show which stack order keeps the grant.
 * Never install it outside the lab guest.
 */
#include <stddef.h>
#include <security/pam_modules.h>
#include <sys/capability.h>
#include <sys/prctl.h>

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	cap_t c = cap_get_proc();
	cap_value_t v = CAP_WAKE_ALARM;
	if (c == NULL)
		return PAM_SESSION_ERR;
	cap_clear_flag(c, CAP_INHERITABLE);
	cap_set_flag(c, CAP_INHERITABLE, 1, &v, CAP_SET);
	int rc = cap_set_proc(c);
	cap_free(c);
	if (rc != 0 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_WAKE_ALARM, 0, 0) != 0)
		return PAM_SESSION_ERR;
	return PAM_SUCCESS;
}

int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_SUCCESS;
}
