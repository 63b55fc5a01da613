/* SPDX-License-Identifier: MIT */
/*
 * Logging, for every layer: the messages go to the callback the
 * application installed with perfring_set_log() (src/ring/log.c).  Files
 * that only log include this and nothing of the ring's internals.
 *
 * The callback lives in libperfring; libperfring-tools reaches it through
 * perfring__log(), which libperfring exports for it alone (version node
 * PERFRING_PRIVATE, not in any public header), so both libraries log
 * through the one callback.
 */
#ifndef PERFRING_COMMON_LOG_H
#define PERFRING_COMMON_LOG_H

#include "perfring.h"

#define PR_HIDDEN __attribute__((visibility("hidden")))
#define PR_PRINTF(a, b) __attribute__((format(printf, a, b)))
/* Exported by libperfring for libperfring-tools only (PERFRING_PRIVATE). */
#define PR_PRIVATE_API __attribute__((visibility("default")))

PR_PRIVATE_API void perfring__log(enum perfring_log_level level,
				  const char *fmt, ...) PR_PRINTF(2, 3);
#define pr_log(...) perfring__log(__VA_ARGS__)
#define pr_err(...) perfring__log(PERFRING_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) perfring__log(PERFRING_LOG_WARN, __VA_ARGS__)
#define pr_info(...) perfring__log(PERFRING_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) perfring__log(PERFRING_LOG_DEBUG, __VA_ARGS__)

#endif /* PERFRING_COMMON_LOG_H */
