// SPDX-License-Identifier: MIT
/*
 * perfring_ring_attach() refuses wrong files, each with its errno and a log
 * message naming the file and what is wrong: missing file, symlink
 * (O_NOFOLLOW), directory, FIFO, too small, wrong magic, magic 0 (still
 * being created), wrong ABI version / ext size, truncated or extended,
 * data_size not a power of two, unknown flags, page size mismatch, commit
 * area or wake-up settings that do not match, missing or wrong wake-up
 * FIFO.  Creation: -EEXIST over an existing path (and over a stale FIFO,
 * leaving nothing behind), mode 0600 whatever the umask; a ring left by a
 * process that is gone replaced, other leftovers refused with what to
 * remove.  Roles: a second
 * single producer or a second consumer gets -EBUSY, in this process or
 * another; MP producers share; a destroyed or dead holder frees the role.
 * perfring_ring_attach_fd() on a memfd ring from a forked child.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 74

static size_t page;
static const char *dir; /* test_tmpdir() */
static int serial;

/* ---- log capture ------------------------------------------------------ */

static char logs[4096];

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	size_t n = strlen(logs);

	(void)level;
	(void)ctx;
	snprintf(logs + n, sizeof(logs) - n, "%s\n", msg);
}

static void log_expect(const char *a, const char *b)
{
	CHECK(logs[0], "nothing logged (want \"%s\")", a);
	CHECK(strstr(logs, a) != NULL, "log \"%s\" lacks \"%s\"", logs, a);
	if (b)
		CHECK(strstr(logs, b) != NULL, "log \"%s\" lacks \"%s\"", logs,
		      b);
}

/* ---- ring files ----------------------------------------------------------- */

static void new_path(char *path, size_t len, const char *what)
{
	snprintf(path, len, "%s/%s-%d", dir, what, serial++);
}

/* A valid ring file (and its FIFO) with no live handle. */
static void make_ring_file(const char *path, uint64_t data_size,
			   unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .path = path,
		      .data_size = data_size, .flags = flags);
	struct perfring_ring *r;
	int err = perfring_ring_create(&o, &r);

	CHECK(err == 0, "create %s: %d", path, err);
	perfring_ring_destroy(r);
}

static void pwrite_at(const char *path, const void *buf, size_t len, off_t off)
{
	int fd = open(path, O_RDWR);

	CHECK(fd >= 0, "open %s", path);
	CHECK(pwrite(fd, buf, len, off) == (ssize_t)len, "pwrite %s", path);
	close(fd);
}

static void put_u32(const char *path, off_t off, uint32_t v)
{
	pwrite_at(path, &v, sizeof(v), off);
}

static void put_u64(const char *path, off_t off, uint64_t v)
{
	pwrite_at(path, &v, sizeof(v), off);
}

#define EXT(field) (PERFRING_EXT_OFFSET + offsetof(struct perfring_ext, field))
#define PC(field) offsetof(struct perf_event_mmap_page, field)

/* Attaching @path as @role must fail with @err, logging @a (and @b). */
static void refuse(const char *path, enum perfring_role role, int err,
		   const char *a, const char *b)
{
	struct perfring_ring *r = (struct perfring_ring *)&r;
	int got;

	logs[0] = 0;
	got = perfring_ring_attach(path, role, &r);
	CHECK(got == err, "attach %s: %d (%s), want %d (%s); log: %s", path,
	      got, strerror(-got), err, strerror(-err), logs);
	CHECK(r == NULL, "*out not NULL after a refusal");
	log_expect(path, NULL);
	log_expect(a, b);
}

static void attach_ok(const char *path, enum perfring_role role)
{
	struct perfring_ring *r;
	int err;

	logs[0] = 0;
	err = perfring_ring_attach(path, role, &r);
	CHECK(err == 0, "attach %s: %d; log: %s", path, err, logs);
	perfring_ring_destroy(r);
}

