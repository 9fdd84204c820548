/* cli_usage_join.c - see cli_usage_rec.h: the records taken in, the sessions and their grants,
 * each run joined to its session's grant and counted. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_hash.h"
#include "cli_usage_rec.h"

const char cu_why_no_session[] = "no-session";
const char cu_why_no_record[] = "no-module-record";
const char cu_why_ambiguous[] = "records-disagree";

/* ---- a string-keyed hash table ----------------------------------------------------------- */

struct cu_slot {
	char *key;
	size_t klen;
	uint64_t hash;
	void *val;
};
/* User names come from the log (a name typed at a login prompt is recorded too): hashed under
 * the state's random key (cli_hash.h), so that no log can make the tables quadratic. */
struct cu_map {
	struct cu_slot *s;
	size_t cap, n;
	const uint64_t *key;
};

static uint64_t hash_bytes(const struct cu_map *m, const char *k, size_t n)
{
	return cli_siphash(m->key, k, n);
}

static struct cu_slot *map_find(struct cu_map *m, const char *k, size_t n, uint64_t h)
{
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (m->s[i].key == NULL || (m->s[i].hash == h && m->s[i].klen == n &&
					    memcmp(m->s[i].key, k, n) == 0))
			return &m->s[i];
}

static int map_grow(struct cu_map *m)
{
	struct cu_map g = { calloc(m->cap * 2, sizeof(*g.s)), m->cap * 2, m->n, m->key };
	if (g.s == NULL)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].key != NULL)
			*map_find(&g, m->s[i].key, m->s[i].klen, m->s[i].hash) = m->s[i];
	free(m->s);
	*m = g;
	return 0;
}

/* The value slot of key @k (@n bytes): NULL when memory ran out; *slot NULL when new. */
static void **map_at(struct cu_map *m, const char *k, size_t n)
{
	uint64_t h = hash_bytes(m, k, n);
	struct cu_slot *s = map_find(m, k, n, h);
	if (s->key != NULL)
		return &s->val;
	if ((m->n + 1) * 4 > m->cap * 3) {
		if (map_grow(m) != 0)
			return NULL;
		s = map_find(m, k, n, h);
	}
	if ((s->key = malloc(n ? n : 1)) == NULL)
		return NULL;
	memcpy(s->key, k, n);
	s->klen = n;
	s->hash = h;
	s->val = NULL;
	m->n++;
	return &s->val;
}

/* Remove key @k, if there, and free its value with @drop: the entries after it in its run move
 * back (linear probing keeps no tombstones). */
static void map_del(struct cu_map *m, const char *k, size_t n, void (*drop)(void *))
{
	struct cu_slot *s = map_find(m, k, n, hash_bytes(m, k, n));
	if (s->key == NULL)
		return;
	free(s->key);
	drop(s->val);
	size_t hole = (size_t)(s - m->s), mask = m->cap - 1;
	m->s[hole].key = NULL;
	m->n--;
	for (size_t i = (hole + 1) & mask; m->s[i].key != NULL; i = (i + 1) & mask) {
		size_t home = m->s[i].hash & mask;
		/* stays unless its home lies cyclically outside (hole, i] */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			m->s[hole] = m->s[i];
			m->s[i].key = NULL;
			hole = i;
		}
	}
}

static void *map_get(struct cu_map *m, const char *k, size_t n)
{
	struct cu_slot *s = map_find(m, k, n, hash_bytes(m, k, n));
	return s->key != NULL ? s->val : NULL;
}

static struct cu_map *map_new(const uint64_t key[2])
{
	struct cu_map *m = calloc(1, sizeof(*m));
	if (m != NULL && (m->s = calloc(m->cap = 64, sizeof(*m->s))) == NULL) {
		free(m);
		m = NULL;
	}
	if (m != NULL)
		m->key = key;
	return m;
}

static void map_free(struct cu_map *m, void (*drop)(void *))
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->cap; i++) {
		free(m->s[i].key);
		if (m->s[i].key != NULL && drop != NULL)
			drop(m->s[i].val);
	}
	free(m->s);
	free(m);
}

