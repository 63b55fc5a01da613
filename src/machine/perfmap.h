/* SPDX-License-Identifier: MIT */
/*
 * perf's JIT symbol maps, /tmp/perf-PID.map: one "START SIZE NAME" line
 * per symbol, START and SIZE in hex (an optional 0x), as a JIT (V8, the
 * JVM's perf-map-agent, LuaJIT...) writes them for its anonymous code.
 * The file is another program's: every line is checked, a bad one
 * skipped and counted.
 */
#ifndef PERFRING_MACHINE_PERFMAP_H
#define PERFRING_MACHINE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#define PERFMAP_MAX_BYTES (256u << 20) /* larger files are read this far */

/* Called per good line; @name is NUL-terminated (the line's copy).
 * Returns 0 to go on, or -errno to stop the parse with it. */
typedef int (*perfmap_sym_fn)(uint64_t start, uint64_t size, const char *name,
			      void *ctx);

/* Parses @len bytes.  Returns the number of lines skipped as malformed
 * (>= 0), or the callback's -errno. */
int perfmap_parse(const char *buf, size_t len, perfmap_sym_fn fn, void *ctx);

/* Reads /tmp/perf-@pid.map-like file @path into a malloc'ed buffer when
 * it is a regular file (not through a symbolic link) owned by root or by
 * us, as perf requires.  Returns 0 or -errno. */
int perfmap_read(const char *path, char **buf, size_t *len);

#endif
