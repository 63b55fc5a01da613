/* SPDX-License-Identifier: MIT */
/*
 * Event strings as perf record's -e takes them, parsed and resolved into
 * perf_event_attr:
 *
 *   cpu-clock:u  sched:sched_sw*  {cpu-clock,page-faults}:S  r1a  mem:0x1000:w
 *   cycles  L1-dcache-load-misses  software/config=2,period=1000/
 *   msr/tsc/  cpu-clock/period=1000/  a,b (several events in one string)
 *
 * evp_parse() is pure (no file is read): it splits the string and checks
 * its syntax, so that a fuzzer can drive it.  evp_resolve() then reads
 * sysfs (PMU type, format and event aliases) and tracefs (tracepoint ids,
 * glob expansion) to fill the attrs.  Errors carry the offset of the part
 * of the string that is wrong, printed under it as perf does.
 */
#ifndef PERFRING_SOURCES_EVPARSE_H
#define PERFRING_SOURCES_EVPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define EVP_MAX_EVENTS 64
#define EVP_TEXT_MAX 256
#define EVP_PART_MAX 128
#define EVP_MAX_TERMS 16
#define EVP_MODS_MAX 16

enum evp_kind {
	EVP_SYMBOL, /* cpu-clock, cycles, L1-dcache-load-misses */
	EVP_TRACEPOINT, /* sys:name, either may be a glob */
	EVP_RAW, /* rNNNN: PERF_TYPE_RAW */
	EVP_PMU, /* pmu/terms/ */
	EVP_BREAKPOINT, /* mem:addr[/len][:rwx] */
};

/* One term of pmu/a=1,b/: a value-less term is 1, or an alias. */
struct evp_term {
	char name[EVP_PART_MAX / 2];
	char value[EVP_PART_MAX / 2];
	bool has_value;
	int pos; /* offset in the string */
};

struct evp_event {
	enum evp_kind kind;
	char text[EVP_TEXT_MAX]; /* as written (modifiers too): perf's name */
	int pos; /* offset of the event in the string */
	char sys[EVP_PART_MAX]; /* tracepoint system, or the PMU */
	char name[EVP_PART_MAX]; /* symbol, or tracepoint event */
	uint64_t raw_config; /* EVP_RAW; EVP_BREAKPOINT's address */
	uint64_t bp_len; /* EVP_BREAKPOINT: bytes (0: perf's default) */
	uint32_t bp_type; /* HW_BREAKPOINT_R/W/X bits */
	struct evp_term terms[EVP_MAX_TERMS]; /* pmu/.../ or symbol/.../ */
	int nr_terms;
	char mods[EVP_MODS_MAX]; /* its own :modifiers ("" none) */
	int mods_pos;
	int group; /* index in evp_list.groups, or -1 */
};

/* {a,b}:mods: its events are ev[first..first+count). */
struct evp_group {
	char mods[EVP_MODS_MAX];
	int mods_pos;
	int first, count;
};

struct evp_list {
	struct evp_event ev[EVP_MAX_EVENTS];
	int nr;
	struct evp_group groups[EVP_MAX_EVENTS];
	int nr_groups;
};

struct evp_error {
	int pos; /* offset in the string of the wrong part */
	char msg[512];
};

/* Splits @str into events and groups.  0, or -EINVAL/-E2BIG with @err. */
int evp_parse(const char *str, struct evp_list *l, struct evp_error *err);

/*
 * Applies modifiers ("u", "kpp", "S"...) to @a as perf does: the first of
 * u/k/h excludes the other two, G/H likewise, p raises precise_ip (and
 * excludes the guest).  @group: a group's modifiers, which start from the
 * attr as its event left it.  *@sample_read is set for S.  0, or -EINVAL
 * with @err->msg (a repeated or unknown letter, more than 3 p).
 */
int evp_apply_mods(const char *mods, bool group, struct perf_event_attr *a,
		   bool *sample_read, struct evp_error *err);

/*
 * A sysfs PMU format ("config:0-7,32-35", "config1:3"): puts the low bits
 * of @value into those bits of config/config1/config2.  0, or -EINVAL
 * (malformed, or @value does not fit).
 */
int evp_format_put(const char *format, uint64_t value,
		   struct perf_event_attr *a);

/* perf's event name for an attr: "cpu-clock" + ":uH"... (the fallback). */
void evp_attr_name(const char *base, const struct perf_event_attr *a, char *buf,
		   size_t len);

/* Hardware and hardware-cache events by name: 0 and the config, or
 * -ENOENT.  Case-insensitive, as perf's. */
int evp_hw_lookup(const char *name, uint32_t *type, uint64_t *config);

/* Calls @fn for each hardware event name (as perf list shows them:
 * "cpu-cycles OR cycles"), then each hardware-cache event name. */
void evp_hw_names(void (*fn)(const char *name, uint32_t type, uint64_t config,
			     void *ctx),
		  void *ctx);

/*
 * One resolved event: what the recorder opens.  @leader is the index
 * (in the resolved list) of its group's leader, itself for a leader, -1
 * outside a group.
 */
struct evp_resolved {
	struct perf_event_attr attr;
	char name[EVP_TEXT_MAX];
	bool tracepoint;
	/* tracepoint/config=ID/: perf samples it as any PMU event (the
	 * default -F, no RAW); the format still goes in the file */
	bool tp_pmu_syntax;
	char tp_name[EVP_TEXT_MAX]; /* a tracepoint's "sys:name" */
	bool sample_read; /* :S on its group */
	int leader;
	bool has_period, has_freq; /* period=/freq= terms */
};

/*
 * Resolves @l against sysfs PMUs (@sysfs_pmus, normally
 * /sys/bus/event_source/devices) and tracefs (@tracefs, may be NULL if
 * no tracepoint is named).  Expands tracepoint globs.  Returns the number
 * of events put in @out (at most @max), or -errno with @err set.
 */
int evp_resolve(const struct evp_list *l, const char *str,
		const char *sysfs_pmus, const char *tracefs,
		struct evp_resolved *out, int max, struct evp_error *err);

/* "event syntax error:", then the string, then "\\___ MSG" under the
 * wrong part, as perf shows it, into @buf. */
void evp_error_format(const char *str, const struct evp_error *err, char *buf,
		      size_t len);

#endif
