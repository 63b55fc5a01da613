/* SPDX-License-Identifier: MIT */
/*
 * perf record -z: ring data as zstd PERF_RECORD_COMPRESSED records.  One
 * zstd stream runs across the whole file (perf's reader keeps one
 * decompression context); each ring read (and each piece of application
 * samples, pd_compress_records()) is compressed and flushed, so what one
 * read's records inflate to is whole perf records, at most the ring's size
 * (HEADER_COMPRESSED's mmap_len); the flushed bytes are cut into records
 * of at most 64 KiB.
 */
#ifndef PERFRING_FORMAT_COMPRESS_H
#define PERFRING_FORMAT_COMPRESS_H

#include <stddef.h>
#include <stdint.h>
#include "perf_data.h"

struct pd_compress;

/* zstd @level (1..22); @max_read: the most bytes one write takes. */
struct pd_compress *pd_compress_new(int level, uint64_t max_read);
void pd_compress_free(struct pd_compress *z);
int pd_compress_level(const struct pd_compress *z);

/* The whole records in @pieces ranges, compressed into the writer.
 * Returns 0 or -errno. */
int pd_compress_write(struct pd_compress *z, struct pd_writer *w,
		      const void *const ptr[2], const size_t len[2],
		      int pieces);

/*
 * Whole records a caller built (@len bytes at @buf, sizes right), as
 * pd_compress_write() of pieces of at most the @max_read of
 * pd_compress_new() (one record at least): what one COMPRESSED record
 * inflates to stays within HEADER_COMPRESSED's mmap_len, the buffer perf
 * and perfparser inflate into.  -EINVAL when a size does not fit.
 */
int pd_compress_records(struct pd_compress *z, struct pd_writer *w,
			const void *buf, size_t len);

/* Bytes in / bytes out so far, as perf's HEADER_COMPRESSED ratio. */
uint32_t pd_compress_ratio(const struct pd_compress *z);

#endif
