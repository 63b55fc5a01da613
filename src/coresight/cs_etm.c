// SPDX-License-Identifier: MIT
/*
 * CoreSight ETM as an AUX recorder: perf's tools/perf/arch/arm/util/cs-etm.c
 * in the pr_auxtrace_ops shape.  The PERF_RECORD_AUXTRACE_INFO private part
 * it fills is the cs_etm layout (tools/perf/util/cs-etm.h):
 *
 *   priv[0] header version (1 or 2)
 *   priv[1] pmu type << 32 | number of CPU blocks
 *   priv[2] snapshot mode (0/1)
 *   per CPU: magic, cpu, nr_params, then the params:
 *     ETMv3/PTM (0x3030303030303030): ETMCR ETMTRACEIDR ETMCCER ETMIDR
 *     ETMv4     (0x4040404040404040): TRCCONFIGR TRCTRACEIDR TRCIDR0 TRCIDR1
 *                                     TRCIDR2 TRCIDR8 TRCAUTHSTATUS
 *     ETE       (0x5050505050505050): the ETMv4 list, then TRCDEVARCH
 *
 * The parser of that layout (and the independent check in the tests) is
 * src/format/auxtrace.c.  Snapshots: our AUX counters are free-running, so
 * the newest data of a free-running area is simply [head - size, head);
 * perf's cs_etm has to guess the wrap from the buffer contents instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../sources/source.h"

#define CS_MAGIC_V3 0x3030303030303030ULL
#define CS_MAGIC_V4 0x4040404040404040ULL
#define CS_MAGIC_ETE 0x5050505050505050ULL

struct cs_etm_rec {
	struct pr_auxtrace_rec itr;
	struct pr_cs_etm_cpu *cpus;
	uint32_t nr_cpus;
	uint32_t pmu_type;
	uint32_t version;
	bool snapshot;
	uint64_t aux_size;
	uint64_t ref_state;
};

uint32_t pr_cs_etm_nr_params(enum pr_cs_kind kind)
{
	switch (kind) {
	case PR_CS_ETMV3:
		return 4;
	case PR_CS_ETMV4:
		return 7;
	case PR_CS_ETE:
		return 8;
	}
	return 0;
}

static uint64_t magic_of(enum pr_cs_kind kind)
{
	return kind == PR_CS_ETMV3 ? CS_MAGIC_V3 :
	       kind == PR_CS_ETMV4 ? CS_MAGIC_V4 :
				     CS_MAGIC_ETE;
}

static struct cs_etm_rec *rec_of(struct pr_auxtrace_rec *itr)
{
	return itr->priv;
}

static int cs_recording_options(struct pr_auxtrace_rec *itr,
				struct pr_aux_opts *o)
{
	struct cs_etm_rec *c = rec_of(itr);

	/* perf's defaults: 4 MiB of AUX (snapshot: the same, and a
	 * snapshot takes the whole area unless -S size says less). */
	if (!o->aux_bytes)
		o->aux_bytes = 4u << 20;
	if (o->snapshot &&
	    (!o->snapshot_size || o->snapshot_size > o->aux_bytes))
		o->snapshot_size = o->aux_bytes;
	c->snapshot = o->snapshot;
	c->aux_size = o->aux_bytes;
	return 0;
}

static uint32_t cpu_nr_params(const struct pr_cs_etm_cpu *cpu)
{
	uint32_t n = pr_cs_etm_nr_params(cpu->kind);

	return cpu->nr_regs > n ? cpu->nr_regs : n;
}

static size_t cs_info_priv_size(struct pr_auxtrace_rec *itr)
{
	struct cs_etm_rec *c = rec_of(itr);
	size_t n = 3;

	for (uint32_t i = 0; i < c->nr_cpus; i++)
		n += 3 + cpu_nr_params(&c->cpus[i]);
	return n;
}

