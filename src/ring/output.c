// SPDX-License-Identifier: MIT
/*
 * The producer side: perf_output_begin()/perf_output_end() for three modes.
 *
 *  - single producer, forward: no atomic read-modify-write; data_tail is
 *    read (acquire) only when the cached copy says the ring is full;
 *  - single producer, backward (overwrite): never reads data_tail; a
 *    seqcount lets the reader detect a record written while it copies;
 *  - multi-producer, forward: CAS reservation; commits may finish in any
 *    order, data_head only moves over a committed prefix (commit slots).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "output_fast.h"

static void write_lost(struct perfring_ring *r, unsigned char *p, uint64_t lost)
{
	struct perfring_lost_record l = {
		.header = { .type = PERF_RECORD_LOST,
			    .size = PERFRING_LOST_RECORD_SIZE },
		.id = r->id,
		.lost = lost,
	};

	memcpy(p, &l, sizeof(l));
}

/* Single producer: the ext producer line is ours, plain stores suffice. */
static void sp_drop(struct perfring_ring *r, bool counted_in_record)
{
	struct perfring_ext *ext = r->ext;

	if (counted_in_record)
		WRITE_ONCE(ext->lost_pending, ++r->p_lost);
	WRITE_ONCE(ext->lost_total, READ_ONCE(ext->lost_total) + 1);
}

static void mp_drop(struct perfring_ring *r, uint64_t n)
{
	atomic_add_relaxed(&r->ext->lost_pending, n);
	atomic_add_relaxed(&r->ext->lost_total, 1);
}

