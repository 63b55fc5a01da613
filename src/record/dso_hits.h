/* SPDX-License-Identifier: MIT */
/*
 * The DSOs that samples hit, for HEADER_BUILD_ID: perf record finds them
 * after recording by processing the file (process_buildids); here the
 * records are followed as they go to the file (MMAP, MMAP2, FORK, exec
 * COMMs and samples), and the build-ids of the DSOs hit are read at the
 * end.  Records come from the kernel and are checked all the same.
 */
#ifndef PERFRING_RECORD_DSO_HITS_H
#define PERFRING_RECORD_DSO_HITS_H

#include <stddef.h>
#include <stdint.h>
#include "../format/perf_data.h"

struct dso_hits;

/* @sample_type: the kernel events' (IDENTIFIER, IP and TID first). */
struct dso_hits *dso_hits_new(uint64_t sample_type);
void dso_hits_free(struct dso_hits *h);

/* One whole record at @rec. */
void dso_hits_note(struct dso_hits *h, const void *rec, size_t size);

/* The record of @size bytes at @off of a ring range in two pieces. */
void dso_hits_note_pieces(struct dso_hits *h, const void *const ptr[2],
			  const size_t len[2], int pieces, size_t off,
			  size_t size);

/* The build-ids of the DSOs hit (and of [vdso] once mapped, as perf
 * writes it) into the writer's HEADER_BUILD_ID.  Returns how many. */
int dso_hits_write(struct dso_hits *h, struct pd_writer *w);

#endif
