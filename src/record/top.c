// SPDX-License-Identifier: MIT
/*
 * perfring_top(): perf top --stdio, a live hot-symbol table read straight
 * from the kernel perf rings, no file in between.
 *
 * The recorder's pieces: the events opened and mapped per CPU (or per
 * thread with -p/-t) as perf record opens them (sources/perf_event.c),
 * one session loop over their descriptors and the control pipe
 * (session.c), and the COMM/MMAP2/FORK records of what already runs
 * synthesized from /proc (synth.c), here fed to the report side's thread
 * and map tables (report/threads.c) instead of a file.  Samples are
 * resolved as perf report resolves them (kallsyms for the kernel, the ELF
 * symbol tables of the processes' mappings) and summed per sort key.
 *
 * Every refresh interval the rings are drained, the table is printed and
 * then aged as perf top ages it (hists__decay_entries): every entry's
 * period and sample count are multiplied by 7/8 and the entries that
 * reach zero are dropped, so the table follows what is hot now while a
 * steady load keeps a steady share.  -z (zero) clears the table instead:
 * each refresh then shows its own interval only.  Between refreshes the
 * loop sleeps until the next one unless a ring fills to its watermark
 * (a quarter of it), so the cost is the samples' resolution and one
 * print per interval.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../format/perf_record.h"
#include "../machine/threads.h"
#include "../sources/perf_event.h"
#include "../sources/session.h"
#include "synth.h"
#include "top.h"

#define TOP_MAX_CPUS 4096
#define TOP_MAX_TIDS 65536
#define TOP_DEFAULT_MMAP_BYTES (512u << 10)
#define TOP_DEFAULT_FREQ 4000 /* perf top's default */
#define TOP_DEFAULT_ENTRIES 20
#define TOP_MAX_STACK 127
#define TOP_MAX_CHAINS 16 /* distinct call chains kept per entry */
#define TOP_PRINT_CHAINS 3 /* printed under an entry */
/* An object's symbol table is read once it has been hit this often. */
#define TOP_LOAD_AFTER 16
#define TOP_RULE \
	"-------------------------------------------------------------------------------"

enum top_key { TK_COMM, TK_PID, TK_DSO, TK_SYM, TK_MAX };

/* One resolved call chain entry. */
struct tcent {
	const struct symbol *sym;
	struct dso *dso; /* NULL: no map */
	uint64_t ip; /* raw address */
};

struct tchain {
	uint64_t period;
	uint32_t hash, n;
	struct tcent *v; /* callee first */
};

struct tentry {
	struct tentry *next; /* hash chain */
	uint32_t hash;
	const char *comm;
	uint32_t comm_len;
	int32_t pid;
	struct dso *dso;
	const struct symbol *sym;
	uint64_t addr; /* map-relative when no symbol holds it */
	char level; /* 'k' or '.' */
	bool pending; /* the object's symbols are not loaded (yet) */
	uint64_t period, nr_samples;
	struct tchain *chains;
	uint32_t nr_chains;
};

/* One event's table. */
struct thists {
	struct tentry **tab;
	uint32_t mask;
	struct tentry **v; /* every entry */
	uint32_t nr, cap;
	uint64_t total;
	/* This interval's figures for the header. */
	uint64_t samples, kernel_samples, lost, lost_total;
	uint64_t samples_total; /* since the start */
};

/* What top's samples hold (and, with -g, CALLCHAIN): the fields
 * add_sample() reads, at the places prd_sample_positions() gives. */
#define TOP_SAMPLE_TYPE                                              \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct top {
	struct perfring_top_opts o;
	FILE *out;
	struct perfring_top_stats st;
	struct pe_event events[PE_MAX_EVENTS];
	int nr_events;
	struct pe_evlist el;
	struct machine m;
	struct thists *h; /* one per event */
	enum top_key keys[TK_MAX];
	int nkeys;
	struct rec_session rs;
	struct prd_sample_pos pos; /* of TOP_SAMPLE_TYPE's fields */
	const int *cpus;
	const pid_t *tids;
	int nr_cpus, nr_tids;
	/* what cpus and tids point at: the handle's own, not static, so
	 * that two tops in one program do not share them */
	int cpus_buf[TOP_MAX_CPUS];
	pid_t tids_buf[TOP_MAX_TIDS];
	bool system_wide;
	uint64_t data_bytes, delay_ms, next_ms;
	/*
	 * Per ring: its newest sample's time (CLOCK_MONOTONIC ns), that time
	 * at the last refresh, and per event its samples since then.  A
	 * table's rate is each ring's samples over the time they were taken
	 * in, summed: the rings are read one after the other, and a drain
	 * that loads symbol tables lags behind and reads a backlog, so one
	 * refresh holds different stretches of different rings.
	 */
	uint64_t *newest_ns, *mark_ns, *ring_samples;
	int nr_rings; /* of those: the kernel rings, or 1 (a fed table) */
	int cur; /* the ring being drained */
	unsigned int entries;
	struct tcent cursor[TOP_MAX_STACK];
	int err;
	/* on_table's view of a table, rebuilt at each refresh */
	struct perfring_top_entry *view_entries;
	struct perfring_top_chain *view_chains;
	struct perfring_frame *view_frames;
	size_t view_entries_cap, view_chains_cap, view_frames_cap;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000;
}

/* ---- sort keys ----------------------------------------------------------- */

