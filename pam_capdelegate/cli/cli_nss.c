/*
 * cli_nss.c - what a policy rests on in NSS (cli_nss.h). The module fails closed on every
 * answer it can see to be incomplete (cd_user.c: the probe, the second questions by name);
 * what it cannot see, this says: which lines depend on NSS being complete, and the settings of
 * this host (nsswitch.conf's order, nscd's cache, a name in /etc/group that NSS answers with
 * another gid) under which an answer can be incomplete or stale without an error.
 */
#include "config.h"

#include <ctype.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli_common.h"
#include "cli_nss.h"

#define NSSWITCH_CONF "/etc/nsswitch.conf"
#define NSCD_CONF "/etc/nscd.conf"
#define NSCD_SOCKET "/run/nscd/socket"

static int report(cli_nss_report_fn fn, void *arg, const char *id, const struct cd_rule *r,
		  const char *where, cd_capmask caps, char *text)
{
	if (text == NULL)
		return -1;
	fn(arg, id, r, where, caps, text);
	free(text);
	return 0;
}

static long narrowing_groups(const struct cd_policy *pol, cli_nss_report_fn fn, void *arg)
{
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		cd_capmask more = r->kind == CD_SUBJECT_GROUP && !cd_policy_group_named_before(pol, i) ?
				  cd_policy_group_narrows(pol, r->name) : 0;
		char *text = NULL, *caps = more ? cd_capmask_to_text(more) : NULL;
		if (more == 0)
			continue;
		if (caps == NULL || asprintf(&text, "gives less than \"*\" (%s): whoever is in no "
					     "group of the policy gets \"*\" only while NSS shows "
					     "them outside it (their group list and the group's own "
					     "entry agree), and nothing when it cannot", caps) < 0)
			text = NULL;
		free(caps);
		if (report(fn, arg, "narrowing-group", r, NULL, more, text) < 0)
			return -1;
	}
	return 0;
}

/* A narrowing group whose entry, as NSS answers it, lists no members, and that the local group
 * file does not hold so: nobody can be shown outside it, so whoever falls to "*" gets nothing
 * (pam_capdelegate(8), GROUPS). Typical of SSSD with ignore_group_members = True. */
static long memberless_narrowing(const struct cd_policy *pol, cli_nss_report_fn fn, void *arg)
{
	long warnings = 0;
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		gid_t local = 0;
		int local_members = 0;
		if (r->kind != CD_SUBJECT_GROUP || cd_policy_group_named_before(pol, i) ||
		    cd_policy_group_narrows(pol, r->name) == 0)
			continue;
		struct group *g = getgrnam(r->name);
		if (g == NULL || (g->gr_mem != NULL && g->gr_mem[0] != NULL) ||
		    (cd_local_group(r->name, &local, &local_members) && local == g->gr_gid && !local_members))
			continue;
		char *text = strdup("gives less than \"*\", and NSS answers it with no members (a "
				    "directory that leaves member lists out, such as SSSD with "
				    "ignore_group_members = True?): nobody can be shown outside it, so "
				    "whoever is in no group of the policy gets nothing");
		if (report(fn, arg, "narrowing-group-no-members", r, NULL, 0, text) < 0)
			return -1;
		warnings++;
	}
	return warnings;
}

static long names_twice(const struct cd_policy *pol, cli_nss_report_fn fn, void *arg)
{
	long warnings = 0;
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		gid_t local = 0;
		int local_members = 0;
		if (r->kind != CD_SUBJECT_GROUP || cd_policy_group_named_before(pol, i) ||
		    !cd_local_group(r->name, &local, &local_members))
			continue;
		struct group *g = getgrnam(r->name);
		if (g == NULL || g->gr_gid == local)
			continue;
		char *text = NULL;
		if (asprintf(&text, "is gid %u in /etc/group, but NSS answers gid %u: two "
			     "groups of one name; the line is NSS's gid %u, and a member of gid %u gets "
			     "nothing at all (rename one)", (unsigned)local, (unsigned)g->gr_gid,
			     (unsigned)g->gr_gid, (unsigned)local) < 0)
			text = NULL;
		if (report(fn, arg, "group-name-twice", r, NULL, 0, text) < 0)
			return -1;
		warnings++;
	}
	return warnings;
}

/* Sources whose outage nsswitch.conf's order cannot hide: files (a local file) and systemd
 * (nss-systemd: local records and the running system's dynamic users). */
static int local_source(const char *src)
{
	return strcmp(src, "files") == 0 || strcmp(src, "systemd") == 0;
}

/* One word of an action block ("[UNAVAIL=return", "TRYAGAIN=return]", "[!SUCCESS=return]"):
 * notes whether it makes an outage of its source final (UNAVAIL and TRYAGAIN both return, or
 * everything but success does). */
static void action_word(const char *w, int *unavail, int *tryagain)
{
	char item[64];
	snprintf(item, sizeof(item), "%.*s", (int)strcspn(w + (w[0] == '['), "]"), w + (w[0] == '['));
	if (strcasecmp(item, "!SUCCESS=return") == 0)
		*unavail = *tryagain = 1;
	else if (strcasecmp(item, "UNAVAIL=return") == 0)
		*unavail = 1;
	else if (strcasecmp(item, "TRYAGAIN=return") == 0)
		*tryagain = 1;
}

