// SPDX-License-Identifier: MIT
/*
 * libperfring's 0.2 names, kept for one release (NEWS.md): thin aliases of
 * the functions that replace them, exported in the version nodes they were
 * released in (src/libperfring.map).  Removed in 0.4.
 */
#include <perfring.h>

PERFRING_API int64_t perfring_reader_begin(struct perfring_ring *ring)
{
	return perfring_read_begin(ring);
}

PERFRING_API int perfring_reader_next(struct perfring_ring *ring,
				      const struct perf_event_header **rec)
{
	return perfring_read_next(ring, rec);
}

PERFRING_API int perfring_reader_range(struct perfring_ring *ring,
				       const void *ptr[2], size_t len[2])
{
	return perfring_read_range(ring, ptr, len);
}

PERFRING_API void perfring_reader_end(struct perfring_ring *ring)
{
	perfring_read_end(ring);
}

PERFRING_API int
perfring_consumer_new(const struct perfring_consumer_opts *opts,
		      struct perfring_consumer **out)
{
	return perfring_consumer_create(opts, out);
}

PERFRING_API void perfring_consumer_free(struct perfring_consumer *c)
{
	perfring_consumer_destroy(c);
}