static int parse_sort(struct top *t, const char *s)
{
	static const char *const names[TK_MAX] = { "comm", "pid", "dso",
						   "sym" };

	t->nkeys = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		int k;

		for (k = 0; k < TK_MAX; k++)
			if (strlen(names[k]) == n && !memcmp(names[k], s, n))
				break;
		if (k == TK_MAX && n == 6 && !memcmp(s, "symbol", 6))
			k = TK_SYM; /* perf's long name */
		if (k == TK_MAX) {
			pr_err("--sort: unknown key '%.*s' (comm, pid, dso, sym)",
			       (int)n, s);
			return -EINVAL;
		}
		for (int i = 0; i < t->nkeys; i++)
			if (t->keys[i] == (enum top_key)k)
				k = -1;
		if (k >= 0)
			t->keys[t->nkeys++] = (enum top_key)k;
		s += n;
		if (*s == ',')
			s++;
	}
	if (!t->nkeys) {
		pr_err("--sort: no keys");
		return -EINVAL;
	}
	return 0;
}

static bool has_key(const struct top *t, enum top_key k)
{
	for (int i = 0; i < t->nkeys; i++)
		if (t->keys[i] == k)
			return true;
	return false;
}

static uint32_t mix(uint32_t h, uint64_t v)
{
	h ^= (uint32_t)v ^ (uint32_t)(v >> 32);
	return h * 16777619u;
}

static uint32_t entry_hash(const struct top *t, const struct tentry *e)
{
	uint32_t h = 2166136261u;

	if (has_key(t, TK_COMM))
		for (uint32_t i = 0; i < e->comm_len; i++)
			h = (h ^ (unsigned char)e->comm[i]) * 16777619u;
	if (has_key(t, TK_PID))
		h = mix(h, (uint32_t)e->pid);
	if (has_key(t, TK_DSO))
		h = mix(h, (uintptr_t)e->dso);
	if (has_key(t, TK_SYM))
		h = mix(h, e->sym ? (uintptr_t)e->sym : e->addr);
	return h ^ e->pending;
}

static bool entry_eq(const struct top *t, const struct tentry *a,
		     const struct tentry *b)
{
	if (has_key(t, TK_COMM) && (a->comm_len != b->comm_len ||
				    memcmp(a->comm, b->comm, a->comm_len)))
		return false;
	if (has_key(t, TK_PID) && a->pid != b->pid)
		return false;
	if (has_key(t, TK_DSO) && a->dso != b->dso)
		return false;
	if (has_key(t, TK_SYM) &&
	    (a->sym != b->sym || (!a->sym && a->addr != b->addr)))
		return false;
	return a->pending == b->pending;
}

/* ---- the tables ----------------------------------------------------------- */

static int hists_rehash(struct thists *h, uint32_t mask)
{
	struct tentry **tab = calloc((size_t)mask + 1, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nr; i++) {
		struct tentry *e = h->v[i];

		e->next = tab[e->hash & mask];
		tab[e->hash & mask] = e;
	}
	free(h->tab);
	h->tab = tab;
	h->mask = mask;
	return 0;
}

static struct tentry *findnew_entry(struct top *t, struct thists *h,
				    const struct tentry *key)
{
	uint32_t hash = entry_hash(t, key);
	struct tentry *e;

	if (!h->tab || h->nr >= h->mask) {
		if (hists_rehash(h, h->mask ? h->mask * 2 + 1 : 1023))
			return NULL;
	}
	for (e = h->tab[hash & h->mask]; e; e = e->next)
		if (e->hash == hash && entry_eq(t, e, key))
			return e;
	if (h->nr == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 256;
		struct tentry **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		h->v = v;
		h->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	*e = *key;
	e->period = e->nr_samples = 0;
	e->chains = NULL;
	e->nr_chains = 0;
	e->hash = hash;
	e->next = h->tab[hash & h->mask];
	h->tab[hash & h->mask] = e;
	h->v[h->nr++] = e;
	return e;
}

static void entry_free(struct tentry *e)
{
	for (uint32_t i = 0; i < e->nr_chains; i++)
		free(e->chains[i].v);
	free(e->chains);
	free(e);
}

static bool cent_eq(const struct tcent *a, const struct tcent *b)
{
	if (a->sym || b->sym)
		return a->sym == b->sym;
	return a->ip == b->ip && a->dso == b->dso;
}

static uint32_t chain_hash(const struct tcent *v, uint32_t n)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < n; i++)
		h = mix(h, v[i].sym ? (uintptr_t)v[i].sym : v[i].ip);
	return h;
}

/* Adds @period to the entry's chain @v[0, n); a chain past the last
 * slot goes to the coldest one's place once it is colder. */
static int add_chain(struct tentry *e, const struct tcent *v, uint32_t n,
		     uint64_t period)
{
	uint32_t hash = chain_hash(v, n), coldest = 0;
	struct tchain *c;

	for (uint32_t i = 0; i < e->nr_chains; i++) {
		bool same = e->chains[i].hash == hash && e->chains[i].n == n;

		for (uint32_t j = 0; same && j < n; j++)
			same = cent_eq(&e->chains[i].v[j], &v[j]);
		if (same) {
			e->chains[i].period += period;
			return 0;
		}
		if (e->chains[i].period < e->chains[coldest].period)
			coldest = i;
	}
	if (e->nr_chains < TOP_MAX_CHAINS) {
		if (!e->chains) {
			e->chains = calloc(TOP_MAX_CHAINS, sizeof(*e->chains));
			if (!e->chains)
				return -ENOMEM;
		}
		c = &e->chains[e->nr_chains++];
	} else {
		c = &e->chains[coldest];
		if (c->period > period) {
			c->period -= period; /* it cools down instead */
			return 0;
		}
		free(c->v);
		c->v = NULL;
	}
	c->v = malloc((n ? n : 1) * sizeof(*v));
	if (!c->v) {
		c->n = 0;
		c->period = 0;
		return -ENOMEM;
	}
	memcpy(c->v, v, n * sizeof(*v));
	c->n = n;
	c->hash = hash;
	c->period = period;
	return 0;
}