/* The first source of @line ("files sss [UNAVAIL=return TRYAGAIN=return] other") whose outage
 * a later source can hide: a source other than a local one, followed by another source,
 * without an action between them that makes its outage final. NULL if none; else a copy. */
static char *hidden_outage(const char *line)
{
	char *copy = strdup(line), *save = NULL, *open = NULL, *found = NULL;
	int unavail = 0, tryagain = 0, in_block = 0;
	for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w != NULL && found == NULL;
	     w = strtok_r(NULL, " \t", &save)) {
		if (in_block || w[0] == '[') {
			in_block = strchr(w, ']') == NULL;
			action_word(w, &unavail, &tryagain);
			continue;
		}
		if (open != NULL && !(unavail && tryagain))
			found = strdup(open);
		open = local_source(w) ? NULL : w;
		unavail = tryagain = 0;
	}
	free(copy);
	return found;
}

/* The text after "DB:" on nsswitch.conf's line for @db, without a comment; NULL if none. */
static char *nsswitch_line(const char *db)
{
	FILE *f = fopen(NSSWITCH_CONF, "re");
	char *line = NULL, *found = NULL;
	size_t cap = 0, len = strlen(db);
	while (f != NULL && found == NULL && getline(&line, &cap, f) > 0) {
		char *p = line + strspn(line, " \t");
		if (strncmp(p, db, len) != 0 || p[len] != ':')
			continue;
		p[len + 1 + strcspn(p + len + 1, "#\n")] = '\0';
		found = strdup(p + len + 1);
	}
	free(line);
	if (f != NULL)
		fclose(f);
	return found;
}

static long nsswitch_order(cli_nss_report_fn fn, void *arg)
{
	/* getgrouplist asks initgroups:'s sources when that line exists, the group lookups
	 * group:'s */
	static const char *const dbs[] = { "group", "initgroups" };
	long warnings = 0;
	for (size_t i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++) {
		char *line = nsswitch_line(dbs[i]);
		char *src = line != NULL ? hidden_outage(line) : NULL;
		char *text = NULL;
		free(line);
		if (src == NULL)
			continue;
		if (asprintf(&text, NSSWITCH_CONF ": %s: a source after %s answers when %s is down, "
			     "so an outage of %s can read as \"not found\" (no error): put %s last, or "
			     "write [UNAVAIL=return TRYAGAIN=return] after it", dbs[i], src, src, src,
			     src) < 0)
			text = NULL;
		free(src);
		if (report(fn, arg, "nss-order", NULL, NSSWITCH_CONF, 0, text) < 0)
			return -1;
		warnings++;
	}
	return warnings;
}

/* Does nscd.conf turn the group cache off ("enable-cache group no")? */
static int nscd_group_cache_off(void)
{
	FILE *f = fopen(NSCD_CONF, "re");
	char *line = NULL;
	size_t cap = 0;
	int off = 0;
	while (f != NULL && getline(&line, &cap, f) > 0) {
		char a[32], b[32], c[32];
		if (sscanf(line, " %31s %31s %31s", a, b, c) == 3 && strcmp(a, "enable-cache") == 0 &&
		    strcmp(b, "group") == 0)
			off = strcmp(c, "no") == 0;
	}
	free(line);
	if (f != NULL)
		fclose(f);
	return off;
}

static long nscd_cache(cli_nss_report_fn fn, void *arg)
{
	struct stat st;
	if (stat(NSCD_SOCKET, &st) != 0 || !S_ISSOCK(st.st_mode) || nscd_group_cache_off())
		return 0;
	char *text = strdup("nscd caches the group database (" NSCD_SOCKET "): a membership "
			    "change reaches logins only when its entry expires (positive-time-to-"
			    "live in " NSCD_CONF "), and during an outage nscd answers \"not found\" "
			    "(the module then grants nothing past a narrowing group); set "
			    "\"enable-cache group no\" (SSSD and winbind cache themselves)");
	if (report(fn, arg, "nscd-group-cache", NULL, NSCD_SOCKET, 0, text) < 0)
		return -1;
	return 1;
}

long cli_nss_hazards(const struct cd_policy *pol, cli_nss_report_fn fn, void *arg)
{
	if (pol->status != CD_POLICY_OK || !cd_policy_has_group_rules(pol))
		return 0;
	long parts[5];
	parts[0] = narrowing_groups(pol, fn, arg);
	parts[1] = memberless_narrowing(pol, fn, arg);
	parts[2] = names_twice(pol, fn, arg);
	parts[3] = nsswitch_order(fn, arg);
	parts[4] = nscd_cache(fn, arg);
	long warnings = 0;
	for (size_t i = 0; i < 5; i++) {
		if (parts[i] < 0)
			return -1;
		warnings += parts[i];
	}
	return warnings;
}
