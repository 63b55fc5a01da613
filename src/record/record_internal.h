/* SPDX-License-Identifier: MIT */
/*
 * What the files of perfring_record() share: the session and the
 * functions one file calls in another.
 *
 *   record.c         the session's life: parse, targets, sources, the
 *                    loop, switch-output, finish; perfring_record()
 *   record_drain.c   the rings drained into the writer, --max-size
 *   record_events.c  attrs, the output file, application events, tracing data
 */
#ifndef PERFRING_RECORD_RECORD_INTERNAL_H
#define PERFRING_RECORD_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../coresight/aux_source.h"
#include "../fleet/fleet.h"
#include "../format/compress.h"
#include "../format/out_file.h"
#include "../format/perf_data.h"
#include "../format/perf_record.h"
#include "../format/tracing_data.h"
#include "../sources/app_session.h"
#include "../sources/evparse.h"
#include "../sources/perf_event.h"
#include "../sources/child.h"
#include "control.h"
#include "dso_hits.h"
#include "offcpu.h"
#include "../sources/session.h"
#include "switch_output.h"
#include "synth.h"
#include "tracefs_source.h"

#define MAX_CPUS 4096
#define MAX_TIDS 65536
#define DEFAULT_MMAP_BYTES (512u << 10)
#define DEFAULT_FREQ 4000
/* perf's x86_64 PERF_REGS_MASK (every user register but DS, ES, FS, GS)
 * and DWARF_MINIMAL_REGS (IP, SP) for --call-graph dwarf. */
#define DWARF_REGS_MASK 0xff0fffull
#define DWARF_MINIMAL_REGS \
	((1ull << PERF_REG_X86_IP) | (1ull << PERF_REG_X86_SP))
#define POLL_MS 100
/* What perfring_record_opts.sample_bits may add (the readers parse them) */
#define SAMPLE_BITS_OK                                           \
	((uint64_t)PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT_STRUCT | \
	 PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE |    \
	 PERF_SAMPLE_CODE_PAGE_SIZE)
#define APP_ROUND_MS 100 /* shortest round with application rings */
/* ... unless their rings fill: their space is freed only once the round
 * holding their records is written, so a full ring ends the round early
 * (a record delayed longer than this may then show as out of order). */
#define APP_ROUND_MIN_MS 5
/* perf.data room for application event descriptions that outgrow one
 * record (pd_writer_set_growth): about 250 event types past 64 KiB. */
#define APP_DESC_ROOM (256u << 10)

struct session {
	const struct perfring_record_opts *o;
	/* -D's windows: a timer at each edge (range_edge: the next, 2 i the
	 * start of window i, 2 i + 1 its end), from range_t0 */
	int range_fd;
	uint32_t range_edge;
	struct timespec range_t0;
	bool ranges_done;
	bool ctl_stop; /* --control's "stop" */
	struct rec_control ctl; /* --control's pipes */
	struct perfring_record_stats st;
	struct pe_event events[PE_MAX_EVENTS];
	struct pe_evlist el;
	/*
	 * With --overwrite, side-band records (COMM, MMAP2, FORK, EXIT) come
	 * from a dummy event in forward rings read all along, as perf does,
	 * so they are not overwritten by the samples they describe.
	 */
	struct pe_event track_ev;
	struct pe_evlist track_el;
	/* The dummy above is used (--overwrite, -a/-C, -D); with -a/-C it
	 * is enabled when opened, before /proc is read, so tasks forked
	 * while the recording starts get their FORK and COMM (perf's
	 * record__open does the same). */
	bool use_track, track_now;
	bool cmd_target; /* the command is what is recorded (not -p/-t) */
	int clockid;
	struct dso_hits *hits; /* the DSOs samples hit: HEADER_BUILD_ID */
	struct pd_compress *z; /* -z: ring data into COMPRESSED records */
	uint64_t max_size; /* --max-size (0: none) */
	struct switch_output so; /* --switch-output */
	bool max_size_hit;
	struct pd_writer *w;
	int out_fd;
	bool pipe;
	struct held_child cmd; /* the command (pid 0: none) */
	uint64_t first_time, last_time;
	int err; /* first write error */
	bool overwrite;
	struct app_session *app; /* application rings, or NULL */
	uint32_t app_types;
	bool round_open; /* data written since the last FINISHED_ROUND */
	uint64_t last_round_ms;
	bool have_tdata; /* TRACING_DATA set: application formats join it */
	uint64_t app_first, app_last; /* application events' time range */
	/* --switch-output: app_last when the current file began (its
	 * application events are the later ones). */
	uint64_t app_floor;
	bool warned_tdata;
	/* The opts, parsed (session_parse, session_targets). */
	const char *const *evs;
	int nr_events;
	char *const *argv;
	bool all, per_thread, on_exec, app_on, app_possible;
	const char *cpu_list, *pid_list, *tid_list;
	const int *cpus;
	const pid_t *tids;
	/* The CPU and thread lists' storage (heap, per session: freed by
	 * session_close()); cpus/tids point here or at a single "any". */
	int *cpus_buf;
	pid_t *tids_buf; /* tids[0] is the command's pid once forked */
	int nr_cpus, nr_tids;
	uint64_t data_bytes;
	/* ftrace events of the same run (opts->tracefs), or NULL. */
	struct tfs_source *tfs;
	struct perfring_tracefs_opts tfs_opts;
	struct perfring_tracefs_stats *tfs_st;
	char tfs_path[4096];
	int tfs_err; /* its first write error: recording stopped */
	/* AUX trace of the same run (opts->aux), or NULL. */
	struct aux_source *aux;
	struct offcpu *oc; /* --off-cpu: the sched events' rings, or NULL */
	/* -z with --off-cpu: one pass's off-CPU samples, compressed together
	 * once the pass is done (record_offcpu_compress) */
	unsigned char *oc_zbuf;
	size_t oc_zlen, oc_zcap;
	struct rec_session rs; /* the loop over the sources */
	struct fleet *fleet; /* --push, or NULL */
};

/* record_drain.c */
uint64_t record_now_ms(void);

uint64_t record_max_size_room(const struct session *s);

void record_max_size_cut(struct session *s, const void *const ptr[2],
			 size_t len[2], int pieces, uint64_t room);

void record_app_stats(struct session *s);

void record_note_app_time(struct session *s);

int record_drain_all(struct session *s, bool snapshot, bool final);

int record_offcpu_emit(void *ctx, const void *rec, size_t size);

/* -z: the off-CPU samples record_offcpu_emit() gathered, into the file as
 * COMPRESSED records (whole records, as the rings' data). */
int record_offcpu_compress(struct session *s);

int record_snapshot(struct session *s);

/* record_events.c */
int record_start_child(struct session *s, char *const *argv);

bool record_delayed(const struct perfring_record_opts *o);

void record_setup_attrs(struct session *s, bool inherit, bool on_exec,
			uint64_t data_bytes);

const char *record_output_path(const struct perfring_record_opts *o);

int record_open_output(struct session *s);

int record_app_new_event(void *ctx, const struct app_event_desc *d,
			 uint64_t sample_id);

int record_app_readd(void *ctx, const struct app_event_desc *d,
		     const char *format, size_t len);

int record_app_write(void *ctx, const void *buf, size_t len);

bool record_tracefs_readable(const char *tracefs);

#endif
