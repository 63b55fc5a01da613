// SPDX-License-Identifier: MIT
/*
 * Stress: 2, 3 and 4 producer threads on one PERFRING_MODE_MULTI_PRODUCER
 * ring, one consumer thread.
 *
 * Records carry (producer id, per-producer sequence number, checksum); the
 * producer id is in the record type.  Producer 0 shares the creator's
 * handle, the others attach their own with perfring_ring_attach_fd() (as
 * separate processes would; not under TSan, see own_handles()).  The consumer checks that each producer's
 * sequence numbers strictly increase (so no duplicates), every checksum, and
 * at the end that sum(received) + sum(LOST records' lost) + lost_pending ==
 * sum(sent attempts), that lost_total counts every drop, and that data_head
 * caught up with the reservation head (no committed record left
 * unpublished).
 *
 * A last run has slow producers on a large ring with a small watermark: the
 * consumer keeps up (nothing may be lost) and is woken by the producers.
 *
 * Runs about 2.5 s (STRESS_SECS overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define REC_TYPE 0x4c00u /* + producer id */
#define MAX_PROD 4
#define REC_MIN 16u
#define REC_MAX 512u
#define RING_ID 0x6d70u

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

static uint32_t rec_csum(const void *rec, size_t size)
{
	const unsigned char *p = rec;
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	memcpy(&w, p, 8);
	h = mix64(h ^ w);
	memcpy(&w, p + 8, 4);
	h = mix64(h ^ (w & 0xffffffffull));
	for (size_t off = 16; off < size; off += 8) {
		memcpy(&w, p + off, 8);
		h = mix64(h ^ w ^ off);
	}
	return (uint32_t)(h ^ (h >> 32));
}

static void rec_fill(void *buf, uint32_t id, uint32_t seq)
{
	struct srec *r = buf;
	uint32_t size = rec_size(id, seq);
	unsigned char *p = buf;

	r->h.type = (uint16_t)(REC_TYPE + id);
	r->h.misc = 0;
	r->h.size = (uint16_t)size;
	r->seq = seq;
	for (uint32_t off = 16; off < size; off += 8) {
		uint64_t w = mix64(((uint64_t)seq << 16) ^ off ^
				   ((uint64_t)id << 60));

		memcpy(p + off, &w, 8);
	}
	r->csum = rec_csum(buf, size);
}

/* ---- one run ----------------------------------------------------------- */

struct run {
	struct perfring_ring *ring; /* creator handle: consumer + producer 0 */
	unsigned int nprod;
	uint64_t deadline;
	unsigned int gap_us; /* slow producers: sleep between records */
	atomic_int producers_done;
	atomic_int failed;
	/* Written by each producer before it exits (read after join). */
	uint64_t sent[MAX_PROD], ok[MAX_PROD], full[MAX_PROD];
};

/*
 * Producers 1.. attach their own handles, i.e. their own mappings of the
 * ring.  ThreadSanitizer keys synchronisation by virtual address, so it
 * cannot see that a release through one mapping pairs with an acquire
 * through another and reports false races: under TSan all producers share
 * the creator's handle (MPSC_SHARED=1 does the same elsewhere).
 */
static bool own_handles(void)
{
#if defined(__SANITIZE_THREAD__)
	return false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	return false;
#endif
#endif
	return getenv("MPSC_SHARED") == NULL;
}

struct prod_arg {
	struct run *run;
	unsigned int id;
};

static void *producer(void *arg)
{
	struct prod_arg *pa = arg;
	struct run *run = pa->run;
	struct perfring_ring *ring = run->ring;
	_Alignas(8) unsigned char buf[REC_MAX];
	uint64_t seed = 0x9999ull + pa->id * 7919ull, ok = 0, full = 0;
	uint32_t seq = 0, id = pa->id;
	int err;

	if (id && own_handles()) {
		err = perfring_ring_attach_fd(perfring_ring_fd(run->ring),
					      perfring_ring_wait_fd(run->ring),
					      PERFRING_ROLE_PRODUCER, &ring);
		if (err) {
			fprintf(stderr, "producer %u: attach_fd: %s\n", id,
				strerror(-err));
			atomic_store(&run->failed, 1);
			return NULL;
		}
	}
	while (now_ns() < run->deadline) {
		uint32_t size = rec_size(id, seq);

		if (seq & 1) {
			struct perfring_output h;

			err = perfring_output_begin(&h, ring, size);
			if (!err) {
				rec_fill(h.data, id, seq);
				perfring_output_end(&h);
			}
		} else {
			rec_fill(buf, id, seq);
			err = perfring_ring_emit(ring, buf, size);
		}
		seq++;
		if (err == -ENOSPC) {
			full++;
			if (full % 32 == 0)
				sched_yield();
			continue;
		}
		if (err) {
			fprintf(stderr, "producer %u: emit: %s\n", id,
				strerror(-err));
			atomic_store(&run->failed, 1);
			break;
		}
		ok++;
		if (run->gap_us)
			nap_us(run->gap_us);
		else if (rng_next(&seed) % 8192 == 0)
			nap_us(300);
	}
	perfring_ring_flush(ring);
	run->sent[id] = seq;
	run->ok[id] = ok;
	run->full[id] = full;
	if (ring != run->ring)
		perfring_ring_destroy(ring);
	return NULL;
}

