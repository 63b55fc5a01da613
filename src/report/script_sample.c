// SPDX-License-Identifier: MIT
/*
 * A sample's line as perf script prints it (the hot path: text into the
 * output buffer, numbers by hand): comm, tid, cpu, time, event, the
 * tracepoint's text or ip, symbol and object, then the callchain, one
 * line per entry (inlined frames and source lines with -F srcline).
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

/* ---- output -------------------------------------------------------------- */

static void script_put_sym(struct outbuf *ob, const struct addr_loc *al,
			   unsigned fl)
{
	ob_putc(ob, ' ');
	if (!al->sym) {
		ob_write(ob, "[unknown]", 9);
		return;
	}
	ob_puts(ob, al->sym->name);
	if (fl & F_SYMOFFSET) {
		ob_write(ob, "+0x", 3);
		ob_x64(ob, al->sym_off, 0);
	}
}

static void script_put_dso(struct outbuf *ob, const struct addr_loc *al)
{
	ob_write(ob, " (", 2);
	if (al->map && al->dso)
		ob_puts(ob, al->dso->name);
	else
		ob_write(ob, "[unknown]", 9);
	ob_putc(ob, ')');
}

/* The srcline state, made on first use (--full-source-path applied). */
static struct srclines *script_srclines(const struct script *sc)
{
	struct srclines *s = srclines_new();

	if (s)
		srclines_set_full_path(s, sc->o.full_source_path);
	return s;
}

/* -F srcline: perf's map__fprintf_srcline(), "\n  file.c:12". */
static void put_srcline(struct script *sc, const struct addr_loc *al,
			uint64_t ip)
{
	struct outbuf *ob = &sc->ob;
	char buf[1024];
	size_t n;

	if (!al->map || !al->dso)
		return;
	if (!sc->src && !(sc->src = script_srclines(sc)))
		return;
	n = srcline_text(sc->src, al->dso,
			 al->kernel ? ip : dso_addr(al->dso, al->addr), ip, buf,
			 sizeof(buf));
	if (!n)
		return;
	ob_room(ob, n + 3);
	ob_write(ob, "\n  ", 3);
	ob_write(ob, buf, n);
}

void script_put_time(struct script *sc, uint64_t t)
{
	struct outbuf *ob = &sc->ob;
	uint64_t sec;

	if (sc->o.reltime) {
		/* perf: from the first time printed that is not 0 */
		if (!sc->initial_time)
			sc->initial_time = t;
		t -= sc->initial_time;
	} else if (sc->o.deltatime) {
		uint64_t prev = sc->previous_time;

		sc->previous_time = t;
		t = prev ? t - prev : 0;
	}
	sec = t / 1000000000ull;
	/* "%5lu." changes once a second. */
	if (sec != sc->sec || !sc->sec_len) {
		struct outbuf tb = { .p = sc->sec_text,
				     .cap = sizeof(sc->sec_text) };

		ob_u64(&tb, sec, 5, ' ');
		tb.p[tb.len++] = '.';
		sc->sec = sec;
		sc->sec_len = (uint32_t)tb.len;
	}
	ob_write(ob, sc->sec_text, sc->sec_len);
	if (sc->o.ns)
		ob_u64(ob, t % 1000000000ull, 9, '0');
	else
		ob_u64(ob, (t % 1000000000ull) / 1000, 6, '0');
	ob->p[ob->len++] = ':';
	ob->p[ob->len++] = ' ';
}

