// SPDX-License-Identifier: MIT
/*
 * perfring_script(): perf script's default output, after perf 6.1's
 * builtin-script.c (process_event(), perf_sample__fprintf_start(),
 * sample__fprintf_sym(), sample__fprintf_callchain()):
 *
 *   comm(%16s, or %s with callchains) tid(%5d) [cpu(%03d)] sec.usec(%5lu.%06lu):
 *   period(%10lu) event(%*s, width of the longest name):  ip(%16lx) sym+0xoff (dso)
 *
 * Fields by event type as perf's defaults (tracepoints: comm tid cpu time
 * event trace; the others: comm tid cpu time period event ip sym symoff
 * dso), each dropped when the first event of its type does not sample it.
 * Callchains: one "\t%16lx sym+0xoff (dso)" line per entry (user entries
 * show the address in the object), context markers switch between kernel
 * and user, at most 127 entries, a blank line after.
 *
 * This file reads the records and filters the samples; script_internal.h
 * lists the others.  The hot path allocates nothing: records come from the reader's buffer,
 * text goes into a 1 MiB buffer written with fwrite(), numbers are
 * formatted by hand, threads and symbols are found through caches and
 * sorted arrays, tracepoints through compiled formats (tpfmt.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "../machine/inline.h"
#include "../machine/srcline.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tpfmt.h"
#include "../tracepoint/tracedat_lines.h"
#include "../machine/filter.h"
#include "../format/header_print.h"
#include "dump.h"
#include "../format/sample_read.h"
#include "script_internal.h"
#include "reader_machine.h"

struct perfring_data {
	struct script *sc;
	bool ran;
};

/* The trace.dat's listing, pulled one event ahead. */
struct merged {
	struct tdat_lines *lines;
	bool have; /* ts/text/len: the next event, not printed yet */
	uint64_t ts;
	const char *text;
	size_t len;
	int err; /* the trace.dat's damage (-EBADMSG), at its end */
};

static void merged_pull(struct merged *m)
{
	int r = tdat_lines_next(m->lines, &m->ts, &m->text, &m->len);

	m->have = r > 0;
	if (r < 0)
		m->err = r;
}

/* The trace.dat's events before @ts (every one left: UINT64_MAX) out. */
void script_merged_put_until(struct script *sc, uint64_t ts)
{
	struct merged *m = sc->merged;

	while (m && m->have && m->ts < ts) {
		for (size_t done = 0; done < m->len;) {
			size_t n = m->len - done < OB_SLACK ? m->len - done :
							      OB_SLACK;

			ob_room(&sc->ob, n);
			memcpy(sc->ob.p + sc->ob.len, m->text + done, n);
			sc->ob.len += n;
			done += n;
		}
		ob_line_done(&sc->ob);
		merged_pull(m);
	}
}

static void merged_free(struct merged *m)
{
	if (!m)
		return;
	tdat_lines_close(m->lines);
	free(m);
}

/* The sample for perfring_data_run()'s callback. */
static void fill_frame(struct perfring_frame *fr, const struct addr_loc *al,
		       uint64_t ip)
{
	fr->ip = ip;
	fr->addr = al->map && !al->kernel ? al->addr : ip;
	fr->sym = al->sym ? al->sym->name : NULL;
	fr->sym_off = al->sym ? al->sym_off : 0;
	fr->dso = al->map && al->dso ? al->dso->name : NULL;
	fr->kernel = al->kernel;
}

static void deliver(struct script *sc, const struct psample *s,
		    struct thread *t)
{
	const struct attr_info *ai = s->ai;
	struct perfring_sample ps = { .sz = sizeof(ps) };
	bool has_tid = ai->sample_type & PERF_SAMPLE_TID;
	struct addr_loc al;
	uint32_t n = 0;
	bool stopped = false; /* --stop-bt */

