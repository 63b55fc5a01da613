// SPDX-License-Identifier: MIT
/*
 * perfring record: the rings' waiting bytes into the writer (record.c says
 * how), --max-size's cut, the application rings' statistics.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <asm/perf_regs.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../coresight/aux_source.h"
#include "../fleet/fleet.h"
#include "../format/compress.h"
#include "../format/out_file.h"
#include "../format/perf_data.h"
#include "../format/perf_record.h"
#include "../format/tracing_data.h"
#include "../sources/app_session.h"
#include "../sources/evparse.h"
#include "../sources/perf_event.h"
#include "../sources/child.h"
#include "control.h"
#include "dso_hits.h"
#include "offcpu.h"
#include "../sources/session.h"
#include "switch_output.h"
#include "synth.h"
#include "tracefs_source.h"
#include "record_internal.h"

uint64_t record_now_ms(void)
{
	return perfring_clock_ns() / 1000000ull;
}

/* Reads @n bytes at @off of the two pieces as one range. */
static void piece_read(const void *const ptr[2], const size_t len[2],
		       int pieces, size_t off, void *dst, size_t n)
{
	const unsigned char *p0 = ptr[0], *p1 = pieces > 1 ? ptr[1] : NULL;

	for (size_t i = 0; i < n; i++, off++)
		((unsigned char *)dst)[i] = off < len[0] ? p0[off] :
							   p1[off - len[0]];
}

/*
 * --max-size: the bytes of whole records from @off of the pieces (@total
 * bytes) that fit in @room; *@rest gets the number of records after them.
 */
static size_t records_within(const void *const ptr[2], const size_t len[2],
			     int pieces, size_t total, uint64_t room,
			     uint64_t *rest)
{
	size_t off = 0, cut = 0;

	*rest = 0;
	while (off + sizeof(struct perf_event_header) <= total) {
		struct perf_event_header h;

		piece_read(ptr, len, pieces, off, &h, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > total)
			break;
		off += h.size;
		if (off <= room && !*rest)
			cut = off;
		else
			(*rest)++;
	}
	return cut;
}

/* Room --max-size leaves for more records (UINT64_MAX: no limit). */
uint64_t record_max_size_room(const struct session *s)
{
	uint64_t have;

	if (!s->max_size)
		return UINT64_MAX;
	if (s->max_size_hit)
		return 0;
	/* the round that writes them and the last one: their checkpoints */
	have = pd_writer_data_bytes(s->w) + 2 * pd_writer_round_bytes(s->w);
	return have < s->max_size ? s->max_size - have : 0;
}

/* @len bytes of records from the pieces would pass --max-size: the
 * pieces cut back to the records that fit, the rest counted. */
void record_max_size_cut(struct session *s, const void *const ptr[2],
			 size_t len[2], int pieces, uint64_t room)
{
	size_t total = len[0] + (pieces > 1 ? len[1] : 0), cut;
	uint64_t rest;

	cut = records_within(ptr, len, pieces, total, room, &rest);
	if (cut < len[0])
		len[0] = cut;
	if (pieces > 1)
		len[1] = cut > len[0] ? cut - len[0] : 0;
	s->max_size_hit = true;
	s->st.max_size_dropped += rest;
	s->st.max_size_dropped_bytes += total - cut;
}

/* Counts what the kernel wrote: samples, lost, time range. */
static void scan(struct session *s, const void *const ptr[2],
		 const size_t len[2], int pieces)
{
	size_t total = len[0] + (pieces > 1 ? len[1] : 0), off = 0;
	struct prd_sample_pos pos;

	/* every event samples the same fields */
	prd_sample_positions(
		s->el.nr_events ? s->events[0].attr.sample_type : 0, &pos);
	while (off + sizeof(struct perf_event_header) <= total) {
		/* a LOST record with the longest sample_id_all trailer */
		unsigned char rec[72];
		struct perf_event_header h;
		union prd_record lost;
		uint64_t v;

		piece_read(ptr, len, pieces, off, &h, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > total)
			break; /* the reader already checked; be safe */
		s->st.records++;
		if (s->hits)
			dso_hits_note_pieces(s->hits, ptr, len, pieces, off,
					     h.size);
		if (s->fleet)
			fleet_feed_pieces(s->fleet, ptr, len, pieces, off,
					  h.size);
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			s->st.samples++;
			if (pos.time && h.size >= pos.time + 8u) {
				piece_read(ptr, len, pieces, off + pos.time, &v,
					   8);
				if (!s->first_time || v < s->first_time)
					s->first_time = v;
				if (v > s->last_time)
					s->last_time = v;
			}
			break;
		case PERF_RECORD_LOST:
			s->st.lost_records++;
			if (h.size > sizeof(rec))
				break;
			piece_read(ptr, len, pieces, off, rec, h.size);
			if (prd_record_view(rec, h.size, &lost))
				s->st.lost += lost.lost.lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h.size > sizeof(rec))
				break;
			piece_read(ptr, len, pieces, off, rec, h.size);
			if (prd_record_view(rec, h.size, &lost))
				s->st.lost_samples += lost.lost_samples.lost;
			break;
		default:
			break;
		}
		off += h.size;
	}
}

