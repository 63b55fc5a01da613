/* SPDX-License-Identifier: MIT */
/*
 * Test conventions: each test is a small program; exit 0 pass, 1 fail,
 * 77 skip (only when the kernel refuses something, with the reason printed).
 * test/run-tests.sh runs them under a timeout and counts the results.
 */
#ifndef PERFRING_TEST_HARNESS_H
#define PERFRING_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

#define CHECK(cond, ...)                                                \
	do {                                                            \
		if (!(cond)) {                                          \
			fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, \
				__LINE__, #cond);                       \
			fprintf(stderr, __VA_ARGS__);                   \
			fputc('\n', stderr);                            \
			exit(T_EXIT_FAIL);                              \
		}                                                       \
	} while (0)

#define CHECK_EQ(a, b) \
	CHECK((a) == (b), "%lld != %lld", (long long)(a), (long long)(b))

#define SKIP(...)                             \
	do {                                  \
		fprintf(stderr, "SKIP: ");    \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr);          \
		exit(T_EXIT_SKIP);            \
	} while (0)

#endif
