// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perfring data convert over arbitrary perf.data bytes, to
 * CTF (with --all: the side-band records too; and with --tod: CLOCK_DATA)
 * and to JSON: the tracepoint and application event fields read from the
 * records through the file's own formats (__data_loc words, arrays,
 * strings), the feature sections the headers and the environment come
 * from, the libbabeltrace-ctf writer fed with all of it.  The input is a
 * memfd read by its /proc/self/fd path; the CTF goes to one temporary
 * directory (each conversion replaces the last's files), the JSON to
 * /dev/null.
 * Seeds: fuzz/corpus/convert/ (perf's and perfring's files: sched_switch
 * system-wide, application events with string and bytes fields, -g, a
 * pipe, -k clock data).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz-convert-XXXXXX";

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool made;
	char path[64];
	int fd;

	if (!made) {
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
		made = true;
	}
	fd = fuzz_file("fuzz-convert", data, size, path);
	if (fd < 0)
		abort();
	{
		PERFRING_OPTS(perfring_convert_opts, o, .input = path,
			      .to_ctf = dir, .all = true);

		perfring_data_convert(&o, NULL);
		o.all = false;
		o.tod = true;
		perfring_data_convert(&o, NULL);
	}
	{
		PERFRING_OPTS(perfring_convert_opts, o, .input = path,
			      .to_json = "/dev/null", .force = true);

		perfring_data_convert(&o, NULL);
	}
	close(fd);
	return 0;
}
