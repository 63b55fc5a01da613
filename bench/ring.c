// SPDX-License-Identifier: MIT
/*
 * Cross-core throughput: one or two writer threads and a reader over a
 * perfring ring (spsc-32, spsc-256, mpsc2-32), across two processes
 * (xproc-32), and a minimal hand-written SPSC ring as the baseline
 * (naive-32, naive-256).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

/* ---- throughput runs: writers + one reader ------------------------------ */

enum api { API_ZC, API_EMIT };
static const char *api_name[] = { "zerocopy", "emit" };

struct tp {
	struct perfring_ring *ring;
	uint32_t size;
	enum api api;
	int nwriters;
	atomic_int ready, go, stop, writers_done;
	/* results */
	uint64_t written[2], retries[2], lost[2];
	uint64_t read, t0, t1;
	uint64_t hole_ns; /* MP: reader time spent stopped at a preempted
			   * writer's reservation (see tp_reader) */
};

struct warg {
	struct tp *tp;
	int idx;
};

/*
 * The writer loop, instantiated per (api, size) so that both APIs get the
 * record built with constant sizes (a generic loop costs the emit path
 * some 8 ns a record here, in store-forwarding stalls).
 */
static ALWAYS_INLINE void tp_write_loop(struct tp *tp, struct space *sp,
					const enum api api, const uint32_t size,
					uint64_t *seqp, uint64_t *lostp)
{
	struct perfring_ring *r = tp->ring;
	_Alignas(64) unsigned char local[256];
	uint64_t seq = 0, lost = 0;

	while (!atomic_load_explicit(&tp->stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			space_wait(sp, size);
			if (api == API_ZC) {
				struct perfring_output h;

				if (perfring_output_begin(&h, r, size)) {
					lost++;
					continue;
				}
				rec_write(h.data, size, seq++, tmpl);
				perfring_output_end(&h);
			} else {
				rec_write(local, size, seq, tmpl);
				if (perfring_ring_emit(r, local, size)) {
					lost++;
					continue;
				}
				seq++;
			}
			sp->head += size;
		}
	}
	*seqp = seq; /* records written */
	*lostp = lost;
}

static void *tp_writer(void *arg)
{
	struct warg *wa = arg;
	struct tp *tp = wa->tp;
	const bool mp = tp->nwriters > 1;
	struct space sp;
	uint64_t seq = 0, lost = 0;

	pin(wa->idx == 0 ? 0 : (mp ? mp_writer1_cpu : 1));
	space_init(&sp, tp->ring);
	if (mp)
		sp.reserve = &ring_ext(tp->ring)->reserve_head;
	atomic_fetch_add(&tp->ready, 1);
	while (!atomic_load_explicit(&tp->go, memory_order_acquire))
		cpu_relax();
	if (tp->api == API_ZC && tp->size == 32)
		tp_write_loop(tp, &sp, API_ZC, 32, &seq, &lost);
	else if (tp->api == API_ZC)
		tp_write_loop(tp, &sp, API_ZC, 256, &seq, &lost);
	else if (tp->size == 32)
		tp_write_loop(tp, &sp, API_EMIT, 32, &seq, &lost);
	else
		tp_write_loop(tp, &sp, API_EMIT, 256, &seq, &lost);
	tp->written[wa->idx] = seq;
	tp->retries[wa->idx] = sp.retries;
	tp->lost[wa->idx] = lost;
	atomic_fetch_add_explicit(&tp->writers_done, 1, memory_order_release);
	return NULL;
}

