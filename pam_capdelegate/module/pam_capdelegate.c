/*
 * pam_capdelegate.c - PAM glue only: options, the user, once-per-transaction caching, the
 * return codes. The policy is read by cd_policy.c, resolved by cd_resolve.c and applied by
 * cd_apply.c; the capdelegate CLI links the same code.
 *
 * The module authenticates nobody, so pam_sm_authenticate and pam_sm_acct_mgmt never return
 * PAM_SUCCESS: stacked "sufficient" or "[success=N]", a PAM_SUCCESS there would let anyone
 * in. They return PAM_IGNORE, which no control turns into a success: libpam's
 * _pam_dispatch_aux only records a positive result for a module that did not ignore, and a
 * stack where every module ignored fails (PAM_MUST_FAIL_CODE).
 *
 * The price: libpam replays the auth stack for pam_setcred with the results pam_authenticate
 * froze, so setcred's result (a strict refusal) does not count. "strict" therefore refuses
 * from the account and session stacks, where the module's result counts when the line is
 * required or requisite (see pam_capdelegate(8)). setcred still applies pI.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include <security/pam_modutil.h>

#include "cd_apply.h"
#include "cd_audit.h"
#include "cd_policy.h"

#define DATA_NAME "pam_capdelegate_grant"
#define DATA_OPTS_LOGGED "pam_capdelegate_options_logged"
/* Enough rules in the log line to audit a sane policy; the count says if there were more. */
#define MAX_LOGGED_RULES 16
/* Longer names are cut in log lines (they cannot exist in NSS anyway). */
#define MAX_SHOWN_NAME CD_MAX_NAME_LEN

struct options {
	const char *config;
	const char *confdir;	/* NULL: no drop-ins */
	int debug;
	int strict;
	size_t max_bytes;
	int bad_path;		/* config= or confdir= not absolute: grant nothing */
};

/* What the policy gives the user of this transaction, computed once and kept with
 * pam_set_data so that auth (setcred) and session do not parse the file twice. */
struct saved_grant {
	char *user;
	char *account;		/* the account's canonical name (pw_name), raw */
	char *shown;		/* the same as logged (cd_name_form) */
	char *typed;		/* the name as typed (escaped), when NSS canonicalized it; else NULL */
	char *config;		/* policy_key: how the policy was read */
	enum cd_status status;
	cd_capmask caps;
	enum cd_subject_kind via;
	char *rules;		/* "file:line,file:line" */
	int policy_read;	/* 0: the user's lookup failed first; status means nothing */
	const char *nss;	/* NULL, or why NSS gave no answer: "failed", "no_user" */
	int cause;		/* enum cause: kept for the later calls of the transaction */
	char *ended;		/* NULL, or the lines naming the user whose window has ended */
	/* The clock when the grant was computed, and the first window edge after it: a later
	 * call of the transaction outside [judged_at, valid_until) computes the grant again. */
	int64_t judged_at, valid_until;
	int logged;		/* the NOTICE line for this outcome was written */
	cd_capmask logged_granted, logged_dropped_bounding, logged_dropped_no_setpcap;
};

/* Why a login gets no grant, or not the whole one. Without strict, pI is emptied and the login
 * goes on whatever the cause; with strict, each cause refuses with its own PAM code. */
enum cause {
	CAUSE_NONE,		/* the grant was computed and applied */
	CAUSE_NO_USER,		/* PAM_USER unset or empty */
	CAUSE_BAD_OPTION,	/* config= or confdir= not absolute */
	CAUSE_USER_UNKNOWN,	/* NSS answered: no such user */
	CAUSE_LOOKUP_FAILED,	/* NSS failed (the user or a group): the answer is unknown */
	CAUSE_NO_MEMORY,
	CAUSE_POLICY,		/* the policy is missing, unsafe or has a syntax error */
	CAUSE_CAPSET,		/* the kernel refused the grant (pI emptied instead) */
};

