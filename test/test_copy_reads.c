// SPDX-License-Identifier: MIT
/*
 * Copied reads (perfring__ring_copy_reads): a consumer that reads its
 * batches with pread() into a private chunk instead of through the
 * mapping, as the recorder reads programs' rings.
 *
 *  - every record of many laps comes out whole and in order, with records
 *    of up to PERFRING_RECORD_MAX bytes cut by the end of a chunk and by the
 *    end of the data area, through perfring_read_next(); and
 *    perfring_read_range() hands out the batch's bytes, chunk by chunk;
 *  - data_tail moves only as far as what was handed out (a batch left half
 *    read resumes where it stopped), and end_hold/release keeps the space;
 *  - the copy is what is validated: a producer that rewrites a header after
 *    it was copied changes nothing, a bad header in the copy is skipped and
 *    counted (-EBADMSG) and later records read again;
 *  - perfring__ring_warm() touches the whole mapping (both views) a few
 *    pages at a time, then copied reads turn off and the records come from
 *    the mapping again, with nothing lost or repeated at the switch;
 *  - a file truncated under the consumer is a dead ring (-EFAULT), not a
 *    crash, for the copy and for the warm-up alike, and the refusals
 *    (overwrite ring, chunk too small) hold.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfring.h"
#include "ring/private.h"
#include "harness.h"

#define T_TYPE 71

static size_t page;
static const char *dir;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

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
	return (unsigned char)(seq * 157u + i * 13u + 3u);
}

static int emit(struct perfring_ring *p, uint32_t size, uint64_t seq)
{
	static unsigned char buf[PERFRING_RECORD_MAX];
	struct perf_event_header h = { .type = T_TYPE,
				       .misc = (uint16_t)seq,
				       .size = (uint16_t)size };

	memcpy(buf, &h, sizeof(h));
	if (size >= 16)
		memcpy(buf + 8, &seq, 8);
	for (uint32_t i = 16; i < size; i++)
		buf[i] = pattern(seq, i);
	return perfring_ring_emit(p, buf, size);
}

static void verify(const unsigned char *p, uint32_t size, uint64_t seq)
{
	struct perf_event_header h;
	uint64_t s;

	memcpy(&h, p, sizeof(h));
	CHECK(h.type == T_TYPE && h.size == size && h.misc == (uint16_t)seq,
	      "record %llu: type %u size %u misc %u, want size %u",
	      (unsigned long long)seq, h.type, h.size, h.misc, size);
	if (size >= 16) {
		memcpy(&s, p + 8, 8);
		CHECK(s == seq, "record seq %llu, want %llu",
		      (unsigned long long)s, (unsigned long long)seq);
	}
	for (uint32_t i = 16; i < size; i++)
		CHECK(p[i] == pattern(seq, i), "record %llu byte %u",
		      (unsigned long long)seq, i);
}

/* 8..256 mostly; now and then up to the largest record there is. */
static uint32_t next_size(void)
{
	uint64_t x = rnd();

	if (x % 16 == 0)
		return (uint32_t)(8 + (x >> 8) % (PERFRING_RECORD_MAX - 8)) &
		       ~7u;
	return (uint32_t)(8 + (x >> 8) % 249) & ~7u;
}

static void make_pair(const char *name, uint64_t data_size,
		      struct perfring_ring **prod, struct perfring_ring **cons,
		      size_t chunk)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	PERFRING_OPTS(perfring_ring_opts, o, .path = path,
		      .data_size = data_size, .role = PERFRING_ROLE_PRODUCER);
	CHECK_EQ(perfring_ring_create(&o, prod), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, cons), 0);
	CHECK_EQ(perfring__ring_copy_reads(*cons, chunk), 0);
}

