/* SPDX-License-Identifier: MIT */
/*
 * perfring tools: recording (kernel perf events, application sessions,
 * tracefs, AUX trace), the perf.data and trace.dat readers, reports,
 * exports, the CTF/JSON conversion and CoreSight decoding --
 * libperfring-tools (`pkg-config --cflags --libs perfring-tools`), which
 * links libperfring and libtraceevent, libelf, libzstd, OpenCSD, capstone
 * and libbabeltrace-ctf.
 *
 * Same conventions as <perfring.h> (int returns >= 0 or -errno, opaque
 * handles, messages only through perfring_set_log()); a program that only
 * declares and emits events, or reads rings, needs <perfring.h> alone.
 */
#ifndef PERFRING_TOOLS_H
#define PERFRING_TOOLS_H

#include <stdio.h>
#include <perfring.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- output files ----------------------------------------------------- */

#define PERFRING_FILE_KEEP_OLD 0x1u /* an existing file becomes <path>.old */
#define PERFRING_FILE_SEEKABLE 0x2u /* a regular file only, opened O_RDWR */

/*
 * Creates the output file @path the way every perfring output is created:
 * O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600, O_CLOEXEC.  An existing regular
 * file is renamed to "<path>.old" (PERFRING_FILE_KEEP_OLD) or removed
 * first; a symbolic link at @path is refused (-ELOOP) whatever it points
 * to, a directory too (-EISDIR).  An existing FIFO or character device
 * (/dev/null, a named pipe) is opened as it is, unless
 * PERFRING_FILE_SEEKABLE (-ESPIPE) or it belongs to another user than the
 * caller and root (-EPERM).  A process re-creating the path while it is
 * being created only makes the attempt start over (a few times, then
 * -EEXIST).  Returns the descriptor or -errno; the log says why.
 */
PERFRING_API int perfring_file_create(const char *path, unsigned int flags);

/* ---- record ------------------------------------------------------------ */

/* Live figures of a recording, and its summary at the end. */
struct perfring_record_stats {
	size_t sz;
	uint64_t samples; /* PERF_RECORD_SAMPLE records written */
	uint64_t records; /* all records written (synthesized included) */
	uint64_t lost_records; /* PERF_RECORD_LOST records ("chunks") */
	uint64_t lost; /* events the kernel dropped (sum of their counts) */
	uint64_t lost_samples; /* PERF_RECORD_LOST_SAMPLES counts */
	uint64_t bytes; /* bytes written to the file */
	uint64_t wakeups; /* times the loop woke with data */
	uint64_t rounds; /* FINISHED_ROUND records */
	uint64_t snapshots; /* overwrite snapshots taken */
	uint32_t nr_buffers; /* kernel rings */
	int child_status; /* wait status of the command, or -1 */
	/* Application tracing (the command's or -p's session). */
	uint64_t app_events; /* application events written */
	uint64_t app_lost; /* events the programs dropped */
	uint64_t app_corrupt; /* damaged records or ranges skipped */
	uint32_t app_rings; /* application rings drained */
	uint32_t app_event_types; /* distinct application events */
	/*
	 * Application loss, in two kinds a program cannot mix up.  app_lost
	 * above is what the programs *claim* (the sum of their LOST records,
	 * saturating at 2^64-1); app_lost_implausible counts LOST records
	 * claiming more than 2^40 events.  The rest the recorder *measured*:
	 */
	uint64_t app_lost_implausible;
	uint64_t app_corrupt_bytes; /* bytes skipped as damaged */
	uint64_t app_dead_reservations; /* never committed by dead producers
					   of shared rings (1 event each) */
	uint32_t app_rings_dropped; /* truncated under the recorder */
	uint32_t app_rings_refused; /* not attached: not a safe ring file */
	uint64_t app_dropped_bytes; /* what the dropped rings held unread */
	uint32_t app_rings_over_cap; /* never attached: over app_max_rings */
	uint32_t app_rings_no_fd; /* never attached: no descriptor left */
	uint64_t app_unattached_bytes; /* what those held, by their own
					  control pages */
	/* Of app_lost: events larger than a ring record takes
	 * (PERFRING_APP_EVENT_MAX), by the programs' count. */
	uint64_t app_too_large;
	/* max_size reached: the recording stopped; the records read from
	 * the rings that did not fit, and their bytes. */
	bool max_size_hit;
	uint64_t max_size_dropped, max_size_dropped_bytes;
	/* --off-cpu: blocks measured (switch-out to switch-in), samples
	 * written for them (offcpu-time, -preempted, -waker), sched events
	 * the kernel dropped, and blocks left out because an event of
	 * theirs was among them. */
	uint64_t offcpu_blocks, offcpu_samples, offcpu_lost, offcpu_dropped;
	/* --off-cpu: how the blocks were measured (PERFRING_OFF_CPU_BPF
	 * or PERFRING_OFF_CPU_EVENTS), and (BPF) the stacks the kernel's
	 * stack maps did not keep (their blocks have no call chain). */
	int offcpu_mode;
	uint64_t offcpu_no_stack;
};

struct perfring_tracefs_opts;
struct perfring_tracefs_stats;

typedef void (*perfring_progress_fn)(const struct perfring_record_stats *st,
				     void *ctx);

struct perfring_record_aux_opts;
struct perfring_record_aux_stats;
struct perfring_push_opts;
struct perfring_push_stats;

