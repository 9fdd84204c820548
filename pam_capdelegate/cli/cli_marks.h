/*
 * cli_marks.h - what is on disk for each declared mark (capdelegate-files.conf(5)): shared by
 * `marks check`, `marks apply` and `audit`.
 */
#ifndef CLI_MARKS_H
#define CLI_MARKS_H

#include <stdio.h>
#include <sys/types.h>

#include "cd_marks.h"

/* How bad a state is. Exit status: the worst of them (WARNING and DRIFT are 1, ERROR 2). */
enum cli_mark_level { CLI_MARK_OK, CLI_MARK_WARNING, CLI_MARK_DRIFT, CLI_MARK_ERROR };

/* One declared file as found, judged on the descriptor it was opened as. */
struct cli_mark_disk {
	int fd;			/* the file, opened without following a link; -1 if not opened */
	int missing;		/* the file (or a directory above it) does not exist */
	char *refused;		/* why it is no file a mark may be put on (symlink, owner...) */
	const char *failed;	/* the lookup that failed ("open", "read security.capability") */
	int err;		/* and its errno */
	mode_t mode;		/* st_mode */
	struct cd_mark_where where;	/* the file and its directory, when opened */
	int has_caps;		/* security.capability present */
	int unreadable;		/* present but the kernel will not show it (EINVAL) */
	cd_capmask permitted, inheritable;
	int effective;
	uid_t rootid;		/* revision 3's root uid; 0 otherwise */
	char *text;		/* on disk as libcap's text, "none" or "unreadable" */
};

/* Open and read @mk's file (see cli_marks.c for every rule). -1 only when memory runs out;
 * every other failure is a state in @d. */
int cli_mark_inspect(const struct cd_mark *mk, struct cli_mark_disk *d);
/* The same without reading security.capability: where the file is, and why it is refused. */
int cli_mark_locate(const struct cd_mark *mk, struct cli_mark_disk *d);
void cli_mark_disk_free(struct cli_mark_disk *d);
/* Do the capabilities on disk equal the mark's (fP empty, fI and fE as declared, rootid 0)? */
int cli_mark_caps_match(const struct cd_mark *mk, const struct cli_mark_disk *d);

/* Every state of @mk's file, one call each: "ok", "missing", "refused", "error", "no-xattr",
 * "unreadable", "fP-bypass", "differs", "setuid" (see capdelegate(8) MARKS), and @finding,
 * audit's id for it ("mark-" and the state; static, like the state). @caps: the capabilities
 * concerned. A non-zero return from @visit stops and is returned. */
typedef int (*cli_mark_visit)(void *arg, const struct cd_mark *mk, const struct cli_mark_disk *d,
			      const char *state, const char *finding, enum cli_mark_level level,
			      cd_capmask caps, const char *message);
int cli_mark_states(const struct cd_mark *mk, const struct cli_mark_disk *d, cli_mark_visit visit,
		    void *arg);

/* Load the marks file: @path, or CD_DEFAULT_MARKS when NULL, and reject it when two lines
 * name one file (cd_marks_reject_aliases, each file located as cli_mark_locate opens it).
 * Errors on stderr as FILE:LINE: message. A missing file is not logged: the caller says what
 * it means. */
enum cd_status cli_load_marks(struct cd_marks *m, const char *path);

const char *cli_mark_level_str(enum cli_mark_level level);

/* `marks audit-rules` (cli_marks_audit.c); argv[0] is "audit-rules". */
int cli_marks_audit_rules(int argc, char **argv);

#endif