static void bad_files(void)
{
	char path[512], other[600];
	uint64_t size = 2 * page;

	/* Nonexistent. */
	new_path(path, sizeof(path), "none");
	refuse(path, PERFRING_ROLE_CONSUMER, -ENOENT, "cannot open", NULL);

	/* A symlink to a valid ring. */
	new_path(path, sizeof(path), "ring");
	make_ring_file(path, size, 0);
	attach_ok(path, PERFRING_ROLE_BOTH);
	new_path(other, sizeof(other), "link");
	CHECK_EQ(symlink(path, other), 0);
	refuse(other, PERFRING_ROLE_CONSUMER, -ELOOP, "cannot open", NULL);
	CHECK_EQ(unlink(other), 0);

	/* The ring's wake-up FIFO is not a ring. */
	snprintf(other, sizeof(other), "%s.wake", path);
	refuse(other, PERFRING_ROLE_CONSUMER, -EINVAL, "not a regular file",
	       NULL);
	CHECK_EQ(perfring_ring_remove(path), 0);

	/* A directory. */
	refuse(dir, PERFRING_ROLE_CONSUMER, -EISDIR, "cannot open", NULL);

	/* Too small: empty, a few bytes, less than the control struct. */
	{
		static const size_t lens[] = {
			0, 100, sizeof(struct perf_event_mmap_page) - 1
		};

		for (size_t i = 0; i < 3; i++) {
			int fd;

			new_path(path, sizeof(path), "small");
			fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
			CHECK(fd >= 0, "create %s", path);
			CHECK_EQ(ftruncate(fd, (off_t)lens[i]), 0);
			close(fd);
			refuse(path, PERFRING_ROLE_CONSUMER, -EINVAL,
			       "too small", NULL);
			unlink(path);
		}
	}

	/* A page of zeros: magic 0, "being created". */
	{
		int fd;

		new_path(path, sizeof(path), "zeros");
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		CHECK(fd >= 0, "create %s", path);
		CHECK_EQ(ftruncate(fd, (off_t)(page + size)), 0);
		close(fd);
		refuse(path, PERFRING_ROLE_CONSUMER, -EAGAIN, "magic", NULL);
		unlink(path);
	}

	/* Field by field, starting from a valid ring each time. */
	struct {
		const char *what;
		off_t off;
		int is64;
		uint64_t value;
		int err;
		const char *log;
	} cases[] = {
		{ "magic0", EXT(magic), 1, 0, -EAGAIN, "still being created" },
		{ "magic", EXT(magic), 1, PERFRING_MAGIC ^ 0x20, -EINVAL,
		  "magic" },
		{ "abi", EXT(abi_version), 0, PERFRING_ABI_VERSION + 1, -EPROTO,
		  "ABI version" },
		{ "abi0", EXT(abi_version), 0, 0, -EPROTO, "ABI version" },
		{ "extsize", EXT(ext_size), 0, 128, -EPROTO, "ABI version" },
		{ "pagesize", EXT(page_size), 0, 2 * page, -EINVAL,
		  "page size" },
		{ "dataoff", PC(data_offset), 1, 2 * page, -EINVAL,
		  "page size" },
		{ "pow2", PC(data_size), 1, 3 * page, -EINVAL, "data_size" },
		{ "tiny", PC(data_size), 1, page / 2, -EINVAL, "data_size" },
		{ "zero", PC(data_size), 1, 0, -EINVAL, "data_size" },
		{ "big", PC(data_size), 1, 1ull << 62, -EINVAL, "data_size" },
		{ "flags", EXT(flags), 0, 0x4, -EINVAL, "flags" },
		{ "flags3", EXT(flags), 0, 0x3, -EINVAL, "flags" },
		{ "flagsmsb", EXT(flags), 0, 0x80000000u, -EINVAL, "flags" },
		{ "mp", EXT(flags), 0, PERFRING_MODE_MULTI_PRODUCER, -EINVAL,
		  "commit area" },
		{ "commit", EXT(commit_size), 1, 8, -EINVAL, "commit area" },
		{ "wm0", EXT(watermark), 1, 0, -EINVAL, "wake-up" },
		{ "wmbig", EXT(watermark), 1, 4 * page, -EINVAL, "wake-up" },
		{ "wmode", EXT(wakeup_mode), 0, 7, -EINVAL, "wake-up" },
		{ "wev0", EXT(wakeup_mode), 0, PERFRING_WAKE_EVENTS, -EINVAL,
		  "wake-up" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		new_path(path, sizeof(path), cases[i].what);
		make_ring_file(path, size, 0);
		if (cases[i].is64)
			put_u64(path, cases[i].off, cases[i].value);
		else
			put_u32(path, cases[i].off, (uint32_t)cases[i].value);
		refuse(path, PERFRING_ROLE_CONSUMER, cases[i].err, cases[i].log,
		       NULL);
		refuse(path, PERFRING_ROLE_PRODUCER, cases[i].err, cases[i].log,
		       NULL);
		CHECK_EQ(perfring_ring_remove(path), 0);
	}

	/* Truncated or extended. */
	{
		static const int64_t deltas[] = { -(int64_t)4096, -8, 1, 4096,
						  1 << 20 };

		for (size_t i = 0; i < 5; i++) {
			char want[64];
			off_t len = (off_t)(page + size +
					    deltas[i] * (int64_t)page / 4096);

			if (deltas[i] == -8 || deltas[i] == 1)
				len = (off_t)(page + size) + deltas[i];
			new_path(path, sizeof(path), "resized");
			make_ring_file(path, size, 0);
			CHECK_EQ(truncate(path, len), 0);
			snprintf(want, sizeof(want), "file is %lld bytes",
				 (long long)len);
			refuse(path, PERFRING_ROLE_CONSUMER, -EINVAL, want,
			       "needs");
			CHECK_EQ(perfring_ring_remove(path), 0);
		}
		/* A multi-producer ring without its commit area. */
		new_path(path, sizeof(path), "mpshort");
		make_ring_file(path, size, PERFRING_MODE_MULTI_PRODUCER);
		attach_ok(path, PERFRING_ROLE_PRODUCER);
		CHECK_EQ(truncate(path, (off_t)(page + size)), 0);
		refuse(path, PERFRING_ROLE_PRODUCER, -EINVAL, "needs", NULL);
		CHECK_EQ(perfring_ring_remove(path), 0);
	}

	/* Owned by somebody else (checked as another user: root may). */
	new_path(path, sizeof(path), "owner");
	make_ring_file(path, size, 0);
	attach_ok(path, PERFRING_ROLE_BOTH);
	CHECK_EQ(chmod(path, 0666), 0);
	CHECK_EQ(chown(path, 65534, 65534), 0);
	CHECK_EQ(chmod(dir, 0711), 0);
	{
		pid_t pid = fork();
		int status;

		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			struct perfring_ring *r;
			int err;

			if (setgid(54321) || setuid(54321))
				_exit(100);
			logs[0] = 0;
			err = perfring_ring_attach(path, PERFRING_ROLE_CONSUMER,
						   &r);
			if (err != -EPERM)
				_exit(1);
			if (!strstr(logs, "owned by uid 65534") ||
			    !strstr(logs, path))
				_exit(2);
			_exit(0);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status), "child died");
		if (WEXITSTATUS(status) == 100)
			fprintf(stderr,
				"note: cannot setuid, owner check not tested\n");
		else
			CHECK(WEXITSTATUS(status) == 0,
			      "attach of a ring owned by another user: child check %d failed",
			      WEXITSTATUS(status));
	}
	CHECK_EQ(chmod(dir, 0700), 0);
	CHECK_EQ(perfring_ring_remove(path), 0);

	/* The wake-up FIFO missing, or not a FIFO. */
	new_path(path, sizeof(path), "nofifo");
	make_ring_file(path, size, 0);
	snprintf(other, sizeof(other), "%s.wake", path);
	CHECK_EQ(unlink(other), 0);
	refuse(path, PERFRING_ROLE_CONSUMER, -ENOENT, "wake-up FIFO", other);
	{
		int fd = open(other, O_RDWR | O_CREAT | O_EXCL, 0600);

		CHECK(fd >= 0, "create %s", other);
		close(fd);
	}
	refuse(path, PERFRING_ROLE_CONSUMER, -EINVAL, "not a FIFO", other);
	/* The refusals did not keep the role: fix the FIFO, attach. */
	CHECK_EQ(unlink(other), 0);
	CHECK_EQ(mkfifo(other, 0600), 0);
	attach_ok(path, PERFRING_ROLE_BOTH);
	CHECK_EQ(perfring_ring_remove(path), 0);

	/* Removed: gone, and so is the FIFO. */
	CHECK_EQ(access(path, F_OK), -1);
	CHECK_EQ(access(other, F_OK), -1);
	refuse(path, PERFRING_ROLE_CONSUMER, -ENOENT, "cannot open", NULL);
	CHECK_EQ(perfring_ring_remove(path), -ENOENT);
}

