// SPDX-License-Identifier: MIT
/*
 * The naive pipeline: the floor under emit-vs-lttng and app-sustained.
 *
 * THREADS producer threads each own a ring of RING bytes in shared memory
 * and write 48-byte records (header, clock, three u64s: what bench_app_emit
 * emits) as fast as they can; a producer that finds its ring full yields
 * the CPU until there is room, so nothing is ever lost.  A consumer in
 * another process (fork()ed: the recorder is another process) reads a ring
 * once 1/8 of it waits (BENCH_PIPE_MIN bytes), copies each record into an
 * 80-byte sample in a 2 MiB buffer, write()s the buffer to a new file on
 * /dev/shm when full and publishes the tail after each pass.
 *
 * None of perfring's protocol: no LOST accounting, no validation, no
 * wake-ups (a consumer that finds too little sleeps 20 us), no session, no
 * rounds; both sides' memory is touched before the clock starts, which no
 * recorder attaching to a program's rings can do.  The variants measured
 * while writing it (2026-11-28, far placement): a producer spinning on a
 * full ring instead of yielding, 19 M events/s with two threads against
 * 36; a consumer reading whatever waits, 43-46 ns an event for the producer
 * against 32-33 with batches of 1 MiB or more; publishing the head every
 * 64 records instead of every record, no change.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

#define PIPE_REC 48u
#define PIPE_SAMPLE 80u
#define PIPE_OUT (2u << 20)
#define PIPE_MAX_THREADS 8

struct pipe_ctl {
	_Alignas(64) _Atomic uint64_t head; /* producer's */
	char pad1[56];
	_Alignas(64) _Atomic uint64_t tail; /* consumer's */
	char pad2[56];
};

struct pipe_shared {
	struct pipe_ctl ctl[PIPE_MAX_THREADS];
	_Alignas(64) atomic_int producers_done, consumer_ready;
	uint64_t consumed, t_end, cpu_ns; /* cpu_ns: the consumer's CPU */
};

struct pipe_run {
	struct pipe_shared *sh;
	unsigned char *ring[PIPE_MAX_THREADS];
	uint64_t size, events, batch_min;
	pthread_barrier_t start;
	uint64_t t_start, ns[PIPE_MAX_THREADS];
};

struct pipe_arg {
	struct pipe_run *pr;
	unsigned int idx;
};

static void ring_put(unsigned char *ring, uint64_t mask, uint64_t at,
		     const void *src, uint32_t len)
{
	uint64_t off = at & mask, first = mask + 1 - off;

	if (first >= len) {
		memcpy(ring + off, src, len);
	} else {
		memcpy(ring + off, src, first);
		memcpy(ring, (const char *)src + first, len - first);
	}
}

static void ring_get(const unsigned char *ring, uint64_t mask, uint64_t at,
		     void *dst, uint32_t len)
{
	uint64_t off = at & mask, first = mask + 1 - off;

	if (first >= len) {
		memcpy(dst, ring + off, len);
	} else {
		memcpy(dst, ring + off, first);
		memcpy((char *)dst + first, ring, len - first);
	}
}

static void *pipe_producer(void *arg)
{
	struct pipe_arg *a = arg;
	struct pipe_run *pr = a->pr;
	struct pipe_ctl *c = &pr->sh->ctl[a->idx];
	unsigned char *ring = pr->ring[a->idx];
	const uint64_t size = pr->size, mask = size - 1;
	uint64_t head = 0, tail_cache = 0, t0;

	pthread_barrier_wait(&pr->start);
	t0 = now_ns();
	for (uint64_t i = 1; i <= pr->events; i++) {
		unsigned char rec[PIPE_REC];
		struct perf_event_header h = { .type = REC_TYPE,
					       .size = PIPE_REC };
		uint64_t ts = perfring_clock_fast_ns(),
			 v[3] = { i, a->idx, i ^ 0x55 };

		while (head + PIPE_REC - tail_cache > size) {
			/* pairs with the consumer's release of tail */
			tail_cache = atomic_load_explicit(&c->tail,
							  memory_order_acquire);
			if (head + PIPE_REC - tail_cache <= size)
				break;
			/* full: the CPU to the consumer (spinning here cost
			 * the two-thread run a quarter of its rate) */
			sched_yield();
		}
		memcpy(rec, &h, 8);
		memcpy(rec + 8, &ts, 8);
		memcpy(rec + 16, v, 24);
		ring_put(ring, mask, head, rec, PIPE_REC);
		head += PIPE_REC;
		/* pairs with the consumer's acquire of head */
		atomic_store_explicit(&c->head, head, memory_order_release);
	}
	pr->ns[a->idx] = now_ns() - t0;
	return NULL;
}

