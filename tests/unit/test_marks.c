/*
 * test_marks.c - cd_marks_parse, the marks parser on text in memory (cd_marks.h: "the same
 * parse of @len bytes in memory, named @name in messages"), which the CLI never calls (it reads
 * files with cd_marks_load): only @len bytes are read, the size limit (opts->max_bytes, else
 * CD_MAX_MARKS_BYTES) rejects a larger text whole, the status is returned and kept.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/capability.h>

#include "cd_marks.h"
#include "test_log.h"

#define BIT(c) ((cd_capmask)1 << (c))

static void parses_marks(void **state)
{
	(void)state;
	static const char text[] = "# marks\n/usr/bin/ping cap_net_raw=i nosuid\n\n"
				   "/usr/sbin/x cap_net_admin,cap_kill=ei\n";
	struct cd_marks m;
	forget_logged();
	assert_int_equal(cd_marks_parse(&m, "mem", text, strlen(text), NULL, &test_log), CD_POLICY_OK);
	assert_int_equal(m.status, CD_POLICY_OK);
	assert_int_equal(m.nmarks, 2);
	assert_string_equal(m.marks[0].path, "/usr/bin/ping");
	assert_true(m.marks[0].inheritable == BIT(CAP_NET_RAW));
	assert_int_equal(m.marks[0].effective, 0);
	assert_int_equal(m.marks[0].flags, CD_MARK_NOSUID);
	assert_int_equal(m.marks[0].line, 2);
	assert_string_equal(m.marks[1].path, "/usr/sbin/x");
	assert_true(m.marks[1].inheritable == (BIT(CAP_NET_ADMIN) | BIT(CAP_KILL)));
	assert_int_equal(m.marks[1].effective, 1);
	assert_int_equal(m.marks[1].flags, 0);
	assert_int_equal(m.marks[1].line, 4);
	assert_int_equal(nmessages, 0);
	cd_marks_free(&m);
}

/* capdelegate-files.conf(5): only the components "." and ".." are refused; a name that merely
 * starts with dots (".d", "..d", ".x.") is a directory or file like any other. */
static void dot_names_are_names(void **state)
{
	(void)state;
	static const char text[] = "/opt/.d/tool cap_net_raw=i\n/opt/..d/tool cap_net_raw=i\n"
				   "/opt/x/.. cap_net_raw=i\n/opt/.x./..y cap_kill=i\n/opt/a./.b cap_kill=i\n";
	struct cd_marks m;
	forget_logged();
	assert_int_equal(cd_marks_parse(&m, "mem", text, strlen(text), NULL, &test_log), CD_POLICY_SYNTAX);
	assert_non_null(strstr(logged(), "mem:3: "));
	assert_non_null(strstr(logged(), "'.' or '..' in path"));
	assert_null(strstr(logged(), "mem:1: "));
	assert_null(strstr(logged(), "mem:2: "));
	assert_null(strstr(logged(), "mem:4: "));
	assert_null(strstr(logged(), "mem:5: "));
	cd_marks_free(&m);
	static const char good[] = "/opt/.d/tool cap_net_raw=i\n/opt/..d/tool cap_net_raw=i\n"
				   "/opt/.x./..y cap_kill=i\n/opt/a./.b cap_kill=i\n";
	forget_logged();
	assert_int_equal(cd_marks_parse(&m, "mem", good, strlen(good), NULL, &test_log), CD_POLICY_OK);
	assert_int_equal(m.nmarks, 4);
	assert_string_equal(m.marks[0].path, "/opt/.d/tool");
	assert_string_equal(m.marks[3].path, "/opt/a./.b");
	cd_marks_free(&m);
}

/* The bytes past @len are not the text: neither a mark nor an error. */
static void reads_len_bytes_only(void **state)
{
	(void)state;
	static const char text[] = "/a/b cap_net_raw=i\n/c/d cap_kill=i\nnot a mark\n";
	struct cd_marks m;
	forget_logged();
	size_t len = strlen("/a/b cap_net_raw=i\n/c/d cap_kil");
	/* the second line cut in its capability name, before its '=': an error */
	assert_int_equal(cd_marks_parse(&m, "cut", text, len, NULL, &test_log), CD_POLICY_SYNTAX);
	assert_int_equal(m.nmarks, 0);
	assert_non_null(strstr(logged(), "cut:2: no '=', '+' or '-' in capability text"));
	cd_marks_free(&m);
	forget_logged();
	len = strlen("/a/b cap_net_raw=i\n/c/d cap_kill=i");
	assert_int_equal(cd_marks_parse(&m, "cut", text, len, NULL, &test_log), CD_POLICY_OK);
	assert_int_equal(m.nmarks, 2);
	assert_string_equal(m.marks[1].path, "/c/d");
	assert_true(m.marks[1].inheritable == BIT(CAP_KILL));
	assert_int_equal(nmessages, 0);
	cd_marks_free(&m);
}

/* A text over the limit is rejected whole (CD_POLICY_UNSAFE, said, no mark); one at it is
 * read. */
static void size_limit(void **state)
{
	(void)state;
	static const char text[] = "/a/b cap_net_raw=i\n";	/* 19 bytes */
	struct cd_load_opts opts = { .max_bytes = 19 };
	struct cd_marks m;
	forget_logged();
	assert_int_equal(cd_marks_parse(&m, "big", text, 19, &opts, &test_log), CD_POLICY_OK);
	assert_int_equal(m.nmarks, 1);
	cd_marks_free(&m);
	opts.max_bytes = 18;
	assert_int_equal(cd_marks_parse(&m, "big", text, 19, &opts, &test_log), CD_POLICY_UNSAFE);
	assert_int_equal(m.status, CD_POLICY_UNSAFE);
	assert_int_equal(m.nmarks, 0);
	assert_null(m.marks);
	assert_string_equal(logged(), "big: larger than the size limit (18 bytes): marks file "
				      "rejected, no file changed\n");
	cd_marks_free(&m);
	/* no opts: CD_MAX_MARKS_BYTES, comments alone */
	size_t n = CD_MAX_MARKS_BYTES + 1;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, '#', n);
	big[n - 1] = '\n';
	forget_logged();
	assert_int_equal(cd_marks_parse(&m, "huge", big, n - 1, NULL, &test_log), CD_POLICY_OK);
	assert_int_equal(m.nmarks, 0);
	assert_int_equal(nmessages, 0);
	cd_marks_free(&m);
	assert_int_equal(cd_marks_parse(&m, "huge", big, n, NULL, &test_log), CD_POLICY_UNSAFE);
	assert_non_null(strstr(logged(), "huge: larger than the size limit (1048576 bytes)"));
	cd_marks_free(&m);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_marks),
		cmocka_unit_test(dot_names_are_names),
		cmocka_unit_test(reads_len_bytes_only),
		cmocka_unit_test(size_limit),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	forget_logged();
	return rc;
}
