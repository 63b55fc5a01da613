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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/offcpu_format.h"
#include "../format/perf_reader.h"
#include "../format/trace_dat.h"
#include "../machine/intern.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tracedat_lines.h"
#include "fleet_report.h"
#include "pprof.h"

#define MAX_CPUS 65536 /* sched_switch CPUs tracked (more: ignored) */
#define MAX_STACKS (1u << 22) /* distinct stacks kept (more: lumped) */
#define MAX_STACK_BYTES (512u << 20) /* bytes of stack keys kept */
#define MAX_KEY (1u << 20) /* one stack key */

enum fmt { FMT_CHROME, FMT_FOLDED, FMT_SVG, FMT_PPROF };

/* Where sched_switch keeps its fields (0 size: absent). */
struct field {
	uint32_t off, size;
};

struct ss_layout {
	bool have; /* parsed from a format */
	uint64_t id;
	struct field prev_comm, prev_pid, prev_state, next_comm, next_pid;
};

/* Per-thread state of the chrome export (thread->priv). */
struct tstate {
	struct tstate *next; /* every one, for freeing */
	char swcomm[17]; /* name from sched_switch (threads without COMM) */
	bool named; /* thread_name written */
	int32_t named_pid;
	const char *named_comm;
	bool proc_named; /* process_name written (leaders) */
	const char *proc_comm;
	int32_t run_cpu; /* CPU it runs on per sched_switch, or -1 */
};

struct cpu_run {
	struct thread *t;
	uint64_t start;
	bool active;
	bool track_named; /* its CPU track's thread_name written */
};

/* CPU tracks: a made-up process above any pid (pid_max is at most 2^22)
 * whose threads are the CPUs. */
#define CPU_TRACK_PID 1000000000

struct stk {
	char *key; /* NULL: empty slot */
	uint32_t len;
	uint64_t hash;
	uint64_t count;
	uint64_t off, runq; /* of count: blocked, preempted (svg colours) */
};

struct exp {
	enum fmt fmt;
	const char *title;
	unsigned int width;
	struct prd_file *f;
	struct machine m;
	bool machine_ok;
	struct outbuf ob;
	int err; /* first error from a callback */

	struct ss_layout ss;
	bool ss_fallback_warned;

	/* chrome */
	bool any_event;
	uint64_t last_time;
	struct tstate *tstates;
	struct cpu_run *cpus;
	uint32_t nr_cpus;
	uint64_t nr_samples, nr_slices, nr_cpu_slices, nr_counters;

	/* -e: this event only; --wakers: offcpu-waker lines */
	const char *event;
	bool wakers;
	/* svg of a file with off-CPU time and no -e: on- and off-CPU time
	 * in one graph, in nanoseconds (hot/cold colours) */
	bool wall;
	bool ns; /* folded/svg counts are nanoseconds */
	uint64_t nr_flows;

	/* folded, svg */
	struct stk *tab;
	size_t tab_mask, tab_nr, tab_bytes;
	bool tab_full_warned;
	char *key;
	size_t key_len;
	struct addr_loc *locs;
	size_t nr_locs_cap;

	/* chrome: call stacks, counters */
	struct itab frames; /* key: parent frame id (u32), category, 0, name */
	FILE *samples_tmp; /* the "samples" array, copied in at the end */
	struct outbuf sob; /* into samples_tmp */
	uint64_t nr_stack_samples;
	struct itab counters; /* key: pid (i32), attr index (u32) */
	struct u64v counter_val;
	bool cpu_proc_named;

	/* pprof */
	struct pprof *pprof;

	/* chrome: the ftrace events of a trace.dat, merged in by time */
	struct tdat_lines *td;
	const char *td_path;
	struct tdat_ev td_ev; /* the next one, not written yet */
	bool td_have;
	int td_err; /* its damage, at its end */
	struct ss_layout tss; /* its sched_switch */
	bool td_slices; /* its sched_switch makes the slices */
	uint64_t nr_ftrace, nr_ftrace_dropped;
};

/* ---- text ------------------------------------------------------------ */

static const char hexd[] = "0123456789abcdef";

static void ob_json_cstr(struct outbuf *ob, const char *s)
{
	ob_json_str(ob, s, strlen(s));
}

/* XML character data or attribute value: &<>"' escaped, control
 * characters XML forbids as '?', bytes that are not UTF-8 as character
 * references to the Latin-1 characters they would be. */
static void ob_xml_str(struct outbuf *ob, const char *s, size_t n)
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
static void ob_fixed(struct outbuf *ob, double v, int dec)
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
static void ob_us(struct outbuf *ob, uint64_t ns)
{
	char buf[4];

	ob_u64(ob, ns / 1000, 0, ' ');
	buf[0] = '.';
	buf[1] = (char)('0' + ns % 1000 / 100);
	buf[2] = (char)('0' + ns % 100 / 10);
	buf[3] = (char)('0' + ns % 10);
	ob_write(ob, buf, 4);
}

/* ---- sched_switch layout ------------------------------------------- */

struct cur {
	const unsigned char *p, *e;
};

static bool take(struct cur *c, size_t n, const unsigned char **at)
{
	if ((size_t)(c->e - c->p) < n)
		return false;
	if (at)
		*at = c->p;
	c->p += n;
	return true;
}

static bool get32(struct cur *c, uint32_t *v)
{
	const unsigned char *p;

	if (!take(c, 4, &p))
		return false;
	memcpy(v, p, 4);
	return true;
}

static bool get64(struct cur *c, uint64_t *v)
{
	const unsigned char *p;

	if (!take(c, 8, &p))
		return false;
	memcpy(v, p, 8);
	return true;
}

static bool take_str(struct cur *c, const unsigned char **s, size_t *len)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->e - c->p));

	if (!nul)
		return false;
	*s = c->p;
	*len = (size_t)(nul - c->p);
	c->p = nul + 1;
	return true;
}

/* The value after "@key" in a format text (up to the end of line). */
static bool fmt_value(const char *t, size_t n, const char *key, char *out,
		      size_t outsz)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i + kl <= n; i++) {
		size_t j, k = 0;

		if ((i && t[i - 1] != '\n') || memcmp(t + i, key, kl))
			continue;
		j = i + kl;
		while (j < n && (t[j] == ' ' || t[j] == '\t'))
			j++;
		while (j < n && t[j] != '\n' && t[j] != '\r' && k + 1 < outsz)
			out[k++] = t[j++];
		out[k] = 0;
		return true;
	}
	return false;
}

/* Reads an unsigned number after "@key" in @s..@e; false if absent. */
static bool num_after(const char *s, const char *e, const char *key,
		      uint32_t *v)
{
	size_t kl = strlen(key);
	unsigned long long x = 0;
	const char *p;

	for (p = s; p + kl <= e; p++)
		if (!memcmp(p, key, kl))
			break;
	if (p + kl > e)
		return false;
	p += kl;
	if (p >= e || *p < '0' || *p > '9')
		return false;
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned long long)(*p - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	return true;
}

/* The fields of one event format ("\tfield:TYPE NAME;\toffset:N;\tsize:N;"). */
static void parse_fields(struct ss_layout *ss, const char *t, size_t n)
{
	const char *e = t + n;

	for (const char *l = t; l < e;) {
		const char *nl = memchr(l, '\n', (size_t)(e - l));
		const char *le = nl ? nl : e, *fs, *semi, *ne, *nb;
		struct field fld, *dst = NULL;
		size_t nlen;

		fs = memmem(l, (size_t)(le - l), "field:", 6);
		if (!fs)
			goto next;
		semi = memchr(fs, ';', (size_t)(le - fs));
		if (!semi)
			goto next;
		/* The name: the last identifier before ';' (an array's
		 * "[16]" skipped). */
		ne = semi;
		if (ne > fs && ne[-1] == ']') {
			while (ne > fs && *ne != '[')
				ne--;
		}
		nb = ne;
		while (nb > fs + 6 &&
		       (nb[-1] == '_' || (nb[-1] >= 'a' && nb[-1] <= 'z') ||
			(nb[-1] >= 'A' && nb[-1] <= 'Z') ||
			(nb[-1] >= '0' && nb[-1] <= '9')))
			nb--;
		nlen = (size_t)(ne - nb);
		if (!num_after(semi, le, "offset:", &fld.off) ||
		    !num_after(semi, le, "size:", &fld.size))
			goto next;
#define IS(s) (nlen == sizeof(s) - 1 && !memcmp(nb, s, nlen))
		if (IS("prev_comm"))
			dst = &ss->prev_comm;
		else if (IS("prev_pid"))
			dst = &ss->prev_pid;
		else if (IS("prev_state"))
			dst = &ss->prev_state;
		else if (IS("next_comm"))
			dst = &ss->next_comm;
		else if (IS("next_pid"))
			dst = &ss->next_pid;
#undef IS
		if (dst)
			*dst = fld;
next:
		l = le + 1;
	}
}

/* Finds sched:sched_switch in a TRACING_DATA blob (layout: see
 * src/format/tracing_data.c). */
