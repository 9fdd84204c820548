/*
 * cd_user.c - the user as NSS knows them: canonical name, uid, primary and supplementary group
 * names.
 *
 * Every lookup fails closed (issue 8, over-grants 2 and 4):
 *  - rules match the name NSS returns (pw_name), not the name typed at the prompt: with a
 *    case-insensitive or aliasing backend (SSSD case_sensitive = false, winbind) "ALICE" is
 *    alice, and must not escape "alice none";
 *  - a lookup that errs (ERANGE past the largest buffer, EAGAIN/EIO from an LDAP or SSSD
 *    outage) is an error for the whole resolution, never "not a member": reading it as "not
 *    in @contractors" would hand a contractor the "*" grant;
 *  - getgrouplist() cannot report a backend that is down (glibc skips it), so every group the
 *    policy names is also looked up by name: if that lookup errs the resolution fails, and a
 *    member listed there counts even if getgrouplist() missed the group.
 * A gid that NSS says has no name (not an error) cannot be named by a policy line and is
 * skipped.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd_policy.h"

/* getpwnam_r and friends report ERANGE when the buffer is small: grow it and try again. A
 * group of 100,000 members is a few MiB; past the cap the lookup fails (closed). */
#define NSS_BUF_START 1024
#define NSS_BUF_MAX (256 * 1024 * 1024)

/* Remember which lookup failed, for the LOG_ERR line that names it. */
static void note_failure(struct cd_user *u, const char *kind, const char *what)
{
	int saved = errno;
	free(u->failed);
	u->failed_kind = kind;
	u->failed = strdup(what);
	errno = saved;
}

/* One NSS call with a growing buffer. @call returns the getXXX_r error code. 1: found,
 * 0: not found (no error), -1: error with errno set (ERANGE past NSS_BUF_MAX included). */
typedef int (*nss_call)(const void *key, void *ent, char *buf, size_t size, void **res);

static int nss_lookup(nss_call call, const void *key, void *ent, char **bufp)
{
	size_t size = NSS_BUF_START;
	for (;;) {
		char *nb = realloc(*bufp, size);
		if (nb == NULL)
			return -1;
		*bufp = nb;
		void *res = NULL;
		int rc = call(key, ent, nb, size, &res);
		if (rc == ERANGE && size < NSS_BUF_MAX) {
			size *= 2;
			continue;
		}
		if (rc != 0) {
			errno = rc;
			return -1;
		}
		return res != NULL;
	}
}

static int call_getpwnam(const void *key, void *ent, char *buf, size_t size, void **res)
{
	return getpwnam_r(key, ent, buf, size, (struct passwd **)res);
}

static int call_getgrgid(const void *key, void *ent, char *buf, size_t size, void **res)
{
	return getgrgid_r(*(const gid_t *)key, ent, buf, size, (struct group **)res);
}

static int call_getgrnam(const void *key, void *ent, char *buf, size_t size, void **res)
{
	return getgrnam_r(key, ent, buf, size, (struct group **)res);
}

static int lookup_gids(const char *name, gid_t primary, gid_t **gids, int *ngids)
{
	int n = 32;
	for (;;) {
		gid_t *g = malloc((size_t)n * sizeof(*g));
		if (g == NULL)
			return -1;
		int want = n;
		if (getgrouplist(name, primary, g, &want) >= 0) {
			*gids = g;
			*ngids = want;
			return 0;
		}
		free(g);
		if (want <= n || want > 65536)	/* NGROUPS_MAX is 65536 on Linux */
			return -1;
		n = want;
	}
}

