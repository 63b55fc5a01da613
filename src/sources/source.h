/* SPDX-License-Identifier: MIT */
/*
 * Trace sources and AUX recording, the sources layer's two interfaces.
 *
 * struct pr_source_ops is a source in the spirit of the kernel's struct
 * pmu: the recorder hands it one data ring + AUX area pair per CPU (or
 * thread) with add(), lets it prepare its AUX configuration with
 * setup_aux(), and turns it on and off with start()/stop(); read() polls
 * it (counters, end of input).  A source writes PERF_RECORD_AUX,
 * ITRACE_START and its side-band records into the data ring and its trace
 * into the AUX area, exactly as a PMU driver does through
 * perf_aux_output_begin/end.
 *
 * struct pr_auxtrace_ops is the recording side in the spirit of perf's
 * struct auxtrace_record: recording options, the size and filling of the
 * private part of PERF_RECORD_AUXTRACE_INFO, snapshot helpers
 * (find_snapshot, snapshot_start/finish), the reference stored in each
 * PERF_RECORD_AUXTRACE and read_finish (re-enable after a truncation).
 *
 * The recorder core (src/record/record_aux.c) only calls these two tables,
 * so another trace kind (Intel PT, ARM SPE) is another pair of tables, not
 * a change to the recorder.
 */
#ifndef PERFRING_SOURCES_SOURCE_H
#define PERFRING_SOURCES_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "perfring.h"

#define PR_SOURCE_MAX_BUFS 256

/*
 * The sample_id_all trailer the recorder's attrs ask for: sample_type
 * TID|TIME|ID|CPU (perf's order: pid, tid; time; id; cpu, res).  Every
 * record a source writes into a data ring ends with it.
 */
#define PR_SAMPLE_ID_SIZE 32u
#define PR_SAMPLE_ID_TYPE \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

static inline void pr_sample_id_fill(uint64_t out[4], uint32_t pid,
				     uint32_t tid, uint64_t time, uint64_t id,
				     uint32_t cpu)
{
	out[0] = (uint64_t)tid << 32 | pid;
	out[1] = time;
	out[2] = id;
	out[3] = cpu;
}

/* One ring pair the recorder gives a source. */
struct pr_source_buf {
	int idx; /* index of the pair (perf's mmap idx) */
	int cpu; /* -1 in per-thread mode */
	int tid; /* -1 in per-CPU mode */
	uint64_t id; /* sample id of the event on this ring */
	struct perfring_ring *ring;
	struct perfring_aux *aux;
};

struct pr_source;

/* A source: struct pmu-like operations (all optional but start/stop). */
struct pr_source_ops {
	const char *name;
	/* Attr of the event (type, config, sample_type...). */
	int (*event_attr)(struct pr_source *src, struct perf_event_attr *attr);
	/* CPUs (or -1 per thread) the source wants rings for. */
	int (*cpus)(struct pr_source *src, int *cpus, int max);
	/* Sources whose rings the kernel owns: open the event of @buf and
	 * map its data ring and AUX area into buf->ring/aux (freed by the
	 * source).  Without it the recorder creates perfring rings. */
	int (*map)(struct pr_source *src, struct pr_source_buf *buf,
		   uint64_t data_bytes, uint64_t aux_bytes, bool snapshot);
	int (*add)(struct pr_source *src, struct pr_source_buf *buf);
	void (*del)(struct pr_source *src, struct pr_source_buf *buf);
	int (*setup_aux)(struct pr_source *src, struct pr_source_buf *buf,
			 bool overwrite);
	void (*free_aux)(struct pr_source *src, struct pr_source_buf *buf);
	int (*start)(struct pr_source *src);
	/* Stops output; returns only when no write is in flight. */
	int (*stop)(struct pr_source *src);
	/* 1: the source has finished (end of input), 0: running, -errno. */
	int (*read)(struct pr_source *src);
	/* Re-enables output on @buf after a truncation disabled it. */
	int (*enable)(struct pr_source *src, struct pr_source_buf *buf);
	void (*destroy)(struct pr_source *src);
};

