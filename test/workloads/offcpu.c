// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * Known off-CPU time for `record --off-cpu` (test/offcpu.sh):
 * `offcpu [SLEEP_MS [BLOCK_MS [SPIN_MS [REST_MS]]]]` (default 500 500 300
 * 0).  The main thread sleeps SLEEP_MS in sleeper(), then blocks on a pipe
 * in blocker() until a second thread, which sleeps BLOCK_MS first, writes
 * to it from pipe_writer(); then it spins SPIN_MS in spinner(), on the CPU
 * the whole time, and sleeps REST_MS in rester() (a last switch-out before
 * its exit's, which perf sched timehist does not print).  Each thread
 * prints "thread TID START END" (its own lifetime, CLOCK_MONOTONIC
 * nanoseconds, the clock of the recording) to standard error as it ends.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long block_ms;
static volatile unsigned long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

static void print_life(unsigned long long start)
{
	fprintf(stderr, "thread %ld %llu %llu\n", (long)syscall(SYS_gettid),
		start, now_ns());
}

/* The frame-pointer walk loses the caller of a libc function (libc keeps
 * no frame), so each waits through a helper of its own. */
__attribute__((noinline)) void wait_nanosleep(long ms);
__attribute__((noinline)) void wait_nanosleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void wait_read(void);
__attribute__((noinline)) void wait_read(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		exit(1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void do_write(void);
__attribute__((noinline)) void do_write(void)
{
	if (write(fds[1], "x", 1) != 1)
		exit(1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sleeper(long ms);
__attribute__((noinline)) void sleeper(long ms)
{
	wait_nanosleep(ms);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void blocker(void);
__attribute__((noinline)) void blocker(void)
{
	wait_read();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void pipe_writer(void);
__attribute__((noinline)) void pipe_writer(void)
{
	do_write();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void spinner(long ms);
__attribute__((noinline)) void spinner(long ms)
{
	unsigned long long end = now_ns() + (unsigned long long)ms * 1000000ull;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) void rester(long ms);
__attribute__((noinline)) void rester(long ms)
{
	wait_nanosleep(ms);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void writer_wait(long ms);
__attribute__((noinline)) void writer_wait(long ms)
{
	wait_nanosleep(ms);
	__asm__ volatile("" ::: "memory");
}

static void *writer(void *arg)
{
	unsigned long long start = now_ns();

	(void)arg;
	writer_wait(block_ms);
	pipe_writer();
	print_life(start);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long start = now_ns();
	long sleep_ms = argc > 1 ? atol(argv[1]) : 500;
	long spin_ms = argc > 3 ? atol(argv[3]) : 300;
	long rest_ms = argc > 4 ? atol(argv[4]) : 0;
	pthread_t th;

	block_ms = argc > 2 ? atol(argv[2]) : 500;
	if (pipe(fds))
		return 1;
	sleeper(sleep_ms);
	if (pthread_create(&th, NULL, writer, NULL))
		return 1;
	blocker();
	pthread_join(th, NULL);
	spinner(spin_ms);
	if (rest_ms > 0)
		rester(rest_ms);
	print_life(start);
	return 0;
}
