// SPDX-License-Identifier: MIT
/*
 * The consumer object (perfring_consumer_*), with real rings, a real
 * kernel perf event and a real truncating producer process:
 *  - many rings, one callback: exact counts, every ring in order, records
 *    handed out as copies (or in place with ZERO_COPY);
 *  - LOST records delivered and counted;
 *  - wake-ups: poll sleeps until the watermark (not spinning), a ring
 *    already over its watermark when added is read at once, data below it
 *    is read after the timeout;
 *  - a kernel perf fd (page-fault samples of this thread) mapped by the
 *    consumer; a task event whose task exits hangs up and leaves the set
 *    without turning poll into a busy loop;
 *  - a callback that stops consumption (negative: returned; positive: the
 *    count so far), nothing lost or repeated;
 *  - the epoll descriptor nested in an outer epoll;
 *  - a ring whose producer truncates it (SIGBUS guard installed) is dropped
 *    with -EFAULT, the other rings go on;
 *  - refusals (overwrite ring, duplicate, bad opts).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define T_TYPE 77
#define NRINGS 16

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	/* The SIGBUS guard must see the faults (test_guard does the same). */
	return "allow_user_segv_handler=1";
}

static size_t page;
static const char *dir;

struct trec {
	struct perf_event_header h;
	uint64_t seq;
	uint64_t ring_id;
};

/* What one ring's records must look like, as the callback sees them. */
struct track {
	uint64_t id;
	struct perfring_ring *ring;
	uint64_t next_seq; /* the seq the next record must carry */
	uint64_t got, lost, lost_records;
	bool zero_copy;
};

/* Stop rule shared by all rings: after @stop_after records, return
 * @stop_value (0: never). */
static uint64_t calls, stop_after;
static int stop_value;

static bool in_mapping(struct perfring_ring *r, const void *p)
{
	const char *base = (const char *)perfring_ring_control(r);
	size_t len = page + 2 * (size_t)perfring_ring_data_size(r);

	return (const char *)p >= base && (const char *)p < base + len;
}

static int on_record(const struct perf_event_header *rec, size_t size,
		     void *ctx)
{
	struct track *t = ctx;
	struct trec r;

	calls++;
	CHECK(t->zero_copy == in_mapping(t->ring, rec),
	      "ring %llu: record %s the mapping", (unsigned long long)t->id,
	      t->zero_copy ? "outside" : "inside");
	if (rec->type == PERF_RECORD_LOST) {
		const struct perfring_lost_record *l = (const void *)rec;

		CHECK_EQ(size, sizeof(*l));
		t->lost += l->lost;
		t->lost_records++;
		t->next_seq += l->lost; /* the dropped ones had these seqs */
	} else {
		CHECK_EQ(rec->type, T_TYPE);
		CHECK_EQ(size, sizeof(r));
		memcpy(&r, rec, sizeof(r));
		CHECK_EQ(r.ring_id, t->id);
		CHECK(r.seq == t->next_seq, "ring %llu: seq %llu, want %llu",
		      (unsigned long long)t->id, (unsigned long long)r.seq,
		      (unsigned long long)t->next_seq);
		t->next_seq++;
		t->got++;
	}
	if (stop_after && calls == stop_after)
		return stop_value;
	return 0;
}

static struct perfring_ring *make_ring(uint64_t size, uint64_t watermark)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = size,
		      .watermark = watermark);
	struct perfring_ring *r;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	return r;
}

/* Emits the next record of @t's ring (@seq counts attempts, drops too). */
static int emit(struct track *t, uint64_t *seq)
{
	struct trec r = { { T_TYPE, 0, sizeof(r) }, *seq, t->id };

	(*seq)++;
	return perfring_ring_emit(t->ring, &r, sizeof(r));
}

static struct perfring_consumer *make_consumer(unsigned int flags)
{
	PERFRING_OPTS(perfring_consumer_opts, o, .flags = flags);
	struct perfring_consumer *c;

