// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/* Call-graph siblings of equal weight: `fanout N` makes N getppid()
 * system calls from each of eight leaf functions, each leaf reached from
 * two callers (mid_z, mid_a) and half the calls made through libc's
 * syscall() instead of getppid().  Sampled on the syscall tracepoint with
 * a period of 1, every sibling in every call graph weighs the same, so
 * only the report's tie order tells them apart. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile long sink;

/* The system call's caller is lost to the frame-pointer walk (libc's
 * wrappers keep no frame), so the leaves call it through this. */
__attribute__((noinline)) void call_getppid(int how);
__attribute__((noinline)) void call_getppid(int how)
{
	sink += how ? syscall(SYS_getppid) : getppid();
	__asm__ volatile("" ::: "memory");
}

#define LEAF(name)                                            \
	__attribute__((noinline)) void name(long n, int how); \
	__attribute__((noinline)) void name(long n, int how)  \
	{                                                     \
		for (long i = 0; i < n; i++)                  \
			call_getppid(how);                    \
		__asm__ volatile("" ::: "memory");            \
	}
LEAF(leaf_d)
LEAF(leaf_b)
LEAF(leaf_g)
LEAF(leaf_a)
LEAF(leaf_h)
LEAF(leaf_c)
LEAF(leaf_f)
LEAF(leaf_e)

typedef void leaf_fn(long, int);
/* Address, name and call orders all differ, so that each tie-break
 * gives its own order. */
static leaf_fn *const leaves[] = { leaf_f, leaf_b, leaf_e, leaf_h,
				   leaf_a, leaf_c, leaf_g, leaf_d };

__attribute__((noinline)) void mid_z(long n);
__attribute__((noinline)) void mid_a(long n);

__attribute__((noinline)) void mid_z(long n)
{
	for (unsigned i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++)
		leaves[i](n, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void mid_a(long n)
{
	for (unsigned i = sizeof(leaves) / sizeof(leaves[0]); i-- > 0;)
		leaves[i](n, 1);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50;

	mid_a(n);
	mid_z(n);
	return 0;
}
