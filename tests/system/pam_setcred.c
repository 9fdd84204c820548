/* lab-pam-setcred SERVICE USER...: for each USER, run SERVICE's auth stack in this process as a
 * login program does (pam_authenticate, then pam_setcred(PAM_ESTABLISH_CRED)) and print the
 * pI the stack's modules left, starting each time from an empty pI. No conversation: the
 * directory suite's scratch services (tests/system/directory.sh) authenticate with pam_permit,
 * so that only the capability module differs between them. As root in the guest (the modules
 * need CAP_SETPCAP to raise pI beyond pP). Output: "@@ cmp SERVICE USER RC CAPINH" lines. */
#include <stdio.h>
#include <string.h>
#include <security/pam_appl.h>
#include <sys/capability.h>

static int no_conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	(void)n; (void)msg; (void)resp; (void)data;
	return PAM_CONV_ERR;
}

/* pI as /proc/self/status shows it (CapInh), or "?" */
static void cap_inh(char *out, size_t size)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	snprintf(out, size, "?");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "CapInh:\t", 8) == 0)
			snprintf(out, size, "%.*s", (int)strcspn(line + 8, "\n"), line + 8);
	if (f != NULL)
		fclose(f);
}

static int clear_inheritable(void)
{
	cap_t c = cap_get_proc();
	int rc = c == NULL || cap_clear_flag(c, CAP_INHERITABLE) != 0 || cap_set_proc(c) != 0 ? -1 : 0;
	cap_free(c);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "--help") == 0) {
		fprintf(stderr, "usage: lab-pam-setcred SERVICE USER...   (as root)\n");
		return argc < 3 ? 2 : 0;
	}
	struct pam_conv conv = { no_conv, NULL };
	for (int i = 2; i < argc; i++) {
		char inh[64];
		pam_handle_t *h = NULL;
		int rc = clear_inheritable() == 0 ? PAM_SUCCESS : PAM_SYSTEM_ERR;
		if (rc == PAM_SUCCESS)
			rc = pam_start(argv[1], argv[i], &conv, &h);
		if (rc == PAM_SUCCESS)
			rc = pam_authenticate(h, 0);
		if (rc == PAM_SUCCESS)
			rc = pam_setcred(h, PAM_ESTABLISH_CRED);
		cap_inh(inh, sizeof(inh));
		printf("@@ cmp %s %s %d %s\n", argv[1], argv[i], rc, inh);
		if (h != NULL)
			pam_end(h, rc);
	}
	return 0;
}
