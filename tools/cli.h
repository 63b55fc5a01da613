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

/*
 * The recorders' control pipe: SIGINT/SIGTERM/SIGHUP write 'q', SIGUSR2
 * 's' when @snapshots.  Returns the read end, or -1.
 */
int control_setup(bool snapshots);

/* The commands (tools/builtin-*.c); argv[0] is the command's name. */
int cmd_record(int argc, char **argv);
int cmd_record_perf(int argc, char **argv);
int cmd_record_tracefs(int argc, char **argv);
int cmd_record_aux(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_ring_stat(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* CoreSight (builtin-decode.c): decode, inject, dump --aux, --itrace. */
int cmd_decode(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_dump_aux(int argc, char **argv);
int cmd_script_itrace(int argc, char **argv);
int cmd_report_itrace(int argc, char **argv);

#endif
