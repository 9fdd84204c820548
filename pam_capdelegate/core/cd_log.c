/*
 * cd_log.c - see cd_log.h. The PAM module logs through pam_vsyslog so that messages carry the
 * service and module name; the CLI and the tests log to stderr (or capture) with the same text.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <security/pam_ext.h>

#include "cd_log.h"

static const char *priority_label(int priority)
{
	switch (priority) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR: return "error";
	case LOG_WARNING: return "warning";
	case LOG_DEBUG: return "debug";
	default: return "notice";
	}
}

static void vlog(struct cd_log *log, int priority, const char *fmt, va_list ap)
{
	if (priority == LOG_DEBUG && (log == NULL || !log->debug))
		return;
	if (log != NULL && log->pamh != NULL) {
		pam_vsyslog(log->pamh, priority, fmt, ap);
		return;
	}
	if (log != NULL && log->sink != NULL) {
		char *msg = NULL;
		if (vasprintf(&msg, fmt, ap) < 0) {
			msg = NULL;	/* undefined after a failure (vasprintf(3)) */
			log->lost = 1;
		}
		/* A message that could not be formatted is not dropped in silence: its place says so
		 * (the policy's reasons are held this way while it is read, then logged). */
		log->sink(log->sink_arg, priority, msg != NULL ? msg : "out of memory: a message was lost here");
		free(msg);
		return;
	}
	fprintf(stderr, "capdelegate: %s: ", priority_label(priority));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cd_log(struct cd_log *log, int priority, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(log, priority, fmt, ap);
	va_end(ap);
}

struct cd_log_held_msg {
	int priority;
	char *text;
};

static void hold_message(void *arg, int priority, const char *msg)
{
	struct cd_log_held *h = arg;
	struct cd_log_held_msg *more = realloc(h->msgs, (h->n + 1) * sizeof(*more));
	char *text = strdup(msg);
	if (more != NULL)
		h->msgs = more;
	if (more == NULL || text == NULL) {
		free(text);
		h->lost = 1;
		return;
	}
	more[h->n].priority = priority;
	more[h->n++].text = text;
}

void cd_log_hold(struct cd_log_held *h, const struct cd_log *real)
{
	memset(h, 0, sizeof(*h));
	h->quiet.debug = real != NULL && real->debug;
	h->quiet.sink = hold_message;
	h->quiet.sink_arg = h;
}

void cd_log_release(struct cd_log_held *h, struct cd_log *real, int replay)
{
	for (size_t i = 0; i < h->n; i++) {
		if (replay)
			cd_log(real, h->msgs[i].priority, "%s", h->msgs[i].text);
		free(h->msgs[i].text);
	}
	if (replay && (h->lost || h->quiet.lost))
		cd_log(real, LOG_ERR, "out of memory: some messages about the policy were lost");
	free(h->msgs);
	memset(h, 0, sizeof(*h));
}

static int shown_as_is(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '@' || c == '$' || c == '*' || c == ',' ||
	       c == '/' || c == ':' || c == '+' || c == '=' || c == '#';
}

void cd_quote(char *out, size_t outsize, const char *text, size_t len, size_t max)
{
	size_t o = 0;
	if (outsize == 0)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		size_t need = shown_as_is(c) ? 1 : 4;
		/* Keep room for the "..." that says the text was cut, and the NUL. */
		if (i == max || o + need + 4 > outsize) {
			if (o + 4 <= outsize) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (need == 1)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outsize - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

/* A name byte shown as it is: the bytes a policy may write bare (capdelegate.conf(5)). */
static int name_byte_as_is(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '@' || c == '$';	/* '$' only last */
}

static int octal_digit(char c)
{
	return c >= '0' && c <= '7';
}

/* A path byte shown as it is: printable ASCII but blanks, '#' (a comment) and '\\'. */
int cd_path_byte_bare(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '#' && c != '\\';
}

/* cd_name_form and cd_path_form: @bare says which bytes stand as they are; a backslash is
 * itself unless what follows would read as an escape; every other byte is \ooo. */
static void escaped_form(char *out, size_t outsize, const char *name, size_t max,
			 int (*bare_byte)(const char *s, size_t i, size_t len))
{
	size_t o = 0, len = strlen(name);
	if (outsize == 0)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		int bare = bare_byte(name, i, len) ||
			   (c == '\\' && !(octal_digit(name[i + 1]) && octal_digit(name[i + 2]) &&
					   octal_digit(name[i + 3])));
		size_t need = bare ? 1 : 4;
		if (i == max || o + need + 4 > outsize) {	/* room for "..." and the NUL */
			if (o + 4 <= outsize) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (bare)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outsize - o, "\\%03o", c);
	}
	out[o] = '\0';
}

static int name_bare(const char *s, size_t i, size_t len)
{
	unsigned char c = (unsigned char)s[i];
	return name_byte_as_is(c) && !(c == '$' && i + 1 < len);
}

static int path_bare(const char *s, size_t i, size_t len)
{
	(void)len;
	return cd_path_byte_bare((unsigned char)s[i]);
}

void cd_name_form(char *out, size_t outsize, const char *name, size_t max)
{
	escaped_form(out, outsize, name, max, name_bare);
}

void cd_path_form(char *out, size_t outsize, const char *path, size_t max)
{
	escaped_form(out, outsize, path, max, path_bare);
}
