// SPDX-License-Identifier: MIT
/*
 * The perfring side of `bench emit-vs-lttng` and `bench app-sustained`: a
 * program that emits bench:ev {u64 a, b, c} (48-byte records) through
 * perfring_emit(), traced when run under `perfring record`.
 *
 *   app_emit emit N
 *       one thread, N events: the first alone (it makes the thread's
 *       ring: first_ms), then N - 1 timed around the loop, after timing
 *       N - 1 calls of perfring_clock_fast_ns() alone; prints "ns=<per
 *       event> tsc_ns=<per clock read> first_ms=F events=E lost=L
 *       active=A"
 *       (E, L: perfring_app_stats(); A: a recorder was attached)
 *   app_emit rate THREADS MEV_S SECS
 *       THREADS threads emit for SECS seconds at MEV_S million events per
 *       second in all (0: as fast as they can), each checking the clock
 *       every 1024 events and sleeping when ahead, timed from when
 *       every thread has made its ring with a first event; prints "events=E
 *       lost=L attempted=A secs=S mev_s=R cpu_s=C" (R: events attempted
 *       per second, C: this process's CPU time)
 */
#define _GNU_SOURCE
#include <perfring.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ev3 {
	uint64_t a, b, c;
};

static struct perfring_event *ev;
static double rate_per_thread; /* events per ns; 0: no limit */
static uint64_t run_ns;
static uint64_t attempted[64];
static pthread_barrier_t ready; /* every producer has its ring */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static volatile uint64_t sink;

static int emit_case(unsigned long long n)
{
	struct perfring_app_stats st = { .sz = sizeof(st) };
	uint64_t tf, t0, t1, t2, t3, acc = 0;
	struct ev3 first = { 0, 0, 0x55 };

	/* The thread's first event makes its ring (prefaulted): outside the
	 * timed loop, as LTTng-UST's buffers are set up at registration. */
	tf = now_ns();
	perfring_emit(ev, &first, sizeof(first));
	t3 = now_ns();
	n--;
	t0 = now_ns();
	for (unsigned long long i = 0; i < n; i++)
		acc += perfring_clock_fast_ns();
	t1 = now_ns();
	sink = acc;
	for (unsigned long long i = 1; i <= n; i++) {
		struct ev3 e = { i, i * 3, i ^ 0x55 };

		perfring_emit(ev, &e, sizeof(e));
	}
	t2 = now_ns();
	perfring_app_stats(&st);
	printf("ns=%.3f tsc_ns=%.3f first_ms=%.3f events=%llu lost=%llu active=%d\n",
	       (double)(t2 - t1) / (double)n, (double)(t1 - t0) / (double)n,
	       (double)(t3 - tf) / 1e6, (unsigned long long)st.events,
	       (unsigned long long)st.lost, perfring_app_active);
	return 0;
}

static void *producer(void *arg)
{
	unsigned int idx = (unsigned int)(uintptr_t)arg;
	struct ev3 warm = { 0, idx, 0x55 };
	uint64_t t0, now, i = 1;

	/* The thread's first event makes its ring (prefaulted; tens of ms
	 * here): before the clock starts, or the rate limit would catch up
	 * on that time in one burst.  As emit_case does. */
	perfring_emit(ev, &warm, sizeof(warm));
	pthread_barrier_wait(&ready);
	t0 = now = now_ns();

	while (now - t0 < run_ns) {
		/* 1024 events, then look at the clock: stay under the rate */
		for (unsigned int k = 0; k < 1024; k++, i++) {
			struct ev3 e = { i, idx, i ^ 0x55 };

			perfring_emit(ev, &e, sizeof(e));
		}
		now = now_ns();
		if (rate_per_thread > 0) {
			uint64_t due =
				t0 + (uint64_t)((double)i / rate_per_thread);

			/* ahead: sleep, leaving the CPU to the recorder */
			if (due > now) {
				struct timespec ts = {
					(time_t)(due / 1000000000ull),
					(long)(due % 1000000000ull)
				};

				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&ts, NULL);
				now = now_ns();
			}
		}
	}
	attempted[idx] = i;
	return NULL;
}

static int rate_case(unsigned int threads, double mev_s, double secs)
{
	struct perfring_app_stats st = { .sz = sizeof(st) };
	struct rusage ru;
	pthread_t tid[64];
	uint64_t total = 0, t0, t1;

	if (!threads || threads > 64 || secs <= 0)
		return 2;
	prctl(PR_SET_TIMERSLACK, 1ul); /* wake on time when rate limited */
	rate_per_thread = mev_s > 0 ? mev_s / 1e3 / threads : 0;
	run_ns = (uint64_t)(secs * 1e9);
	pthread_barrier_init(&ready, NULL, threads + 1);
	for (unsigned int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, producer,
				   (void *)(uintptr_t)i))
			return 1;
	pthread_barrier_wait(&ready);
	t0 = now_ns();
	for (unsigned int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	t1 = now_ns();
	for (unsigned int i = 0; i < threads; i++)
		total += attempted[i];
	perfring_app_stats(&st);
	getrusage(RUSAGE_SELF, &ru);
	printf("events=%llu lost=%llu attempted=%llu secs=%.3f mev_s=%.3f cpu_s=%.3f active=%d\n",
	       (unsigned long long)st.events, (unsigned long long)st.lost,
	       (unsigned long long)total, (double)(t1 - t0) / 1e9,
	       (double)total / ((double)(t1 - t0) / 1e3),
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec +
		       (double)ru.ru_stime.tv_usec / 1e6,
	       perfring_app_active);
	return 0;
}

int main(int argc, char **argv)
{
	if (perfring_event_declare("bench", "ev", "u64 a, u64 b, u64 c", &ev))
		return 1;
	if (argc == 3 && !strcmp(argv[1], "emit") && atoll(argv[2]) > 0)
		return emit_case(strtoull(argv[2], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "rate"))
		return rate_case((unsigned int)atoi(argv[2]), atof(argv[3]),
				 atof(argv[4]));
	fprintf(stderr, "usage: app_emit emit N | rate THREADS MEV_S SECS\n");
	return 2;
}
