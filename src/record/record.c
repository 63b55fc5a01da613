// SPDX-License-Identifier: MIT
/*
 * perfring record: kernel perf rings drained into perf.data.
 *
 * One epoll loop over every ring's descriptor (the kernel wakes it at the
 * ring's watermark), the command's pidfd and the caller's control fd.  Each
 * pass hands every ring's waiting bytes to the writer as they lie in the
 * mapping (two pieces when wrapped), frees them, and ends with a
 * PERF_RECORD_FINISHED_ROUND, as perf record does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <asm/perf_regs.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../coresight/aux_source.h"
#include "../fleet/fleet.h"
#include "../format/compress.h"
#include "../format/out_file.h"
#include "../format/perf_data.h"
#include "../format/perf_record.h"
#include "../format/tracing_data.h"
#include "../sources/app_session.h"
#include "../sources/evparse.h"
#include "../sources/perf_event.h"
#include "../sources/child.h"
#include "control.h"
#include "dso_hits.h"
#include "offcpu.h"
#include "../sources/session.h"
#include "switch_output.h"
#include "synth.h"
#include "tracefs_source.h"
#include "record_internal.h"

static int add_tracing_data(struct session *s, bool app_possible)
{
	const char *names[PE_MAX_EVENTS];
	const char *tracefs;
	size_t n = 0, len;
	void *blob;
	int err;

	for (int i = 0; i < s->el.nr_events; i++)
		if (s->events[i].tracepoint)
			names[n++] = s->events[i].tp_name;
	if (!n && !app_possible)
		return 0;
	tracefs = pe_tracefs();
	/* Application events only and tracefs out of reach (not root):
	 * built-in headers, so that perf decodes them all the same. */
	if (!n && tracefs && !record_tracefs_readable(tracefs))
		tracefs = NULL;
	err = tracefs || !n ?
		      tracing_data_build(tracefs, names, n, &blob, &len) :
		      -ENOENT;
	if (err && !n)
		return 0; /* record_app_new_event() warns if events come */
	if (err)
		return err;
	err = pd_writer_set_tracing_data(s->w, blob, len);
	free(blob);
	s->have_tdata = !err;
	return err;
}

/* ---- the perf.data source: kernel rings and application rings ---- */

#define APP_INDEX 0xFFFFFFu /* the application session's descriptor */

#define TRACK_INDEX 0x800000u /* the tracking dummy's rings from here */
#define OFFCPU_INDEX 0x700000u /* --off-cpu's rings from here */
#define RANGE_INDEX 0xFFFFFEu /* -D's windows' timer */
#define CTL_INDEX 0xFFFFFDu /* --control's commands */
static int ranges_tick(struct session *s);
static int control_commands(struct session *s);

/* The forward ring of epoll index @index, or NULL: overwrite rings are
 * read on snapshots. */
static struct pe_buffer *forward_ring(struct session *s, uint32_t index)
{
	if (index >= TRACK_INDEX) {
		index -= TRACK_INDEX;
		return index < (uint32_t)s->track_el.nr_bufs ?
			       &s->track_el.bufs[index] :
			       NULL;
	}
	if (s->overwrite || index >= (uint32_t)s->el.nr_bufs)
		return NULL;
	return &s->el.bufs[index];
}

static int pd_watch(void *ctx, struct rec_session *rs)
{
	struct session *s = ctx;

	/* A ring not watched is still drained every pass. */
	for (int i = 0; !s->overwrite && i < s->el.nr_bufs; i++)
		rec_session_watch(rs, s->el.bufs[i].fd, (uint32_t)i);
	for (int i = 0; i < s->track_el.nr_bufs; i++)
		rec_session_watch(rs, s->track_el.bufs[i].fd,
				  TRACK_INDEX + (uint32_t)i);
	for (int i = 0; i < offcpu_nr_fds(s->oc); i++)
		rec_session_watch(rs, offcpu_fd(s->oc, i),
				  OFFCPU_INDEX + (uint32_t)i);
	if (s->app)
		rec_session_watch(rs, app_session_fd(s->app), APP_INDEX);
	if (s->range_fd >= 0)
		rec_session_watch(rs, s->range_fd, RANGE_INDEX);
	if (s->ctl.ctl_fd >= 0)
		rec_session_watch(rs, s->ctl.ctl_fd, CTL_INDEX);
	return 0;
}

static int pd_ready(void *ctx, uint32_t index, uint32_t events)
{
	struct session *s = ctx;
	struct pe_buffer *b;

	if (index == APP_INDEX)
		return 1; /* taken by app_session_finish() */
	if (index == RANGE_INDEX)
		return ranges_tick(s);
	if (index == CTL_INDEX)
		return control_commands(s);
	if (index >= OFFCPU_INDEX && index < TRACK_INDEX) {
		/* drained every pass; a task gone: not watched any more */
		if (events & (EPOLLHUP | EPOLLERR))
			rec_session_unwatch(
				&s->rs,
				offcpu_fd(s->oc, (int)(index - OFFCPU_INDEX)));
		return !(events & (EPOLLHUP | EPOLLERR));
	}
	b = forward_ring(s, index);
	if (!b)
		return 0;
	if (events & (EPOLLHUP | EPOLLERR)) {
		/* Its task exited: stop watching it (perf filters such fds
		 * too); its data is still drained in the passes. */
		rec_session_unwatch(&s->rs, b->fd);
		return 0;
	}
	return 1;
}

/* Application rings wake us at their watermark, as the kernel's do;
 * prepare marks us as about to sleep. */
static bool pd_prepare(void *ctx)
{
	struct session *s = ctx;

	return s->app && app_session_prepare(s->app);
}

/* Every pass drains every forward ring: the timeout also flushes sparse
 * events stuck below the watermark, which perf leaves in the buffers. */
static int switch_output(struct session *s);
static int push_synthesize(struct session *s);

