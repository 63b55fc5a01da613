// SPDX-License-Identifier: MIT
/*
 * PERFRING_MODE_OVERWRITE (backward writing, like attr.write_backward):
 * after writing many times the ring size, a read returns the newest records
 * first with strictly decreasing, contiguous sequence numbers, the newest
 * being the last written, no PERF_RECORD_LOST, at most data_size bytes (and
 * nearly all of it); incremental reads return only what is new; a consumer
 * attached by path (mapped read-only) sees the same; a user's pause
 * survives a read; head/tail counters near 2^64 and crossing zero.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 72
#define MAX_REC 1032u

static size_t page;
static const char *dir; /* test_tmpdir() */

static unsigned char pattern(uint64_t seq, uint32_t i)
{
	return (unsigned char)(seq * 29u + i * 3u + 5u);
}

static uint32_t size_of(uint64_t seq)
{
	static const uint32_t sizes[] = { 16,  24,  40,	  64, 104,
					  200, 512, 1032, 32, 8 * 37 };

	return sizes[(seq * 7 + seq / 3) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void fill(unsigned char *buf, uint64_t seq)
{
	uint32_t size = size_of(seq);
	struct perf_event_header h = { .type = T_TYPE,
				       .misc = 0,
				       .size = (uint16_t)size };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &seq, 8);
	for (uint32_t i = 16; i < size; i++)
		buf[i] = pattern(seq, i);
}

static int emit(struct perfring_ring *r, uint64_t seq)
{
	unsigned char buf[MAX_REC];

	fill(buf, seq);
	return perfring_ring_emit(r, buf, size_of(seq));
}

/* Returns the record's seq after checking its bytes. */
static uint64_t check_rec(const struct perf_event_header *h, int sz)
{
	const unsigned char *p = (const unsigned char *)h;
	uint64_t seq;

	CHECK(sz > 0, "reader_next: %d", sz);
	CHECK(h->type != PERF_RECORD_LOST,
	      "overwrite ring wrote a LOST record");
	CHECK(h->type == T_TYPE && h->size == sz, "record type %u size %u/%d",
	      h->type, h->size, sz);
	memcpy(&seq, p + 8, 8);
	CHECK(size_of(seq) == (uint32_t)sz, "record %llu: size %d, want %u",
	      (unsigned long long)seq, sz, size_of(seq));
	for (uint32_t i = 16; i < (uint32_t)sz; i++)
		CHECK(p[i] == pattern(seq, i), "record %llu: byte %u",
		      (unsigned long long)seq, i);
	return seq;
}

struct batch {
	uint64_t first, last, count, bytes;
	int64_t avail;
};

/* Reads one batch; records must be newest first and contiguous. */
static struct batch read_batch(struct perfring_ring *r)
{
	const struct perf_event_header *h;
	struct batch b = { 0, 0, 0, 0, 0 };
	int sz;

	b.avail = perfring_read_begin(r);
	CHECK(b.avail >= 0, "reader_begin: %lld", (long long)b.avail);
	CHECK(b.avail <= (int64_t)perfring_ring_data_size(r),
	      "batch of %lld bytes in a %llu-byte ring", (long long)b.avail,
	      (unsigned long long)perfring_ring_data_size(r));
	while ((sz = perfring_read_next(r, &h)) > 0) {
		uint64_t seq = check_rec(h, sz);

		if (b.count == 0)
			b.first = seq;
		else
			CHECK(seq == b.last - 1,
			      "record %llu after %llu: not newest-first contiguous",
			      (unsigned long long)seq,
			      (unsigned long long)b.last);
		b.last = seq;
		b.count++;
		b.bytes += (uint64_t)sz;
	}
	CHECK_EQ(sz, 0);
	perfring_read_end(r);
	CHECK_EQ(b.bytes, (uint64_t)b.avail);
	return b;
}

/* Writes records until @bytes have been written; returns the next seq. */
static uint64_t write_bytes(struct perfring_ring *r, uint64_t seq,
			    uint64_t bytes, uint64_t *written)
{
	uint64_t w = 0;

	while (w < bytes) {
		int err = emit(r, seq);

		CHECK(err == 0, "overwrite emit %llu: %d",
		      (unsigned long long)seq, err);
		w += size_of(seq);
		seq++;
	}
	if (written)
		*written = w;
	return seq;
}

static struct perfring_ring_stats stats(struct perfring_ring *r)
{
	struct perfring_ring_stats st = { .sz = sizeof(st) };

	CHECK_EQ(perfring_ring_stats(r, &st), 0);
	return st;
}

/*
 * The writer @w and the reader @rd (the same handle or two): fill many
 * times over, read, then incremental reads.
 */
static void scenario(struct perfring_ring *w, struct perfring_ring *rd,
		     uint64_t start)
{
	uint64_t size = perfring_ring_data_size(w), seq = 0, written, total = 0;
	struct perfring_ring_stats st;
	struct batch b;

	/* Nothing written yet: nothing to read. */
	b = read_batch(rd);
	CHECK_EQ(b.count, 0);

	/* Less than a ring: everything, newest first. */
	seq = write_bytes(w, seq, size / 3, &written);
	total += written;
	b = read_batch(rd);
	CHECK_EQ(b.count, seq);
	CHECK_EQ(b.first, seq - 1);
	CHECK_EQ(b.last, 0);
	CHECK_EQ(b.bytes, written);

	/* Many times the ring: the newest ring-full. */
	seq = write_bytes(w, seq, 37 * size + 123, &written);
	total += written;
	st = stats(w);
	CHECK(st.head == start - total,
	      "data_head %#llx, want start - %llu = %#llx",
	      (unsigned long long)st.head, (unsigned long long)total,
	      (unsigned long long)(start - total));
	CHECK_EQ(st.lost_total, 0);
	CHECK_EQ(st.paused, 0);
	b = read_batch(rd);
	CHECK(b.count > 0, "nothing read after writing %llu bytes",
	      (unsigned long long)written);
	CHECK(b.first == seq - 1,
	      "newest record read is %llu, last written %llu",
	      (unsigned long long)b.first, (unsigned long long)(seq - 1));
	CHECK(b.bytes <= size, "read %llu bytes", (unsigned long long)b.bytes);
	/* Only the oldest, partly overwritten record may be missing. */
	CHECK(b.bytes + MAX_REC > size,
	      "read only %llu bytes of a full %llu-byte ring",
	      (unsigned long long)b.bytes, (unsigned long long)size);
	CHECK(b.bytes + size_of(b.last - 1) > size,
	      "record %llu (%u bytes) would still have fit",
	      (unsigned long long)(b.last - 1), size_of(b.last - 1));
	st = stats(w);
	CHECK_EQ(st.paused, 0); /* the reader resumed the ring */
	CHECK_EQ(st.lost_total, 0);

	/* Nothing new: nothing read. */
	b = read_batch(rd);
	CHECK_EQ(b.count, 0);

	/* A few more: only those. */
	for (int round = 0; round < 20; round++) {
		uint64_t from = seq;
		int k = 1 + round % 6;

		for (int i = 0; i < k; i++)
			CHECK_EQ(emit(w, seq++), 0);
		b = read_batch(rd);
		CHECK(b.count == (uint64_t)k && b.first == seq - 1 &&
			      b.last == from,
		      "incremental read: %llu records %llu..%llu, want %d %llu..%llu",
		      (unsigned long long)b.count, (unsigned long long)b.first,
		      (unsigned long long)b.last, k,
		      (unsigned long long)(seq - 1), (unsigned long long)from);
	}

	/* Over a ring again between two reads: a full ring, newest first. */
	seq = write_bytes(w, seq, 2 * size, NULL);
	b = read_batch(rd);
	CHECK_EQ(b.first, seq - 1);
	CHECK(b.bytes <= size && b.bytes + MAX_REC > size, "read %llu bytes",
	      (unsigned long long)b.bytes);

	/* While a batch is open the ring is paused: writes are dropped
	 * (counted, no LOST record); reader_end resumes. */
	CHECK_EQ(emit(w, seq++), 0);
	CHECK(perfring_read_begin(rd) > 0, "one record waits");
	st = stats(w);
	CHECK_EQ(st.paused, 1);
	CHECK_EQ(emit(w, 999999), -EAGAIN);
	CHECK_EQ(emit(w, 999999), -EAGAIN);
	perfring_read_end(rd);
	st = stats(w);
	CHECK_EQ(st.paused, 0);
	CHECK_EQ(st.lost_total, 2);
	CHECK_EQ(st.lost_pending, 0);
	CHECK_EQ(emit(w, seq++), 0);
	b = read_batch(rd);
	CHECK(b.count == 1 && b.first == seq - 1,
	      "after the drops: %llu records, newest %llu",
	      (unsigned long long)b.count, (unsigned long long)b.first);

	/* Paused by the user: reading leaves it paused. */
	CHECK_EQ(perfring_ring_pause(rd, true), 0);
	CHECK_EQ(emit(w, 999999), -EAGAIN);
	b = read_batch(rd);
	CHECK_EQ(b.count, 0);
	st = stats(w);
	CHECK(st.paused == 1, "a read resumed a ring the user had paused");
	CHECK_EQ(emit(w, 999999), -EAGAIN);
	CHECK_EQ(perfring_ring_pause(rd, false), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(emit(w, seq++), 0);
	CHECK_EQ(perfring_ring_pause(rd, true), 0);
	b = read_batch(rd);
	CHECK(b.count == 3 && b.first == seq - 1, "paused read: %llu records",
	      (unsigned long long)b.count);
	st = stats(w);
	CHECK_EQ(st.paused, 1);
	CHECK_EQ(perfring_ring_pause(rd, false), 0);
	st = stats(w);
	CHECK_EQ(st.lost_total, 4);
	CHECK_EQ(st.lost_pending, 0);

	/* reader_range on an overwrite batch: the raw bytes, newest first. */
	{
		unsigned char want[3 * MAX_REC], tmp[MAX_REC];
		const void *ptr[2];
		size_t len[2], off = 0;

		for (int i = 0; i < 3; i++)
			CHECK_EQ(emit(w, seq + (uint64_t)i), 0);
		for (int i = 2; i >= 0; i--) {
			fill(tmp, seq + (uint64_t)i);
			memcpy(want + off, tmp, size_of(seq + (uint64_t)i));
			off += size_of(seq + (uint64_t)i);
		}
		seq += 3;
		CHECK_EQ(perfring_read_begin(rd), (int64_t)off);
		CHECK_EQ(perfring_read_range(rd, ptr, len), 1);
		CHECK_EQ(len[0], off);
		CHECK(memcmp(ptr[0], want, off) == 0, "overwrite range bytes");
		perfring_read_end(rd);
	}
}

static void memfd_ring(uint64_t start)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 4 * page,
		      .flags = PERFRING_MODE_OVERWRITE, .start = start);
	struct perfring_ring *r;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	scenario(r, r, start);
	perfring_ring_destroy(r);
}

