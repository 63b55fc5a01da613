// SPDX-License-Identifier: MIT
/*
 * Header validation on garbage.  Good records are emitted, then the data
 * area is scribbled through a separate mapping of perfring_ring_fd() with
 * bad headers (size 0, 4, 12, larger than what is left, a partial header):
 * perfring_read_next() must return -EBADMSG, log the ring offset (the
 * first time per ring and cause; later ones are only counted, so a
 * scribbling producer cannot flood the log), count
 * corrupt_bytes/corrupt_events, skip the rest of the batch, and the next
 * batch must read new good records.  A data_head more than a ring away from
 * data_tail makes perfring_read_begin() return -EBADMSG and resynchronise.
 * Then random garbage with random heads, many times over, on forward,
 * multi-producer, overwrite and kernel-layout rings: nothing may crash or
 * read outside the ring (ASan watches), and whatever is handed out must be
 * inside the batch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 73

static size_t page;

/* ---- log capture ------------------------------------------------------ */

static char last_log[512];
static int n_logs;

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(last_log, sizeof(last_log), "%s", msg);
	n_logs++;
}

static void log_reset(void)
{
	last_log[0] = 0;
	n_logs = 0;
}

static void log_expect(const char *needle)
{
	CHECK(n_logs > 0, "nothing logged, expected \"%s\"", needle);
	CHECK(strstr(last_log, needle) != NULL, "log \"%s\" lacks \"%s\"",
	      last_log, needle);
}

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

struct rec64 {
	struct perf_event_header header;
	uint64_t seq;
	uint64_t pad[6];
};

static int emit(struct perfring_ring *r, uint64_t seq)
{
	struct rec64 x;

	memset(&x, 0, sizeof(x));
	x.header.type = T_TYPE;
	x.header.size = sizeof(x);
	x.seq = seq;
	for (int i = 0; i < 6; i++)
		x.pad[i] = ~seq + (uint64_t)i;
	return perfring_ring_emit(r, &x, sizeof(x));
}

static void check_rec(const struct perf_event_header *h, int sz, uint64_t seq)
{
	const struct rec64 *x = (const struct rec64 *)h;

	CHECK(sz == (int)sizeof(*x), "record %" PRIu64 ": size %d", seq, sz);
	CHECK(x->header.type == T_TYPE && x->header.size == sizeof(*x),
	      "record %" PRIu64 ": type %u size %u", seq, x->header.type,
	      x->header.size);
	CHECK(x->seq == seq, "seq %" PRIu64 ", want %" PRIu64, x->seq, seq);
	for (int i = 0; i < 6; i++)
		CHECK_EQ(x->pad[i], ~seq + (uint64_t)i);
}

static struct perfring_ring_stats stats(struct perfring_ring *r)
{
	struct perfring_ring_stats st = { .sz = sizeof(st) };

	CHECK_EQ(perfring_ring_stats(r, &st), 0);
	return st;
}

/* A second, plain mapping of the ring file: control page + data once. */
struct scribbler {
	unsigned char *base;
	size_t len;
	struct perf_event_mmap_page *pc;
	unsigned char *data;
	uint64_t *slots; /* multi-producer rings: the commit slots */
	uint64_t size;
};

static struct scribbler scribbler_open(struct perfring_ring *r)
{
	struct scribbler s;

	s.size = perfring_ring_data_size(r);
	s.len = page + (size_t)s.size;
	/* A multi-producer ring's commit slots follow its data. */
	if (((const struct perfring_ext *)((const char *)perfring_ring_control(
						   r) +
					   PERFRING_EXT_OFFSET))
		    ->flags &
	    PERFRING_MODE_MULTI_PRODUCER)
		s.len += (size_t)s.size;
	s.base = mmap(NULL, s.len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      perfring_ring_fd(r), 0);
	CHECK(s.base != MAP_FAILED, "mmap of perfring_ring_fd()");
	s.pc = (struct perf_event_mmap_page *)s.base;
	s.data = s.base + page;
	s.slots = s.len > page + (size_t)s.size ?
			  (uint64_t *)(void *)(s.data + s.size) :
			  NULL;
	return s;
}