static int pd_pass(void *ctx)
{
	struct session *s = ctx;

	if (s->app)
		app_session_finish(s->app);
	int err = record_drain_all(s, false, false);

	if (!err && (s->ranges_done || s->ctl_stop))
		return 1; /* perf: -D's last window ended, or "stop" */
	if (!err && s->max_size &&
	    (s->max_size_hit || !record_max_size_room(s))) {
		/* perf's --max-size: stop once the file holds that much (the
		 * records that did not fit are counted in the stats) */
		s->max_size_hit = true;
		s->st.max_size_hit = true;
		pr_warn("--max-size %llu: size limit reached (%llu KB), stopping session",
			(unsigned long long)s->max_size,
			(unsigned long long)(pd_writer_data_bytes(s->w) >> 10));
		return 1;
	}
	if (!err && switch_output_due(&s->so, pd_writer_data_bytes(s->w),
				      record_now_ms()))
		err = switch_output(s);
	if (!err && s->fleet && fleet_tick(s->fleet))
		err = push_synthesize(s);
	return err;
}

static void pd_progress(void *ctx)
{
	struct session *s = ctx;
	perfring_progress_fn fn = OPTS_GET(s->o, progress, NULL);

	if (fn)
		fn(&s->st, OPTS_GET(s->o, progress_ctx, NULL));
}

static const struct rec_source_ops perf_data_source_ops = {
	.name = "perf.data",
	.watch = pd_watch,
	.ready = pd_ready,
	.prepare = pd_prepare,
	.pass = pd_pass,
	.progress = pd_progress,
};

/* 's' on the control pipe: the overwrite rings' snapshot; with
 * --switch-output (signal) then a new file, as perf does on SIGUSR2. */
static int session_snapshot(void *ctx)
{
	struct session *s = ctx;
	int err = record_snapshot(s);

	if (!err && s->so.signal)
		err = switch_output(s);
	return err;
}

/* The sources in one loop until the command exits, 'q', --duration or
 * an error. */
static int loop(struct session *s)
{
	int err;

	s->rs.control_fd = OPTS_GET(s->o, control_fd, -1);
	s->rs.cmd = &s->cmd;
	s->rs.child_status = &s->st.child_status;
	s->rs.duration = OPTS_GET(s->o, duration, 0.0);
	s->rs.poll_ms = POLL_MS;
	s->rs.snapshot = session_snapshot;
	s->rs.snapshot_ctx = s;
	/* The AUX source first: its pass's data joins the round ours ends. */
	err = s->aux ? rec_session_add(&s->rs, &aux_source_ops, s->aux) : 0;
	if (!err)
		err = rec_session_add(&s->rs, &perf_data_source_ops, s);
	if (!err && s->tfs)
		err = rec_session_add(&s->rs, &tfs_source_ops, s->tfs);
	if (!err)
		err = rec_session_loop(&s->rs);
	s->st.wakeups = s->rs.wakeups;
	if (s->tfs && tfs_source_error(s->tfs)) {
		/* Its file is kept up to here; the perf.data is completed. */
		s->tfs_err = tfs_source_error(s->tfs);
		pr_err("tracefs: %s; recording stopped", strerror(-s->tfs_err));
	}
	return err;
}

static void session_close(struct session *s)
{
	pe_evlist_close(&s->el);
	pe_evlist_close(&s->track_el);
	offcpu_close(s->oc);
	s->oc = NULL;
	rec_session_close(&s->rs);
	if (s->cmd.pidfd >= 0)
		close(s->cmd.pidfd);
	if (s->cmd.go_fd >= 0)
		close(s->cmd.go_fd);
	if (s->cmd.err_fd >= 0)
		close(s->cmd.err_fd);
	if (s->out_fd >= 0 && s->out_fd != STDOUT_FILENO)
		close(s->out_fd);
	if (s->range_fd >= 0)
		close(s->range_fd);
	control_close(&s->ctl);
	dso_hits_free(s->hits);
	pd_compress_free(s->z);
	free(s->oc_zbuf);
	free(s->cpus_buf);
	free(s->tids_buf);
	s->cpus_buf = NULL;
	s->tids_buf = NULL;
}