/* Is [addr, addr+len) mapped without write permission? */
static int mapped_read_only(const void *addr, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t a = (uintptr_t)addr, covered = a;
	int ok = 1;

	CHECK(f != NULL, "open /proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= a || lo >= a + len)
			continue;
		if (perms[1] == 'w')
			ok = 0;
		if (lo <= covered && hi > covered)
			covered = hi;
	}
	fclose(f);
	return ok && covered >= a + len;
}

static void named_ring(uint64_t start)
{
	char path[4096];
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 8 * page,
		      .flags = PERFRING_MODE_OVERWRITE, .start = start,
		      .role = PERFRING_ROLE_PRODUCER, .path = path);
	struct perfring_ring *w, *rd;
	const struct perf_event_mmap_page *pc;

	snprintf(path, sizeof(path), "%s/ow-%llx", dir,
		 (unsigned long long)start);
	CHECK_EQ(perfring_ring_create(&o, &w), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &rd), 0);
	pc = perfring_ring_control(rd);
	CHECK(pc != perfring_ring_control(w), "two handles, two mappings");
	CHECK(mapped_read_only(pc, page + 2 * 8 * page),
	      "overwrite consumer's mapping is writable");
	CHECK(!mapped_read_only(perfring_ring_control(w), page),
	      "producer's mapping is read-only?");
	scenario(w, rd, start);
	perfring_ring_destroy(rd);

	/* A consumer attaching late reads what is there, newest first. */
	{
		uint64_t seq = write_bytes(w, 1u << 20, 3 * 8 * page, NULL);
		struct batch b;

		CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER,
					      &rd),
			 0);
		b = read_batch(rd);
		CHECK_EQ(b.first, seq - 1);
		CHECK(b.bytes <= 8 * page && b.bytes + MAX_REC > 8 * page,
		      "late consumer read %llu bytes",
		      (unsigned long long)b.bytes);
		b = read_batch(rd);
		CHECK_EQ(b.count, 0);

		/* Destroyed in the middle of a batch: the ring is resumed. */
		CHECK_EQ(emit(w, seq++), 0);
		CHECK(perfring_read_begin(rd) > 0, "one record");
		CHECK_EQ(stats(w).paused, 1);
		CHECK_EQ(emit(w, 999999), -EAGAIN);
		perfring_ring_destroy(rd);
		CHECK(stats(w).paused == 0,
		      "destroying a reader mid-batch left the ring paused");
		CHECK_EQ(emit(w, seq++), 0);
	}
	perfring_ring_destroy(w);
	CHECK_EQ(perfring_ring_remove(path), 0);
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	memfd_ring(0);
	/* data_tail-side counter (head + size) overflows at once. */
	memfd_ring(UINT64_MAX - 3 * 4 * page + 1);
	memfd_ring(UINT64_MAX - 4 * page + 1 + 64);
	/* Backward writing from just above zero: head crosses 0. */
	memfd_ring(3 * 4 * page + 40);
	memfd_ring(8);

	dir = test_tmpdir("ow");
	named_ring(0);
	named_ring(2 * 8 * page + 8);
	CHECK_EQ(rmdir(dir), 0);
	return T_EXIT_PASS;
}
