/* SPDX-License-Identifier: MIT */
/*
 * report and export of a fleet's samples read back from a store
 * (--from clickhouse=URL --where SQL; report layer over src/fleet/): the
 * same tables and files as of a perf.data, made from the store's
 * symbolized stacks instead of addresses.
 */
#ifndef PERFRING_REPORT_FLEET_REPORT_H
#define PERFRING_REPORT_FLEET_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "perfring/tools.h"

/* perfring report --from: the self overhead of the leaf frames. */
int fleet_report_run(const struct perfring_report_opts *o, FILE *out);
/* export -f pprof --from: the samples as one gzip pprof profile. */
int fleet_export_pprof(const char *from, const char *where, FILE *out);
/* export -f folded|svg --from: each distinct stack as export's folded
 * key ("comm;root;...;leaf", kernel frames "_[k]") and its samples. */
typedef int (*fleet_stack_fn)(void *ctx, const char *key, size_t len,
			      uint64_t count);
int fleet_export_stacks(const char *from, const char *where, fleet_stack_fn fn,
			void *ctx);

#endif
