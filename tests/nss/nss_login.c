/*
 * nss_login.c - one login through the real libpam and the real glibc NSS, no wrapper:
 *   nss_login CONFDIR SERVICE USER
 * runs CONFDIR/SERVICE's account and setcred stacks for USER (pam_start_confdir) and prints
 * "account=RC setcred=RC CapInh=HEX": the pI the module gave this process, then
 * "fds_left=N": the descriptors the transaction left open (after pam_end). Run as root, in the
 * private mount namespace tests/nss/run.sh sets up (its nsswitch.conf, its NSS modules, its
 * nscd). A fresh process per login: pI is the process's own. What the module logs through
 * syslog(3) is appended to $SYSLOG_CAPTURE instead: linked with tests/cli/syslog_capture.c,
 * whose syslog entry points, being the executable's (--export-dynamic), are the ones libpam
 * binds to, so no syslog daemon is needed.
 */
#include <dirent.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int no_conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	(void)n;
	(void)msg;
	(void)resp;
	(void)data;
	return PAM_CONV_ERR;
}

static unsigned long long cap_inheritable(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned long long inh = ~0ULL;	/* not found: no test can mistake it for a grant */
	while (f != NULL && getline(&line, &cap, f) > 0)
		if (strncmp(line, "CapInh:", 7) == 0)
			inh = strtoull(line + 7, NULL, 16);
	free(line);
	if (f != NULL)
		fclose(f);
	return inh;
}

/* Open descriptors of this process: a login program runs many transactions (sshd's PAM process,
 * a display manager), so a module must leave none behind. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d != NULL && readdir(d) != NULL)
		n++;
	if (d != NULL)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s CONFDIR SERVICE USER\n", argv[0]);
		return 2;
	}
	struct pam_conv conv = { no_conversation, NULL };
	pam_handle_t *pamh = NULL;
	int fds = open_fds();
	int rc = pam_start_confdir(argv[2], argv[3], &conv, argv[1], &pamh);
	if (rc != PAM_SUCCESS) {
		fprintf(stderr, "pam_start_confdir: %d\n", rc);
		return 2;
	}
	int acct = pam_acct_mgmt(pamh, 0);
	int cred = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	unsigned long long inh = cap_inheritable();
	pam_end(pamh, cred);
	printf("account=%d setcred=%d CapInh=%llx\n", acct, cred, inh);
	printf("fds_left=%d\n", open_fds() - fds);
	return 0;
}
