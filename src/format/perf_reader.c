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
#include "read_progress.h"
#include "../common/log.h"
#include "../common/load.h"
#include "perf_reader.h"
#include "perf_reader_internal.h"

PR_PRINTF(3, 4)
int prd_damage(struct prd_file *f, uint64_t off, const char *fmt, ...)
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

int prd_io_error(struct prd_file *f, uint64_t off, int err)
{
	pr_err("%s: read error at offset %#llx: %s", f->name, ull(off),
	       strerror(-err));
	return err;
}

/* ---- record types ---- */

static const char *const prd_type_names[128] = {
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
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
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

PR_HIDDEN const char *prd_type_name(uint32_t type)
{
	return type < 128 ? prd_type_names[type] : NULL;
}

bool prd_kernel_type(uint32_t type)
{
	return type && type < PRD_REC_HEADER_ATTR;
}

/* ---- low-level input ---- */

int prd_pread_full(struct prd_file *f, void *dst, size_t len, uint64_t off)
{
	unsigned char *d = dst;

	while (len) {
		ssize_t n = pread(f->fd, d, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return prd_io_error(f, off, -errno);
		}
		if (n == 0)
			return prd_damage(f, off, "unexpected end of file");
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
int prd_fill(struct prd_file *f, size_t need)
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
		if (!f->stream) {
			f->rd_off += (uint64_t)n;
			prd_read_progress(f->name, f->rd_off - f->start_off,
					  f->limit - f->start_off);
		}
	}
	return 0;
}

/* Seekable input: bytes from the current position to the limit. */
static uint64_t bytes_left(const struct prd_file *f)
{
	return (f->end - f->pos) + (f->limit - f->rd_off);
}

void prd_consume(struct prd_file *f, size_t n)
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
			ret = prd_fill(f, 1);
			if (ret)
				return ret;
			have = f->end - f->pos;
		}
		take_n = have < n - done ? have : (size_t)(n - done);
		if (dst && done < dst_len)
			memcpy(dst + done, f->buf + f->pos,
			       dst_len - done < take_n ? dst_len - done :
							 take_n);
		prd_consume(f, take_n);
		done += take_n;
	}
	return 0;
}

/* Hands @rec to the callback with its view (decoded here: a queued
 * record's view is decoded when it leaves the queue). */
int prd_deliver(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		uint64_t off, bool has_sample)
{
	struct prd_event ev = {
		.hdr = (const struct perf_event_header *)(const void *)rec,
		.offset = off,
		.sample = has_sample ? &f->sample : NULL,
		.rec = &f->view,
	};
	uint32_t type = ev.hdr->type;
	int ret;

	if (type == PERF_RECORD_SAMPLE || type >= 128 || !prd_type_names[type])
		f->view.header = *ev.hdr;
	else
		prd_record_decode(rec,
				  prd_own_size(f, rec, ev.hdr->size, ev.sample),
				  &f->view);
	ret = pc->fn(f, &ev, pc->ctx);

	return ret < 0 ? ret : 0;
}

/* ---- records ---- */

int prd_apply_header_attr(struct prd_file *f, const unsigned char *rec,
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
		return prd_damage(f, off,
				  "HEADER_ATTR of %u bytes with attr size %u",
				  size, asz);
	bad = prd_attr_fits(f, rec + 8);
	if (bad)
		return prd_damage(f, off, "HEADER_ATTR: %s", bad);
	ret = prd_add_attr(f, rec + 8, asz, rec + 8 + asz,
			   (size - 8 - asz) / 8);
	if (ret == -E2BIG)
		return prd_damage(f, off, "more than %u attrs", PRD_MAX_ATTRS);
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
	a = prd_ids_find(f, id);
	if (!a)
		return 0;
	n = strnlen((const char *)name, size - 24);
	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	memcpy(s, name, n);
	s[n] = '\0';
	return prd_set_name(a, s, true);
}

