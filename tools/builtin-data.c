// SPDX-License-Identifier: MIT
/* perfring data convert: a perf.data as CTF (babeltrace2, Trace Compass)
 * or as perf's JSON, with perf data convert's options. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

/* The progress line: on a terminal only, once the work has taken half a
 * second. */
struct progress {
	struct timespec start;
	bool tty, shown;
};

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) +
	       (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void convert_progress(const struct perfring_convert_stats *st, void *ctx)
{
	struct progress *p = ctx;

	if (!p->tty || since(&p->start) < 0.5)
		return;
	p->shown = true;
	if (st->input_total)
		fprintf(stderr,
			"\r[ converting: %.1f of %.1f MB (%.0f%%), %" PRIu64
			" samples ]\033[K",
			(double)st->input_done / 1e6,
			(double)st->input_total / 1e6,
			st->input_done >= st->input_total ?
				100.0 :
				100.0 * (double)st->input_done /
					(double)st->input_total,
			st->samples);
	else
		fprintf(stderr,
			"\r[ converting: %.1f MB read, %" PRIu64
			" samples ]\033[K",
			(double)st->input_done / 1e6, st->samples);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s data convert [-i FILE|-] (--to-ctf DIR | --to-json FILE|-) [--all] [--tod] [-f] [-v]\n"
		"  --to-ctf DIR     CTF 1.8 trace (babeltrace2, Trace Compass), as perf data convert writes it\n"
		"  --to-json FILE   perf's JSON: headers, then samples with resolved call chains\n"
		"  -i, --input      perf.data to read (default perf.data; a pipe on stdin: -)\n"
		"  --all            CTF: COMM, FORK, EXIT, MMAP, MMAP2 records as events too\n"
		"  --tod            CTF: wall-clock times (the file's clock data: record -k)\n"
		"  -f, --force      an input of another user; overwrite an existing JSON file\n"
		"  -v, --verbose    the library's log\n",
		prog);
}

static int cmd_data_convert(int argc, char **argv)
{
	enum { OPT_ALL = 256, OPT_CTF, OPT_JSON, OPT_TOD };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "to-ctf", required_argument, NULL, OPT_CTF },
		{ "to-json", required_argument, NULL, OPT_JSON },
		{ "tod", no_argument, NULL, OPT_TOD },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_convert_opts, co, .input = "perf.data");
	struct perfring_convert_stats st = { .sz = sizeof(st) };
	struct progress pr = { .tty = isatty(STDERR_FILENO) };
	const char *to;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:fvh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			co.input = optarg;
			break;
		case 'f':
			co.force = true;
			break;
		case 'v':
			cli_verbose();
			break;
		case OPT_ALL:
			co.all = true;
			break;
		case OPT_CTF:
			co.to_ctf = optarg;
			break;
		case OPT_JSON:
			co.to_json = optarg;
			break;
		case OPT_TOD:
			co.tod = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	/* perf's messages */
	if (!co.to_ctf && !co.to_json)
		die_usage("%s",
			  "You must specify one of --to-ctf or --to-json.");
	if (co.to_ctf && co.to_json)
		die_usage("%s",
			  "You cannot specify both --to-ctf and --to-json.");
	if (!input_given(argc, argv) && stdin_is_fifo())
		co.input = "-"; /* as perf: a pipe on stdin is the input */
	to = co.to_ctf ? co.to_ctf : co.to_json;
	clock_gettime(CLOCK_MONOTONIC, &pr.start);
	co.progress = convert_progress;
	co.progress_ctx = &pr;
	err = perfring_data_convert(&co, &st);
	if (pr.shown)
		fputs("\r\033[K", stderr);
	/* damage: the summary of what came before it, if anything did */
	if (err && (err != -EBADMSG || !(st.samples + st.non_samples))) {
		fprintf(stderr, "%s: data convert %s: %s\n", prog, co.input,
			strerror(-err));
		return 1;
	}
	if (st.dropped)
		fprintf(stderr,
			"%s: warning: %" PRIu64
			" events left out (a value the CTF writer refused)\n",
			prog, st.dropped);
	if (st.lost_records)
		fprintf(stderr,
			"%s: warning: the recording lost %" PRIu64
			" events (%" PRIu64 " LOST records)\n",
			prog, st.lost, st.lost_records);
	fprintf(stderr,
		"[ %s data convert: Converted '%s' into %s data '%s' ]\n", prog,
		co.input, co.to_ctf ? "CTF" : "JSON", to);
	fprintf(stderr,
		"[ %s data convert: Converted and wrote %.3f MB (%" PRIu64
		" samples",
		prog,
		(double)(co.to_ctf ? st.bytes : st.output_bytes) / 1024.0 /
			1024.0,
		st.samples);
	if (st.non_samples)
		fprintf(stderr, ", %" PRIu64 " non-samples", st.non_samples);
	fprintf(stderr, ") ]\n");
	if (err) {
		fprintf(stderr,
			"%s: data convert %s: %s: what came before the damage was converted\n",
			prog, co.input, strerror(-err));
		return 1;
	}
	return 0;
}

int cmd_data(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "convert"))
		return cmd_data_convert(argc - 1, argv + 1);
	if (argc >= 2 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	     !strcmp(argv[1], "help"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2)
		fprintf(stderr, "%s: data: unknown subcommand '%s'\n", prog,
			argv[1]);
	usage(stderr);
	return 2;
}
