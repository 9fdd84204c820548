/*
 * test_policy.c - cmocka unit tests of the policy core: parsing, file safety, resolution.
 * Runs unprivileged: policy files are written to a temporary directory and the required
 * owner is the test's own uid (the module always requires root).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/capability.h>

#include "cd_policy.h"
#include "test_dir.h"
#include "test_log.h"

#define BIT(c) ((cd_capmask)1 << (c))

static char tmpdir[PATH_MAX];
static int setup(void **state)
{
	(void)state;
	forget_logged();
	return 0;
}

static char *write_file(const char *name, const char *data, size_t len, mode_t mode)
{
	char *path;
	assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static enum cd_status load_bytes(struct cd_policy *pol, const char *data, size_t len)
{
	char *path = write_file("policy", data, len, 0644);
	struct cd_load_opts o = { .owner = getuid(), .no_settle = 1 };
	enum cd_status st = cd_policy_load(pol, path, &o, &test_log);
	free(path);
	return st;
}

static enum cd_status load(struct cd_policy *pol, const char *text)
{
	return load_bytes(pol, text, strlen(text));
}

/* Load @text and expect it to be rejected for a syntax error at @line with @why. */
static void expect_rejected(const char *text, size_t line, const char *why)
{
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load(&pol, text), CD_POLICY_SYNTAX);
	assert_int_equal(pol.nrules, 0);
	char *want;
	assert_true(asprintf(&want, "%s/policy:%zu: %s", tmpdir, line, why) > 0);
	if (strstr(logged(), want) == NULL)
		fail_msg("expected '%s' in log:\n%s", want, logged());
	assert_non_null(strstr(logged(), "policy rejected"));
	assert_non_null(strstr(logged(), "no capabilities granted"));
	free(want);
	cd_policy_free(&pol);
}

static struct cd_user make_user(const char *name, const char **groups)
{
	struct cd_user u = { .name = (char *)name, .groups_loaded = 1 };
	size_t n = 0;
	while (groups && groups[n])
		n++;
	u.groups = (char **)groups;
	u.ngroups = n;
	return u;
}

static cd_capmask resolve_for(const struct cd_policy *pol, const char *name, const char **groups,
			      enum cd_subject_kind *via, size_t *nmatched)
{
	struct cd_user u = make_user(name, groups);
	struct cd_grant g;
	assert_int_equal(cd_resolve(pol, &u, &g), 0);
	cd_capmask caps = g.caps;
	if (via)
		*via = g.via;
	if (nmatched)
		*nmatched = g.nmatched;
	cd_grant_free(&g);
	return caps;
}

/* ---- parsing ------------------------------------------------------------------------------ */

static void test_example_policy(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "# SUBJECT   CAPABILITIES\nalice       cap_net_raw\n"
			 "@netops     cap_net_raw, cap_net_admin\ncarol       cap_syslog\ndave        none\n"),
			 CD_POLICY_OK);
	assert_int_equal(pol.nrules, 4);
	assert_int_equal(pol.rules[0].kind, CD_SUBJECT_USER);
	assert_string_equal(pol.rules[0].name, "alice");
	assert_int_equal(pol.rules[0].line, 2);
	assert_true(pol.rules[0].caps == BIT(CAP_NET_RAW));
	assert_int_equal(pol.rules[1].kind, CD_SUBJECT_GROUP);
	assert_string_equal(pol.rules[1].name, "netops");
	assert_true(pol.rules[1].caps == (BIT(CAP_NET_RAW) | BIT(CAP_NET_ADMIN)));
	assert_true(pol.rules[2].caps == BIT(CAP_SYSLOG));
	assert_true(pol.rules[3].caps == 0);
	assert_int_equal(nmessages, 0);
	cd_policy_free(&pol);
}

static void test_comments_and_blank_lines(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "\n   \n\t\n# only a comment\n  # indented comment\n"
			 "alice cap_chown # trailing comment, cap_sys_admin\n#bob cap_sys_admin\n"),
			 CD_POLICY_OK);
	assert_int_equal(pol.nrules, 1);
	assert_true(pol.rules[0].caps == BIT(CAP_CHOWN));
	assert_int_equal(pol.rules[0].line, 6);
	assert_int_equal(pol.nlines, 7);
	cd_policy_free(&pol);
}

static void test_whitespace_variants(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "\talice\t\tcap_chown,cap_kill ,  cap_fowner\t,\tcap_setgid  \r\n"
			 "  bob cap_kill\r\ncarol cap_kill"),
			 CD_POLICY_OK);
	assert_int_equal(pol.nrules, 3);
	assert_true(pol.rules[0].caps ==
		    (BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_FOWNER) | BIT(CAP_SETGID)));
	assert_string_equal(pol.rules[1].name, "bob");
	assert_string_equal(pol.rules[2].name, "carol");	/* no final newline */
	cd_policy_free(&pol);
}

static void test_case_insensitive_names(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice CAP_NET_RAW, Cap_Syslog, NONE_OF_THAT_IS_NONE\n"), CD_POLICY_SYNTAX);
	cd_policy_free(&pol);
	assert_int_equal(load(&pol, "alice CAP_NET_RAW, Cap_Syslog\nbob NONE\n"), CD_POLICY_OK);
	assert_true(pol.rules[0].caps == (BIT(CAP_NET_RAW) | BIT(CAP_SYSLOG)));
	assert_true(pol.rules[1].caps == 0);
	cd_policy_free(&pol);
}

/* cd_parse_caps is the parser of a CAPABILITIES field on its own (the CLI and the tests call it
 * with text no policy line has checked): a control byte where a name should start is named as
 * such, whether the field starts with it or a list goes on to it. */
static void test_parse_caps_control_byte(void **state)
{
	(void)state;
	static const char *const texts[] = { "\x01" "cap_kill", "cap_kill,\x01" "cap_net_raw",
					     "cap_kill, \x1f", "\x7f" };
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		cd_capmask m = 1;
		const char *why = NULL;
		assert_int_equal(cd_parse_caps(texts[k], strlen(texts[k]), &m, &why), -1);
		assert_non_null(why);
		assert_string_equal(why, "control character in line");
	}
}

static void test_capabilities_above_31(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice cap_syslog, cap_wake_alarm, cap_perfmon, cap_bpf, "
			 "cap_checkpoint_restore, cap_block_suspend, cap_audit_read\n"), CD_POLICY_OK);
	assert_true(pol.rules[0].caps == (BIT(34) | BIT(35) | BIT(38) | BIT(39) | BIT(40) |
					  BIT(36) | BIT(37)));
	char *text = cd_capmask_to_text(pol.rules[0].caps);
	assert_string_equal(text, "cap_syslog,cap_wake_alarm,cap_block_suspend,cap_audit_read,"
			    "cap_perfmon,cap_bpf,cap_checkpoint_restore");
	free(text);
	cd_policy_free(&pol);
}

static void test_line_over_64k(void **state)
{
	(void)state;
	/* A 100 KiB capability list on one line, and a 70 KiB comment whose tail looks like a
	 * rule: a fixed-buffer reader would split it and grant cap_sys_admin to root. */
	size_t n = 100 * 1024;
	char *buf = malloc(n + 200 * 1024);
	assert_non_null(buf);
	strcpy(buf, "alice cap_chown");
	size_t len = strlen(buf);
	while (len < n) {
		memcpy(buf + len, " ,\tcap_kill", 11);
		len += 11;
	}
	memcpy(buf + len, ", cap_syslog\n# ", 15);
	len += 15;
	for (size_t i = 0; i < 70 * 1024; i++)
		buf[len++] = 'x';
	memcpy(buf + len, " root cap_sys_admin\nbob cap_fowner\n", 35);
	len += 35;
	struct cd_policy pol;
	assert_int_equal(load_bytes(&pol, buf, len), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 2);
	assert_true(pol.rules[0].caps == (BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_SYSLOG)));
	assert_string_equal(pol.rules[1].name, "bob");
	assert_int_equal(pol.rules[1].line, 3);
	cd_policy_free(&pol);
	free(buf);
}

static void test_subjects(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "* cap_kill\n@wheel-2 cap_chown\nmachine$ cap_chown\n"
			 "A.b_c-d cap_chown\n"), CD_POLICY_OK);
	assert_int_equal(pol.rules[0].kind, CD_SUBJECT_DEFAULT);
	assert_null(pol.rules[0].name);
	assert_int_equal(pol.rules[1].kind, CD_SUBJECT_GROUP);
	assert_string_equal(pol.rules[1].name, "wheel-2");
	assert_string_equal(pol.rules[2].name, "machine$");
	assert_string_equal(pol.rules[3].name, "A.b_c-d");
	cd_policy_free(&pol);
}

/* Names as SSSD, winbind and AD return them, spaces written \040. */
static void test_directory_names(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice@corp.example.com cap_kill\n"
			 "CORP\\alice cap_chown\n"
			 "@linux\\040admins@corp.example.com cap_net_raw\n"
			 "@Domain\\040Users none\n"
			 "odd\\043name\\134040 cap_kill   # an escaped '#', an escaped backslash\n"
			 "CORP\\04x cap_kill\n"), CD_POLICY_OK);
	assert_string_equal(pol.rules[0].name, "alice@corp.example.com");
	assert_string_equal(pol.rules[1].name, "CORP\\alice");
	assert_int_equal(pol.rules[2].kind, CD_SUBJECT_GROUP);
	assert_string_equal(pol.rules[2].name, "linux admins@corp.example.com");
	assert_string_equal(pol.rules[3].name, "Domain Users");
	assert_string_equal(pol.rules[4].name, "odd#name\\040");
	assert_string_equal(pol.rules[5].name, "CORP\\04x");	/* not an escape: itself */
	/* Printed back in the same form, and read back to the same name. */
	char form[64];
	cd_name_form(form, sizeof(form), pol.rules[2].name, 60);
	assert_string_equal(form, "linux\\040admins@corp.example.com");
	cd_name_form(form, sizeof(form), pol.rules[1].name, 60);
	assert_string_equal(form, "CORP\\alice");
	cd_name_form(form, sizeof(form), pol.rules[4].name, 60);
	assert_string_equal(form, "odd\\043name\\134040");
	cd_name_form(form, sizeof(form), "tab\there\n", 60);
	assert_string_equal(form, "tab\\011here\\012");
	/* capdelegate.conf(5): letters, digits, '.', '_', '-' and '@' are written bare, the ends
	 * of each range too; the bytes just past them are not */
	cd_name_form(form, sizeof(form), "azAZ09._-@svc9$", 60);
	assert_string_equal(form, "azAZ09._-@svc9$");
	/* a backslash stays bare unless three octal digits follow it, the first of them too */
	cd_name_form(form, sizeof(form), "a\\x12", 60);
	assert_string_equal(form, "a\\x12");
	cd_name_form(form, sizeof(form), "`{@[/:", 60);
	assert_string_equal(form, "\\140\\173@\\133\\057\\072");
	cd_policy_free(&pol);
	/* An '@' anywhere after a name's first byte is part of it, the second byte too, after an
	 * escaped first byte as after a plain one: a one-letter account of a domain (x@corp), and a
	 * group's (@g@corp). */
	assert_int_equal(load(&pol, "\\170@corp.example.com cap_kill\n@\\147@corp.example.com cap_chown\n"),
			 CD_POLICY_OK);
	assert_string_equal(pol.rules[0].name, "x@corp.example.com");
	assert_int_equal(pol.rules[1].kind, CD_SUBJECT_GROUP);
	assert_string_equal(pol.rules[1].name, "g@corp.example.com");
	cd_policy_free(&pol);
	/* Still refused: control characters and NUL even escaped, '@' first, '#' bare. */
	expect_rejected("a\\011b cap_kill\n", 1, "bad subject");
	expect_rejected("a\\000b cap_kill\n", 1, "bad subject");
	expect_rejected("a\\177b cap_kill\n", 1, "bad subject");
	expect_rejected("@alice cap_kill\n@@corp cap_kill\n", 2, "bad subject");
	expect_rejected("a#b cap_kill\n", 1, "missing capabilities field after subject");
	expect_rejected("a b cap_kill\n", 1, "unknown capability: 'b'");
}

