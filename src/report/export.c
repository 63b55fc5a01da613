// SPDX-License-Identifier: MIT
/*
 * `perfring export`: a perf.data as a Chrome trace-event JSON file, as
 * collapsed stacks for flame graph tools, as a flame graph SVG, or as a
 * pprof profile (built by pprof.c from the samples handed to it).
 *
 * chrome: the JSON object format ({"traceEvents":[...]}), streamed out in
 * time order as the records come (perf's ordered processing).  Every
 * sample is an instant ("ph":"i", thread scope) on its thread's track,
 * named by its symbol (tracepoints and unresolved addresses: the event
 * name).  sched:sched_switch samples also make "X" slices: a thread runs
 * on a CPU from the switch that names it next_pid until the switch that
 * names it prev_pid there (the idle task, tid 0, gets none); slices still
 * open at the end close at the last time seen.  process_name/thread_name
 * metadata is written when a track is first used and again at the end if
 * the name changed (exec).  Times are perf's nanoseconds as floating
 * microseconds.
 *
 * Call stacks (chrome): each sample's frames are interned root first in
 * a frame table (parent id, category, name) whose ids are the stackFrames
 * of the output; the instant carries its stack's id ("sf") and a line of
 * the top-level "samples" array (what speedscope and the legacy trace
 * viewer draw) goes to a temporary file, copied in after traceEvents.  The
 * sched_switch slices are also drawn on one track per CPU (threads of a
 * made-up "CPUs" process), and counting events (not the clocks, not
 * tracepoints) make "C" counter events per process: the running total of
 * their periods.
 *
 * folded: "comm;root;...;leaf count" per distinct stack, sorted, as
 * stackcollapse-perf.pl writes it (kernel frames with "_[k]", unknown
 * symbols as "[dso]" or "[unknown]"); the counts add up to the samples.
 * svg: the same stacks drawn as a flame graph by the flamegraph.pl
 * algorithm (sorted stacks merged into frames), with an inline script for
 * details on hover and zoom on click.  Stacks are aggregated in a hash
 * table keyed by the stack string; nothing else grows with the input.
 *
 * sched_switch fields come from the event's format in the TRACING_DATA
 * (parsed here; only offsets and sizes are needed); without one (pipe
 * input, whose tracing data the reader keeps to itself) the layout every
 * 64-bit kernel since 4.x uses is assumed, checked against the record size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export_internal.h"

/* ---- text ------------------------------------------------------------ */

static const char hexd[] = "0123456789abcdef";

void export_json_cstr(struct outbuf *ob, const char *s)
{
	ob_json_str(ob, s, strlen(s));
}

/* XML character data or attribute value: &<>"' escaped, control
 * characters XML forbids as '?', bytes that are not UTF-8 as character
 * references to the Latin-1 characters they would be. */
void export_xml_str(struct outbuf *ob, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t k;

		switch (c) {
		case '&':
			ob_puts(ob, "&amp;");
			i++;
			continue;
		case '<':
			ob_puts(ob, "&lt;");
			i++;
			continue;
		case '>':
			ob_puts(ob, "&gt;");
			i++;
			continue;
		case '"':
			ob_puts(ob, "&quot;");
			i++;
			continue;
		case '\'':
			ob_puts(ob, "&apos;");
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			ob_putc(ob, '?');
			i++;
			continue;
		}
		if (c < 0x80) {
			ob_putc(ob, (char)c);
			i++;
			continue;
		}
		k = ob_utf8_seq(p + i, n - i);
		if (k) {
			ob_write(ob, p + i, k);
			i += k;
			continue;
		}
		ob_room(ob, 6);
		memcpy(ob->p + ob->len, "&#x", 3);
		ob->p[ob->len + 3] = hexd[c >> 4];
		ob->p[ob->len + 4] = hexd[c & 15];
		ob->p[ob->len + 5] = ';';
		ob->len += 6;
		i++;
	}
}

/* @v with @dec decimals (0..6), without the locale's say. */
void export_put_fixed(struct outbuf *ob, double v, int dec)
{
	static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	uint64_t iv, ip, fp, div;
	char buf[24], *s;

	if (dec < 0)
		dec = 0;
	if (dec > 6)
		dec = 6;
	if (!(v == v))
		v = 0;
	if (v < 0) {
		ob_putc(ob, '-');
		v = -v;
	}
	if (v > 1e12)
		v = 1e12;
	iv = (uint64_t)(v * scale[dec] + 0.5);
	div = (uint64_t)scale[dec];
	ip = iv / div;
	fp = iv % div;
	ob_u64(ob, ip, 0, ' ');
	if (!dec)
		return;
	s = ob_utoa(buf + sizeof(buf), fp);
	ob_putc(ob, '.');
	for (int i = (int)(buf + sizeof(buf) - s); i < dec; i++)
		ob_putc(ob, '0');
	ob_write(ob, s, (size_t)(buf + sizeof(buf) - s));
}

