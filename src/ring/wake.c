// SPDX-License-Identifier: MIT
/*
 * Consumer sleep/wake-up.  The consumer marks itself waiting and publishes
 * the head it waits for; producers look at the mark only at watermark
 * crossings (every watermark/4 bytes, every wakeup_events records, or when
 * the ring is full; a gathered MP ring's producers at every commit, with
 * no barrier unless they find it set), so the hot path makes no system call and no full
 * barrier.  The descriptor is an eventfd (memfd rings) or a FIFO next to a
 * named ring, so it sits in poll/epoll beside kernel perf descriptors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

PERFRING_API int perfring_ring_wait_fd(const struct perfring_ring *r)
{
	if (!r)
		return -EINVAL;
	return r->kernel ? r->perf_fd : r->wake_fd;
}

static uint64_t avail_now(struct perfring_ring *r)
{
	if (r->mp_gather)
		return ring_mp_gather(r) - r->c_tail; /* rows U, V */
	/* (C): pairs with (B); we only look at the count here. */
	return smp_load_acquire(&r->pc->data_head) - r->c_tail;
}

/*
 * Gathered MP rings (row V): producers commit with a plain store and then
 * load waiting without a barrier between; membarrier() gives each of them,
 * wherever it runs, a full barrier between our store of waiting and our
 * next look at the slots.  Producers register at attach.
 */
bool ring_membarrier_register(void)
{
	return syscall(__NR_membarrier,
		       MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

static void ring_membarrier(struct perfring_ring *r)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) ==
	    0)
		return;
	/* Kernels without the expedited command have the slow one, which
	 * waits for every CPU to pass a barrier. */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	if (!(r->warned & (1u << RING_WARN_MEMBARRIER))) {
		r->warned |= 1u << RING_WARN_MEMBARRIER;
		pr_warn("ring %s: membarrier() refused (%s): a producer's last commit may wake this consumer late",
			ring_name(r), strerror(errno));
	}
}

/*
 * Takes the mark back when prepare finds the data after all.  A producer
 * may have seen the mark in the meantime (the membarrier of a gathered
 * ring leaves it up for microseconds) and taken it to send a wake-up: that
 * one is read here, so that it does not end the next wait at once.  (A
 * producer between taking the mark and writing can still leave one
 * behind: a spurious wake-up, which costs one more look.)
 */
static void disarm(struct perfring_ring *r)
{
	char buf[64];

	if (xchg(&r->ext->waiting, 0u))
		return; /* nobody took it */
	while (read(r->wake_fd, buf, sizeof(buf)) > 0)
		;
}

PERFRING_API int perfring_ring_wait_prepare(struct perfring_ring *r)
{
	struct perfring_ext *ext;
	uint64_t want, flushes;

	if (!r || !(r->role & PERFRING_ROLE_CONSUMER))
		return -EINVAL;
	if (ring_dead(r))
		return ring_dead_error(r);
	if (r->kernel)
		/* The kernel applies the event's own watermark to poll. */
		return (!(r->mode & PERFRING_MODE_OVERWRITE) && avail_now(r)) ?
			       1 :
			       0;
	if (r->mode & PERFRING_MODE_OVERWRITE)
		return 0; /* read on demand; nothing wakes the reader */
	ext = r->ext;
	want = r->watermark;
	if (avail_now(r) >= want)
		return 1;
	WRITE_ONCE(ext->wakeup_at, r->c_tail + want);
	WRITE_ONCE(ext->waiting, 1u);
	/*
	 * Dekker with ring_wake_check(): waiting before re-reading data_head.
	 * Pairs with the producer's smp_mb() between its data_head store and
	 * its load of waiting.
	 */
	smp_mb();
	if (r->mp_gather)
		ring_membarrier(r);
	if (avail_now(r) >= want) {
		disarm(r);
		return 1;
	}
	/* A flush since we last looked: what it flushed is read now, even
	 * under the watermark (row F with perfring_ring_flush()). */
	flushes = READ_ONCE(ext->flush_seq);
	if (flushes != r->c_flush_seen) {
		r->c_flush_seen = flushes;
		disarm(r);
		return 1;
	}
	return 0;
}

PERFRING_API void perfring_ring_wait_finish(struct perfring_ring *r)
{
	char buf[64];

	if (!r || r->kernel)
		return;
	if (!ring_dead(r))
		WRITE_ONCE(r->ext->waiting, 0u);
	while (read(r->wake_fd, buf, sizeof(buf)) > 0)
		;
}

PERFRING_API int perfring_ring_wait(struct perfring_ring *r, int timeout_ms)
{
	struct pollfd pfd;
	int ret;

	ret = perfring_ring_wait_prepare(r);
	if (ret)
		return ret;
	pfd.fd = perfring_ring_wait_fd(r);
	pfd.events = POLLIN;
	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		ret = -errno;
	perfring_ring_wait_finish(r);
	if (ret < 0)
		return ret;
	if (r->mode & PERFRING_MODE_OVERWRITE)
		return ret > 0;
	if (ring_dead(r))
		return ring_dead_error(r);
	return avail_now(r) ? 1 : 0;
}
