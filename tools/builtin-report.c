// SPDX-License-Identifier: MIT
/* perfring report: perf report --stdio's overhead table. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* -g as perf takes it: comma-separated none|graph, a minimum percentage,
 * caller|callee (print_type, threshold, order; the rest is refused). */
static void parse_graph(struct perfring_report_opts *ro, const char *arg)
{
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

int cmd_report(int argc, char **argv)
{
	enum {
		OPT_CHILDREN = 256,
		OPT_NO_CHILDREN,
		OPT_STDIO,
		OPT_PLIMIT,
		OPT_SYMFS,
		OPT_COMM,
		OPT_DSOS,
		OPT_GROUP,
		OPT_NO_GROUP,
		OPT_HEADER,
		OPT_HEADER_ONLY,
		OPT_INLINE,
		OPT_NO_INLINE,
		OPT_PID,
		OPT_TID,
		OPT_TIME,
		OPT_TOTAL_PERIOD,
		OPT_MAX_STACK,
		OPT_STATS,
		OPT_TASKS,
		OPT_MMAPS,
		OPT_FROM,
		OPT_WHERE,
	};
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "show-nr-samples", no_argument, NULL, 'n' },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "percent-limit", required_argument, NULL, OPT_PLIMIT },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "comms", required_argument, NULL, OPT_COMM },
		{ "dsos", required_argument, NULL, OPT_DSOS },
		{ "symbols", required_argument, NULL, 'S' },
		{ "group", no_argument, NULL, OPT_GROUP },
		{ "no-group", no_argument, NULL, OPT_NO_GROUP },
		{ "header", no_argument, NULL, OPT_HEADER },
		{ "header-only", no_argument, NULL, OPT_HEADER_ONLY },
		{ "show-info", no_argument, NULL, 'I' },
		{ "threads", no_argument, NULL, 'T' },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "cpu", required_argument, NULL, 'C' },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "quiet", no_argument, NULL, 'q' },
		{ "hide-unresolved", no_argument, NULL, 'U' },
		{ "field-separator", required_argument, NULL, 't' },
		{ "show-total-period", no_argument, NULL, OPT_TOTAL_PERIOD },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "inverted", no_argument, NULL, 'G' },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "tasks", no_argument, NULL, OPT_TASKS },
		{ "mmaps", no_argument, NULL, OPT_MMAPS },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "where", required_argument, NULL, OPT_WHERE },
		{ "fields", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_report_opts, ro, .input = "perf.data");
	char *end;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:s:g:nS:d:ITC:qUt:GF:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'i':
			ro.input = optarg;
			break;
		case 's':
			ro.sort = optarg;
			break;
		case OPT_CHILDREN:
			ro.children = true;
			ro.no_children = false;
			break;
		case OPT_NO_CHILDREN:
			ro.no_children = true;
			ro.children = false;
			break;
		case 'g':
			parse_graph(&ro, optarg);
			break;
		case 'n':
			ro.show_nr_samples = true;
			break;
		case OPT_COMM:
			ro.comm_list = optarg;
			break;
		case 'd':
		case OPT_DSOS:
			ro.dso_list = optarg;
			break;
		case 'S':
			ro.symbols = optarg;
			break;
		case OPT_GROUP:
			ro.group = 1;
			break;
		case OPT_NO_GROUP:
			ro.group = -1;
			break;
		case OPT_STDIO:
			break; /* the only output there is */
		case OPT_HEADER:
			ro.header = true;
			break;
		case OPT_HEADER_ONLY:
			ro.header_only = true;
			break;
		case 'I':
			ro.show_info = true;
			break;
		case 'T':
			ro.show_threads = true;
			break;
		case OPT_PID:
			ro.pid_list = optarg;
			break;
		case OPT_TID:
			ro.tid_list = optarg;
			break;
		case 'C':
			ro.cpu_list = optarg;
			break;
		case OPT_TIME:
			ro.time_range = optarg;
			break;
		case 'q':
			ro.quiet = true;
			break;
		case 'U':
			ro.hide_unresolved = true;
			break;
		case 't':
			ro.field_sep = optarg;
			break;
		case OPT_TOTAL_PERIOD:
			ro.show_total_period = true;
			break;
		case OPT_MAX_STACK: {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || v > 1000000)
				die_usage("--max-stack takes a number: %s",
					  optarg);
			ro.max_stack = (unsigned int)v;
			ro.has_max_stack = true;
			break;
		}
		case 'G':
			/* perf's alias of -g caller */
			ro.callchain_order = 1;
			break;
		case OPT_STATS:
			ro.stats = true;
			break;
		case OPT_TASKS:
			ro.tasks = true;
			break;
		case OPT_MMAPS:
			ro.mmaps = true;
			break;
		case OPT_FROM: /* a fleet's samples in a store */
			ro.from = optarg;
			break;
		case OPT_WHERE:
			ro.where = optarg;
			break;
		case 'F':
			ro.fields = optarg;
			break;
		case OPT_SYMFS:
			ro.symfs = symfs_dir(optarg);
			break;
		case OPT_INLINE:
		case OPT_NO_INLINE:
			ro.no_inline = c == OPT_NO_INLINE;
			break;
		case OPT_PLIMIT:
			ro.percent_limit = strtod(optarg, &end);
			if (*end || ro.percent_limit < 0)
				die_usage(
					"--percent-limit takes a percentage: %s",
					optarg);
			break;
		case 'h':
			printf("usage: %s report [-i FILE|-] [--sort comm,pid,dso,symbol,cpu,trace,srcline,srcfile] [--children|--no-children]\n"
			       "                [-g none] [-n] [--percent-limit PCT] [--stdio] [--group|--no-group]\n"
			       "                [--comm COMMS] [-d|--dsos DSOS] [-S|--symbols SYMS] [--symfs DIR]\n"
			       "                [--header | --header-only] [-I|--show-info] [-T|--threads]\n"
			       "                [--pid PIDS] [--tid TIDS] [-C|--cpu CPUS] [--time START,END|PCT]\n"
			       "                [-q|--quiet] [-U|--hide-unresolved] [-t|--field-separator SEP]\n"
			       "                [--show-total-period] [--max-stack N] [-G|--inverted] [--stats] [--tasks] [--mmaps]\n"
			       "                [-F|--fields overhead,sample,period,KEYS (any order)] [--no-inline]\n"
			       "       %s report --from clickhouse=URL [--where SQL] [--sort comm,pid,dso,sym,host] [-n] [-q]\n",
			       prog, prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (ro.where && !ro.from)
		die_usage("--where needs --from: %s", ro.where);
	if (ro.from)
		ro.input = ro.from;
	else if (!input_given(argc, argv) && stdin_is_fifo())
		ro.input = "-";
	err = perfring_report(&ro, stdout);
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: report %s: %s\n", prog, ro.input,
			strerror(-err));
		return 1;
	}
	return 0;
}
