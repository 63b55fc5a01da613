/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST tracepoint provider of `bench emit-vs-lttng`: one event
 * with three u64 fields, the same workload as bench/app_emit.c.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER perfring_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(PERFRING_BENCH_LTTNG_TP_H) || \
	defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PERFRING_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(perfring_bench, ev,
			   LTTNG_UST_TP_ARGS(uint64_t, a, uint64_t, b,
					     uint64_t, c),
			   LTTNG_UST_TP_FIELDS(
				   lttng_ust_field_integer(uint64_t, a, a)
					   lttng_ust_field_integer(uint64_t, b,
								   b)
						   lttng_ust_field_integer(
							   uint64_t, c, c)))

#endif

#include <lttng/tracepoint-event.h>
