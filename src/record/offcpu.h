/* SPDX-License-Identifier: MIT */
/*
 * `perfring record --off-cpu`: where threads wait.  sched:sched_switch
 * (with call chains) and sched:sched_waking, in rings of their own, are
 * read by the recorder and never written as they are: each switch-out of
 * a traced thread and its next switch-in become one block, written as
 * perf's --off-cpu writes it -- a sample of the event "offcpu-time"
 * (PERF_TYPE_SOFTWARE/BPF_OUTPUT) whose period is the time off the CPU in
 * nanoseconds and whose call chain is where it blocked.  A thread that was
 * preempted (still runnable) waits in the run queue: "offcpu-preempted".
 * The thread that woke a block, with its call chain, is an
 * "offcpu-waker" sample.  Blocks shorter than the threshold are summed
 * per thread and stack and written at the end; longer ones keep their
 * own time.  In the BPF mode a program in the kernel does the measuring
 * and summing (src/sources/offcpu_bpf.h) and this writes what it found:
 * the same samples.  docs/design.md, "Off-CPU time".
 */
#ifndef PERFRING_RECORD_OFFCPU_H
#define PERFRING_RECORD_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../format/offcpu_format.h"
#include "../format/perf_data.h"

/* How the blocks are measured: in the kernel by a BPF program that sums
 * the short ones (offcpu_bpf.h), or here from the sched events' rings;
 * AUTO: BPF when the kernel takes the program, else the events. */
enum offcpu_mode { OFFCPU_MODE_AUTO, OFFCPU_MODE_BPF, OFFCPU_MODE_EVENTS };

/* perf's --off-cpu-thresh default: 500 ms */
#define OFFCPU_DEFAULT_THRESH_NS 500000000ull

struct offcpu;

struct offcpu_opts {
	const char *tracefs;
	uint64_t thresh_ns; /* blocks longer keep their own samples */
	/* the call chains: frame pointers, or (dwarf_size) the user stack
	 * and registers for the readers to unwind */
	uint32_t dwarf_size;
	uint64_t dwarf_regs;
	uint16_t max_stack;
	bool user_only, kernel_only;
	int clockid;
	bool inherit, on_exec;
	uint64_t data_bytes; /* per ring */
	enum offcpu_mode mode;
};

/* Writes one whole synthesized record (the recorder's writer, its
 * figures and --max-size).  Returns 0 or -errno. */
typedef int (*offcpu_emit_fn)(void *ctx, const void *rec, size_t size);

int offcpu_new(const struct offcpu_opts *o, struct offcpu **out);
/* The sched events on every (CPU, thread) pair of the recording. */
int offcpu_open(struct offcpu *oc, const int *cpus, int nr_cpus,
		const pid_t *tids, int nr_tids);
/* The three events' attrs into the file (before pd_writer_start()). */
int offcpu_add_attrs(struct offcpu *oc, struct pd_writer *w);
int offcpu_enable(struct offcpu *oc, bool enable);
int offcpu_nr_fds(const struct offcpu *oc);
int offcpu_fd(const struct offcpu *oc, int i);
/*
 * Reads every ring and writes the blocks that ended before the horizon
 * (what a later pass cannot change any more) through @emit; @final: all
 * of them, then the sums of the short ones.  Returns 0 or -errno.
 */
int offcpu_drain(struct offcpu *oc, bool final, offcpu_emit_fn emit, void *ctx);
/* The recorder ended a round: what the source writes from now on must be
 * newer than every record before the round it just ended (perf's
 * FINISHED_ROUND ordering), so its horizon never falls behind the pass
 * that ended it. */
void offcpu_round_done(struct offcpu *oc);
/* --switch-output: the sums so far go into the file being completed. */
int offcpu_flush(struct offcpu *oc, offcpu_emit_fn emit, void *ctx);

struct offcpu_stats {
	uint64_t events; /* sched records read */
	uint64_t blocks; /* blocks (and preemptions) measured */
	uint64_t samples; /* samples written */
	uint64_t lost; /* sched events the kernel dropped */
	uint64_t dropped; /* blocks left out: an event of theirs was lost */
	uint64_t no_stack; /* BPF: stacks the stack maps did not keep */
	uint32_t nr_buffers;
	enum offcpu_mode mode; /* the one running: BPF or EVENTS */
};
void offcpu_stats(const struct offcpu *oc, struct offcpu_stats *st);
void offcpu_close(struct offcpu *oc);

#endif
