// SPDX-License-Identifier: MIT
/* A profile summed per event and sort key, for perfring diff. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "diff_hist.h"

int dhist_parse_sort(const char *sort, unsigned *keys)
{
	static const struct {
		const char *name;
		unsigned key;
	} names[] = {
		{ "dso", DK_DSO },   { "sym", DK_SYM }, { "symbol", DK_SYM },
		{ "comm", DK_COMM }, { "pid", DK_PID },
	};
	int n = 0;

	for (const char *p = sort; *p;) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncmp(names[i].name, p, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]) || n == DIFF_MAX_KEYS)
			return -1;
		keys[n++] = names[i].key;
		p += len;
		if (*p)
			p++;
	}
	return n ? n : -1;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

const struct dentry *dhist_find(const struct dhist_event *e, const char *key)
{
	if (!e->tab)
		return NULL;
	for (size_t i = hash_str(key) & e->mask;; i = (i + 1) & e->mask) {
		uint32_t v = e->tab[i];

		if (!v)
			return NULL;
		if (!strcmp(e->v[v - 1].key, key))
			return &e->v[v - 1];
	}
}

const struct dhist_event *dhist_event_find(const struct dhist *h,
					   const char *name)
{
	for (uint32_t i = 0; i < h->nr_events; i++)
		if (!strcmp(h->events[i].name, name))
			return &h->events[i];
	return NULL;
}

static int grow(struct dhist_event *e)
{
	size_t cap = e->cap ? 2 * e->cap : 256, mask = 2 * cap - 1;
	struct dentry *v = realloc(e->v, cap * sizeof(*v));
	uint32_t *tab;

	if (!v)
		return -ENOMEM;
	e->v = v;
	e->cap = cap;
	tab = calloc(mask + 1, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t j = 0; j < e->nr; j++) {
		size_t i = hash_str(e->v[j].key) & mask;

		while (tab[i])
			i = (i + 1) & mask;
		tab[i] = (uint32_t)j + 1;
	}
	free(e->tab);
	e->tab = tab;
	e->mask = mask;
	return 0;
}

static struct dhist_event *event_get(struct dhist *h, const char *name)
{
	struct dhist_event *v;

	for (uint32_t i = 0; i < h->nr_events; i++)
		if (!strcmp(h->events[i].name, name))
			return &h->events[i];
	v = realloc(h->events, (h->nr_events + 1) * sizeof(*v));
	if (!v)
		return NULL;
	h->events = v;
	v = &v[h->nr_events];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	if (!v->name)
		return NULL;
	h->nr_events++;
	return v;
}

struct reading {
	struct dhist *h;
	const unsigned *keys;
	int nr_keys;
	struct dhist_event *last;
	char text[DIFF_MAX_KEYS][512];
};

/* One column's text of the sample, as perf diff prints it. */
static void key_text(const struct perfring_sample *s, unsigned key, char *buf,
		     size_t len)
{
	const struct perfring_frame *fr = &s->ip;
	const char *slash;

	switch (key) {
	case DK_DSO:
		slash = fr->dso ? strrchr(fr->dso, '/') : NULL;
		snprintf(buf, len, "%s",
			 !fr->dso ? "[unknown]" :
			 slash	  ? slash + 1 :
				    fr->dso);
		break;
	case DK_SYM:
		if (fr->sym)
			snprintf(buf, len, "[%c] %s", fr->kernel ? 'k' : '.',
				 fr->sym);
		else
			snprintf(buf, len, "[%c] 0x%016" PRIx64,
				 fr->kernel ? 'k' : '.', fr->addr);
		break;
	case DK_COMM:
		snprintf(buf, len, "%s", s->comm ? s->comm : ":-1");
		break;
	default:
		snprintf(buf, len, "%7d:%s", s->pid, s->comm ? s->comm : "");
		break;
	}
}

static int on_sample(struct perfring_data *r, const struct perfring_sample *s,
		     void *ctx)
{
	struct reading *rd = ctx;
	struct dhist_event *e = rd->last;
	char key[DIFF_MAX_KEYS * 512 + DIFF_MAX_KEYS];
	struct dentry *d;
	size_t kl = 0;

	(void)r;
	if (!e || strcmp(e->name, s->event ? s->event : "")) {
		e = rd->last = event_get(rd->h, s->event ? s->event : "");
		if (!e)
			return -ENOMEM;
	}
	e->period += s->period;
	e->samples++;
	for (int k = 0; k < rd->nr_keys; k++) {
		size_t l;

		key_text(s, rd->keys[k], rd->text[k], sizeof(rd->text[k]));
		l = strlen(rd->text[k]);
		/* perf's entries without a symbol are one per object (its
		 * sym comparison finds two NULL symbols equal), shown with
		 * the first sample's address: keyed without it */
		if (rd->keys[k] == DK_SYM && !s->ip.sym)
			l = 4;
		memcpy(key + kl, rd->text[k], l);
		kl += l;
		key[kl++] = '\x01';
	}
	key[kl] = 0;
	d = (struct dentry *)dhist_find(e, key);
	if (!d) {
		size_t i;

		if (2 * (e->nr + 1) > e->mask && grow(e))
			return -ENOMEM;
		d = &e->v[e->nr];
		memset(d, 0, sizeof(*d));
		d->key = strdup(key);
		if (!d->key)
			return -ENOMEM;
		for (int k = 0; k < rd->nr_keys; k++) {
			d->keys[k] = strdup(rd->text[k]);
			if (!d->keys[k])
				return -ENOMEM;
		}
		for (i = hash_str(key) & e->mask; e->tab[i];
		     i = (i + 1) & e->mask)
			;
		e->tab[i] = (uint32_t)++e->nr;
	}
	d->period += s->period;
	d->samples++;
	return 0;
}

int dhist_read(struct dhist *h, const char *path, const char *symfs,
	       const unsigned *keys, int nr_keys)
{
	PERFRING_OPTS(perfring_script_opts, so, .input = path, .symfs = symfs);
	struct reading rd = { .h = h, .keys = keys, .nr_keys = nr_keys };
	struct perfring_data *r;
	int err;

	/* no callchain unless a key needs it: the ip alone is keyed */
	so.hide_callchain = true;
	err = perfring_data_open(&so, &r);
	if (err)
		return err;
	err = perfring_data_run(r, on_sample, &rd);
	perfring_data_close(r);
	if (err == -EBADMSG) {
		pr_warn("diff: %s is damaged: its samples up to the damage are compared",
			path);
		err = 0;
	}
	return err;
}

void dhist_free(struct dhist *h)
{
	for (uint32_t i = 0; i < h->nr_events; i++) {
		struct dhist_event *e = &h->events[i];

		for (size_t j = 0; j < e->nr; j++) {
			free(e->v[j].key);
			for (int k = 0; k < DIFF_MAX_KEYS; k++)
				free(e->v[j].keys[k]);
		}
		free(e->v);
		free(e->tab);
		free(e->name);
	}
	free(h->events);
	memset(h, 0, sizeof(*h));
}
