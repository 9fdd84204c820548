/* cli_usage_rec.c - see cli_usage_rec.h: a line's header, its kind, a record's fields. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_usage_rec.h"

/* ---- the header of a line ------------------------------------------------------------ */

/* Decimal digits at *@p (at most @max of them, at least one) into *@v; advances *@p. */
static int digits(const char **p, const char *end, size_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	while (s < end && *s >= '0' && *s <= '9' && (size_t)(s - *p) < max)
		n = n * 10 + (uint64_t)(*s++ - '0');
	if (s == *p || (s < end && *s >= '0' && *s <= '9'))
		return -1;
	*p = s;
	*v = n;
	return 0;
}

static int skip(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return -1;
	*p += n;
	return 0;
}

int cu_head_parse(const char *line, size_t len, struct cu_head *h, const char **why)
{
	const char *p = line, *end = line + len;
	uint64_t sec, ms;
	memset(h, 0, sizeof(*h));
	if (skip(&p, end, "node=") == 0) {
		/* a host name: printable ASCII (a control byte such as the 0x1d of the enriched
		 * form is no name, and libauparse is not to see one there) */
		h->node = p;
		while (p < end && *p > ' ' && *p < 0x7f)
			p++;
		h->node_len = (size_t)(p - h->node);
		if (h->node_len == 0 || skip(&p, end, " ") != 0) {
			*why = "node= without a name of printable characters";
			return -1;
		}
	}
	if (skip(&p, end, "type=") != 0) {
		*why = "no type= where a record begins";
		return -1;
	}
	h->type = p;
	while (p < end && ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
			   *p == '[' || *p == ']'))
		p++;
	h->type_len = (size_t)(p - h->type);
	if (h->type_len == 0 || skip(&p, end, " msg=audit(") != 0) {
		*why = "no msg=audit( after the type";
		return -1;
	}
	/* 19 digits keep a time in int64_t; the kernel writes milliseconds as 3 digits */
	if (digits(&p, end, 18, &sec) != 0 || skip(&p, end, ".") != 0 ||
	    digits(&p, end, 3, &ms) != 0 || skip(&p, end, ":") != 0 ||
	    digits(&p, end, 20, &h->serial) != 0 || skip(&p, end, "):") != 0 ||
	    (p < end && *p != ' ')) {
		*why = "a malformed time stamp msg=audit(SECONDS.MS:SERIAL):";
		return -1;
	}
	h->sec = (int64_t)sec;
	h->ms = (unsigned)ms;
	if (memchr(line, '\0', len) != NULL) {
		*why = "a NUL byte in the record";
		return -1;
	}
	return 0;
}

static int type_is(const struct cu_head *h, const char *t)
{
	return h->type_len == strlen(t) && memcmp(h->type, t, h->type_len) == 0;
}

enum cu_kind cu_line_kind(const struct cu_head *h, const char *line, size_t len, const char *key_q,
			  int *sure)
{
	*sure = 1;
	if (type_is(h, "LOGIN"))
		return CU_LOGIN;
	if (type_is(h, "USER_END"))
		return CU_END;
	if (type_is(h, "BPRM_FCAPS"))
		return CU_FCAPS;
	if (type_is(h, "USER"))
		return memmem(line, len, "op=capdelegate-grant ", 21) != NULL ? CU_GRANT : CU_NONE;
	if (!type_is(h, "SYSCALL"))
		return CU_NONE;
	if (memmem(line, len, key_q, strlen(key_q)) != NULL)
		return CU_EXEC;
	*sure = 0;
	/* several keys (joined by \001) or a key with blanks: the kernel writes it in hex */
	for (const char *k = line; (k = memmem(k, len - (size_t)(k - line), " key=", 5)) != NULL; k += 5)
		if (k + 5 < line + len && ((k[5] >= '0' && k[5] <= '9') || (k[5] >= 'A' && k[5] <= 'F')))
			return CU_EXEC;
	return CU_NONE;
}

/* ---- one record's fields --------------------------------------------------------------- */

static int u32_field(const struct cu_fields *f, const char *name, uint32_t *v, const char **why)
{
	const char *s = f->raw(f->arg, name);
	uint64_t n;
	if (s == NULL || digits(&s, s + strlen(s), 10, &n) != 0 || *s != '\0' || n > CU_UNSET) {
		*why = name;
		return -1;
	}
	*v = (uint32_t)n;
	return 0;
}

