/*
 * cli_edit.h - private to `capdelegate edit` (cli_edit.c, the flow; cli_edit_files.c, the files
 * beside the one edited: lock, copy, install by rename).
 */
#ifndef CLI_EDIT_H
#define CLI_EDIT_H

#include <sys/stat.h>

#include "cli_stage.h"

/* The policy file being edited and the files this command makes beside it, in its directory:
 * .BASE.lock (held while editing), .BASE.edit (the editor's copy), .BASE.new (what is renamed
 * over BASE). Dotfiles, so the module never reads them as drop-ins. */
struct edit_target {
	int dfd;		/* the file's directory, open: every name below is relative to it */
	char *dir, *base;	/* the directory's path and the file's name in it */
	char *path;		/* dir/base, as messages name it */
	const char *dropin;	/* NULL: the main file; else base, the drop-in's name */
	char *lock_name, *copy_name, *new_name;
	char *copy_path;	/* dir/.BASE.edit: the editor's argument and the name in messages */
	int lock_fd;
	int made_copy, made_new;	/* names of ours to remove when the edit ends */
	struct cli_text before;	/* the installed text (empty when there is no file yet) */
	int existed;
	struct stat seen;	/* the installed file as the edit began (or last looked), if existed */
	int theirs_seen;	/* someone else changed it, and no text of this edit is installed since */
};

/* Split @path into directory and name and open the directory. -1 (said on stderr). */
int edit_target_open(struct edit_target *t, const char *path, int is_dropin);
/* Take the lock; a stale one (its edit and that edit's editor gone) is taken over with a
 * message; one whose edit is gone but whose editor still runs is refused, said. Leftovers of a
 * killed edit at the copy's or the new file's name are removed if they are regular files;
 * anything else there (a link, a FIFO, a directory) refuses the edit. -1 (said on stderr). */
int edit_lock(struct edit_target *t);
/* Note the editor's pid (and start time) in the lock file, beside this edit's: a lock whose
 * edit was killed is not taken over while that editor runs (edit_lock). -1 when it cannot be
 * written (errno). */
int edit_lock_note_editor(struct edit_target *t, pid_t editor);
/* Read the installed file (none yet is an empty text) into the copy for the editor. -1. */
int edit_make_copy(struct edit_target *t);
/* The copy as the editor left it: a regular file at the copy's name (rewritten or renamed
 * there), not a link, not a FIFO, no other name. -1 (said on stderr: the edit is abandoned,
 * failing closed). */
int edit_read_copy(struct edit_target *t, struct cli_text *after);
/* Install @after as the file: a new file in the same directory, root's, 0644, written and
 * fsync'ed, renamed over the old, the directory fsync'ed. Just before the rename, a look at
 * the installed file: when someone else changed, created or removed it since the edit began
 * (or since the last call: writers that do not take edit's lock, config management, an mv by
 * hand), installing would lose their change, so nothing is installed and that is said (1).
 * 0 installed; -1 on an error (said on stderr; the installed file is then as it was). */
int edit_install(struct edit_target *t, const struct cli_text *after);
/* The edit ends without installing after someone else's change was seen (theirs_seen): the
 * admin's text, the copy, is kept beside the file as .BASE.kept-PID (the copy itself when
 * that fails), and where is said. */
void edit_keep_copy(struct edit_target *t);
/* Remove what this command made (copy, new file, lock), release the lock, close. */
void edit_target_close(struct edit_target *t);

#endif
