// SPDX-License-Identifier: MIT
/* perfring report: perf report --stdio's overhead table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "parse-options.h"

/* -g as perf takes it: comma-separated none|graph, a minimum percentage,
 * caller|callee (print_type, threshold, order; the rest is refused). */
static void parse_graph(void *args, const char *arg)
{
	struct perfring_report_opts *ro = args;
	char buf[256], *save = NULL, *end;

	if (strlen(arg) >= sizeof(buf))
		die_usage("-g: too long: %s", arg);
	strcpy(buf, arg);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		double pct = strtod(t, &end);

		if (!strcmp(t, "none"))
			ro->no_callgraph = true;
		else if (!strcmp(t, "graph"))
			ro->no_callgraph = false;
		else if (!strcmp(t, "caller"))
			ro->callchain_order = 1;
		else if (!strcmp(t, "callee"))
			ro->callchain_order = 2;
		else if (end != t && !*end && pct >= 0)
			ro->graph_min_percent = pct;
		else
			die_usage(
				"-g takes none, graph, a percentage, caller or callee: %s",
				arg);
	}
}

static void opt_children(void *args, const char *arg)
{
	struct perfring_report_opts *ro = args;

	(void)arg;
	ro->children = true;
	ro->no_children = false;
}

static void opt_no_children(void *args, const char *arg)
{
	struct perfring_report_opts *ro = args;

	(void)arg;
	ro->no_children = true;
	ro->children = false;
}

static void opt_symfs(void *args, const char *arg)
{
	((struct perfring_report_opts *)args)->symfs = symfs_dir(arg);
}

static void opt_max_stack(void *args, const char *arg)
{
	struct perfring_report_opts *ro = args;
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || end == arg || v > 1000000)
		die_usage("--max-stack takes a number: %s", arg);
	ro->max_stack = (unsigned int)v;
	ro->has_max_stack = true;
}

static void opt_percent_limit(void *args, const char *arg)
{
	struct perfring_report_opts *ro = args;
	char *end;

	ro->percent_limit = strtod(arg, &end);
	if (*end || ro->percent_limit < 0)
		die_usage("--percent-limit takes a percentage: %s", arg);
}

/* --stdio (0), --tui (1), or neither (-1: the browser on a terminal) */
static int report_tui = -1;

static void opt_stdio(void *args, const char *arg)
{
	(void)args;
	(void)arg;
	report_tui = 0;
}

static void opt_tui(void *args, const char *arg)
{
	(void)args;
	(void)arg;
	report_tui = 1;
}

