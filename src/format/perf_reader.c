// SPDX-License-Identifier: MIT
/*
 * perf.data reader: the PERFILE2 file format and perf's pipe format, as
 * perf 6.1 writes them (tools/perf/util/header.c, session.c, evsel.c,
 * ordered-events.c).  Little endian only: a file of the other byte order,
 * the legacy "PERFFILE" magic or an unknown version is refused with
 * -EPROTO and a message.
 *
 * Input.  File mode reads the header, the attrs with their id arrays and
 * the feature sections with pread(), then streams the data section through
 * one 4 MiB buffer (a record is at most 64 KiB; one that straddles the end
 * of the buffered window is moved to the front before more is read), so
 * memory does not grow with the file.  Pipe mode reads the same buffer
 * with read() from any descriptor, never seeking; its attrs, features,
 * event names and tracing data arrive as records (HEADER_ATTR,
 * HEADER_FEATURE, EVENT_UPDATE, HEADER_TRACING_DATA whose payload follows
 * the record outside header.size).  AUXTRACE payloads follow their record
 * the same way in both modes and are skipped.  Record offsets are file
 * offsets in file mode and perf's stream offsets in pipe mode (0 is the
 * first record after the 16-byte pipe header), so they match perf report
 * -D.
 *
 * Checks.  Every size and offset read from the input is checked before it
 * is used: the header's sections against the file size, the attrs' size
 * (larger than this build's struct perf_event_attr: "unsupported attr
 * size", as perf), every record against the end of the data and the
 * minimum size of its type, every sample field against its record.  Damage
 * in the data stops the stream with -EBADMSG after everything before it
 * was delivered; the log names the offset.  Damage in the feature sections
 * is logged at open and reported by prd_process() after the data.
 * Allocations are bounded by what the input holds (ids, features), capped
 * where a count could claim more (PRD_MAX_*), and the ordered queue by its
 * limit.
 *
 * Samples are decoded per their attr's sample_type in the kernel's output
 * order (perf_output_sample(): ... PHYS_ADDR, CGROUP, DATA_PAGE_SIZE,
 * CODE_PAGE_SIZE, AUX).  The attr of a record is found as perf does
 * (evlist__event2evsel): the only attr, else the id at the common id_pos
 * (samples) or is_pos from the end (sample_id_all trailers); id 0 means
 * the first attr.
 *
 * Ordering (ordered-events.c): records of the perf tool (types >= 64) and
 * records without a time (0 or ~0) are delivered as they are read; the
 * others are queued.  At FINISHED_ROUND the queue is flushed up to the
 * largest time seen before the previous round ended, then that limit moves
 * to the largest time seen so far; at the end everything is flushed.  A
 * queue over its limit flushes its older half early (perf's OE_FLUSH__HALF)
 * with a warning.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/log.h"
#include "load.h"
#include "perf_reader.h"

#define PRD_MAGIC 0x32454c4946524550ull /* "PERFILE2" */
#define PRD_MAGIC_SWAPPED 0x50455246494c4532ull
#define PRD_MAGIC_V1 0x454c494646524550ull /* "PERFFILE" */
#define PRD_FILE_HEADER_SIZE 104
#define PRD_FILE_HEADER_V0 72 /* before adds_features */
#define PRD_PIPE_HEADER_SIZE 16
#define PRD_ATTR_VER0 64
#define PRD_BUF_SIZE (4u << 20)
#define PRD_BUF_MIN (256u << 10) /* the window: room for any record */
#define PRD_MAX_RECORD 65535u
/* inflated records of one PERF_RECORD_COMPRESSED: grow by, at most */
#define PRD_ZSTD_STEP (256u << 10)
#define PRD_ZSTD_MAX (64u << 20)
#define PRD_MAX_ATTRS 65536u
#define PRD_MAX_IDS (1u << 22) /* per attr */
#define PRD_FEAT_MAX_LEN (64u << 20)
#define PRD_FEAT_TOTAL_MAX (256u << 20)
#define PRD_TDATA_MAX (64u << 20)
#define PRD_QUEUE_DEFAULT (64u << 20)
#define PRD_CHUNK_SIZE (1u << 20)
#define PRD_MAX_TP 65536u
#define PRD_NAME_MAX 256

#define PRD_SAMPLE_KNOWN ((uint64_t)PERF_SAMPLE_WEIGHT_STRUCT * 2 - 1)
#define PRD_ID_BITS                                            \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* ---- types ---- */

struct attr_priv {
	struct prd_attr pub;
	bool name_explicit; /* EVENT_DESC or EVENT_UPDATE named it */
	uint64_t lost_samples;
	int id_pos, is_pos;
};

struct feat {
	unsigned char *p;
	size_t len;
	bool have;
};

struct tp_name {
	uint64_t id;
	char *name;
};

/* Ordered queue: copies of records in 1 MiB chunks, freed when empty. */
struct chunk {
	struct chunk *next;
	size_t used;
	size_t live;
	_Alignas(8) unsigned char data[PRD_CHUNK_SIZE];
};

struct qev {
	uint64_t time;
	uint64_t seq;
	uint64_t offset;
	unsigned char *rec;
	struct chunk *chunk;
};

struct proc {
	prd_event_fn fn;
	void *ctx;
	bool ordered;
};

struct prd_file {
	int fd;
	bool own_fd;
	bool pipe; /* pipe format */
	bool stream; /* read with read(), never seek */
	bool features_damaged; /* open noted damage in the features */
	bool processed;
	bool quiet; /* peeking at open: no damage messages */
	char *name;
	uint64_t file_size; /* seekable inputs */

	uint64_t data_offset, data_size, data_end;
	uint64_t feat_bits[4];

	struct attr_priv **attrs;
	uint32_t nr_attrs;
	uint32_t cap_attrs;
	/* id -> attr index + 1 (0: empty), open addressing */
	uint64_t *ht_id;
	uint32_t *ht_val;
	uint64_t *ht_period; /* PERF_SAMPLE_READ: last value per id */
	size_t ht_cap, ht_n;
	uint64_t attr_applied_end; /* pipe: HEADER_ATTRs applied up to here */

	struct feat feat[PRD_FEAT_BITS];
	size_t feat_total;

	unsigned char *tdata; /* pipe mode's TRACING_DATA payload */
	size_t tdata_len;
	struct tp_name *tp;
	size_t nr_tp;

	uint64_t counts[128];
	struct prd_stats st;
	uint32_t warned_unknown;
	bool warned_sample_bits, warned_unknown_id;
	bool warned_queue;

	/* stream: the bytes [pos, end) of buf start at offset off */
	unsigned char *buf;
	size_t cap, pos, end;
	uint64_t off;
	uint64_t rd_off; /* seekable: next file offset to read */
	uint64_t limit; /* seekable: end of what may be read */
	uint64_t start_off; /* where the records start */
	bool eof;

	unsigned char *scratch; /* aligned copy of a misaligned record */
	struct prd_sample sample;

	/* PERF_RECORD_COMPRESSED: one zstd stream across all of them */
	ZSTD_DStream *zstream;
	unsigned char *zbuf; /* decompressed records; [0, zkeep) a partial one */
	size_t zcap, zkeep;
	bool in_compressed;

	/* ordered queue */
	struct qev *q, *qtmp; /* qtmp: merge scratch, qcap entries */
	size_t qn, qcap;
	bool q_sorted;
	uint64_t qbytes, qlimit;
	size_t qmax;
	uint64_t seq, next_flush, max_ts, last_flush;
	struct chunk *cur_chunk, *spare;
	uint32_t nr_spare;
};

/* ---- little helpers ---- */

