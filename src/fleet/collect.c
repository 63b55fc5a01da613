// SPDX-License-Identifier: MIT
/*
 * Records from the rings into symbolized interval samples (see
 * collect.h).  A sample is decoded as the perf.data reader decodes one
 * (prd_decode_sample()), its thread found from the side-band records seen
 * so far, and its stack resolved as export -f folded resolves it: the
 * callchain in the mode of each context marker, then the DWARF-unwound
 * user frames, or the ip alone.  Every frame becomes a fleet_loc (function,
 * object, build-id, addresses) interned in the interval.
 *
 * Containers: an MMAP2 of a process whose mount namespace is not ours
 * names a path inside that namespace, which on the host is another file
 * or none.  Its name is rewritten to /proc/PID/root/PATH before the
 * thread tables see it, so the object is opened through the process's
 * root while it runs (symbols are read at the first sample, within a
 * round of the mapping); the stores get the path without the prefix, and
 * the build-id, which names the binary whatever its path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../format/buildid.h"
#include "../format/perf_reader.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "collect.h"

/* Threads that may exit before the tables are rebuilt, objects that may
 * be known: what bounds the collector's memory between rebuilds. */
#define RESET_EXITS 4096
#define RESET_DSOS 4096
#define NS_CACHE 1024
/* Queued ring records past which they are taken at once, out of order. */
#define QUEUE_MAX_BYTES (64u << 20)

struct ns_entry {
	int32_t pid; /* 0: empty */
	bool foreign;
};

struct qrec {
	uint64_t time;
	size_t off; /* in qbuf */
	uint32_t size, seq;
};

struct fleet_collector {
	const struct fleet_meta *meta;
	/* ring records waiting for their turn (time order) */
	unsigned char *qbuf;
	size_t qlen, qcap;
	struct qrec *q;
	uint32_t nq, qroom, qseq;
	uint64_t last_round_max, round_max;
	int clockid;
	struct machine m;
	bool m_ok;
	struct prd_attr attrs[FLEET_MAX_EVENTS];
	uint32_t nr_attrs;
	struct fleet_profile *cur;
	int64_t wall_offset; /* CLOCK_REALTIME - clockid, ns */
	bool kernel_warm; /* kallsyms read */
	uint64_t exits;
	char own_mnt[64]; /* readlink of /proc/self/ns/mnt */
	struct ns_entry ns[NS_CACHE];
	struct fleet_collect_stats st;
	uint64_t ips[UNWIND_MAX_FRAMES];
	uint32_t locs[FLEET_MAX_FRAMES];
	unsigned char rec[65536 + 64]; /* a rewritten MMAP2 */
	unsigned char in[65536]; /* a ring record made contiguous */
	char kernel_bid[2 * BUILDID_MAX + 1], vdso_bid[2 * BUILDID_MAX + 1];
};

static int64_t clock_ns(int clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts))
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A new interval with the events in attr order. */
static struct fleet_profile *profile_new(struct fleet_collector *c)
{
	struct fleet_profile *p = malloc(sizeof(*p));

	if (!p || fleet_profile_init(p, c->meta)) {
		free(p);
		return NULL;
	}
	for (uint32_t i = 0; i < c->nr_attrs; i++) {
		const struct perf_event_attr *a = &c->attrs[i].attr;
		struct fleet_event *ev;

		fleet_event(p, c->attrs[i].name,
			    a->type == PERF_TYPE_SOFTWARE &&
				    (a->config == PERF_COUNT_SW_CPU_CLOCK ||
				     a->config == PERF_COUNT_SW_TASK_CLOCK));
		ev = &p->events[p->nr_events - 1];
		ev->freq = a->freq ? a->sample_freq : 0;
		ev->period = a->freq ? 0 : a->sample_period;
	}
	c->wall_offset = clock_ns(CLOCK_REALTIME) - clock_ns(c->clockid);
	p->start_ns = (uint64_t)clock_ns(CLOCK_REALTIME);
	return p;
}

