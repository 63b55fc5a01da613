// SPDX-License-Identifier: MIT
/*
 * perfring record: kernel perf events (and the application rings of the
 * programs it traces) into perf.data.  `record --tracefs` and AUX area
 * recording (`--replay-cs`, `-e cs_etm//`...) have their own front-ends,
 * builtin-record-tracefs.c and builtin-record-aux.c, picked here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

static bool wants_tracefs(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--tracefs"))
			return true;
	return false;
}

static bool aux_pmu_event(const char *e)
{
	static const char *const pmus[] = { "cs_etm", "cs-etm", "intel_pt",
					    "arm_spe" };

	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++)
		if (!strncmp(e, pmus[i], strlen(pmus[i])))
			return true;
	return false;
}

static bool wants_aux(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strncmp(argv[i], "--replay-cs", 11))
			return true;
		if ((!strcmp(argv[i], "-e") || !strcmp(argv[i], "--event")) &&
		    i + 1 < argc && aux_pmu_event(argv[i + 1]))
			return true;
		if (!strncmp(argv[i], "-e", 2) && aux_pmu_event(argv[i] + 2))
			return true;
	}
	return false;
}

int cmd_record(int argc, char **argv)
{
	if (wants_aux(argc, argv))
		return cmd_record_aux(argc, argv);
	if (wants_tracefs(argc, argv))
		return cmd_record_tracefs(argc, argv);
	return cmd_record_perf(argc, argv);
}

static void record_progress(const struct perfring_record_stats *st, void *ctx)
{
	(void)ctx;
	if (st->app_rings)
		fprintf(stderr,
			"\r[ recording: %" PRIu64 " samples, %" PRIu64
			" application events, %.2f MB, %" PRIu64
			" lost ]\033[K",
			st->samples, st->app_events, (double)st->bytes / 1e6,
			st->lost + st->app_lost);
	else
		fprintf(stderr,
			"\r[ recording: %" PRIu64 " samples, %.2f MB, %" PRIu64
			" lost ]\033[K",
			st->samples, (double)st->bytes / 1e6, st->lost);
}

/*
 * What the recorder needs before it reads rings that traced programs
 * write (process-wide, so here and not in the library): the SIGBUS guard,
 * so a program that truncates its ring file cannot kill us, and every
 * descriptor the hard limit allows, one ring taking two.
 */
static void record_prepare(void)
{
	struct rlimit rl;
	int err = perfring_sigbus_guard();

	if (err)
		fprintf(stderr,
			"%s: warning: cannot install the SIGBUS guard: %s\n",
			prog, strerror(-err));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			fprintf(stderr,
				"%s: warning: cannot raise the open-file limit: %s\n",
				prog, strerror(errno));
	}
}

/* What the recorder measured of the application rings' loss, in words. */
static void app_loss_detail(const struct perfring_record_stats *st,
			    uint64_t unattached)
{
	fprintf(stderr,
		"[ perfring record: application loss the recorder measured:");
	if (st->app_corrupt)
		fprintf(stderr,
			" %" PRIu64 " damaged records or ranges (%" PRIu64
			" bytes) skipped;",
			st->app_corrupt, st->app_corrupt_bytes);
	if (st->app_dead_reservations)
		fprintf(stderr,
			" %" PRIu64
			" records reserved and never written by dead producers (1 lost event each, counted above);",
			st->app_dead_reservations);
	if (st->app_rings_dropped)
		fprintf(stderr,
			" %u rings dropped after their program truncated them (%" PRIu64
			" bytes unread);",
			st->app_rings_dropped, st->app_dropped_bytes);
	if (unattached)
		fprintf(stderr,
			" %" PRIu64
			" rings never read, their events all lost (%u over --app-max-rings, %u for want of file descriptors; %" PRIu64
			" bytes by their control pages);",
			unattached, st->app_rings_over_cap, st->app_rings_no_fd,
			st->app_unattached_bytes);
	if (st->app_rings_refused)
		fprintf(stderr,
			" %u files named like rings refused (unsafe or not rings);",
			st->app_rings_refused);
	fprintf(stderr, " ]\n");
}

/* The application part of the summary: what the programs claim apart
 * from what the recorder measured, in words. */
static void app_summary(const struct perfring_record_stats *st)
{
	uint64_t unattached =
		(uint64_t)st->app_rings_over_cap + st->app_rings_no_fd;
	bool rings_lost = unattached || st->app_rings_dropped;
	char lost[160];

	if (!st->app_rings && !unattached && !st->app_rings_refused &&
	    !st->app_rings_dropped)
		return;
	if (st->app_lost_implausible)
		snprintf(lost, sizeof(lost),
			 "lost: the programs claim %" PRIu64 " (implausible)",
			 st->app_lost);
	else if (rings_lost)
		snprintf(
			lost, sizeof(lost),
			"%" PRIu64
			" lost by the programs' count, more in rings the recorder could not read (below)",
			st->app_lost);
	else
		snprintf(lost, sizeof(lost), "%" PRIu64 " lost", st->app_lost);
	fprintf(stderr,
		"[ perfring record: application: %" PRIu64
		" events of %u types from %u rings, %s, %" PRIu64
		" damaged ]\n",
		st->app_events, st->app_event_types, st->app_rings, lost,
		st->app_corrupt);
	if (st->app_corrupt || st->app_dead_reservations || rings_lost ||
	    st->app_rings_refused)
		app_loss_detail(st, unattached);
	if (st->app_lost_implausible)
		fprintf(stderr,
			"Warning: %" PRIu64
			" LOST records claim more events (over 2^40) than a program can emit: the application's loss count is a claim, not a measurement.\n",
			st->app_lost_implausible);
	else if (st->app_lost)
		fprintf(stderr,
			"Warning: the application dropped %" PRIu64
			" events (its rings were full): set PERFRING_RING_SIZE larger.\n",
			st->app_lost);
	if (rings_lost)
		fprintf(stderr,
			"Warning: application events were lost in rings the recorder could not read (see above).\n");
}