/* The opts in the session: the command, the targets, the ring size. */
static int session_parse(struct session *s)
{
	const struct perfring_record_opts *o = s->o;

	s->evs = OPTS_GET(o, events, NULL);
	s->nr_events = OPTS_GET(o, nr_events, 0);
	s->argv = OPTS_GET(o, argv, NULL);
	if (s->argv && !s->argv[0])
		s->argv = NULL;
	s->all = OPTS_GET(o, all_cpus, false);
	s->cpu_list = OPTS_GET(o, cpu_list, NULL);
	s->per_thread = OPTS_GET(o, per_thread, false);
	s->pid_list = OPTS_GET(o, pid_list, NULL);
	s->tid_list = OPTS_GET(o, tid_list, NULL);
	s->overwrite = OPTS_GET(o, overwrite, false);
	s->data_bytes = OPTS_GET(o, mmap_bytes, 0);
	if (!s->data_bytes)
		s->data_bytes = DEFAULT_MMAP_BYTES;
	if ((s->data_bytes & (s->data_bytes - 1)) ||
	    s->data_bytes < (uint64_t)sysconf(_SC_PAGESIZE)) {
		pr_err("-m: %llu bytes is not a power of two of at least one page",
		       (unsigned long long)s->data_bytes);
		return -EINVAL;
	}
	if (!s->evs || s->nr_events <= 0) {
		static const char *const default_events[] = { "cpu-clock" };

		s->evs = default_events;
		s->nr_events = 1;
	}
	if (s->nr_events > PE_MAX_EVENTS) {
		pr_err("at most %d events", PE_MAX_EVENTS);
		return -E2BIG;
	}
	if (!s->argv && !s->all && !s->cpu_list && !s->pid_list &&
	    !s->tid_list) {
		pr_err("nothing to record: give a command, -a, -C, -p or -t");
		return -EINVAL;
	}
	/* perf's -p PID -- COMMAND: the threads, for as long as the
	 * command runs (the command itself is not recorded). */
	s->cmd_target = s->argv && !s->pid_list && !s->tid_list;
	s->clockid = OPTS_GET(o, set_clockid, false) ?
			     OPTS_GET(o, clockid, CLOCK_MONOTONIC) :
			     CLOCK_MONOTONIC;
	if (s->clockid != CLOCK_MONOTONIC &&
	    (OPTS_GET(o, tracefs, NULL) ||
	     (!OPTS_GET(o, no_app, false) && (s->cmd_target || s->pid_list)))) {
		pr_err("-k: application and ftrace events are on CLOCK_MONOTONIC; another clock needs --no-app and no --tracefs-event");
		return -EINVAL;
	}
	if (OPTS_GET(o, delay_ms, 0.0) < 0 &&
	    OPTS_GET(o, delay_ms, 0.0) != -1) {
		pr_err("-D: a delay of %g ms", OPTS_GET(o, delay_ms, 0.0));
		return -EINVAL;
	}
	if (OPTS_GET(o, has_control, false)) {
		int err;

		if (OPTS_GET(o, ctl_fd, -1) < 0) {
			pr_err("--control: no command descriptor");
			return -EINVAL;
		}
		err = control_open(&s->ctl, OPTS_GET(o, ctl_fd, -1),
				   OPTS_GET(o, ack_fd, -1));
		if (err)
			return err;
	}
	if (OPTS_GET(o, nr_enable_ranges, 0)) {
		const double *r = OPTS_GET(o, enable_ranges, NULL);
		uint32_t n = OPTS_GET(o, nr_enable_ranges, 0);

		if (!r || n > 1024 || OPTS_GET(o, delay_ms, 0.0) != 0) {
			pr_err("-D: windows %s", !r	  ? "missing" :
						 n > 1024 ? "more than 1024" :
							    "and a delay");
			return -EINVAL;
		}
		for (uint32_t i = 0; i < 2 * n; i++)
			if (!(r[i] >= 0 && r[i] <= 1e9) ||
			    (i && !(r[i] > r[i - 1]))) {
				pr_err("-D: windows must be ascending milliseconds (start < end < next start)");
				return -EINVAL;
			}
	}
	return 0;
}

/* --off-cpu: the sched events on the same targets, their call chains
 * as the samples' (frame pointers without -g: a block needs its stack). */
static int offcpu_setup(struct session *s, bool inherit)
{
	const struct perfring_record_opts *o = s->o;
	bool callchain = OPTS_GET(o, callchain, false);
	struct offcpu_opts oo = {
		.tracefs = pe_tracefs(),
		.thresh_ns =
			OPTS_GET(o, off_cpu_thresh_set, false) ?
				OPTS_GET(o, off_cpu_thresh_ms, 0) * 1000000ull :
				OFFCPU_DEFAULT_THRESH_NS,
		.dwarf_size = callchain ? OPTS_GET(o, callchain_dwarf_size, 0) :
					  0,
		.max_stack = OPTS_GET(o, callchain_max_stack, 0),
		.user_only = callchain && OPTS_GET(o, user_callchains, false),
		.kernel_only = callchain &&
			       OPTS_GET(o, kernel_callchains, false),
		.clockid = s->clockid,
		.inherit = inherit,
		.on_exec = s->on_exec,
		.data_bytes = s->data_bytes,
	};
	int mode = OPTS_GET(o, off_cpu_mode, PERFRING_OFF_CPU_AUTO);

	if (!OPTS_GET(o, off_cpu, false))
		return 0;
	if (s->overwrite) {
		pr_err("--off-cpu: not with --overwrite (its samples are made as the rings are read)");
		return -EINVAL;
	}
	if (oo.dwarf_size) {
		uint64_t regs = OPTS_GET(o, user_regs, 0);

		oo.dwarf_regs = regs ? regs | DWARF_MINIMAL_REGS :
				       DWARF_REGS_MASK;
	}
	if (mode != PERFRING_OFF_CPU_AUTO && mode != PERFRING_OFF_CPU_BPF &&
	    mode != PERFRING_OFF_CPU_EVENTS) {
		pr_err("--off-cpu: no mode %d", mode);
		return -EINVAL;
	}
	oo.mode = mode == PERFRING_OFF_CPU_BPF	  ? OFFCPU_MODE_BPF :
		  mode == PERFRING_OFF_CPU_EVENTS ? OFFCPU_MODE_EVENTS :
						    OFFCPU_MODE_AUTO;
	return offcpu_new(&oo, &s->oc);
}

/* The perf events, then the CPUs and threads by mode
 * (perf-ring-buffer.rst 2.2), then their attrs. */
