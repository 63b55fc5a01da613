// SPDX-License-Identifier: MIT
/*
 * perf report's histogram (hist.c, sort.c): the --sort and -F keys, the
 * entries they make of samples (found through perf's entries_in tree,
 * hashed for lookups), how entries compare when they collapse and when
 * the table is ordered for output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/group_desc.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "../machine/inline.h"
#include "../machine/intern.h"
#include "../machine/srcline.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tpfmt.h"
#include "../tracepoint/tracedat_lines.h"
#include "../machine/filter.h"
#include "../format/header_print.h"
#include "stats.h"
#include "../format/sample_read.h"
#include "report_internal.h"

/* perf 6.1's sort dimensions (sort.c), each as ours: a key, a column, or
 * none.  perf matches a name against them as a case-insensitive prefix,
 * the first match winning: "s" and "sym" are symbol, "c" comm. */
struct perf_dim {
	const char *name;
	int col;
};

static const struct perf_dim perf_common_dims[] = {
	{ "pid", K_PID },
	{ "comm", K_COMM },
	{ "dso", K_DSO },
	{ "symbol", K_SYM },
	{ "parent", COL_UNIMPLEMENTED },
	{ "cpu", K_CPU },
	{ "socket", COL_UNIMPLEMENTED },
	{ "srcline", K_SRCLINE },
	{ "srcfile", K_SRCFILE },
	{ "local_weight", COL_UNIMPLEMENTED },
	{ "weight", COL_UNIMPLEMENTED },
	{ "transaction", COL_UNIMPLEMENTED },
	{ "trace", K_TRACE },
	{ "symbol_size", COL_UNIMPLEMENTED },
	{ "dso_size", COL_UNIMPLEMENTED },
	{ "cgroup", COL_UNIMPLEMENTED },
	{ "cgroup_id", COL_UNIMPLEMENTED },
	{ "ipc_null", COL_UNIMPLEMENTED },
	{ "time", COL_UNIMPLEMENTED },
	{ "code_page_size", COL_UNIMPLEMENTED },
	{ "local_ins_lat", COL_UNIMPLEMENTED },
	{ "ins_lat", COL_UNIMPLEMENTED },
	{ "local_p_stage_cyc", COL_UNIMPLEMENTED },
	{ "p_stage_cyc", COL_UNIMPLEMENTED },
	{ "addr", COL_UNIMPLEMENTED },
	{ NULL, 0 },
};

static const struct perf_dim perf_hpp_dims[] = {
	{ "overhead", COL_OVERHEAD },
	{ "overhead_sys", COL_UNIMPLEMENTED },
	{ "overhead_us", COL_UNIMPLEMENTED },
	{ "overhead_guest_sys", COL_UNIMPLEMENTED },
	{ "overhead_guest_us", COL_UNIMPLEMENTED },
	{ "overhead_children", COL_UNIMPLEMENTED },
	{ "sample", COL_SAMPLE },
	{ "period", COL_PERIOD },
	{ NULL, 0 },
};

/* branch (-b) and memory (--mem-mode) keys: none here */
static const char *const perf_other_dims[] = {
	"dso_from",	"dso_to",	"symbol_from",	  "symbol_to",
	"mispredict",	"abort",	"in_tx",	  "cycles",
	"srcline_from", "srcline_to",	"ipc_lbr",	  "addr_from",
	"addr_to",	"symbol_daddr", "dso_daddr",	  "locked",
	"tlb",		"mem",		"snoop",	  "dcacheline",
	"symbol_iaddr", "phys_daddr",	"data_page_size", "blocked",
	NULL,
};

static bool dim_matches(const char *tok, size_t n, const char *name)
{
	return n <= strlen(name) && !strncasecmp(tok, name, n);
}

static int dims_find(const struct perf_dim *d, const char *tok, size_t n,
		     const char **name)
{
	for (; d->name; d++)
		if (dim_matches(tok, n, d->name)) {
			*name = d->name;
			return d->col;
		}
	return COL_UNKNOWN;
}

/* @tok's column: perf's sort_dimension__add() tries the sort keys first,
 * its output_field_add() (-F, @field) the hpp columns first. */
