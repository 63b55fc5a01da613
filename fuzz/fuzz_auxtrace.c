// SPDX-License-Identifier: MIT
/*
 * Fuzz target: AUXTRACE_INFO (cs_etm metadata) and AUXTRACE parsing.
 *
 * The input is read three ways: as a PERF_RECORD_AUXTRACE_INFO record
 * (parsed, rebuilt, parsed again: the two parses must agree), as a
 * HEADER_AUXTRACE index section, and as a whole perf.data file whose
 * AUXTRACE chunks are collected and every payload byte read back.  Seeds:
 * fuzz/corpus/auxtrace/ (AUXTRACE_INFO records of simpleperf and perfring
 * recordings, whole recorded files, and damaged copies).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "format/auxtrace.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void info_twice(const uint8_t *data, size_t size)
{
	struct cs_etm_info a, b;
	unsigned char *buf;
	long n;

	if (cs_etm_info_parse(data, size, &a))
		return;
	for (uint32_t i = 0; i < a.nr_cpu; i++)
		sink += a.cpus[i].trace_id + a.cpus[i].configr +
			a.cpus[i].trcidr0 + a.cpus[i].etmidr;
	sink += cs_etm_info_by_trace_id(&a, 0x10) != NULL;
	sink += cs_etm_info_cpu(&a, 0) != NULL;
	if (a.version == 0 || a.nr_cpu == 0) {
		cs_etm_info_free(&a);
		return;
	}
	for (uint32_t i = 0; i < a.nr_cpu; i++)
		if (a.cpus[i].nr_params > CS_ETM_MAX_PARAMS)
			a.cpus[i].nr_params = CS_ETM_MAX_PARAMS;
	n = cs_etm_info_build(&a, NULL, 0);
	if (n > 0) {
		buf = malloc((size_t)n);
		if (!buf)
			abort();
		if (cs_etm_info_build(&a, buf, (size_t)n) != n)
			abort();
		if (cs_etm_info_parse(buf, (size_t)n, &b))
			abort(); /* what we build, we parse */
		if (b.nr_cpu != a.nr_cpu)
			abort();
		for (uint32_t i = 0; i < a.nr_cpu; i++)
			if (b.cpus[i].trace_id != a.cpus[i].trace_id ||
			    b.cpus[i].kind != a.cpus[i].kind ||
			    b.cpus[i].traceidr != a.cpus[i].traceidr)
				abort();
		cs_etm_info_free(&b);
		free(buf);
	}
	cs_etm_info_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auxtrace_index_entry *ent;
	struct auxtrace_file *af;
	struct auxtrace_chunk c;
	char path[64];
	size_t nr;
	int fd;

	info_twice(data, size);
	if (auxtrace_chunk_parse(data, size, &c) == 0)
		sink += c.size + c.offset + c.idx + c.cpu + c.tid;
	if (auxtrace_index_parse(data, size, &ent, &nr) == 0) {
		for (size_t i = 0; i < nr; i++)
			sink += ent[i].file_offset + ent[i].sz;
		free(ent);
	}

	fd = fuzz_file("fuzz-auxtrace", data, size, path);
	if (fd < 0)
		abort();
	if (auxtrace_file_open(path, &af) == 0) {
		const struct cs_etm_info *ci = auxtrace_file_cs_etm(af);
		unsigned char buf[4096];

		if (ci)
			sink += ci->nr_cpu;
		for (size_t i = 0; i < auxtrace_file_nr_chunks(af); i++) {
			const struct auxtrace_chunk *ch =
				auxtrace_file_chunk(af, i);

			for (uint64_t off = 0; off < ch->size;) {
				size_t len = ch->size - off > sizeof(buf) ?
						     sizeof(buf) :
						     (size_t)(ch->size - off);

				if (auxtrace_file_read(af, i, off, buf, len))
					abort(); /* checked at open */
				sink += buf[0] + buf[len - 1];
				off += len;
			}
			if (auxtrace_file_read(af, i, ch->size, buf, 1) == 0)
				abort(); /* past the chunk */
		}
		auxtrace_file_close(af);
	}
	close(fd);
	return 0;
}