	ps.event = ai->a->name ? ai->a->name : "[unknown]";
	ps.event_index = ai->a->index;
	ps.type = ai->type;
	ps.config = ai->a->attr.config;
	ps.id = s->id;
	ps.time = s->time;
	ps.period = (ai->sample_type & PERF_SAMPLE_PERIOD) ? s->period :
							     ai->sample_period;
	ps.addr = s->addr;
	ps.pid = has_tid ? (int32_t)s->pid : -1;
	ps.tid = has_tid ? (int32_t)s->tid : -1;
	ps.cpu = s->cpu;
	ps.comm = t ? t->comm : ":-1";
	ps.misc = s->misc;
	ps.raw = s->raw;
	ps.raw_size = s->raw_size;
	machine_resolve(&sc->m, t, s->misc & PERF_RECORD_MISC_CPUMODE_MASK,
			s->ip, true, &al);
	fill_frame(&ps.ip, &al, s->ip);
	if (!sc->o.hide_callchain && s->callchain &&
	    callchain_valid(s->callchain, s->nr_callchain, MAX_STACK)) {
		uint8_t cpumode = PERF_RECORD_MISC_USER;

		for (uint64_t i = 0; i < s->nr_callchain && n < sc->max_stack;
		     i++) {
			uint64_t ip = s->callchain[i];

			if (ip >= PERF_CONTEXT_MAX) {
				cpumode = callchain_context_cpumode(ip);
				continue;
			}
			machine_resolve(&sc->m, t, cpumode, ip, true, &al);
			fill_frame(&sc->frames[n++], &al, ip);
			stopped = sc->stop_bt && al.sym &&
				  script_stop_bt_has(sc, al.sym->name);
			if (stopped)
				break;
		}
	}
	/* --call-graph dwarf: the user part, unwound from the stack copy */
	if (!sc->o.hide_callchain && !stopped && n < sc->max_stack) {
		uint64_t user[UNWIND_MAX_FRAMES];
		unsigned nu = unwind_user_stack(&sc->m, t, s->sample, user,
						sc->max_stack - n);

		for (unsigned i = 0; i < nu && n < sc->max_stack; i++) {
			machine_resolve(&sc->m, t, PERF_RECORD_MISC_USER,
					user[i], true, &al);
			fill_frame(&sc->frames[n++], &al, user[i]);
			if (sc->stop_bt && al.sym &&
			    script_stop_bt_has(sc, al.sym->name))
				break;
		}
	}
	ps.callchain = n ? sc->frames : NULL;
	ps.nr_callchain = n;
	sc->cur = s;
	sc->fn_ret = sc->fn(sc->reader, &ps, sc->fn_ctx);
	sc->cur = NULL;
	/* the reader stops on a negative return only */
	if (sc->fn_ret && !sc->stop)
		sc->stop = sc->fn_ret < 0 ? sc->fn_ret : -ECANCELED;
}

/* perf script's process_sample_event() filters; *@tp the thread found. */
static bool keep_sample(struct script *sc, const struct psample *s,
			struct thread **tp)
{
	const struct sample_filter *fi = &sc->filt;
	bool has_tid = s->ai->sample_type & PERF_SAMPLE_TID;
	struct thread *t;
	struct addr_loc al;

	if (!filter_time(fi, s->time) || !filter_cpu(fi, s->cpu))
		return false;
	if (!fi->any_thread && !sc->filter_loc && !sc->fn)
		return true;
	if (!sc->m.host_decided)
		machine_set_host(&sc->m, sc->host);
	t = machine_findnew_thread(&sc->m, has_tid ? (int32_t)s->pid : -1,
				   has_tid ? (int32_t)s->tid : -1);
	*tp = t;
	if (!filter_thread(fi, t))
		return false;
	if (!sc->filter_loc)
		return true;
	machine_resolve(&sc->m, t, s->misc & PERF_RECORD_MISC_CPUMODE_MASK,
			s->ip, true, &al);
	return filter_location(fi, &al, s->ip);
}

static void emit(struct script *sc, const struct psample *ps, struct thread *t)
{
	if (sc->fn)
		deliver(sc, ps, t);
	else
		script_print_sample(sc, ps);
}

