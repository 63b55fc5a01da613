// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * A known call chain main -> chain_outer -> chain_middle -> chain_inner,
 * built with -O1 -fomit-frame-pointer (see the Makefile): only DWARF CFI
 * unwinds it.  Each function keeps a local array and uses its callee's
 * result, so every frame has its own stack space and no call is a tail
 * call.  `nofp SECS`.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long chain_inner(unsigned long seed);
__attribute__((noinline)) unsigned long chain_middle(unsigned long seed);
__attribute__((noinline)) unsigned long chain_outer(double secs);

__attribute__((noinline)) unsigned long chain_inner(unsigned long seed)
{
	volatile unsigned long local[8];

	for (unsigned i = 0; i < 8; i++)
		local[i] = seed + i;
	for (unsigned long i = 0; i < 2000000; i++)
		local[i & 7] += i * local[(i + 1) & 7];
	return local[0] + local[7];
}

__attribute__((noinline)) unsigned long chain_middle(unsigned long seed)
{
	volatile unsigned long local[4] = { seed, seed + 1, seed + 2, 3 };

	return chain_inner(local[1]) + local[3];
}

__attribute__((noinline)) unsigned long chain_outer(double secs)
{
	struct timespec a, b;
	unsigned long acc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		acc += chain_middle(acc);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
			 (double)(b.tv_nsec - a.tv_nsec) / 1e9 <
		 secs);
	return acc;
}

int main(int argc, char **argv)
{
	sink = chain_outer(argc > 1 ? atof(argv[1]) : 0.5);
	return 0;
}
