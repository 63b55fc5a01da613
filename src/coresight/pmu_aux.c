// SPDX-License-Identifier: MIT
/*
 * A kernel AUX-capable PMU (cs_etm, intel_pt, arm_spe) as a trace source:
 * perf_event_open per CPU (or per thread), the data ring mapped read-write
 * (1 + 2^n pages), the AUX area mapped at aux_offset after it as perf does
 * (read-write: the kernel's non-overwrite mode; read-only: snapshot mode),
 * enable/disable with ioctls and PERF_EVENT_IOC_ENABLE after a truncation.
 * The kernel writes PERF_RECORD_AUX and ITRACE_START itself.
 *
 * For cs_etm the metadata comes from sysfs
 * (/sys/bus/event_source/devices/cs_etm/cpuN/{trcidr,mgmt}/...), as perf's
 * arch/arm/util/cs-etm.c reads it.
 *
 * No machine this was developed on has such a PMU: this path is written
 * against the kernel ABI and perf's behaviour but has not run on hardware.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../common/log.h"
#include "../sources/source.h"

struct pmu_buf {
	struct pr_source_buf *sb;
	int fd;
	void *base;
	size_t len;
};

struct pmu_src {
	char name[64];
	int type;
	struct perf_event_attr attr;
	int cpus[PR_SOURCE_MAX_BUFS];
	int nr_cpus;
	int pid;
	struct pmu_buf bufs[PR_SOURCE_MAX_BUFS];
	int nr_bufs;
	bool snapshot;
};

static struct pmu_src *ps(const struct pr_source *s)
{
	return s->priv;
}

static int sysfs_u64(const char *pmu, int cpu, const char *file, uint64_t *v)
{
	char path[256], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/cpu%d/%s", pmu, cpu, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	*v = strtoull(buf, NULL, 0);
	return 0;
}

int pr_pmu_cs_etm_metadata(const char *pmu, const int *cpus, int nr,
			   struct pr_cs_etm_cpu *out)
{
	static const char *const v4[] = { NULL,
					  "mgmt/trctraceid",
					  "trcidr/trcidr0",
					  "trcidr/trcidr1",
					  "trcidr/trcidr2",
					  "trcidr/trcidr8",
					  "mgmt/trcauthstatus",
					  "mgmt/trcdevarch" };
	static const char *const v3[] = { NULL, "traceid", "mgmt/etmccer",
					  "mgmt/etmidr" };

	for (int i = 0; i < nr; i++) {
		struct pr_cs_etm_cpu *c = &out[i];
		uint64_t v;

		memset(c, 0, sizeof(*c));
		c->cpu = (uint32_t)cpus[i];
		if (sysfs_u64(pmu, cpus[i], "trcidr/trcidr0", &v) == 0) {
			/* ETE has TRCDEVARCH.ARCHVER 5 (perf's cs_etm_is_ete) */
			uint64_t arch = 0;

			c->kind = sysfs_u64(pmu, cpus[i], "mgmt/trcdevarch",
					    &arch) == 0 &&
						  ((arch >> 12) & 0xf) >= 5 ?
					  PR_CS_ETE :
					  PR_CS_ETMV4;
			c->nr_regs = pr_cs_etm_nr_params(c->kind);
			for (uint32_t k = 1; k < c->nr_regs; k++)
				if (sysfs_u64(pmu, cpus[i], v4[k], &c->regs[k]))
					return -ENOENT;
			/* TRCCONFIGR as perf derives it from the attr: 0
			 * here (no cycle accurate, no timestamps). */
		} else {
			c->kind = PR_CS_ETMV3;
			c->nr_regs = 4;
			for (uint32_t k = 1; k < 4; k++)
				if (sysfs_u64(pmu, cpus[i], v3[k], &c->regs[k]))
					return -ENOENT;
		}
	}
	return 0;
}

static int pm_event_attr(struct pr_source *s, struct perf_event_attr *attr)
{
	*attr = ps(s)->attr;
	return 0;
}

static int pm_cpus(struct pr_source *s, int *cpus, int max)
{
	struct pmu_src *p = ps(s);
	int n = p->nr_cpus < max ? p->nr_cpus : max;

	memcpy(cpus, p->cpus, (size_t)n * sizeof(int));
	return n;
}