struct perfring_record_opts {
	size_t sz;
	/* -e, as perf parses it: "cpu-clock:u", "sched:sched_sw*",
	 * "{cpu-clock,page-faults}:S", "software/config=2/", "cycles" */
	const char *const *events;
	int nr_events; /* 0: cpu-clock */
	const char *output; /* -o, default "perf.data"; "-": pipe to stdout */
	char *const *argv; /* command to run (NULL-terminated), or NULL */
	bool all_cpus; /* -a */
	const char *cpu_list; /* -C "0,2-3" */
	bool per_thread; /* --per-thread */
	const char *pid_list; /* -p "1,2" */
	const char *tid_list; /* -t "3,4" */
	uint64_t mmap_bytes; /* -m, data bytes per ring (default 512 KiB) */
	uint64_t freq; /* -F, samples/s for sampling events (default 4000) */
	uint64_t period; /* -c, sample period (overrides freq) */
	bool callchain; /* -g */
	bool overwrite; /* --overwrite */
	/* Readable descriptor for commands: 'q' stop, 's' snapshot. */
	int control_fd;
	int cmdline_argc; /* recorded as CMDLINE */
	char *const *cmdline_argv;
	perfring_progress_fn progress; /* called about 4 times a second */
	void *progress_ctx;
	double duration; /* seconds to record without a command (0: until 'q') */
	/* Application tracing is on for a command (a session directory in
	 * its $PERFRING_SESSION) and for -p (the process's session, if it
	 * has one); no_app turns it off. */
	bool no_app;
	/* Most application rings attached at once (0: 4096); the others
	 * wait for a free slot and are reported lost if they get none. */
	uint32_t app_max_rings;
	/*
	 * ftrace events recorded in the same run, on the same clock
	 * (CLOCK_MONOTONIC), from a private tracefs instance's per-CPU
	 * buffers into a trace.dat beside the perf.data (its output; default
	 * "<output>.trace.dat").  Of it, events, output, buffer_bytes,
	 * subbuf_bytes, buffer_percent, no_mmap, tracefs and instance are
	 * used; the command, -a, -C, -p/-t, duration, control and progress
	 * are this recording's.  NULL: none.
	 */
	const struct perfring_tracefs_opts *tracefs;
	/* Its figures (sz set), filled as perfring_record_tracefs() does. */
	struct perfring_tracefs_stats *tracefs_stats;
	/*
	 * AUX area trace recorded in the same run, into the same perf.data
	 * (its attr beside the events', AUXTRACE_INFO, AUXTRACE chunks and
	 * their index), on the same clock: the replay (replay) of an OpenCSD
	 * snapshot directory or a cs_etm perf.data (its records' ids moved
	 * out of the other events' way, their times this run's).  Of it,
	 * replay, rate, loops, chunk,
	 * replay_cpu, aux_bytes, data_bytes and cs_header_version are used;
	 * the output, command, duration, control and progress are this
	 * recording's; snapshot and overwrite are refused (-EINVAL).  The
	 * trace plays from the start of the recording until its input ends
	 * or the recording does.  NULL: none.
	 */
	const struct perfring_record_aux_opts *aux;
	/* Its figures (sz set), filled as perfring_record_aux() does. */
	struct perfring_record_aux_stats *aux_stats;
	/*
	 * --call-graph dwarf[,SIZE] (with callchain): user stack bytes each
	 * sample copies (a multiple of 8, at most 65528), with the user
	 * registers, for the readers to unwind; the kernel callchain keeps
	 * only its kernel part, as perf's.  0: frame pointers (-g).
	 */
	uint32_t callchain_dwarf_size;
	/* --call-graph fp,DEPTH: deepest callchain (0: the kernel's limit) */
	uint16_t callchain_max_stack;
	/* --user-regs: user registers each sample carries (perf_regs.h bits
	 * of x86_64, as perf's sample_regs_user; 0: none) */
	uint64_t user_regs;
	/*
	 * --filter of each events[i] (NULL, or an array of nr_events, NULL
	 * where there is none): a tracepoint filter ("prev_pid > 0") set on
	 * every event of that string (PERF_EVENT_IOC_SET_FILTER).
	 */
	const char *const *filters;
	/* perf record's -D/--delay: milliseconds after the start (after the
	 * command's exec) before the events are enabled; side-band records
	 * (COMM, MMAP, FORK) are recorded from the start, as perf does.
	 * -1: the events start disabled and stay so (perf 6.1 enables them
	 * through --control, which perfring record has not). */
	double delay_ms;
	bool sample_addr; /* -d: PERF_SAMPLE_ADDR (and data mmaps) */
	bool no_inherit; /* --no-inherit: children are not followed */
	/* -k: the clock of the kernel events (clock_gettime() ids); without
	 * it CLOCK_MONOTONIC.  Application and ftrace events are on
	 * CLOCK_MONOTONIC: another clock with them is -EINVAL. */
	bool set_clockid;
	int clockid;
	/* -z: the ring data goes in zstd PERF_RECORD_COMPRESSED records
	 * (HEADER_COMPRESSED), as perf record -z writes them (1..22; 0:
	 * off).  Not with -o - or --overwrite. */
	int compression_level;
	/* --max-size: recording stops once the file holds this many bytes
	 * (0: no limit). */
	uint64_t max_size;
	/* --switch-output: the output is completed and renamed
	 * <output>.<YYYYmmddHHMMSScc> and a new one begun (perf's naming)
	 * on SIGUSR2 (switch_signal), every switch_bytes of data, or every
	 * switch_secs; the last file is renamed too. */
	bool switch_signal;
	uint64_t switch_bytes;
	double switch_secs;
	/* Names of the files written (switch_output); the caller's. */
	void (*switched)(const char *path, void *ctx);
	void *switched_ctx;
	/* -s/--stat: per-thread counts (inherit_stat): each child's values
	 * in a PERF_RECORD_READ when it exits, for perf report -T. */
	bool inherit_stat;
	/* More PERF_SAMPLE_* bits in every event's samples, as perf record's
	 * -R (RAW), -W (WEIGHT), --phys-data (PHYS_ADDR), --data-page-size
	 * and --code-page-size set them. */
	uint64_t sample_bits;
	/* --switch-events: PERF_RECORD_SWITCH (SWITCH_CPU_WIDE with -a/-C)
	 * records, perf's context_switch on the tracking event. */
	bool switch_events;
	/* --user-callchains / --kernel-callchains: the callchains' user or
	 * kernel part only (exclude_callchain_kernel / _user). */
	bool user_callchains, kernel_callchains;
	/* -B/--no-buildid: no HEADER_BUILD_ID table (the readers then use the
	 * objects as they are on disk). */
	bool no_buildid;
	/* --timestamp-filename: the file renamed <output>.<YYYYmmddHHMMSScc>
	 * at the end, perf's name (announced through @switched). */
	bool timestamp_filename;
	/* perf 6.1's -D 10-20,30-40: the events enabled only in these
	 * windows, pairs of (start, end) milliseconds after the start,
	 * ascending; the recording stops when the last ends, as perf's
	 * does.  Not with delay_ms. */
	const double *enable_ranges;
	uint32_t nr_enable_ranges; /* pairs */
	/* perf's --control: with has_control, commands read from ctl_fd
	 * (non-blocking; each ended by a newline, a NUL or the end of what
	 * is there): "enable" and "disable" (the events), "snapshot",
	 * "stop", "ping"; each answered "ack\n" on ack_fd (-1: none).
	 * With delay_ms -1 the events wait for "enable". */
	bool has_control;
	int ctl_fd, ack_fd;
	/*
	 * --push: every push->every seconds the samples of the interval,
	 * symbolized here, go to the stores push->sinks name (see
	 * perfring_push_opts), beside the output (which may be /dev/null:
	 * nothing kept locally).  A store that is down or slow never holds
	 * the recording up.  NULL: none.
	 */
	const struct perfring_push_opts *push;
	struct perfring_push_stats *push_stats; /* its figures (sz set) */
	/*
	 * perf's --off-cpu: every switch-out of a traced thread until it runs
	 * again, with the call chain where it blocked (frame pointers, or as
	 * callchain_dwarf_size says), as samples of "offcpu-time" whose
	 * period is the time off the CPU in ns (perf's bpf-output event);
	 * preemptions (still runnable) as "offcpu-preempted", and the thread
	 * that woke each block, with its call chain, as "offcpu-waker".
	 * Blocks up to off_cpu_thresh_ms (with off_cpu_thresh_set; else
	 * perf's 500 ms) are summed per thread and stack and written at the
	 * end; longer ones keep their own time.  Not with overwrite.
	 */
	bool off_cpu;
	bool off_cpu_thresh_set;
	uint64_t off_cpu_thresh_ms;
	/*
	 * How: PERFRING_OFF_CPU_BPF, an eBPF program measures the blocks and
	 * sums the short ones in the kernel (needs the privilege to load
	 * it, and frame-pointer stacks); PERFRING_OFF_CPU_EVENTS, the
	 * recorder reads every sched_switch and sched_waking with its call
	 * chain.  PERFRING_OFF_CPU_AUTO (0): BPF when the kernel takes the
	 * program, else the events (an info line says why).
	 */
	int off_cpu_mode;
};

#define PERFRING_OFF_CPU_AUTO 0
#define PERFRING_OFF_CPU_BPF 1
#define PERFRING_OFF_CPU_EVENTS 2

/*
 * Records kernel perf events into a perf.data file as perf record does.
 * Returns 0, or -errno (what went wrong is logged); @st (st->sz set) gets
 * the summary either way.  A failed write leaves a file perf opens, holding
 * every complete round.  Application rings are read from programs that may
 * truncate them: call perfring_sigbus_guard() first (the CLI does; without
 * it a warning says that such a program can crash the caller).  Their
 * space is freed only after the round holding their records is written,
 * so a recorder killed in between leaves them for the next one: at least
 * once across a recorder crash.
 */