/* --stop-bt: @name is one of the functions a callchain stops at. */
bool script_stop_bt_has(const struct script *sc, const char *name)
{
	for (char **p = sc->stop_bt; *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* The inlined functions perf 6.1 shows at a DWARF-unwound frame (its
 * unwind_entry() -> append_inlines()): one line each, innermost first,
 * "name+0x.. (inlined)" without the object, the symbol's own frame (if
 * addr2line names it as the symbol) printed as usual.  Returns whether it
 * printed the frame. */
static bool print_inlined(struct script *sc, const struct addr_loc *al,
			  unsigned fl)
{
	struct outbuf *ob = &sc->ob;
	const char *names[INLINE_MAX_NEST], *srcs[INLINE_MAX_NEST];
	unsigned n;

	if (!al->map || !al->dso || !al->sym || al->kernel)
		return false;
	if (!sc->src && !(sc->src = script_srclines(sc)))
		return false;
	if (!sc->inl && !(sc->inl = inlines_new(sc->src)))
		return false;
	n = inlines_at(sc->inl, al->dso, dso_addr(al->dso, al->addr), al->sym,
		       names, srcs, INLINE_MAX_NEST);
	for (unsigned i = 0; i < n; i++) {
		if (fl & F_IP) {
			ob_putc(ob, '\t');
			ob_x64(ob, al->addr, 16);
		}
		if (fl & F_SYM) {
			if (names[i]) {
				ob_putc(ob, ' ');
				ob_puts(ob, names[i]);
				if (fl & F_SYMOFFSET) {
					ob_write(ob, "+0x", 3);
					ob_x64(ob, al->sym_off, 0);
				}
			} else {
				script_put_sym(ob, al, fl);
			}
		}
		if ((fl & F_DSO) && !names[i])
			script_put_dso(ob, al);
		if (fl & F_SRCLINE) {
			/* each frame's own line, as addr2line gave it */
			ob_write(ob, "\n  ", 3);
			ob_puts(ob, srcs[i]);
		}
		if (names[i])
			ob_write(ob, " (inlined)", 10);
		ob_putc(ob, '\n');
		/* perf: an inlined frame is an entry of its own (--stop-bt) */
		if (sc->stop_bt &&
		    script_stop_bt_has(sc,
				       names[i] ? names[i] : al->sym->name)) {
			sc->stop_chain = true;
			break;
		}
	}
	return n > 0;
}

/* The srcline of an unwound frame that has no inlined functions: perf
 * prints the one addr2line record it got, "??:0" when addr2line found the
 * function (in the symbol table) but no line for it, ":0" when a CU holds
 * the address but no line does.  Returns
 * whether it printed it (else perf's usual srcline applies). */
static bool put_unwound_srcline(struct script *sc, const struct addr_loc *al)
{
	const char *file = NULL;
	int line = 0, r;
	uint64_t addr;

	if (!al->map || !al->dso || !al->sym || al->kernel ||
	    al->dso->kind != DSO_FILE || al->dso->name[0] != '/' ||
	    srcline_is_plt(al->sym))
		return false;
	if (!sc->src && !(sc->src = script_srclines(sc)))
		return false;
	addr = dso_addr(al->dso, al->addr);
	r = srcline_line(sc->src, al->dso, addr, &file, &line);
	if (r > 0)
		return false; /* the line table's: as put_srcline() */
	/* A CU without the line: addr2line's empty file name; no DWARF
	 * there: the symbol table's file ("crtstuff.c:0"), else "??:0". */
	if (r == 0) {
		ob_write(&sc->ob, "\n  :0", 5);
	} else if (r == -ENOENT &&
		   (file = srcline_symtab_file(sc->src, al->dso, addr))) {
		ob_write(&sc->ob, "\n  ", 3);
		ob_puts(&sc->ob, file);
		ob_write(&sc->ob, ":0", 2);
	} else {
		ob_write(&sc->ob, "\n  ??:0", 7);
	}
	return true;
}

static void print_chain_entry(struct script *sc, struct thread *t,
			      uint8_t cpumode, uint64_t ip, unsigned fl,
			      bool unwound)
{
	struct outbuf *ob = &sc->ob;
	bool want_sym = fl & F_SYM;
	struct addr_loc al;

	machine_resolve(&sc->m, t, cpumode, ip,
			unwound || want_sym || (fl & (F_DSO | F_SRCLINE)), &al);
	if (unwound && !sc->o.no_inline && print_inlined(sc, &al, fl))
		return;
	if (fl & F_IP) {
		ob_putc(ob, '\t');
		ob_x64(ob, al.map && !al.kernel ? al.addr : ip, 16);
	}
	if (want_sym)
		script_put_sym(ob, &al, fl);
	if (fl & F_DSO)
		script_put_dso(ob, &al);
	if ((fl & F_SRCLINE) && unwound && !sc->o.no_inline &&
	    put_unwound_srcline(sc, &al))
		fl &= ~(unsigned)F_SRCLINE;
	if (fl & F_SRCLINE)
		put_srcline(sc, &al, ip);
	ob_putc(ob, '\n');
	if (sc->stop_bt && al.sym && script_stop_bt_has(sc, al.sym->name))
		sc->stop_chain = true;
}

static void print_callchain(struct script *sc, struct thread *t,
			    const struct psample *s, unsigned fl)
{
	uint8_t cpumode = PERF_RECORD_MISC_USER;
	unsigned entries = 0, nr_user;
	uint64_t user[UNWIND_MAX_FRAMES];

	if (!callchain_valid(s->callchain, s->nr_callchain, MAX_STACK))
		return;
	sc->stop_chain = false;
	for (uint64_t i = 0; i < s->nr_callchain && entries < sc->max_stack;
	     i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			cpumode = callchain_context_cpumode(ip);
			continue;
		}
		entries++;
		print_chain_entry(sc, t, cpumode, ip, fl, false);
		if (sc->stop_chain)
			return;
	}
	/* --call-graph dwarf: the user part, unwound from the stack copy */
	nr_user = unwind_user_stack(&sc->m, t, s->sample, user, sc->max_stack);
	for (unsigned i = 0; i < nr_user && !sc->stop_chain; i++) {
		print_chain_entry(sc, t, PERF_RECORD_MISC_USER, user[i], fl,
				  true);
	}
}

