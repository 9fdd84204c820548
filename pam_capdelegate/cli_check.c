/*
 * cli_check.c - `capdelegate check`: would the module accept this policy, and is it wise?
 * Errors are the core's own FILE:LINE messages (the text the module logs); warnings are what
 * the module accepts but an administrator should look at twice.
 */
#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <string.h>

#include "cli_common.h"
#include "cli_out.h"

static const char usage[] =
	"usage: capdelegate check [--config FILE]\n"
	"\n"
	"Validate the policy (default " CD_DEFAULT_CONFIG ") exactly as pam_capdelegate reads it.\n"
	"Exit 0: clean. 1: warnings only (unknown users or groups, risky grants, directories\n"
	"above the policy others can change). 2: errors (the module would grant nothing).\n";

/* Capabilities that amount to root, or to rewriting what root trusts: delegating one of these
 * delegates (nearly) everything. See capabilities(7) and the upstream "capability to root" lists. */
static const char *const risky_caps[] = {
	"cap_sys_admin", "cap_setpcap", "cap_dac_override", "cap_dac_read_search",
	"cap_sys_module", "cap_sys_ptrace", "cap_sys_rawio", "cap_setuid", "cap_setgid",
	"cap_setfcap", "cap_bpf", "cap_chown", "cap_fowner", "cap_fsetid", "cap_mknod",
	"cap_mac_admin", "cap_mac_override", "cap_linux_immutable", "cap_sys_chroot",
	"cap_sys_boot", "cap_checkpoint_restore",
};

static cd_capmask risky_mask(void)
{
	cd_capmask m = 0;
	for (size_t i = 0; i < sizeof(risky_caps) / sizeof(risky_caps[0]); i++) {
		int cap = cd_cap_from_name(risky_caps[i], strlen(risky_caps[i]));
		if (cap >= 0)	/* an older libcap may not know cap_bpf: nothing to warn about */
			m |= (cd_capmask)1 << cap;
	}
	return m;
}

static void warn_rule(const struct cd_policy *pol, const struct cd_rule *r, const char *msg,
		      cd_capmask caps)
{
	fputs("capdelegate: warning: ", stderr);
	cli_text_escape(stderr, pol->path);
	fprintf(stderr, ":%zu: %s", r->line, msg);
	if (caps) {
		fputs(": ", stderr);
		cli_print_caps(stderr, caps);
	}
	fputc('\n', stderr);
}

static size_t check_rule(const struct cd_policy *pol, const struct cd_rule *r, cd_capmask risky)
{
	size_t warnings = 0;
	if (r->kind == CD_SUBJECT_USER && getpwnam(r->name) == NULL) {
		warn_rule(pol, r, "user unknown to NSS (the line never matches)", 0);
		warnings++;
	}
	if (r->kind == CD_SUBJECT_GROUP && getgrnam(r->name) == NULL) {
		warn_rule(pol, r, "group unknown to NSS (the line never matches)", 0);
		warnings++;
	}
	if (r->caps & risky) {
		warn_rule(pol, r, "grants capabilities that lead to full root", r->caps & risky);
		warnings++;
	}
	return warnings;
}

static int dir_warning(void *arg, const char *dir, const char *why)
{
	size_t *warnings = arg;
	fputs("capdelegate: warning: ", stderr);
	cli_text_escape(stderr, dir);
	fprintf(stderr, ": directory above the policy is %s: the policy can be replaced\n", why);
	(*warnings)++;
	return 0;
}

int cli_check_main(int argc, char **argv)
{
	const char *config = NULL;
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	int first = cli_parse_config_opt(argc, argv, usage, &config);
	if (first < 0)
		return CLI_ERROR;
	if (first < argc) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	struct cd_policy pol;
	enum cd_status st = cli_load_policy(&pol, config);
	size_t warnings = 0;
	cd_capmask risky = risky_mask();
	for (size_t i = 0; i < pol.nrules; i++)
		warnings += check_rule(&pol, &pol.rules[i], risky);
	if (st != CD_POLICY_MISSING)
		cli_unsafe_dirs(pol.path, dir_warning, &warnings);
	cli_text_escape(stdout, pol.path);
	if (st != CD_POLICY_OK)
		printf(": %s: the module grants nothing\n", cd_status_str(st));
	else
		printf(": ok, %zu rules, %zu warnings\n", pol.nrules, warnings);
	cd_policy_free(&pol);
	return st != CD_POLICY_OK ? CLI_ERROR : warnings ? CLI_WARN : CLI_OK;
}
