// SPDX-License-Identifier: MIT
/*
 * perfring record --tracefs: tracepoints through a private tracefs
 * instance, consumed through the memory-mapped per-CPU ring buffers
 * (src/sources/tracefs.c), written to trace.dat (src/format/trace_dat.c).
 *
 * The instance gets the mono clock (the CLOCK_MONOTONIC of perf events
 * with use_clockid), the requested sub-buffer and buffer sizes and events;
 * nothing outside it is written except options/copy_trace_marker of the
 * instance itself.  It is removed at the end, after errors too.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "../common/opts.h"
#include "../format/out_file.h"
#include "../format/trace_dat.h"
#include "../format/tracing_data.h"
#include "../sources/stale.h"
#include "../sources/tracefs.h"
#include "../sources/child.h"
#include "../sources/session.h"
#include "tracefs_source.h"

#define FORMAT_MAX (1u << 20)
#define TABLE_MAX (256u << 20)

struct metabuf {
	struct tdat_meta m;
	char *hp, *he, *kall, *printk, *cmdl, *clock, *cpustat;
	char uname[512];
	struct tdat_blob *ftrace;
	size_t nr_ftrace;
	struct tdat_system *sys;
	size_t nr_sys;
	char **texts; /* every allocated format, to free */
	size_t nr_texts;
};

struct tfs_source {
	const struct perfring_tracefs_opts *o;
	struct perfring_tracefs_stats *st;
	const char *root;
	struct tfs_instance ti;
	struct tfs_cpu *cpus;
	int nr_cpus;
	struct tdat_writer *w;
	uint32_t subbuf_size;
	bool want_print;
	bool on[PERFRING_TRACEFS_MAX_CPUS]; /* CPUs recorded */
	int write_err;
	int loop_err; /* the first drain error in a session's loop */
	int nopen; /* CPUs opened (tfs_cpu_close) */
	bool all; /* every task: no set_event_pid */
	bool made; /* the instance exists: removed at the end */
	bool tracing; /* tracing_on is 1 */
	uint64_t cpu0; /* cpu_ns() when tracing went on */
	struct metabuf mb;
};

/* CPU time of the process (the recorder is one thread). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int count_cpus(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	int max = -1;
	DIR *d;

	snprintf(path, sizeof(path), "%s/per_cpu", dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long n;

		if (strncmp(e->d_name, "cpu", 3))
			continue;
		n = strtol(e->d_name + 3, &end, 10);
		if (*end || n < 0 || n >= PERFRING_TRACEFS_MAX_CPUS)
			continue;
		if (n > max)
			max = (int)n;
	}
	closedir(d);
	return max + 1;
}

/* "sys:name" → checks it and splits it into @sys/@name. */
static int split_event(const char *spec, char *sys, size_t ssz, char *name,
		       size_t nsz)
{
	const char *colon = strchr(spec, ':');
	size_t sl;

	if (!colon || colon == spec || !colon[1] || strchr(colon + 1, ':') ||
	    strchr(spec, '/') || strstr(spec, "..")) {
		pr_err("tracefs: event '%s' is not of the form system:event",
		       spec);
		return -EINVAL;
	}
	sl = (size_t)(colon - spec);
	if (sl >= ssz || strlen(colon + 1) >= nsz)
		return -ENAMETOOLONG;
	memcpy(sys, spec, sl);
	sys[sl] = 0;
	strcpy(name, colon + 1);
	return 0;
}

