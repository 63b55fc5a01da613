/* SPDX-License-Identifier: MIT */
/*
 * Reading a fleet's samples back from ClickHouse (fleet layer): the rows
 * of perfring.samples under a WHERE condition, summed per host, thread,
 * event and stack by the server, into a profile (profile.h) that report
 * and export read as they read a file's samples.  The answer is hostile
 * input: RowBinary rows are parsed as they come (ch_rows_feed(), a state
 * machine over pieces of any size), every length bounded, a row that
 * does not parse ends the reading with -EBADMSG (fuzz/fuzz_chrows.c).
 */
#ifndef PERFRING_FLEET_CLICKHOUSE_H
#define PERFRING_FLEET_CLICKHOUSE_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

#define CH_ROW_MAX (16u << 20) /* one row's bytes */
#define CH_STR_MAX (1u << 20) /* one string */
#define CH_ARRAY_MAX 65536 /* one array's elements */

/* The query's columns: what one row holds. */
struct ch_row {
	const char *host, *comm, *event;
	size_t host_len, comm_len, event_len;
	uint32_t pid, tid;
	uint32_t nr_frames;
	/* frame i: stack name, object, file address, build-id */
	const char **stack, **dsos, **build_ids;
	size_t *stack_len, *dso_len, *bid_len;
	uint64_t *addrs;
	uint64_t count, value, first_ns, last_ns;
};

typedef int (*ch_row_fn)(void *ctx, const struct ch_row *row);

struct ch_rows {
	unsigned char *buf; /* the bytes of an incomplete row */
	size_t len, cap;
	struct ch_row row;
	/* the row's arrays (CH_ARRAY_MAX each at most) */
	const char **ptr;
	size_t *lens;
	uint64_t *addrs;
	uint32_t room;
	uint64_t rows;
	ch_row_fn fn;
	void *ctx;
	const char *why; /* -EBADMSG: what did not parse */
};

void ch_rows_init(struct ch_rows *c, ch_row_fn fn, void *ctx);
/* Feeds answer bytes; complete rows go to the callback.  0, -EBADMSG,
 * -ENOMEM or the callback's error. */
int ch_rows_feed(struct ch_rows *c, const void *p, size_t n);
/* The answer ended: 0, or -EBADMSG if a row was cut. */
int ch_rows_end(struct ch_rows *c);
void ch_rows_free(struct ch_rows *c);

/* The SELECT of ch_read() with @where (NULL: none), malloc'd. */
char *ch_query(const char *where);
/* A row into @p (its frames, a sample with the row's count). */
int ch_row_add(struct fleet_profile *p, const struct ch_row *row);

/*
 * Reads "clickhouse=URL" @from's samples under @where into @p (its
 * meta NULL: every sample carries its host).  0 or -errno; the log says
 * what the server answered.
 */
int ch_read(const char *from, const char *where, struct fleet_profile *p);

#endif
