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
 * The hot path allocates nothing: records come from the reader's buffer,
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
#include "filter.h"
#include "header_print.h"
#include "dump.h"
#include "sample_read.h"

enum {
	F_COMM = 1 << 0,
	F_TID = 1 << 1,
	F_PID = 1 << 2,
	F_TIME = 1 << 3,
	F_CPU = 1 << 4,
	F_EVNAME = 1 << 5,
	F_TRACE = 1 << 6,
	F_IP = 1 << 7,
	F_SYM = 1 << 8,
	F_DSO = 1 << 9,
	F_ADDR = 1 << 10,
	F_SYMOFFSET = 1 << 11,
	F_PERIOD = 1 << 12,
	F_SRCLINE = 1 << 13,
	/* perf prints the call depth only for branch samples (BTS, PT,
	 * ETM), which have none of their own here: nothing to print */
	F_CALLINDENT = 1 << 14,
};

static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{ "comm", F_COMM },
	{ "tid", F_TID },
	{ "pid", F_PID },
	{ "time", F_TIME },
	{ "cpu", F_CPU },
	{ "event", F_EVNAME },
	{ "trace", F_TRACE },
	{ "ip", F_IP },
	{ "sym", F_SYM },
	{ "dso", F_DSO },
	{ "addr", F_ADDR },
	{ "symoff", F_SYMOFFSET },
	{ "period", F_PERIOD },
	{ "srcline", F_SRCLINE },
	{ "callindent", F_CALLINDENT },
};

/* perf's output types: the attr types below PERF_TYPE_MAX, then other. */
enum { OT_HW, OT_SW, OT_TRACE, OT_HWCACHE, OT_RAW, OT_BREAK, OT_OTHER, OT_MAX };

static const char *const type_names[OT_MAX] = { "hw",  "sw",	"trace", "hwc",
						"raw", "break", "other" };

#define DEF_SAMPLE                                                   \
	(F_COMM | F_TID | F_CPU | F_TIME | F_EVNAME | F_IP | F_SYM | \
	 F_SYMOFFSET | F_DSO | F_PERIOD)
#define DEF_TRACE (F_COMM | F_TID | F_CPU | F_TIME | F_EVNAME | F_TRACE)

#define MAX_STACK 127 /* perf script's scripting_max_stack */

struct out_type {
	unsigned fields;
	bool user_set;
	bool wildcard;
	unsigned user_unset;
};

/* Per attr, worked out once. */
struct attr_info {
	const struct prd_attr *a;
	char *evname; /* "%*s: " of its name */
	uint32_t evname_len;
	unsigned fields;
	bool chain; /* callchains printed */
	uint32_t type;
	uint64_t sample_type, sample_period;
	struct attr_info *next_old; /* replaced ones, freed at the end */
};

/* A sample as printing needs it: what prd_process() decoded, with the
 * attr's facts in @ai. */
struct psample {
	const struct attr_info *ai;
	uint32_t pid, tid, cpu, raw_size;
	uint64_t id, time, period, ip, addr, nr_callchain;
	const uint64_t *callchain;
	const void *raw;
	uint16_t misc;
	const struct prd_sample *sample; /* its user stack (unwind.c) */
};

