/*
 * cli_import.c - `capdelegate import-pam-cap [FILE]`: translate pam_cap's capability.conf into
 * capdelegate.conf(5) on stdout, and say on stderr, line by line and user by user, where the
 * meaning differs.
 *
 * What pam_cap does (libcap's pam_cap/pam_cap.c, as in Debian 12's libpam-cap 2.66): it reads
 * the file with fgets into 4096 bytes, so a longer line is read as several; it splits each piece
 * at spaces, tabs and newlines (not '\r'); a first word starting with '#' makes a comment, any
 * other first word is the capability text ("all", "none" or cap_iab_from_text's IAB text), every
 * further word a subject: "*", the user's name, or any word whose text after its first byte is
 * one of the user's groups ("@netops", and also "xnetops"). The first piece with a matching word
 * decides, even when libcap cannot parse its capability text. capdelegate instead unions a
 * user's own lines, else their groups' lines, else the "*" lines.
 *
 * The translation keeps pam_cap's words as they are; the comparison runs pam_cap's rule for
 * every user NSS lists and resolves the translation through the core (cd_resolve), the code the
 * module runs. Nothing is guessed: what has no equivalent is left as a comment and listed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "cli_common.h"
#include "cli_out.h"

#define PAM_CAP_DEFAULT_CONFIG "/etc/security/capability.conf"
/* pam_cap's CAP_FILE_BUFFER_SIZE: fgets returns at most 4095 bytes per call. */
#define PAM_CAP_PIECE (4096 - 1)
#define PAM_CAP_BLANKS " \t\n"

static const char usage[] =
	"usage: capdelegate import-pam-cap [FILE]\n"
	"\n"
	"Translate pam_cap's capability.conf (default " PAM_CAP_DEFAULT_CONFIG ") into a\n"
	"capdelegate.conf(5) on stdout. On stderr: every difference in meaning (first matching line\n"
	"vs. lines that add up, all, !cap, ^cap, long lines, words that are no name) and every user\n"
	"NSS lists whose set would differ. Exit 0: the same for every known user. 1: differences.\n"
	"2: errors. See capdelegate(8) and \"Coming from pam_cap\" in capdelegate.conf(5).\n";

/* What pam_cap does with a capability text (set_capabilities in pam_cap.c). */
struct pc_caps {
	enum { PC_SET, PC_NONE, PC_ALL, PC_BAD } what;
	cd_capmask inh, amb, bnd;	/* PC_SET: the IAB vectors */
};

/* One piece as pam_cap's fgets returns it, with a rule on it. */
struct pc_rule {
	size_t line;
	char **words;	/* words[0] is the capability text */
	size_t nwords;
	struct pc_caps caps;
};

struct import {
	const char *path;
	struct pc_rule *rules;	/* pam_cap's rules, as pam_cap reads the file */
	size_t nrules;
	char **seen;		/* subject words of earlier lines: later ones never apply */
	size_t nseen;
	int seen_star;
	char **bufs;		/* the line copies those words point into */
	size_t nbufs;
	FILE *out;		/* the translation, in memory until it has been checked */
	char *text;
	size_t len;
	size_t *origin;		/* the source line of each line of the translation */
	size_t nout;
	size_t differences;
	int failed;		/* out of memory */
};

static void where(const struct import *im, const char *kind, size_t line)
{
	fprintf(stderr, "capdelegate: %s: ", kind);
	cli_text_escape(stderr, im->path);
	if (line)
		fprintf(stderr, ":%zu", line);
	fputs(": ", stderr);
}

/* A difference in meaning: counted, so the exit status says the translation is not exact. */
static void differ(struct import *im, size_t line)
{
	im->differences++;
	where(im, "difference", line);
}

static void *grow(void *p, size_t n, size_t size, struct import *im)
{
	void *q = reallocarray(p, n, size);
	if (q == NULL)
		im->failed = 1;
	return q;
}

