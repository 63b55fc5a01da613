// SPDX-License-Identifier: MIT
/*
 * `perfring export -f pprof`: the samples of a perf.data as a pprof
 * profile (github.com/google/pprof, proto/profile.proto), the format
 * `go tool pprof`, Pyroscope, Parca and Grafana read.
 *
 * Samples are aggregated as they come in four intern tables (byte keys to
 * dense ids): mappings (dso, start, end, pgoff), locations (mapping,
 * address), functions (name, file) and samples (event, pid, tid, cpu,
 * comm, location ids leaf first).  A sample's values are [samples/count,
 * then one per event with samples: its period in the event's unit]
 * (cpu-clock and task-clock count nanoseconds, every other event counts
 * events); a sample carries the value of its own event only.  At the end
 * the strings are interned, the Profile message is encoded with the small
 * protobuf writer of format/pbuf.c (varints and length-delimited fields
 * are all the format needs: docs/design.md says why no protobuf library)
 * and the bytes go through zlib's deflate with a gzip header.
 *
 * Stacks: the callchain, then (--call-graph dwarf) the user frames unwound
 * by unwind.c, as export -f folded has them.  Build-ids: from MMAP2
 * records (threads.c) or the BUILD_ID feature.
 * time_nanos: CLOCK_DATA's wall-clock reference if the file has one, else
 * the file's modification time less the samples' span (a recording ends
 * as the file is last written).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "../common/log.h"
#include "../format/offcpu_format.h"
#include "../format/pbuf.h"
#include "../machine/intern.h"
#include "../machine/srcline.h"
#include "../machine/unwind.h"
#include "pprof.h"

#define MAX_SAMPLE_KEYS (1u << 22) /* distinct samples kept (more: lumped) */

/* ---- the profile being built ----------------------------------------- */

struct map_key {
	uint64_t dso; /* struct dso * (they live as long as the machine) */
	uint64_t start, end, pgoff;
};

struct loc_key {
	uint64_t mapping_id, address;
};

struct func_key {
	uint64_t name, file; /* string ids */
	uint64_t start_line; /* 0: unknown */
};

/* Sample key: these (pid, tid, cpu, comm: label string ids), then the
 * location ids, leaf first. */
enum { SK_ATTR, SK_PID, SK_TID, SK_CPU, SK_COMM, SK_LOCS };

struct pprof {
	struct prd_file *f;
	struct itab strs, maps, locs, funcs, samples;
	struct u64v loc_func; /* function id per location (0: none) */
	struct u64v map_has_func; /* a location of the mapping has one */
	struct u64v count, period; /* per sample */
	struct u64v attr_used; /* per attr index: samples added */
	uint64_t *key; /* sample key being built */
	size_t key_cap;
	uint64_t first_time, last_time;
	bool full_warned;
	struct srclines *src; /* source files of functions (libdw) */
};

