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
 *  - getgrouplist() cannot report a backend that is down (glibc skips it), so when the policy
 *    names a group that the user's list does not, one lookup by name of a group no file can
 *    hold (PROBE_GROUP) asks every backend of nsswitch.conf's group line: if it errs, the
 *    resolution fails.
 * The user's groups are the names of the gids getgrouplist() returns (getgrgid_r). The groups
 * the policy names are not looked up by name: that fetched each one's whole member list at
 * every login, 20,000 names for a user not in a 20,000-member group (issue 23;
 * pam_capdelegate(8), GROUPS, gives the figures). A gid that NSS says has no name (not an
 * error) cannot be named by a policy line and is skipped.
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

/* A group name that no group file can hold (':' separates /etc/group's fields) and that SSSD
 * does not search in a domain of fully qualified names: glibc asks every backend of the group
 * line for it, each answers "no such group" at once, and one that is down errs. */
#define PROBE_GROUP "capdelegate:probe"

/* The groups of the policy that the user's list does not name rest on that list being
 * complete, which getgrouplist() cannot promise while a backend is down: one probe (a cheap
 * lookup, no member list) tells. The failure is noted under the first such group, the one
 * whose membership is unknown. */
static int check_list_complete(struct cd_user *u, const struct cd_policy *pol)
{
	const char *unlisted = NULL;
	for (size_t i = 0; pol != NULL && i < pol->nrules && unlisted == NULL; i++)
		if (pol->rules[i].kind == CD_SUBJECT_GROUP && !has_group(u, pol->rules[i].name))
			unlisted = pol->rules[i].name;
	if (unlisted == NULL)
		return 0;
	struct group gr;
	char *buf = NULL;
	int found = nss_lookup(call_getgrnam, PROBE_GROUP, &gr, &buf);
	free(buf);
	if (found >= 0)
		return 0;
	note_failure(u, "group", unlisted);
	return -1;
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
		rc = check_list_complete(u, pol);
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
