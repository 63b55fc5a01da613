/* SPDX-License-Identifier: MIT */
/*
 * Samples with PERF_SAMPLE_READ as perf delivers them
 * (deliver_sample_value()): one per read value, for the event the value's
 * id names, its period the value's growth since that id's last one.
 */
#ifndef PERFRING_FORMAT_SAMPLE_READ_H
#define PERFRING_FORMAT_SAMPLE_READ_H

#include <stdbool.h>
#include <stdint.h>
#include "perf_reader.h"

/* Each id's last value. */
struct sread {
	struct sread_slot *t;
	uint32_t mask, nr;
};

/*
 * Calls @fn(@ctx, attr, id, delta) for each read value of @s (which has
 * PERF_SAMPLE_READ) whose id an attr of @f has and whose value grew (or
 * moved: the difference wraps as perf's does); stops at a non-zero
 * return and returns it.  -ENOMEM when the table cannot grow.
 */
int sread_each(struct sread *m, struct prd_file *f, const struct prd_sample *s,
	       int (*fn)(void *ctx, const struct prd_attr *a, uint64_t id,
			 uint64_t delta),
	       void *ctx);

void sread_free(struct sread *m);

#endif