static void own(struct import *im, char *buf)
{
	char **nb = buf ? grow(im->bufs, im->nbufs + 1, sizeof(*nb), im) : NULL;
	if (nb == NULL) {
		free(buf);
		return;
	}
	im->bufs = nb;
	im->bufs[im->nbufs++] = buf;
}

/* ---- pam_cap's reading ------------------------------------------------------------------ */

static struct pc_caps parse_caps(const char *text)
{
	struct pc_caps c = { .what = PC_SET };
	if (strcmp(text, "all") == 0) {
		c.what = PC_ALL;	/* pam_cap: "no change/pass through" */
		return c;
	}
	if (strcmp(text, "none") == 0) {
		c.what = PC_NONE;
		return c;
	}
	cap_iab_t iab = cap_iab_from_text(text);
	if (iab == NULL) {
		c.what = PC_BAD;
		return c;
	}
	for (cap_value_t v = 0; v < 64; v++) {
		cd_capmask bit = (cd_capmask)1 << v;
		if (cap_iab_get_vector(iab, CAP_IAB_INH, v) == CAP_SET)
			c.inh |= bit;
		if (cap_iab_get_vector(iab, CAP_IAB_AMB, v) == CAP_SET)
			c.amb |= bit;
		if (cap_iab_get_vector(iab, CAP_IAB_BOUND, v) == CAP_SET)
			c.bnd |= bit;
	}
	cap_free(iab);
	return c;
}

/* Split @s (NUL-terminated, modified) at pam_cap's blanks. */
static char **split_words(char *s, size_t *n, struct import *im)
{
	char **w = NULL, *save = NULL;
	*n = 0;
	for (char *t = strtok_r(s, PAM_CAP_BLANKS, &save); t; t = strtok_r(NULL, PAM_CAP_BLANKS, &save)) {
		char **nw = grow(w, *n + 1, sizeof(*w), im);
		if (nw == NULL)
			break;
		w = nw;
		w[(*n)++] = t;
	}
	return w;
}

/* pam_cap's view of one line: fgets pieces of at most 4095 bytes, each a C string (a NUL byte
 * ends what strtok sees). Every piece with a rule on it joins im->rules. */
static void add_pieces(struct import *im, size_t lineno, const char *line, size_t len)
{
	for (size_t at = 0; at < len; at += PAM_CAP_PIECE) {
		size_t n = len - at < PAM_CAP_PIECE ? len - at : PAM_CAP_PIECE;
		char *piece = strndup(line + at, n);	/* stops at a NUL, as strtok would */
		struct pc_rule r = { .line = lineno };
		if (piece == NULL) {
			im->failed = 1;
			return;
		}
		r.words = split_words(piece, &r.nwords, im);
		if (r.nwords == 0 || r.words[0][0] == '#') {
			free(r.words);
			free(piece);
			continue;
		}
		struct pc_rule *nr = grow(im->rules, im->nrules + 1, sizeof(*nr), im);
		if (nr == NULL) {
			free(r.words);
			free(piece);
			return;
		}
		r.caps = parse_caps(r.words[0]);
		im->rules = nr;
		im->rules[im->nrules++] = r;	/* r.words[0] points at the start of piece */
	}
}

/* ---- the translation -------------------------------------------------------------------- */

static void out_line(struct import *im, size_t source)
{
	fputc('\n', im->out);
	size_t *no = grow(im->origin, im->nout + 1, sizeof(*no), im);
	if (no != NULL) {
		im->origin = no;
		im->origin[im->nout++] = source;
	}
}

static void silent(void *arg, int priority, const char *msg)
{
	(void)arg, (void)priority, (void)msg;
}

/* Does @line, alone, parse as a policy the core accepts, with one rule for @kind/@name (or no
 * rule when @name is NULL and @kind < 0)? The core is the judge of what capdelegate.conf(5)
 * accepts, so the translation never drifts from the grammar. */