/* Laps of random sizes, read with reader_next; returns records read. */
static uint64_t laps(struct perfring_ring *p, struct perfring_ring *c,
		     uint64_t total_bytes, bool use_range)
{
	static uint32_t sizes[1 << 20];
	uint64_t emitted = 0, read = 0, bytes = 0;

	while (bytes < total_bytes) {
		uint32_t sz = next_size();

		/* a failed emit would leave a LOST record: emit only what
		 * fits */
		if (perfring_ring_space(p) >= (int64_t)sz) {
			CHECK_EQ(emit(p, sz, emitted), 0);
			sizes[emitted++ % (1 << 20)] = sz;
			bytes += sz;
			continue;
		}
		/* full: read everything there is, or half of it */
		{
			const struct perf_event_header *rec;
			int64_t avail = perfring_read_begin(c);
			uint64_t got = 0, stop = (uint64_t)avail / 2;
			int n;

			CHECK(avail > 0, "full ring, reader_begin %lld",
			      (long long)avail);
			if (use_range) {
				/* one piece per call, the rest of the chunk:
				 * a record may be cut between two calls */
				static unsigned char joined[256 << 10];
				const void *ptr[2];
				size_t len[2], o = 0;

				while ((n = perfring_read_range(c, ptr, len)) >
				       0) {
					CHECK(n == 1,
					      "a copied range is one piece, got %d",
					      n);
					CHECK(got + len[0] <= sizeof(joined),
					      "range overflows the batch");
					memcpy(joined + got, ptr[0], len[0]);
					got += len[0];
				}
				CHECK(n == 0, "reader_range: %d", n);
				CHECK(got == (uint64_t)avail,
				      "range handed out %llu of %lld",
				      (unsigned long long)got,
				      (long long)avail);
				while (o < got) {
					uint32_t want = sizes[read % (1 << 20)];

					CHECK(o + want <= got,
					      "batch cuts record %llu",
					      (unsigned long long)read);
					verify(joined + o, want, read++);
					o += want;
				}
			} else {
				while (got < stop &&
				       (n = perfring_read_next(c, &rec)) > 0) {
					uint32_t want = sizes[read % (1 << 20)];

					CHECK(n == (int)want,
					      "record %llu: %d bytes, want %u",
					      (unsigned long long)read, n,
					      want);
					verify((const unsigned char *)rec, want,
					       read++);
					got += (uint64_t)n;
				}
			}
			perfring_read_end(c);
			CHECK(perfring_ring_control(c)->data_tail ==
				      perfring_ring_control(p)->data_tail,
			      "both views see one data_tail");
		}
	}
	/* the rest */
	{
		const struct perf_event_header *rec;
		int n;

		CHECK(perfring_read_begin(c) >= 0, "final begin");
		while ((n = perfring_read_next(c, &rec)) > 0) {
			CHECK(n == (int)sizes[read % (1 << 20)],
			      "final record");
			verify((const unsigned char *)rec, (uint32_t)n, read++);
		}
		CHECK(n == 0, "final reader_next: %d", n);
		perfring_read_end(c);
	}
	CHECK(read == emitted, "read %llu of %llu records",
	      (unsigned long long)read, (unsigned long long)emitted);
	return read;
}

static void test_laps(void)
{
	struct perfring_ring *p, *c;
	uint64_t n;

	/* chunk = the largest record: most large records are cut by it */
	make_pair("laps.ring", 256 << 10, &p, &c, PERFRING_RECORD_MAX);
	n = laps(p, c, 64ull << 20, false);
	CHECK(n > 10000, "only %llu records", (unsigned long long)n);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);

	make_pair("range.ring", 256 << 10, &p, &c, 96 << 10);
	laps(p, c, 16ull << 20, true);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* Warm the mapping in steps, switch to mapped reads mid-stream. */
