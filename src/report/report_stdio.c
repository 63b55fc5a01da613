// SPDX-License-Identifier: MIT
/*
 * perf report --stdio's text (ui/stdio/hist.c): an event's or a group's
 * table (header, column widths, rows and their call graphs), the groups
 * of the file, and --tasks / --mmaps.
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
		n = snprintf(buf, len, "%s", report_src_str(r, e->srcline));
		break;
	case K_SRCFILE:
		n = snprintf(buf, len, "%s", report_src_str(r, e->srcfile));
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

void report_put_pct(struct outbuf *ob, uint64_t v, uint64_t total, int width)
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
		uint64_t v = hentry_value(row[m], c), total = mem[m]->total;
		char buf[32];
		int k;

		if (!r->sep) {
			if (pct)
				report_put_pct(ob, v, total, width);
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

/* One table's layout: its columns, their widths, its rows. */
struct table {
	struct hists **mem; /* the hists side by side, the leader's first */
	uint32_t n;
	struct hentry **v; /* k rows of n entries (NULL: a member has none) */
	uint32_t k;
	int cols[MAX_COLS], ncols;
	int last; /* the last column shown */
	size_t width[K_MAX];
	int nw; /* perf's Samples column */
	int pw; /* and Period */
};

/* perf's columns: -F's, or Children, Self (Overhead), -n's Samples,
 * Period and the keys */
static void table_columns(const struct report *r, struct table *t)
{
	if (r->fields) {
		memcpy(t->cols, r->cols, sizeof(int) * (size_t)r->ncols);
		t->ncols = r->ncols;
	} else {
		if (r->children_col)
			t->cols[t->ncols++] = COL_CHILDREN;
		t->cols[t->ncols++] = COL_OVERHEAD;
		if (r->o.show_nr_samples)
			t->cols[t->ncols++] = COL_SAMPLE;
		if (r->o.show_total_period)
			t->cols[t->ncols++] = COL_PERIOD;
		for (int i = 0; i < r->nkeys; i++)
			t->cols[t->ncols++] = r->keys[i];
		if (r->ipc_col)
			t->cols[t->ncols++] = COL_IPC;
	}
	t->last = t->ncols - 1;
	while (t->last > 0 && t->cols[t->last] < K_MAX &&
	       r->hidden[t->cols[t->last]])
		t->last--;
}

/* The rows: the leader's entries in perf's order, each with its members'
 * (perf's hists__link(): the members' entries join the leader's). */
