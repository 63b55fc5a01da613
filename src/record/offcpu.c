// SPDX-License-Identifier: MIT
/*
 * `perfring record --off-cpu` (offcpu.h): the sched events' rings read by
 * the recorder, blocks measured and written as perf's offcpu-time samples.
 *
 * Every pass reads each ring whole into one array of small events (a
 * switch-out with its interned call chain and prev_state, a switch-in, a
 * wake-up with the waker's chain), sorts it by time (each ring's run is
 * nearly sorted: an insertion sort, then the runs merged), and processes
 * the events up to the horizon: a thread switched out on one CPU comes
 * back on another, whose ring may have been read first, so the last
 * 50 ms wait for a later pass.  The horizon never falls behind the pass
 * that ended the last round (the recorder ends rounds at most every
 * 100 ms with --off-cpu), so whatever is written later is newer than
 * every record of the round before: perf's FINISHED_ROUND ordering holds
 * for the samples made here too.
 *
 * Switch-ins: with a command, -p or -t the events are the tasks' own
 * (inherited), and a sched_switch sample only ever shows the traced task
 * leaving; the task's coming back is the PERF_RECORD_SWITCH the same
 * event writes (context_switch).  System-wide (-a, -C) sched_switch sees
 * every switch and its next_pid is the one coming in.
 *
 * The BPF mode (the default when the kernel takes the program): the
 * program measures the blocks and sums the short ones in the kernel;
 * the rings here are bpf-output events, one per CPU, carrying only the
 * long blocks (each an EV_BLOCK, ordered with the same horizon), and the
 * sums are read from the program's map at the end (offcpu_flush).  Its
 * stacks are ids, made into the same call chains (context markers, then
 * the addresses) the sched_switch samples carry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "perfring.h"
#include "../common/log.h"
#include "../format/tracing_data.h"
#include "../machine/intern.h"
#include "../machine/threads.h"
#include "../sources/offcpu_bpf.h"
#include "../sources/perf_event.h"
#include "../tracepoint/tpfmt.h"
#include "offcpu.h"

/* Sample ids of the three events: out of the kernel's (counted up from
 * 0), the application events' (bit 62) and the AUX replay's (bit 61). */
#define OC_ID_BASE (1ull << 60)
enum { OC_TIME, OC_PREEMPT, OC_WAKER, OC_NR };
static const char *const oc_names[OC_NR] = { OFFCPU_EVENT, OFFCPU_PREEMPT_EVENT,
					     OFFCPU_WAKER_EVENT };

/* The newest events wait this long for the other CPUs' rings: an event
 * is visible once its writer commits it, and a virtual CPU can be held by
 * its host between the event's time stamp and the commit. */
#define HORIZON_SLACK_NS 50000000ull
/* prev_state bits (the tracepoint's report values): exiting tasks */
#define STATE_DEAD (0x10 | 0x20)

enum { EV_OUT, EV_IN, EV_WAKE, EV_LOST, EV_BLOCK };

struct oc_ev {
	uint64_t time;
	uint32_t seq; /* read order: ties keep it */
	uint8_t kind;
	bool runnable; /* EV_OUT: preempted, still on the run queue */
	bool dead; /* EV_OUT: the task exits */
	int32_t cpu;
	int32_t pid, tid; /* who left, came in, or woke */
	int32_t wakee; /* EV_WAKE */
	uint32_t stack; /* interned call chain (0: none) */
	void *dwarf; /* --call-graph dwarf: registers and stack, owned */
	uint32_t dwarf_len;
	struct offcpu_bpf_block *block; /* EV_BLOCK: owned */
};

struct oc_thread {
	int32_t tid; /* 0: free slot (the idle task is never tracked) */
	int32_t pid;
	bool pending, runnable, has_waker;
	int32_t out_cpu;
	uint64_t out_time;
	uint32_t stack;
	void *dwarf;
	uint32_t dwarf_len;
	int32_t waker_pid, waker_tid, waker_cpu;
	uint32_t waker_stack;
	uint64_t wake_time;
	void *waker_dwarf;
	uint32_t waker_dwarf_len;
};

/* Aggregation keys of the short blocks. */
struct agg_key {
	int32_t pid, tid;
	uint32_t kind, stack;
};
struct agg_wkey {
	int32_t pid, tid;
	uint32_t stack;
	int32_t waker_pid, waker_tid;
	uint32_t waker_stack;
};

struct offcpu {
	struct offcpu_opts o;
	struct pe_event events[2]; /* sched_switch, sched_waking */
	struct pe_evlist el;
	bool system_wide;
	uint64_t sample_type; /* of the sched events */
	uint64_t out_type; /* of offcpu-time/-preempted (waker: + RAW) */
	uint32_t prev_state_off, prev_state_size, next_pid_off, wake_pid_off;
	bool have_next_pid;

	struct oc_ev *ev, *tmp; /* pending events; merge room */
	size_t nr_ev, cap_ev;
	size_t *runs; /* start of each sorted run in ev */
	size_t nr_runs, cap_runs;
	uint32_t seq;
	uint64_t last_now, floor; /* the last pass's start, the last round's */

	struct oc_thread *thr;
	uint32_t thr_mask, nr_thr;

	struct itab stacks; /* key: the call chain's u64s */
	struct itab agg, wagg; /* agg_key, agg_wkey */
	struct u64v agg_sum, wagg_sum;

	unsigned char *rec; /* a sample being built */
	size_t rec_cap;
	uint64_t *chain; /* scratch */
	struct offcpu_stats st;

	struct offcpu_bpf *bpf; /* the BPF mode's program, or NULL */
	uint64_t *bpf_chain; /* scratch: a chain made of two stacks */
};

/* ---- set-up ----------------------------------------------------------- */

