// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perfring top's table (src/record/top.c) over damaged ring
 * records: its sample parser (perfring top's own layout: IDENTIFIER, IP,
 * TID, TIME, CPU, PERIOD, CALLCHAIN), the side-band records it hands to
 * the thread and map state, the aggregation, decay and printing.
 *
 * Input: one byte of settings (bit 0: call chains, bit 1: -z, bits 2-3:
 * the sort keys, bit 4: -n, bit 5: -K, bit 6: -U, bit 7: the tables
 * handed to an on_table callback, which reads every entry, chain and
 * frame, instead of printed), then records as a ring
 * holds them, each taken by its header's size (at least 8, at most what
 * is left; a multiple of 8 as the ring's reader guarantees).  Each record
 * is copied to the heap at exactly its size, so ASan sees any read past
 * it.  A FINISHED_ROUND record (type 68) prints the table, as a refresh
 * does; the end prints it twice (the second after a decay).  Seeds:
 * fuzz/corpus/top/ (the data of `perfring record` runs of the hot
 * workload, with and without -g: the same sample layout).
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/top.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FINISHED_ROUND 68

/* Reads everything the table points at (ASan: all of it valid). */
static int walk_table(const struct perfring_top_table *tab, void *ctx)
{
	size_t *sum = ctx;

	*sum += strlen(tab->event_name) + strlen(tab->sort);
	for (uint32_t i = 0; i < tab->nr_entries; i++) {
		const struct perfring_top_entry *e = &tab->entries[i];

		*sum += strlen(e->comm) + strlen(e->dso) +
			(e->sym ? strlen(e->sym) : 0) + e->period;
		for (uint32_t j = 0; j < e->nr_chains; j++)
			for (uint32_t k = 0; k < e->chains[j].nr_frames; k++) {
				const struct perfring_frame *f =
					&e->chains[j].frames[k];

				*sum += f->ip + (f->sym ? strlen(f->sym) : 0) +
					(f->dso ? strlen(f->dso) : 0);
			}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sorts[4] = { "dso,sym", "comm,dso,sym",
					      "pid,sym", "sym" };
	PERFRING_OPTS(perfring_top_opts, o, .control_fd = -1, .entries = 30);
	struct top *t;
	FILE *out;
	size_t off = 1, sum = 0;

	if (!size)
		return 0;
	o.callchain = data[0] & 1;
	o.zero = data[0] & 2;
	o.sort = sorts[(data[0] >> 2) & 3];
	o.show_nr_samples = data[0] & 16;
	o.hide_kernel = data[0] & 32;
	o.hide_user = data[0] & 64;
	if (data[0] & 128) {
		o.on_table = walk_table;
		o.ctx = &sum;
	}
	out = fopen("/dev/null", "we");
	if (!out)
		return 0;
	if (top_table_new(&o, out, &t)) {
		fclose(out);
		return 0;
	}
	while (size - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		void *rec;

		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > size - off || h.size % 8)
			break;
		rec = malloc(h.size);
		if (!rec)
			break;
		memcpy(rec, data + off, h.size);
		if (h.type == FINISHED_ROUND)
			top_table_print(t);
		else
			top_table_feed(t, rec, h.size);
		free(rec);
		off += h.size;
	}
	top_table_print(t);
	top_table_print(t);
	top_table_free(t);
	fclose(out);
	return 0;
}
