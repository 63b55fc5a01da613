/* SPDX-License-Identifier: MIT */
/*
 * What the files of the perf.data writer share (perf_data.h is its
 * interface): the writer's state, its buffers and the layout constants.
 *
 *   perf_data.c             the writer: opening, attrs, records, close
 *   perf_data_header.c      the file header, the attr section, the feature
 *                           sections (built from /proc, the attrs, the
 *                           tracing data), a file's or a stream's start
 *   perf_data_checkpoint.c  the rounds: carriers of changed descriptions
 *                           and the checkpoint that makes the file
 *                           readable after each
 */
#ifndef PERFRING_FORMAT_PERF_DATA_INTERNAL_H
#define PERFRING_FORMAT_PERF_DATA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>
#include "perf_data.h"
#include "perf_reader.h"

#define PD_MAGIC 0x32454c4946524550ull /* "PERFILE2" */

#define PD_FILE_HEADER_SIZE 104

#define PD_PIPE_HEADER_SIZE 16

#define PD_ATTR_SIZE 128 /* PERF_ATTR_SIZE_VER7, what perf 6.1 reads */

#define PD_FILE_ATTR_SIZE (PD_ATTR_SIZE + 16)

#define PD_NAME_ALIGN 64

#define PD_BUF_SIZE (256u << 10)

#define PD_MAX_RECORD 0xffffu

#define PD_FEAT_MAX 64 /* feature ids we may write are below this */

#define PD_RECORD_EVENT_UPDATE 78

#define PD_EVENT_UPDATE_NAME 2

#define PD_RECORD_COMM 3

/* perf's id trailer on a non-sample record (sample_id_all): at most TID,
 * TIME, ID, STREAM_ID, CPU, IDENTIFIER */
#define PD_TRAILER_MAX 48

/* pid and tid of the checkpoint records' task (PRD_CKPT_TID) */
#define PD_CKPT_TASK \
	((uint64_t)(uint32_t)PRD_CKPT_TID << 32 | (uint32_t)PRD_CKPT_TID)

/* A carrier: a PERF_RECORD_COMM of the checkpoint task named by the tag:
 * {header, pid, tid, u64 tag, u64 0 (the name's end), section, zeros to 8,
 * id trailer}. */
#define PD_CARRIER_HDR 32

/*
 * A checkpoint's table record is a COMM whose name is the first bytes of
 * the table entry after its own: the offset of the first section the table
 * names (TRACING_DATA's, else the front's first).  The sections the table
 * names start at multiples of this (front, carriers, slots): a zero low
 * byte, an empty name where perf prints it (script --show-task-events,
 * report --tasks), not a few bytes of binary (a newline among them).
 */
#define PD_TABLE_ALIGN 256

#define PD_CARRIER_MAX                                             \
	((PD_MAX_RECORD & ~7u) - PD_CARRIER_HDR - PD_TABLE_ALIGN - \
	 PD_TRAILER_MAX)

#define PD_PAGE 4096

/* Offsets in struct perf_file_header. */
#define PD_HDR_DATA_SIZE 48

#define PD_HDR_FEATURES 72

/* Which features pd_build_features() makes. */
#define FEAT_BIT(id) (1ull << (id))

#define FEATS_ALL (~0ull)

/* Known at the start and never changing while recording. */
#define FEATS_START                                   \
	(FEATS_ALL & ~FEAT_BIT(PD_FEAT_SAMPLE_TIME) & \
	 ~FEAT_BIT(PD_FEAT_AUXTRACE) & ~FEAT_BIT(0) & \
	 ~FEAT_BIT(PD_FEAT_TRACING_DATA) & ~FEAT_BIT(PD_FEAT_BUILD_ID))

struct pd_attr {
	unsigned char attr[PD_ATTR_SIZE];
	char *name;
	uint64_t *ids;
	uint32_t nr_ids;
};

