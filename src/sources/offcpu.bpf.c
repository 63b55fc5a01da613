// SPDX-License-Identifier: MIT
/*
 * record --off-cpu in the kernel (offcpu_bpf.h): the sched tracepoints
 * measure each block of a traced thread and sum the short ones by thread,
 * stacks and waker in a hash map the recorder reads at the end; only the
 * long ones (over the threshold) reach the recorder one by one, through
 * a bpf-output perf ring.  Stacks are ids into two stack maps (user and
 * kernel), taken where the thread blocked and where its waker woke it.
 *
 * Tracepoint programs (not raw_tp): their stacks start where perf's
 * sched_switch samples' do (the regs the tracepoint fetched), and
 * prev_state is the tracepoint's own (its preemption bit included), the
 * value the events mode reads: no task_struct field is read at all.  The
 * context structs are CO-RE (preserve_access_index): libbpf moves each
 * field to where the running kernel's BTF puts it.
 *
 * Built with clang -target bpf at make time and embedded in the tools
 * library (a bpftool skeleton); compiled only as BPF, never by $(CC).
 */
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "offcpu_bpf_abi.h"

/* The tracepoints' records, as far as read here (CO-RE relocated). */
struct trace_entry {
	unsigned short type;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_switch {
	struct trace_entry ent;
	int prev_pid;
	long prev_state;
	int next_pid;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_wakeup_template {
	struct trace_entry ent;
	int pid;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_process_fork {
	struct trace_entry ent;
	int parent_pid;
	int child_pid;
} __attribute__((preserve_access_index));

/* prev_state's exiting bits (EXIT_DEAD, EXIT_ZOMBIE as reported) */
#define STATE_DEAD (0x10 | 0x20)
/* The report's state bits: none set is runnable (preempted). */
#define STATE_MASK 0xff

/* Set by the loader before it loads (the verifier sees constants). */
const volatile __u64 thresh_ns = 500000000ull;
const volatile __u32 system_wide;
const volatile __u32 want_user = 1, want_kernel = 1;
/* The recorder's switch: 0 until it enables the recording. */
volatile __u32 enabled;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct offcpu_bpf_start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct offcpu_bpf_key);
	__type(value, struct offcpu_bpf_sum);
} sums SEC(".maps");

/* One type for the user and the kernel stacks; value_size (max_stack * 8)
 * and max_entries are set by the loader. */
struct stack_map {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
};
struct stack_map ustacks SEC(".maps"), kstacks SEC(".maps");

/* a bpf-output event per CPU, opened by the recorder */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_BPF_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += 1; /* per CPU: no other writer */
}

static __always_inline __s32 stack_id(void *ctx, void *map, __u64 flags)
{
	long id = bpf_get_stackid(ctx, map, flags | BPF_F_FAST_STACK_CMP);

	if (id < 0) {
		/* -EFAULT: an empty stack (a kernel thread's user one);
		 * otherwise the map is full or the bucket holds another */
		if (id != -EFAULT)
			count(OFFCPU_BPF_STAT_NO_STACK);
		return OFFCPU_BPF_NO_STACK;
	}
	return (__s32)id;
}

static __always_inline bool is_traced(__u32 tid)
{
	__u8 *st;

	if (!tid)
		return false; /* the idle task */
	if (system_wide)
		return true;
	st = bpf_map_lookup_elem(&traced, &tid);
	return st && *st == OFFCPU_BPF_ON;
}

/* @tid, switched out at s->time, runs again now: summed, or sent alone. */
static __always_inline void block_done(void *ctx, __u32 tid,
				       struct offcpu_bpf_start *s, __u64 now)
{
	struct offcpu_bpf_block b = {};
	struct offcpu_bpf_sum *sum, one;
	__u64 d = now - s->time;

