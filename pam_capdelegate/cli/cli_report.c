/*
 * cli_report.c - report FILE...: many hosts' `audit --json` documents in one fleet view: who
 * holds each capability where (the policy lines each audit recorded), the hosts whose marks
 * drifted, every error-level finding, and the subjects whose lines differ between hosts; or
 * many hosts' `usage --json` documents: each capability's hosts granted and used
 * (cli_report_usage.c).
 *
 * The files are read one at a time (cli_report_read.c judges each whole) and only what the
 * view needs is kept of each: the names interned once, each subject's capabilities per host,
 * each grant's hosts, the drift and error findings. Time is linear in the input (hash tables
 * under a key of the run, so that hostile names cannot make them degrade) but for the sorts of
 * the distinct grants and subjects; memory is the largest file's tree plus those aggregates.
 *
 * A host is known by its machine-id, which a clone made anew does not share, not by the name
 * it gives itself: one machine-id in two files, a name twice with nothing to tell the two
 * apart, and a file named twice are said and reported once.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_hash.h"
#include "cli_out.h"
#include "cli_report_read.h"
#include "cli_report_usage.h"

static const char usage[] =
	"usage: capdelegate report [--json|--tsv] FILE...\n"
	"  A fleet view of the hosts' `capdelegate audit --json` outputs: per capability the\n"
	"  users and groups holding it and on which hosts, drifted marks, error-level findings,\n"
	"  subjects whose policy lines differ between hosts. Exit 0 fine, 1 drift or differences,\n"
	"  2 a file rejected or an error-level finding. Of `capdelegate usage --json` outputs: per\n"
	"  capability, on how many hosts it is granted and on how many used. See capdelegate(8).\n";

/* ---- hash tables ---------------------------------------------------------------------------- */

/* Open addressing, linear probing: each slot an entry's index + 1 (0: empty) and its hash;
 * the entries are the caller's, compared by @eq. At most 3/4 full. */
struct slot {
	uint64_t hash;
	size_t idx1;
};

struct map {
	struct slot *slots;
	size_t mask, n;
};

/* Room for one entry more; -1 out of memory. */
static int map_room(struct map *m)
{
	size_t cap = m->slots ? m->mask + 1 : 0;
	if ((m->n + 1) * 4 <= cap * 3)
		return 0;
	size_t ncap = cap ? 2 * cap : 64;
	struct slot *ns = calloc(ncap, sizeof(*ns));
	if (ns == NULL)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		if (m->slots[i].idx1 == 0)
			continue;
		size_t j = m->slots[i].hash & (ncap - 1);
		while (ns[j].idx1 != 0)
			j = (j + 1) & (ncap - 1);
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->mask = ncap - 1;
	return 0;
}

/* The slot of the entry with @hash that @eq takes, else the empty slot for it (map_room
 * first when it may be filled); NULL when the table is empty. */
static struct slot *map_find(const struct map *m, uint64_t hash,
			     int (*eq)(const void *ctx, size_t idx, const void *key), const void *ctx,
			     const void *key)
{
	if (m->slots == NULL)
		return NULL;
	for (size_t i = hash & m->mask;; i = (i + 1) & m->mask) {
		struct slot *s = &m->slots[i];
		if (s->idx1 == 0 || (s->hash == hash && eq(ctx, s->idx1 - 1, key)))
			return s;
	}
}

static void map_set(struct map *m, struct slot *s, uint64_t hash, size_t idx)
{
	s->hash = hash;
	s->idx1 = idx + 1;
	m->n++;
}

/* Room in the array whose pointer is at @array (*@cap elements of @size) for element @n; -1
 * out of memory, the array as it was. The pointer is read and written as bytes: it may be of
 * any object type. */
static int grow(void *array, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	void *a, *na;
	memcpy(&a, array, sizeof(a));
	size_t ncap = *cap ? 2 * *cap : 16;
	if (ncap > SIZE_MAX / size || (na = realloc(a, ncap * size)) == NULL)
		return -1;
	memcpy(array, &na, sizeof(na));
	*cap = ncap;
	return 0;
}

/* ---- what the report keeps ---------------------------------------------------------------- */

/* One host: a file that passed, in the order given. */
struct host {
	const char *file;
	char *name;		/* host_hex's bytes, else host, else the file name */
	char *label;		/* NAME@MACHINE-ID where the name alone tells it from no other
				 * host (the tables' name for it), else NULL: the name */
	int named_by_file;
	int shared;		/* its name is another host's too */
	char machine_id[33];	/* "" when the audit records none */
	dev_t dev;		/* the file read, so that another name of it is known */
	ino_t ino;
};

struct rejected {
	const char *file;
	char *why;		/* escaped text, as on standard error */
};

/* A subject's capabilities on one host: the id of the sorted, distinct names of all its lines
 * there joined by NUL ("" for lines granting nothing). */
struct cell {
	size_t host, caps;
};

struct subject {
	size_t kind, name;	/* interned */
	struct cell *cells;	/* by host, one per host that has a line */
	size_t n, cap;
};

struct grant {
	size_t capability, subject;
	size_t *hosts;		/* by host; a host twice for two of its lines */
	size_t n, cap;
};

