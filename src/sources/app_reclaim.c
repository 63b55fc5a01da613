// SPDX-License-Identifier: MIT
/*
 * Stale owners and the session directories they left (see stale.h).
 *
 * A recorder killed with SIGKILL (or SIGHUP before perfring handled it)
 * leaves /dev/shm/perfring-XXXXXX with its programs' rings in it; a
 * program that traced into its own session leaves
 * /dev/shm/perfring-<uid>/<pid>.  Every file there is shared memory that
 * stays until someone removes it, so the next recording does.  Nothing is
 * removed that a live process may still use, nothing of another user, and
 * nothing reached through a link.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "stale.h"

#define SESSION_PREFIX "perfring-"
/* A directory without recorder.pid younger than this is being made. */
#define FRESH_SECONDS 10

int proc_start_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno == ESRCH ? -ESRCH : -EIO;
	buf[n] = 0;
	/* "pid (comm) S ppid ...": comm may hold anything, ")" too. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EIO;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return -ESRCH;
	/* starttime is field 22; the state is field 3. */
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || !isdigit((unsigned char)*p))
		return -EIO;
	*ticks = strtoull(p, NULL, 10);
	return 0;
}

bool proc_may_have_made(pid_t pid, const struct timespec *made)
{
	struct timespec rt, bt;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	double boot, start;
	int err = proc_start_ticks(pid, &ticks);

	if (err == -ESRCH)
		return false;
	if (err || hz <= 0 || clock_gettime(CLOCK_REALTIME, &rt) ||
	    clock_gettime(CLOCK_BOOTTIME, &bt))
		return true;
	/* /proc's start time counts from boot, suspend included. */
	boot = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9 -
	       ((double)bt.tv_sec + (double)bt.tv_nsec / 1e9);
	start = boot + (double)ticks / (double)hz;
	return start <=
	       (double)made->tv_sec + (double)made->tv_nsec / 1e9 + 1.0;
}

/* A directory stream of its own over @dfd, from the start (a dup shares
 * the offset an earlier walk left at the end). */
static DIR *walk(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d);
	return d;
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A directory of ours, private, not reached through a link: its
 * descriptor (O_DIRECTORY|O_NOFOLLOW, checked with fstat), else -1. */
static int open_private_dir(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISDIR(st->st_mode) ||
	    st->st_uid != geteuid() || (st->st_mode & 07777) != 0700) {
		close(fd);
		return -1;
	}
	return fd;
}

/* recorder.pid names a process that may have written it. */
static bool recorder_alive(int dfd, bool *present)
{
	char buf[32];
	struct stat st;
	ssize_t n;
	long pid;
	int fd = openat(dfd, "recorder.pid",
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*present = fd >= 0;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	pid = strtol(buf, NULL, 10);
	if (pid <= 0 || pid == (long)getpid())
		return false;
	return proc_may_have_made((pid_t)pid, &st.st_mtim);
}

/* A ring whose producer or consumer role lock (bytes 0 and 1) is held. */
static bool ring_in_use(int dfd, const char *name)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 2 };
	struct stat st;
	int fd = openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool used;

	if (fd < 0)
		return false;
	used = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	       (fcntl(fd, F_OFD_GETLK, &fl) < 0 || fl.l_type != F_UNLCK);
	close(fd);
	return used;
}

/*
 * Whether anything in the session directory @dfd may still be used:
 * a recorder (recorder.pid), a producer or consumer of a ring, a program
 * (<pid>.events).
 */
static bool session_in_use(int dfd, const struct stat *dst, bool need_pid)
{
	struct dirent *e;
	struct timespec now;
	bool present, used = recorder_alive(dfd, &present);
	DIR *d;

	if (used)
		return true;
	clock_gettime(CLOCK_REALTIME, &now);
	if (need_pid && !present &&
	    now.tv_sec - dst->st_ctim.tv_sec < FRESH_SECONDS)
		return true;
	d = walk(dfd);
	if (!d)
		return true;
	while (!used && (e = readdir(d))) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		struct stat st;

		if (len > 5 && !strcmp(n + len - 5, ".ring")) {
			used = ring_in_use(dfd, n);
		} else if (len > 7 && !strcmp(n + len - 7, ".events") &&
			   all_digits(n, len - 7) &&
			   !fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW)) {
			used = proc_may_have_made((pid_t)atol(n), &st.st_mtim);
		}
	}
	closedir(d);
	return used;
}

