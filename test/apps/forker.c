// SPDX-License-Identifier: MIT
/*
 * A pre-forking traced program with known content, for test/app_fork.sh.
 *
 *   forker CHILDREN EVENTS [--exec-every K]
 *   forker --exec-image SEQ EVENTS      (what an exec'd child runs)
 *
 * Every tick is forktest:tick {u64 pid, u64 tid, u64 seq}: the emitting
 * process's getpid() and thread's gettid() as it sees them, and a
 * per-thread sequence number from 0.
 *
 * The parent's main thread emits EVENTS ticks, then forks CHILDREN children
 * while a second parent thread emits a tick every microsecond or so (up to
 * 15000), waits for every child, and emits EVENTS more ticks from the main
 * thread (its seq goes on).  Child i emits
 * EVENTS ticks from its main thread; every third child (i % 3 == 0) also
 * from a second thread; every odd child declares forktest:late {u64 pid,
 * u64 n} after the fork (a new id, in its own events file) and emits it 10
 * times.  With --exec-every K every K-th child (i % K == K - 1) then execs
 * this program as --exec-image EVENTS EVENTS: the same pid and main thread
 * in a new image, which emits EVENTS more ticks with seq from EVENTS on.
 *
 * Every process image prints, each line with one write():
 *   thread PID TID ticks N first S        (per emitting thread)
 *   proc PID image I attempted A written W lost L rings R
 * A counts its perfring_emit() calls; W, L and R are perfring_app_stats().
 * A child checks that its counters started from zero.  Exit status 1 if
 * W + L != A anywhere, or a child failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <perfring.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHILDREN 512
/* The second parent thread's most ticks: 720 KiB, so that with the main
 * thread's they fit a default (1 MiB) ring undrained: nothing can drop. */
#define PARENT_STREAM_MAX 15000

static struct perfring_event *ev_tick, *ev_late;
static atomic_ullong attempted;
static int image = 1;

struct tick {
	uint64_t pid, tid, seq;
};

struct late {
	uint64_t pid, n;
};