/* What report keeps of the findings: the three kinds it shows. */
enum kept { KEPT_DRIFT, KEPT_ERROR, KEPT_ENDED };

struct finding {
	size_t host, id, path, message;	/* interned */
	enum kept kind;
};

/* (subject, capability name) of one line of the file being read; NONE marks the line itself. */
struct pair {
	size_t subject, capability;
};
#define NONE SIZE_MAX

/* An interned string: its bytes (a NUL after them too) and how many. */
struct str {
	char *p;
	size_t n;
};

struct report {
	uint64_t key[2];
	struct host *hosts;
	size_t nhosts;
	struct rejected *rejected;
	size_t nrejected;
	struct str *strs;
	size_t nstrs, strs_cap;
	struct map str_map, subject_map, grant_map, name_map, id_map, file_map;
	struct subject *subjects;
	size_t nsubjects, subjects_cap;
	struct grant *grants;
	size_t ngrants, grants_cap;
	struct finding *findings;
	size_t nfindings, findings_cap;
	struct pair *pairs;	/* the current file's */
	size_t npairs, pairs_cap;
	char *scratch;		/* a caps key being built */
	size_t scratch_cap;
	int usage;		/* the documents are usage --json's (the first admitted says) */
	int kinds_seen;		/* a document was admitted: usage tells which kind */
	struct cli_report_usage used;	/* of usage documents, the counts kept */
	int rc;
};

static void worse(struct report *r, int rc)
{
	if (rc > r->rc)
		r->rc = rc;
}

struct bytes {
	const char *p;
	size_t n;
};

static int str_eq(const void *ctx, size_t idx, const void *key)
{
	const struct report *r = ctx;
	const struct bytes *b = key;
	return r->strs[idx].n == b->n && memcmp(r->strs[idx].p, b->p, b->n) == 0;
}

/* The id of @n bytes at @p, added if new; SIZE_MAX out of memory. */
static size_t intern(struct report *r, const char *p, size_t n)
{
	struct bytes b = { p, n };
	uint64_t h = cli_siphash(r->key, p, n);
	if (map_room(&r->str_map) < 0 || grow(&r->strs, &r->strs_cap, r->nstrs, sizeof(*r->strs)) < 0)
		return SIZE_MAX;
	struct slot *s = map_find(&r->str_map, h, str_eq, r, &b);
	if (s->idx1 != 0)
		return s->idx1 - 1;
	char *copy = malloc(n + 1);
	if (copy == NULL)
		return SIZE_MAX;
	memcpy(copy, p, n);
	copy[n] = '\0';
	r->strs[r->nstrs] = (struct str){ copy, n };
	map_set(&r->str_map, s, h, r->nstrs);
	return r->nstrs++;
}

static size_t intern_str(struct report *r, const char *s)
{
	return intern(r, s, strlen(s));
}

static int subject_eq(const void *ctx, size_t idx, const void *key)
{
	const struct report *r = ctx;
	const size_t *k = key;
	return r->subjects[idx].kind == k[0] && r->subjects[idx].name == k[1];
}

/* The subject (kind, name), added if new; SIZE_MAX out of memory. */
static size_t subject_of(struct report *r, size_t kind, size_t name)
{
	size_t k[2] = { kind, name };
	uint64_t h = cli_siphash(r->key, k, sizeof(k));
	if (map_room(&r->subject_map) < 0 ||
	    grow(&r->subjects, &r->subjects_cap, r->nsubjects, sizeof(*r->subjects)) < 0)
		return SIZE_MAX;
	struct slot *s = map_find(&r->subject_map, h, subject_eq, r, k);
	if (s->idx1 != 0)
		return s->idx1 - 1;
	r->subjects[r->nsubjects] = (struct subject){ .kind = kind, .name = name };
	map_set(&r->subject_map, s, h, r->nsubjects);
	return r->nsubjects++;
}

static int grant_eq(const void *ctx, size_t idx, const void *key)
{
	const struct report *r = ctx;
	const size_t *k = key;
	return r->grants[idx].capability == k[0] && r->grants[idx].subject == k[1];
}

/* Host @host holds @capability by a line of @subject; -1 out of memory. */
static int add_grant(struct report *r, size_t capability, size_t subject, size_t host)
{
	size_t k[2] = { capability, subject };
	uint64_t h = cli_siphash(r->key, k, sizeof(k));
	if (map_room(&r->grant_map) < 0 ||
	    grow(&r->grants, &r->grants_cap, r->ngrants, sizeof(*r->grants)) < 0)
		return -1;
	struct slot *s = map_find(&r->grant_map, h, grant_eq, r, k);
	if (s->idx1 == 0) {
		r->grants[r->ngrants] = (struct grant){ .capability = capability, .subject = subject };
		map_set(&r->grant_map, s, h, r->ngrants++);
	}
	struct grant *g = &r->grants[s->idx1 - 1];
	if (grow(&g->hosts, &g->cap, g->n, sizeof(*g->hosts)) < 0)
		return -1;
	g->hosts[g->n++] = host;
	return 0;
}

static int add_pair(struct report *r, size_t subject, size_t capability)
{
	if (grow(&r->pairs, &r->pairs_cap, r->npairs, sizeof(*r->pairs)) < 0)
		return -1;
	r->pairs[r->npairs++] = (struct pair){ subject, capability };
	return 0;
}