/* A key of NUL-separated parts: "NODE\0NUMBER" and the like, in @buf (@size bytes). */
static size_t key2(char **buf, size_t *size, const char *a, const char *b, size_t blen)
{
	size_t alen = strlen(a), n = alen + 1 + blen;
	if (n > *size) {
		char *p = realloc(*buf, n);
		if (p == NULL)
			return 0;
		*buf = p;
		*size = n;
	}
	memcpy(*buf, a, alen + 1);
	memcpy(*buf + alen + 1, b, blen);
	return n;
}

/* ---- sessions and their grants ------------------------------------------------------------ */

enum { SESS_NONE, SESS_GRANTED, SESS_AMBIGUOUS };
/* Their user is the users table's entry (one copy of each name, however many sessions). */
struct sess {
	int state;
	struct cu_user *user;
	cd_capmask grant;
	uint32_t auid;		/* from the LOGIN record; CU_UNSET: not known */
	uint32_t login_pid;	/* the pid the LOGIN record gave the session; CU_UNSET: none */
};
struct pending {
	int live;
	int64_t sec;
	struct cu_user *user;
	cd_capmask grant;
};

static void plain_drop(void *v)
{
	free(v);
}

static void user_drop(void *v)
{
	struct cu_user *u = v;
	if (u != NULL) {
		free(u->name);
		free(u->last_rules);
	}
	free(u);
}

static void tally_drop(void *v)
{
	struct cu_tally *t = v;
	if (t != NULL) {
		free(t->user);
		free(t->file);
	}
	free(t);
}

/* A run attributed, waiting for the end of its event. */
struct cu_held {
	char *node, *exe;
	uint64_t serial, line;
	int64_t sec;
	const char *user;	/* the users table's name (never freed before the state) */
	cd_capmask used, denied;	/* what the grant and the mark say of the run */
	cd_capmask pp;		/* BPRM_FCAPS's pP; 0: none seen */
};

static void held_drop_all(struct cu_state *st)
{
	for (size_t i = 0; i < st->nheld; i++) {
		struct cu_held *h = &st->held[(st->held0 + i) % CU_HOLD_RUNS];
		free(h->node);
		free(h->exe);
	}
	st->nheld = st->held0 = 0;
}

int cu_state_init(struct cu_state *st, const struct cu_mark *marks, size_t nmarks, int64_t since)
{
	memset(st, 0, sizeof(*st));
	st->marks = marks;
	st->nmarks = nmarks;
	st->since = since;
	cli_hash_key(st->hkey);
	st->sessions = map_new(st->hkey);
	st->pending = map_new(st->hkey);
	st->tallies = map_new(st->hkey);
	st->users = map_new(st->hkey);
	st->held = calloc(CU_HOLD_RUNS, sizeof(*st->held));
	if (!st->sessions || !st->pending || !st->tallies || !st->users || !st->held) {
		cu_state_free(st);
		return -1;
	}
	return 0;
}

void cu_state_free(struct cu_state *st)
{
	map_free(st->sessions, plain_drop);
	map_free(st->pending, plain_drop);
	map_free(st->tallies, tally_drop);
	map_free(st->users, user_drop);
	if (st->held != NULL)
		held_drop_all(st);
	free(st->held);
	st->held = NULL;
	free(st->kbuf);
	st->kbuf = NULL;
	st->sessions = st->pending = st->tallies = st->users = NULL;
}

static int mark_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cu_mark *)a)->path, ((const struct cu_mark *)b)->path);
}

void cu_marks_sort(struct cu_mark *marks, size_t n)
{
	if (n > 1)
		qsort(marks, n, sizeof(*marks), mark_cmp);
}

static const struct cu_mark *mark_of(const struct cu_state *st, const char *path)
{
	struct cu_mark k = { path, 0 };
	return st->nmarks ? bsearch(&k, st->marks, st->nmarks, sizeof(k), mark_cmp) : NULL;
}

static int set_text(char **dst, const char *src)
{
	char *c = strdup(src);
	if (c == NULL)
		return -1;
	free(*dst);
	*dst = c;
	return 0;
}

