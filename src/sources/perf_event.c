// SPDX-License-Identifier: MIT
/*
 * Kernel perf events: names, perf_event_open per recording mode, and the
 * mapped rings, read through the ring core's reader.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "../common/log.h"
#include "evparse.h"
#include "perf_event.h"

#define TRACEFS_MAGIC 0x74726163
#define PE_SYSFS_PMUS "/sys/bus/event_source/devices"

const struct pe_sw_name pe_sw_names[] = {
	{ "cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_COUNT_SW_DUMMY },
	{ "bpf-output", NULL, PERF_COUNT_SW_BPF_OUTPUT },
	{ "cgroup-switches", NULL, PERF_COUNT_SW_CGROUP_SWITCHES },
	{ NULL, NULL, 0 },
};

static int is_tracefs(const char *path)
{
	struct statfs sfs;
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/events", path);
	return statfs(path, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC &&
	       access(p, R_OK) == 0;
}

const char *pe_tracefs(void)
{
	static const char *const paths[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (is_tracefs(paths[i]))
			return paths[i];
	/* Not mounted: mount it where the kernel expects it. */
	if (mount("nodev", paths[0], "tracefs", 0, NULL) == 0 &&
	    is_tracefs(paths[0]))
		return paths[0];
	return NULL;
}

/* Reads a small text file into @buf; returns length or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

int pe_events_parse(const char *spec, const char *filter, const char *tracefs,
		    struct pe_event *evs, int max)
{
	struct evp_list *l = malloc(sizeof(*l));
	struct evp_resolved *r =
		calloc((size_t)(max > 0 ? max : 1), sizeof(*r));
	struct evp_error err;
	char msg[1024];
	int n;

	if (!l || !r) {
		free(l);
		free(r);
		return -ENOMEM;
	}
	n = evp_parse(spec, l, &err);
	if (n >= 0)
		n = evp_resolve(l, spec, PE_SYSFS_PMUS, tracefs, r, max, &err);
	if (n < 0) {
		evp_error_format(spec, &err, msg, sizeof(msg));
		pr_err("%s", msg);
	}
	for (int i = 0; i < n; i++) {
		struct pe_event *ev = &evs[i];

		memset(ev, 0, sizeof(*ev));
		ev->attr = r[i].attr;
		snprintf(ev->name, sizeof(ev->name), "%s", r[i].name);
		ev->tracepoint = r[i].tracepoint;
		ev->tp_pmu_syntax = r[i].tp_pmu_syntax;
		snprintf(ev->tp_name, sizeof(ev->tp_name), "%s", r[i].tp_name);
		ev->leader = r[i].leader;
		ev->sample_read = r[i].sample_read;
		ev->has_period = r[i].has_period;
		ev->has_freq = r[i].has_freq;
		if (filter && !ev->tracepoint) {
			pr_err("--filter option should follow a -e tracepoint option ('%s' is not a tracepoint)",
			       ev->name);
			n = -EINVAL;
			break;
		}
		ev->filter = filter;
	}
	free(l);
	free(r);
	return n;
}

bool pe_event_supported(uint32_t type, uint64_t config)
{
	struct perf_event_attr a = { .size = sizeof(a),
				     .type = type,
				     .config = config,
				     .disabled = 1,
				     .exclude_kernel = 1,
				     .exclude_hv = 1 };
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int pe_pmu_aliases(void (*fn)(const char *name, const char *kind, void *ctx),
		   void *ctx)
{
	DIR *top = opendir(PE_SYSFS_PMUS);
	struct dirent *p;
	int n = 0;

	if (!top)
		return 0;
	while ((p = readdir(top))) {
		char path[PATH_MAX];
		struct dirent *e;
		DIR *d;

		if (p->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s/events", PE_SYSFS_PMUS,
			     p->d_name) >= (int)sizeof(path))
			continue;
		d = opendir(path);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char name[2 * NAME_MAX + 4];

			/* .scale, .unit... describe an alias */
			if (e->d_name[0] == '.' || strchr(e->d_name, '.'))
				continue;
			snprintf(name, sizeof(name), "%s/%s/", p->d_name,
				 e->d_name);
			fn(name, "Kernel PMU event", ctx);
			n++;
		}
		closedir(d);
	}
	closedir(top);
	return n;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int pe_parse_cpus(const char *list, int *cpus, int max)
{
	const char *p = list;
	int n = 0;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a > 4095)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 4095)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
		else if (*p == '\n')
			break;
	}
	if (!n)
		return -EINVAL;
	qsort(cpus, (size_t)n, sizeof(int), cmp_int);
	/* Drop duplicates. */
	int m = 0;
	for (int i = 0; i < n; i++)
		if (!m || cpus[m - 1] != cpus[i])
			cpus[m++] = cpus[i];
	return m;
}