static int session_targets(struct session *s)
{
	static const int any_cpu = -1;
	static const pid_t any_tid = -1;
	const char *tracefs = NULL;
	bool inherit = false;

	s->el.nr_events = 0;
	for (int i = 0; i < s->nr_events; i++) {
		const char *const *filters = OPTS_GET(s->o, filters, NULL);
		int n;

		if (strchr(s->evs[i], ':') && !tracefs)
			tracefs = pe_tracefs();
		/* One -e may be several events: a list, a group, a glob. */
		n = pe_events_parse(s->evs[i], filters ? filters[i] : NULL,
				    tracefs, &s->events[s->el.nr_events],
				    PE_MAX_EVENTS - s->el.nr_events);
		if (n < 0)
			return n;
		for (int k = s->el.nr_events; k < s->el.nr_events + n; k++)
			if (s->events[k].leader >= 0)
				s->events[k].leader += s->el.nr_events;
		s->el.nr_events += n;
	}
	s->el.events = s->events;

	s->cpus_buf = calloc(MAX_CPUS, sizeof(*s->cpus_buf));
	s->tids_buf = calloc(MAX_TIDS, sizeof(*s->tids_buf));
	if (!s->cpus_buf || !s->tids_buf)
		return -ENOMEM;
	s->cpus = s->cpus_buf;
	s->tids = s->tids_buf;
	if (s->cpu_list) {
		s->nr_cpus = pe_user_cpus(s->cpu_list, s->cpus_buf, MAX_CPUS);
		if (s->nr_cpus < 0)
			return s->nr_cpus;
	} else {
		s->nr_cpus = pe_online_cpus(s->cpus_buf, MAX_CPUS);
		if (s->nr_cpus < 0)
			return s->nr_cpus;
	}
	if (s->pid_list || s->tid_list) {
		s->nr_tids = pe_parse_tids(
			s->pid_list ? s->pid_list : s->tid_list,
			s->pid_list != NULL, s->tids_buf, MAX_TIDS);
		if (s->nr_tids < 0) {
			if (s->nr_tids == -EINVAL)
				pr_err("bad %s list",
				       s->pid_list ? "-p" : "-t");
			return s->nr_tids;
		}
		inherit = !s->per_thread;
		if (s->per_thread && !s->cpu_list) {
			s->cpus = &any_cpu;
			s->nr_cpus = 1;
		}
	} else if (s->all || (s->cpu_list && !s->per_thread)) {
		s->tids = &any_tid;
		s->nr_tids = 1;
	} else {
		/* A command: its pid is known once it is forked. */
		s->nr_tids = 1;
		inherit = !s->per_thread || s->cpu_list;
		s->on_exec = true;
		if (s->per_thread && !s->cpu_list) {
			s->cpus = &any_cpu;
			s->nr_cpus = 1;
		}
	}
	if (inherit && s->cpus[0] == -1)
		inherit = false; /* inherited per-task rings cannot be mapped */
	if (OPTS_GET(s->o, no_inherit, false))
		inherit = false;
	/* -a/-C: tracked from before /proc is read; -D: from the start. */
	s->track_now = s->tids == &any_tid;
	s->use_track = s->overwrite || s->track_now || record_delayed(s->o);
	record_setup_attrs(s, inherit, s->on_exec, s->data_bytes);
	return offcpu_setup(s, inherit);
}

/*
 * The ftrace events of the same run (opts->tracefs): the tracefs source
 * with the command, CPUs and tasks of this recording, its trace.dat
 * beside the perf.data (default "<output>.trace.dat").  Made before the
 * command is forked, so its first events are recorded.
 */
static int tracefs_open(struct session *s)
{
	const struct perfring_tracefs_opts *user =
		OPTS_GET(s->o, tracefs, NULL);
	struct perfring_tracefs_opts *to = &s->tfs_opts;

	if (!user)
		return 0;
	if (!OPTS_VALID(user))
		return -EINVAL;
	OPTS_COPY(to, user);
	to->sz = sizeof(*to);
	to->argv = s->argv;
	to->all_cpus = s->all;
	to->cpu_list = s->cpu_list;
	if (!to->output) {
		const char *out = record_output_path(s->o);

		if (!strcmp(out, "-")) {
			pr_err("tracefs events with -o -: give the trace.dat a file name");
			return -EINVAL;
		}
		snprintf(s->tfs_path, sizeof(s->tfs_path), "%s.trace.dat", out);
		to->output = s->tfs_path;
	}
	s->tfs_st = calloc(1, sizeof(*s->tfs_st));
	if (!s->tfs_st)
		return -ENOMEM;
	s->tfs_st->sz = sizeof(*s->tfs_st);
	s->tfs_st->child_status = -1;
	return tfs_source_open(to, s->tfs_st, &s->tfs);
}

/* AUX trace of the same run (opts->aux): its ring pairs and its input,
 * into this recording's writer; it plays once everything is started. */
static int aux_open(struct session *s)
{
	const struct perfring_record_aux_opts *user = OPTS_GET(s->o, aux, NULL);

	if (!user)
		return 0;
	if (!OPTS_VALID(user) ||
	    user->sz < offsetof(struct perfring_record_aux_opts, output))
		return -EINVAL;
	return aux_source_open(user, true, &s->aux);
}

/* Only the command's or -p/-t's tasks, unless -a or -C without them. */
static int tracefs_follow(struct session *s)
{
	char pids[4096];
	const char *list = s->pid_list ? s->pid_list : s->tid_list;

	if (!s->tfs || s->all || (!s->cmd_target && !list))
		return 0;
	if (s->cmd_target) {
		snprintf(pids, sizeof(pids), "%d", (int)s->cmd.pid);
	} else {
		if (strlen(list) >= sizeof(pids))
			return -E2BIG;
		strcpy(pids, list);
		for (char *p = pids; *p; p++)
			if (*p == ',')
				*p = ' ';
	}
	return tfs_source_follow(s->tfs, pids);
}

