/* SPDX-License-Identifier: MIT */
/*
 * What the perfring commands share: the program name, usage errors, option
 * value parsers and the recorders' control pipe.  Each command lives in its
 * own tools/builtin-*.c (as perf's builtin-*.c) and sees the library only
 * through its public header, included here and nowhere else.
 */
#ifndef PERFRING_TOOLS_CLI_H
#define PERFRING_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <perfring/tools.h>

/* argv[0] of messages and usage lines. */
extern const char *prog;

/*
 * The command line as perf.data's header records it (the recorders' view:
 * it starts one word before the command name, as it always has).
 */
extern int cli_cmdline_argc;
extern char **cli_cmdline_argv;

/* "prog: <fmt % arg>", a pointer to help, exit status 2. */
_Noreturn void die_usage(const char *fmt, const char *arg);

/* Sizes like perf's -m: a number with an optional B/K/M/G suffix. */
uint64_t parse_size(const char *s, const char *what);
/* --duration: seconds, more than 0. */
double parse_seconds(const char *arg);
/* -m: pages (a power of two) like perf, or a size with a B/K/M/G suffix. */
uint64_t parse_mmap(const char *arg);

/* Whether @a (alone or as "@a=...") is among the options before "--". */
bool has_arg(int argc, char **argv, const char *a);
/* Whether -i/--input was given: perf reads a pipe on stdin otherwise. */
bool input_given(int argc, char **argv);
bool stdin_is_fifo(void);
/* --symfs DIR as given, with a warning if it is no directory (perf's
 * --symfs takes any path and then finds nothing). */
const char *symfs_dir(const char *dir);

/*
 * The recorders' control pipe: SIGINT/SIGTERM/SIGHUP write 'q', SIGUSR2
 * 's' when @snapshots.  Returns the read end, or -1.
 */
int control_setup(bool snapshots);
/* Writes 'q' to that pipe, as SIGTERM does (a browser's q). */
void control_stop(void);

/*
 * perfring record's options, parsed once for every mode
 * (tools/record-options.c): each means what it means in perf record.
 */
#define RECORD_MAX_EVENTS 64
enum record_mode {
	RECORD_PERF, /* kernel perf events, application rings, ftrace */
	RECORD_TRACEFS, /* --tracefs: ftrace events only, -e names them */
	RECORD_AUX, /* --replay-cs, -e cs_etm//: AUX area trace */
};
struct record_args {
	enum record_mode mode;
	bool help;
	const char *events[RECORD_MAX_EVENTS]; /* -e */
	const char *filters[RECORD_MAX_EVENTS]; /* --filter of each -e */
	int nr_events;
	/* --tracefs-event: ftrace events beside the perf events */
	const char *tracefs_events[RECORD_MAX_EVENTS];
	int nr_tracefs_events;
	const char *tracefs_output; /* --tracefs-output */
	char **argv; /* the command, or NULL */
	const char *output; /* -o */
	bool quiet; /* -q */
	double duration; /* --duration */
	bool all_cpus; /* -a */
	const char *cpu_list, *pid_list, *tid_list; /* -C, -p, -t */
	bool per_thread;
	uint64_t mmap_bytes, aux_bytes; /* -m DATA[,AUX] */
	bool mmap_has_aux;
	uint64_t freq, period; /* -F, -c */
	bool callchain; /* -g, --call-graph */
	uint32_t callchain_dwarf_size; /* --call-graph dwarf[,SIZE] */
	uint16_t callchain_max_stack; /* --call-graph fp,DEPTH */
	uint64_t user_regs; /* --user-regs */
	bool overwrite;
	bool no_app;
	uint32_t app_max_rings;
	bool tracefs; /* --tracefs */
	uint64_t buffer_bytes; /* --buffer-size (ftrace, per CPU) */
	uint32_t subbuf_bytes;
	int buffer_percent; /* -1: default */
	bool no_mmap;
	const char *replay; /* --replay-cs */
	uint64_t rate, loops, chunk;
	int replay_cpu; /* -1: default */
	bool snapshot, snapshot_on_exit; /* -S, --snapshot[=e] */
	uint64_t snapshot_size;
	int cs_header_version;
	/* perf's idioms (record-options.c, perf record's meanings) */
	double delay_ms; /* -D/--delay MSECS: events enabled after (-1: never) */
	double *enable_ranges; /* -D 10-20,30-40: (start, end) pairs */
	uint32_t nr_enable_ranges;
	/* --control fifo:CTL[,ACK] | fd:CTL[,ACK] */
	bool has_control;
	int ctl_fd, ack_fd;
	bool sample_addr; /* -d/--data */
	bool no_inherit; /* --no-inherit */
	bool inherit_stat; /* -s/--stat */
	bool set_clockid; /* -k/--clockid */
	int clockid;
	int compression_level; /* -z/--compression-level[=N] (0: off) */
	uint64_t max_size; /* --max-size */
	const char *switch_output; /* --switch-output[=signal|SIZE|TIME] */
	const char *pprof; /* --pprof: a pprof profile of the recording */
	uint64_t sample_bits; /* -R, -W, --phys-data, --data/code-page-size */
	bool switch_events; /* --switch-events */
	bool user_callchains, kernel_callchains;
	bool no_buildid; /* -B/--no-buildid */
	bool timestamp_filename; /* --timestamp-filename */
	bool off_cpu; /* --off-cpu */
	bool off_cpu_thresh_set; /* --off-cpu-thresh MSEC */
	uint64_t off_cpu_thresh_ms;
	int off_cpu_mode; /* --off-cpu-mode bpf|events (0: either) */
	/* fleet profiling: --push SINK=URL..., --push-every, --label,
	 * --spool, --spool-size */
	const char *push[PERFRING_PUSH_MAX_SINKS];
	int nr_push;
	double push_every;
	const char *labels[RECORD_MAX_EVENTS];
	int nr_labels;
	const char *spool;
	uint64_t spool_bytes;
};
/* Returns -1 to go on (ra->help: print the mode's usage), or the exit
 * status of a bad option; usage errors exit(2). */