/* perf top after each display: 7/8 of everything (hists__decay_entries)
 * or nothing (-z); entries and chains that reach zero are dropped. */
static int hists_age(struct top *t, struct thists *h)
{
	uint32_t kept = 0;

	h->total = 0;
	for (uint32_t i = 0; i < h->nr; i++) {
		struct tentry *e = h->v[i];
		uint32_t nc = 0;

		e->period = t->o.zero ? 0 : e->period * 7 / 8;
		e->nr_samples = t->o.zero ? 0 : e->nr_samples * 7 / 8;
		if (!e->period) {
			entry_free(e);
			continue;
		}
		for (uint32_t j = 0; j < e->nr_chains; j++) {
			struct tchain c = e->chains[j];

			c.period = c.period * 7 / 8;
			if (!c.period) {
				free(c.v);
				continue;
			}
			e->chains[nc++] = c;
		}
		e->nr_chains = nc;
		h->total += e->period;
		h->v[kept++] = e;
	}
	h->nr = kept;
	h->samples = h->kernel_samples = h->lost = 0;
	return hists_rehash(h, h->mask ? h->mask : 1023);
}

/* ---- samples -------------------------------------------------------------- */

/*
 * Whether @d's symbols are worth having: loaded already, not a file of
 * its own (the kernel, its modules and the vDSO are read at most once
 * anyway), or hit TOP_LOAD_AFTER times.  System-wide, a busy machine
 * starts programs all the time, most of them hit once or twice: reading
 * their ELF symbol tables would cost more than everything else top does,
 * for rows that never reach the table.  (dso->priv counts the hits.)
 */
static bool symbols_wanted(struct dso *d)
{
	uintptr_t hits;

	if (d->loaded || d->kind != DSO_FILE)
		return true;
	hits = (uintptr_t)d->priv + 1;
	d->priv = (void *)hits;
	return hits >= TOP_LOAD_AFTER;
}

/* machine_resolve(), with the symbol only where symbols_wanted();
 * *pending says that a symbol was not looked up. */
static void resolve(struct top *t, struct thread *th, uint8_t cpumode,
		    uint64_t ip, struct addr_loc *al, bool *pending)
{
	uint64_t a;

	*pending = false;
	machine_resolve(&t->m, th, cpumode, ip, false, al);
	if (!al->map || !al->dso || al->dso->kind == DSO_NONE)
		return;
	if (!symbols_wanted(al->dso)) {
		*pending = true;
		return;
	}
	a = dso_addr(al->dso, al->addr);
	al->sym = dso_find_symbol(al->dso, a);
	if (al->sym)
		al->sym_off = a - al->sym->start;
}

/* The callchain of a sample, resolved, callee first; returns its length. */
static uint32_t resolve_chain(struct top *t, struct thread *th,
			      const uint64_t *ips, uint64_t nr)
{
	uint8_t cpumode = PERF_RECORD_MISC_USER;
	uint32_t n = 0;

	if (!callchain_valid(ips, nr, TOP_MAX_STACK))
		return 0;
	for (uint64_t i = 0; i < nr && n < TOP_MAX_STACK; i++) {
		struct addr_loc al;
		bool pending;

		if (ips[i] >= PERF_CONTEXT_MAX) {
			cpumode = callchain_context_cpumode(ips[i]);
			continue;
		}
		resolve(t, th, cpumode, ips[i], &al, &pending);
		t->cursor[n].sym = al.sym;
		t->cursor[n].dso = al.map ? al.dso : NULL;
		t->cursor[n].ip = ips[i];
		n++;
	}
	return n;
}

static struct thists *hists_for(struct top *t, uint64_t id)
{
	if (t->nr_events == 1)
		return &t->h[0];
	for (int i = 0; i < t->nr_events; i++)
		for (uint32_t j = 0; j < t->events[i].nr_ids; j++)
			if (t->events[i].ids[j] == id)
				return &t->h[i];
	return NULL;
}

/*
 * A sample of our own attrs: IDENTIFIER, IP, TID, TIME, CPU, PERIOD and
 * with -g CALLCHAIN, in that order.  The kernel wrote it, but every length
 * is still checked against the record's size.
 */
