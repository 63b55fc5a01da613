// SPDX-License-Identifier: MIT
/*
 * perfring_report(): perf report --stdio, after perf 6.1's builtin-report.c,
 * hist.c, callchain.c and ui/stdio/hist.c.
 *
 * Per event (attr) a table of entries keyed by the sort keys (default
 * comm,dso,sym): Overhead = the entry's share of the event's total period.
 * With callchains (and not --no-children) every distinct entry on a
 * sample's chain also gets the period as Children (perf's cumulative
 * entries, a sample counted once per entry), and Self is the leaf's.
 *
 * Call graphs: each entry keeps a tree of the chains that reached it (the
 * whole chain for its own samples, the part from it to the leaf for the
 * cumulative ones; caller order with children, callee order without),
 * nodes holding runs of entries that are split where chains diverge
 * (callchain.c's append_chain()).  Printed as perf's "graph,0.5,caller"
 * does: branches under 0.5% of the event's period are left out, a single
 * branch carrying the entry's whole period is printed as "---name", the
 * others as "--12.34%--name" with "|" rails.
 *
 * Event groups (HEADER_GROUP_DESC, or all events with --group): one table
 * per group, keyed as the leader's, whose rows are every entry of any
 * member (perf's hists__link(): a member's entry the leader lacks joins
 * the leader's table with no period) and whose Overhead has one column
 * per member, each against that member's total; rows sorted by the
 * leader's period, then the members' in order.
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
#include "filter.h"
#include "fleet_report.h"
#include "header_print.h"
#include "stats.h"
#include "sample_read.h"

#define MAX_STACK 127
/* the kernel part and a DWARF-unwound user part, MAX_STACK each (perf) */
#define MAX_CURSOR (2 * MAX_STACK + 1)
#define MIN_PERCENT 0.5 /* callchain_param.min_percent */

enum sort_key {
	K_COMM,
	K_PID,
	K_DSO,
	K_SYM,
	K_TRACE,
	K_CPU,
	K_SRCLINE,
	K_SRCFILE,
	K_MAX
};

/* One resolved callchain entry. */
struct cent {
	const struct symbol *sym;
	struct dso *dso; /* NULL: no map */
	uint64_t ip; /* raw address */
	char level; /* 'k' or '.' */
	bool inl; /* @sym is an inlined function's (inline_sym()) */
};

/* perf's trees (rb_insert_color()): see rb_link_fix() */
struct rbn {
	struct rbn *left, *right, *parent;
	bool red;
	struct hentry *e;
};

struct cnode {
	struct cnode *parent, *child, *sibling;
	struct cent *val;
	uint32_t nval;
	uint64_t hit, children_hit;
	/* perf's rb_root_in: the children in a tree searched with
	 * match_chain() (cent_cmp()), whose order breaks ties of weight */
	struct rbn rb; /* this node in its parent's */
	struct rbn *kids;
};

struct hentry {
	struct hentry *next; /* hash chain */
	uint32_t hash;
	const char *comm;
	uint32_t comm_len;
	int32_t tid;
	const struct thread *thread; /* the first sample's */
	uint32_t cpu;
	struct dso *dso;
	const struct symbol *sym;
	uint64_t ip;
	char level;
	bool inl; /* @sym is an inlined function's (inline_sym()) */
	char *trace; /* "Trace output" */
	uint32_t trace_len;
	/* --sort srcline, srcfile: ids of their texts in report.src_text */
	uint32_t srcline, srcfile;
	/* perf computes them lazily, the first time a comparison of the
	 * collapse or output trees reaches their key (bit 0: srcline, bit
	 * 1: srcfile); an entry's text widens the column only if known
	 * when it entered the output tree (hists__calc_col_len()) */
	uint8_t src_known, src_sized;
	uint64_t self, children, nr_samples;
	uint32_t max_depth;
	uint32_t serial; /* creation order in its hists */
	/* made by a sample that --comm, --dsos or --symbols leave out: as
	 * perf, kept (in the totals and trees, and gathering the periods
	 * of later samples of its keys) but not shown */
	bool filtered;
	struct cnode chain; /* root: no entries */
	struct rbn in_rb; /* this entry in its hists' entries_in tree */
};

struct hists {
	struct hentry **tab; /* every entry (perf may keep two equal ones) */
	/* perf's entries_in: an entry is found by walking this tree with
	 * hist_entry__cmp(), whose comparisons are not transitive, so an
	 * equal entry off the path is missed and a second one made */
	struct rbn *in_root;
	uint32_t mask, nr;
	uint64_t total, nr_samples;
};

struct report {
	struct perfring_report_opts o;
	struct prd_file *f;
	struct machine m;
	struct hists *h;
	uint32_t nr_h;
	enum sort_key keys[K_MAX];
	int nkeys;
	bool setup;
	bool sort_given;
	struct tpfmt *tp;
	bool tp_tried;
	struct outbuf tb; /* one sample's trace text */
	bool use_callchain;
	bool children;
	/* the Children column shown and sorted on (not with -F, whose
	 * overhead is the Self one) */
	bool children_col;
	bool caller; /* graphs from the outermost caller down (-g caller) */
	uint64_t lost_samples;
	struct sample_filter filt;
	uint32_t max_stack; /* --max-stack, at most MAX_STACK */
	bool fields; /* -F given */
	/* the columns in order and the output sort's (perf's hpp_list
	 * fields and sorts): an enum sort_key or a COL_*; with -F only */
	int cols[K_MAX + 5], ncols;
	int sorts[K_MAX + 5], nsorts;
	/* perf report adds ipc_null to a --sort naming "symbol" */
	bool ipc_col;
	/* the graph's single root leaves out its first entry (the entry's
	 * own symbol): perf's callchain__fprintf_graph() */
	bool sort_sym_first;
	/* perf's need_collapse: a sort key with a collapse of its own
	 * (comm) was set up as a sort dimension; -F's keys are not */
	bool need_collapse;
	const char *sep; /* -t, NULL: columns padded with spaces */
	/* perf's sort__setup_elide(): a filter naming one comm, dso or
	 * symbol hides that column and says so in the header. */
	char *elided; /* "# comm: bash\n" lines */
	struct thread_stats *tstats; /* -T */
	FILE *out;
	bool hidden[K_MAX]; /* their columns */
	struct sread rd; /* PERF_SAMPLE_READ: each id's last value */
	/* While a group's table is ordered: its hists (leader first) */
	struct hists **grp_mem;
	uint32_t grp_n;
	struct cent cursor[MAX_CURSOR];
	struct hentry *he_cache[MAX_CURSOR + 1];
	struct outbuf ob;
	/* --sort srcline, srcfile: the texts (NUL-terminated), and per
	 * (dso, address) looked up the ids of both (srcline | srcfile << 32) */
	struct srclines *src;
	struct itab src_text;
	struct itab src_addr;
	struct u64v src_ids;
	/* DWARF-unwound frames: the inlined functions at each (perf's
	 * append_inlines()), one symbol per (function it is inlined in,
	 * name): isyms[id - 1] for id in isym_ids */
	struct inlines *inl;
	struct itab isym_ids;
	struct symbol **isyms;
	uint32_t nr_isyms;
};

/* ---- keys -------------------------------------------------------------- */

/* Output columns beside the keys (perf's hpp fields). */
enum {
	COL_OVERHEAD = K_MAX,
	COL_SAMPLE,
	COL_PERIOD,
	COL_CHILDREN,
	COL_IPC, /* perf's ipc_null: "-" without branch stacks */
	MAX_COLS,
	COL_UNIMPLEMENTED = -1,
	COL_UNKNOWN = -2,
};

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
static int parse_sort(struct report *r)
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

static bool has_key(const struct report *r, enum sort_key k)
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

	if (has_key(r, K_COMM))
		for (uint32_t i = 0; i < e->comm_len; i++)
			h = (h ^ (unsigned char)e->comm[i]) * 16777619u;
	if (has_key(r, K_PID))
		h = mix(h, (uint32_t)e->tid);
	if (has_key(r, K_DSO))
		h = mix(h, (uintptr_t)e->dso);
	if (has_key(r, K_SYM))
		h = mix(h, e->sym ? (uintptr_t)e->sym : e->ip);
	if (has_key(r, K_TRACE))
		for (uint32_t i = 0; i < e->trace_len; i++)
			h = (h ^ (unsigned char)e->trace[i]) * 16777619u;
	if (has_key(r, K_CPU))
		h = mix(h, e->cpu);
	if (has_key(r, K_SRCLINE))
		h = mix(h, e->srcline);
	if (has_key(r, K_SRCFILE))
		h = mix(h, e->srcfile);
	return h;
}

static bool entry_eq(const struct report *r, const struct hentry *a,
		     const struct hentry *b)
{
	/* perf's pid key is the tid alone (one entry across an exec) */
	if (has_key(r, K_COMM) && (a->comm_len != b->comm_len ||
				   memcmp(a->comm, b->comm, a->comm_len)))
		return false;
	if (has_key(r, K_PID) && a->tid != b->tid)
		return false;
	if (has_key(r, K_CPU) && a->cpu != b->cpu)
		return false;
	/* perf's entries of one srcline (or srcfile) text collapse into
	 * one, whatever their addresses */
	if (has_key(r, K_SRCLINE) && a->srcline != b->srcline)
		return false;
	if (has_key(r, K_SRCFILE) && a->srcfile != b->srcfile)
		return false;
	if (has_key(r, K_DSO) && a->dso != b->dso)
		return false;
	if (has_key(r, K_SYM)) {
		if (a->sym != b->sym)
			return false;
		if (!a->sym && a->ip != b->ip)
			return false;
	}
	if (has_key(r, K_TRACE) &&
	    (a->trace_len != b->trace_len ||
	     (a->trace_len && memcmp(a->trace, b->trace, a->trace_len))))
		return false;
	return true;
}

