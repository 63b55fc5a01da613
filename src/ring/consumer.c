// SPDX-License-Identifier: MIT
/*
 * The consumer object: one epoll set over the wait descriptors of many
 * rings (ours and kernel perf mmaps), one round that reads a batch of each.
 *
 * Every source stays armed between calls (perfring_ring_wait_prepare():
 * waiting flag + wakeup_at, Dekker pair F), so the epoll descriptor works
 * nested in a caller's loop.  A round disarms a source before reading it
 * (producers stop paying for wake-ups while we read anyway), reads one
 * batch, and arms it again; if arming finds the watermark already crossed,
 * or the round stopped before reading every source, the consumer's own
 * eventfd is written so that the next wait returns at once.  Kernel rings
 * need no arming: the kernel's watermark decides when their descriptor is
 * readable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../common/opts.h"
#include "internal.h"

/* epoll_event.data: 0 is the consumer's own eventfd, else index + 1. */
#define SELF_WAKE 0

struct consumer_source {
	struct perfring_ring *ring;
	perfring_record_fn fn;
	void *ctx;
	void *map; /* perfring_consumer_add_perf_fd(): our mapping */
	size_t map_len;
	int wait_fd;
	bool in_epoll;
	bool copy; /* hand out private copies of records */
	bool signalled; /* this round: epoll reported its descriptor */
	bool hung_up; /* epoll reported EPOLLHUP/EPOLLERR */
	int error; /* 0, -EPIPE (hung up), or why it was dropped */
};

struct perfring_consumer {
	int epfd;
	int self_fd; /* eventfd: "a round is due" */
	unsigned int flags;
	struct consumer_source *src;
	unsigned int nr, cap;
	struct epoll_event *events; /* cap + 1 */
	unsigned int next_start; /* round-robin start of the next round */
	unsigned char *copy; /* one record, for sources that copy */
	struct perfring_consumer_stats st;
};

PERFRING_API int
perfring_consumer_create(const struct perfring_consumer_opts *opts,
			 struct perfring_consumer **out)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = SELF_WAKE };
	struct perfring_consumer *c;
	unsigned int flags = 0;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!OPTS_VALID(opts))
		return -EINVAL;
	flags = OPTS_GET(opts, flags, 0);
	if (flags & ~PERFRING_CONSUMER_ZERO_COPY)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->flags = flags;
	c->self_fd = -1;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		goto err;
	c->self_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->self_fd < 0)
		goto err;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->self_fd, &ev) < 0)
		goto err;
	c->events = calloc(1, sizeof(*c->events));
	if (!c->events) {
		errno = ENOMEM;
		goto err;
	}
	*out = c;
	return 0;
err:
	err = -errno;
	perfring_consumer_destroy(c);
	return err;
}

static void self_wake(struct perfring_consumer *c)
{
	uint64_t one = 1;

	/* Cannot fail but on counter overflow, which still leaves it
	 * readable: that is all we want. */
	if (write(c->self_fd, &one, sizeof(one)) < 0)
		return;
}

static void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/*
 * Arms a source for the next wait.  A ring that already holds its
 * watermark's worth (or died) needs a round now: the self eventfd says so.
 */
static void source_arm(struct perfring_consumer *c, struct consumer_source *s)
{
	if (s->ring->kernel || !s->in_epoll)
		return;
	if (perfring_ring_wait_prepare(s->ring) != 0)
		self_wake(c);
}

static void source_disarm(struct consumer_source *s)
{
	struct perfring_ring *r = s->ring;

	if (r->kernel || ring_dead(r))
		return;
	/* Our own mark (wake.c sets it); a producer that already took it
	 * has written the descriptor, which we drain when epoll says so. */
	WRITE_ONCE(r->ext->waiting, 0u);
}

static void source_leave_epoll(struct perfring_consumer *c,
			       struct consumer_source *s)
{
	if (!s->in_epoll)
		return;
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, s->wait_fd, NULL);
	s->in_epoll = false;
}

static void source_drop(struct perfring_consumer *c, struct consumer_source *s,
			int err)
{
	source_leave_epoll(c, s);
	s->error = err;
	c->st.dropped++;
	pr_warn("consumer: source %u (%s) dropped: %s",
		(unsigned int)(s - c->src), ring_name(s->ring), strerror(-err));
}

