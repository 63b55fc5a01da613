// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the HEADER_GROUP_DESC reader (src/format/group_desc.c).
 * The first byte is the number of attrs the file would have; the rest is
 * the feature's payload, exactly its size on the heap so ASan sees any
 * read past it.  Every group kept must lie inside the attrs, have two
 * members or more and not overlap the one before.  Seeds:
 * fuzz/corpus/group_desc/ (groups as perf record and perfring record
 * write them, cut and bent).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "format/group_desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gdesc_group g[16];
	uint32_t nattrs, dropped, end = 0;
	unsigned char *p;
	int n;

	if (!size)
		return 0;
	nattrs = data[0];
	p = malloc(size - 1 ? size - 1 : 1);
	if (!p)
		return 0;
	memcpy(p, data + 1, size - 1);
	n = gdesc_parse(p, size - 1, nattrs, g, 16, &dropped);
	for (int i = 0; i < n; i++) {
		if (g[i].nr_members < 2 || g[i].leader < end ||
		    g[i].leader + g[i].nr_members > nattrs ||
		    strlen(g[i].name) >= GDESC_NAME_MAX)
			abort();
		end = g[i].leader + g[i].nr_members;
	}
	free(p);
	return 0;
}
