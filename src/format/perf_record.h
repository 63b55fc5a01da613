/* SPDX-License-Identifier: MIT */
/*
 * Typed views of perf records, the format layer: one struct per record
 * type, named after libperf's (tools/lib/perf/include/perf/event.h:
 * its struct perf_record_mmap2 is struct prd_record_mmap here, its
 * union perf_event is union prd_record, with the same member names).
 *
 * A view is decoded once: the record's fixed fields copied in host order
 * (records are read unaligned and never cast), and checked pointers into
 * the record for its variable parts (names, arrays), each with the length
 * or count that fits the record's own fields: what the sample_id_all
 * trailer occupies is not part of them.  A string is NULL when the record
 * has no byte left for it, else its length runs to its NUL or to the end
 * of the record's own fields.  The views point into the record: they are
 * valid as long as its bytes are.
 *
 * The thread model has always read COMM's and MMAP's names up to the end
 * of the whole record, the trailer included (a name without its NUL runs
 * into it): *_in_record is that reading, so that the thread names and
 * DSOs it makes of damaged records stay as they were.
 *
 * The perf.data reader decodes the view of every record it delivers
 * (prd_event.rec); a ring's records are decoded with prd_record_view().
 * Nothing outside src/format reads a record field by its byte offset.
 */
#ifndef PERFRING_FORMAT_PERF_RECORD_H
#define PERFRING_FORMAT_PERF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "../common/load.h"

/* perf tool record types (tools/lib/perf/include/perf/event.h, 6.1). */
enum {
	PRD_REC_HEADER_ATTR = 64,
	PRD_REC_HEADER_EVENT_TYPE = 65,
	PRD_REC_HEADER_TRACING_DATA = 66,
	PRD_REC_HEADER_BUILD_ID = 67,
	PRD_REC_FINISHED_ROUND = 68,
	PRD_REC_ID_INDEX = 69,
	PRD_REC_AUXTRACE_INFO = 70,
	PRD_REC_AUXTRACE = 71,
	PRD_REC_AUXTRACE_ERROR = 72,
	PRD_REC_THREAD_MAP = 73,
	PRD_REC_CPU_MAP = 74,
	PRD_REC_STAT_CONFIG = 75,
	PRD_REC_STAT = 76,
	PRD_REC_STAT_ROUND = 77,
	PRD_REC_EVENT_UPDATE = 78,
	PRD_REC_TIME_CONV = 79,
	PRD_REC_HEADER_FEATURE = 80,
	PRD_REC_COMPRESSED = 81,
	PRD_REC_FINISHED_INIT = 82,
	PRD_REC_MAX = 83, /* perf 6.1's PERF_RECORD_HEADER_MAX */
};

/* HEADER_BUILD_ID: the size byte after the build id is valid. */
#define PRD_MISC_BUILD_ID_SIZE (1 << 15)

/* EVENT_UPDATE's types (perf's PERF_EVENT_UPDATE__*). */
enum {
	PRD_EVENT_UPDATE_UNIT = 0,
	PRD_EVENT_UPDATE_SCALE = 1,
	PRD_EVENT_UPDATE_NAME = 2,
	PRD_EVENT_UPDATE_CPUS = 3,
};

/* A name read to its NUL or the end of the record, trailer included
 * (NULL when the record ends before it). */
struct prd_str_in_record {
	const char *str;
	uint32_t len;
};

/* PERF_RECORD_MMAP and PERF_RECORD_MMAP2 (the MMAP2 fields are zero in
 * an MMAP's view). */
struct prd_record_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	/* MMAP2: the device and inode, or, with
	 * PERF_RECORD_MISC_MMAP_BUILD_ID, the same bytes as a build id
	 * (build_id_size as the record says: it may claim more than 20) */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t prot, flags;
	const char *filename;
	uint32_t filename_len;
	struct prd_str_in_record filename_in_record;
};