int pprof_new(struct prd_file *f, struct pprof **out)
{
	struct pprof *p = calloc(1, sizeof(*p));
	uint32_t id;
	int err;

	if (!p)
		return -ENOMEM;
	p->f = f;
	p->first_time = UINT64_MAX;
	/* string_table[0] must be "". */
	err = itab_intern(&p->strs, "", 0, &id, NULL);
	if (err) {
		pprof_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	itab_free(&p->strs);
	itab_free(&p->maps);
	itab_free(&p->locs);
	itab_free(&p->funcs);
	srclines_free(p->src);
	itab_free(&p->samples);
	free(p->loc_func.v);
	free(p->map_has_func.v);
	free(p->count.v);
	free(p->period.v);
	free(p->attr_used.v);
	free(p->key);
	free(p);
}

/* String table index of @s (@n bytes). */
static int str_id(struct pprof *p, const char *s, size_t n, uint64_t *idx)
{
	uint32_t id;
	int err = itab_intern(&p->strs, s, n, &id, NULL);

	if (err)
		return err;
	*idx = id - 1;
	return 0;
}

static int str_idc(struct pprof *p, const char *s, uint64_t *idx)
{
	return str_id(p, s, strlen(s), idx);
}

/* String table index of a number in decimal (labels). */
static int num_str(struct pprof *p, int64_t v, uint64_t *idx)
{
	char buf[24];

	return str_id(p, buf,
		      (size_t)snprintf(buf, sizeof(buf), "%lld", (long long)v),
		      idx);
}

/*
 * A function's file: the source file and first line of its symbol where
 * the object (or its debug file) has line tables, as pprof's Function
 * wants them (file.c, 42), else the object's path.
 */
static int func_file(struct pprof *p, const struct addr_loc *al,
		     struct func_key *fk)
{
	char buf[1024], *colon;

	fk->start_line = 0;
	if (al->dso && !al->kernel && al->map &&
	    (p->src || (p->src = srclines_new())) &&
	    srcline_text(p->src, al->dso, al->sym->start, al->sym->start, buf,
			 sizeof(buf)) > 0 &&
	    buf[0] != '[' && (colon = strrchr(buf, ':')) && colon[1] >= '1' &&
	    colon[1] <= '9') {
		fk->start_line = strtoull(colon + 1, NULL, 10);
		*colon = 0;
		return str_idc(p, buf, &fk->file);
	}
	return str_idc(p, al->dso ? al->dso->name : "", &fk->file);
}

/* The location id of one resolved frame. */
static int location_of(struct pprof *p, const struct addr_loc *al, uint64_t ip,
		       uint64_t *loc)
{
	struct map_key mk = { 0 };
	struct loc_key lk = { 0 };
	uint32_t id;
	bool added;
	int err;

	if (al->map || al->dso) {
		mk.dso = (uint64_t)(uintptr_t)al->dso;
		if (al->map) {
			mk.start = al->map->start;
			mk.end = al->map->end;
			mk.pgoff = al->map->pgoff;
		} else {
			mk.end = UINT64_MAX; /* kallsyms without a map */
		}
		err = itab_intern(&p->maps, &mk, sizeof(mk), &id, NULL);
		if (err)
			return err;
		lk.mapping_id = id;
	}
	lk.address = ip;
	err = itab_intern(&p->locs, &lk, sizeof(lk), &id, &added);
	if (err)
		return err;
	*loc = id;
	if (added && al->sym) {
		struct func_key fk;
		uint32_t fid;

		err = str_idc(p, al->sym->name, &fk.name);
		if (!err)
			err = func_file(p, al, &fk);
		if (!err)
			err = itab_intern(&p->funcs, &fk, sizeof(fk), &fid,
					  NULL);
		if (!err)
			err = u64v_set(&p->loc_func, id - 1, fid);
		if (!err && lk.mapping_id)
			err = u64v_set(&p->map_has_func, lk.mapping_id - 1, 1);
		if (err)
			return err;
	}
	return 0;
}

static int key_room(struct pprof *p, size_t n)
{
	uint64_t *v;

	if (n <= p->key_cap)
		return 0;
	v = realloc(p->key, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->key = v;
	p->key_cap = n;
	return 0;
}

int pprof_add(struct pprof *p, struct machine *m, struct thread *t,
	      const struct prd_event *ev)
{
	const struct prd_sample *s = ev->sample;
	uint8_t cpumode = ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	size_t n = SK_LOCS;
	uint64_t user[UNWIND_MAX_FRAMES];
	unsigned nr_user;
	struct addr_loc al;
	uint32_t id;
	bool added;
	int err;

	if (s->time != UINT64_MAX && s->time && !offcpu_summed_time(s->time)) {
		if (s->time < p->first_time)
			p->first_time = s->time;
		if (s->time > p->last_time)
			p->last_time = s->time;
	}
	/* --call-graph dwarf: the user frames unwound below the callchain */
	nr_user = unwind_user_stack(m, t, s, user, UNWIND_MAX_FRAMES);
	err = key_room(p, SK_LOCS + s->nr_callchain + nr_user + 1);
	if (err)
		return err;
	p->key[SK_ATTR] = s->attr ? s->attr->index : 0;
	err = num_str(p, (int32_t)s->pid, &p->key[SK_PID]);
	if (!err)
		err = num_str(p, (int32_t)s->tid, &p->key[SK_TID]);
	if (!err)
		err = num_str(p, (int64_t)s->cpu, &p->key[SK_CPU]);
	if (!err)
		err = str_idc(p, t->comm, &p->key[SK_COMM]);
	if (err)
		return err;
	if (s->nr_callchain) {
		uint8_t mode = 0; /* before a context marker: guess */

		for (uint64_t i = 0; i < s->nr_callchain; i++) {
			uint64_t ip = s->callchain[i];

			if (callchain_marker(ip, &mode))
				continue;
			machine_resolve(m, t, mode, ip, true, &al);
			err = location_of(p, &al, ip, &p->key[n]);
			if (err)
				return err;
			n++;
		}
	}
	for (unsigned i = 0; i < nr_user; i++) {
		machine_resolve(m, t, PERF_RECORD_MISC_USER, user[i], true,
				&al);
		err = location_of(p, &al, user[i], &p->key[n]);
		if (err)
			return err;
		n++;
	}
	if (n == SK_LOCS) {
		machine_resolve(m, t, cpumode, s->ip, true, &al);
		err = location_of(p, &al, s->ip, &p->key[n]);
		if (err)
			return err;
		n++;
	}
	err = p->samples.nr >= MAX_SAMPLE_KEYS ?
		      -E2BIG :
		      itab_intern(&p->samples, p->key, n * sizeof(*p->key), &id,
				  &added);
	if (err == -E2BIG) {
		/* Too many distinct stacks: the rest lose theirs. */
		if (!p->full_warned) {
			p->full_warned = true;
			pr_warn("export: over %u distinct pprof samples: the stacks of the rest are left out",
				MAX_SAMPLE_KEYS);
		}
		n = SK_LOCS;
		err = itab_intern(&p->samples, p->key, n * sizeof(*p->key), &id,
				  &added);
	}
	if (err)
		return err;
	err = u64v_set(&p->count, id - 1, 1);
	if (!err)
		err = u64v_set(&p->period, id - 1, s->period);
	if (!err)
		err = u64v_set(&p->attr_used, p->key[SK_ATTR], 1);
	return err;
}

/* ---- writing ---------------------------------------------------------- */

static bool is_clock_event(const struct prd_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		a->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

static enum offcpu_kind attr_offcpu(const struct prd_attr *a)
{
	return offcpu_kind_of(a->attr.type, a->attr.config, a->name);
}

/*
 * With off-CPU time (record --off-cpu) the value types are the ones
 * Go's and the profilers' wall-clock profiles use: "cpu" (the clock
 * events), "off_cpu" (offcpu-time), "preempted" (offcpu-preempted), and
 * after them "wall", the three summed.  Otherwise the events' names.
 */
static const char *value_name(const struct prd_attr *a, bool offcpu)
{
	if (offcpu && is_clock_event(a))
		return "cpu";
	if (offcpu && attr_offcpu(a) == OFFCPU_BLOCKED)
		return "off_cpu";
	if (offcpu && attr_offcpu(a) == OFFCPU_PREEMPTED)
		return "preempted";
	return a->name ? a->name : "event";
}

static bool wall_part(const struct prd_attr *a)
{
	return is_clock_event(a) || attr_offcpu(a) == OFFCPU_BLOCKED ||
	       attr_offcpu(a) == OFFCPU_PREEMPTED;
}

/* The BUILD_ID feature: records {header, pid, build_id[24], filename}
 * (misc bit 15: build_id[20] holds the id's size). */
static void apply_build_ids(struct pprof *p, struct machine *m)
{
	size_t len = 0, off = 0;
	const uint8_t *b = prd_feature(p->f, PRD_FEAT_BUILD_ID, &len);
	struct prd_record_header_build_id e;
	uint32_t rsz;

	while (b && (rsz = prd_build_id_entry(b + off, len - off, &e))) {
		size_t n = prd_build_id_size(&e);
		struct dso *d;

		if (n > 20)
			n = 20;
		d = e.filename_len ?
			    dsos_findnew(&m->dsos, e.filename, e.filename_len) :
			    NULL;
		if (d && !d->build_id_size && n)
			dso_set_build_id(d, e.build_id, n);
		off += rsz;
	}
}

/* Wall-clock nanoseconds of the first sample (0: unknown). */
static uint64_t start_wall_ns(struct pprof *p, const char *input)
{
	size_t len = 0;
	const uint8_t *cd = prd_feature(p->f, PRD_FEAT_CLOCK_DATA, &len);
	uint64_t span =
		p->last_time > p->first_time ? p->last_time - p->first_time : 0;
	struct timespec now;
	struct stat st;

	if (cd && len >= 24) {
		uint32_t ver;
		uint64_t tod, clk;

		memcpy(&ver, cd, 4);
		memcpy(&tod, cd + 8, 8);
		memcpy(&clk, cd + 16, 8);
		if (ver >= 1 && p->first_time != UINT64_MAX)
			return tod + (p->first_time - clk);
	}
	if (input && strcmp(input, "-") && !stat(input, &st)) {
		uint64_t mt = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
			      (uint64_t)st.st_mtim.tv_nsec;

		return mt > span ? mt - span : 0;
	}
	if (clock_gettime(CLOCK_REALTIME, &now))
		return 0;
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec -
	       span;
}

/*
 * pprof takes mapping 1 for the main binary (its "File:" line): the
 * executable (an ELF file not named *.so*) where the most samples end,
 * else the file where the most end.  @hits: room for the mappings.
 */
static uint32_t main_mapping(struct pprof *p, uint64_t *hits)
{
	uint32_t best = 0, best_any = 0;

	for (uint32_t id = 1; id <= p->samples.nr; id++) {
		size_t kl;
		const char *kp = itab_key(&p->samples, id, &kl);
		uint64_t loc;
		struct loc_key lk;

		if (kl < (SK_LOCS + 1) * sizeof(loc))
			continue;
		memcpy(&loc, kp + SK_LOCS * sizeof(loc), sizeof(loc));
		memcpy(&lk, itab_key(&p->locs, (uint32_t)loc, &kl), sizeof(lk));
		if (lk.mapping_id)
			hits[lk.mapping_id] += p->count.v[id - 1];
	}
	for (uint32_t id = 1; id <= p->maps.nr; id++) {
		struct map_key mk;
		size_t kl;
		const struct dso *d;

		memcpy(&mk, itab_key(&p->maps, id, &kl), sizeof(mk));
		d = (const struct dso *)(uintptr_t)mk.dso;
		if (!d || d->kind != DSO_FILE || !hits[id])
			continue;
		if (!best_any || hits[id] > hits[best_any])
			best_any = id;
		if (!strstr(d->short_name ? d->short_name : d->name, ".so") &&
		    (!best || hits[id] > hits[best]))
			best = id;
	}
	return best ? best : best_any ? best_any : 1;
}

/* Mapping ids as written: @main and 1 trade places. */
static uint64_t swap_id(uint32_t id, uint32_t main)
{
	return id == main ? 1 : id == 1 ? main : id;
}

static void put_value_type(struct pb *b, struct pb *sub, unsigned int field,
			   uint64_t type, uint64_t unit)
{
	pb_uint(sub, 1, type);
	pb_uint(sub, 2, unit);
	pb_msg(b, field, sub);
}

/* Labels are strings, numbers too: Pyroscope and Parca read string labels
 * only, and pprof drops a numeric label of 0 (cpu 0). */
static void put_label(struct pb *smp, struct pb *lab, uint64_t key,
		      uint64_t str)
{
	pb_uint(lab, 1, key);
	pb_uint(lab, 2, str);
	pb_msg(smp, 3, lab);
}

/* What pprof_write() builds the profile with. */
struct pprof_out {
	uint32_t nattrs;
	/* value slot (1..) of each attr, 0: no samples */
	uint32_t *slot;
	uint32_t nslots, first_attr;
	/* the "wall" slot (on- plus off-CPU time), 0: no off-CPU events */
	uint32_t wall;
	bool offcpu; /* the file has off-CPU time: wall-clock value names */
	/* per value slot: its type's and unit's strings; a sample's values */
	uint64_t *tid, *uid, *vals;
	/* per mapping: its file's and build id's strings, samples ending in it */
	uint64_t *map_file, *map_bid, *map_hits;
	uint32_t main_map;
	uint64_t s_samples, s_count, s_pid, s_tid, s_cpu, s_comm, s_ns;
	struct pb b, sub, sub2, pk;
};

/* Every string of the profile, interned before the table is written. */
static int intern_strings(struct pprof *p, struct machine *m,
			  struct pprof_out *w)
{
	int err;

	apply_build_ids(p, m);
	err = str_idc(p, "samples", &w->s_samples);
	if (!err)
		err = str_idc(p, "count", &w->s_count);
	if (!err)
		err = str_idc(p, "nanoseconds", &w->s_ns);
	if (!err)
		err = str_idc(p, "pid", &w->s_pid);
	if (!err)
		err = str_idc(p, "tid", &w->s_tid);
	if (!err)
		err = str_idc(p, "cpu", &w->s_cpu);
	if (!err)
		err = str_idc(p, "comm", &w->s_comm);
	w->tid[0] = w->s_samples;
	w->uid[0] = w->s_count;
	for (uint32_t i = 0; !err && i < w->nattrs; i++) {
		const struct prd_attr *a = prd_attr(p->f, i);

		if (!w->slot[i])
			continue;
		err = str_idc(p, value_name(a, w->offcpu), &w->tid[w->slot[i]]);
		w->uid[w->slot[i]] = is_clock_event(a) || attr_offcpu(a) ?
					     w->s_ns :
					     w->s_count;
	}
	if (!err && w->wall) {
		err = str_idc(p, "wall", &w->tid[w->wall]);
		w->uid[w->wall] = w->s_ns;
	}
	for (uint32_t id = 1; !err && id <= p->maps.nr; id++) {
		struct map_key mk;
		size_t kl;
		const struct dso *d;

		memcpy(&mk, itab_key(&p->maps, id, &kl), sizeof(mk));
		d = (const struct dso *)(uintptr_t)mk.dso;
		err = str_idc(p, d ? d->name : "", &w->map_file[id]);
		if (!err && d && d->build_id_size) {
			char hex[41];

			for (unsigned int k = 0; k < d->build_id_size; k++)
				snprintf(hex + 2 * k, 3, "%02x",
					 d->build_id[k]);
			err = str_id(p, hex, 2u * d->build_id_size,
				     &w->map_bid[id]);
		}
	}
	return err;
}

/* 2: sample */
static void put_samples(struct pprof *p, struct pprof_out *w)
{
	for (uint32_t id = 1; id <= p->samples.nr; id++) {
		size_t kl;
		uint64_t key[SK_LOCS];
		const char *kp = itab_key(&p->samples, id, &kl);
		size_t nloc = kl / sizeof(uint64_t) - SK_LOCS;
		uint64_t attr;

		memcpy(key, kp, sizeof(key));
		attr = key[SK_ATTR];
		for (size_t i = 0; i < nloc; i++) {
			uint64_t loc;

			memcpy(&loc, kp + (SK_LOCS + i) * sizeof(loc),
			       sizeof(loc));
			pb_varint(&w->pk, loc);
		}
		pb_msg(&w->sub, 1, &w->pk);
		memset(w->vals, 0, (w->nslots + 1) * sizeof(*w->vals));
		w->vals[0] = p->count.v[id - 1];
		if (attr < w->nattrs && w->slot[attr])
			w->vals[w->slot[attr]] = p->period.v[id - 1];
		if (w->wall && attr < w->nattrs &&
		    wall_part(prd_attr(p->f, attr)))
			w->vals[w->wall] = p->period.v[id - 1];
		for (uint32_t k = 0; k <= w->nslots; k++)
			pb_varint(&w->pk, w->vals[k]);
		pb_msg(&w->sub, 2, &w->pk);
		put_label(&w->sub, &w->sub2, w->s_pid, key[SK_PID]);
		put_label(&w->sub, &w->sub2, w->s_tid, key[SK_TID]);
		put_label(&w->sub, &w->sub2, w->s_cpu, key[SK_CPU]);
		put_label(&w->sub, &w->sub2, w->s_comm, key[SK_COMM]);
		pb_msg(&w->b, 2, &w->sub);
	}
}

/* 3: mapping (the main one first: pprof goes by their order), 4:
 * location, 5: function */
static void put_places(struct pprof *p, struct pprof_out *w)
{
	struct pb *b = &w->b, *sub = &w->sub, *sub2 = &w->sub2;

	for (uint32_t k = 1; k <= p->maps.nr; k++) {
		uint32_t id = (uint32_t)swap_id(k, w->main_map);
		struct map_key mk;
		size_t kl;
		bool hf = id - 1 < p->map_has_func.nr &&
			  p->map_has_func.v[id - 1];

		memcpy(&mk, itab_key(&p->maps, id, &kl), sizeof(mk));
		pb_uint(sub, 1, k);
		pb_uint(sub, 2, mk.start);
		pb_uint(sub, 3, mk.end);
		pb_uint(sub, 4, mk.pgoff);
		pb_uint(sub, 5, w->map_file[id]);
		pb_uint(sub, 6, w->map_bid[id]);
		pb_uint(sub, 7, hf);
		pb_msg(b, 3, sub);
	}
	for (uint32_t id = 1; id <= p->locs.nr; id++) {
		struct loc_key lk;
		size_t kl;
		uint64_t fid = id - 1 < p->loc_func.nr ? p->loc_func.v[id - 1] :
							 0;

		memcpy(&lk, itab_key(&p->locs, id, &kl), sizeof(lk));
		pb_uint(sub, 1, id);
		pb_uint(sub, 2, swap_id((uint32_t)lk.mapping_id, w->main_map));
		pb_uint(sub, 3, lk.address);
		if (fid) {
			pb_uint(sub2, 1, fid);
			pb_msg(sub, 4, sub2);
		}
		pb_msg(b, 4, sub);
	}
	for (uint32_t id = 1; id <= p->funcs.nr; id++) {
		struct func_key fk;
		size_t kl;

		memcpy(&fk, itab_key(&p->funcs, id, &kl), sizeof(fk));
		pb_uint(sub, 1, id);
		pb_uint(sub, 2, fk.name);
		pb_uint(sub, 3, fk.name);
		pb_uint(sub, 4, fk.file);
		if (fk.start_line)
			pb_uint(sub, 5, fk.start_line);
		pb_msg(b, 5, sub);
	}
}

/* 6: string_table; 9, 10: time_nanos, duration_nanos; 11, 12:
 * period_type, period; 14: default_sample_type */
static void put_tail(struct pprof *p, struct pprof_out *w, const char *input)
{
	struct pb *b = &w->b;

	for (uint32_t id = 1; id <= p->strs.nr; id++) {
		size_t kl;
		const char *k = itab_key(&p->strs, id, &kl);

		pb_bytes(b, 6, k, kl);
	}
	if (p->first_time != UINT64_MAX) {
		pb_uint(b, 9, start_wall_ns(p, input));
		pb_uint(b, 10, p->last_time - p->first_time);
	}
	if (w->first_attr != UINT32_MAX) {
		const struct prd_attr *a = prd_attr(p->f, w->first_attr);
		uint64_t period = a->attr.sample_period;
		uint32_t s = w->slot[w->first_attr];

		if (a->attr.freq)
			period = is_clock_event(a) && a->attr.sample_freq ?
					 1000000000u / a->attr.sample_freq :
					 0;
		put_value_type(b, &w->sub, 11, w->tid[s], w->uid[s]);
		pb_uint(b, 12, period);
		pb_uint(b, 14, w->tid[s]);
	}
}

int pprof_write(struct pprof *p, struct machine *m, const char *input,
		FILE *out)
{
	struct pprof_out w = { .nattrs = prd_nr_attrs(p->f),
			       .first_attr = UINT32_MAX };
	int err = -ENOMEM;

	w.slot = calloc(w.nattrs ? w.nattrs : 1, sizeof(*w.slot));
	if (!w.slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < w.nattrs; i++)
		if (i < p->attr_used.nr && p->attr_used.v[i]) {
			w.slot[i] = ++w.nslots;
			if (w.first_attr == UINT32_MAX)
				w.first_attr = i;
			w.offcpu |= attr_offcpu(prd_attr(p->f, i)) ==
				    OFFCPU_BLOCKED;
		}
	if (w.offcpu)
		w.wall = ++w.nslots;
	w.tid = calloc(w.nslots + 1, sizeof(*w.tid));
	w.uid = calloc(w.nslots + 1, sizeof(*w.uid));
	w.vals = calloc(w.nslots + 1, sizeof(*w.vals));
	w.map_file = calloc(p->maps.nr + 1, sizeof(*w.map_file));
	w.map_bid = calloc(p->maps.nr + 1, sizeof(*w.map_bid));
	w.map_hits = calloc(p->maps.nr + 1, sizeof(*w.map_hits));
	if (!w.tid || !w.uid || !w.vals || !w.map_file || !w.map_bid ||
	    !w.map_hits)
		goto out;
	w.main_map = main_mapping(p, w.map_hits);

	/* Every string first (the table is written last). */
	err = intern_strings(p, m, &w);
	if (err)
		goto out;

	/* 1: sample_type */
	for (uint32_t k = 0; k <= w.nslots; k++)
		put_value_type(&w.b, &w.sub, 1, w.tid[k], w.uid[k]);
	put_samples(p, &w);
	put_places(p, &w);
	put_tail(p, &w, input);
	err = w.b.err	 ? w.b.err :
	      w.sub.err	 ? w.sub.err :
	      w.sub2.err ? w.sub2.err :
			   w.pk.err;
	if (!err)
		err = gzip_out(&w.b, out);
out:
	free(w.b.p);
	free(w.sub.p);
	free(w.sub2.p);
	free(w.pk.p);
	free(w.slot);
	free(w.tid);
	free(w.uid);
	free(w.vals);
	free(w.map_file);
	free(w.map_bid);
	free(w.map_hits);
	return err;
}
