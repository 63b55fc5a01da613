// SPDX-License-Identifier: MIT
/*
 * The protobuf writer and gzip framing of pprof profiles (see pbuf.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "pbuf.h"

static bool pb_room(struct pb *b, size_t n)
{
	if (b->err)
		return false;
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		uint8_t *v;

		while (c < b->len + n)
			c *= 2;
		v = realloc(b->p, c);
		if (!v) {
			b->err = -ENOMEM;
			return false;
		}
		b->p = v;
		b->cap = c;
	}
	return true;
}

void pb_varint(struct pb *b, uint64_t v)
{
	if (!pb_room(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

void pb_key(struct pb *b, unsigned int field, unsigned int wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

void pb_raw(struct pb *b, const void *p, size_t n)
{
	if (n && pb_room(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

void pb_bytes(struct pb *b, unsigned int field, const void *p, size_t n)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

void pb_str(struct pb *b, unsigned int field, const char *s)
{
	if (s && *s)
		pb_bytes(b, field, s, strlen(s));
}

void pb_msg(struct pb *b, unsigned int field, struct pb *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

void pb_free(struct pb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Deflates @len bytes at @in with a gzip header, each piece of output to
 * @put; 0 or -errno. */
static int gzip_run(const uint8_t *in, size_t left,
		    int (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	unsigned char buf[1 << 16];
	z_stream zs;
	int zr = Z_OK, err = 0;

	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	do {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		int flush = left == chunk ? Z_FINISH : Z_NO_FLUSH;

		zs.next_in = (Bytef *)(uintptr_t)in;
		zs.avail_in = chunk;
		in += chunk;
		left -= chunk;
		do {
			size_t have;

			zs.next_out = buf;
			zs.avail_out = sizeof(buf);
			zr = deflate(&zs, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EIO;
				goto out;
			}
			have = sizeof(buf) - zs.avail_out;
			if (have) {
				err = put(ctx, buf, have);
				if (err)
					goto out;
			}
		} while (zs.avail_out == 0);
	} while (left);
	if (zr != Z_STREAM_END)
		err = -EIO;
out:
	deflateEnd(&zs);
	return err;
}

static int put_file(void *ctx, const void *p, size_t n)
{
	if (fwrite(p, 1, n, ctx) != n)
		return errno ? -errno : -EIO;
	return 0;
}

static int put_pb(void *ctx, const void *p, size_t n)
{
	struct pb *b = ctx;

	pb_raw(b, p, n);
	return b->err;
}

int gzip_out(const struct pb *b, FILE *out)
{
	return gzip_run(b->p, b->len, put_file, out);
}

int gzip_pb(const void *p, size_t len, struct pb *out)
{
	return gzip_run(p, len, put_pb, out);
}
