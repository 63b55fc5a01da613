/* SPDX-License-Identifier: MIT */
/*
 * Sample filters of perf script and perf report (over the machine):
 * --pid, --tid, --comm (the sample's thread), --cpu, --time start,end,
 * -S/--symbols and --dsos (where the sample's ip resolves), with perf
 * 6.1's meanings (thread__is_filtered(), machine__resolve(),
 * perf_time__skip_sample()).  Parsed once; the checks allocate nothing.
 */
#ifndef PERFRING_MACHINE_FILTER_H
#define PERFRING_MACHINE_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "threads.h"

struct sample_filter {
	int32_t *pids, *tids;
	uint32_t nr_pids, nr_tids;
	char **comms, **syms, **dsos; /* NULL-terminated */
	uint64_t *cpus; /* bitmap of allowed CPUs, NULL: every CPU */
	uint32_t cpu_words;
	uint64_t time_start, time_end; /* 0: open */
	bool any_thread; /* pids, tids or comms set */
};

/* Each setter takes perf's text (NULL or "" leaves the filter off) and
 * returns 0 or -EINVAL (logged) / -ENOMEM. */
int filter_set_pids(struct sample_filter *f, const char *list);
int filter_set_tids(struct sample_filter *f, const char *list);
int filter_set_comms(struct sample_filter *f, const char *list);
int filter_set_cpus(struct sample_filter *f, const char *list);
int filter_set_syms(struct sample_filter *f, const char *list);
int filter_set_dsos(struct sample_filter *f, const char *list);
/* "start,end" in seconds ("123.456789", either side empty). */
int filter_set_time(struct sample_filter *f, const char *range);
/* The same, or perf's percent forms of one range over the file's sample
 * times [@first, @last]: "10%/2" (the second tenth), "10%-20%", "50%"
 * (the first half). */
int filter_set_time_pct(struct sample_filter *f, const char *range,
			uint64_t first, uint64_t last);
void filter_free(struct sample_filter *f);

/* true: the sample is kept. */
bool filter_thread(const struct sample_filter *f, const struct thread *t);
static inline bool filter_cpu(const struct sample_filter *f, uint32_t cpu)
{
	return !f->cpus || (cpu / 64 < f->cpu_words &&
			    (f->cpus[cpu / 64] >> (cpu % 64) & 1));
}
static inline bool filter_time(const struct sample_filter *f, uint64_t t)
{
	return !((f->time_start && t < f->time_start) ||
		 (f->time_end && t > f->time_end));
}
/* @al resolved from @ip (with symbols when f->syms is set). */
bool filter_location(const struct sample_filter *f, const struct addr_loc *al,
		     uint64_t ip);

#endif
