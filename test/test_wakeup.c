// SPDX-License-Identifier: MIT
/*
 * Wake-ups.  A consumer thread sleeps in perfring_ring_wait(): less than
 * the watermark W does not wake it (it times out, no wake-up counted);
 * crossing W wakes it well before the timeout; 100000 records with a
 * sleeping consumer cost far fewer wake-ups than records; wakeup_events = N
 * wakes after N records; perfring_ring_wait_prepare() returns 1 without
 * sleeping when W bytes already wait; our wait fd works in one epoll set
 * with a kernel perf fd; a named ring's FIFO wakes a consumer across fork.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 75
#define REC 64

static size_t page;
static const char *dir; /* test_tmpdir() */

/*
 * Waits that must end by a wake-up get a timeout far beyond any scheduling
 * delay of a loaded machine; a wake-up is told from a timeout by the
 * wait's result and by taking less than WOKEN_NS.  Only the checks that
 * something does NOT happen within a time use short sleeps: load can only
 * delay a wake-up, never make one appear.
 */
#define LONG_MS 30000
#define WOKEN_NS 20000000000ull

static uint64_t now_ns(void)
{
	return perfring_clock_ns();
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int emit(struct perfring_ring *r, uint64_t seq)
{
	struct {
		struct perf_event_header h;
		uint64_t seq;
		uint64_t pad[6];
	} x;

	memset(&x, 0, sizeof(x));
	x.h.type = T_TYPE;
	x.h.size = sizeof(x);
	x.seq = seq;
	return perfring_ring_emit(r, &x, sizeof(x));
}

static uint32_t waiting(struct perfring_ring *r)
{
	const struct perfring_ext *ext =
		(const void *)((const char *)perfring_ring_control(r) +
			       PERFRING_EXT_OFFSET);

	return atomic_load_explicit((_Atomic uint32_t *)&ext->waiting,
				    memory_order_acquire);
}

/* Waits (up to WOKEN_NS) until the consumer has marked itself waiting. */
static void until_waiting(struct perfring_ring *r)
{
	uint64_t t0 = now_ns();

	while (!waiting(r)) {
		CHECK(now_ns() - t0 < WOKEN_NS, "consumer never waited");
		sched_yield();
	}
}

static struct perfring_ring_stats stats(struct perfring_ring *r)
{
	struct perfring_ring_stats st = { .sz = sizeof(st) };

	CHECK_EQ(perfring_ring_stats(r, &st), 0);
	return st;
}

/* A producer handle and a consumer handle on one memfd ring. */
static void pair(uint64_t size, uint64_t watermark, uint32_t wakeup_events,
		 unsigned int flags, struct perfring_ring **p,
		 struct perfring_ring **c)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = size,
		      .watermark = watermark, .wakeup_events = wakeup_events,
		      .flags = flags, .role = PERFRING_ROLE_PRODUCER);

	CHECK_EQ(perfring_ring_create(&o, p), 0);
	CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(*p),
					 perfring_ring_wait_fd(*p),
					 PERFRING_ROLE_CONSUMER, c),
		 0);
}

/* ---- one wait in a thread ------------------------------------------------ */

struct waiter {
	struct perfring_ring *r;
	int timeout_ms;
	int ret;
	uint64_t elapsed_ns;
	atomic_int done;
	pthread_t t;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	uint64_t t0 = now_ns();

	w->ret = perfring_ring_wait(w->r, w->timeout_ms);
	w->elapsed_ns = now_ns() - t0;
	atomic_store(&w->done, 1);
	return NULL;
}

static void wait_start(struct waiter *w, struct perfring_ring *r,
		       int timeout_ms)
{
	w->r = r;
	w->timeout_ms = timeout_ms;
	w->ret = -1000;
	atomic_store(&w->done, 0);
	CHECK_EQ(pthread_create(&w->t, NULL, wait_thread, w), 0);
}

static void wait_join(struct waiter *w)
{
	CHECK_EQ(pthread_join(w->t, NULL), 0);
}

