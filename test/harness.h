/* SPDX-License-Identifier: MIT */
/*
 * Test conventions: each test is a small program; exit 0 pass, 1 fail,
 * 77 skip (only when the kernel refuses something, with the reason printed).
 * test/run-tests.sh runs them under a timeout and counts the results.
 */
#ifndef PERFRING_TEST_HARNESS_H
#define PERFRING_TEST_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * A case the kernel refused (a mount, a perf_event_open) while the others
 * can still run: the reason is printed now, and test_exit() exits 77
 * instead of 0, so a partly run test never counts as passed.
 */
static inline int *test_refused_count(void)
{
	static int n;

	return &n;
}

#define REFUSED(...)                                  \
	do {                                          \
		fprintf(stderr, "SKIP (one case): "); \
		fprintf(stderr, __VA_ARGS__);         \
		fputc('\n', stderr);                  \
		(*test_refused_count())++;            \
	} while (0)

/* main()'s return: T_EXIT_PASS, or T_EXIT_SKIP if a case was refused. */
static inline int test_exit(void)
{
	return *test_refused_count() ? T_EXIT_SKIP : T_EXIT_PASS;
}

/*
 * A private temporary directory for a test, removed (with the files in it)
 * at exit, also after a failed CHECK, and only by the process that made it.
 */
struct test_tmp {
	char path[64];
	pid_t owner;
};

static inline struct test_tmp *test_tmp_state(void)
{
	static struct test_tmp t;

	return &t;
}

static inline void test_tmp_cleanup(void)
{
	struct test_tmp *t = test_tmp_state();
	struct dirent *e;
	char p[1024];
	DIR *d;

	if (getpid() != t->owner)
		return;
	d = opendir(t->path);
	if (d) {
		while ((e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", t->path, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(t->path);
}

/* Makes /tmp/perfring-test-TAG-XXXXXX and returns its path. */
static inline const char *test_tmpdir(const char *tag)
{
	struct test_tmp *t = test_tmp_state();

	snprintf(t->path, sizeof(t->path), "/tmp/perfring-test-%s-XXXXXX", tag);
	CHECK(mkdtemp(t->path) != NULL, "mkdtemp: %s", strerror(errno));
	t->owner = getpid();
	atexit(test_tmp_cleanup);
	return t->path;
}

#endif
