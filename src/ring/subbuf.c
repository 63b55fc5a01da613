// SPDX-License-Identifier: MIT
/*
 * The user-space sub-buffer ring: pages in the kernel's ftrace format
 * (parsed by subbuf_page.c) with a meta page like the kernel's.  See
 * subbuf.h and docs/design.md ("Sub-buffer rings").  libc only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "subbuf.h"

/* ---- user-space sub-buffer ring ------------------------------------------ */

/*
 * Layout: a meta page (struct subbuf_meta, padded to meta_page_size =
 * max(page size, subbuf_size)) then nr_subbufs sub-buffers, sub-buffer i
 * at meta_page_size + i * subbuf_size, exactly as the kernel maps a tracefs
 * buffer.  One page (initially id 0) is the reader's; the other n =
 * nr_subbufs - 1 sit in the ring's slots.  Positions count pages written:
 * head is the oldest page not yet taken by the reader, tail the writer's
 * page; slot = position % n.
 *
 * The writer (one per ring, as the kernel's per-CPU writer) appends events
 * to its page without any lock and publishes each with a release store of
 * the page's commit field.  Moving to the next page (once per page) and the
 * reader's GET_READER swap are serialized by a short spin lock, the role
 * of the kernel's cpu_buffer->lock: the swap exchanges the head page with
 * the reader's page, and the overwrite writer advances head over the
 * oldest page, so the two never both own a page.
 */
struct subbuf_ring {
	uint8_t *map;
	size_t map_len;
	struct subbuf_meta *meta;
	uint8_t *data;
	uint32_t subbuf_size, nr, n, dsize; /* dsize: data bytes per page */
	unsigned int flags;
	int lock;

	/* Under the lock. */
	uint32_t *slots;
	uint64_t head, tail;
	uint32_t cur_page; /* the writer's page */
	uint32_t reader_id;
	uint32_t reader_read;
	uint64_t lost_pending; /* overwritten since the last swap */
	uint64_t overrun;
	uint64_t nread; /* events consumed */

	/* Writer's own (real_end read by the reader after the commit). */
	uint32_t *real_end;
	uint32_t *page_entries;
	uint32_t w_page, w_pos;
	bool w_closed;
	uint64_t w_last_ts;
	uint64_t entries; /* written; READ_ONCE by the reader */
	uint64_t dropped;
};

static void ring_lock(struct subbuf_ring *r)
{
	int spins = 0;

	/* xchg is a full barrier: pairs with the release in ring_unlock. */
	while (xchg(&r->lock, 1)) {
		while (READ_ONCE(r->lock))
			if (++spins % 128 == 0)
				sched_yield();
	}
}

static void ring_unlock(struct subbuf_ring *r)
{
	/* Pairs with the xchg in ring_lock. */
	smp_store_release(&r->lock, 0);
}

static uint8_t *page_of(const struct subbuf_ring *r, uint32_t id)
{
	return r->data + (size_t)id * r->subbuf_size;
}

static uint64_t *commit_of(const struct subbuf_ring *r, uint32_t id)
{
	return (uint64_t *)(void *)(page_of(r, id) + 8);
}

static void page_reset(struct subbuf_ring *r, uint32_t id, uint64_t ts)
{
	memcpy(page_of(r, id), &ts, 8);
	WRITE_ONCE(*commit_of(r, id), 0);
}

