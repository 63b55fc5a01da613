// SPDX-License-Identifier: MIT
/*
 * perf.data writer: the PERFILE2 file format and perf's pipe format, as
 * perf 6.1 reads them (tools/perf/util/header.c, session.c).
 *
 * File mode, while recording: a checkpoint after every round.
 *
 *   0      struct perf_file_header (104 bytes), rewritten by one pwrite()
 *          at the end of every round
 *   104    the u64 id arrays of the attrs given before the start, then
 *          those attrs: {perf_event_attr (128 bytes, size = 128), ids}
 *   front  the feature sections known at the start (HOSTNAME ... CLOCK_DATA,
 *          EVENT_DESC, TRACING_DATA, however big), written once
 *   slots  only with pd_writer_set_growth(): two areas, holes until used,
 *          for event descriptions that outgrow one record (below)
 *   data   an empty FINISHED_ROUND, then per round: the records handed to
 *          the writer; one carrier per event description that changed
 *          (PERF_RECORD_HEADER_EVENT_TYPE {tag, section}: the attrs with
 *          their ids, EVENT_DESC, TRACING_DATA); then the table record, a
 *          PERF_RECORD_FINISHED_ROUND whose payload is the feature table
 *          (feature bit 0's 16-byte entry is the record's own header and a
 *          zero u64) followed by the SAMPLE_TIME section.
 *
 * data.size ends where the newest table record starts, so perf finds the
 * table at data.offset + data.size, as it wants; the sections and the attrs
 * it points to lie in the front, a slot, a carrier or that record, all
 * written before the header is.  No byte the current header points to is
 * written again while it does (a changed description goes to a new
 * carrier, or to the slot the header does not use), so a recorder killed
 * at any instant leaves a header that describes a complete file: every
 * round up to its last checkpoint.  perf 6.1 ignores HEADER_EVENT_TYPE
 * records in every tool (session.c: "deprecated") and sees one
 * FINISHED_ROUND per round, as before; it ignores feature bit 0
 * (HEADER_RESERVED has no reader).  An event description bigger than one
 * record's 64 KiB goes to the free slot; when no slot has room, rounds go
 * on but the header stays at the last checkpoint until close (warned).
 * The pieces were checked with perf 6.1: report, script, report --stats,
 * --header-only (docs/design.md section 9).
 *
 * At close: a last checkpoint, then what perf itself writes: the feature
 * table at the end of the data (after the last table record, which stays
 * as a FINISHED_ROUND), the sections after it, then all attrs again when
 * events were added while recording, then the header.  The front region,
 * dead then, is punched out of the file where the file system can.
 *
 * Pipe mode is written strictly sequentially: {magic, size = 16}, one
 * PERF_RECORD_HEADER_ATTR per attr, one PERF_RECORD_HEADER_FEATURE per
 * feature (the ones perf itself synthesizes in pipe mode), one
 * PERF_RECORD_EVENT_UPDATE with the name of each event that has ids, then
 * PERF_RECORD_HEADER_TRACING_DATA when the tracing data was set, then the
 * records.  perf reads such a stream from a pipe or from a regular file.
 *
 * Write errors (ENOSPC, EIO, EFBIG, short writes) are sticky: the first
 * one is remembered and returned from every later call; nothing more is
 * written.  At close a file is cut back to the end of its last checkpoint
 * (the header already describes it), a stream in a regular file to the end
 * of its last complete round.
 *
 * The writer never closes @fd and never changes signal dispositions: a
 * pipe whose reader went away raises SIGPIPE unless the caller ignores it
 * (then the writes fail with EPIPE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "../common/log.h"
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
/* A carrier: {header, u64 tag, section, zeros to 8}; at least perf's
 * struct perf_record_header_event_type (80 bytes). */
#define PD_CARRIER_HDR 16
#define PD_CARRIER_MAX ((PD_MAX_RECORD & ~7u) - PD_CARRIER_HDR)
#define PD_CARRIER_MIN 80
#define PD_PAGE 4096

/* Offsets in struct perf_file_header. */
#define PD_HDR_DATA_SIZE 48
#define PD_HDR_FEATURES 72

/* Which features build_features() makes. */
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
	 * spliced in after its own systems (td_compose()). */
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

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static void put_u16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_header(unsigned char *p, uint32_t type, uint16_t size)
{
	put_u32(p, type);
	put_u16(p + 4, 0);
	put_u16(p + 6, size);
}

/* ---- payload buffers ---- */

