/*
 * cli_audit_json.c - the audit as one JSON document. The schema is documented in
 * capdelegate(8) (JSON OUTPUT) and checked by tests/cli/check-json.py; it only grows: a key
 * once published keeps its name and type ("version" says which schema this is).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_audit.h"
#include "cli_common.h"
#include "cli_out.h"

/* 2: fP, fI and fE of a value the kernel will not show are null (unknown), no longer empty;
 * scan.vanished, errors[] and vanished[] added. 3: host and host_hex added (report).
 * 4: userdb (systemd's user records) added. 5: machine_id and userdb.records[].privileged
 * added. 6: policy.at (the moment the lines' windows are judged at), policy.rules[] holds every
 * line, in force or not, each with from, until and in_force; the ended-line finding;
 * processes[].state, grant, beyond, sessionid and unit. */
#define SCHEMA_VERSION 6

/* "key": "text", "key_hex": "bytes" - the string for people, the hex for exact bytes. */
static void json_name(FILE *out, const char *key, const char *s)
{
	fprintf(out, "\"%s\":", key);
	cli_json_string(out, s);
	fprintf(out, ",\"%s_hex\":", key);
	cli_json_hex(out, s);
}

static void json_subject(FILE *out, enum cd_subject_kind kind, const char *name)
{
	fprintf(out, "\"kind\":\"%s\",\"subject\":", cd_subject_kind_str(kind));
	cli_json_subject(out, kind, name);
}

/* "key":"2026-12-14T18:00Z", or null. */
static void json_time(FILE *out, const char *key, int has, int64_t t)
{
	char buf[32];
	if (has)
		fprintf(out, ",\"%s\":\"%s\"", key, cd_time_format(t, buf, sizeof(buf)));
	else
		fprintf(out, ",\"%s\":null", key);
}

/* Every line read, in force or not, in the order read: each with its window and whether login
 * reads it at policy.at (a reader that counts grants counts only those, as report does). */
static void json_policy(FILE *out, const struct cli_audit *a)
{
	size_t n;
	const struct cd_rule **all = cli_policy_all_rules(&a->pol, &n);
	if (all == NULL)
		cli_print_cut_short();	/* never a document without some of its lines */
	fputs("\"policy\":{", out);
	json_name(out, "path", a->pol.path);
	/* One token per status ("syntax_error") so it reads as an enum. */
	fprintf(out, ",\"status\":\"%s\"", cd_status_token(a->pol.status));
	json_time(out, "at", a->pol.at_set, a->pol.at);
	fputs(",\"rules\":[", out);
	for (size_t i = 0; i < n; i++) {
		const struct cd_rule *r = all[i];
		fprintf(out, "%s{", i ? "," : "");
		json_name(out, "file", cli_audit_rule_file(&a->pol, r));
		fprintf(out, ",\"line\":%zu,", r->line);
		json_subject(out, r->kind, r->name);
		fputs(",\"caps\":", out);
		cli_json_caps(out, r->caps);
		json_time(out, "from", r->has_from, r->from);
		json_time(out, "until", r->has_until, r->until);
		fprintf(out, ",\"in_force\":%s}", cd_rule_in_force(r, a->at) ? "true" : "false");
	}
	fputs("]}", out);
	free(all);
}

static void json_scan(FILE *out, const struct cli_audit *a)
{
	fputs("\"scan\":{\"roots\":[", out);
	for (int i = 0; i < a->nroots; i++) {
		if (i)
			fputc(',', out);
		cli_json_string(out, a->roots[i]);
	}
	fprintf(out, "],\"directories\":%zu,\"regular_files\":%zu,\"capability_files\":%zu,"
		"\"skipped_mounts\":%zu,\"vanished\":%zu,\"errors\":%zu}", a->scan.ndirs,
		a->scan.nregular, a->scan.nfiles, a->scan.nskipped_mounts, a->scan.nvanished,
		a->scan.nerrors);
}

static void json_file(FILE *out, const struct cli_capfile *f)
{
	const char *ignored = cli_fcaps_ignored(f);
	fputc('{', out);
	json_name(out, "path", f->path);
	fprintf(out, ",\"revision\":%d,\"permitted\":", f->caps.revision);
	if (f->read_errno != 0) {	/* unknown, which is not empty: see cli_capfile */
		fputs("null,\"inheritable\":null,\"effective\":null", out);
	} else {
		cli_json_caps(out, f->caps.permitted);
		fputs(",\"inheritable\":", out);
		cli_json_caps(out, f->caps.inheritable);
		fprintf(out, ",\"effective\":%s", f->caps.effective ? "true" : "false");
	}
	fputs(",\"rootid\":", out);
	if (f->caps.has_rootid)
		fprintf(out, "%u", (unsigned)f->caps.rootid);
	else
		fputs("null", out);
	fprintf(out, ",\"nosuid\":%s,\"ignored\":", f->nosuid ? "true" : "false");
	if (ignored)
		cli_json_string(out, ignored);
	else
		fputs("null", out);
	fputs(",\"raw_hex\":\"", out);
	for (size_t i = 0; i < f->rawlen; i++)
		fprintf(out, "%02x", f->raw[i]);
	fputs("\"}", out);
}

