// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * Built -O0 -g (stable source lines) and with the PLT: spends its time on
 * a few known lines of loop_a() and loop_b() and in libc's strtoul(),
 * called through the executable's PLT so often that samples land in its
 * stub (strtoul@plt): `srclines SECS`.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void loop_a(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		sink += i * i;
}

__attribute__((noinline)) static void loop_b(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink ^= i + (sink >> 3);
}

__attribute__((noinline)) static void parse(void)
{
	static const char *const text[] = { "12345", "0x7fff", "077", "9" };

	for (unsigned i = 0; i < 20000; i++)
		sink += strtoul(text[i & 3], NULL, 0);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	double end = now() + secs;

	do {
		loop_a();
		loop_b();
		parse();
	} while (now() < end);
	return 0;
}
