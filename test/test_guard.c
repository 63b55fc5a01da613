// SPDX-License-Identifier: MIT
/*
 * The SIGBUS guard and the attach checks against hostile files, with real
 * processes:
 *
 *  - a producer process truncates its named ring (to 4096 bytes, then to
 *    0) while this process reads it: a record pointer taken before the
 *    truncation reads zeros instead of killing us, every consumer call then
 *    returns -EFAULT, the log names the ring once; perfring_ring_check()
 *    finds a truncation before any access (-ENODATA, then -EFAULT);
 *  - a SIGBUS outside every ring (a truncated mapping of another file)
 *    still reaches the handler installed before the guard;
 *  - a consumer killed between reader_begin and reader_end leaves its
 *    overwrite ring paused: the next consumer resumes it and says so;
 *  - perfring_ring_attachat() refuses a symlink, a FIFO (without
 *    blocking), a device, a directory, a file owned by another uid, a hard
 *    link, and a wake-up FIFO that is a regular file, each with its errno
 *    and the name in the log.
 *
 * Under AddressSanitizer the guard must be allowed to replace ASan's own
 * SIGBUS handler: allow_user_segv_handler=1 (set below, the default in
 * current compilers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 77
#define NREC 64

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allow_user_segv_handler=1";
}

static const char *dir;
static size_t page;

/* ---- log capture ------------------------------------------------------ */

static char logs[8192];

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	size_t n = strlen(logs);

	(void)level;
	(void)ctx;
	snprintf(logs + n, sizeof(logs) - n, "%s\n", msg);
}

static void log_expect(const char *a, const char *b)
{
	CHECK(strstr(logs, a) != NULL, "log \"%s\" lacks \"%s\"", logs, a);
	if (b)
		CHECK(strstr(logs, b) != NULL, "log \"%s\" lacks \"%s\"", logs,
		      b);
}

static int count_lines(const char *needle)
{
	int n = 0;

	for (const char *p = logs; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ---- the handler that was there before the guard ---------------------- */

static sigjmp_buf prev_jmp;
static volatile sig_atomic_t prev_calls, prev_armed;

static void prev_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	prev_calls++;
	if (prev_armed)
		siglongjmp(prev_jmp, 1);
	_exit(99); /* a fault in a ring reached us: the guard failed */
}

/* ---- a producer process ------------------------------------------------ */

struct record {
	struct perf_event_header h;
	uint64_t seq;
	uint64_t pad[4];
};

/*
 * Forks a producer that creates the named ring @path, emits NREC records,
 * says so on *to_parent, then truncates the ring file to @len when told
 * on *to_child and says so again.  Returns its pid.
 */
static pid_t producer(const char *path, off_t len, int *to_child,
		      int *to_parent)
{
	int down[2], up[2];
	pid_t pid;

	CHECK_EQ(pipe(down), 0);
	CHECK_EQ(pipe(up), 0);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		PERFRING_OPTS(perfring_ring_opts, o, .path = path,
			      .data_size = 4 * page,
			      .role = PERFRING_ROLE_PRODUCER);
		struct perfring_ring *r;
		char c = 'r';

		if (perfring_ring_create(&o, &r))
			_exit(2);
		for (uint64_t i = 0; i < NREC; i++) {
			struct record rec = { .h = { .type = T_TYPE,
						     .size = sizeof(rec) },
					      .seq = i };

			if (perfring_ring_emit(r, &rec, sizeof(rec)))
				_exit(3);
		}
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(4);
		if (ftruncate(perfring_ring_fd(r), len))
			_exit(5);
		if (write(up[1], &c, 1) != 1)
			_exit(6);
		/* Gone without touching the ring again (it would fault). */
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	*to_child = down[1];
	*to_parent = up[0];
	return pid;
}

static void wait_byte(int fd)
{
	char c;

	CHECK(read(fd, &c, 1) == 1, "producer died early");
}

static void reap(pid_t pid)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "producer status %#x", st);
}

