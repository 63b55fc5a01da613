// SPDX-License-Identifier: MIT
/* Touches N fresh pages in touch_first() (N page faults), then optionally
 * renames itself "lastphase" and touches M more in touch_last():
 * `faults N [M]`. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile char *fresh(long n)
{
	void *p = mmap(NULL, (size_t)(n * sysconf(_SC_PAGESIZE)),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	if (p == MAP_FAILED)
		exit(1);
	return p;
}

__attribute__((noinline)) void touch_first(volatile char *p, long n);
__attribute__((noinline)) void touch_last(volatile char *p, long n);

__attribute__((noinline)) void touch_first(volatile char *p, long n)
{
	long page = sysconf(_SC_PAGESIZE);

	for (long i = 0; i < n; i++)
		p[i * page] = 1;
}

__attribute__((noinline)) void touch_last(volatile char *p, long n)
{
	long page = sysconf(_SC_PAGESIZE);

	for (long i = 0; i < n; i++)
		p[i * page] = 2;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	touch_first(fresh(n), n);
	if (argc > 2) {
		long m = atol(argv[2]);

		prctl(PR_SET_NAME, "lastphase");
		touch_last(fresh(m), m);
	}
	return 0;
}
