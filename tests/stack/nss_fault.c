/*
 * nss_fault.c - preloaded before nss_wrapper in the stack tests: NSS as a directory outage or
 * a case-insensitive backend shows it, which nss_wrapper's flat files cannot.
 *
 *   CD_FAULT_GROUPS=NAME:GID[,NAME:GID...]  these groups are "unreachable": getgrnam_r and
 *       getgrgid_r fail with CD_FAULT_ERRNO (default EAGAIN, as NSS_STATUS_TRYAGAIN gives), and
 *       getgrouplist leaves their gids out, as glibc does when a backend is unavailable. Their
 *       directory is down: a lookup of a group name that no file can hold (one with a ':') fails
 *       the same way, since glibc asks the directory next (nsswitch.conf "group: files sss").
 *   CD_FAULT_NO_GRNAM=NAME[,NAME...]  a lookup of these groups by name fails with EIO: a test's
 *       tripwire for a login that must not fetch their member lists by name.
 *   CD_FAULT_USERS=NAME[,NAME...]  getpwnam_r fails with CD_FAULT_ERRNO for these names.
 *   CD_FAULT_UIDS=UID[,UID...]  getpwuid_r fails with CD_FAULT_ERRNO for these uids (the
 *       name of a running process's owner cannot be had).
 *   CD_FAULT_PWENT=N  getpwent lists N users, then fails with CD_FAULT_ERRNO (a directory
 *       whose listing broke off).
 *   CD_FAULT_PWENT_KEEPS_ERRNO=1  getpwent's end of the list (NULL) leaves errno as the caller
 *       had it, as POSIX allows (errno is set on an error only; glibc's files backend says
 *       ENOENT): a caller must clear errno before each call to tell the end from an error.
 *   CD_FAULT_CASEFOLD=1  getpwnam_r and getgrouplist fold the name to lower case, like SSSD
 *       with case_sensitive = false: "ALICE" is the account alice (pw_name "alice").
 *   CD_FAULT_GROUP_CASEFOLD=1  getgrnam_r does the same for groups (SSSD, winbind): "NETOPS"
 *       is the group netops, its gr_name "netops" (apart from CD_FAULT_CASEFOLD, which the
 *       model's fixtures use with groups whose names differ only in case).
 *   CD_FAULT_HUGE_GROUP=NAME:GID:USER:COUNT  a group of COUNT members member000000... and
 *       then USER, answered here with glibc's ERANGE until the buffer is large enough (a
 *       directory's big group; nss_wrapper would re-parse such a file in every process).
 * Everything else goes to the next definition (nss_wrapper, then glibc), with nss_wrapper's
 * answers put into glibc's conventions, which the module is written for: nss_wrapper returns
 * ENOENT for "no such entry" where glibc returns 0 and a NULL result, and -1 (errno ERANGE)
 * for a small buffer where glibc returns ERANGE. Left as they are, both would read as lookup
 * errors, and the module, failing closed, would grant nothing to anyone.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nss_wrapper's answer in glibc's terms (see the top of this file). */
static int as_glibc(int rc, void **res)
{
	if (rc == ENOENT) {
		*res = NULL;
		return 0;
	}
	if (rc == -1 && errno == ERANGE)
		return ERANGE;
	return rc;
}

static int fault_errno(void)
{
	const char *e = getenv("CD_FAULT_ERRNO");
	return e ? atoi(e) : EAGAIN;
}

/* Is @name (or, with name NULL, @gid) one of the unreachable groups? */
static int faulted_group(const char *name, gid_t gid)
{
	const char *list = getenv("CD_FAULT_GROUPS");
	while (list != NULL && *list != '\0') {
		const char *colon = strchr(list, ':');
		if (colon == NULL)
			return 0;
		size_t n = (size_t)(colon - list);
		if (name != NULL ? (strlen(name) == n && strncmp(name, list, n) == 0)
				 : (gid_t)strtoul(colon + 1, NULL, 10) == gid)
			return 1;
		list = strchr(colon, ',');
		list = list ? list + 1 : NULL;
	}
	return 0;
}

