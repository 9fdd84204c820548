/*
 * fuzz_policy.c - libFuzzer harness for the policy core: cd_policy_parse (the parser
 * cd_policy_load runs on a file's bytes once cd_open_safe has judged the file) and cd_resolve,
 * for a fixed set of users and groups.
 *
 * The input is the policy text, parsed from memory: no file, so no root and no filesystem in
 * the loop (the file checks have their own unit and stack tests).
 *
 * Oracles, each written here without asking the core (a violation aborts):
 *  - a rejected policy keeps no rule and grants nothing; no load logs more than the documented
 *    ten errors plus two summary lines, and every message is printable ASCII (hostile bytes are
 *    escaped);
 *  - an accepted policy is re-read by a tokenizer written here from capdelegate.conf(5): same
 *    rules, subjects, line numbers, and every capability token equals a libcap name
 *    (cap_to_name over 0..63, compared case-insensitively) or is "none";
 *  - round trip: the rules printed as policy text parse to the same rules;
 *  - cd_resolve agrees, for every fixed user, with the RESOLUTION section implemented here;
 *  - monotonicity: appending a line for another user changes nobody's grant; a user line for U
 *    decides U's set whatever U's groups say; a group line changes only its members without a
 *    user line; a "*" line only users no user or group line names;
 *  - the module's rule filter (cd_rule_may_match) keeps every rule that decides the grant;
 *  - windows (capdelegate.conf(5), WINDOWS): each line's from/until as read here (a calendar of
 *    its own, day by day), printed back with gmtime_r and read again; judged at an instant
 *    drawn from the input (each edge, a second before and after), cd_policy_at leaves exactly
 *    the lines in force and the grant is RESOLUTION's over those lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cd_policy.h"

#define CHECK(cond) do { if (!(cond)) fail(#cond, __LINE__); } while (0)
#define NCAPS 64
#define NUSERS (sizeof(users) / sizeof(users[0]))
/* capdelegate.conf(5): up to ten errors, then a count, then the verdict; and apart from them
 * up to ten warnings (names a winbind name could have meant literally), then one line. */
#define MAX_MESSAGES 12
#define MAX_WARNINGS 11

static void fail(const char *what, int line)
{
	fprintf(stderr, "fuzz_policy.c:%d: oracle violated: %s\n", line, what);
	abort();
}

/* The fixed population: the names of the man page's and the stack suite's examples. */
static char *g_alice[] = { "alice", "users" }, *g_bob[] = { "bob" },
	*g_carol[] = { "carol", "netops" }, *g_dave[] = { "dave", "netops", "audit" },
	*g_erin[] = { "erin", "netops" }, *g_root[] = { "root" }, *g_perf[] = { "perf", "audit" },
	*g_tom[] = { "users" }, *g_ops[] = { "netops", "audit", "g1" }, *g_u[] = { "g1", "g2" };
#define USER(n, id, g) { .name = n, .uid = id, .gid = id, .groups = g, \
	.ngroups = sizeof(g) / sizeof(g[0]), .groups_loaded = 1 }
static struct cd_user users[] = {
	USER("alice", 1001, g_alice), USER("bob", 1002, g_bob), USER("carol", 1003, g_carol),
	USER("dave", 1004, g_dave), USER("erin", 1005, g_erin), USER("root", 0, g_root),
	USER("perf", 1006, g_perf), USER("tom", 1007, g_tom), USER("ops", 1008, g_ops),
	USER("u", 1009, g_u),
};

static char *cap_names[NCAPS];	/* libcap's names, NULL where libcap has none */
static int ncap_names;
static size_t nmessages, nwarnings;

static void sink(void *arg, int priority, const char *msg)
{
	(void)arg;
	if (priority == LOG_WARNING)
		nwarnings++;
	else
		nmessages++;
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		CHECK(*p >= 0x20 && *p < 0x7f);
}