/* The perf.data's header: attrs, TRACING_DATA, clock; then started. */
static int writer_open(struct session *s)
{
	const struct perfring_record_opts *o = s->o;
	int err;

	err = pd_writer_open(s->out_fd, s->pipe, OPTS_GET(o, cmdline_argc, 0),
			     OPTS_GET(o, cmdline_argv, NULL), &s->w);
	if (err)
		return err;
	/* The AUX event first, as perf record -e cs_etm// -e ... writes it. */
	if (s->aux)
		err = aux_source_add_attr(s->aux, s->w);
	for (int i = 0; i < s->el.nr_events && !err; i++) {
		int leader = s->events[i].leader;

		err = pd_writer_add_attr(s->w, &s->events[i].attr,
					 s->events[i].name, s->events[i].ids,
					 s->events[i].nr_ids);
		/* A group's last member: GROUP_DESC names the group. */
		if (!err && leader >= 0 && i > leader &&
		    (i + 1 == s->el.nr_events ||
		     s->events[i + 1].leader != leader))
			err = pd_writer_add_group(s->w,
						  (uint32_t)(i - leader + 1));
	}
	if (!err && s->use_track)
		err = pd_writer_add_attr(s->w, &s->track_ev.attr,
					 s->track_ev.name, s->track_ev.ids,
					 s->track_ev.nr_ids);
	/* After the others, as perf adds its offcpu-time event. */
	if (!err && s->oc)
		err = offcpu_add_attrs(s->oc, s->w);
	if (!err)
		err = add_tracing_data(s, s->app_possible);
	if (err)
		return err;
	pd_writer_set_clockid(s->w, s->clockid);
	if (s->z)
		pd_writer_set_compressed(s->w, pd_compress_level(s->z),
					 s->data_bytes);
	/* Room for application event descriptions beyond 64 KiB each. */
	if (s->app_possible)
		pd_writer_set_growth(s->w, APP_DESC_ROOM);
	err = pd_writer_start(s->w);
	/* Before any AUXTRACE, as perf requires. */
	if (!err && s->aux)
		err = aux_source_write_info(s->aux);
	return err;
}

/* What already exists when recording starts. */
static int synthesize(struct session *s)
{
	struct synth sy = { .w = s->w,
			    .sample_type = s->events[0].attr.sample_type,
			    .id = s->events[0].nr_ids ? s->events[0].ids[0] : 0,
			    .hits = s->hits };
	int err;

	err = synth_kernel(&sy);
	if (!err && (s->all || (s->cpu_list && !s->argv)))
		err = synth_all(&sy);
	else if (!err && (s->pid_list || s->tid_list))
		for (int i = 0; i < s->nr_tids && !err; i++)
			err = synth_process(&sy, s->tids[i]);
	else if (!err && s->argv)
		err = synth_process(&sy, s->cmd.pid);
	if (!err)
		err = pd_writer_finish_round(s->w);
	s->st.records += sy.records;
	return err ? err : push_synthesize(s);
}

/* --push: the same records for the collector (at the start, and when its
 * tables were rebuilt), straight from /proc. */
static int push_synthesize(struct session *s)
{
	struct synth sy = { .sink = fleet_synth_sink,
			    .sink_ctx = s->fleet,
			    .sample_type = s->events[0].attr.sample_type,
			    .id = s->events[0].nr_ids ? s->events[0].ids[0] :
							0 };
	int err;

	if (!s->fleet)
		return 0;
	err = synth_kernel(&sy);
	if (!err && (s->all || (s->cpu_list && !s->argv)))
		err = synth_all(&sy);
	else if (!err && (s->pid_list || s->tid_list))
		for (int i = 0; i < s->nr_tids && !err; i++)
			err = synth_process(&sy, s->tids[i]);
	else if (!err && s->argv)
		err = synth_process(&sy, s->cmd.pid);
	return err == -ENOMEM ? err : 0;
}

/* --push: the stores' threads started, the events' samples collected. */
static int push_open(struct session *s)
{
	const struct perfring_push_opts *po = OPTS_GET(s->o, push, NULL);
	int err;

	if (!po)
		return 0;
	err = fleet_open(po, s->clockid, &s->fleet);
	for (int i = 0; i < s->el.nr_events && !err; i++)
		err = fleet_add_event(s->fleet, &s->events[i].attr,
				      s->events[i].name, s->events[i].ids,
				      s->events[i].nr_ids);
	return err;
}

/* Build-id tracking, -z and --max-size. */
static int extras_open(struct session *s)
{
	int level = OPTS_GET(s->o, compression_level, 0);

	s->max_size = OPTS_GET(s->o, max_size, 0);
	s->so.signal = OPTS_GET(s->o, switch_signal, false);
	s->so.bytes = OPTS_GET(s->o, switch_bytes, 0);
	s->so.every_ms =
		(uint64_t)(OPTS_GET(s->o, switch_secs, 0.0) * 1000 + 0.5);
	s->so.on = s->so.signal || s->so.bytes || s->so.every_ms;
	s->so.started_ms = record_now_ms();
	/* The AUX trace would not follow the switch: not together.
	 * (Application events and the trace.dat do: switch_output().) */
	if (s->so.on && (s->pipe || s->aux)) {
		pr_err("--switch-output: not with -o - or --replay-cs");
		return -EINVAL;
	}
	if (level) {
		if (s->pipe || s->overwrite) {
			pr_err("-z: not with -o - or --overwrite");
			return -EINVAL;
		}
		s->z = pd_compress_new(level, s->data_bytes);
		if (!s->z)
			return -ENOMEM;
	}
	/* perf's process_buildids: the DSOs hit get their build-ids in the
	 * header (not in a pipe: no header; not with -B). */
	if (!s->pipe && !OPTS_GET(s->o, no_buildid, false)) {
		s->hits = dso_hits_new(s->events[0].attr.sample_type);
		if (!s->hits)
			return -ENOMEM;
	}
	return 0;
}

/* -D: the command runs (or -a records side-band) for the delay, then
 * the events are enabled, as perf does (it sleeps too). */
static void delay_then_enable(struct session *s)
{
	double ms = OPTS_GET(s->o, delay_ms, 0.0);
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec =
			(long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	pe_evlist_enable(&s->el, true);
}

/* -D's windows: the timer at the next edge, from the start. */
static int ranges_arm(struct session *s)
{
	const double *r = OPTS_GET(s->o, enable_ranges, NULL);
	double ms = r[s->range_edge];
	struct itimerspec it = { .it_value = s->range_t0 };

	it.it_value.tv_sec += (time_t)(ms / 1000);
	it.it_value.tv_nsec +=
		(long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6);
	if (it.it_value.tv_nsec >= 1000000000L) {
		it.it_value.tv_sec++;
		it.it_value.tv_nsec -= 1000000000L;
	}
	return timerfd_settime(s->range_fd, TFD_TIMER_ABSTIME, &it, NULL) ?
		       -errno :
		       0;
}

/* The windows count from here (perf: from the command's start). */
static int ranges_start(struct session *s)
{
	clock_gettime(CLOCK_MONOTONIC, &s->range_t0);
	s->range_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->range_fd < 0)
		return -errno;
	return ranges_arm(s);
}

