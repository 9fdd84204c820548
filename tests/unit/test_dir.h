/*
 * test_dir.h - where the unit tests may write policy files. The core refuses a policy below a
 * directory that others can write (/tmp included, sticky or not), so as root the files live
 * under /run and otherwise under the build tree ($top_builddir, set by make check).
 */
#ifndef TEST_DIR_H
#define TEST_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Make a fresh 0755 directory "BASE/@prefix-XXXXXX" into @buf. 0 on success, else -1 with a
 * "Bail out!" line printed (TAP). */
static inline int make_test_dir(char *buf, size_t size, const char *prefix)
{
	const char *base = getuid() == 0 ? "/run" : getenv("top_builddir");
	if (base == NULL || snprintf(buf, size, "%s/%s-XXXXXX", base, prefix) >= (int)size ||
	    mkdtemp(buf) == NULL || chmod(buf, 0755) < 0) {
		printf("Bail out! cannot make a test directory under %s\n",
		       base ? base : "$top_builddir");
		return -1;
	}
	return 0;
}

#endif
