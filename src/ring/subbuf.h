/* SPDX-License-Identifier: MIT */
/*
 * The user-space sub-buffer ring: sub-buffers in the kernel ftrace page
 * format (subbuf_page.h) with a meta page laid out like the kernel's
 * struct trace_buffer_meta (include/uapi/linux/trace_mmap.h).  libc only.
 */
#ifndef PERFRING_RING_SUBBUF_H
#define PERFRING_RING_SUBBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "internal.h"
#include "subbuf_page.h"

/* ---- user-space sub-buffer ring ---------------------------------------- */

struct subbuf_ring;

enum {
	SUBBUF_RING_OVERWRITE = 1, /* overwrite the oldest page when full */
};

/*
 * Creates a ring of @nr_subbufs sub-buffers of @subbuf_size bytes (a power
 * of two, 4 KiB..1 MiB; nr_subbufs >= 3, counting the reader's page) and a
 * meta page.  Returns 0 or -EINVAL/-ENOMEM.
 */
PR_HIDDEN int subbuf_ring_create(uint32_t subbuf_size, uint32_t nr_subbufs,
				 unsigned int flags, struct subbuf_ring **out);
PR_HIDDEN void subbuf_ring_destroy(struct subbuf_ring *r);

/*
 * Writes one event with @size payload bytes copied from @data (any thread;
 * lock-free reserve inside the current page).  @ts is the event's time
 * (monotonic per ring).  Returns 0; -ENOSPC when dropped (producer/consumer
 * mode with no free page, counted); -E2BIG for a payload no page holds.
 */
PR_HIDDEN int subbuf_ring_write(struct subbuf_ring *r, uint64_t ts,
				const void *data, uint32_t size);

/*
 * The GET_READER operation: if the reader page has unconsumed data it is
 * consumed up to the current commit (same id, larger reader.read);
 * otherwise the oldest completed page is swapped out of the ring and
 * becomes the reader page (new id), marked with missed events when pages
 * were overwritten since.  Returns 0 (the meta page says what the reader
 * owns), or -EAGAIN (a writer is crossing to a new page: call again).
 */
PR_HIDDEN int subbuf_ring_get_reader(struct subbuf_ring *r);

/* The meta page (read-only for readers) and sub-buffer @id. */
PR_HIDDEN const struct subbuf_meta *
subbuf_ring_meta(const struct subbuf_ring *r);
PR_HIDDEN const void *subbuf_ring_page(const struct subbuf_ring *r,
				       uint32_t id);

/* Events dropped in producer/consumer mode (the kernel's dropped_events). */
PR_HIDDEN uint64_t subbuf_ring_dropped(const struct subbuf_ring *r);

#endif
