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
 * record --off-cpu -g` in each mode (--off-cpu-mode bpf: the program in
 * the kernel sums the blocks; events: the recorder reads every switch)
 * and under `perf record -e sched:sched_switch -g`, in turn, 3 times;
 * medians.
 *
 * bpf_cpu_s=, events_cpu_s= and perf_cpu_s= are each recorder's CPU time
 * (wait4()'s user+sys, which counts the program it ran, less the
 * program's own getrusage; what the BPF program spends is in the
 * switching threads, so in the program's time and its slowdown):
 * bpf_ratio= and events_ratio= are ours / perf's (target <= 0.5).
 * bpf_slowdown_pct= and events_slowdown_pct= are the program's wall time
 * for the passes traced against untraced (target <= 10),
 * perf_slowdown_pct= the same under perf.  switches_per_s= is the
 * untraced run's rate (the program's own context switches per second of
 * its passes).  bpf_user_*= are the bpf mode with --user-callchains: user
 * stacks only, as perf's own --off-cpu takes them: what the kernel stacks
 * (one at each block, one at each wake-up) cost the program.
 * bpf_lost=, events_lost= and perf_lost= are the events
 * lost in the last run's files, as perf report -D counts them.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
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

/* @v (20 long): perfring record --off-cpu in @mode (with
 * --user-callchains if @user_only) into @file, of the program in @pong. */
static void ours_argv(char **v, const char *mode, bool user_only, char *file,
		      char *const pong[])
{
	int n = 0;

	v[n++] = (char *)cli_path();
	v[n++] = "record";
	v[n++] = "-q";
	v[n++] = "--off-cpu";
	v[n++] = "--off-cpu-mode";
	v[n++] = (char *)mode;
	v[n++] = "-g";
	if (user_only)
		v[n++] = "--user-callchains";
	v[n++] = "-o";
	v[n++] = file;
	v[n++] = "--";
	for (int i = 0; pong[i]; i++)
		v[n++] = pong[i];
	v[n] = NULL;
}

void case_offcpu_cost(void)
{
	const char *r = getenv("BENCH_OFFCPU_RATE"),
		   *s = getenv("BENCH_OFFCPU_SECS");
	double rate = r && atof(r) > 0 ? atof(r) : 100000.0;
	double secs = s && atof(s) > 0 ? atof(s) : 2.0;
	char pp[PATH_MAX],
		out[] = "/tmp/perfring-bench-pong.txt",
		bpf_f[] = "/tmp/perfring-bench-offcpu-bpf.data",
		events_f[] = "/tmp/perfring-bench-offcpu-events.data",
		user_f[] = "/tmp/perfring-bench-offcpu-user.data",
		perf_f[] = "/tmp/perfring-bench-offcpu-perf.data";
	char passes[32], work[32];
	char *pong[] = { workload("pacedpong", pp, sizeof(pp)), passes, work,
			 out, NULL };
	char *bpf[20], *bpf_user[20], *events[20];
	char *perf[] = { "perf", "record", "-q",   "-e", "sched:sched_switch",
			 "-g",	 "-o",	   perf_f, "--", pp,
			 passes, work,	   out,	   NULL };
	double base[REPS], bt[REPS], ut[REPS], et[REPS], pt[REPS], bc[REPS],
		uc[REPS], ec[REPS], pc[REPS], sw[REPS];
	uint64_t ev, bpf_lost, events_lost, perf_lost;
	struct pong p;
	double bare, work_ns;

	ours_argv(bpf, "bpf", false, bpf_f, pong);
	ours_argv(bpf_user, "bpf", true, user_f, pong);
	ours_argv(events, "events", false, events_f, pong);
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
		if (pong_run(bpf, out, &p, &bc[i]))
			goto fail;
		bt[i] = p.elapsed_s;
		if (pong_run(bpf_user, out, &p, &uc[i]))
			goto fail;
		ut[i] = p.elapsed_s;
		if (pong_run(events, out, &p, &ec[i]))
			goto fail;
		et[i] = p.elapsed_s;
		if (pong_run(perf, out, &p, &pc[i]))
			goto fail;
		pt[i] = p.elapsed_s;
	}
	perf_counts(bpf_f, &ev, &bpf_lost);
	perf_counts(events_f, &ev, &events_lost);
	perf_counts(perf_f, &ev, &perf_lost);
	unlink(bpf_f);
	unlink(user_f);
	unlink(events_f);
	unlink(perf_f);
	unlink(out);
	{
		double b = median3(base), bw = median3(bt), uw = median3(ut),
		       ew = median3(et), q = median3(pt);
		double bcpu = median3(bc), ucpu = median3(uc),
		       ecpu = median3(ec), pcpu = median3(pc);

		printf("bench offcpu-cost bpf_cpu_s=%.3f events_cpu_s=%.3f perf_cpu_s=%.3f bpf_ratio=%.3f events_ratio=%.3f bpf_slowdown_pct=%.1f events_slowdown_pct=%.1f perf_slowdown_pct=%.1f bpf_user_cpu_s=%.3f bpf_user_ratio=%.3f bpf_user_slowdown_pct=%.1f untraced_s=%.3f bpf_s=%.3f events_s=%.3f perf_s=%.3f switches_per_s=%.0f bare_pass_ns=%.0f work_ns=%.0f bpf_lost=%llu events_lost=%llu perf_lost=%llu stat=median\n",
		       bcpu, ecpu, pcpu, pcpu > 0 ? bcpu / pcpu : 0.0,
		       pcpu > 0 ? ecpu / pcpu : 0.0,
		       b > 0 ? 100.0 * (bw - b) / b : 0.0,
		       b > 0 ? 100.0 * (ew - b) / b : 0.0,
		       b > 0 ? 100.0 * (q - b) / b : 0.0, ucpu,
		       pcpu > 0 ? ucpu / pcpu : 0.0,
		       b > 0 ? 100.0 * (uw - b) / b : 0.0, b, bw, ew, q,
		       median3(sw), bare, work_ns, (unsigned long long)bpf_lost,
		       (unsigned long long)events_lost,
		       (unsigned long long)perf_lost);
	}
	return;
fail:
	unlink(bpf_f);
	unlink(user_f);
	unlink(events_f);
	unlink(perf_f);
	unlink(out);
	printf("bench offcpu-cost error=run\n");
}
