/* SPDX-License-Identifier: MIT */
/* Ring core internals: the handle and helpers shared by src/ring/ files. */
#ifndef PERFRING_RING_INTERNAL_H
#define PERFRING_RING_INTERNAL_H

#include <stdint.h>
#include <stdbool.h>
#include "perfring.h"
#include "barrier.h"

#define PR_HIDDEN __attribute__((visibility("hidden")))
#define PR_PRINTF(a, b) __attribute__((format(printf, a, b)))

PR_HIDDEN void pr_log(enum perfring_log_level level, const char *fmt, ...)
	PR_PRINTF(2, 3);
#define pr_err(...) pr_log(PERFRING_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) pr_log(PERFRING_LOG_WARN, __VA_ARGS__)
#define pr_info(...) pr_log(PERFRING_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) pr_log(PERFRING_LOG_DEBUG, __VA_ARGS__)

struct perfring_ring {
	/* Shared memory, as mapped in this process. */
	struct perf_event_mmap_page *pc; /* control page */
	struct perfring_ext *ext; /* writable view of our fields, or NULL */
	unsigned char *data; /* data area (twice, back to back, if dmap) */
	uint64_t *slots; /* MP commit slots */
	uint64_t size; /* data bytes: private copy, never re-read */
	uint64_t mask;
	uint64_t nslots_mask;
	uint32_t mode; /* PERFRING_MODE_* */
	uint32_t role;
	bool kernel; /* kernel perf mmap: no double map, no ext */
	bool double_mapped;
	uint32_t wakeup_mode;
	uint32_t wakeup_events;
	uint64_t watermark;
	uint64_t check_interval; /* bytes between producer wake checks */
	uint64_t id;

	/* Mappings and descriptors this handle owns. */
	void *map_base;
	size_t map_len;
	void *ctl_rw; /* extra RW view of page 0 for read-only consumers */
	void *slots_map;
	size_t slots_len;
	int fd;
	int wake_fd; /* FIFO or pipe read+write end */
	int wake_wr; /* write end when it differs (anonymous pipe) */
	int perf_fd; /* kernel rings */
	size_t page_size;

	/* Producer private state (single producer). */
	bool sp_fast; /* forward, single producer, watermark wake-ups */
	uint32_t max_record; /* largest record (with room for a LOST) */
	uint64_t p_lost; /* drops not yet reported (mirrors lost_pending) */
	uint64_t p_head; /* next write position */
	uint64_t p_tail_cache; /* last data_tail seen */
	uint64_t p_next_check; /* head at which the next wake check runs */
	uint64_t p_seq; /* overwrite: write_seq */
	uint32_t p_events; /* records since the last wake check */

	/* Consumer private state. */
	uint64_t c_tail; /* forward: consumed up to; overwrite: prev head */
	uint64_t c_pos; /* walk position in the current batch */
	uint64_t c_end; /* end of the current batch */
	unsigned char *c_base; /* data the batch walks (mapping or copy) */
	uint64_t c_base_pos; /* counter value at c_base[0] (copies) */
	bool c_copied; /* batch walks a private copy (overwrite) */
	bool c_paused_by_us;
	bool c_in_batch;
	unsigned char *bounce; /* one wrapped record (kernel rings) */
	unsigned char *copy; /* overwrite snapshot copy, size bytes */
	uint64_t corrupt_bytes;
	uint64_t corrupt_events;
};

PR_HIDDEN void ring_wake_check(struct perfring_ring *r, uint64_t head,
			       bool force);
PR_HIDDEN bool is_pow2(uint64_t x);

#endif /* PERFRING_RING_INTERNAL_H */