static void *tp_reader(void *arg)
{
	struct tp *tp = arg;
	struct perfring_ring *r = tp->ring;
	struct sink_buf *out = aligned_alloc(64, sizeof(*out));
	uint64_t n = 0, hole_t0 = 0;
	const struct perf_event_mmap_page *pc = perfring_ring_control(r);
	const struct perfring_ext *ext =
		(const void *)((const char *)pc + PERFRING_EXT_OFFSET);
	const uint64_t size = perfring_ring_data_size(r);

	if (!out)
		die("malloc", ENOMEM);
	out->pos = 0;
	pin(1);
	atomic_fetch_add(&tp->ready, 1);
	while (!atomic_load_explicit(&tp->go, memory_order_acquire))
		cpu_relax();
	for (;;) {
		int done = atomic_load_explicit(&tp->writers_done,
						memory_order_acquire) ==
			   tp->nwriters;
		const struct perf_event_header *rec;
		int64_t avail = perfring_read_begin(r);
		int sz;

		if (avail < 0)
			die("perfring_read_begin", (int)avail);
		if (avail < BATCH_MIN && !done) {
			perfring_read_end(r);
			/* MP: nothing to read although more than half the
			 * ring is reserved: a writer holds the front
			 * reservation uncommitted (preempted, its CPU given
			 * to the other writer).  Timed until it moves. */
			if (tp->nwriters > 1 &&
			    __atomic_load_n(&ext->reserve_head,
					    __ATOMIC_RELAXED) -
					    __atomic_load_n(&pc->data_head,
							    __ATOMIC_RELAXED) >
				    size / 2) {
				if (!hole_t0)
					hole_t0 = now_ns();
			} else if (hole_t0) {
				tp->hole_ns += now_ns() - hole_t0;
				hole_t0 = 0;
			}
			backoff();
			continue;
		}
		if (hole_t0) {
			tp->hole_ns += now_ns() - hole_t0;
			hole_t0 = 0;
		}
		while ((sz = perfring_read_next(r, &rec)) > 0) {
			copy_out(out, rec, (size_t)sz);
			n += rec->type == REC_TYPE; /* not PERF_RECORD_LOST */
		}
		perfring_read_end(r);
		if (!avail && done)
			break;
	}
	tp->t1 = now_ns();
	tp->read = n;
	sink += out->buf[out->pos / 2];
	free(out);
	return NULL;
}

struct tp_result {
	double mrec_s;
	uint64_t retries, lost;
	double hole_pct; /* MP: % of the run the reader stood at a hole */
};

static struct tp_result tp_run(unsigned int flags, uint32_t size, enum api api,
			       int nwriters, double secs)
{
	struct tp *tp = calloc(1, sizeof(*tp));
	struct warg wa[2];
	pthread_t wt[2], rt;
	struct tp_result res = { 0 };
	struct timespec dur;

	if (!tp)
		die("calloc", ENOMEM);
	tp->ring = ring_new(flags, RING_KIB, 0, NULL, PERFRING_ROLE_BOTH);
	tp->size = size;
	tp->api = api;
	tp->nwriters = nwriters;
	pthread_create(&rt, NULL, tp_reader, tp);
	for (int i = 0; i < nwriters; i++) {
		wa[i].tp = tp;
		wa[i].idx = i;
		pthread_create(&wt[i], NULL, tp_writer, &wa[i]);
	}
	while (atomic_load(&tp->ready) < nwriters + 1)
		sched_yield();
	tp->t0 = now_ns();
	atomic_store_explicit(&tp->go, 1, memory_order_release);
	dur.tv_sec = (time_t)secs;
	dur.tv_nsec = (long)((secs - (double)dur.tv_sec) * 1e9);
	nanosleep(&dur, NULL);
	atomic_store(&tp->stop, 1);
	for (int i = 0; i < nwriters; i++)
		pthread_join(wt[i], NULL);
	pthread_join(rt, NULL);

	uint64_t written = 0;
	for (int i = 0; i < nwriters; i++) {
		written += tp->written[i];
		res.retries += tp->retries[i];
		res.lost += tp->lost[i];
	}
	if (written != tp->read) {
		fprintf(stderr, "bench: wrote %llu records, read %llu\n",
			(unsigned long long)written,
			(unsigned long long)tp->read);
		exit(1);
	}
	res.mrec_s = (double)tp->read / ((double)(tp->t1 - tp->t0) / 1e9) / 1e6;
	res.hole_pct = 100.0 * (double)tp->hole_ns / (double)(tp->t1 - tp->t0);
	perfring_ring_destroy(tp->ring);
	free(tp);
	return res;
}

/* ---- naive SPSC ring ---------------------------------------------------- */

struct naive {
	_Alignas(64) _Atomic uint64_t head; /* written by the writer */
	char pad1[56];
	_Alignas(64) _Atomic uint64_t tail; /* written by the reader */
	char pad2[56];
	/*
	 * Where the two counters live: &head and &tail (separate lines), or
	 * (naive-abi) data_head and data_tail of a perf control page, side by
	 * side on one line as the kernel ABI puts them.
	 */
	_Atomic uint64_t *headp, *tailp;
	struct perf_event_mmap_page *pc;
	_Alignas(64) unsigned char *buf;
	uint64_t size, mask;
	uint32_t rec_size; /* 32 or 256 */
	atomic_int ready, go, stop, done;
	uint64_t written, retries, read, t0, t1;
};

/* One instantiation per record size, so records are built with constant
 * sizes as in the perfring writer loop. */
