// SPDX-License-Identifier: MIT
/*
 * Sub-buffer pages and the user-space sub-buffer ring: the page parser on
 * pages laid out by hand after kernel/trace/ring_buffer.c (padding, null
 * padding, time extend, absolute time stamp, large events, damage), then
 * the ring through GET_READER with the kernel selftest's meta page
 * expectations, a partial page growing under one id, producer/consumer
 * drops and overwrite losses counted exactly, missed-event marks, and the
 * same pages read by the tracefs consumer code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "ring/subbuf.h"
#include "sources/tracefs.h"
#include "harness.h"

static uint8_t page[4096];
static uint32_t pos;

static void put32(uint32_t v)
{
	memcpy(page + 16 + pos, &v, 4);
	pos += 4;
}

static void begin(uint64_t ts)
{
	memset(page, 0, sizeof(page));
	memcpy(page, &ts, 8);
	pos = 0;
}

static void end(uint64_t flags)
{
	uint64_t c = pos | flags;

	memcpy(page + 8, &c, 8);
}

static void parser(void)
{
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	uint64_t ts = 1000;

	begin(ts);
	put32(1 | 0 << 5); /* 4 bytes, delta 0 */
	put32(0xaaaa);
	put32(29 | 7 << 5); /* padding of 8 bytes, delta 7 */
	put32(4);
	put32(30 | 5 << 5); /* extend: (2 << 27) + 5 */
	put32(2);
	put32(2 | 3 << 5); /* 8 bytes, delta 3 */
	put32(1);
	put32(2);
	put32(0 | 1 << 5); /* large: array0 = 4 + 120 */
	put32(124);
	for (int i = 0; i < 30; i++)
		put32((uint32_t)i);
	put32(31 | 9 << 5); /* absolute: (1 << 27) | 9 */
	put32(1);
	put32(1 | 0 << 5);
	put32(0xbbbb);
	end(0);
	CHECK(!subbuf_page_info(page, sizeof(page), &pi), "info");
	CHECK_EQ(pi.commit, pos);
	CHECK(!pi.missed && !subbuf_page_full(&pi, sizeof(page)), "flags");
	subbuf_iter_init(&it, page + 16, pi.commit, pi.time_stamp);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 1);
	CHECK(ev.ts == ts && ev.size == 4, "ev1 %llu %u",
	      (unsigned long long)ev.ts, ev.size);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 1);
	/* kbuffer: padding delta counts, then the extend, then 3. */
	CHECK_EQ(ev.ts, ts + 7 + (2ull << 27) + 5 + 3);
	CHECK_EQ(ev.size, 8);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 1);
	CHECK_EQ(ev.size, 120);
	CHECK_EQ(ev.ts, ts + 7 + (2ull << 27) + 5 + 3 + 1);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 1);
	CHECK_EQ(ev.ts, (1ull << 27) | 9);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 0);

	/* Null padding ends the page; missed flags, sign-extended. */
	begin(5);
	put32(1);
	put32(7);
	put32(29); /* null event */
	put32(0xdeadbeef); /* garbage after it is never read */
	pos = 8;
	end(0xffffffffc0000000ull);
	memcpy(page + 16 + 8, &(uint64_t){ 2673 }, 8);
	CHECK(!subbuf_page_info(page, sizeof(page), &pi), "info");
	CHECK(pi.missed && pi.missed_stored && pi.missed_count == 2673,
	      "missed %d %d %llu", pi.missed, pi.missed_stored,
	      (unsigned long long)pi.missed_count);
	CHECK(subbuf_page_full(&pi, sizeof(page)), "a marked page is final");
	subbuf_iter_init(&it, page + 16, pi.commit, 5);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 1);
	CHECK_EQ(subbuf_iter_next(&it, &ev), 0);

	/* Damage: commit past the page, lengths past commit, truncation. */
	begin(0);
	pos = 4081;
	end(0);
	CHECK(subbuf_page_info(page, sizeof(page), &pi) == -EBADMSG, "commit");
	begin(0);
	put32(0);
	put32(400); /* large event longer than the data */
	end(0);
	subbuf_iter_init(&it, page + 16, pos, 0);
	CHECK(subbuf_iter_next(&it, &ev) == -EBADMSG && it.bad_offset == 0,
	      "long event");
	begin(0);
	put32(28); /* 112 bytes claimed, 0 present */
	end(0);
	subbuf_iter_init(&it, page + 16, pos, 0);
	CHECK_EQ(subbuf_iter_next(&it, &ev), -EBADMSG);
	subbuf_iter_init(&it, page + 16, 2, 0);
	CHECK_EQ(subbuf_iter_next(&it, &ev), -EBADMSG);

	/* rb_calculate_event_length. */
	CHECK_EQ(subbuf_event_length(0), 8);
	CHECK_EQ(subbuf_event_length(4), 8);
	CHECK_EQ(subbuf_event_length(8), 16); /* never 12 */
	CHECK_EQ(subbuf_event_length(112), 116);
	CHECK_EQ(subbuf_event_length(113), 124);
	CHECK_EQ(subbuf_event_length(200), 208);
	printf("parser: ok\n");
}