/* Writes a header at counter @pos (split if it crosses the end). */
static void put_header(struct scribbler *s, uint64_t pos, uint16_t type,
		       uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	unsigned char b[8];

	memcpy(b, &h, 8);
	for (int i = 0; i < 8; i++)
		s->data[(pos + (uint64_t)i) & (s->size - 1)] = b[i];
}

/* ---- bad headers ------------------------------------------------------ */

/*
 * Emits @good records, makes record @bad_index's header say @bad_size, and
 * checks the reader's reaction; then new good records must read fine.
 */
static void bad_header(struct perfring_ring *r, struct scribbler *s,
		       uint64_t *seq, int good, int bad_index,
		       uint16_t bad_size)
{
	const struct perf_event_header *h;
	struct perfring_ring_stats before = stats(r), after;
	uint64_t tail = before.tail, first = *seq, bad_pos, left;
	char want[64];
	int sz;

	CHECK_EQ(before.head, before.tail);
	for (int i = 0; i < good; i++)
		CHECK_EQ(emit(r, (*seq)++), 0);
	bad_pos = tail + (uint64_t)bad_index * sizeof(struct rec64);
	left = (uint64_t)(good - bad_index) * sizeof(struct rec64);
	put_header(s, bad_pos, T_TYPE, bad_size);

	log_reset();
	CHECK_EQ(perfring_read_begin(r),
		 (int64_t)(good * sizeof(struct rec64)));
	for (int i = 0; i < bad_index; i++) {
		sz = perfring_read_next(r, &h);
		check_rec(h, sz, first + (uint64_t)i);
	}
	CHECK_EQ(n_logs, 0);
	sz = perfring_read_next(r, &h);
	CHECK(sz == -EBADMSG,
	      "header size %u at counter %" PRIu64
	      ": reader_next returned %d, want -EBADMSG",
	      bad_size, bad_pos, sz);
	if (!before.bad_header_events) {
		snprintf(want, sizeof(want), "ring offset %" PRIu64,
			 bad_pos & (s->size - 1));
		log_expect(want);
		snprintf(want, sizeof(want), "size %u", bad_size);
		log_expect(want);
		log_expect("only counted");
	} else {
		CHECK_EQ(n_logs, 0); /* once per ring and cause */
	}
	after = stats(r);
	CHECK_EQ(after.bad_header_events, before.bad_header_events + 1);
	CHECK_EQ(after.corrupt_events, before.corrupt_events + 1);
	CHECK_EQ(after.corrupt_bytes, before.corrupt_bytes + left);
	/* The rest of the batch is skipped. */
	CHECK_EQ(perfring_read_next(r, &h), 0);
	perfring_read_end(r);
	after = stats(r);
	CHECK_EQ(after.tail, before.head + good * sizeof(struct rec64));

	/* The next batch starts at the producer's head and reads fine. */
	log_reset();
	first = *seq;
	for (int i = 0; i < 3; i++)
		CHECK_EQ(emit(r, (*seq)++), 0);
	CHECK_EQ(perfring_read_begin(r), (int64_t)(3 * sizeof(struct rec64)));
	for (int i = 0; i < 3; i++) {
		sz = perfring_read_next(r, &h);
		check_rec(h, sz, first + (uint64_t)i);
	}
	CHECK_EQ(perfring_read_next(r, &h), 0);
	perfring_read_end(r);
	CHECK_EQ(n_logs, 0);
	after = stats(r);
	CHECK_EQ(after.corrupt_events, before.corrupt_events + 1);
	CHECK_EQ(after.head, after.tail);
}