static ALWAYS_INLINE void naive_write_loop(struct naive *nv, const uint32_t rs)
{
	uint64_t head = 0, tail_cache = 0, seq = 0, retries = 0;
	_Atomic uint64_t *const headp = nv->headp, *const tailp = nv->tailp;

	while (!atomic_load_explicit(&nv->stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			while (head + rs - tail_cache > nv->size) {
				tail_cache = atomic_load_explicit(
					tailp, memory_order_acquire);
				if (head + rs - tail_cache <= nv->size)
					break;
				retries++;
				cpu_relax();
			}
			rec_write(nv->buf + (head & nv->mask), rs, seq++, tmpl);
			head += rs;
			atomic_store_explicit(headp, head,
					      memory_order_release);
		}
	}
	nv->written = seq;
	nv->retries = retries;
}

static void *naive_writer(void *arg)
{
	struct naive *nv = arg;

	pin(0);
	atomic_fetch_add(&nv->ready, 1);
	while (!atomic_load_explicit(&nv->go, memory_order_acquire))
		cpu_relax();
	if (nv->rec_size == 256)
		naive_write_loop(nv, 256);
	else
		naive_write_loop(nv, 32);
	atomic_store_explicit(&nv->done, 1, memory_order_release);
	return NULL;
}

static void *naive_reader(void *arg)
{
	struct naive *nv = arg;
	struct sink_buf *out = aligned_alloc(64, sizeof(*out));
	uint64_t tail = 0, n = 0;
	_Atomic uint64_t *const headp = nv->headp, *const tailp = nv->tailp;

	if (!out)
		die("malloc", ENOMEM);
	out->pos = 0;
	pin(1);
	atomic_fetch_add(&nv->ready, 1);
	while (!atomic_load_explicit(&nv->go, memory_order_acquire))
		cpu_relax();
	for (;;) {
		int done =
			atomic_load_explicit(&nv->done, memory_order_acquire);
		uint64_t head =
			atomic_load_explicit(headp, memory_order_acquire);

		if (head - tail < BATCH_MIN && !done) {
			backoff();
			continue;
		}
		if (head == tail)
			break; /* done */
		while (tail != head) {
			struct perf_event_header h;
			const unsigned char *p = nv->buf + (tail & nv->mask);

			memcpy(&h, p, sizeof(h));
			copy_out(out, p, h.size);
			tail += h.size;
			n++;
		}
		atomic_store_explicit(tailp, tail, memory_order_release);
	}
	nv->t1 = now_ns();
	nv->read = n;
	sink += out->buf[out->pos / 2];
	free(out);
	return NULL;
}