/* Each policy line of the document: its grants, and its capabilities under its subject. */
static int keep_rules(struct report *r, const struct cli_report_doc *d, size_t host)
{
	json_object *rules = cli_report_rules(d);
	r->npairs = 0;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *rule = json_object_array_get_idx(rules, i), *caps, *in_force;
		if (json_object_object_get_ex(rule, "in_force", &in_force) &&
		    !json_object_get_boolean(in_force))
			continue;	/* outside its window at the audit: login did not read it */
		json_object_object_get_ex(rule, "caps", &caps);
		size_t kind = intern_str(r, cli_report_str(rule, "kind"));
		size_t name = kind == SIZE_MAX ? SIZE_MAX : intern_str(r, cli_report_str(rule, "subject"));
		size_t subject = name == SIZE_MAX ? SIZE_MAX : subject_of(r, kind, name);
		if (subject == SIZE_MAX || add_pair(r, subject, NONE) < 0)
			return -1;
		for (size_t c = 0; c < json_object_array_length(caps); c++) {
			size_t cap = intern_str(r, json_object_get_string(json_object_array_get_idx(caps, c)));
			if (cap == SIZE_MAX || add_grant(r, cap, subject, host) < 0 ||
			    add_pair(r, subject, cap) < 0)
				return -1;
		}
	}
	return 0;
}

static int pair_cmp(const void *a, const void *b, void *ctx)
{
	const struct report *r = ctx;
	const struct pair *x = a, *y = b;
	if (x->subject != y->subject)
		return x->subject < y->subject ? -1 : 1;
	if (x->capability == y->capability)
		return 0;
	if (x->capability == NONE || y->capability == NONE)
		return x->capability == NONE ? -1 : 1;
	return strcmp(r->strs[x->capability].p, r->strs[y->capability].p);
}

static int put_scratch(struct report *r, size_t at, const char *s, size_t n)
{
	while (at + n + 1 > r->scratch_cap) {
		size_t cap = r->scratch_cap ? 2 * r->scratch_cap : 256;
		char *ns = realloc(r->scratch, cap);
		if (ns == NULL)
			return -1;
		r->scratch = ns;
		r->scratch_cap = cap;
	}
	memcpy(r->scratch + at, s, n);
	return 0;
}

/* The pairs of the file read, sorted: per subject, the caps key of its lines on @host. */
static int keep_subjects(struct report *r, size_t host)
{
	qsort_r(r->pairs, r->npairs, sizeof(*r->pairs), pair_cmp, r);
	for (size_t i = 0; i < r->npairs;) {
		size_t subject = r->pairs[i].subject, len = 0, names = 0;
		for (; i < r->npairs && r->pairs[i].subject == subject; i++) {
			size_t c = r->pairs[i].capability;
			if (c == NONE || r->pairs[i - 1].capability == c)
				continue;	/* the line itself (first), or a name once more */
			static const char sep = '\0';
			if ((names++ && put_scratch(r, len++, &sep, 1) < 0) ||
			    put_scratch(r, len, r->strs[c].p, r->strs[c].n) < 0)
				return -1;
			len += r->strs[c].n;
		}
		size_t caps = intern(r, r->scratch ? r->scratch : "", len);
		struct subject *s = &r->subjects[subject];
		if (caps == SIZE_MAX || grow(&s->cells, &s->cap, s->n, sizeof(*s->cells)) < 0)
			return -1;
		s->cells[s->n++] = (struct cell){ host, caps };
	}
	return 0;
}

static int is_drift(const char *id)
{
	return strncmp(id, "mark-", 5) == 0 && !cli_finding_is_error(id);
}

/* The drift, error-level and ended-line findings of the document, in its order. */
static int keep_findings(struct report *r, const struct cli_report_doc *d, size_t host)
{
	json_object *f = cli_report_findings(d);
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		const char *id = cli_report_str(x, "id");
		enum kept kind = cli_finding_is_error(id) ? KEPT_ERROR : is_drift(id) ? KEPT_DRIFT
				 : KEPT_ENDED;
		if (kind == KEPT_ENDED && strcmp(id, "ended-line") != 0)
			continue;
		/* an ended line is named by its file and line, as audit names it */
		json_object *line;
		char *where = NULL;
		if (kind == KEPT_ENDED && json_object_object_get_ex(x, "line", &line) &&
		    json_object_is_type(line, json_type_int) &&
		    asprintf(&where, "%s:%" PRId64, cli_report_str(x, "path"),
			     json_object_get_int64(line)) < 0)
			return -1;
		size_t a = intern_str(r, id);
		size_t b = a == SIZE_MAX ? a : intern_str(r, where ? where : cli_report_str(x, "path"));
		free(where);
		size_t c = b == SIZE_MAX ? b : intern_str(r, cli_report_str(x, "message"));
		if (c == SIZE_MAX || grow(&r->findings, &r->findings_cap, r->nfindings, sizeof(*r->findings)) < 0)
			return -1;
		r->findings[r->nfindings++] = (struct finding){ host, a, b, c, kind };
	}
	return 0;
}

/* ---- hosts: which files are one -------------------------------------------------------------- */

struct file_key {
	dev_t dev;
	ino_t ino;
};

