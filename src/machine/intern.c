// SPDX-License-Identifier: MIT
/*
 * Intern tables (byte strings to dense ids) and growing u64 arrays: what
 * the pprof and chrome exports aggregate in (see intern.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "intern.h"

uint64_t itab_hash(const void *k, size_t n)
{
	const unsigned char *s = k;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ h >> 29;
}

const char *itab_key(const struct itab *t, uint32_t id, size_t *len)
{
	*len = t->off[id] - t->off[id - 1];
	return t->keys + t->off[id - 1];
}

static int itab_grow(struct itab *t)
{
	uint32_t n = t->slot ? (t->mask + 1) * 2 : 1024;
	uint32_t *v = calloc(n, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t id = 1; id <= t->nr; id++) {
		size_t len;
		const char *k = itab_key(t, id, &len);
		uint32_t j = (uint32_t)itab_hash(k, len) & (n - 1);

		while (v[j])
			j = (j + 1) & (n - 1);
		v[j] = id;
	}
	free(t->slot);
	t->slot = v;
	t->mask = n - 1;
	return 0;
}

/* The id of @key (added if new; *added says so).  -E2BIG: full. */
int itab_intern(struct itab *t, const void *key, size_t len, uint32_t *id,
		bool *added)
{
	uint32_t j;

	if (added)
		*added = false;
	if (!t->slot || (size_t)(t->nr + 1) * 2 > (size_t)t->mask + 1) {
		int err = itab_grow(t);

		if (err)
			return err;
	}
	for (j = (uint32_t)itab_hash(key, len) & t->mask; t->slot[j];
	     j = (j + 1) & t->mask) {
		size_t kl;
		const char *k = itab_key(t, t->slot[j], &kl);

		if (kl == len && !memcmp(k, key, len)) {
			*id = t->slot[j];
			return 0;
		}
	}
	if (t->keys_len + len > MAX_KEY_BYTES || t->nr >= UINT32_MAX / 4)
		return -E2BIG;
	if (t->keys_len + len > t->keys_cap) {
		size_t n = t->keys_cap ? t->keys_cap : 4096;
		char *v;

		while (n < t->keys_len + len)
			n *= 2;
		v = realloc(t->keys, n);
		if (!v)
			return -ENOMEM;
		t->keys = v;
		t->keys_cap = n;
	}
	if (t->nr + 2 > t->off_cap) {
		size_t n = t->off_cap ? t->off_cap * 2 : 1024;
		size_t *v = realloc(t->off, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->off = v;
		t->off_cap = n;
	}
	if (!t->nr)
		t->off[0] = 0;
	if (len) /* (keys is NULL until the first non-empty key) */
		memcpy(t->keys + t->keys_len, key, len);
	t->keys_len += len;
	t->nr++;
	t->off[t->nr] = t->keys_len;
	t->slot[j] = t->nr;
	*id = t->nr;
	if (added)
		*added = true;
	return 0;
}

void itab_free(struct itab *t)
{
	free(t->slot);
	free(t->keys);
	free(t->off);
}

int u64v_set(struct u64v *a, size_t i, uint64_t add)
{
	if (i >= a->cap) {
		size_t n = a->cap ? a->cap : 1024;
		uint64_t *v;

		while (n <= i)
			n *= 2;
		v = realloc(a->v, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + a->cap, 0, (n - a->cap) * sizeof(*v));
		a->v = v;
		a->cap = n;
	}
	a->v[i] += add;
	if (i >= a->nr)
		a->nr = i + 1;
	return 0;
}
