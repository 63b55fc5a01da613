// SPDX-License-Identifier: MIT
/*
 * Fleet profile intervals and their encodings (see profile.h).
 *
 * pprof: the interval's strings, frames and stacks map onto pprof's
 * string table, locations and functions one to one (a location per
 * distinct frame, a function per distinct name and object, a mapping per
 * distinct object and address range), samples are summed per stack,
 * event, process, thread and command, and each sample has the values
 * [samples/count, then one per event: its period in the event's unit],
 * as export -f pprof writes them.
 *
 * RowBinary: ClickHouse's binary row format (little-endian integers,
 * strings and arrays as a LEB128 length and their bytes or elements), in
 * the column order of fleet_ch_columns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile.h"

int fleet_profile_init(struct fleet_profile *p, const struct fleet_meta *m)
{
	uint32_t id;

	memset(p, 0, sizeof(*p));
	p->meta = m;
	return fleet_str(p, "", 0, &id); /* id 1: "" */
}

void fleet_profile_free(struct fleet_profile *p)
{
	itab_free(&p->strs);
	itab_free(&p->locs);
	itab_free(&p->stacks);
	free(p->samples);
	memset(p, 0, sizeof(*p));
}

static size_t itab_bytes(const struct itab *t)
{
	return t->keys_cap + t->off_cap * sizeof(size_t) +
	       (t->slot ? ((size_t)t->mask + 1) * sizeof(uint32_t) : 0);
}

size_t fleet_profile_bytes(const struct fleet_profile *p)
{
	return sizeof(*p) + itab_bytes(&p->strs) + itab_bytes(&p->locs) +
	       itab_bytes(&p->stacks) + p->cap_samples * sizeof(*p->samples);
}

int fleet_str(struct fleet_profile *p, const char *s, size_t n, uint32_t *id)
{
	return itab_intern(&p->strs, s, n, id, NULL);
}

const char *fleet_str_of(const struct fleet_profile *p, uint32_t id,
			 size_t *len)
{
	if (!id || id > p->strs.nr) {
		*len = 0;
		return "";
	}
	return itab_key(&p->strs, id, len);
}

int fleet_loc(struct fleet_profile *p, const struct fleet_loc *l, uint32_t *id)
{
	return itab_intern(&p->locs, l, sizeof(*l), id, NULL);
}

const struct fleet_loc *fleet_loc_of(const struct fleet_profile *p, uint32_t id)
{
	size_t len;

	/* keys are packed at multiples of the struct's size: aligned */
	return (const struct fleet_loc *)(const void *)itab_key(&p->locs, id,
								&len);
}

int fleet_stack(struct fleet_profile *p, const uint32_t *locs, uint32_t n,
		uint32_t *id)
{
	return itab_intern(&p->stacks, locs, n * sizeof(*locs), id, NULL);
}

const uint32_t *fleet_stack_of(const struct fleet_profile *p, uint32_t id,
			       uint32_t *n)
{
	size_t len;
	const char *k = itab_key(&p->stacks, id, &len);

	*n = (uint32_t)(len / sizeof(uint32_t));
	return (const uint32_t *)(const void *)k;
}

