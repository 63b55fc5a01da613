/* SPDX-License-Identifier: MIT */
/*
 * Unaligned loads of the host-endian numbers in file and ring bytes (the
 * readers refuse the other byte order up front): the one set every layer
 * uses.  Header-only and libc only, so that libperfring's sub-buffer page
 * parser (src/ring/subbuf_page.c) shares it too.
 */
#ifndef PERFRING_COMMON_LOAD_H
#define PERFRING_COMMON_LOAD_H

#include <stdint.h>
#include <string.h>

static inline uint16_t ld16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
