/* SPDX-License-Identifier: MIT */
/*
 * AUX area trace records of perf.data (format layer): the cs_etm
 * PERF_RECORD_AUXTRACE_INFO metadata (parse and build, as perf's
 * tools/perf/arch/arm/util/cs-etm.c writes it and util/cs-etm.c reads it),
 * PERF_RECORD_AUXTRACE chunk headers, the HEADER_AUXTRACE feature index,
 * and a reader of the AUXTRACE chunks of a perf.data file with their data.
 *
 * Layouts (tools/lib/perf/include/perf/event.h, util/cs-etm.h):
 *   AUXTRACE_INFO (70): {hdr; u32 type; u32 reserved; u64 priv[]}
 *     cs_etm (type 3) priv: [0] header version (0, 1, 2), [1] pmu type << 32
 *     | nr_cpu, [2] snapshot; then nr_cpu blocks:
 *       version 0: {magic, cpu, params...} with a fixed count per magic
 *       version 1/2: {magic, cpu, nr_params, params[nr_params]}
 *     ETMv3/PTM (magic 0x3030..): ETMCR ETMTRACEIDR ETMCCER ETMIDR
 *     ETMv4     (magic 0x4040..): TRCCONFIGR TRCTRACEIDR TRCIDR0 TRCIDR1
 *                                 TRCIDR2 TRCIDR8 TRCAUTHSTATUS [TS_SOURCE]
 *     ETE       (magic 0x5050..): as ETMv4, then TRCDEVARCH [TS_SOURCE]
 *   AUXTRACE (71): {hdr (size 48); u64 size; u64 offset; u64 reference;
 *     u32 idx; u32 tid; u32 cpu; u32 reserved} then @size bytes of trace
 *     that header.size does not count.
 *   HEADER_AUXTRACE feature: u64 nr; nr x {u64 file_offset; u64 sz} where
 *     sz is the record's header.size (48; perf refuses anything else).
 *
 * Every function checks lengths against what it is given; damage returns
 * -EBADMSG and logs what was wrong and where (byte offset in the record or
 * file offset).
 */
#ifndef PERFRING_FORMAT_AUXTRACE_H
#define PERFRING_FORMAT_AUXTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* auxtrace_info.type (tools/perf/util/auxtrace.h) */
enum {
	AUXTRACE_TYPE_UNKNOWN = 0,
	AUXTRACE_TYPE_INTEL_PT = 1,
	AUXTRACE_TYPE_INTEL_BTS = 2,
	AUXTRACE_TYPE_CS_ETM = 3,
	AUXTRACE_TYPE_ARM_SPE = 4,
	AUXTRACE_TYPE_S390_CPUMSF = 5,
};

#define AUXTRACE_REC_INFO 70
#define AUXTRACE_REC_AUXTRACE 71
#define AUXTRACE_REC_ERROR 72
#define AUXTRACE_CHUNK_HDR_SIZE 48u
#define AUXTRACE_INFO_HDR_SIZE 16u /* header + type + reserved */

#define CS_ETMV3_MAGIC 0x3030303030303030ULL
#define CS_ETMV4_MAGIC 0x4040404040404040ULL
#define CS_ETE_MAGIC 0x5050505050505050ULL

/* Header versions perf knows: 0 (fixed blocks), 1 (nr_params in each
 * block: what perf 6.1 writes and the newest it reads), 2 (trace IDs come
 * from PERF_RECORD_AUX_OUTPUT_HW_ID when TRACEIDR has bit 31 set). */
#define CS_ETM_HEADER_VERSION_MAX 2
#define CS_ETM_HEADER_U64S 3

/* Parameter counts as perf 6.1 writes them (version 1). */
#define CS_ETMV3_NR_PARAMS 4
#define CS_ETMV4_NR_PARAMS 7
#define CS_ETE_NR_PARAMS 8
/* Version 0 fixed counts (no nr_params field). */
#define CS_ETMV3_NR_PARAMS_V0 4
#define CS_ETMV4_NR_PARAMS_V0 5
/* Most parameters kept per CPU (later perf versions append more). */
#define CS_ETM_MAX_PARAMS 32

