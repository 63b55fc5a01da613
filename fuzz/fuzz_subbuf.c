// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the sub-buffer page parser (src/ring/subbuf.c) on hostile
 * pages, and the user-space sub-buffer ring driven by the input.
 *
 *  (a) The input is one page (its size is the page size, at least 24):
 *      subbuf_page_info() and a walk of its events must stay inside the
 *      page; every event lies within [0, commit), offsets increase, and
 *      sizes match the header's type.
 *  (b) The input drives a ring of 4 KiB x 4 sub-buffers (overwrite when
 *      the first byte is odd): each byte writes an event of 8 + byte
 *      bytes carrying a sequence number, or (0xff) does a GET_READER and
 *      reads the new bytes.  Oracles: sequence numbers increase; events
 *      read + overrun (+ refused) = events written once drained.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ring/subbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

#define ORACLE(cond)                                                        \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "fuzz_subbuf: oracle failed: %s\n", \
				#cond);                                     \
			abort();                                            \
		}                                                           \
	} while (0)

static void parse_page(const uint8_t *data, size_t size)
{
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	uint32_t last = 0;
	bool first = true;
	uint8_t *copy;
	int r;

	if (size < 24 || size > (1u << 20))
		return;
	/* A private copy of exactly the page: ASan catches any overread. */
	copy = malloc(size);
	if (!copy)
		return;
	memcpy(copy, data, size);
	if (subbuf_page_info(copy, size, &pi) == 0) {
		ORACLE(pi.commit <= size - SUBBUF_HDR_SIZE);
		sink += subbuf_page_full(&pi, size);
		subbuf_iter_init(&it, copy + SUBBUF_HDR_SIZE, pi.commit,
				 pi.time_stamp);
		while ((r = subbuf_iter_next(&it, &ev)) > 0) {
			const uint8_t *p = ev.data;

			ORACLE(first || ev.offset > last);
			ORACLE(p >= copy + SUBBUF_HDR_SIZE &&
			       p + ev.size <=
				       copy + SUBBUF_HDR_SIZE + pi.commit);
			for (uint32_t i = 0; i < ev.size; i++)
				sink += p[i];
			last = ev.offset;
			first = false;
		}
		ORACLE(r == 0 || (r == -EBADMSG && it.bad_what &&
				  it.bad_offset < pi.commit));
	}
	free(copy);
}

struct rd {
	uint64_t next, got;
};

static void read_new(struct subbuf_ring *r, uint32_t from, struct rd *st)
{
	const struct subbuf_meta *m = subbuf_ring_meta(r);
	const uint8_t *pg = subbuf_ring_page(r, m->reader.id);
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;

	ORACLE(subbuf_page_info(pg, m->subbuf_size, &pi) == 0);
	subbuf_iter_init(&it, pg + SUBBUF_HDR_SIZE, m->reader.read,
			 pi.time_stamp);
	while (subbuf_iter_next(&it, &ev) > 0) {
		uint64_t seq;

		if (ev.offset < from)
			continue;
		ORACLE(ev.size >= 8);
		memcpy(&seq, ev.data, 8);
		ORACLE(seq >= st->next);
		st->next = seq + 1;
		st->got++;
	}
	ORACLE(it.bad_what == NULL);
}

static void get_reader(struct subbuf_ring *r, struct rd *st)
{
	const struct subbuf_meta *m = subbuf_ring_meta(r);
	uint32_t id = m->reader.id, rd = m->reader.read;

	subbuf_ring_get_reader(r);
	if (m->reader.id != id)
		read_new(r, 0, st);
	else if (m->reader.read > rd)
		read_new(r, rd, st);
}

static void drive_ring(const uint8_t *data, size_t size)
{
	struct subbuf_ring *r;
	const struct subbuf_meta *m;
	struct rd st = { 0 };
	uint8_t buf[8 + 255] = { 0 };
	uint64_t seq = 0, refused = 0, ts = 1;

	if (!size || subbuf_ring_create(4096, 4, data[0] & 1, &r))
		return;
	m = subbuf_ring_meta(r);
	for (size_t i = 1; i < size; i++) {
		int err;

		if (data[i] == 0xff) {
			get_reader(r, &st);
			continue;
		}
		memcpy(buf, &seq, 8);
		/* Times: small steps, and now and then a big jump. */
		ts += data[i] & 0x80 ? (uint64_t)data[i] << 24 : data[i];
		err = subbuf_ring_write(r, ts, buf, 8u + data[i]);
		ORACLE(err == 0 || err == -ENOSPC);
		refused += err != 0;
		seq++;
	}
	for (int i = 0; i < 16; i++)
		get_reader(r, &st);
	ORACLE(m->entries + refused == seq);
	ORACLE(m->read == st.got);
	ORACLE(st.got + m->overrun + refused == seq);
	subbuf_ring_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_page(data, size);
	drive_ring(data, size < 4096 ? size : 4096);
	return 0;
}
