/* SPDX-License-Identifier: MIT */
/*
 * perf.data reader (file and pipe format), the format layer.  Streams the
 * data section with bounded memory, decodes samples per attr sample_type
 * and sample_id_all trailers, parses features, and orders records across
 * rings with FINISHED_ROUND the way perf does.  Every length and offset in
 * the input is checked; damage is reported with its file offset.
 */
#ifndef PERFRING_FORMAT_PERF_READER_H
#define PERFRING_FORMAT_PERF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include "perf_record.h"

struct prd_file;

struct prd_attr {
	struct perf_event_attr attr; /* zero-extended to our struct size */
	char *name; /* EVENT_DESC name, or one derived from type/config */
	uint64_t *ids;
	uint32_t nr_ids;
	uint32_t index; /* position in the file */
	uint64_t nr_samples; /* filled while processing */
};

/* One decoded sample (fields absent from sample_type are zero/NULL). */
struct prd_sample {
	const struct prd_attr *attr;
	uint64_t id, ip, time, addr, stream_id, period, weight, data_src;
	uint64_t transaction, phys_addr, cgroup, data_page_size, code_page_size;
	uint32_t pid, tid, cpu;
	const uint64_t *callchain; /* callchain[nr_callchain], in the file */
	uint64_t nr_callchain;
	const void *raw; /* PERF_SAMPLE_RAW payload */
	uint32_t raw_size;
	const void *branch_stack; /* {nr; hw_idx?; entries[]} as in the file */
	uint64_t nr_branches;
	const void *read; /* PERF_SAMPLE_READ values */
	size_t read_size;
	const uint64_t *regs_user, *regs_intr;
	uint64_t regs_user_abi, regs_intr_abi;
	uint32_t nr_regs_user, nr_regs_intr;
	const void *stack_user;
	uint64_t stack_user_size, stack_user_dyn_size;
	const void *aux;
	uint64_t aux_size;
};

/*
 * One record as handed to the callback: @hdr points at its bytes (valid
 * until the callback returns), @offset is its file offset (stream offset
 * in pipe mode).  @rec is its typed view (perf_record.h; for samples and
 * unknown types: the header).  @sample is decoded for PERF_RECORD_SAMPLE,
 * and for other records carries the sample_id_all trailer fields (pid,
 * tid, time, id, cpu) when present; NULL when the record has none.
 */
struct prd_event {
	const struct perf_event_header *hdr;
	uint64_t offset;
	const struct prd_sample *sample;
	const union prd_record *rec;
};

typedef int (*prd_event_fn)(struct prd_file *f, const struct prd_event *ev,
			    void *ctx);

/*
 * Opens @path ("-": standard input, pipe format) and reads the header,
 * attrs and (file mode) the feature section table.  Refuses the other
 * endianness and unknown versions with -EPROTO, damage with -EBADMSG; the
 * log says what and at which offset.
 */
int prd_open(const char *path, struct prd_file **out);
void prd_close(struct prd_file *f);

bool prd_is_pipe(const struct prd_file *f);
uint32_t prd_nr_attrs(const struct prd_file *f);
const struct prd_attr *prd_attr(const struct prd_file *f, uint32_t i);
/* The attr a sample id belongs to (one attr: that one), or NULL. */
const struct prd_attr *prd_attr_by_id(const struct prd_file *f, uint64_t id);

/* A feature section's bytes (file mode after open; pipe mode once its
 * HEADER_FEATURE record has been processed), or NULL. */
const void *prd_feature(const struct prd_file *f, int feat, size_t *len);
/* String features (HOSTNAME, OSRELEASE, ...), or NULL. */
const char *prd_feature_string(const struct prd_file *f, int feat);

/*
 * Streams every record to @fn: in file order (@ordered false), or by time
 * with perf's FINISHED_ROUND rule (@ordered true: samples of a round are
 * queued and flushed up to the previous round's maximum time).  Records
 * with time 0 pass straight through.  A negative return from @fn stops and
 * is returned.  Returns 0, or -EBADMSG after damage (every record before it
 * was delivered), -errno on I/O errors.
 */
