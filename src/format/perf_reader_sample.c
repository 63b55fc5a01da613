// SPDX-License-Identifier: MIT
/*
 * Samples and sample_id_all trailers: the attr a record belongs to (its
 * id, found in the id table as perf's evlist__event2evsel() does), a
 * sample decoded field by field against its record, a trailer walked back
 * from the record's end, and perf's count of an event's samples
 * (PERF_SAMPLE_READ values count for their own events).
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
#include "../common/load.h"
#include "perf_reader.h"
#include "perf_reader_internal.h"

static uint64_t id_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return id;
}

int prd_ids_insert(struct prd_file *f, uint64_t id, uint32_t idx)
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
static size_t prd_ids_slot(const struct prd_file *f, uint64_t id)
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

struct attr_priv *prd_ids_find(const struct prd_file *f, uint64_t id)
{
	size_t i = prd_ids_slot(f, id);

	return i == SIZE_MAX ? NULL : f->attrs[f->ht_val[i] - 1];
}

/* perf's deliver_sample_value(): a read value counts as a sample of the
 * event its id names when the value moved since that id's last one. */
static void count_read_value(struct prd_file *f, uint64_t id, uint64_t v)
{
	size_t i = prd_ids_slot(f, id);

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
void prd_count_read_sample(struct prd_file *f, const struct prd_sample *s)
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

/* ---- samples ---- */

/* PERF_SAMPLE_READ's values (read_format @rf): NULL or what does not fit. */
static const char *decode_read(uint64_t rf, struct cur *c, struct prd_sample *s)
{
	const unsigned char *p = c->p;
	uint64_t nr = 1, per;

	per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	if (rf & PERF_FORMAT_GROUP) {
		if (!get64(c, &nr))
			return "read group nr";
	} else {
		per += !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	}
	if ((rf & PERF_FORMAT_GROUP) &&
	    !take(c,
		  8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING)),
		  NULL))
		return "read times";
	if (nr > left(c) / (8 * per) || !take(c, nr * per * 8, NULL))
		return "read values";
	s->read = p;
	s->read_size = (size_t)(c->p - p);
	return NULL;
}

/* REGS_USER or REGS_INTR (@mask: the attr's registers): 0, 1 when the
 * abi does not fit, 2 when the registers do not. */
static int decode_regs(struct cur *c, uint64_t mask, uint64_t *abi,
		       const uint64_t **regs, uint32_t *nr)
{
	const unsigned char *p;
	uint32_t u;

	if (!get64(c, abi))
		return 1;
	if (*abi) {
		u = popcount64(mask);
		if (!take(c, (uint64_t)u * 8, &p))
			return 2;
		*regs = (const uint64_t *)(const void *)p;
		*nr = u;
	}
	return 0;
}

/* STACK_USER: size, the bytes, dyn_size: NULL or what does not fit. */
static const char *decode_stack_user(struct cur *c, const unsigned char *rec,
				     struct prd_sample *s)
{
	const unsigned char *p;
	uint64_t v;

	if (!get64(c, &v) || !take(c, v, &p))
		return "user stack";
	s->stack_user = p;
	s->stack_user_size = v;
	if ((size_t)(c->p - rec) & 7)
		return "user stack size (misaligns the fields after it)";
	if (v) {
		if (!get64(c, &s->stack_user_dyn_size))
			return "user stack dyn_size";
		if (s->stack_user_dyn_size > v)
			s->stack_user_dyn_size = v; /* as perf */
	}
	return NULL;
}

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
	const char *why;
	uint32_t u;
	int bad;

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
		why = decode_read(at->read_format, &c, s);
		if (why)
			return why;
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
		bad = decode_regs(&c, at->sample_regs_user, &s->regs_user_abi,
				  &s->regs_user, &s->nr_regs_user);
		if (bad)
			return bad == 1 ? "user regs abi" : "user regs";
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		why = decode_stack_user(&c, rec, s);
		if (why)
			return why;
	}
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    !get64(&c, &s->weight))
		return "weight";
	if ((st & PERF_SAMPLE_DATA_SRC) && !get64(&c, &s->data_src))
		return "data_src";
	if ((st & PERF_SAMPLE_TRANSACTION) && !get64(&c, &s->transaction))
		return "transaction";
	if (st & PERF_SAMPLE_REGS_INTR) {
		bad = decode_regs(&c, at->sample_regs_intr, &s->regs_intr_abi,
				  &s->regs_intr, &s->nr_regs_intr);
		if (bad)
			return bad == 1 ? "intr regs abi" : "intr regs";
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

PR_HIDDEN int prd_decode_sample(const struct prd_attr *a, const void *rec,
				uint32_t size, struct prd_sample *s)
{
	if (size < sizeof(struct perf_event_header))
		return -EBADMSG;
	return decode_sample(a, rec, size, s) ? -EBADMSG : 0;
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
	a = prd_ids_find(f, id);
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
int prd_describe(struct prd_file *f, const unsigned char *rec, uint32_t size,
		 bool *unknown_id, const char **why)
{
	uint32_t type = ld32(rec);
	struct prd_sample *s = &f->sample;
	struct attr_priv *a;
	uint64_t id, st;
	bool known;

	*unknown_id = false;
	if (!prd_kernel_type(type))
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
	    (size - 8) / 8 * 8 - trailer_words(st) * 8 + 8 <
		    prd_record_min_size(type)) {
		*why = "sample_id_all trailer";
		return -EBADMSG;
	}
	memset(s, 0, sizeof(*s));
	s->attr = known ? &a->pub : NULL;
	decode_trailer(st, rec, size, s);
	return 1;
}

/* The bytes of a record's own fields: without the sample_id_all trailer
 * that @s (NULL: none) was read from. */
uint32_t prd_own_size(const struct prd_file *f, const unsigned char *rec,
		      uint32_t size, const struct prd_sample *s)
{
	uint32_t type = ld32(rec);
	const struct prd_attr *a;
	unsigned int w;

	if (!s || type == PERF_RECORD_SAMPLE || !prd_kernel_type(type) ||
	    !f->nr_attrs)
		return size;
	a = s->attr ? s->attr : &f->attrs[0]->pub;
	if (!a->attr.sample_id_all)
		return size;
	w = trailer_words(a->attr.sample_type);
	if (w > (size - 8) / 8)
		return size;
	return 8 + ((size - 8) / 8 - w) * 8;
}

PR_HIDDEN uint32_t prd_payload_size(const struct prd_file *f,
				    const struct prd_event *ev)
{
	return prd_own_size(f, (const unsigned char *)ev->hdr, ev->hdr->size,
			    ev->sample);
}