static void drain(struct perfring_ring *c)
{
	const struct perf_event_header *h;

	if (perfring_read_begin(c) > 0)
		while (perfring_read_next(c, &h) > 0)
			;
	perfring_read_end(c);
}

static void watermark(unsigned int flags)
{
	const uint64_t W = 8192;
	struct perfring_ring *p, *c;
	struct waiter w;
	uint64_t seq = 0;

	pair(16 * page, W, 0, flags, &p, &c);

	/* Empty ring: times out, returns 0. */
	wait_start(&w, c, 50);
	wait_join(&w);
	CHECK_EQ(w.ret, 0);
	CHECK(w.elapsed_ns >= 45000000ull, "timed out after %" PRIu64 " ns",
	      w.elapsed_ns);
	CHECK_EQ(waiting(c), 0); /* wait_finish cleared the mark */

	/* Less than W: no wake-up; the wait runs into its timeout. */
	wait_start(&w, c, 300);
	until_waiting(c);
	for (uint64_t i = 0; i < W / REC - 1; i++)
		CHECK_EQ(emit(p, seq++), 0);
	wait_join(&w);
	CHECK(w.elapsed_ns >= 290000000ull,
	      "woken after %" PRIu64 " ns with %" PRIu64 " < %" PRIu64
	      " bytes waiting",
	      w.elapsed_ns, W - REC, W);
	CHECK(w.ret == 0 || w.ret == 1, "wait returned %d", w.ret);
	CHECK_EQ(stats(p).wakeups, 0);
	CHECK_EQ(stats(c).head - stats(c).tail, W - REC);

	/* Crossing W wakes it, long before its timeout. */
	wait_start(&w, c, LONG_MS);
	until_waiting(c);
	CHECK(!atomic_load(&w.done), "consumer returned early");
	CHECK_EQ(emit(p, seq++), 0); /* exactly W now */
	wait_join(&w);
	CHECK_EQ(w.ret, 1);
	CHECK(w.elapsed_ns < WOKEN_NS, "woken only after %" PRIu64 " ns",
	      w.elapsed_ns);
	CHECK_EQ(stats(p).wakeups, 1);
	drain(c);

	/* W already waiting: prepare says so and does not arm. */
	for (uint64_t i = 0; i < W / REC; i++)
		CHECK_EQ(emit(p, seq++), 0);
	CHECK_EQ(perfring_ring_wait_prepare(c), 1);
	CHECK_EQ(waiting(c), 0);
	{
		uint64_t t0 = now_ns();

		/* Nothing would wake it: sleeping means its whole timeout. */
		CHECK_EQ(perfring_ring_wait(c, LONG_MS), 1);
		CHECK(now_ns() - t0 < WOKEN_NS, "wait slept with W waiting");
	}
	CHECK_EQ(stats(p).wakeups, 1);
	drain(c);

	/* By hand: prepare arms, the fd becomes readable when W is crossed,
	 * finish drains it and clears the mark. */
	{
		struct pollfd pfd = { .fd = perfring_ring_wait_fd(c),
				      .events = POLLIN };

		CHECK_EQ(perfring_ring_wait_prepare(c), 0);
		CHECK_EQ(waiting(c), 1);
		CHECK_EQ(poll(&pfd, 1, 0), 0);
		for (uint64_t i = 0; i < W / REC - 1; i++)
			CHECK_EQ(emit(p, seq++), 0);
		CHECK_EQ(poll(&pfd, 1, 0), 0);
		CHECK_EQ(emit(p, seq++), 0);
		CHECK_EQ(poll(&pfd, 1, 0), 1);
		CHECK_EQ(waiting(c), 0); /* the producer took the mark */
		perfring_ring_wait_finish(c);
		CHECK_EQ(poll(&pfd, 1, 0), 0);
		CHECK_EQ(stats(p).wakeups, 2);
		drain(c);
	}
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* ---- many records, few wake-ups ------------------------------------------ */

struct bulk {
	struct perfring_ring *c;
	_Atomic uint64_t n; /* records offered (grows at the very end) */
	uint64_t got, lost, waits, timeouts;
};

static void *bulk_consumer(void *arg)
{
	struct bulk *b = arg;
	const struct perf_event_header *h;
	uint64_t t0 = now_ns();

	while (b->got + b->lost < b->n) {
		int ret = perfring_ring_wait(b->c, 200);
		int sz;

		CHECK(ret >= 0, "wait: %d", ret);
		b->waits++;
		if (ret == 0)
			b->timeouts++;
		CHECK(now_ns() - t0 < WOKEN_NS * 3,
		      "bulk consumer stuck: %" PRIu64 " + %" PRIu64
		      " lost of %" PRIu64,
		      b->got, b->lost, b->n);
		if (perfring_read_begin(b->c) <= 0)
			continue;
		while ((sz = perfring_read_next(b->c, &h)) > 0) {
			if (h->type == PERF_RECORD_LOST) {
				b->lost +=
					((const struct perfring_lost_record *)h)
						->lost;
				continue;
			}
			CHECK(h->type == T_TYPE && sz == REC, "record");
			/* Every record before it was read or reported lost. */
			CHECK(((const uint64_t *)h)[1] == b->got + b->lost,
			      "record %" PRIu64 " after %" PRIu64
			      " read + %" PRIu64 " lost",
			      ((const uint64_t *)h)[1], b->got, b->lost);
			b->got++;
		}
		CHECK_EQ(sz, 0);
		perfring_read_end(b->c);
	}
	return NULL;
}

static void many(unsigned int flags)
{
	struct perfring_ring *p, *c;
	struct bulk b = { NULL, 100000, 0, 0, 0, 0 };
	struct perfring_ring_stats st;
	pthread_t t;

	pair(16 * page, 16384, 0, flags, &p, &c);
	b.c = c;
	CHECK_EQ(pthread_create(&t, NULL, bulk_consumer, &b), 0);
	for (uint64_t i = 0; i < b.n; i++) {
		int err = emit(p, i);

		CHECK(err == 0 || err == -ENOSPC, "emit: %d", err);
		if (err == -ENOSPC)
			sched_yield();
	}
	perfring_ring_flush(p);
	/* A last record carries the LOST count of any final drops. */
	st = stats(p);
	if (st.lost_pending) {
		b.n++;
		while (emit(p, b.n - 1) == -ENOSPC) {
			b.n++;
			sched_yield();
		}
		perfring_ring_flush(p);
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	st = stats(p);
	CHECK_EQ(b.got + b.lost, b.n);
	CHECK_EQ(st.lost_total, b.lost);
	fprintf(stderr,
		"%s: %" PRIu64 " records (%" PRIu64 " lost), %" PRIu64
		" waits (%" PRIu64 " timed out), %" PRIu64 " wake-ups\n",
		flags ? "mp" : "sp", b.n, b.lost, b.waits, b.timeouts,
		st.wakeups);
	CHECK(st.wakeups > 0, "no wake-ups at all");
	CHECK(st.wakeups * 20 < b.n,
	      "%" PRIu64 " wake-ups for %" PRIu64 " records", st.wakeups, b.n);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* ---- wakeup_events --------------------------------------------------------- */

static void events(unsigned int flags)
{
	const uint32_t N = 10;
	struct perfring_ring *p, *c;
	struct waiter w;
	uint64_t seq = 0;

	pair(16 * page, 0, N, flags, &p, &c);
	for (int round = 0; round < 3; round++) {
		wait_start(&w, c, LONG_MS);
		until_waiting(c);
		for (uint32_t i = 0; i < N - 1; i++)
			CHECK_EQ(emit(p, seq++), 0);
		/* Part of the test: no wake-up within 30 ms of N - 1 records
		 * (one would come at once; load only delays it). */
		sleep_ms(30);
		CHECK(!atomic_load(&w.done), "woken after %u < %u records",
		      N - 1, N);
		CHECK_EQ(stats(p).wakeups, (uint64_t)round);
		CHECK_EQ(emit(p, seq++), 0);
		wait_join(&w);
		CHECK_EQ(w.ret, 1);
		CHECK(w.elapsed_ns < WOKEN_NS,
		      "woken only after %" PRIu64 " ns", w.elapsed_ns);
		CHECK_EQ(stats(p).wakeups, (uint64_t)round + 1);
		drain(c);
	}
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* ---- epoll with a kernel perf fd ------------------------------------------- */

static void epoll_mixed(void)
{
	const uint64_t W = 4096;
	struct perf_event_attr attr;
	struct perfring_ring *p, *c, *k;
	struct epoll_event ev, out[4];
	size_t klen = 2 * page;
	void *kbase;
	int ep, pfd, ours, n;
	uint64_t seq = 0;
	char oldname[17] = "";

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.comm = 1;
	attr.watermark = 1; /* side-band records wake by watermark */
	attr.wakeup_watermark = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	pfd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			   PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS ||
			errno == ENOENT)) {
		REFUSED("epoll with a perf fd: perf_event_open: %s",
			strerror(errno));
		return;
	}
	CHECK(pfd >= 0, "perf_event_open: %s", strerror(errno));
	kbase = mmap(NULL, klen, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	CHECK(kbase != MAP_FAILED, "mmap perf: %s", strerror(errno));
	CHECK_EQ(perfring_ring_wrap_kernel(kbase, klen, pfd, false, &k), 0);
	CHECK_EQ(perfring_ring_wait_fd(k), pfd);
	prctl(PR_GET_NAME, oldname);

	pair(4 * page, W, 0, 0, &p, &c);
	ours = perfring_ring_wait_fd(c);
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0, "epoll_create1");
	ev.events = EPOLLIN;
	ev.data.fd = ours;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ours, &ev), 0);
	ev.data.fd = pfd;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, pfd, &ev), 0);

	CHECK_EQ(perfring_ring_wait_prepare(c), 0);
	CHECK_EQ(perfring_ring_wait_prepare(k), 0);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);

	/* Our ring crosses W: only our fd. */
	for (uint64_t i = 0; i < W / REC; i++)
		CHECK_EQ(emit(p, seq++), 0);
	n = epoll_wait(ep, out, 4, LONG_MS);
	CHECK(n == 1 && out[0].data.fd == ours,
	      "epoll: %d events, fd %d (ours %d)", n,
	      n > 0 ? out[0].data.fd : -1, ours);
	perfring_ring_wait_finish(c);
	drain(c);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);

	/* A kernel record: only the perf fd. */
	CHECK_EQ(prctl(PR_SET_NAME, "epolltest"), 0);
	n = epoll_wait(ep, out, 4, LONG_MS);
	CHECK(n == 1 && out[0].data.fd == pfd,
	      "epoll: %d events, fd %d (perf %d)", n,
	      n > 0 ? out[0].data.fd : -1, pfd);
	CHECK_EQ(perfring_ring_wait_prepare(k), 1); /* data waits there */
	drain(k);
	CHECK_EQ(perfring_ring_wait_prepare(k), 0);

	/* Both at once. */
	CHECK_EQ(perfring_ring_wait_prepare(c), 0);
	for (uint64_t i = 0; i < W / REC; i++)
		CHECK_EQ(emit(p, seq++), 0);
	CHECK_EQ(prctl(PR_SET_NAME, oldname), 0);
	{
		int seen_ours = 0, seen_perf = 0;
		uint64_t t0 = now_ns();

		while ((!seen_ours || !seen_perf) && now_ns() - t0 < WOKEN_NS) {
			n = epoll_wait(ep, out, 4, 500);
			for (int i = 0; i < n; i++) {
				seen_ours |= out[i].data.fd == ours;
				seen_perf |= out[i].data.fd == pfd;
			}
		}
		CHECK(seen_ours && seen_perf, "epoll: ours %d perf %d",
		      seen_ours, seen_perf);
	}
	perfring_ring_wait_finish(c);
	drain(c);
	drain(k);
	close(ep);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
	perfring_ring_destroy(k);
	munmap(kbase, klen);
	close(pfd);
}