/* ---- errors: each rejects the whole policy ----------------------------------------------- */

static void test_error_unknown_capability(void **state)
{
	(void)state;
	expect_rejected("alice cap_net_raw\nbob cap_net_rawx\n", 2, "unknown capability: 'cap_net_rawx'");
	/* the last name again, but for one byte in each 8 the parser's memo compares at a time */
	expect_rejected("alice cap_net_raw\nbob xap_net_raw\n", 2, "unknown capability: 'xap_net_raw'");
	expect_rejected("alice cap_dac_read_search\nbob xap_dac_read_search\n", 2,
			"unknown capability: 'xap_dac_read_search'");
	expect_rejected("alice cap_dac_read_search\nbob cap_dac_rexd_search\n", 2,
			"unknown capability: 'cap_dac_rexd_search'");
}

/* libcap's cap_from_name reads only the leading [A-Za-z_] run: each of these used to grant
 * the capability its prefix names. A token is a whole name or nothing. */
static void test_error_name_with_suffix(void **state)
{
	(void)state;
	static const char *const tokens[] = {
		"cap_sys_admin-i", "cap_setuid2", "cap_dac_override-1", "cap_net_raw.disabled",
		"cap_chown-", "CAP_SYS_ADMIN-eip", "cap_net_raw.", "cap_kill0",
	};
	for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
		char *text, *why;
		assert_true(asprintf(&text, "alice %s\n", tokens[i]) > 0);
		/* a name, '-', flags: setcap's text (cap_net_raw-i), and the message says so */
		int setcap = i == 0 || i == 5;
		assert_true(asprintf(&why, "%s: '%s'", setcap ? "capabilities are "
				     "listed bare, not as setcap writes them (=, +, - and flags): the "
				     "inheritable set is implied" : "unknown capability", tokens[i]) > 0);
		expect_rejected(text, 1, why);
		assert_int_equal(cd_cap_from_name(tokens[i], strlen(tokens[i])), -1);
		free(text);
		free(why);
	}
	/* Whole names still work in any letter case. */
	assert_int_equal(cd_cap_from_name("CAP_Sys_Admin", 13), CAP_SYS_ADMIN);
}

/* capdelegate.conf(5): setcap's text is an error whose message says capabilities are listed
 * bare, and shows the token as written, name and flags: also when an earlier line, or an
 * earlier token of the same line, named the same capability (the parser remembers the last
 * name it read and skips over it when it comes again). */
static void test_setcap_text_after_the_same_name(void **state)
{
	(void)state;
	static const struct { const char *text; size_t line; const char *tok; } bad[] = {
		{ "alice cap_net_raw\nbob cap_net_raw=i\n", 2, "cap_net_raw=i" },
		{ "alice cap_net_raw\nbob cap_net_raw+ep\n", 2, "cap_net_raw+ep" },
		{ "alice cap_net_raw, cap_net_raw=i\n", 1, "cap_net_raw=i" },
		{ "alice CAP_NET_RAW\nbob CAP_NET_RAW=eip # setcap's own text\n", 2, "CAP_NET_RAW=eip" },
		{ "alice cap_dac_read_search\nbob cap_kill,cap_dac_read_search=i\n", 2,
		  "cap_dac_read_search=i" },
		{ "alice cap_net_raw\nbob cap_net_raw-i\n", 2, "cap_net_raw-i" },
		{ "alice cap_net_raw=i\n", 1, "cap_net_raw=i" },	/* no name read before */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *why;
		assert_true(asprintf(&why, "capabilities are listed bare, not as setcap writes them "
				     "(=, +, - and flags): the inheritable set is implied: '%s'",
				     bad[i].tok) > 0);
		expect_rejected(bad[i].text, bad[i].line, why);
		free(why);
	}
}

/* capdelegate.conf(5): a control character makes a line malformed, in its comment too. A
 * comment's ESC sequence or carriage return can hide the rule before it on a terminal: "cat"
 * of "bob cap_sys_admin # ESC[2K\r@staff cap_kill" shows only the harmless text. Tab and a
 * trailing carriage return (DOS line end) stay allowed. Found by the model's differential test
 * (tests/model): the module granted from such a file. */
static void test_error_control_in_comment(void **state)
{
	(void)state;
	static const struct { const char *text; size_t line; } bad[] = {
		{ "alice cap_chown # \x1b[2K\r@staff cap_kill\n", 1 },
		{ "alice cap_chown\n# \x01\n", 2 },
		{ "  #\x7f\n", 1 },
		{ "alice cap_chown,cap_kill #x\ry\n", 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_rejected(bad[i].text, bad[i].line, "control character in line");
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice cap_chown #\ttab\r\n#\tcomment\r\n"), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 1);
	cd_policy_free(&pol);
}

static void test_error_missing_field(void **state)
{
	(void)state;
	expect_rejected("alice cap_net_raw\nbob\n", 2, "missing capabilities field after subject: 'bob'");
	expect_rejected("alice cap_net_raw\nbob   # comment\n", 2, "missing capabilities field");
}

static void test_error_bad_subject(void **state)
{
	(void)state;
	expect_rejected("a/b cap_chown\n", 1, "bad subject");
	expect_rejected("@ cap_chown\n", 1, "bad subject");
	expect_rejected("-alice cap_chown\n", 1, "bad subject");
	expect_rejected("** cap_chown\n", 1, "bad subject");
	expect_rejected("@@g cap_chown\n", 1, "bad subject");
	expect_rejected("al\xc3\xa9 cap_chown\n", 1, "bad subject (a user name, @group or *): 'al\\xc3\\xa9'");
	char *longname = malloc(300 + 20);
	memset(longname, 'a', 300);
	strcpy(longname + 300, " cap_chown\n");
	expect_rejected(longname, 1, "bad subject");
	free(longname);
}

/* A bad subject is shown as written, escapes and all. The names used to be decoded in place
 * before they were judged, so the message showed the decoded bytes followed by what was left
 * of the text: "\100alice" as '@aliceice', "\055x" as '-x55x' (found by the model's
 * differential test, tests/model). */
static void test_error_bad_subject_shown_as_written(void **state)
{
	(void)state;
	const char *bs = "bad subject (a user name, @group or *): ";
	char *want;
	static const char *const cases[][2] = {
		{ "\\100alice cap_chown\n", "'\\x5c100alice'" },
		{ "\\055x cap_chown\n", "'\\x5c055x'" },
		{ "@\\100ops cap_chown\n", "'@\\x5c100ops'" },
		{ "\\044 cap_chown\n", "'\\x5c044'" },
		{ "a\\141\\001b cap_chown\n", "'a\\x5c141\\x5c001b'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(asprintf(&want, "%s%s", bs, cases[i][1]) > 0);
		expect_rejected(cases[i][0], 1, want);
		free(want);
	}
	/* 250 plain bytes and 10 escapes: 260 decoded bytes, too long; shown as written. */
	char line[400] = "";
	memset(line, 'a', 250);
	for (int k = 0; k < 10; k++)
		strcat(line, "\\142");
	strcat(line, " cap_chown\n");
	expect_rejected(line, 1, "bad subject (a user name, @group or *): 'aaaa");
	assert_null(strstr(logged(), "bbbb"));
}

static void test_error_nul_byte(void **state)
{
	(void)state;
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load_bytes(&pol, "alice cap_chown\nbob cap_kill\0cap_sys_admin\n", 40),
			 CD_POLICY_SYNTAX);
	assert_int_equal(pol.nrules, 0);
	assert_non_null(strstr(logged(), "/policy:2: NUL byte in line: 'bob\\x20cap_kill\\x00'"));
	cd_policy_free(&pol);
}

static void test_error_all_and_numbers(void **state)
{
	(void)state;
	expect_rejected("alice all\n", 1, "'all' is not allowed");
	expect_rejected("alice cap_chown, ALL\n", 1, "'all' is not allowed");
	expect_rejected("alice 13\n", 1, "capability numbers are not allowed");
	/* "\/77" is no escape ('/' is below '0'): a bare '/' in a name, which no name holds */
	expect_rejected("a\\/77 cap_kill\n", 1, "bad subject");
	expect_rejected("alice cap_chown,21\n", 1, "capability numbers are not allowed");
	/* libcap's cap_from_name reads numbers in any base: none may pass as a name */
	expect_rejected("alice 0x10\n", 1, "unknown capability: '0x10'");
	expect_rejected("alice cap_chown_x\n", 1, "unknown capability: 'cap_chown_x'");
	/* three letters that are not "all": the reason names what is wrong */
	expect_rejected("alice alk\n", 1, "unknown capability: 'alk'");
}

static void test_error_list_shape(void **state)
{
	(void)state;
	/* every message names the token it is about */
	expect_rejected("alice cap_chown cap_kill\n", 1, "expected ',' between capabilities: 'cap_kill'");
	expect_rejected("alice cap_chown,,cap_kill\n", 1, "empty capability name in list: 'cap_chown,,'");
	expect_rejected("alice cap_chown,  \n", 1, "empty capability name in list: 'cap_chown,'");
	expect_rejected("alice ,cap_chown\n", 1, "empty capability name in list: ','");
	expect_rejected("alice none, cap_chown\n", 1, "'none' cannot be combined with capabilities");
	expect_rejected("alice cap_chown\tcap_kill\n", 1, "expected ',' between capabilities: 'cap_kill'");
}

static void test_error_control_characters(void **state)
{
	(void)state;
	expect_rejected("alice cap_chown\rbob cap_sys_admin\n", 1, "control character in line: '\\x0d'");
	expect_rejected("alice\vcap_chown\n", 1, "control character in line: '\\x0b'");
	expect_rejected("alice cap_chown\x1b[2J\n", 1, "control character in line: '\\x1b'");
}

static void test_error_hostile_token_is_quoted(void **state)
{
	(void)state;
	char line[400];
	memset(line, 0, sizeof(line));
	strcpy(line, "alice cap_\xff\xfe");
	memset(line + strlen(line), 'z', 200);
	strcat(line, "\n");
	expect_rejected(line, 1, "unknown capability: 'cap_\\xff\\xfezz");
	assert_non_null(strstr(logged(), "...'"));	/* truncated */
}

/* A name over CD_MAX_NAME_LEN bytes that holds an escape (the slow path of the name scan),
 * after leading blanks: a bad subject, never a shorter name or a capability field. */
static void test_error_long_escaped_name_after_blanks(void **state)
{
	(void)state;
	char line[400] = "  alice\\040";
	memset(line + strlen(line), 'b', 300);
	strcat(line, " cap_net_raw\n");
	expect_rejected(line, 1, "bad subject (a user name, @group or *): 'alice\\x5c040bbb");
}

static void test_error_reports_every_line_up_to_limit(void **state)
{
	(void)state;
	struct cd_policy pol;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	for (int i = 0; i < 25; i++)
		fprintf(f, "user%d cap_bogus%d\n", i, i);
	fclose(f);
	setup(NULL);
	assert_int_equal(load(&pol, text), CD_POLICY_SYNTAX);
	assert_int_equal(pol.nerrors, 25);
	assert_non_null(strstr(logged(), "/policy:10: unknown capability"));
	assert_null(strstr(logged(), "/policy:11: unknown capability"));
	assert_non_null(strstr(logged(), "15 more errors not shown"));
	assert_non_null(strstr(logged(), "policy rejected (25 errors)"));
	free(text);
	cd_policy_free(&pol);
}

static void test_error_anywhere_rejects_everything(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice cap_net_raw\n* cap_kill\n@g cap_chown\nzed cap_nope\n"),
			 CD_POLICY_SYNTAX);
	const char *g[] = { "g", NULL };
	assert_true(resolve_for(&pol, "alice", g, NULL, NULL) == 0);
	assert_true(resolve_for(&pol, "someone", g, NULL, NULL) == 0);
	cd_policy_free(&pol);
}

/* ---- file safety ------------------------------------------------------------------------- */

static enum cd_status load_path(const char *path, uid_t owner, size_t max)
{
	struct cd_policy pol;
	struct cd_load_opts o = { .owner = owner, .max_bytes = max, .no_settle = 1 };
	setup(NULL);
	enum cd_status st = cd_policy_load(&pol, path, &o, &test_log);
	if (st != CD_POLICY_OK)
		assert_int_equal(pol.nrules, 0);
	cd_policy_free(&pol);
	return st;
}

static void test_unsafe_files(void **state)
{
	(void)state;
	const char *text = "alice cap_net_raw\n";
	char *p = write_file("ww", text, strlen(text), 0646);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "writable by group or others"));
	assert_non_null(strstr(logged(), "policy rejected, no capabilities granted"));
	free(p);
	p = write_file("gw", text, strlen(text), 0664);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_UNSAFE);
	free(p);
	p = write_file("owner", text, strlen(text), 0644);
	assert_int_equal(load_path(p, getuid() + 1, 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "not owned by root"));
	free(p);
	assert_int_equal(load_path(tmpdir, getuid(), 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "not a regular file"));
}

