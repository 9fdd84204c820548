/*
 * cd_user.c - the user as NSS knows them: name, uid, primary and supplementary group names.
 *
 * Groups are matched by name because the policy names them; a gid without a name cannot be
 * named by a policy line and is skipped.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd_policy.h"

/* getpwnam_r and friends report ERANGE when the buffer is small: grow it and try again. */
#define NSS_BUF_START 1024
#define NSS_BUF_MAX (1024 * 1024)

static int lookup_passwd(const char *name, uid_t *uid, gid_t *gid)
{
	size_t size = NSS_BUF_START;
	char *buf = NULL;
	int rc;

	for (;;) {
		struct passwd pw, *res = NULL;
		char *nb = realloc(buf, size);
		if (nb == NULL) {
			free(buf);
			return -1;
		}
		buf = nb;
		rc = getpwnam_r(name, &pw, buf, size, &res);
		if (rc == ERANGE && size < NSS_BUF_MAX) {
			size *= 2;
			continue;
		}
		if (rc == 0 && res != NULL) {
			*uid = pw.pw_uid;
			*gid = pw.pw_gid;
		}
		free(buf);
		errno = rc;
		return rc == 0 && res != NULL ? 0 : -1;
	}
}

/* The name of @gid, or NULL (unknown gid, or error). Caller frees. */
static char *group_name(gid_t gid)
{
	size_t size = NSS_BUF_START;
	char *buf = NULL, *name = NULL;

	for (;;) {
		struct group gr, *res = NULL;
		char *nb = realloc(buf, size);
		if (nb == NULL)
			break;
		buf = nb;
		int rc = getgrgid_r(gid, &gr, buf, size, &res);
		if (rc == ERANGE && size < NSS_BUF_MAX) {
			size *= 2;
			continue;
		}
		if (rc == 0 && res != NULL)
			name = strdup(gr.gr_name);
		break;
	}
	free(buf);
	return name;
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
	memset(u, 0, sizeof(*u));
	if (lookup_passwd(name, &u->uid, &u->gid) < 0)
		return -1;
	if ((u->name = strdup(name)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int cd_user_lookup(struct cd_user *u, const char *name)
{
	if (cd_user_lookup_passwd(u, name) < 0)
		return -1;
	if (cd_user_load_groups(u) < 0) {
		int saved = errno;
		cd_user_free(u);
		errno = saved;
		return -1;
	}
	return 0;
}

int cd_user_load_groups(struct cd_user *u)
{
	gid_t *gids = NULL;
	int ngids = 0;

	if (u->groups_loaded)
		return 0;
	if (lookup_gids(u->name, u->gid, &gids, &ngids) < 0)
		return -1;
	u->groups = calloc((size_t)ngids + 1, sizeof(*u->groups));
	if (u->groups == NULL) {
		free(gids);
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < ngids; i++) {
		char *g = group_name(gids[i]);
		if (g != NULL)
			u->groups[u->ngroups++] = g;
	}
	free(gids);
	u->groups_loaded = 1;
	return 0;
}

void cd_user_free(struct cd_user *u)
{
	for (size_t i = 0; i < u->ngroups; i++)
		free(u->groups[i]);
	free(u->groups);
	free(u->name);
	memset(u, 0, sizeof(*u));
}
