// SPDX-License-Identifier: MIT
/*
 * The terminal browser of report, annotate and top (perf report's TUI):
 * ncurses, public API only.  The entries come from the sample reader
 * (the same resolution as report), grouped by command, object and symbol
 * with their self (and children) period and the call chains under them;
 * annotate's view is perfring_annotate()'s text with the hottest
 * instruction highlighted.  Keys as perf's: arrows/PgUp/PgDn/Home/End
 * move, +/e/Enter expand, E/C expand/collapse all, a annotate, d/t zoom
 * into the object/thread (again: out), / filter by symbol, Tab the next
 * event, ?/h help, q/Esc back or quit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <curses.h>
#include <inttypes.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* A call chain node under an entry: callers (self mode) or callees
 * (children mode), with the period through it. */
#include "browser.h"

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return d;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return p;
}

static const char *short_dso(const char *dso)
{
	const char *s;

	if (!dso)
		return "[unknown]";
	s = strrchr(dso, '/');
	return s ? s + 1 : dso;
}

static void frame_name(const struct perfring_frame *f, char *buf, size_t len)
{
	if (f->sym)
		snprintf(buf, len, "%s", f->sym);
	else
		snprintf(buf, len, "0x%" PRIx64, f->addr);
}

/* @s's keys (perf's names; symbol for sym) into @m; false if one is not
 * a column of the browser. */
static bool keys_parse(struct bmodel *m, const char *s)
{
	static const char *const names[BK_MAX] = { "comm", "pid", "dso",
						   "sym" };

	m->nkeys = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		int k;

		for (k = 0; k < BK_MAX; k++)
			if (strlen(names[k]) == n && !memcmp(names[k], s, n))
				break;
		if (k == BK_MAX && n == 6 && !memcmp(s, "symbol", 6))
			k = BK_SYM;
		if (k == BK_MAX)
			return false;
		for (int i = 0; i < m->nkeys; i++)
			if (m->keys[i] == (enum bkey)k)
				k = -1;
		if (k >= 0)
			m->keys[m->nkeys++] = (enum bkey)k;
		s += n + (s[n] == ',');
	}
	return m->nkeys > 0;
}

static bool model_has_key(const struct bmodel *m, enum bkey k)
{
	for (int i = 0; i < m->nkeys; i++)
		if (m->keys[i] == k)
			return true;
	return false;
}

static struct cnode *cnode_child(struct cnode *parent, const char *name)
{
	struct cnode *c;

	for (c = parent->child; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = xstrdup(name);
	c->next = parent->child;
	parent->child = c;
	return c;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 1) * 1099511628211ull;
}

/* By the model's keys only. */
static uint64_t entry_hash(const struct bmodel *m, const struct entry *e)
{
	uint64_t h = 1469598103934665603ull;

	if (model_has_key(m, BK_COMM))
		h = hash_str(h, e->comm);
	if (model_has_key(m, BK_PID))
		h = (h ^ (uint32_t)e->pid) * 1099511628211ull;
	if (model_has_key(m, BK_DSO))
		h = hash_str(h, e->dso);
	if (model_has_key(m, BK_SYM))
		h = hash_str(h, e->sym);
	return h;
}

static bool entry_same(const struct bmodel *m, const struct entry *a,
		       const struct entry *b)
{
	return (!model_has_key(m, BK_SYM) || !strcmp(a->sym, b->sym)) &&
	       (!model_has_key(m, BK_DSO) || !strcmp(a->dso, b->dso)) &&
	       (!model_has_key(m, BK_COMM) || !strcmp(a->comm, b->comm)) &&
	       (!model_has_key(m, BK_PID) || a->pid == b->pid);
}

static void entry_rehash(const struct bmodel *m, struct bevent *ev)
{
	size_t mask = 2 * ev->cap - 1;

	free(ev->tab);
	ev->tab = xrealloc(NULL, (mask + 1) * sizeof(*ev->tab));
	memset(ev->tab, 0, (mask + 1) * sizeof(*ev->tab));
	ev->mask = mask;
	for (size_t j = 0; j < ev->nr; j++) {
		size_t i = entry_hash(m, &ev->v[j]) & mask;

		while (ev->tab[i])
			i = (i + 1) & mask;
		ev->tab[i] = (uint32_t)j + 1;
	}
}

/* The entry of @ev like @key (by the model's keys), or NULL. */
static struct entry *entry_find(const struct bmodel *m, const struct bevent *ev,
				const struct entry *key)
{
	if (!ev->tab)
		return NULL;
	for (size_t i = entry_hash(m, key) & ev->mask; ev->tab[i];
	     i = (i + 1) & ev->mask) {
		struct entry *e = &ev->v[ev->tab[i] - 1];

		if (entry_same(m, e, key))
			return e;
	}
	return NULL;
}

