/*
 * pam_bench.c - time whole PAM transactions (pam_start, authenticate, setcred, end), the
 * services interleaved so that all see the same machine state.
 *
 * usage: pam_bench CONFDIR USER ITERATIONS SERVICE...
 * PAM_BENCH_BLOCK=B: each of the ITERATIONS samples is the mean of B transactions in a row (a
 * clock that steps, such as a guest's 4 ms jiffies, then steps B times finer).
 * Prints, per service, the median and minimum microseconds per transaction, the medians of
 * pam_authenticate and pam_setcred alone, this process's CPU time per transaction (cpu_*: the
 * modules' own work, without what other processes do for them on the same CPU, such as
 * journald with a log line, auditd with a record, SSSD with a lookup), and the pI the stack
 * left (each transaction starts from an empty pI when the process may clear it). With tests/bench/nss_count.so preloaded, also
 * the NSS requests of pam_setcred and of pam_authenticate per transaction (mean), by function.
 * Uses pam_start_confdir, so the host's /etc/pam.d is never touched (the guest passes /etc/pam.d).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <security/pam_appl.h>
#include <sys/capability.h>

#include "nss_count.h"

static int no_conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	(void)n; (void)msg; (void)resp; (void)data;
	return PAM_CONV_ERR;
}

static double clock_us(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

/* The counter's entry points when it is preloaded (dlsym), else NULL: the figures then leave
 * the NSS columns out. */
static void (*take)(struct nss_count *);
static const char *(*count_name)(int);
static int block = 1;	/* transactions per sample (PAM_BENCH_BLOCK) */

struct sample {
	double total, auth, setcred, cpu;
};

struct service {
	const char *name;
	struct sample *t;
	struct nss_count auth, setcred;	/* summed over the transactions */
	char capinh[32];
};

static void add_counts(struct nss_count *sum)
{
	struct nss_count c;
	if (take == NULL)
		return;
	take(&c);
	for (int i = 0; i < NSS_COUNT_FUNCS; i++)
		sum->calls[i] += c.calls[i];
	sum->erange += c.erange;
	sum->members += c.members;
}

/* Start from an empty pI, as a login program does; the modules raise it. Lowering pI needs no
 * privilege; it fails only without a kernel that has capabilities. */
static void clear_inheritable(void)
{
	cap_t c = cap_get_proc();
	if (c != NULL && cap_clear_flag(c, CAP_INHERITABLE) == 0)
		(void)cap_set_proc(c);
	cap_free(c);
}

static void read_capinh(char *out, size_t size)
{
	cap_t c = cap_get_proc();
	unsigned long long bits = 0;
	for (cap_value_t v = 0; c != NULL && v < 64 && CAP_IS_SUPPORTED(v); v++) {
		cap_flag_value_t on = CAP_CLEAR;
		if (cap_get_flag(c, v, CAP_INHERITABLE, &on) == 0 && on == CAP_SET)
			bits |= 1ULL << v;
	}
	cap_free(c);
	snprintf(out, size, "%016llx", bits);
}

static int one_transaction(const char *confdir, struct service *s, const char *user, struct sample *t)
{
	struct pam_conv conv = { no_conv, NULL };
	pam_handle_t *pamh = NULL;
	clear_inheritable();
	add_counts(&(struct nss_count){ 0 });	/* whatever came before is not this transaction's */
	int rc = pam_start_confdir(s->name, user, &conv, confdir, &pamh);
	double t1 = now_us(), t2 = t1, t3 = t1;
	if (rc == PAM_SUCCESS) {
		rc = pam_authenticate(pamh, 0);
		t2 = now_us();
		add_counts(&s->auth);
	}
	if (rc == PAM_SUCCESS) {
		rc = pam_setcred(pamh, PAM_ESTABLISH_CRED);
		t3 = now_us();
		add_counts(&s->setcred);
	}
	read_capinh(s->capinh, sizeof(s->capinh));
	pam_end(pamh, rc);
	t->auth = t2 - t1;	/* the whole transaction is timed by one_block, over its block */
	t->setcred = t3 - t2;
	return rc;
}

/* One sample: the mean of @block transactions. Their total is timed as one interval: a clock
 * that steps makes each short interval a step or none, and a sum of those is no finer. */
