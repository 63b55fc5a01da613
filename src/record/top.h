/* SPDX-License-Identifier: MIT */
/*
 * perfring top's table without the kernel (src/record/top.c): records fed
 * by the caller as the rings would hand them over, then printed as a
 * refresh prints them.  The fuzz target drives it; perfring_top() is the
 * same table fed from the rings.
 */
#ifndef PERFRING_RECORD_TOP_H
#define PERFRING_RECORD_TOP_H

#include <stddef.h>
#include <stdio.h>
#include "perfring/tools.h"

struct top;

/*
 * A table for one event: @o's sort, callchain, zero, entries, hide_* and
 * show_nr_samples apply; files are not this machine's (no kallsyms).
 * Returns 0 or -errno.
 */
int top_table_new(const struct perfring_top_opts *o, FILE *out,
		  struct top **tp);
/* One record of @size bytes (8-aligned, its header's size): a sample of
 * perfring top's layout or a side-band record.  Returns 0 or -ENOMEM. */
int top_table_feed(struct top *t, const void *rec, size_t size);
/* Prints the table, then ages it.  Returns 0 or a write error. */
int top_table_print(struct top *t);
void top_table_free(struct top *t);

#endif