static int machine_start(struct fleet_collector *c)
{
	int err = machine_init(&c->m);

	if (err)
		return err;
	machine_set_host(&c->m, true);
	c->m_ok = true;
	c->exits = 0;
	memset(c->ns, 0, sizeof(c->ns));
	return 0;
}

int fleet_collector_new(const struct fleet_meta *meta, int clockid,
			struct fleet_collector **out)
{
	struct fleet_collector *c = calloc(1, sizeof(*c));
	struct buildid id;
	ssize_t n;
	int err;

	if (!c)
		return -ENOMEM;
	c->meta = meta;
	c->clockid = clockid;
	n = readlink("/proc/self/ns/mnt", c->own_mnt, sizeof(c->own_mnt) - 1);
	c->own_mnt[n > 0 ? n : 0] = 0;
	if (!buildid_kernel(&id))
		buildid_hex(&id, c->kernel_bid);
	if (!buildid_vdso(&id))
		buildid_hex(&id, c->vdso_bid);
	err = machine_start(c);
	if (!err) {
		c->cur = profile_new(c);
		if (!c->cur)
			err = -ENOMEM;
	}
	if (err) {
		fleet_collector_free(c);
		return err;
	}
	*out = c;
	return 0;
}

void fleet_collector_free(struct fleet_collector *c)
{
	if (!c)
		return;
	if (c->m_ok)
		machine_exit(&c->m);
	for (uint32_t i = 0; i < c->nr_attrs; i++) {
		free(c->attrs[i].ids);
		free(c->attrs[i].name);
	}
	if (c->cur) {
		fleet_profile_free(c->cur);
		free(c->cur);
	}
	free(c->qbuf);
	free(c->q);
	free(c);
}

int fleet_collector_add_event(struct fleet_collector *c,
			      const struct perf_event_attr *a, const char *name,
			      const uint64_t *ids, uint32_t nr_ids)
{
	struct prd_attr *pa;
	struct fleet_profile *p;

	if (c->nr_attrs >= FLEET_MAX_EVENTS)
		return -E2BIG;
	pa = &c->attrs[c->nr_attrs];
	memset(pa, 0, sizeof(*pa));
	pa->attr = *a;
	pa->name = strdup(name);
	pa->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(*ids));
	if (!pa->name || !pa->ids) {
		free(pa->name);
		free(pa->ids);
		return -ENOMEM;
	}
	memcpy(pa->ids, ids, nr_ids * sizeof(*ids));
	pa->nr_ids = nr_ids;
	pa->index = c->nr_attrs++;
	/* the interval begun has the events known so far: again */
	p = profile_new(c);
	if (!p)
		return -ENOMEM;
	fleet_profile_free(c->cur);
	free(c->cur);
	c->cur = p;
	return 0;
}

/* ---- containers -------------------------------------------------------- */

/* Whether process @pid is in another mount namespace than ours. */
static bool foreign_ns(struct fleet_collector *c, int32_t pid)
{
	struct ns_entry *e = &c->ns[(uint32_t)pid % NS_CACHE];
	char path[64], link[64];
	ssize_t n;

	if (e->pid == pid)
		return e->foreign;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	e->pid = pid;
	/* gone or unreadable: the host's files are the best guess */
	e->foreign = n > 0 && c->own_mnt[0] && strcmp(link, c->own_mnt);
	return e->foreign;
}

static void ns_forget(struct fleet_collector *c, int32_t pid)
{
	struct ns_entry *e = &c->ns[(uint32_t)pid % NS_CACHE];

	if (e->pid == pid)
		e->pid = 0;
}

/* An MMAP2 of a process in a container, its file named through the
 * process's root; the record as it is otherwise. */
