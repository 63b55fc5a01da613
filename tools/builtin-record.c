// SPDX-License-Identifier: MIT
/*
 * perfring record: kernel perf events, the application rings of the
 * programs it traces, (--tracefs-event) ftrace events and (--replay-cs
 * beside them) AUX trace, in one run, into perf.data and the trace.dat
 * beside it.  The options are parsed once for every mode
 * (record-options.c); `record --tracefs` and AUX area recording alone
 * (`--replay-cs`, `-e cs_etm//`...) print their own summaries
 * (builtin-record-tracefs.c, builtin-record-aux.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

int cmd_record(int argc, char **argv)
{
	struct record_args ra;
	int err = record_parse_args(argc, argv, &ra);

	if (err >= 0)
		return err;
	if (ra.mode == RECORD_AUX)
		return cmd_record_aux(&ra);
	if (ra.mode == RECORD_TRACEFS)
		return cmd_record_tracefs(&ra);
	return cmd_record_perf(&ra);
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
	else if (st->app_too_large)
		snprintf(lost, sizeof(lost),
			 "%" PRIu64 " lost (%" PRIu64
			 " of them too large for a ring record)",
			 st->app_lost, st->app_too_large);
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
	else if (st->app_lost) {
		uint64_t full = st->app_lost - st->app_too_large;

		if (st->app_too_large)
			fprintf(stderr,
				"Warning: the application dropped %" PRIu64
				" events larger than a ring record takes (%u bytes: see perfring_event_write() in perfring.h).\n",
				st->app_too_large,
				(unsigned)PERFRING_APP_EVENT_MAX);
		if (full)
			fprintf(stderr,
				"Warning: the application dropped %" PRIu64
				" events (its rings were full): set PERFRING_RING_SIZE larger.\n",
				full);
	}
	if (rings_lost)
		fprintf(stderr,
			"Warning: application events were lost in rings the recorder could not read (see above).\n");
}

/* perf's --switch-output[=signal|SIZE|TIME]: SIZE with B/K/M/G, TIME
 * with s/m/h/d. */
static void parse_switch_output(const char *arg,
				struct perfring_record_opts *ro)
{
	char *end;
	double v;

	if (!strcmp(arg, "signal")) {
		ro->switch_signal = true;
		return;
	}
	v = strtod(arg, &end);
	if (end == arg || v <= 0 || end[0] == 0 || end[1] != 0)
		die_usage(
			"--switch-output takes signal, a size (10M) or a time (30s): %s",
			arg);
	switch (end[0]) {
	case 'B':
		ro->switch_bytes = (uint64_t)v;
		return;
	case 'K':
		ro->switch_bytes = (uint64_t)(v * 1024);
		return;
	case 'M':
		ro->switch_bytes = (uint64_t)(v * 1024 * 1024);
		return;
	case 'G':
		ro->switch_bytes = (uint64_t)(v * 1024 * 1024 * 1024);
		return;
	case 's':
		ro->switch_secs = v;
		return;
	case 'm': /* perf: sizes upper case, m is minutes */
		ro->switch_secs = v * 60;
		return;
	case 'h':
		ro->switch_secs = v * 3600;
		return;
	case 'd':
		ro->switch_secs = v * 86400;
		return;
	default:
		die_usage(
			"--switch-output takes signal, a size (10M) or a time (30s): %s",
			arg);
	}
}

/* The shared options into the opts of the one recorder. */
static void record_opts_from(const struct record_args *ra,
			     struct perfring_record_opts *ro)
{
	ro->events = ra->events;
	ro->nr_events = ra->nr_events;
	ro->filters = ra->filters;
	ro->argv = ra->argv;
	ro->all_cpus = ra->all_cpus;
	ro->cpu_list = ra->cpu_list;
	ro->pid_list = ra->pid_list;
	ro->tid_list = ra->tid_list;
	ro->per_thread = ra->per_thread;
	ro->mmap_bytes = ra->mmap_bytes;
	ro->freq = ra->freq;
	ro->period = ra->period;
	ro->callchain = ra->callchain;
	ro->callchain_dwarf_size = ra->callchain_dwarf_size;
	ro->callchain_max_stack = ra->callchain_max_stack;
	ro->user_regs = ra->user_regs;
	ro->output = ra->output;
	ro->overwrite = ra->overwrite;
	ro->no_app = ra->no_app;
	ro->app_max_rings = ra->app_max_rings;
	ro->duration = ra->duration;
	ro->delay_ms = ra->delay_ms;
	ro->enable_ranges = ra->enable_ranges;
	ro->nr_enable_ranges = ra->nr_enable_ranges;
	ro->has_control = ra->has_control;
	ro->ctl_fd = ra->ctl_fd;
	ro->ack_fd = ra->ack_fd;
	ro->sample_addr = ra->sample_addr;
	ro->no_inherit = ra->no_inherit;
	ro->inherit_stat = ra->inherit_stat;
	ro->sample_bits = ra->sample_bits;
	ro->switch_events = ra->switch_events;
	ro->user_callchains = ra->user_callchains;
	ro->kernel_callchains = ra->kernel_callchains;
	ro->no_buildid = ra->no_buildid;
	ro->timestamp_filename = ra->timestamp_filename;
	ro->set_clockid = ra->set_clockid;
	ro->clockid = ra->clockid;
	ro->compression_level = ra->compression_level;
	ro->max_size = ra->max_size;
	ro->off_cpu = ra->off_cpu;
	ro->off_cpu_thresh_set = ra->off_cpu_thresh_set;
	ro->off_cpu_thresh_ms = ra->off_cpu_thresh_ms;
	ro->off_cpu_mode = ra->off_cpu_mode;
	if (ra->switch_output)
		parse_switch_output(ra->switch_output, ro);
}