static struct cd_log quiet = { .sink = sink };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (int c = 0; c < NCAPS; c++) {
		char *n = cap_to_name(c);
		/* libcap spells a capability it has no name for as its number. */
		if (n != NULL && ((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z'))) {
			cap_names[c] = strdup(n);
			ncap_names++;
		}
		cap_free(n);
	}
	return 0;
}

static enum cd_status load_max(struct cd_policy *pol, const char *text, size_t len,
			       cd_rule_filter keep, void *keep_arg, size_t max_bytes)
{
	struct cd_load_opts o = { .owner = geteuid(), .keep = keep, .keep_arg = keep_arg,
				  .max_bytes = max_bytes };
	nmessages = nwarnings = 0;
	enum cd_status st = cd_policy_parse(pol, "policy.conf", text, len, &o, &quiet);
	CHECK(nmessages <= MAX_MESSAGES);
	CHECK(nwarnings <= MAX_WARNINGS);
	CHECK(nwarnings == (pol->nwarnings < MAX_WARNINGS ? pol->nwarnings : MAX_WARNINGS));
	CHECK((st == CD_POLICY_OK) == (pol->status == CD_POLICY_OK));
	if (st != CD_POLICY_OK)
		CHECK(pol->nrules == 0);
	return st;
}

static enum cd_status load(struct cd_policy *pol, const char *text, size_t len,
			   cd_rule_filter keep, void *keep_arg)
{
	return load_max(pol, text, len, keep, keep_arg, 0);
}

/* A policy over the size limit is refused whatever it says; at or under it, the limit
 * changes nothing. */
static void check_size_limit(const char *text, size_t size, enum cd_status full, uint64_t h)
{
	size_t max = 1 + (size_t)(h >> 52) % (size + 1);
	struct cd_policy pol;
	enum cd_status st = load_max(&pol, text, size, NULL, NULL, max);
	CHECK(size > max ? st == CD_POLICY_UNSAFE : st == full);
	cd_policy_free(&pol);
}

static uint64_t hash(const uint8_t *d, size_t n)
{
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 1099511628211u;
	return h;
}

/* ---- the reference reading of an accepted policy ------------------------------------- */

struct ref_rule {
	enum cd_subject_kind kind;
	char name[257];		/* decoded: "\ooo" escapes replaced by their byte */
	size_t namelen;
	cd_capmask caps;
	size_t line;
	int has_from, has_until;
	int64_t from, until;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* capdelegate.conf(5): letters, digits, _ . - as they are, '@' but not first, '\' (itself
 * unless three octal digits follow, then it is the byte they say, never NUL or a control
 * character), '$' only last; decoded: not starting with - or @, not only "$", <= 256 bytes.
 * Decodes @s..@len into @out; 0 if the name is not one. */
static int good_name(const char *s, size_t len, char *out, size_t *outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
		    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			int b = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
			if (b < 0x20 || b == 0x7f)
				return 0;
			c = (unsigned char)b;
			i += 3;
		} else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			     c == '_' || c == '.' || c == '-' || c == '\\' || (c == '@' && i > 0) ||
			     (c == '$' && i == len - 1))) {
			return 0;
		}
		if (o == 256)
			return 0;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	*outlen = o;
	return o > 0 && out[0] != '-' && out[0] != '@' && !(o == 1 && out[0] == '$');
}

/* One capability token: its bit, or abort if it is no libcap name. "none" is 0. */
static cd_capmask token_caps(const char *t, size_t len)
{
	if (len == 4 && strncasecmp(t, "none", 4) == 0)
		return 0;
	for (int c = 0; c < NCAPS; c++)
		if (cap_names[c] != NULL && strlen(cap_names[c]) == len &&
		    strncasecmp(cap_names[c], t, len) == 0)
			return (cd_capmask)1 << c;
	fprintf(stderr, "accepted capability token '%.*s' is no libcap name\n", (int)len, t);
	fail("every accepted capability token is a libcap name", __LINE__);
	return 0;
}

/* A window's TIME, read the simple way: YYYY-MM-DDTHH:MM[:SS]Z, counted day by day from 1970.
 * Aborts when an accepted policy holds a time this reading refuses. */
