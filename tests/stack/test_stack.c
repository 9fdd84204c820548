/*
 * test_stack.c - drive the real pam_capdelegate.so through libpam (pam_wrapper) with fake users
 * (nss_wrapper). Each case runs in its own forked process, because a capability change sticks
 * to the process that made it; the child reports back its /proc/self/status capability lines,
 * the PAM return codes and the module's log lines.
 *
 * Needs root (the policy must be root-owned and the cases shape pP, pE and the bounding set
 * before logging in); as another user every case is skipped with the reason. Run through
 * stack.sh, which sets up the wrappers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <libpamtest.h>

#define BIT(c) ((unsigned long long)1 << (c))

static const char *workdir;	/* from stack.sh: holds services/, policies, logs */
static const char *module;	/* absolute path of pam_capdelegate.so */

/* How the child shapes its own capabilities before the PAM transaction: what login would
 * hold in the guest. */
struct prep {
	int drop_permitted;		/* pP = pE = keep_caps only */
	cap_value_t keep[8];
	int nkeep;
	cap_value_t drop_bound[4];	/* removed from the bounding set */
	int ndrop_bound;
	int preset_inheritable;		/* pI = keep_caps (login's own pI, as for the ambient set) */
};

struct outcome {
	int pamtest_rc;
	int op_rc[4];
	unsigned long long inh, prm, eff, amb;
	char log[8192];
};