static void creation(void)
{
	char path[512], wake[600];
	PERFRING_OPTS(perfring_ring_opts, o, .path = path, .data_size = page);
	struct perfring_ring *r, *r2;
	struct stat st;
	mode_t old;

	new_path(path, sizeof(path), "mode");
	snprintf(wake, sizeof(wake), "%s.wake", path);
	old = umask(0); /* 0600 must come from the library, not the umask */
	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	umask(old);
	CHECK_EQ(lstat(path, &st), 0);
	CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
	      "ring file mode %o", (unsigned)st.st_mode);
	CHECK_EQ(st.st_size, (off_t)(2 * page));
	CHECK_EQ(lstat(wake, &st), 0);
	CHECK(S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == 0600,
	      "wake FIFO mode %o", (unsigned)st.st_mode);

	/* Over an existing path. */
	logs[0] = 0;
	r2 = (struct perfring_ring *)&r2;
	CHECK_EQ(perfring_ring_create(&o, &r2), -EEXIST);
	CHECK(r2 == NULL, "*out not NULL");
	log_expect(path, "cannot create");
	/* The existing ring is untouched. */
	CHECK_EQ(lstat(path, &st), 0);
	CHECK_EQ(st.st_size, (off_t)(2 * page));
	perfring_ring_destroy(r);
	attach_ok(path, PERFRING_ROLE_BOTH);

	/* Over a symlink (even a dangling one): -EEXIST, not followed. */
	{
		char link[600];

		snprintf(link, sizeof(link), "%s/dangling-%d", dir, serial++);
		CHECK_EQ(symlink("/tmp/perfring-test-nowhere", link), 0);
		PERFRING_OPTS(perfring_ring_opts, o2, .path = link,
			      .data_size = page);
		CHECK_EQ(perfring_ring_create(&o2, &r2), -EEXIST);
		CHECK_EQ(access("/tmp/perfring-test-nowhere", F_OK), -1);
		CHECK_EQ(unlink(link), 0);
	}
	CHECK_EQ(perfring_ring_remove(path), 0);

	/* A stale FIFO without its ring: refused, and the half-made ring file
	 * does not stay behind. */
	new_path(path, sizeof(path), "stale");
	snprintf(wake, sizeof(wake), "%s.wake", path);
	CHECK_EQ(mkfifo(wake, 0600), 0);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_create(&o, &r2), -EEXIST);
	log_expect(wake, NULL);
	CHECK(access(path, F_OK) == -1,
	      "ring file left behind after a failed create");
	CHECK_EQ(access(wake, F_OK), 0); /* not ours to remove */
	log_expect("remove it", NULL);
	CHECK_EQ(unlink(wake), 0);
}