/* The entry of @comm/@pid, @dso and @sym, made on first use. */
struct entry *entry_get(const struct bmodel *m, struct bevent *ev,
			const char *comm, int32_t pid, const char *dso,
			const char *sym, bool kernel)
{
	struct entry key = { .comm = (char *)comm,
			     .pid = pid,
			     .dso = (char *)dso,
			     .sym = (char *)sym },
		     *e = entry_find(m, ev, &key);
	size_t i;

	if (e)
		return e;
	if (ev->nr == ev->cap) {
		ev->cap = ev->cap ? 2 * ev->cap : 256;
		ev->v = xrealloc(ev->v, ev->cap * sizeof(*ev->v));
		entry_rehash(m, ev);
	}
	e = &ev->v[ev->nr];
	memset(e, 0, sizeof(*e));
	e->comm = xstrdup(comm);
	e->pid = pid;
	e->dso = xstrdup(dso);
	e->sym = xstrdup(sym);
	e->kernel = kernel;
	for (i = entry_hash(m, e) & ev->mask; ev->tab[i];
	     i = (i + 1) & ev->mask)
		;
	ev->tab[i] = (uint32_t)ev->nr + 1;
	ev->nr++;
	return e;
}

/* The entry of a frame of a sample of @comm/@pid. */
static struct entry *entry_of_frame(const struct bmodel *m, struct bevent *ev,
				    const char *comm, int32_t pid,
				    const struct perfring_frame *f)
{
	char name[256];

	frame_name(f, name, sizeof(name));
	return entry_get(m, ev, comm, pid, short_dso(f->dso), name, f->kernel);
}

void chain_add(struct entry *e, const struct perfring_frame *chain, int from,
	       int to, int step, uint64_t period)
{
	struct cnode *n = &e->root;
	char name[256];

	for (int i = from; i != to; i += step) {
		frame_name(&chain[i], name, sizeof(name));
		n = cnode_child(n, name);
		if (!n)
			return;
		n->period += period;
		e->has_chain = true;
	}
}

struct bevent *model_event(struct bmodel *m, const char *name)
{
	struct bevent *ev;

	for (uint32_t i = 0; i < m->nr_ev; i++)
		if (!strcmp(m->ev[i].name, name))
			return &m->ev[i];
	m->ev = xrealloc(m->ev, (m->nr_ev + 1) * sizeof(*m->ev));
	ev = &m->ev[m->nr_ev++];
	memset(ev, 0, sizeof(*ev));
	ev->name = xstrdup(name);
	return ev;
}

/* Whether @name is one of the comma-separated @list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && !memcmp(p, name, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

/* report's --comm, --pid, --tid, --dsos and --symbols, as --stdio (and
 * perf) take them: a sample left out still counts in the total, so the
 * percentages stay those of the whole file; its entries are not made. */
static bool sample_shown(const struct perfring_report_opts *ro,
			 const struct perfring_sample *s)
{
	const struct perfring_frame *f = &s->ip;
	char num[32];

	if (ro->comm_list && !in_list(ro->comm_list, s->comm ? s->comm : ""))
		return false;
	snprintf(num, sizeof(num), "%d", (int)s->pid);
	if (ro->pid_list && !in_list(ro->pid_list, num))
		return false;
	snprintf(num, sizeof(num), "%d", (int)s->tid);
	if (ro->tid_list && !in_list(ro->tid_list, num))
		return false;
	if (ro->dso_list &&
	    (!f->dso || !(in_list(ro->dso_list, short_dso(f->dso)) ||
			  in_list(ro->dso_list, f->dso))))
		return false;
	if (!ro->symbols)
		return true;
	if (!f->sym)
		return false;
	/* perf takes the symbol's start address too, "0x.." */
	snprintf(num, sizeof(num), "0x%" PRIx64, f->ip - f->sym_off);
	return in_list(ro->symbols, f->sym) || in_list(ro->symbols, num);
}