/* Removes the regular files and FIFOs in @dfd, then the directory @name
 * of @parent.  True if the directory is gone. */
static bool remove_session(int parent, const char *name, int dfd)
{
	struct dirent *e;
	DIR *d = walk(dfd);

	if (!d)
		return false;
	while ((e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))
			unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0) {
		pr_debug("app: stale session %s not removed: %s", name,
			 strerror(errno));
		return false;
	}
	return true;
}

/* A recorder's session directory perfring-XXXXXX in @bfd. */
static bool reclaim_recorder_session(int bfd, const char *name)
{
	struct stat st;
	int dfd = open_private_dir(bfd, name, &st);
	bool gone = false;

	if (dfd < 0)
		return false;
	/* Its recorder holds LOCK_EX for the whole session; ours is held
	 * until the directory is gone, so no new recorder can pick it. */
	if (!flock(dfd, LOCK_EX | LOCK_NB) && !session_in_use(dfd, &st, true))
		gone = remove_session(bfd, name, dfd);
	close(dfd);
	return gone;
}

/* Programs' own sessions <bfd>/<name>/<pid>. */
static int reclaim_program_sessions(int bfd, const char *name)
{
	struct stat st;
	struct dirent *e;
	int ufd = open_private_dir(bfd, name, &st), n = 0;
	DIR *d;

	if (ufd < 0)
		return 0;
	d = walk(ufd);
	if (!d) {
		close(ufd);
		return 0;
	}
	while ((e = readdir(d))) {
		int dfd;

		if (!all_digits(e->d_name, strlen(e->d_name)))
			continue;
		dfd = open_private_dir(ufd, e->d_name, &st);
		if (dfd < 0)
			continue;
		/* The program made it after it started: its ctime (the
		 * last change, never before the making) is no earlier. */
		if (!proc_may_have_made((pid_t)atol(e->d_name), &st.st_ctim) &&
		    !session_in_use(dfd, &st, false) &&
		    remove_session(ufd, e->d_name, dfd))
			n++;
		close(dfd);
	}
	closedir(d);
	close(ufd);
	return n;
}

int app_session_reclaim_stale(const char *base)
{
	char self[32];
	struct dirent *e;
	int bfd, recorders = 0, programs = 0;
	DIR *d;

	snprintf(self, sizeof(self), SESSION_PREFIX "%u", (unsigned)geteuid());
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	d = walk(bfd);
	if (!d) {
		int err = -errno;

		close(bfd);
		return err;
	}
	while ((e = readdir(d))) {
		const char *n = e->d_name, *x;
		bool made_by_mkdtemp;

		if (strncmp(n, SESSION_PREFIX, strlen(SESSION_PREFIX)))
			continue;
		x = n + strlen(SESSION_PREFIX);
		made_by_mkdtemp = strlen(x) == 6;
		/* Our programs' sessions; a recorder's directory with the
		 * same name (mkdtemp made six digits) is left alone. */
		if (!strcmp(n, self)) {
			programs += reclaim_program_sessions(bfd, n);
			continue;
		}
		/* mkdtemp's six letters and digits */
		for (int i = 0; made_by_mkdtemp && i < 6; i++)
			made_by_mkdtemp = isalnum((unsigned char)x[i]);
		if (made_by_mkdtemp && reclaim_recorder_session(bfd, n))
			recorders++;
	}
	closedir(d);
	close(bfd);
	if (recorders)
		pr_warn("reclaimed %d session director%s of killed recorders in %s",
			recorders, recorders == 1 ? "y" : "ies", base);
	if (programs)
		pr_info("reclaimed %d session director%s of programs that ended in %s/%s",
			programs, programs == 1 ? "y" : "ies", base, self);
	return recorders + programs;
}