/* The session of (node, ses), created empty when new; NULL when memory ran out. */
static struct sess *session_at(struct cu_state *st, const char *node, uint32_t ses, char **kb,
			       size_t *ks)
{
	size_t n = key2(kb, ks, node, (const char *)&ses, sizeof(ses));
	void **v = n ? map_at(st->sessions, *kb, n) : NULL;
	if (v != NULL && *v == NULL && (*v = calloc(1, sizeof(struct sess))) != NULL)
		((struct sess *)*v)->auid = ((struct sess *)*v)->login_pid = CU_UNSET;
	return v != NULL ? *v : NULL;
}

/* A grant that now holds in session @s. */
static void session_grant(struct sess *s, struct cu_user *user, cd_capmask grant)
{
	if (s->state == SESS_NONE) {
		s->state = SESS_GRANTED;
		s->grant = grant;
		s->user = user;
	} else if (s->state == SESS_GRANTED && (s->grant != grant || s->user != user)) {
		s->state = SESS_AMBIGUOUS;
	}
}

/* The user of grant record @r, its last grant and sessions counted; NULL: out of memory. */
static struct cu_user *take_user(struct cu_state *st, const struct cu_rec *r)
{
	void **v = map_at(st->users, r->acct, strlen(r->acct));
	if (v == NULL)
		return NULL;
	if (*v == NULL) {
		struct cu_user *u = calloc(1, sizeof(*u));
		if (u == NULL || (u->name = strdup(r->acct)) == NULL) {
			free(u);
			return NULL;
		}
		*v = u;
	}
	struct cu_user *u = *v;
	if (r->sec >= u->last_at) {
		u->last_at = r->sec;
		u->last_grant = r->grant;
		if (set_text(&u->last_rules, r->rules) != 0)
			return NULL;
	}
	if (r->sec >= st->since)
		u->sessions++;
	return u;
}

static int take_grant(struct cu_state *st, const struct cu_rec *r, char **kb, size_t *ks)
{
	struct cu_user *u = take_user(st, r);
	if (u == NULL)
		return -1;
	if (r->ses != CU_UNSET) {
		struct sess *s = session_at(st, r->node, r->ses, kb, ks);
		if (s == NULL)
			return -1;
		session_grant(s, u, r->grant);
		return 0;
	}
	/* written before the session existed: its LOGIN record (same pid) says which it is */
	size_t n = key2(kb, ks, r->node, (const char *)&r->pid, sizeof(r->pid));
	void **v = n ? map_at(st->pending, *kb, n) : NULL;
	if (v == NULL || (*v == NULL && (*v = calloc(1, sizeof(struct pending))) == NULL))
		return -1;
	struct pending *p = *v;
	st->pending_live += !p->live;
	p->live = 1;
	p->sec = r->sec;
	p->grant = r->grant;
	p->user = u;
	return 0;
}

/* No grant waits for its session: the table of pids is emptied, so that memory does not grow
 * with the pids a long log has seen. */
static int forget_pending(struct cu_state *st)
{
	if (st->pending_live > 0 || st->pending->n < 256)
		return 0;
	struct cu_map *fresh = map_new(st->hkey);
	if (fresh == NULL)
		return -1;
	map_free(st->pending, plain_drop);
	st->pending = fresh;
	return 0;
}

static int take_login(struct cu_state *st, const struct cu_rec *r, char **kb, size_t *ks)
{
	struct sess *s = session_at(st, r->node, r->ses, kb, ks);
	if (s == NULL)
		return -1;
	/* a new session of that number (the numbers start again at each boot) */
	s->state = SESS_NONE;
	s->auid = r->auid;
	s->login_pid = r->pid;
	size_t n = key2(kb, ks, r->node, (const char *)&r->pid, sizeof(r->pid));
	struct pending *p = n ? map_get(st->pending, *kb, n) : NULL;
	if (n == 0)
		return -1;
	if (p == NULL || !p->live)
		return 0;
	p->live = 0;
	st->pending_live--;
	if (r->sec >= p->sec && r->sec - p->sec <= CU_PENDING_SECONDS)
		session_grant(s, p->user, p->grant);
	return forget_pending(st);
}

