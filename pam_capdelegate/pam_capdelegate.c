/*
 * pam_capdelegate.c - PAM glue only: options, the user, once-per-transaction caching, the
 * return codes. The policy is read by cd_policy.c, resolved by cd_resolve.c and applied by
 * cd_apply.c; the capdelegate CLI links the same code.
 *
 * Why pam_sm_authenticate returns PAM_SUCCESS: libpam replays the auth stack for
 * pam_setcred using the return codes pam_authenticate froze (libpam/pam_dispatch.c,
 * "use_cached_chain"). A module whose authenticate returned PAM_IGNORE has its setcred result
 * ignored, so a failing setcred under `strict` would not stop the login. Returning
 * PAM_SUCCESS makes setcred's result count. The module authenticates nobody: it must never be
 * stacked as `sufficient` (see pam_capdelegate(8)).
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
/* Enough rules in the log line to audit a sane policy; the count says if there were more. */
#define MAX_LOGGED_RULES 16
/* Longer names are cut in log lines (they cannot exist in NSS anyway). */
#define MAX_SHOWN_NAME CD_MAX_NAME_LEN

struct options {
	const char *config;
	int debug;
	int strict;
	size_t max_bytes;
};

/* What the policy gives the user of this transaction, computed once and kept with
 * pam_set_data so that auth (setcred) and session do not parse the file twice. */
struct saved_grant {
	char *user;
	char *shown;		/* the user name as logged (escaped) */
	char *config;
	enum cd_status status;
	cd_capmask caps;
	enum cd_match_kind via;
	char *rules;		/* "file:line,file:line" */
	int logged;		/* the NOTICE line for this outcome was written */
	cd_capmask logged_granted;
};

/* Linux-PAM keeps its pam_str_skip_prefix private; this is the same idea. */
static const char *skip_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* A config= that is not an absolute path leaves o->config NULL: the module then grants
 * nothing rather than fall back to another file or to the current directory. */
static void parse_args(pam_handle_t *pamh, int argc, const char **argv, struct options *o)
{
	o->config = CD_DEFAULT_CONFIG;
	o->debug = o->strict = 0;
	o->max_bytes = CD_MAX_POLICY_BYTES;
	for (int i = 0; i < argc; i++) {
		const char *v;
		if ((v = skip_prefix(argv[i], "config=")) != NULL) {
			o->config = *v == '/' ? v : NULL;
			if (o->config == NULL)
				pam_syslog(pamh, LOG_ERR, "bad option %s: not an absolute path: "
					   "no capabilities will be granted", argv[i]);
		}
		else if (strcmp(argv[i], "debug") == 0)
			o->debug = 1;
		else if (strcmp(argv[i], "strict") == 0)
			o->strict = 1;
		else if ((v = skip_prefix(argv[i], "maxsize=")) != NULL) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(v, &end, 10);
			if (errno || *end || n == 0 || n > 64ULL * 1024 * 1024)
				pam_syslog(pamh, LOG_ERR, "bad option %s: keeping maxsize=%zu", argv[i], o->max_bytes);
			else
				o->max_bytes = (size_t)n;
		} else
			pam_syslog(pamh, LOG_ERR, "unknown option: %s", argv[i]);
	}
}

static char *rules_text(const char *path, const struct cd_grant *g)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	if (f == NULL)
		return NULL;
	if (g->nmatched == 0)
		fputs("none", f);
	for (size_t i = 0; i < g->nmatched && i < MAX_LOGGED_RULES; i++)
		fprintf(f, "%s%s:%zu", i ? "," : "", path, g->matched[i]->line);
	if (g->nmatched > MAX_LOGGED_RULES)
		fprintf(f, ",...(%zu rules)", g->nmatched);
	fclose(f);
	return out;
}

static void free_saved(struct saved_grant *s)
{
	if (s == NULL)
		return;
	free(s->user);
	free(s->shown);
	free(s->config);
	free(s->rules);
	free(s);
}

