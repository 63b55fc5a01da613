// SPDX-License-Identifier: MIT
/*
 * The consumer side, for our rings and for kernel perf mmaps alike.
 *
 * Forward rings: load data_head (acquire), walk and check every header, then
 * store data_tail (release) once per batch.  Overwrite rings: pause, copy the
 * newest-to-oldest range out (validated by the writer's seqcount), walk it
 * the way perf's overwrite_rb_find_range() does, resume.
 *
 * Nothing read from shared memory is trusted: positions are clamped to the
 * batch, which is clamped to the data area, so a hostile producer can make
 * us drop data but never read outside the mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"

/* How long the overwrite reader waits for an in-flight record to finish. */
#define OW_SETTLE_NS (200ull * 1000 * 1000)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Copies [pos, pos+len) of the data area out, in one or two pieces. */
static void copy_out(const struct perfring_ring *r, void *dst, uint64_t pos,
		     uint64_t len)
{
	uint64_t off = pos & r->mask, first = r->size - off;

	if (r->double_mapped || len <= first) {
		memcpy(dst, r->data + off, (size_t)len);
	} else {
		memcpy(dst, r->data + off, (size_t)first);
		memcpy((char *)dst + first, r->data, (size_t)(len - first));
	}
}

static void corrupt(struct perfring_ring *r, uint64_t bytes)
{
	r->corrupt_events++;
	r->corrupt_bytes += bytes;
}

/* A scribbling producer must not flood the log: each cause once per ring
 * (then only counted in the ring's stats). */
static bool first_warning(struct perfring_ring *r, enum ring_warn cause)
{
	if (r->warned & (1u << cause))
		return false;
	r->warned |= 1u << cause;
	return true;
}

/*
 * perf's overwrite_rb_find_range() on a linear copy: records run from the
 * newest one at offset 0; stop at a zero size (memory never written), at a
 * bad header, or before a record that does not fit (the oldest one, partly
 * overwritten).  Returns the bytes of whole records.
 */
static uint64_t ow_find_range(struct perfring_ring *r, const unsigned char *buf,
			      uint64_t len, uint64_t head)
{
	uint64_t evt = 0;

	while (len - evt >= sizeof(struct perf_event_header)) {
		struct perf_event_header hdr;

		memcpy(&hdr, buf + evt, sizeof(hdr));
		if (hdr.size == 0)
			break;
		if (hdr.size & 7) {
			if (first_warning(r, RING_WARN_OW_HEADER))
				pr_warn("ring %s: bad record header at ring offset %llu (overwrite range): size %u (further ones are only counted)",
					ring_name(r),
					(unsigned long long)((head + evt) &
							     r->mask),
					hdr.size);
			r->bad_header_events++;
			corrupt(r, len - evt);
			break;
		}
		if (hdr.size > len - evt)
			break;
		evt += hdr.size;
	}
	return evt;
}

static void ow_resume(struct perfring_ring *r)
{
	if (r->c_paused_by_us) {
		perfring_ring_pause(r, false);
		r->c_paused_by_us = false;
	}
}

static int64_t ow_begin(struct perfring_ring *r)
{
	uint64_t head, len, s1 = 0, s2, t0 = 0;
	bool settled = true;

	if (!r->copy) {
		r->copy = malloc((size_t)r->size);
		if (!r->copy)
			return -ENOMEM;
	}
	if (r->kernel || !READ_ONCE(r->ext->paused)) {
		int err = perfring_ring_pause(r, true);

		if (err)
			return err;
		r->c_paused_by_us = true;
	}
	for (;;) {
		if (!r->kernel) {
			/* Pairs with the writer's release of an even seq. */
			s1 = smp_load_acquire(&r->ext->write_seq);
			if (s1 & 1) {
				if (!t0)
					t0 = mono_ns();
				if (mono_ns() - t0 < OW_SETTLE_NS) {
					sched_yield();
					continue;
				}
				settled = false; /* writer died mid-record */
			}
		}
		/* (C): pairs with (B), the writer's release of data_head. */
		head = smp_load_acquire(&r->pc->data_head);
		len = r->c_tail - head;
		if (len > r->size)
			len = r->size;
		copy_out(r, r->copy, head, len);
		if (r->kernel || !settled)
			break;
		/* Pairs with the writer's smp_wmb() after its odd seq: if
		 * any byte we copied was being written, seq has moved. */
		smp_rmb();
		s2 = READ_ONCE(r->ext->write_seq);
		if (s1 == s2)
			break;
	}
	if (ring_dead(r)) {
		/* Truncated under us while copying: the copy is not to be
		 * trusted (part of it is the guard's zero pages). */
		r->c_paused_by_us = false;
		return ring_dead_error(r);
	}
	if (!settled) {
		/* The unfinished record lies just below head, i.e. at the far
		 * end of a full range: leave the last 64 KiB out. */
		uint64_t keep = r->size > PERFRING_RECORD_MAX + 8 ?
					r->size - PERFRING_RECORD_MAX - 8 :
					0;

		r->unfinished_events++;
		if (first_warning(r, RING_WARN_OW_UNFINISHED))
			pr_warn("ring %s: a producer left a record unfinished; skipping the oldest %llu bytes (further ones are only counted)",
				ring_name(r),
				(unsigned long long)(len > keep ? len - keep :
								  0));
		if (len > keep)
			len = keep;
	}
	len = ow_find_range(r, r->copy, len, head);
	r->c_tail = head; /* next time, read only what is newer */
	if (!len) {
		ow_resume(r);
		return 0;
	}
	r->c_base = r->copy;
	r->c_base_pos = head;
	r->c_copied = true;
	r->c_pos = head;
	r->c_end = head + len;
	r->c_in_batch = true;
	return (int64_t)len;
}

