// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * Spends its time in libc (a shared library, stripped on Debian, its
 * symbols in libc6-dbg's debug file found by build-id): memset and memcpy
 * over a 64 KiB buffer in a loop.  `memloop SECS`.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char a[65536], b[65536];

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5, t;
	struct timespec s, n;
	unsigned char v = 0;

	clock_gettime(CLOCK_MONOTONIC, &s);
	do {
		for (int i = 0; i < 64; i++) {
			memset(a, v++, sizeof(a));
			memcpy(b, a, sizeof(b));
		}
		clock_gettime(CLOCK_MONOTONIC, &n);
		t = (double)(n.tv_sec - s.tv_sec) +
		    (double)(n.tv_nsec - s.tv_nsec) / 1e9;
	} while (t < secs);
	return b[100] == 42;
}
