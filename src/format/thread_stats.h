/* SPDX-License-Identifier: MIT */
/*
 * perf report -T's per-thread counters (PERF_RECORD_READ of a file
 * recorded with -s), over the reader of src/format.
 */
#ifndef PERFRING_FORMAT_THREAD_STATS_H
#define PERFRING_FORMAT_THREAD_STATS_H

#include <stdio.h>

struct prd_file;
struct prd_event;

/* perf report -T: PERF_RECORD_READ values summed per thread and event. */
struct thread_stats;
int thread_stats_new(struct thread_stats **out);
/* Adds a READ record (others are ignored); a malformed one is counted
 * as dropped.  Returns 0 or -ENOMEM. */
int thread_stats_add(struct thread_stats *ts, const struct prd_file *f,
		     const struct prd_event *ev);
/* perf's "#   PID    TID  event ..." table (its heading alone without
 * READs). */
void thread_stats_print(const struct thread_stats *ts, const struct prd_file *f,
			FILE *out);
void thread_stats_free(struct thread_stats *ts);

#endif