/* The kernel's rings: the recorder asks the source for them. */
static int pm_map(struct pr_source *s, struct pr_source_buf *b,
		  uint64_t data_bytes, uint64_t aux_bytes, bool snapshot)
{
	struct pmu_src *p = ps(s);
	struct pmu_buf *pb;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int fd, ret;

	if (p->nr_bufs == PR_SOURCE_MAX_BUFS)
		return -EINVAL;
	pb = &p->bufs[p->nr_bufs];
	fd = (int)syscall(SYS_perf_event_open, &p->attr, p->pid, b->cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pr_err("%s: perf_event_open on CPU %d: %s", p->name, b->cpu,
		       strerror(-ret));
		return ret;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &b->id) < 0)
		b->id = 0;
	pb->len = page + (size_t)data_bytes;
	pb->base =
		mmap(NULL, pb->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pb->base == MAP_FAILED) {
		ret = -errno;
		pr_err("%s: mmap of the data ring: %s%s", p->name,
		       strerror(-ret),
		       ret == -EPERM ?
			       " (consider /proc/sys/kernel/perf_event_mlock_kb)" :
			       "");
		close(fd);
		return ret;
	}
	ret = perfring_ring_wrap_kernel(pb->base, pb->len, fd, false, &b->ring);
	if (!ret)
		ret = perfring_aux_map_kernel(b->ring, aux_bytes, snapshot,
					      &b->aux);
	if (ret) {
		perfring_ring_destroy(b->ring);
		b->ring = NULL;
		munmap(pb->base, pb->len);
		close(fd);
		return ret;
	}
	pb->sb = b;
	pb->fd = fd;
	p->snapshot = snapshot;
	p->nr_bufs++;
	return 0;
}

static int pm_add(struct pr_source *s, struct pr_source_buf *b)
{
	(void)s;
	(void)b;
	return 0;
}

static int pm_ioctl_all(struct pmu_src *p, unsigned long req)
{
	for (int i = 0; i < p->nr_bufs; i++)
		if (ioctl(p->bufs[i].fd, req, 0) < 0)
			return -errno;
	return 0;
}

static int pm_start(struct pr_source *s)
{
	return pm_ioctl_all(ps(s), PERF_EVENT_IOC_ENABLE);
}

static int pm_stop(struct pr_source *s)
{
	/* The ioctl returns once the event is stopped on its CPU. */
	return pm_ioctl_all(ps(s), PERF_EVENT_IOC_DISABLE);
}

static int pm_read(struct pr_source *s)
{
	(void)s;
	return 0; /* runs until the recorder stops it */
}

static int pm_enable(struct pr_source *s, struct pr_source_buf *b)
{
	(void)s;
	return perfring_aux_enable(b->aux); /* PERF_EVENT_IOC_ENABLE */
}

static void pm_destroy(struct pr_source *s)
{
	struct pmu_src *p = ps(s);

	for (int i = 0; i < p->nr_bufs; i++) {
		struct pmu_buf *pb = &p->bufs[i];

		perfring_aux_destroy(pb->sb->aux);
		perfring_ring_destroy(pb->sb->ring);
		pb->sb->aux = NULL;
		pb->sb->ring = NULL;
		munmap(pb->base, pb->len);
		close(pb->fd);
	}
	free(p);
	free(s);
}

static const struct pr_source_ops pmu_ops = {
	.name = "kernel AUX PMU",
	.event_attr = pm_event_attr,
	.cpus = pm_cpus,
	.map = pm_map,
	.add = pm_add,
	.start = pm_start,
	.stop = pm_stop,
	.read = pm_read,
	.enable = pm_enable,
	.destroy = pm_destroy,
};

int pr_pmu_aux_source_new(const char *pmu, const int *cpus, int nr_cpus,
			  int pid, struct pr_source **out)
{
	struct pr_source *s;
	struct pmu_src *p;
	int type = pr_aux_pmu_type(pmu);

	*out = NULL;
	if (type < 0)
		return type;
	if (nr_cpus < 1 || nr_cpus > PR_SOURCE_MAX_BUFS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	p = calloc(1, sizeof(*p));
	if (!s || !p) {
		free(s);
		free(p);
		return -ENOMEM;
	}
	snprintf(p->name, sizeof(p->name), "%s", pmu);
	p->type = type;
	p->pid = pid;
	p->nr_cpus = nr_cpus;
	memcpy(p->cpus, cpus, (size_t)nr_cpus * sizeof(int));
	p->attr.size = sizeof(p->attr);
	p->attr.type = (uint32_t)type;
	p->attr.sample_period = 1;
	p->attr.sample_type = PERF_SAMPLE_IP | PR_SAMPLE_ID_TYPE |
			      PERF_SAMPLE_PERIOD;
	p->attr.read_format = PERF_FORMAT_ID;
	p->attr.sample_id_all = 1;
	p->attr.disabled = 1;
	p->attr.exclude_kernel = 1;
	p->attr.exclude_hv = 1;
	p->attr.use_clockid = 1;
	p->attr.clockid = 1; /* CLOCK_MONOTONIC */
	s->ops = &pmu_ops;
	s->priv = p;
	*out = s;
	return 0;
}
