/*
 * cd_time.c - the times of a line's validity window (capdelegate.conf(5), WINDOWS): UTC text
 * to seconds since the epoch and back, and the clock a window is judged by.
 *
 * Pure arithmetic on purpose: no mktime, timegm, localtime or strptime. Those read TZ (and
 * /etc/localtime), and a window judged in the caller's time zone is the bug this avoids: a PAM
 * module runs inside a process whose environment the user may have chosen (su, sudo, a screen
 * locker), so nothing here may depend on it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cd_policy.h"

/* Days from 1970-01-01 to @y-@m-@d in the proleptic Gregorian calendar (the civil calendar's
 * usual formula: years start in March, so that the leap day is the last day of a year). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;					/* 0..399 */
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;	/* 0..365 */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;		/* 0..146096 */
	return era * 146097 + doe - 719468;
}

/* Its inverse, for printing a time. */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* @n decimal digits at t[*i], all of them digits: their value, or -1. */
static int digits(const char *t, size_t len, size_t *i, int n)
{
	int v = 0;
	for (int k = 0; k < n; k++, (*i)++) {
		if (*i >= len || t[*i] < '0' || t[*i] > '9')
			return -1;
		v = v * 10 + (t[*i] - '0');
	}
	return v;
}

static int expect(const char *t, size_t len, size_t *i, char c)
{
	if (*i >= len || t[*i] != c)
		return -1;
	(*i)++;
	return 0;
}

#define FORM "a time is written YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS, in UTC, followed by Z " \
	     "(2026-12-14T18:00Z)"

int cd_time_parse(const char *t, size_t len, int64_t *out, const char **why)
{
	size_t i = 0;
	int year, mon, day, hour, min, sec = 0;
	*why = FORM;
	if ((year = digits(t, len, &i, 4)) < 0 || expect(t, len, &i, '-') < 0 ||
	    (mon = digits(t, len, &i, 2)) < 0 || expect(t, len, &i, '-') < 0 ||
	    (day = digits(t, len, &i, 2)) < 0)
		return -1;
	if (i == len) {
		*why = "a date alone is no time: write the hour and its zone too (2026-12-14T00:00Z)";
		return -1;
	}
	if (expect(t, len, &i, 'T') < 0 || (hour = digits(t, len, &i, 2)) < 0 ||
	    expect(t, len, &i, ':') < 0 || (min = digits(t, len, &i, 2)) < 0)
		return -1;
	if (i < len && t[i] == ':' && (i++, (sec = digits(t, len, &i, 2)) < 0))
		return -1;
	if (i == len) {
		*why = "a time without its zone: times are UTC and written with Z (2026-12-14T18:00Z)";
		return -1;
	}
	if (t[i] == '+' || t[i] == '-' || t[i] == 'z') {
		*why = "times are UTC and written with Z: convert the time to UTC (2026-12-14T18:00Z)";
		return -1;
	}
	if (expect(t, len, &i, 'Z') < 0 || i != len)
		return -1;
	if (year < 1970) {
		*why = "no time before 1970-01-01T00:00Z";
		return -1;
	}
	if (mon < 1 || mon > 12 || day < 1 || day > days_in_month(year, mon)) {
		*why = "no such date";
		return -1;
	}
	if (hour > 23 || min > 59 || sec > 59) {
		*why = "no such time of day (00:00 to 23:59:59; no leap second)";
		return -1;
	}
	*out = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec;
	*why = NULL;
	return 0;
}

const char *cd_time_format(int64_t t, char *buf, size_t size)
{
	int64_t days = t / 86400, rem = t % 86400, y;
	int m, d;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	int sec = (int)(rem % 60);
	if (sec != 0)
		snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02d:%02dZ", (long long)y, m, d,
			 (int)(rem / 3600), (int)(rem / 60 % 60), sec);
	else
		snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02dZ", (long long)y, m, d,
			 (int)(rem / 3600), (int)(rem / 60 % 60));
	return buf;
}

int cd_clock_now(int64_t *now)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -1;
	*now = (int64_t)ts.tv_sec;
	return 0;
}

int cd_rule_in_force(const struct cd_rule *r, int64_t now)
{
	return (!r->has_from || now >= r->from) && (!r->has_until || now < r->until);
}

/* Move the rules outside their window at @now to pol->outside, keeping both lists in file
 * order: everything else in the core then sees only the lines in force. */
int cd_policy_at(struct cd_policy *pol, int64_t now)
{
	size_t kept = 0, out = 0;
	for (size_t i = 0; i < pol->nrules; i++)
		out += !cd_rule_in_force(&pol->rules[i], now);
	pol->at = now;
	pol->at_set = 1;
	if (out == 0)
		return 0;
	struct cd_rule *outside = realloc(pol->outside, (pol->noutside + out) * sizeof(*outside));
	if (outside == NULL)
		return -1;
	pol->outside = outside;
	for (size_t i = 0; i < pol->nrules; i++) {
		if (cd_rule_in_force(&pol->rules[i], now))
			pol->rules[kept++] = pol->rules[i];
		else
			pol->outside[pol->noutside++] = pol->rules[i];
	}
	pol->nrules = kept;
	return 0;
}

int64_t cd_policy_next_edge(const struct cd_policy *pol, int64_t now)
{
	int64_t next = INT64_MAX;
	const struct cd_rule *lists[2] = { pol->rules, pol->outside };
	size_t counts[2] = { pol->nrules, pol->noutside };
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			const struct cd_rule *r = &lists[l][i];
			if (r->has_from && r->from > now && r->from < next)
				next = r->from;
			if (r->has_until && r->until > now && r->until < next)
				next = r->until;
		}
	return next;
}