int subbuf_ring_create(uint32_t subbuf_size, uint32_t nr_subbufs,
		       unsigned int flags, struct subbuf_ring **out)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), mps;
	struct subbuf_ring *r;
	void *p;

	*out = NULL;
	if (subbuf_size < 4096 || subbuf_size > (1u << 20) ||
	    (subbuf_size & (subbuf_size - 1)) || nr_subbufs < 3 ||
	    nr_subbufs > (1u << 20) || (flags & ~SUBBUF_RING_OVERWRITE))
		return -EINVAL;
	mps = subbuf_size > psz ? subbuf_size : psz;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->map_len = mps + (size_t)subbuf_size * nr_subbufs;
	p = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r->slots = calloc(nr_subbufs, sizeof(*r->slots));
	r->real_end = calloc(nr_subbufs, sizeof(*r->real_end));
	r->page_entries = calloc(nr_subbufs, sizeof(*r->page_entries));
	if (p == MAP_FAILED || !r->slots || !r->real_end || !r->page_entries) {
		if (p != MAP_FAILED)
			munmap(p, r->map_len);
		free(r->slots);
		free(r->real_end);
		free(r->page_entries);
		free(r);
		return -ENOMEM;
	}
	r->map = p;
	r->meta = p;
	r->data = r->map + mps;
	r->subbuf_size = subbuf_size;
	r->nr = nr_subbufs;
	r->n = nr_subbufs - 1;
	r->dsize = subbuf_size - SUBBUF_HDR_SIZE;
	r->flags = flags;
	r->meta->meta_page_size = (uint32_t)mps;
	r->meta->meta_struct_len = sizeof(struct subbuf_meta);
	r->meta->subbuf_size = subbuf_size;
	r->meta->nr_subbufs = nr_subbufs;
	/* As the kernel numbers them at first map: 0 is the reader's page,
	 * 1..n the ring from the head. */
	for (uint32_t i = 0; i < r->n; i++)
		r->slots[i] = i + 1;
	r->reader_id = 0;
	r->cur_page = r->slots[0];
	r->w_page = r->cur_page;
	*out = r;
	return 0;
}

void subbuf_ring_destroy(struct subbuf_ring *r)
{
	if (!r)
		return;
	munmap(r->map, r->map_len);
	free(r->slots);
	free(r->real_end);
	free(r->page_entries);
	free(r);
}

const struct subbuf_meta *subbuf_ring_meta(const struct subbuf_ring *r)
{
	return r->meta;
}

const void *subbuf_ring_page(const struct subbuf_ring *r, uint32_t id)
{
	return id < r->nr ? page_of(r, id) : NULL;
}

uint64_t subbuf_ring_dropped(const struct subbuf_ring *r)
{
	return READ_ONCE(r->dropped);
}

/* Writer: ends its page with padding as rb_reset_tail() does. */
static void close_page(struct subbuf_ring *r)
{
	uint8_t *d = page_of(r, r->w_page) + SUBBUF_HDR_SIZE;
	uint32_t left = r->dsize - r->w_pos, w;
	uint64_t commit = r->w_pos;

	WRITE_ONCE(r->real_end[r->w_page], r->w_pos);
	if (left >= 8) {
		uint32_t a0 = left - 4;

		w = SUBBUF_TYPE_PADDING |
		    (1u << 5); /* delta 1, as the kernel */
		memcpy(d + r->w_pos, &w, 4);
		memcpy(d + r->w_pos + 4, &a0, 4);
		commit = r->dsize;
	} else if (left >= 4) {
		w = SUBBUF_TYPE_PADDING; /* null event: nothing follows */
		memcpy(d + r->w_pos, &w, 4);
	}
	r->w_closed = true;
	/* Pairs with smp_load_acquire() in subbuf_ring_get_reader(). */
	smp_store_release(commit_of(r, r->w_page), commit);
}

/* Writer: moves to the next page.  -ENOSPC when the ring is full and
 * overwriting is off. */
static int next_page(struct subbuf_ring *r, uint64_t ts)
{
	uint64_t next;
	uint32_t id;

	ring_lock(r);
	next = r->tail + 1;
	if (next - r->head >= r->n) {
		uint32_t victim;

		if (!(r->flags & SUBBUF_RING_OVERWRITE)) {
			ring_unlock(r);
			atomic_add_relaxed(&r->dropped, 1);
			return -ENOSPC;
		}
		/* Overwrite the oldest page: its events are lost. */
		victim = r->slots[r->head % r->n];
		r->overrun += r->page_entries[victim];
		r->lost_pending += r->page_entries[victim];
		r->head++;
	}
	r->tail = next;
	id = r->slots[next % r->n];
	page_reset(r, id, ts);
	r->page_entries[id] = 0;
	r->real_end[id] = r->dsize;
	r->cur_page = id;
	ring_unlock(r);
	r->w_page = id;
	r->w_pos = 0;
	r->w_closed = false;
	return 0;
}

