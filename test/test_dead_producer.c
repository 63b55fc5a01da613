// SPDX-License-Identifier: MIT
/*
 * perfring_ring_skip_dead() with real processes: producer processes of a
 * multi-producer ring reserve and are SIGKILLed before they commit, while
 * others commit records after them.  The dead reservations stall data_head
 * for good; once every producer is gone, skip_dead turns each into a
 * PERF_RECORD_LOST (lost 1) and the consumer reads every committed record
 * (by sequence number) and exactly one LOST per dead reservation.
 *
 * Also: -EBUSY while a producer lives; adjacent dead reservations larger
 * than a record count as one (a LOST, then LOST padding with lost 0);
 * hostile slots and reservation heads terminate, stay in bounds and are
 * refused where they make no sense.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 78

static const char *dir;
static size_t page;

struct record {
	struct perf_event_header h;
	uint64_t seq;
	uint64_t who;
	uint64_t pad[3];
};

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	fprintf(stderr, "log: %s\n", msg);
}

/* A producer process: attaches, reserves @size bytes, says so and waits
 * to be killed (never commits). */
static pid_t dead_producer(const char *path, size_t size)
{
	int up[2];
	pid_t pid;
	char c;

	CHECK_EQ(pipe(up), 0);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *r;
		struct perfring_output h;

		if (perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &r) ||
		    perfring_output_begin(&h, r, size))
			_exit(2);
		/* Half a header: the kill comes before the rest. */
		memset(h.data, 0x5a, 4);
		if (write(up[1], "r", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(up[1]);
	CHECK(read(up[0], &c, 1) == 1, "the producer reserved");
	close(up[0]);
	return pid;
}

/* A producer process that commits @n records numbered from @first. */
static void live_producer(const char *path, uint64_t first, uint64_t n,
			  uint64_t who)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *r;

		if (perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &r))
			_exit(2);
		for (uint64_t i = 0; i < n; i++) {
			struct record rec = { .h = { .type = T_TYPE,
						     .size = sizeof(rec) },
					      .seq = first + i,
					      .who = who };

			if (perfring_ring_emit(r, &rec, sizeof(rec)))
				_exit(3);
		}
		perfring_ring_destroy(r);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "live producer %#x", st);
}

static void kill_wait(pid_t pid)
{
	int st;

	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
}

struct tally {
	uint64_t records, lost_records, lost, pad_records, bytes;
	uint64_t next_seq;
};

static void drain(struct perfring_ring *c, struct tally *t)
{
	const struct perf_event_header *rec;
	int n;

	if (perfring_read_begin(c) <= 0)
		return;
	while ((n = perfring_read_next(c, &rec)) > 0) {
		t->bytes += (uint64_t)n;
		if (rec->type == PERF_RECORD_LOST) {
			struct perfring_lost_record l;

			CHECK(n >= (int)sizeof(l), "LOST of %d bytes", n);
			memcpy(&l, rec, sizeof(l));
			if (l.lost)
				t->lost_records++;
			else
				t->pad_records++;
			t->lost += l.lost;
		} else {
			struct record r;

			CHECK_EQ(rec->type, T_TYPE);
			CHECK_EQ(n, sizeof(r));
			memcpy(&r, rec, sizeof(r));
			CHECK(r.seq == t->next_seq, "seq %llu, expected %llu",
			      (unsigned long long)r.seq,
			      (unsigned long long)t->next_seq);
			t->next_seq++;
			t->records++;
		}
	}
	CHECK_EQ(n, 0);
	perfring_read_end(c);
}

static struct perfring_ring *mp_ring(const char *path, uint64_t size)
{
	PERFRING_OPTS(perfring_ring_opts, o, .path = path, .data_size = size,
		      .flags = PERFRING_MODE_MULTI_PRODUCER,
		      .role = PERFRING_ROLE_CONSUMER);
	struct perfring_ring *c;

	CHECK_EQ(perfring_ring_create(&o, &c), 0);
	return c;
}

/*
 * committed 0..9, dead A, committed 10..19, dead B, committed 20..29:
 * the consumer sees 0..9 only until skip_dead, then all 30 and 2 LOSTs.
 */
static void killed_between(void)
{
	char path[256];
	struct perfring_ring *c;
	struct tally t = { 0 };
	pid_t a, b, holder;
	struct perfring_ring_stats st = { .sz = sizeof(st) };

	snprintf(path, sizeof(path), "%s/mp.ring", dir);
	c = mp_ring(path, 16 * page);
	live_producer(path, 0, 10, 1);
	a = dead_producer(path, sizeof(struct record));
	live_producer(path, 10, 10, 2);
	b = dead_producer(path, 3 * sizeof(struct record));
	live_producer(path, 20, 10, 3);
	drain(c, &t);
	CHECK_EQ(t.records, 10); /* data_head stops at A */
	/* A producer alive: nothing may be skipped. */
	holder = dead_producer(path, sizeof(struct record));
	kill_wait(a);
	kill_wait(b);
	CHECK_EQ(perfring_ring_skip_dead(c), -EBUSY);
	kill_wait(holder); /* a third dead reservation */
	CHECK_EQ(perfring_ring_skip_dead(c), 3);
	drain(c, &t);
	CHECK_EQ(t.records, 30);
	CHECK_EQ(t.lost_records, 3);
	CHECK_EQ(t.lost, 3);
	CHECK_EQ(t.pad_records, 0);
	CHECK_EQ(perfring_ring_skip_dead(c), 0); /* nothing left */
	CHECK_EQ(perfring_ring_stats(c, &st), 0);
	CHECK_EQ(st.dead_reservations, 3);
	CHECK_EQ(st.head, st.tail);
	/* The ring works on: a new producer's records come through. */
	live_producer(path, 30, 5, 4);
	drain(c, &t);
	CHECK_EQ(t.records, 35);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	fprintf(stderr,
		"3 producers killed between reserve and commit: 35 records, 3 LOST of 1\n");
}

