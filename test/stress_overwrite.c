// SPDX-License-Identifier: MIT
/*
 * Stress: an overwrite-mode ring (PERFRING_MODE_OVERWRITE) written
 * continuously by a child process while the parent takes snapshots with
 * perfring_read_begin/next/end (pause, copy, resume).
 *
 * The child attaches by path as the producer and writes records with a
 * sequence number (incremented per record written) and a checksum, sizes
 * 16..512 bytes; records refused while the reader has the ring paused are
 * counted.  The parent checks, for every snapshot: every checksum and size,
 * sequence numbers strictly decreasing by 1 (newest first), and that the
 * snapshot continues the previous one: its oldest record follows the
 * previous snapshot's newest exactly when less than a ring was written in
 * between, and is newer than it otherwise.  This exercises the write_seq
 * seqcount and the pause protocol.  Some snapshots are taken with the ring
 * already paused by the caller, which perfring_read_end() must leave
 * paused.  At the end the last record written must be the newest one seen
 * and lost_total must equal the refusals the child counted.
 *
 * Runs about 2 s (STRESS_SECS overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"
#include "stress.h"

#define REC_TYPE 0x4d00u
#define REC_MIN 16u
#define REC_MAX 512u
#define RING_SIZE (64 * 1024)

struct srec {
	struct perf_event_header h;
	uint32_t seq;
	uint32_t csum;
};

struct report {
	uint64_t written, refused;
	int32_t err;
	int32_t pad;
};

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
	       8u * (uint32_t)(mix64(seq + 11) % ((REC_MAX - REC_MIN) / 8 + 1));
}

static void rec_fill(void *buf, uint32_t seq)
{
	struct srec *r = buf;
	uint32_t size = rec_size(seq);
	unsigned char *p = buf;

	r->h.type = REC_TYPE;
	r->h.misc = 0;
	r->h.size = (uint16_t)size;
	r->seq = seq;
	for (uint32_t off = 16; off < size; off += 8) {
		uint64_t w = mix64(((uint64_t)seq << 16) ^ off ^ 0x77);

		memcpy(p + off, &w, 8);
	}
	r->csum = seq_rec_csum(buf, size);
}

/* The writer process: writes until *stop, then reports. */
static void child(const char *path, atomic_int *stop, int report_fd,
		  uint64_t max_ns)
{
	_Alignas(8) unsigned char buf[REC_MAX];
	struct perfring_ring *ring;
	struct report rep = { 0 };
	uint64_t seed = 0x5151ull, deadline = now_ns() + max_ns;
	uint32_t seq = 0;
	int err;

	err = perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &ring);
	if (err) {
		rep.err = err;
		goto out;
	}
	for (uint64_t i = 0;; i++) {
		if ((i & 63) == 0 &&
		    (atomic_load_explicit(stop, memory_order_acquire) ||
		     now_ns() > deadline))
			break;
		if (seq & 1) {
			struct perfring_output h;

			err = perfring_output_begin(&h, ring, rec_size(seq));
			if (!err) {
				rec_fill(h.data, seq);
				perfring_output_end(&h);
			}
		} else {
			rec_fill(buf, seq);
			err = perfring_ring_emit(ring, buf, rec_size(seq));
		}
		if (err == -EAGAIN) { /* paused by the reader */
			rep.refused++;
			continue;
		}
		if (err) {
			rep.err = err;
			break;
		}
		seq++;
		/* Now and then a break, so some snapshots see less than a
		 * ring of new data. */
		uint64_t r = rng_next(&seed);
		if (r % 1024 == 0)
			nap_us(100 + (unsigned int)(r >> 40) % 400);
	}
	rep.written = seq;
	perfring_ring_destroy(ring);
out:;
	const char *p = (const char *)&rep;
	size_t len = sizeof(rep);

	while (len) {
		ssize_t n = write(report_fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		p += n;
		len -= (size_t)n;
	}
	_exit(rep.err ? 1 : 0);
}

struct snapstate {
	int64_t prev_newest; /* newest seq of the last non-empty snapshot */
	uint64_t snapshots, empty, records, exact, overwritten, user_paused;
	uint64_t bytes_max;
};

