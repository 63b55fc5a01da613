// SPDX-License-Identifier: MIT
/* perfring data convert: a perf.data as CTF (babeltrace2, Trace Compass)
 * or as perf's JSON, with perf data convert's options. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "parse-options.h"

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

static void opt_verbose(void *args, const char *arg)
{
	(void)args;
	(void)arg;
	cli_verbose();
}

#define CLI_ARGS struct perfring_convert_opts
static const struct cli_option convert_options[] = {
	OPT_STRING(0, "to-ctf", to_ctf, "DIR",
		   "CTF 1.8 trace (babeltrace2, Trace Compass), as perf data\n"
		   "convert writes it"),
	OPT_STRING(
		0, "to-json", to_json, "FILE|-",
		"perf's JSON: headers, then samples with resolved call chains"),
	OPT_STRING('i', "input", input, "FILE|-",
		   "perf.data to read (default perf.data; a pipe on stdin: -)"),
	OPT_BOOLEAN(0, "all", all,
		    "CTF: COMM, FORK, EXIT, MMAP, MMAP2 records as events too"),
	OPT_BOOLEAN(0, "tod", tod,
		    "CTF: wall-clock times (the file's clock data: record -k)"),
	OPT_BOOLEAN('f', "force", force,
		    "an input of another user; overwrite an existing JSON file"),
	OPT_CALLBACK_NOARG('v', "verbose", opt_verbose, "the library's log"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command convert_command = {
	.name = "data convert",
	.usage =
		(const char *const[]){
			"[-i FILE|-] (--to-ctf DIR | --to-json FILE|-) [--all] [--tod] [-f] [-v]",
			NULL },
	.options = convert_options,
};

static int cmd_data_convert(int argc, char **argv)
{
	PERFRING_OPTS(perfring_convert_opts, co, .input = "perf.data");
	struct perfring_convert_stats st = { .sz = sizeof(st) };
	struct progress pr = { .tty = isatty(STDERR_FILENO) };
	const char *to;
	int first = cli_parse(&convert_command, argc, argv, &co, NULL), err;

	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
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
		cli_help(&convert_command);
		return 0;
	}
	if (argc >= 2)
		fprintf(stderr, "%s: data: unknown subcommand '%s'\n", prog,
			argv[1]);
	fprintf(stderr, "usage: %s %s %s\nTry '%s data --help'.\n", prog,
		convert_command.name, convert_command.usage[0], prog);
	return 2;
}
