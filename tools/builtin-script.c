// SPDX-License-Identifier: MIT
/* perfring script: perf script's text, one line per sample. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_script(int argc, char **argv)
{
	enum {
		OPT_NS = 256,
		OPT_SLOW_TP,
		OPT_TRACE_DAT,
		OPT_NO_TRACE_DAT,
		OPT_SYMFS,
		OPT_PID,
		OPT_TID,
		OPT_CPU,
		OPT_COMM,
		OPT_TIME,
		OPT_RELTIME,
		OPT_DELTATIME,
		OPT_TASK,
		OPT_MMAP,
		OPT_HEADER,
		OPT_HEADER_ONLY,
		OPT_INLINE,
		OPT_NO_INLINE,
		OPT_LOST,
		OPT_SWITCH,
		OPT_ROUND,
		OPT_NAMESPACE,
		OPT_CGROUP,
		OPT_BPF,
		OPT_TEXT_POKE,
		OPT_MAX_STACK,
		OPT_STOP_BT,
		OPT_DSOS,
		OPT_FULL_SRC,
		OPT_DEMANGLE,
		OPT_NO_DEMANGLE,
	};
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "ns", no_argument, NULL, OPT_NS },
		{ "slow-tracepoints", no_argument, NULL, OPT_SLOW_TP },
		{ "trace-dat", required_argument, NULL, OPT_TRACE_DAT },
		{ "no-trace-dat", no_argument, NULL, OPT_NO_TRACE_DAT },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "symbols", required_argument, NULL, 'S' },
		{ "reltime", no_argument, NULL, OPT_RELTIME },
		{ "deltatime", no_argument, NULL, OPT_DELTATIME },
		{ "show-task-events", no_argument, NULL, OPT_TASK },
		{ "show-mmap-events", no_argument, NULL, OPT_MMAP },
		{ "show-lost-events", no_argument, NULL, OPT_LOST },
		{ "show-switch-events", no_argument, NULL, OPT_SWITCH },
		{ "show-round-events", no_argument, NULL, OPT_ROUND },
		{ "show-namespace-events", no_argument, NULL, OPT_NAMESPACE },
		{ "show-cgroup-events", no_argument, NULL, OPT_CGROUP },
		{ "show-bpf-events", no_argument, NULL, OPT_BPF },
		{ "show-text-poke-events", no_argument, NULL, OPT_TEXT_POKE },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "stop-bt", required_argument, NULL, OPT_STOP_BT },
		{ "dsos", required_argument, NULL, OPT_DSOS },
		{ "full-source-path", no_argument, NULL, OPT_FULL_SRC },
		{ "demangle", no_argument, NULL, OPT_DEMANGLE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "header", no_argument, NULL, OPT_HEADER },
		{ "header-only", no_argument, NULL, OPT_HEADER_ONLY },
		{ "show-info", no_argument, NULL, 'I' },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_script_opts, so, .input = "perf.data");
	char fields[4096] = "", beside[4096];
	bool no_trace_dat = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:F:GS:C:Ih", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			so.input = optarg;
			break;
		case 'F':
			/* perf takes one -F per event type: join them. */
			if (strlen(fields) + strlen(optarg) + 2 >
			    sizeof(fields))
				die_usage("-F lists too long: %s", optarg);
			if (fields[0])
				strcat(fields, ";");
			strcat(fields, optarg);
			so.fields = fields;
			break;
		case 'G':
			so.hide_callchain = true;
			break;
		case OPT_NS:
			so.ns = true;
			break;
		case OPT_SLOW_TP:
			so.slow_tracepoints = true;
			break;
		case OPT_TRACE_DAT:
			so.trace_dat = optarg;
			break;
		case OPT_NO_TRACE_DAT:
			no_trace_dat = true;
			break;
		case OPT_SYMFS:
			so.symfs = symfs_dir(optarg);
			break;
		case OPT_PID:
			so.pid_list = optarg;
			break;
		case OPT_TID:
			so.tid_list = optarg;
			break;
		case 'C':
		case OPT_CPU:
			so.cpu_list = optarg;
			break;
		case OPT_COMM:
			so.comm_list = optarg;
			break;
		case OPT_TIME:
			so.time_range = optarg;
			break;
		case 'S':
			so.symbols = optarg;
			break;
		case OPT_RELTIME:
			so.reltime = true;
			break;
		case OPT_DELTATIME:
			so.deltatime = true;
			break;
		case OPT_TASK:
			so.show_task_events = true;
			break;
		case OPT_MMAP:
			so.show_mmap_events = true;
			break;
		case OPT_LOST:
			so.show_lost_events = true;
			break;
		case OPT_SWITCH:
			so.show_switch_events = true;
			break;
		case OPT_ROUND:
			so.show_round_events = true;
			break;
		case OPT_NAMESPACE:
			so.show_namespace_events = true;
			break;
		case OPT_CGROUP:
			so.show_cgroup_events = true;
			break;
		case OPT_BPF:
			so.show_bpf_events = true;
			break;
		case OPT_TEXT_POKE:
			so.show_text_poke_events = true;
			break;
		case OPT_MAX_STACK: {
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 0);
			if (errno || end == optarg || *end ||
			    optarg[0] == '-' || n > UINT_MAX)
				die_usage("--max-stack takes a number: %s",
					  optarg);
			so.set_max_stack = true;
			so.max_stack = (unsigned)n;
			break;
		}
		case OPT_STOP_BT:
			so.stop_bt = optarg;
			break;
		case OPT_DSOS:
			so.dsos = optarg;
			break;
		case OPT_FULL_SRC:
			so.full_source_path = true;
			break;
		case OPT_DEMANGLE:
		case OPT_NO_DEMANGLE:
			so.no_demangle = c == OPT_NO_DEMANGLE;
			break;
		case OPT_HEADER:
			so.header = true;
			break;
		case OPT_HEADER_ONLY:
			so.header_only = true;
			break;
		case 'I':
			so.show_info = true;
			break;
		case OPT_INLINE:
		case OPT_NO_INLINE:
			so.no_inline = c == OPT_NO_INLINE;
			break;
		case 'h':
			printf("usage: %s script [-i FILE|-] [-F FIELDS] [-G] [--ns]\n"
			       "                [--trace-dat FILE | --no-trace-dat] [--symfs DIR]\n"
			       "                [--pid PIDS] [--tid TIDS] [--comm COMMS] [-C|--cpu CPUS]\n"
			       "                [--time START,END] [-S|--symbols SYMS] [--reltime|--deltatime]\n"
			       "                [--show-task-events] [--show-mmap-events] [--show-lost-events]\n"
			       "                [--show-switch-events] [--show-round-events]\n"
			       "                [--show-namespace-events] [--show-cgroup-events]\n"
			       "                [--show-bpf-events] [--show-text-poke-events] [--no-inline]\n"
			       "                [--max-stack N] [--stop-bt SYMS] [--dsos DSOS]\n"
			       "                [--full-source-path] [--demangle|--no-demangle]\n"
			       "                [--header | --header-only] [-I|--show-info]\n"
			       "  FILE.trace.dat beside the perf.data (record --tracefs-event) is merged\n"
			       "  in by time, its lines as trace-cmd report prints them\n"
			       "  --show-*-events: those side-band records among the samples, as perf\n"
			       "  script prints them (--show-round-events: in file order, not by time)\n"
			       "  -F comm,pid,tid,cpu,time,event,period,ip,sym,symoff,dso,addr,trace,srcline,callindent\n"
			       "     (TYPE:FIELDS for one type: hw sw trace raw break; +F/-F edit the defaults)\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (so.reltime && so.deltatime)
		die_usage(
			"--reltime and --deltatime cannot be used together: %s",
			"pick one");
	if (!input_given(argc, argv) && stdin_is_fifo())
		so.input = "-"; /* as perf: a pipe on stdin is the input */
	/* The ftrace events of the same run, beside the perf.data. */
	if (!so.trace_dat && !no_trace_dat && strcmp(so.input, "-") &&
	    snprintf(beside, sizeof(beside), "%s.trace.dat", so.input) <
		    (int)sizeof(beside) &&
	    perfring_trace_dat_probe(beside) == 1)
		so.trace_dat = beside;
	if (no_trace_dat)
		so.trace_dat = NULL;
	if (strcmp(so.input, "-") && perfring_trace_dat_probe(so.input) == 1)
		err = perfring_trace_dat_script(so.input, stdout);
	else
		err = perfring_script(&so, stdout);
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (err) {
		fprintf(stderr, "%s: script %s: %s\n", prog, so.input,
			strerror(-err));
		return 1;
	}
	return 0;
}