struct script {
	struct perfring_script_opts o;
	struct attr_info **ai; /* by attr index; each never moves */
	uint32_t nr_ai;
	int stop; /* printing failed: -errno (EPIPE, ENOMEM) */
	bool host;
	struct prd_file *f;
	struct machine m;
	struct tpfmt *tp;
	bool tp_tried;
	struct outbuf ob;
	struct out_type ot[OT_MAX];
	bool setup;
	bool use_callchain;
	int name_width;
	uint64_t sec; /* put_time()'s cache */
	uint32_t sec_len;
	char sec_text[28];
	/* The trace.dat merged in (opts->trace_dat): its listing, read
	 * first, goes out by time between the samples. */
	struct merged *merged;
	struct sample_filter filt;
	struct srclines *src; /* -F srcline, made on first use */
	struct inlines *inl; /* inlined frames, made on first use */
	bool filter_loc; /* -S, --dsos: the ip resolved for every sample */
	unsigned max_stack; /* --max-stack, MAX_STACK at most */
	char **stop_bt; /* --stop-bt's names, NULL-terminated */
	bool stop_chain; /* the callchain reached a --stop-bt name */
	uint64_t initial_time, previous_time; /* --reltime, --deltatime */
	FILE *out;
	/* perfring_data_run(): samples go to @fn instead of the text. */
	struct perfring_data *reader;
	perfring_sample_fn fn;
	void *fn_ctx;
	int fn_ret;
	const struct psample *cur; /* the sample inside @fn */
	struct perfring_frame frames[MAX_STACK];
	struct sread rd; /* PERF_SAMPLE_READ: each id's last value */
};

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
static void merged_put_until(struct script *sc, uint64_t ts)
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

static int out_type(uint32_t attr_type)
{
	return attr_type < OT_OTHER ? (int)attr_type : OT_OTHER;
}

static bool is_dummy(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       a->config == PERF_COUNT_SW_DUMMY;
}

/* ---- -F ---------------------------------------------------------------- */

static int field_bit(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]);
	     i++)
		if (strlen(field_names[i].name) == n &&
		    !memcmp(field_names[i].name, s, n))
			return (int)field_names[i].bit;
	return -1;
}

static int parse_one_spec(struct script *sc, const char *spec);

/* Several -F (perf takes one per event type) arrive joined with ';'. */
static int parse_fields(struct script *sc, const char *specs)
{
	char *copy = strdup(specs), *save = NULL, *one;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (one = strtok_r(copy, ";", &save); one && !err;
	     one = strtok_r(NULL, ";", &save))
		err = parse_one_spec(sc, one);
	free(copy);
	return err;
}

