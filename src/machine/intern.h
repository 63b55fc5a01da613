/* SPDX-License-Identifier: MIT */
/*
 * Intern tables for the exports (report layer): byte strings (names,
 * packed keys) to ids 1..nr in insertion order, the keys kept for reading
 * back; and arrays of u64 that grow to the index written.
 */
#ifndef PERFRING_MACHINE_INTERN_H
#define PERFRING_MACHINE_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_KEY_BYTES (1024u << 20) /* bytes of one table's keys */

/* Byte strings to ids 1..nr, in insertion order. */
struct itab {
	uint32_t *slot; /* id, 0: empty */
	uint32_t mask;
	uint32_t nr;
	char *keys;
	size_t keys_len, keys_cap;
	size_t *off; /* off[id - 1]: start of key id; off[nr]: keys_len */
	size_t off_cap;
};

/* The id of @key (added if new; *added says so, if not NULL).  Returns 0,
 * -ENOMEM or -E2BIG (over MAX_KEY_BYTES of keys). */
int itab_intern(struct itab *t, const void *key, size_t len, uint32_t *id,
		bool *added);
/* Key @id (1..nr) and its length. */
const char *itab_key(const struct itab *t, uint32_t id, size_t *len);
void itab_free(struct itab *t);
uint64_t itab_hash(const void *k, size_t n);

/* A growing array of u64, indexed by id - 1. */
struct u64v {
	uint64_t *v;
	size_t nr, cap;
};

/* a->v[i] += add (the array grows zero-filled to i).  0 or -ENOMEM. */
int u64v_set(struct u64v *a, size_t i, uint64_t add);

#endif
