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
#include <grp.h>
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

/* What a subject word can match under pam_cap: the user of that name, the members of the group
 * its text after the first byte names, or everyone. */
enum pc_atom_kind { PC_USER, PC_GROUP, PC_STAR };

struct pc_atom {
	enum pc_atom_kind kind;
	const char *name;	/* the user or group name (into a rule's words) */
};

/* One piece as pam_cap's fgets returns it, with a rule on it. */
struct pc_rule {
	size_t line;
	size_t piece;	/* 0: the line's first piece; in a later one a subject became capabilities */
	char *text;	/* the piece, which the words point into (not always at its start) */
	char **words;	/* words[0] is the capability text */
	size_t nwords;
	struct pc_caps caps;
	cd_capmask eff;	/* pI for a user pam_cap stops at this rule (all, unparsable: login's, taken
			 * as empty) */
	/* The first atom of each kind that pam_cap can stop at here (no earlier rule has it):
	 * what constrains the translation of later lines. NULL when there is none. */
	const char *group_word, *group;		/* a group (a line of the translation or not) */
	const char *lost_group_word, *lost_group;	/* a group the translation gives no line */
	const char *lost_user;			/* a user the translation gives no line */
};

struct import {
	const char *path;
	struct pc_rule *rules;	/* pam_cap's rules, as pam_cap reads the file */
	size_t nrules;
	struct pc_atom *seen;	/* the atoms of earlier rules: pam_cap stops there, not later */
	size_t nseen;
	int seen_star;
	int in_tail;		/* the rest of this line's user column follows a word starting '#' */
	cd_capmask line_base;	/* what the line's first piece grants: the most a later piece may */
	FILE *out;		/* the translation, in memory until it has been checked */
	char *text;
	size_t len;
	size_t *origin;		/* the source line of each line of the translation */
	size_t nout;
	size_t differences;
	int failed;		/* out of memory */
	int nss_failed;		/* a lookup failed: the translation depends on it */
	/* A bare word's text after its first byte names a group: pam_cap before the fix of
	 * CVE-2025-1390 matches its members there, fixed versions (Debian 12's libpam-cap
	 * 1:2.66-4+deb12u3 among them) do not. No translation holds for both. */
	int version_dependent;
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
		struct pc_rule r = { .line = lineno, .piece = at / PAM_CAP_PIECE };
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
		r.eff = r.caps.what == PC_SET ? r.caps.inh : 0;
		r.text = piece;
		im->rules = nr;
		im->rules[im->nrules++] = r;
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
 * accepts, so the translation never drifts from the grammar. -1 when memory ran out (no
 * verdict: never taken for "not accepted", which would change the translation). */
static int core_accepts(const char *line, int kind, const char *name)
{
	struct cd_log log = { .sink = silent };
	struct cd_load_opts opts = { .owner = 0 };
	struct cd_policy pol;
	enum cd_status st = cd_policy_parse(&pol, "import", line, strlen(line), &opts, &log);
	int ok = st == CD_POLICY_OK;
	if (st == CD_POLICY_SYSERR)
		ok = -1;
	else if (ok && kind < 0)
		ok = pol.nrules == 0;
	else if (ok)
		ok = pol.nrules == 1 && (int)pol.rules[0].kind == kind &&
		     (name == NULL || strcmp(pol.rules[0].name, name) == 0);
	cd_policy_free(&pol);
	return ok;
}

/* The policy's form of a pam_cap subject word into @form, or -1 when capdelegate.conf(5) cannot
 * say it (a control byte, a name too long, a leading '-'); -2 when memory ran out. */
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
		return -2;
	int ok = core_accepts(probe, kind, name);
	free(probe);
	return ok < 0 ? -2 : ok ? 0 : -1;
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
	int ok = core_accepts(probe, -1, NULL);
	if (ok < 0) {
		im->failed = 1;
	} else if (ok) {
		fputs(prefix, im->out);
		fputs(line, im->out);
	} else {
		fputs(prefix[0] ? prefix : "# ", im->out);
		cli_text_escape(im->out, line);
	}
	free(probe);
	out_line(im, lineno);
}

/* ---- what pam_cap can stop at: atoms, whatever NSS lists today ---------------------------- */

/* Does a group of this name exist? 1 yes, 0 no, -1 lookup error (errno set). */
static int group_exists(const char *name)
{
	struct group gr, *res = NULL;
	size_t size = 1024;
	for (char *buf = NULL;; size *= 2) {
		char *nb = realloc(buf, size);
		if (nb == NULL) {
			free(buf);
			return -1;
		}
		buf = nb;
		int rc = getgrnam_r(name, &gr, buf, size, &res);
		if (rc == ERANGE && size < ((size_t)256 << 20))
			continue;
		free(buf);
		errno = rc;
		return rc ? -1 : res != NULL;
	}
}

