// SPDX-License-Identifier: MIT
/* perfring annotate: perf annotate (--stdio text, or the browser). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

int cmd_annotate(int argc, char **argv)
{
	enum { OPT_STDIO = 256, OPT_TUI, OPT_SYMFS, OPT_NO_SOURCE };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "symbol", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "tui", no_argument, NULL, OPT_TUI },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "no-source", no_argument, NULL, OPT_NO_SOURCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_annotate_opts, ao, .input = "perf.data");
	int c, err, tui = -1;

	while ((c = getopt_long(argc, argv, "i:s:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ao.input = optarg;
			break;
		case 's':
			ao.symbol = optarg;
			break;
		case 'e':
			ao.event = optarg;
			break;
		case OPT_STDIO:
			tui = 0;
			break;
		case OPT_TUI:
			tui = 1;
			break;
		case OPT_SYMFS:
			ao.symfs = symfs_dir(optarg);
			break;
		case OPT_NO_SOURCE:
			ao.no_source = true;
			break;
		case 'h':
			printf("usage: %s annotate [-i FILE] [--stdio|--tui] [-s SYMBOL | SYMBOL]\n"
			       "                  [-e EVENT] [--symfs DIR] [--no-source] [--no-pager]\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		ao.symbol = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (tui < 0)
		tui = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (tui)
		err = browse_annotate(&ao);
	else {
		pager_start(cli_no_pager);
		err = perfring_annotate(&ao, stdout);
	}
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: annotate %s: %s\n", prog, ao.input,
			strerror(-err));
		return 1;
	}
	return 0;
}
