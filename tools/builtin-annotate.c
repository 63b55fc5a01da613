// SPDX-License-Identifier: MIT
/* perfring annotate: perf annotate (--stdio text, or the browser). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "parse-options.h"

struct annotate_args {
	struct perfring_annotate_opts ao;
	int tui; /* --stdio 0, --tui 1, neither -1 (a terminal: the browser) */
};

static void opt_symfs(void *args, const char *arg)
{
	((struct annotate_args *)args)->ao.symfs = symfs_dir(arg);
}

static void opt_stdio(void *args, const char *arg)
{
	(void)arg;
	((struct annotate_args *)args)->tui = 0;
}

static void opt_tui(void *args, const char *arg)
{
	(void)arg;
	((struct annotate_args *)args)->tui = 1;
}

#define CLI_ARGS struct annotate_args
static const struct cli_option annotate_options[] = {
	OPT_STRING('i', "input", ao.input, "FILE",
		   "perf.data to read (default perf.data)"),
	OPT_STRING('s', "symbol", ao.symbol, "SYMBOL",
		   "this symbol only (also as the argument)"),
	OPT_STRING('e', "event", ao.event, "EVENT",
		   "this event's samples (default: the first)"),
	OPT_CALLBACK_NOARG(
		0, "stdio", opt_stdio,
		"perf annotate --stdio's text (the default off a terminal)"),
	OPT_CALLBACK_NOARG(0, "tui", opt_tui,
			   "the browser (the default on a terminal)"),
	OPT_CALLBACK(0, "symfs", "DIR", opt_symfs,
		     "objects and debug files under DIR"),
	OPT_BOOLEAN(0, "no-source", ao.no_source,
		    "no source lines between the instructions"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command annotate_command = {
	.name = "annotate",
	.usage =
		(const char *const[]){
			"[-i FILE] [--stdio|--tui] [-s SYMBOL | SYMBOL] [OPTIONS]",
			NULL },
	.options = annotate_options,
};

int cmd_annotate(int argc, char **argv)
{
	struct annotate_args a = {
		.ao = { .sz = sizeof(a.ao), .input = "perf.data" },
		.tui = -1,
	};
	int first = cli_parse(&annotate_command, argc, argv, &a, NULL);
	int err;

	if (first < argc)
		a.ao.symbol = argv[first++];
	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	if (a.tui < 0)
		a.tui = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (a.tui) {
		err = browse_annotate(&a.ao);
	} else {
		pager_start(cli_no_pager);
		err = perfring_annotate(&a.ao, stdout);
	}
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: annotate %s: %s\n", prog, a.ao.input,
			strerror(-err));
		return 1;
	}
	return 0;
}