static int64_t ref_time(const char *t, size_t len)
{
	int y, mo, d, h, mi, sec = 0, n = 0;
	char buf[32];
	CHECK(len == 17 || len == 20);
	memcpy(buf, t, len);
	buf[len] = '\0';
	if (len == 17)
		CHECK(sscanf(buf, "%4d-%2d-%2dT%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &n) == 5);
	else
		CHECK(sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &n) == 6);
	CHECK((size_t)n == len);
	for (size_t i = 0; i < len; i++)
		CHECK(strchr("0123456789-T:Z", t[i]) != NULL);
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	CHECK(y >= 1970 && mo >= 1 && mo <= 12 && d >= 1 &&
	      d <= mdays[mo - 1] + (mo == 2 && leap) && h < 24 && mi < 60 && sec < 60);
	int64_t days = 0;
	for (int k = 1970; k < y; k++)
		days += 365 + ((k % 4 == 0 && k % 100 != 0) || k % 400 == 0);
	for (int k = 1; k < mo; k++)
		days += mdays[k - 1] + (k == 2 && leap);
	days += d - 1;
	return days * 86400 + h * 3600 + mi * 60 + sec;
}

/* The window after the capabilities, l[i..len): "from TIME", "until TIME", in either order. */
static void ref_window(const char *l, size_t i, size_t len, struct ref_rule *r)
{
	while (i < len) {
		while (i < len && is_blank(l[i]))
			i++;
		size_t w = i;
		while (i < len && !is_blank(l[i]))
			i++;
		int from = i - w == 4 && memcmp(l + w, "from", 4) == 0;
		CHECK(from || (i - w == 5 && memcmp(l + w, "until", 5) == 0));
		while (i < len && is_blank(l[i]))
			i++;
		size_t t = i;
		while (i < len && !is_blank(l[i]))
			i++;
		CHECK(from ? !r->has_from : !r->has_until);
		if (from) {
			r->has_from = 1;
			r->from = ref_time(l + t, i - t);
		} else {
			r->has_until = 1;
			r->until = ref_time(l + t, i - t);
		}
		while (i < len && is_blank(l[i]))
			i++;
	}
	CHECK(!(r->has_from && r->has_until) || r->until > r->from);
}

/* Read an accepted policy the simple way; returns the number of rules written to @out. */
static size_t ref_parse(const char *text, size_t size, struct ref_rule *out, size_t *nlines)
{
	size_t n = 0;
	*nlines = 0;
	for (size_t pos = 0; pos < size;) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - text) : size, len = end - pos;
		const char *l = text + pos;
		size_t line = ++*nlines;
		pos = end + 1;
		if (len > 0 && l[len - 1] == '\r')
			len--;
		const char *hash = memchr(l, '#', len);
		if (hash != NULL)
			len = (size_t)(hash - l);
		while (len > 0 && is_blank(l[len - 1]))
			len--;
		size_t i = 0;
		while (i < len && is_blank(l[i]))
			i++;
		if (i == len)
			continue;
		struct ref_rule *r = &out[n++];
		size_t s = i;
		while (i < len && !is_blank(l[i]))
			i++;
		r->line = line;
		r->namelen = 0;
		if (i - s == 1 && l[s] == '*') {
			r->kind = CD_SUBJECT_DEFAULT;
		} else if (l[s] == '@') {
			r->kind = CD_SUBJECT_GROUP;
			CHECK(good_name(l + s + 1, i - s - 1, r->name, &r->namelen));
		} else {
			r->kind = CD_SUBJECT_USER;
			CHECK(good_name(l + s, i - s, r->name, &r->namelen));
		}
		/* The rest: tokens separated by commas, blanks around them, up to a window. */
		r->caps = 0;
		r->has_from = r->has_until = 0;
		size_t ntok = 0, nnone = 0;
		while (i < len) {
			while (i < len && (is_blank(l[i]) || l[i] == ','))
				i++;
			size_t t = i;
			while (i < len && !is_blank(l[i]) && l[i] != ',')
				i++;
			if (i == t)
				break;
			if (is_blank(l[t - 1]) && ((i - t == 4 && memcmp(l + t, "from", 4) == 0) ||
						   (i - t == 5 && memcmp(l + t, "until", 5) == 0))) {
				ref_window(l, t, len, r);
				break;
			}
			cd_capmask m = token_caps(l + t, i - t);
			nnone += m == 0;
			ntok++;
			r->caps |= m;
		}
		CHECK(ntok > 0 && (nnone == 0 || ntok == 1));
	}
	return n;
}

static void same_rules(const struct cd_policy *pol, const struct ref_rule *ref, size_t n)
{
	CHECK(pol->nrules == n);
	for (size_t i = 0; i < n; i++) {
		const struct cd_rule *r = &pol->rules[i];
		CHECK(r->kind == ref[i].kind && r->caps == ref[i].caps && r->line == ref[i].line);
		CHECK(r->has_from == ref[i].has_from && r->has_until == ref[i].has_until);
		CHECK(!r->has_from || r->from == ref[i].from);
		CHECK(!r->has_until || r->until == ref[i].until);
		if (r->kind == CD_SUBJECT_DEFAULT)
			CHECK(r->name == NULL);
		else
			CHECK(strlen(r->name) == ref[i].namelen &&
			      memcmp(r->name, ref[i].name, ref[i].namelen) == 0);
	}
}