/* TRACEIDR bits (include/linux/coresight-pmu.h) */
#define CS_TRACE_ID_VAL_MASK 0x7fu
#define CS_TRACE_ID_UNUSED_FLAG (1ULL << 31)

enum cs_etm_kind {
	CS_ETM_KIND_ETMV3 = 1, /* ETMv3 and PTM */
	CS_ETM_KIND_ETMV4 = 2,
	CS_ETM_KIND_ETE = 3,
};

/* Indexes into cs_etm_cpu.params[] (after magic, cpu, nr_params). */
enum {
	CS_ETMV3_ETMCR = 0,
	CS_ETMV3_ETMTRACEIDR,
	CS_ETMV3_ETMCCER,
	CS_ETMV3_ETMIDR,
};
enum {
	CS_ETMV4_TRCCONFIGR = 0,
	CS_ETMV4_TRCTRACEIDR,
	CS_ETMV4_TRCIDR0,
	CS_ETMV4_TRCIDR1,
	CS_ETMV4_TRCIDR2,
	CS_ETMV4_TRCIDR8,
	CS_ETMV4_TRCAUTHSTATUS,
	CS_ETMV4_TS_SOURCE, /* present only in newer files (nr_params >= 8) */
};
enum {
	CS_ETE_TRCCONFIGR = 0,
	CS_ETE_TRCTRACEIDR,
	CS_ETE_TRCIDR0,
	CS_ETE_TRCIDR1,
	CS_ETE_TRCIDR2,
	CS_ETE_TRCIDR8,
	CS_ETE_TRCAUTHSTATUS,
	CS_ETE_TRCDEVARCH,
	CS_ETE_TS_SOURCE, /* newer files only (nr_params >= 9) */
};

/* One CPU's block of cs_etm metadata. */
struct cs_etm_cpu {
	enum cs_etm_kind kind;
	uint64_t magic;
	uint32_t cpu;
	uint32_t nr_params; /* parameters in the file (v0: the fixed count) */
	uint64_t params[CS_ETM_MAX_PARAMS]; /* first ones, zero-filled */
	uint8_t trace_id; /* TRACEIDR & 0x7f */
	/* v2 with TRACEIDR bit 31: the ID comes from AUX_OUTPUT_HW_ID
	 * records, trace_id is only the legacy guess. */
	bool trace_id_from_hw_id;
	/* Named views of params[] (0 when absent). */
	uint64_t configr; /* ETMCR or TRCCONFIGR */
	uint64_t traceidr; /* ETMTRACEIDR or TRCTRACEIDR */
	uint64_t etmccer, etmidr; /* ETMv3/PTM */
	uint64_t trcidr0, trcidr1, trcidr2, trcidr8, trcauthstatus;
	uint64_t trcdevarch; /* ETE */
};

struct cs_etm_info {
	uint64_t version; /* header version: 0, 1 or 2 */
	uint32_t pmu_type;
	uint32_t nr_cpu;
	uint64_t snapshot; /* 1: recorded in snapshot mode */
	struct cs_etm_cpu *cpus; /* nr_cpu blocks, in file order */
};

/*
 * Parses a whole PERF_RECORD_AUXTRACE_INFO record (@len bytes available at
 * @rec, header included) of type CS_ETM into @out (cpus malloc'ed: free
 * with cs_etm_info_free()).  Returns 0; -EINVAL if the type is not cs_etm;
 * -EBADMSG on damage (unknown version or magic, block past the end, too
 * many CPUs, ...), logged with the byte offset in the record; -ENOMEM.
 */
int cs_etm_info_parse(const void *rec, size_t len, struct cs_etm_info *out);
void cs_etm_info_free(struct cs_etm_info *info);

