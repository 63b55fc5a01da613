// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perf's JIT symbol maps, /tmp/perf-PID.map
 * (src/report/perfmap.c), which another program writes.  The input is a
 * map file; every symbol the parser accepts is checked to be a non-empty
 * name and a range that does not wrap.  Inputs are exactly their size on
 * the heap.  Seeds: fuzz/corpus/perfmap/.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "machine/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(uint64_t start, uint64_t size, const char *name, void *ctx)
{
	(void)ctx;
	if (!size || start + size < start || !name[0])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	perfmap_parse(copy, size, check, NULL);
	free(copy);
	return 0;
}
