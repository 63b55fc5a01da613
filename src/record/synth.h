/* SPDX-License-Identifier: MIT */
/*
 * Records perf synthesizes at the start of a recording so that samples of
 * threads that already exist can be attributed: COMM, MMAP2 (executable
 * mappings), FORK for non-leader threads, and the kernel's MMAP.
 */
#ifndef PERFRING_RECORD_SYNTH_H
#define PERFRING_RECORD_SYNTH_H

#include <stdint.h>
#include <sys/types.h>
#include "../format/perf_data.h"

struct synth {
	struct pd_writer *w;
	/* Without a writer: each record goes to @sink instead (perfring
	 * top feeds them to its thread and map tables). */
	int (*sink)(void *ctx, const void *rec, size_t size);
	void *sink_ctx;
	uint64_t sample_type; /* of the attrs: decides the sample_id trailer */
	uint64_t id; /* IDENTIFIER/ID put in the trailer */
	uint64_t records; /* written */
};

/* COMM + MMAP2 of process @pid and COMM + FORK of its other threads. */
int synth_process(struct synth *s, pid_t pid);
/* Every process in /proc. */
int synth_all(struct synth *s);
/* MMAP of [kernel.kallsyms]_text at the address of _text. */
int synth_kernel(struct synth *s);

#endif
