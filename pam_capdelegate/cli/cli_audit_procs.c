/*
 * cli_audit_procs.c - audit --processes: each listed thread's pI against what the policy gives
 * its user now (cli_procs.h, cli_procs_judge).
 *
 * A process keeps the pI login gave it: since Linux 2.6.24 capset(2) changes the calling
 * thread alone, so neither the module nor anything else can take a bit back from a running
 * session. A policy changed since (a line removed or narrowed, a window ended) reaches the
 * next login only; the sessions opened before hold the old grant until they end. This finds
 * them, judging each user as the module would at a login now.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_out.h"
#include "cli_procs.h"
#include "cli_userdb.h"

const char *cli_proc_state_str(enum cli_proc_state st)
{
	switch (st) {
	case CLI_PROC_WITHIN: return "within";
	case CLI_PROC_STALE: return "stale";
	case CLI_PROC_ROOT: return "root";
	case CLI_PROC_SERVICE: return "service";
	default: return "unknown";
	}
}

/* @pol as login judges it at @now, whatever it was judged at before: every line, in force or
 * not, in the order read, then cd_policy_at. The view shares @pol's names and files and owns
 * only its two rule arrays (free them, never cd_policy_free it). 0, or -1 out of memory. */
static int policy_now(const struct cd_policy *pol, int64_t now, struct cd_policy *view)
{
	size_t n = 0;
	const struct cd_rule **all = cli_policy_all_rules(pol, &n);
	*view = *pol;
	view->outside = NULL;
	view->noutside = 0;
	view->at_set = 0;
	view->rules = calloc(n + 1, sizeof(*view->rules));
	if (all == NULL || view->rules == NULL) {
		free(all);
		free(view->rules);
		view->rules = NULL;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		view->rules[i] = *all[i];
	free(all);
	view->nrules = n;
	return cd_policy_at(view, now);
}

/* Does a user line, in force or not, name @name? */
static int names_user(const struct cd_policy *pol, const char *name)
{
	const struct cd_rule *lists[2] = { pol->rules, pol->outside };
	size_t counts[2] = { pol->nrules, pol->noutside };
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++)
			if (lists[l][i].kind == CD_SUBJECT_USER && strcmp(lists[l][i].name, name) == 0)
				return 1;
	return 0;
}

/* One user's verdict, computed once for all of the user's threads. */
struct verdict {
	uid_t uid;
	enum cli_proc_state scope;	/* ROOT: not judged; else judged (WITHIN/STALE by pI) */
	int known;			/* grant computed */
	cd_capmask grant;
	char *why;			/* not known: why */
};

static int set_why(struct verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_why(struct verdict *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&v->why, fmt, ap);
	va_end(ap);
	v->known = 0;
	if (rc < 0)
		v->why = NULL;
	return rc < 0 ? -1 : 0;
}

/* @name's grant as the module computes it at a login now: the account by name (its canonical
 * name), the groups only when the policy needs them, any failed lookup failing the verdict
 * (known = 0), never taken as "no such group". */
static int grant_now(const struct cd_policy *view, const char *name, const char *shown,
		     struct verdict *v)
{
	struct cd_user u;
	errno = 0;
	if (cd_user_lookup_passwd(&u, name) < 0) {
		int err = errno;
		cd_user_free(&u);
		if (err == ENOMEM)
			return -1;
		return set_why(v, "cannot look up the user %s by name: %s", shown,
			       err ? strerror(err) : "NSS names the uid so, but knows no such user");
	}
	if (cd_policy_needs_groups(view, &u) && cd_user_load_groups(&u, view) < 0) {
		int err = errno;
		char *why = err == ENOMEM ? NULL : cd_user_failure(&u, err);
		int rc = why == NULL ? -1 : set_why(v, "%s", why);
		free(why);
		cd_user_free(&u);
		return rc;
	}
	struct cd_grant g = { 0 };
	int rc = cd_resolve(view, &u, &g);
	v->known = 1;
	v->grant = g.caps;
	cd_grant_free(&g);
	cd_user_free(&u);
	return rc;
}

/* The verdict for @p's uid: root out of scope unless a user line names uid 0's account; a
 * uid NSS has no name for gets nothing from the module (it grants an unknown user nothing);
 * a uid that cannot be looked up is not judged. */
