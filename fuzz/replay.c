// SPDX-License-Identifier: MIT
/*
 * Runs a fuzz target's LLVMFuzzerTestOneInput() on a corpus without
 * libFuzzer, so the corpus is a regression test under ASan+UBSan.
 *
 *   replay_<name>                 every file of $FUZZ_CORPUS_DIR/<name>/
 *                                 (default root: fuzz/corpus)
 *   replay_<name> PATH...         the given files, and the files of the
 *                                 given directories
 *
 * Prints how many inputs ran.  Exit 1 if the corpus directory is missing
 * or holds no input, or a path cannot be read; a failing input crashes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *prog = "replay";

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: %s: cannot size\n", prog, path);
		fclose(f);
		return -1;
	}
	/* Exactly the input's size, so ASan sees any read past its end. */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: %s: read failed\n", prog, path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of @dir in name order; returns the count or -1. */
static long run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	long ran = 0;

	if (!d) {
		fprintf(stderr, "%s: corpus %s: %s\n", prog, dir,
			strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) *
							   sizeof(*names));

			if (!nn)
				abort();
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		size_t plen = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(plen);
		struct stat st;

		if (!path)
			abort();
		snprintf(path, plen, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) < 0)
				ran = -1;
			else if (ran >= 0)
				ran++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return ran;
}

static long run_path(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return run_dir(path);
	return run_file(path) < 0 ? -1 : 1;
}

int main(int argc, char **argv)
{
	const char *base, *name, *root;
	long total = 0;

	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	prog = base;
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			long n = run_path(argv[i]);

			if (n < 0)
				return 1;
			total += n;
		}
		printf("%s: %ld inputs ran\n", prog, total);
		return 0;
	}

	name = strstr(base, "replay_");
	if (!name || !name[7]) {
		fprintf(stderr,
			"usage: replay_<name> [FILE|DIR]...  (corpus name from the program name)\n");
		return 1;
	}
	name += 7;
	root = getenv("FUZZ_CORPUS_DIR");
	if (!root || !*root)
		root = "fuzz/corpus";

	size_t plen = strlen(root) + strlen(name) + 2;
	char *dir = malloc(plen);

	if (!dir)
		return 1;
	snprintf(dir, plen, "%s/%s", root, name);
	total = run_dir(dir);
	if (total < 0) {
		free(dir);
		return 1;
	}
	if (total == 0) {
		fprintf(stderr, "%s: corpus %s is empty\n", prog, dir);
		free(dir);
		return 1;
	}
	printf("%s: %ld inputs ran from %s\n", prog, total, dir);
	free(dir);
	return 0;
}
