// SPDX-License-Identifier: MIT
/*
 * Stress: a writer thread plays a PMU driver into a small non-overwrite
 * AUX area while a reader thread drains it, as perf record does.
 *
 * The writer produces a trace stream whose byte at stream position t is a
 * function of t.  Each chunk it stores is announced by a PERF_RECORD_AUX
 * whose 8-byte sample_id trailer carries the stream position of its first
 * byte.  When the area is full it writes what fits, flags TRUNCATED and is
 * disabled; trace produced while disabled is counted with
 * perfring_aux_note_lost().  The reader checks every AUX byte against the
 * stream position of its record, re-enables the writer after a
 * truncation, and at the end: bytes checked + bytes lost == stream length,
 * every record contiguous in the AUX area, lost_bytes agrees.
 *
 * Runs about 2 s (STRESS_SECS overrides); also under TSan.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

static struct perfring_ring *ring;
static struct perfring_aux *aux;
static atomic_int writer_done;
static uint64_t stream_len; /* written by the writer before writer_done */
static uint64_t writer_lost;
static double secs = 2.0;

static unsigned char byte_at(uint64_t t)
{
	return (unsigned char)(mix64(t >> 3) >> ((t & 7) * 8));
}

static void *writer(void *arg)
{
	uint64_t t = 0, rng = 0x9e3779b97f4a7c15ull, lost = 0;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	unsigned int n = 0;

	(void)arg;
	while (now_ns() < end || !n) {
		struct perfring_aux_output h;
		uint64_t want = 1 + rng_next(&rng) % 3000, k, t0 = t;
		int ret;

		n++;
		ret = perfring_aux_output_begin(&h, aux);
		if (ret) {
			/* Disabled: the hardware trace of this period is
			 * gone. */
			CHECK(ret == -EAGAIN || ret == -ENOSPC, "begin %d",
			      ret);
			lost += want;
			perfring_aux_note_lost(aux, want);
			t += want;
			if (rng_next(&rng) % 4 == 0)
				nap_us(50);
			continue;
		}
		k = want < h.size ? want : h.size;
		for (uint64_t i = 0; i < k; i++)
			((unsigned char *)h.data)[i] = byte_at(t + i);
		t += want;
		if (k < want) {
			perfring_aux_output_flag(&h, PERF_AUX_FLAG_TRUNCATED);
			perfring_aux_note_lost(aux, want - k);
			lost += want - k;
		}
		h.sample_id = &t0;
		h.sample_id_size = sizeof(t0);
		perfring_aux_output_end(&h, k);
		if (rng_next(&rng) % 64 == 0)
			nap_us(20);
	}
	stream_len = t;
	writer_lost = lost;
	atomic_store(&writer_done, 1);
	return NULL;
}

struct rstate {
	uint64_t aux_pos; /* next AUX byte expected (aux_tail) */
	uint64_t checked, gap, records, truncated;
	uint64_t stream_seen_end;
};

static int on_rec(const struct perf_event_header *h, size_t size, void *ctx)
{
	struct rstate *s = ctx;
	const uint64_t *u = (const void *)(h + 1);
	const void *p[2];
	size_t l[2];
	uint64_t pos, off, len, t0;
	int64_t n;

	if (h->type == PERF_RECORD_LOST)
		return 0;
	CHECK(h->type == PERF_RECORD_AUX && size == 40, "record %u/%zu",
	      h->type, size);
	off = u[0];
	len = u[1];
	t0 = u[3];
	s->records++;
	if (u[2] & PERF_AUX_FLAG_TRUNCATED)
		s->truncated++;
	CHECK(off >= s->aux_pos, "aux_offset %llu behind %llu",
	      (unsigned long long)off, (unsigned long long)s->aux_pos);
	n = perfring_aux_read_begin(aux, p, l, &pos);
	CHECK(n >= 0 && pos == s->aux_pos, "read_begin");
	CHECK((uint64_t)n >= off + len - pos, "bytes of a record missing");
	/* Bytes before off belong to records the data ring dropped. */
	s->gap += off - pos;
	for (uint64_t i = 0; i < len; i++) {
		uint64_t at = off - pos + i;
		const unsigned char *b =
			at < l[0] ? (const unsigned char *)p[0] + at :
				    (const unsigned char *)p[1] + (at - l[0]);

		CHECK(*b == byte_at(t0 + i), "stream byte %llu",
		      (unsigned long long)(t0 + i));
	}
	CHECK_EQ(perfring_aux_read_end(aux, off + len - pos), 0);
	s->aux_pos = off + len;
	s->checked += len;
	return 0;
}

int main(void)
{
	PERFRING_OPTS(perfring_ring_opts, ro, .data_size = 1 << 16);
	PERFRING_OPTS(perfring_aux_opts, ao, .aux_size = 4 * 4096,
		      .watermark = 4096);
	struct perfring_aux_stats st = { .sz = sizeof(st) };
	struct rstate s = { 0 };
	pthread_t th;
	const char *e = getenv("STRESS_SECS");

	if (e)
		secs = atof(e);
	CHECK_EQ(perfring_ring_create(&ro, &ring), 0);
	CHECK_EQ(perfring_aux_create(ring, &ao, &aux), 0);
	CHECK_EQ(pthread_create(&th, NULL, writer, NULL), 0);
	for (;;) {
		int done = atomic_load(&writer_done);
		uint64_t rng = s.records;

		CHECK(perfring_ring_consume(ring, on_rec, &s) >= 0, "consume");
		if (perfring_aux_disabled(aux))
			perfring_aux_enable(aux);
		if (done)
			break;
		if (rng_next(&rng) % 3 == 0)
			nap_us(100);
		else if (!perfring_aux_wait_prepare(aux))
			perfring_ring_wait(ring, 1);
	}
	pthread_join(th, NULL);
	CHECK(perfring_ring_consume(ring, on_rec, &s) >= 0, "consume");
	CHECK_EQ(perfring_aux_stats(aux, &st), 0);
	CHECK_EQ(st.lost_bytes, writer_lost);
	CHECK_EQ(s.checked + s.gap + writer_lost, stream_len);
	CHECK_EQ(st.head, s.aux_pos);
	CHECK_EQ(st.records, s.records + st.aux_records_lost);
	CHECK_EQ(st.truncated >= s.truncated, 1);
	printf("stress_aux: %llu bytes checked in %llu records, %llu lost (%llu truncations), %llu in dropped records, %llu wake-ups\n",
	       (unsigned long long)s.checked, (unsigned long long)s.records,
	       (unsigned long long)writer_lost,
	       (unsigned long long)st.truncated, (unsigned long long)s.gap,
	       (unsigned long long)st.wakeups);
	CHECK(s.checked > 0 && st.truncated > 0, "exercised");
	perfring_aux_destroy(aux);
	perfring_ring_destroy(ring);
	return 0;
}
