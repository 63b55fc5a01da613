// SPDX-License-Identifier: MIT
/*
 * The reader on real kernel perf buffers.  A software dummy event on this
 * thread with mmap/comm/task records and sample_id_all (TID|TIME); mmap of
 * files with PROT_EXEC gives PERF_RECORD_MMAP records whose file names (of
 * many lengths) we know, prctl(PR_SET_NAME) gives PERF_RECORD_COMM.  The
 * 2-page buffer is drained with perfring_ring_wrap_kernel() +
 * perfring_read_begin/next/end while it wraps many times: every record
 * must be well-formed and in order, records crossing the end of the data
 * area must come out whole, data_tail must follow, and nothing may be lost.
 * Then a write_backward buffer mapped read-only, read in overwrite mode:
 * newest first, contiguous, valid.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define NFILES 24
#define DATA_PAGES 2

static size_t page;
static const char *dir; /* test_tmpdir() */
static char files[NFILES][320];
static int fds[NFILES];

static int perf_open(struct perf_event_attr *attr)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS ||
		       errno == ENOENT))
		SKIP("perf_event_open: %s", strerror(errno));
	CHECK(fd >= 0, "perf_event_open: %s", strerror(errno));
	return fd;
}

static void base_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->mmap = 1;
	a->comm = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->watermark = 1;
	a->wakeup_watermark = 64;
}

static void make_files(void)
{
	dir = test_tmpdir("kernel");
	for (int i = 0; i < NFILES; i++) {
		/* Names from 1 to ~240 characters: MMAP records of many sizes. */
		int len = 1 + (i * 83) % 240;
		char name[256];

		for (int k = 0; k < len; k++)
			name[k] = (char)('a' + (k + i) % 26);
		name[len] = 0;
		snprintf(files[i], sizeof(files[i]), "%s/%s", dir, name);
		fds[i] = open(files[i], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0700);
		CHECK(fds[i] >= 0, "create %s: %s", files[i], strerror(errno));
		CHECK_EQ(ftruncate(fds[i], (off_t)page), 0);
	}
}

static void remove_files(void)
{
	for (int i = 0; i < NFILES; i++) {
		close(fds[i]);
		unlink(files[i]);
	}
	rmdir(dir);
}

/* Maps file @i executable (one PERF_RECORD_MMAP), unmaps it. */
static uint64_t map_exec(int i)
{
	void *p =
		mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fds[i], 0);

	CHECK(p != MAP_FAILED, "mmap PROT_EXEC %s: %s", files[i],
	      strerror(errno));
	munmap(p, page);
	return (uint64_t)(uintptr_t)p;
}

/* ---- expected records -------------------------------------------------- */

#define MAX_EXPECT 64
struct expect {
	uint32_t type;
	int file; /* MMAP */
	uint64_t addr; /* MMAP */
	char comm[16]; /* COMM */
};
static struct expect q[MAX_EXPECT];
static int q_head, q_tail;

static void push(struct expect e)
{
	CHECK(q_tail - q_head < MAX_EXPECT, "expectation queue full");
	q[q_tail++ % MAX_EXPECT] = e;
}

struct counts {
	uint64_t mmap, comm, other, wrapped, bytes, last_time;
};

/* The sample_id trailer with TID|TIME: u32 pid, u32 tid, u64 time. */
static void check_trailer(const unsigned char *rec, int sz, struct counts *c)
{
	uint32_t pid, tid;
	uint64_t time;

	CHECK(sz >= 8 + 16, "record too short for its sample_id trailer: %d",
	      sz);
	memcpy(&pid, rec + sz - 16, 4);
	memcpy(&tid, rec + sz - 12, 4);
	memcpy(&time, rec + sz - 8, 8);
	CHECK(pid == (uint32_t)getpid() && tid == (uint32_t)syscall(SYS_gettid),
	      "sample_id pid/tid %u/%u", pid, tid);
	CHECK(time >= c->last_time,
	      "sample_id time went backwards: %" PRIu64 " after %" PRIu64, time,
	      c->last_time);
	c->last_time = time;
}

static void check_record(const struct perf_event_header *h, int sz,
			 struct counts *c)
{
	const unsigned char *p = (const unsigned char *)h;