static void parse_sched_switch(struct ss_layout *ss, const void *blob,
			       size_t len)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r',
						 'a',  'c',  'i',  'n', 'g' };
	struct cur c = { blob, (const unsigned char *)blob + len };
	const unsigned char *s;
	size_t sl;
	uint32_t n, nsys;
	uint64_t sz;

	if (!take(&c, sizeof(magic), &s) || memcmp(s, magic, sizeof(magic)))
		return;
	if (!take_str(&c, &s, &sl) || !take(&c, 2 + 4, NULL))
		return;
	if (!take_str(&c, &s, &sl) || !get64(&c, &sz) ||
	    sz > (uint64_t)(c.e - c.p) || !take(&c, (size_t)sz, NULL))
		return; /* header_page */
	if (!take_str(&c, &s, &sl) || !get64(&c, &sz) ||
	    sz > (uint64_t)(c.e - c.p) || !take(&c, (size_t)sz, NULL))
		return; /* header_event */
	if (!get32(&c, &n))
		return;
	for (uint32_t i = 0; i < n; i++)
		if (!get64(&c, &sz) || sz > (uint64_t)(c.e - c.p) ||
		    !take(&c, (size_t)sz, NULL))
			return;
	if (!get32(&c, &nsys))
		return;
	for (uint32_t i = 0; i < nsys; i++) {
		const unsigned char *sys;
		size_t syslen;

		if (!take_str(&c, &sys, &syslen) || !get32(&c, &n))
			return;
		for (uint32_t k = 0; k < n; k++) {
			char name[64], id[32];
			struct ss_layout l;
			char *end;

			if (!get64(&c, &sz) || sz > (uint64_t)(c.e - c.p) ||
			    !take(&c, (size_t)sz, &s))
				return;
			if (syslen != 5 || memcmp(sys, "sched", 5))
				continue;
			if (!fmt_value((const char *)s, (size_t)sz,
				       "name:", name, sizeof(name)) ||
			    strcmp(name, "sched_switch") ||
			    !fmt_value((const char *)s, (size_t)sz, "ID:", id,
				       sizeof(id)))
				continue;
			memset(&l, 0, sizeof(l));
			l.id = strtoull(id, &end, 10);
			if (end == id)
				continue;
			parse_fields(&l, (const char *)s, (size_t)sz);
			if (!l.prev_pid.size || !l.next_pid.size)
				continue;
			l.have = true;
			*ss = l;
			return;
		}
	}
}

/* The layout of sched_switch on 64-bit kernels since 4.x. */
static void ss_default(struct ss_layout *ss)
{
	ss->prev_comm = (struct field){ 8, 16 };
	ss->prev_pid = (struct field){ 24, 4 };
	ss->prev_state = (struct field){ 32, 8 };
	ss->next_comm = (struct field){ 40, 16 };
	ss->next_pid = (struct field){ 56, 4 };
}

static bool is_sched_switch(struct exp *e, const struct prd_sample *s)
{
	const struct prd_attr *a = s->attr;
	const char *name;

	if (!a || a->attr.type != PERF_TYPE_TRACEPOINT || !s->raw)
		return false;
	if (e->ss.have)
		return a->attr.config == e->ss.id;
	name = prd_tracepoint_name(e->f, a->attr.config);
	if (!name)
		name = a->name;
	return name && !strcmp(name, "sched:sched_switch");
}

static bool field_num(const struct prd_sample *s, struct field fl, int64_t *v)
{
	const unsigned char *p = s->raw;

	if (!fl.size || fl.off > s->raw_size || fl.size > s->raw_size - fl.off)
		return false;
	switch (fl.size) {
	case 1:
		*v = (int8_t)p[fl.off];
		return true;
	case 2: {
		int16_t x;

		memcpy(&x, p + fl.off, 2);
		*v = x;
		return true;
	}
	case 4: {
		int32_t x;

		memcpy(&x, p + fl.off, 4);
		*v = x;
		return true;
	}
	case 8:
		memcpy(v, p + fl.off, 8);
		return true;
	default:
		return false;
	}
}

/* A char[] field as a string (up to its first NUL). */
static size_t field_str(const struct prd_sample *s, struct field fl,
			const char **str)
{
	const char *p = s->raw;

	if (!fl.size || fl.off > s->raw_size || fl.size > s->raw_size - fl.off)
		return 0;
	*str = p + fl.off;
	return strnlen(p + fl.off, fl.size);
}

/* prev_state as perf's sched_switch print shows it. */
static void state_str(int64_t st, char *out)
{
	static const char letters[] = "SDTtXZPI";
	size_t k = 0;

	if (!(st & 0xff)) {
		out[k++] = 'R';
		if (st)
			out[k++] = '+';
	}
	for (int i = 0; i < 8; i++)
		if (st & (1 << i)) {
			if (k)
				out[k++] = '|';
			out[k++] = letters[i];
		}
	out[k] = 0;
}

/* ---- chrome ---------------------------------------------------------- */

static struct tstate *tstate_of(struct exp *e, struct thread *t)
{
	struct tstate *ts = t->priv;

	if (ts)
		return ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	ts->run_cpu = -1;
	ts->next = e->tstates;
	e->tstates = ts;
	t->priv = ts;
	return ts;
}

static const char *thread_name(struct thread *t)
{
	struct tstate *ts = t->priv;

	if (!t->comm_set && ts && ts->swcomm[0])
		return ts->swcomm;
	return t->comm;
}

static int32_t track_pid(struct thread *t)
{
	return t->pid >= 0 ? t->pid : t->tid;
}

static void ev_begin(struct exp *e)
{
	struct outbuf *ob = &e->ob;

	ob_line_done(ob);
	ob_puts(ob, e->any_event ? ",\n{" : "\n{");
	e->any_event = true;
}

