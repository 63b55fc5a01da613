// SPDX-License-Identifier: MIT
/* What the benchmark cases share (see bench.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

volatile uint64_t sink;

_Noreturn void die(const char *what, int err)
{
	fprintf(stderr, "bench: %s: %s\n", what,
		strerror(err < 0 ? -err : err));
	exit(1);
}

void pin(int cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n <= 1)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu % n, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void space_init(struct space *s, struct perfring_ring *r)
{
	s->ring = r;
	s->pc = perfring_ring_control(r);
	s->reserve = NULL;
	s->size = perfring_ring_data_size(r);
	s->head = __atomic_load_n(&s->pc->data_head, __ATOMIC_RELAXED);
	s->tail_cache = __atomic_load_n(&s->pc->data_tail, __ATOMIC_ACQUIRE);
	s->retries = 0;
}

struct perfring_ring *ring_new(unsigned int flags, uint64_t kib,
			       uint64_t watermark, const char *path,
			       enum perfring_role role)
{
	PERFRING_OPTS(perfring_ring_opts, o, .path = path,
		      .data_size = kib * 1024, .flags = flags,
		      .watermark = watermark, .role = role);
	struct perfring_ring *r;
	int err = perfring_ring_create(&o, &r);

	if (err)
		die("perfring_ring_create", err);
	return r;
}

double memcpy_gbs(double secs)
{
	size_t len = RING_KIB * 1024u;
	unsigned char *src = aligned_alloc(4096, len),
		      *dst = aligned_alloc(4096, len);
	uint64_t budget = (uint64_t)(secs * 1e9), t0, n = 0;

	if (!src || !dst)
		die("malloc", ENOMEM);
	memset(src, 0x5a, len);
	memset(dst, 0, len);
	t0 = now_ns();
	do {
		memcpy(dst, src, len);
		__asm__ volatile("" ::"r"(dst) : "memory");
		n++;
	} while (now_ns() - t0 < budget);
	double gbs = (double)(n * len) / ((double)(now_ns() - t0));
	sink += dst[len / 3];
	free(src);
	free(dst);
	return gbs;
}

/* ---- core-to-core latency ----------------------------------------------- */

/*
 * One-way latency of a cache line between CPU 0 and CPU 1.  On this VM it
 * is bimodal (about 30 ns or about 165 ns, as the host places the two vCPUs
 * near or far), and every cross-core figure follows it: the lines carry it.
 */
static _Alignas(64) _Atomic uint64_t c2c_flag;

static void *c2c_peer(void *arg)
{
	uint64_t n = *(uint64_t *)arg;

	pin(1);
	for (uint64_t i = 1; i < 2 * n; i += 2) {
		while (atomic_load_explicit(&c2c_flag, memory_order_acquire) !=
		       i)
			cpu_relax();
		atomic_store_explicit(&c2c_flag, i + 1, memory_order_release);
	}
	return NULL;
}

double c2c_ns(void)
{
	uint64_t n = 100000, t0, t1;
	pthread_t t;
	cpu_set_t caller;
	bool restore = !pthread_getaffinity_np(pthread_self(), sizeof(caller),
					       &caller);

	atomic_store(&c2c_flag, 0);
	pthread_create(&t, NULL, c2c_peer, &n);
	pin(0);
	t0 = now_ns();
	for (uint64_t i = 0; i < 2 * n; i += 2) {
		atomic_store_explicit(&c2c_flag, i + 1, memory_order_release);
		while (atomic_load_explicit(&c2c_flag, memory_order_acquire) !=
		       i + 2)
			cpu_relax();
	}
	t1 = now_ns();
	pthread_join(t, NULL);
	/* The caller's CPUs again: the programs a case starts after this
	 * inherit them (pinned to CPU 0, a recorder and the program it
	 * records shared one CPU in app-sustained and emit-vs-lttng). */
	if (restore)
		pthread_setaffinity_np(pthread_self(), sizeof(caller), &caller);
	return (double)(t1 - t0) / (double)(2 * n);
}

/*
 * Memory that is new to the guest is slow here: the host backs guest pages
 * lazily and the guest hands freed 2 MiB blocks back to it (free page
 * reporting, about 2 s after they are freed), so the first write to such a
 * page costs ~2.5 us.  A case that compares two programs writing new
 * files or rings would otherwise measure which of them happened to get
 * backed pages.  This touches @bytes of anonymous memory and frees it at
 * once: the next allocations of both sides take pages the host has backed.
 */
void settle_memory(size_t bytes)
{
	unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t off = 0; off < bytes; off += 4096)
		p[off] = 1;
	munmap(p, bytes);
}

double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

double median3(double *v)
{
	qsort(v, REPS, sizeof(double), cmp_double);
	return v[REPS / 2];
}

/* ---- other programs ---------------------------------------------------- */

const char *cli_path(void)
{
	const char *p = getenv("PERFRING_CLI");

	return p ? p : "build/perfring";
}

char *workload(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("WORKLOADS");

	snprintf(buf, len, "%s/%s", dir ? dir : "build/workloads", name);
	return buf;
}

/* Runs argv quietly; returns its CPU seconds (user+sys) and wall seconds. */
int run_measured(char *const argv[], double *cpu_s, double *wall_s)
{
	return run_measured_rss(argv, cpu_s, wall_s, NULL);
}

/* run_measured(), and its peak RSS in KiB (may be NULL). */
int run_measured_rss(char *const argv[], double *cpu_s, double *wall_s,
		     long *maxrss_kib)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	uint64_t t0 = now_ns();
	int status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ))
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	if (wall_s)
		*wall_s = (double)(now_ns() - t0) / 1e9;
	if (maxrss_kib)
		*maxrss_kib = ru.ru_maxrss;
	if (cpu_s)
		*cpu_s = (double)ru.ru_utime.tv_sec +
			 (double)ru.ru_utime.tv_usec / 1e6 +
			 (double)ru.ru_stime.tv_sec +
			 (double)ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Samples and lost events in a perf.data, counted by perf itself. */
void perf_counts(const char *file, uint64_t *samples, uint64_t *lost)
{
	char cmd[512], line[512];
	FILE *f;

	*samples = *lost = 0;
	snprintf(
		cmd, sizeof(cmd),
		"perf report -D -i %s 2>/dev/null | grep -E '^[0-9].*PERF_RECORD_(SAMPLE|LOST)'",
		file);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *l = strstr(line, "PERF_RECORD_LOST");

		if (!l) {
			(*samples)++;
			continue;
		}
		l = strstr(l, "lost ");
		if (l)
			*lost += strtoull(l + 5, NULL, 10);
	}
	pclose(f);
}

/* Ours and theirs, alternately, 3 times each: the best wall seconds of
 * each into *@ours_s and *@theirs_s (1e9: never succeeded). */
void best_of_3_walls(char *const ours[], char *const theirs[], double *ours_s,
		     double *theirs_s)
{
	double w;

	*ours_s = *theirs_s = 1e9;
	for (int i = 0; i < 3; i++) {
		if (run_measured(ours, NULL, &w) == 0 && w < *ours_s)
			*ours_s = w;
		if (run_measured(theirs, NULL, &w) == 0 && w < *theirs_s)
			*theirs_s = w;
	}
}
