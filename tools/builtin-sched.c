// SPDX-License-Identifier: MIT
/*
 * perfring sched: perf sched's record, timehist and latency.  `sched
 * record` is `record` with perf sched record's events and options (the
 * rest of its arguments are record's); the readings are perfring_sched().
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void sched_usage(FILE *f)
{
	fprintf(f,
		"usage: %s sched record [RECORD OPTIONS] [-- COMMAND [ARGS]]\n"
		"       %s sched timehist [-i FILE] [-s|-S] [-w] [-V]\n"
		"       %s sched latency [-i FILE] [-s KEYS] [-p]\n"
		"  record: the events perf sched record records, on every CPU (-a), into\n"
		"          perf.data (-o), until COMMAND ends, --duration or Ctrl-C\n"
		"  timehist: a line per context switch: the task switched out, its wait\n"
		"          time, scheduling delay and run time (perf sched timehist);\n"
		"          -s the summary alone, -S with it, -w wake-ups, -V CPU columns\n"
		"  latency: per task its runtime, switches and delays from wake-up to run\n"
		"          (perf sched latency); -s sort keys (avg,max,switch,runtime,pid),\n"
		"          -p per thread, not merged by name\n",
		prog, prog, prog);
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
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "summary", no_argument, NULL, 's' },
		{ "with-summary", no_argument, NULL, 'S' },
		{ "wakeups", no_argument, NULL, 'w' },
		{ "cpu-visual", no_argument, NULL, 'V' },
		{ "sort", required_argument, NULL, 'k' },
		{ "pids", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_sched_opts, so, .input = "perf.data",
		      .command = latency ? "latency" : "timehist");
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, latency ? "i:s:ph" : "i:sSwVh",
				opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			so.input = optarg;
			break;
		case 's':
			if (latency)
				so.sort = optarg;
			else
				so.summary_only = true;
			break;
		case 'k':
			if (!latency)
				die_usage("--sort is latency's: %s", optarg);
			so.sort = optarg;
			break;
		case 'S':
			so.with_summary = true;
			break;
		case 'w':
			so.wakeups = true;
			break;
		case 'V':
			so.cpu_visual = true;
			break;
		case 'p':
			so.per_thread = true;
			break;
		case 'h':
			sched_usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
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
