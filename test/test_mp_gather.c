// SPDX-License-Identifier: MIT
/*
 * Gathered multi-producer rings (docs/design.md, section 3 ("Gathered commits")): producers
 * commit by storing their slot and the consumer finds the committed prefix.
 *
 *  - out of order: a later reservation committed first is not read until
 *    the earlier one commits; then both are, in ring order, and data_head in
 *    the control page says where the consumer got to;
 *  - a hole and a sleeping consumer: the commit that closes the hole wakes
 *    it even though that record ends below the watermark;
 *  - across processes: a producer process and a consumer sleeping at every
 *    record (watermark one record), many rounds; a lost wake-up (the
 *    membarrier half of row V missing) shows as a wait that times out;
 *  - rings made by libraries before the flag (data_head moved by the
 *    producers) still work, and a flag without its mode is refused;
 *  - hostile slots are bounded: nothing past one ring, misaligned or stale
 *    ends are no commit, and a bad record behind a slot is skipped.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 91
#define REC 64
#define LONG_MS 30000
#define WOKEN_NS 20000000000ull

static size_t page;
static const char *dir;

struct record {
	struct perf_event_header h;
	uint64_t seq;
	uint64_t pad[6];
};

static uint64_t now_ns(void)
{
	return perfring_clock_ns();
}

static void fill(void *dst, uint64_t seq)
{
	struct record x;

	memset(&x, 0, sizeof(x));
	x.h.type = T_TYPE;
	x.h.size = sizeof(x);
	x.seq = seq;
	memcpy(dst, &x, sizeof(x));
}

static const struct perfring_ext *ext_of(struct perfring_ring *r)
{
	return (const void *)((const char *)perfring_ring_control(r) +
			      PERFRING_EXT_OFFSET);
}

static uint64_t published_head(struct perfring_ring *r)
{
	return atomic_load_explicit(
		(_Atomic uint64_t *)&perfring_ring_control(r)->data_head,
		memory_order_acquire);
}

static uint32_t waiting(struct perfring_ring *r)
{
	return atomic_load_explicit((_Atomic uint32_t *)&ext_of(r)->waiting,
				    memory_order_acquire);
}

static void pair(uint64_t watermark, struct perfring_ring **p,
		 struct perfring_ring **c)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 4 * page,
		      .watermark = watermark,
		      .flags = PERFRING_MODE_MULTI_PRODUCER,
		      .role = PERFRING_ROLE_PRODUCER);

	CHECK_EQ(perfring_ring_create(&o, p), 0);
	CHECK(ext_of(*p)->flags & PERFRING_FLAG_MP_GATHER, "flags %#x",
	      ext_of(*p)->flags);
	CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(*p),
					 perfring_ring_wait_fd(*p),
					 PERFRING_ROLE_CONSUMER, c),
		 0);
}

/* Reads a batch; the sequence numbers must be @first, @first + 1, ... */
static uint64_t read_seqs(struct perfring_ring *c, uint64_t first)
{
	const struct perf_event_header *h;
	uint64_t n = 0;
	int sz;

	if (perfring_read_begin(c) <= 0)
		return 0;
	while ((sz = perfring_read_next(c, &h)) > 0) {
		CHECK_EQ(h->type, T_TYPE);
		CHECK_EQ(((const struct record *)h)->seq, first + n);
		n++;
	}
	perfring_read_end(c);
	return n;
}

static void out_of_order(void)
{
	struct perfring_ring *p, *c;
	struct perfring_output a, b;
	uint64_t start;

	pair(4 * page / 2, &p, &c);
	start = published_head(c);
	CHECK_EQ(perfring_output_begin(&a, p, REC), 0);
	CHECK_EQ(perfring_output_begin(&b, p, REC), 0);
	fill(a.data, 0);
	fill(b.data, 1);
	perfring_output_end(&b);
	CHECK_EQ(perfring_read_begin(c), 0); /* a hole at the front */
	CHECK_EQ(published_head(c), start);
	perfring_output_end(&a);
	CHECK_EQ(read_seqs(c, 0), 2);
	CHECK_EQ(published_head(c), start + 2 * REC);
	/* The producer alone never moves data_head. */
	CHECK_EQ(perfring_output_begin(&a, p, REC), 0);
	fill(a.data, 2);
	perfring_output_end(&a);
	CHECK_EQ(published_head(p), start + 2 * REC);
	CHECK_EQ(read_seqs(c, 2), 1);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
	fprintf(stderr, "out of order: held back at the hole, then in order\n");
}