static void json_matrix(FILE *out, const struct cli_audit *a)
{
	const char *sep = "";
	fputs("\"matrix\":[", out);
	for (size_t i = 0; i < a->scan.nfiles; i++) {
		const struct cli_capfile *f = &a->scan.files[i];
		for (size_t j = 0; j < a->nsubjects; j++) {
			const struct cli_subject *s = &a->subjects[j];
			struct cli_gain g = cli_exec_gain(s->caps, a->bound, f);
			if (g.permitted == 0)
				continue;
			fprintf(out, "%s{", sep);
			json_subject(out, s->kind, s->name);
			fputc(',', out);
			json_name(out, "path", f->path);
			fputs(",\"permitted\":", out);
			cli_json_caps(out, g.permitted);
			fputs(",\"effective\":", out);
			cli_json_caps(out, g.effective);
			fputc('}', out);
			sep = ",";
		}
	}
	fputc(']', out);
}

static void json_finding(FILE *out, const struct cli_audit *a, const struct cli_finding *f)
{
	fprintf(out, "{\"id\":\"%s\",", f->id);
	if (f->path != NULL) {
		json_name(out, "path", f->path);
		fputs(",\"line\":null", out);
	} else {
		json_name(out, "path", f->policy_file ? f->policy_file : a->pol.path);
		fprintf(out, ",\"line\":%zu", f->line);
	}
	fputs(",\"caps\":", out);
	cli_json_caps(out, f->caps);
	fputs(",\"message\":", out);
	cli_json_string(out, f->message);
	fputc('}', out);
}

static void json_caps_or_null(FILE *out, int has, cd_capmask m)
{
	if (has)
		cli_json_caps(out, m);
	else
		fputs("null", out);
}

/* What audit made of the thread (cli_procs_judge) and the login it belongs to. */
static void json_proc_judged(FILE *out, const struct cli_proc *p)
{
	int judged = p->state == CLI_PROC_STALE || p->state == CLI_PROC_WITHIN;
	fprintf(out, ",\"state\":\"%s\",\"grant\":", cli_proc_state_str(p->state));
	json_caps_or_null(out, judged, p->grant);
	fputs(",\"beyond\":", out);
	json_caps_or_null(out, judged, p->beyond);
	fputs(",\"sessionid\":", out);
	if (p->has_sessionid)
		fprintf(out, "%u", p->sessionid);
	else
		fputs("null", out);
	fputc(',', out);
	if (p->unit != NULL)	/* hostile bytes: a user names its manager's cgroups */
		json_name(out, "unit", p->unit);
	else
		fputs("\"unit\":null,\"unit_hex\":null", out);
}

static void json_procs(FILE *out, const struct cli_audit *a)
{
	fputs("\"processes\":[", out);
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct cli_proc *p = &a->procs[i];
		fprintf(out, "%s{\"pid\":%d,\"tid\":%d,\"uid\":%u,\"user\":", i ? "," : "",
			(int)p->pid, (int)p->tid, (unsigned)p->uid);
		if (p->user)
			cli_json_string(out, p->user);
		else
			fputs("null", out);
		fputs(",\"comm\":", out);
		cli_json_string(out, p->comm);
		fputs(",\"inheritable\":", out);
		cli_json_caps(out, p->inheritable);
		fputs(",\"permitted\":", out);
		cli_json_caps(out, p->permitted);
		fputs(",\"effective\":", out);
		cli_json_caps(out, p->effective);
		fputs(",\"ambient\":", out);
		cli_json_caps(out, p->ambient);
		json_proc_judged(out, p);
		fputc('}', out);
	}
	fputc(']', out);
}

static void json_problems(FILE *out, const struct cli_scan *scan)
{
	fputs("\"errors\":[", out);
	for (size_t i = 0; i < scan->nerrors; i++) {
		const struct cli_problem *p = &scan->errors[i];
		fputs(i ? ",{" : "{", out);
		json_name(out, "path", p->path);
		fprintf(out, ",\"operation\":\"%s\",\"errno\":\"%s\",\"message\":", p->what,
			cli_errno_name(p->err));
		cli_json_string(out, strerror(p->err));
		fputc('}', out);
	}
	fputs("],\"vanished\":[", out);
	for (size_t i = 0; i < scan->nvanished; i++) {
		fputs(i ? ",{" : "{", out);
		json_name(out, "path", scan->vanished[i].path);
		fputc('}', out);
	}
	fputc(']', out);
}