static int parse_one_spec(struct script *sc, const char *spec)
{
	const char *colon = strchr(spec, ':');
	const char *p = spec;
	int type = -1;
	bool edit = spec[0] == '+' || spec[0] == '-';

	if (colon) {
		size_t n = (size_t)(colon - spec);

		for (int i = 0; i < OT_MAX; i++)
			if (strlen(type_names[i]) == n &&
			    !memcmp(type_names[i], spec, n))
				type = i;
		if (type < 0) {
			pr_err("-F: unknown event type '%.*s' (hw, sw, trace, raw, break)",
			       (int)n, spec);
			return -EINVAL;
		}
		p = colon + 1;
		sc->ot[type].fields = 0;
		sc->ot[type].user_set = true;
	} else if (!edit) {
		for (int i = 0; i < OT_MAX; i++) {
			sc->ot[i].fields = 0;
			sc->ot[i].user_set = true;
			sc->ot[i].wildcard = true;
		}
	}
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char sign = 0;
		int bit;

		if (*p == '+' || *p == '-') {
			if (!edit) {
				pr_err("-F: cannot mix +field/-field with a field list");
				return -EINVAL;
			}
			sign = *p++;
			n--;
		} else if (edit) {
			pr_err("-F: '%.*s': every field needs + or - here",
			       (int)n, p);
			return -EINVAL;
		}
		bit = field_bit(p, n);
		if (bit < 0) {
			pr_err("-F: invalid field '%.*s' (comm pid tid cpu time event period ip sym symoff dso addr trace srcline callindent)",
			       (int)n, p);
			return -EINVAL;
		}
		for (int i = 0; i < OT_MAX; i++) {
			if (type >= 0 && i != type)
				continue;
			/* trace only means something for tracepoints. */
			if (bit == F_TRACE && i != OT_TRACE && type < 0)
				continue;
			if (sign == '-') {
				sc->ot[i].fields &= ~(unsigned)bit;
				sc->ot[i].user_unset |= (unsigned)bit;
			} else {
				sc->ot[i].fields |= (unsigned)bit;
			}
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* ---- set-up at the first sample (pipe mode: all attrs are known) ------ */

static const struct {
	unsigned field;
	uint64_t stype;
	const char *what;
} needs[] = {
	{ F_IP, PERF_SAMPLE_IP, "IP" },
	{ F_TID | F_PID, PERF_SAMPLE_TID, "TID" },
	{ F_TIME, PERF_SAMPLE_TIME, "TIME" },
	{ F_CPU, PERF_SAMPLE_CPU, "CPU" },
	{ F_ADDR, PERF_SAMPLE_ADDR, "ADDR" },
};

static int setup(struct script *sc)
{
	uint32_t n = prd_nr_attrs(sc->f);
	bool any_chain = false, trace_chain = false;
	const char *host, *rel;
	struct utsname u;

	sc->setup = true;
	for (uint32_t i = 0; i < n; i++) {
		const struct prd_attr *a = prd_attr(sc->f, i);
		size_t len;

		if (!a)
			continue;
		len = strlen(a->name ? a->name : "[unknown]");
		if ((int)len > sc->name_width)
			sc->name_width = (int)len;
		if (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
			any_chain = true;
			if (a->attr.type == PERF_TYPE_TRACEPOINT)
				trace_chain = true;
		}
	}
	sc->use_callchain = !sc->o.hide_callchain &&
			    (any_chain || prd_is_pipe(sc->f));
	if (sc->use_callchain && trace_chain && !sc->ot[OT_TRACE].user_set)
		sc->ot[OT_TRACE].fields |= F_IP | F_SYM | F_SYMOFFSET | F_DSO;
	/* Check each type's fields against its first (non-dummy) event. */
	for (int t = 0; t < OT_MAX; t++) {
		const struct prd_attr *first = NULL;

		for (uint32_t i = 0; i < n && !first; i++) {
			const struct prd_attr *a = prd_attr(sc->f, i);

			if (a && out_type(a->attr.type) == t)
				first = a;
		}
		if (!first) {
			if (sc->ot[t].user_set && !sc->ot[t].wildcard) {
				pr_err("-F: the file has no %s events",
				       type_names[t]);
				return -EINVAL;
			}
			continue;
		}
		if (is_dummy(&first->attr))
			continue;
		if (prd_is_pipe(sc->f) && !sc->o.hide_callchain &&
		    (first->attr.sample_type & PERF_SAMPLE_CALLCHAIN)) {
			if (!(sc->ot[t].user_unset & F_IP))
				sc->ot[t].fields |= F_IP;
			if (!(sc->ot[t].user_unset & F_SYM))
				sc->ot[t].fields |= F_SYM;
		}
		for (size_t k = 0; k < sizeof(needs) / sizeof(needs[0]); k++) {
			if (!(sc->ot[t].fields & needs[k].field) ||
			    (first->attr.sample_type & needs[k].stype))
				continue;
			if (sc->ot[t].user_set) {
				pr_err("samples for '%s' do not have %s: cannot print that field",
				       first->name ? first->name : "?",
				       needs[k].what);
				return -EINVAL;
			}
			sc->ot[t].fields &= ~needs[k].field;
		}
	}
	/* Kernel symbols and the vDSO only for a file recorded here. */
	host = prd_feature_string(sc->f, PD_FEAT_HOSTNAME);
	rel = prd_feature_string(sc->f, PD_FEAT_OSRELEASE);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	/* The printing side applies it (it owns the machine). */
	sc->host = (!host || !strcmp(host, u.nodename)) &&
		   (!rel || !strcmp(rel, u.release));
	return 0;
}

static int attr_info_fill(struct script *sc, struct attr_info *ai,
			  const struct prd_attr *a)
{
	const char *name = a->name ? a->name : "[unknown]";
	size_t n = strlen(name);
	size_t w = (size_t)sc->name_width > n ? (size_t)sc->name_width : n;

	ai->evname = malloc(w + 3);
	if (!ai->evname)
		return -ENOMEM;
	memset(ai->evname, ' ', w - n);
	memcpy(ai->evname + w - n, name, n);
	memcpy(ai->evname + w, ": ", 3);
	ai->evname_len = (uint32_t)w + 2;
	ai->fields = sc->ot[out_type(a->attr.type)].fields;
	ai->chain = (ai->fields & F_IP) && sc->use_callchain &&
		    (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	ai->type = a->attr.type;
	ai->sample_type = a->attr.sample_type;
	ai->sample_period = a->attr.sample_period;
	ai->a = a;
	return 0;
}

/* The attr_info of @a: by its index, made on first use. */
static struct attr_info *attr_info(struct script *sc, const struct prd_attr *a)
{
	struct attr_info *ai;

	if (a->index >= sc->nr_ai) {
		uint32_t n = a->index + 1;
		struct attr_info **v = realloc(sc->ai, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + sc->nr_ai, 0, (n - sc->nr_ai) * sizeof(*v));
		sc->ai = v;
		sc->nr_ai = n;
	}
	ai = sc->ai[a->index];
	if (ai && ai->a == a)
		return ai;
	/* New, or another attr at this index: a new object (the old one is
	 * kept until the end, with the others). */
	ai = calloc(1, sizeof(*ai));
	if (!ai || attr_info_fill(sc, ai, a)) {
		free(ai);
		return NULL;
	}
	ai->next_old = sc->ai[a->index];
	sc->ai[a->index] = ai;
	return ai;
}

/* ---- output -------------------------------------------------------------- */

static void put_sym(struct outbuf *ob, const struct addr_loc *al, unsigned fl)
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

static void put_dso(struct outbuf *ob, const struct addr_loc *al)
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

static void put_time(struct script *sc, uint64_t t)
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
static bool stop_bt_has(const struct script *sc, const char *name)
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
				put_sym(ob, al, fl);
			}
		}
		if ((fl & F_DSO) && !names[i])
			put_dso(ob, al);
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
		    stop_bt_has(sc, names[i] ? names[i] : al->sym->name)) {
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
		put_sym(ob, &al, fl);
	if (fl & F_DSO)
		put_dso(ob, &al);
	if ((fl & F_SRCLINE) && unwound && !sc->o.no_inline &&
	    put_unwound_srcline(sc, &al))
		fl &= ~(unsigned)F_SRCLINE;
	if (fl & F_SRCLINE)
		put_srcline(sc, &al, ip);
	ob_putc(ob, '\n');
	if (sc->stop_bt && al.sym && stop_bt_has(sc, al.sym->name))
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

static void ensure_tp(struct script *sc)
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
		put_time(sc, s->time);
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
				put_sym(ob, &al, fl);
			if (fl & F_DSO)
				put_dso(ob, &al);
			if (fl & F_SRCLINE)
				put_srcline(sc, &al, s->ip);
		}
	}
	ob_putc(ob, '\n');
}