struct pr_source {
	const struct pr_source_ops *ops;
	void *priv;
};

/* Recording options an AUX recorder settles (perf's record_opts subset). */
struct pr_aux_opts {
	uint64_t aux_bytes; /* AUX area per ring (0: the recorder's default) */
	uint64_t data_bytes; /* data ring per ring */
	bool snapshot; /* -S: free-running AUX, read on trigger */
	uint64_t snapshot_size; /* bytes per snapshot per ring (0: all) */
};

struct pr_auxtrace_rec;

/* perf's struct auxtrace_record. */
struct pr_auxtrace_ops {
	uint32_t type; /* PERF_AUXTRACE_* (3: CS_ETM) */
	/* Trims chunks to a multiple of this (0/1: none). */
	size_t alignment;
	int (*recording_options)(struct pr_auxtrace_rec *itr,
				 struct pr_aux_opts *opts);
	/* u64s of AUXTRACE_INFO priv[] for @nr_bufs rings. */
	size_t (*info_priv_size)(struct pr_auxtrace_rec *itr);
	/* Fills priv[] (@nr u64s). */
	int (*info_fill)(struct pr_auxtrace_rec *itr, uint64_t *priv,
			 size_t nr);
	/*
	 * Snapshot mode: where the newest data of a free-running area is.
	 * *head is aux_head on entry; *old gets the start (the recorder
	 * then clamps to the snapshot size).
	 */
	int (*find_snapshot)(struct pr_auxtrace_rec *itr,
			     struct pr_source_buf *buf, uint64_t *head,
			     uint64_t *old);
	int (*snapshot_start)(struct pr_auxtrace_rec *itr);
	int (*snapshot_finish)(struct pr_auxtrace_rec *itr);
	uint64_t (*reference)(struct pr_auxtrace_rec *itr);
	/* After a chunk of @buf was read (non-snapshot): re-enable. */
	int (*read_finish)(struct pr_auxtrace_rec *itr,
			   struct pr_source_buf *buf);
	void (*free)(struct pr_auxtrace_rec *itr);
};

struct pr_auxtrace_rec {
	const struct pr_auxtrace_ops *ops;
	struct pr_source *src; /* the source it records */
	void *priv;
};

/* ---- CoreSight ETM (cs_etm.c) ---- */

/* One CPU's trace unit as the cs_etm metadata describes it. */
enum pr_cs_kind {
	PR_CS_ETMV3 = 1, /* ETMv3 and PTM */
	PR_CS_ETMV4 = 2,
	PR_CS_ETE = 3,
};

struct pr_cs_etm_cpu {
	enum pr_cs_kind kind;
	uint32_t cpu;
	/* ETMv3/PTM: ETMCR ETMTRACEIDR ETMCCER ETMIDR.  ETMv4: TRCCONFIGR
	 * TRCTRACEIDR TRCIDR0 TRCIDR1 TRCIDR2 TRCIDR8 TRCAUTHSTATUS.  ETE:
	 * the ETMv4 list then TRCDEVARCH.  Extra ones (TS_SOURCE) follow. */
	uint64_t regs[16];
	uint32_t nr_regs;
};

/* Parameters in perf 6.1's order, for each kind. */
uint32_t pr_cs_etm_nr_params(enum pr_cs_kind kind);

/*
 * The cs_etm AUX recorder (perf's arch/arm/util/cs-etm.c): AUXTRACE_INFO
 * type 3 with header @version (1: what perf 6.1 writes and reads; 2: newer
 * perf, TRACEIDR from AUX_OUTPUT_HW_ID), @pmu_type, the snapshot flag, and
 * one block per CPU (magic, cpu, nr_params, params).  @src is the source
 * it drives (stop/start on snapshots, enable on read_finish).
 */
int pr_cs_etm_record_new(struct pr_source *src,
			 const struct pr_cs_etm_cpu *cpus, uint32_t nr_cpus,
			 uint32_t pmu_type, uint32_t version,
			 struct pr_auxtrace_rec **out);