struct cstate {
	unsigned int nprod;
	uint64_t next[MAX_PROD]; /* lowest acceptable next seq */
	uint64_t received[MAX_PROD];
	uint64_t lost_sum, lost_records, batches, wakes;
};

static void check_record(struct cstate *c, const struct perf_event_header *rec,
			 size_t size)
{
	CHECK(size == rec->size, "reader size %zu != header size %u", size,
	      rec->size);
	if (rec->type == PERF_RECORD_LOST) {
		struct perfring_lost_record l;

		CHECK_EQ(size, PERFRING_LOST_RECORD_SIZE);
		memcpy(&l, rec, sizeof(l));
		CHECK_EQ(l.id, RING_ID);
		CHECK(l.lost > 0, "LOST record with lost == 0");
		c->lost_sum += l.lost;
		c->lost_records++;
		return;
	}
	CHECK(rec->type >= REC_TYPE && rec->type < REC_TYPE + c->nprod,
	      "unexpected record type %#x", rec->type);
	CHECK(size >= sizeof(struct srec), "record too small: %zu", size);
	const struct srec *s = (const struct srec *)rec;
	uint32_t id = rec->type - REC_TYPE;

	CHECK(s->seq >= c->next[id],
	      "producer %u: seq %u after %llu (out of order or duplicate)", id,
	      s->seq, (unsigned long long)c->next[id] - 1);
	CHECK_EQ(size, rec_size(id, s->seq));
	CHECK(rec_csum(rec, size) == s->csum,
	      "bad checksum, producer %u seq %u", id, s->seq);
	c->next[id] = (uint64_t)s->seq + 1;
	c->received[id]++;
}

/* Reads one batch; returns the bytes read. */
static uint64_t drain_once(struct perfring_ring *ring, struct cstate *c)
{
	const struct perf_event_header *rec;
	int64_t avail = perfring_read_begin(ring);
	uint64_t seen = 0;
	int sz;

	CHECK(avail >= 0, "perfring_read_begin: %lld", (long long)avail);
	while ((sz = perfring_read_next(ring, &rec)) > 0) {
		check_record(c, rec, (size_t)sz);
		seen += (uint64_t)sz;
	}
	CHECK(sz == 0, "perfring_read_next: %d", sz);
	CHECK(seen == (uint64_t)avail, "batch %llu of %lld bytes",
	      (unsigned long long)seen, (long long)avail);
	perfring_read_end(ring);
	c->batches++;
	return seen;
}

static void *consumer(void *arg)
{
	struct run *run = arg;
	struct cstate *c = calloc(1, sizeof(*c));
	uint64_t seed = 0x31337ull;

	CHECK(c != NULL, "calloc");
	c->nprod = run->nprod;
	for (;;) {
		int done = atomic_load(&run->producers_done);
		int w = perfring_ring_wait(run->ring, run->gap_us ? 50 : 2);

		CHECK(w >= 0, "perfring_ring_wait: %s", strerror(-w));
		c->wakes += w > 0;
		drain_once(run->ring, c);
		if (done) {
			/* Producers have returned: everything is published. */
			while (drain_once(run->ring, c))
				;
			break;
		}
		if (!run->gap_us && rng_next(&seed) % 256 == 1)
			nap_us(300);
	}
	return c;
}

