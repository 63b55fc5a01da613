// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the record layer's reader of a cs_etm perf.data as replay
 * input (src/record/record_aux.c, load_perf_data through
 * aux_source_open): the AUXTRACE data and index, the cs_etm metadata, the
 * attr and ids, the PERF_RECORD_AUX records that cut the trace and the
 * side-band records it copies; beside other sources (the record's
 * perfring_record() path) those records' ids are moved and an IDENTIFIER
 * appended to each.  Both ways for every input; the source is made (ring
 * pairs, the replay, the cs_etm recorder) and freed without playing.
 * Seeds: fuzz/corpus/replay_pd/ (simpleperf's and our recordings, cut and
 * damaged copies, as for cs_perf_data).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "coresight/aux_source.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void open_close(const char *path, bool beside)
{
	struct perfring_record_aux_opts o = {
		.sz = sizeof(o),
		.replay = path,
		.replay_cpu = -1,
		.aux_bytes = 64 << 10,
		.data_bytes = 64 << 10,
		.control_fd = -1,
	};
	struct perfring_record_aux_stats st = { .sz = sizeof(st) };
	struct aux_source *a = NULL;

	if (!aux_source_open(&o, beside, &a)) {
		aux_source_stats(a, &st);
		sink += st.nr_buffers;
	}
	aux_source_close(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file("fuzz-replay-pd", data, size, path);

	if (fd < 0)
		return 0;
	open_close(path, false);
	open_close(path, true);
	close(fd);
	return 0;
}
