/*
 * test_torn.c - a policy rewritten while logins read it. A writer process rewrites the policy
 * in place (truncate, then the text in chunks with short pauses, as a script writing line by
 * line does; every other time setting the file's times back an hour after each chunk, as
 * cp -p, rsync -t, touch -r and tar set an old mtime) and by rename (a whole file moved over
 * it), cycling through three versions whose grants differ for every user and which each end
 * with a late "none" line, while 8 processes run the real module through libpam. Every pI a login ends with must be one
 * whole version's grant for that user, or empty with the reason logged: a prefix of a version
 * (dave before "dave none" is reached gets @netops's cap_net_raw) is a torn grant.
 *
 * $CD_TORN_LOGINS transactions in all (5,000 by default; torn-valgrind.sh runs fewer). Prints
 * the counts: per version seen, empty with a reason, torn. Needs root; run through torn.sh.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include <security/pam_appl.h>

#define BIT(c) ((unsigned long long)1 << (c))
#define WORKERS 8
#define NVERSIONS 3
#define NUSERS 5
#define MAX_CHUNKS 4
/* The writer's pause between two chunks of an in-place rewrite. */
#define CHUNK_PAUSE_US 2000

static const char *workdir;	/* from stack.sh: holds services/, policies, logs */
static const char *module;	/* absolute path of pam_capdelegate.so */
/* The case's files, where forked children (checked by valgrind when they exit) still see them. */
static char *policy, *logpath;

/* The writer's own account, shared with the parent: how many rewrites each way, and the
 * longest a rewrite in place stood half-written (the scheduler may stop the writer there). */
struct writer_stats {
	long in_place, renamed;
	long long longest_gap_ns;
};
static struct writer_stats *wstats;

static long long mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const char *const users[NUSERS] = { "alice", "bob", "carol", "dave", "erin" };	/* carol, dave, erin: @netops */

#define PAD "# ........................................................................\n"
#define PAD8 PAD PAD PAD PAD PAD PAD PAD PAD

/* Each version as the chunks an in-place writer writes one by one: every cut between chunks
 * is a prefix the old loader granted from (the last chunk holds the "none" line). The last
 * version is also cut inside a line. */
static const struct version {
	const char *chunks[MAX_CHUNKS];
	unsigned long long grant[NUSERS];	/* alice bob carol dave erin */
} versions[NVERSIONS] = {
	{ { "# version A\n@netops cap_net_raw\nalice cap_chown\n", PAD8 PAD8,
	    "dave none\nbob cap_kill\nerin cap_fowner\n" },
	  { BIT(CAP_CHOWN), BIT(CAP_KILL), BIT(CAP_NET_RAW), 0, BIT(CAP_FOWNER) } },
	{ { "# version B\n@netops cap_syslog\nbob cap_chown\n", PAD8 PAD8,
	    "carol none\nalice cap_kill\nerin cap_net_raw\n" },
	  { BIT(CAP_KILL), BIT(CAP_CHOWN), 0, BIT(CAP_SYSLOG), BIT(CAP_NET_RAW) } },
	{ { "# version C\n@netops cap_mknod\nalice cap_setuid\n", PAD8 PAD8 "erin no",
	    "ne\nbob cap_setgid\n", "carol cap_sys_chroot\n" },
	  { BIT(CAP_SETUID), BIT(CAP_SETGID), BIT(CAP_SYS_CHROOT), BIT(CAP_MKNOD), 0 } },
};

/* What the workers saw, summed up. */
struct counts {
	long version[NVERSIONS];
	long empty_with_reason;
	long changed_reason;	/* of those, refused as changed while read */
	long rejected_logged;	/* transactions that logged a rejected policy: a part read as whole */
	long torn;
	long errors;		/* a PAM call or the harness failed */
	char example[512];	/* the first torn grant */
	char error[320];	/* the first failed call */
};