static unsigned int popcount64(uint64_t x)
{
	return (unsigned int)__builtin_popcountll(x);
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* A bounded cursor over input bytes. */
struct cur {
	const unsigned char *p, *e;
};

static size_t left(const struct cur *c)
{
	return (size_t)(c->e - c->p);
}

static bool take(struct cur *c, uint64_t n, const unsigned char **out)
{
	if (n > left(c))
		return false;
	if (out)
		*out = c->p;
	c->p += n;
	return true;
}

static bool get32(struct cur *c, uint32_t *v)
{
	if (left(c) < 4)
		return false;
	*v = ld32(c->p);
	c->p += 4;
	return true;
}

static bool get64(struct cur *c, uint64_t *v)
{
	if (left(c) < 8)
		return false;
	*v = ld64(c->p);
	c->p += 8;
	return true;
}

/* perf's do_write_string() layout: u32 len, then len bytes holding a NUL. */
static const char *get_string(struct cur *c)
{
	const unsigned char *p;
	uint32_t len;

	if (!get32(c, &len) || !len || !take(c, len, &p) || !memchr(p, 0, len))
		return NULL;
	return (const char *)p;
}

static struct attr_priv *priv(const struct prd_attr *a)
{
	return (struct attr_priv *)a; /* pub is the first member */
}

PR_PRINTF(3, 4)
static int damage(struct prd_file *f, uint64_t off, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (f->quiet)
		return -EBADMSG;
	pr_err("%s: %s offset %#llx: %s", f->name, f->pipe ? "stream" : "file",
	       ull(off), msg);
	if (!f->st.damaged) {
		f->st.damaged = true;
		f->st.damage_offset = off;
	}
	return -EBADMSG;
}

static int io_error(struct prd_file *f, uint64_t off, int err)
{
	pr_err("%s: read error at offset %#llx: %s", f->name, ull(off),
	       strerror(-err));
	return err;
}

/* ---- record types ---- */

static const char *const type_names[128] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[21] = "AUX_OUTPUT_HW_ID",
	[PRD_REC_HEADER_ATTR] = "ATTR",
	[PRD_REC_HEADER_EVENT_TYPE] = "EVENT_TYPE",
	[PRD_REC_HEADER_TRACING_DATA] = "TRACING_DATA",
	[PRD_REC_HEADER_BUILD_ID] = "BUILD_ID",
	[PRD_REC_FINISHED_ROUND] = "FINISHED_ROUND",
	[PRD_REC_ID_INDEX] = "ID_INDEX",
	[PRD_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[PRD_REC_AUXTRACE] = "AUXTRACE",
	[PRD_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[PRD_REC_THREAD_MAP] = "THREAD_MAP",
	[PRD_REC_CPU_MAP] = "CPU_MAP",
	[PRD_REC_STAT_CONFIG] = "STAT_CONFIG",
	[PRD_REC_STAT] = "STAT",
	[PRD_REC_STAT_ROUND] = "STAT_ROUND",
	[PRD_REC_EVENT_UPDATE] = "EVENT_UPDATE",
	[PRD_REC_TIME_CONV] = "TIME_CONV",
	[PRD_REC_HEADER_FEATURE] = "FEATURE",
	[PRD_REC_COMPRESSED] = "COMPRESSED",
	[PRD_REC_FINISHED_INIT] = "FINISHED_INIT",
};

/* The fixed fields of each type after the header (sample_id excluded). */
static const uint8_t min_body[128] = {
	[PERF_RECORD_MMAP] = 32,
	[PERF_RECORD_LOST] = 16,
	[PERF_RECORD_COMM] = 8,
	[PERF_RECORD_EXIT] = 24,
	[PERF_RECORD_THROTTLE] = 24,
	[PERF_RECORD_UNTHROTTLE] = 24,
	[PERF_RECORD_FORK] = 24,
	[PERF_RECORD_READ] = 16,
	[PERF_RECORD_MMAP2] = 64,
	[PERF_RECORD_AUX] = 24,
	[PERF_RECORD_ITRACE_START] = 8,
	[PERF_RECORD_LOST_SAMPLES] = 8,
	[PERF_RECORD_SWITCH_CPU_WIDE] = 8,
	[PERF_RECORD_NAMESPACES] = 16,
	[PERF_RECORD_KSYMBOL] = 16,
	[PERF_RECORD_BPF_EVENT] = 16,
	[PERF_RECORD_CGROUP] = 8,
	[PERF_RECORD_TEXT_POKE] = 12,
	[21] = 8,
	[PRD_REC_HEADER_ATTR] = PRD_ATTR_VER0,
	[PRD_REC_HEADER_EVENT_TYPE] = 72,
	[PRD_REC_HEADER_TRACING_DATA] = 4,
	[PRD_REC_HEADER_BUILD_ID] = 28,
	[PRD_REC_ID_INDEX] = 8,
	[PRD_REC_AUXTRACE_INFO] = 8,
	[PRD_REC_AUXTRACE] = 40,
	[PRD_REC_AUXTRACE_ERROR] = 96,
	[PRD_REC_THREAD_MAP] = 8,
	[PRD_REC_CPU_MAP] = 2,
	[PRD_REC_STAT_CONFIG] = 8,
	[PRD_REC_STAT] = 40,
	[PRD_REC_STAT_ROUND] = 16,
	[PRD_REC_EVENT_UPDATE] = 16,
	[PRD_REC_TIME_CONV] = 24,
	[PRD_REC_HEADER_FEATURE] = 8,
};

PR_HIDDEN const char *prd_type_name(uint32_t type)
{
	return type < 128 ? type_names[type] : NULL;
}

static bool kernel_type(uint32_t type)
{
	return type && type < PRD_REC_HEADER_ATTR;
}

static const char *const feat_names[PRD_FEAT_LAST] = {
	[PRD_FEAT_TRACING_DATA] = "tracing_data",
	[PRD_FEAT_BUILD_ID] = "build_id",
	[PRD_FEAT_HOSTNAME] = "hostname",
	[PRD_FEAT_OSRELEASE] = "osrelease",
	[PRD_FEAT_VERSION] = "version",
	[PRD_FEAT_ARCH] = "arch",
	[PRD_FEAT_NRCPUS] = "nrcpus",
	[PRD_FEAT_CPUDESC] = "cpudesc",
	[PRD_FEAT_CPUID] = "cpuid",
	[PRD_FEAT_TOTAL_MEM] = "total_mem",
	[PRD_FEAT_CMDLINE] = "cmdline",
	[PRD_FEAT_EVENT_DESC] = "event_desc",
	[PRD_FEAT_CPU_TOPOLOGY] = "cpu_topology",
	[PRD_FEAT_NUMA_TOPOLOGY] = "numa_topology",
	[PRD_FEAT_BRANCH_STACK] = "branch_stack",
	[PRD_FEAT_PMU_MAPPINGS] = "pmu_mappings",
	[PRD_FEAT_GROUP_DESC] = "group_desc",
	[PRD_FEAT_AUXTRACE] = "auxtrace",
	[PRD_FEAT_STAT] = "stat",
	[PRD_FEAT_CACHE] = "cache",
	[PRD_FEAT_SAMPLE_TIME] = "sample_time",
	[PRD_FEAT_MEM_TOPOLOGY] = "mem_topology",
	[PRD_FEAT_CLOCKID] = "clockid",
	[PRD_FEAT_DIR_FORMAT] = "dir_format",
	[PRD_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
	[PRD_FEAT_BPF_BTF] = "bpf_btf",
	[PRD_FEAT_COMPRESSED] = "compressed",
	[PRD_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps",
	[PRD_FEAT_CLOCK_DATA] = "clock_data",
	[PRD_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology",
	[PRD_FEAT_PMU_CAPS] = "pmu_caps",
};

PR_HIDDEN const char *prd_feature_name(int feat)
{
	return feat > 0 && feat < PRD_FEAT_LAST ? feat_names[feat] : NULL;
}

/* ---- attrs, ids, names ---- */

/* perf's __evsel__calc_id_pos() and __evsel__calc_is_pos(). */
static int calc_id_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
	       !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
}

static int calc_is_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

static uint64_t id_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return id;
}

static int ht_insert(struct prd_file *f, uint64_t id, uint32_t idx)
{
	size_t i, mask;

	if ((f->ht_n + 1) * 2 > f->ht_cap) {
		size_t ncap = f->ht_cap ? f->ht_cap * 2 : 64;
		uint64_t *nid = calloc(ncap, sizeof(*nid));
		uint32_t *nval = calloc(ncap, sizeof(*nval));
		uint64_t *nper = calloc(ncap, sizeof(*nper));

		if (!nid || !nval || !nper) {
			free(nid);
			free(nval);
			free(nper);
			return -ENOMEM;
		}
		for (i = 0; i < f->ht_cap; i++) {
			size_t j;

			if (!f->ht_val[i])
				continue;
			j = id_hash(f->ht_id[i]) & (ncap - 1);
			while (nval[j])
				j = (j + 1) & (ncap - 1);
			nid[j] = f->ht_id[i];
			nval[j] = f->ht_val[i];
			nper[j] = f->ht_period[i];
		}
		free(f->ht_id);
		free(f->ht_val);
		free(f->ht_period);
		f->ht_id = nid;
		f->ht_val = nval;
		f->ht_period = nper;
		f->ht_cap = ncap;
	}
	mask = f->ht_cap - 1;
	for (i = id_hash(id) & mask; f->ht_val[i]; i = (i + 1) & mask)
		if (f->ht_id[i] == id)
			return 0; /* the first attr keeps it */
	f->ht_id[i] = id;
	f->ht_val[i] = idx + 1;
	f->ht_n++;
	return 0;
}

/* The slot of @id, or SIZE_MAX. */
static size_t ht_slot(const struct prd_file *f, uint64_t id)
{
	size_t i, mask;

	if (!f->ht_cap)
		return SIZE_MAX;
	mask = f->ht_cap - 1;
	for (i = id_hash(id) & mask; f->ht_val[i]; i = (i + 1) & mask)
		if (f->ht_id[i] == id)
			return i;
	return SIZE_MAX;
}

static struct attr_priv *ht_find(const struct prd_file *f, uint64_t id)
{
	size_t i = ht_slot(f, id);

	return i == SIZE_MAX ? NULL : f->attrs[f->ht_val[i] - 1];
}

/* perf's deliver_sample_value(): a read value counts as a sample of the
 * event its id names when the value moved since that id's last one. */
static void count_read_value(struct prd_file *f, uint64_t id, uint64_t v)
{
	size_t i = ht_slot(f, id);

	if (i == SIZE_MAX) {
		f->st.nr_unknown_id++;
		return;
	}
	if (v != f->ht_period[i])
		f->attrs[f->ht_val[i] - 1]->pub.nr_samples++;
	f->ht_period[i] = v;
}

/*
 * Samples with PERF_SAMPLE_READ count as perf report counts them
 * (evlist__deliver_sample): once per read value, for the event of the
 * value's id (group members included), when its value moved.
 */
static void count_read_sample(struct prd_file *f, const struct prd_sample *s)
{
	uint64_t rf = s->attr->attr.read_format, nr, per, id;
	const unsigned char *p = s->read;
	size_t i = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		   !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (!(rf & PERF_FORMAT_GROUP)) {
		id = rf & PERF_FORMAT_ID ? ld64(p + 8 * i) : 0;
		count_read_value(f, id, ld64(p));
		return;
	}
	nr = ld64(p);
	per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	for (uint64_t k = 0; k < nr; k++, i += per) {
		id = rf & PERF_FORMAT_ID ? ld64(p + 8 * (i + 1)) : 0;
		count_read_value(f, id, ld64(p + 8 * i));
	}
}

static const char *const hw_names[] = {
	"cycles",
	"instructions",
	"cache-references",
	"cache-misses",
	"branches",
	"branch-misses",
	"bus-cycles",
	"stalled-cycles-frontend",
	"stalled-cycles-backend",
	"ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock",	    "task-clock",   "page-faults",  "context-switches",
	"cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy",	    "bpf-output",   "cgroup-switches",
};

static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC",
					   "dTLB",	"iTLB",	     "branch",
					   "node" };
static const char *const cache_ops[][2] = { { "load", "loads" },
					    { "store", "stores" },
					    { "prefetch", "prefetches" } };

/* perf's evsel__add_modifiers(). */
static void add_modifiers(const struct perf_event_attr *a, char *s, size_t n)
{
	size_t r = strlen(s), colon = 0;
	bool guest_default = false;

#define MOD(cond, c)                          \
	do {                                  \
		if (!(cond) && r + 2 < n) {   \
			if (!colon) {         \
				s[r++] = ':'; \
				colon = r;    \
			}                     \
			s[r++] = (c);         \
			s[r] = '\0';          \
		}                             \
	} while (0)
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		MOD(a->exclude_kernel, 'k');
		MOD(a->exclude_user, 'u');
		MOD(a->exclude_hv, 'h');
		guest_default = true;
	}
	for (unsigned int i = 0; i < a->precise_ip && i < 3; i++)
		MOD(0, 'p');
	if (a->precise_ip)
		guest_default = true;
	if (a->exclude_host || a->exclude_guest == guest_default) {
		MOD(a->exclude_host, 'H');
		MOD(a->exclude_guest, 'G');
	}
#undef MOD
}

static const char *tp_lookup(const struct prd_file *f, uint64_t id)
{
	size_t lo = 0, hi = f->nr_tp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->tp[mid].id == id)
			return f->tp[mid].name;
		if (f->tp[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* perf's evsel__name() for an attr without a recorded name. */
static void derive_name(const struct prd_file *f,
			const struct perf_event_attr *a, char *s, size_t n)
{
	uint64_t c = a->config;
	const char *tp;

	s[0] = '\0';
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		snprintf(s, n, "%s",
			 c < sizeof(hw_names) / sizeof(hw_names[0]) ?
				 hw_names[c] :
				 "unknown-hardware");
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_SOFTWARE:
		snprintf(s, n, "%s",
			 c < sizeof(sw_names) / sizeof(sw_names[0]) ?
				 sw_names[c] :
				 "unknown-software");
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_HW_CACHE: {
		uint64_t t = c & 0xff, op = (c >> 8) & 0xff,
			 res = (c >> 16) & 0xff;

		if (t < 7 && op < 3 && res < 2)
			snprintf(s, n, "%s-%s%s", cache_names[t],
				 cache_ops[op][!res], res ? "-misses" : "");
		else
			snprintf(s, n, "invalid-cache");
		add_modifiers(a, s, n);
		break;
	}
	case PERF_TYPE_RAW:
		snprintf(s, n, "raw 0x%llx", ull(c));
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_BREAKPOINT:
		snprintf(s, n, "mem:0x%llx:%s%s%s", ull(a->bp_addr),
			 a->bp_type & 1 ? "r" : "", a->bp_type & 2 ? "w" : "",
			 a->bp_type & 4 ? "x" : "");
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_TRACEPOINT:
		tp = tp_lookup(f, c);
		snprintf(s, n, "%s", tp ? tp : "unknown tracepoint");
		break;
	default:
		snprintf(s, n, "unknown attr type: %u", a->type);
		break;
	}
}

static int set_name(struct attr_priv *ap, const char *name, bool expl)
{
	char *s = strdup(name);

	if (!s)
		return -ENOMEM;
	free(ap->pub.name);
	ap->pub.name = s;
	ap->name_explicit = expl;
	return 0;
}

static void rename_derived(struct prd_file *f)
{
	char s[PRD_NAME_MAX];

	for (uint32_t i = 0; i < f->nr_attrs; i++) {
		struct attr_priv *ap = f->attrs[i];

		if (ap->name_explicit)
			continue;
		derive_name(f, &ap->pub.attr, s, sizeof(s));
		if (!ap->pub.name || strcmp(ap->pub.name, s))
			set_name(ap, s, false);
	}
}

/* With several attrs, perf needs the id at one place in every record
 * (evlist__valid_sample_type) and one sample_id_all. */
static const char *attrs_consistent(const struct prd_file *f)
{
	const struct attr_priv *a0;

	if (f->nr_attrs < 2)
		return NULL;
	a0 = f->attrs[0];
	if (a0->id_pos < 0 || a0->is_pos < 0)
		return "several events but the first has no sample id";
	for (uint32_t i = 1; i < f->nr_attrs; i++) {
		const struct attr_priv *a = f->attrs[i];

		if (a->id_pos != a0->id_pos || a->is_pos != a0->is_pos)
			return "events disagree on where the sample id is (non matching sample_type)";
		if (a->pub.attr.sample_id_all != a0->pub.attr.sample_id_all)
			return "events disagree on sample_id_all";
	}
	return NULL;
}

/* Whether one more attr (its first 64 bytes at @attr) keeps the file
 * readable (see attrs_consistent()); NULL or why not. */
static const char *attr_fits(const struct prd_file *f,
			     const unsigned char *attr)
{
	uint64_t st = ld64(attr + 24);
	bool sia = (ld64(attr + 40) >> 18) & 1;
	const struct attr_priv *a0;

	if (!f->nr_attrs)
		return NULL;
	a0 = f->attrs[0];
	if (a0->id_pos < 0 || a0->is_pos < 0 || calc_id_pos(st) < 0 ||
	    calc_is_pos(st) < 0)
		return "several events but not all have a sample id";
	if (calc_id_pos(st) != a0->id_pos || calc_is_pos(st) != a0->is_pos)
		return "events disagree on where the sample id is (non matching sample_type)";
	if (sia != a0->pub.attr.sample_id_all)
		return "events disagree on sample_id_all";
	return NULL;
}

/* Adds an attr of @asz bytes (64..sizeof) with @nr_ids ids at @ids. */
static int add_attr(struct prd_file *f, const unsigned char *attr, size_t asz,
		    const unsigned char *ids, uint32_t nr_ids)
{
	struct attr_priv *ap;
	char s[PRD_NAME_MAX];
	int ret;

	if (f->nr_attrs >= PRD_MAX_ATTRS)
		return -E2BIG;
	if (f->nr_attrs == f->cap_attrs) {
		uint32_t ncap = f->cap_attrs ? f->cap_attrs * 2 : 8;
		struct attr_priv **na = realloc(f->attrs, ncap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		f->attrs = na;
		f->cap_attrs = ncap;
	}
	ap = calloc(1, sizeof(*ap));
	if (!ap)
		return -ENOMEM;
	memcpy(&ap->pub.attr, attr, asz);
	if (!ap->pub.attr.size)
		ap->pub.attr.size = PRD_ATTR_VER0;
	if (nr_ids) {
		ap->pub.ids = malloc(nr_ids * sizeof(uint64_t));
		if (!ap->pub.ids) {
			free(ap);
			return -ENOMEM;
		}
		memcpy(ap->pub.ids, ids, nr_ids * sizeof(uint64_t));
	}
	ap->pub.nr_ids = nr_ids;
	ap->pub.index = f->nr_attrs;
	ap->id_pos = calc_id_pos(ap->pub.attr.sample_type);
	ap->is_pos = calc_is_pos(ap->pub.attr.sample_type);
	derive_name(f, &ap->pub.attr, s, sizeof(s));
	if (set_name(ap, s, false)) {
		free(ap->pub.ids);
		free(ap);
		return -ENOMEM;
	}
	f->attrs[f->nr_attrs++] = ap;
	for (uint32_t i = 0; i < nr_ids; i++) {
		ret = ht_insert(f, ap->pub.ids[i], ap->pub.index);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- features ---- */

static bool valid_strings(struct cur *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!get_string(c))
			return false;
	return true;
}

/* EVENT_DESC: nr, attr size, then per event attr, nr_ids, name, ids.
 * Names the attrs by position unless they have a name already. */
static bool apply_event_desc(struct prd_file *f, const unsigned char *p,
			     size_t len)
{
	struct cur c = { p, p + len };
	uint32_t nr, asz, nids;
	const char *name;

	if (!get32(&c, &nr) || !get32(&c, &asz) || asz < PRD_ATTR_VER0)
		return false;
	for (uint32_t i = 0; i < nr; i++) {
		if (!take(&c, asz, NULL) || !get32(&c, &nids) ||
		    !(name = get_string(&c)) ||
		    !take(&c, (uint64_t)nids * 8, NULL))
			return false;
		if (i < f->nr_attrs && !f->attrs[i]->name_explicit)
			set_name(f->attrs[i], name, true);
	}
	return true;
}

/* BUILD_ID: records {header, pid, build_id[24], filename}. */
static bool valid_build_ids(const unsigned char *p, size_t len)
{
	struct cur c = { p, p + len };

	while (left(&c)) {
		uint16_t size;

		if (left(&c) < 8)
			return false;
		size = ld16(c.p + 6);
		if (size < 8 + 4 + 24 || !take(&c, size, NULL))
			return false;
	}
	return true;
}

/* Tracepoint names from the formats in TRACING_DATA (trace-event-read.c). */
static int cmp_tp(const void *a, const void *b)
{
	const struct tp_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The value after "key" at a line start in @fmt, as a bounded string. */
static bool fmt_field(const unsigned char *fmt, size_t len, const char *key,
		      char *out, size_t n)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen <= len; i++) {
		size_t j = 0;

		if (i && fmt[i - 1] != '\n')
			continue;
		if (memcmp(fmt + i, key, klen))
			continue;
		i += klen;
		while (i < len && fmt[i] == ' ')
			i++;
		while (i < len && fmt[i] != '\n' && fmt[i] && j + 1 < n)
			out[j++] = (char)fmt[i++];
		out[j] = '\0';
		return j > 0;
	}
	return false;
}

static void clear_tp(struct prd_file *f)
{
	for (size_t i = 0; i < f->nr_tp; i++)
		free(f->tp[i].name);
	free(f->tp);
	f->tp = NULL;
	f->nr_tp = 0;
}

static bool parse_tracing_data(struct prd_file *f, const unsigned char *p,
			       size_t len)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r',
						 'a',  'c',  'i',  'n', 'g' };
	struct cur c = { p, p + len };
	const unsigned char *s;
	uint32_t n, nsys;
	uint64_t sz;
	size_t cap = 0;

	clear_tp(f);
	if (!take(&c, sizeof(magic), &s) || memcmp(s, magic, sizeof(magic)))
		return false;
	s = memchr(c.p, 0, left(&c) < 16 ? left(&c) : 16);
	if (!s || !take(&c, (size_t)(s - c.p) + 1, NULL))
		return false;
	if (!take(&c, 2, &s) || s[0] /* big endian */ || !take(&c, 4, NULL))
		return false;
	if (!take(&c, 12, &s) || memcmp(s, "header_page", 12) ||
	    !get64(&c, &sz) || !take(&c, sz, NULL))
		return false;
	if (!take(&c, 13, &s) || memcmp(s, "header_event", 13) ||
	    !get64(&c, &sz) || !take(&c, sz, NULL))
		return false;
	if (!get32(&c, &n))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!get64(&c, &sz) || !take(&c, sz, NULL))
			return false;
	if (!get32(&c, &nsys))
		return false;
	for (uint32_t i = 0; i < nsys; i++) {
		const unsigned char *sys = c.p, *nul;

		nul = memchr(c.p, 0, left(&c));
		if (!nul || !take(&c, (size_t)(nul - c.p) + 1, NULL) ||
		    !get32(&c, &n))
			return false;
		for (uint32_t k = 0; k < n; k++) {
			char name[PRD_NAME_MAX / 2], id[32], full[PRD_NAME_MAX];
			struct tp_name *t;

			if (!get64(&c, &sz) || !take(&c, sz, &s))
				return false;
			if (!fmt_field(s, sz, "name:", name, sizeof(name)) ||
			    !fmt_field(s, sz, "ID:", id, sizeof(id)))
				continue;
			if (f->nr_tp >= PRD_MAX_TP)
				continue;
			if (f->nr_tp == cap) {
				cap = cap ? cap * 2 : 64;
				t = realloc(f->tp, cap * sizeof(*t));
				if (!t)
					return true; /* names only */
				f->tp = t;
			}
			snprintf(full, sizeof(full), "%.*s:%s",
				 (int)(nul - sys) < 100 ? (int)(nul - sys) :
							  100,
				 (const char *)sys, name);
			t = &f->tp[f->nr_tp];
			t->id = strtoull(id, NULL, 10);
			t->name = strdup(full);
			if (t->name)
				f->nr_tp++;
		}
	}
	if (f->nr_tp)
		qsort(f->tp, f->nr_tp, sizeof(*f->tp), cmp_tp);
	return true;
}