static void print_one(struct script *sc, const struct psample *ps)
{
	merged_put_until(sc, ps->time);
	print_sample(sc, ps);
	ob_line_done(&sc->ob);
	if (sc->ob.err && !sc->stop)
		sc->stop = sc->ob.err;
}

static void side_one(struct script *sc, const struct perf_event_header *h)
{
	if (machine_process(&sc->m, h) == -ENOMEM && !sc->stop)
		sc->stop = -ENOMEM;
}

/* perf_sample__fprintf_start() of a side-band record: the fields before
 * the event name, no per-thread cache (the tid shown is the trailer's). */
static void put_start(struct script *sc, const struct attr_info *ai,
		      struct thread *t, int32_t pid, int32_t tid, uint32_t cpu,
		      uint64_t time)
{
	struct outbuf *ob = &sc->ob;
	unsigned fl = ai->fields;

	ob_room(ob, OB_SLACK);
	if (fl & F_COMM) {
		const char *comm = t ? t->comm : ":-1";
		size_t n = t ? t->comm_len : 3;

		if (!ai->chain && n < 16)
			ob_spaces(ob, 16 - n);
		ob_write(ob, comm, n < 1024 ? n : 1024);
		ob_putc(ob, ' ');
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
		ob_putc(ob, ' ');
	}
	if (fl & F_CPU) {
		ob_putc(ob, '[');
		ob_u64(ob, cpu, 3, '0');
		ob_write(ob, "] ", 2);
	}
	if (fl & F_TIME)
		put_time(sc, time);
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* A formatted piece of a side-band line (short: numbers and words). */
__attribute__((format(printf, 2, 3))) static void
ob_printf(struct outbuf *ob, const char *fmt, ...)
{
	va_list ap;
	int n;

	ob_room(ob, 256);
	va_start(ap, fmt);
	n = vsnprintf(ob->p + ob->len, 256, fmt, ap);
	va_end(ap);
	if (n > 0)
		ob->len += n < 256 ? (size_t)n : 255;
}

/* A string field of a record up to its NUL or @end. */
static void put_rec_str(struct outbuf *ob, const unsigned char *r, uint32_t at,
			uint32_t end)
{
	if (at < end)
		ob_write(ob, r + at,
			 ob_strnlen((const char *)r + at, end - at));
}

/* perf 6.1's perf_ns__name() */
static const char *const ns_names[] = { "net",	"uts", "ipc",	"pid",
					"user", "mnt", "cgroup" };

/* perf_event__fprintf_text_poke()'s byte lines: 16 a line. */
static void put_poke_bytes(struct outbuf *ob, const unsigned char *b,
			   uint32_t n, const char *which)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!(i & 15))
			ob_printf(ob, "            %s bytes:", which);
		ob_printf(ob, " %02x", b[i]);
		if ((i & 15) == 15 || i == n - 1)
			ob_putc(ob, '\n');
	}
}