int offcpu_new(const struct offcpu_opts *o, struct offcpu **out)
{
	struct offcpu *oc = calloc(1, sizeof(*oc));

	if (!oc)
		return -ENOMEM;
	oc->o = *o;
	/* the sched events' samples, and the ones written (either mode) */
	oc->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	oc->out_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
		       PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (oc->o.dwarf_size) {
		oc->sample_type |= PERF_SAMPLE_REGS_USER |
				   PERF_SAMPLE_STACK_USER;
		oc->out_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	}
	*out = oc;
	return 0;
}

/* prev_state, next_pid and sched_waking's pid: where they lie. */
static int field_layouts(struct offcpu *oc)
{
	const char *names[2] = { oc->events[0].tp_name, oc->events[1].tp_name };
	struct tpfmt *t = NULL;
	uint32_t sz;
	size_t len;
	void *blob;
	int err;

	err = tracing_data_build(oc->o.tracefs, names, 2, &blob, &len);
	if (err)
		return err;
	err = tpfmt_new(blob, len, &t);
	free(blob);
	if (err)
		return err;
	err = tpfmt_field_layout(t, (int)oc->events[0].attr.config,
				 "prev_state", &oc->prev_state_off,
				 &oc->prev_state_size);
	if (!err)
		err = tpfmt_field_layout(t, (int)oc->events[0].attr.config,
					 "next_pid", &oc->next_pid_off, &sz);
	if (!err && sz != 4)
		err = -EINVAL;
	if (!err)
		err = tpfmt_field_layout(t, (int)oc->events[1].attr.config,
					 "pid", &oc->wake_pid_off, &sz);
	if (!err && sz != 4)
		err = -EINVAL;
	if (!err && oc->prev_state_size != 4 && oc->prev_state_size != 8)
		err = -EINVAL;
	tpfmt_free(t);
	if (err)
		pr_err("--off-cpu: the sched tracepoints' formats lack prev_state, next_pid or pid");
	return err;
}

static void sched_attr(struct offcpu *oc, struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->sample_type = oc->sample_type;
	a->sample_period = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = oc->o.clockid;
	a->disabled = 1;
	a->inherit = oc->o.inherit;
	a->enable_on_exec = oc->o.on_exec;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(oc->o.data_bytes / 4);
	if (oc->o.max_stack)
		a->sample_max_stack = oc->o.max_stack;
	if (oc->o.dwarf_size) {
		a->sample_regs_user = oc->o.dwarf_regs;
		a->sample_stack_user = oc->o.dwarf_size;
		a->exclude_callchain_user = 1;
	}
	if (oc->o.user_only)
		a->exclude_callchain_kernel = 1;
	if (oc->o.kernel_only)
		a->exclude_callchain_user = 1;
}

/* ---- the BPF mode ------------------------------------------------------ */

/* Why the BPF mode cannot do what this recording asks, or NULL. */
static const char *bpf_unfit(const struct offcpu *oc, int nr_cpus,
			     bool system_wide)
{
	int online[1024];

	if (oc->o.dwarf_size)
		return "--call-graph dwarf needs each block's user stack copied, which the program does not do";
	if (system_wide && nr_cpus != pe_online_cpus(online, 1024))
		return "-C: the program sees every CPU";
	return NULL;
}

/* The bpf-output events the long blocks come through: one per CPU,
 * enabled from the start (the program's own switch says when). */
static int bpf_outputs(struct offcpu *oc)
{
	static const pid_t any_tid = -1;
	struct perf_event_attr *a = &oc->events[0].attr;
	int cpus[1024], nr_cpus = pe_online_cpus(cpus, 1024), err;

	if (nr_cpus < 0)
		return nr_cpus;
	memset(&oc->events[0], 0, sizeof(oc->events[0]));
	snprintf(oc->events[0].name, sizeof(oc->events[0].name), "%s",
		 "bpf-output");
	oc->events[0].leader = -1;
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = oc->o.clockid;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(oc->o.data_bytes / 4);
	oc->el.events = oc->events;
	oc->el.nr_events = 1;
	err = pe_evlist_open(&oc->el, cpus, nr_cpus, &any_tid, 1,
			     oc->o.data_bytes, false);
	for (int i = 0; !err && i < oc->el.nr_bufs; i++)
		err = offcpu_bpf_set_output(oc->bpf, oc->el.bufs[i].cpu,
					    oc->el.bufs[i].fd);
	return err;
}

static int bpf_open(struct offcpu *oc, int nr_cpus, const pid_t *tids,
		    int nr_tids)
{
	bool system_wide = nr_tids == 1 && tids[0] == -1;
	struct offcpu_bpf_opts bo = {
		.thresh_ns = oc->o.thresh_ns,
		.system_wide = system_wide,
		.follow = oc->o.inherit,
		.user = !oc->o.kernel_only,
		.kernel = !oc->o.user_only,
		.max_stack = oc->o.max_stack,
	};
	const char *unfit = bpf_unfit(oc, nr_cpus, system_wide);
	char why[512];
	int err;

	if (unfit) {
		snprintf(why, sizeof(why), "%s", unfit);
		err = -EOPNOTSUPP;
	} else {
		err = offcpu_bpf_open(&bo, &oc->bpf, why, sizeof(why));
	}
	if (!err)
		err = bpf_outputs(oc);
	for (int i = 0; !err && !system_wide && i < nr_tids; i++)
		err = offcpu_bpf_trace(oc->bpf, tids[i], oc->o.on_exec);
	if (!err) {
		/* a command's threads are armed: traced from their exec */
		if (oc->o.on_exec)
			offcpu_bpf_enable(oc->bpf, true);
		oc->st.mode = OFFCPU_MODE_BPF;
		oc->st.nr_buffers = (uint32_t)oc->el.nr_bufs;
		oc->bpf_chain = calloc(2 * (offcpu_bpf_max_stack(oc->bpf) + 1),
				       sizeof(uint64_t));
		return oc->bpf_chain ? 0 : -ENOMEM;
	}
	if (oc->bpf && !unfit)
		snprintf(why, sizeof(why), "%s", strerror(-err));
	pe_evlist_close(&oc->el);
	memset(&oc->el, 0, sizeof(oc->el));
	offcpu_bpf_close(oc->bpf);
	oc->bpf = NULL;
	if (oc->o.mode == OFFCPU_MODE_BPF)
		pr_err("--off-cpu-mode bpf: %s", why);
	else
		pr_warn("--off-cpu: the BPF program cannot run (%s): reading the sched events instead",
			why);
	return err;
}

