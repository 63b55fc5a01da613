// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * A program that switches at a set rate (bench offcpu-cost): two threads
 * on one CPU pass a byte back and forth over pipes, each working WORK_NS
 * on the CPU (counted from the moment it runs) before it passes it on.
 * Each pass is a switch; untraced, a pass takes WORK_NS plus the kernel's
 * switch, so the bench picks WORK_NS for the rate it wants, and what a
 * tracer adds to each switch lengthens the run.
 *
 * `pacedpong PASSES WORK_NS OUTFILE [CPU]` (CPU 0 by default) writes
 * "PASSES ELAPSED_NS CPU_NS SWITCHES" to OUTFILE: the wall time of the
 * passes, the process's CPU time (both threads) and context switches
 * (voluntary and not), from getrusage.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int to_b[2], to_a[2];
static long passes, work_ns;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void work(void)
{
	long long end = now_ns() + work_ns;

	while (now_ns() < end)
		;
}

/* Takes the byte from @in, works, passes it to @out; @n times. */
static int relay(int in, int out, long n, int first)
{
	char c = 0;

	for (long i = 0; i < n; i++) {
		if (!(first && i == 0) && read(in, &c, 1) != 1)
			return -1;
		work();
		if (write(out, &c, 1) != 1)
			return -1;
	}
	return 0;
}

static void *thread_b(void *arg)
{
	(void)arg;
	if (relay(to_b[0], to_a[1], passes / 2, 0))
		exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	long long t0, t1;
	pthread_t b;
	cpu_set_t set;
	char c;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: pacedpong PASSES WORK_NS OUTFILE [CPU]\n");
		return 2;
	}
	passes = atol(argv[1]) & ~1l;
	work_ns = atol(argv[2]);
	CPU_ZERO(&set);
	CPU_SET(argc > 4 ? atoi(argv[4]) : 0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || pipe(to_b) ||
	    pipe(to_a) || pthread_create(&b, NULL, thread_b, NULL))
		return 1;
	t0 = now_ns();
	if (relay(to_a[0], to_b[1], passes / 2, 1) || read(to_a[0], &c, 1) != 1)
		return 1;
	t1 = now_ns();
	pthread_join(b, NULL);
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(argv[3], "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %lld %lld %ld\n", passes, t1 - t0,
		(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll,
		ru.ru_nvcsw + ru.ru_nivcsw);
	return fclose(f) ? 1 : 0;
}
