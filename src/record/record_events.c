// SPDX-License-Identifier: MIT
/*
 * perfring record: the events' attrs, the output file, the application
 * events' descriptions and the tracing data.
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
#include "../sources/session.h"
#include "switch_output.h"
#include "synth.h"
#include "tracefs_source.h"
#include "record_internal.h"

/* Forks the command stopped before exec, as perf's workload does; the
 * program's events go to our session (libperfring). */
int record_start_child(struct session *s, char *const *argv)
{
	return held_child_start(&s->cmd, argv, PERFRING_SESSION_ENV,
				s->app ? app_session_dir(s->app) : NULL);
}

/* -D: the events are not enabled at the start (a delay, -1 or windows) */
bool record_delayed(const struct perfring_record_opts *o)
{
	return OPTS_GET(o, delay_ms, 0.0) > 0 ||
	       OPTS_GET(o, delay_ms, 0.0) == -1 ||
	       OPTS_GET(o, nr_enable_ranges, 0) > 0;
}

/* The side-band records perf needs to name threads and map addresses. */
static void set_tracking(struct perf_event_attr *a)
{
	/* DWARF unwinding reads .eh_frame_hdr from non-executable maps too */
	a->mmap_data = !!(a->sample_type & PERF_SAMPLE_STACK_USER);
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
}

void record_setup_attrs(struct session *s, bool inherit, bool on_exec,
			uint64_t data_bytes)
{
	const struct perfring_record_opts *o = s->o;
	uint64_t freq = OPTS_GET(o, freq, 0), period = OPTS_GET(o, period, 0);
	bool callchain = OPTS_GET(o, callchain, false);
	uint32_t dwarf = callchain ? OPTS_GET(o, callchain_dwarf_size, 0) : 0;
	uint16_t max_stack = OPTS_GET(o, callchain_max_stack, 0);
	uint64_t user_regs = OPTS_GET(o, user_regs, 0);

	for (int i = 0; i < s->el.nr_events; i++) {
		struct perf_event_attr *a = &s->events[i].attr;

		a->size = sizeof(*a);
		a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
				 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
		if (callchain)
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (callchain && max_stack)
			a->sample_max_stack = max_stack;
		if (user_regs) {
			a->sample_type |= PERF_SAMPLE_REGS_USER;
			a->sample_regs_user = user_regs;
		}
		if (dwarf) {
			/* perf's dwarf mode: all user registers (a subset
			 * from --user-regs gets IP and SP), the stack, data
			 * addresses, and no user part in the callchain */
			a->sample_type |=
				PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
				PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
			a->sample_regs_user =
				user_regs ? user_regs | DWARF_MINIMAL_REGS :
					    DWARF_REGS_MASK;
			a->sample_stack_user = dwarf;
			a->exclude_callchain_user = 1;
		}
		if (s->events[i].has_period || s->events[i].has_freq) {
			/* period=/freq= terms win over -c/-F, as in perf */
			if (s->events[i].tracepoint &&
			    !s->events[i].tp_pmu_syntax)
				a->sample_type |= PERF_SAMPLE_RAW;
		} else if (s->events[i].tracepoint &&
			   !s->events[i].tp_pmu_syntax) {
			a->sample_type |= PERF_SAMPLE_RAW;
			a->sample_period = period ? period : 1;
		} else if (period) {
			a->sample_period = period;
		} else {
			a->freq = 1;
			a->sample_freq = freq ? freq : DEFAULT_FREQ;
		}
		if (OPTS_GET(o, sample_addr, false)) /* perf's -d */
			a->sample_type |= PERF_SAMPLE_ADDR |
					  PERF_SAMPLE_DATA_SRC;
		/* -R, -W, --phys-data, --data/code-page-size */
		a->sample_type |= OPTS_GET(o, sample_bits, 0) & SAMPLE_BITS_OK;
		if (callchain && OPTS_GET(o, user_callchains, false))
			a->exclude_callchain_kernel = 1;
		if (callchain && OPTS_GET(o, kernel_callchains, false))
			a->exclude_callchain_user = 1;
		a->sample_id_all = 1;
		a->use_clockid = 1;
		a->clockid = s->clockid;
		a->disabled = 1;
		a->inherit = inherit;
		if (inherit && OPTS_GET(o, inherit_stat, false)) {
			/* perf record -s: each exiting child's counts */
			a->inherit_stat = 1;
			a->read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED |
					  PERF_FORMAT_TOTAL_TIME_RUNNING |
					  PERF_FORMAT_ID;
		}
		/* -D: enabled by us once the delay is over */
		a->enable_on_exec = on_exec && !record_delayed(o);
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)(data_bytes / 4);
		/* exclude_* and precise_ip are the event string's. */
		if (i == 0 && !s->use_track) {
			set_tracking(a);
			a->context_switch = OPTS_GET(o, switch_events, false);
		}
		if (i == 0 && !s->use_track && OPTS_GET(o, sample_addr, false))
			a->mmap_data = 1;
		pe_group_attr(&s->events[i], i);
	}
	if (s->use_track) {
		s->track_ev.attr = s->events[0].attr;
		s->track_ev.attr.type = PERF_TYPE_SOFTWARE;
		s->track_ev.attr.config = PERF_COUNT_SW_DUMMY;
		s->track_ev.attr.sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
		s->track_ev.attr.freq = 0;
		s->track_ev.attr.sample_period = 1;
		set_tracking(&s->track_ev.attr);
		s->track_ev.attr.context_switch =
			OPTS_GET(o, switch_events, false);
		s->track_ev.attr.mmap_data = OPTS_GET(o, sample_addr, false);
		if (s->track_now) {
			s->track_ev.attr.disabled = 0;
			s->track_ev.attr.enable_on_exec = 0;
		} else if (record_delayed(o) && on_exec) {
			/* perf: tracked from the exec, the samples later */
			s->track_ev.attr.enable_on_exec = 1;
		}
		snprintf(s->track_ev.name, sizeof(s->track_ev.name), "dummy");
		s->track_el.events = &s->track_ev;
		s->track_el.nr_events = 1;
	}
}