/* Checks (and applies) a feature's payload; false if it is malformed. */
static bool check_feature(struct prd_file *f, int feat, const unsigned char *p,
			  size_t len)
{
	struct cur c = { p, p + len };
	uint32_t n, k;

	switch (feat) {
	case PRD_FEAT_HOSTNAME:
	case PRD_FEAT_OSRELEASE:
	case PRD_FEAT_VERSION:
	case PRD_FEAT_ARCH:
	case PRD_FEAT_CPUDESC:
	case PRD_FEAT_CPUID:
		return get_string(&c) != NULL;
	case PRD_FEAT_NRCPUS:
	case PRD_FEAT_TOTAL_MEM:
	case PRD_FEAT_CLOCKID:
		return len >= 8;
	case PRD_FEAT_SAMPLE_TIME:
		return len >= 16;
	case PRD_FEAT_CLOCK_DATA:
		return len >= 24;
	case PRD_FEAT_CMDLINE:
		return get32(&c, &n) && valid_strings(&c, n);
	case PRD_FEAT_EVENT_DESC:
		return apply_event_desc(f, p, len);
	case PRD_FEAT_BUILD_ID:
		return valid_build_ids(p, len);
	case PRD_FEAT_PMU_MAPPINGS:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get32(&c, &k) || !get_string(&c))
				return false;
		return true;
	case PRD_FEAT_GROUP_DESC:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get_string(&c) || !get32(&c, &k) || !get32(&c, &k))
				return false;
		return true;
	case PRD_FEAT_CPU_TOPOLOGY:
		/* core and thread sibling lists; the per-cpu ids and the die
		 * lists after them are optional (older perf) */
		return get32(&c, &n) && valid_strings(&c, n) && get32(&c, &n) &&
		       valid_strings(&c, n);
	case PRD_FEAT_NUMA_TOPOLOGY:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get32(&c, &k) || !take(&c, 16, NULL) ||
			    !get_string(&c))
				return false;
		return true;
	case PRD_FEAT_CACHE:
		/* version, count, {level, line, sets, ways, type, size, map} */
		if (!get32(&c, &k) || !get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!take(&c, 16, NULL) || !valid_strings(&c, 3))
				return false;
		return true;
	case PRD_FEAT_MEM_TOPOLOGY: {
		/* version, block size, count, {node, size, bitmap (size, u64
		 * words)} */
		uint64_t nr, bits;

		if (!take(&c, 16, NULL) || !get64(&c, &nr))
			return false;
		for (uint64_t i = 0; i < nr; i++)
			if (!take(&c, 16, NULL) || !get64(&c, &bits) ||
			    !take(&c, (bits / 64 + !!(bits % 64)) * 8, NULL))
				return false;
		return true;
	}
	case PRD_FEAT_CPU_PMU_CAPS:
	case PRD_FEAT_HYBRID_TOPOLOGY:
		/* count, then name/value (or pmu/cpus) string pairs */
		return get32(&c, &n) && n <= UINT32_MAX / 2 &&
		       valid_strings(&c, 2 * n);
	case PRD_FEAT_PMU_CAPS:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get32(&c, &k) || k > UINT32_MAX / 2 ||
			    !valid_strings(&c, 2 * k) || !get_string(&c))
				return false;
		return true;
	case PRD_FEAT_COMPRESSED:
		return len >= 20; /* version, type, level, ratio, mmap_len */
	case PRD_FEAT_DIR_FORMAT:
		return len >= 8;
	case PRD_FEAT_TRACING_DATA: {
		bool ok = parse_tracing_data(f, p, len);

		rename_derived(f);
		return ok;
	}
	default:
		return true;
	}
}

