/* SPDX-License-Identifier: MIT */
/*
 * One interval of a fleet profile (fleet layer): the samples of a few
 * seconds, symbolized, with their stacks interned, as every sink and the
 * reading back share them.  Built by the recorder (collect.c) from the
 * rings, or from a store's rows (clickhouse.c); encoded as a pprof
 * profile (Pyroscope, Parca, export -f pprof --from) or as ClickHouse
 * RowBinary rows.  Strings, frames and stacks are interned, so a busy
 * interval costs about 40 bytes per sample plus its distinct stacks;
 * fleet_profile_bytes() is what the recorder bounds.
 */
#ifndef PERFRING_FLEET_PROFILE_H
#define PERFRING_FLEET_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include "../format/pbuf.h"
#include "../machine/intern.h"

#define FLEET_MAX_EVENTS 64
#define FLEET_MAX_LABELS 64
#define FLEET_MAX_FRAMES 256 /* per stack (more: the outermost dropped) */

/* A frame: what the stores keep of one resolved address. */
struct fleet_loc {
	uint32_t func; /* string id of the function (0: unresolved) */
	uint32_t dso; /* string id of the object's path (0: none) */
	uint32_t build_id; /* string id of its build-id in hex (0: none) */
	uint32_t kernel; /* 1: a kernel or module address */
	uint64_t ip; /* the address in the process (pprof's) */
	uint64_t rel; /* the address in the object's file (perf's map
			 address: what debuginfo is matched with) */
	uint64_t map_start, map_end, map_pgoff; /* its mapping (0: none) */
};

struct fleet_sample {
	uint64_t time_ns; /* wall clock (CLOCK_REALTIME) */
	uint64_t value; /* the period, in the event's unit */
	uint64_t count; /* samples this row stands for (1 when recorded) */
	uint32_t pid, tid, cpu;
	uint32_t comm; /* string id */
	uint32_t host; /* string id (0: the profile's own host) */
	uint32_t event; /* index in events[] */
	uint32_t stack; /* stack id (leaf first) */
};

struct fleet_event {
	char name[64];
	bool clock; /* cpu-clock, task-clock: the value is nanoseconds */
	uint64_t freq; /* samples per second asked for (0: a period) */
	uint64_t period;
};

/* What every interval of a recorder is labelled with (not owned). */
struct fleet_meta {
	const char *host;
	const char *service; /* the service label, or NULL */
	const char *const *keys, *const *values; /* --label KEY=VALUE */
	int nr_labels;
};

struct fleet_profile {
	const struct fleet_meta *meta;
	struct fleet_event events[FLEET_MAX_EVENTS];
	uint32_t nr_events;
	struct itab strs; /* id 1: "" */
	struct itab locs; /* struct fleet_loc */
	struct itab stacks; /* uint32_t loc ids, leaf first */
	struct fleet_sample *samples;
	size_t nr_samples, cap_samples;
	uint64_t start_ns, end_ns; /* wall clock span of the interval */
	uint64_t seq; /* interval number in this recording */
	int refs; /* queued to this many sinks (push.c) */
};

int fleet_profile_init(struct fleet_profile *p, const struct fleet_meta *m);
void fleet_profile_free(struct fleet_profile *p);
/* Bytes held: what the recorder bounds an interval and its queues by. */
size_t fleet_profile_bytes(const struct fleet_profile *p);

/* String id of @s (@n bytes); 0 or -ENOMEM/-E2BIG. */
int fleet_str(struct fleet_profile *p, const char *s, size_t n, uint32_t *id);
const char *fleet_str_of(const struct fleet_profile *p, uint32_t id,
			 size_t *len);
int fleet_loc(struct fleet_profile *p, const struct fleet_loc *l, uint32_t *id);
const struct fleet_loc *fleet_loc_of(const struct fleet_profile *p,
				     uint32_t id);
int fleet_stack(struct fleet_profile *p, const uint32_t *locs, uint32_t n,
		uint32_t *id);
/* The loc ids of stack @id, leaf first, and their number. */
const uint32_t *fleet_stack_of(const struct fleet_profile *p, uint32_t id,
			       uint32_t *n);
int fleet_add_sample(struct fleet_profile *p, const struct fleet_sample *s);
/* The index of event @name (added with @clock if new), or -E2BIG. */
int fleet_event(struct fleet_profile *p, const char *name, bool clock);

/* A frame's name as the stores show it: the function, else perf's
 * "0x%016llx" of its object address, else of the address. */
void fleet_frame_name(const struct fleet_profile *p, const struct fleet_loc *l,
		      char *buf, size_t len);

/*
 * The profile as pprof's Profile message, gzip-compressed, appended to
 * @gz: samples aggregated per stack, event, process, thread and command
 * (labels pid, tid, comm; host and the --label pairs with @labels);
 * mappings with their build-ids.  0 or -ENOMEM.
 */
int fleet_pprof(const struct fleet_profile *p, bool labels, struct pb *gz);

/* The ClickHouse columns, in the order fleet_rowbinary() writes them. */
extern const char fleet_ch_columns[];
/* The CREATE TABLE of perfring.samples. */
extern const char fleet_ch_schema[];
/* One RowBinary row per sample, appended to @out.  0 or -ENOMEM. */
int fleet_rowbinary(const struct fleet_profile *p, struct pb *out);

#endif
