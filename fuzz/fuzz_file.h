/* SPDX-License-Identifier: MIT */
/* What the fuzz targets that read a file share: the input as a file. */
#ifndef PERFRING_FUZZ_FILE_H
#define PERFRING_FUZZ_FILE_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memfd holding @data, named /proc/self/fd/N in @path (room for 64).
 * Returns the descriptor (the caller closes it), or -1. */
static inline int fuzz_file(const char *name, const uint8_t *data, size_t size,
			    char *path)
{
	size_t done = 0;
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