static int listed(const char *var, const char *name)
{
	const char *list = getenv(var);
	size_t n = strlen(name);
	for (const char *p = list; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* The name as a case-insensitive backend looks it up (when @var is set). Caller frees. */
static char *folded(const char *name, const char *var)
{
	char *f = strdup(name);
	if (f != NULL && getenv(var) != NULL)
		for (char *p = f; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	return f;
}

/* The huge group: 1 if configured and @name (or, with name NULL, @gid) is it, 0 if it is
 * another, -1 if none is configured. */
struct huge {
	char name[64], user[64];
	gid_t gid;
	size_t count;
};

static int huge_group(const char *name, gid_t gid, struct huge *h)
{
	const char *spec = getenv("CD_FAULT_HUGE_GROUP");
	unsigned long g, n;
	if (spec == NULL || sscanf(spec, "%63[^:]:%lu:%63[^:]:%lu", h->name, &g, h->user, &n) != 4)
		return -1;	/* not configured */
	h->gid = (gid_t)g;
	h->count = n;
	return name != NULL ? strcmp(name, h->name) == 0 : gid == h->gid;
}

#define MEMBER_LEN 13	/* "member000000" and its NUL */

static int fill_huge(const struct huge *h, struct group *gr, char *buf, size_t size, struct group **res)
{
	size_t ptrs = (h->count + 2) * sizeof(char *);
	size_t need = ptrs + h->count * MEMBER_LEN + strlen(h->user) + 1 + strlen(h->name) + 1 + 2;
	if (size < need)
		return ERANGE;
	char **mem = (char **)(void *)buf;	/* glibc aligns its buffers the same way */
	char *p = buf + ptrs;
	for (size_t i = 0; i < h->count; i++, p += MEMBER_LEN) {
		snprintf(p, MEMBER_LEN, "member%06u", (unsigned)(i % 1000000));
		mem[i] = p;
	}
	mem[h->count] = strcpy(p, h->user);
	p += strlen(h->user) + 1;
	mem[h->count + 1] = NULL;
	gr->gr_name = strcpy(p, h->name);
	p += strlen(h->name) + 1;
	gr->gr_passwd = strcpy(p, "x");
	gr->gr_gid = h->gid;
	gr->gr_mem = mem;
	*res = gr;
	return 0;
}

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
	int (*next)(const char *, struct passwd *, char *, size_t, struct passwd **) =
		(int (*)(const char *, struct passwd *, char *, size_t, struct passwd **))dlsym(RTLD_NEXT, "getpwnam_r");
	*res = NULL;
	if (listed("CD_FAULT_USERS", name))
		return fault_errno();
	char *f = folded(name, "CD_FAULT_CASEFOLD");
	if (f == NULL)
		return ENOMEM;
	int rc = as_glibc(next(f, pw, buf, size, res), (void **)res);
	free(f);
	return rc;
}

int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
	int (*next)(uid_t, struct passwd *, char *, size_t, struct passwd **) =
		(int (*)(uid_t, struct passwd *, char *, size_t, struct passwd **))dlsym(RTLD_NEXT, "getpwuid_r");
	char key[24];
	snprintf(key, sizeof(key), "%u", (unsigned)uid);
	*res = NULL;
	if (listed("CD_FAULT_UIDS", key))
		return fault_errno();
	return as_glibc(next(uid, pw, buf, size, res), (void **)res);
}

int getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
	int (*next)(const char *, struct group *, char *, size_t, struct group **) =
		(int (*)(const char *, struct group *, char *, size_t, struct group **))dlsym(RTLD_NEXT, "getgrnam_r");
	*res = NULL;
	struct huge h;
	if (faulted_group(name, 0))
		return fault_errno();
	if (listed("CD_FAULT_NO_GRNAM", name))
		return EIO;
	if (huge_group(name, 0, &h) > 0)
		return fill_huge(&h, gr, buf, size, res);
	char *f = folded(name, "CD_FAULT_GROUP_CASEFOLD");
	if (f == NULL)
		return ENOMEM;
	int rc = as_glibc(next(f, gr, buf, size, res), (void **)res);
	free(f);
	const char *down = getenv("CD_FAULT_GROUPS");
	if (rc == 0 && *res == NULL && down != NULL && *down != '\0' && strchr(name, ':') != NULL)
		return fault_errno();	/* never in the files: the next backend, the directory, is down */
	return rc;
}

int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res)
{
	int (*next)(gid_t, struct group *, char *, size_t, struct group **) =
		(int (*)(gid_t, struct group *, char *, size_t, struct group **))dlsym(RTLD_NEXT, "getgrgid_r");
	*res = NULL;
	struct huge h;
	if (faulted_group(NULL, gid))
		return fault_errno();
	if (huge_group(NULL, gid, &h) > 0)
		return fill_huge(&h, gr, buf, size, res);
	return as_glibc(next(gid, gr, buf, size, res), (void **)res);
}

int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
{
	int (*next)(const char *, gid_t, gid_t *, int *) =
		(int (*)(const char *, gid_t, gid_t *, int *))dlsym(RTLD_NEXT, "getgrouplist");
	char *f = folded(user, "CD_FAULT_CASEFOLD");
	if (f == NULL)
		return -1;
	int room = *ngroups;
	int rc = next(f, group, groups, ngroups);
	free(f);
	if (rc < 0)
		return rc;
	int kept = 0;
	for (int i = 0; i < *ngroups; i++)
		if (!faulted_group(NULL, groups[i]))
			groups[kept++] = groups[i];
	struct huge h;
	if (huge_group(NULL, (gid_t)-1, &h) >= 0 && strcmp(user, h.user) == 0) {
		if (kept == room) {
			*ngroups = kept + 1;	/* glibc: too small, here is the size */
			return -1;
		}
		groups[kept++] = h.gid;
	}
	*ngroups = kept;
	return kept;
}

struct passwd *getpwent(void)
{
	static long listed_users;
	struct passwd *(*next)(void) = (struct passwd *(*)(void))dlsym(RTLD_NEXT, "getpwent");
	const char *n = getenv("CD_FAULT_PWENT");
	if (n != NULL && listed_users++ >= atol(n)) {
		errno = fault_errno();
		return NULL;
	}
	int before = errno;
	struct passwd *pw = next();
	if (pw == NULL && getenv("CD_FAULT_PWENT_KEEPS_ERRNO") != NULL)
		errno = before;
	return pw;
}
