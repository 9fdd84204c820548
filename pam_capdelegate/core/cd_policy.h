/*
 * cd_policy.h - the capdelegate policy core: read capdelegate.conf(5), resolve a user's grant.
 *
 * Shared by pam_capdelegate.so, the capdelegate CLI and the tests, so that what the CLI
 * explains is exactly what login does. Pure: it reads files and NSS, never changes credentials
 * (that is cd_apply.h).
 */
#ifndef CD_POLICY_H
#define CD_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/types.h>

#include "cd_log.h"

#define CD_DEFAULT_CONFIG "/etc/security/capdelegate.conf"
/* Drop-in files, *.conf, read after the main file in byte order. */
#define CD_DEFAULT_CONFDIR "/etc/security/capdelegate.d"
/* A policy is a short list of rules; anything larger is more likely an attack or an accident. */
#define CD_MAX_POLICY_BYTES (1024 * 1024)
/* A policy that changes while it is read is read again, this many times in all, then refused
 * (capdelegate.conf(5), "CHANGING THE POLICY"). */
#define CD_POLICY_READ_ATTEMPTS 4
/* A policy changed just now may be a writer's pause between two chunks: it is checked again
 * after this long (cd_snapshot.c: "just now" allows for the lag of the clock stamping ctime). */
#define CD_POLICY_SETTLE_MS 50
/* LOGIN_NAME_MAX on Linux: no user or group name is longer. */
#define CD_MAX_NAME_LEN 256

/* A capability set as a bit mask: bit n is capability n. Linux capabilities are numbered
 * 0..63 at most (two 32-bit words in _LINUX_CAPABILITY_VERSION_3). */
typedef uint64_t cd_capmask;

/* Who a rule names, and so also why a user got what they got (the kind of the lines that
 * decided; CD_SUBJECT_NONE: no line did). Zero is "none": a zeroed grant matched nothing. */
enum cd_subject_kind {
	CD_SUBJECT_NONE,
	CD_SUBJECT_USER,	/* "alice" */
	CD_SUBJECT_GROUP,	/* "@netops" (name stored without the '@') */
	CD_SUBJECT_DEFAULT,	/* "*" */
};

struct cd_rule {
	enum cd_subject_kind kind;
	char *name;		/* user or group name; NULL for the default rule */
	cd_capmask caps;	/* empty for "none" */
	size_t line;		/* 1-based line number in its file */
	const char *file;	/* its file, as messages print it (cd_quote); owned by the policy */
	/* The line's window (capdelegate.conf(5), WINDOWS), in seconds since the epoch, UTC: in
	 * force from @from (inclusive) until @until (exclusive). Zeroed: no window. */
	unsigned char has_from, has_until;
	int64_t from, until;
};

enum cd_status {
	CD_POLICY_OK = 0,
	CD_POLICY_MISSING,	/* file does not exist: nothing granted */
	CD_POLICY_UNSAFE,	/* not regular, not root-owned, writable by group/other, too big */
	CD_POLICY_SYNTAX,	/* at least one line is malformed: whole policy rejected */
	CD_POLICY_SYSERR,	/* open/read/malloc failed */
};

/* Which rules to keep in memory. The module keeps only the rules that can match the user
 * logging in (every line is still parsed and validated); the CLI keeps all of them. */
typedef int (*cd_rule_filter)(const struct cd_rule *rule, void *arg);

/* Text read in place of one file of the policy (check --staged, edit): the policy is judged as
 * if that text were installed there. Its lines are named after @shown_path, the file the text
 * came from (the staged copy), so that FILE:LINE leads to what is to be fixed. That file's
 * place is not judged (it is not where the policy lives); the place it stands for is: the
 * main file's directory, or the drop-in directory. */
struct cd_stand_in {
	const char *dropin;	/* NULL: the main file; else a drop-in's name in confdir (NAME.conf) */
	const char *shown_path;	/* where the text came from, for messages */
	const char *text;
	size_t len;
};

struct cd_load_opts {
	uid_t owner;		/* the required owner of the file: 0, except in unprivileged unit tests */
	size_t max_bytes;	/* all files together; 0 means CD_MAX_POLICY_BYTES */
	const char *confdir;	/* drop-in directory; NULL or "" reads none */
	cd_rule_filter keep;	/* NULL keeps every rule */
	void *keep_arg;
	const struct cd_stand_in *stand_in;	/* NULL: every file is read from its place */
	/* Parser unit tests only: do not wait for a policy written in the last CD_POLICY_SETTLE_MS
	 * to settle (each of their hundreds of fresh files would wait 50 ms). The module and the
	 * CLI never set it: the wait is what tells a writer between two chunks from a whole file. */
	int no_settle;
};

/* One file of the policy: the main file or a drop-in. */
struct cd_source {
	char *path;
	char *shown;		/* the path as messages print it: escaped (cd_quote) */
	char *text;		/* its bytes; rule names point into them */
	size_t nerrors;		/* syntax errors in this file */
	int stand_in;		/* 1: opts->stand_in's text; path is where it came from */
};

/* An entry of the drop-in directory that is not read, and why ("a backup file", ...). */
struct cd_skipped {
	char *name;
	const char *why;	/* static text */
};