static void record_usage(void)
{
	printf("usage: %s record [-e EVENT]... [-a] [-C CPUS] [-p PID] [-t TID] [--per-thread]\n"
	       "                [-m PAGES|SIZE] [-F HZ | -c PERIOD] [-g] [-o FILE|-] [--overwrite]\n"
	       "                [-q] [--duration SECS] [--no-app] [--app-max-rings N]\n"
	       "                [-- COMMAND [ARGS]]\n"
	       "  a COMMAND (or -p PID) that links libperfring records its own events too;\n"
	       "  at most N of its rings (default 4096) are read at once\n",
	       prog);
}

/*
 * The options into @ro, the events into @events (64 at most).  Returns -1
 * to go on, or the exit status (help, bad option).
 */
static int record_parse(int argc, char **argv, struct perfring_record_opts *ro,
			const char **events, bool *quiet)
{
	enum {
		OPT_PER_THREAD = 256,
		OPT_OVERWRITE,
		OPT_NO_APP,
		OPT_APP_MAX_RINGS
	};
	static const struct option opts[] = {
		{ "no-app", no_argument, NULL, OPT_NO_APP },
		{ "app-max-rings", required_argument, NULL, OPT_APP_MAX_RINGS },
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c, nev = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "+e:aC:p:t:m:F:c:go:qD:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'e':
			if (nev == 64)
				die_usage("at most 64 events (%s)", optarg);
			events[nev++] = optarg;
			break;
		case 'a':
			ro->all_cpus = true;
			break;
		case 'C':
			ro->cpu_list = optarg;
			break;
		case 'p':
			ro->pid_list = optarg;
			break;
		case 't':
			ro->tid_list = optarg;
			break;
		case OPT_PER_THREAD:
			ro->per_thread = true;
			break;
		case 'm':
			ro->mmap_bytes = parse_mmap(optarg);
			break;
		case 'F':
			ro->freq = strtoull(optarg, &end, 10);
			if (*end || !ro->freq)
				die_usage("-F takes a frequency in Hz: %s",
					  optarg);
			break;
		case 'c':
			ro->period = strtoull(optarg, &end, 10);
			if (*end || !ro->period)
				die_usage(
					"-c takes a period (events per sample): %s",
					optarg);
			break;
		case 'g':
			ro->callchain = true;
			break;
		case 'o':
			ro->output = optarg;
			break;
		case OPT_OVERWRITE:
			ro->overwrite = true;
			break;
		case OPT_NO_APP:
			ro->no_app = true;
			break;
		case OPT_APP_MAX_RINGS:
			v = strtoull(optarg, &end, 10);
			if (*end || !v || v > UINT32_MAX)
				die_usage("--app-max-rings takes a count: %s",
					  optarg);
			ro->app_max_rings = (uint32_t)v;
			break;
		case 'q':
			*quiet = true;
			break;
		case 'D':
			ro->duration = parse_seconds(optarg);
			break;
		case 'h':
			record_usage();
			return 0;
		default:
			return 2;
		}
	}
	ro->events = events;
	ro->nr_events = nev;
	ro->argv = optind < argc ? &argv[optind] : NULL;
	return -1;
}

static void record_summary(const struct perfring_record_opts *ro,
			   const struct perfring_record_stats *st)
{
	const char *out = ro->output ? ro->output : "perf.data";

	fprintf(stderr,
		"[ perfring record: Woken up %" PRIu64
		" times to write data ]\n",
		st->wakeups);
	fprintf(stderr,
		"[ perfring record: Captured and wrote %.3f MB %s (%" PRIu64
		" samples, %" PRIu64 " lost in %" PRIu64
		" LOST records, %" PRIu64 " lost samples) ]\n",
		(double)st->bytes / 1e6, !strcmp(out, "-") ? "<stdout>" : out,
		st->samples, st->lost, st->lost_records, st->lost_samples);
	if (st->lost)
		fprintf(stderr,
			"Warning: the kernel dropped %" PRIu64
			" events in %" PRIu64
			" chunks: use a larger -m or fewer events.\n",
			st->lost, st->lost_records);
	app_summary(st);
}

int cmd_record_perf(int argc, char **argv)
{
	const char *events[64];
	struct perfring_record_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_record_opts, ro, .control_fd = -1);
	bool quiet = false;
	int err;

	err = record_parse(argc, argv, &ro, events, &quiet);
	if (err >= 0)
		return err;
	ro.cmdline_argc = cli_cmdline_argc;
	ro.cmdline_argv = cli_cmdline_argv;
	ro.control_fd = control_setup(true);
	if (ro.control_fd < 0)
		return 1;
	record_prepare();
	/* No progress line over perf.data going to standard output. */
	if (!quiet && isatty(STDERR_FILENO) &&
	    (!ro.output || strcmp(ro.output, "-")))
		ro.progress = record_progress;
	err = perfring_record(&ro, &st);
	if (ro.progress)
		fprintf(stderr, "\r\033[K");
	if (!quiet && st.sz >= sizeof(st) && (!err || st.bytes))
		record_summary(&ro, &st);
	if (err)
		return 1;
	if (st.child_status >= 0 && WIFEXITED(st.child_status))
		return WEXITSTATUS(st.child_status);
	return 0;
}
