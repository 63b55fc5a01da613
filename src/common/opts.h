/* SPDX-License-Identifier: MIT */
/*
 * The options convention of both libraries, defined once (libbpf's
 * OPTS_VALID, OPTS_HAS, OPTS_GET).  Every opts and stats struct starts
 * with size_t sz: the size of the struct the caller was built with.
 *
 * Opts (in): a field past the caller's sz reads as its default, so a
 * caller built against an older, smaller struct keeps working.  A caller
 * built against a newer, larger struct is accepted only if every byte
 * this library does not know is zero: a nonzero one asks for something
 * this library cannot do, and the call fails with -EINVAL.
 *
 * Stats (out): filled as far as the caller's sz reaches; sz then says how
 * much was filled.
 */
#ifndef PERFRING_COMMON_OPTS_H
#define PERFRING_COMMON_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool opts_tail_zero(const void *opts, size_t known, size_t sz)
{
	const unsigned char *p = opts;

	for (size_t i = known; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

/* @o (NULL allowed) covers at least its sz and has no unknown setting. */
#define OPTS_VALID(o)                          \
	(!(o) || ((o)->sz >= sizeof(size_t) && \
		  opts_tail_zero((o), sizeof(*(o)), (o)->sz)))

/* The caller's struct reaches field @f of @o (NULL: it does not). */
#define OPTS_HAS(o, f) \
	((o) && (o)->sz >= offsetof(__typeof__(*(o)), f) + sizeof((o)->f))

/* Field @f of @o, or @def when the caller's struct does not reach it. */
#define OPTS_GET(o, f, def) (OPTS_HAS(o, f) ? (o)->f : (def))

/* The same, where a zero field also means the default. */
#define OPTS_GET_NZ(o, f, def) (OPTS_HAS(o, f) && (o)->f ? (o)->f : (def))

/*
 * Copies the caller's opts @src into the library's own struct @dst (zeroed
 * first) as far as the caller's sz reaches: every field read afterwards is
 * the caller's or zero, never beyond the caller's struct.
 */
#define OPTS_COPY(dst, src)                                          \
	do {                                                         \
		memset((dst), 0, sizeof(*(dst)));                    \
		memcpy((dst), (src),                                 \
		       (src)->sz < sizeof(*(dst)) ? (src)->sz :      \
						    sizeof(*(dst))); \
	} while (0)

/*
 * Copies the @full_sz bytes at @full (whose first member is sz) into the
 * caller's stats @out as far as @out's sz reaches (at most @full_sz) and
 * sets @out's sz to the bytes filled.
 */
static inline void opts_fill(void *out, const void *full, size_t full_sz)
{
	size_t sz;

	memcpy(&sz, out, sizeof(sz));
	if (sz > full_sz)
		sz = full_sz;
	memcpy(out, full, sz);
	memcpy(out, &sz, sizeof(sz));
}
#define OPTS_FILL(out, full) opts_fill((out), (full), sizeof(*(full)))

#endif /* PERFRING_COMMON_OPTS_H */
