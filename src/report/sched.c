// SPDX-License-Identifier: MIT
/*
 * `perfring sched timehist` and `perfring sched latency`: perf 6.1's
 * `perf sched` readings of a file of sched tracepoints (perf sched record
 * or perfring sched record), line for line.
 *
 * What the lines depend on is perf's own bookkeeping, so it is kept as
 * perf 6.1 keeps it:
 *  - threads: made by the first record or sample that names them, with
 *    the pid it gives (0 for a wake-up's wakee, -1 for a latency
 *    switch's), which later records change only while it is -1; named
 *    ":TID" until a COMM; FORK records give the parent, the comm, and
 *    replace a thread whose tid is reused; EXIT marks them terminated.
 *    The summary lists them as perf's thread table holds them: by tid
 *    modulo 256, then by tid.
 *  - timehist: per CPU the time of its last sched_switch (the run of the
 *    task switched out starts there), per thread the last switch-out
 *    (wait time) and the first wake-up since (scheduling delay); the
 *    idle task is one thread per CPU, "<idle>".
 *  - latency: per thread a list of atoms (switched out, woken, switched
 *    in); a task switched out runnable (prev_state 0: perf 6.1 reads the
 *    state as an index into "RSDTtZXxKWP", so only 0 is 'R') waits from
 *    then; sched_wakeup and sched_wakeup_new wake sleepers (sched_waking
 *    is not one of perf 6.1's latency events); threads merged by comm
 *    unless -p; sorted by avg, max, switch, runtime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../format/perf_reader.h"
#include "../tracepoint/tpfmt.h"

#define NSEC_PER_MSEC 1000000ull
#define MAX_CPUS 4096
#define COMM_MAX 64

enum sched_ev {
	EV_NONE,
	EV_SWITCH,
	EV_RUNTIME,
	EV_WAKEUP,
	EV_WAKING,
	EV_WAKEUP_NEW,
};

/* A field's place in its tracepoint's records. */
struct fld {
	uint32_t off, size;
	bool ok;
};

struct ev_info {
	enum sched_ev kind;
	struct fld prev_pid, prev_state, next_pid, pid, runtime;
};

/* perf's struct stats (util/stat.c): Welford's running mean. */
struct run_stats {
	uint64_t n, min, max;
	double mean, M2;
};

struct lat_atom {
	uint64_t sched_out, wake_up, sched_in, runtime;
	int state;
};
enum { ATOM_SLEEPING, ATOM_WAIT_CPU, ATOM_SCHED_IN, ATOM_IGNORE };

struct work_atoms {
	struct sched_thread *t;
	struct lat_atom *v;
	size_t nr, cap;
	uint64_t max_lat, max_lat_start, max_lat_end, total_lat, nb_atoms,
		total_runtime;
	int num_merged;
	bool merged_away;
};

struct sched_thread {
	int32_t pid, tid, ppid;
	char comm[COMM_MAX];
	bool comm_set, dead, removed;
	struct sched_thread *hnext; /* in its hash chain (the live ones) */
	struct sched_thread *all; /* every one made */
	/* timehist */
	bool has_rt;
	uint64_t last_time, ready_to_run, dt_run, dt_wait, dt_delay;
	uint64_t total_run_time;
	struct run_stats st;
	/* latency */
	struct work_atoms *atoms;
};

#define NR_BUCKETS 1024u

struct sched {
	const struct perfring_sched_opts *o;
	bool latency;
	FILE *out;
	struct prd_file *f;
	struct tpfmt *tp;
	bool tp_tried;
	struct ev_info *ei; /* per attr */
	uint32_t nr_attrs;
	bool has_waking;

	struct sched_thread *bucket[NR_BUCKETS];
	struct sched_thread *all;
	int err;

	/* timehist */
	int comm_width;
	int max_cpu;
	struct sched_thread **idle;
	int nr_idle;
	uint64_t *last_switch; /* per CPU: the last sched_switch's time */
	uint64_t hist_start, hist_end;

	/* latency */
	uint32_t *curr_pid;
	uint64_t *cpu_last_switched;
	struct work_atoms **atoms;
	size_t nr_atoms, cap_atoms;
	uint64_t nr_timestamps, nr_unordered, nr_switch_bugs;
	uint64_t all_runtime, all_count;
};

/* ---- perf's threads ----------------------------------------------------- */

