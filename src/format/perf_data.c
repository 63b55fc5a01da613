// SPDX-License-Identifier: MIT
/*
 * perf.data writer: the PERFILE2 file format and perf's pipe format, as
 * perf 6.1 reads them (tools/perf/util/header.c, session.c).  This file
 * holds the writer; perf_data_internal.h lists the others.
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
 *          (the attrs with their ids, EVENT_DESC, TRACING_DATA), a plain
 *          8-byte PERF_RECORD_FINISHED_ROUND, then the table record: the
 *          feature table (feature bit 0's 16-byte entry is the record's
 *          own header and the u64 of pid and tid), the SAMPLE_TIME
 *          section and the id trailer.  Carriers and table records are
 *          PERF_RECORD_COMMs of task PRD_CKPT_TID (-2, which no kernel
 *          record names; -1 is an exiting task's), with a time of 0:
 *          the one record type perf and hotspot's perfparser both read
 *          without a word (perfparser warns at a FINISHED_ROUND with
 *          content and at any type it does not handle, HEADER_EVENT_TYPE
 *          included); perf delivers a time of 0 at once, outside the time
 *          order, and shows such a task only with --show-task-events and
 *          --tasks (named PRFRCKPT or, a table record, empty: the
 *          sections a table names start at PD_TABLE_ALIGN).  Our readers
 *          skip them.
 *
 * data.size ends where the newest table record starts, so perf finds the
 * table at data.offset + data.size, as it wants; the sections and the attrs
 * it points to lie in the front, a slot, a carrier or that record, all
 * written before the header is.  No byte the current header points to is
 * written again while it does (a changed description goes to a new
 * carrier, or to the slot the header does not use), so a recorder killed
 * at any instant leaves a header that describes a complete file: every
 * round up to its last checkpoint.  perf 6.1 and perfparser see one
 * plain FINISHED_ROUND per round; perf ignores feature bit 0
 * (HEADER_RESERVED has no reader).  An event description bigger than one
 * record's 64 KiB goes to the free slot; when no slot has room, rounds go
 * on but the header stays at the last checkpoint until close (warned).
 * The pieces were checked with perf 6.1: report, script, report --stats,
 * --header-only (docs/design.md section 9).
 *
 * At close: a last checkpoint, then what perf itself writes: the feature
 * table at the end of the data (after the last table record, which stays
 * as a COMM), the sections after it, then all attrs again when
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
#include "perf_data_internal.h"

/* ---- payload buffers ---- */

static void *pd_buf_grow(struct pd_buf *b, size_t len)
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

void pd_buf_add(struct pd_buf *b, const void *data, size_t len)
{
	void *p;

	if (!len)
		return;
	p = pd_buf_grow(b, len);
	if (p)
		memcpy(p, data, len);
}

static void pd_buf_zero(struct pd_buf *b, size_t len)
{
	void *p;

	if (!len)
		return;
	p = pd_buf_grow(b, len);
	if (p)
		memset(p, 0, len);
}

void pd_buf_u32(struct pd_buf *b, uint32_t v)
{
	pd_buf_add(b, &v, sizeof(v));
}

void pd_buf_u64(struct pd_buf *b, uint64_t v)
{
	pd_buf_add(b, &v, sizeof(v));
}

/* perf's do_write_string(): u32 len = ALIGN(strlen + 1, 64), then the
 * string and NULs up to len. */
void pd_buf_str(struct pd_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t len = align_up(n, PD_NAME_ALIGN);

	pd_buf_u32(b, (uint32_t)len);
	pd_buf_add(b, s, n);
	pd_buf_zero(b, len - n);
}