/* The entry point's codes: where the PAM specification gives each function its own. */
struct entry {
	const char *name;
	int refused;		/* a policy or capset failure, a bad option, no user */
	int unavailable;	/* a failed NSS lookup */
};
static const struct entry ACCOUNT = { "account", PAM_PERM_DENIED, PAM_PERM_DENIED };
static const struct entry SETCRED = { "setcred", PAM_CRED_ERR, PAM_CRED_UNAVAIL };
static const struct entry SESSION = { "session", PAM_SESSION_ERR, PAM_SESSION_ERR };

static const char *cause_str(enum cause c)
{
	switch (c) {
	case CAUSE_NONE: break;
	case CAUSE_NO_USER: return "no user";
	case CAUSE_BAD_OPTION: return "bad config= or confdir= option";
	case CAUSE_USER_UNKNOWN: return "user unknown to NSS";
	case CAUSE_LOOKUP_FAILED: return "NSS lookup failed";
	case CAUSE_NO_MEMORY: return "out of memory";
	case CAUSE_POLICY: return "policy not usable";	/* finish() names the status */
	case CAUSE_CAPSET: return "capset failed";
	}
	return "none";
}

static int cause_code(const struct entry *e, enum cause c)
{
	switch (c) {
	case CAUSE_NONE: return PAM_SUCCESS;
	case CAUSE_USER_UNKNOWN: return PAM_USER_UNKNOWN;
	case CAUSE_LOOKUP_FAILED: return e->unavailable;
	case CAUSE_NO_MEMORY: return PAM_BUF_ERR;
	case CAUSE_NO_USER: case CAUSE_BAD_OPTION: case CAUSE_POLICY: case CAUSE_CAPSET: break;
	}
	return e->refused;
}

/* Linux-PAM keeps its pam_str_skip_prefix private; this is the same idea. */
static const char *skip_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

static void cleanup_string(pam_handle_t *pamh, void *data, int error_status)
{
	(void)pamh;
	(void)error_status;
	free(data);
}

/* A bad option is logged once per transaction, though setcred and session parse the same
 * line again: the options already logged are kept as one string with pam_set_data. */
static void log_bad_option(pam_handle_t *pamh, const char *opt, const char *why)
{
	const void *data = NULL;
	const char *logged = NULL;
	if (pam_get_data(pamh, DATA_OPTS_LOGGED, &data) == PAM_SUCCESS && data != NULL)
		logged = data;
	char quoted[MAX_SHOWN_NAME * 4 + 8];
	cd_quote(quoted, sizeof(quoted), opt, strlen(opt), MAX_SHOWN_NAME);
	size_t n = strlen(quoted);
	for (const char *p = logged; p != NULL && (p = strstr(p, quoted)) != NULL; p += n)
		if ((p == logged || p[-1] == '\n') && p[n] == '\n')
			return;
	pam_syslog(pamh, LOG_ERR, "%s option %s: %s", why[0] == 'u' ? "unknown" : "bad", quoted,
		   why[0] == 'u' ? "ignored" : why);
	char *more = NULL;
	if (asprintf(&more, "%s%s\n", logged ? logged : "", quoted) < 0)
		return;
	if (pam_set_data(pamh, DATA_OPTS_LOGGED, more, cleanup_string) != PAM_SUCCESS)
		free(more);
}

/* A config= or confdir= that is not an absolute path sets o->bad_path: the module then grants
 * nothing rather than fall back to another file or to the current directory. */
static void parse_args(pam_handle_t *pamh, int argc, const char **argv, struct options *o)
{
	o->config = CD_DEFAULT_CONFIG;
	o->confdir = CD_DEFAULT_CONFDIR;
	o->debug = o->strict = o->bad_path = 0;
	o->max_bytes = CD_MAX_POLICY_BYTES;
	for (int i = 0; i < argc; i++) {
		const char *v;
		if ((v = skip_prefix(argv[i], "config=")) != NULL) {
			o->config = v;
			if (*v != '/') {
				o->bad_path = 1;
				log_bad_option(pamh, argv[i], "not an absolute path: no capabilities will be granted");
			}
		} else if ((v = skip_prefix(argv[i], "confdir=")) != NULL) {
			o->confdir = *v != '\0' ? v : NULL;	/* "confdir=" turns drop-ins off */
			if (*v != '\0' && *v != '/') {
				o->bad_path = 1;
				log_bad_option(pamh, argv[i], "not an absolute path: no capabilities will be granted");
			}
		} else if (strcmp(argv[i], "debug") == 0) {
			o->debug = 1;
		} else if (strcmp(argv[i], "strict") == 0) {
			o->strict = 1;
		} else if ((v = skip_prefix(argv[i], "maxsize=")) != NULL) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(v, &end, 10);
			if (errno || *end || *v < '0' || *v > '9' || n == 0 || n > 64ULL * 1024 * 1024)
				log_bad_option(pamh, argv[i], "keeping the default maxsize (1 MiB)");
			else
				o->max_bytes = (size_t)n;
		} else {
			log_bad_option(pamh, argv[i], "unknown");
		}
	}
}

