// SPDX-License-Identifier: MIT
/*
 * Stale session directories (app_session_reclaim_stale(), stale.h) in a
 * base directory of the test's own, with real processes for the owners: a
 * child that holds the locks a live recorder or program holds (flock on
 * the directory, the producer's OFD lock on a ring) and lives until told,
 * and the pid of a child that has exited for the dead.  What must go: a
 * recorder's directory whose recorder is dead, one whose recorder.pid
 * names a live process that started after the file was written (a reused
 * pid), a program's own session whose program is gone.  What must stay:
 * everything a live process may use, directories without a recorder.pid
 * that are being made, anything open to others, another user's, a link,
 * names that are not ours; a directory holding more than files keeps
 * whatever is not a file.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "sources/stale.h"
#include "harness.h"

static char base[64];

static const char *at(const char *fmt, ...) PR_PRINTF(1, 2);
static const char *at(const char *fmt, ...)
{
	static char buf[8][PATH_MAX];
	static int i;
	char *p = buf[i++ % 8], rel[PATH_MAX - 80];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(p, PATH_MAX, "%s/%s", base, rel);
	return p;
}

static void file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
	close(fd);
}

static void session(const char *path, mode_t mode)
{
	CHECK(!mkdir(path, 0700) && !chmod(path, mode), "mkdir %s: %s", path,
	      strerror(errno));
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* A process that has exited (and been waited for): its pid is free. */
static pid_t dead_pid(void)
{
	pid_t p = fork();

	CHECK(p >= 0, "fork");
	if (!p)
		_exit(0);
	CHECK(waitpid(p, NULL, 0) == p, "waitpid");
	return p;
}

/* A live owner: holds flock on @locked_dir and the producer lock (OFD,
 * byte 0) on @ring until @release is closed.  Returns once it holds them. */
static pid_t holder(const char *locked_dir, const char *ring, int *release)
{
	int go[2], ready[2];
	pid_t p;
	char c;

	CHECK(!pipe(go) && !pipe(ready), "pipe");
	p = fork();
	CHECK(p >= 0, "fork");
	if (!p) {
		struct flock fl = { .l_type = F_WRLCK,
				    .l_whence = SEEK_SET,
				    .l_start = 0,
				    .l_len = 1 };
		int d = open(locked_dir, O_RDONLY | O_DIRECTORY);
		int r = open(ring, O_RDWR);

		close(go[1]);
		if (d < 0 || flock(d, LOCK_EX) || r < 0 ||
		    fcntl(r, F_OFD_SETLK, &fl))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		(void)!read(go[0], &c, 1); /* until the parent closes it */
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1, "the holder could not lock");
	close(ready[0]);
	*release = go[1];
	return p;
}