/*
 * perf_event__fprintf() of the records the --show-*-events options added
 * here print (the others go through report_record_text()); @end is where
 * the record's fields stop (its sample_id trailer excluded).  Fields a
 * record is too short for are left out, never read.
 */
static void side_text(struct script *sc, struct thread *t,
		      const unsigned char *r, uint32_t type, uint16_t misc,
		      uint32_t end)
{
	struct outbuf *ob = &sc->ob;

	ob_printf(ob, "PERF_RECORD_%s", prd_type_name(type));
	switch (type) {
	case PERF_RECORD_LOST:
		ob_printf(ob, " lost %llu\n",
			  end >= 24 ? (unsigned long long)rd64(r + 16) : 0ULL);
		return;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		bool out = misc & PERF_RECORD_MISC_SWITCH_OUT;
		const char *io = !out ? "IN         " :
				 !(misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ?
					"OUT        " :
					"OUT preempt";

		if (type == PERF_RECORD_SWITCH || end < 16)
			ob_printf(ob, " %s\n", io);
		else
			ob_printf(ob, " %s  %s pid/tid: %5d/%-5d\n", io,
				  out ? "next" : "prev", (int)rd32(r + 8),
				  (int)rd32(r + 12));
		return;
	}
	case PERF_RECORD_NAMESPACES: {
		uint64_t nr = rd64(r + 16);
		uint64_t fits = end >= 24 ? (end - 24) / 16 : 0;

		ob_printf(ob, " %d/%d - nr_namespaces: %u\n\t\t[",
			  (int)rd32(r + 8), (int)rd32(r + 12), (unsigned)nr);
		for (uint64_t i = 0; i < nr && i < fits; i++) {
			const unsigned char *e = r + 24 + 16 * i;

			if (i && !(i % 4))
				ob_write(ob, "\n\t\t ", 4);
			ob_printf(ob, "%u/%s: %llu/%#llx%s", (unsigned)i,
				  i < 7 ? ns_names[i] : "UNKNOWN",
				  (unsigned long long)rd64(e),
				  (unsigned long long)rd64(e + 8),
				  i + 1 != nr ? ", " : "]\n");
		}
		return;
	}
	case PERF_RECORD_CGROUP:
		ob_printf(ob, " cgroup: %llu ",
			  (unsigned long long)rd64(r + 8));
		put_rec_str(ob, r, 16, end);
		ob_putc(ob, '\n');
		return;
	case PERF_RECORD_KSYMBOL:
		ob_printf(ob, " addr %llx len %u type %u flags 0x%x name ",
			  (unsigned long long)rd64(r + 8), rd32(r + 16),
			  rd16(r + 20), rd16(r + 22));
		put_rec_str(ob, r, 24, end);
		ob_putc(ob, '\n');
		return;
	case PERF_RECORD_BPF_EVENT:
		ob_printf(ob, " type %u, flags %u, id %u\n", rd16(r + 8),
			  rd16(r + 10), rd32(r + 12));
		return;
	case PERF_RECORD_TEXT_POKE: {
		uint64_t addr = rd64(r + 8);
		uint32_t old_len = rd16(r + 16), new_len = rd16(r + 18);
		struct addr_loc al;

		ob_printf(ob, " %llx ", (unsigned long long)addr);
		/* the kernel symbol at the address, when known */
		machine_resolve(&sc->m, t, PERF_RECORD_MISC_KERNEL, addr, true,
				&al);
		if (al.kernel && al.sym) {
			ob_puts(ob, al.sym->name);
			ob_printf(ob, "+0x%llx",
				  (unsigned long long)al.sym_off);
		}
		ob_printf(ob, " old len %u new len %u\n", old_len, new_len);
		if (20 + (uint64_t)old_len > end)
			old_len = end > 20 ? end - 20 : 0;
		if (20 + (uint64_t)old_len + new_len > end)
			new_len = end - 20 - old_len;
		put_poke_bytes(ob, r + 20, old_len, "Old");
		put_poke_bytes(ob, r + 20 + old_len, new_len, "New");
		return;
	}
	default:
		ob_putc(ob, '\n');
		return;
	}
}

