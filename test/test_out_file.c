// SPDX-License-Identifier: MIT
/*
 * Output files (src/format/out_file.c, perfring_file_create()): each case
 * of out_file.h on real files (nothing there, a regular file kept as .old
 * or replaced, links, a directory, a FIFO, /dev/null, a socket, a hard
 * link, reuse of the .old), then a race: a thread keeps putting a
 * symbolic link to a target, a hard link to a bait file and nothing at the
 * path while outputs are opened there.  No descriptor may lead to the
 * target or the bait, every one must be a fresh file (one link, 0600,
 * ours), refusals must be the documented ones, and the target and bait
 * must keep their bytes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <perfring/tools.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "format/out_file.h"
#include "harness.h"

static char dir[64];

static const char *at(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
	close(fd);
	chmod(path, mode);
}

static bool holds(const char *path, const char *text)
{
	char buf[256] = { 0 };
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == (ssize_t)strlen(text) && !memcmp(buf, text, (size_t)n);
}

/* A descriptor of a file we just made: regular, one link, 0600, ours. */
static void fresh(int fd, const char *what)
{
	struct stat st;

	CHECK(fd >= 0, "%s: %s", what, strerror(-fd));
	CHECK(!fstat(fd, &st), "fstat");
	CHECK(S_ISREG(st.st_mode), "%s: not a regular file", what);
	CHECK(st.st_nlink == 1, "%s: %ju links", what, (uintmax_t)st.st_nlink);
	CHECK((st.st_mode & 07777) == 0600, "%s: mode %o", what,
	      st.st_mode & 07777);
	CHECK(st.st_uid == geteuid(), "%s: owner %u", what,
	      (unsigned)st.st_uid);
	CHECK(st.st_size == 0, "%s: not empty", what);
}

static void cases(void)
{
	struct stat st, st2;
	int fd, rd;

	/* nothing there */
	fd = out_file_open(at("a"), OUT_FILE_KEEP_OLD | OUT_FILE_SEEKABLE);
	fresh(fd, "new file");
	CHECK(write(fd, "first", 5) == 5, "write");
	CHECK(pwrite(fd, "F", 1, 0) == 1, "a seekable output is seekable");
	close(fd);
	/* a regular file: kept as .old */
	fd = out_file_open(at("a"), OUT_FILE_KEEP_OLD | OUT_FILE_SEEKABLE);
	fresh(fd, "over a file");
	close(fd);
	CHECK(holds(at("a.old"), "First"), "a.old is not the previous file");
	/* without KEEP_OLD: replaced, the old inode not written (a hard
	 * link elsewhere keeps it) */
	put(at("b-elsewhere"), "keep", 0644);
	CHECK(!link(at("b-elsewhere"), at("b")), "link");
	fd = out_file_open(at("b"), 0);
	fresh(fd, "over a hard link");
	CHECK(write(fd, "new", 3) == 3, "write");
	close(fd);
	CHECK(holds(at("b-elsewhere"), "keep"),
	      "the hard-linked file was written");
	CHECK(access(at("b.old"), F_OK) && errno == ENOENT, "b.old made");
	/* links, whatever they point to */
	put(at("target"), "precious", 0644);
	CHECK(!symlink(at("target"), at("l")), "symlink");
	CHECK_EQ(out_file_open(at("l"), OUT_FILE_KEEP_OLD), -ELOOP);
	CHECK_EQ(perfring_file_create(at("l"), 0), -ELOOP);
	CHECK(holds(at("target"), "precious"), "target written");
	CHECK(!lstat(at("l"), &st) && S_ISLNK(st.st_mode), "link gone");
	CHECK(!symlink(at("nowhere"), at("dangling")), "symlink");
	CHECK_EQ(out_file_open(at("dangling"), 0), -ELOOP);
	CHECK(access(at("nowhere"), F_OK) && errno == ENOENT,
	      "a dangling link's target was created");
	CHECK(!symlink("/dev/null", at("devnull-link")), "symlink");
	CHECK_EQ(out_file_open(at("devnull-link"), 0), -ELOOP);
	/* a directory, a socket */
	CHECK(!mkdir(at("d"), 0700), "mkdir");
	CHECK_EQ(out_file_open(at("d"), OUT_FILE_KEEP_OLD), -EISDIR);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("sock"));
		CHECK(s >= 0 && !bind(s, (struct sockaddr *)&sa, sizeof(sa)),
		      "bind: %s", strerror(errno));
		CHECK_EQ(out_file_open(at("sock"), OUT_FILE_KEEP_OLD), -EEXIST);
		close(s);
	}
	/* a FIFO of ours: sequential outputs only */
	CHECK(!mkfifo(at("fifo"), 0600), "mkfifo");
	CHECK_EQ(out_file_open(at("fifo"), OUT_FILE_SEEKABLE), -ESPIPE);
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	CHECK(rd >= 0, "fifo reader");
	fd = out_file_open(at("fifo"), OUT_FILE_KEEP_OLD);
	CHECK(fd >= 0 && !fstat(fd, &st) && S_ISFIFO(st.st_mode),
	      "our FIFO: %d", fd);
	CHECK(write(fd, "x", 1) == 1 && read(rd, &st, 1) == 1, "fifo data");
	close(fd);
	close(rd);
	CHECK(access(at("fifo.old"), F_OK), "a FIFO was renamed");
	if (!geteuid()) {
		/* another user's FIFO could read what we write */
		CHECK(!chown(at("fifo"), 65534, 65534), "chown");
		CHECK_EQ(out_file_open(at("fifo"), 0), -EPERM);
	}
	/* /dev/null */
	CHECK_EQ(out_file_open("/dev/null", OUT_FILE_SEEKABLE), -ESPIPE);
	fd = perfring_file_create("/dev/null", PERFRING_FILE_KEEP_OLD);
	CHECK(fd >= 0 && !fstat(fd, &st) && S_ISCHR(st.st_mode), "/dev/null");
	close(fd);
	CHECK(!stat("/dev/null", &st) && S_ISCHR(st.st_mode), "/dev/null");
	/* reuse of the .old that goes: its pages, its inode */
	put(at("r"), "second", 0600);
	put(at("r.old"), "first", 0600);
	CHECK(!stat(at("r.old"), &st), "stat");
	fd = out_file_open(at("r"), OUT_FILE_KEEP_OLD | OUT_FILE_REUSE_OLD |
					    OUT_FILE_SEEKABLE);
	CHECK(fd >= 0 && !fstat(fd, &st2), "reuse: %d", fd);
	CHECK(st2.st_ino == st.st_ino, "the .old was not reused");
	CHECK((st2.st_mode & 07777) == 0600 && st2.st_nlink == 1, "reuse mode");
	close(fd);
	CHECK(holds(at("r.old"), "second"), "r.old is not the previous file");
	/* ... never one with another link (someone else's data) */
	put(at("s"), "second", 0600);
	put(at("s-elsewhere"), "theirs", 0600);
	CHECK(!link(at("s-elsewhere"), at("s.old")), "link");
	fd = out_file_open(at("s"), OUT_FILE_KEEP_OLD | OUT_FILE_REUSE_OLD |
					    OUT_FILE_SEEKABLE);
	fresh(fd, "no reuse of a linked .old");
	close(fd);
	CHECK(holds(at("s-elsewhere"), "theirs"), "a linked .old was reused");
	CHECK(holds(at("s.old"), "second"), "s.old is not the previous file");
	/* names */
	{
		char longp[PATH_MAX];

		memset(longp, 'x', sizeof(longp) - 3);
		longp[sizeof(longp) - 3] = 0;
		CHECK_EQ(out_file_open(longp, OUT_FILE_KEEP_OLD),
			 -ENAMETOOLONG);
	}
	CHECK_EQ(out_file_open("", 0), -EINVAL);
	CHECK_EQ(perfring_file_create(at("z"), 0x100), -EINVAL);
}

