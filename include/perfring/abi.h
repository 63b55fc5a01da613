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
/*
 * Set by the library in perfring_ext.flags of every multi-producer ring it
 * creates (never passed by callers): producers only commit their slots and
 * the consumer gathers the committed prefix and publishes data_head
 * (docs/design.md, section 3 ("Gathered commits")).  Libraries that predate it refuse the ring
 * (unknown flag), as they would advance data_head themselves.
 */
#define PERFRING_FLAG_MP_GATHER 0x4u

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
	uint32_t pad4a;
	/* perfring_ring_flush() calls: a consumer about to sleep below its
	 * watermark reads on if this moved since it last looked (a flush
	 * that found nobody waiting is not lost).  0 in rings of older
	 * producers, which never move it. */
	uint64_t flush_seq;
	/* Records refused for being larger than the ring takes (each also
	 * counted in lost_pending and lost_total): why they were lost.  0 in
	 * rings of older producers. */
	uint64_t too_large;
	uint32_t pad4[2];

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

/*
 * AUX area (issue 7).  Like a kernel perf mmap, a ring may have an AUX area:
 * aux_offset/aux_size in the control page name a 2^n-page region of the
 * ring file after the data area (and the MP commit slots), with aux_head
 * (writer) and aux_tail (reader) as free-running byte counters.  perfring's
 * AUX state lives in struct perfring_aux_ext, also in __reserved, after
 * struct perfring_ext; a ring without an AUX area leaves it zero.
 */
#define PERFRING_AUX_EXT_OFFSET 448
#define PERFRING_AUX_MAGIC 0x5855415246524550ULL /* "PERFRAUX" */

/* perfring_aux_ext.flags */
#define PERFRING_AUX_OVERWRITE 0x1u /* free-running (snapshot) area */

struct perfring_aux_ext {
	/* Line 1: written by the creator before aux_size is published. */
	uint64_t magic; /* PERFRING_AUX_MAGIC */
	uint32_t flags; /* PERFRING_AUX_* */
	uint32_t pad1a;
	uint64_t watermark; /* wake the reader every this many bytes */
	uint64_t pad1[5];

	/* Line 2: written by the reader. */
	uint64_t enable_seq; /* == disable_seq: the writer may write */
	uint64_t pad2[7];

	/* Line 3: written by the writer. */
	uint64_t disable_seq; /* bumped when a truncation disables it */
	uint64_t aux_wakeup; /* rounddown(aux_head, watermark) last woken */
	uint64_t records; /* PERF_RECORD_AUX records emitted */
	uint64_t truncated; /* ... with PERF_AUX_FLAG_TRUNCATED */
	uint64_t lost_bytes; /* trace the writer could not store */
	uint64_t wakeups; /* AUX wake-ups sent */
	uint64_t aux_records_lost; /* PERF_RECORD_AUX the data ring refused */
	uint64_t pad3;
};

_Static_assert(sizeof(struct perfring_aux_ext) == 192, "aux ext is 3 lines");
_Static_assert(PERFRING_EXT_OFFSET + sizeof(struct perfring_ext) <=
		       PERFRING_AUX_EXT_OFFSET,
	       "aux ext after perfring_ext");
_Static_assert(PERFRING_AUX_EXT_OFFSET + sizeof(struct perfring_aux_ext) <=
		       offsetof(struct perf_event_mmap_page, data_head),
	       "aux ext fits in perf_event_mmap_page.__reserved");

/* PERF_RECORD_AUX flags (uapi, perf_event.h) */
#ifndef PERF_AUX_FLAG_TRUNCATED
#define PERF_AUX_FLAG_TRUNCATED 0x01
#define PERF_AUX_FLAG_OVERWRITE 0x02
#define PERF_AUX_FLAG_PARTIAL 0x04
#define PERF_AUX_FLAG_COLLISION 0x08
#endif

/* PERF_RECORD_AUX as a ring carries it (no sample_id trailer counted). */
struct perfring_aux_record {
	struct perf_event_header header; /* PERF_RECORD_AUX, 32 + trailer */
	uint64_t aux_offset;
	uint64_t aux_size;
	uint64_t flags;
};

/* perf tool record types (tools/lib/perf/include/perf/event.h), not uapi. */
#define PERFRING_RECORD_FINISHED_ROUND 68

/* The record a ring writes in front of the next record after drops. */
struct perfring_lost_record {
	struct perf_event_header header; /* type PERF_RECORD_LOST, size 24 */
	uint64_t id;
	uint64_t lost;
};

/*
 * Application tracing (perfring_emit()): the record an application writes
 * into its rings.  The payload is the event's raw data as it follows the
 * ftrace common header (common_type, flags, preempt_count, common_pid) in
 * the event's format: the integer fields in declaration order at their C
 * alignment, one __data_loc word per string/bytes field (offset counted
 * from the start of the raw data, i.e. including the 8-byte common header),
 * then the string/bytes contents; padded to 8 bytes.  The recorder turns
 * each into a PERF_RECORD_SAMPLE of a tracepoint-like event whose format
 * goes into the perf.data's TRACING_DATA.
 */
#define PERFRING_RECORD_APP_EVENT 0x4001u

struct perfring_app_record {
	struct perf_event_header header; /* PERFRING_RECORD_APP_EVENT */
	uint64_t time; /* CLOCK_MONOTONIC ns, perf's use_clockid timeline */
	uint16_t event_id; /* the event's id (its format's ID:) */
	uint16_t cpu;
	uint32_t tid;
	/* payload */
};

/* Session directory layout (see docs/design.md, application tracing). */
#define PERFRING_SESSION_ENV "PERFRING_SESSION"
#define PERFRING_APP_FIRST_ID 40960u /* event ids are allocated from here */

#ifdef __cplusplus
}
#endif
#endif /* PERFRING_ABI_H */
