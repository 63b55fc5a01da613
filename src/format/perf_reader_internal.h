/* SPDX-License-Identifier: MIT */
/*
 * What the files of the perf.data reader share (perf_reader.h is its
 * interface): the reader's state, its limits, the bounded cursor over
 * input bytes.
 *
 *   perf_reader.c         the record loop: input, checks, what records say
 *                         about the file, compressed records, prd_process()
 *   perf_reader_header.c  opening: the header, attrs and their ids, event
 *                         names, feature sections, the accessors
 *   perf_reader_sample.c  a record's attr (by its id), samples and
 *                         sample_id_all trailers decoded, per-event counts
 *   perf_reader_order.c   ordered delivery (perf's ordered-events.c)
 */
#ifndef PERFRING_FORMAT_PERF_READER_INTERNAL_H
#define PERFRING_FORMAT_PERF_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>
#include "../common/load.h"
#include "../common/log.h"
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
	bool show_ckpt; /* deliver the checkpoint COMMs (prd_show_checkpoints) */
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
	union prd_record view; /* of the record being delivered */

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

static inline unsigned int popcount64(uint64_t x)
{
	return (unsigned int)__builtin_popcountll(x);
}

static inline unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* A bounded cursor over input bytes. */
struct cur {
	const unsigned char *p, *e;
};

static inline size_t left(const struct cur *c)
{
	return (size_t)(c->e - c->p);
}

static inline bool take(struct cur *c, uint64_t n, const unsigned char **out)
{
	if (n > left(c))
		return false;
	if (out)
		*out = c->p;
	c->p += n;
	return true;
}

static inline bool get32(struct cur *c, uint32_t *v)
{
	if (left(c) < 4)
		return false;
	*v = ld32(c->p);
	c->p += 4;
	return true;
}

static inline bool get64(struct cur *c, uint64_t *v)
{
	if (left(c) < 8)
		return false;
	*v = ld64(c->p);
	c->p += 8;
	return true;
}

/* perf's do_write_string() layout: u32 len, then len bytes holding a NUL. */
static inline const char *get_string(struct cur *c)
{
	const unsigned char *p;
	uint32_t len;

	if (!get32(c, &len) || !len || !take(c, len, &p) || !memchr(p, 0, len))
		return NULL;
	return (const char *)p;
}

static inline struct attr_priv *priv(const struct prd_attr *a)
{
	return (struct attr_priv *)a; /* pub is the first member */
}

PR_PRINTF(3, 4)
int prd_damage(struct prd_file *f, uint64_t off, const char *fmt, ...);

int prd_io_error(struct prd_file *f, uint64_t off, int err);

bool prd_kernel_type(uint32_t type);

extern const char *const prd_feat_names[PRD_FEAT_LAST];

int prd_ids_insert(struct prd_file *f, uint64_t id, uint32_t idx);

struct attr_priv *prd_ids_find(const struct prd_file *f, uint64_t id);

/*
 * Samples with PERF_SAMPLE_READ count as perf report counts them
 * (evlist__deliver_sample): once per read value, for the event of the
 * value's id (group members included), when its value moved.
 */
void prd_count_read_sample(struct prd_file *f, const struct prd_sample *s);

int prd_set_name(struct attr_priv *ap, const char *name, bool expl);

void prd_rename_derived(struct prd_file *f);

/* Whether one more attr (its first 64 bytes at @attr) keeps the file
 * readable (see attrs_consistent()); NULL or why not. */
const char *prd_attr_fits(const struct prd_file *f, const unsigned char *attr);

/* Adds an attr of @asz bytes (64..sizeof) with @nr_ids ids at @ids. */
int prd_add_attr(struct prd_file *f, const unsigned char *attr, size_t asz,
		 const unsigned char *ids, uint32_t nr_ids);

bool prd_parse_tracing_data(struct prd_file *f, const unsigned char *p,
			    size_t len);

/* Checks (and applies) a feature's payload; false if it is malformed. */
bool prd_check_feature(struct prd_file *f, int feat, const unsigned char *p,
		       size_t len);

int prd_store_feature(struct prd_file *f, int feat, const unsigned char *p,
		      size_t len);

int prd_pread_full(struct prd_file *f, void *dst, size_t len, uint64_t off);

/*
 * Makes @need bytes available at buf + pos: 0, 1 if the input ends first,
 * or -errno.  The window moves to the front (keeping the offset's
 * alignment mod 8) when @need does not fit behind it.
 */
int prd_fill(struct prd_file *f, size_t need);

void prd_consume(struct prd_file *f, size_t n);

/*
 * Fills f->sample for @rec: the decoded sample, or the sample_id_all
 * trailer of a kernel record.  Returns 1 if there is one, 0 if not, or
 * -EBADMSG (with *why) when the record does not hold its fields.
 */
int prd_describe(struct prd_file *f, const unsigned char *rec, uint32_t size,
		 bool *unknown_id, const char **why);

/* The bytes of a record's own fields: without the sample_id_all trailer
 * that @s (NULL: none) was read from. */
uint32_t prd_own_size(const struct prd_file *f, const unsigned char *rec,
		      uint32_t size, const struct prd_sample *s);

/* Hands @rec to the callback with its view (decoded here: a queued
 * record's view is decoded when it leaves the queue). */
int prd_deliver(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		uint64_t off, bool has_sample);

/* Delivers the queued records with time <= @limit, in time order. */
int prd_queue_flush(struct prd_file *f, struct proc *pc, uint64_t limit);

int prd_queue_add(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		  uint32_t size, uint64_t off, uint64_t time);

void prd_queue_reset(struct prd_file *f);

int prd_apply_header_attr(struct prd_file *f, const unsigned char *rec,
			  uint32_t size, uint64_t off);

#endif
