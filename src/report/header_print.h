/* SPDX-License-Identifier: MIT */
/*
 * perf.data's header and feature sections as perf 6.1 prints them
 * (perf script --header, perf report --header-only, -I for the full
 * topology).  The report layer, over src/format.
 */
#ifndef PERFRING_REPORT_HEADER_PRINT_H
#define PERFRING_REPORT_HEADER_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prd_file;
struct prd_event;

/*
 * The "# ========" block: the file's mtime (perf's "captured on"), its
 * header, every feature section it announces and the missing ones, then
 * "# ========" and "#".  @full: the topology sections in full (perf's -I)
 * rather than "info available".  A pipe-format input: only the opening
 * lines (its features come as records: header_print_feature_record()).
 * Returns 0 or -errno of @out.
 */
int header_print(const struct prd_file *f, bool full, FILE *out);

/* Pipe format: prints a HEADER_FEATURE record's section as perf does
 * while it reads the stream; other records are ignored. */
void header_print_feature_record(const struct prd_file *f,
				 const struct prd_event *ev, bool full,
				 FILE *out);

/*
 * One feature section's lines (@feat: PRD_FEAT_*, @p/@len: its bytes,
 * NULL when absent or unreadable; perf then prints what its defaults
 * give).  Every length in @p is checked against @len.  For the fuzz
 * target and the two functions above.
 */
void header_print_section(const struct prd_file *f, int feat,
			  const unsigned char *p, size_t len, bool full,
			  FILE *out);

/* perf's name of a clock id ("monotonic", "(not found)"). */
const char *clockid_name(uint32_t id);

#endif