static void bad_headers(unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 2 * page,
		      .flags = flags);
	struct perfring_ring *r;
	struct scribbler s;
	uint64_t seq = 0;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	s = scribbler_open(r);

	bad_header(r, &s, &seq, 5, 1, 0);
	bad_header(r, &s, &seq, 5, 0, 4);
	bad_header(r, &s, &seq, 5, 4, 12);
	bad_header(r, &s, &seq, 5, 2, 68); /* not a multiple of 8 */
	bad_header(r, &s, &seq, 5, 3, 3 * sizeof(struct rec64)); /* > left */
	bad_header(r, &s, &seq, 5, 4, sizeof(struct rec64) + 8);
	bad_header(r, &s, &seq, 6, 2, 65528);
	bad_header(r, &s, &seq, 6, 5, 65535);
	bad_header(r, &s, &seq, 2, 1, 7);
	/* Go round a few times so bad headers sit anywhere, also on the
	 * last bytes before the end of the data area. */
	for (int i = 0; i < 300; i++)
		bad_header(r, &s, &seq, 1 + i % 9, (i * 5) % (1 + i % 9),
			   (uint16_t)((i % 3) == 0 ? 0 :
				      (i % 3) == 1 ? 8 * (i % 5) + 4 :
						     2 * 4096));

	/* A partial header: data_head only 4 bytes past the last record.
	 * A multi-producer ring's consumer finds its head in the commit
	 * slots, not data_head (design.md 4b); a misaligned commit there is
	 * no commit (test_mp_gather's hostile slots). */
	if (!(flags & PERFRING_MODE_MULTI_PRODUCER)) {
		struct perfring_ring_stats st = stats(r);
		const struct perf_event_header *h;

		s.pc->data_head = st.head + 4;
		log_reset();
		/* A misaligned head is refused before any header is read,
		 * and the tail stays where it was. */
		CHECK_EQ(perfring_read_begin(r), -EBADMSG);
		log_expect("not 8-byte aligned");
		CHECK_EQ(perfring_read_next(r, &h), 0);
		perfring_read_end(r);
		CHECK_EQ(stats(r).corrupt_events, st.corrupt_events + 1);
		CHECK_EQ(stats(r).tail, st.tail);
	}
	munmap(s.base, s.len);
	perfring_ring_destroy(r);
}

/* ---- data_head out of range --------------------------------------------- */

static void head_far_ahead(unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 2 * page,
		      .flags = flags, .role = PERFRING_ROLE_PRODUCER);
	struct perfring_ring *p, *c;
	struct scribbler s;
	struct perfring_ring_stats st;
	const struct perf_event_header *h;
	uint64_t tail, bogus;
	char want[64];
	int sz;

	CHECK_EQ(perfring_ring_create(&o, &p), 0);
	CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(p),
					 perfring_ring_wait_fd(p),
					 PERFRING_ROLE_CONSUMER, &c),
		 0);
	s = scribbler_open(p);
	for (uint64_t i = 0; i < 4; i++)
		CHECK_EQ(emit(p, i), 0);
	CHECK_EQ(perfring_read_begin(c), 4 * sizeof(struct rec64));
	for (uint64_t i = 0; i < 4; i++) {
		sz = perfring_read_next(c, &h);
		check_rec(h, sz, i);
	}
	perfring_read_end(c);
	tail = 4 * sizeof(struct rec64);
	CHECK_EQ(s.pc->data_tail, tail);

	/* More than a ring ahead. */
	bogus = tail + 3 * s.size + 8;
	s.pc->data_head = bogus;
	log_reset();
	CHECK_EQ(perfring_read_begin(c), -EBADMSG);
	snprintf(want, sizeof(want), "data_head %" PRIu64, bogus);
	log_expect(want);
	st = stats(c);
	CHECK_EQ(st.corrupt_events, 1);
	CHECK_EQ(st.corrupt_bytes, s.size);
	CHECK(s.pc->data_tail == bogus,
	      "data_tail %" PRIu64 " not resynchronised to %" PRIu64,
	      (uint64_t)s.pc->data_tail, bogus);
	/* Not in a batch after the error; resynchronised: nothing waits. */
	CHECK_EQ(perfring_read_next(c, &h), 0); /* no batch open */
	log_reset();
	CHECK_EQ(perfring_read_begin(c), 0);
	perfring_read_end(c);
	CHECK_EQ(n_logs, 0);

	/* Exactly one ring ahead is fine (a full ring). */
	s.pc->data_head = bogus + s.size;
	CHECK_EQ(perfring_read_begin(c), (int64_t)s.size);
	perfring_read_end(c);

	/* Behind data_tail: also more than a ring away. */
	s.pc->data_head = bogus - 8;
	log_reset();
	CHECK_EQ(perfring_read_begin(c), -EBADMSG);
	CHECK_EQ(n_logs, 0); /* the same cause: counted, not logged again */
	CHECK_EQ(stats(c).corrupt_events, 2);
	CHECK_EQ(stats(c).bad_head_events, 2);
	CHECK_EQ(s.pc->data_tail, bogus - 8);
	CHECK_EQ(perfring_read_begin(c), 0);
	perfring_read_end(c);

	/* Put the producer's real head back: one more resync, then its
	 * records read fine again. */
	s.pc->data_head = tail;
	CHECK_EQ(perfring_read_begin(c), -EBADMSG);
	CHECK_EQ(s.pc->data_tail, tail);
	for (uint64_t i = 10; i < 13; i++)
		CHECK_EQ(emit(p, i), 0);
	CHECK_EQ(perfring_read_begin(c), 3 * sizeof(struct rec64));
	for (uint64_t i = 10; i < 13; i++) {
		sz = perfring_read_next(c, &h);
		check_rec(h, sz, i);
	}
	perfring_read_end(c);
	CHECK_EQ(stats(c).corrupt_events, 3);
	munmap(s.base, s.len);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
}

