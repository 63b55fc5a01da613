/* SPDX-License-Identifier: MIT */
/*
 * What the files of perfring_export() share: its state and the functions
 * one file calls in another.
 *
 *   export.c         text helpers, the records in order, perfring_export()
 *   export_chrome.c  the Chrome trace-event JSON, sched_switch slices, a
 *                    trace.dat's ftrace events
 *   export_stacks.c  the stacks table, folded and SVG flame graph output
 */
#ifndef PERFRING_REPORT_EXPORT_INTERNAL_H
#define PERFRING_REPORT_EXPORT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/offcpu_format.h"
#include "../format/perf_reader.h"
#include "../format/trace_dat.h"
#include "../machine/intern.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tracedat_lines.h"
#include "../fleet/fleet_report.h"
#include "../convert/pprof.h"

#define MAX_CPUS 65536 /* sched_switch CPUs tracked (more: ignored) */
#define MAX_STACKS (1u << 22) /* distinct stacks kept (more: lumped) */
#define MAX_STACK_BYTES (512u << 20) /* bytes of stack keys kept */
#define MAX_KEY (1u << 20) /* one stack key */

enum fmt { FMT_CHROME, FMT_FOLDED, FMT_SVG, FMT_PPROF };

/* Where sched_switch keeps its fields (0 size: absent). */
struct field {
	uint32_t off, size;
};

struct ss_layout {
	bool have; /* parsed from a format */
	uint64_t id;
	struct field prev_comm, prev_pid, prev_state, next_comm, next_pid;
};

/* Per-thread state of the chrome export (thread->priv). */
struct tstate {
	struct tstate *next; /* every one, for freeing */
	char swcomm[17]; /* name from sched_switch (threads without COMM) */
	bool named; /* thread_name written */
	int32_t named_pid;
	const char *named_comm;
	bool proc_named; /* process_name written (leaders) */
	const char *proc_comm;
	int32_t run_cpu; /* CPU it runs on per sched_switch, or -1 */
};

struct cpu_run {
	struct thread *t;
	uint64_t start;
	bool active;
	bool track_named; /* its CPU track's thread_name written */
};

/* CPU tracks: a made-up process above any pid (pid_max is at most 2^22)
 * whose threads are the CPUs. */
#define CPU_TRACK_PID 1000000000

struct stk {
	char *key; /* NULL: empty slot */
	uint32_t len;
	uint64_t hash;
	uint64_t count;
	uint64_t off, runq; /* of count: blocked, preempted (svg colours) */
};

struct exp {
	enum fmt fmt;
	const char *title;
	unsigned int width;
	struct prd_file *f;
	struct machine m;
	bool machine_ok;
	struct outbuf ob;
	int err; /* first error from a callback */

	struct ss_layout ss;
	bool ss_fallback_warned;

	/* chrome */
	bool any_event;
	uint64_t last_time;
	struct tstate *tstates;
	struct cpu_run *cpus;
	uint32_t nr_cpus;
	uint64_t nr_samples, nr_slices, nr_cpu_slices, nr_counters;

	/* -e: this event only; --wakers: offcpu-waker lines */
	const char *event;
	bool wakers;
	/* svg of a file with off-CPU time and no -e: on- and off-CPU time
	 * in one graph, in nanoseconds (hot/cold colours) */
	bool wall;
	bool ns; /* folded/svg counts are nanoseconds */
	uint64_t nr_flows;

	/* folded, svg */
	struct stk *tab;
	size_t tab_mask, tab_nr, tab_bytes;
	bool tab_full_warned;
	char *key;
	size_t key_len;
	struct addr_loc *locs;
	size_t nr_locs_cap;

	/* chrome: call stacks, counters */
	struct itab frames; /* key: parent frame id (u32), category, 0, name */
	FILE *samples_tmp; /* the "samples" array, copied in at the end */
	struct outbuf sob; /* into samples_tmp */
	uint64_t nr_stack_samples;
	struct itab counters; /* key: pid (i32), attr index (u32) */
	struct u64v counter_val;
	bool cpu_proc_named;

	/* pprof */
	struct pprof *pprof;

	/* chrome: the ftrace events of a trace.dat, merged in by time */
	struct tdat_lines *td;
	const char *td_path;
	struct tdat_ev td_ev; /* the next one, not written yet */
	bool td_have;
	int td_err; /* its damage, at its end */
	struct ss_layout tss; /* its sched_switch */
	bool td_slices; /* its sched_switch makes the slices */
	uint64_t nr_ftrace, nr_ftrace_dropped;
};

/* export.c */
void export_json_cstr(struct outbuf *ob, const char *s);

void export_xml_str(struct outbuf *ob, const char *s, size_t n);

void export_put_fixed(struct outbuf *ob, double v, int dec);

void export_put_us(struct outbuf *ob, uint64_t ns);

/* export_chrome.c */
void export_parse_sched_switch(struct ss_layout *ss, const void *blob,
			       size_t len);

void export_ss_default(struct ss_layout *ss);

int export_chrome_sample(struct exp *e, const struct prd_event *ev);

int export_td_until(struct exp *e, uint64_t ts);

int export_td_open(struct exp *e, const char *path);

void export_chrome_begin(struct exp *e);

void export_chrome_end(struct exp *e);

/* export_stacks.c */
int export_tab_add(struct exp *e, const char *key, size_t len, bool force,
		   uint64_t weight, enum offcpu_kind kind);

enum offcpu_kind export_sample_offcpu(const struct prd_sample *s);

void export_key_puts(struct exp *e, const char *s);

void export_key_frame_name(struct exp *e, const struct addr_loc *al);

int export_resolve_stack(struct exp *e, const struct prd_event *ev,
			 struct thread *t, size_t *n);

int export_stack_sample(struct exp *e, const struct prd_event *ev);

int export_folded_out(struct exp *e);

int export_svg_out(struct exp *e);

#endif