int offcpu_open(struct offcpu *oc, const int *cpus, int nr_cpus,
		const pid_t *tids, int nr_tids)
{
	int n, err;

	if (oc->o.mode != OFFCPU_MODE_EVENTS) {
		err = bpf_open(oc, nr_cpus, tids, nr_tids);
		if (!err || oc->o.mode == OFFCPU_MODE_BPF)
			return err;
	}
	oc->st.mode = OFFCPU_MODE_EVENTS;
	if (!oc->o.tracefs) {
		pr_err("--off-cpu: no tracefs for the sched tracepoints");
		return -ENOENT;
	}
	n = pe_events_parse("sched:sched_switch", NULL, oc->o.tracefs,
			    &oc->events[0], 1);
	if (n == 1)
		n = pe_events_parse("sched:sched_waking", NULL, oc->o.tracefs,
				    &oc->events[1], 1);
	if (n != 1)
		return n < 0 ? n : -ENOENT;
	err = field_layouts(oc);
	if (err)
		return err;
	oc->system_wide = nr_tids == 1 && tids[0] == -1;
	for (int i = 0; i < 2; i++) {
		oc->events[i].leader = -1;
		sched_attr(oc, &oc->events[i].attr);
	}
	/* The traced tasks' switch-ins (system-wide: next_pid says). */
	oc->events[0].attr.context_switch = !oc->system_wide;
	oc->el.events = oc->events;
	oc->el.nr_events = 2;
	err = pe_evlist_open(&oc->el, cpus, nr_cpus, tids, nr_tids,
			     oc->o.data_bytes, false);
	if (!err)
		oc->st.nr_buffers = (uint32_t)oc->el.nr_bufs;
	return err;
}

int offcpu_add_attrs(struct offcpu *oc, struct pd_writer *w)
{
	for (int i = 0; i < OC_NR; i++) {
		struct perf_event_attr a;
		uint64_t id = OC_ID_BASE + (uint64_t)i;
		int err;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		/* perf's --off-cpu: a bpf-output event named offcpu-time */
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_BPF_OUTPUT;
		a.sample_period = 1;
		a.sample_type = oc->out_type;
		if (i == OC_WAKER)
			a.sample_type |= PERF_SAMPLE_RAW;
		a.sample_id_all = 1;
		a.use_clockid = 1;
		a.clockid = oc->o.clockid;
		a.disabled = 1;
		if (oc->o.dwarf_size) {
			a.sample_regs_user = oc->o.dwarf_regs;
			a.sample_stack_user = oc->o.dwarf_size;
		}
		err = pd_writer_add_attr(w, &a, oc_names[i], &id, 1);
		if (err)
			return err;
	}
	return 0;
}

int offcpu_enable(struct offcpu *oc, bool enable)
{
	if (oc && oc->bpf) {
		offcpu_bpf_enable(oc->bpf, enable);
		return 0;
	}
	return oc ? pe_evlist_enable(&oc->el, enable) : 0;
}

int offcpu_nr_fds(const struct offcpu *oc)
{
	return oc ? oc->el.nr_bufs : 0;
}

int offcpu_fd(const struct offcpu *oc, int i)
{
	return oc->el.bufs[i].fd;
}

/* ---- reading the rings ------------------------------------------------ */

static struct oc_ev *ev_add(struct offcpu *oc)
{
	if (oc->nr_ev == oc->cap_ev) {
		size_t n = oc->cap_ev ? oc->cap_ev * 2 : 4096;
		struct oc_ev *v = realloc(oc->ev, n * sizeof(*v));
		struct oc_ev *t;

		if (!v)
			return NULL;
		oc->ev = v;
		t = realloc(oc->tmp, n * sizeof(*t));
		if (!t)
			return NULL;
		oc->tmp = t;
		oc->cap_ev = n;
	}
	memset(&oc->ev[oc->nr_ev], 0, sizeof(oc->ev[0]));
	oc->ev[oc->nr_ev].seq = oc->seq++;
	return &oc->ev[oc->nr_ev++];
}

/* A bounded reader over one record. */
struct cur {
	const unsigned char *p, *e;
};

