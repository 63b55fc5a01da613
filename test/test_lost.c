// SPDX-License-Identifier: MIT
/*
 * Drops and PERF_RECORD_LOST, single- and multi-producer: a full ring drops
 * records and counts them; the first record that fits afterwards is preceded
 * by one PERF_RECORD_LOST (struct perfring_lost_record, size 24, id ==
 * opts.id, lost == the number dropped); a LOST that does not fit together
 * with its record is not written (the drop count grows instead); pausing
 * makes emits return -EAGAIN and count as lost, and resuming delivers the
 * count in a LOST record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 71
#define RING_ID 0x1d2c3b4a59687f00ull

static size_t page;

struct rec64 {
	struct perf_event_header header;
	uint64_t seq;
	uint64_t pad[6];
};

static int emit(struct perfring_ring *r, uint64_t seq)
{
	struct rec64 x;

	memset(&x, 0, sizeof(x));
	x.header.type = T_TYPE;
	x.header.size = sizeof(x);
	x.seq = seq;
	for (int i = 0; i < 6; i++)
		x.pad[i] = seq * 1000 + (uint64_t)i;
	return perfring_ring_emit(r, &x, sizeof(x));
}

static void check_rec(const struct perf_event_header *h, int sz, uint64_t seq)
{
	const struct rec64 *x = (const struct rec64 *)h;

	CHECK(sz == (int)sizeof(*x), "record %llu: size %d",
	      (unsigned long long)seq, sz);
	CHECK(x->header.type == T_TYPE && x->header.size == sizeof(*x),
	      "record %llu: type %u size %u", (unsigned long long)seq,
	      x->header.type, x->header.size);
	CHECK(x->seq == seq, "record seq %llu, want %llu",
	      (unsigned long long)x->seq, (unsigned long long)seq);
	for (int i = 0; i < 6; i++)
		CHECK_EQ(x->pad[i], seq * 1000 + (uint64_t)i);
}

static void check_lost(const struct perf_event_header *h, int sz, uint64_t lost)
{
	const struct perfring_lost_record *l =
		(const struct perfring_lost_record *)h;

	CHECK(sz == PERFRING_LOST_RECORD_SIZE && h->type == PERF_RECORD_LOST,
	      "want a LOST record, got type %u size %d", h->type, sz);
	CHECK_EQ(l->header.size, PERFRING_LOST_RECORD_SIZE);
	CHECK_EQ(sizeof(*l), PERFRING_LOST_RECORD_SIZE);
	CHECK_EQ(l->header.misc, 0);
	CHECK(l->id == RING_ID, "LOST id %#llx, want opts.id %#llx",
	      (unsigned long long)l->id, (unsigned long long)RING_ID);
	CHECK(l->lost == lost, "LOST says %llu records, want %llu",
	      (unsigned long long)l->lost, (unsigned long long)lost);
}

static struct perfring_ring_stats stats(struct perfring_ring *r)
{
	struct perfring_ring_stats st;

	memset(&st, 0xa5, sizeof(st));
	st.sz = sizeof(st);
	CHECK_EQ(perfring_ring_stats(r, &st), 0);
	return st;
}

/* Reads exactly @n records (checking seq from *next) and ends the batch. */
static void read_n(struct perfring_ring *r, uint64_t *next, int n)
{
	const struct perf_event_header *h;

	CHECK(perfring_read_begin(r) >= (int64_t)(n * sizeof(struct rec64)),
	      "fewer than %d records waiting", n);
	for (int i = 0; i < n; i++) {
		int sz = perfring_read_next(r, &h);

		check_rec(h, sz, (*next)++);
	}
	perfring_read_end(r);
}