static int user_exists(const char *name)
{
	struct cd_user u;
	int rc = cd_user_lookup_passwd(&u, name);
	int err = errno;
	cd_user_free(&u);
	errno = err;
	return rc == 0 ? 1 : err == 0 ? 0 : -1;
}

/* Is an atom a name that a word only matches by accident (the text after a bare word's first
 * byte; a user named '@g'; a word of the user column after '#') in the universe? Only when NSS
 * knows the name today: creating a user or group is not a change of membership. An atom the
 * file means (a user, @group, *) is always in it, whoever its members are. */
static int accident_exists(struct import *im, const struct pc_atom *a)
{
	if (a->kind == PC_STAR)
		return 1;
	int rc = a->kind == PC_USER ? user_exists(a->name) : group_exists(a->name);
	if (rc < 0) {
		fprintf(stderr, "capdelegate: error: cannot look up %s ", a->kind == PC_USER ? "user" : "group");
		cli_print_name(stderr, a->name);
		fprintf(stderr, ": %s: nothing translated\n", errno ? strerror(errno) : "unknown error");
		im->nss_failed = 1;
		return 1;	/* fail closed: as if it existed */
	}
	return rc;
}

/* Has pam_cap stopped at this atom on an earlier rule (so it never reaches this one for it)? */
static int atom_seen(const struct import *im, const struct pc_atom *a)
{
	if (im->seen_star)
		return 1;
	for (size_t i = 0; i < im->nseen; i++)
		if (im->seen[i].kind == a->kind && strcmp(im->seen[i].name, a->name) == 0)
			return 1;
	return 0;
}

/* Record an atom of rule @r (in the universe): later rules never apply to it; if it is live,
 * the rule may be the one pam_cap applies first, which constrains later lines. */
static void record_atom(struct import *im, struct pc_rule *r, const struct pc_atom *a,
			const char *word, int translated)
{
	if (atom_seen(im, a))
		return;
	if (a->kind == PC_GROUP && r->group == NULL) {
		r->group_word = word;
		r->group = a->name;
	}
	if (a->kind == PC_GROUP && !translated && r->lost_group == NULL) {
		r->lost_group_word = word;
		r->lost_group = a->name;
	}
	if (a->kind == PC_USER && !translated && r->lost_user == NULL)
		r->lost_user = word;
	if (a->kind == PC_STAR) {
		im->seen_star = 1;
		return;
	}
	struct pc_atom *ns = grow(im->seen, im->nseen + 1, sizeof(*ns), im);
	if (ns != NULL) {
		im->seen = ns;
		im->seen[im->nseen++] = *a;
	}
}

/* The atoms of @word: the one the file means (*, @group, user) and the one pam_cap's rule adds
 * by accident (the user named '@group', the group named by a bare word after its first byte).
 * In the tail after '#' both are accidents. Returns how many (1 or 2); intended first. */
static size_t word_atoms(const char *word, struct pc_atom a[2])
{
	if (strcmp(word, "*") == 0) {
		a[0] = (struct pc_atom){ PC_STAR, word };
		return 1;
	}
	if (word[0] == '@') {
		a[0] = (struct pc_atom){ PC_GROUP, word + 1 };
		a[1] = (struct pc_atom){ PC_USER, word };
	} else {
		a[0] = (struct pc_atom){ PC_USER, word };
		a[1] = (struct pc_atom){ PC_GROUP, word + 1 };
	}
	return 2;
}

/* An accidental atom pam_cap stops at: the translation gives it no line, a difference. */
static void accident(struct import *im, struct pc_rule *r, const struct pc_atom *a, const char *word)
{
	if (atom_seen(im, a) || !accident_exists(im, a))
		return;
	differ(im, r->line);
	print_word(stderr, word);
	if (a->kind == PC_STAR)
		fputs(" matches everyone under pam_cap", stderr);
	else if (a->kind == PC_USER) {
		fputs(" also matches the user ", stderr);
		cli_print_name(stderr, a->name);
		fputs(" (NSS knows it)", stderr);
	} else {
		fputs(" also matches the members of group ", stderr);
		cli_print_name(stderr, a->name);
		fputs(" under some versions of pam_cap (before the fix of CVE-2025-1390 it compares "
		      "a word's text after the first byte with the user's groups; NSS knows the "
		      "group)", stderr);
		if (word[0] != '@')
			im->version_dependent = 1;
	}
	fputs(": the translation gives no line for it\n", stderr);
	record_atom(im, r, a, word, 0);
}