static int one_block(const char *confdir, struct service *s, const char *user, struct sample *t)
{
	struct sample sum = { 0 }, one;
	int rc = PAM_SUCCESS;
	double t0 = now_us(), c0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
	for (int b = 0; b < block && rc == PAM_SUCCESS; b++) {
		rc = one_transaction(confdir, s, user, &one);
		sum.auth += one.auth;
		sum.setcred += one.setcred;
	}
	t->total = (now_us() - t0) / block;
	t->cpu = (clock_us(CLOCK_PROCESS_CPUTIME_ID) - c0) / block;
	t->auth = sum.auth / block;
	t->setcred = sum.setcred / block;
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts @v. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* A clock that steps (a guest's jiffies: 4 ms) makes medians steps too; the mean of many
 * samples does not. */
static double mean(const double *v, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	return sum / n;
}

static void print_counts(const char *phase, const struct nss_count *c, int n)
{
	unsigned long calls = 0;
	printf(" %s_nss=", phase);
	for (int i = 0, first = 1; i < NSS_COUNT_FUNCS; i++) {
		calls += c->calls[i];
		if (c->calls[i]) {
			printf("%s%s:%g", first ? "" : ",", count_name(i), (double)c->calls[i] / n);
			first = 0;
		}
	}
	printf("%s %s_calls=%g %s_erange=%g %s_members=%g", calls ? "" : "none", phase, (double)calls / n,
	       phase, (double)c->erange / n, phase, (double)c->members / n);
}

static void report(struct service *s, int n)
{
	double *v = malloc((size_t)n * sizeof(*v));
	if (v == NULL)
		exit(1);
	for (int i = 0; i < n; i++)
		v[i] = s->t[i].total;
	double med = median(v, n), min = v[0];
	printf("%s median_us=%.1f min_us=%.1f", s->name, med, min);
	for (int i = 0; i < n; i++)
		v[i] = s->t[i].auth;
	printf(" auth_median_us=%.1f auth_mean_us=%.1f", median(v, n), mean(v, n));
	for (int i = 0; i < n; i++)
		v[i] = s->t[i].setcred;
	med = median(v, n);
	printf(" setcred_median_us=%.1f setcred_min_us=%.1f setcred_mean_us=%.1f", med, v[0], mean(v, n));
	for (int i = 0; i < n; i++)
		v[i] = s->t[i].cpu;
	printf(" cpu_median_us=%.1f cpu_mean_us=%.1f capinh=%s", median(v, n), mean(v, n), s->capinh);
	if (take != NULL) {
		print_counts("setcred", &s->setcred, n * block);
		print_counts("auth", &s->auth, n * block);
	}
	putchar('\n');
	free(v);
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[1], "--help") == 0) {
		fprintf(stderr, "usage: %s CONFDIR USER ITERATIONS SERVICE...\n", argv[0]);
		return 2;
	}
	const char *confdir = argv[1], *user = argv[2];
	int n = atoi(argv[3]), nsvc = argc - 4;
	block = getenv("PAM_BENCH_BLOCK") ? atoi(getenv("PAM_BENCH_BLOCK")) : 1;
	if (n < 1 || block < 1) {
		fprintf(stderr, "%s: ITERATIONS and PAM_BENCH_BLOCK must be at least 1\n", argv[0]);
		return 2;
	}
	*(void **)&take = dlsym(RTLD_DEFAULT, "nss_count_take");
	*(void **)&count_name = dlsym(RTLD_DEFAULT, "nss_count_name");
	if (count_name == NULL)
		take = NULL;
	struct service *svc = calloc((size_t)nsvc, sizeof(*svc));
	for (int s = 0; svc != NULL && s < nsvc; s++) {
		svc[s].name = argv[4 + s];
		if ((svc[s].t = calloc((size_t)n, sizeof(struct sample))) == NULL)
			return 1;
	}
	if (svc == NULL)
		return 1;
	for (int i = 0; i < n; i++) {
		for (int s = 0; s < nsvc; s++) {
			int rc = one_block(confdir, &svc[s], user, &svc[s].t[i]);
			if (rc != PAM_SUCCESS) {
				fprintf(stderr, "%s: transaction failed: %s\n", svc[s].name, pam_strerror(NULL, rc));
				return 1;
			}
		}
	}
	for (int s = 0; s < nsvc; s++) {
		report(&svc[s], n);
		free(svc[s].t);
	}
	free(svc);
	return 0;
}
