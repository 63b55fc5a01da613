/* SPDX-License-Identifier: MIT */
/*
 * What the off-CPU BPF program (offcpu.bpf.c) and its loader
 * (offcpu_bpf.c) share: the maps' keys and values and the record a long
 * block is sent as.  Both sides are built from this header, so the
 * layouts agree by construction; the loader still checks each record's
 * size before reading it (the perf ring is written by the kernel, but
 * its copy is what the reader trusts).
 */
#ifndef PERFRING_SOURCES_OFFCPU_BPF_ABI_H
#define PERFRING_SOURCES_OFFCPU_BPF_ABI_H

#include <linux/types.h>

/* traced (tid -> state): waiting for exec, or traced */
#define OFFCPU_BPF_ARMED 1
#define OFFCPU_BPF_ON 2

/* kind of a block: blocked (offcpu-time), or preempted and runnable */
#define OFFCPU_BPF_BLOCKED 0
#define OFFCPU_BPF_PREEMPTED 1

/* A stack id that is none: not asked for, or not stored (the stack map
 * was full, or its bucket held another stack). */
#define OFFCPU_BPF_NO_STACK (-1)

/* A thread switched out, until it runs again (starts: tid -> this). */
struct offcpu_bpf_start {
	__u64 time; /* bpf_ktime_get_ns() at the switch-out */
	__u64 wake_time; /* at the wake-up (has_waker) */
	__u32 pid;
	__u32 kind;
	__s32 ustack, kstack;
	__u32 has_waker;
	__u32 waker_pid, waker_tid;
	__s32 waker_cpu;
	__s32 waker_ustack, waker_kstack;
};

/* The sums of short blocks (agg: this -> offcpu_bpf_sum). */
struct offcpu_bpf_key {
	__u32 pid, tid, kind;
	__s32 ustack, kstack;
	__u32 has_waker;
	__u32 waker_pid, waker_tid;
	__s32 waker_ustack, waker_kstack;
};

struct offcpu_bpf_sum {
	__u64 count, total_ns;
};

/* A block longer than the threshold (or one the sums had no room for),
 * as the RAW payload of a bpf-output sample; the sample's time is the
 * switch-in's in the recording's clock, end is the same instant in the
 * program's. */
struct offcpu_bpf_block {
	__u64 start, end, wake_time;
	struct offcpu_bpf_key key;
	__s32 waker_cpu;
	__u32 pad;
};

/* Counters (a per-CPU array, index below). */
enum {
	OFFCPU_BPF_STAT_BLOCKS, /* blocks measured */
	OFFCPU_BPF_STAT_NO_STACK, /* stacks not stored (map full, clash) */
	OFFCPU_BPF_STAT_SUMS_FULL, /* blocks sent alone: no room in agg */
	OFFCPU_BPF_STAT_OUT_LOST, /* long blocks the perf ring refused */
	OFFCPU_BPF_STAT_STARTS_FULL, /* switch-outs not stored */
	OFFCPU_BPF_NR_STATS
};

#endif