static int perf_dim_find(const char *tok, size_t n, bool field,
			 const char **name)
{
	int c = dims_find(field ? perf_hpp_dims : perf_common_dims, tok, n,
			  name);

	if (c == COL_UNKNOWN)
		c = dims_find(field ? perf_common_dims : perf_hpp_dims, tok, n,
			      name);
	for (int i = 0; c == COL_UNKNOWN && perf_other_dims[i]; i++)
		if (dim_matches(tok, n, perf_other_dims[i])) {
			*name = perf_other_dims[i];
			c = COL_UNIMPLEMENTED;
		}
	return c;
}

/* -s (@field false) or -F: each name's column into @cols, once, in order
 * (perf's separators: comma and space). */
static int parse_cols(const char *list, bool field, int *cols, int *ncols)
{
	const char *opt = field ? "fields" : "sort";

	*ncols = 0;
	while (*list) {
		size_t n = strcspn(list, ", ");
		const char *name = "";
		int c = n ? perf_dim_find(list, n, field, &name) : MAX_COLS;
		bool dup = false;

		if (c == COL_UNKNOWN) {
			/* perf's words */
			pr_err("Unknown --%s key: `%.*s'", opt, (int)n, list);
			return -EINVAL;
		}
		if (c == COL_UNIMPLEMENTED || (!field && c >= K_MAX && n)) {
			pr_err("--%s %.*s: perf's %s, which perfring report does not implement (%s: pid, comm, dso, symbol, cpu, srcline, srcfile, trace%s)",
			       opt, (int)n, list, name,
			       field ? "fields" : "keys",
			       field ? ", overhead, sample, period" : "");
			return -EINVAL;
		}
		for (int i = 0; i < *ncols; i++)
			dup |= cols[i] == c;
		if (n && !dup && *ncols < MAX_COLS)
			cols[(*ncols)++] = c;
		list += n + (list[n] != '\0');
	}
	return 0;
}

static bool has_col(const int *cols, int n, int c)
{
	for (int i = 0; i < n; i++)
		if (cols[i] == c)
			return true;
	return false;
}

/*
 * -s and -F as perf's setup_sorting() takes them: with -F its fields are
 * the columns in order, then the -s keys it has not; the -s keys sort
 * first, then the fields (a strict -F puts no overhead before them).
 * The keys (the entries' identity) are the sort's, in its order.
 */
int report_parse_sort(struct report *r)
{
	const char *s = r->o.sort && *r->o.sort ? r->o.sort : NULL;
	const char *f = OPTS_GET(&r->o, fields, NULL);
	int sc[MAX_COLS], fc[MAX_COLS], ns = 0, nf = 0, err;

	if (f && !*f)
		f = NULL;
	err = parse_cols(s ? s : f ? "" : "comm,dso,sym", false, sc, &ns);
	if (!err && f)
		err = parse_cols(f, true, fc, &nf);
	if (err)
		return err;
	r->sort_given = s || f;
	/* perf's test is on the text: a --sort starting "sym", no -F */
	r->sort_sym_first = s && !f && !strncmp(s, "sym", 3);
	r->need_collapse = has_col(sc, ns, K_COMM);
	/* perf report: a --sort with "symbol" in it (case and all) gets
	 * perf's ipc_null key, a column of its own (that sorts nothing) */
	r->ipc_col = s && strstr(s, "symbol");
	r->fields = f;
	r->nkeys = 0;
	r->ncols = 0;
	r->nsorts = 0;
	if (f) {
		for (int i = 0; i < nf; i++)
			r->cols[r->ncols++] = fc[i];
		for (int i = 0; i < ns; i++)
			if (!has_col(fc, nf, sc[i]))
				r->cols[r->ncols++] = sc[i];
		if (r->ipc_col)
			r->cols[r->ncols++] = COL_IPC;
		for (int i = 0; i < ns; i++)
			r->sorts[r->nsorts++] = sc[i];
		if (r->ipc_col)
			r->sorts[r->nsorts++] = COL_IPC;
		for (int i = 0; i < nf; i++)
			if (!has_col(sc, ns, fc[i]))
				r->sorts[r->nsorts++] = fc[i];
		/* perf's strict -F: no -n or --show-total-period columns
		 * but its own */
		r->o.show_nr_samples = has_col(fc, nf, COL_SAMPLE);
		r->o.show_total_period = has_col(fc, nf, COL_PERIOD);
	} else {
		for (int i = 0; i < ns; i++)
			r->sorts[r->nsorts++] = sc[i];
	}
	for (int i = 0; i < r->nsorts; i++)
		if (r->sorts[i] < K_MAX)
			r->keys[r->nkeys++] = (enum sort_key)r->sorts[i];
	if (!r->nkeys) {
		/* perf: no keys, every sample in one entry */
		pr_err("%s%s: name the sort keys too (as overhead,comm,dso,sym)",
		       f ? "-F " : "--sort ",
		       f ? f :
		       s ? s :
			   "");
		return -EINVAL;
	}
	return 0;
}

