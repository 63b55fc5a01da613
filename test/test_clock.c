// SPDX-License-Identifier: MIT
/*
 * perfring_clock_fast_ns() against perfring_clock_ns() (CLOCK_MONOTONIC):
 * bracketed reads agree within 50 us over ~100 ms, the fast clock never
 * goes backwards over 1e6 reads, perfring_clock_init() reports a TSC-based
 * source on x86.  And against the kernel: a perf event with use_clockid =
 * 1, clockid = CLOCK_MONOTONIC stamps a PERF_RECORD_COMM between two fast
 * clock reads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define AGREE_NS 50000 /* fast vs clock_gettime */
#define KERNEL_SLACK_NS 5000 /* fast clock vs the kernel's record time */

static void info_check(void)
{
	struct perfring_clock_info info, small;

	memset(&info, 0xff, sizeof(info));
	info.sz = sizeof(info);
	CHECK_EQ(perfring_clock_init(&info), 0);
	CHECK_EQ(perfring_clock_init(NULL), 0);
	/* An older caller's smaller struct is filled up to its size. */
	memset(&small, 0, sizeof(small));
	small.sz = offsetof(struct perfring_clock_info, mono_offset);
	CHECK_EQ(perfring_clock_init(&small), 0);
	CHECK_EQ(small.sz, offsetof(struct perfring_clock_info, mono_offset));
	CHECK_EQ(small.source, info.source);
	CHECK_EQ(small.mono_offset, 0);
	/* Too small to hold even the source: refused. */
	small.sz = sizeof(size_t);
	CHECK_EQ(perfring_clock_init(&small), -EINVAL);
	fprintf(stderr,
		"clock: source %d mult %u shift %u zero %" PRIu64
		" mono_offset %" PRId64 "\n",
		info.source, info.time_mult, info.time_shift, info.time_zero,
		info.mono_offset);
#if defined(__x86_64__) || defined(__i386__)
	CHECK(info.source == PERFRING_CLOCK_KERNEL ||
		      info.source == PERFRING_CLOCK_CALIBRATED,
	      "fast clock source %d on x86 (TSC expected)", info.source);
#endif
	if (info.source != PERFRING_CLOCK_SYSCALL) {
		CHECK(info.time_mult != 0, "time_mult 0");
		CHECK(info.time_shift < 64, "time_shift %u", info.time_shift);
	}
	/* Same values every time: it runs once. */
	{
		struct perfring_clock_info again = { .sz = sizeof(again) };

		CHECK_EQ(perfring_clock_init(&again), 0);
		CHECK(again.source == info.source &&
			      again.time_mult == info.time_mult &&
			      again.time_shift == info.time_shift &&
			      again.time_zero == info.time_zero &&
			      again.mono_offset == info.mono_offset,
		      "perfring_clock_init gave different parameters");
	}
}