/* One ring: everything waiting goes to the file in at most two writes. */
static int drain(struct session *s, struct pe_buffer *b)
{
	const void *ptr[2];
	size_t len[2];
	int64_t avail;
	int pieces, err = 0;

	avail = perfring_read_begin(b->ring);
	if (avail <= 0)
		return avail == -EBADMSG ? 0 : (int)avail;
	pieces = perfring_read_range(b->ring, ptr, len);
	if (pieces > 0 && (uint64_t)avail > record_max_size_room(s))
		record_max_size_cut(s, ptr, len, pieces,
				    record_max_size_room(s));
	if (pieces > 0 && len[0] + (pieces > 1 ? len[1] : 0)) {
		avail = (int64_t)(len[0] + (pieces > 1 ? len[1] : 0));
		scan(s, ptr, len, pieces);
		if (s->z)
			err = pd_compress_write(s->z, s->w, ptr, len, pieces);
		for (int i = 0; i < pieces && !err && !s->z; i++)
			err = pd_writer_write(s->w, ptr[i], len[i]);
		if (!err) {
			b->bytes += (uint64_t)avail;
			s->st.bytes += (uint64_t)avail;
		}
	}
	perfring_read_end(b->ring);
	return err;
}

/* The application session's figures into the summary. */
void record_app_stats(struct session *s)
{
	struct app_session_stats as;

	app_session_stats(s->app, &as);
	s->st.app_events = as.events;
	s->st.app_lost = as.lost;
	s->st.app_corrupt = as.corrupt;
	s->st.app_rings = as.rings;
	s->st.app_event_types = s->app_types;
	s->st.app_lost_implausible = as.lost_implausible;
	s->st.app_too_large = as.too_large < as.lost ? as.too_large : as.lost;
	s->st.app_corrupt_bytes = as.corrupt_bytes;
	s->st.app_dead_reservations = as.dead_reservations;
	s->st.app_rings_dropped = as.rings_dropped;
	s->st.app_rings_refused = as.rings_refused;
	s->st.app_dropped_bytes = as.dropped_bytes;
	s->st.app_rings_over_cap = as.rings_over_cap;
	s->st.app_rings_no_fd = as.rings_no_fd;
	s->st.app_unattached_bytes = as.unattached_bytes;
	s->app_first = as.first_time;
	s->app_last = as.last_time;
}

/* The application events' time range in this file (SAMPLE_TIME). */
void record_note_app_time(struct session *s)
{
	if (!s->app || s->app_last <= s->app_floor)
		return;
	pd_writer_note_time(s->w,
			    s->app_first > s->app_floor ? s->app_first :
							  s->app_floor + 1,
			    s->app_last);
}

/* One sample the off-CPU source made: into the file as the kernel's. */
int record_offcpu_emit(void *ctx, const void *rec, size_t size)
{
	struct session *s = ctx;
	const struct perf_event_header *h = rec;
	uint64_t time;
	int err;

	if (size > record_max_size_room(s)) {
		s->max_size_hit = true;
		s->st.max_size_dropped++;
		s->st.max_size_dropped_bytes += size;
		return 0;
	}
	if (s->z) {
		/* compressed with the rest of the pass's samples */
		if (s->oc_zcap - s->oc_zlen < size) {
			size_t cap = s->oc_zcap ? s->oc_zcap * 2 : 64 << 10;
			unsigned char *p;

			while (cap - s->oc_zlen < size)
				cap *= 2;
			p = realloc(s->oc_zbuf, cap);
			if (!p)
				return -ENOMEM;
			s->oc_zbuf = p;
			s->oc_zcap = cap;
		}
		memcpy(s->oc_zbuf + s->oc_zlen, rec, size);
		s->oc_zlen += size;
		err = 0;
	} else {
		err = pd_writer_write_whole(s->w, rec, size);
	}
	if (err)
		return err;
	s->st.bytes += size;
	s->st.records++;
	s->st.samples++;
	if (s->hits)
		dso_hits_note(s->hits, rec, size);
	/* IDENTIFIER, IP, TID, then TIME (not the sums' made-up one) */
	if (h->size < 40)
		return 0;
	memcpy(&time, (const char *)rec + 32, 8);
	if (!offcpu_summed_time(time)) {
		if (!s->first_time || time < s->first_time)
			s->first_time = time;
		if (time > s->last_time)
			s->last_time = time;
	}
	return 0;
}

