// SPDX-License-Identifier: MIT
/*
 * What record --off-cpu costs at a high switch rate (offcpu-cost).
 *
 * The program is workloads/pacedpong: two threads on CPU 0 passing a byte
 * over pipes, each pass one switch, paced by WORK_NS of work per pass
 * chosen so that untraced it switches BENCH_OFFCPU_RATE times a second
 * (default 100,000): a first untraced run with no work measures what a
 * bare pass costs, the work is the rest of 1/RATE.  It then runs
 * RATE * BENCH_OFFCPU_SECS (default 2) passes untraced, under `perfring
 * record --off-cpu -g` and under `perf record -e sched:sched_switch -g`,
 * in turn, 3 times; medians.
 *
 * ours_cpu_s= and perf_cpu_s= are each recorder's CPU time (wait4()'s
 * user+sys, which counts the program it ran, less the program's own
 * getrusage): ratio= ours / perf (target <= 0.5).  slowdown_pct= is the
 * program's wall time for the passes traced against untraced (target <=
 * 10), perf_slowdown_pct= the same under perf.  switches_per_s= is the
 * untraced run's rate (the program's own context switches per second of
 * its passes).  ours_lost= and perf_lost= are the events lost in the last
 * run's files, as perf report -D counts them.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "bench.h"

struct pong {
	double elapsed_s, cpu_s, switches;
};

/* Runs @argv (a recorder of pacedpong, or pacedpong itself) and reads
 * pacedpong's figures from @out; *@cpu_s: the CPU of all but pacedpong. */
static int pong_run(char *const argv[], const char *out, struct pong *p,
		    double *cpu_s)
{
	long long passes, elapsed, cpu;
	long sw;
	double total;
	FILE *f;
	int rc;

	unlink(out);
	rc = run_measured(argv, &total, NULL);
	f = fopen(out, "r");
	if (rc || !f) {
		if (f)
			fclose(f);
		return -1;
	}
	rc = fscanf(f, "%lld %lld %lld %ld", &passes, &elapsed, &cpu, &sw);
	fclose(f);
	if (rc != 4 || passes <= 0)
		return -1;
	p->elapsed_s = (double)elapsed / 1e9;
	p->cpu_s = (double)cpu / 1e9;
	p->switches = (double)sw;
	if (cpu_s)
		*cpu_s = total - p->cpu_s;
	return 0;
}

void case_offcpu_cost(void)
{
	const char *r = getenv("BENCH_OFFCPU_RATE"),
		   *s = getenv("BENCH_OFFCPU_SECS");
	double rate = r && atof(r) > 0 ? atof(r) : 100000.0;
	double secs = s && atof(s) > 0 ? atof(s) : 2.0;
	char pp[PATH_MAX], out[] = "/tmp/perfring-bench-pong.txt",
			   ours_f[] = "/tmp/perfring-bench-offcpu.data",
			   perf_f[] = "/tmp/perfring-bench-offcpu-perf.data";
	char passes[32], work[32];
	char *pong[] = { workload("pacedpong", pp, sizeof(pp)), passes, work,
			 out, NULL };
	char *ours[] = { (char *)cli_path(),
			 "record",
			 "-q",
			 "--off-cpu",
			 "-g",
			 "-o",
			 ours_f,
			 "--",
			 pp,
			 passes,
			 work,
			 out,
			 NULL };
	char *perf[] = { "perf", "record", "-q",   "-e", "sched:sched_switch",
			 "-g",	 "-o",	   perf_f, "--", pp,
			 passes, work,	   out,	   NULL };
	double base[REPS], ot[REPS], pt[REPS], oc[REPS], pc[REPS], sw[REPS];
	uint64_t ev, ours_lost, perf_lost;
	struct pong p;
	double bare, work_ns;

	/* a bare pass's cost, untraced */
	snprintf(passes, sizeof(passes), "%d", 20000);
	snprintf(work, sizeof(work), "0");
	if (pong_run(pong, out, &p, NULL)) {
		printf("bench offcpu-cost error=no-workload path=%s\n", pp);
		return;
	}
	bare = p.elapsed_s * 1e9 / 20000;
	work_ns = 1e9 / rate - bare;
	if (work_ns < 0)
		work_ns = 0;
	snprintf(passes, sizeof(passes), "%.0f", rate * secs);
	snprintf(work, sizeof(work), "%.0f", work_ns);
	for (int i = 0; i < REPS; i++) {
		if (pong_run(pong, out, &p, NULL))
			goto fail;
		base[i] = p.elapsed_s;
		sw[i] = p.switches / p.elapsed_s;
		if (pong_run(ours, out, &p, &oc[i]))
			goto fail;
		ot[i] = p.elapsed_s;
		if (pong_run(perf, out, &p, &pc[i]))
			goto fail;
		pt[i] = p.elapsed_s;
	}
	perf_counts(ours_f, &ev, &ours_lost);
	perf_counts(perf_f, &ev, &perf_lost);
	unlink(ours_f);
	unlink(perf_f);
	unlink(out);
	{
		double b = median3(base), o = median3(ot), q = median3(pt);
		double ocpu = median3(oc), pcpu = median3(pc);

		printf("bench offcpu-cost ours_cpu_s=%.3f perf_cpu_s=%.3f ratio=%.3f slowdown_pct=%.1f perf_slowdown_pct=%.1f untraced_s=%.3f ours_s=%.3f perf_s=%.3f switches_per_s=%.0f bare_pass_ns=%.0f work_ns=%.0f ours_lost=%llu perf_lost=%llu stat=median\n",
		       ocpu, pcpu, pcpu > 0 ? ocpu / pcpu : 0.0,
		       b > 0 ? 100.0 * (o - b) / b : 0.0,
		       b > 0 ? 100.0 * (q - b) / b : 0.0, b, o, q, median3(sw),
		       bare, work_ns, (unsigned long long)ours_lost,
		       (unsigned long long)perf_lost);
	}
	return;
fail:
	unlink(ours_f);
	unlink(perf_f);
	unlink(out);
	printf("bench offcpu-cost error=run\n");
}