int fleet_add_sample(struct fleet_profile *p, const struct fleet_sample *s)
{
	if (p->nr_samples == p->cap_samples) {
		size_t n = p->cap_samples ? p->cap_samples * 2 : 1024;
		struct fleet_sample *v = realloc(p->samples, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->samples = v;
		p->cap_samples = n;
	}
	p->samples[p->nr_samples++] = *s;
	return 0;
}

int fleet_event(struct fleet_profile *p, const char *name, bool clock)
{
	for (uint32_t i = 0; i < p->nr_events; i++)
		if (!strcmp(p->events[i].name, name))
			return (int)i;
	if (p->nr_events >= FLEET_MAX_EVENTS)
		return -E2BIG;
	snprintf(p->events[p->nr_events].name,
		 sizeof(p->events[p->nr_events].name), "%s", name);
	p->events[p->nr_events].clock = clock;
	return (int)p->nr_events++;
}

void fleet_frame_name(const struct fleet_profile *p, const struct fleet_loc *l,
		      char *buf, size_t len)
{
	size_t n;
	const char *s = fleet_str_of(p, l->func, &n);

	if (l->func && n) {
		snprintf(buf, len, "%.*s", (int)n, s);
		return;
	}
	snprintf(buf, len, "0x%016" PRIx64, l->dso ? l->rel : l->ip);
}

/* ---- pprof ------------------------------------------------------------ */

struct penc {
	const struct fleet_profile *p;
	struct itab strs; /* pprof's string table (id - 1 = index) */
	uint32_t *str_map; /* profile string id -> pprof index + 1 */
	struct itab maps; /* struct map_key */
	struct itab funcs; /* {name, file} pprof string indexes */
	struct itab samples; /* struct skey */
	struct u64v count, value;
	uint32_t *loc_map, *loc_func; /* per location: mapping, function */
};

struct map_key {
	uint64_t file, build_id, start, end, pgoff;
};

struct skey {
	uint32_t stack, event, pid, tid, comm, host;
};

static int pstr(struct penc *e, const char *s, size_t n, uint64_t *idx)
{
	uint32_t id;
	int err = itab_intern(&e->strs, s, n, &id, NULL);

	*idx = id - 1;
	return err;
}

static int pstrc(struct penc *e, const char *s, uint64_t *idx)
{
	return pstr(e, s, strlen(s), idx);
}

/* pprof's index of profile string @id. */
static int pstr_id(struct penc *e, uint32_t id, uint64_t *idx)
{
	size_t n;
	const char *s;
	int err;

	if (id && id <= e->p->strs.nr && e->str_map[id]) {
		*idx = e->str_map[id] - 1;
		return 0;
	}
	s = fleet_str_of(e->p, id, &n);
	err = pstr(e, s, n, idx);
	if (!err && id && id <= e->p->strs.nr)
		e->str_map[id] = (uint32_t)*idx + 1;
	return err;
}

/* Mappings and functions of every location. */
static int penc_locations(struct penc *e)
{
	const struct fleet_profile *p = e->p;
	int err = 0;

	for (uint32_t id = 1; id <= p->locs.nr && !err; id++) {
		const struct fleet_loc *l = fleet_loc_of(p, id);
		struct map_key mk = { 0 };
		uint64_t fk[2];
		uint32_t mid = 0, fid = 0;

		if (l->dso) {
			err = pstr_id(e, l->dso, &mk.file);
			if (!err && l->build_id)
				err = pstr_id(e, l->build_id, &mk.build_id);
			mk.start = l->map_start;
			mk.end = l->map_end ? l->map_end : UINT64_MAX;
			mk.pgoff = l->map_pgoff;
			if (!err)
				err = itab_intern(&e->maps, &mk, sizeof(mk),
						  &mid, NULL);
		}
		if (!err && l->func) {
			err = pstr_id(e, l->func, &fk[0]);
			if (!err)
				err = pstr_id(e, l->dso, &fk[1]);
			if (!err)
				err = itab_intern(&e->funcs, fk, sizeof(fk),
						  &fid, NULL);
		}
		e->loc_map[id] = mid;
		e->loc_func[id] = fid;
	}
	return err;
}

static int penc_samples(struct penc *e, bool labels)
{
	const struct fleet_profile *p = e->p;
	int err = 0;

	for (size_t i = 0; i < p->nr_samples && !err; i++) {
		const struct fleet_sample *s = &p->samples[i];
		struct skey k = { .stack = s->stack,
				  .event = s->event,
				  .pid = s->pid,
				  .tid = s->tid,
				  .comm = s->comm,
				  .host = labels ? s->host : 0 };
		uint32_t id;

		err = itab_intern(&e->samples, &k, sizeof(k), &id, NULL);
		if (!err)
			err = u64v_set(&e->count, id - 1, s->count);
		if (!err)
			err = u64v_set(&e->value, id - 1, s->value);
	}
	return err;
}

static void put_value_type(struct pb *b, struct pb *sub, unsigned int field,
			   uint64_t type, uint64_t unit)
{
	pb_uint(sub, 1, type);
	pb_uint(sub, 2, unit);
	pb_msg(b, field, sub);
}

static void put_label(struct pb *smp, struct pb *lab, uint64_t key,
		      uint64_t str)
{
	pb_uint(lab, 1, key);
	pb_uint(lab, 2, str);
	pb_msg(smp, 3, lab);
}

static int num_str(struct penc *e, uint32_t v, uint64_t *idx)
{
	char buf[16];

	return pstr(e, buf, (size_t)snprintf(buf, sizeof(buf), "%u", v), idx);
}

/* The sample messages (field 2). */
static int put_samples(struct penc *e, struct pb *b, const uint64_t *ks)
{
	const struct fleet_profile *p = e->p;
	struct pb sub = { 0 }, pk = { 0 }, lab = { 0 };
	int err = 0;

	for (uint32_t id = 1; id <= e->samples.nr && !err; id++) {
		size_t kl;
		struct skey k;
		uint32_t n;
		const uint32_t *locs;
		uint64_t pid = 0, tid = 0, comm = 0, host = 0;

		memcpy(&k, itab_key(&e->samples, id, &kl), sizeof(k));
		locs = fleet_stack_of(p, k.stack, &n);
		for (uint32_t i = 0; i < n; i++)
			pb_varint(&pk, locs[i]);
		pb_msg(&sub, 1, &pk);
		pb_varint(&pk, e->count.v[id - 1]);
		for (uint32_t ev = 0; ev < p->nr_events; ev++)
			pb_varint(&pk, ev == k.event ? e->value.v[id - 1] : 0);
		pb_msg(&sub, 2, &pk);
		err = num_str(e, k.pid, &pid);
		if (!err)
			err = num_str(e, k.tid, &tid);
		if (!err)
			err = pstr_id(e, k.comm, &comm);
		if (!err && k.host)
			err = pstr_id(e, k.host, &host);
		put_label(&sub, &lab, ks[0], pid);
		put_label(&sub, &lab, ks[1], tid);
		put_label(&sub, &lab, ks[2], comm);
		if (k.host)
			put_label(&sub, &lab, ks[3], host);
		pb_msg(b, 2, &sub);
	}
	if (!err)
		err = sub.err ? sub.err : pk.err ? pk.err : lab.err;
	pb_free(&sub);
	pb_free(&pk);
	pb_free(&lab);
	return err;
}

/* The mapping most leaf frames fall in that is not a shared library nor
 * the kernel: pprof's "main binary" goes first (its mapping 1). */
static uint32_t main_mapping(struct penc *e)
{
	uint64_t *hits = calloc(e->maps.nr + 1, sizeof(*hits));
	uint32_t best = 0;

	if (!hits)
		return 1;
	for (size_t i = 0; i < e->p->nr_samples; i++) {
		uint32_t n;
		const uint32_t *locs =
			fleet_stack_of(e->p, e->p->samples[i].stack, &n);

		if (n)
			hits[e->loc_map[locs[0]]] += e->p->samples[i].count;
	}
	for (uint32_t id = 1; id <= e->maps.nr; id++) {
		struct map_key mk;
		size_t kl;
		const char *f;

		memcpy(&mk, itab_key(&e->maps, id, &kl), sizeof(mk));
		f = itab_key(&e->strs, (uint32_t)mk.file + 1, &kl);
		if (!hits[id] || (kl && f[0] == '[') || memmem(f, kl, ".so", 3))
			continue;
		if (!best || hits[id] > hits[best])
			best = id;
	}
	free(hits);
	return best ? best : 1;
}

static uint64_t swap_id(uint32_t id, uint32_t main)
{
	return id == main ? 1 : id == 1 ? main : id;
}

static void put_tables(struct penc *e, struct pb *b)
{
	struct pb sub = { 0 }, sub2 = { 0 };
	uint32_t main = main_mapping(e);

	for (uint32_t k = 1; k <= e->maps.nr; k++) {
		uint32_t id = (uint32_t)swap_id(k, main);
		struct map_key mk;
		size_t kl;

		memcpy(&mk, itab_key(&e->maps, id, &kl), sizeof(mk));
		pb_uint(&sub, 1, k);
		pb_uint(&sub, 2, mk.start);
		pb_uint(&sub, 3, mk.end);
		pb_uint(&sub, 4, mk.pgoff);
		pb_uint(&sub, 5, mk.file);
		pb_uint(&sub, 6, mk.build_id);
		pb_uint(&sub, 7, 1); /* has_functions: symbolized here */
		pb_msg(b, 3, &sub);
	}
	for (uint32_t id = 1; id <= e->p->locs.nr; id++) {
		const struct fleet_loc *l = fleet_loc_of(e->p, id);

		pb_uint(&sub, 1, id);
		pb_uint(&sub, 2,
			e->loc_map[id] ? swap_id(e->loc_map[id], main) : 0);
		pb_uint(&sub, 3, l->ip);
		if (e->loc_func[id]) {
			pb_uint(&sub2, 1, e->loc_func[id]);
			pb_msg(&sub, 4, &sub2);
		}
		pb_msg(b, 4, &sub);
	}
	for (uint32_t id = 1; id <= e->funcs.nr; id++) {
		uint64_t fk[2];
		size_t kl;

		memcpy(fk, itab_key(&e->funcs, id, &kl), sizeof(fk));
		pb_uint(&sub, 1, id);
		pb_uint(&sub, 2, fk[0]);
		pb_uint(&sub, 3, fk[0]);
		pb_uint(&sub, 4, fk[1]);
		pb_msg(b, 5, &sub);
	}
	if (sub.err || sub2.err)
		b->err = -ENOMEM;
	pb_free(&sub);
	pb_free(&sub2);
}

int fleet_pprof(const struct fleet_profile *p, bool labels, struct pb *gz)
{
	struct penc e = { .p = p };
	struct pb b = { 0 }, sub = { 0 };
	uint64_t ks[4] = { 0 }, s_samples = 0, s_count = 0, s_ns = 0,
		 tid[FLEET_MAX_EVENTS + 1], uid[FLEET_MAX_EVENTS + 1];
	int err;

	e.str_map = calloc(p->strs.nr + 1, sizeof(*e.str_map));
	e.loc_map = calloc(p->locs.nr + 1, sizeof(*e.loc_map));
	e.loc_func = calloc(p->locs.nr + 1, sizeof(*e.loc_func));
	err = !e.str_map || !e.loc_map || !e.loc_func ? -ENOMEM :
							pstrc(&e, "", &ks[0]);
	if (!err)
		err = penc_locations(&e);
	if (!err)
		err = penc_samples(&e, labels);
	if (!err)
		err = pstrc(&e, "pid", &ks[0]);
	if (!err)
		err = pstrc(&e, "tid", &ks[1]);
	if (!err)
		err = pstrc(&e, "comm", &ks[2]);
	if (!err)
		err = pstrc(&e, "host", &ks[3]);
	if (!err)
		err = pstrc(&e, "samples", &s_samples);
	if (!err)
		err = pstrc(&e, "count", &s_count);
	if (!err)
		err = pstrc(&e, "nanoseconds", &s_ns);
	tid[0] = s_samples;
	uid[0] = s_count;
	for (uint32_t i = 0; !err && i < p->nr_events; i++) {
		err = pstrc(&e, p->events[i].name, &tid[i + 1]);
		uid[i + 1] = p->events[i].clock ? s_ns : s_count;
	}
	if (err)
		goto out;
	for (uint32_t k = 0; k <= p->nr_events; k++)
		put_value_type(&b, &sub, 1, tid[k], uid[k]);
	err = put_samples(&e, &b, ks);
	if (err)
		goto out;
	put_tables(&e, &b);
	for (uint32_t id = 1; id <= e.strs.nr; id++) {
		size_t kl;
		const char *k = itab_key(&e.strs, id, &kl);

		pb_bytes(&b, 6, k, kl);
	}
	pb_uint(&b, 9, p->start_ns);
	pb_uint(&b, 10, p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0);
	if (p->nr_events) {
		const struct fleet_event *ev = &p->events[0];

		put_value_type(&b, &sub, 11, tid[1], uid[1]);
		pb_uint(&b, 12,
			ev->freq ? (ev->clock ? 1000000000u / ev->freq : 0) :
				   ev->period);
		pb_uint(&b, 14, tid[1]);
	}
	err = b.err ? b.err : sub.err;
	if (!err)
		err = gzip_pb(b.p, b.len, gz);
out:
	pb_free(&b);
	pb_free(&sub);
	itab_free(&e.strs);
	itab_free(&e.maps);
	itab_free(&e.funcs);
	itab_free(&e.samples);
	free(e.count.v);
	free(e.value.v);
	free(e.str_map);
	free(e.loc_map);
	free(e.loc_func);
	return err;
}

/* ---- ClickHouse RowBinary -------------------------------------------- */

const char fleet_ch_columns[] =
	"time_ns, host, pid, tid, cpu, comm, event, value, stack, dsos, "
	"addrs, build_ids, labels.key, labels.value";

/* Readable by ClickHouse 18.16 and today's: MergeTree with PARTITION BY
 * and ORDER BY, Nested for the labels, a Date column for the partitions
 * computed from the time. */
const char fleet_ch_schema[] =
	"CREATE TABLE IF NOT EXISTS perfring.samples ("
	"time_ns UInt64, host String, pid UInt32, tid UInt32, cpu UInt32, "
	"comm String, event String, value UInt64, "
	"stack Array(String), dsos Array(String), addrs Array(UInt64), "
	"build_ids Array(String), "
	"labels Nested(key String, value String), "
	"date Date DEFAULT toDate(toDateTime(intDiv(time_ns, 1000000000)))"
	") ENGINE = MergeTree PARTITION BY date ORDER BY (host, time_ns)";

static void rb_u32(struct pb *b, uint32_t v)
{
	pb_raw(b, &v, sizeof(v)); /* x86_64 and arm64: little-endian */
}

static void rb_u64(struct pb *b, uint64_t v)
{
	pb_raw(b, &v, sizeof(v));
}

static void rb_str(struct pb *b, const char *s, size_t n)
{
	pb_varint(b, n);
	pb_raw(b, s, n);
}

static void rb_strc(struct pb *b, const char *s)
{
	rb_str(b, s ? s : "", s ? strlen(s) : 0);
}

static void rb_pstr(struct pb *b, const struct fleet_profile *p, uint32_t id)
{
	size_t n;
	const char *s = fleet_str_of(p, id, &n);

	rb_str(b, s, n);
}

int fleet_rowbinary(const struct fleet_profile *p, struct pb *out)
{
	const struct fleet_meta *m = p->meta;
	char name[512];

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct fleet_sample *s = &p->samples[i];
		uint32_t n;
		const uint32_t *locs = fleet_stack_of(p, s->stack, &n);

		rb_u64(out, s->time_ns);
		if (s->host)
			rb_pstr(out, p, s->host);
		else
			rb_strc(out, m ? m->host : "");
		rb_u32(out, s->pid);
		rb_u32(out, s->tid);
		rb_u32(out, s->cpu);
		rb_pstr(out, p, s->comm);
		rb_strc(out, s->event < p->nr_events ?
				     p->events[s->event].name :
				     "");
		rb_u64(out, s->value);
		pb_varint(out, n);
		for (uint32_t k = 0; k < n; k++) {
			fleet_frame_name(p, fleet_loc_of(p, locs[k]), name,
					 sizeof(name));
			rb_strc(out, name);
		}
		pb_varint(out, n);
		for (uint32_t k = 0; k < n; k++)
			rb_pstr(out, p, fleet_loc_of(p, locs[k])->dso);
		pb_varint(out, n);
		for (uint32_t k = 0; k < n; k++)
			rb_u64(out, fleet_loc_of(p, locs[k])->rel);
		pb_varint(out, n);
		for (uint32_t k = 0; k < n; k++)
			rb_pstr(out, p, fleet_loc_of(p, locs[k])->build_id);
		pb_varint(out, m ? (uint64_t)m->nr_labels : 0);
		for (int k = 0; m && k < m->nr_labels; k++)
			rb_strc(out, m->keys[k]);
		pb_varint(out, m ? (uint64_t)m->nr_labels : 0);
		for (int k = 0; m && k < m->nr_labels; k++)
			rb_strc(out, m->values[k]);
	}
	return out->err;
}