static int store_feature(struct prd_file *f, int feat, const unsigned char *p,
			 size_t len)
{
	unsigned char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, p, len);
	f->feat_total -= f->feat[feat].len;
	free(f->feat[feat].p);
	f->feat[feat].p = copy;
	f->feat[feat].len = len;
	f->feat[feat].have = true;
	f->feat_total += len;
	return 0;
}

/* ---- low-level input ---- */

static int pread_full(struct prd_file *f, void *dst, size_t len, uint64_t off)
{
	unsigned char *d = dst;

	while (len) {
		ssize_t n = pread(f->fd, d, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return io_error(f, off, -errno);
		}
		if (n == 0)
			return damage(f, off, "unexpected end of file");
		d += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Makes @need bytes available at buf + pos: 0, 1 if the input ends first,
 * or -errno.  The window moves to the front (keeping the offset's
 * alignment mod 8) when @need does not fit behind it.
 */
static int fill(struct prd_file *f, size_t need)
{
	size_t have = f->end - f->pos;

	if (have >= need)
		return 0;
	if (f->eof)
		return 1;
	if (f->cap - f->pos < need) {
		size_t to = (size_t)(f->off & 7);

		memmove(f->buf + to, f->buf + f->pos, have);
		f->pos = to;
		f->end = to + have;
	}
	while (f->end - f->pos < need) {
		size_t room = f->cap - f->end;
		ssize_t n;

		if (f->stream) {
			n = read(f->fd, f->buf + f->end, room);
		} else {
			uint64_t rest = f->limit - f->rd_off;

			if (!rest) {
				f->eof = true;
				return 1;
			}
			if (room > rest)
				room = (size_t)rest;
			n = pread(f->fd, f->buf + f->end, room,
				  (off_t)f->rd_off);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			f->eof = true;
			return 1;
		}
		f->end += (size_t)n;
		if (!f->stream)
			f->rd_off += (uint64_t)n;
	}
	return 0;
}

/* Seekable input: bytes from the current position to the limit. */
static uint64_t bytes_left(const struct prd_file *f)
{
	return (f->end - f->pos) + (f->limit - f->rd_off);
}

static void consume(struct prd_file *f, size_t n)
{
	f->pos += n;
	f->off += n;
}

/* Passes @n payload bytes (into @dst up to @dst_len if given): 0, 1 if
 * the input ends first, -errno. */
static int pass_bytes(struct prd_file *f, uint64_t n, unsigned char *dst,
		      size_t dst_len)
{
	uint64_t done = 0;

	while (done < n) {
		size_t have = f->end - f->pos, take_n;
		int ret;

		if (!have) {
			if (!f->stream && !dst) {
				/* seek over what is not needed */
				uint64_t skip = n - done;

				if (skip > f->limit - f->rd_off) {
					f->off += f->limit - f->rd_off;
					f->rd_off = f->limit;
					return 1;
				}
				f->rd_off += skip;
				f->off += skip;
				return 0;
			}
			ret = fill(f, 1);
			if (ret)
				return ret;
			have = f->end - f->pos;
		}
		take_n = have < n - done ? have : (size_t)(n - done);
		if (dst && done < dst_len)
			memcpy(dst + done, f->buf + f->pos,
			       dst_len - done < take_n ? dst_len - done :
							 take_n);
		consume(f, take_n);
		done += take_n;
	}
	return 0;
}

/* ---- samples ---- */

/* Decodes PERF_RECORD_SAMPLE @rec of attr @a; NULL, or the field that
 * does not fit. */
static const char *decode_sample(const struct prd_attr *a,
				 const unsigned char *rec, uint32_t size,
				 struct prd_sample *s)
{
	const struct perf_event_attr *at = &a->attr;
	uint64_t st = at->sample_type, v;
	struct cur c = { rec + 8, rec + size };
	const unsigned char *p;
	uint32_t u;

	memset(s, 0, sizeof(*s));
	s->attr = a;
	if ((st & PERF_SAMPLE_IDENTIFIER) && !get64(&c, &s->id))
		return "identifier";
	if ((st & PERF_SAMPLE_IP) && !get64(&c, &s->ip))
		return "ip";
	if ((st & PERF_SAMPLE_TID) &&
	    (!get32(&c, &s->pid) || !get32(&c, &s->tid)))
		return "pid/tid";
	if ((st & PERF_SAMPLE_TIME) && !get64(&c, &s->time))
		return "time";
	if ((st & PERF_SAMPLE_ADDR) && !get64(&c, &s->addr))
		return "addr";
	if ((st & PERF_SAMPLE_ID) && !get64(&c, &s->id))
		return "id";
	if ((st & PERF_SAMPLE_STREAM_ID) && !get64(&c, &s->stream_id))
		return "stream_id";
	if ((st & PERF_SAMPLE_CPU) && (!get32(&c, &s->cpu) || !get32(&c, &u)))
		return "cpu";
	if ((st & PERF_SAMPLE_PERIOD) && !get64(&c, &s->period))
		return "period";
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = at->read_format, nr = 1, per;

		p = c.p;
		per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		if (rf & PERF_FORMAT_GROUP) {
			if (!get64(&c, &nr))
				return "read group nr";
		} else {
			per += !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
		}
		if ((rf & PERF_FORMAT_GROUP) &&
		    !take(&c,
			  8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING)),
			  NULL))
			return "read times";
		if (nr > left(&c) / (8 * per) || !take(&c, nr * per * 8, NULL))
			return "read values";
		s->read = p;
		s->read_size = (size_t)(c.p - p);
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (!get64(&c, &v) || v > left(&c) / 8 || !take(&c, v * 8, &p))
			return "callchain";
		s->callchain = (const uint64_t *)(const void *)p;
		s->nr_callchain = v;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (!get32(&c, &u) || !take(&c, u, &p))
			return "raw data";
		s->raw = p;
		s->raw_size = u;
		/* the kernel pads raw data so the u64s after it stay aligned */
		if ((size_t)(c.p - rec) & 7)
			return "raw size (misaligns the fields after it)";
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		p = c.p;
		if (!get64(&c, &v))
			return "branch stack nr";
		if ((at->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) &&
		    !take(&c, 8, NULL))
			return "branch stack hw_idx";
		if (v > left(&c) / 24 || !take(&c, v * 24, NULL))
			return "branch stack";
		s->branch_stack = p;
		s->nr_branches = v;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (!get64(&c, &s->regs_user_abi))
			return "user regs abi";
		if (s->regs_user_abi) {
			u = popcount64(at->sample_regs_user);
			if (!take(&c, (uint64_t)u * 8, &p))
				return "user regs";
			s->regs_user = (const uint64_t *)(const void *)p;
			s->nr_regs_user = u;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		if (!get64(&c, &v) || !take(&c, v, &p))
			return "user stack";
		s->stack_user = p;
		s->stack_user_size = v;
		if ((size_t)(c.p - rec) & 7)
			return "user stack size (misaligns the fields after it)";
		if (v) {
			if (!get64(&c, &s->stack_user_dyn_size))
				return "user stack dyn_size";
			if (s->stack_user_dyn_size > v)
				s->stack_user_dyn_size = v; /* as perf */
		}
	}
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    !get64(&c, &s->weight))
		return "weight";
	if ((st & PERF_SAMPLE_DATA_SRC) && !get64(&c, &s->data_src))
		return "data_src";
	if ((st & PERF_SAMPLE_TRANSACTION) && !get64(&c, &s->transaction))
		return "transaction";
	if (st & PERF_SAMPLE_REGS_INTR) {
		if (!get64(&c, &s->regs_intr_abi))
			return "intr regs abi";
		if (s->regs_intr_abi) {
			u = popcount64(at->sample_regs_intr);
			if (!take(&c, (uint64_t)u * 8, &p))
				return "intr regs";
			s->regs_intr = (const uint64_t *)(const void *)p;
			s->nr_regs_intr = u;
		}
	}
	if ((st & PERF_SAMPLE_PHYS_ADDR) && !get64(&c, &s->phys_addr))
		return "phys_addr";
	if ((st & PERF_SAMPLE_CGROUP) && !get64(&c, &s->cgroup))
		return "cgroup";
	if ((st & PERF_SAMPLE_DATA_PAGE_SIZE) && !get64(&c, &s->data_page_size))
		return "data_page_size";
	if ((st & PERF_SAMPLE_CODE_PAGE_SIZE) && !get64(&c, &s->code_page_size))
		return "code_page_size";
	if (st & PERF_SAMPLE_AUX) {
		if (!get64(&c, &v) || !take(&c, v, &p))
			return "aux data";
		s->aux = p;
		s->aux_size = v;
	}
	return NULL;
}

static unsigned int trailer_words(uint64_t st)
{
	return popcount64(st & PRD_ID_BITS);
}

/* The sample_id_all trailer, walked back from the end as perf does
 * (perf_evsel__parse_id_sample); the caller checked it fits. */
static void decode_trailer(uint64_t st, const unsigned char *rec, uint32_t size,
			   struct prd_sample *s)
{
	const unsigned char *p = rec + 8 + ((size - 8) / 8 - 1) * 8;

	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->id = ld64(p);
		p -= 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = ld32(p);
		p -= 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = ld64(p);
		p -= 8;
	}
	if (st & PERF_SAMPLE_ID) {
		s->id = ld64(p);
		p -= 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = ld64(p);
		p -= 8;
	}
	if (st & PERF_SAMPLE_TID) {
		s->pid = ld32(p);
		s->tid = ld32(p + 4);
	}
}

/*
 * The attr of a record (evlist__event2evsel): *known false when an id
 * was found but matches no attr (then the first attr's layout is used for
 * a trailer).  NULL if there are no attrs.
 */
static struct attr_priv *record_attr(const struct prd_file *f,
				     const unsigned char *rec, uint32_t size,
				     bool sample, uint64_t *idp, bool *known)
{
	struct attr_priv *a0, *a;
	size_t n = (size - 8) / 8;
	uint64_t id;

	*known = true;
	*idp = 0;
	if (!f->nr_attrs)
		return NULL;
	a0 = f->attrs[0];
	if (f->nr_attrs == 1)
		return a0;
	if (!sample && !a0->pub.attr.sample_id_all)
		return a0;
	if (sample) {
		if (a0->id_pos < 0 || (size_t)a0->id_pos >= n) {
			*known = false;
			return a0;
		}
		id = ld64(rec + 8 + (size_t)a0->id_pos * 8);
	} else {
		if (a0->is_pos < 0 || (size_t)a0->is_pos > n) {
			*known = false;
			return a0;
		}
		id = ld64(rec + 8 + (n - (size_t)a0->is_pos) * 8);
	}
	*idp = id;
	if (!id)
		return a0;
	a = ht_find(f, id);
	if (!a) {
		*known = false;
		return a0;
	}
	return a;
}