struct read_emit {
	struct script *sc;
	struct psample *ps;
	struct thread *t;
};

/* One read value of a PERF_SAMPLE_READ sample, as its event's sample. */
static int emit_value(void *ctx, const struct prd_attr *a, uint64_t id,
		      uint64_t delta)
{
	struct read_emit *re = ctx;
	struct script *sc = re->sc;
	struct psample *ps = re->ps;

	ps->ai = script_attr_info(sc, a);
	if (!ps->ai)
		return -ENOMEM;
	if ((ps->ai->fields & F_TRACE) && ps->ai->type == PERF_TYPE_TRACEPOINT)
		script_ensure_tp(sc);
	ps->id = id;
	ps->period = delta;
	emit(sc, ps, re->t);
	return sc->stop;
}

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct script *sc = ctx;
	const struct perf_event_header *h = ev->hdr;
	const struct prd_sample *s = ev->sample;
	struct thread *t = NULL;
	struct psample ps;
	int err;

	if (sc->o.header && h->type == PRD_REC_HEADER_FEATURE) {
		ob_flush(&sc->ob); /* the pipe format's features, in order */
		header_print_feature_record(f, ev, sc->o.show_info, sc->out);
	}
	if (h->type != PERF_RECORD_SAMPLE) {
		bool show = !sc->fn && script_side_shown(sc, h->type);

		if (h->type == PRD_REC_FINISHED_ROUND &&
		    sc->o.show_round_events && !sc->fn) {
			/* process_finished_round_event(): the name alone */
			ob_room(&sc->ob, 32);
			ob_write(&sc->ob, "PERF_RECORD_FINISHED_ROUND\n", 27);
			ob_line_done(&sc->ob);
		}

		/* perf prints an EXIT before the thread goes. */
		if (show && h->type == PERF_RECORD_EXIT)
			script_side_print(sc, f, ev);
		script_side_one(sc, ev->rec);
		if (show && h->type != PERF_RECORD_EXIT)
			script_side_print(sc, f, ev);
		return sc->stop;
	}
	if (!s || !s->attr)
		return 0;
	if (!sc->setup) {
		err = script_setup(sc);
		if (err)
			return err;
	}
	ps.ai = script_attr_info(sc, s->attr);
	if (!ps.ai)
		return -ENOMEM;
	if ((ps.ai->fields & F_TRACE) && ps.ai->type == PERF_TYPE_TRACEPOINT)
		script_ensure_tp(sc);
	ps.misc = h->misc;
	ps.pid = s->pid;
	ps.tid = s->tid;
	ps.cpu = s->cpu;
	ps.raw_size = s->raw_size;
	ps.time = s->time;
	ps.period = s->period;
	ps.ip = s->ip;
	ps.addr = s->addr;
	ps.id = s->id;
	ps.nr_callchain = s->nr_callchain;
	ps.callchain = s->callchain;
	ps.raw = s->raw;
	ps.sample = s;
	if (!keep_sample(sc, &ps, &t))
		return 0;
	/* perf's deliver_sample_value(): a sample per read value (each
	 * member of a leader-sampled group, :S) */
	if (s->attr->attr.sample_type & PERF_SAMPLE_READ) {
		struct read_emit re = { sc, &ps, t };

		return sread_each(&sc->rd, f, s, emit_value, &re);
	}
	emit(sc, &ps, t);
	return sc->stop;
}

static void script_free(struct script *sc)
{
	if (!sc)
		return;
	if (sc->f)
		prd_close(sc->f);
	machine_exit(&sc->m);
	merged_free(sc->merged);
	tpfmt_free(sc->tp);
	for (uint32_t i = 0; i < sc->nr_ai; i++) {
		struct attr_info *ai = sc->ai[i], *n;

		for (; ai; ai = n) {
			n = ai->next_old;
			free(ai->evname);
			free(ai);
		}
	}
	free(sc->ai);
	sread_free(&sc->rd);
	free(sc->ob.p);
	filter_free(&sc->filt);
	if (sc->stop_bt) {
		for (char **p = sc->stop_bt; *p; p++)
			free(*p);
		free(sc->stop_bt);
	}
	inlines_free(sc->inl);
	srclines_free(sc->src);
	free(sc);
}

