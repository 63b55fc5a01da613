/* SPDX-License-Identifier: MIT */
/*
 * The TRACING_DATA blob perf stores for tracepoint events
 * (tools/perf/util/trace-event-info.c): tracefs header_page/header_event,
 * the ftrace and event formats of the recorded tracepoints, kallsyms,
 * printk formats and saved cmdlines.
 */
#ifndef PERFRING_FORMAT_TRACING_DATA_H
#define PERFRING_FORMAT_TRACING_DATA_H

#include <stddef.h>

/*
 * Builds the blob for the tracepoints @events ("system:name" each, @nr of
 * them) from the tracefs mounted at @tracefs (e.g. "/sys/kernel/tracing").
 * On success *out is malloc()ed (caller frees), *len its size; returns 0 or
 * -errno (-ENOENT naming the missing format file through the log).
 */
int tracing_data_build(const char *tracefs, const char *const *events,
		       size_t nr, void **out, size_t *len);

/* A format that does not come from tracefs (an application event's). */
struct td_extra {
	const char *system; /* its "system": the provider */
	const char *format; /* the format file's text */
	size_t len;
};

/* tracing_data_build() plus @nr_extra formats of other systems.  With
 * @tracefs NULL (and no tracepoints) the kernel's header texts are built
 * in: application events recorded without access to tracefs. */
int tracing_data_build_ext(const char *tracefs, const char *const *events,
			   size_t nr, const struct td_extra *extra,
			   size_t nr_extra, void **out, size_t *len);

/* The texts tracefs gives for the page and event headers (events/
 * header_page with the data size as its %u, events/header_event): every
 * 64-bit kernel's since 2.6.31. */
extern const char td_header_page_fmt[];
extern const char td_header_event[];

#endif