/* The records the --show-*-events options print (task and mmap ones go
 * through report_record_text(), as before). */
static bool side_new_kind(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_TEXT_POKE:
		return true;
	default:
		return false;
	}
}

/*
 * The --show-*-events lines: perf 6.1's print_event_with_time().  The
 * event is the trailer's (the first one for records without
 * sample_id_all, whose time is 0 or the FORK/EXIT's own); the thread
 * whose comm is shown: the record's pid/tid for task, mmap and namespace
 * records, the trailer's for the others (perf's print_event() callers).
 */
static void side_print(struct script *sc, struct prd_file *f,
		       const struct prd_event *ev)
{
	const unsigned char *r = (const unsigned char *)ev->hdr;
	uint32_t type = ev->hdr->type, size = ev->hdr->size;
	const struct prd_sample *s = ev->sample;
	const struct prd_attr *a = s ? s->attr : prd_attr(f, 0);
	bool s_tid = s && a && (a->attr.sample_type & PERF_SAMPLE_TID);
	int32_t pid = -1, tid = -1;
	uint64_t time = 0;
	uint32_t cpu = 0;
	const struct attr_info *ai;
	struct thread *t = NULL;

	if (!a || size < 16)
		return;
	if (type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT) {
		if (size < 24)
			return;
		memcpy(&pid, r + 8, 4);
		memcpy(&tid, r + 16, 4);
		memcpy(&time, r + 24, size >= 32 ? 8 : 0);
	} else if (!side_new_kind(type) || type == PERF_RECORD_NAMESPACES) {
		memcpy(&pid, r + 8, 4);
		memcpy(&tid, r + 12, 4);
	} else if (s_tid) {
		pid = (int32_t)s->pid;
		tid = (int32_t)s->tid;
	}
	if (s) {
		cpu = s->cpu;
		time = s->time;
	}
	if (!filter_cpu(&sc->filt, cpu))
		return;
	if (!sc->setup && setup(sc)) {
		sc->stop = -EINVAL;
		return;
	}
	ai = attr_info(sc, a);
	if (!ai) {
		sc->stop = -ENOMEM;
		return;
	}
	if (!sc->m.host_decided)
		machine_set_host(&sc->m, sc->host);
	if (tid != -1)
		t = machine_findnew_thread(&sc->m, pid, tid);
	merged_put_until(sc, time);
	put_start(sc, ai, t, s ? (s_tid ? (int32_t)s->pid : -1) : pid,
		  s ? (s_tid ? (int32_t)s->tid : -1) : tid, cpu, time);
	if (side_new_kind(type)) {
		side_text(sc, t, r, type, ev->hdr->misc,
			  prd_payload_size(f, ev));
		ob_line_done(&sc->ob);
	} else {
		/* perf_event__fprintf(): the text perf report -D shows too. */
		ob_flush(&sc->ob);
		if (!sc->ob.err && report_record_text(sc->out, f, ev) < 0 &&
		    !sc->stop)
			sc->stop = -EIO;
	}
	if (sc->ob.err && !sc->stop)
		sc->stop = sc->ob.err;
}