static int source_add(struct perfring_consumer *c, struct perfring_ring *ring,
		      perfring_record_fn fn, void *ctx, void *map,
		      size_t map_len)
{
	struct consumer_source *s;
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned int idx;
	int fd;

	if (!c || !ring || !fn)
		return -EINVAL;
	if (!(ring->role & PERFRING_ROLE_CONSUMER))
		return -EINVAL;
	if (ring->mode & PERFRING_MODE_OVERWRITE)
		return -EOPNOTSUPP;
	if (ring_dead(ring))
		return ring_dead_error(ring);
	if (c->nr >= INT_MAX - 1)
		return -ENOSPC;
	if (c->nr == c->cap) {
		unsigned int cap = c->cap ? c->cap * 2 : 8;
		struct consumer_source *src;
		struct epoll_event *events;

		src = realloc(c->src, cap * sizeof(*src));
		if (!src)
			return -ENOMEM;
		c->src = src;
		events = realloc(c->events, (cap + 1) * sizeof(*events));
		if (!events)
			return -ENOMEM;
		c->events = events;
		c->cap = cap;
	}
	if (!c->copy && !ring->kernel &&
	    !(c->flags & PERFRING_CONSUMER_ZERO_COPY)) {
		/* A record's size is a u16: 64 KiB holds any of them. */
		c->copy = malloc(1u << 16);
		if (!c->copy)
			return -ENOMEM;
	}
	fd = perfring_ring_wait_fd(ring);
	if (fd < 0)
		return -EINVAL;
	idx = c->nr;
	ev.data.u64 = (uint64_t)idx + 1;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	s = &c->src[idx];
	memset(s, 0, sizeof(*s));
	s->ring = ring;
	s->fn = fn;
	s->ctx = ctx;
	s->map = map;
	s->map_len = map_len;
	s->wait_fd = fd;
	s->in_epoll = true;
	s->copy = !ring->kernel && !(c->flags & PERFRING_CONSUMER_ZERO_COPY);
	c->nr++;
	c->st.sources++;
	source_arm(c, s);
	return (int)idx;
}

PERFRING_API int perfring_consumer_add_ring(struct perfring_consumer *c,
					    struct perfring_ring *ring,
					    perfring_record_fn fn, void *ctx)
{
	return source_add(c, ring, fn, ctx, NULL, 0);
}

PERFRING_API int perfring_consumer_add_perf_fd(struct perfring_consumer *c,
					       int perf_fd, size_t pages,
					       perfring_record_fn fn, void *ctx)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	struct perfring_ring *ring;
	void *base;
	int ret;

	if (!c || perf_fd < 0 || !fn || !is_pow2(pages) ||
	    pages > (SIZE_MAX / page) - 1)
		return -EINVAL;
	len = (pages + 1) * page;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, perf_fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	ret = perfring_ring_wrap_kernel(base, len, perf_fd, false, &ring);
	if (ret < 0) {
		munmap(base, len);
		return ret;
	}
	ret = source_add(c, ring, fn, ctx, base, len);
	if (ret < 0) {
		perfring_ring_destroy(ring);
		munmap(base, len);
	}
	return ret;
}

static void count_record(struct perfring_consumer *c,
			 const struct perf_event_header *rec, size_t size)
{
	c->st.records++;
	if (rec->type == PERF_RECORD_LOST &&
	    size >= sizeof(struct perfring_lost_record)) {
		const struct perfring_lost_record *l = (const void *)rec;

		c->st.lost_records++;
		c->st.lost += l->lost;
	}
}

/*
 * Reads one batch of @s.  Returns 0, or the callback's non-zero value that
 * stopped it (*n counts the records handed out either way), or a negative
 * error the caller must see (-ENOMEM).  A dead ring is dropped here.
 */