/* Count one run in the tally of (@kind, @user, @cap, @file, @why). */
/* A PAM session closed. By the process that began it (login, sshd's monitor): the session is
 * over and forgotten; its number comes back only with a LOGIN record. By another (su in the
 * session closes its own PAM session, with the session's number): nothing. */
static int take_end(struct cu_state *st, const struct cu_rec *r, char **kb, size_t *ks)
{
	size_t n = key2(kb, ks, r->node, (const char *)&r->ses, sizeof(r->ses));
	if (n == 0)
		return -1;
	struct sess *s = map_get(st->sessions, *kb, n);
	if (s != NULL && s->login_pid == r->pid)
		map_del(st->sessions, *kb, n, plain_drop);
	return 0;
}

static int tally(struct cu_state *st, int kind, const char *user, int cap, const char *file,
		 const char *why, int64_t at, char **kb, size_t *ks)
{
	char head[24];
	int hlen = snprintf(head, sizeof(head), "%d:%d", kind, cap) + 1;
	size_t ulen = user ? strlen(user) + 1 : 0, flen = strlen(file) + 1;
	size_t wlen = why ? strlen(why) + 1 : 0, n = (size_t)hlen + ulen + flen + wlen;
	if (n > *ks) {
		char *p = realloc(*kb, n);
		if (p == NULL)
			return -1;
		*kb = p;
		*ks = n;
	}
	char *k = *kb;
	memcpy(k, head, (size_t)hlen);
	k += hlen;
	if (user != NULL) {
		memcpy(k, user, ulen);
		k += ulen;
	}
	memcpy(k, file, flen);
	if (why != NULL)
		memcpy(k + flen, why, wlen);
	void **v = map_at(st->tallies, *kb, n);
	if (v == NULL)
		return -1;
	if (*v == NULL) {
		struct cu_tally *t = calloc(1, sizeof(*t));
		if (t == NULL || (t->file = strdup(file)) == NULL ||
		    (user != NULL && (t->user = strdup(user)) == NULL)) {
			tally_drop(t);
			return -1;
		}
		t->kind = kind;
		t->cap = cap;
		t->why = why;
		t->first = t->last = at;
		*v = t;
	}
	struct cu_tally *t = *v;
	t->runs++;
	if (at < t->first)
		t->first = at;
	if (at > t->last)
		t->last = at;
	return 0;
}

/* Tally the bits of @m for @user, as used grants or as denied wants (@kind). */
static int tally_bits(struct cu_state *st, int kind, const char *user, cd_capmask m,
		      const char *file, int64_t at, char **kb, size_t *ks)
{
	for (int cap = 0; cap < 64; cap++)
		if ((m >> cap & 1) && tally(st, kind, user, cap, file, NULL, at, kb, ks) != 0)
			return -1;
	return 0;
}

/* The run of @r in the window: attributed now, by the session's state at its SYSCALL record,
 * and held (@held filled) when it is some user's, for what its BPRM_FCAPS will say. 1 held, 0
 * counted whole, -1 out of memory. */
static int attribute_run(struct cu_state *st, const struct cu_rec *r, struct cu_held *held,
			 char **kb, size_t *ks)
{
	const struct cu_mark *mk = mark_of(st, r->exe);
	st->runs++;
	if (mk == NULL) {
		st->runs_unmarked++;
		return 0;
	}
	const char *why = NULL;
	struct sess *s = NULL;
	if (r->ses == CU_UNSET) {
		why = cu_why_no_session;
	} else {
		size_t n = key2(kb, ks, r->node, (const char *)&r->ses, sizeof(r->ses));
		if (n == 0)
			return -1;
		s = map_get(st->sessions, *kb, n);
		if (s == NULL || s->state == SESS_NONE)
			why = cu_why_no_record;
		else if (s->state == SESS_AMBIGUOUS || (s->auid != CU_UNSET && s->auid != r->auid))
			why = cu_why_ambiguous;	/* or the run's login uid is not the session's */
	}
	if (why != NULL)
		return tally(st, CU_NOBODY, NULL, -1, r->exe, why, r->sec, kb, ks);
	cd_capmask used = mk->fi & s->grant, denied = mk->fi & ~s->grant;
	s->user->used |= used;
	if (tally_bits(st, CU_USED, s->user->name, used, r->exe, r->sec, kb, ks) != 0 ||
	    tally_bits(st, CU_DENIED, s->user->name, denied, r->exe, r->sec, kb, ks) != 0)
		return -1;
	*held = (struct cu_held){ .serial = r->serial, .line = st->lines, .sec = r->sec,
				  .user = s->user->name, .used = used, .denied = denied };
	return 1;
}

