// SPDX-License-Identifier: MIT
/*
 * The LTTng-UST side of `bench emit-vs-lttng`: N events perfring_bench:ev
 * {u64 a, b, c} from one thread, timed around the loop.
 *
 *   lttng_emit N     the first event alone (first_ms), then N - 1 timed;
 *                    prints "ns=<per event> first_ms=F events=N"
 *
 * Run it with LTTNG_UST_REGISTER_TIMEOUT=-1 so that it has registered with
 * the session daemon (and got its enabled events) before the loop.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "lttng_tp.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
	double t0, t1, first_ms;

	if (!n) {
		fprintf(stderr, "usage: lttng_emit EVENTS\n");
		return 2;
	}
	/* the first event alone, as bench/app_emit.c does */
	t0 = now_s();
	lttng_ust_tracepoint(perfring_bench, ev, 0, 0, 0x55);
	t1 = now_s();
	first_ms = (t1 - t0) * 1e3;
	t0 = now_s();
	for (unsigned long long i = 1; i < n; i++)
		lttng_ust_tracepoint(perfring_bench, ev, i, i * 3, i ^ 0x55);
	t1 = now_s();
	printf("ns=%.3f first_ms=%.3f events=%llu\n",
	       n > 1 ? (t1 - t0) * 1e9 / (double)(n - 1) : 0.0, first_ms, n);
	return 0;
}
