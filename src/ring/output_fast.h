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
/* A record larger than @r takes (r->max_record): counted as lost, in a
 * LOST record as any drop, and in ext->too_large for why. */
PR_HIDDEN void ring_drop_too_large(struct perfring_ring *r);

/* Room for @size bytes at @head of a sp_fast ring: not paused, no loss
 * waiting to be reported, and space by the cached tail. */
static inline bool ring_sp_room(const struct perfring_ring *r, uint64_t head,
				size_t size)
{
	return !READ_ONCE(r->ext->paused) && !r->p_lost &&
	       head + size - r->p_tail_cache <= r->size;
}

/* Publishes the records up to @end of a sp_fast ring. */
static inline void ring_sp_publish(struct perfring_ring *r, uint64_t end)
{
	/* (B): the record before data_head; pairs with (C) in the reader. */
	smp_store_release(&r->pc->data_head, end);
	r->p_head = end;
	if (unlikely((int64_t)(end - r->p_next_check) >= 0))
		ring_sp_check(r, end);
}

static inline bool ring_fast_reserve(struct perfring_output *h,
				     struct perfring_ring *r, size_t size)
{
	uint64_t head;

	if (unlikely(!h || !r || !r->sp_fast || (size & 7) ||
		     size - 8 > (size_t)r->max_record - 8))
		return false;
	head = r->p_head;
	if (unlikely(!ring_sp_room(r, head, size)))
		return false;
	h->ring = r;
	h->size = (uint32_t)size;
	h->data = r->data + (head & r->mask);
	ring_prefetch_write_span(h->data, size);
	h->start = head;
	h->end = head + size;
	return true;
}

static inline void ring_fast_commit(struct perfring_output *h)
{
	ring_sp_publish(h->ring, h->end);
}

#endif
