/*
 * cd_snapshot.c - see cd_snapshot.h. A policy rewritten in place (`cat new > f`,
 * nano's truncate-and-write, a script writing line by line) can be read half-written, and a
 * prefix can grant more than any whole version: "@staff cap_net_raw" read without the later
 * "dave none" gives dave cap_net_raw. Three checks, each for one way a read goes wrong:
 *  - a file's fstat before and after its read differ: it was written during the read;
 *  - after the last file, each path (and the drop-in directory) is stat'ed again: a file
 *    renamed over, created or removed, or changed after it was read while the others were,
 *    makes the files read no single version;
 *  - a policy at rest can still be a prefix: a writer between two chunks. The kernel sets
 *    ctime on every change (user space cannot set it), so a policy whose newest ctime is
 *    recent (less than the settle time old, plus the margin by which the clock that stamped
 *    it may lag) is checked again after the settle time, slept by the reader. A writer that
 *    pauses longer than that in the middle cannot be told from a whole file:
 *    capdelegate.conf(5) says to replace the file by rename.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cd_snapshot.h"

struct cd_seen {
	char *path;
	int present;		/* 0: the path did not exist */
	struct stat st;
};

int cd_snapshot_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int cd_snapshot_add(struct cd_snapshot *s, const char *path, const struct stat *st)
{
	struct cd_seen *more = realloc(s->seen, (s->n + 1) * sizeof(*more));
	if (more == NULL)
		return -1;
	s->seen = more;
	struct cd_seen *e = &more[s->n];
	memset(e, 0, sizeof(*e));
	if ((e->path = strdup(path)) == NULL)
		return -1;
	e->present = st != NULL;
	if (st != NULL)
		e->st = *st;
	s->n++;
	return 0;
}

void cd_snapshot_changed(struct cd_snapshot *s, const char *path)
{
	if (!s->changed)
		s->where = strdup(path);	/* NULL when memory runs out: the message says less */
	s->changed = 1;
}

/* Every path as remembered? stat follows links, as the loader's realpath did. */
static int unchanged(struct cd_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct stat now;
		int present = stat(s->seen[i].path, &now) == 0;
		if (!present && errno != ENOENT && errno != ENOTDIR)
			present = -1;	/* cannot say: not the same */
		if (present != s->seen[i].present || (present && !cd_snapshot_same(&now, &s->seen[i].st))) {
			cd_snapshot_changed(s, s->seen[i].path);
			return 0;
		}
	}
	return 1;
}

static long long ns_of(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* How long the coarse clock may have lagged when it stamped a ctime. The kernel stamps ctime
 * with current_time(), the coarse clock, which advances only when a tick updates it; under
 * load a tick comes late (measured on a 2-core machine at load 8: up to 66 ms behind the real
 * clock), and once it comes the clock jumps. A change stamped during such a lag therefore
 * looks older than it is by as much as the lag: a writer's first half, written 5 ms ago, read
 * 70 ms old. Ages below the settle time plus this margin are not trusted. */
#define CLOCK_LAG_MARGIN_MS 1000

/* How long to wait before the paths are checked again: 0 when the newest change is older than
 * the settle time plus the clock's possible lag, else the whole settle time, measured by the
 * reader's own sleep rather than by the clock that stamped the change (see above). A ctime
 * ahead of that clock (a fine-grained stamp, or the clock was set back) waits too.
 * An empty file counts as changed now: truncating sets the size before the times (tmpfs's
 * shmem_setattr frees the pages in between), so a file being truncated reads, for a moment,
 * as an empty file with the old times; the wait outlasts that moment. */
static long long settle_wait_ns(const struct cd_snapshot *s, long settle_ms)
{
	long long newest = 0, settle = settle_ms * 1000000LL;
	struct timespec now;
	if (clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
		return settle;
	for (size_t i = 0; i < s->n; i++) {
		const struct stat *st = &s->seen[i].st;
		long long changed = S_ISREG(st->st_mode) && st->st_size == 0 ? ns_of(now) : ns_of(st->st_ctim);
		if (s->seen[i].present && changed > newest)
			newest = changed;
	}
	long long age = ns_of(now) - newest;
	return age >= settle + CLOCK_LAG_MARGIN_MS * 1000000LL ? 0 : settle;
}

/* The paths are stat'ed again only after the clock was read: a reader stopped between the two
 * for longer than the settle time would otherwise take a prefix for a policy at rest. */
int cd_snapshot_whole(struct cd_snapshot *s, long settle_ms)
{
	if (s->changed)
		return 0;
	long long wait = settle_wait_ns(s, settle_ms);
	struct timespec t = { .tv_sec = wait / 1000000000LL, .tv_nsec = wait % 1000000000LL };
	while (wait > 0 && nanosleep(&t, &t) < 0 && errno == EINTR)
		;
	return unchanged(s);
}

void cd_snapshot_free(struct cd_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->seen[i].path);
	free(s->seen);
	free(s->where);
	memset(s, 0, sizeof(*s));
}