static int enable_events(struct tfs_source *s)
{
	int nr = OPTS_GET(s->o, nr_events, 0);
	const char *const *ev = OPTS_GET(s->o, events, NULL);
	char sys[128], name[128], rel[512], path[PATH_MAX];
	struct stat sb;
	int err;

	if (nr <= 0 || !ev) {
		pr_err("tracefs: no events: give -e system:event");
		return -EINVAL;
	}
	for (int i = 0; i < nr; i++) {
		err = split_event(ev[i], sys, sizeof(sys), name, sizeof(name));
		if (err)
			return err;
		if (!strcmp(sys, "ftrace")) {
			if (strcmp(name, "print")) {
				pr_err("tracefs: %s: of the ftrace events only ftrace:print (trace_marker) can be recorded",
				       ev[i]);
				return -EINVAL;
			}
			s->want_print = true;
			continue;
		}
		if (!strcmp(name, "*"))
			snprintf(rel, sizeof(rel), "events/%s/enable", sys);
		else
			snprintf(rel, sizeof(rel), "events/%s/%s/enable", sys,
				 name);
		snprintf(path, sizeof(path), "%s/%s", s->ti.path, rel);
		if (stat(path, &sb)) {
			pr_err("tracefs: no tracepoint %s (%s: %s)", ev[i],
			       path, strerror(errno));
			return -ENOENT;
		}
		err = tfs_write(&s->ti, rel, "1", true);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Writes to the top-level trace_marker are copied into the instance
 * (ftrace:print) only while it records: the kernel fails every such write,
 * anyone's, with EBADF while an instance that copies them has tracing off.
 * So the copy is switched on after tracing_on=1 and off before
 * tracing_on=0.
 */
static void copy_markers(struct tfs_source *s, bool on)
{
	if (!s->want_print)
		return;
	if (tfs_write(&s->ti, "options/copy_trace_marker", on ? "1" : "0",
		      false) &&
	    on)
		pr_warn("tracefs: this kernel has no copy_trace_marker option: only writes to %s/trace_marker are recorded",
			s->ti.path);
}

static int setup_instance(struct tfs_source *s)
{
	uint64_t buf = OPTS_GET(s->o, buffer_bytes, 0);
	uint32_t sub = OPTS_GET(s->o, subbuf_bytes, 0);
	int pct = OPTS_GET(s->o, buffer_percent, -1);
	char v[64], path[PATH_MAX], *txt;
	size_t len;
	int err;

	err = tfs_write(&s->ti, "tracing_on", "0", true);
	if (err)
		return err;
	err = tfs_write(&s->ti, "trace_clock", "mono", false);
	if (err)
		pr_warn("tracefs: cannot select the mono clock (%s): times will not match perf's",
			strerror(-err));
	if (sub) {
		if (sub < 4096 || (sub & (sub - 1))) {
			pr_err("tracefs: sub-buffer size %u is not a power of two of at least 4096",
			       sub);
			return -EINVAL;
		}
		snprintf(v, sizeof(v), "%u", sub / 1024);
		err = tfs_write(&s->ti, "buffer_subbuf_size_kb", v, true);
		if (err)
			return err;
	}
	if (buf) {
		snprintf(v, sizeof(v), "%" PRIu64,
			 buf / 1024 ? buf / 1024 : (uint64_t)1);
		err = tfs_write(&s->ti, "buffer_size_kb", v, true);
		if (err)
			return err;
	}
	if (pct >= 0) {
		if (pct > 100)
			return -EINVAL;
		snprintf(v, sizeof(v), "%d", pct);
		err = tfs_write(&s->ti, "buffer_percent", v, true);
		if (err)
			return err;
	}
	s->subbuf_size = 4096;
	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", s->ti.path);
	if (!tfs_read_file(path, 4096, &txt, &len)) {
		unsigned long kb = strtoul(txt, NULL, 10);

		if (kb >= 4 && kb <= 131072)
			s->subbuf_size = (uint32_t)kb * 1024;
		free(txt);
	}
	return enable_events(s);
}

static int sink(void *ctx, int cpu, const void *page)
{
	struct tfs_source *s = ctx;
	int err = tdat_writer_page(s->w, cpu, page);

	if (err && !s->write_err)
		s->write_err = err;
	return err;
}

static uint64_t stat_field(const char *root_or_inst, int cpu, const char *key)
{
	char path[PATH_MAX], *txt, *p;
	uint64_t v = 0;
	size_t len;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", root_or_inst,
		 cpu);
	if (tfs_read_file(path, 65536, &txt, &len))
		return 0;
	for (p = txt; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t kl = strlen(key);

		if (!strncmp(p, key, kl) && p[kl] == ':') {
			v = strtoull(p + kl + 1, NULL, 10);
			break;
		}
	}
	free(txt);
	return v;
}

static void fill_stats(struct tfs_source *s, bool final)
{
	struct perfring_tracefs_stats *st = s->st;

	st->events = st->pages = st->bytes = st->lost = st->lost_pages = 0;
	st->entries = st->kernel_read = st->zero_copy_pages = 0;
	for (int i = 0; i < s->nr_cpus; i++) {
		struct tfs_cpu *c = &s->cpus[i];
		struct perfring_tracefs_cpu_stats *cs = &st->cpu[i];

		/* not recorded (-C): with ftrace:print its buffer runs
		 * anyway (see select_cpus) but is neither read nor counted */
		if (!s->on[i])
			continue;
		if (final) {
			tfs_cpu_update_counts(c);
			if (!c->mapped) {
				uint64_t rd = stat_field(s->ti.path, i,
							 "read events");
				c->overrun =
					stat_field(s->ti.path, i, "overrun");
				c->kread = rd;
				c->entries =
					rd + c->overrun +
					stat_field(s->ti.path, i, "entries");
			}
			cs->lost = c->overrun +
				   stat_field(s->ti.path, i, "commit overrun") +
				   stat_field(s->ti.path, i, "dropped events");
			cs->entries = c->entries;
			cs->kernel_read = c->kread;
		}
		cs->events = c->events;
		cs->pages = c->pages;
		cs->bytes = c->bytes;
		cs->lost_pages = c->lost_pages;
		cs->zero_copy_pages = c->zero_copy_pages;
		st->events += cs->events;
		st->pages += cs->pages;
		st->bytes += cs->bytes;
		st->lost += cs->lost;
		st->lost_pages += cs->lost_pages;
		st->entries += cs->entries;
		st->kernel_read += cs->kernel_read;
		st->zero_copy_pages += cs->zero_copy_pages;
	}
	st->nr_cpus = (uint32_t)s->nr_cpus;
	st->subbuf_size = s->subbuf_size;
}

static int drain(struct tfs_source *s, int cpu, bool final)
{
	int r;

	if (!s->on[cpu])
		return 0;
	r = tfs_cpu_consume(&s->cpus[cpu], final, sink, s);

	if (r < 0)
		return s->write_err ? s->write_err : r;
	return r;
}

/* ---- metadata ---------------------------------------------------------- */

static int keep_text(struct metabuf *mb, char *t)
{
	char **n = realloc(mb->texts, (mb->nr_texts + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	mb->texts = n;
	n[mb->nr_texts++] = t;
	return 0;
}

static int add_format(struct metabuf *mb, struct tdat_blob **arr, size_t *nr,
		      const char *path, const char *name)
{
	struct tdat_blob *n;
	char *txt;
	size_t len;
	int err = tfs_read_file(path, FORMAT_MAX, &txt, &len);

	if (err)
		return err;
	if (keep_text(mb, txt)) {
		free(txt);
		return -ENOMEM;
	}
	n = realloc(*arr, (*nr + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*arr = n;
	n[*nr].name = name;
	n[*nr].data = txt;
	n[*nr].len = len;
	(*nr)++;
	return 0;
}

/* Every format in events/@sys (or just @name), added under @sys. */
static int add_system(struct tfs_source *s, struct metabuf *mb, const char *sys,
		      const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct tdat_system *ts = NULL;
	struct dirent *e;
	DIR *d;
	int err = 0;

	for (size_t i = 0; i < mb->nr_sys; i++)
		if (!strcmp(mb->sys[i].name, sys))
			ts = &mb->sys[i];
	if (!ts) {
		struct tdat_system *n =
			realloc(mb->sys, (mb->nr_sys + 1) * sizeof(*n));
		char *nm = strdup(sys);

		if (!n || !nm || keep_text(mb, nm)) {
			if (n)
				mb->sys = n;
			free(nm);
			return -ENOMEM;
		}
		mb->sys = n;
		ts = &mb->sys[mb->nr_sys++];
		memset(ts, 0, sizeof(*ts));
		ts->name = nm;
	}
	if (strcmp(name, "*")) {
		snprintf(path, sizeof(path), "%s/events/%s/%s/format",
			 s->ti.path, sys, name);
		return add_format(mb, &ts->events, &ts->nr_events, path, sys);
	}
	snprintf(dir, sizeof(dir), "%s/events/%s", s->ti.path, sys);
	d = opendir(dir);
	if (!d)
		return -errno;
	while (!err && (e = readdir(d)) != NULL) {
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/format", dir, e->d_name);
		if (stat(path, &sb))
			continue;
		err = add_format(mb, &ts->events, &ts->nr_events, path, sys);
	}
	closedir(d);
	return err;
}

static int read_opt(const char *path, char **out, size_t *len, size_t max)
{
	int err = tfs_read_file(path, max, out, len);

	if (err) {
		*out = NULL;
		*len = 0;
	}
	return err;
}

/* Per-CPU statistics, "CPU: n" then the stats file, as trace-cmd. */
static void read_cpustat(struct tfs_source *s, struct metabuf *mb)
{
	char path[PATH_MAX];
	size_t cap = 0, used = 0;

	free(mb->cpustat);
	mb->cpustat = NULL;
	for (int i = 0; i < s->nr_cpus; i++) {
		char *t, *n;
		size_t tl;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats",
			 s->ti.path, i);
		if (tfs_read_file(path, 65536, &t, &tl))
			continue;
		if (used + tl + 32 > cap) {
			cap = (used + tl + 32) * 2;
			n = realloc(mb->cpustat, cap);
			if (!n) {
				free(t);
				break;
			}
			mb->cpustat = n;
		}
		used += (size_t)snprintf(mb->cpustat + used, cap - used,
					 "CPU: %d\n%s", i, t);
		free(t);
	}
	mb->m.cpustat = mb->cpustat;
}

/* What changes while recording, read again at the end: the task names
 * and the per-CPU statistics. */
static void refresh_meta(struct tfs_source *s, struct metabuf *mb)
{
	char path[PATH_MAX];
	size_t len;

	free(mb->cmdl);
	snprintf(path, sizeof(path), "%s/saved_cmdlines", s->root);
	read_opt(path, &mb->cmdl, &len, TABLE_MAX);
	mb->m.cmdlines = (struct tdat_blob){ NULL, mb->cmdl, len };
	read_cpustat(s, mb);
}

/*
 * Whether the trace needs /proc/kallsyms (5 MB here, most of a trace.dat
 * of a few events): trace-cmd report names kernel addresses with it, which
 * ftrace's own events carry (function tracer, stacks, trace_marker's ip)
 * and an event that prints a pointer as a symbol (%pS, %ps, %pF, %pf,
 * %pB).  Other events print without it: their file gets an empty
 * kallsyms section, as trace-cmd writes where it cannot read the file.
 */
static bool needs_kallsyms(const struct metabuf *mb, const char *const *ev,
			   int nr)
{
	static const char *const sym_fmts[] = { "%ps", "%pS", "%pF", "%pf",
						"%pB" };
	char sys[128], name[128];

	for (int i = 0; i < nr; i++)
		if (!split_event(ev[i], sys, sizeof(sys), name, sizeof(name)) &&
		    !strcmp(sys, "ftrace"))
			return true;
	for (size_t i = 0; i < mb->nr_sys; i++)
		for (size_t j = 0; j < mb->sys[i].nr_events; j++)
			for (size_t k = 0; k < 5; k++)
				if (memmem(mb->sys[i].events[j].data,
					   mb->sys[i].events[j].len,
					   sym_fmts[k], 3))
					return true;
	return false;
}

static int build_meta(struct tfs_source *s, struct metabuf *mb)
{
	const char *const *ev = OPTS_GET(s->o, events, NULL);
	int nr = OPTS_GET(s->o, nr_events, 0);
	char path[PATH_MAX], sys[128], name[128], *txt;
	struct utsname u;
	struct dirent *e;
	size_t len;
	DIR *d;
	int err;

	snprintf(path, sizeof(path), "%s/events/header_page", s->ti.path);
	err = tfs_read_file(path, FORMAT_MAX, &mb->hp, &len);
	if (err)
		goto missing;
	mb->m.header_page = (struct tdat_blob){ NULL, mb->hp, len };
	snprintf(path, sizeof(path), "%s/events/header_event", s->ti.path);
	err = tfs_read_file(path, FORMAT_MAX, &mb->he, &len);
	if (err)
		goto missing;
	mb->m.header_event = (struct tdat_blob){ NULL, mb->he, len };
	/* All ftrace formats, as trace-cmd stores them. */
	snprintf(path, sizeof(path), "%s/events/ftrace", s->root);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d)) != NULL) {
			char fp[PATH_MAX + 300];

			if (e->d_name[0] == '.')
				continue;
			snprintf(fp, sizeof(fp), "%s/%s/format", path,
				 e->d_name);
			if (access(fp, R_OK))
				continue;
			err = add_format(mb, &mb->ftrace, &mb->nr_ftrace, fp,
					 "ftrace");
			if (err)
				break;
		}
		closedir(d);
		if (err)
			goto missing;
	}
	for (int i = 0; i < nr; i++) {
		if (split_event(ev[i], sys, sizeof(sys), name, sizeof(name)) ||
		    !strcmp(sys, "ftrace"))
			continue;
		err = add_system(s, mb, sys, name);
		if (err) {
			snprintf(path, sizeof(path), "%s", ev[i]);
			goto missing;
		}
	}
	len = 0;
	if (needs_kallsyms(mb, ev, nr))
		read_opt("/proc/kallsyms", &mb->kall, &len, TABLE_MAX);
	mb->m.kallsyms = (struct tdat_blob){ NULL, mb->kall, len };
	snprintf(path, sizeof(path), "%s/printk_formats", s->root);
	read_opt(path, &mb->printk, &len, TABLE_MAX);
	mb->m.printk = (struct tdat_blob){ NULL, mb->printk, len };
	snprintf(path, sizeof(path), "%s/saved_cmdlines", s->root);
	read_opt(path, &mb->cmdl, &len, TABLE_MAX);
	mb->m.cmdlines = (struct tdat_blob){ NULL, mb->cmdl, len };
	snprintf(path, sizeof(path), "%s/trace_clock", s->ti.path);
	if (!read_opt(path, &mb->clock, &len, 4096))
		mb->m.trace_clock = mb->clock;
	if (!uname(&u)) {
		snprintf(mb->uname, sizeof(mb->uname), "%s %s %s %s", u.sysname,
			 u.nodename, u.release, u.version);
		mb->m.uname = mb->uname;
	}
	read_cpustat(s, mb);
	/* Room for saved_cmdlines at its largest is kept in the file: at
	 * most saved_cmdlines_size lines of "<pid> <comm>\n". */
	snprintf(path, sizeof(path), "%s/saved_cmdlines_size", s->root);
	if (!read_opt(path, &txt, &len, 4096)) {
		unsigned long long lines = strtoull(txt, NULL, 10);

		mb->m.cmdlines_max =
			lines < TABLE_MAX / 24 ? (size_t)lines * 24 : TABLE_MAX;
		free(txt);
	}
	mb->m.ftrace = mb->ftrace;
	mb->m.nr_ftrace = mb->nr_ftrace;
	mb->m.systems = mb->sys;
	mb->m.nr_systems = mb->nr_sys;
	return 0;
missing:
	pr_err("tracefs: cannot read the format data (%s): %s", path,
	       strerror(-err));
	return err;
}

