// SPDX-License-Identifier: MIT
/*
 * Stress: producer and consumer in two processes over a named ring.
 *
 * The parent creates the ring in a mkdtemp directory as the consumer and
 * forks; the child attaches by path as the producer and emits records with
 * sequence numbers and checksums (16..512 bytes, the zero-copy API and
 * perfring_ring_emit alternating), then one END record.  The parent
 * consumes, sleeping in perfring_ring_wait() (the FIFO next to the ring
 * carries the wake-ups), and checks every record, every gap against the
 * PERF_RECORD_LOST in front of it, and received + lost == sent, where the
 * child reports sent and its own counts through a pipe.
 *
 * Runs about 2 s (STRESS_SECS overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define REC_TYPE 0x4b00u
#define END_TYPE 0x4b01u
#define REC_MIN 16u
#define REC_MAX 512u
#define RING_ID 0x7870u
#define RING_SIZE (64 * 1024)

struct srec {
	struct perf_event_header h;
	uint32_t seq;
	uint32_t csum;
};

/* What the child reports at the end. */
struct report {
	uint64_t sent, ok, full;
	int32_t err;
	int32_t pad;
};

/* Cleanup on any exit of the parent, CHECK failures included. */
static char g_dir[64], g_path[128];
static pid_t g_child = -1;

static void cleanup(void)
{
	if (g_child > 0) {
		kill(g_child, SIGKILL);
		waitpid(g_child, NULL, 0);
		g_child = -1;
	}
	if (g_path[0])
		perfring_ring_remove(g_path);
	if (g_dir[0])
		rmdir(g_dir);
}

static uint32_t rec_size(uint32_t seq)
{
	return REC_MIN +
	       8u * (uint32_t)(mix64(seq) % ((REC_MAX - REC_MIN) / 8 + 1));
}

static void rec_fill(void *buf, uint32_t seq, uint16_t type)
{
	struct srec *r = buf;
	uint32_t size = rec_size(seq);
	unsigned char *p = buf;

	r->h.type = type;
	r->h.misc = 0;
	r->h.size = (uint16_t)size;
	r->seq = seq;
	for (uint32_t off = 16; off < size; off += 8) {
		uint64_t w = mix64(((uint64_t)seq << 16) ^ off ^ 0x55);

		memcpy(p + off, &w, 8);
	}
	r->csum = seq_rec_csum(buf, size);
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		p += n;
		len -= (size_t)n;
	}
}

/* The producer process. */
static void child(const char *path, int report_fd, uint64_t budget_ns)
{
	_Alignas(8) unsigned char buf[REC_MAX];
	struct perfring_ring *ring;
	struct report rep = { 0 };
	uint64_t seed = 0x7777ull, deadline;
	uint32_t seq = 0;
	int err;

	err = perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &ring);
	if (err) {
		rep.err = err;
		write_all(report_fd, &rep, sizeof(rep));
		_exit(2);
	}
	/* A second producer must be refused while we are attached. */
	struct perfring_ring *again = NULL;
	err = perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &again);
	if (err != -EBUSY) {
		rep.err = err ? err : -EEXIST;
		write_all(report_fd, &rep, sizeof(rep));
		_exit(2);
	}
	deadline = now_ns() + budget_ns;
	for (;;) {
		bool last = now_ns() >= deadline;
		uint16_t type = last ? END_TYPE : REC_TYPE;

		if (seq & 1) {
			struct perfring_output h;

			err = perfring_output_begin(&h, ring, rec_size(seq));
			if (!err) {
				rec_fill(h.data, seq, type);
				perfring_output_end(&h);
			}
		} else {
			rec_fill(buf, seq, type);
			err = perfring_ring_emit(ring, buf, rec_size(seq));
		}
		seq++;
		if (err == -ENOSPC) {
			rep.full++;
			if (rep.full % 64 == 0)
				sched_yield();
			continue;
		}
		if (err) {
			rep.err = err;
			break;
		}
		rep.ok++;
		if (last)
			break;
		uint64_t r = rng_next(&seed);
		if (r % 2048 == 0)
			nap_us(200 + (unsigned int)(r >> 40) % 800);
	}
	perfring_ring_flush(ring);
	rep.sent = seq;
	perfring_ring_destroy(ring);
	write_all(report_fd, &rep, sizeof(rep));
	_exit(rep.err ? 1 : 0);
}

struct cstate {
	uint64_t received, lost_sum, lost_records, expected, pending_lost;
	bool in_front, end_seen;
};

static void check_record(struct cstate *c, const struct perf_event_header *rec,
			 size_t size)
{
	CHECK(size == rec->size, "reader size %zu != header size %u", size,
	      rec->size);
	if (rec->type == PERF_RECORD_LOST) {
		struct perfring_lost_record l;

		CHECK_EQ(size, PERFRING_LOST_RECORD_SIZE);
		CHECK(!c->in_front, "two LOST records in a row");
		memcpy(&l, rec, sizeof(l));
		CHECK_EQ(l.id, RING_ID);
		CHECK(l.lost > 0, "LOST record with lost == 0");
		c->pending_lost = l.lost;
		c->in_front = true;
		c->lost_sum += l.lost;
		c->lost_records++;
		return;
	}
	CHECK(rec->type == REC_TYPE || rec->type == END_TYPE,
	      "unexpected record type %u", rec->type);
	CHECK(!c->end_seen, "record after END");
	CHECK(size >= sizeof(struct srec), "record too small: %zu", size);
	const struct srec *s = (const struct srec *)rec;
	uint64_t want = c->expected + (c->in_front ? c->pending_lost : 0);

	CHECK(s->seq == want, "seq %u, expected %llu", s->seq,
	      (unsigned long long)want);
	CHECK_EQ(size, rec_size(s->seq));
	CHECK(seq_rec_csum(rec, size) == s->csum, "bad checksum, seq %u",
	      s->seq);
	c->expected = (uint64_t)s->seq + 1;
	c->in_front = false;
	c->pending_lost = 0;
	c->received++;
	if (rec->type == END_TYPE)
		c->end_seen = true;
}

