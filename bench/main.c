// SPDX-License-Identifier: MIT
/*
 * perfring benchmarks.  `bench` runs every case, `bench CASE` one; each
 * prints one line:  bench <case> key=value ...
 *
 * This file holds the case table and the settings; the cases are grouped
 * by area: ring.c (cross-core throughput), emit.c (single-thread costs and
 * wake-ups), record.c, script.c, convert.c, app.c, cs.c, tracefs.c, top.c,
 * push.c, offcpu.c; bench.h and util.c hold what they share.
 *
 *   spsc-32, spsc-256  one writer thread (CPU 0), one reader thread (CPU 1);
 *                      32/256-byte records with a perfring_clock_fast_ns()
 *                      timestamp; the reader copies every record out, in
 *                      reader_begin/next/end batches.  The writer never
 *                      loses a record: it waits for space (retries=).
 *   xproc-32           the same across two processes over a named ring.
 *   mpsc2-32           two writer threads on a MULTI_PRODUCER ring, one
 *                      reader; vs_spsc= is the ratio to spsc-32.
 *   emit-32            one perfring_ring_emit() of a 32-byte record with its
 *                      timestamp (ns=), and perfring_clock_fast_ns() alone
 *                      (tsc_ns=), into a ring that never fills while timed.
 *   memcpy             a ring-sized memcpy (gb_s=).
 *   naive-32/-256      a minimal hand-written SPSC byte ring, same records
 *                      and copy-out: the baseline for spsc-32's and
 *                      spsc-256's vs_naive=.
 *   naive-abi-32       the naive ring with its two counters where perf's
 *                      ABI puts data_head and data_tail (one cache line),
 *                      run with spsc-32: what that layout costs by itself.
 *   wakeup             ping-pong over two rings through perfring_ring_wait()
 *                      (us_per_wake=), and the producer's emit cost with
 *                      nobody waiting vs when it has to wake the reader.
 *   stats-throughput   perfring_stats() over >= 400,000 sched_switch
 *                      samples recorded in the same run (mb_s=), and the
 *                      peak RSS of `perfring stats` on that file.
 *   naive-pipe         the naive pipeline (pipe.c): producers writing
 *                      48-byte records into rings of their own, a consumer
 *                      process writing 80-byte samples to /dev/shm, none
 *                      of the protocol: the floor under app-sustained and
 *                      emit-vs-lttng (threads=, app_events=, app_ring=MiB).
 *   app-sustained-z    the block-mode application pipeline with record -z
 *                      and without, against the uncompressed write bound
 *                      (app.c).
 *   ctf-vs-perf        `perfring data convert --to-ctf` and `perf data
 *                      convert --to-ctf` of one recording of >= 400,000
 *                      sched_switch samples made in the same run: wall and
 *                      CPU seconds (best of 3 each), ratio = ours / perf,
 *                      peak RSS of each; the same for --to-json (convert.c).
 *   top-overhead       `perfring top -F 1000 -a` and `perf top --stdio -F
 *                      1000 -a`, each for BENCH_TOP_SECS (10): CPU % of
 *                      one core after a BENCH_TOP_WARMUP (2 s) start-up,
 *                      and over the whole run (top.c).
 *   record-push        `perfring record -a -F 99 -g -o /dev/null --push`
 *                      (ClickHouse and Pyroscope formats, every second, to
 *                      a receiver in the bench) against `perf record -a -F
 *                      99 -g`, each for BENCH_PUSH_SECS (10), processes
 *                      coming and going: CPU seconds, bytes per interval
 *                      (push.c).
 *   offcpu-cost        a program switching 100,000 times a second (two
 *                      threads on one CPU, workloads/pacedpong) untraced,
 *                      under `perfring record --off-cpu -g` in each mode
 *                      (bpf, events) and under `perf record -e
 *                      sched:sched_switch -g`: each recorder's CPU seconds
 *                      (bpf_ratio=, events_ratio=, target <= 0.5) and the
 *                      program's slowdown (bpf_slowdown_pct=,
 *                      events_slowdown_pct=, target <= 10) (offcpu.c).
 *
 * Each case runs 3 times.  Single-thread figures are medians
 * (stat=median).  Cross-core ones report the best run (stat=best) with the
 * median beside it and c2c_ns=, the cache-line latency between the two
 * CPUs measured in the same run: on this 2-vCPU VM the host places the
 * vCPUs near (~30 ns) or far (~165 ns) and moves them, which changes every
 * cross-core figure several-fold.
 *
 * The writers never lose records: perfring_output_begin() counts a record
 * as lost when the ring is full, so they check for space first (retries=
 * counts the spins).  The readers take batches of at least ring/16 bytes
 * (see BATCH_MIN).
 *
 * Settings are environment variables or, after the case name, key=value
 * arguments (`bench spsc-32 secs=1 ring_kib=512`, `make bench CASE=x
 * ARGS="secs=1"`): key=value sets BENCH_KEY for this run.
 *
 * BENCH_SECS sets the time per run (default 0.6 s), BENCH_RING_KIB the ring
 * size (default 1024: the fastest of 256/512/1024 here), BENCH_MP_SPLIT=1
 * puts mpsc2's second writer on the reader's CPU instead of beside the
 * first writer (slower here: the reader then loses half its CPU).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

unsigned int ring_kib = 1024;
double run_secs = 0.6;
int mp_writer1_cpu = 0; /* second MP writer: CPU 0 (beside the first) */

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "spsc-32", case_spsc32 },
	{ "spsc-256", case_spsc256 },
	{ "xproc-32", case_xproc32 },
	{ "mpsc2-32", case_mpsc2 },
	{ "emit-32", case_emit32 },
	{ "memcpy", case_memcpy },
	{ "naive-32", case_naive32 },
	{ "naive-256", case_naive256 },
	{ "naive-abi-32", case_naive_abi32 },
	{ "wakeup", case_wakeup },
	{ "record-vs-perf", case_record_vs_perf },
	{ "record-startup", case_record_startup },
	{ "stats-throughput", case_stats_throughput },
	{ "script-vs-perf", case_script_vs_perf },
	{ "ctf-vs-perf", case_ctf_vs_perf },
	{ "cs-decode", case_cs_decode },
	{ "aux-replay", case_aux_replay },
	{ "tracefs-capture", case_tracefs_capture },
	{ "tracefs-get-reader", case_tracefs_get_reader },
	{ "emit-vs-lttng", case_emit_vs_lttng },
	{ "app-sustained", case_app_sustained },
	{ "app-sustained-z", case_app_sustained_z },
	{ "naive-pipe", case_naive_pipe },
	{ "top-overhead", case_top_overhead },
	{ "record-push", case_record_push },
	{ "offcpu-cost", case_offcpu_cost },
	{ "annotate-vs-perf", case_annotate_vs_perf },
};

