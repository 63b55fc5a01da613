// SPDX-License-Identifier: MIT
/*
 * perfring top: a live hot-symbol table, read from the kernel rings
 * without a file.  On a terminal perf top's browser (browser.c, refreshed
 * every -d seconds; --tui forces it); --stdio and off a terminal perf top
 * --stdio's text: the screen is cleared between refreshes on a terminal
 * only, into a pipe or file each refresh follows the last as plain text.
 * --iterations N stops after N refreshes (perf top has no such option;
 * scripts need one); SIGINT, SIGTERM and SIGHUP stop it with status 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "cli.h"
#include "parse-options.h"

#define TOP_MAX_EVENTS 64

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

struct top_args {
	struct perfring_top_opts to;
	const char *events[TOP_MAX_EVENTS];
	int tui; /* --stdio 0, --tui 1, neither -1: the browser on a tty */
};

static void opt_event(void *args, const char *arg)
{
	struct top_args *ta = args;

	if (ta->to.nr_events == TOP_MAX_EVENTS)
		die_usage("at most 64 events (-e %s)", arg);
	ta->events[ta->to.nr_events++] = arg;
}

static void opt_freq(void *args, const char *arg)
{
	((struct top_args *)args)->to.freq =
		parse_count(arg, "-F takes samples per second: %s");
}

static void opt_count(void *args, const char *arg)
{
	((struct top_args *)args)->to.period =
		parse_count(arg, "-c takes a sample period: %s");
}

static void opt_delay(void *args, const char *arg)
{
	struct top_args *ta = args;
	char *end;

	ta->to.delay = strtod(arg, &end);
	if (end == arg || *end || !(ta->to.delay > 0) || ta->to.delay > 86400)
		die_usage("-d takes seconds: %s", arg);
}

static void opt_entries(void *args, const char *arg)
{
	((struct top_args *)args)->to.entries =
		(unsigned int)parse_count(arg, "-E takes a number of rows: %s");
}

static void opt_mmap(void *args, const char *arg)
{
	((struct top_args *)args)->to.mmap_bytes = parse_mmap(arg);
}

static void opt_iterations(void *args, const char *arg)
{
	((struct top_args *)args)->to.iterations = parse_count(
		arg, "--iterations takes a number of refreshes: %s");
}

#define CLI_ARGS struct top_args
static const struct cli_option top_options[] = {
	OPT_GROUP("What to sample (as perf top):"),
	OPT_CALLBACK('e', "event", "EVENT", opt_event,
		     "an event (perfring list), repeatable; default cpu-clock"),
	OPT_BOOLEAN('a', "all-cpus", to.all_cpus,
		    "system wide (the default without -C, -p or -t)"),
	OPT_STRING('C', "cpu", to.cpu_list, "CPUS", "only these CPUs"),
	OPT_STRING('p', "pid", to.pid_list, "PIDS",
		   "these processes (and their children)"),
	OPT_STRING('t', "tid", to.tid_list, "TIDS", "these threads"),
	OPT_CALLBACK('F', "freq", "HZ", opt_freq,
		     "samples per second (default 4000)"),
	OPT_CALLBACK('c', "count", "PERIOD", opt_count,
		     "a sample every PERIOD events"),
	OPT_BOOLEAN('g', NULL, to.callchain, "call chains under the entries"),
	OPT_CALLBACK('m', "mmap-pages", "PAGES|SIZE", opt_mmap,
		     "ring size per CPU"),
	OPT_GROUP("The table:"),
	OPT_STRING('s', "sort", to.sort, "KEYS",
		   "comm,pid,dso,sym (default dso,sym)"),
	OPT_CALLBACK('d', "delay", "SECS", opt_delay,
		     "a refresh every SECS (browser 2, as perf top; text 1)"),
	OPT_CALLBACK('E', "entries", "ROWS", opt_entries,
		     "rows per table (default: what the terminal fits, or 20)"),
	OPT_BOOLEAN('z', "zero", to.zero,
		    "each refresh on its own (counts decay to 7/8 otherwise)"),
	OPT_BOOLEAN('K', "hide_kernel_symbols", to.hide_kernel,
		    "kernel samples left out"),
	OPT_BOOLEAN('U', "hide_user_symbols", to.hide_user,
		    "user samples left out"),
	OPT_BOOLEAN('n', "show-nr-samples", to.show_nr_samples,
		    "a Samples column"),
	OPT_CALLBACK(0, "iterations", "N", opt_iterations,
		     "stop after N tables"),
	OPT_SET_INT(
		0, "stdio", tui, 0,
		"perf top --stdio's text tables (the default off a terminal)"),
	OPT_SET_INT(0, "tui", tui, 1,
		    "perf top's browser (the default on a terminal)"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command top_command = {
	.name = "top",
	.usage =
		(const char *const[]){
			"[-e EVENT]... [-a|-C CPUS|-p PID|-t TID] [OPTIONS]",
			NULL },
	.options = top_options,
	.notes =
		"System-wide unless -C, -p or -t; a refresh every -d seconds.\n"
		"On a terminal the browser (keys: ? in it), else text tables.\n",
};

int cmd_top(int argc, char **argv)
{
	static struct top_args ta = {
		.to = { .sz = sizeof(ta.to), .control_fd = -1 },
		.tui = -1,
	};
	struct perfring_top_stats st = { .sz = sizeof(st) };
	struct perfring_top_opts to;
	int first = cli_parse(&top_command, argc, argv, &ta, NULL);
	int err;

	if (first < argc)
		die_usage(
			"unexpected argument '%s' (perfring top runs no command: use -p)",
			argv[first]);
	to = ta.to;
	if (!!to.pid_list + !!to.tid_list + (to.all_cpus || to.cpu_list) > 1)
		die_usage("%s: give one of -a/-C, -p and -t",
			  "conflicting targets");
	to.events = ta.events;
	if (ta.tui < 0) /* perf's: the browser on a terminal */
		ta.tui = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (ta.tui) {
		if (!to.delay)
			to.delay = 2; /* perf top's */
		to.control_fd = control_setup(false);
		if (to.control_fd < 0)
			return 1;
		err = browse_top(&to);
		if (err) {
			fprintf(stderr, "%s: top: %s\n", prog, strerror(-err));
			return 1;
		}
		return 0;
	}
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