/* The timer went off: every edge that is due, enabling at a window's
 * start and disabling at its end; after the last, the recording stops. */
static int ranges_tick(struct session *s)
{
	uint32_t edges = 2 * OPTS_GET(s->o, nr_enable_ranges, 0);
	const double *r = OPTS_GET(s->o, enable_ranges, NULL);
	struct timespec now;
	uint64_t expired;
	double ms;

	if (read(s->range_fd, &expired, sizeof(expired)) < 0 && errno != EAGAIN)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double)(now.tv_sec - s->range_t0.tv_sec) * 1000 +
	     (double)(now.tv_nsec - s->range_t0.tv_nsec) / 1e6;
	while (s->range_edge < edges && r[s->range_edge] <= ms) {
		pe_evlist_enable(&s->el, !(s->range_edge & 1));
		s->range_edge++;
	}
	if (s->range_edge == edges) {
		s->ranges_done = true;
		return 0;
	}
	return ranges_arm(s);
}

/* One --control command (perf's evlist__ctlfd_process()); control.c
 * acks it.  A named event ("enable cpu-clock") is not supported: the
 * command is refused with a warning, and acknowledged. */
static int control_command(void *ctx, const char *cmd, size_t n)
{
	struct session *s = ctx;
	int err = 0;
	bool known = true;

	if (n == 6 && !memcmp(cmd, "enable", 6))
		pe_evlist_enable(&s->el, true);
	else if (n == 7 && !memcmp(cmd, "disable", 7))
		pe_evlist_enable(&s->el, false);
	else if (n == 4 && !memcmp(cmd, "stop", 4))
		s->ctl_stop = true;
	else if (n == 8 && !memcmp(cmd, "snapshot", 8))
		err = s->overwrite ? session_snapshot(s) : 0;
	else if (!(n == 4 && !memcmp(cmd, "ping", 4)))
		known = false;
	if (!known)
		pr_warn("--control: '%.*s' is not a command perfring takes (enable, disable, snapshot, stop, ping)",
			(int)(n > 64 ? 64 : n), cmd);
	return err;
}

/* The control descriptor is readable (or hung up): its whole commands.
 * Once its writers are gone it is not watched any more. */
static int control_commands(struct session *s)
{
	int err = control_read(&s->ctl, control_command, s);

	if (s->ctl.hup && s->ctl.ctl_fd >= 0) {
		rec_session_unwatch(&s->rs, s->ctl.ctl_fd);
		control_close_commands(&s->ctl);
	}
	return err;
}

/* Everything up to the loop: sources opened, files begun, the command
 * held, then every source started and the command let go. */
static int session_start(struct session *s, const struct app_session_cb *cb)
{
	int err;

	err = session_parse(s);
	if (!err)
		err = session_targets(s);
	if (!err)
		err = record_open_output(s);
	if (err)
		return err;
	s->app_on = !OPTS_GET(s->o, no_app, false) && !s->pipe;
	/* A pipe cannot take attrs and formats that appear while recording. */
	if (s->pipe && s->argv && !OPTS_GET(s->o, no_app, false))
		pr_info("-o -: application events (libperfring) are not recorded in perf's pipe format; write a file for them");
	s->app_possible = s->app_on && (s->cmd_target || s->pid_list);
	err = tracefs_open(s);
	if (!err && s->app_on && s->cmd_target)
		err = app_session_create(cb, &s->app);
	if (!err && s->argv) {
		err = record_start_child(s, s->argv);
		if (!err && s->on_exec)
			s->tids_buf[0] = s->cmd.pid;
	}
	if (!err)
		err = tracefs_follow(s);
	if (!err)
		err = pe_evlist_open(&s->el, s->cpus, s->nr_cpus, s->tids,
				     s->nr_tids, s->data_bytes, s->overwrite);
	if (!err && s->use_track)
		err = pe_evlist_open(&s->track_el, s->cpus, s->nr_cpus, s->tids,
				     s->nr_tids, s->data_bytes, false);
	if (!err && s->oc)
		err = offcpu_open(s->oc, s->cpus, s->nr_cpus, s->tids,
				  s->nr_tids);
	if (!err)
		err = aux_open(s);
	if (!err)
		err = push_open(s);
	if (!err)
		err = extras_open(s);
	if (err)
		return err;
	s->st.nr_buffers = (uint32_t)(s->el.nr_bufs + s->track_el.nr_bufs +
				      offcpu_nr_fds(s->oc));
	err = writer_open(s);
	if (!err)
		err = synthesize(s);
	if (err)
		return err;

	/* A process that traces into its own session (-p). */
	if (s->app_on && s->pid_list) {
		for (int i = 0; i < s->nr_tids && !s->app; i++) {
			err = app_session_find(s->tids[i], cb, &s->app);
			if (err && err != -ENOENT && err != -ESRCH)
				return err;
		}
		err = 0;
	}
	if (s->tfs) {
		err = tfs_source_start(s->tfs);
		if (err)
			return err;
	}
	if (!s->on_exec) {
		offcpu_enable(s->oc, true);
		pe_evlist_enable(&s->track_el, true);
		if (!record_delayed(s->o))
			pe_evlist_enable(&s->el, true);
	}
	if (s->aux) {
		err = aux_source_start(s->aux); /* the trace plays */
		if (err)
			return err;
	}
	if (s->argv)
		err = held_child_release(&s->cmd, s->argv);
	if (!err && OPTS_GET(s->o, delay_ms, 0.0) > 0)
		delay_then_enable(s);
	if (!err && OPTS_GET(s->o, nr_enable_ranges, 0))
		err = ranges_start(s);
	return err;
}

