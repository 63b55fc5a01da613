// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the header block printers (perf script/report --header,
 * -I) and report -T's READ table over arbitrary bytes.
 *
 * The first byte picks what the rest is: 1..31, one feature section of
 * that number, printed with every section parser in full (-I); 0, a
 * perf.data: opened as a file (the header block, then its records with
 * the READ table) and as a stream (the pipe format's FEATURE records
 * printed as they come).  Output goes to /dev/null; ASan sees any read
 * outside a section.  Seeds: fuzz/corpus/header/ (the sections of files
 * of perf record and perfring record, with -I topology, groups, -k, -z,
 * -s, and small whole files).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "format/perf_reader.h"
#include "format/header_print.h"
#include "format/thread_stats.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ctx {
	struct thread_stats *ts;
	FILE *out;
};

static int on_event(struct prd_file *f, const struct prd_event *ev, void *p)
{
	struct ctx *c = p;

	header_print_feature_record(f, ev, true, c->out);
	return thread_stats_add(c->ts, f, ev);
}

static void as_file(const uint8_t *data, size_t size, bool stream, FILE *out)
{
	char path[64];
	struct prd_file *f = NULL;
	struct ctx c = { NULL, out };
	int fd = fuzz_file("header", data, size, path);

	if (fd < 0)
		return;
	if (stream && lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return;
	}
	if (!(stream ? prd_open_fd(fd, "fuzz", true, &f) :
		       prd_open(path, &f))) {
		header_print(f, true, out);
		header_print(f, false, out);
		if (!thread_stats_new(&c.ts)) {
			prd_process(f, true, on_event, &c);
			thread_stats_print(c.ts, f, out);
			thread_stats_free(c.ts);
		}
		prd_close(f);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *out;
	unsigned char *copy;

	if (!out) {
		out = fopen("/dev/null", "w");
		if (!out)
			return 0;
	}
	if (!size)
		return 0;
	if (data[0]) {
		/* An exact-size copy: a read past the section is ASan's. */
		copy = malloc(size - 1 ? size - 1 : 1);
		if (!copy)
			return 0;
		memcpy(copy, data + 1, size - 1);
		header_print_section(NULL, data[0] & 31, copy, size - 1, true,
				     out);
		header_print_section(NULL, data[0] & 31, copy, size - 1, false,
				     out);
		free(copy);
		return 0;
	}
	as_file(data + 1, size - 1, false, out);
	as_file(data + 1, size - 1, true, out);
	return 0;
}
