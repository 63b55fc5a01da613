/* SPDX-License-Identifier: MIT */
/*
 * Tracepoint payloads as text (the report layer): the TRACING_DATA of a
 * perf.data parsed with libtraceevent, and a sample's PERF_SAMPLE_RAW
 * printed as libtraceevent's tep_print_event(TEP_PRINT_INFO) prints it --
 * what perf script shows after the event name.  Print formats made of
 * plain fields, constants, arithmetic, ?:, __print_flags/__print_symbolic
 * and __get_str are compiled once and printed without libtraceevent (the
 * same text, several times faster); anything else goes through
 * libtraceevent itself.
 */
#ifndef PERFRING_TRACEPOINT_TPFMT_H
#define PERFRING_TRACEPOINT_TPFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../common/outbuf.h"

struct tpfmt;

/* Parses a TRACING_DATA blob.  Returns 0 or -errno (-EBADMSG: damaged,
 * with the reason logged). */
int tpfmt_new(const void *data, size_t len, struct tpfmt **out);
void tpfmt_free(struct tpfmt *t);

/*
 * Kernel addresses in formats (%pS, %ps, function pointers): @fn returns
 * the name of the symbol holding *@addr and sets *@addr to its start and
 * *@mod to its module (or NULL), or returns NULL.
 */
typedef const char *(*tpfmt_resolve_fn)(void *ctx, uint64_t *addr,
					const char **mod);
void tpfmt_set_resolver(struct tpfmt *t, tpfmt_resolve_fn fn, void *ctx);

/* Use libtraceevent for every event (for tests comparing the two). */
void tpfmt_set_slow(struct tpfmt *t, bool slow);

/*
 * Appends the fields of one event record (@raw, @size bytes, as in the
 * sample) to @ob.  @cpu is the sample's CPU.  An event the formats do not
 * describe prints nothing.
 */
void tpfmt_print(struct tpfmt *t, const void *raw, uint32_t size, int cpu,
		 struct outbuf *ob);

/*
 * The field @name of the tracepoint record @raw (@size bytes): a number
 * (returns 0, *@num; signed fields sign-extended) or text (char arrays,
 * __data_loc strings and arrays: returns 1, the bytes up to the first NUL
 * into @buf, cut to @len - 1 and NUL-terminated).  -ENOENT: no such event
 * or field; -EBADMSG: the record does not hold it.
 */
int tpfmt_field(struct tpfmt *t, const void *raw, uint32_t size,
		const char *name, uint64_t *num, char *buf, size_t len);

/* Where the fixed field @name of tracepoint @id lies in its records:
 * 0 and *@off, *@size; -ENOENT (no such event or field, or a dynamic
 * one). */
int tpfmt_field_layout(struct tpfmt *t, int id, const char *name, uint32_t *off,
		       uint32_t *size);

/* The libtraceevent format of tracepoint @id, or NULL (the conversion
 * to CTF reads its fields' layout and types). */
struct tep_event;
struct tep_event *tpfmt_event(struct tpfmt *t, int id);

#endif