int record_parse_args(int argc, char **argv, struct record_args *ra);
/* record --help: @mode's usage and the options it takes. */
void record_help(enum record_mode mode);
bool record_aux_event(const char *event);

/* The commands (tools/builtin-*.c); argv[0] is the command's name. */
int cmd_record(int argc, char **argv);
int cmd_record_perf(const struct record_args *ra);
int cmd_record_tracefs(const struct record_args *ra);
int cmd_record_aux(const struct record_args *ra);
/* --replay-cs and its options into @o (builtin-record-aux.c); beside
 * other sources (cmd_record_perf) too, with the AUX part's summary. */
void record_aux_opts_from(const struct record_args *ra,
			  struct perfring_record_aux_opts *o);
void record_aux_part_summary(const struct perfring_record_aux_stats *st);
int cmd_list(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_ring_stat(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_top(int argc, char **argv);
/* perfring push --spool (builtin-push.c); record's push summary. */
int cmd_push(int argc, char **argv);
void push_summary(const struct perfring_push_stats *ps);
int cmd_data(int argc, char **argv);
int cmd_sched(int argc, char **argv);
/* A command's -v: the library's log down to debug messages. */
void cli_verbose(void);
/* perfring export of @eo into @outpath ("-": standard output), as export
 * does it; returns its exit status (record --pprof uses it too). */
int export_to(const struct perfring_export_opts *eo, const char *outpath);
/* CoreSight (builtin-decode.c): decode, inject, dump --aux, --itrace. */
int cmd_decode(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_dump_aux(int argc, char **argv);
int cmd_script_itrace(int argc, char **argv);
int cmd_report_itrace(int argc, char **argv);
/* The analysis loop: annotate, diff (builtin-annotate.c, builtin-diff.c). */
int cmd_annotate(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/*
 * The pager (pager.c): on a terminal, stdout becomes a pipe to
 * $PERFRING_PAGER, $PAGER or less (NULL from pager_command(): none);
 * true if started.  no_pager_arg() takes --no-pager out of argv.
 */
const char *pager_command(void);
bool pager_start(bool no_pager);
bool no_pager_arg(int *argc, char **argv);
extern bool cli_no_pager; /* --no-pager was given */

/* progress.c: the readers' progress bar on stderr when it is a terminal. */
void progress_setup(void);

/*
 * The terminal browser (browser.c, ncurses): perf report's and perf
 * annotate's TUI.  0 when the user quit, or -errno.
 */
int browse_annotate(const struct perfring_annotate_opts *ao);
/* @ro's entries (its input and filters), self or with a Children column. */
int browse_report(const struct perfring_report_opts *ro, bool children);
/* perfring top's browser: @to's tables, refreshed live (perfring_top() on
 * a thread of its own; control_setup() first: q and the signals stop it). */
int browse_top(const struct perfring_top_opts *to);

#endif