static int need_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();	/* prints SKIP: the policy must be root-owned */
	return 0;
}

static char *in_work(const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", workdir, name) > 0);
	return p;
}

static int write_all(int fd, const char *text)
{
	size_t n = strlen(text);
	return write(fd, text, n) == (ssize_t)n ? 0 : -1;
}

/* The file's times set an hour back, as cp -p, rsync -t, touch -r and tar do: only the change
 * time, which the kernel sets and no writer can, still says the file was just written. */
static int set_old_times(int fd)
{
	struct timespec t[2];
	if (clock_gettime(CLOCK_REALTIME, &t[0]) < 0)
		return -1;
	t[0].tv_sec -= 3600;
	t[1] = t[0];
	return futimens(fd, t);
}

/* In place: the inode stays, its text is replaced chunk by chunk; with @old_times, each chunk
 * is followed by setting the file's times back an hour. */
static int rewrite_in_place(const char *path, const struct version *v, int old_times)
{
	/* Half-written from the truncation on: the clock is read before the open, so that a
	 * writer stopped in open (after the truncation, before the first chunk) counts too. */
	long long last = mono_ns();
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < MAX_CHUNKS && v->chunks[i] != NULL && rc == 0; i++) {
		if (i > 0)
			usleep(CHUNK_PAUSE_US);
		rc = write_all(fd, v->chunks[i]);
		if (rc == 0 && old_times)
			rc = set_old_times(fd);
		long long now = mono_ns();
		if (now - last > wstats->longest_gap_ns)
			wstats->longest_gap_ns = now - last;
		last = now;
	}
	wstats->in_place++;
	return close(fd) < 0 ? -1 : rc;
}

/* As capdelegate.conf(5) says to: a whole file in the same directory, renamed over it. */
static int replace_by_rename(const char *path, const char *tmp, const struct version *v)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < MAX_CHUNKS && v->chunks[i] != NULL && rc == 0; i++)
		rc = write_all(fd, v->chunks[i]);
	if (fchmod(fd, 0644) < 0)
		rc = -1;
	if (close(fd) < 0 || rc < 0)
		return -1;
	wstats->renamed++;
	return rename(tmp, path);
}

/* The writer: version k % 3, in place or by rename in turn (so each version both ways; every
 * other rewrite in place sets old times as it goes), then a pause, short or long in turn, so
 * that logins meet a policy both in the middle of a change and at rest. Run first in the real-time class where allowed: a writer the scheduler stops
 * for long in the middle of a rewrite leaves a prefix at rest, which no reader can tell from
 * a whole file (that is why capdelegate.conf(5) says to rename). */
static void writer(const char *path)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		setpriority(PRIO_PROCESS, 0, -10);
	char *tmp = in_work(".torn.conf.tmp");
	for (unsigned long k = 1;; k++) {
		const struct version *v = &versions[k % NVERSIONS];
		if ((k % 2 ? rewrite_in_place(path, v, k % 4 == 3) : replace_by_rename(path, tmp, v)) < 0)
			_exit(5);
		usleep(k % 4 < 2 ? 5000 : 150000);
	}
}

static void clear_inheritable(void)
{
	cap_t c = cap_get_proc();
	if (c == NULL || cap_clear_flag(c, CAP_INHERITABLE) < 0 || cap_set_proc(c) < 0)
		_exit(6);
	cap_free(c);
}

/* The log written since @from (the worker's stderr, where pam_wrapper prints pam_syslog). */
static char *log_since(int fd, off_t *from)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		_exit(7);
	size_t n = (size_t)(st.st_size - *from);
	char *text = malloc(n + 1);
	if (text == NULL || pread(fd, text, n, *from) != (ssize_t)n)
		_exit(7);
	text[n] = '\0';
	*from = st.st_size;
	return text;
}

