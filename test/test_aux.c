// SPDX-License-Identifier: MIT
/*
 * The AUX area: wrap-around with every byte checked (our double-mapped
 * view and a second, attached handle), a full non-overwrite area
 * (TRUNCATED, the writer disabled until the reader re-enables it, -ENOSPC
 * from begin), overwrite areas (OVERWRITE on every record, snapshots of the
 * newest bytes across the wrap), PARTIAL and COLLISION reaching
 * PERF_RECORD_AUX, skip(), ITRACE_START, watermark wake-ups on the ring's
 * descriptor, and lost accounting (trace bytes, and PERF_RECORD_AUX the
 * data ring had no room for).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

static size_t page;

static unsigned char byte_at(uint64_t pos)
{
	return (unsigned char)((pos * 2654435761u) >> 13);
}

static void fill(unsigned char *p, uint64_t pos, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = byte_at(pos + i);
}

struct recs {
	uint64_t n_aux, n_itrace, n_lost, lost;
	uint64_t next_off; /* expected aux_offset of the next AUX record */
	uint64_t bytes;
	uint64_t flags_or;
	uint64_t last_flags, last_size;
	uint32_t pid, tid;
	bool any_offset; /* records were dropped: offsets have gaps */
};

static int on_rec(const struct perf_event_header *h, size_t size, void *ctx)
{
	struct recs *r = ctx;
	const uint64_t *u = (const void *)(h + 1);

	if (h->type == PERF_RECORD_AUX) {
		CHECK(size >= sizeof(struct perfring_aux_record), "aux %zu",
		      size);
		if (u[2] & PERF_AUX_FLAG_OVERWRITE) /* the end, as the kernel */
			CHECK(u[0] - u[1] == r->next_off,
			      "overwrite aux_offset");
		else
			CHECK(r->any_offset || u[0] == r->next_off,
			      "aux_offset %llu, expected %llu",
			      (unsigned long long)u[0],
			      (unsigned long long)r->next_off);
		r->next_off = (u[2] & PERF_AUX_FLAG_OVERWRITE) ? u[0] :
								 u[0] + u[1];
		r->bytes += u[1];
		r->flags_or |= u[2];
		r->last_flags = u[2];
		r->last_size = u[1];
		r->n_aux++;
	} else if (h->type == PERF_RECORD_ITRACE_START) {
		const uint32_t *w = (const void *)(h + 1);

		r->pid = w[0];
		r->tid = w[1];
		r->n_itrace++;
	} else if (h->type == PERF_RECORD_LOST) {
		r->n_lost++;
		r->lost += u[1];
	}
	return 0;
}

static struct perfring_ring *mkring(uint64_t data_size)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = data_size);
	struct perfring_ring *r;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	return r;
}

/* Drains the AUX area, checking every byte; returns bytes read. */
static uint64_t drain(struct perfring_aux *a, uint64_t *pos_expect)
{
	const void *p[2];
	size_t l[2];
	uint64_t pos;
	int64_t n = perfring_aux_read_begin(a, p, l, &pos);

	CHECK(n >= 0, "read_begin %lld", (long long)n);
	if (!n)
		return 0;
	CHECK_EQ(pos, *pos_expect);
	CHECK_EQ((uint64_t)n, l[0] + l[1]);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < l[k]; i++) {
			unsigned char want = byte_at(pos + i);

			CHECK(((const unsigned char *)p[k])[i] == want,
			      "byte at %llu", (unsigned long long)(pos + i));
			(void)want;
		}
	for (int k = 0; k < 2; k++)
		pos += l[k];
	CHECK_EQ(perfring_aux_read_end(a, (uint64_t)n), 0);
	*pos_expect = pos;
	return (uint64_t)n;
}