	CHECK_EQ(perfring_consumer_create(&o, &c), 0);
	return c;
}

static struct perfring_consumer_stats stats_of(struct perfring_consumer *c)
{
	struct perfring_consumer_stats st = { .sz = sizeof(st) };

	CHECK_EQ(perfring_consumer_stats(c, &st), 0);
	CHECK_EQ(st.sz, sizeof(st));
	return st;
}

/* ---- many rings, one callback ------------------------------------------ */

static void many_rings(unsigned int flags)
{
	struct perfring_consumer *c = make_consumer(flags);
	struct track t[NRINGS];
	uint64_t seq[NRINGS] = { 0 }, got = 0, dropped = 0;
	struct perfring_consumer_stats st;

	for (int i = 0; i < NRINGS; i++) {
		t[i] = (struct track){ .id = (uint64_t)i,
				       .ring = make_ring(4 * page, 0),
				       .zero_copy = flags != 0 };
		CHECK_EQ(perfring_consumer_add_ring(c, t[i].ring, on_record,
						    &t[i]),
			 i);
	}
	/* Several rounds, each ring a different count; the rings wrap. */
	for (int round = 0; round < 6; round++) {
		uint64_t n = 0;

		for (int i = 0; i < NRINGS; i++)
			for (int k = 0; k < 100 + i * 7 + round; k++, n++)
				CHECK_EQ(emit(&t[i], &seq[i]), 0);
		CHECK_EQ(perfring_consumer_consume(c), (int)n);
	}
	/* Ring 5 overflows: the drops come back as one LOST record in front
	 * of the next record that fits. */
	while (emit(&t[5], &seq[5]) == 0)
		;
	dropped = 1;
	for (int k = 0; k < 9; k++, dropped++)
		CHECK_EQ(emit(&t[5], &seq[5]), -ENOSPC);
	CHECK(perfring_consumer_consume(c) > 0, "the full ring is read");
	CHECK_EQ(emit(&t[5], &seq[5]), 0);
	CHECK_EQ(perfring_consumer_consume(c), 2); /* LOST + the record */
	CHECK_EQ(t[5].lost, dropped);
	CHECK_EQ(t[5].lost_records, 1);
	for (int i = 0; i < NRINGS; i++) {
		CHECK_EQ(t[i].next_seq, seq[i]);
		CHECK_EQ(t[i].got + t[i].lost, seq[i]);
	}
	st = stats_of(c);
	CHECK_EQ(st.sources, NRINGS);
	CHECK_EQ(st.lost, dropped);
	CHECK_EQ(st.lost_records, 1);
	CHECK_EQ(st.dropped, 0);
	for (int i = 0; i < NRINGS; i++)
		got += t[i].got;
	CHECK_EQ(st.records, got + 1);
	CHECK_EQ(perfring_consumer_consume(c), 0);
	perfring_consumer_destroy(c);
	for (int i = 0; i < NRINGS; i++)
		perfring_ring_destroy(t[i].ring);
	fprintf(stderr,
		"%d rings, one callback%s: %llu records in order, %llu dropped delivered as one LOST\n",
		NRINGS, flags ? " (zero copy)" : " (copies)",
		(unsigned long long)got, (unsigned long long)dropped);
}

/* ---- wake-ups ------------------------------------------------------------ */

struct producer_arg {
	struct track *t;
	uint64_t *seq;
	int n;
	int start_fd; /* read one byte before producing */
};

static void *producer(void *arg)
{
	struct producer_arg *a = arg;
	char b;

	if (a->start_fd >= 0 && read(a->start_fd, &b, 1) != 1)
		return NULL;
	for (int i = 0; i < a->n; i++)
		if (emit(a->t, a->seq))
			return NULL; /* the test sees a short count */
	perfring_ring_flush(a->t->ring);
	return NULL;
}