static int add_sample(struct top *t, const unsigned char *rec, size_t size,
		      uint16_t misc)
{
	uint64_t id, ip, time, period, nr = 0;
	uint32_t pid_tid[2];
	uint8_t cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct thists *h;
	struct thread *th;
	struct addr_loc al;
	struct tentry key, *e;
	bool pending;

	if (size < t->pos.fixed_end)
		return 0;
	memcpy(&id, rec + t->pos.id, 8);
	memcpy(&ip, rec + t->pos.ip, 8);
	memcpy(pid_tid, rec + t->pos.tid, 8);
	memcpy(&time, rec + t->pos.time, 8);
	memcpy(&period, rec + t->pos.period, 8);
	h = hists_for(t, id);
	if (!h)
		return 0;
	if (time > t->newest_ns[t->cur])
		t->newest_ns[t->cur] = time;
	t->ring_samples[(size_t)(h - t->h) * (size_t)t->nr_rings +
			(size_t)t->cur]++;
	t->st.samples++;
	h->samples++;
	h->samples_total++;
	if (cpumode == PERF_RECORD_MISC_KERNEL)
		h->kernel_samples++;
	if ((cpumode == PERF_RECORD_MISC_KERNEL && t->o.hide_kernel) ||
	    (cpumode == PERF_RECORD_MISC_USER && t->o.hide_user))
		return 0;
	th = machine_findnew_thread(&t->m, (int32_t)pid_tid[0],
				    (int32_t)pid_tid[1]);
	if (!th)
		return -ENOMEM;
	resolve(t, th, cpumode, ip, &al, &pending);
	memset(&key, 0, sizeof(key));
	key.comm = th->comm;
	key.comm_len = th->comm_len;
	key.pid = th->pid;
	key.dso = al.map ? al.dso : NULL;
	key.sym = al.sym;
	key.addr = pending ? 0 : al.map ? al.addr : ip; /* pending: one row */
	key.pending = pending;
	key.level = cpumode == PERF_RECORD_MISC_KERNEL ? 'k' : '.';
	e = findnew_entry(t, h, &key);
	if (!e)
		return -ENOMEM;
	e->period += period;
	e->nr_samples++;
	h->total += period;
	if (t->o.callchain && size >= t->pos.callchain + 8u) {
		memcpy(&nr, rec + t->pos.callchain, 8);
		if (nr <= (size - t->pos.callchain - 8) / 8) {
			uint64_t ips[TOP_MAX_STACK + 8];
			uint32_t n;

			if (nr > TOP_MAX_STACK + 8)
				nr = TOP_MAX_STACK + 8;
			memcpy(ips, rec + t->pos.callchain + 8, nr * 8);
			n = resolve_chain(t, th, ips, nr);
			if (n && add_chain(e, t->cursor, n, period))
				return -ENOMEM;
		}
	}
	return 0;
}

static int top_record(const struct perf_event_header *rec, size_t size,
		      void *ctx)
{
	struct top *t = ctx;
	union prd_record v;
	uint64_t lost;
	int err = 0;

	if (rec->type == PERF_RECORD_SAMPLE)
		return add_sample(t, (const unsigned char *)rec, size,
				  rec->misc) == -ENOMEM ?
			       -ENOMEM :
			       0;
	if (size > UINT16_MAX || size != rec->size ||
	    !prd_record_view(rec, size, &v))
		return 0;
	switch (rec->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		lost = rec->type == PERF_RECORD_LOST ? v.lost.lost :
						       v.lost_samples.lost;
		t->st.lost += lost;
		t->h[0].lost += lost;
		t->h[0].lost_total += lost;
		break;
	default:
		err = machine_process(&t->m, &v);
		break;
	}
	return err == -ENOMEM ? err : 0;
}

static int synth_sink(void *ctx, const void *rec, size_t size)
{
	struct top *t = ctx;
	union prd_record v;

	if (!prd_record_view(rec, size, &v))
		return 0;
	return machine_process(&t->m, &v) == -ENOMEM ? -ENOMEM : 0;
}

static int drain_all(struct top *t)
{
	for (int i = 0; i < t->el.nr_bufs; i++) {
		int n;

		t->cur = i;
		n = perfring_ring_consume(t->el.bufs[i].ring, top_record, t);

		if (n < 0 && n != -EBADMSG)
			return n;
	}
	return 0;
}

/* ---- output --------------------------------------------------------------- */