/* A growing byte buffer for feature payloads; an allocation failure is
 * remembered and turns the whole buffer invalid. */
struct pd_buf {
	unsigned char *p;
	size_t len;
	size_t cap;
	bool oom;
};

struct pd_feat {
	int id;
	struct pd_buf b;
};

/* Where a section lies in the file. */
struct pd_loc {
	uint64_t off, len;
};

/* The formats of one system added with pd_writer_add_format(). */
struct pd_tpsys {
	char *name;
	char **text;
	size_t *len;
	size_t nr, cap;
};

/* What a checkpoint's header describes. */
struct pd_ckpt {
	struct pd_loc loc[PD_FEAT_MAX]; /* sections, by feature id */
	uint64_t bits; /* which of loc[] exist (feature ids < 64) */
	struct pd_loc attrs; /* the attr entries */
	uint32_t nr_attrs;
};

struct pd_writer {
	int fd;
	bool pipe;
	bool regular; /* fd is a regular file (cut back on errors) */
	bool started;
	int err; /* first write error (sticky), 0 if none */

	struct pd_attr *attrs;
	uint32_t nr_attrs;
	uint32_t nr_start_attrs; /* file mode: attrs written at the start */

	int argc;
	char **argv; /* one allocation: pointers, then the strings */

	/* TRACING_DATA: the blob set, plus the formats of other systems
	 * spliced in after its own systems (pd_td_compose()). */
	void *tdata;
	size_t tdata_len;
	bool has_tdata;
	size_t td_nsys_at, td_tail_at; /* in tdata: system count, tail */
	uint32_t td_nsys;
	bool td_parsed;
	struct pd_tpsys *tpsys;
	size_t nr_tpsys;
	size_t nr_formats;
	unsigned char *td_full; /* composed, NULL when stale */
	size_t td_full_len;

	bool has_clockid;
	int clockid;

	/* HEADER_GROUP_DESC: {leader attr index, nr_members} per group */
	uint32_t (*groups)[2];
	uint32_t nr_groups;

	/* HEADER_BUILD_ID (close) and HEADER_COMPRESSED */
	unsigned char *build_ids;
	size_t build_ids_len;
	bool compressed;
	uint32_t comp_level, comp_ratio, comp_mmap_len;

	uint64_t first_time;
	uint64_t last_time;

	/*
	 * Output position.  File mode: absolute file offsets.  Pipe mode:
	 * bytes since the stream start; base is where the stream started in
	 * a regular file.
	 */
	uint64_t base;
	uint64_t off; /* end of what was handed to write()/pwrite() */
	uint64_t data_offset; /* where the data section starts */
	uint64_t round_end; /* end of the last complete round */
	unsigned char *buf;
	size_t used;

	/* Record framing across pd_writer_write() calls. */
	unsigned char hdr[8];
	uint32_t hdr_have;
	uint64_t rec_left;

	/* HEADER_AUXTRACE index: {file offset, header.size} per AUXTRACE. */
	uint64_t (*aux_idx)[2];
	size_t nr_aux_idx, cap_aux_idx;

	/* Checkpoints (file mode). */
	struct pd_ckpt ck; /* what the header on disk describes */
	uint64_t durable_end; /* end of its table record: the file to keep */
	uint64_t front_off, front_end; /* the start's sections */
	size_t growth;
	uint64_t slot_off[2], slot_cap;
	int slot_next; /* the slot the header does not point into */
	bool desc_dirty; /* attrs, EVENT_DESC or TRACING_DATA changed */
	uint64_t desc_gen, stalled_gen; /* changes; the one that did not fit */
	/* pd_writer_round_bytes(): its answer for desc_gen cost_gen */
	uint64_t cost_gen, cost_bytes;
	bool warned_stall;
	uint64_t kept_data_size; /* data.size the file is left with */
};

static inline uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static inline uint64_t attr_u64(const struct pd_attr *a, size_t off)
{
	uint64_t v;

	memcpy(&v, a->attr + off, sizeof(v));
	return v;
}

