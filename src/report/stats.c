// SPDX-License-Identifier: MIT
/*
 * `perfring stats`: perf report --stats.  The "Aggregated stats:" block is
 * printed as perf 6.1 prints it (hists.c events_stats__fprintf(),
 * evlist__fprintf_nr_events() with --skip-empty): TOTAL, then each record
 * type seen with its share, then "<event> stats:" with the SAMPLE and
 * LOST_SAMPLES counts of each event that has any.  Lines for the lost
 * events (the sum of the LOST records' counts) and lost samples follow,
 * and what the reader could not account for when there is any.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include "perfring/tools.h"
#include "../common/opts.h"
#include "../format/perf_reader.h"
#include "stats.h"

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* @extra: the lost and damage lines after perf's block */
static void print_stats(const struct prd_file *f, FILE *out, bool extra)
{
	const uint64_t *c = prd_type_counts(f);
	const struct prd_stats *st = prd_stats(f);
	uint64_t total = st->nr_records;

	fprintf(out, "\nAggregated stats:%s\n",
		prd_has_feature(f, PRD_FEAT_AUXTRACE) ?
			" (excludes AUX area (e.g. instruction trace) decoded / synthesized events)" :
			"");
	fprintf(out, "%16s events: %10llu\n", "TOTAL", ull(total));
	for (uint32_t t = 1; t < 128; t++) {
		const char *name = prd_type_name(t);

		if (!name || !c[t])
			continue;
		fprintf(out, "%16s events: %10llu  (%4.1f%%)\n", name,
			ull(c[t]),
			total ? 100.0 * (double)c[t] / (double)total : 0.0);
	}
	if (c[0])
		fprintf(out, "%16s events: %10llu  (%4.1f%%)\n", "unknown type",
			ull(c[0]),
			total ? 100.0 * (double)c[0] / (double)total : 0.0);
	for (uint32_t i = 0; i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);
		uint64_t lost = prd_attr_lost_samples(f, i);

		if (!a->nr_samples && !lost)
			continue;
		fprintf(out, "%s stats:\n", a->name ? a->name : "?");
		if (a->nr_samples)
			fprintf(out, "%16s events: %10llu\n", "SAMPLE",
				ull(a->nr_samples));
		if (lost)
			fprintf(out, "%16s events: %10llu\n", "LOST_SAMPLES",
				ull(lost));
	}
	if (!extra)
		return;
	fprintf(out, "%16s: %10llu  (in %llu LOST records)\n", "lost events",
		ull(st->nr_lost), ull(st->nr_lost_records));
	fprintf(out, "%16s: %10llu  (in %llu LOST_SAMPLES records)\n",
		"lost samples", ull(st->nr_lost_samples),
		ull(st->nr_lost_samples_records));
	if (st->nr_unknown_id)
		fprintf(out,
			"%16s: %10llu  (samples with an id no event has)\n",
			"unknown id", ull(st->nr_unknown_id));
	if (st->nr_bad_samples)
		fprintf(out,
			"%16s: %10llu  (fields past their record: skipped; the first at offset %#llx)\n",
			"bad samples", ull(st->nr_bad_samples),
			ull(st->bad_sample_offset));
	if (st->features_damaged)
		fprintf(out,
			"%16s: in the feature sections (see the warning), ignored\n",
			"damage");
	if (st->damaged)
		fprintf(out,
			"%16s: at offset %#llx (counts above: what was read before it)\n",
			"damage", ull(st->damage_offset));
}

static int stats_of(const char *path, FILE *out, bool extra)
{
	struct prd_file *f;
	int ret, pret;

	ret = prd_open(path, &f);
	if (ret)
		return ret;
	pret = prd_process(f, false, NULL, NULL);
	print_stats(f, out, extra);
	ret = fflush(out) ? -errno : 0;
	prd_close(f);
	return pret ? pret : ret;
}

int report_stats(const char *path, FILE *out)
{
	return stats_of(path, out, true);
}

int report_stats_perf(const char *path, FILE *out)
{
	return stats_of(path, out, false);
}

PERFRING_API int perfring_stats(const char *path, FILE *out)
{
	if (!path || !out)
		return -EINVAL;
	return report_stats(path, out);
}
