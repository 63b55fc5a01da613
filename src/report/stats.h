/* SPDX-License-Identifier: MIT */
/*
 * `perfring stats` and `report --stats`: record counts as perf report --stats.
 */
#ifndef PERFRING_REPORT_STATS_H
#define PERFRING_REPORT_STATS_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Record counts per type, samples and lost samples per event, lost events
 * and lost samples, like `perf report --stats`.  On damage the counts of
 * what was read are printed and -EBADMSG returned.
 */
int report_stats(const char *path, FILE *out);
/* perf report --stats: the same without the lost and damage lines. */
int report_stats_perf(const char *path, FILE *out);

#endif