int subbuf_ring_write(struct subbuf_ring *r, uint64_t ts, const void *data,
		      uint32_t size)
{
	uint32_t len, need, w, delta = 0;
	uint64_t d = 0;
	bool extend = false;
	uint8_t *p;

	if (!size || size > r->dsize - 16)
		return -E2BIG;
	len = subbuf_event_length(size);
	if (r->w_pos && ts > r->w_last_ts) {
		d = ts - r->w_last_ts;
		extend = d > SUBBUF_DELTA_MAX;
	}
	need = len + (extend ? 8 : 0);
	if (r->w_closed || r->w_pos + need > r->dsize) {
		int err;

		if (!r->w_closed)
			close_page(r);
		err = next_page(r, ts);
		if (err)
			return err;
		extend = false;
		d = 0;
		need = len;
	}
	p = page_of(r, r->w_page) + SUBBUF_HDR_SIZE + r->w_pos;
	if (r->w_pos == 0)
		memcpy(page_of(r, r->w_page), &ts, 8); /* first event */
	if (extend) {
		uint32_t a0 = (uint32_t)(d >> SUBBUF_TS_SHIFT);

		w = SUBBUF_TYPE_TIME_EXTEND | (uint32_t)(d & SUBBUF_DELTA_MAX)
						      << 5;
		memcpy(p, &w, 4);
		memcpy(p + 4, &a0, 4);
		p += 8;
	} else {
		delta = (uint32_t)d;
	}
	if (size <= SUBBUF_SMALL_DATA_MAX) {
		w = ((len - 4) / 4) | delta << 5;
		memcpy(p, &w, 4);
		memcpy(p + 4, data, size);
		memset(p + 4 + size, 0, len - 4 - size);
	} else {
		uint32_t a0 = len - 4;

		w = delta << 5;
		memcpy(p, &w, 4);
		memcpy(p + 4, &a0, 4);
		memcpy(p + 8, data, size);
		memset(p + 8 + size, 0, len - 8 - size);
	}
	r->w_pos += need;
	r->w_last_ts = ts;
	r->page_entries[r->w_page]++;
	atomic_add_relaxed(&r->entries, 1);
	/* Publishes the event.  Pairs with smp_load_acquire() in
	 * subbuf_ring_get_reader(). */
	smp_store_release(commit_of(r, r->w_page), (uint64_t)r->w_pos);
	return 0;
}

/* Events in [from, to) of page @id's data. */
static uint64_t count_events(struct subbuf_ring *r, uint32_t id, uint32_t from,
			     uint32_t to)
{
	struct subbuf_iter it;
	struct subbuf_event ev;
	uint64_t n = 0;

	subbuf_iter_init(&it, page_of(r, id) + SUBBUF_HDR_SIZE, to, 0);
	while (subbuf_iter_next(&it, &ev) > 0)
		if (ev.offset >= from)
			n++;
	return n;
}

/* The reader marks a page taken after an overwrite (as the kernel's
 * ring_buffer_map_get_reader does): commit cut to real_end, the count
 * stored after the data when it fits. */
static void mark_missed(struct subbuf_ring *r, uint32_t id)
{
	uint32_t end = READ_ONCE(r->real_end[id]);
	uint64_t commit = end | SUBBUF_MISSED_EVENTS;

	if (r->dsize - end >= 8) {
		memcpy(page_of(r, id) + SUBBUF_HDR_SIZE + end, &r->lost_pending,
		       8);
		commit |= SUBBUF_MISSED_STORED;
	}
	WRITE_ONCE(*commit_of(r, id), commit);
	r->lost_pending = 0;
}

