/*
 * test_module.c - stack tests that need a hand on the module's environment (each case here
 * fails on a bug the mutation suite plants, see tests/mutations/):
 *  - apply failures: this program defines every libcap call of the apply path (cap_get_proc,
 *    cap_get_flag, cap_get_bound, cap_iab_init, cap_iab_set_vector, cap_iab_set_proc) and
 *    capget/capset, and libcdcore inside the module binds to them (the module resolves these
 *    symbols through the global scope, where this executable, linked with --export-dynamic,
 *    comes first); each fails the module's calls a case picks; so do strdup, open_memstream
 *    and getgrouplist (memory running out);
 *  - getgrgid_r failing for one gid, and realpath swapping a symlink right after resolving it
 *    (the race O_NOFOLLOW on the resolved name closes), defined here the same way;
 *  - audit records: audit_open, audit_log_user_message and audit_close are defined here too,
 *    a stub libaudit that keeps the record instead of sending it to the kernel;
 *  - syslog priorities: pam_wrapper prints each pam_syslog line as "SYSLOG(N): ...";
 *  - PAM_USER changed between setcred and open_session, through pam_start/pam_set_item;
 *  - the clock: clock_gettime(CLOCK_REALTIME) as the module reads it is the case's (the policy
 *    lines' windows), set or failing between the calls of one transaction.
 * Each case runs in a forked child (capability changes stick to the process). Run through
 * module.sh (stack.sh's users, groups and wrappers); needs root.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include <libaudit.h>
#ifdef HAVE_AUPARSE
#include <auparse.h>
#endif
#include <security/pam_appl.h>

#define BIT(c) ((unsigned long long)1 << (c))

static const char *workdir;	/* from stack.sh: holds services/, policies, logs */
static const char *module;	/* absolute path of pam_capdelegate.so */

/* ---- the interposed libcap and libaudit calls ------------------------------------------- */

/* A fault: the module's calls of @fn fail as @mask says (bit N: its call N, counted from 0 since
 * the case armed the fault; bit 31: every call). Only the module's own calls count and fail:
 * libcap calling itself, libpam and this program are never refused. */
struct fault {
	const char *fn;
	unsigned mask;
};
#define MAX_FAULTS 3
static struct fault faults[MAX_FAULTS];
static int fault_calls[MAX_FAULTS];
static int fault_hits;		/* calls refused since the case armed the faults */

static int must_fail(const char *fn, void *caller)
{
	Dl_info info;
	if (dladdr(caller, &info) == 0 || info.dli_fname == NULL ||
	    strstr(info.dli_fname, "pam_capdelegate") == NULL)
		return 0;
	for (int i = 0; i < MAX_FAULTS; i++) {
		if (faults[i].fn == NULL || strcmp(faults[i].fn, fn) != 0)
			continue;
		int n = fault_calls[i]++;
		if ((faults[i].mask & (1u << 31)) || (n < 31 && (faults[i].mask & (1u << n)))) {
			fault_hits++;
			return 1;
		}
	}
	return 0;
}

/* The next definition of @fn (libcap's, glibc's), looked up once. */
#define REAL(fn) ({ static __typeof__(fn) *real_;				\
		    if (real_ == NULL)						\
			    *(void **)&real_ = dlsym(RTLD_NEXT, #fn);		\
		    real_; })

/* @fn as the module sees it: failing with @err and @bad when must_fail says so. */
#define FAULTY(type, fn, err, bad, params, args)					\
	type fn params								\
	{									\
		if (must_fail(#fn, __builtin_return_address(0))) {			\
			errno = err;							\
			return bad;							\
		}									\
		return REAL(fn) args;							\
	}

/* Every libcap call (and system call) on the module's apply path (core/cd_apply.c), each able
 * to fail as the kernel or libcap would make it. */
FAULTY(cap_t, cap_get_proc, ENOMEM, NULL, (void), ())
FAULTY(int, cap_get_flag, EINVAL, -1, (cap_t c, cap_value_t v, cap_flag_t f, cap_flag_value_t *out),
       (c, v, f, out))
FAULTY(int, cap_get_bound, EINVAL, -1, (cap_value_t v), (v))
FAULTY(cap_iab_t, cap_iab_init, ENOMEM, NULL, (void), ())
FAULTY(int, cap_iab_set_vector, EINVAL, -1,
       (cap_iab_t iab, cap_iab_vector_t vec, cap_value_t v, cap_flag_value_t raised),
       (iab, vec, v, raised))
FAULTY(int, cap_iab_set_proc, EPERM, -1, (cap_iab_t iab), (iab))
FAULTY(int, capget, EPERM, -1, (cap_user_header_t h, cap_user_data_t d), (h, d))
FAULTY(int, capset, EPERM, -1, (cap_user_header_t h, const cap_user_data_t d), (h, d))
/* and the module's copies of strings: memory running out at any of them */
FAULTY(char *, strdup, ENOMEM, NULL, (const char *s), (s))
/* the text of the deciding rules for the log and the audit record */
FAULTY(FILE *, open_memstream, ENOMEM, NULL, (char **ptr, size_t *size), (ptr, size))
/* glibc's getgrouplist fails for a reason of its own (its memory ran out) with -1 and *ngroups
 * as it was: not "too small, here is the size" */
FAULTY(int, getgrouplist, ENOMEM, -1, (const char *user, gid_t group, gid_t *groups, int *ngroups),
       (user, group, groups, ngroups))

static gid_t getgrgid_fail = (gid_t)-1;	/* getgrgid_r fails with EIO for this gid */

int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res)
{
	static int (*real)(gid_t, struct group *, char *, size_t, struct group **);
	if (gid == getgrgid_fail) {
		*res = NULL;
		return EIO;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "getgrgid_r");
	return real(gid, gr, buf, size, res);
}

/* One made-up group, "prefixes" (gid 2999), whose members are "car" and "aliceb": prefixes
 * and extensions of real users' names, none of them a user. */
int getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
	static int (*real)(const char *, struct group *, char *, size_t, struct group **);
	if (strcmp(name, "prefixes") == 0) {
		static char *members[] = { "car", "aliceb", NULL };
		if (size < sizeof("prefixes") + 2)
			return ERANGE;
		strcpy(buf, "prefixes");
		*gr = (struct group){ .gr_name = buf, .gr_passwd = buf + strlen(buf), .gr_gid = 2999,
				      .gr_mem = members };
		*res = gr;
		return 0;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "getgrnam_r");
	return real(name, gr, buf, size, res);
}

static const char *swap_link, *swap_to;	/* realpath(swap_link) then points it at swap_to */

char *realpath(const char *path, char *resolved)
{
	static char *(*real)(const char *, char *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "realpath");
	char *r = real(path, resolved);
	if (swap_link != NULL && strcmp(path, swap_link) == 0) {
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.new", swap_link);
		unlink(tmp);
		if (symlink(swap_to, tmp) == 0)
			rename(tmp, swap_link);
		swap_link = NULL;
	}
	return r;
}

struct outcome {
	int rc[4];
	unsigned long long inh, prm, eff, bnd;
	unsigned long long inh_between;	/* pI between two calls of a transaction, where a case reads it */
	int naudit, audit_result;
	int fault_hits;
	char audit[1024];
	char audit_where[256];	/* the hostname and tty given to libaudit */
	char audit_line[2048];	/* the record as auditd would write it (audit_log_user_message) */
	char log[8192];
};
static struct outcome *current;	/* the child's outcome, filled by the audit stub */

