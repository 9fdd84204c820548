/*
 * test_log.h - the unit tests' log: every message the core logs through test_log, kept one
 * per line for the cases to search (logged()), and counted.
 */
#ifndef TEST_LOG_H
#define TEST_LOG_H

#include <stdlib.h>
#include <string.h>

#include "cd_log.h"

static char *captured;		/* every message logged, one per line */
static size_t captured_len;
static size_t nmessages;

static void capture(void *arg, int priority, const char *msg)
{
	(void)arg;
	(void)priority;
	size_t n = strlen(msg);
	captured = realloc(captured, captured_len + n + 2);
	assert_non_null(captured);
	memcpy(captured + captured_len, msg, n);
	captured_len += n;
	captured[captured_len++] = '\n';
	captured[captured_len] = '\0';
	nmessages++;
}

static struct cd_log test_log = { .sink = capture };

static void forget_logged(void)
{
	free(captured);
	captured = NULL;
	captured_len = nmessages = 0;
}

static const char *logged(void)
{
	return captured ? captured : "";
}

#endif