static void *buf_grow(struct pd_buf *b, size_t len)
{
	unsigned char *p;
	size_t cap;

	if (b->oom)
		return NULL;
	if (len > b->cap - b->len) {
		cap = b->cap ? b->cap : 256;
		while (cap - b->len < len) {
			if (cap > SIZE_MAX / 2) {
				b->oom = true;
				return NULL;
			}
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	p = b->p + b->len;
	b->len += len;
	return p;
}

static void buf_add(struct pd_buf *b, const void *data, size_t len)
{
	void *p;

	if (!len)
		return;
	p = buf_grow(b, len);
	if (p)
		memcpy(p, data, len);
}

static void buf_zero(struct pd_buf *b, size_t len)
{
	void *p;

	if (!len)
		return;
	p = buf_grow(b, len);
	if (p)
		memset(p, 0, len);
}

static void buf_u32(struct pd_buf *b, uint32_t v)
{
	buf_add(b, &v, sizeof(v));
}

static void buf_u64(struct pd_buf *b, uint64_t v)
{
	buf_add(b, &v, sizeof(v));
}

/* perf's do_write_string(): u32 len = ALIGN(strlen + 1, 64), then the
 * string and NULs up to len. */
static void buf_str(struct pd_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t len = align_up(n, PD_NAME_ALIGN);

	buf_u32(b, (uint32_t)len);
	buf_add(b, s, n);
	buf_zero(b, len - n);
}

static void buf_free(struct pd_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- output ---- */

static int set_err(struct pd_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* Writes all of @len at the output position or fails; the position
 * advances by what the kernel took, also on failure. */
static int out_raw(struct pd_writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;
	ssize_t n;

	while (len) {
		if (w->pipe)
			n = write(w->fd, p, len);
		else
			n = pwrite(w->fd, p, len, (off_t)w->off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		w->off += (uint64_t)n;
	}
	return 0;
}

static int out(struct pd_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	ret = out_raw(w, data, len);
	if (ret < 0) {
		pr_err("perf.data: write failed at offset %llu: %s",
		       (unsigned long long)w->off, strerror(-ret));
		return set_err(w, ret);
	}
	return 0;
}

static int flush(struct pd_writer *w)
{
	int ret;

	if (w->err)
		return w->err;
	ret = w->used ? out(w, w->buf, w->used) : 0;
	w->used = 0;
	return ret;
}

static int append(struct pd_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	if (!len)
		return 0;
	if (len > PD_BUF_SIZE - w->used) {
		ret = flush(w);
		if (ret)
			return ret;
	}
	if (len >= PD_BUF_SIZE)
		return out(w, data, len);
	memcpy(w->buf + w->used, data, len);
	w->used += len;
	return 0;
}

/* pwrite() of all of @len at @off, without touching the stream state. */
static int pwrite_all(int fd, const void *data, size_t len, uint64_t off)
{
	const unsigned char *p = data;
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int truncate_to(struct pd_writer *w, uint64_t off)
{
	int ret;

	do {
		ret = ftruncate(w->fd, (off_t)off);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		ret = -errno;
		pr_err("perf.data: cannot cut the file back to %llu bytes: %s",
		       (unsigned long long)off, strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- host information (the features perf record writes) ---- */

/* The value of the first /proc/cpuinfo line that starts with @key, with
 * runs of white space squashed to one space like perf does; malloc()ed. */
static char *cpuinfo_value(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL, *val = NULL, *s, *d;
	size_t cap = 0, klen = strlen(key);
	bool space = false;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, key, klen))
			continue;
		s = strchr(line, ':');
		if (!s)
			continue;
		s++;
		while (*s == ' ' || *s == '\t')
			s++;
		/* squash white space in place; no trailing blank */
		for (d = line; *s; s++) {
			if (*s == ' ' || *s == '\t' || *s == '\n') {
				space = d != line;
				continue;
			}
			if (space)
				*d++ = ' ';
			space = false;
			*d++ = *s;
		}
		*d = '\0';
		if (line[0])
			val = strdup(line);
		break;
	}
	free(line);
	fclose(f);
	return val;
}

static void feat_cpudesc(struct pd_buf *b)
{
#if defined(__powerpc__) || defined(__sparc__)
	static const char *const keys[] = { "cpu" };
#elif defined(__s390__)
	static const char *const keys[] = { "vendor_id" };
#elif defined(__arm__)
	static const char *const keys[] = { "model name", "Processor" };
#elif defined(__loongarch__)
	static const char *const keys[] = { "Model Name" };
#else
	static const char *const keys[] = { "model name" };
#endif
	size_t i;
	char *v;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = cpuinfo_value(keys[i]);
		if (v) {
			buf_str(b, v);
			free(v);
			return;
		}
	}
}

/* perf's get_cpuid(): on x86 "vendor,family,model,stepping" (decimal,
 * with the extended family/model folded in, as /proc/cpuinfo shows them);
 * on arm64 the MIDR of cpu0.  perf uses it to pick its JSON event tables;
 * the feature is left out elsewhere. */
static void feat_cpuid(struct pd_buf *b)
{
#if defined(__x86_64__) || defined(__i386__)
	char *vendor = cpuinfo_value("vendor_id");
	char *family = cpuinfo_value("cpu family");
	char *model = cpuinfo_value("model\t");
	char *step = cpuinfo_value("stepping");
	char s[128];

	if (vendor && family && model && step) {
		snprintf(s, sizeof(s), "%s,%s,%s,%s", vendor, family, model,
			 step);
		buf_str(b, s);
	}
	free(vendor);
	free(family);
	free(model);
	free(step);
#elif defined(__aarch64__)
	FILE *f = fopen(
		"/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
		"re");
	char s[64];

	if (!f)
		return;
	if (fgets(s, sizeof(s), f)) {
		s[strcspn(s, "\n")] = '\0';
		if (s[0])
			buf_str(b, s);
	}
	fclose(f);
#else
	(void)b;
#endif
}

/* CPUs present (highest present cpu + 1, perf's cpu__max_present_cpu()) and
 * online. */
static void feat_nrcpus(struct pd_buf *b)
{
	FILE *f = fopen("/sys/devices/system/cpu/present", "re");
	long conf = -1, onln = sysconf(_SC_NPROCESSORS_ONLN);
	char s[4096], *p, *end;
	unsigned long v;

	if (f) {
		if (fgets(s, sizeof(s), f)) {
			/* "0-3,8-11": the last number is the highest cpu */
			for (p = s; *p; p = end) {
				if (*p < '0' || *p > '9') {
					end = p + 1;
					continue;
				}
				v = strtoul(p, &end, 10);
				if (v < INT_MAX && (long)v + 1 > conf)
					conf = (long)v + 1;
			}
		}
		fclose(f);
	}
	if (conf <= 0)
		conf = sysconf(_SC_NPROCESSORS_CONF);
	if (conf <= 0 || onln <= 0)
		return;
	buf_u32(b, (uint32_t)conf);
	buf_u32(b, (uint32_t)onln);
}

static void feat_total_mem(struct pd_buf *b)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu", &kb) == 1) {
			buf_u64(b, kb);
			break;
		}
	}
	fclose(f);
}

static void feat_cmdline(struct pd_writer *w, struct pd_buf *b)
{
	int i;

	buf_u32(b, (uint32_t)w->argc);
	for (i = 0; i < w->argc; i++)
		buf_str(b, w->argv[i]);
}

/* nr events, attr size, then per event: attr, nr ids, name, ids.  Only
 * when every event has a name; else perf names them from their attrs. */
static void feat_event_desc(struct pd_writer *w, struct pd_buf *b)
{
	uint32_t i;

	for (i = 0; i < w->nr_attrs; i++)
		if (!w->attrs[i].name)
			return;
	buf_u32(b, w->nr_attrs);
	buf_u32(b, PD_ATTR_SIZE);
	for (i = 0; i < w->nr_attrs; i++) {
		buf_add(b, w->attrs[i].attr, PD_ATTR_SIZE);
		buf_u32(b, w->attrs[i].nr_ids);
		buf_str(b, w->attrs[i].name);
		buf_add(b, w->attrs[i].ids,
			(size_t)w->attrs[i].nr_ids * sizeof(uint64_t));
	}
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* CLOCKID: the clock's resolution in ns (perf's clockid_res_ns). */
static void feat_clockid(struct pd_writer *w, struct pd_buf *b)
{
	struct timespec res;

	if (clock_getres(w->clockid, &res))
		return;
	buf_u64(b, ts_ns(&res));
}

/* CLOCK_DATA: version 1, clockid, then a wall-clock time and the events'
 * clock at the same moment, so perf can show times of day. */
static void feat_clock_data(struct pd_writer *w, struct pd_buf *b)
{
	struct timespec c0, tod, c1;

	if (clock_gettime(w->clockid, &c0) ||
	    clock_gettime(CLOCK_REALTIME, &tod) ||
	    clock_gettime(w->clockid, &c1))
		return;
	buf_u32(b, 1);
	buf_u32(b, (uint32_t)w->clockid);
	buf_u64(b, ts_ns(&tod));
	buf_u64(b, ts_ns(&c0) + (ts_ns(&c1) - ts_ns(&c0)) / 2);
}

static void feat_version(struct pd_buf *b)
{
	char s[64];

	snprintf(s, sizeof(s), "perfring-%d.%d.%d", PERFRING_VERSION_MAJOR,
		 PERFRING_VERSION_MINOR, PERFRING_VERSION_PATCH);
	buf_str(b, s);
}
/*
 * GROUP_DESC (perf's write_group_desc): u32 nr_groups, then per group its
 * name as a string ("{anon_group}" for {a,b}: perf reads that back as no
 * name), u32 leader's attr index, u32 nr_members.
 */
static void feat_group_desc(struct pd_writer *w, struct pd_buf *b)
{
	if (!w->nr_groups)
		return;
	buf_u32(b, w->nr_groups);
	for (uint32_t i = 0; i < w->nr_groups; i++) {
		buf_str(b, "{anon_group}");
		buf_u32(b, w->groups[i][0]);
		buf_u32(b, w->groups[i][1]);
	}
}

/*
 * HEADER_AUXTRACE (perf's auxtrace_index__write): u64 nr, then nr x {u64
 * file_offset; u64 sz} with sz the record's header.size (48), which perf
 * checks.  Written at close only: a file cut before has no index and perf
 * queues the AUXTRACE records as it meets them in the data.
 */
static void feat_auxtrace(struct pd_writer *w, struct pd_buf *b)
{
	if (!w->nr_aux_idx)
		return;
	buf_u64(b, w->nr_aux_idx);
	for (size_t i = 0; i < w->nr_aux_idx; i++) {
		buf_u64(b, w->aux_idx[i][0]);
		buf_u64(b, w->aux_idx[i][1]);
	}
}

/*
 * Builds the payloads of the features in @want (a mask of ids), ascending
 * by id, into @f (room for PD_FEAT_MAX); returns how many.  TRACING_DATA
 * is not built here (td_bytes()).  A feature whose information is not
 * available is left out, as perf does.
 */
static int build_features(struct pd_writer *w, struct pd_feat *f, bool pipe,
			  uint64_t want)
{
	struct utsname uts;
	bool have_uts = uname(&uts) == 0;
	int n = 0, id;

	for (id = PD_FEAT_BUILD_ID; id <= PD_FEAT_CLOCK_DATA; id++) {
		struct pd_buf *b = &f[n].b;

		if (!(want & FEAT_BIT(id)))
			continue;
		memset(b, 0, sizeof(*b));
		switch (id) {
		case PD_FEAT_BUILD_ID:
			if (!pipe && w->build_ids_len)
				buf_add(b, w->build_ids, w->build_ids_len);
			break;
		case PD_FEAT_COMPRESSED:
			/* version 0, type 1 (zstd), level, ratio, mmap_len */
			if (w->compressed) {
				buf_u32(b, 0);
				buf_u32(b, 1);
				buf_u32(b, w->comp_level);
				buf_u32(b, w->comp_ratio);
				buf_u32(b, w->comp_mmap_len);
			}
			break;
		case PD_FEAT_HOSTNAME:
			if (have_uts)
				buf_str(b, uts.nodename);
			break;
		case PD_FEAT_OSRELEASE:
			if (have_uts)
				buf_str(b, uts.release);
			break;
		case PD_FEAT_VERSION:
			feat_version(b);
			break;
		case PD_FEAT_ARCH:
			if (have_uts)
				buf_str(b, uts.machine);
			break;
		case PD_FEAT_NRCPUS:
			feat_nrcpus(b);
			break;
		case PD_FEAT_CPUDESC:
			feat_cpudesc(b);
			break;
		case PD_FEAT_CPUID:
			feat_cpuid(b);
			break;
		case PD_FEAT_TOTAL_MEM:
			feat_total_mem(b);
			break;
		case PD_FEAT_CMDLINE:
			feat_cmdline(w, b);
			break;
		case PD_FEAT_EVENT_DESC:
			feat_event_desc(w, b);
			break;
		case PD_FEAT_GROUP_DESC:
			feat_group_desc(w, b);
			break;
		case PD_FEAT_SAMPLE_TIME:
			/* unknown when a pipe starts */
			if (!pipe && (w->first_time || w->last_time)) {
				buf_u64(b, w->first_time);
				buf_u64(b, w->last_time);
			}
			break;
		case PD_FEAT_CLOCKID:
			if (w->has_clockid)
				feat_clockid(w, b);
			break;
		case PD_FEAT_CLOCK_DATA:
			if (w->has_clockid)
				feat_clock_data(w, b);
			break;
		case PD_FEAT_AUXTRACE:
			if (!pipe)
				feat_auxtrace(w, b);
			break;
		default:
			break;
		}
		if (b->oom) {
			pr_warn("perf.data: out of memory, feature %d left out",
				id);
			buf_free(b);
			continue;
		}
		if (!b->len) {
			buf_free(b);
			continue;
		}
		f[n++].id = id;
	}
	return n;
}

static void free_features(struct pd_feat *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		buf_free(&f[i].b);
}

/* ---- TRACING_DATA: the blob set plus formats of other systems ---- */

static bool td_take(size_t len, size_t *pos, uint64_t n)
{
	if (n > len - *pos)
		return false;
	*pos += (size_t)n;
	return true;
}

static bool td_u32(const unsigned char *p, size_t len, size_t *pos, uint32_t *v)
{
	if (4 > len - *pos)
		return false;
	memcpy(v, p + *pos, 4);
	*pos += 4;
	return true;
}

static bool td_u64(const unsigned char *p, size_t len, size_t *pos, uint64_t *v)
{
	if (8 > len - *pos)
		return false;
	memcpy(v, p + *pos, 8);
	*pos += 8;
	return true;
}

static bool td_str(const unsigned char *p, size_t len, size_t *pos)
{
	const unsigned char *nul = memchr(p + *pos, 0, len - *pos);

	if (!nul)
		return false;
	*pos = (size_t)(nul - p) + 1;
	return true;
}

/*
 * Finds, in a tracing data blob (format/tracing_data.c, perf's
 * trace-event-info.c), the u32 count of event systems and the end of the
 * systems (where kallsyms, printk formats and cmdlines follow): formats of
 * other systems are spliced in there.  false if the blob is malformed.
 */
static bool td_parse(struct pd_writer *w)
{
	const unsigned char *p = w->tdata;
	size_t len = w->tdata_len, pos = 0;
	uint32_t n, nsys;
	uint64_t sz;

	if (len < 10 || memcmp(p, "\027\010\104tracing", 10))
		return false;
	pos = 10;
	if (!td_str(p, len, &pos) || !td_take(len, &pos, 2 + 4))
		return false;
	if (!td_str(p, len, &pos) || !td_u64(p, len, &pos, &sz) ||
	    !td_take(len, &pos, sz)) /* header_page */
		return false;
	if (!td_str(p, len, &pos) || !td_u64(p, len, &pos, &sz) ||
	    !td_take(len, &pos, sz)) /* header_event */
		return false;
	if (!td_u32(p, len, &pos, &n)) /* ftrace formats */
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!td_u64(p, len, &pos, &sz) || !td_take(len, &pos, sz))
			return false;
	w->td_nsys_at = pos;
	if (!td_u32(p, len, &pos, &nsys))
		return false;
	for (uint32_t i = 0; i < nsys; i++) {
		if (!td_str(p, len, &pos) || !td_u32(p, len, &pos, &n))
			return false;
		for (uint32_t k = 0; k < n; k++)
			if (!td_u64(p, len, &pos, &sz) ||
			    !td_take(len, &pos, sz))
				return false;
	}
	w->td_tail_at = pos;
	w->td_nsys = nsys;
	return true;
}

/* The blob with the added systems after its own ones, as
 * tracing_data_build_ext() lays out its extra formats. */
static int td_compose(struct pd_writer *w)
{
	const unsigned char *p = w->tdata;
	struct pd_buf b = { 0 };

	buf_add(&b, p, w->td_nsys_at);
	buf_u32(&b, w->td_nsys + (uint32_t)w->nr_tpsys);
	buf_add(&b, p + w->td_nsys_at + 4, w->td_tail_at - w->td_nsys_at - 4);
	for (size_t i = 0; i < w->nr_tpsys; i++) {
		const struct pd_tpsys *s = &w->tpsys[i];

		buf_add(&b, s->name, strlen(s->name) + 1);
		buf_u32(&b, (uint32_t)s->nr);
		for (size_t k = 0; k < s->nr; k++) {
			buf_u64(&b, s->len[k]);
			buf_add(&b, s->text[k], s->len[k]);
		}
	}
	buf_add(&b, p + w->td_tail_at, w->tdata_len - w->td_tail_at);
	if (b.oom) {
		buf_free(&b);
		return -ENOMEM;
	}
	free(w->td_full);
	w->td_full = b.p;
	w->td_full_len = b.len;
	return 0;
}

/* TRACING_DATA as it stands (NULL with *len 0 if none; -ENOMEM). */
static int td_bytes(struct pd_writer *w, const unsigned char **out, size_t *len)
{
	int ret;

	*out = NULL;
	*len = 0;
	if (!w->has_tdata)
		return 0;
	if (!w->nr_formats) {
		*out = w->tdata;
		*len = w->tdata_len;
		return 0;
	}
	if (!w->td_full) {
		ret = td_compose(w);
		if (ret)
			return ret;
	}
	*out = w->td_full;
	*len = w->td_full_len;
	return 0;
}

static void td_stale(struct pd_writer *w)
{
	free(w->td_full);
	w->td_full = NULL;
	w->td_full_len = 0;
}

/* ---- the attr section ---- */

static uint64_t attrs_blob_size(const struct pd_writer *w, uint32_t nr)
{
	uint64_t ids = 0;

	for (uint32_t i = 0; i < nr; i++)
		ids += w->attrs[i].nr_ids;
	return ids * 8 + (uint64_t)nr * PD_FILE_ATTR_SIZE;
}

/*
 * The first @nr attrs as an attr section that will lie at file offset
 * @at: their id arrays, then the attrs pointing at them.  @out has
 * attrs_blob_size() bytes; returns the offset of the attrs (the header's
 * attrs.offset).
 */
static uint64_t attrs_blob(const struct pd_writer *w, uint32_t nr, uint64_t at,
			   unsigned char *out)
{
	uint64_t ids_off = at;
	unsigned char *p = out;

	for (uint32_t i = 0; i < nr; i++) {
		if (!w->attrs[i].nr_ids)
			continue;
		memcpy(p, w->attrs[i].ids, w->attrs[i].nr_ids * 8u);
		p += w->attrs[i].nr_ids * 8u;
	}
	for (uint32_t i = 0; i < nr; i++) {
		memcpy(p, w->attrs[i].attr, PD_ATTR_SIZE);
		put_u64(p + PD_ATTR_SIZE, ids_off);
		put_u64(p + PD_ATTR_SIZE + 8, w->attrs[i].nr_ids * 8ull);
		ids_off += w->attrs[i].nr_ids * 8ull;
		p += PD_FILE_ATTR_SIZE;
	}
	return at + (uint64_t)(p - out) - (uint64_t)nr * PD_FILE_ATTR_SIZE;
}

/* ---- API ---- */

PR_HIDDEN int pd_writer_open(int fd, bool pipe, int argc, char *const *argv,
			     struct pd_writer **out_w)
{
	struct pd_writer *w;
	struct stat st;
	size_t len = 0;
	char *s;
	off_t pos;
	int i;

	if (!out_w || fd < 0 || argc < 0 || (argc && !argv))
		return -EINVAL;
	*out_w = NULL;
	if (fstat(fd, &st) < 0) {
		i = -errno;
		pr_err("perf.data: fstat: %s", strerror(-i));
		return i;
	}
	if (!pipe && !S_ISREG(st.st_mode)) {
		pr_err("perf.data: file mode needs a regular file (use the pipe format)");
		return -EINVAL;
	}
	/* pwrite() on an O_APPEND descriptor appends: no header patching */
	if (!pipe && (fcntl(fd, F_GETFL) & O_APPEND)) {
		pr_err("perf.data: file mode cannot write through O_APPEND");
		return -EINVAL;
	}
	for (i = 0; i < argc; i++) {
		if (!argv[i])
			return -EINVAL;
		len += strlen(argv[i]) + 1;
	}

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->buf = malloc(PD_BUF_SIZE);
	w->argv = malloc((size_t)(argc + 1) * sizeof(char *) + len);
	if (!w->buf || !w->argv) {
		free(w->buf);
		free(w->argv);
		free(w);
		return -ENOMEM;
	}
	s = (char *)(w->argv + argc + 1);
	for (i = 0; i < argc; i++) {
		len = strlen(argv[i]) + 1;
		memcpy(s, argv[i], len);
		w->argv[i] = s;
		s += len;
	}
	w->argv[argc] = NULL;
	w->argc = argc;
	w->fd = fd;
	w->pipe = pipe;
	w->regular = S_ISREG(st.st_mode);
	if (pipe && w->regular) {
		pos = lseek(fd, 0, SEEK_CUR);
		if (pos < 0)
			w->regular = false;
		else
			w->base = (uint64_t)pos;
	}
	*out_w = w;
	return 0;
}

static int check_attrs(const struct pd_writer *w);

PR_HIDDEN int pd_writer_add_attr(struct pd_writer *w,
				 const struct perf_event_attr *attr,
				 const char *name, const uint64_t *ids,
				 uint32_t nr_ids)
{
	struct pd_attr *a;
	size_t sz;
	uint32_t size = PD_ATTR_SIZE;
	size_t i;

	if (!w || !attr || (nr_ids && !ids))
		return -EINVAL;
	if (w->started && w->pipe) {
		pr_err("perf.data: a pipe needs its attrs before the start");
		return -EBUSY;
	}
	/* A HEADER_ATTR record (pipe mode) is at most 64 KiB. */
	if (nr_ids > (PD_MAX_RECORD - 8 - PD_ATTR_SIZE) / sizeof(uint64_t)) {
		pr_err("perf.data: %u ids for one event are too many", nr_ids);
		return -E2BIG;
	}
	a = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	w->attrs = a;
	a += w->nr_attrs;
	memset(a, 0, sizeof(*a));

	/* attr.size 0 means the first ABI (64 bytes), as for the kernel. */
	sz = attr->size ? attr->size : 64;
	if (sz > sizeof(*attr))
		sz = sizeof(*attr);
	if (sz > PD_ATTR_SIZE) {
		for (i = PD_ATTR_SIZE; i < sz; i++) {
			if (((const unsigned char *)attr)[i]) {
				pr_warn("perf.data: attr fields past %d bytes are dropped (perf 6.1 reads %d)",
					PD_ATTR_SIZE, PD_ATTR_SIZE);
				break;
			}
		}
		sz = PD_ATTR_SIZE;
	}
	memcpy(a->attr, attr, sz);
	memcpy(a->attr + 4, &size, sizeof(size));

	if (name) {
		a->name = strdup(name);
		if (!a->name)
			return -ENOMEM;
	}
	if (nr_ids) {
		a->ids = malloc(nr_ids * sizeof(uint64_t));
		if (!a->ids) {
			free(a->name);
			return -ENOMEM;
		}
		memcpy(a->ids, ids, nr_ids * sizeof(uint64_t));
	}
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	if (w->started && check_attrs(w)) {
		/* An event added while recording must fit the others. */
		w->nr_attrs--;
		free(a->name);
		free(a->ids);
		return -EINVAL;
	}
	w->desc_dirty = true;
	w->desc_gen++;
	return 0;
}

PR_HIDDEN int pd_writer_set_tracing_data(struct pd_writer *w, const void *data,
					 size_t len)
{
	void *p;

	if (!w || (len && !data))
		return -EINVAL;
	if (w->started && w->pipe) {
		pr_err("perf.data: a pipe needs the tracing data before the start");
		return -EBUSY;
	}
	if (len > UINT32_MAX - 8) {
		pr_err("perf.data: tracing data of %zu bytes is too big", len);
		return -E2BIG;
	}
	p = malloc(len ? len : 1);
	if (!p)
		return -ENOMEM;
	if (len)
		memcpy(p, data, len);
	free(w->tdata);
	w->tdata = p;
	w->tdata_len = len;
	w->has_tdata = true;
	w->td_parsed = td_parse(w);
	td_stale(w);
	w->desc_dirty = true;
	w->desc_gen++;
	return 0;
}

PR_HIDDEN int pd_writer_add_format(struct pd_writer *w, const char *system,
				   const char *format, size_t len)
{
	struct pd_tpsys *s = NULL;
	char *text;
	size_t i;

	if (!w || !system || !*system || (len && !format))
		return -EINVAL;
	if (w->started && w->pipe) {
		pr_err("perf.data: a pipe needs the tracing data before the start");
		return -EBUSY;
	}
	if (!w->has_tdata || !w->td_parsed) {
		pr_err("perf.data: no tracing data to add the format of a %s event to",
		       system);
		return -EINVAL;
	}
	for (i = 0; i < w->nr_tpsys && !s; i++)
		if (!strcmp(w->tpsys[i].name, system))
			s = &w->tpsys[i];
	if (!s) {
		s = realloc(w->tpsys, (w->nr_tpsys + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		w->tpsys = s;
		s += w->nr_tpsys;
		memset(s, 0, sizeof(*s));
		s->name = strdup(system);
		if (!s->name)
			return -ENOMEM;
		w->nr_tpsys++;
	}
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		char **t = realloc(s->text, cap * sizeof(*t));
		size_t *l;

		if (!t)
			return -ENOMEM;
		s->text = t;
		l = realloc(s->len, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		s->len = l;
		s->cap = cap;
	}
	text = malloc(len ? len : 1);
	if (!text)
		return -ENOMEM;
	if (len)
		memcpy(text, format, len);
	s->text[s->nr] = text;
	s->len[s->nr] = len;
	s->nr++;
	w->nr_formats++;
	td_stale(w);
	w->desc_dirty = true;
	w->desc_gen++;
	return 0;
}

PR_HIDDEN void pd_writer_set_growth(struct pd_writer *w, size_t bytes)
{
	if (w && !w->started)
		w->growth = bytes;
}

PR_HIDDEN int pd_writer_add_group(struct pd_writer *w, uint32_t nr_members)
{
	uint32_t(*g)[2];

	if (!w || w->started || nr_members < 2 || nr_members > w->nr_attrs)
		return -EINVAL;
	g = realloc(w->groups, (w->nr_groups + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	w->groups = g;
	g[w->nr_groups][0] = w->nr_attrs - nr_members;
	g[w->nr_groups][1] = nr_members;
	w->nr_groups++;
	return 0;
}

PR_HIDDEN void pd_writer_set_clockid(struct pd_writer *w, int clockid)
{
	if (!w)
		return;
	w->has_clockid = true;
	w->clockid = clockid;
}

PR_HIDDEN void pd_writer_note_time(struct pd_writer *w, uint64_t first,
				   uint64_t last)
{
	if (!w)
		return;
	if (first && (!w->first_time || first < w->first_time))
		w->first_time = first;
	if (last > w->last_time)
		w->last_time = last;
}

PR_HIDDEN uint64_t pd_writer_data_bytes(const struct pd_writer *w)
{
	if (!w || !w->started)
		return 0;
	return w->off + w->used - w->data_offset;
}
static uint64_t attr_u64(const struct pd_attr *a, size_t off)
{
	uint64_t v;

	memcpy(&v, a->attr + off, sizeof(v));
	return v;
}

/* perf's __evsel__calc_id_pos()/__evsel__calc_is_pos(). */
static int id_pos(uint64_t st)
{
	int idx = 0;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
	       !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
	return idx;
}

static int is_pos(uint64_t st)
{
	int idx = 1;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
	return idx;
}

/*
 * What perf checks before it reads anything (evlist__valid_sample_type,
 * _sample_id_all, _read_format): with several events, the id must be
 * findable at one position in every record, and all events must agree on
 * sample_id_all and read_format.  And with several events each needs ids:
 * perf 6.1 stops at the first sample whose id it does not know ("failed
 * to process type: 9").
 */
static int check_attrs(const struct pd_writer *w)
{
	const struct pd_attr *a0 = &w->attrs[0];
	uint64_t st0 = attr_u64(a0, 24), rf0 = attr_u64(a0, 32);
	uint64_t sia0 = attr_u64(a0, 40) & (1ull << 18);
	uint32_t i;
	uint64_t st;

	for (i = 0; i < w->nr_attrs; i++) {
		st = attr_u64(&w->attrs[i], 24);
		if ((attr_u64(&w->attrs[i], 40) & (1ull << 18)) != sia0 ||
		    attr_u64(&w->attrs[i], 32) != rf0) {
			pr_err("perf.data: events disagree on sample_id_all or read_format; perf refuses that");
			return -EINVAL;
		}
		if ((st & PERF_SAMPLE_READ) && !(rf0 & PERF_FORMAT_ID)) {
			pr_err("perf.data: PERF_SAMPLE_READ needs PERF_FORMAT_ID");
			return -EINVAL;
		}
		if (w->nr_attrs > 1 && !w->attrs[i].nr_ids) {
			pr_err("perf.data: with several events every event needs its ids (perf cannot tell the samples apart)");
			return -EINVAL;
		}
		if (w->nr_attrs > 1 &&
		    (id_pos(st) < 0 || is_pos(st) < 0 ||
		     id_pos(st) != id_pos(st0) || is_pos(st) != is_pos(st0))) {
			pr_err("perf.data: with several events every sample_type needs the id at the same place (use PERF_SAMPLE_IDENTIFIER)");
			return -EINVAL;
		}
	}
	return 0;
}

static bool has_tracepoints(const struct pd_writer *w)
{
	uint32_t i, type;

	for (i = 0; i < w->nr_attrs; i++) {
		memcpy(&type, w->attrs[i].attr, sizeof(type));
		if (type == PERF_TYPE_TRACEPOINT)
			return true;
	}
	return false;
}

/* The start's attrs section: the ids of its attrs, then the attrs. */
static uint64_t start_attrs_offset(const struct pd_writer *w)
{
	uint64_t ids = 0;

	for (uint32_t i = 0; i < w->nr_start_attrs; i++)
		ids += w->attrs[i].nr_ids;
	return PD_FILE_HEADER_SIZE + ids * 8;
}

static void file_header(const struct pd_writer *w, unsigned char *h,
			uint64_t data_size, const uint64_t *features,
			uint64_t attrs_off, uint32_t nr_attrs)
{
	memset(h, 0, PD_FILE_HEADER_SIZE);
	put_u64(h, PD_MAGIC);
	put_u64(h + 8, PD_FILE_HEADER_SIZE);
	put_u64(h + 16, PD_FILE_ATTR_SIZE);
	put_u64(h + 24, attrs_off); /* attrs.offset */
	put_u64(h + 32, (uint64_t)nr_attrs * PD_FILE_ATTR_SIZE);
	put_u64(h + 40, w->data_offset);
	put_u64(h + PD_HDR_DATA_SIZE, data_size);
	/* event_types: zero, perf ignores it */
	if (features)
		memcpy(h + PD_HDR_FEATURES, features, 32);
}

/* Header, the start's attrs with their ids, the front region with every
 * section known now, and the slots (holes); the data starts after them. */
static int start_file(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE];
	struct pd_feat f[PD_FEAT_MAX];
	const unsigned char *td;
	unsigned char *blob;
	size_t td_len = 0;
	uint64_t blob_len, pos, desc_len = 0, data_off;
	int n, k, ret;

	w->off = 0;
	w->nr_start_attrs = w->nr_attrs;
	blob_len = attrs_blob_size(w, w->nr_attrs);
	blob = malloc(blob_len);
	if (!blob)
		return -ENOMEM;
	w->ck.attrs.off = attrs_blob(w, w->nr_attrs, PD_FILE_HEADER_SIZE, blob);
	w->ck.attrs.len = (uint64_t)w->nr_attrs * PD_FILE_ATTR_SIZE;
	w->ck.nr_attrs = w->nr_attrs;
	/* Until the first checkpoint: no data, no features. */
	file_header(w, h, 0, NULL, w->ck.attrs.off, w->nr_attrs);
	ret = append(w, h, sizeof(h));
	if (!ret)
		ret = append(w, blob, blob_len);
	free(blob);
	if (ret)
		return ret;

	/* The front: whatever its size, written once. */
	w->front_off = pos = w->off + w->used;
	n = build_features(w, f, false, FEATS_START);
	for (k = 0; k < n && !ret; k++) {
		w->ck.loc[f[k].id] = (struct pd_loc){ pos, f[k].b.len };
		w->ck.bits |= FEAT_BIT(f[k].id);
		if (f[k].id == PD_FEAT_EVENT_DESC)
			desc_len = f[k].b.len;
		ret = append(w, f[k].b.p, f[k].b.len);
		pos += f[k].b.len;
	}
	free_features(f, n);
	if (!ret)
		ret = td_bytes(w, &td, &td_len);
	if (!ret && td_len) {
		w->ck.loc[PD_FEAT_TRACING_DATA] =
			(struct pd_loc){ pos, td_len };
		w->ck.bits |= FEAT_BIT(PD_FEAT_TRACING_DATA);
		ret = append(w, td, td_len);
		pos += td_len;
	}
	if (!ret)
		ret = flush(w);
	if (ret)
		return ret;
	w->front_end = pos;
	if (w->growth) {
		w->slot_cap = align_up(blob_len + desc_len + td_len + w->growth,
				       PD_PAGE);
		w->slot_off[0] = align_up(pos, PD_PAGE);
		w->slot_off[1] = w->slot_off[0] + w->slot_cap;
		data_off = w->slot_off[1] + w->slot_cap;
	} else {
		data_off = align_up(pos, 8);
	}
	/* Holes up to the data: a file system without them gets zeros. */
	w->off = data_off;
	w->desc_dirty = false;
	return 0;
}

/* Pipe header, HEADER_ATTR, HEADER_FEATURE and HEADER_TRACING_DATA
 * records, in the order perf record -o - writes them. */
static int start_pipe(struct pd_writer *w)
{
	struct pd_feat f[PD_FEAT_MAX];
	unsigned char h[24];
	uint64_t size, pad;
	uint32_t i;
	int n, k, ret;

	w->off = 0;
	put_u64(h, PD_MAGIC);
	put_u64(h + 8, PD_PIPE_HEADER_SIZE);
	ret = append(w, h, PD_PIPE_HEADER_SIZE);

	for (i = 0; !ret && i < w->nr_attrs; i++) {
		size = 8 + PD_ATTR_SIZE + w->attrs[i].nr_ids * 8ull;
		put_header(h, PD_RECORD_HEADER_ATTR, (uint16_t)size);
		ret = append(w, h, 8);
		if (!ret)
			ret = append(w, w->attrs[i].attr, PD_ATTR_SIZE);
		if (!ret)
			ret = append(w, w->attrs[i].ids,
				     w->attrs[i].nr_ids * 8u);
	}
	if (ret)
		return ret;

	/*
	 * Features as records {header, u64 feat_id, payload}, padded to 8
	 * bytes (perf reads payloads by their own lengths).  No
	 * HEADER_LAST_FEATURE end mark: its id is 32 in perf 6.1 but a real
	 * feature in later perf versions, which would then fail to parse it.
	 */
	n = build_features(w, f, true, FEATS_ALL);
	for (k = 0; !ret && k < n; k++) {
		size = align_up(16 + f[k].b.len, 8);
		if (size > PD_MAX_RECORD - 7) {
			pr_warn("perf.data: feature %d is too big for a pipe record, left out",
				f[k].id);
			continue;
		}
		put_header(h, PD_RECORD_HEADER_FEATURE, (uint16_t)size);
		put_u64(h + 8, (uint64_t)f[k].id);
		ret = append(w, h, 16);
		if (!ret)
			ret = append(w, f[k].b.p, f[k].b.len);
		pad = size - 16 - f[k].b.len;
		memset(h, 0, 8);
		if (!ret && pad)
			ret = append(w, h, pad);
	}
	free_features(f, n);

	/*
	 * Names again as PERF_RECORD_EVENT_UPDATE {header, u64 type = NAME,
	 * u64 id, name}: in pipe mode perf report names its events before
	 * EVENT_DESC arrives and only these records rename them.  perf finds
	 * the event by id, so only events with ids get one.
	 */
	for (i = 0; !ret && i < w->nr_attrs; i++) {
		const struct pd_attr *a = &w->attrs[i];
		size_t nlen;

		if (!a->name || !a->nr_ids)
			continue;
		nlen = strlen(a->name) + 1;
		if (nlen > PD_MAX_RECORD - 32)
			continue;
		size = align_up(24 + nlen, 8);
		put_header(h, PD_RECORD_EVENT_UPDATE, (uint16_t)size);
		put_u64(h + 8, PD_EVENT_UPDATE_NAME);
		put_u64(h + 16, a->ids[0]);
		ret = append(w, h, 24);
		if (!ret)
			ret = append(w, a->name, nlen);
		memset(h, 0, 8);
		if (!ret && size - 24 - nlen)
			ret = append(w, h, size - 24 - nlen);
	}

	/*
	 * {header (size 16), u32 size = data size rounded up to 8, u32 pad},
	 * then the data and its padding, which header.size does not count:
	 * perf reads header.size bytes, then the tracing data straight from
	 * the stream, and checks it against size.  perf 6.1 as shipped
	 * (Debian's 6.1.192) writes 16 here, older 6.1 builds wrote a 12 byte
	 * header; readers of either follow header.size.
	 */
	if (!ret && w->has_tdata) {
		const unsigned char *td;
		size_t td_len;

		ret = td_bytes(w, &td, &td_len);
		size = align_up(td_len, 8);
		put_header(h, PD_RECORD_HEADER_TRACING_DATA, 16);
		put_u32(h + 8, (uint32_t)size);
		put_u32(h + 12, 0);
		if (!ret)
			ret = append(w, h, 16);
		if (!ret)
			ret = append(w, td, td_len);
		memset(h, 0, 8);
		if (!ret && size > td_len)
			ret = append(w, h, size - td_len);
	}
	if (!ret)
		ret = flush(w);
	return ret;
}

static int checkpoint(struct pd_writer *w);

PR_HIDDEN int pd_writer_start(struct pd_writer *w)
{
	unsigned char r[8];
	int ret;

	if (!w)
		return -EINVAL;
	if (w->started)
		return -EBUSY;
	if (w->err)
		return w->err;
	if (!w->nr_attrs) {
		pr_err("perf.data: no events");
		return -EINVAL;
	}
	ret = check_attrs(w);
	if (ret)
		return ret;
	if (w->pipe && has_tracepoints(w) && !w->has_tdata) {
		pr_err("perf.data: tracepoint events need the tracing data before the start");
		return -EINVAL;
	}
	ret = w->pipe ? start_pipe(w) : start_file(w);
	if (ret) {
		w->used = 0;
		return ret;
	}
	w->data_offset = w->off;
	w->round_end = w->off;
	w->started = true;
	if (w->pipe)
		return 0;
	/*
	 * The first checkpoint: the data section is never empty (perf
	 * refuses a data size of 0), it starts with an empty round.
	 */
	put_header(r, PD_RECORD_FINISHED_ROUND, 8);
	ret = append(w, r, sizeof(r));
	return ret ? ret : checkpoint(w);
}

/*
 * Checks that @len bytes continue the record stream: every header has a
 * size of at least 8 bytes.  Records may be split across calls.  The
 * framing state is only updated when the whole buffer is good, so a bad
 * buffer is refused without changing anything.
 */
static int check_records(struct pd_writer *w, const unsigned char *p,
			 size_t len)
{
	unsigned char hdr[8];
	uint32_t have = w->hdr_have;
	uint64_t left = w->rec_left, take;
	uint16_t size;
	size_t pos = 0;

	memcpy(hdr, w->hdr, sizeof(hdr));
	while (pos < len) {
		if (left) {
			take = len - pos < left ? len - pos : left;
			pos += take;
			left -= take;
			continue;
		}
		take = len - pos < 8 - have ? len - pos : 8 - have;
		memcpy(hdr + have, p + pos, take);
		have += (uint32_t)take;
		pos += take;
		if (have < 8)
			break;
		memcpy(&size, hdr + 6, sizeof(size));
		if (size < 8) {
			pr_err("perf.data: record of type %u with size %u refused",
			       (unsigned)(hdr[0] | hdr[1] << 8), size);
			return -EINVAL;
		}
		left = size - 8u;
		have = 0;
	}
	memcpy(w->hdr, hdr, sizeof(hdr));
	w->hdr_have = have;
	w->rec_left = left;
	return 0;
}

static bool mid_record(const struct pd_writer *w)
{
	return w->hdr_have || w->rec_left;
}

PR_HIDDEN int pd_writer_write_whole(struct pd_writer *w, const void *buf,
				    size_t len)
{
	if (!w || (len && !buf) || !w->started || mid_record(w))
		return -EINVAL;
	if (w->err)
		return w->err;
	return len ? append(w, buf, len) : 0;
}

PR_HIDDEN int pd_writer_write(struct pd_writer *w, const void *buf, size_t len)
{
	int ret;

	if (!w || (len && !buf))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started)
		return -EINVAL;
	if (!len)
		return 0;
	ret = check_records(w, buf, len);
	if (ret)
		return ret;
	return append(w, buf, len);
}

PR_HIDDEN int pd_writer_write_auxtrace(struct pd_writer *w, const void *rec,
				       const void *data1, size_t len1,
				       const void *data2, size_t len2)
{
	static const unsigned char zero[8];
	const struct perf_event_header *h = rec;
	uint64_t size, at;
	size_t pad;
	int ret;

	if (!w || !rec || (len1 && !data1) || (len2 && !data2))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started || mid_record(w) || h->type != PD_RECORD_AUXTRACE ||
	    h->size != 48)
		return -EINVAL;
	memcpy(&size, (const unsigned char *)rec + 8, sizeof(size));
	pad = (size_t)(size - len1 - len2);
	if (size < len1 + len2 || pad >= 8)
		return -EINVAL;
	if (!w->pipe && w->nr_aux_idx == w->cap_aux_idx) {
		size_t cap = w->cap_aux_idx ? 2 * w->cap_aux_idx : 64;
		void *n = realloc(w->aux_idx, cap * sizeof(*w->aux_idx));

		if (!n)
			return -ENOMEM;
		w->aux_idx = n;
		w->cap_aux_idx = cap;
	}
	at = w->off + w->used;
	ret = append(w, rec, 48);
	if (!ret)
		ret = append(w, data1, len1);
	if (!ret)
		ret = append(w, data2, len2);
	if (!ret)
		ret = append(w, zero, pad);
	if (ret)
		return ret;
	if (!w->pipe) {
		w->aux_idx[w->nr_aux_idx][0] = at;
		w->aux_idx[w->nr_aux_idx][1] = 48; /* perf: header.size */
		w->nr_aux_idx++;
	}
	return 0;
}

/* ---- checkpoints (file mode) ---- */

/* Where an event description of @len bytes will lie: in a carrier at the
 * end of the data, or in the free slot after its first @fill bytes. */
static uint64_t desc_at(const struct pd_writer *w, uint64_t len, uint64_t fill)
{
	if (len <= PD_CARRIER_MAX)
		return w->off + w->used + PD_CARRIER_HDR;
	return w->slot_off[w->slot_next] + fill;
}

/* Writes it there (desc_at() just before). */
static int desc_write(struct pd_writer *w, const void *p, uint64_t len,
		      uint64_t *fill)
{
	static const unsigned char zero[PD_CARRIER_MIN];
	unsigned char h[PD_CARRIER_HDR];
	uint64_t size, at;
	int ret;

	if (len > PD_CARRIER_MAX) {
		at = w->slot_off[w->slot_next] + *fill;
		ret = pwrite_all(w->fd, p, (size_t)len, at);
		if (ret) {
			pr_err("perf.data: write failed at offset %llu: %s",
			       (unsigned long long)at, strerror(-ret));
			return set_err(w, ret);
		}
		*fill += align_up(len, 8);
		return 0;
	}
	size = align_up(PD_CARRIER_HDR + len, 8);
	if (size < PD_CARRIER_MIN)
		size = PD_CARRIER_MIN;
	put_header(h, PD_RECORD_HEADER_EVENT_TYPE, (uint16_t)size);
	put_u64(h + 8, PRD_CARRIER_TAG);
	ret = append(w, h, sizeof(h));
	if (!ret)
		ret = append(w, p, (size_t)len);
	if (!ret)
		ret = append(w, zero, (size_t)(size - PD_CARRIER_HDR - len));
	return ret;
}

/*
 * Writes the event descriptions (the attr section with the ids,
 * EVENT_DESC, TRACING_DATA) as they are now and notes where in @next: each
 * in a carrier, or when bigger than a record carries, in the slot the
 * header does not point into (all of this round's big ones together, so
 * the other slot is free again once the header points here).  Returns 1
 * when they do not fit there (nothing written), else 0 or -errno.
 */
static int write_descs(struct pd_writer *w, struct pd_ckpt *next,
		       bool *used_slot)
{
	uint64_t alen = attrs_blob_size(w, w->nr_attrs), need = 0, fill = 0;
	struct pd_buf ed = { 0 };
	const unsigned char *td;
	unsigned char *blob = NULL;
	size_t td_len;
	int ret;

	feat_event_desc(w, &ed);
	ret = ed.oom ? -ENOMEM : td_bytes(w, &td, &td_len);
	if (ret)
		goto out;
	need += alen > PD_CARRIER_MAX ? align_up(alen, 8) : 0;
	need += ed.len > PD_CARRIER_MAX ? align_up(ed.len, 8) : 0;
	need += td_len > PD_CARRIER_MAX ? align_up(td_len, 8) : 0;
	if (need > w->slot_cap) {
		if (!w->warned_stall)
			pr_warn("perf.data: the event descriptions (%llu bytes over 64 KiB sections) outgrew the room kept for them (%llu bytes): the file is complete again only at the end of the recording",
				(unsigned long long)need,
				(unsigned long long)w->slot_cap);
		w->warned_stall = true;
		ret = 1;
		goto out;
	}
	blob = malloc((size_t)alen);
	if (!blob) {
		ret = -ENOMEM;
		goto out;
	}
	next->attrs.off =
		attrs_blob(w, w->nr_attrs, desc_at(w, alen, fill), blob);
	next->attrs.len = (uint64_t)w->nr_attrs * PD_FILE_ATTR_SIZE;
	next->nr_attrs = w->nr_attrs;
	ret = desc_write(w, blob, alen, &fill);
	next->bits &= ~(FEAT_BIT(PD_FEAT_EVENT_DESC) |
			FEAT_BIT(PD_FEAT_TRACING_DATA));
	if (!ret && ed.len) {
		next->loc[PD_FEAT_EVENT_DESC] =
			(struct pd_loc){ desc_at(w, ed.len, fill), ed.len };
		next->bits |= FEAT_BIT(PD_FEAT_EVENT_DESC);
		ret = desc_write(w, ed.p, ed.len, &fill);
	}
	if (!ret && td_len) {
		next->loc[PD_FEAT_TRACING_DATA] =
			(struct pd_loc){ desc_at(w, td_len, fill), td_len };
		next->bits |= FEAT_BIT(PD_FEAT_TRACING_DATA);
		ret = desc_write(w, td, td_len, &fill);
	}
	*used_slot = fill > 0;
out:
	free(blob);
	buf_free(&ed);
	return ret;
}

/* Bytes a carrier of @len takes in the data (desc_write()); 0 for what
 * goes to a slot outside it. */
static uint64_t carrier_bytes(uint64_t len)
{
	uint64_t size = align_up(PD_CARRIER_HDR + len, 8);

	if (!len || len > PD_CARRIER_MAX)
		return 0;
	return size < PD_CARRIER_MIN ? PD_CARRIER_MIN : size;
}

PR_HIDDEN uint64_t pd_writer_round_bytes(struct pd_writer *w)
{
	/* the checkpoint's FINISHED_ROUND: its feature table */
	uint64_t fixed = 16u * PD_FEAT_MAX + 16u;
	const unsigned char *td;
	struct pd_buf ed = { 0 };
	size_t td_len = 0;

	if (!w || w->pipe || !w->desc_dirty)
		return fixed;
	if (w->cost_gen == w->desc_gen && w->cost_bytes)
		return w->cost_bytes;
	feat_event_desc(w, &ed);
	if (td_bytes(w, &td, &td_len))
		td_len = 0;
	w->cost_bytes = fixed + carrier_bytes(attrs_blob_size(w, w->nr_attrs)) +
			carrier_bytes(ed.len) + carrier_bytes(td_len);
	w->cost_gen = w->desc_gen;
	buf_free(&ed);
	return w->cost_bytes;
}

/* A round that cannot be a checkpoint still ends with its FINISHED_ROUND. */
static int plain_round(struct pd_writer *w)
{
	unsigned char r[8];
	int ret;

	put_header(r, PD_RECORD_FINISHED_ROUND, 8);
	ret = append(w, r, sizeof(r));
	if (!ret)
		ret = flush(w);
	if (!ret)
		w->round_end = w->off;
	return ret;
}

/*
 * Makes the file describe everything up to here: the round's data (in the
 * buffer), the descriptions that changed, the table record, then the
 * header (see the top of the file).
 */
static int checkpoint(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE], t[16 * PD_FEAT_MAX + 16];
	struct pd_ckpt next = w->ck;
	uint64_t bits, feats[4] = { 0 }, at;
	bool used_slot = false, stime;
	unsigned int n, k;
	size_t size;
	int ret;

	if (w->desc_dirty) {
		ret = w->stalled_gen == w->desc_gen ?
			      1 :
			      write_descs(w, &next, &used_slot);
		if (ret < 0)
			return set_err(w, ret);
		if (ret > 0) {
			w->stalled_gen = w->desc_gen;
			return plain_round(w);
		}
	}
	stime = w->first_time || w->last_time;
	bits = next.bits | FEAT_BIT(0) |
	       (stime ? FEAT_BIT(PD_FEAT_SAMPLE_TIME) : 0);
	n = (unsigned int)__builtin_popcountll(bits);
	size = 16u * n + (stime ? 16u : 0u);
	at = w->off + w->used;
	/* Bit 0's entry is this record's header and a zero. */
	put_header(t, PD_RECORD_FINISHED_ROUND, (uint16_t)size);
	put_u64(t + 8, 0);
	k = 1;
	for (int id = 1; id < PD_FEAT_MAX; id++) {
		struct pd_loc l = next.loc[id];

		if (!(bits & FEAT_BIT(id)))
			continue;
		if (id == PD_FEAT_SAMPLE_TIME)
			l = (struct pd_loc){ at + 16u * n, 16 };
		put_u64(t + 16 * k, l.off);
		put_u64(t + 16 * k + 8, l.len);
		k++;
	}
	if (stime) {
		put_u64(t + 16 * n, w->first_time);
		put_u64(t + 16 * n + 8, w->last_time);
	}
	ret = append(w, t, size);
	if (!ret)
		ret = flush(w);
	if (ret)
		return ret;
	feats[0] = bits;
	file_header(w, h, at - w->data_offset, feats, next.attrs.off,
		    next.nr_attrs);
	ret = pwrite_all(w->fd, h, sizeof(h), 0);
	if (ret) {
		pr_err("perf.data: cannot write the file header: %s",
		       strerror(-ret));
		return set_err(w, ret);
	}
	w->ck = next;
	w->durable_end = w->off;
	w->kept_data_size = at - w->data_offset;
	w->round_end = w->off;
	if (used_slot)
		w->slot_next ^= 1;
	w->desc_dirty = false;
	return 0;
}

PR_HIDDEN int pd_writer_finish_round(struct pd_writer *w)
{
	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started)
		return -EINVAL;
	if (mid_record(w)) {
		pr_err("perf.data: a round cannot end inside a record");
		return -EINVAL;
	}
	/*
	 * No empty rounds: two FINISHED_ROUNDs with nothing between make
	 * perf flush events the next round may still precede.  Changed
	 * descriptions wait for the records that need them.
	 */
	if (w->off + w->used == w->round_end)
		return 0;
	return w->pipe ? plain_round(w) : checkpoint(w);
}

