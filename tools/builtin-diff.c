// SPDX-License-Identifier: MIT
/* perfring diff: perf diff's Baseline/Delta table of two profiles. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

static void opt_symfs(void *args, const char *arg)
{
	((struct perfring_diff_opts *)args)->symfs = symfs_dir(arg);
}

static void opt_percent_limit(void *args, const char *arg)
{
	struct perfring_diff_opts *d = args;
	char *end;

	d->percent_limit = strtod(arg, &end);
	if (*end || end == arg || d->percent_limit < 0)
		die_usage("--percent-limit takes a percentage: %s", arg);
}

#define CLI_ARGS struct perfring_diff_opts
static const struct cli_option diff_options[] = {
	OPT_STRING('c', "compute", compute, "delta|delta-abs|ratio|wdiff:W1,W2",
		   "the Delta column (default delta-abs, as perf 6.1)"),
	OPT_STRING('s', "sort", sort, "dso,sym,comm,pid",
		   "the keys of a row (default dso,sym)"),
	OPT_CALLBACK(0, "percent-limit", "PCT", opt_percent_limit,
		     "hide rows under PCT"),
	OPT_CALLBACK(0, "symfs", "DIR", opt_symfs,
		     "objects and debug files under DIR"),
	OPT_NOOP(0, "stdio", "accepted: the only output there is"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command diff_command = {
	.name = "diff",
	.usage = (const char *const[]){ "[OLD [NEW]] [OPTIONS]", NULL },
	.options = diff_options,
	.notes = "OLD defaults to perf.data.old, NEW to perf.data.\n",
};

int cmd_diff(int argc, char **argv)
{
	PERFRING_OPTS(perfring_diff_opts, dopt, .baseline = "perf.data.old",
		      .input = "perf.data");
	int first = cli_parse(&diff_command, argc, argv, &dopt, NULL);
	int err;

	if (first < argc)
		dopt.baseline = argv[first++];
	if (first < argc)
		dopt.input = argv[first++];
	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
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