	CHECK(sz >= 8 && (sz & 7) == 0 && h->size == sz, "record size %d/%u",
	      sz, h->size);
	CHECK(h->type != PERF_RECORD_LOST, "PERF_RECORD_LOST from the kernel");
	if (h->type == PERF_RECORD_MMAP) {
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
		} m;
		const char *fname = (const char *)p + 8 + sizeof(m);
		size_t room = (size_t)sz - 8 - sizeof(m) - 16;
		struct expect e;

		CHECK(q_head < q_tail, "unexpected MMAP record %.*s", (int)room,
		      fname);
		e = q[q_head++ % MAX_EXPECT];
		CHECK(e.type == PERF_RECORD_MMAP,
		      "MMAP record, expected type %u", e.type);
		memcpy(&m, p + 8, sizeof(m));
		CHECK(strnlen(fname, room) < room,
		      "MMAP file name not terminated");
		CHECK(strcmp(fname, files[e.file]) == 0,
		      "MMAP file name \"%s\", mapped \"%s\"", fname,
		      files[e.file]);
		/* The name is padded to 8 bytes, no more. */
		CHECK(room == ((strlen(fname) + 1 + 7) & ~(size_t)7),
		      "MMAP name room %zu for a %zu-byte name", room,
		      strlen(fname));
		CHECK(m.addr == e.addr && m.len == page && m.pgoff == 0,
		      "MMAP addr %#" PRIx64 " len %" PRIu64 " pgoff %" PRIu64
		      ", want %#" PRIx64 " %zu 0",
		      m.addr, m.len, m.pgoff, e.addr, page);
		CHECK(m.pid == (uint32_t)getpid(), "MMAP pid");
		check_trailer(p, sz, c);
		c->mmap++;
	} else if (h->type == PERF_RECORD_COMM) {
		const char *comm = (const char *)p + 16;
		size_t room = (size_t)sz - 16 - 16;
		struct expect e;

		CHECK(q_head < q_tail,
		      "unexpected COMM record \"%.*s\" misc %#x", (int)room,
		      comm, h->misc);
		e = q[q_head++ % MAX_EXPECT];
		CHECK(e.type == PERF_RECORD_COMM,
		      "COMM record, expected type %u", e.type);
		CHECK(strnlen(comm, room) < room, "COMM not terminated");
		CHECK(strcmp(comm, e.comm) == 0, "COMM \"%s\", set \"%s\"",
		      comm, e.comm);
		check_trailer(p, sz, c);
		c->comm++;
	} else {
		c->other++;
	}
}

/* Reads everything waiting; counts records that crossed the end. */
static void drain(struct perfring_ring *r,
		  const struct perf_event_mmap_page *pc, uint64_t size,
		  struct counts *c)
{
	const struct perf_event_header *h;
	const unsigned char *data = (const unsigned char *)pc + page;
	uint64_t pos = pc->data_tail, head;
	int64_t avail = perfring_read_begin(r);
	int sz;

	CHECK(avail >= 0, "reader_begin: %lld", (long long)avail);
	CHECK(avail <= (int64_t)size, "avail %lld", (long long)avail);
	head = pos + (uint64_t)avail;
	while ((sz = perfring_read_next(r, &h)) > 0) {
		uint64_t off = pos & (size - 1);

		if (off + (uint64_t)sz > size) {
			/* Crossed the end: handed out as a copy. */
			c->wrapped++;
			CHECK((const unsigned char *)h < data ||
				      (const unsigned char *)h >= data + size,
			      "wrapped record handed out in place");
		} else {
			CHECK((const unsigned char *)h == data + off,
			      "record not handed out in place");
		}
		check_record(h, sz, c);
		pos += (uint64_t)sz;
		c->bytes += (uint64_t)sz;
	}
	CHECK_EQ(sz, 0);
	CHECK_EQ(pos, head);
	perfring_read_end(r);
	CHECK(pc->data_tail == head, "data_tail %llu, want %llu",
	      (unsigned long long)pc->data_tail, (unsigned long long)head);
}