int subbuf_ring_get_reader(struct subbuf_ring *r)
{
	struct subbuf_meta *m = r->meta;
	uint64_t c;
	uint32_t id;

	ring_lock(r);
	/* Pairs with smp_store_release() in subbuf_ring_write()/close_page. */
	c = smp_load_acquire(commit_of(r, r->reader_id)) & SUBBUF_COMMIT_MASK;
	if (r->reader_read < c) {
		/* The writer is (or was) on our page: consume what it
		 * added, no swap. */
		r->nread += count_events(r, r->reader_id, r->reader_read,
					 (uint32_t)c);
		r->reader_read = (uint32_t)c;
		goto out;
	}
	if (r->cur_page == r->reader_id || r->head > r->tail)
		goto out;
	id = r->slots[r->head % r->n];
	if (r->head == r->tail &&
	    !(smp_load_acquire(commit_of(r, id)) & SUBBUF_COMMIT_MASK))
		goto out; /* only the writer's page, and it is empty */
	/* Swap: the head page becomes the reader's, the reader's old page
	 * takes its slot (behind the head: written again after a lap). */
	page_reset(r, r->reader_id, 0);
	r->slots[r->head % r->n] = r->reader_id;
	r->head++;
	r->reader_id = id;
	r->reader_read = 0;
	if (r->lost_pending && id != r->cur_page)
		mark_missed(r, id);
	c = smp_load_acquire(commit_of(r, id)) & SUBBUF_COMMIT_MASK;
	r->nread += count_events(r, id, 0, (uint32_t)c);
	r->reader_read = (uint32_t)c;
out:
	WRITE_ONCE(m->reader.id, r->reader_id);
	WRITE_ONCE(m->reader.read, r->reader_read);
	WRITE_ONCE(m->reader.lost_events, 0);
	WRITE_ONCE(m->entries, READ_ONCE(r->entries));
	WRITE_ONCE(m->overrun, r->overrun);
	WRITE_ONCE(m->read, r->nread);
	ring_unlock(r);
	return 0;
}

/* ---- public wrappers ------------------------------------------------------ */

int perfring_subbuf_create(uint32_t subbuf_size, uint32_t nr_subbufs,
			   bool overwrite, struct perfring_subbuf **out)
{
	return subbuf_ring_create(subbuf_size, nr_subbufs,
				  overwrite ? SUBBUF_RING_OVERWRITE : 0,
				  (struct subbuf_ring **)out);
}

void perfring_subbuf_destroy(struct perfring_subbuf *r)
{
	subbuf_ring_destroy((struct subbuf_ring *)r);
}

int perfring_subbuf_write(struct perfring_subbuf *r, uint64_t ts,
			  const void *data, uint32_t size)
{
	return subbuf_ring_write((struct subbuf_ring *)r, ts, data, size);
}

int perfring_subbuf_message(struct perfring_subbuf *r, uint64_t ts, int pid,
			    const char *msg)
{
	uint8_t buf[SUBBUF_SMALL_DATA_MAX * 4];
	size_t len = strlen(msg);
	uint16_t type = PERFRING_SUBBUF_MESSAGE_ID;

	if (len > sizeof(buf) - 9)
		len = sizeof(buf) - 9;
	/* The common header of every trace event, then the text. */
	memcpy(buf, &type, 2);
	buf[2] = 0; /* flags */
	buf[3] = 0; /* preempt count */
	memcpy(buf + 4, &pid, 4);
	memcpy(buf + 8, msg, len);
	buf[8 + len] = 0;
	return subbuf_ring_write((struct subbuf_ring *)r, ts, buf,
				 (uint32_t)(9 + len));
}

int perfring_subbuf_get_reader(struct perfring_subbuf *r)
{
	return subbuf_ring_get_reader((struct subbuf_ring *)r);
}

const struct perfring_subbuf_meta *
perfring_subbuf_meta(const struct perfring_subbuf *r)
{
	return (const void *)subbuf_ring_meta((const struct subbuf_ring *)r);
}

const void *perfring_subbuf_page(const struct perfring_subbuf *r, uint32_t id)
{
	return subbuf_ring_page((const struct subbuf_ring *)r, id);
}

uint64_t perfring_subbuf_dropped(const struct perfring_subbuf *r)
{
	return subbuf_ring_dropped((const struct subbuf_ring *)r);
}