static const struct perf_event_header *
container_mmap(struct fleet_collector *c, const unsigned char *rec, size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	int32_t pid;
	size_t nlen, len;
	int n;

	if (size < 74 || rec[72] != '/' ||
	    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
		    PERF_RECORD_MISC_KERNEL)
		return h;
	memcpy(&pid, rec + 8, 4);
	if (pid <= 0 || !foreign_ns(c, pid))
		return h;
	nlen = strnlen((const char *)rec + 72, size - 72);
	memcpy(c->rec, rec, 72);
	n = snprintf((char *)c->rec + 72, sizeof(c->rec) - 72,
		     "/proc/%d/root%.*s", pid, (int)nlen,
		     (const char *)rec + 72);
	len = 72 + (size_t)n + 1;
	len = (len + 7) & ~(size_t)7;
	if (n < 0 || len > UINT16_MAX)
		return h;
	memset(c->rec + 72 + n, 0, len - 72 - (size_t)n);
	((struct perf_event_header *)(void *)c->rec)->size = (uint16_t)len;
	return (const void *)c->rec;
}

/* The object's path as the stores get it: without the /proc/PID/root
 * that opened it from the host. */
static const char *store_path(const char *name)
{
	const char *p = name;

	if (strncmp(p, "/proc/", 6))
		return name;
	p += 6;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == name + 6 || strncmp(p, "/root/", 6))
		return name;
	return p + 5;
}

/* ---- samples --------------------------------------------------------- */

static const char *build_id_of(struct fleet_collector *c, struct dso *d,
			       char *hex)
{
	if (d->kind == DSO_KERNEL)
		return c->kernel_bid;
	if (d->kind == DSO_VDSO)
		return c->vdso_bid;
	if (d->kind != DSO_FILE)
		return "";
	if (!d->build_id_size && !d->priv) {
		struct buildid id;

		d->priv = (void *)1; /* read once */
		if (!buildid_from_file(d->name, &id))
			dso_set_build_id(d, id.data, id.size);
	}
	if (!d->build_id_size)
		return "";
	for (unsigned i = 0; i < d->build_id_size; i++)
		snprintf(hex + 2 * i, 3, "%02x", d->build_id[i]);
	return hex;
}

static int frame(struct fleet_collector *c, struct thread *t, uint8_t mode,
		 uint64_t ip, uint32_t *loc)
{
	struct fleet_profile *p = c->cur;
	struct fleet_loc l = { .ip = ip };
	struct addr_loc al;
	char hex[2 * BUILDID_MAX + 1];
	const char *s;
	int err = 0;

	machine_resolve(&c->m, t, mode, ip, true, &al);
	l.kernel = al.kernel;
	if (al.sym)
		err = fleet_str(p, al.sym->name, strlen(al.sym->name), &l.func);
	if (!err && al.dso) {
		s = store_path(al.dso->name);
		err = fleet_str(p, s, strlen(s), &l.dso);
		s = build_id_of(c, al.dso, hex);
		if (!err && *s)
			err = fleet_str(p, s, strlen(s), &l.build_id);
		l.rel = al.addr;
	}
	if (al.map) {
		l.map_start = al.map->start;
		l.map_end = al.map->end;
		l.map_pgoff = al.map->pgoff;
	} else if (al.dso) {
		l.map_end = UINT64_MAX; /* kallsyms without a map */
	}
	return err ? err : fleet_loc(p, &l, loc);
}

static const struct prd_attr *attr_of(struct fleet_collector *c, uint64_t id)
{
	if (c->nr_attrs == 1)
		return &c->attrs[0];
	for (uint32_t i = 0; i < c->nr_attrs; i++)
		for (uint32_t j = 0; j < c->attrs[i].nr_ids; j++)
			if (c->attrs[i].ids[j] == id)
				return &c->attrs[i];
	return NULL;
}