static void forward(void)
{
	struct perf_event_attr attr;
	size_t len = (1 + DATA_PAGES) * page;
	uint64_t size = DATA_PAGES * page;
	struct counts c = { 0, 0, 0, 0, 0, 0 };
	struct perfring_ring *r;
	struct perf_event_mmap_page *pc;
	int fd, n = 0;
	char oldname[17] = "";

	base_attr(&attr);
	fd = perf_open(&attr);
	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(pc != MAP_FAILED, "mmap of the perf buffer: %s", strerror(errno));
	CHECK_EQ(pc->data_size, size);
	CHECK_EQ(perfring_ring_wrap_kernel(pc, len, fd, false, &r), 0);
	CHECK_EQ(perfring_ring_data_size(r), size);
	CHECK(perfring_ring_control(r) == pc, "control page");
	CHECK_EQ(perfring_ring_wait_fd(r), fd);
	CHECK_EQ(perfring_ring_fd(r), -EINVAL);
	prctl(PR_GET_NAME, oldname);

	/* Wrong geometry is refused. */
	{
		struct perfring_ring *bad = (struct perfring_ring *)&bad;

		CHECK_EQ(perfring_ring_wrap_kernel(pc, len - page, fd, false,
						   &bad),
			 -EINVAL);
		CHECK(bad == NULL, "*out");
		CHECK_EQ(perfring_ring_wrap_kernel(pc, len + page, fd, false,
						   &bad),
			 -EINVAL);
	}

	/* Skip whatever came before us (nothing, normally). */
	if (perfring_read_begin(r) > 0) {
		const void *ptr[2];
		size_t plen[2];

		CHECK(perfring_read_range(r, ptr, plen) > 0, "range");
	}
	perfring_read_end(r);

	for (int step = 0; step < 1200; step++) {
		for (int k = 0; k < 3; k++, n++) {
			int i = (n * 7) % NFILES;
			struct expect e = { PERF_RECORD_MMAP, i, 0, "" };

			e.addr = map_exec(i);
			push(e);
		}
		if (step % 2 == 0) {
			struct expect e = { PERF_RECORD_COMM, 0, 0, "" };

			char tmp[64];

			/* 3 to 15 characters: COMM records of two sizes. */
			snprintf(tmp, sizeof(tmp), "pr%.*d", 1 + step % 13,
				 step);
			memcpy(e.comm, tmp, sizeof(e.comm) - 1);
			e.comm[sizeof(e.comm) - 1] = 0;
			CHECK_EQ(prctl(PR_SET_NAME, e.comm), 0);
			push(e);
		}
		drain(r, pc, size, &c);
		CHECK(q_head == q_tail, "step %d: %d expected records missing",
		      step, q_tail - q_head);
	}
	{
		struct expect e = { PERF_RECORD_COMM, 0, 0, "" };

		memcpy(e.comm, oldname, sizeof(e.comm) - 1);
		CHECK_EQ(prctl(PR_SET_NAME, oldname), 0);
		push(e);
	}
	drain(r, pc, size, &c);
	CHECK_EQ(q_head, q_tail);
	CHECK_EQ(c.mmap, (uint64_t)n);
	CHECK_EQ(c.comm, 601);
	CHECK(c.bytes > 20 * size,
	      "the kernel ring wrapped only %" PRIu64 " times", c.bytes / size);
	CHECK(c.wrapped >= 1,
	      "no record crossed the end of the data area in %" PRIu64 " laps",
	      c.bytes / size);
	fprintf(stderr,
		"forward: %" PRIu64 " MMAP, %" PRIu64 " COMM, %" PRIu64
		" other, %" PRIu64 " bytes (%" PRIu64 " laps), %" PRIu64
		" records wrapped\n",
		c.mmap, c.comm, c.other, c.bytes, c.bytes / size, c.wrapped);

	/* Lost records show up as PERF_RECORD_LOST from the kernel: let the
	 * ring overflow once and look at it. */
	{
		const struct perf_event_header *h;
		uint64_t lost = 0, nrec = 0;
		int sz;

		for (int k = 0; k < 400; k++)
			map_exec(k % NFILES);
		map_exec(0); /* should fit after a drain, with a LOST */
		CHECK(perfring_read_begin(r) > 0, "records");
		while ((sz = perfring_read_next(r, &h)) > 0)
			nrec++;
		perfring_read_end(r);
		map_exec(1);
		CHECK(perfring_read_begin(r) > 0, "records after the overflow");
		while ((sz = perfring_read_next(r, &h)) > 0) {
			if (h->type == PERF_RECORD_LOST) {
				const struct perfring_lost_record *l =
					(const void *)h;
				lost += l->lost;
			}
		}
		CHECK_EQ(sz, 0);
		perfring_read_end(r);
		CHECK(lost > 0 && lost + nrec >= 400,
		      "kernel LOST record: %" PRIu64 " lost, %" PRIu64 " read",
		      lost, nrec);
	}
	perfring_ring_destroy(r);
	munmap(pc, len);
	close(fd);
}