int pe_online_cpus(int *cpus, int max)
{
	char buf[4096];
	int n = read_small("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (n < 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		if (c <= 0)
			return -EINVAL;
		for (n = 0; n < c && n < max; n++)
			cpus[n] = n;
		return n;
	}
	return pe_parse_cpus(buf, cpus, max);
}

int pe_user_cpus(const char *list, int *cpus, int max)
{
	int online[4096], nr_online, n, m = 0, j = 0;
	char have[256] = "", *h = have;

	n = pe_parse_cpus(list, cpus, max);
	if (n < 0) {
		pr_err("-C: bad CPU list '%s'", list);
		return -EINVAL;
	}
	nr_online = pe_online_cpus(online, 4096);
	if (nr_online <= 0)
		return n; /* cannot tell: the kernel will */
	/* "0-1,3" for the messages */
	for (int i = 0; i < nr_online; i++) {
		int a = online[i];

		while (i + 1 < nr_online && online[i + 1] == online[i] + 1)
			i++;
		h += snprintf(h, (size_t)(have + sizeof(have) - h),
			      a == online[i] ? "%s%d" : "%s%d-%d",
			      h == have ? "" : ",", a, online[i]);
		if (h >= have + sizeof(have) - 1)
			break;
	}
	for (int i = 0; i < n; i++) {
		while (j < nr_online && online[j] < cpus[i])
			j++;
		if (j < nr_online && online[j] == cpus[i])
			cpus[m++] = cpus[i];
		else
			pr_warn("-C %s: CPU %d is not online on this machine (CPUs %s): left out",
				list, cpus[i], have);
	}
	if (!m) {
		pr_err("-C %s: no CPU of the list is online on this machine (CPUs %s)",
		       list, have);
		return -ENODEV;
	}
	return m;
}

void pe_explain_open_error(int err, const struct pe_event *ev)
{
	char buf[16] = "?";

	read_small("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = 0;
	if (err == EACCES || err == EPERM)
		pr_err("no permission to open event '%s' (%s). /proc/sys/kernel/perf_event_paranoid is %s: "
		       "-1 allows everything, 0 allows CPU-wide events without tracepoints, 1 and 2 allow only "
		       "your own processes (2: user space only). Run as root, grant CAP_PERFMON, "
		       "or ask your administrator to lower perf_event_paranoid.",
		       ev->name, strerror(err), buf);
	else if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		pr_err("The %s event is not supported (%s)%s", ev->name,
		       strerror(err),
		       ev->attr.type == PERF_TYPE_HARDWARE ||
				       ev->attr.type == PERF_TYPE_HW_CACHE ||
				       ev->attr.type == PERF_TYPE_RAW ?
			       ": this machine has no hardware PMU (`perfring list` shows what it has)" :
			       "");
	else if (err == EMFILE)
		pr_err("too many open files opening '%s': raise `ulimit -n`",
		       ev->name);
	else
		pr_err("cannot open event '%s': %s", ev->name, strerror(err));
}

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		     int group_fd)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			      PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * perf's evsel__fallback(): without a hardware PMU, cycles becomes
 * cpu-clock, named from its attr as perf names it ("cpu-clock:uH").
 */
static bool cycles_fallback(struct pe_event *ev, int err)
{
	if ((err != ENOENT && err != ENXIO && err != ENODEV &&
	     err != EOPNOTSUPP) ||
	    ev->attr.type != PERF_TYPE_HARDWARE ||
	    ev->attr.config != PERF_COUNT_HW_CPU_CYCLES)
		return false;
	pr_warn("The cycles event is not supported, trying to fall back to cpu-clock-ticks");
	ev->attr.type = PERF_TYPE_SOFTWARE;
	ev->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	evp_attr_name("cpu-clock", &ev->attr, ev->name, sizeof(ev->name));
	return true;
}

/*
 * perf's evsel__fallback() for an unprivileged user: at
 * perf_event_paranoid 2 or more the kernel refuses kernel samples
 * (EACCES), so an event that did not exclude the kernel is opened again
 * for user space only and named "NAME:u" ("NAME" + "u" when the name has
 * modifiers or PMU terms already), with perf's message.  Not for an event
 * that excludes user space (it would count nothing), nor tracepoints
 * (the kernel's own code: nothing left to sample).
 */