static int entry_cmp(const void *pa, const void *pb)
{
	const struct tentry *a = *(const struct tentry *const *)pa;
	const struct tentry *b = *(const struct tentry *const *)pb;

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The @rows hottest entries to the front of h->v, in order, the others
 * left behind them unsorted: a table shows a few of thousands, and
 * sorting them all every refresh would cost more than the samples. */
static uint32_t select_top(struct thists *h, uint32_t rows)
{
	uint32_t k = 0;

	if (rows > h->nr)
		rows = h->nr;
	for (uint32_t i = 0; rows && i < h->nr; i++) {
		struct tentry *e = h->v[i];
		uint32_t j;

		if (k == rows && entry_cmp(&e, &h->v[k - 1]) >= 0)
			continue;
		if (k < rows) {
			h->v[i] = h->v[k]; /* k == i: nothing was left out */
			j = k++;
		} else {
			h->v[i] = h->v[k - 1]; /* the coldest kept goes out */
			j = k - 1;
		}
		while (j > 0 && entry_cmp(&e, &h->v[j - 1]) < 0) {
			h->v[j] = h->v[j - 1];
			j--;
		}
		h->v[j] = e;
	}
	return rows;
}

static const char *dso_text(const struct dso *d)
{
	if (!d)
		return "[unknown]";
	if (d->kind == DSO_KERNEL)
		return "[kernel]"; /* as perf top names it */
	return d->short_name;
}

static int key_text(const struct tentry *e, enum top_key k, char *buf,
		    size_t len)
{
	switch (k) {
	case TK_COMM:
		return snprintf(buf, len, "%.*s", (int)e->comm_len, e->comm);
	case TK_PID:
		return snprintf(buf, len, "%7d:%.*s", (int)e->pid,
				(int)e->comm_len, e->comm);
	case TK_DSO:
		return snprintf(buf, len, "%s", dso_text(e->dso));
	case TK_SYM:
		if (e->pending)
			return snprintf(buf, len,
					"[%c] [symbols not loaded yet]",
					e->level);
		if (e->sym)
			return snprintf(buf, len, "[%c] %s", e->level,
					e->sym->name);
		return snprintf(buf, len, "[%c] 0x%016" PRIx64, e->level,
				e->addr);
	default:
		return 0;
	}
}

static void cent_print(FILE *out, const struct tcent *c)
{
	if (c->sym)
		fputs(c->sym->name, out);
	else
		fprintf(out, "0x%" PRIx64, c->ip);
}

/* The entry's hottest chains, callee first, as perf's graph prints a
 * fan-out: "---" for a chain carrying the whole entry, else "--N%--". */
static void print_chains(struct top *t, const struct tentry *e, int indent)
{
	const struct tchain *order[TOP_PRINT_CHAINS];
	uint32_t n = 0;

	(void)t;
	for (uint32_t i = 0; i < e->nr_chains; i++) {
		const struct tchain *c = &e->chains[i];
		uint32_t j = n < TOP_PRINT_CHAINS ? n++ : TOP_PRINT_CHAINS;

		if (j == TOP_PRINT_CHAINS) {
			if (c->period <= order[TOP_PRINT_CHAINS - 1]->period)
				continue;
			j = TOP_PRINT_CHAINS - 1;
		}
		while (j > 0 && order[j - 1]->period < c->period) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = c;
	}
	if (!n)
		return;
	fprintf(t->out, "%*s|\n", indent, "");
	for (uint32_t i = 0; i < n; i++) {
		const struct tchain *c = order[i];
		bool last = i == n - 1,
		     whole = n == 1 && c->period == e->period;
		char head[32];
		int w;

		if (whole)
			w = snprintf(head, sizeof(head), "---");
		else
			w = snprintf(head, sizeof(head), "%s--%.2f%%--",
				     last ? " " : "|",
				     100.0 * (double)c->period /
					     (double)e->period);
		fprintf(t->out, "%*s%s", indent, "", head);
		for (uint32_t j = 0; j < c->n; j++) {
			if (j)
				fprintf(t->out, "%*s%s%*s", indent, "",
					last ? " " : "|", w - 1, "");
			cent_print(t->out, &c->v[j]);
			fputc('\n', t->out);
		}
		if (!last)
			fprintf(t->out, "%*s|\n", indent, "");
	}
	fputc('\n', t->out);
}

/* Samples a second of event @ev since the last refresh. */
static double sample_rate(const struct top *t, int ev)
{
	const uint64_t *n = t->ring_samples + (size_t)ev * (size_t)t->nr_rings;
	double rate = 0;

	for (int i = 0; i < t->nr_rings; i++)
		if (n[i] && t->newest_ns[i] > t->mark_ns[i])
			rate += (double)n[i] * 1e9 /
				(double)(t->newest_ns[i] - t->mark_ns[i]);
	return rate;
}

static void print_header(struct top *t, int ev)
{
	const struct thists *h = &t->h[ev];
	const struct perf_event_attr *a = &t->events[ev].attr;
	char rate[32], target[96];

	if (a->freq)
		snprintf(rate, sizeof(rate), "%lluHz ",
			 (unsigned long long)a->sample_freq);
	else
		snprintf(rate, sizeof(rate), "c=%llu ",
			 (unsigned long long)a->sample_period);
	if (t->o.pid_list)
		snprintf(target, sizeof(target), "target_pid: %s",
			 t->o.pid_list);
	else if (t->o.tid_list)
		snprintf(target, sizeof(target), "target_tid: %s",
			 t->o.tid_list);
	else if (t->o.cpu_list)
		snprintf(target, sizeof(target), "CPU%s: %s",
			 t->nr_cpus > 1 ? "s" : "", t->o.cpu_list);
	else
		snprintf(target, sizeof(target), "all, %d CPU%s", t->nr_cpus,
			 t->nr_cpus > 1 ? "s" : "");
	fprintf(t->out,
		"   PerfTop: %7.0f irqs/sec  kernel:%4.1f%%  lost: %" PRIu64
		"/%" PRIu64 " [%s%s],  (%s)\n%s\n\n",
		sample_rate(t, ev),
		h->samples ?
			100.0 * (double)h->kernel_samples / (double)h->samples :
			0.0,
		h->lost, h->lost_total, rate, t->events[ev].name, target,
		TOP_RULE);
}

static void print_table(struct top *t, int ev)
{
	struct thists *h = &t->h[ev];
	int width[TK_MAX] = { 0 };
	uint32_t rows;
	char buf[512];

	print_header(t, ev);
	rows = select_top(h, t->entries);
	for (uint32_t i = 0; i < rows; i++)
		for (int k = 0; k < t->nkeys; k++) {
			int w = key_text(h->v[i], t->keys[k], buf, sizeof(buf));

			if (w > width[k])
				width[k] = w;
		}
	for (uint32_t i = 0; i < rows; i++) {
		const struct tentry *e = h->v[i];

		fprintf(t->out, "%9.2f%%",
			h->total ?
				100.0 * (double)e->period / (double)h->total :
				0.0);
		if (t->o.show_nr_samples)
			fprintf(t->out, "  %10" PRIu64, e->nr_samples);
		for (int k = 0; k < t->nkeys; k++) {
			key_text(e, t->keys[k], buf, sizeof(buf));
			if (k == t->nkeys - 1)
				fprintf(t->out, "  %s", buf);
			else
				fprintf(t->out, "  %-*s", width[k], buf);
		}
		fputc('\n', t->out);
		if (t->o.callchain)
			print_chains(t, e, 12);
	}
}

/* Grows *@v (of *@cap elements of @size) to hold @n. */
static int view_reserve(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n <= *cap)
		return 0;
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

static void frame_of(const struct tcent *c, struct perfring_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->ip = f->addr = c->ip;
	f->sym = c->sym ? c->sym->name : NULL;
	f->dso = c->dso ? dso_text(c->dso) : NULL;
	f->kernel = c->dso && c->dso->kind == DSO_KERNEL;
}

static int cmp_chain_period(const void *pa, const void *pb)
{
	const struct perfring_top_chain *a = pa, *b = pb;

	return a->period != b->period ? (a->period > b->period ? -1 : 1) : 0;
}

/* Event @ev's whole table, hottest first, to opts->on_table. */
static int hand_over(struct top *t, int ev)
{
	struct thists *h = &t->h[ev];
	const struct perf_event_attr *a = &t->events[ev].attr;
	size_t nr_chains = 0, nr_frames = 0, c = 0, f = 0;
	struct perfring_top_table tab = { .sz = sizeof(tab) };

	if (h->nr)
		qsort(h->v, h->nr, sizeof(*h->v), entry_cmp);
	for (uint32_t i = 0; i < h->nr; i++) {
		nr_chains += h->v[i]->nr_chains;
		for (uint32_t j = 0; j < h->v[i]->nr_chains; j++)
			nr_frames += h->v[i]->chains[j].n;
	}
	if (view_reserve((void **)&t->view_entries, &t->view_entries_cap, h->nr,
			 sizeof(*t->view_entries)) ||
	    view_reserve((void **)&t->view_chains, &t->view_chains_cap,
			 nr_chains, sizeof(*t->view_chains)) ||
	    view_reserve((void **)&t->view_frames, &t->view_frames_cap,
			 nr_frames, sizeof(*t->view_frames)))
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nr; i++) {
		const struct tentry *e = h->v[i];
		struct perfring_top_entry *v = &t->view_entries[i];

		*v = (struct perfring_top_entry){
			.comm = e->comm ? e->comm : "",
			.pid = e->pid,
			.dso = dso_text(e->dso),
			.sym = e->pending || !e->sym ? NULL : e->sym->name,
			.addr = e->addr,
			.kernel = e->level == 'k',
			.pending = e->pending,
			.period = e->period,
			.nr_samples = e->nr_samples,
			.chains = t->view_chains + c,
			.nr_chains = e->nr_chains,
		};
		for (uint32_t j = 0; j < e->nr_chains; j++, c++) {
			const struct tchain *ch = &e->chains[j];

			t->view_chains[c] = (struct perfring_top_chain){
				.period = ch->period,
				.frames = t->view_frames + f,
				.nr_frames = ch->n,
			};
			for (uint32_t k = 0; k < ch->n; k++)
				frame_of(&ch->v[k], &t->view_frames[f++]);
		}
		if (e->nr_chains > 1)
			qsort(t->view_chains + c - e->nr_chains, e->nr_chains,
			      sizeof(*t->view_chains), cmp_chain_period);
	}
	tab.event = (uint32_t)ev;
	tab.nr_events = (uint32_t)t->nr_events;
	tab.event_name = t->events[ev].name;
	tab.freq = a->freq ? a->sample_freq : 0;
	tab.period = a->freq ? 0 : a->sample_period;
	tab.sort = t->o.sort ? t->o.sort : "dso,sym";
	tab.samples_total = h->samples_total;
	tab.samples = h->samples;
	tab.kernel_samples = h->kernel_samples;
	tab.lost = h->lost;
	tab.lost_total = h->lost_total;
	tab.rate = sample_rate(t, ev);
	tab.total_period = h->total;
	tab.entries = t->view_entries;
	tab.nr_entries = h->nr;
	return t->o.on_table(&tab, t->o.ctx);
}