/*
 * A ring left behind by a process that is gone (never removed) is replaced
 * by the next create at its path, so a program runs twice; a ring whose
 * maker lives, a ring with a live handle and a file that is no ring stay,
 * and the message names what to remove.
 */
static void stale_rings(void)
{
	char path[512], wake[600];
	PERFRING_OPTS(perfring_ring_opts, o, .path = path, .data_size = page);
	struct perfring_ring *r, *r2;
	pid_t pid;
	int status, fd;

	new_path(path, sizeof(path), "dead-owner");
	snprintf(wake, sizeof(wake), "%s.wake", path);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *c;
		struct {
			struct perf_event_header h;
			uint64_t v;
		} rec = { { T_TYPE, 0, sizeof(rec) }, 1 };

		if (perfring_ring_create(&o, &c))
			_exit(1);
		perfring_ring_emit(c, &rec, sizeof(rec));
		_exit(0); /* neither destroyed nor removed */
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "child failed");
	CHECK_EQ(access(wake, F_OK), 0);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	log_expect("removed", "which is gone");
	{
		/* a new ring: empty, not the dead one's */
		const struct perf_event_header *h;

		perfring_read_begin(r);
		CHECK_EQ(perfring_read_next(r, &h), 0);
		perfring_read_end(r);
	}

	/* A live handle: untouched. */
	logs[0] = 0;
	CHECK_EQ(perfring_ring_create(&o, &r2), -EEXIST);
	log_expect("it is a ring in use", wake);
	perfring_ring_destroy(r);

	/* No handle, but its maker (this process) lives: it may come back
	 * to attach, so it stays. */
	logs[0] = 0;
	CHECK_EQ(perfring_ring_create(&o, &r2), -EEXIST);
	log_expect("the process that made it is alive",
		   "perfring_ring_remove()");
	attach_ok(path, PERFRING_ROLE_BOTH);
	CHECK_EQ(perfring_ring_remove(path), 0);

	/* Not a ring. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "create %s", path);
	CHECK_EQ(write(fd, "not a ring", 10), 10);
	close(fd);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_create(&o, &r2), -EEXIST);
	log_expect("it is not a ring", path);
	CHECK_EQ(unlink(path), 0);
	CHECK(access(wake, F_OK) == -1, "a wake FIFO made for a refused ring");
}

/* Attaches as @role in a child process; returns the child's result. */
static int attach_in_child(const char *path, enum perfring_role role)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *r;
		int err = perfring_ring_attach(path, role, &r);

		if (!err)
			perfring_ring_destroy(r);
		_exit(-err);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status), "child died");
	return -WEXITSTATUS(status);
}

