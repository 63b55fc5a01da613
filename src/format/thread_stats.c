// SPDX-License-Identifier: MIT
/*
 * perf report -T: the PERF_RECORD_READ values of a file recorded with -s,
 * summed per thread and event, printed as perf 6.1's per-thread counter
 * table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "../common/load.h"
#include "../common/log.h"
#include "perf_reader.h"
#include "thread_stats.h"

/* ---- perf report -T ---- */

struct ts_thread {
	uint32_t pid, tid;
};

struct thread_stats {
	struct ts_thread *threads;
	uint32_t nr_threads, cap_threads;
	uint32_t *counters; /* attr index per column */
	uint32_t nr_counters, cap_counters;
	uint64_t *values; /* [thread * cap_counters + counter] */
	uint64_t dropped;
	/* (pid, tid) -> thread index + 1, open addressing (0: empty) */
	uint32_t *ht;
	uint32_t ht_cap;
	/* attr index -> column + 1 (0: none yet) */
	uint32_t *col_of;
	uint32_t nr_col_of;
};

/* At most this many values (threads x events, 64 MiB): past it READ
 * records of new threads are counted as dropped. */
#define TS_MAX_VALUES (1u << 23)

static uint32_t ts_hash(uint32_t pid, uint32_t tid)
{
	uint64_t k = ((uint64_t)pid << 32 | tid) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(k >> 32);
}

/* The thread's row, or nr_threads if it is new. */
static uint32_t ts_find(const struct thread_stats *ts, uint32_t pid,
			uint32_t tid)
{
	if (!ts->ht_cap)
		return ts->nr_threads;
	for (uint32_t h = ts_hash(pid, tid) & (ts->ht_cap - 1);;
	     h = (h + 1) & (ts->ht_cap - 1)) {
		uint32_t v = ts->ht[h];

		if (!v)
			return ts->nr_threads;
		if (ts->threads[v - 1].pid == pid &&
		    ts->threads[v - 1].tid == tid)
			return v - 1;
	}
}

/* Indexes thread @t (a new row); grows the table at half full. */
static int ts_index(struct thread_stats *ts, uint32_t t)
{
	if ((uint64_t)(t + 1) * 2 > ts->ht_cap) {
		uint32_t cap = ts->ht_cap ? ts->ht_cap * 2 : 64;
		uint32_t *ht = calloc(cap, sizeof(*ht));

		if (!ht)
			return -ENOMEM;
		free(ts->ht);
		ts->ht = ht;
		ts->ht_cap = cap;
		for (uint32_t i = 0; i < t; i++)
			ts_index(ts, i);
	}
	for (uint32_t h = ts_hash(ts->threads[t].pid, ts->threads[t].tid) &
			  (ts->ht_cap - 1);
	     ; h = (h + 1) & (ts->ht_cap - 1)) {
		if (!ts->ht[h]) {
			ts->ht[h] = t + 1;
			return 0;
		}
	}
}