PERFRING_API int perfring_record(const struct perfring_record_opts *opts,
				 struct perfring_record_stats *st);

/* ---- push: continuous profiling into stores ---------------------------- */

#define PERFRING_PUSH_MAX_SINKS 8

struct perfring_push_opts {
	size_t sz;
	/*
	 * "clickhouse=http://HOST:PORT" (rows into perfring.samples, created
	 * if missing), "pyroscope=http://HOST:PORT" (POST /ingest, pprof),
	 * "parca=http://HOST:PORT" (ProfileStoreService/WriteRaw over the
	 * Connect protocol, pprof); http only, user:password@ for basic
	 * authentication.  At most PERFRING_PUSH_MAX_SINKS.
	 */
	const char *const *sinks;
	int nr_sinks;
	double every; /* seconds per interval (0: 10) */
	/* "KEY=VALUE" on every interval; host=NAME names the host (default
	 * the machine's name), service=NAME the application (Pyroscope's
	 * name) */
	const char *const *labels;
	int nr_labels;
	/* Intervals wait here (one directory per sink) until delivered;
	 * perfring_push() delivers what a recording left.  NULL: in
	 * memory. */
	const char *spool;
	/* What waits per sink at most, on disk or in memory; the oldest
	 * interval is dropped (and counted) past it (0: 256 MiB on disk,
	 * 64 MiB in memory). */
	uint64_t spool_bytes;
	double timeout; /* seconds per request (0: 10) */
};

struct perfring_push_sink_stats {
	char name[128]; /* "clickhouse=http://127.0.0.1:8123" */
	uint64_t intervals; /* queued for this sink */
	uint64_t sent; /* requests delivered */
	uint64_t sent_bytes; /* their bodies' bytes */
	uint64_t failures; /* attempts that failed (retried) */
	uint64_t dropped; /* intervals dropped: the spool full, or (no
			     spool) undelivered at the end */
	uint64_t pending; /* left in the spool at the end */
	int last_status; /* the last HTTP status (0: none) */
	char last_error[160]; /* the last failure, "" if none */
};

struct perfring_push_stats {
	size_t sz;
	uint64_t intervals; /* intervals ended */
	uint64_t samples; /* samples in them */
	uint64_t bad_samples; /* not decodable, skipped */
	uint64_t resets; /* thread and object tables rebuilt (-a, days) */
	uint32_t nr_sinks;
	struct perfring_push_sink_stats sink[PERFRING_PUSH_MAX_SINKS];
};

/*
 * perfring push --spool DIR SINK=URL: delivers what recordings left in
 * opts->spool for the sinks' kinds (every directory of that kind: a
 * recording's clickhouse spool goes to any clickhouse), oldest first, each
 * file removed once its store took it.  Stops at a sink's first failure
 * (the rest stays).  Returns 0 when nothing is left, -EAGAIN when
 * something is (@st says what), or -errno.
 */
PERFRING_API int perfring_push(const struct perfring_push_opts *opts,
			       struct perfring_push_stats *st);

/* ---- top: a live hot-symbol table ------------------------------------ */

/* One of an entry's call chains: callee first, frames[0] the sampled
 * function itself; period is the entry's period through this chain. */
struct perfring_top_chain {
	uint64_t period;
	const struct perfring_frame *frames;
	uint32_t nr_frames;
};

/*
 * One row of a top table.  Only the sort keys tell entries apart: a
 * field that is no key holds its first sample's value.
 */
struct perfring_top_entry {
	const char *comm;
	int32_t pid;
	const char *dso; /* as the table prints it: "[kernel]", a short name,
			    "[unknown]" (no map) */
	const char *sym; /* NULL: no symbol holds addr, or pending */
	uint64_t addr; /* map-relative (the raw ip without a map) */
	bool kernel;
	bool pending; /* the object's symbols are not loaded yet: one row */
	uint64_t period, nr_samples; /* decayed as the table's */
	const struct perfring_top_chain *chains; /* -g: the hottest kept */
	uint32_t nr_chains;
};

/* What a perfring_top_table_fn gets: one event's table at a refresh;
 * everything it points at is valid until the callback returns. */
struct perfring_top_table {
	size_t sz;
	uint32_t event, nr_events; /* its index in -e order, of how many */
	const char *event_name;
	uint64_t freq, period; /* its sampling: freq Hz, or every period */
	const char *sort; /* the sort keys, "dso,sym" */
	uint64_t samples_total; /* samples read since the start */
	uint64_t samples, kernel_samples; /* since the last refresh */
	uint64_t lost, lost_total; /* this interval's, all (first event) */
	double rate; /* samples a second since the last refresh */
	uint64_t total_period; /* the entries' (decayed) periods summed */
	const struct perfring_top_entry *entries; /* hottest first */
	uint32_t nr_entries;
};

typedef int (*perfring_top_table_fn)(const struct perfring_top_table *table,
				     void *ctx);

struct perfring_top_opts {
	size_t sz;
	const char *const *events; /* -e, "cpu-clock" (default) */
	int nr_events;
	bool all_cpus; /* -a; also what no -C/-p/-t means, as in perf top */
	const char *cpu_list; /* -C "0,2-3" */
	const char *pid_list; /* -p "1,2": these processes (and children) */
	const char *tid_list; /* -t "3,4" */
	uint64_t mmap_bytes; /* -m, data bytes per ring (default 512 KiB) */
	uint64_t freq; /* -F, samples/s (default 4000, as perf top) */
	uint64_t period; /* -c, sample period (overrides freq) */
	bool callchain; /* -g: call chains under the entries */
	const char *sort; /* -s "dso,sym" (default); comm, pid, dso, sym */
	double delay; /* -d, seconds between refreshes (0: 1) */
	uint64_t iterations; /* stop after this many refreshes (0: never) */
	int control_fd; /* readable: 'q' or EOF stops (-1: none) */
	bool clear; /* clear the screen before each refresh (a terminal) */
	unsigned int entries; /* -E, rows per table (0: 20) */
	bool zero; /* -z: each refresh shows its interval only (no decay) */
	bool hide_kernel; /* -K: kernel samples left out of the table */
	bool hide_user; /* -U: user samples left out of the table */
	bool show_nr_samples; /* -n: a Samples column */
	/*
	 * Instead of printing to @out (which may then be NULL): at each
	 * refresh on_table gets every event's whole table, before it decays
	 * (perfring top's browser).  A negative return stops perfring_top()
	 * with that error, a positive one with 0.  Called on the thread that
	 * runs perfring_top().
	 */
	perfring_top_table_fn on_table;
	void *ctx;
};

struct perfring_top_stats {
	size_t sz;
	uint64_t refreshes; /* tables printed */
	uint64_t samples; /* samples read from the rings */
	uint64_t lost; /* events the kernel dropped */
	uint64_t wakeups; /* times the loop woke with data */
	uint32_t nr_buffers; /* kernel rings */
};

/*
 * perf top --stdio: samples the events system-wide (or of -C/-p/-t) and
 * every opts->delay seconds prints to @out, per event, a header line
 * ("PerfTop: N irqs/sec kernel:P% lost: L/T [...]") and the table of the
 * hottest entries by the sort keys (Overhead first), read straight from
 * the kernel rings, no file written.  Kernel symbols come from
 * /proc/kallsyms, user ones from the ELF files the processes map (their
 * maps read from /proc at the start, then the kernel's MMAP2 records).
 * After each refresh every count decays to 7/8, as perf top's do (zero:
 * cleared instead).  Runs until 'q' (or EOF) on opts->control_fd, or
 * opts->iterations refreshes; returns 0 then, or -errno (logged; a write
 * error on @out returns its error, -EPIPE for a closed pipe).  @st (st->sz
 * set, may be NULL) gets the figures.
 */
