/*
 * cli_marks_audit.c - `capdelegate marks audit-rules`: the Linux audit rules that record each
 * execution of a declared file (capdelegate-files.conf(5)), for augenrules' rules.d.
 *
 * One exit rule per file and per syscall ABI the kernel runs:
 *   -a always,exit -F arch=b64 -S execve -S execveat -F path=FILE -F key=capdelegate
 * Not a watch (-w FILE -p x): a watch's rule has every syscall in its mask and is evaluated at
 * the exit of every syscall; this one only at execve's and execveat's. A path rule follows the
 * name, not the inode (the kernel watches the directory), so it survives a package replacing
 * the file. Auditing the exec is what makes the kernel emit BPRM_FCAPS (security/commoncap.c
 * attaches it to the syscall's audit context) when the run gained permitted bits from the file.
 */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli_common.h"
#include "cli_marks.h"

#define AUDIT_KEY "capdelegate"

static const char usage[] =
	"usage: capdelegate marks audit-rules [--marks FILE] [--arch b64|b32|b64,b32]\n"
	"\n"
	"Print the audit rules (auditctl(8) syntax, for /etc/audit/rules.d/) that record each\n"
	"execution of a file the marks file (default " CD_DEFAULT_MARKS ") declares, under the\n"
	"key " AUDIT_KEY ". Exit 0: a rule for every file. 1: some file has no rule (its path\n"
	"cannot be written in a rule, or its directory does not exist); said on stderr and in a\n"
	"comment. 2: the marks file is rejected (nothing printed).\n"
	"\n"
	"  --marks FILE   the marks file\n"
	"  --arch LIST    the syscall ABIs to record (default: the running kernel's, b64 and b32\n"
	"                 on a 64-bit kernel that runs 32-bit programs)\n";

/* The ABIs a kernel of this machine (uname -m) runs programs of: a 64-bit kernel of these
 * architectures also runs 32-bit programs (x86's ia32, arm64's aarch32, ...), and auditctl
 * calls their syscall table b32. A rule for an ABI the kernel was built without loads and never
 * matches. */
static const char *default_arches(void)
{
	static const char *const both[] = { "x86_64", "aarch64", "ppc64", "ppc64le", "s390x",
					     "mips64", "sparc64", NULL };
	struct utsname u;
	if (uname(&u) == 0) {
		for (size_t i = 0; both[i] != NULL; i++)
			if (strcmp(u.machine, both[i]) == 0)
				return "b64,b32";
	}
	return sizeof(long) == 8 ? "b64" : "b32";
}

static int parse_arches(const char *list, int *b64, int *b32)
{
	*b64 = *b32 = 0;
	if (strcmp(list, "b64") == 0 || strcmp(list, "b64,b32") == 0 || strcmp(list, "b32,b64") == 0)
		*b64 = 1;
	if (strcmp(list, "b32") == 0 || strcmp(list, "b64,b32") == 0 || strcmp(list, "b32,b64") == 0)
		*b32 = 1;
	return *b64 || *b32 ? 0 : -1;
}

/* auditctl reads a rules file by splitting lines at spaces (older versions know no escape) and
 * a -F field at its first operator ("!=", ">=", "<=", "&=" before "="), and refuses a path of
 * PATH_MAX bytes or more or whose last component is longer than NAME_MAX: a path is written only
 * when every byte is printable ASCII outside those, within those lengths. A path that is not
 * stays without a rule, said so: a rule that means another file, or a line auditctl refuses
 * (which stops the loading of every rules file after it), would be worse. */
static int writable(const char *path)
{
	if (strlen(path) >= PATH_MAX || strlen(strrchr(path, '/') + 1) > NAME_MAX)
		return 0;
	for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++)
		if (*p <= ' ' || *p >= 0x7f || strchr("\\\"'#!<>&", *p) != NULL)
			return 0;
	return 1;
}

/* One declared file: its rules, or a comment and a warning saying why it has none. 1 when it has
 * none, 0 when written, -1 when memory runs out. */
static int rules_for(const struct cd_mark *mk, int b64, int b32)
{
	struct cli_mark_disk d;
	if (cli_mark_locate(mk, &d) < 0) {
		cli_mark_disk_free(&d);
		return -1;
	}
	/* The kernel resolves a path rule's directory when the rule is loaded and refuses the rule
	 * (ENOENT) when there is none. */
	const char *why = !writable(mk->path) ? "its path cannot be written in an audit rule" :
			  !d.where.dir_known ? "its directory does not exist or is refused" : NULL;
	cli_mark_disk_free(&d);
	char *shown = cli_path_form(mk->path);
	if (shown == NULL)
		return -1;
	if (why != NULL) {
		printf("# %s (line %zu): no rule: %s\n", shown, mk->line, why);
		fprintf(stderr, "capdelegate: warning: %s: %s: its runs are not recorded\n", shown, why);
		free(shown);
		return 1;
	}
	printf("# %s (line %zu)\n", shown, mk->line);
	for (int i = 0; i < 2; i++)
		if (i == 0 ? b64 : b32)
			printf("-a always,exit -F arch=%s -S execve -S execveat -F path=%s -F key="
			       AUDIT_KEY "\n", i == 0 ? "b64" : "b32", mk->path);
	free(shown);
	return 0;
}

int cli_marks_audit_rules(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "marks", required_argument, NULL, 'm' }, { "arch", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *marks = NULL, *arches = NULL;
	int c, b64, b32;
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'm') {
			marks = optarg;
		} else if (c == 'a') {
			arches = optarg;
		} else {
			cli_bad_option(argv, usage);
			return CLI_ERROR;
		}
	}
	if (optind < argc || parse_arches(arches ? arches : default_arches(), &b64, &b32) < 0) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	struct cd_marks m;
	enum cd_status st = cli_load_marks(&m, marks);
	if (st != CD_POLICY_OK && !(st == CD_POLICY_MISSING && marks == NULL)) {
		if (st == CD_POLICY_MISSING)
			fprintf(stderr, "capdelegate: error: %s: no marks declared\n", m.shown);
		cd_marks_free(&m);
		return CLI_ERROR;
	}
	printf("## Generated by `capdelegate marks audit-rules` from %s: do not edit.\n"
	       "## Each execution of a declared file is recorded under the key " AUDIT_KEY ".\n",
	       m.shown);
	int rc = CLI_OK;
	for (size_t i = 0; st == CD_POLICY_OK && i < m.nmarks; i++) {
		int r = rules_for(&m.marks[i], b64, b32);
		if (r < 0) {
			fputs("capdelegate: marks: out of memory\n", stderr);
			rc = CLI_ERROR;
			break;
		}
		if (r > 0)
			rc = CLI_WARN;
	}
	cd_marks_free(&m);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fputs("capdelegate: error: cannot write the rules\n", stderr);
		rc = CLI_ERROR;
	}
	return rc;
}
