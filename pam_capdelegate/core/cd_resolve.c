/*
 * cd_resolve.c - who gets what. capdelegate.conf(5): if any line names the user, the union of
 * those lines; otherwise the union of the @group lines matching any of the user's groups;
 * otherwise the union of the "*" lines; otherwise nothing. So a user line (even "none") is the
 * way to take a user out of their groups' grants.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cd_policy.h"

const char *cd_subject_kind_str(enum cd_subject_kind kind)
{
	switch (kind) {
	case CD_SUBJECT_USER: return "user";
	case CD_SUBJECT_GROUP: return "group";
	case CD_SUBJECT_DEFAULT: return "default";
	case CD_SUBJECT_NONE: break;
	}
	return "none";
}

static int in_groups(const struct cd_user *u, const char *group)
{
	for (size_t i = 0; i < u->ngroups; i++)
		if (strcmp(u->groups[i], group) == 0)
			return 1;
	return 0;
}

/* A user line names @u: the whole canonical name, byte for byte. The first byte first: the
 * module asks this of every user line, at every login. */
static inline int names_user(const struct cd_rule *r, const struct cd_user *u)
{
	return r->name[0] == u->name[0] && strcmp(r->name, u->name) == 0;
}

/* Does the rule's subject name @u? */
static int subject_matches(const struct cd_rule *r, const struct cd_user *u)
{
	switch (r->kind) {
	case CD_SUBJECT_USER: return names_user(r, u);
	case CD_SUBJECT_GROUP: return in_groups(u, r->name);
	case CD_SUBJECT_DEFAULT: return 1;
	case CD_SUBJECT_NONE: break;
	}
	return 0;
}

static int rule_matches(const struct cd_rule *r, const struct cd_user *u, enum cd_subject_kind kind)
{
	return r->kind == kind && subject_matches(r, u);
}

int cd_rule_may_match(const struct cd_rule *rule, void *arg)
{
	const struct cd_user *u = arg;
	/* Asked of every line at every login: the user-line case first, inline. */
	if (rule->kind == CD_SUBJECT_USER)
		return names_user(rule, u);
	if (rule->kind == CD_SUBJECT_GROUP && !u->groups_loaded)
		return 1;	/* groups are looked up later, only if no user line decides */
	return subject_matches(rule, u);
}

int cd_policy_names_user(const struct cd_policy *pol, const struct cd_user *u)
{
	for (size_t i = 0; i < pol->nrules; i++)
		if (rule_matches(&pol->rules[i], u, CD_SUBJECT_USER))
			return 1;
	return 0;
}

int cd_policy_has_group_rules(const struct cd_policy *pol)
{
	for (size_t i = 0; i < pol->nrules; i++)
		if (pol->rules[i].kind == CD_SUBJECT_GROUP)
			return 1;
	return 0;
}

cd_capmask cd_policy_group_narrows(const struct cd_policy *pol, const char *group)
{
	cd_capmask all = 0, its = 0;
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		if (r->kind == CD_SUBJECT_DEFAULT)
			all |= r->caps;
		else if (r->kind == CD_SUBJECT_GROUP && strcmp(r->name, group) == 0)
			its |= r->caps;
	}
	return all & ~its;
}

int cd_policy_group_named_before(const struct cd_policy *pol, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (pol->rules[j].kind == CD_SUBJECT_GROUP && strcmp(pol->rules[j].name, pol->rules[i].name) == 0)
			return 1;
	return 0;
}

int cd_policy_needs_groups(const struct cd_policy *pol, const struct cd_user *u)
{
	return pol->status == CD_POLICY_OK && !cd_policy_names_user(pol, u) &&
	       cd_policy_has_group_rules(pol);
}

int cd_resolve(const struct cd_policy *pol, const struct cd_user *u, struct cd_grant *g)
{
	static const enum cd_subject_kind order[] = { CD_SUBJECT_USER, CD_SUBJECT_GROUP, CD_SUBJECT_DEFAULT };

	memset(g, 0, sizeof(*g));
	if (pol->status != CD_POLICY_OK || pol->nrules == 0)
		return 0;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]) && g->nmatched == 0; k++) {
		for (size_t i = 0; i < pol->nrules; i++) {
			const struct cd_rule *r = &pol->rules[i];
			if (!rule_matches(r, u, order[k]))
				continue;
			if (g->matched == NULL && (g->matched = calloc(pol->nrules, sizeof(*g->matched))) == NULL)
				return -1;
			g->matched[g->nmatched++] = r;
			g->caps |= r->caps;
			g->via = order[k];
		}
	}
	return 0;
}

void cd_grant_free(struct cd_grant *g)
{
	free(g->matched);
	memset(g, 0, sizeof(*g));
}