/* ---- printing rules back as policy text --------------------------------------------- */

static char *print_rules(const struct cd_policy *pol, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	CHECK(f != NULL);
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		char form[4 * 256 + 4];
		if (r->kind != CD_SUBJECT_DEFAULT)
			cd_name_form(form, sizeof(form), r->name, 256);
		fprintf(f, "%s%s\t", r->kind == CD_SUBJECT_GROUP ? "@" : "",
			r->kind == CD_SUBJECT_DEFAULT ? "*" : form);
		if (r->caps == 0)
			fputs("none", f);
		for (int c = 0, first = 1; c < NCAPS; c++) {
			if (!(r->caps & ((cd_capmask)1 << c)))
				continue;
			CHECK(cap_names[c] != NULL);
			fprintf(f, "%s%s", first ? "" : ", ", cap_names[c]);
			first = 0;
		}
		/* the window, printed by the C library's calendar (gmtime_r reads no TZ) */
		const int64_t *bound[2] = { r->has_from ? &r->from : NULL, r->has_until ? &r->until : NULL };
		for (int k = 0; k < 2; k++) {
			if (bound[k] == NULL)
				continue;
			time_t t = (time_t)*bound[k];
			struct tm tm;
			CHECK(gmtime_r(&t, &tm) != NULL);
			fprintf(f, " %s %04d-%02d-%02dT%02d:%02d:%02dZ", k ? "until" : "from",
				tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
			/* and the core's printer reads back to the same second */
			char buf[32];
			int64_t back;
			const char *why;
			cd_time_format(*bound[k], buf, sizeof(buf));
			CHECK(cd_time_parse(buf, strlen(buf), &back, &why) == 0 && back == *bound[k]);
		}
		fputc('\n', f);

		/* The core's own printer (what explain and the module's log print) reads back too. */
		char *t = cd_capmask_to_text(r->caps);
		cd_capmask back;
		const char *why;
		CHECK(t != NULL && cd_parse_caps(t, strlen(t), &back, &why) == 0 && back == r->caps);
		free(t);
	}
	CHECK(fclose(f) == 0);
	return buf;
}

/* ---- resolution ---------------------------------------------------------------------- */

struct result {
	cd_capmask caps;
	enum cd_subject_kind via;
};

static int member(const struct cd_user *u, const char *group)
{
	for (size_t i = 0; i < u->ngroups; i++)
		if (strcmp(u->groups[i], group) == 0)
			return 1;
	return 0;
}

/* capdelegate.conf(5), RESOLUTION. */
static struct result ref_resolve(const struct cd_policy *pol, const struct cd_user *u)
{
	struct result by[3] = { { 0, CD_SUBJECT_USER }, { 0, CD_SUBJECT_GROUP }, { 0, CD_SUBJECT_DEFAULT } };
	int seen[3] = { 0, 0, 0 };
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		int k = r->kind == CD_SUBJECT_USER ? 0 : r->kind == CD_SUBJECT_GROUP ? 1 : 2;
		if ((k == 0 && strcmp(r->name, u->name) == 0) || (k == 1 && member(u, r->name)) || k == 2) {
			by[k].caps |= r->caps;
			seen[k] = 1;
		}
	}
	for (int k = 0; k < 3; k++)
		if (seen[k])
			return by[k];
	return (struct result){ 0, CD_SUBJECT_NONE };
}

static struct result resolve(const struct cd_policy *pol, const struct cd_user *u)
{
	struct cd_grant g;
	CHECK(cd_resolve(pol, u, &g) == 0);
	struct result r = { g.caps, g.via };
	/* The rules it names are rules of this policy, in file order, of the deciding kind. */
	for (size_t i = 0; i < g.nmatched; i++) {
		CHECK(g.matched[i] >= pol->rules && g.matched[i] < pol->rules + pol->nrules);
		CHECK(i == 0 || g.matched[i] > g.matched[i - 1]);
		CHECK((g.matched[i]->caps & ~g.caps) == 0);
	}
	CHECK((g.nmatched == 0) == (g.via == CD_SUBJECT_NONE));
	cd_grant_free(&g);
	return r;
}

/* RESOLUTION over the lines in force at @now, by the windows' own definition: in force from
 * `from` (included) until `until` (excluded). */
