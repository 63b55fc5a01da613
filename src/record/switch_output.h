/* SPDX-License-Identifier: MIT */
/*
 * --switch-output, as perf record does it: the output is completed and
 * renamed <output>.<YYYYmmddHHMMSScc> (local time, centiseconds: perf's
 * fetch_current_timestamp()), and recording goes on into a new <output>
 * that starts with the synthesized state again.  When: on the control
 * pipe's 's' (SIGUSR2 in the CLI), every so many bytes of data, every so
 * many seconds; the last file is renamed at the end too.
 */
#ifndef PERFRING_RECORD_SWITCH_OUTPUT_H
#define PERFRING_RECORD_SWITCH_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct switch_output {
	bool on;
	bool signal; /* on 's' */
	uint64_t bytes; /* data bytes per file (0: no limit) */
	uint64_t every_ms; /* (0: no limit) */
	uint64_t started_ms; /* the current file's start */
	unsigned files; /* renamed so far */
};

/* Due by size or time (now_ms on CLOCK_MONOTONIC)? */
bool switch_output_due(const struct switch_output *so, uint64_t data_bytes,
		       uint64_t now_ms);

/* Renames @path to @path.<timestamp> (its name into @out, @len bytes);
 * a name taken already gets a ".N" suffix rather than being replaced.
 * Returns 0 or -errno. */
int switch_output_rename(const char *path, char *out, size_t len);

#endif
