/*
 * fake_clock.c - preloaded by the policy model's PAM driver (tests/model/diff.py): while
 * CD_TEST_CLOCK holds a number, CLOCK_REALTIME reads that many seconds since the epoch, so
 * that the module judges the policy lines' windows (capdelegate.conf(5), WINDOWS) at the
 * moment the model does. The variable is read at each call: the driver sets it per batch of
 * logins. Every other clock, and CLOCK_REALTIME without the variable, is the real one.
 * A test's tool only: the module itself never reads a variable to judge a window.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *v = clk == CLOCK_REALTIME ? getenv("CD_TEST_CLOCK") : NULL;
	if (v != NULL && *v != '\0') {
		ts->tv_sec = (time_t)strtoll(v, NULL, 10);
		ts->tv_nsec = 0;
		return 0;
	}
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	return real(clk, ts);
}
