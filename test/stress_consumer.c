// SPDX-License-Identifier: MIT
/*
 * Stress: one consumer object read by one thread (perfring_consumer_poll)
 * over five rings: four single-producer rings with a producer thread each
 * and one multi-producer ring shared by two threads.
 *
 * Records carry (producer id in the type, per-producer sequence number,
 * checksum) and vary in size, so they wrap.  The callback checks each
 * record's checksum (on the consumer's copy), that it came from the ring
 * its producer writes, and the sequence: on a single-producer ring the gap
 * before a record must equal the LOST count in front of it; on the shared
 * ring each producer's sequence strictly increases.  Every producer ends
 * with a record it retries until it fits, then flushes.  At the end, per
 * ring: received + lost (+ lost_pending) == sent attempts, exactly.
 *
 * Two runs: a flood (most records dropped, exact LOST accounting) and a
 * ping-pong in which every record needs a wake-up (a lost one stalls a
 * poll until its long timeout).  About 1 s of producing each (STRESS_SECS
 * overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define REC_TYPE 0x4e00u /* + producer id */
#define END_FLAG 0x80000000u /* in seq: the producer's last record */
#define SP_RINGS 4
#define NRINGS (SP_RINGS + 1)
#define MP_PRODUCERS 2
#define NPROD (SP_RINGS + MP_PRODUCERS)
#define REC_MIN 16u
#define REC_MAX 512u

struct srec {
	struct perf_event_header h;
	uint32_t seq;
	uint32_t csum;
};

static uint32_t rec_size(uint32_t id, uint32_t seq)
{
	return REC_MIN + 8u * (uint32_t)(mix64(seq ^ ((uint64_t)id << 40)) %
					 ((REC_MAX - REC_MIN) / 8 + 1));
}

/* Header, seq, then payload words derived from (id, seq). */
static uint32_t rec_csum(const void *rec, size_t size)
{
	const unsigned char *p = rec;
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	for (size_t off = 0; off < size; off += 8) {
		memcpy(&w, p + off, 8);
		if (off == 8)
			w &= 0xffffffffull; /* the csum itself */
		h = mix64(h ^ w ^ off);
	}
	return (uint32_t)(h ^ (h >> 32));
}

static void fill(unsigned char *buf, uint32_t id, uint32_t seq, uint32_t size)
{
	struct srec *r = (struct srec *)buf;

	r->h.type = REC_TYPE + id;
	r->h.misc = 0;
	r->h.size = (uint16_t)size;
	r->seq = seq;
	for (uint32_t off = 16; off < size; off += 8) {
		uint64_t w = mix64(((uint64_t)id << 48) ^
				   ((uint64_t)seq << 16) ^ off);

		memcpy(buf + off, &w, 8);
	}
	r->csum = rec_csum(buf, size);
}

/* ---- producers ------------------------------------------------------------ */

static struct perfring_ring *rings[NRINGS];
static uint64_t budget_ns;
static bool ping_pong; /* one record at a time, each read before the next */

struct producer {
	uint32_t id;
	struct perfring_ring *ring;
	uint64_t sent; /* attempts, read after join */
	uint64_t full;
	uint64_t end_retries;
	/* ping-pong: records of this producer the callback has seen */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t seen;
};

static struct producer prods[NPROD];

/* Waits (on the consumer's signal, no polling) until the callback has
 * seen @n records of @p. */
static void wait_seen(struct producer *p, uint64_t n)
{
	pthread_mutex_lock(&p->lock);
	while (p->seen < n)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	unsigned char buf[REC_MAX];
	uint64_t end = now_ns() + budget_ns;
	uint32_t seq = 0, size;

	while (now_ns() < end) {
		for (int k = 0; k < 64; k++, seq++) {
			size = rec_size(p->id, seq);
			fill(buf, p->id, seq, size);
			if (perfring_ring_emit(p->ring, buf, size))
				p->full++;
			else if (ping_pong)
				wait_seen(p, (uint64_t)seq + 1 - p->full);
		}
		if (p->full && !(seq & 1023))
			sched_yield(); /* let the consumer catch up */
	}
	/* The last record carries END_FLAG and must land, so that every
	 * drop before it is reported by a LOST in front of a record: wait
	 * for room (for it and a LOST) instead of dropping it.  Only the
	 * shared ring's other producer can take that room first. */
	size = rec_size(p->id, seq | END_FLAG);
	fill(buf, p->id, seq | END_FLAG, size);
	for (;;) {
		if (perfring_ring_space(p->ring) <
		    (int64_t)(size + PERFRING_LOST_RECORD_SIZE)) {
			sched_yield();
			continue;
		}
		if (perfring_ring_emit(p->ring, buf, size) == 0)
			break;
		p->end_retries++; /* counted as a drop by the ring */
	}
	p->sent = (uint64_t)seq + 1 + p->end_retries;
	perfring_ring_flush(p->ring);
	return NULL;
}

