// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the lines of a session's <pid>.events file, which any
 * program of the session writes and the recorder parses.
 *
 * Each line goes through app_desc_parse_line().  What it accepts must come
 * out the same through app_desc_format() (the canonical line parses to the
 * same layout), its format text must be accepted by libtraceevent (the
 * recorder puts it into TRACING_DATA for perf) and print a record, and the
 * layout must fit a record: fields inside the payload, __data_loc words
 * after the integers.
 * Seeds: fuzz/corpus/app_events/ (real events files and damaged lines).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "app/app_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Prints a record of @d (zeroes: empty strings and byte arrays) as perf
 * script does, so a format libtraceevent parses but handles apart (an
 * ftrace bprint) crashes here rather than in perf.
 */
static void print_zero_record(struct tep_handle *tep,
			      const struct app_event_desc *d)
{
	static unsigned char rec[APP_COMMON_SIZE + APP_RECORD_MAX];
	struct tep_record r = { 0 };
	struct trace_seq s;
	uint16_t type = (uint16_t)d->id;

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &type, sizeof(type));
	r.data = rec;
	r.size = (int)(APP_COMMON_SIZE + d->payload_fixed);
	trace_seq_init(&s);
	tep_print_event(tep, &s, &r, "%s", TEP_PRINT_INFO);
	trace_seq_destroy(&s);
}

static void check_one(const char *line, size_t len)
{
	struct app_event_desc d, again;
	char canon[APP_LINE_MAX + 2];
	char *text;
	size_t tlen;
	int n;

	if (app_desc_parse_line(line, len, &d))
		return;
	if (d.payload_fixed > APP_RECORD_MAX)
		abort();
	for (uint32_t i = 0; i < d.nr_fields; i++)
		if (d.fields[i].offset + d.fields[i].size > d.payload_fixed)
			abort();
	n = app_desc_format(&d, canon, sizeof(canon));
	if (n < 0)
		return;
	if (app_desc_parse_line(canon, (size_t)n, &again) || again.id != d.id ||
	    again.nr_fields != d.nr_fields ||
	    again.payload_fixed != d.payload_fixed ||
	    strcmp(again.provider, d.provider) || strcmp(again.name, d.name))
		abort();
	if (app_desc_format_file(&d, &text, &tlen) == 0) {
		struct tep_handle *tep = tep_alloc();
		struct tep_event *ev = NULL;

		if (tep) {
			tep_set_loglevel(TEP_LOG_NONE);
			if (tep_parse_format(tep, &ev, text, tlen,
					     d.provider) !=
				    TEP_ERRNO__SUCCESS ||
			    !ev || ev->id != (int)d.id ||
			    (ev->flags & TEP_EVENT_FL_FAILED))
				abort(); /* perf could not decode our events */
			print_zero_record(tep, &d);
			tep_free(tep);
		}
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t start = 0;

	for (size_t i = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			if (i > start)
				check_one((const char *)data + start,
					  i - start);
			start = i + 1;
		}
	}
	return 0;
}