/* The module's records are kept; libpam, which audits through the same symbols, is told the
 * kernel has no audit (the answer it ignores), since 1000 is no descriptor it could use. */
int audit_open(void)
{
	Dl_info info;
	if (dladdr(__builtin_return_address(0), &info) != 0 && info.dli_fname != NULL &&
	    strstr(info.dli_fname, "pam_capdelegate") != NULL)
		return 1000;
	errno = EPROTONOSUPPORT;
	return -1;
}

void audit_close(int fd)
{
	(void)fd;
}

int audit_log_user_message(int audit_fd, int type, const char *message, const char *hostname,
			   const char *addr, const char *tty, int result)
{
	(void)audit_fd; (void)addr;
	if (current != NULL && type == AUDIT_USER) {
		current->naudit++;
		current->audit_result = result;
		snprintf(current->audit, sizeof(current->audit), "%s", message);
		snprintf(current->audit_where, sizeof(current->audit_where), "hostname=%s tty=%s",
			 hostname ? hostname : "(null)", tty ? tty : "(null)");
		/* the kernel's header, then the fields libaudit appends (lib/audit_logging.c) */
		snprintf(current->audit_line, sizeof(current->audit_line),
			 "type=USER msg=audit(1764806400.000:42): pid=1 uid=0 auid=4294967295 "
			 "ses=4294967295 msg='%s exe=\"/usr/bin/login\" hostname=%s addr=? "
			 "terminal=%s res=%s'\n", message, hostname ? hostname : "?",
			 tty ? tty : "?", result ? "success" : "failed");
	}
	return 1;
}

/* The module's CLOCK_REALTIME: the real clock while fake_now is negative, else fake_now;
 * failing with EINVAL while clock_fails. Other clocks (the snapshot's coarse clock) and other
 * callers are left alone. */
static long long fake_now = -1;
static int clock_fails;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	Dl_info info;
	if (clk == CLOCK_REALTIME && dladdr(__builtin_return_address(0), &info) != 0 &&
	    info.dli_fname != NULL && strstr(info.dli_fname, "pam_capdelegate") != NULL) {
		if (clock_fails) {
			errno = EINVAL;
			return -1;
		}
		if (fake_now >= 0) {
			ts->tv_sec = (time_t)fake_now;
			ts->tv_nsec = 999999999;	/* the last instant of that second */
			return 0;
		}
	}
	return REAL(clock_gettime)(clk, ts);
}

/* ---- the harness ------------------------------------------------------------------------- */

/* The child's capabilities before the transaction. */
struct prep {
	int set;			/* apply the sets below (else: root's full sets, pI empty) */
	int inh_only;			/* with set: only pI, pP and pE stay root's */
	unsigned long long prm, eff, inh;
	struct fault fail[MAX_FAULTS];	/* armed after the prep: see struct fault */
	gid_t getgrgid_fail;		/* 0: none */
	const char *swap_link, *swap_to;
	const char *cwd;		/* the child's working directory */
	long long now;			/* the module's clock: 0 the real one */
	const char *tz;			/* TZ, TZDIR, LC_TIME and LC_ALL, in the process and in
					 * the PAM environment */
};

typedef void (*steps_fn)(pam_handle_t *pamh, struct outcome *o);

/* Service @svc: policy @svc.conf holding @policy (NULL: no policy file), and @stack, where
 * "MOD" stands for "<module> config=<policy>". */
static void service(const char *svc, const char *policy, const char *stack)
{
	char *conf, *path, *mod, *text = NULL;
	assert_true(asprintf(&conf, "%s/%s.conf", workdir, svc) > 0);
	unlink(conf);
	if (policy != NULL)
		assert_int_equal(write_file(conf, policy, 0644), 0);
	assert_true(asprintf(&mod, "%s config=%s", module, conf) > 0);
	size_t n = 0;
	for (const char *p = stack; *p; p++)
		n += strncmp(p, "MOD", 3) == 0 ? strlen(mod) : 1;
	text = calloc(1, n + 1);
	assert_non_null(text);
	for (const char *p = stack; *p;) {
		if (strncmp(p, "MOD", 3) == 0) {
			strcat(text, mod);
			p += 3;
		} else {
			strncat(text, p++, 1);
		}
	}
	assert_true(asprintf(&path, "%s/services/%s", workdir, svc) > 0);
	assert_int_equal(write_file(path, text, 0644), 0);
	free(conf);
	free(path);
	free(mod);
	free(text);
}

static void read_caps(struct outcome *o)
{
	o->inh = cap_status_field("CapInh:\t");
	o->prm = cap_status_field("CapPrm:\t");
	o->eff = cap_status_field("CapEff:\t");
	o->bnd = cap_status_field("CapBnd:\t");
}

static int apply_prep(const struct prep *p)
{
	if (!p->set)
		return 0;
	cap_t c = p->inh_only ? cap_get_proc() : cap_init();
	if (p->inh_only)
		cap_clear_flag(c, CAP_INHERITABLE);
	for (cap_value_t v = 0; v < 64; v++) {
		if (p->prm & BIT(v))
			cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_SET);
		if (p->eff & BIT(v))
			cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_SET);
		if (p->inh & BIT(v))
			cap_set_flag(c, CAP_INHERITABLE, 1, &v, CAP_SET);
	}
	int rc = cap_set_proc(c);
	cap_free(c);
	return rc;
}

static int no_conv(int n, const struct pam_message **msg, struct pam_response **resp, void *arg)
{
	(void)n; (void)msg; (void)resp; (void)arg;
	return PAM_CONV_ERR;	/* the module never prompts */
}

