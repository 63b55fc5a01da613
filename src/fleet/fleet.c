// SPDX-License-Identifier: MIT
/*
 * record --push and perfring push (see fleet.h).
 *
 * Threads: the recorder's thread collects and, at each interval's end,
 * queues the interval to every sink (a reference each: intervals are
 * read-only once queued); each sink's thread encodes what is queued for
 * its store, keeps the request (spool file or memory) and delivers the
 * oldest when its backoff allows.  The queue between them is the only
 * shared state (f->mu); a sink's pending requests are its thread's alone.
 * Bounds: an interval ends early past INTERVAL_MAX_BYTES; a sink's queue
 * holds at most QUEUE_MAX intervals or QUEUE_MAX_BYTES (the oldest is
 * dropped), its pending requests at most spool_bytes (the oldest is
 * dropped, its file removed): memory stays bounded whatever the stores do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../common/log.h"
#include "../common/opts.h"
#include "collect.h"
#include "fleet.h"
#include "sink.h"

#define INTERVAL_MAX_BYTES (32u << 20)
#define QUEUE_MAX 64
#define QUEUE_MAX_BYTES (64u << 20)
#define SPOOL_DEFAULT (256ull << 20)
#define MEMORY_DEFAULT (64ull << 20)
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000

struct fsink {
	struct sink s;
	struct fleet *f;
	pthread_t th;
	bool running;
	struct fleet_profile *q[QUEUE_MAX]; /* under f->mu */
	uint32_t qh, qn;
	size_t qbytes;
	/* the thread's own: */
	struct sink_req *ph, *pt; /* pending, oldest first */
	uint64_t pbytes;
	uint32_t pn;
	char sdir[4096]; /* its spool directory ("": memory) */
	uint64_t seq;
	int64_t next_ms;
	int backoff_ms;
	bool failing, stop_failed;
	bool spool_warned; /* a spool write failed: said once */
	struct perfring_push_sink_stats st; /* under f->mu */
};