static int sample(struct fleet_collector *c, const unsigned char *rec,
		  size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	const struct prd_attr *a;
	struct prd_sample s;
	struct fleet_sample fs = { .count = 1 };
	struct thread *t;
	unsigned nr_user;
	uint32_t n = 0;
	uint64_t id;
	int err = 0;

	if (size < 16 || !c->nr_attrs) {
		c->st.bad_samples++;
		return 0;
	}
	memcpy(&id, rec + 8, 8); /* PERF_SAMPLE_IDENTIFIER: first */
	a = attr_of(c, id);
	if (!a) {
		c->st.unknown_id++;
		return 0;
	}
	if (prd_decode_sample(a, rec, (uint32_t)size, &s)) {
		c->st.bad_samples++;
		return 0;
	}
	t = machine_findnew_thread(&c->m, (int32_t)s.pid, (int32_t)s.tid);
	if (!t)
		return -ENOMEM;
	nr_user = unwind_user_stack(&c->m, t, &s, c->ips, UNWIND_MAX_FRAMES);
	if (s.nr_callchain) {
		uint8_t mode = 0; /* before a context marker: guess */

		for (uint64_t i = 0;
		     i < s.nr_callchain && n < FLEET_MAX_FRAMES && !err; i++)
			if (!callchain_marker(s.callchain[i], &mode))
				err = frame(c, t, mode, s.callchain[i],
					    &c->locs[n++]);
	}
	for (unsigned i = 0; i < nr_user && n < FLEET_MAX_FRAMES && !err; i++)
		err = frame(c, t, PERF_RECORD_MISC_USER, c->ips[i],
			    &c->locs[n++]);
	if (!n && !err)
		err = frame(c, t, h->misc & PERF_RECORD_MISC_CPUMODE_MASK, s.ip,
			    &c->locs[n++]);
	if (!err)
		err = fleet_stack(c->cur, c->locs, n, &fs.stack);
	if (!err)
		err = fleet_str(c->cur, t->comm, strlen(t->comm), &fs.comm);
	if (err)
		return err;
	fs.time_ns = s.time ? (uint64_t)((int64_t)s.time + c->wall_offset) : 0;
	fs.value = s.period;
	fs.pid = s.pid;
	fs.tid = s.tid;
	fs.cpu = s.cpu;
	fs.event = a->index;
	err = fleet_add_sample(c->cur, &fs);
	if (!err) {
		c->st.samples++;
		if (fs.time_ns > c->cur->end_ns)
			c->cur->end_ns = fs.time_ns;
	}
	return err;
}

/* What a record tells of mount namespaces, as it arrives: a FORK or an
 * exec starts a process whose namespace is asked anew. */
static void ns_note(struct fleet_collector *c, const unsigned char *rec,
		    size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	int32_t pid;

	if (size < 12 || (h->type != PERF_RECORD_FORK &&
			  !(h->type == PERF_RECORD_COMM &&
			    (h->misc & PERF_RECORD_MISC_COMM_EXEC))))
		return;
	memcpy(&pid, rec + 8, 4);
	ns_forget(c, pid);
}

/* After an MMAP2 named through /proc/PID/root: the object's symbols and
 * build-id read now, while the process (and its root) still exists.  And
 * kallsyms read at the kernel's first mapping, before the recording.
 * @v: the record's view, NULL when it does not decode. */
static void after_mmap(struct fleet_collector *c, const union prd_record *v)
{
	char hex[2 * BUILDID_MAX + 1];
	/* the name read to the end of the record, as the thread model does */
	const struct prd_str_in_record *name = &v->mmap.filename_in_record;

	if (!c->kernel_warm && c->m.kmaps.nr) {
		struct thread *idle = machine_findnew_thread(&c->m, 0, 0);
		struct addr_loc al;

		c->kernel_warm = true;
		if (idle)
			machine_resolve(&c->m, idle, PERF_RECORD_MISC_KERNEL,
					c->m.kmaps.v[0].start, true, &al);
	}
	if (v && v->header.type == PERF_RECORD_MMAP2 && v->header.size > 79 &&
	    name->str && !memcmp(name->str, "/proc/", 6)) {
		struct dso *d = dsos_findnew(&c->m.dsos, name->str, name->len);

		if (d && store_path(d->name) != d->name) {
			dso_find_symbol(d, 0);
			build_id_of(c, d, hex);
		}
	}
}