/* The oldest held run's event has ended: the kernel's word against the grant's. A bit gained
 * that the grant lacks came from elsewhere (outside); a bit the grant and the mark promise
 * that was not gained did not reach the run (the file's fI on disk, the bounding set, a
 * nosuid mount: ungained). */
static int end_oldest(struct cu_state *st)
{
	struct cu_held *h = &st->held[st->held0];
	int rc = 0;
	if (tally_bits(st, CU_OUTSIDE, h->user, h->denied & h->pp, h->exe, h->sec, &st->kbuf,
		       &st->ksize) != 0 ||
	    tally_bits(st, CU_UNGAINED, h->user, h->used & ~h->pp, h->exe, h->sec, &st->kbuf,
		       &st->ksize) != 0)
		rc = -1;
	free(h->node);
	free(h->exe);
	st->held0 = (st->held0 + 1) % CU_HOLD_RUNS;
	st->nheld--;
	if (rc != 0)
		st->oom = 1;
	return rc;
}

/* The held run of event (@node, @serial), or NULL. */
static struct cu_held *held_of(struct cu_state *st, const char *node, size_t node_len,
			       uint64_t serial, size_t *at)
{
	for (size_t i = 0; i < st->nheld; i++) {
		struct cu_held *h = &st->held[(st->held0 + i) % CU_HOLD_RUNS];
		if (h->serial == serial && strlen(h->node) == node_len &&
		    memcmp(h->node, node, node_len) == 0) {
			*at = i;
			return h;
		}
	}
	return NULL;
}

int cu_flush(struct cu_state *st)
{
	while (st->nheld > 0)
		if (end_oldest(st) != 0)
			return -1;
	return 0;
}

int cu_event(struct cu_state *st, const struct cu_head *h)
{
	st->lines++;
	while (st->nheld > 0 && st->lines - st->held[st->held0].line > CU_HOLD_LINES)
		if (end_oldest(st) != 0)
			return -1;
	size_t at;
	if (st->nheld == 0 || h->type_len != 9 || memcmp(h->type, "PROCTITLE", 9) != 0 ||
	    held_of(st, h->node ? h->node : "", h->node_len, h->serial, &at) == NULL)
		return 0;
	/* the last record of its event: it and the runs held before it end (their own PROCTITLE
	 * was missed, or came first: none of theirs can follow any more in a kernel's order) */
	for (size_t i = 0; i <= at; i++)
		if (end_oldest(st) != 0)
			return -1;
	return 0;
}

static int take_exec(struct cu_state *st, const struct cu_rec *r)
{
	if (r->sec < st->since)
		return 0;
	if (st->nheld == CU_HOLD_RUNS && end_oldest(st) != 0)
		return -1;
	struct cu_held *h = &st->held[(st->held0 + st->nheld) % CU_HOLD_RUNS];
	int rc = attribute_run(st, r, h, &st->kbuf, &st->ksize);
	if (rc <= 0)
		return rc;
	if ((h->node = strdup(r->node)) == NULL || (h->exe = strdup(r->exe)) == NULL) {
		free(h->node);
		return -1;
	}
	st->nheld++;
	return 0;
}

/* The BPRM_FCAPS record of a held run's event (same node, same serial); of another, nothing. */
static void take_fcaps(struct cu_state *st, const struct cu_rec *r)
{
	size_t at;
	struct cu_held *h = held_of(st, r->node, strlen(r->node), r->serial, &at);
	if (h != NULL)
		h->pp = r->pp;
}

