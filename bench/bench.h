/* SPDX-License-Identifier: MIT */
/*
 * What the benchmark cases share: settings, the record every writer
 * builds, the no-loss writer's space check, timing and process helpers.
 * The hot-path helpers are inline here so that each case's loops compile
 * as they did in one file.
 */
#ifndef PERFRING_BENCH_H
#define PERFRING_BENCH_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "perfring/tools.h"

#define REPS 3
/* Ring size: BENCH_RING_KIB overrides (see ring_kib in main()). */
extern unsigned int ring_kib;
#define RING_KIB ring_kib
#define OUT_BUF (64u * 1024) /* the reader's "recorder" (write) buffer */
#define REC_TYPE 0x5000u

extern double run_secs; /* BENCH_SECS */
extern int mp_writer1_cpu; /* BENCH_MP_SPLIT: mpsc2's second writer's CPU */
extern volatile uint64_t sink; /* keeps results the compiler would drop */
extern char **environ;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

_Noreturn void die(const char *what, int err);
void pin(int cpu);
int cmp_double(const void *a, const void *b);

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/*
 * A reader that finds less than a batch waiting backs off for a moment
 * instead of polling data_head: polling steals the cache line the writer
 * stores data_head to on every record (with perf's ABI data_tail lives on
 * that line too), and a reader that keeps up then slows the writer down.
 * A recorder sleeping on a watermark behaves the same way.
 */
#define BATCH_MIN (RING_KIB * 1024u / 16)

static inline void backoff(void)
{
	for (int i = 0; i < 64; i++)
		cpu_relax();
}

/* ---- records ------------------------------------------------------------ */

/* header | timestamp | payload: the writer fills all of it per record. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE void rec_write(unsigned char *p, uint32_t size,
				    uint64_t seq, const unsigned char *tmpl)
{
	struct perf_event_header h = { .type = REC_TYPE,
				       .size = (uint16_t)size };
	uint64_t ts = perfring_clock_fast_ns();

	memcpy(p, &h, 8);
	memcpy(p + 8, &ts, 8);
	if (size == 32) {
		memcpy(p + 16, &seq, 8);
		memcpy(p + 24, tmpl, 8);
	} else {
		memcpy(p + 16, &seq, 8);
		memcpy(p + 24, tmpl, 256 - 24);
	}
}

static const unsigned char tmpl[256] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* The reader's copy-out: into a recorder buffer, as a recorder would. */
struct sink_buf {
	_Alignas(64) unsigned char buf[OUT_BUF + 65536];
	size_t pos;
};

static inline void copy_out(struct sink_buf *s, const void *rec, size_t size)
{
	memcpy(s->buf + s->pos, rec, size);
	s->pos += size;
	if (s->pos >= OUT_BUF)
		s->pos = 0;
}

/* ---- ring helpers -------------------------------------------------------- */

static inline const struct perfring_ext *ring_ext(const struct perfring_ring *r)
{
	return (const struct perfring_ext *)((const char *)
						     perfring_ring_control(r) +
					     PERFRING_EXT_OFFSET);
}

/*
 * A writer that must not lose: perfring_output_begin() counts a record as
 * lost when the ring is full, so the writer checks for space first.  Fast
 * path: its own cached copy of data_tail; only when that says full does it
 * ask perfring_ring_space() (which re-reads data_tail, a line the reader
 * writes) until a record fits.
 */
struct space {
	struct perfring_ring *ring;
	const struct perf_event_mmap_page *pc;
	const uint64_t *reserve; /* MP: the shared reservation head, or NULL */
	uint64_t size, head, tail_cache, retries;
};

void space_init(struct space *s, struct perfring_ring *r);

static inline void space_wait(struct space *s, uint32_t need)
{
	/* MP: other writers reserve too; a stale head could even look
	 * "behind" the tail, so it is reloaded every time. */
	if (s->reserve)
		s->head = __atomic_load_n(s->reserve, __ATOMIC_RELAXED);
	if (s->head + need - s->tail_cache <= s->size)
		return;
	for (;;) {
		int64_t free = perfring_ring_space(s->ring);

		if (free < 0)
			die("perfring_ring_space", (int)free);
		if ((uint64_t)free >= need)
			break;
		/* Full for a while: let whoever holds the CPU we need run
		 * (with more threads than CPUs, a preempted MP writer holding
		 * an uncommitted reservation keeps data_head back). */
		if (++s->retries % 64 == 0)
			sched_yield();
		else
			cpu_relax();
	}
	s->tail_cache = __atomic_load_n(&s->pc->data_tail, __ATOMIC_ACQUIRE);
	if (s->reserve)
		s->head = __atomic_load_n(s->reserve, __ATOMIC_RELAXED);
}

struct perfring_ring *ring_new(unsigned int flags, uint64_t kib,
			       uint64_t watermark, const char *path,
			       enum perfring_role role);

/* Cache-line latency CPU 0 <-> CPU 1 (util.c); a ring-sized memcpy. */
double c2c_ns(void);
double memcpy_gbs(double secs);
double median3(double *v);
double median_of(double *v, int n);
void settle_memory(size_t bytes);
/* The naive pipeline (pipe.c): the floor under app tracing's cases. */
extern double naive_consumer_ns; /* of the last naive_pipe_run() */
int naive_pipe_run(unsigned int threads, uint64_t events, uint64_t size,
		   double *mev_s, double *ns_per_ev);

/* Other programs: the CLI, the test workloads, perf itself (util.c). */
const char *cli_path(void);
char *workload(const char *name, char *buf, size_t len);
int run_measured(char *const argv[], double *cpu_s, double *wall_s);
void best_of_3_walls(char *const ours[], char *const theirs[], double *ours_s,
		     double *theirs_s);
int run_measured_rss(char *const argv[], double *cpu_s, double *wall_s,
		     long *maxrss_kib);
void perf_counts(const char *file, uint64_t *samples, uint64_t *lost);

/* The cases, by area: one line each, "bench <case> key=value ...". */
/* ring.c */
void case_spsc32(void);
void case_spsc256(void);
void case_naive32(void);
void case_naive_abi32(void);
void case_naive256(void);
void case_xproc32(void);
void case_mpsc2(void);
/* emit.c */
void case_emit32(void);
void case_memcpy(void);
void case_wakeup(void);
/* record.c */
void case_record_vs_perf(void);
void case_record_startup(void);
/* script.c */
void case_stats_throughput(void);
void case_script_vs_perf(void);
void case_annotate_vs_perf(void);
int record_sched_switch(char *f);
unsigned long long sample_count(const char *f);
/* convert.c */
void case_ctf_vs_perf(void);
/* app.c */
void case_emit_vs_lttng(void);
void case_app_sustained(void);
void case_app_sustained_z(void);
void case_naive_pipe(void);
/* cs.c */
void case_aux_replay(void);
void case_cs_decode(void);
/* tracefs.c */
void case_tracefs_capture(void);
void case_tracefs_get_reader(void);
/* top.c */
void case_top_overhead(void);
void case_record_push(void); /* push.c */
void case_offcpu_cost(void); /* offcpu.c */

#endif