static double naive_run_layout(double secs, uint32_t rec_size,
			       uint64_t *retries, bool abi_layout)
{
	struct naive *nv = aligned_alloc(64, sizeof(*nv));
	pthread_t wt, rt;
	struct timespec dur;
	double mrec_s;

	if (!nv)
		die("malloc", ENOMEM);
	memset(nv, 0, sizeof(*nv));
	nv->headp = &nv->head;
	nv->tailp = &nv->tail;
	if (abi_layout) {
		nv->pc = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (nv->pc == MAP_FAILED)
			die("mmap", errno);
		nv->headp = (_Atomic uint64_t *)&nv->pc->data_head;
		nv->tailp = (_Atomic uint64_t *)&nv->pc->data_tail;
	}
	nv->size = RING_KIB * 1024ull;
	nv->mask = nv->size - 1;
	nv->rec_size = rec_size;
	/* Shared memory like the ring's memfd (no transparent huge pages). */
	nv->buf = mmap(NULL, nv->size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (nv->buf == MAP_FAILED)
		die("mmap", errno);
	pthread_create(&rt, NULL, naive_reader, nv);
	pthread_create(&wt, NULL, naive_writer, nv);
	while (atomic_load(&nv->ready) < 2)
		sched_yield();
	nv->t0 = now_ns();
	atomic_store_explicit(&nv->go, 1, memory_order_release);
	dur.tv_sec = (time_t)secs;
	dur.tv_nsec = (long)((secs - (double)dur.tv_sec) * 1e9);
	nanosleep(&dur, NULL);
	atomic_store(&nv->stop, 1);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	if (nv->read != nv->written) {
		fprintf(stderr, "bench: naive wrote %llu read %llu\n",
			(unsigned long long)nv->written,
			(unsigned long long)nv->read);
		exit(1);
	}
	mrec_s = (double)nv->read / ((double)(nv->t1 - nv->t0) / 1e9) / 1e6;
	*retries = nv->retries;
	munmap(nv->buf, nv->size);
	if (nv->pc)
		munmap(nv->pc, 4096);
	free(nv);
	return mrec_s;
}

static double naive_run(double secs, uint32_t rec_size, uint64_t *retries)
{
	return naive_run_layout(secs, rec_size, retries, false);
}

/* ---- naive MPSC ring ---------------------------------------------------- */

/*
 * The floor under mpsc2-32: the simplest lossless multi-producer byte ring.
 * A writer takes room with a CAS on the shared reservation counter, writes
 * the record's body, then its header with a release store: a header that
 * is not zero is the commit.  The reader goes through the records in
 * order, waits at a header still zero, clears each header it has read,
 * and publishes its tail.  No LOST accounting, no statistics, no pause or
 * wake-up, no validation; 32-byte records never straddle the end.  The two
 * writers share CPUs as mpsc2-32's do.
 */
struct naive_mp {
	_Alignas(64) _Atomic uint64_t reserve; /* the writers' */
	char pad1[56];
	_Alignas(64) _Atomic uint64_t tail; /* the reader's */
	char pad2[56];
	unsigned char *buf;
	uint64_t size, mask;
	atomic_int ready, go, stop, writers_done;
	uint64_t written[2], read, t0, t1;
};

struct naive_mp_arg {
	struct naive_mp *nm;
	int idx;
};

static void *naive_mp_writer(void *arg)
{
	struct naive_mp_arg *a = arg;
	struct naive_mp *nm = a->nm;
	uint64_t seq = 0, tail_cache = 0;

	pin(a->idx ? mp_writer1_cpu : 0);
	atomic_fetch_add(&nm->ready, 1);
	while (!atomic_load_explicit(&nm->go, memory_order_acquire))
		cpu_relax();
	while (!atomic_load_explicit(&nm->stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			uint64_t at = atomic_load_explicit(
				&nm->reserve, memory_order_relaxed);
			struct perf_event_header h = { .type = REC_TYPE,
						       .size = 32 };
			unsigned char *p;
			uint64_t ts, word;

			do {
				while (at + 32 - tail_cache > nm->size) {
					/* pairs with the reader's release of
					 * tail (the header it cleared) */
					tail_cache = atomic_load_explicit(
						&nm->tail,
						memory_order_acquire);
					if (at + 32 - tail_cache <= nm->size)
						break;
					cpu_relax();
					at = atomic_load_explicit(
						&nm->reserve,
						memory_order_relaxed);
				}
			} while (!atomic_compare_exchange_weak_explicit(
				&nm->reserve, &at, at + 32,
				memory_order_relaxed, memory_order_relaxed));
			p = nm->buf + (at & nm->mask);
			ts = perfring_clock_fast_ns();
			memcpy(p + 8, &ts, 8);
			memcpy(p + 16, tmpl, 8);
			memcpy(p + 24, &seq, 8);
			seq++;
			memcpy(&word, &h, 8);
			/* the commit; pairs with the reader's acquire */
			atomic_store_explicit((_Atomic uint64_t *)p, word,
					      memory_order_release);
		}
	}
	nm->written[a->idx] = seq;
	atomic_fetch_add_explicit(&nm->writers_done, 1, memory_order_release);
	return NULL;
}

static void *naive_mp_reader(void *arg)
{
	struct naive_mp *nm = arg;
	struct sink_buf *out = aligned_alloc(64, sizeof(*out));
	uint64_t tail = 0, n = 0, published = 0;

	if (!out)
		die("malloc", ENOMEM);
	out->pos = 0;
	pin(1);
	atomic_fetch_add(&nm->ready, 1);
	while (!atomic_load_explicit(&nm->go, memory_order_acquire))
		cpu_relax();
	for (;;) {
		_Atomic uint64_t *hp =
			(_Atomic uint64_t *)(nm->buf + (tail & nm->mask));
		/* pairs with the writer's release of the header */
		uint64_t word = atomic_load_explicit(hp, memory_order_acquire);
		struct perf_event_header h;

		if (!word) {
			if (tail != published) {
				/* pairs with the writers' acquire of tail */
				atomic_store_explicit(&nm->tail, tail,
						      memory_order_release);
				published = tail;
			}
			/* pairs with the writers' release when done */
			if (atomic_load_explicit(&nm->writers_done,
						 memory_order_acquire) == 2 &&
			    atomic_load_explicit(&nm->reserve,
						 memory_order_relaxed) == tail)
				break;
			backoff();
			continue;
		}
		memcpy(&h, &word, 8);
		copy_out(out, hp, h.size);
		atomic_store_explicit(hp, 0, memory_order_relaxed);
		tail += h.size;
		n++;
		if (tail - published >= BATCH_MIN) {
			atomic_store_explicit(&nm->tail, tail,
					      memory_order_release);
			published = tail;
		}
	}
	nm->t1 = now_ns();
	nm->read = n;
	sink += out->buf[out->pos / 2];
	free(out);
	return NULL;
}

static double naive_mp_run(double secs)
{
	struct naive_mp *nm = aligned_alloc(64, sizeof(*nm));
	struct naive_mp_arg wa[2];
	pthread_t wt[2], rt;
	struct timespec dur;
	double mrec_s;

	if (!nm)
		die("malloc", ENOMEM);
	memset(nm, 0, sizeof(*nm));
	nm->size = RING_KIB * 1024ull;
	nm->mask = nm->size - 1;
	nm->buf = mmap(NULL, nm->size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (nm->buf == MAP_FAILED)
		die("mmap", errno);
	pthread_create(&rt, NULL, naive_mp_reader, nm);
	for (int i = 0; i < 2; i++) {
		wa[i] = (struct naive_mp_arg){ nm, i };
		pthread_create(&wt[i], NULL, naive_mp_writer, &wa[i]);
	}
	while (atomic_load(&nm->ready) < 3)
		sched_yield();
	nm->t0 = now_ns();
	atomic_store_explicit(&nm->go, 1, memory_order_release);
	dur.tv_sec = (time_t)secs;
	dur.tv_nsec = (long)((secs - (double)dur.tv_sec) * 1e9);
	nanosleep(&dur, NULL);
	atomic_store(&nm->stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(wt[i], NULL);
	pthread_join(rt, NULL);
	if (nm->read != nm->written[0] + nm->written[1]) {
		fprintf(stderr, "bench: naive MPSC wrote %llu read %llu\n",
			(unsigned long long)(nm->written[0] + nm->written[1]),
			(unsigned long long)nm->read);
		exit(1);
	}
	mrec_s = (double)nm->read / ((double)(nm->t1 - nm->t0) / 1e9) / 1e6;
	munmap(nm->buf, nm->size);
	free(nm);
	return mrec_s;
}

/* ---- cross-process ------------------------------------------------------ */

struct xshared {
	atomic_int go, stop, done;
	uint64_t written, retries, lost;
};

static struct tp_result xproc_run(double secs)
{
	char dir[] = "/tmp/perfring-bench-XXXXXX", path[128];
	struct tp_result res = { 0 };
	struct perfring_ring *r;
	struct xshared *xs;
	struct sink_buf *out;
	struct timespec dur;
	int pfd[2], status;
	uint64_t n = 0, t0, t1;
	char c;
	pid_t pid;

	if (!mkdtemp(dir))
		die("mkdtemp", errno);
	snprintf(path, sizeof(path), "%s/ring", dir);
	r = ring_new(0, RING_KIB, 0, path, PERFRING_ROLE_CONSUMER);
	xs = mmap(NULL, sizeof(*xs), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	out = aligned_alloc(64, sizeof(*out));
	if (xs == MAP_FAILED || !out || pipe(pfd))
		die("setup", errno);
	memset(xs, 0, sizeof(*xs));
	out->pos = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		struct perfring_ring *w;
		struct space sp;
		uint64_t seq = 0, lost = 0;
		int err =
			perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &w);

		if (err)
			_exit(2);
		pin(0);
		space_init(&sp, w);
		if (write(pfd[1], "r", 1) != 1)
			_exit(3);
		while (!atomic_load_explicit(&xs->go, memory_order_acquire))
			cpu_relax();
		while (!atomic_load_explicit(&xs->stop, memory_order_relaxed)) {
			for (int i = 0; i < 64; i++) {
				struct perfring_output h;

				space_wait(&sp, 32);
				if (perfring_output_begin(&h, w, 32)) {
					lost++;
					continue;
				}
				rec_write(h.data, 32, seq++, tmpl);
				perfring_output_end(&h);
				sp.head += 32;
			}
		}
		xs->written = seq;
		xs->retries = sp.retries;
		xs->lost = lost;
		atomic_store_explicit(&xs->done, 1, memory_order_release);
		perfring_ring_destroy(w);
		_exit(0);
	}
	pin(1);
	if (read(pfd[0], &c, 1) != 1)
		die("child did not start", EIO);
	t0 = now_ns();
	atomic_store_explicit(&xs->go, 1, memory_order_release);
	uint64_t stop_at = t0 + (uint64_t)(secs * 1e9);
	for (;;) {
		int done =
			atomic_load_explicit(&xs->done, memory_order_acquire);
		const struct perf_event_header *rec;
		int64_t avail = perfring_read_begin(r);
		int sz;

		if (avail < 0)
			die("perfring_read_begin", (int)avail);
		if (avail < BATCH_MIN && !done) {
			perfring_read_end(r);
			if (now_ns() >= stop_at)
				atomic_store(&xs->stop, 1);
			backoff();
			continue;
		}
		while ((sz = perfring_read_next(r, &rec)) > 0) {
			copy_out(out, rec, (size_t)sz);
			n += rec->type == REC_TYPE;
		}
		perfring_read_end(r);
		if (!avail && done)
			break;
	}
	t1 = now_ns();
	(void)dur;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    xs->written != n) {
		fprintf(stderr,
			"bench: xproc writer status %#x, wrote %llu, read %llu\n",
			status, (unsigned long long)xs->written,
			(unsigned long long)n);
		exit(1);
	}
	res.mrec_s = (double)n / ((double)(t1 - t0) / 1e9) / 1e6;
	res.retries = xs->retries;
	res.lost = xs->lost;
	sink += out->buf[out->pos / 2];
	free(out);
	munmap(xs, sizeof(*xs));
	close(pfd[0]);
	close(pfd[1]);
	perfring_ring_destroy(r);
	perfring_ring_remove(path);
	rmdir(dir);
	return res;
}

/* ---- cases ------------------------------------------------------------- */

/*
 * Cross-core throughput: REPS runs, each preceded by a latency probe; the
 * line reports the best run (stat=best) and the median, and the median
 * probe (c2c_ns=).  Best, because a run in the far placement measures the
 * host rather than the code.
 */
struct reps {
	struct tp_result run[REPS];
	double c2c[REPS];
	int best;
	double median, c2c_median;
};

static void reps_finish(struct reps *rp)
{
	double m[REPS], c[REPS];

	rp->best = 0;
	for (int i = 0; i < REPS; i++) {
		m[i] = rp->run[i].mrec_s;
		c[i] = rp->c2c[i];
		if (rp->run[i].mrec_s > rp->run[rp->best].mrec_s)
			rp->best = i;
	}
	qsort(m, REPS, sizeof(double), cmp_double);
	qsort(c, REPS, sizeof(double), cmp_double);
	rp->median = m[REPS / 2];
	rp->c2c_median = c[REPS / 2];
}

static struct reps naive32, spsc32, naive_abi32;
static bool have_naive32, have_spsc32;
static enum api spsc32_api;
static double zc_ns[2], emit_ns[2]; /* writer cost per API, [32, 256] */

/* Single-thread writer cost of one record (timestamp included) with @api,
 * into a ring emptied untimed whenever it has had a ring's worth. */
static ALWAYS_INLINE double writer_cost_flags(unsigned int flags,
					      const enum api api,
					      const uint32_t size, double secs)
{
	struct perfring_ring *r =
		ring_new(flags, RING_KIB, 0, NULL, PERFRING_ROLE_BOTH);
	uint64_t per_round = perfring_ring_data_size(r) / size - 1;
	uint64_t timed = 0, count = 0, seq = 0, budget = (uint64_t)(secs * 1e9);
	_Alignas(64) unsigned char local[256];

	pin(0);
	while (timed < budget) {
		uint64_t t0 = now_ns();

		for (uint64_t i = 0; i < per_round; i++) {
			if (api == API_ZC) {
				struct perfring_output h;

				if (perfring_output_begin(&h, r, size))
					die("output_begin", ENOSPC);
				rec_write(h.data, size, seq++, tmpl);
				perfring_output_end(&h);
			} else {
				rec_write(local, size, seq++, tmpl);
				if (perfring_ring_emit(r, local, size))
					die("emit", ENOSPC);
			}
		}
		timed += now_ns() - t0;
		count += per_round;

		const void *ptr[2];
		size_t len[2];

		perfring_read_begin(r);
		perfring_read_range(r, ptr, len);
		perfring_read_end(r);
	}
	perfring_ring_destroy(r);
	return (double)timed / (double)count;
}

static ALWAYS_INLINE double writer_cost_body(const enum api api,
					     const uint32_t size, double secs)
{
	return writer_cost_flags(0, api, size, secs);
}

static double writer_cost(enum api api, uint32_t size, double secs)
{
	if (api == API_ZC)
		return size == 32 ? writer_cost_body(API_ZC, 32, secs) :
				    writer_cost_body(API_ZC, 256, secs);
	return size == 32 ? writer_cost_body(API_EMIT, 32, secs) :
			    writer_cost_body(API_EMIT, 256, secs);
}

/* The faster writer API for @size (the writer is the side that limits). */
static enum api pick_api(uint32_t size)
{
	int k = size == 32 ? 0 : 1;
	double zc[REPS], em[REPS];

	for (int i = 0; i < REPS; i++) {
		zc[i] = writer_cost(API_ZC, size, run_secs / 6);
		em[i] = writer_cost(API_EMIT, size, run_secs / 6);
	}
	qsort(zc, REPS, sizeof(double), cmp_double);
	qsort(em, REPS, sizeof(double), cmp_double);
	zc_ns[k] = zc[REPS / 2];
	emit_ns[k] = em[REPS / 2];
	return emit_ns[k] < zc_ns[k] ? API_EMIT : API_ZC;
}

static void measure_naive32(void)
{
	struct reps rp;

	for (int i = 0; i < REPS; i++) {
		rp.c2c[i] = c2c_ns();
		rp.run[i].mrec_s = naive_run(run_secs, 32, &rp.run[i].retries);
		rp.run[i].lost = 0;
	}
	reps_finish(&rp);
	naive32 = rp;
	have_naive32 = true;
}

/* spsc-32 and naive-32 interleaved, so both see the same placements. */
static void measure_spsc32(void)
{
	struct reps sp, nv, na;

	spsc32_api = pick_api(32);
	for (int i = 0; i < REPS; i++) {
		sp.c2c[i] = c2c_ns();
		sp.run[i] = tp_run(0, 32, spsc32_api, 1, run_secs);
		nv.c2c[i] = c2c_ns();
		nv.run[i].mrec_s = naive_run(run_secs, 32, &nv.run[i].retries);
		nv.run[i].lost = 0;
		na.c2c[i] = c2c_ns();
		na.run[i].mrec_s = naive_run_layout(run_secs, 32,
						    &na.run[i].retries, true);
		na.run[i].lost = 0;
	}
	reps_finish(&sp);
	reps_finish(&nv);
	reps_finish(&na);
	spsc32 = sp;
	naive32 = nv;
	naive_abi32 = na;
	have_spsc32 = have_naive32 = true;
}

static void print_tp(const char *name, uint32_t size, const struct reps *rp,
		     const char *api)
{
	const struct tp_result *b = &rp->run[rp->best];

	printf("bench %s mrec_s=%.2f median_mrec_s=%.2f ns_per_rec=%.2f gb_s=%.2f ring_kib=%u",
	       name, b->mrec_s, rp->median, 1e3 / b->mrec_s,
	       b->mrec_s * size / 1e3, RING_KIB);
	if (api)
		printf(" api=%s", api);
	printf(" lost=%llu retries=%llu c2c_ns=%.0f",
	       (unsigned long long)b->lost, (unsigned long long)b->retries,
	       rp->c2c_median);
}

void case_spsc32(void)
{
	if (!have_spsc32)
		measure_spsc32();
	print_tp("spsc-32", 32, &spsc32, api_name[spsc32_api]);
	printf(" writer_ns_zerocopy=%.2f writer_ns_emit=%.2f vs_naive=%.2f vs_naive_abi=%.2f median_vs_naive=%.2f stat=best\n",
	       zc_ns[0], emit_ns[0],
	       spsc32.run[spsc32.best].mrec_s /
		       naive32.run[naive32.best].mrec_s,
	       spsc32.run[spsc32.best].mrec_s /
		       naive_abi32.run[naive_abi32.best].mrec_s,
	       spsc32.median / naive32.median);
}

/* The naive ring with perf's control-page layout (data_head and data_tail
 * on one line), measured with spsc-32: what the ABI itself costs. */
void case_naive_abi32(void)
{
	if (!have_spsc32)
		measure_spsc32();
	print_tp("naive-abi-32", 32, &naive_abi32, NULL);
	printf(" vs_naive=%.2f stat=best\n",
	       naive_abi32.run[naive_abi32.best].mrec_s /
		       naive32.run[naive32.best].mrec_s);
}

static struct reps naive256;
static bool have_naive256;

/* spsc-256 and naive-256 interleaved, so both see the same placements. */
void case_spsc256(void)
{
	enum api api = pick_api(256);
	struct reps rp, nv;

	for (int i = 0; i < REPS; i++) {
		rp.c2c[i] = c2c_ns();
		rp.run[i] = tp_run(0, 256, api, 1, run_secs);
		nv.c2c[i] = c2c_ns();
		nv.run[i].mrec_s = naive_run(run_secs, 256, &nv.run[i].retries);
		nv.run[i].lost = 0;
	}
	reps_finish(&rp);
	reps_finish(&nv);
	naive256 = nv;
	have_naive256 = true;
	print_tp("spsc-256", 256, &rp, api_name[api]);
	printf(" writer_ns_zerocopy=%.2f writer_ns_emit=%.2f vs_naive=%.2f stat=best\n",
	       zc_ns[1], emit_ns[1],
	       rp.run[rp.best].mrec_s / nv.run[nv.best].mrec_s);
}

void case_naive256(void)
{
	if (!have_naive256) {
		struct reps rp;

		for (int i = 0; i < REPS; i++) {
			rp.c2c[i] = c2c_ns();
			rp.run[i].mrec_s =
				naive_run(run_secs, 256, &rp.run[i].retries);
			rp.run[i].lost = 0;
		}
		reps_finish(&rp);
		naive256 = rp;
	}
	print_tp("naive-256", 256, &naive256, NULL);
	printf(" stat=best\n");
}

void case_naive32(void)
{
	if (!have_naive32)
		measure_naive32();
	print_tp("naive-32", 32, &naive32, NULL);
	printf(" stat=best\n");
}

void case_xproc32(void)
{
	struct reps rp;

	for (int i = 0; i < REPS; i++) {
		rp.c2c[i] = c2c_ns();
		rp.run[i] = xproc_run(run_secs);
	}
	reps_finish(&rp);
	print_tp("xproc-32", 32, &rp, "zerocopy");
	printf(" stat=best\n");
}

/*
 * ns of one locked compare-and-swap on a line this CPU owns: what a
 * multi-producer ring's reservation costs at least, since writers on
 * different CPUs must agree on where each record goes.
 */
static double locked_cas_ns(double secs)
{
	static _Alignas(64) _Atomic uint64_t word;
	uint64_t n = 0, t0 = now_ns(), t;

	do {
		for (int i = 0; i < 4096; i++) {
			uint64_t old = atomic_load_explicit(
				&word, memory_order_relaxed);

			atomic_compare_exchange_weak(&word, &old, old + 32);
		}
		n += 4096;
		t = now_ns();
	} while ((double)(t - t0) < secs * 1e9);
	return (double)(t - t0) / (double)n;
}

void case_mpsc2(void)
{
	struct reps rp;

	if (!have_spsc32)
		measure_spsc32();
	struct reps nmp;

	for (int i = 0; i < REPS; i++) {
		rp.c2c[i] = c2c_ns();
		rp.run[i] = tp_run(PERFRING_MODE_MULTI_PRODUCER, 32, API_ZC, 2,
				   run_secs);
		nmp.c2c[i] = c2c_ns();
		nmp.run[i] =
			(struct tp_result){ .mrec_s = naive_mp_run(run_secs) };
	}
	reps_finish(&rp);
	reps_finish(&nmp);
	/* One writer alone on a multi-producer ring, no reader: the two
	 * writers share CPU 0, so this bounds what they reach together. */
	double mp_ns[REPS];

	double cas_ns[REPS];

	pin(0);
	for (int i = 0; i < REPS; i++) {
		mp_ns[i] = writer_cost_flags(PERFRING_MODE_MULTI_PRODUCER,
					     API_ZC, 32, run_secs / 6);
		cas_ns[i] = locked_cas_ns(run_secs / 12);
	}
	/* With both writers on one CPU the pair can reach at most
	 * sp / (sp + cas) of spsc-32: each record needs the writer's work
	 * and one locked instruction at least (cas_bound). */
	print_tp("mpsc2-32", 32, &rp, "zerocopy");
	double holes[REPS];

	for (int i = 0; i < REPS; i++)
		holes[i] = rp.run[i].hole_pct;
	printf(" writers_cpu=0,%d reader_cpu=1 writer_ns_mp=%.2f writer_ns_sp=%.2f locked_cas_ns=%.2f cas_bound=%.2f reader_at_hole_pct=%.1f naive_mpsc_mrec_s=%.2f naive_mpsc_vs_spsc=%.2f vs_naive_mpsc=%.2f vs_spsc=%.2f stat=best\n",
	       mp_writer1_cpu, median3(mp_ns), zc_ns[0], median3(cas_ns),
	       zc_ns[0] / (zc_ns[0] + median3(cas_ns)), median3(holes),
	       nmp.run[nmp.best].mrec_s,
	       nmp.run[nmp.best].mrec_s / spsc32.run[spsc32.best].mrec_s,
	       rp.run[rp.best].mrec_s / nmp.run[nmp.best].mrec_s,
	       rp.run[rp.best].mrec_s / spsc32.run[spsc32.best].mrec_s);
}