static void test_warm_switch(void)
{
	struct perfring_ring *p, *c;
	const struct perf_event_header *rec;
	const unsigned char *map;
	uint64_t seq = 0, read = 0, size = 64 << 10;
	int64_t left, prev = -1;
	int n, steps = 0;

	make_pair("warm.ring", size, &p, &c, PERFRING_RECORD_MAX);
	map = (const unsigned char *)perfring_ring_control(c) + page;
	for (int lap = 0; lap < 6; lap++) {
		while (perfring_ring_space(p) >= 200)
			CHECK_EQ(emit(p, 200, seq++), 0);
		CHECK(perfring_read_begin(c) > 0, "begin");
		while ((n = perfring_read_next(c, &rec)) > 0) {
			bool in_map = (const unsigned char *)rec >= map &&
				      (const unsigned char *)rec <
					      map + 2 * size;

			CHECK(in_map == (lap >= 3),
			      "lap %d: record from the %s", lap,
			      in_map ? "mapping" : "copy");
			verify((const unsigned char *)rec, 200, read++);
		}
		CHECK_EQ(n, 0);
		perfring_read_end(c);
		if (lap == 2) {
			/* 16 data pages + the second view's 16 */
			while ((left = perfring__ring_warm(c, 3)) > 0) {
				CHECK(prev < 0 || left < prev,
				      "warm-up goes forward");
				prev = left;
				steps++;
			}
			CHECK_EQ(left, 0);
			CHECK(steps >= 8, "%d steps of 3 pages", steps);
			CHECK_EQ(perfring__ring_warm(c, 3), 0);
			CHECK_EQ(perfring__ring_copy_reads(c, 0), 0);
		}
	}
	CHECK(read == seq, "read %llu of %llu", (unsigned long long)read,
	      (unsigned long long)seq);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);

	/* a truncated ring: the warm-up says -EFAULT, no signal */
	make_pair("warmtrunc.ring", size, &p, &c, PERFRING_RECORD_MAX);
	CHECK_EQ(ftruncate(perfring_ring_fd(p), (off_t)page), 0);
	while ((left = perfring__ring_warm(c, 4)) > 0)
		;
	CHECK(left == -EFAULT, "warm-up of a truncated ring: %lld",
	      (long long)left);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* end_hold keeps data_tail; release frees it; nothing is read twice. */