static int core_accepts(const char *line, int kind, const char *name)
{
	struct cd_log log = { .sink = silent };
	struct cd_load_opts opts = { .owner = 0 };
	struct cd_policy pol;
	enum cd_status st = cd_policy_parse(&pol, "import", line, strlen(line), &opts, &log);
	int ok = st == CD_POLICY_OK;
	if (ok && kind < 0)
		ok = pol.nrules == 0;
	else if (ok)
		ok = pol.nrules == 1 && (int)pol.rules[0].kind == kind &&
		     (name == NULL || strcmp(pol.rules[0].name, name) == 0);
	cd_policy_free(&pol);
	return ok;
}

/* The policy's form of a pam_cap subject word into @form, or -1 when capdelegate.conf(5) cannot
 * say it (a control byte, a name too long, a leading '-'). */
static int subject_form(const char *word, char *form, size_t size)
{
	int kind = CD_SUBJECT_USER;
	const char *name = word;
	if (strcmp(word, "*") == 0) {
		snprintf(form, size, "*");
		kind = CD_SUBJECT_DEFAULT;
		name = NULL;
	} else {
		if (word[0] == '@') {
			kind = CD_SUBJECT_GROUP;
			name++;
		}
		form[0] = '@';
		cd_name_form(form + (kind == CD_SUBJECT_GROUP), size - 1, name, CD_MAX_NAME_LEN + 1);
	}
	char *probe = NULL;
	if (asprintf(&probe, "%s none\n", form) < 0)
		return -1;
	int ok = core_accepts(probe, kind, name);
	free(probe);
	return ok ? 0 : -1;
}

static int seen_before(struct import *im, const char *word)
{
	for (size_t i = 0; i < im->nseen; i++)
		if (strcmp(im->seen[i], word) == 0)
			return 1;
	return 0;
}

static void remember(struct import *im, char *word)
{
	char **ns = grow(im->seen, im->nseen + 1, sizeof(*ns), im);
	if (ns != NULL) {
		im->seen = ns;
		im->seen[im->nseen++] = word;
	}
	if (strcmp(word, "*") == 0)
		im->seen_star = 1;
}

static void print_word(FILE *f, const char *w)
{
	fputc('\'', f);
	cli_text_escape(f, w);
	fputc('\'', f);
}

/* A comment or blank line of the translation: as it is when the core reads it as one (tabs and
 * UTF-8 stay readable), else escaped. */
static void keep_comment(struct import *im, size_t lineno, const char *prefix, const char *line)
{
	char *probe = NULL;
	if (asprintf(&probe, "%s%s\n", prefix, line) < 0) {
		im->failed = 1;
		return;
	}
	if (core_accepts(probe, -1, NULL)) {
		fputs(prefix, im->out);
		fputs(line, im->out);
	} else {
		fputs(prefix[0] ? prefix : "# ", im->out);
		cli_text_escape(im->out, line);
	}
	free(probe);
	out_line(im, lineno);
}