void ring_wake_check(struct perfring_ring *r, uint64_t head, bool force)
{
	struct perfring_ext *ext = r->ext;
	static const uint64_t one = 1;

	/*
	 * Dekker with perfring_ring_wait_prepare(): we stored data_head, the
	 * consumer stored waiting; each then loads the other's word.  This
	 * full barrier pairs with the smp_mb() there, so at least one side
	 * sees the other and a wake-up is never missed.
	 */
	smp_mb();
	if (!READ_ONCE(ext->waiting))
		return;
	if (!force && (int64_t)(head - READ_ONCE(ext->wakeup_at)) < 0)
		return;
	if (!xchg(&ext->waiting, 0u))
		return; /* another producer woke it */
	atomic_add_relaxed(&ext->wakeups, 1);
	/* eventfd takes 8 bytes, a FIFO any; EAGAIN means already signalled. */
	if (write(r->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_debug("ring: wake-up write failed: %s", strerror(errno));
}

PR_HIDDEN void ring_drop_too_large(struct perfring_ring *r)
{
	if (r->mode & PERFRING_MODE_MULTI_PRODUCER) {
		mp_drop(r, 1);
		atomic_add_relaxed(&r->ext->too_large, 1);
		return;
	}
	/* overwrite mode writes no LOST records */
	sp_drop(r, !(r->mode & PERFRING_MODE_OVERWRITE));
	WRITE_ONCE(r->ext->too_large, READ_ONCE(r->ext->too_large) + 1);
}

/* The cold paths stay out of line so the hot ones need no stack frame. */
static __attribute__((noinline, cold)) int sp_paused(struct perfring_ring *r)
{
	sp_drop(r, true);
	return -EAGAIN;
}

/* Cached tail says full: re-read it (A) and drop if it really is. */
static __attribute__((noinline)) bool
sp_refresh_tail(struct perfring_ring *r, uint64_t head, uint64_t need)
{
	/* (A): pairs with (D), the consumer's release of data_tail. */
	r->p_tail_cache = smp_load_acquire(&r->pc->data_tail);
	if (head + need - r->p_tail_cache <= r->size)
		return true;
	sp_drop(r, true);
	ring_wake_check(r, head, true);
	return false;
}

static __attribute__((noinline, cold)) unsigned char *
sp_put_lost(struct perfring_ring *r, unsigned char *p)
{
	write_lost(r, p, r->p_lost);
	r->p_lost = 0;
	WRITE_ONCE(r->ext->lost_pending, 0);
	return p + PERFRING_LOST_RECORD_SIZE;
}

PR_HIDDEN __attribute__((noinline)) void ring_sp_check(struct perfring_ring *r,
						       uint64_t head)
{
	ring_wake_check(r, head, false);
	r->p_next_check = head + r->check_interval;
}

static inline int sp_forward_begin(struct perfring_output *h,
				   struct perfring_ring *r, uint32_t size)
{
	uint64_t need = size, head = r->p_head;
	unsigned char *p;

	if (unlikely(READ_ONCE(r->ext->paused)))
		return sp_paused(r);
	if (unlikely(r->p_lost))
		need += PERFRING_LOST_RECORD_SIZE;
	if (unlikely(head + need - r->p_tail_cache > r->size) &&
	    !sp_refresh_tail(r, head, need))
		return -ENOSPC;
	p = r->data + (head & r->mask);
	if (unlikely(r->p_lost))
		p = sp_put_lost(r, p);
	h->data = p;
	h->start = head;
	h->end = head + need;
	return 0;
}

/* Events-mode wake-ups: every wakeup_events records. */
static void sp_forward_end_events(struct perfring_output *h)
{
	struct perfring_ring *r = h->ring;

	/* (B): the record before data_head; pairs with (C) in the reader. */
	smp_store_release(&r->pc->data_head, h->end);
	r->p_head = h->end;
	if (++r->p_events >= r->wakeup_events) {
		r->p_events = 0;
		ring_wake_check(r, h->end, true);
	}
}

static int sp_backward_begin(struct perfring_output *h, struct perfring_ring *r,
			     uint32_t size)
{
	struct perfring_ext *ext = r->ext;

	if (unlikely(READ_ONCE(ext->paused))) {
		sp_drop(r, false); /* overwrite mode writes no LOST records */
		return -EAGAIN;
	}
	h->seq = (uint32_t)(r->p_seq + 1);
	WRITE_ONCE(ext->write_seq, r->p_seq + 1);
	/* Odd write_seq before the record's bytes; pairs with the reader's
	 * smp_rmb() before it re-reads write_seq (seqcount). */
	smp_wmb();
	h->start = h->end = r->p_head - size;
	h->data = r->data + (h->start & r->mask);
	return 0;
}

static void sp_backward_end(struct perfring_output *h)
{
	struct perfring_ring *r = h->ring;

	/* (B): pairs with (C), the reader's acquire of data_head. */
	smp_store_release(&r->pc->data_head, h->start);
	r->p_head = h->start;
	r->p_seq += 2;
	/* Even again after the record; pairs with the reader's acquire. */
	smp_store_release(&r->ext->write_seq, r->p_seq);
}

static int mp_begin(struct perfring_output *h, struct perfring_ring *r,
		    uint32_t size)
{
	struct perfring_ext *ext = r->ext;
	uint64_t lost = 0, need, old, tail;
	unsigned char *p;

	if (unlikely(READ_ONCE(ext->paused))) {
		mp_drop(r, 1);
		return -EAGAIN;
	}
	if (unlikely(READ_ONCE(ext->lost_pending)))
		lost = xchg(&ext->lost_pending, 0);
	need = size + (lost ? PERFRING_LOST_RECORD_SIZE : 0);
	old = READ_ONCE(ext->reserve_head);
	for (;;) {
		/* (A): pairs with (D), the consumer's release of data_tail. */
		tail = smp_load_acquire(&r->pc->data_tail);
		if (old + need - tail > r->size) {
			uint64_t cur = READ_ONCE(ext->reserve_head);

			/* A stale reservation head can look "behind" the
			 * tail: retry with the fresh one before dropping. */
			if (cur != old) {
				old = cur;
				continue;
			}
			/* Give back the count we took, plus this record. */
			mp_drop(r, lost + 1);
			ring_wake_check(r, READ_ONCE(r->pc->data_head), true);
			return -ENOSPC;
		}
		if (try_cmpxchg(&ext->reserve_head, &old, old + need))
			break;
	}
	p = r->data + (old & r->mask);
	if (lost) {
		write_lost(r, p, lost);
		p += PERFRING_LOST_RECORD_SIZE;
	}
	h->data = p;
	h->start = old;
	h->end = old + need;
	return 0;
}

/*
 * Moves data_head over every committed reservation that follows it.  Any
 * committer may do this; the CAS keeps data_head monotonic when several do.
 */
void ring_mp_advance(struct perfring_ring *r)
{
	__u64 head = READ_ONCE(r->pc->data_head), pos = head,
	      e; /* __u64: the CAS below needs data_head's exact type */

	for (;;) {
		/* Pairs with the committer's smp_store_release of its slot. */
		e = smp_load_acquire(&r->slots[(pos >> 3) & r->nslots_mask]);
		/* A slot of this lap holds an end in (pos, pos + size];
		 * older laps are behind pos, newer ones beyond a lap. */
		if (e - pos - 1 >= r->size || e - head > r->size)
			break;
		pos = e;
	}
	if (pos == head)
		return;
	while ((int64_t)(pos - head) > 0) {
		/* (B): release pairs with (C); the acquire chain from each
		 * committer's slot makes its record visible first. */
		if (atomic_compare_exchange_weak_explicit(
			    PR_ATOMIC(&r->pc->data_head), &head, pos,
			    memory_order_release, memory_order_relaxed))
			break;
	}
}

/*
 * Gathered MP rings (docs/design.md, section 4b): the commit is one store.
 * The consumer finds the committed prefix by reading the slots and
 * publishes data_head itself, so no committer waits for another, none
 * touches data_head's line and none needs a barrier of its own: the store
 * of the slot and the load of waiting after it are the producer's half of
 * a Dekker whose other half, the consumer's waiting store, is followed by
 * membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which puts a full barrier
 * into every registered producer that is running (row V).  A producer the
 * kernel would not register (mp_fence) brings its own barrier.
 */
static void mp_end_gather(struct perfring_output *h)
{
	struct perfring_ring *r = h->ring;
	struct perfring_ext *ext = r->ext;

	/* U: the record before its slot; pairs with the consumer's acquire
	 * of the slot in ring_mp_gather(). */
	smp_store_release(&r->slots[(h->start >> 3) & r->nslots_mask], h->end);
	if (unlikely(r->mp_fence))
		smp_mb(); /* V, without the consumer's membarrier */
	else
		atomic_signal_fence(memory_order_seq_cst); /* compiler only */
	if (unlikely(r->wakeup_mode == PERFRING_WAKE_EVENTS)) {
		if (atomic_add_return_relaxed(&ext->events, 1) %
			    r->wakeup_events ==
		    0)
			ring_wake_check(r, h->end, true);
		return;
	}
	/*
	 * A sleeping consumer waits for the committed prefix to reach
	 * wakeup_at.  Commits may land out of order, so the one that closes
	 * the gap may end below wakeup_at: compare the reservation head,
	 * which is past every record reserved.  At worst a consumer wakes
	 * to a prefix with a hole still in it and sleeps again.
	 */
	if (unlikely(READ_ONCE(ext->waiting)))
		ring_wake_check(r, READ_ONCE(ext->reserve_head), false);
}

static void mp_end(struct perfring_output *h)
{
	struct perfring_ring *r = h->ring;
	struct perfring_ext *ext = r->ext;
	uint64_t head;

	if (likely(r->mp_gather)) {
		mp_end_gather(h);
		return;
	}
	/* Pairs with smp_load_acquire of the slot in mp_advance(). */
	smp_store_release(&r->slots[(h->start >> 3) & r->nslots_mask], h->end);
	/*
	 * Slot store before the loads of data_head and other slots: without
	 * it two committers could each miss the other's slot and leave a
	 * committed record unpublished (store buffering).  Pairs with the
	 * same barrier in every other committer.
	 */
	smp_mb();
	ring_mp_advance(r);
	head = READ_ONCE(r->pc->data_head);
	if (unlikely(r->wakeup_mode == PERFRING_WAKE_EVENTS)) {
		if (atomic_add_return_relaxed(&ext->events, 1) %
			    r->wakeup_events ==
		    0)
			ring_wake_check(r, head, true);
	} else if (unlikely((int64_t)(head - READ_ONCE(ext->next_check)) >=
			    0)) {
		WRITE_ONCE(ext->next_check, head + r->check_interval);
		ring_wake_check(r, head, false);
	}
}

static __attribute__((noinline)) int
output_begin_slow(struct perfring_output *h, struct perfring_ring *r,
		  size_t size)
{
	if (!r || !h || (size & 7) || size < 8 || size > PERFRING_RECORD_MAX ||
	    r->kernel || !(r->role & PERFRING_ROLE_PRODUCER))
		return -EINVAL;
	if (size > r->max_record)
		return -EINVAL;
	if (ring_dead(r))
		return ring_dead_error(r);
	h->ring = r;
	h->size = (uint32_t)size;
	if (!r->mode)
		return sp_forward_begin(h, r, (uint32_t)size);
	if (r->mode & PERFRING_MODE_MULTI_PRODUCER)
		return mp_begin(h, r, (uint32_t)size);
	return sp_backward_begin(h, r, (uint32_t)size);
}

PERFRING_API int perfring_output_begin(struct perfring_output *h,
				       struct perfring_ring *r, size_t size)
{
	if (likely(ring_fast_reserve(h, r, size)))
		return 0;
	return output_begin_slow(h, r, size);
}

static __attribute__((noinline)) void output_end_slow(struct perfring_output *h)
{
	struct perfring_ring *r = h->ring;

	if (!r->mode)
		sp_forward_end_events(h);
	else if (r->mode & PERFRING_MODE_MULTI_PRODUCER)
		mp_end(h);
	else
		sp_backward_end(h);
}

PERFRING_API void perfring_output_end(struct perfring_output *h)
{
	if (likely(h->ring->sp_fast))
		ring_fast_commit(h);
	else
		output_end_slow(h);
}

/* Small records are copied in constant-size pieces the compiler inlines. */
static inline void copy_record(unsigned char *dst, const unsigned char *src,
			       size_t size)
{
	if (size > 128) {
		memcpy(dst, src, size);
		return;
	}
	for (; size >= 32; size -= 32, dst += 32, src += 32)
		memcpy(dst, src, 32);
	for (; size; size -= 8, dst += 8, src += 8)
		memcpy(dst, src, 8);
}

/* Everything but the fast path: kept out of line so that the fast path
 * needs no stack frame. */
static __attribute__((noinline)) int
ring_emit_slow(struct perfring_ring *r, const void *rec, size_t size)
{
	struct perfring_output h;
	int err;

	err = output_begin_slow(&h, r, size);
	if (unlikely(err))
		return err;
	memcpy(h.data, rec, size);
	perfring_output_end(&h);
	return 0;
}

PERFRING_API int perfring_ring_emit(struct perfring_ring *r, const void *rec,
				    size_t size)
{
	if (unlikely(!rec ||
		     ((const struct perf_event_header *)rec)->size != size))
		return -EINVAL;
	/* ring_fast_reserve()'s checks, without a handle to fill */
	if (likely(r && r->sp_fast && !(size & 7) &&
		   size - 8 <= (size_t)r->max_record - 8)) {
		uint64_t head = r->p_head;

		if (likely(ring_sp_room(r, head, size))) {
			unsigned char *dst = r->data + (head & r->mask);

			ring_prefetch_write_span(dst, size);
			copy_record(dst, rec, size);
			ring_sp_publish(r, head + size);
			return 0;
		}
	}
	return ring_emit_slow(r, rec, size);
}

PERFRING_API void perfring_ring_flush(struct perfring_ring *r)
{
	if (!r || r->kernel || !(r->role & PERFRING_ROLE_PRODUCER) ||
	    (r->mode & PERFRING_MODE_OVERWRITE) || ring_dead(r))
		return;
	/*
	 * A consumer between reading a batch and arming again has waiting
	 * at 0: the wake-up below would find nobody, and the consumer would
	 * then sleep on records under its watermark.  The count goes before
	 * ring_wake_check()'s smp_mb() (row F): the consumer stores waiting,
	 * smp_mb(), then loads flush_seq, so one side sees the other.
	 */
	atomic_add_relaxed(&r->ext->flush_seq, 1);
	ring_wake_check(r, READ_ONCE(r->pc->data_head), true);
}

PERFRING_API int64_t perfring_ring_space(struct perfring_ring *r)
{
	uint64_t head, tail, used;

	if (!r || r->kernel || !(r->role & PERFRING_ROLE_PRODUCER))
		return -EINVAL;
	if (ring_dead(r))
		return ring_dead_error(r);
	if (r->mode & PERFRING_MODE_OVERWRITE)
		return (int64_t)r->size;
	/* (A): pairs with (D), the consumer's release of data_tail. */
	tail = smp_load_acquire(&r->pc->data_tail);
	if (r->mode & PERFRING_MODE_MULTI_PRODUCER) {
		head = READ_ONCE(r->ext->reserve_head);
	} else {
		head = r->p_head;
		r->p_tail_cache = tail;
	}
	used = head - tail;
	return used > r->size ? 0 : (int64_t)(r->size - used);
}

/* ---- dead producers (the consumer's side of recovery) ---- */

/*
 * [pos, end) is a reservation nobody will commit: a PERF_RECORD_LOST with
 * lost 1 at its start, LOST records with lost 0 over the rest (each at most
 * PERFRING_RECORD_MAX and never shorter than a LOST record, except a
 * reservation of 8 or 16 bytes, which gets a bare header of that size).
 */
static void fill_dead(struct perfring_ring *r, uint64_t pos, uint64_t end)
{
	uint64_t left = end - pos, lost = 1;

	while (left) {
		uint64_t n = left > PERFRING_RECORD_MAX ? PERFRING_RECORD_MAX :
							  left;
		struct perfring_lost_record l = {
			.header = { .type = PERF_RECORD_LOST },
			.id = r->id,
		};

		if (left - n && left - n < PERFRING_LOST_RECORD_SIZE)
			n -= PERFRING_LOST_RECORD_SIZE;
		l.header.size = (uint16_t)n;
		l.lost = lost;
		/* Double mapped: contiguous even across the end (n <= size). */
		memcpy(r->data + (pos & r->mask), &l,
		       n < sizeof(l) ? (size_t)n : sizeof(l));
		pos += n;
		left -= n;
		lost = 0;
	}
}

PERFRING_API int64_t perfring_ring_skip_dead(struct perfring_ring *r)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 1 };
	uint64_t head, reserved, pos;
	int64_t dead = 0;

	if (!r || r->kernel || r->role != PERFRING_ROLE_CONSUMER ||
	    !(r->mode & PERFRING_MODE_MULTI_PRODUCER) || !r->double_mapped)
		return -EINVAL;
	if (ring_dead(r))
		return ring_dead_error(r);
	/* Any producer's read lock on byte 0 (section 6) means a live one
	 * may still commit. */
	if (fcntl(r->fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	if (fl.l_type != F_UNLCK)
		return -EBUSY;
	/* (C): pairs with (B); what is published is not ours to touch.
	 * A gathered ring's prefix is ours to find (ring_mp_gather()). */
	head = r->mp_gather ? ring_mp_gather(r) :
			      smp_load_acquire(&r->pc->data_head);
	reserved = READ_ONCE(r->ext->reserve_head);
	if (ring_dead(r))
		return ring_dead_error(r);
	if ((head | reserved) & 7 || reserved - head > r->size) {
		pr_warn("ring %s: reservation head %llu is not within one ring of data_head %llu: dead reservations not skipped",
			ring_name(r), (unsigned long long)reserved,
			(unsigned long long)head);
		return -EBADMSG;
	}
	/*
	 * A slot holds the end of a reservation of this lap committed at its
	 * start: pos < end <= reserved, 8-aligned.  Anything else is stale
	 * (older laps end at or before pos) or hostile; either way not a
	 * commit.  Each step moves pos forward by 8 at least, towards
	 * reserved, which is within one ring: at most size / 8 slot loads.
	 */
	pos = head;
	while (pos != reserved) {
		/* G: pairs with the committer's release of its slot. */
		uint64_t e = smp_load_acquire(
				 &r->slots[(pos >> 3) & r->nslots_mask]),
			 next;

		if (!(e & 7) && e - pos - 1 < reserved - pos) {
			pos = e;
			continue;
		}
		/* Dead: up to the next committed reservation, or the end. */
		for (next = pos + 8; next != reserved; next += 8) {
			uint64_t e2 = smp_load_acquire(
				&r->slots[(next >> 3) & r->nslots_mask]);

			if (!(e2 & 7) && e2 - next - 1 < reserved - next)
				break;
		}
		fill_dead(r, pos, next);
		/* G: the LOST records before the commit that covers them;
		 * pairs with the acquire of the slot in ring_mp_advance(). */
		smp_store_release(&r->slots[(pos >> 3) & r->nslots_mask], next);
		dead++;
		pos = next;
	}
	if (!dead)
		return 0;
	/* H: as every committer, before looking at data_head and slots.
	 * A gathered ring's next ring_mp_gather() walks over them. */
	if (!r->mp_gather) {
		smp_mb();
		ring_mp_advance(r);
	}
	r->dead_reservations += (uint64_t)dead;
	pr_debug("ring %s: %lld reservations of dead producers skipped",
		 ring_name(r), (long long)dead);
	return dead;
}
