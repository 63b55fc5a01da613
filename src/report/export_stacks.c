// SPDX-License-Identifier: MIT
/*
 * `perfring export -f folded` and `-f svg`: the samples' stacks in a hash
 * table keyed by the stack string (export.c says how), written as
 * collapsed stacks or drawn as a flame graph.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export_internal.h"

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

int export_tab_add(struct exp *e, const char *key, size_t len, bool force,
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
		return export_tab_add(e, other, sizeof(other) - 1, true, weight,
				      kind);
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

void export_key_puts(struct exp *e, const char *s)
{
	key_put(e, s, strlen(s), false);
}

/* A frame's name as folded stacks and the chrome export give it: the
 * symbol, else "[dso]", else "[unknown]". */
void export_key_frame_name(struct exp *e, const struct addr_loc *al)
{
	if (al->sym) {
		export_key_puts(e, al->sym->name);
	} else if (al->dso) {
		export_key_puts(e, "[");
		export_key_puts(e, al->dso->short_name ? al->dso->short_name :
							 al->dso->name);
		export_key_puts(e, "]");
	} else {
		export_key_puts(e, "[unknown]");
	}
}

static void key_frame(struct exp *e, const struct addr_loc *al)
{
	if (e->key_len < MAX_KEY)
		e->key[e->key_len++] = ';';
	export_key_frame_name(e, al);
	if (al->kernel && (al->sym || al->dso))
		export_key_puts(e, "_[k]");
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
int export_resolve_stack(struct exp *e, const struct prd_event *ev,
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

enum offcpu_kind export_sample_offcpu(const struct prd_sample *s)
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
	export_key_puts(e, "--");
	err = export_resolve_stack(e, ev, waker, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		key_frame(e, &e->locs[i]);
	if (e->key_len < MAX_KEY)
		e->key[e->key_len++] = ';';
	key_put(e, waker->comm, strlen(waker->comm), true);
	return export_tab_add(e, e->key, e->key_len, false, s->period,
			      OFFCPU_WAKER);
}

int export_stack_sample(struct exp *e, const struct prd_event *ev)
{
	const struct prd_sample *s = ev->sample;
	enum offcpu_kind kind = export_sample_offcpu(s);
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
	err = export_resolve_stack(e, ev, t, &n);
	if (err)
		return err;
	/* Root first. */
	for (size_t i = n; i-- > 0;)
		key_frame(e, &e->locs[i]);
	return export_tab_add(e, e->key, e->key_len, false, weight, kind);
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

int export_folded_out(struct exp *e)
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
	export_xml_str(ob, name, len);
	ob_puts(ob, " (");
	if (g->ns) {
		export_put_fixed(ob, (double)(end - start) / 1e6, 3);
		ob_puts(ob, " ms");
		if (sh.off) {
			ob_puts(ob, ", off-CPU ");
			export_put_fixed(ob, (double)sh.off / 1e6, 3);
			ob_puts(ob, " ms");
		}
		if (sh.runq) {
			ob_puts(ob, ", preempted ");
			export_put_fixed(ob, (double)sh.runq / 1e6, 3);
			ob_puts(ob, " ms");
		}
		ob_puts(ob, ", ");
	} else {
		ob_u64(ob, end - start, 0, ' ');
		ob_puts(ob, end - start == 1 ? " sample, " : " samples, ");
	}
	export_put_fixed(ob, (double)(end - start) * 100.0 / (double)g->total,
			 2);
	ob_puts(ob, "%)</title><rect x=\"");
	export_put_fixed(ob, x1, 2);
	ob_puts(ob, "\" y=\"");
	export_put_fixed(ob, y1, 1);
	ob_puts(ob, "\" width=\"");
	export_put_fixed(ob, w, 2);
	ob_puts(ob, "\" height=\"");
	ob_u64(ob, SVG_FRAME_H - 1, 0, ' ');
	ob_puts(ob, "\" fill=\"rgb(");
	ob_u64(ob, r, 0, ' ');
	ob_putc(ob, ',');
	ob_u64(ob, gr, 0, ' ');
	ob_putc(ob, ',');
	ob_u64(ob, b, 0, ' ');
	ob_puts(ob, ")\" rx=\"2\" ry=\"2\"/><text x=\"");
	export_put_fixed(ob, x1 + 3, 2);
	ob_puts(ob, "\" y=\"");
	export_put_fixed(ob, y1 + (SVG_FRAME_H - 1) / 2.0 + 4, 1);
	ob_puts(ob, "\">");
	chars = (long)(w / (SVG_FONT * SVG_FONT_W));
	if (chars >= 3) {
		if ((size_t)chars >= len) {
			export_xml_str(ob, name, len);
		} else {
			size_t k = (size_t)chars - 2;

			/* Not inside a UTF-8 sequence. */
			while (k && ((unsigned char)name[k] & 0xc0) == 0x80)
				k--;
			export_xml_str(ob, name, k);
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

/* The flame graph's document up to its frames: size, style, script, the
 * background, the title and the details line. */
static void svg_head(struct outbuf *ob, const struct exp *e,
		     const struct svg *g, unsigned int width)
{
	ob_puts(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" width=\"");
	ob_u64(ob, width, 0, ' ');
	ob_puts(ob, "\" height=\"");
	ob_u64(ob, g->height, 0, ' ');
	ob_puts(ob, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	ob_u64(ob, width, 0, ' ');
	ob_putc(ob, ' ');
	ob_u64(ob, g->height, 0, ' ');
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
	ob_u64(ob, g->height, 0, ' ');
	ob_puts(ob, "\" fill=\"url(#background)\"/>\n<text id=\"title\" x=\"");
	ob_u64(ob, width / 2, 0, ' ');
	ob_puts(ob, "\" y=\"24\">");
	{
		const char *t = e->title ? e->title : "Flame Graph";

		export_xml_str(ob, t, strlen(t));
	}
	ob_puts(ob,
		"</text>\n<text id=\"unzoom\" class=\"hide\" x=\"10\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"details\" x=\"10\" y=\"");
	ob_u64(ob, g->height - 17, 0, ' ');
	ob_puts(ob, "\"> </text>\n<g id=\"frames\">\n");
}

int export_svg_out(struct exp *e)
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

	svg_head(ob, e, &g, width);

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
