// SPDX-License-Identifier: MIT
/*
 * perfring dump (every record, as perf report -D) and stats (record
 * counts, as perf report --stats) of a perf.data or a trace.dat.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

struct dump_args {
	const char *input;
	bool hex;
};

#define CLI_ARGS struct dump_args
static const struct cli_option dump_options[] = {
	OPT_STRING('i', "input", input, "FILE|-",
		   "perf.data or trace.dat to read (default perf.data;\n"
		   "-: perf's pipe format on standard input)"),
	OPT_BOOLEAN('D', "hex", hex,
		    "perf report -D's raw block (the bytes) before each record"),
	OPT_END(),
};
static const struct cli_option stats_options[] = {
	OPT_STRING('i', "input", input, "FILE|-",
		   "perf.data or trace.dat to read (default perf.data;\n"
		   "-: perf's pipe format on standard input)"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command dump_command = {
	.name = "dump",
	.usage = (const char *const[]){ "[-i FILE|-] [--hex|-D]", NULL },
	.options = dump_options,
	.notes = "Every record with its offset (perf report -D).\n",
};
static const struct cli_command stats_command = {
	.name = "stats",
	.usage = (const char *const[]){ "[-i FILE|-]", NULL },
	.options = stats_options,
	.notes = "Record counts by type (perf report --stats).\n",
};

static int read_input(int argc, char **argv, bool stats)
{
	struct dump_args da = { .input = "perf.data" };
	int first = cli_parse(stats ? &stats_command : &dump_command, argc,
			      argv, &da, NULL);
	const char *in = da.input;
	bool hex = da.hex;
	int err;

	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (strcmp(in, "-") && perfring_trace_dat_probe(in) == 1)
		err = stats ? perfring_trace_dat_stats(in, stdout) :
			      perfring_trace_dat_dump(in, stdout);
	else if (stats)
		err = perfring_stats(in, stdout);
	else {
		PERFRING_OPTS(perfring_dump_opts, d, .input = in, .hex = hex);

		err = perfring_dump_opts(&d, stdout);
	}
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (err) {
		fflush(stdout);
		fprintf(stderr, "%s: %s: %s\n", prog, in, strerror(-err));
		return 1;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	return read_input(argc, argv, false);
}

int cmd_stats(int argc, char **argv)
{
	return read_input(argc, argv, true);
}