static void roles(void)
{
	char path[512];
	PERFRING_OPTS(perfring_ring_opts, o, .path = path, .data_size = page);
	struct perfring_ring *r, *p, *c, *p2;

	new_path(path, sizeof(path), "roles");
	CHECK_EQ(perfring_ring_create(&o, &r), 0); /* role BOTH */
	refuse(path, PERFRING_ROLE_PRODUCER, -EBUSY, "live producer", NULL);
	refuse(path, PERFRING_ROLE_CONSUMER, -EBUSY, "live consumer", NULL);
	refuse(path, PERFRING_ROLE_BOTH, -EBUSY, "live", NULL);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_PRODUCER), -EBUSY);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_CONSUMER), -EBUSY);
	perfring_ring_destroy(r);

	/* Free now: one producer and one consumer, on separate handles. */
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	refuse(path, PERFRING_ROLE_PRODUCER, -EBUSY, "live producer", NULL);
	refuse(path, PERFRING_ROLE_CONSUMER, -EBUSY, "live consumer", NULL);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_PRODUCER), -EBUSY);
	{
		/* They work together. */
		struct perf_event_header h = { .type = T_TYPE, .size = 8 };
		const struct perf_event_header *rec;

		CHECK_EQ(perfring_ring_emit(p, &h, 8), 0);
		CHECK_EQ(perfring_read_begin(c), 8);
		CHECK_EQ(perfring_read_next(c, &rec), 8);
		CHECK_EQ(rec->type, T_TYPE);
		perfring_read_end(c);
		/* Each handle does only its role. */
		CHECK_EQ(perfring_ring_emit(c, &h, 8), -EINVAL);
		CHECK_EQ(perfring_read_begin(p), -EINVAL);
	}
	perfring_ring_destroy(p);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_PRODUCER), 0);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_CONSUMER), -EBUSY);
	perfring_ring_destroy(c);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_BOTH), 0);

	/* A new consumer carries on at data_tail; a new producer at
	 * data_head. */
	{
		struct perf_event_header h = { .type = T_TYPE, .size = 16 };
		unsigned char buf[16];
		const struct perf_event_header *rec;

		memcpy(buf, &h, 8);
		CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p),
			 0);
		for (uint64_t i = 0; i < 3; i++) {
			memcpy(buf + 8, &i, 8);
			CHECK_EQ(perfring_ring_emit(p, buf, 16), 0);
		}
		perfring_ring_destroy(p);
		CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c),
			 0);
		CHECK_EQ(perfring_read_begin(c), 48);
		for (uint64_t i = 0; i < 3; i++) {
			CHECK_EQ(perfring_read_next(c, &rec), 16);
			CHECK_EQ(((const uint64_t *)rec)[1], i);
			if (i == 1)
				break; /* leave the third */
		}
		perfring_read_end(c);
		perfring_ring_destroy(c);
		CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_BOTH, &c), 0);
		CHECK_EQ(perfring_read_begin(c), 16);
		CHECK_EQ(perfring_read_next(c, &rec), 16);
		CHECK_EQ(((const uint64_t *)rec)[1], 2);
		perfring_read_end(c);
		CHECK_EQ(perfring_ring_emit(c, buf, 16), 0);
		CHECK_EQ(perfring_ring_control(c)->data_head, 8 + 4 * 16);
		perfring_ring_destroy(c);
	}

	/* A holder that dies (SIGKILL, no cleanup) frees its role. */
	{
		int pfd[2];
		char ch;
		pid_t pid;

		CHECK_EQ(pipe(pfd), 0);
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			struct perfring_ring *cr;

			close(pfd[0]);
			if (perfring_ring_attach(path, PERFRING_ROLE_BOTH, &cr))
				_exit(1);
			if (write(pfd[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		CHECK_EQ(read(pfd[0], &ch, 1), 1);
		close(pfd[0]);
		refuse(path, PERFRING_ROLE_PRODUCER, -EBUSY, "live producer",
		       NULL);
		CHECK_EQ(kill(pid, SIGKILL), 0);
		CHECK_EQ(waitpid(pid, NULL, 0), pid);
		attach_ok(path, PERFRING_ROLE_BOTH);
	}
	CHECK_EQ(perfring_ring_remove(path), 0);

	/* Multi-producer: producers share, the consumer is still one. */
	PERFRING_OPTS(perfring_ring_opts, mo, .path = path, .data_size = page,
		      .flags = PERFRING_MODE_MULTI_PRODUCER);
	new_path(path, sizeof(path), "mproles");
	CHECK_EQ(perfring_ring_create(&mo, &r), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p), 0);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &p2), 0);
	CHECK_EQ(attach_in_child(path, PERFRING_ROLE_PRODUCER), 0);
	refuse(path, PERFRING_ROLE_CONSUMER, -EBUSY, "live consumer", NULL);
	refuse(path, PERFRING_ROLE_BOTH, -EBUSY, "live consumer", NULL);
	perfring_ring_destroy(r);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
	perfring_ring_destroy(p2);
	CHECK_EQ(perfring_ring_remove(path), 0);
}

