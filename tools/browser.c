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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* A call chain node under an entry: callers (self mode) or callees
 * (children mode), with the period through it. */
struct cnode {
	char *name;
	uint64_t period;
	struct cnode *child, *next;
	bool expanded;
};

struct entry {
	char *comm, *dso, *sym;
	bool kernel;
	uint64_t self, children;
	struct cnode root; /* its chains */
	bool expanded;
	bool has_chain;
};

struct bevent {
	char *name;
	uint64_t samples, period;
	struct entry *v;
	size_t nr, cap;
	uint32_t *tab; /* index + 1 into v by entry_hash(), 0: empty */
	size_t mask;
};

/* One line on the screen: an entry, or a chain node under one. */
struct row {
	struct entry *e;
	struct cnode *n; /* NULL: the entry itself */
	int depth;
};

struct browser {
	const struct perfring_report_opts *ro;
	bool children; /* Children column, entries by it */
	struct bevent *ev;
	uint32_t nr_ev, cur_ev;
	char *zoom_dso, *zoom_comm;
	char filter[128];
	struct row *rows;
	size_t nr_rows, cap_rows;
	size_t sel, top;
	uint64_t lost;
	const char *input;
	size_t chain_idx[128]; /* on_sample()'s entries of one chain */
	bool any_chain; /* a sample had a call chain */
};

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

static uint64_t entry_hash(const char *comm, const char *dso, const char *sym)
{
	uint64_t h = 1469598103934665603ull;
	const char *parts[3] = { comm, dso, sym };

	for (int i = 0; i < 3; i++) {
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
		h = (h ^ 1) * 1099511628211ull;
	}
	return h;
}

static void entry_rehash(struct bevent *ev)
{
	size_t mask = 2 * ev->cap - 1;

	free(ev->tab);
	ev->tab = xrealloc(NULL, (mask + 1) * sizeof(*ev->tab));
	memset(ev->tab, 0, (mask + 1) * sizeof(*ev->tab));
	ev->mask = mask;
	for (size_t j = 0; j < ev->nr; j++) {
		const struct entry *e = &ev->v[j];
		size_t i = entry_hash(e->comm, e->dso, e->sym) & mask;

		while (ev->tab[i])
			i = (i + 1) & mask;
		ev->tab[i] = (uint32_t)j + 1;
	}
}

/* The entry of @comm and the frame's object and symbol, made on first
 * use. */
static struct entry *entry_get(struct bevent *ev, const char *comm,
			       const struct perfring_frame *f)
{
	char name[256];
	const char *dso = short_dso(f->dso);
	size_t i;

	frame_name(f, name, sizeof(name));
	if (ev->tab) {
		for (i = entry_hash(comm, dso, name) & ev->mask; ev->tab[i];
		     i = (i + 1) & ev->mask) {
			struct entry *e = &ev->v[ev->tab[i] - 1];

			if (!strcmp(e->sym, name) && !strcmp(e->dso, dso) &&
			    !strcmp(e->comm, comm))
				return e;
		}
	}
	if (ev->nr == ev->cap) {
		ev->cap = ev->cap ? 2 * ev->cap : 256;
		ev->v = xrealloc(ev->v, ev->cap * sizeof(*ev->v));
		entry_rehash(ev);
	}
	memset(&ev->v[ev->nr], 0, sizeof(ev->v[0]));
	ev->v[ev->nr].comm = xstrdup(comm);
	ev->v[ev->nr].dso = xstrdup(dso);
	ev->v[ev->nr].sym = xstrdup(name);
	ev->v[ev->nr].kernel = f->kernel;
	for (i = entry_hash(comm, dso, name) & ev->mask; ev->tab[i];
	     i = (i + 1) & ev->mask)
		;
	ev->tab[i] = (uint32_t)ev->nr + 1;
	return &ev->v[ev->nr++];
}

static void chain_add(struct entry *e, const struct perfring_frame *chain,
		      int from, int to, int step, uint64_t period)
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

