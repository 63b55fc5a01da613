// SPDX-License-Identifier: MIT
/*
 * A ring's records into the output (the hot path of application tracing):
 * each record copied out of shared memory once, the copy validated (its
 * event declared, its __data_loc words inside it) and written as a perf
 * sample of its event, LOST records as perf's with the program's claim,
 * damage counted per ring and cause.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../ring/barrier.h"
#include "../ring/private.h"
#include "app_session.h"
#include "app_session_internal.h"
#include "stale.h"

/* ---- output ---- */

int app_out_flush(struct app_session *s)
{
	int err = 0;

	if (s->out_len && !s->err) {
		err = s->cb.write(s->cb.ctx, s->out, s->out_len);
		if (err)
			s->err = err;
	}
	s->out_len = 0;
	return s->err;
}

/* Room for @n more bytes in the output buffer (its fixed APP_OUT_CHUNK
 * bytes: a record is at most PERFRING_RECORD_MAX), flushing it first if
 * needed. */
static unsigned char *app_out_reserve(struct app_session *s, size_t n)
{
	if (!s->out || n > s->out_cap)
		return NULL;
	if (s->out_cap - s->out_len < n && app_out_flush(s))
		return NULL;
	return s->out + s->out_len;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* ---- conversion ---- */

void app_corrupt(struct app_session *s, struct app_ring *r, enum app_warn cause,
		 uint32_t bytes, const char *why)
{
	s->st.corrupt++;
	s->st.corrupt_bytes += bytes;
	if (!app_ring_warned(r, cause)) {
		app_ring_warn(r, cause);
		pr_warn("app: ring %s/%s: %s: record skipped (further ones are only counted)",
			s->dir, r->name, why);
	}
}

static bool locs_ok(const struct app_event_desc *d, const unsigned char *pl,
		    uint32_t plen)
{
	for (uint32_t k = 0; k < d->nr_dyn; k++) {
		uint32_t loc, off, len;

		memcpy(&loc, pl + d->fields[d->dyn[k]].offset, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (off < APP_COMMON_SIZE + d->dyn_data_off ||
		    off - APP_COMMON_SIZE + (uint64_t)len > plen)
			return false;
	}
	return true;
}

/*
 * The sample's fields around an application record copied to @o + 28
 * (its payload of @plen bytes then lies at 52, where the raw data wants
 * it): the sample header, IDENTIFIER, pid (the recorder's) and tid, TIME,
 * CPU, the raw size and the tracepoint common fields, then the padding.
 */
static inline void stamp_sample(unsigned char *o,
				const struct app_event_desc *d,
				const struct app_ring *r,
				const struct perfring_app_record *h,
				uint32_t total, uint32_t raw, uint32_t plen)
{
	struct perf_event_header ph = { .type = PERF_RECORD_SAMPLE,
					.misc = PERF_RECORD_MISC_USER,
					.size = (uint16_t)total };
	uint16_t common_type = (uint16_t)d->id;

	memcpy(o, &ph, 8);
	put64(o + 8, APP_SAMPLE_ID(d->id)); /* IDENTIFIER */
	put32(o + 16, (uint32_t)r->pid); /* TID: pid, tid */
	put32(o + 20, h->tid);
	put64(o + 24, h->time); /* TIME */
	put32(o + 32, h->cpu); /* CPU, res */
	put32(o + 36, 0);
	put32(o + 40, raw); /* RAW size, then the raw data */
	memcpy(o + 44, &common_type, 2);
	o[46] = 0; /* common_flags */
	o[47] = 0; /* common_preempt_count */
	put32(o + 48, h->tid); /* common_pid */
	put32(o + 52 + plen, 0);
}

/*
 * One app record of @size bytes (the size the reader checked) at @rec in
 * shared memory: copied once, straight into the output buffer, where the
 * sample is built around it; only the copy is looked at.  -EFAULT: the
 * ring died during the copy (it may hold zeros), nothing was output.
 */
static int convert_event(struct app_session *s, struct app_ring *r,
			 const void *rec, uint32_t size)
{
	struct perfring_app_record h;
	const struct app_event_desc *d;
	uint32_t plen = size - (uint32_t)sizeof(h), raw, total;
	unsigned char *o, *pl;

	/* raw: common header + payload, padded so the sample stays 8-aligned */
	raw = APP_COMMON_SIZE + plen + 4;
	total = SAMPLE_HDR + raw;
	if (total > PERFRING_RECORD_MAX) {
		app_corrupt(s, r, W_TOO_LARGE, size,
			    "record too large to convert");
		return 0;
	}
	o = app_out_reserve(s, total);
	if (!o)
		return s->err ? s->err : -ENOMEM;
	/* The record's header lands on bytes 28..51 of the sample, which
	 * are written last; the payload at 52 is where the sample wants it. */
	memcpy(o + 28, rec, size);
	if (perfring__ring_dead_cause(r->ring))
		return -EFAULT;
	memcpy(&h, o + 28, sizeof(h));
	pl = o + 52;
	d = app_event_of(s, r, h.event_id);
	if (!d) {
		app_corrupt(s, r, W_NO_DECL, size,
			    "event id no declaration names");
		return 0;
	}
	/* the block walk takes this ring's next records of the event */
	r->walk_id = h.event_id;
	r->walk_desc = d;
	if (plen < d->payload_fixed || !locs_ok(d, pl, plen)) {
		app_corrupt(s, r, W_PAYLOAD, size,
			    "payload does not match the declaration");
		return 0;
	}
	stamp_sample(o, d, r, &h, total, raw, plen);
	s->out_len += total;
	s->st.events++;
	if (!s->st.first_time || h.time < s->st.first_time)
		s->st.first_time = h.time;
	if (h.time > s->st.last_time)
		s->st.last_time = h.time;
	r->last_time = h.time;
	r->last_cpu = h.cpu;
	r->last_tid = h.tid;
	return 0;
}

/*
 * The block walk (docs/design.md section 7): the records at @p, @span
 * bytes of the batch in the producer's memory, taken while they are what
 * a program of ours writes in a run: application events of the event
 * this ring's last one was, whole, each header read once, the record
 * copied into the output and checked there (its id, its payload against
 * the declaration), the sample built around the copy.  The first record
 * it does not take as it is (another event or type, a damaged header, a
 * record cut by the end of the chunk, a full output buffer, a ring that
 * died under the copy) stops it: perfring_read_next() and convert_event()
 * take that one as they take every record.  Returns the bytes walked.
 */
static size_t convert_span(struct app_session *s, struct app_ring *r,
			   const unsigned char *p, size_t span,
			   const uint32_t *dead)
{
	const struct app_event_desc *d = r->walk_desc;
	uint64_t first = s->st.first_time, last = s->st.last_time, events = 0;
	struct perfring_app_record h = { 0 };
	unsigned char *o;
	size_t off = 0;

	if (!d || s->err)
		return 0;
	while (span - off >= sizeof(h)) {
		struct perf_event_header ph;
		uint32_t size, plen, raw, total;

		memcpy(&ph, p + off, sizeof(ph)); /* the one read of it */
		size = ph.size;
		if (ph.type != PERFRING_RECORD_APP_EVENT || size < sizeof(h) ||
		    (size & 7) || size > span - off)
			break;
		plen = size - (uint32_t)sizeof(h);
		raw = APP_COMMON_SIZE + plen + 4;
		total = SAMPLE_HDR + raw;
		if (total > PERFRING_RECORD_MAX ||
		    s->out_cap - s->out_len < total)
			break;
		/* the producer's lines come from the other CPU: ask for them
		 * a few records ahead (a hint; never dereferenced) */
		__builtin_prefetch(p + off + 2048);
		o = s->out + s->out_len;
		memcpy(o + 28, p + off, size);
		/* Pairs with the SIGBUS guard's release of the death word
		 * (ring core, guard.c): set, the copy may be zero pages. */
		if (smp_load_acquire(dead))
			break;
		memcpy(&h, o + 28, sizeof(h));
		if (h.event_id != r->walk_id || plen < d->payload_fixed ||
		    (d->nr_dyn && !locs_ok(d, o + 52, plen)))
			break;
		stamp_sample(o, d, r, &h, total, raw, plen);
		s->out_len += total;
		events++;
		if (!first || h.time < first)
			first = h.time;
		if (h.time > last)
			last = h.time;
		off += size;
	}
	if (events) {
		s->st.events += events;
		s->st.first_time = first;
		s->st.last_time = last;
		r->last_time = h.time;
		r->last_cpu = h.cpu;
		r->last_tid = h.tid;
	}
	return off;
}

/* A program's claim of @lost dropped events, into the file as it is. */
static int put_lost(struct app_session *s, struct app_ring *r, uint64_t lost)
{
	struct perf_event_header ph = { .type = PERF_RECORD_LOST,
					.size = LOST_SIZE };
	unsigned char *o;

	s->st.lost = lost > UINT64_MAX - s->st.lost ? UINT64_MAX :
						      s->st.lost + lost;
	s->st.lost_records++;
	if (lost > APP_LOST_PLAUSIBLE) {
		s->st.lost_implausible++;
		if (!app_ring_warned(r, W_IMPLAUSIBLE)) {
			app_ring_warn(r, W_IMPLAUSIBLE);
			pr_warn("app: ring %s/%s: a LOST record claims %llu dropped events, more than any program could emit: reported as the program's claim (further ones are only counted)",
				s->dir, r->name, (unsigned long long)lost);
		}
	}
	if (!s->lost_id)
		return 0; /* nothing declared: nothing for perf to name */
	o = app_out_reserve(s, LOST_SIZE);
	if (!o)
		return s->err ? s->err : -ENOMEM;
	memcpy(o, &ph, 8);
	put64(o + 8, s->lost_id);
	put64(o + 16, lost);
	put32(o + 24, (uint32_t)r->pid); /* trailer: TID TIME CPU IDENTIFIER */
	put32(o + 28, r->last_tid);
	put64(o + 32, r->last_time);
	put32(o + 40, r->last_cpu);
	put32(o + 44, 0);
	put64(o + 48, s->lost_id);
	s->out_len += LOST_SIZE;
	return 0;
}

static int convert_lost(struct app_session *s, struct app_ring *r,
			const void *rec, uint32_t size)
{
	struct perfring_lost_record l;

	if (size < PERFRING_LOST_RECORD_SIZE) {
		app_corrupt(s, r, W_SHORT_LOST, size, "short PERF_RECORD_LOST");
		return 0;
	}
	memcpy(&l, rec, sizeof(l)); /* the one read */
	if (perfring__ring_dead_cause(r->ring))
		return -EFAULT;
	return l.lost ? put_lost(s, r, l.lost) : 0; /* 0: padding */
}

/* Converts what the ring holds; its space stays taken until
 * app_session_release().  -EFAULT: the ring died. */
/* The producer's count of events too large for its ring (each one also in
 * its LOST records): why some of its loss happened.  A claim of the
 * program's, as its LOST records are; only growth is taken. */
static void note_too_large(struct app_session *s, struct app_ring *r)
{
	struct perfring_ext *ext = perfring__ring_ext(r->ring);
	uint64_t v;

	if (!ext || perfring__ring_dead_cause(r->ring))
		return;
	v = READ_ONCE(ext->too_large);
	if (v <= r->too_large_seen)
		return;
	s->st.too_large += v - r->too_large_seen;
	r->too_large_seen = v;
}

int app_drain_ring(struct app_session *s, struct app_ring *r)
{
	const struct perf_event_header *rec;
	int64_t avail;
	int n, err = 0;

	note_too_large(s, r);
	r->batch_done = 0;
	avail = perfring_read_begin(r->ring);
	if (avail <= 0) {
		if (avail == -EBADMSG)
			s->st.corrupt++; /* the ring core logged it */
		return avail == -EFAULT ? -EFAULT : 0;
	}
	for (;;) {
		struct perf_event_header hdr;
		const unsigned char *span_at;
		const uint32_t *dead;
		size_t span = perfring__read_peek(r->ring, &span_at, &dead);

		if (span) {
			size_t done = convert_span(s, r, span_at, span, dead);

			perfring__read_skip(r->ring, done);
			r->batch_done += done;
		}
		/* the record the walk stopped at, the slow way */
		n = perfring_read_next(r->ring, &rec);
		if (!n)
			break;
		if (n < 0) {
			if (n == -EFAULT) {
				err = -EFAULT;
			} else {
				/* The reader logged where (once per cause);
				 * the rest of the batch is skipped and
				 * counted by the ring. */
				s->st.corrupt++;
			}
			break;
		}
		/* the producer's lines come from the other CPU: ask for
		 * them a few records ahead (a hint; never dereferenced) */
		__builtin_prefetch((const char *)rec + 2048);
		memcpy(&hdr, rec, sizeof(hdr)); /* its type, read once */
		if (hdr.type == PERFRING_RECORD_APP_EVENT &&
		    (uint32_t)n >= sizeof(struct perfring_app_record))
			err = convert_event(s, r, rec, (uint32_t)n);
		else if (hdr.type == PERF_RECORD_LOST)
			err = convert_lost(s, r, rec, (uint32_t)n);
		else if (perfring__ring_dead_cause(r->ring))
			err = -EFAULT;
		else
			app_corrupt(s, r, W_TYPE, (uint32_t)n,
				    "record of a type programs do not write");
		if (err)
			break;
		r->batch_done += (uint64_t)n;
	}
	if (err == -EFAULT) {
		perfring_read_end(r->ring); /* batch_done stays for drop_ring */
		return err;
	}
	if (r->overwrite) {
		perfring_read_end(r->ring);
	} else {
		perfring__ring_reader_end_hold(r->ring);
		r->held += r->batch_done;
	}
	r->batch_done = 0;
	return err;
}

/*
 * The producer is gone.  A shared ring's dead producer may have reserved
 * space it never committed, which stops data_head for good: skip it (a
 * LOST record of 1 each) and read what was committed behind it.  Drops
 * after the last record are still pending (a ring writes the LOST record
 * in front of the next record): report them, taking the count so that a
 * second look never counts it twice.
 */
int app_note_gone(struct app_session *s, struct app_ring *r)
{
	struct perfring_ext *ext = perfring__ring_ext(r->ring);
	uint64_t pending;
	int err = 0;

	if (r->tid == 0 && !r->overwrite) {
		int64_t dead = perfring_ring_skip_dead(r->ring);

		if (dead > 0) {
			s->st.dead_reservations += (uint64_t)dead;
			if (!app_ring_warned(r, W_DEAD_RESERVATION)) {
				char who[128];

				app_ring_warn(r, W_DEAD_RESERVATION);
				app_program_name(r->pid, who, sizeof(who));
				pr_warn("app: ring %s/%s: %s died with %lld reservations it never committed: each counted as 1 lost, the records committed after them are read",
					s->dir, r->name, who, (long long)dead);
			}
			err = app_drain_ring(s, r);
			if (err)
				return err;
		}
	}
	if (perfring__ring_dead_cause(r->ring) || !ext)
		return 0;
	/* Taken from the ring only once the round holding its LOST record
	 * is written (app_session_release): a recorder killed before that
	 * leaves the count for the next one, as it leaves the records. */
	pending = READ_ONCE(ext->lost_pending);
	if (perfring__ring_dead_cause(r->ring))
		return -EFAULT;
	if (!pending)
		return 0;
	r->lost_taken = pending;
	return put_lost(s, r, pending);
}