static void free_meta(struct metabuf *mb)
{
	for (size_t i = 0; i < mb->nr_sys; i++)
		free(mb->sys[i].events);
	free(mb->sys);
	free(mb->ftrace);
	for (size_t i = 0; i < mb->nr_texts; i++)
		free(mb->texts[i]);
	free(mb->texts);
	free(mb->hp);
	free(mb->he);
	free(mb->kall);
	free(mb->printk);
	free(mb->cmdl);
	free(mb->clock);
	free(mb->cpustat);
}

/* ---- the recording ---------------------------------------------------- */

/*
 * -C "0,2-3": marks the CPUs and sets the instance's tracing_cpumask,
 * except with ftrace:print: the kernel refuses every top-level
 * trace_marker write (anyone's) made on a CPU that an instance copying
 * them does not record.  Then all CPUs record into the instance and only
 * the chosen ones are read; the others' buffers overwrite themselves.
 */
static int select_cpus(struct tfs_source *s, const char *list)
{
	uint32_t mask[PERFRING_TRACEFS_MAX_CPUS / 32] = { 0 };
	char txt[PERFRING_TRACEFS_MAX_CPUS / 32 * 9 + 1], *end;
	const char *p = list;
	int groups = (s->nr_cpus + 31) / 32, n = 0;

	if (!list) {
		for (int i = 0; i < s->nr_cpus; i++)
			s->on[i] = true;
		return 0;
	}
	while (*p) {
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			goto bad;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				goto bad;
			p = end;
		}
		if (b >= s->nr_cpus) {
			pr_err("tracefs: -C %s: this machine has CPUs 0-%d",
			       list, s->nr_cpus - 1);
			return -EINVAL;
		}
		for (long i = a; i <= b; i++) {
			s->on[i] = true;
			mask[i / 32] |= 1u << (i % 32);
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (!mask[0] && !memchr(s->on, 1, sizeof(s->on)))
		goto bad;
	if (s->want_print)
		return 0;
	/* Most significant group first, comma separated (cpumask format). */
	for (int g = groups - 1; g >= 0; g--)
		n += snprintf(txt + n, sizeof(txt) - (size_t)n, "%s%08x",
			      g == groups - 1 ? "" : ",", mask[g]);
	return tfs_write(&s->ti, "tracing_cpumask", txt, true);
bad:
	pr_err("tracefs: -C takes a CPU list like 0,2-3: %s", list);
	return -EINVAL;
}

/*
 * Instances perfring-<pid>-<start> (and perfring-<pid> of older versions)
 * whose recorder is gone: killed with SIGKILL, nothing could remove them.
 * The start time in the name tells a reused pid from the recorder; one
 * whose recorder lives is never touched (and could not be removed: rmdir
 * fails while its buffers are open).  Other names are not ours.
 */
static void reclaim_instances(const char *root)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/instances", root);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		unsigned long long start = 0, now;
		char *end;
		long pid;
		int err;

		if (strncmp(e->d_name, "perfring-", 9))
			continue;
		errno = 0;
		pid = strtol(e->d_name + 9, &end, 10);
		if (end == e->d_name + 9 || pid <= 0 || errno)
			continue;
		if (*end == '-') {
			char *p = end + 1;

			start = strtoull(p, &end, 10);
			if (end == p || *end || !start)
				continue;
		} else if (*end) {
			continue;
		}
		if (pid == (long)getpid())
			continue;
		err = proc_start_ticks((pid_t)pid, &now);
		if (!err && (!start || now == start))
			continue; /* its recorder lives */
		if (err && err != -ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!rmdir(path))
			pr_warn("tracefs: removed tracefs instance %s left by a recorder that was killed (pid %ld)",
				e->d_name, pid);
		else
			pr_warn("tracefs: cannot remove instance %s left by a recorder that was killed (pid %ld): %s",
				e->d_name, pid, strerror(errno));
	}
	closedir(d);
}

