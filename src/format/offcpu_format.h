/* SPDX-License-Identifier: MIT */
/*
 * The off-CPU samples of `perfring record --off-cpu` as they lie in a
 * perf.data (format layer: the writer in src/record/offcpu.c, the readers
 * in src/report/): three PERF_TYPE_SOFTWARE/BPF_OUTPUT events known by
 * their names, as perf's --off-cpu names its one.
 *
 *   offcpu-time       a block: period = ns from switch-out to switch-in,
 *                     call chain where the thread blocked (perf's event)
 *   offcpu-preempted  the same for a thread switched out while runnable
 *                     (it waited in the run queue)
 *   offcpu-waker      the thread that woke a block (its pid/tid, cpu and
 *                     call chain), period = the block's time, the block
 *                     itself in PERF_SAMPLE_RAW (struct offcpu_waker_raw)
 *
 * A sample is one block, at the block's end, or (blocks up to the
 * recording's threshold) the sum of a thread's blocks at one stack, at
 * perf's made-up time OFFCPU_SUMMED_TIME and after (perf's
 * OFF_CPU_TIMESTAMP: such samples sort after every other).
 */
#ifndef PERFRING_FORMAT_OFFCPU_FORMAT_H
#define PERFRING_FORMAT_OFFCPU_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OFFCPU_EVENT "offcpu-time"
#define OFFCPU_PREEMPT_EVENT "offcpu-preempted"
#define OFFCPU_WAKER_EVENT "offcpu-waker"

/* The time of summed samples, counted up from here (perf's). */
#define OFFCPU_SUMMED_TIME (~0ull << 32)

static inline bool offcpu_summed_time(uint64_t time)
{
	return time >= OFFCPU_SUMMED_TIME;
}

enum offcpu_kind {
	OFFCPU_NONE,
	OFFCPU_BLOCKED, /* offcpu-time */
	OFFCPU_PREEMPTED, /* offcpu-preempted */
	OFFCPU_WAKER, /* offcpu-waker */
};

/* Which of the three an event of @type/@config named @name is. */
enum offcpu_kind offcpu_kind_of(uint32_t type, uint64_t config,
				const char *name);

/*
 * The PERF_SAMPLE_RAW payload of an offcpu-waker sample (version 1, host
 * byte order): the block it ended, then that block's call chain as
 * recorded (context markers included).  Summed blocks have start and end
 * 0.
 */
struct offcpu_waker_raw {
	uint32_t version; /* 1 */
	uint32_t flags;
	int32_t wakee_pid, wakee_tid;
	uint64_t block_start, block_end; /* switch-out, switch-in */
	uint64_t wake_time; /* sched_waking */
	uint64_t nr; /* then nr u64: the blocked call chain */
};
#define OFFCPU_WAKER_RAW_VERSION 1

/* An offcpu-waker payload, checked: the fields copied into @w, the
 * chain's @nr entries at *@chain (unaligned: read them with memcpy).
 * Returns 0 or -EBADMSG (another version, cut short, sizes that do not
 * add up). */
int offcpu_waker_parse(const void *raw, uint32_t size,
		       struct offcpu_waker_raw *w, const void **chain);

#endif