/* Checks one record of a snapshot; returns its seq. */
static uint32_t check_record(const struct perf_event_header *rec, size_t size,
			     int64_t want)
{
	CHECK(size == rec->size, "reader size %zu != header size %u", size,
	      rec->size);
	CHECK(rec->type == REC_TYPE,
	      "unexpected record type %u (overwrite rings write no LOST records)",
	      rec->type);
	CHECK(size >= sizeof(struct srec), "record too small: %zu", size);
	const struct srec *s = (const struct srec *)rec;

	CHECK(seq_rec_csum(rec, size) == s->csum, "bad checksum, seq %u",
	      s->seq);
	CHECK_EQ(size, rec_size(s->seq));
	if (want >= 0)
		CHECK(s->seq == (uint64_t)want,
		      "seq %u in snapshot, expected %lld (newest first, -1 each)",
		      s->seq, (long long)want);
	return s->seq;
}

static void snapshot(struct perfring_ring *ring, struct snapstate *ss,
		     bool use_range)
{
	int64_t n = perfring_read_begin(ring);
	int64_t want = -1, newest = -1, oldest = -1;
	uint64_t seen = 0;

	CHECK(n >= 0, "perfring_read_begin: %lld", (long long)n);
	CHECK((uint64_t)n <= RING_SIZE, "snapshot of %lld bytes", (long long)n);
	if (use_range) {
		/* The whole snapshot as raw bytes: a private copy, one piece. */
		const void *ptr[2];
		size_t len[2];
		int pieces = perfring_read_range(ring, ptr, len);

		CHECK(pieces == (n ? 1 : 0),
		      "reader_range: %d pieces for %lld bytes", pieces,
		      (long long)n);
		if (pieces) {
			CHECK_EQ(len[0], (size_t)n);
			CHECK(((uintptr_t)ptr[0] & 7) == 0, "unaligned copy");
			for (size_t off = 0; off < len[0];) {
				const struct perf_event_header *rec =
					(const void *)((const char *)ptr[0] +
						       off);

				CHECK(rec->size >= 8 &&
					      off + rec->size <= len[0],
				      "record of %u bytes at %zu of %zu",
				      rec->size, off, len[0]);
				uint32_t seq =
					check_record(rec, rec->size, want);

				if (newest < 0)
					newest = seq;
				oldest = seq;
				want = (int64_t)seq - 1;
				off += rec->size;
				seen += rec->size;
				ss->records++;
			}
		}
	} else {
		const struct perf_event_header *rec;
		int sz;

		while ((sz = perfring_read_next(ring, &rec)) > 0) {
			uint32_t seq = check_record(rec, (size_t)sz, want);

			if (newest < 0)
				newest = seq;
			oldest = seq;
			want = (int64_t)seq - 1;
			seen += (uint64_t)sz;
			ss->records++;
		}
		CHECK(sz == 0, "perfring_read_next: %d", sz);
	}
	CHECK(seen == (uint64_t)n, "walked %llu of %lld bytes",
	      (unsigned long long)seen, (long long)n);
	perfring_read_end(ring);
	ss->snapshots++;
	if (seen > ss->bytes_max)
		ss->bytes_max = seen;
	if (newest < 0) {
		ss->empty++;
		return;
	}
	CHECK(newest > ss->prev_newest, "snapshot newest %lld, previous %lld",
	      (long long)newest, (long long)ss->prev_newest);
	if (seen + REC_MAX < RING_SIZE) {
		/* Less than a ring written since the last snapshot: the
		 * snapshot holds exactly the records written since. */
		CHECK(oldest == ss->prev_newest + 1,
		      "snapshot of %llu bytes starts at seq %lld, previous newest %lld",
		      (unsigned long long)seen, (long long)oldest,
		      (long long)ss->prev_newest);
		ss->exact++;
	} else {
		CHECK(oldest > ss->prev_newest,
		      "snapshot oldest %lld, previous newest %lld (duplicate)",
		      (long long)oldest, (long long)ss->prev_newest);
		ss->overwritten++;
	}
	ss->prev_newest = newest;
}