/* ---- named ring: FIFO across fork ---------------------------------------- */

static void named_fork(void)
{
	char path[256];
	const uint64_t W = 8192;
	struct perfring_ring *c;
	const struct perf_event_header *h;
	uint64_t got = 0, t0;
	int status, sz, ret;
	pid_t pid;

	dir = test_tmpdir("wake");
	snprintf(path, sizeof(path), "%s/ring", dir);
	{
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = 8 * page, .watermark = W,
			      .role = PERFRING_ROLE_CONSUMER);

		CHECK_EQ(perfring_ring_create(&o, &c), 0);
	}
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *p;
		uint64_t t = now_ns();

		if (perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p))
			_exit(10);
		/* Wait for the parent to sleep, then trickle below W, then
		 * cross it. */
		while (!waiting(p)) {
			if (now_ns() - t > WOKEN_NS)
				_exit(11);
			sched_yield();
		}
		for (uint64_t i = 0; i < W / REC - 1; i++)
			if (emit(p, i))
				_exit(12);
		/* Part of the test: the parent must not wake below W. */
		sleep_ms(100);
		if (emit(p, W / REC - 1))
			_exit(13);
		perfring_ring_destroy(p);
		_exit(0);
	}
	t0 = now_ns();
	ret = perfring_ring_wait(c, LONG_MS);
	CHECK_EQ(ret, 1);
	/* Not before the child crossed W (>= 100 ms after its first records). */
	CHECK(now_ns() - t0 >= 90000000ull, "woken early, after %" PRIu64 " ns",
	      now_ns() - t0);
	CHECK(now_ns() - t0 < WOKEN_NS, "woken late");
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %#x",
	      status);
	CHECK_EQ(perfring_read_begin(c), (int64_t)W);
	while ((sz = perfring_read_next(c, &h)) > 0) {
		CHECK_EQ(((const uint64_t *)h)[1], got);
		got++;
	}
	perfring_read_end(c);
	CHECK_EQ(got, W / REC);
	CHECK_EQ(stats(c).wakeups, 1);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	CHECK_EQ(rmdir(dir), 0);
}