/*
 * A write failed (a full disk) and the file was kept: the figures become
 * what is in it.  The join may have left pages out; the kernel's counters
 * say how many of its events never got into the file.
 */
static void stats_after_cut(struct tfs_source *s, int write_error)
{
	struct perfring_tracefs_stats *st = s->st;

	st->write_error = write_error;
	for (int i = 0; i < s->nr_cpus; i++) {
		struct perfring_tracefs_cpu_stats *cs = &st->cpu[i];
		struct tdat_cut cut;
		uint64_t kernel;

		if (!s->on[i])
			continue;
		cs->pages = tdat_writer_cpu_result(s->w, i, &cut);
		cs->events -= cut.events < cs->events ? cut.events : cs->events;
		cs->bytes -= cut.bytes < cs->bytes ? cut.bytes : cs->bytes;
		cs->lost_pages -= cut.marked < cs->lost_pages ? cut.marked :
								cs->lost_pages;
		st->unsaved_pages += cut.pages + s->cpus[i].unsaved_pages;
		/*
		 * The kernel's counters from its stats file: the meta page
		 * was last updated by the last GET_READER, and there was no
		 * final drain.  Consumed from the buffer, and still in it:
		 */
		kernel = stat_field(s->ti.path, i, "read events") +
			 stat_field(s->ti.path, i, "entries");
		if (kernel > cs->events)
			st->unsaved_events += kernel - cs->events;
		cs->kernel_read = stat_field(s->ti.path, i, "read events");
		cs->lost = stat_field(s->ti.path, i, "overrun") +
			   stat_field(s->ti.path, i, "commit overrun") +
			   stat_field(s->ti.path, i, "dropped events");
		cs->entries = kernel + stat_field(s->ti.path, i, "overrun");
	}
	st->events = st->pages = st->bytes = st->lost_pages = 0;
	st->lost = st->entries = st->kernel_read = 0;
	for (int i = 0; i < s->nr_cpus; i++) {
		st->events += st->cpu[i].events;
		st->pages += st->cpu[i].pages;
		st->bytes += st->cpu[i].bytes;
		st->lost_pages += st->cpu[i].lost_pages;
		st->lost += st->cpu[i].lost;
		st->entries += st->cpu[i].entries;
		st->kernel_read += st->cpu[i].kernel_read;
	}
}

