/* SPDX-License-Identifier: MIT */
/*
 * A profile's samples summed per event and sort key (diff.c): each
 * sample's own ip keyed as perf diff keys it ("dso,sym" by default).
 */
#ifndef PERFRING_REPORT_DIFF_HIST_H
#define PERFRING_REPORT_DIFF_HIST_H

#include <stddef.h>
#include <stdint.h>

enum diff_key { DK_DSO, DK_SYM, DK_COMM, DK_PID };
#define DIFF_MAX_KEYS 4

struct dentry {
	char *key; /* the keys' texts joined by '\x01' (the pairing key) */
	char *keys[DIFF_MAX_KEYS]; /* each column's text */
	uint64_t period, samples;
};

struct dhist_event {
	char *name;
	uint64_t period, samples;
	struct dentry *v;
	size_t nr, cap;
	uint32_t *tab; /* open addressing: index + 1 into v, 0 empty */
	size_t mask;
};

struct dhist {
	struct dhist_event *events;
	uint32_t nr_events;
};

/* "dso,sym" into @keys; the number of keys, or -1. */
int dhist_parse_sort(const char *sort, unsigned *keys);
/* Reads @path's samples; 0 or -errno (logged). */
int dhist_read(struct dhist *h, const char *path, const char *symfs,
	       const unsigned *keys, int nr_keys);
const struct dhist_event *dhist_event_find(const struct dhist *h,
					   const char *name);
const struct dentry *dhist_find(const struct dhist_event *e, const char *key);
void dhist_free(struct dhist *h);

#endif
