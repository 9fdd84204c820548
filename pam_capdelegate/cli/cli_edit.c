/*
 * cli_edit.c - `capdelegate edit [NAME]`: what visudo is for sudoers. The main policy file or
 * the drop-in NAME.conf is edited in a copy beside it, under a lock; the whole policy is judged
 * with the copy in place of the file (check's own judgement, cli_check_judge); only a policy
 * without errors is installed, by rename. The files themselves are cli_edit_files.c's.
 *
 * Nothing is lost: until the rename the installed file is untouched, and the rename replaces
 * it whole. SIGINT, SIGTERM, SIGHUP and SIGQUIT only set a flag that each step looks at, so an
 * interrupted edit removes its copy and lock on the way out (and is then killed by the signal,
 * as it would have been); the install itself runs with them blocked.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_edit.h"
#include "cli_out.h"

static const char usage[] =
	"usage: capdelegate edit [--config FILE] [--confdir DIR] [NAME]\n"
	"\n"
	"Edit the policy (default " CD_DEFAULT_CONFIG "),\n"
	"or the drop-in DIR/NAME.conf (created if absent), in a copy beside it, under a lock.\n"
	"The editor is $SUDO_EDITOR, $VISUAL or $EDITOR (else sensible-editor). The whole policy\n"
	"is then checked with the copy in place of the file; with errors you may edit again or\n"
	"leave the installed file untouched. Installed by rename, root's and mode 0644.\n"
	"The editor runs as root: a sudo rule allowing edit is a root shell (capdelegate(8),\n"
	"edit, shows how to delegate one policy file instead).\n"
	"Exit 0: installed, or unchanged. 1: left untouched (errors, or the file changed by\n"
	"someone else meanwhile: your text is then kept beside it; and no terminal; or your\n"
	"choice; or the editor failed).\n"
	"2: nothing edited (bad NAME, the lock is held, something in the way, an error).\n";

static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* Without SA_RESTART: a wait or a read the signal interrupts returns, and the edit ends. */
static void catch_signals(void (*handler)(int), int only_term)
{
	struct sigaction sa = { .sa_handler = handler };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		if (!only_term || caught[i] == SIGTERM || caught[i] == SIGHUP)
			sigaction(caught[i], &sa, NULL);
}

/* Block (or unblock) the caught signals; *old gets the mask before, when not NULL. */
static void block_signals(int how, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaddset(&set, caught[i]);
	sigprocmask(how, &set, old);
}

/* Wait until @fd is readable (1) or a caught signal came (0; got_signal says which); -1 on an
 * error. The signals are blocked from the look at got_signal until ppoll unblocks them in
 * the same step: one that comes in between stays pending and ends the ppoll, where a plain
 * read or waitpid would sleep through it. */
static int wait_readable(int fd)
{
	sigset_t old;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int rc = -1;
	block_signals(SIG_BLOCK, &old);
	while (!got_signal && (rc = ppoll(&p, 1, NULL, &old)) < 0 && errno == EINTR)
		continue;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return got_signal ? 0 : rc > 0 ? 1 : -1;
}

/* ---- the editor ---------------------------------------------------------------------------- */

/* @word as a path to run: itself when it has a '/', else found in $PATH. malloc'ed, or NULL
 * with errno ENOENT (not found) or ENOMEM. */
static char *find_program(const char *word)
{
	char *found = NULL, *save = NULL;
	if (strchr(word, '/') != NULL) {
		if (access(word, X_OK) == 0)
			found = strdup(word);
		else
			errno = ENOENT;
		return found;
	}
	const char *path = getenv("PATH");
	char *dirs = strdup(path != NULL && path[0] != '\0' ? path : "/usr/local/bin:/usr/bin:/bin");
	int oom = dirs == NULL;
	for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d != NULL && found == NULL;
	     d = strtok_r(NULL, ":", &save)) {
		struct stat st;
		if (asprintf(&found, "%s/%s", d, word) < 0) {
			found = NULL;
			oom = 1;
			break;
		}
		if (stat(found, &st) < 0 || !S_ISREG(st.st_mode) || access(found, X_OK) < 0) {
			free(found);
			found = NULL;
		}
	}
	free(dirs);
	errno = oom ? ENOMEM : found == NULL ? ENOENT : 0;
	return found;
}

