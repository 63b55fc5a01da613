/* SPDX-License-Identifier: MIT */
/*
 * Continuous profiling into stores (fleet layer), as the recorder uses it
 * (record --push): the records read from the rings are fed in, every
 * interval the collected samples (collect.h) go to one thread per sink
 * (sink.h), which encodes them for its store and delivers them, oldest
 * first, retrying with backoff; what waits is bounded (a spool directory
 * or memory), the oldest dropped and counted past the bound.  Nothing the
 * recording thread does waits for a store.
 */
#ifndef PERFRING_FLEET_FLEET_H
#define PERFRING_FLEET_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "perfring/tools.h"

struct fleet;

/* The sinks started (their threads deliver what a spool holds already).
 * @clockid: of the events' time stamps.  0 or -errno (logged). */
int fleet_open(const struct perfring_push_opts *o, int clockid,
	       struct fleet **out);
int fleet_add_event(struct fleet *f, const struct perf_event_attr *a,
		    const char *name, const uint64_t *ids, uint32_t nr_ids);
/* A record from a ring or synthesized (contiguous, @size bytes). */
void fleet_feed(struct fleet *f, const void *rec, size_t size);
/* The same from a ring's two pieces: @size bytes at @off of them. */
void fleet_feed_pieces(struct fleet *f, const void *const ptr[2],
		       const size_t len[2], int pieces, size_t off,
		       size_t size);
/*
 * Each pass of the recorder: ends the interval when it is due (or full).
 * Returns true when the collector's tables were just rebuilt: the caller
 * feeds the records of what runs (synthesized from /proc) next.
 */
bool fleet_tick(struct fleet *f);
/* The last interval, delivery until the stores answer or time is up,
 * the threads stopped, @st (may be NULL) filled; @f freed. */
void fleet_close(struct fleet *f, struct perfring_push_stats *st);
/* For the synthesis sink: fleet_feed() with an int return. */
int fleet_synth_sink(void *ctx, const void *rec, size_t size);

#endif