/* Stopped first (error, Ctrl-C, --duration): end the command as perf
 * does, then collect it. */
static void reap_command(struct session *s)
{
	int status;

	if (s->cmd.go_fd >= 0) { /* never released: let it go away */
		close(s->cmd.go_fd);
		s->cmd.go_fd = -1;
	}
	if (s->cmd.pid <= 0)
		return;
	if (waitpid(s->cmd.pid, &status, WNOHANG) == s->cmd.pid) {
		s->st.child_status = status;
	} else {
		kill(s->cmd.pid, SIGTERM);
		if (waitpid(s->cmd.pid, &status, 0) == s->cmd.pid)
			s->st.child_status = status;
	}
}

/* The perf.data completed with its build-ids, the -z ratio and the
 * sample time range.  Returns 0 or -errno (logged). */
static int writer_close(struct session *s)
{
	uint64_t kept = 0;
	int err;

	pd_writer_note_time(s->w, s->first_time, s->last_time);
	if (s->z)
		pd_writer_compress_ratio(s->w, pd_compress_ratio(s->z));
	if (s->hits)
		dso_hits_write(s->hits, s->w);
	err = pd_writer_close(s->w, &kept);
	s->w = NULL;
	/* What the file holds, not what was handed to the writer. */
	s->st.bytes = kept;
	if (err)
		pr_err("writing %s failed: %s; it holds %llu bytes of data, up to its last complete round",
		       s->pipe ? "the output" : record_output_path(s->o),
		       strerror(-err), (unsigned long long)kept);
	return err;
}

/* The name a switched trace.dat takes beside its perf.data, renamed
 * @done: "<done>.trace.dat", or the trace.dat's own name with the same
 * timestamp when it was given one. */
static void tfs_switched_name(const struct session *s, const char *done,
			      char *out, size_t len)
{
	const char *suffix = done + strlen(record_output_path(s->o));

	if (s->tfs_opts.output == s->tfs_path)
		snprintf(out, len, "%s.trace.dat", done);
	else
		snprintf(out, len, "%s%s", s->tfs_opts.output, suffix);
}

/* --switch-output: the completed file under its timestamped name (and
 * its trace.dat, if @tfs_done, beside it). */
static int switch_rename(struct session *s, bool tfs_done)
{
	void (*fn)(const char *, void *) = OPTS_GET(s->o, switched, NULL);
	char path[PATH_MAX], tpath[PATH_MAX + 64];
	int err = switch_output_rename(record_output_path(s->o), path,
				       sizeof(path));

	if (err) {
		pr_err("--switch-output: cannot rename %s: %s",
		       record_output_path(s->o), strerror(-err));
		return err;
	}
	s->so.files++;
	if (s->tfs) {
		tfs_switched_name(s, path, tpath, sizeof(tpath));
		/* the last file: completed already, only renamed */
		err = tfs_done ?
			      (rename(s->tfs_opts.output, tpath) ? -errno : 0) :
			      tfs_source_switch(s->tfs, tpath);
		if (err) {
			pr_err("--switch-output: %s: %s", tpath,
			       strerror(-err));
			return err;
		}
	}
	if (fn)
		fn(path, OPTS_GET(s->o, switched_ctx, NULL));
	return 0;
}

/* --switch-output while recording (perf's record__switch_output): this
 * file completed and renamed, a new one with the events, the synthesized
 * state and a new zstd stream; the rings go on. */
static int switch_output(struct session *s)
{
	int level = OPTS_GET(s->o, compression_level, 0), err;

	/* --off-cpu: the short blocks summed so far go with this file. */
	if (s->oc) {
		uint64_t before = s->st.bytes;

		err = offcpu_flush(s->oc, record_offcpu_emit, s);
		if (!err)
			err = record_offcpu_compress(s);
		if (err)
			return err;
		if (s->st.bytes != before)
			s->round_open = true;
	}
	if (s->round_open) {
		pd_writer_note_time(s->w, s->first_time, s->last_time);
		record_note_app_time(s);
		err = pd_writer_finish_round(s->w);
		if (err)
			return err;
		s->round_open = false;
	}
	err = writer_close(s);
	if (s->out_fd >= 0)
		close(s->out_fd);
	s->out_fd = -1;
	/* The application records drained so far are in the completed
	 * file: they leave their rings now (each in exactly one file), and
	 * the next file's time range starts after them. */
	if (!err && s->app) {
		app_session_release(s->app);
		s->app_floor = s->app_last;
	}
	if (!err)
		err = switch_rename(s, false);
	if (!err)
		err = record_open_output(s);
	dso_hits_free(s->hits);
	s->hits = NULL;
	pd_compress_free(s->z);
	s->z = NULL;
	if (!err && level) {
		s->z = pd_compress_new(level, s->data_bytes);
		if (!s->z)
			err = -ENOMEM;
	}
	if (!err) {
		s->hits = OPTS_GET(s->o, no_buildid, false) ?
				  NULL :
				  dso_hits_new(s->events[0].attr.sample_type);
		if (!s->hits && !OPTS_GET(s->o, no_buildid, false))
			err = -ENOMEM;
	}
	s->first_time = s->last_time = 0;
	if (!err)
		err = writer_open(s);
	/* The application event types seen so far: their attrs (same
	 * sample ids) and formats, before any of their records. */
	if (!err && s->app)
		err = app_session_formats(s->app, record_app_readd, s);
	if (!err)
		err = synthesize(s);
	s->so.started_ms = record_now_ms();
	if (err && !s->err)
		s->err = err;
	return err;
}