/* perf time (ns) as microseconds with three decimals. */
void export_put_us(struct outbuf *ob, uint64_t ns)
{
	char buf[4];

	ob_u64(ob, ns / 1000, 0, ' ');
	buf[0] = '.';
	buf[1] = (char)('0' + ns % 1000 / 100);
	buf[2] = (char)('0' + ns % 100 / 10);
	buf[3] = (char)('0' + ns % 10);
	ob_write(ob, buf, 4);
}

/* ---- driver ---------------------------------------------------------- */

static void export_offcpu_setup(struct exp *e);

static void first_sample(struct exp *e)
{
	const void *td;
	size_t len;

	if (prd_is_pipe(e->f))
		export_offcpu_setup(e); /* its attrs came as records */

	machine_set_host(&e->m, file_recorded_here(e->f));
	td = prd_feature(e->f, PRD_FEAT_TRACING_DATA, &len);
	if (td)
		export_parse_sched_switch(&e->ss, td, len);
	if (!e->ss.have)
		export_ss_default(&e->ss);
}

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct exp *e = ctx;
	int err;

	(void)f;
	if (ev->sample && ev->sample->time != UINT64_MAX &&
	    !offcpu_summed_time(ev->sample->time)) {
		/* The trace.dat's events before it go first. */
		err = export_td_until(e, ev->sample->time);
		if (err)
			return err;
		if (ev->sample->time > e->last_time)
			e->last_time = ev->sample->time;
	}
	if (ev->hdr->type != PERF_RECORD_SAMPLE)
		return machine_process(&e->m, ev->rec);
	if (!ev->sample)
		return 0;
	if (!e->machine_ok) {
		e->machine_ok = true;
		first_sample(e);
	}
	if (e->event && e->fmt != FMT_FOLDED && e->fmt != FMT_SVG &&
	    (!ev->sample->attr || !ev->sample->attr->name ||
	     strcmp(ev->sample->attr->name, e->event)))
		return 0; /* -e: that event's samples only */
	if (e->fmt == FMT_PPROF && !e->event &&
	    export_sample_offcpu(ev->sample) == OFFCPU_WAKER)
		return 0; /* the blocked time again, at the wakers' stacks */
	if (e->fmt == FMT_PPROF) {
		struct thread *t =
			machine_findnew_thread(&e->m, (int32_t)ev->sample->pid,
					       (int32_t)ev->sample->tid);

		err = t ? pprof_add(e->pprof, &e->m, t, ev) : -ENOMEM;
	} else if (e->fmt == FMT_CHROME) {
		err = export_chrome_sample(e, ev);
	} else {
		err = export_stack_sample(e, ev);
	}
	if (!err && e->ob.err)
		err = e->ob.err;
	return err;
}

static void exp_free(struct exp *e)
{
	struct tstate *ts, *n;

	for (ts = e->tstates; ts; ts = n) {
		n = ts->next;
		free(ts);
	}
	for (size_t i = 0; e->tab && i <= e->tab_mask; i++)
		free(e->tab[i].key);
	free(e->tab);
	free(e->key);
	free(e->locs);
	free(e->cpus);
	free(e->ob.p);
	itab_free(&e->frames);
	itab_free(&e->counters);
	free(e->counter_val.v);
	if (e->samples_tmp)
		fclose(e->samples_tmp);
	free(e->sob.p);
	pprof_free(e->pprof);
	tdat_lines_close(e->td);
}

/* What the file's off-CPU events change: the wall-time svg, counts in
 * ns; an -e that names no event of the file is told. */
static void export_offcpu_setup(struct exp *e)
{
	bool offcpu = false, found = !e->event;

	for (uint32_t i = 0; i < prd_nr_attrs(e->f); i++) {
		const struct prd_attr *a = prd_attr(e->f, i);

		offcpu |= offcpu_kind_of(a->attr.type, a->attr.config,
					 a->name) == OFFCPU_BLOCKED;
		found |= e->event && a->name && !strcmp(a->name, e->event);
	}
	if (!found && !prd_is_pipe(e->f))
		pr_warn("export: -e %s: the file has no such event", e->event);
	e->wall = e->fmt == FMT_SVG && offcpu && !e->event;
	e->ns = e->wall || e->wakers ||
		(e->event &&
		 offcpu_kind_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT,
				e->event));
}

/* The perf.data (e->f, may be NULL) and the trace.dat (e->td, may be
 * NULL) through the chosen format.  Returns as perfring_export(). */