/*
 * Writes perf's layout of the features at @at (the end of the data): the
 * table, then the sections.  Sets the bits of what was written in @bits and
 * the end in *end.
 */
static int write_features(struct pd_writer *w, uint64_t at, bool write,
			  uint64_t bits[4], uint64_t *end)
{
	struct pd_feat f[PD_FEAT_MAX];
	const unsigned char *td;
	unsigned char *table;
	size_t td_len;
	uint64_t pos;
	/* no tracepoint in the file (a command that emitted no application
	 * event): no tracing data, as perf */
	bool tdata = w->has_tdata && has_tracepoints(w);
	int n, nsec, k, ret;

	memset(bits, 0, 4 * sizeof(uint64_t));
	*end = at;
	ret = td_bytes(w, &td, &td_len);
	if (ret)
		return ret;
	n = build_features(w, f, false, FEATS_ALL);
	nsec = n + (tdata ? 1 : 0);
	if (!nsec) {
		free_features(f, n);
		return 0;
	}
	table = calloc((size_t)nsec, 16);
	if (!table) {
		free_features(f, n);
		return -ENOMEM;
	}
	pos = at + (uint64_t)nsec * 16;
	k = 0;
	if (tdata) {
		put_u64(table, pos);
		put_u64(table + 8, td_len);
		pos += td_len;
		bits[0] |= FEAT_BIT(PD_FEAT_TRACING_DATA);
		k = 1;
	}
	for (int i = 0; i < n; i++, k++) {
		put_u64(table + 16 * k, pos);
		put_u64(table + 16 * k + 8, f[i].b.len);
		pos += f[i].b.len;
		bits[f[i].id / 64] |= 1ull << (f[i].id % 64);
	}

	ret = write ? pwrite_all(w->fd, table, (size_t)nsec * 16, at) : 0;
	pos = at + (uint64_t)nsec * 16;
	if (!write) {
		pos += tdata ? td_len : 0;
		for (int i = 0; i < n; i++)
			pos += f[i].b.len;
	} else if (!ret && tdata) {
		ret = pwrite_all(w->fd, td, td_len, pos);
		pos += td_len;
	}
	for (int i = 0; write && !ret && i < n; i++) {
		ret = pwrite_all(w->fd, f[i].b.p, f[i].b.len, pos);
		pos += f[i].b.len;
	}
	free(table);
	free_features(f, n);
	if (ret)
		return ret;
	*end = pos;
	return 0;
}