static int file_eq(const void *ctx, size_t idx, const void *key)
{
	const struct report *r = ctx;
	const struct file_key *k = key;
	return r->hosts[idx].dev == k->dev && r->hosts[idx].ino == k->ino;
}

static int name_eq(const void *ctx, size_t idx, const void *key)
{
	return strcmp(((const struct report *)ctx)->hosts[idx].name, key) == 0;
}

static int id_eq(const void *ctx, size_t idx, const void *key)
{
	return strcmp(((const struct report *)ctx)->hosts[idx].machine_id, key) == 0;
}

/* The host already kept under @key in @m (SIZE_MAX if none). */
static size_t known(const struct report *r, const struct map *m, uint64_t h,
		    int (*eq)(const void *, size_t, const void *), const void *key)
{
	struct slot *s = map_find(m, h, eq, r, key);
	return s != NULL && s->idx1 != 0 ? s->idx1 - 1 : SIZE_MAX;
}

/* Keep host @idx under @key in @m (the first of that key stays); -1 out of memory. */
static int remember(struct report *r, struct map *m, uint64_t h,
		    int (*eq)(const void *, size_t, const void *), const void *key, size_t idx)
{
	if (map_room(m) < 0)
		return -1;
	struct slot *s = map_find(m, h, eq, r, key);
	if (s->idx1 == 0)
		map_set(m, s, h, idx);
	return 0;
}

/* The reason, escaped text: @plain, then alternately a hostile string (escaped) and plain
 * text, to a NULL; NULL out of memory. */
static char *why_of(const char *plain, ...)
{
	char *text = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&text, &size);
	if (m == NULL)
		return NULL;
	va_list ap;
	va_start(ap, plain);
	for (int hostile = 0; plain != NULL; plain = va_arg(ap, const char *), hostile = !hostile)
		if (hostile)
			cli_text_escape(m, plain);
		else
			fputs(plain, m);
	va_end(ap);
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* "capdelegate: report: [BEFORE]FILE: [AFTER]TEXT", FILE escaped, TEXT escaped text already. */
static void say(const char *before, const char *file, const char *after, const char *text)
{
	fprintf(stderr, "capdelegate: report: %s", before);
	cli_text_escape(stderr, file);
	fprintf(stderr, ": %s%s\n", after, text);
}

/* @file not reported, for @why (taken; escaped text); -1 out of memory. A file named again is
 * reported once, the other namings are bad usage. */
static int reject(struct report *r, const char *file, char *why, int named_again)
{
	if (why == NULL)
		return -1;
	say("", file, named_again ? "" : "rejected, not reported: ", why);
	r->rejected[r->nrejected++] = (struct rejected){ file, why };
	worse(r, CLI_ERROR);
	return 0;
}

/* "capdelegate: report: warning: FILE: TEXT" (@text taken; escaped text); -1 out of memory. */
static int warn(struct report *r, const char *file, char *text)
{
	if (text == NULL)
		return -1;
	say("warning: ", file, "", text);
	free(text);
	worse(r, CLI_WARN);
	return 0;
}

static uint64_t name_hash(const struct report *r, const char *s)
{
	return cli_siphash(r->key, s, strlen(s));
}

/* Is @h (from the document read, not kept yet) a host no other is? 0 yes, 1 no (rejected),
 * -1 out of memory. Its name may be another's when both have a machine-id: then both are
 * shown as NAME@MACHINE-ID, and report warns. */
static int judge_identity(struct report *r, struct host *h)
{
	const char *id = h->machine_id;
	size_t other = id[0] ? known(r, &r->id_map, name_hash(r, id), id_eq, id) : SIZE_MAX;
	if (other != SIZE_MAX) {
		char what[64];
		snprintf(what, sizeof(what), "machine-id %s is also ", id);
		return reject(r, h->file, why_of(what, r->hosts[other].file, "'s (", r->hosts[other].name,
						 "): one machine in two files, or a clone whose "
						 "machine-id was not made anew", (char *)NULL), 0) < 0 ? -1 : 1;
	}
	other = known(r, &r->name_map, name_hash(r, h->name), name_eq, h->name);
	if (other == SIZE_MAX)
		return 0;
	const struct host *o = &r->hosts[other];
	if (id[0] == '\0' || o->machine_id[0] == '\0')
		return reject(r, h->file, why_of("names itself ", h->name, ", as ", o->file,
						 " does, and no machine-id tells them apart",
						 (char *)NULL), 0) < 0 ? -1 : 1;
	char at_o[40], at_h[40];
	snprintf(at_o, sizeof(at_o), "@%s, ", o->machine_id);
	snprintf(at_h, sizeof(at_h), "@%s)", id);
	r->hosts[other].shared = h->shared = 1;
	return warn(r, h->file, why_of("names itself ", h->name, ", as ", o->file,
				       " does: told apart by machine-id (", o->name, at_o, h->name,
				       at_h, (char *)NULL));
}

/* The document of @file, judged, as host r->nhosts: remembered by its file, machine-id and
 * name, and what the view needs of it kept. 0, 1 rejected, -1 out of memory. */