static void wakeups(void)
{
	struct perfring_consumer *c = make_consumer(0);
	struct track t = { .id = 1, .ring = make_ring(8 * page, page) };
	uint64_t seq = 0, t0, ms;
	struct producer_arg a = { &t, &seq, 0, -1 };
	int go[2], n, got = 0;
	pthread_t th;

	CHECK_EQ(perfring_consumer_add_ring(c, t.ring, on_record, &t), 0);
	/* Nothing waits: poll sleeps its timeout (a busy loop returns at
	 * once; a loaded machine only makes it longer). */
	t0 = now_ns();
	CHECK_EQ(perfring_consumer_poll(c, 150), 0);
	ms = (now_ns() - t0) / 1000000;
	CHECK(ms >= 140,
	      "poll(150) with nothing to read returned after %llu ms",
	      (unsigned long long)ms);
	/* Below the watermark: read after the timeout. */
	CHECK_EQ(emit(&t, &seq), 0);
	CHECK_EQ(perfring_consumer_poll(c, 50), 1);
	/* A producer thread crosses the watermark: poll wakes long before
	 * its timeout. */
	CHECK_EQ(pipe(go), 0);
	a.n = 3 * (int)(page / sizeof(struct trec));
	a.start_fd = go[0];
	CHECK_EQ(pthread_create(&th, NULL, producer, &a), 0);
	CHECK_EQ(write(go[1], "g", 1), 1);
	t0 = now_ns();
	while (got < a.n) {
		n = perfring_consumer_poll(c, 60000);
		CHECK(n >= 0, "poll: %d", n);
		got += n;
		CHECK(now_ns() - t0 < 30000000000ull,
		      "%d of %d records after 30 s", got, a.n);
	}
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(got, a.n);
	CHECK(stats_of(c).wakeups >= 1, "woken by the ring");
	perfring_consumer_destroy(c);

	/* A ring over its watermark when it is added is read at once. */
	c = make_consumer(0);
	for (int i = 0; i < 2 * (int)(page / sizeof(struct trec)); i++)
		CHECK_EQ(emit(&t, &seq), 0);
	CHECK_EQ(perfring_consumer_add_ring(c, t.ring, on_record, &t), 0);
	t0 = now_ns();
	n = perfring_consumer_poll(c, 60000);
	CHECK_EQ(n, 2 * (int)(page / sizeof(struct trec)));
	CHECK(now_ns() - t0 < 30000000000ull, "poll slept with data waiting");
	CHECK_EQ(t.next_seq, seq);
	perfring_consumer_destroy(c);
	perfring_ring_destroy(t.ring);
	close(go[0]);
	close(go[1]);
	fprintf(stderr,
		"wake-ups: sleeps %llu ms when idle, woken at the watermark, reads below it after the timeout, reads a full ring at once\n",
		(unsigned long long)ms);
}

/* ---- kernel perf events -------------------------------------------------- */

static int perf_open(struct perf_event_attr *attr, pid_t pid)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS ||
		       errno == ENOENT || errno == EOPNOTSUPP))
		return -errno;
	CHECK(fd >= 0, "perf_event_open: %s", strerror(errno));
	return fd;
}

#define FAULT_PAGES 64

struct fault_track {
	char *base;
	pid_t tid;
	uint64_t samples, ours, other_types;
	unsigned char seen[FAULT_PAGES];
};

static int on_fault(const struct perf_event_header *rec, size_t size, void *ctx)
{
	struct fault_track *f = ctx;
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr;
	} s;

	if (rec->type != PERF_RECORD_SAMPLE) {
		f->other_types++;
		return 0;
	}
	CHECK_EQ(size, sizeof(s));
	memcpy(&s, rec, sizeof(s));
	CHECK_EQ(s.tid, (uint32_t)f->tid);
	f->samples++;
	if (s.addr >= (uint64_t)(uintptr_t)f->base &&
	    s.addr < (uint64_t)(uintptr_t)f->base + FAULT_PAGES * page) {
		size_t i =
			(size_t)(s.addr - (uint64_t)(uintptr_t)f->base) / page;

		f->ours += !f->seen[i];
		f->seen[i] = 1;
	}
	return 0;
}

