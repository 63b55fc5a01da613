// SPDX-License-Identifier: MIT
/*
 * perfring command-line tool: the command table and dispatch.  Each command
 * is one tools/builtin-*.c (as perf's builtin-*.c), argument parsing and
 * printing only: all the work goes through the public API in <perfring.h>.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static void log_to_stderr(enum perfring_log_level level, const char *msg,
			  void *ctx)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };

	(void)ctx;
	fprintf(stderr, "%s: %s: %s\n", prog, names[level], msg);
}

/*
 * First match wins: a command with a @selector (an option among its
 * arguments) comes before the plain one of the same name.
 */
static const struct command {
	const char *name;
	const char *selector;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "record", NULL, cmd_record },
	{ "list", NULL, cmd_list },
	{ "demo", NULL, cmd_demo },
	{ "ring-stat", NULL, cmd_ring_stat },
	{ "decode", NULL, cmd_decode },
	{ "inject", NULL, cmd_inject },
	{ "dump", "--aux", cmd_dump_aux },
	{ "script", "--itrace", cmd_script_itrace },
	{ "report", "--itrace", cmd_report_itrace },
	{ "dump", NULL, cmd_dump },
	{ "stats", NULL, cmd_stats },
	{ "script", NULL, cmd_script },
	{ "report", NULL, cmd_report },
	{ "export", NULL, cmd_export },
	{ "top", NULL, cmd_top },
	{ "push", NULL, cmd_push },
	{ "data", NULL, cmd_data },
	{ "annotate", NULL, cmd_annotate },
	{ "diff", NULL, cmd_diff },
	{ "sched", NULL, cmd_sched },
};

/* Commands whose text output goes to the pager on a terminal; report and
 * annotate start it themselves when not browsing (cli_no_pager). */
static const char *const paged[] = { "script", "dump", "diff" };
bool cli_no_pager;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [ARGS]\n"
		"\n"
		"commands:\n"
		"  record [OPTIONS] [-- COMMAND]     record kernel perf events into perf.data\n"
		"  record ... --tracefs-event SYS:EVENT  + ftrace events, same run: perf.data.trace.dat\n"
		"  record --tracefs -e SYS:EVENT...  ftrace's mapped buffers into trace.dat\n"
		"  top [-a|-p PID] [-e EVENT] [-g] [-d SECS] [--stdio|--tui]\n"
		"                                     live hot-symbol table (perf top: its browser\n"
		"                                     on a terminal, else --stdio's text)\n"
		"  record ... --push SINK=URL        + samples to ClickHouse, Pyroscope, Parca\n"
		"  push --spool DIR SINK=URL          deliver what a recording spooled\n"
		"  list                               events record accepts\n"
		"  demo [-n N] [-s BYTES] [-m SIZE] [--drop]\n"
		"                                     two-process ring demo: a producer\n"
		"                                     process writes N checked records\n"
		"  ring-stat RING_PATH                show a named ring's control page\n"
		"  script [-i FILE|-] [-F FIELDS]     one line per sample (perf script)\n"
		"  report [-i FILE|-] [--sort KEYS]   overhead table (perf report --stdio)\n"
		"  dump [-i FILE|-]                   every record of a perf.data (perf report -D)\n"
		"  stats [-i FILE|-]                  record counts (perf report --stats)\n"
		"  export [-i FILE|-] -f chrome|folded|svg|pprof [-o OUT]\n"
		"                                     Chrome trace JSON, folded stacks, flame graph,\n"
		"                                     pprof profile (go tool pprof)\n"
		"  sched record [-- COMMAND] | timehist [-s|-S] [-w] [-V] | latency\n"
		"                                     the scheduler's timeline (perf sched)\n"
		"  data convert [-i FILE|-] --to-ctf DIR | --to-json FILE [--all] [--tod]\n"
		"                                     CTF (babeltrace2, Trace Compass) or perf's JSON\n"
		"  decode --snapshot DIR [--decode]   CoreSight packets/elements of an OpenCSD snapshot\n"
		"  dump --aux [-i FILE] [--decode]    CoreSight packets/elements of the AUX data\n"
		"  script --itrace [-i FILE]          executed instruction ranges, disassembled\n"
		"  report --itrace [-i FILE]          instruction hot spots by object and symbol\n"
		"  annotate [-i FILE] [SYMBOL]        instructions and source lines with their share\n"
		"                                     of the samples (perf annotate)\n"
		"  diff [OLD [NEW]] [-c delta|ratio|wdiff:W,W]\n"
		"                                     compare two profiles (perf diff)\n"
		"  inject [-i FILE] [-o OUT] [--symdir DIR]\n"
		"                                     AutoFDO branch/range counts (simpleperf inject)\n"
		"  version                            print the version\n"
		"  help                               this text\n"
		"\n"
		"Options: -v (before the command) prints the library's log.\n"
		"Each command's options: perfring COMMAND --help (--list-opts: their\n"
		"names).  See perfring(1)\n"
		"(man -l docs/perfring.1 in the source tree).\n",
		prog);
}

void cli_verbose(void)
{
	perfring_set_log(log_to_stderr, NULL, PERFRING_LOG_DEBUG);
}

int main(int argc, char **argv)
{
	int verbose = 0;
	const char *cmd;

	signal(SIGPIPE, SIG_IGN);
	while (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose++;
		argc--;
		argv++;
	}
	perfring_set_log(log_to_stderr, NULL,
			 verbose ? PERFRING_LOG_DEBUG : PERFRING_LOG_WARN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	argc--;
	argv++;
	cli_cmdline_argc = argc + 1;
	cli_cmdline_argv = argv - 1;
	if (strcmp(cmd, "record") && strcmp(cmd, "top")) {
		cli_no_pager = no_pager_arg(&argc, argv);
		progress_setup();
	}
	for (size_t i = 0; i < sizeof(paged) / sizeof(paged[0]); i++)
		if (!strcmp(cmd, paged[i]) && !has_arg(argc, argv, "--aux"))
			pager_start(cli_no_pager);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("perfring %s\n", perfring_version());
		return 0;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct command *c = &commands[i];

		if (!strcmp(cmd, c->name) &&
		    (!c->selector || has_arg(argc, argv, c->selector)))
			return c->run(argc, argv);
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	usage(stderr);
	return 2;
}