/* One transaction as login runs it: authenticate, setcred, open_session. The pI it leaves. */
/* libpam reads the service from our own services/ directory (pam_start_confdir, libpam 1.4):
 * pam_wrapper's per-process copy of it in /tmp/pam.X is not used. Under valgrind beside the
 * other suites, logins now and then ran without the module's line (CapInh 0, no log line at
 * all: 2 and 11 of 160 in two full runs), as a missing or half-copied service file gives. */
static int start(const char *service, const char *user, const struct pam_conv *conv,
		 pam_handle_t **pamh)
{
	char *dir = in_work("services");
	int rc = pam_start_confdir(service, user, conv, dir, pamh);
	free(dir);
	return rc;
}

/* One login; on failure *failed names the call and PAM's reason. */
static int transaction(const char *user, unsigned long long *inh, char *failed, size_t len)
{
	const struct pam_conv conv = { NULL, NULL };
	pam_handle_t *pamh = NULL;
	int rc = start("torn", user, &conv, &pamh);
	if (rc != PAM_SUCCESS) {
		snprintf(failed, len, "pam_start for %s: %d", user, rc);
		return -1;
	}
	const char *call = "pam_authenticate";
	rc = pam_authenticate(pamh, 0);
	if (rc == PAM_SUCCESS) {
		call = "pam_setcred";
		rc = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	}
	if (rc == PAM_SUCCESS) {
		call = "pam_open_session";
		rc = pam_open_session(pamh, 0);
	}
	*inh = cap_status_field("CapInh:\t");
	if (rc != PAM_SUCCESS)
		snprintf(failed, len, "%s for %s: %s", call, user, pam_strerror(pamh, rc));
	pam_end(pamh, rc);
	return rc == PAM_SUCCESS ? 0 : -1;
}

static void classify(struct counts *c, int u, unsigned long long inh, const char *log)
{
	if (strstr(log, "policy rejected") != NULL)
		c->rejected_logged++;
	/* The module's LOG_ERR lines all end so: the policy or a lookup failed, nothing granted. */
	if (inh == 0 && strstr(log, "no capabilities granted") != NULL) {
		c->empty_with_reason++;
		if (strstr(log, "changed while it was read") != NULL)
			c->changed_reason++;
		return;
	}
	for (int v = 0; v < NVERSIONS; v++)
		if (inh == versions[v].grant[u]) {
			c->version[v]++;
			return;
		}
	if (c->torn++ == 0)
		snprintf(c->example, sizeof(c->example), "%s got CapInh %llx; log:\n%.400s", users[u],
			 inh, log);
}

