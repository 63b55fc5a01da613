// SPDX-License-Identifier: MIT
/*
 * Fuzz target: build-ids out of hostile ELF bytes (src/format/buildid.c)
 * and the record follower that decides which DSOs get one
 * (src/record/dso_hits.c).
 *
 * The first byte picks: 'N' the rest is a run of ELF notes (as in a note
 * section or /sys/kernel/notes); 'R' the rest is perf records (MMAP,
 * MMAP2, FORK, COMM, SAMPLE) as a ring would hold them, walked by their
 * sizes; anything else: the whole input is an ELF image for libelf.
 * Inputs are exactly their size on the heap, so ASan sees any read past
 * them.  Seeds: fuzz/corpus/buildid/.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "format/buildid.h"
#include "record/dso_hits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void records(const uint8_t *p, size_t len)
{
	struct dso_hits *h =
		dso_hits_new(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			     PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	size_t off = 0;

	if (!h)
		return;
	while (len - off >= 8) {
		uint16_t sz;

		memcpy(&sz, p + off + 6, 2);
		if (sz < 8 || sz > len - off) {
			/* a cut record: offered as it is, then stop */
			dso_hits_note(h, p + off, len - off);
			break;
		}
		dso_hits_note(h, p + off, sz);
		off += sz;
	}
	dso_hits_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buildid id;
	uint8_t *copy;
	char hex[2 * BUILDID_MAX + 1];

	if (!size)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (copy[0] == 'N') {
		if (!buildid_from_notes(copy + 1, size - 1, &id))
			buildid_hex(&id, hex);
	} else if (copy[0] == 'R') {
		records(copy + 1, size - 1);
	} else if (!buildid_from_elf_mem(copy, size, &id)) {
		buildid_hex(&id, hex);
	}
	free(copy);
	return 0;
}