int cu_take(struct cu_state *st, const struct cu_rec *r)
{
	int rc = 0;
	st->records++;
	switch (r->kind) {
	case CU_GRANT:
		rc = take_grant(st, r, &st->kbuf, &st->ksize);
		break;
	case CU_LOGIN:
		rc = take_login(st, r, &st->kbuf, &st->ksize);
		break;
	case CU_END:
		rc = take_end(st, r, &st->kbuf, &st->ksize);
		break;
	case CU_EXEC:
		rc = take_exec(st, r);
		break;
	case CU_FCAPS:
		take_fcaps(st, r);
		break;
	default:
		break;
	}
	if (rc != 0)
		st->oom = 1;
	return rc;
}

/* ---- results ------------------------------------------------------------------------------ */

static int str_cmp0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int tally_cmp(const void *pa, const void *pb)
{
	const struct cu_tally *a = *(struct cu_tally *const *)pa, *b = *(struct cu_tally *const *)pb;
	int c = str_cmp0(a->user, b->user);
	if (c == 0)
		c = (a->cap > b->cap) - (a->cap < b->cap);
	if (c == 0)
		c = strcmp(a->file, b->file);
	return c != 0 ? c : str_cmp0(a->why, b->why);
}

static int user_cmp(const void *pa, const void *pb)
{
	return strcmp((*(struct cu_user *const *)pa)->name, (*(struct cu_user *const *)pb)->name);
}

int cu_results(struct cu_state *st, struct cu_results *out)
{
	memset(out, 0, sizeof(*out));
	size_t nt = st->tallies->n;
	out->used = calloc(nt + 1, sizeof(*out->used));
	out->denied = calloc(nt + 1, sizeof(*out->denied));
	out->nobody = calloc(nt + 1, sizeof(*out->nobody));
	out->outside = calloc(nt + 1, sizeof(*out->outside));
	out->ungained = calloc(nt + 1, sizeof(*out->ungained));
	out->users = calloc(st->users->n + 1, sizeof(*out->users));
	if (!out->used || !out->denied || !out->nobody || !out->outside || !out->ungained ||
	    !out->users) {
		cu_results_free(out);
		return -1;
	}
	for (size_t i = 0; i < st->tallies->cap; i++) {
		struct cu_tally *t = st->tallies->s[i].key ? st->tallies->s[i].val : NULL;
		if (t == NULL)
			continue;
		if (t->kind == CU_USED)
			out->used[out->nused++] = t;
		else if (t->kind == CU_DENIED)
			out->denied[out->ndenied++] = t;
		else if (t->kind == CU_OUTSIDE)
			out->outside[out->noutside++] = t;
		else if (t->kind == CU_UNGAINED)
			out->ungained[out->nungained++] = t;
		else
			out->nobody[out->nnobody++] = t;
		const struct cu_mark *mk = t->kind == CU_NOBODY ? mark_of(st, t->file) : NULL;
		for (int cap = 0; mk != NULL && cap < 64; cap++)
			if (mk->fi >> cap & 1)
				out->nobody_runs[cap] += t->runs;
	}
	for (size_t i = 0; i < st->users->cap; i++)
		if (st->users->s[i].key != NULL)
			out->users[out->nusers++] = st->users->s[i].val;
	qsort(out->used, out->nused, sizeof(*out->used), tally_cmp);
	qsort(out->denied, out->ndenied, sizeof(*out->denied), tally_cmp);
	qsort(out->nobody, out->nnobody, sizeof(*out->nobody), tally_cmp);
	qsort(out->outside, out->noutside, sizeof(*out->outside), tally_cmp);
	qsort(out->ungained, out->nungained, sizeof(*out->ungained), tally_cmp);
	qsort(out->users, out->nusers, sizeof(*out->users), user_cmp);
	return 0;
}

void cu_results_free(struct cu_results *res)
{
	free(res->used);
	free(res->denied);
	free(res->nobody);
	free(res->outside);
	free(res->ungained);
	free(res->users);
	memset(res, 0, sizeof(*res));
}