static int apply_feature_record(struct prd_file *f, const unsigned char *rec,
				uint32_t size, uint64_t off)
{
	uint64_t feat = ld64(rec + 8);
	const unsigned char *p = rec + 16;
	size_t len = size - 16;

	if (size < 16)
		return prd_damage(f, off, "FEATURE record of %u bytes", size);
	if (!feat || feat >= PRD_FEAT_LAST) {
		pr_debug("%s: offset %#llx: feature %llu unknown, skipped",
			 f->name, ull(off), ull(feat));
		return 0;
	}
	if (!prd_check_feature(f, (int)feat, p, len)) {
		/* as in a file's feature section: ignored, as perf does */
		pr_warn("%s: stream offset %#llx: FEATURE %s (%llu bytes) is malformed: ignored, as perf ignores it",
			f->name, ull(off), prd_feat_names[feat], ull(len));
		f->features_damaged = true;
		return 0;
	}
	return prd_store_feature(f, (int)feat, p, len);
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
				return prd_damage(
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
			return prd_damage(
				f, off, "PERF_RECORD_COMPRESSED: zstd says: %s",
				ZSTD_getErrorName(r));
		f->zkeep = out.pos;
	}
	f->in_compressed = true;
	while (f->zkeep - pos >= 8) {
		const unsigned char *rec = f->zbuf + pos;
		uint32_t size = ld16(rec + 6);
		uint64_t payload;

		if (size < 8) {
			ret = prd_damage(
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
			ret = prd_damage(
				f, off,
				"PERF_RECORD_%s inside a compressed record announces %llu bytes after it",
				prd_type_names[ld32(rec)], ull(payload));
		if (ret)
			break;
		pos += size;
	}
	f->in_compressed = false;
	memmove(f->zbuf, f->zbuf + pos, f->zkeep - pos);
	f->zkeep -= pos;
	return ret;
}

/*
 * Counts @rec and checks it holds its type's fixed fields and the
 * variable parts they announce: 0, 1 for a type this reader does not know
 * (counted and skipped: only handed on), or -EBADMSG.
 */
static int check_record(struct prd_file *f, const unsigned char *rec,
			uint32_t size, uint64_t off)
{
	uint32_t type = ld32(rec);
	const char *why;

	f->st.nr_records++;
	f->st.data_bytes += size;
	if (type >= 128 || !prd_type_names[type]) {
		f->counts[0]++;
		f->st.nr_unknown_type++;
		if (f->warned_unknown++ < 5)
			pr_warn("%s: offset %#llx: record of unknown type %u (%u bytes) skipped",
				f->name, ull(off), type, size);
		return 1;
	}
	f->counts[type]++;
	if (size < prd_record_min_size(type))
		return prd_damage(
			f, off,
			"PERF_RECORD_%s of %u bytes is shorter than its fixed fields (%u bytes)",
			prd_type_names[type], size, prd_record_min_size(type));
	why = prd_record_check(rec, size);
	if (why)
		return prd_damage(
			f, off,
			"PERF_RECORD_%s of %u bytes: its %s does not fit",
			prd_type_names[type], size, why);
	return 0;
}

/* One sample's fields do not add up: that sample is skipped and counted,
 * the records around it are fine. */
static void bad_sample(struct prd_file *f, uint64_t off, uint32_t size,
		       const char *why)
{
	if (!f->st.nr_bad_samples++)
		f->st.bad_sample_offset = off;
	if (f->st.nr_bad_samples <= 5 && !f->quiet)
		pr_warn("%s: %s offset %#llx: PERF_RECORD_SAMPLE of %u bytes: its %s does not fit: skipped%s",
			f->name, f->pipe ? "stream" : "file", ull(off), size,
			why,
			f->st.nr_bad_samples == 5 ?
				" (further ones are only counted)" :
				"");
}

/* A decoded sample (f->sample) counted for its event. */
static void count_sample(struct prd_file *f, uint64_t off, bool unknown_id)
{
	const struct prd_attr *a = f->sample.attr;

	if (unknown_id) {
		f->st.nr_unknown_id++;
		if (!f->warned_unknown_id) {
			pr_warn("%s: offset %#llx: sample with id %llu that no event has (counted, not decoded)",
				f->name, ull(off), ull(f->sample.id));
			f->warned_unknown_id = true;
		}
		return;
	}
	if (a->attr.sample_type & PERF_SAMPLE_READ)
		prd_count_read_sample(f, &f->sample);
	else
		((struct prd_attr *)a)->nr_samples++;
	if ((a->attr.sample_type & ~PRD_SAMPLE_KNOWN) &&
	    !f->warned_sample_bits) {
		pr_warn("%s: sample_type %#llx has bits this reader does not know; fields after the known ones are not decoded",
			f->name, ull(a->attr.sample_type));
		f->warned_sample_bits = true;
	}
}

/*
 * What a record says about the file and its counts (@has: whether
 * f->sample holds its sample or trailer): 0 or -errno; *@payload: the
 * bytes that follow it outside header.size.
 */
static int apply_record(struct prd_file *f, const unsigned char *rec,
			uint32_t size, uint64_t off, int has, uint64_t *payload)
{
	int ret = 0;

	switch (ld32(rec)) {
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
			ret = prd_apply_header_attr(f, rec, size, off);
			if (!ret)
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
		break;
	case PRD_REC_HEADER_FEATURE:
		ret = apply_feature_record(f, rec, size, off);
		break;
	default:
		break;
	}
	return ret;
}

static int handle(struct prd_file *f, struct proc *pc, const unsigned char *rec,
		  uint32_t size, uint64_t off, uint64_t *payload)
{
	uint32_t type = ld32(rec);
	const char *why = NULL;
	bool unknown_id;
	int has, ret;

	*payload = 0;
	ret = check_record(f, rec, size, off);
	if (ret > 0)
		return pc->fn ? prd_deliver(f, pc, rec, off, false) : 0;
	if (ret)
		return ret;
	has = prd_describe(f, rec, size, &unknown_id, &why);
	if (has < 0 && type == PERF_RECORD_SAMPLE) {
		bad_sample(f, off, size, why);
		return 0;
	}
	if (has < 0)
		return prd_damage(
			f, off,
			"PERF_RECORD_%s of %u bytes: its %s does not fit",
			prd_type_names[type], size, why);
	if (type == PERF_RECORD_SAMPLE) {
		count_sample(f, off, unknown_id);
	} else if (type == PRD_REC_COMPRESSED) {
		f->st.nr_compressed++;
		if (f->in_compressed)
			return prd_damage(
				f, off,
				"PERF_RECORD_COMPRESSED inside a compressed record");
		ret = pc->fn ? prd_deliver(f, pc, rec, off, false) : 0;
		return ret ? ret : inflate(f, pc, rec + 8, size - 8, off);
	} else {
		ret = apply_record(f, rec, size, off, has, payload);
		if (ret)
			return ret;
	}
	if (!pc->fn)
		return 0;
	/* the checkpoint's records are the file's, not a thread's */
	if (type == PERF_RECORD_COMM && !f->show_ckpt &&
	    prd_is_checkpoint_record(rec, size))
		return 0;
	if (pc->ordered && type == PRD_REC_FINISHED_ROUND) {
		ret = prd_queue_flush(f, pc, f->next_flush);
		f->next_flush = f->max_ts;
		if (ret)
			return ret;
	}
	if (pc->ordered && has > 0 && f->sample.time &&
	    f->sample.time != UINT64_MAX)
		return prd_queue_add(f, pc, rec, size, off, f->sample.time);
	return prd_deliver(f, pc, rec, off, has > 0);
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
	if (p && !prd_parse_tracing_data(f, p, have))
		pr_warn("%s: offset %#llx: tracing data malformed: tracepoint names unknown",
			f->name, ull(off));
	prd_rename_derived(f);
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

		ret = prd_fill(f, 8);
		if (ret < 0)
			return prd_io_error(f, f->off, ret);
		if (ret > 0) {
			if (f->end == f->pos)
				break;
			return prd_damage(
				f, f->off,
				"the data ends %zu bytes into a record header",
				f->end - f->pos);
		}
		rec = f->buf + f->pos;
		off = f->off;
		type = ld32(rec);
		size = ld16(rec + 6);
		if (size < 8)
			return prd_damage(
				f, off,
				"record of type %u with size %u (less than its 8-byte header)",
				type, size);
		ret = prd_fill(f, size);
		if (ret < 0)
			return prd_io_error(f, off, ret);
		if (ret > 0)
			return prd_damage(
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
		prd_consume(f, size);
		if (!payload)
			continue;
		if (!f->stream && payload > bytes_left(f))
			return prd_damage(
				f, off,
				"PERF_RECORD_%s announces %llu bytes after it, past the end of the data (%llu bytes left)",
				prd_type_names[type], ull(payload),
				ull(bytes_left(f)));
		if (type == PRD_REC_HEADER_TRACING_DATA)
			ret = read_tracing_payload(f, payload, off);
		else
			ret = pass_bytes(f, payload, NULL, 0);
		f->st.data_bytes += payload;
		if (ret < 0)
			return prd_io_error(f, off, ret);
		if (ret > 0)
			return prd_damage(
				f, off,
				"the input ends inside the %llu bytes that follow PERF_RECORD_%s",
				ull(payload), prd_type_names[type]);
	}
	if (f->zkeep)
		return prd_damage(
			f, f->off,
			"the compressed records end %zu bytes into a record",
			f->zkeep);
	if (!f->pipe && f->off < f->data_end)
		return prd_damage(
			f, f->off,
			"the file ends here but its data section ends at %#llx (truncated file)",
			ull(f->data_end));
	return 0;
}

static void prd_reset_processing(struct prd_file *f)
{
	memset(f->counts, 0, sizeof(f->counts));
	memset(&f->st, 0, sizeof(f->st));
	for (uint32_t i = 0; i < f->nr_attrs; i++) {
		f->attrs[i]->pub.nr_samples = 0;
		f->attrs[i]->lost_samples = 0;
	}
	if (f->ht_cap)
		memset(f->ht_period, 0, f->ht_cap * sizeof(*f->ht_period));
	prd_queue_reset(f);
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

PR_HIDDEN bool prd_is_checkpoint_record(const void *rec, uint32_t size)
{
	const unsigned char *r = rec;

	return size >= 16 && ld32(r) == PERF_RECORD_COMM &&
	       (int32_t)ld32(r + 8) == PRD_CKPT_TID &&
	       (int32_t)ld32(r + 12) == PRD_CKPT_TID;
}

PR_HIDDEN void prd_show_checkpoints(struct prd_file *f)
{
	f->show_ckpt = true;
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
		prd_reset_processing(f);
	}
	f->processed = true;
	ret = run(f, &pc);
	if (pc.ordered && (ret == 0 || ret == -EBADMSG)) {
		fret = prd_queue_flush(f, &pc, UINT64_MAX);
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
