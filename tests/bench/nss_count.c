/*
 * nss_count.c - LD_PRELOAD counter of the NSS requests a PAM module makes, for the directory
 * benchmark (tests/bench/directory-bench.sh). Each user and group lookup through
 * glibc's public functions (the _r ones and the others, getgrouplist, initgroups) is counted
 * per function, with the lookups that came back ERANGE (the caller's buffer was too small and
 * it asks again) and the group members the answers carried: a 20,000-member group fetched once
 * shows as 20,000. pam_bench (tests/bench/pam_bench.c) reads and resets the counts around
 * pam_authenticate and pam_setcred through nss_count_take(), found with dlsym.
 *
 * glibc's getgrgid calls its getgrgid_r inside libc, not through this library: each lookup is
 * counted once, whichever form the module calls; the retries glibc makes inside getgrgid (and
 * getpwnam, getgrnam) with a growing buffer are not seen.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nss_count.h"

static const char *const names[NSS_COUNT_FUNCS] = {
	"getpwnam", "getpwnam_r", "getpwuid", "getpwuid_r", "getgrnam", "getgrnam_r",
	"getgrgid", "getgrgid_r", "getgrouplist", "initgroups",
};
enum { PWNAM, PWNAM_R, PWUID, PWUID_R, GRNAM, GRNAM_R, GRGID, GRGID_R, GROUPLIST, INITGROUPS };

static struct nss_count counts;

void nss_count_take(struct nss_count *out);
void nss_count_take(struct nss_count *out)
{
	*out = counts;
	memset(&counts, 0, sizeof(counts));
}

const char *nss_count_name(int i);
const char *nss_count_name(int i)
{
	return i >= 0 && i < NSS_COUNT_FUNCS ? names[i] : "?";
}

static void *next(int i)
{
	void *f = dlsym(RTLD_NEXT, names[i]);
	if (f == NULL) {
		fprintf(stderr, "nss_count: no next %s\n", names[i]);
		_exit(127);
	}
	return f;
}

static void note_group(const struct group *gr)
{
	for (char **m = gr != NULL ? gr->gr_mem : NULL; m != NULL && *m != NULL; m++)
		counts.members++;
}

static void note_rc(int i, int rc)
{
	counts.calls[i]++;
	if (rc == ERANGE)
		counts.erange++;
}

struct passwd *getpwnam(const char *name)
{
	struct passwd *(*f)(const char *) = next(PWNAM);
	counts.calls[PWNAM]++;
	return f(name);
}

struct passwd *getpwuid(uid_t uid)
{
	struct passwd *(*f)(uid_t) = next(PWUID);
	counts.calls[PWUID]++;
	return f(uid);
}

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
	int (*f)(const char *, struct passwd *, char *, size_t, struct passwd **) = next(PWNAM_R);
	int rc = f(name, pw, buf, size, res);
	note_rc(PWNAM_R, rc);
	return rc;
}

int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
	int (*f)(uid_t, struct passwd *, char *, size_t, struct passwd **) = next(PWUID_R);
	int rc = f(uid, pw, buf, size, res);
	note_rc(PWUID_R, rc);
	return rc;
}

struct group *getgrnam(const char *name)
{
	struct group *(*f)(const char *) = next(GRNAM);
	struct group *gr = f(name);
	counts.calls[GRNAM]++;
	note_group(gr);
	return gr;
}

struct group *getgrgid(gid_t gid)
{
	struct group *(*f)(gid_t) = next(GRGID);
	struct group *gr = f(gid);
	counts.calls[GRGID]++;
	note_group(gr);
	return gr;
}

int getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
	int (*f)(const char *, struct group *, char *, size_t, struct group **) = next(GRNAM_R);
	int rc = f(name, gr, buf, size, res);
	note_rc(GRNAM_R, rc);
	if (rc == 0)
		note_group(*res);
	return rc;
}

int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res)
{
	int (*f)(gid_t, struct group *, char *, size_t, struct group **) = next(GRGID_R);
	int rc = f(gid, gr, buf, size, res);
	note_rc(GRGID_R, rc);
	if (rc == 0)
		note_group(*res);
	return rc;
}

int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
{
	int (*f)(const char *, gid_t, gid_t *, int *) = next(GROUPLIST);
	counts.calls[GROUPLIST]++;
	return f(user, group, groups, ngroups);
}

int initgroups(const char *user, gid_t group)
{
	int (*f)(const char *, gid_t) = next(INITGROUPS);
	counts.calls[INITGROUPS]++;
	return f(user, group);
}
