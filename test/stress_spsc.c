// SPDX-License-Identifier: MIT
/*
 * Stress: one producer thread and one consumer thread on a small
 * single-producer ring that wraps and fills constantly.
 *
 * Every record carries a sequence number (one per emit attempt, so a drop
 * leaves a gap) and a checksum over its header, sequence number and payload;
 * its size (16..512 bytes) is a function of the sequence number.  The
 * consumer checks every record, and that every gap equals exactly the `lost`
 * of the PERF_RECORD_LOST record in front of it.  At the end
 * received + lost == sent, lost_pending is 0 and lost_total agrees.
 *
 * The consumer sleeps in perfring_ring_wait() with a short timeout, so the
 * wake-up path (watermark and wakeup_events) runs too.  The producer and
 * the consumer each take random breaks so the ring alternates between
 * overflowing (LOST records) and draining (the consumer sleeps).
 *
 * Runs about 2 s (STRESS_SECS overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define REC_TYPE 0x4a00u /* our records; PERF_RECORD_LOST comes from the ring */
#define END_TYPE 0x4a01u /* the producer's last record */
#define REC_MIN 16u
#define REC_MAX 512u
#define RING_ID 0x5350u

struct srec {
	struct perf_event_header h;
	uint32_t seq;
	uint32_t csum;
	/* payload: h.size - 16 bytes */
};

static uint32_t rec_size(uint32_t seq)
{
	return REC_MIN +
	       8u * (uint32_t)(mix64(seq) % ((REC_MAX - REC_MIN) / 8 + 1));
}

static void rec_fill(void *buf, uint32_t seq, uint16_t type)
{
	struct srec *r = buf;
	uint32_t size = rec_size(seq);
	unsigned char *p = buf;

	r->h.type = type;
	r->h.misc = 0;
	r->h.size = (uint16_t)size;
	r->seq = seq;
	for (uint32_t off = 16; off < size; off += 8) {
		uint64_t w = mix64(((uint64_t)seq << 16) ^ off);

		memcpy(p + off, &w, 8);
	}
	r->csum = seq_rec_csum(buf, size);
}

/* ---- shared between the threads ---------------------------------------- */

static struct perfring_ring *ring;
static uint64_t budget_ns;
static atomic_uint_fast64_t sent; /* emit attempts, published at the end */
static atomic_uint_fast64_t prod_ok, prod_full;
static atomic_int producer_failed;

static void *producer(void *arg)
{
	uint64_t seed = 0x1234567ull, deadline = now_ns() + budget_ns;
	uint64_t ok = 0, full = 0;
	uint32_t seq = 0;
	_Alignas(8) unsigned char buf[REC_MAX];
	int err;

	(void)arg;
	for (;;) {
		bool last = now_ns() >= deadline;
		uint16_t type = last ? END_TYPE : REC_TYPE;

		/* Half the records go through the zero-copy API. */
		if (seq & 1) {
			struct perfring_output h;

			err = perfring_output_begin(&h, ring, rec_size(seq));
			if (!err) {
				rec_fill(h.data, seq, type);
				perfring_output_end(&h);
			}
		} else {
			rec_fill(buf, seq, type);
			err = perfring_ring_emit(ring, buf, rec_size(seq));
		}
		seq++;
		if (err == -ENOSPC) {
			full++;
			if (full % 64 == 0)
				sched_yield();
			continue; /* a lost record: the next one retries */
		}
		if (err) {
			fprintf(stderr, "producer: emit seq %u: %s\n", seq - 1,
				strerror(-err));
			atomic_store(&producer_failed, 1);
			break;
		}
		ok++;
		if (last)
			break;
		/* Now and then a break, so the consumer catches up and sleeps. */
		uint64_t r = rng_next(&seed);
		if (r % 4096 == 0)
			nap_us(200 + (unsigned int)(r >> 40) % 800);
	}
	perfring_ring_flush(ring);
	atomic_store(&prod_ok, ok);
	atomic_store(&prod_full, full);
	atomic_store(&sent, seq);
	return NULL;
}

struct cstate {
	uint64_t received, lost_sum, lost_records, expected, pending_lost;
	uint64_t batches, wakes, timeouts;
	bool in_front, end_seen;
};

static int check_record(const struct perf_event_header *rec, size_t size,
			void *ctx)
{
	struct cstate *c = ctx;

	CHECK(size == rec->size, "reader size %zu != header size %u", size,
	      rec->size);
	CHECK(size >= 8 && size % 8 == 0, "record size %zu", size);
	if (rec->type == PERF_RECORD_LOST) {
		struct perfring_lost_record l;

		CHECK_EQ(size, PERFRING_LOST_RECORD_SIZE);
		CHECK(!c->in_front, "two LOST records in a row");
		memcpy(&l, rec, sizeof(l));
		CHECK_EQ(l.id, RING_ID);
		CHECK(l.lost > 0, "LOST record with lost == 0");
		c->pending_lost = l.lost;
		c->in_front = true;
		c->lost_sum += l.lost;
		c->lost_records++;
		return 0;
	}
	CHECK(rec->type == REC_TYPE || rec->type == END_TYPE,
	      "unexpected record type %u", rec->type);
	CHECK(!c->end_seen, "record after the END record");
	CHECK(size >= sizeof(struct srec), "record too small: %zu", size);
	const struct srec *s = (const struct srec *)rec;
	uint64_t want = c->expected + (c->in_front ? c->pending_lost : 0);

	CHECK(s->seq == want,
	      "seq %u, expected %llu (gap must equal the LOST in front: %llu)",
	      s->seq, (unsigned long long)want,
	      (unsigned long long)(c->in_front ? c->pending_lost : 0));
	CHECK_EQ(size, rec_size(s->seq));
	CHECK(seq_rec_csum(rec, size) == s->csum, "bad checksum, seq %u",
	      s->seq);
	c->expected = (uint64_t)s->seq + 1;
	c->in_front = false;
	c->pending_lost = 0;
	c->received++;
	if (rec->type == END_TYPE)
		c->end_seen = true;
	return 0;
}