/* One subject word of a rule line: a policy line, or a comment and the reason on stderr. */
static void translate_subject(struct import *im, size_t lineno, char *word, const char *caps)
{
	char form[4 * (CD_MAX_NAME_LEN + 1) + 8];
	if (im->seen_star || seen_before(im, word)) {
		/* Exact, not a guess: whoever this word matches was matched on an earlier line, where
		 * pam_cap stopped. Kept out, or capdelegate would add the two lines up. */
		where(im, "note", lineno);
		print_word(stderr, word);
		fputs(im->seen_star ? " comes after a '*' line" : " was matched on an earlier line",
		      stderr);
		fputs(": pam_cap never applies this line to it; left as a comment\n", stderr);
		fputs("# (matched earlier) ", im->out);
		cli_text_escape(im->out, word);
		fprintf(im->out, " %s", caps);
		out_line(im, lineno);
		remember(im, word);
		return;
	}
	remember(im, word);
	if (cd_cap_from_name(word, strlen(word)) >= 0) {
		/* "cap_a, cap_b alice": pam_cap splits at blanks, so cap_b is a user to it, too */
		where(im, "note", lineno);
		print_word(stderr, word);
		fputs(" is a capability in the user column (pam_cap splits at blanks): translated as "
		      "the user pam_cap takes it for\n", stderr);
	}
	if (subject_form(word, form, sizeof(form)) < 0) {
		differ(im, lineno);
		print_word(stderr, word);
		fputs(" is no name capdelegate.conf(5) can write (a control byte, a leading '-', "
		      "too long): left as a comment\n", stderr);
		fputs("# (not a name) ", im->out);
		cli_text_escape(im->out, word);
		fprintf(im->out, " %s", caps);
		out_line(im, lineno);
		return;
	}
	fprintf(im->out, "%-15s %s", form, caps);
	out_line(im, lineno);
}

/* Only capabilities libcap names: a bit without a name cannot be written in a policy. */
static char *caps_text(struct import *im, size_t lineno, cd_capmask m)
{
	cd_capmask named = 0;
	for (int cap = 0; cap < 64; cap++)
		if ((m & ((cd_capmask)1 << cap)) && cd_cap_name(cap) != NULL)
			named |= (cd_capmask)1 << cap;
	if (named != m) {
		differ(im, lineno);
		fputs("capabilities without a name in this libcap are left out\n", stderr);
	}
	char *t = cd_capmask_to_text(named);
	if (t == NULL)
		im->failed = 1;
	return t;
}

/* The ambient and bounding parts of an IAB text: listed, never translated. */
static void report_iab_extras(struct import *im, size_t lineno, const struct pc_caps *c)
{
	if (c->amb) {
		differ(im, lineno);
		fputs("^ (ambient) ", stderr);
		cli_print_caps(stderr, c->amb);
		fputs(": no equivalent, the inheritable part is translated, the ambient part is "
		      "not (capdelegate.conf(5), \"Coming from pam_cap\")\n", stderr);
	}
	if (c->bnd) {
		differ(im, lineno);
		fputs("! (bounding set drop) ", stderr);
		cli_print_caps(stderr, c->bnd);
		fputs(": no equivalent, not translated\n", stderr);
	}
}

/* Why a rule line's capability text has no translation, or NULL. */
static const char *untranslatable(const struct pc_caps *c)
{
	if (c->what == PC_ALL)
		return "'all' leaves the inheritable set as login holds it: no equivalent";
	if (c->what == PC_BAD)
		return "libcap cannot parse the capability text: pam_cap changes nothing for the users "
		       "it names (and looks no further): no equivalent";
	return NULL;
}

/* A line with a rule: one policy line per subject word, in pam_cap's order. */
static void translate_rule(struct import *im, size_t lineno, char *line, char **w, size_t n)
{
	struct pc_caps c = parse_caps(w[0]);
	const char *why = untranslatable(&c);
	if (why != NULL || n == 1) {
		if (why != NULL) {
			differ(im, lineno);
			fprintf(stderr, "%s; left as a comment\n", why);
		} else {
			where(im, "note", lineno);
			fputs("no user column: pam_cap never matches this line; left as a comment\n", stderr);
		}
		for (size_t i = 1; i < n; i++)
			remember(im, w[i]);
		keep_comment(im, lineno, "# pam_cap: ", line);
		return;
	}
	report_iab_extras(im, lineno, &c);
	char *caps = caps_text(im, lineno, c.inh);
	size_t i;
	for (i = 1; caps != NULL && i < n && w[i][0] != '#'; i++)
		translate_subject(im, lineno, w[i], caps);
	if (i < n) {
		/* pam_cap has no comment after the first column: these are user names to it. */
		where(im, "note", lineno);
		fputs("pam_cap reads no comment here: ", stderr);
		for (size_t k = i; k < n; k++) {
			print_word(stderr, w[k]);
			fputc(k + 1 < n ? ' ' : '\n', stderr);
			remember(im, w[k]);
		}
		for (const char *sep = ""; i < n; i++, sep = " ") {
			fputs(sep, im->out);
			cli_text_escape(im->out, w[i]);
		}
		out_line(im, lineno);
	}
	free(caps);
}

