// SPDX-License-Identifier: MIT
/*
 * perf report's call graphs (callchain.c): a sample's chain resolved to
 * entries (inlined frames included), the trees of chains each histogram
 * entry keeps (append_chain(), merged when entries collapse), and their
 * printing as perf's "graph,0.5,caller" does.
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

static int cent_cmp(const struct cent *a, const struct cent *b);

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
		rbn_link_fix(&node->kids, &rest->rb, NULL, &node->kids);
		node->nval = m;
		node->child = rest;
		node->children_hit = rest->hit + rest->children_hit;
		node->hit = 0;
		if (m < n) {
			struct cnode *c = cnode_new(node, cur + m, n - m);

			if (!c)
				return -ENOMEM;
			rbn_link_fix(&node->kids, &c->rb, &rest->rb,
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
	return callchain_append(node, cur + m, n - m, period);
}

/* perf's append_chain_children(): down the children's tree, left where
 * the child's first entry is below the new chain's (match_chain()'s
 * MATCH_LT), right otherwise. */
int callchain_append(struct cnode *root, const struct cent *cur, uint32_t n,
		     uint64_t period)
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
	rbn_link_fix(&root->kids, &c->rb, parent, link);
	c->hit = period;
	root->children_hit += period;
	return 0;
}

void cnode_free_children(struct cnode *root)
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
		report_dso_order(r, al->dso);
	}
	return n;
}

/* The sample's callchain, resolved, in callee order; returns its length. */
uint32_t callchain_resolve(struct report *r, struct thread *t,
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
		report_dso_order(r, r->cursor[n].dso);
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
			report_dso_order(r, r->cursor[n].dso);
			n++;
		}
	}
	return n;
}

void cents_reverse(struct cent *v, uint32_t n)
{
	for (uint32_t i = 0; i < n / 2; i++) {
		struct cent x = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = x;
	}
}

/* perf's callchain_merge(): each node of @src with hits, by its path from
 * the root (@path, @len so far), appended to @dst; children in their
 * tree's order. */
int callchain_merge(struct cnode *dst, const struct cnode *src,
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
		err = callchain_append(dst, *path, len, src->hit);
	for (struct rbn *n = rbn_first(src->kids); n && !err; n = rbn_next(n))
		err = callchain_merge(dst, cnode_of(n), path, cap, len);
	return err;
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
 * addresses, their creation order here: report_dso_order()), then by symbol
 * start or, for an entry without a symbol, its address.  Not transitive
 * when both kinds meet: callchain_append() walks a tree with it as perf
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
					report_put_pct(ob, cumul(c), total, 0);
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

void callchain_print(struct report *r, const struct hentry *e, uint64_t total,
		     uint64_t parent)
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