/* ---- the source: one instance, its per-CPU buffers, one trace.dat ----- */

/*
 * Makes the instance, opens its CPUs' buffers and writes the trace.dat's
 * metadata, tracing still off.  @st (zeroed, st->sz set) is filled along.
 * On error what was made is undone (*out stays NULL).
 */
int tfs_source_open(const struct perfring_tracefs_opts *o,
		    struct perfring_tracefs_stats *st, struct tfs_source **out)
{
	struct tfs_source *s;
	char name[64];
	unsigned long long start;
	const char *path;
	bool map;
	int err, first = -1;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = o;
	s->st = st;
	s->root = OPTS_GET(o, tracefs, NULL);
	if (!s->root)
		s->root = TFS_DEFAULT_ROOT;
	path = OPTS_GET(o, output, NULL);
	if (!path)
		path = "trace.dat";
	if (!strcmp(path, "-")) {
		pr_err("tracefs: trace.dat cannot go to a pipe: give -o FILE");
		free(s);
		return -EINVAL;
	}
	s->all = OPTS_GET(o, all_cpus, false) || !OPTS_GET(o, argv, NULL);
	map = !OPTS_GET(o, no_mmap, false);
	if (OPTS_GET(o, instance, NULL))
		snprintf(name, sizeof(name), "%s", o->instance);
	else if (!proc_start_ticks(getpid(), &start))
		snprintf(name, sizeof(name), "perfring-%d-%llu", (int)getpid(),
			 start);
	else
		snprintf(name, sizeof(name), "perfring-%d", (int)getpid());
	snprintf(st->instance, sizeof(st->instance), "%s", name);

