/* SPDX-License-Identifier: MIT */
/*
 * What the files of perfring_script() share: the fields each event
 * prints, the per-attr facts worked out once, the script's state.
 *
 *   script.c         the records in order, a sample's filters, the
 *                    trace.dat merged in, perfring_script() and the
 *                    perfring_reader_*() callback API
 *   script_fields.c  -F and perf's default fields, per output type; set-up
 *                    at the first sample
 *   script_sample.c  a sample's line and its callchain (the hot path)
 *   script_side.c    the side-band records --show-*-events prints
 */
#ifndef PERFRING_REPORT_SCRIPT_INTERNAL_H
#define PERFRING_REPORT_SCRIPT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "perfring/tools.h"
#include "../common/outbuf.h"
#include "../format/perf_reader.h"
#include "../machine/threads.h"
#include "../machine/filter.h"
#include "../format/sample_read.h"

enum {
	F_COMM = 1 << 0,
	F_TID = 1 << 1,
	F_PID = 1 << 2,
	F_TIME = 1 << 3,
	F_CPU = 1 << 4,
	F_EVNAME = 1 << 5,
	F_TRACE = 1 << 6,
	F_IP = 1 << 7,
	F_SYM = 1 << 8,
	F_DSO = 1 << 9,
	F_ADDR = 1 << 10,
	F_SYMOFFSET = 1 << 11,
	F_PERIOD = 1 << 12,
	F_SRCLINE = 1 << 13,
	/* perf prints the call depth only for branch samples (BTS, PT,
	 * ETM), which have none of their own here: nothing to print */
	F_CALLINDENT = 1 << 14,
};

/* perf's output types: the attr types below PERF_TYPE_MAX, then other. */
enum { OT_HW, OT_SW, OT_TRACE, OT_HWCACHE, OT_RAW, OT_BREAK, OT_OTHER, OT_MAX };

#define DEF_SAMPLE                                                   \
	(F_COMM | F_TID | F_CPU | F_TIME | F_EVNAME | F_IP | F_SYM | \
	 F_SYMOFFSET | F_DSO | F_PERIOD)

#define DEF_TRACE (F_COMM | F_TID | F_CPU | F_TIME | F_EVNAME | F_TRACE)

#define MAX_STACK 127 /* perf script's scripting_max_stack */

struct out_type {
	unsigned fields;
	bool user_set;
	bool wildcard;
	unsigned user_unset;
};

/* Per attr, worked out once. */
struct attr_info {
	const struct prd_attr *a;
	char *evname; /* "%*s: " of its name */
	uint32_t evname_len;
	unsigned fields;
	bool chain; /* callchains printed */
	uint32_t type;
	uint64_t sample_type, sample_period;
	struct attr_info *next_old; /* replaced ones, freed at the end */
};

/* A sample as printing needs it: what prd_process() decoded, with the
 * attr's facts in @ai. */
struct psample {
	const struct attr_info *ai;
	uint32_t pid, tid, cpu, raw_size;
	uint64_t id, time, period, ip, addr, nr_callchain;
	const uint64_t *callchain;
	const void *raw;
	uint16_t misc;
	const struct prd_sample *sample; /* its user stack (unwind.c) */
};

struct script {
	struct perfring_script_opts o;
	struct attr_info **ai; /* by attr index; each never moves */
	uint32_t nr_ai;
	int stop; /* printing failed: -errno (EPIPE, ENOMEM) */
	bool host;
	struct prd_file *f;
	struct machine m;
	struct tpfmt *tp;
	bool tp_tried;
	struct outbuf ob;
	struct out_type ot[OT_MAX];
	bool setup;
	bool use_callchain;
	int name_width;
	uint64_t sec; /* script_put_time()'s cache */
	uint32_t sec_len;
	char sec_text[28];
	/* The trace.dat merged in (opts->trace_dat): its listing, read
	 * first, goes out by time between the samples. */
	struct merged *merged;
	struct sample_filter filt;
	struct srclines *src; /* -F srcline, made on first use */
	struct inlines *inl; /* inlined frames, made on first use */
	bool filter_loc; /* -S, --dsos: the ip resolved for every sample */
	unsigned max_stack; /* --max-stack, MAX_STACK at most */
	char **stop_bt; /* --stop-bt's names, NULL-terminated */
	bool stop_chain; /* the callchain reached a --stop-bt name */
	uint64_t initial_time, previous_time; /* --reltime, --deltatime */
	FILE *out;
	/* perfring_data_run(): samples go to @fn instead of the text. */
	struct perfring_data *reader;
	perfring_sample_fn fn;
	void *fn_ctx;
	int fn_ret;
	const struct psample *cur; /* the sample inside @fn */
	struct perfring_frame frames[MAX_STACK];
	struct sread rd; /* PERF_SAMPLE_READ: each id's last value */
};

/* The trace.dat's events before @ts (every one left: UINT64_MAX) out. */
void script_merged_put_until(struct script *sc, uint64_t ts);

/* Several -F (perf takes one per event type) arrive joined with ';'. */
int script_parse_fields(struct script *sc, const char *specs);

int script_setup(struct script *sc);

/* The attr_info of @a: by its index, made on first use. */
struct attr_info *script_attr_info(struct script *sc, const struct prd_attr *a);

void script_put_time(struct script *sc, uint64_t t);

/* --stop-bt: @name is one of the functions a callchain stops at. */
bool script_stop_bt_has(const struct script *sc, const char *name);

void script_ensure_tp(struct script *sc);

void script_print_sample(struct script *sc, const struct psample *ps);

void script_side_one(struct script *sc, const union prd_record *v);

/*
 * The --show-*-events lines: perf 6.1's print_event_with_time().  The
 * event is the trailer's (the first one for records without
 * sample_id_all, whose time is 0 or the FORK/EXIT's own); the thread
 * whose comm is shown: the record's pid/tid for task, mmap and namespace
 * records, the trailer's for the others (perf's print_event() callers).
 */
void script_side_print(struct script *sc, struct prd_file *f,
		       const struct prd_event *ev);

/* Whether a --show-*-events option prints records of @type. */
bool script_side_shown(const struct script *sc, uint32_t type);

#endif