static int on_sample(struct perfring_data *r, const struct perfring_sample *s,
		     void *ctx)
{
	struct browser *b = ctx;
	struct bevent *ev = NULL;
	const char *comm = s->comm ? s->comm : "";
	struct entry *e;
	int nr = s->nr_callchain < 128 ? (int)s->nr_callchain : 128;

	(void)r;
	for (uint32_t i = 0; i < b->nr_ev; i++)
		if (!strcmp(b->ev[i].name, s->event))
			ev = &b->ev[i];
	if (!ev) {
		b->ev = xrealloc(b->ev, (b->nr_ev + 1) * sizeof(*b->ev));
		ev = &b->ev[b->nr_ev++];
		memset(ev, 0, sizeof(*ev));
		ev->name = xstrdup(s->event);
	}
	ev->samples++;
	ev->period += s->period;
	e = entry_get(ev, comm, &s->ip);
	e->self += s->period;
	b->any_chain |= nr > 1;
	if (!b->children) {
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
		size_t c =
			(size_t)(entry_get(ev, comm, &s->callchain[i]) - ev->v);
		bool seen = false;

		/* indices: entry_get() may move the array */
		b->chain_idx[i] = c;
		for (int j = 0; j < i && !seen; j++)
			seen = b->chain_idx[j] == c;
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

static int browser_load(struct browser *b)
{
	PERFRING_OPTS(perfring_script_opts, so, .input = b->input,
		      .symfs = b->ro->symfs, .comm_list = b->ro->comm_list,
		      .pid_list = b->ro->pid_list, .tid_list = b->ro->tid_list,
		      .cpu_list = b->ro->cpu_list,
		      .time_range = b->ro->time_range);
	struct perfring_data *r;
	int err;

	so.hide_callchain = b->ro->no_callgraph;
	err = perfring_data_open(&so, &r);
	if (err)
		return err;
	err = perfring_data_run(r, on_sample, b);
	perfring_data_close(r);
	if (err && err != -EBADMSG)
		return err;
	/* perf's Children column only when the samples have chains */
	b->children &= b->any_chain;
	for (uint32_t i = 0; i < b->nr_ev; i++) {
		struct bevent *ev = &b->ev[i];

		if (ev->nr)
			qsort(ev->v, ev->nr, sizeof(*ev->v),
			      b->children ? entry_cmp_children :
					    entry_cmp_self);
		for (size_t j = 0; j < ev->nr; j++)
			cnode_sort(&ev->v[j].root);
	}
	if (strcmp(b->input, "-"))
		b->lost = file_lost(b->input);
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
	if (b->children ? !e->children && !e->self : !e->self)
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
	struct bevent *ev = &b->ev[b->cur_ev];

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

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* The title line, as perf's: samples, event, event count, lost. */
static void draw_title(struct browser *b, int cols)
{
	struct bevent *ev = &b->ev[b->cur_ev];
	char t[512];
	int n;

	n = snprintf(t, sizeof(t),
		     "Samples: %" PRIu64
		     "  of event '%s', Event count (approx.): %" PRIu64,
		     ev->samples, ev->name, ev->period);
	if (b->lost && n > 0 && (size_t)n < sizeof(t))
		n += snprintf(t + n, sizeof(t) - (size_t)n, ", lost: %" PRIu64,
			      b->lost);
	if (b->nr_ev > 1 && n > 0 && (size_t)n < sizeof(t))
		snprintf(t + n, sizeof(t) - (size_t)n, "  [event %u/%u: Tab]",
			 b->cur_ev + 1, b->nr_ev);
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

static void draw(struct browser *b)
{
	struct bevent *ev = &b->ev[b->cur_ev];
	int lines = LINES, cols = COLS, body = lines - 3;
	char line[1024], status[256];

	erase();
	draw_title(b, cols);
	if (b->children)
		mvaddnstr(
			1, 0,
			"  Children      Self  Command          Shared Object         Symbol",
			cols);
	else
		mvaddnstr(
			1, 0,
			"  Overhead  Command          Shared Object         Symbol",
			cols);
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

			if (b->children)
				snprintf(
					line, sizeof(line),
					"%c %7.2f%% %8.2f%%  %-15.15s  %-20.20s  [%c] %s",
					fold, pct(e->children, ev->period),
					pct(e->self, ev->period), e->comm,
					e->dso, e->kernel ? 'k' : '.', e->sym);
			else
				snprintf(
					line, sizeof(line),
					"%c %7.2f%%  %-15.15s  %-20.20s  [%c] %s",
					fold, pct(e->self, ev->period), e->comm,
					e->dso, e->kernel ? 'k' : '.', e->sym);
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
	snprintf(status, sizeof(status),
		 "%s%s%s%s%s%s  %zu/%zu  Press '?' for help",
		 b->zoom_dso ? " dso: " : "", b->zoom_dso ? b->zoom_dso : "",
		 b->zoom_comm ? " thread: " : "",
		 b->zoom_comm ? b->zoom_comm : "", b->filter[0] ? " /" : "",
		 b->filter, b->nr_rows ? b->sel + 1 : 0, b->nr_rows);
	draw_status(status, lines, cols);
	refresh();
}

/* A key; an escape sequence ncurses does not know (a terminal's key
 * unknown to its terminfo: ESC [ or ESC O and more) is dropped whole,
 * not taken for Esc.  Anything else behind an Esc (a resize the kernel
 * signalled late, a key typed after it) stays for the next read. */
static int read_key(void)
{
	int c = getch(), next;

	if (c != 27)
		return c;
	nodelay(stdscr, TRUE);
	next = getch();
	if (next == '[' || next == 'O') {
		while (getch() != ERR)
			;
		c = 0;
	} else if (next != ERR) {
		ungetch(next);
	}
	nodelay(stdscr, FALSE);
	return c;
}

static void show_help(void)
{
	static const char *const help[] = {
		"Keys (as perf report's):",
		"",
		"  Up/Down/PgUp/PgDn/Home/End  move",
		"  +, e, Enter   expand/collapse the call chains of the entry",
		"  E, C          expand/collapse all",
		"  a             annotate the selected symbol",
		"  d             zoom into the selected entry's object (again: out)",
		"  t             zoom into the selected entry's thread (again: out)",
		"  /             filter by symbol name (empty: none)",
		"  Tab           next event (files with several)",
		"  ?, h          this help",
		"  q, Esc        back (zoom, filter, annotate) or quit",
		"",
		"Press any key.",
	};
	erase();
	for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
		mvaddnstr((int)i, 0, help[i], COLS);
	refresh();
	while (read_key() == KEY_RESIZE)
		;
}

/* A text view of @text: scroll, q/Esc/Left back; @hot the line shown
 * highlighted and first on screen. */
static void text_view(const char *title, char *text, long hot)
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
		c = read_key();
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
static void annotate_view(const struct perfring_annotate_opts *ao)
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
	text_view(title, text, hot);
	free(text);
}

static void prompt(const char *what, char *buf, size_t len)
{
	char in[128] = "";

	draw_status(what, LINES, COLS);
	move(LINES - 1, (int)strlen(what));
	echo();
	curs_set(1);
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

/* 0 on q at the top level. */
static int browse_loop(struct browser *b)
{
	for (;;) {
		struct row *r;
		int c, body = LINES - 3;

		rows_build(b);
		draw(b);
		c = read_key();
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
			for (size_t i = 0; i < b->ev[b->cur_ev].nr; i++) {
				struct entry *e = &b->ev[b->cur_ev].v[i];

				e->expanded = c == 'E';
				cnode_expand_all(e->root.child, c == 'E');
			}
			break;
		case 'a':
			if (r && !r->e->kernel) {
				PERFRING_OPTS(perfring_annotate_opts, ao,
					      .input = b->input,
					      .symbol = r->n ? r->n->name :
							       r->e->sym,
					      .symfs = b->ro->symfs,
					      .event = b->ev[b->cur_ev].name);

				annotate_view(&ao);
			}
			break;
		case 'd':
			if (r || b->zoom_dso)
				toggle_zoom(&b->zoom_dso, r ? r->e->dso : "");
			b->sel = 0;
			break;
		case 't':
			if (r || b->zoom_comm)
				toggle_zoom(&b->zoom_comm, r ? r->e->comm : "");
			b->sel = 0;
			break;
		case '/':
			prompt("Symbol filter: ", b->filter, sizeof(b->filter));
			b->sel = 0;
			break;
		case '\t':
			b->cur_ev = (b->cur_ev + 1) % b->nr_ev;
			b->sel = 0;
			break;
		case '?':
		case 'h':
			show_help();
			break;
		case KEY_RESIZE:
			break;
		case 'q':
		case 27:
		case KEY_LEFT:
		case ERR:
			/* back out of a zoom or filter first, as perf */
			if (c != ERR &&
			    (b->zoom_dso || b->zoom_comm || b->filter[0])) {
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

static void screen_start(void)
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

static void browser_free(struct browser *b)
{
	for (uint32_t i = 0; i < b->nr_ev; i++) {
		struct bevent *ev = &b->ev[i];

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
	free(b->ev);
	free(b->rows);
	free(b->zoom_dso);
	free(b->zoom_comm);
}

int browse_report(const struct perfring_report_opts *ro, bool has_children)
{
	struct browser b = { .ro = ro, .input = ro->input };
	int err;

	b.children = has_children;
	err = browser_load(&b);
	if (!err && !b.nr_ev) {
		fprintf(stderr, "%s: report %s: no samples\n", prog, b.input);
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
		text_view("Annotate", text, -1);
		free(text);
		endwin();
		return err;
	}
	screen_start();
	annotate_view(ao);
	endwin();
	return 0;
}
