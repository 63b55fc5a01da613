// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the trace.dat reader (src/format/trace_dat.c) and the page
 * walk the report does over its CPU data (src/ring/subbuf.c).  Oracles:
 * every section the reader accepts lies inside the input, CPU data
 * regions too (compressed files: their decompressed buffers); the walk
 * stays inside each page.  Damage must be refused
 * with an error, never read out of bounds (ASan).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/trace_dat.h"
#include "ring/subbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

#define ORACLE(cond)                                                           \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_trace_dat: oracle failed: %s\n", \
				#cond);                                        \
			abort();                                               \
		}                                                              \
	} while (0)

static bool inside(const uint8_t *buf, size_t size, const void *p, size_t n)
{
	const uint8_t *q = p;

	return n == 0 ||
	       (q >= buf && q <= buf + size && n <= size - (size_t)(q - buf));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tdat_file *f;
	uint8_t *copy = malloc(size ? size : 1);
	int err;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	err = tdat_open_mem(copy, size, &f);
	if (err) {
		ORACLE(err == -EBADMSG || err == -EPROTO || err == -ENOMEM);
		free(copy);
		return 0;
	}
	/* Sections of a compressed file live in decompressed buffers. */
	if (!f->compressed) {
		ORACLE(inside(copy, size, f->header_page.data,
			      f->header_page.len));
		ORACLE(inside(copy, size, f->header_event.data,
			      f->header_event.len));
		for (size_t i = 0; i < f->nr_ftrace; i++)
			ORACLE(inside(copy, size, f->ftrace[i].data,
				      f->ftrace[i].len));
		for (size_t i = 0; i < f->nr_events; i++)
			ORACLE(inside(copy, size, f->events[i].data,
				      f->events[i].len));
		ORACLE(inside(copy, size, f->kallsyms.data, f->kallsyms.len));
		ORACLE(inside(copy, size, f->printk.data, f->printk.len));
		ORACLE(inside(copy, size, f->cmdlines.data, f->cmdlines.len));
	}
	for (uint32_t c = 0; c < f->nr_cpus; c++) {
		uint64_t off = f->cpus[c].offset, sz = f->cpus[c].size;

		if (!sz)
			continue;
		if (!f->compressed)
			ORACLE(off <= size && sz <= size - off &&
			       f->cpus[c].data == copy + off);
		for (uint64_t p = 0; p + f->page_size <= sz;
		     p += f->page_size) {
			const uint8_t *pg = f->cpus[c].data + p;
			struct subbuf_page_info pi;
			struct subbuf_iter it;
			struct subbuf_event ev;

			if (subbuf_page_info(pg, f->page_size, &pi))
				continue;
			subbuf_iter_init(&it, pg + SUBBUF_HDR_SIZE, pi.commit,
					 pi.time_stamp);
			while (subbuf_iter_next(&it, &ev) > 0) {
				ORACLE(inside(pg, f->page_size, ev.data,
					      ev.size));
				sink += ev.ts + ev.size;
			}
		}
	}
	tdat_close(f);
	free(copy);
	return 0;
}