/* "key": "text", "key_hex": "bytes", or both null. */
static void json_name_or_null(FILE *out, const char *key, const char *s)
{
	if (s != NULL)
		json_name(out, key, s);
	else
		fprintf(out, "\"%s\":null,\"%s_hex\":null", key, key);
}

static void json_record(FILE *out, const struct cli_userdb_record *r)
{
	fputc('{', out);
	json_name(out, "path", r->path);
	fputc(',', out);
	json_name_or_null(out, "user", r->f.user);
	fputs(",\"ambient\":", out);
	json_caps_or_null(out, r->f.has_ambient, r->f.ambient);
	fputs(",\"bounding\":", out);
	json_caps_or_null(out, r->f.has_bounding, r->f.bounding);
	fputc(',', out);
	json_name_or_null(out, "hidden_by", r->hidden_by);
	fputc(',', out);
	json_name_or_null(out, "same_as", r->same_as);
	fputc(',', out);
	json_name_or_null(out, "privileged", r->privileged);
	fputs(",\"error\":", out);
	if (r->error != NULL)
		cli_json_string(out, r->error);
	else
		fputs("null", out);
	fputc('}', out);
}

static void json_userdb(FILE *out, const struct cli_userdb *db)
{
	fputs("\"userdb\":{\"directories\":[", out);
	for (size_t i = 0; i < db->ndirs; i++) {
		if (i)
			fputc(',', out);
		cli_json_string(out, db->dirs[i]);
	}
	fputs("],\"records\":[", out);
	for (size_t i = 0; i < db->nrecords; i++) {
		if (i)
			fputc(',', out);
		json_record(out, &db->records[i]);
	}
	fputs("]}", out);
}

/* As systemd reads /etc/machine-id (machine-id(5); id128_read_fd with the plain format, all
 * zeros refused): 32 hex digits of either case, a newline after them or not, and nothing
 * else; lower case as sd_id128_to_string writes it. */
int cli_machine_id(char id[33])
{
	char buf[38];	/* one byte more than the longest form systemd reads, a UUID's */
	size_t n = 0;
	int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	while (n < sizeof(buf)) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			n = 0;	/* what could not be read is no ID */
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n == 33 && buf[32] == '\n')
		n = 32;
	int nonzero = 0;
	for (size_t i = 0; n == 32 && i < 32; i++) {
		char c = buf[i] >= 'A' && buf[i] <= 'F' ? (char)(buf[i] - 'A' + 'a') : buf[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
		nonzero |= c != '0';
		id[i] = c;
	}
	id[32] = '\0';
	return n == 32 && nonzero ? 0 : -1;
}

void cli_audit_print_json(FILE *out, const struct cli_audit *a)
{
	/* The host's name, so that `capdelegate report` can name a fleet's files. The kernel's
	 * limit is HOST_NAME_MAX; POSIX leaves a truncated name unterminated. */
	char host[HOST_NAME_MAX + 1] = "";
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	/* ... and what tells it apart from a clone of another name's or a host that took its
	 * name: the machine-id, which a clone made anew does not share */
	char id[33];
	fprintf(out, "{\"version\":%d,", SCHEMA_VERSION);
	json_name(out, "host", host);
	if (cli_machine_id(id) == 0)
		fprintf(out, ",\"machine_id\":\"%s\"", id);
	else
		fputs(",\"machine_id\":null", out);
	fputs(",\"bounding\":", out);
	cli_json_caps(out, a->bound);
	fputc(',', out);
	json_policy(out, a);
	fputc(',', out);
	json_scan(out, a);
	fputs(",\"files\":[", out);
	for (size_t i = 0; i < a->scan.nfiles; i++) {
		if (i)
			fputc(',', out);
		json_file(out, &a->scan.files[i]);
	}
	fputs("],", out);
	json_matrix(out, a);
	fputs(",\"findings\":[", out);
	for (size_t i = 0; i < a->nfindings; i++) {
		if (i)
			fputc(',', out);
		json_finding(out, a, &a->findings[i]);
	}
	fputs("],", out);
	json_problems(out, &a->scan);
	fputc(',', out);
	json_userdb(out, &a->userdb);
	if (a->want_procs) {
		fputc(',', out);
		json_procs(out, a);
	}
	fputs("}\n", out);
}