static int admit(struct report *r, const char *file, const struct stat *st, struct cli_report_doc *d)
{
	cd_capmask granted = 0, used = 0;
	const char *bad = NULL;
	/* one view of one kind: an audit's hosts and a usage's are counted apart */
	if (r->kinds_seen && r->usage != d->usage)
		return reject(r, file, why_of(d->usage ? "a usage --json document among audit documents"
						       : "an audit --json document among usage documents",
					      ": report each kind apart", (char *)NULL), 0) < 0 ? -1 : 1;
	if (d->usage && cli_report_usage_judge(d, &granted, &used, &bad) != 0)
		return reject(r, file, why_of("grants[]: not a capability: ", bad, (char *)NULL), 0) < 0
		       ? -1 : 1;
	struct host *h = &r->hosts[r->nhosts];
	*h = (struct host){ .file = file, .name = d->name, .dev = st->st_dev, .ino = st->st_ino };
	memcpy(h->machine_id, d->machine_id, sizeof(h->machine_id));
	d->name = NULL;
	if (h->name == NULL) {
		h->named_by_file = 1;
		if ((h->name = strdup(file)) == NULL)
			return -1;
		say("", file, "", "no host name recorded (an audit before version 3?): the file name "
				  "stands for the host");
	}
	int rc = judge_identity(r, h);
	if (rc != 0) {
		free(h->name);
		return rc;
	}
	struct file_key fk;
	memset(&fk, 0, sizeof(fk));
	fk.dev = st->st_dev;
	fk.ino = st->st_ino;
	size_t idx = r->nhosts++;
	if (remember(r, &r->file_map, cli_siphash(r->key, &fk, sizeof(fk)), file_eq, &fk, idx) < 0 ||
	    remember(r, &r->name_map, name_hash(r, h->name), name_eq, h->name, idx) < 0 ||
	    (h->machine_id[0] != '\0' &&
	     remember(r, &r->id_map, name_hash(r, h->machine_id), id_eq, h->machine_id, idx) < 0))
		return -1;
	r->kinds_seen = 1;
	r->usage = d->usage;
	if (d->usage) {
		cli_report_usage_add(&r->used, granted, used);
		return 0;
	}
	if (keep_rules(r, d, idx) < 0 || keep_subjects(r, idx) < 0 || keep_findings(r, d, idx) < 0)
		return -1;
	return 0;
}

/* One FILE: read, judged, kept. -1 only when memory ran out. */
static int load(struct report *r, const char *file)
{
	struct stat st;
	const char *what = NULL;
	int fd = cli_report_open(file, &st, &what);
	if (fd < 0)
		return reject(r, file, strdup(what), 0);
	struct file_key fk;
	memset(&fk, 0, sizeof(fk));
	fk.dev = st.st_dev;
	fk.ino = st.st_ino;
	size_t same = known(r, &r->file_map, cli_siphash(r->key, &fk, sizeof(fk)), file_eq, &fk);
	if (same != SIZE_MAX) {
		close(fd);
		return reject(r, file, why_of("the same file as ", r->hosts[same].file,
					      ", named again: reported once", (char *)NULL), 1);
	}
	struct cli_report_doc d;
	char *why = NULL;
	int rc = cli_report_read(fd, &d, &why);
	if (rc > 0)
		return reject(r, file, why, 0);
	if (rc == 0)
		rc = admit(r, file, &st, &d);
	cli_report_doc_free(&d);
	return rc < 0 ? -1 : 0;
}

/* ---- the tables' names of hosts ------------------------------------------------------------ */

static const char *shown(const struct host *h)
{
	return h->label != NULL ? h->label : h->name;
}

static int decorate(struct host *h)
{
	if (asprintf(&h->label, "%s@%s", h->name, h->machine_id) < 0) {
		h->label = NULL;
		return -1;
	}
	return 0;
}

/* Each host of a shared name is NAME@MACHINE-ID in the tables. A name that reads as one of
 * those is shown with its own machine-id too (and so on, a queue of the hosts decorated):
 * every host's name in the tables is then its own. -1 out of memory. */
static int make_labels(struct report *r)
{
	size_t *queue = malloc((r->nhosts + 1) * sizeof(*queue)), head = 0, tail = 0;
	if (queue == NULL)
		return -1;
	for (size_t i = 0; i < r->nhosts; i++)
		if (r->hosts[i].shared) {
			if (decorate(&r->hosts[i]) < 0)
				goto oom;
			queue[tail++] = i;
		}
	while (head < tail) {
		const char *label = r->hosts[queue[head++]].label;
		size_t u = known(r, &r->name_map, name_hash(r, label), name_eq, label);
		struct host *h = u != SIZE_MAX ? &r->hosts[u] : NULL;
		if (h == NULL || h->label != NULL)
			continue;
		if (h->machine_id[0] == '\0') {
			if (warn(r, h->file, why_of("names itself ", h->name, ", as another host is "
						    "shown, and records no machine-id: the tables "
						    "cannot tell the two apart (report --json can)",
						    (char *)NULL)) < 0)
				goto oom;
			continue;
		}
		if (decorate(h) < 0 ||
		    warn(r, h->file, why_of("names itself ", h->name, ", as another host is shown: "
					    "told apart by machine-id (", h->label, ")", (char *)NULL)) < 0)
			goto oom;
		queue[tail++] = u;
	}
	free(queue);
	return 0;
oom:
	free(queue);
	return -1;
}