/* Split @cmd into words as sudoedit splits an editor variable: at blanks, a backslash taking
 * the next character into the word as it is; the file comes after a "--", so a "--" among
 * the words is refused (NULL, *why set), as sudo refuses it. Room is left for "--", the file
 * and the NULL. */
static char **split_editor(const char *cmd, const char **why)
{
	size_t n = 0, cap = strlen(cmd) / 2 + 4;
	char **argv = calloc(cap, sizeof(*argv));
	char *word = malloc(strlen(cmd) + 1);
	*why = "out of memory";
	for (const char *p = cmd; argv != NULL && word != NULL && *p != '\0';) {
		size_t len = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		while (*p != '\0' && *p != ' ' && *p != '\t') {
			if (*p == '\\' && p[1] != '\0')
				p++;
			word[len++] = *p++;
		}
		word[len] = '\0';
		if (strcmp(word, "--") == 0) {
			*why = "an editor's arguments may not hold \"--\"";
			break;
		}
		if ((argv[n++] = strdup(word)) == NULL)
			break;
	}
	int ok = argv != NULL && word != NULL && n > 0 && argv[n - 1] != NULL &&
		 strcmp(word, "--") != 0;
	if (n == 0 && argv != NULL && word != NULL)
		*why = "empty";
	free(word);
	if (!ok && argv != NULL) {
		for (size_t i = 0; i < n; i++)
			free(argv[i]);
		free(argv);
		argv = NULL;
	}
	return argv;
}

struct editor {
	char **argv;	/* the words, then "--", the file, NULL */
	char *path;	/* argv[0] found */
	size_t nwords;
};

static void editor_free(struct editor *e)
{
	for (size_t i = 0; e->argv != NULL && i < e->nwords; i++)
		free(e->argv[i]);
	free(e->argv);
	free(e->path);
}

/* The first of $SUDO_EDITOR, $VISUAL, $EDITOR that names a program found (each one skipped
 * is said), else sensible-editor. -1 when there is none, or memory ran out: never another
 * editor than the one asked for because of that. */
static int choose_editor(struct editor *e)
{
	static const char *const vars[] = { "SUDO_EDITOR", "VISUAL", "EDITOR", NULL };
	for (int i = 0; i <= 3; i++) {
		const char *cmd = vars[i] != NULL ? getenv(vars[i]) : "sensible-editor", *why;
		if (cmd == NULL || cmd[0] == '\0')
			continue;
		*e = (struct editor){ split_editor(cmd, &why), NULL, 0 };
		if (e->argv != NULL && (e->path = find_program(e->argv[0])) == NULL)
			why = errno == ENOMEM ? "out of memory" : "not found";
		if (e->path == NULL && strcmp(why, "out of memory") == 0) {
			editor_free(e);
			fputs("capdelegate: edit: out of memory: nothing edited\n", stderr);
			return -1;
		}
		if (e->path != NULL) {
			while (e->argv[e->nwords] != NULL)
				e->nwords++;
			return 0;
		}
		fprintf(stderr, "capdelegate: edit: %s%s%s'", vars[i] ? "$" : "", vars[i] ? vars[i] : "",
			vars[i] ? " " : "");
		cli_text_escape(stderr, cmd);
		fprintf(stderr, "' ignored: %s\n", why);
		editor_free(e);
	}
	fputs("capdelegate: edit: no editor: set $EDITOR (or $VISUAL, $SUDO_EDITOR)\n", stderr);
	return -1;
}

/* The child's end of a pidfd (readable when it exits), or -1 where the kernel has none. */
static int child_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* The editor gets the lock's descriptor (its flock), so the lock outlives an edit killed
 * while its editor runs on (cli_edit_files.c, lock_refused). */
static void exec_editor(const struct editor *e, int lock_fd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	if (fcntl(lock_fd, F_SETFD, 0) < 0)
		_exit(127);
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaction(caught[i], &dfl, NULL);
	block_signals(SIG_UNBLOCK, NULL);
	execv(e->path, e->argv);
	_exit(127);
}

/* Run the editor on @t's copy and wait. While it runs, SIGINT and SIGQUIT are the editor's
 * (the terminal's keys reach it; it decides what they mean), as system(3) arranges; SIGTERM
 * and SIGHUP are passed on to it, and the edit ends when it has. Returns its wait status, or
 * -1. */