uint64_t ring_mp_committed(const struct perfring_ring *r, uint64_t head,
			   uint64_t tail)
{
	uint64_t pos = (head & 7) || head - tail > r->size ? tail : head,
		 limit = tail + r->size;

	for (;;) {
		/* U: pairs with the committer's release of its slot; the
		 * record's bytes are visible once its slot is. */
		uint64_t e = smp_load_acquire(
			&r->slots[(pos >> 3) & r->nslots_mask]);

		if ((e & 7) || e - pos - 1 >= r->size || limit - e > r->size)
			return pos;
		/* Each step depends on the slot before: ask for the slots
		 * of the data RING_PREFETCH_AHEAD on (the walk is
		 * sequential), or a reader far from the writers waits out a
		 * cross-core miss every 64 data bytes. */
		ring_prefetch_read(&r->slots[((e + RING_PREFETCH_AHEAD) >> 3) &
					     r->nslots_mask]);
		pos = e;
	}
}

/*
 * The consumer's half of a gathered MP ring (docs/design.md, section 4b):
 * walks the commit slots from the last prefix end while each holds the end
 * of a reservation of this lap, and publishes where it got to as data_head
 * for anyone who reads the control page.  Slots are written by producers
 * and so not trusted: an end must be 8-aligned, beyond its start and within
 * one ring of c_tail (stale slots of older laps end before their start);
 * the records themselves are checked by perfring_read_next().  Each step
 * moves forward by 8 at least, inside one ring: at most size / 8 loads.
 */
uint64_t ring_mp_gather(struct perfring_ring *r)
{
	uint64_t pos = ring_mp_committed(r, r->c_gathered, r->c_tail);

	if (pos != r->c_gathered) {
		r->c_gathered = pos;
		/* For readers of the control page only (stats, a process
		 * that finds the ring after a crash): nothing pairs with
		 * it in the protocol. */
		WRITE_ONCE(r->pc->data_head, pos);
	}
	return pos;
}

/*
 * Copied reads: the next chunk of the batch, from c_pos, into rd_buf with
 * pread() (two where it wraps).  The file holds the data area
 * at page_size.  A short read means the file shrank under us: the ring is
 * dead, as the mapping would have said with a SIGBUS.
 */
