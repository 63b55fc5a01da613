/* SPDX-License-Identifier: MIT */
/*
 * What libperfring exports to libperfring-tools and to nothing else: the
 * consumer-side steps of the recorder's application sessions
 * (src/sources/app_session.c) that need the ring's own state.  They are
 * global in libperfring.so and libperfring.a under the version node
 * PERFRING_PRIVATE (src/libperfring.map), named perfring__*, and declared
 * in no installed header: the two libraries are built and installed
 * together, and nothing else may call them.
 */
#ifndef PERFRING_RING_PRIVATE_H
#define PERFRING_RING_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "perfring.h"
#include "../common/log.h"

/* Why a ring is dead: its file was truncated under its mapping. */
enum ring_dead_cause {
	RING_ALIVE = 0,
	RING_DEAD_FAULT = 1, /* a bus error in a mapping (guard handler) */
	RING_DEAD_SHRUNK = 2, /* perfring_ring_check() saw the file shrink */
};

/* enum ring_dead_cause of @r (RING_ALIVE if it is not dead). */
PR_PRIVATE_API uint32_t perfring__ring_dead_cause(const struct perfring_ring *r);

/* The writable view of the ring's control-page extension (NULL for a
 * read-only or kernel ring): the recorder takes a gone producer's pending
 * drop count from it. */
PR_PRIVATE_API struct perfring_ext *perfring__ring_ext(struct perfring_ring *r);

/* Whether perfring_sigbus_guard() ran in this process. */
PR_PRIVATE_API bool perfring__ring_guard_installed(void);

/*
 * Opens @name in @dirfd (one path component) without following a link and
 * without opening anything but a @type (S_IFREG, S_IFIFO) object: the type,
 * the owner (@owner, or (uid_t)-1: ours, anyone's if we are root) and the
 * link count (1) are checked on an O_PATH descriptor first, then the same
 * inode is opened with @flags (O_CLOEXEC|O_NOCTTY added; include
 * O_NONBLOCK).  Returns the descriptor, or -errno with the reason in @why.
 */
PR_PRIVATE_API int perfring__ring_openat_checked(int dirfd, const char *name,
						 int flags, unsigned int type,
						 uid_t owner, struct stat *st,
						 char *why, size_t why_len);

/* Attaches like perfring_ring_attachat(); @display names the ring in
 * messages; @why set (quiet): refusals are not logged, their reason goes to @why
 * (at least 256 bytes) so the caller can log each cause once, and
 * the ring's death is not logged either: the caller says it. */
PR_PRIVATE_API int perfring__ring_attachat(int dirfd, const char *name,
					   unsigned int role, uid_t owner,
					   const char *display, char *why,
					   size_t why_len,
					   struct perfring_ring **out);

/* Ends the batch like perfring_read_end() but keeps data_tail where it
 * is: the space is freed by perfring__ring_reader_release(), once what was read is
 * safe elsewhere (the recorder: after the round is written). */
PR_PRIVATE_API void perfring__ring_reader_end_hold(struct perfring_ring *r);
PR_PRIVATE_API void perfring__ring_reader_release(struct perfring_ring *r);

/*
 * From now on the forward batches of @r (a ring in a file) are read with
 * pread() into a private buffer of @chunk bytes (at least
 * PERFRING_RECORD_MAX), refilled as the walk goes, instead of through the
 * mapping; records are handed out from the copy.  The recorder uses it:
 * on a guest with shadow page tables the first read of each page of a
 * new mapping costs microseconds (docs/design.md 4c), and pread() reads
 * through the kernel's mapping instead.  0, -EINVAL (kernel or overwrite
 * ring, chunk too small), -ENOMEM.  A record from perfring_read_next()
 * then stays valid until the next call (which may refill the chunk), not
 * until perfring_read_end(); perfring_read_range() hands out the rest
 * of the chunk, one piece per call, a record possibly cut between two
 * calls, until it returns 0 at the end of the batch.  A file found
 * shorter than the batch is a dead ring (-EFAULT), as a SIGBUS would say.
 * @chunk 0 goes back to reading through the mapping (between batches).
 */
PR_PRIVATE_API int perfring__ring_copy_reads(struct perfring_ring *r,
					     size_t chunk);

/*
 * Touches (reads one byte of) up to @pages more pages of @r's data mapping
 * (both views of a double-mapped ring: the second as far as a record can
 * cross into it), so that reading through it later pays no first-touch
 * cost; the recorder calls it when it would otherwise sleep, then turns
 * copied reads off.  Returns the pages still untouched (0: done), or
 * -EFAULT if the ring died (the SIGBUS guard covers the touch).
 */
PR_PRIVATE_API int64_t perfring__ring_warm(struct perfring_ring *r,
					   size_t pages);

/*
 * The recorder's block walk over a batch (docs/design.md section 7): the
 * bytes of the open batch that lie at one place from the read position on
 * (in the private copy's chunk, or in a double mapping), in @p, without
 * consuming them; 0 when there are none or the ring is read in pieces
 * (perfring_read_next() then).  @dead: the ring's death word (enum
 * ring_dead_cause), to be read with an acquire load after copying from @p
 * (the SIGBUS guard sets it when the file was truncated under the copy);
 * valid until perfring_read_end().  The bytes at @p are the producer's
 * (unless copied): read each header once, copy, then check the copy.
 */
PR_PRIVATE_API size_t perfring__read_peek(struct perfring_ring *r,
					  const unsigned char **p,
					  const uint32_t **dead);

/* Consumes @n bytes of what perfring__read_peek() showed: whole records
 * the caller walked (8-aligned sizes, each within the peek). */
PR_PRIVATE_API void perfring__read_skip(struct perfring_ring *r, size_t n);

#endif /* PERFRING_RING_PRIVATE_H */