/*
 * Fills f->sample for @rec: the decoded sample, or the sample_id_all
 * trailer of a kernel record.  Returns 1 if there is one, 0 if not, or
 * -EBADMSG (with *why) when the record does not hold its fields.
 */
static int describe(struct prd_file *f, const unsigned char *rec, uint32_t size,
		    bool *unknown_id, const char **why)
{
	uint32_t type = ld32(rec);
	struct prd_sample *s = &f->sample;
	struct attr_priv *a;
	uint64_t id, st;
	bool known;

	*unknown_id = false;
	if (!kernel_type(type))
		return 0;
	a = record_attr(f, rec, size, type == PERF_RECORD_SAMPLE, &id, &known);
	if (type == PERF_RECORD_SAMPLE) {
		if (!a || !known) {
			memset(s, 0, sizeof(*s));
			s->id = id;
			*unknown_id = true;
			return 1;
		}
		*why = decode_sample(&a->pub, rec, size, s);
		return *why ? -EBADMSG : 1;
	}
	if (!a || !a->pub.attr.sample_id_all)
		return 0;
	st = a->pub.attr.sample_type;
	if (trailer_words(st) > (size - 8) / 8 ||
	    (size - 8) / 8 * 8 - trailer_words(st) * 8 <
		    (type < 128 ? min_body[type] : 0)) {
		*why = "sample_id_all trailer";
		return -EBADMSG;
	}
	memset(s, 0, sizeof(*s));
	s->attr = known ? &a->pub : NULL;
	decode_trailer(st, rec, size, s);
	return 1;
}

PR_HIDDEN uint32_t prd_payload_size(const struct prd_file *f,
				    const struct prd_event *ev)
{
	uint32_t size = ev->hdr->size, type = ev->hdr->type;
	const struct prd_attr *a;
	unsigned int w;

	if (!ev->sample || type == PERF_RECORD_SAMPLE || !kernel_type(type) ||
	    !f->nr_attrs)
		return size;
	a = ev->sample->attr ? ev->sample->attr : &f->attrs[0]->pub;
	if (!a->attr.sample_id_all)
		return size;
	w = trailer_words(a->attr.sample_type);
	if (w > (size - 8) / 8)
		return size;
	return 8 + ((size - 8) / 8 - w) * 8;
}

/* ---- ordered queue ---- */

static void *chunk_alloc(struct prd_file *f, size_t size, struct chunk **out)
{
	struct chunk *c = f->cur_chunk;
	size_t need = (size + 7) & ~(size_t)7;
	void *p;

	if (!c || PRD_CHUNK_SIZE - c->used < need) {
		if (c && !c->live) {
			c->used = 0; /* nothing lives in it: reuse */
		} else {
			c = f->spare;
			if (c) {
				f->spare = c->next;
				f->nr_spare--;
			} else {
				c = malloc(sizeof(*c));
				if (!c)
					return NULL;
			}
			c->used = 0;
			c->live = 0;
			c->next = NULL;
			f->cur_chunk = c;
		}
	}
	p = c->data + c->used;
	c->used += need;
	c->live++;
	*out = c;
	return p;
}

static void chunk_release(struct prd_file *f, struct chunk *c)
{
	if (--c->live || c == f->cur_chunk)
		return;
	if (f->nr_spare < 4) {
		c->next = f->spare;
		f->spare = c;
		f->nr_spare++;
	} else {
		free(c);
	}
}

static int cmp_qev(const void *a, const void *b)
{
	const struct qev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sorts the queue by (time, arrival).  A round is a few runs already in
 * time order, one per ring the recorder drained, so merging the runs
 * costs O(n log runs) where qsort would cost O(n log n) comparisons
 * through a function pointer.  Entries sit in arrival order and a merge
 * takes the left run on equal times, so arrival order breaks ties.
 */
static void sort_queue(struct prd_file *f)
{
	struct qev *src = f->q, *dst = f->qtmp, *t;
	size_t n = f->qn, passes = 0;

	if (!dst) {
		qsort(f->q, f->qn, sizeof(*f->q), cmp_qev);
		return;
	}
	for (;;) {
		size_t i = 0, runs = 0, o = 0;

		while (i < n) {
			size_t a = i, mid, b, e;

			mid = a + 1;
			while (mid < n && src[mid - 1].time <= src[mid].time)
				mid++;
			e = mid;
			if (mid < n) {
				e = mid + 1;
				while (e < n && src[e - 1].time <= src[e].time)
					e++;
			}
			runs++;
			b = mid;
			while (a < mid && b < e)
				dst[o++] = src[b].time < src[a].time ?
						   src[b++] :
						   src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < e)
				dst[o++] = src[b++];
			i = e;
		}
		t = src;
		src = dst;
		dst = t;
		if (runs <= 1 || ++passes > 64) /* each pass halves the runs */
			break;
	}
	if (src != f->q)
		memcpy(f->q, src, n * sizeof(*src));
}

static int deliver(struct prd_file *f, struct proc *pc,
		   const unsigned char *rec, uint64_t off, bool has_sample)
{
	struct prd_event ev = {
		.hdr = (const struct perf_event_header *)(const void *)rec,
		.offset = off,
		.sample = has_sample ? &f->sample : NULL,
	};
	int ret = pc->fn(f, &ev, pc->ctx);

	return ret < 0 ? ret : 0;
}

/* Delivers the queued records with time <= @limit, in time order. */
static int flush_queue(struct prd_file *f, struct proc *pc, uint64_t limit)
{
	size_t i = 0;
	int ret = 0;

	if (!f->qn || !limit)
		return 0;
	if (!f->q_sorted) {
		sort_queue(f);
		f->q_sorted = true;
	}
	while (i < f->qn && f->q[i].time <= limit) {
		struct qev *e = &f->q[i];
		uint32_t size = ld16(e->rec + 6);
		const char *why;
		bool unk;
		int has;

		has = describe(f, e->rec, size, &unk, &why);
		ret = deliver(f, pc, e->rec, e->offset, has > 0);
		f->last_flush = e->time;
		f->qbytes -= size;
		chunk_release(f, e->chunk);
		i++;
		if (ret)
			break;
	}
	memmove(f->q, f->q + i, (f->qn - i) * sizeof(*f->q));
	f->qn -= i;
	return ret;
}

/* The queue is over its limit: deliver its older half (OE_FLUSH__HALF). */
static int flush_half(struct prd_file *f, struct proc *pc)
{
	uint64_t lo, hi;
	size_t before = f->qn;
	int ret;

	if (!f->warned_queue) {
		pr_warn("%s: a round holds more than %llu MiB of records: flushing the older half early (order across rings may suffer)",
			f->name, ull(f->qlimit >> 20));
		f->warned_queue = true;
	}
	f->st.nr_early_flushes++;
	sort_queue(f);
	f->q_sorted = true;
	lo = f->q[0].time;
	hi = f->q[f->qn - 1].time;
	ret = flush_queue(f, pc, lo + (hi - lo) / 2);
	if (!ret && f->qn == before)
		ret = flush_queue(f, pc, UINT64_MAX);
	return ret;
}