static void free_writer(struct pd_writer *w)
{
	uint32_t i;

	for (i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	for (size_t s = 0; s < w->nr_tpsys; s++) {
		for (size_t k = 0; k < w->tpsys[s].nr; k++)
			free(w->tpsys[s].text[k]);
		free(w->tpsys[s].text);
		free(w->tpsys[s].len);
		free(w->tpsys[s].name);
	}
	free(w->tpsys);
	free(w->td_full);
	free(w->attrs);
	free(w->aux_idx);
	free(w->argv);
	free(w->tdata);
	free(w->build_ids);
	free(w->groups);
	free(w->buf);
	free(w);
}

/* After a write error: the header on disk describes the file up to the
 * end of the last checkpoint; whatever came after goes. */
static int cut_back(struct pd_writer *w)
{
	if (w->durable_end && truncate_to(w, w->durable_end) < 0)
		pr_warn("perf.data: the data after the last complete round stays in the file but outside data.size");
	return w->err;
}

/* The start's sections and the slots are dead once the final header
 * points after the data: give their blocks back where the file system
 * can (the bytes read as zeros then; a failure changes nothing). */
static void punch_front(struct pd_writer *w)
{
#ifdef FALLOC_FL_PUNCH_HOLE
	uint64_t from = align_up(w->front_off, PD_PAGE);
	uint64_t to = w->data_offset & ~(uint64_t)(PD_PAGE - 1);

	if (to > from &&
	    fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)from, (off_t)(to - from)) < 0)
		pr_debug("perf.data: front region not punched: %s",
			 strerror(errno));
