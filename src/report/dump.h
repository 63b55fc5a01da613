/* SPDX-License-Identifier: MIT */
/*
 * `perfring dump`: every record of a perf.data, as perf report -D shows it,
 * and one record as perf_event__fprintf() prints it (script's side band).
 */
#ifndef PERFRING_REPORT_DUMP_H
#define PERFRING_REPORT_DUMP_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Every record of @path ("-": standard input) with its offset, size, type
 * and decoded fields, in file order, like `perf report -D`; @hex: each
 * after perf -D's raw block (offset@file, type, the bytes in hex).  Returns 0 or
 * -errno; on damage everything before it is printed and -EBADMSG returned
 * (the log says where).
 */
int report_dump(const char *path, FILE *out, bool hex);

struct prd_file;
struct prd_event;
/*
 * A record other than a sample as perf_event__fprintf() prints it (what
 * `perf script --show-task-events` shows after the sample fields, and the
 * dump's text after the offset): "PERF_RECORD_COMM exec: ls:12/12\n".
 * Returns 1 when printed, 0 for a sample or an unknown type, -errno of a
 * write error.
 */
int report_record_text(FILE *out, const struct prd_event *ev);

#endif