/*
 * Page-fault samples of this thread (24 bytes each) in a one-page kernel
 * ring, several rounds of FAULT_PAGES fresh pages: the ring wraps, and a
 * sample lands across its end (4096 % 24 != 0) and must be handed whole.
 */
static void kernel_perf_fd(void)
{
	struct perf_event_attr attr;
	struct perfring_consumer *c;
	struct fault_track f = { .tid = (pid_t)syscall(SYS_gettid) };
	uint64_t t0, seen = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.wakeup_events = 8;
	fd = perf_open(&attr, 0);
	if (fd < 0) {
		REFUSED("perf_event_open(page-faults): %s", strerror(-fd));
		return;
	}
	c = make_consumer(0);
	CHECK_EQ(perfring_consumer_add_perf_fd(c, fd, 3, on_fault, &f),
		 -EINVAL);
	CHECK_EQ(perfring_consumer_add_perf_fd(c, fd, 1, on_fault, &f), 0);
	for (int round = 0; round < 6; round++) {
		f.base = mmap(NULL, FAULT_PAGES * page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(f.base != MAP_FAILED, "mmap");
		/* One fault per page: no huge page may cover several. */
		madvise(f.base, FAULT_PAGES * page, MADV_NOHUGEPAGE);
		memset(f.seen, 0, sizeof(f.seen));
		f.ours = 0;
		CHECK_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
		for (int i = 0; i < FAULT_PAGES; i++)
			f.base[(size_t)i * page] = 1;
		CHECK_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
		t0 = now_ns();
		while (f.ours < FAULT_PAGES) {
			CHECK(perfring_consumer_poll(c, 100) >= 0, "poll");
			CHECK(now_ns() - t0 < 30000000000ull,
			      "round %d: %llu of %d page faults after 30 s",
			      round, (unsigned long long)f.ours, FAULT_PAGES);
		}
		seen += f.ours;
		munmap(f.base, FAULT_PAGES * page);
	}
	CHECK_EQ(f.other_types, 0);
	CHECK(f.samples * 24 > 2 * page, "the ring wrapped");
	CHECK(stats_of(c).records == f.samples, "every record counted");
	perfring_consumer_destroy(c);
	close(fd);
	fprintf(stderr,
		"kernel perf fd: %llu page-fault samples through a one-page ring, all %llu touched pages seen\n",
		(unsigned long long)f.samples, (unsigned long long)seen);
}

struct exit_track {
	pid_t pid;
	uint64_t exits;
};

static int on_task(const struct perf_event_header *rec, size_t size, void *ctx)
{
	struct exit_track *e = ctx;
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} x;

	if (rec->type == PERF_RECORD_EXIT) {
		CHECK(size >= sizeof(x), "EXIT record of %zu bytes", size);
		memcpy(&x, rec, sizeof(x));
		CHECK_EQ(x.pid, (uint32_t)e->pid);
		e->exits++;
	}
	return 0;
}