#else
	(void)w;
#endif
}

/*
 * What follows the data at close, perf's layout: the feature table and
 * sections at @data_end, then, when events were added while recording
 * (application events), all attrs again with their ids (the header points
 * there and the start's section stays unused; perf reads the attrs
 * wherever the header says).  With @write false only *end is computed.
 * On success the header for it is in @h and *end is the file's end.
 */
static int write_tail(struct pd_writer *w, uint64_t data_end, bool write,
		      unsigned char *h, uint64_t *end)
{
	uint64_t bits[4], attrs_off = start_attrs_offset(w);
	uint32_t nr_attrs = w->nr_start_attrs;
	int ret;

	ret = write_features(w, data_end, write, bits, end);
	if (!ret && w->nr_attrs > w->nr_start_attrs) {
		uint64_t at = align_up(*end, 8),
			 len = attrs_blob_size(w, w->nr_attrs);
		unsigned char *blob = malloc((size_t)len);

		if (!blob) {
			ret = -ENOMEM;
		} else {
			attrs_off = attrs_blob(w, w->nr_attrs, at, blob);
			nr_attrs = w->nr_attrs;
			if (write)
				ret = pwrite_all(w->fd, blob, (size_t)len, at);
			*end = at + len;
			free(blob);
		}
	}
	if (!ret)
		file_header(w, h, data_end - w->data_offset, bits, attrs_off,
			    nr_attrs);
	return ret;
}

