/* SPDX-License-Identifier: MIT */
/*
 * A trace.dat's events in time order, as trace-cmd report prints them
 * (text lines, with libtraceevent) or as data (fields by name): what
 * script merges with a perf.data, export draws and `perfring script` /
 * `stats` / `dump` print for a trace.dat.
 */
#ifndef PERFRING_TRACEPOINT_TRACEDAT_LINES_H
#define PERFRING_TRACEPOINT_TRACEDAT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One listing entry: @text (@len bytes, whole lines) of an event at @ts
 * (ns).  Returns 0 or -errno to stop. */
typedef int (*tdat_line_fn)(void *ctx, uint64_t ts, const char *text,
			    size_t len);

/*
 * The events of a trace.dat in time order, each as trace-cmd report
 * prints it (with the kernel's dropped-events mark before it), to @fn.
 * Returns 0, @fn's error, or -errno of the file (-EBADMSG: damaged).
 */
int tdat_script_lines(const char *path, tdat_line_fn fn, void *ctx);

/* The same, pulled one event at a time (the merged listing). */
struct tdat_lines;
int tdat_lines_open(const char *path, struct tdat_lines **out);
/* 1: the next event's time and text (whole lines, valid until the next
 * call); 0 at the end; -errno at the end of a damaged file (-EBADMSG: the
 * events around the damage were returned). */
int tdat_lines_next(struct tdat_lines *l, uint64_t *ts, const char **text,
		    size_t *len);
void tdat_lines_close(struct tdat_lines *l);

/* One event of a trace.dat as data (the export). */
struct tdat_ev {
	uint64_t ts; /* ns, on the file's trace clock */
	uint32_t cpu;
	int32_t tid; /* common_pid */
	const char *comm; /* saved_cmdlines' name of tid, or NULL */
	const char *system, *name; /* "?" when its format is unknown */
	const void *raw; /* the payload, common fields first */
	uint32_t raw_size;
	/* The kernel marked events dropped before this one on its CPU:
	 * how many (0: an unknown number); missed_mark false: none. */
	bool missed_mark;
	uint64_t missed;
};

/* A field's value: a number (is_signed says how to read it) or a
 * string (str, len: checked against the record). */
struct tdat_field {
	const char *name;
	bool is_str, is_signed;
	uint64_t num;
	const char *str;
	size_t len;
};

typedef int (*tdat_field_fn)(void *ctx, const struct tdat_field *fl);

/* 1: the next event in time order; 0 at the end; -errno as
 * tdat_lines_next().  The event stays valid until the next call. */
int tdat_lines_next_ev(struct tdat_lines *l, struct tdat_ev *ev);
/* The fields of the event tdat_lines_next_ev() returned last (not the
 * common_ ones), in format order, to @fn: numbers of 1, 2, 4 or 8 bytes,
 * char arrays and __data_loc strings; other arrays are left out.  Every
 * offset is checked against the record.  Returns 0 or @fn's error. */
int tdat_ev_fields(struct tdat_lines *l, tdat_field_fn fn, void *ctx);
/* The format text of @system:@name stored in the file, or NULL. */
const char *tdat_lines_format(struct tdat_lines *l, const char *system,
			      const char *name, size_t *len);
/* The file's trace clock ("mono", "local", ...; "" if not recorded). */
const char *tdat_lines_clock(const struct tdat_lines *l);
/* The CPUs the file has data for. */
uint32_t tdat_lines_nr_cpus(const struct tdat_lines *l);

/* What trace-cmd report prints for a trace.dat: "cpus=N", then every
 * event.  Returns as tdat_script_lines(). */
int tdat_report(const char *path, FILE *out);

#endif