static int on_sample(struct perfring_data *r, const struct perfring_sample *s,
		     void *ctx)
{
	struct bmodel *m = ctx;
	struct bevent *ev = model_event(m, s->event);
	const char *comm = s->comm ? s->comm : "";
	struct entry *e;
	int nr = s->nr_callchain < 128 ? (int)s->nr_callchain : 128;

	(void)r;
	ev->samples++;
	ev->period += s->period;
	if (!sample_shown(m->ro, s))
		return 0;
	e = entry_of_frame(m, ev, comm, s->pid, &s->ip);
	e->self += s->period;
	m->any_chain |= nr > 1;
	if (!m->children) {
		/* its callers, from the sample up (perf's callee order) */
		if (nr > 1)
			chain_add(e, s->callchain, 1, nr, 1, s->period);
		return 0;
	}
	if (!nr)
		e->children += s->period;
	/* every symbol of the chain gets the sample once, with the callees
	 * below it (perf's caller order under a Children entry) */
	for (int i = 0; i < nr; i++) {
		size_t c = (size_t)(entry_of_frame(m, ev, comm, s->pid,
						   &s->callchain[i]) -
				    ev->v);
		bool seen = false;

		/* indices: entry_get() may move the array */
		m->chain_idx[i] = c;
		for (int j = 0; j < i && !seen; j++)
			seen = m->chain_idx[j] == c;
		if (seen)
			continue;
		ev->v[c].children += s->period;
		if (i > 0)
			chain_add(&ev->v[c], s->callchain, i - 1, -1, -1,
				  s->period);
	}
	return 0;
}

static int entry_cmp_self(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(a->sym, b->sym);
}

static int entry_cmp_children(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->children != b->children)
		return a->children > b->children ? -1 : 1;
	return entry_cmp_self(x, y);
}

