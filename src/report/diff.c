// SPDX-License-Identifier: MIT
/*
 * perfring diff: perf diff.  Both files are read through the sample reader
 * (report's resolution); each sample's own ip is keyed by the sort keys
 * (perf diff's default "dso,sym"), per event name, and the baseline's
 * entries paired with the new file's by their key text, as perf pairs
 * hist entries.  Columns, order and number formats are perf 6.1's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "diff_hist.h"

enum compute { C_DELTA_ABS, C_DELTA, C_RATIO, C_WDIFF };

struct row {
	const struct dentry *old, *new;
	const char *const *keys;
	double base_pct, new_pct, value;
	bool has_value;
};

struct diff {
	struct perfring_diff_opts o;
	enum compute c;
	int64_t w_old, w_new;
	unsigned keys[DIFF_MAX_KEYS];
	int nr_keys;
	struct dhist old, new;
};

static int parse_compute(struct diff *d, const char *s)
{
	char *end;

	if (!s || !strcmp(s, "delta-abs"))
		d->c = C_DELTA_ABS;
	else if (!strcmp(s, "delta"))
		d->c = C_DELTA;
	else if (!strcmp(s, "ratio"))
		d->c = C_RATIO;
	else if (!strncmp(s, "wdiff:", 6)) {
		d->c = C_WDIFF;
		d->w_old = strtoll(s + 6, &end, 10);
		if (*end != ',' || end == s + 6)
			return -EINVAL;
		s = end + 1;
		d->w_new = strtoll(s, &end, 10);
		if (*end || end == s)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return 0;
}

static const char *const col_names[] = {
	[DK_DSO] = "Shared Object",
	[DK_SYM] = "Symbol",
	[DK_COMM] = "Command",
	[DK_PID] = "Pid:Command",
};

static const char *value_header(enum compute c)
{
	switch (c) {
	case C_DELTA_ABS:
		return "Delta Abs";
	case C_DELTA:
		return "Delta";
	case C_RATIO:
		return "Ratio";
	default:
		return "Weighted diff";
	}
}

static int value_width(enum compute c)
{
	switch (c) {
	case C_DELTA_ABS:
		return 9;
	case C_DELTA:
		return 7;
	default:
		return 14;
	}
}

static const struct diff *sort_ctx;

/* perf diff's order: by the computed value (|delta| for delta-abs),
 * entries that have none after, then by the keys. */
static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	const struct diff *d = sort_ctx;
	int ra = a->has_value ? 0 : a->new ? 1 : 2;
	int rb = b->has_value ? 0 : b->new ? 1 : 2;

	/* then those of the new file alone, then the baseline's alone */
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->has_value) {
		double va = d->c == C_DELTA_ABS ? fabs(a->value) : a->value;
		double vb = d->c == C_DELTA_ABS ? fabs(b->value) : b->value;

		if (va != vb)
			return va > vb ? -1 : 1;
	} else if (a->base_pct != b->base_pct) {
		return a->base_pct > b->base_pct ? -1 : 1;
	} else if (a->new_pct != b->new_pct) {
		return a->new_pct > b->new_pct ? -1 : 1;
	}
	for (int i = 0; i < d->nr_keys; i++) {
		/* symbols by name, whatever their "[k] " level */
		int skip = d->keys[i] == DK_SYM ? 4 : 0;
		int r = strcmp(a->keys[i] + skip, b->keys[i] + skip);

		if (r)
			return r;
	}
	return 0;
}

static void put_value(FILE *out, const struct diff *d, const struct row *r)
{
	char buf[64] = "";
	int w = value_width(d->c);

	if (r->has_value) {
		switch (d->c) {
		case C_DELTA_ABS:
		case C_DELTA:
			snprintf(buf, sizeof(buf), "%+.2f%%", r->value);
			break;
		case C_RATIO:
			snprintf(buf, sizeof(buf), "%.6f", r->value);
			break;
		case C_WDIFF:
			snprintf(buf, sizeof(buf), "%.0f", r->value);
			break;
		}
	} else if (!r->old && (d->c == C_RATIO || d->c == C_WDIFF)) {
		snprintf(buf, sizeof(buf), "N/A");
	}
	fprintf(out, "  %*s", w, buf);
}

static void compute_row(const struct diff *d, struct row *r,
			const struct dhist_event *eo,
			const struct dhist_event *en)
{
	r->base_pct = r->old && eo->period ? 100.0 * (double)r->old->period /
						     (double)eo->period :
					     0;
	r->new_pct = r->new && en->period ? 100.0 * (double)r->new->period /
						    (double)en->period :
					    0;
	switch (d->c) {
	case C_DELTA_ABS:
	case C_DELTA:
		/* an entry of the baseline alone has no delta (perf) */
		r->has_value = r->new != NULL;
		r->value = r->new_pct - r->base_pct;
		break;
	case C_RATIO:
		r->has_value = r->old && r->new;
		r->value = r->has_value ? (double)r->new->period /
						  (double)r->old->period :
					  0;
		break;
	case C_WDIFF:
		r->has_value = r->old && r->new;
		r->value =
			r->has_value ?
				(double)r->new->period *(double)d->w_new -
					(double)r->old->period *(
							      double)d->w_old :
				0;
		break;
	}
}