bool report_has_key(const struct report *r, enum sort_key k)
{
	for (int i = 0; i < r->nkeys; i++)
		if (r->keys[i] == k)
			return true;
	return false;
}

static uint32_t mix(uint32_t h, uint64_t v)
{
	h ^= (uint32_t)v ^ (uint32_t)(v >> 32);
	return h * 16777619u;
}

static uint32_t entry_hash(const struct report *r, const struct hentry *e)
{
	uint32_t h = 2166136261u;

	if (report_has_key(r, K_COMM))
		for (uint32_t i = 0; i < e->comm_len; i++)
			h = (h ^ (unsigned char)e->comm[i]) * 16777619u;
	if (report_has_key(r, K_PID))
		h = mix(h, (uint32_t)e->tid);
	if (report_has_key(r, K_DSO))
		h = mix(h, (uintptr_t)e->dso);
	if (report_has_key(r, K_SYM))
		h = mix(h, e->sym ? (uintptr_t)e->sym : e->ip);
	if (report_has_key(r, K_TRACE))
		for (uint32_t i = 0; i < e->trace_len; i++)
			h = (h ^ (unsigned char)e->trace[i]) * 16777619u;
	if (report_has_key(r, K_CPU))
		h = mix(h, e->cpu);
	if (report_has_key(r, K_SRCLINE))
		h = mix(h, e->srcline);
	if (report_has_key(r, K_SRCFILE))
		h = mix(h, e->srcfile);
	return h;
}

bool hentry_eq(const struct report *r, const struct hentry *a,
	       const struct hentry *b)
{
	/* perf's pid key is the tid alone (one entry across an exec) */
	if (report_has_key(r, K_COMM) &&
	    (a->comm_len != b->comm_len ||
	     memcmp(a->comm, b->comm, a->comm_len)))
		return false;
	if (report_has_key(r, K_PID) && a->tid != b->tid)
		return false;
	if (report_has_key(r, K_CPU) && a->cpu != b->cpu)
		return false;
	/* perf's entries of one srcline (or srcfile) text collapse into
	 * one, whatever their addresses */
	if (report_has_key(r, K_SRCLINE) && a->srcline != b->srcline)
		return false;
	if (report_has_key(r, K_SRCFILE) && a->srcfile != b->srcfile)
		return false;
	if (report_has_key(r, K_DSO) && a->dso != b->dso)
		return false;
	if (report_has_key(r, K_SYM)) {
		if (a->sym != b->sym)
			return false;
		if (!a->sym && a->ip != b->ip)
			return false;
	}
	if (report_has_key(r, K_TRACE) &&
	    (a->trace_len != b->trace_len ||
	     (a->trace_len && memcmp(a->trace, b->trace, a->trace_len))))
		return false;
	return true;
}

struct hists *hists_of(struct report *r, const struct prd_attr *a)
{
	if (a->index >= r->nr_h) {
		uint32_t n = a->index + 1;
		struct hists *v = realloc(r->h, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + r->nr_h, 0, (n - r->nr_h) * sizeof(*v));
		r->h = v;
		r->nr_h = n;
	}
	return &r->h[a->index];
}

static int hists_grow(struct hists *h)
{
	uint32_t nmask = h->mask ? h->mask * 2 + 1 : 1023;
	struct hentry **t = calloc((size_t)nmask + 1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; h->tab && i <= h->mask; i++) {
		struct hentry *e = h->tab[i], *n;

		for (; e; e = n) {
			n = e->next;
			e->next = t[e->hash & nmask];
			t[e->hash & nmask] = e;
		}
	}
	free(h->tab);
	h->tab = t;
	h->mask = nmask;
	return 0;
}