/* A record in its turn (rewritten for containers already). */
static void take(struct fleet_collector *c, const unsigned char *rec,
		 size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	union prd_record v;
	bool ok;
	int err = 0;

	if (size < sizeof(*h) || size != h->size)
		return;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		err = sample(c, rec, size);
		break;
	case PERF_RECORD_EXIT:
		c->exits++;
		if (prd_record_view(rec, size, &v))
			err = machine_process(&c->m, &v);
		break;
	default:
		ok = prd_record_view(rec, size, &v);
		if (ok)
			err = machine_process(&c->m, &v);
		if (!err && (h->type == PERF_RECORD_MMAP2 ||
			     h->type == PERF_RECORD_MMAP))
			after_mmap(c, ok ? &v : NULL);
		break;
	}
	if (err == -ENOMEM)
		c->st.enomem++;
}

void fleet_collector_feed(struct fleet_collector *c, const void *rec,
			  size_t size)
{
	const struct perf_event_header *h = rec;

	if (size < sizeof(*h) || size != h->size)
		return;
	ns_note(c, rec, size);
	if (h->type == PERF_RECORD_MMAP2)
		rec = container_mmap(c, rec, size);
	take(c, rec, ((const struct perf_event_header *)rec)->size);
}

size_t fleet_collector_bytes(const struct fleet_collector *c)
{
	return fleet_profile_bytes(c->cur);
}

struct fleet_profile *fleet_collector_take(struct fleet_collector *c)
{
	struct fleet_profile *p = profile_new(c), *done = c->cur;

	if (!p)
		return NULL;
	if (done->end_ns < done->start_ns)
		done->end_ns = done->start_ns;
	/* the next one starts where this one ended */
	p->start_ns = (uint64_t)clock_ns(CLOCK_REALTIME);
	if (done->end_ns < p->start_ns)
		done->end_ns = p->start_ns;
	c->cur = p;
	return done;
}

bool fleet_collector_stale(const struct fleet_collector *c)
{
	return c->exits >= RESET_EXITS || c->m.dsos.nr >= RESET_DSOS;
}

int fleet_collector_reset(struct fleet_collector *c)
{
	/* the interval's strings are copies: the tables may go */
	if (c->m_ok)
		machine_exit(&c->m);
	c->m_ok = false;
	c->st.resets++;
	return machine_start(c);
}

void fleet_collector_stats(const struct fleet_collector *c,
			   struct fleet_collect_stats *st)
{
	*st = c->st;
}

/* ---- time order ---------------------------------------------------------- */

/* The time of a record: a sample's TIME, another's sample_id_all trailer
 * (0: none). */
static uint64_t record_time(const struct fleet_collector *c,
			    const unsigned char *rec, size_t size)
{
	uint64_t st = c->nr_attrs ? c->attrs[0].attr.sample_type : 0, t = 0;
	size_t off;

	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (((const struct perf_event_header *)(const void *)rec)->type ==
	    PERF_RECORD_SAMPLE) {
		off = 8 +
		      8 * (!!(st & PERF_SAMPLE_IDENTIFIER) +
			   !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID));
	} else {
		size_t after = 8 * (1 + !!(st & PERF_SAMPLE_ID) +
				    !!(st & PERF_SAMPLE_STREAM_ID) +
				    !!(st & PERF_SAMPLE_CPU) +
				    !!(st & PERF_SAMPLE_IDENTIFIER));

		if (size < 8 + after)
			return 0;
		off = size - after;
	}
	if (off + 8 <= size)
		memcpy(&t, rec + off, 8);
	return t;
}