struct waiter {
	struct perfring_ring *c;
	uint64_t want;
	int waits;
	uint64_t elapsed_ns;
	atomic_int done;
};

/* Waits until @want bytes are readable, waking up as often as it takes. */
static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	uint64_t t0 = now_ns();
	int64_t avail = 0;

	while (avail < (int64_t)w->want) {
		int ret = perfring_ring_wait(w->c, LONG_MS);

		CHECK(ret >= 0, "wait: %d", ret);
		w->waits++;
		CHECK(now_ns() - t0 < WOKEN_NS, "not woken");
		avail = perfring_read_begin(w->c);
		CHECK(avail >= 0, "reader_begin %lld", (long long)avail);
		if (avail)
			perfring_read_end(w->c); /* not consumed */
	}
	w->elapsed_ns = now_ns() - t0;
	atomic_store(&w->done, 1);
	return NULL;
}

static void until(struct perfring_ring *r, uint32_t want)
{
	uint64_t t0 = now_ns();

	while (waiting(r) != want) {
		CHECK(now_ns() - t0 < WOKEN_NS, "waiting never became %u",
		      want);
		sched_yield();
	}
}

static void hole_wakeup(void)
{
	struct perfring_ring *p, *c;
	struct perfring_output a, b;
	struct waiter w = { 0 };
	pthread_t t;

	/* Woken at two records: the second reservation reaches it, the
	 * first closes the hole. */
	pair(2 * REC, &p, &c);
	w.c = c;
	w.want = 2 * REC;
	CHECK_EQ(perfring_output_begin(&a, p, REC), 0);
	CHECK_EQ(perfring_output_begin(&b, p, REC), 0);
	fill(a.data, 0);
	fill(b.data, 1);
	CHECK_EQ(pthread_create(&t, NULL, wait_thread, &w), 0);
	until(p, 1);
	perfring_output_end(&b); /* may wake it to a hole: it sleeps again */
	until(p, 1);
	CHECK(!atomic_load(&w.done), "read across a hole");
	perfring_output_end(&a); /* ends below the watermark, must wake */
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(w.elapsed_ns < WOKEN_NS, "woken late");
	CHECK_EQ(read_seqs(c, 0), 2);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
	fprintf(stderr,
		"hole: the closing commit woke the consumer (%d waits)\n",
		w.waits);
}

/* A producer process; the parent sleeps for every record. */
static void ping_pong_xproc(void)
{
	const int rounds = 2000;
	char path[256];
	struct perfring_ring *c;
	uint64_t t0, worst = 0;
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/pingpong", dir);
	{
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = 4 * page, .watermark = REC,
			      .flags = PERFRING_MODE_MULTI_PRODUCER,
			      .role = PERFRING_ROLE_CONSUMER);

		CHECK_EQ(perfring_ring_create(&o, &c), 0);
	}
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *p;
		struct perfring_output h;

		if (perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p))
			_exit(10);
		for (int i = 0; i < rounds; i++) {
			uint64_t t = now_ns();

			/* Commit only once the parent sleeps (or is about
			 * to): the commit has to be what wakes it. */
			while (!waiting(p)) {
				if (now_ns() - t > WOKEN_NS)
					_exit(11);
				sched_yield();
			}
			if (perfring_output_begin(&h, p, REC))
				_exit(12);
			fill(h.data, (uint64_t)i);
			perfring_output_end(&h);
		}
		perfring_ring_destroy(p);
		_exit(0);
	}
	for (int i = 0; i < rounds; i++) {
		uint64_t got = 0, t = now_ns(), dt;

		while (!got) {
			int ret = perfring_ring_wait(c, LONG_MS);

			CHECK(ret >= 0, "wait %d", ret);
			CHECK(now_ns() - t < WOKEN_NS,
			      "round %d: no wake-up for %" PRIu64 " ns", i,
			      now_ns() - t);
			got = read_seqs(c, (uint64_t)i);
		}
		CHECK_EQ(got, 1);
		dt = now_ns() - t;
		worst = dt > worst ? dt : worst;
	}
	t0 = now_ns();
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %#x",
	      status);
	(void)t0;
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	fprintf(stderr,
		"ping-pong across processes: %d wake-ups, none lost (slowest %.1f ms)\n",
		rounds, (double)worst / 1e6);
}