/* How a grant was read: the main file, the drop-in directory and the size limit. Two module
 * lines of one transaction that differ in any of them read the policy each in its own way, so
 * the grant the first one kept is not the second's. */
static char *policy_key(const struct options *o)
{
	char *key;
	return asprintf(&key, "%s\n%s\n%zu", o->config, o->confdir ? o->confdir : "",
			o->max_bytes) < 0 ? NULL : key;
}

/* "FILE:LINE,FILE:LINE" of @n rules; "none" for none. */
static char *rules_text(const struct cd_rule *const *rules, size_t n)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	if (f == NULL)
		return NULL;
	if (n == 0)
		fputs("none", f);
	for (size_t i = 0; i < n && i < MAX_LOGGED_RULES; i++)
		fprintf(f, "%s%s:%zu", i ? "," : "", rules[i]->file, rules[i]->line);
	if (n > MAX_LOGGED_RULES)	/* one key=value field: no blank (and no parenthesis, auparse drops a final one) */
		fprintf(f, ",...%zu_rules", n);
	fclose(f);
	return out;
}

/* The lines that name @u (by name, by a group looked up, or "*") whose window ended by the
 * time the policy was judged: what the NOTICE line and the audit record call window_ended.
 * 0 (*out NULL: none), or -1 when memory ran out. */
static int ended_text(const struct cd_policy *pol, const struct cd_user *u, char **out)
{
	*out = NULL;
	if (pol->noutside == 0)
		return 0;	/* the usual login: no line outside its window, nothing to allocate */
	const struct cd_rule **ended = calloc(pol->noutside, sizeof(*ended));
	size_t n = 0;
	if (ended == NULL)
		return -1;
	for (size_t i = 0; i < pol->noutside; i++) {
		const struct cd_rule *r = &pol->outside[i];
		if (r->has_until && r->until <= pol->at &&
		    (r->kind != CD_SUBJECT_GROUP || u->groups_loaded) && cd_rule_may_match(r, (void *)u))
			ended[n++] = r;
	}
	int rc = 0;
	if (n > 0 && (*out = rules_text(ended, n)) == NULL)
		rc = -1;
	free(ended);
	return rc;
}

static void free_saved(struct saved_grant *s)
{
	if (s == NULL)
		return;
	free(s->user);
	free(s->account);
	free(s->shown);
	free(s->typed);
	free(s->config);
	free(s->rules);
	free(s->ended);
	free(s);
}

static void cleanup_saved(pam_handle_t *pamh, void *data, int error_status)
{
	(void)pamh;
	(void)error_status;
	free_saved(data);
}

/* The user's groups, when the policy needs them (cd_policy_needs_groups). Any NSS error is
 * logged and fails the resolution. */
static int load_groups_if_needed(pam_handle_t *pamh, struct cd_user *u, const struct cd_policy *pol,
				 const char *shown)
{
	if (!cd_policy_needs_groups(pol, u))
		return 0;
	if (cd_user_load_groups(u, pol) == 0)
		return 0;
	char *why = cd_user_failure(u, errno);
	pam_syslog(pamh, LOG_ERR, "user=%s: %s: no capabilities granted", shown,
		   why ? why : "cannot look up the groups");
	free(why);
	return -1;
}

/* The outcome of a login, kept for its later calls: @g's grant (NULL: none, a lookup failed)
 * for @account (raw), shown as @canonical. NULL when memory ran out. */
