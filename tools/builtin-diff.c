// SPDX-License-Identifier: MIT
/* perfring diff: perf diff's Baseline/Delta table of two profiles. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int cmd_diff(int argc, char **argv)
{
	enum { OPT_SYMFS = 256, OPT_PLIMIT };
	static const struct option opts[] = {
		{ "compute", required_argument, NULL, 'c' },
		{ "sort", required_argument, NULL, 's' },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "percent-limit", required_argument, NULL, OPT_PLIMIT },
		{ "stdio", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_diff_opts, dopt, .baseline = "perf.data.old",
		      .input = "perf.data");
	char *end;
	int c, err;

	while ((c = getopt_long(argc, argv, "c:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			dopt.compute = optarg;
			break;
		case 's':
			dopt.sort = optarg;
			break;
		case OPT_SYMFS:
			dopt.symfs = symfs_dir(optarg);
			break;
		case OPT_PLIMIT:
			dopt.percent_limit = strtod(optarg, &end);
			if (*end || dopt.percent_limit < 0)
				die_usage(
					"--percent-limit takes a percentage: %s",
					optarg);
			break;
		case 'S':
			break; /* the only output there is */
		case 'h':
			printf("usage: %s diff [OLD [NEW]] [-c delta|delta-abs|ratio|wdiff:W1,W2]\n"
			       "              [-s dso,sym,comm,pid] [--percent-limit PCT] [--symfs DIR] [--no-pager]\n"
			       "OLD defaults to perf.data.old, NEW to perf.data.\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		dopt.baseline = argv[optind++];
	if (optind < argc)
		dopt.input = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	err = perfring_diff(&dopt, stdout);
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: diff %s %s: %s\n", prog, dopt.baseline,
			dopt.input, strerror(-err));
		return 1;
	}
	return 0;
}
