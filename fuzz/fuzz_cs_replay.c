// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the replay source's reader of OpenCSD snapshot directories
 * (src/sources/cs_replay.c: snapshot.ini, device files, trace.ini, the
 * trace buffer) and the chunks it cuts.
 *
 * The input is the packed form fuzz_cs_snapshot.c uses: one byte of
 * flags, then entries {u8 name_len; name; u32 le data_len; data}.  The
 * files are written into a fresh directory (names with '/' are left out),
 * which is loaded; every chunk is read in full, the metadata checked for
 * sane counts.  Seeds: fuzz/corpus/cs_replay/ (the OpenCSD test snapshots
 * packed, cut, and damaged copies).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sources/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/fuzz-cs-replay-XXXXXX";
	struct pr_replay_desc d;
	size_t pos = 1;

	if (size < 1 || !mkdtemp(dir))
		return 0;
	while (pos < size) {
		char name[256], path[512];
		size_t nl = data[pos++];
		uint32_t len;
		int fd;

		if (pos + nl + 4 > size)
			break;
		memcpy(name, data + pos, nl);
		name[nl] = 0;
		pos += nl;
		memcpy(&len, data + pos, 4);
		pos += 4;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		if (nl && !strchr(name, '/') && strcmp(name, ".") &&
		    strcmp(name, "..") && strlen(name) == nl) {
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				if (write(fd, data + pos, len) != (ssize_t)len)
					abort();
				close(fd);
			}
		}
		pos += len;
	}
	if (pr_replay_load_snapshot(dir, -1, 1 + data[0] * 64u, &d) == 0) {
		uint64_t total = 0;

		if (!d.nr_etm || !d.nr_chunks || d.nr_cpus != 1)
			abort();
		for (uint32_t i = 0; i < d.nr_etm; i++)
			if (!pr_cs_etm_nr_params(d.etm[i].kind) ||
			    d.etm[i].nr_regs > 16)
				abort();
		for (size_t i = 0; i < d.nr_chunks; i++) {
			const unsigned char *p = d.chunks[i].data;

			for (uint64_t k = 0; k < d.chunks[i].size; k++)
				total += p[k];
			sink += d.chunks[i].size;
		}
		sink += total;
		pr_replay_desc_free(&d);
	}
	rm_dir(dir);
	return 0;
}