/* A memfd ring passed to a forked child, which attaches by descriptor and
 * produces; the parent consumes. */
static void memfd_fork(unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = 64 * page,
		      .flags = flags, .role = PERFRING_ROLE_CONSUMER);
	struct perfring_ring *c;
	const struct perf_event_header *rec;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	uint64_t next = 0;
	const uint64_t N = 2000;
	pid_t pid;
	int status, sz;

	CHECK_EQ(perfring_ring_create(&o, &c), 0);
	/* Our consumer role is taken; a second consumer is refused. */
	{
		struct perfring_ring *x;

		CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(c),
						 perfring_ring_wait_fd(c),
						 PERFRING_ROLE_CONSUMER, &x),
			 -EBUSY);
	}
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct perfring_ring *p;
		int err = perfring_ring_attach_fd(perfring_ring_fd(c),
						  perfring_ring_wait_fd(c),
						  PERFRING_ROLE_PRODUCER, &p);

		if (err)
			_exit(10);
		for (uint64_t i = 0; i < N; i++) {
			struct {
				struct perf_event_header h;
				uint64_t seq;
				uint64_t pid;
			} x = { { T_TYPE, 0, sizeof(x) },
				i,
				(uint64_t)getpid() };

			if (perfring_ring_emit(p, &x, sizeof(x)))
				_exit(11);
		}
		perfring_ring_destroy(p);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child producer failed: status %#x", status);
	CHECK_EQ(perfring_read_begin(c), (int64_t)(N * 24));
	while ((sz = perfring_read_next(c, &rec)) > 0) {
		const uint64_t *w = (const uint64_t *)(rec + 1);

		CHECK_EQ(sz, 24);
		CHECK_EQ(rec->type, T_TYPE);
		CHECK_EQ(w[0], next);
		CHECK_EQ(w[1], (uint64_t)pid);
		next++;
	}
	CHECK_EQ(sz, 0);
	perfring_read_end(c);
	CHECK_EQ(next, N);
	CHECK_EQ(perfring_ring_stats(c, &st), 0);
	CHECK_EQ(st.head, N * 24);
	CHECK_EQ(st.tail, N * 24);
	CHECK_EQ(st.lost_total, 0);
	perfring_ring_destroy(c);
}