static bool get(struct cur *c, void *dst, size_t n)
{
	if ((size_t)(c->e - c->p) < n)
		return false;
	memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

static bool skip(struct cur *c, uint64_t n)
{
	if ((uint64_t)(c->e - c->p) < n)
		return false;
	c->p += n;
	return true;
}

static int64_t raw_num(const unsigned char *raw, uint32_t size, uint32_t off,
		       uint32_t len)
{
	int64_t v64 = 0;
	int32_t v32 = 0;

	if (off > size || len > size - off)
		return 0;
	if (len == 8) {
		memcpy(&v64, raw + off, 8);
		return v64;
	}
	memcpy(&v32, raw + off, 4);
	return v32;
}

/* A sched_switch or sched_waking sample into events. */
static int parse_sample(struct offcpu *oc, const unsigned char *p, size_t size)
{
	struct cur c = { p + sizeof(struct perf_event_header), p + size };
	uint64_t id, time, nr;
	uint32_t pt[2], cpu[2], raw_size;
	uint16_t type;
	const unsigned char *chain, *raw, *dw = NULL;
	struct oc_ev *e;
	int err;

	if (!get(&c, &id, 8) || !get(&c, pt, 8) || !get(&c, &time, 8) ||
	    !get(&c, cpu, 8) || !get(&c, &nr, 8) || nr > 4096)
		return 0;
	chain = c.p;
	if (!skip(&c, nr * 8) || !get(&c, &raw_size, 4))
		return 0;
	raw = c.p;
	if (!skip(&c, raw_size))
		return 0;
	if (oc->o.dwarf_size) {
		uint64_t abi, ssize;

		dw = c.p;
		if (!get(&c, &abi, 8) ||
		    (abi && !skip(&c, 8ull * (uint64_t)__builtin_popcountll(
						     oc->o.dwarf_regs))) ||
		    !get(&c, &ssize, 8) || (ssize && !skip(&c, ssize + 8)))
			return 0;
	}
	if (raw_size < 2)
		return 0;
	memcpy(&type, raw, 2); /* common_type: which tracepoint */
	e = ev_add(oc);
	if (!e)
		return -ENOMEM;
	e->time = time;
	e->cpu = (int32_t)cpu[0];
	e->pid = (int32_t)pt[0];
	e->tid = (int32_t)pt[1];
	if (type == oc->events[1].attr.config) {
		e->kind = EV_WAKE;
		e->wakee = (int32_t)raw_num(raw, raw_size, oc->wake_pid_off, 4);
	} else {
		int64_t st = raw_num(raw, raw_size, oc->prev_state_off,
				     oc->prev_state_size);

		e->kind = EV_OUT;
		e->runnable = !(st & 0xff);
		e->dead = st & STATE_DEAD;
	}
	if (nr) {
		err = itab_intern(&oc->stacks, chain, nr * 8, &e->stack, NULL);
		if (err)
			return err;
	}
	if (dw && !e->dead) {
		e->dwarf_len = (uint32_t)(c.p - dw);
		e->dwarf = malloc(e->dwarf_len);
		if (!e->dwarf)
			return -ENOMEM;
		memcpy(e->dwarf, dw, e->dwarf_len);
	}
	/* System-wide: next_pid comes in on this CPU now. */
	if (e->kind == EV_OUT && oc->system_wide) {
		int32_t next =
			(int32_t)raw_num(raw, raw_size, oc->next_pid_off, 4);
		struct oc_ev *in = ev_add(oc); /* (e may have moved) */

		if (!in)
			return -ENOMEM;
		in->kind = EV_IN;
		in->time = time;
		in->cpu = (int32_t)cpu[0];
		in->pid = -1;
		in->tid = next;
	}
	return 0;
}

/* A block's chain: kernel then user stack, as a sched_switch sample's. */
static int bpf_chain(struct offcpu *oc, int32_t ustack, int32_t kstack,
		     uint32_t *id)
{
	uint32_t max = offcpu_bpf_max_stack(oc->bpf), n = 0, k;
	uint64_t *c = oc->bpf_chain;

	*id = 0;
	k = offcpu_bpf_stack(oc->bpf, false, kstack, c + 1, max);
	if (k) {
		c[0] = PERF_CONTEXT_KERNEL;
		n = k + 1;
	}
	k = offcpu_bpf_stack(oc->bpf, true, ustack, c + n + 1, max);
	if (k) {
		c[n] = PERF_CONTEXT_USER;
		n += k + 1;
	}
	return n ? itab_intern(&oc->stacks, c, n * 8, id, NULL) : 0;
}

/* A long block the program sent: its bpf-output sample. */
static int parse_block(struct offcpu *oc, const unsigned char *p, size_t size)
{
	struct cur c = { p + sizeof(struct perf_event_header), p + size };
	uint64_t id, time;
	uint32_t cpu[2], raw_size;
	struct offcpu_bpf_block b;
	struct oc_ev *e;

	if (!get(&c, &id, 8) || !get(&c, &time, 8) || !get(&c, cpu, 8) ||
	    !get(&c, &raw_size, 4) || raw_size < sizeof(b) ||
	    !get(&c, &b, sizeof(b)) || b.end < b.start ||
	    (b.key.has_waker && b.wake_time > b.end))
		return 0; /* not one of the program's: left out */
	e = ev_add(oc);
	if (!e)
		return -ENOMEM;
	e->kind = EV_BLOCK;
	e->time = time;
	e->cpu = (int32_t)cpu[0];
	e->block = malloc(sizeof(b));
	if (!e->block)
		return -ENOMEM;
	memcpy(e->block, &b, sizeof(b));
	return 0;
}

/* One record of a ring (whole, copied if it wrapped). */
static int parse_record(struct offcpu *oc, const unsigned char *p, size_t size)
{
	const struct perf_event_header *h = (const void *)p;
	uint64_t v[4];

	oc->st.events++;
	if (oc->bpf) {
		/* long blocks; lost: counts at 16, sample_id after */
		if (h->type == PERF_RECORD_SAMPLE)
			return parse_block(oc, p, size);
		if (h->type == PERF_RECORD_LOST && size >= 8 + 16) {
			memcpy(v, p + 8, 16);
			oc->st.lost += v[1];
		}
		return 0;
	}
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return parse_sample(oc, p, size);
	case PERF_RECORD_SWITCH:
		/* sample_id: TID, TIME, CPU, IDENTIFIER */
		if (size < 8 + 32 || (h->misc & PERF_RECORD_MISC_SWITCH_OUT))
			return 0;
		memcpy(v, p + 8, 32);
		{
			struct oc_ev *e = ev_add(oc);

			if (!e)
				return -ENOMEM;
			e->kind = EV_IN;
			e->pid = (int32_t)(uint32_t)v[0];
			e->tid = (int32_t)(v[0] >> 32);
			e->time = v[1];
			e->cpu = (int32_t)(uint32_t)v[2];
		}
		return 0;
	case PERF_RECORD_THROTTLE:
		/* sched events dropped until the next tick: as lost */
		if (size >= 8 + 24) {
			struct oc_ev *e = ev_add(oc);

			if (!e)
				return -ENOMEM;
			memcpy(v, p + 8, 8);
			e->kind = EV_LOST;
			e->time = v[0];
		}
		return 0;
	case PERF_RECORD_LOST:
		if (size >= 8 + 16 + 32) {
			struct oc_ev *e = ev_add(oc);

			if (!e)
				return -ENOMEM;
			memcpy(v, p + 8, 16);
			oc->st.lost += v[1];
			memcpy(v, p + 24, 32);
			e->kind = EV_LOST;
			e->time = v[1];
		}
		return 0;
	default:
		return 0;
	}
}