/* Whether a --show-*-events option prints records of @type. */
static bool side_shown(const struct script *sc, uint32_t type)
{
	const struct perfring_script_opts *o = &sc->o;

	switch (type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return o->show_task_events;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return o->show_mmap_events;
	case PERF_RECORD_LOST:
		return o->show_lost_events;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return o->show_switch_events;
	case PERF_RECORD_NAMESPACES:
		return o->show_namespace_events;
	case PERF_RECORD_CGROUP:
		return o->show_cgroup_events;
	case PERF_RECORD_KSYMBOL:
		return o->show_bpf_events || o->show_text_poke_events;
	case PERF_RECORD_BPF_EVENT:
		return o->show_bpf_events;
	case PERF_RECORD_TEXT_POKE:
		return o->show_text_poke_events;
	default:
		return false;
	}
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
				  stop_bt_has(sc, al.sym->name);
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
			    stop_bt_has(sc, al.sym->name))
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
		print_one(sc, ps);
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

	ps->ai = attr_info(sc, a);
	if (!ps->ai)
		return -ENOMEM;
	if ((ps->ai->fields & F_TRACE) && ps->ai->type == PERF_TYPE_TRACEPOINT)
		ensure_tp(sc);
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
		bool show = !sc->fn && side_shown(sc, h->type);

		if (h->type == PRD_REC_FINISHED_ROUND &&
		    sc->o.show_round_events && !sc->fn) {
			/* process_finished_round_event(): the name alone */
			ob_room(&sc->ob, 32);
			ob_write(&sc->ob, "PERF_RECORD_FINISHED_ROUND\n", 27);
			ob_line_done(&sc->ob);
		}

		/* perf prints an EXIT before the thread goes. */
		if (show && h->type == PERF_RECORD_EXIT)
			side_print(sc, f, ev);
		side_one(sc, h);
		if (show && h->type != PERF_RECORD_EXIT)
			side_print(sc, f, ev);
		return sc->stop;
	}
	if (!s || !s->attr)
		return 0;
	if (!sc->setup) {
		err = setup(sc);
		if (err)
			return err;
	}
	ps.ai = attr_info(sc, s->attr);
	if (!ps.ai)
		return -ENOMEM;
	if ((ps.ai->fields & F_TRACE) && ps.ai->type == PERF_TYPE_TRACEPOINT)
		ensure_tp(sc);
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
		err = parse_fields(sc, sc->o.fields);
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
		merged_put_until(sc, UINT64_MAX);
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
	ensure_tp(sc);
	if (!sc->tp)
		return -ENOENT;
	return tpfmt_field(sc->tp, s->raw, s->raw_size, name, num, buf, len);
}

PERFRING_API void perfring_data_close(struct perfring_data *r)
{
	if (!r)
		return;
	script_free(r->sc);
	free(r);
}
