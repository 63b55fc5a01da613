// SPDX-License-Identifier: MIT
/*
 * Replay of recorded CoreSight trace as a trace source.
 *
 * Input: an OpenCSD / DS-5 snapshot directory (read here: snapshot.ini,
 * the device files, trace.ini, the trace buffer file), or a description
 * the record layer built from the AUXTRACE data of a perf.data.  The
 * source's thread then plays the trace into the per-CPU AUX areas the
 * recorder gave it, chunk by chunk, the way a PMU driver does: begin,
 * copy, end with a PERF_RECORD_AUX (and ITRACE_START when it starts),
 * side-band records into the data ring in their place.
 *
 * Flow control: with no rate (as fast as possible) the thread waits for
 * the reader to free space, so nothing is lost; with a rate it behaves
 * like hardware: a full area truncates the chunk (TRUNCATED, the rest
 * counted lost) and the area stays disabled until the recorder re-enables
 * it.  Free-running (snapshot) areas never wait.
 *
 * stop() returns only once the thread is outside begin..end, so a
 * snapshot reader sees an area that does not move.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../common/log.h"
#include "../sources/source.h"
#include "cs_ini.h"

#define INI_MAX (1u << 20)
#define INI_MAX_ENTRIES 65536
#define TRACE_MAX (1ull << 32)

/* ---- ini files ---- */

static int read_small(const char *path, char **out, size_t *len, size_t max)
{
	int ret = cs_read_file(AT_FDCWD, path, max, out, len);

	if (ret == -EINVAL || ret == -EFBIG) {
		pr_err("%s: not a regular file of at most %zu bytes", path,
		       max);
		return -EINVAL;
	}
	if (ret)
		pr_err("%s: %s", path, strerror(-ret));
	return ret;
}

static int ini_load(const char *path, struct cs_ini *f)
{
	size_t len;
	char *text;
	int ret;

	memset(f, 0, sizeof(*f));
	ret = read_small(path, &text, &len, INI_MAX);
	if (ret)
		return ret;
	ret = cs_ini_parse(f, text, len, path, INI_MAX_ENTRIES);
	f->name = strdup(path);
	if (!ret && !f->name)
		ret = -ENOMEM;
	if (ret)
		cs_ini_free(f);
	return ret;
}

