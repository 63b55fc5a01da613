// SPDX-License-Identifier: MIT
/*
 * Fuzz target: inlined frames and source lines read from an object's
 * DWARF (src/report/inline.c, srcline.c), the object being whatever a
 * perf.data's MMAP names: a file on disk that can hold anything.
 *
 * The input is written to a memfd and taken as an ELF object: its symbols
 * are loaded, then at a few addresses in each (start, start + 1, middle,
 * last byte) the inlined-frame chain and the source line are looked up,
 * twice (the second from the cache).  Broken DIE trees, ranges, line
 * tables and file indexes reach libdw and the walkers; ASan sees any bad
 * read.  Seeds: fuzz/corpus/inline/ (a small -O2 -g shared object with
 * inlined static functions, DWARF 5).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "machine/inline.h"
#include "machine/srcline.h"
#include "machine/symbols.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SYMS 512u

static void look_up(struct inlines *in, struct srclines *src, struct dso *dso,
		    uint64_t addr)
{
	const char *names[64], *srcs[64];
	const struct symbol *sym = dso_find_symbol(dso, addr);
	char buf[256];
	size_t total = 0;
	unsigned n;

	if (sym) {
		n = inlines_at(in, dso, addr, sym, names, srcs, 64);
		for (unsigned i = 0; i < n; i++)
			total += (names[i] ? strlen(names[i]) : 0) +
				 strlen(srcs[i]);
	}
	total += srcline_text(src, dso, addr, addr, buf, sizeof(buf));
	if (total > SIZE_MAX / 2)
		abort(); /* keeps the reads */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dsos dsos;
	struct srclines *src;
	struct inlines *in;
	struct dso *dso;
	char path[64];
	int fd;

	fd = fuzz_file("fuzz-inline", data, size, path);
	if (fd < 0)
		abort();
	if (dsos_init(&dsos, false))
		abort();
	src = srclines_new();
	in = src ? inlines_new(src) : NULL;
	dso = in ? dsos_findnew(&dsos, path, strlen(path)) : NULL;
	if (!dso)
		abort();
	dso_find_symbol(dso, 0); /* loads the table */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < dso->nr_syms && i < MAX_SYMS; i++) {
			const struct symbol *s = &dso->syms[i];

			look_up(in, src, dso, s->start);
			look_up(in, src, dso, s->start + 1);
			look_up(in, src, dso,
				s->start + (s->end - s->start) / 2);
			if (s->end > s->start)
				look_up(in, src, dso, s->end - 1);
		}
	}
	inlines_free(in);
	srclines_free(src);
	dsos_exit(&dsos);
	close(fd);
	return 0;
}