static int run_editor(const struct editor *e, struct edit_target *t)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL }, chld = dfl;
	sigemptyset(&ign.sa_mask);
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	/* A SIGCHLD ignored by whoever started edit (inherited through exec) would have the kernel
	 * reap the editor: waitpid would fail with ECHILD and the edit would be lost for want of
	 * a status. The wait needs the default; the old disposition is put back after it. */
	sigaction(SIGCHLD, &dfl, &chld);
	e->argv[e->nwords] = "--";
	e->argv[e->nwords + 1] = t->copy_path;
	e->argv[e->nwords + 2] = NULL;
	fflush(NULL);
	block_signals(SIG_BLOCK, NULL);	/* one that comes now is seen by wait_readable */
	pid_t pid = got_signal ? -1 : fork();
	if (pid == 0)
		exec_editor(e, t->lock_fd);
	block_signals(SIG_UNBLOCK, NULL);
	/* without the note, the inherited flock alone guards an editor that outlives us */
	if (pid > 0 && edit_lock_note_editor(t, pid) < 0)
		fprintf(stderr, "capdelegate: edit: note: the editor's pid could not be written in "
			"the lock: %s\n", strerror(errno));
	int status = -1, fd = pid > 0 ? child_fd(pid) : -1;
	/* Never kill() without a child: a pid of 0 or -1 would signal our process group or
	 * every process root may signal. */
	if (fd >= 0 && wait_readable(fd) == 0 && pid > 0)
		kill(pid, got_signal);
	if (fd >= 0)
		close(fd);
	while (pid > 0 && waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
		if (got_signal && fd < 0 && pid > 0)	/* no pidfd: a signal seen by waitpid's EINTR */
			kill(pid, got_signal);
	}
	e->argv[e->nwords] = NULL;
	sigaction(SIGCHLD, &chld, NULL);
	catch_signals(on_signal, 0);
	return status;
}

/* ---- the edit ------------------------------------------------------------------------------ */

/* edit's operand NAME (or NAME.conf) as the drop-in's file name: one the module reads
 * (capdelegate.conf(5), DROP-IN FILES), in the directory itself. malloc'ed, or NULL (said). */
static char *dropin_file(const char *name)
{
	char *file = NULL;
	size_t n = strlen(name);
	int controls = 0;
	for (const char *p = name; *p != '\0'; p++)
		controls |= (unsigned char)*p < 0x20 || *p == 0x7f;
	if (n > 0 && name[0] != '.' && strchr(name, '/') == NULL && !controls &&
	    asprintf(&file, n > 5 && strcmp(name + n - 5, ".conf") == 0 ? "%s" : "%s.conf", name) >= 0 &&
	    cd_dropin_name_ok(file))
		return file;
	free(file);
	fputs("capdelegate: edit: '", stderr);
	cli_text_escape(stderr, name);
	fputs("' is not a drop-in name: NAME or NAME.conf, no '/', not starting with '.', no "
	      "control characters (capdelegate.conf(5), DROP-IN FILES)\n", stderr);
	return NULL;
}

struct edit_args {
	const char *config, *confdir;
};

/* The whole policy with @after (standing in as @s) in place of the edited file: check's
 * judgement, the policy left in @pol for the caller to free. */
static int judge(const struct edit_target *t, const struct edit_args *a,
		 const struct cli_text *after, struct cd_stand_in *s, struct cd_policy *pol,
		 size_t *warnings)
{
	*s = (struct cd_stand_in){ .dropin = t->dropin, .shown_path = t->copy_path,
				   .text = after->bytes ? after->bytes : "", .len = after->len };
	return cli_check_judge(pol, a->config, a->confdir, s, warnings);
}

/* 'e' (edit again) or 'x' (leave it) from the terminal; 'x' at the end of input; 0 when a
 * signal came. */