PERFRING_API int perfring_top(const struct perfring_top_opts *opts, FILE *out,
			      struct perfring_top_stats *st);

/* ---- AUX area recording (hardware trace, replayed trace) --------------- */

struct perfring_record_aux_stats {
	size_t sz;
	uint64_t aux_bytes; /* AUX trace written (AUXTRACE payloads) */
	uint64_t aux_chunks; /* PERF_RECORD_AUXTRACE records */
	uint64_t aux_records; /* PERF_RECORD_AUX the sources wrote */
	uint64_t truncated; /* ... flagged TRUNCATED */
	uint64_t lost_bytes; /* trace the sources could not store */
	uint64_t played; /* bytes a replay source played */
	uint64_t records; /* data ring records written */
	uint64_t bytes; /* bytes written to the file */
	uint64_t wakeups;
	uint64_t snapshots;
	uint64_t enables; /* re-enables after a truncation */
	uint32_t nr_buffers; /* ring + AUX pairs */
	double seconds; /* recording time */
};

typedef void (*perfring_aux_progress_fn)(
	const struct perfring_record_aux_stats *st, void *ctx);

struct perfring_record_aux_opts {
	size_t sz;
	/* --replay-cs: an OpenCSD snapshot directory or a perf.data with
	 * cs_etm AUX trace, played through our AUX areas. */
	const char *replay;
	/* -e of an AUX PMU ("cs_etm//", "intel_pt//", "arm_spe//"): needs
	 * that PMU in /sys/bus/event_source/devices (-ENODEV otherwise). */
	const char *event;
	const char *output; /* -o, default "perf.data" */
	uint64_t rate; /* replay bytes/s (0: as fast as it drains, no loss) */
	uint64_t loops; /* replay the input this many times (0: once) */
	uint64_t chunk; /* replay bytes per PERF_RECORD_AUX (0: 4 KiB) */
	int replay_cpu; /* snapshot replay: the CPU whose area gets it (-1) */
	uint64_t aux_bytes; /* AUX area per ring (0: 4 MiB) */
	uint64_t data_bytes; /* data ring per ring (0: 512 KiB) */
	bool snapshot; /* -S: free-running AUX, snapshots on 's'/SIGUSR2 */
	uint64_t snapshot_size; /* bytes per snapshot per ring (0: area) */
	bool snapshot_on_exit; /* --snapshot=e */
	bool overwrite; /* --overwrite: data rings too, read on snapshots */
	int cs_header_version; /* AUXTRACE_INFO header: 1 (default), 2 */
	int control_fd; /* 'q' stop, 's' snapshot (-1: none) */
	double duration; /* seconds (0: until the input ends or 'q') */
	int cmdline_argc;
	char *const *cmdline_argv;
	perfring_aux_progress_fn progress; /* about 4 times a second */
	void *progress_ctx;
};

/*
 * Records AUX area trace into a perf.data file as perf record does for
 * cs_etm: PERF_RECORD_AUXTRACE_INFO (cs_etm metadata), the sources'
 * PERF_RECORD_AUX/ITRACE_START and side-band records, and the AUX data as
 * PERF_RECORD_AUXTRACE chunks with the HEADER_AUXTRACE index.  Returns 0
 * or -errno (logged); @st (st->sz set) gets the summary.
 */
PERFRING_API int
perfring_record_aux(const struct perfring_record_aux_opts *opts,
		    struct perfring_record_aux_stats *st);

typedef void (*perfring_event_fn)(const char *name, const char *kind,
				  void *ctx);

/* Calls @fn for every event perfring record knows, with its kind as
 * perf list names it ("Software event", "Tracepoint event", ...); a
 * hardware event this machine refuses has the kind PERFRING_KIND_REFUSED
 * appended ("Hardware event, not supported here").  Returns the count of
 * the events the machine opens, or -errno. */
#define PERFRING_KIND_REFUSED ", not supported here"
PERFRING_API int perfring_event_list(perfring_event_fn fn, void *ctx);

/* ---- reading ----------------------------------------------------------- */

/*
 * Prints every record of the perf.data at @path ("-": standard input, pipe
 * format) to @out with its offset, size, type and decoded fields, like
 * `perf report -D`.  Returns 0 or -errno: -EPROTO for a byte order or
 * version this reader does not know, -EBADMSG for a damaged file (what
 * could be read before the damage is printed; the log says where).
 */
PERFRING_API int perfring_dump(const char *path, FILE *out);

struct perfring_dump_opts {
	size_t sz;
	const char *input; /* default "perf.data"; "-": standard input */
	/* perf report -D's raw block before each record ("0x108@file
	 * [0x50]: event: 69" and the bytes, 16 a line, as perf prints them),
	 * so the two dumps' blocks can be diffed; the decoded lines stay in
	 * file order (perf prints samples' after sorting them by time). */
	bool hex;
};

/* perfring_dump() with options.  Returns as perfring_dump(). */
PERFRING_API int perfring_dump_opts(const struct perfring_dump_opts *opts,
				    FILE *out);

/*
 * Prints the record counts per type and the samples per event, like
 * `perf report --stats`, and the lost events and lost samples.  Returns as
 * perfring_dump().
 */
PERFRING_API int perfring_stats(const char *path, FILE *out);

/* ---- script / report ---------------------------------------------------- */

struct perfring_script_opts {
	size_t sz;
	const char *input; /* -i: default "perf.data"; "-": pipe format, stdin */
	/*
	 * -F as perf script takes it: "comm,tid,time,ip,sym" (replaces the
	 * defaults of every event type), "trace:comm,cpu,trace" (one type:
	 * hw, sw, trace, raw, break), "+period,-dso" (edits the defaults).
	 * Fields: comm pid tid cpu time event period ip sym symoff dso addr
	 * trace.  Several specs (perf's repeated -F) are joined with ';'.
	 * NULL: perf's defaults.
	 */
	const char *fields;
	bool hide_callchain; /* -G: no callchains */
	bool ns; /* --ns: times with nanoseconds */
	/* Format every tracepoint with libtraceevent itself instead of the
	 * compiled formats (same text; for tests). */
	bool slow_tracepoints;
	/*
	 * A trace.dat of the same run (perfring record --tracefs-event writes
	 * "<output>.trace.dat"): its events, each line as
	 * perfring_trace_dat_script() prints it, are merged in by time
	 * between the samples (both files are read once, in step).  A
	 * damaged trace.dat: its readable events are printed and -EBADMSG
	 * returned.  NULL: none.
	 */
	const char *trace_dat;
	/*
	 * perf script's filters: samples of these processes, threads (the
	 * thread's pid/tid, "1,2"), thread names ("bash,sh"), CPUs ("0-3,8"),
	 * time range ("start,end" in seconds, either side empty), symbols
	 * ("main,0x401000": the name or the symbol's start address; samples
	 * without a symbol are left out).  NULL: no filter.
	 */
	const char *pid_list, *tid_list, *comm_list, *cpu_list;
	const char *time_range, *symbols;
	bool reltime; /* --reltime: times from the first one printed */
	bool deltatime; /* --deltatime: times from the one before */
	/* --show-task-events (COMM, FORK, EXIT) and --show-mmap-events
	 * (MMAP, MMAP2) lines among the samples, as perf prints them. */
	bool show_task_events, show_mmap_events;
	/* --symfs: the root under which the objects and their debug files
	 * are looked up, as perf's --symfs (NULL: /). */
	const char *symfs;
	/*
	 * --header: perf's "# ========" block before the samples (the
	 * file's header and every feature section, as perf 6.1 prints
	 * them); --header-only: that block alone.  show_info (-I): the
	 * topology sections in full.
	 */
	bool header, header_only, show_info;
	/* --no-inline: no inlined functions in the callchains.  By default,
	 * as perf 6.1, each --call-graph dwarf frame is preceded by the
	 * functions inlined at its address (libdw reads them from the
	 * object's DWARF), printed "name+0x.. (inlined)". */
	bool no_inline;
	/*
	 * perf script's --show-*-events: the side-band records of each kind
	 * printed among the samples as perf 6.1 prints them (the sample's
	 * comm, tid, cpu and time, then "PERF_RECORD_..." and its fields):
	 * LOST (--show-lost-events), SWITCH and SWITCH_CPU_WIDE
	 * (--show-switch-events), NAMESPACES, CGROUP, KSYMBOL and BPF_EVENT
	 * (--show-bpf-events), KSYMBOL and TEXT_POKE
	 * (--show-text-poke-events).  show_round_events: the records in file
	 * order (perf then does not sort by time), each FINISHED_ROUND
	 * printed as a line of its own.
	 */
	bool show_lost_events, show_switch_events, show_round_events;
	bool show_namespace_events, show_cgroup_events;
	bool show_bpf_events, show_text_poke_events;
	/*
	 * --max-stack N (set_max_stack true): at most N entries of each
	 * callchain, the --call-graph dwarf frames too (perf's default: 127).
	 * --stop-bt "a,b": a callchain ends after its first entry in one of
	 * these functions.  --dsos "libc.so.6,[kernel.kallsyms]": only the
	 * samples whose ip is in one of these objects (basename or path).
	 */
	bool set_max_stack;
	unsigned max_stack;
	const char *stop_bt, *dsos;
	/* --full-source-path: -F srcline with the file's full path */
	bool full_source_path;
	/* --no-demangle: C++ symbols by their mangled names */
	bool no_demangle;
};

