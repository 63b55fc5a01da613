/* SPDX-License-Identifier: MIT */
/* Helpers shared by the stress tests: clock, hashing, pseudo-random numbers,
 * short sleeps, and the checksum of records that carry a u32 sequence
 * number after their header. */
#ifndef PERFRING_TEST_STRESS_H
#define PERFRING_TEST_STRESS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Header, the low half of the seq word, then the payload words. */
static inline uint32_t seq_rec_csum(const void *rec, size_t size)
{
	const unsigned char *p = rec;
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	memcpy(&w, p, 8); /* header */
	h = mix64(h ^ w);
	memcpy(&w, p + 8, 4); /* seq (low half only) */
	h = mix64(h ^ (w & 0xffffffffull));
	for (size_t off = 16; off < size; off += 8) {
		memcpy(&w, p + off, 8);
		h = mix64(h ^ w ^ off);
	}
	return (uint32_t)(h ^ (h >> 32));
}

static inline uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline void nap_us(unsigned int us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

#endif
