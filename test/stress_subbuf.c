// SPDX-License-Identifier: MIT
/*
 * Stress: the user-space sub-buffer ring with a writer thread and a reader
 * thread whose GET_READER swaps race the writer's page moves, in both
 * modes (run under ASan+UBSan and TSan).  Events carry a sequence number,
 * a random size and a checksum.  Checks: every event arrives intact, in
 * order; producer/consumer mode loses exactly the events the writer was
 * refused (-ENOSPC) and no others; overwrite mode loses exactly
 * meta->overrun events, each gap at the start of a page marked with
 * missed events; the kernel-style counters (entries, read) agree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ring/subbuf.h"
#include "harness.h"
#include "stress.h"

#define PAYLOAD_MAX 200

/* FNV-1a over the payload bytes after the 16-byte event head. */
static uint32_t csum_of(const uint8_t *p, uint32_t n)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

struct shared {
	struct subbuf_ring *r;
	uint64_t total; /* events the writer attempts */
	uint64_t refused; /* -ENOSPC */
	int done; /* writer finished (READ_ONCE / WRITE_ONCE) */
};

static void *writer(void *arg)
{
	struct shared *s = arg;
	uint8_t buf[PAYLOAD_MAX];
	uint64_t rng = 42, seq = 0;

	for (uint64_t i = 0; i < s->total; i++) {
		uint32_t size =
			16 + (uint32_t)(rng_next(&rng) % (PAYLOAD_MAX - 16));
		uint32_t csum;
		int err;

		memcpy(buf, &seq, 8);
		memcpy(buf + 8, &size, 4);
		for (uint32_t k = 16; k < size; k++)
			buf[k] = (uint8_t)(seq * 7 + k);
		csum = csum_of(buf + 16, size - 16);
		memcpy(buf + 12, &csum, 4);
		err = subbuf_ring_write(s->r, now_ns(), buf, size);
		CHECK(err == 0 || err == -ENOSPC, "write: %d", err);
		if (err)
			s->refused++; /* seq is consumed: a gap */
		seq++;
		if ((i & 4095) == 0)
			sched_yield();
	}
	WRITE_ONCE(s->done, 1);
	return NULL;
}

struct rstate {
	uint64_t next, got, gaps, gap_events, marked, stored, last_ts;
};

static void check_page_part(struct subbuf_ring *r, uint32_t from, uint32_t to,
			    struct rstate *st, bool overwrite)
{
	const struct subbuf_meta *m = subbuf_ring_meta(r);
	const uint8_t *pg = subbuf_ring_page(r, m->reader.id);
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	int err;

	CHECK(!subbuf_page_info_live(pg, m->subbuf_size, &pi), "page header");
	if (from == 0 && pi.missed) {
		st->marked++;
		st->stored += pi.missed_count;
	}
	subbuf_iter_init(&it, pg + SUBBUF_HDR_SIZE, to, pi.time_stamp);
	while ((err = subbuf_iter_next(&it, &ev)) > 0) {
		uint64_t seq;
		uint32_t size, csum;

		if (ev.offset < from)
			continue;
		CHECK(ev.size >= 16, "short event");
		memcpy(&seq, ev.data, 8);
		memcpy(&size, (const uint8_t *)ev.data + 8, 4);
		memcpy(&csum, (const uint8_t *)ev.data + 12, 4);
		CHECK(size <= ev.size && size >= 16, "size %u in %u", size,
		      ev.size);
		CHECK(csum == csum_of((const uint8_t *)ev.data + 16, size - 16),
		      "event %llu corrupt", (unsigned long long)seq);
		CHECK(seq >= st->next, "seq %llu after %llu",
		      (unsigned long long)seq, (unsigned long long)st->next);
		CHECK(ev.ts >= st->last_ts, "time went back");
		st->last_ts = ev.ts;
		if (seq != st->next) {
			st->gaps++;
			st->gap_events += seq - st->next;
			if (overwrite)
				CHECK(pi.missed && from == 0,
				      "gap before %llu not on a marked page",
				      (unsigned long long)seq);
		}
		st->next = seq + 1;
		st->got++;
	}
	CHECK(err == 0, "parse: %s at %u", it.bad_what, it.bad_offset);
}

static void run(bool overwrite, uint64_t total)
{
	struct shared s = { .total = total };
	struct rstate st = { 0 };
	const struct subbuf_meta *m;
	pthread_t t;
	uint64_t swaps = 0, t0 = now_ns();

	CHECK(!subbuf_ring_create(4096, 6,
				  overwrite ? SUBBUF_RING_OVERWRITE : 0, &s.r),
	      "create");
	m = subbuf_ring_meta(s.r);
	CHECK(!pthread_create(&t, NULL, writer, &s), "thread");
	for (;;) {
		uint32_t id = m->reader.id, rd = m->reader.read;
		int done = READ_ONCE(s.done);

		CHECK(!subbuf_ring_get_reader(s.r), "get_reader");
		if (m->reader.id != id) {
			swaps++;
			check_page_part(s.r, 0, m->reader.read, &st, overwrite);
		} else if (m->reader.read > rd) {
			check_page_part(s.r, rd, m->reader.read, &st,
					overwrite);
		} else if (done) {
			break; /* the writer finished and nothing is left */
		} else if ((swaps & 3) == 0) {
			nap_us(20);
		}
	}
	pthread_join(t, NULL);
	CHECK_EQ(m->entries + s.refused, total);
	CHECK_EQ(m->read, st.got);
	if (overwrite) {
		CHECK(s.refused == 0, "overwrite refused %llu",
		      (unsigned long long)s.refused);
		CHECK(st.got + m->overrun == total,
		      "%llu read + %llu overrun != %llu",
		      (unsigned long long)st.got,
		      (unsigned long long)m->overrun,
		      (unsigned long long)total);
		CHECK(st.gap_events + (total - st.next) == m->overrun,
		      "gaps %llu != overrun %llu",
		      (unsigned long long)st.gap_events,
		      (unsigned long long)m->overrun);
		CHECK(st.stored <= m->overrun, "stored counts exceed overrun");
	} else {
		CHECK_EQ(m->overrun, 0);
		CHECK_EQ(subbuf_ring_dropped(s.r), s.refused);
		CHECK(st.got + s.refused == total,
		      "%llu read + %llu refused != %llu",
		      (unsigned long long)st.got, (unsigned long long)s.refused,
		      (unsigned long long)total);
		CHECK(st.gap_events + (total - st.next) == s.refused,
		      "gaps %llu != refused %llu",
		      (unsigned long long)st.gap_events,
		      (unsigned long long)s.refused);
	}
	printf("%s: %llu events, %llu read in %llu swaps, %llu lost (%llu gaps, %llu marked pages), %.2f s\n",
	       overwrite ? "overwrite" : "producer/consumer",
	       (unsigned long long)total, (unsigned long long)st.got,
	       (unsigned long long)swaps,
	       (unsigned long long)(overwrite ? m->overrun : s.refused),
	       (unsigned long long)st.gaps, (unsigned long long)st.marked,
	       (double)(now_ns() - t0) / 1e9);
	subbuf_ring_destroy(s.r);
}

int main(void)
{
	uint64_t n = 300000;

#if defined(__SANITIZE_THREAD__)
	n = 100000;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	n = 100000;
#endif
#endif
	run(false, n);
	run(true, n);
	return 0;
}