int main(void)
{
	const char *secs = getenv("STRESS_SECS");
	double total = secs ? atof(secs) : 2.0;
	uint64_t budget_ns = (uint64_t)((total > 0 ? total : 2.0) * 1e9);
	char *dir = g_dir, *path = g_path;
	struct perfring_ring *ring;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct cstate c = { 0 };
	struct report rep;
	uint64_t seed = 0x4242ull, hard_deadline, wakes = 0, timeouts = 0;
	uint64_t batches = 0;
	int pfd[2], status, err;
	pid_t pid;

	snprintf(g_dir, sizeof(g_dir), "/tmp/perfring-xproc-XXXXXX");
	CHECK(mkdtemp(g_dir) != NULL, "mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	snprintf(g_path, sizeof(g_path), "%s/ring", g_dir);
	PERFRING_OPTS(perfring_ring_opts, o, .path = path,
		      .data_size = RING_SIZE, .role = PERFRING_ROLE_CONSUMER,
		      .id = RING_ID);
	err = perfring_ring_create(&o, &ring);
	CHECK(err == 0, "perfring_ring_create(%s): %s", path, strerror(-err));
	CHECK(pipe(pfd) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		child(path, pfd[1], budget_ns);
	}
	g_child = pid;
	close(pfd[1]);

	hard_deadline = now_ns() + budget_ns + 20ull * 1000000000ull;
	while (!c.end_seen) {
		uint64_t r = rng_next(&seed);
		int w = perfring_ring_wait(ring, 5);

		CHECK(w >= 0, "perfring_ring_wait: %s", strerror(-w));
		if (w)
			wakes++;
		else
			timeouts++;
		if (now_ns() > hard_deadline ||
		    (!w && waitpid(pid, &status, WNOHANG) == pid)) {
			/* The child is gone: drain what it left, then judge. */
			int64_t avail = perfring_read_begin(ring);
			const struct perf_event_header *rec;
			int sz;

			CHECK(avail >= 0, "reader_begin %lld",
			      (long long)avail);
			while ((sz = perfring_read_next(ring, &rec)) > 0)
				check_record(&c, rec, (size_t)sz);
			perfring_read_end(ring);
			CHECK(c.end_seen, "producer gone or stuck without END");
			pid = -1;
			g_child = -1;
			break;
		}
		const struct perf_event_header *rec;
		int64_t avail = perfring_read_begin(ring);
		uint64_t seen = 0;
		int sz;

		CHECK(avail >= 0, "perfring_read_begin: %lld",
		      (long long)avail);
		while ((sz = perfring_read_next(ring, &rec)) > 0) {
			check_record(&c, rec, (size_t)sz);
			seen += (uint64_t)sz;
		}
		CHECK(sz == 0, "perfring_read_next: %d", sz);
		CHECK(seen == (uint64_t)avail, "batch %llu of %lld bytes",
		      (unsigned long long)seen, (long long)avail);
		perfring_read_end(ring);
		batches++;
		if (r % 256 == 1)
			nap_us(500 + (unsigned int)(r >> 40) % 1500);
	}
	if (pid > 0) {
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
		g_child = -1;
	}
	CHECK(WIFEXITED(status), "producer died (status %#x)", status);
	ssize_t n = read(pfd[0], &rep, sizeof(rep));
	CHECK(n == (ssize_t)sizeof(rep), "producer report: %zd bytes", n);
	CHECK(rep.err == 0, "producer: %s", strerror(-rep.err));
	CHECK(WEXITSTATUS(status) == 0, "producer exit %d",
	      WEXITSTATUS(status));
	close(pfd[0]);

	CHECK(perfring_ring_stats(ring, &st) == 0, "stats");
	printf("xproc: sent %llu received %llu lost %llu in %llu LOST records; "
	       "%llu batches, %llu wait()=1, %llu timeouts, %llu wake-ups sent\n",
	       (unsigned long long)rep.sent, (unsigned long long)c.received,
	       (unsigned long long)c.lost_sum,
	       (unsigned long long)c.lost_records, (unsigned long long)batches,
	       (unsigned long long)wakes, (unsigned long long)timeouts,
	       (unsigned long long)st.wakeups);
	CHECK_EQ(c.received, rep.ok);
	CHECK_EQ(c.lost_sum, rep.full);
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(st.lost_total, c.lost_sum);
	CHECK(c.received + c.lost_sum == rep.sent,
	      "received %llu + lost %llu != sent %llu",
	      (unsigned long long)c.received, (unsigned long long)c.lost_sum,
	      (unsigned long long)rep.sent);
	CHECK_EQ(st.head, st.tail);
	CHECK_EQ(st.corrupt_events, 0);
	CHECK(c.received > 1000, "only %llu records",
	      (unsigned long long)c.received);

	/* The producer's lock went with it: a new producer may attach. */
	struct perfring_ring *p2;
	err = perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p2);
	CHECK(err == 0, "re-attach producer: %s", strerror(-err));
	perfring_ring_destroy(p2);

	perfring_ring_destroy(ring);
	CHECK(perfring_ring_remove(path) == 0, "perfring_ring_remove");
	g_path[0] = 0;
	CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
	g_dir[0] = 0;
	return T_EXIT_PASS;
}
