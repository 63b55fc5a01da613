/* SPDX-License-Identifier: MIT */
/*
 * The CLI's browser (browser.c: report, annotate and the screen;
 * browser_live.c: top's refreshes as the browser's model): what the two
 * share, its model of a profile and the browser's state.
 */
#ifndef PERFRING_TOOLS_BROWSER_H
#define PERFRING_TOOLS_BROWSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cli.h"

struct cnode {
	char *name;
	uint64_t period;
	struct cnode *child, *next;
	bool expanded;
};

/* The columns an entry can be grouped by: perf's --sort keys the browser
 * shows (report's default comm,dso,sym; top's dso,sym). */
enum bkey { BK_COMM, BK_PID, BK_DSO, BK_SYM, BK_MAX };

/* Only the model's keys tell entries apart; the other fields hold their
 * first sample's values. */
struct entry {
	char *comm, *dso, *sym;
	int32_t pid;
	bool kernel;
	uint64_t self, children;
	struct cnode root; /* its chains */
	bool expanded;
	bool has_chain;
};

struct bevent {
	char *name;
	uint64_t samples, period;
	uint64_t freq, lost, lost_total; /* live: the title's figures */
	struct entry *v;
	size_t nr, cap;
	uint32_t *tab; /* index + 1 into v by entry_hash(), 0: empty */
	size_t mask;
};

/*
 * What the browser shows: per event its entries, sorted, with their
 * chains.  Report builds one from the file; top one per refresh, which
 * replaces the last (browser_swap() carries the selection and the
 * expanded chains over).
 */
struct bmodel {
	struct bevent *ev;
	uint32_t nr_ev;
	enum bkey keys[BK_MAX];
	int nkeys;
	bool children; /* Children column, entries by it */
	bool live; /* top's: perf top's title */
	const struct perfring_report_opts *ro; /* report's: its filters */
	bool any_chain; /* a sample had a call chain */
	uint64_t lost;
	size_t chain_idx[128]; /* on_sample()'s entries of one chain */
};

/*
 * Where the models come from.  report: the file, read once (ro: its
 * options, what a annotates); top: poll() every tick_ms hands over the
 * newest model, 1 then, 0 with none new, -1 when the source ended (a
 * signal stopped it).
 */
struct bsource {
	const struct perfring_report_opts *ro;
	int tick_ms;
	int (*poll)(struct bsource *src, struct bmodel **fresh);
};

/* One line on the screen: an entry, or a chain node under one. */
struct row {
	struct entry *e;
	struct cnode *n; /* NULL: the entry itself */
	int depth;
};

struct browser {
	struct bmodel *m;
	struct bsource *src;
	uint32_t cur_ev;
	char *zoom_dso, *zoom_comm;
	char filter[128];
	char msg[256]; /* on the status line until the next key */
	struct row *rows;
	size_t nr_rows, cap_rows;
	size_t sel, top;
};

/* A model keyed by perf's --sort text (dso,sym when NULL or unknown). */
struct bmodel *model_new(const char *sort, bool live);
void model_free(struct bmodel *m);
/* The event named @name in @m, added if new. */
struct bevent *model_event(struct bmodel *m, const char *name);
/* The entry of these keys in @ev, added if new. */
struct entry *entry_get(const struct bmodel *m, struct bevent *ev,
			const char *comm, int32_t pid, const char *dso,
			const char *sym, bool kernel);
/* @period down the path of @chain's frames from @from to @to (not
 * included) by @step, each a level deeper under @e's root. */
void chain_add(struct entry *e, const struct perfring_frame *chain, int from,
	       int to, int step, uint64_t period);
/* Entries and chains in the order shown. */
void model_sort(struct bmodel *m);

/* curses on, the browser's colours and keys. */
void screen_start(void);
/* Keys until q; returns 0 or the source's error. */
int browse_loop(struct browser *b);
void browser_free(struct browser *b);

#endif
