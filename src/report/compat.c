// SPDX-License-Identifier: MIT
/*
 * libperfring-tools' 0.2 names of the perf.data reader, kept for one
 * release (NEWS.md): thin aliases of perfring_data_*, exported in the
 * version node they were released in (src/libperfring-tools.map).
 * Removed in 0.4.
 */
#include <perfring/tools.h>

PERFRING_API int perfring_reader_open(const struct perfring_script_opts *opts,
				      struct perfring_data **out)
{
	return perfring_data_open(opts, out);
}

PERFRING_API int perfring_reader_run(struct perfring_data *r,
				     perfring_sample_fn fn, void *ctx)
{
	return perfring_data_run(r, fn, ctx);
}

PERFRING_API int perfring_reader_field(struct perfring_data *r,
				       const struct perfring_sample *s,
				       const char *name, uint64_t *num,
				       char *buf, size_t len)
{
	return perfring_data_field(r, s, name, num, buf, len);
}

PERFRING_API void perfring_reader_close(struct perfring_data *r)
{
	perfring_data_close(r);
}