int main(int argc, char **argv)
{
	const char *secs, *kib;
	int ran = 0;

	/* key=value after the case name: BENCH_KEY=value */
	/* case names (any number, in the table's order), then key=value */
	int nr_only = 0;

	while (1 + nr_only < argc && !strchr(argv[1 + nr_only], '='))
		nr_only++;
	for (int a = 1 + nr_only; a < argc; a++) {
		char name[64] = "BENCH_", *eq = strchr(argv[a], '=');
		size_t k = 6;

		if (!eq || eq == argv[a] || eq - argv[a] > 48) {
			fprintf(stderr, "bench: '%s' is not key=value\n",
				argv[a]);
			return 2;
		}
		for (const char *c = argv[a]; c < eq; c++)
			name[k++] = (char)(*c == '-' ? '_' : toupper(*c));
		name[k] = 0;
		setenv(name, eq + 1, 1);
	}
	secs = getenv("BENCH_SECS");
	kib = getenv("BENCH_RING_KIB");

	if (secs && atof(secs) > 0)
		run_secs = atof(secs);
	if (getenv("BENCH_MP_SPLIT"))
		mp_writer1_cpu = 1;
	if (kib && atoi(kib) >= 64)
		ring_kib = (unsigned int)atoi(kib);
	setvbuf(stdout, NULL, _IOLBF, 0);
	perfring_clock_init(NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool wanted = !nr_only;

		for (int a = 1; a <= nr_only; a++)
			wanted |= !strcmp(argv[a], cases[i].name);
		if (!wanted)
			continue;
		cases[i].fn();
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "usage: %s [", argv[0]);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			fprintf(stderr, "%s%s", i ? "|" : "", cases[i].name);
		fprintf(stderr, "]\n");
		return 2;
	}
	return 0;
}
