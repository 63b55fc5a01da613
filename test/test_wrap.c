// SPDX-License-Identifier: MIT
/*
 * Wrap-around of the data area: many laps with various record sizes,
 * records straddling the end of the data area (contiguous thanks to the
 * double mapping: every byte is checked, and checked against a plain
 * single mapping of the same file), "exactly full", head/tail counters
 * wrapping past 2^64 (single- and multi-producer), and
 * perfring_read_range() handing out the raw bytes (one piece on our
 * double-mapped rings, two on a non-double-mapped kernel-style ring).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 70 /* in perf's user range (>= 64) */

static size_t page;

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static unsigned char pattern(uint64_t seq, uint32_t i)
{
	return (unsigned char)(seq * 131u + i * 7u + 1u);
}

/* A test record: header, seq (if size >= 16), then a seq-derived pattern. */
static void fill(unsigned char *buf, uint32_t size, uint64_t seq)
{
	struct perf_event_header h = { .type = T_TYPE,
				       .misc = (uint16_t)seq,
				       .size = (uint16_t)size };

	memcpy(buf, &h, sizeof(h));
	if (size >= 16)
		memcpy(buf + 8, &seq, 8);
	for (uint32_t i = 16; i < size; i++)
		buf[i] = pattern(seq, i);
}

static void verify(const void *rec, int got, uint32_t size, uint64_t seq)
{
	const unsigned char *p = rec;
	struct perf_event_header h;
	uint64_t s;

	CHECK(got == (int)size, "record %llu: reader_next returned %d, want %u",
	      (unsigned long long)seq, got, size);
	memcpy(&h, p, sizeof(h));
	CHECK(h.type == T_TYPE && h.size == size && h.misc == (uint16_t)seq,
	      "record %llu: header type %u misc %u size %u, want %u/%u/%u",
	      (unsigned long long)seq, h.type, h.misc, h.size, T_TYPE,
	      (uint16_t)seq, size);
	if (size >= 16) {
		memcpy(&s, p + 8, 8);
		CHECK(s == seq, "record seq %llu, want %llu",
		      (unsigned long long)s, (unsigned long long)seq);
	}
	for (uint32_t i = 16; i < size; i++)
		CHECK(p[i] == pattern(seq, i),
		      "record %llu size %u: byte %u is %#x, want %#x",
		      (unsigned long long)seq, size, i, p[i], pattern(seq, i));
}

static int emit(struct perfring_ring *r, uint32_t size, uint64_t seq)
{
	unsigned char buf[PERFRING_RECORD_MAX];

	fill(buf, size, seq);
	return perfring_ring_emit(r, buf, size);
}

static struct perfring_ring *make(uint64_t data_size, unsigned int flags,
				  uint64_t start)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = data_size,
		      .flags = flags, .start = start, .id = 7);
	struct perfring_ring *r = NULL;
	int err = perfring_ring_create(&o, &r);

	CHECK(err == 0 && r,
	      "perfring_ring_create(size %llu flags %#x start %#llx): %d",
	      (unsigned long long)data_size, flags, (unsigned long long)start,
	      err);
	return r;
}

static const unsigned char *data_of(struct perfring_ring *r)
{
	return (const unsigned char *)perfring_ring_control(r) + page;
}

struct stream {
	uint64_t next_emit, next_read;
	uint64_t straddles; /* records read that crossed the end of data */
	uint64_t bytes_read;
};

/* Size of record @seq, from a small table of awkward sizes. */
static uint32_t size_of(uint64_t seq, const uint32_t *sizes, size_t n)
{
	return sizes[(seq * 2654435761u >> 7) % n];
}

/*
 * Reads up to @max records of the stream (all if max < 0), checking each;
 * returns records read.
 */
static int drain(struct perfring_ring *r, struct stream *s,
		 const uint32_t *sizes, size_t n, int max)
{
	const struct perf_event_header *rec;
	uint64_t size = perfring_ring_data_size(r);
	uint64_t pos = perfring_ring_control(r)->data_tail;
	int64_t avail = perfring_read_begin(r);
	int got = 0, sz;

	CHECK(avail >= 0, "reader_begin: %lld", (long long)avail);
	CHECK(avail <= (int64_t)size, "avail %lld > data size",
	      (long long)avail);
	while ((max < 0 || got < max) &&
	       (sz = perfring_read_next(r, &rec)) != 0) {
		uint32_t want = size_of(s->next_read, sizes, n);
		uint64_t off = pos & (size - 1);

		CHECK(sz > 0, "reader_next: %d", sz);
		/* Our rings are double-mapped: the record is handed out in
		 * place, contiguous even when it crosses the end. */
		CHECK((const unsigned char *)rec == data_of(r) + off,
		      "record at counter %llu handed out at %p, not in place %p",
		      (unsigned long long)pos, (const void *)rec,
		      (const void *)(data_of(r) + off));
		if (off + want > size)
			s->straddles++;
		verify(rec, sz, want, s->next_read);
		s->next_read++;
		s->bytes_read += (uint64_t)sz;
		pos += (uint64_t)sz;
		got++;
	}
	perfring_read_end(r);
	CHECK(perfring_ring_control(r)->data_tail == pos,
	      "data_tail %llu after reading to %llu",
	      (unsigned long long)perfring_ring_control(r)->data_tail,
	      (unsigned long long)pos);
	return got;
}