const char *record_output_path(const struct perfring_record_opts *o)
{
	const char *out = OPTS_GET(o, output, NULL);

	return out ? out : "perf.data";
}

int record_open_output(struct session *s)
{
	const char *out = record_output_path(s->o);
	if (!strcmp(out, "-")) {
		s->out_fd = STDOUT_FILENO;
		s->pipe = true;
		return 0;
	}
	if (OPTS_GET(s->o, push, NULL) && !strcmp(out, "/dev/null")) {
		/* --push alone: nothing kept here, streamed as a pipe is */
		s->out_fd = open(out, O_WRONLY | O_CLOEXEC);
		s->pipe = true;
		return s->out_fd < 0 ? -errno : 0;
	}
	/* The previous file is kept as .old, as perf does; never through
	 * a symbolic link, always a new file (0600). */
	s->out_fd = out_file_open(out, OUT_FILE_KEEP_OLD | OUT_FILE_SEEKABLE);
	return s->out_fd < 0 ? s->out_fd : 0;
}

/* The attr and name of an application event type. */
static void app_attr(struct perf_event_attr *a, const struct app_event_desc *d,
		     char *name, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = d->id;
	a->sample_type = APP_SAMPLE_TYPE;
	a->sample_period = 1; /* no PERIOD in the samples: perf takes this */
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	snprintf(name, size, "%s:%s", d->provider, d->name);
}

/* A new application event: its attr joins the file's. */
int record_app_new_event(void *ctx, const struct app_event_desc *d,
			 uint64_t sample_id)
{
	struct session *s = ctx;
	struct perf_event_attr a;
	char name[2 * APP_NAME_MAX + 2];
	char *text = NULL;
	size_t len;
	int err;

	app_attr(&a, d, name, sizeof(name));
	s->app_types++;
	err = pd_writer_add_attr(s->w, &a, name, &sample_id, 1);
	if (err)
		return err;
	/* Its format joins TRACING_DATA; the writer puts both into the file
	 * before any of the event's records becomes part of it. */
	if (!s->have_tdata) {
		if (!s->warned_tdata)
			pr_warn("perf.data: no tracing data (tracefs): perf cannot decode the application events");
		s->warned_tdata = true;
		return 0;
	}
	err = app_desc_format_file(d, &text, &len);
	if (!err)
		err = pd_writer_add_format(s->w, d->provider, text, len);
	free(text);
	return err;
}

/* --switch-output: a known application event type into the new file. */
int record_app_readd(void *ctx, const struct app_event_desc *d,
		     const char *format, size_t len)
{
	struct session *s = ctx;
	struct perf_event_attr a;
	char name[2 * APP_NAME_MAX + 2];
	uint64_t sample_id = APP_SAMPLE_ID(d->id);
	int err;

	app_attr(&a, d, name, sizeof(name));
	err = pd_writer_add_attr(s->w, &a, name, &sample_id, 1);
	if (!err && s->have_tdata)
		err = pd_writer_add_format(s->w, d->provider, format, len);
	return err;
}

int record_app_write(void *ctx, const void *buf, size_t len)
{
	struct session *s = ctx;
	int err;

	if (len > record_max_size_room(s)) {
		const void *ptr[2] = { buf, NULL };
		size_t l[2] = { len, 0 };

		record_max_size_cut(s, ptr, l, 1, record_max_size_room(s));
		len = l[0];
		if (!len)
			return 0;
	}
	/* app_session built these records: whole, sizes right; with -z
	 * compressed as the kernel rings' data is */
	err = s->z ? pd_compress_records(s->z, s->w, buf, len) :
		     pd_writer_write_whole(s->w, buf, len);

	if (!err)
		s->st.bytes += len;
	return err;
}

/*
 * TRACING_DATA for the kernel's tracepoint events, or an empty one (no
 * system) when application events may come: their formats are added to it
 * as they appear (pd_writer_add_format()).
 */
/* Whether this user can read tracefs's event headers. */
bool record_tracefs_readable(const char *tracefs)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	return !access(path, R_OK);
}