static int refresh(struct top *t)
{
	int err = 0;

	if (t->o.on_table) {
		for (int i = 0; i < t->nr_events && !err; i++)
			err = hand_over(t, i);
		if (err)
			return err;
	} else if (t->o.clear)
		fputs("\033[H\033[2J", t->out);
	else if (t->st.refreshes)
		fputc('\n', t->out);
	for (int i = 0; !t->o.on_table && i < t->nr_events; i++) {
		if (i)
			fputc('\n', t->out);
		print_table(t, i);
	}
	if (!t->o.on_table && (fflush(t->out) || ferror(t->out)))
		return errno ? -errno : -EIO;
	for (int i = 0; i < t->nr_events && !err; i++)
		err = hists_age(t, &t->h[i]);
	t->st.refreshes++;
	for (int i = 0; i < t->nr_rings; i++)
		if (t->newest_ns[i] > t->mark_ns[i])
			t->mark_ns[i] = t->newest_ns[i];
	memset(t->ring_samples, 0,
	       (size_t)t->nr_events * (size_t)t->nr_rings *
		       sizeof(*t->ring_samples));
	return err;
}

/* ---- the loop --------------------------------------------------------------- */

static int top_watch(void *ctx, struct rec_session *rs)
{
	struct top *t = ctx;

	for (int i = 0; i < t->el.nr_bufs; i++)
		rec_session_watch(rs, t->el.bufs[i].fd, (uint32_t)i);
	return 0;
}

static int top_ready(void *ctx, uint32_t index, uint32_t events)
{
	struct top *t = ctx;

	if (index >= (uint32_t)t->el.nr_bufs)
		return 0;
	if (events & (EPOLLHUP | EPOLLERR)) {
		/* Its task exited; what it left is drained in the passes. */
		rec_session_unwatch(&t->rs, t->el.bufs[index].fd);
		return 0;
	}
	return 1;
}

/* After every wait: the rings drained; the table printed when its time
 * has come; the next wait lasts until the next refresh. */