static _Noreturn void pipe_consumer(struct pipe_run *pr, unsigned int threads,
				    int fd)
{
	struct pipe_shared *sh = pr->sh;
	const uint64_t mask = pr->size - 1;
	unsigned char *out = malloc(PIPE_OUT);
	uint64_t tail[PIPE_MAX_THREADS] = { 0 }, consumed = 0;
	const struct perf_event_header sample_hdr = {
		.type = 9 /* PERF_RECORD_SAMPLE */, .size = PIPE_SAMPLE
	};
	size_t len = 0;
	int ok = 1;

	if (!out)
		_exit(1);
	memset(out, 0, PIPE_OUT);
	/* the consumer's view of every ring, touched before the start */
	for (unsigned int t = 0; t < threads; t++)
		for (uint64_t off = 0; off < pr->size; off += 4096)
			sink += pr->ring[t][off];
	atomic_store_explicit(&sh->consumer_ready, 1, memory_order_release);
	for (;;) {
		/* pairs with the parent's release after its producers end */
		int done = atomic_load_explicit(&sh->producers_done,
						memory_order_acquire);
		uint64_t got = 0;

		for (unsigned int t = 0; t < threads; t++) {
			struct pipe_ctl *c = &sh->ctl[t];
			/* pairs with the producer's release of head */
			uint64_t head = atomic_load_explicit(
				&c->head, memory_order_acquire);

			/* a batch of 1/8 ring at least (below 1 MiB the
			 * consumer reads lines the producer is still
			 * writing: 43-46 ns an event for the producer with
			 * any batch, against 32-33 from 1 MiB up) */
			if (head - tail[t] < pr->batch_min && !done)
				continue;

			while (tail[t] != head) {
				unsigned char *o;

				if (len + PIPE_SAMPLE > PIPE_OUT) {
					ok &= write(fd, out, len) ==
					      (ssize_t)len;
					len = 0;
				}
				o = out + len;
				ring_get(pr->ring[t], mask, tail[t], o + 24,
					 PIPE_REC);
				memcpy(o, &sample_hdr, 8);
				memset(o + 8, 0, 16); /* id, pid/tid */
				memset(o + 72, 0, 8);
				len += PIPE_SAMPLE;
				tail[t] += PIPE_REC;
				got++;
			}
			/* pairs with the producer's acquire of tail */
			atomic_store_explicit(&c->tail, tail[t],
					      memory_order_release);
		}
		consumed += got;
		if (!got) {
			if (done)
				break;
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
	}
	if (len)
		ok &= write(fd, out, len) == (ssize_t)len;
	sh->consumed = consumed;
	sh->t_end = now_ns();
	{
		struct timespec cpu;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
		sh->cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull +
			     (uint64_t)cpu.tv_nsec;
	}
	_exit(ok ? 0 : 1);
}

/*
 * One run: @threads producers of @events each into rings of @size bytes.
 * *mev_s: events per second from the start until the consumer has written
 * the last; *ns_per_ev: the producers' mean time per event; the
 * consumer's CPU time per event in naive_consumer_ns.  0 or -1.
 */
double naive_consumer_ns;

int naive_pipe_run(unsigned int threads, uint64_t events, uint64_t size,
		   double *mev_s, double *ns_per_ev)
{
	const char *file = "/dev/shm/perfring-bench-naive-pipe";
	struct pipe_run pr = { .size = size, .events = events };
	struct pipe_arg args[PIPE_MAX_THREADS];
	pthread_t tid[PIPE_MAX_THREADS];
	int fd, status = 1, err = -1;
	double ns = 0;
	pid_t pid;

	if (!threads || threads > PIPE_MAX_THREADS || size & (size - 1))
		return -1;
	/* BENCH_PIPE_MIN: the consumer's batch in bytes (default ring/8) */
	pr.batch_min = getenv("BENCH_PIPE_MIN") ?
			       strtoull(getenv("BENCH_PIPE_MIN"), NULL, 0) :
			       size / 8;
	pr.sh = mmap(NULL, sizeof(*pr.sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pr.sh == MAP_FAILED)
		return -1;
	memset(pr.sh, 0, sizeof(*pr.sh));
	for (unsigned int t = 0; t < threads; t++) {
		pr.ring[t] = mmap(NULL, size, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (pr.ring[t] == MAP_FAILED)
			goto out;
		memset(pr.ring[t], 0, size); /* the producer's view, touched */
	}
	unlink(file);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	pid = fork();
	if (pid < 0) {
		close(fd);
		goto out;
	}
	if (!pid)
		pipe_consumer(&pr, threads, fd);
	close(fd);
	while (!atomic_load_explicit(&pr.sh->consumer_ready,
				     memory_order_acquire))
		sched_yield();
	pthread_barrier_init(&pr.start, NULL, threads + 1);
	for (unsigned int t = 0; t < threads; t++) {
		args[t] = (struct pipe_arg){ &pr, t };
		pthread_create(&tid[t], NULL, pipe_producer, &args[t]);
	}
	pthread_barrier_wait(&pr.start);
	pr.t_start = now_ns();
	for (unsigned int t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		ns += (double)pr.ns[t] / (double)events / threads;
	}
	/* pairs with the consumer's acquire of producers_done */
	atomic_store_explicit(&pr.sh->producers_done, 1, memory_order_release);
	waitpid(pid, &status, 0);
	pthread_barrier_destroy(&pr.start);
	if (WIFEXITED(status) && !WEXITSTATUS(status) &&
	    pr.sh->consumed == events * threads) {
		*mev_s = (double)(events * threads) /
			 (double)(pr.sh->t_end - pr.t_start) * 1e3;
		*ns_per_ev = ns;
		naive_consumer_ns =
			(double)pr.sh->cpu_ns / (double)(events * threads);
		err = 0;
	}
out:
	unlink(file);
	for (unsigned int t = 0; t < threads; t++)
		if (pr.ring[t] && pr.ring[t] != MAP_FAILED)
			munmap(pr.ring[t], size);
	munmap(pr.sh, sizeof(*pr.sh));
	return err;
}

/* `bench naive-pipe [threads=N] [app_events=N] [app_ring=32M]`: the naive
 * pipeline alone, 3 runs (median). */
void case_naive_pipe(void)
{
	const char *t_env = getenv("BENCH_THREADS");
	const char *n_env = getenv("BENCH_APP_EVENTS");
	const char *r_env = getenv("BENCH_APP_RING");
	uint64_t events = n_env && atoll(n_env) > 0 ? strtoull(n_env, NULL, 0) :
						      10000000;
	uint64_t ring =
		(r_env && atoi(r_env) > 0 ? strtoull(r_env, NULL, 0) : 32)
		<< 20;
	unsigned int lo = 1, hi = 2;

	if (t_env && atoi(t_env) > 0)
		lo = hi = (unsigned int)atoi(t_env);
	for (unsigned int t = lo; t <= hi; t++) {
		double mev[REPS], ns[REPS], cons[REPS], c2c = c2c_ns();

		for (int i = 0; i < REPS; i++) {
			settle_memory((size_t)(events * t * 80) +
				      2 * t * (size_t)ring);
			if (naive_pipe_run(t, events, ring, &mev[i], &ns[i])) {
				printf("bench naive-pipe threads=%u error=run-failed\n",
				       t);
				return;
			}
			cons[i] = naive_consumer_ns;
		}
		printf("bench naive-pipe threads=%u mev_s=%.1f producer_ns=%.2f consumer_cpu_ns_per_ev=%.1f ring_mib=%llu events=%llu c2c_ns=%.0f stat=median\n",
		       t, median3(mev), median3(ns), median3(cons),
		       (unsigned long long)(ring >> 20),
		       (unsigned long long)events, c2c);
	}
}