/*
 * Prints the samples of a perf.data to @out as perf script does: one line
 * per sample (comm, tid, cpu, time, period, event, ip, symbol+offset and
 * object), callchains below it, tracepoint fields decoded from the file's
 * TRACING_DATA.  Returns 0 or -errno (the log says what); a write error on
 * @out (EPIPE) stops it with that error.
 */
PERFRING_API int perfring_script(const struct perfring_script_opts *opts,
				 FILE *out);

/* ---- samples, one at a time (perf script -s for C and Python) ---------- */

/* One callchain entry (or the sample's own ip), resolved. */
struct perfring_frame {
	uint64_t ip; /* as recorded */
	uint64_t addr; /* in the object: what perf script prints for a user
			  entry (== ip for the kernel and unmapped ones) */
	const char *sym; /* symbol name, NULL: unknown */
	uint64_t sym_off; /* ip - symbol start */
	const char *dso; /* object path ("[kernel.kallsyms]"), NULL: no map */
	bool kernel;
};

/*
 * A decoded sample handed to a perfring_sample_fn; everything it points at
 * is valid until the callback returns.  Fields the event does not sample
 * are zero (pid/tid -1).  sz says how far the struct the library fills
 * reaches (new fields are added at the end).
 */
struct perfring_sample {
	size_t sz;
	const char *event; /* "cpu-clock", "sched:sched_switch" */
	uint32_t event_index; /* the event's position in the file */
	uint32_t type; /* perf_event_attr type and config */
	uint64_t config;
	uint64_t id, time, period, addr;
	int32_t pid, tid;
	uint32_t cpu;
	const char *comm; /* the thread's name at the sample */
	struct perfring_frame ip; /* sample ip, resolved */
	const struct perfring_frame *callchain; /* callee first, context */
	uint32_t nr_callchain; /* markers left out; at most 127 */
	const void *raw; /* tracepoint record (PERF_SAMPLE_RAW) */
	uint32_t raw_size;
	uint16_t misc; /* header misc: cpumode */
};

/* A perf.data read sample by sample (perf script -s for C and Python). */
struct perfring_data;

/*
 * Returns 0 to go on, or a nonzero value that stops perfring_data_run()
 * and is returned by it.
 */
typedef int (*perfring_sample_fn)(struct perfring_data *r,
				  const struct perfring_sample *s, void *ctx);

/*
 * Opens opts->input for perfring_data_run().  Of the script opts,
 * input, hide_callchain (no callchain resolved) and the filters
 * (pid_list, tid_list, comm_list, cpu_list, time_range, symbols) are
 * used.  Returns 0 and *@out, or -errno (logged).
 */
PERFRING_API int perfring_data_open(const struct perfring_script_opts *opts,
				    struct perfring_data **out);

/*
 * Reads the file in time order (as perf script does: the same decoder and
 * resolution as perfring_script()) and calls @fn for every sample that
 * passes the filters.  Once per reader.  Returns 0, @fn's nonzero value,
 * or -errno (-EBADMSG: damaged; the samples before it were handed over).
 */
PERFRING_API int perfring_data_run(struct perfring_data *r,
				   perfring_sample_fn fn, void *ctx);

/*
 * The tracepoint field @name of @s (inside its callback) as a number
 * (returns 0, *@num set) or as text (char arrays and __data_loc strings:
 * returns 1, up to @len - 1 bytes NUL-terminated into @buf).  -ENOENT:
 * no such field or not a tracepoint; -EBADMSG: the record is too short
 * for it.
 */
PERFRING_API int perfring_data_field(struct perfring_data *r,
				     const struct perfring_sample *s,
				     const char *name, uint64_t *num, char *buf,
				     size_t len);

PERFRING_API void perfring_data_close(struct perfring_data *r);

