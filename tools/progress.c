// SPDX-License-Identifier: MIT
/*
 * perf's "Processing events" bar on stderr, for the commands that read a
 * perf.data: only on a terminal, and only once the reading has taken half
 * a second (a small file shows nothing); the line is erased at the end.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

static double progress_start;
static bool progress_shown;

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_show(const char *path, uint64_t done, uint64_t total,
			  void *ctx)
{
	char bar[41];
	int width = (int)sizeof(bar) - 1, fill;

	(void)ctx;
	if (done >= total) {
		if (progress_shown)
			fprintf(stderr, "\r%*s\r", 79, "");
		progress_shown = false;
		progress_start = 0;
		return;
	}
	if (!progress_start) {
		progress_start = now_seconds();
		return;
	}
	if (!progress_shown && now_seconds() - progress_start < 0.5)
		return;
	progress_shown = true;
	fill = total ? (int)((double)width * (double)done / (double)total) : 0;
	memset(bar, '=', (size_t)fill);
	memset(bar + fill, ' ', (size_t)(width - fill));
	bar[width] = 0;
	if (fill < width)
		bar[fill] = '>';
	fprintf(stderr, "\rProcessing events... [%s] %3d%% %.20s", bar,
		total ? (int)(100.0 * (double)done / (double)total) : 0,
		strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	fflush(stderr);
}

void progress_setup(void)
{
	if (isatty(STDERR_FILENO))
		perfring_set_read_progress(progress_show, NULL);
}