static struct result ref_resolve_at(const struct cd_policy *pol, const struct cd_user *u, int64_t now)
{
	struct cd_policy in_force = *pol;
	struct cd_rule *kept = calloc(pol->nrules + 1, sizeof(*kept));
	CHECK(kept != NULL);
	in_force.nrules = 0;
	for (size_t i = 0; i < pol->nrules; i++) {
		const struct cd_rule *r = &pol->rules[i];
		if ((!r->has_from || now >= r->from) && (!r->has_until || now < r->until))
			kept[in_force.nrules++] = *r;
	}
	in_force.rules = kept;
	struct result res = ref_resolve(&in_force, u);
	free(kept);
	return res;
}

/* The policy judged at an instant drawn from @h: an edge of one of its windows, a second
 * before or after it, or a time far from every edge. */
static void check_windows(const char *t, size_t tlen, const struct cd_policy *full, uint64_t h)
{
	int64_t now = 1893456000;	/* 2030-01-01T00:00Z */
	if (full->nrules > 0) {
		const struct cd_rule *r = &full->rules[(h >> 12) % full->nrules];
		int64_t edge = r->has_from ? r->from : r->has_until ? r->until : now;
		if (r->has_until && ((h >> 20) & 1))
			edge = r->until;
		now = edge + (int64_t)((h >> 21) % 3) - 1;
	}
	struct cd_policy pol;
	CHECK(load(&pol, t, tlen, NULL, NULL) == CD_POLICY_OK);
	CHECK(cd_policy_at(&pol, now) == 0);
	CHECK(pol.nrules + pol.noutside == full->nrules);
	for (size_t i = 0, a = 0, b = 0; i < full->nrules; i++) {
		const struct cd_rule *r = &full->rules[i];
		int in = (!r->has_from || now >= r->from) && (!r->has_until || now < r->until);
		const struct cd_rule *got = in ? &pol.rules[a++] : &pol.outside[b++];
		CHECK(in ? a <= pol.nrules : b <= pol.noutside);
		/* @t is the policy printed back: its rule i is on line i + 1 */
		CHECK(got->line == i + 1 && got->kind == r->kind && got->caps == r->caps);
	}
	for (size_t i = 0; i < NUSERS; i++) {
		struct result got = resolve(&pol, &users[i]), want = ref_resolve_at(full, &users[i], now);
		CHECK(got.caps == want.caps && got.via == want.via);
	}
	/* until the next edge, the verdicts stay: the module caches a grant that long */
	int64_t next = cd_policy_next_edge(&pol, now);
	CHECK(next > now);
	for (size_t i = 0; i < full->nrules; i++) {
		const struct cd_rule *r = &full->rules[i];
		CHECK(!r->has_from || r->from <= now || r->from >= next);
		CHECK(!r->has_until || r->until <= now || r->until >= next);
	}
	cd_policy_free(&pol);
}

/* Also the module's shortcuts: "does a user line decide?" and "are groups needed at all?". */
static void resolve_all(const struct cd_policy *pol, struct result *out)
{
	int groups = 0;
	for (size_t i = 0; i < pol->nrules; i++)
		groups |= pol->rules[i].kind == CD_SUBJECT_GROUP;
	CHECK(!!cd_policy_has_group_rules(pol) == groups);
	for (size_t i = 0; i < NUSERS; i++) {
		out[i] = resolve(pol, &users[i]);
		struct result want = ref_resolve(pol, &users[i]);
		CHECK(out[i].caps == want.caps && out[i].via == want.via);
		CHECK(!!cd_policy_names_user(pol, &users[i]) == (want.via == CD_SUBJECT_USER));
	}
}