struct perfring_report_opts {
	size_t sz;
	const char *input; /* -i: default "perf.data"; "-": pipe format, stdin */
	const char *sort; /* --sort "comm,dso,sym" (default); also pid, cpu,
			     trace, srcline, srcfile */
	bool children; /* --children: the default with callchains (as perf) */
	bool no_children; /* --no-children: self only */
	bool no_callgraph; /* -g none: no call graphs under the entries */
	bool show_nr_samples; /* -n: a Samples column */
	double percent_limit; /* hide entries below this percentage */
	const char *symfs; /* --symfs, as perfring_script_opts' */
	/*
	 * perf report's filters: only samples of these thread names
	 * ("bash,sh"), objects ("libc.so.6,[kernel.kallsyms]": short or full
	 * name) and symbols ("main,0x401000"), judged on the sample's own ip;
	 * the others still count in the event's total (percentages stay
	 * absolute).  A list of one hides its column ("# comm: bash" in the
	 * header).  NULL: no filter.
	 */
	const char *comm_list, *dso_list, *symbols;
	/* -g caller|callee: call graphs from the outermost caller down (1)
	 * or from the sample up (2); 0: perf's default (caller with the
	 * Children column, callee without). */
	int callchain_order;
	/* -g graph,N: branches under N% of the event hidden (0: 0.5) */
	double graph_min_percent;
	/*
	 * Event groups ({a,b} of -e): 0 shows the file's groups
	 * (HEADER_GROUP_DESC) side by side, one Overhead column per member,
	 * as perf report does by default; 1 (--group) also puts every event
	 * of a file without groups into one; -1 (--no-group) shows each
	 * event alone.
	 */
	int group;
	/* --header, --header-only, -I: as perfring_script_opts'; the block
	 * replaces the report's first line. */
	bool header, header_only, show_info;
	/* -T: after the table, perf's per-thread counters: PERF_RECORD_READ
	 * values (record -s) summed per thread and event. */
	bool show_threads;
	/* --no-inline: no inlined functions in the call graphs of DWARF
	 * unwound samples (perf shows them by default, as script does) */
	bool no_inline;
	/*
	 * perf report's sample filters: only samples of these processes
	 * and threads ("12,34"; the others count in the totals, as
	 * comm_list's), on these CPUs ("0-3,8") and in this time range
	 * ("start,end" in seconds, either side empty; "10%/2" the second
	 * tenth, "0%-10%,30%-40%": perf's percent forms); samples off the
	 * CPUs or out of the time are not counted at all.  NULL: all.
	 */
	const char *pid_list, *tid_list, *cpu_list, *time_range;
	bool quiet; /* -q: the entries alone, no header lines */
	bool hide_unresolved; /* -U: samples (and chain entries) with no
				 symbol left out */
	bool show_total_period; /* a Period column */
	/* -t: columns separated by this text, not padded with spaces */
	const char *field_sep;
	/* --max-stack: callchain entries used per sample (has_max_stack
	 * false: perf's 127) */
	unsigned int max_stack;
	bool has_max_stack;
	/* --stats: record counts per type and event (perf report
	 * --stats); --tasks: the threads as a process tree (perf report
	 * --tasks); --mmaps: the tree with each thread's maps (perf report
	 * --mmaps); instead of the table */
	bool stats, tasks, mmaps;
	/* -F: "overhead[,sample][,period][,keys]": the Overhead (Self)
	 * column with these beside it and the keys as sort order */
	const char *fields;
	/*
	 * --from clickhouse=URL: the samples a fleet pushed (record --push),
	 * read from the store instead of a file, those of --where's SQL
	 * condition on perfring.samples (time_ns, host, pid, comm, event,
	 * labels...; NULL: all).  The table is the self overhead of the
	 * leaf frames, keyed by sort (comm, pid, dso, sym, host); -n,
	 * -q, percent_limit and field_sep apply.
	 */
	const char *from;
	const char *where;
};

/*
 * Prints an overhead table to @out as perf report --stdio does: per event,
 * samples grouped by the sort keys with their share of the period, the
 * callchain's Children/Self and call graphs when the samples have them.
 * Returns 0 or -errno.
 */
PERFRING_API int perfring_report(const struct perfring_report_opts *opts,
				 FILE *out);

/* ---- annotate, diff, the report browser ------------------------------ */

struct perfring_annotate_opts {
	size_t sz;
	const char *input; /* -i: default "perf.data" */
	/* the symbol to annotate (its name as report shows it); NULL: every
	 * symbol with samples, hottest first */
	const char *symbol;
	const char *symfs; /* --symfs, as perfring_script_opts' */
	bool no_source; /* --no-source: instructions only */
	/* only the samples of this event (its name); NULL: every event */
	const char *event;
};

/*
 * perf annotate --stdio: per event and symbol with samples, a header
 * ("Percent | Source code & Disassembly of OBJ for EVENT (N samples,
 * percent: local period)"), then each instruction of the symbol as
 * "PERCENT : ADDRESS:   INSTRUCTION" (its share of the symbol's period,
 * AT&T syntax as objdump prints it, branch targets as "ADDR <sym+0xOFF>")
 * with the source lines (libdw) interleaved as "         : LINE   TEXT".
 * The code is read from the object with the recorded build-id, or
 * perf's build-id cache copy; symbols from its debug file when it is
 * stripped.  Returns 0, -ENOENT (no samples in @opts->symbol, or no
 * object code for it: logged) or -errno.
 */
PERFRING_API int perfring_annotate(const struct perfring_annotate_opts *opts,
				   FILE *out);

struct perfring_diff_opts {
	size_t sz;
	const char *baseline; /* default "perf.data.old" */
	const char *input; /* default "perf.data" */
	/* -c: "delta-abs" (default, perf 6.1's), "delta", "ratio",
	 * "wdiff:W1,W2" */
	const char *compute;
	const char *sort; /* -s: "dso,sym" (default); also comm, pid, sym */
	const char *symfs;
	double percent_limit; /* rows whose baseline and new shares are both
				 below this percentage hidden */
};

/*
 * perf diff: per event (matched by name), the entries of @opts->baseline
 * and @opts->input grouped by the sort keys, as "Baseline" (the share of
 * the baseline's period) and "Delta" (new share minus baseline share;
 * "Ratio", "Weighted diff" with -c), perf diff's rows, order and format.
 * Returns 0 or -errno.
 */
PERFRING_API int perfring_diff(const struct perfring_diff_opts *opts,
			       FILE *out);

/*
 * A differential flame graph as SVG (export -f svg --diff OLD NEW): the
 * stacks of @opts->input drawn as a flame graph, each frame coloured by
 * the change of its share from @opts->baseline's (red grew, blue shrank,
 * white the same; full colour at 5 points), its tooltip both shares.  Of
 * the opts, baseline and input are used.  Returns 0 or -errno.
 */
PERFRING_API int perfring_diff_svg(const struct perfring_diff_opts *opts,
				   FILE *out);

/*
 * Progress of the readers (report, script, annotate, diff, ...): @fn is
 * called while a perf.data's records are read, at most every 100 ms and
 * once when they are all read (@done == @total), with the bytes of the
 * data section read so far; not for a pipe.  Process-wide, as
 * perfring_set_log(); NULL turns it off.  @fn must not call the library.
 */
typedef void (*perfring_read_progress_fn)(const char *path, uint64_t done,
					  uint64_t total, void *ctx);
PERFRING_API void perfring_set_read_progress(perfring_read_progress_fn fn,
					     void *ctx);

/* ---- export ------------------------------------------------------------ */

struct perfring_export_opts {
	size_t sz;
	const char *input; /* -i: default "perf.data"; "-": pipe format, stdin */
	/*
	 * "chrome" (default): Chrome trace-event JSON for Perfetto and
	 * chrome://tracing; "folded": collapsed stacks ("comm;outer;inner N"
	 * per line) for flame graph tools; "svg": a flame graph; "pprof": a
	 * gzip-compressed pprof profile (go tool pprof, Pyroscope, Parca).
	 */
	const char *format;
	const char *title; /* svg heading, chrome otherData.title */
	unsigned int width; /* svg: image width in pixels (0: 1200) */
	/*
	 * chrome: a trace.dat whose ftrace events join the perf.data's on
	 * one timeline (record --tracefs-event writes <perf.data>.trace.dat
	 * on the same clock): each an instant on its thread's track with
	 * its fields as args; its sched_switch makes the slices when the
	 * perf.data has none.  NULL: none.  An @input that is a trace.dat
	 * is exported alone.  Other formats refuse a trace.dat (-EINVAL).
	 */
	const char *trace_dat;
	/* --from clickhouse=URL, --where SQL: as perfring_report_opts';
	 * folded, svg and pprof (chrome: -EINVAL). */
	const char *from;
	const char *where;
	/*
	 * -e: the samples of this event (by name) only.  folded and svg count
	 * an off-CPU event's nanoseconds (record --off-cpu: "offcpu-time",
	 * "offcpu-preempted", "offcpu-waker"), other events' samples.
	 * Without it folded leaves the off-CPU events out, and svg draws a
	 * file that has offcpu-time as one wall-time graph: the clock
	 * events' and the off-CPU nanoseconds, off-CPU frames in cold
	 * colours; pprof adds the sample types off_cpu, preempted and wall
	 * (nanoseconds) beside cpu.
	 */
	const char *event;
	/* folded: bcc offwaketime's lines, "comm;blocked stack;--;waker
	 * stack;waker comm NS", from the offcpu-waker samples */
	bool wakers;
};