	reclaim_instances(s->root);
	err = tfs_instance_create(&s->ti, s->root, name);
	if (err) {
		free(s);
		return err;
	}
	s->made = true;
	err = setup_instance(s);
	if (err)
		goto fail;
	s->nr_cpus = count_cpus(s->ti.path);
	if (s->nr_cpus <= 0) {
		err = s->nr_cpus ? s->nr_cpus : -ENODEV;
		pr_err("tracefs: no CPUs under %s/per_cpu", s->ti.path);
		goto fail;
	}
	s->cpus = calloc((size_t)s->nr_cpus, sizeof(*s->cpus));
	if (!s->cpus) {
		err = -ENOMEM;
		goto fail;
	}
	err = select_cpus(s, OPTS_GET(o, cpu_list, NULL));
	if (err)
		goto fail;
	for (; s->nopen < s->nr_cpus; s->nopen++) {
		int i = s->nopen;

		if (!s->on[i]) {
			s->cpus[i].fd = -1; /* not recorded */
			continue;
		}
		err = tfs_cpu_open(&s->cpus[i], s->ti.path, i, map,
				   s->subbuf_size);
		if (err)
			goto fail;
		if (s->cpus[i].mapped)
			s->subbuf_size = s->cpus[i].subbuf_size;
		first = first < 0 ? i : first;
	}
	st->mapped = s->cpus[first].mapped;
	for (int i = first + 1; i < s->nr_cpus; i++)
		if (s->on[i] && (s->cpus[i].mapped != st->mapped ||
				 s->cpus[i].subbuf_size != s->subbuf_size)) {
			pr_err("tracefs: CPUs disagree on the buffer layout");
			err = -EPROTO;
			goto fail;
		}
	/* The metadata first: a disk that fills up later cuts the data,
	 * never the formats that make it readable. */
	err = build_meta(s, &s->mb);
	if (err)
		goto fail;
	err = tdat_writer_open(path, s->subbuf_size, s->nr_cpus,
			       OUT_FILE_KEEP_OLD, &s->w);
	if (!err)
		err = tdat_writer_begin(s->w, &s->mb.m);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	tfs_source_close(s, err);
	return err;
}

/* Only @pids (a command, or -p's list: "1 2") and what they fork are
 * kept (the caller knows whether every task is wanted). */
int tfs_source_follow(struct tfs_source *s, const char *pids)
{
	tfs_write(&s->ti, "options/event-fork", "1", false);
	return tfs_write(&s->ti, "set_event_pid", pids, true);
}

int tfs_source_start(struct tfs_source *s)
{
	int err = tfs_write(&s->ti, "tracing_on", "1", true);

	if (!err) {
		s->tracing = true;
		copy_markers(s, true);
		s->cpu0 = cpu_ns();
	}
	return err;
}

int tfs_source_nr_cpus(const struct tfs_source *s)
{
	return s->nr_cpus;
}

/* CPU @cpu's descriptor (readable at the buffer's fill level), or -1. */
int tfs_source_fd(const struct tfs_source *s, int cpu)
{
	return s->on[cpu] ? s->cpus[cpu].fd : -1;
}

/* The full pages of @cpu into the file (@final: all that is left).
 * Returns >= 0 or -errno (a write error first). */
int tfs_source_drain(struct tfs_source *s, int cpu, bool final)
{
	return drain(s, cpu, final);
}

void tfs_source_stats(struct tfs_source *s)
{
	fill_stats(s, false);
}

int tfs_source_error(const struct tfs_source *s)
{
	return s->loop_err;
}

/* ---- the source in a session's loop (session.h) ---- */

static int src_watch(void *ctx, struct rec_session *rs)
{
	struct tfs_source *s = ctx;

	for (int i = 0; i < s->nr_cpus; i++) {
		int fd = tfs_source_fd(s, i);
		int err = fd >= 0 ? rec_session_watch(rs, fd, (uint32_t)i) : 0;

		if (err)
			return err;
	}
	return 0;
}

/* A CPU's buffer reached its fill level (buffer_percent): its full
 * pages into the file. */