/* ---- random garbage ------------------------------------------------------ */

/*
 * Fills the data area with garbage: noise, or a chain of headers starting
 * at the reader's position @from (mostly plausible, some not).
 */
static void garbage(unsigned char *data, uint64_t size, uint64_t from)
{
	int kind = (int)(rnd() % 4);
	uint64_t pos = from;

	for (uint64_t i = 0; i < size; i += 8) {
		uint64_t v = rnd();

		memcpy(data + i, &v, 8);
	}
	if (kind == 0)
		return;
	while (pos - from < size) {
		uint16_t sz =
			kind == 1 ? (uint16_t)(8 * (1 + rnd() % 40)) :
			kind == 2 ? (uint16_t)(rnd() % 4 ?
						       8 * (1 + rnd() % 40) :
						       rnd() % 600) :
				    (uint16_t)(8 * (rnd() % 8192));
		struct perf_event_header h = { .type = (uint16_t)rnd(),
					       .misc = (uint16_t)rnd(),
					       .size = sz };
		unsigned char b[8];

		memcpy(b, &h, 8);
		for (int i = 0; i < 8; i++)
			data[(pos + (uint64_t)i) & (size - 1)] = b[i];
		pos += sz >= 8 && !(sz & 7) ? sz : 8;
	}
}

static uint64_t random_head(uint64_t tail, uint64_t size)
{
	switch (rnd() % 6) {
	case 0:
		return rnd(); /* anything */
	case 1:
		return tail + rnd() % (size + 1); /* in range, any alignment */
	case 2:
		return tail + 8 * (rnd() % (size / 8 + 1)); /* in range */
	case 3:
		return tail + size + 8 * (rnd() % 4); /* just past a ring */
	case 4:
		return tail - 8 * (rnd() % 4 + 1); /* behind */
	default:
		return tail + (rnd() % 64); /* a little */
	}
}

static uint64_t walked_records, walked_badmsg, walked_ranges;
static uint64_t walked_badmsg_total;