static atomic_bool stop;
/* Own copies: at()'s buffers are reused and not for threads. */
static char race_path[PATH_MAX], target_path[PATH_MAX], bait_path[PATH_MAX];

static void *attacker(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		if (i % 2)
			symlink(target_path, race_path);
		else
			link(bait_path, race_path);
		unlink(race_path);
		/* and a link at what becomes .old */
		if (i % 7 == 0) {
			char old[PATH_MAX + 8];

			snprintf(old, sizeof(old), "%s.old", race_path);
			unlink(old);
			symlink(target_path, old);
		}
	}
	return NULL;
}

static void race(void)
{
	struct stat tst, bst;
	unsigned made = 0, loops = 0, exists = 0;
	pthread_t t;

	snprintf(race_path, sizeof(race_path), "%s", at("race"));
	snprintf(target_path, sizeof(target_path), "%s", at("target"));
	snprintf(bait_path, sizeof(bait_path), "%s", at("bait"));
	put(bait_path, "bait", 0644);
	CHECK(!stat(target_path, &tst) && !stat(bait_path, &bst), "stat");
	CHECK(!pthread_create(&t, NULL, attacker, NULL), "thread");
	for (int i = 0; i < 20000; i++) {
		unsigned int fl = i % 2 ? OUT_FILE_KEEP_OLD : 0;
		int fd = out_file_open(race_path, fl | OUT_FILE_SEEKABLE);
		struct stat st;

		if (fd < 0) {
			CHECK(fd == -ELOOP || fd == -EEXIST, "refused with %s",
			      strerror(-fd));
			loops += fd == -ELOOP;
			exists += fd == -EEXIST;
			continue;
		}
		CHECK(!fstat(fd, &st), "fstat");
		CHECK(st.st_ino != tst.st_ino && st.st_ino != bst.st_ino,
		      "opened the %s",
		      st.st_ino == tst.st_ino ? "target" : "bait");
		CHECK(S_ISREG(st.st_mode) && st.st_nlink <= 1 &&
			      (st.st_mode & 07777) == 0600 && st.st_size == 0,
		      "not a fresh file: nlink %ju mode %o size %jd",
		      (uintmax_t)st.st_nlink, st.st_mode & 07777,
		      (intmax_t)st.st_size);
		CHECK(write(fd, "victim", 6) == 6, "write");
		close(fd);
		made++;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	CHECK(holds(target_path, "precious"), "the link's target was written");
	CHECK(holds(bait_path, "bait"), "the hard-linked bait was written");
	printf("race: 20000 opens against a thread swapping links: %u new files, %u links refused, %u gave up (EEXIST)\n",
	       made, loops, exists);
}

int main(void)
{
	umask(022);
	snprintf(dir, sizeof(dir), "%s", test_tmpdir("outfile"));
	cases();
	rmdir(at("d"));
	printf("cases: new, .old, replace, links, directory, socket, FIFO, /dev/null, reuse, names\n");
	race();
	return 0;
}
