/* SPDX-License-Identifier: MIT */
/*
 * The producer's hot path inline: a single-producer forward ring with
 * watermark wake-ups (r->sp_fast), a valid size, not paused, nothing lost
 * to report and room by the cached tail.  It makes no call; everything
 * else goes through perfring_output_begin()'s slow path.  output.c and the
 * application event emitter share it.
 */
#ifndef PERFRING_RING_OUTPUT_FAST_H
#define PERFRING_RING_OUTPUT_FAST_H

#include "internal.h"

PR_HIDDEN void ring_sp_check(struct perfring_ring *r, uint64_t head);

static inline bool ring_fast_reserve(struct perfring_output *h,
				     struct perfring_ring *r, size_t size)
{
	uint64_t head;

	if (unlikely(!h || !r || !r->sp_fast || (size & 7) ||
		     size - 8 > (size_t)r->max_record - 8))
		return false;
	head = r->p_head;
	if (unlikely(READ_ONCE(r->ext->paused) || r->p_lost ||
		     head + size - r->p_tail_cache > r->size))
		return false;
	h->ring = r;
	h->size = (uint32_t)size;
	h->data = r->data + (head & r->mask);
	h->start = head;
	h->end = head + size;
	return true;
}

static inline void ring_fast_commit(struct perfring_output *h)
{
	struct perfring_ring *r = h->ring;

	/* (B): the record before data_head; pairs with (C) in the reader. */
	smp_store_release(&r->pc->data_head, h->end);
	r->p_head = h->end;
	if (unlikely((int64_t)(h->end - r->p_next_check) >= 0))
		ring_sp_check(r, h->end);
}

#endif
