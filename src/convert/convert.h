/* SPDX-License-Identifier: MIT */
/*
 * perf data convert (a front end of libperfring-tools, over the perf.data
 * reader): convert.c reads the file in time order and hands each sample
 * (and side-band record) to one writer, ctf.c (CTF 1.8 through
 * libbabeltrace-ctf, as perf 6.1's data-convert-bt.c writes it) or json.c
 * (perf 6.1's data-convert-json.c format).  Both writers start lazily, at
 * the first record they write or at the end: a pipe's attrs, features and
 * tracing data come as records, before its samples.
 */
#ifndef PERFRING_CONVERT_CONVERT_H
#define PERFRING_CONVERT_CONVERT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "../format/perf_reader.h"

struct machine;

/* One sample as a writer sees it: @attr and @id/@period are the read
 * value's for a PERF_SAMPLE_READ group sample (perf delivers one sample
 * per value), the record's otherwise. */
struct conv_sample {
	const struct prd_event *ev;
	const struct prd_sample *s;
	const struct prd_attr *attr;
	uint64_t id, period;
};

/* Figures the writers keep (perfring_convert_stats' counters). */
struct conv_counts {
	uint64_t samples, non_samples, bytes;
	uint64_t dropped; /* events the writer refused */
	uint32_t streams;
};

/* ---- CTF (ctf.c) ---- */
struct ctf_conv;
/*
 * Checks and prepares the output directory @dir: made (mode 0755) if
 * missing; an existing one must be a directory (not a symbolic link) of
 * the caller or root that no one else may write, and loses its previous
 * "metadata" and "perf_stream_*" files.  @all: side-band events; @tod:
 * wall-clock times (CLOCK_DATA).  Returns 0 and *@out, or -errno (logged).
 */
int ctf_conv_new(const char *dir, struct prd_file *f, bool all, bool tod,
		 struct ctf_conv **out);
int ctf_conv_sample(struct ctf_conv *c, const struct conv_sample *cs);
/* A COMM, FORK, EXIT, MMAP or MMAP2 record (with all; others ignored). */
int ctf_conv_side(struct ctf_conv *c, const struct prd_event *ev);
/* Flushes every stream and writes the metadata.  0 or -errno. */
int ctf_conv_finish(struct ctf_conv *c);
const struct conv_counts *ctf_conv_counts(const struct ctf_conv *c);
void ctf_conv_free(struct ctf_conv *c);

/* ---- JSON (json.c) ---- */
struct json_conv;
/* Writes to @out (the caller's); @m resolves the samples' addresses. */
int json_conv_new(FILE *out, struct prd_file *f, struct machine *m,
		  struct json_conv **out_conv);
int json_conv_sample(struct json_conv *j, const struct conv_sample *cs);
/* Closes the document and flushes it.  0 or -errno of the output. */
int json_conv_finish(struct json_conv *j);
const struct conv_counts *json_conv_counts(const struct json_conv *j);
uint64_t json_conv_bytes(const struct json_conv *j);
void json_conv_free(struct json_conv *j);

#endif
