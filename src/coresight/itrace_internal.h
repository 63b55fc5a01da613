/* SPDX-License-Identifier: MIT */
/*
 * What the files of the instruction-trace reports share: the decoding
 * state over a perf.data's AUX data or a snapshot, the objects and maps
 * code is read from.
 *
 *   itrace.c          objects (by build id, symfs, --symdir), maps, the
 *                     decoder per trace ID, the AUX data decoded in order
 *   itrace_listing.c  perfring_cs_decode(): packets and elements listed
 *   itrace_reports.c  script --itrace, report --itrace, inject (AutoFDO)
 */
#ifndef PERFRING_CORESIGHT_ITRACE_INTERNAL_H
#define PERFRING_CORESIGHT_ITRACE_INTERNAL_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdint.h>
#include "perfring/tools.h"
#include "../common/outbuf.h"
#include "../format/auxtrace.h"
#include "../format/perf_reader.h"
#include "cs_decode.h"
#include "cs_snapshot.h"

/* ---- counts by address pair (AutoFDO ranges and branches) ---- */

struct cnt_ent {
	uint64_t a, b, n;
};

struct cnt_map {
	struct cnt_ent *e;
	size_t mask, nr;
};

/* ---- perf.data with cs_etm AUX trace ---------------------------------- */

#define MAX_BINS 4096

#define MAX_MAPS (1u << 20)

#define MAX_SYMDIR_FILES 200000

/* A file the trace ran in: its bytes (mapped) and PT_LOAD segments. */
struct bin {
	char *name; /* as the MMAP record names it */
	char *path; /* where it was found, or NULL */
	const uint8_t *data;
	size_t size;
	struct load_seg *segs;
	uint32_t nr_segs;
	uint8_t build_id[20];
	uint8_t build_id_size; /* from the perf.data */
	bool looked_up;
	bool has_syms; /* the file defines symbols */
	struct dso *dso; /* symbols (report) */
	/* inject */
	struct cnt_map *ranges, *branches;
	uint64_t insns, nranges; /* report */
};

struct map {
	uint64_t start, end, pgoff;
	uint32_t pid;
	struct bin *bin;
};

/* Per trace ID state of the instruction range consumers. */
struct tid_state {
	bool pending; /* inject: a range waits for its successor */
	bool fix_target; /* ... whose start is its branch target */
	struct bin *bin;
	uint64_t start, end, target;
	bool taken;
	int cpu;
};

struct itr {
	const char *symdir;
	struct prd_file *pf;
	struct auxtrace_file *af;
	const struct cs_etm_info *info;
	struct bin *bins[MAX_BINS];
	uint32_t nr_bins;
	struct map *maps;
	uint32_t nr_maps, cap_maps;
	uint32_t last_map; /* cache */
	bool raw_cpu[1024]; /* AUX records flagged CORESIGHT_FORMAT_RAW */
	int16_t hw_id[1024]; /* AUX_OUTPUT_HW_ID trace IDs per CPU + 1 */
	int64_t cur_pid[128]; /* context ID per trace ID (-1: unknown) */
	unsigned search_budget; /* directory entries --symdir searches may
				   read, for all binaries together */
	struct dsos dsos;
	bool dsos_ok;
	struct tid_state ts[128];
	/* the consumer */
	int (*elem)(struct itr *it, uint64_t idx, uint8_t id,
		    const ocsd_generic_trace_elem *el);
	int (*chunk_fn)(struct itr *it, size_t i,
			const struct auxtrace_chunk *c);
	struct outbuf *ob;
	const struct perfring_itrace_opts *io;
	csh cs; /* capstone */
	bool cs_ok;
	struct css *snap; /* snapshot input instead of a perf.data */
	struct csd_stats st;
	bool damaged; /* the perf.data is: -EBADMSG after decoding */
};

void itr_cnt_free(struct cnt_map *m);

void itr_copy_stats(struct perfring_cs_stats *st, const struct csd_stats *c);

int itr_ob_open(struct outbuf *ob, FILE *f);

int itr_ob_close(struct outbuf *ob);

/* Finds the file of @b: in --symdir by path, build-id, base name, then
 * the recorded path itself. */
void itr_bin_find(struct itr *it, struct bin *b);

/*
 * The map holding @addr for the process trace ID @id is running (its
 * context ID, once a PE context element gave one): the newest such map (a
 * later mmap replaces); failing that the newest map of anyone.
 */
struct map *itr_find_map(struct itr *it, uint64_t addr, uint8_t id);

/* Reads code for disassembly: perf.data files or snapshot dumps. */
size_t itr_read_code(struct itr *it, uint8_t id, uint64_t addr, uint8_t *buf,
		     size_t n);

void itr_free(struct itr *it);

int itr_open(struct itr *it, const char *path, const char *symdir);

/*
 * Decodes every AUX buffer (one per mmap index: per CPU, or per thread),
 * its chunks in file order, a tree for each; a gap between chunks of one
 * buffer resets its decoders.
 */
int itr_decode(struct itr *it, unsigned flags, struct outbuf *ob);

/* ---- the public entry points ---- */
int itr_begin(struct itr *it, const struct perfring_itrace_opts *o);

int itr_run(struct itr *it, struct outbuf *ob);

#endif