/* A task event whose task exits: read to the end, out of the set. */
static void kernel_hang_up(void)
{
	struct perf_event_attr attr;
	struct perfring_consumer *c;
	struct exit_track e = { 0 };
	int go[2], fd, status, idx;
	uint64_t t0, ms;

	CHECK_EQ(pipe(go), 0);
	e.pid = fork();
	CHECK(e.pid >= 0, "fork");
	if (e.pid == 0) {
		char b;

		close(go[1]);
		_exit(read(go[0], &b, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.task = 1;
	attr.sample_id_all = 0;
	attr.watermark = 1;
	attr.wakeup_watermark = 1;
	fd = perf_open(&attr, e.pid);
	if (fd < 0) {
		REFUSED("perf_event_open(dummy, child): %s", strerror(-fd));
		CHECK_EQ(write(go[1], "x", 1), 1);
		waitpid(e.pid, &status, 0);
		close(go[1]);
		return;
	}
	c = make_consumer(0);
	idx = perfring_consumer_add_perf_fd(c, fd, 1, on_task, &e);
	CHECK_EQ(idx, 0);
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(waitpid(e.pid, &status, 0), e.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
	t0 = now_ns();
	while (perfring_consumer_source_error(c, (unsigned int)idx) == 0) {
		CHECK(perfring_consumer_poll(c, 1000) >= 0, "poll");
		CHECK(now_ns() - t0 < 30000000000ull,
		      "no hang-up 30 s after the task exited");
	}
	CHECK_EQ(perfring_consumer_source_error(c, (unsigned int)idx), -EPIPE);
	CHECK_EQ(e.exits, 1);
	CHECK_EQ(stats_of(c).hung_up, 1);
	/* Out of the set: the wait sleeps again instead of spinning. */
	t0 = now_ns();
	CHECK_EQ(perfring_consumer_poll(c, 150), 0);
	ms = (now_ns() - t0) / 1000000;
	CHECK(ms >= 140, "poll(150) after the hang-up returned in %llu ms",
	      (unsigned long long)ms);
	perfring_consumer_destroy(c);
	close(fd);
	close(go[1]);
	fprintf(stderr,
		"kernel hang-up: EXIT record read, source out of the set (-EPIPE), poll sleeps %llu ms\n",
		(unsigned long long)ms);
}

/* ---- a callback that stops ----------------------------------------------- */

static void callback_stops(void)
{
	struct perfring_consumer *c = make_consumer(0);
	struct track t[3];
	uint64_t seq[3] = { 0 };

	for (int i = 0; i < 3; i++) {
		t[i] = (struct track){ .id = (uint64_t)i,
				       .ring = make_ring(4 * page, 0) };
		CHECK_EQ(perfring_consumer_add_ring(c, t[i].ring, on_record,
						    &t[i]),
			 i);
		for (int k = 0; k < 10; k++)
			CHECK_EQ(emit(&t[i], &seq[i]), 0);
	}
	calls = 0;
	stop_after = 5;
	stop_value = -ECANCELED;
	CHECK_EQ(perfring_consumer_consume(c), -ECANCELED);
	CHECK_EQ(calls, 5);
	stop_after = 0;
	CHECK_EQ(perfring_consumer_consume(c), 25);
	/* A positive value stops too, returning the count so far. */
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 10; k++)
			CHECK_EQ(emit(&t[i], &seq[i]), 0);
	calls = 0;
	stop_after = 13;
	stop_value = 1;
	CHECK_EQ(perfring_consumer_consume(c), 13);
	stop_after = 0;
	CHECK_EQ(perfring_consumer_poll(c, 10000), 17);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(t[i].next_seq, 20);
		CHECK_EQ(t[i].got, 20);
	}
	CHECK_EQ(stats_of(c).records, 60);
	perfring_consumer_destroy(c);
	for (int i = 0; i < 3; i++)
		perfring_ring_destroy(t[i].ring);
	fprintf(stderr,
		"callback stops: -ECANCELED returned, a positive stop returns the count; nothing lost or repeated\n");
}

/* ---- nested in the caller's epoll ----------------------------------------- */

static void nested_epoll(void)
{
	struct perfring_consumer *c = make_consumer(0);
	struct track t[2];
	uint64_t seq[2] = { 0 }, t0;
	struct producer_arg a[2];
	struct epoll_event ev = { .events = EPOLLIN }, out;
	pthread_t th[2];
	int ep, go[2], n, outer_wakes = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0, "epoll_create1");
	CHECK_EQ(pipe(go), 0);
	for (int i = 0; i < 2; i++) {
		t[i] = (struct track){ .id = (uint64_t)i,
				       .ring = make_ring(8 * page, page) };
		CHECK_EQ(perfring_consumer_add_ring(c, t[i].ring, on_record,
						    &t[i]),
			 i);
	}
	ev.data.u32 = 7;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, perfring_consumer_epoll_fd(c),
			   &ev),
		 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0); /* armed, nothing yet */
	for (int i = 0; i < 2; i++) {
		a[i] = (struct producer_arg){
			&t[i], &seq[i], 5 * (int)(page / sizeof(struct trec)),
			go[0]
		};
		CHECK_EQ(pthread_create(&th[i], NULL, producer, &a[i]), 0);
	}
	CHECK_EQ(write(go[1], "gg", 2), 2);
	t0 = now_ns();
	while (t[0].got + t[1].got < (uint64_t)(a[0].n + a[1].n)) {
		/* Only the outer loop sleeps; the producers flush at the
		 * end, so every record is signalled. */
		n = epoll_wait(ep, &out, 1, 60000);
		CHECK(n == 1 && out.data.u32 == 7, "outer epoll_wait: %d", n);
		outer_wakes++;
		CHECK(perfring_consumer_consume(c) >= 0, "consume");
		CHECK(now_ns() - t0 < 30000000000ull,
		      "records missing after 30 s");
	}
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(pthread_join(th[i], NULL), 0);
		CHECK_EQ(t[i].got, (uint64_t)a[i].n);
	}
	CHECK_EQ(perfring_consumer_consume(c), 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0); /* nothing signalled */
	close(ep);
	close(go[0]);
	close(go[1]);
	perfring_consumer_destroy(c);
	for (int i = 0; i < 2; i++)
		perfring_ring_destroy(t[i].ring);
	fprintf(stderr,
		"nested epoll: %d outer wake-ups for %d records, quiet when drained\n",
		outer_wakes, a[0].n + a[1].n);
}

