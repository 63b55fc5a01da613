// SPDX-License-Identifier: MIT
/*
 * A traced program with known content for the application-tracing tests.
 *
 *   apptrace THREADS EVENTS [options]
 *
 * Each thread emits EVENTS apptest:tick {u64 seq, u64 thread, u64 value =
 * seq * 7 + thread}, every 100th also apptest:msg {u32 seq, string text
 * "msg-<thread>-<seq>", bytes blob (seq / 100 % 5 bytes of 0xab)}, and each 1000
 * ticks inside an apptest:work_begin/apptest:work_end pair.  At exit it
 * prints "emitted E lost L" (perfring_app_stats) on stdout.
 *
 *   --forever        keep emitting (seq wraps nothing) until killed
 *   --rate N         about N events per second per thread (sleeps)
 *   --scribble       thread 0 writes garbage over its own ring (a buggy
 *                    producer) after half its events
 *   --exit-early     odd threads stop after half their events and exit
 *                    while the others go on
 *   --snapshot-at N  thread 0 asks the recorder for a snapshot
 *                    (perfring_app_snapshot) after tick N, then waits 1 s
 *   --touch-after N PATH  thread 0 creates PATH once it has emitted N ticks
 *                    (tests wait for it instead of sleeping)
 *   --counts FILE    publish progress in FILE (created, 4 KiB, shared
 *                    mapping), u64 words: [0] pid, [1] 1 once every
 *                    thread is done, [2] threads, [8 + t] the number of
 *                    perfring_emit()/perfring_emitv() calls thread t has
 *                    returned from, stored after each (release): a
 *                    program killed with SIGKILL has made that many
 *                    calls, or one more still in flight; [72 + t]
 *                    thread t's tid (its ring is <pid>-<tid>.ring)
 *   --oversize N     first, the main thread emits N apptest:msg events
 *                    with a 70000-byte blob, too large for any ring
 *                    (each must return -E2BIG); the last line then adds
 *                    "too_large T" (perfring_app_stats)
 *   --hold           once every thread is done, wait for SIGTERM or
 *                    SIGINT before printing and exiting (a recorder can
 *                    attach with -p after the others are gone)
 *
 * Thread t's n-th call (from 0) is the same event in every run: per seq,
 * work_begin (seq % 1000 == 0), tick, msg (seq % 100 == 0), work_end
 * (seq % 1000 == 999); test/kill_matrix.sh turns each recorded event
 * back into n.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <perfring.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct perfring_event *ev_tick, *ev_msg, *ev_begin, *ev_end;
static unsigned long long nr_events;
static int forever, scribble, exit_early;
static long rate;
static unsigned long long snapshot_at = ~0ull;
static uint64_t *counts; /* --counts: the shared words, or NULL */
static unsigned long oversize; /* --oversize */

enum {
	COUNT_PID,
	COUNT_DONE,
	COUNT_THREADS,
	COUNT_THREAD0 = 8,
	COUNT_TID0 = COUNT_THREAD0 + 64
};
#define COUNTS_SIZE 4096

/* One emit call returned: store the number made so far, after the
 * record (or the drop) it made is in the ring. */
static inline void count_call(uint64_t thread, uint64_t *calls)
{
	++*calls;
	if (counts)
		__atomic_store_n(&counts[COUNT_THREAD0 + thread], *calls,
				 __ATOMIC_RELEASE);
}

static int counts_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	void *m;

	if (fd < 0 || ftruncate(fd, COUNTS_SIZE) < 0) {
		perror(path);
		return -1;
	}
	m = mmap(NULL, COUNTS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		perror(path);
		return -1;
	}
	counts = m;
	counts[COUNT_PID] = (uint64_t)getpid();
	return 0;
}
static unsigned long long touch_after = ~0ull;
static const char *touch_path;

struct tick {
	uint64_t seq, thread, value;
};

struct msg {
	uint32_t seq;
};

struct work {
	uint64_t batch;
};

static void nap_until(struct timespec *t0, unsigned long long done)
{
	struct timespec now, d;
	double due = (double)done / (double)rate, el;

	clock_gettime(CLOCK_MONOTONIC, &now);
	el = (double)(now.tv_sec - t0->tv_sec) +
	     (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
	if (due > el) {
		d.tv_sec = (time_t)(due - el);
		d.tv_nsec = (long)((due - el - (double)d.tv_sec) * 1e9);
		nanosleep(&d, NULL);
	}
}

/* A buggy producer: garbage where the next records go, published by
 * moving data_head over it; then a pause so the recorder reads it. */
static void scribble_own_ring(void)
{
	const char *dir = getenv("PERFRING_SESSION");
	struct perf_event_mmap_page pc0;
	char path[4096];
	unsigned char *m;
	size_t len;
	int fd;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%d-%ld.ring", dir, (int)getpid(),
		 (long)syscall(SYS_gettid));
	fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, &pc0, sizeof(pc0), 0) != sizeof(pc0))
		goto out;
	len = pc0.data_offset + pc0.data_size;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		struct perf_event_mmap_page *pc = (void *)m;
		uint64_t head =
			__atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);

		for (uint64_t i = 0; i < 4096; i++)
			m[pc0.data_offset + (head + i) % pc0.data_size] =
				(unsigned char)(i * 37 + 11);
		__atomic_store_n(&pc->data_head, head + 4096, __ATOMIC_RELEASE);
		/* Until the recorder has read past the garbage (or given up
		 * on the ring, which then stays as it is), so that it sees
		 * it before the next records. */
		for (int i = 0; i < 10000; i++) {
			uint64_t tail = __atomic_load_n(&pc->data_tail,
							__ATOMIC_ACQUIRE);

			if (tail - head < (1ull << 62) && tail - head >= 4096)
				break;
			usleep(1000);
		}
		munmap(m, len);
	}