/*
 * Converts the perf.data at opts->input and writes it to @out: samples as
 * instants on per-thread tracks with their call stacks, sched:sched_switch
 * as slices of the running threads and of the CPUs, counting events as
 * counters, process/thread names (chrome), the samples' call stacks
 * aggregated (folded, svg), or a pprof profile (pprof: binary, gzip).
 * chrome also takes a trace.dat (opts->trace_dat, or as the input).
 * Returns 0 or -errno (-EINVAL: an
 * unknown format; -EBADMSG: the file is damaged, what came before the
 * damage was written out completely; a write error on @out stops it).
 */
PERFRING_API int perfring_export(const struct perfring_export_opts *opts,
				 FILE *out);

/* ---- sched: perf sched timehist and latency ----------------------------- */

struct perfring_sched_opts {
	size_t sz;
	const char *input; /* -i: default "perf.data" */
	const char *command; /* "timehist" or "latency" */
	/* timehist: -s the summary alone, -S the lines and the summary,
	 * -w the wake-ups among them, -V the CPUs as columns */
	bool summary_only, with_summary, wakeups, cpu_visual;
	/* latency: -s sort keys ("avg, max, switch, runtime"; also pid),
	 * -p one line per thread (not merged by comm) */
	const char *sort;
	bool per_thread;
};

/*
 * perf sched timehist / latency, as perf 6.1 prints them, on a file of
 * sched tracepoints (perf sched record, perfring sched record): timehist a
 * line per sched_switch (the task switched out: its wait time, scheduling
 * delay and run time), latency a line per task (runtime, switches,
 * average and maximum delay between wake-up and run).  Returns 0 or -errno
 * (-ENOENT: no sched_switch; -EBADMSG: damaged, what came before was
 * printed).
 */
PERFRING_API int perfring_sched(const struct perfring_sched_opts *opts,
				FILE *out);

/* ---- data convert: CTF and JSON (perf data convert) -------------------- */

/* What a conversion did (perfring_data_convert()), also while it runs. */
struct perfring_convert_stats {
	size_t sz;
	uint64_t samples; /* samples written (one per value of a
			     PERF_SAMPLE_READ group sample, as perf) */
	uint64_t non_samples; /* side-band records written (all) */
	uint64_t bytes; /* the input records' bytes converted */
	uint64_t output_bytes; /* JSON: bytes written */
	uint64_t input_done; /* data bytes read so far */
	uint64_t input_total; /* the data section's size (0: a pipe) */
	uint64_t lost_records; /* PERF_RECORD_LOST records read */
	uint64_t lost; /* the events they count */
	uint32_t streams; /* CTF: per-CPU streams written */
	/* CTF: events left out because the writer refused a field's value
	 * (perf's conversion stops at the first) */
	uint64_t dropped;
};

typedef void (*perfring_convert_progress_fn)(
	const struct perfring_convert_stats *st, void *ctx);

struct perfring_convert_opts {
	size_t sz;
	const char *input; /* -i: default "perf.data"; "-": pipe format, stdin */
	/* --to-ctf: a CTF 1.8 trace in this directory (made if missing;
	 * an existing one keeps its other files, its "metadata" and
	 * "perf_stream_*" are replaced) */
	const char *to_ctf;
	/* --to-json: perf's linux-perf-json-version 1 file ("-": stdout);
	 * an existing file only with force */
	const char *to_json;
	bool all; /* --all: COMM, FORK, EXIT, MMAP, MMAP2 as events (CTF) */
	bool tod; /* --tod: times as wall-clock (CTF; needs the file's
		     CLOCK_DATA: record -k) */
	bool force; /* -f: an input of another user, an existing JSON file */
	/* called about ten times a second while the input is read, then
	 * once at the end */
	perfring_convert_progress_fn progress;
	void *progress_ctx;
};

/*
 * perf data convert: the perf.data at opts->input as CTF 1.8 (exactly one
 * of to_ctf, to_json) -- metadata and one stream per CPU as perf 6.1 writes
 * them through libbabeltrace-ctf, one event class per event, perf's field
 * names (perf_ip, perf_tid, perf_callchain, ...), tracepoint and
 * application event fields with their declared types -- or as perf's JSON
 * (headers, then the samples with their resolved call chains).  Records
 * are read in time order with bounded memory.  Returns 0 or -errno
 * (-EINVAL: bad options; -EEXIST: the JSON file exists and not force;
 * -EPERM: the input is another user's and not force; -EBADMSG: the input
 * is damaged, what came before the damage was written out); the log says
 * why.  @st (st->sz set, may be NULL) gets the figures either way.
 */
PERFRING_API int perfring_data_convert(const struct perfring_convert_opts *opts,
				       struct perfring_convert_stats *st);

/* ---- CoreSight trace decoding (OpenCSD) -------------------------------- */

struct perfring_cs_opts {
	size_t sz;
	const char *snapshot; /* an OpenCSD snapshot directory, or NULL */
	const char *input; /* else a perf.data with cs_etm AUX trace */
	const char *buffer; /* snapshot trace buffer (NULL: the first) */
	bool decode; /* packets with raw bytes + generic elements */
	bool elements_only; /* generic elements only (implies decode) */
	const char *symdir; /* perf.data: where binaries are looked up */
	/* Snapshot: how the buffer is framed: "frames", "tpiu" (FSYNCs),
	 * "tpiu-hsync" (FSYNCs and HSYNCs), "dstream" (DSTREAM blocks),
	 * "raw" (one unframed source); NULL or "auto": as the buffer's
	 * format says (coresight, dstream_coresight, source_data). */
	const char *framing;
	/* Snapshot: the first data error ends the decode (no reset, no end
	 * of trace), as OpenCSD 1.3.3's trc_pkt_lister does; else it is a
	 * resynchronisation point. */
	bool halt_on_error;
};

struct perfring_cs_stats {
	size_t sz;
	uint64_t trace_bytes; /* trace bytes decoded */
	uint64_t packets;
	uint64_t elements; /* generic elements (decoding) */
	uint64_t ranges; /* executed instruction ranges */
	uint64_t instructions; /* instructions in them */
	uint64_t nosync; /* NO_SYNC elements: unsynchronised stretches */
	uint64_t nacc; /* ranges whose code the memory image lacked */
	uint64_t resyncs; /* data errors: decoders reset and resynced */
	uint64_t errors; /* decoder errors logged */
	uint32_t decoders; /* trace IDs decoded */
};

/*
 * Lists the CoreSight trace of an OpenCSD snapshot directory or of the AUX
 * data of a perf.data (cs_etm AUXTRACE) to @out: packets ("Idx:N; ID:id;
 * packet"), or when decoding the packets with their bytes and the generic
 * elements, in the line format of OpenCSD's trc_pkt_lister.  Decoders are
 * configured from the snapshot registers or the AUXTRACE_INFO metadata;
 * code comes from the snapshot memory dumps, or from the files of the
 * perf.data's MMAP2 records.  Data errors are resynchronisation points
 * (counted in @st), never fatal (unless halt_on_error).  Returns 0 or
 * -errno (-EINVAL: an unknown framing, or one given without a snapshot).
 */
PERFRING_API int perfring_cs_decode(const struct perfring_cs_opts *opts,
				    FILE *out, struct perfring_cs_stats *st);

struct perfring_itrace_opts {
	size_t sz;
	const char *input; /* perf.data with cs_etm AUX trace */
	const char *snapshot; /* or an OpenCSD snapshot directory */
	const char *symdir; /* binaries by path, build-id or base name */
	bool no_disasm; /* script: ranges only, no instructions */
	unsigned int max_insns; /* script: instructions per range (0: all) */
};

