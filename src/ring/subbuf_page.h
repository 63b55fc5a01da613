/* SPDX-License-Identifier: MIT */
/*
 * Sub-buffer pages in the kernel ftrace ring-buffer format
 * (kernel/trace/ring_buffer.c: struct buffer_data_page and the event
 * headers), parsed with bounds checks, and the kernel's meta page layout
 * (struct trace_buffer_meta, include/uapi/linux/trace_mmap.h).  Stateless
 * and libc only: subbuf_page.c is built into both libraries.
 *
 * Page: u64 time_stamp, u64 commit (data bytes in bits 0..26, flags
 * RB_MISSED_EVENTS bit 31, RB_MISSED_STORED bit 30, sign-extended by the
 * kernel), then the events.  Event header word: type_len:5, time_delta:27.
 */
#ifndef PERFRING_RING_SUBBUF_PAGE_H
#define PERFRING_RING_SUBBUF_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "perfring.h"
#include "../common/log.h"
#include "barrier.h"

_Static_assert(sizeof(struct perfring_subbuf_meta) == 80,
	       "struct trace_buffer_meta is 80 bytes");

#define SUBBUF_HDR_SIZE 16u
#define SUBBUF_MISSED_EVENTS (1ull << 31)
#define SUBBUF_MISSED_STORED (1ull << 30)
#define SUBBUF_COMMIT_MASK ((1ull << 27) - 1)
#define SUBBUF_TYPE_DATA_MAX 28u
#define SUBBUF_TYPE_PADDING 29u
#define SUBBUF_TYPE_TIME_EXTEND 30u
#define SUBBUF_TYPE_TIME_STAMP 31u
#define SUBBUF_TS_SHIFT 27u
#define SUBBUF_TS_MSB (0xf8ull << 56)
#define SUBBUF_DELTA_MAX ((1u << 27) - 1)
#define SUBBUF_SMALL_DATA_MAX 112u /* RB_MAX_SMALL_DATA */

/* The kernel's struct trace_buffer_meta (uapi trace_mmap.h), 80 bytes. */
struct subbuf_meta {
	uint32_t meta_page_size;
	uint32_t meta_struct_len;
	uint32_t subbuf_size;
	uint32_t nr_subbufs;
	struct {
		uint64_t lost_events;
		uint32_t id;
		uint32_t read;
	} reader;
	uint64_t flags;
	uint64_t entries;
	uint64_t overrun;
	uint64_t read;
	uint64_t reserved1;
	uint64_t reserved2;
};

/* What a page header says. */
struct subbuf_page_info {
	uint64_t time_stamp;
	uint32_t commit; /* bytes of event data after the header */
	bool missed; /* RB_MISSED_EVENTS: events were lost before this page */
	bool missed_stored; /* and their count is stored after the data */
	uint64_t missed_count; /* that count (0 if not stored) */
};

/*
 * Reads the header of the @page_size byte page at @page.  Returns 0, or
 * -EBADMSG when the commit length does not fit the page (or a stored
 * missed count does not).
 */
PR_HIDDEN int subbuf_page_info(const void *page, size_t page_size,
			       struct subbuf_page_info *pi);

/*
 * The same for a page a writer may still be appending to (a ring's reader
 * page): the commit word is loaded atomically.  @page is 8-byte aligned.
 */
PR_HIDDEN int subbuf_page_info_live(const void *page, size_t page_size,
				    struct subbuf_page_info *pi);

/*
 * True when the page can no longer grow: the writer has left it (less than
 * one small event fits after @len bytes of data) or the reader marked it
 * with missed events.
 */
PR_HIDDEN bool subbuf_page_full(const struct subbuf_page_info *pi,
				size_t page_size);

struct subbuf_event {
	uint64_t ts; /* absolute, in the trace clock */
	const void *data; /* payload */
	uint32_t size; /* payload bytes */
	uint32_t offset; /* of the event header within the data area */
};

struct subbuf_iter {
	const uint8_t *data; /* the data area (page + 16) */
	uint32_t len; /* bytes of events */
	uint32_t pos;
	uint64_t ts;
	uint32_t bad_offset; /* where a -EBADMSG was found */
	const char *bad_what;
};

/* Starts a walk over @len bytes of events at @data, first time @ts. */
PR_HIDDEN void subbuf_iter_init(struct subbuf_iter *it, const void *data,
				uint32_t len, uint64_t ts);

/*
 * Next data event: 1 with @ev filled, 0 at the end, -EBADMSG for a
 * malformed event (it->bad_offset and bad_what say where and what).  Time
 * is accumulated as libtraceevent's kbuffer does (padding deltas count).
 */
PR_HIDDEN int subbuf_iter_next(struct subbuf_iter *it, struct subbuf_event *ev);

/* Bytes an event with @payload bytes takes (rb_calculate_event_length). */
PR_HIDDEN uint32_t subbuf_event_length(uint32_t payload);

#endif /* PERFRING_RING_SUBBUF_PAGE_H */