/* Run @steps in a child for @user of @svc; the module's log lines land in o->log. */
static void run(const char *svc, const char *user, const struct prep *prep, steps_fn steps,
		struct outcome *o)
{
	static const struct prep none;
	char *logpath;
	assert_true(asprintf(&logpath, "%s/module-%s-%s.log", workdir, svc, user) > 0);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static struct outcome r;
		int lfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(lfd, 2);
		if (apply_prep(prep ? prep : &none) < 0)
			_exit(3);
		current = &r;
		if (prep != NULL)
			memcpy(faults, prep->fail, sizeof(faults));
		if (prep != NULL && prep->cwd != NULL && chdir(prep->cwd) < 0)
			_exit(6);
		if (prep != NULL && prep->getgrgid_fail != 0)
			getgrgid_fail = prep->getgrgid_fail;
		if (prep != NULL) {
			swap_link = prep->swap_link;
			swap_to = prep->swap_to;
			fake_now = prep->now ? prep->now : -1;
		}
		/* TZ and the variables like it (the zone files' directory, the locale's time) */
		static const char *const tz_like[] = { "TZ", "TZDIR", "LC_TIME", "LC_ALL" };
		for (size_t k = 0; prep != NULL && prep->tz != NULL && k < 4; k++)
			if (setenv(tz_like[k], prep->tz, 1) < 0)
				_exit(7);
		struct pam_conv conv = { no_conv, NULL };
		pam_handle_t *pamh = NULL;
		if (pam_start(svc, user, &conv, &pamh) != PAM_SUCCESS)
			_exit(5);
		for (size_t k = 0; prep != NULL && prep->tz != NULL && k < 4; k++) {
			char *var = NULL;
			if (asprintf(&var, "%s=%s", tz_like[k], prep->tz) < 0 ||
			    pam_putenv(pamh, var) != PAM_SUCCESS)
				_exit(7);
			free(var);
		}
		steps(pamh, &r);
		memset(faults, 0, sizeof(faults));
		r.fault_hits = fault_hits;
		read_caps(&r);
		pam_end(pamh, PAM_SUCCESS);
		free(logpath);
		if (write(pfd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(4);
		_exit(0);
	}
	close(pfd[1]);
	memset(o, 0, sizeof(*o));
	assert_int_equal(read(pfd[0], o, sizeof(*o)), (ssize_t)sizeof(*o));
	close(pfd[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	FILE *f = fopen(logpath, "r");
	assert_non_null(f);
	size_t n = fread(o->log, 1, sizeof(o->log) - 1, f);
	o->log[n] = '\0';
	fclose(f);
	free(logpath);
}

static void expect_log(const struct outcome *o, const char *text)
{
	if (strstr(o->log, text) == NULL)
		fail_msg("expected in the module's log: %s\nlog:\n%s", text, o->log);
}

static void expect_no_log(const struct outcome *o, const char *text)
{
	if (strstr(o->log, text) != NULL)
		fail_msg("unexpected in the module's log: %s\nlog:\n%s", text, o->log);
}

static void need_root(void)
{
	if (geteuid() != 0)
		skip();	/* policies must be root-owned, and the cases shape the capability sets */
}

/* The steps of a case. */
static void setcred(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
}

static void session(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_open_session(pamh, 0);
}

/* sshd's items: where the user comes from, and the tty */
static void remote_setcred(pam_handle_t *pamh, struct outcome *o)
{
	pam_set_item(pamh, PAM_RHOST, "client.example.net");
	pam_set_item(pamh, PAM_TTY, "ssh");
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
}

static void setcred_then_session(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	o->rc[1] = pam_open_session(pamh, 0);
}

static void account(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_acct_mgmt(pamh, 0);
}

static void delete_cred(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_setcred(pamh, PAM_DELETE_CRED);
}

/* The user changes between setcred and open_session: the grant cached for the first user
 * must not be applied to the second. */
static void setcred_user_change_session(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	o->rc[1] = pam_set_item(pamh, PAM_USER, "bob");
	o->rc[2] = pam_open_session(pamh, 0);
}

static const char *demo =
	"# demo policy\n"
	"alice    cap_net_raw\n"
	"@netops  cap_net_raw\n"
	"carol    cap_syslog\n"
	"dave     none\n";

static const char *auth_session = "auth required MOD\nsession required MOD\n";

/* ---- the cases ------------------------------------------------------------------------- */

/* One LOG_NOTICE line per login, the exact outcome fields, no debug line without debug. */
static void test_notice_line(void **state)
{
	(void)state;
	need_root();
	service("mnotice", demo, auth_session);
	struct outcome o;
	run("mnotice", "alice", NULL, setcred_then_session, &o);
	assert_int_equal(o.rc[1], PAM_SUCCESS);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	char *want;
	assert_true(asprintf(&want, "SYSLOG(%d): user=alice granted=cap_net_raw via=user rules=%s/"
			     "mnotice.conf:2 policy=ok delegated=none dropped_bounding=none "
			     "dropped_no_setpcap=none cleared=none\n", LOG_NOTICE, workdir) > 0);
	expect_log(&o, want);
	assert_null(strstr(strstr(o.log, want) + strlen(want), "granted="));	/* once per login */
	free(want);
	expect_no_log(&o, "SYSLOG(7)");
}

/* root's own sets are left alone: pP and pE exactly the full bounding set, for every user. */
static void test_demo_users_exact_sets(void **state)
{
	(void)state;
	need_root();
	service("mdemo", demo, auth_session);
	static const struct { const char *user; unsigned long long inh; } want[] = {
		{ "alice", BIT(CAP_NET_RAW) }, { "bob", 0 }, { "carol", BIT(CAP_SYSLOG) },
		{ "dave", 0 }, { "erin", BIT(CAP_NET_RAW) },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct outcome o;
		run("mdemo", want[i].user, NULL, setcred_then_session, &o);
		assert_int_equal(o.inh, want[i].inh);
		assert_true(o.bnd != 0 && o.bnd != ~0ULL);
		assert_int_equal(o.prm, o.bnd);
		assert_int_equal(o.eff, o.bnd);
	}
}

/* One audit record per login: the encoded account, grant, policy status and the result. */
static void test_audit_record(void **state)
{
	(void)state;
	need_root();
	service("maudit", demo, auth_session);
	struct outcome o;
	run("maudit", "alice", NULL, setcred_then_session, &o);
	assert_int_equal(o.naudit, 1);
	assert_int_equal(o.audit_result, 1);
	char *want;
	assert_true(asprintf(&want, "op=capdelegate-grant acct=\"alice\" grant=cap_net_raw policy=ok "
			     "rules=%s/maudit.conf:2", workdir) > 0);
	assert_string_equal(o.audit, want);
	free(want);
	assert_string_equal(o.audit_where, "hostname=(null) tty=(null)");
	/* where the login comes from, as PAM knows it */
	run("maudit", "alice", NULL, remote_setcred, &o);
	assert_int_equal(o.naudit, 1);
	assert_string_equal(o.audit_where, "hostname=client.example.net tty=ssh");
	/* a failed capset is recorded as a failure */
	struct prep fail_first = { .fail = { { "cap_iab_set_proc", 1 } } };
	run("maudit", "alice", &fail_first, setcred, &o);
	assert_int_equal(o.naudit, 1);
	assert_int_equal(o.audit_result, 0);
	/* pam_capdelegate(8), LOGGING: one record per login whatever the outcome, a user NSS does
	 * not know included (the policy is not read for them) */
	run("maudit", "nosuchuser", NULL, setcred_then_session, &o);
	assert_int_equal(o.naudit, 1);
	assert_string_equal(o.audit, "op=capdelegate-grant acct=\"nosuchuser\" grant=none "
			    "policy=not_read rules=none nss=no_user");
	expect_log(&o, "user=nosuchuser granted=none via=none rules=none policy=not_read");
}

/* The fields of @o's record as auparse (ausearch -i) reads them after the kernel's header, as
 * "name=value" lines, the value interpreted: a value that splits shows up as a field too many. */
static void audit_fields(const struct outcome *o, char *out, size_t size)
{
#ifdef HAVE_AUPARSE
	auparse_state_t *au = auparse_init(AUSOURCE_BUFFER, o->audit_line);
	assert_non_null(au);
	assert_int_equal(auparse_next_event(au), 1);
	assert_int_equal(auparse_first_field(au), 1);
	size_t n = 0;
	int body = 0;
	out[0] = '\0';
	do {
		const char *name = auparse_get_field_name(au);
		if (body)
			n += (size_t)snprintf(out + n, size - n, "%s=%s\n", name, auparse_interpret_field(au));
		else
			body = strcmp(name, "ses") == 0;	/* the kernel's header ends here */
		assert_true(n < size);
	} while (auparse_next_field(au) > 0);
	auparse_destroy(au);
#else
	(void)o; (void)out; (void)size;
	skip();	/* libauparse-dev not installed (./lab deps) */
#endif
}

/* The journal line of @o: every blank-separated word a key=value field, policy=@status. */
static void expect_notice_fields(const struct outcome *o, const char *status)
{
	char tag[32], *want;
	snprintf(tag, sizeof(tag), "SYSLOG(%d): ", LOG_NOTICE);
	const char *line = strstr(o->log, tag);
	assert_non_null(line);
	line += strlen(tag);
	char *text = strndup(line, strcspn(line, "\n")), *save = NULL;
	assert_true(asprintf(&want, "policy=%s", status) > 0);
	int seen = 0;
	for (char *w = strtok_r(text, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
		if (strchr(w, '=') == NULL)
			fail_msg("'%s' is no key=value field in the journal line: %s", w, line);
		seen += strcmp(w, want) == 0;
	}
	assert_int_equal(seen, 1);
	free(text);
	free(want);
}

/* Every status's record parses, field by field, to the values the module wrote: a value with a
 * space (the status "syntax error", ...) is one field to auparse, ausearch -i and SIEMs too. */
static void test_audit_record_fields(void **state)
{
	(void)state;
	need_root();
	char *rules, *notdir;
	assert_true(asprintf(&rules, "%s/mfields.conf:2", workdir) > 0);
	assert_true(asprintf(&notdir, "session required %s config=%s/mfields.conf/x\n", module,
			     workdir) > 0);
	char many[64 * 20] = "";
	for (int i = 0; i < 20; i++)
		strcat(many, "alice cap_net_raw\n");
	static const struct { const char *policy; mode_t mode; const char *grant, *status; } c[] = {
		{ "# demo\nalice cap_net_raw\n", 0644, "cap_net_raw", "ok" },
		{ NULL, 0, "none", "missing" },
		{ "alice cap_net_raw\n", 0666, "none", "unsafe" },
		{ "alice cap_net_rawx\n", 0644, "none", "syntax_error" },
		{ "", 0644, "none", "system_error" },	/* config=FILE/x: not a directory */
		{ NULL, 0644, "cap_net_raw", "ok" },	/* 20 matching lines: the rules are cut */
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int cut = i == 5;
		service("mfields", cut ? many : c[i].policy, "session required MOD\n");
		if (c[i].policy != NULL && !cut) {
			char *conf;
			assert_true(asprintf(&conf, "%s/mfields.conf", workdir) > 0);
			assert_int_equal(chmod(conf, c[i].mode), 0);
			free(conf);
		}
		if (i == 4)
			service("mfields_notdir", NULL, notdir);
		struct outcome o;
		run(i == 4 ? "mfields_notdir" : "mfields", "alice", NULL, session, &o);
		assert_int_equal(o.naudit, 1);
		char got[2048], *want, *rules_cut = NULL;
		if (cut) {
			FILE *f = open_memstream(&rules_cut, &(size_t){ 0 });
			for (int l = 1; l <= 16; l++)
				fprintf(f, "%s%s/mfields.conf:%d", l > 1 ? "," : "", workdir, l);
			fputs(",...20_rules", f);
			fclose(f);
		}
		assert_true(asprintf(&want, "op=capdelegate-grant\nacct=alice\ngrant=%s\npolicy=%s\n"
				     "rules=%s\nexe=/usr/bin/login\nhostname=?\naddr=?\n"
				     "terminal=?\nres=success\n", c[i].grant, c[i].status,
				     cut ? rules_cut : i == 0 ? rules : "none") > 0);
		expect_notice_fields(&o, c[i].status);
		audit_fields(&o, got, sizeof(got));
		if (strcmp(got, want) != 0) {	/* whole: cmocka cuts long messages */
			fprintf(stderr, "record %s\nread back as:\n%swant:\n%s", o.audit_line, got, want);
			fail_msg("record %zu read back with other fields or values", i);
		}
		free(want);
		free(rules_cut);
	}
	free(rules);
	free(notdir);
}

/* capset fails, clearing works: pI ends empty (never login's old pI), the login goes on
 * without strict and is refused with it. */
static void test_capset_fails_pi_cleared(void **state)
{
	(void)state;
	need_root();
	service("mfail", demo, auth_session);
	struct prep p = { .set = 1, .inh_only = 1, .inh = BIT(CAP_CHOWN) | BIT(CAP_NET_RAW),
			  .fail = { { "cap_iab_set_proc", 1 } } };
	struct outcome o;
	run("mfail", "alice", &p, session, &o);
	assert_int_equal(o.rc[0], PAM_SUCCESS);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=alice: capset failed (Operation not permitted); inheritable set cleared");
	expect_log(&o, " cleared=cap_chown,cap_net_raw");
	/* what the second path emptied is named whole, bits 32-63 too (cap_syslog is 34) */
	struct prep high = p;
	high.inh = BIT(CAP_CHOWN) | BIT(CAP_SYSLOG);
	run("mfail", "alice", &high, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, " cleared=cap_chown,cap_syslog");
	/* no grant to apply (a user NSS does not know): emptying pI fails the same way, the
	 * second path clears it, and the log says that, not that it could not be cleared */
	run("mfail", "nosuchuser", &p, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=nosuchuser: capset failed (Operation not permitted); inheritable set cleared");
	if (strstr(o.log, "cannot clear the inheritable set") != NULL)
		fail_msg("pI cleared, yet logged as not cleared:\n%s", o.log);
	service("mfails", demo, "session required MOD strict\n");
	run("mfails", "alice", &p, session, &o);
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "strict: refusing the login (capset failed)");
}

/* PAM_USER emptied before open_session: no user, so no grant at all to apply (the path of
 * a login without even a grant of nothing). */
static void empty_user_session(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[1] = pam_set_item(pamh, PAM_USER, "");
	o->rc[0] = pam_open_session(pamh, 0);
}

/* capset and the clearing both fail: pI is in an unknown state, the login must stop, with or
 * without a grant to apply. */
static void test_pi_not_cleared_stops_login(void **state)
{
	(void)state;
	need_root();
	service("mstuck", demo, auth_session);
	struct prep p = { .fail = { { "cap_iab_set_proc", 1u << 31 }, { "capset", 1u << 31 } } };
	struct outcome o;
	run("mstuck", "alice", &p, session, &o);
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	expect_log(&o, "inheritable set could not be cleared");
	run("mstuck", "nosuchuser", &p, session, &o);
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	expect_log(&o, "inheritable set could not be cleared");
	service("mstuck2", NULL, auth_session);	/* no policy: no grant to apply */
	run("mstuck2", "alice", &p, session, &o);
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	run("mstuck", "alice", &p, empty_user_session, &o);	/* no user: no grant at all */
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	expect_log(&o, "cannot clear the inheritable set");
}

/* The second path reads pP and pE with capget(2) to write them back unchanged: when that read
 * fails it must not capset (it would write them as zero): pI is in an unknown state, the login
 * stops, and pP is left as it was. */
static void test_capget_fails_login_stops(void **state)
{
	(void)state;
	need_root();
	service("mcapget", demo, auth_session);
	struct prep p = { .fail = { { "cap_iab_set_proc", 1u << 31 }, { "capget", 1u << 31 } } };
	struct outcome o;
	run("mcapget", "alice", &p, session, &o);
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	expect_log(&o, "inheritable set could not be cleared");
	assert_true(o.prm != 0);
}

/* Every copy of a string the module makes fails in turn (strdup, one call at a time) through a
 * transaction whose session finds the grant setcred kept: never a crash, pI is alice's grant or
 * empty, and the login is never refused for it without a logged reason. */
static void test_strdup_failure_at_each_call(void **state)
{
	(void)state;
	need_root();
	service("mdup", demo, auth_session);
	int n;
	for (n = 0; n < 31; n++) {
		struct prep p = { .fail = { { "strdup", 1u << n } } };
		struct outcome o;
		run("mdup", "alice", &p, setcred_then_session, &o);
		if (o.fault_hits == 0)
			break;
		if (o.inh != 0 && o.inh != BIT(CAP_NET_RAW))
			fail_msg("strdup %d failing: pI %#llx\nlog:\n%s", n + 1, o.inh, o.log);
		if ((o.rc[0] != PAM_SUCCESS || o.rc[1] != PAM_SUCCESS) && strstr(o.log, "out of memory") == NULL)
			fail_msg("strdup %d failing: refused (%d, %d) without a word\nlog:\n%s", n + 1,
				 o.rc[0], o.rc[1], o.log);
	}
	if (n == 0 || n == 31)
		fail_msg("%d copies made by the module: want between 1 and 30", n);
}

/* Whichever call of the apply path fails, at its first call or at every
 * call, login's pI (cap_setgid,cap_setuid: 0xc0, as login(1) leaves it) never reaches the
 * session through the packaged "optional" line: pI ends as the grant or empty, and a pI
 * emptied after a failure is logged. Lowering pI needs no privilege, so a second path (plain
 * capset(2)) always can. */
static void test_apply_failure_at_each_call_clears_pi(void **state)
{
	(void)state;
	need_root();
	service("mfault", demo, "session optional MOD\n");
	static const char *const calls[] = { "cap_get_proc", "cap_get_flag", "cap_get_bound",
					     "cap_iab_init", "cap_iab_set_vector", "cap_iab_set_proc" };
	static const unsigned masks[] = { 1, 1u << 31 };
	static const char *const users[] = { "alice", "nosuchuser" };
	for (size_t c = 0; c < sizeof(calls) / sizeof(*calls); c++) {
		int hits = 0;
		for (size_t m = 0; m < 2; m++) {
			for (size_t u = 0; u < 2; u++) {
				struct prep p = { .set = 1, .inh_only = 1,
						  .inh = BIT(CAP_SETGID) | BIT(CAP_SETUID),
						  .fail = { { calls[c], masks[m] } } };
				struct outcome o;
				run("mfault", users[u], &p, session, &o);
				hits += o.fault_hits;
				unsigned long long grant = u == 0 ? BIT(CAP_NET_RAW) : 0;
				if (o.inh != 0 && o.inh != grant)
					fail_msg("%s failing (mask %#x) for %s: pI %#llx survived\nlog:\n%s",
						 calls[c], masks[m], users[u], o.inh, o.log);
				if (o.fault_hits && o.inh != grant && strstr(o.log, "inheritable set cleared") == NULL &&
				    strstr(o.log, "not granted") == NULL)
					fail_msg("%s failing for %s: pI emptied without a word\nlog:\n%s",
						 calls[c], users[u], o.log);
				assert_int_equal(o.rc[0], PAM_SUCCESS);
			}
		}
		if (hits == 0)
			fail_msg("%s: never called by the module, the fault never fired", calls[c]);
	}
}

/* Changing PAM_USER between setcred and open_session: session applies bob's grant. */
static void test_user_change_mid_transaction(void **state)
{
	(void)state;
	need_root();
	service("mswitch", demo, auth_session);
	struct outcome o;
	run("mswitch", "alice", NULL, setcred_user_change_session, &o);
	assert_int_equal(o.rc[1], PAM_SUCCESS);
	assert_int_equal(o.rc[2], PAM_SUCCESS);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=alice granted=cap_net_raw");
	expect_log(&o, "user=bob granted=none via=none");
}

/* maxsize= is the limit the module reads with. */
static void test_maxsize_option(void **state)
{
	(void)state;
	need_root();
	const char *policy = "alice cap_net_raw   # a comment that makes this file over 100 bytes long, "
			     "more than maxsize=100 allows\n";
	service("msmall", policy, "session required MOD maxsize=100\n");
	service("mbig", policy, "session required MOD maxsize=4096\n");
	struct outcome o;
	run("msmall", "alice", NULL, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "larger than the size limit");
	expect_log(&o, "policy=unsafe");
	run("mbig", "alice", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	/* at most 64 MiB (pam_capdelegate(8)): one byte more is a malformed option, logged and
	 * ignored (the default 1 MiB applies); 64 MiB itself is taken */
	service("mhuge", policy, "session required MOD maxsize=67108865\n");
	run("mhuge", "alice", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	expect_log(&o, "maxsize=67108865");
	expect_log(&o, "keeping the default maxsize (1 MiB)");
	service("mmax", policy, "session required MOD maxsize=67108864\n");
	run("mmax", "alice", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	if (strstr(o.log, "keeping the default maxsize") != NULL)
		fail_msg("maxsize=67108864 (64 MiB) refused\n%s", o.log);
	/* a size is a whole number of bytes, 1 or more, digits only: every other form is logged
	 * and the default applies */
	static const char *const bad[] = { "0", "00", "", "-1", "+5", " 5", "5k", "x", "0x10",
					   "18446744073709551616" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *line;
		assert_true(asprintf(&line, "session required MOD maxsize=%s\n", bad[i]) > 0);
		service("mbad", policy, line);
		run("mbad", "alice", NULL, session, &o);
		assert_int_equal(o.inh, BIT(CAP_NET_RAW));
		if (strstr(o.log, "keeping the default maxsize (1 MiB)") == NULL)
			fail_msg("maxsize=%s taken without a word\n%s", bad[i], o.log);
		free(line);
	}
}

/* A user line names one account, whole: "alice2" and "alic" are not "alice". */
static void test_user_line_is_whole_name(void **state)
{
	(void)state;
	need_root();
	service("mprefix", "alice2 cap_net_raw\nalic cap_syslog\n", auth_session);
	struct outcome o;
	run("mprefix", "alice", NULL, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=alice granted=none via=none");
}

/* CAP_SETPCAP counts in pE: held in pP only, bits outside pP are dropped (and logged),
 * capset is never asked for them. */
static void test_setpcap_must_be_effective(void **state)
{
	(void)state;
	need_root();
	service("mpcap", demo, "session required MOD\n");
	struct prep p = { .set = 1, .prm = BIT(CAP_SETPCAP), .eff = 0 };
	struct outcome o;
	run("mpcap", "alice", &p, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "dropped_no_setpcap=cap_net_raw");
	expect_no_log(&o, "capset failed");
}

/* Without CAP_SETPCAP a bit already in pI may stay (the kernel allows pI' within pI | pP),
 * and the old pI bits the grant drops are reported as cleared. */
static void test_without_setpcap_keeps_old_pi(void **state)
{
	(void)state;
	need_root();
	service("mold", "alice cap_net_raw\n", "session required MOD\n");
	struct prep p = { .set = 1, .inh = BIT(CAP_NET_RAW) | BIT(CAP_CHOWN) };
	struct outcome o;
	run("mold", "alice", &p, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	expect_log(&o, "granted=cap_net_raw");
	expect_log(&o, "dropped_no_setpcap=none cleared=cap_chown\n");
	expect_log(&o, "delegated=cap_net_raw");
}

/* pam_setcred(PAM_DELETE_CRED) leaves pI as the session has it, and logs nothing. */
static void test_delete_cred_leaves_pi(void **state)
{
	(void)state;
	need_root();
	service("mdel", demo, auth_session);
	struct prep p = { .set = 1, .prm = BIT(CAP_SETPCAP), .eff = BIT(CAP_SETPCAP),
			  .inh = BIT(CAP_CHOWN) };
	struct outcome o;
	run("mdel", "alice", &p, delete_cred, &o);
	assert_int_equal(o.inh, BIT(CAP_CHOWN));
	expect_no_log(&o, "granted=");
}

/* acct_mgmt vouches for nobody: "account sufficient" before pam_deny still denies, with and
 * without strict, and under strict a missing policy or unknown user is refused. */
static void test_account_never_success(void **state)
{
	(void)state;
	need_root();
	service("macct", demo, "account sufficient MOD\naccount required pam_deny.so\n");
	service("macct_s", demo, "account sufficient MOD strict\naccount required pam_deny.so\n");
	service("macct_r", demo, "account required MOD strict\n");
	service("macct_m", NULL, "account required MOD strict\n");
	struct outcome o;
	run("macct", "alice", NULL, account, &o);
	assert_int_not_equal(o.rc[0], PAM_SUCCESS);
	run("macct_s", "alice", NULL, account, &o);
	assert_int_not_equal(o.rc[0], PAM_SUCCESS);
	run("macct_r", "nosuchuser", NULL, account, &o);
	assert_int_equal(o.rc[0], PAM_USER_UNKNOWN);
	run("macct_m", "alice", NULL, account, &o);
	assert_int_equal(o.rc[0], PAM_PERM_DENIED);
	expect_log(&o, "strict: refusing the login (policy missing) in account");
}

/* Under strict, session refuses every kind of broken policy, not only a syntax error. */
static void test_strict_session_refuses_each_status(void **state)
{
	(void)state;
	need_root();
	service("mmiss", NULL, "session required MOD strict\n");
	struct outcome o;
	run("mmiss", "alice", NULL, session, &o);
	assert_int_equal(o.rc[0], PAM_SESSION_ERR);
	expect_log(&o, "strict: refusing the login (policy missing)");
}

/* A gid getgrouplist returns but getgrgid_r cannot name fails the resolution closed, although
 * the policy names another group: that gid might be the one a line names. */
static void test_gid_lookup_error_fails_closed(void **state)
{
	(void)state;
	need_root();
	service("mgid", "@contractors none\n* cap_net_raw\n", "session required MOD\n");
	struct outcome o;
	run("mgid", "carol", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	struct prep p = { .getgrgid_fail = 2000 };	/* netops */
	run("mgid", "carol", &p, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=carol: cannot look up gid 2000: Input/output error: no capabilities granted");
}

/* getgrouplist failing for its own reason is an outage like any other: nothing is granted,
 * although the group the policy names lists the user, and the reason is logged. */
static void test_grouplist_failure_fails_closed(void **state)
{
	(void)state;
	need_root();
	service("mglist", demo, "session required MOD\n");
	struct outcome o;
	run("mglist", "erin", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));	/* @netops, by its member list */
	struct prep p = { .fail = { { "getgrouplist", 1u << 31 } } };
	run("mglist", "erin", &p, session, &o);
	assert_true(o.fault_hits > 0);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=erin: cannot look up the groups of erin: Cannot allocate memory: "
		   "no capabilities granted");
}

/* The list of deciding rules the log and the audit record name cannot be made (memory ran
 * out): the login gets nothing, says why, and never crashes. */
static void test_rules_text_out_of_memory(void **state)
{
	(void)state;
	need_root();
	service("mmemst", demo, "session required MOD\n");
	struct prep p = { .fail = { { "open_memstream", 1 } } };
	struct outcome o;
	run("mmemst", "alice", &p, session, &o);
	assert_int_equal(o.fault_hits, 1);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=alice: out of memory: no capabilities granted");
}

/* The policy is a symlink swapped for one to an unsafe file right after realpath resolved it:
 * the file opened is the resolved one, in the directories that were judged, never the new
 * target. The swap is a change of the policy: it is read again, and the link now
 * leads into a directory anyone may write, so nothing is granted. */
static void test_link_swapped_after_resolving(void **state)
{
	(void)state;
	need_root();
	char *safe, *link, *dir, *evil, *args;
	assert_true(asprintf(&safe, "%s/mswap-safe.conf", workdir) > 0);
	assert_true(asprintf(&link, "%s/mswap-link.conf", workdir) > 0);
	assert_true(asprintf(&dir, "%s/mswap-open", workdir) > 0);
	assert_true(asprintf(&evil, "%s/evil.conf", dir) > 0);
	assert_int_equal(write_file(safe, "alice cap_net_raw\n", 0644), 0);
	mkdir(dir, 0777);
	assert_int_equal(chmod(dir, 0777), 0);	/* anyone could have written evil.conf */
	assert_int_equal(write_file(evil, "alice cap_sys_admin\n", 0644), 0);
	unlink(link);
	assert_int_equal(symlink(safe, link), 0);
	assert_true(asprintf(&args, "session required %s config=%s\n", module, link) > 0);
	service("mswap", NULL, args);
	struct prep p = { .swap_link = link, .swap_to = evil };
	struct outcome o;
	run("mswap", "alice", &p, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "/mswap-open is writable by group or others; owner uid 0, mode 0777): policy rejected");
	free(safe);
	free(link);
	free(dir);
	free(evil);
	free(args);
}

/* A group's member list names users whole: "car" is not carol. */
static void test_group_member_is_whole_name(void **state)
{
	(void)state;
	need_root();
	service("mmember", "@prefixes cap_net_raw\n", "session required MOD\n");
	struct outcome o;
	run("mmember", "carol", NULL, session, &o);
	assert_int_equal(o.inh, 0);
	run("mmember", "alice", NULL, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=alice granted=none via=none");
}

/* A relative config= grants nothing, even when the name exists in the working directory. */
static void test_relative_config_never_read(void **state)
{
	(void)state;
	need_root();
	service("mrel", "alice cap_net_raw\n", "session required MOD\n");
	char *args;
	assert_true(asprintf(&args, "session required %s config=mrel.conf\n", module) > 0);
	service("mrel2", NULL, args);
	struct prep p = { .cwd = workdir };
	struct outcome o;
	run("mrel2", "alice", &p, session, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "bad option config=mrel.conf: not an absolute path");
	free(args);
}

/* ---- the user and the transaction's cache ------------------------------------------------ */

static void empty_user_account_setcred_session(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[3] = pam_set_item(pamh, PAM_USER, "");
	o->rc[0] = pam_acct_mgmt(pamh, 0);
	o->rc[1] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	o->rc[2] = pam_open_session(pamh, 0);
}

/* PAM_USER set but empty: no account to look up. pI is emptied (login's own bits included),
 * the reason logged at LOG_ERR, and strict refuses with the "no user" codes (PAM_PERM_DENIED,
 * PAM_SESSION_ERR), not those of an unknown user. */
static void test_empty_user_fails_closed(void **state)
{
	(void)state;
	need_root();
	const char *policy = "* cap_net_raw\n";
	service("mempty", policy, "account required MOD\nauth required MOD\nsession required MOD\n");
	service("mempty_s", policy, "account required MOD strict\nauth required MOD strict\n"
		"session required MOD strict\n");
	struct prep p = { .set = 1, .inh_only = 1, .inh = BIT(CAP_CHOWN) | BIT(CAP_NET_RAW) };
	struct outcome o;
	run("mempty", "alice", &p, empty_user_account_setcred_session, &o);
	assert_int_equal(o.rc[3], PAM_SUCCESS);
	assert_int_equal(o.rc[2], PAM_SUCCESS);
	if (o.inh != 0)
		fail_msg("empty PAM_USER: CapInh %llx\n%s", o.inh, o.log);
	char *want;
	assert_true(asprintf(&want, "SYSLOG(%d): cannot determine the user: no capabilities granted",
			     LOG_ERR) > 0);
	expect_log(&o, want);
	free(want);
	expect_no_log(&o, "granted=cap_net_raw");
	expect_no_log(&o, "unknown to NSS");
	run("mempty_s", "alice", &p, empty_user_account_setcred_session, &o);
	assert_int_equal(o.rc[0], PAM_PERM_DENIED);
	assert_int_equal(o.rc[2], PAM_SESSION_ERR);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "strict: refusing the login (no user) in account");
	expect_log(&o, "strict: refusing the login (no user) in session");
}

/* Two module lines of one transaction that read different policies: each line applies its own
 * policy's grant; the grant the first line read and kept (pam_set_data) is never the second's.
 * Main file alice cap_net_raw; drop-ins A: alice cap_kill, B: alice cap_syslog. */
static void test_two_lines_different_policies(void **state)
{
	(void)state;
	need_root();
	char *a, *b, *fa, *fb, *other, *stack;
	assert_true(asprintf(&a, "%s/mtwo-a.d", workdir) > 0);
	assert_true(asprintf(&b, "%s/mtwo-b.d", workdir) > 0);
	mkdir(a, 0755);
	mkdir(b, 0755);
	assert_true(asprintf(&fa, "%s/10-a.conf", a) > 0);
	assert_true(asprintf(&fb, "%s/10-b.conf", b) > 0);
	assert_int_equal(write_file(fa, "alice cap_kill\n", 0644), 0);
	assert_int_equal(write_file(fb, "alice cap_syslog\n", 0644), 0);
	const char *policy = "alice cap_net_raw   # more than 40 bytes with this comment\n";
	struct outcome o;
	/* confdir= A in auth (setcred), B in session; then the other way round */
	assert_true(asprintf(&stack, "auth required MOD confdir=%s\nsession required MOD confdir=%s\n",
			     a, b) > 0);
	service("mtwo_ab", policy, stack);
	free(stack);
	run("mtwo_ab", "alice", NULL, setcred_then_session, &o);
	if (o.inh != (BIT(CAP_NET_RAW) | BIT(CAP_SYSLOG)))
		fail_msg("confdir A then B: CapInh %llx, want B's grant\n%s", o.inh, o.log);
	expect_log(&o, "user=alice granted=cap_kill,cap_net_raw via=user");
	expect_log(&o, "user=alice granted=cap_net_raw,cap_syslog via=user");
	assert_true(asprintf(&stack, "session required MOD confdir=%s\nsession required MOD confdir=%s\n",
			     b, a) > 0);
	service("mtwo_ba", policy, stack);
	free(stack);
	run("mtwo_ba", "alice", NULL, session, &o);
	if (o.inh != (BIT(CAP_NET_RAW) | BIT(CAP_KILL)))
		fail_msg("confdir B then A: CapInh %llx, want A's grant\n%s", o.inh, o.log);
	/* drop-ins, then none (confdir=) */
	assert_true(asprintf(&stack, "session required MOD confdir=%s\nsession required MOD confdir=\n",
			     a) > 0);
	service("mtwo_off", policy, stack);
	free(stack);
	run("mtwo_off", "alice", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	/* another main file (config=) */
	assert_true(asprintf(&other, "%s/mtwo-other.conf", workdir) > 0);
	assert_int_equal(write_file(other, "alice none\n", 0644), 0);
	assert_true(asprintf(&stack, "session required MOD\nsession required %s config=%s\n", module,
			     other) > 0);
	service("mtwo_cfg", policy, stack);
	free(stack);
	run("mtwo_cfg", "alice", NULL, session, &o);
	if (o.inh != 0)
		fail_msg("second line's config= says none: CapInh %llx\n%s", o.inh, o.log);
	/* the same files under a size limit the second line's reading exceeds: nothing granted */
	service("mtwo_max", policy, "session required MOD\nsession required MOD maxsize=40\n");
	run("mtwo_max", "alice", NULL, session, &o);
	if (o.inh != 0)
		fail_msg("second line's maxsize=40 rejects the policy: CapInh %llx\n%s", o.inh, o.log);
	expect_log(&o, "larger than the size limit");
	free(a);
	free(b);
	free(fa);
	free(fb);
	free(other);
}

/* Finding 5: a subject whose octal escape a winbind name could have meant literally is
 * warned about at LOG_WARNING, with how to write the literal name; the line still applies as
 * written (CORP\100234 is CORP@234, not the account CORP\winuser or anyone else). */
static void test_winbind_escape_warned(void **state)
{
	(void)state;
	need_root();
	service("mwinbind", "CORP\\100234 cap_kill\nalice cap_net_raw\n", "session required MOD\n");
	struct outcome o;
	run("mwinbind", "alice", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	char *want;
	assert_true(asprintf(&want, "SYSLOG(%d): %s/mwinbind.conf:1: user 'CORP@234' is read with "
			     "\\100 as an octal escape; if the winbind name DOMAIN\\user was meant, "
			     "write its backslash as \\134: 'CORP\\134100234'\n", LOG_WARNING, workdir) > 0);
	expect_log(&o, want);
	free(want);
	service("mwinbind2", "CORP\\134100234 cap_kill\nalice cap_net_raw\n", "session required MOD\n");
	run("mwinbind2", "alice", NULL, session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	expect_no_log(&o, "octal escape");
}

/* ---- windows (capdelegate.conf(5), WINDOWS) -------------------------------------------- */

#define FROM 1893456000LL	/* 2030-01-01T00:00Z */
#define UNTIL 1893484800LL	/* 2030-01-01T08:00Z */
static const char *lent = "alice cap_net_raw from 2030-01-01T00:00Z until 2030-01-01T08:00Z\n";

/* The clock at each login decides, at the window's exact edges; an ended line is named in the
 * NOTICE line and the audit record. */
static void test_window_edges_at_login(void **state)
{
	(void)state;
	need_root();
	service("mwin", lent, auth_session);
	static const struct { long long now; unsigned long long inh; } at[] = {
		{ FROM - 1, 0 }, { FROM, BIT(CAP_NET_RAW) }, { FROM + 1, BIT(CAP_NET_RAW) },
		{ UNTIL - 1, BIT(CAP_NET_RAW) }, { UNTIL, 0 }, { UNTIL + 1, 0 },
	};
	struct outcome o;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct prep p = { .now = at[i].now };
		run("mwin", "alice", &p, setcred_then_session, &o);
		assert_int_equal(o.rc[0], PAM_SUCCESS);
		if (o.inh != at[i].inh)
			fail_msg("at %lld: CapInh %llx, want %llx\n%s", at[i].now, o.inh, at[i].inh, o.log);
		assert_int_equal(o.naudit, 1);
		if (at[i].now >= UNTIL) {
			char *want;
			assert_true(asprintf(&want, "window_ended=%s/mwin.conf:1", workdir) > 0);
			expect_log(&o, want);
			assert_non_null(strstr(o.audit, want));
			free(want);
		} else {
			expect_no_log(&o, "window_ended");	/* not started is not ended */
			assert_null(strstr(o.audit, "window_ended"));
		}
	}
}

/* TZ and the variables like it (TZDIR, LC_TIME, LC_ALL), in the process and as PAM variables,
 * never move an edge: the times are UTC, read by arithmetic. */
static void test_window_ignores_tz(void **state)
{
	(void)state;
	need_root();
	service("mwintz", lent, auth_session);
	static char huge[10001];
	memset(huge, 'A', sizeof(huge) - 1);
	const char *zones[] = { "XXX-14", "XXX+12", "Asia/Kathmandu", ":/etc/passwd", "UTC0",
				"America/St_Johns", huge };
	struct outcome o;
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		static const struct { long long now; unsigned long long inh; } at[] = {
			{ FROM - 1, 0 }, { FROM, BIT(CAP_NET_RAW) }, { UNTIL - 1, BIT(CAP_NET_RAW) },
			{ UNTIL, 0 },
		};
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
			struct prep p = { .now = at[k].now, .tz = zones[i] };
			run("mwintz", "alice", &p, setcred, &o);
			if (o.inh != at[k].inh)
				fail_msg("TZ=%.20s at %lld: CapInh %llx, want %llx\n%s", zones[i],
					 at[k].now, o.inh, at[k].inh, o.log);
		}
	}
}

/* A window that closes between two calls of one transaction: the later call judges again. */
static void setcred_end_reinitialize(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	o->inh_between = cap_status_field("CapInh:\t");
	fake_now = UNTIL;
	o->rc[1] = pam_setcred(pamh, PAM_REINITIALIZE_CRED);
}

static void setcred_clock_back_session(pam_handle_t *pamh, struct outcome *o)
{
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	o->inh_between = cap_status_field("CapInh:\t");
	fake_now = FROM - 3600;	/* the clock set back to an hour before the start */
	o->rc[1] = pam_open_session(pamh, 0);
}

static void test_window_judged_at_every_call(void **state)
{
	(void)state;
	need_root();
	service("mwinre", lent, auth_session);
	struct outcome o;
	struct prep p = { .now = UNTIL - 1 };
	run("mwinre", "alice", &p, setcred_end_reinitialize, &o);
	assert_int_equal(o.rc[0], PAM_SUCCESS);
	assert_int_equal(o.rc[1], PAM_SUCCESS);
	assert_int_equal(o.inh_between, BIT(CAP_NET_RAW));	/* pI after the first setcred */
	if (o.inh != 0)
		fail_msg("after the end, PAM_REINITIALIZE_CRED left CapInh %llx\n%s", o.inh, o.log);
	assert_int_equal(o.naudit, 2);	/* two outcomes, two records */
	expect_log(&o, "user=alice granted=cap_net_raw");
	expect_log(&o, "user=alice granted=none via=none rules=none policy=ok");
	struct prep q = { .now = FROM + 60 };
	run("mwinre", "alice", &q, setcred_clock_back_session, &o);
	assert_int_equal(o.inh_between, BIT(CAP_NET_RAW));
	if (o.inh != 0)
		fail_msg("after the clock went back before the start, CapInh %llx\n%s", o.inh, o.log);
	/* with no edge in between, the policy is read once per transaction (debug says so) */
	service("mwinonce", lent, "auth required MOD debug\nsession required MOD debug\n");
	struct prep r = { .now = FROM + 60 };
	run("mwinonce", "alice", &r, setcred_then_session, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	expect_log(&o, "policy already read in this transaction");
	assert_int_equal(o.naudit, 1);
}

/* An ended user line is as if it were not there: her groups' lines apply again. */
static void test_window_ended_user_line_lets_groups_apply(void **state)
{
	(void)state;
	need_root();
	service("mwingrp", "carol none until 2030-01-01T08:00Z\n@netops cap_net_raw\n"
		"* cap_kill until 2030-01-01T08:00Z\n", auth_session);
	struct outcome o;
	struct prep before = { .now = UNTIL - 1 }, after = { .now = UNTIL };
	run("mwingrp", "carol", &before, setcred, &o);
	assert_int_equal(o.inh, 0);
	run("mwingrp", "carol", &after, setcred, &o);
	assert_int_equal(o.inh, BIT(CAP_NET_RAW));
	char *want;
	assert_true(asprintf(&want, "via=group rules=%s/mwingrp.conf:2 ", workdir) > 0);
	expect_log(&o, want);
	free(want);
	/* the ended lines that name her: her own and "*" */
	assert_true(asprintf(&want, "window_ended=%s/mwingrp.conf:1,%s/mwingrp.conf:3", workdir,
			     workdir) > 0);
	expect_log(&o, want);
	free(want);
	/* bob, in no group: the "*" line until its end, then nothing */
	run("mwingrp", "bob", &before, setcred, &o);
	assert_int_equal(o.inh, BIT(CAP_KILL));
	run("mwingrp", "bob", &after, setcred, &o);
	assert_int_equal(o.inh, 0);
}

/* A clock the module cannot read grants nothing, and says why. */
static void clock_failing_setcred(pam_handle_t *pamh, struct outcome *o)
{
	clock_fails = 1;
	o->rc[0] = pam_setcred(pamh, PAM_ESTABLISH_CRED);
	clock_fails = 0;
}

static void test_window_clock_failure_grants_nothing(void **state)
{
	(void)state;
	need_root();
	service("mwinclk", demo, auth_session);
	struct outcome o;
	run("mwinclk", "alice", NULL, clock_failing_setcred, &o);
	assert_int_equal(o.inh, 0);
	expect_log(&o, "user=alice: cannot judge the policy lines' windows: Invalid argument: "
		   "no capabilities granted");
	expect_log(&o, "policy=system_error");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_module WORKDIR MODULE (run through tests/stack/module.sh)\n");
		return 2;
	}
	workdir = argv[1];
	module = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notice_line),
		cmocka_unit_test(test_demo_users_exact_sets),
		cmocka_unit_test(test_audit_record),
		cmocka_unit_test(test_audit_record_fields),
		cmocka_unit_test(test_capset_fails_pi_cleared),
		cmocka_unit_test(test_pi_not_cleared_stops_login),
		cmocka_unit_test(test_capget_fails_login_stops),
		cmocka_unit_test(test_strdup_failure_at_each_call),
		cmocka_unit_test(test_apply_failure_at_each_call_clears_pi),
		cmocka_unit_test(test_user_change_mid_transaction),
		cmocka_unit_test(test_maxsize_option),
		cmocka_unit_test(test_user_line_is_whole_name),
		cmocka_unit_test(test_setpcap_must_be_effective),
		cmocka_unit_test(test_without_setpcap_keeps_old_pi),
		cmocka_unit_test(test_delete_cred_leaves_pi),
		cmocka_unit_test(test_account_never_success),
		cmocka_unit_test(test_strict_session_refuses_each_status),
		cmocka_unit_test(test_gid_lookup_error_fails_closed),
		cmocka_unit_test(test_grouplist_failure_fails_closed),
		cmocka_unit_test(test_rules_text_out_of_memory),
		cmocka_unit_test(test_link_swapped_after_resolving),
		cmocka_unit_test(test_group_member_is_whole_name),
		cmocka_unit_test(test_relative_config_never_read),
		cmocka_unit_test(test_empty_user_fails_closed),
		cmocka_unit_test(test_two_lines_different_policies),
		cmocka_unit_test(test_winbind_escape_warned),
		cmocka_unit_test(test_window_edges_at_login),
		cmocka_unit_test(test_window_ignores_tz),
		cmocka_unit_test(test_window_judged_at_every_call),
		cmocka_unit_test(test_window_ended_user_line_lets_groups_apply),
		cmocka_unit_test(test_window_clock_failure_grants_nothing),
	};
	return cmocka_run_group_tests_name("module", tests, NULL, NULL);
}