static int64_t collapse_cmp(const struct report *r, const struct hentry *a,
			    const struct hentry *b);

/* The entry for @key in @h, created with zero counts: perf's
 * hists__findnew_entry(), a walk down entries_in. */
struct hentry *hists_findnew_entry(struct report *r, struct hists *h,
				   const struct hentry *key)
{
	uint32_t hash = entry_hash(r, key);
	struct rbn **link = &h->in_root, *parent = NULL;
	struct hentry *e;

	if (h->nr >= h->mask && hists_grow(h))
		return NULL;
	while (*link) {
		int64_t c;

		parent = *link;
		c = collapse_cmp(r, parent->e, key);
		if (!c) {
			/* perf found it by comparing every key */
			parent->e->src_known = 3;
			return parent->e;
		}
		link = c < 0 ? &parent->left : &parent->right;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	*e = *key;
	e->trace = NULL;
	if (key->trace_len) {
		e->trace = malloc(key->trace_len);
		if (!e->trace) {
			free(e);
			return NULL;
		}
		memcpy(e->trace, key->trace, key->trace_len);
	}
	e->self = e->children = e->nr_samples = 0;
	e->max_depth = 0;
	memset(&e->chain, 0, sizeof(e->chain));
	e->hash = hash;
	e->next = h->tab[hash & h->mask];
	h->tab[hash & h->mask] = e;
	e->serial = h->nr++;
	e->in_rb.e = e;
	rbn_link_fix(&h->in_root, &e->in_rb, parent, link);
	return e;
}

/* The entry for @key in @h, or NULL. */
struct hentry *hists_find_entry(const struct report *r, const struct hists *h,
				const struct hentry *key)
{
	uint32_t hash = entry_hash(r, key);

	if (!h->tab)
		return NULL;
	for (struct hentry *e = h->tab[hash & h->mask]; e; e = e->next)
		if (e->hash == hash && hentry_eq(r, e, key))
			return e;
	return NULL;
}

/* ---- output -------------------------------------------------------------- */

static int dso_cmp(const struct dso *a, const struct dso *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? -1 : 1; /* [unknown] after the others */
	return strcmp(a->short_name, b->short_name);
}

/* Both entries' srcline (@bit 1) or srcfile (2) now computed. */
static void mark_src(struct hentry *a, struct hentry *b, uint8_t bit)
{
	a->src_known |= bit;
	b->src_known |= bit;
}

/* A group's member entry for @e (its leader's entry), or @e for m = 0. */
static uint64_t grp_val(const struct report *r, const struct hentry *e,
			uint32_t m, bool children)
{
	const struct hentry *x = m ? hists_find_entry(r, r->grp_mem[m], e) : e;

	return !x ? 0 : children ? x->children : x->self;
}

uint64_t hentry_value(const struct hentry *e, enum value_col c)
{
	if (!e)
		return 0;
	return c == V_CHILDREN ? e->children :
	       c == V_SAMPLES  ? e->nr_samples :
				 e->self; /* Self, Period */
}

/* perf's sort__sym_cmp(@a, @b): the right against the left */
static int64_t sym_collapse_cmp(const struct hentry *a, const struct hentry *b)
{
	int64_t c;

	if (!a->sym && !b->sym)
		return (int64_t)(b->ip - a->ip);
	c = -dso_cmp(a->dso, b->dso);
	if (c)
		return c;
	if (!a->sym || !b->sym)
		return a->sym ? 1 : -1;
	/* perf's _sort__sym_cmp(): an inlined function by name, then one
	 * if the ranges overlap */
	if (a->sym != b->sym && (a->inl || b->inl)) {
		c = strcmp(a->sym->name, b->sym->name);
		if (c || (a->sym->start <= b->sym->end &&
			  a->sym->end >= b->sym->start))
			return c;
	}
	if (a->sym->start != b->sym->start)
		return (int64_t)(b->sym->start - a->sym->start);
	return (int64_t)(b->sym->end - a->sym->end);
}

/* perf's sort of one key's column (the elided ones skipped, as its
 * hist_entry__sort() does) */
static int key_cmp(const struct report *r, const struct hentry *a,
		   const struct hentry *b, enum sort_key k)
{
	int c;

	if (r->hidden[k])
		return 0;
	switch (k) {
	case K_COMM:
		c = strcmp(a->comm, b->comm);
		break;
	case K_PID:
		c = a->tid < b->tid ? -1 : a->tid > b->tid;
		break;
	case K_CPU:
		c = (int32_t)a->cpu < (int32_t)b->cpu ?
			    -1 :
			    (int32_t)a->cpu > (int32_t)b->cpu;
		break;
	case K_DSO:
		c = dso_cmp(a->dso, b->dso);
		break;
	case K_SRCLINE:
		mark_src((struct hentry *)a, (struct hentry *)b, 1);
		c = strcmp(report_src_str(r, a->srcline),
			   report_src_str(r, b->srcline));
		break;
	case K_SRCFILE:
		mark_src((struct hentry *)a, (struct hentry *)b, 2);
		c = strcmp(report_src_str(r, a->srcfile),
			   report_src_str(r, b->srcfile));
		break;
	case K_TRACE:
		c = memcmp(a->trace ? a->trace : "", b->trace ? b->trace : "",
			   a->trace_len < b->trace_len ? a->trace_len :
							 b->trace_len);
		if (!c)
			c = a->trace_len < b->trace_len ?
				    -1 :
				    a->trace_len > b->trace_len;
		break;
	default:
		if (a->sym && b->sym)
			c = strcmp(a->sym->name, b->sym->name);
		else if (a->sym || b->sym)
			c = a->sym ? -1 : 1;
		else
			c = 0; /* perf's sort__sym_sort() */
		break;
	}
	return c;
}

/* A value column's sort, the greater first (a group: the leader's, then
 * each member's). */
static int value_cmp(const struct report *r, const struct hentry *a,
		     const struct hentry *b, enum value_col col)
{
	uint32_t n = r->grp_n ? r->grp_n : 1;

	for (uint32_t m = 0; m < n; m++) {
		const struct hentry *x =
			m ? hists_find_entry(r, r->grp_mem[m], a) : a;
		const struct hentry *y =
			m ? hists_find_entry(r, r->grp_mem[m], b) : b;
		uint64_t va = hentry_value(x, col), vb = hentry_value(y, col);

		if (va != vb)
			return va > vb ? -1 : 1;
	}
	return 0;
}

/* perf's hist_entry__sort() over every output column, then the keys.  In
 * a group (report_print_hists() sets grp_mem/grp_n) each column compares the
 * leader's period, then the members' (perf's __hpp__sort()). */
static int hentry_output_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct hentry *a = *(const struct hentry *const *)pa;
	const struct hentry *b = *(const struct hentry *const *)pb;
	const struct report *r = ctx;
	uint32_t n = r->grp_n ? r->grp_n : 1;
	int c;

	if (r->children_col) {
		for (uint32_t m = 0; m < n; m++) {
			uint64_t va = grp_val(r, a, m, true),
				 vb = grp_val(r, b, m, true);

			if (va != vb)
				return va > vb ? -1 : 1;
		}
		/* Callers above callees at equal period (perf's
		 * __hpp__sort_acc(): the depth's sign flips with the order),
		 * within one thread; with -g none perf keeps no chains, so
		 * no depths */
		if (a->thread == b->thread && !r->o.no_callgraph &&
		    a->max_depth != b->max_depth)
			return (a->max_depth > b->max_depth) == r->caller ? -1 :
									    1;
	}
	/* -F: perf's sorts in their order (-s keys, then the fields) */
	for (int i = 0; r->fields && i < r->nsorts; i++) {
		int s = r->sorts[i];

		if (s == COL_IPC) {
			/* no se_sort: perf sorts it by its se_cmp */
			int64_t d = sym_collapse_cmp(a, b);

			c = d > 0 ? -1 : d < 0; /* as perf's, turned */
		} else
			c = s == COL_OVERHEAD ? value_cmp(r, a, b, V_SELF) :
			    s == COL_SAMPLE   ? value_cmp(r, a, b, V_SAMPLES) :
			    s == COL_PERIOD   ? value_cmp(r, a, b, V_PERIOD) :
						key_cmp(r, a, b,
							(enum sort_key)s);
		if (c)
			return c;
	}
	if (r->fields)
		return 0;
	/* then Self: perf sorts by every output column, keys last */
	for (uint32_t m = 0; m < n; m++) {
		uint64_t va = grp_val(r, a, m, false),
			 vb = grp_val(r, b, m, false);

		if (va != vb)
			return va > vb ? -1 : 1;
	}
	for (int i = 0; i < r->nkeys; i++) {
		c = key_cmp(r, a, b, r->keys[i]);
		if (c)
			return c;
	}
	if (r->ipc_col) {
		/* perf's ipc_null, the last key: sorted by its se_cmp */
		int64_t d = sym_collapse_cmp(a, b);

		return d > 0 ? -1 : d < 0; /* as perf's, turned */
	}
	return 0;
}