/* One line, one write(): the lines of concurrent processes stay whole. */
static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(3);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Ticks seq first .. first + n - 1 from the calling thread. */
static void ticks(uint64_t first, uint64_t n)
{
	struct tick t = { (uint64_t)getpid(), (uint64_t)gettid_(), 0 };

	for (uint64_t i = 0; i < n; i++) {
		t.seq = first + i;
		perfring_emit(ev_tick, &t, sizeof(t));
	}
	atomic_fetch_add(&attempted, n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct burst {
	uint64_t cap;
	atomic_ullong done; /* ticks emitted so far */
	atomic_int stop; /* every child forked */
};

/*
 * The parent's second thread: a tick about every microsecond (paced by the
 * clock, so that the stream spans the forks instead of ending before the
 * first one) until every child is forked, at most cap ticks.
 */
static void *parent_thread(void *arg)
{
	struct burst *b = arg;
	struct tick t = { (uint64_t)getpid(), (uint64_t)gettid_(), 0 };

	for (; t.seq < b->cap && !atomic_load(&b->stop); t.seq++) {
		uint64_t until = now_ns() + 1000;

		perfring_emit(ev_tick, &t, sizeof(t));
		atomic_fetch_add(&attempted, 1);
		atomic_store(&b->done, t.seq + 1);
		while (now_ns() < until)
			;
	}
	say("thread %d %d ticks %llu first 0\n", (int)t.pid, (int)t.tid,
	    (unsigned long long)t.seq);
	return NULL;
}

static void *child_thread(void *arg)
{
	uint64_t n = *(uint64_t *)arg;

	ticks(0, n);
	say("thread %d %d ticks %llu first 0\n", (int)getpid(), (int)gettid_(),
	    (unsigned long long)n);
	return NULL;
}

/* The image's "proc" line; 1 if its counts do not add up. */
static int report(void)
{
	struct perfring_app_stats st = { .sz = sizeof(st) };
	unsigned long long a = atomic_load(&attempted);

	if (perfring_app_stats(&st))
		return 1;
	say("proc %d image %d attempted %llu written %llu lost %llu rings %u\n",
	    (int)getpid(), image, a, (unsigned long long)st.events,
	    (unsigned long long)st.lost, st.rings);
	if (st.events + st.lost != a) {
		fprintf(stderr,
			"forker %d: written %llu + lost %llu != attempted %llu\n",
			(int)getpid(), (unsigned long long)st.events,
			(unsigned long long)st.lost, a);
		return 1;
	}
	return 0;
}

static int declare_tick(void)
{
	return perfring_event_declare("forktest", "tick",
				      "u64 pid, u64 tid, u64 seq", &ev_tick);
}

static void child(unsigned int i, uint64_t events, unsigned int exec_every,
		  const char *self)
{
	struct perfring_app_stats st = { .sz = sizeof(st) };
	pthread_t second;
	int status, stale = 0;

	/* Counters describe this process: they start from zero.  (Go on
	 * if not: the test also looks at what goes where.) */
	atomic_store(&attempted, 0);
	if (perfring_app_stats(&st) || st.events || st.lost || st.rings) {
		fprintf(stderr,
			"forker child %d: counters not fresh: events %llu lost %llu rings %u\n",
			(int)getpid(), (unsigned long long)st.events,
			(unsigned long long)st.lost, st.rings);
		stale = 1;
	}
	if (i % 3 == 0 &&
	    pthread_create(&second, NULL, child_thread, &events) != 0)
		_exit(1);
	ticks(0, events);
	if (i % 2 == 1) {
		if (perfring_event_declare("forktest", "late", "u64 pid, u64 n",
					   &ev_late))
			_exit(1);
		for (uint64_t n = 0; n < 10; n++) {
			struct late l = { (uint64_t)getpid(), n };

			perfring_emit(ev_late, &l, sizeof(l));
		}
		atomic_fetch_add(&attempted, 10);
	}
	if (i % 3 == 0)
		pthread_join(second, NULL);
	if (exec_every && i % exec_every == exec_every - 1) {
		char seq[32], n[32];

		say("thread %d %d ticks %llu first 0\n", (int)getpid(),
		    (int)gettid_(), (unsigned long long)events);
		if (report() || stale)
			_exit(1);
		snprintf(seq, sizeof(seq), "%llu", (unsigned long long)events);
		snprintf(n, sizeof(n), "%llu", (unsigned long long)events);
		execl(self, "forker", "--exec-image", seq, n, (char *)NULL);
		fprintf(stderr, "forker: exec %s: %s\n", self, strerror(errno));
		_exit(1);
	}
	say("thread %d %d ticks %llu first 0\n", (int)getpid(), (int)gettid_(),
	    (unsigned long long)events);
	status = report();
	exit(status || stale);
}

/* An exec'd child: the same pid and main thread, a new image that the
 * library's constructor started tracing ($PERFRING_SESSION). */
static int exec_image(uint64_t first, uint64_t events)
{
	image = 2;
	if (declare_tick())
		return 1;
	ticks(first, events);
	say("thread %d %d ticks %llu first %llu\n", (int)getpid(),
	    (int)gettid_(), (unsigned long long)events,
	    (unsigned long long)first);
	return report();
}

int main(int argc, char **argv)
{
	static pid_t pids[MAX_CHILDREN];
	struct burst b = { 0 };
	unsigned int children, exec_every = 0;
	uint64_t events;
	pthread_t second;
	int bad = 0;

	if (argc == 4 && !strcmp(argv[1], "--exec-image"))
		return exec_image(strtoull(argv[2], NULL, 10),
				  strtoull(argv[3], NULL, 10));
	if (argc < 3) {
		fprintf(stderr, "usage: %s CHILDREN EVENTS [--exec-every K]\n",
			argv[0]);
		return 2;
	}
	children = (unsigned int)atoi(argv[1]);
	events = strtoull(argv[2], NULL, 10);
	if (argc == 5 && !strcmp(argv[3], "--exec-every"))
		exec_every = (unsigned int)atoi(argv[4]);
	if (!children || children > MAX_CHILDREN || !events)
		return 2;
	if (declare_tick())
		return 1;
	ticks(0, events);
	b.cap = PARENT_STREAM_MAX;
	if (pthread_create(&second, NULL, parent_thread, &b))
		return 1;
	while (!atomic_load(&b.done))
		sched_yield(); /* the forks fall into its stream */
	for (unsigned int i = 0; i < children; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0)
			child(i, events, exec_every, "/proc/self/exe");
	}
	atomic_store(&b.stop, 1);
	pthread_join(second, NULL);
	for (unsigned int i = 0; i < children; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr,
				"forker: child %d failed (status %#x)\n",
				(int)pids[i], status);
			bad = 1;
		}
	}
	ticks(events, events);
	say("thread %d %d ticks %llu first 0\n", (int)getpid(), (int)gettid_(),
	    (unsigned long long)(2 * events));
	return report() || bad;
}
