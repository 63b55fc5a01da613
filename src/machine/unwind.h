/* SPDX-License-Identifier: MIT */
/*
 * DWARF unwinding of the user stacks that `--call-graph dwarf` samples
 * carry (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER), the report layer:
 * what perf 6.1's util/unwind-libunwind-local.c does, with libunwind's
 * remote interface.  Registers and stack bytes come from the file and are
 * read only through bounds-checked accessors; code and unwind tables come
 * from the ELF files the thread's MMAP/MMAP2 maps name.
 */
#ifndef PERFRING_MACHINE_UNWIND_H
#define PERFRING_MACHINE_UNWIND_H

#include <stdint.h>
#include "../format/perf_reader.h"
#include "threads.h"

/* perf's PERF_MAX_STACK_DEPTH: at most this many user frames a sample. */
#define UNWIND_MAX_FRAMES 127

/* What `perf record --call-graph dwarf` asks for on x86_64: every user
 * register but the segment ones DS, ES, FS, GS (perf's PERF_REGS_MASK). */
#define UNWIND_X86_64_REGS_MASK 0xff0fffull

/* Whether @s carries what DWARF unwinding needs (as perf: the attr asks
 * for user registers and stack, and the sample has both). */
bool unwind_sample_has_stack(const struct prd_sample *s);

/*
 * Unwinds @s's user stack in @t's address space: fills @ips with up to
 * @max addresses, the interrupted one first, then each caller's return
 * address minus one (perf's convention, so that a frame resolves to the
 * call); returns how many.  0 when @s has no stack to unwind or nothing
 * could be unwound.  The unwinder state lives in @m (created on first use,
 * freed by machine_exit()).
 */
unsigned unwind_user_stack(struct machine *m, struct thread *t,
			   const struct prd_sample *s, uint64_t *ips,
			   unsigned max);

#endif