static bool rd_pread(struct perfring_ring *r, unsigned char *dst, uint64_t len,
		     uint64_t off)
{
	while (len) {
		ssize_t got = pread(r->fd, dst, (size_t)len,
				    (off_t)(r->page_size + off));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		dst += got;
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return true;
}

static int rd_fill(struct perfring_ring *r)
{
	uint64_t len = r->c_limit - r->c_pos, off = r->c_pos & r->mask;
	uint64_t first;

	if (len > r->rd_cap)
		len = r->rd_cap;
	first = off + len > r->size ? r->size - off : len;
	if (!rd_pread(r, r->rd_buf, first, off) ||
	    !rd_pread(r, r->rd_buf + first, len - first, 0)) {
		ring_kill(r, RING_DEAD_SHRUNK);
		r->c_end = r->c_pos;
		return ring_dead_error(r);
	}
	r->c_base = r->rd_buf;
	r->c_base_pos = r->c_pos;
	r->c_end = r->c_pos + len;
	return 0;
}

/* True (and the chunk refilled from c_pos) if the batch goes on past the
 * chunk copied: what looked like the end, or a record cut short, was only
 * the end of the copy. */
static bool rd_more(struct perfring_ring *r)
{
	/* rd_buf: a forward ring (perfring__ring_copy_reads() refuses
	 * overwrite ones, whose batches are copies of their own) */
	return r->rd_buf && r->c_copied && r->c_end < r->c_limit &&
	       rd_fill(r) == 0;
}

int perfring__ring_copy_reads(struct perfring_ring *r, size_t chunk)
{
	unsigned char *b;

	if (!r || r->kernel || r->fd < 0 ||
	    !(r->role & PERFRING_ROLE_CONSUMER) ||
	    (r->mode & PERFRING_MODE_OVERWRITE) || r->c_in_batch ||
	    (chunk && chunk < PERFRING_RECORD_MAX))
		return -EINVAL;
	if (!chunk) {
		free(r->rd_buf);
		r->rd_buf = NULL;
		r->rd_cap = 0;
		return 0;
	}
	chunk = (chunk + 7) & ~(size_t)7;
	b = realloc(r->rd_buf, chunk);
	if (!b)
		return -ENOMEM;
	memset(b, 0, chunk); /* its first touch, now rather than mid-batch */
	r->rd_buf = b;
	r->rd_cap = chunk;
	return 0;
}

int64_t perfring__ring_warm(struct perfring_ring *r, size_t pages)
{
	/* the second view: as far as a record can reach into it */
	uint64_t extra = r && r->double_mapped ?
				 (PERFRING_RECORD_MAX + r->page_size - 1) &
					 ~(uint64_t)(r->page_size - 1) :
				 0;
	uint64_t total, left;
	unsigned char sum = 0;

	if (!r || r->kernel)
		return -EINVAL;
	if (extra > r->size)
		extra = r->size;
	total = r->size + extra;
	while (pages-- && r->warm_next < total && !ring_dead(r)) {
		sum += READ_ONCE(r->data[r->warm_next]);
		r->warm_next += r->page_size;
	}
	__asm__ volatile("" : : "r"(sum)); /* the loads must happen */
	if (ring_dead(r))
		return ring_dead_error(r);
	left = total > r->warm_next ? total - r->warm_next : 0;
	return (int64_t)((left + r->page_size - 1) / r->page_size);
}

PERFRING_API int64_t perfring_read_begin(struct perfring_ring *r)
{
	uint64_t head, avail;

	if (!r || !(r->role & PERFRING_ROLE_CONSUMER))
		return -EINVAL;
	if (ring_dead(r))
		return ring_dead_error(r);
	if (r->c_in_batch)
		return -EBUSY;
	if (r->mode & PERFRING_MODE_OVERWRITE)
		return ow_begin(r);
	/* (C): pairs with (B), the producer's release of data_head; or the
	 * prefix of a gathered MP ring (rows U, V). */
	head = r->mp_gather ? ring_mp_gather(r) :
			      smp_load_acquire(&r->pc->data_head);
	if (ring_dead(r)) /* that load hit a truncated page */
		return ring_dead_error(r);
	r->c_seen_head = head;
	if (unlikely((head | r->c_tail) & 7)) {
		if (first_warning(r, RING_WARN_HEAD_ALIGN))
			pr_warn("ring %s: data_head %llu / data_tail %llu not 8-byte aligned; %s (further ones are only counted)",
				ring_name(r), (unsigned long long)head,
				(unsigned long long)r->c_tail,
				head & 7 ? "reading nothing until it is" :
					   "resynchronising at data_head");
		r->bad_head_events++;
		corrupt(r, 0);
		if (!(head & 7)) {
			r->c_tail = head;
			r->c_hold = false;
			/* (D): pairs with (A); frees the ring. */
			smp_store_release(&r->pc->data_tail, head);
		}
		return -EBADMSG;
	}
	avail = head - r->c_tail;
	if (avail > r->size) {
		if (first_warning(r, RING_WARN_HEAD_RANGE))
			pr_warn("ring %s: data_head %llu is not within one ring (%llu bytes) of data_tail %llu; resynchronising at data_head (further ones are only counted)",
				ring_name(r), (unsigned long long)head,
				(unsigned long long)r->size,
				(unsigned long long)r->c_tail);
		r->bad_head_events++;
		corrupt(r, avail > r->size ? r->size : avail);
		r->c_tail = head;
		r->c_hold = false;
		/* (D): pairs with (A); frees the ring for the producer. */
		smp_store_release(&r->pc->data_tail, head);
		return -EBADMSG;
	}
	if (!avail)
		return 0; /* no batch to end */
	r->c_pos = r->c_tail;
	if (r->rd_buf) {
		int err;

		r->c_limit = head;
		err = rd_fill(r);
		if (err)
			return err;
		r->c_copied = true;
	} else {
		r->c_base = r->data;
		r->c_copied = false;
		r->c_end = head;
	}
	r->c_in_batch = true;
	return (int64_t)avail;
}

/* Everything but a good header in a double-mapped ring: kept out of line. */
static __attribute__((noinline)) int
reader_next_slow(struct perfring_ring *r, const struct perf_event_header **rec)
{
	struct perf_event_header hdr;
	const unsigned char *p;
	uint64_t rem, off;

	/* A truncated ring reads zeros, which land here: say so, even at
	 * the end of the batch (the caller's last record may be damaged). */
	if (ring_dead(r)) {
		r->c_pos = r->c_end;
		return ring_dead_error(r);
	}
	if (!r->c_in_batch)
		return 0;
	rem = r->c_end - r->c_pos;
	if (rem < sizeof(hdr) && rd_more(r))
		rem = r->c_end - r->c_pos;
	if (!rem)
		return ring_dead(r) ? ring_dead_error(r) : 0;
	if (r->c_copied)
		off = r->c_pos - r->c_base_pos;
	else
		off = r->c_pos & r->mask;
	p = r->c_base + off;
	/* One read (the producer may change it under us), in two pieces if a
	 * misaligned tail put it across the end of a kernel ring. */
	if (rem >= sizeof(hdr)) {
		if (r->c_copied || r->double_mapped)
			memcpy(&hdr, p, sizeof(hdr));
		else
			copy_out(r, &hdr, r->c_pos, sizeof(hdr));
		/* A record the chunk cuts: the next chunk starts with it. */
		if (hdr.size > rem && hdr.size <= r->c_limit - r->c_pos &&
		    rd_more(r)) {
			rem = r->c_end - r->c_pos;
			p = r->c_base;
			memcpy(&hdr, p, sizeof(hdr)); /* the copy's, now */
		}
	}
	if (rem < sizeof(hdr) || hdr.size < sizeof(hdr) || (hdr.size & 7) ||
	    hdr.size > rem || (r->c_pos & 7)) {
		if (first_warning(r, RING_WARN_HEADER))
			pr_warn("ring %s: bad record header at ring offset %llu (counter %llu): type %u size %u with %llu bytes left; skipping to data_head (further ones are only counted)",
				ring_name(r),
				(unsigned long long)(r->c_pos & r->mask),
				(unsigned long long)r->c_pos,
				rem >= sizeof(hdr) ? hdr.type : 0,
				rem >= sizeof(hdr) ? hdr.size : 0,
				(unsigned long long)rem);
		r->bad_header_events++;
		corrupt(r, rem);
		r->c_pos = r->c_end;
		return -EBADMSG;
	}
	if (!r->c_copied && !r->double_mapped && off + hdr.size > r->size) {
		/* Kernel ring: the record wraps; hand out a copy. */
		if (!r->bounce) {
			r->bounce = malloc(PERFRING_RECORD_MAX + 8);
			if (!r->bounce)
				return -ENOMEM;
		}
		copy_out(r, r->bounce, r->c_pos, hdr.size);
		p = r->bounce;
	}
	r->c_pos += hdr.size;
	*rec = (const struct perf_event_header *)p;
	return hdr.size;
}

PERFRING_API int perfring_read_next(struct perfring_ring *r,
				    const struct perf_event_header **rec)
{
	uint64_t rem;

	if (unlikely(!r || !rec))
		return -EINVAL;
	rem = r->c_end - r->c_pos; /* 0 outside a batch */
	if (r->c_copied && rem >= sizeof(struct perf_event_header)) {
		/* a private copy: nobody changes it under us */
		const unsigned char *p = r->c_base + (r->c_pos - r->c_base_pos);
		struct perf_event_header hdr;

		memcpy(&hdr, p, sizeof(hdr));
		if (likely(hdr.size >= sizeof(hdr) && !(hdr.size & 7) &&
			   hdr.size <= rem)) {
			r->c_pos += hdr.size;
			*rec = (const struct perf_event_header *)p;
			return hdr.size;
		}
	} else if (likely(rem >= sizeof(struct perf_event_header) &&
			  r->double_mapped && !r->c_copied)) {
		const unsigned char *p = r->data + (r->c_pos & r->mask);
		struct perf_event_header hdr;

		/* One read: the producer may change it under us. */
		memcpy(&hdr, p, sizeof(hdr));
		if (likely(hdr.size >= sizeof(hdr) && !(hdr.size & 7) &&
			   hdr.size <= rem)) {
			ring_prefetch_read_span(p, hdr.size);
			r->c_pos += hdr.size;
			*rec = (const struct perf_event_header *)p;
			return hdr.size;
		}
	}
	return reader_next_slow(r, rec);
}

size_t perfring__read_peek(struct perfring_ring *r, const unsigned char **p,
			   const uint32_t **dead)
{
	uint64_t rem;

	if (!r || !p || !dead || !r->c_in_batch || ring_dead(r) || r->c_pos & 7)
		return 0;
	rem = r->c_end - r->c_pos;
	if (r->c_copied)
		*p = r->c_base + (r->c_pos - r->c_base_pos);
	else if (r->double_mapped)
		*p = r->data + (r->c_pos & r->mask);
	else
		return 0;
	*dead = r->guard ? &r->guard->dead : &r->dead;
	return (size_t)rem;
}

void perfring__read_skip(struct perfring_ring *r, size_t n)
{
	if (r && r->c_in_batch && n <= r->c_end - r->c_pos)
		r->c_pos += n;
}

PERFRING_API int perfring_read_range(struct perfring_ring *r,
				     const void *ptr[2], size_t len[2])
{
	uint64_t rem, off, first;

	if (!r || !ptr || !len)
		return -EINVAL;
	if (ring_dead(r))
		return ring_dead_error(r);
	if (!r->c_in_batch)
		return 0;
	rem = r->c_end - r->c_pos;
	if (!rem && rd_more(r))
		rem = r->c_end - r->c_pos;
	if (!rem)
		return ring_dead(r) ? ring_dead_error(r) : 0;
	off = r->c_copied ? r->c_pos - r->c_base_pos : r->c_pos & r->mask;
	ptr[0] = r->c_base + off;
	len[0] = (size_t)rem;
	r->c_pos = r->c_end;
	if (r->c_copied || r->double_mapped || off + rem <= r->size)
		return 1;
	first = r->size - off;
	len[0] = (size_t)first;
	ptr[1] = r->data;
	len[1] = (size_t)(rem - first);
	return 2;
}

/* Ends the batch; true if data_tail may move to c_tail. */
static bool reader_end_batch(struct perfring_ring *r)
{
	if (!r || !r->c_in_batch)
		return false;
	r->c_in_batch = false;
	r->c_end = r->c_pos; /* records not handed out stay for next time */
	if (ring_dead(r)) {
		r->c_paused_by_us = false; /* nothing to resume, nowhere */
		return false;
	}
	if (r->mode & PERFRING_MODE_OVERWRITE) {
		ow_resume(r);
		return false;
	}
	if (r->c_pos == r->c_tail)
		return false;
	r->c_tail = r->c_pos;
	r->c_hold = true; /* released by the caller, now or later */
	return true;
}

PERFRING_API void perfring_read_end(struct perfring_ring *r)
{
	/* Also frees what an earlier perfring__ring_reader_end_hold() kept. */
	reader_end_batch(r);
	if (r)
		perfring__ring_reader_release(r);
}

void perfring__ring_reader_end_hold(struct perfring_ring *r)
{
	reader_end_batch(r);
}

void perfring__ring_reader_release(struct perfring_ring *r)
{
	if (!r->c_hold)
		return;
	r->c_hold = false;
	if (ring_dead(r) || (r->mode & PERFRING_MODE_OVERWRITE))
		return;
	/* (D): the records are read before the space is freed; pairs with
	 * (A), the producer's acquire of data_tail. */
	smp_store_release(&r->pc->data_tail, r->c_tail);
}

PERFRING_API int perfring_ring_consume(struct perfring_ring *r,
				       perfring_record_fn fn, void *ctx)
{
	const struct perf_event_header *rec;
	int64_t avail;
	int n = 0, sz, ret = 0;

	if (!fn)
		return -EINVAL;
	avail = perfring_read_begin(r);
	if (avail <= 0)
		return (int)avail;
	while ((sz = perfring_read_next(r, &rec)) > 0) {
		ret = fn(rec, (size_t)sz, ctx);
		if (ret < 0)
			break;
		if (n < INT32_MAX)
			n++;
	}
	perfring_read_end(r);
	if (ret < 0)
		return ret;
	return sz < 0 ? sz : n;
}
