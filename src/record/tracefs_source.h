/* SPDX-License-Identifier: MIT */
/*
 * The tracefs source of a recording: a private instance on the mono clock
 * (CLOCK_MONOTONIC, the clock of perf events with use_clockid), its
 * per-CPU mapped buffers, and the trace.dat they go into.  Used alone by
 * perfring_record_tracefs() and beside the kernel perf rings and the
 * application rings by perfring_record(), in a session's loop
 * (tfs_source_ops).
 */
#ifndef PERFRING_RECORD_TRACEFS_SOURCE_H
#define PERFRING_RECORD_TRACEFS_SOURCE_H

#include <stdbool.h>
#include "perfring/tools.h"
#include "../sources/session.h"

struct tfs_source;

/* Instance made, buffers opened, trace.dat begun; tracing off. */
int tfs_source_open(const struct perfring_tracefs_opts *o,
		    struct perfring_tracefs_stats *st, struct tfs_source **out);
/* Unless all tasks are recorded: keep only @pids ("1 2") and children. */
int tfs_source_follow(struct tfs_source *s, const char *pids);
int tfs_source_start(struct tfs_source *s);
int tfs_source_nr_cpus(const struct tfs_source *s);
int tfs_source_fd(const struct tfs_source *s, int cpu);
int tfs_source_drain(struct tfs_source *s, int cpu, bool final);
void tfs_source_stats(struct tfs_source *s);
/* The first error of its ready() in a session's loop, or 0. */
int tfs_source_error(const struct tfs_source *s);
/* The source in a session (ctx: the struct tfs_source): a CPU's
 * descriptor waking drains its full pages. */
extern const struct rec_source_ops tfs_source_ops;
int tfs_source_finish(struct tfs_source *s, int err);
/* --switch-output: this file completed as @done_path, a new one begun. */
int tfs_source_switch(struct tfs_source *s, const char *done_path);
int tfs_source_close(struct tfs_source *s, int err);

#endif