/* Every consumer call on a dead ring: -EFAULT, no crash. */
static void expect_dead(struct perfring_ring *c)
{
	const struct perf_event_header *rec;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	const void *ptr[2];
	size_t len[2];

	CHECK_EQ(perfring_read_begin(c), -EFAULT);
	CHECK_EQ(perfring_read_next(c, &rec), -EFAULT);
	CHECK_EQ(perfring_read_range(c, ptr, len), -EFAULT);
	CHECK_EQ(perfring_ring_wait_prepare(c), -EFAULT);
	CHECK_EQ(perfring_ring_wait(c, 0), -EFAULT);
	CHECK_EQ(perfring_ring_check(c), -EFAULT);
	CHECK_EQ(perfring_ring_stats(c, &st), -EFAULT);
	CHECK_EQ(st.dead, 1);
	perfring_read_end(c); /* harmless */
	perfring_ring_wait_finish(c);
}

/* The reader holds a record pointer when the file is cut to @len. */
static void truncate_while_reading(off_t len)
{
	char path[256];
	const struct perf_event_header *rec;
	struct perfring_ring *c;
	int to_child, to_parent, n;
	pid_t pid;
	uint64_t seq;

	snprintf(path, sizeof(path), "%s/trunc-%lld.ring", dir, (long long)len);
	pid = producer(path, len, &to_child, &to_parent);
	wait_byte(to_parent);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	CHECK(perfring_read_begin(c) == NREC * (int64_t)sizeof(struct record),
	      "the producer's records are there");
	n = perfring_read_next(c, &rec);
	CHECK_EQ(n, sizeof(struct record));
	memcpy(&seq, rec + 1, 8);
	CHECK_EQ(seq, 0);
	CHECK(write(to_child, "t", 1) == 1, "tell the producer");
	wait_byte(to_parent);
	reap(pid);
	logs[0] = 0;
	/* The pages behind rec are gone: without the guard this is SIGBUS. */
	memcpy(&seq, (const char *)rec + 8, 8);
	CHECK_EQ(seq, 0);
	CHECK_EQ(((const volatile struct perf_event_header *)rec)->size, 0);
	CHECK_EQ(perfring_read_next(c, &rec), -EFAULT);
	log_expect(path, "truncated");
	log_expect("EFAULT", NULL);
	expect_dead(c);
	CHECK_EQ(count_lines(path), 1); /* told once */
	CHECK_EQ(prev_calls, 0);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	close(to_child);
	close(to_parent);
	fprintf(stderr,
		"truncated to %lld while reading: zeros read, -EFAULT, logged once\n",
		(long long)len);
}

/* perfring_ring_check() sees the shrink first: nothing faults at all. */
static void truncate_then_check(off_t len)
{
	char path[256];
	struct perfring_ring *c;
	int to_child, to_parent;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/check-%lld.ring", dir, (long long)len);
	pid = producer(path, len, &to_child, &to_parent);
	wait_byte(to_parent);
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	CHECK_EQ(perfring_ring_check(c), 0);
	CHECK(write(to_child, "t", 1) == 1, "tell the producer");
	wait_byte(to_parent);
	reap(pid);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_check(c), -ENODATA);
	log_expect(path, "shrank");
	expect_dead(c);
	CHECK_EQ(count_lines(path), 1);
	/* The zero pages are ours: reading the control page is harmless. */
	CHECK_EQ(perfring_ring_control(c)->data_head, 0);
	perfring_ring_destroy(c);
	CHECK_EQ(perfring_ring_remove(path), 0);
	close(to_child);
	close(to_parent);
	fprintf(stderr, "truncated to %lld, found by perfring_ring_check\n",
		(long long)len);
}