/* ---- first match against lines that add up ------------------------------------------------ */

/* Can rule @i be the one pam_cap applies first to a user whom the translated line of @kind
 * (from a later rule) reaches? Then *witness says who (for the message). Only atoms pam_cap can
 * stop at count (an atom of an earlier rule was matched there):
 *  - a user line decides whatever the user's groups: any group of @i;
 *  - a group line adds up with other groups, and reaches users with no line of their own: any
 *    group of @i, or a user of @i the translation gives no line;
 *  - the '*' line reaches users with no line and in no group with a line: a user or group of
 *    @i the translation gives no line. */
static const char *first_match_witness(const struct pc_rule *i, enum cd_subject_kind kind,
				       const char **group)
{
	*group = NULL;
	if (kind != CD_SUBJECT_DEFAULT && i->group != NULL) {
		*group = i->group;
		return i->group_word;
	}
	if (kind == CD_SUBJECT_DEFAULT && i->lost_group != NULL) {
		*group = i->lost_group;
		return i->lost_group_word;
	}
	return kind == CD_SUBJECT_USER ? NULL : i->lost_user;
}

static void print_witness(enum cd_subject_kind kind, const char *name, const char *iword,
			  const char *igroup)
{
	if (kind == CD_SUBJECT_USER) {
		fputs("user ", stderr);
		cli_print_name(stderr, name);
		fputs(" in group ", stderr);
		cli_print_name(stderr, igroup);
	} else if (igroup != NULL) {
		fputs(kind == CD_SUBJECT_GROUP ? "a member of groups " : "a member of group ", stderr);
		cli_print_name(stderr, igroup);
	} else {
		fputs("user ", stderr);
		print_word(stderr, iword);	/* a name no policy line can write, maybe */
	}
	if (kind == CD_SUBJECT_GROUP) {
		fputs(igroup != NULL ? " and " : " in group ", stderr);
		cli_print_name(stderr, name);
	}
}

/* What pam_cap gives a user it stops at @r: all and unparsable texts leave login's set. */
static void print_pam_cap_caps(const struct pc_rule *r)
{
	if (r->caps.what == PC_ALL || r->caps.what == PC_BAD)
		fputs(r->caps.what == PC_ALL ? "all: login's set" : "unparsable: login's set", stderr);
	else
		cli_print_caps(stderr, r->eff);
}

/* Two lines that can both match one user (whatever the memberships), where pam_cap applies the
 * earlier only and capdelegate the later one, alone or added up. */
static void report_pair(struct import *im, const struct pc_rule *j, const char *word,
			enum cd_subject_kind kind, const char *name, cd_capmask base,
			const struct pc_rule *i, const char *iword, const char *igroup)
{
	differ(im, j->line);
	print_word(stderr, word);
	fputs(" and ", stderr);
	cli_text_escape(stderr, im->path);
	fprintf(stderr, ":%zu: ", i->line);
	print_word(stderr, iword);
	fputs(" both match ", stderr);
	print_witness(kind, name, iword, igroup);
	fprintf(stderr, ": pam_cap applies line %zu only (", i->line);
	print_pam_cap_caps(i);
	fputs(kind == CD_SUBJECT_USER ? "), capdelegate the user's own line (" :
	      kind == CD_SUBJECT_GROUP ? "), capdelegate adds this line to it (" :
	      "), capdelegate the '*' line (", stderr);
	cli_print_caps(stderr, base);
	fputs(")\n", stderr);
}

/* What the line for @word (of @kind, on rule @j) may grant: @base less what any earlier rule
 * pam_cap may apply first to a user this line reaches withholds, so that the translation never
 * grants more than pam_cap, for any membership. Every such pair that is not exact is a
 * difference. A group line adds up with the earlier group line, so it only has to grant no
 * more; a user or '*' line decides alone, so it has to grant the same. */
static cd_capmask first_match_caps(struct import *im, const struct pc_rule *j, const char *word,
				   enum cd_subject_kind kind, const char *name, cd_capmask base)
{
	cd_capmask caps = base;
	for (const struct pc_rule *i = im->rules; i < j; i++) {
		const char *igroup, *iword = first_match_witness(i, kind, &igroup);
		if (iword == NULL)
			continue;
		if (kind == CD_SUBJECT_GROUP ? (base & ~i->eff) == 0 : base == i->eff)
			continue;
		report_pair(im, j, word, kind, name, base, i, iword, igroup);
		caps &= i->eff;
	}
	if (caps != base) {
		where(im, "note", j->line);
		print_word(stderr, word);
		fputs(" translated as ", stderr);
		cli_print_caps(stderr, caps);
		fputs(" instead of ", stderr);
		cli_print_caps(stderr, base);
		fputs(": never more than pam_cap gives a user whom an earlier line matches first\n",
		      stderr);
	}
	return caps;
}