static struct saved_grant *new_saved(const struct options *o, const char *user, const char *account,
				     const char *canonical, const char *shown, const struct cd_policy *pol,
				     const struct cd_grant *g)
{
	struct saved_grant *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->user = strdup(user);
	s->account = strdup(account);
	s->shown = strdup(canonical);
	s->typed = strcmp(user, account) ? strdup(shown) : NULL;
	s->config = policy_key(o);
	s->policy_read = pol != NULL;
	s->status = pol != NULL ? pol->status : CD_POLICY_OK;
	s->caps = g != NULL ? g->caps : 0;
	s->via = g != NULL ? g->via : CD_SUBJECT_NONE;
	s->rules = g != NULL ? rules_text(g->matched, g->nmatched) : strdup("none");
	/* a policy not judged by the clock (not read, or rejected) gives the same nothing later */
	s->judged_at = pol != NULL && pol->at_set ? pol->at : INT64_MIN;
	s->valid_until = pol != NULL && pol->at_set ? cd_policy_next_edge(pol, pol->at) : INT64_MAX;
	if (s->user == NULL || s->account == NULL || s->shown == NULL || s->config == NULL ||
	    s->rules == NULL || (strcmp(user, account) && s->typed == NULL)) {
		free_saved(s);
		return NULL;
	}
	return s;
}

/* A login whose grant NSS could not decide (@cause: the user unknown, a lookup failed): no
 * capabilities, and the NOTICE line and audit record still say so (LOGGING). */
static struct saved_grant *no_answer(const struct options *o, const char *user, const char *account,
				     const char *canonical, const char *shown, const struct cd_policy *pol,
				     enum cause cause)
{
	struct saved_grant *s = new_saved(o, user, account, canonical, shown, pol, NULL);
	if (s != NULL) {
		s->nss = cause == CAUSE_USER_UNKNOWN ? "no_user" : "failed";
		s->cause = cause;
	}
	return s;
}

/* Judge each line's window by the system clock, now (never by TZ or any variable: the
 * times are UTC and cd_time.c reads them by arithmetic). A clock that cannot be read, or no
 * memory to do it, rejects the policy: nothing is granted. */
static void judge_windows(pam_handle_t *pamh, struct cd_policy *pol, const char *shown)
{
	int64_t now;
	if (pol->status != CD_POLICY_OK)
		return;
	if (cd_clock_now(&now) == 0 && cd_policy_at(pol, now) == 0)
		return;
	pam_syslog(pamh, LOG_ERR, "user=%s: cannot judge the policy lines' windows: %m: "
		   "no capabilities granted", shown);
	pol->status = CD_POLICY_SYSERR;
	pol->nrules = 0;
}

/* Read and resolve the policy for @user (as typed; resolved against the account's canonical
 * name). When the user is unknown or a lookup failed, a grant of nothing that says so (*cause
 * says which, each logged); NULL only when memory ran out. */
