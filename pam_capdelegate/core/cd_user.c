/*
 * cd_user.c - the user as NSS knows them: canonical name, uid, primary and supplementary group
 * names.
 *
 * Every lookup fails closed, and so does an answer that may be incomplete:
 *  - rules match the name NSS returns (pw_name), not the name typed at the prompt: with a
 *    case-insensitive or aliasing backend (SSSD case_sensitive = false, winbind) "ALICE" is
 *    alice, and must not escape "alice none";
 *  - a lookup that errs (ERANGE past the largest buffer, EAGAIN/EIO from an LDAP or SSSD
 *    outage) is an error for the whole resolution, never "not a member": reading it as "not
 *    in @contractors" would hand a contractor the "*" grant;
 *  - getgrouplist() cannot report a backend that is down (glibc skips it), so when the policy
 *    names a group that the user's list does not, one lookup by name of a group no file can
 *    hold (PROBE_GROUP) asks every backend of nsswitch.conf's group line: if it errs, the
 *    resolution fails;
 *  - the probe cannot see every partial failure: nscd answers "not found" for a directory that
 *    is down, a backend may fail its membership search while its lookups by name work, and a
 *    later backend's "not found" hides an earlier one's outage. So the answers a grant rests on
 *    are asked twice (prove_named_groups, prove_not_in_narrowing): a group the user is given
 *    through a gid must be that name's group by name too (a directory group reusing a local
 *    group's name is another group), and a user who falls to "*" must be shown outside every
 *    group that gives less than "*" by that group's own entry. Answers that disagree, a
 *    narrowing group NSS does not know, or one whose entry lists no members (unless the local
 *    group file says it has none: a directory may leave member lists out), grant nothing.
 * The user's groups are the names of the gids getgrouplist() returns (getgrgid_r). A group the
 * user is in neither list nor narrowing is not looked up by name: that would fetch its whole
 * member list at every login (pam_capdelegate(8), GROUPS, gives the figures). A gid that NSS
 * says has no name (not an error) cannot be named by a policy line and is skipped.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
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

/* 1 found, 0 not, -1 error (errno kept): the entry itself is not wanted. */
static int nss_exists(nss_call call, const char *name)
{
	union { struct passwd pw; struct group gr; } ent;
	char *buf = NULL;
	int found = nss_lookup(call, name, &ent, &buf);
	int saved = errno;
	free(buf);
	errno = saved;
	return found;
}

int cd_nss_user_exists(const char *name)
{
	return nss_exists(call_getpwnam, name);
}

int cd_nss_group_exists(const char *name)
{
	return nss_exists(call_getgrnam, name);
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

static int group_index(const struct cd_user *u, const char *name)
{
	for (size_t i = 0; i < u->ngroups; i++)
		if (strcmp(u->groups[i], name) == 0)
			return (int)i;
	return -1;
}

static int add_group(struct cd_user *u, size_t *alloc, const char *name, gid_t gid)
{
	if (u->ngroups == *alloc) {
		size_t n = *alloc ? *alloc * 2 : 16;
		char **ng = realloc(u->groups, n * sizeof(*ng));
		if (ng == NULL)
			return -1;
		u->groups = ng;
		gid_t *gg = realloc(u->group_gids, n * sizeof(*gg));
		if (gg == NULL)
			return -1;
		u->group_gids = gg;
		*alloc = n;
	}
	if ((u->groups[u->ngroups] = strdup(name)) == NULL)
		return -1;
	u->group_gids[u->ngroups] = gid;
	u->ngroups++;
	return 0;
}

/* Does a line of @pol name group @name? */
static int policy_names_group(const struct cd_policy *pol, const char *name)
{
	for (size_t i = 0; pol != NULL && i < pol->nrules; i++)
		if (pol->rules[i].kind == CD_SUBJECT_GROUP && strcmp(pol->rules[i].name, name) == 0)
			return 1;
	return 0;
}

/* The first line of @pol naming group @name (one exists when this is called). */
static const struct cd_rule *first_line_of(const struct cd_policy *pol, const char *name)
{
	for (size_t i = 0; i < pol->nrules; i++)
		if (pol->rules[i].kind == CD_SUBJECT_GROUP && strcmp(pol->rules[i].name, name) == 0)
			return &pol->rules[i];
	return NULL;
}

/* NSS answered, and its answers about group @name (first named in @r) cannot all be true:
 * record why (the text after "group NAME (FILE:LINE) "), and fail with EIO. */
__attribute__((format(printf, 4, 5)))
static int contradiction(struct cd_user *u, const struct cd_rule *r, const char *name, const char *fmt, ...)
{
	char shown[CD_MAX_NAME_LEN * 4 + 8], *why = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&why, fmt, ap);
	va_end(ap);
	cd_name_form(shown, sizeof(shown), name, CD_MAX_NAME_LEN);
	free(u->contradiction);
	u->contradiction = NULL;
	if (n >= 0 && asprintf(&u->contradiction, "group %s (%s:%zu) %s", shown, r ? r->file : "?",
			       r ? r->line : 0, why) < 0)
		u->contradiction = NULL;
	free(why);
	errno = u->contradiction != NULL ? EIO : ENOMEM;
	return -1;
}