/* --tracefs-event and the ftrace buffer options, for the same run. */
static void tracefs_opts_from(const struct record_args *ra,
			      struct perfring_tracefs_opts *to)
{
	to->events = ra->tracefs_events;
	to->nr_events = ra->nr_tracefs_events;
	to->output = ra->tracefs_output;
	to->buffer_bytes = ra->buffer_bytes;
	to->subbuf_bytes = ra->subbuf_bytes;
	to->buffer_percent = ra->buffer_percent;
	to->no_mmap = ra->no_mmap;
}

/* The ftrace part of the summary: one line, the details are
 * record --tracefs's. */
/* --switch-output: the last completed file (switched()). */
static char last_switched[4096];

static void tracefs_part_summary(const struct perfring_record_opts *ro,
				 const struct perfring_tracefs_stats *ts)
{
	char def[4096 + 16];
	const char *out = ro->tracefs->output;

	if (!out) {
		/* beside the perf.data, switched (--switch-output) or not */
		snprintf(def, sizeof(def), "%s.trace.dat",
			 last_switched[0] ? last_switched :
			 ro->output	  ? ro->output :
					    "perf.data");
		out = def;
	}
	fprintf(stderr,
		"[ perfring record: ftrace: wrote %.3f MB %s: events=%" PRIu64
		" pages=%" PRIu64 " lost=%" PRIu64 " (instance %s, %s) ]\n",
		(double)ts->file_bytes / 1e6, out, ts->events, ts->pages,
		ts->lost, ts->instance, ts->mapped ? "mmap" : "read()");
	if (ts->lost)
		fprintf(stderr,
			"Warning: the kernel dropped %" PRIu64
			" ftrace events: use a larger --buffer-size.\n",
			ts->lost);
}

/* --switch-output: a completed file, named as perf names it. */

static void switched(const char *path, void *ctx)
{
	(void)ctx;
	snprintf(last_switched, sizeof(last_switched), "%s", path);
	fprintf(stderr, "%s[ perfring record: Dump %s ]\n",
		isatty(STDERR_FILENO) ? "\r\033[K" : "", path);
}

static void record_summary(const struct perfring_record_opts *ro,
			   const struct perfring_record_stats *st)
{
	const char *out = last_switched[0] ? last_switched :
			  ro->output	   ? ro->output :
					     "perf.data";

	if (st->max_size_hit)
		/* perf: "perf size limit reached (N KB), stopping session" */
		fprintf(stderr,
			"[ perfring record: --max-size limit reached (%" PRIu64
			" KB), recording stopped; %" PRIu64 " records (%" PRIu64
			" bytes) read after it not written ]\n",
			ro->max_size / 1024, st->max_size_dropped,
			st->max_size_dropped_bytes);
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
	if (ro->off_cpu && st->offcpu_mode == PERFRING_OFF_CPU_BPF)
		fprintf(stderr,
			"[ perfring record: off-CPU: %" PRIu64
			" blocks in %" PRIu64 " samples, %" PRIu64
			" sched events lost, %" PRIu64
			" blocks left out, %" PRIu64
			" stacks not kept; measured by BPF in the kernel ]\n",
			st->offcpu_blocks, st->offcpu_samples, st->offcpu_lost,
			st->offcpu_dropped, st->offcpu_no_stack);
	else if (ro->off_cpu)
		fprintf(stderr,
			"[ perfring record: off-CPU: %" PRIu64
			" blocks in %" PRIu64 " samples, %" PRIu64
			" sched events lost, %" PRIu64
			" blocks left out; measured from the sched events ]\n",
			st->offcpu_blocks, st->offcpu_samples, st->offcpu_lost,
			st->offcpu_dropped);
	app_summary(st);
}

/* --push and its options. */
static void push_opts_from(const struct record_args *ra,
			   struct perfring_push_opts *po)
{
	po->sinks = ra->push;
	po->nr_sinks = ra->nr_push;
	po->every = ra->push_every;
	po->labels = ra->labels;
	po->nr_labels = ra->nr_labels;
	po->spool = ra->spool;
	po->spool_bytes = ra->spool_bytes;
}

/* Whether the program @cmd (a path, or a name looked up in $PATH as
 * execvp does) is a position-independent executable (ELF ET_DYN). */