/* Three adjacent dead reservations of 40000 bytes: one gap, one LOST of 1
 * and padding LOSTs of 0 for the rest, every piece a valid record. */
static void large_gap(void)
{
	char path[256];
	struct perfring_ring *c;
	struct tally t = { 0 };
	pid_t p[3];

	snprintf(path, sizeof(path), "%s/big.ring", dir);
	c = mp_ring(path, 256 * 1024);
	live_producer(path, 0, 3, 1);
	for (int i = 0; i < 3; i++)
		p[i] = dead_producer(path, 40000);
	live_producer(path, 3, 3, 2);
	for (int i = 0; i < 3; i++)
		kill_wait(p[i]);
	CHECK_EQ(perfring_ring_skip_dead(c), 1);
	drain(c, &t);
	CHECK_EQ(t.records, 6);
	CHECK_EQ(t.lost_records, 1);
	CHECK_EQ(t.lost, 1);
	CHECK(t.pad_records >= 1, "padding after the first 64 KiB");
	CHECK_EQ(t.bytes, 6 * sizeof(struct record) + 120000);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	fprintf(stderr, "adjacent dead reservations: 1 LOST + %llu padding\n",
		(unsigned long long)t.pad_records);
}

/* Hostile control words: a producer process scribbles, then dies. */
static void hostile(void)
{
	char path[256];
	struct perfring_ring *c;
	uint64_t size = 4 * page;
	int fd;
	unsigned char *m;
	struct perf_event_mmap_page *pc;
	struct perfring_ext *ext;
	uint64_t *slots;

	snprintf(path, sizeof(path), "%s/hostile.ring", dir);
	c = mp_ring(path, size);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open");
	m = mmap(NULL, page + 2 * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	CHECK(m != MAP_FAILED, "mmap");
	pc = (void *)m;
	ext = (void *)(m + PERFRING_EXT_OFFSET);
	slots = (void *)(m + page + size);

	/* Reservation head more than a ring ahead, or misaligned. */
	ext->reserve_head = pc->data_head + size + 8;
	CHECK_EQ(perfring_ring_skip_dead(c), -EBADMSG);
	ext->reserve_head = pc->data_head + 12;
	CHECK_EQ(perfring_ring_skip_dead(c), -EBADMSG);

	for (int round = 0; round < 200; round++) {
		struct tally t = { 0 };
		const struct perf_event_header *rec;
		uint64_t head = pc->data_head;
		int64_t n;

		srandom((unsigned)round);
		for (uint64_t i = 0; i < size / 8; i++) {
			uint64_t v = ((uint64_t)random() << 33) ^
				     ((uint64_t)random() << 2) ^
				     (uint64_t)random();

			/* Some near the walk so that they look committed. */
			if (i % 3 == 0)
				v = head + (v % (2 * size));
			slots[i] = v;
		}
		for (uint64_t i = 0; i < size; i += 8)
			*(uint64_t *)(m + page + i) =
				(uint64_t)random() * (uint64_t)random();
		ext->reserve_head =
			head + (((uint64_t)random() % size) & ~7ull);
		n = perfring_ring_skip_dead(c);
		/* -EBADMSG: the "commits" the consumer gathered ran past
		 * the hostile reservation head (design.md 4b). */
		CHECK((n >= 0 && n <= (int64_t)(size / 8)) || n == -EBADMSG,
		      "skip_dead %lld", (long long)n);
		/* Whatever data_head now covers is read and checked. */
		if (perfring_read_begin(c) > 0) {
			int k;

			while ((k = perfring_read_next(c, &rec)) > 0)
				t.bytes += (uint64_t)k;
			perfring_read_end(c);
		}
		(void)t;
		/* Next round from wherever the reader is now. */
		pc->data_head = pc->data_tail;
		ext->reserve_head = pc->data_tail;
	}
	munmap(m, page + 2 * size);
	close(fd);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	fprintf(stderr, "200 rounds of hostile slots: bounded, in bounds\n");
}

int main(void)
{
	struct perfring_ring *r;
	char path[256];

	page = (size_t)sysconf(_SC_PAGESIZE);
	dir = test_tmpdir("dead");
	perfring_set_log(log_cb, NULL, PERFRING_LOG_WARN);
	killed_between();
	large_gap();
	hostile();
	/* Not an MP consumer: refused. */
	snprintf(path, sizeof(path), "%s/sp.ring", dir);
	{
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = page);

		CHECK_EQ(perfring_ring_create(&o, &r), 0);
		CHECK_EQ(perfring_ring_skip_dead(r), -EINVAL);
		perfring_ring_destroy(r);
		CHECK_EQ(perfring_ring_remove(path), 0);
	}
	printf("dead producers: ok\n");
	return 0;
}
