// SPDX-License-Identifier: MIT
/*
 * The smallest useful perfring program: two threads emit timestamped
 * records, each into its own ring; the main thread reads both with one
 * consumer object, which sleeps on the rings' wake-up descriptors for it.
 * Build: cc ring_threads.c $(pkg-config --cflags --libs perfring) -pthread
 */
#include <pthread.h>
#include <stdio.h>
#include <perfring.h>

#define NTHREADS 2
#define PER_THREAD 500000

struct sample {
	struct perf_event_header header;
	uint64_t time;
	uint64_t value;
};

static void *produce(void *arg)
{
	struct perfring_ring *ring = arg;

	for (uint64_t i = 0; i < PER_THREAD; i++) {
		struct sample s = { { PERF_RECORD_SAMPLE, 0, sizeof(s) },
				    perfring_clock_fast_ns(),
				    i };

		/* Never blocks: when the ring is full the record is dropped,
		 * counted, and reported by a PERF_RECORD_LOST. */
		perfring_ring_emit(ring, &s, sizeof(s));
	}
	return NULL;
}

static int count(const struct perf_event_header *rec, size_t size, void *ctx)
{
	uint64_t *n = ctx; /* n[0] samples, n[1] lost */

	(void)size;
	if (rec->type == PERF_RECORD_SAMPLE)
		n[0]++;
	else if (rec->type == PERF_RECORD_LOST)
		n[1] += ((const struct perfring_lost_record *)rec)->lost;
	return 0;
}

int main(void)
{
	PERFRING_OPTS(perfring_ring_opts, opts, .data_size = 1 << 20);
	struct perfring_ring *ring[NTHREADS];
	struct perfring_consumer *consumer;
	uint64_t n[2] = { 0, 0 }, pending = 0;
	pthread_t t[NTHREADS];

	if (perfring_consumer_create(NULL, &consumer))
		return 1;
	for (int i = 0; i < NTHREADS; i++) {
		if (perfring_ring_create(&opts, &ring[i]) ||
		    perfring_consumer_add_ring(consumer, ring[i], count, n) < 0)
			return 1;
		pthread_create(&t[i], NULL, produce, ring[i]);
	}
	while (n[0] + n[1] + pending < NTHREADS * PER_THREAD) {
		/* Sleeps until a ring crosses its watermark (or 10 ms). */
		if (perfring_consumer_poll(consumer, 10) < 0)
			return 1;
		pending = 0; /* drops not yet in a LOST record */
		for (int i = 0; i < NTHREADS; i++) {
			struct perfring_ring_stats st = { .sz = sizeof(st) };

			perfring_ring_stats(ring[i], &st);
			pending += st.lost_pending;
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("read %llu samples, %llu lost (%llu in LOST records)\n",
	       (unsigned long long)n[0], (unsigned long long)(n[1] + pending),
	       (unsigned long long)n[1]);
	perfring_consumer_destroy(consumer);
	for (int i = 0; i < NTHREADS; i++)
		perfring_ring_destroy(ring[i]);
	return 0;
}
