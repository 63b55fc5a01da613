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

/* Ends the batch like perfring_reader_end() but keeps data_tail where it
 * is: the space is freed by perfring__ring_reader_release(), once what was read is
 * safe elsewhere (the recorder: after the round is written). */
PR_PRIVATE_API void perfring__ring_reader_end_hold(struct perfring_ring *r);
PR_PRIVATE_API void perfring__ring_reader_release(struct perfring_ring *r);

#endif /* PERFRING_RING_PRIVATE_H */
