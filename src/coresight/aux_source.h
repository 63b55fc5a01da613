/* SPDX-License-Identifier: MIT */
/*
 * The AUX source (record_aux.c): a data ring + AUX area pair per CPU the
 * trace source names (the replay of --replay-cs, or a kernel AUX PMU),
 * drained into a perf.data writer as the records of the data rings and
 * PERF_RECORD_AUXTRACE chunks (the writer keeps their HEADER_AUXTRACE
 * index), after the AUXTRACE_INFO.  perfring_record_aux() runs it alone
 * with a writer of its own; perfring_record() beside its other sources,
 * through its writer (aux_source_open(..., true, ...)).
 */
#ifndef PERFRING_CORESIGHT_AUX_SOURCE_H
#define PERFRING_CORESIGHT_AUX_SOURCE_H

#include <stdbool.h>
#include "perfring/tools.h"
#include "../sources/session.h"

struct aux_source;
struct pd_writer;

/*
 * The source of @o, its AUX recorder (cs_etm) and its ring pairs.
 * @beside: one source of perfring_record(), so its attr must agree with
 * the kernel events' (PERF_SAMPLE_IDENTIFIER in every trailer, a replayed
 * perf.data's copied records too), its ids must not meet theirs or the
 * application events' (bit 61 set), the recording's rounds are its
 * writer's and the end of the replay does not end the recording; a
 * replay (snapshot directory or perf.data), without -S or --overwrite.
 */
int aux_source_open(const struct perfring_record_aux_opts *o, bool beside,
		    struct aux_source **out);
/* Its attr (with every ring's id) into @w, before pd_writer_start(). */
int aux_source_add_attr(struct aux_source *a, struct pd_writer *w);
/* PERF_RECORD_AUXTRACE_INFO, the first record after pd_writer_start(). */
int aux_source_write_info(struct aux_source *a);
/* The source starts writing (the replay plays). */
int aux_source_start(struct aux_source *a);
/* For a session's loop; its ctx is the aux_source. */
extern const struct rec_source_ops aux_source_ops;
/* Beside other sources: true once if it wrote since the last call (the
 * writer's round is open). */
bool aux_source_take_data(struct aux_source *a);
/* Stops the source and drains what it wrote since the last pass. */
int aux_source_finish(struct aux_source *a);
void aux_source_stats(struct aux_source *a,
		      struct perfring_record_aux_stats *st);
/* Everything freed; the writer is its owner's. */
void aux_source_close(struct aux_source *a);

#endif