int prd_process(struct prd_file *f, bool ordered, prd_event_fn fn, void *ctx);

/* Per-type record counts seen by prd_process() (index: record type, 0..127;
 * unknown types are counted in [0] and skipped). */
const uint64_t *prd_type_counts(const struct prd_file *f);
const char *prd_type_name(uint32_t type);

/* The file's data section size (file mode) or bytes read so far (pipe). */
uint64_t prd_data_size(const struct prd_file *f);

/*
 * A file written by perfring record while it was recording (a checkpoint:
 * docs/design.md section 9) carries feature sections inside the data, in
 * PERF_RECORD_COMMs of task PRD_CKPT_TID named by this tag ("PRFRCKPT"),
 * and its feature table in the last COMM of that task, after the round's
 * plain FINISHED_ROUND, announced by feature bit 0 (HEADER_RESERVED).
 * Files of earlier versions: HEADER_EVENT_TYPE records with the tag as
 * their first u64, and the table in the payload of the last
 * FINISHED_ROUND.
 */
#define PRD_CARRIER_TAG 0x54504b4352465250ull

/*
 * The pid and tid of those COMMs: -2, which no kernel record carries (a
 * sample of an exiting task has tid -1: a name given to -1 would name it).
 * Not a thread: prd_process() does not hand these COMMs to its callback
 * unless prd_show_checkpoints() asked for them (dump); they are counted in
 * prd_type_counts() as perf counts them.
 */
#define PRD_CKPT_TID (-2)

/* Whether the record at @rec (@size bytes, a whole record) is such a COMM. */
bool prd_is_checkpoint_record(const void *rec, uint32_t size);
/* prd_process() hands the checkpoint COMMs to the callback too. */
void prd_show_checkpoints(struct prd_file *f);

/* Header feature bits (tools/perf/util/header.h, 6.1). */
enum {
	PRD_FEAT_TRACING_DATA = 1,
	PRD_FEAT_BUILD_ID,
	PRD_FEAT_HOSTNAME,
	PRD_FEAT_OSRELEASE,
	PRD_FEAT_VERSION,
	PRD_FEAT_ARCH,
	PRD_FEAT_NRCPUS,
	PRD_FEAT_CPUDESC,
	PRD_FEAT_CPUID,
	PRD_FEAT_TOTAL_MEM,
	PRD_FEAT_CMDLINE,
	PRD_FEAT_EVENT_DESC,
	PRD_FEAT_CPU_TOPOLOGY,
	PRD_FEAT_NUMA_TOPOLOGY,
	PRD_FEAT_BRANCH_STACK,
	PRD_FEAT_PMU_MAPPINGS,
	PRD_FEAT_GROUP_DESC,
	PRD_FEAT_AUXTRACE,
	PRD_FEAT_STAT,
	PRD_FEAT_CACHE,
	PRD_FEAT_SAMPLE_TIME,
	PRD_FEAT_MEM_TOPOLOGY,
	PRD_FEAT_CLOCKID,
	PRD_FEAT_DIR_FORMAT,
	PRD_FEAT_BPF_PROG_INFO,
	PRD_FEAT_BPF_BTF,
	PRD_FEAT_COMPRESSED,
	PRD_FEAT_CPU_PMU_CAPS,
	PRD_FEAT_CLOCK_DATA,
	PRD_FEAT_HYBRID_TOPOLOGY,
	PRD_FEAT_PMU_CAPS,
	PRD_FEAT_LAST, /* 32: bits from here on are unknown to perf 6.1 */
	PRD_FEAT_BITS = 256,
};