static int cs_info_fill(struct pr_auxtrace_rec *itr, uint64_t *priv, size_t nr)
{
	struct cs_etm_rec *c = rec_of(itr);
	size_t pos = 3;

	if (nr < cs_info_priv_size(itr))
		return -EINVAL;
	priv[0] = c->version;
	priv[1] = (uint64_t)c->pmu_type << 32 | c->nr_cpus;
	priv[2] = c->snapshot;
	for (uint32_t i = 0; i < c->nr_cpus; i++) {
		const struct pr_cs_etm_cpu *cpu = &c->cpus[i];
		uint32_t n = cpu_nr_params(cpu);

		priv[pos++] = magic_of(cpu->kind);
		priv[pos++] = cpu->cpu;
		priv[pos++] = n;
		for (uint32_t k = 0; k < n; k++)
			priv[pos++] = k < cpu->nr_regs ? cpu->regs[k] : 0;
	}
	return 0;
}

static int cs_find_snapshot(struct pr_auxtrace_rec *itr,
			    struct pr_source_buf *buf, uint64_t *head,
			    uint64_t *old)
{
	uint64_t size = perfring_aux_size(buf->aux);

	(void)itr;
	*old = *head > size ? *head - size : 0;
	return 0;
}

static int cs_snapshot_start(struct pr_auxtrace_rec *itr)
{
	/* As perf: disable the ETM event so the area stops moving. */
	return itr->src->ops->stop(itr->src);
}

static int cs_snapshot_finish(struct pr_auxtrace_rec *itr)
{
	return itr->src->ops->start(itr->src);
}

static uint64_t cs_reference(struct pr_auxtrace_rec *itr)
{
	/* perf uses two rand() halves; an xorshift of our own does. */
	struct cs_etm_rec *c = rec_of(itr);
	uint64_t x = c->ref_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return c->ref_state = x;
}

static int cs_read_finish(struct pr_auxtrace_rec *itr,
			  struct pr_source_buf *buf)
{
	/* perf re-enables the event after each read (auxtrace_record__
	 * read_finish): a truncation disabled it. */
	if (perfring_aux_disabled(buf->aux) && itr->src->ops->enable)
		return itr->src->ops->enable(itr->src, buf);
	return 0;
}

static void cs_free(struct pr_auxtrace_rec *itr)
{
	struct cs_etm_rec *c = rec_of(itr);

	free(c->cpus);
	free(c);
}

static const struct pr_auxtrace_ops cs_etm_ops = {
	.type = 3, /* PERF_AUXTRACE_CS_ETM */
	.alignment = 0,
	.recording_options = cs_recording_options,
	.info_priv_size = cs_info_priv_size,
	.info_fill = cs_info_fill,
	.find_snapshot = cs_find_snapshot,
	.snapshot_start = cs_snapshot_start,
	.snapshot_finish = cs_snapshot_finish,
	.reference = cs_reference,
	.read_finish = cs_read_finish,
	.free = cs_free,
};

int pr_cs_etm_record_new(struct pr_source *src,
			 const struct pr_cs_etm_cpu *cpus, uint32_t nr_cpus,
			 uint32_t pmu_type, uint32_t version,
			 struct pr_auxtrace_rec **out)
{
	struct cs_etm_rec *c;
	struct timespec ts;

	*out = NULL;
	if (!src || !nr_cpus || nr_cpus > 4096 || version < 1 || version > 2)
		return -EINVAL;
	for (uint32_t i = 0; i < nr_cpus; i++)
		if (!pr_cs_etm_nr_params(cpus[i].kind) || cpus[i].nr_regs > 16)
			return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cpus = malloc(nr_cpus * sizeof(*cpus));
	if (!c->cpus) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->cpus, cpus, nr_cpus * sizeof(*cpus));
	c->nr_cpus = nr_cpus;
	c->pmu_type = pmu_type;
	c->version = version;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->ref_state = ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^
			(uint64_t)getpid()) |
		       1;
	c->itr.ops = &cs_etm_ops;
	c->itr.src = src;
	c->itr.priv = c;
	*out = &c->itr;
	return 0;
}

int pr_aux_pmu_type(const char *name)
{
	char path[256], buf[32];
	ssize_t n;
	int fd, v;

	if (!name || strchr(name, '/') || strlen(name) > 64)
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = 0;
	v = atoi(buf);
	return v >= 0 ? v : -ENOENT;
}