/* ---- a producer that truncates its ring ------------------------------------ */

#define TRUNC_BATCH 64

static void truncated_ring(void)
{
	char path[256];
	struct perfring_consumer *c = make_consumer(0);
	struct track bad = { .id = 9 }, good = { .id = 3 };
	uint64_t gseq = 0, t0;
	int up[2], down[2], status, n;
	pid_t pid;
	char b;

	CHECK_EQ(perfring_sigbus_guard(), 0);
	snprintf(path, sizeof(path), "%s/trunc.ring", dir);
	CHECK_EQ(pipe(up), 0);
	CHECK_EQ(pipe(down), 0);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = 4 * page,
			      .role = PERFRING_ROLE_PRODUCER);
		struct perfring_ring *r;
		uint64_t seq = 0;

		if (perfring_ring_create(&o, &r))
			_exit(2);
		bad.ring = r;
		for (int i = 0; i < TRUNC_BATCH; i++)
			if (emit(&bad, &seq))
				_exit(3);
		if (write(up[1], "r", 1) != 1 || read(down[0], &b, 1) != 1)
			_exit(4);
		/* A second batch, then the file is cut under the reader. */
		for (int i = 0; i < TRUNC_BATCH; i++)
			if (emit(&bad, &seq))
				_exit(5);
		if (ftruncate(perfring_ring_fd(r), 0))
			_exit(6);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	CHECK(read(up[0], &b, 1) == 1, "producer died early");
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &bad.ring),
		 0);
	good.ring = make_ring(4 * page, 0);
	CHECK_EQ(perfring_consumer_add_ring(c, bad.ring, on_record, &bad), 0);
	CHECK_EQ(perfring_consumer_add_ring(c, good.ring, on_record, &good), 1);
	CHECK_EQ(perfring_consumer_consume(c), TRUNC_BATCH);
	CHECK_EQ(bad.got, TRUNC_BATCH);
	CHECK_EQ(write(down[1], "t", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "producer status %d", status);
	/* The ring's pages are gone: reading it faults, the guard turns
	 * that into a dead ring, the consumer drops it. */
	for (int i = 0; i < 10; i++)
		CHECK_EQ(emit(&good, &gseq), 0);
	t0 = now_ns();
	while (good.got < 10) {
		n = perfring_consumer_poll(c, 100);
		CHECK(n >= 0, "poll: %d", n);
		CHECK(now_ns() - t0 < 30000000000ull, "good ring not read");
	}
	CHECK_EQ(perfring_consumer_source_error(c, 0), -EFAULT);
	CHECK_EQ(perfring_consumer_source_error(c, 1), 0);
	CHECK_EQ(bad.got, TRUNC_BATCH); /* nothing made of zeros */
	CHECK_EQ(stats_of(c).dropped, 1);
	/* The others go on. */
	for (int i = 0; i < 10; i++)
		CHECK_EQ(emit(&good, &gseq), 0);
	CHECK_EQ(perfring_consumer_consume(c), 10);
	CHECK_EQ(good.got, 20);
	perfring_consumer_destroy(c);
	perfring_ring_destroy(bad.ring);
	perfring_ring_destroy(good.ring);
	unlink(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), ".wake");
	unlink(path);
	close(up[0]);
	close(down[1]);
	fprintf(stderr,
		"truncated ring: dropped with -EFAULT after its %d good records, the other ring goes on\n",
		TRUNC_BATCH);
}