static void full_then_lost(unsigned int flags, uint64_t start)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 2 * page,
		      .flags = flags, .id = RING_ID, .start = start);
	struct perfring_ring *r;
	struct perfring_ring_stats st;
	const struct perf_event_header *h;
	uint64_t seq = 0, next = 0, n = 2 * page / sizeof(struct rec64);
	const uint64_t N = 5;
	uint64_t lost_pos;
	int sz;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(emit(r, seq++), 0);
	for (uint64_t i = 0; i < N; i++)
		CHECK_EQ(emit(r, 10000 + i), -ENOSPC);
	st = stats(r);
	CHECK_EQ(st.lost_total, N);
	CHECK_EQ(st.lost_pending, N);
	CHECK_EQ(st.head - st.tail, 2 * page);
	CHECK_EQ(st.head, start + 2 * page);

	/* Free one record: 64 bytes do not hold LOST (24) + record (64), so
	 * this emit is dropped too, and no LOST is written. */
	read_n(r, &next, 1);
	CHECK_EQ(emit(r, 20000), -ENOSPC);
	st = stats(r);
	CHECK_EQ(st.lost_total, N + 1);
	CHECK_EQ(st.lost_pending, N + 1);
	CHECK_EQ(st.head, start + 2 * page);

	/* Free ten more: now it fits. */
	read_n(r, &next, 10);
	CHECK_EQ(emit(r, seq), 0);
	st = stats(r);
	CHECK_EQ(st.lost_total, N + 1);
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(st.head, start + 2 * page + PERFRING_LOST_RECORD_SIZE +
				  sizeof(struct rec64));

	/* Old records first, then LOST right in front of the new one. */
	CHECK_EQ(perfring_read_begin(r),
		 (int64_t)((n - 11) * sizeof(struct rec64) +
			   PERFRING_LOST_RECORD_SIZE + sizeof(struct rec64)));
	for (uint64_t i = 11; i < n; i++) {
		sz = perfring_read_next(r, &h);
		check_rec(h, sz, next++);
	}
	lost_pos = start + 2 * page;
	sz = perfring_read_next(r, &h);
	check_lost(h, sz, N + 1);
	CHECK((const unsigned char *)h ==
		      (const unsigned char *)perfring_ring_control(r) + page +
			      (lost_pos & (2 * page - 1)),
	      "LOST not at counter %llu", (unsigned long long)lost_pos);
	{
		const struct perf_event_header *lost_h = h;

		sz = perfring_read_next(r, &h);
		check_rec(h, sz, seq);
		CHECK((const unsigned char *)h ==
			      (const unsigned char *)lost_h +
				      PERFRING_LOST_RECORD_SIZE,
		      "record not immediately after its LOST");
	}
	seq++;
	next = seq;
	CHECK_EQ(perfring_read_next(r, &h), 0);
	perfring_read_end(r);

	/* No second LOST: the count was reported. */
	CHECK_EQ(emit(r, seq), 0);
	CHECK_EQ(perfring_read_begin(r), (int64_t)sizeof(struct rec64));
	sz = perfring_read_next(r, &h);
	check_rec(h, sz, seq++);
	next = seq;
	perfring_read_end(r);

	/* The same through perfring_output_begin(): the reservation grows
	 * by the LOST record and h.data points past it. */
	while (emit(r, seq) == 0)
		seq++;
	CHECK_EQ(emit(r, 30000), -ENOSPC); /* two drops */
	st = stats(r);
	CHECK_EQ(st.lost_pending, 2);
	CHECK_EQ(st.lost_total, N + 3);
	{
		struct perfring_output out;
		uint64_t free_all;

		while (next < seq)
			read_n(r, &next, 1);
		st = stats(r);
		CHECK_EQ(st.head, st.tail);
		free_all = st.head;
		CHECK_EQ(perfring_output_begin(&out, r, sizeof(struct rec64)),
			 0);
		CHECK_EQ(out.start, free_all);
		CHECK_EQ(out.end, free_all + PERFRING_LOST_RECORD_SIZE +
					  sizeof(struct rec64));
		CHECK((unsigned char *)out.data ==
			      (unsigned char *)perfring_ring_control(r) + page +
				      ((free_all + PERFRING_LOST_RECORD_SIZE) &
				       (2 * page - 1)),
		      "h.data does not point past the LOST record");
		{
			struct rec64 x;

			memset(&x, 0, sizeof(x));
			x.header.type = T_TYPE;
			x.header.size = sizeof(x);
			x.seq = seq;
			for (int i = 0; i < 6; i++)
				x.pad[i] = seq * 1000 + (uint64_t)i;
			memcpy(out.data, &x, sizeof(x));
		}
		perfring_output_end(&out);
		CHECK_EQ(perfring_read_begin(r),
			 PERFRING_LOST_RECORD_SIZE + sizeof(struct rec64));
		sz = perfring_read_next(r, &h);
		check_lost(h, sz, 2);
		sz = perfring_read_next(r, &h);
		check_rec(h, sz, seq++);
		perfring_read_end(r);
	}
	st = stats(r);
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(st.lost_total, N + 3);
	perfring_ring_destroy(r);
}

