// SPDX-License-Identifier: MIT
/*
 * A file written while recording stays readable (perf_data.c has the
 * layout): at the end of every round the event descriptions that changed
 * go into carriers (or a slot), the round ends with a plain
 * FINISHED_ROUND, the feature table goes into the table record after it,
 * and the header is rewritten to describe all of it.
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

/* ---- checkpoints (file mode) ---- */

/*
 * The id trailer of a carrier or table record at @p, in the first attr's
 * layout (perf takes the first event for an id of 0): the checkpoint
 * task, time 0 (perf delivers it at once, outside the time order, and
 * script --reltime counts from the first real time), ids and CPU 0.
 * Returns its length (0 without sample_id_all).
 */
static uint32_t id_trailer(const struct pd_writer *w, unsigned char *p)
{
	static const struct {
		uint64_t bit, value;
	} field[] = {
		{ PERF_SAMPLE_TID, PD_CKPT_TASK },
		{ PERF_SAMPLE_TIME, 0 },
		{ PERF_SAMPLE_ID, 0 },
		{ PERF_SAMPLE_STREAM_ID, 0 },
		{ PERF_SAMPLE_CPU, 0 },
		{ PERF_SAMPLE_IDENTIFIER, 0 },
	};
	uint64_t st;
	uint32_t n = 0;

	if (!w->nr_attrs || !(attr_u64(&w->attrs[0], 40) & (1ull << 18)))
		return 0;
	st = attr_u64(&w->attrs[0], 24);
	for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++) {
		if (st & field[i].bit) {
			put_u64(p + n, field[i].value);
			n += 8;
		}
	}
	return n;
}

/* Where an event description of @len bytes will lie (PD_TABLE_ALIGN): in
 * a carrier at the end of the data, or in the free slot after its first
 * @fill bytes. */
static uint64_t pd_desc_at(const struct pd_writer *w, uint64_t len,
			   uint64_t fill)
{
	if (len <= PD_CARRIER_MAX)
		return align_up(w->off + w->used + PD_CARRIER_HDR,
				PD_TABLE_ALIGN);
	return align_up(w->slot_off[w->slot_next] + fill, PD_TABLE_ALIGN);
}