/*
 * Emits a random number of records, then reads a random number, many laps
 * of the data area; nothing may be lost and every record must be intact.
 */
static void laps(uint64_t data_size, unsigned int flags, uint64_t start,
		 const uint32_t *sizes, size_t n, uint64_t min_laps)
{
	struct perfring_ring *r = make(data_size, flags, start);
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct stream s = { 0, 0, 0, 0 };

	while (s.bytes_read < min_laps * data_size) {
		int burst = (int)(rnd() % 64) + 1, err = 0;

		for (int i = 0; i < burst; i++) {
			uint32_t sz = size_of(s.next_emit, sizes, n);

			err = emit(r, sz, s.next_emit);
			if (err == -ENOSPC)
				break;
			CHECK(err == 0, "emit: %d", err);
			s.next_emit++;
		}
		if (err == -ENOSPC) {
			/* The ring really is full for this record. */
			perfring_ring_stats(r, &st);
			CHECK(st.head - st.tail +
					      size_of(s.next_emit, sizes, n) >
				      data_size,
			      "-ENOSPC with %llu of %llu bytes used",
			      (unsigned long long)(st.head - st.tail),
			      (unsigned long long)data_size);
			/* Read everything so the LOST record comes next. */
			drain(r, &s, sizes, n, -1);
			CHECK_EQ(s.next_read, s.next_emit);
			/* The dropped record left a LOST in front of the
			 * next one; retry and check it. */
			uint32_t sz = size_of(s.next_emit, sizes, n);
			const struct perf_event_header *rec;
			const struct perfring_lost_record *l;

			CHECK_EQ(emit(r, sz, s.next_emit), 0);
			CHECK(perfring_read_begin(r) ==
				      (int64_t)(sz + PERFRING_LOST_RECORD_SIZE),
			      "LOST + record expected");
			CHECK_EQ(perfring_read_next(r, &rec),
				 PERFRING_LOST_RECORD_SIZE);
			l = (const struct perfring_lost_record *)rec;
			CHECK_EQ(l->header.type, PERF_RECORD_LOST);
			CHECK_EQ(l->lost, 1);
			CHECK_EQ(l->id, 7);
			CHECK_EQ(perfring_read_next(r, &rec), (int)sz);
			verify(rec, (int)sz, sz, s.next_emit);
			CHECK_EQ(perfring_read_next(r, &rec), 0);
			perfring_read_end(r);
			s.next_emit++;
			s.next_read++;
			continue;
		}
		drain(r, &s, sizes, n, (int)(rnd() % 80));
	}
	drain(r, &s, sizes, n, -1);
	CHECK_EQ(s.next_read, s.next_emit);
	CHECK(s.straddles >= min_laps / 2,
	      "only %llu records crossed the end of the data area in %llu laps",
	      (unsigned long long)s.straddles, (unsigned long long)min_laps);
	perfring_ring_stats(r, &st);
	CHECK_EQ(st.head, st.tail);
	CHECK_EQ(st.lost_pending, 0);
	CHECK(st.head - start >= min_laps * data_size,
	      "only %llu bytes went through",
	      (unsigned long long)(st.head - start));
	perfring_ring_destroy(r);
}

/* One record crossing the end: in place, contiguous, and the same bytes as
 * the end and the start of the data area in a plain mapping of the file. */
