// SPDX-License-Identifier: MIT
/* perfring record --tracefs: ftrace's mapped buffers into trace.dat. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

static void tracefs_progress(const struct perfring_tracefs_stats *st, void *ctx)
{
	(void)ctx;
	fprintf(stderr,
		"\r[ recording: %" PRIu64 " events, %" PRIu64
		" pages, %.2f MB ]\033[K",
		st->events, st->pages, (double)st->bytes / 1e6);
}

/* Per-CPU and total figures, as trace-cmd record ends. */
static void tracefs_summary(const struct perfring_tracefs_opts *to,
			    const struct perfring_tracefs_stats *st)
{
	fprintf(stderr,
		"[ perfring record: instance %s, %s consumer, %u-byte sub-buffers, woken up %" PRIu64
		" times ]\n",
		st->instance, st->mapped ? "mmap" : "read()", st->subbuf_size,
		st->wakeups);
	fprintf(stderr,
		"  cpu     events      pages        bytes       lost  lost-pages   kernel-entries\n");
	for (uint32_t i = 0; i < st->nr_cpus; i++)
		fprintf(stderr,
			"  %3u %10" PRIu64 " %10" PRIu64 " %12" PRIu64
			" %10" PRIu64 " %11" PRIu64 " %16" PRIu64 "\n",
			i, st->cpu[i].events, st->cpu[i].pages,
			st->cpu[i].bytes, st->cpu[i].lost,
			st->cpu[i].lost_pages, st->cpu[i].entries);
	fprintf(stderr,
		"[ perfring record: wrote %.3f MB %s: events=%" PRIu64
		" pages=%" PRIu64 " lost=%" PRIu64 " kernel_entries=%" PRIu64
		" kernel_read=%" PRIu64 " zero_copy_pages=%" PRIu64 " ]\n",
		(double)st->file_bytes / 1e6,
		to->output ? to->output : "trace.dat", st->events, st->pages,
		st->lost, st->entries, st->kernel_read, st->zero_copy_pages);
	if (st->lost)
		fprintf(stderr,
			"Warning: the kernel dropped %" PRIu64
			" events (%" PRIu64
			" pages marked): use a larger -m or a lower --buffer-percent.\n",
			st->lost, st->lost_pages);
}

int cmd_record_tracefs(const struct record_args *ra)
{
	static struct perfring_tracefs_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_tracefs_opts, to, .control_fd = -1,
		      .buffer_percent = -1);
	bool quiet = ra->quiet;
	int err;

	if (ra->help) {
		record_help(RECORD_TRACEFS);
		return 0;
	}
	/* trace-cmd's -e: here the events are ftrace's. */
	to.events = ra->events;
	to.nr_events = ra->nr_events;
	to.all_cpus = ra->all_cpus;
	to.cpu_list = ra->cpu_list;
	to.buffer_bytes = ra->buffer_bytes ? ra->buffer_bytes : ra->mmap_bytes;
	to.subbuf_bytes = ra->subbuf_bytes;
	to.buffer_percent = ra->buffer_percent;
	to.no_mmap = ra->no_mmap;
	to.output = ra->output;
	to.duration = ra->duration;
	to.argv = ra->argv;
	to.control_fd = control_setup(false);
	if (to.control_fd < 0)
		return 1;
	if (!quiet && isatty(STDERR_FILENO))
		to.progress = tracefs_progress;
	err = perfring_record_tracefs(&to, &st);
	if (to.progress)
		fprintf(stderr, "\r\033[K");
	/* A failed write (a full disk) kept the file up to its last page:
	 * the figures say what is in it. */
	if (!quiet && (!err || (st.write_error && st.file_bytes)))
		tracefs_summary(&to, &st);
	if (err && st.write_error && st.file_bytes) {
		fprintf(stderr,
			"%s: record --tracefs: writing %s failed (%s): recording stopped; it keeps %" PRIu64
			" events in %" PRIu64 " pages (%.3f MB); %" PRIu64
			" events the kernel recorded are not in it (%" PRIu64
			" pages could not be written)\n",
			prog, to.output ? to.output : "trace.dat",
			strerror(-st.write_error), st.events, st.pages,
			(double)st.file_bytes / 1e6, st.unsaved_events,
			st.unsaved_pages);
		return 1;
	}
	if (err) {
		fprintf(stderr, "%s: record --tracefs: %s\n", prog,
			strerror(-err));
		return 1;
	}
	if (st.child_status >= 0 && WIFEXITED(st.child_status))
		return WEXITSTATUS(st.child_status);
	return 0;
}