static void put_meta(struct exp *e, const char *what, int32_t pid, int32_t tid,
		     const char *name)
{
	struct outbuf *ob = &e->ob;

	ev_begin(e);
	ob_puts(ob, "\"name\":\"");
	ob_puts(ob, what);
	ob_puts(ob, "\",\"ph\":\"M\",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, tid, 0);
	ob_puts(ob, ",\"args\":{\"name\":");
	ob_json_cstr(ob, name);
	ob_puts(ob, "}}");
}

/* Names @t's track (pid, tid) and its process, if not done yet. */
static void ensure_named(struct exp *e, struct thread *t, int32_t pid)
{
	struct tstate *ts = tstate_of(e, t);
	struct thread *leader;
	struct tstate *ls;
	const char *name = thread_name(t);

	if (!ts)
		return;
	if (!ts->named || ts->named_pid != pid) {
		put_meta(e, "thread_name", pid, t->tid, name);
		ts->named = true;
		ts->named_pid = pid;
		ts->named_comm = name;
	}
	leader = pid == t->tid ? t : machine_findnew_thread(&e->m, pid, pid);
	if (!leader)
		return;
	ls = tstate_of(e, leader);
	if (ls && !ls->proc_named) {
		ls->proc_comm = thread_name(leader);
		put_meta(e, "process_name", pid, pid, ls->proc_comm);
		ls->proc_named = true;
	}
}

/* Names the CPU tracks' process (first, above the others) and CPU @cpu's
 * track, if not done yet. */
static void name_cpu_track(struct exp *e, struct cpu_run *r, uint32_t cpu)
{
	struct outbuf *ob = &e->ob;
	char name[24];

	if (!e->cpu_proc_named) {
		e->cpu_proc_named = true;
		put_meta(e, "process_name", CPU_TRACK_PID, CPU_TRACK_PID,
			 "CPUs");
		ev_begin(e);
		ob_puts(ob,
			"\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
		ob_s64(ob, CPU_TRACK_PID, 0);
		ob_puts(ob, ",\"tid\":");
		ob_s64(ob, CPU_TRACK_PID, 0);
		ob_puts(ob, ",\"args\":{\"sort_index\":-1}}");
	}
	if (r->track_named)
		return;
	r->track_named = true;
	snprintf(name, sizeof(name), "CPU %u", cpu);
	put_meta(e, "thread_name", CPU_TRACK_PID, CPU_TRACK_PID + (int32_t)cpu,
		 name);
	ev_begin(e);
	ob_puts(ob, "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":");
	ob_s64(ob, CPU_TRACK_PID, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, CPU_TRACK_PID + (int32_t)cpu, 0);
	ob_puts(ob, ",\"args\":{\"sort_index\":");
	ob_u64(ob, cpu, 0, ' ');
	ob_puts(ob, "}}");
}

/* The same run on its CPU's track, named by the thread that ran. */
static void put_cpu_slice(struct exp *e, struct cpu_run *r, uint32_t cpu,
			  uint64_t end, const char *state)
{
	struct outbuf *ob = &e->ob;

	name_cpu_track(e, r, cpu);
	ev_begin(e);
	ob_puts(ob, "\"name\":");
	ob_json_cstr(ob, thread_name(r->t));
	ob_puts(ob, ",\"cat\":\"cpu\",\"ph\":\"X\",\"ts\":");
	ob_us(ob, r->start);
	ob_puts(ob, ",\"dur\":");
	ob_us(ob, end - r->start);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, CPU_TRACK_PID, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, CPU_TRACK_PID + (int32_t)cpu, 0);
	ob_puts(ob, ",\"args\":{\"pid\":");
	ob_s64(ob, track_pid(r->t), 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, r->t->tid, 0);
	if (state) {
		ob_puts(ob, ",\"end_state\":");
		ob_json_cstr(ob, state);
	}
	ob_puts(ob, "}}");
	e->nr_cpu_slices++;
}

static void put_slice(struct exp *e, struct cpu_run *r, uint32_t cpu,
		      uint64_t end, const char *state, const char *next,
		      size_t next_len)
{
	struct outbuf *ob = &e->ob;
	struct tstate *ts = r->t->priv;
	int32_t pid = track_pid(r->t);

	r->active = false;
	if (ts && ts->run_cpu == (int32_t)cpu)
		ts->run_cpu = -1;
	if (end < r->start)
		return;
	ensure_named(e, r->t, pid);
	ev_begin(e);
	ob_puts(ob, "\"name\":\"running on CPU ");
	ob_u64(ob, cpu, 0, ' ');
	ob_puts(ob, "\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":");
	ob_us(ob, r->start);
	ob_puts(ob, ",\"dur\":");
	ob_us(ob, end - r->start);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, r->t->tid, 0);
	ob_puts(ob, ",\"args\":{\"cpu\":");
	ob_u64(ob, cpu, 0, ' ');
	ob_puts(ob, ",\"comm\":");
	ob_json_cstr(ob, thread_name(r->t));
	if (state) {
		ob_puts(ob, ",\"end_state\":");
		ob_json_cstr(ob, state);
	}
	if (next) {
		ob_puts(ob, ",\"next_comm\":");
		ob_json_str(ob, next, next_len);
	}
	ob_puts(ob, "}}");
	e->nr_slices++;
	put_cpu_slice(e, r, cpu, end, state);
}

static struct cpu_run *cpu_run(struct exp *e, uint32_t cpu)
{
	if (cpu >= MAX_CPUS)
		return NULL;
	if (cpu >= e->nr_cpus) {
		uint32_t n = e->nr_cpus ? e->nr_cpus : 64;
		struct cpu_run *v;

		while (n <= cpu)
			n *= 2;
		v = realloc(e->cpus, (size_t)n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + e->nr_cpus, 0,
		       (size_t)(n - e->nr_cpus) * sizeof(*v));
		e->cpus = v;
		e->nr_cpus = n;
	}
	return &e->cpus[cpu];
}

static void set_swcomm(struct exp *e, struct thread *t, const char *s, size_t n)
{
	struct tstate *ts;

	if (t->comm_set || !n)
		return;
	ts = tstate_of(e, t);
	if (!ts)
		return;
	if (n > sizeof(ts->swcomm) - 1)
		n = sizeof(ts->swcomm) - 1;
	memcpy(ts->swcomm, s, n);
	ts->swcomm[n] = 0;
}

static int do_switch(struct exp *e, const struct prd_sample *s,
		     const struct ss_layout *ss)
{
	int64_t prev_pid, next_pid, state = 0;
	const char *prev_comm = NULL, *next_comm = NULL;
	size_t prev_len, next_len;
	struct cpu_run *r = cpu_run(e, s->cpu);
	struct thread *prev, *next;
	char st[24];

	if (!ss->have && !e->ss_fallback_warned) {
		e->ss_fallback_warned = true;
		pr_info("export: no sched_switch format in the tracing data: assuming the 64-bit layout");
	}
	if (!field_num(s, ss->prev_pid, &prev_pid) ||
	    !field_num(s, ss->next_pid, &next_pid) || !r)
		return 0;
	field_num(s, ss->prev_state, &state);
	prev_len = field_str(s, ss->prev_comm, &prev_comm);
	next_len = field_str(s, ss->next_comm, &next_comm);
	state_str(state, st);

	prev = (int32_t)prev_pid == (int32_t)s->tid ?
		       machine_findnew_thread(&e->m, (int32_t)s->pid,
					      (int32_t)s->tid) :
		       machine_findnew_thread(&e->m, -1, (int32_t)prev_pid);
	if (!prev)
		return -ENOMEM;
	set_swcomm(e, prev, prev_comm, prev_len);
	if (r->active)
		put_slice(e, r, s->cpu, s->time,
			  r->t->tid == prev->tid ? st : NULL, next_comm,
			  next_len);
	if (next_pid <= 0)
		return 0;
	next = machine_findnew_thread(&e->m, -1, (int32_t)next_pid);
	if (!next)
		return -ENOMEM;
	set_swcomm(e, next, next_comm, next_len);
	{
		struct tstate *ts = tstate_of(e, next);

		if (!ts)
			return -ENOMEM;
		/* Still running elsewhere (a lost switch): it ends there. */
		if (ts->run_cpu >= 0 && (uint32_t)ts->run_cpu < e->nr_cpus &&
		    (uint32_t)ts->run_cpu != s->cpu) {
			struct cpu_run *o = &e->cpus[ts->run_cpu];

			if (o->active && o->t == next)
				put_slice(e, o, (uint32_t)ts->run_cpu, s->time,
					  NULL, NULL, 0);
		}
		r->t = next;
		r->start = s->time;
		r->active = true;
		ts->run_cpu = (int32_t)s->cpu;
	}
	return 0;
}

static void sample_name(struct exp *e, const struct prd_sample *s,
			struct thread *t, uint8_t cpumode, struct addr_loc *al,
			const char **name)
{
	const char *ev = s->attr && s->attr->name ? s->attr->name : "sample";

	machine_resolve(&e->m, t, cpumode, s->ip, true, al);
	*name = ev;
	if (al->sym && !(s->attr && s->attr->attr.type == PERF_TYPE_TRACEPOINT))
		*name = al->sym->name;
}

/* {"name":..,"cat":..,"ph":<ph>,"ts":..,"pid":..,"tid":.. of a sample. */
static void put_event_head(struct exp *e, const char *name, const char *cat,
			   const char *ph, const struct prd_sample *s,
			   int32_t pid)
{
	struct outbuf *ob = &e->ob;

	ev_begin(e);
	ob_puts(ob, "\"name\":");
	ob_json_cstr(ob, name);
	ob_puts(ob, ",\"cat\":");
	ob_json_cstr(ob, cat);
	ob_puts(ob, ",\"ph\":");
	ob_puts(ob, ph);
	ob_puts(ob, ",\"ts\":");
	ob_us(ob, s->time);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, (int32_t)s->tid, 0);
}

/*
 * Tracepoint-like events named *_begin / *_end (application events mark
 * slices so) become "B"/"E" events named by the stem: a slice on the
 * thread's track.  Returns 'B', 'E' or 0; *stem_len: the stem's length.
 */
static char slice_phase(const struct prd_sample *s, const char *evname,
			size_t *stem_len)
{
	size_t n = strlen(evname);

	if (!s->attr || s->attr->attr.type != PERF_TYPE_TRACEPOINT)
		return 0;
	if (n > 6 && !strcmp(evname + n - 6, "_begin")) {
		*stem_len = n - 6;
		return 'B';
	}
	if (n > 4 && !strcmp(evname + n - 4, "_end")) {
		*stem_len = n - 4;
		return 'E';
	}
	return 0;
}

static void chrome_slice_mark(struct exp *e, const struct prd_sample *s,
			      int32_t pid, const char *evname, size_t stem,
			      char phase)
{
	struct outbuf *ob = &e->ob;
	char name[256];

	snprintf(name, sizeof(name), "%.*s", (int)stem, evname);
	put_event_head(e, name, "app", phase == 'B' ? "\"B\"" : "\"E\"", s,
		       pid);
	ob_puts(ob, ",\"args\":{\"event\":");
	ob_json_cstr(ob, evname);
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, "}}");
	e->nr_slices++;
}

static int resolve_stack(struct exp *e, const struct prd_event *ev,
			 struct thread *t, size_t *n);
static void key_puts(struct exp *e, const char *s);
static void key_frame_name(struct exp *e, const struct addr_loc *al);

/*
 * The stackFrames id of the sample's stack (0: none), its frames interned
 * root first: a frame is its parent's id, its category (the object it is
 * in, "kernel" for the kernel's) and its name (the symbol, else "[dso]"
 * or "[unknown]", as folded names them).
 */
static int chrome_stack(struct exp *e, const struct prd_event *ev,
			struct thread *t, uint32_t *sf)
{
	uint32_t parent = 0;
	size_t n;
	int err;

	*sf = 0;
	if (!e->key) {
		e->key = malloc(MAX_KEY);
		if (!e->key)
			return -ENOMEM;
	}
	err = resolve_stack(e, ev, t, &n);
	if (err)
		return err;
	for (size_t i = n; i-- > 0;) {
		const struct addr_loc *al = &e->locs[i];
		const char *cat = al->kernel ? "kernel" :
				  al->dso    ? (al->dso->short_name ?
							al->dso->short_name :
							al->dso->name) :
					       "[unknown]";
		uint32_t id;

		memcpy(e->key, &parent, sizeof(parent));
		e->key_len = sizeof(parent);
		key_puts(e, cat);
		if (e->key_len < MAX_KEY)
			e->key[e->key_len++] = 0;
		key_frame_name(e, al);
		err = itab_intern(&e->frames, e->key, e->key_len, &id, NULL);
		if (err == -E2BIG)
			break; /* over 1 GiB of frames: the stack stops here */
		if (err)
			return err;
		parent = id;
	}
	*sf = parent;
	return 0;
}

/* A sample of the catapult "samples" array (speedscope and the legacy
 * trace viewer draw its stack), into the temporary file. */
static int put_stack_sample(struct exp *e, const struct prd_sample *s,
			    int32_t pid, const char *evname, uint32_t sf)
{
	struct outbuf *ob = &e->sob;

	if (!e->samples_tmp) {
		e->samples_tmp = tmpfile();
		if (!e->samples_tmp)
			return errno ? -errno : -EIO;
		if (ob_init(ob, e->samples_tmp))
			return -ENOMEM;
	}
	ob_puts(ob, e->nr_stack_samples ? ",\n{\"pid\":" : "\n{\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, (int32_t)s->tid, 0);
	ob_puts(ob, ",\"ts\":");
	ob_us(ob, s->time);
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, ",\"name\":");
	ob_json_cstr(ob, evname);
	ob_puts(ob, ",\"sf\":\"");
	ob_u64(ob, sf, 0, ' ');
	ob_puts(ob, "\"}");
	ob_line_done(ob);
	e->nr_stack_samples++;
	return ob->err;
}

