/*
 * cli_userdb.h - systemd's JSON user records (drop-in files NAME.user), read for what they do to
 * a session's capabilities: since systemd 254 pam_systemd raises a record's
 * capabilityAmbientSet "also inherit" (pI replaced, every program the user runs holds the
 * set) and drops what its capabilityBoundingSet leaves out. audit and explain report both
 * next to the policy (capdelegate(8), USER RECORDS), with what NAME.user-privileged beside a
 * record adds to it. Core-free apart from the capability names (cd_cap_from_name), so the
 * parser can be fuzzed on its own.
 */
#ifndef CLI_USERDB_H
#define CLI_USERDB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cd_policy.h"

/* systemd's search path for drop-in records (src/shared/userdb-dropin.h, nss-systemd(8)),
 * in its order: a NAME.user in an earlier directory hides the same name in a later one. */
#define CLI_USERDB_DEFAULT_DIRS \
	{ "/etc/userdb", "/run/userdb", "/run/host/userdb", "/usr/local/lib/userdb", "/usr/lib/userdb" }
#define CLI_USERDB_NDEFAULT 5

/* A record is a few hundred bytes; one larger than this is refused unread, so a huge file
 * (or one that grows while read) costs a bounded read. */
#define CLI_USERDB_MAX_BYTES (256 * 1024)
/* Records nest three or four levels (perMachine, privileged); deeper input is refused before
 * the recursive parser could run out of stack. */
#define CLI_USERDB_MAX_DEPTH 32

/* Capability sets, each set or not (absent, or null as systemd's strv dispatch takes it). */
struct cli_userdb_sets {
	int has_ambient, has_bounding;
	cd_capmask ambient, bounding;
};

/* What one record says about capabilities. The sets of the top level and of every perMachine
 * section are merged, whichever machine a section matches: ambient is the union of every
 * capabilityAmbientSet, bounding the intersection of every capabilityBoundingSet (what any of
 * them may take away). */
struct cli_userdb_fields {
	char *user;		/* userName; NULL if absent */
	int has_uid;
	uint64_t uid;
	int has_ambient, has_bounding;
	cd_capmask ambient, bounding;
	/* What the merged sets are made of, kept so that a companion file can be merged over
	 * them key by key as systemd merges NAME.user-privileged: the keys read here that the
	 * top level holds (null ones too), its own sets, and the perMachine sections' merged. */
	unsigned keys;
	struct cli_userdb_sets top, per_machine;
};

/* Parse @len bytes (not NUL-terminated; a NUL byte anywhere rejects them). 0: parsed, @out
 * filled (free with cli_userdb_fields_free). -1: rejected, *why a static reason. -2: out of
 * memory. Strict JSON (RFC 8259) with one object at the top; a duplicate key among those read
 * here, a string holding U+0000, a capability list that is not an array of strings or names
 * a capability libcap does not know (a decimal number 0..63 is taken as systemd takes it)
 * are rejected, never guessed. */
int cli_userdb_parse(const char *buf, size_t len, struct cli_userdb_fields *out, const char **why);
void cli_userdb_fields_free(struct cli_userdb_fields *f);

/* One *.user entry of a searched directory. */
struct cli_userdb_record {
	char *path;		/* DIR/NAME.user as found (the name's bytes as they are) */
	char *error;		/* NULL, or why the record could not be read: not audited */
	char *privileged;	/* DIR/NAME.user-privileged merged into the record, or NULL */
	const char *hidden_by;	/* path of the name in an earlier directory that systemd's lookup
				 * stops at, or NULL */
	const char *same_as;	/* the record this file is another name of (UID.user linked to
				 * NAME.user, as systemd writes them), or NULL */
	size_t dir;		/* the index of its directory in cli_userdb.dirs */
	int is_dir;		/* the record of a directory that cannot be read (path: the
				 * directory) */
	int absent;		/* the name opens with ENOENT (a dangling link, or gone meanwhile):
				 * systemd's lookup goes on to the next directory */
	dev_t dev;		/* the file read (set whenever error is NULL) */
	ino_t ino;
	dev_t pdev;		/* the companion merged (set whenever privileged is set) */
	ino_t pino;
	struct cli_userdb_fields f;
};

/* DIR/NAME.user linked to /dev/null: no record, yet systemd's lookup of NAME stops there. */
struct cli_userdb_mask {
	char *path;
	size_t dir;
};

struct cli_userdb {
	const char *const *dirs;
	size_t ndirs;
	struct cli_userdb_record *records;
	size_t nrecords, cap;
	size_t nerrors;		/* records with error set */
	struct cli_userdb_mask *masks;
	size_t nmasks;
};

/* Read every NAME.user of @dirs, in their order, names sorted in each, each with the
 * NAME.user-privileged beside it merged as systemd merges it (its top-level keys replace the
 * record's). A name hides the same name in later directories when systemd's lookup by name
 * stops at it: whenever it opens, a mask (a symlink to /dev/null) and a record that cannot be
 * read too; a name that opens with ENOENT (a dangling link) hides nothing. Names of one file
 * (a symlink or a hard link) are one record: the one named for its userName holds it (else the
 * first read), the others point to it by same_as. A directory that does not exist holds no
 * record; one that cannot be read is an error record. A masked name is no record. -1 only
 * when memory runs out. */
int cli_userdb_load(struct cli_userdb *db, const char *const *dirs, size_t ndirs);
void cli_userdb_free(struct cli_userdb *db);

#endif