static void straddle(unsigned int flags)
{
	struct perfring_ring *r = make(page, flags, 0);
	const struct perf_event_header *rec;
	unsigned char *single;
	uint64_t size = page;
	unsigned char want[512];

	/* Move head to 16 bytes before the end. */
	for (uint64_t i = 0; i < (size - 16) / 64; i++)
		CHECK_EQ(emit(r, 64, i), 0);
	CHECK_EQ(emit(r, 48, 1000), 0); /* size-16 = 63*64 + 48 */
	CHECK_EQ(perfring_read_begin(r), (int64_t)(size - 16));
	{
		const void *ptr[2];
		size_t len[2];

		/* reader_end frees only what was read: skip it all. */
		CHECK_EQ(perfring_read_range(r, ptr, len), 1);
		CHECK_EQ(len[0], size - 16);
	}
	perfring_read_end(r);
	CHECK_EQ(perfring_ring_control(r)->data_tail, size - 16);

	fill(want, sizeof(want), 4242);
	CHECK_EQ(perfring_ring_emit(r, want, sizeof(want)), 0);
	CHECK_EQ(perfring_read_begin(r), (int64_t)sizeof(want));
	CHECK_EQ(perfring_read_next(r, &rec), (int)sizeof(want));
	CHECK((const unsigned char *)rec == data_of(r) + size - 16,
	      "straddling record not handed out in place");
	verify(rec, sizeof(want), sizeof(want), 4242);
	CHECK(memcmp(rec, want, sizeof(want)) == 0, "record bytes differ");

	single = mmap(NULL, page + size, PROT_READ, MAP_SHARED,
		      perfring_ring_fd(r), 0);
	CHECK(single != MAP_FAILED, "mmap of ring fd");
	CHECK(memcmp(single + page + size - 16, want, 16) == 0,
	      "first 16 bytes not at the end of the data area");
	CHECK(memcmp(single + page, want + 16, sizeof(want) - 16) == 0,
	      "the rest not at the start of the data area");
	munmap(single, page + size);
	CHECK_EQ(perfring_read_next(r, &rec), 0);
	perfring_read_end(r);
	CHECK_EQ(perfring_ring_control(r)->data_tail, size - 16 + sizeof(want));
	perfring_ring_destroy(r);
}

/* data_size/rec records fit exactly, the next one is dropped. */
static void exactly_full(unsigned int flags, uint64_t start)
{
	static const uint32_t recs[] = { 8, 16, 32, 64, 256, 1024, 2048, 4096 };

	for (size_t k = 0; k < sizeof(recs) / sizeof(recs[0]); k++) {
		uint64_t size = 2 * page;
		struct perfring_ring *r = make(size, flags, start);
		struct perfring_ring_stats st = { .sz = sizeof(st) };
		const struct perf_event_header *rec;
		uint32_t rs = recs[k];
		uint64_t n = size / rs, seq = 0;

		for (int round = 0; round < 2; round++) {
			for (uint64_t i = 0; i < n; i++)
				CHECK(emit(r, rs, seq++) == 0,
				      "rec %u: record %llu of %llu did not fit",
				      rs, (unsigned long long)i,
				      (unsigned long long)n);
			perfring_ring_stats(r, &st);
			CHECK_EQ(st.head - st.tail, size);
			CHECK_EQ(st.lost_total, 2 * (uint64_t)round);
			CHECK_EQ(emit(r, rs, seq), -ENOSPC);
			/* A header-only record does not fit either. */
			CHECK_EQ(emit(r, 8, seq), -ENOSPC);
			perfring_ring_stats(r, &st);
			CHECK_EQ(st.lost_total, 2 * (uint64_t)round + 2);
			CHECK_EQ(st.lost_pending, 2);
			CHECK_EQ(st.head - st.tail, size);

			/* Read the full ring: n records, nothing else. */
			CHECK_EQ(perfring_read_begin(r), (int64_t)size);
			for (uint64_t i = 0; i < n; i++) {
				int got = perfring_read_next(r, &rec);

				verify(rec, got, rs, seq - n + i);
			}
			CHECK_EQ(perfring_read_next(r, &rec), 0);
			perfring_read_end(r);

			/* The drops come out as one LOST before the next. */
			CHECK_EQ(emit(r, 16, 999), 0);
			CHECK_EQ(perfring_read_begin(r),
				 PERFRING_LOST_RECORD_SIZE + 16);
			CHECK_EQ(perfring_read_next(r, &rec),
				 PERFRING_LOST_RECORD_SIZE);
			CHECK_EQ(rec->type, PERF_RECORD_LOST);
			CHECK_EQ(
				((const struct perfring_lost_record *)rec)->lost,
				2);
			CHECK_EQ(perfring_read_next(r, &rec), 16);
			verify(rec, 16, 16, 999);
			perfring_read_end(r);
			/* Round 2 fills the ring from an unaligned position. */
		}
		perfring_ring_destroy(r);
	}
}