/* ---- the lines ------------------------------------------------------------------------------ */

static void comment_word(struct import *im, size_t lineno, const char *why, const char *word,
			 cd_capmask caps)
{
	fprintf(im->out, "# (%s) ", why);
	cli_text_escape(im->out, word);
	fputc(' ', im->out);
	cli_print_caps(im->out, caps);
	out_line(im, lineno);
}

/* One subject word of a rule: a policy line, or a comment and the reason on stderr. */
static void translate_subject(struct import *im, struct pc_rule *r, char *word, cd_capmask base)
{
	char form[4 * (CD_MAX_NAME_LEN + 1) + 8];
	struct pc_atom a[2];
	size_t n = word_atoms(word, a);
	if (atom_seen(im, &a[0])) {
		/* Exact, not a guess: whoever this word means was matched on an earlier line, where
		 * pam_cap stopped. Kept out, or capdelegate would add the two lines up. */
		where(im, "note", r->line);
		print_word(stderr, word);
		fputs(im->seen_star ? " comes after a '*' line" : " was matched on an earlier line",
		      stderr);
		fputs(": pam_cap never applies this line to it; left as a comment\n", stderr);
		comment_word(im, r->line, "matched earlier", word, base);
		if (n > 1)
			accident(im, r, &a[1], word);
		return;
	}
	if (cd_cap_from_name(word, strlen(word)) >= 0) {
		/* "cap_a, cap_b alice": pam_cap splits at blanks, so cap_b is a user to it, too */
		where(im, "note", r->line);
		print_word(stderr, word);
		fputs(" is a capability in the user column (pam_cap splits at blanks): translated as "
		      "the user pam_cap takes it for\n", stderr);
	}
	int form_rc = subject_form(word, form, sizeof(form));
	if (form_rc == -2) {
		im->failed = 1;
		return;
	}
	int writable = form_rc == 0;
	if (!writable) {
		differ(im, r->line);
		print_word(stderr, word);
		fputs(" is no name capdelegate.conf(5) can write (a control byte, a leading '-', "
		      "too long): left as a comment\n", stderr);
		comment_word(im, r->line, "not a name", word, base);
	} else {
		enum cd_subject_kind kind = a[0].kind == PC_STAR ? CD_SUBJECT_DEFAULT :
					    a[0].kind == PC_GROUP ? CD_SUBJECT_GROUP : CD_SUBJECT_USER;
		cd_capmask caps = first_match_caps(im, r, word, kind, a[0].name, base);
		fprintf(im->out, "%-15s ", form);
		cli_print_caps(im->out, caps);
		out_line(im, r->line);
	}
	record_atom(im, r, &a[0], word, writable);
	if (n > 1)
		accident(im, r, &a[1], word);
}

/* The words after one starting with '#': user names to pam_cap, a comment to whoever wrote it. */
static void translate_tail(struct import *im, struct pc_rule *r, size_t from)
{
	where(im, "note", r->line);
	fputs("pam_cap reads no comment here: ", stderr);
	for (size_t k = from; k < r->nwords; k++) {
		print_word(stderr, r->words[k]);
		fputc(k + 1 < r->nwords ? ' ' : '\n', stderr);
	}
	if (r->words[from][0] != '#')
		fputs("# ", im->out);	/* a later piece of the line: still the comment */
	for (size_t k = from; k < r->nwords; k++) {
		fputs(k > from ? " " : "", im->out);
		cli_text_escape(im->out, r->words[k]);
	}
	out_line(im, r->line);
	for (size_t k = from; k < r->nwords; k++) {
		struct pc_atom a[2];
		size_t n = word_atoms(r->words[k], a);
		for (size_t x = 0; x < n; x++)
			accident(im, r, &a[x], r->words[k]);
	}
}

