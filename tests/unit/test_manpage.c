/*
 * test_manpage.c - every example in capdelegate.conf(5) is parsed by the policy core and
 * resolved as the "test:" comment before it says. An example without such a comment fails.
 *
 * Directive: ".\" test: [reject LINE] USER[@GROUP+GROUP...]=CAPS|none ..."
 */
#include "config.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cd_policy.h"
#include "test_dir.h"

struct example {
	char *directive;
	char *text;
	size_t line;		/* where the .EX is in the man page */
};

static struct example examples[32];
static size_t nexamples;
static char test_dir[PATH_MAX];
static char policy_path[PATH_MAX + 32];

/* The roff escapes an example may use: \- for '-', \e for a backslash, \& for nothing. */
static void unescape_roff(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && (p[1] == '-' || p[1] == 'e' || p[1] == '&')) {
			if (p[1] != '&')
				*o++ = p[1] == 'e' ? '\\' : '-';
			p++;
			continue;
		}
		*o++ = *p;
	}
	*o = '\0';
}

static void read_examples(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "Bail out! cannot open %s\n", path);
		exit(1);
	}
	char *line = NULL, *directive = NULL;
	size_t alloc = 0, lineno = 0;
	ssize_t len;
	struct example *cur = NULL;
	FILE *body = NULL;
	size_t bodysize;

	while ((len = getline(&line, &alloc, f)) >= 0) {
		lineno++;
		if (cur != NULL) {
			if (strncmp(line, ".EE", 3) == 0) {
				fclose(body);
				unescape_roff(cur->text);
				cur = NULL;
			} else {
				fputs(line, body);
			}
		} else if (strncmp(line, ".\\\" test:", 9) == 0) {
			free(directive);
			directive = strdup(line + 9);
		} else if (strncmp(line, ".EX", 3) == 0 && nexamples < 32) {
			cur = &examples[nexamples++];
			cur->line = lineno;
			cur->directive = directive;	/* NULL: untested example, a failure */
			directive = NULL;
			body = open_memstream(&cur->text, &bodysize);
		}
	}
	free(line);
	free(directive);
	fclose(f);
}

static char logged[4096];

static void capture(void *arg, int prio, const char *msg)
{
	(void)arg;
	(void)prio;
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
}

static cd_capmask caps_from_text(const char *text)
{
	cd_capmask m;
	const char *why;
	if (strcmp(text, "none") == 0)
		return 0;
	/* The directive lists names without blanks, comma-separated: the core's own syntax. */
	if (cd_parse_caps(text, strlen(text), &m, &why) < 0)
		fail_msg("bad capability list in test directive: %s (%s)", text, why);
	return m;
}

/* "user@g1+g2=caps": resolve user (member of g1, g2) and compare. */
static void check_user(const struct cd_policy *pol, char *spec, size_t exline)
{
	char *eq = strchr(spec, '=');
	assert_non_null(eq);
	*eq = '\0';
	char *groups[8] = { NULL };
	size_t ngroups = 0;
	char *at = strchr(spec, '@');
	if (at != NULL) {
		*at = '\0';
		for (char *g = strtok(at + 1, "+"); g && ngroups < 8; g = strtok(NULL, "+"))
			groups[ngroups++] = g;
	}
	struct cd_user u = { .name = spec, .groups = groups, .ngroups = ngroups, .groups_loaded = 1 };
	struct cd_grant g;
	assert_int_equal(cd_resolve(pol, &u, &g), 0);
	cd_capmask want = caps_from_text(eq + 1);
	if (g.caps != want) {
		char *got = cd_capmask_to_text(g.caps);
		fail_msg("example at capdelegate.conf.5:%zu: %s gets %s, the page says %s", exline,
			 spec, got, eq + 1);
	}
	cd_grant_free(&g);
}

static void test_example(void **state)
{
	const struct example *ex = *state;
	if (ex->directive == NULL)
		fail_msg("example at capdelegate.conf.5:%zu has no '.\\\" test:' line", ex->line);
	FILE *f = fopen(policy_path, "w");
	fputs(ex->text, f);
	fclose(f);

	struct cd_log log = { .sink = capture };
	logged[0] = '\0';
	struct cd_load_opts o = { .owner = getuid() };
	struct cd_policy pol;
	cd_policy_load(&pol, policy_path, &o, &log);

	char *d = strdup(ex->directive), *save = NULL;
	size_t reject_line = 0;
	for (char *tok = strtok_r(d, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(tok, "reject") == 0) {
			reject_line = strtoul(strtok_r(NULL, " \t\n", &save), NULL, 10);
			if (pol.status != CD_POLICY_SYNTAX)
				fail_msg("example at capdelegate.conf.5:%zu: accepted, the page says rejected", ex->line);
			char where[sizeof(policy_path) + 32];
			snprintf(where, sizeof(where), "%s:%zu: ", policy_path, reject_line);
			if (strstr(logged, where) == NULL)
				fail_msg("example at capdelegate.conf.5:%zu: no error at line %zu:\n%s",
					 ex->line, reject_line, logged);
			continue;
		}
		if (strncmp(tok, "at=", 3) == 0) {	/* the clock from here on: a fresh policy judged at it */
			int64_t at;
			const char *why;
			if (cd_time_parse(tok + 3, strlen(tok + 3), &at, &why) < 0)
				fail_msg("bad time in test directive: %s (%s)", tok, why);
			cd_policy_free(&pol);
			cd_policy_load(&pol, policy_path, &o, &log);
			assert_int_equal(cd_policy_at(&pol, at), 0);
			continue;
		}
		check_user(&pol, tok, ex->line);
	}
	if (reject_line == 0 && pol.status != CD_POLICY_OK)
		fail_msg("example at capdelegate.conf.5:%zu: rejected (%s)", ex->line, cd_status_str(pol.status));
	free(d);
	cd_policy_free(&pol);
}

int main(void)
{
	const char *srcdir = getenv("top_srcdir");
	char *path;
	if (asprintf(&path, "%s/pam_capdelegate/man/capdelegate.conf.5", srcdir ? srcdir : ".") < 0)
		return 99;
	read_examples(path);
	free(path);
	if (make_test_dir(test_dir, sizeof(test_dir), "cd-manpage") < 0)
		return 99;
	snprintf(policy_path, sizeof(policy_path), "%s/policy.conf", test_dir);
	if (nexamples == 0) {
		fprintf(stderr, "Bail out! no examples found in capdelegate.conf.5\n");
		return 1;
	}
	struct CMUnitTest tests[32];
	char *names[32];
	for (size_t i = 0; i < nexamples; i++) {
		if (asprintf(&names[i], "capdelegate.conf.5 example at line %zu", examples[i].line) < 0)
			return 99;
		tests[i] = (struct CMUnitTest){ .name = names[i], .test_func = test_example,
						.initial_state = &examples[i] };
	}
	int rc = _cmocka_run_group_tests("manpage", tests, nexamples, NULL, NULL);
	unlink(policy_path);
	rmdir(test_dir);
	for (size_t i = 0; i < nexamples; i++) {
		free(names[i]);
		free(examples[i].text);
		free(examples[i].directive);
	}
	return rc;
}