/* perfring_read_range(): the raw bytes of the rest of the batch. */
static void range_raw(void)
{
	uint64_t size = 2 * page;
	struct perfring_ring *r = make(size, 0, 0);
	static unsigned char want[8192];
	const struct perf_event_header *rec;
	const void *ptr[2];
	size_t len[2], off = 0;
	uint64_t seq = 0;

	/* Move head near the end so the range wraps. */
	for (int i = 0; i < 7; i++)
		CHECK_EQ(emit(r, 1024, seq++), 0);
	CHECK_EQ(emit(r, 1000, seq++), 0);
	CHECK_EQ(perfring_read_begin(r), 7 * 1024 + 1000);
	CHECK_EQ(perfring_read_range(r, ptr, len), 1);
	perfring_read_end(r);
	/* 24 bytes to the end; write 5000 bytes of records. */
	while (off < 5000) {
		uint32_t sz = (uint32_t)(8 + 8 * (rnd() % 60));

		fill(want + off, sz, seq++);
		CHECK_EQ(perfring_ring_emit(r, want + off, sz), 0);
		off += sz;
	}
	CHECK_EQ(perfring_read_begin(r), (int64_t)off);
	CHECK_EQ(perfring_read_range(r, ptr, len), 1);
	CHECK_EQ(len[0], off);
	CHECK(ptr[0] == data_of(r) + 8168, "range does not start in place");
	CHECK(memcmp(ptr[0], want, off) == 0, "range bytes differ");
	/* The batch is used up: next and range give nothing more. */
	CHECK_EQ(perfring_read_range(r, ptr, len), 0);
	CHECK_EQ(perfring_read_next(r, &rec), 0);
	perfring_read_end(r);
	CHECK_EQ(perfring_ring_control(r)->data_tail, 8168 + off);

	/* After one record, range hands out the rest. */
	fill(want, 64, 1);
	fill(want + 64, 128, 2);
	CHECK_EQ(perfring_ring_emit(r, want, 64), 0);
	CHECK_EQ(perfring_ring_emit(r, want + 64, 128), 0);
	CHECK_EQ(perfring_read_begin(r), 192);
	CHECK_EQ(perfring_read_next(r, &rec), 64);
	CHECK_EQ(perfring_read_range(r, ptr, len), 1);
	CHECK_EQ(len[0], 128);
	CHECK(memcmp(ptr[0], want + 64, 128) == 0, "range after next differs");
	perfring_read_end(r);
	CHECK_EQ(perfring_ring_control(r)->data_tail, 8168 + off + 192);
	perfring_ring_destroy(r);
}

/*
 * A ring that is not double-mapped (the layout of a kernel perf mmap, built
 * by hand): reader_range gives two pieces, reader_next hands a wrapped
 * record out whole.
 */
