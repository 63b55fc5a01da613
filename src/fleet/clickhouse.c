// SPDX-License-Identifier: MIT
/*
 * perfring.samples read back (see clickhouse.h).  The server sums the rows
 * (GROUP BY host, comm, pid, tid, event and the frame arrays) so that a
 * day of a fleet comes back as its distinct stacks, not its samples; the
 * answer is RowBinary, the format the rows went in with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../common/log.h"
#include "clickhouse.h"
#include "http.h"
#include "sink.h"

void ch_rows_init(struct ch_rows *c, ch_row_fn fn, void *ctx)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->ctx = ctx;
}

void ch_rows_free(struct ch_rows *c)
{
	free(c->buf);
	free(c->ptr);
	free(c->lens);
	free(c->addrs);
	memset(c, 0, sizeof(*c));
}

struct rcur {
	const unsigned char *p, *end;
};

/* 1: read; 0: the row goes on past the bytes there; -1: damaged. */
static int get_varint(struct rcur *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return 0;
		*v |= (uint64_t)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return 1;
	}
	return -1;
}

static int get_fixed(struct rcur *r, void *v, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return 0;
	memcpy(v, r->p, n);
	r->p += n;
	return 1;
}

static int get_str(struct rcur *r, const char **s, size_t *len)
{
	uint64_t n;
	int k = get_varint(r, &n);

	if (k <= 0)
		return k;
	if (n > CH_STR_MAX)
		return -1;
	if ((uint64_t)(r->end - r->p) < n)
		return 0;
	*s = (const char *)r->p;
	*len = (size_t)n;
	r->p += n;
	return 1;
}

static int room_for(struct ch_rows *c, uint32_t n)
{
	if (n <= c->room)
		return 0;
	free(c->ptr);
	free(c->lens);
	free(c->addrs);
	c->ptr = malloc(3 * (size_t)n * sizeof(*c->ptr));
	c->lens = malloc(3 * (size_t)n * sizeof(*c->lens));
	c->addrs = malloc((size_t)n * sizeof(*c->addrs));
	c->room = c->ptr && c->lens && c->addrs ? n : 0;
	return c->room ? 0 : -ENOMEM;
}

/* An Array(String) of @n elements (n checked by the caller) into
 * ptr/lens from @at. */
static int get_strs(struct ch_rows *c, struct rcur *r, uint32_t n, size_t at)
{
	for (uint32_t i = 0; i < n; i++) {
		int k = get_str(r, &c->ptr[at + i], &c->lens[at + i]);

		if (k <= 0)
			return k;
	}
	return 1;
}

/* An array's length, the same as the stack's (@n, or the first). */
static int get_len(struct ch_rows *c, struct rcur *r, uint32_t *n, bool first)
{
	uint64_t v;
	int k = get_varint(r, &v);

	if (k <= 0)
		return k;
	if (v > CH_ARRAY_MAX || (!first && v != *n)) {
		c->why = v > CH_ARRAY_MAX ? "an array too long" :
					    "frame arrays of different lengths";
		return -1;
	}
	*n = (uint32_t)v;
	return room_for(c, *n) ? -2 : 1;
}

/* One row from @r: 1 (c->row filled), 0 (cut), -1 (damaged), -2 (no
 * memory). */
static int parse_row(struct ch_rows *c, struct rcur *r)
{
	struct ch_row *w = &c->row;
	uint32_t n = 0;
	int k;

	memset(w, 0, sizeof(*w));
	c->why = NULL;
#define STEP(x)                     \
	do {                        \
		if ((k = (x)) <= 0) \
			return k;   \
	} while (0)
	STEP(get_str(r, &w->host, &w->host_len));
	STEP(get_str(r, &w->comm, &w->comm_len));
	STEP(get_fixed(r, &w->pid, 4));
	STEP(get_fixed(r, &w->tid, 4));
	STEP(get_str(r, &w->event, &w->event_len));
	STEP(get_len(c, r, &n, true));
	STEP(get_strs(c, r, n, 0));
	STEP(get_len(c, r, &n, false));
	STEP(get_strs(c, r, n, n));
	STEP(get_len(c, r, &n, false));
	for (uint32_t i = 0; i < n; i++)
		STEP(get_fixed(r, &c->addrs[i], 8));
	STEP(get_len(c, r, &n, false));
	STEP(get_strs(c, r, n, 2 * (size_t)n));
	STEP(get_fixed(r, &w->count, 8));
	STEP(get_fixed(r, &w->value, 8));
	STEP(get_fixed(r, &w->first_ns, 8));
	STEP(get_fixed(r, &w->last_ns, 8));
#undef STEP
	w->nr_frames = n;
	w->stack = c->ptr;
	w->dsos = c->ptr + n;
	w->build_ids = c->ptr + 2 * (size_t)n;
	w->stack_len = c->lens;
	w->dso_len = c->lens + n;
	w->bid_len = c->lens + 2 * (size_t)n;
	w->addrs = c->addrs;
	return 1;
}

int ch_rows_feed(struct ch_rows *c, const void *p, size_t n)
{
	struct rcur r;
	size_t used;

	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : 1 << 16;
		unsigned char *b;

		while (cap < c->len + n)
			cap *= 2;
		if (cap > 2 * (size_t)CH_ROW_MAX + (1 << 16)) {
			c->why = "a row too long";
			return -EBADMSG;
		}
		b = realloc(c->buf, cap);
		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	if (n)
		memcpy(c->buf + c->len, p, n);
	c->len += n;
	r.p = c->buf;
	r.end = c->buf + c->len;
	for (;;) {
		const unsigned char *start = r.p;
		int k = parse_row(c, &r);

		if (k == -2)
			return -ENOMEM;
		if (k < 0) {
			if (!c->why)
				c->why = "a string too long";
			return -EBADMSG;
		}
		if (k == 0) {
			r.p = start;
			break;
		}
		c->rows++;
		k = c->fn ? c->fn(c->ctx, &c->row) : 0;
		if (k)
			return k;
	}
	used = (size_t)(r.p - c->buf);
	memmove(c->buf, r.p, c->len - used);
	c->len -= used;
	if (c->len > CH_ROW_MAX) {
		c->why = "a row too long";
		return -EBADMSG;
	}
	return 0;
}