static void test_unsafe_symlink_fifo_and_size(void **state)
{
	(void)state;
	const char *text = "alice cap_net_raw\n";
	char *target = write_file("target-ww", text, strlen(text), 0666);
	char *link, *fifo;
	assert_true(asprintf(&link, "%s/link", tmpdir) > 0);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(load_path(link, getuid(), 0), CD_POLICY_UNSAFE);	/* judged on the target */
	assert_true(asprintf(&fifo, "%s/fifo", tmpdir) > 0);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(load_path(fifo, getuid(), 0), CD_POLICY_UNSAFE);	/* and never blocks */
	char *big = malloc(CD_MAX_POLICY_BYTES + 2);
	memset(big, '#', CD_MAX_POLICY_BYTES + 1);
	big[CD_MAX_POLICY_BYTES] = '\n';
	char *p = write_file("big", big, CD_MAX_POLICY_BYTES + 1, 0644);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "larger than the size limit"));
	free(p);
	p = write_file("exact", big, CD_MAX_POLICY_BYTES, 0644);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_OK);	/* exactly 1 MiB is fine */
	free(p);
	free(big);
	free(target);
	free(link);
	free(fifo);
}

/* The text of a root-owned 0644 file on procfs is chosen by whoever
 * names a process; a directory others can write lets them swap the file. */
static void test_unsafe_directories_and_pseudo_fs(void **state)
{
	(void)state;
	const char *text = "alice cap_net_raw\n";
	char *dir, *inner, *lnk, *outside;
	assert_true(asprintf(&dir, "%s/gw-dir", tmpdir) > 0);
	mkdir(dir, 0775);
	assert_int_equal(chmod(dir, 0775), 0);
	assert_true(asprintf(&inner, "%s/policy", dir) > 0);
	unlink(inner);
	char *p = write_file("safe-target", text, strlen(text), 0644);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_OK);
	assert_int_equal(link(p, inner), 0);	/* the same file, reached through gw-dir */
	assert_int_equal(load_path(inner, getuid(), 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "gw-dir is writable by group or others"));
	assert_int_equal(chmod(dir, 01777), 0);	/* sticky does not make it safe */
	assert_int_equal(load_path(inner, getuid(), 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "(sticky or not)"));
	/* A link in a safe directory to a file below an unsafe one: judged on the target's path. */
	assert_true(asprintf(&lnk, "%s/link-into-gw", tmpdir) > 0);
	unlink(lnk);
	assert_int_equal(symlink(inner, lnk), 0);
	assert_int_equal(load_path(lnk, getuid(), 0), CD_POLICY_UNSAFE);
	/* A link in an unsafe directory to a safe file: the target is what is read. */
	assert_true(asprintf(&outside, "%s/link-to-safe", dir) > 0);
	unlink(outside);
	assert_int_equal(symlink(p, outside), 0);
	assert_int_equal(load_path(outside, getuid(), 0), CD_POLICY_OK);
	/* A directory owned by someone else. */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(load_path(inner, getuid(), 0), CD_POLICY_OK);
	assert_int_equal(load_path(inner, getuid() + 1, 0), CD_POLICY_UNSAFE);
	/* procfs: regular, 0644, our own (or root's), size 0, text chosen by a process name. */
	assert_int_equal(load_path("/proc/self/comm", getuid(), 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "is on a pseudo filesystem"));
	assert_non_null(strstr(logged(), "pseudo filesystem: procfs"));
	unlink(outside);
	unlink(lnk);
	unlink(inner);
	rmdir(dir);
	free(p);
	free(dir);
	free(inner);
	free(lnk);
	free(outside);
}

/* Drop-in files, read after the main file in byte order, one verdict for all. */
static char *dropin_dir(const char *name)
{
	char *dir;
	assert_true(asprintf(&dir, "%s/%s", tmpdir, name) > 0);
	char *cmd;
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(mkdir(dir, 0755), 0);
	return dir;
}

static void write_in(const char *dir, const char *name, const char *text, mode_t mode)
{
	char *rel;
	assert_true(asprintf(&rel, "%s/%s", strrchr(dir, '/') + 1, name) > 0);
	free(write_file(rel, text, strlen(text), mode));
	free(rel);
}

static enum cd_status load_with(struct cd_policy *pol, const char *text, const char *dir, size_t max)
{
	char *p = write_file("main.conf", text, strlen(text), 0644);
	struct cd_load_opts o = { .owner = getuid(), .confdir = dir, .max_bytes = max, .no_settle = 1 };
	setup(NULL);
	enum cd_status st = cd_policy_load(pol, p, &o, &test_log);
	free(p);
	return st;
}

/* pam_capdelegate(8): the first CD_MAX_REPORTED_ERRORS errors of the whole policy are logged;
 * each file's "N more errors not shown" counts its own hidden ones, wherever the limit fell. */
static char *bad_lines(int n)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	for (int i = 0; i < n; i++)
		fprintf(f, "user%d cap_bogus%d\n", i, i);
	fclose(f);
	return text;
}

static void test_hidden_errors_counted_per_file(void **state)
{
	(void)state;
	char *dir = dropin_dir("errs.d");
	write_in(dir, "10-two.conf", "carol cap_bogus\ndave cap_bogus\n", 0644);
	struct cd_policy pol;
	char *text = bad_lines(12);	/* past the limit: every drop-in error is hidden */
	assert_int_equal(load_with(&pol, text, dir, 0), CD_POLICY_SYNTAX);
	assert_non_null(strstr(logged(), "/main.conf: 2 more errors not shown"));
	assert_non_null(strstr(logged(), "/errs.d/10-two.conf: 2 more errors not shown"));
	assert_non_null(strstr(logged(), "/errs.d/10-two.conf: policy rejected (2 errors)"));
	cd_policy_free(&pol);
	free(text);
	text = bad_lines(9);	/* the limit falls inside the drop-in: one shown, one hidden */
	assert_int_equal(load_with(&pol, text, dir, 0), CD_POLICY_SYNTAX);
	assert_null(strstr(logged(), "/main.conf: 1 more error"));
	assert_non_null(strstr(logged(), "/errs.d/10-two.conf:1: unknown capability"));
	assert_null(strstr(logged(), "/errs.d/10-two.conf:2: unknown capability"));
	assert_non_null(strstr(logged(), "/errs.d/10-two.conf: 1 more error not shown"));
	cd_policy_free(&pol);
	free(text);
	free(dir);
}