#define CLI_ARGS struct perfring_report_opts
static const struct cli_option report_options[] = {
	OPT_GROUP("Input:"),
	OPT_STRING('i', "input", input, "FILE|-",
		   "perf.data to read (default perf.data; -: perf's pipe\n"
		   "format on standard input, as is a pipe on stdin)"),
	OPT_CALLBACK(0, "symfs", "DIR", opt_symfs,
		     "look for objects and debug files under DIR"),
	OPT_STRING(0, "from", from, "clickhouse=URL",
		   "a fleet's samples (record --push) instead of a file"),
	OPT_STRING(0, "where", where, "SQL",
		   "with --from: only the samples of this condition"),
	OPT_GROUP("The table (as perf report --stdio):"),
	OPT_STRING('s', "sort", sort, "KEYS",
		   "comm,pid,dso,symbol,cpu,trace,srcline,srcfile\n"
		   "(--from: comm,pid,dso,sym,host)"),
	OPT_STRING('F', "fields", fields, "overhead,sample,period,KEYS",
		   "the columns, in any order"),
	OPT_CALLBACK_NOARG(0, "children", opt_children,
			   "a Children column (the default with call chains)"),
	OPT_CALLBACK_NOARG(0, "no-children", opt_no_children, "self only"),
	OPT_CALLBACK('g', "call-graph", "none|graph|PCT|caller|callee",
		     parse_graph, "call graphs under the entries"),
	OPT_SET_INT('G', "inverted", callchain_order, 1,
		    "call graphs from the caller down (-g caller)"),
	OPT_CALLBACK(0, "max-stack", "N", opt_max_stack,
		     "at most N entries of each call chain"),
	OPT_SET_BOOL(0, "inline", no_inline, false,
		     "inlined functions in call graphs (the default)"),
	OPT_SET_BOOL(0, "no-inline", no_inline, true, "no inlined functions"),
	OPT_BOOLEAN('n', "show-nr-samples", show_nr_samples,
		    "a Samples column"),
	OPT_BOOLEAN(0, "show-total-period", show_total_period,
		    "a Period column"),
	OPT_CALLBACK(0, "percent-limit", "PCT", opt_percent_limit,
		     "hide entries below PCT"),
	OPT_SET_INT(0, "group", group, 1,
		    "all events side by side, one Overhead column each"),
	OPT_SET_INT(0, "no-group", group, -1, "each event alone"),
	OPT_STRING('t', "field-separator", field_sep, "SEP",
		   "columns separated by SEP, not padded"),
	OPT_BOOLEAN('q', "quiet", quiet, "the entries alone, no header lines"),
	OPT_BOOLEAN('U', "hide-unresolved", hide_unresolved,
		    "leave out samples with no symbol"),
	OPT_CALLBACK_NOARG(0, "stdio", opt_stdio,
			   "the text table (the default off a terminal)"),
	OPT_CALLBACK_NOARG(0, "tui", opt_tui,
			   "perf report's browser (the default on a terminal)"),
	OPT_BOOLEAN(0, "header", header,
		    "the file's header first, as perf 6.1 prints it"),
	OPT_BOOLEAN(0, "header-only", header_only, "that header alone"),
	OPT_BOOLEAN('I', "show-info", show_info,
		    "with --header: the topology sections in full"),
	OPT_BOOLEAN('T', "threads", show_threads,
		    "per-thread counts after the table (record -s)"),
	OPT_GROUP("Which samples:"),
	OPT_STRING(0, "comm", comm_list, "COMMS", "of these commands"),
	OPT_STRING(0, "comms", comm_list, "COMMS", "the same"),
	OPT_STRING('d', "dsos", dso_list, "DSOS", "in these objects"),
	OPT_STRING('S', "symbols", symbols, "SYMS", "in these symbols"),
	OPT_STRING(0, "pid", pid_list, "PIDS", "of these processes"),
	OPT_STRING(0, "tid", tid_list, "TIDS", "of these threads"),
	OPT_STRING('C', "cpu", cpu_list, "CPUS", "on these CPUs"),
	OPT_STRING(0, "time", time_range, "START,END|PCT",
		   "in this time range"),
	OPT_GROUP("Instead of the table:"),
	OPT_BOOLEAN(0, "stats", stats, "record counts per type and event"),
	OPT_BOOLEAN(0, "tasks", tasks, "the threads as a process tree"),
	OPT_BOOLEAN(0, "mmaps", mmaps, "the tree with each thread's maps"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command report_command = {
	.name = "report",
	.usage =
		(const char *const[]){
			"[-i FILE|-] [--sort KEYS] [OPTIONS]",
			"--from clickhouse=URL [--where SQL] [--sort comm,pid,dso,sym,host] [-n] [-q]",
			NULL },
	.options = report_options,
};

int cmd_report(int argc, char **argv)
{
	PERFRING_OPTS(perfring_report_opts, ro, .input = "perf.data");
	int first = cli_parse(&report_command, argc, argv, &ro, NULL);
	int err;

	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	if (ro.where && !ro.from)
		die_usage("--where needs --from: %s", ro.where);
	if (ro.from)
		ro.input = ro.from;
	else if (!input_given(argc, argv) && stdin_is_fifo())
		ro.input = "-";
	if (report_tui <
	    0) /* perf's: the browser on a terminal, for the table */
		report_tui = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
			     !ro.from && !ro.header_only && !ro.stats &&
			     !ro.tasks && !ro.mmaps && !ro.field_sep &&
			     strcmp(ro.input, "-");
	if (report_tui) {
		/* Children as perf: by default when the samples have chains */
		err = browse_report(&ro, !ro.no_children);
	} else {
		pager_start(cli_no_pager);
		err = perfring_report(&ro, stdout);
	}
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: report %s: %s\n", prog, ro.input,
			strerror(-err));
		return 1;
	}
	return 0;
}