static int src_ready(void *ctx, uint32_t cpu, uint32_t events)
{
	struct tfs_source *s = ctx;
	int r;

	if (!(events & EPOLLIN) || (int)cpu >= s->nr_cpus)
		return 0;
	r = drain(s, (int)cpu, false);
	if (r < 0) {
		if (!s->loop_err)
			s->loop_err = r;
		return r;
	}
	return 1;
}

static void src_progress(void *ctx)
{
	struct tfs_source *s = ctx;
	perfring_tracefs_progress_fn prog = OPTS_GET(s->o, progress, NULL);

	if (prog) {
		fill_stats(s, false);
		prog(s->st, OPTS_GET(s->o, progress_ctx, NULL));
	}
}

const struct rec_source_ops tfs_source_ops = {
	.name = "tracefs",
	.watch = src_watch,
	.ready = src_ready,
	.progress = src_progress,
};

/*
 * Tracing off, the last pages (unless @err: a loop that failed), the
 * final figures, the metadata that changed while recording and the file
 * completed.  Returns @err, or the first error of these steps.
 */
int tfs_source_finish(struct tfs_source *s, int err)
{
	if (s->tracing) {
		copy_markers(s, false);
		tfs_write(&s->ti, "tracing_on", "0", false);
		s->tracing = false;
	}
	if (!err) {
		for (int i = 0; i < s->nr_cpus; i++) {
			err = drain(s, i, true);
			if (err < 0)
				break;
			err = 0;
		}
	}
	fill_stats(s, true);
	s->st->capture_cpu_ns = cpu_ns() - s->cpu0;
	/* A failed write (a full disk) keeps what was written. */
	if (!err || (s->write_err && err == s->write_err)) {
		int ferr;

		refresh_meta(s, &s->mb);
		ferr = tdat_writer_finish(s->w, &s->mb.m);
		s->st->file_bytes = tdat_writer_file_bytes(s->w);
		if (ferr && s->st->file_bytes)
			stats_after_cut(s, ferr);
		err = err ? err : ferr;
		tdat_writer_free(s->w);
		s->w = NULL;
	}
	return err;
}

/*
 * --switch-output: every page recorded so far (a CPU's partly filled page
 * too, swapped out of its ring) into this file, the file completed and
 * renamed @done_path, and a new one begun under the output's name with the
 * same metadata; tracing goes on.  Returns 0 or -errno (the recording
 * stops: the completed file stays).
 */
int tfs_source_switch(struct tfs_source *s, const char *done_path)
{
	const char *path = OPTS_GET(s->o, output, NULL);
	int err = 0;

	if (!path)
		path = "trace.dat";
	for (int i = 0; i < s->nr_cpus && !err; i++) {
		int r = drain(s, i, true);

		err = r < 0 ? r : 0;
	}
	if (!err) {
		refresh_meta(s, &s->mb);
		err = tdat_writer_finish(s->w, &s->mb.m);
		s->st->file_bytes = tdat_writer_file_bytes(s->w);
		tdat_writer_free(s->w);
		s->w = NULL;
	}
	if (!err && rename(path, done_path))
		err = -errno;
	if (!err)
		err = tdat_writer_open(path, s->subbuf_size, s->nr_cpus,
				       OUT_FILE_KEEP_OLD, &s->w);
	if (!err)
		err = tdat_writer_begin(s->w, &s->mb.m);
	if (err && !s->loop_err)
		s->loop_err = err;
	return err;
}

/* Undoes what is left (an unfinished file is removed, the instance
 * always) and frees @s.  Returns @err, or the instance's removal error. */
int tfs_source_close(struct tfs_source *s, int err)
{
	int rerr = 0;

	if (!s)
		return err;
	if (s->tracing) {
		copy_markers(s, false);
		tfs_write(&s->ti, "tracing_on", "0", false);
	}
	free_meta(&s->mb);
	if (s->w)
		tdat_writer_abort(s->w);
	for (int i = 0; i < s->nopen; i++)
		tfs_cpu_close(&s->cpus[i]);
	free(s->cpus);
	if (s->made)
		rerr = tfs_instance_remove(&s->ti);
	free(s);
	return err ? err : rerr;
}

/* Ends the command (if still running) and collects its status. */
static void reap_child(struct held_child *cmd, int *child_status)
{
	int status;

	if (cmd->pid > 0) {
		if (cmd->go_fd >= 0) {
			/* Never started: it exits when the pipe closes. */
			close(cmd->go_fd);
			cmd->go_fd = -1;
		} else if (waitpid(cmd->pid, &status, WNOHANG) == 0) {
			kill(cmd->pid, SIGTERM);
		} else {
			*child_status = status;
			cmd->pid = 0;
		}
		if (cmd->pid > 0 && waitpid(cmd->pid, &status, 0) == cmd->pid)
			*child_status = status;
	}
	if (cmd->go_fd >= 0)
		close(cmd->go_fd);
	if (cmd->err_fd >= 0)
		close(cmd->err_fd);
	if (cmd->pidfd >= 0)
		close(cmd->pidfd);
}

/* The source alone in a session: until the command ends, 'q' or the
 * duration. */
static int run_session(const struct perfring_tracefs_opts *o,
		       struct tfs_source *s, struct held_child *cmd,
		       struct perfring_tracefs_stats *st)
{
	struct rec_session rs;
	int err;