out:
	if (fd >= 0)
		close(fd);
}

static void *worker(void *arg)
{
	uint64_t thread = (uint64_t)(uintptr_t)arg;
	unsigned long long limit = nr_events;
	uint64_t calls = 0;
	struct timespec t0;
	char text[64];
	unsigned char blob[8];

	memset(blob, 0xab, sizeof(blob));
	if (counts)
		__atomic_store_n(&counts[COUNT_TID0 + thread],
				 (uint64_t)syscall(SYS_gettid),
				 __ATOMIC_RELAXED);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (exit_early && (thread & 1))
		limit /= 2;
	for (unsigned long long seq = 0; forever || seq < limit; seq++) {
		struct tick t = { seq, thread, seq * 7 + thread };

		if (seq % 1000 == 0) {
			struct work w = { seq / 1000 };

			perfring_emit(ev_begin, &w, sizeof(w));
			count_call(thread, &calls);
		}
		perfring_emit(ev_tick, &t, sizeof(t));
		count_call(thread, &calls);
		if (seq % 100 == 0) {
			struct msg m = { (uint32_t)seq };
			struct perfring_var v[2] = {
				{ text, 0 },
				{ blob, (uint32_t)(seq / 100 % 5) },
			};

			snprintf(text, sizeof(text), "msg-%llu-%llu",
				 (unsigned long long)thread, seq);
			perfring_emitv(ev_msg, &m, sizeof(m), v, 2);
			count_call(thread, &calls);
		}
		if (seq % 1000 == 999) {
			struct work w = { seq / 1000 };

			perfring_emit(ev_end, &w, sizeof(w));
			count_call(thread, &calls);
		}
		if (scribble && thread == 0 && seq == limit / 2)
			scribble_own_ring();
		if (thread == 0 && seq == snapshot_at) {
			if (perfring_app_snapshot())
				fprintf(stderr,
					"apptrace: snapshot request failed\n");
			/* Nothing tells a program its snapshot was taken: 1 s
			 * (the recorder reacts within milliseconds) before the
			 * ring moves on. */
			usleep(1000 * 1000);
		}
		if (thread == 0 && seq + 1 == touch_after && touch_path)
			close(open(touch_path, O_WRONLY | O_CREAT | O_CLOEXEC,
				   0600));
		if (rate && seq % 64 == 63)
			nap_until(&t0, seq + 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct perfring_app_stats st = { .sz = sizeof(st) };
	pthread_t tids[64];
	sigset_t stop_signals;
	int threads, hold = 0, sig;

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s THREADS EVENTS [--forever] [--rate N] [--scribble] [--exit-early] [--snapshot-at N] [--counts FILE] [--hold]\n",
			argv[0]);
		return 2;
	}
	threads = atoi(argv[1]);
	nr_events = strtoull(argv[2], NULL, 10);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--forever"))
			forever = 1;
		else if (!strcmp(argv[i], "--scribble"))
			scribble = 1;
		else if (!strcmp(argv[i], "--exit-early"))
			exit_early = 1;
		else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = atol(argv[++i]);
		else if (!strcmp(argv[i], "--snapshot-at") && i + 1 < argc)
			snapshot_at = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--counts") && i + 1 < argc) {
			if (counts_open(argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "--oversize") && i + 1 < argc) {
			oversize = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (!strcmp(argv[i], "--touch-after") && i + 2 < argc) {
			touch_after = strtoull(argv[++i], NULL, 10);
			touch_path = argv[++i];
		}
	}
	if (threads < 1 || threads > 64)
		return 2;
	if (counts)
		counts[COUNT_THREADS] = (uint64_t)threads;
	/* Blocked in every thread; the main thread takes them in sigwait. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	if (hold)
		pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	if (perfring_event_declare("apptest", "tick",
				   "u64 seq, u64 thread, u64 value",
				   &ev_tick) ||
	    perfring_event_declare("apptest", "msg",
				   "u32 seq, string text, bytes blob",
				   &ev_msg) ||
	    perfring_event_declare("apptest", "work_begin", "u64 batch",
				   &ev_begin) ||
	    perfring_event_declare("apptest", "work_end", "u64 batch", &ev_end))
		return 1;
	for (unsigned long i = 0; i < oversize; i++) {
		static unsigned char big[70000];
		struct msg m = { (uint32_t)i };
		struct perfring_var v[2] = { { "big", 0 },
					     { big, sizeof(big) } };
		int err = perfring_emitv(ev_msg, &m, sizeof(m), v, 2);

		if (err != -E2BIG && perfring_app_active)
			fprintf(stderr,
				"apptrace: oversized event: %d, not -E2BIG\n",
				err);
	}
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (counts)
		__atomic_store_n(&counts[COUNT_DONE], 1, __ATOMIC_RELEASE);
	if (hold)
		sigwait(&stop_signals, &sig);
	perfring_app_stats(&st);
	printf("emitted %llu lost %llu rings %u too_large %llu\n",
	       (unsigned long long)st.events, (unsigned long long)st.lost,
	       st.rings, (unsigned long long)st.too_large);
	return 0;
}
