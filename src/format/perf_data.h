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
	PD_FEAT_GROUP_DESC = 17,
	PD_FEAT_AUXTRACE = 18,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CLOCK_DATA = 29,
};

/* perf tool record types (tools/lib/perf/include/perf/event.h). */
enum {
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_EVENT_TYPE = 65, /* checkpoint carriers, see .c */
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_ID_INDEX = 69,
	PD_RECORD_AUXTRACE_INFO = 70,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_TIME_CONV = 79,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_COMPRESSED = 81,
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
 * (sample_id_all, id position: -EINVAL otherwise).  The next
 * pd_writer_finish_round() makes them part of the file's checkpoint before
 * any record after this call becomes part of it.
 */
int pd_writer_add_attr(struct pd_writer *w, const struct perf_event_attr *attr,
		       const char *name, const uint64_t *ids, uint32_t nr_ids);

/* TRACING_DATA payload (needed when any attr is PERF_TYPE_TRACEPOINT):
 * a blob as tracing_data_build() makes it.  In file mode it may be
 * replaced while recording (the next round writes it). */
int pd_writer_set_tracing_data(struct pd_writer *w, const void *data,
			       size_t len);

/*
 * The format text of a tracepoint-like event of system @system (an
 * application event's provider) that is not in the tracing data blob: it
 * joins TRACING_DATA as perf reads it (the system after the blob's own).
 * Needs pd_writer_set_tracing_data() first (-EINVAL: no blob, or one this
 * writer cannot parse).  In file mode it may come while recording, with
 * the event's pd_writer_add_attr(): the next round writes both.
 */
int pd_writer_add_format(struct pd_writer *w, const char *system,
			 const char *format, size_t len);

/*
 * File mode, before pd_writer_start(): room in bytes for the event
 * descriptions (attrs, EVENT_DESC, TRACING_DATA) to grow while recording
 * beyond what one record of the data section carries (64 KiB per
 * section).  Two areas of the start's descriptions plus @bytes are left as
 * holes before the data; a round whose descriptions outgrow them still
 * writes its data, but the file's checkpoint stays where it was until
 * pd_writer_close() (warned once).  0 (default): no such room.
 */
void pd_writer_set_growth(struct pd_writer *w, size_t bytes);

/*
 * HEADER_GROUP_DESC: the last @nr_members attrs added (at least 2, added
 * before pd_writer_start()) form an event group led by the first of them
 * ({a,b} of -e).  perf report shows them side by side, perf evlist -g as
 * {a,b}.  Returns 0, -EINVAL (too few attrs, already started) or -ENOMEM.
 */
int pd_writer_add_group(struct pd_writer *w, uint32_t nr_members);

/* CLOCKID feature: the clock the events use (use_clockid). */
void pd_writer_set_clockid(struct pd_writer *w, int clockid);

/*
 * HEADER_BUILD_ID at close: @len bytes of entries as buildid_entry_add()
 * makes them (copied).  File mode only.  Returns 0 or -ENOMEM.
 */
int pd_writer_set_build_ids(struct pd_writer *w, const void *blob, size_t len);

/* HEADER_COMPRESSED: the data holds zstd PERF_RECORD_COMPRESSED records
 * of @level, each inflating to at most @mmap_len bytes; the ratio (data
 * in / compressed, perf's figure) is set before close. */
void pd_writer_set_compressed(struct pd_writer *w, int level,
			      uint64_t mmap_len);
void pd_writer_compress_ratio(struct pd_writer *w, uint32_t ratio);

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

/*
 * Ends a round.  Pipe mode: a PERF_RECORD_FINISHED_ROUND.  File mode: a
 * checkpoint: the round's data, the event descriptions that changed, a
 * plain PERF_RECORD_FINISHED_ROUND, the record that holds the feature
 * table, then the header (one pwrite) switched to describe the file up to
 * there, so a recorder killed at any instant leaves a file perf opens with
 * every complete round (docs/design.md section 9).  On return the round is in
 * the file (not necessarily on the disk: no fsync).  Returns 0 or -errno
 * (sticky).
 */
int pd_writer_finish_round(struct pd_writer *w);

/* Sample time range for SAMPLE_TIME (ns on the events' clock). */
void pd_writer_note_time(struct pd_writer *w, uint64_t first, uint64_t last);

/* Bytes of data written so far (complete rounds and pending). */
uint64_t pd_writer_data_bytes(const struct pd_writer *w);

/* Bytes the next pd_writer_finish_round() adds to the data at most: its
 * checkpoint, and the event descriptions that changed (--max-size keeps
 * room for them). */
uint64_t pd_writer_round_bytes(struct pd_writer *w);

/*
 * Finishes the file: in file mode a last checkpoint, then the layout perf
 * writes (the feature table and sections after the data, the attrs after
 * them if events were added while recording) and the header.  After a
 * write error (e.g. ENOSPC), before or here, the file is cut back to the
 * end of its last checkpoint, whose header stays: perf opens it with every
 * round up to there.  *@data_size (if not NULL) gets the size of the data
 * section the file is left with (pipe: the bytes of the stream kept).
 * Frees @w.  Returns 0, or the first write error (-errno).
 */
int pd_writer_close(struct pd_writer *w, uint64_t *data_size);

#endif