static int print_event(struct diff *d, const struct dhist_event *eo,
		       const struct dhist_event *en, FILE *out)
{
	size_t nr = 0, cap = (eo ? eo->nr : 0) + (en ? en->nr : 0);
	struct row *rows = calloc(cap ? cap : 1, sizeof(*rows));
	int width[DIFF_MAX_KEYS];
	int vw = value_width(d->c);
	const char *name = en ? en->name : eo->name;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; en && i < en->nr; i++) {
		rows[nr].new = &en->v[i];
		rows[nr].old = eo ? dhist_find(eo, en->v[i].key) : NULL;
		/* a pair shows the baseline's texts, as perf's leader */
		rows[nr].keys =
			(const char *const *)(rows[nr].old ?
						      rows[nr].old->keys :
						      en->v[i].keys);
		nr++;
	}
	for (size_t i = 0; eo && i < eo->nr; i++) {
		if (en && dhist_find(en, eo->v[i].key))
			continue;
		rows[nr].old = &eo->v[i];
		rows[nr].keys = (const char *const *)eo->v[i].keys;
		nr++;
	}
	for (size_t i = 0; i < nr; i++)
		compute_row(d, &rows[i], eo, en);
	sort_ctx = d;
	qsort(rows, nr, sizeof(*rows), row_cmp);
	for (int k = 0; k < d->nr_keys; k++) {
		width[k] = (int)strlen(col_names[d->keys[k]]);
		for (size_t i = 0; i < nr; i++) {
			int l = (int)strlen(rows[i].keys[k]);

			if (l > width[k])
				width[k] = l;
		}
	}
	/* "PID:COMM" pads its command to the Command column's width */
	for (int k = 0; k < d->nr_keys; k++) {
		int cw = 7;

		if (d->keys[k] != DK_PID)
			continue;
		for (size_t i = 0; i < nr; i++) {
			const char *c = strchr(rows[i].keys[k], ':');
			int l = c ? (int)strlen(c + 1) : 0;

			if (l > cw)
				cw = l;
		}
		if (8 + cw > width[k])
			width[k] = 8 + cw;
	}
	fprintf(out, "# Event '%s'\n#\n# Baseline  %*s", name, vw,
		value_header(d->c));
	for (int k = 0; k < d->nr_keys; k++)
		fprintf(out, d->keys[k] == DK_PID ? "  %*s" : "  %-*s",
			width[k], col_names[d->keys[k]]);
	fputs("\n# ........  ", out);
	for (int i = 0; i < vw; i++)
		fputc('.', out);
	for (int k = 0; k < d->nr_keys; k++) {
		fputs("  ", out);
		for (int i = 0; i < width[k]; i++)
			fputc('.', out);
	}
	fputs("\n#\n", out);
	for (size_t i = 0; i < nr; i++) {
		const struct row *r = &rows[i];

		if (d->o.percent_limit > 0 &&
		    r->base_pct < d->o.percent_limit &&
		    r->new_pct < d->o.percent_limit)
			continue;
		if (r->old)
			fprintf(out, "  %7.2f%%", r->base_pct);
		else
			fputs("          ", out);
		put_value(out, d, r);
		for (int k = 0; k < d->nr_keys; k++) {
			bool last = k == d->nr_keys - 1 && d->keys[k] == DK_SYM;

			fprintf(out, "  %-*s", last ? 0 : width[k], r->keys[k]);
		}
		fputc('\n', out);
	}
	free(rows);
	return 0;
}

PERFRING_API int perfring_diff(const struct perfring_diff_opts *opts, FILE *out)
{
	struct diff d = { 0 };
	int err;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	OPTS_COPY(&d.o, opts);
	if (parse_compute(&d, d.o.compute)) {
		pr_err("diff: -c takes delta, delta-abs, ratio or wdiff:W1,W2: %s",
		       d.o.compute);
		return -EINVAL;
	}
	d.nr_keys = dhist_parse_sort(d.o.sort ? d.o.sort : "dso,sym", d.keys);
	if (d.nr_keys < 0) {
		pr_err("diff: -s takes dso, sym, comm and pid: %s", d.o.sort);
		return -EINVAL;
	}
	err = dhist_read(&d.old, d.o.baseline ? d.o.baseline : "perf.data.old",
			 d.o.symfs, d.keys, d.nr_keys);
	if (!err)
		err = dhist_read(&d.new, d.o.input ? d.o.input : "perf.data",
				 d.o.symfs, d.keys, d.nr_keys);
	for (uint32_t i = 0; !err && i < d.new.nr_events; i++) {
		const struct dhist_event *en = &d.new.events[i];

		if (i)
			fputc('\n', out);
		err = print_event(&d, dhist_event_find(&d.old, en->name), en,
				  out);
	}
	for (uint32_t i = 0; !err && i < d.old.nr_events; i++) {
		const struct dhist_event *eo = &d.old.events[i];

		if (dhist_event_find(&d.new, eo->name))
			continue;
		fputc('\n', out);
		err = print_event(&d, eo, NULL, out);
	}
	dhist_free(&d.old);
	dhist_free(&d.new);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