/* A trace event's ,"pid":P,"tid":T and its stack frame (,"sf":"N") if
 * it has one. */
static void ob_pid_tid_sf(struct outbuf *ob, int64_t pid, int32_t tid,
			  uint64_t sf)
{
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, tid, 0);
	if (sf) {
		ob_puts(ob, ",\"sf\":\"");
		ob_u64(ob, sf, 0, ' ');
		ob_putc(ob, '"');
	}
}

/* Events that count something (page-faults, cycles, ...): not the clocks,
 * whose samples are the time itself, nor tracepoints and breakpoints,
 * which are instants. */
static bool counting_event(const struct prd_attr *a)
{
	if (!a)
		return false;
	switch (a->attr.type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return true;
	case PERF_TYPE_SOFTWARE:
		return a->attr.config != PERF_COUNT_SW_CPU_CLOCK &&
		       a->attr.config != PERF_COUNT_SW_TASK_CLOCK &&
		       a->attr.config != PERF_COUNT_SW_DUMMY &&
		       a->attr.config != PERF_COUNT_SW_BPF_OUTPUT;
	default:
		return false;
	}
}

/* A counter track per process and counting event: the running total of
 * the samples' periods (what perf stat would have counted by then). */
static int put_counter(struct exp *e, const struct prd_sample *s, int32_t pid,
		       const char *evname)
{
	struct outbuf *ob = &e->ob;
	uint32_t key[2] = { (uint32_t)pid, s->attr->index }, id;
	int err = itab_intern(&e->counters, key, sizeof(key), &id, NULL);

	if (!err)
		err = u64v_set(&e->counter_val, id - 1, s->period);
	if (err)
		return err;
	put_event_head(e, evname, "counter", "\"C\"", s, pid);
	ob_puts(ob, ",\"args\":{");
	ob_json_cstr(ob, evname);
	ob_putc(ob, ':');
	ob_u64(ob, e->counter_val.v[id - 1], 0, ' ');
	ob_puts(ob, "}}");
	e->nr_counters++;
	return 0;
}

static enum offcpu_kind sample_offcpu(const struct prd_sample *s);

/* A wake-up (offcpu-waker): an instant slice on the waker's track with
 * its stack, a flow from there to the end of the block it ended. */
static int chrome_wakeup(struct exp *e, const struct prd_sample *s, int32_t pid,
			 uint32_t sf)
{
	struct outbuf *ob = &e->ob;
	struct offcpu_waker_raw w;
	struct thread *wakee;
	const void *chain;
	char name[64];
	int32_t wpid;

	if (offcpu_waker_parse(s->raw, s->raw_size, &w, &chain) ||
	    !w.block_end || w.wake_time > w.block_end)
		return 0;
	wakee = machine_findnew_thread(&e->m, w.wakee_pid, w.wakee_tid);
	if (!wakee)
		return -ENOMEM;
	wpid = track_pid(wakee);
	ensure_named(e, wakee, wpid);
	snprintf(name, sizeof(name), "wakes %s", thread_name(wakee));
	ev_begin(e);
	ob_puts(ob, "\"name\":");
	ob_json_cstr(ob, name);
	ob_puts(ob, ",\"cat\":\"offcpu\",\"ph\":\"X\",\"ts\":");
	ob_us(ob, w.wake_time);
	ob_puts(ob, ",\"dur\":0");
	ob_pid_tid_sf(ob, pid, (int32_t)s->tid, sf);
	ob_puts(ob, ",\"args\":{\"wakee_tid\":");
	ob_s64(ob, w.wakee_tid, 0);
	ob_puts(ob, ",\"blocked_ns\":");
	ob_u64(ob, w.block_end - w.block_start, 0, ' ');
	ob_puts(ob, "}}");
	/* the flow: from the waker, into the blocked slice at its end */
	e->nr_flows++;
	ev_begin(e);
	ob_puts(ob,
		"\"name\":\"wakeup\",\"cat\":\"offcpu\",\"ph\":\"s\",\"id\":");
	ob_u64(ob, e->nr_flows, 0, ' ');
	ob_puts(ob, ",\"ts\":");
	ob_us(ob, w.wake_time);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, (int32_t)s->tid, 0);
	ob_puts(ob, "}");
	ev_begin(e);
	ob_puts(ob,
		"\"name\":\"wakeup\",\"cat\":\"offcpu\",\"ph\":\"f\",\"bp\":\"e\",\"id\":");
	ob_u64(ob, e->nr_flows, 0, ' ');
	ob_puts(ob, ",\"ts\":");
	ob_us(ob, w.block_end > w.block_start ? w.block_end - 1 : w.block_end);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, wpid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, w.wakee_tid, 0);
	ob_puts(ob, "}");
	return 0;
}

/* An off-CPU sample: a block as a slice on its thread's track, from its
 * switch-out to its switch-in, with the stack where it blocked; a waker
 * as above.  Summed blocks have no time of their own: left out. */
static int chrome_offcpu(struct exp *e, const struct prd_event *ev,
			 struct thread *t, int32_t pid, enum offcpu_kind kind)
{
	const struct prd_sample *s = ev->sample;
	struct outbuf *ob = &e->ob;
	uint32_t sf = 0;
	int err;

	if (offcpu_summed_time(s->time) || s->period > s->time)
		return 0;
	err = chrome_stack(e, ev, t, &sf);
	if (err)
		return err;
	if (kind == OFFCPU_WAKER)
		return chrome_wakeup(e, s, pid, sf);
	ev_begin(e);
	ob_puts(ob, kind == OFFCPU_BLOCKED ?
			    "\"name\":\"off-CPU (blocked)\"" :
			    "\"name\":\"off-CPU (preempted)\"");
	ob_puts(ob, ",\"cat\":\"offcpu\",\"ph\":\"X\",\"ts\":");
	ob_us(ob, s->time - s->period);
	ob_puts(ob, ",\"dur\":");
	ob_us(ob, s->period);
	ob_pid_tid_sf(ob, pid, (int32_t)s->tid, sf);
	ob_puts(ob, ",\"args\":{\"ns\":");
	ob_u64(ob, s->period, 0, ' ');
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, "}}");
	e->nr_slices++;
	return 0;
}

static int chrome_sample(struct exp *e, const struct prd_event *ev)
{
	const struct prd_sample *s = ev->sample;
	struct outbuf *ob = &e->ob;
	uint8_t cpumode = ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct thread *t;
	struct addr_loc al;
	const char *name, *evname;
	int32_t pid = (int32_t)s->pid;
	uint32_t sf = 0;

	t = machine_findnew_thread(&e->m, pid, (int32_t)s->tid);
	if (!t)
		return -ENOMEM;
	if (is_sched_switch(e, s)) {
		int err = do_switch(e, s, &e->ss);

		if (err)
			return err;
	}
	if (pid < 0)
		pid = track_pid(t);
	ensure_named(e, t, pid);
	if (sample_offcpu(s))
		return chrome_offcpu(e, ev, t, pid, sample_offcpu(s));
	evname = s->attr && s->attr->name ? s->attr->name : "sample";
	{
		size_t stem;
		char phase = slice_phase(s, evname, &stem);

		if (phase) {
			chrome_slice_mark(e, s, pid, evname, stem, phase);
			e->nr_samples++;
			return 0;
		}
	}
	if (counting_event(s->attr)) {
		int err = put_counter(e, s, pid, evname);

		if (err)
			return err;
	}
	{
		int err = chrome_stack(e, ev, t, &sf);

		if (!err && sf)
			err = put_stack_sample(e, s, pid, evname, sf);
		if (err)
			return err;
	}
	sample_name(e, s, t, cpumode, &al, &name);
	put_event_head(e, name, evname, "\"i\",\"s\":\"t\"", s, pid);
	if (sf) {
		ob_puts(ob, ",\"sf\":\"");
		ob_u64(ob, sf, 0, ' ');
		ob_putc(ob, '"');
	}
	ob_puts(ob, ",\"args\":{\"ip\":\"0x");
	ob_x64(ob, s->ip, 0);
	ob_puts(ob, "\"");
	if (al.sym) {
		ob_puts(ob, ",\"sym\":");
		ob_json_cstr(ob, al.sym->name);
	}
	ob_puts(ob, ",\"dso\":");
	ob_json_cstr(ob, al.dso ? al.dso->name : "[unknown]");
	ob_puts(ob, ",\"period\":");
	ob_u64(ob, s->period, 0, ' ');
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, ",\"event\":");
	ob_json_cstr(ob, evname);
	ob_puts(ob, "}}");
	e->nr_samples++;
	return 0;
}

/* ---- chrome: the ftrace events of a trace.dat ------------------------ */

static int put_ftrace_field(void *ctx, const struct tdat_field *fl)
{
	struct exp *e = ctx;
	struct outbuf *ob = &e->ob;

	char key[128];

	/* The keys every event has come first; a field of the same name
	 * is renamed so that no key repeats. */
	snprintf(key, sizeof(key), "%s%s",
		 !strcmp(fl->name, "cpu") || !strcmp(fl->name, "event") ||
				 !strcmp(fl->name, "dropped_before") ?
			 "field_" :
			 "",
		 fl->name);
	ob_putc(ob, ',');
	ob_json_cstr(ob, key);
	ob_putc(ob, ':');
	if (fl->is_str)
		ob_json_str(ob, fl->str, fl->len);
	else if (fl->is_signed)
		ob_s64(ob, (int64_t)fl->num, 0);
	else if (fl->num >> 53) {
		/* Past a double's exact integers (addresses): hex text. */
		ob_puts(ob, "\"0x");
		ob_x64(ob, fl->num, 0);
		ob_putc(ob, '"');
	} else
		ob_u64(ob, fl->num, 0, ' ');
	ob_line_done(ob);
	return e->ob.err;
}

