/*
 * cli_usage_propose.c - usage --propose: the lines of today's policy to remove or reduce, each
 * with its evidence as comments, in the policy's own form for a person to apply with
 * `capdelegate edit`. A line is judged only when some user's last recorded grant names it
 * (rules=FILE:LINE): a capability of it that no such user's run used in the window is proposed
 * for removal. Nothing is ever proposed for a denied want, and nothing is changed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_usage.h"

/* Does the recorded list @rules ("FILE:LINE,FILE:LINE,...") name @r? */
static int names_rule(const char *rules, const struct cd_rule *r)
{
	char *item = NULL;
	int found = 0;
	if (asprintf(&item, "%s:%zu", r->file, r->line) < 0)
		return -1;
	size_t n = strlen(item);
	for (const char *p = rules; p != NULL && !found; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		found = strncmp(p, item, n) == 0 && (p[n] == '\0' || p[n] == ',');
	}
	free(item);
	return found;
}

/* The runs of @cap by @user in the window, and the last one. */
static uint64_t runs_of(const struct cu_results *res, const char *user, int cap, int64_t *last)
{
	uint64_t n = 0;
	for (size_t i = 0; i < res->nused; i++) {
		const struct cu_tally *t = res->used[i];
		if (t->cap == cap && strcmp(t->user, user) == 0) {
			n += t->runs;
			if (t->last > *last)
				*last = t->last;
		}
	}
	return n;
}

static void evidence(const struct cu_results *res, const struct cu_user *const *who, size_t nwho,
		     int cap, int used)
{
	char buf[16];
	for (size_t i = 0; i < nwho; i++) {
		int64_t last = 0;
		uint64_t n = runs_of(res, who[i]->name, cap, &last);
		if (used && n == 0)
			continue;
		printf("#   %s: ", cd_cap_label(cap, buf, sizeof(buf)));
		cli_print_name(stdout, who[i]->name);
		if (used) {
			printf(" used it: %llu runs, the last ", (unsigned long long)n);
			cli_usage_time(stdout, last);
		} else {
			printf(" held it at %llu sessions in the window (last grant ",
			       (unsigned long long)who[i]->sessions);
			cli_usage_time(stdout, who[i]->last_at);
			fputs("), no run of a marked file used it", stdout);
		}
		putchar('\n');
	}
}

/* One line of the policy: what its recorded users used of it, and the change. 1 proposed. */
static int propose_rule(const struct cd_rule *r, const struct cu_results *res,
			const struct cu_user **who)
{
	size_t nwho = 0;
	cd_capmask used = 0;
	for (size_t i = 0; i < res->nusers; i++) {
		int hit = names_rule(res->users[i]->last_rules, r);
		if (hit < 0)
			return -1;
		if (hit) {
			who[nwho++] = res->users[i];
			used |= res->users[i]->used;
		}
	}
	cd_capmask idle = r->caps & ~used, unknown = 0;
	for (int cap = 0; cap < 64; cap++)
		if ((idle >> cap & 1) && res->nobody_runs[cap] > 0)
			unknown |= (cd_capmask)1 << cap;
	idle &= ~unknown;
	if (nwho == 0 || idle == 0)
		return 0;
	fputs("\n# ", stdout);
	cli_text_escape(stdout, r->file);
	printf(":%zu: ", r->line);
	cli_print_subject(stdout, r->kind, r->name);
	putchar(' ');
	cli_print_caps(stdout, r->caps);
	putchar('\n');
	for (int cap = 0; cap < 64; cap++) {
		char buf[16];
		if (!(r->caps >> cap & 1))
			continue;
		evidence(res, who, nwho, cap, (int)(used >> cap & 1));
		if (unknown >> cap & 1)
			printf("#   %s: kept: %llu runs of files marked with it were attributed to nobody "
			       "(any of them may have used it)\n", cd_cap_label(cap, buf, sizeof(buf)),
			       (unsigned long long)res->nobody_runs[cap]);
	}
	if (r->kind != CD_SUBJECT_USER)
		fputs("#   (a group or * line: only the users above were seen; a member with no "
		      "session in the window was not)\n", stdout);
	if (r->has_from || r->has_until)
		fputs("#   (keep the line's window fields as they are)\n", stdout);
	if ((r->caps & ~idle) == 0) {
		fputs("# remove the line\n", stdout);
		return 1;
	}
	fputs("# reduce it to:\n", stdout);
	cli_print_subject(stdout, r->kind, r->name);
	putchar(' ');
	cli_print_caps(stdout, r->caps & ~idle);
	putchar('\n');
	return 1;
}

int cli_usage_propose(const struct cli_usage_opts *o, const struct cu_results *res, int64_t oldest)
{
	struct cd_policy pol;
	if (cli_load_policy(&pol, o->config, o->confdir) != CD_POLICY_OK) {
		fputs("capdelegate: usage: the policy is not accepted (see above): nothing to propose "
		      "against\n", stderr);
		cd_policy_free(&pol);
		return CLI_ERROR;
	}
	const struct cu_user **who = calloc(res->nusers + 1, sizeof(*who));
	int n = 0, rc = CLI_OK;
	if (who == NULL) {
		cd_policy_free(&pol);
		return cli_out_of_memory("usage", "nothing proposed"), CLI_ERROR;
	}
	printf("# capdelegate usage --propose: the runs of marked files in the last %s.\n"
	       "# Nothing was changed: apply what you agree with by hand with `capdelegate edit`\n"
	       "# (a drop-in: `capdelegate edit NAME`). A run of a marked file is not proof the\n"
	       "# capability was exercised; denied wants are never proposed as grants.\n",
	       o->since_text);
	if (oldest == 0 || oldest > o->since) {
		fputs("# The logs read begin ", stdout);
		if (oldest != 0)
			cli_usage_time(stdout, oldest);
		else
			fputs("nowhere (no record)", stdout);
		fputs(", within the window: a capability unused here may have been\n"
		      "# used before that.\n", stdout);
	}
	for (size_t i = 0; i < pol.nrules && rc == CLI_OK; i++) {
		int p = propose_rule(&pol.rules[i], res, who);
		if (p < 0) {
			cli_out_of_memory("usage", "the proposal is incomplete");
			rc = CLI_ERROR;
		}
		n += p > 0;
	}
	if (n == 0 && rc == CLI_OK)
		fputs("# nothing to propose: every line a recorded grant names was used\n", stdout);
	free(who);
	cd_policy_free(&pol);
	return rc;
}
