// SPDX-License-Identifier: MIT
/*
 * Output files: created fresh (O_CREAT|O_EXCL|O_NOFOLLOW, 0600), never
 * written through a symbolic link or over an existing file.  The rules are
 * in out_file.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "out_file.h"

/* Rounds of "check, then create" lost to a racing process before giving
 * up: one is normal, two means someone raced us once. */
#define OUT_FILE_TRIES 8

static const char *kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "FIFO";
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISSOCK(m))
		return "socket";
	return "special file";
}

/*
 * A FIFO or character device already at @path, for a sequential output:
 * opened as it is (no O_CREAT), if the caller or root made it.  Returns the
 * descriptor, -EAGAIN when the path changed under us (check again), or
 * -errno.
 */
static int open_special(const char *path, const struct stat *seen,
			unsigned int flags)
{
	struct stat st;
	int fd;

	if (flags & OUT_FILE_SEEKABLE) {
		pr_err("%s is a %s: this output must be a regular file (its writer seeks)",
		       path, kind(seen->st_mode));
		return -ESPIPE;
	}
	if (seen->st_uid != geteuid() && seen->st_uid != 0) {
		pr_err("%s is a %s of uid %u: refusing to write into it", path,
		       kind(seen->st_mode), (unsigned)seen->st_uid);
		return -EPERM;
	}
	/* A FIFO blocks here until it has a reader, as with a shell's >. */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		if (err == -ENOENT || err == -ELOOP)
			return -EAGAIN;
		pr_err("cannot open %s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0 || st.st_dev != seen->st_dev ||
	    st.st_ino != seen->st_ino) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/*
 * OUT_FILE_REUSE_OLD: swaps @path (the previous output, which becomes
 * @old) with @old (which is dropped anyway) and opens the swapped-in file
 * if it is the regular, single-link file of ours seen at @old.  Returns the
 * descriptor, -ENOENT when there is nothing to reuse (rename instead),
 * -EAGAIN when the path must be checked again, or -errno.
 */
static int reuse_old(const char *path, const char *old)
{
	struct stat os, st;
	int fd;

	if (lstat(old, &os) < 0 || !S_ISREG(os.st_mode) ||
	    os.st_uid != geteuid() || os.st_nlink != 1)
		return -ENOENT;
	if (renameat2(AT_FDCWD, path, AT_FDCWD, old, RENAME_EXCHANGE) < 0)
		return -ENOENT; /* e.g. a file system without the exchange */
	pr_info("kept the previous %s as %s", path, old);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    st.st_dev == os.st_dev && st.st_ino == os.st_ino &&
	    st.st_uid == geteuid() && st.st_nlink == 1) {
		if ((st.st_mode & 07077) && fchmod(fd, st.st_mode & 0700) < 0) {
			close(fd);
			return -errno;
		}
		return fd;
	}
	if (fd >= 0)
		close(fd);
	/* Not the file we checked: it is not written; the name is freed
	 * for a new file (unlink never follows a link). */
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return -EAGAIN;
}

int out_file_open(const char *path, unsigned int flags)
{
	int oflags = O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
		     ((flags & OUT_FILE_SEEKABLE) ? O_RDWR : O_WRONLY);
	char old[PATH_MAX];

	if (!path || !*path)
		return -EINVAL;
	if ((flags & OUT_FILE_KEEP_OLD) &&
	    snprintf(old, sizeof(old), "%s.old", path) >= (int)sizeof(old)) {
		pr_err("%s: name too long", path);
		return -ENAMETOOLONG;
	}
	for (int i = 0; i < OUT_FILE_TRIES; i++) {
		struct stat st;
		int fd, err;

		if (lstat(path, &st) < 0) {
			if (errno != ENOENT) {
				err = -errno;
				pr_err("cannot create %s: %s", path,
				       strerror(-err));
				return err;
			}
			fd = open(path, oflags, 0600);
			if (fd >= 0)
				return fd;
			if (errno == EEXIST)
				continue; /* made meanwhile: look again */
			err = -errno;
			pr_err("cannot create %s: %s", path, strerror(-err));
			return err;
		}
		if (S_ISLNK(st.st_mode)) {
			pr_err("%s is a symbolic link: refusing to write through it (give the path it points to%s)",
			       path,
			       (flags & OUT_FILE_SEEKABLE) ?
				       "" :
				       ", or - for standard output");
			return -ELOOP;
		}
		if (S_ISDIR(st.st_mode)) {
			pr_err("%s is a directory", path);
			return -EISDIR;
		}
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
			fd = open_special(path, &st, flags);
			if (fd == -EAGAIN)
				continue;
			return fd;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_err("%s is a %s: refusing to replace it", path,
			       kind(st.st_mode));
			return -EEXIST;
		}
		if (flags & OUT_FILE_KEEP_OLD) {
			if (flags & OUT_FILE_REUSE_OLD) {
				fd = reuse_old(path, old);
				if (fd >= 0)
					return fd;
				if (fd == -EAGAIN)
					continue;
				if (fd != -ENOENT) {
					pr_err("cannot reuse %s for %s: %s",
					       old, path, strerror(-fd));
					return fd;
				}
			}
			/* rename() replaces @old itself, never what a link
			 * there points to; a link swapped in at @path is
			 * what moves to @old, untouched. */
			if (rename(path, old) < 0) {
				err = -errno;
				if (err == -ENOENT)
					continue;
				pr_err("cannot keep the previous %s as %s: %s",
				       path, old, strerror(-err));
				return err;
			}
			pr_info("kept the previous %s as %s", path, old);
		} else if (unlink(path) < 0 && errno != ENOENT) {
			err = -errno;
			pr_err("cannot replace %s: %s", path, strerror(-err));
			return err;
		}
	}
	pr_err("%s keeps being re-created by another process while it is being created: giving up",
	       path);
	return -EEXIST;
}

PERFRING_API int perfring_file_create(const char *path, unsigned int flags)
{
	if (flags &
	    ~(unsigned int)(PERFRING_FILE_KEEP_OLD | PERFRING_FILE_SEEKABLE))
		return -EINVAL;
	return out_file_open(
		path,
		((flags & PERFRING_FILE_KEEP_OLD) ? OUT_FILE_KEEP_OLD : 0) |
			((flags & PERFRING_FILE_SEEKABLE) ? OUT_FILE_SEEKABLE :
							    0));
}
