// SPDX-License-Identifier: MIT
/*
 * perfring top: perf top --stdio's live hot-symbol table, read from the
 * kernel rings without a file.  The screen is cleared between refreshes on
 * a terminal only; into a pipe or file each refresh follows the last as
 * plain text.  --iterations N stops after N refreshes (perf top has no
 * such option; scripts need one); SIGINT, SIGTERM and SIGHUP stop it with
 * status 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "cli.h"

#define TOP_MAX_EVENTS 64

static void top_usage(void)
{
	printf("usage: %s top [-e EVENT]... [-a] [-C CPUS] [-p PID] [-t TID] [-F HZ | -c PERIOD]\n"
	       "                [-g] [-s comm,pid,dso,sym] [-d SECS] [-E ROWS] [-z] [-K] [-U] [-n]\n"
	       "                [-m PAGES|SIZE] [--iterations N] [--stdio]\n"
	       "  system-wide unless -C, -p or -t; a table every -d seconds (default 1),\n"
	       "  counts decaying to 7/8 at each refresh (-z: each refresh on its own)\n",
	       prog);
}

static uint64_t parse_count(const char *arg, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || !v || arg[0] == '-')
		die_usage(what, arg);
	return v;
}

/* Rows that fit a terminal below the header, as perf top sizes them. */
static unsigned int terminal_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 12)
		return 0;
	return ws.ws_row - 7u;
}

int cmd_top(int argc, char **argv)
{
	enum { OPT_ITERATIONS = 256, OPT_STDIO };
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "sort", required_argument, NULL, 's' },
		{ "delay", required_argument, NULL, 'd' },
		{ "entries", required_argument, NULL, 'E' },
		{ "zero", no_argument, NULL, 'z' },
		{ "hide_kernel_symbols", no_argument, NULL, 'K' },
		{ "hide_user_symbols", no_argument, NULL, 'U' },
		{ "show-nr-samples", no_argument, NULL, 'n' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "iterations", required_argument, NULL, OPT_ITERATIONS },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *events[TOP_MAX_EVENTS];
	struct perfring_top_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_top_opts, to, .control_fd = -1);
	char *end;
	int c, err;

	while ((c = getopt_long(argc, argv, "e:aC:p:t:F:c:gs:d:E:zKUnm:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'e':
			if (to.nr_events == TOP_MAX_EVENTS)
				die_usage("at most 64 events (-e %s)", optarg);
			events[to.nr_events++] = optarg;
			break;
		case 'a':
			to.all_cpus = true;
			break;
		case 'C':
			to.cpu_list = optarg;
			break;
		case 'p':
			to.pid_list = optarg;
			break;
		case 't':
			to.tid_list = optarg;
			break;
		case 'F':
			to.freq = parse_count(
				optarg, "-F takes samples per second: %s");
			break;
		case 'c':
			to.period = parse_count(optarg,
						"-c takes a sample period: %s");
			break;
		case 'g':
			to.callchain = true;
			break;
		case 's':
			to.sort = optarg;
			break;
		case 'd':
			to.delay = strtod(optarg, &end);
			if (end == optarg || *end || !(to.delay > 0) ||
			    to.delay > 86400)
				die_usage("-d takes seconds: %s", optarg);
			break;
		case 'E':
			to.entries = (unsigned int)parse_count(
				optarg, "-E takes a number of rows: %s");
			break;
		case 'z':
			to.zero = true;
			break;
		case 'K':
			to.hide_kernel = true;
			break;
		case 'U':
			to.hide_user = true;
			break;
		case 'n':
			to.show_nr_samples = true;
			break;
		case 'm':
			to.mmap_bytes = parse_mmap(optarg);
			break;
		case OPT_ITERATIONS:
			to.iterations = parse_count(
				optarg,
				"--iterations takes a number of refreshes: %s");
			break;
		case OPT_STDIO:
			break; /* the only interface there is */
		case 'h':
			top_usage();
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage(
			"unexpected argument '%s' (perfring top runs no command: use -p)",
			argv[optind]);
	if (!!to.pid_list + !!to.tid_list + (to.all_cpus || to.cpu_list) > 1)
		die_usage("%s: give one of -a/-C, -p and -t",
			  "conflicting targets");
	to.events = events;
	to.clear = isatty(STDOUT_FILENO);
	if (to.clear && !to.entries)
		to.entries = terminal_rows();
	to.control_fd = control_setup(false);
	if (to.control_fd < 0)
		return 1;
	err = perfring_top(&to, stdout, &st);
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: top: %s\n", prog, strerror(-err));
		return 1;
	}
	return 0;
}
