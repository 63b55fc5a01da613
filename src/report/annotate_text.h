/* SPDX-License-Identifier: MIT */
/* An x86-64 instruction as objdump (binutils 2.40) prints it in perf
 * annotate: capstone's AT&T text reshaped (annotate_text.c). */
#ifndef PERFRING_REPORT_ANNOTATE_TEXT_H
#define PERFRING_REPORT_ANNOTATE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <capstone/capstone.h>
#include "../machine/symbols.h"

/* "1149:   mov    $0x0,%eax", "1170:   jne    114e <hot_loop+0x5>"
 * into @buf (NUL-terminated, cut to @len - 1); @dso names branch and
 * RIP-relative targets.  @insn was decoded by @cs with CS_OPT_DETAIL. */
void annotate_insn_text(csh cs, const cs_insn *insn, struct dso *dso, char *buf,
			size_t len);

/* The length of the instruction at @p that capstone could not decode: a
 * VEX- or EVEX-encoded one (c4/c5/62 prefix, ModRM, SIB, displacement) as x86 encodes
 * it, else 1 byte. */
size_t annotate_unknown_len(const unsigned char *p, size_t len);
/* "16e09e: .byte 0xc4,0xe1,0xfb,0x92,0xc9" */
void annotate_bytes_text(uint64_t addr, const unsigned char *p, size_t n,
			 char *buf, size_t len);

#endif
