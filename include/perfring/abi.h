/* SPDX-License-Identifier: MIT */
/*
 * perfring wire ABI: what lives in shared memory and in files.
 *
 * A perfring ring is laid out exactly like a kernel perf mmap: one control
 * page that is a struct perf_event_mmap_page (data_head at 1024, data_tail at
 * 1032, data_offset, data_size, aux_*), followed by 2^n data pages holding
 * struct perf_event_header records.  perfring's own control fields live in
 * the kernel struct's __reserved area (which the kernel leaves zero), so a
 * reader that understands kernel buffers understands ours.
 */
#ifndef PERFRING_ABI_H
#define PERFRING_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "PERFRING" read as a little-endian u64. */
#define PERFRING_MAGIC 0x474e495246524550ULL
#define PERFRING_ABI_VERSION 1

/* Byte offset of struct perfring_ext inside the control page. */
#define PERFRING_EXT_OFFSET 128

/* Largest record: perf_event_header.size is a u16 and records are 8-aligned. */
#define PERFRING_RECORD_MAX 65528u

/* Size of the PERF_RECORD_LOST record a ring writes (no sample_id trailer). */
#define PERFRING_LOST_RECORD_SIZE 24u

/* Ring mode flags, stored in perfring_ext.flags. */
#define PERFRING_MODE_OVERWRITE 0x1u /* backward writing, reader never frees */
#define PERFRING_MODE_MULTI_PRODUCER 0x2u /* atomic reservation, commit slots */
#define PERFRING_MODE_MASK 0x3u

/* Wake-up policy, perfring_ext.wakeup_mode. */
#define PERFRING_WAKE_WATERMARK 0u /* wake when >= watermark bytes wait */
#define PERFRING_WAKE_EVENTS 1u /* wake every wakeup_events records */

/*
 * perfring's fields, one cache line per writer so the producer and the
 * consumer never write the same line (except data_head/data_tail, which the
 * kernel ABI puts side by side at 1024).
 */
struct perfring_ext {
	/* Line 1: written once by the creator, read-only afterwards. */
	uint64_t magic; /* PERFRING_MAGIC */
	uint32_t abi_version; /* PERFRING_ABI_VERSION */
	uint32_t ext_size; /* sizeof(struct perfring_ext) */
	uint32_t flags; /* PERFRING_MODE_* */
	uint32_t page_size; /* page size of the creator; must match */
	uint64_t commit_offset; /* file offset of the commit slots (MP), or 0 */
	uint64_t commit_size; /* bytes of commit slots (MP), or 0 */
	uint64_t id; /* id written into PERF_RECORD_LOST */
	uint64_t watermark; /* wake-up watermark in bytes */
	uint32_t wakeup_events; /* wake every N records (WAKE_EVENTS) */
	uint32_t wakeup_mode; /* PERFRING_WAKE_* */

	/* Line 2: written by the consumer, only to pause and resume; every
	 * record reads it, so nothing else lives here. */
	uint32_t paused; /* analogue of PERF_EVENT_IOC_PAUSE_OUTPUT */
	uint32_t consumer_pid;
	uint32_t pad2[14];

	/* Line 3: written by the consumer each time it goes to sleep. */
	uint32_t waiting; /* consumer is (about to be) asleep */
	uint32_t pad3a;
	uint64_t wakeup_at; /* head value the sleeping consumer waits for */
	uint64_t pad3[6];

	/* Line 4: written by the producer(s). */
	uint64_t lost_pending; /* dropped, not yet reported in a LOST record */
	uint64_t lost_total; /* dropped since creation */
	uint64_t write_seq; /* odd while an overwrite record is being written */
	uint64_t wakeups; /* wake-ups the producer(s) sent */
	uint32_t producer_pid;
	uint32_t pad4[7];

	/* Line 5: multi-producer reservation head. */
	uint64_t reserve_head;
	uint64_t next_check; /* MP: head at which the next wake check runs */
	uint64_t events; /* MP, WAKE_EVENTS: records since the last check */
	uint64_t pad5[5];
};

_Static_assert(sizeof(struct perfring_ext) == 320, "perfring_ext is 5 lines");
_Static_assert(PERFRING_EXT_OFFSET + sizeof(struct perfring_ext) <=
		       offsetof(struct perf_event_mmap_page, data_head),
	       "perfring_ext fits in perf_event_mmap_page.__reserved");
_Static_assert(offsetof(struct perf_event_mmap_page, data_head) == 1024,
	       "kernel ABI: data_head at 1024");
_Static_assert(offsetof(struct perf_event_mmap_page, data_tail) == 1032,
	       "kernel ABI: data_tail at 1032");
_Static_assert(offsetof(struct perf_event_mmap_page, aux_size) == 1080,
	       "kernel ABI: aux_size at 1080");

/* perf tool record types (tools/lib/perf/include/perf/event.h), not uapi. */
#define PERFRING_RECORD_FINISHED_ROUND 68

/* The record a ring writes in front of the next record after drops. */
struct perfring_lost_record {
	struct perf_event_header header; /* type PERF_RECORD_LOST, size 24 */
	uint64_t id;
	uint64_t lost;
};

#ifdef __cplusplus
}
#endif
#endif /* PERFRING_ABI_H */