static void test_hold(void)
{
	struct perfring_ring *p, *c;
	const struct perf_event_header *rec;
	uint64_t seq = 0, read = 0;
	int n;

	make_pair("hold.ring", 64 << 10, &p, &c, PERFRING_RECORD_MAX);
	while (perfring_ring_space(p) >= 64)
		CHECK_EQ(emit(p, 64, seq++), 0);
	CHECK(perfring_read_begin(c) > 0, "begin");
	while ((n = perfring_read_next(c, &rec)) > 0)
		verify((const unsigned char *)rec, 64, read++);
	perfring__ring_reader_end_hold(c);
	CHECK(read == seq, "read %llu of %llu", (unsigned long long)read,
	      (unsigned long long)seq);
	CHECK(perfring_ring_control(p)->data_tail == 0,
	      "held: data_tail stays at 0");
	CHECK(perfring_ring_space(p) < 64, "held ring is full");
	CHECK_EQ(perfring_read_begin(c), 0); /* nothing new */
	perfring__ring_reader_release(c);
	CHECK(perfring_ring_control(p)->data_tail == seq * 64,
	      "released: data_tail %llu",
	      (unsigned long long)perfring_ring_control(p)->data_tail);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/*
 * The copy is what counts.  A header rewritten in shared memory after the
 * chunk was copied changes nothing; a bad header already in the file when
 * the chunk is copied is skipped with -EBADMSG, and the next batch reads.
 */
static void test_hostile(void)
{
	struct perfring_ring *p, *c;
	const struct perf_event_header *rec;
	unsigned char *data;
	uint16_t zero = 0;
	int n;

	make_pair("hostile.ring", 64 << 10, &p, &c, PERFRING_RECORD_MAX);
	data = (unsigned char *)perfring_ring_control(p) + page;
	for (uint64_t s = 0; s < 4; s++)
		CHECK_EQ(emit(p, 32, s), 0);
	CHECK_EQ(perfring_read_begin(c), 128);
	CHECK_EQ(perfring_read_next(c, &rec), 32);
	verify((const unsigned char *)rec, 32, 0);
	memcpy(data + 32 + 6, &zero, 2); /* record 1's size, after the copy */
	CHECK_EQ(perfring_read_next(c, &rec), 32);
	verify((const unsigned char *)rec, 32, 1);
	CHECK((const unsigned char *)rec < data ||
		      (const unsigned char *)rec >= data + 2 * (64 << 10),
	      "records come from the copy, not the mapping");
	while ((n = perfring_read_next(c, &rec)) > 0)
		;
	perfring_read_end(c);

	/* a bad header in the file: skipped to data_head and counted */
	for (uint64_t s = 4; s < 8; s++)
		CHECK_EQ(emit(p, 32, s), 0);
	memcpy(data + 128 + 32 + 6, &zero, 2); /* record 5 */
	CHECK_EQ(perfring_read_begin(c), 128);
	CHECK_EQ(perfring_read_next(c, &rec), 32);
	verify((const unsigned char *)rec, 32, 4);
	CHECK_EQ(perfring_read_next(c, &rec), -EBADMSG);
	CHECK_EQ(perfring_read_next(c, &rec), 0);
	perfring_read_end(c);
	CHECK_EQ(emit(p, 40, 8), 0);
	CHECK_EQ(perfring_read_begin(c), 40);
	CHECK_EQ(perfring_read_next(c, &rec), 40);
	verify((const unsigned char *)rec, 40, 8);
	perfring_read_end(c);
	{
		struct perfring_ring_stats st = { .sz = sizeof(st) };

		CHECK_EQ(perfring_ring_stats(c, &st), 0);
		CHECK(st.corrupt_events >= 1, "bad header counted");
	}
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* A file cut short under the consumer: -EFAULT from the copy, no signal. */
static void test_truncated(void)
{
	struct perfring_ring *p, *c;
	const struct perf_event_header *rec;
	int64_t got;

	make_pair("trunc.ring", 64 << 10, &p, &c, PERFRING_RECORD_MAX);
	for (uint64_t s = 0; s < 100; s++)
		CHECK_EQ(emit(p, 64, s), 0);
	/* keep the control page, cut the data */
	CHECK_EQ(ftruncate(perfring_ring_fd(p), (off_t)(page + 4096)), 0);
	got = perfring_read_begin(c);
	if (got > 0) /* the control page said so before the copy failed */
		got = perfring_read_next(c, &rec);
	CHECK(got == -EFAULT, "truncated ring: %lld, want -EFAULT",
	      (long long)got);
	CHECK(perfring__ring_dead_cause(c) != 0, "the ring is dead");
	perfring_read_end(c);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

static void test_refusals(void)
{
	char path[256];
	struct perfring_ring *p, *c;

	snprintf(path, sizeof(path), "%s/ow.ring", dir);
	PERFRING_OPTS(perfring_ring_opts, o, .path = path,
		      .data_size = 16 << 10, .flags = PERFRING_MODE_OVERWRITE,
		      .role = PERFRING_ROLE_PRODUCER);
	CHECK_EQ(perfring_ring_create(&o, &p), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	CHECK_EQ(perfring__ring_copy_reads(c, PERFRING_RECORD_MAX), -EINVAL);
	CHECK_EQ(perfring__ring_copy_reads(p, PERFRING_RECORD_MAX), -EINVAL);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);

	make_pair("small.ring", 16 << 10, &p, &c, PERFRING_RECORD_MAX);
	CHECK_EQ(perfring__ring_copy_reads(c, 4096), -EINVAL);
	CHECK_EQ(perfring__ring_copy_reads(NULL, PERFRING_RECORD_MAX), -EINVAL);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

static void quiet(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	dir = test_tmpdir("copyreads");
	CHECK_EQ(perfring_sigbus_guard(), 0);
	perfring_set_log(quiet, NULL, PERFRING_LOG_DEBUG);
	test_refusals();
	test_hold();
	test_hostile();
	test_truncated();
	test_warm_switch();
	test_laps();
	printf("test_copy_reads: ok\n");
	return 0;
}