static void test_dropins(void **state)
{
	(void)state;
	char *dir = dropin_dir("capdelegate.d");
	write_in(dir, "20-ops.conf", "@netops cap_net_admin\n", 0644);
	write_in(dir, "10-alice.conf", "# team alice\nalice cap_kill\n", 0644);
	write_in(dir, ".10-hidden.conf", "bob cap_sys_admin\n", 0644);
	write_in(dir, "10-alice.conf~", "bob cap_sys_admin\n", 0644);
	write_in(dir, "README", "not a policy\n", 0644);
	struct cd_policy pol;
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 0), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 3);	/* main, then 10-alice.conf, then 20-ops.conf */
	assert_int_equal(pol.nsources, 3);
	assert_non_null(strstr(pol.rules[0].file, "/main.conf"));
	assert_non_null(strstr(pol.rules[1].file, "/capdelegate.d/10-alice.conf"));
	assert_int_equal(pol.rules[1].line, 2);
	assert_non_null(strstr(pol.rules[2].file, "/capdelegate.d/20-ops.conf"));
	assert_int_equal(pol.nignored, 3);	/* the dotfile, the backup, README */
	assert_true(resolve_for(&pol, "alice", NULL, NULL, NULL) == (BIT(CAP_CHOWN) | BIT(CAP_KILL)));
	cd_policy_free(&pol);

	/* A bad line in any file rejects everything, named FILE:LINE. */
	write_in(dir, "30-bad.conf", "carol cap_bogus\n", 0644);
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 0), CD_POLICY_SYNTAX);
	assert_int_equal(pol.nrules, 0);
	assert_non_null(strstr(logged(), "/capdelegate.d/30-bad.conf:1: unknown capability: 'cap_bogus'"));
	cd_policy_free(&pol);

	/* An unsafe drop-in, an unsafe directory. */
	write_in(dir, "30-bad.conf", "carol cap_kill\n", 0666);
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "30-bad.conf: unsafe policy file (writable by group or others"));
	cd_policy_free(&pol);
	write_in(dir, "30-bad.conf", "carol cap_kill\n", 0644);
	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 0), CD_POLICY_UNSAFE);
	assert_int_equal(pol.nrules, 0);
	cd_policy_free(&pol);
	assert_int_equal(chmod(dir, 0755), 0);

	/* A drop-in that is a link is judged by its target: a safe file is read, procfs is not. */
	char *lnk;
	assert_true(asprintf(&lnk, "%s/40-link.conf", dir) > 0);
	assert_int_equal(symlink("/proc/self/comm", lnk), 0);
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "is on a pseudo filesystem: procfs"));
	cd_policy_free(&pol);
	unlink(lnk);
	char *target = write_file("linked-target", "dave cap_kill\n", 14, 0644);
	assert_int_equal(symlink(target, lnk), 0);
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 0), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 5);	/* main, 10-alice, 20-ops, 30-bad, the linked one */
	cd_policy_free(&pol);
	unlink(lnk);
	free(target);
	free(lnk);

	/* The size limit counts every file. */
	assert_int_equal(load_with(&pol, "alice cap_chown\n", dir, 40), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "larger than the size limit (40 bytes for the whole policy)"));
	cd_policy_free(&pol);

	/* No directory: no drop-ins. No main file: nothing, whatever the drop-ins say. */
	char *none;
	assert_true(asprintf(&none, "%s/no-such.d", tmpdir) > 0);
	assert_int_equal(load_with(&pol, "alice cap_chown\n", none, 0), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 1);
	cd_policy_free(&pol);
	char *missing;
	assert_true(asprintf(&missing, "%s/no-main.conf", tmpdir) > 0);
	struct cd_load_opts o = { .owner = getuid(), .confdir = dir, .no_settle = 1 };
	assert_int_equal(cd_policy_load(&pol, missing, &o, &test_log), CD_POLICY_MISSING);
	assert_int_equal(pol.nrules, 0);
	cd_policy_free(&pol);
	free(missing);
	free(none);
	free(dir);
}

static void test_missing_file(void **state)
{
	(void)state;
	char *p;
	assert_true(asprintf(&p, "%s/does-not-exist", tmpdir) > 0);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_MISSING);
	assert_non_null(strstr(logged(), "policy file missing: no capabilities granted"));
	free(p);
}

/* ---- resolution -------------------------------------------------------------------------- */

static const char *demo =
	"alice    cap_net_raw\n"
	"@netops  cap_net_raw\n"
	"carol    cap_syslog\n"
	"dave     none\n";

static void test_resolve_demo(void **state)
{
	(void)state;
	struct cd_policy pol;
	const char *netops[] = { "users", "netops", NULL };
	const char *plain[] = { "users", NULL };
	enum cd_subject_kind via;
	size_t n;
	assert_int_equal(load(&pol, demo), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "alice", plain, &via, &n) == BIT(CAP_NET_RAW));
	assert_int_equal(via, CD_SUBJECT_USER);
	assert_true(resolve_for(&pol, "bob", plain, &via, &n) == 0);
	assert_int_equal(via, CD_SUBJECT_NONE);
	assert_int_equal(n, 0);
	assert_true(resolve_for(&pol, "carol", netops, &via, NULL) == BIT(CAP_SYSLOG));	/* user wins */
	assert_int_equal(via, CD_SUBJECT_USER);
	assert_true(resolve_for(&pol, "dave", netops, &via, &n) == 0);	/* none wins over group */
	assert_int_equal(via, CD_SUBJECT_USER);
	assert_int_equal(n, 1);
	assert_true(resolve_for(&pol, "erin", netops, &via, NULL) == BIT(CAP_NET_RAW));
	assert_int_equal(via, CD_SUBJECT_GROUP);
	cd_policy_free(&pol);
}

static void test_resolve_unions_and_default(void **state)
{
	(void)state;
	struct cd_policy pol;
	const char *g2[] = { "g1", "g2", NULL };
	const char *none[] = { NULL };
	enum cd_subject_kind via;
	size_t n;
	assert_int_equal(load(&pol, "* cap_kill\n@g1 cap_chown\n@g2 cap_fowner\nu cap_setgid\n"
			 "u cap_setuid\n* cap_lease\n@g3 cap_sys_admin\n"), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "u", g2, &via, &n) == (BIT(CAP_SETGID) | BIT(CAP_SETUID)));
	assert_int_equal(n, 2);
	assert_true(resolve_for(&pol, "v", g2, &via, &n) == (BIT(CAP_CHOWN) | BIT(CAP_FOWNER)));
	assert_int_equal(via, CD_SUBJECT_GROUP);
	assert_int_equal(n, 2);
	assert_true(resolve_for(&pol, "w", none, &via, &n) == (BIT(CAP_KILL) | BIT(CAP_LEASE)));
	assert_int_equal(via, CD_SUBJECT_DEFAULT);
	cd_policy_free(&pol);
	/* No default line: nobody else gets anything. Names are case-sensitive. */
	assert_int_equal(load(&pol, "Alice cap_kill\n"), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "alice", none, NULL, NULL) == 0);
	cd_policy_free(&pol);
	/* cd_policy.h: a policy whose status is not OK grants nothing, whatever rules it still
	 * holds (a caller that rejects a read policy, as the module does when the clock cannot be
	 * read, need not empty it first) */
	static const enum cd_status rejected[] = { CD_POLICY_SYNTAX, CD_POLICY_UNSAFE,
						   CD_POLICY_MISSING, CD_POLICY_SYSERR };
	for (size_t k = 0; k < sizeof(rejected) / sizeof(rejected[0]); k++) {
		assert_int_equal(load(&pol, "u cap_kill\n@g1 cap_chown\n* cap_lease\n"), CD_POLICY_OK);
		pol.status = rejected[k];
		assert_true(resolve_for(&pol, "u", g2, &via, &n) == 0);
		assert_int_equal(n, 0);
		assert_true(resolve_for(&pol, "w", none, NULL, NULL) == 0);
		pol.status = CD_POLICY_OK;
		cd_policy_free(&pol);
	}
}

static void test_keep_filter_still_validates(void **state)
{
	(void)state;
	const char *g[] = { "netops", NULL };
	struct cd_user u = make_user("erin", g);
	struct cd_load_opts o = { .owner = getuid(), .keep = cd_rule_may_match, .keep_arg = &u, .no_settle = 1 };
	struct cd_policy pol;
	char *p = write_file("filtered", demo, strlen(demo), 0644);
	assert_int_equal(cd_policy_load(&pol, p, &o, &test_log), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 1);	/* only @netops can apply to erin */
	assert_int_equal(pol.rules[0].line, 2);
	cd_policy_free(&pol);
	free(p);
	p = write_file("filtered", "erin cap_kill\nfrank cap_bogus\n", 30, 0644);
	assert_int_equal(cd_policy_load(&pol, p, &o, &test_log), CD_POLICY_SYNTAX);
	assert_int_equal(pol.nrules, 0);
	cd_policy_free(&pol);
	free(p);
}

static void test_capmask_text_and_names(void **state)
{
	(void)state;
	char *t = cd_capmask_to_text(0);
	assert_string_equal(t, "none");
	free(t);
	t = cd_capmask_to_text(BIT(CAP_CHOWN) | BIT(CAP_NET_RAW));
	assert_string_equal(t, "cap_chown,cap_net_raw");
	free(t);
	assert_int_equal(cd_cap_from_name("CAP_BPF", 7), CAP_BPF);
	assert_int_equal(cd_cap_from_name("cap_bpfx", 8), -1);
	assert_int_equal(cd_cap_from_name("cap_bp", 6), -1);
	assert_int_equal(cd_cap_from_name("", 0), -1);
}

/* ---- mutation suite: the edges a one-line bug moves -------------------------------------- */

/* CD_MAX_NAME_LEN is the limit, exactly: 256 bytes parse, 257 do not. */
static void test_name_length_limit(void **state)
{
	(void)state;
	char name[300];
	struct cd_policy pol;
	memset(name, 'a', sizeof(name));
	for (size_t len = 255; len <= 257; len++) {
		char *text;
		assert_true(asprintf(&text, "%.*s cap_chown\n", (int)len, name) > 0);
		if (len <= CD_MAX_NAME_LEN) {
			setup(NULL);
			assert_int_equal(load(&pol, text), CD_POLICY_OK);
			assert_int_equal(pol.nrules, 1);
			assert_int_equal(strlen(pol.rules[0].name), len);
			cd_policy_free(&pol);
		} else {
			expect_rejected(text, 1, "bad subject");
		}
		free(text);
	}
}

/* A line whose capabilities field repeats the last one's is decided without scanning it again
 * (parse_repeated_line): every other kind of line after it still gets the full parse, and the
 * same verdict as alone. */
static void test_repeated_caps_lines(void **state)
{
	(void)state;
	struct cd_policy pol;
	char name[300];
	memset(name, 'n', sizeof(name));
	setup(NULL);
	assert_int_equal(load(&pol, "alice cap_net_raw\n"
				    "bob\tcap_net_raw\n"
				    "@grp  cap_net_raw\n"
				    "CORP\\dan cap_net_raw\n"
				    "linux\\040x cap_net_raw\n"
				    "host$ cap_net_raw\n"
				    "eve cap_net_raw\r\n"
				    "fay cap_net_raw # same caps, a comment\n"
				    "gil cap_net_raw # same caps, a comment\n"
				    "hal cap_net_raw"), CD_POLICY_OK);
	static const char *const names[] = { "alice", "bob", "grp", "CORP\\dan", "linux x", "host$",
					     "eve", "fay", "gil", "hal" };
	assert_int_equal(pol.nrules, 10);
	for (size_t i = 0; i < 10; i++) {
		assert_string_equal(pol.rules[i].name, names[i]);
		assert_int_equal(pol.rules[i].line, i + 1);
		assert_true(pol.rules[i].caps == BIT(CAP_NET_RAW));
	}
	assert_int_equal(pol.rules[2].kind, CD_SUBJECT_GROUP);
	cd_policy_free(&pol);
	/* after a valid line, the same field with a bad subject or a bad tail is still an error */
	expect_rejected("alice cap_net_raw\n-bob cap_net_raw\n", 2, "bad subject");
	expect_rejected("alice cap_net_raw\n@ cap_net_raw\n", 2, "bad subject");
	expect_rejected("alice cap_net_raw\nbob cap_net_raw x\n", 2, "expected ',' between capabilities: 'x'");
	expect_rejected("alice cap_net_raw\nbob cap_net_raw\rx\n", 2, "control character in line");
	expect_rejected("alice cap_net_raw\nbo\001b cap_net_raw\n", 2, "control character in line");
	expect_rejected("alice cap_net_raw\nbob\n", 2, "missing capabilities field after subject");
	char *text;
	assert_true(asprintf(&text, "alice cap_net_raw\n%.*s cap_net_raw\n", CD_MAX_NAME_LEN + 1, name) > 0);
	expect_rejected(text, 2, "bad subject");
	free(text);
	assert_true(asprintf(&text, "alice cap_net_raw\n%.*s cap_net_raw\n", CD_MAX_NAME_LEN, name) > 0);
	setup(NULL);
	assert_int_equal(load(&pol, text), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 2);
	cd_policy_free(&pol);
	free(text);
}