static int read_ring(struct offcpu *oc, struct pe_buffer *b)
{
	const void *ptr[2];
	size_t len[2], total, off = 0;
	unsigned char wrap[65536];
	int64_t avail;
	int pieces, err = 0;

	avail = perfring_read_begin(b->ring);
	if (avail <= 0)
		return avail == -EBADMSG ? 0 : (int)avail;
	pieces = perfring_read_range(b->ring, ptr, len);
	total = pieces > 0 ? len[0] + (pieces > 1 ? len[1] : 0) : 0;
	while (!err && off + sizeof(struct perf_event_header) <= total) {
		struct perf_event_header h;
		const unsigned char *p;

		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] =
				off + i < len[0] ?
					((const unsigned char *)
						 ptr[0])[off + i] :
					((const unsigned char *)
						 ptr[1])[off + i - len[0]];
		if (h.size < sizeof(h) || off + h.size > total)
			break;
		if (off + h.size <= len[0]) {
			p = (const unsigned char *)ptr[0] + off;
		} else if (off >= len[0]) {
			p = (const unsigned char *)ptr[1] + (off - len[0]);
		} else {
			size_t first = len[0] - off;

			memcpy(wrap, (const unsigned char *)ptr[0] + off,
			       first);
			memcpy(wrap + first, ptr[1], h.size - first);
			p = wrap;
		}
		err = parse_record(oc, p, h.size);
		off += h.size;
	}
	perfring_read_end(b->ring);
	return err;
}

/* ---- ordering ---------------------------------------------------------- */