/* Copies @len bytes of the file from @from down to @to (@to + @len <=
 * @from) through the writer's buffer, empty at close. */
static int copy_down(struct pd_writer *w, uint64_t from, uint64_t to,
		     uint64_t len)
{
	while (len) {
		size_t n = len < PD_BUF_SIZE ? (size_t)len : PD_BUF_SIZE;
		ssize_t got = pread(w->fd, w->buf, n, (off_t)from);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		if (pwrite_all(w->fd, w->buf, (size_t)got, to))
			return -EIO;
		from += (uint64_t)got;
		to += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return 0;
}

/*
 * A small recording does not keep the room reserved ahead of its data
 * (the start's sections, dead once the final header points after the
 * data, and the slots for descriptions that might have outgrown a record:
 * ~600 KB of apparent size when application events were possible).  Once
 * the final header is on disk, the data and what follows it are written
 * again right after the start's attrs, entirely below the data the header
 * on disk points to, then a header naming the new place, then the file is
 * cut there: a recorder killed at any instant leaves one of the two
 * complete files.  Not when the data is too big for the room, or when a
 * feature names file offsets of records (AUXTRACE's index).
 */
static void move_data_down(struct pd_writer *w, uint64_t data_end)
{
	unsigned char h[PD_FILE_HEADER_SIZE];
	uint64_t old = w->data_offset, len = data_end - old, end;
	uint64_t to = align_up(w->front_off, 8);

	if (w->nr_aux_idx || to >= old || len > old - to)
		return;
	w->data_offset = to;
	if (write_tail(w, to + len, false, h, &end) || end > old ||
	    copy_down(w, old, to, len) ||
	    write_tail(w, to + len, true, h, &end) ||
	    pwrite_all(w->fd, h, sizeof(h), 0)) {
		/* the header on disk still names the data where it was */
		w->data_offset = old;
		return;
	}
	truncate_to(w, end);
}

static int close_file(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE];
	uint64_t data_end, end;
	int ret;

	if (!w->err && mid_record(w)) {
		pr_err("perf.data: the data ends inside a record; cut back to the last complete round");
		set_err(w, -EINVAL);
	}
	/* The last round, and descriptions added after it. */
	if (!w->err && (w->off + w->used != w->round_end || w->desc_dirty))
		checkpoint(w);
	if (w->err)
		return cut_back(w);

	data_end = w->off;
	ret = write_tail(w, data_end, true, h, &end);
	if (!ret) {
		/* Drop whatever the file held past our end. */
		truncate_to(w, end);
		ret = pwrite_all(w->fd, h, sizeof(h), 0);
	}
	if (ret) {
		pr_err("perf.data: cannot finish the file: %s; it stays as of its last round",
		       strerror(-ret));
		set_err(w, ret);
		return cut_back(w);
	}
	w->kept_data_size = data_end - w->data_offset;
	move_data_down(w, data_end);
	punch_front(w);
	return 0;
}

