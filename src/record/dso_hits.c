// SPDX-License-Identifier: MIT
/* The DSOs samples hit, for HEADER_BUILD_ID (dso_hits.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/perf_event.h>
#include "../common/log.h"
#include "../format/buildid.h"
#include "../format/perf_record.h"
#include "dso_hits.h"

#define PENDING_MAX 65536 /* samples seen before their MMAP, kept */
#define NAME_MAX_LEN 4096

struct dso {
	char *name;
	bool hit;
};

struct map {
	uint64_t start, end;
	uint32_t dso;
};

struct proc {
	int32_t pid; /* 0: free slot */
	struct map *maps;
	uint32_t n, cap, last;
};

struct pending {
	int32_t pid;
	uint64_t ip;
};

struct dso_hits {
	bool ok; /* the samples carry IP and TID where expected */
	size_t ip_off, pid_off;
	struct dso *dsos;
	uint32_t nr_dsos, cap_dsos;
	struct proc *procs; /* open addressing by pid */
	uint32_t cap_procs, nr_procs;
	bool kernel_mapped, kernel_hit, vdso_mapped;
	struct pending *pend;
	uint32_t nr_pend;
	bool oom;
};

struct dso_hits *dso_hits_new(uint64_t sample_type)
{
	struct dso_hits *h = calloc(1, sizeof(*h));
	struct prd_sample_pos pos;

	if (!h)
		return NULL;
	prd_sample_positions(sample_type, &pos);
	h->ok = pos.ip && pos.tid;
	h->ip_off = pos.ip;
	h->pid_off = pos.tid;
	return h;
}

void dso_hits_free(struct dso_hits *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->nr_dsos; i++)
		free(h->dsos[i].name);
	for (uint32_t i = 0; i < h->cap_procs; i++)
		free(h->procs[i].maps);
	free(h->dsos);
	free(h->procs);
	free(h->pend);
	free(h);
}

