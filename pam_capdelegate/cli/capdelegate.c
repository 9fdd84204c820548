/*
 * capdelegate.c - the capdelegate(8) command: check, explain and audit the delegation policy,
 * check and apply the declared file marks.
 * Only dispatch lives here; each subcommand is in its cli_*.c file and every policy decision
 * is made by the core the PAM module links (libcdcore), so the CLI says what login does.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "cli_out.h"

static const char usage[] =
	"usage: capdelegate COMMAND [OPTIONS] [ARGS]\n"
	"       capdelegate --version | -V | --help\n"
	"\n"
	"  check   [--config FILE] [--confdir DIR] [--tsv] [--staged FILE [--as PATH]]\n"
	"                                                 validate the policy (exit 0/1/2), or\n"
	"                                                 the policy with FILE installed at PATH\n"
	"  edit    [--config FILE] [--confdir DIR] [NAME]\n"
	"                                                 edit the policy or drop-in NAME.conf,\n"
	"                                                 checked before it is installed\n"
	"  explain USER [--config FILE] [--confdir DIR] [--userdb DIR]... [--tsv] [PATH...]\n"
	"                                                 what USER is granted and gains at exec\n"
	"  audit   [--config FILE] [--confdir DIR] [--marks FILE] [--json|--tsv] [--processes]\n"
	"          [--threads N] [--all-fs] [--userdb DIR]... [PATH...]\n"
	"                                                 capability files, who gains what, findings\n"
	"  marks check [--marks FILE] [--json]            declared file marks against the files\n"
	"  marks apply [--marks FILE] [--dry-run] [--quiet]\n"
	"                                                 set the declared marks, log each change\n"
	"  marks audit-rules [--marks FILE] [--arch LIST] audit rules recording runs of marked files\n"
	"  report  [--json|--tsv] FILE...                 a fleet's audit --json files in one view\n"
	"  usage   [--since DURATION] [--json|--tsv|--propose] [--input FILE...]\n"
	"                                                 the runs each grant made privileged,\n"
	"                                                 the grants unused, from the audit trail\n"
	"  decode  HEX                                    decode a raw security.capability value\n"
	"  import-pam-cap [FILE]                          translate pam_cap's capability.conf\n"
	"  help                                           this text\n"
	"\n"
	"Each command takes --help. Default policy: " CD_DEFAULT_CONFIG ". See capdelegate(8).\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} cmds[] = {
		{ "check", cli_check_main }, { "explain", cli_explain_main },
		{ "audit", cli_audit_main }, { "decode", cli_decode_main },
		{ "import-pam-cap", cli_import_main }, { "marks", cli_marks_main },
		{ "edit", cli_edit_main }, { "report", cli_report_main },
		{ "usage", cli_usage_main },
	};
	if (argc < 2) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	/* getopt would echo a bad option's bytes raw (escape sequences, bidi controls) to the
	 * terminal: the subcommands name it through cli_text_escape instead (cli_bad_option). */
	opterr = 0;
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		puts("capdelegate " PACKAGE_VERSION);
		return CLI_OK;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(usage, stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmd, cmds[i].name) == 0)
			return cmds[i].run(argc - 1, argv + 1);
	/* argv is text anyone may pass (a script, a crafted alias): escaped like every name. */
	fputs("capdelegate: unknown command '", stderr);
	cli_text_escape(stderr, cmd);
	fputs("'\n", stderr);
	fputs(usage, stderr);
	return CLI_ERROR;
}