/* Flips flag bits in a named ring's file. */
static void set_flags(const char *path, uint32_t flags)
{
	struct perfring_ext *ext;
	int fd = open(path, O_RDWR);
	void *m;

	CHECK(fd >= 0, "open %s", path);
	m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap");
	ext = (void *)((char *)m + PERFRING_EXT_OFFSET);
	ext->flags = flags;
	munmap(m, page);
	close(fd);
}

static void older_rings(void)
{
	char path[256];
	struct perfring_ring *mk, *p, *c;

	snprintf(path, sizeof(path), "%s/old", dir);
	{
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = 4 * page, .watermark = REC,
			      .flags = PERFRING_MODE_MULTI_PRODUCER,
			      .role = PERFRING_ROLE_CONSUMER);

		CHECK_EQ(perfring_ring_create(&o, &mk), 0);
		perfring_ring_destroy(mk);
	}
	/* The flag without its mode means nothing known: refused. */
	set_flags(path, PERFRING_FLAG_MP_GATHER);
	perfring_set_log(NULL, NULL, PERFRING_LOG_WARN);
	CHECK(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c) < 0,
	      "gather flag without multi-producer accepted");
	/* As a library before the flag made it: producers move data_head. */
	set_flags(path, PERFRING_MODE_MULTI_PRODUCER);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	for (int i = 0; i < 3; i++) {
		struct perfring_output h;

		CHECK_EQ(perfring_output_begin(&h, p, REC), 0);
		fill(h.data, (uint64_t)i);
		perfring_output_end(&h);
	}
	CHECK_EQ(published_head(p), 3 * REC);
	CHECK_EQ(read_seqs(c, 0), 3);
	perfring_ring_destroy(p);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	fprintf(stderr,
		"rings without the flag: producers publish, as before\n");
}

static void hostile_slots(void)
{
	char path[256];
	struct perfring_ring *c;
	const uint64_t size = 4 * page;
	const struct perf_event_header *h;
	unsigned char *m;
	uint64_t *slots;
	int fd;

	snprintf(path, sizeof(path), "%s/hostile", dir);
	{
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = size, .watermark = REC,
			      .flags = PERFRING_MODE_MULTI_PRODUCER,
			      .role = PERFRING_ROLE_CONSUMER);

		CHECK_EQ(perfring_ring_create(&o, &c), 0);
	}
	fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open");
	m = mmap(NULL, page + 2 * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	CHECK(m != MAP_FAILED, "mmap");
	slots = (void *)(m + page + size);
	/* Past one ring, misaligned, before its start: no commit. */
	slots[0] = size + 8;
	CHECK_EQ(perfring_read_begin(c), 0);
	slots[0] = 68;
	CHECK_EQ(perfring_read_begin(c), 0);
	slots[0] = (uint64_t)0 - 64; /* an end of an older lap */
	CHECK_EQ(perfring_read_begin(c), 0);
	/* A chain of "commits" that would run a whole ring and beyond:
	 * gathering stops at one ring. */
	for (uint64_t i = 0; i < size / 8; i++)
		slots[i] = i * 8 + 64;
	{
		int64_t n = perfring_read_begin(c);

		CHECK(n > 0 && (uint64_t)n <= size, "gathered %lld",
		      (long long)n);
		/* The records behind them are zeros: refused, skipped. */
		CHECK(perfring_read_next(c, &h) < 0, "zero record read");
		perfring_read_end(c);
	}
	munmap(m, page + 2 * size);
	close(fd);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	fprintf(stderr, "hostile slots: bounded to one ring, nothing read\n");
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	dir = test_tmpdir("gather");
	out_of_order();
	hole_wakeup();
	ping_pong_xproc();
	older_rings();
	hostile_slots();
	return test_exit();
}