int main(void)
{
	const char *secs = getenv("STRESS_SECS");
	double total = secs ? atof(secs) : 2.0;
	uint64_t budget_ns = (uint64_t)((total > 0 ? total : 2.0) * 1e9);
	struct perfring_ring *ring;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct snapstate ss = { .prev_newest = -1 };
	struct report rep;
	uint64_t seed = 0x2468ull, deadline;
	atomic_int *stop;
	int pfd[2], status, err;
	pid_t pid;

	snprintf(g_dir, sizeof(g_dir), "/tmp/perfring-ow-XXXXXX");
	CHECK(mkdtemp(g_dir) != NULL, "mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	snprintf(g_path, sizeof(g_path), "%s/ring", g_dir);
	PERFRING_OPTS(perfring_ring_opts, o, .path = g_path,
		      .data_size = RING_SIZE, .flags = PERFRING_MODE_OVERWRITE,
		      .role = PERFRING_ROLE_CONSUMER);
	err = perfring_ring_create(&o, &ring);
	CHECK(err == 0, "perfring_ring_create: %s", strerror(-err));
	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(stop != MAP_FAILED, "mmap");
	atomic_init(stop, 0);
	CHECK(pipe(pfd) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		child(g_path, stop, pfd[1], budget_ns + 20ull * 1000000000ull);
	}
	g_child = pid;
	close(pfd[1]);

	deadline = now_ns() + budget_ns;
	while (now_ns() < deadline) {
		uint64_t r = rng_next(&seed);
		bool user_pause = r % 8 == 0;

		if (user_pause) {
			CHECK(perfring_ring_pause(ring, true) == 0, "pause");
			ss.user_paused++;
		}
		snapshot(ring, &ss, (r >> 8) % 4 == 0);
		CHECK(perfring_ring_stats(ring, &st) == 0, "stats");
		CHECK(st.paused == (user_pause ? 1u : 0u),
		      "paused %u after reader_end (caller paused: %d)",
		      st.paused, user_pause);
		if (user_pause)
			CHECK(perfring_ring_pause(ring, false) == 0, "resume");
		switch ((r >> 16) % 4) {
		case 0:
			break; /* back to back */
		case 1:
			nap_us(20);
			break;
		default:
			nap_us((unsigned int)((r >> 24) % 2000));
			break;
		}
	}
	atomic_store_explicit(stop, 1, memory_order_release);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	g_child = -1;
	CHECK(WIFEXITED(status), "writer died (status %#x)", status);
	ssize_t n = read(pfd[0], &rep, sizeof(rep));
	CHECK(n == (ssize_t)sizeof(rep), "writer report: %zd bytes", n);
	CHECK(rep.err == 0, "writer: %s", strerror(-rep.err));
	close(pfd[0]);

	/* The writer is gone: the last snapshot ends at its last record. */
	snapshot(ring, &ss, false);
	CHECK(rep.written > 0, "nothing written");
	CHECK(ss.prev_newest == (int64_t)rep.written - 1,
	      "newest record seen %lld, last written %llu",
	      (long long)ss.prev_newest, (unsigned long long)rep.written - 1);
	CHECK(perfring_ring_stats(ring, &st) == 0, "stats");
	printf("overwrite: %llu records written, %llu refused while paused; "
	       "%llu snapshots (%llu empty, %llu exact continuations, %llu "
	       "overwritten, %llu caller-paused), %llu records checked, "
	       "largest %llu bytes\n",
	       (unsigned long long)rep.written, (unsigned long long)rep.refused,
	       (unsigned long long)ss.snapshots, (unsigned long long)ss.empty,
	       (unsigned long long)ss.exact, (unsigned long long)ss.overwritten,
	       (unsigned long long)ss.user_paused,
	       (unsigned long long)ss.records,
	       (unsigned long long)ss.bytes_max);
	CHECK_EQ(st.lost_total, rep.refused);
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(st.corrupt_events, 0);
	CHECK_EQ(st.paused, 0);
	CHECK(ss.snapshots > 10, "only %llu snapshots",
	      (unsigned long long)ss.snapshots);

	munmap(stop, sizeof(*stop));
	perfring_ring_destroy(ring);
	CHECK(perfring_ring_remove(g_path) == 0, "perfring_ring_remove");
	g_path[0] = 0;
	CHECK(rmdir(g_dir) == 0, "rmdir %s: %s", g_dir, strerror(errno));
	g_dir[0] = 0;
	return T_EXIT_PASS;
}