static int export_run(struct exp *e, const char *in, FILE *out)
{
	int err = 0, perr = 0, oerr = 0;

	if (e->fmt == FMT_CHROME)
		export_chrome_begin(e);
	if (e->fmt == FMT_PPROF) {
		err = pprof_new(e->f, &e->pprof);
		if (err)
			return err;
	}
	if (e->f)
		perr = prd_process(e->f, true, on_event, e);
	/* Damage: what came before it is still written out, completely. */
	if (perr && perr != -EBADMSG)
		err = perr;
	/* The trace.dat's events after the perf.data's last. */
	if (!err) {
		err = export_td_until(e, UINT64_MAX);
		if (!err && e->ob.err)
			err = e->ob.err;
	}
	if (!err && e->td_err == -EBADMSG)
		perr = e->td_err;
	else if (!err && e->td_err)
		err = e->td_err;
	if (!err || (e->fmt == FMT_CHROME && err != -ENOMEM)) {
		if (e->fmt == FMT_CHROME)
			export_chrome_end(e);
		else if (e->fmt == FMT_FOLDED)
			oerr = export_folded_out(e);
		else if (e->fmt == FMT_PPROF)
			oerr = pprof_write(e->pprof, &e->m, in, out);
		else
			oerr = export_svg_out(e);
		if (!err)
			err = oerr;
	}
	ob_flush(&e->ob);
	if (!err && e->ob.err)
		err = e->ob.err;
	if (fflush(out) && !err)
		err = errno ? -errno : -EIO;
	if (!err && perr == -EBADMSG)
		err = perr;
	if (err == -EPIPE || (e->ob.err && err == e->ob.err))
		pr_err("export: writing the output: %s", strerror(-err));
	return err;
}

/* --from clickhouse=URL: a fleet's stacks (fleet_report.c) as folded
 * stacks or a flame graph, the samples as pprof. */
static int stack_in(void *ctx, const char *key, size_t len, uint64_t count)
{
	return export_tab_add(ctx, key, len, false, count, OFFCPU_NONE);
}

static int export_from(struct exp *e, const struct perfring_export_opts *o,
		       FILE *out)
{
	const char *from = OPTS_GET(o, from, NULL),
		   *where = OPTS_GET(o, where, NULL);
	int err;

	if (e->fmt == FMT_CHROME) {
		pr_err("export --from %s: folded, svg or pprof (a store keeps no timeline)",
		       from);
		return -EINVAL;
	}
	if (e->fmt == FMT_PPROF)
		return fleet_export_pprof(from, where, out);
	if (ob_init(&e->ob, out))
		return -ENOMEM;
	err = fleet_export_stacks(from, where, stack_in, e);
	if (!err)
		err = e->fmt == FMT_FOLDED ? export_folded_out(e) :
					     export_svg_out(e);
	ob_flush(&e->ob);
	if (!err && e->ob.err)
		err = e->ob.err;
	exp_free(e);
	return err;
}

PERFRING_API int perfring_export(const struct perfring_export_opts *opts,
				 FILE *out)
{
	struct exp e;
	const char *in, *fmt, *tdat;
	bool in_tdat;
	int err;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	in = OPTS_GET(opts, input, NULL);
	fmt = OPTS_GET(opts, format, NULL);
	tdat = OPTS_GET(opts, trace_dat, NULL);
	e.title = OPTS_GET(opts, title, NULL);
	e.width = OPTS_GET(opts, width, 0);
	e.event = OPTS_GET(opts, event, NULL);
	e.wakers = OPTS_GET(opts, wakers, false);
	if (!in || !*in)
		in = "perf.data";
	if (!fmt || !strcmp(fmt, "chrome") || !strcmp(fmt, "json")) {
		e.fmt = FMT_CHROME;
	} else if (!strcmp(fmt, "folded") || !strcmp(fmt, "collapsed")) {
		e.fmt = FMT_FOLDED;
	} else if (!strcmp(fmt, "svg") || !strcmp(fmt, "flamegraph")) {
		e.fmt = FMT_SVG;
	} else if (!strcmp(fmt, "pprof")) {
		e.fmt = FMT_PPROF;
	} else {
		pr_err("export: unknown format '%s' (chrome, folded, svg or pprof)",
		       fmt);
		return -EINVAL;
	}
	if (e.wakers && (e.fmt != FMT_FOLDED || e.event)) {
		pr_err("export: --wakers is a folded export of its own (not with -e)");
		return -EINVAL;
	}
	if (e.width && (e.width < 100 || e.width > 1000000)) {
		pr_err("export: width %u is not between 100 and 1000000 pixels",
		       e.width);
		return -EINVAL;
	}
	if (OPTS_GET(opts, from, NULL))
		return export_from(&e, opts, out);
	/* A trace.dat as the input: its events alone. */
	in_tdat = strcmp(in, "-") && tdat_probe(in) == 1;
	if (in_tdat) {
		tdat = in;
		in = NULL;
	}
	if (tdat && e.fmt != FMT_CHROME) {
		pr_err("export: %s: a trace.dat has no call stacks: only -f chrome takes it%s",
		       tdat,
		       in_tdat ? "" : " (--no-trace-dat: the perf.data alone)");
		return -EINVAL;
	}
	if (ob_init(&e.ob, out))
		return -ENOMEM;
	err = machine_init(&e.m);
	if (err) {
		free(e.ob.p);
		return err;
	}
	if (in)
		err = prd_open(in, &e.f);
	if (in && !err)
		err = machine_use_build_ids(&e.m, e.f);
	if (in && !err)
		export_offcpu_setup(&e);
	if (!err && tdat)
		err = export_td_open(&e, tdat);
	if (!err)
		err = export_run(&e, in ? in : tdat, out);
	if (e.f)
		prd_close(e.f);
	machine_exit(&e.m);
	exp_free(&e);
	return err;
}