/* Looks up an AUX-capable PMU in /sys/bus/event_source/devices: its type
 * (>= 0), or -ENOENT. */
int pr_aux_pmu_type(const char *name);

/* ---- a kernel AUX PMU (pmu_aux.c) ---- */

/*
 * perf_event_open of PMU @pmu (its type from sysfs) on each of @cpus with
 * @pid (-1: every task, system wide); rings mapped as perf does.
 * -ENOENT if the PMU does not exist.
 */
int pr_pmu_aux_source_new(const char *pmu, const int *cpus, int nr_cpus,
			  int pid, struct pr_source **out);

/* The cs_etm metadata of @cpus from sysfs (ETMv4/ETE or ETMv3). */
int pr_pmu_cs_etm_metadata(const char *pmu, const int *cpus, int nr,
			   struct pr_cs_etm_cpu *out);

/* ---- replay of recorded CoreSight trace (cs_replay.c) ---- */

/* One piece of trace to play into a CPU's AUX area. */
struct pr_replay_chunk {
	int cpu;
	const void *data;
	uint64_t size;
	uint64_t flags; /* PERF_AUX_FLAG_* to report with it */
	const uint64_t *sample_id; /* trailer to use (4 u64s) or NULL */
};

/* A side-band record to put in a CPU's data ring before chunk @before. */
struct pr_replay_record {
	int cpu;
	size_t before; /* index of the chunk it precedes */
	const struct perf_event_header *rec; /* whole record, trailer too */
};

struct pr_replay_desc {
	struct pr_cs_etm_cpu *etm; /* metadata, one per traced CPU */
	uint32_t nr_etm;
	uint32_t pmu_type;
	struct perf_event_attr attr; /* the event (type = pmu_type) */
	struct pr_replay_chunk *chunks; /* in play order */
	size_t nr_chunks;
	struct pr_replay_record *records;
	size_t nr_records;
	int *cpus; /* CPUs that get rings */
	int nr_cpus;
	uint32_t pid, tid; /* for ITRACE_START and our trailers */
	const char *event_name; /* "cs_etm//" */
	const uint64_t *ids; /* the event's sample ids (or NULL: ours) */
	uint32_t nr_ids;
	const uint64_t *ring_ids; /* id of each of cpus[] (or NULL) */
	int ring_tid; /* cpus[] of -1: the per-thread pair's thread */
	/* Our trailers end with PERF_SAMPLE_IDENTIFIER too (the attr has
	 * it): beside events that have it in one file, as perf requires.
	 * The records' trailers must then be TID TIME ID CPU IDENTIFIER:
	 * the replay sets their time to its own clock's now. */
	bool identifier;
	void *owned; /* freed with the description */
	void *owned2;
};

/*
 * Reads an OpenCSD / DS-5 snapshot directory: snapshot.ini, the device
 * files it lists and trace.ini; the trace buffer the ETMs feed becomes
 * chunks of CPU @cpu's AUX area (the lowest traced CPU when @cpu < 0) of
 * at most @chunk bytes, the ETM registers the metadata.  Errors name the
 * file and line.
 */
int pr_replay_load_snapshot(const char *dir, int cpu, uint64_t chunk,
			    struct pr_replay_desc *d);
void pr_replay_desc_free(struct pr_replay_desc *d);

/*
 * The replay source: a thread plays @d (not copied: it must outlive the
 * source) into the AUX areas as a PMU driver would, at @rate bytes/s (0:
 * as fast as the areas drain), @loops times over (0: once), and in
 * snapshot mode (free-running areas) never waits for the reader.
 */
int pr_replay_source_new(const struct pr_replay_desc *d, uint64_t rate,
			 uint64_t loops, struct pr_source **out);

/* Bytes played, and trace dropped because an area was full/disabled. */
void pr_replay_source_counts(const struct pr_source *src, uint64_t *played,
			     uint64_t *lost);

#endif