int thread_stats_new(struct thread_stats **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void thread_stats_free(struct thread_stats *ts)
{
	if (!ts)
		return;
	free(ts->threads);
	free(ts->counters);
	free(ts->values);
	free(ts->ht);
	free(ts->col_of);
	free(ts);
}

/* Grows the value matrix to @threads x @counters (zero-filled). */
static int ts_grow(struct thread_stats *ts, uint32_t threads, uint32_t counters)
{
	uint32_t nt = ts->cap_threads, nc = ts->cap_counters;
	uint64_t *v;

	while (nt < threads)
		nt = nt ? nt * 2 : 16;
	while (nc < counters)
		nc = nc ? nc * 2 : 4;
	if (nt == ts->cap_threads && nc == ts->cap_counters)
		return 0;
	if ((uint64_t)nt * nc > TS_MAX_VALUES)
		return -E2BIG;
	if (nt != ts->cap_threads) {
		struct ts_thread *t = realloc(ts->threads, nt * sizeof(*t));

		if (!t)
			return -ENOMEM;
		ts->threads = t;
	}
	if (nc != ts->cap_counters) {
		uint32_t *c = realloc(ts->counters, nc * sizeof(*c));

		if (!c)
			return -ENOMEM;
		ts->counters = c;
	}
	v = calloc((size_t)nt * nc, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t t = 0; t < ts->nr_threads; t++)
		memcpy(v + (size_t)t * nc,
		       ts->values + (size_t)t * ts->cap_counters,
		       ts->nr_counters * sizeof(*v));
	free(ts->values);
	ts->values = v;
	ts->cap_threads = nt;
	ts->cap_counters = nc;
	return 0;
}

int thread_stats_add(struct thread_stats *ts, const struct prd_file *f,
		     const struct prd_event *ev)
{
	const struct prd_record_read *r = &ev->rec->read;
	const struct prd_attr *a;
	uint32_t pid, tid, t, c;
	uint64_t value, id = 0;
	int ret;

	if (ev->hdr->type != PERF_RECORD_READ)
		return 0;
	pid = r->pid;
	tid = r->tid;
	value = r->value;
	/* The event: by the id in the values (PERF_FORMAT_ID), else by
	 * the sample_id_all trailer's id. */
	a = ev->sample ? prd_attr_by_id(f, ev->sample->id) : NULL;
	if (!a && prd_nr_attrs(f) &&
	    prd_record_read_id(r, prd_attr(f, 0)->attr.read_format, &id))
		a = prd_attr_by_id(f, id);
	if (!a) {
		ts->dropped++;
		return 0;
	}
	if (!ts->col_of) {
		ts->nr_col_of = prd_nr_attrs(f);
		ts->col_of = calloc(ts->nr_col_of ? ts->nr_col_of : 1,
				    sizeof(*ts->col_of));
		if (!ts->col_of)
			return -ENOMEM;
	}
	if (a->index >= ts->nr_col_of) {
		ts->dropped++;
		return 0;
	}
	t = ts_find(ts, pid, tid);
	c = ts->col_of[a->index] ? ts->col_of[a->index] - 1 : ts->nr_counters;
	ret = ts_grow(ts, t + 1, c + 1);
	if (ret == -E2BIG) {
		ts->dropped++;
		return 0;
	}
	if (ret)
		return ret;
	if (t == ts->nr_threads) {
		ts->threads[t] = (struct ts_thread){ pid, tid };
		ret = ts_index(ts, t);
		if (ret)
			return ret;
		ts->nr_threads++;
	}
	if (c == ts->nr_counters) {
		ts->counters[c] = a->index;
		ts->col_of[a->index] = c + 1;
		ts->nr_counters++;
	}
	ts->values[(size_t)t * ts->cap_counters + c] += value;
	return 0;
}

static const char *counter_name(const struct prd_file *f, uint32_t index)
{
	for (uint32_t i = 0; i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);

		if (a && a->index == index && a->name)
			return a->name;
	}
	return "";
}

/* perf_read_values__display_pretty: columns as wide as their widest. */
void thread_stats_print(const struct thread_stats *ts, const struct prd_file *f,
			FILE *out)
{
	int pidw = 3, tidw = 3, *cw;

	cw = calloc(ts->nr_counters ? ts->nr_counters : 1, sizeof(*cw));
	if (!cw)
		return;
	for (uint32_t c = 0; c < ts->nr_counters; c++)
		cw[c] = (int)strlen(counter_name(f, ts->counters[c]));
	for (uint32_t t = 0; t < ts->nr_threads; t++) {
		int w = snprintf(NULL, 0, "%d", (int)ts->threads[t].pid);

		pidw = w > pidw ? w : pidw;
		w = snprintf(NULL, 0, "%d", (int)ts->threads[t].tid);
		tidw = w > tidw ? w : tidw;
		for (uint32_t c = 0; c < ts->nr_counters; c++) {
			w = snprintf(
				NULL, 0, "%" PRIu64,
				ts->values[(size_t)t * ts->cap_counters + c]);
			cw[c] = w > cw[c] ? w : cw[c];
		}
	}
	fprintf(out, "# %*s  %*s", pidw, "PID", tidw, "TID");
	for (uint32_t c = 0; c < ts->nr_counters; c++)
		fprintf(out, "  %*s", cw[c], counter_name(f, ts->counters[c]));
	fputc('\n', out);
	for (uint32_t t = 0; t < ts->nr_threads; t++) {
		fprintf(out, "  %*d  %*d", pidw, (int)ts->threads[t].pid, tidw,
			(int)ts->threads[t].tid);
		for (uint32_t c = 0; c < ts->nr_counters; c++)
			fprintf(out, "  %*" PRIu64, cw[c],
				ts->values[(size_t)t * ts->cap_counters + c]);
		fputc('\n', out);
	}
	free(cw);
	if (ts->dropped)
		pr_warn("%" PRIu64
			" READ records left out of the thread table (no known event, or past its size)",
			ts->dropped);
}