void script_ensure_tp(struct script *sc)
{
	size_t len;
	const void *td;

	if (sc->tp || sc->tp_tried)
		return;
	td = prd_feature(sc->f, PD_FEAT_TRACING_DATA, &len);
	if (!td)
		return; /* pipe mode: it may come later */
	sc->tp_tried = true;
	if (tpfmt_new(td, len, &sc->tp))
		pr_warn("tracepoint fields cannot be decoded: the TRACING_DATA is damaged");
	else
		tpfmt_set_slow(sc->tp, sc->o.slow_tracepoints);
	tpfmt_set_resolver(sc->tp, machine_kernel_symbol, &sc->m);
}

static void print_sample(struct script *sc, const struct psample *s)
{
	const struct attr_info *ai = s->ai;
	struct outbuf *ob = &sc->ob;
	unsigned fl = ai->fields;
	bool has_tid = ai->sample_type & PERF_SAMPLE_TID;
	int32_t pid = has_tid ? (int32_t)s->pid : -1;
	int32_t tid = has_tid ? (int32_t)s->tid : -1;
	bool chain = ai->chain;
	uint16_t misc = s->misc;
	struct thread *t;

	if (!fl)
		return;
	if (!sc->m.host_decided)
		machine_set_host(&sc->m, sc->host);
	t = machine_findnew_thread(&sc->m, pid, tid);
	ob_room(ob, OB_SLACK);
	if (t && !chain &&
	    (fl & (F_COMM | F_PID | F_TID)) == (F_COMM | F_TID) &&
	    t->comm_len < 16) {
		/* "%16s %5d ": the same for every sample of the thread. */
		if (t->text_for != t->comm) {
			struct outbuf tb = { .p = t->text,
					     .cap = sizeof(t->text) };

			ob_spaces(&tb, 16 - t->comm_len);
			ob_write(&tb, t->comm, t->comm_len);
			tb.p[tb.len++] = ' ';
			ob_s64(&tb, tid, 5);
			tb.p[tb.len++] = ' ';
			t->text_len = (uint32_t)tb.len;
			t->text_for = t->comm;
		}
		ob_write(ob, t->text, t->text_len);
		fl &= ~(unsigned)(F_COMM | F_TID);
	}
	if (fl & F_COMM) {
		const char *comm = t ? t->comm : ":-1";
		size_t n = t ? t->comm_len : 3;

		if (chain) {
			ob_write(ob, comm, n);
		} else if (n < 16) {
			memset(ob->p + ob->len, ' ', 16);
			ob->len += 16 - n;
			ob_write(ob, comm, n);
		} else {
			ob_write(ob, comm, n);
		}
		ob->p[ob->len++] = ' ';
	}
	if ((fl & (F_PID | F_TID)) == (F_PID | F_TID)) {
		size_t at;

		ob_s64(ob, pid, 5);
		ob_putc(ob, '/');
		at = ob->len;
		ob_s64(ob, tid, 0);
		ob_spaces(ob, ob->len - at < 5 ? 5 - (ob->len - at) : 0);
		ob_putc(ob, ' ');
	} else if (fl & (F_PID | F_TID)) {
		ob_s64(ob, fl & F_PID ? pid : tid, 5);
		ob->p[ob->len++] = ' ';
	}
	if (fl & F_CPU) {
		ob->p[ob->len++] = '[';
		ob_u64(ob, s->cpu, 3, '0');
		ob->p[ob->len++] = ']';
		ob->p[ob->len++] = ' ';
	}
	if (fl & F_TIME)
		script_put_time(sc, s->time);
	if (fl & F_PERIOD) {
		uint64_t period = (ai->sample_type & PERF_SAMPLE_PERIOD) ?
					  s->period :
					  ai->sample_period;

		ob_u64(ob, period, 10, ' ');
		ob->p[ob->len++] = ' ';
	}
	if (fl & F_EVNAME)
		ob_write(ob, ai->evname, ai->evname_len);
	if ((fl & F_TRACE) && ai->type == PERF_TYPE_TRACEPOINT && s->raw)
		tpfmt_print(sc->tp, s->raw, s->raw_size, (int)s->cpu, ob);
	if (fl & F_ADDR) {
		/* perf: "%16" PRIx64 after the field before, which ends in a
		 * blank except the event's name */
		if (ob->len && ob->p[ob->len - 1] != ' ' &&
		    ob->p[ob->len - 1] != '\n')
			ob_putc(ob, ' ');
		ob_x64(ob, s->addr, 16);
	}
	/* perf 6.1: --max-stack 0 fails the dwarf unwinding of a sample with
	 * a user stack, which then prints as one without a callchain */
	if (chain && !sc->max_stack && unwind_sample_has_stack(s->sample))
		chain = false;
	if (fl & F_IP) {
		if (chain && s->callchain) {
			ob_putc(ob, '\n');
			print_callchain(sc, t, s, fl);
		} else {
			struct addr_loc al;
			uint8_t cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

			ob_putc(ob, ' ');
			machine_resolve(&sc->m, t, cpumode, s->ip,
					fl & (F_SYM | F_DSO | F_SRCLINE), &al);
			ob_x64(ob, s->ip, 16);
			if (fl & F_SYM)
				script_put_sym(ob, &al, fl);
			if (fl & F_DSO)
				script_put_dso(ob, &al);
			if (fl & F_SRCLINE)
				put_srcline(sc, &al, s->ip);
		}
	}
	ob_putc(ob, '\n');
}

void script_print_sample(struct script *sc, const struct psample *ps)
{
	script_merged_put_until(sc, ps->time);
	print_sample(sc, ps);
	ob_line_done(&sc->ob);
	if (sc->ob.err && !sc->stop)
		sc->stop = sc->ob.err;
}
