// SPDX-License-Identifier: MIT
/*
 * Single-thread costs: one emit (emit-32), a ring-sized memcpy (memcpy),
 * and the wake-up ping-pong between two threads (wakeup).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

/* ---- single-thread costs ------------------------------------------------ */

/* ns per emit of a 32-byte record (timestamp included) into @r, which is
 * emptied untimed whenever it has had a ring's worth. */
static double emit_cost(struct perfring_ring *r, double secs)
{
	uint64_t per_round = perfring_ring_data_size(r) / 32 - 1;
	uint64_t timed = 0, count = 0, seq = 0, budget = (uint64_t)(secs * 1e9);
	_Alignas(64) unsigned char local[32];

	while (timed < budget) {
		uint64_t t0 = now_ns();

		for (uint64_t i = 0; i < per_round; i++) {
			rec_write(local, 32, seq++, tmpl);
			if (perfring_ring_emit(r, local, 32))
				die("emit", ENOSPC);
		}
		timed += now_ns() - t0;
		count += per_round;

		const void *ptr[2];
		size_t len[2];

		perfring_read_begin(r);
		perfring_read_range(r, ptr, len);
		perfring_read_end(r);
	}
	return (double)timed / (double)count;
}

static double tsc_cost(double secs)
{
	uint64_t budget = (uint64_t)(secs * 1e9), t0 = now_ns(), n = 0, acc = 0;

	for (;;) {
		for (int i = 0; i < 4096; i++)
			acc += perfring_clock_fast_ns();
		n += 4096;
		if (now_ns() - t0 >= budget)
			break;
	}
	sink += acc;
	return (double)(now_ns() - t0) / (double)n;
}

/* ---- wake-up ping-pong ------------------------------------------------- */

struct pp {
	struct perfring_ring *a, *b; /* a: T1 -> T2, b: T2 -> T1 */
	atomic_int ready, stop;
	uint64_t rounds, t0, t1;
	uint64_t wake_ns, wake_n; /* T1's emits that woke T2 */
};

static void pp_emit(struct perfring_ring *r, uint64_t seq)
{
	_Alignas(64) unsigned char rec[32];

	rec_write(rec, 32, seq, tmpl);
	if (perfring_ring_emit(r, rec, 32))
		die("ping-pong emit", ENOSPC);
}

static void pp_take(struct perfring_ring *r)
{
	for (;;) {
		const struct perf_event_header *rec;
		int64_t avail;
		int got = 0;

		while (perfring_ring_wait(r, -1) == 0)
			;
		avail = perfring_read_begin(r);
		while (perfring_read_next(r, &rec) > 0)
			got++;
		perfring_read_end(r);
		if (avail > 0 && got)
			return;
	}
}

static void *pp_t2(void *arg)
{
	struct pp *pp = arg;

	pin(1);
	atomic_fetch_add(&pp->ready, 1);
	for (uint64_t i = 0;; i++) {
		pp_take(pp->a);
		if (atomic_load(&pp->stop) == 2)
			break;
		pp_emit(pp->b, i);
	}
	return NULL;
}

static void wakeup_run(double secs, double *us_per_wake, double *wake_emit_ns)
{
	struct pp pp = { 0 };
	pthread_t t2;
	uint64_t budget = (uint64_t)(secs * 1e9);
	const struct perfring_ext *ext;

	/* Watermark one record: every record wakes a sleeping reader. */
	pp.a = ring_new(0, 64, 32, NULL, PERFRING_ROLE_BOTH);
	pp.b = ring_new(0, 64, 32, NULL, PERFRING_ROLE_BOTH);
	ext = ring_ext(pp.a);
	pthread_create(&t2, NULL, pp_t2, &pp);
	pin(0);
	while (atomic_load(&pp.ready) < 1)
		sched_yield();
	pp.t0 = now_ns();
	for (uint64_t i = 0;; i++) {
		uint64_t w0 = __atomic_load_n(&ext->wakeups, __ATOMIC_RELAXED);
		uint64_t e0 = now_ns();

		pp_emit(pp.a, i);
		uint64_t e1 = now_ns();
		if (__atomic_load_n(&ext->wakeups, __ATOMIC_RELAXED) != w0) {
			pp.wake_ns += e1 - e0;
			pp.wake_n++;
		}
		pp_take(pp.b);
		pp.rounds++;
		if (now_ns() - pp.t0 >= budget)
			break;
	}
	pp.t1 = now_ns();
	atomic_store(&pp.stop, 2);
	pp_emit(pp.a, 0);
	pthread_join(t2, NULL);
	*us_per_wake = (double)(pp.t1 - pp.t0) / 1e3 / (double)(2 * pp.rounds);
	*wake_emit_ns = pp.wake_n ? (double)pp.wake_ns / (double)pp.wake_n : 0;
	perfring_ring_destroy(pp.a);
	perfring_ring_destroy(pp.b);
}

void case_emit32(void)
{
	double e[REPS], t[REPS];

	pin(0);
	for (int i = 0; i < REPS; i++) {
		struct perfring_ring *r =
			ring_new(0, RING_KIB, 0, NULL, PERFRING_ROLE_BOTH);

		t[i] = tsc_cost(run_secs / 3);
		e[i] = emit_cost(r, run_secs);
		perfring_ring_destroy(r);
	}
	qsort(e, REPS, sizeof(double), cmp_double);
	qsort(t, REPS, sizeof(double), cmp_double);
	printf("bench emit-32 ns=%.2f tsc_ns=%.2f over_tsc_ns=%.2f ring_kib=%u stat=median\n",
	       e[1], t[1], e[1] - t[1], RING_KIB);
}

void case_memcpy(void)
{
	double g[REPS];

	pin(0);
	for (int i = 0; i < REPS; i++)
		g[i] = memcpy_gbs(run_secs / 2);
	qsort(g, REPS, sizeof(double), cmp_double);
	printf("bench memcpy gb_s=%.2f bytes=%u stat=median\n", g[1],
	       RING_KIB * 1024u);
}

void case_wakeup(void)
{
	double us[REPS], wk[REPS], nw[REPS], c[REPS];

	for (int i = 0; i < REPS; i++) {
		/* No waiter: a watermark of one record makes every emit run
		 * the wake-up check (full barrier + load of "waiting"). */
		struct perfring_ring *r =
			ring_new(0, RING_KIB, 32, NULL, PERFRING_ROLE_BOTH);

		pin(0);
		nw[i] = emit_cost(r, run_secs / 3);
		perfring_ring_destroy(r);
		c[i] = c2c_ns();
		wakeup_run(run_secs, &us[i], &wk[i]);
	}
	qsort(us, REPS, sizeof(double), cmp_double);
	qsort(wk, REPS, sizeof(double), cmp_double);
	qsort(nw, REPS, sizeof(double), cmp_double);
	qsort(c, REPS, sizeof(double), cmp_double);
	printf("bench wakeup us_per_wake=%.2f emit_ns_no_waiter=%.2f emit_ns_wake=%.1f watermark=32 c2c_ns=%.0f stat=median\n",
	       us[1], nw[1], wk[1], c[1]);
}