static int top_pass(void *ctx)
{
	struct top *t = ctx;
	uint64_t now;
	int err = drain_all(t);

	if (err)
		return err;
	now = now_ms();
	if (now >= t->next_ms) {
		err = refresh(t);
		if (err)
			return err;
		t->next_ms += t->delay_ms;
		if (t->next_ms <= now) /* fell behind: skip, do not burst */
			t->next_ms = now + t->delay_ms;
		if (t->o.iterations && t->st.refreshes >= t->o.iterations)
			return 1;
	}
	now = now_ms();
	t->rs.poll_ms = t->next_ms > now ? (int)(t->next_ms - now) : 0;
	return 0;
}

static const struct rec_source_ops top_source_ops = {
	.name = "top",
	.watch = top_watch,
	.ready = top_ready,
	.pass = top_pass,
};

/* ---- set-up ------------------------------------------------------------------ */

static void setup_attrs(struct top *t, bool inherit)
{
	uint64_t freq = t->o.freq, period = t->o.period;

	for (int i = 0; i < t->nr_events; i++) {
		struct perf_event_attr *a = &t->events[i].attr;

		a->size = sizeof(*a);
		a->sample_type = TOP_SAMPLE_TYPE;
		if (t->o.callchain)
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (t->events[i].tracepoint)
			a->sample_period = period ? period : 1;
		else if (period)
			a->sample_period = period;
		else {
			a->freq = 1;
			a->sample_freq = freq ? freq : TOP_DEFAULT_FREQ;
		}
		a->sample_id_all = 1;
		a->use_clockid = 1; /* sample times comparable with ours */
		a->clockid = CLOCK_MONOTONIC;
		a->disabled = 1;
		a->inherit = inherit;
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)(t->data_bytes / 4);
		a->exclude_guest = 1;
		if (i == 0) { /* side-band: names and maps of new tasks */
			a->mmap = 1;
			a->mmap2 = 1;
			a->comm = 1;
			a->comm_exec = 1;
			a->task = 1;
		}
	}
}

static int top_targets(struct top *t)
{
	int *cpus_buf = t->cpus_buf;
	pid_t *tids_buf = t->tids_buf;
	static const pid_t any_tid = -1;
	const char *const *evs = t->o.events;
	const char *tracefs = NULL;
	static const char *const default_events[] = { "cpu-clock" };
	bool inherit = false;
	int nr_specs = t->o.nr_events;

	if (!evs || nr_specs <= 0) {
		evs = default_events;
		nr_specs = 1;
	}
	t->nr_events = 0;
	for (int i = 0; i < nr_specs; i++) {
		int n;

		if (strchr(evs[i], ':') && !tracefs)
			tracefs = pe_tracefs();
		/* One -e may be several events: a list, a group, a glob. */
		n = pe_events_parse(evs[i], NULL, tracefs,
				    &t->events[t->nr_events],
				    PE_MAX_EVENTS - t->nr_events);
		if (n < 0)
			return n;
		for (int k = t->nr_events; k < t->nr_events + n; k++)
			if (t->events[k].leader >= 0)
				t->events[k].leader += t->nr_events;
		t->nr_events += n;
	}
	t->el.events = t->events;
	t->el.nr_events = t->nr_events;
	t->cpus = cpus_buf;
	if (t->o.cpu_list) {
		t->nr_cpus =
			pe_user_cpus(t->o.cpu_list, cpus_buf, TOP_MAX_CPUS);
		if (t->nr_cpus < 0)
			return t->nr_cpus;
	} else {
		t->nr_cpus = pe_online_cpus(cpus_buf, TOP_MAX_CPUS);
		if (t->nr_cpus < 0)
			return t->nr_cpus;
	}
	if (t->o.pid_list || t->o.tid_list) {
		t->tids = tids_buf;
		t->nr_tids = pe_parse_tids(
			t->o.pid_list ? t->o.pid_list : t->o.tid_list,
			t->o.pid_list != NULL, tids_buf, TOP_MAX_TIDS);
		if (t->nr_tids < 0) {
			if (t->nr_tids == -EINVAL)
				pr_err("bad %s list",
				       t->o.pid_list ? "-p" : "-t");
			return t->nr_tids;
		}
		inherit = true; /* per CPU: children are followed, as perf */
	} else {
		/* -a, -C, or nothing: perf top is system-wide by default. */
		t->system_wide = true;
		t->tids = &any_tid;
		t->nr_tids = 1;
	}
	setup_attrs(t, inherit);
	return 0;
}

/* What already runs: its names and executable maps, and the kernel's. */
/* The process (thread group) thread @tid belongs to, or @tid. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? tgid : tid;
}

static int top_synthesize(struct top *t)
{
	struct synth sy = { .sink = synth_sink,
			    .sink_ctx = t,
			    .sample_type = t->events[0].attr.sample_type };
	pid_t last = 0;
	int err = synth_kernel(&sy);

	if (!err && t->system_wide)
		return synth_all(&sy);
	/* Each process once (with its threads), not each of its threads
	 * as a process of its own. */
	for (int i = 0; !err && i < t->nr_tids; i++) {
		pid_t pid = tgid_of(t->tids[i]);

		if (pid != last)
			err = synth_process(&sy, pid);
		last = pid;
	}
	return err;
}

/*
 * What a table needs, live or fed (top_table_new()): the sort keys, one
 * table per event, the thread and map state (@host: kallsyms and the vDSO
 * apply), and the rate's counters for @nr_rings rings.
 */