/*
 * A flush that finds nobody waiting is not lost: the consumer between a
 * batch and arming again (waiting 0), the producer's last records under
 * the watermark and its flush, then the consumer arms.  It must not sleep
 * on those records (the race test_consumer once lost 60 s to).  Run in
 * that order in one thread, so the interleaving is the bad one every time.
 */
static void flush_unwatched(unsigned int flags)
{
	struct perfring_ring *p, *c;

	pair(16 * page, 8 * page, 0, flags, &p, &c);
	CHECK_EQ(perfring_ring_wait_prepare(c), 0); /* armed, empty */
	perfring_ring_wait_finish(c); /* disarmed: between two batches */
	CHECK_EQ(waiting(c), 0u);
	CHECK_EQ(emit(p, 1), 0); /* far under the watermark */
	perfring_ring_flush(p); /* finds nobody waiting */
	CHECK(perfring_ring_wait_prepare(c) == 1,
	      "%s: a flush while the consumer was between batches was lost",
	      flags ? "MP" : "SP");
	drain(c);
	/* seen once: the next arm sleeps again */
	CHECK_EQ(perfring_ring_wait_prepare(c), 0);
	perfring_ring_wait_finish(c);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
	printf("flush while the consumer is between batches: read, not slept on (%s)\n",
	       flags ? "MP" : "SP");
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	watermark(0);
	watermark(PERFRING_MODE_MULTI_PRODUCER);
	events(0);
	events(PERFRING_MODE_MULTI_PRODUCER);
	many(0);
	many(PERFRING_MODE_MULTI_PRODUCER);
	epoll_mixed();
	named_fork();
	flush_unwatched(0);
	flush_unwatched(PERFRING_MODE_MULTI_PRODUCER);
	return test_exit();
}