static struct hists *hists_of(struct report *r, const struct prd_attr *a)
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
static void rb_link_fix(struct rbn **root, struct rbn *n, struct rbn *parent,
			struct rbn **link);

/* The entry for @key in @h, created with zero counts: perf's
 * hists__findnew_entry(), a walk down entries_in. */
static struct hentry *findnew_entry(struct report *r, struct hists *h,
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
	rb_link_fix(&h->in_root, &e->in_rb, parent, link);
	return e;
}

/* The entry for @key in @h, or NULL. */
static struct hentry *find_entry(const struct report *r, const struct hists *h,
				 const struct hentry *key)
{
	uint32_t hash = entry_hash(r, key);

	if (!h->tab)
		return NULL;
	for (struct hentry *e = h->tab[hash & h->mask]; e; e = e->next)
		if (e->hash == hash && entry_eq(r, e, key))
			return e;
	return NULL;
}

/* ---- callchain trees (callchain.c) --------------------------------------- */

static void rb_link_fix(struct rbn **root, struct rbn *n, struct rbn *parent,
			struct rbn **link);
static int cent_cmp(const struct cent *a, const struct cent *b);
static uint32_t dso_order(const struct report *r, struct dso *d);

static struct cnode *cnode_of(struct rbn *n)
{
	return (struct cnode *)((char *)n - offsetof(struct cnode, rb));
}

static bool cent_eq(const struct cent *a, const struct cent *b)
{
	/* perf's match_chain(): inlined frames match by name (an inlined
	 * function has its caller's start), others by object and start */
	if (a->sym && b->sym && (a->inl || b->inl))
		return !strcmp(a->sym->name, b->sym->name);
	if (a->sym && b->sym)
		return a->sym->start == b->sym->start && a->dso == b->dso;
	return a->ip == b->ip && a->dso == b->dso && !a->sym && !b->sym;
}

static struct cnode *cnode_new(struct cnode *parent, const struct cent *v,
			       uint32_t n)
{
	struct cnode *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->val = malloc((n ? n : 1) * sizeof(*v));
	if (!c->val) {
		free(c);
		return NULL;
	}
	memcpy(c->val, v, n * sizeof(*v));
	c->nval = n;
	c->parent = parent;
	c->sibling = parent->child;
	parent->child = c;
	return c;
}

static int append_children(struct cnode *root, const struct cent *cur,
			   uint32_t n, uint64_t period);

/* append_chain(): 1 if @cur does not start in @node, 0 when added, <0. */
static int append_chain(struct cnode *node, const struct cent *cur, uint32_t n,
			uint64_t period)
{
	uint32_t m = 0;

	while (m < node->nval && m < n && cent_eq(&node->val[m], &cur[m]))
		m++;
	if (!m)
		return 1;
	if (m < node->nval) {
		/* Split: node keeps val[0, m), a new child takes the rest and
		 * the old children. */
		struct cnode *rest = calloc(1, sizeof(*rest));

		if (!rest)
			return -ENOMEM;
		rest->val = malloc((node->nval - m) * sizeof(*rest->val));
		if (!rest->val) {
			free(rest);
			return -ENOMEM;
		}
		memcpy(rest->val, node->val + m,
		       (node->nval - m) * sizeof(*rest->val));
		rest->nval = node->nval - m;
		rest->child = node->child;
		for (struct cnode *c = rest->child; c; c = c->sibling)
			c->parent = rest;
		rest->parent = node;
		rest->hit = node->hit;
		rest->children_hit = node->children_hit;
		/* perf's split_add_child(): the rest takes the children's
		 * tree and is the only node of the node's */
		rest->kids = node->kids;
		node->kids = NULL;
		rb_link_fix(&node->kids, &rest->rb, NULL, &node->kids);
		node->nval = m;
		node->child = rest;
		node->children_hit = rest->hit + rest->children_hit;
		node->hit = 0;
		if (m < n) {
			struct cnode *c = cnode_new(node, cur + m, n - m);

			if (!c)
				return -ENOMEM;
			rb_link_fix(&node->kids, &c->rb, &rest->rb,
				    cent_cmp(&rest->val[0], &cur[m]) < 0 ?
					    &rest->rb.left :
					    &rest->rb.right);
			c->hit = period;
			node->children_hit += period;
		} else {
			node->hit = period;
		}
		return 0;
	}
	if (m == n) {
		node->hit += period;
		return 0;
	}
	return append_children(node, cur + m, n - m, period);
}

/* perf's append_chain_children(): down the children's tree, left where
 * the child's first entry is below the new chain's (match_chain()'s
 * MATCH_LT), right otherwise. */
static int append_children(struct cnode *root, const struct cent *cur,
			   uint32_t n, uint64_t period)
{
	struct rbn **link = &root->kids, *parent = NULL;
	struct cnode *c;
	int ret;

	while (*link) {
		parent = *link;
		c = cnode_of(parent);
		ret = append_chain(c, cur, n, period);
		if (ret <= 0) {
			if (!ret)
				root->children_hit += period;
			return ret;
		}
		link = cent_cmp(&c->val[0], &cur[0]) < 0 ? &parent->left :
							   &parent->right;
	}
	c = cnode_new(root, cur, n);
	if (!c)
		return -ENOMEM;
	rb_link_fix(&root->kids, &c->rb, parent, link);
	c->hit = period;
	root->children_hit += period;
	return 0;
}

static void cnode_free_children(struct cnode *root)
{
	struct cnode *c = root->child, *n;

	for (; c; c = n) {
		n = c->sibling;
		cnode_free_children(c);
		free(c->val);
		free(c);
	}
	root->child = NULL;
	root->kids = NULL;
}

/* ---- samples ------------------------------------------------------------- */

/*
 * perf's inline symbol for @name inlined in @parent: the caller's range,
 * the function's name, printed with " (inlined)"; one per (parent, name),
 * so that entries and chain nodes of one inlined function meet.  NULL: no
 * memory.
 */
static const struct symbol *
inline_sym(struct report *r, const struct symbol *parent, const char *name)
{
	size_t nl = strlen(name), len = sizeof(parent) + nl + 1;
	char key[sizeof(parent) + 512];
	struct symbol *sym;
	bool added;
	uint32_t id;
	size_t kl;

	if (len > sizeof(key))
		return NULL;
	memcpy(key, &parent, sizeof(parent));
	memcpy(key + sizeof(parent), name, nl + 1);
	if (itab_intern(&r->isym_ids, key, len, &id, &added))
		return NULL;
	if (!added)
		return r->isyms[id - 1];
	if (id > r->nr_isyms) {
		uint32_t cap = r->nr_isyms ? 2 * r->nr_isyms : 64;
		struct symbol **v;

		while (cap < id)
			cap *= 2;
		v = realloc(r->isyms, cap * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + r->nr_isyms, 0, (cap - r->nr_isyms) * sizeof(*v));
		r->isyms = v;
		r->nr_isyms = cap;
	}
	sym = calloc(1, sizeof(*sym));
	if (!sym)
		return NULL;
	sym->start = parent->start;
	sym->end = parent->end;
	/* the name, as the table keeps it */
	sym->name = itab_key(&r->isym_ids, id, &kl) + sizeof(parent);
	r->isyms[id - 1] = sym;
	return sym;
}

/* An unwound frame's inlined functions (perf's unwind_entry() ->
 * append_inlines()), innermost first, into the cursor at @n; returns the
 * new length, @n if there are none (the frame goes in plain). */
static uint32_t append_inlined(struct report *r, const struct addr_loc *al,
			       uint64_t ip, uint32_t n)
{
	const char *names[INLINE_MAX_NEST], *srcs[INLINE_MAX_NEST];
	unsigned k;

	if (r->o.no_inline || !al->map || !al->dso || !al->sym || al->kernel)
		return n;
	if (!r->src && !(r->src = srclines_new()))
		return n;
	if (!r->inl && !(r->inl = inlines_new(r->src)))
		return n;
	k = inlines_at(r->inl, al->dso, dso_addr(al->dso, al->addr), al->sym,
		       names, srcs, INLINE_MAX_NEST);
	for (unsigned i = 0; i < k && n < MAX_CURSOR; i++, n++) {
		const struct symbol *sym =
			names[i] ? inline_sym(r, al->sym, names[i]) : al->sym;

		if (!sym)
			sym = al->sym; /* no memory: the plain frame */
		r->cursor[n].sym = sym;
		r->cursor[n].inl = sym != al->sym;
		r->cursor[n].dso = al->dso;
		r->cursor[n].ip = ip;
		r->cursor[n].level = '.';
		dso_order(r, al->dso);
	}
	return n;
}

