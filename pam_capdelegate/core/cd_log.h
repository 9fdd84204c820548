/*
 * cd_log.h - one logging helper for both worlds, as pam_faillock does: with a PAM handle it
 * goes to pam_syslog, without one (CLI, tests) to stderr or to a capture callback.
 */
#ifndef CD_LOG_H
#define CD_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <syslog.h>
#include <security/pam_modules.h>

struct cd_log {
	pam_handle_t *pamh;	/* non-NULL: pam_vsyslog */
	int debug;		/* log LOG_DEBUG messages too */
	/* Without pamh: called if set (tests capture messages), else stderr. */
	void (*sink)(void *arg, int priority, const char *msg);
	void *sink_arg;
	int lost;		/* a message for the sink could not be formatted (memory ran out) */
};

void cd_log(struct cd_log *log, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Messages held back until the caller knows whether to log them: the policy loader logs a
 * read's messages only when what it read was one whole version (a half-written file's syntax
 * errors are no news). Log through h->quiet after cd_log_hold; cd_log_release logs the held
 * messages through @real (@replay) or drops them, and frees them. */
struct cd_log_held_msg;
struct cd_log_held {
	struct cd_log quiet;
	struct cd_log_held_msg *msgs;
	size_t n;
	int lost;		/* a message could not be kept: memory ran out */
};
void cd_log_hold(struct cd_log_held *h, const struct cd_log *real);
void cd_log_release(struct cd_log_held *h, struct cd_log *real, int replay);

/* Show untrusted text (a user name typed at a login prompt, a token of a hostile policy) safely
 * in one log field: letters, digits and . _ - @ $ * as they are, every other byte as \xNN, at
 * most @max input bytes ("..." marks a cut). @out must hold 4 * max + 4 bytes. */
void cd_quote(char *out, size_t outsize, const char *text, size_t len, size_t max);

/* A user or group name in the form a policy writes it (capdelegate.conf(5)), for every message
 * and every output that shows one: [A-Za-z0-9_.@-] as they are, '$' as it is at the end, a
 * backslash as it is unless
 * three octal digits follow it, every other byte as \ooo ("linux admins" is linux\040admins).
 * Printable ASCII only. At most @max bytes of the name ("..." marks a cut); @out must hold
 * 4 * max + 4 bytes. */
void cd_name_form(char *out, size_t outsize, const char *name, size_t max);

/* A path in the form capdelegate-files.conf(5) writes it: printable ASCII as it is but blanks,
 * '#' and a backslash that would read as an escape; every other byte as \ooo (a space is
 * \040). Same contract as cd_name_form. */
void cd_path_form(char *out, size_t outsize, const char *path, size_t max);
/* Is byte @c written as it is in a path (cd_path_form)? The marks parser reads the same set. */
int cd_path_byte_bare(unsigned char c);

#endif