	count(OFFCPU_BPF_STAT_BLOCKS);
	b.key.pid = s->pid;
	b.key.tid = tid;
	b.key.kind = s->kind;
	b.key.ustack = s->ustack;
	b.key.kstack = s->kstack;
	if (s->has_waker) {
		b.key.has_waker = 1;
		b.key.waker_pid = s->waker_pid;
		b.key.waker_tid = s->waker_tid;
		b.key.waker_ustack = s->waker_ustack;
		b.key.waker_kstack = s->waker_kstack;
	}
	if (d <= thresh_ns) {
		sum = bpf_map_lookup_elem(&sums, &b.key);
		if (sum) {
			__sync_fetch_and_add(&sum->count, 1);
			__sync_fetch_and_add(&sum->total_ns, d);
			return;
		}
		one.count = 1;
		one.total_ns = d;
		if (!bpf_map_update_elem(&sums, &b.key, &one, BPF_NOEXIST))
			return;
		/* another CPU added it meanwhile, or the map is full */
		sum = bpf_map_lookup_elem(&sums, &b.key);
		if (sum) {
			__sync_fetch_and_add(&sum->count, 1);
			__sync_fetch_and_add(&sum->total_ns, d);
			return;
		}
		count(OFFCPU_BPF_STAT_SUMS_FULL);
	}
	b.start = s->time;
	b.end = now;
	b.wake_time = s->wake_time;
	b.waker_cpu = s->waker_cpu;
	if (bpf_perf_event_output(ctx, &out, BPF_F_CURRENT_CPU, &b, sizeof(b)))
		count(OFFCPU_BPF_STAT_OUT_LOST);
}

SEC("tp/sched/sched_switch")
int offcpu_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u32 prev = (__u32)ctx->prev_pid, next = (__u32)ctx->next_pid;
	struct offcpu_bpf_start *s;
	__u64 now;

	if (!enabled)
		return 0;
	now = bpf_ktime_get_ns();
	if (is_traced(prev)) {
		long state = ctx->prev_state;

		if (!(state & STATE_DEAD)) {
			struct offcpu_bpf_start n = {};

			n.time = now;
			n.pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
			n.kind = state & STATE_MASK ? OFFCPU_BPF_BLOCKED :
						      OFFCPU_BPF_PREEMPTED;
			n.ustack = want_user ? stack_id(ctx, &ustacks,
							BPF_F_USER_STACK) :
					       OFFCPU_BPF_NO_STACK;
			n.kstack = want_kernel ? stack_id(ctx, &kstacks, 0) :
						 OFFCPU_BPF_NO_STACK;
			if (bpf_map_update_elem(&starts, &prev, &n, BPF_ANY))
				count(OFFCPU_BPF_STAT_STARTS_FULL);
		}
	}
	if (!next)
		return 0;
	s = bpf_map_lookup_elem(&starts, &next);
	if (!s)
		return 0;
	if (now > s->time) {
		struct offcpu_bpf_start copy = *s;

		bpf_map_delete_elem(&starts, &next);
		block_done(ctx, next, &copy, now);
	} else {
		bpf_map_delete_elem(&starts, &next);
	}
	return 0;
}

/* The waker of a blocked (not preempted) traced thread: the last wins. */
SEC("tp/sched/sched_waking")
int offcpu_waking(struct trace_event_raw_sched_wakeup_template *ctx)
{
	__u32 wakee = (__u32)ctx->pid;
	struct offcpu_bpf_start *s;
	__u64 id;

	if (!enabled)
		return 0;
	s = bpf_map_lookup_elem(&starts, &wakee);
	if (!s || s->kind != OFFCPU_BPF_BLOCKED)
		return 0;
	id = bpf_get_current_pid_tgid();
	s->waker_pid = (__u32)(id >> 32);
	s->waker_tid = (__u32)id;
	s->waker_cpu = (__s32)bpf_get_smp_processor_id();
	s->wake_time = bpf_ktime_get_ns();
	s->waker_ustack = want_user ?
				  stack_id(ctx, &ustacks, BPF_F_USER_STACK) :
				  OFFCPU_BPF_NO_STACK;
	s->waker_kstack = want_kernel ? stack_id(ctx, &kstacks, 0) :
					OFFCPU_BPF_NO_STACK;
	s->has_waker = 1;
	return 0;
}

/* A traced task's new threads and children are traced (inherit). */
SEC("tp/sched/sched_process_fork")
int offcpu_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u32 parent = (__u32)bpf_get_current_pid_tgid();
	__u32 child = (__u32)ctx->child_pid;
	__u8 *st = bpf_map_lookup_elem(&traced, &parent);

	if (st)
		bpf_map_update_elem(&traced, &child, st, BPF_ANY);
	return 0;
}

/* The command is traced from its exec on (perf's enable_on_exec). */
SEC("tp/sched/sched_process_exec")
int offcpu_exec(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 *st = bpf_map_lookup_elem(&traced, &tid);

	if (st && *st == OFFCPU_BPF_ARMED)
		*st = OFFCPU_BPF_ON;
	return 0;
}

/* A tid that exits is no longer the traced task's once reused. */
SEC("tp/sched/sched_process_exit")
int offcpu_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&traced, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