static int verdict_of(const struct cd_policy *pol, const struct cd_policy *view,
		      const struct cli_proc *p, struct verdict *v)
{
	v->uid = p->uid;
	if (p->user == NULL && p->user_errno != 0) {
		return set_why(v, "cannot look up uid %u: %s", (unsigned)p->uid,
			       strerror(p->user_errno));
	}
	if (p->uid == 0 && (p->user == NULL || !names_user(pol, p->user))) {
		v->scope = CLI_PROC_ROOT;
		return 0;
	}
	if (p->user == NULL) {
		v->known = 1;
		v->grant = 0;
		return 0;
	}
	char *shown = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&shown, &size);
	if (f == NULL)
		return -1;
	cli_print_name(f, p->user);
	if (fclose(f) != 0) {
		free(shown);
		return -1;
	}
	int rc = grant_now(view, p->user, shown, v);
	free(shown);
	return rc;
}

/* What pam_systemd of systemd 254 and later sets a user manager's pI to in the systemd-user
 * stack, after the module's line (pam_capdelegate(8), systemd 257): the user record's
 * capabilityAmbientSet, else CAP_WAKE_ALARM. Neither is a grant of the policy (a record's is
 * an ambient-grant finding of its own). 0 for a thread outside a user manager. */
static cd_capmask manager_set(const struct cli_userdb *db, const struct cli_proc *p)
{
	size_t n = p->unit != NULL ? strlen(p->unit) : 0;
	if (n < 13 || strncmp(p->unit, "user@", 5) != 0 || strcmp(p->unit + n - 8, ".service") != 0)
		return 0;
	cd_capmask m = (cd_capmask)1 << CAP_WAKE_ALARM;
	for (size_t i = 0; db != NULL && p->user != NULL && i < db->nrecords; i++) {
		const struct cli_userdb_record *r = &db->records[i];
		if (r->error == NULL && r->hidden_by == NULL && r->same_as == NULL &&
		    r->f.has_ambient && r->f.user != NULL && strcmp(r->f.user, p->user) == 0)
			m |= r->f.ambient;
	}
	return m;
}

static void judge_thread(struct cli_proc *p, const struct verdict *v, cd_capmask systemd_set)
{
	if (v->scope == CLI_PROC_ROOT) {
		p->state = CLI_PROC_ROOT;
	} else if (!v->known) {
		p->state = CLI_PROC_UNKNOWN;
	} else {
		p->grant = v->grant;
		p->beyond = p->inheritable & ~v->grant & ~systemd_set;
		p->state = p->beyond ? CLI_PROC_STALE : CLI_PROC_WITHIN;
	}
}

static void verdicts_free(struct verdict *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].why);
	free(v);
}

/* A system service: no login set its audit session, and systemd runs it below
 * /system.slice/. Its unit gave it pI (AmbientCapabilities=, CapabilityInheritable=...), not
 * the module: no policy line is what it holds. */
static int system_service(const struct cli_proc *p)
{
	return !p->has_sessionid && p->system_slice;
}

static int judge_all(const struct cd_policy *pol, const struct cd_policy *view,
		     const struct cli_userdb *db, struct cli_proc *procs, size_t nprocs)
{
	struct verdict *vs = calloc(nprocs + 1, sizeof(*vs));
	size_t nv = 0;
	if (vs == NULL)
		return -1;
	for (size_t i = 0; i < nprocs; i++) {
		struct cli_proc *p = &procs[i];
		if (system_service(p)) {
			p->state = CLI_PROC_SERVICE;
			continue;
		}
		size_t k = 0;
		while (k < nv && vs[k].uid != p->uid)
			k++;
		if (k == nv && verdict_of(pol, view, p, &vs[nv++]) < 0) {
			verdicts_free(vs, nv);
			return -1;
		}
		judge_thread(p, &vs[k], manager_set(db, p));
		if (!vs[k].known && vs[k].scope != CLI_PROC_ROOT &&
		    (p->why = strdup(vs[k].why)) == NULL) {
			verdicts_free(vs, nv);
			return -1;
		}
	}
	verdicts_free(vs, nv);
	return 0;
}

int cli_procs_judge(const struct cd_policy *pol, const struct cli_userdb *db,
		    struct cli_proc *procs, size_t nprocs)
{
	int64_t now;
	struct cd_policy view;
	if (cli_time_arg("audit", NULL, &now) < 0)
		return -1;
	if (policy_now(pol, now, &view) < 0)
		return cli_out_of_memory("audit", "the processes are not judged");
	int rc = judge_all(pol, &view, db, procs, nprocs);
	free(view.rules);
	free(view.outside);
	if (rc < 0)
		cli_out_of_memory("audit", "the processes are not judged");
	return rc;
}