static bool ev_before(const struct oc_ev *a, const struct oc_ev *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* A ring's events are in order but for the odd interrupt. */
static void insertion_sort(struct oc_ev *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct oc_ev x = v[i];
		size_t j = i;

		if (!ev_before(&x, &v[j - 1]))
			continue;
		while (j > 0 && ev_before(&x, &v[j - 1])) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static int run_add(struct offcpu *oc, size_t start)
{
	if (oc->nr_runs == oc->cap_runs) {
		size_t n = oc->cap_runs ? oc->cap_runs * 2 : 16;
		size_t *v = realloc(oc->runs, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		oc->runs = v;
		oc->cap_runs = n;
	}
	oc->runs[oc->nr_runs++] = start;
	return 0;
}

/* The sorted runs merged pairwise into one. */
static void merge_runs(struct offcpu *oc)
{
	while (oc->nr_runs > 1) {
		size_t k = 0;

		for (size_t r = 0; r < oc->nr_runs; r += 2) {
			size_t a = oc->runs[r];
			size_t ae = r + 1 < oc->nr_runs ? oc->runs[r + 1] :
							  oc->nr_ev;
			size_t b = ae;
			size_t be = r + 2 < oc->nr_runs ? oc->runs[r + 2] :
							  oc->nr_ev;
			size_t o = a;

			while (a < ae || b < be)
				oc->tmp[o++] =
					b >= be || (a < ae &&
						    !ev_before(&oc->ev[b],
							       &oc->ev[a])) ?
						oc->ev[a++] :
						oc->ev[b++];
			oc->runs[k++] = oc->runs[r];
		}
		memcpy(oc->ev, oc->tmp, oc->nr_ev * sizeof(*oc->ev));
		oc->nr_runs = k;
	}
}

/* ---- threads ------------------------------------------------------------ */

static struct oc_thread *thread_get(struct offcpu *oc, int32_t tid, bool add)
{
	uint32_t h;

	if (tid <= 0)
		return NULL;
	if (add && (oc->nr_thr + 1) * 2 > oc->thr_mask + 1) {
		uint32_t n = oc->thr ? (oc->thr_mask + 1) * 2 : 1024;
		struct oc_thread *v = calloc(n, sizeof(*v));

		if (!v)
			return NULL;
		for (uint32_t i = 0; oc->thr && i <= oc->thr_mask; i++) {
			struct oc_thread *t = &oc->thr[i];

			if (!t->tid)
				continue;
			for (h = (uint32_t)t->tid * 2654435761u & (n - 1);
			     v[h].tid; h = (h + 1) & (n - 1))
				;
			v[h] = *t;
		}
		free(oc->thr);
		oc->thr = v;
		oc->thr_mask = n - 1;
	}
	if (!oc->thr)
		return NULL;
	for (h = (uint32_t)tid * 2654435761u & oc->thr_mask; oc->thr[h].tid;
	     h = (h + 1) & oc->thr_mask)
		if (oc->thr[h].tid == tid)
			return &oc->thr[h];
	if (!add)
		return NULL;
	oc->nr_thr++;
	oc->thr[h].tid = tid;
	return &oc->thr[h];
}

static void thread_clear(struct oc_thread *t)
{
	free(t->dwarf);
	free(t->waker_dwarf);
	t->dwarf = t->waker_dwarf = NULL;
	t->pending = t->has_waker = false;
}

/* ---- writing ------------------------------------------------------------ */

static unsigned char *rec_room(struct offcpu *oc, size_t n)
{
	if (n > oc->rec_cap) {
		unsigned char *p = realloc(oc->rec, n);

		if (!p)
			return NULL;
		oc->rec = p;
		oc->rec_cap = n;
	}
	return oc->rec;
}

static const uint64_t *stack_of(struct offcpu *oc, uint32_t stack, uint64_t *nr)
{
	size_t len = 0;
	const char *k = stack ? itab_key(&oc->stacks, stack, &len) : NULL;

	*nr = len / 8;
	if (!k)
		return NULL;
	/* itab keys are not aligned: copied to the scratch chain */
	free(oc->chain);
	oc->chain = malloc(len ? len : 8);
	if (!oc->chain) {
		*nr = 0;
		return NULL;
	}
	memcpy(oc->chain, k, len);
	return oc->chain;
}

/* The sample's ip and cpumode: its first address, in the mode of the
 * context marker before it (perf's offcpu-time: the first entry). */
static uint64_t chain_ip(const uint64_t *chain, uint64_t nr, uint16_t *misc)
{
	uint8_t mode = 0;

	for (uint64_t i = 0; i < nr; i++) {
		if (callchain_marker(chain[i], &mode))
			continue;
		if (!mode)
			mode = chain[i] >= 0xffff800000000000ull ?
				       PERF_RECORD_MISC_KERNEL :
				       PERF_RECORD_MISC_USER;
		*misc = mode;
		return chain[i];
	}
	*misc = PERF_RECORD_MISC_USER;
	return 0;
}

struct sample_out {
	int which;
	int32_t pid, tid, cpu;
	uint64_t time, period;
	uint32_t stack;
	const void *raw; /* offcpu-waker's payload */
	size_t raw_len;
	const void *dwarf;
	uint32_t dwarf_len;
};

static int put_sample(struct offcpu *oc, const struct sample_out *so,
		      offcpu_emit_fn emit, void *ctx)
{
	uint64_t nr, *u, ip;
	const uint64_t *chain = stack_of(oc, so->stack, &nr);
	/* RAW: u32 size, then the payload padded so the sample stays
	 * 8-byte aligned, as the kernel pads it */
	size_t raw_sz = so->which == OC_WAKER ? (so->raw_len + 4 + 7) / 8 * 8 :
						0;
	size_t dw = oc->o.dwarf_size ? (so->dwarf ? so->dwarf_len : 16) : 0;
	size_t size = 8 + 7 * 8 + nr * 8 + raw_sz + dw, n = 1;
	struct perf_event_header *h;
	unsigned char *p;
	uint16_t misc;
	int err;

	if (size > 65528)
		return 0; /* cannot be a record: the stack alone is too big */
	p = rec_room(oc, size);
	if (!p)
		return -ENOMEM;
	memset(p, 0, size);
	h = (void *)p;
	u = (uint64_t *)(void *)p;
	ip = chain_ip(chain, nr, &misc);
	h->type = PERF_RECORD_SAMPLE;
	h->misc = misc;
	h->size = (uint16_t)size;
	u[n++] = OC_ID_BASE + (uint64_t)so->which;
	u[n++] = ip;
	u[n++] = (uint64_t)(uint32_t)so->pid | (uint64_t)(uint32_t)so->tid
						       << 32;
	u[n++] = so->time;
	u[n++] = (uint32_t)so->cpu;
	u[n++] = so->period;
	u[n++] = nr;
	if (nr)
		memcpy(&u[n], chain, nr * 8);
	n += nr;
	if (raw_sz) {
		uint32_t rs = (uint32_t)(raw_sz - 4);

		memcpy(&u[n], &rs, 4);
		memcpy((unsigned char *)&u[n] + 4, so->raw, so->raw_len);
		n += raw_sz / 8;
	}
	if (dw && so->dwarf)
		memcpy(&u[n], so->dwarf, so->dwarf_len);
	/* (no registers, no stack: abi 0 and size 0, zeroed above) */
	err = emit(ctx, p, size);
	if (!err)
		oc->st.samples++;
	return err;
}

/* An offcpu-waker sample: the waker's chain, the block in its RAW. */
static int put_waker(struct offcpu *oc, const struct oc_thread *t, int32_t wpid,
		     int32_t wtid, int32_t wcpu, uint32_t wstack,
		     uint64_t start, uint64_t end, uint64_t wake_time,
		     uint64_t time, uint64_t period, offcpu_emit_fn emit,
		     void *ctx)
{
	struct offcpu_waker_raw r = { .version = OFFCPU_WAKER_RAW_VERSION,
				      .wakee_pid = t->pid,
				      .wakee_tid = t->tid,
				      .block_start = start,
				      .block_end = end,
				      .wake_time = wake_time };
	uint64_t nr;
	const uint64_t *chain = stack_of(oc, t->stack, &nr);
	size_t len = sizeof(r) + nr * 8;
	unsigned char *buf = malloc(len);
	struct sample_out so = { .which = OC_WAKER,
				 .pid = wpid,
				 .tid = wtid,
				 .cpu = wcpu,
				 .time = time,
				 .period = period,
				 .stack = wstack,
				 .dwarf = t->waker_dwarf,
				 .dwarf_len = t->waker_dwarf_len };
	int err;

	if (!buf)
		return -ENOMEM;
	r.nr = nr;
	memcpy(buf, &r, sizeof(r));
	if (nr)
		memcpy(buf + sizeof(r), chain, nr * 8);
	so.raw = buf;
	so.raw_len = len;
	err = put_sample(oc, &so, emit, ctx);
	free(buf);
	return err;
}

static int agg_add(struct itab *t, struct u64v *sum, const void *key,
		   size_t len, uint64_t v)
{
	uint32_t id;
	int err = itab_intern(t, key, len, &id, NULL);

	return err ? err : u64v_set(sum, id - 1, v);
}

/* Thread @t, switched out at t->out_time, runs again at @now on @cpu. */
static int block_done(struct offcpu *oc, struct oc_thread *t, uint64_t now,
		      int32_t cpu, offcpu_emit_fn emit, void *ctx)
{
	uint64_t d = now - t->out_time;
	int which = t->runnable ? OC_PREEMPT : OC_TIME;
	int err = 0;

	oc->st.blocks++;
	if (oc->o.dwarf_size || d > oc->o.thresh_ns) {
		/* Its own sample, at its own time (dwarf: stacks cannot be
		 * summed, each is its own) */
		struct sample_out so = { .which = which,
					 .pid = t->pid,
					 .tid = t->tid,
					 .cpu = cpu,
					 .time = now,
					 .period = d,
					 .stack = t->stack,
					 .dwarf = t->dwarf,
					 .dwarf_len = t->dwarf_len };

		err = put_sample(oc, &so, emit, ctx);
		if (!err && t->has_waker)
			err = put_waker(oc, t, t->waker_pid, t->waker_tid,
					t->waker_cpu, t->waker_stack,
					t->out_time, now, t->wake_time, now, d,
					emit, ctx);
	} else {
		struct agg_key k = { t->pid, t->tid, (uint32_t)which,
				     t->stack };

		err = agg_add(&oc->agg, &oc->agg_sum, &k, sizeof(k), d);
		if (!err && t->has_waker) {
			struct agg_wkey w = { t->pid,	    t->tid,
					      t->stack,	    t->waker_pid,
					      t->waker_tid, t->waker_stack };

			err = agg_add(&oc->wagg, &oc->wagg_sum, &w, sizeof(w),
				      d);
		}
	}
	thread_clear(t);
	return err;
}

/* A long block from the program, at its switch-in's time and CPU. */
static int bpf_block(struct offcpu *oc, const struct oc_ev *e,
		     offcpu_emit_fn emit, void *ctx)
{
	const struct offcpu_bpf_block *b = e->block;
	uint64_t d = b->end - b->start;
	struct sample_out so = { .which = b->key.kind == OFFCPU_BPF_PREEMPTED ?
						  OC_PREEMPT :
						  OC_TIME,
				 .pid = (int32_t)b->key.pid,
				 .tid = (int32_t)b->key.tid,
				 .cpu = e->cpu,
				 .time = e->time,
				 .period = d };
	struct oc_thread t = { .pid = so.pid, .tid = so.tid };
	uint32_t wstack;
	int err = bpf_chain(oc, b->key.ustack, b->key.kstack, &so.stack);

	if (!err)
		err = put_sample(oc, &so, emit, ctx);
	if (err || !b->key.has_waker)
		return err;
	/* the program's clock to the recording's: by differences */
	t.stack = so.stack;
	err = bpf_chain(oc, b->key.waker_ustack, b->key.waker_kstack, &wstack);
	return err ? err :
		     put_waker(oc, &t, (int32_t)b->key.waker_pid,
			       (int32_t)b->key.waker_tid, b->waker_cpu, wstack,
			       e->time - d, e->time,
			       e->time - (b->end - b->wake_time), e->time, d,
			       emit, ctx);
}

/* A sum of short blocks from the program's map, into the ones written. */
static int bpf_sum(void *ctx, const struct offcpu_bpf_key *k,
		   const struct offcpu_bpf_sum *sum)
{
	struct offcpu *oc = ctx;
	struct agg_key a = { .pid = (int32_t)k->pid,
			     .tid = (int32_t)k->tid,
			     .kind = k->kind == OFFCPU_BPF_PREEMPTED ?
					     OC_PREEMPT :
					     OC_TIME };
	struct agg_wkey w;
	int err = bpf_chain(oc, k->ustack, k->kstack, &a.stack);

	if (!err)
		err = agg_add(&oc->agg, &oc->agg_sum, &a, sizeof(a),
			      sum->total_ns);
	if (err || !k->has_waker)
		return err;
	memset(&w, 0, sizeof(w));
	w.pid = a.pid;
	w.tid = a.tid;
	w.stack = a.stack;
	w.waker_pid = (int32_t)k->waker_pid;
	w.waker_tid = (int32_t)k->waker_tid;
	err = bpf_chain(oc, k->waker_ustack, k->waker_kstack, &w.waker_stack);
	return err ? err :
		     agg_add(&oc->wagg, &oc->wagg_sum, &w, sizeof(w),
			     sum->total_ns);
}

static int process(struct offcpu *oc, struct oc_ev *e, offcpu_emit_fn emit,
		   void *ctx)
{
	struct oc_thread *t;

	switch (e->kind) {
	case EV_OUT:
		t = thread_get(oc, e->tid, !e->dead);
		if (!t)
			return e->dead || e->tid <= 0 ? 0 : -ENOMEM;
		if (t->pending)
			oc->st.dropped++; /* its switch-in was lost */
		thread_clear(t);
		if (e->dead)
			return 0;
		t->pid = e->pid;
		t->pending = true;
		t->runnable = e->runnable;
		t->out_time = e->time;
		t->out_cpu = e->cpu;
		t->stack = e->stack;
		t->dwarf = e->dwarf;
		t->dwarf_len = e->dwarf_len;
		e->dwarf = NULL;
		return 0;
	case EV_IN:
		t = thread_get(oc, e->tid, false);
		if (!t || !t->pending || e->time < t->out_time)
			return 0;
		return block_done(oc, t, e->time, e->cpu, emit, ctx);
	case EV_WAKE:
		t = thread_get(oc, e->wakee, false);
		if (!t || !t->pending || t->runnable)
			return 0;
		free(t->waker_dwarf);
		t->has_waker = true;
		t->waker_pid = e->pid;
		t->waker_tid = e->tid;
		t->waker_cpu = e->cpu;
		t->waker_stack = e->stack;
		t->wake_time = e->time;
		t->waker_dwarf = e->dwarf;
		t->waker_dwarf_len = e->dwarf_len;
		e->dwarf = NULL;
		return 0;
	case EV_BLOCK:
		return bpf_block(oc, e, emit, ctx);
	case EV_LOST:
		/* Which switch went missing is not known: every block open
		 * now could be wrong. */
		for (uint32_t i = 0; oc->thr && i <= oc->thr_mask; i++)
			if (oc->thr[i].tid && oc->thr[i].pending) {
				oc->st.dropped++;
				thread_clear(&oc->thr[i]);
			}
		return 0;
	default:
		return 0;
	}
}

static uint64_t clock_now(int clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int offcpu_flush(struct offcpu *oc, offcpu_emit_fn emit, void *ctx)
{
	/* At perf's made-up time, after everything else (perf writes its
	 * sums at the end too), counted up. */
	uint64_t time = OFFCPU_SUMMED_TIME;
	int err = 0;

	/* BPF: the program's sums so far join the ones made here */
	if (oc->bpf)
		err = offcpu_bpf_take_sums(oc->bpf, bpf_sum, oc);

	for (uint32_t id = 1; !err && id <= oc->agg.nr; id++) {
		size_t len;
		struct agg_key k;
		struct sample_out so = { 0 };

		memcpy(&k, itab_key(&oc->agg, id, &len), sizeof(k));
		so.which = (int)k.kind;
		so.pid = k.pid;
		so.tid = k.tid;
		so.time = time++;
		so.period = oc->agg_sum.v[id - 1];
		so.stack = k.stack;
		err = put_sample(oc, &so, emit, ctx);
	}
	for (uint32_t id = 1; !err && id <= oc->wagg.nr; id++) {
		size_t len;
		struct agg_wkey k;
		struct oc_thread t = { 0 };

		memcpy(&k, itab_key(&oc->wagg, id, &len), sizeof(k));
		t.pid = k.pid;
		t.tid = k.tid;
		t.stack = k.stack;
		err = put_waker(oc, &t, k.waker_pid, k.waker_tid, 0,
				k.waker_stack, 0, 0, 0, time++,
				oc->wagg_sum.v[id - 1], emit, ctx);
	}
	itab_free(&oc->agg);
	itab_free(&oc->wagg);
	free(oc->agg_sum.v);
	free(oc->wagg_sum.v);
	memset(&oc->agg, 0, sizeof(oc->agg));
	memset(&oc->wagg, 0, sizeof(oc->wagg));
	memset(&oc->agg_sum, 0, sizeof(oc->agg_sum));
	memset(&oc->wagg_sum, 0, sizeof(oc->wagg_sum));
	return err;
}

int offcpu_drain(struct offcpu *oc, bool final, offcpu_emit_fn emit, void *ctx)
{
	uint64_t now = clock_now(oc->o.clockid), horizon;
	size_t done = 0;
	int err = 0;

	/* What is pending is one sorted run; each ring adds one. */
	oc->nr_runs = 0;
	if (oc->nr_ev)
		err = run_add(oc, 0);
	for (int i = 0; !err && i < oc->el.nr_bufs; i++) {
		size_t start = oc->nr_ev;

		err = read_ring(oc, &oc->el.bufs[i]);
		if (!err && oc->nr_ev > start) {
			insertion_sort(oc->ev + start, oc->nr_ev - start);
			err = run_add(oc, start);
		}
	}
	if (err)
		return err;
	merge_runs(oc);
	horizon = final				     ? UINT64_MAX :
		  now > HORIZON_SLACK_NS + oc->floor ? now - HORIZON_SLACK_NS :
						       oc->floor;
	oc->last_now = now;
	for (; !err && done < oc->nr_ev && oc->ev[done].time <= horizon; done++)
		err = process(oc, &oc->ev[done], emit, ctx);
	for (size_t i = 0; i < done; i++) {
		free(oc->ev[i].dwarf);
		free(oc->ev[i].block);
	}
	if (done) /* (no array yet when nothing came: BPF sums only) */
		memmove(oc->ev, oc->ev + done,
			(oc->nr_ev - done) * sizeof(*oc->ev));
	oc->nr_ev -= done;
	if (!err && final)
		err = offcpu_flush(oc, emit, ctx);
	return err;
}

void offcpu_round_done(struct offcpu *oc)
{
	if (oc)
		oc->floor = oc->last_now;
}

void offcpu_stats(const struct offcpu *oc, struct offcpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!oc)
		return;
	*st = oc->st;
	if (oc->bpf) {
		/* measured in the kernel: the program's counters */
		uint64_t v[OFFCPU_BPF_NR_STATS];

		offcpu_bpf_counters(oc->bpf, v);
		st->blocks = v[OFFCPU_BPF_STAT_BLOCKS];
		st->dropped = v[OFFCPU_BPF_STAT_OUT_LOST] +
			      v[OFFCPU_BPF_STAT_STARTS_FULL];
		st->no_stack = v[OFFCPU_BPF_STAT_NO_STACK];
	}
}

void offcpu_close(struct offcpu *oc)
{
	if (!oc)
		return;
	offcpu_bpf_close(oc->bpf); /* detached before its rings go */
	pe_evlist_close(&oc->el);
	for (size_t i = 0; i < oc->nr_ev; i++) {
		free(oc->ev[i].dwarf);
		free(oc->ev[i].block);
	}
	free(oc->bpf_chain);
	for (uint32_t i = 0; oc->thr && i <= oc->thr_mask; i++)
		thread_clear(&oc->thr[i]);
	free(oc->thr);
	free(oc->ev);
	free(oc->tmp);
	free(oc->runs);
	itab_free(&oc->stacks);
	itab_free(&oc->agg);
	itab_free(&oc->wagg);
	free(oc->agg_sum.v);
	free(oc->wagg_sum.v);
	free(oc->rec);
	free(oc->chain);
	free(oc);
}