/* '#' starts a comment wherever it is, also glued to a name: it is never a name byte. */
static void test_hash_is_not_a_name_byte(void **state)
{
	(void)state;
	expect_rejected("al#ice cap_chown\n", 1, "missing capabilities field after subject: 'al'");
	expect_rejected("@net#ops cap_chown\n", 1, "missing capabilities field after subject: '@net'");
	expect_rejected("alice cap_ch#own\n", 1, "unknown capability: 'cap_ch'");
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load(&pol, "alice cap_chown# no blank before the comment\n"), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 1);
	assert_string_equal(pol.rules[0].name, "alice");
	assert_int_equal(pol.rules[0].caps, (cd_capmask)1 << CAP_CHOWN);
	cd_policy_free(&pol);
}

/* A subject with no capabilities, 'none' beside one name, a '-' first: each a syntax error. */
static void test_mutation_edges(void **state)
{
	(void)state;
	expect_rejected("alice\n", 1, "missing capabilities field after subject");
	expect_rejected("alice none, cap_chown\n", 1, "'none' cannot be combined with capabilities");
	expect_rejected("alice cap_chown, none\n", 1, "'none' cannot be combined with capabilities");
	expect_rejected("alice all\n", 1, "'all' is not allowed");
	expect_rejected("-bob cap_chown\n", 1, "bad subject");
	expect_rejected("bob\\011x cap_chown\n", 1, "bad subject");	/* bob@x is a name */
	expect_rejected("ok cap_chown\nbad cap_nonesuch\n", 2, "unknown capability");
}

/* A file over the limit is refused on its size before a byte is read. */
static void test_size_judged_before_reading(void **state)
{
	(void)state;
	char text[160];
	memset(text, '#', sizeof(text));
	text[sizeof(text) - 1] = '\n';
	char *p = write_file("over", text, 101, 0644);
	assert_int_equal(load_path(p, getuid(), 100), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "larger than the size limit (100 bytes for the whole policy): "));
	assert_null(strstr(logged(), "while reading"));
	free(p);
}

/* A directory on the path owned by another user is refused, even unwritable by others. */
static void test_directory_of_another_owner(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();	/* chown needs root */
	const char *text = "alice cap_net_raw\n";
	char *dir, *file;
	assert_true(asprintf(&dir, "%s/user-dir", tmpdir) > 0);
	mkdir(dir, 0755);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_true(asprintf(&file, "user-dir/policy") > 0);
	char *p = write_file(file, text, strlen(text), 0644);
	assert_int_equal(load_path(p, 0, 0), CD_POLICY_OK);
	assert_int_equal(chown(dir, 1001, 1001), 0);
	assert_int_equal(load_path(p, 0, 0), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "is not owned by root"));
	free(p);
	free(file);
	free(dir);
}

/* A user line names one account, whole: neither a prefix nor an extension of it. */
static void test_user_line_whole_name(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice cap_net_raw\nalice2 cap_syslog\n"), CD_POLICY_OK);
	enum cd_subject_kind via;
	assert_true(resolve_for(&pol, "al", NULL, &via, NULL) == 0);
	assert_int_equal(via, CD_SUBJECT_NONE);
	assert_true(resolve_for(&pol, "alice", NULL, NULL, NULL) == (cd_capmask)1 << CAP_NET_RAW);
	assert_true(resolve_for(&pol, "alice2", NULL, NULL, NULL) == (cd_capmask)1 << CAP_SYSLOG);
	cd_policy_free(&pol);
}

/* 'none' in any letter case is 'none', refused beside a capability for that reason; a longer
 * token that starts with it is an unknown capability (the reason test_case_insensitive_names'
 * first line is rejected). */
static void test_case_insensitive_none(void **state)
{
	(void)state;
	expect_rejected("alice CAP_NET_RAW, None\n", 1, "'none' cannot be combined with capabilities");
	expect_rejected("alice NONE, cap_syslog\n", 1, "'none' cannot be combined with capabilities");
	expect_rejected("alice CAP_NET_RAW, NONE_OF_THAT_IS_NONE\n", 1,
			"unknown capability: 'NONE_OF_THAT_IS_NONE'");
}

/* A path is logged escaped: a space cannot split it into two log fields. */
static void test_path_with_space_escaped(void **state)
{
	(void)state;
	char *p;
	assert_true(asprintf(&p, "%s/no such.conf", tmpdir) > 0);
	assert_int_equal(load_path(p, getuid(), 0), CD_POLICY_MISSING);
	assert_non_null(strstr(logged(), "/no\\x20such.conf: policy file missing"));
	free(p);
}

/* ---- names and capabilities ------------------------------------------------------------ */

/* The scanner remembers the last capability field and the last name it looked up (the memo,
 * the repeated-line path): a shorter token that starts like a remembered longer name is still
 * looked up whole, on any later line, in any file. cap_net and cap_sys are no names. */
static void test_shorter_cap_after_longer(void **state)
{
	(void)state;
	static const struct { const char *text; size_t line; const char *tok; } bad[] = {
		{ "alice cap_net_raw\nbob cap_net\n", 2, "cap_net" },
		{ "alice cap_syslog\nbob cap_sys\n", 2, "cap_sys" },
		{ "alice cap_net_raw\ncarol cap_net_raw\nbob cap_net\n", 3, "cap_net" },
		{ "alice cap_net_raw\nbob cap_net # the comment after it\n", 2, "cap_net" },
		{ "alice cap_net_raw\nbob cap_kill, cap_net\n", 2, "cap_net" },
		{ "alice cap_net_raw\nbob cap_net, cap_kill\n", 2, "cap_net" },
		{ "alice cap_net_raw, cap_net\n", 1, "cap_net" },
		{ "alice CAP_NET_RAW\nbob CAP_NET\r\n", 2, "CAP_NET" },
		{ "alice cap_syslog\n@g\tcap_sys\n", 2, "cap_sys" },
		{ "alice cap_sys_admin\nbob cap_sys_adm\n", 2, "cap_sys_adm" },
		{ "alice cap_sys_admin\nbob cap_sys_admi,cap_kill\n", 2, "cap_sys_admi" },
		{ "alice cap_setuid\nbob cap_setui\n", 2, "cap_setui" },
		{ "alice cap_net_raw\nbob cap_net", 2, "cap_net" },	/* no final newline */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *why;
		assert_true(asprintf(&why, "unknown capability: '%s'", bad[i].tok) > 0);
		expect_rejected(bad[i].text, bad[i].line, why);
		free(why);
	}
	/* and the other way round, shorter real names after longer ones, each its own bit */
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load(&pol, "a cap_syslog\nb cap_sys_admin\nc cap_net_raw\nd cap_net_admin\n"
			      "e cap_net_raw,cap_net_admin\nf cap_setuid\ng cap_setgid\n"), CD_POLICY_OK);
	static const int want[] = { CAP_SYSLOG, CAP_SYS_ADMIN, CAP_NET_RAW, CAP_NET_ADMIN, -1,
				    CAP_SETUID, CAP_SETGID };
	assert_int_equal(pol.nrules, 7);
	for (size_t i = 0; i < 7; i++)
		if (want[i] >= 0)
			assert_true(pol.rules[i].caps == BIT(want[i]));
	assert_true(pol.rules[4].caps == (BIT(CAP_NET_RAW) | BIT(CAP_NET_ADMIN)));
	cd_policy_free(&pol);
	/* a drop-in read after the main file gets no remembered name either */
	char *dir = dropin_dir("memo.d");
	write_in(dir, "10-short.conf", "bob cap_sys\n", 0644);
	assert_int_equal(load_with(&pol, "alice cap_syslog\n", dir, 0), CD_POLICY_SYNTAX);
	assert_int_equal(pol.nrules, 0);
	if (strstr(logged(), "/memo.d/10-short.conf:1: unknown capability: 'cap_sys'") == NULL)
		fail_msg("log:\n%s", logged());
	cd_policy_free(&pol);
	free(dir);
}

/* A name whose first byte is written as an escape is judged by that byte: an escaped '@' first
 * would read back as a group, an escaped '-' first as an option; both refused as bare ones are. */
static void test_escaped_first_byte_judged(void **state)
{
	(void)state;
	expect_rejected("\\100staff cap_kill\n", 1, "bad subject");
	expect_rejected("\\055x cap_kill\n", 1, "bad subject");
	expect_rejected("\\100 cap_kill\n", 1, "bad subject");
}

/* cd_name_form's contract: @out of 4 * max + 4 bytes holds the form of any name of at most
 * @max bytes whole, escapes and all (no "..." cut when every byte is escaped). */
static void test_name_form_fits_its_contract(void **state)
{
	(void)state;
	static const char *const names[] = { " ", "  ", "a b", "\x01\x02\x03" };
	static const char *const forms[] = { "\\040", "\\040\\040", "a\\040b",
					     "\\001\\002\\003" };
	for (size_t i = 0; i < 4; i++) {
		size_t max = strlen(names[i]);
		char out[4 * 3 + 4];
		cd_name_form(out, 4 * max + 4, names[i], max);
		assert_string_equal(out, forms[i]);
	}
}

/* A name repeated on the next line or in the same list is read from the memo; cap_bpf, seven
 * bytes, is the one name too short for memo_at's 8-byte compares and takes parse_cap_token's
 * own memo path: each occurrence is cap_bpf's bit (39), never a neighbour's (40 is
 * cap_checkpoint_restore). */
static void test_repeated_short_cap_name(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "a cap_bpf\nb cap_bpf\nc CAP_BPF, cap_bpf\nd cap_bpf,cap_kill\n"
			      "e cap_kill,cap_bpf\n"), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 5);
	for (size_t i = 0; i < 3; i++)
		assert_true(pol.rules[i].caps == BIT(CAP_BPF));
	assert_true(pol.rules[3].caps == (BIT(CAP_BPF) | BIT(CAP_KILL)));
	assert_true(pol.rules[4].caps == (BIT(CAP_BPF) | BIT(CAP_KILL)));
	cd_policy_free(&pol);
}

/* A rule line, then lines that hold no name to repeat it for (empty, blanks, a comment, a CR)
 * as the text's last: read as nothing, the scan for a repeated line's name staying inside
 * the line (the ASan build stops on a read past the text and its final NUL). */
