// SPDX-License-Identifier: MIT
/*
 * perfring dump (every record, as perf report -D) and stats (record
 * counts, as perf report --stats) of a perf.data or a trace.dat.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

/* -i FILE (default perf.data, "-" standard input); dump: --hex / -D. */
static int read_input(int argc, char **argv, bool stats)
{
	const char *in = "perf.data";
	bool hex = false;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s %s [-i FILE|-]%s\n"
			       "  %s of a perf.data (or trace.dat); FILE defaults to perf.data,\n"
			       "  - reads perf's pipe format on standard input%s\n",
			       prog, stats ? "stats" : "dump",
			       stats ? "" : " [--hex|-D]",
			       stats ? "record counts by type (perf report --stats)" :
				       "every record with its offset (perf report -D)",
			       stats ? "" :
				       "\n  --hex, -D: perf report -D's raw block (the bytes) before each record");
			return 0;
		}
		if (!strcmp(argv[i], "-i") && i + 1 < argc)
			in = argv[++i];
		else if (!strncmp(argv[i], "--input=", 8))
			in = argv[i] + 8;
		else if (!stats &&
			 (!strcmp(argv[i], "--hex") || !strcmp(argv[i], "-D")))
			hex = true;
		else
			die_usage("unknown option '%s'", argv[i]);
	}
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
