// SPDX-License-Identifier: MIT
/*
 * The off-CPU BPF program's loader (offcpu_bpf.h), through libbpf and the
 * skeleton bpftool generated at build time (the object's bytes are in
 * the library: nothing is read from disk when recording).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../ring/barrier.h"
#include "offcpu_bpf.h"
#include "offcpu.skel.h"

#define DEFAULT_MAX_STACK 127 /* the kernel's perf_event_max_stack */

/*
 * The maps' sizes.  Every map is allocated whole when the program loads
 * (the stack maps: entries * max_stack * 8 bytes each), which is most of
 * what loading costs: a command or -p has few threads and stacks, the
 * whole system more.  A stack whose bucket is taken is not kept (counted:
 * the summary's "stacks not kept"); a block with no room in the starts
 * is left out, one with no room in the sums is sent alone.
 */
struct map_sizes {
	uint32_t stacks, starts, sums, traced;
};
static const struct map_sizes process_sizes = { 4096, 8192, 8192, 8192 };
static const struct map_sizes system_sizes = { 16384, 65536, 32768, 1 };

struct offcpu_bpf {
	struct offcpu_skel *skel;
	uint32_t max_stack;
	int nr_cpus;
	uint64_t *scratch; /* a per-CPU value or a stack */
};

/*
 * libbpf's messages: kept (the first warning says why a load failed),
 * never printed.  libbpf has one print function per process: it is ours
 * only while the program loads, the caller's before and after.
 */
static char last_warning[256];

static int keep_warning(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	char line[sizeof(last_warning)];
	size_t n;

	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	if (n && !last_warning[0]) /* the first: the cause */
		memcpy(last_warning, line, n + 1);
	return 0;
}

static int refused(struct offcpu_bpf *b, int err, const char *step, char *why,
		   size_t why_len)
{
	/* no privilege: libbpf's first words are about RLIMIT_MEMLOCK */
	if (why && why_len && err == -EPERM)
		snprintf(
			why, why_len,
			"%s: %s (tracing programs need CAP_BPF and CAP_PERFMON)",
			step, strerror(-err));
	else if (why && why_len)
		snprintf(why, why_len, "%s: %s%s%s", step, strerror(-err),
			 last_warning[0] ? ": " : "", last_warning);
	offcpu_bpf_close(b);
	return err;
}

int offcpu_bpf_open(const struct offcpu_bpf_opts *o, struct offcpu_bpf **out,
		    char *why, size_t why_len)
{
	struct offcpu_bpf *b = calloc(1, sizeof(*b));
	libbpf_print_fn_t before;
	struct offcpu_skel *s;
	int err;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->max_stack = o->max_stack && o->max_stack < DEFAULT_MAX_STACK ?
			       o->max_stack :
			       DEFAULT_MAX_STACK;
	b->nr_cpus = libbpf_num_possible_cpus();
	if (b->nr_cpus <= 0)
		return refused(b, b->nr_cpus ? b->nr_cpus : -EINVAL,
			       "possible CPUs", why, why_len);
	b->scratch = calloc(b->nr_cpus > (int)b->max_stack ?
				    (size_t)b->nr_cpus :
				    b->max_stack,
			    sizeof(uint64_t));
	if (!b->scratch)
		return refused(b, -ENOMEM, "memory", why, why_len);
	last_warning[0] = 0;
	before = libbpf_set_print(keep_warning);
	s = offcpu_skel__open();
	err = s ? 0 : -errno;
	b->skel = s;
	if (!err) {
		s->rodata->thresh_ns = o->thresh_ns;
		s->rodata->system_wide = o->system_wide;
		s->rodata->want_user = o->user;
		s->rodata->want_kernel = o->kernel;
		const struct map_sizes *z = o->system_wide ? &system_sizes :
							     &process_sizes;

		err = bpf_map__set_value_size(s->maps.ustacks,
					      b->max_stack * 8);
		if (!err)
			err = bpf_map__set_max_entries(s->maps.ustacks,
						       z->stacks);
		if (!err)
			err = bpf_map__set_max_entries(s->maps.kstacks,
						       z->stacks);
		if (!err)
			err = bpf_map__set_max_entries(s->maps.starts,
						       z->starts);
		if (!err)
			err = bpf_map__set_max_entries(s->maps.sums, z->sums);
		if (!err)
			err = bpf_map__set_max_entries(s->maps.traced,
						       z->traced);
		if (!err)
			err = bpf_map__set_value_size(s->maps.kstacks,
						      b->max_stack * 8);
		/* system-wide: no one to follow */
		bpf_program__set_autoload(s->progs.offcpu_fork,
					  !o->system_wide && o->follow);
		bpf_program__set_autoload(s->progs.offcpu_exec,
					  !o->system_wide);
		bpf_program__set_autoload(s->progs.offcpu_exit,
					  !o->system_wide);
		if (!err)
			err = offcpu_skel__load(s);
		if (!err)
			err = offcpu_skel__attach(s);
	}
	libbpf_set_print(before);
	if (err)
		return refused(b, err < 0 ? err : -EINVAL,
			       s ? "loading the program" :
				   "opening the program",
			       why, why_len);
	*out = b;
	return 0;
}