static int table_rows(struct report *r, struct table *t)
{
	struct hists *h = t->mem[0];
	struct hentry **lead;
	uint32_t n = t->n;
	int err;

	for (uint32_t m = 1; m < n; m++)
		for (uint32_t i = 0; t->mem[m]->tab && i <= t->mem[m]->mask;
		     i++)
			for (struct hentry *e = t->mem[m]->tab[i]; e;
			     e = e->next)
				if (!hists_findnew_entry(r, h, e))
					return -ENOMEM;
	t->v = calloc((h->nr ? h->nr : 1) * (size_t)n, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	lead = calloc(h->nr ? h->nr : 1, sizeof(*lead));
	if (!lead)
		return -ENOMEM;
	/* perf's order of the leader's entries, the members' periods
	 * breaking ties (entry_cmp()) */
	r->grp_mem = t->mem;
	r->grp_n = n;
	err = hists_output_order(r, h, lead, &t->k);
	r->grp_mem = NULL;
	r->grp_n = 0;
	if (err) {
		free(lead);
		return -ENOMEM;
	}
	/* A row: the leader's entry, then each member's (NULL: none). */
	for (uint32_t j = 0; j < t->k; j++) {
		t->v[j * n] = lead[j];
		for (uint32_t m = 1; m < n; m++)
			t->v[j * n + m] =
				hists_find_entry(r, t->mem[m], lead[j]);
	}
	free(lead);
	return 0;
}

/* A key column's width for entry @e (perf sizes the shown entries only). */
static void key_width(const struct report *r, struct table *t,
		      const struct hentry *e, enum sort_key key)
{
	char buf[4096];
	size_t len = key_text(r, e, key, buf, sizeof(buf));

	/* perf sizes Command by the thread's comm as it ends
	 * (thread__comm_len()), and cuts the sample's to it */
	if (key == K_COMM)
		len = e->thread->comm_len;
	if ((key == K_SRCLINE && !(e->src_sized & 1)) ||
	    (key == K_SRCFILE && !(e->src_sized & 2)))
		len = 0;
	/* perf sizes Symbol by the name alone (namelen + 4): " (inlined)"
	 * overflows */
	if (key == K_SYM && e->inl)
		len -= 10;
	/* perf's CPU column stays 3 wide ("-001" overflows) */
	if (len > t->width[key] && key != K_CPU)
		t->width[key] = len;
	/* an entry without a symbol widens Shared Object to an address's 16
	 * digits (perf's hists__set_unres_dso_col_len), except with a field
	 * separator or a --dsos list */
	if (key == K_DSO && !e->sym && t->width[key] < 16 && !r->sep &&
	    !r->filt.dsos)
		t->width[key] = 16;
}

static void table_widths(const struct report *r, struct table *t)
{
	uint32_t n = t->n;
	char buf[64];

	t->nw = 12;
	t->pw = 12;
	for (int i = 0; i < r->nkeys; i++)
		t->width[r->keys[i]] = r->keys[i] == K_PID ?
					       15 :
					       strlen(key_header[r->keys[i]]);
	for (uint32_t j = 0; j < t->k; j++) {
		if (t->v[j * n]->filtered)
			continue; /* perf sizes the shown entries only */
		for (int i = 0; i < r->nkeys; i++)
			key_width(r, t, t->v[j * n], r->keys[i]);
		for (uint32_t m = 0; m < n; m++) {
			int d = snprintf(buf, sizeof(buf), "%llu",
					 (unsigned long long)hentry_value(
						 t->v[j * n + m], V_SAMPLES));

			if (r->o.show_nr_samples && d > t->nw)
				t->nw = d;
			d = snprintf(buf, sizeof(buf), "%llu",
				     (unsigned long long)hentry_value(
					     t->v[j * n + m], V_PERIOD));
			if (r->o.show_total_period && d > t->pw)
				t->pw = d;
		}
	}
}

/* The column names, and (but with -t) the dotted rule under them. */
static void put_column_names(struct report *r, const struct table *t)
{
	struct outbuf *ob = &r->ob;
	int n = (int)t->n;

	/* a group's columns: 8 wide per member, headed on the right */
	for (int i = 0, shown = 0; i < t->ncols; i++) {
		int c = t->cols[i];

		if (c < K_MAX && r->hidden[c])
			continue;
		if (shown++)
			col_gap(r, ob, false);
		if (c == COL_CHILDREN)
			ob_str_w(ob, "Children", 8, 8 * n, false);
		else if (c == COL_OVERHEAD && r->children_col)
			ob_str_w(ob, "Self", 4, 8 * n, false);
		else if (c == COL_OVERHEAD)
			ob_str_w(ob, "Overhead", 8, 8 * n, false);
		else if (c == COL_SAMPLE)
			ob_str_w(ob, "Samples", 7, t->nw * n, false);
		else if (c == COL_PERIOD)
			ob_str_w(ob, "Period", 6, t->pw * n, false);
		else if (c == COL_IPC)
			ob_str_w(ob, "IPC   [IPC Coverage]", 20, 20, true);
		else if (c == K_PID) {
			/* perf right-aligns it in 15, then pads. */
			ob_str_w(ob, "Pid:Command", 11, 15, false);
			ob_spaces(ob, t->width[c] - 15);
		} else {
			ob_str_w(ob, key_header[c], strlen(key_header[c]),
				 (int)t->width[c], true);
		}
	}
	/* -t: no rule under the column names */
	if (r->sep) {
		ob_putc(ob, '\n');
		return;
	}
	ob_puts(ob, "\n# ");
	for (int i = 0, shown = 0; i < t->ncols; i++) {
		int c = t->cols[i];
		size_t w = c == COL_SAMPLE ? (size_t)t->nw * t->n :
			   c == COL_PERIOD ? (size_t)t->pw * t->n :
			   c == COL_IPC	   ? 20 :
			   c >= K_MAX	   ? 8 * (size_t)t->n :
					     t->width[c];

		if (c < K_MAX && r->hidden[c])
			continue;
		if (shown++)
			ob_write(ob, "  ", 2);
		for (size_t j = 0; j < w; j++)
			ob_putc(ob, '.');
	}
	ob_puts(ob, "\n#\n");
}

/* "# Samples: 1K of event 'x'", the count, the column names. */
static void put_table_header(struct report *r, const struct table *t,
			     const char *title, bool plural)
{
	struct outbuf *ob = &r->ob;
	uint64_t ns = 0, total = 0;
	char unit = ' ';

	for (uint32_t m = 0; m < t->n; m++) {
		ns += t->mem[m]->nr_samples;
		total += t->mem[m]->total;
	}
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
	put_column_names(r, t);
}

/* Row @row's columns (@row: the leader's entry, then the members'). */
static void put_row(struct report *r, const struct table *t,
		    struct hentry **row)
{
	struct outbuf *ob = &r->ob;
	const struct hentry *e = row[0];
	char buf[4096];

	for (int i = 0, shown = 0; i < t->ncols; i++) {
		int c = t->cols[i];
		size_t len;

		if (c < K_MAX && r->hidden[c])
			continue;
		col_gap(r, ob, !shown++);
		if (c == COL_IPC) {
			ob_str_w(ob, "-      -", 8, 20, true);
			continue;
		}
		if (c >= K_MAX) {
			put_values(r, ob, row, t->mem, t->n,
				   c == COL_CHILDREN ? V_CHILDREN :
				   c == COL_OVERHEAD ? V_SELF :
				   c == COL_SAMPLE   ? V_SAMPLES :
						       V_PERIOD,
				   c == COL_SAMPLE ? t->nw :
				   c == COL_PERIOD ? t->pw :
						     8);
			continue;
		}
		len = key_text(r, e, c, buf, sizeof(buf));
		if (c == K_COMM && len > t->width[c])
			len = t->width[c];
		/* "%-.*s": cut to the column */
		if ((c == K_SRCLINE || c == K_SRCFILE) && len > t->width[c])
			len = t->width[c];
		/* perf pads every column but a last sym, trace, srcline or
		 * srcfile. */
		if (i < t->last || (c != K_SYM && c != K_TRACE &&
				    c != K_SRCLINE && c != K_SRCFILE))
			ob_str_w(ob, buf, len, (int)t->width[c], true);
		else
			ob_write(ob, buf, len);
	}
	ob_putc(ob, '\n');
}

static void put_rows(struct report *r, const struct table *t)
{
	struct hists *h = t->mem[0];
	uint32_t n = t->n;

	for (uint32_t j = 0; j < t->k; j++) {
		struct hentry **row = t->v + j * n;
		const struct hentry *e = row[0];
		double pct = h->total ? (double)(r->children_col ? e->children :
								   e->self) *
						100.0 / (double)h->total :
					0.0;
		bool any = false;

		for (uint32_t m = 0; m < n; m++)
			any |= row[m] && (row[m]->self || row[m]->children);
		if (e->filtered || pct < r->o.percent_limit || !any)
			continue;
		put_row(r, t, row);
		if (r->use_callchain && !r->o.no_callgraph)
			callchain_print(r, e, h->total,
					r->children ? e->children : e->self);
		ob_line_done(&r->ob);
	}
}

/*
 * One table: @n hists side by side (a group: the leader's first, the
 * members' entries linked into it), titled @title ("events" when @plural:
 * a group's leader, as perf says it).
 */
static void print_hists(struct report *r, struct hists **mem, uint32_t n,
			const char *title, bool plural, bool first)
{
	struct table t = { .mem = mem, .n = n };

	table_columns(r, &t);
	if (table_rows(r, &t)) {
		free(t.v);
		r->ob.err = -ENOMEM;
		return;
	}
	table_widths(r, &t);
	if (!first)
		ob_write(&r->ob, "\n\n", 2);
	if (!r->o.quiet)
		put_table_header(r, &t, title, plural);
	put_rows(r, &t);
	free(t.v);
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
int report_print_all(struct report *r, bool *first)
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
int report_print_tasks(struct report *r)
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