/*
 * One line per executed instruction range (CPU/trace ID, start, end,
 * instructions, object), followed by its instructions disassembled
 * (capstone, aarch64), like perf's cs-trace-disasm.py.  Returns 0 or
 * -errno.
 */
PERFRING_API int perfring_itrace_script(const struct perfring_itrace_opts *o,
					FILE *out,
					struct perfring_cs_stats *st);

/* Hot spots: instructions executed per object and symbol, as perf report
 * does with --itrace. */
PERFRING_API int perfring_itrace_report(const struct perfring_itrace_opts *o,
					FILE *out,
					struct perfring_cs_stats *st);

/*
 * AutoFDO input as simpleperf inject writes it: per binary, the executed
 * address ranges and the taken branches with their counts, in binary
 * (ELF virtual) addresses, to @output ("-": stdout).  Binaries are found
 * by the MMAP2 path, the build-id or the base name in opts->symdir.
 */
PERFRING_API int perfring_inject(const struct perfring_itrace_opts *o,
				 const char *output,
				 struct perfring_cs_stats *st);

/* ==== tracefs recording, trace.dat, sub-buffer rings ==================== */
/* (The kernel's memory-mapped ftrace ring buffers; see perfring(1)
 * "record --tracefs" and docs/design.md "Sub-buffer rings".) */

#define PERFRING_TRACEFS_MAX_CPUS 256

struct perfring_tracefs_cpu_stats {
	uint64_t events; /* events in the pages written */
	uint64_t pages; /* sub-buffers written */
	uint64_t bytes; /* event bytes in them */
	uint64_t lost; /* events the kernel dropped (its overrun counter) */
	uint64_t lost_pages; /* pages marked "events missed before this" */
	uint64_t entries; /* the kernel's count of events written */
	uint64_t kernel_read; /* the kernel's count of events consumed */
	uint64_t zero_copy_pages; /* written straight from the mapping */
};

struct perfring_tracefs_stats {
	size_t sz;
	uint64_t events, pages, bytes, lost, lost_pages, entries, kernel_read;
	uint64_t zero_copy_pages;
	uint64_t file_bytes; /* size of the trace.dat */
	uint64_t wakeups; /* times the loop woke with data */
	uint32_t nr_cpus;
	uint32_t subbuf_size;
	bool mapped; /* memory-mapped consumer (false: read() fallback) */
	int child_status; /* wait status of the command, or -1 */
	char instance[64]; /* the tracefs instance used */
	struct perfring_tracefs_cpu_stats cpu[PERFRING_TRACEFS_MAX_CPUS];
	/* CPU time of the capture itself (the drain loop and the last
	 * drains), without the set-up and the trace.dat headers. */
	uint64_t capture_cpu_ns;
	/*
	 * Writing the file failed (a full disk): the first error (-errno),
	 * 0 if none.  Recording stopped there; the file is kept, cut at the
	 * last complete page, and the figures above count what is in it.
	 * (Fields from here on are filled when st->sz covers them.)
	 */
	int write_error;
	/* events the kernel recorded that are not in the file because of
	 * write_error (taken but not written, or left in its buffer) */
	uint64_t unsaved_events;
	uint64_t unsaved_pages; /* pages taken from the kernel, not written */
};

typedef void (*perfring_tracefs_progress_fn)(
	const struct perfring_tracefs_stats *st, void *ctx);

struct perfring_tracefs_opts {
	size_t sz;
	/* "sys:event", "sys:*", "ftrace:print" (trace_marker writes) */
	const char *const *events;
	int nr_events;
	const char *output; /* -o, default "trace.dat" */
	char *const *argv; /* command to run (NULL-terminated), or NULL */
	/* -a: every task; without it a command's events only are kept
	 * (set_event_pid with event-fork); no command implies -a. */
	bool all_cpus;
	uint64_t buffer_bytes; /* -m: ring bytes per CPU (0: instance default) */
	uint32_t subbuf_bytes; /* --subbuf-size (0: instance default) */
	int buffer_percent; /* wake-up fill level 0..100 (< 0: default) */
	bool no_mmap; /* read() trace_pipe_raw instead of mapping it */
	int control_fd; /* readable: 'q' stops (-1: none) */
	perfring_tracefs_progress_fn progress; /* about 4 times a second */
	void *progress_ctx;
	double duration; /* seconds without a command (0: until 'q') */
	const char *tracefs; /* mount point (default /sys/kernel/tracing) */
	const char *instance; /* instance name (default "perfring-<pid>") */
	const char *cpu_list; /* -C "0,2-3": only these CPUs (tracing_cpumask) */
};

/*
 * Records tracepoints through a private tracefs instance (made, set to the
 * mono clock, removed at the end, also after errors) into a trace.dat
 * (version 6, page size = sub-buffer size) that trace-cmd report reads.
 * The instance is named perfring-<pid>-<start time of the process>;
 * instances of that form (and the older perfring-<pid>) whose process is
 * gone are removed first, with a warning.  The output is created as
 * perfring_file_create() does with PERFRING_FILE_KEEP_OLD.  Returns 0 or
 * -errno (logged); @st (st->sz set) gets the summary.  A failed write
 * (st->write_error) returns that error with the file kept and @st filled:
 * it holds everything up to its last complete page.
 */
PERFRING_API int perfring_record_tracefs(const struct perfring_tracefs_opts *o,
					 struct perfring_tracefs_stats *st);

/* 1 if @path starts with the trace.dat magic, 0 if not, -errno. */
PERFRING_API int perfring_trace_dat_probe(const char *path);

/* A trace.dat's events, one line each as trace-cmd report prints them
 * (decoded with libtraceevent from the formats in the file), with the
 * kernel's dropped-event marks.  Returns 0 or -errno (-EBADMSG: damaged,
 * the log says where; what came before was printed). */
PERFRING_API int perfring_trace_dat_script(const char *path, FILE *out);
/* Events per CPU and per event type, pages, lost events, time range. */
PERFRING_API int perfring_trace_dat_stats(const char *path, FILE *out);
/* The file's sections, and every page and event with its offset. */
PERFRING_API int perfring_trace_dat_dump(const char *path, FILE *out);

/* Saving user-space sub-buffer rings (<perfring.h>) as a trace.dat. */
/*
 * Drains @nr rings (one per "CPU" of the file) through GET_READER into a
 * trace.dat at @path that trace-cmd report prints (perfring:message
 * events decoded).  Returns the events written or -errno.
 */
PERFRING_API int perfring_subbuf_save(struct perfring_subbuf *const *rings,
				      int nr, const char *path);

/*
 * Names of 0.2, kept for one release (0.3) as aliases of the new ones
 * (NEWS.md): the perf.data reader was struct perfring_reader and
 * perfring_reader_open/run/field/close (now struct perfring_data and
 * perfring_data_*, apart from the ring's read cycle perfring_read_*).
 */
#define perfring_reader perfring_data
PERFRING_API int perfring_reader_open(const struct perfring_script_opts *opts,
				      struct perfring_data **out);
PERFRING_API int perfring_reader_run(struct perfring_data *r,
				     perfring_sample_fn fn, void *ctx);
PERFRING_API int perfring_reader_field(struct perfring_data *r,
				       const struct perfring_sample *s,
				       const char *name, uint64_t *num,
				       char *buf, size_t len);
PERFRING_API void perfring_reader_close(struct perfring_data *r);

#ifdef __cplusplus
}
#endif
#endif /* PERFRING_TOOLS_H */
