// SPDX-License-Identifier: MIT
/* --switch-output's timing and file names (switch_output.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "switch_output.h"

bool switch_output_due(const struct switch_output *so, uint64_t data_bytes,
		       uint64_t now_ms)
{
	if (!so->on)
		return false;
	if (so->bytes && data_bytes >= so->bytes)
		return true;
	return so->every_ms && now_ms - so->started_ms >= so->every_ms;
}

int switch_output_rename(const char *path, char *out, size_t len)
{
	struct timeval tv;
	struct tm tm;
	char ts[64];
	int n;

	if (gettimeofday(&tv, NULL) || !localtime_r(&tv.tv_sec, &tm))
		return -EINVAL;
	snprintf(ts, sizeof(ts), "%04d%02d%02d%02d%02d%02d%02u",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (unsigned)(tv.tv_usec / 10000));
	for (int k = 0; k < 100; k++) {
		n = k ? snprintf(out, len, "%s.%s.%d", path, ts, k) :
			snprintf(out, len, "%s.%s", path, ts);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		/* never over an existing file (two switches in 10 ms) */
		if (!renameat2(AT_FDCWD, path, AT_FDCWD, out, RENAME_NOREPLACE))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}
