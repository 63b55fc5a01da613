// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the ClickHouse RowBinary answer parser of report and
 * export --from (src/fleet/clickhouse.c).  The first byte (mod 8, plus 1)
 * says in how many pieces the rest is fed, the next bytes their lengths:
 * a row may straddle any boundary.  Every row handed over goes into a
 * profile, which is then encoded as pprof and as RowBinary again: the
 * rows' lengths were checked, so nothing may read outside them, and the
 * same bytes cut differently give the same rows.  Seeds:
 * fuzz/corpus/chrows/ (made by test/fleet.sh's queries against a real
 * server, and by hand).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/clickhouse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int add(void *ctx, const struct ch_row *row)
{
	struct fleet_profile *p = ctx;

	if (row->nr_frames > CH_ARRAY_MAX || row->host_len > CH_STR_MAX)
		abort();
	return ch_row_add(p, row);
}

static int run(const uint8_t *data, size_t size, const uint8_t *lens,
	       size_t nlens, size_t pieces, struct fleet_profile *p,
	       uint64_t *rows)
{
	struct ch_rows c;
	size_t at = 0;
	int err = 0;

	fleet_profile_init(p, NULL);
	ch_rows_init(&c, add, p);
	for (size_t i = 0; i < pieces && !err && at <= size; i++) {
		size_t len = i + 1 == pieces ? size - at :
			     i < nlens	     ? lens[i] :
					       0;

		if (len > size - at)
			len = size - at;
		err = ch_rows_feed(&c, data + at, len);
		at += len;
	}
	if (!err)
		err = ch_rows_end(&c);
	*rows = c.rows;
	ch_rows_free(&c);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fleet_profile a, b;
	struct pb out = { 0 };
	size_t pieces, skip;
	uint64_t ra, rb;
	int ea, eb;

	if (!size)
		return 0;
	pieces = (size_t)(data[0] % 8) + 1;
	skip = 1 + (pieces < size ? pieces : size - 1);
	ea = run(data + skip, size - skip, data + 1, skip - 1, pieces, &a, &ra);
	eb = run(data + skip, size - skip, NULL, 0, 1, &b, &rb);
	if (ea != eb || ra != rb || a.nr_samples != b.nr_samples)
		abort();
	if (fleet_pprof(&a, true, &out) || fleet_rowbinary(&a, &out))
		abort();
	pb_free(&out);
	fleet_profile_free(&a);
	fleet_profile_free(&b);
	return 0;
}
