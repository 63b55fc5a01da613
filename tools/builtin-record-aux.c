// SPDX-License-Identifier: MIT
/*
 * perfring record --replay-cs / -e cs_etm// (AUX area trace): the AUX
 * area's data into AUXTRACE records of a perf.data.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void aux_progress(const struct perfring_record_aux_stats *st, void *ctx)
{
	(void)ctx;
	fprintf(stderr,
		"\r[ recording AUX: %.2f MB trace in %" PRIu64
		" chunks, %" PRIu64 " snapshots, %" PRIu64
		" bytes lost ]\033[K",
		(double)st->aux_bytes / 1e6, st->aux_chunks, st->snapshots,
		st->lost_bytes);
}

/* The shared options into the AUX recorder's opts. */
void record_aux_opts_from(const struct record_args *ra,
			  struct perfring_record_aux_opts *o)
{
	o->replay = ra->replay;
	/* the last -e, as it always was */
	o->event = ra->nr_events ? ra->events[ra->nr_events - 1] : NULL;
	o->output = ra->output;
	o->rate = ra->rate;
	o->loops = ra->loops;
	o->chunk = ra->chunk;
	o->replay_cpu = ra->replay_cpu;
	o->aux_bytes = ra->aux_bytes;
	o->data_bytes = ra->mmap_bytes;
	o->snapshot = ra->snapshot;
	o->snapshot_on_exit = ra->snapshot_on_exit;
	o->snapshot_size = ra->snapshot_size;
	o->overwrite = ra->overwrite;
	o->cs_header_version = ra->cs_header_version;
	o->duration = ra->duration;
}

int cmd_record_aux(const struct record_args *ra)
{
	PERFRING_OPTS(perfring_record_aux_opts, o, .control_fd = -1,
		      .replay_cpu = -1);
	struct perfring_record_aux_stats st = { .sz = sizeof(st) };
	bool quiet = ra->quiet;
	int err;

	if (ra->help) {
		record_help(RECORD_AUX);
		return 0;
	}
	record_aux_opts_from(ra, &o);
	o.cmdline_argc = cli_cmdline_argc;
	o.cmdline_argv = cli_cmdline_argv;
	o.control_fd = control_setup(true);
	if (o.control_fd < 0)
		return 1;
	if (!quiet && isatty(STDERR_FILENO))
		o.progress = aux_progress;
	err = perfring_record_aux(&o, &st);
	if (o.progress)
		fprintf(stderr, "\r\033[K");
	if (!quiet && st.sz >= sizeof(st) && !err) {
		fprintf(stderr,
			"[ perfring record: Woken up %" PRIu64
			" times to write data ]\n"
			"[ perfring record: Captured and wrote %.3f MB %s (%.3f MB AUX trace in %" PRIu64
			" AUXTRACE chunks, %" PRIu64
			" PERF_RECORD_AUX, %" PRIu64 " truncated, %" PRIu64
			" bytes lost, %" PRIu64 " snapshots) ]\n",
			st.wakeups, (double)st.bytes / 1e6,
			o.output ? o.output : "perf.data",
			(double)st.aux_bytes / 1e6, st.aux_chunks,
			st.aux_records, st.truncated, st.lost_bytes,
			st.snapshots);
	}
	return err ? 1 : 0;
}

void record_aux_part_summary(const struct perfring_record_aux_stats *st)
{
	fprintf(stderr,
		"[ perfring record: AUX: %.3f MB trace in %" PRIu64
		" AUXTRACE chunks, %" PRIu64 " PERF_RECORD_AUX, %" PRIu64
		" truncated, %" PRIu64 " bytes lost ]\n",
		(double)st->aux_bytes / 1e6, st->aux_chunks, st->aux_records,
		st->truncated, st->lost_bytes);
	if (st->lost_bytes)
		fprintf(stderr,
			"Warning: %" PRIu64
			" bytes of AUX trace were lost (the area was full): use a larger -m ,AUX or a lower --rate.\n",
			st->lost_bytes);
}