/* The sample's callchain, resolved, in callee order; returns its length. */
static uint32_t resolve_chain(struct report *r, struct thread *t,
			      const struct prd_sample *s)
{
	uint8_t cpumode = PERF_RECORD_MISC_USER;
	uint32_t n = 0, seen = 0, max = r->max_stack, skip = 0;

	if (!callchain_valid(s->callchain, s->nr_callchain, MAX_STACK))
		return 0;
	/* perf's --max-stack counts the entries it looks at, -U's dropped
	 * ones too, from the end it walks from: the outermost caller in
	 * caller order */
	if (r->caller && max < MAX_STACK) {
		uint32_t all = 0;

		for (uint64_t i = 0; i < s->nr_callchain && all < MAX_STACK;
		     i++)
			all += s->callchain[i] < PERF_CONTEXT_MAX;
		skip = all > max ? all - max : 0;
		max = all;
	}
	for (uint64_t i = 0; i < s->nr_callchain && seen < max; i++) {
		uint64_t ip = s->callchain[i];
		struct addr_loc al;

		if (ip >= PERF_CONTEXT_MAX) {
			cpumode = callchain_context_cpumode(ip);
			continue;
		}
		if (seen++ < skip)
			continue;
		machine_resolve(&r->m, t, cpumode, ip, true, &al);
		if (r->o.hide_unresolved && !al.sym)
			continue;
		r->cursor[n].sym = al.sym;
		r->cursor[n].dso = al.map ? al.dso : NULL;
		r->cursor[n].ip = ip;
		r->cursor[n].level = al.map && al.kernel ? 'k' : '.';
		r->cursor[n].inl = false;
		dso_order(r, r->cursor[n].dso);
		n++;
	}
	/* --call-graph dwarf: the user part, unwound */
	if (unwind_sample_has_stack(s)) {
		uint64_t user[UNWIND_MAX_FRAMES];
		unsigned nr =
			unwind_user_stack(&r->m, t, s, user, r->max_stack);

		for (unsigned i = 0; i < nr && n < MAX_CURSOR; i++) {
			struct addr_loc al;
			uint32_t m;

			machine_resolve(&r->m, t, PERF_RECORD_MISC_USER,
					user[i], true, &al);
			if (r->o.hide_unresolved && !al.sym)
				continue;
			m = append_inlined(r, &al, user[i], n);
			if (m > n) {
				n = m;
				continue;
			}
			r->cursor[n].sym = al.sym;
			r->cursor[n].dso = al.map ? al.dso : NULL;
			r->cursor[n].ip = user[i];
			r->cursor[n].level = '.';
			r->cursor[n].inl = false;
			dso_order(r, r->cursor[n].dso);
			n++;
		}
	}
	return n;
}

static void reverse(struct cent *v, uint32_t n)
{
	for (uint32_t i = 0; i < n / 2; i++) {
		struct cent x = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = x;
	}
}

static void ensure_tp(struct report *r)
{
	size_t len;
	const void *td;

	if (r->tp || r->tp_tried)
		return;
	td = prd_feature(r->f, PD_FEAT_TRACING_DATA, &len);
	if (!td)
		return;
	r->tp_tried = true;
	if (tpfmt_new(td, len, &r->tp))
		pr_warn("tracepoint fields cannot be decoded: the TRACING_DATA is damaged");
	tpfmt_set_resolver(r->tp, machine_kernel_symbol, &r->m);
}

/* The text of id @id of report.src_text (NUL-terminated). */
static const char *src_str(const struct report *r, uint32_t id)
{
	size_t len;

	return itab_key(&r->src_text, id, &len);
}

/*
 * perf's srcline and srcfile of an entry (sort.c's hist_entry__srcline(),
 * hist_entry__get_srcfile()) at @addr of @dso (NULL: no map, perf's
 * "??:0"), whose symbol @sym holds it at @sym_off: their ids in
 * report.src_text, looked up once per (dso, address).  0 or -ENOMEM.
 */
static int src_ids(struct report *r, struct dso *dso, const struct symbol *sym,
		   uint64_t addr, uint64_t sym_off, uint32_t *line_id,
		   uint32_t *file_id)
{
	const struct {
		uint64_t dso, addr;
	} k = { (uint64_t)(uintptr_t)dso, addr };
	char line[1024], file[1024];
	bool added, from_lines = false;
	uint32_t id;
	size_t n, fl;
	int err;

	err = itab_intern(&r->src_addr, &k, sizeof(k), &id, &added);
	if (err)
		return err;
	if (!added) {
		uint64_t v = r->src_ids.v[id - 1];

		*line_id = (uint32_t)v;
		*file_id = (uint32_t)(v >> 32);
		return 0;
	}
	if (!r->src && !(r->src = srclines_new()))
		return -ENOMEM;
	if (dso)
		n = srcline_report_text(r->src, dso, sym, addr, sym_off, line,
					sizeof(line), &from_lines);
	else
		n = (size_t)snprintf(line, sizeof(line), "??:0");
	/* srcfile: the line's file when the line tables gave it, else "" */
	fl = from_lines ? strcspn(line, ":") : 0;
	memcpy(file, line, fl);
	file[fl] = 0;
	err = itab_intern(&r->src_text, line, n + 1, line_id, NULL);
	if (!err)
		err = itab_intern(&r->src_text, file, fl + 1, file_id, NULL);
	if (!err)
		err = u64v_set(&r->src_ids, id - 1,
			       *line_id | (uint64_t)*file_id << 32);
	return err;
}

static int add_sample(struct report *r, const struct prd_sample *s,
		      uint16_t misc)
{
	const struct prd_attr *a = s->attr;
	const struct perf_event_attr *pa = &a->attr;
	struct hists *h = hists_of(r, a);
	bool has_tid = pa->sample_type & PERF_SAMPLE_TID;
	struct thread *t;
	struct addr_loc al;
	struct hentry key, *he;
	uint64_t period = (pa->sample_type & PERF_SAMPLE_PERIOD) ?
				  s->period :
				  pa->sample_period;
	uint8_t cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint32_t n = 0, ncache = 0;
	bool chain = r->use_callchain &&
		     (pa->sample_type & PERF_SAMPLE_CALLCHAIN) && s->callchain;

	if (!h)
		return -ENOMEM;
	/* perf report's --time and --cpu drop the sample before it counts
	 * anywhere; -U drops it when its ip has no symbol */
	if (!filter_time(&r->filt, s->time))
		return 0;
	t = machine_findnew_thread(&r->m, has_tid ? (int32_t)s->pid : -1,
				   has_tid ? (int32_t)s->tid : -1);
	if (!t)
		return -ENOMEM;
	machine_resolve(&r->m, t, cpumode, s->ip, true, &al);
	if (r->o.hide_unresolved && !al.sym)
		return 0;
	if (!filter_cpu(&r->filt, (pa->sample_type & PERF_SAMPLE_CPU) ?
					  s->cpu :
					  UINT32_MAX))
		return 0;
	memset(&key, 0, sizeof(key));
	key.comm = t->comm;
	key.comm_len = t->comm_len;
	key.tid = t->tid;
	key.thread = t;
	key.dso = al.map ? al.dso : NULL;
	key.sym = al.sym;
	key.ip = al.addr;
	key.level = cpumode == PERF_RECORD_MISC_KERNEL ? 'k' : '.';
	/* perf: -1 when the event does not sample the CPU */
	key.cpu = (pa->sample_type & PERF_SAMPLE_CPU) ? s->cpu : UINT32_MAX;
	/* --comm, --dsos, --symbols: perf counts the sample in the total
	 * (percentages stay absolute) and adds it to its entries as any
	 * other, but the entries it makes (its own and its callchain's)
	 * are hidden. */
	key.filtered = !filter_thread(&r->filt, t) ||
		       !filter_location(&r->filt, &al, s->ip);
	if (has_key(r, K_TRACE) && pa->type != PERF_TYPE_TRACEPOINT) {
		/* perf's sort__trace: no trace text for other events */
		key.trace = (char *)"N/A";
		key.trace_len = 3;
	} else if (has_key(r, K_TRACE) && s->raw) {
		ensure_tp(r);
		r->tb.len = 0;
		tpfmt_print(r->tp, s->raw, s->raw_size, (int)s->cpu, &r->tb);
		key.trace = r->tb.p;
		key.trace_len = (uint32_t)r->tb.len;
	}
	if ((has_key(r, K_SRCLINE) || has_key(r, K_SRCFILE)) &&
	    src_ids(r, key.dso, al.sym,
		    al.kernel || !key.dso ? s->ip : dso_addr(al.dso, al.addr),
		    al.sym_off, &key.srcline, &key.srcfile))
		return -ENOMEM;
	he = findnew_entry(r, h, &key);
	if (!he)
		return -ENOMEM;
	he->self += period;
	he->nr_samples++;
	h->total += period;
	h->nr_samples++;
	if (r->children)
		he->children += period;
	if (!chain)
		return 0;
	n = resolve_chain(r, t, s);
	if (r->caller)
		reverse(r->cursor, n); /* caller order */
	/* perf's fill_callchain_info() updates one addr_location entry by
	 * entry: one without a map keeps the level of the mapped one before
	 * it (the sample's at first). */
	for (uint32_t i = 0, lvl = (uint32_t)key.level; i < n; i++) {
		if (r->cursor[i].dso)
			lvl = (uint32_t)r->cursor[i].level;
		else
			r->cursor[i].level = (char)lvl;
	}
	if (n) {
		if (append_children(&he->chain, r->cursor, n, period))
			return -ENOMEM;
		if (n > he->max_depth)
			he->max_depth = n;
	}
	if (!r->children)
		return 0;
	r->he_cache[ncache++] = he;
	for (uint32_t i = 0; i < n; i++) {
		const struct cent *c = &r->cursor[i];
		struct hentry *ce;
		bool dup = false;

		key.dso = c->dso;
		key.sym = c->sym;
		key.inl = c->inl;
		key.ip = c->ip;
		key.level = c->level;
		/* perf's cumulative entries keep the chain's raw address
		 * (fill_callchain_info()), which their srcline looks up */
		if ((has_key(r, K_SRCLINE) || has_key(r, K_SRCFILE)) &&
		    src_ids(r, c->dso, c->sym, c->ip,
			    c->sym ? c->ip - c->sym->start : 0, &key.srcline,
			    &key.srcfile))
			return -ENOMEM;
		for (uint32_t k = 0; k < ncache && !dup; k++)
			dup = entry_eq(r, r->he_cache[k], &key);
		if (dup)
			continue; /* recursion: once per sample */
		ce = findnew_entry(r, h, &key);
		if (!ce)
			return -ENOMEM;
		r->he_cache[ncache++] = ce;
		ce->children += period;
		if (append_children(&ce->chain, r->cursor + i, n - i, period))
			return -ENOMEM;
		if (n - i > ce->max_depth)
			ce->max_depth = n - i;
	}
	return 0;
}