	rec_session_init(&rs);
	rs.control_fd = OPTS_GET(o, control_fd, -1);
	rs.cmd = cmd;
	rs.child_status = &st->child_status;
	rs.duration = OPTS_GET(o, duration, 0.0);
	rs.poll_ms = 250;
	err = rec_session_add(&rs, &tfs_source_ops, s);
	if (!err)
		err = rec_session_loop(&rs);
	st->wakeups = rs.wakeups;
	rec_session_close(&rs);
	return err;
}

static int record_tracefs(const struct perfring_tracefs_opts *o,
			  struct perfring_tracefs_stats *st)
{
	struct held_child cmd = { .go_fd = -1, .err_fd = -1, .pidfd = -1 };
	char *const *argv = OPTS_GET(o, argv, NULL);
	struct tfs_source *s;
	int err;

	err = tfs_source_open(o, st, &s);
	if (err)
		return err;
	if (argv) {
		char pid[32];

		err = held_child_start(&cmd, argv, NULL, NULL);
		if (err) {
			pr_err("tracefs: cannot start %s: %s", argv[0],
			       strerror(-err));
			goto out;
		}
		snprintf(pid, sizeof(pid), "%d", (int)cmd.pid);
		if (!s->all)
			err = tfs_source_follow(s, pid);
		if (err)
			goto out;
	}
	err = tfs_source_start(s);
	if (!err && argv)
		err = held_child_release(&cmd, argv);
	if (err)
		goto out;
	err = run_session(o, s, &cmd, st);
	err = tfs_source_finish(s, err);
out:
	reap_child(&cmd, &st->child_status);
	return tfs_source_close(s, err);
}

/* The figures go to the caller's @st as far as its st->sz reaches (the
 * fields from write_error on came later). */
int perfring_record_tracefs(const struct perfring_tracefs_opts *o,
			    struct perfring_tracefs_stats *st)
{
	struct perfring_tracefs_stats *full;
	int err;

	if (!o || !OPTS_VALID(o) || !st ||
	    st->sz < offsetof(struct perfring_tracefs_stats, write_error))
		return -EINVAL;
	full = calloc(1, sizeof(*full));
	if (!full)
		return -ENOMEM;
	full->sz = sizeof(*full);
	full->child_status = -1;
	err = record_tracefs(o, full);
	OPTS_FILL(st, full);
	free(full);
	return err;
}

/* ---- user-space sub-buffer rings into trace.dat ------------------------- */

static const char ring_message_format[] =
	"name: message\n"
	"ID: %d\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char msg[];\toffset:8;\tsize:0;\tsigned:0;\n"
	"\n"
	"print fmt: \"%%s\", REC->msg\n";

static int ring_sink(void *ctx, int cpu, const void *page)
{
	return tdat_writer_page(ctx, cpu, page);
}

int perfring_subbuf_save(struct perfring_subbuf *const *rings, int nr,
			 const char *path)
{
	char hp[512], fmt[1024];
	struct tdat_blob ev;
	struct tdat_system sys = { .name = "perfring",
				   .events = &ev,
				   .nr_events = 1 };
	struct tdat_meta m = { .systems = &sys,
			       .nr_systems = 1,
			       .trace_clock = "local global [mono]\n" };
	struct tdat_writer *w;
	uint32_t sbs;
	int64_t events = 0;
	int err = 0;

	if (!rings || nr <= 0 || nr > PERFRING_TRACEFS_MAX_CPUS || !path)
		return -EINVAL;
	sbs = perfring_subbuf_meta(rings[0])->subbuf_size;
	for (int i = 1; i < nr; i++)
		if (perfring_subbuf_meta(rings[i])->subbuf_size != sbs)
			return -EINVAL;
	snprintf(hp, sizeof(hp), td_header_page_fmt, sbs - SUBBUF_HDR_SIZE);
	snprintf(fmt, sizeof(fmt), ring_message_format,
		 PERFRING_SUBBUF_MESSAGE_ID);
	m.header_page = (struct tdat_blob){ NULL, hp, strlen(hp) };
	m.header_event = (struct tdat_blob){ NULL, td_header_event,
					     strlen(td_header_event) };
	ev = (struct tdat_blob){ "perfring", fmt, strlen(fmt) };
	/* A program's own file: replaced, not kept as .old. */
	err = tdat_writer_open(path, sbs, nr, 0, &w);
	if (err)
		return err;
	err = tdat_writer_begin(w, &m);
	for (int i = 0; i < nr && !err; i++) {
		struct tfs_cpu c;
		int r;

		err = tfs_cpu_attach_ring(&c, rings[i], i);
		if (err)
			break;
		r = tfs_cpu_consume(&c, true, ring_sink, w);
		if (r < 0)
			err = r;
		events += (int64_t)c.events;
		tfs_cpu_close(&c);
	}
	/* A failed write (a full disk) keeps the pages written before it:
	 * the rings are drained, they exist nowhere else. */
	if (err && (err != tdat_writer_error(w))) {
		tdat_writer_abort(w);
		return err;
	}
	err = tdat_writer_finish(w, &m);
	tdat_writer_free(w);
	if (err)
		return err;
	return events > INT32_MAX ? INT32_MAX : (int)events;
}