static int ask(void)
{
	char *line = NULL;
	size_t cap = 0;
	int answer = 0;
	/* unbuffered: wait_readable looks at the descriptor, so no line may wait in stdio */
	setvbuf(stdin, NULL, _IONBF, 0);
	while (answer == 0 && !got_signal) {
		fputs("What now? (e)dit again, (x) leave the installed file untouched: ", stderr);
		fflush(stderr);
		if (wait_readable(STDIN_FILENO) <= 0 || getline(&line, &cap, stdin) < 0)
			answer = got_signal ? 0 : 'x';
		else if (line[0] == 'e' || line[0] == 'E' || line[0] == 'x' || line[0] == 'X')
			answer = line[0] | 0x20;
	}
	free(line);
	return got_signal ? 0 : answer;
}

static int untouched(const struct edit_target *t, const char *why, int rc)
{
	fputs("capdelegate: edit: ", stderr);
	cli_text_escape(stderr, t->path);
	fprintf(stderr, " left untouched: %s\n", why);
	return rc;
}

/* The editor's exit: 0 for a clean one, else said. */
static int editor_failed(const struct edit_target *t, int status)
{
	char why[64];
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (status == -1)
		snprintf(why, sizeof(why), "the editor could not be run");
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "the editor was killed by signal %d", WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "the editor exited with status %d", WEXITSTATUS(status));
	untouched(t, why, CLI_WARN);
	return -1;
}

/* What a round returns when the admin is to be asked: errors, or another's change meanwhile. */
enum { ASK = -1 };

/* What is said once @after is installed into @pol, the policy with it. */
static void say_installed(const struct edit_target *t, const struct cd_policy *pol,
			  size_t warnings)
{
	cli_text_escape(stdout, t->path);
	if (pol->status != CD_POLICY_OK) {
		fputs(": installed; the policy stays rejected: ", stdout);
		cli_print_rejection(stdout, pol);
		fputs(": the module grants nothing\n", stdout);
		fputs("capdelegate: edit: ", stderr);
		cli_text_escape(stderr, t->path);
		fputs(": your text has no errors of its own, and the policy was rejected already: "
		      "installed, as that makes nothing worse; the policy stays rejected (", stderr);
		cli_print_rejection(stderr, pol);
		fputs(", said above)\n", stderr);
		return;
	}
	fputs(": installed, ", stdout);
	cli_print_count(stdout, pol->nrules + pol->noutside, "rule", "rules");	/* every line */
	fputs(", ", stdout);
	cli_print_count(stdout, warnings, "warning", "warnings");
	fputs(" in the policy\n", stdout);
}

/* Install @after with the signals held back: once begun, the install ends with the new file
 * in place (or the old one, on an error), never half-way. Into a policy other files keep
 * rejected (@pol), the edit is done but the policy not: exit 1. */
static int install(struct edit_target *t, const struct cli_text *after,
		   const struct cd_policy *pol, size_t warnings)
{
	block_signals(SIG_BLOCK, NULL);
	int rc = edit_install(t, after);	/* 1: changed by someone else meanwhile (said) */
	if (rc == 0)
		say_installed(t, pol, warnings);
	block_signals(SIG_UNBLOCK, NULL);
	if (rc == 0)
		got_signal = 0;	/* too late to stop it: the edit is done */
	if (rc == 0)
		return pol->status == CD_POLICY_OK ? CLI_OK : CLI_WARN;
	return rc == 1 ? ASK : CLI_ERROR;
}

static int same_text(const struct cli_text *a, const struct cli_text *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->bytes, b->bytes, a->len) == 0);
}

/* The policy with @after (@s) is rejected (@pol): installed all the same when that makes
 * nothing worse (no errors of its own, the installed policy rejected already: cli_stage.h), so
 * a policy broken in two files can be fixed one file at a time; else the admin is asked. */
static int install_if_no_worse(struct edit_target *t, const struct edit_args *a,
			       const struct cd_stand_in *s, const struct cd_policy *pol,
			       const struct cli_text *after)
{
	struct cli_no_worse nw;
	cli_no_worse(&nw, pol, a->config, a->confdir, s);
	enum cli_no_worse_verdict v = nw.verdict;
	cli_no_worse_free(&nw);
	if (got_signal)
		return CLI_ERROR;
	if (v == CLI_NO_WORSE)
		return install(t, after, pol, 0);
	if (v == CLI_NO_WORSE_UNREAD)	/* the installed policy, read without its messages */
		return untouched(t, "the policy could not be read (memory, a read error)", CLI_ERROR);
	fputs("capdelegate: edit: ", stderr);
	cli_text_escape(stderr, t->copy_path);
	fputs(" (your text for ", stderr);
	cli_text_escape(stderr, t->path);
	fputs("): the policy has errors, the module would grant nothing\n", stderr);
	return ASK;
}