static int enqueue(struct prd_file *f, struct proc *pc,
		   const unsigned char *rec, uint32_t size, uint64_t off,
		   uint64_t time)
{
	struct chunk *c;
	unsigned char *copy;
	struct qev *e;

	if (f->qn == f->qcap) {
		size_t ncap = f->qcap ? f->qcap * 2 : 4096;
		struct qev *nq = realloc(f->q, ncap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		f->q = nq;
		nq = realloc(f->qtmp, ncap * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		f->qtmp = nq;
		f->qcap = ncap;
	}
	copy = chunk_alloc(f, size, &c);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, size);
	if (time < f->last_flush)
		f->st.nr_unordered++;
	if (time > f->max_ts)
		f->max_ts = time;
	e = &f->q[f->qn++];
	e->time = time;
	e->seq = f->seq++;
	e->offset = off;
	e->rec = copy;
	e->chunk = c;
	if (f->qn > 1 && cmp_qev(e - 1, e) > 0)
		f->q_sorted = false;
	f->qbytes += size;
	if (f->qbytes > f->qlimit || f->qn > f->qmax)
		return flush_half(f, pc);
	return 0;
}

static void queue_reset(struct prd_file *f)
{
	for (size_t i = 0; i < f->qn; i++)
		chunk_release(f, f->q[i].chunk);
	f->qn = 0;
	f->qbytes = 0;
	f->q_sorted = true;
	f->seq = f->next_flush = f->max_ts = f->last_flush = 0;
}

/* ---- records ---- */

static int apply_header_attr(struct prd_file *f, const unsigned char *rec,
			     uint32_t size, uint64_t off)
{
	uint32_t asz = ld32(rec + 8 + 4);
	const char *bad;
	int ret;

	if (!asz)
		asz = PRD_ATTR_VER0;
	if (asz > sizeof(struct perf_event_attr)) {
		pr_err("%s: stream offset %#llx: HEADER_ATTR with attr size %u: unsupported attr size (this reader knows up to %zu bytes)",
		       f->name, ull(off), asz, sizeof(struct perf_event_attr));
		return -EPROTO;
	}
	if (asz < PRD_ATTR_VER0 || asz > size - 8)
		return damage(f, off,
			      "HEADER_ATTR of %u bytes with attr size %u", size,
			      asz);
	bad = attr_fits(f, rec + 8);
	if (bad)
		return damage(f, off, "HEADER_ATTR: %s", bad);
	ret = add_attr(f, rec + 8, asz, rec + 8 + asz, (size - 8 - asz) / 8);
	if (ret == -E2BIG)
		return damage(f, off, "more than %u attrs", PRD_MAX_ATTRS);
	return ret;
}

static int apply_event_update(struct prd_file *f, const unsigned char *rec,
			      uint32_t size)
{
	uint64_t type = ld64(rec + 8), id = ld64(rec + 16);
	const unsigned char *name = rec + 24;
	struct attr_priv *a;
	char s[PRD_NAME_MAX];
	size_t n;

	if (type != 2 /* PERF_EVENT_UPDATE__NAME */ || size <= 24)
		return 0;
	a = ht_find(f, id);
	if (!a)
		return 0;
	n = strnlen((const char *)name, size - 24);
	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	memcpy(s, name, n);
	s[n] = '\0';
	return set_name(a, s, true);
}

static int apply_feature_record(struct prd_file *f, const unsigned char *rec,
				uint32_t size, uint64_t off)
{
	uint64_t feat = ld64(rec + 8);
	const unsigned char *p = rec + 16;
	size_t len = size - 16;

	if (size < 16)
		return damage(f, off, "FEATURE record of %u bytes", size);
	if (!feat || feat >= PRD_FEAT_LAST) {
		pr_debug("%s: offset %#llx: feature %llu unknown, skipped",
			 f->name, ull(off), ull(feat));
		return 0;
	}
	if (!check_feature(f, (int)feat, p, len)) {
		/* as in a file's feature section: ignored, as perf does */
		pr_warn("%s: stream offset %#llx: FEATURE %s (%llu bytes) is malformed: ignored, as perf ignores it",
			f->name, ull(off), feat_names[feat], ull(len));
		f->features_damaged = true;
		return 0;
	}
	return store_feature(f, (int)feat, p, len);
}

/* Extra checks for records whose fixed part announces variable parts. */
static const char *check_variable(uint32_t type, const unsigned char *rec,
				  uint32_t body)
{
	uint64_t n;

	switch (type) {
	case PERF_RECORD_NAMESPACES:
		n = ld64(rec + 16);
		if (n > (body - 16) / 16)
			return "nr_namespaces";
		break;
	case PERF_RECORD_TEXT_POKE:
		if (12u + ld16(rec + 16) + ld16(rec + 18) > body)
			return "old_len/new_len";
		break;
	case PRD_REC_ID_INDEX:
		n = ld64(rec + 8);
		if (n > (body - 8) / 32)
			return "nr";
		break;
	case PRD_REC_THREAD_MAP:
		n = ld64(rec + 8);
		if (n > (body - 8) / 24)
			return "nr";
		break;
	case PRD_REC_STAT_CONFIG:
		n = ld64(rec + 8);
		if (n > (body - 8) / 16)
			return "nr";
		break;
	default:
		break;
	}
	return NULL;
}

/*
 * One record: counts it, checks it, applies what it says about the file,
 * and delivers or queues it.  *payload: bytes that follow it outside
 * header.size (TRACING_DATA, AUXTRACE).
 */
static int handle(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		  uint32_t size, uint64_t off, uint64_t *payload);

/*
 * Handles the records inside one PERF_RECORD_COMPRESSED (perf record -z).
 * perf compresses its ring buffers as one zstd stream, so a record may
 * start in one COMPRESSED record and end in the next: the tail that is not
 * whole yet stays at the front of zbuf.  Each record is reported at the
 * compressed record's offset, as perf does.
 */
static int inflate(struct prd_file *f, struct proc *pc,
		   const unsigned char *src, size_t len, uint64_t off)
{
	ZSTD_inBuffer in = { src, len, 0 };
	size_t pos = 0;
	int ret = 0;

	if (!f->zstream) {
		f->zstream = ZSTD_createDStream();
		if (!f->zstream || ZSTD_isError(ZSTD_initDStream(f->zstream)))
			return -ENOMEM;
	}
	while (in.pos < in.size) {
		ZSTD_outBuffer out;
		size_t r;

		if (f->zcap - f->zkeep < PRD_ZSTD_STEP) {
			size_t ncap = f->zcap ? f->zcap * 2 : 2 * PRD_ZSTD_STEP;
			unsigned char *nb;

			if (ncap > PRD_ZSTD_MAX)
				return damage(
					f, off,
					"PERF_RECORD_COMPRESSED inflates to more than %u MiB",
					PRD_ZSTD_MAX >> 20);
			nb = realloc(f->zbuf, ncap);
			if (!nb)
				return -ENOMEM;
			f->zbuf = nb;
			f->zcap = ncap;
		}
		out = (ZSTD_outBuffer){ f->zbuf, f->zcap, f->zkeep };
		r = ZSTD_decompressStream(f->zstream, &out, &in);
		if (ZSTD_isError(r))
			return damage(f, off,
				      "PERF_RECORD_COMPRESSED: zstd says: %s",
				      ZSTD_getErrorName(r));
		f->zkeep = out.pos;
	}
	f->in_compressed = true;
	while (f->zkeep - pos >= 8) {
		const unsigned char *rec = f->zbuf + pos;
		uint32_t size = ld16(rec + 6);
		uint64_t payload;

		if (size < 8) {
			ret = damage(
				f, off,
				"PERF_RECORD_COMPRESSED holds a record of type %u with size %u",
				ld32(rec), size);
			break;
		}
		if (size > f->zkeep - pos)
			break;
		if ((uintptr_t)rec & 7) {
			memcpy(f->scratch, rec, size);
			rec = f->scratch;
		}
		ret = handle(f, pc, rec, size, off, &payload);
		if (!ret && payload)
			ret = damage(
				f, off,
				"PERF_RECORD_%s inside a compressed record announces %llu bytes after it",
				type_names[ld32(rec)], ull(payload));
		if (ret)
			break;
		pos += size;
	}
	f->in_compressed = false;
	memmove(f->zbuf, f->zbuf + pos, f->zkeep - pos);
	f->zkeep -= pos;
	return ret;
}

static int handle(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		  uint32_t size, uint64_t off, uint64_t *payload)
{
	uint32_t type = ld32(rec), body = size - 8;
	const char *why = NULL;
	bool unknown_id;
	int has, ret;

	f->st.nr_records++;
	f->st.data_bytes += size;
	*payload = 0;
	if (type >= 128 || !type_names[type]) {
		f->counts[0]++;
		f->st.nr_unknown_type++;
		if (f->warned_unknown++ < 5)
			pr_warn("%s: offset %#llx: record of unknown type %u (%u bytes) skipped",
				f->name, ull(off), type, size);
		return pc->fn ? deliver(f, pc, rec, off, false) : 0;
	}
	f->counts[type]++;
	if (body < min_body[type])
		return damage(
			f, off,
			"PERF_RECORD_%s of %u bytes is shorter than its fixed fields (%u bytes)",
			type_names[type], size, 8u + min_body[type]);
	why = check_variable(type, rec, body);
	if (why)
		return damage(f, off,
			      "PERF_RECORD_%s of %u bytes: its %s does not fit",
			      type_names[type], size, why);

	has = describe(f, rec, size, &unknown_id, &why);
	if (has < 0 && type == PERF_RECORD_SAMPLE) {
		/* One sample's fields do not add up: that sample is skipped
		 * and counted, the records around it are fine. */
		if (!f->st.nr_bad_samples++)
			f->st.bad_sample_offset = off;
		if (f->st.nr_bad_samples <= 5 && !f->quiet)
			pr_warn("%s: %s offset %#llx: PERF_RECORD_SAMPLE of %u bytes: its %s does not fit: skipped%s",
				f->name, f->pipe ? "stream" : "file", ull(off),
				size, why,
				f->st.nr_bad_samples == 5 ?
					" (further ones are only counted)" :
					"");
		return 0;
	}
	if (has < 0)
		return damage(f, off,
			      "PERF_RECORD_%s of %u bytes: its %s does not fit",
			      type_names[type], size, why);
	switch (type) {
	case PERF_RECORD_SAMPLE:
		if (unknown_id) {
			f->st.nr_unknown_id++;
			if (!f->warned_unknown_id) {
				pr_warn("%s: offset %#llx: sample with id %llu that no event has (counted, not decoded)",
					f->name, ull(off), ull(f->sample.id));
				f->warned_unknown_id = true;
			}
		} else {
			if (f->sample.attr->attr.sample_type & PERF_SAMPLE_READ)
				count_read_sample(f, &f->sample);
			else
				((struct prd_attr *)f->sample.attr)
					->nr_samples++;
			if ((f->sample.attr->attr.sample_type &
			     ~PRD_SAMPLE_KNOWN) &&
			    !f->warned_sample_bits) {
				pr_warn("%s: sample_type %#llx has bits this reader does not know; fields after the known ones are not decoded",
					f->name,
					ull(f->sample.attr->attr.sample_type));
				f->warned_sample_bits = true;
			}
		}
		break;
	case PERF_RECORD_LOST:
		f->st.nr_lost_records++;
		f->st.nr_lost += ld64(rec + 16);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		f->st.nr_lost_samples_records++;
		f->st.nr_lost_samples += ld64(rec + 8);
		if (has > 0 && f->sample.attr)
			priv(f->sample.attr)->lost_samples += ld64(rec + 8);
		else if (has <= 0 && f->nr_attrs)
			f->attrs[0]->lost_samples += ld64(rec + 8);
		break;
	case PRD_REC_HEADER_ATTR:
		if (off >= f->attr_applied_end) {
			ret = apply_header_attr(f, rec, size, off);
			if (ret)
				return ret;
			f->attr_applied_end = off + size;
		}
		break;
	case PRD_REC_HEADER_TRACING_DATA:
		*payload = ld32(rec + 8);
		break;
	case PRD_REC_AUXTRACE:
		*payload = ld64(rec + 8);
		break;
	case PRD_REC_EVENT_UPDATE:
		ret = apply_event_update(f, rec, size);
		if (ret)
			return ret;
		break;
	case PRD_REC_HEADER_FEATURE:
		ret = apply_feature_record(f, rec, size, off);
		if (ret)
			return ret;
		break;
	case PRD_REC_COMPRESSED:
		f->st.nr_compressed++;
		if (f->in_compressed)
			return damage(
				f, off,
				"PERF_RECORD_COMPRESSED inside a compressed record");
		ret = pc->fn ? deliver(f, pc, rec, off, false) : 0;
		return ret ? ret : inflate(f, pc, rec + 8, body, off);
	default:
		break;
	}

	if (!pc->fn)
		return 0;
	if (pc->ordered && type == PRD_REC_FINISHED_ROUND) {
		ret = flush_queue(f, pc, f->next_flush);
		f->next_flush = f->max_ts;
		if (ret)
			return ret;
	}
	if (pc->ordered && has > 0 && f->sample.time &&
	    f->sample.time != UINT64_MAX)
		return enqueue(f, pc, rec, size, off, f->sample.time);
	return deliver(f, pc, rec, off, has > 0);
}

/* Reads a TRACING_DATA payload and names the tracepoints from it.  The
 * buffer grows with what arrives, not with what the record claims. */
static int read_tracing_payload(struct prd_file *f, uint64_t n, uint64_t off)
{
	bool keep = n <= PRD_TDATA_MAX;
	unsigned char *p = NULL, *np;
	size_t have = 0, cap = 0, step;
	int ret;

	if (!keep) {
		pr_warn("%s: offset %#llx: tracing data of %llu bytes not kept (over %u MiB)",
			f->name, ull(off), ull(n), PRD_TDATA_MAX >> 20);
		return pass_bytes(f, n, NULL, 0);
	}
	while (have < n) {
		step = n - have < (1u << 20) ? (size_t)(n - have) : (1u << 20);
		if (have + step > cap) {
			cap = cap ? cap * 2 : (1u << 20);
			if (cap > n)
				cap = (size_t)n;
			np = realloc(p, cap);
			if (!np) {
				free(p);
				return -ENOMEM;
			}
			p = np;
		}
		ret = pass_bytes(f, step, p + have, step);
		if (ret) {
			free(p);
			return ret;
		}
		have += step;
	}
	free(f->tdata);
	f->tdata = p;
	f->tdata_len = have;
	if (p && !parse_tracing_data(f, p, have))
		pr_warn("%s: offset %#llx: tracing data malformed: tracepoint names unknown",
			f->name, ull(off));
	rename_derived(f);
	return 0;
}

/* The record loop over the data section or the stream. */
static int run(struct prd_file *f, struct proc *pc)
{
	for (;;) {
		const unsigned char *rec;
		uint64_t off, payload;
		uint32_t size, type;
		int ret;

		ret = fill(f, 8);
		if (ret < 0)
			return io_error(f, f->off, ret);
		if (ret > 0) {
			if (f->end == f->pos)
				break;
			return damage(
				f, f->off,
				"the data ends %zu bytes into a record header",
				f->end - f->pos);
		}
		rec = f->buf + f->pos;
		off = f->off;
		type = ld32(rec);
		size = ld16(rec + 6);
		if (size < 8)
			return damage(
				f, off,
				"record of type %u with size %u (less than its 8-byte header)",
				type, size);
		ret = fill(f, size);
		if (ret < 0)
			return io_error(f, off, ret);
		if (ret > 0)
			return damage(
				f, off,
				"record of type %u and %u bytes runs past the end of the %s (%zu bytes left)",
				type, size, f->stream ? "input" : "data",
				f->end - f->pos);
		rec = f->buf + f->pos;
		if ((uintptr_t)rec & 7) {
			memcpy(f->scratch, rec, size);
			rec = f->scratch;
		}
		ret = handle(f, pc, rec, size, off, &payload);
		if (ret)
			return ret;
		consume(f, size);
		if (!payload)
			continue;
		if (!f->stream && payload > bytes_left(f))
			return damage(
				f, off,
				"PERF_RECORD_%s announces %llu bytes after it, past the end of the data (%llu bytes left)",
				type_names[type], ull(payload),
				ull(bytes_left(f)));
		if (type == PRD_REC_HEADER_TRACING_DATA)
			ret = read_tracing_payload(f, payload, off);
		else
			ret = pass_bytes(f, payload, NULL, 0);
		f->st.data_bytes += payload;
		if (ret < 0)
			return io_error(f, off, ret);
		if (ret > 0)
			return damage(
				f, off,
				"the input ends inside the %llu bytes that follow PERF_RECORD_%s",
				ull(payload), type_names[type]);
	}
	if (f->zkeep)
		return damage(
			f, f->off,
			"the compressed records end %zu bytes into a record",
			f->zkeep);
	if (!f->pipe && f->off < f->data_end)
		return damage(
			f, f->off,
			"the file ends here but its data section ends at %#llx (truncated file)",
			ull(f->data_end));
	return 0;
}

static void reset_processing(struct prd_file *f)
{
	memset(f->counts, 0, sizeof(f->counts));
	memset(&f->st, 0, sizeof(f->st));
	for (uint32_t i = 0; i < f->nr_attrs; i++) {
		f->attrs[i]->pub.nr_samples = 0;
		f->attrs[i]->lost_samples = 0;
	}
	if (f->ht_cap)
		memset(f->ht_period, 0, f->ht_cap * sizeof(*f->ht_period));
	queue_reset(f);
	f->zkeep = 0;
	if (f->zstream)
		ZSTD_DCtx_reset(f->zstream, ZSTD_reset_session_only);
	f->pos = f->end = (size_t)(f->start_off & 7);
	f->eof = false;
	f->off = f->start_off;
	if (!f->stream)
		f->rd_off = f->pipe ? f->start_off + PRD_PIPE_HEADER_SIZE :
				      f->start_off;
}

PR_HIDDEN int prd_process(struct prd_file *f, bool ordered, prd_event_fn fn,
			  void *ctx)
{
	struct proc pc = { fn, ctx, ordered && fn };
	int ret, fret;

	if (!f)
		return -EINVAL;
	if (f->processed) {
		if (f->stream) {
			pr_err("%s: a stream can be processed only once",
			       f->name);
			return -EINVAL;
		}
		reset_processing(f);
	}
	f->processed = true;
	ret = run(f, &pc);
	if (pc.ordered && (ret == 0 || ret == -EBADMSG)) {
		fret = flush_queue(f, &pc, UINT64_MAX);
		if (!ret)
			ret = fret;
	}
	/* perf goes on without a feature section it cannot read (the
	 * warnings named it): so do we, and the output is complete. */
	if (f->features_damaged)
		f->st.features_damaged = true;
	if (f->st.nr_bad_samples > 5 && !f->quiet)
		pr_warn("%s: %llu samples whose fields do not fit their records were skipped (the first at offset %#llx)",
			f->name, ull(f->st.nr_bad_samples),
			ull(f->st.bad_sample_offset));
	return ret;
}

/* ---- open ---- */

static int read_attrs(struct prd_file *f, uint64_t attr_size,
		      uint64_t attrs_off, uint64_t attrs_size)
{
	uint64_t nr = attrs_size / attr_size, cur = attrs_off;
	unsigned char buf[sizeof(struct perf_event_attr) + 16];

	if (nr > PRD_MAX_ATTRS)
		return damage(f, 24, "%llu attrs (more than %u)", ull(nr),
			      PRD_MAX_ATTRS);
	if (!nr)
		return damage(f, 24, "the attr section holds no event");
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ids_off, ids_size;
		unsigned char *ids = NULL;
		uint32_t asz;
		int ret;

		if (cur > f->file_size || f->file_size - cur < PRD_ATTR_VER0)
			return damage(f, cur,
				      "attr %llu lies past the end of the file",
				      ull(i));
		ret = pread_full(f, buf, PRD_ATTR_VER0, cur);
		if (ret)
			return ret;
		asz = ld32(buf + 4);
		if (!asz)
			asz = PRD_ATTR_VER0;
		if (asz > sizeof(struct perf_event_attr)) {
			pr_err("%s: file offset %#llx: attr %llu has size %u: unsupported attr size (a newer perf ABI; this reader knows up to %zu bytes)",
			       f->name, ull(cur), ull(i), asz,
			       sizeof(struct perf_event_attr));
			return -EPROTO;
		}
		if (asz < PRD_ATTR_VER0)
			return damage(f, cur,
				      "attr %llu has size %u (less than %u)",
				      ull(i), asz, PRD_ATTR_VER0);
		if (f->file_size - cur < asz + 16u)
			return damage(f, cur,
				      "attr %llu runs past the end of the file",
				      ull(i));
		ret = pread_full(f, buf, asz + 16u, cur);
		if (ret)
			return ret;
		ids_off = ld64(buf + asz);
		ids_size = ld64(buf + asz + 8);
		if (ids_off > f->file_size || ids_size > f->file_size - ids_off)
			return damage(
				f, cur + asz,
				"the ids of attr %llu [%#llx, +%llu bytes) lie past the end of the file (%llu bytes)",
				ull(i), ull(ids_off), ull(ids_size),
				ull(f->file_size));
		if (ids_size / 8 > PRD_MAX_IDS)
			return damage(f, cur + asz, "attr %llu claims %llu ids",
				      ull(i), ull(ids_size / 8));
		if (ids_size / 8) {
			ids = malloc(ids_size / 8 * 8);
			if (!ids)
				return -ENOMEM;
			ret = pread_full(f, ids, ids_size / 8 * 8, ids_off);
			if (!ret)
				ret = add_attr(f, buf, asz, ids,
					       (uint32_t)(ids_size / 8));
		} else {
			ret = add_attr(f, buf, asz, NULL, 0);
		}
		free(ids);
		if (ret)
			return ret;
		cur += asz + 16u;
	}
	return 0;
}

