/*
 * pam_bench.c - time whole PAM transactions (pam_start, authenticate, setcred, end), two
 * services interleaved so that both see the same machine state.
 *
 * usage: pam_bench CONFDIR USER ITERATIONS SERVICE [SERVICE]
 * Prints, per service, the median and minimum microseconds per transaction.
 * Uses pam_start_confdir, so the host's /etc/pam.d is never touched.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <security/pam_appl.h>

static int no_conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	(void)n; (void)msg; (void)resp; (void)data;
	return PAM_CONV_ERR;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int one_transaction(const char *confdir, const char *service, const char *user)
{
	struct pam_conv conv = { no_conv, NULL };
	pam_handle_t *pamh = NULL;
	int rc = pam_start_confdir(service, user, &conv, confdir, &pamh);
	if (rc == PAM_SUCCESS)
		rc = pam_authenticate(pamh, 0);
	if (rc == PAM_SUCCESS)
		rc = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	pam_end(pamh, rc);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[1], "--help") == 0) {
		fprintf(stderr, "usage: %s CONFDIR USER ITERATIONS SERVICE [SERVICE]\n", argv[0]);
		return 2;
	}
	const char *confdir = argv[1], *user = argv[2];
	int n = atoi(argv[3]), nsvc = argc - 4;
	double *t[2];
	for (int s = 0; s < nsvc; s++)
		t[s] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		for (int s = 0; s < nsvc; s++) {
			double t0 = now_us();
			int rc = one_transaction(confdir, argv[4 + s], user);
			t[s][i] = now_us() - t0;
			if (rc != PAM_SUCCESS) {
				fprintf(stderr, "%s: transaction failed: %s\n", argv[4 + s], pam_strerror(NULL, rc));
				return 1;
			}
		}
	}
	for (int s = 0; s < nsvc; s++) {
		qsort(t[s], (size_t)n, sizeof(double), cmp_double);
		printf("%s median_us=%.1f min_us=%.1f\n", argv[4 + s], t[s][n / 2], t[s][0]);
		free(t[s]);
	}
	return 0;
}
