// SPDX-License-Identifier: MIT
/* The readers: perfring_stats() throughput, perfring script vs perf script. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

/* The file both cases (and ctf-vs-perf) read: >= 400,000
 * sched:sched_switch samples of a pipe ping-pong, recorded system wide
 * into @f.  0 or the exit status. */
int record_sched_switch(char *f)
{
	char pp[PATH_MAX];
	char *rec[] = { (char *)cli_path(),
			"record",
			"-q",
			"-a",
			"-e",
			"sched:sched_switch",
			"-m",
			"4M",
			"-o",
			f,
			"--",
			workload("pingpong", pp, sizeof(pp)),
			"250000",
			NULL };

	return run_measured(rec, NULL, NULL);
}

/* The samples of @f as perfring stats counts them (0 if it cannot). */
unsigned long long sample_count(const char *f)
{
	unsigned long long samples = 0;
	char *text = NULL, *l;
	size_t tlen = 0;
	FILE *out = open_memstream(&text, &tlen);

	if (out && perfring_stats(f, out) == 0) {
		fflush(out);
		l = strstr(text, "SAMPLE events:");
		if (l)
			samples = strtoull(l + 14, NULL, 10);
	}
	if (out)
		fclose(out);
	free(text);
	return samples;
}

/*
 * perfring stats over a recording of >= 400,000 sched:sched_switch
 * samples made in the same run: MB/s of the in-process perfring_stats()
 * (best of 3), and the peak RSS of a `perfring stats` process.
 */
void case_stats_throughput(void)
{
	char f[] = "/tmp/perfring-bench-stats.data";
	char *stats[] = { (char *)cli_path(), "stats", "-i", f, NULL };
	double best = 1e9, w;
	unsigned long long samples = 0;
	char *text = NULL, *l;
	size_t tlen = 0;
	struct stat st;
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	FILE *out;
	int status;
	pid_t pid;

	if (record_sched_switch(f) != 0 || stat(f, &st) != 0) {
		printf("bench stats-throughput error=record-failed\n");
		unlink(f);
		return;
	}
	out = open_memstream(&text, &tlen);
	status = out ? perfring_stats(f, out) : -ENOMEM;
	if (out)
		fclose(out);
	if (status) {
		printf("bench stats-throughput error=stats-failed\n");
		free(text);
		unlink(f);
		return;
	}
	l = strstr(text, "SAMPLE events:");
	if (l)
		samples = strtoull(l + 14, NULL, 10);
	free(text);
	out = fopen("/dev/null", "w");
	for (int i = 0; out && i < 3; i++) {
		uint64_t t0 = now_ns();

		if (perfring_stats(f, out) != 0)
			break;
		w = (double)(now_ns() - t0) / 1e9;
		if (w < best)
			best = w;
	}
	if (out)
		fclose(out);
	/* peak memory of the CLI doing the same */
	ru.ru_maxrss = 0;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, stats[0], &fa, NULL, stats, environ) == 0)
		wait4(pid, &status, 0, &ru);
	posix_spawn_file_actions_destroy(&fa);
	printf("bench stats-throughput mb_s=%.0f file_mb=%.1f samples=%llu peak_rss_mb=%.1f secs=%.4f stat=best%s\n",
	       (double)st.st_size / 1e6 / best, (double)st.st_size / 1e6,
	       samples, (double)ru.ru_maxrss / 1024.0, best,
	       samples < 400000 ? " warning=fewer-than-400000-samples" : "");
	unlink(f);
}

/*
 * script-vs-perf: `perfring script` and `perf script` on one recording of
 * >= 400,000 sched:sched_switch samples made in the same run, output to
 * /dev/null; wall seconds, best of 3 each; ratio = ours / perf.
 */
void case_script_vs_perf(void)
{
	char f[] = "/tmp/perfring-bench-script.data";
	char *ours[] = { (char *)cli_path(), "script", "-i", f, NULL };
	char *perf[] = { "perf", "script", "-i", f, NULL };
	double o, p;
	unsigned long long samples;

	if (record_sched_switch(f) != 0) {
		printf("bench script-vs-perf error=record-failed\n");
		unlink(f);
		return;
	}
	samples = sample_count(f);
	best_of_3_walls(ours, perf, &o, &p);
	unlink(f);
	if (o >= 1e9 || p >= 1e9) {
		printf("bench script-vs-perf error=%s samples=%llu\n",
		       o >= 1e9 ? "script-failed" : "perf-script-failed",
		       samples);
		return;
	}
	printf("bench script-vs-perf ours_s=%.3f perf_s=%.3f ratio=%.3f samples=%llu ours_ns_per_sample=%.0f stat=best%s\n",
	       o, p, o / p, samples, samples ? o * 1e9 / (double)samples : 0.0,
	       samples < 400000 ? " warning=fewer-than-400000-samples" : "");
}