static void attach_fd_errors(void)
{
	struct perfring_ring *r = NULL;
	int fd = memfd_create("not-a-ring", MFD_CLOEXEC);
	int pfd[2];

	CHECK(fd >= 0, "memfd_create");
	CHECK_EQ(pipe(pfd), 0);
	CHECK_EQ(perfring_ring_attach_fd(-1, pfd[0], PERFRING_ROLE_CONSUMER,
					 &r),
		 -EINVAL);
	CHECK_EQ(perfring_ring_attach_fd(fd, -1, PERFRING_ROLE_CONSUMER, &r),
		 -EINVAL);
	CHECK_EQ(perfring_ring_attach_fd(fd, pfd[0], PERFRING_ROLE_CONSUMER,
					 NULL),
		 -EINVAL);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_attach_fd(fd, pfd[0], PERFRING_ROLE_CONSUMER,
					 &r),
		 -EINVAL);
	log_expect("too small", NULL);
	CHECK_EQ(ftruncate(fd, (off_t)(3 * page)), 0);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_attach_fd(fd, pfd[0], PERFRING_ROLE_CONSUMER,
					 &r),
		 -EAGAIN);
	log_expect("magic", NULL);
	CHECK(r == NULL, "*out not NULL");
	/* A role that is no role. */
	{
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = page,
			      .role = PERFRING_ROLE_PRODUCER);
		struct perfring_ring *p;

		CHECK_EQ(perfring_ring_create(&o, &p), 0);
		CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(p),
						 perfring_ring_wait_fd(p),
						 (enum perfring_role)0, &r),
			 -EINVAL);
		CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(p),
						 perfring_ring_wait_fd(p),
						 (enum perfring_role)4, &r),
			 -EINVAL);
		perfring_ring_destroy(p);
	}
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	perfring_set_log(log_cb, NULL, PERFRING_LOG_DEBUG);
	dir = test_tmpdir("attach");

	bad_files();
	creation();
	stale_rings();
	roles();
	memfd_fork(0);
	memfd_fork(PERFRING_MODE_MULTI_PRODUCER);
	attach_fd_errors();

	CHECK(rmdir(dir) == 0, "temporary directory not empty: %s",
	      strerror(errno));
	return T_EXIT_PASS;
}