/*
 * Notes on prd_process(): prd_attr's nr_samples counts as perf report
 * does: a sample with PERF_SAMPLE_READ counts once for each read value
 * whose id is known and whose value moved, for that id's event (so group
 * members of a leader-sampled group get their samples); others once for
 * the record's event.  @fn may be NULL (only count: prd_type_counts(),
 * prd_stats(), the attrs' nr_samples).  Damage noted by prd_open() in the
 * feature sections (truncated or malformed) makes prd_process() return
 * -EBADMSG after it delivered the data.  A file can be processed again
 * (counters restart); a stream only once (-EINVAL).
 */

/* Counters of one prd_process() run. */
struct prd_stats {
	uint64_t nr_records; /* every record read (perf's TOTAL) */
	uint64_t nr_lost_records; /* PERF_RECORD_LOST records */
	uint64_t nr_lost; /* sum of their lost counts */
	uint64_t nr_lost_samples_records; /* PERF_RECORD_LOST_SAMPLES */
	uint64_t nr_lost_samples; /* sum of their lost counts */
	uint64_t nr_unknown_type; /* records of unknown types, skipped */
	uint64_t nr_unknown_id; /* samples whose id no attr has */
	/* samples whose fields do not fit their record (a raw size past
	 * its end...): skipped, as perf skips what it cannot parse */
	uint64_t nr_bad_samples;
	uint64_t bad_sample_offset; /* the first one */
	uint64_t nr_unordered; /* ordered: queued behind the last flush */
	uint64_t nr_early_flushes; /* ordered: queue over its limit */
	uint64_t nr_compressed; /* COMPRESSED records (their contents count too) */
	uint64_t data_bytes; /* record bytes read, payloads included */
	uint64_t damage_offset; /* where damage was found (if damaged) */
	bool damaged; /* prd_process() returned -EBADMSG */
	/* a feature section could not be read (warned, ignored, as perf
	 * does): not an error, the records are all read */
	bool features_damaged;
};

/*
 * Like prd_open() on a descriptor the caller keeps (not closed by
 * prd_close()).  @stream: read it strictly sequentially (a pipe): only the
 * pipe format is accepted then.  @name is used in messages.
 */
int prd_open_fd(int fd, const char *name, bool stream, struct prd_file **out);

const struct prd_stats *prd_stats(const struct prd_file *f);

/* LOST_SAMPLES counts attributed to attr @i by the records' ids. */
uint64_t prd_attr_lost_samples(const struct prd_file *f, uint32_t i);

/* Whether the header announced @feat (file mode) or its HEADER_FEATURE
 * record was seen (pipe mode). */
bool prd_has_feature(const struct prd_file *f, int feat);
/* "hostname", "event_desc", ...; NULL for unknown bits. */
const char *prd_feature_name(int feat);

/* The descriptor the input is read from (perf's header block prints its
 * mtime). */
int prd_fd(const struct prd_file *f);

/* File mode: the data section's offset in the file (pipe mode: 0, where
 * the stream offsets of records start, after the 16-byte header). */
uint64_t prd_data_offset(const struct prd_file *f);

/*
 * The bytes of @ev's record without its sample_id_all trailer (the whole
 * record for samples and records without one): where a record's own
 * variable-length fields (file names, comm) must end.
 */
uint32_t prd_payload_size(const struct prd_file *f, const struct prd_event *ev);

/* The name of tracepoint @id from the TRACING_DATA formats ("sys:name"),
 * or NULL. */
const char *prd_tracepoint_name(const struct prd_file *f, uint64_t id);

/*
 * Ordered mode: most record bytes queued at once; past it the oldest half
 * of the queue (by time) is flushed early with a warning, as perf does when
 * its queue allocation fails.  Default 64 MiB.
 */
void prd_set_queue_limit(struct prd_file *f, size_t bytes);

/*
 * A live reader's sample (the fleet's collector, which reads the rings and
 * no file): PERF_RECORD_SAMPLE @rec (@size bytes) decoded per @a's
 * sample_type as prd_process() decodes it.  0 or -EBADMSG.
 */
int prd_decode_sample(const struct prd_attr *a, const void *rec, uint32_t size,
		      struct prd_sample *s);

#endif