PR_HIDDEN int pd_writer_set_build_ids(struct pd_writer *w, const void *blob,
				      size_t len)
{
	unsigned char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, blob, len);
	free(w->build_ids);
	w->build_ids = copy;
	w->build_ids_len = len;
	return 0;
}

PR_HIDDEN void pd_writer_set_compressed(struct pd_writer *w, int level,
					uint64_t mmap_len)
{
	w->compressed = true;
	w->comp_level = (uint32_t)level;
	w->comp_mmap_len = mmap_len > UINT32_MAX ? UINT32_MAX :
						   (uint32_t)mmap_len;
}

PR_HIDDEN void pd_writer_compress_ratio(struct pd_writer *w, uint32_t ratio)
{
	w->comp_ratio = ratio;
}

PR_HIDDEN int pd_writer_close(struct pd_writer *w, uint64_t *data_size)
{
	unsigned char r[8];
	int ret;

	if (data_size)
		*data_size = 0;
	if (!w)
		return 0;
	if (!w->started) {
		ret = w->err;
		free_writer(w);
		return ret;
	}
	if (w->pipe) {
		if (!w->err && mid_record(w)) {
			pr_err("perf.data: the data ends inside a record; cut back to the last complete round");
			set_err(w, -EINVAL);
		}
		if (!w->err) {
			/* An empty stream still ends with one round. */
			if (w->off + w->used == w->data_offset) {
				put_header(r, PD_RECORD_FINISHED_ROUND, 8);
				append(w, r, sizeof(r));
			}
			flush(w);
		}
		w->used = 0;
		if (w->err && w->regular &&
		    truncate_to(w, w->base + w->round_end) == 0)
			pr_warn("perf.data: stream cut back to the last complete round");
		w->kept_data_size =
			(w->err ? w->round_end : w->off) - w->data_offset;
		ret = w->err;
	} else {
		ret = close_file(w);
	}
	if (data_size)
		*data_size = w->kept_data_size;
	free_writer(w);
	return ret;
}