static uint32_t pid_hash(int32_t pid, uint32_t cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

static struct proc *proc_find(struct dso_hits *h, int32_t pid)
{
	if (!h->cap_procs || pid <= 0)
		return NULL;
	for (uint32_t i = pid_hash(pid, h->cap_procs);;
	     i = (i + 1) & (h->cap_procs - 1)) {
		if (h->procs[i].pid == pid)
			return &h->procs[i];
		if (!h->procs[i].pid)
			return NULL;
	}
}

static struct proc *proc_get(struct dso_hits *h, int32_t pid)
{
	struct proc *p = proc_find(h, pid);
	uint32_t i;

	if (p || pid <= 0)
		return p;
	if ((h->nr_procs + 1) * 2 > h->cap_procs) {
		uint32_t cap = h->cap_procs ? h->cap_procs * 2 : 256;
		struct proc *old = h->procs, *n = calloc(cap, sizeof(*n));

		if (!n) {
			h->oom = true;
			return NULL;
		}
		for (uint32_t k = 0; k < h->cap_procs; k++) {
			if (!old[k].pid)
				continue;
			for (i = pid_hash(old[k].pid, cap); n[i].pid;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = old[k];
		}
		free(old);
		h->procs = n;
		h->cap_procs = cap;
	}
	for (i = pid_hash(pid, h->cap_procs); h->procs[i].pid;
	     i = (i + 1) & (h->cap_procs - 1))
		;
	h->procs[i].pid = pid;
	h->nr_procs++;
	return &h->procs[i];
}

static int dso_get(struct dso_hits *h, const char *name, uint32_t *idx)
{
	for (uint32_t i = h->nr_dsos; i-- > 0;)
		if (!strcmp(h->dsos[i].name, name)) {
			*idx = i;
			return 0;
		}
	if (h->nr_dsos == h->cap_dsos) {
		uint32_t cap = h->cap_dsos ? h->cap_dsos * 2 : 64;
		struct dso *d = realloc(h->dsos, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		h->dsos = d;
		h->cap_dsos = cap;
	}
	h->dsos[h->nr_dsos].name = strdup(name);
	if (!h->dsos[h->nr_dsos].name)
		return -ENOMEM;
	h->dsos[h->nr_dsos].hit = false;
	*idx = h->nr_dsos++;
	return 0;
}

/* A new mapping replaces what it overlaps, as an mmap() does. */
static void map_add(struct dso_hits *h, int32_t pid, uint64_t start,
		    uint64_t len, const char *name)
{
	struct proc *p = proc_get(h, pid);
	uint32_t idx, k = 0;

	if (!p || !len || start + len < start || dso_get(h, name, &idx)) {
		h->oom |= p == NULL && pid > 0;
		return;
	}
	for (uint32_t i = 0; i < p->n; i++)
		if (p->maps[i].end <= start || p->maps[i].start >= start + len)
			p->maps[k++] = p->maps[i];
	p->n = k;
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 16;
		struct map *m = realloc(p->maps, cap * sizeof(*m));

		if (!m) {
			h->oom = true;
			return;
		}
		p->maps = m;
		p->cap = cap;
	}
	p->maps[p->n++] = (struct map){ start, start + len, idx };
	p->last = 0;
}

static void proc_fork(struct dso_hits *h, int32_t pid, int32_t ppid)
{
	struct proc *parent = proc_find(h, ppid), *child;
	struct map *m;

	if (!parent || !parent->n || pid == ppid)
		return;
	child = proc_get(h, pid);
	parent = proc_find(h, ppid); /* the table may have moved */
	if (!child || !parent || child->n)
		return;
	m = malloc(parent->n * sizeof(*m));
	if (!m) {
		h->oom = true;
		return;
	}
	memcpy(m, parent->maps, parent->n * sizeof(*m));
	child->maps = m;
	child->n = child->cap = parent->n;
}

static bool hit(struct dso_hits *h, int32_t pid, uint64_t ip)
{
	struct proc *p = proc_find(h, pid);

	if (!p)
		return false;
	if (p->last < p->n && ip >= p->maps[p->last].start &&
	    ip < p->maps[p->last].end) {
		h->dsos[p->maps[p->last].dso].hit = true;
		return true;
	}
	for (uint32_t i = 0; i < p->n; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end) {
			h->dsos[p->maps[i].dso].hit = true;
			p->last = i;
			return true;
		}
	return false;
}

static void sample(struct dso_hits *h, const unsigned char *r, size_t size,
		   uint16_t misc)
{
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint64_t ip;
	int32_t pid;

	if (mode == PERF_RECORD_MISC_KERNEL) {
		h->kernel_hit = true;
		return;
	}
	if (mode != PERF_RECORD_MISC_USER || !h->ok || h->pid_off + 4 > size)
		return;
	memcpy(&ip, r + h->ip_off, 8);
	memcpy(&pid, r + h->pid_off, 4);
	if (hit(h, pid, ip))
		return;
	/* its MMAP may sit in another CPU's ring not read yet */
	if (!h->pend)
		h->pend = malloc(PENDING_MAX * sizeof(*h->pend));
	if (h->pend && h->nr_pend < PENDING_MAX)
		h->pend[h->nr_pend++] = (struct pending){ pid, ip };
}

static void note_mmap(struct dso_hits *h, const struct prd_record_mmap *r)
{
	uint16_t misc = r->header.misc;
	char name[NAME_MAX_LEN];

	if (!r->filename)
		return;
	if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		h->kernel_mapped = true;
		return;
	}
	if (misc & PERF_RECORD_MISC_MMAP_DATA)
		return; /* -d's data mappings */
	if (r->header.type == PERF_RECORD_MMAP2 && !(r->prot & PROT_EXEC))
		return;
	if (r->filename_len >= sizeof(name))
		return;
	memcpy(name, r->filename, r->filename_len);
	name[r->filename_len] = 0;
	if (!strcmp(name, "[vdso]"))
		h->vdso_mapped = true;
	map_add(h, (int32_t)r->pid, r->start, r->len, name);
}

void dso_hits_note(struct dso_hits *h, const void *rec, size_t size)
{
	const unsigned char *r = rec;
	struct perf_event_header hd;
	union prd_record v;

	if (!h || size < sizeof(hd))
		return;
	memcpy(&hd, r, sizeof(hd));
	if (hd.size > size)
		return;
	if (hd.type == PERF_RECORD_SAMPLE) {
		sample(h, r, hd.size, hd.misc);
		return;
	}
	if (!prd_record_view(rec, size, &v))
		return;
	switch (hd.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		note_mmap(h, &v.mmap);
		return;
	case PERF_RECORD_FORK:
		if (v.fork.pid == v.fork.tid) /* a process, not a thread */
			proc_fork(h, (int32_t)v.fork.pid, (int32_t)v.fork.ppid);
		return;
	case PERF_RECORD_COMM:
		if (hd.misc & PERF_RECORD_MISC_COMM_EXEC) {
			struct proc *p = proc_find(h, (int32_t)v.comm.pid);

			if (p)
				p->n = 0; /* exec: a new image */
		}
		return;
	default:
		return;
	}
}

void dso_hits_note_pieces(struct dso_hits *h, const void *const ptr[2],
			  const size_t len[2], int pieces, size_t off,
			  size_t size)
{
	unsigned char rec[UINT16_MAX + 1];

	if (!h || size > sizeof(rec))
		return;
	if (off + size <= len[0]) {
		dso_hits_note(h, (const unsigned char *)ptr[0] + off, size);
		return;
	}
	if (pieces < 2)
		return;
	for (size_t i = 0; i < size; i++, off++)
		rec[i] = off < len[0] ?
				 ((const unsigned char *)ptr[0])[off] :
				 ((const unsigned char *)ptr[1])[off - len[0]];
	dso_hits_note(h, rec, size);
}

/* Names that are no file: perf reads no build-id for them. */
static bool no_file(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '/' || !strncmp(name, "//", 2) ||
	       !strncmp(name, "/memfd:", 7) ||
	       (n > 10 && !strcmp(name + n - 10, " (deleted)"));
}

int dso_hits_write(struct dso_hits *h, struct pd_writer *w)
{
	unsigned char *blob = NULL;
	size_t len = 0;
	struct buildid id;
	int n = 0, err = 0;

	if (!h)
		return 0;
	for (uint32_t i = 0; i < h->nr_pend; i++)
		hit(h, h->pend[i].pid, h->pend[i].ip);
	if (h->oom)
		pr_warn("perf.data: out of memory following the mappings: build-ids may be missing");
	if (h->kernel_mapped && h->kernel_hit && !buildid_kernel(&id)) {
		err = buildid_entry_add(&blob, &len, -1,
					PERF_RECORD_MISC_KERNEL, &id,
					"[kernel.kallsyms]");
		n += !err;
	}
	for (uint32_t i = 0; i < h->nr_dsos && !err; i++) {
		const char *name = h->dsos[i].name;
		int r;

		if (!strcmp(name, "[vdso]")) {
			/* perf writes the vDSO whether hit or not */
			r = buildid_vdso(&id);
		} else if (!h->dsos[i].hit || no_file(name)) {
			continue;
		} else {
			r = buildid_from_file(name, &id);
		}
		if (r)
			continue;
		err = buildid_entry_add(&blob, &len, -1, PERF_RECORD_MISC_USER,
					&id, name);
		n += !err;
	}
	if (!err && len)
		err = pd_writer_set_build_ids(w, blob, len);
	free(blob);
	if (err)
		pr_warn("perf.data: build-ids left out: %s", strerror(-err));
	return err ? err : n;
}