/* "a,b" into a NULL-terminated array of its names (perf's strlist). */
static int split_names(const char *list, char ***out)
{
	size_t n = 2;
	char **v;
	const char *p = list;

	for (const char *c = list; *c; c++)
		n += *c == ',';
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len) {
			v[n] = strndup(p, len);
			if (!v[n]) {
				for (size_t i = 0; i < n; i++)
					free(v[i]);
				free(v);
				return -ENOMEM;
			}
			n++;
		}
		p += len;
		p += *p == ',';
	}
	*out = v;
	return 0;
}

/* The state of a script or a reader, with the file open. */
static int script_new(const struct perfring_script_opts *opts, FILE *out,
		      struct script **out_sc)
{
	struct script *sc;
	int err;

	if (!opts || !OPTS_VALID(opts) ||
	    opts->sz < offsetof(struct perfring_script_opts, fields))
		return -EINVAL;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	OPTS_COPY(&sc->o, opts);
	sc->out = out;
	for (int t = 0; t < OT_MAX; t++)
		sc->ot[t].fields = t == OT_TRACE ? DEF_TRACE : DEF_SAMPLE;
	err = machine_init(&sc->m);
	if (err) {
		free(sc);
		return err;
	}
	sc->m.dsos.symfs = OPTS_GET(opts, symfs, NULL);
	sc->m.dsos.no_demangle = sc->o.no_demangle;
	if (sc->o.fields && *sc->o.fields)
		err = script_parse_fields(sc, sc->o.fields);
	if (!err)
		err = filter_set_pids(&sc->filt, sc->o.pid_list);
	if (!err)
		err = filter_set_tids(&sc->filt, sc->o.tid_list);
	if (!err)
		err = filter_set_comms(&sc->filt, sc->o.comm_list);
	if (!err)
		err = filter_set_cpus(&sc->filt, sc->o.cpu_list);
	if (!err)
		err = filter_set_time(&sc->filt, sc->o.time_range);
	if (!err)
		err = filter_set_syms(&sc->filt, sc->o.symbols);
	if (!err)
		err = filter_set_dsos(&sc->filt, sc->o.dsos);
	sc->filter_loc = sc->filt.syms || sc->filt.dsos;
	if (!err && sc->o.stop_bt && *sc->o.stop_bt)
		err = split_names(sc->o.stop_bt, &sc->stop_bt);
	/* the unwinder's buffer holds MAX_STACK frames (perf: any N, but a
	 * chain has no more than the kernel's 127) */
	sc->max_stack = sc->o.set_max_stack && sc->o.max_stack < MAX_STACK ?
				sc->o.max_stack :
				MAX_STACK;
	if (!err)
		err = ob_init(&sc->ob, out);
	if (!err && sc->o.trace_dat) {
		sc->merged = calloc(1, sizeof(*sc->merged));
		err = sc->merged ? tdat_lines_open(sc->o.trace_dat,
						   &sc->merged->lines) :
				   -ENOMEM;
		if (!err)
			merged_pull(sc->merged);
		if (err)
			pr_err("script: %s: %s (--no-trace-dat: the perf.data alone)",
			       sc->o.trace_dat, strerror(-err));
	}
	if (!err)
		err = prd_open(sc->o.input ? sc->o.input : "perf.data", &sc->f);
	if (!err)
		err = machine_use_build_ids(&sc->m, sc->f);
	if (!err && sc->o.reltime && sc->o.time_range) {
		/* perf_time__parse_for_ranges_reltime(): both ends (an open
		 * one too) from the file's first sample time */
		size_t len;
		const unsigned char *st =
			prd_feature(sc->f, PD_FEAT_SAMPLE_TIME, &len);
		uint64_t first = 0;

		if (st && len >= 8)
			memcpy(&first, st, 8);
		sc->filt.time_start += first;
		sc->filt.time_end += first;
	}
	if (!err && sc->filt.cpus) {
		/* perf_session__cpu_bitmap(): every event must have it */
		for (uint32_t i = 0; i < prd_nr_attrs(sc->f) && !err; i++) {
			const struct prd_attr *a = prd_attr(sc->f, i);

			if (a && !(a->attr.sample_type & PERF_SAMPLE_CPU)) {
				pr_err("--cpu: the file's events do not sample the CPU");
				err = -EINVAL;
			}
		}
	}
	if (err) {
		script_free(sc);
		return err;
	}
	*out_sc = sc;
	return 0;
}

