// SPDX-License-Identifier: MIT
/* perfring script: perf script's text, one line per sample. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_script(int argc, char **argv)
{
	enum { OPT_NS = 256, OPT_SLOW_TP };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "ns", no_argument, NULL, OPT_NS },
		{ "slow-tracepoints", no_argument, NULL, OPT_SLOW_TP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_script_opts, so, .input = "perf.data");
	char fields[4096] = "";
	int c, err;

	while ((c = getopt_long(argc, argv, "i:F:Gh", opts, NULL)) != -1) {
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
		case 'h':
			printf("usage: %s script [-i FILE|-] [-F FIELDS] [-G] [--ns]\n"
			       "  -F comm,pid,tid,cpu,time,event,period,ip,sym,symoff,dso,addr,trace\n"
			       "     (TYPE:FIELDS for one type: hw sw trace raw break; +F/-F edit the defaults)\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!input_given(argc, argv) && stdin_is_fifo())
		so.input = "-"; /* as perf: a pipe on stdin is the input */
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