struct cd_policy {
	char *path;		/* the main file */
	char *shown;		/* the same, as messages print it (cd_quote) */
	enum cd_status status;
	size_t nerrors;		/* syntax errors found (each logged as FILE:LINE: message) */
	size_t nwarnings;	/* lines accepted with a warning (logged as FILE:LINE: message) */
	struct cd_rule *rules;	/* kept rules, in the order read */
	size_t nrules;
	size_t nlines;		/* lines read, all files */
	struct cd_source *sources;	/* the main file first, then each drop-in read */
	size_t nsources;
	struct cd_skipped *ignored;	/* drop-in directory entries not read */
	size_t nignored;
	/* After cd_policy_at: the rules outside their window at @at, moved out of @rules (which
	 * then holds only the lines in force), in the order read. */
	struct cd_rule *outside;
	size_t noutside;
	int64_t at;
	int at_set;
	/* Unless status is OK: the file or directory at fault (raw path; the first file with a
	 * syntax error), so that messages name it rather than the main file. NULL: unknown. */
	char *failed_path;
};

/* Read and validate the whole policy: the main file @path, then opts->confdir's *.conf files
 * in byte order. Errors are logged through @log; any error in any file leaves status !=
 * CD_POLICY_OK and nrules == 0, so nothing can be granted from a rejected policy. A missing
 * main file grants nothing (CD_POLICY_MISSING), whatever the drop-ins say; a missing drop-in
 * directory is no error. Returns status. */
enum cd_status cd_policy_load(struct cd_policy *pol, const char *path,
			      const struct cd_load_opts *opts, struct cd_log *log);
/* The same parse of @len bytes already in memory, named @name in messages: no file, so no
 * file-safety verdict (for the fuzzer and tools that hold the text). */
enum cd_status cd_policy_parse(struct cd_policy *pol, const char *name, const char *text, size_t len,
			       const struct cd_load_opts *opts, struct cd_log *log);
void cd_policy_free(struct cd_policy *pol);
/* Would the module read a drop-in of this name (NAME.conf, not a dotfile, no '/')? */
int cd_dropin_name_ok(const char *name);
const char *cd_status_str(enum cd_status st);
/* The same as one word ("syntax_error"), for key=value fields: the module's journal line, its
 * audit record, JSON. A field split by a blank reads as two to auparse, ausearch and SIEMs. */
const char *cd_status_token(enum cd_status st);

/* Parse one CAPABILITIES field ("none" or "cap_a, cap_b"). 0 on success; otherwise -1 and
 * *why points to a static message. Exposed for the CLI and the tests. */
int cd_parse_caps(const char *text, size_t len, cd_capmask *out, const char **why);

/* "user", "group", "default" or "none", as the module logs and the CLI prints it. */
const char *cd_subject_kind_str(enum cd_subject_kind kind);

struct cd_grant {
	cd_capmask caps;
	enum cd_subject_kind via;
	const struct cd_rule **matched;	/* the rules that contributed, in file order */
	size_t nmatched;
};

/* The user as NSS knows them: canonical name plus the names of their gids (primary and
 * supplementary, as getgrouplist gives them). */
struct cd_user {
	char *name;		/* pw_name as NSS returns it, not the name typed at the prompt */
	uid_t uid;
	gid_t gid;
	char **groups;
	size_t ngroups;
	gid_t *group_gids;	/* group_gids[i]: the gid groups[i] names (for the check by name) */
	gid_t *gids;		/* every gid getgrouplist gave, named or not */
	size_t ngids;
	int groups_loaded;	/* 0: groups not looked up yet (see cd_user_load_groups) */
	const char *failed_kind;	/* after a failed lookup: "group", "gid", ...; "probe": the
					 * probe for a backend that is down failed */
	char *failed;		/* and its key ("netops", "2001"), as NSS was asked; for the probe,
				 * the group of the policy whose membership it was to vouch for */
	/* Set instead when NSS answered but its answers cannot all be true (a group of the
	 * policy that one question places the user in and another does not, two groups of one
	 * name): the whole reason, names in their policy form. */
	char *contradiction;
};

/* Look the user up through NSS (getpwnam_r; the name kept is pw_name). 0 on success, -1 if
 * the user is unknown (errno 0) or on error (errno set). The module looks groups up only
 * when no user line decides (cd_user_load_groups). */
int cd_user_lookup_passwd(struct cd_user *u, const char *name);
/* The user's groups: the names of getgrouplist's gids. When @pol (may be NULL) names a group
 * not among them, one probe lookup checks that no group backend is down. Any NSS error fails
 * the whole call (-1, errno set, u->failed names the lookup, or the first such group): a group
 * that cannot be read is never taken as one the user is not in.
 * With @pol, the answers the grant rests on are asked a second time, by name
 * (pam_capdelegate(8), GROUPS): each group of the policy the user is in must be the group of
 * that name (getgrnam_r gives the same gid), and when the user would fall to "*", each group
 * whose lines give less than "*" (cd_policy_group_narrows) must exist and not name the user
 * or one of the user's gids. An answer that contradicts another fails the call too (-1,
 * errno EIO, u->contradiction says which). */
