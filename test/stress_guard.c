// SPDX-License-Identifier: MIT
/*
 * Stress: the SIGBUS guard with several reader threads (under ASan and
 * TSan).  Each round forks producer processes that create named rings and
 * emit records with sequence numbers and checksums as fast as they can;
 * reader threads attach them (the guard's registry changing under the
 * other threads' feet) and read and check every record, calling
 * perfring_ring_check() now and then, while the producers truncate their
 * ring files at a moment of their own (to one page or to zero).  Every
 * reader must see its ring die (-EFAULT or -ENODATA), every record it took
 * before that must be intact (a record is checked only after the ring is
 * known alive after copying it, as a careful consumer does), and nobody
 * crashes.  About 2 s (STRESS_SECS overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define NR_RINGS 3
#define REC_TYPE 0x4c00u

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allow_user_segv_handler=1";
}

struct srec {
	struct perf_event_header h;
	uint32_t seq;
	uint32_t csum;
	uint64_t payload[5];
};

struct reader {
	char path[256];
	pthread_t thread;
	uint64_t records, checks;
	int end; /* -EFAULT or -ENODATA */
	int failed;
};

static const char *dir;
static size_t page;

static void quiet_log(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	(void)msg;
}

/* A producer: emits until its own clock says truncate, then does. */
static pid_t producer(const char *path, uint64_t seed)
{
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = 16 * page,
			      .role = PERFRING_ROLE_PRODUCER);
		uint64_t s = seed | 1, t0 = now_ns(),
			 life = 20000000 + rng_next(&s) % 80000000;
		struct perfring_ring *r;
		struct srec rec = { .h = { .type = REC_TYPE,
					   .size = sizeof(rec) } };

		if (perfring_ring_create(&o, &r))
			_exit(2);
		/* Truncate only once the reader is there (it takes the
		 * consumer's pid slot on attach). */
		{
			const struct perfring_ext *ext =
				(const void *)((const char *)
						       perfring_ring_control(
							       r) +
					       PERFRING_EXT_OFFSET);

			while (__atomic_load_n(&ext->consumer_pid,
					       __ATOMIC_ACQUIRE) ==
			       (uint32_t)getpid()) {
				if (now_ns() - t0 > 30000000000ull)
					_exit(4);
				nap_us(100);
			}
			t0 = now_ns();
		}
		while (now_ns() - t0 < life) {
			for (int i = 0; i < 5; i++)
				rec.payload[i] = rng_next(&s);
			rec.csum = 0;
			rec.csum = seq_rec_csum(&rec, sizeof(rec));
			if (perfring_ring_emit(r, &rec, sizeof(rec)) == 0)
				rec.seq++;
			else
				sched_yield();
		}
		if (ftruncate(perfring_ring_fd(r), s & 1 ? 0 : (off_t)page))
			_exit(3);
		_exit(0);
	}
	return pid;
}

static void *read_ring(void *arg)
{
	struct reader *rd = arg;
	struct perfring_ring *r = NULL;
	uint64_t t0 = now_ns(), expect = 0;
	int err;

	/* The producer makes the file: wait until it is a whole ring. */
	while ((err = perfring_ring_attach(rd->path, PERFRING_ROLE_CONSUMER,
					   &r)) != 0) {
		if (now_ns() - t0 > 20000000000ull) {
			rd->failed = 1;
			return NULL;
		}
		nap_us(200);
	}
	for (;;) {
		const struct perf_event_header *h;
		int64_t avail;
		int n;

		if (++rd->checks % 8 == 0 && (err = perfring_ring_check(r))) {
			rd->end = err;
			break;
		}
		avail = perfring_read_begin(r);
		if (avail < 0) {
			rd->end = (int)avail;
			break;
		}
		while ((n = perfring_read_next(r, &h)) > 0) {
			struct perfring_ring_stats st = { .sz = sizeof(st) };
			struct srec rec;
			uint32_t csum;

			memcpy(&rec, h,
			       sizeof(rec) < (size_t)n ? sizeof(rec) :
							 (size_t)n);
			/* Copied while alive: then it must be whole.  (stats
			 * fails on a dead ring without a system call.) */
			if (perfring_ring_stats(r, &st))
				break;
			if (rec.h.type == PERF_RECORD_LOST)
				continue; /* a full ring; seq did not move */
			csum = rec.csum;
			rec.csum = 0;
			if (n != sizeof(rec) || rec.h.type != REC_TYPE ||
			    rec.seq != (uint32_t)expect ||
			    seq_rec_csum(&rec, sizeof(rec)) != csum) {
				rd->failed = 2;
				break;
			}
			expect++;
			rd->records++;
		}
		perfring_read_end(r);
		if (n < 0) {
			rd->end = n;
			break;
		}
		if (rd->failed)
			break;
		if (now_ns() - t0 > 60000000000ull) {
			rd->failed = 3; /* the truncation never showed */
			break;
		}
		if (!avail)
			sched_yield();
	}
	perfring_ring_destroy(r);
	return NULL;
}

int main(void)
{
	uint64_t secs = 2, t0, rounds = 0, records = 0, faults = 0, checked = 0;
	const char *env = getenv("STRESS_SECS");

	if (env)
		secs = strtoull(env, NULL, 10);
	page = (size_t)sysconf(_SC_PAGESIZE);
	dir = test_tmpdir("stress-guard");
	perfring_set_log(quiet_log, NULL, PERFRING_LOG_WARN);
	CHECK_EQ(perfring_sigbus_guard(), 0);
	t0 = now_ns();
	do {
		struct reader rd[NR_RINGS];
		pid_t pid[NR_RINGS];

		memset(rd, 0, sizeof(rd));
		/* Fork first: no reader thread exists while we fork. */
		for (int i = 0; i < NR_RINGS; i++) {
			snprintf(rd[i].path, sizeof(rd[i].path),
				 "%s/r%llu-%d.ring", dir,
				 (unsigned long long)rounds, i);
			pid[i] = producer(rd[i].path,
					  mix64(rounds * 16 + (uint64_t)i));
		}
		for (int i = 0; i < NR_RINGS; i++)
			CHECK_EQ(pthread_create(&rd[i].thread, NULL, read_ring,
						&rd[i]),
				 0);
		for (int i = 0; i < NR_RINGS; i++) {
			int st;

			CHECK_EQ(pthread_join(rd[i].thread, NULL), 0);
			CHECK_EQ(waitpid(pid[i], &st, 0), pid[i]);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "producer %d: status %#x", i, st);
			CHECK(!rd[i].failed,
			      "reader %d failed (%d) after %llu records", i,
			      rd[i].failed, (unsigned long long)rd[i].records);
			CHECK(rd[i].end == -EFAULT || rd[i].end == -ENODATA,
			      "reader %d ended with %d", i, rd[i].end);
			records += rd[i].records;
			faults += rd[i].end == -EFAULT;
			checked += rd[i].end == -ENODATA;
			perfring_ring_remove(rd[i].path);
		}
		rounds++;
	} while (now_ns() - t0 < secs * 1000000000ull);
	printf("stress_guard: %llu rounds, %llu rings, %llu records checked; ends: %llu bus errors survived, %llu found by perfring_ring_check\n",
	       (unsigned long long)rounds,
	       (unsigned long long)(rounds * NR_RINGS),
	       (unsigned long long)records, (unsigned long long)faults,
	       (unsigned long long)checked);
	return 0;
}