static int qrec_cmp(const void *pa, const void *pb)
{
	const struct qrec *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int qrec_seq_cmp(const void *pa, const void *pb)
{
	const struct qrec *a = pa, *b = pb;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void queue_add(struct fleet_collector *c, const unsigned char *rec,
		      size_t size)
{
	if (c->qlen + size > c->qcap) {
		size_t cap = c->qcap ? c->qcap : 1 << 20;
		unsigned char *b;

		while (cap < c->qlen + size)
			cap *= 2;
		if (cap > QUEUE_MAX_BYTES) {
			/* far behind: order gives way to memory */
			fleet_collector_round(c, true);
			cap = c->qcap;
		}
		if (c->qlen + size > c->qcap) {
			b = realloc(c->qbuf, cap);
			if (!b) {
				c->st.enomem++;
				return;
			}
			c->qbuf = b;
			c->qcap = cap;
		}
	}
	if (c->nq == c->qroom) {
		uint32_t n = c->qroom ? c->qroom * 2 : 4096;
		struct qrec *v = realloc(c->q, n * sizeof(*v));

		if (!v) {
			c->st.enomem++;
			return;
		}
		c->q = v;
		c->qroom = n;
	}
	memcpy(c->qbuf + c->qlen, rec, size);
	c->q[c->nq].time = record_time(c, rec, size);
	c->q[c->nq].off = c->qlen;
	c->q[c->nq].size = (uint32_t)size;
	c->q[c->nq].seq = c->qseq++;
	if (c->q[c->nq].time > c->round_max)
		c->round_max = c->q[c->nq].time;
	c->nq++;
	c->qlen += size;
}

void fleet_collector_queue(struct fleet_collector *c, const void *const ptr[2],
			   const size_t len[2], int pieces, size_t off,
			   size_t size)
{
	const unsigned char *rec = c->in;

	if (size < sizeof(struct perf_event_header) || size > sizeof(c->in))
		return;
	if (off + size <= len[0]) {
		rec = (const unsigned char *)ptr[0] + off;
	} else {
		for (size_t i = 0, o = off; i < size; i++, o++)
			c->in[i] = o < len[0] ?
					   ((const unsigned char *)ptr[0])[o] :
				   pieces > 1 ? ((const unsigned char *)
							 ptr[1])[o - len[0]] :
						0;
	}
	/* the namespace is asked now, while the process surely exists */
	ns_note(c, rec, size);
	if (((const struct perf_event_header *)(const void *)rec)->type ==
	    PERF_RECORD_MMAP2) {
		rec = (const void *)container_mmap(c, rec, size);
		size = ((const struct perf_event_header *)(const void *)rec)
			       ->size;
	}
	queue_add(c, rec, size);
}

void fleet_collector_round(struct fleet_collector *c, bool all)
{
	uint32_t n = 0, k = 0;
	size_t len = 0;

	qsort(c->q, c->nq, sizeof(*c->q), qrec_cmp);
	while (n < c->nq && (all || c->q[n].time <= c->last_round_max)) {
		take(c, c->qbuf + c->q[n].off, c->q[n].size);
		n++;
	}
	/* the rest waits for the next round: moved to the front in the
	 * order they came (their offsets grow: no move overwrites a record
	 * not yet moved) */
	qsort(c->q + n, c->nq - n, sizeof(*c->q), qrec_seq_cmp);
	for (uint32_t i = n; i < c->nq; i++, k++) {
		struct qrec r = c->q[i];

		memmove(c->qbuf + len, c->qbuf + r.off, r.size);
		r.off = len;
		len += r.size;
		c->q[k] = r;
	}
	c->nq = k;
	c->qlen = len;
	c->qseq = k;
	for (uint32_t i = 0; i < k; i++)
		c->q[i].seq = i;
	c->last_round_max = c->round_max;
}
