// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perfring sched timehist and latency over arbitrary
 * perf.data bytes: the sched tracepoints' payloads (sched_switch,
 * sched_waking/wakeup, wakeup_new, migrate_task, stat_runtime,
 * process_fork) read through the file's own event formats, the per-task
 * and per-CPU state they build, the summary, wake-up and CPU-column
 * printing, and latency's per-task sums (merged and per thread).  The
 * input is a memfd read by its /proc/self/fd path; the output goes to
 * /dev/null.  Seeds: fuzz/corpus/sched/ (a perf record and a perfring
 * record pipe file of those events on workloads/offcpu, and damaged
 * copies).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	FILE *devnull;
	int fd;

	fd = fuzz_file("fuzz-sched", data, size, path);
	if (fd < 0)
		abort();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	for (int i = 0; i < 2; i++) {
		PERFRING_OPTS(perfring_sched_opts, th, .input = path,
			      .command = "timehist", .with_summary = i,
			      .wakeups = i, .cpu_visual = i);
		PERFRING_OPTS(perfring_sched_opts, lat, .input = path,
			      .command = "latency", .per_thread = i,
			      .sort = i ? "max,pid" : NULL);

		perfring_sched(&th, devnull);
		perfring_sched(&lat, devnull);
	}
	fclose(devnull);
	close(fd);
	return 0;
}
