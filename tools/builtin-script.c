// SPDX-License-Identifier: MIT
/* perfring script: perf script's text, one line per sample. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

/* What script's options set: the library's opts and the CLI's own. */
struct script_args {
	struct perfring_script_opts so;
	char fields[4096]; /* the -F lists, joined */
	bool no_trace_dat;
};

/* perf takes one -F per event type: join them. */
static void opt_fields(void *args, const char *arg)
{
	struct script_args *sa = args;

	if (strlen(sa->fields) + strlen(arg) + 2 > sizeof(sa->fields))
		die_usage("-F lists too long: %s", arg);
	if (sa->fields[0])
		strcat(sa->fields, ";");
	strcat(sa->fields, arg);
	sa->so.fields = sa->fields;
}

static void opt_symfs(void *args, const char *arg)
{
	((struct script_args *)args)->so.symfs = symfs_dir(arg);
}

static void opt_max_stack(void *args, const char *arg)
{
	struct script_args *sa = args;
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || n > UINT_MAX)
		die_usage("--max-stack takes a number: %s", arg);
	sa->so.set_max_stack = true;
	sa->so.max_stack = (unsigned)n;
}

#define CLI_ARGS struct script_args
static const struct cli_option script_options[] = {
	OPT_GROUP("Input:"),
	OPT_STRING('i', "input", so.input, "FILE|-",
		   "perf.data to read (default perf.data; -: perf's pipe\n"
		   "format on standard input, as is a pipe on stdin)"),
	OPT_STRING(0, "trace-dat", so.trace_dat, "FILE",
		   "ftrace events to merge in by time (default: FILE.trace.dat\n"
		   "beside the perf.data, from record --tracefs-event)"),
	OPT_BOOLEAN(0, "no-trace-dat", no_trace_dat,
		    "not the trace.dat beside the perf.data"),
	OPT_CALLBACK(0, "symfs", "DIR", opt_symfs,
		     "look for objects and debug files under DIR"),
	OPT_GROUP("Output (as perf script):"),
	OPT_CALLBACK(
		'F', "fields", "FIELDS", opt_fields,
		"comm,pid,tid,cpu,time,event,period,ip,sym,symoff,dso,addr,\n"
		"trace,srcline,callindent (TYPE:FIELDS for one type: hw sw\n"
		"trace raw break; +F/-F edit the defaults); repeatable"),
	OPT_BOOLEAN('G', "hide-call-graph", so.hide_callchain,
		    "no call chains"),
	OPT_BOOLEAN(0, "ns", so.ns, "times with nanoseconds"),
	OPT_BOOLEAN(0, "reltime", so.reltime,
		    "times from the first sample printed"),
	OPT_BOOLEAN(0, "deltatime", so.deltatime,
		    "times from the sample before"),
	OPT_CALLBACK(0, "max-stack", "N", opt_max_stack,
		     "at most N frames of each call chain"),
	OPT_STRING(0, "stop-bt", so.stop_bt, "SYMS",
		   "end a call chain at one of these symbols"),
	OPT_BOOLEAN(0, "full-source-path", so.full_source_path,
		    "srcline with the whole path"),
	OPT_SET_BOOL(0, "demangle", so.no_demangle, false,
		     "C++ and Rust names demangled (the default)"),
	OPT_SET_BOOL(0, "no-demangle", so.no_demangle, true,
		     "names as the symbol tables have them"),
	OPT_SET_BOOL(0, "inline", so.no_inline, false,
		     "inlined functions in call chains (the default)"),
	OPT_SET_BOOL(0, "no-inline", so.no_inline, true,
		     "no inlined functions"),
	OPT_BOOLEAN(0, "header", so.header,
		    "the file's header first, as perf 6.1 prints it"),
	OPT_BOOLEAN(0, "header-only", so.header_only, "that header alone"),
	OPT_BOOLEAN('I', "show-info", so.show_info,
		    "with --header: the topology sections in full"),
	OPT_BOOLEAN(0, "slow-tracepoints", so.slow_tracepoints,
		    "format tracepoints with libtraceevent itself (same text)"),
	OPT_GROUP("Which samples:"),
	OPT_STRING(0, "pid", so.pid_list, "PIDS", "of these processes"),
	OPT_STRING(0, "tid", so.tid_list, "TIDS", "of these threads"),
	OPT_STRING(0, "comm", so.comm_list, "COMMS", "of these commands"),
	OPT_STRING('C', "cpu", so.cpu_list, "CPUS", "on these CPUs"),
	OPT_STRING(0, "time", so.time_range, "START,END", "in this time range"),
	OPT_STRING('S', "symbols", so.symbols, "SYMS", "in these symbols"),
	OPT_STRING(0, "dsos", so.dsos, "DSOS", "in these objects"),
	OPT_GROUP(
		"Side-band records among the samples, as perf script prints them:"),
	OPT_BOOLEAN(0, "show-task-events", so.show_task_events,
		    "COMM, FORK, EXIT"),
	OPT_BOOLEAN(0, "show-mmap-events", so.show_mmap_events, "MMAP, MMAP2"),
	OPT_BOOLEAN(0, "show-lost-events", so.show_lost_events,
		    "LOST, LOST_SAMPLES"),
	OPT_BOOLEAN(0, "show-switch-events", so.show_switch_events,
		    "SWITCH, SWITCH_CPU_WIDE"),
	OPT_BOOLEAN(0, "show-round-events", so.show_round_events,
		    "FINISHED_ROUND (in file order, not by time)"),
	OPT_BOOLEAN(0, "show-namespace-events", so.show_namespace_events,
		    "NAMESPACES"),
	OPT_BOOLEAN(0, "show-cgroup-events", so.show_cgroup_events, "CGROUP"),
	OPT_BOOLEAN(0, "show-bpf-events", so.show_bpf_events,
		    "KSYMBOL, BPF_EVENT"),
	OPT_BOOLEAN(0, "show-text-poke-events", so.show_text_poke_events,
		    "TEXT_POKE"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command script_command = {
	.name = "script",
	.usage = (const char *const[]){ "[-i FILE|-] [OPTIONS]", NULL },
	.options = script_options,
	.notes =
		"FILE.trace.dat beside the perf.data (record --tracefs-event) is merged\n"
		"in by time, its lines as trace-cmd report prints them.\n",
};

int cmd_script(int argc, char **argv)
{
	struct script_args sa = {
		.so = { .sz = sizeof(sa.so), .input = "perf.data" },
	};
	struct perfring_script_opts so;
	char beside[4096];
	bool no_trace_dat;
	int first = cli_parse(&script_command, argc, argv, &sa, NULL);
	int err;

	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	so = sa.so;
	no_trace_dat = sa.no_trace_dat;
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