int offcpu_bpf_set_output(struct offcpu_bpf *b, int cpu, int fd)
{
	uint32_t key = (uint32_t)cpu;
	int err = bpf_map__update_elem(b->skel->maps.out, &key, sizeof(key),
				       &fd, sizeof(fd), BPF_ANY);

	return err < 0 ? err : 0;
}

int offcpu_bpf_trace(struct offcpu_bpf *b, pid_t tid, bool from_exec)
{
	uint32_t key = (uint32_t)tid;
	uint8_t st = from_exec ? OFFCPU_BPF_ARMED : OFFCPU_BPF_ON;
	int err = bpf_map__update_elem(b->skel->maps.traced, &key, sizeof(key),
				       &st, sizeof(st), BPF_ANY);

	return err < 0 ? err : 0;
}

void offcpu_bpf_enable(struct offcpu_bpf *b, bool enable)
{
	/* the program reads it at its next run (a plain flag: a switch
	 * seen just before or after is as good) */
	WRITE_ONCE(b->skel->bss->enabled, enable ? 1u : 0u);
}

uint32_t offcpu_bpf_max_stack(const struct offcpu_bpf *b)
{
	return b->max_stack;
}

uint32_t offcpu_bpf_stack(struct offcpu_bpf *b, bool user, int32_t id,
			  uint64_t *ips, uint32_t max)
{
	struct bpf_map *m = user ? b->skel->maps.ustacks :
				   b->skel->maps.kstacks;
	uint32_t key = (uint32_t)id, n = 0;

	if (id < 0 || bpf_map__lookup_elem(m, &key, sizeof(key), b->scratch,
					   b->max_stack * 8, 0))
		return 0;
	/* the kernel zeroes what follows the last frame */
	while (n < b->max_stack && n < max && b->scratch[n]) {
		ips[n] = b->scratch[n];
		n++;
	}
	return n;
}

int offcpu_bpf_take_sums(struct offcpu_bpf *b, offcpu_bpf_sum_fn fn, void *ctx)
{
	int fd = bpf_map__fd(b->skel->maps.sums);
	struct offcpu_bpf_key key, next;
	struct offcpu_bpf_sum sum;
	bool first = true;
	int err = 0;

	/* Deleting what was read: get_next_key from a key gone restarts at
	 * the first, which is the next one left. */
	while (!err && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bpf_map_lookup_and_delete_elem(fd, &key, &sum))
			continue; /* gone meanwhile */
		err = fn(ctx, &key, &sum);
	}
	return err;
}

void offcpu_bpf_counters(struct offcpu_bpf *b, uint64_t v[OFFCPU_BPF_NR_STATS])
{
	for (uint32_t i = 0; i < OFFCPU_BPF_NR_STATS; i++) {
		v[i] = 0;
		if (bpf_map__lookup_elem(
			    b->skel->maps.stats, &i, sizeof(i), b->scratch,
			    (size_t)b->nr_cpus * sizeof(uint64_t), 0))
			continue;
		for (int c = 0; c < b->nr_cpus; c++)
			v[i] += b->scratch[c];
	}
}

void offcpu_bpf_close(struct offcpu_bpf *b)
{
	if (!b)
		return;
	offcpu_skel__destroy(b->skel);
	free(b->scratch);
	free(b);
}
