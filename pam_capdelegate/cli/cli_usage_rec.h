/*
 * cli_usage_rec.h - usage's pure half: an audit log's lines judged and the records it reads
 * turned into grants, sessions begun and ended, runs and what they gained (cli_usage_rec.c),
 * and the runs attributed to the grant the module recorded for their session
 * (cli_usage_join.c). No libauparse here: the fields come through a getter (cli_usage_read.c
 * gives auparse's), so the fuzzer and the tests drive it alone too.
 *
 * The records (capdelegate(8), USAGE):
 *   USER  op=capdelegate-grant acct= grant= rules= res=  the module's record of a grant, with
 *         the pid= and ses= the kernel adds (ses unset when written before pam_loginuid ran)
 *   LOGIN pid= auid= ses=                                 the kernel's: pid's session starts
 *   USER_END pid= ses=                                    a PAM session closed: when its pid
 *         is the one that began the session, the session is forgotten (memory follows the
 *         sessions open, not the log)
 *   SYSCALL key=KEY syscall=execve success=yes exe= ses= auid= uid=
 *                                                         a run of exe in session ses
 *   BPRM_FCAPS pp=                                        of the run's event (its serial): the
 *         kernel's word on what the run gained from the file (commoncap.c writes it when the
 *         exec raised pP from file capabilities) to hold against what its grant predicts
 */
#ifndef CLI_USAGE_REC_H
#define CLI_USAGE_REC_H

#include <stddef.h>
#include <stdint.h>

#include "cd_policy.h"

/* The kernel's "unset" session id and login uid ((u32)-1). */
#define CU_UNSET 4294967295u
/* A grant recorded before its session existed is joined to the LOGIN record of the same pid
 * that follows it within this many seconds (login's setcred comes just before pam_loginuid's
 * open_session); later, the pid may be another process's. */
#define CU_PENDING_SECONDS 10

/* The header of one audit record line: [node=NODE ]type=TYPE msg=audit(SEC.MS:SERIAL): */
struct cu_head {
	const char *node;	/* NULL: no node= */
	size_t node_len;
	const char *type;
	size_t type_len;
	int64_t sec;
	unsigned ms;
	uint64_t serial;
};
/* 0, or -1 with *@why a static reason. @line holds @len bytes, no newline. */
int cu_head_parse(const char *line, size_t len, struct cu_head *h, const char **why);

enum cu_kind { CU_NONE, CU_GRANT, CU_LOGIN, CU_END, CU_EXEC, CU_FCAPS };
/* Which kind a line of this header is, judged from its type and text alone (a prefilter:
 * CU_NONE lines are never parsed further; the kind is confirmed from the fields). @key_q is
 * ` key="KEY"`, the form the kernel gives a key of plain characters. *@sure: the text holds
 * the kind's mark (op=capdelegate-grant, the key quoted) where no other field can (the kernel
 * hex-encodes a value with a blank or a quote), so fields that say otherwise are unreadable,
 * not another record (a key in hex may be another rule's). */
enum cu_kind cu_line_kind(const struct cu_head *h, const char *line, size_t len, const char *key_q,
			  int *sure);

/* A record's fields as the reader parsed them: @raw the value as written, @text the value
 * decoded (hex or quoted text made bytes); NULL when the record has no such field. */
struct cu_fields {
	const char *(*raw)(void *arg, const char *name);
	const char *(*text)(void *arg, const char *name);
	void *arg;
};

/* One record judged: what it says, its place for messages. */
struct cu_rec {
	enum cu_kind kind;
	const char *node;	/* "" when none */
	int64_t sec;
	unsigned ms;
	uint32_t pid, ses, auid;
	const char *acct;	/* grant: the user, decoded */
	cd_capmask grant;	/* grant: what pI holds (none when res is not success) */
	const char *rules;	/* grant: FILE:LINE,... as recorded */
	const char *exe;	/* exec: the file run, decoded */
	uint64_t serial;	/* the event's */
	cd_capmask pp;		/* BPRM_FCAPS: the new permitted set */
};
/* Fill @r from @f for a line of kind @kind: 1 a record of that kind, 0 not one after all (another
 * op or key when not @sure, a failed exec), -1 unreadable (*@why says which field). */