/* Does the key field (decoded: keys joined by \001) name @key? */
static int has_key(const char *keys, const char *key)
{
	size_t n = strlen(key);
	for (const char *k = keys; k != NULL; k = strchr(k, '\001')) {
		if (*k == '\001')
			k++;
		if (strncmp(k, key, n) == 0 && (k[n] == '\0' || k[n] == '\001'))
			return 1;
	}
	return 0;
}

static int read_grant(struct cu_rec *r, int sure, const struct cu_fields *f, const char **why)
{
	const char *op = f->raw(f->arg, "op");
	if (op == NULL || strcmp(op, "capdelegate-grant") != 0) {
		*why = "op";
		return sure ? -1 : 0;
	}
	const char *grant = f->raw(f->arg, "grant"), *res = f->raw(f->arg, "res");
	const char *cwhy;
	if (u32_field(f, "pid", &r->pid, why) != 0 || u32_field(f, "ses", &r->ses, why) != 0)
		return -1;
	if ((r->acct = f->text(f->arg, "acct")) == NULL || r->acct[0] == '\0') {
		*why = "acct";
		return -1;
	}
	if (grant == NULL || cd_parse_caps(grant, strlen(grant), &r->grant, &cwhy) != 0) {
		*why = "grant";
		return -1;
	}
	if ((r->rules = f->raw(f->arg, "rules")) == NULL || res == NULL) {
		*why = r->rules == NULL ? "rules" : "res";
		return -1;
	}
	/* res=failed: capset failed and the module cleared pI, so the session holds nothing */
	if (strcmp(res, "success") != 0)
		r->grant = 0;
	return 1;
}

static int read_login(struct cu_rec *r, const struct cu_fields *f, const char **why)
{
	const char *res = f->raw(f->arg, "res");
	if (u32_field(f, "pid", &r->pid, why) != 0 || u32_field(f, "ses", &r->ses, why) != 0 ||
	    u32_field(f, "auid", &r->auid, why) != 0)
		return -1;
	if (res == NULL) {
		*why = "res";
		return -1;
	}
	return strcmp(res, "1") == 0 || strcmp(res, "success") == 0;
}

static int read_end(struct cu_rec *r, const struct cu_fields *f, const char **why)
{
	if (u32_field(f, "pid", &r->pid, why) != 0 || u32_field(f, "ses", &r->ses, why) != 0)
		return -1;
	return r->ses != CU_UNSET;
}

/* pp: the capability set in hex, as the kernel writes it (16 digits, or "0"). */
static int read_fcaps(struct cu_rec *r, const struct cu_fields *f, const char **why)
{
	const char *pp = f->raw(f->arg, "pp");
	size_t n = pp != NULL ? strspn(pp, "0123456789abcdefABCDEF") : 0;
	if (pp == NULL || n == 0 || n > 16 || pp[n] != '\0') {
		*why = "pp";
		return -1;
	}
	r->pp = (cd_capmask)strtoull(pp, NULL, 16);
	return 1;
}

static int read_exec(struct cu_rec *r, int sure, const struct cu_fields *f, const char *key,
		     const char **why)
{
	const char *keys = f->text(f->arg, "key"), *sys = f->text(f->arg, "syscall");
	const char *ok = f->raw(f->arg, "success");
	if (keys == NULL || !has_key(keys, key)) {
		*why = "key";
		return sure ? -1 : 0;
	}
	if (sys == NULL || ok == NULL) {
		*why = sys == NULL ? "syscall" : "success";
		return -1;
	}
	if ((strcmp(sys, "execve") != 0 && strcmp(sys, "execveat") != 0) || strcmp(ok, "yes") != 0)
		return 0;	/* another syscall the rule caught, or an exec that failed: no run */
	if (u32_field(f, "pid", &r->pid, why) != 0 || u32_field(f, "ses", &r->ses, why) != 0 ||
	    u32_field(f, "auid", &r->auid, why) != 0)
		return -1;
	if ((r->exe = f->text(f->arg, "exe")) == NULL || r->exe[0] != '/') {
		*why = "exe";
		return -1;
	}
	return 1;
}

int cu_rec_read(struct cu_rec *r, enum cu_kind kind, int sure, const struct cu_fields *f,
		const char *key, const char **why)
{
	r->kind = kind;
	r->acct = r->rules = r->exe = NULL;
	r->grant = r->pp = 0;
	r->auid = r->ses = CU_UNSET;
	switch (kind) {
	case CU_GRANT:
		return read_grant(r, sure, f, why);
	case CU_LOGIN:
		return read_login(r, f, why);
	case CU_END:
		return read_end(r, f, why);
	case CU_FCAPS:
		return read_fcaps(r, f, why);
	case CU_EXEC:
		return read_exec(r, sure, f, key, why);
	default:
		return 0;
	}
}
