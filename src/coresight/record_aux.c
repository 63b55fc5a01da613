// SPDX-License-Identifier: MIT
/*
 * Recording AUX area trace into perf.data (perf record's AUX path,
 * tools/perf/builtin-record.c + util/auxtrace.c), driving sources only
 * through the interfaces of src/sources/source.h:
 *
 *   - the source (struct pr_source_ops, a PMU) gets a data ring + AUX
 *     area pair per CPU and writes PERF_RECORD_AUX, ITRACE_START,
 *     side-band records and the trace itself;
 *   - the AUX recorder (struct pr_auxtrace_ops) fills AUXTRACE_INFO, finds
 *     snapshots, stops/starts the source around them, re-enables it after
 *     a truncation (read_finish) and gives each chunk its reference.
 *
 * The file: attrs, PERF_RECORD_AUXTRACE_INFO first, then per round the
 * data rings' records and, per AUX area, one PERF_RECORD_AUXTRACE with the
 * bytes between aux_tail and aux_head (offset = their position in the AUX
 * stream, idx/cpu/tid of the ring), FINISHED_ROUND; the HEADER_AUXTRACE
 * index of every AUXTRACE record at the end.  Snapshot mode (-S): the AUX
 * areas run free and only a snapshot (control 's', i.e. SIGUSR2 in the
 * CLI, and at exit with --snapshot=e) copies the newest snapshot_size
 * bytes of each area.
 *
 * The AUX source (aux_source.h) runs alone in perfring_record_aux(), with
 * its own writer, or beside the other sources of perfring_record(),
 * through theirs.
 *
 * Inputs of the replay source: an OpenCSD snapshot directory (read by the
 * source), or a perf.data whose AUXTRACE data, cs_etm metadata, attr and
 * side-band records (MMAP2, COMM, ITRACE_START ...) are read here with the
 * format layer and played in their original order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../format/auxtrace.h"
#include "../format/out_file.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "../sources/session.h"
#include "../sources/perf_event.h"
#include "../sources/source.h"
#include "aux_source.h"

/* Here a zero field means the default. */
#define OPT(o, f, def) OPTS_GET_NZ(o, f, def)

#define DEFAULT_PMU_TYPE 8 /* what cs_etm is on the Android/Juno boards */
#define AUX_PIECE (1u << 20) /* largest AUXTRACE chunk of a drain */
/* Ring ids of a snapshot replay: alone, 1000 + ring; beside kernel events
 * (the kernel counts their ids up from 0) and application events
 * (APP_SAMPLE_ID: bit 62), bit 61 + ring, which neither can have. */
#define ALONE_ID_BASE 1000ull
#define BESIDE_ID_BASE (1ull << 61)

struct rbuf {
	struct pr_source_buf sb;
	uint64_t last_snap_head;
};

struct aux_source {
	const struct perfring_record_aux_opts *o;
	struct perfring_record_aux_stats st;
	struct pr_replay_desc desc;
	struct pr_source *src;
	struct pr_auxtrace_rec *itr;
	struct rbuf *bufs;
	int nr_bufs;
	struct pd_writer *w;
	int out_fd;
	bool snapshot, overwrite;
	bool started; /* the writer started: it truncates at close */
	bool kernel; /* a kernel PMU's rings */
	bool pipe; /* -o -: perf's pipe format */
	uint64_t snap_size;
	unsigned char *snap_buf;
	uint64_t t0;
	uint64_t *ids; /* each ring's event id, for the attr */
	bool beside; /* a source of perfring_record(): its writer, rounds */
	bool round_data; /* beside: written since aux_source_take_data() */
	bool from_pd; /* the replay's input is a perf.data */
	bool busy; /* the last pass had data: no sleeping */
	bool prepared; /* the rings are marked waiting */
	int snap_err; /* a snapshot asked on the control pipe failed */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the replay input from a perf.data ---- */

struct pd_load {
	struct pr_replay_desc *d;
	struct auxtrace_file *af;
	const struct cs_etm_info *ci;
	bool own_trailer; /* the file's trailer layout is ours */
	/* Beside other sources: ids moved out of their way (beside_id), the
	 * records' trailers given PERF_SAMPLE_IDENTIFIER. */
	bool beside;
	/* Side-band records, copied. */
	unsigned char *rec_mem;
	size_t rec_len, rec_cap;
	struct pr_replay_record *recs;
	size_t nr_recs, cap_recs;
	size_t *rec_off;
	/* PERF_RECORD_AUX of the file: cpu, offset, size, flags, trailer. */
	struct oaux {
		int cpu, tid;
		uint64_t off, size, flags, sid[4];
		bool has_sid;
		size_t nr_recs_before;
	} * aux;
	size_t nr_aux, cap_aux;
	int err;
};

/* A replayed perf.data's id beside other sources: bit 61 set, which
 * neither the kernel's ids nor application ids have. */
static uint64_t beside_id(uint64_t id)
{
	return id | BESIDE_ID_BASE;
}

static bool sideband_type(uint32_t t)
{
	switch (t) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_TEXT_POKE:
		return true;
	}
	return false;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return p;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	n = realloc(p, ncap * elem);
	if (n)
		*cap = ncap;
	return n;
}

/* A copied record (room for 8 more bytes) beside other sources: its id
 * moved (beside_id) and appended as PERF_SAMPLE_IDENTIFIER. */
static void beside_trailer(unsigned char *rec)
{
	struct perf_event_header h;
	uint64_t id;

	memcpy(&h, rec, sizeof(h));
	/* TID TIME ID CPU: the id is the third word from the end. */
	memcpy(&id, rec + h.size - 16, 8);
	id = beside_id(id);
	memcpy(rec + h.size - 16, &id, 8);
	memcpy(rec + h.size, &id, 8);
	h.size += 8;
	memcpy(rec, &h, sizeof(h));
}