int ch_rows_end(struct ch_rows *c)
{
	if (c->len) {
		c->why = "the last row is cut";
		return -EBADMSG;
	}
	return 0;
}

char *ch_query(const char *where)
{
	static const char cols[] =
		"host, comm, pid, tid, event, stack, dsos, addrs, build_ids";
	char *q;

	if (asprintf(&q,
		     "SELECT %s, count(), sum(value), min(time_ns), max(time_ns) "
		     "FROM perfring.samples%s%s%s GROUP BY %s FORMAT RowBinary",
		     cols, where && *where ? " WHERE (" : "",
		     where && *where ? where : "", where && *where ? ")" : "",
		     cols) < 0)
		return NULL;
	return q;
}

/* Whether a frame of object @dso is the kernel's: perf names the kernel
 * and its modules in brackets, as it does [vdso] and [vsyscall]. */
static bool kernel_object(const char *dso, size_t n)
{
	return n > 2 && dso[0] == '[' &&
	       !(n == 6 && !memcmp(dso, "[vdso]", 6)) &&
	       !(n == 10 && !memcmp(dso, "[vsyscall]", 10)) &&
	       !(n >= 5 && !memcmp(dso, "[JIT]", 5));
}

/* A stack name that fleet_frame_name() made of an address. */
static bool address_name(const char *s, size_t n)
{
	if (n != 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int ch_row_add(struct fleet_profile *p, const struct ch_row *row)
{
	uint32_t locs[FLEET_MAX_FRAMES], n = 0;
	struct fleet_sample s = { .count = row->count,
				  .value = row->value,
				  .time_ns = row->first_ns,
				  .pid = row->pid,
				  .tid = row->tid };
	char ev[64];
	int err = 0, e;

	for (uint32_t i = 0; i < row->nr_frames && n < FLEET_MAX_FRAMES && !err;
	     i++) {
		struct fleet_loc l = { .rel = row->addrs[i],
				       .ip = row->addrs[i] };

		if (!address_name(row->stack[i], row->stack_len[i]))
			err = fleet_str(p, row->stack[i], row->stack_len[i],
					&l.func);
		if (!err && row->dso_len[i])
			err = fleet_str(p, row->dsos[i], row->dso_len[i],
					&l.dso);
		if (!err && row->bid_len[i])
			err = fleet_str(p, row->build_ids[i], row->bid_len[i],
					&l.build_id);
		l.kernel = kernel_object(row->dsos[i], row->dso_len[i]);
		if (!err)
			err = fleet_loc(p, &l, &locs[n++]);
	}
	if (!err)
		err = fleet_stack(p, locs, n, &s.stack);
	if (!err)
		err = fleet_str(p, row->comm, row->comm_len, &s.comm);
	if (!err)
		err = fleet_str(p, row->host, row->host_len, &s.host);
	if (err)
		return err;
	snprintf(ev, sizeof(ev), "%.*s", (int)row->event_len, row->event);
	e = fleet_event(p, ev,
			!strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock"));
	if (e < 0)
		return e;
	s.event = (uint32_t)e;
	if (row->first_ns && (!p->start_ns || row->first_ns < p->start_ns))
		p->start_ns = row->first_ns;
	if (row->last_ns > p->end_ns)
		p->end_ns = row->last_ns;
	return fleet_add_sample(p, &s);
}

static int row_to_profile(void *ctx, const struct ch_row *row)
{
	return ch_row_add(ctx, row);
}

static int body_to_rows(void *ctx, const void *p, size_t n)
{
	return ch_rows_feed(ctx, p, n);
}

int ch_read(const char *from, const char *where, struct fleet_profile *p)
{
	struct sink s;
	struct ch_rows rows;
	struct http_response rs;
	char *q;
	int err;

	err = sink_parse(from, 600000, &s);
	if (err)
		return err;
	if (s.kind != SINK_CLICKHOUSE) {
		pr_err("--from %s: only clickhouse=URL can be read back", from);
		return -EINVAL;
	}
	q = ch_query(where);
	if (!q)
		return -ENOMEM;
	ch_rows_init(&rows, row_to_profile, p);
	{
		struct http_request rq = { .method = "POST",
					   .path = "/",
					   .content_type = "text/plain",
					   .body = q,
					   .body_len = strlen(q),
					   .timeout_ms = s.timeout_ms,
					   .on_body = body_to_rows,
					   .ctx = &rows };

		err = http_exchange(&s.url, &rq, &rs);
	}
	if (!err && rs.status >= 200 && rs.status < 300)
		err = ch_rows_end(&rows);
	if (err == -EBADMSG && rows.why)
		pr_err("--from %s: the answer does not parse (%s, after %llu rows)",
		       from, rows.why, (unsigned long long)rows.rows);
	else if (err || rs.status < 200 || rs.status > 299) {
		char why[256];

		http_error_text(err, &rs, why, sizeof(why));
		pr_err("--from %s: %s", from, why);
		if (!err)
			err = -EIO; /* the server refused the query: said above */
	}
	ch_rows_free(&rows);
	free(q);
	return err;
}