static void test_wrap(void)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 1 << 16,
		      .role = PERFRING_ROLE_PRODUCER);
	PERFRING_OPTS(perfring_aux_opts, ao, .aux_size = 4 * page);
	struct perfring_ring *r, *rr;
	struct perfring_aux *a, *ra;
	struct recs rc = { 0 };
	uint64_t wpos = 0, rpos = 0;
	uint64_t total = 40 * 4 * page;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	CHECK_EQ(perfring_aux_create(r, &ao, &a), 0);
	CHECK_EQ(perfring_aux_create(r, &ao, &ra), -EINVAL); /* one area */
	CHECK_EQ(perfring_aux_size(a), 4 * page);
	CHECK_EQ(perfring_ring_control(r)->aux_size, 4 * page);
	CHECK_EQ(perfring_ring_control(r)->aux_offset, page + (1 << 16));
	/* The reader is another handle, attached by descriptor, as another
	 * process would; it maps the AUX area from the control page. */
	CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(r),
					 perfring_ring_wait_fd(r),
					 PERFRING_ROLE_CONSUMER, &rr),
		 0);
	CHECK_EQ(perfring_aux_attach(rr, &ra), 0);
	CHECK_EQ(perfring_aux_size(ra), 4 * page);
	CHECK_EQ(perfring_aux_itrace_start(a, 42, 43, NULL, 0), 0);
	while (wpos < total) {
		struct perfring_aux_output h;
		uint64_t n = 1 + (wpos * 7919) % (3 * page);

		CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
		CHECK_EQ(h.head, wpos);
		CHECK_EQ(h.size, 4 * page - (wpos - rpos));
		if (n > h.size)
			n = h.size;
		fill(h.data, wpos, n);
		CHECK_EQ(perfring_aux_output_end(&h, n), 0);
		wpos += n;
		if ((wpos / 977) & 1 || wpos - rpos >= 3 * page)
			drain(ra, &rpos);
		CHECK(perfring_ring_consume(rr, on_rec, &rc) >= 0, "consume");
	}
	drain(ra, &rpos);
	CHECK_EQ(rpos, wpos);
	CHECK(perfring_ring_consume(rr, on_rec, &rc) >= 0, "consume");
	CHECK_EQ(rc.bytes, wpos);
	CHECK_EQ(rc.flags_or, 0);
	CHECK_EQ(rc.n_itrace, 1);
	CHECK_EQ(rc.pid, 42);
	CHECK_EQ(rc.tid, 43);
	CHECK_EQ(perfring_ring_control(r)->aux_tail, wpos);
	perfring_aux_destroy(ra);
	perfring_ring_destroy(rr);
	perfring_aux_destroy(a);
	perfring_ring_destroy(r);
}

/* Wake-up descriptor readable? (drains it) */
static bool woken(struct perfring_ring *r)
{
	struct pollfd pfd = { .fd = perfring_ring_wait_fd(r),
			      .events = POLLIN };
	bool w = poll(&pfd, 1, 0) == 1;

	perfring_ring_wait_finish(r);
	return w;
}

static void test_full(void)
{
	PERFRING_OPTS(perfring_aux_opts, ao, .aux_size = 2 * page,
		      .watermark = page);
	struct perfring_ring *r = mkring(1 << 16);
	struct perfring_aux_output h;
	struct perfring_aux_stats st = { .sz = sizeof(st) };
	struct perfring_aux *a;
	struct recs rc = { 0 };
	uint64_t rpos = 0, wpos = 0;

	CHECK_EQ(perfring_aux_create(r, &ao, &a), 0);
	woken(r);
	/* Below the watermark: no wake-up; crossing it: one. */
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	fill(h.data, wpos, page / 2);
	CHECK_EQ(perfring_aux_output_end(&h, page / 2), 0);
	wpos += page / 2;
	CHECK(!woken(r), "woken below the watermark");
	CHECK_EQ(perfring_aux_wait_prepare(a), 0);
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	fill(h.data, wpos, page / 2 + 8);
	CHECK_EQ(perfring_aux_output_end(&h, page / 2 + 8), 0);
	wpos += page / 2 + 8;
	CHECK(woken(r), "not woken at the watermark");
	CHECK_EQ(perfring_aux_wait_prepare(a), 1);

	/* The space query has no side effect. */
	CHECK_EQ(perfring_aux_space(a), (int64_t)(2 * page - wpos));
	CHECK(!perfring_aux_disabled(a), "space query disabled the area");
	/* A driver with more trace than space: it writes what fits, flags
	 * TRUNCATED, and counts the rest as lost. */
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	CHECK_EQ(h.size, 2 * page - wpos);
	fill(h.data, wpos, h.size);
	perfring_aux_output_flag(&h, PERF_AUX_FLAG_TRUNCATED);
	perfring_aux_note_lost(a, 1000);
	CHECK_EQ(perfring_aux_output_end(&h, h.size), 0);
	wpos = 2 * page;
	CHECK(woken(r), "TRUNCATED wakes the reader");
	CHECK(perfring_aux_disabled(a), "TRUNCATED disables the writer");
	CHECK_EQ(perfring_aux_output_begin(&h, a), -EAGAIN);
	CHECK_EQ(perfring_aux_wait_prepare(a), 1);
	CHECK(perfring_ring_consume(r, on_rec, &rc) >= 0, "consume");
	CHECK_EQ(rc.n_aux, 3);
	CHECK_EQ(rc.last_flags, PERF_AUX_FLAG_TRUNCATED);
	CHECK_EQ(rc.last_size, 2 * page - page - 8);
	/* The reader drains and re-enables (PERF_EVENT_IOC_ENABLE). */
	drain(a, &rpos);
	CHECK_EQ(rpos, wpos);
	CHECK_EQ(perfring_aux_enable(a), 0);
	CHECK(!perfring_aux_disabled(a), "re-enabled");
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	CHECK_EQ(h.size, 2 * page);
	fill(h.data, wpos, 2 * page);
	CHECK_EQ(perfring_aux_output_end(&h, 2 * page), 0);
	wpos += 2 * page;
	/* Full without a truncation flag: begin finds no space, disables
	 * the writer and wakes the reader, as perf_aux_output_begin(). */
	woken(r);
	CHECK_EQ(perfring_aux_space(a), 0);
	CHECK(!perfring_aux_disabled(a), "space query disabled the area");
	CHECK_EQ(perfring_aux_output_begin(&h, a), -ENOSPC);
	CHECK(perfring_aux_disabled(a), "no space disables");
	CHECK(woken(r), "no space wakes");
	CHECK_EQ(perfring_aux_output_begin(&h, a), -EAGAIN);
	drain(a, &rpos);
	CHECK_EQ(perfring_aux_enable(a), 0);
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	CHECK_EQ(perfring_aux_output_end(&h, 0), 0); /* nothing: no record */
	CHECK_EQ(perfring_aux_stats(a, &st), 0);
	CHECK_EQ(st.head, wpos);
	CHECK_EQ(st.tail, wpos);
	CHECK_EQ(st.records, 4);
	CHECK_EQ(st.truncated, 1);
	CHECK_EQ(st.lost_bytes, 1000);
	CHECK(st.wakeups >= 3, "wakeups %llu", (unsigned long long)st.wakeups);
	CHECK(!st.disabled && !st.overwrite, "flags");
	perfring_aux_destroy(a);
	perfring_ring_destroy(r);
}

