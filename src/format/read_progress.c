// SPDX-License-Identifier: MIT
/*
 * The readers' progress (perf's "Processing events" bar): a process-wide
 * callback, as perfring_set_log(), told how far a perf.data's data
 * section has been read, at most every 100 ms.
 */
#include <time.h>
#include "perfring/tools.h"
#include "read_progress.h"

static perfring_read_progress_fn progress_fn;
static void *progress_ctx;
static uint64_t progress_last_ns;

PERFRING_API void perfring_set_read_progress(perfring_read_progress_fn fn,
					     void *ctx)
{
	progress_fn = fn;
	progress_ctx = ctx;
	progress_last_ns = 0;
}

void prd_read_progress(const char *name, uint64_t done, uint64_t total)
{
	struct timespec ts;
	uint64_t now;

	if (!progress_fn)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* every 100 ms, and the end (which a caller clears its line on) */
	if (done < total && now - progress_last_ns < 100000000ull)
		return;
	progress_last_ns = now;
	progress_fn(name, done, total, progress_ctx);
}