/* A bus error in a mapping that is no ring goes to the old handler. */
static void fault_elsewhere(void)
{
	char path[256];
	volatile unsigned char *m;
	int fd;

	snprintf(path, sizeof(path), "%s/not-a-ring", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "create %s", path);
	CHECK_EQ(ftruncate(fd, (off_t)(2 * page)), 0);
	m = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap");
	CHECK_EQ(ftruncate(fd, 0), 0);
	prev_calls = 0;
	prev_armed = 1;
	if (!sigsetjmp(prev_jmp, 1)) {
		(void)m[page + 1];
		CHECK(0,
		      "reading past the end of a truncated file did not fault");
	}
	prev_armed = 0;
	CHECK_EQ(prev_calls, 1);
	munmap((void *)m, 2 * page);
	close(fd);
	unlink(path);
	fprintf(stderr, "a fault outside every ring reached the old handler\n");
}

/* ---- stale pause ------------------------------------------------------- */

static void stale_pause(void)
{
	char path[256];
	PERFRING_OPTS(perfring_ring_opts, o, .path = path,
		      .data_size = 4 * page, .flags = PERFRING_MODE_OVERWRITE,
		      .role = PERFRING_ROLE_PRODUCER);
	struct record rec = { .h = { .type = T_TYPE, .size = sizeof(rec) } };
	struct perfring_ring *p, *c;
	int go[2], st;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/ow.ring", dir);
	CHECK_EQ(perfring_ring_create(&o, &p), 0);
	CHECK_EQ(perfring_ring_emit(p, &rec, sizeof(rec)), 0);
	CHECK_EQ(pipe(go), 0);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* A consumer that dies inside its batch. */
		if (perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c) ||
		    perfring_read_begin(c) <= 0)
			_exit(2);
		if (write(go[1], "p", 1) != 1)
			_exit(3);
		pause();
		_exit(4);
	}
	close(go[1]);
	wait_byte(go[0]);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(perfring_ring_control(p)->data_head != 0, "wrote");
	CHECK_EQ(perfring_ring_emit(p, &rec, sizeof(rec)), -EAGAIN);
	logs[0] = 0;
	CHECK_EQ(perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &c), 0);
	log_expect(path, "left it paused");
	CHECK_EQ(perfring_ring_emit(p, &rec, sizeof(rec)), 0);
	CHECK(perfring_read_begin(c) > 0, "records to read");
	perfring_read_end(c);
	CHECK_EQ(perfring_ring_emit(p, &rec, sizeof(rec)), 0);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);
	CHECK_EQ(perfring_ring_remove(path), 0);
	close(go[0]);
	fprintf(stderr, "stale pause of a killed consumer cleared\n");
}

/* ---- attachat refusals -------------------------------------------------- */

static void make_ring(int dfd, const char *name)
{
	char path[256];
	PERFRING_OPTS(perfring_ring_opts, o, .path = path, .data_size = page);
	struct perfring_ring *r;

	(void)dfd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	perfring_ring_destroy(r);
}

static void refuse_at(int dfd, const char *name, uid_t owner, int err,
		      const char *why)
{
	struct perfring_ring *r = (struct perfring_ring *)&r;
	int got;

	logs[0] = 0;
	alarm(20); /* a FIFO open that blocks would hang here */
	got = perfring_ring_attachat(dfd, name, PERFRING_ROLE_CONSUMER, owner,
				     &r);
	alarm(0);
	CHECK(got == err, "attachat %s: %d (%s), want %d; log: %s", name, got,
	      strerror(-got), err, logs);
	CHECK(r == NULL, "*out set after a refusal");
	log_expect(name, why);
}