int cd_user_load_groups(struct cd_user *u, const struct cd_policy *pol);
/* The local group file's entry for @name (/etc/group, read as a file, not through NSS): 1
 * found (*gid, *has_members set), 0 not there or no file. */
int cd_local_group(const char *name, gid_t *gid, int *has_members);
/* Does NSS know this user (group)? 1 yes, 0 no, -1 the lookup failed (errno set; an outage is
 * not "no", whatever its errno: ENOENT from a backend whose socket is gone included). */
int cd_nss_user_exists(const char *name);
int cd_nss_group_exists(const char *name);
/* Why cd_user_lookup or cd_user_load_groups failed, for a message: "cannot look up group
 * netops: Connection refused" (@err: the errno it failed with), or the contradiction. The
 * caller frees; NULL when memory ran out. */
char *cd_user_failure(const struct cd_user *u, int err);
/* Both. On failure @u keeps what was found (u->failed says what failed); call cd_user_free
 * in any case. */
int cd_user_lookup(struct cd_user *u, const char *name, const struct cd_policy *pol);
void cd_user_free(struct cd_user *u);

/* The filter that keeps only rules that can apply to @u (pass the struct cd_user as arg).
 * While @u's groups are not loaded, every @group rule is kept. */
int cd_rule_may_match(const struct cd_rule *rule, void *u);

/* True if a kept rule names @u itself (then groups do not matter). */
int cd_policy_names_user(const struct cd_policy *pol, const struct cd_user *u);
int cd_policy_has_group_rules(const struct cd_policy *pol);
/* The capabilities the "*" lines give that the lines naming @group do not: non-zero when the
 * group "narrows" the default, so that a member the NSS answers leave out of it would get
 * more than the policy gives (to a user in no group a line names). */
cd_capmask cd_policy_group_narrows(const struct cd_policy *pol, const char *group);
/* Has a group line before rule @i named the group rule @i names? (Each group judged once.) */
int cd_policy_group_named_before(const struct cd_policy *pol, size_t i);
/* Does @u's grant depend on @u's groups? Only when the policy was read, no line names @u and
 * some line names a group: a user whose own line decides needs no group lookup, and an NSS
 * outage of the groups must not take the grant away (the module and explain alike). */
int cd_policy_needs_groups(const struct cd_policy *pol, const struct cd_user *u);

/* Resolve @u against a loaded policy: user lines win, then @group lines, then "*".
 * A policy whose status is not OK grants nothing. 0 on success, -1 on malloc failure. */
int cd_resolve(const struct cd_policy *pol, const struct cd_user *u, struct cd_grant *g);
void cd_grant_free(struct cd_grant *g);

/* Windows (cd_time.c). Times are UTC, as text "YYYY-MM-DDTHH:MM[:SS]Z", read and printed by
 * arithmetic alone: nothing reads TZ, /etc/localtime or any environment. */
/* 0 and *out; or -1 and *why, a static message. */
int cd_time_parse(const char *text, size_t len, int64_t *out, const char **why);
/* "2026-12-14T18:00Z" (seconds shown when not 0) in @buf (32 bytes hold any int64 time). */
const char *cd_time_format(int64_t t, char *buf, size_t size);
/* The system clock (CLOCK_REALTIME), whole seconds. 0, or -1 (errno set). */
int cd_clock_now(int64_t *now);
int cd_rule_in_force(const struct cd_rule *r, int64_t now);
/* Judge every rule's window at @now: the lines outside it leave pol->rules for pol->outside,
 * so that resolution and every question of the core see only the lines in force, as if the
 * others were not in the file. 0, or -1 when memory ran out (the policy is then unchanged). */
int cd_policy_at(struct cd_policy *pol, int64_t now);
/* The first window edge (a start or an end) after @now among all the rules, in force or not;
 * INT64_MAX when none: until then the policy's verdicts stay what they are at @now. */
int64_t cd_policy_next_edge(const struct cd_policy *pol, int64_t now);

/* Capability names, through libcap (cap_to_name / the names libcap knows). */
int cd_cap_from_name(const char *name, size_t len);	/* case-insensitive; -1 if unknown */
const char *cd_cap_name(int cap);	/* "cap_net_raw"; NULL if libcap has no name for it */
/* A capability as every output names it: libcap's name, or "cap_N" for a bit libcap has no
 * name for (@buf, 16 bytes, holds that). */
const char *cd_cap_label(int cap, char *buf, size_t size);
/* "cap_net_raw,cap_syslog" or "none"; caller frees. */
char *cd_capmask_to_text(cd_capmask m);
/* One flag (CAP_PERMITTED, ...) of a libcap set, a process's or a file's, as a mask of
 * capabilities 0..63: all of them, since a file's value may hold bits the kernel lacks. */
cd_capmask cd_cap_flag_mask(cap_t caps, cap_flag_t flag);
/* The same for the capabilities in @of only: one libcap call per bit asked about. */
cd_capmask cd_cap_flag_bits(cap_t caps, cap_flag_t flag, cd_capmask of);

#endif