static void translate_line(struct import *im, size_t lineno, char *line, size_t len)
{
	if (strlen(line) != len) {
		differ(im, lineno);
		fputs("NUL byte: pam_cap reads the line only up to it\n", stderr);
	}
	if (len + 1 > PAM_CAP_PIECE) {	/* the '\n' counts: fgets keeps it */
		differ(im, lineno);
		fprintf(stderr, "line of %zu bytes: pam_cap reads it in pieces of %d bytes, each as a "
			"line of its own whose first word it takes as capabilities (its users are "
			"compared below); the whole line is translated\n", len + 1, PAM_CAP_PIECE);
	}
	char *copy = strdup(line);
	size_t n;
	char **w = copy ? split_words(copy, &n, im) : NULL;
	if (copy == NULL)
		im->failed = 1;
	else if (n == 0 || w[0][0] == '#')
		keep_comment(im, lineno, "", line);
	else
		translate_rule(im, lineno, line, w, n);
	free(w);
	own(im, copy);	/* remembered words point into it */
}

/* ---- the comparison, user by user ------------------------------------------------------- */

/* pam_cap's match (read_capabilities_for_user): the word "*", the user's name, or a word whose
 * text after its first byte is one of the user's groups; it compares every word that way, not
 * only the ones starting with '@'. */
static int word_matches(const char *w, const struct cd_user *u)
{
	if (strcmp(w, "*") == 0 || strcmp(w, u->name) == 0)
		return 1;
	for (size_t i = 0; w[0] != '\0' && i < u->ngroups; i++)
		if (strcmp(u->groups[i], w + 1) == 0)
			return 1;
	return 0;
}

/* The first piece with a word matching @u: the one pam_cap applies. NULL if none. */
static const struct pc_rule *pam_cap_rule(const struct import *im, const struct cd_user *u)
{
	for (size_t i = 0; i < im->nrules; i++)
		for (size_t k = 1; k < im->rules[i].nwords; k++)
			if (word_matches(im->rules[i].words[k], u))
				return &im->rules[i];
	return NULL;
}

/* pam_cap leaves the set as login holds it: no line matched, "all", or a text libcap refused. */
static int pam_cap_keeps(const struct pc_rule *r)
{
	return r == NULL || r->caps.what == PC_ALL || r->caps.what == PC_BAD;
}

static void print_pam_cap_side(const struct import *im, const struct pc_rule *r)
{
	if (r == NULL) {
		fputs("pam_cap leaves login's set (no line matches)", stderr);
		return;
	}
	if (pam_cap_keeps(r)) {
		fputs("pam_cap leaves login's set (", stderr);
		cli_text_escape(stderr, im->path);
		fprintf(stderr, ":%zu: %s)", r->line, r->caps.what == PC_ALL ? "all" : "unparsable");
		return;
	}
	fputs("pam_cap gives ", stderr);
	cli_print_caps(stderr, r->caps.inh);
	if (r->caps.amb) {
		fputs(", ambient ", stderr);
		cli_print_caps(stderr, r->caps.amb);
	}
	if (r->caps.bnd) {
		fputs(", drops from the bounding set ", stderr);
		cli_print_caps(stderr, r->caps.bnd);
	}
	fputs(" (", stderr);
	cli_text_escape(stderr, im->path);
	fprintf(stderr, ":%zu)", r->line);
}

