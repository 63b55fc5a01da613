// SPDX-License-Identifier: MIT
/*
 * perfring sched: perf sched's record, timehist and latency.  `sched
 * record` is `record` with perf sched record's events and options (the
 * rest of its arguments are record's); the readings are perfring_sched().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

#define CLI_ARGS struct perfring_sched_opts
static const struct cli_option timehist_options[] = {
	OPT_STRING('i', "input", input, "FILE",
		   "perf.data to read (default perf.data)"),
	OPT_BOOLEAN('s', "summary", summary_only,
		    "the per-task summary alone, not the lines"),
	OPT_BOOLEAN('S', "with-summary", with_summary,
		    "the lines, then the summary"),
	OPT_BOOLEAN('w', "wakeups", wakeups, "the wake-up events among them"),
	OPT_BOOLEAN('V', "cpu-visual", cpu_visual,
		    "a column per CPU: where each task ran"),
	OPT_END(),
};

static const struct cli_option latency_options[] = {
	OPT_STRING('i', "input", input, "FILE",
		   "perf.data to read (default perf.data)"),
	OPT_STRING('s', "sort", sort, "KEYS",
		   "sort by avg, max, switch, runtime, pid (default\n"
		   "avg,max,switch,runtime)"),
	OPT_BOOLEAN('p', "pids", per_thread,
		    "a line per thread, not merged by command name"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command timehist_command = {
	.name = "sched timehist",
	.usage = (const char *const[]){ "[-i FILE] [-s|-S] [-w] [-V]", NULL },
	.options = timehist_options,
	.notes =
		"A line per context switch: the task switched out, its wait time,\n"
		"scheduling delay and run time, as perf sched timehist prints them.\n",
};

static const struct cli_command latency_command = {
	.name = "sched latency",
	.usage = (const char *const[]){ "[-i FILE] [-s KEYS] [-p]", NULL },
	.options = latency_options,
	.notes =
		"Per task its runtime, switches and delays from wake-up to run,\n"
		"as perf sched latency prints them.\n",
};

static void sched_usage(FILE *f)
{
	fprintf(f,
		"usage: %s sched record [RECORD OPTIONS] [-- COMMAND [ARGS]]\n"
		"       %s sched timehist [-i FILE] [-s|-S] [-w] [-V]\n"
		"       %s sched latency [-i FILE] [-s KEYS] [-p]\n"
		"  record: the events perf sched record records, on every CPU (-a), into\n"
		"          perf.data (-o), until COMMAND ends, --duration or Ctrl-C\n"
		"  timehist: a line per context switch (perf sched timehist)\n"
		"  latency: per task its runtime, switches and delays (perf sched latency)\n"
		"Each subcommand's options: %s sched SUBCOMMAND --help.\n",
		prog, prog, prog, prog);
}

struct event_probe {
	const char *name;
	bool found;
};

static void probe_event(const char *name, const char *kind, void *ctx)
{
	struct event_probe *p = ctx;

	(void)kind;
	if (!strcmp(name, p->name))
		p->found = true;
}

static bool have_event(const char *name)
{
	struct event_probe p = { name, false };

	perfring_event_list(probe_event, &p);
	return p.found;
}

/* perf sched record: perf record -a -R -m 1024 -c 1 and the sched events
 * (the schedstat ones where the kernel has them, sched_waking where it
 * exists, else sched_wakeup), then the caller's options. */
static int sched_record(int argc, char **argv)
{
	static const char *const fixed[] = {
		"-a",
		"-m",
		"1024",
		"-c",
		"1",
		"-e",
		"sched:sched_switch",
		"-e",
		"sched:sched_stat_runtime",
		"-e",
		"sched:sched_process_fork",
		"-e",
		"sched:sched_wakeup_new",
		"-e",
		"sched:sched_migrate_task",
	};
	static const char *const schedstat[] = { "sched:sched_stat_wait",
						 "sched:sched_stat_sleep",
						 "sched:sched_stat_iowait" };
	size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	char **av = calloc((size_t)argc + nf + 12, sizeof(*av));
	int n = 0, rc;

	if (!av) {
		perror("sched record");
		return 1;
	}
	av[n++] = (char *)"record";
	for (size_t i = 0; i < nf; i++)
		av[n++] = (char *)fixed[i];
	for (size_t i = 0; i < sizeof(schedstat) / sizeof(schedstat[0]); i++)
		if (have_event(schedstat[i])) {
			av[n++] = (char *)"-e";
			av[n++] = (char *)schedstat[i];
		}
	av[n++] = (char *)"-e";
	av[n++] = have_event("sched:sched_waking") ?
			  (char *)"sched:sched_waking" :
			  (char *)"sched:sched_wakeup";
	for (int i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	rc = cmd_record(n, av);
	free(av);
	return rc;
}

static int sched_read(int argc, char **argv, bool latency)
{
	PERFRING_OPTS(perfring_sched_opts, so, .input = "perf.data",
		      .command = latency ? "latency" : "timehist");
	int first = cli_parse(latency ? &latency_command : &timehist_command,
			      argc, argv, &so, NULL),
	    err;

	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	err = perfring_sched(&so, stdout);
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (err) {
		fflush(stdout);
		fprintf(stderr, "%s: sched %s %s: %s\n", prog, so.command,
			so.input, strerror(-err));
		return 1;
	}
	return 0;
}

int cmd_sched(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		sched_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "record"))
		return sched_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "timehist"))
		return sched_read(argc - 1, argv + 1, false);
	if (!strcmp(argv[1], "latency") || !strcmp(argv[1], "lat"))
		return sched_read(argc - 1, argv + 1, true);
	fprintf(stderr, "%s: sched: unknown subcommand '%s'\n", prog, argv[1]);
	sched_usage(stderr);
	return 2;
}