static int cnode_cmp(const void *x, const void *y)
{
	const struct cnode *a = *(struct cnode *const *)x;
	const struct cnode *b = *(struct cnode *const *)y;

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void cnode_sort(struct cnode *n)
{
	size_t nr = 0, i = 0;
	struct cnode *c, **v;

	for (c = n->child; c; c = c->next)
		nr++;
	if (nr < 2) {
		if (n->child)
			cnode_sort(n->child);
		return;
	}
	v = xrealloc(NULL, nr * sizeof(*v));
	for (c = n->child; c; c = c->next)
		v[i++] = c;
	qsort(v, nr, sizeof(*v), cnode_cmp);
	for (i = 0; i < nr; i++) {
		v[i]->next = i + 1 < nr ? v[i + 1] : NULL;
		cnode_sort(v[i]);
	}
	n->child = v[0];
	free(v);
}

static void cnode_free(struct cnode *n)
{
	while (n) {
		struct cnode *next = n->next;

		cnode_free(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

static void cnode_expand_all(struct cnode *n, bool on)
{
	for (; n; n = n->next) {
		n->expanded = on;
		cnode_expand_all(n->child, on);
	}
}

/* Every event's entries by Children or Self, their chains by period; the
 * hash tables rebuilt for the entries' new places. */
void model_sort(struct bmodel *m)
{
	for (uint32_t i = 0; i < m->nr_ev; i++) {
		struct bevent *ev = &m->ev[i];

		if (ev->nr)
			qsort(ev->v, ev->nr, sizeof(*ev->v),
			      m->children ? entry_cmp_children :
					    entry_cmp_self);
		for (size_t j = 0; j < ev->nr; j++)
			cnode_sort(&ev->v[j].root);
		if (ev->nr)
			entry_rehash(m, ev);
	}
}

void model_free(struct bmodel *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nr_ev; i++) {
		struct bevent *ev = &m->ev[i];

		for (size_t j = 0; j < ev->nr; j++) {
			free(ev->v[j].comm);
			free(ev->v[j].dso);
			free(ev->v[j].sym);
			cnode_free(ev->v[j].root.child);
		}
		free(ev->v);
		free(ev->tab);
		free(ev->name);
	}
	free(m->ev);
	free(m);
}

/* The lost events of @path from perfring_stats()' summary. */
static uint64_t file_lost(const char *path)
{
	char *text = NULL, *p;
	size_t len = 0;
	uint64_t lost = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return 0;
	perfring_stats(path, f);
	fclose(f);
	for (p = text; p && (p = strstr(p, "lost events:")); p++)
		lost += strtoull(p + strlen("lost events:"), NULL, 10);
	free(text);
	return lost;
}

/* Report's model: the file of @ro, its filters as --stdio's. */
static int report_load(const struct perfring_report_opts *ro, bool children,
		       struct bmodel *m)
{
	PERFRING_OPTS(perfring_script_opts, so, .input = ro->input,
		      .symfs = ro->symfs, .cpu_list = ro->cpu_list,
		      .time_range = ro->time_range);
	struct perfring_data *r;
	int err;

	so.hide_callchain = ro->no_callgraph;
	m->children = children;
	m->ro = ro; /* sample_shown()'s filters */
	err = perfring_data_open(&so, &r);
	if (err)
		return err;
	err = perfring_data_run(r, on_sample, m);
	perfring_data_close(r);
	if (err && err != -EBADMSG)
		return err;
	/* perf's Children column only when the samples have chains */
	m->children &= m->any_chain;
	model_sort(m);
	if (strcmp(ro->input, "-"))
		m->lost = file_lost(ro->input);
	return 0;
}

static bool entry_visible(const struct browser *b, const struct entry *e)
{
	if (b->zoom_dso && strcmp(b->zoom_dso, e->dso))
		return false;
	if (b->zoom_comm && strcmp(b->zoom_comm, e->comm))
		return false;
	if (b->filter[0] && !strstr(e->sym, b->filter))
		return false;
	if (b->m->children ? !e->children && !e->self : !e->self)
		return false;
	return true;
}

static void row_add(struct browser *b, struct entry *e, struct cnode *n,
		    int depth)
{
	if (b->nr_rows == b->cap_rows) {
		b->cap_rows = b->cap_rows ? 2 * b->cap_rows : 1024;
		b->rows = xrealloc(b->rows, b->cap_rows * sizeof(*b->rows));
	}
	b->rows[b->nr_rows++] = (struct row){ e, n, depth };
}

static void rows_chain(struct browser *b, struct entry *e, struct cnode *n,
		       int depth)
{
	for (; n; n = n->next) {
		row_add(b, e, n, depth);
		if (n->expanded)
			rows_chain(b, e, n->child, depth + 1);
	}
}

static void rows_build(struct browser *b)
{
	struct bevent *ev = &b->m->ev[b->cur_ev];

	b->nr_rows = 0;
	for (size_t i = 0; i < ev->nr; i++) {
		struct entry *e = &ev->v[i];

		if (!entry_visible(b, e))
			continue;
		row_add(b, e, NULL, 0);
		if (e->expanded)
			rows_chain(b, e, e->root.child, 1);
	}
	if (b->sel >= b->nr_rows)
		b->sel = b->nr_rows ? b->nr_rows - 1 : 0;
}

/* ---- a fresh model (top's refresh) ---------------------------------------- */

/* The names from @root down to @target into @path; its depth, or -1. */
static int cnode_path(const struct cnode *root, const struct cnode *target,
		      const char **path, int depth, int max)
{
	for (const struct cnode *c = root->child; c && depth < max;
	     c = c->next) {
		int d;

		path[depth] = c->name;
		if (c == target)
			return depth + 1;
		d = cnode_path(c, target, path, depth + 1, max);
		if (d > 0)
			return d;
	}
	return -1;
}

/* @old's expanded nodes expanded in @new too (by name). */
static void cnode_carry(const struct cnode *old, struct cnode *new)
{
	for (const struct cnode *o = old->child; o; o = o->next) {
		if (!o->expanded && !o->child)
			continue;
		for (struct cnode *n = new->child; n; n = n->next)
			if (!strcmp(n->name, o->name)) {
				n->expanded = o->expanded;
				cnode_carry(o, n);
				break;
			}
	}
}

/*
 * @fresh replaces the model: the expanded entries and chains stay
 * expanded, and the selection stays on the same entry (by its keys, not
 * its row) or chain node, at the same place on the screen when it can.
 */
static void browser_swap(struct browser *b, struct bmodel *fresh)
{
	struct bmodel *old = b->m;
	struct row sel = b->nr_rows ? b->rows[b->sel] : (struct row){ 0 };
	const char *path[128];
	int depth = -1;
	size_t screen_y = b->sel >= b->top ? b->sel - b->top : 0;
	struct entry *e = NULL;
	struct cnode *n = NULL;

	if (b->cur_ev >= fresh->nr_ev)
		b->cur_ev = 0;
	if (sel.e && sel.n)
		depth = cnode_path(&sel.e->root, sel.n, path, 0, 128);
	for (uint32_t i = 0; i < old->nr_ev; i++) {
		struct bevent *oev = &old->ev[i], *nev = NULL;

		for (uint32_t j = 0; j < fresh->nr_ev && !nev; j++)
			if (!strcmp(fresh->ev[j].name, oev->name))
				nev = &fresh->ev[j];
		for (size_t j = 0; nev && j < oev->nr; j++) {
			struct entry *o = &oev->v[j],
				     *f = entry_find(fresh, nev, o);

			if (!f)
				continue;
			if (o == sel.e)
				e = f;
			f->expanded = o->expanded;
			cnode_carry(&o->root, &f->root);
		}
	}
	n = e ? &e->root : NULL;
	for (int d = 0; n && d < depth; d++) {
		struct cnode *c = n->child;

		while (c && strcmp(c->name, path[d]))
			c = c->next;
		n = c;
	}
	b->m = fresh;
	model_free(old);
	rows_build(b);
	for (size_t i = 0; e && i < b->nr_rows; i++)
		if (b->rows[i].e == e &&
		    b->rows[i].n == (depth > 0 && n ? n : NULL)) {
			b->sel = i;
			b->top = i > screen_y ? i - screen_y : 0;
			break;
		}
}

/* ---- drawing ------------------------------------------------------------- */

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* The title line, as perf's: samples, event, event count, lost (perf
 * top's: its rate and this interval's lost of all). */
static void draw_title(struct browser *b, int cols)
{
	struct bevent *ev = &b->m->ev[b->cur_ev];
	char t[512], rate[48] = "";
	int n;

	if (b->m->live && ev->freq)
		snprintf(rate, sizeof(rate), " %" PRIu64 " Hz,", ev->freq);
	n = snprintf(t, sizeof(t),
		     "Samples: %" PRIu64
		     "  of event '%s',%s Event count (approx.): %" PRIu64,
		     ev->samples, ev->name, rate, ev->period);
	if (b->m->live && n > 0 && (size_t)n < sizeof(t))
		n += snprintf(t + n, sizeof(t) - (size_t)n,
			      " lost: %" PRIu64 "/%" PRIu64, ev->lost,
			      ev->lost_total);
	else if (b->m->lost && n > 0 && (size_t)n < sizeof(t))
		n += snprintf(t + n, sizeof(t) - (size_t)n, ", lost: %" PRIu64,
			      b->m->lost);
	if (b->m->nr_ev > 1 && n > 0 && (size_t)n < sizeof(t))
		snprintf(t + n, sizeof(t) - (size_t)n, "  [event %u/%u: Tab]",
			 b->cur_ev + 1, b->m->nr_ev);
	attron(A_BOLD);
	mvaddnstr(0, 0, t, cols);
	attroff(A_BOLD);
	clrtoeol();
}

static void draw_status(const char *text, int lines, int cols)
{
	attron(A_REVERSE);
	mvaddnstr(lines - 1, 0, text, cols);
	for (int x = (int)strlen(text); x < cols; x++)
		addch(' ');
	attroff(A_REVERSE);
}

/* The columns of the model's keys: the header's names, or @e's values. */
static void key_columns(const struct bmodel *m, const struct entry *e,
			char *buf, size_t len)
{
	static const struct {
		const char *name;
		int width; /* 0: the rest of the line */
	} cols[BK_MAX] = {
		[BK_COMM] = { "Command", 15 },
		[BK_PID] = { "    Pid:Command", 23 },
		[BK_DSO] = { "Shared Object", 20 },
		[BK_SYM] = { "Symbol", 0 },
	};
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < m->nkeys && n < len; i++) {
		enum bkey k = m->keys[i];
		char value[512];
		int w;

		if (!e)
			snprintf(value, sizeof(value), "%s", cols[k].name);
		else if (k == BK_COMM)
			snprintf(value, sizeof(value), "%s", e->comm);
		else if (k == BK_PID)
			snprintf(value, sizeof(value), "%7d:%.15s", (int)e->pid,
				 e->comm);
		else if (k == BK_DSO)
			snprintf(value, sizeof(value), "%s", e->dso);
		else
			snprintf(value, sizeof(value), "[%c] %s",
				 e->kernel ? 'k' : '.', e->sym);
		w = cols[k].width ? snprintf(buf + n, len - n, "%s%-*.*s",
					     i ? "  " : "", cols[k].width,
					     cols[k].width, value) :
				    snprintf(buf + n, len - n, "%s%s",
					     i ? "  " : "", value);
		if (w > 0)
			n += (size_t)w;
	}
}

static void draw(struct browser *b)
{
	struct bevent *ev = &b->m->ev[b->cur_ev];
	int lines = LINES, cols = COLS, body = lines - 3;
	char line[1024], keys[768], status[512];

	erase();
	draw_title(b, cols);
	key_columns(b->m, NULL, keys, sizeof(keys));
	snprintf(line, sizeof(line), "%s  %s",
		 b->m->children ? "  Children      Self" : "  Overhead", keys);
	mvaddnstr(1, 0, line, cols);
	if (body < 1)
		body = 1;
	if (b->sel < b->top)
		b->top = b->sel;
	if (b->sel >= b->top + (size_t)body)
		b->top = b->sel - (size_t)body + 1;
	for (int y = 0; y < body && b->top + (size_t)y < b->nr_rows; y++) {
		const struct row *r = &b->rows[b->top + (size_t)y];
		const struct entry *e = r->e;

		if (!r->n) {
			char fold = !e->has_chain ? ' ' :
				    e->expanded	  ? '-' :
						    '+';

			key_columns(b->m, e, keys, sizeof(keys));
			if (b->m->children)
				snprintf(line, sizeof(line),
					 "%c %7.2f%% %8.2f%%  %s", fold,
					 pct(e->children, ev->period),
					 pct(e->self, ev->period), keys);
			else
				snprintf(line, sizeof(line), "%c %7.2f%%  %s",
					 fold, pct(e->self, ev->period), keys);
		} else {
			char fold = !r->n->child   ? '-' :
				    r->n->expanded ? '-' :
						     '+';
			int ind = 4 * r->depth + 10;

			snprintf(line, sizeof(line), "%*s%c--%.2f%%--%s", ind,
				 "", fold, pct(r->n->period, ev->period),
				 r->n->name);
		}
		if (b->top + (size_t)y == b->sel)
			attron(A_REVERSE);
		mvaddnstr(y + 2, 0, line, cols);
		if (b->top + (size_t)y == b->sel) {
			for (int x = (int)strlen(line); x < cols; x++)
				addch(' ');
			attroff(A_REVERSE);
		}
	}
	snprintf(status, sizeof(status), "%s%s%s%s%s%s  %zu/%zu  %s",
		 b->zoom_dso ? " dso: " : "", b->zoom_dso ? b->zoom_dso : "",
		 b->zoom_comm ? " thread: " : "",
		 b->zoom_comm ? b->zoom_comm : "", b->filter[0] ? " /" : "",
		 b->filter, b->nr_rows ? b->sel + 1 : 0, b->nr_rows,
		 b->msg[0] ? b->msg : "Press '?' for help");
	draw_status(status, lines, cols);
	refresh();
}

/* A key within @wait_ms (-1: as long as it takes; ERR: none came).  An
 * escape sequence ncurses does not know (a terminal's key unknown to its
 * terminfo: ESC [ or ESC O and more) is dropped whole, not taken for Esc.
 * Anything else behind an Esc (a resize the kernel signalled late, a key
 * typed after it) stays for the next read. */
static int read_key(int wait_ms)
{
	int c, next;

	timeout(wait_ms);
	c = getch();
	if (c != 27)
		return c;
	timeout(0);
	next = getch();
	if (next == '[' || next == 'O') {
		while (getch() != ERR)
			;
		c = 0;
	} else if (next != ERR) {
		ungetch(next);
	}
	return c;
}

/* A key for a view over the list (help, annotate): with a live source,
 * ERR once it ended (a signal), so that the view closes and the list
 * quits; its newer models wait in the source meanwhile. */
static int view_key(struct browser *b)
{
	struct bsource *src = b ? b->src : NULL;

	if (!src || !src->poll)
		return read_key(-1);
	for (;;) {
		int c = read_key(src->tick_ms);
		struct bmodel *fresh = NULL;
		int r;

		if (c != ERR)
			return c;
		r = src->poll(src, &fresh);
		if (r > 0)
			browser_swap(b, fresh);
		if (r < 0)
			return ERR;
	}
}

static void show_help(struct browser *b)
{
	static const char *const help[] = {
		"Keys (as perf report's and perf top's):",
		"",
		"  Up/Down/PgUp/PgDn/Home/End  move",
		"  +, e, Enter   expand/collapse the call chains of the entry",
		"  E, C          expand/collapse all",
		"  a             annotate the selected symbol (a file's samples)",
		"  d             zoom into the selected entry's object (again: out)",
		"  t             zoom into the selected entry's thread (again: out)",
		"  /             filter by symbol name (empty: none)",
		"  Tab           next event (several events)",
		"  ?, h          this help",
		"  q, Esc        back (zoom, filter, annotate) or quit",
		"",
		"top: the list is refreshed every -d seconds; the selected",
		"entry and the expanded chains stay.",
		"",
		"Press any key.",
	};
	do {
		erase();
		for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
			mvaddnstr((int)i, 0, help[i], COLS);
		refresh();
	} while (view_key(b) == KEY_RESIZE);
}

/* A text view of @text: scroll, q/Esc/Left back; @hot the line shown
 * highlighted and first on screen. */
static void text_view(struct browser *b, const char *title, char *text,
		      long hot)
{
	char **lines = NULL;
	size_t nr = 0, cap = 0, top;

	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');

		if (nr == cap) {
			cap = cap ? 2 * cap : 256;
			lines = xrealloc(lines, cap * sizeof(*lines));
		}
		lines[nr++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	top = hot > 5 ? (size_t)hot - 5 : 0;
	for (;;) {
		int body = LINES - 2, c;
		char status[256];

		if (body < 1)
			body = 1;
		erase();
		attron(A_BOLD);
		mvaddnstr(0, 0, title, COLS);
		attroff(A_BOLD);
		for (int y = 0; y < body && top + (size_t)y < nr; y++) {
			bool h = (long)(top + (size_t)y) == hot;

			if (h)
				attron(A_REVERSE | A_BOLD);
			mvaddnstr(y + 1, 0, lines[top + (size_t)y], COLS);
			if (h)
				attroff(A_REVERSE | A_BOLD);
		}
		snprintf(status, sizeof(status),
			 " annotate: %zu/%zu lines  q/Esc: back", top + 1, nr);
		draw_status(status, LINES, COLS);
		refresh();
		c = view_key(b);
		if (c == 'q' || c == 27 || c == KEY_LEFT || c == ERR)
			break;
		if ((c == KEY_DOWN || c == 'j') && top + 1 < nr)
			top++;
		else if ((c == KEY_UP || c == 'k') && top > 0)
			top--;
		else if (c == KEY_NPAGE || c == ' ')
			top = top + (size_t)body < nr ? top + (size_t)body :
							top;
		else if (c == KEY_PPAGE)
			top = top > (size_t)body ? top - (size_t)body : 0;
		else if (c == KEY_HOME)
			top = 0;
		else if (c == KEY_END)
			top = nr > (size_t)body ? nr - (size_t)body : 0;
	}
	free(lines);
}

/* perfring_annotate()'s text of @ao in the text view, its hottest
 * instruction highlighted. */
static void annotate_view(struct browser *b,
			  const struct perfring_annotate_opts *ao)
{
	char *text = NULL, title[256];
	size_t len = 0;
	double best = -1;
	long hot = -1, line = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return;
	err = perfring_annotate(ao, f);
	fclose(f);
	for (char *p = text; p && *p; line++) {
		char *nl = strchr(p, '\n');
		double v;
		char colon;

		/* "   51.88 :   1155:   mov ..." */
		if (sscanf(p, " %lf %c", &v, &colon) == 2 && colon == ':' &&
		    v > best) {
			best = v;
			hot = line;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	snprintf(title, sizeof(title), "Annotate %s%s%s", ao->symbol,
		 err ? ": " : "", err ? strerror(-err) : "");
	text_view(b, title, text, hot);
	free(text);
}

static void prompt(const char *what, char *buf, size_t len)
{
	char in[128] = "";

	draw_status(what, LINES, COLS);
	move(LINES - 1, (int)strlen(what));
	echo();
	curs_set(1);
	timeout(-1);
	getnstr(in, (int)sizeof(in) - 1);
	noecho();
	curs_set(0);
	snprintf(buf, len, "%s", in);
}

static void toggle_zoom(char **zoom, const char *value)
{
	if (*zoom) {
		free(*zoom);
		*zoom = NULL;
	} else {
		*zoom = xstrdup(value);
	}
}

/* a: the selected symbol's instructions, from the file report reads;
 * top's samples are in no file perfring_annotate() could read. */
static void annotate_key(struct browser *b, const struct row *r)
{
	const struct perfring_report_opts *ro = b->src->ro;

	if (!r)
		return;
	if (!ro) {
		snprintf(
			b->msg, sizeof(b->msg),
			"a: annotate reads a perf.data; top's live samples are in none (perfring record, then perfring annotate)");
		return;
	}
	if (r->e->kernel && !r->n) {
		snprintf(b->msg, sizeof(b->msg),
			 "a: no annotation of kernel symbols");
		return;
	}
	PERFRING_OPTS(perfring_annotate_opts, ao, .input = ro->input,
		      .symbol = r->n ? r->n->name : r->e->sym,
		      .symfs = ro->symfs, .event = b->m->ev[b->cur_ev].name);
	annotate_view(b, &ao);
}

/* d/t: zoom, when the entries are grouped by that key. */
static void zoom_key(struct browser *b, const struct row *r, bool dso)
{
	char **zoom = dso ? &b->zoom_dso : &b->zoom_comm;

	if (!*zoom && !model_has_key(b->m, dso ? BK_DSO : BK_COMM) &&
	    !(!dso && model_has_key(b->m, BK_PID))) {
		snprintf(b->msg, sizeof(b->msg),
			 "%c: the entries are not grouped by %s (--sort)",
			 dso ? 'd' : 't', dso ? "dso" : "comm or pid");
		return;
	}
	if (r || *zoom)
		toggle_zoom(zoom, r ? (dso ? r->e->dso : r->e->comm) : "");
	b->sel = 0;
}

/* A tick without a key: a live source's newer model; -1 once it ended. */
static int tick(struct browser *b)
{
	struct bmodel *fresh = NULL;
	int r;

	if (!b->src->poll)
		return -1; /* a file's browser: no key means no terminal */
	r = b->src->poll(b->src, &fresh);
	if (r > 0)
		browser_swap(b, fresh);
	return r < 0 ? -1 : 0;
}

/* 0 on q at the top level (or when a live source ended). */
int browse_loop(struct browser *b)
{
	for (;;) {
		struct row *r;
		int c, body = LINES - 3;

		rows_build(b);
		draw(b);
		c = read_key(b->src->poll ? b->src->tick_ms : -1);
		if (c == ERR) {
			if (tick(b))
				return 0;
			continue;
		}
		b->msg[0] = 0;
		r = b->nr_rows ? &b->rows[b->sel] : NULL;
		switch (c) {
		case KEY_DOWN:
		case 'j':
			if (b->sel + 1 < b->nr_rows)
				b->sel++;
			break;
		case KEY_UP:
		case 'k':
			if (b->sel)
				b->sel--;
			break;
		case KEY_NPAGE:
		case ' ':
			b->sel += (size_t)(body > 1 ? body : 1);
			break;
		case KEY_PPAGE:
			b->sel = b->sel > (size_t)body ? b->sel - (size_t)body :
							 0;
			break;
		case KEY_HOME:
			b->sel = 0;
			break;
		case KEY_END:
			b->sel = b->nr_rows ? b->nr_rows - 1 : 0;
			break;
		case '+':
		case 'e':
		case '\n':
		case KEY_ENTER:
			if (r && !r->n)
				r->e->expanded = !r->e->expanded;
			else if (r)
				r->n->expanded = !r->n->expanded;
			break;
		case 'E':
		case 'C':
			for (size_t i = 0; i < b->m->ev[b->cur_ev].nr; i++) {
				struct entry *e = &b->m->ev[b->cur_ev].v[i];

				e->expanded = c == 'E';
				cnode_expand_all(e->root.child, c == 'E');
			}
			break;
		case 'a':
			annotate_key(b, r);
			break;
		case 'd':
		case 't':
			zoom_key(b, r, c == 'd');
			break;
		case '/':
			prompt("Symbol filter: ", b->filter, sizeof(b->filter));
			b->sel = 0;
			break;
		case '\t':
			b->cur_ev = (b->cur_ev + 1) % b->m->nr_ev;
			b->sel = 0;
			break;
		case '?':
		case 'h':
			show_help(b);
			break;
		case KEY_RESIZE:
			break;
		case 'q':
		case 27:
		case KEY_LEFT:
			/* back out of a zoom or filter first, as perf */
			if (b->zoom_dso || b->zoom_comm || b->filter[0]) {
				free(b->zoom_dso);
				free(b->zoom_comm);
				b->zoom_dso = b->zoom_comm = NULL;
				b->filter[0] = 0;
				b->sel = 0;
				break;
			}
			if (c == KEY_LEFT)
				break;
			return 0;
		default:
			break;
		}
	}
}

void screen_start(void)
{
	setlocale(LC_ALL, "");
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	/* Esc alone: back without waiting ncurses' second for the rest of
	 * a sequence; long enough for a loaded machine's arrow keys */
	set_escdelay(150);
}

void browser_free(struct browser *b)
{
	model_free(b->m);
	free(b->rows);
	free(b->zoom_dso);
	free(b->zoom_comm);
}

/* report --sort's keys when the browser has them all as columns (else
 * its comm,dso,sym, said on the status line). */
static void report_keys(struct browser *b, const char *sort)
{
	if (sort && keys_parse(b->m, sort))
		return;
	keys_parse(b->m, "comm,dso,sym");
	if (sort)
		snprintf(
			b->msg, sizeof(b->msg),
			"--sort %s: the browser groups by comm,dso,sym (--stdio has every key)",
			sort);
}

int browse_report(const struct perfring_report_opts *ro, bool has_children)
{
	struct bsource src = { .ro = ro };
	struct browser b = { .src = &src };
	int err;

	b.m = xrealloc(NULL, sizeof(*b.m));
	memset(b.m, 0, sizeof(*b.m));
	report_keys(&b, ro->sort);
	err = report_load(ro, has_children, b.m);
	if (!err && !b.m->nr_ev) {
		fprintf(stderr, "%s: report %s: no samples\n", prog, ro->input);
		browser_free(&b);
		return 0;
	}
	if (err) {
		browser_free(&b);
		return err;
	}
	screen_start();
	err = browse_loop(&b);
	endwin();
	browser_free(&b);
	return err;
}

struct bmodel *model_new(const char *sort, bool live)
{
	struct bmodel *m = xrealloc(NULL, sizeof(*m));

	memset(m, 0, sizeof(*m));
	m->live = live;
	if (!sort || !keys_parse(m, sort))
		keys_parse(m, "dso,sym");
	return m;
}

int browse_annotate(const struct perfring_annotate_opts *ao)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (!ao->symbol) {
		/* no symbol: the text of every one, as --stdio, to browse */
		screen_start();
		f = open_memstream(&text, &len);
		if (!f) {
			endwin();
			return -ENOMEM;
		}
		err = perfring_annotate(ao, f);
		fclose(f);
		text_view(NULL, "Annotate", text, -1);
		free(text);
		endwin();
		return err;
	}
	screen_start();
	annotate_view(NULL, ao);
	endwin();
	return 0;
}
