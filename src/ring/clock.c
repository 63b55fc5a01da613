// SPDX-License-Identifier: MIT
/*
 * Timestamps on the clock of perf events opened with use_clockid and
 * clockid = CLOCK_MONOTONIC, so application records and kernel records
 * share one timeline.
 *
 * The fast path reads the TSC and converts it the way a perf mmap page
 * says (time_zero, time_mult, time_shift) when the kernel offers it
 * (cap_user_time_zero); that yields perf_clock(), so the offset to
 * CLOCK_MONOTONIC is measured once.  Where the kernel does not offer it (a
 * paravirtual sched_clock, as on KVM guests) the TSC is calibrated against
 * CLOCK_MONOTONIC directly with the same conversion formula.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../common/opts.h"
#include "internal.h"

#include "clock_fast.h"

PR_HIDDEN struct ring_clock ring_clk;
PR_HIDDEN int ring_clk_ready;
static pthread_once_t clk_once = PTHREAD_ONCE_INIT;

PERFRING_API uint64_t perfring_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A (tsc, monotonic) pair taken in the narrowest window of a few tries. */
static void sample_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 64; i++) {
		uint64_t a = perfring_clock_ns(), c = read_tsc(),
			 b = perfring_clock_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = c;
			*mono = a + (b - a) / 2;
		}
	}
}

static int kernel_params(void)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pc;
	long page = sysconf(_SC_PAGESIZE);
	int fd, ok = 0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	pc = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	if (pc != MAP_FAILED) {
		uint32_t seq;

		do { /* pc->lock is the kernel's seqcount for these fields */
			seq = smp_load_acquire(&pc->lock);
			ok = pc->cap_user_time_zero;
			ring_clk.mult = pc->time_mult;
			ring_clk.shift = pc->time_shift;
			ring_clk.zero = pc->time_zero;
			smp_rmb(); /* pairs with the kernel's update barriers */
		} while (READ_ONCE(pc->lock) != seq || (seq & 1));
		munmap(pc, (size_t)page);
	}
	close(fd);
	return ok && ring_clk.mult && ring_clk.shift < 64;
}

static void calibrate(void)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	uint64_t c0 = 0, t0 = 0, c1 = 0, t1 = 0, cmid, tmid;
	long double ns_per_tick;

	sample_pair(&c0, &t0);
	nanosleep(&nap, NULL);
	sample_pair(&c1, &t1);
	if (c1 <= c0 || t1 <= t0) {
		ring_clk.source = PERFRING_CLOCK_SYSCALL;
		return;
	}
	ns_per_tick = (long double)(t1 - t0) / (long double)(c1 - c0);
	/* Largest shift that keeps mult in 32 bits, as the kernel does. */
	ring_clk.shift = 31;
	while (ring_clk.shift > 0 &&
	       ns_per_tick * (1ull << ring_clk.shift) >= 4294967295.0L)
		ring_clk.shift--;
	ring_clk.mult =
		(uint32_t)(ns_per_tick * (long double)(1ull << ring_clk.shift) +
			   0.5L);
	cmid = c1;
	tmid = t1;
	ring_clk.zero = 0;
	ring_clk.zero =
		tmid - tsc_to_ns(cmid, ring_clk.mult, ring_clk.shift, 0);
	ring_clk.mono_offset = 0;
	ring_clk.source = PERFRING_CLOCK_CALIBRATED;
}

static void clock_setup(void)
{
	uint64_t c = 0, t = 0;

	if (!HAVE_TSC) {
		ring_clk.source = PERFRING_CLOCK_SYSCALL;
		return;
	}
	if (kernel_params()) {
		ring_clk.source = PERFRING_CLOCK_KERNEL;
		sample_pair(&c, &t);
		ring_clk.mono_offset =
			(int64_t)(t - tsc_to_ns(c, ring_clk.mult,
						ring_clk.shift, ring_clk.zero));
		return;
	}
	calibrate();
}

static void clock_once(void)
{
	clock_setup();
	/* Pairs with the acquire in ring_clock_fast() (clock_fast.h). */
	smp_store_release(&ring_clk_ready, 1);
}

PERFRING_API int perfring_clock_init(struct perfring_clock_info *info)
{
	pthread_once(&clk_once, clock_once);
	if (info) {
		struct perfring_clock_info ci = {
			.sz = sizeof(ci),
			.source = ring_clk.source,
			.time_mult = ring_clk.mult,
			.time_shift = ring_clk.shift,
			.time_zero = ring_clk.zero,
			.mono_offset = ring_clk.mono_offset,
		};

		if (info->sz < offsetof(struct perfring_clock_info, source) +
				       sizeof(info->source))
			return -EINVAL;
		OPTS_FILL(info, &ci);
	}
	return 0;
}

PERFRING_API uint64_t perfring_clock_fast_ns(void)
{
	return ring_clock_fast();
}