/* perf's hist_entry__collapse(@a, @b) (sort.c's se_cmp/se_collapse):
 * most keys compare the right one against the left. */
static int64_t collapse_cmp(const struct report *r, const struct hentry *a,
			    const struct hentry *b)
{
	int64_t c = 0;

	for (int i = 0; i < r->nkeys && !c; i++) {
		switch (r->keys[i]) {
		case K_COMM:
			c = strcmp(b->comm, a->comm);
			break;
		case K_PID:
			c = (int64_t)b->tid - a->tid;
			break;
		case K_CPU:
			c = (int64_t)(int32_t)b->cpu - (int32_t)a->cpu;
			break;
		case K_DSO:
			c = -dso_cmp(a->dso, b->dso);
			break;
		case K_SRCLINE:
		case K_SRCFILE: {
			/* perf 6.1's sort__srcline_cmp(), srcfile_cmp():
			 * the texts, looked up on first use (no collapse
			 * of their own) */
			uint32_t ia = r->keys[i] == K_SRCLINE ? a->srcline :
								a->srcfile;
			uint32_t ib = r->keys[i] == K_SRCLINE ? b->srcline :
								b->srcfile;

			mark_src((struct hentry *)a, (struct hentry *)b,
				 r->keys[i] == K_SRCLINE ? 1 : 2);
			c = strcmp(report_src_str(r, ib),
				   report_src_str(r, ia));
			break;
		}
		case K_TRACE:
			c = -memcmp(a->trace ? a->trace : "",
				    b->trace ? b->trace : "",
				    a->trace_len < b->trace_len ? a->trace_len :
								  b->trace_len);
			if (!c)
				c = (int64_t)b->trace_len - a->trace_len;
			break;
		default:
			c = sym_collapse_cmp(a, b);
			break;
		}
	}
	return c;
}