static void test_rule_then_nameless_last_lines(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"alice cap_kill\n\n", "alice cap_kill\n   \n", "alice cap_kill\n\t\n\n",
		"alice cap_kill\n# the end\n", "alice cap_kill\n\r\n", "alice cap_kill\n ",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct cd_policy pol;
		struct cd_load_opts o = { .owner = getuid() };
		setup(NULL);
		if (cd_policy_parse(&pol, "t", texts[i], strlen(texts[i]), &o, &test_log) != CD_POLICY_OK ||
		    pol.nrules != 1 || pol.rules[0].caps != BIT(CAP_KILL))
			fail_msg("text %zu: status %d, %zu rules\n%s", i, pol.status, pol.nrules, logged());
		cd_policy_free(&pol);
	}
}

/* '$' may end a name (Samba's machine accounts): alone it is no name, user or group, bare or
 * escaped. */
static void test_dollar_alone_is_no_subject(void **state)
{
	(void)state;
	expect_rejected("$ cap_chown\n", 1, "bad subject (a user name, @group or *): '$'");
	expect_rejected("@$ cap_chown\n", 1, "bad subject (a user name, @group or *): '@$'");
	expect_rejected("alice cap_chown\n$ cap_chown\n", 2, "bad subject");
	expect_rejected("\\044 cap_chown\n", 1, "bad subject");
	expect_rejected("$\tcap_chown # a comment\n", 1, "bad subject");
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load(&pol, "a$ cap_chown\n"), CD_POLICY_OK);
	assert_string_equal(pol.rules[0].name, "a$");
	cd_policy_free(&pol);
}

/* A '$' inside a name is written \044 (it may stand bare only last) and every message and
 * output shows it so; a final '$' stands as it is. */
static void test_dollar_inside_name_shown_escaped(void **state)
{
	(void)state;
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load(&pol, "a\\044b cap_chown\n@x\\044y$ cap_kill\nhost$ cap_kill\n"), CD_POLICY_OK);
	assert_string_equal(pol.rules[0].name, "a$b");
	assert_string_equal(pol.rules[1].name, "x$y$");
	char form[64];
	cd_name_form(form, sizeof(form), pol.rules[0].name, 60);
	assert_string_equal(form, "a\\044b");
	cd_name_form(form, sizeof(form), pol.rules[1].name, 60);
	assert_string_equal(form, "x\\044y$");
	cd_name_form(form, sizeof(form), pol.rules[2].name, 60);
	assert_string_equal(form, "host$");
	cd_name_form(form, sizeof(form), "$$", 60);
	assert_string_equal(form, "\\044$");
	cd_policy_free(&pol);
	/* bare inside a name it is a glued subject, not a name byte */
	expect_rejected("a$b cap_chown\n", 1, "bad subject");
}

/* Group names are case-sensitive (capdelegate.conf(5)): @NETOPS is not netops. */
static void test_group_names_case_sensitive(void **state)
{
	(void)state;
	struct cd_policy pol;
	const char *netops[] = { "netops", NULL };
	const char *upper[] = { "NETOPS", NULL };
	enum cd_subject_kind via;
	assert_int_equal(load(&pol, "@NETOPS cap_net_raw\n@Wheel cap_kill\n"), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "erin", netops, &via, NULL) == 0);
	assert_int_equal(via, CD_SUBJECT_NONE);
	assert_true(resolve_for(&pol, "erin", upper, &via, NULL) == BIT(CAP_NET_RAW));
	const char *wheel[] = { "wheel", "WHEEL", NULL };
	assert_true(resolve_for(&pol, "erin", wheel, NULL, NULL) == 0);
	cd_policy_free(&pol);
}

/* \400 to \777 are three octal digits but name no byte (capdelegate.conf(5)): no escape, the
 * backslash is a plain one (a winbind name's), never wrapped to \000-\077, and every output
 * shows it as \134 so that it reads back the same. A backslash before fewer than three octal
 * digits is itself too; \377 is the last byte. */
static void test_escape_above_377_plain_backslash(void **state)
{
	(void)state;
	struct cd_policy pol;
	setup(NULL);
	assert_int_equal(load(&pol, "CORP\\400 cap_kill\nCORP\\477 cap_kill\na\\477b cap_kill\n"
			      "@grp\\777x cap_kill\nCORP\\400123 cap_kill\na\\377b cap_kill\n"
			      "CORP\\48x cap_kill\nCORP\\47 cap_kill\nCORP\\134400 cap_kill\n"), CD_POLICY_OK);
	static const char *const names[] = { "CORP\\400", "CORP\\477", "a\\477b", "grp\\777x",
					     "CORP\\400123", "a\xff" "b", "CORP\\48x", "CORP\\47",
					     "CORP\\400" };
	static const char *const forms[] = { "CORP\\134400", "CORP\\134477", "a\\134477b",
					     "grp\\134777x", "CORP\\134400123", "a\\377b", "CORP\\48x",
					     "CORP\\47", "CORP\\134400" };
	assert_int_equal(pol.nrules, 9);
	for (size_t i = 0; i < 9; i++) {
		assert_string_equal(pol.rules[i].name, names[i]);
		char form[64];
		cd_name_form(form, sizeof(form), pol.rules[i].name, 60);
		assert_string_equal(form, forms[i]);
	}
	assert_int_equal(pol.nwarnings, 0);	/* no byte, no doubt: nothing to warn about */
	cd_policy_free(&pol);
	/* a name byte below '0' ('-', '.') or above '7' ('8', 'a') where an octal digit would be:
	 * no escape, in each place */
	setup(NULL);
	assert_int_equal(load(&pol, "a\\1.7b cap_kill\nc\\-17 cap_kill\nd\\17. cap_kill\n"
			      "e\\187 cap_kill\nf\\1a7 cap_kill\ng\\178 cap_kill\n"), CD_POLICY_OK);
	static const char *const plain[] = { "a\\1.7b", "c\\-17", "d\\17.", "e\\187", "f\\1a7",
					     "g\\178" };
	assert_int_equal(pol.nrules, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(pol.rules[i].name, plain[i]);
	cd_policy_free(&pol);
	/* \400 is not \000 (refused), \477 not \077 ('?') */
	setup(NULL);
	assert_int_equal(load(&pol, "x\\400 cap_kill\n"), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "x", NULL, NULL, NULL) == 0);
	assert_true(resolve_for(&pol, "x\\400", NULL, NULL, NULL) == BIT(CAP_KILL));
	cd_policy_free(&pol);
	setup(NULL);
	assert_int_equal(load(&pol, "x\\477 cap_kill\n"), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "x?", NULL, NULL, NULL) == 0);
	cd_policy_free(&pol);
}

/* CORP\100234 is CORP@234 (\100 is '@'). A winbind name could have meant
 * such an escape literally, so the line is read as written and a warning (LOG_WARNING, FILE:LINE)
 * says how to write the literal name; escapes nobody means literally are not warned about. */
static void test_escape_winbind_could_mean_literally(void **state)
{
	(void)state;
	static const struct { const char *text, *name, *warning; } cases[] = {
		{ "CORP\\100234 cap_kill\n", "CORP@234", "policy:1: user 'CORP@234' is read with \\100 "
		  "as an octal escape; if the winbind name DOMAIN\\user was meant, write its backslash "
		  "as \\134: 'CORP\\134100234'" },
		{ "@CORP\\100234 cap_kill\n", "CORP@234", "policy:1: group '@CORP@234' is read with "
		  "\\100 as an octal escape; if the winbind name DOMAIN\\user was meant, write its "
		  "backslash as \\134: '@CORP\\134100234'" },
		{ "CORP\\101lice cap_kill\n", "CORPAlice", "write its backslash as \\134: 'CORP\\134101lice'" },
		{ "CORP\\060007 cap_kill\n", "CORP0007", "'CORP\\134060007'" },
		{ "CORP\\040123 cap_kill\n", "CORP 123", "user 'CORP\\040123' is read with \\040 as an "
		  "octal escape; if the winbind name DOMAIN\\user was meant, write its backslash as \\134: "
		  "'CORP\\134040123'" },
		{ "x\\137y\\100z cap_kill\n", "x_y@z", "'x\\134137y\\134100z'" },
	};
	struct cd_policy pol;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(NULL);
		assert_int_equal(load(&pol, cases[i].text), CD_POLICY_OK);
		assert_int_equal(pol.nrules, 1);
		assert_string_equal(pol.rules[0].name, cases[i].name);
		assert_int_equal(pol.nwarnings, 1);
		if (strstr(logged(), cases[i].warning) == NULL)
			fail_msg("%s: expected '%s' in log:\n%s", cases[i].text, cases[i].warning, logged());
		cd_policy_free(&pol);
	}
	/* the literal forms, and escapes nobody writes for a byte that stands bare: no warning */
	setup(NULL);
	assert_int_equal(load(&pol, "CORP\\134100234 cap_kill\n@linux\\040admins@corp.example.com cap_kill\n"
			      "odd\\043name\\134040 cap_kill\nlinux\\040admins\\0402 cap_kill\n"
			      "CORP\\alice cap_kill\nCORP\\040admins cap_kill\n\\101b cap_kill\n"), CD_POLICY_OK);
	assert_string_equal(pol.rules[0].name, "CORP\\100234");
	assert_int_equal(pol.nwarnings, 0);
	assert_string_equal(logged(), "");
	cd_policy_free(&pol);
	/* a line rejected for another reason is not warned about */
	setup(NULL);
	assert_int_equal(load(&pol, "CORP\\100234 cap_kil\n"), CD_POLICY_SYNTAX);
	assert_int_equal(pol.nwarnings, 0);
	assert_null(strstr(logged(), "winbind"));
	cd_policy_free(&pol);
	/* a hostile policy does not flood the log: ten, then one line */
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	assert_non_null(f);
	for (int i = 0; i < 30; i++)
		fprintf(f, "CORP\\100%03d cap_kill\n", i);
	fclose(f);
	setup(NULL);
	assert_int_equal(load(&pol, text), CD_POLICY_OK);
	assert_int_equal(pol.nwarnings, 30);
	assert_int_equal(nmessages, 11);
	assert_non_null(strstr(logged(), "policy:11: more names read with such octal escapes: not shown"));
	cd_policy_free(&pol);
	free(text);
}

/* cd_log.h: a name or path is shown "at most @max bytes ('...' marks a cut)" in @outsize
 * bytes; an output of no room is left alone. cd_cap_name: NULL for a number that is no
 * capability. cd_parse_caps: an empty field is a missing one. A short name (cap_bpf, 7 bytes)
 * repeated on later lines is the same capability each time. A name with a final '$' is at
 * most CD_MAX_NAME_LEN bytes, the '$' counted. A user's groups are looked up once. */
