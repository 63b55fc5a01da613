// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perfring export -f chrome over arbitrary trace.dat bytes:
 * the trace.dat reader, the page walk, libtraceevent's formats from the
 * file and the field decoding of every event into JSON args (char arrays,
 * __data_loc strings, numbers: each offset checked against the record),
 * the sched_switch slices made from the file's own format.  The input is
 * a memfd read by its /proc/self/fd path (the export detects the
 * trace.dat magic); the output goes to /dev/null.  Seeds:
 * fuzz/corpus/tdat_export/ (perfring record --tracefs files with
 * sched_switch, markers and dropped events, a --tracefs-event session
 * (sched_switch, sched_process_exec with its __data_loc filename, a marker;
 * kallsyms left out to keep it small), trace-cmd convert's version 7
 * files, plain and zstd).
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

/*
 * libtraceevent 1.7 leaks a few bytes on its parser's error paths (a
 * token it was building, e.g. of a damaged event format): not ours to fix,
 * and no crash; LeakSanitizer ignores allocations made inside it (as
 * fuzz_tpfmt.c does).
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	FILE *devnull;
	int fd;

	fd = fuzz_file("fuzz-tdat-export", data, size, path);
	if (fd < 0)
		abort();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	{
		PERFRING_OPTS(perfring_export_opts, eo, .input = path,
			      .format = "chrome");

		perfring_export(&eo, devnull);
	}
	fclose(devnull);
	close(fd);
	return 0;
}