static void *consumer(void *arg)
{
	struct cstate *c = arg;
	uint64_t seed = 0xabcdefull;
	uint64_t hard_deadline = now_ns() + budget_ns + 20ull * 1000000000ull;

	while (!c->end_seen) {
		uint64_t r = rng_next(&seed);
		int w = perfring_ring_wait(ring, 5);

		CHECK(w >= 0, "perfring_ring_wait: %s", strerror(-w));
		if (w)
			c->wakes++;
		else
			c->timeouts++;
		CHECK(now_ns() < hard_deadline,
		      "consumer stuck: no END record");
		if (r % 3 == 0) {
			int n = perfring_ring_consume(ring, check_record, c);

			CHECK(n >= 0, "perfring_ring_consume: %d", n);
		} else {
			const struct perf_event_header *rec;
			int64_t avail = perfring_read_begin(ring);
			uint64_t seen = 0;
			int sz;

			CHECK(avail >= 0, "perfring_read_begin: %lld",
			      (long long)avail);
			CHECK((uint64_t)avail <= perfring_ring_data_size(ring),
			      "avail %lld", (long long)avail);
			while ((sz = perfring_read_next(ring, &rec)) > 0) {
				check_record(rec, (size_t)sz, c);
				seen += (uint64_t)sz;
			}
			CHECK(sz == 0, "perfring_read_next: %d", sz);
			CHECK(seen == (uint64_t)avail,
			      "batch %llu of %lld bytes",
			      (unsigned long long)seen, (long long)avail);
			perfring_read_end(ring);
		}
		c->batches++;
		/* Now and then fall behind, so the ring overflows. */
		if (r % 512 == 1)
			nap_us(500 + (unsigned int)(r >> 40) % 1500);
	}
	return NULL;
}

static void run(const char *name, uint64_t data_size, uint64_t watermark,
		uint32_t wakeup_events, uint64_t start)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = data_size,
		      .watermark = watermark, .wakeup_events = wakeup_events,
		      .id = RING_ID, .start = start);
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct cstate c = { 0 };
	pthread_t pt, ct;
	int err;

	atomic_store(&sent, 0);
	atomic_store(&producer_failed, 0);
	err = perfring_ring_create(&o, &ring);
	CHECK(err == 0, "perfring_ring_create: %s", strerror(-err));
	c.expected = 0;
	CHECK(pthread_create(&ct, NULL, consumer, &c) == 0, "pthread_create");
	CHECK(pthread_create(&pt, NULL, producer, NULL) == 0, "pthread_create");
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	CHECK(!atomic_load(&producer_failed), "producer failed");

	uint64_t n_sent = atomic_load(&sent);
	CHECK(perfring_ring_stats(ring, &st) == 0, "stats");
	printf("%s: sent %llu received %llu lost %llu in %llu LOST records; "
	       "%llu batches, %llu wait()=1, %llu timeouts, %llu wake-ups sent\n",
	       name, (unsigned long long)n_sent, (unsigned long long)c.received,
	       (unsigned long long)c.lost_sum,
	       (unsigned long long)c.lost_records,
	       (unsigned long long)c.batches, (unsigned long long)c.wakes,
	       (unsigned long long)c.timeouts, (unsigned long long)st.wakeups);
	CHECK(c.end_seen, "no END record");
	CHECK_EQ(c.received, atomic_load(&prod_ok));
	CHECK_EQ(c.lost_sum, atomic_load(&prod_full));
	/* The END record went in after every drop: nothing may be pending. */
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(st.lost_total, c.lost_sum);
	CHECK(c.received + c.lost_sum == n_sent,
	      "received %llu + lost %llu != sent %llu",
	      (unsigned long long)c.received, (unsigned long long)c.lost_sum,
	      (unsigned long long)n_sent);
	CHECK_EQ(st.head, st.tail);
	CHECK_EQ(st.corrupt_events, 0);
	CHECK(c.received > 1000, "only %llu records went through",
	      (unsigned long long)c.received);
	perfring_ring_destroy(ring);
	ring = NULL;
}

int main(void)
{
	const char *secs = getenv("STRESS_SECS");
	double total = secs ? atof(secs) : 2.0;

	if (total <= 0)
		total = 2.0;
	/* Watermark wake-ups on a 64 KiB ring; counters start near 2^64 so
	 * they wrap during the run. */
	budget_ns = (uint64_t)(total * 0.55e9);
	run("watermark", 64 * 1024, 0, 0, (uint64_t)0 - 40008);
	/* wakeup_events wake-ups on a one-page ring. */
	budget_ns = (uint64_t)(total * 0.45e9);
	run("wakeup_events", 4096, 0, 16, 0);
	return T_EXIT_PASS;
}