void pd_buf_free(struct pd_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- output ---- */

int pd_set_err(struct pd_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* Writes all of @len at the output position or fails; the position
 * advances by what the kernel took, also on failure. */
static int pd_out_raw(struct pd_writer *w, const void *data, size_t len)
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

int pd_out(struct pd_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	ret = pd_out_raw(w, data, len);
	if (ret < 0) {
		pr_err("perf.data: write failed at offset %llu: %s",
		       (unsigned long long)w->off, strerror(-ret));
		return pd_set_err(w, ret);
	}
	return 0;
}

int pd_flush(struct pd_writer *w)
{
	int ret;

	if (w->err)
		return w->err;
	ret = w->used ? pd_out(w, w->buf, w->used) : 0;
	w->used = 0;
	return ret;
}

int pd_append(struct pd_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	if (!len)
		return 0;
	if (len > PD_BUF_SIZE - w->used) {
		ret = pd_flush(w);
		if (ret)
			return ret;
	}
	if (len >= PD_BUF_SIZE)
		return pd_out(w, data, len);
	memcpy(w->buf + w->used, data, len);
	w->used += len;
	return 0;
}

int pd_append_zeros(struct pd_writer *w, uint64_t align)
{
	static const unsigned char zero[PD_TABLE_ALIGN];
	uint64_t at = w->off + w->used;

	if (align > sizeof(zero))
		return -EINVAL;
	return pd_append(w, zero, (size_t)(align_up(at, align) - at));
}

/* pwrite() of all of @len at @off, without touching the stream state. */
int pd_pwrite_all(int fd, const void *data, size_t len, uint64_t off)
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

static int pd_truncate_to(struct pd_writer *w, uint64_t off)
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
	w->td_parsed = pd_td_parse(w);
	pd_td_stale(w);
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
	pd_td_stale(w);
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

PR_HIDDEN int pd_writer_start(struct pd_writer *w)
{
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
	if (w->pipe && pd_has_tracepoints(w) && !w->has_tdata) {
		pr_err("perf.data: tracepoint events need the tracing data before the start");
		return -EINVAL;
	}
	ret = w->pipe ? pd_start_pipe(w) : pd_start_file(w);
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
	 * refuses a data size of 0), it starts with an empty round, the
	 * checkpoint's FINISHED_ROUND.
	 */
	return pd_checkpoint(w);
}

/*
 * Checks that @len bytes continue the record stream: every header has a
 * size of at least 8 bytes.  Records may be split across calls.  The
 * framing state is only updated when the whole buffer is good, so a bad
 * buffer is refused without changing anything.
 */
static int pd_check_records(struct pd_writer *w, const unsigned char *p,
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

bool pd_mid_record(const struct pd_writer *w)
{
	return w->hdr_have || w->rec_left;
}

PR_HIDDEN int pd_writer_write_whole(struct pd_writer *w, const void *buf,
				    size_t len)
{
	if (!w || (len && !buf) || !w->started || pd_mid_record(w))
		return -EINVAL;
	if (w->err)
		return w->err;
	return len ? pd_append(w, buf, len) : 0;
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
	ret = pd_check_records(w, buf, len);
	if (ret)
		return ret;
	return pd_append(w, buf, len);
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
	if (!w->started || pd_mid_record(w) || h->type != PD_RECORD_AUXTRACE ||
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
	ret = pd_append(w, rec, 48);
	if (!ret)
		ret = pd_append(w, data1, len1);
	if (!ret)
		ret = pd_append(w, data2, len2);
	if (!ret)
		ret = pd_append(w, zero, pad);
	if (ret)
		return ret;
	if (!w->pipe) {
		w->aux_idx[w->nr_aux_idx][0] = at;
		w->aux_idx[w->nr_aux_idx][1] = 48; /* perf: header.size */
		w->nr_aux_idx++;
	}
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
static int pd_cut_back(struct pd_writer *w)
{
	if (w->durable_end && pd_truncate_to(w, w->durable_end) < 0)
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
	uint64_t bits[4], attrs_off = pd_start_attrs_offset(w);
	uint32_t nr_attrs = w->nr_start_attrs;
	int ret;

	ret = pd_write_features(w, data_end, write, bits, end);
	if (!ret && w->nr_attrs > w->nr_start_attrs) {
		uint64_t at = align_up(*end, 8),
			 len = pd_attrs_blob_size(w, w->nr_attrs);
		unsigned char *blob = malloc((size_t)len);

		if (!blob) {
			ret = -ENOMEM;
		} else {
			attrs_off = pd_attrs_blob(w, w->nr_attrs, at, blob);
			nr_attrs = w->nr_attrs;
			if (write)
				ret = pd_pwrite_all(w->fd, blob, (size_t)len,
						    at);
			*end = at + len;
			free(blob);
		}
	}
	if (!ret)
		pd_file_header(w, h, data_end - w->data_offset, bits, attrs_off,
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
		if (pd_pwrite_all(w->fd, w->buf, (size_t)got, to))
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
	    pd_pwrite_all(w->fd, h, sizeof(h), 0)) {
		/* the header on disk still names the data where it was */
		w->data_offset = old;
		return;
	}
	pd_truncate_to(w, end);
}

static int close_file(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE];
	uint64_t data_end, end;
	int ret;

	if (!w->err && pd_mid_record(w)) {
		pr_err("perf.data: the data ends inside a record; cut back to the last complete round");
		pd_set_err(w, -EINVAL);
	}
	/* The last round, and descriptions added after it. */
	if (!w->err && (w->off + w->used != w->round_end || w->desc_dirty))
		pd_checkpoint(w);
	if (w->err)
		return pd_cut_back(w);

	data_end = w->off;
	ret = write_tail(w, data_end, true, h, &end);
	if (!ret) {
		/* Drop whatever the file held past our end. */
		pd_truncate_to(w, end);
		ret = pd_pwrite_all(w->fd, h, sizeof(h), 0);
	}
	if (ret) {
		pr_err("perf.data: cannot finish the file: %s; it stays as of its last round",
		       strerror(-ret));
		pd_set_err(w, ret);
		return pd_cut_back(w);
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
		if (!w->err && pd_mid_record(w)) {
			pr_err("perf.data: the data ends inside a record; cut back to the last complete round");
			pd_set_err(w, -EINVAL);
		}
		if (!w->err) {
			/* An empty stream still ends with one round. */
			if (w->off + w->used == w->data_offset) {
				put_header(r, PD_RECORD_FINISHED_ROUND, 8);
				pd_append(w, r, sizeof(r));
			}
			pd_flush(w);
		}
		w->used = 0;
		if (w->err && w->regular &&
		    pd_truncate_to(w, w->base + w->round_end) == 0)
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