static struct sched_thread *thread_find_only(struct sched *s, int32_t tid)
{
	for (struct sched_thread *t = s->bucket[(uint32_t)tid % NR_BUCKETS]; t;
	     t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct sched_thread *thread_findnew(struct sched *s, int32_t pid,
					   int32_t tid);

/* machine__update_thread_pid(): only a pid of -1 is ever set. */
static void update_pid(struct sched *s, struct sched_thread *t, int32_t pid)
{
	if (pid == t->pid || pid == -1 || t->pid != -1)
		return;
	t->pid = pid;
	if (pid != t->tid)
		thread_findnew(s, pid, pid);
}

static struct sched_thread *thread_findnew(struct sched *s, int32_t pid,
					   int32_t tid)
{
	struct sched_thread *t = thread_find_only(s, tid);
	uint32_t b = (uint32_t)tid % NR_BUCKETS;

	if (t) {
		update_pid(s, t, pid);
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		s->err = -ENOMEM;
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	t->ppid = -1;
	snprintf(t->comm, sizeof(t->comm), ":%d", tid);
	t->st.min = UINT64_MAX;
	t->hnext = s->bucket[b];
	s->bucket[b] = t;
	t->all = s->all;
	s->all = t;
	/* thread__init_maps(): a thread's leader is made with it */
	if (pid != tid && pid != -1)
		thread_findnew(s, pid, pid);
	return t;
}

static struct sched_thread *thread_find(struct sched *s, int32_t pid,
					int32_t tid)
{
	struct sched_thread *t = thread_find_only(s, tid);

	if (t)
		update_pid(s, t, pid);
	return t;
}

/* Out of the table (its tid is reused); latency keeps what it has. */
static void thread_remove(struct sched *s, struct sched_thread *t)
{
	struct sched_thread **p = &s->bucket[(uint32_t)t->tid % NR_BUCKETS];

	while (*p && *p != t)
		p = &(*p)->hnext;
	if (*p)
		*p = t->hnext;
	t->removed = true;
}

static void set_comm(struct sched_thread *t, const char *comm, size_t n)
{
	if (n >= sizeof(t->comm))
		n = sizeof(t->comm) - 1;
	memcpy(t->comm, comm, n);
	t->comm[n] = 0;
	t->comm_set = true;
}

/* COMM, FORK, EXIT (and MMAP, which names threads too) as perf 6.1's
 * machine processes them. */
static void side_band(struct sched *s, const struct prd_event *ev)
{
	const unsigned char *p = (const unsigned char *)ev->hdr;
	uint32_t size = prd_payload_size(s->f, ev), v[4];
	struct sched_thread *t, *parent;

	switch (ev->hdr->type) {
	case PERF_RECORD_COMM:
		if (size < 8 + 8 + 1)
			return;
		memcpy(v, p + 8, 8);
		t = thread_findnew(s, (int32_t)v[0], (int32_t)v[1]);
		if (t)
			set_comm(t, (const char *)p + 16,
				 strnlen((const char *)p + 16, size - 16));
		return;
	case PERF_RECORD_MMAP: /* timehist's tool processes MMAP */
		if (size < 8 + 8 || s->latency ||
		    (ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			    PERF_RECORD_MISC_KERNEL)
			return;
		memcpy(v, p + 8, 8);
		if ((int32_t)v[0] != -1)
			thread_findnew(s, (int32_t)v[0], (int32_t)v[1]);
		return;
	case PERF_RECORD_FORK:
		if (size < 8 + 16)
			return;
		memcpy(v, p + 8, 16); /* pid, ppid, tid, ptid */
		t = thread_find(s, (int32_t)v[0], (int32_t)v[2]);
		parent = thread_findnew(s, (int32_t)v[1], (int32_t)v[3]);
		if (parent && parent->pid != (int32_t)v[1]) {
			thread_remove(s, parent);
			parent =
				thread_findnew(s, (int32_t)v[1], (int32_t)v[3]);
		}
		if (t)
			thread_remove(s, t);
		t = thread_findnew(s, (int32_t)v[0], (int32_t)v[2]);
		if (!t || !parent)
			return;
		if (parent->comm_set)
			set_comm(t, parent->comm, strlen(parent->comm));
		t->ppid = parent->tid;
		return;
	case PERF_RECORD_EXIT:
		if (size < 8 + 16 || s->latency)
			return; /* perf sched latency has no exit handler */
		memcpy(v, p + 8, 16);
		t = thread_find(s, (int32_t)v[0], (int32_t)v[2]);
		if (t)
			t->dead = true;
		return;
	default:
		return;
	}
}

/* ---- tracepoint fields -------------------------------------------------- */

static struct fld field(struct sched *s, const struct prd_attr *a,
			const char *name)
{
	struct fld fl = { 0 };

	fl.ok = !tpfmt_field_layout(s->tp, (int)a->attr.config, name, &fl.off,
				    &fl.size) &&
		(fl.size == 4 || fl.size == 8);
	return fl;
}

static bool num(const struct prd_sample *smp, struct fld fl, int64_t *v)
{
	int32_t v32;

	if (!fl.ok || !smp->raw || fl.off > smp->raw_size ||
	    fl.size > smp->raw_size - fl.off)
		return false;
	if (fl.size == 8) {
		memcpy(v, (const char *)smp->raw + fl.off, 8);
	} else {
		memcpy(&v32, (const char *)smp->raw + fl.off, 4);
		*v = v32;
	}
	return true;
}

/* Which sched event each attr is, and where its fields are. */
static void setup_events(struct sched *s)
{
	size_t len;
	const void *td = prd_feature(s->f, PRD_FEAT_TRACING_DATA, &len);

	if (s->tp_tried || !td)
		return;
	s->tp_tried = true;
	if (tpfmt_new(td, len, &s->tp)) {
		pr_warn("sched: the TRACING_DATA is damaged: no tracepoint fields");
		return;
	}
	for (uint32_t i = 0; i < s->nr_attrs; i++) {
		const struct prd_attr *a = prd_attr(s->f, i);
		const char *n;
		struct ev_info *e = &s->ei[i];

		if (a->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		n = prd_tracepoint_name(s->f, a->attr.config);
		if (!n)
			n = a->name;
		if (!n)
			continue;
		if (!strcmp(n, "sched:sched_switch"))
			e->kind = EV_SWITCH;
		else if (!strcmp(n, "sched:sched_stat_runtime"))
			e->kind = EV_RUNTIME;
		else if (!strcmp(n, "sched:sched_wakeup"))
			e->kind = EV_WAKEUP;
		else if (!strcmp(n, "sched:sched_waking"))
			e->kind = EV_WAKING;
		else if (!strcmp(n, "sched:sched_wakeup_new"))
			e->kind = EV_WAKEUP_NEW;
		e->prev_pid = field(s, a, "prev_pid");
		e->prev_state = field(s, a, "prev_state");
		e->next_pid = field(s, a, "next_pid");
		e->pid = field(s, a, "pid");
		e->runtime = field(s, a, "runtime");
		s->has_waking |= e->kind == EV_WAKING;
	}
}

/* ---- timehist ----------------------------------------------------------- */

static void stats_update(struct run_stats *st, uint64_t val)
{
	double delta;

	st->n++;
	delta = (double)val - st->mean;
	st->mean += delta / (double)st->n;
	st->M2 += delta * ((double)val - st->mean);
	if (val > st->max)
		st->max = val;
	if (val < st->min)
		st->min = val;
}

/* perf's timestamp__scnprintf_usec(): seconds.microseconds, truncated */
static const char *usec_str(uint64_t t, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%06llu",
		 (unsigned long long)(t / 1000000000ull),
		 (unsigned long long)(t % 1000000000ull / 1000ull));
	return buf;
}

/* msec.usec, as perf's print_sched_time() */
static void sched_time(struct sched *s, uint64_t ns, int width)
{
	uint64_t ms = ns / NSEC_PER_MSEC;

	fprintf(s->out, "%*llu.%03llu ", width, (unsigned long long)ms,
		(unsigned long long)((ns - ms * NSEC_PER_MSEC) / 1000ull));
}

static const char *commstr(struct sched *s, const struct sched_thread *t)
{
	static char str[32];
	int n;

	if (t->pid == 0)
		n = snprintf(str, sizeof(str), "%s", t->comm);
	else if (t->tid != t->pid)
		n = snprintf(str, sizeof(str), "%s[%d/%d]", t->comm, t->tid,
			     t->pid);
	else
		n = snprintf(str, sizeof(str), "%s[%d]", t->comm, t->tid);
	if (n > (int)sizeof(str) - 1)
		n = (int)sizeof(str) - 1; /* perf's scnprintf */
	if (n > s->comm_width)
		s->comm_width = n;
	return str;
}

static const char dots[] =
	"---------------------------------------------------------------------"
	"---------------------------------------------------------------------"
	"---------------------------------------------------------------------";

static void timehist_header(struct sched *s)
{
	const struct perfring_sched_opts *o = s->o;
	int ncpus = s->max_cpu + 1;

	fprintf(s->out, "%15s %6s ", "time", "cpu");
	if (o->cpu_visual) {
		fprintf(s->out, " ");
		for (int i = 0; i < ncpus; i++)
			fprintf(s->out, "%x", i % 16);
		fprintf(s->out, " ");
	}
	fprintf(s->out, " %-*s  %9s  %9s  %9s", s->comm_width, "task name",
		"wait time", "sch delay", "run time");
	fprintf(s->out, "\n%15s %-6s ", "", "");
	if (o->cpu_visual)
		fprintf(s->out, " %*s ", ncpus, "");
	fprintf(s->out, " %-*s  %9s  %9s  %9s\n", s->comm_width, "[tid/pid]",
		"(msec)", "(msec)", "(msec)");
	fprintf(s->out, "%.15s %.6s ", dots, dots);
	if (o->cpu_visual)
		fprintf(s->out, " %.*s ", ncpus, dots);
	fprintf(s->out, " %.*s  %.9s  %.9s  %.9s\n", s->comm_width, dots, dots,
		dots, dots);
}

static struct sched_thread *idle_thread(struct sched *s, int cpu)
{
	if (cpu < 0 || cpu >= MAX_CPUS)
		return NULL;
	if (cpu >= s->nr_idle) {
		int n = 1;
		struct sched_thread **v;

		while (n < cpu + 1)
			n *= 2;
		v = realloc(s->idle, (size_t)n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + s->nr_idle, 0,
		       (size_t)(n - s->nr_idle) * sizeof(*v));
		s->idle = v;
		s->nr_idle = n;
	}
	if (!s->idle[cpu]) {
		struct sched_thread *t = calloc(1, sizeof(*t));

		if (!t)
			return NULL;
		snprintf(t->comm, sizeof(t->comm), "<idle>");
		t->ppid = -1;
		t->st.min = UINT64_MAX;
		s->idle[cpu] = t;
	}
	return s->idle[cpu];
}

/* dt_run, dt_wait and dt_delay of the run that ends at @t, which began
 * at this CPU's previous switch @tprev. */
static void update_runtime(struct sched_thread *r, uint64_t t, uint64_t tprev)
{
	r->dt_delay = r->dt_wait = r->dt_run = 0;
	if (tprev) {
		r->dt_run = t - tprev;
		if (r->ready_to_run && r->ready_to_run <= tprev)
			r->dt_delay = tprev - r->ready_to_run;
		if (r->last_time && r->last_time <= tprev)
			r->dt_wait = tprev - r->last_time;
	}
	stats_update(&r->st, r->dt_run);
	r->total_run_time += r->dt_run;
	r->has_rt = true;
}

static void timehist_switch(struct sched *s, const struct prd_sample *smp,
			    const struct ev_info *e)
{
	const struct perfring_sched_opts *o = s->o;
	struct sched_thread *t;
	int64_t prev_pid = -1;
	uint64_t tprev = 0;
	char ts[64];

	if (smp->cpu >= MAX_CPUS)
		return;
	/* machine__resolve() makes the sample's thread first */
	thread_findnew(s, (int32_t)smp->pid, (int32_t)smp->tid);
	num(smp, e->prev_pid, &prev_pid);
	if (prev_pid == 0)
		t = idle_thread(s, (int)smp->cpu);
	else
		t = thread_findnew(s, (int32_t)smp->pid,
				   smp->tid ? (int32_t)smp->tid :
					      (int32_t)smp->pid);
	if (!t) {
		s->err = -ENOMEM;
		return;
	}
	tprev = s->last_switch[smp->cpu];
	update_runtime(t, smp->time, tprev);
	if (!o->summary_only) {
		fprintf(s->out, "%15s [%04u] ",
			usec_str(smp->time, ts, sizeof(ts)), smp->cpu);
		if (o->cpu_visual) {
			fprintf(s->out, " ");
			for (int i = 0; i <= s->max_cpu; i++)
				fputc(i != (int)smp->cpu ? ' ' :
				      t->tid == 0	 ? 'i' :
							   's',
				      s->out);
			fprintf(s->out, " ");
		}
		fprintf(s->out, " %-*s ", s->comm_width, commstr(s, t));
		sched_time(s, t->dt_wait, 6);
		sched_time(s, t->dt_delay, 6);
		sched_time(s, t->dt_run, 6);
		if (o->wakeups)
			fprintf(s->out, "  %-*s", s->comm_width, "");
		fputc('\n', s->out);
	}
	if (!s->hist_start)
		s->hist_start = smp->time;
	s->hist_end = smp->time;
	t->last_time = smp->time;
	t->ready_to_run = 0;
	s->last_switch[smp->cpu] = smp->time;
}

static void timehist_wakeup(struct sched *s, const struct prd_sample *smp,
			    const struct ev_info *e)
{
	struct sched_thread *t, *waker;
	int64_t pid;
	char ts[64];

	if (!num(smp, e->pid, &pid))
		return;
	t = thread_findnew(s, 0, (int32_t)pid);
	if (!t)
		return;
	if (!t->ready_to_run)
		t->ready_to_run = smp->time;
	if (!s->o->wakeups)
		return;
	waker = thread_findnew(s, (int32_t)smp->pid, (int32_t)smp->tid);
	if (!waker)
		return;
	fprintf(s->out, "%15s [%04u] ", usec_str(smp->time, ts, sizeof(ts)),
		smp->cpu);
	if (s->o->cpu_visual)
		fprintf(s->out, " %*s ", s->max_cpu + 1, "");
	fprintf(s->out, " %-*s ", s->comm_width, commstr(s, waker));
	fprintf(s->out, "  %9s  %9s  %9s ", "", "", "");
	fprintf(s->out, "awakened: %s\n", commstr(s, t));
}

static void thread_row(struct sched *s, const struct sched_thread *t)
{
	double mean = t->st.mean, sd = 0;

	if (t->st.n >= 2)
		sd = sqrt(t->st.M2 / (double)(t->st.n - 1) / (double)t->st.n);
	fprintf(s->out, "%*s   %5d  %9llu ", s->comm_width, commstr(s, t),
		t->ppid, (unsigned long long)t->st.n);
	sched_time(s, t->total_run_time, 8);
	sched_time(s, t->st.min, 6);
	fprintf(s->out, " ");
	sched_time(s, (uint64_t)mean, 6);
	fprintf(s->out, " ");
	sched_time(s, t->st.max, 6);
	fprintf(s->out, "  %5.2f   %5d\n", mean ? 100.0 * sd / mean : 0.0, 0);
}

static int cmp_tid(const void *a, const void *b)
{
	const struct sched_thread *x = *(const struct sched_thread *const *)a;
	const struct sched_thread *y = *(const struct sched_thread *const *)b;
	uint32_t bx = (uint32_t)x->tid % 256, by = (uint32_t)y->tid % 256;

	if (bx != by)
		return bx < by ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads with runs, dead or alive, as perf's table walks them. */
static uint64_t summary_rows(struct sched *s, bool dead, uint64_t *switches,
			     uint64_t *run)
{
	size_t n = 0, k = 0;
	struct sched_thread **v;

	for (struct sched_thread *t = s->all; t; t = t->all)
		n += !t->removed && t->has_rt && t->dead == dead;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		s->err = -ENOMEM;
		return 0;
	}
	for (struct sched_thread *t = s->all; t; t = t->all)
		if (!t->removed && t->has_rt && t->dead == dead)
			v[k++] = t;
	qsort(v, n, sizeof(*v), cmp_tid);
	for (size_t i = 0; i < n; i++) {
		thread_row(s, v[i]);
		*switches += v[i]->st.n;
		*run += v[i]->total_run_time;
	}
	free(v);
	return n;
}

static void timehist_summary(struct sched *s)
{
	uint64_t tasks, dead, switches = 0, run = 0;
	uint64_t hist = s->hist_end - s->hist_start;

	fprintf(s->out, "\nRuntime summary\n");
	fprintf(s->out, "%*s  parent   sched-in  ", s->comm_width, "comm");
	fprintf(s->out,
		"   run-time    min-run     avg-run     max-run  stddev  migrations\n");
	fprintf(s->out, "%*s            (count)  ", s->comm_width, "");
	fprintf(s->out,
		"     (msec)     (msec)      (msec)      (msec)       %%\n");
	fprintf(s->out, "%.117s\n", dots);
	tasks = summary_rows(s, false, &switches, &run);
	if (!tasks)
		fprintf(s->out, "<no still running tasks>\n");
	fprintf(s->out, "\nTerminated tasks:\n");
	dead = summary_rows(s, true, &switches, &run);
	if (!dead)
		fprintf(s->out, "<no terminated tasks>\n");
	fprintf(s->out, "\nIdle stats:\n");
	for (int i = 0; i < s->nr_idle; i++) {
		struct sched_thread *t = s->idle[i];

		if (!t)
			continue;
		if (t->st.n) {
			switches += t->st.n;
			fprintf(s->out, "    CPU %2d idle for ", i);
			sched_time(s, t->total_run_time, 6);
			fprintf(s->out, " msec  (%6.2f%%)\n",
				100.0 * (double)t->total_run_time /
					(double)hist);
		} else {
			fprintf(s->out, "    CPU %2d idle entire time window\n",
				i);
		}
	}
	fprintf(s->out,
		"\n    Total number of unique tasks: %llu\n"
		"Total number of context switches: %llu\n",
		(unsigned long long)(tasks + dead),
		(unsigned long long)switches);
	fprintf(s->out, "           Total run time (msec): ");
	sched_time(s, run, 2);
	fprintf(s->out, "\n    Total scheduling time (msec): ");
	sched_time(s, hist, 2);
	fprintf(s->out, " (x %d)\n", s->max_cpu);
}

/* ---- latency ------------------------------------------------------------ */

static struct work_atoms *atoms_of(struct sched *s, struct sched_thread *t)
{
	if (t->atoms)
		return t->atoms;
	if (s->nr_atoms == s->cap_atoms) {
		size_t n = s->cap_atoms ? s->cap_atoms * 2 : 256;
		struct work_atoms **v = realloc(s->atoms, n * sizeof(*v));

		if (!v)
			return NULL;
		s->atoms = v;
		s->cap_atoms = n;
	}
	t->atoms = calloc(1, sizeof(*t->atoms));
	if (!t->atoms)
		return NULL;
	t->atoms->t = t;
	s->atoms[s->nr_atoms++] = t->atoms;
	return t->atoms;
}

static struct lat_atom *atom_add(struct work_atoms *w, bool runnable,
				 uint64_t time)
{
	struct lat_atom *a;

	if (w->nr == w->cap) {
		size_t n = w->cap ? w->cap * 2 : 16;
		struct lat_atom *v = realloc(w->v, n * sizeof(*v));

		if (!v)
			return NULL;
		w->v = v;
		w->cap = n;
	}
	a = &w->v[w->nr++];
	memset(a, 0, sizeof(*a));
	a->sched_out = time;
	if (runnable) {
		a->state = ATOM_WAIT_CPU;
		a->wake_up = time;
	}
	return a;
}

static void atom_sched_in(struct work_atoms *w, uint64_t time)
{
	struct lat_atom *a;
	uint64_t delta;

	if (!w->nr)
		return;
	a = &w->v[w->nr - 1];
	if (a->state != ATOM_WAIT_CPU)
		return;
	if (time < a->wake_up) {
		a->state = ATOM_IGNORE;
		return;
	}
	a->state = ATOM_SCHED_IN;
	a->sched_in = time;
	delta = time - a->wake_up;
	w->total_lat += delta;
	if (delta > w->max_lat) {
		w->max_lat = delta;
		w->max_lat_start = a->wake_up;
		w->max_lat_end = time;
	}
	w->nb_atoms++;
}

static void latency_switch(struct sched *s, const struct prd_sample *smp,
			   const struct ev_info *e)
{
	int64_t prev_pid, next_pid, state = 0;
	struct sched_thread *out, *in;
	struct work_atoms *wo, *wi;

	if (smp->cpu >= MAX_CPUS || !num(smp, e->prev_pid, &prev_pid) ||
	    !num(smp, e->next_pid, &next_pid))
		return;
	num(smp, e->prev_state, &state);
	if (s->curr_pid[smp->cpu] != UINT32_MAX &&
	    s->curr_pid[smp->cpu] != (uint32_t)prev_pid)
		s->nr_switch_bugs++;
	s->curr_pid[smp->cpu] = (uint32_t)next_pid;
	if (s->cpu_last_switched[smp->cpu] > smp->time) {
		pr_err("sched latency: hm, delta: %lld < 0 ?",
		       (long long)(smp->time - s->cpu_last_switched[smp->cpu]));
		s->err = -EINVAL;
		return;
	}
	s->cpu_last_switched[smp->cpu] = smp->time;
	out = thread_findnew(s, -1, (int32_t)prev_pid);
	in = thread_findnew(s, -1, (int32_t)next_pid);
	wo = out ? atoms_of(s, out) : NULL;
	if (!wo || !atom_add(wo, state == 0, smp->time))
		goto nomem;
	wi = in->atoms;
	if (!wi) {
		wi = atoms_of(s, in);
		if (!wi || !atom_add(wi, true, smp->time))
			goto nomem;
	}
	atom_sched_in(wi, smp->time);
	return;
nomem:
	s->err = -ENOMEM;
}

static void latency_runtime(struct sched *s, const struct prd_sample *smp,
			    const struct ev_info *e)
{
	int64_t pid, runtime;
	struct sched_thread *t;
	struct work_atoms *w;

	if (!num(smp, e->pid, &pid) || !num(smp, e->runtime, &runtime))
		return;
	t = thread_findnew(s, -1, (int32_t)pid);
	if (!t)
		return;
	w = t->atoms;
	if (!w) {
		w = atoms_of(s, t);
		if (!w || !atom_add(w, true, smp->time)) {
			s->err = -ENOMEM;
			return;
		}
	}
	w->v[w->nr - 1].runtime += (uint64_t)runtime;
	w->total_runtime += (uint64_t)runtime;
}

static void latency_wakeup(struct sched *s, const struct prd_sample *smp,
			   const struct ev_info *e)
{
	int64_t pid;
	struct sched_thread *t;
	struct work_atoms *w;
	struct lat_atom *a;

	if (!num(smp, e->pid, &pid))
		return;
	t = thread_findnew(s, -1, (int32_t)pid);
	if (!t)
		return;
	w = t->atoms;
	if (!w) {
		w = atoms_of(s, t);
		if (!w || !atom_add(w, false, smp->time)) {
			s->err = -ENOMEM;
			return;
		}
	}
	a = &w->v[w->nr - 1];
	if (a->state != ATOM_SLEEPING)
		return;
	s->nr_timestamps++;
	if (a->sched_out > smp->time) {
		s->nr_unordered++;
		return;
	}
	a->state = ATOM_WAIT_CPU;
	a->wake_up = smp->time;
}

/* latency's sort keys (perf's sort_dimension): pid avg max switch
 * runtime; each a comparison, the first that differs decides. */
static const char *lat_keys[8];
static int nr_lat_keys;

static int lat_cmp_key(const char *k, const struct work_atoms *l,
		       const struct work_atoms *r)
{
	if (!strcmp(k, "avg")) {
		uint64_t al, ar;

		if (!l->nb_atoms)
			return -1;
		if (!r->nb_atoms)
			return 1;
		al = l->total_lat / l->nb_atoms;
		ar = r->total_lat / r->nb_atoms;
		return al < ar ? -1 : al > ar;
	}
	if (!strcmp(k, "max"))
		return l->max_lat < r->max_lat ? -1 : l->max_lat > r->max_lat;
	if (!strcmp(k, "switch"))
		return l->nb_atoms < r->nb_atoms ? -1 :
						   l->nb_atoms > r->nb_atoms;
	if (!strcmp(k, "runtime"))
		return l->total_runtime < r->total_runtime ?
			       -1 :
			       l->total_runtime > r->total_runtime;
	/* pid */
	return l->t->tid < r->t->tid ? -1 : l->t->tid > r->t->tid;
}

/* perf's rbtree puts the greater to the left and an equal one to the
 * right: the walk is descending, ties in insertion order. */
static int lat_sort(const void *a, const void *b)
{
	const struct work_atoms *l = *(const struct work_atoms *const *)a;
	const struct work_atoms *r = *(const struct work_atoms *const *)b;

	for (int i = 0; i < nr_lat_keys; i++) {
		int c = lat_cmp_key(lat_keys[i], l, r);

		if (c)
			return -c;
	}
	return 0;
}

/* The insertion order perf's trees give: by comm, descending (merged),
 * or by tid, descending. */
static int lat_source_order(const void *a, const void *b)
{
	const struct work_atoms *l = *(const struct work_atoms *const *)a;
	const struct work_atoms *r = *(const struct work_atoms *const *)b;

	return r->t->tid < l->t->tid ? -1 : r->t->tid > l->t->tid;
}

static int lat_comm_order(const void *a, const void *b)
{
	const struct work_atoms *l = *(const struct work_atoms *const *)a;
	const struct work_atoms *r = *(const struct work_atoms *const *)b;
	int c = strcmp(r->t->comm, l->t->comm);

	return c ? c : lat_source_order(a, b);
}

static void stable_sort(struct work_atoms **v, size_t n,
			int (*cmp)(const void *, const void *))
{
	/* insertion sort: stable, and n is the number of threads */
	for (size_t i = 1; i < n; i++) {
		struct work_atoms *x = v[i];
		size_t j = i;

		while (j > 0 && cmp(&x, &v[j - 1]) < 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static void latency_row(struct sched *s, const struct work_atoms *w)
{
	char start[32], end[32];
	int ret;

	if (!w->nb_atoms || !strcmp(w->t->comm, "swapper"))
		return;
	s->all_runtime += w->total_runtime;
	s->all_count += w->nb_atoms;
	if (w->num_merged > 1)
		ret = fprintf(s->out, "  %s:(%d) ", w->t->comm, w->num_merged);
	else
		ret = fprintf(s->out, "  %s:%d ", w->t->comm, w->t->tid);
	for (int i = 0; i < 24 - ret; i++)
		fputc(' ', s->out);
	fprintf(s->out,
		"|%11.3f ms |%9llu | avg:%8.3f ms | max:%8.3f ms | max start: %12s s | max end: %12s s\n",
		(double)w->total_runtime / 1e6, (unsigned long long)w->nb_atoms,
		(double)(w->total_lat / w->nb_atoms) / 1e6,
		(double)w->max_lat / 1e6,
		usec_str(w->max_lat_start, start, sizeof(start)),
		usec_str(w->max_lat_end, end, sizeof(end)));
}

static int latency_report(struct sched *s)
{
	struct work_atoms **v = s->atoms;
	size_t n = s->nr_atoms, k = 0;
	const struct prd_stats *ps = prd_stats(s->f);
	char *keys =
		strdup(s->o->sort ? s->o->sort : "avg, max, switch, runtime");
	char *save = NULL;

	if (!keys)
		return -ENOMEM;
	nr_lat_keys = 0;
	for (char *tok = strtok_r(keys, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		if (strcmp(tok, "pid") && strcmp(tok, "avg") &&
		    strcmp(tok, "max") && strcmp(tok, "switch") &&
		    strcmp(tok, "runtime")) {
			pr_err("sched latency: unknown --sort key: `%s'", tok);
			free(keys);
			return -EINVAL;
		}
		if (nr_lat_keys < 8)
			lat_keys[nr_lat_keys++] = tok;
	}
	if (!s->o->per_thread) {
		/* merged by comm: the first of a comm (in tid order,
		 * descending) takes the others' figures */
		stable_sort(v, n, lat_comm_order);
		for (size_t i = 0; i < n; i++) {
			struct work_atoms *w = v[i];

			if (k && !strcmp(v[k - 1]->t->comm, w->t->comm)) {
				struct work_atoms *m = v[k - 1];

				m->num_merged++;
				m->total_runtime += w->total_runtime;
				m->nb_atoms += w->nb_atoms;
				m->total_lat += w->total_lat;
				if (m->max_lat < w->max_lat) {
					m->max_lat = w->max_lat;
					m->max_lat_start = w->max_lat_start;
					m->max_lat_end = w->max_lat_end;
				}
				continue;
			}
			w->num_merged++;
			v[k++] = w;
		}
		n = k;
	} else {
		stable_sort(v, n, lat_source_order);
	}
	stable_sort(v, n, lat_sort);
	fprintf(s->out,
		"\n -------------------------------------------------------------------------------------------------------------------------------------------\n");
	fprintf(s->out,
		"  Task                  |   Runtime ms  | Switches | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |\n");
	fprintf(s->out,
		" -------------------------------------------------------------------------------------------------------------------------------------------\n");
	for (size_t i = 0; i < n; i++)
		latency_row(s, v[i]);
	fprintf(s->out,
		" -----------------------------------------------------------------------------------------------------------------\n");
	fprintf(s->out, "  TOTAL:                |%11.3f ms |%9llu |\n",
		(double)s->all_runtime / 1e6, (unsigned long long)s->all_count);
	fprintf(s->out,
		" ---------------------------------------------------\n");
	if (s->nr_unordered && s->nr_timestamps)
		fprintf(s->out,
			"  INFO: %.3f%% unordered timestamps (%llu out of %llu)\n",
			(double)s->nr_unordered / (double)s->nr_timestamps *
				100.0,
			(unsigned long long)s->nr_unordered,
			(unsigned long long)s->nr_timestamps);
	if (ps->nr_lost && ps->nr_records)
		fprintf(s->out,
			"  INFO: %.3f%% lost events (%llu out of %llu, in %llu chunks)\n",
			(double)ps->nr_lost / (double)ps->nr_records * 100.0,
			(unsigned long long)ps->nr_lost,
			(unsigned long long)ps->nr_records,
			(unsigned long long)ps->nr_lost_records);
	if (s->nr_switch_bugs && s->nr_timestamps) {
		fprintf(s->out,
			"  INFO: %.3f%% context switch bugs (%llu out of %llu)",
			(double)s->nr_switch_bugs / (double)s->nr_timestamps *
				100.0,
			(unsigned long long)s->nr_switch_bugs,
			(unsigned long long)s->nr_timestamps);
		if (ps->nr_lost)
			fprintf(s->out, " (due to lost events?)");
		fprintf(s->out, "\n");
	}
	fprintf(s->out, "\n");
	free(keys);
	return 0;
}

/* ---- driver ------------------------------------------------------------- */

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct sched *s = ctx;
	const struct prd_sample *smp = ev->sample;
	const struct ev_info *e;
	char ts[64];

	(void)f;
	if (ev->hdr->type == PERF_RECORD_LOST && !s->latency && smp &&
	    !s->o->summary_only) {
		uint64_t lost = 0;

		if (ev->hdr->size >= 24)
			memcpy(&lost, (const char *)ev->hdr + 16, 8);
		fprintf(s->out, "%15s lost %llu events on cpu %d\n",
			usec_str(smp->time, ts, sizeof(ts)),
			(unsigned long long)lost, (int)smp->cpu);
		return 0;
	}
	if (ev->hdr->type != PERF_RECORD_SAMPLE) {
		side_band(s, ev);
		return s->err;
	}
	if (!smp || !smp->attr || smp->attr->index >= s->nr_attrs)
		return 0;
	setup_events(s);
	e = &s->ei[smp->attr->index];
	if (!s->latency && (int)smp->cpu > s->max_cpu && smp->cpu < MAX_CPUS)
		s->max_cpu = (int)smp->cpu;
	switch (e->kind) {
	case EV_SWITCH:
		if (s->latency)
			latency_switch(s, smp, e);
		else
			timehist_switch(s, smp, e);
		break;
	case EV_RUNTIME:
		if (s->latency)
			latency_runtime(s, smp, e);
		break;
	case EV_WAKING:
		if (!s->latency)
			timehist_wakeup(s, smp, e);
		break;
	case EV_WAKEUP:
		/* timehist prefers sched_waking when the file has it */
		if (s->latency)
			latency_wakeup(s, smp, e);
		else if (!s->has_waking)
			timehist_wakeup(s, smp, e);
		break;
	case EV_WAKEUP_NEW:
		if (s->latency)
			latency_wakeup(s, smp, e);
		else
			timehist_wakeup(s, smp, e);
		break;
	default:
		break;
	}
	if (!s->err && ferror(s->out))
		s->err = errno ? -errno : -EIO;
	return s->err;
}

static void sched_free(struct sched *s)
{
	struct sched_thread *t, *n;

	for (t = s->all; t; t = n) {
		n = t->all;
		if (t->atoms)
			free(t->atoms->v);
		free(t->atoms);
		free(t);
	}
	for (int i = 0; i < s->nr_idle; i++)
		free(s->idle[i]);
	free(s->idle);
	free(s->ei);
	free(s->last_switch);
	free(s->curr_pid);
	free(s->cpu_last_switched);
	free(s->atoms);
	tpfmt_free(s->tp);
}

/* The online CPUs of the recording machine (HEADER_NRCPUS), as perf's
 * timehist starts its max_cpu. */
static int online_cpus(struct prd_file *f)
{
	size_t len = 0;
	const uint32_t *nr = prd_feature(f, PRD_FEAT_NRCPUS, &len);
	uint32_t online = 0;

	if (nr && len >= 8)
		memcpy(&online, (const char *)nr + 4, 4);
	return online && online < MAX_CPUS ? (int)online : 4;
}

PERFRING_API int perfring_sched(const struct perfring_sched_opts *opts,
				FILE *out)
{
	struct sched s;
	const char *cmd, *in;
	int err, perr;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.o = opts;
	s.out = out;
	cmd = OPTS_GET(opts, command, NULL);
	in = OPTS_GET(opts, input, NULL);
	if (!in || !*in)
		in = "perf.data";
	if (!cmd || (strcmp(cmd, "timehist") && strcmp(cmd, "latency"))) {
		pr_err("sched: timehist or latency, not %s",
		       cmd ? cmd : "(none)");
		return -EINVAL;
	}
	s.latency = !strcmp(cmd, "latency");
	s.comm_width = 30;
	err = prd_open(in, &s.f);
	if (err)
		return err;
	s.nr_attrs = prd_nr_attrs(s.f);
	s.ei = calloc(s.nr_attrs ? s.nr_attrs : 1, sizeof(*s.ei));
	s.last_switch = calloc(MAX_CPUS, sizeof(*s.last_switch));
	s.curr_pid = malloc(MAX_CPUS * sizeof(*s.curr_pid));
	s.cpu_last_switched = calloc(MAX_CPUS, sizeof(*s.cpu_last_switched));
	if (!s.ei || !s.last_switch || !s.curr_pid || !s.cpu_last_switched) {
		err = -ENOMEM;
		goto out;
	}
	memset(s.curr_pid, 0xff, MAX_CPUS * sizeof(*s.curr_pid));
	setup_events(&s);
	/* perf_session__register_idle_thread(): every perf tool names
	 * thread 0 (a waker in idle context, for one) "swapper". */
	{
		struct sched_thread *swapper = thread_findnew(&s, 0, 0);

		if (!swapper) {
			err = -ENOMEM;
			goto out;
		}
		set_comm(swapper, "swapper", strlen("swapper"));
	}
	if (!s.latency) {
		bool have_switch = false;

		for (uint32_t i = 0; i < s.nr_attrs; i++)
			have_switch |= s.ei[i].kind == EV_SWITCH;
		if (s.tp_tried && !have_switch) {
			pr_err("No sched_switch events found. Have you run 'perf sched record'?");
			err = -ENOENT;
			goto out;
		}
		s.max_cpu = online_cpus(s.f);
		for (int i = 0; i < s.max_cpu; i++)
			if (!idle_thread(&s, i)) {
				err = -ENOMEM;
				goto out;
			}
		if (!opts->summary_only)
			timehist_header(&s);
	}
	perr = prd_process(s.f, true, on_event, &s);
	err = perr && perr != -EBADMSG ? perr : s.err;
	if (!err && s.latency)
		err = latency_report(&s);
	else if (!err && (opts->summary_only || opts->with_summary))
		timehist_summary(&s);
	if (!err && perr == -EBADMSG)
		err = perr;
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
out:
	sched_free(&s);
	prd_close(s.f);
	return err;
}