static int collect_pd(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct pd_load *L = ctx;
	const struct perf_event_header *h = ev->hdr;
	int cpu = ev->sample ? (int)ev->sample->cpu : -1;

	(void)f;
	if (h->type == PERF_RECORD_AUX) {
		struct oaux *a;
		void *n;

		n = grow(L->aux, &L->cap_aux, L->nr_aux + 1, sizeof(*L->aux));
		if (!n)
			return -ENOMEM;
		L->aux = n;
		a = &L->aux[L->nr_aux++];
		memset(a, 0, sizeof(*a));
		a->cpu = cpu;
		a->tid = ev->sample ? (int)ev->sample->tid : -1;
		a->off = ev->rec->aux.aux_offset;
		a->size = ev->rec->aux.aux_size;
		a->flags = ev->rec->aux.flags;
		if (L->own_trailer && h->size >= 32 + PR_SAMPLE_ID_SIZE) {
			memcpy(a->sid,
			       (const char *)h + h->size - PR_SAMPLE_ID_SIZE,
			       PR_SAMPLE_ID_SIZE);
			a->has_sid = true;
		}
		a->nr_recs_before = L->nr_recs;
		return 0;
	}
	if (!sideband_type(h->type) || !L->own_trailer)
		return 0;
	/* Beside: a trailer to move the id in, room for the IDENTIFIER;
	 * records without are left out. */
	if (L->beside && (h->size < sizeof(*h) + PR_SAMPLE_ID_SIZE ||
			  h->size > UINT16_MAX - 8))
		return 0;
	{
		void *n = grow(L->rec_mem, &L->rec_cap,
			       L->rec_len + h->size + 8, 1);

		if (!n)
			return -ENOMEM;
		L->rec_mem = n;
		n = grow(L->recs, &L->cap_recs, L->nr_recs + 1,
			 sizeof(*L->recs));
		if (!n)
			return -ENOMEM;
		L->recs = n;
		n = realloc(L->rec_off, L->cap_recs * sizeof(size_t));
		if (!n)
			return -ENOMEM;
		L->rec_off = n;
	}
	memcpy(L->rec_mem + L->rec_len, h, h->size);
	if (L->beside)
		beside_trailer(L->rec_mem + L->rec_len);
	L->rec_off[L->nr_recs] = L->rec_len;
	L->recs[L->nr_recs].cpu = cpu;
	L->recs[L->nr_recs].before = 0;
	L->nr_recs++;
	L->rec_len +=
		((struct perf_event_header *)(L->rec_mem + L->rec_len))->size;
	return 0;
}

static enum pr_cs_kind kind_from(enum cs_etm_kind k)
{
	return k == CS_ETM_KIND_ETMV3 ? PR_CS_ETMV3 :
	       k == CS_ETM_KIND_ETMV4 ? PR_CS_ETMV4 :
					PR_CS_ETE;
}

/* The bytes of CPU @cpu's AUX stream [off, off + size) found in the file's
 * AUXTRACE chunks, appended as replay chunks. */
struct seg {
	int cpu; /* -1: a per-thread ring, matched by tid */
	int tid;
	uint64_t off, size;
	const unsigned char *data;
	uint64_t used_to; /* stream position up to which it was played */
};

static int add_chunk(struct pr_replay_desc *d, size_t *cap, int cpu,
		     const void *data, uint64_t size, uint64_t flags,
		     const uint64_t *sid)
{
	void *n = grow(d->chunks, cap, d->nr_chunks + 1, sizeof(*d->chunks));

	if (!n)
		return -ENOMEM;
	d->chunks = n;
	d->chunks[d->nr_chunks].cpu = cpu;
	d->chunks[d->nr_chunks].data = data;
	d->chunks[d->nr_chunks].size = size;
	d->chunks[d->nr_chunks].flags = flags;
	d->chunks[d->nr_chunks].sample_id = sid;
	d->nr_chunks++;
	return 0;
}

/* The file's first attr (or one our trailers agree with) and its ids. */
static int pd_take_attr(struct pd_load *L, struct prd_file *f,
			struct pr_replay_desc *d)
{
	const struct prd_attr *pa;

	if (!prd_nr_attrs(f))
		return -EINVAL;
	pa = prd_attr(f, 0);
	d->attr = pa->attr;
	L->own_trailer = pa->attr.sample_id_all &&
			 (pa->attr.sample_type &
			  (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_IDENTIFIER)) == PR_SAMPLE_ID_TYPE;
	if (!L->own_trailer) {
		/* Our trailers with the file's attr would disagree. */
		d->attr.sample_type = PERF_SAMPLE_IP | PR_SAMPLE_ID_TYPE |
				      PERF_SAMPLE_PERIOD;
		d->attr.sample_id_all = 1;
	}
	if (L->beside) {
		/* As the other sources' events: IDENTIFIER, their clock,
		 * their read_format. */
		d->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
		d->attr.read_format = 0;
		d->attr.use_clockid = 1;
		d->attr.clockid = CLOCK_MONOTONIC;
		d->identifier = true;
	}
	if (pa->nr_ids) {
		uint64_t *ids = malloc(pa->nr_ids * sizeof(*ids));

		if (!ids)
			return -ENOMEM;
		memcpy(ids, pa->ids, pa->nr_ids * sizeof(*ids));
		for (uint32_t i = 0; L->beside && i < pa->nr_ids; i++)
			ids[i] = beside_id(ids[i]);
		d->ids = ids;
		d->nr_ids = pa->nr_ids;
		d->owned2 = ids;
	}
	return 0;
}

/* The trace, read into one block (d->owned), one segment per AUXTRACE
 * chunk of the file. */
static int pd_read_trace(struct pd_load *L, size_t nseg, struct seg *segs,
			 struct pr_replay_desc *d)
{
	uint64_t total = 0, pos = 0;
	unsigned char *data;
	int ret;

