// SPDX-License-Identifier: MIT
/* The public entry points of the report layer. */
#include <errno.h>
#include "perfring/tools.h"
#include "report.h"

PERFRING_API int perfring_dump(const char *path, FILE *out)
{
	if (!path || !out)
		return -EINVAL;
	return report_dump(path, out);
}

PERFRING_API int perfring_stats(const char *path, FILE *out)
{
	if (!path || !out)
		return -EINVAL;
	return report_stats(path, out);
}