/* The names of the user's gids (getgrouplist). Two of the user's gids under one name that the
 * policy names: which of them the line meant cannot be told, and nothing is granted. */
static int add_gid_names(struct cd_user *u, const struct cd_policy *pol, size_t *alloc)
{
	struct group gr;
	char *buf = NULL;
	int rc = 0;

	for (size_t i = 0; i < u->ngids && rc == 0; i++) {
		int found = nss_lookup(call_getgrgid, &u->gids[i], &gr, &buf);
		int at = found > 0 ? group_index(u, gr.gr_name) : -1;
		if (found < 0) {
			char num[32];
			snprintf(num, sizeof(num), "%u", (unsigned)u->gids[i]);
			note_failure(u, "gid", num);
			rc = -1;
		} else if (found == 0) {
			continue;
		} else if (at < 0) {
			rc = add_group(u, alloc, gr.gr_name, u->gids[i]);
		} else if (u->group_gids[at] != u->gids[i] && policy_names_group(pol, gr.gr_name)) {
			rc = contradiction(u, first_line_of(pol, gr.gr_name), gr.gr_name,
					   "names two of the user's groups, gid %u and gid %u",
					   (unsigned)u->group_gids[at], (unsigned)u->gids[i]);
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
	note_failure(u, "probe", unlisted);
	return -1;
}

static int holds_gid(const struct cd_user *u, gid_t gid)
{
	for (size_t i = 0; i < u->ngids; i++)
		if (u->gids[i] == gid)
			return 1;
	return 0;
}

/* The local group file, read by the core itself (not through NSS) for one question: is a
 * group that lists no members a local group that truly has none? */
#define LOCAL_GROUP_FILE "/etc/group"

int cd_local_group(const char *name, gid_t *gid, int *has_members)
{
	FILE *f = fopen(LOCAL_GROUP_FILE, "re");
	struct group *g;
	int found = 0;
	while (f != NULL && !found && (g = fgetgrent(f)) != NULL)
		if (strcmp(g->gr_name, name) == 0) {
			*gid = g->gr_gid;
			*has_members = g->gr_mem != NULL && g->gr_mem[0] != NULL;
			found = 1;
		}
	if (f != NULL)
		fclose(f);
	return found;
}

/* Does the local group file hold group @name with gid @gid and no members? Then its empty
 * member list is the whole truth (the files source is complete); a group from elsewhere that
 * lists no members may be a directory that leaves member lists out (SSSD's
 * ignore_group_members). */
static int local_and_memberless(const char *name, gid_t gid)
{
	gid_t local = 0;
	int members = 0;
	return cd_local_group(name, &local, &members) && local == gid && !members;
}

static int lists_no_member(const struct group *gr)
{
	return gr->gr_mem == NULL || gr->gr_mem[0] == NULL;
}

static int lists_member(const struct group *gr, const char *name)
{
	for (char **m = gr->gr_mem; m != NULL && *m != NULL; m++)
		if (strcmp(*m, name) == 0)
			return 1;
	return 0;
}

/* The second question about group @name, by name. 1: found (in @gr, its strings in *bufp),
 * 0: NSS knows no such group, -1: the lookup failed (noted under the group). */
static int group_by_name(struct cd_user *u, const char *name, struct group *gr, char **bufp)
{
	int found = nss_lookup(call_getgrnam, name, gr, bufp);
	if (found < 0)
		note_failure(u, "group", name);
	return found;
}

/* Each group of the policy that the user holds through a gid must be, by name, the group of
 * that gid: a directory group named like a local one (netops, gid 5000 beside the local
 * netops, gid 2000) is another group, and the line was written for one of them. */
static int prove_named_groups(struct cd_user *u, const struct cd_policy *pol)
{
	struct group gr;
	char *buf = NULL;
	int rc = 0;

	for (size_t i = 0; i < u->ngroups && rc == 0; i++) {
		const char *name = u->groups[i];
		if (!policy_names_group(pol, name))
			continue;
		int found = group_by_name(u, name, &gr, &buf);
		if (found < 0)
			rc = -1;
		else if (found == 0)
			rc = contradiction(u, first_line_of(pol, name), name,
					   "is the name of the user's gid %u, but NSS knows no group of "
					   "that name", (unsigned)u->group_gids[i]);
		else if (gr.gr_gid != u->group_gids[i])
			rc = contradiction(u, first_line_of(pol, name), name,
					   "is gid %u by name, but the user's gid %u has that name too: "
					   "two groups of one name", (unsigned)gr.gr_gid,
					   (unsigned)u->group_gids[i]);
	}
	free(buf);
	return rc;
}

/* Is the user in a group some line names? Then "*" does not apply, and a group the user is
 * not in can only have added to the grant, never narrowed it. */
static int in_some_policy_group(const struct cd_user *u, const struct cd_policy *pol)
{
	for (size_t i = 0; i < u->ngroups; i++)
		if (policy_names_group(pol, u->groups[i]))
			return 1;
	return 0;
}

/* A user who falls to "*" gets more than the members of each group whose lines give less:
 * that the user is not in such a group rests on getgrouplist's list being complete, which
 * nscd, a backend whose membership search fails, or a backend order can silently break. The
 * group's own entry is the second answer: it must exist (a narrowing group NSS does not know
 * may be one it cannot reach) and must not place the user in it, by member list or gid. */
static int prove_not_in_narrowing(struct cd_user *u, const struct cd_policy *pol)
{
	struct group gr;
	char *buf = NULL;
	int rc = 0;

	if (cd_policy_names_user(pol, u) || in_some_policy_group(u, pol))
		return 0;
	for (size_t i = 0; i < pol->nrules && rc == 0; i++) {
		const struct cd_rule *r = &pol->rules[i];
		if (r->kind != CD_SUBJECT_GROUP || cd_policy_group_named_before(pol, i) ||
		    cd_policy_group_narrows(pol, r->name) == 0)
			continue;
		int found = group_by_name(u, r->name, &gr, &buf);
		if (found < 0)
			rc = -1;
		else if (found == 0)
			rc = contradiction(u, r, r->name, "gives less than \"*\", and NSS knows no "
					   "such group: whether the user is in it cannot be shown");
		else if (lists_member(&gr, u->name))
			rc = contradiction(u, r, r->name, "lists the user as a member, but the user's "
					   "group list lacks it: NSS answers disagree");
		else if (holds_gid(u, gr.gr_gid))
			rc = contradiction(u, r, r->name, "is gid %u, one of the user's groups under "
					   "another name", (unsigned)gr.gr_gid);
		else if (lists_no_member(&gr) && !local_and_memberless(r->name, gr.gr_gid))
			rc = contradiction(u, r, r->name, "gives less than \"*\", and its entry lists no "
					   "members (a directory that leaves member lists out?): whether "
					   "the user is in it cannot be shown");
	}
	free(buf);
	return rc;
}

int cd_user_load_groups(struct cd_user *u, const struct cd_policy *pol)
{
	size_t alloc = 0;
	int ngids = 0;

	if (u->groups_loaded)
		return 0;
	if (lookup_gids(u->name, u->gid, &u->gids, &ngids) < 0) {
		note_failure(u, "the groups of", u->name);
		return -1;
	}
	u->ngids = (size_t)ngids;
	int rc = add_gid_names(u, pol, &alloc);
	if (rc == 0)
		rc = check_list_complete(u, pol);
	if (rc == 0 && pol != NULL)
		rc = prove_named_groups(u, pol);
	if (rc == 0 && pol != NULL)
		rc = prove_not_in_narrowing(u, pol);
	if (rc < 0) {
		int saved = errno;
		if (u->failed == NULL && u->contradiction == NULL)
			note_failure(u, "the groups of", u->name);
		errno = saved ? saved : ENOMEM;
		return -1;
	}
	u->groups_loaded = 1;
	return 0;
}

char *cd_user_failure(const struct cd_user *u, int err)
{
	char *text = NULL;
	if (u->contradiction != NULL)
		return strdup(u->contradiction);
	if (u->failed_kind == NULL)	/* the user's own lookup: errno 0 is "no such user" */
		return asprintf(&text, "cannot look up the user: %s",
				err ? strerror(err) : "unknown to NSS") < 0 ? NULL : text;
	char shown[CD_MAX_NAME_LEN * 4 + 8];
	cd_name_form(shown, sizeof(shown), u->failed ? u->failed : "", CD_MAX_NAME_LEN);
	/* the probe names no real group: say what it was for, and that it is what failed */
	if (strcmp(u->failed_kind, "probe") == 0 ?
	    asprintf(&text, "cannot tell whether the user is in group %s: a group backend fails "
		     "(the probe lookup of " PROBE_GROUP ": %s)", shown, strerror(err)) < 0 :
	    asprintf(&text, "cannot look up %s %s: %s", u->failed_kind, shown, strerror(err)) < 0)
		return NULL;
	return text;
}

void cd_user_free(struct cd_user *u)
{
	for (size_t i = 0; i < u->ngroups; i++)
		free(u->groups[i]);
	free(u->groups);
	free(u->group_gids);
	free(u->gids);
	free(u->name);
	free(u->failed);
	free(u->contradiction);
	memset(u, 0, sizeof(*u));
}