/* ---- the consumer ---------------------------------------------------------- */

struct ring_check {
	int ring;
	uint64_t received, lost, lost_records;
	uint64_t pending_lost; /* LOST seen since the last record (SP) */
	int64_t next[NPROD]; /* expected seq (SP) / last seq (MP) */
	int ends;
};

static struct ring_check checks[NRINGS];
static int ends_seen;

static int on_record(const struct perf_event_header *rec, size_t size,
		     void *ctx)
{
	struct ring_check *c = ctx;
	struct srec r;
	uint32_t id, seq;

	if (rec->type == PERF_RECORD_LOST) {
		const struct perfring_lost_record *l = (const void *)rec;

		CHECK_EQ(size, sizeof(*l));
		c->lost += l->lost;
		c->pending_lost += l->lost;
		c->lost_records++;
		return 0;
	}
	CHECK(size >= sizeof(r), "record of %zu bytes", size);
	memcpy(&r, rec, sizeof(r));
	id = r.h.type - REC_TYPE;
	CHECK(id < NPROD, "type %u", r.h.type);
	CHECK(prods[id].ring == rings[c->ring], "producer %u in ring %d", id,
	      c->ring);
	seq = r.seq & ~END_FLAG;
	CHECK_EQ(size, rec_size(id, r.seq));
	CHECK(rec_csum(rec, size) == r.csum, "ring %d: bad checksum, seq %u",
	      c->ring, seq);
	if (c->ring < SP_RINGS) {
		CHECK(seq == c->next[id] + (int64_t)c->pending_lost,
		      "ring %d: seq %u, expected %lld + %llu lost in front",
		      c->ring, seq, (long long)c->next[id],
		      (unsigned long long)c->pending_lost);
		c->next[id] = (int64_t)seq + 1;
	} else {
		CHECK((int64_t)seq > c->next[id],
		      "shared ring, producer %u: seq %u after %lld", id, seq,
		      (long long)c->next[id]);
		c->next[id] = seq;
	}
	c->pending_lost = 0;
	c->received++;
	pthread_mutex_lock(&prods[id].lock);
	prods[id].seen++;
	pthread_cond_signal(&prods[id].cond);
	pthread_mutex_unlock(&prods[id].lock);
	if (r.seq & END_FLAG) {
		c->ends++;
		ends_seen++;
	}
	return 0;
}

/*
 * Flood (@watermark 0: the default, half the ring): producers at full speed,
 * most records dropped; the consumer polls with a short timeout.  Ping-pong
 * (@watermark 8: every record is worth a wake-up): each producer waits for
 * its record to be read before the next, and the consumer sleeps with a
 * long timeout, so one lost wake-up stalls a producer and a poll runs into
 * its timeout: every poll must return well before it.
 */