static void test_flags_skip_lost(void)
{
	PERFRING_OPTS(perfring_aux_opts, ao, .aux_size = 4 * page);
	struct perfring_ring *r = mkring(page);
	struct perfring_aux_output h;
	struct perfring_aux_stats st = { .sz = sizeof(st) };
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };
	struct perfring_aux *a;
	struct recs rc = { 0 };
	uint64_t id[2] = { 7, 0 }, rpos = 0, wpos = 0;
	int emitted = 0, refused = 0;

	CHECK_EQ(perfring_aux_create(r, &ao, &a), 0);
	/* PARTIAL (gaps) with data, COLLISION with no data: both reach the
	 * record; the sample_id trailer is appended. */
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	fill(h.data, 0, 64);
	perfring_aux_output_flag(&h, PERF_AUX_FLAG_PARTIAL);
	h.sample_id = id;
	h.sample_id_size = sizeof(id);
	CHECK_EQ(perfring_aux_output_end(&h, 64), 0);
	wpos = 64;
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	perfring_aux_output_flag(&h, PERF_AUX_FLAG_COLLISION |
					     PERF_AUX_FLAG_OVERWRITE);
	CHECK_EQ(perfring_aux_output_end(&h, 0), 0);
	CHECK(perfring_ring_consume(r, on_rec, &rc) >= 0, "consume");
	CHECK_EQ(rc.n_aux, 2);
	CHECK_EQ(rc.flags_or, PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION);
	CHECK_EQ(rc.last_flags, PERF_AUX_FLAG_COLLISION); /* not OVERWRITE */
	CHECK_EQ(rc.last_size, 0);

	/* skip(): padding published without a record. */
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	CHECK_EQ(perfring_aux_output_skip(&h, 5 * page), -ENOSPC);
	fill(h.data, wpos, 40);
	CHECK_EQ(perfring_aux_output_skip(&h, 40), 0);
	wpos += 40;
	CHECK_EQ(h.head, wpos);
	CHECK_EQ(perfring_ring_control(r)->aux_head, wpos);
	fill(h.data, wpos, 24);
	CHECK_EQ(perfring_aux_output_end(&h, 24), 0);
	wpos += 24;
	rc.next_off = wpos - 24; /* the skip left a gap in the records */
	CHECK(perfring_ring_consume(r, on_rec, &rc) >= 0, "consume");
	CHECK_EQ(rc.n_aux, 3);
	drain(a, &rpos);
	CHECK_EQ(rpos, wpos);

	/* The data ring (one page) fills with PERF_RECORD_AUX while nobody
	 * reads it: the refused ones are counted, then LOST reports them. */
	for (int i = 0; i < 200; i++) {
		CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
		fill(h.data, wpos, 8);
		if (perfring_aux_output_end(&h, 8))
			refused++;
		else
			emitted++;
		wpos += 8;
		drain(a, &rpos);
	}
	CHECK(refused > 0 && emitted > 0, "refused %d emitted %d", refused,
	      emitted);
	CHECK_EQ(perfring_aux_stats(a, &st), 0);
	CHECK_EQ(st.aux_records_lost, (uint64_t)refused);
	CHECK_EQ(perfring_ring_stats(r, &rs), 0);
	CHECK_EQ(rs.lost_total, (uint64_t)refused);
	/* Records then continue, with a LOST in front. */
	memset(&rc, 0, sizeof(rc));
	rc.any_offset = true;
	CHECK(perfring_ring_consume(r, on_rec, &rc) >= 0, "consume");
	CHECK_EQ(rc.n_aux, (uint64_t)emitted);
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	CHECK_EQ(perfring_aux_output_end(&h, 8), 0);
	struct recs rc2 = { .next_off = wpos };
	CHECK(perfring_ring_consume(r, on_rec, &rc2) >= 0, "consume");
	CHECK_EQ(rc2.n_lost, 1);
	CHECK_EQ(rc2.lost, (uint64_t)refused);
	CHECK_EQ(rc2.n_aux, 1);
	perfring_aux_destroy(a);
	perfring_ring_destroy(r);
}

