// SPDX-License-Identifier: MIT
/* The library's only output channel: a callback the application installs. */
#include <stdarg.h>
#include <stdio.h>
#include "internal.h"

static perfring_log_fn log_fn;
static void *log_ctx;
static enum perfring_log_level log_max = PERFRING_LOG_INFO;

PERFRING_API void perfring_set_log(perfring_log_fn fn, void *ctx,
				   enum perfring_log_level max)
{
	log_fn = fn;
	log_ctx = ctx;
	log_max = max;
}

void perfring__log(enum perfring_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}

PERFRING_API const char *perfring_version(void)
{
#define PR_STR2(x) #x
#define PR_STR(x) PR_STR2(x)
	return PR_STR(PERFRING_VERSION_MAJOR) "." PR_STR(
		PERFRING_VERSION_MINOR) "." PR_STR(PERFRING_VERSION_PATCH);
}