static void bracketed(void)
{
	uint64_t start = perfring_clock_ns(), n = 0;
	int64_t worst_lo = 0, worst_hi = 0;

	while (perfring_clock_ns() - start < 100 * 1000 * 1000ull) {
		uint64_t a = perfring_clock_ns();
		uint64_t f = perfring_clock_fast_ns();
		uint64_t b = perfring_clock_ns();
		int64_t lo = (int64_t)(a - f), hi = (int64_t)(f - b);

		CHECK(a <= b, "CLOCK_MONOTONIC went backwards");
		if (lo > worst_lo)
			worst_lo = lo;
		if (hi > worst_hi)
			worst_hi = hi;
		CHECK(lo <= AGREE_NS && hi <= AGREE_NS,
		      "sample %" PRIu64 ": fast clock %" PRIu64
		      " outside [%" PRIu64 ", %" PRIu64 "] by more than %d ns",
		      n, f, a, b, AGREE_NS);
		n++;
		if (n % 1024 == 0) {
			/* Spread the samples over the 100 ms. */
			struct timespec ts = { 0, 200 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	CHECK(n > 1000, "only %" PRIu64 " samples", n);
	fprintf(stderr,
		"bracketed: %" PRIu64 " samples, fast clock up to %" PRId64
		" ns early, %" PRId64 " ns late\n",
		n, worst_lo, worst_hi);
}

static void monotonic(void)
{
	uint64_t prev = perfring_clock_fast_ns(), first = prev;

	for (int i = 0; i < 1000000; i++) {
		uint64_t t = perfring_clock_fast_ns();

		CHECK(t >= prev,
		      "fast clock went backwards at read %d: %" PRIu64
		      " after %" PRIu64,
		      i, t, prev);
		prev = t;
	}
	CHECK(prev > first, "fast clock did not advance over 1e6 reads");
}

static void against_kernel(void)
{
	struct perf_event_attr attr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 2 * page;
	struct perf_event_mmap_page *pc;
	struct perfring_ring *r;
	char oldname[17] = "";
	int64_t worst = 0, worst_sys = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.comm = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS ||
		       errno == ENOENT))
		SKIP("perf_event_open: %s", strerror(errno));
	CHECK(fd >= 0, "perf_event_open: %s", strerror(errno));
	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(pc != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK_EQ(perfring_ring_wrap_kernel(pc, len, fd, false, &r), 0);
	prctl(PR_GET_NAME, oldname);

	for (int i = 0; i < 200; i++) {
		const struct perf_event_header *h;
		char name[16];
		uint64_t s0, t0, t1, s1, tk = 0;
		int sz, found = 0;

		snprintf(name, sizeof(name), "clk%d", i);
		s0 = perfring_clock_ns();
		t0 = perfring_clock_fast_ns();
		CHECK_EQ(prctl(PR_SET_NAME, name), 0);
		t1 = perfring_clock_fast_ns();
		s1 = perfring_clock_ns();
		CHECK(perfring_read_begin(r) > 0, "no COMM record");
		while ((sz = perfring_read_next(r, &h)) > 0) {
			if (h->type != PERF_RECORD_COMM)
				continue;
			CHECK(strcmp((const char *)h + 16, name) == 0,
			      "COMM \"%s\", want \"%s\"", (const char *)h + 16,
			      name);
			memcpy(&tk, (const char *)h + sz - 8, 8);
			found++;
		}
		perfring_read_end(r);
		CHECK_EQ(found, 1);
		/* The kernel's CLOCK_MONOTONIC stamp lies between our reads. */
		CHECK(s0 <= tk + 1000 && tk <= s1 + 1000,
		      "kernel time %" PRIu64
		      " outside clock_gettime bracket [%" PRIu64 ", %" PRIu64
		      "]",
		      tk, s0, s1);
		CHECK(t0 <= tk + KERNEL_SLACK_NS && tk <= t1 + KERNEL_SLACK_NS,
		      "kernel time %" PRIu64
		      " outside fast clock bracket [%" PRIu64 ", %" PRIu64
		      "] (%" PRId64 " ns before, %" PRId64 " ns after)",
		      tk, t0, t1, (int64_t)(t0 - tk), (int64_t)(tk - t1));
		if ((int64_t)(t0 - tk) > worst)
			worst = (int64_t)(t0 - tk);
		if ((int64_t)(tk - t1) > worst)
			worst = (int64_t)(tk - t1);
		if ((int64_t)(s0 - tk) > worst_sys)
			worst_sys = (int64_t)(s0 - tk);
		if ((int64_t)(tk - s1) > worst_sys)
			worst_sys = (int64_t)(tk - s1);
	}
	prctl(PR_SET_NAME, oldname);
	fprintf(stderr,
		"kernel: worst excursion outside the bracket %" PRId64
		" ns (fast clock), %" PRId64 " ns (clock_gettime)\n",
		worst, worst_sys);
	perfring_ring_destroy(r);
	munmap(pc, len);
	close(fd);
}

int main(void)
{
	info_check();
	bracketed();
	monotonic();
	against_kernel();
	return T_EXIT_PASS;
}