static bool paranoid_fallback(struct pe_event *ev, int err)
{
	char buf[16] = "";
	long paranoid;
	size_t len = strlen(ev->name);

	if ((err != EACCES && err != EPERM) || ev->attr.exclude_kernel ||
	    ev->attr.exclude_user || ev->tracepoint)
		return false;
	if (read_small("/proc/sys/kernel/perf_event_paranoid", buf,
		       sizeof(buf)) <= 0)
		return false;
	paranoid = strtol(buf, NULL, 10);
	if (paranoid < 2 || len + 3 > sizeof(ev->name))
		return false;
	pr_warn("kernel.perf_event_paranoid=%ld, trying to fall back to excluding kernel and hypervisor  samples",
		paranoid);
	snprintf(ev->name + len, sizeof(ev->name) - len, "%su",
		 strchr(ev->name, '/') || strchr(ev->name, ':') ? "" : ":");
	ev->attr.exclude_kernel = 1;
	ev->attr.exclude_hv = 1;
	return true;
}

void pe_group_attr(struct pe_event *ev, int index)
{
	struct perf_event_attr *a = &ev->attr;

	if (ev->leader < 0)
		return;
	if (ev->sample_read) {
		/* Each sample carries the group's counts; the kernel
		 * cannot inherit such events. */
		a->sample_type |= PERF_SAMPLE_READ;
		a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		a->inherit = 0;
	}
	if (ev->leader == index)
		return;
	/* A member runs when its leader does: enabling is the leader's. */
	a->disabled = 0;
	a->enable_on_exec = 0;
	if (ev->sample_read) {
		/* Only the leader samples (perf's leader sampling). */
		a->freq = 0;
		a->sample_period = 0;
	}
}

void pe_evlist_close(struct pe_evlist *el)
{
	for (int i = 0; i < el->nr_bufs; i++) {
		perfring_ring_destroy(el->bufs[i].ring);
		if (el->bufs[i].base)
			munmap(el->bufs[i].base, el->bufs[i].len);
	}
	free(el->bufs);
	el->bufs = NULL;
	el->nr_bufs = 0;
	for (int i = 0; i < el->nr_fds; i++)
		if (el->fds[i] >= 0)
			close(el->fds[i]);
	free(el->fds);
	el->fds = NULL;
	el->nr_fds = 0;
	for (int e = 0; e < el->nr_events; e++) {
		free(el->events[e].ids);
		el->events[e].ids = NULL;
		el->events[e].nr_ids = 0;
	}
}

static int buffer_map(struct pe_buffer *b, uint64_t data_bytes, bool overwrite)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | (overwrite ? 0 : PROT_WRITE);
	int err;

	b->len = page + (size_t)data_bytes;
	b->base = mmap(NULL, b->len, prot, MAP_SHARED, b->fd, 0);
	if (b->base == MAP_FAILED) {
		err = -errno;
		b->base = NULL;
		if (err == -EPERM)
			pr_err("cannot map %zu KiB of ring buffer: over the locked-memory limit. "
			       "Use a smaller -m, or raise /proc/sys/kernel/perf_event_mlock_kb or `ulimit -l`",
			       b->len >> 10);
		else
			pr_err("cannot map the ring buffer of fd %d: %s", b->fd,
			       strerror(-err));
		return err;
	}
	return perfring_ring_wrap_kernel(b->base, b->len, b->fd, overwrite,
					 &b->ring);
}

/* Where pe_evlist_open() opens an event: a CPU and a thread, and their
 * indexes among @nr_cpus and @nr_tids. */
struct pe_slot {
	int cpu;
	pid_t tid;
	int c, t, nr_cpus, nr_tids;
};

/* Event @e at @at, its output into @buf (mapped by the first event of
 * it).  0 (opened, or its thread or group leader is gone) or -errno. */
static int open_one(struct pe_evlist *el, int e, const struct pe_slot *at,
		    struct pe_buffer *buf, uint64_t data_bytes)
{
	struct pe_event *ev = &el->events[e];
	int idx = (e * at->nr_cpus + at->c) * at->nr_tids + at->t, fd;
	uint64_t id = 0;

	int group_fd = -1;

	if (ev->leader >= 0 && ev->leader != e) {
		group_fd =
			el->fds[(ev->leader * at->nr_cpus + at->c) * at->nr_tids +
				at->t];
		if (group_fd < 0)
			return 0; /* its thread is gone */
	}
	ev->attr.write_backward = el->overwrite;
	fd = perf_open(&ev->attr, at->tid, at->cpu, group_fd);
	if (fd < 0 && cycles_fallback(ev, -fd))
		fd = perf_open(&ev->attr, at->tid, at->cpu, group_fd);
	if (fd < 0 && paranoid_fallback(ev, -fd))
		fd = perf_open(&ev->attr, at->tid, at->cpu, group_fd);
	if (fd == -ESRCH) {
		/* The thread exited meanwhile. */
		pr_debug("thread %d is gone", at->tid);
		return 0;
	}
	if (fd < 0) {
		pe_explain_open_error(-fd, ev);
		return fd;
	}
	el->fds[idx] = fd;
	if (ev->filter &&
	    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ev->filter) < 0) {
		int err = -errno;

		pr_err("failed to set filter \"%s\" on event %s with %d (%s)",
		       ev->filter, ev->name, errno, strerror(errno));
		return err;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
		ev->ids[ev->nr_ids++] = id;
	if (buf->fd < 0) {
		buf->fd = fd;
		return buffer_map(buf, data_bytes, el->overwrite);
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, buf->fd) < 0) {
		int err = -errno;

		pr_err("cannot redirect event '%s' into the ring of fd %d: %s",
		       ev->name, buf->fd, strerror(errno));
		return err;
	}
	return 0;
}

