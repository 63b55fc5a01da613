/* SPDX-License-Identifier: MIT */
/*
 * The off-CPU source in the kernel (record --off-cpu's BPF mode): an eBPF
 * program on the sched tracepoints (offcpu.bpf.c, embedded at build time)
 * that measures each block of the traced threads, sums the short ones in
 * a map and sends the long ones through bpf-output perf rings the
 * recorder opens.  This is the loader: load, attach, say whom to trace,
 * read the sums and the stacks back.  src/record/offcpu.c writes the
 * samples.  docs/design.md, "Off-CPU time".
 */
#ifndef PERFRING_SOURCES_OFFCPU_BPF_H
#define PERFRING_SOURCES_OFFCPU_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "offcpu_bpf_abi.h"

struct offcpu_bpf;

struct offcpu_bpf_opts {
	uint64_t thresh_ns; /* longer blocks are sent one by one */
	bool system_wide; /* every thread but the idle ones */
	bool follow; /* the traced threads' new threads and children */
	bool user, kernel; /* which stacks */
	uint16_t max_stack; /* frames per stack (0: 127) */
};

/*
 * Loads and attaches the program, disabled.  Returns 0, or -errno when
 * the kernel refuses (no privilege, no BTF, the verifier); @why (of
 * @why_len bytes) then says why in a line.  Nothing is printed.
 */
int offcpu_bpf_open(const struct offcpu_bpf_opts *o, struct offcpu_bpf **out,
		    char *why, size_t why_len);
/* Where the program's long blocks on @cpu go: a bpf-output event's fd. */
int offcpu_bpf_set_output(struct offcpu_bpf *b, int cpu, int fd);
/* Traces @tid (not system-wide): from now, or from its next exec. */
int offcpu_bpf_trace(struct offcpu_bpf *b, pid_t tid, bool from_exec);
void offcpu_bpf_enable(struct offcpu_bpf *b, bool enable);
/* Stack @id's addresses into @ips (at most @max); returns how many (0:
 * none, or an id the map does not hold). */
uint32_t offcpu_bpf_stack(struct offcpu_bpf *b, bool user, int32_t id,
			  uint64_t *ips, uint32_t max);
/* The frames a stack holds at most. */
uint32_t offcpu_bpf_max_stack(const struct offcpu_bpf *b);
/* Takes every sum out of the map (each removed as it is read, so the
 * program's later blocks start new ones) and gives it to @fn; stops at
 * its first error.  Returns 0 or -errno. */
typedef int (*offcpu_bpf_sum_fn)(void *ctx, const struct offcpu_bpf_key *k,
				 const struct offcpu_bpf_sum *s);
int offcpu_bpf_take_sums(struct offcpu_bpf *b, offcpu_bpf_sum_fn fn, void *ctx);
/* The program's counters, summed over the CPUs (OFFCPU_BPF_STAT_*). */
void offcpu_bpf_counters(struct offcpu_bpf *b, uint64_t v[OFFCPU_BPF_NR_STATS]);
void offcpu_bpf_close(struct offcpu_bpf *b);

#endif