/* The files completed (what they hold, also after a failed write), the
 * figures final.  Returns @err or the first error of these steps. */
static int session_finish(struct session *s, int err)
{
	if (s->app) {
		struct app_session_stats as;

		app_session_stats(s->app, &as);
		record_app_stats(s);
		s->st.samples += as.events;
		s->st.records += as.events + as.lost_records;
		if (as.events &&
		    (!s->first_time || as.first_time < s->first_time))
			s->first_time = as.first_time;
		if (as.last_time > s->last_time)
			s->last_time = as.last_time;
	}
	if (s->w) {
		int cerr = writer_close(s);

		if (cerr && !err)
			err = cerr;
		if (!cerr &&
		    (s->so.on || OPTS_GET(s->o, timestamp_filename, false)))
			cerr = switch_rename(s, true);
		if (cerr && !err)
			err = cerr;
	}
	if (s->tfs) {
		int terr = tfs_source_close(s->tfs, 0);

		s->tfs = NULL;
		if (terr && !err)
			err = terr;
	}
	return err;
}

PERFRING_API int perfring_record(const struct perfring_record_opts *o,
				 struct perfring_record_stats *st_out)
{
	struct session s = { .o = o };
	const struct app_session_cb app_cb = {
		.new_event = record_app_new_event,
		.write = record_app_write,
		.ctx = &s,
		.max_rings = OPTS_GET(o, app_max_rings, 0),
	};
	struct perfring_tracefs_stats *tst;
	int err;

	if (!o || !OPTS_VALID(o) || !OPTS_HAS(o, events))
		return -EINVAL;
	s.out_fd = s.cmd.pidfd = s.cmd.go_fd = s.cmd.err_fd = s.range_fd = -1;
	s.ctl.ctl_fd = s.ctl.ack_fd = -1;
	rec_session_init(&s.rs);
	s.st.sz = sizeof(s.st);
	s.st.child_status = -1;
	err = session_start(&s, &app_cb);
	if (!err) {
		err = loop(&s);
		pe_evlist_enable(&s.el, false);
		pe_evlist_enable(&s.track_el, false);
		offcpu_enable(s.oc, false);
		if (s.aux) {
			/* The trace stops; its last data joins the last
			 * round. */
			int aerr = aux_source_finish(s.aux);

			if (aerr && !s.err)
				s.err = aerr;
		}
		if (!s.err) {
			/* Final drain: everything left, and the overwrite
			 * snapshot. */
			if (s.overwrite)
				s.st.snapshots++;
			record_drain_all(&s, s.overwrite, true);
		}
		if (!err)
			err = s.err;
		if (s.tfs) {
			/* Tracing off, its last pages, its file completed. */
			int terr = tfs_source_finish(s.tfs, s.tfs_err);

			if (terr && !err)
				err = terr;
		}
	}
	reap_command(&s);
	if (s.fleet) /* the last interval, delivered or spooled */
		fleet_close(s.fleet, OPTS_GET(o, push_stats, NULL));
	err = session_finish(&s, err);
	session_close(&s);
	app_session_close(s.app);
	tst = OPTS_GET(o, tracefs_stats, NULL);
	if (tst && s.tfs_st) {
		s.tfs_st->child_status = s.st.child_status;
		OPTS_FILL(tst, s.tfs_st);
	}
	free(s.tfs_st);
	aux_source_stats(s.aux, OPTS_GET(o, aux_stats, NULL));
	aux_source_close(s.aux);
	if (st_out)
		OPTS_FILL(st_out, &s.st);
	return err;
}

struct list_ctx {
	perfring_event_fn fn;
	void *ctx;
	int n;
};

/* Every hardware event, those this machine refuses (perf list's
 * is_event_supported()) marked as such. */
static void list_hw(const char *name, uint32_t type, uint64_t config, void *ctx)
{
	struct list_ctx *lc = ctx;
	bool ok = pe_event_supported(type, config);

	if (type == PERF_TYPE_HARDWARE)
		lc->fn(name,
		       ok ? "Hardware event" :
			    "Hardware event" PERFRING_KIND_REFUSED,
		       lc->ctx);
	else
		lc->fn(name,
		       ok ? "Hardware cache event" :
			    "Hardware cache event" PERFRING_KIND_REFUSED,
		       lc->ctx);
	lc->n += ok;
}

PERFRING_API int perfring_event_list(perfring_event_fn fn, void *ctx)
{
	struct list_ctx lc = { .fn = fn, .ctx = ctx };
	const char *tracefs;
	char path[PATH_MAX];
	struct dirent *sd;
	DIR *top;
	int n;

	if (!fn)
		return -EINVAL;
	evp_hw_names(list_hw, &lc);
	n = lc.n;
	for (const struct pe_sw_name *e = pe_sw_names; e->name; e++, n++)
		fn(e->name, "Software event", ctx);
	n += pe_pmu_aliases(fn, ctx);
	tracefs = pe_tracefs();
	if (!tracefs)
		return n;
	snprintf(path, sizeof(path), "%s/events", tracefs);
	top = opendir(path);
	if (!top)
		return n;
	while ((sd = readdir(top))) {
		char sub[PATH_MAX];
		struct dirent *ed;
		DIR *d;

		if (sd->d_name[0] == '.' || sd->d_type != DT_DIR)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, sd->d_name) >=
		    (int)sizeof(sub))
			continue;
		d = opendir(sub);
		if (!d)
			continue;
		while ((ed = readdir(d))) {
			char name[2 * NAME_MAX + 2];

			if (ed->d_name[0] == '.' || ed->d_type != DT_DIR)
				continue;
			snprintf(name, sizeof(name), "%s:%s", sd->d_name,
				 ed->d_name);
			fn(name, "Tracepoint event", ctx);
			n++;
		}
		closedir(d);
	}
	closedir(top);
	return n;
}