static int source_read(struct perfring_consumer *c, struct consumer_source *s,
		       int *n)
{
	struct perfring_ring *r = s->ring;
	const struct perf_event_header *rec;
	int64_t avail;
	int sz, stop = 0, err = 0;

	source_disarm(s);
	if (s->signalled) {
		s->signalled = false;
		c->st.wakeups++;
		if (!r->kernel) /* read(2) on a perf fd reads its count */
			drain(s->wait_fd);
	}
	avail = perfring_read_begin(r);
	if (avail == -EBADMSG) {
		c->st.corrupt++; /* resynchronised; logged by the reader */
		avail = 0;
	}
	if (avail < 0) {
		err = (int)avail;
		goto out;
	}
	while (avail > 0) {
		const struct perf_event_header *p;

		sz = perfring_read_next(r, &rec);
		if (sz == 0)
			break;
		if (sz == -EBADMSG) {
			c->st.corrupt++;
			break;
		}
		if (sz < 0) {
			err = sz;
			break;
		}
		p = rec;
		if (s->copy) {
			memcpy(c->copy, rec, (size_t)sz);
			p = (const struct perf_event_header *)c->copy;
		}
		/* The copy may hold the guard's zeros if the ring died
		 * while we made it: never hand that out. */
		if (ring_dead(r)) {
			err = ring_dead_error(r);
			break;
		}
		count_record(c, p, (size_t)sz);
		if (*n < INT_MAX)
			(*n)++;
		stop = s->fn(p, (size_t)sz, s->ctx);
		if (stop)
			break;
	}
	perfring_read_end(r);
out:
	if (err == -EFAULT) {
		source_drop(c, s, err);
		return stop;
	}
	if (err)
		return err;
	if (s->hung_up && s->in_epoll) {
		/* Read to the end: a hung-up descriptor stays readable and
		 * would turn every wait into a busy loop. */
		source_leave_epoll(c, s);
		s->error = -EPIPE;
		c->st.hung_up++;
	}
	source_arm(c, s);
	return stop;
}

static int round_run(struct perfring_consumer *c, int nev)
{
	unsigned int start = c->next_start, k;
	int n = 0, ret = 0;

	c->st.rounds++;
	for (int i = 0; i < nev; i++) {
		uint64_t id = c->events[i].data.u64;

		if (id == SELF_WAKE) {
			drain(c->self_fd);
			continue;
		}
		if (id - 1 >= c->nr)
			continue;
		c->src[id - 1].signalled = true;
		if (c->events[i].events & (EPOLLHUP | EPOLLERR))
			c->src[id - 1].hung_up = true;
	}
	for (k = 0; k < c->nr; k++) {
		struct consumer_source *s = &c->src[(start + k) % c->nr];

		if (s->error && s->error != -EPIPE)
			continue;
		ret = source_read(c, s, &n);
		if (ret)
			break;
	}
	if (ret && c->nr) {
		/* Stopped early: the sources after this one were not read,
		 * and a kernel descriptor's readiness was consumed by the
		 * wait; start the next round after it, and soon. */
		c->next_start = (start + k + 1) % c->nr;
		self_wake(c);
	}
	return ret < 0 ? ret : n;
}

static int consumer_wait(struct perfring_consumer *c, int timeout_ms)
{
	int nev;

	if (!c)
		return -EINVAL;
	nev = epoll_wait(c->epfd, c->events, (int)c->nr + 1, timeout_ms);
	if (nev < 0) {
		if (errno != EINTR)
			return -errno;
		nev = 0; /* a signal: read what is there and return */
	}
	return round_run(c, nev);
}

PERFRING_API int perfring_consumer_poll(struct perfring_consumer *c,
					int timeout_ms)
{
	return consumer_wait(c, timeout_ms);
}

PERFRING_API int perfring_consumer_consume(struct perfring_consumer *c)
{
	/* A zero-timeout wait only learns which descriptors to drain. */
	return consumer_wait(c, 0);
}

PERFRING_API int perfring_consumer_epoll_fd(const struct perfring_consumer *c)
{
	return c ? c->epfd : -EINVAL;
}

PERFRING_API int
perfring_consumer_source_error(const struct perfring_consumer *c,
			       unsigned int idx)
{
	if (!c || idx >= c->nr)
		return -EINVAL;
	return c->src[idx].error;
}

PERFRING_API int perfring_consumer_stats(const struct perfring_consumer *c,
					 struct perfring_consumer_stats *st)
{
	size_t len;

	if (!c || !st || st->sz < sizeof(size_t))
		return -EINVAL;
	len = st->sz < sizeof(c->st) ? st->sz : sizeof(c->st);
	memcpy((char *)st + sizeof(size_t),
	       (const char *)&c->st + sizeof(size_t), len - sizeof(size_t));
	st->sz = len;
	return 0;
}

PERFRING_API void perfring_consumer_destroy(struct perfring_consumer *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < c->nr; i++) {
		struct consumer_source *s = &c->src[i];

		/* Producers need not wake a consumer that is gone. */
		source_disarm(s);
		if (s->map) {
			perfring_ring_destroy(s->ring);
			munmap(s->map, s->map_len);
		}
	}
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->self_fd >= 0)
		close(c->self_fd);
	free(c->src);
	free(c->events);
	free(c->copy);
	free(c);
}