int cu_rec_read(struct cu_rec *r, enum cu_kind kind, int sure, const struct cu_fields *f,
		const char *key, const char **why);

/* The marked files: path and fI, sorted by path (cu_marks_sort). */
struct cu_mark {
	const char *path;
	cd_capmask fi;
};

/* Counts for one (user, capability, file), or one (file, why) of runs attributed to nobody.
 * CU_OUTSIDE: runs that gained a bit the session's grant lacks (BPRM_FCAPS); CU_UNGAINED: runs
 * counted as used whose event shows no gain of that bit. */
enum { CU_USED, CU_DENIED, CU_NOBODY, CU_OUTSIDE, CU_UNGAINED };
struct cu_tally {
	int kind;		/* CU_USED, CU_DENIED, CU_NOBODY, CU_OUTSIDE, CU_UNGAINED */
	char *user;		/* NULL for runs attributed to nobody */
	int cap;		/* -1 for runs attributed to nobody */
	char *file;
	const char *why;	/* runs attributed to nobody: why (static text) */
	uint64_t runs;
	int64_t first, last;
};

/* A user's grants as recorded: the last one, how many sessions in the window. */
struct cu_user {
	char *name;
	cd_capmask last_grant;
	char *last_rules;
	int64_t last_at;
	uint64_t sessions;	/* grant records in the window */
	cd_capmask used;	/* capabilities some run in the window used */
};

struct cu_map;	/* a string-keyed hash table (cli_usage_join.c) */
struct cu_held;	/* a run waiting for the end of its event (cli_usage_join.c) */

struct cu_state {
	const struct cu_mark *marks;
	size_t nmarks;
	int64_t since;		/* runs before this time are not counted */
	struct cu_map *sessions, *pending, *tallies, *users;
	uint64_t runs, runs_unmarked, records;
	int64_t oldest;		/* the time of the oldest record read, any kind; 0: none read */
	size_t pending_live;	/* grants waiting for their LOGIN record */
	int oom;
	uint64_t hkey[2];	/* the tables' hash key */
	char *kbuf;		/* the key being built */
	size_t ksize;
	/* The runs attributed whose event has not ended yet: its BPRM_FCAPS may still come
	 * (records of other events may come between). A ring, oldest first. */
	struct cu_held *held;
	size_t nheld, held0;
	uint64_t lines;		/* lines seen (cu_event), to age the held runs */
};

/* A run is held until its event's PROCTITLE record (the last the kernel writes for a syscall),
 * the end of the log, or this many more lines; at most CU_HOLD_RUNS at once (the oldest ends). */
#define CU_HOLD_LINES 256
#define CU_HOLD_RUNS 64

int cu_state_init(struct cu_state *st, const struct cu_mark *marks, size_t nmarks, int64_t since);
void cu_state_free(struct cu_state *st);
void cu_marks_sort(struct cu_mark *marks, size_t n);
/* Take one record in. 0, or -1 when memory ran out. A run is attributed when its SYSCALL
 * record is taken; held until its event ends (cu_event, cu_flush) for its BPRM_FCAPS. */
int cu_take(struct cu_state *st, const struct cu_rec *r);
/* A line with header @h was read (every line, before its record is taken). 0, or -1 out of
 * memory. */
int cu_event(struct cu_state *st, const struct cu_head *h);
/* The end of a log: the runs held are counted. 0, or -1 out of memory. */
int cu_flush(struct cu_state *st);

/* The results, sorted: used, denied, outside, ungained (user, cap, file), nobody (file, why);
 * users by name. Arrays of pointers into @st, valid until cu_state_free; free the arrays. */
struct cu_results {
	struct cu_tally **used, **denied, **nobody, **outside, **ungained;
	size_t nused, ndenied, nnobody, noutside, nungained;
	struct cu_user **users;
	size_t nusers;
	/* For each capability, the runs attributed to nobody of files whose fI holds it: any of
	 * them may have been a user's use of it, so no grant of it is taken as unused. */
	uint64_t nobody_runs[64];
};
int cu_results(struct cu_state *st, struct cu_results *out);
void cu_results_free(struct cu_results *res);

/* Why runs are attributed to nobody (cu_tally.why). */
extern const char cu_why_no_session[], cu_why_no_record[], cu_why_ambiguous[];

#endif
