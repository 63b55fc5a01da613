// SPDX-License-Identifier: MIT
/* The recorder against perf record: CPU per event, start-up time. */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

void case_record_vs_perf(void)
{
	char pp[PATH_MAX], ours_f[] = "/tmp/perfring-bench-ours.data",
			   perf_f[] = "/tmp/perfring-bench-perf.data";
	char *gen[] = { workload("pingpong", pp, sizeof(pp)), "0", NULL };
	char *ours[] = { (char *)cli_path(),   "record", "-q",	 "-a", "-e",
			 "sched:sched_switch", "-m",	 "512K", "-o", ours_f,
			 "--duration",	       "3",	 NULL };
	char *perf[] = { "perf", "record", "-q",
			 "-a",	 "-e",	   "sched:sched_switch",
			 "-m",	 "128",	   "-o",
			 perf_f, "--",	   "sleep",
			 "3",	 NULL };
	double our_cpu = 0, perf_cpu = 0;
	uint64_t our_ev, our_lost, perf_ev, perf_lost;
	pid_t g;

	if (posix_spawn(&g, gen[0], NULL, NULL, gen, environ)) {
		printf("bench record-vs-perf error=no-generator path=%s\n",
		       gen[0]);
		return;
	}
	usleep(200000);
	run_measured(ours, &our_cpu, NULL);
	run_measured(perf, &perf_cpu, NULL);
	kill(g, SIGKILL);
	waitpid(g, NULL, 0);
	perf_counts(ours_f, &our_ev, &our_lost);
	perf_counts(perf_f, &perf_ev, &perf_lost);
	unlink(ours_f);
	unlink(perf_f);
	printf("bench record-vs-perf ours_us_per_ev=%.3f perf_us_per_ev=%.3f ratio=%.2f ours_lost=%llu perf_lost=%llu ours_events=%llu perf_events=%llu ours_cpu_s=%.3f perf_cpu_s=%.3f secs=3\n",
	       our_ev ? our_cpu * 1e6 / (double)our_ev : 0.0,
	       perf_ev ? perf_cpu * 1e6 / (double)perf_ev : 0.0,
	       our_ev && perf_ev && perf_cpu > 0 ?
		       (our_cpu / (double)our_ev) /
			       (perf_cpu / (double)perf_ev) :
		       0.0,
	       (unsigned long long)our_lost, (unsigned long long)perf_lost,
	       (unsigned long long)our_ev, (unsigned long long)perf_ev, our_cpu,
	       perf_cpu);
}

void case_record_startup(void)
{
	char f[] = "/tmp/perfring-bench-startup.data";
	char *ours[] = {
		(char *)cli_path(), "record", "-q", "-o", f, "--", "true", NULL
	};
	char *perf[] = { "perf", "record", "-q", "-o", f, "--", "true", NULL };
	double o[5], p[3], w;

	for (int i = 0; i < 5; i++)
		o[i] = run_measured(ours, NULL, &w) == 0 ? w : 1e9;
	for (int i = 0; i < 3; i++)
		p[i] = run_measured(perf, NULL, &w) == 0 ? w : 1e9;
	unlink(f);
	qsort(o, 5, sizeof(double), cmp_double);
	qsort(p, 3, sizeof(double), cmp_double);
	printf("bench record-startup ours_ms=%.1f perf_ms=%.1f stat=median\n",
	       o[2] * 1e3, p[1] * 1e3);
}