static void setup(struct report *r)
{
	uint32_t n = prd_nr_attrs(r->f);
	bool any_chain = false;
	const char *host, *rel;
	struct utsname u;

	bool all_tp = n > 0;

	r->setup = true;
	for (uint32_t i = 0; i < n; i++) {
		const struct prd_attr *a = prd_attr(r->f, i);

		if (a && (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN))
			any_chain = true;
		if (!a || a->attr.type != PERF_TYPE_TRACEPOINT)
			all_tp = false;
	}
	/* perf's default for files of tracepoints only: the trace text. */
	if (!r->sort_given && all_tp) {
		r->keys[0] = K_TRACE;
		r->nkeys = 1;
		/* nothing left to elide */
		free(r->elided);
		r->elided = NULL;
		memset(r->hidden, 0, sizeof(r->hidden));
	}
	r->use_callchain = any_chain;
	/* perf: --children is the default, and means nothing (is dropped
	 * silently) when the file has no callchains */
	r->children = any_chain && !r->o.no_children;
	r->children_col = r->children && !r->fields;
	/* perf: caller order with children, callee order without, unless
	 * -g says which */
	r->caller = r->o.callchain_order ? r->o.callchain_order == 1 :
					   r->children;
	host = prd_feature_string(r->f, PD_FEAT_HOSTNAME);
	rel = prd_feature_string(r->f, PD_FEAT_OSRELEASE);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	machine_set_host(&r->m, (!host || !strcmp(host, u.nodename)) &&
					(!rel || !strcmp(rel, u.release)));
}

struct report_read {
	struct report *r;
	const struct prd_sample *s;
	uint16_t misc;
};

/* One read value of a PERF_SAMPLE_READ sample, as its event's sample
 * (perf's deliver_sample_value()). */
static int add_read_value(void *ctx, const struct prd_attr *a, uint64_t id,
			  uint64_t delta)
{
	struct report_read *rr = ctx;
	struct prd_sample one = *rr->s;

	one.attr = a;
	one.id = id;
	one.period = delta;
	return add_sample(rr->r, &one, rr->misc);
}

/* Whether the build-id table's @name (a path for a module's .ko) names
 * @dso ("[kernel.kallsyms]", "[vdso]", a path, "[module_name]"). */
static bool buildid_names(const struct dso *dso, const char *name, size_t n)
{
	const char *base = memrchr(name, '/', n), *ko;
	size_t len;

	if (strlen(dso->name) == n && !memcmp(dso->name, name, n))
		return true;
	if (dso->kind != DSO_KMODULE || !base)
		return false;
	base++;
	ko = memmem(base, n - (size_t)(base - name), ".ko", 3);
	len = ko ? (size_t)(ko - base) : 0;
	if (!len || strlen(dso->name) != len + 2)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = base[i] == '-' ? '_' : base[i];

		if (dso->name[i + 1] != c)
			return false;
	}
	return true;
}

/* perf report creates the DSOs of the file's build-id table first (in
 * its order), the others as the records name them: that is the order of
 * its struct dso addresses, which break ties between call-graph
 * branches, and place the branches in its trees as they come (cent_cmp()).
 * Set once per DSO, when a chain first names it: 1 + its place in the
 * table, or, for one the table does not name, after every table entry in
 * creation order. */
static uint32_t dso_order(const struct report *r, struct dso *d)
{
	size_t len = 0, off = 0;
	const uint8_t *p;
	uint32_t i = 0;

	if (!d || d->order)
		return d ? d->order : 0;
	p = prd_feature(r->f, PRD_FEAT_BUILD_ID, &len);
	while (p && off + 36 <= len) {
		uint16_t rsz;
		const char *name = (const char *)p + off + 36;

		memcpy(&rsz, p + off + 6, 2);
		if (rsz < 36 || rsz > len - off)
			break;
		if (buildid_names(d, name, strnlen(name, rsz - 36)))
			return d->order = 1 + i;
		off += rsz;
		i++;
	}
	/* past any table: at most one entry per 36 bytes */
	return d->order = 1 + (uint32_t)(len / 36) + 1 + d->serial;
}

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct report *r = ctx;
	const struct perf_event_header *h = ev->hdr;

	if (r->o.header && h->type == PRD_REC_HEADER_FEATURE)
		header_print_feature_record(f, ev, r->o.show_info, r->out);
	if (r->tstats && h->type == PERF_RECORD_READ)
		return thread_stats_add(r->tstats, f, ev);
	if (r->o.header_only)
		return 0;
	if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= 16) {
		uint64_t lost;

		memcpy(&lost, (const char *)h + 8, 8);
		r->lost_samples += lost;
		return 0;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return machine_process(&r->m, h) == -ENOMEM ? -ENOMEM : 0;
	if (!ev->sample || !ev->sample->attr)
		return 0;
	if (r->o.tasks || r->o.mmaps)
		return 0;
	if (!r->setup)
		setup(r);
	if (ev->sample->attr->attr.sample_type & PERF_SAMPLE_READ) {
		struct report_read rr = { r, ev->sample, h->misc };

		return sread_each(&r->rd, f, ev->sample, add_read_value, &rr);
	}
	return add_sample(r, ev->sample, h->misc);
}

/* The one-entry filter lists: their key leaves the columns and a
 * "# comm: bash" line says what it is, in the order of the sort keys. */
static int setup_elide(struct report *r)
{
	size_t len = 0;

	if (r->nkeys == 1)
		return 0; /* perf keeps the last column */
	for (int i = 0; i < r->nkeys; i++) {
		enum sort_key k = r->keys[i];
		char **list = k == K_DSO  ? r->filt.dsos :
			      k == K_COMM ? r->filt.comms :
			      k == K_SYM  ? r->filt.syms :
					    NULL;
		const char *name = k == K_DSO  ? "dso" :
				   k == K_COMM ? "comm" :
						 "symbol";
		char *more;

		if (!list || !list[0] || list[1])
			continue;
		more = realloc(r->elided, len + strlen(list[0]) + 16);
		if (!more)
			return -ENOMEM;
		r->elided = more;
		len += (size_t)sprintf(more + len, "# %s: %s\n", name, list[0]);
		r->hidden[k] = true;
	}
	return 0;
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
	const struct hentry *x = m ? find_entry(r, r->grp_mem[m], e) : e;

	return !x ? 0 : children ? x->children : x->self;
}

/* The value columns of a row. */
enum value_col { V_CHILDREN, V_SELF, V_SAMPLES, V_PERIOD };

static uint64_t value_of(const struct hentry *e, enum value_col c)
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
		c = strcmp(src_str(r, a->srcline), src_str(r, b->srcline));
		break;
	case K_SRCFILE:
		mark_src((struct hentry *)a, (struct hentry *)b, 2);
		c = strcmp(src_str(r, a->srcfile), src_str(r, b->srcfile));
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
		const struct hentry *x = m ? find_entry(r, r->grp_mem[m], a) :
					     a;
		const struct hentry *y = m ? find_entry(r, r->grp_mem[m], b) :
					     b;
		uint64_t va = value_of(x, col), vb = value_of(y, col);

		if (va != vb)
			return va > vb ? -1 : 1;
	}
	return 0;
}

/* perf's hist_entry__sort() over every output column, then the keys.  In
 * a group (print_hists() sets grp_mem/grp_n) each column compares the
 * leader's period, then the members' (perf's __hpp__sort()). */
static int entry_cmp(const void *pa, const void *pb, void *ctx)
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
			c = strcmp(src_str(r, ib), src_str(r, ia));
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
	return entry_cmp(&e, &node, (void *)r) < 0;
}

/* rb_link_node() at @link under @parent, then rb_insert_color() */
static void rb_link_fix(struct rbn **root, struct rbn *n, struct rbn *parent,
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
	rb_link_fix(root, n, parent, link);
}

static struct rbn *rb_first(struct rbn *n)
{
	while (n && n->left)
		n = n->left;
	return n;
}

static struct rbn *rb_next(struct rbn *n)
{
	if (n->right)
		return rb_first(n->right);
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
	for (n = rb_first(root); n; n = rb_next(n))
		v[i++] = n->e;
}

/* perf's callchain_merge(): each node of @src with hits, by its path from
 * the root (@path, @len so far), appended to @dst; children in their
 * tree's order. */
static int merge_chain(struct cnode *dst, const struct cnode *src,
		       struct cent **path, uint32_t *cap, uint32_t len)
{
	int err = 0;

	if (src->nval) {
		if (len + src->nval > *cap) {
			uint32_t ncap = (len + src->nval) * 2;
			struct cent *p = realloc(*path, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			*path = p;
			*cap = ncap;
		}
		memcpy(*path + len, src->val, src->nval * sizeof(**path));
		len += src->nval;
	}
	if (src->hit && len)
		err = append_children(dst, *path, len, src->hit);
	for (struct rbn *n = rb_first(src->kids); n && !err; n = rb_next(n))
		err = merge_chain(dst, cnode_of(n), path, cap, len);
	return err;
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
			rb_link_fix(&root, &nodes[j], parent, link);
			continue;
		}
		into->self += e->self;
		into->children += e->children;
		into->nr_samples += e->nr_samples;
		err = merge_chain(&into->chain, &e->chain, &path, &cap, 0);
	}
	free(path);
	if (err)
		return err;
	for (struct rbn *n = rb_first(root); n; n = rb_next(n))
		v[left++] = n->e;
	return left;
}