int pe_evlist_open(struct pe_evlist *el, const int *cpus, int nr_cpus,
		   const pid_t *tids, int nr_tids, uint64_t data_bytes,
		   bool overwrite)
{
	bool per_thread = nr_cpus == 1 && cpus[0] == -1;
	int nbuf = per_thread ? nr_tids : nr_cpus;
	int err = 0;

	el->overwrite = overwrite;
	el->nr_fds = el->nr_events * nr_cpus * nr_tids;
	el->fds = malloc(sizeof(int) * (size_t)el->nr_fds);
	el->bufs = calloc((size_t)nbuf, sizeof(*el->bufs));
	if (!el->fds || !el->bufs) {
		free(el->fds);
		free(el->bufs);
		el->fds = NULL;
		el->bufs = NULL;
		el->nr_fds = 0;
		return -ENOMEM;
	}
	for (int i = 0; i < el->nr_fds; i++)
		el->fds[i] = -1;
	for (int e = 0; e < el->nr_events; e++) {
		el->events[e].ids =
			calloc((size_t)(nr_cpus * nr_tids), sizeof(uint64_t));
		if (!el->events[e].ids) {
			err = -ENOMEM;
			goto err;
		}
	}
	el->nr_bufs = nbuf;
	for (int b = 0; b < nbuf; b++) {
		el->bufs[b].fd = -1;
		el->bufs[b].cpu = per_thread ? -1 : cpus[b];
		el->bufs[b].tid = per_thread ? tids[b] : -1;
	}
	for (int c = 0; c < nr_cpus; c++) {
		for (int t = 0; t < nr_tids; t++) {
			struct pe_buffer *buf = &el->bufs[per_thread ? t : c];
			const struct pe_slot at = { cpus[c], tids[t], c,
						    t,	     nr_cpus, nr_tids };

			for (int e = 0; e < el->nr_events; e++) {
				err = open_one(el, e, &at, buf, data_bytes);
				if (err)
					goto err;
			}
		}
	}
	/* Threads that vanished leave buffers with no fd: drop them. */
	{
		int m = 0;

		for (int b = 0; b < el->nr_bufs; b++)
			if (el->bufs[b].fd >= 0)
				el->bufs[m++] = el->bufs[b];
		el->nr_bufs = m;
	}
	if (!el->nr_bufs) {
		pr_err("no event could be opened (all threads gone?)");
		err = -ESRCH;
		goto err;
	}
	return 0;
err:
	pe_evlist_close(el);
	return err;
}

int pe_evlist_enable(struct pe_evlist *el, bool enable)
{
	int err = 0;

	for (int i = 0; i < el->nr_fds; i++)
		if (el->fds[i] >= 0 &&
		    ioctl(el->fds[i],
			  enable ? PERF_EVENT_IOC_ENABLE :
				   PERF_EVENT_IOC_DISABLE,
			  0) < 0 &&
		    !err)
			err = -errno;
	return err;
}

int pe_parse_tids(const char *list, bool whole_process, pid_t *tids, int max)
{
	const char *p = list;
	int n = 0;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v <= 0 || v > INT32_MAX)
			return -EINVAL;
		if (whole_process) {
			char path[64];
			struct dirent *d;
			DIR *dir;

			snprintf(path, sizeof(path), "/proc/%ld/task", v);
			dir = opendir(path);
			if (!dir) {
				pr_err("no process %ld: %s", v,
				       strerror(errno));
				return -ESRCH;
			}
			while ((d = readdir(dir)))
				if (d->d_name[0] != '.' && n < max)
					tids[n++] = (pid_t)atoi(d->d_name);
			closedir(dir);
		} else {
			char path[64];

			snprintf(path, sizeof(path), "/proc/%ld", v);
			if (access(path, F_OK)) {
				pr_err("no thread %ld", v);
				return -ESRCH;
			}
			if (n < max)
				tids[n++] = (pid_t)v;
		}
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}