PERFRING_API int perfring_script(const struct perfring_script_opts *opts,
				 FILE *out)
{
	struct script *sc;
	int err;

	if (!out)
		return -EINVAL;
	err = script_new(opts, out, &sc);
	if (err)
		return err;
	if (sc->o.header || sc->o.header_only) {
		err = header_print(sc->f, sc->o.show_info, out);
		if (err || sc->o.header_only) {
			script_free(sc);
			return err;
		}
	}
	/* perf script --show-round-events turns the time ordering off */
	err = prd_process(sc->f, !sc->o.show_round_events, on_event, sc);
	if (sc->stop && (!err || err == sc->stop))
		err = sc->stop;
	if (!err && sc->merged) {
		script_merged_put_until(sc, UINT64_MAX);
		err = sc->merged->err;
		if (err)
			pr_err("script: %s: %s (the events around it are printed)",
			       sc->o.trace_dat, strerror(-err));
	}
	ob_flush(&sc->ob);
	if (!err && sc->ob.err)
		err = sc->ob.err;
	if (!err && fflush(out))
		err = -errno;
	script_free(sc);
	return err;
}

/* ---- the reader API --------------------------------------------------- */

PERFRING_API int perfring_data_open(const struct perfring_script_opts *opts,
				    struct perfring_data **out)
{
	struct perfring_data *r;
	struct perfring_script_opts o;
	int err;

	if (!opts || !out || !OPTS_VALID(opts) ||
	    opts->sz < offsetof(struct perfring_script_opts, fields))
		return -EINVAL;
	/* Text-only settings do not apply: the fields, the trace.dat. */
	OPTS_COPY(&o, opts);
	o.sz = sizeof(o);
	o.fields = NULL;
	o.trace_dat = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	err = script_new(&o, NULL, &r->sc);
	if (err) {
		free(r);
		return err;
	}
	r->sc->reader = r;
	*out = r;
	return 0;
}

PERFRING_API int perfring_data_run(struct perfring_data *r,
				   perfring_sample_fn fn, void *ctx)
{
	struct script *sc;
	int err;

	if (!r || !fn)
		return -EINVAL;
	if (r->ran)
		return -EALREADY;
	r->ran = true;
	sc = r->sc;
	sc->fn = fn;
	sc->fn_ctx = ctx;
	err = prd_process(sc->f, true, on_event, sc);
	if (sc->fn_ret)
		return sc->fn_ret;
	if (sc->stop && (!err || err == sc->stop))
		err = sc->stop;
	return err;
}

PERFRING_API int perfring_data_field(struct perfring_data *r,
				     const struct perfring_sample *s,
				     const char *name, uint64_t *num, char *buf,
				     size_t len)
{
	struct script *sc;

	if (!r || !s || !name)
		return -EINVAL;
	sc = r->sc;
	if (!sc->cur || s->raw != sc->cur->raw || !s->raw ||
	    s->type != PERF_TYPE_TRACEPOINT)
		return -ENOENT;
	script_ensure_tp(sc);
	if (!sc->tp)
		return -ENOENT;
	return tpfmt_field(sc->tp, s->raw, s->raw_size, name, num, buf, len);
}

struct machine *reader_machine(struct perfring_data *r)
{
	return &r->sc->m;
}

PERFRING_API void perfring_data_close(struct perfring_data *r)
{
	if (!r)
		return;
	script_free(r->sc);
	free(r);
}