/* ---- order ------------------------------------------------------------------------------------ */

static int grant_cmp(const void *a, const void *b, void *ctx)
{
	const struct report *r = ctx;
	const struct grant *x = &r->grants[*(const size_t *)a], *y = &r->grants[*(const size_t *)b];
	const struct subject *sx = &r->subjects[x->subject], *sy = &r->subjects[y->subject];
	int c = strcmp(r->strs[x->capability].p, r->strs[y->capability].p);
	if (c == 0)
		c = strcmp(r->strs[sx->kind].p, r->strs[sy->kind].p);
	return c != 0 ? c : strcmp(r->strs[sx->name].p, r->strs[sy->name].p);
}

static int subject_cmp(const void *a, const void *b, void *ctx)
{
	const struct report *r = ctx;
	const struct subject *x = &r->subjects[*(const size_t *)a], *y = &r->subjects[*(const size_t *)b];
	int c = strcmp(r->strs[x->kind].p, r->strs[y->kind].p);
	return c != 0 ? c : strcmp(r->strs[x->name].p, r->strs[y->name].p);
}

/* 0..@n-1 sorted by @cmp; NULL out of memory. */
static size_t *sorted(struct report *r, size_t n, int (*cmp)(const void *, const void *, void *))
{
	size_t *order = malloc((n + 1) * sizeof(*order));
	if (order == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp, r);
	return order;
}

/* Do the subject's lines differ between hosts: a host without one, or two hosts whose lines
 * hold other capabilities? */
static int differs(const struct report *r, const struct subject *s)
{
	if (s->n != r->nhosts)
		return 1;
	for (size_t i = 1; i < s->n; i++)
		if (s->cells[i].caps != s->cells[0].caps)
			return 1;
	return 0;
}

/* ---- text: tables or TSV -------------------------------------------------------------------- */

/* A caps key as text: the names joined by ',', "none" for lines granting nothing. */
static void text_caps(FILE *o, const struct str *caps)
{
	if (caps->n == 0)
		fputs("none", o);
	for (const char *p = caps->p; p < caps->p + caps->n; p += strlen(p) + 1) {
		if (p != caps->p)
			fputc(',', o);
		cli_text_escape(o, p);
	}
}

/* A subject as the policy spells it (alice, @linux\040admins, *), as check and explain print
 * it: a bare blank in a name would read as two words and split the aligned table's column. */
static void text_subject(FILE *o, const char *subject)
{
	if (strcmp(subject, "*") == 0)
		fputc('*', o);
	else
		cli_print_name(o, subject);
}

static void text_hosts(const struct report *r, enum cli_form form)
{
	static const char *const header[] = { "HOST", "FILE", "NAMED BY", "MACHINE-ID", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "host", header);
	cli_table_title(&t, "Hosts");
	for (size_t h = 0; h < r->nhosts; h++) {
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, shown(&r->hosts[h]));
		fputc('\t', o);
		cli_text_escape(o, r->hosts[h].file);
		fprintf(o, "\t%s\t%s", r->hosts[h].named_by_file ? "file-name" : "host-field",
			r->hosts[h].machine_id[0] ? r->hosts[h].machine_id : "-");
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

static void text_grants(const struct report *r, enum cli_form form, const size_t *order)
{
	static const char *const header[] = { "CAPABILITY", "KIND", "SUBJECT", "HOST", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, "grant", header);
	cli_table_title(&t, "Who holds each capability where (policy lines)");
	for (size_t i = 0; i < r->ngrants; i++) {
		const struct grant *g = &r->grants[order[i]];
		const struct subject *s = &r->subjects[g->subject];
		for (size_t k = 0; k < g->n; k++) {
			FILE *o = cli_table_row(&t);
			cli_text_escape(o, r->strs[g->capability].p);
			fputc('\t', o);
			cli_text_escape(o, r->strs[s->kind].p);
			fputc('\t', o);
			text_subject(o, r->strs[s->name].p);
			fputc('\t', o);
			cli_text_escape(o, shown(&r->hosts[g->hosts[k]]));
			cli_table_end_row(&t);
		}
	}
	cli_table_end(&t);
}

/* Each kind kept: its record kind and JSON key, its heading, the exit status it makes. */
static const struct {
	const char *kind, *title;
	int rc;
} kept_kinds[] = {
	[KEPT_DRIFT] = { "drift", "Drifted marks", CLI_WARN },
	[KEPT_ERROR] = { "error", "Error-level findings", CLI_ERROR },
	[KEPT_ENDED] = { "ended", "Policy lines that ended (login no longer reads them)", CLI_WARN },
};

static void text_findings(struct report *r, enum cli_form form, enum kept kind)
{
	static const char *const header[] = { "HOST", "FINDING", "PATH", "MESSAGE", NULL };
	struct cli_table t;
	cli_table_start(&t, stdout, form, kept_kinds[kind].kind, header);
	cli_table_title(&t, kept_kinds[kind].title);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];
		if (f->kind != kind)
			continue;
		worse(r, kept_kinds[kind].rc);
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, shown(&r->hosts[f->host]));
		fputc('\t', o);
		cli_text_escape(o, r->strs[f->id].p);
		fputc('\t', o);
		cli_text_escape(o, r->strs[f->path].p);
		fputc('\t', o);
		cli_text_escape(o, r->strs[f->message].p);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

