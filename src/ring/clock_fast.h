/* SPDX-License-Identifier: MIT */
/*
 * The fast clock inline, for hot paths inside the library (application
 * events): the same TSC conversion as perfring_clock_fast_ns() without the
 * call.  clock.c fills ring_clk once and publishes it with ring_clk_ready.
 */
#ifndef PERFRING_RING_CLOCK_FAST_H
#define PERFRING_RING_CLOCK_FAST_H

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
static inline uint64_t read_tsc(void)
{
	return __rdtsc();
}
#elif defined(__aarch64__)
#define HAVE_TSC 1
static inline uint64_t read_tsc(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
#define HAVE_TSC 0
static inline uint64_t read_tsc(void)
{
	return 0;
}
#endif

struct ring_clock {
	enum perfring_clock_source source;
	uint32_t mult;
	uint16_t shift;
	uint64_t zero;
	int64_t mono_offset;
};

PR_HIDDEN extern struct ring_clock ring_clk;
PR_HIDDEN extern int ring_clk_ready; /* set (release) once ring_clk is filled */

/* The conversion documented in perf_event_mmap_page (cap_user_time_zero). */
static inline uint64_t tsc_to_ns(uint64_t cyc, uint32_t mult, uint16_t shift,
				 uint64_t zero)
{
	uint64_t quot = cyc >> shift, rem = cyc & ((1ull << shift) - 1);

	return zero + quot * mult + ((rem * mult) >> shift);
}

static inline uint64_t ring_clock_fast(void)
{
	/* Pairs with the release in clock_once(). */
	if (unlikely(!smp_load_acquire(&ring_clk_ready)))
		perfring_clock_init(NULL);
	if (unlikely(ring_clk.source == PERFRING_CLOCK_SYSCALL))
		return perfring_clock_ns();
	return tsc_to_ns(read_tsc(), ring_clk.mult, ring_clk.shift,
			 ring_clk.zero) +
	       (uint64_t)ring_clk.mono_offset;
}

#endif
