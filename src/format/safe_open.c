// SPDX-License-Identifier: MIT
/* Opening paths another user may control (safe_open.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "../common/log.h"
#include "safe_open.h"

const char *safe_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	case S_IFREG:
		return "a regular file";
	default:
		return "not a regular file";
	}
}

/* Without /proc: the type checked by name, then opened so that it cannot
 * block or take a tty should it have changed in between, and checked
 * again. */
static int open_checked_by_name(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

PR_HIDDEN int safe_open_regular(const char *path, struct stat *st,
				const char **kind)
{
	struct stat s;
	char proc[48];
	int pfd, fd;

	if (kind)
		*kind = NULL;
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &s)) {
		fd = -errno;
		close(pfd);
		return fd;
	}
	if (!S_ISREG(s.st_mode)) {
		close(pfd);
		if (kind)
			*kind = safe_file_kind(s.st_mode);
		return -EINVAL;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		fd = open_checked_by_name(path); /* no /proc mounted */
	else if (fd < 0)
		fd = -errno;
	close(pfd);
	if (fd < 0)
		return fd;
	/* What was opened is what was checked (the same inode). */
	if (fstat(fd, &s) || !S_ISREG(s.st_mode)) {
		if (kind && !S_ISREG(s.st_mode))
			*kind = safe_file_kind(s.st_mode);
		close(fd);
		return -EINVAL;
	}
	if (st)
		*st = s;
	return fd;
}