	for (size_t i = 0; i < nseg; i++)
		total += auxtrace_file_chunk(L->af, i)->size;
	data = malloc(total ? total : 1);
	if (!data)
		return -ENOMEM;
	for (size_t i = 0; i < nseg; i++) {
		const struct auxtrace_chunk *c = auxtrace_file_chunk(L->af, i);

		ret = auxtrace_file_read(L->af, i, 0, data + pos, c->size);
		if (ret) {
			free(data);
			return ret;
		}
		segs[i].cpu = (int)c->cpu;
		segs[i].tid = (int)c->tid;
		if (segs[i].cpu < 0)
			d->ring_tid = segs[i].tid; /* one per-thread pair */
		segs[i].off = c->offset;
		segs[i].size = c->size;
		segs[i].data = data + pos;
		segs[i].used_to = c->offset;
		pos += c->size;
	}
	d->owned = data;
	return 0;
}

/*
 * The file's AUX records, in order, cut the stream into chunks with their
 * flags and trailers (*sids_out: 4 words per AUX record); side-band
 * records go before the chunk that followed them in the file.  Then the
 * records after the last AUX record, and the trace no AUX record covered
 * in pieces of @chunk_max.
 */
static int pd_cut_chunks(struct pd_load *L, struct seg *segs, size_t nseg,
			 uint64_t chunk_max, struct pr_replay_desc *d,
			 uint64_t **sids_out)
{
	size_t cap_chunks = 0, placed = 0;
	uint64_t *sids;
	int ret;

	sids = calloc(L->nr_aux ? L->nr_aux : 1, 4 * sizeof(uint64_t));
	if (!sids)
		return -ENOMEM;
	*sids_out = sids;
	for (size_t a = 0; a < L->nr_aux; a++) {
		struct oaux *x = &L->aux[a];

		memcpy(&sids[4 * a], x->sid, sizeof(x->sid));
		for (; placed < x->nr_recs_before; placed++)
			L->recs[placed].before = d->nr_chunks;
		for (size_t i = 0; i < nseg; i++) {
			struct seg *s = &segs[i];
			uint64_t lo, hi;

			/* perf's rule: per-CPU buffers match the record's
			 * CPU, per-thread ones (cpu -1) its tid. */
			if (s->cpu >= 0 ? s->cpu != x->cpu : s->tid != x->tid)
				continue;
			lo = x->off > s->off ? x->off : s->off;
			hi = x->off + x->size < s->off + s->size ?
				     x->off + x->size :
				     s->off + s->size;
			if (lo >= hi)
				continue;
			ret = add_chunk(d, &cap_chunks, s->cpu,
					s->data + (lo - s->off), hi - lo,
					x->flags & (PERF_AUX_FLAG_PARTIAL |
						    PERF_AUX_FLAG_COLLISION),
					x->has_sid ? &sids[4 * a] : NULL);
			if (ret)
				return ret;
			if (hi > s->used_to)
				s->used_to = hi;
		}
	}
	for (; placed < L->nr_recs; placed++)
		L->recs[placed].before = d->nr_chunks;
	for (size_t i = 0; i < nseg; i++) {
		struct seg *s = &segs[i];

		while (s->used_to < s->off + s->size) {
			uint64_t n = s->off + s->size - s->used_to;

			if (n > chunk_max)
				n = chunk_max;
			ret = add_chunk(d, &cap_chunks, s->cpu,
					s->data + (s->used_to - s->off), n, 0,
					NULL);
			if (ret)
				return ret;
			s->used_to += n;
		}
	}
	for (size_t r = 0; r < L->nr_recs; r++)
		L->recs[r].rec = (const void *)(L->rec_mem + L->rec_off[r]);
	d->records = L->recs;
	d->nr_records = L->nr_recs;
	L->recs = NULL;
	return 0;
}

/* The ETM metadata, the CPUs of the segments, and the id each ring
 * writes (*ring_ids_out): the one the file's records of its CPU carry,
 * so the copied trailers and ours name the same event. */
static int pd_metadata(struct pd_load *L, const struct seg *segs, size_t nseg,
		       struct pr_replay_desc *d, uint64_t **ring_ids_out)
{
	uint64_t *ring_ids;

	d->nr_etm = L->ci->nr_cpu;
	d->etm = calloc(d->nr_etm, sizeof(*d->etm));
	d->cpus = calloc(nseg, sizeof(int));
	if (!d->etm || !d->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nr_etm; i++) {
		const struct cs_etm_cpu *c = &L->ci->cpus[i];
		struct pr_cs_etm_cpu *e = &d->etm[i];

		e->kind = kind_from(c->kind);
		e->cpu = c->cpu;
		e->nr_regs = c->nr_params > 16 ? 16 : c->nr_params;
		memcpy(e->regs, c->params, e->nr_regs * sizeof(uint64_t));
	}
	d->pmu_type = L->ci->pmu_type;
	d->attr.type = L->ci->pmu_type;
	for (size_t i = 0; i < nseg; i++) {
		bool seen = false;

		for (int k = 0; k < d->nr_cpus; k++)
			seen |= d->cpus[k] == segs[i].cpu;
		if (!seen)
			d->cpus[d->nr_cpus++] = segs[i].cpu;
	}
	d->pid = d->tid = (uint32_t)-1;
	ring_ids = calloc((size_t)d->nr_cpus, sizeof(*ring_ids));
	if (!ring_ids)
		return -ENOMEM;
	*ring_ids_out = ring_ids;
	for (int k = 0; k < d->nr_cpus; k++) {
		ring_ids[k] = d->nr_ids ? d->ids[0] :
			      L->beside ? BESIDE_ID_BASE + (uint64_t)k :
					  ALONE_ID_BASE + (uint64_t)k;
		for (size_t a = 0; a < L->nr_aux; a++)
			if (L->aux[a].has_sid &&
			    (d->cpus[k] >= 0 ? L->aux[a].cpu == d->cpus[k] :
					       L->aux[a].tid == d->ring_tid)) {
				ring_ids[k] =
					L->beside ?
						beside_id(L->aux[a].sid[2]) :
						L->aux[a].sid[2];
				break;
			}
	}
	d->ring_ids = ring_ids;
	return 0;
}

static int load_perf_data(const char *path, uint64_t chunk_max, bool beside,
			  struct pr_replay_desc *d)
{
	struct pd_load L = { .d = d, .beside = beside };
	struct prd_file *f = NULL;
	struct seg *segs = NULL;
	size_t nseg;
	uint64_t *sids = NULL, *ring_ids = NULL;
	int ret;