static void print_our_side(const struct import *im, const struct cd_grant *g)
{
	fputs("capdelegate gives ", stderr);
	cli_print_caps(stderr, g->caps);
	if (g->nmatched == 0) {
		fputs(" (no line names the user)", stderr);
		return;
	}
	fputs(" (", stderr);
	cli_text_escape(stderr, im->path);
	for (size_t i = 0; i < g->nmatched; i++) {
		size_t out = g->matched[i]->line;	/* a line of the translation */
		fprintf(stderr, "%c%zu", i ? ',' : ':', out <= im->nout ? im->origin[out - 1] : 0);
	}
	fprintf(stderr, ": %s lines)", cd_subject_kind_str(g->via));
}

/* 1 if @name gets another set from the translation than from pam_cap, 0 if the same, -1 on an
 * NSS error (reported). *kept counts users pam_cap leaves alone and the translation gives none. */
static int compare_user(struct import *im, const struct cd_policy *pol, const char *name, size_t *kept)
{
	struct cd_user u;
	struct cd_grant g = { 0 };
	int rc = -1;
	if (cd_user_lookup(&u, name, pol) < 0 || cd_resolve(pol, &u, &g) < 0) {
		fputs("capdelegate: error: user ", stderr);
		cli_print_name(stderr, name);
		fprintf(stderr, ": cannot look up %s %s: %s: no comparison\n",
			u.failed_kind ? u.failed_kind : "the user", u.failed ? u.failed : "",
			errno ? strerror(errno) : "unknown");
		goto out;
	}
	const struct pc_rule *r = pam_cap_rule(im, &u);
	if (pam_cap_keeps(r) && g.caps == 0) {
		(*kept)++;	/* the same as long as login's own set is empty */
		rc = 0;
		goto out;
	}
	rc = !(r != NULL && !pam_cap_keeps(r) && r->caps.inh == g.caps && r->caps.amb == 0 &&
	       r->caps.bnd == 0);
	if (rc) {
		fputs("capdelegate: difference: user ", stderr);
		cli_print_name(stderr, u.name);
		fputs(": ", stderr);
		print_pam_cap_side(im, r);
		fputs("; ", stderr);
		print_our_side(im, &g);
		fputc('\n', stderr);
	}
out:
	cd_grant_free(&g);
	cd_user_free(&u);
	return rc;
}

/* Every user NSS lists (setpwent/getpwent; a directory that does not enumerate lists few). */
static char **known_users(size_t *n)
{
	char **names = NULL;
	struct passwd *pw;
	int failed = 0;
	*n = 0;
	setpwent();
	for (errno = 0; (pw = getpwent()) != NULL; errno = 0) {
		char **nn = reallocarray(names, *n + 1, sizeof(*nn));
		if (nn == NULL || (nn[*n] = strdup(pw->pw_name)) == NULL) {
			names = nn ? nn : names;
			failed = 1;
			break;
		}
		names = nn;
		(*n)++;
	}
	if (!failed && errno != 0 && errno != ENOENT)
		failed = 1;
	endpwent();
	if (failed) {
		fprintf(stderr, "capdelegate: error: cannot list the users: %s: no comparison\n",
			strerror(errno ? errno : ENOMEM));
		for (size_t i = 0; i < *n; i++)
			free(names[i]);
		free(names);
		*n = 0;
		return NULL;
	}
	return names ? names : calloc(1, sizeof(*names));
}

