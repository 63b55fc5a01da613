// SPDX-License-Identifier: MIT
/*
 * annotate-vs-perf: `perfring annotate --stdio` and `perf annotate
 * --stdio` of hot_loop on one recording made in the same run (perfring
 * record -g of build/workloads/hot for BENCH_SECS x 10 seconds at 4 kHz:
 * 0.6 s -> 6 s, ~24,000 samples), output to /dev/null; wall seconds, best
 * of 3 each; ratio = ours / perf (perf runs objdump for the symbol).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include "bench.h"

void case_annotate_vs_perf(void)
{
	char f[] = "/tmp/perfring-bench-annotate.data";
	char hot[256], secs[32];
	char *rec[] = { (char *)cli_path(),
			"record",
			"-q",
			"-g",
			"-F",
			"4000",
			"-o",
			f,
			"--",
			workload("hot", hot, sizeof(hot)),
			secs,
			NULL };
	char *ours[] = { (char *)cli_path(), "annotate", "--stdio", "-i", f,
			 "hot_loop",	     NULL };
	char *perf[] = { "perf", "annotate", "--stdio", "-i",
			 f,	 "hot_loop", NULL };
	double o = 1e9, p = 1e9, w;
	unsigned long long samples;

	snprintf(secs, sizeof(secs), "%.1f", run_secs * 10);
	if (run_measured(rec, NULL, &w) != 0) {
		printf("bench annotate-vs-perf error=record-failed\n");
		unlink(f);
		return;
	}
	samples = sample_count(f);
	best_of_3_walls(ours, perf, &o, &p);
	unlink(f);
	if (o >= 1e9 || p >= 1e9) {
		printf("bench annotate-vs-perf error=%s samples=%llu\n",
		       o >= 1e9 ? "annotate-failed" : "perf-annotate-failed",
		       samples);
		return;
	}
	printf("bench annotate-vs-perf ours_s=%.3f perf_s=%.3f ratio=%.3f samples=%llu stat=best\n",
	       o, p, o / p, samples);
}
