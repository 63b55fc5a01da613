/* SPDX-License-Identifier: MIT */
/*
 * The recorder's side of the fleet (fleet layer): the records the
 * recorder reads from the kernel rings, fed as they come, become the
 * interval's symbolized samples (profile.h).  Symbols are resolved here,
 * on the host, where the binaries are: threads and maps from the side-band
 * records (machine/threads.c), ELF symbols, kallsyms and JIT maps
 * (machine/symbols.c), DWARF unwinding of --call-graph dwarf samples; a
 * process in another mount namespace (a container) has its objects
 * opened through /proc/PID/root, and every object's build-id goes with
 * its frames.  Memory stays bounded over days of -a: the thread and object
 * tables are rebuilt (from /proc, by the recorder: fleet_collector_stale())
 * once enough processes came and went.
 */
#ifndef PERFRING_FLEET_COLLECT_H
#define PERFRING_FLEET_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "profile.h"

struct fleet_collector;

struct fleet_collect_stats {
	uint64_t samples; /* samples added to intervals */
	uint64_t bad_samples; /* not decodable (counted, skipped) */
	uint64_t unknown_id; /* of no event we know */
	uint64_t resets; /* thread and object tables rebuilt */
	uint64_t enomem; /* samples lost for want of memory */
};

/* @clockid: the clock of the events' time stamps (perf's -k). */
int fleet_collector_new(const struct fleet_meta *meta, int clockid,
			struct fleet_collector **out);
void fleet_collector_free(struct fleet_collector *c);
/* An event whose samples are collected: its attr, name and kernel ids. */
int fleet_collector_add_event(struct fleet_collector *c,
			      const struct perf_event_attr *a, const char *name,
			      const uint64_t *ids, uint32_t nr_ids);
/* One record synthesized from /proc (what ran before), @size bytes,
 * contiguous: taken at once. */
void fleet_collector_feed(struct fleet_collector *c, const void *rec,
			  size_t size);
/*
 * A record from a ring: @size bytes at @off of the ring's two pieces,
 * queued.  The rings are per CPU: a process's FORK, COMM and MMAP2 may be
 * in another ring than its first samples, so records are taken in time
 * order, as perf report takes them (its FINISHED_ROUND rule): at each
 * fleet_collector_round() those older than the newest record of the
 * round before.
 */
void fleet_collector_queue(struct fleet_collector *c, const void *const ptr[2],
			   const size_t len[2], int pieces, size_t off,
			   size_t size);
/* A round (a pass over the rings) ended; @all: the last one. */
void fleet_collector_round(struct fleet_collector *c, bool all);
/* Bytes the interval being collected holds. */
size_t fleet_collector_bytes(const struct fleet_collector *c);
/*
 * Ends the interval: its profile (to be freed by the caller with
 * fleet_profile_free() and free()), a new one begun.  NULL when out of
 * memory.
 */
struct fleet_profile *fleet_collector_take(struct fleet_collector *c);
/*
 * True once enough threads exited that the tables are rebuilt: the caller
 * then calls fleet_collector_reset() and feeds the records of what runs
 * now (synthesized from /proc) before more ring records.
 */
bool fleet_collector_stale(const struct fleet_collector *c);
int fleet_collector_reset(struct fleet_collector *c);
void fleet_collector_stats(const struct fleet_collector *c,
			   struct fleet_collect_stats *st);

#endif