/* Reads the events of [from, to) of the reader page into seqs. */
static int read_new(struct subbuf_ring *r, uint32_t from, uint32_t to,
		    uint64_t *seqs, int max, uint64_t *ts)
{
	const uint8_t *pg = subbuf_ring_page(r, subbuf_ring_meta(r)->reader.id);
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	int n = 0;

	CHECK(!subbuf_page_info(pg, 4096, &pi), "reader page header");
	subbuf_iter_init(&it, pg + 16, to, pi.time_stamp);
	while (subbuf_iter_next(&it, &ev) > 0) {
		if (ev.offset < from)
			continue;
		CHECK(n < max, "too many events");
		memcpy(&seqs[n], ev.data, 8);
		if (ts)
			ts[n] = ev.ts;
		n++;
	}
	CHECK(it.bad_what == NULL, "parse: %s", it.bad_what);
	return n;
}

static void ring_basics(void)
{
	struct subbuf_ring *r;
	const struct subbuf_meta *m;
	uint64_t seqs[512], ts[512];
	uint32_t id, rd;
	int n;

	CHECK_EQ(subbuf_ring_create(4096, 2, 0, &r), -EINVAL);
	CHECK_EQ(subbuf_ring_create(5000, 8, 0, &r), -EINVAL);
	CHECK(!subbuf_ring_create(4096, 8, 0, &r), "create");
	m = subbuf_ring_meta(r);
	CHECK(m->meta_page_size >= 4096 && m->meta_struct_len == 80 &&
		      m->subbuf_size == 4096 && m->nr_subbufs == 8,
	      "meta %u %u %u %u", m->meta_page_size, m->meta_struct_len,
	      m->subbuf_size, m->nr_subbufs);
	/* map_test meta_page_check. */
	CHECK(m->entries == 0 && m->overrun == 0 && m->read == 0 &&
		      m->reader.id == 0 && m->reader.read == 0,
	      "fresh");
	subbuf_ring_get_reader(r);
	CHECK_EQ(m->reader.id, 0);
	for (uint64_t i = 0; i < 16; i++)
		CHECK(!subbuf_ring_write(r, 100 + i, &i, 8), "write");
	subbuf_ring_get_reader(r);
	CHECK_EQ(m->entries, 16);
	CHECK_EQ(m->overrun, 0);
	CHECK_EQ(m->read, 16);
	CHECK_EQ(m->reader.id, 1);
	n = read_new(r, 0, m->reader.read, seqs, 512, ts);
	CHECK_EQ(n, 16);
	for (int i = 0; i < n; i++)
		CHECK(seqs[i] == (uint64_t)i && ts[i] == 100 + (uint64_t)i,
		      "event %d: %llu at %llu", i, (unsigned long long)seqs[i],
		      (unsigned long long)ts[i]);
	subbuf_ring_get_reader(r);
	CHECK(m->entries == 16 && m->read == 16 && m->reader.id == 1,
	      "second GET_READER changed something");
	/* The writer is on the reader page: it grows under the same id. */
	id = m->reader.id;
	rd = m->reader.read;
	for (uint64_t i = 16; i < 20; i++)
		CHECK(!subbuf_ring_write(r, 100 + i + (1ull << 30), &i, 8),
		      "write");
	subbuf_ring_get_reader(r);
	CHECK(m->reader.id == id && m->reader.read > rd, "same id %u/%u", id,
	      m->reader.id);
	n = read_new(r, rd, m->reader.read, seqs, 512, ts);
	CHECK_EQ(n, 4);
	CHECK_EQ(seqs[0], 16);
	/* A 2^30 ns jump needs a time extend: the time comes back exact. */
	CHECK_EQ(ts[0], 116 + (1ull << 30));
	CHECK_EQ(m->read, 20);
	subbuf_ring_destroy(r);
	printf("ring basics (meta page, partial page, time extend): ok\n");
}