/* Returns how many users differ, or -1 on an error. */
static long compare_users(struct import *im, const struct cd_policy *pol)
{
	size_t n, kept = 0;
	long differ_count = 0;
	char **names = known_users(&n);
	if (names == NULL)
		return -1;
	for (size_t i = 0; i < n && differ_count >= 0; i++) {
		int rc = compare_user(im, pol, names[i], &kept);
		differ_count = rc < 0 ? -1 : differ_count + rc;
	}
	if (kept > 0) {
		where(im, "note", 0);
		fprintf(stderr, "%zu of %zu known users get nothing from either: pam_cap leaves their "
			"inheritable set as login holds it (empty unless login's own is not), "
			"capdelegate empties it\n", kept, n);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return differ_count;
}

/* ---- reading the file and the command --------------------------------------------------- */

static int read_pam_cap(struct import *im)
{
	FILE *f = fopen(im->path, "re");
	if (f == NULL) {
		fputs("capdelegate: error: ", stderr);
		cli_text_escape(stderr, im->path);
		fprintf(stderr, ": %s: nothing translated\n", strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t size = 0, lineno = 0;
	ssize_t len;
	while (!im->failed && (len = getline(&line, &size, f)) >= 0) {
		lineno++;
		add_pieces(im, lineno, line, (size_t)len);	/* with its '\n', as fgets reads it */
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		translate_line(im, lineno, line, (size_t)len);
	}
	int err = ferror(f) ? errno : 0;
	free(line);
	fclose(f);
	if (err) {
		fputs("capdelegate: error: ", stderr);
		cli_text_escape(stderr, im->path);
		fprintf(stderr, ": %s: nothing translated\n", strerror(err));
		return -1;
	}
	return 0;
}

static void import_free(struct import *im)
{
	for (size_t i = 0; i < im->nrules; i++) {
		free(im->rules[i].words[0]);	/* the piece the words point into */
		free(im->rules[i].words);
	}
	free(im->rules);
	for (size_t i = 0; i < im->nbufs; i++)
		free(im->bufs[i]);
	free(im->bufs);
	free(im->seen);
	free(im->origin);
	free(im->text);
}

/* The translation must read back through the core as a valid policy: a line it refuses would
 * make the module refuse the whole file. */
static int check_translation(struct import *im, struct cd_policy *pol)
{
	struct cd_log log = { 0 };
	struct cd_load_opts opts = { .owner = 0 };
	if (cd_policy_parse(pol, "the translation", im->text, im->len, &opts, &log) == CD_POLICY_OK)
		return 0;
	fputs("capdelegate: error: the translation does not parse (a bug in import-pam-cap): "
	      "nothing printed\n", stderr);
	return -1;
}

static int import_run(struct import *im)
{
	struct cd_policy pol = { 0 };
	im->out = open_memstream(&im->text, &im->len);
	if (im->out == NULL)
		return CLI_ERROR;
	int rc = read_pam_cap(im);
	if (fclose(im->out) != 0 || im->failed) {
		fputs("capdelegate: error: out of memory: nothing translated\n", stderr);
		return CLI_ERROR;
	}
	if (rc < 0 || check_translation(im, &pol) < 0) {
		cd_policy_free(&pol);
		return CLI_ERROR;
	}
	fputs("# capdelegate.conf(5) translated from ", stdout);
	cli_text_escape(stdout, im->path);
	fputs(" by capdelegate import-pam-cap\n", stdout);
	fwrite(im->text, 1, im->len, stdout);
	if (im->nrules > 0) {
		where(im, "note", 0);
		fputs("pam_cap's columns are CAPABILITIES USERS..., capdelegate's SUBJECT CAPABILITIES: "
		      "one line per user, @group or *\n", stderr);
	}
	long users = compare_users(im, &pol);
	cd_policy_free(&pol);
	if (users < 0)
		return CLI_ERROR;
	where(im, "summary", 0);
	fprintf(stderr, "%zu differences in the file, %ld known users get another set\n",
		im->differences, users);
	return im->differences || users ? CLI_WARN : CLI_OK;
}

int cli_import_main(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	if (getopt_long(argc, argv, "", opts, NULL) != -1) {
		cli_bad_option(argv, usage);
		return CLI_ERROR;
	}
	if (argc - optind > 1) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	struct import im = { .path = optind < argc ? argv[optind] : PAM_CAP_DEFAULT_CONFIG };
	int rc = import_run(&im);
	import_free(&im);
	return rc;
}
