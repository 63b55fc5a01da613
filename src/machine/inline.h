/* SPDX-License-Identifier: MIT */
/*
 * Inlined functions at a code address (perf's inline_node, which perf
 * 6.1 asks addr2line -i -f for): the chain of DW_TAG_inlined_subroutine
 * scopes holding the address up to its DW_TAG_subprogram, read with
 * libdw through the objects' dwfl modules (srcline.h).  Looked up once
 * per (object, address) and kept.
 */
#ifndef PERFRING_MACHINE_INLINE_H
#define PERFRING_MACHINE_INLINE_H

#include <stdint.h>
#include "srcline.h"
#include "symbols.h"

/* perf's MAX_INLINE_NEST: frames kept for one address. */
#define INLINE_MAX_NEST 1024u

struct inlines;

/* @src: whose dwfl modules are read (not owned, outlives the result). */
struct inlines *inlines_new(struct srclines *src);
void inlines_free(struct inlines *in);

/*
 * The frames perf's append_inlines() puts in a callchain for @addr (an
 * address as the object's symbols use it, dso_addr()) in @dso, whose
 * symbol is @sym: innermost first, the function itself last.  names[i]
 * is the name perf prints with " (inlined)", or NULL for a frame that is
 * @sym itself (printed as a plain frame); srcs[i] is the frame's source
 * line as addr2line gives it ("file.c:12": the innermost frame's from the
 * line table, each other's the call site of the frame inside it).  Returns how many (at most
 * @max); 0: perf prints the plain frame alone (no DWARF, no function
 * there, no memory).  The names stay valid until the next call.
 */
unsigned inlines_at(struct inlines *in, struct dso *dso, uint64_t addr,
		    const struct symbol *sym, const char **names,
		    const char **srcs, unsigned max);

#endif