/* Walks a batch; everything handed out must lie inside [lo, hi). */
static void walk(struct perfring_ring *r, const unsigned char *lo,
		 const unsigned char *hi, bool range_in_ring)
{
	const struct perf_event_header *h;
	int64_t avail = perfring_read_begin(r);
	uint64_t total = 0;
	int sz, n = 0;

	if (avail == -EBADMSG) {
		walked_badmsg++;
		return;
	}
	CHECK(avail >= 0, "reader_begin: %lld", (long long)avail);
	CHECK(avail <= (int64_t)perfring_ring_data_size(r), "avail %lld",
	      (long long)avail);
	if (rnd() % 8 == 0) {
		const void *ptr[2];
		size_t len[2];
		int np = perfring_read_range(r, ptr, len);

		CHECK(np >= 0 && np <= 2, "reader_range: %d", np);
		for (int i = 0; i < np; i++) {
			const unsigned char *p = ptr[i];

			CHECK(len[i] > 0 && len[i] <= (size_t)avail,
			      "range len %zu", len[i]);
			if (range_in_ring)
				CHECK(p >= lo && p + len[i] <= hi,
				      "range outside the ring");
			total += len[i];
		}
		CHECK_EQ(total, (uint64_t)avail);
		perfring_read_end(r);
		walked_ranges++;
		return;
	}
	while ((sz = perfring_read_next(r, &h)) > 0) {
		const unsigned char *p = (const unsigned char *)h;
		struct perf_event_header hdr;

		/* Garbage counters may leave records misaligned. */
		memcpy(&hdr, p, sizeof(hdr));
		CHECK(sz >= 8 && (sz & 7) == 0, "record size %d", sz);
		CHECK(hdr.size == sz, "rec->size %u, returned %d", hdr.size,
		      sz);
		total += (uint64_t)sz;
		CHECK(total <= (uint64_t)avail, "records beyond the batch");
		/* Records live in the ring or in the library's own copy
		 * (overwrite, bounce); ASan checks the latter. */
		if (p >= lo && p < hi)
			CHECK(p + sz <= hi, "record runs out of the ring");
		CHECK(++n <= 65536, "endless batch");
		walked_records++;
	}
	CHECK(sz == 0 || sz == -EBADMSG, "reader_next: %d", sz);
	if (sz == -EBADMSG)
		walked_badmsg++;
	CHECK_EQ(perfring_read_next(r, &h), 0);
	perfring_read_end(r);
}

/* The garbage must exercise every path: records, refusals, ranges. */
static void walked_report(const char *what, uint64_t corrupt_events)
{
	fprintf(stderr,
		"%s: %" PRIu64 " records, %" PRIu64 " -EBADMSG, %" PRIu64
		" ranges, %" PRIu64 " corrupt events\n",
		what, walked_records, walked_badmsg, walked_ranges,
		corrupt_events);
	/* Overwrite batches are cut at the first bad header instead. */
	CHECK(walked_records > 100 && corrupt_events > 100 &&
		      walked_ranges > 10,
	      "%s: garbage did not reach all paths", what);
	walked_badmsg_total = walked_badmsg;
	walked_records = walked_badmsg = walked_ranges = 0;
}

static void random_rings(unsigned int flags, int iters)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = page, .flags = flags);
	struct perfring_ring *r;
	struct scribbler s;
	const unsigned char *lo;
	uint64_t seq = 0;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	s = scribbler_open(r);
	lo = (const unsigned char *)perfring_ring_control(r) + page;
	for (int i = 0; i < iters; i++) {
		uint64_t head = random_head(s.pc->data_tail, s.size);

		/* The reader walks forward from data_tail, or (overwrite)
		 * from data_head. */
		garbage(s.data, s.size,
			flags & PERFRING_MODE_OVERWRITE ? head :
							  s.pc->data_tail);
		/* Multi-producer: a "commit" from the reader's position to
		 * the hostile head, in the slot the consumer reads. */
		if (flags & PERFRING_MODE_MULTI_PRODUCER)
			s.slots[(s.pc->data_tail >> 3) & (s.size / 8 - 1)] =
				head;
		else
			s.pc->data_head = head;
		walk(r, lo, lo + 2 * s.size,
		     !(flags & PERFRING_MODE_OVERWRITE));
		/* Sometimes a real record in between. */
		if (i % 97 == 0)
			emit(r, seq++);
	}
	walked_report(flags & PERFRING_MODE_OVERWRITE ? "overwrite" :
		      flags			      ? "multi-producer" :
							"forward",
		      stats(r).corrupt_events);
	if (!(flags & PERFRING_MODE_OVERWRITE))
		CHECK(walked_badmsg_total > 100, "no -EBADMSG");
	munmap(s.base, s.len);
	perfring_ring_destroy(r);
}