/* ---- refusals ------------------------------------------------------------- */

static void refusals(void)
{
	struct {
		struct perfring_consumer_opts o;
		uint64_t future;
	} big = { { .sz = sizeof(big) }, 0 };
	struct perfring_consumer *c;
	struct perfring_ring *ow, *r = make_ring(4 * page, 0);
	PERFRING_OPTS(perfring_ring_opts, owo, .data_size = 4 * page,
		      .flags = PERFRING_MODE_OVERWRITE);
	struct track t = { .ring = r };

	CHECK_EQ(perfring_consumer_create(&big.o, &c), 0); /* zeros: fine */
	perfring_consumer_destroy(c);
	big.future = 1;
	CHECK_EQ(perfring_consumer_create(&big.o, &c), -EINVAL);
	CHECK(c == NULL, "no consumer on failure");
	big.future = 0;
	big.o.flags = 0x80;
	CHECK_EQ(perfring_consumer_create(&big.o, &c), -EINVAL);
	CHECK_EQ(perfring_consumer_create(NULL, &c), 0);
	CHECK_EQ(perfring_ring_create(&owo, &ow), 0);
	CHECK_EQ(perfring_consumer_add_ring(c, ow, on_record, &t), -EOPNOTSUPP);
	CHECK_EQ(perfring_consumer_add_ring(c, r, NULL, &t), -EINVAL);
	CHECK_EQ(perfring_consumer_add_ring(c, r, on_record, &t), 0);
	CHECK_EQ(perfring_consumer_add_ring(c, r, on_record, &t), -EEXIST);
	CHECK_EQ(perfring_consumer_source_error(c, 1), -EINVAL);
	CHECK_EQ(perfring_consumer_add_perf_fd(c, -1, 4, on_record, &t),
		 -EINVAL);
	CHECK_EQ(perfring_consumer_poll(NULL, 0), -EINVAL);
	perfring_consumer_destroy(c);
	perfring_consumer_destroy(NULL);
	perfring_ring_destroy(ow);
	perfring_ring_destroy(r);
	fprintf(stderr, "refusals: opts, flags, overwrite ring, duplicate\n");
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	dir = test_tmpdir("consumer");
	refusals();
	many_rings(0);
	many_rings(PERFRING_CONSUMER_ZERO_COPY);
	wakeups();
	callback_stops();
	nested_epoll();
	kernel_perf_fd();
	kernel_hang_up();
	truncated_ring();
	return test_exit();
}