int main(void)
{
	char self[64], pidtxt[32];
	struct timespec old[2];
	pid_t dead = dead_pid(), live;
	int release, n;

	snprintf(base, sizeof(base), "%s", test_tmpdir("reclaim"));
	snprintf(self, sizeof(self), "perfring-%u", (unsigned)geteuid());

	/* a recorder killed: recorder.pid dead, its program's files */
	session(at("perfring-Dead01"), 0700);
	snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)dead);
	file(at("perfring-Dead01/recorder.pid"), pidtxt);
	file(at("perfring-Dead01/%d.events", (int)dead), "1 a:b u64 x\n");
	file(at("perfring-Dead01/%d-%d.ring", (int)dead, (int)dead), "ring");
	CHECK(!mkfifo(at("perfring-Dead01/%d-%d.ring.wake", (int)dead,
			 (int)dead),
		      0600),
	      "mkfifo");
	/* a live recorder holds the directory's flock */
	session(at("perfring-Lock01"), 0700);
	file(at("perfring-Lock01/recorder.pid"), pidtxt);
	/* the recorder died, its program still writes a ring */
	session(at("perfring-Ring01"), 0700);
	file(at("perfring-Ring01/recorder.pid"), pidtxt);
	file(at("perfring-Ring01/1-1.ring"), "ring");
	live = holder(at("perfring-Lock01"), at("perfring-Ring01/1-1.ring"),
		      &release);
	/* ... or has declared events, no ring yet */
	session(at("perfring-Evnt01"), 0700);
	file(at("perfring-Evnt01/recorder.pid"), pidtxt);
	file(at("perfring-Evnt01/%d.events", (int)live), "1 a:b u64 x\n");
	/* recorder.pid names a live process that started after it was
	 * written (a reused pid), and one that may have written it */
	snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)live);
	session(at("perfring-Reus01"), 0700);
	file(at("perfring-Reus01/recorder.pid"), pidtxt);
	clock_gettime(CLOCK_REALTIME, &old[0]);
	old[0].tv_sec -= 3600;
	old[1] = old[0];
	CHECK(!utimensat(AT_FDCWD, at("perfring-Reus01/recorder.pid"), old, 0),
	      "utimensat");
	session(at("perfring-Live01"), 0700);
	file(at("perfring-Live01/recorder.pid"), pidtxt);
	/* being made: no recorder.pid yet */
	session(at("perfring-Young1"), 0700);
	/* open to others, another user's, a link, other names */
	session(at("perfring-Mode01"), 0755);
	file(at("perfring-Mode01/f"), "x");
	session(at("elsewhere"), 0700);
	file(at("elsewhere/f"), "x");
	CHECK(!symlink(at("elsewhere"), at("perfring-Link01")), "symlink");
	session(at("perfring-Nobod1"), 0700);
	if (!geteuid())
		CHECK(!chown(at("perfring-Nobod1"), 65534, 65534), "chown");
	session(at("perfring-abc"), 0700);
	session(at("notperfring-Dead02"), 0700);
	/* stale, but holding a directory: files go, the rest stays */
	session(at("perfring-Subd01"), 0700);
	snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)dead);
	file(at("perfring-Subd01/recorder.pid"), pidtxt);
	session(at("perfring-Subd01/sub"), 0700);
	/* programs' own sessions */
	session(at("%s", self), 0700);
	session(at("%s/%d", self, (int)dead), 0700);
	file(at("%s/%d/%d.events", self, (int)dead, (int)dead),
	     "1 a:b u64 x\n");
	session(at("%s/%d", self, (int)live), 0700);
	session(at("%s/notapid", self), 0700);

	n = app_session_reclaim_stale(base);
	CHECK_EQ(n, 3);
	CHECK(!exists(at("perfring-Dead01")),
	      "a dead recorder's directory stayed");
	CHECK(!exists(at("perfring-Reus01")), "a reused pid kept a directory");
	CHECK(!exists(at("%s/%d", self, (int)dead)),
	      "a dead program's session stayed");
	CHECK(exists(at("perfring-Lock01/recorder.pid")),
	      "a locked directory was reclaimed");
	CHECK(exists(at("perfring-Ring01/1-1.ring")),
	      "a ring in use was reclaimed");
	CHECK(exists(at("perfring-Evnt01/%d.events", (int)live)),
	      "a live program's session was reclaimed");
	CHECK(exists(at("perfring-Live01/recorder.pid")),
	      "a live recorder.pid was reclaimed");
	CHECK(exists(at("perfring-Young1")),
	      "a directory being made was reclaimed");
	CHECK(exists(at("perfring-Mode01/f")),
	      "a directory open to others was touched");
	CHECK(exists(at("elsewhere/f")) && exists(at("perfring-Link01")),
	      "a link was followed");
	CHECK(exists(at("perfring-Nobod1")) && exists(at("perfring-abc")) &&
		      exists(at("notperfring-Dead02")),
	      "a directory not ours was removed");
	CHECK(exists(at("perfring-Subd01/sub")) &&
		      !exists(at("perfring-Subd01/recorder.pid")),
	      "a stale directory with a subdirectory: files not removed, or the subdirectory");
	CHECK(exists(at("%s/%d", self, (int)live)) &&
		      exists(at("%s/notapid", self)),
	      "a live program's own session was reclaimed");
	CHECK_EQ(app_session_reclaim_stale(base), 0);

	/* The owner dies: its locks go, everything it held is stale. */
	close(release);
	CHECK(waitpid(live, NULL, 0) == live, "waitpid");
	n = app_session_reclaim_stale(base);
	CHECK_EQ(n, 5); /* Lock01, Ring01, Evnt01, Live01, self/<live> */
	CHECK(!exists(at("perfring-Lock01")) &&
		      !exists(at("perfring-Ring01")) &&
		      !exists(at("perfring-Evnt01")) &&
		      !exists(at("perfring-Live01")) &&
		      !exists(at("%s/%d", self, (int)live)),
	      "the dead owner's directories stayed");
	CHECK(exists(at("perfring-Young1")) && exists(at("perfring-Mode01/f")),
	      "the others were touched");
	CHECK_EQ(app_session_reclaim_stale("/nonexistent-perfring"), -ENOENT);
	printf("reclaim: 3 stale directories of 16 removed, 5 more once their owner died; live, young, open, foreign, linked ones kept\n");

	/* the harness removes files only */
	rmdir(at("perfring-Subd01/sub"));
	rmdir(at("perfring-Subd01"));
	rmdir(at("perfring-Young1"));
	rmdir(at("perfring-Nobod1"));
	rmdir(at("perfring-abc"));
	rmdir(at("notperfring-Dead02"));
	rmdir(at("%s/notapid", self));
	rmdir(at("%s", self));
	unlink(at("perfring-Mode01/f"));
	rmdir(at("perfring-Mode01"));
	unlink(at("elsewhere/f"));
	rmdir(at("elsewhere"));
	return 0;
}