/* A ring laid out like a kernel perf mmap (not double-mapped), with a
 * PROT_NONE page right after the data area. */
static unsigned char *kernel_layout(uint64_t size, size_t *len)
{
	unsigned char *base = mmap(NULL, page + size + page,
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct perf_event_mmap_page *pc = (void *)base;

	CHECK(base != MAP_FAILED, "mmap");
	CHECK_EQ(mprotect(base + page + size, page, PROT_NONE), 0);
	pc->data_offset = page;
	pc->data_size = size;
	*len = page + (size_t)size;
	return base;
}

static void random_kernel_layout(int iters)
{
	uint64_t size = 2 * page;
	size_t len;
	unsigned char *base = kernel_layout(size, &len);
	struct perf_event_mmap_page *pc = (void *)base;
	uint64_t corrupt = 0;

	for (int i = 0; i < iters; i++) {
		struct perfring_ring *r;

		/* The kernel keeps data_head and data_tail 8-aligned. */
		pc->data_tail = 8 * (rnd() >> 3);
		garbage(base + page, size, pc->data_tail);
		pc->data_head = random_head(pc->data_tail, size) & ~7ull;
		CHECK_EQ(perfring_ring_wrap_kernel(base, len, -1, false, &r),
			 0);
		walk(r, base + page, base + page + size, true);
		walk(r, base + page, base + page + size, true);
		corrupt += stats(r).corrupt_events;
		perfring_ring_destroy(r);
	}
	walked_report("kernel layout", corrupt);
	munmap(base, len + page);
}

/*
 * data_tail is written by user space; in a kernel-layout ring a misaligned
 * one must not make the reader load a header from past the data area.
 * Runs in a child: the guard page turns an overread into a signal.
 */
static void misaligned_tail_kernel_layout(void)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		uint64_t size = 2 * page;
		size_t len;
		unsigned char *base = kernel_layout(size, &len);
		struct perf_event_mmap_page *pc = (void *)base;
		const struct perf_event_header *h;
		struct perfring_ring *r;

		memset(base + page, 0, size);
		pc->data_tail = 3 * size - 4;
		pc->data_head = 3 * size + 12;
		if (perfring_ring_wrap_kernel(base, len, -1, false, &r))
			_exit(2);
		/* Refusing the misaligned tail (-EBADMSG) or reading the
		 * 16 bytes are both fine; reading past the area is not. */
		int64_t n = perfring_read_begin(r);
		if (n != 16 && n != -EBADMSG)
			_exit(3);
		(void)perfring_read_next(r, &h); /* any result, no crash */
		perfring_read_end(r);
		perfring_ring_destroy(r);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "reader on a kernel-layout ring with data_tail 4 bytes before the end of the data area "
	      "read past the data area (child %s %d)",
	      WIFSIGNALED(status) ? "killed by signal" : "exited with",
	      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	perfring_set_log(log_cb, NULL, PERFRING_LOG_DEBUG);

	bad_headers(0);
	bad_headers(PERFRING_MODE_MULTI_PRODUCER);
	/* Multi-producer consumers do not read data_head (design.md 4b):
	 * a commit far ahead is no commit (test_mp_gather, fuzz_ring (c)). */
	head_far_ahead(0);

	random_rings(0, 10000);
	random_rings(PERFRING_MODE_MULTI_PRODUCER, 3000);
	random_rings(PERFRING_MODE_OVERWRITE, 3000);
	random_kernel_layout(3000);
	misaligned_tail_kernel_layout();
	return T_EXIT_PASS;
}