static int table_init(struct top *t, int nr_rings, bool host)
{
	int err;

	prd_sample_positions(TOP_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN, &t->pos);
	t->entries = t->o.entries ? t->o.entries : TOP_DEFAULT_ENTRIES;
	err = parse_sort(t, t->o.sort ? t->o.sort : "dso,sym");
	if (err)
		return err;
	t->h = calloc((size_t)t->nr_events, sizeof(*t->h));
	if (!t->h)
		return -ENOMEM;
	err = machine_init(&t->m);
	if (err)
		return err;
	machine_set_host(&t->m, host);
	t->nr_rings = nr_rings > 0 ? nr_rings : 1;
	t->newest_ns = calloc((size_t)t->nr_rings, sizeof(*t->newest_ns));
	t->mark_ns = calloc((size_t)t->nr_rings, sizeof(*t->mark_ns));
	t->ring_samples = calloc((size_t)t->nr_rings * (size_t)t->nr_events,
				 sizeof(*t->ring_samples));
	if (!t->newest_ns || !t->mark_ns || !t->ring_samples)
		return -ENOMEM;
	return 0;
}

static int top_start(struct top *t)
{
	int err;

	t->data_bytes = t->o.mmap_bytes ? t->o.mmap_bytes :
					  TOP_DEFAULT_MMAP_BYTES;
	if ((t->data_bytes & (t->data_bytes - 1)) ||
	    t->data_bytes < (uint64_t)sysconf(_SC_PAGESIZE)) {
		pr_err("-m: %llu bytes is not a power of two of at least one page",
		       (unsigned long long)t->data_bytes);
		return -EINVAL;
	}
	if (!(t->o.delay >= 0) || t->o.delay > 86400) {
		pr_err("-d: %g is not a number of seconds", t->o.delay);
		return -EINVAL;
	}
	t->delay_ms = t->o.delay > 0 ? (uint64_t)(t->o.delay * 1000 + 0.5) :
				       1000;
	if (!t->delay_ms)
		t->delay_ms = 1;
	if (t->o.sort) {
		err = parse_sort(t, t->o.sort); /* its error before opening */
		if (err)
			return err;
	}
	err = top_targets(t);
	if (err)
		return err;
	err = pe_evlist_open(&t->el, t->cpus, t->nr_cpus, t->tids, t->nr_tids,
			     t->data_bytes, false);
	if (err)
		return err;
	t->st.nr_buffers = (uint32_t)t->el.nr_bufs;
	err = table_init(t, t->el.nr_bufs, true);
	if (!err)
		err = top_synthesize(t);
	if (err)
		return err;
	/* The kernel's symbols now, not in the first drain: while that one
	 * reads 100,000 lines of kallsyms the rings fill up. */
	if (t->m.kmaps.nr) {
		struct addr_loc al;

		machine_resolve(&t->m, NULL, PERF_RECORD_MISC_KERNEL,
				t->m.kmaps.v[0].start, true, &al);
	}
	pe_evlist_enable(&t->el, true);
	for (int i = 0; i < t->nr_rings; i++)
		t->mark_ns[i] = now_ns();
	t->next_ms = now_ms() + t->delay_ms;
	return 0;
}

static void top_close(struct top *t)
{
	pe_evlist_close(&t->el);
	rec_session_close(&t->rs);
	for (int i = 0; t->h && i < t->nr_events; i++) {
		for (uint32_t j = 0; j < t->h[i].nr; j++)
			entry_free(t->h[i].v[j]);
		free(t->h[i].v);
		free(t->h[i].tab);
	}
	free(t->h);
	free(t->newest_ns);
	free(t->mark_ns);
	free(t->ring_samples);
	free(t->view_entries);
	free(t->view_chains);
	free(t->view_frames);
	machine_exit(&t->m);
}

PERFRING_API int perfring_top(const struct perfring_top_opts *o, FILE *out,
			      struct perfring_top_stats *st)
{
	struct top *t;
	int err;

	if (!o || !OPTS_VALID(o) || (!out && !OPTS_GET(o, on_table, NULL)))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	OPTS_COPY(&t->o, o);
	if (!OPTS_HAS(o, control_fd))
		t->o.control_fd = -1;
	t->out = out;
	t->st.sz = sizeof(t->st);
	rec_session_init(&t->rs);
	err = top_start(t);
	if (!err) {
		t->rs.control_fd = t->o.control_fd;
		t->rs.poll_ms = (int)t->delay_ms;
		err = rec_session_add(&t->rs, &top_source_ops, t);
		if (!err)
			err = rec_session_loop(&t->rs);
		pe_evlist_enable(&t->el, false);
	}
	t->st.wakeups = t->rs.wakeups;
	if (st)
		OPTS_FILL(st, &t->st);
	top_close(t);
	free(t);
	return err;
}

/* ---- a table fed by the caller (top.h) ----------------------------------- */

int top_table_new(const struct perfring_top_opts *o, FILE *out, struct top **tp)
{
	struct top *t;
	int err;

	*tp = NULL;
	if (!o || !out || !OPTS_VALID(o))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	OPTS_COPY(&t->o, o);
	t->out = out;
	t->st.sz = sizeof(t->st);
	rec_session_init(&t->rs);
	t->nr_events = 1;
	err = table_init(t, 1, false);
	if (err) {
		top_close(t);
		free(t);
		return err;
	}
	*tp = t;
	return 0;
}

int top_table_feed(struct top *t, const void *rec, size_t size)
{
	if (size < sizeof(struct perf_event_header))
		return -EINVAL;
	return top_record(rec, size, t);
}

int top_table_print(struct top *t)
{
	return refresh(t);
}

void top_table_free(struct top *t)
{
	if (!t)
		return;
	top_close(t);
	free(t);
}