static void paused(unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 4 * page,
		      .flags = flags, .id = RING_ID);
	struct perfring_ring *r;
	struct perfring_ring_stats st;
	const struct perf_event_header *h;
	uint64_t seq = 0;
	const uint64_t M = 7;
	int sz;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	CHECK_EQ(emit(r, seq++), 0);
	CHECK_EQ(perfring_ring_pause(r, true), 0);
	st = stats(r);
	CHECK_EQ(st.paused, 1);
	for (uint64_t i = 0; i < M; i++)
		CHECK_EQ(emit(r, 5000 + i), -EAGAIN);
	{
		struct perfring_output out;

		CHECK_EQ(perfring_output_begin(&out, r, 64), -EAGAIN);
	}
	st = stats(r);
	CHECK_EQ(st.lost_total, M + 1);
	CHECK_EQ(st.lost_pending, M + 1);
	CHECK_EQ(st.head - st.tail, sizeof(struct rec64));
	/* Pausing stops output, not reading. */
	CHECK_EQ(perfring_read_begin(r), (int64_t)sizeof(struct rec64));
	sz = perfring_read_next(r, &h);
	check_rec(h, sz, 0);
	CHECK_EQ(perfring_read_next(r, &h), 0);
	perfring_read_end(r);
	st = stats(r);
	CHECK_EQ(st.paused, 1);

	CHECK_EQ(perfring_ring_pause(r, false), 0);
	st = stats(r);
	CHECK_EQ(st.paused, 0);
	CHECK_EQ(emit(r, seq), 0);
	CHECK_EQ(perfring_read_begin(r),
		 PERFRING_LOST_RECORD_SIZE + sizeof(struct rec64));
	sz = perfring_read_next(r, &h);
	check_lost(h, sz, M + 1);
	sz = perfring_read_next(r, &h);
	check_rec(h, sz, seq++);
	CHECK_EQ(perfring_read_next(r, &h), 0);
	perfring_read_end(r);

	/* Drops while full and while paused add up in one LOST. */
	while (emit(r, seq) == 0)
		seq++;
	CHECK_EQ(emit(r, 6000), -ENOSPC);
	CHECK_EQ(perfring_ring_pause(r, true), 0);
	CHECK_EQ(emit(r, 6001), -EAGAIN);
	CHECK_EQ(emit(r, 6002), -EAGAIN);
	CHECK_EQ(perfring_ring_pause(r, false), 0);
	st = stats(r);
	CHECK_EQ(st.lost_pending, 4); /* the one in the loop, +3 */
	CHECK_EQ(st.lost_total, M + 1 + 4);
	{
		uint64_t next = 2;

		CHECK(perfring_read_begin(r) > 0, "records waiting");
		while ((sz = perfring_read_next(r, &h)) > 0)
			check_rec(h, sz, next++);
		CHECK_EQ(sz, 0);
		perfring_read_end(r);
		CHECK_EQ(next, seq);
	}
	CHECK_EQ(emit(r, seq), 0);
	CHECK_EQ(perfring_read_begin(r),
		 PERFRING_LOST_RECORD_SIZE + sizeof(struct rec64));
	sz = perfring_read_next(r, &h);
	check_lost(h, sz, 4);
	sz = perfring_read_next(r, &h);
	check_rec(h, sz, seq);
	perfring_read_end(r);
	st = stats(r);
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(st.lost_total, M + 1 + 4);
	perfring_ring_destroy(r);
}

/* A producer and a consumer on separate handles: the consumer sees the
 * producer's drops in stats and in the LOST record. */
static void two_handles(unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = page, .flags = flags,
		      .id = RING_ID, .role = PERFRING_ROLE_PRODUCER);
	struct perfring_ring *p, *c;
	struct perfring_ring_stats st;
	const struct perf_event_header *h;
	uint64_t seq = 0, next = 0;
	int sz;

	CHECK_EQ(perfring_ring_create(&o, &p), 0);
	CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(p),
					 perfring_ring_wait_fd(p),
					 PERFRING_ROLE_CONSUMER, &c),
		 0);
	while (emit(p, seq) == 0)
		seq++;
	CHECK_EQ(seq, page / sizeof(struct rec64));
	CHECK_EQ(emit(p, 9), -ENOSPC);
	CHECK_EQ(emit(p, 9), -ENOSPC);
	st = stats(c);
	CHECK_EQ(st.lost_total, 3);
	CHECK_EQ(st.lost_pending, 3);
	read_n(c, &next, (int)seq);
	CHECK_EQ(emit(p, seq), 0);
	CHECK_EQ(perfring_read_begin(c),
		 PERFRING_LOST_RECORD_SIZE + sizeof(struct rec64));
	sz = perfring_read_next(c, &h);
	check_lost(h, sz, 3);
	sz = perfring_read_next(c, &h);
	check_rec(h, sz, seq);
	perfring_read_end(c);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	full_then_lost(0, 0);
	full_then_lost(PERFRING_MODE_MULTI_PRODUCER, 0);
	full_then_lost(0, UINT64_MAX - 2 * page + 1 - 64 * 3);
	full_then_lost(PERFRING_MODE_MULTI_PRODUCER,
		       UINT64_MAX - 2 * page + 1 - 64 * 3);
	paused(0);
	paused(PERFRING_MODE_MULTI_PRODUCER);
	two_handles(0);
	two_handles(PERFRING_MODE_MULTI_PRODUCER);
	return T_EXIT_PASS;
}
