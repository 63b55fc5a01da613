// SPDX-License-Identifier: MIT
/*
 * perfring top against perf top: the CPU each costs while it shows a live
 * table, system-wide at 1 kHz.
 *
 * Each runs for the same time (BENCH_TOP_SECS, default 10 s) in turn, with
 * the hot workload busy beside it so that user symbols get resolved too;
 * both are stopped with SIGINT.  cpu_pct= is the CPU time of all its
 * threads (their schedstat run time, ns) after the first BENCH_TOP_WARMUP
 * seconds (default 2: the start-up reads /proc, kallsyms and the first
 * ELF symbol tables) per second of wall time, as a percentage of one
 * core; total_cpu_pct= is wait4()'s user+sys over the whole run.  perf top
 * --stdio reads keys from its standard input: it gets an empty pipe that
 * stays open (with /dev/null it keeps printing its key help).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

/* Run time of every thread of @pid so far (ns), from schedstat. */
static uint64_t task_run_ns(pid_t pid)
{
	char path[64];
	struct dirent *d;
	uint64_t sum = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		char file[sizeof(path) + sizeof(d->d_name) + 16];
		unsigned long long ns;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/schedstat", path,
			 d->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		fclose(f);
	}
	closedir(dir);
	return sum;
}

struct top_run {
	double cpu_pct, total_cpu_pct;
	int status;
};

static int run_top(char *const argv[], double secs, double warmup,
		   struct top_run *r)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	uint64_t t0, t1, c0, c1, start = now_ns();
	int keys[2];
	pid_t pid;

	r->cpu_pct = r->total_cpu_pct = 0;
	r->status = -1;
	if (pipe2(keys, O_CLOEXEC))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, keys[0], 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(keys[0]);
		close(keys[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(keys[0]);
	usleep((useconds_t)(warmup * 1e6));
	t0 = now_ns();
	c0 = task_run_ns(pid);
	usleep((useconds_t)((secs - warmup) * 1e6));
	t1 = now_ns();
	c1 = task_run_ns(pid);
	kill(pid, SIGINT);
	if (wait4(pid, &r->status, 0, &ru) != pid)
		r->status = -1;
	close(keys[1]);
	if (t1 > t0 && c1 >= c0)
		r->cpu_pct = 100.0 * (double)(c1 - c0) / (double)(t1 - t0);
	r->total_cpu_pct = 100.0 *
			   ((double)ru.ru_utime.tv_sec +
			    (double)ru.ru_utime.tv_usec / 1e6 +
			    (double)ru.ru_stime.tv_sec +
			    (double)ru.ru_stime.tv_usec / 1e6) /
			   ((double)(now_ns() - start) / 1e9);
	return 0;
}

void case_top_overhead(void)
{
	const char *s = getenv("BENCH_TOP_SECS"),
		   *w = getenv("BENCH_TOP_WARMUP");
	double secs = s && atof(s) > 0 ? atof(s) : 10.0;
	double warmup = w && atof(w) >= 0 ? atof(w) : 2.0;
	char hp[PATH_MAX];
	char *hot[] = { workload("hot", hp, sizeof(hp)), "100000", NULL };
	char *ours[] = { (char *)cli_path(), "top", "-F", "1000", "-a", NULL };
	char *perf[] = { "perf", "top", "--stdio", "-F", "1000", "-a", NULL };
	struct top_run o, p;
	pid_t g;

	if (warmup >= secs)
		warmup = secs / 5;
	if (posix_spawn(&g, hot[0], NULL, NULL, hot, environ)) {
		printf("bench top-overhead error=no-workload path=%s\n",
		       hot[0]);
		return;
	}
	if (run_top(ours, secs, warmup, &o) ||
	    run_top(perf, secs, warmup, &p)) {
		printf("bench top-overhead error=spawn\n");
		kill(g, SIGKILL);
		waitpid(g, NULL, 0);
		return;
	}
	kill(g, SIGKILL);
	waitpid(g, NULL, 0);
	printf("bench top-overhead ours_cpu_pct=%.3f perf_cpu_pct=%.3f ratio=%.3f ours_total_cpu_pct=%.3f perf_total_cpu_pct=%.3f ours_exit=%d perf_exit=%d freq=1000 secs=%.1f warmup=%.1f\n",
	       o.cpu_pct, p.cpu_pct,
	       p.cpu_pct > 0 ? o.cpu_pct / p.cpu_pct : 0.0, o.total_cpu_pct,
	       p.total_cpu_pct,
	       WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1,
	       WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1, secs, warmup);
}