static void do_run(unsigned int nprod, uint64_t data_size, uint64_t watermark,
		   unsigned int gap_us, uint64_t budget_ns, uint64_t start)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = data_size,
		      .flags = PERFRING_MODE_MULTI_PRODUCER,
		      .watermark = watermark, .id = RING_ID, .start = start);
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct run *run = calloc(1, sizeof(*run));
	struct prod_arg pa[MAX_PROD];
	pthread_t pt[MAX_PROD], ct;
	struct cstate *c;
	uint64_t sent = 0, ok = 0, full = 0, received = 0;
	int err;

	CHECK(run != NULL, "calloc");
	err = perfring_ring_create(&o, &run->ring);
	CHECK(err == 0, "perfring_ring_create: %s", strerror(-err));
	run->nprod = nprod;
	run->gap_us = gap_us;
	run->deadline = now_ns() + budget_ns;
	CHECK(pthread_create(&ct, NULL, consumer, run) == 0, "pthread_create");
	for (unsigned int i = 0; i < nprod; i++) {
		pa[i].run = run;
		pa[i].id = i;
		CHECK(pthread_create(&pt[i], NULL, producer, &pa[i]) == 0,
		      "pthread_create");
	}
	for (unsigned int i = 0; i < nprod; i++)
		pthread_join(pt[i], NULL);
	atomic_store(&run->producers_done, 1);
	pthread_join(ct, (void **)&c);
	CHECK(!atomic_load(&run->failed), "a producer failed");

	CHECK(perfring_ring_stats(run->ring, &st) == 0, "stats");
	const struct perfring_ext *ext =
		(const struct perfring_ext *)((const char *)
						      perfring_ring_control(
							      run->ring) +
					      PERFRING_EXT_OFFSET);
	uint64_t reserve =
		__atomic_load_n(&ext->reserve_head, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; i < nprod; i++) {
		sent += run->sent[i];
		ok += run->ok[i];
		full += run->full[i];
		received += c->received[i];
		CHECK(c->received[i] == run->ok[i],
		      "producer %u: received %llu, emitted %llu", i,
		      (unsigned long long)c->received[i],
		      (unsigned long long)run->ok[i]);
	}
	printf("%u producers%s: sent %llu received %llu lost %llu "
	       "(%llu in %llu LOST records + %llu pending); %llu batches, "
	       "%llu wait()=1, %llu wake-ups sent\n",
	       nprod, gap_us ? " (slow)" : "", (unsigned long long)sent,
	       (unsigned long long)received,
	       (unsigned long long)(c->lost_sum + st.lost_pending),
	       (unsigned long long)c->lost_sum,
	       (unsigned long long)c->lost_records,
	       (unsigned long long)st.lost_pending,
	       (unsigned long long)c->batches, (unsigned long long)c->wakes,
	       (unsigned long long)st.wakeups);
	CHECK(st.head == reserve,
	      "data_head %llu behind the reservation head %llu: a committed record was never published",
	      (unsigned long long)st.head, (unsigned long long)reserve);
	CHECK_EQ(st.head, st.tail);
	CHECK(received + c->lost_sum + st.lost_pending == sent,
	      "received %llu + lost %llu + pending %llu != sent %llu",
	      (unsigned long long)received, (unsigned long long)c->lost_sum,
	      (unsigned long long)st.lost_pending, (unsigned long long)sent);
	CHECK_EQ(st.lost_total, full);
	CHECK_EQ(c->lost_sum + st.lost_pending, full);
	CHECK_EQ(st.corrupt_events, 0);
	CHECK(received >= nprod, "only %llu records",
	      (unsigned long long)received);
	if (gap_us) {
		/* Slow producers, a ring holding seconds of their output and a
		 * consumer that never naps: nothing may be lost, and the
		 * consumer, sleeping below the watermark, must have been woken
		 * by a producer. */
		CHECK_EQ(full, 0);
		CHECK(st.wakeups > 0, "no wake-up sent");
	}
	perfring_ring_destroy(run->ring);
	free(c);
	free(run);
}

int main(void)
{
	const char *secs = getenv("STRESS_SECS");
	double total = secs ? atof(secs) : 2.4;
	uint64_t slice;

	if (total <= 0)
		total = 2.4;
	slice = (uint64_t)(total / 4 * 1e9);
	do_run(2, 64 * 1024, 0, 0, slice, 0);
	do_run(3, 64 * 1024, 0, 0, slice, (uint64_t)0 - 24576);
	do_run(4, 16 * 1024, 0, 0, slice, 0);
	do_run(2, 4 * 1024 * 1024, 4096, 20, slice, 0);
	return T_EXIT_PASS;
}