/* One more line appended to the canonical text @t, and what it must do to each user. */
static void check_appended(const char *t, size_t tlen, const struct result *before, uint64_t h)
{
	const struct cd_user *u = &users[h % NUSERS];
	const char *group = u->groups[(h >> 8) % u->ngroups];
	int cap = (int)((h >> 16) % NCAPS);
	while (cap_names[cap] == NULL)
		cap = (cap + 1) % NCAPS;
	cd_capmask bit = (cd_capmask)1 << cap;
	int what = (int)((h >> 24) % 5);
	char line[512];
	switch (what) {
	case 0: snprintf(line, sizeof(line), "nobody-else %s\n", cap_names[cap]); break;
	case 1: snprintf(line, sizeof(line), "%s %s\n", u->name, cap_names[cap]); break;
	case 2: snprintf(line, sizeof(line), "%s none\n", u->name); break;
	case 3: snprintf(line, sizeof(line), "@%s %s\n", group, cap_names[cap]); break;
	default: snprintf(line, sizeof(line), "* %s\n", cap_names[cap]); break;
	}
	size_t llen = strlen(line);
	char *text = malloc(tlen + llen);
	memcpy(text, t, tlen);
	memcpy(text + tlen, line, llen);

	struct cd_policy pol;
	CHECK(load(&pol, text, tlen + llen, NULL, NULL) == CD_POLICY_OK);
	for (size_t i = 0; i < NUSERS; i++) {
		const struct cd_user *v = &users[i];
		struct result was = before[i], now = resolve(&pol, v), want = was;
		switch (what) {
		case 1: case 2:	/* a user line decides over groups and "*" */
			if (v == u)
				want = (struct result){ (was.via == CD_SUBJECT_USER ? was.caps : 0) |
							(what == 1 ? bit : 0), CD_SUBJECT_USER };
			break;
		case 3:
			if (was.via != CD_SUBJECT_USER && member(v, group))
				want = (struct result){ (was.via == CD_SUBJECT_GROUP ? was.caps : 0) | bit,
							CD_SUBJECT_GROUP };
			break;
		case 4:
			if (was.via == CD_SUBJECT_DEFAULT || was.via == CD_SUBJECT_NONE)
				want = (struct result){ was.caps | bit, CD_SUBJECT_DEFAULT };
			break;
		}
		CHECK(now.caps == want.caps && now.via == want.via);
	}
	cd_policy_free(&pol);
	free(text);
}

/* The module keeps only the rules that may match the user logging in, looking groups up only
 * if no user line decides: that must not change the grant. */
static void check_filtered(const char *t, size_t tlen, const struct result *full, uint64_t h)
{
	size_t i = (h >> 32) % NUSERS;
	struct cd_user u = users[i];
	u.groups_loaded = (h >> 40) & 1;
	struct cd_policy pol;
	CHECK(load(&pol, t, tlen, cd_rule_may_match, &u) == CD_POLICY_OK);
	struct result r = resolve(&pol, &users[i]);
	CHECK(r.caps == full[i].caps && r.via == full[i].via);
	cd_policy_free(&pol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct cd_policy pol;
	struct result res[NUSERS], again[NUSERS];
	uint64_t h = hash(data, size);

	enum cd_status st = load(&pol, text, size, NULL, NULL);
	if ((h >> 48 & 7) == 0)	/* one input in eight: a file judged once more costs a load */
		check_size_limit(text, size, st, h);
	if (st != CD_POLICY_OK) {
		for (size_t i = 0; i < NUSERS; i++) {
			struct result r = resolve(&pol, &users[i]);
			CHECK(r.caps == 0 && r.via == CD_SUBJECT_NONE);
		}
		cd_policy_free(&pol);
		return 0;
	}
	CHECK(memchr(text, '\0', size) == NULL);

	struct ref_rule *ref = calloc(size / 2 + 1, sizeof(*ref));	/* a rule takes >= 3 bytes */
	size_t nlines, nref = ref_parse(text, size, ref, &nlines);
	CHECK(pol.nlines == nlines);
	same_rules(&pol, ref, nref);
	free(ref);
	resolve_all(&pol, res);

	/* Round trip: print, parse again, same rules (now on lines 1..n), same grants. */
	size_t tlen;
	char *t = print_rules(&pol, &tlen);
	struct cd_policy pol2;
	CHECK(load(&pol2, t, tlen, NULL, NULL) == CD_POLICY_OK);
	CHECK(pol2.nrules == pol.nrules);
	for (size_t i = 0; i < pol.nrules; i++) {
		const struct cd_rule *a = &pol.rules[i], *b = &pol2.rules[i];
		CHECK(a->kind == b->kind && a->caps == b->caps && b->line == i + 1);
		CHECK(a->has_from == b->has_from && a->has_until == b->has_until);
		CHECK((!a->has_from || a->from == b->from) && (!a->has_until || a->until == b->until));
		CHECK(a->kind == CD_SUBJECT_DEFAULT || strcmp(a->name, b->name) == 0);
	}
	resolve_all(&pol2, again);
	for (size_t i = 0; i < NUSERS; i++)
		CHECK(again[i].caps == res[i].caps && again[i].via == res[i].via);
	cd_policy_free(&pol2);

	check_appended(t, tlen, res, h);
	check_filtered(t, tlen, res, h);
	check_windows(t, tlen, &pol, h);
	free(t);
	cd_policy_free(&pol);
	return 0;
}
