// SPDX-License-Identifier: MIT
/*
 * Reading trace.dat: script (one line per event, as trace-cmd report
 * prints it), stats and dump.  The file is checked by the trace.dat reader
 * (src/format/trace_dat.c), pages and events by the sub-buffer parser
 * (src/ring/subbuf.c); payloads are decoded by libtraceevent from the
 * formats stored in the file.  CPUs are merged by time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "perfring/tools.h"
#include "../format/trace_dat.h"
#include "../ring/subbuf_page.h"
#include "tracedat_lines.h"

struct cpu_it {
	const struct tdat_file *f;
	int cpu;
	const uint8_t *base;
	uint64_t size; /* whole pages only */
	uint64_t page_off; /* current page, relative to base */
	bool started, done, have;
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	bool missed_pending; /* print a dropped mark before ev */
	uint64_t missed_count;
	uint64_t pages, events, bytes, lost_pages, lost_stored;
	uint64_t first_ts, last_ts;
	int err;
};

static int page_open(struct cpu_it *c)
{
	const uint8_t *page = c->base + c->page_off;

	if (subbuf_page_info(page, c->f->page_size, &c->pi)) {
		uint64_t commit;

		memcpy(&commit, page + 8, 8);
		pr_err("trace.dat: cpu%d page at offset %" PRIu64
		       ": commit 0x%" PRIx64 " does not fit a %u-byte page",
		       c->cpu, c->f->cpus[c->cpu].offset + c->page_off + 8,
		       commit, c->f->page_size);
		return -EBADMSG;
	}
	c->pages++;
	c->bytes += c->pi.commit;
	if (c->pi.missed) {
		c->lost_pages++;
		c->lost_stored += c->pi.missed_count;
		c->missed_pending = true;
		c->missed_count = c->pi.missed_count;
	}
	subbuf_iter_init(&c->it, page + SUBBUF_HDR_SIZE, c->pi.commit,
			 c->pi.time_stamp);
	return 0;
}

/* Moves @c to its next event (c->have), or to its end (c->done). */
static int cpu_next(struct cpu_it *c)
{
	int r;

	c->have = false;
	if (c->done)
		return 0;
	for (;;) {
		if (!c->started) {
			c->started = true;
			if (c->size < c->f->page_size) {
				c->done = true;
				return 0;
			}
			c->page_off = 0;
			r = page_open(c);
			if (r)
				goto bad;
		}
		r = subbuf_iter_next(&c->it, &c->ev);
		if (r > 0) {
			c->have = true;
			c->events++;
			if (c->events == 1)
				c->first_ts = c->ev.ts;
			c->last_ts = c->ev.ts;
			return 1;
		}
		if (r < 0) {
			pr_err("trace.dat: cpu%d: %s at offset %" PRIu64,
			       c->cpu, c->it.bad_what,
			       c->f->cpus[c->cpu].offset + c->page_off +
				       SUBBUF_HDR_SIZE + c->it.bad_offset);
			r = -EBADMSG;
			goto bad;
		}
		if (c->page_off + 2ull * c->f->page_size > c->size) {
			c->done = true;
			return 0;
		}
		c->page_off += c->f->page_size;
		r = page_open(c);
		if (r)
			goto bad;
	}
bad:
	c->done = true;
	c->err = r;
	return r;
}

struct rd {
	struct tdat_file *f;
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct cpu_it *cpus;
	char **bufs; /* NUL-terminated copies given to libtraceevent */
	size_t nr_bufs;
};

static char *dupz(struct rd *r, const struct tdat_blob *b)
{
	char *p = malloc(b->len + 1), **n;

	if (!p)
		return NULL;
	memcpy(p, b->data, b->len);
	p[b->len] = 0;
	n = realloc(r->bufs, (r->nr_bufs + 1) * sizeof(*n));
	if (!n) {
		free(p);
		return NULL;
	}
	r->bufs = n;
	n[r->nr_bufs++] = p;
	return p;
}