/* The feature table at the end of the data and the payloads it points
 * to.  Damage here is noted (f->features_damaged) but does not stop the open. */
static int read_features(struct prd_file *f)
{
	unsigned int nsec = 0, k = 0;
	uint64_t tbl = f->data_end;
	unsigned char *t;
	int ret = 0;

	for (int i = 0; i < 4; i++)
		nsec += popcount64(f->feat_bits[i]);
	if (!nsec)
		return 0;
	if (tbl > f->file_size || (uint64_t)nsec * 16 > f->file_size - tbl) {
		pr_warn("%s: file offset %#llx: the table of %u feature sections lies past the end of the file (%llu bytes): truncated? The features are ignored, as perf ignores them",
			f->name, ull(tbl), nsec, ull(f->file_size));
		f->features_damaged = true;
		return 0;
	}
	t = malloc((size_t)nsec * 16);
	if (!t)
		return -ENOMEM;
	ret = pread_full(f, t, (size_t)nsec * 16, tbl);
	if (ret) {
		free(t);
		return ret == -EBADMSG ? 0 : ret;
	}
	for (int bit = 0; bit < PRD_FEAT_BITS && !ret; bit++) {
		uint64_t off, size;
		unsigned char *p;

		if (!(f->feat_bits[bit / 64] & (1ull << (bit % 64))))
			continue;
		off = ld64(t + 16 * k);
		size = ld64(t + 16 * k + 8);
		k++;
		if (!bit || bit >= PRD_FEAT_LAST) {
			pr_debug("%s: feature bit %d unknown, skipped", f->name,
				 bit);
			continue;
		}
		if (off > f->file_size || size > f->file_size - off) {
			pr_warn("%s: file offset %#llx: feature %s [%#llx, +%llu bytes) lies past the end of the file (%llu bytes): ignored, as perf ignores it",
				f->name, ull(tbl + 16 * (k - 1)),
				feat_names[bit], ull(off), ull(size),
				ull(f->file_size));
			f->features_damaged = true;
			continue;
		}
		if (size > PRD_FEAT_MAX_LEN ||
		    f->feat_total + size > PRD_FEAT_TOTAL_MAX) {
			pr_warn("%s: feature %s of %llu bytes not loaded (too big)",
				f->name, feat_names[bit], ull(size));
			continue;
		}
		p = malloc(size ? (size_t)size : 1);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ret = pread_full(f, p, (size_t)size, off);
		if (ret) {
			free(p);
			break;
		}
		if (!check_feature(f, bit, p, (size_t)size)) {
			pr_warn("%s: file offset %#llx: feature %s (%llu bytes) is malformed: ignored, as perf ignores it",
				f->name, ull(off), feat_names[bit], ull(size));
			f->features_damaged = true;
			free(p);
			continue;
		}
		f->feat[bit].p = p;
		f->feat[bit].len = (size_t)size;
		f->feat[bit].have = true;
		f->feat_total += (size_t)size;
	}
	free(t);
	return ret;
}

/*
 * Seekable input: a read window for @bytes of records, between the
 * smallest one (any record fits) and the largest; a small file keeps the
 * small one.  Only before any record is buffered.
 */
static int window_for(struct prd_file *f, uint64_t bytes)
{
	size_t want = bytes < PRD_BUF_MIN  ? PRD_BUF_MIN :
		      bytes > PRD_BUF_SIZE ? PRD_BUF_SIZE :
					     (size_t)bytes;
	unsigned char *p;

	if (f->stream || want + 8 <= f->cap)
		return 0;
	p = malloc(want + 8);
	if (!p)
		return -ENOMEM;
	memcpy(p, f->buf, f->end);
	free(f->buf);
	f->buf = p;
	f->cap = want + 8;
	return 0;
}

