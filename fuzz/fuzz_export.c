// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perfring export over arbitrary perf.data bytes, in the
 * formats that build state from the samples: chrome (call stacks, CPU
 * tracks, counters, sched_switch fields), pprof (intern tables, the
 * BUILD_ID and CLOCK_DATA features, the protobuf and gzip writers) and
 * folded; then, for record --off-cpu's samples, folded -e offcpu-time,
 * folded --wakers (the offcpu-waker samples' raw block and call chain)
 * and the hot/cold svg.  The input is a memfd read by its /proc/self/fd path; the output
 * goes to /dev/null.  Seeds: fuzz/corpus/export/ (-g, page-fault,
 * sched_switch, pipe, --off-cpu and --call-graph dwarf files of perf
 * record and perfring record, and damaged callchains and waker payloads).  A target of its own: the
 * exports resolve symbols, slower than fuzz_perf_data's reader alone.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fmts[] = { "chrome", "pprof", "folded" };
	char path[64];
	FILE *devnull;
	int fd;

	fd = fuzz_file("fuzz-export", data, size, path);
	if (fd < 0)
		abort();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		PERFRING_OPTS(perfring_export_opts, eo, .input = path,
			      .format = fmts[i]);

		perfring_export(&eo, devnull);
	}
	for (int i = 0; i < 3; i++) {
		PERFRING_OPTS(perfring_export_opts, eo, .input = path,
			      .format = i == 2 ? "svg" : "folded",
			      .event = i == 0 ? "offcpu-time" : NULL,
			      .wakers = i == 1);

		perfring_export(&eo, devnull);
	}
	fclose(devnull);
	close(fd);
	return 0;
}