static void attachat_refusals(void)
{
	struct perfring_ring *r;
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char path[256], other[256];

	CHECK(dfd >= 0, "open %s", dir);
	make_ring(dfd, "good.ring");
	CHECK_EQ(perfring_ring_attachat(dfd, "good.ring",
					PERFRING_ROLE_CONSUMER, (uid_t)-1, &r),
		 0);
	perfring_ring_destroy(r);

	/* Never followed, whatever it points at. */
	CHECK_EQ(symlinkat("good.ring", dfd, "link.ring"), 0);
	refuse_at(dfd, "link.ring", (uid_t)-1, -ELOOP, "symbolic link");

	/* A FIFO nobody writes: refused before it is opened, no blocking. */
	CHECK_EQ(mkfifoat(dfd, "fifo.ring", 0600), 0);
	refuse_at(dfd, "fifo.ring", (uid_t)-1, -EINVAL, "not a regular file");

	/* A device (/dev/null's numbers): never opened. */
	if (mknodat(dfd, "dev.ring", S_IFCHR | 0600, makedev(1, 3)) == 0)
		refuse_at(dfd, "dev.ring", (uid_t)-1, -EINVAL,
			  "not a regular file");
	else
		fprintf(stderr, "note: mknod refused (%s): no device case\n",
			strerror(errno));

	/* A directory, and a name that is a path. */
	CHECK_EQ(mkdirat(dfd, "sub.ring", 0700), 0);
	refuse_at(dfd, "sub.ring", (uid_t)-1, -EISDIR, "directory");
	refuse_at(dfd, "sub.ring/x", (uid_t)-1, -EINVAL, "file name");

	/* The wake-up descriptor must be a FIFO. */
	make_ring(dfd, "wake.ring");
	CHECK_EQ(unlinkat(dfd, "wake.ring.wake", 0), 0);
	{
		int fd = openat(dfd, "wake.ring.wake",
				O_RDWR | O_CREAT | O_EXCL, 0600);

		CHECK(fd >= 0, "create");
		close(fd);
	}
	refuse_at(dfd, "wake.ring", (uid_t)-1, -EINVAL, "not a FIFO");

	/* A hard link: the file could be anybody's. */
	make_ring(dfd, "hard.ring");
	CHECK_EQ(linkat(dfd, "hard.ring", dfd, "hard2.ring", 0), 0);
	refuse_at(dfd, "hard2.ring", (uid_t)-1, -EMLINK, "links");
	CHECK_EQ(unlinkat(dfd, "hard2.ring", 0), 0);
	CHECK_EQ(perfring_ring_attachat(dfd, "hard.ring",
					PERFRING_ROLE_CONSUMER, (uid_t)-1, &r),
		 0);
	perfring_ring_destroy(r);

	/* Owner: the ring (and then its FIFO) given to nobody. */
	make_ring(dfd, "owner.ring");
	snprintf(path, sizeof(path), "%s/owner.ring", dir);
	snprintf(other, sizeof(other), "%s/owner.ring.wake", dir);
	if (geteuid() == 0) {
		CHECK_EQ(chown(path, 65534, 65534), 0);
		refuse_at(dfd, "owner.ring", 0, -EPERM, "owned by uid 65534");
		/* The ring is nobody's now, the FIFO still ours. */
		refuse_at(dfd, "owner.ring", 65534, -EPERM, "owned by uid 0");
		CHECK_EQ(chown(other, 65534, 65534), 0);
		CHECK_EQ(perfring_ring_attachat(dfd, "owner.ring",
						PERFRING_ROLE_CONSUMER, 65534,
						&r),
			 0);
		perfring_ring_destroy(r);
	} else {
		refuse_at(dfd, "owner.ring", geteuid() + 1, -EPERM,
			  "owned by uid");
	}
	CHECK_EQ(unlinkat(dfd, "sub.ring", AT_REMOVEDIR), 0);
	close(dfd);
	fprintf(stderr,
		"attachat: symlink, FIFO, device, directory, path, wake file, hard link and owner refused\n");
}

int main(void)
{
	struct sigaction sa;

	page = (size_t)sysconf(_SC_PAGESIZE);
	dir = test_tmpdir("guard");
	perfring_set_log(log_cb, NULL, PERFRING_LOG_DEBUG);
	/* A program's own SIGBUS handler, there before the guard. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prev_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGBUS, &sa, NULL), 0);
	CHECK_EQ(perfring_sigbus_guard(), 0);
	CHECK_EQ(perfring_sigbus_guard(), 0); /* once; later calls no-ops */

	truncate_while_reading((off_t)page);
	truncate_while_reading(0);
	truncate_then_check((off_t)page);
	truncate_then_check(0);
	fault_elsewhere();
	stale_pause();
	attachat_refusals();
	printf("guard: ok\n");
	return 0;
}