/* Only capabilities libcap names: a bit without a name cannot be written in a policy. */
static cd_capmask named_caps(struct import *im, size_t lineno, cd_capmask m)
{
	cd_capmask named = 0;
	for (int cap = 0; cap < 64; cap++)
		if ((m & ((cd_capmask)1 << cap)) && cd_cap_name(cap) != NULL)
			named |= (cd_capmask)1 << cap;
	if (named != m) {
		differ(im, lineno);
		fputs("capabilities without a name in this libcap are left out\n", stderr);
	}
	return named;
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

/* Why a rule's capability text has no translation, or NULL. */
static const char *untranslatable(const struct pc_caps *c)
{
	if (c->what == PC_ALL)
		return "'all' leaves the inheritable set as login holds it: no equivalent";
	if (c->what == PC_BAD)
		return "libcap cannot parse the capability text: pam_cap changes nothing for the users "
		       "it names (and looks no further): no equivalent";
	return NULL;
}

/* What the line of rule @r grants, before the first-match rule: its inheritable set; none for
 * all and unparsable texts (pam_cap stops there and leaves login's set, normally empty: a none
 * line keeps later lines from adding up for those users); for a later piece of a long line, no
 * more than the line's first piece (pam_cap took a subject word as capabilities). */
static cd_capmask rule_base(struct import *im, struct pc_rule *r, const char *line)
{
	const char *why = untranslatable(&r->caps);
	cd_capmask base = 0;
	if (r->piece == 0 && (why != NULL || r->nwords == 1)) {
		if (why != NULL) {
			differ(im, r->line);
			fprintf(stderr, "%s; translated as none, so that no later line applies to "
				"whom it names\n", why);
		} else {
			where(im, "note", r->line);
			fputs("no user column: pam_cap never matches this line; left as a comment\n", stderr);
		}
		keep_comment(im, r->line, "# pam_cap: ", line);
	} else if (r->piece == 0) {
		report_iab_extras(im, r->line, &r->caps);
		base = named_caps(im, r->line, r->caps.inh);
	}
	if (r->piece == 0)
		im->line_base = base;
	else if (why == NULL)
		base = r->caps.inh & im->line_base;
	return base;
}

/* A rule: one policy line per subject word, in pam_cap's order. */
static void translate_rule(struct import *im, struct pc_rule *r, const char *line)
{
	cd_capmask base = rule_base(im, r, line);
	size_t k;
	for (k = 1; k < r->nwords && !im->in_tail; k++) {
		if (r->words[k][0] == '#') {
			im->in_tail = 1;
			break;
		}
		translate_subject(im, r, r->words[k], base);
	}
	if (k < r->nwords)
		translate_tail(im, r, k);
}

static void translate_line(struct import *im, size_t lineno, char *line, size_t len, size_t first)
{
	if (strlen(line) != len) {
		differ(im, lineno);
		fputs("NUL byte: pam_cap reads the line only up to it\n", stderr);
	}
	if (len + 1 > PAM_CAP_PIECE) {	/* the '\n' counts: fgets keeps it */
		differ(im, lineno);
		fprintf(stderr, "line of %zu bytes: pam_cap reads it in pieces of %d bytes, each as a "
			"line of its own whose first word it takes as capabilities (its users are "
			"compared below); translated as pam_cap reads it, a later piece granting no "
			"more than the first\n", len + 1, PAM_CAP_PIECE);
	}
	im->in_tail = 0;
	im->line_base = 0;
	if (first == im->nrules || im->rules[first].piece != 0)
		keep_comment(im, lineno, "", line);	/* pam_cap's first piece is a comment */
	for (size_t i = first; i < im->nrules; i++)
		translate_rule(im, &im->rules[i], line);
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
	int looked_up = cd_user_lookup(&u, name, pol);
	if ((looked_up < 0 && u.contradiction == NULL) ||
	    (looked_up == 0 && cd_resolve(pol, &u, &g) < 0)) {
		char *why = cd_user_failure(&u, errno);
		fputs("capdelegate: error: user ", stderr);
		cli_print_name(stderr, name);
		fprintf(stderr, ": %s: no comparison\n", why ? why : "cannot look up the user");
		free(why);
		goto out;
	}
	if (u.contradiction != NULL) {
		/* NSS answered, and login would grant this user nothing (pam_capdelegate(8),
		 * GROUPS): that is the translation's side of the comparison */
		fputs("capdelegate: note: user ", stderr);
		cli_print_name(stderr, name);
		fprintf(stderr, ": %s: login grants nothing under the translation\n", u.contradiction);
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
		size_t first = im->nrules;
		lineno++;
		add_pieces(im, lineno, line, (size_t)len);	/* with its '\n', as fgets reads it */
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		translate_line(im, lineno, line, (size_t)len, first);
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
		free(im->rules[i].text);
		free(im->rules[i].words);
	}
	free(im->rules);
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
	if (rc == 0 && im->version_dependent) {
		where(im, "error", 0);
		fputs("what pam_cap gives the members of these groups depends on its version: nothing "
		      "translated (write those lines by hand, see capdelegate(8))\n", stderr);
		return CLI_ERROR;
	}
		if (rc < 0 || im->nss_failed || check_translation(im, &pol) < 0) {
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