static void test_cuts_bounds_and_short_names(void **state)
{
	(void)state;
	char form[64];
	cd_name_form(form, sizeof(form), "abcdefghij", 4);
	assert_string_equal(form, "abcd...");
	cd_path_form(form, 12, "/abcdefghijkl", 100);
	assert_string_equal(form, "/abcdefg...");
	cd_name_form(form, 3, "abc", 100);	/* no room for a cut's "..." either */
	assert_string_equal(form, "");
	cd_name_form(form, 4, "abcdef", 100);	/* room for the "..." alone */
	assert_string_equal(form, "...");
	memset(form, 'x', sizeof(form));
	cd_name_form(form, 0, "abc", 100);
	cd_path_form(form, 0, "/abc", 100);
	cd_quote(form, 0, "abc", 3, 100);
	assert_int_equal(form[0], 'x');
	assert_null(cd_cap_name(-1));
	assert_null(cd_cap_name(64));
	assert_string_equal(cd_cap_name(CAP_KILL), "cap_kill");
	cd_capmask m = 1;
	const char *why = NULL;
	assert_int_equal(cd_parse_caps("", 0, &m, &why), -1);
	assert_string_equal(why, "missing capabilities field");
	assert_int_equal(cd_parse_caps("  # x", 5, &m, &why), -1);
	assert_string_equal(why, "missing capabilities field");
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice cap_bpf\nbob cap_bpf\ncarol cap_kill, cap_bpf, cap_bpf\n"), CD_POLICY_OK);
	assert_true(resolve_for(&pol, "alice", NULL, NULL, NULL) == BIT(CAP_BPF));
	assert_true(resolve_for(&pol, "bob", NULL, NULL, NULL) == BIT(CAP_BPF));
	assert_true(resolve_for(&pol, "carol", NULL, NULL, NULL) == (BIT(CAP_BPF) | BIT(CAP_KILL)));
	cd_policy_free(&pol);
	/* a final '$' counts in the name's limit (CD_MAX_NAME_LEN bytes): one past it is no name */
	char line[CD_MAX_NAME_LEN + 32];
	memset(line, 'a', CD_MAX_NAME_LEN - 1);
	strcpy(line + CD_MAX_NAME_LEN - 1, "$ cap_kill\n");
	assert_int_equal(load(&pol, line), CD_POLICY_OK);
	assert_int_equal(pol.nrules, 1);
	assert_int_equal(strlen(pol.rules[0].name), CD_MAX_NAME_LEN);
	cd_policy_free(&pol);
	memset(line, 'a', CD_MAX_NAME_LEN);
	strcpy(line + CD_MAX_NAME_LEN, "$ cap_kill\n");
	expect_rejected(line, 1, "bad subject (a user name, @group or *)");
	/* the same, every byte written as an escape (\141 is 'a') */
	char escaped[4 * CD_MAX_NAME_LEN + 32];
	for (int i = 0; i < CD_MAX_NAME_LEN; i++)
		memcpy(escaped + 4 * i, "\\141", 4);
	strcpy(escaped + 4 * CD_MAX_NAME_LEN, "$ cap_kill\n");
	expect_rejected(escaped, 1, "bad subject (a user name, @group or *)");
	/* groups already loaded (cd_policy.h: groups_loaded) are not looked up again */
	const char *groups[] = { "g1", NULL };
	struct cd_user u = make_user("no-such-user-anywhere", groups);
	assert_int_equal(cd_user_load_groups(&u, NULL), 0);
	assert_int_equal(u.ngroups, 1);
	assert_string_equal(u.groups[0], "g1");
}

/* ---- windows (capdelegate.conf(5), WINDOWS) ----------------------------------------------- */

/* Seconds since the epoch of a UTC time, through the parser (tests below check it by values
 * computed by hand). */
static int64_t utc(const char *text)
{
	int64_t t;
	const char *why;
	if (cd_time_parse(text, strlen(text), &t, &why) < 0)
		fail_msg("'%s' refused: %s", text, why);
	return t;
}

static void test_time_values(void **state)
{
	(void)state;
	char buf[32];
	assert_true(utc("1970-01-01T00:00Z") == 0);
	assert_true(utc("2000-03-01T00:00Z") == 951868800);
	assert_true(utc("2024-02-29T12:34:56Z") == 1709210096);	/* a leap day */
	assert_true(utc("2038-01-19T03:14:07Z") == 2147483647);	/* 32-bit time_t's last second */
	assert_true(utc("2038-01-19T03:14:08Z") == 2147483648LL);	/* and past it */
	assert_true(utc("2106-02-07T06:28:16Z") == 4294967296LL);	/* past 32 unsigned bits */
	assert_true(utc("9999-12-31T23:59:59Z") == 253402300799LL);
	assert_string_equal(cd_time_format(utc("2100-02-28T23:59:59Z") + 1, buf, sizeof(buf)),
			    "2100-03-01T00:00Z");	/* 2100 is no leap year */
	assert_string_equal(cd_time_format(2147483648LL, buf, sizeof(buf)), "2038-01-19T03:14:08Z");
	assert_string_equal(cd_time_format(0, buf, sizeof(buf)), "1970-01-01T00:00Z");
	/* every second of a leap year's February and March prints back as it was read */
	for (int64_t t = utc("2028-02-01T00:00Z"); t < utc("2028-04-01T00:00Z"); t += 3607)
		assert_true(utc(cd_time_format(t, buf, sizeof(buf))) == t);
}

/* The Gregorian calendar, month by month: each month's last day is a date and the day after
 * it is not, in common years, in years divisible by 4, in centuries (not leap) and in years
 * divisible by 400 (leap: 2000 and 2400 have a February 29, 2100 and 2394 do not). */