int cd_user_lookup_passwd(struct cd_user *u, const char *name)
{
	struct passwd pw;
	char *buf = NULL;

	memset(u, 0, sizeof(*u));
	int found = nss_lookup(call_getpwnam, name, &pw, &buf);
	if (found <= 0) {
		int saved = found < 0 ? errno : 0;
		free(buf);
		errno = saved;
		return -1;
	}
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	/* The canonical name: rules are matched against what NSS calls the account. */
	u->name = strdup(pw.pw_name);
	free(buf);
	if (u->name == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int cd_user_lookup(struct cd_user *u, const char *name, const struct cd_policy *pol)
{
	if (cd_user_lookup_passwd(u, name) < 0)
		return -1;
	return cd_user_load_groups(u, pol);
}

static int has_group(const struct cd_user *u, const char *name)
{
	for (size_t i = 0; i < u->ngroups; i++)
		if (strcmp(u->groups[i], name) == 0)
			return 1;
	return 0;
}

static int add_group(struct cd_user *u, size_t *alloc, const char *name)
{
	if (u->ngroups == *alloc) {
		size_t n = *alloc ? *alloc * 2 : 16;
		char **ng = realloc(u->groups, n * sizeof(*ng));
		if (ng == NULL)
			return -1;
		u->groups = ng;
		*alloc = n;
	}
	if ((u->groups[u->ngroups] = strdup(name)) == NULL)
		return -1;
	u->ngroups++;
	return 0;
}

/* The names of the user's gids (getgrouplist). */
static int add_gid_names(struct cd_user *u, size_t *alloc, const gid_t *gids, int ngids)
{
	struct group gr;
	char *buf = NULL;
	int rc = 0;

	for (int i = 0; i < ngids && rc == 0; i++) {
		int found = nss_lookup(call_getgrgid, &gids[i], &gr, &buf);
		if (found < 0) {
			char num[32];
			snprintf(num, sizeof(num), "%u", (unsigned)gids[i]);
			note_failure(u, "gid", num);
			rc = -1;
		} else if (found && !has_group(u, gr.gr_name) && add_group(u, alloc, gr.gr_name) < 0) {
			rc = -1;
		}
	}
	free(buf);
	return rc;
}

static int is_member(const struct group *gr, const struct cd_user *u, const gid_t *gids, int ngids)
{
	if (gr->gr_gid == u->gid)	/* the primary group, even where getgrouplist left it out */
		return 1;
	for (int i = 0; i < ngids; i++)
		if (gids[i] == gr->gr_gid)
			return 1;
	for (char **m = gr->gr_mem; m != NULL && *m != NULL; m++)
		if (strcmp(*m, u->name) == 0)
			return 1;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every group the policy names, looked up by name, each name once however many lines name
 * it (sorted, so a large policy costs n log n, not a lookup per line): an outage
 * getgrouplist() hid shows here. A member gets the group's name as NSS returns it (gr_name),
 * never the policy's spelling: a backend that looks names up without case (SSSD, winbind)
 * answers "NETOPS" with the group netops, which @NETOPS does not name. */
static int check_policy_groups(struct cd_user *u, size_t *alloc, const struct cd_policy *pol,
			       const gid_t *gids, int ngids)
{
	size_t n = 0;
	const char **names = pol != NULL && pol->nrules ? malloc(pol->nrules * sizeof(*names)) : NULL;
	if (pol != NULL && pol->nrules && names == NULL)
		return -1;
	for (size_t i = 0; pol != NULL && i < pol->nrules; i++)
		if (pol->rules[i].kind == CD_SUBJECT_GROUP)
			names[n++] = pol->rules[i].name;
	if (n > 1)
		qsort(names, n, sizeof(*names), by_name);

	struct group gr;
	char *buf = NULL;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* each name once, and not the groups getgrouplist() already gave */
		if ((i > 0 && strcmp(names[i], names[i - 1]) == 0) || has_group(u, names[i]))
			continue;
		int found = nss_lookup(call_getgrnam, names[i], &gr, &buf);
		if (found < 0) {
			note_failure(u, "group", names[i]);
			rc = -1;
		} else if (found && is_member(&gr, u, gids, ngids) &&
			   !has_group(u, gr.gr_name) && add_group(u, alloc, gr.gr_name) < 0) {
			rc = -1;
		}
	}
	free(buf);
	free(names);
	return rc;
}

int cd_user_load_groups(struct cd_user *u, const struct cd_policy *pol)
{
	gid_t *gids = NULL;
	int ngids = 0;
	size_t alloc = 0;

	if (u->groups_loaded)
		return 0;
	if (lookup_gids(u->name, u->gid, &gids, &ngids) < 0) {
		note_failure(u, "the groups of", u->name);
		return -1;
	}
	int rc = add_gid_names(u, &alloc, gids, ngids);
	if (rc == 0)
		rc = check_policy_groups(u, &alloc, pol, gids, ngids);
	int saved = errno;
	free(gids);
	if (rc < 0) {
		if (u->failed == NULL)
			note_failure(u, "the groups of", u->name);
		errno = saved ? saved : ENOMEM;
		return -1;
	}
	u->groups_loaded = 1;
	return 0;
}

void cd_user_free(struct cd_user *u)
{
	for (size_t i = 0; i < u->ngroups; i++)
		free(u->groups[i]);
	free(u->groups);
	free(u->name);
	free(u->failed);
	memset(u, 0, sizeof(*u));
}