/* @v's @k entries in perf's output order, *@k less those the collapse
 * merged; 0 or -ENOMEM.  perf's key comparisons are not all transitive
 * (addresses compared by a wrapping difference; Children ties by depth
 * only within a thread), so its order is that of its trees: entries_in,
 * built as the entries were first made (findnew_entry(), which may have
 * missed an equal entry off its path and made a second), read in order
 * into @v (room for every entry of @h); the collapsed
 * tree (when a sort dimension collapses: comm from -s or the default
 * keys, not from -F alone), built in entries_in's order, merging what it
 * finds equal; the output tree, built in that order. */
static int output_order(const struct report *r, const struct hists *h,
			struct hentry **v, uint32_t *k)
{
	struct rbn *nodes;

	*k = 0;
	for (struct rbn *n = rb_first(h->in_root); n; n = rb_next(n))
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

/* The text of a column for an entry. */
static size_t key_text(const struct report *r, const struct hentry *e,
		       enum sort_key k, char *buf, size_t len)
{
	int n;

	switch (k) {
	case K_COMM:
		n = snprintf(buf, len, "%s", e->comm);
		break;
	case K_PID:
		/* perf prints the thread's comm as it ends */
		n = snprintf(buf, len, "%7d:%s", e->tid, e->thread->comm);
		break;
	case K_CPU:
		n = snprintf(buf, len, "%*.*d", 3, 3, (int32_t)e->cpu);
		break;
	case K_DSO:
		n = snprintf(buf, len, "%s",
			     e->dso ? e->dso->short_name : "[unknown]");
		break;
	case K_SRCLINE:
		n = snprintf(buf, len, "%s", src_str(r, e->srcline));
		break;
	case K_SRCFILE:
		n = snprintf(buf, len, "%s", src_str(r, e->srcfile));
		break;
	case K_TRACE:
		n = snprintf(buf, len, "%.*s", (int)e->trace_len,
			     e->trace ? e->trace : "");
		break;
	default:
		if (e->sym)
			n = snprintf(buf, len, "[%c] %s%s", e->level,
				     e->sym->name, e->inl ? " (inlined)" : "");
		else
			n = snprintf(buf, len, "[%c] %-#.*llx", e->level, 16,
				     (unsigned long long)e->ip);
		break;
	}
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

static const char *const key_header[K_MAX] = { "Command",	"Pid:Command",
					       "Shared Object", "Symbol",
					       "Trace output",	"CPU",
					       "Source:Line",	"Source File" };

static void put_pct(struct outbuf *ob, uint64_t v, uint64_t total, int width)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%*.2f%%", width - 1,
			 total ? (double)v * 100.0 / (double)total : 0.0);

	ob_write(ob, buf, (size_t)n);
}

/*
 * Before a column: perf's two spaces (a row starts with them too), or
 * with -t the separator between columns (@lead: the row's first).
 */
static void col_gap(const struct report *r, struct outbuf *ob, bool lead)
{
	if (!r->sep)
		ob_write(ob, "  ", 2);
	else if (!lead)
		ob_puts(ob, r->sep);
}

/*
 * One value column of a row, a value per group member: each right-aligned
 * in @width (8 for a percentage); with -t, as perf, each after a space
 * and the whole left-aligned in the members' widths.
 */
static void put_values(const struct report *r, struct outbuf *ob,
		       struct hentry *const *row, struct hists *const *mem,
		       uint32_t n, enum value_col c, int width)
{
	bool pct = c == V_CHILDREN || c == V_SELF;
	size_t used = 0;

	for (uint32_t m = 0; m < n; m++) {
		uint64_t v = value_of(row[m], c), total = mem[m]->total;
		char buf[32];
		int k;

		if (!r->sep) {
			if (pct)
				put_pct(ob, v, total, width);
			else
				ob_u64(ob, v, width, ' ');
			continue;
		}
		if (pct)
			k = snprintf(buf, sizeof(buf), "%.2f%%",
				     total ? (double)v * 100.0 / (double)total :
					     0.0);
		else
			k = snprintf(buf, sizeof(buf), "%llu",
				     (unsigned long long)v);
		ob_putc(ob, ' ');
		ob_write(ob, buf, (size_t)k);
		used += 1 + (size_t)k;
	}
	if (r->sep && used < (size_t)width * n)
		ob_spaces(ob, (size_t)width * n - used);
}

static void margin(struct outbuf *ob, int left)
{
	ob_spaces(ob, 12 + (size_t)left);
}

static void cent_name(struct outbuf *ob, const struct cent *c)
{
	char buf[32];

	if (c->sym) {
		ob_puts(ob, c->sym->name);
		if (c->inl)
			ob_write(ob, " (inlined)", 10);
	} else {
		int n = snprintf(buf, sizeof(buf), "%#llx",
				 (unsigned long long)c->ip);

		ob_write(ob, buf, (size_t)n);
	}
}

static uint64_t cumul(const struct cnode *c)
{
	return c->hit + c->children_hit;
}

/* perf's match_chain(): a node's first entry against another's: an
 * inlined function's by name; the others by DSO (perf's struct dso
 * addresses, their creation order here: dso_order()), then by symbol
 * start or, for an entry without a symbol, its address.  Not transitive
 * when both kinds meet: append_children() walks a tree with it as perf
 * does, and that tree's order breaks ties. */
static int cent_cmp(const struct cent *a, const struct cent *b)
{
	int64_t da = a->dso ? (int64_t)a->dso->order : -1;
	int64_t db = b->dso ? (int64_t)b->dso->order : -1;
	uint64_t xa = a->ip, xb = b->ip;

	/* an inlined function by its name alone (its start is its
	 * caller's) */
	if (a->sym && b->sym && (a->inl || b->inl)) {
		int c = strcmp(a->sym->name, b->sym->name);

		return c < 0 ? -1 : c > 0;
	}
	if (da != db)
		return da < db ? -1 : 1;
	if (a->sym && b->sym) {
		xa = a->sym->start;
		xb = b->sym->start;
	}
	return xa < xb ? -1 : xa > xb;
}

/* A child and its place in its parent's tree (in order). */
struct ranked {
	struct cnode *c;
	uint32_t pos;
};

