// SPDX-License-Identifier: MIT
/*
 * Threads and maps from side-band records, after perf 6.1's machine.c and
 * thread.c:
 *
 *  - A thread is found by tid; a new one is named ":tid" and shares the
 *    maps of its process leader (pid != tid) or gets empty ones.  Thread 0
 *    is "swapper".
 *  - FORK replaces any thread with the child's tid; the child takes the
 *    parent's comm, and a new process gets a copy of the parent's maps.
 *  - COMM renames; EXIT only marks (perf keeps the thread findable).
 *  - MMAP/MMAP2 insert a map, cutting the parts of older maps it covers
 *    (maps__fixup_overlappings); kernel ones (cpumode KERNEL) only tell
 *    where the kernel text was.
 *  - Resolution: kernel cpumode -> the kernel (kallsyms), user -> the
 *    thread's maps, address in the map = ip - start + pgoff (anonymous
 *    memory, heap and stack: the ip itself); cpumode 0 (callchain entries
 *    before a context marker) tries the kernel, then the user maps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include "../common/log.h"
#include "../format/perf_reader.h"
#include "threads.h"

struct thread_alloc {
	struct thread t;
	char tidname[16];
};

static uint32_t tid_hash(int32_t tid)
{
	return (uint32_t)tid * 2654435761u;
}

static struct maps *maps_new(void)
{
	struct maps *ms = calloc(1, sizeof(*ms));

	if (ms)
		ms->refs = 1;
	return ms;
}

static struct maps *maps_get(struct maps *ms)
{
	if (ms)
		ms->refs++;
	return ms;
}

static void maps_put(struct maps *ms)
{
	if (ms && --ms->refs == 0) {
		free(ms->v);
		free(ms);
	}
}

static int maps_reserve(struct maps *ms, uint32_t more)
{
	uint32_t cap;
	struct map *v;

	if (ms->nr + more <= ms->cap)
		return 0;
	cap = ms->cap ? ms->cap : 16;
	while (cap < ms->nr + more)
		cap *= 2;
	v = realloc(ms->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ms->v = v;
	ms->cap = cap;
	return 0;
}

/* First index whose map ends after @addr. */
static uint32_t maps_lower(const struct maps *ms, uint64_t addr)
{
	uint32_t lo = 0, hi = ms->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ms->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Inserts @nm, trimming or splitting the maps it overlaps. */
static int maps_insert(struct maps *ms, const struct map *nm)
{
	uint32_t i, j;
	struct map keep[2];
	uint32_t nkeep = 0;

	if (nm->end <= nm->start)
		return 0;
	if (maps_reserve(ms, 3))
		return -ENOMEM;
	i = maps_lower(ms, nm->start);
	j = i;
	/* [i, j): the maps @nm overlaps. */
	while (j < ms->nr && ms->v[j].start < nm->end)
		j++;
	if (i < j) {
		const struct map *first = &ms->v[i], *last = &ms->v[j - 1];

		if (first->start < nm->start) {
			keep[nkeep] = *first;
			keep[nkeep].end = nm->start;
			nkeep++;
		}
		if (last->end > nm->end) {
			keep[nkeep] = *last;
			keep[nkeep].pgoff += nm->end - last->start;
			keep[nkeep].start = nm->end;
			nkeep++;
		}
	}
	/* Replace v[i, j) by keep-before, @nm, keep-after. */
	{
		uint32_t nnew = 1 + nkeep;
		uint32_t tail = ms->nr - j;

		memmove(&ms->v[i + nnew], &ms->v[j], tail * sizeof(*ms->v));
		if (nkeep && keep[0].end == nm->start) {
			ms->v[i++] = keep[0];
			ms->v[i++] = *nm;
			if (nkeep > 1)
				ms->v[i++] = keep[1];
		} else {
			ms->v[i++] = *nm;
			if (nkeep)
				ms->v[i++] = keep[0];
		}
		ms->nr = i + tail;
	}
	ms->last = 0;
	return 0;
}

static const struct map *maps_find(struct maps *ms, uint64_t addr)
{
	uint32_t i;

	if (!ms || !ms->nr)
		return NULL;
	if (ms->last < ms->nr) {
		const struct map *m = &ms->v[ms->last];

		if (addr >= m->start && addr < m->end)
			return m;
	}
	i = maps_lower(ms, addr);
	if (i < ms->nr && addr >= ms->v[i].start) {
		ms->last = i;
		return &ms->v[i];
	}
	return NULL;
}

static int maps_clone_into(struct maps *dst, const struct maps *src)
{
	for (uint32_t i = 0; i < src->nr; i++)
		if (maps_insert(dst, &src->v[i]))
			return -ENOMEM;
	return 0;
}

/* ---- threads --------------------------------------------------------- */

int machine_use_build_ids(struct machine *m, struct prd_file *f)
{
	size_t len = 0;
	const void *t = prd_feature(f, PRD_FEAT_BUILD_ID, &len);

	return t && len ? dsos_set_build_ids(&m->dsos, t, len) : 0;
}

int machine_init(struct machine *m)
{
	struct thread *idle;
	int err;

	memset(m, 0, sizeof(*m));
	m->mask = 1023;
	m->tab = calloc(m->mask + 1, sizeof(*m->tab));
	if (!m->tab)
		return -ENOMEM;
	err = dsos_init(&m->dsos, false);
	if (err) {
		free(m->tab);
		return err;
	}
	idle = machine_findnew_thread(m, 0, 0);
	if (!idle) {
		machine_exit(m);
		return -ENOMEM;
	}
	idle->comm = "swapper";
	idle->comm_len = 7;
	idle->comm_set = true;
	return 0;
}

void machine_exit(struct machine *m)
{
	struct thread *t = m->all, *n;

	for (; t; t = n) {
		n = t->all_next;
		maps_put(t->maps);
		free(t);
	}
	for (uint32_t i = 0; i < m->nr_strs; i++)
		free(m->strs[i]);
	free(m->strs);
	free(m->kmaps.v);
	free(m->tab);
	if (m->unwinder_free)
		m->unwinder_free(m);
	dsos_exit(&m->dsos);
	memset(m, 0, sizeof(*m));
}

bool file_recorded_here(struct prd_file *f)
{
	const char *h = prd_feature_string(f, PRD_FEAT_HOSTNAME);
	const char *r = prd_feature_string(f, PRD_FEAT_OSRELEASE);
	struct utsname u;

	if (uname(&u))
		return false;
	if ((h && strcmp(h, u.nodename)) || (r && strcmp(r, u.release)))
		return false;
	return true;
}

void machine_set_host(struct machine *m, bool host)
{
	if (m->host_decided)
		return;
	m->host_decided = true;
	m->dsos.host = host;
}

static struct thread *find_thread(struct machine *m, int32_t tid)
{
	struct thread *t;

	if (m->last && m->last->tid == tid)
		return m->last;
	for (t = m->tab[tid_hash(tid) & m->mask]; t; t = t->next)
		if (t->tid == tid) {
			m->last = t;
			return t;
		}
	return NULL;
}

static void remove_thread(struct machine *m, struct thread *t)
{
	struct thread **pp = &m->tab[tid_hash(t->tid) & m->mask];

	for (; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			t->next = NULL;
			t->removed = true;
			m->nr--;
			break;
		}
	if (m->last == t)
		m->last = NULL;
}

static int grow_threads(struct machine *m)
{
	uint32_t nmask = m->mask * 2 + 1;
	struct thread **tab = calloc((size_t)nmask + 1, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (uint32_t i = 0; i <= m->mask; i++) {
		struct thread *t = m->tab[i], *n;

		for (; t; t = n) {
			n = t->next;
			t->next = tab[tid_hash(t->tid) & nmask];
			tab[tid_hash(t->tid) & nmask] = t;
		}
	}
	free(m->tab);
	m->tab = tab;
	m->mask = nmask;
	return 0;
}

/* perf's machine__update_thread_pid(): a thread met before its pid. */
static void update_pid(struct machine *m, struct thread *t, int32_t pid)
{
	struct thread *leader;

	if (pid == t->pid || pid == -1 || t->pid != -1)
		return;
	t->pid = pid;
	if (t->pid == t->tid)
		return;
	leader = machine_findnew_thread(m, pid, pid);
	if (!leader || t->maps == leader->maps)
		return;
	maps_put(t->maps);
	t->maps = maps_get(leader->maps);
}

struct thread *machine_findnew_thread(struct machine *m, int32_t pid,
				      int32_t tid)
{
	struct thread_alloc *ta;
	struct thread *t = find_thread(m, tid);

	if (t) {
		update_pid(m, t, pid);
		return t;
	}
	if (m->nr >= m->mask && grow_threads(m))
		return NULL;
	ta = calloc(1, sizeof(*ta));
	if (!ta)
		return NULL;
	t = &ta->t;
	t->pid = pid;
	t->tid = tid;
	t->ppid = -1;
	snprintf(ta->tidname, sizeof(ta->tidname), ":%d", tid);
	t->comm = ta->tidname;
	t->comm_len = (uint32_t)strlen(ta->tidname);
	t->next = m->tab[tid_hash(tid) & m->mask];
	m->tab[tid_hash(tid) & m->mask] = t;
	t->all_next = m->all;
	m->all = t;
	m->nr++;
	if (pid == tid || pid == -1) {
		t->maps = maps_new();
	} else {
		struct thread *leader = machine_findnew_thread(m, pid, pid);

		if (leader)
			t->maps = maps_get(leader->maps);
	}
	if (!t->maps)
		t->maps = maps_new();
	m->last = t;
	return t;
}

static const char *keep_string(struct machine *m, const char *s, size_t len)
{
	char *p;

	if (m->nr_strs == m->cap_strs) {
		uint32_t cap = m->cap_strs ? m->cap_strs * 2 : 256;
		char **v = realloc(m->strs, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		m->strs = v;
		m->cap_strs = cap;
	}
	p = strndup(s, len);
	if (p)
		m->strs[m->nr_strs++] = p;
	return p;
}

static int do_comm(struct machine *m, const struct prd_record_comm *r)
{
	const char *name = r->comm_in_record.str, *comm;
	size_t len = r->comm_in_record.len;
	struct thread *t;

	if (!name)
		return 0;
	t = machine_findnew_thread(m, (int32_t)r->pid, (int32_t)r->tid);
	if (!t)
		return -ENOMEM;
	if (t->comm_set && !strncmp(t->comm, name, len) && !t->comm[len])
		return 0;
	comm = keep_string(m, name, len);
	if (!comm)
		return -ENOMEM;
	t->comm = comm;
	t->comm_len = (uint32_t)len;
	t->comm_set = true;
	return 0;
}

/* The kernel's own maps: the text's place (the others are not kept). */
static int kernel_mmap(struct machine *m, const struct prd_record_mmap *r)
{
	const struct prd_str_in_record *name = &r->filename_in_record;

	if (name->len >= 17 && !memcmp(name->str, "[kernel.kallsyms]", 17)) {
		dsos_set_kernel_text(&m->dsos, r->pgoff);
		if (maps_reserve(&m->kmaps, 1))
			return -ENOMEM;
		m->kmaps.v[0].start = r->start;
		m->kmaps.v[0].end = r->start + r->len < r->start ?
					    UINT64_MAX :
					    r->start + r->len;
		m->kmaps.v[0].pgoff = r->pgoff;
		m->kmaps.v[0].dso = NULL;
		m->kmaps.nr = 1;
	}
	return 0;
}

static int do_mmap(struct machine *m, const struct prd_record_mmap *r)
{
	uint16_t misc = r->header.misc;
	bool mmap2 = r->header.type == PERF_RECORD_MMAP2;
	const char *name = r->filename_in_record.str;
	size_t nlen = r->filename_in_record.len;
	struct thread *t;
	struct map nm;
	char anon[32];

	if (!name)
		return 0;
	if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ||
	    (int32_t)r->pid == -1)
		return kernel_mmap(m, r);
	if (!r->len || r->start + r->len < r->start)
		return 0;
	t = machine_findnew_thread(m, (int32_t)r->pid, (int32_t)r->tid);
	if (!t || !t->maps)
		return -ENOMEM;
	/* Anonymous executable memory: perf's JIT map file name. */
	if ((nlen == 6 && !memcmp(name, "//anon", 6)) ||
	    (nlen >= 9 && !memcmp(name, "/dev/zero", 9)) ||
	    (nlen >= 14 && !memcmp(name, "/anon_hugepage", 14))) {
		snprintf(anon, sizeof(anon), "/tmp/perf-%d.map",
			 (int32_t)r->pid);
		name = anon;
		nlen = strlen(anon);
	}
	nm.start = r->start;
	nm.end = r->start + r->len;
	nm.pgoff = r->pgoff;
	nm.dso = dsos_findnew(&m->dsos, name, nlen);
	if (!nm.dso)
		return -ENOMEM;
	if (name == anon)
		dso_set_perfmap(nm.dso, (int32_t)r->pid);
	if (mmap2 && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
	    r->build_id_size && !nm.dso->build_id_size)
		dso_set_build_id(nm.dso, r->build_id,
				 r->build_id_size > 20 ? 20 : r->build_id_size);
	nm.ino = 0;
	nm.flags = 0;
	/* perf: an MMAP's map is executable unless it is a data map */
	nm.prot = (misc & PERF_RECORD_MISC_MMAP_DATA) ? 0 : PROT_EXEC;
	if (mmap2) {
		nm.prot = r->prot;
		nm.flags = r->flags;
		if (!(misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			nm.ino = r->ino;
	}
	return maps_insert(t->maps, &nm);
}

static int do_fork(struct machine *m, const struct prd_record_fork *r)
{
	int32_t pid = (int32_t)r->pid, ppid = (int32_t)r->ppid;
	int32_t tid = (int32_t)r->tid, ptid = (int32_t)r->ptid;
	struct thread *t, *parent;

	t = find_thread(m, tid);
	parent = machine_findnew_thread(m, ppid, ptid);
	if (!parent)
		return -ENOMEM;
	if (parent->pid != ppid) {
		/* A stale thread with the parent's tid (a lost EXIT/FORK). */
		remove_thread(m, parent);
		parent = machine_findnew_thread(m, ppid, ptid);
		if (!parent)
			return -ENOMEM;
	}
	if (t && t != parent)
		remove_thread(m, t);
	else if (t == parent)
		return 0; /* a thread cannot be its own parent */
	t = machine_findnew_thread(m, pid, tid);
	if (!t)
		return -ENOMEM;
	t->ppid = parent->tid;
	if (parent->comm_set) {
		t->comm = parent->comm;
		t->comm_len = parent->comm_len;
		t->comm_set = true;
	}
	if (t->pid == parent->pid || t->maps == parent->maps || !parent->maps)
		return 0;
	/* A new process: a copy of the parent's address space, but for
	 * the FORKs perf record synthesizes from /proc (FORK_EXEC: the
	 * child's own maps follow), which perf does not copy either. */
	if (r->header.misc & PERF_RECORD_MISC_FORK_EXEC)
		return 0;
	return maps_clone_into(t->maps, parent->maps);
}

static int do_exit(struct machine *m, const struct prd_record_fork *r)
{
	struct thread *t = find_thread(m, (int32_t)r->tid);

	if (t)
		t->exited = true;
	return 0;
}

int machine_process(struct machine *m, const union prd_record *rec)
{
	switch (rec->header.type) {
	case PERF_RECORD_COMM:
		return do_comm(m, &rec->comm);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return do_mmap(m, &rec->mmap);
	case PERF_RECORD_FORK:
		return do_fork(m, &rec->fork);
	case PERF_RECORD_EXIT:
		return do_exit(m, &rec->fork);
	default:
		return 0;
	}
}

/* ---- resolution ------------------------------------------------------ */

/* Whether @ip is the kernel's: from its text's start on (perf reads init
 * text, modules and the rest through kallsyms and kcore as well). */
static bool kernel_holds(struct machine *m, uint64_t ip)
{
	if (m->kmaps.nr)
		return ip >= m->kmaps.v[0].start;
	/* No kernel MMAP: the upper half is the kernel's on every arch
	 * perf records here. */
	return ip >= 0xffff800000000000ull;
}

static void resolve_kernel(struct machine *m, uint64_t ip, bool want_sym,
			   struct addr_loc *al)
{
	static const struct map kernel_map = { .end = UINT64_MAX };
	struct dso *d = dsos_kernel_for(&m->dsos, ip);

	if (!d)
		return;
	al->map = &kernel_map;
	al->dso = d;
	al->kernel = true;
	al->addr = ip;
	if (want_sym) {
		uint64_t a = dso_addr(d, ip);

		al->sym = dso_find_symbol(d, a);
		if (al->sym)
			al->sym_off = a - al->sym->start;
	}
}

void machine_resolve(struct machine *m, struct thread *t, uint8_t cpumode,
		     uint64_t ip, bool want_sym, struct addr_loc *al)
{
	const struct map *map;

	memset(al, 0, sizeof(*al));
	al->addr = ip;
	if (cpumode == PERF_RECORD_MISC_KERNEL || cpumode == 0) {
		if (kernel_holds(m, ip)) {
			resolve_kernel(m, ip, want_sym, al);
			return;
		}
		if (cpumode)
			return;
	}
	if (cpumode != PERF_RECORD_MISC_USER && cpumode != 0)
		return; /* hypervisor, guests: perf leaves them unresolved */
	map = t ? maps_find(t->maps, ip) : NULL;
	if (!map)
		return;
	al->map = map;
	al->dso = map->dso;
	if (map->dso->identity)
		al->addr = ip; /* as perf's anon and no-dso maps */
	else
		al->addr = ip - map->start + map->pgoff;
	if (want_sym && map->dso->kind != DSO_NONE) {
		uint64_t a = dso_addr(map->dso, al->addr);

		al->sym = dso_find_symbol(map->dso, a);
		if (al->sym)
			al->sym_off = a - al->sym->start;
	}
}

const char *machine_kernel_symbol(void *machine, uint64_t *addr,
				  const char **mod)
{
	struct machine *m = machine;
	struct dso *d;
	const struct symbol *sym;
	uint64_t a;

	if (!kernel_holds(m, *addr))
		return NULL;
	d = dsos_kernel_for(&m->dsos, *addr);
	if (!d)
		return NULL;
	a = dso_addr(d, *addr);
	sym = dso_find_symbol(d, a);
	if (!sym)
		return NULL;
	*addr = *addr - (a - sym->start);
	*mod = d->kind == DSO_KMODULE ? d->short_name : NULL;
	return sym->name;
}

/* Whether perf would keep the callchain: no context marker it does not know
 * (guests, garbage) among the first @max_entries entries. */
bool callchain_valid(const uint64_t *ips, uint64_t nr, unsigned max_entries)
{
	unsigned entries = 0;

	for (uint64_t i = 0; i < nr && entries < max_entries; i++) {
		uint64_t ip = ips[i];

		if (ip < PERF_CONTEXT_MAX) {
			entries++;
			continue;
		}
		if (ip != PERF_CONTEXT_HV && ip != PERF_CONTEXT_KERNEL &&
		    ip != PERF_CONTEXT_USER)
			return false;
	}
	return true;
}