/* Writes it there (pd_desc_at() just before). */
static int desc_write(struct pd_writer *w, const void *p, uint64_t len,
		      uint64_t *fill)
{
	static const unsigned char zero[PD_TABLE_ALIGN];
	unsigned char h[PD_CARRIER_HDR], tr[PD_TRAILER_MAX];
	uint32_t tlen = id_trailer(w, tr);
	uint64_t size, at = pd_desc_at(w, len, *fill), pad;
	int ret;

	if (len > PD_CARRIER_MAX) {
		ret = pd_pwrite_all(w->fd, p, (size_t)len, at);
		if (ret) {
			pr_err("perf.data: write failed at offset %llu: %s",
			       (unsigned long long)at, strerror(-ret));
			return pd_set_err(w, ret);
		}
		*fill = at - w->slot_off[w->slot_next] + align_up(len, 8);
		return 0;
	}
	/* zeros after the name up to the aligned section */
	pad = at - (w->off + w->used + PD_CARRIER_HDR);
	size = align_up(PD_CARRIER_HDR + pad + len, 8);
	put_header(h, PD_RECORD_COMM, (uint16_t)(size + tlen));
	put_u64(h + 8, PD_CKPT_TASK);
	put_u64(h + 16, PRD_CARRIER_TAG); /* the name, then its end */
	put_u64(h + 24, 0);
	ret = pd_append(w, h, sizeof(h));
	if (!ret)
		ret = pd_append(w, zero, (size_t)pad);
	if (!ret)
		ret = pd_append(w, p, (size_t)len);
	if (!ret)
		ret = pd_append(w, zero,
				(size_t)(size - PD_CARRIER_HDR - pad - len));
	if (!ret)
		ret = pd_append(w, tr, tlen);
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
static int pd_write_descs(struct pd_writer *w, struct pd_ckpt *next,
			  bool *used_slot)
{
	uint64_t alen = pd_attrs_blob_size(w, w->nr_attrs), need = 0, fill = 0;
	struct pd_buf ed = { 0 };
	const unsigned char *td;
	unsigned char *blob = NULL;
	size_t td_len;
	int ret;

	pd_feat_event_desc(w, &ed);
	ret = ed.oom ? -ENOMEM : pd_td_bytes(w, &td, &td_len);
	if (ret)
		goto out;
	need += alen > PD_CARRIER_MAX ? align_up(alen, PD_TABLE_ALIGN) : 0;
	need += ed.len > PD_CARRIER_MAX ? align_up(ed.len, PD_TABLE_ALIGN) : 0;
	need += td_len > PD_CARRIER_MAX ? align_up(td_len, PD_TABLE_ALIGN) : 0;
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
		pd_attrs_blob(w, w->nr_attrs, pd_desc_at(w, alen, fill), blob);
	next->attrs.len = (uint64_t)w->nr_attrs * PD_FILE_ATTR_SIZE;
	next->nr_attrs = w->nr_attrs;
	ret = desc_write(w, blob, alen, &fill);
	next->bits &= ~(FEAT_BIT(PD_FEAT_EVENT_DESC) |
			FEAT_BIT(PD_FEAT_TRACING_DATA));
	if (!ret && ed.len) {
		next->loc[PD_FEAT_EVENT_DESC] =
			(struct pd_loc){ pd_desc_at(w, ed.len, fill), ed.len };
		next->bits |= FEAT_BIT(PD_FEAT_EVENT_DESC);
		ret = desc_write(w, ed.p, ed.len, &fill);
	}
	if (!ret && td_len) {
		next->loc[PD_FEAT_TRACING_DATA] =
			(struct pd_loc){ pd_desc_at(w, td_len, fill), td_len };
		next->bits |= FEAT_BIT(PD_FEAT_TRACING_DATA);
		ret = desc_write(w, td, td_len, &fill);
	}
	*used_slot = fill > 0;
out:
	free(blob);
	pd_buf_free(&ed);
	return ret;
}

/* Bytes a carrier of @len takes in the data (desc_write()); 0 for what
 * goes to a slot outside it. */
static uint64_t pd_carrier_bytes(uint64_t len)
{
	if (!len || len > PD_CARRIER_MAX)
		return 0;
	return align_up(PD_CARRIER_HDR + len, 8) + PD_TABLE_ALIGN +
	       PD_TRAILER_MAX;
}

PR_HIDDEN uint64_t pd_writer_round_bytes(struct pd_writer *w)
{
	/* the round's FINISHED_ROUND, the checkpoint's table record */
	uint64_t fixed = 8u + 16u * PD_FEAT_MAX + 16u + PD_TRAILER_MAX;
	const unsigned char *td;
	struct pd_buf ed = { 0 };
	size_t td_len = 0;

	if (!w || w->pipe || !w->desc_dirty)
		return fixed;
	if (w->cost_gen == w->desc_gen && w->cost_bytes)
		return w->cost_bytes;
	pd_feat_event_desc(w, &ed);
	if (pd_td_bytes(w, &td, &td_len))
		td_len = 0;
	w->cost_bytes = fixed +
			pd_carrier_bytes(pd_attrs_blob_size(w, w->nr_attrs)) +
			pd_carrier_bytes(ed.len) + pd_carrier_bytes(td_len);
	w->cost_gen = w->desc_gen;
	pd_buf_free(&ed);
	return w->cost_bytes;
}

/* A round that cannot be a checkpoint still ends with its FINISHED_ROUND. */
static int pd_plain_round(struct pd_writer *w)
{
	unsigned char r[8];
	int ret;

	put_header(r, PD_RECORD_FINISHED_ROUND, 8);
	ret = pd_append(w, r, sizeof(r));
	if (!ret)
		ret = pd_flush(w);
	if (!ret)
		w->round_end = w->off;
	return ret;
}

/*
 * Makes the file describe everything up to here: the round's data (in the
 * buffer), the descriptions that changed, the table record, then the
 * header (see the top of the file).
 */
int pd_checkpoint(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE],
		t[8 + 16 * PD_FEAT_MAX + 16 + PD_TRAILER_MAX], *tb = t + 8;
	struct pd_ckpt next = w->ck;
	uint64_t bits, feats[4] = { 0 }, at;
	bool used_slot = false, stime;
	unsigned int n, k;
	size_t size;
	int ret;

	if (w->desc_dirty) {
		ret = w->stalled_gen == w->desc_gen ?
			      1 :
			      pd_write_descs(w, &next, &used_slot);
		if (ret < 0)
			return pd_set_err(w, ret);
		if (ret > 0) {
			w->stalled_gen = w->desc_gen;
			return pd_plain_round(w);
		}
	}
	stime = w->first_time || w->last_time;
	bits = next.bits | FEAT_BIT(0) |
	       (stime ? FEAT_BIT(PD_FEAT_SAMPLE_TIME) : 0);
	n = (unsigned int)__builtin_popcountll(bits);
	size = 16u * n + (stime ? 16u : 0u);
	size += id_trailer(w, tb + size);
	/* The round ends with a plain FINISHED_ROUND, the table follows. */
	put_header(t, PD_RECORD_FINISHED_ROUND, 8);
	at = w->off + w->used + 8;
	/* Bit 0's entry is this record's header and its pid and tid. */
	put_header(tb, PD_RECORD_COMM, (uint16_t)size);
	put_u64(tb + 8, PD_CKPT_TASK);
	k = 1;
	for (int id = 1; id < PD_FEAT_MAX; id++) {
		struct pd_loc l = next.loc[id];

		if (!(bits & FEAT_BIT(id)))
			continue;
		if (id == PD_FEAT_SAMPLE_TIME)
			l = (struct pd_loc){ at + 16u * n, 16 };
		put_u64(tb + 16 * k, l.off);
		put_u64(tb + 16 * k + 8, l.len);
		k++;
	}
	if (stime) {
		put_u64(tb + 16 * n, w->first_time);
		put_u64(tb + 16 * n + 8, w->last_time);
	}
	ret = pd_append(w, t, 8 + size);
	if (!ret)
		ret = pd_flush(w);
	if (ret)
		return ret;
	feats[0] = bits;
	pd_file_header(w, h, at - w->data_offset, feats, next.attrs.off,
		       next.nr_attrs);
	ret = pd_pwrite_all(w->fd, h, sizeof(h), 0);
	if (ret) {
		pr_err("perf.data: cannot write the file header: %s",
		       strerror(-ret));
		return pd_set_err(w, ret);
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
	if (pd_mid_record(w)) {
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
	return w->pipe ? pd_plain_round(w) : pd_checkpoint(w);
}