static int write_file(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	fchmod(fd, mode);
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static char *policy_path(const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", workdir, name) > 0);
	return p;
}

static void write_policy(const char *name, const char *text, mode_t mode)
{
	char *p = policy_path(name);
	assert_int_equal(write_file(p, text, mode), 0);
	free(p);
}

/* A service "svc" whose auth stack is pam_permit + our module (so authenticate succeeds and
 * setcred is replayed on the frozen chain) and whose session stack is our module. */
static void write_service(const char *svc, const char *args)
{
	char *path, *text;
	assert_true(asprintf(&path, "%s/services/%s", workdir, svc) > 0);
	assert_true(asprintf(&text,
			     "auth     required pam_permit.so\n"
			     "auth     required %s %s\n"
			     "account  required pam_permit.so\n"
			     "session  required %s %s\n", module, args, module, args) > 0);
	assert_int_equal(write_file(path, text, 0644), 0);
	free(path);
	free(text);
}

static unsigned long long status_field(const char *status, const char *field)
{
	const char *p = strstr(status, field);
	return p ? strtoull(p + strlen(field), NULL, 16) : ~0ULL;
}

static void read_caps(struct outcome *o)
{
	char buf[4096] = "";
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	o->inh = status_field(buf, "CapInh:\t");
	o->prm = status_field(buf, "CapPrm:\t");
	o->eff = status_field(buf, "CapEff:\t");
	o->amb = status_field(buf, "CapAmb:\t");
}

static int apply_prep(const struct prep *p)
{
	for (int i = 0; i < p->ndrop_bound; i++)
		if (prctl(PR_CAPBSET_DROP, p->drop_bound[i], 0, 0, 0) < 0)
			return -1;
	if (!p->drop_permitted && !p->preset_inheritable)
		return 0;
	cap_t c = cap_get_proc();
	if (p->drop_permitted) {
		cap_clear(c);
		cap_set_flag(c, CAP_PERMITTED, p->nkeep, p->keep, CAP_SET);
		cap_set_flag(c, CAP_EFFECTIVE, p->nkeep, p->keep, CAP_SET);
	}
	if (p->preset_inheritable) {
		cap_clear_flag(c, CAP_INHERITABLE);
		cap_set_flag(c, CAP_INHERITABLE, p->nkeep, p->keep, CAP_SET);
	}
	int rc = cap_set_proc(c);
	cap_free(c);
	return rc;
}

/* Run one PAM transaction for @user in a child; fill @o. ops: auth+setcred and/or session. */
static void run_case(const char *svc, const char *user, const struct prep *prep,
		     const struct pam_testcase *ops, int nops, struct outcome *o)
{
	char *logpath;
	assert_true(asprintf(&logpath, "%s/%s-%s.log", workdir, svc, user) > 0);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outcome r;
		struct pam_testcase t[8];
		memset(&r, 0, sizeof(r));
		memcpy(t, ops, (size_t)nops * sizeof(*ops));
		/* pam_wrapper writes the module's pam_syslog lines to stderr at debug level 2. */
		int lfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(lfd, 2);
		if (prep != NULL && apply_prep(prep) < 0)
			_exit(3);
		const char *pw[] = { "secret", NULL };
		struct pamtest_conv_data conv = { .in_echo_off = pw };
		r.pamtest_rc = _pamtest(svc, user, &conv, t, (size_t)nops, NULL);
		for (int i = 0; i < nops && i < 4; i++)
			r.op_rc[i] = t[i].op_rv;
		read_caps(&r);
		free(logpath);	/* the child's allocations are checked by valgrind at _exit too */
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

/* The usual login sequence: authenticate, setcred(ESTABLISH), open_session. */
static void login(const char *svc, const char *user, const struct prep *prep, int want_setcred,
		  int want_session, struct outcome *o)
{
	struct pam_testcase ops[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test_flags(PAMTEST_SETCRED, want_setcred, PAM_ESTABLISH_CRED),
		pam_test(PAMTEST_OPEN_SESSION, want_session),
	};
	run_case(svc, user, prep, ops, 3, o);
	if (o->pamtest_rc != PAMTEST_ERR_OK)
		fail_msg("pamtest rc %d (ops %d %d %d)\nlog:\n%s", o->pamtest_rc, o->op_rc[0],
			 o->op_rc[1], o->op_rc[2], o->log);
}

static void expect_log(const struct outcome *o, const char *text)
{
	if (strstr(o->log, text) == NULL)
		fail_msg("expected in the module's log: %s\nlog:\n%s", text, o->log);
}

static int need_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();	/* prints SKIP: policies must be root-owned, and the cases shape pP */
	return 0;
}

static const char *demo =
	"# demo policy\n"
	"alice    cap_net_raw\n"
	"@netops  cap_net_raw\n"
	"carol    cap_syslog\n"
	"dave     none\n";

/* Service @svc reading policy @svc.conf (@text, @mode), with @extra module options. */
static void policy_service(const char *svc, const char *text, mode_t mode, const char *extra)
{
	char *name, *args, *p;
	assert_true(asprintf(&name, "%s.conf", svc) > 0);
	write_policy(name, text, mode);
	p = policy_path(name);
	assert_true(asprintf(&args, "config=%s %s", p, extra) > 0);
	write_service(svc, args);
	free(name);
	free(args);
	free(p);
}

static void setup_demo(void)
{
	policy_service("demo", demo, 0644, "");
}

static void test_demo_users(void **state)
{
	need_root(state);
	setup_demo();
	static const struct { const char *user; unsigned long long inh; const char *via; } want[] = {
		{ "alice", BIT(CAP_NET_RAW), "via=user" },
		{ "bob", 0, "via=none" },
		{ "carol", BIT(CAP_SYSLOG), "via=user" },	/* her user line wins over @netops */
		{ "dave", 0, "via=user" },			/* "none" wins over @netops */
		{ "erin", BIT(CAP_NET_RAW), "via=group" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct outcome o;
		login("demo", want[i].user, NULL, PAM_SUCCESS, PAM_SUCCESS, &o);
		if (o.inh != want[i].inh)
			fail_msg("%s: CapInh %llx, want %llx\n%s", want[i].user, o.inh, want[i].inh, o.log);
		assert_true(o.prm == o.eff);	/* pP and pE untouched (root: full) */
		char *line;
		assert_true(asprintf(&line, "user=%s granted=", want[i].user) > 0);
		expect_log(&o, line);
		expect_log(&o, want[i].via);
		/* one NOTICE line per login, though setcred and open_session both apply it */
		assert_null(strstr(strstr(o.log, line) + 1, line));
		free(line);
	}
}

static void test_delegation_through_setpcap(void **state)
{
	need_root(state);
	setup_demo();
	/* login as the guest runs it: pP = pE = {setpcap}, without the delegated capability. */
	struct prep p = { .drop_permitted = 1, .keep = { CAP_SETPCAP }, .nkeep = 1 };
	struct outcome o;
	login("demo", "carol", &p, PAM_SUCCESS, PAM_SUCCESS, &o);
	assert_true(o.inh == BIT(CAP_SYSLOG));
	assert_true(o.prm == BIT(CAP_SETPCAP));
	assert_true(o.eff == BIT(CAP_SETPCAP));
	expect_log(&o, "user=carol granted=cap_syslog via=user rules=");
	expect_log(&o, "demo.conf:4 policy=ok delegated=cap_syslog");
}

static void test_without_setpcap_grants_what_it_can(void **state)
{
	need_root(state);
	/* pP holds cap_net_raw but no CAP_SETPCAP: net_raw can be raised, syslog cannot. */
	policy_service("two", "alice cap_net_raw, cap_syslog\n", 0644, "");
	struct prep p = { .drop_permitted = 1, .keep = { CAP_NET_RAW }, .nkeep = 1 };
	struct outcome o;
	login("two", "alice", &p, PAM_SUCCESS, PAM_SUCCESS, &o);
	assert_true(o.inh == BIT(CAP_NET_RAW));
	expect_log(&o, "dropped_no_setpcap=cap_syslog");
	expect_log(&o, "no CAP_SETPCAP in its effective set");
}

static void test_outside_bounding_set_is_dropped(void **state)
{
	need_root(state);
	setup_demo();
	struct prep p = { .drop_bound = { CAP_NET_RAW }, .ndrop_bound = 1 };
	struct outcome o;
	login("demo", "alice", &p, PAM_SUCCESS, PAM_SUCCESS, &o);
	assert_true(o.inh == 0);
	expect_log(&o, "dropped_bounding=cap_net_raw");
	expect_log(&o, "outside the bounding set");
}

static void test_login_inheritable_never_leaks(void **state)
{
	need_root(state);
	setup_demo();
	/* login's own pI (raised for its ambient set) must not reach the user, also when the
	 * grant cannot be applied (pam_cap left CapInh 0x1cb in exactly this case). */
	struct prep p = { .drop_permitted = 1, .preset_inheritable = 1,
			  .keep = { CAP_SETPCAP, CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_FOWNER,
				    CAP_DAC_OVERRIDE }, .nkeep = 6,
			  .drop_bound = { CAP_NET_RAW }, .ndrop_bound = 1 };
	const char *users[] = { "alice", "bob", "dave", "erin" };
	for (size_t i = 0; i < 4; i++) {
		struct outcome o;
		login("demo", users[i], &p, PAM_SUCCESS, PAM_SUCCESS, &o);
		if (o.inh != 0 || o.amb != 0)
			fail_msg("%s: CapInh %llx CapAmb %llx\n%s", users[i], o.inh, o.amb, o.log);
	}
}

static void expect_nothing_granted(const char *svc, int strict, const char *logtext)
{
	static const char *users[] = { "alice", "bob", "carol", "erin" };
	struct prep p = { .drop_permitted = 1, .preset_inheritable = 1,
			  .keep = { CAP_SETPCAP, CAP_CHOWN }, .nkeep = 2 };
	for (size_t i = 0; i < 4; i++) {
		struct outcome o;
		login(svc, users[i], &p, strict ? PAM_CRED_ERR : PAM_SUCCESS,
		      strict ? PAM_SESSION_ERR : PAM_SUCCESS, &o);
		if (o.inh != 0)
			fail_msg("%s: CapInh %llx\n%s", users[i], o.inh, o.log);
		expect_log(&o, logtext);
		expect_log(&o, "no capabilities granted");
	}
}

static void test_syntax_error_grants_nothing(void **state)
{
	need_root(state);
	policy_service("syntax", "alice cap_net_raw\n@netops cap_net_raw\nbob cap_nonsense\n", 0644, "");
	expect_nothing_granted("syntax", 0, "syntax.conf:3: unknown capability: 'cap_nonsense'");
}

static void test_syntax_error_strict_refuses(void **state)
{
	need_root(state);
	policy_service("syntax-strict", "alice cap_net_raw\nbob all\n", 0644, "strict");
	expect_nothing_granted("syntax-strict", 1, "syntax-strict.conf:2: 'all' is not allowed");
}

static void test_world_writable_grants_nothing(void **state)
{
	need_root(state);
	policy_service("writable", demo, 0666, "");
	expect_nothing_granted("writable", 0, "writable by group or others");
	policy_service("writable-strict", demo, 0666, "strict");
	expect_nothing_granted("writable-strict", 1, "writable by group or others");
}

static void test_missing_policy_grants_nothing(void **state)
{
	need_root(state);
	write_service("missing", "config=/nonexistent/capdelegate.conf");
	expect_nothing_granted("missing", 0, "policy file missing");
}

/* Runs as any user: a policy not owned by root is refused (as root the test hands the file to
 * uid 1001 first), logged, and with strict the login is refused. */
static void test_policy_not_owned_by_root(void **state)
{
	(void)state;
	policy_service("owner", demo, 0644, "");
	policy_service("owner-strict", demo, 0644, "strict");
	if (geteuid() == 0) {
		char *a = policy_path("owner.conf"), *b = policy_path("owner-strict.conf");
		assert_int_equal(chown(a, 1001, 1001), 0);
		assert_int_equal(chown(b, 1001, 1001), 0);
		free(a);
		free(b);
	}
	struct outcome o;
	login("owner", "alice", NULL, PAM_SUCCESS, PAM_SUCCESS, &o);
	assert_true(o.inh == 0);
	expect_log(&o, "not owned by root");
	expect_log(&o, "user=alice granted=none via=none rules=none policy=unsafe");
	login("owner-strict", "alice", NULL, PAM_CRED_ERR, PAM_SESSION_ERR, &o);
	assert_true(o.inh == 0);
	expect_log(&o, "strict: refusing the login (policy unsafe)");
}

static void test_relative_config_grants_nothing(void **state)
{
	need_root(state);
	write_service("relative", "config=capdelegate.conf");
	struct prep p = { .preset_inheritable = 1, .keep = { CAP_CHOWN }, .nkeep = 1 };
	struct outcome o;
	login("relative", "alice", &p, PAM_SUCCESS, PAM_SUCCESS, &o);
	assert_true(o.inh == 0);
	expect_log(&o, "not an absolute path");
}

static void test_unknown_user(void **state)
{
	need_root(state);
	setup_demo();
	struct prep p = { .preset_inheritable = 1, .keep = { CAP_CHOWN }, .nkeep = 1 };
	struct outcome o;
	login("demo", "mallory", &p, PAM_USER_UNKNOWN, PAM_USER_UNKNOWN, &o);
	assert_true(o.inh == 0);
	expect_log(&o, "user=mallory unknown to NSS: no capabilities granted");
	/* A name typed at the prompt cannot forge log fields or lines. */
	login("demo", "eve granted=cap_sys_admin\nuser=x", &p, PAM_USER_UNKNOWN, PAM_USER_UNKNOWN, &o);
	assert_true(o.inh == 0);
	expect_log(&o, "user=eve\\x20granted=cap_sys_admin\\x0auser=x unknown to NSS");
}

static void test_policy_read_once_per_transaction(void **state)
{
	need_root(state);
	policy_service("debug", demo, 0644, "debug");
	struct outcome o;
	login("debug", "alice", NULL, PAM_SUCCESS, PAM_SUCCESS, &o);
	assert_true(o.inh == BIT(CAP_NET_RAW));
	expect_log(&o, "user=alice: policy already read in this transaction");
}

static void test_session_only_and_reinitialize(void **state)
{
	need_root(state);
	setup_demo();
	struct pam_testcase session_only[] = { pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS) };
	struct outcome o;
	run_case("demo", "erin", NULL, session_only, 1, &o);
	assert_int_equal(o.pamtest_rc, PAMTEST_ERR_OK);
	assert_true(o.inh == BIT(CAP_NET_RAW));
	struct pam_testcase reinit[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test_flags(PAMTEST_SETCRED, PAM_SUCCESS, PAM_REINITIALIZE_CRED),
	};
	run_case("demo", "carol", NULL, reinit, 2, &o);
	assert_int_equal(o.pamtest_rc, PAMTEST_ERR_OK);
	assert_true(o.inh == BIT(CAP_SYSLOG));
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s WORKDIR MODULE (run through stack.sh)\n", argv[0]);
		return 2;
	}
	workdir = argv[1];
	module = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demo_users),
		cmocka_unit_test(test_delegation_through_setpcap),
		cmocka_unit_test(test_without_setpcap_grants_what_it_can),
		cmocka_unit_test(test_outside_bounding_set_is_dropped),
		cmocka_unit_test(test_login_inheritable_never_leaks),
		cmocka_unit_test(test_syntax_error_grants_nothing),
		cmocka_unit_test(test_syntax_error_strict_refuses),
		cmocka_unit_test(test_world_writable_grants_nothing),
		cmocka_unit_test(test_missing_policy_grants_nothing),
		cmocka_unit_test(test_policy_not_owned_by_root),
		cmocka_unit_test(test_relative_config_grants_nothing),
		cmocka_unit_test(test_unknown_user),
		cmocka_unit_test(test_policy_read_once_per_transaction),
		cmocka_unit_test(test_session_only_and_reinitialize),
	};
	return cmocka_run_group_tests_name("stack", tests, NULL, NULL);
}