static void worker(int w, long logins, int out)
{
	struct counts c;
	memset(&c, 0, sizeof(c));
	char *own_log;
	if (asprintf(&own_log, "%s/torn-worker-%d.log", workdir, w) < 0)
		_exit(8);
	int lfd = open(own_log, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (lfd < 0 || dup2(lfd, 2) < 0)
		_exit(8);
	off_t from = 0;
	for (long i = 0; i < logins; i++) {
		int u = (int)((w + i) % NUSERS);
		unsigned long long inh = 0;
		clear_inheritable();
		char failed[200];
		int rc = transaction(users[u], &inh, failed, sizeof(failed));
		char *log = log_since(lfd, &from);

		if (rc < 0) {
			if (c.errors++ == 0)
				snprintf(c.error, sizeof(c.error), "%.200s; log: %.80s", failed,
					 log != NULL ? log : "");
		} else
			classify(&c, u, inh, log);
		free(log);
	}
	free(own_log);
	_exit(write(out, &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 9);
}

static void write_service(const char *path)
{
	char *svc = in_work("services/torn"), *text;
	assert_true(asprintf(&text,
			     "auth     required pam_permit.so\n"
			     "auth     required %s config=%s confdir=\n"
			     "account  required pam_permit.so\n"
			     "session  required %s config=%s confdir=\n", module, path, module, path) > 0);
	assert_int_equal(write_file(svc, text, 0644), 0);
	free(svc);
	free(text);
}

static void add_up(struct counts *sum, const struct counts *c)
{
	for (int v = 0; v < NVERSIONS; v++)
		sum->version[v] += c->version[v];
	sum->empty_with_reason += c->empty_with_reason;
	sum->changed_reason += c->changed_reason;
	sum->rejected_logged += c->rejected_logged;
	if (sum->torn == 0 && c->torn > 0)
		memcpy(sum->example, c->example, sizeof(sum->example));
	sum->torn += c->torn;
	if (sum->errors == 0 && c->errors > 0)
		memcpy(sum->error, c->error, sizeof(sum->error));
	sum->errors += c->errors;
}

static void test_torn_policy_never_grants(void **state)
{
	need_root(state);
	const char *env = getenv("CD_TORN_LOGINS");
	long total = env ? atol(env) : 5000;
	assert_true(total >= WORKERS);
	free(policy);	/* a failed earlier run of a test leaves its own */
	policy = in_work("torn.conf");
	assert_int_equal(write_file(policy, versions[0].chunks[0], 0644), 0);
	write_service(policy);
	wstats = mmap(NULL, sizeof(*wstats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(wstats != MAP_FAILED);
	memset(wstats, 0, sizeof(*wstats));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);

	pid_t wpid = fork();
	assert_true(wpid >= 0);
	if (wpid == 0)
		writer(policy);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pids[WORKERS];
	for (int w = 0; w < WORKERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			close(pfd[0]);
			worker(w, total / WORKERS + (w < total % WORKERS), pfd[1]);
		}
	}
	close(pfd[1]);
	struct counts sum, c;
	memset(&sum, 0, sizeof(sum));
	for (int w = 0; w < WORKERS; w++) {
		assert_int_equal(read(pfd[0], &c, sizeof(c)), (ssize_t)sizeof(c));
		add_up(&sum, &c);
	}
	close(pfd[0]);
	for (int w = 0; w < WORKERS; w++) {
		int st;
		assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	int wst;
	assert_int_equal(waitpid(wpid, &wst, WNOHANG), 0);	/* the writer never stopped */
	kill(wpid, SIGKILL);
	waitpid(wpid, &wst, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("# %ld transactions, %d processes, %.1f s: version A %ld, B %ld, C %ld; empty with a "
	       "logged reason %ld (changed while read %ld); torn %ld; errors %ld; a rejected policy "
	       "logged %ld\n", total, WORKERS,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       sum.version[0], sum.version[1], sum.version[2], sum.empty_with_reason,
	       sum.changed_reason, sum.torn, sum.errors, sum.rejected_logged);
	printf("# the writer: %ld rewrites in place, %ld by rename; longest pause in the middle of a "
	       "rewrite %.1f ms\n", wstats->in_place, wstats->renamed, (double)wstats->longest_gap_ns / 1e6);
	/* A writer stopped longer than the settle time in the middle of a rewrite leaves a
	 * quiescent prefix, which no reader can tell from a whole file (capdelegate.conf(5): replace
	 * the file by rename); the writer runs SCHED_FIFO so that this needs an overloaded machine. */
	if (sum.torn > 0 && wstats->longest_gap_ns >= 50 * 1000000L)	/* pam_capdelegate(8): 50 ms */
		printf("# %ld torn grants, e.g. %s\n# not held against the module: the writer stopped "
		       "mid-rewrite for %.1f ms, longer than the settle time (the documented limit)\n",
		       sum.torn, sum.example, (double)wstats->longest_gap_ns / 1e6);
	else if (sum.torn > 0)
		fail_msg("%ld torn grants (a grant no whole version gives), e.g. %s", sum.torn, sum.example);
	if (sum.errors > 0)
		fail_msg("%ld logins failed, e.g. %s", sum.errors, sum.error);
	/* A half-written file read as a whole one logs its syntax errors ("erin no"): no reading
	 * of a part may be logged either, only the reading taken. */
	if (sum.rejected_logged > 0)
		fail_msg("%ld transactions logged a rejected policy: a half-written file was taken for "
			 "a whole one", sum.rejected_logged);
	/* Not vacuous: each version was read whole, by logins, while the writer ran. */
	for (int v = 0; v < NVERSIONS; v++)
		if (sum.version[v] == 0)
			fail_msg("no login was granted version %c", 'A' + v);
	free(policy);
	policy = NULL;
	munmap(wstats, sizeof(*wstats));
}

/* A policy that never rests (a process adds a comment line to it every 2 ms, its rules the
 * same) is read again and again, then refused with the reason logged: the reading is bounded,
 * and a login waits at most CD_POLICY_READ_ATTEMPTS settle times. The file grows at each
 * change, so every change shows in its size: a change that only touched the times would not
 * show while the kernel's coarse clock stands still under load (all of them stamped alike),
 * which once let a reading here pass for one at rest (its text whole, nothing torn). */
static void test_never_at_rest_refused(void **state)
{
	need_root(state);
	free(policy);
	policy = in_work("restless.conf");
	assert_int_equal(write_file(policy, "alice cap_chown\n", 0644), 0);
	char *svc = in_work("services/torn"), *text;
	assert_true(asprintf(&text, "session required %s config=%s confdir=\n", module, policy) > 0);
	assert_int_equal(write_file(svc, text, 0644), 0);
	free(svc);
	free(text);
	pid_t toucher = fork();
	assert_true(toucher >= 0);
	if (toucher == 0) {
		struct sched_param sp = { .sched_priority = 1 };
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			setpriority(PRIO_PROCESS, 0, -10);
		for (;;) {
			int fd = open(policy, O_WRONLY | O_APPEND);
			if (fd < 0 || write(fd, "#\n", 2) != 2)
				_exit(5);
			close(fd);
			usleep(2000);
		}
	}
	logpath = in_work("restless.log");
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	long long t0 = mono_ns();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int lfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (lfd < 0 || dup2(lfd, 2) < 0)
			_exit(8);
		clear_inheritable();
		const struct pam_conv conv = { NULL, NULL };
		pam_handle_t *pamh = NULL;
		int rc = start("torn", "alice", &conv, &pamh);
		if (rc == PAM_SUCCESS)
			rc = pam_open_session(pamh, 0);
		unsigned long long inh = cap_status_field("CapInh:\t");
		pam_end(pamh, rc);
		_exit(write(pfd[1], &inh, sizeof(inh)) == (ssize_t)sizeof(inh) ? 0 : 9);
	}
	close(pfd[1]);
	unsigned long long inh = ~0ULL;
	assert_int_equal(read(pfd[0], &inh, sizeof(inh)), (ssize_t)sizeof(inh));
	close(pfd[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	long long took = mono_ns() - t0;
	kill(toucher, SIGKILL);
	waitpid(toucher, NULL, 0);
	int fd = open(logpath, O_RDONLY);
	char log[8192];
	ssize_t n = fd >= 0 ? read(fd, log, sizeof(log) - 1) : -1;
	log[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	printf("# a policy never at rest: CapInh %llx after %.0f ms\n", inh, (double)took / 1e6);
	if (inh != 0 || strstr(log, "/restless.conf: changed while it was read, 4 times in a row: "
			       "no capabilities granted") == NULL)
		fail_msg("CapInh %llx; log:\n%s", inh, log);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	free(policy);
	policy = NULL;
	free(logpath);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s WORKDIR MODULE (run through torn.sh)\n", argv[0]);
		return 2;
	}
	workdir = argv[1];
	module = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_policy_never_grants),
		cmocka_unit_test(test_never_at_rest_refused),
	};
	return cmocka_run_group_tests_name("torn", tests, NULL, NULL);
}
