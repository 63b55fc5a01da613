/* SPDX-License-Identifier: MIT */
/*
 * perf.data writer (PERFILE2 file format and perf's pipe format), the file
 * format layer: it uses only the ring core's types and libc.
 */
#ifndef PERFRING_FORMAT_PERF_DATA_H
#define PERFRING_FORMAT_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct pd_writer;

/* Header feature bits (tools/perf/util/header.h). */
enum {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CPU_TOPOLOGY = 13,
	PD_FEAT_AUXTRACE = 18,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_CLOCK_DATA = 29,
};

/* perf tool record types (tools/lib/perf/include/perf/event.h). */
enum {
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_ID_INDEX = 69,
	PD_RECORD_AUXTRACE_INFO = 70,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_TIME_CONV = 79,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_FINISHED_INIT = 82,
};

/*
 * Opens a writer on @fd (a regular file, or any fd when @pipe: perf's pipe
 * format, written strictly sequentially).  @argc/@argv become CMDLINE.
 * Returns 0 or -errno.
 */
int pd_writer_open(int fd, bool pipe, int argc, char *const *argv,
		   struct pd_writer **out);

/*
 * Adds an event: its attr (written with attr.size = 128, the size perf 6.1
 * reads), its name (EVENT_DESC) and the kernel ids of its fds
 * (PERF_EVENT_IOC_ID).  In pipe mode all attrs come before
 * pd_writer_start(); a file takes more while recording (events that appear
 * late, such as an application's): they must fit the first ones
 * (sample_id_all, id position: -EINVAL otherwise) and are written with all
 * the others after the features at close.
 */
int pd_writer_add_attr(struct pd_writer *w, const struct perf_event_attr *attr,
		       const char *name, const uint64_t *ids, uint32_t nr_ids);

/* TRACING_DATA payload (needed when any attr is PERF_TYPE_TRACEPOINT). */
int pd_writer_set_tracing_data(struct pd_writer *w, const void *data,
			       size_t len);

/* CLOCKID feature: the clock the events use (use_clockid). */
void pd_writer_set_clockid(struct pd_writer *w, int clockid);

/* Writes what goes before the data: the header (and attrs, features and
 * tracing data as records in pipe mode).  Returns 0 or -errno. */
int pd_writer_start(struct pd_writer *w);

/* Appends raw record bytes (whole records) to the data section, buffered.
 * Returns 0 or -errno (the error is sticky; see pd_writer_close()). */
int pd_writer_write(struct pd_writer *w, const void *buf, size_t len);

/*
 * Appends a PERF_RECORD_AUXTRACE record (@rec, 48 bytes, its size field
 * the payload length rounded up to 8) followed by its payload, given in
 * two pieces (a wrapped AUX area) and zero-padded to that size.  Large
 * payloads go to the file without a copy.  In file mode the record's
 * offset goes into the HEADER_AUXTRACE index written at close.  Returns
 * 0 or -errno (-EINVAL: not an AUXTRACE record, sizes that disagree).
 */
int pd_writer_write_auxtrace(struct pd_writer *w, const void *rec,
			     const void *data1, size_t len1, const void *data2,
			     size_t len2);

/* pd_writer_write() for a caller that built the records itself (whole,
 * sizes right: not walked again); only between records. */
int pd_writer_write_whole(struct pd_writer *w, const void *buf, size_t len);

/* Ends a round: writes PERF_RECORD_FINISHED_ROUND and flushes; the file is
 * valid up to here even if a later write fails.  Returns 0 or -errno. */
int pd_writer_finish_round(struct pd_writer *w);

/* Sample time range for SAMPLE_TIME (ns on the events' clock). */
void pd_writer_note_time(struct pd_writer *w, uint64_t first, uint64_t last);

/* Bytes of data written so far (complete rounds and pending). */
uint64_t pd_writer_data_bytes(const struct pd_writer *w);

/*
 * Finishes the file: in file mode writes the feature sections after the
 * data and patches the header; after a write error (e.g. ENOSPC) it cuts
 * the data back to the last complete round and still leaves a header that
 * perf opens.  Frees @w.  Returns 0, or the first write error (-errno)
 * with a file that holds every complete round.
 */
int pd_writer_close(struct pd_writer *w);

#endif
