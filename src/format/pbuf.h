/* SPDX-License-Identifier: MIT */
/*
 * The protobuf writer the pprof profiles are encoded with (format layer):
 * varints and length-delimited fields are all pprof's Profile and the
 * stores' request messages need (docs/design.md says why no protobuf
 * library), and the gzip framing pprof files and pushes carry.  The
 * report's export (report/pprof.c) and the fleet's pushes (fleet/) both
 * encode through it.
 */
#ifndef PERFRING_FORMAT_PBUF_H
#define PERFRING_FORMAT_PBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* An encoded message being written (err: sticky -ENOMEM). */
struct pb {
	uint8_t *p;
	size_t len, cap;
	int err;
};

enum { WT_VARINT = 0, WT_LEN = 2 };

void pb_varint(struct pb *b, uint64_t v);
void pb_key(struct pb *b, unsigned int field, unsigned int wt);
/* A scalar field (int64, uint64, bool as varints: negative int64 as ten
 * bytes, as protobuf has it).  Zero is the default: left out. */
void pb_uint(struct pb *b, unsigned int field, uint64_t v);
void pb_bytes(struct pb *b, unsigned int field, const void *p, size_t n);
/* A string field (left out when empty, the proto3 default). */
void pb_str(struct pb *b, unsigned int field, const char *s);
/* Appends @sub as field @field of @b and empties it. */
void pb_msg(struct pb *b, unsigned int field, struct pb *sub);
/* Appends @n raw bytes. */
void pb_raw(struct pb *b, const void *p, size_t n);
void pb_free(struct pb *b);

/* @b's bytes gzip-compressed (deflate in a gzip header and trailer) to
 * @out.  0 or -errno. */
int gzip_out(const struct pb *b, FILE *out);
/* The same into @out (appended).  0 or -ENOMEM/-EIO. */
int gzip_pb(const void *p, size_t len, struct pb *out);

#endif
