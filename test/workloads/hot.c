// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/* Spends nearly all its time in hot_loop() called from outer(): `hot SECS`. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void hot_loop(void);
__attribute__((noinline)) void outer(double secs);

__attribute__((noinline)) void hot_loop(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i * i;
}

__attribute__((noinline)) void outer(double secs)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		hot_loop();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
			 (double)(b.tv_nsec - a.tv_nsec) / 1e9 <
		 secs);
}

int main(int argc, char **argv)
{
	outer(argc > 1 ? atof(argv[1]) : 0.5);
	return 0;
}