static struct saved_grant *compute_grant(pam_handle_t *pamh, const struct options *o, const char *user,
					 const char *shown, enum cause *cause)
{
	struct cd_log log = { .pamh = pamh, .debug = o->debug };
	struct cd_user u;
	struct saved_grant *s = NULL;
	if (cd_user_lookup_passwd(&u, user) < 0) {
		*cause = errno == ENOMEM ? CAUSE_NO_MEMORY : errno != 0 ? CAUSE_LOOKUP_FAILED :
			 CAUSE_USER_UNKNOWN;
		if (errno != 0)
			pam_syslog(pamh, LOG_ERR, "user=%s: cannot look up the user: %m: "
				   "no capabilities granted", shown);
		else
			pam_syslog(pamh, LOG_ERR, "user=%s unknown to NSS: no capabilities granted", shown);
		cd_user_free(&u);
		if (*cause != CAUSE_NO_MEMORY && (s = no_answer(o, user, user, shown, shown, NULL, *cause)) == NULL)
			*cause = CAUSE_NO_MEMORY;
		if (*cause == CAUSE_NO_MEMORY)
			pam_syslog(pamh, LOG_ERR, "user=%s: out of memory: no capabilities granted", shown);
		return s;
	}
	struct cd_load_opts lo = { .owner = 0, .max_bytes = o->max_bytes, .confdir = o->confdir,
				   .keep = cd_rule_may_match, .keep_arg = &u };
	struct cd_policy pol;
	struct cd_grant g = { 0 };
	char canonical[MAX_SHOWN_NAME * 4 + 8];
	cd_name_form(canonical, sizeof(canonical), u.name, MAX_SHOWN_NAME);

	cd_policy_load(&pol, o->config, &lo, &log);
	judge_windows(pamh, &pol, canonical);
	*cause = CAUSE_NONE;
	if (load_groups_if_needed(pamh, &u, &pol, canonical) < 0) {
		*cause = CAUSE_LOOKUP_FAILED;
		s = no_answer(o, user, u.name, canonical, shown, &pol, *cause);
	} else if (cd_resolve(&pol, &u, &g) == 0) {
		s = new_saved(o, user, u.name, canonical, shown, &pol, &g);
	}
	if (s != NULL && ended_text(&pol, &u, &s->ended) < 0) {
		free_saved(s);
		s = NULL;
	}
	if (s == NULL) {
		*cause = CAUSE_NO_MEMORY;
		pam_syslog(pamh, LOG_ERR, "user=%s: out of memory: no capabilities granted", canonical);
	}
	cd_grant_free(&g);
	cd_policy_free(&pol);
	cd_user_free(&u);
	return s;
}

static struct saved_grant *get_grant(pam_handle_t *pamh, const struct options *o, const char *user,
				     const char *shown, enum cause *cause)
{
	*cause = CAUSE_NONE;
	const void *data = NULL;
	if (pam_get_data(pamh, DATA_NAME, &data) == PAM_SUCCESS && data != NULL) {
		struct saved_grant *s = (struct saved_grant *)data;	/* ours: pam_get_data is const-only */
		char *key = policy_key(o);
		int64_t now;
		/* the same user and policy, and no window opened or closed since (a session that
		 * outlives a line's end, a screen unlock's PAM_REINITIALIZE_CRED, a clock set back) */
		int same = key != NULL && strcmp(s->user, user) == 0 && strcmp(s->config, key) == 0 &&
			   cd_clock_now(&now) == 0 && now >= s->judged_at && now < s->valid_until;
		free(key);
		if (same) {
			if (o->debug)
				pam_syslog(pamh, LOG_DEBUG, "user=%s: policy already read in this transaction", shown);
			*cause = (enum cause)s->cause;
			return s;
		}
	}
	struct saved_grant *s = compute_grant(pamh, o, user, shown, cause);
	if (s != NULL && pam_set_data(pamh, DATA_NAME, s, cleanup_saved) != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_ERR, "user=%s: pam_set_data failed: no capabilities granted", shown);
		free_saved(s);
		s = NULL;
		*cause = CAUSE_NO_MEMORY;
	}
	return s;
}

/* The grant could not be applied: say so, and what became of pI (emptied through the second
 * path, capset(2), or left in an unknown state). */
static void log_apply_failure(pam_handle_t *pamh, const char *shown, const struct cd_apply_result *r)
{
	if (r->clear_errno)
		pam_syslog(pamh, LOG_ERR, "user=%s: capset failed (%s); inheritable set could not be "
			   "cleared: %s", shown, strerror(r->set_errno), strerror(r->clear_errno));
	else
		pam_syslog(pamh, LOG_ERR, "user=%s: capset failed (%s); inheritable set cleared "
			   "through capset(2)", shown, strerror(r->set_errno));
}

/* One NOTICE line (and one audit record) per login: when session applies the same outcome
 * that setcred already logged, bits dropped the same way included, say so only at debug level.
 * A different outcome (another module changed the bounding set in between) is logged again. */
static int already_logged(pam_handle_t *pamh, struct saved_grant *s, const struct cd_apply_result *r,
			  int debug)
{
	if (s->logged && s->logged_granted == r->granted && !r->set_errno &&
	    s->logged_dropped_bounding == r->dropped_bounding &&
	    s->logged_dropped_no_setpcap == r->dropped_no_setpcap) {
		if (debug)
			pam_syslog(pamh, LOG_DEBUG, "user=%s: inheritable set applied again, unchanged", s->shown);
		return 1;
	}
	s->logged = 1;
	s->logged_granted = r->granted;
	s->logged_dropped_bounding = r->dropped_bounding;
	s->logged_dropped_no_setpcap = r->dropped_no_setpcap;
	return 0;
}