static void range_kernel_layout(void)
{
	uint64_t size = 2 * page;
	unsigned char *base = mmap(NULL, page + size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct perf_event_mmap_page *pc = (void *)base;
	unsigned char *data = base + page;
	static unsigned char want[4096];
	const struct perf_event_header *rec;
	struct perfring_ring *r;
	const void *ptr[2];
	size_t len[2];
	uint64_t tail = 5 * size - 40; /* a few laps in, 40 bytes to the end */
	uint32_t sizes[] = { 24, 200, 64 };
	size_t off = 0;

	CHECK(base != MAP_FAILED, "mmap");
	pc->data_offset = page;
	pc->data_size = size;
	for (int i = 0; i < 3; i++) {
		fill(want + off, sizes[i], (uint64_t)i);
		off += sizes[i];
	}
	for (size_t i = 0; i < off; i++)
		data[(tail + i) & (size - 1)] = want[i];
	pc->data_tail = tail;
	pc->data_head = tail + off;
	CHECK_EQ(perfring_ring_wrap_kernel(base, page + size, -1, false, &r),
		 0);
	CHECK_EQ(perfring_ring_fd(r), -EINVAL);
	CHECK_EQ(perfring_read_begin(r), (int64_t)off);
	CHECK_EQ(perfring_read_range(r, ptr, len), 2);
	CHECK_EQ(len[0], 40);
	CHECK_EQ(len[1], off - 40);
	CHECK(ptr[0] == data + size - 40 && ptr[1] == data, "range pieces");
	CHECK(memcmp(ptr[0], want, 40) == 0 &&
		      memcmp(ptr[1], want + 40, off - 40) == 0,
	      "range bytes differ");
	perfring_read_end(r);
	CHECK_EQ(pc->data_tail, tail + off);
	perfring_ring_destroy(r);

	/* Same bytes through reader_next: the 200-byte record wraps. */
	pc->data_tail = tail;
	CHECK_EQ(perfring_ring_wrap_kernel(base, page + size, -1, false, &r),
		 0);
	CHECK_EQ(perfring_read_begin(r), (int64_t)off);
	CHECK_EQ(perfring_read_next(r, &rec), 24);
	verify(rec, 24, 24, 0);
	CHECK_EQ(perfring_read_next(r, &rec), 200);
	verify(rec, 200, 200, 1);
	CHECK_EQ(perfring_read_next(r, &rec), 64);
	verify(rec, 64, 64, 2);
	CHECK(rec == (const void *)(data + 184),
	      "unwrapped record not in place");
	CHECK_EQ(perfring_read_next(r, &rec), 0);
	perfring_read_end(r);
	CHECK_EQ(pc->data_tail, tail + off);
	perfring_ring_destroy(r);
	munmap(base, page + size);
}

/*
 * opts.start that is not a multiple of 8: records are 8-aligned by
 * definition, so the ring must either refuse it (-EINVAL) or still hand out
 * 8-aligned records and write its LOST records without misaligned accesses
 * (UBSan aborts on those).  Runs in a child so a sanitizer abort is
 * reported as a failed check.
 */
static void unaligned_start(void)
{
	static const uint64_t starts[] = { 3, 4, 12,
					   UINT64_MAX - 4 * 4096 + 5 };

	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		pid_t pid = fork();
		int status;

		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			PERFRING_OPTS(perfring_ring_opts, o, .data_size = page,
				      .start = starts[i]);
			const struct perf_event_header *rec;
			struct perfring_ring *r;
			int err = perfring_ring_create(&o, &r), sz;

			if (err == -EINVAL)
				_exit(0); /* refused: fine */
			if (err)
				_exit(2);
			/* Fill, drop, drain, emit: a LOST record gets written. */
			for (uint64_t seq = 0; emit(r, 40, seq) == 0; seq++)
				;
			if (perfring_read_begin(r) <= 0)
				_exit(3);
			while ((sz = perfring_read_next(r, &rec)) > 0)
				if ((uintptr_t)rec & 7)
					_exit(4);
			perfring_read_end(r);
			if (emit(r, 40, 1) != 0 || perfring_read_begin(r) != 64)
				_exit(5);
			while ((sz = perfring_read_next(r, &rec)) > 0)
				if ((uintptr_t)rec & 7)
					_exit(4);
			perfring_read_end(r);
			perfring_ring_destroy(r);
			_exit(0);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "opts.start %#llx (not a multiple of 8) was accepted and then "
		      "%s (child status %d)",
		      (unsigned long long)starts[i],
		      WIFEXITED(status) && WEXITSTATUS(status) == 4 ?
			      "handed out a misaligned record" :
			      "failed or crashed (see the sanitizer report above)",
		      WIFEXITED(status) ? WEXITSTATUS(status) :
					  -WTERMSIG(status));
	}
}

int main(void)
{
	static const uint32_t mixed[] = { 16,  24,  40,	  56,	104,
					  248, 520, 1000, 2040, 4088 };
	static const uint32_t small[] = { 16, 24, 32, 48 };
	static const uint32_t one[] = { 1000 };
	uint64_t big;

	page = (size_t)sysconf(_SC_PAGESIZE);
	big = 4 * page;

	laps(big, 0, 0, mixed, 10, 60);
	laps(big, 0, 0, small, 4, 30);
	laps(page, 0, 0, one, 1, 60);
	laps(big, PERFRING_MODE_MULTI_PRODUCER, 0, mixed, 10, 60);

	/* Counters that wrap past 2^64 during the test. */
	laps(big, 0, UINT64_MAX - 3 * big + 1, mixed, 10, 40);
	laps(big, 0, UINT64_MAX - 3 * big + 1 - 40, mixed, 10, 40);
	laps(big, PERFRING_MODE_MULTI_PRODUCER, UINT64_MAX - 3 * big + 1, mixed,
	     10, 40);
	laps(big, PERFRING_MODE_MULTI_PRODUCER, UINT64_MAX - 3 * big + 1 - 40,
	     mixed, 10, 40);
	laps(page, 0, UINT64_MAX - page + 1 - 16, one, 1, 40);

	straddle(0);
	straddle(PERFRING_MODE_MULTI_PRODUCER);
	exactly_full(0, 0);
	exactly_full(PERFRING_MODE_MULTI_PRODUCER, 0);
	exactly_full(0, UINT64_MAX - 2 * page + 1 - 8 * 1024);
	exactly_full(PERFRING_MODE_MULTI_PRODUCER,
		     UINT64_MAX - 2 * page + 1 - 512);
	range_raw();
	range_kernel_layout();
	unaligned_start();
	return T_EXIT_PASS;
}
