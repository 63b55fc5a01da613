// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <curses.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "browser.h"

/* ---- top's live source -------------------------------------------------- */

/*
 * perfring_top() runs on a thread of its own (as perf top's display and
 * sampling threads), so that the rings are drained while the browser
 * waits for keys or shows its help: each refresh's tables become a model
 * there, handed to the browser's thread under the lock.
 */
struct live {
	struct bsource src; /* first: poll() gets it */
	struct perfring_top_opts to;
	struct bmodel *building; /* the top thread's, until complete */
	pthread_mutex_t lock; /* guards what follows */
	struct bmodel *ready; /* the newest complete model, not taken yet */
	bool ended;
	int err;
	char *log; /* the library's messages, printed after the screen */
	size_t log_len;
	FILE *log_f;
};

/* A table of a refresh into the model being built; the last event's
 * completes it. */
static int live_on_table(const struct perfring_top_table *tab, void *ctx)
{
	struct live *l = ctx;
	struct bmodel *m = l->building;
	struct bevent *ev;

	if (!tab->event || !m) {
		model_free(m);
		m = l->building = model_new(tab->sort, true);
	}
	ev = model_event(m, tab->event_name);
	ev->samples = tab->samples_total;
	ev->period = tab->total_period;
	ev->freq = tab->freq;
	ev->lost = tab->lost;
	ev->lost_total = tab->lost_total;
	for (uint32_t i = 0; i < tab->nr_entries; i++) {
		const struct perfring_top_entry *te = &tab->entries[i];
		struct entry *e;
		char sym[256];

		if (te->pending)
			snprintf(sym, sizeof(sym), "[symbols not loaded yet]");
		else if (te->sym)
			snprintf(sym, sizeof(sym), "%s", te->sym);
		else
			snprintf(sym, sizeof(sym), "0x%016" PRIx64, te->addr);
		e = entry_get(m, ev, te->comm, te->pid, te->dso, sym,
			      te->kernel);
		e->self += te->period;
		/* frames[0] is the entry's own function: its callers above */
		for (uint32_t j = 0; j < te->nr_chains; j++)
			if (te->chains[j].nr_frames > 1)
				chain_add(e, te->chains[j].frames, 1,
					  (int)te->chains[j].nr_frames, 1,
					  te->chains[j].period);
	}
	if (tab->event + 1 >= tab->nr_events) {
		model_sort(m);
		pthread_mutex_lock(&l->lock);
		model_free(l->ready); /* the browser did not take it in time */
		l->ready = m;
		pthread_mutex_unlock(&l->lock);
		l->building = NULL;
	}
	return 0;
}

static int live_poll(struct bsource *src, struct bmodel **fresh)
{
	struct live *l = (struct live *)src;
	int r = 0;

	pthread_mutex_lock(&l->lock);
	if (l->ready) {
		*fresh = l->ready;
		l->ready = NULL;
		r = 1;
	} else if (l->ended) {
		r = -1;
	}
	pthread_mutex_unlock(&l->lock);
	return r;
}

static void *live_run(void *arg)
{
	struct live *l = arg;
	int err = perfring_top(&l->to, NULL, NULL);

	pthread_mutex_lock(&l->lock);
	l->ended = true;
	l->err = err;
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* The library's messages while the screen is the browser's. */
static void live_log(enum perfring_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	struct live *l = ctx;

	pthread_mutex_lock(&l->lock);
	if (l->log_f && ftell(l->log_f) < 65536)
		fprintf(l->log_f, "%s: %s: %s\n", prog, names[level], msg);
	pthread_mutex_unlock(&l->lock);
}

int browse_top(const struct perfring_top_opts *to)
{
	struct live l = { .src = { .tick_ms = 100, .poll = live_poll },
			  .to = *to };
	struct browser b = { .src = &l.src };
	pthread_t thread;
	int err;

	l.to.on_table = live_on_table;
	l.to.ctx = &l;
	pthread_mutex_init(&l.lock, NULL);
	l.log_f = open_memstream(&l.log, &l.log_len);
	perfring_set_log(live_log, &l, PERFRING_LOG_WARN);
	/* the first refresh's model replaces this empty one */
	b.m = model_new(to->sort, true);
	model_event(b.m, to->nr_events > 0 ? to->events[0] : "cpu-clock");
	snprintf(b.msg, sizeof(b.msg), "waiting for the first refresh");
	err = pthread_create(&thread, NULL, live_run, &l);
	if (err) {
		browser_free(&b);
		return -err;
	}
	screen_start();
	browse_loop(&b);
	endwin();
	control_stop(); /* q: the top thread's loop ends too */
	pthread_join(thread, NULL);
	perfring_set_log(NULL, NULL, PERFRING_LOG_ERROR);
	if (l.log_f) {
		fclose(l.log_f);
		if (l.log)
			fputs(l.log, stderr);
		free(l.log);
	}
	model_free(l.ready);
	model_free(l.building);
	browser_free(&b);
	pthread_mutex_destroy(&l.lock);
	return l.err;
}
