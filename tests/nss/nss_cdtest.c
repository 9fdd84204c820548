/*
 * nss_cdtest.c - a small NSS module of the tests' own, loaded by the real glibc (not a
 * preloaded wrapper): a "directory" whose answers and failures a test sets, so that the policy
 * core is judged against NSS as glibc and nscd really combine backends (tests/nss/run.sh).
 *
 * Built twice: as libnss_cdtest.so.2 (NSS_NAME cdtest) it reads the state file named by
 * $CD_NSS_STATE (default /run/cd-nss-test/state) at every call, so a test can take the
 * directory down between two logins; as libnss_cdother.so.2 (NSS_NAME cdother) it is a second
 * backend that knows nobody: every lookup answers "not found", as a backend placed after the
 * directory in nsswitch.conf does.
 *
 * The state file, one item a line:
 *   mode up|down|groups-down|initgroups-down
 *       down: every lookup fails (NSS_STATUS_UNAVAIL, ECONNREFUSED: SSSD with sssd stopped);
 *       groups-down: every group lookup fails, the users still answer (a directory whose
 *       group search is refused; a user whose account is cached or local);
 *       initgroups-down: the membership search (initgroups_dyn, what getgrouplist asks) fails
 *       while the lookups by name and gid answer, as a directory whose member search is
 *       refused or times out.
 *   user NAME UID GID
 *   group NAME GID [MEMBER,MEMBER...]
 * Anything else in the file is ignored. Not thread-safe beyond what a test needs: each call
 * reads the file again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <nss.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#ifndef NSS_NAME
#define NSS_NAME cdtest
#endif
#define CAT3(a, b, c) a##b##c
#define NSS_FN3(n, f) CAT3(_nss_, n, _##f)
#define NSS_FN(f) NSS_FN3(NSS_NAME, f)
#define STR2(x) #x
#define STR(x) STR2(x)

/* The entry points glibc looks up by name (dlsym) in libnss_NAME.so.2. */
enum nss_status NSS_FN(getpwnam_r)(const char *, struct passwd *, char *, size_t, int *);
enum nss_status NSS_FN(getpwuid_r)(uid_t, struct passwd *, char *, size_t, int *);
enum nss_status NSS_FN(getgrnam_r)(const char *, struct group *, char *, size_t, int *);
enum nss_status NSS_FN(getgrgid_r)(gid_t, struct group *, char *, size_t, int *);
enum nss_status NSS_FN(initgroups_dyn)(const char *, gid_t, long *, long *, gid_t **, long, int *);

enum mode { MODE_UP, MODE_DOWN, MODE_GROUPS_DOWN, MODE_INITGROUPS_DOWN, MODE_EMPTY };

/* One entry of the state file, fields split in place in @line. */
struct entry {
	char *line;
	char *f[4];
	int nf;
};

static int is_other(void)
{
	return strcmp(STR(NSS_NAME), "cdother") == 0;
}

static FILE *open_state(void)
{
	const char *p = getenv("CD_NSS_STATE");
	return fopen(p && *p ? p : "/run/cd-nss-test/state", "re");
}

static enum mode read_mode(void)
{
	if (is_other())
		return MODE_EMPTY;
	FILE *f = open_state();
	if (f == NULL)
		return MODE_DOWN;	/* no state: a directory that is not there */
	enum mode m = MODE_UP;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "mode down", 9) == 0)
			m = MODE_DOWN;
		else if (strncmp(line, "mode groups-down", 16) == 0)
			m = MODE_GROUPS_DOWN;
		else if (strncmp(line, "mode initgroups-down", 20) == 0)
			m = MODE_INITGROUPS_DOWN;
	}
	free(line);
	fclose(f);
	return m;
}

/* The next entry of @kind ("user", "group") in @f; 0 at the end. */
static int next_entry(FILE *f, const char *kind, struct entry *e, size_t *cap)
{
	while (getline(&e->line, cap, f) > 0) {
		e->line[strcspn(e->line, "\n")] = '\0';
		char *save = NULL, *w = strtok_r(e->line, " ", &save);
		if (w == NULL || strcmp(w, kind) != 0)
			continue;
		e->nf = 0;
		while (e->nf < 4 && (w = strtok_r(NULL, " ", &save)) != NULL)
			e->f[e->nf++] = w;
		if (e->nf >= 3 || (e->nf == 2 && strcmp(kind, "group") == 0))
			return 1;
	}
	return 0;
}

/* Copy @s into the caller's buffer. */
static char *put(char **buf, size_t *left, const char *s)
{
	size_t n = strlen(s) + 1;
	if (n > *left)
		return NULL;
	char *at = *buf;
	memcpy(at, s, n);
	*buf += n;
	*left -= n;
	return at;
}

static enum nss_status down(int *errnop)
{
	*errnop = ECONNREFUSED;
	return NSS_STATUS_UNAVAIL;
}

static enum nss_status fill_passwd(const struct entry *e, struct passwd *pw, char *buf, size_t len, int *errnop)
{
	pw->pw_name = put(&buf, &len, e->f[0]);
	pw->pw_passwd = put(&buf, &len, "x");
	pw->pw_gecos = put(&buf, &len, "");
	pw->pw_dir = put(&buf, &len, "/");
	pw->pw_shell = put(&buf, &len, "/bin/sh");
	if (!pw->pw_name || !pw->pw_passwd || !pw->pw_gecos || !pw->pw_dir || !pw->pw_shell) {
		*errnop = ERANGE;
		return NSS_STATUS_TRYAGAIN;
	}
	pw->pw_uid = (uid_t)strtoul(e->f[1], NULL, 10);
	pw->pw_gid = (gid_t)strtoul(e->f[2], NULL, 10);
	return NSS_STATUS_SUCCESS;
}