static void cleanup_saved(pam_handle_t *pamh, void *data, int error_status)
{
	(void)pamh;
	(void)error_status;
	free_saved(data);
}

/* Read and resolve the policy for @user. NULL only when the user is unknown or memory ran out. */
static struct saved_grant *compute_grant(pam_handle_t *pamh, const struct options *o, const char *user,
					 const char *shown)
{
	struct cd_log log = { .pamh = pamh, .debug = o->debug };
	struct cd_user u;
	if (cd_user_lookup_passwd(&u, user) < 0) {
		pam_syslog(pamh, LOG_ERR, "user=%s unknown to NSS: no capabilities granted", shown);
		return NULL;
	}
	struct cd_load_opts lo = { .owner = 0, .max_bytes = o->max_bytes,
				   .keep = cd_rule_may_match, .keep_arg = &u };
	struct cd_policy pol;
	struct cd_grant g;
	struct saved_grant *s = calloc(1, sizeof(*s));

	cd_policy_load(&pol, o->config, &lo, &log);
	/* Groups only matter when no line names the user and some line names a group. */
	int need_groups = pol.status == CD_POLICY_OK && !cd_policy_names_user(&pol, &u) &&
			  cd_policy_has_group_rules(&pol);
	if (need_groups && cd_user_load_groups(&u) < 0) {
		pam_syslog(pamh, LOG_ERR, "user=%s: cannot read the user's groups: %m: "
			   "no capabilities granted", shown);
		free(s);
		cd_policy_free(&pol);
		cd_user_free(&u);
		return NULL;
	}
	if (s == NULL || cd_resolve(&pol, &u, &g) < 0) {
		free(s);
		cd_policy_free(&pol);
		cd_user_free(&u);
		return NULL;
	}
	s->user = strdup(user);
	s->shown = strdup(shown);
	s->config = strdup(o->config);
	s->status = pol.status;
	s->caps = g.caps;
	s->via = g.via;
	s->rules = rules_text(pol.shown, &g);
	cd_grant_free(&g);
	cd_policy_free(&pol);
	cd_user_free(&u);
	if (s->user == NULL || s->shown == NULL || s->config == NULL || s->rules == NULL) {
		free_saved(s);
		return NULL;
	}
	return s;
}

static struct saved_grant *get_grant(pam_handle_t *pamh, const struct options *o, const char *user,
				     const char *shown)
{
	const void *data = NULL;
	if (pam_get_data(pamh, DATA_NAME, &data) == PAM_SUCCESS && data != NULL) {
		struct saved_grant *s = (struct saved_grant *)data;	/* ours: pam_get_data is const-only */
		if (strcmp(s->user, user) == 0 && strcmp(s->config, o->config) == 0) {
			if (o->debug)
				pam_syslog(pamh, LOG_DEBUG, "user=%s: policy already read in this transaction", shown);
			return s;
		}
	}
	struct saved_grant *s = compute_grant(pamh, o, user, shown);
	if (s == NULL)
		return NULL;
	if (pam_set_data(pamh, DATA_NAME, s, cleanup_saved) != PAM_SUCCESS) {
		free_saved(s);
		return NULL;
	}
	return s;
}

/* One NOTICE line (and one audit record) per login: when session applies the same outcome
 * that setcred already logged, say so only at debug level. */
