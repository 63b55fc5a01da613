// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * What a hostile user does to a recorder running as root: `fifoswap PATH
 * SECS` is run as PATH (an absolute path to a copy of itself), moves its
 * own binary to PATH.old, puts a FIFO where it was (so the kernel's MMAP
 * record names a FIFO by the time anyone reads it), creates PATH.ready and
 * spins in spin_here() for SECS seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void spin_here(double secs);

__attribute__((noinline)) void spin_here(double secs)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (unsigned long i = 0; i < 100000; i++)
			sink += i * i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
			 (double)(b.tv_nsec - a.tv_nsec) / 1e9 <
		 secs);
}

int main(int argc, char **argv)
{
	char old[4096], ready[4096];

	if (argc < 3 || argv[1][0] != '/') {
		fprintf(stderr, "usage: fifoswap /ABSOLUTE/PATH SECS\n");
		return 2;
	}
	snprintf(old, sizeof(old), "%s.old", argv[1]);
	snprintf(ready, sizeof(ready), "%s.ready", argv[1]);
	if (rename(argv[1], old) || mkfifo(argv[1], 0666)) {
		perror(argv[1]);
		return 1;
	}
	fclose(fopen(ready, "w"));
	spin_here(atof(argv[2]));
	return 0;
}