/* One ftrace event: an instant on its thread's track with its fields as
 * args (sched_switch also moves the slices when the trace.dat has them). */
static int chrome_ftrace(struct exp *e, const struct tdat_ev *ev)
{
	struct outbuf *ob = &e->ob;
	struct thread *t;
	int32_t pid;
	int err;

	if (ev->ts > e->last_time)
		e->last_time = ev->ts;
	t = machine_findnew_thread(&e->m, -1, ev->tid);
	if (!t)
		return -ENOMEM;
	if (ev->comm)
		set_swcomm(e, t, ev->comm, strlen(ev->comm));
	if (e->td_slices && !strcmp(ev->name, "sched_switch") &&
	    !strcmp(ev->system, "sched")) {
		struct prd_sample s;

		memset(&s, 0, sizeof(s));
		s.time = ev->ts;
		s.cpu = ev->cpu;
		s.pid = UINT32_MAX;
		s.tid = (uint32_t)ev->tid;
		s.raw = ev->raw;
		s.raw_size = ev->raw_size;
		err = do_switch(e, &s, &e->tss);
		if (err)
			return err;
	}
	pid = track_pid(t);
	ensure_named(e, t, pid);
	ev_begin(e);
	ob_puts(ob, "\"name\":");
	ob_json_cstr(ob, ev->name);
	ob_puts(ob, ",\"cat\":\"ftrace\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	ob_us(ob, ev->ts);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, ev->tid, 0);
	ob_puts(ob, ",\"args\":{\"cpu\":");
	ob_u64(ob, ev->cpu, 0, ' ');
	{
		char full[160];

		snprintf(full, sizeof(full), "%s:%s", ev->system, ev->name);
		ob_puts(ob, ",\"event\":");
		ob_json_cstr(ob, full);
	}
	if (ev->missed_mark) {
		/* The kernel's mark: events lost before this one here. */
		ob_puts(ob, ",\"dropped_before\":");
		if (ev->missed)
			ob_u64(ob, ev->missed, 0, ' ');
		else
			ob_puts(ob, "\"unknown\"");
		e->nr_ftrace_dropped++;
	}
	err = tdat_ev_fields(e->td, put_ftrace_field, e);
	ob_puts(ob, "}}");
	e->nr_ftrace++;
	return err ? err : e->ob.err;
}

static void td_pull(struct exp *e)
{
	int r = tdat_lines_next_ev(e->td, &e->td_ev);

	e->td_have = r > 0;
	if (r < 0)
		e->td_err = r;
}

/* The trace.dat's events before @ts (UINT64_MAX: every one left) out. */
static int td_until(struct exp *e, uint64_t ts)
{
	while (e->td && e->td_have && e->td_ev.ts < ts) {
		int err = chrome_ftrace(e, &e->td_ev);

		if (err)
			return err;
		td_pull(e);
	}
	return 0;
}

/* Whether the perf.data records sched:sched_switch itself (then its
 * samples make the slices, not the trace.dat's copy). */
static bool perf_has_switch(struct prd_file *f)
{
	for (uint32_t i = 0; f && i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);
		const char *name;

		if (!a || a->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		name = prd_tracepoint_name(f, a->attr.config);
		if (!name)
			name = a->name;
		if (name && !strcmp(name, "sched:sched_switch"))
			return true;
	}
	return false;
}

/* The trace clock that reads as the perf.data's clock. */
static const char *perf_trace_clock(struct prd_file *f)
{
	const struct prd_attr *a = prd_nr_attrs(f) ? prd_attr(f, 0) : NULL;

	if (!a || !a->attr.use_clockid)
		return "local";
	switch (a->attr.clockid) {
	case 1: /* CLOCK_MONOTONIC */
		return "mono";
	case 4: /* CLOCK_MONOTONIC_RAW */
		return "mono_raw";
	case 7: /* CLOCK_BOOTTIME */
		return "boot";
	default:
		return NULL;
	}
}

static int td_open(struct exp *e, const char *path)
{
	const char *fmt;
	size_t len;
	int err = tdat_lines_open(path, &e->td);

	if (err) {
		pr_err("export: %s: %s", path, strerror(-err));
		return err;
	}
	e->td_path = path;
	fmt = tdat_lines_format(e->td, "sched", "sched_switch", &len);
	if (fmt && !perf_has_switch(e->f)) {
		parse_fields(&e->tss, fmt, len);
		e->tss.have = e->tss.prev_pid.size && e->tss.next_pid.size;
		e->td_slices = e->tss.have;
	}
	if (e->f) {
		const char *want = perf_trace_clock(e->f);
		const char *have = tdat_lines_clock(e->td);

		/* perf's default clock is local_clock(), what ftrace's
		 * "local" and "perf" clocks read. */
		if (!want || (strcmp(have, want) && !(!strcmp(want, "local") &&
						      !strcmp(have, "perf"))))
			pr_warn("export: %s was recorded with the %s trace clock, the perf.data with %s: their times do not line up",
				path, have[0] ? have : "(unknown)",
				want ? want : "another clock");
	}
	td_pull(e);
	return 0;
}

static void chrome_begin(struct exp *e)
{
	ob_puts(&e->ob, "{\"traceEvents\":[");
}

/* "samples" (copied from the temporary file) and "stackFrames". */
static void chrome_stacks_out(struct exp *e)
{
	struct outbuf *ob = &e->ob;
	char buf[1 << 16];
	size_t n;

	ob_flush(&e->sob);
	if (e->sob.err || fflush(e->samples_tmp) ||
	    fseek(e->samples_tmp, 0, SEEK_SET)) {
		pr_err("export: the samples' temporary file: %s",
		       strerror(e->sob.err ? -e->sob.err : errno));
		return;
	}
	ob_puts(ob, "\"samples\":[");
	while ((n = fread(buf, 1, sizeof(buf), e->samples_tmp)) > 0) {
		ob_write(ob, buf, n);
		ob_line_done(ob);
	}
	ob_puts(ob, "\n],\n\"stackFrames\":{");
	for (uint32_t id = 1; id <= e->frames.nr; id++) {
		size_t len, cl;
		const char *k = itab_key(&e->frames, id, &len);
		uint32_t parent;

		memcpy(&parent, k, sizeof(parent));
		k += sizeof(parent);
		len -= sizeof(parent);
		cl = strnlen(k, len);
		ob_puts(ob, id > 1 ? ",\n\"" : "\n\"");
		ob_u64(ob, id, 0, ' ');
		ob_puts(ob, "\":{\"name\":");
		ob_json_str(ob, k + cl + 1, len - cl - 1);
		ob_puts(ob, ",\"category\":");
		ob_json_str(ob, k, cl);
		if (parent) {
			ob_puts(ob, ",\"parent\":\"");
			ob_u64(ob, parent, 0, ' ');
			ob_putc(ob, '"');
		}
		ob_putc(ob, '}');
		ob_line_done(ob);
	}
	ob_puts(ob, "\n},\n");
}

static void chrome_end(struct exp *e)
{
	struct outbuf *ob = &e->ob;

	/* Still running at the end: up to the last time seen. */
	for (uint32_t c = 0; c < e->nr_cpus; c++)
		if (e->cpus[c].active && e->last_time > e->cpus[c].start)
			put_slice(e, &e->cpus[c], c, e->last_time, NULL, NULL,
				  0);
	/* Names that changed after they were first written (exec). */
	for (struct thread *t = machine_threads(&e->m); t; t = t->all_next) {
		struct tstate *ts = t->priv;
		const char *name = thread_name(t);

		if (!ts)
			continue;
		if (ts->named && strcmp(ts->named_comm, name)) {
			put_meta(e, "thread_name", ts->named_pid, t->tid, name);
			ts->named_comm = name;
		}
		if (ts->proc_named && strcmp(ts->proc_comm, name)) {
			put_meta(e, "process_name", t->tid, t->tid, name);
			ts->proc_comm = name;
		}
	}
	ob_puts(ob, "\n],\n");
	if (e->nr_stack_samples)
		chrome_stacks_out(e);
	ob_puts(ob, "\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"title\":");
	ob_json_cstr(ob, e->title ? e->title : "perfring");
	ob_puts(ob, ",\"generator\":\"perfring export\",\"samples\":");
	ob_u64(ob, e->nr_samples, 0, ' ');
	ob_puts(ob, ",\"slices\":");
	ob_u64(ob, e->nr_slices, 0, ' ');
	ob_puts(ob, ",\"cpu_slices\":");
	ob_u64(ob, e->nr_cpu_slices, 0, ' ');
	ob_puts(ob, ",\"counter_events\":");
	ob_u64(ob, e->nr_counters, 0, ' ');
	ob_puts(ob, ",\"stack_samples\":");
	ob_u64(ob, e->nr_stack_samples, 0, ' ');
	ob_puts(ob, ",\"stack_frames\":");
	ob_u64(ob, e->frames.nr, 0, ' ');
	if (e->td) {
		ob_puts(ob, ",\"trace_dat\":");
		ob_json_cstr(ob, e->td_path);
		ob_puts(ob, ",\"ftrace_events\":");
		ob_u64(ob, e->nr_ftrace, 0, ' ');
		ob_puts(ob, ",\"ftrace_dropped_marks\":");
		ob_u64(ob, e->nr_ftrace_dropped, 0, ' ');
	}
	if (e->f) {
		const char *s = prd_feature_string(e->f, PRD_FEAT_HOSTNAME);

		if (s) {
			ob_puts(ob, ",\"hostname\":");
			ob_json_cstr(ob, s);
		}
		s = prd_feature_string(e->f, PRD_FEAT_OSRELEASE);
		if (s) {
			ob_puts(ob, ",\"os-release\":");
			ob_json_cstr(ob, s);
		}
	}
	ob_puts(ob, "}}\n");
}

/* ---- stacks ---------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int tab_grow(struct exp *e)
{
	size_t n = e->tab ? (e->tab_mask + 1) * 2 : 4096;
	struct stk *v = calloc(n, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; e->tab && i <= e->tab_mask; i++) {
		struct stk *o = &e->tab[i];
		size_t j;

		if (!o->key)
			continue;
		for (j = o->hash & (n - 1); v[j].key; j = (j + 1) & (n - 1))
			;
		v[j] = *o;
	}
	free(e->tab);
	e->tab = v;
	e->tab_mask = n - 1;
	return 0;
}

static int tab_add(struct exp *e, const char *key, size_t len, bool force,
		   uint64_t weight, enum offcpu_kind kind)
{
	uint64_t h;
	size_t j;
	struct stk *s;

	if (!e->tab || (e->tab_nr + 1) * 2 > e->tab_mask + 1) {
		int err = tab_grow(e);

		if (err)
			return err;
	}
	h = hash_bytes(key, len);
	for (j = h & e->tab_mask; e->tab[j].key; j = (j + 1) & e->tab_mask) {
		s = &e->tab[j];
		if (s->hash == h && s->len == len &&
		    !memcmp(s->key, key, len)) {
			s->count += weight;
			s->off += kind == OFFCPU_BLOCKED ? weight : 0;
			s->runq += kind == OFFCPU_PREEMPTED ? weight : 0;
			return 0;
		}
	}
	if (!force &&
	    (e->tab_nr >= MAX_STACKS || e->tab_bytes + len > MAX_STACK_BYTES)) {
		static const char other[] = "[too many distinct stacks]";

		if (!e->tab_full_warned) {
			e->tab_full_warned = true;
			pr_warn("export: over %u distinct stacks or %u MiB of them: the rest are counted as \"%s\"",
				MAX_STACKS, MAX_STACK_BYTES >> 20, other);
		}
		return tab_add(e, other, sizeof(other) - 1, true, weight, kind);
	}
	s = &e->tab[j];
	s->key = malloc(len + 1);
	if (!s->key)
		return -ENOMEM;
	memcpy(s->key, key, len);
	s->key[len] = 0;
	s->len = (uint32_t)len;
	s->hash = h;
	s->count = weight;
	s->off = kind == OFFCPU_BLOCKED ? weight : 0;
	s->runq = kind == OFFCPU_PREEMPTED ? weight : 0;
	e->tab_nr++;
	e->tab_bytes += len;
	return 0;
}

/* Appends @n bytes of a name to the key: ';' (the separator) becomes ':',
 * control characters '?', and in comms spaces '_' (stackcollapse-perf). */
static void key_put(struct exp *e, const char *s, size_t n, bool comm)
{
	if (e->key_len >= MAX_KEY)
		return;
	if (n > MAX_KEY - e->key_len)
		n = MAX_KEY - e->key_len;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == ';')
			c = ':';
		else if ((unsigned char)c < 0x20 || c == 0x7f)
			c = '?';
		else if (comm && c == ' ')
			c = '_';
		e->key[e->key_len++] = c;
	}
}

