/* cli_usage_read.c - see cli_usage_read.h. */
#include "config.h"

#include <auparse.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_out.h"
#include "cli_usage_read.h"

/* What the callback needs and what it found, for the one record fed at a time. */
struct ctx {
	struct cu_state *st;
	const char *key;
	enum cu_kind kind;
	int sure;		/* cu_line_kind's */
	int oom;		/* a decoded value could not be copied */
	const char *node;
	const struct cu_head *head;
	int done, rc;		/* rc: 0 taken or not one, -1 unreadable, -2 out of memory */
	const char *why;	/* unreadable: the whole reason, or */
	const char *field;	/* the field that cannot be read */
	char **copies;		/* decoded values of this record (auparse reuses its buffer) */
	size_t ncopies;
	auparse_state_t *au;
};

static const char *field_raw(void *arg, const char *name)
{
	struct ctx *c = arg;
	if (auparse_first_field(c->au) != 1)
		return NULL;
	return auparse_find_field(c->au, name);
}

static const char *field_text(void *arg, const char *name)
{
	struct ctx *c = arg;
	if (field_raw(arg, name) == NULL)
		return NULL;
	/* a field auparse found but cannot decode: its memory ran out (it decodes any bytes) */
	const char *v = auparse_interpret_field(c->au);
	char **more = v != NULL ? realloc(c->copies, (c->ncopies + 1) * sizeof(*more)) : NULL;
	if (more != NULL)
		c->copies = more;
	if (more == NULL || (c->copies[c->ncopies] = strdup(v)) == NULL) {
		c->oom = 1;
		return NULL;
	}
	return c->copies[c->ncopies++];
}

static void event_ready(auparse_state_t *au, auparse_cb_event_t type, void *arg)
{
	struct ctx *c = arg;
	if (type != AUPARSE_CB_EVENT_READY || c->done)
		return;
	c->done = 1;
	if (auparse_get_num_records(au) != 1 || auparse_first_record(au) != 1) {
		c->rc = -1;
		c->why = "libauparse did not read it as one record";
		return;
	}
	struct cu_fields f = { field_raw, field_text, c };
	struct cu_rec r;
	int got = cu_rec_read(&r, c->kind, c->sure, &f, c->key, &c->field);
	if (c->oom) {
		c->rc = -2;
		return;
	}
	if (got < 0) {
		c->rc = -1;
		return;
	}
	if (got == 0)
		return;
	r.node = c->node;
	r.sec = c->head->sec;
	r.ms = c->head->ms;
	r.serial = c->head->serial;
	if (cu_take(c->st, &r) != 0)
		c->rc = -2;
}

static char *message(const char *name, unsigned long long n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static char *message(const char *name, unsigned long long n, const char *fmt, ...)
{
	char *out = NULL, *what = NULL;
	size_t size = 0;
	va_list ap;
	va_start(ap, fmt);
	int ok = vasprintf(&what, fmt, ap) >= 0;
	va_end(ap);
	FILE *f = ok ? open_memstream(&out, &size) : NULL;
	if (f != NULL) {
		cli_text_escape(f, name);	/* the file's name is anyone's text: escaped */
		fprintf(f, ": record %llu: %s", n, what);
		if (fclose(f) != 0) {
			free(out);
			out = NULL;
		}
	}
	free(what);
	return out;
}

/* Feed one record usage needs to libauparse and take what it says. */
static int feed(struct ctx *c, char *line, size_t len)
{
	c->done = 0;
	c->oom = 0;
	c->rc = 0;
	c->why = c->field = NULL;
	line[len] = '\n';	/* auparse's feed splits at newlines: the record, whole */
	int rc = auparse_feed(c->au, line, len + 1);
	line[len] = '\0';
	if (rc == 0)
		auparse_flush_feed(c->au);
	for (size_t i = 0; i < c->ncopies; i++)
		free(c->copies[i]);
	c->ncopies = 0;
	if (rc != 0 || !c->done) {
		c->why = "libauparse could not parse it";
		return -1;
	}
	return c->rc;
}

int cu_read_stream(struct cu_state *st, FILE *in, const char *name, const char *key, char **err)
{
	struct ctx c = { .st = st, .key = key };
	char *line = NULL, *key_q = NULL, *node = NULL;
	size_t cap = 0, nodecap = 0;
	unsigned long long n = 0;
	int rc = -1;
	*err = NULL;
	if (asprintf(&key_q, " key=\"%s\"", key) < 0) {
		key_q = NULL;
		goto out;
	}
	if ((c.au = auparse_init(AUSOURCE_FEED, NULL)) == NULL)
		goto out;
	auparse_set_escape_mode(c.au, AUPARSE_ESC_RAW);	/* decoded values as their bytes */
	auparse_add_callback(c.au, event_ready, &c, NULL);
	for (;;) {
		errno = 0;
		ssize_t len = getline(&line, &cap, in);
		if (len < 0) {
			if (errno != 0 || ferror(in))
				*err = message(name, n + 1, "cannot be read: %s", strerror(errno ? errno : EIO));
			else if (cu_flush(st) == 0)	/* the last run's event ends with the log */
				rc = 0;
			break;
		}
		n++;
		if (line[len - 1] != '\n') {
			*err = message(name, n, "cut short: the last record has no end of line "
				       "(a log being written, or truncated)");
			break;
		}
		line[--len] = '\0';
		struct cu_head h;
		const char *why;
		if (cu_head_parse(line, (size_t)len, &h, &why) != 0) {
			*err = message(name, n, "not an audit record: %s", why);
			break;
		}
		if (st->oldest == 0 || h.sec < st->oldest)
			st->oldest = h.sec;
		if (cu_event(st, &h) != 0)
			break;
		enum cu_kind kind = cu_line_kind(&h, line, (size_t)len, key_q, &c.sure);
		if (kind == CU_NONE)
			continue;
		if (h.node_len + 1 > nodecap) {
			char *p = realloc(node, h.node_len + 1);
			if (p == NULL)
				break;
			node = p;
			nodecap = h.node_len + 1;
		}
		memcpy(node, h.node ? h.node : "", h.node_len);
		node[h.node_len] = '\0';
		c.kind = kind;
		c.node = node;
		c.head = &h;
		int got = feed(&c, line, (size_t)len);
		if (got == -2)
			break;
		if (got < 0 && c.field != NULL) {
			*err = message(name, n, "%s record without a readable %s field",
				       kind == CU_GRANT ? "a grant" : kind == CU_LOGIN ? "a LOGIN" :
				       kind == CU_END ? "a USER_END" : "an exec",
				       c.field);
			break;
		}
		if (got < 0) {
			*err = message(name, n, "%s", c.why ? c.why : "unreadable");
			break;
		}
	}
out:
	if (rc != 0 && *err == NULL)
		*err = message(name, n, "out of memory");
	if (c.au != NULL)
		auparse_destroy(c.au);
	free(c.copies);
	free(line);
	free(node);
	free(key_q);
	return rc;
}
