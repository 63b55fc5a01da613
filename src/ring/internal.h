/* SPDX-License-Identifier: MIT */
/* Ring core internals: the handle and helpers shared by src/ring/ files. */
#ifndef PERFRING_RING_INTERNAL_H
#define PERFRING_RING_INTERNAL_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "perfring.h"
#include "../common/log.h"
#include "barrier.h"
#include "private.h"

/*
 * The SIGBUS guard's record of one attached ring's mappings (guard.c).  The
 * signal handler reads it, so it lives in chunks that are never freed and
 * every field is accessed through barrier.h.
 */
#define RING_GUARD_RANGES 6

/*
 * Cache-line prefetch a fixed distance ahead in the data area (which is
 * mapped twice, so ahead of any record is still mapped; a prefetch never
 * faults anyway).  When the writer and the reader run on cores far apart,
 * every record line the writer stores to was last read by the reader and
 * every line the reader loads was last written by the writer: each is a
 * cross-core miss.  The naive ring's tight loops let the CPU overlap those
 * misses; the ring's checks between records leave less room to, so both
 * sides ask for the lines ahead explicitly (docs/design.md, section 4a).
 * PERFRING_NO_PREFETCH builds without, for `make bench`'s A/B.
 */
#ifndef RING_PREFETCH_AHEAD
#define RING_PREFETCH_AHEAD 1024
#endif
#ifndef PERFRING_NO_PREFETCH
#define ring_prefetch_read(p) __builtin_prefetch((p), 0, 3)
#if defined(__x86_64__)
/* PREFETCHW asks for the line in a writable state (one transaction, not a
 * read and then an upgrade); without -mprfchw the builtin would emit a
 * read prefetch.  Its opcode (0F 0D /1) is a no-op on x86-64 CPUs that
 * lack it. */
#define ring_prefetch_write(p) \
	__asm__ volatile("prefetchw %0" ::"m"(*(const char *)(p)))
#else
#define ring_prefetch_write(p) __builtin_prefetch((p), 1, 3)
#endif
#else
#define ring_prefetch_read(p) ((void)(p))
#define ring_prefetch_write(p) ((void)(p))
#endif

/* Every line of a record-sized span RING_PREFETCH_AHEAD past @p: one
 * prefetch for a small record, one a line for a large one. */
static inline void ring_prefetch_read_span(const unsigned char *p, size_t size)
{
	for (size_t off = 0; off < size; off += 64)
		ring_prefetch_read(p + RING_PREFETCH_AHEAD + off);
}

static inline void ring_prefetch_write_span(const unsigned char *p, size_t size)
{
	for (size_t off = 0; off < size; off += 64)
		ring_prefetch_write(p + RING_PREFETCH_AHEAD + off);
}

struct ring_guard_slot {
	uint32_t state; /* GUARD_FREE, GUARD_BUSY, GUARD_LIVE */
	uint32_t dead; /* enum ring_dead_cause */
	uint64_t fault_addr; /* si_addr of the bus error */
	uint64_t start[RING_GUARD_RANGES];
	uint64_t len[RING_GUARD_RANGES]; /* 0: unused */
};

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
	bool mp_gather; /* MP ring whose consumer publishes data_head (4b) */
	bool mp_fence; /* MP producer not covered by the consumer's membarrier */
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
	char *name; /* for messages: path, name in its directory, or NULL */
	uint64_t file_len; /* ring file bytes when mapped (perfring_ring_check) */
	struct ring_guard_slot *guard; /* attached rings: the guard's record */
	uint32_t dead; /* enum ring_dead_cause, rings without a guard slot */
	bool dead_logged;

	/*
	 * Producer private state (single producer), then consumer private
	 * state, each on cache lines of its own: one handle may serve a
	 * writer thread and a reader thread (PERFRING_ROLE_BOTH), and the
	 * writer stores p_head at every record as the reader stores c_pos.
	 * Sharing a line, the two stores made it bounce between the cores
	 * at every record (docs/design.md section 4a); the handle itself is
	 * allocated on a line boundary (ring_alloc).
	 */
	_Alignas(64) bool sp_fast; /* forward, single producer, watermark wake-ups */
	uint32_t max_record; /* largest record (with room for a LOST) */
	uint64_t p_lost; /* drops not yet reported (mirrors lost_pending) */
	uint64_t p_head; /* next write position */
	uint64_t p_tail_cache; /* last data_tail seen */
	uint64_t p_next_check; /* head at which the next wake check runs */
	uint64_t p_seq; /* overwrite: write_seq */
	uint32_t p_events; /* records since the last wake check */

	/* Consumer private state. */
	_Alignas(64) uint64_t
		c_tail; /* forward: consumed up to; overwrite: prev head */
	uint64_t c_pos; /* walk position in the current batch */
	uint64_t c_end; /* end of the current batch */
	unsigned char *c_base; /* data the batch walks (mapping or copy) */
	uint64_t c_base_pos; /* counter value at c_base[0] (copies) */
	bool c_copied; /* batch walks a private copy (overwrite, rd_buf) */
	bool c_paused_by_us;
	bool c_in_batch;
	unsigned char *bounce; /* one wrapped record (kernel rings) */
	unsigned char *copy; /* overwrite snapshot copy, size bytes */
	/* Copied reads (perfring__ring_copy_reads): a forward batch is read
	 * from the file into rd_buf, rd_cap bytes at a time; c_end is the
	 * end of the chunk copied, c_limit the end of the batch. */
	unsigned char *rd_buf;
	size_t rd_cap;
	uint64_t c_limit;
	uint64_t warm_next; /* perfring__ring_warm(): bytes of the data
			     * mapping touched so far */
	uint64_t c_seen_head; /* data_head at the last reader_begin */
	uint64_t c_gathered; /* MP gather: end of the committed prefix found */
	bool c_hold; /* data_tail lags c_tail until perfring__ring_reader_release() */
	uint64_t c_flush_seen; /* ext->flush_seq when wait_prepare last looked */
	uint64_t corrupt_bytes;
	uint64_t corrupt_events;
	/* Reader warnings: each cause is logged once per ring, then counted. */
	uint32_t warned; /* 1 << enum ring_warn */
	uint64_t bad_head_events; /* data_head misaligned or out of range */
	uint64_t bad_header_events; /* record headers that made no sense */
	uint64_t unfinished_events; /* overwrite: a writer died mid-record */
	uint64_t dead_reservations; /* perfring_ring_skip_dead() */
};