	memset(d, 0, sizeof(*d));
	ret = auxtrace_file_open(path, &L.af);
	if (ret)
		return ret;
	L.ci = auxtrace_file_cs_etm(L.af);
	if (!L.ci) {
		pr_err("%s: no cs_etm AUXTRACE_INFO: not a CoreSight recording",
		       path);
		ret = -EINVAL;
		goto out;
	}
	nseg = auxtrace_file_nr_chunks(L.af);
	if (!nseg) {
		pr_err("%s: no AUXTRACE data", path);
		ret = -EINVAL;
		goto out;
	}
	ret = prd_open(path, &f);
	if (!ret)
		ret = pd_take_attr(&L, f, d);
	if (ret)
		goto out;
	ret = prd_process(f, false, collect_pd, &L);
	if (ret < 0 && ret != -EBADMSG)
		goto out;
	segs = calloc(nseg, sizeof(*segs));
	ret = segs ? pd_read_trace(&L, nseg, segs, d) : -ENOMEM;
	if (!ret)
		ret = pd_cut_chunks(&L, segs, nseg, chunk_max, d, &sids);
	if (!ret)
		ret = pd_metadata(&L, segs, nseg, d, &ring_ids);
	if (ret)
		goto out;
	/* The record memory and the trailers live as long as d. */
	{
		void **keep = malloc(4 * sizeof(void *));

		if (!keep) {
			ret = -ENOMEM;
			goto out;
		}
		keep[0] = L.rec_mem;
		keep[1] = sids;
		keep[2] = d->owned2;
		keep[3] = ring_ids;
		d->owned2 = keep;
		L.rec_mem = NULL;
		sids = NULL;
		ring_ids = NULL;
	}
out:
	if (f)
		prd_close(f);
	auxtrace_file_close(L.af);
	free(L.rec_mem);
	free(L.recs);
	free(L.rec_off);
	free(L.aux);
	free(segs);
	free(sids);
	if (ring_ids && d->ring_ids == ring_ids)
		d->ring_ids = NULL;
	free(ring_ids);
	if (ret)
		pr_replay_desc_free(d);
	return ret;
}

static void desc_free(struct pr_replay_desc *d, bool from_perf_data)
{
	if (from_perf_data && d->owned2) {
		void **keep = d->owned2;

		free(keep[0]);
		free(keep[1]);
		free(keep[2]);
		free(keep[3]);
	}
	pr_replay_desc_free(d);
}

/* ---- recording ---- */

static int write_info(struct aux_source *R)
{
	size_t nr = R->itr->ops->info_priv_size(R->itr);
	size_t len = AUXTRACE_INFO_HDR_SIZE + 8 * nr;
	unsigned char *buf;
	struct perf_event_header h = { AUXTRACE_REC_INFO, 0, 0 };
	uint32_t type = R->itr->ops->type, zero = 0;
	int ret;

	if (len > PERFRING_RECORD_MAX) {
		pr_err("record: AUXTRACE_INFO of %zu bytes is too big", len);
		return -E2BIG;
	}
	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	h.size = (uint16_t)len;
	memcpy(buf, &h, 8);
	memcpy(buf + 8, &type, 4);
	memcpy(buf + 12, &zero, 4);
	ret = R->itr->ops->info_fill(
		R->itr, (uint64_t *)(buf + AUXTRACE_INFO_HDR_SIZE), nr);
	if (!ret)
		ret = pd_writer_write(R->w, buf, len);
	free(buf);
	return ret;
}

static int write_chunk(struct aux_source *R, struct rbuf *b, uint64_t pos,
		       const void *p0, size_t l0, const void *p1, size_t l1)
{
	struct auxtrace_chunk c = { 0 };
	unsigned char rec[AUXTRACE_CHUNK_HDR_SIZE];
	uint64_t n = l0 + l1;
	int ret;

	c.size = (n + 7) & ~7ull;
	c.offset = pos;
	c.reference = R->itr->ops->reference ? R->itr->ops->reference(R->itr) :
					       0;
	c.idx = (uint32_t)b->sb.idx;
	c.tid = (uint32_t)b->sb.tid;
	c.cpu = (uint32_t)b->sb.cpu;
	auxtrace_chunk_build(&c, rec);
	ret = pd_writer_write_auxtrace(R->w, rec, p0, l0, p1, l1);
	if (ret)
		return ret;
	R->st.aux_bytes += n;
	R->st.aux_chunks++;
	return 0;
}

static int drain_ring(struct aux_source *R, struct rbuf *b, bool *any)
{
	const void *p[2];
	size_t l[2];
	int64_t n;
	int ret = 0, k;

	n = perfring_read_begin(b->sb.ring);
	if (n <= 0)
		return n < 0 && n != -EBADMSG ? (int)n : 0;
	k = perfring_read_range(b->sb.ring, p, l);
	for (int i = 0; i < k && !ret; i++)
		ret = pd_writer_write(R->w, p[i], l[i]);
	perfring_read_end(b->sb.ring);
	*any = true;
	return ret;
}