static void free_strings(char **s, size_t n)
{
	for (size_t i = 0; s != NULL && i < n; i++)
		free(s[i]);
	free(s);
}

/* The column names of the side-by-side table: KIND, SUBJECT, then "HOST=" per host (the TSV
 * labels each field with its host). NULL without memory. */
static char **differ_header(const struct report *r)
{
	char **h = calloc(r->nhosts + 3, sizeof(*h));
	for (size_t i = 0; h != NULL && i < r->nhosts + 2; i++) {
		size_t len = 0;
		FILE *m = open_memstream(&h[i], &len);
		if (m == NULL) {
			free_strings(h, r->nhosts + 2);
			return NULL;
		}
		if (i < 2) {
			fputs(i == 0 ? "KIND" : "SUBJECT", m);
		} else {
			cli_text_escape(m, shown(&r->hosts[i - 2]));
			fputc('=', m);
		}
		if (fclose(m) != 0) {
			free_strings(h, r->nhosts + 2);
			return NULL;
		}
	}
	return h;
}

static int text_differences(struct report *r, enum cli_form form, const size_t *order)
{
	char **header = differ_header(r);
	if (header == NULL)
		return -1;
	struct cli_table t;
	cli_table_start(&t, stdout, form, "differs", (const char *const *)header);
	cli_table_title(&t, "Subjects whose policy lines differ between hosts");
	for (size_t i = 0; i < r->nsubjects; i++) {
		const struct subject *s = &r->subjects[order[i]];
		if (!differs(r, s))
			continue;
		worse(r, CLI_WARN);
		FILE *o = cli_table_row(&t);
		cli_text_escape(o, r->strs[s->kind].p);
		fputc('\t', o);
		text_subject(o, r->strs[s->name].p);
		for (size_t h = 0, c = 0; h < r->nhosts; h++) {
			fputc('\t', o);
			if (c < s->n && s->cells[c].host == h)
				text_caps(o, &r->strs[s->cells[c++].caps]);
			else
				fputc('-', o);
		}
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
	free_strings(header, r->nhosts + 2);
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_str(FILE *out, const char *key, const char *s, int hex)
{
	fprintf(out, "\"%s\":", key);
	cli_json_string(out, s);
	if (hex) {
		fprintf(out, ",\"%s_hex\":", key);
		cli_json_hex(out, s);
	}
}

/* A host as every record names it: its name, exactly, and its machine-id. */
static void json_hostref(FILE *out, const struct host *h)
{
	json_str(out, "host", h->name, 1);
	if (h->machine_id[0])
		fprintf(out, ",\"machine_id\":\"%s\"", h->machine_id);
	else
		fputs(",\"machine_id\":null", out);
}

static void json_grants(FILE *out, const struct report *r, const size_t *order)
{
	fputs("\"grants\":[", out);
	for (size_t i = 0; i < r->ngrants; i++) {
		const struct grant *g = &r->grants[order[i]];
		const struct subject *s = &r->subjects[g->subject];
		fputs(i ? ",{" : "{", out);
		json_str(out, "capability", r->strs[g->capability].p, 0);
		fputc(',', out);
		json_str(out, "kind", r->strs[s->kind].p, 0);
		fputc(',', out);
		json_str(out, "subject", r->strs[s->name].p, 0);
		fputs(",\"hosts\":[", out);
		for (size_t k = 0; k < g->n; k++) {
			fputs(k ? ",{" : "{", out);
			json_hostref(out, &r->hosts[g->hosts[k]]);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputc(']', out);
}

static void json_findings(FILE *out, struct report *r, enum kept kind)
{
	static const char *const keys[] = { [KEPT_DRIFT] = "drift", [KEPT_ERROR] = "errors",
					     [KEPT_ENDED] = "ended" };
	const char *sep = "";
	fprintf(out, "\"%s\":[", keys[kind]);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];
		if (f->kind != kind)
			continue;
		worse(r, kept_kinds[kind].rc);
		fprintf(out, "%s{", sep);
		json_hostref(out, &r->hosts[f->host]);
		fputc(',', out);
		json_str(out, "id", r->strs[f->id].p, 0);
		fputc(',', out);
		json_str(out, "path", r->strs[f->path].p, 0);
		fputc(',', out);
		json_str(out, "message", r->strs[f->message].p, 0);
		fputc('}', out);
		sep = ",";
	}
	fputc(']', out);
}

/* A caps key as JSON: the array of its names. */
static void json_caps(FILE *out, const struct str *caps)
{
	fputc('[', out);
	for (const char *p = caps->p; p < caps->p + caps->n; p += strlen(p) + 1) {
		if (p != caps->p)
			fputc(',', out);
		cli_json_string(out, p);
	}
	fputc(']', out);
}

static void json_differences(FILE *out, struct report *r, const size_t *order)
{
	const char *sep = "";
	fputs("\"differs\":[", out);
	for (size_t i = 0; i < r->nsubjects; i++) {
		const struct subject *s = &r->subjects[order[i]];
		if (!differs(r, s))
			continue;
		worse(r, CLI_WARN);
		fprintf(out, "%s{", sep);
		json_str(out, "kind", r->strs[s->kind].p, 0);
		fputc(',', out);
		json_str(out, "subject", r->strs[s->name].p, 0);
		fputs(",\"hosts\":[", out);
		for (size_t h = 0, c = 0; h < r->nhosts; h++) {
			fputs(h ? ",{" : "{", out);
			json_hostref(out, &r->hosts[h]);
			fputs(",\"caps\":", out);
			if (c < s->n && s->cells[c].host == h)
				json_caps(out, &r->strs[s->cells[c++].caps]);
			else
				fputs("null", out);
			fputc('}', out);
		}
		fputs("]}", out);
		sep = ",";
	}
	fputc(']', out);
}

static void print_json(struct report *r, const size_t *grants, const size_t *subjects)
{
	FILE *out = stdout;
	fputs("{\"version\":3,\"hosts\":[", out);
	for (size_t h = 0; h < r->nhosts; h++) {
		fputs(h ? ",{" : "{", out);
		json_hostref(out, &r->hosts[h]);
		fputc(',', out);
		json_str(out, "file", r->hosts[h].file, 1);
		fprintf(out, ",\"named_by\":\"%s\"}", r->hosts[h].named_by_file ? "file-name" : "host-field");
	}
	fputs("],\"rejected\":[", out);
	for (size_t i = 0; i < r->nrejected; i++) {
		fputs(i ? ",{" : "{", out);
		json_str(out, "file", r->rejected[i].file, 1);
		fputc(',', out);
		json_str(out, "why", r->rejected[i].why, 0);
		fputc('}', out);
	}
	fputs("],", out);
	if (r->usage) {
		cli_report_usage_json(out, &r->used);
		fputs("}\n", out);
		return;
	}
	json_grants(out, r, grants);
	fputc(',', out);
	json_findings(out, r, KEPT_DRIFT);
	fputc(',', out);
	json_findings(out, r, KEPT_ERROR);
	fputc(',', out);
	json_findings(out, r, KEPT_ENDED);
	fputc(',', out);
	json_differences(out, r, subjects);
	fputs("}\n", out);
}

/* ---- the command -------------------------------------------------------------------------- */

static void report_free(struct report *r)
{
	for (size_t h = 0; h < r->nhosts; h++) {
		free(r->hosts[h].name);
		free(r->hosts[h].label);
	}
	for (size_t i = 0; i < r->nrejected; i++)
		free(r->rejected[i].why);
	for (size_t i = 0; i < r->nstrs; i++)
		free(r->strs[i].p);
	for (size_t i = 0; i < r->nsubjects; i++)
		free(r->subjects[i].cells);
	for (size_t i = 0; i < r->ngrants; i++)
		free(r->grants[i].hosts);
	struct map *maps[] = { &r->str_map, &r->subject_map, &r->grant_map, &r->name_map,
			       &r->id_map, &r->file_map };
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		free(maps[i]->slots);
	free(r->hosts);
	free(r->rejected);
	free(r->strs);
	free(r->subjects);
	free(r->grants);
	free(r->findings);
	free(r->pairs);
	free(r->scratch);
}

/* The view of the files kept, as tables, TSV or JSON. -1 out of memory (nothing printed). */
static int print_report(struct report *r, int json, enum cli_form form)
{
	size_t *grants = sorted(r, r->ngrants, grant_cmp);
	size_t *subjects = grants ? sorted(r, r->nsubjects, subject_cmp) : NULL;
	int rc = subjects == NULL ? -1 : 0;
	if (rc == 0 && json) {
		print_json(r, grants, subjects);
	} else if (rc == 0 && r->usage) {
		text_hosts(r, form);
		cli_report_usage_text(&r->used, form);
	} else if (rc == 0) {
		text_hosts(r, form);
		text_grants(r, form, grants);
		text_findings(r, form, KEPT_DRIFT);
		text_findings(r, form, KEPT_ERROR);
		text_findings(r, form, KEPT_ENDED);
		rc = text_differences(r, form, subjects);
	}
	free(grants);
	free(subjects);
	return rc;
}

int cli_report_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_form form = cli_output_form(&argc, argv);
	int json = 0, c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return CLI_OK;
		}
		if (c != 'j') {
			cli_bad_option(argv, usage);
			return CLI_ERROR;
		}
		json = 1;
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	size_t nfiles = (size_t)(argc - optind);
	struct report r = { .hosts = calloc(nfiles, sizeof(*r.hosts)),
			    .rejected = calloc(nfiles, sizeof(*r.rejected)) };
	cli_hash_key(r.key);
	int rc = r.hosts == NULL || r.rejected == NULL ? -1 : 0;
	for (int i = optind; rc == 0 && i < argc; i++)
		rc = load(&r, argv[i]);
	if (rc == 0)
		rc = make_labels(&r);
	if (rc < 0) {
		cli_out_of_memory("report", "no report");
		worse(&r, CLI_ERROR);
	} else if (print_report(&r, json, form) < 0) {
		fprintf(stderr, "capdelegate: report: %s: the report is incomplete\n", strerror(ENOMEM));
		worse(&r, CLI_ERROR);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "capdelegate: report: standard output: %s\n", strerror(errno));
		worse(&r, CLI_ERROR);
	}
	report_free(&r);
	return r.rc;
}