static void test_time_month_lengths(void **state)
{
	(void)state;
	static const int common[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	static const struct { int year, leap; } years[] = {
		{ 2026, 0 }, { 2028, 1 }, { 2000, 1 }, { 2100, 0 }, { 2394, 0 }, { 2400, 1 },
	};
	for (size_t y = 0; y < sizeof(years) / sizeof(years[0]); y++) {
		for (int m = 1; m <= 12; m++) {
			int last = common[m - 1] + (m == 2 && years[y].leap);
			char text[32];
			int64_t t;
			const char *why = NULL;
			snprintf(text, sizeof(text), "%04d-%02d-%02dT00:00Z", years[y].year, m, last);
			if (cd_time_parse(text, strlen(text), &t, &why) != 0)
				fail_msg("'%s' refused: %s", text, why ? why : "?");
			char back[32];
			assert_string_equal(cd_time_format(t, back, sizeof(back)), text);
			snprintf(text, sizeof(text), "%04d-%02d-%02dT00:00Z", years[y].year, m, last + 1);
			if (cd_time_parse(text, strlen(text), &t, &why) != -1)
				fail_msg("'%s' accepted", text);
		}
	}
	/* 2000-02-29 is the day after 02-28 and the day before 03-01 */
	assert_true(utc("2000-02-29T00:00Z") == 951782400);
	assert_true(utc("2000-03-01T00:00Z") - utc("2000-02-29T00:00Z") == 86400);
}

static void test_time_malformed(void **state)
{
	(void)state;
	static const struct { const char *text, *why; } bad[] = {
		{ "2026-12-14", "a date alone is no time" },
		{ "2026-12-14T18:00", "a time without its zone" },
		{ "2026-12-14T18:00:00", "a time without its zone" },
		{ "2026-12-14T18:00+00:00", "times are UTC and written with Z" },
		{ "2026-12-14T18:00-05:00", "times are UTC and written with Z" },
		{ "2026-12-14T18:00z", "times are UTC and written with Z" },
		{ "2026-02-29T00:00Z", "no such date" },
		{ "2100-02-29T00:00Z", "no such date" },
		{ "2026-04-31T00:00Z", "no such date" },
		{ "2026-13-01T00:00Z", "no such date" },
		{ "2026-00-10T00:00Z", "no such date" },
		{ "2026-12-00T00:00Z", "no such date" },
		{ "2026-12-14T24:00Z", "no such time of day" },
		{ "2026-12-14T23:60Z", "no such time of day" },
		{ "2016-12-31T23:59:60Z", "no such time of day" },
		{ "1969-12-31T23:59:59Z", "no time before 1970" },
		{ "26-12-14T18:00Z", "a time is written" },
		{ "2026-12-14 18:00Z", "a time is written" },
		{ "2026-12-14T18Z", "a time is written" },
		{ "2026-12-14T18:00ZZ", "a time is written" },
		{ "2026-12-14T18:00:0Z", "a time is written" },
		{ "+2026-12-14T18:00Z", "a time is written" },
		{ "", "a time is written" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int64_t t = 42;
		const char *why = NULL;
		assert_int_equal(cd_time_parse(bad[k].text, strlen(bad[k].text), &t, &why), -1);
		if (why == NULL || strstr(why, bad[k].why) == NULL)
			fail_msg("'%s': expected '%s', got '%s'", bad[k].text, bad[k].why, why);
	}
}

static void test_window_lines(void **state)
{
	(void)state;
	struct cd_policy pol;
	assert_int_equal(load(&pol, "alice cap_net_raw until 2026-12-14T18:00Z\n"
			 "bob cap_net_raw , cap_syslog from 2026-12-07T22:00Z until 2026-12-08T06:00:30Z # night\n"
			 "@ops none\tfrom 2027-01-01T00:00Z\n"
			 "* cap_net_raw until 2026-12-14T18:00Z from 2026-12-01T00:00Z\n"
			 "carol cap_net_raw # until 2026-12-14 is a comment\n"),
			 CD_POLICY_OK);
	assert_int_equal(pol.nrules, 5);
	assert_int_equal(nmessages, 0);
	assert_true(!pol.rules[0].has_from && pol.rules[0].has_until &&
		    pol.rules[0].until == utc("2026-12-14T18:00Z"));
	assert_true(pol.rules[1].caps == (BIT(CAP_NET_RAW) | BIT(CAP_SYSLOG)));
	assert_true(pol.rules[1].has_from && pol.rules[1].from == utc("2026-12-07T22:00Z"));
	assert_true(pol.rules[1].until == utc("2026-12-08T06:00:30Z"));
	assert_true(pol.rules[2].caps == 0 && pol.rules[2].has_from && !pol.rules[2].has_until);
	assert_true(pol.rules[3].has_from && pol.rules[3].has_until);
	assert_true(!pol.rules[4].has_from && !pol.rules[4].has_until);
	cd_policy_free(&pol);
}

static void test_window_malformed_rejects(void **state)
{
	(void)state;
	expect_rejected("alice cap_net_raw until 2026-12-14\n", 1, "a date alone is no time");
	expect_rejected("ok cap_net_raw\nalice cap_net_raw until 2026-12-14T18:00\n", 2,
			"a time without its zone");
	expect_rejected("alice cap_net_raw from 2026-02-29T00:00Z\n", 1, "no such date");
	expect_rejected("alice cap_net_raw from 2026-12-14T18:00Z until 2026-12-14T18:00Z\n", 1,
			"the window is empty");
	expect_rejected("alice cap_net_raw until 2026-12-13T18:00Z from 2026-12-14T18:00Z\n", 1,
			"the window ends before it starts");
	expect_rejected("alice cap_net_raw until 2026-12-14T18:00Z until 2026-12-15T18:00Z\n", 1,
			"a window has one start ('from') and one end ('until')");
	expect_rejected("alice cap_net_raw until\n", 1, "a time must follow");
	expect_rejected("alice cap_net_raw until # 2026-12-14T18:00Z\n", 1, "a time must follow");
	expect_rejected("alice from 2026-12-14T18:00Z\n", 1, "missing capabilities field");
	expect_rejected("alice cap_net_raw until 2026-12-14T18:00Z junk\n", 1,
			"after the capabilities, only a window");
	expect_rejected("alice cap_net_raw, until 2026-12-14T18:00Z\n", 1, "empty capability name");
	expect_rejected("alice cap_net_raw until 2026-12-14T18:00Z\x1b[2K\n", 1,
			"control character in line");
	expect_rejected("alice cap_net_raw until 2026-12-14T18:00Z # \x1b[2K\n", 1,
			"control character in line: '\\x1b'");
	/* in a word after the window: the one byte shown, as everywhere else */
	expect_rejected("alice cap_net_raw until 2026-12-14T18:00Z x\x1b[2K\n", 1,
			"control character in line: '\\x1b'");
	/* keywords are lower case: a capital one is text after the capabilities */
	expect_rejected("alice cap_net_raw UNTIL 2026-12-14T18:00Z\n", 1, "expected ','");
	/* a line in error gets its error alone: no warning about its name (which a line read in
	 * full would get: \101 read as an escape where a winbind DOMAIN\user may be meant) */
	expect_rejected("CORP\\101dam cap_kill until 2026-13-01T00:00Z\n", 1, "no such date");
	assert_null(strstr(logged(), "octal escape"));
	expect_rejected("CORP\\101dam cap_kill from 2026-12-14T18:00Z from 2026-12-15T18:00Z\n", 1,
			"a window has one start");
	assert_null(strstr(logged(), "octal escape"));
}

static cd_capmask grant_at(const char *text, int64_t now, const char *name, const char **groups)
{
	struct cd_policy pol;
	assert_int_equal(load(&pol, text), CD_POLICY_OK);
	assert_int_equal(cd_policy_at(&pol, now), 0);
	cd_capmask caps = resolve_for(&pol, name, groups, NULL, NULL);
	cd_policy_free(&pol);
	return caps;
}

static void test_window_edges(void **state)
{
	(void)state;
	const char *text = "alice cap_net_raw from 2026-12-07T22:00Z until 2026-12-08T06:00Z\n";
	int64_t from = utc("2026-12-07T22:00Z"), until = utc("2026-12-08T06:00Z");
	assert_true(grant_at(text, from - 1, "alice", NULL) == 0);
	assert_true(grant_at(text, from, "alice", NULL) == BIT(CAP_NET_RAW));	/* from: in force */
	assert_true(grant_at(text, from + 1, "alice", NULL) == BIT(CAP_NET_RAW));
	assert_true(grant_at(text, until - 1, "alice", NULL) == BIT(CAP_NET_RAW));
	assert_true(grant_at(text, until, "alice", NULL) == 0);	/* until: ended */
	assert_true(grant_at(text, until + 1, "alice", NULL) == 0);
	/* a leap day, and past 2038 */
	const char *leap = "alice cap_syslog from 2028-02-29T00:00Z until 2028-03-01T00:00Z\n";
	assert_true(grant_at(leap, utc("2028-02-28T23:59:59Z"), "alice", NULL) == 0);
	assert_true(grant_at(leap, utc("2028-02-29T23:59:59Z"), "alice", NULL) == BIT(CAP_SYSLOG));
	assert_true(grant_at(leap, utc("2028-03-01T00:00Z"), "alice", NULL) == 0);
	const char *late = "alice cap_syslog from 2038-01-19T03:14:08Z until 2106-02-07T06:28:17Z\n";
	assert_true(grant_at(late, 2147483647, "alice", NULL) == 0);
	assert_true(grant_at(late, 2147483648LL, "alice", NULL) == BIT(CAP_SYSLOG));
	assert_true(grant_at(late, 4294967296LL, "alice", NULL) == BIT(CAP_SYSLOG));
	assert_true(grant_at(late, 4294967297LL, "alice", NULL) == 0);
	/* a clock set back before the start */
	assert_true(grant_at(late, 0, "alice", NULL) == 0);
}

/* A line outside its window is as if it were not in the file: an ended user line lets the
 * user's group lines apply again, an ended narrowing group line lets "*" apply. */
static void test_window_precedence(void **state)
{
	(void)state;
	const char *text = "alice none until 2026-12-08T00:00Z\n"
			   "@ops cap_net_admin\n"
			   "@contractors none until 2026-12-08T00:00Z\n"
			   "* cap_net_raw\n";
	const char *ops[] = { "ops", NULL }, *contractors[] = { "contractors", NULL };
	int64_t before = utc("2026-12-07T23:59:59Z"), after = utc("2026-12-08T00:00Z");
	assert_true(grant_at(text, before, "alice", ops) == 0);
	assert_true(grant_at(text, after, "alice", ops) == BIT(CAP_NET_ADMIN));
	assert_true(grant_at(text, before, "erin", contractors) == 0);
	assert_true(grant_at(text, after, "erin", contractors) == BIT(CAP_NET_RAW));

	struct cd_policy pol;
	assert_int_equal(load(&pol, text), CD_POLICY_OK);
	assert_true(cd_policy_group_narrows(&pol, "contractors") == BIT(CAP_NET_RAW));
	assert_true(cd_policy_next_edge(&pol, before) == after);
	assert_int_equal(cd_policy_at(&pol, after), 0);
	assert_int_equal(pol.nrules, 2);
	assert_int_equal(pol.noutside, 2);
	assert_int_equal(pol.outside[0].line, 1);	/* file order kept */
	assert_int_equal(pol.outside[1].line, 3);
	assert_true(cd_policy_next_edge(&pol, after) == INT64_MAX);
	struct cd_user u = make_user("alice", ops);
	assert_int_equal(cd_policy_names_user(&pol, &u), 0);
	cd_policy_free(&pol);
}

int main(void)
{
	if (make_test_dir(tmpdir, sizeof(tmpdir), "cd-unit") < 0)
		return 99;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_example_policy, setup),
		cmocka_unit_test_setup(test_comments_and_blank_lines, setup),
		cmocka_unit_test_setup(test_whitespace_variants, setup),
		cmocka_unit_test_setup(test_case_insensitive_names, setup),
		cmocka_unit_test_setup(test_parse_caps_control_byte, setup),
		cmocka_unit_test_setup(test_capabilities_above_31, setup),
		cmocka_unit_test_setup(test_line_over_64k, setup),
		cmocka_unit_test_setup(test_subjects, setup),
		cmocka_unit_test_setup(test_directory_names, setup),
		cmocka_unit_test_setup(test_error_unknown_capability, setup),
		cmocka_unit_test_setup(test_error_name_with_suffix, setup),
		cmocka_unit_test_setup(test_error_control_in_comment, setup),
		cmocka_unit_test_setup(test_error_missing_field, setup),
		cmocka_unit_test_setup(test_error_bad_subject, setup),
		cmocka_unit_test_setup(test_error_bad_subject_shown_as_written, setup),
		cmocka_unit_test_setup(test_error_nul_byte, setup),
		cmocka_unit_test_setup(test_error_all_and_numbers, setup),
		cmocka_unit_test_setup(test_error_list_shape, setup),
		cmocka_unit_test_setup(test_error_control_characters, setup),
		cmocka_unit_test_setup(test_error_hostile_token_is_quoted, setup),
		cmocka_unit_test_setup(test_error_long_escaped_name_after_blanks, setup),
		cmocka_unit_test_setup(test_error_reports_every_line_up_to_limit, setup),
		cmocka_unit_test_setup(test_error_anywhere_rejects_everything, setup),
		cmocka_unit_test_setup(test_unsafe_files, setup),
		cmocka_unit_test_setup(test_unsafe_symlink_fifo_and_size, setup),
		cmocka_unit_test_setup(test_unsafe_directories_and_pseudo_fs, setup),
		cmocka_unit_test_setup(test_dropins, setup),
		cmocka_unit_test_setup(test_hidden_errors_counted_per_file, setup),
		cmocka_unit_test_setup(test_missing_file, setup),
		cmocka_unit_test_setup(test_resolve_demo, setup),
		cmocka_unit_test_setup(test_resolve_unions_and_default, setup),
		cmocka_unit_test_setup(test_keep_filter_still_validates, setup),
		cmocka_unit_test_setup(test_capmask_text_and_names, setup),
		cmocka_unit_test_setup(test_name_length_limit, setup),
		cmocka_unit_test_setup(test_repeated_caps_lines, setup),
		cmocka_unit_test_setup(test_hash_is_not_a_name_byte, setup),
		cmocka_unit_test_setup(test_mutation_edges, setup),
		cmocka_unit_test_setup(test_size_judged_before_reading, setup),
		cmocka_unit_test_setup(test_directory_of_another_owner, setup),
		cmocka_unit_test_setup(test_user_line_whole_name, setup),
		cmocka_unit_test_setup(test_case_insensitive_none, setup),
		cmocka_unit_test_setup(test_path_with_space_escaped, setup),
		cmocka_unit_test_setup(test_shorter_cap_after_longer, setup),
		cmocka_unit_test_setup(test_setcap_text_after_the_same_name, setup),
		cmocka_unit_test_setup(test_repeated_short_cap_name, setup),
		cmocka_unit_test_setup(test_rule_then_nameless_last_lines, setup),
		cmocka_unit_test(test_name_form_fits_its_contract),
		cmocka_unit_test_setup(test_escaped_first_byte_judged, setup),
		cmocka_unit_test_setup(test_dollar_alone_is_no_subject, setup),
		cmocka_unit_test_setup(test_dollar_inside_name_shown_escaped, setup),
		cmocka_unit_test_setup(test_group_names_case_sensitive, setup),
		cmocka_unit_test_setup(test_escape_above_377_plain_backslash, setup),
		cmocka_unit_test_setup(test_escape_winbind_could_mean_literally, setup),
		cmocka_unit_test_setup(test_cuts_bounds_and_short_names, setup),
		cmocka_unit_test(test_time_values),
		cmocka_unit_test(test_time_month_lengths),
		cmocka_unit_test(test_time_malformed),
		cmocka_unit_test_setup(test_window_lines, setup),
		cmocka_unit_test_setup(test_window_malformed_rejects, setup),
		cmocka_unit_test_setup(test_window_edges, setup),
		cmocka_unit_test_setup(test_window_precedence, setup),
	};
	int rc = cmocka_run_group_tests_name("policy", tests, NULL, NULL);
	char *cmd;
	if (asprintf(&cmd, "rm -rf '%s'", tmpdir) > 0 && system(cmd) != 0)
		rc = rc ? rc : 1;
	free(cmd);
	free(captured);
	return rc;
}