static bool is_pie(const char *cmd)
{
	unsigned char h[18];
	char path[4096];
	const char *dirs = getenv("PATH"), *end;
	FILE *f = NULL;
	bool pie;

	if (strchr(cmd, '/')) {
		f = fopen(cmd, "rb");
	} else {
		for (; dirs && *dirs && !f; dirs = *end ? end + 1 : end) {
			end = strchr(dirs, ':');
			if (!end)
				end = dirs + strlen(dirs);
			if (snprintf(path, sizeof(path), "%.*s/%s",
				     (int)(end - dirs), dirs,
				     cmd) < (int)sizeof(path))
				f = fopen(path, "rb");
		}
	}
	if (!f)
		return false;
	pie = fread(h, 1, sizeof(h), f) == sizeof(h) &&
	      !memcmp(h, "\177ELF", 4) && h[5] == 1 /* little endian */ &&
	      h[16] == 3 && h[17] == 0; /* ET_DYN */
	fclose(f);
	return pie;
}

/*
 * A data breakpoint (-e mem:ADDR) that nothing hit leaves a file without
 * samples and the user without a clue (perf says nothing either).  The
 * usual cause: a position-independent program's variables are not at the
 * address its link map or `nm` shows, they move with its load address.
 */
static void unhit_breakpoints(const struct record_args *ra,
			      const struct perfring_record_stats *st)
{
	for (int i = 0; i < ra->nr_events && !st->samples; i++) {
		if (strncmp(ra->events[i], "mem:", 4))
			continue;
		if (ra->argv && ra->argv[0] && is_pie(ra->argv[0]))
			fprintf(stderr,
				"Warning: the breakpoint %s was never hit (0 samples): %s is a position-independent executable, so its variables sit at its load address plus their offset, not at a link-time address; take the address from the running process (/proc/PID/maps, gdb's &var) or build the program with -no-pie.\n",
				ra->events[i], ra->argv[0]);
		else
			fprintf(stderr,
				"Warning: the breakpoint %s was never hit (0 samples): nothing accessed that address, or this machine's debug registers do not fire (some virtual machines do not pass them through).\n",
				ra->events[i]);
		return;
	}
}

int cmd_record_perf(const struct record_args *ra)
{
	static struct perfring_tracefs_stats ts = { .sz = sizeof(ts) };
	static struct perfring_record_aux_stats as = { .sz = sizeof(as) };
	struct perfring_record_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_record_opts, ro, .control_fd = -1);
	PERFRING_OPTS(perfring_tracefs_opts, to, .control_fd = -1,
		      .buffer_percent = -1);
	PERFRING_OPTS(perfring_record_aux_opts, ao, .control_fd = -1,
		      .replay_cpu = -1);
	PERFRING_OPTS(perfring_push_opts, po);
	static struct perfring_push_stats ps = { .sz = sizeof(ps) };
	int err;

	if (ra->help) {
		record_help(RECORD_PERF);
		return 0;
	}
	record_opts_from(ra, &ro);
	if (ra->nr_tracefs_events) {
		tracefs_opts_from(ra, &to);
		ro.tracefs = &to;
		ro.tracefs_stats = &ts;
	}
	if (!ra->quiet)
		ro.switched = switched;
	if (ra->replay) {
		/* AUX trace in the same run: --overwrite, --duration, the output
		 * and the command are the perf recording's. */
		record_aux_opts_from(ra, &ao);
		ao.overwrite = false;
		ao.duration = 0;
		ao.output = NULL;
		ro.aux = &ao;
		ro.aux_stats = &as;
	}
	ro.cmdline_argc = cli_cmdline_argc;
	ro.cmdline_argv = cli_cmdline_argv;
	ro.control_fd = control_setup(true);
	if (ro.control_fd < 0)
		return 1;
	record_prepare();
	/* No progress line over perf.data going to standard output. */
	if (!ra->quiet && isatty(STDERR_FILENO) &&
	    (!ro.output || strcmp(ro.output, "-")))
		ro.progress = record_progress;
	if (ra->nr_push) {
		push_opts_from(ra, &po);
		ro.push = &po;
		ro.push_stats = &ps;
	}
	err = perfring_record(&ro, &st);
	if (ro.progress)
		fprintf(stderr, "\r\033[K");
	if (!ra->quiet && st.sz >= sizeof(st) && (!err || st.bytes))
		record_summary(&ro, &st);
	if (!err)
		unhit_breakpoints(ra, &st);
	if (!ra->quiet && ro.tracefs && (!err || ts.file_bytes))
		tracefs_part_summary(&ro, &ts);
	if (!ra->quiet && ro.aux && (!err || as.aux_bytes))
		record_aux_part_summary(&as);
	if (!ra->quiet && ro.push)
		push_summary(&ps);
	if (err)
		return 1;
	if (ra->pprof) {
		/* The profile of what was just written (export -f pprof). */
		PERFRING_OPTS(perfring_export_opts, eo, .format = "pprof",
			      .input = ro.output ? ro.output : "perf.data");

		if (export_to(&eo, ra->pprof))
			return 1;
	}
	if (st.child_status >= 0 && WIFEXITED(st.child_status))
		return WEXITSTATUS(st.child_status);
	return 0;
}
