// SPDX-License-Identifier: MIT
/*
 * Ordered delivery, as perf's ordered-events.c: records with a time are
 * copied into 1 MiB chunks and queued; at FINISHED_ROUND the queue is
 * sorted (a merge of the rings' runs) and flushed up to the previous
 * round's largest time; a queue over its limit flushes its older half.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/log.h"
#include "../common/load.h"
#include "perf_reader.h"
#include "perf_reader_internal.h"

/* ---- ordered queue ---- */

static void *chunk_alloc(struct prd_file *f, size_t size, struct chunk **out)
{
	struct chunk *c = f->cur_chunk;
	size_t need = (size + 7) & ~(size_t)7;
	void *p;

	if (!c || PRD_CHUNK_SIZE - c->used < need) {
		if (c && !c->live) {
			c->used = 0; /* nothing lives in it: reuse */
		} else {
			c = f->spare;
			if (c) {
				f->spare = c->next;
				f->nr_spare--;
			} else {
				c = malloc(sizeof(*c));
				if (!c)
					return NULL;
			}
			c->used = 0;
			c->live = 0;
			c->next = NULL;
			f->cur_chunk = c;
		}
	}
	p = c->data + c->used;
	c->used += need;
	c->live++;
	*out = c;
	return p;
}

static void chunk_release(struct prd_file *f, struct chunk *c)
{
	if (--c->live || c == f->cur_chunk)
		return;
	if (f->nr_spare < 4) {
		c->next = f->spare;
		f->spare = c;
		f->nr_spare++;
	} else {
		free(c);
	}
}

static int cmp_qev(const void *a, const void *b)
{
	const struct qev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sorts the queue by (time, arrival).  A round is a few runs already in
 * time order, one per ring the recorder drained, so merging the runs
 * costs O(n log runs) where qsort would cost O(n log n) comparisons
 * through a function pointer.  Entries sit in arrival order and a merge
 * takes the left run on equal times, so arrival order breaks ties.
 */
static void sort_queue(struct prd_file *f)
{
	struct qev *src = f->q, *dst = f->qtmp, *t;
	size_t n = f->qn, passes = 0;

	if (!dst) {
		qsort(f->q, f->qn, sizeof(*f->q), cmp_qev);
		return;
	}
	for (;;) {
		size_t i = 0, runs = 0, o = 0;

		while (i < n) {
			size_t a = i, mid, b, e;

			mid = a + 1;
			while (mid < n && src[mid - 1].time <= src[mid].time)
				mid++;
			e = mid;
			if (mid < n) {
				e = mid + 1;
				while (e < n && src[e - 1].time <= src[e].time)
					e++;
			}
			runs++;
			b = mid;
			while (a < mid && b < e)
				dst[o++] = src[b].time < src[a].time ?
						   src[b++] :
						   src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < e)
				dst[o++] = src[b++];
			i = e;
		}
		t = src;
		src = dst;
		dst = t;
		if (runs <= 1 || ++passes > 64) /* each pass halves the runs */
			break;
	}
	if (src != f->q)
		memcpy(f->q, src, n * sizeof(*src));
}

/* Delivers the queued records with time <= @limit, in time order. */
int prd_queue_flush(struct prd_file *f, struct proc *pc, uint64_t limit)
{
	size_t i = 0;
	int ret = 0;

	if (!f->qn || !limit)
		return 0;
	if (!f->q_sorted) {
		sort_queue(f);
		f->q_sorted = true;
	}
	while (i < f->qn && f->q[i].time <= limit) {
		struct qev *e = &f->q[i];
		uint32_t size = ld16(e->rec + 6);
		const char *why;
		bool unk;
		int has;

		has = prd_describe(f, e->rec, size, &unk, &why);
		ret = prd_deliver(f, pc, e->rec, e->offset, has > 0);
		f->last_flush = e->time;
		f->qbytes -= size;
		chunk_release(f, e->chunk);
		i++;
		if (ret)
			break;
	}
	memmove(f->q, f->q + i, (f->qn - i) * sizeof(*f->q));
	f->qn -= i;
	return ret;
}

/* The queue is over its limit: deliver its older half (OE_FLUSH__HALF). */
static int flush_half(struct prd_file *f, struct proc *pc)
{
	uint64_t lo, hi;
	size_t before = f->qn;
	int ret;

	if (!f->warned_queue) {
		pr_warn("%s: a round holds more than %llu MiB of records: flushing the older half early (order across rings may suffer)",
			f->name, ull(f->qlimit >> 20));
		f->warned_queue = true;
	}
	f->st.nr_early_flushes++;
	sort_queue(f);
	f->q_sorted = true;
	lo = f->q[0].time;
	hi = f->q[f->qn - 1].time;
	ret = prd_queue_flush(f, pc, lo + (hi - lo) / 2);
	if (!ret && f->qn == before)
		ret = prd_queue_flush(f, pc, UINT64_MAX);
	return ret;
}

int prd_queue_add(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		  uint32_t size, uint64_t off, uint64_t time)
{
	struct chunk *c;
	unsigned char *copy;
	struct qev *e;

	if (f->qn == f->qcap) {
		size_t ncap = f->qcap ? f->qcap * 2 : 4096;
		struct qev *nq = realloc(f->q, ncap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		f->q = nq;
		nq = realloc(f->qtmp, ncap * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		f->qtmp = nq;
		f->qcap = ncap;
	}
	copy = chunk_alloc(f, size, &c);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, size);
	if (time < f->last_flush)
		f->st.nr_unordered++;
	if (time > f->max_ts)
		f->max_ts = time;
	e = &f->q[f->qn++];
	e->time = time;
	e->seq = f->seq++;
	e->offset = off;
	e->rec = copy;
	e->chunk = c;
	if (f->qn > 1 && cmp_qev(e - 1, e) > 0)
		f->q_sorted = false;
	f->qbytes += size;
	if (f->qbytes > f->qlimit || f->qn > f->qmax)
		return flush_half(f, pc);
	return 0;
}

void prd_queue_reset(struct prd_file *f)
{
	for (size_t i = 0; i < f->qn; i++)
		chunk_release(f, f->q[i].chunk);
	f->qn = 0;
	f->qbytes = 0;
	f->q_sorted = true;
	f->seq = f->next_flush = f->max_ts = f->last_flush = 0;
}