static void rd_close(struct rd *r)
{
	if (r->plugins)
		tep_unload_plugins(r->plugins, r->tep);
	if (r->tep)
		tep_free(r->tep);
	for (size_t i = 0; i < r->nr_bufs; i++)
		free(r->bufs[i]);
	free(r->bufs);
	free(r->cpus);
	tdat_close(r->f);
}

static int rd_open(struct rd *r, const char *path, bool want_tep)
{
	int err;

	memset(r, 0, sizeof(*r));
	err = tdat_open(path, &r->f);
	if (err)
		return err;
	r->cpus = calloc(r->f->nr_cpus, sizeof(*r->cpus));
	if (!r->cpus) {
		rd_close(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < r->f->nr_cpus; i++) {
		struct cpu_it *c = &r->cpus[i];

		c->f = r->f;
		c->cpu = (int)i;
		c->base = r->f->cpus[i].data;
		c->size =
			r->f->cpus[i].size / r->f->page_size * r->f->page_size;
		if (!r->f->cpus[i].size || !c->base)
			c->size = 0;
	}
	if (!want_tep)
		return 0;
	r->tep = tep_alloc();
	if (!r->tep) {
		rd_close(r);
		return -ENOMEM;
	}
	tep_set_file_bigendian(r->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(r->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(r->tep, r->f->long_size);
	tep_set_page_size(r->tep, (int)r->f->page_size);
	/* The event plugins trace-cmd uses (sched_switch, ...), as it does. */
	r->plugins = tep_load_plugins(r->tep);
	{
		char *hp = dupz(r, &r->f->header_page);

		if (!hp ||
		    tep_parse_header_page(r->tep, hp, r->f->header_page.len,
					  r->f->long_size))
			pr_warn("trace.dat: header_page not understood by libtraceevent");
	}
	for (size_t i = 0; i < r->f->nr_ftrace; i++)
		if (tep_parse_event(r->tep, r->f->ftrace[i].data,
				    r->f->ftrace[i].len, "ftrace"))
			pr_warn("trace.dat: ftrace format %zu not understood",
				i);
	for (size_t i = 0; i < r->f->nr_events; i++)
		if (tep_parse_event(r->tep, r->f->events[i].data,
				    r->f->events[i].len, r->f->events[i].name))
			pr_warn("trace.dat: %s event format %zu not understood",
				r->f->events[i].name, i);
	if (r->f->kallsyms.len) {
		char *k = dupz(r, &r->f->kallsyms);

		if (k)
			tep_parse_kallsyms(r->tep, k);
	}
	if (r->f->printk.len) {
		char *p = dupz(r, &r->f->printk);

		if (p)
			tep_parse_printk_formats(r->tep, p);
	}
	if (r->f->cmdlines.len) {
		char *c = dupz(r, &r->f->cmdlines);

		if (c)
			tep_parse_saved_cmdlines(r->tep, c);
	}
	return 0;
}

/* The CPU with the earliest pending event, or -1 (err set on damage). */
static int rd_pick(struct rd *r, int *err)
{
	int best = -1;

	for (uint32_t i = 0; i < r->f->nr_cpus; i++) {
		struct cpu_it *c = &r->cpus[i];

		if (!c->started && !c->done && cpu_next(c) < 0 && !*err)
			*err = c->err;
		if (c->have && (best < 0 || c->ev.ts < r->cpus[best].ev.ts))
			best = (int)i;
	}
	return best;
}

static void fill_record(struct tep_record *rec, const struct cpu_it *c)
{
	memset(rec, 0, sizeof(*rec));
	rec->ts = c->ev.ts;
	rec->data = (void *)c->ev.data;
	rec->size = (int)c->ev.size;
	rec->record_size = (int)c->ev.size;
	rec->cpu = c->cpu;
	rec->offset = c->f->cpus[c->cpu].offset + c->page_off +
		      SUBBUF_HDR_SIZE + c->ev.offset;
	rec->missed_events =
		c->missed_pending ?
			(c->missed_count ? (long long)c->missed_count : -1) :
			0;
}

static int out_err(FILE *out)
{
	if (ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

int perfring_trace_dat_probe(const char *path)
{
	return tdat_probe(path);
}

struct tdat_lines {
	struct rd r;
	struct trace_seq s;
	int err; /* sticky: the first damage (the other CPUs go on) */
	/* tdat_lines_next_ev()'s event, for tdat_ev_fields() */
	struct tep_record cur;
	struct tep_event *cur_ev;
};

int tdat_lines_open(const char *path, struct tdat_lines **out)
{
	struct tdat_lines *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = rd_open(&l->r, path, true);
	if (err) {
		free(l);
		return err;
	}
	trace_seq_init(&l->s);
	*out = l;
	return 0;
}

/* The text of CPU @cpu's pending event into l->s, as trace-cmd report
 * prints it (a dropped-events mark line before it when the kernel marked
 * its page). */
static void format_event(struct tdat_lines *l, int cpu)
{
	struct cpu_it *c = &l->r.cpus[cpu];
	struct trace_seq *s = &l->s;
	struct tep_record rec;

	trace_seq_reset(s);
	if (c->missed_pending) {
		if (c->missed_count)
			trace_seq_printf(s,
					 "CPU:%d [%" PRIu64
					 " EVENTS DROPPED]\n",
					 cpu, c->missed_count);
		else
			trace_seq_printf(s, "CPU:%d [EVENTS DROPPED]\n", cpu);
	}
	fill_record(&rec, c);
	c->missed_pending = false;
	if (c->ev.size < 8) {
		trace_seq_printf(s, "[short event of %u bytes]", c->ev.size);
	} else {
		struct tep_event *e;
		char name[256];
		/* Microseconds, rounded as trace-cmd report. */
		uint64_t us = (c->ev.ts + 500) / 1000;

		tep_print_event(l->r.tep, s, &rec, "%16s-%-5d [%03d] ",
				TEP_PRINT_COMM, TEP_PRINT_PID, TEP_PRINT_CPU);
		trace_seq_printf(s, "%5" PRIu64 ".%06" PRIu64 ": ",
				 us / 1000000, us % 1000000);
		/* "name:" in 21 columns, as trace-cmd. */
		e = tep_find_event_by_record(l->r.tep, &rec);
		snprintf(name, sizeof(name), "%s:", e ? e->name : "?");
		trace_seq_printf(s, "%-21s ", name);
		tep_print_event(l->r.tep, s, &rec, "%s", TEP_PRINT_INFO);
	}
	trace_seq_terminate(s);
	/* trace_marker text ends in its own newline. */
	while (s->len && s->buffer[s->len - 1] == '\n')
		s->buffer[--s->len] = 0;
	trace_seq_putc(s, '\n');
	trace_seq_terminate(s);
}

int tdat_lines_next(struct tdat_lines *l, uint64_t *ts, const char **text,
		    size_t *len)
{
	int cpu = rd_pick(&l->r, &l->err);
	struct cpu_it *c;

	if (cpu < 0)
		return l->err;
	c = &l->r.cpus[cpu];
	format_event(l, cpu);
	*ts = c->ev.ts;
	*text = l->s.buffer;
	*len = (size_t)l->s.len;
	cpu_next(c);
	if (c->err && !l->err)
		l->err = c->err;
	return 1;
}

int tdat_lines_next_ev(struct tdat_lines *l, struct tdat_ev *ev)
{
	int cpu = rd_pick(&l->r, &l->err);
	struct cpu_it *c;

	l->cur_ev = NULL;
	if (cpu < 0)
		return l->err;
	c = &l->r.cpus[cpu];
	fill_record(&l->cur, c);
	memset(ev, 0, sizeof(*ev));
	ev->ts = c->ev.ts;
	ev->cpu = (uint32_t)cpu;
	ev->raw = c->ev.data;
	ev->raw_size = c->ev.size;
	ev->missed_mark = c->missed_pending;
	ev->missed = c->missed_count;
	c->missed_pending = false;
	ev->system = ev->name = "?";
	ev->tid = -1;
	if (c->ev.size >= 8) {
		int32_t pid;

		/* common_type u16, flags u8, preempt_count u8, common_pid */
		memcpy(&pid, (const uint8_t *)c->ev.data + 4, sizeof(pid));
		ev->tid = pid;
		l->cur_ev = tep_find_event_by_record(l->r.tep, &l->cur);
		if (l->cur_ev) {
			ev->system = l->cur_ev->system;
			ev->name = l->cur_ev->name;
		}
		if (tep_is_pid_registered(l->r.tep, pid))
			ev->comm = tep_data_comm_from_pid(l->r.tep, pid);
	}
	cpu_next(c);
	if (c->err && !l->err)
		l->err = c->err;
	return 1;
}

/* A __data_loc field's bytes: (len << 16 | offset), the offset from the
 * end of the field when it is __rel_loc; false when outside the record. */
static bool dyn_bytes(const struct tep_record *rec,
		      const struct tep_format_field *f, const char **p,
		      size_t *len)
{
	uint32_t loc, off, n;

	if (f->size != 4)
		return false;
	memcpy(&loc, (const char *)rec->data + f->offset, 4);
	off = loc & 0xffff;
	n = loc >> 16;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += (uint32_t)f->offset + 4;
	if (off > (uint32_t)rec->size || n > (uint32_t)rec->size - off)
		return false;
	*p = (const char *)rec->data + off;
	*len = n;
	return true;
}

int tdat_ev_fields(struct tdat_lines *l, tdat_field_fn fn, void *ctx)
{
	const struct tep_record *rec = &l->cur;

	if (!l->cur_ev)
		return 0;
	for (struct tep_format_field *f = l->cur_ev->format.fields; f;
	     f = f->next) {
		struct tdat_field v = { .name = f->name };
		uint32_t end = (uint32_t)rec->size;
		int err;

		/* The field inside the record; "char buf[]" (size 0): the
		 * rest of it. */
		if (f->offset < 0 || f->size < 0 || (uint32_t)f->offset > end ||
		    (uint32_t)f->size > end - (uint32_t)f->offset)
			continue;
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			if (!(f->flags & TEP_FIELD_IS_STRING) ||
			    !dyn_bytes(rec, f, &v.str, &v.len))
				continue;
			v.is_str = true;
		} else if (f->flags & TEP_FIELD_IS_ARRAY) {
			if (!(f->flags & TEP_FIELD_IS_STRING))
				continue;
			v.is_str = true;
			v.str = (const char *)rec->data + f->offset;
			v.len = f->size ? (size_t)f->size :
					  (size_t)(end - (uint32_t)f->offset);
		} else {
			const uint8_t *p =
				(const uint8_t *)rec->data + f->offset;
			int64_t sv = 0;
			uint64_t uv = 0;

			switch (f->size) {
			case 1:
				uv = p[0];
				sv = (int8_t)p[0];
				break;
			case 2: {
				uint16_t x;

				memcpy(&x, p, 2);
				uv = x;
				sv = (int16_t)x;
				break;
			}
			case 4: {
				uint32_t x;

				memcpy(&x, p, 4);
				uv = x;
				sv = (int32_t)x;
				break;
			}
			case 8:
				memcpy(&uv, p, 8);
				sv = (int64_t)uv;
				break;
			default:
				continue;
			}
			v.is_signed = (f->flags & TEP_FIELD_IS_SIGNED) != 0;
			v.num = v.is_signed ? (uint64_t)sv : uv;
		}
		if (v.is_str)
			v.len = strnlen(v.str, v.len);
		err = fn(ctx, &v);
		if (err)
			return err;
	}
	return 0;
}

const char *tdat_lines_format(struct tdat_lines *l, const char *system,
			      const char *name, size_t *len)
{
	const struct tdat_file *f = l->r.f;
	size_t nl = strlen(name);

	for (size_t i = 0; i < f->nr_events; i++) {
		const struct tdat_blob *b = &f->events[i];
		const char *t = b->data, *k;

		if (strcmp(b->name, system))
			continue;
		/* "name: NAME\n" on the first line */
		k = memmem(t, b->len, "name: ", 6);
		if (!k || (size_t)(t + b->len - (k + 6)) < nl + 1 ||
		    memcmp(k + 6, name, nl) ||
		    (k[6 + nl] != '\n' && k[6 + nl] != '\r'))
			continue;
		*len = b->len;
		return t;
	}
	return NULL;
}

const char *tdat_lines_clock(const struct tdat_lines *l)
{
	return l->r.f->trace_clock;
}

uint32_t tdat_lines_nr_cpus(const struct tdat_lines *l)
{
	return l->r.f->nr_cpus;
}

void tdat_lines_close(struct tdat_lines *l)
{
	if (!l)
		return;
	trace_seq_destroy(&l->s);
	rd_close(&l->r);
	free(l);
}

/*
 * Each event of the trace.dat at @path in time order, as trace-cmd report
 * prints it, to @fn with its time; stops at @fn's error.
 */
int tdat_script_lines(const char *path, tdat_line_fn fn, void *ctx)
{
	struct tdat_lines *l;
	const char *text;
	uint64_t ts;
	size_t len;
	int err;

	err = tdat_lines_open(path, &l);
	if (err)
		return err;
	while ((err = tdat_lines_next(l, &ts, &text, &len)) > 0) {
		err = fn(ctx, ts, text, len);
		if (err)
			break;
	}
	tdat_lines_close(l);
	return err;
}

static int print_line(void *ctx, uint64_t ts, const char *text, size_t len)
{
	FILE *out = ctx;

	(void)ts;
	if (fwrite(text, 1, len, out) != len || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

int tdat_report(const char *path, FILE *out)
{
	struct tdat_lines *l;
	const char *text;
	uint64_t ts;
	size_t len;
	int err = tdat_lines_open(path, &l);

	if (err)
		return err;
	/* trace-cmd report's first line */
	fprintf(out, "cpus=%u\n", l->r.f->nr_cpus);
	while ((err = tdat_lines_next(l, &ts, &text, &len)) > 0) {
		if (fwrite(text, 1, len, out) != len || ferror(out)) {
			err = errno ? -errno : -EIO;
			break;
		}
	}
	tdat_lines_close(l);
	if (!err)
		err = out_err(out);
	return err;
}

int perfring_trace_dat_script(const char *path, FILE *out)
{
	int err = tdat_script_lines(path, print_line, out);

	if (!err)
		err = out_err(out);
	return err;
}

struct ev_count {
	int id;
	uint64_t n;
};

int perfring_trace_dat_stats(const char *path, FILE *out)
{
	struct ev_count *counts = NULL;
	size_t nr_counts = 0;
	uint64_t total = 0, lost_pages = 0, lost = 0, first = 0, last = 0;
	struct rd r;
	int err, cpu;

	err = rd_open(&r, path, true);
	if (err)
		return err;
	err = 0;
	while ((cpu = rd_pick(&r, &err)) >= 0) {
		struct cpu_it *c = &r.cpus[cpu];
		uint16_t id = 0;
		size_t i;

		if (c->ev.size >= 2)
			memcpy(&id, c->ev.data, 2);
		for (i = 0; i < nr_counts && counts[i].id != id; i++)
			;
		if (i == nr_counts) {
			struct ev_count *n =
				realloc(counts, (nr_counts + 1) * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				break;
			}
			counts = n;
			counts[nr_counts].id = id;
			counts[nr_counts++].n = 0;
		}
		counts[i].n++;
		if (!total)
			first = c->ev.ts;
		last = c->ev.ts;
		total++;
		cpu_next(c);
		if (c->err && !err)
			err = c->err;
	}
	fprintf(out, "trace.dat version %d, page size %u, %u CPUs, clock %s\n",
		r.f->version, r.f->page_size, r.f->nr_cpus,
		r.f->trace_clock[0] ? r.f->trace_clock : "(not recorded)");
	fprintf(out,
		"  cpu     events      pages        bytes  lost-pages  lost(stored)\n");
	for (uint32_t i = 0; i < r.f->nr_cpus; i++) {
		struct cpu_it *c = &r.cpus[i];

		fprintf(out,
			"  %3u %10" PRIu64 " %10" PRIu64 " %12" PRIu64
			" %11" PRIu64 " %13" PRIu64 "\n",
			i, c->events, c->pages, c->bytes, c->lost_pages,
			c->lost_stored);
		lost_pages += c->lost_pages;
		lost += c->lost_stored;
	}
	fprintf(out, "events by type:\n");
	for (size_t i = 0; i < nr_counts; i++) {
		struct tep_event *e = tep_find_event(r.tep, counts[i].id);

		fprintf(out, "  %-40s %10" PRIu64 "\n",
			e ? e->name : "(unknown id)", counts[i].n);
	}
	fprintf(out,
		"total: %" PRIu64 " events, %" PRIu64
		" pages marked with dropped events (%" PRIu64
		" dropped events counted)\n",
		total, lost_pages, lost);
	if (total)
		fprintf(out,
			"time: %" PRIu64 ".%09" PRIu64 " .. %" PRIu64
			".%09" PRIu64 " (%.6f s)\n",
			first / 1000000000, first % 1000000000,
			last / 1000000000, last % 1000000000,
			(double)(last - first) / 1e9);
	free(counts);
	if (!err)
		err = out_err(out);
	rd_close(&r);
	return err;
}

int perfring_trace_dat_dump(const char *path, FILE *out)
{
	struct rd r;
	int err = 0;

	err = rd_open(&r, path, true);
	if (err)
		return err;
	fprintf(out,
		"trace.dat version %d, little endian, long %d, page size %u\n",
		r.f->version, r.f->long_size, r.f->page_size);
	fprintf(out, "header_page %zu bytes, header_event %zu bytes\n",
		r.f->header_page.len, r.f->header_event.len);
	fprintf(out, "ftrace formats %zu, event formats %zu\n", r.f->nr_ftrace,
		r.f->nr_events);
	fprintf(out,
		"kallsyms %zu bytes, printk formats %zu bytes, saved cmdlines %zu bytes\n",
		r.f->kallsyms.len, r.f->printk.len, r.f->cmdlines.len);
	fprintf(out,
		"options at %" PRIu64 ", clock %s, flyrecord at %" PRIu64
		", %u CPUs\n",
		r.f->options_offset,
		r.f->trace_clock[0] ? r.f->trace_clock : "-", r.f->data_offset,
		r.f->nr_cpus);
	for (uint32_t i = 0; i < r.f->nr_cpus && !err; i++) {
		struct cpu_it *c = &r.cpus[i];
		uint64_t last_page = UINT64_MAX;

		fprintf(out, "cpu%u: %" PRIu64 " bytes at %" PRIu64 "\n", i,
			r.f->cpus[i].size, r.f->cpus[i].offset);
		while (cpu_next(c) > 0) {
			uint16_t id = 0;
			struct tep_event *e;

			if (c->page_off != last_page) {
				last_page = c->page_off;
				fprintf(out,
					"  page at %" PRIu64 ": ts %" PRIu64
					" commit %u%s%s\n",
					r.f->cpus[i].offset + c->page_off,
					c->pi.time_stamp, c->pi.commit,
					c->pi.missed ? " MISSED_EVENTS" : "",
					c->pi.missed_stored ? " MISSED_STORED" :
							      "");
				if (c->pi.missed_stored)
					fprintf(out,
						"    %" PRIu64
						" events dropped before this page\n",
						c->pi.missed_count);
			}
			if (c->ev.size >= 2)
				memcpy(&id, c->ev.data, 2);
			e = tep_find_event(r.tep, id);
			fprintf(out,
				"    %" PRIu64 " ts %" PRIu64
				" size %u type %u %s\n",
				r.f->cpus[i].offset + c->page_off +
					SUBBUF_HDR_SIZE + c->ev.offset,
				c->ev.ts, c->ev.size, id, e ? e->name : "?");
			if (ferror(out))
				break;
		}
		err = c->err;
	}
	if (!err)
		err = out_err(out);
	rd_close(&r);
	return err;
}