struct fleet {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct fsink sinks[PERFRING_PUSH_MAX_SINKS];
	int nr;
	struct fleet_collector *col;
	struct fleet_meta meta;
	char host[256];
	const char *keys[FLEET_MAX_LABELS], *values[FLEET_MAX_LABELS];
	char *label_copy[FLEET_MAX_LABELS];
	int64_t every_ms, next_ms;
	bool stop;
	int64_t deadline;
	uint64_t max_pending;
	uint64_t intervals, samples;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void profile_put(struct fleet_profile *p)
{
	if (p && --p->refs <= 0) {
		fleet_profile_free(p);
		free(p);
	}
}

/* ---- a sink's thread ------------------------------------------------------ */

static void pending_drop_head(struct fsink *k)
{
	struct sink_req *r = k->ph;

	k->ph = r->next;
	if (!k->ph)
		k->pt = NULL;
	k->pbytes -= r->bytes;
	k->pn--;
	if (r->file)
		unlink(r->file);
	sink_req_free(r);
}

static void pending_add(struct fsink *k, struct sink_req *r)
{
	struct fleet *f = k->f;
	uint64_t dropped = 0;

	if (k->sdir[0]) {
		int err = spool_put(k->sdir, k->seq++, r);

		if (err && !k->spool_warned) {
			/* a full disk: the interval waits in memory */
			k->spool_warned = true;
			pr_warn("push: %s: spool %s: %s; intervals wait in memory",
				k->s.name, k->sdir, strerror(-err));
		}
	}
	r->next = NULL;
	if (k->pt)
		k->pt->next = r;
	else
		k->ph = r;
	k->pt = r;
	k->pbytes += r->bytes;
	k->pn++;
	while (k->pbytes > f->max_pending && k->pn > 1) {
		pending_drop_head(k);
		dropped++;
	}
	if (dropped) {
		pthread_mutex_lock(&f->mu);
		k->st.dropped += dropped;
		pthread_mutex_unlock(&f->mu);
		pr_warn("push: %s: %s full (%" PRIu64 " MiB): %" PRIu64
			" oldest intervals dropped",
			k->s.name, k->sdir[0] ? "spool" : "memory queue",
			f->max_pending >> 20, dropped);
	}
}

/* 4xx but a timeout or too many requests: the store refuses this request
 * for what it is; retrying would block every later one. */
static bool refused(int err, int status)
{
	return err == -EPROTO && status >= 400 && status < 500 &&
	       status != 408 && status != 429;
}

static void deliver_head(struct fsink *k)
{
	struct fleet *f = k->f;
	struct sink_req *r = k->ph;
	struct http_response rs;
	char why[160] = "";
	int err = sink_deliver(&k->s, r, &rs, why, sizeof(why));
	int64_t now = now_ms();

	pthread_mutex_lock(&f->mu);
	k->st.last_status = rs.status;
	if (!err) {
		k->st.sent++;
		k->st.sent_bytes += r->bytes;
	} else {
		k->st.failures++;
		snprintf(k->st.last_error, sizeof(k->st.last_error), "%s", why);
		if (refused(err, rs.status))
			k->st.dropped++;
	}
	pthread_mutex_unlock(&f->mu);
	if (!err || refused(err, rs.status)) {
		if (err)
			pr_warn("push: %s: %s: the interval is dropped",
				k->s.name, why);
		else if (k->failing)
			pr_info("push: %s: delivering again", k->s.name);
		pending_drop_head(k);
		k->failing = false;
		k->backoff_ms = 0;
		k->next_ms = 0;
		return;
	}
	if (!k->failing)
		pr_warn("push: %s: %s; retrying, intervals wait %s", k->s.name,
			why, k->sdir[0] ? "in the spool" : "in memory");
	k->failing = true;
	k->backoff_ms = k->backoff_ms ? k->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (k->backoff_ms > BACKOFF_MAX_MS)
		k->backoff_ms = BACKOFF_MAX_MS;
	k->next_ms = now + k->backoff_ms;
	if (f->stop)
		k->stop_failed = true;
}

static void *sink_main(void *arg)
{
	struct fsink *k = arg;
	struct fleet *f = k->f;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		int64_t now, until;
		struct timespec ts;

		if (k->qn) {
			struct fleet_profile *p = k->q[k->qh];
			struct sink_req *r = NULL;
			int err;

			k->qh = (k->qh + 1) % QUEUE_MAX;
			k->qn--;
			k->qbytes -= fleet_profile_bytes(p);
			pthread_mutex_unlock(&f->mu);
			err = sink_encode(&k->s, p, &r);
			if (err)
				pr_warn("push: %s: cannot encode an interval: %s",
					k->s.name, strerror(-err));
			else
				pending_add(k, r);
			pthread_mutex_lock(&f->mu);
			profile_put(p);
			continue;
		}
		now = now_ms();
		/* stopping: one more try each, backoff or not, until one
		 * fails or time is up */
		if (f->stop && (!k->ph || now >= f->deadline || k->stop_failed))
			break;
		if (k->ph && (now >= k->next_ms || f->stop)) {
			pthread_mutex_unlock(&f->mu);
			deliver_head(k);
			pthread_mutex_lock(&f->mu);
			continue;
		}
		until = k->ph ? k->next_ms : now + 1000;
		if (f->stop && f->deadline < until)
			until = f->deadline;
		clock_gettime(CLOCK_REALTIME, &ts);
		until -= now;
		if (until < 1)
			until = 1;
		ts.tv_sec += until / 1000;
		ts.tv_nsec += (long)(until % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* ---- set-up -------------------------------------------------------------- */

static int labels_parse(struct fleet *f, const struct perfring_push_opts *o)
{
	int n = OPTS_GET(o, nr_labels, 0);
	const char *const *v = OPTS_GET(o, labels, NULL);

	if (gethostname(f->host, sizeof(f->host) - 1))
		snprintf(f->host, sizeof(f->host), "unknown");
	f->meta.host = f->host;
	if (n > FLEET_MAX_LABELS) {
		pr_err("--label: at most %d", FLEET_MAX_LABELS);
		return -E2BIG;
	}
	for (int i = 0; i < n; i++) {
		char *c = strdup(v[i]), *eq = c ? strchr(c, '=') : NULL;

		if (!c)
			return -ENOMEM;
		f->label_copy[i] = c;
		if (!eq || eq == c) {
			pr_err("--label %s: takes KEY=VALUE", v[i]);
			return -EINVAL;
		}
		*eq = 0;
		f->keys[i] = c;
		f->values[i] = eq + 1;
		if (!strcmp(c, "host"))
			f->meta.host = eq + 1;
		else if (!strcmp(c, "service"))
			f->meta.service = eq + 1;
	}
	f->meta.keys = f->keys;
	f->meta.values = f->values;
	f->meta.nr_labels = n;
	return 0;
}

static void fleet_free(struct fleet *f)
{
	for (int i = 0; i < f->nr; i++) {
		struct fsink *k = &f->sinks[i];

		while (k->qn) {
			profile_put(k->q[k->qh]);
			k->qh = (k->qh + 1) % QUEUE_MAX;
			k->qn--;
		}
		while (k->ph) {
			struct sink_req *r = k->ph;

			k->ph = r->next;
			sink_req_free(r);
		}
	}
	for (int i = 0; i < FLEET_MAX_LABELS; i++)
		free(f->label_copy[i]);
	fleet_collector_free(f->col);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f);
}

/* The sinks of @o parsed, with their spool directories. */
static int sinks_parse(struct fleet *f, const struct perfring_push_opts *o)
{
	int n = OPTS_GET(o, nr_sinks, 0);
	const char *const *v = OPTS_GET(o, sinks, NULL);
	const char *spool = OPTS_GET(o, spool, NULL);
	double t = OPTS_GET(o, timeout, 0.0);
	int timeout_ms = t > 0 ? (int)(t * 1000) : 10000;

	if (n < 1 || n > PERFRING_PUSH_MAX_SINKS || !v) {
		pr_err("--push: 1 to %d sinks", PERFRING_PUSH_MAX_SINKS);
		return -EINVAL;
	}
	f->max_pending = OPTS_GET(o, spool_bytes, 0);
	if (!f->max_pending)
		f->max_pending = spool ? SPOOL_DEFAULT : MEMORY_DEFAULT;
	for (int i = 0; i < n; i++) {
		struct fsink *k = &f->sinks[i];
		int err = sink_parse(v[i], timeout_ms, &k->s);

		if (err)
			return err;
		k->f = f;
		memcpy(k->st.name, k->s.name, sizeof(k->st.name));
		if (spool)
			spool_dir_of(&k->s, spool, k->sdir, sizeof(k->sdir));
		f->nr++;
	}
	return 0;
}

int fleet_open(const struct perfring_push_opts *o, int clockid,
	       struct fleet **out)
{
	struct fleet *f = calloc(1, sizeof(*f));
	double every = OPTS_GET(o, every, 0.0);
	const char *spool = OPTS_GET(o, spool, NULL);
	int err;

	if (!f)
		return -ENOMEM;
	if (!OPTS_VALID(o)) {
		free(f);
		return -EINVAL;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->every_ms = every > 0 ? (int64_t)(every * 1000 + 0.5) : 10000;
	if (f->every_ms < 100)
		f->every_ms = 100;
	f->next_ms = now_ms() + f->every_ms;
	err = labels_parse(f, o);
	if (!err)
		err = sinks_parse(f, o);
	if (!err && spool && mkdir(spool, 0700) && errno != EEXIST) {
		err = -errno;
		pr_err("--spool %s: %s", spool, strerror(errno));
	}
	if (!err)
		err = fleet_collector_new(&f->meta, clockid, &f->col);
	for (int i = 0; i < f->nr && !err; i++) {
		struct fsink *k = &f->sinks[i];

		/* what an earlier recording left for this sink goes first */
		if (k->sdir[0])
			spool_scan(spool, k->s.kind, k->sdir, &k->ph, &k->pt,
				   &k->pbytes, &k->pn);
		err = -pthread_create(&k->th, NULL, sink_main, k);
		k->running = !err;
	}
	if (err) {
		pthread_mutex_lock(&f->mu);
		f->stop = true;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
		for (int i = 0; i < f->nr; i++)
			if (f->sinks[i].running)
				pthread_join(f->sinks[i].th, NULL);
		fleet_free(f);
		return err;
	}
	*out = f;
	return 0;
}

int fleet_add_event(struct fleet *f, const struct perf_event_attr *a,
		    const char *name, const uint64_t *ids, uint32_t nr_ids)
{
	return fleet_collector_add_event(f->col, a, name, ids, nr_ids);
}

void fleet_feed(struct fleet *f, const void *rec, size_t size)
{
	fleet_collector_feed(f->col, rec, size);
}

int fleet_synth_sink(void *ctx, const void *rec, size_t size)
{
	fleet_feed(ctx, rec, size);
	return 0;
}

void fleet_feed_pieces(struct fleet *f, const void *const ptr[2],
		       const size_t len[2], int pieces, size_t off, size_t size)
{
	fleet_collector_queue(f->col, ptr, len, pieces, off, size);
}

/* The interval so far to every sink. */
static void interval_end(struct fleet *f)
{
	struct fleet_profile *p = fleet_collector_take(f->col);

	if (!p)
		return;
	if (!p->nr_samples) {
		fleet_profile_free(p);
		free(p);
		return;
	}
	p->seq = f->intervals++;
	f->samples += p->nr_samples;
	pthread_mutex_lock(&f->mu);
	p->refs = f->nr;
	for (int i = 0; i < f->nr; i++) {
		struct fsink *k = &f->sinks[i];
		size_t b = fleet_profile_bytes(p);

		while (k->qn && (k->qn == QUEUE_MAX ||
				 k->qbytes + b > QUEUE_MAX_BYTES)) {
			struct fleet_profile *old = k->q[k->qh];

			k->qh = (k->qh + 1) % QUEUE_MAX;
			k->qn--;
			k->qbytes -= fleet_profile_bytes(old);
			k->st.dropped++;
			profile_put(old);
		}
		k->q[(k->qh + k->qn) % QUEUE_MAX] = p;
		k->qn++;
		k->qbytes += b;
		k->st.intervals++;
	}
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

bool fleet_tick(struct fleet *f)
{
	int64_t now = now_ms();

	fleet_collector_round(f->col, false);
	if (now >= f->next_ms ||
	    fleet_collector_bytes(f->col) > INTERVAL_MAX_BYTES) {
		interval_end(f);
		/* on the grid from the start, not drifting with the passes */
		f->next_ms += f->every_ms;
		if (f->next_ms <= now)
			f->next_ms = now + f->every_ms;
	}
	if (fleet_collector_stale(f->col)) {
		if (fleet_collector_reset(f->col))
			pr_warn("push: cannot rebuild the thread tables: out of memory");
		return true;
	}
	return false;
}

void fleet_close(struct fleet *f, struct perfring_push_stats *st_out)
{
	struct perfring_push_stats st = { .sz = sizeof(st) };
	struct fleet_collect_stats cs;
	int64_t timeout = f->nr ? f->sinks[0].s.timeout_ms : 0;

	fleet_collector_round(f->col, true);
	interval_end(f);
	pthread_mutex_lock(&f->mu);
	f->stop = true;
	f->deadline = now_ms() + timeout + 2000;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	for (int i = 0; i < f->nr; i++)
		if (f->sinks[i].running)
			pthread_join(f->sinks[i].th, NULL);
	fleet_collector_stats(f->col, &cs);
	st.intervals = f->intervals;
	st.samples = f->samples;
	st.bad_samples = cs.bad_samples + cs.unknown_id;
	st.resets = cs.resets;
	st.nr_sinks = (uint32_t)f->nr;
	for (int i = 0; i < f->nr; i++) {
		struct fsink *k = &f->sinks[i];

		st.sink[i] = k->st;
		if (k->sdir[0])
			st.sink[i].pending = k->pn;
		else
			st.sink[i].dropped += k->pn;
	}
	if (st_out)
		OPTS_FILL(st_out, &st);
	fleet_free(f);
}

/* ---- perfring push --spool ---------------------------------------------- */

PERFRING_API int perfring_push(const struct perfring_push_opts *o,
			       struct perfring_push_stats *st_out)
{
	struct perfring_push_stats st = { .sz = sizeof(st) };
	const char *spool = OPTS_GET(o, spool, NULL);
	struct fleet *f;
	uint64_t left = 0;
	int err;

	if (!o || !OPTS_VALID(o) || !spool)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	err = sinks_parse(f, o);
	for (int i = 0; i < f->nr && !err; i++) {
		struct fsink *k = &f->sinks[i];

		err = spool_scan(spool, k->s.kind, NULL, &k->ph, &k->pt,
				 &k->pbytes, &k->pn);
		if (err) {
			pr_err("push: --spool %s: %s", spool, strerror(-err));
			break;
		}
		k->st.intervals = k->pn;
		while (k->ph && !k->failing)
			deliver_head(k);
		left += k->pn;
	}
	for (int i = 0; i < f->nr; i++) {
		st.sink[i] = f->sinks[i].st;
		st.sink[i].pending = f->sinks[i].pn;
	}
	st.nr_sinks = (uint32_t)f->nr;
	if (st_out)
		OPTS_FILL(st_out, &st);
	fleet_free(f);
	return err ? err : left ? -EAGAIN : 0;
}