struct prd_record_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	const char *comm;
	uint32_t comm_len;
	struct prd_str_in_record comm_in_record;
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
struct prd_record_fork {
	struct perf_event_header header;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct prd_record_lost {
	struct perf_event_header header;
	uint64_t id, lost;
};

struct prd_record_lost_samples {
	struct perf_event_header header;
	uint64_t lost;
};

/* PERF_RECORD_READ: pid, tid, then the attr's read_format values. */
struct prd_record_read {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t value;
	const unsigned char *values; /* from value on */
	uint32_t values_size;
};

/* PERF_RECORD_THROTTLE and PERF_RECORD_UNTHROTTLE. */
struct prd_record_throttle {
	struct perf_event_header header;
	uint64_t time, id, stream_id;
};

struct prd_record_aux {
	struct perf_event_header header;
	uint64_t aux_offset, aux_size, flags;
};

struct prd_record_itrace_start {
	struct perf_event_header header;
	uint32_t pid, tid;
};

/* PERF_RECORD_SWITCH (no fields) and PERF_RECORD_SWITCH_CPU_WIDE. */
struct prd_record_switch {
	struct perf_event_header header;
	uint32_t next_prev_pid, next_prev_tid;
};

struct prd_ns_link_info {
	uint64_t dev, ino;
};

struct prd_record_namespaces {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t nr_namespaces; /* as the record says */
	const unsigned char *link_info;
	uint64_t nr_link_info; /* the entries that fit */
};

struct prd_record_ksymbol {
	struct perf_event_header header;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
	uint32_t name_len;
};

struct prd_record_bpf_event {
	struct perf_event_header header;
	uint16_t type, flags;
	uint32_t id;
};

struct prd_record_cgroup {
	struct perf_event_header header;
	uint64_t id;
	const char *path;
	uint32_t path_len;
};

struct prd_record_text_poke {
	struct perf_event_header header;
	uint64_t addr;
	uint16_t old_len, new_len; /* as the record says */
	const unsigned char *bytes; /* old bytes, then new */
	uint32_t bytes_size; /* what fits */
};

struct prd_record_aux_output_hw_id {
	struct perf_event_header header;
	uint64_t hw_id;
};

/* HEADER_ATTR: an attr and its ids (pipe mode). */
struct prd_record_header_attr {
	struct perf_event_header header;
	uint32_t attr_size; /* the attr's size field, 0 read as 64 */
	bool attr_fits; /* attr_size within the record and this struct */
	struct perf_event_attr attr; /* zero-extended, when it fits */
	const unsigned char *ids;
	uint32_t nr_ids;
};

struct prd_record_header_event_type {
	struct perf_event_header header;
	uint64_t event_id;
	const char *name; /* 64 bytes at most */
	uint32_t name_len;
	uint32_t payload_size; /* bytes after event_id (a checkpoint
				  carrier's features) */
};

struct prd_record_header_tracing_data {
	struct perf_event_header header;
	uint32_t size; /* the payload that follows the record */
};

/* HEADER_BUILD_ID, as a record and as the HEADER_BUILD_ID feature's
 * entries (prd_build_id_entry()). */
struct prd_record_header_build_id {
	struct perf_event_header header;
	int32_t pid;
	uint8_t build_id[24];
	uint8_t size; /* valid with PRD_MISC_BUILD_ID_SIZE */
	const char *filename;
	uint32_t filename_len;
};

/* FINISHED_ROUND: a checkpoint's feature table after it (our files). */
struct prd_record_finished_round {
	struct perf_event_header header;
	uint32_t payload_size;
};

struct prd_id_index_entry {
	uint64_t id, idx, cpu, tid;
};

struct prd_record_id_index {
	struct perf_event_header header;
	uint64_t nr; /* the reader checked that they fit */
	const unsigned char *entries;
};

struct prd_record_auxtrace_info {
	struct perf_event_header header;
	uint32_t type;
	const unsigned char *priv;
	uint32_t nr_priv;
};

struct prd_record_auxtrace {
	struct perf_event_header header;
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu;
};

struct prd_record_auxtrace_error {
	struct perf_event_header header;
	uint32_t type, code, cpu, pid, tid, fmt;
	uint64_t ip, time;
	const char *msg; /* 64 bytes at most */
	uint32_t msg_len;
};

struct prd_thread_map_entry {
	uint64_t pid;
	char comm[16];
};

struct prd_record_thread_map {
	struct perf_event_header header;
	uint64_t nr; /* the reader checked that they fit */
	const unsigned char *entries;
};

/* A cpu map as CPU_MAP and EVENT_UPDATE's CPUS hold it. */
struct prd_cpu_map_data {
	const unsigned char *data;
	uint32_t size;
};

struct prd_record_cpu_map {
	struct perf_event_header header;
	struct prd_cpu_map_data data;
};

struct prd_stat_config_entry {
	uint64_t tag, val;
};

struct prd_record_stat_config {
	struct perf_event_header header;
	uint64_t nr; /* the reader checked that they fit */
	const unsigned char *data;
};

struct prd_record_stat {
	struct perf_event_header header;
	uint64_t id;
	uint32_t cpu, thread;
	uint64_t val, ena, run;
};

struct prd_record_stat_round {
	struct perf_event_header header;
	uint64_t type, time;
};

struct prd_record_event_update {
	struct perf_event_header header;
	uint64_t type, id;
	const unsigned char *data;
	uint32_t data_size;
};

struct prd_record_time_conv {
	struct perf_event_header header;
	uint64_t time_shift, time_mult, time_zero;
};

struct prd_record_header_feature {
	struct perf_event_header header;
	uint64_t feat_id;
	const unsigned char *data;
	uint32_t data_size;
};

/* COMPRESSED: zstd data. */
struct prd_record_compressed {
	struct perf_event_header header;
	const unsigned char *data;
	uint32_t data_size;
};

/*
 * Any record's view, by its header's type.  Samples are decoded by the
 * reader into struct prd_sample (their layout depends on the attr); their
 * view, as that of types this reader does not know, holds the header.
 */
union prd_record {
	struct perf_event_header header;
	struct prd_record_mmap mmap; /* MMAP and MMAP2 */
	struct prd_record_comm comm;
	struct prd_record_namespaces namespaces;
	struct prd_record_cgroup cgroup;
	struct prd_record_fork fork; /* FORK and EXIT */
	struct prd_record_lost lost;
	struct prd_record_lost_samples lost_samples;
	struct prd_record_read read;
	struct prd_record_throttle throttle;
	struct prd_record_bpf_event bpf;
	struct prd_record_ksymbol ksymbol;
	struct prd_record_text_poke text_poke;
	struct prd_record_header_attr attr;
	struct prd_record_event_update event_update;
	struct prd_record_header_event_type event_type;
	struct prd_record_header_tracing_data tracing_data;
	struct prd_record_header_build_id build_id;
	struct prd_record_finished_round finished_round;
	struct prd_record_id_index id_index;
	struct prd_record_auxtrace_info auxtrace_info;
	struct prd_record_auxtrace auxtrace;
	struct prd_record_auxtrace_error auxtrace_error;
	struct prd_record_aux aux;
	struct prd_record_itrace_start itrace_start;
	struct prd_record_aux_output_hw_id aux_output_hw_id;
	struct prd_record_switch context_switch;
	struct prd_record_thread_map thread_map;
	struct prd_record_cpu_map cpu_map;
	struct prd_record_stat_config stat_config;
	struct prd_record_stat stat;
	struct prd_record_stat_round stat_round;
	struct prd_record_time_conv time_conv;
	struct prd_record_header_feature feat;
	struct prd_record_compressed pack;
};

/* The header and fixed fields of @type (0 for types without any). */
uint32_t prd_record_min_size(uint32_t type);

/*
 * The counts in @rec (@size bytes, at least its type's minimum) that
 * announce variable parts: NULL if they fit @size, else the field that
 * does not ("nr_namespaces", "old_len/new_len", "nr").
 */
const char *prd_record_check(const unsigned char *rec, uint32_t size);

/*
 * Decodes @rec, which passed both checks, into @v; @own: the bytes of
 * the record's own fields (its size without the sample_id_all trailer,
 * at least its type's minimum).
 */
void prd_record_decode(const unsigned char *rec, uint32_t own,
		       union prd_record *v);

/*
 * A ring's record (@size bytes available at @rec, unaligned, trailer
 * layout unknown: own fields to its end): false when it is shorter than
 * its header says or than its type's fixed fields, or its counts do not
 * fit.
 */
bool prd_record_view(const void *rec, size_t size, union prd_record *v);

/* Entry @i (below the count that fits) of a record's array. */
static inline struct prd_ns_link_info
prd_ns_link_info(const struct prd_record_namespaces *r, uint64_t i)
{
	const unsigned char *e = r->link_info + 16 * i;

	return (struct prd_ns_link_info){ ld64(e), ld64(e + 8) };
}

static inline struct prd_id_index_entry
prd_id_index_entry(const struct prd_record_id_index *r, uint64_t i)
{
	const unsigned char *e = r->entries + 32 * i;

	return (struct prd_id_index_entry){ ld64(e), ld64(e + 8), ld64(e + 16),
					    ld64(e + 24) };
}

static inline struct prd_stat_config_entry
prd_stat_config_entry(const struct prd_record_stat_config *r, uint64_t i)
{
	const unsigned char *e = r->data + 16 * i;

	return (struct prd_stat_config_entry){ ld64(e), ld64(e + 8) };
}

static inline uint64_t prd_thread_map_pid(const struct prd_record_thread_map *r,
					  uint64_t i)
{
	return ld64(r->entries + 24 * i);
}

static inline uint64_t
prd_header_attr_id(const struct prd_record_header_attr *r, uint32_t i)
{
	return ld64(r->ids + 8 * i);
}

/*
 * The id in a READ record's values for @read_format (PERF_FORMAT_ID
 * without PERF_FORMAT_GROUP): false when it has none or it does not fit.
 */
bool prd_record_read_id(const struct prd_record_read *r, uint64_t read_format,
			uint64_t *id);

/* An EVENT_UPDATE's SCALE value: false when the record is too short. */
bool prd_event_update_scale(const struct prd_record_event_update *r,
			    double *scale);

/* A cpu map's encodings (perf's cpu_map_data): a list, or a range. */
enum { PRD_CPU_MAP_CPUS = 0, PRD_CPU_MAP_MASK = 1, PRD_CPU_MAP_RANGE = 2 };

struct prd_cpu_map {
	uint16_t type; /* PRD_CPU_MAP_*, or what the data says */
	bool valid; /* the data holds the type's fixed fields */
	/* CPUS: nr as it says, cpus that fit */
	uint16_t nr, nr_fit;
	const unsigned char *cpus;
	/* RANGE */
	bool any_cpu;
	uint16_t start_cpu, end_cpu;
};

/* Decodes @d; false if it does not hold its type (2 bytes). */
bool prd_cpu_map_decode(const struct prd_cpu_map_data *d,
			struct prd_cpu_map *m);

static inline uint16_t prd_cpu_map_cpu(const struct prd_cpu_map *m, uint32_t i)
{
	return ld16(m->cpus + 2 * i);
}

/*
 * Where the fields a sample of @sample_type keeps at fixed places sit:
 * bytes from the record's start, 0 when it has none.  Those after the
 * first field of variable size (READ) have no fixed place.  For the
 * recorders, which read their own samples in the rings (the reader
 * decodes samples whole: struct prd_sample).
 */
struct prd_sample_pos {
	uint16_t id; /* IDENTIFIER, else ID */
	uint16_t ip, tid, time, addr, stream_id, cpu, period;
	uint16_t callchain; /* its nr */
	uint16_t fixed_end; /* where the fixed-place fields end */
};

void prd_sample_positions(uint64_t sample_type, struct prd_sample_pos *p);

/*
 * The entry at @p (@len bytes left) of the HEADER_BUILD_ID feature, as a
 * HEADER_BUILD_ID record: its size (0 when it does not fit: the list
 * ends), the view in @v.
 */
uint32_t prd_build_id_entry(const unsigned char *p, size_t len,
			    struct prd_record_header_build_id *v);

/* The build id size a HEADER_BUILD_ID claims: its size byte with
 * PRD_MISC_BUILD_ID_SIZE (it may claim more than 20), else 20. */
unsigned int prd_build_id_size(const struct prd_record_header_build_id *v);

#endif