/* A file named in an ini file, relative to the snapshot directory. */
static int join_path(char *out, size_t cap, const char *dir, const char *name)
{
	if (!*name || name[0] == '/' || strstr(name, "..")) {
		pr_err("%s: file name \"%s\" is not a plain name inside the snapshot directory",
		       dir, name);
		return -EINVAL;
	}
	if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- snapshot directory ---- */

struct dev {
	struct cs_ini ini;
	const char *name, *class, *type;
};

static int reg_value(const struct cs_ini *f, const char *reg, uint64_t *v,
		     bool *found)
{
	size_t n = strlen(reg);

	for (int i = 0; i < f->n; i++) {
		const struct cs_ini_ent *kv = &f->e[i];
		char *end;

		if (strcasecmp(kv->sect, "regs") ||
		    strncasecmp(kv->key, reg, n) ||
		    (kv->key[n] && kv->key[n] != '('))
			continue;
		errno = 0;
		*v = strtoull(kv->val, &end, 0);
		if (errno || end == kv->val ||
		    *cs_ini_trim(end, end + strlen(end))) {
			pr_err("%s:%d: register %s: bad value \"%s\"", f->name,
			       kv->line, kv->key, kv->val);
			return -EBADMSG;
		}
		*found = true;
		return 0;
	}
	*found = false;
	*v = 0;
	return 0;
}

static int kind_of_type(const char *type, enum pr_cs_kind *kind)
{
	if (!strncasecmp(type, "ETM4", 4) || !strncasecmp(type, "ETMv4", 5))
		*kind = PR_CS_ETMV4;
	else if (!strncasecmp(type, "ETE", 3))
		*kind = PR_CS_ETE;
	else if (!strncasecmp(type, "ETM3", 4) ||
		 !strncasecmp(type, "ETMv3", 5) || !strncasecmp(type, "PTM", 3))
		*kind = PR_CS_ETMV3;
	else
		return -1;
	return 0;
}

static const char *const v3_regs[] = { "ETMCR", "ETMTRACEIDR", "ETMCCER",
				       "ETMIDR" };
static const char *const v4_regs[] = { "TRCCONFIGR",	"TRCTRACEIDR",
				       "TRCIDR0",	"TRCIDR1",
				       "TRCIDR2",	"TRCIDR8",
				       "TRCAUTHSTATUS", "TRCDEVARCH" };

static int etm_regs(const struct dev *d, struct pr_cs_etm_cpu *c)
{
	const char *const *names = c->kind == PR_CS_ETMV3 ? v3_regs : v4_regs;
	uint32_t n = pr_cs_etm_nr_params(c->kind);

	for (uint32_t i = 0; i < n; i++) {
		bool found;
		int ret = reg_value(&d->ini, names[i], &c->regs[i], &found);

		if (ret)
			return ret;
		if (!found && i < 2) {
			pr_err("%s: %s device %s has no %s register",
			       d->ini.name, d->type, d->name, names[i]);
			return -EBADMSG;
		}
	}
	c->nr_regs = n;
	return 0;
}

static int cpu_number(const char *core, int index)
{
	size_t n = strlen(core);

	while (n && isdigit((unsigned char)core[n - 1]))
		n--;
	if (core[n] && strlen(core + n) < 6)
		return atoi(core + n);
	return index;
}

void pr_replay_desc_free(struct pr_replay_desc *d)
{
	free(d->etm);
	free(d->chunks);
	free(d->records);
	free(d->cpus);
	free(d->owned);
	free(d->owned2);
	memset(d, 0, sizeof(*d));
}

static int load_trace(const char *path, void **data, uint64_t *size)
{
	char *buf;
	size_t len;
	int ret = read_small(path, &buf, &len, TRACE_MAX);

	if (ret)
		return ret;
	if (!len) {
		pr_err("%s: empty trace buffer", path);
		free(buf);
		return -EBADMSG;
	}
	*data = buf;
	*size = len;
	return 0;
}

/* The devices snapshot.ini lists ([device_list]), each with its ini. */
static int load_devices(const char *dir, const struct cs_ini *snap,
			struct dev *devs, size_t *nr_devs)
{
	char path[PATH_MAX];
	int ret;

	for (int i = 0; i < snap->n; i++) {
		struct dev *dv;

		if (strcasecmp(snap->e[i].sect, "device_list"))
			continue;
		ret = join_path(path, sizeof(path), dir, snap->e[i].val);
		if (ret)
			return ret;
		dv = &devs[*nr_devs];
		ret = ini_load(path, &dv->ini);
		if (ret)
			return ret;
		(*nr_devs)++;
		dv->name = cs_ini_str(&dv->ini, "device", "name");
		dv->class = cs_ini_str(&dv->ini, "device", "class");
		dv->type = cs_ini_str(&dv->ini, "device", "type");
		if (!dv->name || !dv->class || !dv->type) {
			pr_err("%s: [device] needs name, class and type",
			       dv->ini.name);
			return -EBADMSG;
		}
	}
	return 0;
}

/* One metadata block per core with an ETM/PTM/ETE source; *@buffer: the
 * name of the buffer the first of them writes to. */
static int etm_sources(const struct cs_ini *trace, const struct dev *devs,
		       size_t nr_devs, struct pr_replay_desc *d,
		       const char **buffer)
{
	int ret, nr = 0;

	d->etm = calloc(trace->n ? trace->n : 1, sizeof(*d->etm));
	d->cpus = calloc(1, sizeof(int));
	if (!d->etm || !d->cpus)
		return -ENOMEM;
	for (int i = 0; i < trace->n; i++) {
		const struct cs_ini_ent *kv = &trace->e[i];
		struct pr_cs_etm_cpu *c = &d->etm[d->nr_etm];
		const struct dev *src = NULL;
		const char *buf_name;

		if (strcasecmp(kv->sect, "core_trace_sources"))
			continue;
		for (size_t k = 0; k < nr_devs; k++)
			if (!strcmp(devs[k].name, kv->val))
				src = &devs[k];
		if (!src) {
			pr_err("%s:%d: trace source %s of core %s: no such device",
			       trace->name, kv->line, kv->val, kv->key);
			return -EBADMSG;
		}
		if (kind_of_type(src->type, &c->kind)) {
			pr_warn("%s: %s is a %s, not an ETM/PTM/ETE: left out",
				trace->name, src->name, src->type);
			continue;
		}
		c->cpu = (uint32_t)cpu_number(kv->key, nr);
		ret = etm_regs(src, c);
		if (ret)
			return ret;
		buf_name = cs_ini_str(trace, "source_buffers", src->name);
		if (buf_name && !*buffer)
			*buffer = buf_name;
		d->nr_etm++;
		nr++;
	}
	if (!d->nr_etm) {
		pr_err("%s: no core has an ETM, PTM or ETE trace source",
		       trace->name);
		return -EBADMSG;
	}
	if (!*buffer) {
		pr_err("%s: no [source_buffers] entry names the ETMs' buffer",
		       trace->name);
		return -EBADMSG;
	}
	return 0;
}

/* [bufferN] name=<buffer> file=... format=coresight: its bytes. */
static int load_buffer(const char *dir, const struct cs_ini *trace,
		       const char *buffer, void **data, uint64_t *size)
{
	const char *file = NULL, *fmt = NULL;
	char path[PATH_MAX];
	int ret;

	for (int i = 0; i < trace->n && !file; i++)
		if (!strcasecmp(trace->e[i].key, "name") &&
		    !strcmp(trace->e[i].val, buffer)) {
			file = cs_ini_str(trace, trace->e[i].sect, "file");
			fmt = cs_ini_str(trace, trace->e[i].sect, "format");
		}
	if (!file) {
		pr_err("%s: buffer %s has no file=", trace->name, buffer);
		return -EBADMSG;
	}
	if (fmt && strcasecmp(fmt, "coresight"))
		pr_warn("%s: buffer %s has format %s (played as is)",
			trace->name, buffer, fmt);
	ret = join_path(path, sizeof(path), dir, file);
	if (!ret)
		ret = load_trace(path, data, size);
	return ret;
}

/* The buffer's @size bytes at @data as @chunk-byte chunks of @cpu (< 0:
 * the lowest CPU with an ETM). */
static int make_chunks(struct pr_replay_desc *d, const void *data,
		       uint64_t size, uint64_t chunk, int cpu)
{
	if (cpu < 0) {
		cpu = (int)d->etm[0].cpu;
		for (uint32_t i = 1; i < d->nr_etm; i++)
			if ((int)d->etm[i].cpu < cpu)
				cpu = (int)d->etm[i].cpu;
	}
	d->cpus[0] = cpu;
	d->nr_cpus = 1;
	d->nr_chunks = (size_t)((size + chunk - 1) / chunk);
	d->chunks = calloc(d->nr_chunks, sizeof(*d->chunks));
	if (!d->chunks)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_chunks; i++) {
		d->chunks[i].cpu = cpu;
		d->chunks[i].data = (const char *)data + i * chunk;
		d->chunks[i].size = i + 1 < d->nr_chunks ? chunk :
							   size - i * chunk;
	}
	d->pid = d->tid = (uint32_t)-1;
	return 0;
}