static int drain_aux(struct aux_source *R, struct rbuf *b, bool *any)
{
	size_t align = R->itr->ops->alignment;
	const void *p[2];
	size_t l[2];
	uint64_t pos;
	int64_t n;
	int ret;

	n = perfring_aux_read_begin(b->sb.aux, p, l, &pos);
	if (n < 0)
		return n == -EBADMSG ? 0 : (int)n;
	if (n > 0) {
		if (align > 1) {
			uint64_t keep = (uint64_t)n - (uint64_t)n % align;

			if (keep < l[0]) {
				l[0] = keep;
				l[1] = 0;
			} else {
				l[1] = keep - l[0];
			}
			n = (int64_t)keep;
		}
		if (n && !l[1]) {
			/* One piece (our double-mapped areas): AUXTRACE
			 * chunks of at most AUX_PIECE, each freed as soon as
			 * it is written so the source never waits for the
			 * whole batch. */
			for (uint64_t off = 0; off < (uint64_t)n;) {
				uint64_t len = (uint64_t)n - off;

				if (len > AUX_PIECE)
					len = AUX_PIECE;
				ret = write_chunk(R, b, pos + off,
						  (const char *)p[0] + off,
						  (size_t)len, NULL, 0);
				if (ret)
					return ret;
				perfring_aux_read_end(b->sb.aux, len);
				off += len;
				/* Re-enabled as soon as there is room. */
				if (perfring_aux_disabled(b->sb.aux)) {
					ret = R->itr->ops->read_finish(R->itr,
								       &b->sb);
					if (ret)
						return ret;
					R->st.enables++;
				}
			}
			*any = true;
		} else if (n) {
			ret = write_chunk(R, b, pos, p[0], l[0], p[1], l[1]);
			if (ret)
				return ret;
			perfring_aux_read_end(b->sb.aux, (uint64_t)n);
			*any = true;
		}
	}
	/* perf's read_finish: re-enable after a truncation (kernel events:
	 * after every read, as perf does; the ioctl is harmless). */
	if (perfring_aux_disabled(b->sb.aux) || (R->kernel && n > 0)) {
		ret = R->itr->ops->read_finish(R->itr, &b->sb);
		if (ret)
			return ret;
		R->st.enables++;
	}
	return 0;
}

/* Alone: a FINISHED_ROUND; beside other sources their round ends with
 * their FINISHED_ROUND (perfring_record() asks aux_source_take_data()). */
static int end_round(struct aux_source *R)
{
	if (!R->beside)
		return pd_writer_finish_round(R->w);
	R->round_data = true;
	return 0;
}

bool aux_source_take_data(struct aux_source *a)
{
	bool any = a->round_data;

	a->round_data = false;
	return any;
}

static int take_snapshot(struct aux_source *R, bool restart)
{
	bool any = false;
	int ret = 0;

	if (R->itr->ops->snapshot_start)
		ret = R->itr->ops->snapshot_start(R->itr);
	for (int i = 0; i < R->nr_bufs && !ret; i++) {
		struct rbuf *b = &R->bufs[i];
		struct perfring_aux_stats as = { .sz = sizeof(as) };
		uint64_t head, old, size, pos;
		int64_t n;

		if (R->overwrite)
			ret = drain_ring(R, b, &any);
		if (ret)
			break;
		if (!R->snapshot)
			continue; /* the AUX areas are drained as they fill */
		perfring_aux_stats(b->sb.aux, &as);
		head = as.head;
		old = b->last_snap_head;
		ret = R->itr->ops->find_snapshot(R->itr, &b->sb, &head, &old);
		if (ret)
			break;
		size = head - old;
		if (size > R->snap_size)
			size = R->snap_size;
		if (!size)
			continue;
		n = perfring_aux_snapshot(b->sb.aux, R->snap_buf, (size_t)size,
					  &pos);
		if (n < 0) {
			ret = (int)n;
			break;
		}
		ret = write_chunk(R, b, pos, R->snap_buf, (size_t)n, NULL, 0);
		b->last_snap_head = head;
	}
	if (!ret)
		ret = pd_writer_finish_round(R->w);
	R->st.snapshots++;
	if (restart && R->itr->ops->snapshot_finish) {
		int r2 = R->itr->ops->snapshot_finish(R->itr);

		if (!ret)
			ret = r2;
	}
	return ret;
}

static void update_stats(struct aux_source *R)
{
	R->st.aux_records = R->st.truncated = R->st.lost_bytes = 0;
	for (int i = 0; i < R->nr_bufs; i++) {
		struct perfring_aux_stats as = { .sz = sizeof(as) };

		perfring_aux_stats(R->bufs[i].sb.aux, &as);
		R->st.aux_records += as.records;
		R->st.truncated += as.truncated;
		R->st.lost_bytes += as.lost_bytes;
	}
	if (R->desc.nr_chunks)
		pr_replay_source_counts(R->src, &R->st.played, NULL);
	R->st.bytes = pd_writer_data_bytes(R->w);
	R->st.seconds = (double)(now_ns() - R->t0) / 1e9;
}

/* ---- the AUX source in a session's loop (session.h) ---- */

/* The data rings' wake-up descriptors (AUX wake-ups write them too). */
static int aux_watch(void *ctx, struct rec_session *rs)
{
	struct aux_source *R = ctx;

	for (int i = 0; i < R->nr_bufs; i++) {
		int err = rec_session_watch(
			rs, perfring_ring_wait_fd(R->bufs[i].sb.ring),
			(uint32_t)i);

		if (err)
			return err;
	}
	return 0;
}

/* No sleeping while the last pass found data; else every ring marked
 * waiting (all of them: each one's wake-up must come). */
static bool aux_prepare(void *ctx)
{
	struct aux_source *R = ctx;
	bool ready = false;

	if (R->busy)
		return true;
	for (int i = 0; i < R->nr_bufs; i++)
		ready |= perfring_ring_wait_prepare(R->bufs[i].sb.ring) == 1 ||
			 (!R->snapshot &&
			  perfring_aux_wait_prepare(R->bufs[i].sb.aux) == 1);
	R->prepared = true;
	return ready;
}

/*
 * A pass: every data ring and AUX area drained (a FINISHED_ROUND if any
 * had data), then the source plays on.  Returns 1 when its input has
 * ended: the loop stops and the final drain takes what is left.
 */
static int aux_pass(void *ctx)
{
	struct aux_source *R = ctx;
	bool any = false;
	int ret = 0;

	if (R->prepared) {
		for (int i = 0; i < R->nr_bufs; i++)
			perfring_ring_wait_finish(R->bufs[i].sb.ring);
		R->prepared = false;
	}
	for (int i = 0; i < R->nr_bufs && !ret; i++) {
		if (!R->overwrite)
			ret = drain_ring(R, &R->bufs[i], &any);
		if (!ret && !R->snapshot)
			ret = drain_aux(R, &R->bufs[i], &any);
	}
	if (!ret && any) {
		ret = end_round(R);
		R->st.wakeups++;
	}
	if (ret)
		return ret;
	R->busy = any;
	/* Alone, the end of the input ends the recording; beside other
	 * sources, the command or the user does. */
	return !R->beside && R->src->ops->read(R->src) == 1 ? 1 : 0;
}