/* perf's hists trees (entries_in, collapsed, output): red-black trees
 * (lib/rbtree.c's insertion) walked in order.  An output entry that
 * hist_entry__sort() finds greater goes left, an equal one right; its
 * comparison is not transitive (Children ties look at the depth only
 * within one thread), so the order is the tree's, not a sort's. */

static void rb_rotate(struct rbn **root, struct rbn *x, bool to_left)
{
	struct rbn *y = to_left ? x->right : x->left;
	struct rbn *mid = to_left ? y->left : y->right;

	if (to_left) {
		x->right = mid;
		y->left = x;
	} else {
		x->left = mid;
		y->right = x;
	}
	if (mid)
		mid->parent = x;
	y->parent = x->parent;
	if (!x->parent)
		*root = y;
	else if (x->parent->left == x)
		x->parent->left = y;
	else
		x->parent->right = y;
	x->parent = y;
}

/* __hists__insert_output_entry(): left when hist_entry__sort() > 0 */
static bool left_of_out(const struct report *r, const struct hentry *e,
			const struct hentry *node)
{
	return hentry_output_cmp(&e, &node, (void *)r) < 0;
}

/* rb_link_node() at @link under @parent, then rb_insert_color() */
void rbn_link_fix(struct rbn **root, struct rbn *n, struct rbn *parent,
		  struct rbn **link)
{
	struct rbn *p, *g, *u;

	n->parent = parent;
	n->left = n->right = NULL;
	n->red = true;
	*link = n;
	while ((p = n->parent) && p->red) {
		bool left = (g = p->parent)->left == p;

		u = left ? g->right : g->left;
		if (u && u->red) {
			p->red = u->red = false;
			g->red = true;
			n = g;
			continue;
		}
		if (n == (left ? p->right : p->left)) {
			rb_rotate(root, p, left);
			n = p;
			p = n->parent;
		}
		p->red = false;
		g->red = true;
		rb_rotate(root, g, !left);
	}
	(*root)->red = false;
}

