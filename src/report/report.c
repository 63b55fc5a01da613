// SPDX-License-Identifier: MIT
/* The public entry points of the report layer. */
#include <errno.h>
#include "perfring/tools.h"
#include "../common/opts.h"
#include "report.h"

PERFRING_API int perfring_dump(const char *path, FILE *out)
{
	if (!path || !out)
		return -EINVAL;
	return report_dump(path, out, false);
}

PERFRING_API int perfring_dump_opts(const struct perfring_dump_opts *opts,
				    FILE *out)
{
	struct perfring_dump_opts o;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	OPTS_COPY(&o, opts);
	return report_dump(o.input ? o.input : "perf.data", out, o.hex);
}

PERFRING_API int perfring_stats(const char *path, FILE *out)
{
	if (!path || !out)
		return -EINVAL;
	return report_stats(path, out);
}