static void backward(void)
{
	struct perf_event_attr attr;
	size_t len = (1 + DATA_PAGES) * page;
	uint64_t size = DATA_PAGES * page;
	struct perf_event_mmap_page *pc;
	struct perfring_ring *r;
	const struct perf_event_header *h;
	uint64_t addrs[600];
	int fd, n = 0, sz;

	base_attr(&attr);
	attr.comm = 0;
	attr.task = 0;
	attr.write_backward = 1;
	fd = perf_open(&attr);
	pc = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(pc != MAP_FAILED, "mmap of the backward perf buffer: %s",
	      strerror(errno));
	CHECK_EQ(perfring_ring_wrap_kernel(pc, len, fd, true, &r), 0);

	for (int round = 0; round < 3; round++) {
		int from = n, count = round == 0 ? 300 : 5 + round, got = 0;
		uint64_t bytes = 0, last_time = UINT64_MAX;
		int64_t avail;

		for (int k = 0; k < count; k++, n++)
			addrs[n] = map_exec(n % NFILES);
		avail = perfring_read_begin(r);
		CHECK(avail > 0 && avail <= (int64_t)size,
		      "overwrite batch %lld", (long long)avail);
		/* Newest first: the last mapping, then each one before it. */
		while ((sz = perfring_read_next(r, &h)) > 0) {
			const unsigned char *p = (const unsigned char *)h;
			int want = n - 1 - got;
			uint64_t addr, time;

			CHECK(h->size == sz && (sz & 7) == 0, "record size");
			CHECK(h->type == PERF_RECORD_MMAP,
			      "record %d of the overwrite batch: type %u", got,
			      h->type);
			CHECK(want >= from, "more records than written");
			CHECK(strcmp((const char *)p + 40,
				     files[want % NFILES]) == 0,
			      "overwrite record %d: file \"%s\", want \"%s\"",
			      got, (const char *)p + 40, files[want % NFILES]);
			memcpy(&addr, p + 16, 8);
			CHECK_EQ(addr, addrs[want]);
			memcpy(&time, p + sz - 8, 8);
			CHECK(time <= last_time, "times not decreasing");
			last_time = time;
			got++;
			bytes += (uint64_t)sz;
		}
		CHECK_EQ(sz, 0);
		CHECK_EQ(bytes, (uint64_t)avail);
		perfring_read_end(r);
		if (round == 0) {
			/* 300 mappings overflow the ring: a ring-full, minus
			 * the partly overwritten oldest record. */
			CHECK(got < count, "all %d records fit?", count);
			CHECK(bytes + 400 > size,
			      "overwrite read only %" PRIu64 " of %" PRIu64
			      " bytes",
			      bytes, size);
		} else {
			/* Only the new ones. */
			CHECK(got == count,
			      "incremental overwrite read: %d records, want %d",
			      got, count);
		}
	}
	/* The reader resumed the buffer: new records still arrive. */
	map_exec(3);
	CHECK(perfring_read_begin(r) > 0, "buffer still paused after reading");
	CHECK(perfring_read_next(r, &h) > 0 && h->type == PERF_RECORD_MMAP,
	      "new record");
	perfring_read_end(r);
	perfring_ring_destroy(r);
	munmap(pc, len);
	close(fd);
}

int main(void)
{
	struct perf_event_attr attr;

	page = (size_t)sysconf(_SC_PAGESIZE);
	base_attr(&attr);
	close(perf_open(&attr)); /* skips if perf events are not allowed */
	make_files();
	forward();
	backward();
	remove_files();
	return T_EXIT_PASS;
}