static void test_overwrite(void)
{
	PERFRING_OPTS(perfring_aux_opts, ao, .aux_size = 2 * page,
		      .overwrite = true);
	struct perfring_ring *r = mkring(1 << 16);
	struct perfring_aux_output h;
	struct perfring_aux *a;
	struct recs rc = { 0 };
	unsigned char *buf = malloc(4 * page);
	const void *p[2];
	size_t l[2];
	uint64_t wpos = 0, pos;
	int64_t n;

	CHECK(buf != NULL, "malloc");
	CHECK_EQ(perfring_aux_create(r, &ao, &a), 0);
	CHECK_EQ(perfring_aux_read_begin(a, p, l, NULL), -EINVAL);
	/* Before the first wrap: everything written. */
	CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
	CHECK_EQ(h.size, 2 * page);
	fill(h.data, 0, 100);
	CHECK_EQ(perfring_aux_output_end(&h, 100), 0);
	wpos = 100;
	n = perfring_aux_snapshot(a, buf, 4 * page, &pos);
	CHECK_EQ(n, 100);
	CHECK_EQ(pos, 0);
	/* Many laps: the writer never waits; records say OVERWRITE. */
	for (int i = 0; i < 50; i++) {
		uint64_t k = 1 + (uint64_t)(i * 331) % (2 * page);

		CHECK_EQ(perfring_aux_output_begin(&h, a), 0);
		fill(h.data, wpos, k);
		CHECK_EQ(perfring_aux_output_end(&h, k), 0);
		wpos += k;
		if (i % 7 == 0) {
			size_t want = (size_t)(i * 97) % (3 * page) + 1;
			uint64_t expect = wpos < 2 * page ? wpos : 2 * page;

			if (expect > want)
				expect = want;
			n = perfring_aux_snapshot(a, buf, want, &pos);
			CHECK_EQ((uint64_t)n, expect);
			CHECK_EQ(pos, wpos - expect);
			for (int64_t j = 0; j < n; j++)
				CHECK(buf[j] == byte_at(pos + (uint64_t)j),
				      "snapshot byte %lld", (long long)j);
		}
	}
	CHECK(perfring_ring_consume(r, on_rec, &rc) >= 0, "consume");
	CHECK_EQ(rc.n_aux, 51);
	CHECK_EQ(rc.bytes, wpos);
	CHECK_EQ(rc.flags_or, PERF_AUX_FLAG_OVERWRITE);
	CHECK(!perfring_aux_disabled(a), "overwrite never disables");
	free(buf);
	perfring_aux_destroy(a);
	perfring_ring_destroy(r);
}

static void test_bad(void)
{
	PERFRING_OPTS(perfring_aux_opts, ao, .aux_size = 3 * page);
	struct perfring_ring *r = mkring(1 << 16);
	struct perfring_aux *a;
	const void *p[2];
	size_t l[2];

	CHECK_EQ(perfring_aux_create(r, &ao, &a), -EINVAL);
	CHECK_EQ(perfring_aux_attach(r, &a), -ENOENT);
	ao.aux_size = page;
	CHECK_EQ(perfring_aux_create(r, &ao, &a), 0);
	/* A reader handle sees a head far ahead of its tail: resync. */
	((struct perf_event_mmap_page *)perfring_ring_control(r))->aux_head =
		10 * page;
	CHECK_EQ(perfring_aux_read_begin(a, p, l, NULL), -EBADMSG);
	CHECK_EQ(perfring_aux_read_begin(a, p, l, NULL), 0);
	CHECK_EQ(perfring_aux_read_end(a, 8), -EINVAL);
	perfring_aux_destroy(a);
	perfring_ring_destroy(r);
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	test_wrap();
	test_full();
	test_flags_skip_lost();
	test_overwrite();
	test_bad();
	printf("test_aux: ok\n");
	return 0;
}