static inline void put_u16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_header(unsigned char *p, uint32_t type, uint16_t size)
{
	put_u32(p, type);
	put_u16(p + 4, 0);
	put_u16(p + 6, size);
}

void pd_buf_add(struct pd_buf *b, const void *data, size_t len);

void pd_buf_u32(struct pd_buf *b, uint32_t v);

void pd_buf_u64(struct pd_buf *b, uint64_t v);

/* perf's do_write_string(): u32 len = ALIGN(strlen + 1, 64), then the
 * string and NULs up to len. */
void pd_buf_str(struct pd_buf *b, const char *s);

void pd_buf_free(struct pd_buf *b);

/* ---- output ---- */
int pd_set_err(struct pd_writer *w, int err);

int pd_out(struct pd_writer *w, const void *data, size_t len);

int pd_flush(struct pd_writer *w);

int pd_append(struct pd_writer *w, const void *data, size_t len);

/* Zeros up to the next multiple of @align in the output. */
int pd_append_zeros(struct pd_writer *w, uint64_t align);

/* pwrite() of all of @len at @off, without touching the stream state. */
int pd_pwrite_all(int fd, const void *data, size_t len, uint64_t off);

/* nr events, attr size, then per event: attr, nr ids, name, ids.  Only
 * when every event has a name; else perf names them from their attrs. */
void pd_feat_event_desc(struct pd_writer *w, struct pd_buf *b);

/*
 * Finds, in a tracing data blob (format/tracing_data.c, perf's
 * trace-event-info.c), the u32 count of event systems and the end of the
 * systems (where kallsyms, printk formats and cmdlines follow): formats of
 * other systems are spliced in there.  false if the blob is malformed.
 */
bool pd_td_parse(struct pd_writer *w);

/* TRACING_DATA as it stands (NULL with *len 0 if none; -ENOMEM). */
int pd_td_bytes(struct pd_writer *w, const unsigned char **out, size_t *len);

void pd_td_stale(struct pd_writer *w);

/* ---- the attr section ---- */
uint64_t pd_attrs_blob_size(const struct pd_writer *w, uint32_t nr);

/*
 * The first @nr attrs as an attr section that will lie at file offset
 * @at: their id arrays, then the attrs pointing at them.  @out has
 * pd_attrs_blob_size() bytes; returns the offset of the attrs (the header's
 * attrs.offset).
 */
uint64_t pd_attrs_blob(const struct pd_writer *w, uint32_t nr, uint64_t at,
		       unsigned char *out);

bool pd_has_tracepoints(const struct pd_writer *w);

/* The start's attrs section: the ids of its attrs, then the attrs. */
uint64_t pd_start_attrs_offset(const struct pd_writer *w);

void pd_file_header(const struct pd_writer *w, unsigned char *h,
		    uint64_t data_size, const uint64_t *features,
		    uint64_t attrs_off, uint32_t nr_attrs);

/* Header, the start's attrs with their ids, the front region with every
 * section known now, and the slots (holes); the data starts after them. */
int pd_start_file(struct pd_writer *w);

/* Pipe header, HEADER_ATTR, HEADER_FEATURE and HEADER_TRACING_DATA
 * records, in the order perf record -o - writes them. */
int pd_start_pipe(struct pd_writer *w);

bool pd_mid_record(const struct pd_writer *w);

/*
 * Makes the file describe everything up to here: the round's data (in the
 * buffer), the descriptions that changed, the table record, then the
 * header (see the top of the file).
 */
int pd_checkpoint(struct pd_writer *w);

/*
 * Writes perf's layout of the features at @at (the end of the data): the
 * table, then the sections.  Sets the bits of what was written in @bits and
 * the end in *end.
 */
int pd_write_features(struct pd_writer *w, uint64_t at, bool write,
		      uint64_t bits[4], uint64_t *end);

#endif