static void log_outcome(pam_handle_t *pamh, struct saved_grant *s, const struct cd_apply_result *r,
			int debug)
{
	if (already_logged(pamh, s, r, debug))
		return;
	char *granted = cd_capmask_to_text(r->granted);
	char *delegated = cd_capmask_to_text(r->delegated);
	char *bound = cd_capmask_to_text(r->dropped_bounding);
	char *nopcap = cd_capmask_to_text(r->dropped_no_setpcap);
	char *cleared = cd_capmask_to_text(r->cleared);
	const char *policy = s->policy_read ? cd_status_token(s->status) : "not_read";
	pam_syslog(pamh, LOG_NOTICE,
		   "user=%s granted=%s via=%s rules=%s policy=%s delegated=%s "
		   "dropped_bounding=%s dropped_no_setpcap=%s cleared=%s%s%s%s%s%s%s",
		   s->shown, granted ? granted : "?", cd_subject_kind_str(s->via), s->rules, policy,
		   delegated ? delegated : "?", bound ? bound : "?", nopcap ? nopcap : "?",
		   cleared ? cleared : "?", s->typed ? " login_name=" : "", s->typed ? s->typed : "",
		   s->nss ? " nss=" : "", s->nss ? s->nss : "",
		   s->ended ? " window_ended=" : "", s->ended ? s->ended : "");
	if (r->dropped_bounding)
		pam_syslog(pamh, LOG_WARNING, "user=%s: %s not granted: outside the bounding set",
			   s->shown, bound ? bound : "?");
	if (r->dropped_no_setpcap)
		pam_syslog(pamh, LOG_WARNING, "user=%s: %s not granted: not in this process's permitted "
			   "set and no CAP_SETPCAP in its effective set", s->shown, nopcap ? nopcap : "?");
	if (r->set_errno)
		log_apply_failure(pamh, s->shown, r);
	/* the raw name: libaudit encodes acct= itself (escaped text would be escaped twice) */
	const void *rhost = NULL, *tty = NULL;
	if (pam_get_item(pamh, PAM_RHOST, &rhost) != PAM_SUCCESS)
		rhost = NULL;
	if (pam_get_item(pamh, PAM_TTY, &tty) != PAM_SUCCESS)
		tty = NULL;
	cd_audit_grant(s->account, granted, s->rules, policy, s->nss, s->ended, rhost, tty,
		       r->set_errno == 0);
	free(granted);
	free(delegated);
	free(bound);
	free(nopcap);
	free(cleared);
}

/* The result of an entry point that found @cause. strict refuses a login whose grant could not
 * be computed or applied exactly; its refusal only stops the login where libpam counts this
 * module's result: account or session, required or requisite. */
static int finish(pam_handle_t *pamh, const struct options *o, const struct entry *e,
		  const char *shown, enum cause cause, const struct saved_grant *s, int ok_code)
{
	if (cause == CAUSE_NONE || !o->strict)
		return ok_code;
	int code = cause_code(e, cause);
	/* a policy error says which: "policy missing", "policy syntax error", ... */
	pam_syslog(pamh, LOG_ERR, "user=%s: strict: refusing the login (%s%s) in %s: %s", shown,
		   cause == CAUSE_POLICY ? "policy " : "",
		   cause == CAUSE_POLICY && s != NULL ? cd_status_str(s->status) : cause_str(cause),
		   e->name, pam_strerror(pamh, code));
	return code;
}

