/*
 * cd_snapshot.h - private to the policy loader (cd_load.c): is what was read one whole version
 * of the policy? Each file and directory read is remembered as it was (device, inode, size,
 * mtime and ctime to the nanosecond); the policy is one version when none of them changed
 * while the policy was read and none changed just before (see cd_snapshot.c).
 */
#ifndef CD_SNAPSHOT_H
#define CD_SNAPSHOT_H

#include <sys/stat.h>

struct cd_seen;

struct cd_snapshot {
	struct cd_seen *seen;
	size_t n;
	int changed;
	char *where;		/* the path that changed first (NULL: memory ran out) */
};

/* Two fstat results of one file say the same: same inode, size and times. Also capdelegate
 * edit's test that the installed file was not changed while it was edited. */
int cd_snapshot_same(const struct stat *a, const struct stat *b);
/* Remember @path as @st (NULL: it did not exist). -1 when memory runs out. */
int cd_snapshot_add(struct cd_snapshot *s, const char *path, const struct stat *st);
/* Mark the snapshot changed at @path (a file that changed while it was read). */
void cd_snapshot_changed(struct cd_snapshot *s, const char *path);
/* 1 when every remembered path still stats as remembered and, if any changed less than
 * @settle_ms ago, still does once that much time has passed; 0 otherwise (s->where says
 * where). */
int cd_snapshot_whole(struct cd_snapshot *s, long settle_ms);
void cd_snapshot_free(struct cd_snapshot *s);

#endif