static void key_puts(struct exp *e, const char *s)
{
	key_put(e, s, strlen(s), false);
}

/* A frame's name as folded stacks and the chrome export give it: the
 * symbol, else "[dso]", else "[unknown]". */
static void key_frame_name(struct exp *e, const struct addr_loc *al)
{
	if (al->sym) {
		key_puts(e, al->sym->name);
	} else if (al->dso) {
		key_puts(e, "[");
		key_puts(e, al->dso->short_name ? al->dso->short_name :
						  al->dso->name);
		key_puts(e, "]");
	} else {
		key_puts(e, "[unknown]");
	}
}

static void key_frame(struct exp *e, const struct addr_loc *al)
{
	if (e->key_len < MAX_KEY)
		e->key[e->key_len++] = ';';
	key_frame_name(e, al);
	if (al->kernel && (al->sym || al->dso))
		key_puts(e, "_[k]");
}

static int locs_room(struct exp *e, uint64_t need)
{
	if (need > e->nr_locs_cap) {
		struct addr_loc *v =
			realloc(e->locs, (size_t)need * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->locs = v;
		e->nr_locs_cap = (size_t)need;
	}
	return 0;
}

/* The entries of a callchain (@nr u64 at @chain, maybe unaligned: an
 * offcpu-waker's payload) resolved in the mode of each context marker,
 * leaf first, into e->locs from *@n on. */
static void resolve_chain(struct exp *e, struct thread *t, const void *chain,
			  uint64_t nr, size_t *n)
{
	uint8_t mode = 0; /* before a context marker: guess */

	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip;

		memcpy(&ip, (const char *)chain + i * sizeof(ip), sizeof(ip));
		if (callchain_marker(ip, &mode))
			continue;
		machine_resolve(&e->m, t, mode, ip, true, &e->locs[(*n)++]);
	}
}

/* The frames of a sample, leaf first, into e->locs[0..*n): its callchain
 * resolved in the mode of each context marker, then (--call-graph dwarf)
 * the user frames unwound below it, or its ip alone. */
static int resolve_stack(struct exp *e, const struct prd_event *ev,
			 struct thread *t, size_t *n)
{
	const struct prd_sample *s = ev->sample;
	uint8_t cpumode = ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint64_t user[UNWIND_MAX_FRAMES];
	unsigned nr_user;
	int err;

	*n = 0;
	nr_user = unwind_user_stack(&e->m, t, s, user, UNWIND_MAX_FRAMES);
	err = locs_room(
		e, s->nr_callchain + nr_user ? s->nr_callchain + nr_user : 1);
	if (err)
		return err;
	resolve_chain(e, t, s->callchain, s->nr_callchain, n);
	for (unsigned i = 0; i < nr_user; i++)
		machine_resolve(&e->m, t, PERF_RECORD_MISC_USER, user[i], true,
				&e->locs[(*n)++]);
	if (!*n)
		machine_resolve(&e->m, t, cpumode, s->ip, true,
				&e->locs[(*n)++]);
	return 0;
}

