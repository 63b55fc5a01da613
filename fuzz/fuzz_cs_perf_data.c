// SPDX-License-Identifier: MIT
/*
 * Fuzz target: CoreSight decoding of a perf.data (src/report/itrace.c):
 * the cs_etm metadata turned into decoder configurations, AUXTRACE chunks
 * fed per AUX buffer with their discontinuities, code read through the
 * MMAP2 records, the instruction-range consumers (script, report, inject).
 * The input is a whole perf.data file (in a memfd).  Seeds:
 * fuzz/corpus/cs_perf_data/ (simpleperf's perf_etm.data, our recordings
 * of replayed trace, damaged copies).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <perfring/tools.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char symdir[512];
	char path[64];
	FILE *null;
	int fd;

	fd = memfd_create("fuzz-cs-perf-data", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!symdir[0]) {
		const char *d = getenv("CS_DATA");

		snprintf(symdir, sizeof(symdir), "%s/simpleperf-etm",
			 d ? d : "test/data");
	}
	null = fopen("/dev/null", "w");
	if (null) {
		struct perfring_cs_opts co = { .sz = sizeof(co),
					       .input = path,
					       .symdir = symdir };
		struct perfring_itrace_opts io = { .sz = sizeof(io),
						   .input = path,
						   .symdir = symdir,
						   .max_insns = 64 };
		struct perfring_cs_stats st = { .sz = sizeof(st) };

		co.decode = size & 1;
		if (!perfring_cs_decode(&co, null, &st))
			sink += st.packets + st.elements;
		if (!perfring_itrace_script(&io, null, &st))
			sink += st.ranges;
		if (!perfring_itrace_report(&io, null, &st))
			sink += st.instructions;
		if (!perfring_inject(&io, "/dev/null", &st))
			sink += st.ranges;
		fclose(null);
	}
	close(fd);
	return 0;
}
