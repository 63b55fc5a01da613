/* SPDX-License-Identifier: MIT */
/*
 * Opening a path another user may control (an object a recorded MMAP names,
 * a debug file beside it, a build-id cache entry): the recorder and the
 * readers may run as root while the traced program's owner can put a FIFO,
 * a device node or a symlink to one where its binary was.  A plain open()
 * of a FIFO blocks until a writer comes (for ever: `top -a` and `script`
 * hung), and opening a device can act on it or take a controlling tty.
 */
#ifndef PERFRING_FORMAT_SAFE_OPEN_H
#define PERFRING_FORMAT_SAFE_OPEN_H

#include <sys/stat.h>

/*
 * Opens @path read-only if it is a regular file (symlinks followed, as
 * perf follows them): the inode is first taken with O_PATH, which opens
 * nothing, checked, and only then opened for reading through
 * /proc/self/fd, so the file read is the one checked (no window in which
 * the path could be swapped for a FIFO); the read open is non-blocking and
 * takes no controlling terminal all the same.  Returns the descriptor
 * (O_CLOEXEC), or -errno: -EINVAL if it is not a regular file, and then
 * *@kind (if not NULL) names what it is ("a FIFO", "a character
 * device", ...); otherwise *@kind is NULL.  *@st (if not NULL) gets its
 * fstat().
 */
int safe_open_regular(const char *path, struct stat *st, const char **kind);

/* "a FIFO", "a directory", ... for a file type that is not regular. */
const char *safe_file_kind(mode_t mode);

#endif /* PERFRING_FORMAT_SAFE_OPEN_H */