/* What every entry point does first: the options and the user (escaped into @shown). */
static int begin(pam_handle_t *pamh, int argc, const char **argv, struct options *o,
		 const char **user, char *shown, size_t shown_size)
{
	parse_args(pamh, argc, argv, o);
	/* pam_get_item, not pam_get_user: this module never prompts (setcred, account and session
	 * run after authentication named the user), as pam_limits and pam_cap do. */
	const void *item = NULL;
	*user = pam_get_item(pamh, PAM_USER, &item) == PAM_SUCCESS ? item : NULL;
	if (*user == NULL || **user == '\0') {
		pam_syslog(pamh, LOG_ERR, "cannot determine the user: no capabilities granted");
		snprintf(shown, shown_size, "?");
		*user = NULL;
		return -1;
	}
	/* The name was typed at a prompt: log it in the policy's name form (every byte that is not
	 * a name byte as \ooo), so it cannot forge log fields and reads as a policy would write it. */
	cd_name_form(shown, shown_size, *user, MAX_SHOWN_NAME);
	return 0;
}

/* Set pI to the user's grant: setcred and open_session. Whatever the cause, a login without a
 * grant has its pI emptied; a pI left in an unknown state (even emptying it failed) always
 * fails the call, strict or not: the login must not go on. */
static int delegate(pam_handle_t *pamh, int argc, const char **argv, const struct entry *e)
{
	struct options o;
	const char *user = NULL;
	char shown[MAX_SHOWN_NAME * 4 + 8];
	enum cause cause = CAUSE_NONE;
	struct saved_grant *s = NULL;
	struct cd_apply_result r;

	if (begin(pamh, argc, argv, &o, &user, shown, sizeof(shown)) < 0)
		cause = CAUSE_NO_USER;
	else if (o.bad_path)
		cause = CAUSE_BAD_OPTION;
	else
		s = get_grant(pamh, &o, user, shown, &cause);
	if (o.strict && o.debug && e == &SETCRED)
		pam_syslog(pamh, LOG_DEBUG, "strict cannot refuse a login from setcred (libpam replays "
			   "the auth stack with pam_authenticate's results, and this module's was "
			   "PAM_IGNORE): put strict on a required account or session line");

	if (s == NULL) {
		if (cd_apply_inheritable(0, &r) < 0 && r.clear_errno)
			pam_syslog(pamh, LOG_ERR, "user=%s: cannot clear the inheritable set: %s",
				   shown, strerror(r.clear_errno));
		else if (r.set_errno)
			log_apply_failure(pamh, shown, &r);
	} else {
		if (cd_apply_inheritable(s->caps, &r) < 0)
			cause = CAUSE_CAPSET;
		else if (s->status != CD_POLICY_OK)
			cause = CAUSE_POLICY;
		log_outcome(pamh, s, &r, o.debug);
	}
	if (r.clear_errno)
		return e->refused;
	return finish(pamh, &o, e, s != NULL ? s->shown : shown, cause, s, PAM_SUCCESS);
}

/* Never PAM_SUCCESS: see the comment at the top of this file. */
PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_IGNORE;
}

/* Under strict, refuse here a login whose grant cannot be computed exactly (broken policy,
 * unknown user, failed lookup): account comes before setcred and session, and its result
 * counts. Otherwise PAM_IGNORE, never PAM_SUCCESS: this module vouches for no account. */
PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;
	const char *user = NULL;
	char shown[MAX_SHOWN_NAME * 4 + 8];
	enum cause cause = CAUSE_NONE;
	struct saved_grant *s = NULL;

	(void)flags;
	if (begin(pamh, argc, argv, &o, &user, shown, sizeof(shown)) < 0)
		cause = CAUSE_NO_USER;
	else if (!o.strict)
		return PAM_IGNORE;	/* nothing to refuse: setcred and session log what happens */
	else if (o.bad_path)
		cause = CAUSE_BAD_OPTION;
	else if ((s = get_grant(pamh, &o, user, shown, &cause)) != NULL && s->status != CD_POLICY_OK)
		cause = CAUSE_POLICY;
	return finish(pamh, &o, &ACCOUNT, s != NULL ? s->shown : shown, cause, s, PAM_IGNORE);
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	if (!(flags & (PAM_ESTABLISH_CRED | PAM_REINITIALIZE_CRED)))
		return PAM_IGNORE;	/* deleting or refreshing: pI is the session's, leave it */
	return delegate(pamh, argc, argv, &SETCRED);
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)flags;
	return delegate(pamh, argc, argv, &SESSION);
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_IGNORE;
}