/* Producer/consumer: a full ring drops new events, counted exactly. */
static void ring_drop(void)
{
	struct subbuf_ring *r;
	const struct subbuf_meta *m;
	uint64_t seqs[512], got = 0, next = 0, drops = 0;
	uint8_t payload[100] = { 0 };

	CHECK(!subbuf_ring_create(4096, 4, 0, &r), "create");
	m = subbuf_ring_meta(r);
	for (uint64_t i = 0; i < 2000; i++) {
		int err;

		memcpy(payload, &i, 8);
		err = subbuf_ring_write(r, i, payload, sizeof(payload));
		CHECK(err == 0 || err == -ENOSPC, "write: %d", err);
		drops += err == -ENOSPC;
	}
	CHECK(drops > 0, "nothing dropped");
	CHECK_EQ(subbuf_ring_dropped(r), drops);
	for (;;) {
		uint32_t id = m->reader.id, rd = m->reader.read;
		int n;

		subbuf_ring_get_reader(r);
		if (m->reader.id == id && m->reader.read == rd)
			break;
		n = read_new(r, m->reader.id == id ? rd : 0, m->reader.read,
			     seqs, 512, NULL);
		for (int i = 0; i < n; i++) {
			CHECK(seqs[i] == next, "seq %llu, expected %llu",
			      (unsigned long long)seqs[i],
			      (unsigned long long)next);
			next++;
		}
		got += (uint64_t)n;
	}
	/* The oldest events are kept: 0..got-1 arrived, the rest dropped. */
	CHECK(got + drops == 2000, "%llu read + %llu dropped",
	      (unsigned long long)got, (unsigned long long)drops);
	CHECK_EQ(m->overrun, 0);
	CHECK_EQ(m->entries, got);
	subbuf_ring_destroy(r);
	printf("producer/consumer: %llu read, %llu dropped: ok\n",
	       (unsigned long long)got, (unsigned long long)drops);
}

static int page_fn(void *ctx, int cpu, const void *pg)
{
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	uint64_t *st = ctx; /* [0] next seq expected, [1] events, [2] gaps,
			       [3] missed stored */

	(void)cpu;
	CHECK(!subbuf_page_info(pg, 4096, &pi), "page");
	if (pi.missed)
		st[3] += pi.missed_count;
	subbuf_iter_init(&it, (const uint8_t *)pg + 16, pi.commit,
			 pi.time_stamp);
	while (subbuf_iter_next(&it, &ev) > 0) {
		uint64_t s;

		memcpy(&s, ev.data, 8);
		CHECK(s >= st[0], "seq %llu went back (expected >= %llu)",
		      (unsigned long long)s, (unsigned long long)st[0]);
		if (s != st[0]) {
			CHECK(pi.missed && it.pos == ev.offset + 4 + ev.size,
			      "gap %llu..%llu not at a marked page start",
			      (unsigned long long)st[0], (unsigned long long)s);
			st[2] += s - st[0];
		}
		st[0] = s + 1;
		st[1]++;
	}
	return 0;
}

/* Overwrite: the newest pages are kept; losses counted exactly, marked
 * on the pages; read through the tracefs consumer code. */
