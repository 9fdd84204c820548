/*
 * syslog_capture.c - LD_PRELOAD shim for tests/cli/marks-cases.sh: every syslog(3) call of the
 * CLI is appended to $SYSLOG_CAPTURE as "ident facility.priority message", so the test reads
 * what `marks apply` logs without a syslog daemon. openlog's arguments are recorded too.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

static const char *ident = "-";
static int facility = LOG_USER;

void openlog(const char *id, int option, int fac)
{
	(void)option;
	ident = id != NULL ? id : "-";
	facility = fac;
}

void closelog(void)
{
}

void vsyslog(int pri, const char *fmt, va_list ap)
{
	const char *path = getenv("SYSLOG_CAPTURE");
	FILE *f = path != NULL ? fopen(path, "a") : NULL;
	if (f == NULL)
		return;
	fprintf(f, "%s %s.%d ", ident, facility == LOG_AUTHPRIV ? "authpriv" : "other",
		LOG_PRI(pri));
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fclose(f);
}

void syslog(int pri, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsyslog(pri, fmt, ap);
	va_end(ap);
}

/* _FORTIFY_SOURCE builds call these instead. */
void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	va_list ap;
	(void)flag;
	va_start(ap, fmt);
	vsyslog(pri, fmt, ap);
	va_end(ap);
}

void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	vsyslog(pri, fmt, ap);
}