int record_offcpu_compress(struct session *s)
{
	int err;

	if (!s->oc_zlen)
		return 0;
	err = pd_compress_records(s->z, s->w, s->oc_zbuf, s->oc_zlen);
	s->oc_zlen = 0;
	return err;
}

/* Drains the forward rings; the overwrite ones too if @snapshot; @final:
 * the last pass (application rings all read and released). */
int record_drain_all(struct session *s, bool snapshot, bool final)
{
	uint64_t before = s->st.bytes, now;
	int err = 0;

	for (int i = 0; i < s->track_el.nr_bufs && !err; i++)
		err = drain(s, &s->track_el.bufs[i]);
	if (!s->overwrite || snapshot)
		for (int i = 0; i < s->el.nr_bufs && !err; i++)
			err = drain(s, &s->el.bufs[i]);
	/* After the kernel rings: its horizon is this pass's start. */
	if (!err && s->oc) {
		struct offcpu_stats os;

		err = offcpu_drain(s->oc, final, record_offcpu_emit, s);
		if (!err)
			err = record_offcpu_compress(s);
		offcpu_stats(s->oc, &os);
		s->st.offcpu_blocks = os.blocks;
		s->st.offcpu_samples = os.samples;
		s->st.offcpu_lost = os.lost;
		s->st.offcpu_dropped = os.dropped;
		s->st.offcpu_no_stack = os.no_stack;
		s->st.offcpu_mode = os.mode == OFFCPU_MODE_BPF ?
					    PERFRING_OFF_CPU_BPF :
					    PERFRING_OFF_CPU_EVENTS;
	}
	if (!err && s->app) {
		err = app_session_drain(s->app, snapshot, final);
		record_app_stats(s); /* live figures for the progress line */
	}
	/* The AUX source's pass (before ours) left its data in this round. */
	if (s->st.bytes != before || (s->aux && aux_source_take_data(s->aux)))
		s->round_open = true;
	/*
	 * perf flushes, at each FINISHED_ROUND, the events older than the
	 * newest one before the previous round.  A kernel event is written
	 * with its timestamp taken in the same critical section, but a
	 * program's thread can be preempted between reading the clock and
	 * committing its record: with application rings, rounds end at most
	 * every APP_ROUND_MS so such a late record still lands in time.
	 */
	/* The off-CPU source's samples are made a pass or more after their
	 * events (it waits for the other CPUs): rounds as long, so that its
	 * samples are never older than a round perf has flushed. */
	now = s->app || s->oc ? record_now_ms() : 0;
	if (!err && s->round_open &&
	    ((!s->app && !s->oc) || final || snapshot ||
	     now - s->last_round_ms >= APP_ROUND_MS ||
	     (s->app && now - s->last_round_ms >= APP_ROUND_MIN_MS &&
	      app_session_pressed(s->app)))) {
		/* SAMPLE_TIME of the checkpoint the round makes */
		pd_writer_note_time(s->w, s->first_time, s->last_time);
		record_note_app_time(s);
		err = pd_writer_finish_round(s->w);
		if (!err) {
			s->st.rounds++;
			s->round_open = false;
			s->last_round_ms = now;
			/* The round is in the file: the application records
			 * it holds may leave their rings now, not before. */
			if (s->app)
				app_session_release(s->app);
			offcpu_round_done(s->oc);
		}
	}
	/*
	 * A ring a quarter full of records waiting for their round: its
	 * program may be blocked on it (PERFRING_MODE=block) and wakes us
	 * no more.  Sleep only until that round is due, not POLL_MS: on a
	 * CPU shared with the program the wait would be the program's.
	 */
	if (s->app) {
		uint64_t since = now - s->last_round_ms;

		s->rs.poll_ms = POLL_MS;
		if (!err && s->round_open && since < APP_ROUND_MIN_MS &&
		    app_session_pressed(s->app))
			s->rs.poll_ms = (int)(APP_ROUND_MIN_MS - since);
	}
	if (err && !s->err)
		s->err = err;
	return err;
}

int record_snapshot(struct session *s)
{
	s->st.snapshots++;
	return record_drain_all(s, true, false);
}