/* __hists__insert_output_entry()'s walk */
static void rb_insert_output(struct rbn **root, struct rbn *n,
			     const struct report *r)
{
	struct rbn **link = root, *parent = NULL;

	while (*link) {
		parent = *link;
		link = left_of_out(r, n->e, parent->e) ? &parent->left :
							 &parent->right;
	}
	rbn_link_fix(root, n, parent, link);
}

struct rbn *rbn_first(struct rbn *n)
{
	while (n && n->left)
		n = n->left;
	return n;
}

struct rbn *rbn_next(struct rbn *n)
{
	if (n->right)
		return rbn_first(n->right);
	while (n->parent && n->parent->right == n)
		n = n->parent;
	return n->parent;
}

/* @v's @k entries inserted in their order into the output tree, then
 * read back in its order. */
static void tree_order(const struct report *r, struct hentry **v, uint32_t k,
		       struct rbn *nodes)
{
	struct rbn *root = NULL, *n;
	uint32_t i = 0;

	for (uint32_t j = 0; j < k; j++) {
		nodes[j].e = v[j];
		rb_insert_output(&root, &nodes[j], r);
		/* output_resort(): the columns sized as each goes in */
		v[j]->src_sized = v[j]->src_known;
	}
	for (n = rbn_first(root); n; n = rbn_next(n))
		v[i++] = n->e;
}

/* perf's hists__collapse_insert_entry(): @v's @k entries (entries_in's
 * order) into the collapsed tree; one equal to an entry on its way down
 * is merged into it (its periods and its callchain) and leaves @v.
 * The number left, or -ENOMEM. */
static int64_t collapse_entries(const struct report *r, struct hentry **v,
				uint32_t k, struct rbn *nodes)
{
	struct rbn *root = NULL;
	struct cent *path = NULL;
	uint32_t cap = 0, left = 0;
	int err = 0;

	for (uint32_t j = 0; j < k && !err; j++) {
		struct rbn **link = &root, *parent = NULL;
		struct hentry *e = v[j], *into = NULL;

		while (*link) {
			int64_t c;

			parent = *link;
			c = collapse_cmp(r, parent->e, e);
			if (!c) {
				into = parent->e;
				break;
			}
			link = c < 0 ? &parent->left : &parent->right;
		}
		if (!into) {
			nodes[j].e = e;
			rbn_link_fix(&root, &nodes[j], parent, link);
			continue;
		}
		into->self += e->self;
		into->children += e->children;
		into->nr_samples += e->nr_samples;
		err = callchain_merge(&into->chain, &e->chain, &path, &cap, 0);
	}
	free(path);
	if (err)
		return err;
	for (struct rbn *n = rbn_first(root); n; n = rbn_next(n))
		v[left++] = n->e;
	return left;
}

/* @v's @k entries in perf's output order, *@k less those the collapse
 * merged; 0 or -ENOMEM.  perf's key comparisons are not all transitive
 * (addresses compared by a wrapping difference; Children ties by depth
 * only within a thread), so its order is that of its trees: entries_in,
 * built as the entries were first made (hists_findnew_entry(), which may have
 * missed an equal entry off its path and made a second), read in order
 * into @v (room for every entry of @h); the collapsed
 * tree (when a sort dimension collapses: comm from -s or the default
 * keys, not from -F alone), built in entries_in's order, merging what it
 * finds equal; the output tree, built in that order. */
int hists_output_order(const struct report *r, const struct hists *h,
		       struct hentry **v, uint32_t *k)
{
	struct rbn *nodes;

	*k = 0;
	for (struct rbn *n = rbn_first(h->in_root); n; n = rbn_next(n))
		v[(*k)++] = n->e;
	if (!*k)
		return 0;
	nodes = calloc(*k, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	if (r->need_collapse) {
		int64_t n = collapse_entries(r, v, *k, nodes);

		if (n < 0) {
			free(nodes);
			return (int)n;
		}
		*k = (uint32_t)n;
	}
	tree_order(r, v, *k, nodes);
	free(nodes);
	return 0;
}