static void ring_overwrite(void)
{
	struct subbuf_ring *r;
	struct tfs_cpu c;
	uint64_t st[4] = { 0 };
	uint8_t payload[60] = { 0 };
	int err;

	CHECK(!subbuf_ring_create(4096, 5, SUBBUF_RING_OVERWRITE, &r),
	      "create");
	CHECK(!tfs_cpu_attach_ring(&c, (struct perfring_subbuf *)r, 0),
	      "attach");
	for (uint64_t i = 0; i < 3000; i++) {
		memcpy(payload, &i, 8);
		CHECK(!subbuf_ring_write(r, i * 10, payload, sizeof(payload)),
		      "write");
		if (i == 100) {
			err = tfs_cpu_consume(&c, false, page_fn, st);
			CHECK(err >= 0, "consume");
		}
	}
	err = tfs_cpu_consume(&c, true, page_fn, st);
	CHECK(err >= 0, "consume");
	tfs_cpu_update_counts(&c);
	CHECK_EQ(st[0], 3000);
	CHECK(c.overrun > 0, "no overrun");
	CHECK(st[1] + c.overrun == 3000, "%llu read + %llu overrun != 3000",
	      (unsigned long long)st[1], (unsigned long long)c.overrun);
	CHECK(st[2] == c.overrun, "gaps %llu != overrun %llu",
	      (unsigned long long)st[2], (unsigned long long)c.overrun);
	CHECK(c.lost_pages > 0 && st[3] <= c.overrun,
	      "marks: %llu pages, %llu stored",
	      (unsigned long long)c.lost_pages, (unsigned long long)st[3]);
	CHECK_EQ(c.events, st[1]);
	CHECK_EQ(c.kread, st[1]);
	tfs_cpu_close(&c);
	subbuf_ring_destroy(r);
	printf("overwrite: %llu read, %llu overrun, %llu pages marked: ok\n",
	       (unsigned long long)st[1], (unsigned long long)c.overrun,
	       (unsigned long long)c.lost_pages);
}

/* Two user rings saved as trace.dat: trace-cmd report prints every
 * message, in time order across the two "CPUs", and perfring script the
 * same lines. */
static void ring_save(void)
{
	struct perfring_subbuf *r[2];
	const char *dir = test_tmpdir("subbuf");
	char path[256], cmd[600], line[512], ours[600];
	int n = 0, err;
	FILE *f, *o;

	snprintf(path, sizeof(path), "%s/ring.dat", dir);
	for (int i = 0; i < 2; i++)
		CHECK(!perfring_subbuf_create(8192, 4, i == 1, &r[i]),
		      "create");
	for (int i = 0; i < 300; i++) {
		char msg[64];

		snprintf(msg, sizeof(msg), "hello %d from ring %d", i, i & 1);
		CHECK(!perfring_subbuf_message(
			      r[i & 1], 1000000000ull + (uint64_t)i * 1000,
			      4242 + (i & 1), msg),
		      "message %d", i);
	}
	err = perfring_subbuf_save(r, 2, path);
	CHECK(err == 300, "save: %d", err);
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i %s 2>&1", path);
	f = popen(cmd, "r");
	CHECK(f, "popen");
	snprintf(ours, sizeof(ours), "%s/ours.txt", dir);
	o = fopen(ours, "w");
	CHECK(o && !perfring_trace_dat_script(path, o), "script");
	fclose(o);
	o = fopen(ours, "r");
	CHECK(o, "open %s", ours);
	while (fgets(line, sizeof(line), f)) {
		char want[64], mine[512];

		if (!strncmp(line, "cpus=", 5))
			continue;
		snprintf(want, sizeof(want),
			 "message:              hello %d from ring %d\n", n,
			 n & 1);
		CHECK(strstr(line, want), "trace-cmd line %d: %s", n, line);
		CHECK(strstr(line, n & 1 ? "[001]" : "[000]"), "cpu: %s", line);
		CHECK(fgets(mine, sizeof(mine), o) && !strcmp(mine, line),
		      "perfring script differs at %d: %s", n, line);
		n++;
	}
	CHECK(pclose(f) == 0, "trace-cmd report failed (installed?)");
	CHECK_EQ(n, 300);
	fclose(o);
	perfring_subbuf_destroy(r[0]);
	perfring_subbuf_destroy(r[1]);
	printf("user rings into trace.dat: trace-cmd report prints all %d: ok\n",
	       n);
}

int main(void)
{
	parser();
	ring_basics();
	ring_drop();
	ring_overwrite();
	ring_save();
	return 0;
}