int pr_replay_load_snapshot(const char *dir, int cpu, uint64_t chunk,
			    struct pr_replay_desc *d)
{
	struct cs_ini snap = { 0 }, trace = { 0 };
	struct dev *devs = NULL;
	size_t nr_devs = 0;
	const char *meta, *buffer = NULL;
	char path[PATH_MAX];
	uint64_t size = 0;
	void *data = NULL;
	int ret;

	memset(d, 0, sizeof(*d));
	if (!chunk)
		chunk = 4096;
	if ((size_t)snprintf(path, sizeof(path), "%s/snapshot.ini", dir) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	ret = ini_load(path, &snap);
	if (ret)
		return ret;
	devs = calloc(snap.n ? snap.n : 1, sizeof(*devs));
	if (!devs) {
		ret = -ENOMEM;
		goto out;
	}
	ret = load_devices(dir, &snap, devs, &nr_devs);
	if (ret)
		goto out;
	meta = cs_ini_str(&snap, "trace", "metadata");
	if (!meta) {
		pr_err("%s/snapshot.ini: no [trace] metadata= (no trace in this snapshot)",
		       dir);
		ret = -EBADMSG;
		goto out;
	}
	ret = join_path(path, sizeof(path), dir, meta);
	if (!ret)
		ret = ini_load(path, &trace);
	if (!ret)
		ret = etm_sources(&trace, devs, nr_devs, d, &buffer);
	if (!ret)
		ret = load_buffer(dir, &trace, buffer, &data, &size);
	if (ret)
		goto out;
	d->owned = data;
	ret = make_chunks(d, data, size, chunk, cpu);
out:
	for (size_t k = 0; k < nr_devs; k++)
		cs_ini_free(&devs[k].ini);
	free(devs);
	cs_ini_free(&snap);
	cs_ini_free(&trace);
	if (ret)
		pr_replay_desc_free(d);
	return ret;
}

/* ---- the replay source ---- */

enum { ST_STOPPED, ST_RUNNING, ST_QUIT };

struct replay {
	const struct pr_replay_desc *d;
	uint64_t rate, loops;
	struct pr_source_buf *bufs[PR_SOURCE_MAX_BUFS];
	int nr_bufs;
	bool overwrite;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int want; /* ST_* asked for */
	int state; /* ST_* the thread is in */
	bool finished;
	bool itrace_sent;
	uint64_t played, lost;
	uint64_t t0, paced; /* rate pacing */
	uint64_t nap_ns; /* current back-off while an area is full */
	unsigned char *scratch; /* a side-band record retimed (identifier) */
};

static struct replay *rp(const struct pr_source *s)
{
	return s->priv;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct pr_source_buf *buf_of(struct replay *r, int cpu)
{
	for (int i = 0; i < r->nr_bufs; i++)
		if (r->bufs[i]->cpu == cpu)
			return r->bufs[i];
	return r->nr_bufs ? r->bufs[0] : NULL;
}

/*
 * Between pieces: honours stop/quit.  Returns false on quit.  The lock
 * is not held while writing, so stop() waits for the state change.
 */
static bool checkpoint(struct replay *r)
{
	bool go;

	pthread_mutex_lock(&r->lock);
	while (r->want == ST_STOPPED) {
		if (r->state != ST_STOPPED) {
			r->state = ST_STOPPED;
			pthread_cond_broadcast(&r->cond);
		}
		pthread_cond_wait(&r->cond, &r->lock);
	}
	if (r->want == ST_RUNNING && r->state != ST_RUNNING) {
		r->state = ST_RUNNING;
		r->t0 = mono_ns();
		r->paced = 0;
		pthread_cond_broadcast(&r->cond);
	}
	go = r->want != ST_QUIT;
	pthread_mutex_unlock(&r->lock);
	return go;
}

static void pace(struct replay *r, uint64_t n)
{
	uint64_t due, now;

	if (!r->rate)
		return;
	r->paced += n;
	due = r->t0 + (uint64_t)((double)r->paced * 1e9 / (double)r->rate);
	now = mono_ns();
	if (due > now + 20000) {
		struct timespec ts = { (time_t)((due - now) / 1000000000ull),
				       (long)((due - now) % 1000000000ull) };

		nanosleep(&ts, NULL);
	}
}

/*
 * Waiting for the recorder to free space: 20 us, doubling while the area
 * stays full, up to about the time the recorder needs to write half the
 * area at 1 GB/s (at most 1 ms): fewer context switches than polling, and
 * the area never runs empty while we sleep.
 */
static void nap(struct replay *r, const struct pr_source_buf *b)
{
	struct timespec ts = { 0, (long)r->nap_ns };
	uint64_t cap = b ? perfring_aux_size(b->aux) / 2 : 20000;

	if (cap > 1000000)
		cap = 1000000;
	nanosleep(&ts, NULL);
	if (r->nap_ns * 2 <= cap)
		r->nap_ns *= 2;
}

/* Our trailer for ring @b into @sid; its size: PR_SAMPLE_ID_TYPE's, and
 * the id again last when the attr has PERF_SAMPLE_IDENTIFIER. */
static uint32_t own_trailer(const struct replay *r,
			    const struct pr_source_buf *b, uint64_t sid[5])
{
	pr_sample_id_fill(sid, r->d->pid, r->d->tid, mono_ns(), b->id,
			  (uint32_t)b->cpu);
	sid[4] = b->id;
	return r->d->identifier ? PR_SAMPLE_ID_SIZE + 8 : PR_SAMPLE_ID_SIZE;
}

static void send_itrace_start(struct replay *r)
{
	for (int i = 0; i < r->nr_bufs; i++) {
		uint64_t sid[5];
		uint32_t n = own_trailer(r, r->bufs[i], sid);

		perfring_aux_itrace_start(r->bufs[i]->aux, r->d->pid, r->d->tid,
					  sid, n);
	}
}

/* Plays one chunk; false on quit. */
static bool play_chunk(struct replay *r, const struct pr_replay_chunk *c)
{
	struct pr_source_buf *b = buf_of(r, c->cpu);
	const unsigned char *p = c->data;
	uint64_t left = c->size;

	if (!b)
		return true;
	while (left) {
		struct perfring_aux_output h;
		uint64_t sid[5], n;
		int ret;

		if (!checkpoint(r))
			return false;
		/* No rate: no loss, so room for the PERF_RECORD_AUX too, and
		 * wait for AUX space rather than truncate (begin would
		 * disable a full area, as the kernel does). */
		if (!r->rate && (perfring_ring_space(b->ring) < 256 ||
				 perfring_aux_space(b->aux) == 0)) {
			nap(r, b);
			continue;
		}
		ret = perfring_aux_output_begin(&h, b->aux);
		if (ret) {
			if (r->rate) {
				/* Hardware: the trace of this chunk is
				 * gone while the area is disabled. */
				perfring_aux_note_lost(b->aux, left);
				__atomic_add_fetch(&r->lost, left,
						   __ATOMIC_RELAXED);
				pace(r, left); /* the hardware ran on */
				return true;
			}
			nap(r, b); /* wait for the recorder to drain */
			continue;
		}
		r->nap_ns = 20000;
		n = left < h.size ? left : h.size;
		memcpy(h.data, p, (size_t)n);
		perfring_aux_output_flag(&h, c->flags);
		if (r->rate && n < left)
			perfring_aux_output_flag(&h, PERF_AUX_FLAG_TRUNCATED);
		if (c->sample_id && !r->d->identifier) {
			/* a replayed perf.data's own trailer */
			h.sample_id = c->sample_id;
			h.sample_id_size = PR_SAMPLE_ID_SIZE;
		} else {
			h.sample_id_size = own_trailer(r, b, sid);
			h.sample_id = sid;
		}
		perfring_aux_output_end(&h, n);
		__atomic_add_fetch(&r->played, n, __ATOMIC_RELAXED);
		pace(r, n);
		p += n;
		left -= n;
		if (r->rate && left) {
			perfring_aux_note_lost(b->aux, left);
			__atomic_add_fetch(&r->lost, left, __ATOMIC_RELAXED);
			pace(r, left);
			return true;
		}
	}
	return true;
}

/*
 * A copied side-band record into @b's data ring.  Beside other sources
 * (identifier: the record layer gave it the trailer TID TIME ID CPU
 * IDENTIFIER), its time becomes now: the others' clock, not the one of
 * the recording it comes from.
 */
static void emit_record(struct replay *r, struct pr_source_buf *b,
			const struct perf_event_header *h)
{
	uint64_t now;

	if (!r->d->identifier || !r->scratch ||
	    h->size < sizeof(*h) + PR_SAMPLE_ID_SIZE + 8) {
		perfring_ring_emit(b->ring, h, h->size);
		return;
	}
	now = mono_ns();
	memcpy(r->scratch, h, h->size);
	memcpy(r->scratch + h->size - 32, &now, sizeof(now));
	perfring_ring_emit(b->ring, r->scratch, h->size);
}

static bool emit_records(struct replay *r, size_t before, size_t *next)
{
	const struct pr_replay_desc *d = r->d;

	while (*next < d->nr_records && d->records[*next].before <= before) {
		const struct pr_replay_record *rec = &d->records[*next];
		struct pr_source_buf *b = buf_of(r, rec->cpu);

		if (!checkpoint(r))
			return false;
		if (b && !r->rate &&
		    perfring_ring_space(b->ring) < rec->rec->size + 64) {
			nap(r, b); /* no rate: wait for the recorder */
			continue;
		}
		if (b)
			emit_record(r, b, rec->rec);
		(*next)++;
	}
	return true;
}

static void *replay_thread(void *arg)
{
	struct replay *r = arg;
	const struct pr_replay_desc *d = r->d;
	uint64_t loops = r->loops ? r->loops : 1;

	for (uint64_t l = 0; l < loops; l++) {
		size_t next = 0;

		if (!checkpoint(r))
			goto out;
		if (!r->itrace_sent && !d->nr_records) {
			send_itrace_start(r);
			r->itrace_sent = true;
		}
		for (size_t i = 0; i < d->nr_chunks; i++) {
			if (l == 0 && !emit_records(r, i, &next))
				goto out;
			if (!play_chunk(r, &d->chunks[i]))
				goto out;
		}
		if (l == 0 && !emit_records(r, SIZE_MAX, &next))
			goto out;
	}
out:
	pthread_mutex_lock(&r->lock);
	r->finished = true;
	r->state = ST_QUIT;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static int rp_cpus(struct pr_source *s, int *cpus, int max)
{
	const struct pr_replay_desc *d = rp(s)->d;
	int n = d->nr_cpus < max ? d->nr_cpus : max;

	memcpy(cpus, d->cpus, (size_t)n * sizeof(int));
	return n;
}

static int rp_event_attr(struct pr_source *s, struct perf_event_attr *attr)
{
	*attr = rp(s)->d->attr;
	return 0;
}

static int rp_add(struct pr_source *s, struct pr_source_buf *b)
{
	struct replay *r = rp(s);

	if (r->nr_bufs == PR_SOURCE_MAX_BUFS || r->thread_started)
		return -EINVAL;
	r->bufs[r->nr_bufs++] = b;
	return 0;
}

static void rp_del(struct pr_source *s, struct pr_source_buf *b)
{
	struct replay *r = rp(s);

	for (int i = 0; i < r->nr_bufs; i++)
		if (r->bufs[i] == b) {
			r->bufs[i] = r->bufs[--r->nr_bufs];
			return;
		}
}

static int rp_setup_aux(struct pr_source *s, struct pr_source_buf *b,
			bool overwrite)
{
	struct perfring_aux_stats st = { .sz = sizeof(st) };

	/* The area must be of the kind the recorder asked for. */
	if (!b->aux || perfring_aux_stats(b->aux, &st) ||
	    st.overwrite != overwrite)
		return -EINVAL;
	rp(s)->overwrite = overwrite;
	return 0;
}

static int rp_start(struct pr_source *s)
{
	struct replay *r = rp(s);
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (r->want != ST_QUIT)
		r->want = ST_RUNNING;
	pthread_cond_broadcast(&r->cond);
	if (!r->thread_started) {
		ret = -pthread_create(&r->thread, NULL, replay_thread, r);
		r->thread_started = !ret;
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

static int rp_stop(struct pr_source *s)
{
	struct replay *r = rp(s);

	pthread_mutex_lock(&r->lock);
	if (r->want == ST_RUNNING)
		r->want = ST_STOPPED;
	pthread_cond_broadcast(&r->cond);
	/* Wait until the thread is parked (or gone): no write in flight. */
	while (r->thread_started && !r->finished && r->state != ST_STOPPED &&
	       r->want == ST_STOPPED)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static int rp_read(struct pr_source *s)
{
	struct replay *r = rp(s);
	int done;

	pthread_mutex_lock(&r->lock);
	done = r->finished;
	pthread_mutex_unlock(&r->lock);
	return done;
}

static int rp_enable(struct pr_source *s, struct pr_source_buf *b)
{
	(void)s;
	return perfring_aux_enable(b->aux);
}

static void rp_destroy(struct pr_source *s)
{
	struct replay *r = rp(s);

	pthread_mutex_lock(&r->lock);
	r->want = ST_QUIT;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (r->thread_started)
		pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->scratch);
	free(r);
	free(s);
}

static const struct pr_source_ops replay_ops = {
	.name = "cs_etm replay",
	.event_attr = rp_event_attr,
	.cpus = rp_cpus,
	.add = rp_add,
	.del = rp_del,
	.setup_aux = rp_setup_aux,
	.start = rp_start,
	.stop = rp_stop,
	.read = rp_read,
	.enable = rp_enable,
	.destroy = rp_destroy,
};

int pr_replay_source_new(const struct pr_replay_desc *d, uint64_t rate,
			 uint64_t loops, struct pr_source **out)
{
	struct pr_source *s;
	struct replay *r;

	*out = NULL;
	if (!d || !d->nr_cpus)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	r = calloc(1, sizeof(*r));
	if (!s || !r) {
		free(s);
		free(r);
		return -ENOMEM;
	}
	r->d = d;
	r->rate = rate;
	r->loops = loops;
	r->want = ST_STOPPED;
	r->state = ST_STOPPED;
	r->nap_ns = 20000;
	if (d->identifier && d->nr_records) {
		r->scratch = malloc(UINT16_MAX + 1);
		if (!r->scratch) {
			free(s);
			free(r);
			return -ENOMEM;
		}
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	s->ops = &replay_ops;
	s->priv = r;
	*out = s;
	return 0;
}

void pr_replay_source_counts(const struct pr_source *s, uint64_t *played,
			     uint64_t *lost)
{
	struct replay *r = rp(s);

	if (played)
		*played = __atomic_load_n(&r->played, __ATOMIC_RELAXED);
	if (lost)
		*lost = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
}
