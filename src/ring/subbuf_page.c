// SPDX-License-Identifier: MIT
/*
 * Sub-buffer pages in the kernel's ftrace ring-buffer format: the parser
 * shared by the tracefs consumer, the trace.dat reader and the user-space
 * sub-buffer ring (subbuf.c).  Stateless and libc only: both libraries
 * build it in (libperfring for its sub-buffer ring, libperfring-tools for
 * tracefs and trace.dat), each with its own hidden copy.  See
 * subbuf_page.h and docs/design.md ("Sub-buffer rings").
 */
#include <errno.h>
#include <string.h>
#include "../common/load.h"
#include "subbuf_page.h"

static int page_info(const void *page, size_t page_size,
		     struct subbuf_page_info *pi, bool live)
{
	const uint8_t *p = page;
	uint64_t commit;
	size_t room;

	memset(pi, 0, sizeof(*pi));
	if (page_size < SUBBUF_HDR_SIZE + 8)
		return -EBADMSG;
	room = page_size - SUBBUF_HDR_SIZE;
	pi->time_stamp = ld64(p);
	/* Live: pairs with the writer's smp_store_release() of commit. */
	commit = live ? smp_load_acquire(
				(const uint64_t *)(const void *)(p + 8)) :
			ld64(p + 8);
	pi->missed = commit & SUBBUF_MISSED_EVENTS;
	pi->missed_stored = commit & SUBBUF_MISSED_STORED;
	pi->commit = (uint32_t)(commit & SUBBUF_COMMIT_MASK);
	if (pi->commit > room)
		return -EBADMSG;
	if (pi->missed_stored) {
		/* An unsigned long after the data (64-bit kernels). */
		if (room - pi->commit < 8)
			return -EBADMSG;
		pi->missed_count = ld64(p + SUBBUF_HDR_SIZE + pi->commit);
	}
	return 0;
}

int subbuf_page_info(const void *page, size_t page_size,
		     struct subbuf_page_info *pi)
{
	return page_info(page, page_size, pi, false);
}

int subbuf_page_info_live(const void *page, size_t page_size,
			  struct subbuf_page_info *pi)
{
	return page_info(page, page_size, pi, true);
}

bool subbuf_page_full(const struct subbuf_page_info *pi, size_t page_size)
{
	/* rb_reset_tail() pads a left page to its end, or leaves < 8 bytes. */
	return pi->missed || pi->commit + 8 > page_size - SUBBUF_HDR_SIZE;
}

void subbuf_iter_init(struct subbuf_iter *it, const void *data, uint32_t len,
		      uint64_t ts)
{
	it->data = data;
	it->len = len;
	it->pos = 0;
	it->ts = ts;
	it->bad_offset = 0;
	it->bad_what = NULL;
}

static int bad(struct subbuf_iter *it, const char *what)
{
	it->bad_offset = it->pos;
	it->bad_what = what;
	return -EBADMSG;
}

int subbuf_iter_next(struct subbuf_iter *it, struct subbuf_event *ev)
{
	while (it->pos < it->len) {
		uint32_t left = it->len - it->pos, w, type, delta, a0;
		const uint8_t *e = it->data + it->pos;

		if (left < 4)
			return bad(it, "truncated event header");
		w = ld32(e);
		type = w & 31;
		delta = w >> 5;
		if (type == SUBBUF_TYPE_PADDING) {
			if (delta == 0)
				/* rb_null_event: nothing more on this page. */
				return 0;
			if (left < 8)
				return bad(it, "truncated padding");
			a0 = ld32(e + 4);
			if (a0 < 4 || a0 > left - 4)
				return bad(it, "padding length out of page");
			it->ts += delta;
			it->pos += a0 + 4;
			continue;
		}
		if (type == SUBBUF_TYPE_TIME_EXTEND ||
		    type == SUBBUF_TYPE_TIME_STAMP) {
			if (left < 8)
				return bad(it, "truncated time extend");
			a0 = ld32(e + 4);
			if (type == SUBBUF_TYPE_TIME_EXTEND)
				it->ts += ((uint64_t)a0 << SUBBUF_TS_SHIFT) +
					  delta;
			else
				it->ts = (((uint64_t)a0 << SUBBUF_TS_SHIFT) |
					  delta) |
					 (it->ts & SUBBUF_TS_MSB);
			it->pos += 8;
			continue;
		}
		if (type == 0) {
			if (left < 8)
				return bad(it, "truncated large event");
			a0 = ld32(e + 4);
			if (a0 < 4 || a0 > left - 4)
				return bad(it, "event length out of page");
			ev->data = e + 8;
			ev->size = a0 - 4;
			ev->offset = it->pos;
			it->ts += delta;
			ev->ts = it->ts;
			it->pos += a0 + 4;
			return 1;
		}
		if (4 + 4 * type > left)
			return bad(it, "event length out of page");
		ev->data = e + 4;
		ev->size = 4 * type;
		ev->offset = it->pos;
		it->ts += delta;
		ev->ts = it->ts;
		it->pos += 4 + 4 * type;
		return 1;
	}
	return 0;
}

uint32_t subbuf_event_length(uint32_t payload)
{
	uint32_t len = payload ? payload : 1;

	if (len > SUBBUF_SMALL_DATA_MAX)
		len += 4;
	len = (len + 4 + 3) & ~3u;
	/* The kernel never makes a 12-byte event (it would look like a
	 * time extend plus a word): it pads it to 16. */
	if (len == 12)
		len = 16;
	return len;
}
