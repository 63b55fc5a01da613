/* SPDX-License-Identifier: MIT */
/*
 * What the files of the symbol tables share: a table while it is being
 * built, and the functions one file calls in another.
 *
 *   symbols.c      C++ names, building a table, kallsyms, the dsos
 *   symbols_elf.c  tables from ELF files (objects, debug files, the vDSO)
 */
#ifndef PERFRING_MACHINE_SYMBOLS_INTERNAL_H
#define PERFRING_MACHINE_SYMBOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbols.h"

#define DEBUG_DIR "/usr/lib/debug"

/* A symbol while a table is being built. */
struct rawsym {
	uint64_t start, end;
	const char *name;
	uint32_t idx; /* input order: ties keep it */
	uint8_t bind;
	bool dead;
};

struct symvec {
	struct rawsym *v;
	size_t nr, cap;
	/* Names that do not live in an open ELF (kallsyms, PLT): owned. */
	char **owned;
	size_t nr_owned, cap_owned;
	bool raw_names; /* --no-demangle */
};

/* symbols.c */
int symvec_add(struct symvec *sv, uint64_t start, uint64_t size, uint8_t bind,
	       const char *name);

char *symvec_own(struct symvec *sv, const char *s);

char *symvec_keep(struct symvec *sv, char *p);

void symvec_free(struct symvec *sv);

int rawsym_cmp(const void *a, const void *b);

void symvec_fixup(struct symvec *sv);

int symvec_install(struct symvec *sv, struct dso *dso);

/* symbols_elf.c */
void dso_load_file(struct dso *dso);

void dso_load_vdso(struct dso *dso);

#endif