static bool clock_event(const struct prd_attr *a)
{
	return a && a->attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		a->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

static enum offcpu_kind sample_offcpu(const struct prd_sample *s)
{
	const struct prd_attr *a = s->attr;

	return a ? offcpu_kind_of(a->attr.type, a->attr.config, a->name) :
		   OFFCPU_NONE;
}

/* What a sample adds to its stack's count, 0 to leave it out: -e's event
 * only (an off-CPU event's ns, else 1 a sample); in the wall-time svg the
 * ns of the clock events and the blocked and preempted time; otherwise 1
 * a sample, the off-CPU events left out (their counts are ns). */
static uint64_t stack_weight(struct exp *e, const struct prd_sample *s,
			     enum offcpu_kind kind)
{
	const struct prd_attr *a = s->attr;

	if (e->event)
		return a && a->name && !strcmp(a->name, e->event) ?
			       (kind ? s->period : 1) :
			       0;
	if (e->wall)
		return kind == OFFCPU_BLOCKED || kind == OFFCPU_PREEMPTED ||
				       clock_event(a) ?
			       s->period :
			       0;
	return kind ? 0 : 1;
}

/*
 * --wakers, bcc's offwaketime -f: "comm;blocked stack (root first);--;
 * waker stack (leaf first);waker comm ns" per offcpu-waker sample: the
 * blocked chain is in its payload, the waker's is its own.
 */
static int waker_sample(struct exp *e, const struct prd_event *ev)
{
	const struct prd_sample *s = ev->sample;
	struct offcpu_waker_raw w;
	struct thread *wakee, *waker;
	const void *chain;
	size_t n = 0;
	int err;

	if (offcpu_waker_parse(s->raw, s->raw_size, &w, &chain))
		return 0; /* not ours, or damaged: left out */
	wakee = machine_findnew_thread(&e->m, w.wakee_pid, w.wakee_tid);
	waker = machine_findnew_thread(&e->m, (int32_t)s->pid, (int32_t)s->tid);
	if (!wakee || !waker)
		return -ENOMEM;
	e->key_len = 0;
	key_put(e, wakee->comm, strlen(wakee->comm), true);
	err = locs_room(e, w.nr ? w.nr : 1);
	if (err)
		return err;
	resolve_chain(e, wakee, chain, w.nr, &n);
	for (size_t i = n; i-- > 0;)
		key_frame(e, &e->locs[i]);
	if (e->key_len < MAX_KEY)
		e->key[e->key_len++] = ';';
	key_puts(e, "--");
	err = resolve_stack(e, ev, waker, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		key_frame(e, &e->locs[i]);
	if (e->key_len < MAX_KEY)
		e->key[e->key_len++] = ';';
	key_put(e, waker->comm, strlen(waker->comm), true);
	return tab_add(e, e->key, e->key_len, false, s->period, OFFCPU_WAKER);
}

static int stack_sample(struct exp *e, const struct prd_event *ev)
{
	const struct prd_sample *s = ev->sample;
	enum offcpu_kind kind = sample_offcpu(s);
	uint64_t weight;
	struct thread *t;
	const char *comm;
	size_t n;
	int err;

	if (!e->key) {
		e->key = malloc(MAX_KEY);
		if (!e->key)
			return -ENOMEM;
	}
	if (e->wakers)
		return kind == OFFCPU_WAKER ? waker_sample(e, ev) : 0;
	weight = stack_weight(e, s, kind);
	if (!weight)
		return 0;
	t = machine_findnew_thread(&e->m, (int32_t)s->pid, (int32_t)s->tid);
	if (!t)
		return -ENOMEM;
	e->key_len = 0;
	comm = t->comm;
	key_put(e, comm, strlen(comm), true);
	err = resolve_stack(e, ev, t, &n);
	if (err)
		return err;
	/* Root first. */
	for (size_t i = n; i-- > 0;)
		key_frame(e, &e->locs[i]);
	return tab_add(e, e->key, e->key_len, false, weight, kind);
}

/*
 * Stack order: byte order with the separator below every other byte, so
 * that the stacks under one frame sort together ("a;b", "a;b;c", "a;b!").
 */
static int cmp_key(const void *pa, const void *pb)
{
	const struct stk *a = *(const struct stk *const *)pa;
	const struct stk *b = *(const struct stk *const *)pb;
	size_t n = a->len < b->len ? a->len : b->len;

	for (size_t i = 0; i < n; i++) {
		int ca = a->key[i] == ';' ? 0 : (unsigned char)a->key[i] + 1;
		int cb = b->key[i] == ';' ? 0 : (unsigned char)b->key[i] + 1;

		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	return a->len < b->len ? -1 : a->len > b->len;
}

static struct stk **sorted_stacks(struct exp *e)
{
	struct stk **v = malloc((e->tab_nr ? e->tab_nr : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; e->tab && i <= e->tab_mask; i++)
		if (e->tab[i].key)
			v[k++] = &e->tab[i];
	qsort(v, k, sizeof(*v), cmp_key);
	return v;
}

static int folded_out(struct exp *e)
{
	struct stk **v = sorted_stacks(e);
	struct outbuf *ob = &e->ob;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < e->tab_nr; i++) {
		ob_write(ob, v[i]->key, v[i]->len);
		ob_putc(ob, ' ');
		ob_u64(ob, v[i]->count, 0, ' ');
		ob_putc(ob, '\n');
		ob_line_done(ob);
	}
	free(v);
	return 0;
}

/* ---- svg ------------------------------------------------------------- */

#define SVG_FRAME_H 16
#define SVG_FONT 12
#define SVG_FONT_W 0.59
#define SVG_XPAD 10
#define SVG_YPAD1 (SVG_FONT * 3)
#define SVG_YPAD2 (SVG_FONT * 2 + 10)
#define SVG_MINW 0.1

/* flamegraph.pl's namehash(): a stable number in [0, 1] from a name. */
static double namehash(const char *s, size_t n, bool reverse)
{
	double vector = 0, weight = 1, max = 1;
	int mod = 10;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[reverse ? n - 1 - i : i];

		vector += (double)(c % mod) / (mod - 1) * weight;
		mod++;
		max += weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
	return 1 - vector / max;
}

struct frame {
	uint32_t off, len; /* in the stack's key */
};

struct svg {
	struct exp *e;
	double wpt; /* pixels per sample */
	uint64_t total;
	uint32_t height;
	bool ns; /* counts are nanoseconds (off-CPU time, the wall graph) */
};

/* Of a frame's width: what was blocked and what waited to run. */
struct frame_share {
	uint64_t off, runq;
};

static void svg_frame(struct svg *g, const char *name, size_t len,
		      uint32_t depth, uint64_t start, uint64_t end,
		      struct frame_share sh)
{
	struct outbuf *ob = &g->e->ob;
	double x1 = SVG_XPAD + (double)start * g->wpt;
	double w = (double)(end - start) * g->wpt;
	double y1 = (double)g->height - SVG_YPAD2 -
		    (double)(depth + 1) * SVG_FRAME_H + 1;
	double v1, v2;
	unsigned int r, gr, b;
	long chars;

	if (w < SVG_MINW)
		return;
	v1 = namehash(name, len, false);
	v2 = namehash(name, len, true);
	if (2 * sh.off > end - start) {
		r = 80 + (unsigned int)(60 * v1); /* off-CPU: blue */
		gr = r;
		b = 190 + (unsigned int)(55 * v2);
	} else if (2 * sh.runq > end - start) {
		r = 50 + (unsigned int)(60 * v1); /* run queue: aqua */
		gr = 165 + (unsigned int)(55 * v1);
		b = gr;
	} else if (len > 4 && !memcmp(name + len - 4, "_[k]", 4)) {
		r = 190 + (unsigned int)(65 * v1); /* kernel: orange */
		gr = 90 + (unsigned int)(65 * v1);
		b = 0;
	} else {
		r = 205 + (unsigned int)(50 * v2);
		gr = (unsigned int)(230 * v1);
		b = (unsigned int)(55 * v2);
	}
	ob_puts(ob, "<g><title>");
	ob_xml_str(ob, name, len);
	ob_puts(ob, " (");
	if (g->ns) {
		ob_fixed(ob, (double)(end - start) / 1e6, 3);
		ob_puts(ob, " ms");
		if (sh.off) {
			ob_puts(ob, ", off-CPU ");
			ob_fixed(ob, (double)sh.off / 1e6, 3);
			ob_puts(ob, " ms");
		}
		if (sh.runq) {
			ob_puts(ob, ", preempted ");
			ob_fixed(ob, (double)sh.runq / 1e6, 3);
			ob_puts(ob, " ms");
		}
		ob_puts(ob, ", ");
	} else {
		ob_u64(ob, end - start, 0, ' ');
		ob_puts(ob, end - start == 1 ? " sample, " : " samples, ");
	}
	ob_fixed(ob, (double)(end - start) * 100.0 / (double)g->total, 2);
	ob_puts(ob, "%)</title><rect x=\"");
	ob_fixed(ob, x1, 2);
	ob_puts(ob, "\" y=\"");
	ob_fixed(ob, y1, 1);
	ob_puts(ob, "\" width=\"");
	ob_fixed(ob, w, 2);
	ob_puts(ob, "\" height=\"");
	ob_u64(ob, SVG_FRAME_H - 1, 0, ' ');
	ob_puts(ob, "\" fill=\"rgb(");
	ob_u64(ob, r, 0, ' ');
	ob_putc(ob, ',');
	ob_u64(ob, gr, 0, ' ');
	ob_putc(ob, ',');
	ob_u64(ob, b, 0, ' ');
	ob_puts(ob, ")\" rx=\"2\" ry=\"2\"/><text x=\"");
	ob_fixed(ob, x1 + 3, 2);
	ob_puts(ob, "\" y=\"");
	ob_fixed(ob, y1 + (SVG_FRAME_H - 1) / 2.0 + 4, 1);
	ob_puts(ob, "\">");
	chars = (long)(w / (SVG_FONT * SVG_FONT_W));
	if (chars >= 3) {
		if ((size_t)chars >= len) {
			ob_xml_str(ob, name, len);
		} else {
			size_t k = (size_t)chars - 2;

			/* Not inside a UTF-8 sequence. */
			while (k && ((unsigned char)name[k] & 0xc0) == 0x80)
				k--;
			ob_xml_str(ob, name, k);
			ob_puts(ob, "..");
		}
	}
	ob_puts(ob, "</text></g>\n");
	ob_line_done(ob);
}

static const char svg_script[] =
	"var W, XPAD = 10, FS = 12, CW = 0.59, details, unzoombtn, nodes = [];\n"
	"function init(evt) {\n"
	"\tW = parseFloat(document.documentElement.getAttribute(\"width\"));\n"
	"\tdetails = document.getElementById(\"details\").firstChild;\n"
	"\tunzoombtn = document.getElementById(\"unzoom\");\n"
	"\tunzoombtn.addEventListener(\"click\", unzoom);\n"
	"\tvar gs = document.getElementById(\"frames\").getElementsByTagName(\"g\");\n"
	"\tfor (var i = 0; i < gs.length; i++) {\n"
	"\t\tvar g = gs[i], r = g.getElementsByTagName(\"rect\")[0];\n"
	"\t\tvar ti = g.getElementsByTagName(\"title\")[0].textContent;\n"
	"\t\tnodes.push({ g: g, r: r, t: g.getElementsByTagName(\"text\")[0],\n"
	"\t\t\tx: parseFloat(r.getAttribute(\"x\")), w: parseFloat(r.getAttribute(\"width\")),\n"
	"\t\t\ty: parseFloat(r.getAttribute(\"y\")), title: ti,\n"
	"\t\t\tname: ti.replace(/ \\([^()]*\\)$/, \"\") });\n"
	"\t\tg.fgi = i;\n"
	"\t\tg.addEventListener(\"mouseover\", function () { details.nodeValue = nodes[this.fgi].title; });\n"
	"\t\tg.addEventListener(\"mouseout\", function () { details.nodeValue = \" \"; });\n"
	"\t\tg.addEventListener(\"click\", function () { zoom(nodes[this.fgi]); });\n"
	"\t}\n"
	"}\n"
	"function label(n, w) {\n"
	"\tvar c = Math.floor(w / (FS * CW));\n"
	"\tif (c < 3) return \"\";\n"
	"\treturn n.name.length <= c ? n.name : n.name.substring(0, c - 2) + \"..\";\n"
	"}\n"
	"function place(n, x, w) {\n"
	"\tn.r.setAttribute(\"x\", x.toFixed(2));\n"
	"\tn.r.setAttribute(\"width\", w.toFixed(2));\n"
	"\tn.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"\tn.t.textContent = label(n, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"\tvar ratio = (W - 2 * XPAD) / z.w, eps = 0.001;\n"
	"\tunzoombtn.classList.remove(\"hide\");\n"
	"\tfor (var i = 0; i < nodes.length; i++) {\n"
	"\t\tvar n = nodes[i];\n"
	"\t\tn.g.classList.remove(\"hide\");\n"
	"\t\tn.g.classList.remove(\"parent\");\n"
	"\t\tif (n.y > z.y && n.x <= z.x + eps && n.x + n.w >= z.x + z.w - eps) {\n"
	"\t\t\tn.g.classList.add(\"parent\");\n"
	"\t\t\tplace(n, XPAD, W - 2 * XPAD);\n"
	"\t\t} else if (n.y <= z.y && n.x >= z.x - eps && n.x + n.w <= z.x + z.w + eps) {\n"
	"\t\t\tplace(n, XPAD + (n.x - z.x) * ratio, n.w * ratio);\n"
	"\t\t} else {\n"
	"\t\t\tn.g.classList.add(\"hide\");\n"
	"\t\t}\n"
	"\t}\n"
	"}\n"
	"function unzoom() {\n"
	"\tunzoombtn.classList.add(\"hide\");\n"
	"\tfor (var i = 0; i < nodes.length; i++) {\n"
	"\t\tvar n = nodes[i];\n"
	"\t\tn.g.classList.remove(\"hide\");\n"
	"\t\tn.g.classList.remove(\"parent\");\n"
	"\t\tplace(n, n.x, n.w);\n"
	"\t}\n"
	"}\n";

/* Splits @s into frames (after the first, which is the comm: all of
 * them, the comm included). */
static uint32_t split_frames(const struct stk *s, struct frame *fr)
{
	uint32_t n = 0, start = 0;

	for (uint32_t i = 0; i <= s->len; i++)
		if (i == s->len || s->key[i] == ';') {
			fr[n].off = start;
			fr[n].len = i - start;
			n++;
			start = i + 1;
		}
	return n;
}

static int svg_out(struct exp *e)
{
	struct stk **v = sorted_stacks(e);
	struct outbuf *ob = &e->ob;
	struct frame *cur = NULL, *last = NULL;
	uint64_t *starts = NULL;
	/* the blocked and preempted time so far, and at each frame's start */
	struct frame_share done = { 0, 0 }, *sstarts = NULL;
	uint32_t maxd = 0, nlast = 0;
	const struct stk *lastk = NULL;
	struct svg g = { .e = e, .ns = e->ns };
	unsigned int width = e->width ? e->width : 1200;
	uint64_t x = 0;
	int err = -ENOMEM;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < e->tab_nr; i++) {
		uint32_t d = 1;

		for (uint32_t k = 0; k < v[i]->len; k++)
			d += v[i]->key[k] == ';';
		if (d > maxd)
			maxd = d;
		g.total += v[i]->count;
	}
	cur = malloc((size_t)(maxd + 1) * sizeof(*cur));
	last = malloc((size_t)(maxd + 1) * sizeof(*last));
	starts = malloc((size_t)(maxd + 1) * sizeof(*starts));
	sstarts = malloc((size_t)(maxd + 1) * sizeof(*sstarts));
	if (!cur || !last || !starts || !sstarts)
		goto out;
	g.height = (maxd + 1) * SVG_FRAME_H + SVG_YPAD1 + SVG_YPAD2;
	g.wpt = g.total ? (double)(width - 2 * SVG_XPAD) / (double)g.total : 0;

	ob_puts(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" width=\"");
	ob_u64(ob, width, 0, ' ');
	ob_puts(ob, "\" height=\"");
	ob_u64(ob, g.height, 0, ' ');
	ob_puts(ob, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	ob_u64(ob, width, 0, ' ');
	ob_putc(ob, ' ');
	ob_u64(ob, g.height, 0, ' ');
	ob_puts(ob,
		"\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		"<!-- Flame graph drawn by perfring export: one rectangle per frame, as wide as its samples; hover for details, click to zoom. -->\n"
		"<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
		"</linearGradient></defs>\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: 17px; }\n"
		"#unzoom { cursor: pointer; }\n"
		"#frames > g { cursor: pointer; }\n"
		"#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }\n"
		"#frames text { pointer-events: none; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n");
	ob_puts(ob, svg_script);
	ob_puts(ob, "]]></script>\n<rect x=\"0\" y=\"0\" width=\"");
	ob_u64(ob, width, 0, ' ');
	ob_puts(ob, "\" height=\"");
	ob_u64(ob, g.height, 0, ' ');
	ob_puts(ob, "\" fill=\"url(#background)\"/>\n<text id=\"title\" x=\"");
	ob_u64(ob, width / 2, 0, ' ');
	ob_puts(ob, "\" y=\"24\">");
	{
		const char *t = e->title ? e->title : "Flame Graph";

		ob_xml_str(ob, t, strlen(t));
	}
	ob_puts(ob,
		"</text>\n<text id=\"unzoom\" class=\"hide\" x=\"10\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"details\" x=\"10\" y=\"");
	ob_u64(ob, g.height - 17, 0, ' ');
	ob_puts(ob, "\"> </text>\n<g id=\"frames\">\n");

	/* flamegraph.pl's flow(): frames end where the next stack differs. */
	for (size_t i = 0; i < e->tab_nr; i++) {
		uint32_t n = split_frames(v[i], cur), same = 0;

		while (same < n && same < nlast &&
		       cur[same].len == last[same].len &&
		       !memcmp(v[i]->key + cur[same].off,
			       lastk->key + last[same].off, cur[same].len))
			same++;
		for (uint32_t d = nlast; d-- > same;)
			svg_frame(&g, lastk->key + last[d].off, last[d].len,
				  d + 1, starts[d], x,
				  (struct frame_share){
					  done.off - sstarts[d].off,
					  done.runq - sstarts[d].runq });
		for (uint32_t d = same; d < n; d++) {
			starts[d] = x;
			sstarts[d] = done;
		}
		x += v[i]->count;
		done.off += v[i]->off;
		done.runq += v[i]->runq;
		memcpy(last, cur, (size_t)n * sizeof(*cur));
		nlast = n;
		lastk = v[i];
	}
	for (uint32_t d = nlast; d-- > 0;)
		svg_frame(&g, lastk->key + last[d].off, last[d].len, d + 1,
			  starts[d], x,
			  (struct frame_share){ done.off - sstarts[d].off,
						done.runq - sstarts[d].runq });
	if (g.total)
		svg_frame(&g, "all", 3, 0, 0, g.total, done);
	ob_puts(ob, "</g>\n</svg>\n");
	err = 0;
out:
	free(cur);
	free(last);
	free(starts);
	free(sstarts);
	free(v);
	return err;
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
		parse_sched_switch(&e->ss, td, len);
	if (!e->ss.have)
		ss_default(&e->ss);
}

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct exp *e = ctx;
	int err;

	(void)f;
	if (ev->sample && ev->sample->time != UINT64_MAX &&
	    !offcpu_summed_time(ev->sample->time)) {
		/* The trace.dat's events before it go first. */
		err = td_until(e, ev->sample->time);
		if (err)
			return err;
		if (ev->sample->time > e->last_time)
			e->last_time = ev->sample->time;
	}
	if (ev->hdr->type != PERF_RECORD_SAMPLE)
		return machine_process(&e->m, ev->hdr);
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
	    sample_offcpu(ev->sample) == OFFCPU_WAKER)
		return 0; /* the blocked time again, at the wakers' stacks */
	if (e->fmt == FMT_PPROF) {
		struct thread *t =
			machine_findnew_thread(&e->m, (int32_t)ev->sample->pid,
					       (int32_t)ev->sample->tid);

		err = t ? pprof_add(e->pprof, &e->m, t, ev) : -ENOMEM;
	} else if (e->fmt == FMT_CHROME) {
		err = chrome_sample(e, ev);
	} else {
		err = stack_sample(e, ev);
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
		chrome_begin(e);
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
		err = td_until(e, UINT64_MAX);
		if (!err && e->ob.err)
			err = e->ob.err;
	}
	if (!err && e->td_err == -EBADMSG)
		perr = e->td_err;
	else if (!err && e->td_err)
		err = e->td_err;
	if (!err || (e->fmt == FMT_CHROME && err != -ENOMEM)) {
		if (e->fmt == FMT_CHROME)
			chrome_end(e);
		else if (e->fmt == FMT_FOLDED)
			oerr = folded_out(e);
		else if (e->fmt == FMT_PPROF)
			oerr = pprof_write(e->pprof, &e->m, in, out);
		else
			oerr = svg_out(e);
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
	return tab_add(ctx, key, len, false, count, OFFCPU_NONE);
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
		err = e->fmt == FMT_FOLDED ? folded_out(e) : svg_out(e);
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
		err = td_open(&e, tdat);
	if (!err)
		err = export_run(&e, in ? in : tdat, out);
	if (e.f)
		prd_close(e.f);
	machine_exit(&e.m);
	exp_free(&e);
	return err;
}