/* The edited text @after: not installed again when unchanged, judged with the whole policy,
 * installed when it has no errors (or makes nothing worse) and nobody changed the file
 * meanwhile. */
static int judge_and_install(struct edit_target *t, const struct edit_args *a,
			     const struct cli_text *after)
{
	if (same_text(after, &t->before))
		return untouched(t, t->existed ? "unchanged" : "empty, not created", CLI_OK);
	struct cd_stand_in s;
	struct cd_policy pol;
	size_t warnings;
	int verdict = judge(t, a, after, &s, &pol, &warnings), rc;
	/* a policy not read at all (memory, a read error) is no fault of the text: nothing to
	 * edit again */
	if (pol.status == CD_POLICY_SYSERR)
		rc = untouched(t, "the policy could not be read (said above)", CLI_ERROR);
	else if (got_signal)
		rc = CLI_ERROR;
	else if (verdict == CLI_ERROR)
		rc = install_if_no_worse(t, a, &s, &pol, after);
	else
		rc = install(t, after, &pol, warnings);
	cd_policy_free(&pol);
	return rc;
}

/* One round: the editor, then its text judged and installed. An exit status, or ASK. */
static int edit_round(struct edit_target *t, const struct edit_args *a, const struct editor *e)
{
	int status = run_editor(e, t);
	if (got_signal)
		return CLI_ERROR;
	if (editor_failed(t, status) < 0)
		return CLI_WARN;
	struct cli_text after;
	if (edit_read_copy(t, &after) < 0)
		return CLI_ERROR;
	int rc = judge_and_install(t, a, &after);
	cli_text_free(&after);
	return rc;
}

/* Rounds until one ends the edit, or the admin does; without a terminal nobody is asked. */
static int edit_loop(struct edit_target *t, const struct edit_args *a, const struct editor *e)
{
	for (;;) {
		int rc = edit_round(t, a, e);
		if (rc != ASK)
			return rc;
		if (!isatty(STDIN_FILENO))
			return untouched(t, "no terminal to ask what to do", CLI_WARN);
		int answer = ask();
		if (answer != 'e')
			return answer == 'x' ? untouched(t, "as you chose", CLI_WARN) : CLI_ERROR;
	}
}

int cli_edit_main(int argc, char **argv)
{
	struct edit_args a = { NULL, NULL };
	if (cli_wants_help(argc, argv, usage))
		return CLI_OK;
	int first = cli_parse_config_opt(argc, argv, usage, &a.config, &a.confdir);
	if (first < 0)
		return CLI_ERROR;
	if (argc - first > 1) {
		fputs(usage, stderr);
		return CLI_ERROR;
	}
	a.config = a.config ? a.config : CD_DEFAULT_CONFIG;
	a.confdir = a.confdir ? a.confdir : CD_DEFAULT_CONFDIR;
	const char *name = first < argc ? argv[first] : NULL;
	char *file = NULL, *path = NULL;
	if (name != NULL && a.confdir[0] == '\0') {
		fputs("capdelegate: edit: no drop-in directory (--confdir is empty)\n", stderr);
		return CLI_ERROR;
	}
	if (name != NULL && ((file = dropin_file(name)) == NULL ||
			     asprintf(&path, "%s/%s", a.confdir, file) < 0)) {
		free(file);
		return CLI_ERROR;
	}
	struct editor e;
	if (choose_editor(&e) < 0) {
		free(file);
		free(path);
		return CLI_ERROR;
	}
	catch_signals(on_signal, 0);
	struct edit_target t;
	int rc = edit_target_open(&t, path ? path : a.config, name != NULL) < 0 || edit_lock(&t) < 0 ||
		 edit_make_copy(&t) < 0 ? CLI_ERROR : edit_loop(&t, &a, &e);
	if (t.theirs_seen && t.made_copy)
		edit_keep_copy(&t);
	edit_target_close(&t);
	editor_free(&e);
	free(file);
	free(path);
	if (got_signal) {	/* cleaned up: now end as the signal would have ended us */
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	return rc;
}
