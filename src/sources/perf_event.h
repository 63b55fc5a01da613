/* SPDX-License-Identifier: MIT */
/*
 * Kernel perf events as a source: event names to attrs, perf_event_open in
 * each recording mode, one mapped ring per CPU (or per thread) with the
 * events of that CPU redirected into it (PERF_EVENT_IOC_SET_OUTPUT).
 */
#ifndef PERFRING_SOURCES_PERF_EVENT_H
#define PERFRING_SOURCES_PERF_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "perfring.h"

#define PE_MAX_EVENTS 64
#define PE_NAME_MAX 256

struct pe_event {
	struct perf_event_attr attr;
	char name[PE_NAME_MAX]; /* as the user wrote it, normalised */
	bool tracepoint;
	bool tp_pmu_syntax; /* tracepoint/config=ID/: sampled as perf does */
	char tp_name[PE_NAME_MAX]; /* a tracepoint's "sys:name" */
	int leader; /* index of its group's leader (itself), -1: no group */
	bool sample_read; /* {...}:S: the leader samples the group's counts */
	bool has_period, has_freq; /* period=/freq= terms: -c/-F do not apply */
	const char *filter; /* --filter (PERF_EVENT_IOC_SET_FILTER), or NULL */
	uint64_t *ids; /* kernel ids of its fds (PERF_EVENT_IOC_ID) */
	uint32_t nr_ids;
};

/* Software events perf knows by name (perf list sw). */
struct pe_sw_name {
	const char *name;
	const char *alias;
	uint64_t config;
};
extern const struct pe_sw_name pe_sw_names[];

/*
 * Resolves one -e string as perf parses it ("cpu-clock:u",
 * "{cpu-clock,page-faults}:S", "sched:sched_sw*", "software/config=2/",
 * "cycles"...; see evparse.h) into @evs (room for @max): their attrs'
 * type, config, modifiers and group.  @filter (--filter, or NULL) goes to
 * every event of the string, which must be tracepoints.  @tracefs is the
 * tracefs mount for tracepoints.  Returns the number of events, or
 * -errno with the wrong part of @spec shown in the log.
 */
int pe_events_parse(const char *spec, const char *filter, const char *tracefs,
		    struct pe_event *evs, int max);

/*
 * A group's attrs as perf sets them, once the recorder has set the rest:
 * {a,b}:S samples read the group (PERF_SAMPLE_READ, PERF_FORMAT_GROUP,
 * no inherit) and only the leader samples; members are enabled with
 * their leader.  @index is @ev's place in the list.
 */
void pe_group_attr(struct pe_event *ev, int index);

/* Whether this machine opens a counting event of @type/@config. */
bool pe_event_supported(uint32_t type, uint64_t config);

/* Calls @fn for each "pmu/alias/" in sysfs (PMUs' events/ directories);
 * returns how many. */
int pe_pmu_aliases(void (*fn)(const char *name, const char *kind, void *ctx),
		   void *ctx);

/* Finds (and if needed mounts) tracefs; returns its path or NULL. */
const char *pe_tracefs(void);

/* Parses "0-3,5" into a sorted CPU list.  Returns count or -EINVAL. */
int pe_parse_cpus(const char *list, int *cpus, int max);

/* Parses -p/-t lists ("12,34") into thread ids: with @whole_process every
 * thread of each process (/proc/PID/task), else the ids as given, each
 * checked to exist.  Returns the count, -EINVAL (bad list) or -ESRCH
 * (logged). */
int pe_parse_tids(const char *list, bool whole_process, pid_t *tids, int max);

/* Online CPUs (from /sys/devices/system/cpu/online). */
int pe_online_cpus(int *cpus, int max);

/*
 * The CPUs of a user's -C list that are online: a CPU that is not is left
 * out with a warning naming it and the machine's CPUs (newer perf's
 * "A requested CPU ... is not supported"), instead of the kernel's EINVAL
 * for the event.  Returns the count, or -EINVAL (bad list) / -ENODEV
 * (none online), logged.
 */
int pe_user_cpus(const char *list, int *cpus, int max);

/* One mapped kernel ring. */
struct pe_buffer {
	int fd; /* the fd the ring belongs to (first event of the group) */
	int cpu; /* -1 in per-thread mode */
	pid_t tid; /* -1 in per-CPU mode */
	void *base;
	size_t len;
	struct perfring_ring *ring;
	uint64_t bytes; /* written to the file */
};

struct pe_evlist {
	struct pe_event *events;
	int nr_events;
	int *fds; /* [event][cpu_or_thread_slot][thread] flattened */
	int nr_fds;
	struct pe_buffer *bufs;
	int nr_bufs;
	bool overwrite;
};

/*
 * Opens every event on every (cpu, thread) pair: @cpus/@nr_cpus (cpu -1
 * for "any CPU"), @tids/@nr_tids (-1 for "all threads").  Events of one
 * CPU (or, with cpu -1, of one thread) share one ring of @data_bytes
 * (power of two), mapped read-only and written backward if @overwrite.
 * On failure everything is closed and -errno returned, with a message.
 */
int pe_evlist_open(struct pe_evlist *el, const int *cpus, int nr_cpus,
		   const pid_t *tids, int nr_tids, uint64_t data_bytes,
		   bool overwrite);

int pe_evlist_enable(struct pe_evlist *el, bool enable);
void pe_evlist_close(struct pe_evlist *el);

/* Writes the reason for a perf_event_open failure (paranoid, EACCES...). */
void pe_explain_open_error(int err, const struct pe_event *ev);

#endif
