// SPDX-License-Identifier: MIT
/* PERF_RECORD_COMPRESSED records (compress.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "../common/log.h"
#include "compress.h"

/* perf's max_record_size: a record's payload below 64 KiB */
#define REC_PAYLOAD_MAX (UINT16_MAX - 8)

struct pd_compress {
	ZSTD_CCtx *cctx;
	int level;
	uint64_t max_read; /* HEADER_COMPRESSED's mmap_len */
	unsigned char *rec; /* one record being filled */
	uint64_t in, out;
};

struct pd_compress *pd_compress_new(int level, uint64_t max_read)
{
	struct pd_compress *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->level = level;
	z->max_read = max_read;
	z->cctx = ZSTD_createCCtx();
	z->rec = malloc(8 + REC_PAYLOAD_MAX);
	if (!z->cctx || !z->rec ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(
		    z->cctx, ZSTD_c_compressionLevel, level))) {
		pd_compress_free(z);
		return NULL;
	}
	return z;
}

void pd_compress_free(struct pd_compress *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->rec);
	free(z);
}

int pd_compress_level(const struct pd_compress *z)
{
	return z->level;
}

/* The filled record out, its size unpadded as perf writes it. */
static int emit(struct pd_compress *z, struct pd_writer *w, size_t payload)
{
	struct perf_event_header h = { .type = PD_RECORD_COMPRESSED,
				       .size = (uint16_t)(8 + payload) };

	memcpy(z->rec, &h, sizeof(h));
	z->out += 8 + payload;
	return pd_writer_write_whole(w, z->rec, 8 + payload);
}

int pd_compress_write(struct pd_compress *z, struct pd_writer *w,
		      const void *const ptr[2], const size_t len[2], int pieces)
{
	for (int i = 0; i < pieces; i++) {
		ZSTD_inBuffer in = { ptr[i], len[i], 0 };
		ZSTD_EndDirective mode = i == pieces - 1 ? ZSTD_e_flush :
							   ZSTD_e_continue;
		size_t left;

		z->in += len[i];
		do {
			ZSTD_outBuffer out = { z->rec + 8, REC_PAYLOAD_MAX, 0 };
			int err;

			left = ZSTD_compressStream2(z->cctx, &out, &in, mode);
			if (ZSTD_isError(left)) {
				pr_err("-z: zstd: %s", ZSTD_getErrorName(left));
				return -EIO;
			}
			if (out.pos) {
				err = emit(z, w, out.pos);
				if (err)
					return err;
			}
		} while (in.pos < in.size || (mode == ZSTD_e_flush && left));
	}
	return 0;
}

int pd_compress_records(struct pd_compress *z, struct pd_writer *w,
			const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		const void *ptr[2] = { p, NULL };
		size_t n = 0, piece[2] = { 0, 0 };
		uint16_t size;
		int err;

		/* whole records, at most max_read bytes (one at least) */
		while (n < len) {
			if (len - n < 8)
				return -EINVAL;
			memcpy(&size, p + n + 6, sizeof(size));
			if (size < 8 || size > len - n)
				return -EINVAL;
			if (n && n + size > z->max_read)
				break;
			n += size;
		}
		piece[0] = n;
		err = pd_compress_write(z, w, ptr, piece, 1);
		if (err)
			return err;
		p += n;
		len -= n;
	}
	return 0;
}

uint32_t pd_compress_ratio(const struct pd_compress *z)
{
	uint64_t r = z->out ? z->in / z->out : 0;

	return r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}