static void aux_progress(void *ctx)
{
	struct aux_source *R = ctx;
	perfring_aux_progress_fn progress = OPT(R->o, progress, NULL);

	if (progress) {
		update_stats(R);
		progress(&R->st, OPT(R->o, progress_ctx, NULL));
	}
}

const struct rec_source_ops aux_source_ops = {
	.name = "aux",
	.watch = aux_watch,
	.prepare = aux_prepare,
	.pass = aux_pass,
	.progress = aux_progress,
};

/* 's' on the control pipe: a snapshot (-S, --overwrite). */
static int aux_snapshot(void *ctx)
{
	struct aux_source *R = ctx;

	if (!R->snapshot && !R->overwrite) {
		pr_warn("record: snapshot asked for, but not in snapshot mode (-S)");
		return 0;
	}
	R->snap_err = take_snapshot(R, true);
	return R->snap_err;
}

/* Alone: until the input ends, 'q' or the duration. */
static int run(struct aux_source *R)
{
	struct rec_session rs;
	int ret;

	rec_session_init(&rs);
	rs.control_fd = OPTS_GET(R->o, control_fd, -1);
	rs.duration = OPT(R->o, duration, 0.0);
	rs.poll_ms = 50;
	rs.snapshot = aux_snapshot;
	rs.snapshot_ctx = R;
	ret = rec_session_add(&rs, &aux_source_ops, R);
	if (!ret)
		ret = rec_session_loop(&rs);
	rec_session_close(&rs);
	return ret ? ret : R->snap_err;
}

/*
 * -e PMU: the kernel's AUX PMU as the source.  Only cs_etm has an AUX
 * recorder (pr_auxtrace_ops) here; the PMU must exist.
 */
static int kernel_source(struct aux_source *R, const char *event)
{
	char pmu[64];
	size_t n = strcspn(event, "/:");
	int cpus[PR_SOURCE_MAX_BUFS], nr, type, ret;

	if (n >= sizeof(pmu))
		n = sizeof(pmu) - 1;
	memcpy(pmu, event, n);
	pmu[n] = 0;
	if (!strcmp(pmu, "cs-etm"))
		strcpy(pmu, "cs_etm");
	type = pr_aux_pmu_type(pmu);
	if (type < 0) {
		pr_err("%s: no such PMU on this machine (/sys/bus/event_source/devices/%s is missing): AUX area tracing needs a hardware trace unit (Intel PT, CoreSight ETM, ARM SPE) and this system has none; use --replay-cs DIR|FILE to record trace played from a CoreSight snapshot or perf.data",
		       event, pmu);
		return -ENODEV;
	}
	if (strcmp(pmu, "cs_etm")) {
		pr_err("%s: PMU %s (type %d) exists, but perfring has no AUX recorder for it yet (only cs_etm); use perf record -e %s",
		       event, pmu, type, event);
		return -EOPNOTSUPP;
	}
	nr = pe_online_cpus(cpus, PR_SOURCE_MAX_BUFS);
	if (nr <= 0)
		return nr < 0 ? nr : -ENOENT;
	R->desc.etm = calloc((size_t)nr, sizeof(*R->desc.etm));
	if (!R->desc.etm)
		return -ENOMEM;
	ret = pr_pmu_cs_etm_metadata(pmu, cpus, nr, R->desc.etm);
	if (ret) {
		pr_err("%s: cannot read the ETM registers from sysfs", pmu);
		return ret;
	}
	R->desc.nr_etm = (uint32_t)nr;
	R->desc.pmu_type = (uint32_t)type;
	R->kernel = true;
	/* System wide on every online CPU, as perf record -a -e cs_etm//. */
	return pr_pmu_aux_source_new(pmu, cpus, nr, -1, &R->src);
}

/* The event of a snapshot replay: cs_etm's type, our trailers; beside
 * other sources with PERF_SAMPLE_IDENTIFIER, as theirs. */
