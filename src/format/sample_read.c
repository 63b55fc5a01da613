// SPDX-License-Identifier: MIT
/* PERF_SAMPLE_READ values as samples of their events (sample_read.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../common/log.h"
#include "sample_read.h"

struct sread_slot {
	uint64_t id, value;
	bool used;
};

static uint32_t slot_hash(uint64_t id)
{
	return (uint32_t)(id * 0x9e3779b97f4a7c15ull >> 32);
}

/* @id's slot (made, zero, when new); NULL: no memory. */
static struct sread_slot *slot(struct sread *m, uint64_t id)
{
	uint32_t i;

	if (m->nr >= m->mask / 2) {
		uint32_t nmask = m->mask ? m->mask * 2 + 1 : 63;
		struct sread_slot *t = calloc((size_t)nmask + 1, sizeof(*t));

		if (!t)
			return NULL;
		for (uint32_t k = 0; m->t && k <= m->mask; k++) {
			if (!m->t[k].used)
				continue;
			i = slot_hash(m->t[k].id) & nmask;
			while (t[i].used)
				i = (i + 1) & nmask;
			t[i] = m->t[k];
		}
		free(m->t);
		m->t = t;
		m->mask = nmask;
	}
	i = slot_hash(id) & m->mask;
	while (m->t[i].used && m->t[i].id != id)
		i = (i + 1) & m->mask;
	if (!m->t[i].used) {
		m->t[i] = (struct sread_slot){ .id = id, .used = true };
		m->nr++;
	}
	return &m->t[i];
}

PR_HIDDEN int sread_each(struct sread *m, struct prd_file *f,
			 const struct prd_sample *s,
			 int (*fn)(void *ctx, const struct prd_attr *a,
				   uint64_t id, uint64_t delta),
			 void *ctx)
{
	uint64_t rf = s->attr->attr.read_format, nr = 1, per, v, id = 0;
	const unsigned char *p = s->read;
	size_t at = 0, times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	size_t id_at;
	int ret;

	if (!p)
		return 0;
	/* {value, id, lost} per member after nr and the times (group);
	 * value, the times, id, lost (one) */
	per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	id_at = 8;
	if (rf & PERF_FORMAT_GROUP) {
		memcpy(&nr, p, 8);
		at = 8 * (1 + times);
	} else {
		per += times;
		id_at += 8 * times;
	}
	/* the reader checked that nr values fit in the record: again, as
	 * this walk reads them */
	if (at > s->read_size || nr > (s->read_size - at) / (8 * per))
		return 0;
	for (uint64_t k = 0; k < nr; k++, at += 8 * per) {
		const struct prd_attr *a;
		struct sread_slot *last;
		uint64_t delta;

		memcpy(&v, p + at, 8);
		if (rf & PERF_FORMAT_ID)
			memcpy(&id, p + at + id_at, 8);
		a = prd_attr_by_id(f, id);
		if (!a)
			continue;
		last = slot(m, id);
		if (!last)
			return -ENOMEM;
		delta = v - last->value;
		last->value = v;
		if (!delta)
			continue;
		ret = fn(ctx, a, id, delta);
		if (ret)
			return ret;
	}
	return 0;
}

PR_HIDDEN void sread_free(struct sread *m)
{
	free(m->t);
	memset(m, 0, sizeof(*m));
}
