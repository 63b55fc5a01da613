// SPDX-License-Identifier: MIT
/* perfring record --tracefs: ftrace's mapped buffers into trace.dat. */
#define _GNU_SOURCE
#include <ctype.h>
#include <getopt.h>
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

/* --subbuf-size: a power of two from 4K; no suffix means kilobytes. */
static uint32_t parse_subbuf(const char *arg)
{
	uint64_t v = parse_size(arg, "--subbuf-size");

	if (isdigit((unsigned char)arg[strlen(arg) - 1]))
		v *= 1024; /* trace-cmd: kilobytes */
	if (v < 4096 || (v & (v - 1)) || v > (1u << 27))
		die_usage("--subbuf-size must be a power of two from 4K: %s",
			  arg);
	return (uint32_t)v;
}

/*
 * The options into @to, the events into @events (64 at most).  Returns -1
 * to go on, or the exit status (help, bad option).
 */
static int tracefs_parse(int argc, char **argv,
			 struct perfring_tracefs_opts *to, const char **events,
			 bool *quiet)
{
	enum { OPT_TRACEFS = 256, OPT_SUBBUF, OPT_PERCENT, OPT_NO_MMAP };
	static const struct option opts[] = {
		{ "tracefs", no_argument, NULL, OPT_TRACEFS },
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "buffer-size", required_argument, NULL, 'm' },
		{ "subbuf-size", required_argument, NULL, OPT_SUBBUF },
		{ "buffer-percent", required_argument, NULL, OPT_PERCENT },
		{ "no-mmap", no_argument, NULL, OPT_NO_MMAP },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, nev = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "+e:aC:m:o:qD:h", opts, NULL)) !=
	       -1) {
		switch (c) {
		case OPT_TRACEFS:
			break;
		case 'e':
			if (nev == 64)
				die_usage("at most 64 events (%s)", optarg);
			events[nev++] = optarg;
			break;
		case 'a':
			to->all_cpus = true;
			break;
		case 'C':
			to->cpu_list = optarg;
			break;
		case 'm':
			to->buffer_bytes = parse_mmap(optarg);
			break;
		case OPT_SUBBUF:
			to->subbuf_bytes = parse_subbuf(optarg);
			break;
		case OPT_PERCENT:
			to->buffer_percent = (int)strtol(optarg, &end, 10);
			if (*end || to->buffer_percent < 0 ||
			    to->buffer_percent > 100)
				die_usage("--buffer-percent takes 0..100: %s",
					  optarg);
			break;
		case OPT_NO_MMAP:
			to->no_mmap = true;
			break;
		case 'o':
			to->output = optarg;
			break;
		case 'q':
			*quiet = true;
			break;
		case 'D':
			to->duration = parse_seconds(optarg);
			break;
		case 'h':
			printf("usage: %s record --tracefs -e SYS:EVENT [-e ...] [-a] [-C CPUS] [-m SIZE]\n"
			       "                [--subbuf-size SIZE] [--buffer-percent N] [--no-mmap]\n"
			       "                [-o trace.dat] [-q] [--duration SECS] [-- COMMAND [ARGS]]\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	to->events = events;
	to->nr_events = nev;
	to->argv = optind < argc ? &argv[optind] : NULL;
	return -1;
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

int cmd_record_tracefs(int argc, char **argv)
{
	const char *events[64];
	static struct perfring_tracefs_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_tracefs_opts, to, .control_fd = -1,
		      .buffer_percent = -1);
	bool quiet = false;
	int err;

	err = tracefs_parse(argc, argv, &to, events, &quiet);
	if (err >= 0)
		return err;
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
