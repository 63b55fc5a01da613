// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the perf.data reader over arbitrary bytes.
 *
 * The input is written to a memfd and read four ways: as a file (opened by
 * its /proc/self/fd path) in file order and then time-ordered with a small
 * queue limit (so early flushes run), as a stream (read(), never seeking:
 * the pipe-format path), and through the dump, stats and report --tasks
 * / --mmaps reports.  Every
 * pointer a decoded sample carries is read in full, so ASan sees any that
 * points outside the record.  Seeds: fuzz/corpus/perf_data/ (files of
 * perf record and perfring record, pipe and file format, and damaged
 * copies).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "format/perf_reader.h"
#include "report/dump.h"
#include "report/stats.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static uint64_t sum_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < len; i++)
		s += b[i];
	return s;
}

static int touch(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	const struct prd_sample *s = ev->sample;
	uint64_t acc = sum_bytes(ev->hdr, ev->hdr->size);

	(void)ctx;
	acc += prd_payload_size(f, ev);
	if (s) {
		acc += s->pid + s->tid + s->time + s->id + s->cpu;
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			acc += s->callchain[i];
		acc += sum_bytes(s->raw, s->raw ? s->raw_size : 0);
		acc += sum_bytes(s->read, s->read ? s->read_size : 0);
		if (s->branch_stack)
			acc += sum_bytes(s->branch_stack,
					 8 + 24 * s->nr_branches);
		for (uint32_t i = 0; i < s->nr_regs_user; i++)
			acc += s->regs_user[i];
		for (uint32_t i = 0; i < s->nr_regs_intr; i++)
			acc += s->regs_intr[i];
		if (s->stack_user)
			acc += sum_bytes(s->stack_user, s->stack_user_size);
		if (s->aux)
			acc += sum_bytes(s->aux, s->aux_size);
		if (s->attr && s->attr->name)
			acc += strlen(s->attr->name);
	}
	sink += acc;
	return 0;
}

static void inspect(const struct prd_file *f)
{
	size_t len;

	for (uint32_t i = 0; i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);

		sink += strlen(a->name) + a->nr_samples +
			prd_attr_lost_samples(f, i);
		for (uint32_t k = 0; k < a->nr_ids; k++)
			sink += a->ids[k] +
				(prd_attr_by_id(f, a->ids[k]) != NULL);
	}
	for (int feat = 0; feat < PRD_FEAT_BITS; feat++) {
		const void *p = prd_feature(f, feat, &len);
		const char *s = prd_feature_string(f, feat);

		if (p)
			sink += sum_bytes(p, len);
		if (s)
			sink += strlen(s);
		sink += prd_has_feature(f, feat);
	}
	for (uint32_t t = 0; t < 128; t++)
		sink += prd_type_counts(f)[t];
	sink += prd_stats(f)->nr_records + prd_data_size(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prd_file *f;
	char path[64];
	FILE *devnull;
	int fd;

	fd = fuzz_file("fuzz-perf-data", data, size, path);
	if (fd < 0)
		abort();

	if (prd_open(path, &f) == 0) {
		prd_process(f, false, touch, NULL);
		inspect(f);
		prd_set_queue_limit(f, 0); /* the minimum: early flushes */
		prd_process(f, true, touch, NULL);
		prd_process(f, false, NULL, NULL);
		inspect(f);
		prd_close(f);
	}

	if (lseek(fd, 0, SEEK_SET) == 0 &&
	    prd_open_fd(fd, "fuzz-stream", true, &f) == 0) {
		prd_process(f, true, touch, NULL);
		inspect(f);
		if (prd_process(f, false, NULL, NULL) != -EINVAL)
			abort(); /* a stream runs once */
		prd_close(f);
	}

	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	report_dump(path, devnull, size & 1); /* --hex on odd sizes */
	report_stats(path, devnull);
	{
		/* script's side-band lines and filters; no ip/sym fields, so
		 * no object a hostile MMAP names is opened */
		PERFRING_OPTS(
			perfring_script_opts, so, .input = path,
			.fields = "comm,pid,tid,cpu,time,event,period",
			.show_task_events = true, .show_mmap_events = true,
			.comm_list = size & 2 ? "a,b" : NULL,
			.time_range = size & 4 ? "0.5," : NULL,
			.reltime = size & 8, .deltatime = size & 16,
			.show_lost_events = true, .show_switch_events = true,
			.show_namespace_events = true,
			.show_cgroup_events = true, .show_bpf_events = true,
			.show_text_poke_events = true,
			.show_round_events = size & 32);

		perfring_script(&so, devnull);
	}
	{
		/* report --tasks / --mmaps: the thread tree of hostile FORKs
		 * (cycles, any depth) and the maps; no symbols are read */
		PERFRING_OPTS(perfring_report_opts, ro, .input = path,
			      .tasks = true, .mmaps = size & 2);

		perfring_report(&ro, devnull);
	}
	fclose(devnull);
	close(fd);
	return 0;
}