static enum nss_status fill_group(const struct entry *e, struct group *gr, char *buf, size_t len, int *errnop)
{
	const char *members = e->nf > 2 ? e->f[2] : "";
	size_t n = 1;
	for (const char *p = members; *p; p++)
		n += *p == ',';
	char *names = NULL;
	gr->gr_name = put(&buf, &len, e->f[0]);
	gr->gr_passwd = put(&buf, &len, "x");
	names = put(&buf, &len, members);
	/* the member array, aligned, after the strings */
	size_t pad = (sizeof(char *) - ((uintptr_t)buf % sizeof(char *))) % sizeof(char *);
	if (!gr->gr_name || !gr->gr_passwd || !names || len < pad + (n + 1) * sizeof(char *)) {
		*errnop = ERANGE;
		return NSS_STATUS_TRYAGAIN;
	}
	gr->gr_mem = (char **)(void *)(buf + pad);
	size_t k = 0;
	char *save = NULL;
	for (char *m = strtok_r(names, ",", &save); m != NULL; m = strtok_r(NULL, ",", &save))
		gr->gr_mem[k++] = m;
	gr->gr_mem[k] = NULL;
	gr->gr_gid = (gid_t)strtoul(e->f[1], NULL, 10);
	return NSS_STATUS_SUCCESS;
}

/* Look an entry up by field @field (0: name, 1: id) equal to @key. */
static enum nss_status lookup(const char *kind, int field, const char *key, void *out, char *buf,
			      size_t len, int *errnop)
{
	enum mode m = read_mode();
	if (m == MODE_DOWN || (m == MODE_GROUPS_DOWN && kind[0] == 'g'))
		return down(errnop);
	if (m == MODE_EMPTY)
		return NSS_STATUS_NOTFOUND;
	FILE *f = open_state();
	if (f == NULL)
		return down(errnop);
	struct entry e = { 0 };
	size_t cap = 0;
	enum nss_status st = NSS_STATUS_NOTFOUND;
	while (st == NSS_STATUS_NOTFOUND && next_entry(f, kind, &e, &cap))
		if (strcmp(e.f[field], key) == 0)
			st = kind[0] == 'u' ? fill_passwd(&e, out, buf, len, errnop) :
					      fill_group(&e, out, buf, len, errnop);
	free(e.line);
	fclose(f);
	return st;
}

enum nss_status NSS_FN(getpwnam_r)(const char *name, struct passwd *pw, char *buf, size_t len, int *errnop)
{
	return lookup("user", 0, name, pw, buf, len, errnop);
}

/* A lookup by uid or gid: the second field, as the state file writes it. */
static enum nss_status lookup_id(const char *kind, unsigned id, void *out, char *buf, size_t len, int *errnop)
{
	char key[32];
	snprintf(key, sizeof(key), "%u", id);
	return lookup(kind, 1, key, out, buf, len, errnop);
}

enum nss_status NSS_FN(getpwuid_r)(uid_t uid, struct passwd *pw, char *buf, size_t len, int *errnop)
{
	return lookup_id("user", (unsigned)uid, pw, buf, len, errnop);
}

enum nss_status NSS_FN(getgrnam_r)(const char *name, struct group *gr, char *buf, size_t len, int *errnop)
{
	return lookup("group", 0, name, gr, buf, len, errnop);
}

enum nss_status NSS_FN(getgrgid_r)(gid_t gid, struct group *gr, char *buf, size_t len, int *errnop)
{
	return lookup_id("group", (unsigned)gid, gr, buf, len, errnop);
}

static int add_gid(gid_t g, long *start, long *size, gid_t **groups, long limit)
{
	for (long i = 0; i < *start; i++)
		if ((*groups)[i] == g)
			return 0;
	if (*start == *size) {
		if (limit > 0 && *size >= limit)
			return 0;
		long n = *size * 2;
		if (limit > 0 && n > limit)
			n = limit;
		gid_t *ng = realloc(*groups, (size_t)n * sizeof(*ng));
		if (ng == NULL)
			return -1;
		*groups = ng;
		*size = n;
	}
	(*groups)[(*start)++] = g;
	return 0;
}

/* getgrouplist's question: the groups whose member list names @user. */
enum nss_status NSS_FN(initgroups_dyn)(const char *user, gid_t skip, long *start, long *size,
				       gid_t **groups, long limit, int *errnop)
{
	enum mode m = read_mode();
	if (m == MODE_DOWN || m == MODE_GROUPS_DOWN || m == MODE_INITGROUPS_DOWN)
		return down(errnop);
	if (m == MODE_EMPTY)
		return NSS_STATUS_NOTFOUND;
	FILE *f = open_state();
	if (f == NULL)
		return down(errnop);
	struct entry e = { 0 };
	size_t cap = 0;
	int found = 0;
	while (next_entry(f, "group", &e, &cap)) {
		char *save = NULL;
		for (char *w = e.nf > 2 ? strtok_r(e.f[2], ",", &save) : NULL; w != NULL;
		     w = strtok_r(NULL, ",", &save)) {
			gid_t g = (gid_t)strtoul(e.f[1], NULL, 10);
			if (strcmp(w, user) != 0 || g == skip)
				continue;
			found = 1;
			if (add_gid(g, start, size, groups, limit) < 0) {
				free(e.line);
				fclose(f);
				*errnop = ENOMEM;
				return NSS_STATUS_TRYAGAIN;
			}
		}
	}
	free(e.line);
	fclose(f);
	return found ? NSS_STATUS_SUCCESS : NSS_STATUS_NOTFOUND;
}
