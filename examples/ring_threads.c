// SPDX-License-Identifier: MIT
/*
 * The smallest useful perfring program: one thread emits timestamped
 * records into a ring, the main thread sleeps on the ring's wake-up
 * descriptor and reads them.  Build: cc ring_threads.c $(pkg-config --cflags
 * --libs perfring) -pthread
 */
#include <pthread.h>
#include <stdio.h>
#include <perfring.h>

struct sample {
	struct perf_event_header header;
	uint64_t time;
	uint64_t value;
};

static void *produce(void *arg)
{
	struct perfring_ring *ring = arg;

	for (uint64_t i = 0; i < 1000000; i++) {
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
	struct perfring_ring *ring;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	uint64_t n[2] = { 0, 0 };
	pthread_t t;

	if (perfring_ring_create(&opts, &ring))
		return 1;
	pthread_create(&t, NULL, produce, ring);
	while (n[0] + n[1] + st.lost_pending < 1000000) {
		perfring_ring_wait(ring, 10);
		perfring_ring_consume(ring, count, n);
		perfring_ring_stats(ring, &st); /* drops not yet in a LOST */
	}
	pthread_join(t, NULL);
	printf("read %llu samples, %llu lost (%llu in LOST records)\n",
	       (unsigned long long)n[0],
	       (unsigned long long)(n[1] + st.lost_pending),
	       (unsigned long long)n[1]);
	perfring_ring_destroy(ring);
	return 0;
}