/* The block of @cpu, or NULL. */
const struct cs_etm_cpu *cs_etm_info_cpu(const struct cs_etm_info *info,
					 uint32_t cpu);
/* The block whose trace ID is @trace_id, or NULL. */
const struct cs_etm_cpu *cs_etm_info_by_trace_id(const struct cs_etm_info *info,
						 uint8_t trace_id);

const char *cs_etm_kind_name(enum cs_etm_kind kind); /* "ETMv4", ... */

/*
 * Builds a PERF_RECORD_AUXTRACE_INFO record (header included) from @info
 * with header version @info->version (1 or 2; blocks written with their
 * nr_params, params[0..nr_params)).  Returns the size written (or needed,
 * when @buf is NULL or too small: nothing is written then), or -EINVAL
 * (bad version, kind/magic, nr_params over CS_ETM_MAX_PARAMS, record over
 * 64 KiB).
 */
long cs_etm_info_build(const struct cs_etm_info *info, void *buf, size_t cap);

/* Fills a CPU block with the given kind's magic and the perf 6.1 param
 * count, from the named fields (configr, traceidr, ...). */
void cs_etm_cpu_init(struct cs_etm_cpu *c, enum cs_etm_kind kind, uint32_t cpu);

/* Generic AUXTRACE_INFO view: type and priv[] of a record. */
int auxtrace_info_parse(const void *rec, size_t len, uint32_t *type,
			const uint64_t **priv, size_t *nr_priv);

/* One PERF_RECORD_AUXTRACE record. */
struct auxtrace_chunk {
	uint64_t size; /* payload bytes after the 48-byte record */
	uint64_t offset; /* position of the data in the AUX area stream */
	uint64_t reference;
	uint32_t idx; /* mmap index */
	uint32_t tid;
	uint32_t cpu;
	uint64_t file_offset; /* of the record (readers fill it) */
};

/* Parses the 48-byte record at @rec (@len bytes available).  0 or
 * -EBADMSG (type, header.size, len). */
int auxtrace_chunk_parse(const void *rec, size_t len,
			 struct auxtrace_chunk *out);
/* Writes the 48-byte record for @c into @buf. */
void auxtrace_chunk_build(const struct auxtrace_chunk *c, void *buf);

/* HEADER_AUXTRACE index entries. */
struct auxtrace_index_entry {
	uint64_t file_offset;
	uint64_t sz;
};
/* Parses the feature section: 0 with *entries malloc'ed (*nr entries), or
 * -EBADMSG (count past the section). */
int auxtrace_index_parse(const void *sec, size_t len,
			 struct auxtrace_index_entry **entries, size_t *nr);

/*
 * The AUX trace of a perf.data file (file format): its AUXTRACE_INFO and
 * every AUXTRACE chunk with the file offset of its data.  Data is read on
 * demand with auxtrace_file_read().  Pipe-format files are refused
 * (-EOPNOTSUPP): their payloads cannot be read back.
 */
struct auxtrace_file;
int auxtrace_file_open(const char *path, struct auxtrace_file **out);
void auxtrace_file_close(struct auxtrace_file *af);
/* The raw AUXTRACE_INFO record (NULL if none) and its type. */
const void *auxtrace_file_info(const struct auxtrace_file *af, size_t *len,
			       uint32_t *type);
/* Parsed cs_etm metadata, or NULL (no info, or not cs_etm). */
const struct cs_etm_info *auxtrace_file_cs_etm(const struct auxtrace_file *af);
size_t auxtrace_file_nr_chunks(const struct auxtrace_file *af);
const struct auxtrace_chunk *auxtrace_file_chunk(const struct auxtrace_file *af,
						 size_t i);
/* Reads @len bytes at @off into chunk @i's payload.  0 or -errno
 * (-EBADMSG: past the chunk or the file). */
int auxtrace_file_read(const struct auxtrace_file *af, size_t i, uint64_t off,
		       void *buf, size_t len);

#endif