static int open_file_format(struct prd_file *f, uint64_t hdr_size)
{
	unsigned char h[PRD_FILE_HEADER_SIZE];
	uint64_t attr_size, attrs_off, attrs_size;
	const char *bad;
	int ret;

	if (f->stream) {
		pr_err("%s: a perf.data in file format cannot be read from a pipe (it needs seeking); record with -o - for the pipe format",
		       f->name);
		return -ESPIPE;
	}
	if (hdr_size != PRD_FILE_HEADER_SIZE && hdr_size != PRD_FILE_HEADER_V0)
		return damage(f, 8, "header size %llu (expected %u)",
			      ull(hdr_size), PRD_FILE_HEADER_SIZE);
	if (f->file_size < hdr_size)
		return damage(
			f, 0,
			"the file (%llu bytes) is shorter than its header",
			ull(f->file_size));
	ret = pread_full(f, h, (size_t)hdr_size, 0);
	if (ret)
		return ret;
	attr_size = ld64(h + 16);
	attrs_off = ld64(h + 24);
	attrs_size = ld64(h + 32);
	f->data_offset = ld64(h + 40);
	f->data_size = ld64(h + 48);
	if (hdr_size == PRD_FILE_HEADER_SIZE)
		memcpy(f->feat_bits, h + 72, sizeof(f->feat_bits));
	if (!attr_size)
		return damage(
			f, 16,
			"attr_size is 0 (was perf record terminated properly?)");
	if (attrs_off > f->file_size || attrs_size > f->file_size - attrs_off)
		return damage(
			f, 24,
			"the attr section [%#llx, +%llu bytes) lies past the end of the file (%llu bytes)",
			ull(attrs_off), ull(attrs_size), ull(f->file_size));
	if (f->data_offset > f->file_size)
		return damage(
			f, 40,
			"the data section starts at %#llx, past the end of the file (%llu bytes)",
			ull(f->data_offset), ull(f->file_size));
	if (f->data_size > UINT64_MAX - f->data_offset)
		return damage(f, 48, "data size %llu overflows",
			      ull(f->data_size));
	f->data_end = f->data_offset + f->data_size;
	ret = read_attrs(f, attr_size, attrs_off, attrs_size);
	if (ret)
		return ret;
	bad = attrs_consistent(f);
	if (bad) {
		pr_err("%s: %s; perf refuses such a file too", f->name, bad);
		return -EPROTO;
	}
	ret = read_features(f);
	if (ret)
		return ret;
	if (!f->data_size)
		pr_warn("%s: the data size is 0 (was perf record terminated properly?)",
			f->name);
	ret = window_for(f, f->data_size);
	if (ret)
		return ret;
	f->start_off = f->data_offset;
	f->off = f->rd_off = f->data_offset;
	f->limit = f->data_end < f->file_size ? f->data_end : f->file_size;
	f->pos = f->end = (size_t)(f->data_offset & 7);
	f->eof = false;
	return 0;
}

/* Pipe format: the leading HEADER_ATTR records are applied now (peeked,
 * not consumed), so the attrs are known after open as in file mode. */
static int open_pipe_format(struct prd_file *f)
{
	size_t at = 0;
	int ret;

	ret = window_for(f, f->file_size);
	if (ret)
		return ret;
	consume(f, PRD_PIPE_HEADER_SIZE);
	f->start_off = 0;
	f->off = 0;
	f->data_end = UINT64_MAX;
	for (;;) {
		const unsigned char *rec;
		uint32_t size, asz;

		if (fill(f, at + 8))
			break;
		rec = f->buf + f->pos + at;
		size = ld16(rec + 6);
		if (ld32(rec) != PRD_REC_HEADER_ATTR ||
		    size < 8 + PRD_ATTR_VER0 || at + size > f->cap / 2 ||
		    fill(f, at + size))
			break;
		rec = f->buf + f->pos + at;
		asz = ld32(rec + 12);
		if (asz > sizeof(struct perf_event_attr)) {
			pr_err("%s: stream offset %#llx: HEADER_ATTR with attr size %u: unsupported attr size (this reader knows up to %zu bytes)",
			       f->name, ull(at), asz,
			       sizeof(struct perf_event_attr));
			return -EPROTO;
		}
		if ((uintptr_t)rec & 7) {
			memcpy(f->scratch, rec, size);
			rec = f->scratch;
		}
		f->quiet = true;
		ret = apply_header_attr(f, rec, size, at);
		f->quiet = false;
		if (ret)
			break;
		at += size;
		f->attr_applied_end = at;
	}
	memset(&f->st, 0, sizeof(f->st));
	return 0;
}

static void free_file(struct prd_file *f)
{
	if (!f)
		return;
	queue_reset(f);
	free(f->cur_chunk);
	while (f->spare) {
		struct chunk *c = f->spare;

		f->spare = c->next;
		free(c);
	}
	free(f->q);
	free(f->qtmp);
	free(f->zbuf);
	ZSTD_freeDStream(f->zstream);
	for (uint32_t i = 0; i < f->nr_attrs; i++) {
		free(f->attrs[i]->pub.name);
		free(f->attrs[i]->pub.ids);
		free(f->attrs[i]);
	}
	free(f->attrs);
	free(f->ht_id);
	free(f->ht_val);
	free(f->ht_period);
	for (int i = 0; i < PRD_FEAT_BITS; i++)
		free(f->feat[i].p);
	free(f->tdata);
	clear_tp(f);
	free(f->buf);
	free(f->scratch);
	if (f->own_fd && f->fd >= 0)
		close(f->fd);
	free(f->name);
	free(f);
}

PR_HIDDEN int prd_open_fd(int fd, const char *name, bool stream,
			  struct prd_file **out)
{
	struct prd_file *f;
	struct stat st;
	uint64_t magic, hsize;
	int ret;

	if (!out || fd < 0)
		return -EINVAL;
	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->name = strdup(name ? name : "perf.data");
	f->scratch = aligned_alloc(8, PRD_MAX_RECORD + 1);
	f->qlimit = PRD_QUEUE_DEFAULT;
	f->qmax = PRD_QUEUE_DEFAULT / 64;
	f->q_sorted = true;
	if (!f->name || !f->scratch) {
		free_file(f);
		return -ENOMEM;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		pr_err("%s: %s", f->name, strerror(-ret));
		free_file(f);
		return ret;
	}
	f->stream = stream || !S_ISREG(st.st_mode);
	/* A file's window grows to what it holds (window_for()). */
	f->cap = (f->stream ? PRD_BUF_SIZE : PRD_BUF_MIN) + 8;
	if (!f->stream) {
		f->file_size = (uint64_t)st.st_size;
		f->limit = f->file_size;
	}
	f->buf = malloc(f->cap);
	if (!f->buf) {
		free_file(f);
		return -ENOMEM;
	}

	ret = fill(f, 16);
	if (ret) {
		if (ret > 0) {
			pr_err("%s: %s (%zu bytes): not a perf.data file",
			       f->name,
			       f->end == f->pos ? "empty input" : "too short",
			       f->end - f->pos);
			ret = -EBADMSG;
		} else {
			ret = io_error(f, 0, ret);
		}
		free_file(f);
		return ret;
	}
	magic = ld64(f->buf + f->pos);
	hsize = ld64(f->buf + f->pos + 8);
	if (magic != PRD_MAGIC) {
		if (magic == PRD_MAGIC_SWAPPED) {
			pr_err("%s: a perf.data of the other byte order (big endian): not supported",
			       f->name);
			ret = -EPROTO;
		} else if (magic == PRD_MAGIC_V1) {
			pr_err("%s: a version 1 perf.data (\"PERFFILE\"): not supported, only version 2 (\"PERFILE2\")",
			       f->name);
			ret = -EPROTO;
		} else if (!memcmp(f->buf + f->pos, "PERFILE", 7)) {
			pr_err("%s: perf.data version '%c' (\"PERFILE%c\"): unknown, only version 2 (\"PERFILE2\")",
			       f->name, f->buf[f->pos + 7], f->buf[f->pos + 7]);
			ret = -EPROTO;
		} else {
			pr_err("%s: not a perf.data file (bad magic %#llx)",
			       f->name, ull(magic));
			ret = -EBADMSG;
		}
		free_file(f);
		return ret;
	}
	if (hsize == PRD_PIPE_HEADER_SIZE) {
		f->pipe = true;
		ret = open_pipe_format(f);
	} else {
		ret = open_file_format(f, hsize);
	}
	if (ret) {
		free_file(f);
		return ret;
	}
	memset(&f->st, 0, sizeof(f->st));
	*out = f;
	return 0;
}

PR_HIDDEN int prd_open(const char *path, struct prd_file **out)
{
	struct prd_file *f;
	int fd, ret;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	if (!strcmp(path, "-"))
		return prd_open_fd(STDIN_FILENO, "stdin", false, out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno; /* the caller says which file */
	ret = prd_open_fd(fd, path, false, &f);
	if (ret) {
		close(fd);
		return ret;
	}
	f->own_fd = true;
	*out = f;
	return 0;
}

PR_HIDDEN void prd_close(struct prd_file *f)
{
	free_file(f);
}

/* ---- accessors ---- */

PR_HIDDEN bool prd_is_pipe(const struct prd_file *f)
{
	return f && f->pipe;
}

PR_HIDDEN uint32_t prd_nr_attrs(const struct prd_file *f)
{
	return f ? f->nr_attrs : 0;
}

PR_HIDDEN const struct prd_attr *prd_attr(const struct prd_file *f, uint32_t i)
{
	return f && i < f->nr_attrs ? &f->attrs[i]->pub : NULL;
}

PR_HIDDEN const struct prd_attr *prd_attr_by_id(const struct prd_file *f,
						uint64_t id)
{
	struct attr_priv *a;

	if (!f || !f->nr_attrs)
		return NULL;
	if (f->nr_attrs == 1)
		return &f->attrs[0]->pub;
	a = ht_find(f, id);
	return a ? &a->pub : NULL;
}

PR_HIDDEN uint64_t prd_attr_lost_samples(const struct prd_file *f, uint32_t i)
{
	return f && i < f->nr_attrs ? f->attrs[i]->lost_samples : 0;
}

PR_HIDDEN const void *prd_feature(const struct prd_file *f, int feat,
				  size_t *len)
{
	if (!f || feat < 0 || feat >= PRD_FEAT_BITS)
		return NULL;
	/* Pipe mode carries tracing data as a record, not a feature. */
	if (feat == PRD_FEAT_TRACING_DATA && !f->feat[feat].have && f->tdata) {
		if (len)
			*len = f->tdata_len;
		return f->tdata;
	}
	if (!f->feat[feat].have)
		return NULL;
	if (len)
		*len = f->feat[feat].len;
	return f->feat[feat].p;
}

PR_HIDDEN const char *prd_feature_string(const struct prd_file *f, int feat)
{
	size_t len;
	const unsigned char *p = prd_feature(f, feat, &len);
	struct cur c;

	if (!p)
		return NULL;
	c.p = p;
	c.e = p + len;
	return get_string(&c);
}

PR_HIDDEN bool prd_has_feature(const struct prd_file *f, int feat)
{
	if (!f || feat < 0 || feat >= PRD_FEAT_BITS)
		return false;
	if (f->feat[feat].have)
		return true;
	return !f->pipe && (f->feat_bits[feat / 64] >> (feat % 64)) & 1;
}

PR_HIDDEN const uint64_t *prd_type_counts(const struct prd_file *f)
{
	return f ? f->counts : NULL;
}

PR_HIDDEN const struct prd_stats *prd_stats(const struct prd_file *f)
{
	return f ? &f->st : NULL;
}

PR_HIDDEN uint64_t prd_data_size(const struct prd_file *f)
{
	if (!f)
		return 0;
	return f->pipe ? f->off : f->data_size;
}

PR_HIDDEN int prd_fd(const struct prd_file *f)
{
	return f ? f->fd : -1;
}

PR_HIDDEN uint64_t prd_data_offset(const struct prd_file *f)
{
	return f && !f->pipe ? f->data_offset : 0;
}

PR_HIDDEN const char *prd_tracepoint_name(const struct prd_file *f, uint64_t id)
{
	return f ? tp_lookup(f, id) : NULL;
}

PR_HIDDEN void prd_set_queue_limit(struct prd_file *f, size_t bytes)
{
	if (!f)
		return;
	if (bytes < PRD_MAX_RECORD)
		bytes = PRD_MAX_RECORD;
	f->qlimit = bytes;
	f->qmax = bytes / 64 > 1024 ? bytes / 64 : 1024;
}

PR_HIDDEN int prd_decode_sample(const struct prd_attr *a, const void *rec,
				uint32_t size, struct prd_sample *s)
{
	if (size < sizeof(struct perf_event_header))
		return -EBADMSG;
	return decode_sample(a, rec, size, s) ? -EBADMSG : 0;
}