enum ring_warn {
	RING_WARN_HEAD_ALIGN,
	RING_WARN_HEAD_RANGE,
	RING_WARN_HEADER,
	RING_WARN_OW_HEADER,
	RING_WARN_OW_UNFINISHED,
	RING_WARN_DEAD_RESERVATION,
	RING_WARN_MEMBARRIER,
};

/* How messages name a ring. */
static inline const char *ring_name(const struct perfring_ring *r)
{
	return r->name ? r->name : r->kernel ? "kernel ring" : "ring";
}

/* True once the ring's file was found truncated under its mapping: its
 * mappings are anonymous zero pages now and every call fails -EFAULT. */
static inline bool ring_dead(const struct perfring_ring *r)
{
	return unlikely(r->dead ||
			(r->guard && smp_load_acquire(&r->guard->dead)));
}

/* enum ring_dead_cause of a dead ring (RING_ALIVE if it is not). */
static inline uint32_t ring_dead_cause(const struct perfring_ring *r)
{
	return r->guard ? smp_load_acquire(&r->guard->dead) : r->dead;
}

/* Logs (once per ring) why the ring is dead; returns -EFAULT.  A caller
 * that says it in its own words sets r->dead_logged first. */
PR_HIDDEN int ring_dead_error(struct perfring_ring *r);

/* Marks the ring dead and puts zero pages over all its mappings. */
PR_HIDDEN void ring_kill(struct perfring_ring *r, enum ring_dead_cause why);

/* Registers the mappings of an attached ring with the SIGBUS guard
 * (whether or not the guard is installed); -ENOMEM. */
PR_HIDDEN int ring_guard_register(struct perfring_ring *r);
/* Adds or removes one more mapping (an AUX area) of a registered ring. */
PR_HIDDEN void ring_guard_add(struct perfring_ring *r, void *addr, size_t len);
PR_HIDDEN void ring_guard_remove(struct perfring_ring *r, void *addr);
/* Before the ring's mappings go away. */
PR_HIDDEN void ring_guard_unregister(struct perfring_ring *r);
/* MP: moves data_head over the committed reservations after it. */
PR_HIDDEN void ring_mp_advance(struct perfring_ring *r);
/* MP gather, consumer: the end of the committed prefix (published as
 * data_head); never more than one ring past c_tail. */
PR_HIDDEN uint64_t ring_mp_gather(struct perfring_ring *r);
/* Its walk from @head, moving nothing (statistics call it alone): the end
 * of the committed prefix, within one ring of @tail. */
PR_HIDDEN uint64_t ring_mp_committed(const struct perfring_ring *r,
				     uint64_t head, uint64_t tail);
/* MP gather, producer: registers this process for the consumer's
 * membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED); false if the kernel refuses. */
PR_HIDDEN bool ring_membarrier_register(void);

PR_HIDDEN void ring_wake_check(struct perfring_ring *r, uint64_t head,
			       bool force);
PR_HIDDEN bool is_pow2(uint64_t x);

#endif /* PERFRING_RING_INTERNAL_H */