static int already_logged(pam_handle_t *pamh, struct saved_grant *s, const struct cd_apply_result *r,
			  int debug)
{
	if (s->logged && s->logged_granted == r->granted && !r->set_errno && !r->dropped_bounding &&
	    !r->dropped_no_setpcap) {
		if (debug)
			pam_syslog(pamh, LOG_DEBUG, "user=%s: inheritable set applied again, unchanged", s->shown);
		return 1;
	}
	s->logged = 1;
	s->logged_granted = r->granted;
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
	pam_syslog(pamh, LOG_NOTICE,
		   "user=%s granted=%s via=%s rules=%s policy=%s delegated=%s "
		   "dropped_bounding=%s dropped_no_setpcap=%s cleared=%s",
		   s->shown, granted ? granted : "?", cd_match_str(s->via), s->rules, cd_status_str(s->status),
		   delegated ? delegated : "?", bound ? bound : "?", nopcap ? nopcap : "?",
		   cleared ? cleared : "?");
	if (r->dropped_bounding)
		pam_syslog(pamh, LOG_WARNING, "user=%s: %s not granted: outside the bounding set",
			   s->shown, bound ? bound : "?");
	if (r->dropped_no_setpcap)
		pam_syslog(pamh, LOG_WARNING, "user=%s: %s not granted: not in this process's permitted "
			   "set and no CAP_SETPCAP in its effective set", s->shown, nopcap ? nopcap : "?");
	if (r->set_errno)
		pam_syslog(pamh, LOG_ERR, "user=%s: capset failed (%s); inheritable set %s", s->shown,
			   strerror(r->set_errno), r->clear_errno ? "could not be cleared" : "cleared");
	cd_audit_grant(s->shown, granted, s->rules, cd_status_str(s->status), r->set_errno == 0);
	free(granted);
	free(delegated);
	free(bound);
	free(nopcap);
	free(cleared);
}

/* Clear pI when no grant can be computed: login's own inheritable set must never reach the
 * user (Debian's pam_cap leaves it there when it cannot apply a policy). */
static int clear_inheritable(pam_handle_t *pamh, const char *shown)
{
	struct cd_apply_result r;
	if (cd_apply_inheritable(0, &r) < 0) {
		pam_syslog(pamh, LOG_ERR, "user=%s: cannot clear the inheritable set: %s",
			   shown, strerror(r.clear_errno));
		return -1;
	}
	return 0;
}

static int delegate(pam_handle_t *pamh, int argc, const char **argv, int fail_code)
{
	struct options o;
	const char *user = NULL;
	/* The name was typed at a prompt: log it escaped, so it cannot forge log fields. */
	char shown[MAX_SHOWN_NAME * 4 + 8];

	parse_args(pamh, argc, argv, &o);
	if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL || *user == '\0') {
		pam_syslog(pamh, LOG_ERR, "cannot determine the user: no capabilities granted");
		return clear_inheritable(pamh, "?") < 0 ? fail_code : PAM_USER_UNKNOWN;
	}
	cd_quote(shown, sizeof(shown), user, strlen(user), MAX_SHOWN_NAME);
	if (o.config == NULL) {
		if (clear_inheritable(pamh, shown) < 0 || o.strict)
			return fail_code;
		return PAM_SUCCESS;
	}
	struct saved_grant *s = get_grant(pamh, &o, user, shown);
	if (s == NULL)
		return clear_inheritable(pamh, shown) < 0 ? fail_code : PAM_USER_UNKNOWN;

	struct cd_apply_result r;
	int rc = cd_apply_inheritable(s->caps, &r);
	log_outcome(pamh, s, &r, o.debug);
	if (r.clear_errno)
		return fail_code;	/* pI in an unknown state: never let this login go on */
	if (o.strict && (s->status != CD_POLICY_OK || rc < 0)) {
		pam_syslog(pamh, LOG_ERR, "user=%s: strict: refusing the login (policy %s%s)", shown,
			   cd_status_str(s->status), rc < 0 ? ", capset failed" : "");
		return fail_code;
	}
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_SUCCESS;	/* see the comment at the top of this file */
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	if (!(flags & (PAM_ESTABLISH_CRED | PAM_REINITIALIZE_CRED)))
		return PAM_IGNORE;	/* deleting or refreshing: pI is the session's, leave it */
	return delegate(pamh, argc, argv, PAM_CRED_ERR);
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)flags;
	return delegate(pamh, argc, argv, PAM_SESSION_ERR);
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_IGNORE;
}