static void run(uint64_t watermark, const char *name)
{
	struct perfring_consumer *cons;
	struct perfring_consumer_stats st = { .sz = sizeof(st) };
	pthread_t th[NPROD];
	uint64_t t0, deadline, polls = 0, longest = 0, t;
	int n, timeout_ms = watermark == 8 ? 20000 : 100;

	ping_pong = watermark == 8;
	ends_seen = 0;
	memset(checks, 0, sizeof(checks));
	for (int p = 0; p < NPROD; p++) {
		prods[p].sent = prods[p].full = prods[p].end_retries = 0;
		prods[p].seen = 0;
	}
	CHECK_EQ(perfring_consumer_create(NULL, &cons), 0);
	for (int i = 0; i < NRINGS; i++) {
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = 64 << 10,
			      .watermark = watermark,
			      .flags = i < SP_RINGS ?
					       0 :
					       PERFRING_MODE_MULTI_PRODUCER);

		CHECK_EQ(perfring_ring_create(&o, &rings[i]), 0);
		checks[i].ring = i;
		for (int p = 0; p < NPROD; p++)
			checks[i].next[p] = i < SP_RINGS ? 0 : -1;
		CHECK_EQ(perfring_consumer_add_ring(cons, rings[i], on_record,
						    &checks[i]),
			 i);
	}
	for (uint32_t p = 0; p < NPROD; p++) {
		prods[p].id = p;
		prods[p].ring = rings[p < SP_RINGS ? p : SP_RINGS];
	}
	for (int p = 0; p < NPROD; p++)
		CHECK_EQ(pthread_create(&th[p], NULL, produce, &prods[p]), 0);
	t0 = now_ns();
	deadline = t0 + budget_ns + 120000000000ull;
	while (ends_seen < NPROD) {
		t = now_ns();
		n = perfring_consumer_poll(cons, timeout_ms);
		CHECK(n >= 0, "poll: %d", n);
		t = now_ns() - t;
		longest = t > longest ? t : longest;
		if (ping_pong)
			CHECK(t < 10000000000ull,
			      "%s: a poll slept %.1f s: lost wake-up", name,
			      (double)t / 1e9);
		polls++;
		CHECK(now_ns() < deadline, "%d of %d producers finished",
		      ends_seen, NPROD);
	}
	for (int p = 0; p < NPROD; p++)
		CHECK_EQ(pthread_join(th[p], NULL), 0);
	CHECK_EQ(perfring_consumer_consume(cons), 0); /* nothing after END */
	uint64_t all_received = 0, all_lost = 0;

	for (int i = 0; i < NRINGS; i++) {
		struct perfring_ring_stats rs = { .sz = sizeof(rs) };
		uint64_t sent = 0;

		CHECK_EQ(perfring_ring_stats(rings[i], &rs), 0);
		for (int p = 0; p < NPROD; p++)
			if (prods[p].ring == rings[i])
				sent += prods[p].sent;
		CHECK(checks[i].received + checks[i].lost + rs.lost_pending ==
			      sent,
		      "ring %d: %llu received + %llu lost + %llu pending != %llu sent",
		      i, (unsigned long long)checks[i].received,
		      (unsigned long long)checks[i].lost,
		      (unsigned long long)rs.lost_pending,
		      (unsigned long long)sent);
		if (i < SP_RINGS) {
			CHECK_EQ(rs.lost_pending, 0);
			CHECK_EQ(prods[i].end_retries, 0);
		}
		CHECK_EQ(checks[i].ends, i < SP_RINGS ? 1 : MP_PRODUCERS);
		all_received += checks[i].received;
		all_lost += checks[i].lost;
	}
	CHECK_EQ(perfring_consumer_stats(cons, &st), 0);
	CHECK_EQ(st.dropped, 0);
	CHECK_EQ(st.lost, all_lost);
	CHECK_EQ(st.records - st.lost_records, all_received);
	perfring_consumer_destroy(cons);
	for (int i = 0; i < NRINGS; i++)
		perfring_ring_destroy(rings[i]);
	if (ping_pong)
		CHECK_EQ(all_lost, 0);
	fprintf(stderr,
		"%s: %d producers on %d rings, one consumer: %llu records in order, %llu lost (in %llu LOST records), %llu polls (longest %.1f ms), %llu wake-ups, %.1f s\n",
		name, NPROD, NRINGS, (unsigned long long)all_received,
		(unsigned long long)all_lost,
		(unsigned long long)st.lost_records, (unsigned long long)polls,
		(double)longest / 1e6, (unsigned long long)st.wakeups,
		(double)(now_ns() - t0) / 1e9);
}

int main(void)
{
	const char *secs = getenv("STRESS_SECS");

	budget_ns = (uint64_t)((secs ? atof(secs) : 1.0) * 1e9);
	for (int p = 0; p < NPROD; p++) {
		pthread_mutex_init(&prods[p].lock, NULL);
		pthread_cond_init(&prods[p].cond, NULL);
	}
	run(0, "flood");
	run(8, "ping-pong");
	return 0;
}