static void snapshot_attr(struct aux_source *R)
{
	struct perf_event_attr *a = &R->desc.attr;

	R->desc.pmu_type = (uint32_t)(pr_aux_pmu_type("cs_etm") >= 0 ?
					      pr_aux_pmu_type("cs_etm") :
					      DEFAULT_PMU_TYPE);
	memset(a, 0, sizeof(*a));
	a->type = R->desc.pmu_type;
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PR_SAMPLE_ID_TYPE |
			 PERF_SAMPLE_PERIOD;
	a->read_format = PERF_FORMAT_ID;
	if (R->beside) {
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
		R->desc.identifier = true;
		/* The kernel events' (never read(): the ids are in the
		 * file's attr section); the writer wants one for all. */
		a->read_format = 0;
	}
	a->sample_id_all = 1;
	a->disabled = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

/* --replay-cs: an OpenCSD snapshot directory or a cs_etm perf.data into
 * R->desc. */
static int load_replay(struct aux_source *R, const char *replay)
{
	const struct perfring_record_aux_opts *o = R->o;
	struct stat sb;
	int ret;

	if (stat(replay, &sb) < 0) {
		ret = -errno;
		pr_err("%s: %s", replay, strerror(errno));
		return ret;
	}
	if (!S_ISDIR(sb.st_mode)) {
		ret = load_perf_data(replay, OPT(o, chunk, 4096), R->beside,
				     &R->desc);
		R->from_pd = !ret;
		return ret;
	}
	ret = pr_replay_load_snapshot(replay, OPT(o, replay_cpu, -1),
				      OPT(o, chunk, 4096), &R->desc);
	if (!ret)
		snapshot_attr(R);
	return ret;
}

/* A data ring + AUX area pair for CPU @cpu (the source maps the kernel's
 * or we make ours), given to the source. */
static int add_buffer(struct aux_source *R, const struct pr_aux_opts *ao,
		      int cpu)
{
	PERFRING_OPTS(perfring_ring_opts, ro, .data_size = ao->data_bytes,
		      .flags = R->overwrite ? PERFRING_MODE_OVERWRITE : 0);
	PERFRING_OPTS(perfring_aux_opts, xo, .aux_size = ao->aux_bytes,
		      .overwrite = ao->snapshot);
	struct rbuf *b = &R->bufs[R->nr_bufs];
	int i = R->nr_bufs, ret;

	b->sb.idx = i;
	b->sb.cpu = cpu;
	/* Per-thread mode (one pair for the session): the tid. */
	b->sb.tid = cpu < 0 ? R->desc.ring_tid : -1;
	b->sb.id = R->desc.ring_ids ? R->desc.ring_ids[i] :
		   R->desc.nr_ids   ? R->desc.ids[i % R->desc.nr_ids] :
		   R->beside	    ? BESIDE_ID_BASE + (uint64_t)i :
				      ALONE_ID_BASE + (uint64_t)i;
	if (R->src->ops->map) {
		/* The kernel's rings, mapped by the source. */
		ret = R->src->ops->map(R->src, &b->sb, ao->data_bytes,
				       ao->aux_bytes, ao->snapshot);
	} else {
		ret = perfring_ring_create(&ro, &b->sb.ring);
		if (!ret)
			ret = perfring_aux_create(b->sb.ring, &xo, &b->sb.aux);
	}
	R->ids[i] = b->sb.id;
	if (ret) {
		pr_err("record: cannot create the ring and AUX area of CPU %d: %s",
		       cpu, strerror(-ret));
		return ret;
	}
	R->nr_bufs++;
	ret = R->src->ops->add(R->src, &b->sb);
	if (!ret && R->src->ops->setup_aux)
		ret = R->src->ops->setup_aux(R->src, &b->sb, ao->snapshot);
	return ret;
}

/*
 * The recording options, settled by the AUX recorder (perf's
 * auxtrace_record__options), then a data ring + AUX area pair per CPU the
 * source wants, each pair's event id in R->ids.
 */
static int setup_buffers(struct aux_source *R, struct pr_aux_opts *ao)
{
	const struct perfring_record_aux_opts *o = R->o;
	int cpus[PR_SOURCE_MAX_BUFS], nr_cpus, ret;

	ao->aux_bytes = OPT(o, aux_bytes, 0);
	ao->data_bytes = OPT(o, data_bytes, 512u << 10);
	ao->snapshot = OPT(o, snapshot, false);
	ao->snapshot_size = OPT(o, snapshot_size, 0);
	ret = R->itr->ops->recording_options(R->itr, ao);
	if (ret)
		return ret;
	R->snapshot = ao->snapshot;
	R->overwrite = OPT(o, overwrite, false);
	R->snap_size = ao->snapshot_size;
	if (R->snapshot || R->overwrite) {
		R->snap_buf = malloc(ao->aux_bytes);
		if (!R->snap_buf)
			return -ENOMEM;
		if (!R->snap_size || R->snap_size > ao->aux_bytes)
			R->snap_size = ao->aux_bytes;
	}

	nr_cpus = R->src->ops->cpus(R->src, cpus, PR_SOURCE_MAX_BUFS);
	R->bufs = calloc((size_t)(nr_cpus > 0 ? nr_cpus : 1), sizeof(*R->bufs));
	R->ids = calloc((size_t)(nr_cpus > 0 ? nr_cpus : 1), sizeof(*R->ids));
	if (!R->bufs || !R->ids)
		return -ENOMEM;
	for (int i = 0; i < nr_cpus && !ret; i++)
		ret = add_buffer(R, ao, cpus[i]);
	R->st.nr_buffers = (uint32_t)R->nr_bufs;
	return ret;
}

/* The source: a kernel PMU or the replay of --replay-cs; its AUX
 * recorder (cs_etm). */
static int open_source(struct aux_source *R)
{
	const struct perfring_record_aux_opts *o = R->o;
	const char *replay = OPT(o, replay, NULL), *event = OPT(o, event, NULL);
	int version = OPT(o, cs_header_version, 1), ret;

	if (version < 1 || version > 2) {
		pr_err("record: cs_etm header version %d unknown (1 or 2)",
		       version);
		return -EINVAL;
	}
	if (R->beside &&
	    (!replay || OPT(o, snapshot, false) || OPT(o, overwrite, false))) {
		pr_err("record: AUX trace beside other sources is a --replay-cs (snapshot directory or perf.data), without -S or --overwrite");
		return -EINVAL;
	}
	if (!replay) {
		ret = kernel_source(R, event ? event : "cs_etm//");
		R->desc.event_name = event ? event : "cs_etm//";
	} else {
		ret = load_replay(R, replay);
		if (ret)
			return ret;
		R->desc.event_name = "cs_etm//";
		ret = pr_replay_source_new(&R->desc, OPT(o, rate, 0),
					   OPT(o, loops, 0), &R->src);
	}
	if (!ret)
		ret = pr_cs_etm_record_new(R->src, R->desc.etm, R->desc.nr_etm,
					   R->desc.pmu_type, (uint32_t)version,
					   &R->itr);
	return ret;
}

int aux_source_open(const struct perfring_record_aux_opts *o, bool beside,
		    struct aux_source **out)
{
	struct aux_source *R = calloc(1, sizeof(*R));
	struct pr_aux_opts ao = { 0 };
	int ret;

	*out = R;
	if (!R)
		return -ENOMEM;
	R->o = o;
	R->out_fd = -1;
	R->beside = beside;
	R->st.sz = sizeof(R->st);
	ret = open_source(R);
	if (!ret)
		ret = setup_buffers(R, &ao);
	return ret;
}

int aux_source_add_attr(struct aux_source *a, struct pd_writer *w)
{
	struct perf_event_attr attr;

	a->w = w;
	a->src->ops->event_attr(a->src, &attr);
	if (!a->beside && attr.use_clockid)
		pd_writer_set_clockid(w, attr.clockid);
	/* The input's ids, or every ring's. */
	return pd_writer_add_attr(w, &attr, a->desc.event_name,
				  a->desc.nr_ids ? a->desc.ids : a->ids,
				  a->desc.nr_ids ? a->desc.nr_ids :
						   (uint32_t)a->nr_bufs);
}

int aux_source_write_info(struct aux_source *a)
{
	return write_info(a);
}

int aux_source_start(struct aux_source *a)
{
	a->t0 = now_ns();
	a->busy = true; /* the source plays before the first wait */
	return a->src->ops->start(a->src);
}

/* After the loop: the exit snapshot or the overwrite rings, then what
 * the source wrote since the last pass. */
static int final_drain(struct aux_source *R)
{
	bool any = false;
	int ret = 0;

	if ((R->snapshot || R->overwrite) && OPT(R->o, snapshot_on_exit, false))
		ret = take_snapshot(R, false);
	else if (R->overwrite)
		/* Overwrite data rings are read at exit, as perf does. */
		for (int i = 0; i < R->nr_bufs && !ret; i++)
			ret = drain_ring(R, &R->bufs[i], &any);
	if (ret)
		return ret;
	any = false;
	for (int i = 0; i < R->nr_bufs && !ret; i++) {
		if (!R->overwrite)
			ret = drain_ring(R, &R->bufs[i], &any);
		if (!ret && !R->snapshot)
			ret = drain_aux(R, &R->bufs[i], &any);
	}
	if (!ret && any)
		ret = end_round(R);
	return ret;
}

int aux_source_finish(struct aux_source *a)
{
	int ret;

	a->src->ops->stop(a->src);
	ret = final_drain(a);
	update_stats(a);
	return ret;
}

void aux_source_stats(struct aux_source *a,
		      struct perfring_record_aux_stats *st)
{
	if (a && st)
		OPTS_FILL(st, &a->st);
}

void aux_source_close(struct aux_source *a)
{
	if (!a)
		return;
	if (a->src)
		a->src->ops->destroy(a->src);
	if (a->itr)
		a->itr->ops->free(a->itr);
	for (int i = 0; i < a->nr_bufs; i++) {
		perfring_aux_destroy(a->bufs[i].sb.aux);
		perfring_ring_destroy(a->bufs[i].sb.ring);
	}
	free(a->bufs);
	free(a->ids);
	free(a->snap_buf);
	desc_free(&a->desc, a->from_pd);
	free(a);
}

/* ---- perfring record --replay-cs / -e cs_etm//: the AUX source alone ---- */

/*
 * The file: the event's attr with its ids (the input's, every CPU's, or
 * the rings'), the clock, the AUXTRACE_INFO.  The previous file is
 * kept as .old (as perf does) and the one before it is written over: on
 * tmpfs that saves allocating and zeroing every page, the most expensive
 * part of writing there; the writer truncates the file to its end at
 * close.
 */
static int open_aux_output(struct aux_source *R, const char *output)
{
	const struct perfring_record_aux_opts *o = R->o;
	struct pd_writer *w;
	int ret;

	if (!strcmp(output, "-")) {
		/* perf's pipe format on standard output (no index). */
		R->out_fd = dup(STDOUT_FILENO);
		R->pipe = true;
		if (R->out_fd < 0) {
			ret = -errno;
			pr_err("%s: %s", output, strerror(errno));
			return ret;
		}
	} else {
		R->out_fd = out_file_open(output, OUT_FILE_KEEP_OLD |
							  OUT_FILE_REUSE_OLD |
							  OUT_FILE_SEEKABLE);
		if (R->out_fd < 0)
			return R->out_fd;
	}
	ret = pd_writer_open(R->out_fd, R->pipe, OPT(o, cmdline_argc, 0),
			     OPT(o, cmdline_argv, NULL), &w);
	if (ret)
		return ret;
	ret = aux_source_add_attr(R, w);
	if (ret)
		return ret;
	ret = pd_writer_start(R->w);
	R->started = !ret;
	return ret ? ret : write_info(R);
}

/* The file completed (or emptied if never started).  Returns @ret or
 * the writer's error. */
static int close_aux_output(struct aux_source *R, int ret, const char *output)
{
	if (R->w) {
		uint64_t kept = 0;
		int cret = pd_writer_close(R->w, &kept);

		/* What the file holds (cut back after a write error). */
		R->st.bytes = kept;
		R->w = NULL;
		if (cret)
			pr_err("writing %s failed: %s; it holds %llu bytes of data, up to its last complete round",
			       R->pipe ? "the output" : output, strerror(-cret),
			       (unsigned long long)kept);
		if (!ret)
			ret = cret;
	}
	if (R->out_fd >= 0) {
		if (!R->started && !R->pipe && ftruncate(R->out_fd, 0))
			pr_warn("%s: cannot empty: %s", output,
				strerror(errno));
		close(R->out_fd);
		R->out_fd = -1;
	}
	return ret;
}

PERFRING_API int perfring_record_aux(const struct perfring_record_aux_opts *o,
				     struct perfring_record_aux_stats *st)
{
	struct aux_source *R = NULL;
	const char *output;
	int ret;

	if (!o || !OPTS_VALID(o) ||
	    o->sz < offsetof(struct perfring_record_aux_opts, output))
		return -EINVAL;
	output = OPT(o, output, "perf.data");
	ret = aux_source_open(o, false, &R);
	if (!ret)
		ret = open_aux_output(R, output);
	if (!ret) {
		ret = aux_source_start(R);
		if (!ret)
			ret = run(R);
		R->src->ops->stop(R->src);
		if (!ret)
			ret = final_drain(R);
		update_stats(R);
	}
	if (R) {
		ret = close_aux_output(R, ret, output);
		aux_source_stats(R, st);
	} else if (st) {
		struct perfring_record_aux_stats none = { .sz = sizeof(none) };

		OPTS_FILL(st, &none);
	}
	aux_source_close(R);
	return ret;
}