static int ranked_cmp(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (cumul(a->c) != cumul(b->c))
		return cumul(a->c) > cumul(b->c) ? -1 : 1;
	/* Ties: perf inserts the children in their tree's order (that of
	 * match_chain(), the greater first) into the output tree, where an
	 * equal weight goes after. */
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Children at or above @min, sorted as perf's rb_insert_callchain(). */
static uint32_t sorted_children(const struct cnode *n, uint64_t min,
				struct cnode ***out)
{
	uint32_t k = 0, i = 0, pos = 0;
	struct ranked *rk;
	struct cnode **v;
	struct rbn *t;

	for (struct cnode *c = n->child; c; c = c->sibling)
		if (cumul(c) >= min)
			k++;
	*out = NULL;
	if (!k)
		return 0;
	v = malloc(k * sizeof(*v));
	rk = malloc(k * sizeof(*rk));
	if (!v || !rk) {
		free(v);
		free(rk);
		return 0;
	}
	/* the children's tree in order */
	for (t = n->kids; t && t->left;)
		t = t->left;
	while (t) {
		struct cnode *c = cnode_of(t);

		if (cumul(c) >= min && i < k)
			rk[i++] = (struct ranked){ c, pos };
		pos++;
		if (t->right) {
			for (t = t->right; t->left;)
				t = t->left;
		} else {
			while (t->parent && t->parent->right == t)
				t = t->parent;
			t = t->parent;
		}
	}
	k = i;
	qsort(rk, k, sizeof(*rk), ranked_cmp);
	for (i = 0; i < k; i++)
		v[i] = rk[i].c;
	free(rk);
	*out = v;
	return k;
}

static void graph_line(struct outbuf *ob, int depth, int mask, int left)
{
	margin(ob, left);
	for (int i = 0; i < depth; i++)
		ob_puts(ob, (mask & (1 << i)) ? "|          " : "           ");
	ob_putc(ob, '\n');
}

static size_t print_graph(struct outbuf *ob, const struct cnode *root,
			  uint64_t total, uint64_t min, int depth, int mask,
			  int left)
{
	struct cnode **kids;
	uint32_t nk = sorted_children(root, min, &kids);
	int new_mask = mask;
	size_t lines = 0;

	for (uint32_t k = 0; k < nk; k++) {
		const struct cnode *c = kids[k];

		if (k + 1 == nk && depth <= 30)
			new_mask &= ~(1 << (depth - 1));
		if (depth > 30)
			break; /* deeper than the rails can show */
		graph_line(ob, depth, mask, left);
		lines++;
		for (uint32_t i = 0; i < c->nval; i++) {
			margin(ob, left);
			for (int d = 0; d < depth; d++) {
				ob_putc(ob, (new_mask & (1 << d)) ? '|' : ' ');
				if (!i && d == depth - 1) {
					ob_write(ob, "--", 2);
					put_pct(ob, cumul(c), total, 0);
					ob_write(ob, "--", 2);
				} else {
					ob_spaces(ob, 10);
				}
			}
			cent_name(ob, &c->val[i]);
			ob_putc(ob, '\n');
			lines++;
		}
		if (depth < 30)
			lines += print_graph(ob, c, total, min, depth + 1,
					     new_mask | (1 << depth), left);
		ob_line_done(ob);
	}
	free(kids);
	return lines;
}

static void print_callchain(struct report *r, const struct hentry *e,
			    uint64_t total, uint64_t parent)
{
	struct outbuf *ob = &r->ob;
	/* Sorted by symbol first, the chain's first entry is the entry's
	 * own symbol: perf leaves it out. */
	bool skip_first = r->sort_sym_first;
	bool printed = false;
	const struct cnode *root = &e->chain;
	struct cnode **kids;
	/* perf's --percent-limit sets callchain_param.min_percent too */
	double min_pct = r->o.percent_limit > 0	    ? r->o.percent_limit :
			 r->o.graph_min_percent > 0 ? r->o.graph_min_percent :
						      MIN_PERCENT;
	uint64_t min = (uint64_t)((double)total * (min_pct / 100.0));
	uint32_t nk = sorted_children(root, min, &kids);
	int left = 0;
	size_t lines = 0;

	if (nk == 1 && cumul(kids[0]) == parent) {
		const struct cnode *c = kids[0];

		for (uint32_t i = 0; i < c->nval; i++) {
			if (!i && skip_first)
				continue;
			if (!printed) {
				printed = true;
				margin(ob, left);
				ob_write(ob, "|\n", 2);
				margin(ob, left);
				ob_write(ob, "---", 3);
				left += 3;
			} else {
				margin(ob, left);
			}
			cent_name(ob, &c->val[i]);
			ob_putc(ob, '\n');
			lines++;
		}
		root = c;
	}
	free(kids);
	lines += print_graph(ob, root, total, min, 1, 1, left);
	if (lines)
		ob_putc(ob, '\n');
}

/*
 * One table: @n hists side by side (a group: the leader's first, the
 * members' entries linked into it), titled @title ("events" when @plural:
 * a group's leader, as perf says it).
 */
static void print_hists(struct report *r, struct hists **mem, uint32_t n,
			const char *title, bool plural, bool first)
{
	struct outbuf *ob = &r->ob;
	struct hists *h = mem[0];
	struct hentry **v, **row, **lead;
	size_t width[K_MAX] = { 0 };
	char buf[4096];
	uint64_t ns = 0, total = 0;
	char unit = ' ';
	uint32_t k = 0;
	int nw = 12; /* perf's Samples column */
	int pw = 12; /* and Period */
	int cols[MAX_COLS], ncols = 0;
	int last; /* the last column shown */

	/* perf's columns: -F's, or Children, Self (Overhead), -n's
	 * Samples, Period and the keys */
	if (r->fields) {
		memcpy(cols, r->cols, sizeof(int) * (size_t)r->ncols);
		ncols = r->ncols;
	} else {
		if (r->children_col)
			cols[ncols++] = COL_CHILDREN;
		cols[ncols++] = COL_OVERHEAD;
		if (r->o.show_nr_samples)
			cols[ncols++] = COL_SAMPLE;
		if (r->o.show_total_period)
			cols[ncols++] = COL_PERIOD;
		for (int i = 0; i < r->nkeys; i++)
			cols[ncols++] = r->keys[i];
		if (r->ipc_col)
			cols[ncols++] = COL_IPC;
	}
	last = ncols - 1;
	while (last > 0 && cols[last] < K_MAX && r->hidden[cols[last]])
		last--;

	for (uint32_t m = 0; m < n; m++) {
		ns += mem[m]->nr_samples;
		total += mem[m]->total;
	}
	/* perf's hists__link(): the members' entries join the leader's */
	for (uint32_t m = 1; m < n; m++)
		for (uint32_t i = 0; mem[m]->tab && i <= mem[m]->mask; i++)
			for (struct hentry *e = mem[m]->tab[i]; e; e = e->next)
				if (!findnew_entry(r, h, e)) {
					r->ob.err = -ENOMEM;
					return;
				}
	v = calloc((h->nr ? h->nr : 1) * (size_t)n, sizeof(*v));
	if (!v) {
		r->ob.err = -ENOMEM;
		return;
	}
	lead = calloc(h->nr ? h->nr : 1, sizeof(*lead));
	if (!lead) {
		free(v);
		r->ob.err = -ENOMEM;
		return;
	}
	/* perf's order of the leader's entries, the members' periods
	 * breaking ties (entry_cmp()) */
	r->grp_mem = mem;
	r->grp_n = n;
	if (output_order(r, h, lead, &k)) {
		free(lead);
		free(v);
		r->grp_mem = NULL;
		r->grp_n = 0;
		r->ob.err = -ENOMEM;
		return;
	}
	r->grp_mem = NULL;
	r->grp_n = 0;
	/* A row: the leader's entry, then each member's (NULL: none). */
	for (uint32_t j = 0; j < k; j++) {
		v[j * n] = lead[j];
		for (uint32_t m = 1; m < n; m++)
			v[j * n + m] = find_entry(r, mem[m], lead[j]);
	}
	free(lead);
	for (int i = 0; i < r->nkeys; i++)
		width[r->keys[i]] = r->keys[i] == K_PID ?
					    15 :
					    strlen(key_header[r->keys[i]]);
	for (uint32_t j = 0; j < k; j++) {
		if (v[j * n]->filtered)
			continue; /* perf sizes the shown entries only */
		for (int i = 0; i < r->nkeys; i++) {
			enum sort_key key = r->keys[i];
			size_t len =
				key_text(r, v[j * n], key, buf, sizeof(buf));

			/* perf sizes Command by the thread's comm as it ends
			 * (thread__comm_len()), and cuts the sample's to it */
			if (key == K_COMM)
				len = v[j * n]->thread->comm_len;
			if ((key == K_SRCLINE && !(v[j * n]->src_sized & 1)) ||
			    (key == K_SRCFILE && !(v[j * n]->src_sized & 2)))
				len = 0;
			/* perf sizes Symbol by the name alone (namelen + 4):
			 * " (inlined)" overflows */
			if (key == K_SYM && v[j * n]->inl)
				len -= 10;
			/* perf's CPU column stays 3 wide ("-001" overflows) */
			if (len > width[key] && key != K_CPU)
				width[key] = len;
			/* an entry without a symbol widens Shared Object to
			 * an address's 16 digits (perf's
			 * hists__set_unres_dso_col_len), except with a field
			 * separator or a --dsos list */
			if (key == K_DSO && !v[j * n]->sym && width[key] < 16 &&
			    !r->sep && !r->filt.dsos)
				width[key] = 16;
		}
		for (uint32_t m = 0; m < n; m++) {
			int d = snprintf(buf, sizeof(buf), "%llu",
					 (unsigned long long)value_of(
						 v[j * n + m], V_SAMPLES));

			if (r->o.show_nr_samples && d > nw)
				nw = d;
			d = snprintf(buf, sizeof(buf), "%llu",
				     (unsigned long long)value_of(v[j * n + m],
								  V_PERIOD));
			if (r->o.show_total_period && d > pw)
				pw = d;
		}
	}
	if (!first)
		ob_write(ob, "\n\n", 2);
	/* convert_unit() */
	if (ns > 1000) {
		ns /= 1000;
		unit = 'K';
	}
	if (ns > 1000) {
		ns /= 1000;
		unit = 'M';
	}
	if (ns > 1000) {
		ns /= 1000;
		unit = 'G';
	}
	if (r->o.quiet)
		goto rows;
	ob_puts(ob, "# Samples: ");
	ob_u64(ob, ns, 0, ' ');
	ob_putc(ob, unit);
	ob_puts(ob, plural ? " of events '" : " of event '");
	ob_puts(ob, title);
	ob_putc(ob, '\'');
	if (r->o.time_range && *r->o.time_range) {
		ob_puts(ob, " (time slices: ");
		ob_puts(ob, r->o.time_range);
		ob_putc(ob, ')');
	}
	ob_puts(ob, "\n# Event count (approx.): ");
	ob_u64(ob, total, 0, ' ');
	ob_puts(ob, "\n#\n# ");
	/* a group's columns: 8 wide per member, headed on the right */
	for (int i = 0, shown = 0; i < ncols; i++) {
		int c = cols[i];

		if (c < K_MAX && r->hidden[c])
			continue;
		if (shown++)
			col_gap(r, ob, false);
		if (c == COL_CHILDREN)
			ob_str_w(ob, "Children", 8, 8 * (int)n, false);
		else if (c == COL_OVERHEAD && r->children_col)
			ob_str_w(ob, "Self", 4, 8 * (int)n, false);
		else if (c == COL_OVERHEAD)
			ob_str_w(ob, "Overhead", 8, 8 * (int)n, false);
		else if (c == COL_SAMPLE)
			ob_str_w(ob, "Samples", 7, nw * (int)n, false);
		else if (c == COL_PERIOD)
			ob_str_w(ob, "Period", 6, pw * (int)n, false);
		else if (c == COL_IPC)
			ob_str_w(ob, "IPC   [IPC Coverage]", 20, 20, true);
		else if (c == K_PID) {
			/* perf right-aligns it in 15, then pads. */
			ob_str_w(ob, "Pid:Command", 11, 15, false);
			ob_spaces(ob, width[c] - 15);
		} else {
			ob_str_w(ob, key_header[c], strlen(key_header[c]),
				 (int)width[c], true);
		}
	}
	/* -t: no rule under the column names */
	if (r->sep) {
		ob_putc(ob, '\n');
		goto rows;
	}
	ob_puts(ob, "\n# ");
	for (int i = 0, shown = 0; i < ncols; i++) {
		int c = cols[i];
		size_t w = c == COL_SAMPLE ? (size_t)nw * n :
			   c == COL_PERIOD ? (size_t)pw * n :
			   c == COL_IPC	   ? 20 :
			   c >= K_MAX	   ? 8 * (size_t)n :
					     width[c];

		if (c < K_MAX && r->hidden[c])
			continue;
		if (shown++)
			ob_write(ob, "  ", 2);
		for (size_t j = 0; j < w; j++)
			ob_putc(ob, '.');
	}
	ob_puts(ob, "\n#\n");
rows:
	for (uint32_t j = 0; j < k; j++) {
		const struct hentry *e = v[j * n];
		double pct = h->total ? (double)(r->children_col ? e->children :
								   e->self) *
						100.0 / (double)h->total :
					0.0;
		bool any = false;

		row = v + j * n;
		for (uint32_t m = 0; m < n; m++)
			any |= row[m] && (row[m]->self || row[m]->children);
		if (e->filtered || pct < r->o.percent_limit || !any)
			continue;
		for (int i = 0, shown = 0; i < ncols; i++) {
			int c = cols[i];
			size_t len;

			if (c < K_MAX && r->hidden[c])
				continue;
			col_gap(r, ob, !shown++);
			if (c == COL_IPC) {
				ob_str_w(ob, "-      -", 8, 20, true);
				continue;
			}
			if (c >= K_MAX) {
				put_values(r, ob, row, mem, n,
					   c == COL_CHILDREN ? V_CHILDREN :
					   c == COL_OVERHEAD ? V_SELF :
					   c == COL_SAMPLE   ? V_SAMPLES :
							       V_PERIOD,
					   c == COL_SAMPLE ? nw :
					   c == COL_PERIOD ? pw :
							     8);
				continue;
			}
			len = key_text(r, e, c, buf, sizeof(buf));
			if (c == K_COMM && len > width[c])
				len = width[c];
			/* "%-.*s": cut to the column */
			if ((c == K_SRCLINE || c == K_SRCFILE) &&
			    len > width[c])
				len = width[c];
			/* perf pads every column but a last sym, trace,
			 * srcline or srcfile. */
			if (i < last || (c != K_SYM && c != K_TRACE &&
					 c != K_SRCLINE && c != K_SRCFILE))
				ob_str_w(ob, buf, len, (int)width[c], true);
			else
				ob_write(ob, buf, len);
		}
		ob_putc(ob, '\n');
		if (r->use_callchain && !r->o.no_callgraph)
			print_callchain(r, e, h->total,
					r->children ? e->children : e->self);
		ob_line_done(ob);
	}
	free(v);
}

/*
 * The file's groups (GROUP_DESC); with --group or --no-group and none,
 * every event in one (perf's evlist__force_leader(), named by its members
 * alone: *@forced).  Returns how many in @g (room for @max).
 */
static int report_groups(struct report *r, struct gdesc_group *g, uint32_t max,
			 bool *forced)
{
	uint32_t nattrs = prd_nr_attrs(r->f), dropped = 0;
	const void *p;
	size_t len;
	int n = 0;

	*forced = false;
	p = prd_feature(r->f, PD_FEAT_GROUP_DESC, &len);
	if (p) {
		n = gdesc_parse(p, len, nattrs, g, max, &dropped);
		if (n < 0 || dropped)
			pr_warn("%s: GROUP_DESC: %s",
				r->o.input ? r->o.input : "perf.data",
				n < 0 ? "malformed, groups ignored" :
					"groups naming events the file has not are ignored");
		if (n < 0)
			n = 0;
	}
	/* perf forces it when --group or --no-group is given (group_set),
	 * so that --no-group still titles the first event's "events" */
	if (!n && OPTS_GET(&r->o, group, 0) && nattrs > 1 && max) {
		g[0].leader = 0;
		g[0].nr_members = nattrs;
		g[0].name[0] = '\0';
		*forced = true;
		n = 1;
	}
	return n;
}

/*
 * Every table, in the attrs' order: a group's where its leader is, its
 * members side by side (not with --no-group: each alone, the leader's
 * still titled "events" as perf has it).
 */
static int print_all(struct report *r, bool *first)
{
	uint32_t nattrs = prd_nr_attrs(r->f);
	struct gdesc_group *g = calloc(nattrs ? nattrs : 1, sizeof(*g));
	struct hists **mem = calloc(nattrs ? nattrs : 1, sizeof(*mem));
	bool merge = OPTS_GET(&r->o, group, 0) >= 0;
	struct outbuf title = { 0 };
	bool forced;
	int ng, gi = 0, err;

	err = g && mem ? ob_init(&title, NULL) : -ENOMEM;
	if (err)
		goto out;
	ng = report_groups(r, g, nattrs, &forced);
	/* every attr's hists made first: hists_of() moves them as it grows */
	for (uint32_t i = 0; i < nattrs; i++) {
		const struct prd_attr *a = prd_attr(r->f, i);

		if (a && !hists_of(r, a)) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (uint32_t i = 0; i < nattrs && !r->ob.err; i++) {
		const struct prd_attr *a = prd_attr(r->f, i);
		bool leader = gi < ng && g[gi].leader == i;
		bool member = !leader && gi > 0 &&
			      i < g[gi - 1].leader + g[gi - 1].nr_members;
		bool side = leader && merge;
		uint32_t n = side ? g[gi].nr_members : 1;
		uint64_t ns = 0;

		if (leader)
			gi++;
		if (member && merge)
			continue; /* shown with its leader */
		title.len = 0;
		title.err = 0;
		if (side && !forced) {
			ob_puts(&title, g[gi - 1].name[0] ? g[gi - 1].name :
							    "anon group");
			ob_puts(&title, " { ");
		}
		for (uint32_t m = 0; m < n; m++) {
			const struct prd_attr *ma = prd_attr(r->f, i + m);

			mem[m] = ma ? hists_of(r, ma) : NULL;
			if (!mem[m]) {
				err = -ENOMEM;
				goto out;
			}
			ns += mem[m]->nr_samples;
			if (m)
				ob_puts(&title, ", ");
			ob_puts(&title, ma->name ? ma->name : "[unknown]");
		}
		if (side && !forced)
			ob_puts(&title, " }");
		ob_putc(&title, '\0');
		if (!a || !ns)
			continue;
		/* names past the scratch buffer: the leader's alone */
		print_hists(
			r, mem, n,
			title.err ? (a->name ? a->name : "[unknown]") : title.p,
			leader && (forced || g[gi - 1].nr_members > 1), *first);
		*first = false;
	}
out:
	free(title.p);
	free(g);
	free(mem);
	return err;
}

static void free_hists(struct report *r)
{
	for (uint32_t i = 0; i < r->nr_h; i++) {
		struct hists *h = &r->h[i];

		for (uint32_t j = 0; h->tab && j <= h->mask; j++) {
			struct hentry *e = h->tab[j], *n;

			for (; e; e = n) {
				n = e->next;
				cnode_free_children(&e->chain);
				free(e->trace);
				free(e);
			}
		}
		free(h->tab);
	}
	free(r->h);
}

/* --tasks: one thread and where it is in the tree being built. */
struct task {
	const struct thread *t;
	struct task *kids, *last_kid, *next; /* children; in a list */
	struct task *parent; /* whose kids list holds it */
	bool listed;
};

static int task_by_tid(const void *pa, const void *pb)
{
	const struct task *a = pa, *b = pb;

	return a->t->tid < b->t->tid ? -1 : a->t->tid > b->t->tid;
}

static int taskp_by_tid(const void *pa, const void *pb)
{
	return task_by_tid(*(const struct task *const *)pa,
			   *(const struct task *const *)pb);
}

/* perf's thread table: 256 trees by tid % 256, each in tid order. */
static int task_table_order(const void *pa, const void *pb)
{
	const struct task *a = pa, *b = pb;
	uint32_t ba = (uint32_t)a->t->tid % 256, bb = (uint32_t)b->t->tid % 256;

	if (ba != bb)
		return ba < bb ? -1 : 1;
	return task_by_tid(pa, pb);
}

static void task_append(struct task **head, struct task **tail, struct task *t)
{
	t->listed = true;
	t->next = NULL;
	if (*tail)
		(*tail)->next = t;
	else
		*head = t;
	*tail = t;
}

/* --mmaps: a thread's maps under it, as perf's maps__fprintf_task(). */
static void print_task_maps(struct outbuf *ob, const struct maps *ms,
			    size_t indent)
{
	char buf[128];

	for (uint32_t i = 0; ms && i < ms->nr; i++) {
		const struct map *mp = &ms->v[i];
		int n = snprintf(buf, sizeof(buf),
				 "%llx-%llx %c%c%c%c %08llx %llu ",
				 (unsigned long long)mp->start,
				 (unsigned long long)mp->end,
				 mp->prot & PROT_READ ? 'r' : '-',
				 mp->prot & PROT_WRITE ? 'w' : '-',
				 mp->prot & PROT_EXEC ? 'x' : '-',
				 mp->flags & MAP_SHARED ? 's' : 'p',
				 (unsigned long long)mp->pgoff,
				 (unsigned long long)mp->ino);

		ob_spaces(ob, indent + 2);
		ob_write(ob, buf, (size_t)n);
		ob_puts(ob, mp->dso ? mp->dso->name : "[unknown]");
		ob_putc(ob, '\n');
		ob_line_done(ob);
	}
}

/* @root's tree, depth first, without recursion (a file may chain any
 * number of FORKs). */
static void print_task_tree(struct outbuf *ob, const struct task *root,
			    bool mmaps)
{
	const struct task *k = root;
	size_t level = 0;

	while (k) {
		char buf[64];
		int n = snprintf(buf, sizeof(buf), "  %8d %8d %8d |", k->t->pid,
				 k->t->tid, k->t->ppid);

		ob_write(ob, buf, (size_t)n);
		ob_spaces(ob, level);
		ob_puts(ob, k->t->tid == 0 && !k->t->comm_set ? "swapper" :
								k->t->comm);
		ob_putc(ob, '\n');
		ob_line_done(ob);
		if (mmaps)
			print_task_maps(ob, k->t->maps, (size_t)n + level);
		if (k->kids) {
			k = k->kids;
			level++;
			continue;
		}
		while (k != root && !k->next) {
			k = k->parent;
			level--;
		}
		k = k == root ? NULL : k->next;
	}
}

/*
 * perf report --tasks: every thread under its parent (its FORK's), the
 * roots in the order of perf's thread table, each child list in the
 * order perf's walk up from every thread (in that order) reached it.
 * perf's idle thread (0, "swapper") is always there.
 */
static int print_tasks(struct report *r)
{
	struct task *v, *head = NULL, *tail = NULL, **byid;
	uint32_t n = 1, k = 0;
	bool idle = false;

	for (struct thread *t = machine_threads(&r->m); t; t = t->all_next)
		n += !t->removed;
	v = calloc(n, sizeof(*v));
	byid = calloc(n, sizeof(*byid));
	if (!v || !byid) {
		free(v);
		free(byid);
		return -ENOMEM;
	}
	for (struct thread *t = machine_threads(&r->m); t; t = t->all_next) {
		if (t->removed)
			continue;
		idle |= t->tid == 0;
		v[k++].t = t;
	}
	if (!idle) {
		static const struct thread swapper = {
			.comm = "swapper",
			.comm_len = 7,
			.comm_set = true,
			.ppid = -1,
		};

		v[k++].t = &swapper;
	}
	qsort(v, k, sizeof(*v), task_table_order);
	/* the tasks by tid, to find a parent */
	for (uint32_t i = 0; i < k; i++)
		byid[i] = &v[i];
	qsort(byid, k, sizeof(*byid), taskp_by_tid);
	for (uint32_t i = 0; i < k; i++) {
		struct task *c = &v[i];

		/* perf's tasks_list(): up to a listed task or a root */
		while (!c->listed) {
			struct thread pt = { .tid = c->t->ppid };
			struct task key = { .t = &pt }, *kp = &key;
			struct task **pp = NULL;

			if (c->t->ppid != -1)
				pp = bsearch(&kp, byid, k, sizeof(*byid),
					     taskp_by_tid);
			if (!pp || *pp == c) {
				/* no parent known (perf gives up on the
				 * whole list there): a root */
				task_append(&head, &tail, c);
				break;
			}
			task_append(&(*pp)->kids, &(*pp)->last_kid, c);
			c->parent = *pp;
			c = *pp;
		}
	}
	free(byid);
	ob_puts(&r->ob, "#      pid      tid     ppid  comm\n");
	for (struct task *c = head; c; c = c->next)
		print_task_tree(&r->ob, c, r->o.mmaps);
	free(v);
	ob_flush(&r->ob);
	return r->ob.err;
}

/* @word among @list's comma-separated words */
/* --time (its percent forms over the file's SAMPLE_TIME), --cpu (every
 * event must sample the CPU, as perf_session__cpu_bitmap() wants),
 * --max-stack, -t. */
static int setup_filters(struct report *r)
{
	const char *range = r->o.time_range;

	if (range && strchr(range, '%')) {
		size_t len;
		const unsigned char *st =
			prd_feature(r->f, PD_FEAT_SAMPLE_TIME, &len);
		uint64_t first = 0, last = 0;

		if (st && len >= 16) {
			memcpy(&first, st, 8);
			memcpy(&last, st + 8, 8);
		}
		if (!first && !last) {
			pr_err("--time %s: the file has no first and last sample time (SAMPLE_TIME)",
			       range);
			return -EINVAL;
		}
		if (filter_set_time_pct(&r->filt, range, first, last))
			return -EINVAL;
	} else if (filter_set_time(&r->filt, range)) {
		return -EINVAL;
	}
	for (uint32_t i = 0; r->filt.cpus && i < prd_nr_attrs(r->f); i++) {
		const struct prd_attr *a = prd_attr(r->f, i);

		if (a && !(a->attr.sample_type & PERF_SAMPLE_CPU)) {
			pr_err("--cpu: the file's events do not sample the CPU");
			return -EINVAL;
		}
	}
	r->max_stack = r->o.has_max_stack && r->o.max_stack < MAX_STACK ?
			       r->o.max_stack :
			       MAX_STACK;
	r->sep = r->o.field_sep && *r->o.field_sep ? r->o.field_sep : NULL;
	return 0;
}

PERFRING_API int perfring_report(const struct perfring_report_opts *opts,
				 FILE *out)
{
	struct report *r;
	bool first = true;
	int err, saved;

	if (!opts || !out || !OPTS_VALID(opts) ||
	    opts->sz < offsetof(struct perfring_report_opts, sort))
		return -EINVAL;
	/* --from clickhouse=URL: a fleet's samples (fleet_report.c). */
	if (OPTS_GET(opts, from, NULL))
		return fleet_report_run(opts, out);
	/* A trace.dat (perfring record --tracefs-event): its events as
	 * trace-cmd report lists them. */
	if (opts->input && strcmp(opts->input, "-") &&
	    perfring_trace_dat_probe(opts->input) == 1)
		return tdat_report(opts->input, out);
	if (OPTS_GET(opts, stats, false))
		return report_stats_perf(
			opts->input ? opts->input : "perf.data", out);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	OPTS_COPY(&r->o, opts);
	err = parse_sort(r);
	if (!err)
		err = filter_set_comms(&r->filt, r->o.comm_list);
	if (!err)
		err = filter_set_dsos(&r->filt, r->o.dso_list);
	if (!err)
		err = filter_set_syms(&r->filt, r->o.symbols);
	if (!err)
		err = filter_set_pids(&r->filt,
				      OPTS_GET(&r->o, pid_list, NULL));
	if (!err)
		err = filter_set_tids(&r->filt,
				      OPTS_GET(&r->o, tid_list, NULL));
	if (!err)
		err = filter_set_cpus(&r->filt,
				      OPTS_GET(&r->o, cpu_list, NULL));
	if (!err)
		err = setup_elide(r);
	if (err)
		goto out_free;
	err = ob_init(&r->tb, NULL);
	if (err)
		goto out_free;
	err = ob_init(&r->ob, out);
	if (!err)
		err = machine_init(&r->m);
	if (err)
		goto out_free;
	r->m.dsos.symfs = OPTS_GET(&r->o, symfs, NULL);
	err = prd_open(r->o.input ? r->o.input : "perf.data", &r->f);
	if (err)
		goto out_machine;
	err = machine_use_build_ids(&r->m, r->f);
	if (err)
		goto out_close;
	r->out = out;
	err = setup_filters(r);
	if (err)
		goto out_close;
	if (r->o.header_only)
		r->o.header = true;
	if (r->o.header) {
		err = header_print(r->f, r->o.show_info, out);
		/* A pipe's features come as records: read on to print them. */
		if (err || (r->o.header_only && !prd_is_pipe(r->f)))
			goto out_close;
	}
	if (r->o.show_threads && !r->o.header_only)
		err = thread_stats_new(&r->tstats);
	if (!err)
		err = prd_process(r->f, true, on_event, r);
	if ((r->o.tasks || r->o.mmaps) && (!err || err == -EBADMSG)) {
		saved = err;
		err = print_tasks(r);
		if (!err && fflush(out))
			err = -errno;
		if (!err)
			err = saved;
		goto out_close;
	}
	if (r->o.header_only)
		goto out_close;
	if (err && err != -EBADMSG)
		goto out_close;
	saved = err;
	/* A damaged file: report what was read before the damage. */
	/* perf's first line points at its --header options; ours have
	 * perfring dump and stats instead (the header block ends as those
	 * two lines do). */
	if (!r->o.header && !r->o.quiet) {
		ob_puts(&r->ob, "# ");
		ob_puts(&r->ob, r->o.input ? r->o.input : "perf.data");
		ob_puts(&r->ob,
			" (header and records: perfring dump, perfring stats)\n#\n");
	}
	if (r->elided)
		ob_puts(&r->ob, r->elided);
	if (!r->o.quiet) {
		ob_puts(&r->ob, "#\n# Total Lost Samples: ");
		ob_u64(&r->ob, r->lost_samples, 0, ' ');
		ob_puts(&r->ob, "\n#\n");
	}
	err = print_all(r, &first);
	if (err)
		goto out_close;
	if (first)
		pr_warn("%s has no samples",
			r->o.input ? r->o.input : "perf.data");
	ob_puts(&r->ob, "\n\n");
	ob_flush(&r->ob);
	if (r->tstats)
		thread_stats_print(r->tstats, r->f, out);
	err = saved ? saved : r->ob.err;
	if (!err && fflush(out))
		err = -errno;
out_close:
	prd_close(r->f);
out_machine:
	thread_stats_free(r->tstats);
	free_hists(r);
	sread_free(&r->rd);
	machine_exit(&r->m);
	inlines_free(r->inl);
	srclines_free(r->src);
	for (uint32_t i = 0; i < r->nr_isyms; i++)
		free(r->isyms[i]);
	free(r->isyms);
	itab_free(&r->isym_ids);
	itab_free(&r->src_text);
	itab_free(&r->src_addr);
	free(r->src_ids.v);
out_free:
	filter_free(&r->filt);
	free(r->elided);
	tpfmt_free(r->tp);
	free(r->tb.p);
	free(r->ob.p);
	free(r);
	return err;
}
