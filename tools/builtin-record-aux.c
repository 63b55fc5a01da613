// SPDX-License-Identifier: MIT
/*
 * perfring record --replay-cs / -e cs_etm// (AUX area trace): the AUX
 * area's data into AUXTRACE records of a perf.data.
 */
#define _GNU_SOURCE
#include <getopt.h>
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

static void aux_usage(void)
{
	printf("usage: %s record --replay-cs SNAPSHOT_DIR|PERF_DATA [-o FILE] [--rate BYTES/S]\n"
	       "                [--loops N] [--chunk SIZE] [--replay-cpu CPU] [-m DATA[,AUX]]\n"
	       "                [-S[SIZE] | --snapshot[=e][SIZE]] [--overwrite]\n"
	       "                [--cs-header-version 1|2] [--duration SECS] [-q]\n"
	       "       %s record -e cs_etm// | intel_pt// | arm_spe// ...\n",
	       prog, prog);
}

/* The options into @o.  Returns -1 to go on, or the exit status. */
static int aux_parse(int argc, char **argv, struct perfring_record_aux_opts *o,
		     bool *quiet)
{
	enum {
		OPT_REPLAY = 256,
		OPT_RATE,
		OPT_LOOPS,
		OPT_CHUNK,
		OPT_CPU,
		OPT_OVERWRITE,
		OPT_CSV
	};
	static const struct option opts[] = {
		{ "replay-cs", required_argument, NULL, OPT_REPLAY },
		{ "event", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "loops", required_argument, NULL, OPT_LOOPS },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "replay-cpu", required_argument, NULL, OPT_CPU },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "snapshot", optional_argument, NULL, 'S' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "cs-header-version", required_argument, NULL, OPT_CSV },
		{ "duration", required_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, *comma;
	int c;

	while ((c = getopt_long(argc, argv, "+e:o:m:S::D:qh", opts, NULL)) !=
	       -1) {
		switch (c) {
		case OPT_REPLAY:
			o->replay = optarg;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_RATE:
			o->rate = parse_size(optarg, "--rate");
			break;
		case OPT_LOOPS:
			o->loops = strtoull(optarg, &end, 10);
			if (*end || !o->loops)
				die_usage("--loops takes a count: %s", optarg);
			break;
		case OPT_CHUNK:
			o->chunk = parse_size(optarg, "--chunk");
			break;
		case OPT_CPU:
			o->replay_cpu = (int)strtol(optarg, &end, 10);
			if (*end || o->replay_cpu < 0)
				die_usage("--replay-cpu takes a CPU: %s",
					  optarg);
			break;
		case 'm': /* perf's -m pages[,auxpages] */
			comma = strchr(optarg, ',');
			if (comma) {
				*comma = 0;
				o->aux_bytes = parse_mmap(comma + 1);
			}
			if (*optarg)
				o->data_bytes = parse_mmap(optarg);
			break;
		case 'S': /* -S[size], --snapshot[=[e][size]] */
			o->snapshot = true;
			if (optarg && *optarg == 'e') {
				o->snapshot_on_exit = true;
				optarg++;
			}
			if (optarg && *optarg)
				o->snapshot_size = parse_size(optarg, "-S");
			break;
		case OPT_OVERWRITE:
			o->overwrite = true;
			break;
		case OPT_CSV:
			o->cs_header_version = atoi(optarg);
			break;
		case 'D':
			o->duration = parse_seconds(optarg);
			break;
		case 'q':
			*quiet = true;
			break;
		case 'h':
			aux_usage();
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc && o->replay)
		die_usage("record --replay-cs runs no command: %s",
			  argv[optind]);
	return -1;
}

int cmd_record_aux(int argc, char **argv)
{
	PERFRING_OPTS(perfring_record_aux_opts, o, .control_fd = -1,
		      .replay_cpu = -1);
	struct perfring_record_aux_stats st = { .sz = sizeof(st) };
	bool quiet = false;
	int err;

	err = aux_parse(argc, argv, &o, &quiet);
	if (err >= 0)
		return err;
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
