// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * Inlined frames (test/inline.sh): built -O2 -g (see the Makefile), mix()
 * is inlined into round_step(), which is inlined into scaled() -- cloned
 * as scaled.constprop.0, its one caller passing a constant -- and into
 * checked(), itself inlined into hot_loop().  perf script shows those
 * functions as "(inlined)" frames of --call-graph dwarf samples.
 * `inlchain SECS`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static inline unsigned long mix(unsigned long x, unsigned long i)
{
	return (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + i;
}

static inline unsigned long round_step(unsigned long x, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		x = mix(x, i);
	return x;
}

/* Called with a constant: gcc clones it as scaled.constprop.0. */
__attribute__((noinline)) static unsigned long scaled(unsigned long x,
						      unsigned long n)
{
	return round_step(x, n) + n;
}

/* A cheap test up front, the work behind it: gcc splits it (.part.0). */
static unsigned long checked(unsigned long x)
{
	if (__builtin_expect(x == 0, 0))
		return 1;
	unsigned long acc = x;
	for (int k = 0; k < 4; k++) {
		acc = round_step(acc, 5000);
		if (acc == 42) {
			fprintf(stderr, "unlikely %lu\n", acc);
			abort();
		}
	}
	return acc;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* libc's own inlined functions (qsort's msort, printf's parser): its
 * frames and source lines with libc6-dbg's DWARF. */
__attribute__((noinline)) unsigned long libc_work(unsigned long seed)
{
	char text[16][24], *v[16];
	unsigned long sum = 0;

	for (int i = 0; i < 16; i++) {
		snprintf(text[i], sizeof(text[i]), "%lu.%d", seed % 997, i);
		v[i] = text[i];
		sum += strtoul(text[i], NULL, 10);
	}
	qsort(v, 16, sizeof(v[0]), by_text);
	return sum + (unsigned char)v[0][0];
}

__attribute__((noinline)) unsigned long hot_loop(unsigned long seed)
{
	unsigned long acc = scaled(seed, 20000);

	acc += checked(seed | 1);
	for (int r = 0; r < 40; r++)
		acc += libc_work(acc + r);
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct timespec a, b;
	unsigned long acc = 1;

	/* CPU time: on a busy machine the samples still cover SECS of work */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		acc += hot_loop(acc);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
			 (double)(b.tv_nsec - a.tv_nsec) / 1e9 <
		 secs);
	sink = acc;
	return 0;
}
