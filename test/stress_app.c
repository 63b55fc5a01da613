// SPDX-License-Identifier: MIT
/*
 * Application tracing under concurrency (ASan and TSan): emitter threads
 * write known events into their per-thread rings (and, second round, into
 * one shared multi-producer ring) while the recorder side of the same
 * process (app_session) discovers the rings, drains and converts them.
 * Every converted sample is checked: its event id, pid/tid, the fields,
 * per-thread sequence numbers without holes except counted losses, and
 * strings inside the record.  Threads exit mid-run, so rings are released
 * while others still write.  Also: declarations the API must refuse.
 *
 * Fork rounds: emitter 0 forks children while every emitter writes.  Each
 * child checks that it starts fresh (zero counters, its own ring and events
 * file with the parent's ids), emits known ticks and exits; the recorder
 * must see them under the child's pid and tid, complete, and the parent's
 * rings must stay whole: no tick lost, moved or repeated, and no ring's
 * data_head ever going backwards (watched through a mapping of its own).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ring/barrier.h"
#include "sources/app_session.h"
#include "harness.h"
#include "stress.h"

#define THREADS 4
#define EVENTS 60000
/* per parent thread: 640 KiB in all, in 1 MiB rings: no drop possible */
#define FORK_EVENTS 4000
#define FORKS 10
#define CHILD_EVENTS 500
#define CHILD_THREAD 100 /* + fork index: a child's "thread" field */

struct tick {
	uint64_t seq, thread, value;
};

struct seen {
	uint64_t next_seq[THREADS];
	uint64_t ticks, msgs, holes, lost, samples;
	uint32_t tick_id, msg_id;
	pid_t tids[THREADS];
	/* fork rounds: per child, from its samples */
	pid_t child_pid[FORKS];
	uint64_t child_next[FORKS], child_ticks;
};

static struct perfring_event *ev_tick, *ev_msg;
static atomic_int go;
static _Atomic pid_t worker_tid[THREADS];
static atomic_int finished;
static uint64_t events_per_thread = EVENTS;
static int forks; /* children emitter 0 forks (0: none) */
static bool shared_mode;
static const char *session; /* the directory, for the children's checks */
static pid_t fork_pids[FORKS];

static int on_new_event(void *ctx, const struct app_event_desc *d, uint64_t id)
{
	struct seen *s = ctx;

	CHECK(id == APP_SAMPLE_ID(d->id), "sample id %llx",
	      (unsigned long long)id);
	if (!strcmp(d->name, "tick"))
		s->tick_id = d->id;
	else if (!strcmp(d->name, "msg"))
		s->msg_id = d->id;
	return 0;
}

/* A sample from a fork child's ring: its ticks, in order, under its pid
 * and its only thread's tid. */
static void on_child_sample(struct seen *s, const unsigned char *r,
			    uint32_t pid, uint32_t tid, uint16_t type)
{
	struct tick t;
	uint64_t k;

	CHECK(forks && type == s->tick_id, "event %u under pid %u", type, pid);
	memcpy(&t, r + 52, sizeof(t));
	k = t.thread - CHILD_THREAD;
	CHECK(t.thread >= CHILD_THREAD && k < (uint64_t)forks,
	      "thread %llu under pid %u", (unsigned long long)t.thread, pid);
	CHECK(tid == pid, "child %llu: tid %u under pid %u",
	      (unsigned long long)k, tid, pid);
	if (!s->child_pid[k])
		s->child_pid[k] = (pid_t)pid;
	CHECK(s->child_pid[k] == (pid_t)pid, "child %llu under pids %d and %u",
	      (unsigned long long)k, (int)s->child_pid[k], pid);
	CHECK(t.value == t.seq * 7 + t.thread && t.seq == s->child_next[k],
	      "child %llu: seq %llu value %llu, expected seq %llu",
	      (unsigned long long)k, (unsigned long long)t.seq,
	      (unsigned long long)t.value,
	      (unsigned long long)s->child_next[k]);
	s->child_next[k]++;
	s->child_ticks++;
	s->samples++;
}

/* Checks every sample of a converted batch. */
static int on_write(void *ctx, const void *buf, size_t len)
{
	struct seen *s = ctx;
	const unsigned char *p = buf;
	size_t off = 0;

	while (off < len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		CHECK(h.size >= 8 && off + h.size <= len, "record size %u",
		      h.size);
		if (h.type == PERF_RECORD_LOST) {
			uint64_t n;

			memcpy(&n, p + off + 16, 8);
			s->lost += n;
		} else {
			const unsigned char *r = p + off;
			uint32_t pid, tid, raw;
			uint16_t type;

			CHECK(h.type == PERF_RECORD_SAMPLE, "type %u", h.type);
			memcpy(&pid, r + 16, 4);
			memcpy(&tid, r + 20, 4);
			memcpy(&raw, r + 40, 4);
			memcpy(&type, r + 44, 2);
			if (pid != (uint32_t)getpid()) {
				on_child_sample(s, r, pid, tid, type);
				off += h.size;
				continue;
			}
			CHECK(44 + raw == h.size, "raw size %u of %u", raw,
			      h.size);
			s->samples++;
			if (type == s->tick_id) {
				struct tick t;

				memcpy(&t, r + 52, sizeof(t));
				CHECK(t.thread < THREADS, "thread %llu",
				      (unsigned long long)t.thread);
				CHECK(t.value == t.seq * 7 + t.thread,
				      "value %llu for seq %llu",
				      (unsigned long long)t.value,
				      (unsigned long long)t.seq);
				CHECK(tid == (uint32_t)atomic_load(
						     &worker_tid[t.thread]),
				      "tid %u for thread %llu", tid,
				      (unsigned long long)t.thread);
				CHECK(t.seq >= s->next_seq[t.thread],
				      "thread %llu: seq %llu after %llu",
				      (unsigned long long)t.thread,
				      (unsigned long long)t.seq,
				      (unsigned long long)s->next_seq[t.thread]);
				s->holes += t.seq - s->next_seq[t.thread];
				s->next_seq[t.thread] = t.seq + 1;
				s->ticks++;
			} else {
				uint32_t loc, seq;
				char want[32];

				CHECK(type == s->msg_id, "event id %u", type);
				memcpy(&seq, r + 52, 4);
				memcpy(&loc, r + 56, 4);
				snprintf(want, sizeof(want), "m%u", seq);
				CHECK((loc & 0xffff) + (loc >> 16) <= raw &&
					      (loc >> 16) == strlen(want) + 1 &&
					      !memcmp(r + 44 + (loc & 0xffff),
						      want, strlen(want) + 1),
				      "string of msg %u", seq);
				s->msgs++;
			}
		}
		off += h.size;
	}
	return 0;
}

/* The line of "apptest:tick" in <dir>/<pid>.events, or "". */
static void tick_line(pid_t pid, char *out, size_t size)
{
	char path[PATH_MAX], buf[4096], *p, *nl;
	ssize_t n;
	int fd;

	out[0] = 0;
	snprintf(path, sizeof(path), "%s/%d.events", session, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	p = strstr(buf, " apptest:tick ");
	if (!p)
		return;
	while (p > buf && p[-1] != '\n')
		p--;
	nl = strchr(p, '\n');
	snprintf(out, size, "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
}

/* A fork child: fresh state, its own ring and events file, known ticks. */
static void child_body(int k, pid_t parent, bool shared)
{
	struct perfring_app_stats st = { .sz = sizeof(st) };
	char path[PATH_MAX], mine[256], theirs[256];
	uint64_t thread = CHILD_THREAD + (uint64_t)k;
	struct stat sb;

	CHECK(perfring_app_stats(&st) == 0 && st.events == 0 && st.lost == 0 &&
		      st.rings == 0,
	      "child %d starts with events %llu lost %llu rings %u", k,
	      (unsigned long long)st.events, (unsigned long long)st.lost,
	      st.rings);
	for (uint64_t seq = 0; seq < CHILD_EVENTS; seq++) {
		struct tick t = { seq, thread, seq * 7 + thread };

		CHECK(perfring_emit(ev_tick, &t, sizeof(t)) == 0,
		      "child %d: emit %llu refused", k,
		      (unsigned long long)seq);
	}
	CHECK(perfring_app_stats(&st) == 0 && st.events == CHILD_EVENTS &&
		      st.lost == 0 && st.rings == 1,
	      "child %d: events %llu lost %llu rings %u", k,
	      (unsigned long long)st.events, (unsigned long long)st.lost,
	      st.rings);
	if (shared)
		snprintf(path, sizeof(path), "%s/%d-shared.ring", session,
			 (int)getpid());
	else
		snprintf(path, sizeof(path), "%s/%d-%d.ring", session,
			 (int)getpid(), (int)getpid());
	CHECK(stat(path, &sb) == 0, "child %d: no ring %s", k, path);
	/* The same id as the parent's: the session's, not a new one. */
	tick_line(getpid(), mine, sizeof(mine));
	tick_line(parent, theirs, sizeof(theirs));
	CHECK(mine[0] && !strcmp(mine, theirs),
	      "child %d: events file says \"%s\", the parent's \"%s\"", k, mine,
	      theirs);
	_exit(0); /* not exit(): the parent's other threads are not here */
}

static void *emitter(void *arg)
{
	uint64_t thread = (uint64_t)(uintptr_t)arg;
	uint64_t n = thread == 3 ? events_per_thread / 3 :
				   events_per_thread; /* 3 exits early */
	int forked = 0;
	char text[32];

	atomic_store(&worker_tid[thread], (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&go))
		;
	for (uint64_t seq = 0; seq < n; seq++) {
		struct tick t = { seq, thread, seq * 7 + thread };

		perfring_emit(ev_tick, &t, sizeof(t));
		if (seq == 1) /* the thread's ring is there: the fast path */
			CHECK(perfring_event_write(ev_tick, &t, 8, NULL, 0) ==
					      -EINVAL &&
				      perfring_event_write(ev_tick, &t,
							   sizeof(t), NULL,
							   1) == -EINVAL,
			      "a wrong size or string count was taken");
		if (seq % 64 == 0) {
			uint32_t m = (uint32_t)seq;
			struct perfring_var v[2] = { { text, 0 }, { text, 1 } };

			snprintf(text, sizeof(text), "m%u", m);
			CHECK(perfring_emitv(ev_msg, &m, sizeof(m), v, 2) !=
				      -EINVAL,
			      "emitv refused");
		}
		if (seq % 1024 == 0)
			nap_us(100); /* mostly lossless, still racing */
		if (thread == 0 && forked < forks &&
		    seq == (uint64_t)(forked + 1) * (n / (forks + 1))) {
			pid_t parent = getpid(), pid;

			fflush(NULL); /* not twice: a failing child flushes */
			pid = fork();
			CHECK(pid >= 0, "fork: %s", strerror(errno));
			if (pid == 0)
				child_body(forked, parent, shared_mode);
			fork_pids[forked++] = pid;
		}
	}
	for (int k = 0; k < forked; k++) {
		int status;

		CHECK(waitpid(fork_pids[k], &status, 0) == fork_pids[k] &&
			      WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child %d (pid %d) failed: status %#x", k,
		      (int)fork_pids[k], status);
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

/* data_head of the parent's thread rings, through mappings of our own:
 * it must never go backwards (two producers on one ring would). */
struct head_watch {
	const struct perf_event_mmap_page *pc;
	uint64_t last;
};

static void watch_heads(struct head_watch *w)
{
	for (int i = 0; i < THREADS; i++) {
		pid_t tid = atomic_load(&worker_tid[i]);
		uint64_t head;

		if (!w[i].pc && tid) {
			char path[PATH_MAX];
			void *m;
			int fd;

			snprintf(path, sizeof(path), "%s/%d-%d.ring", session,
				 (int)getpid(), (int)tid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue; /* not made yet, or released */
			m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
			close(fd);
			if (m != MAP_FAILED)
				w[i].pc = m;
		}
		if (!w[i].pc)
			continue;
		/* pairs with the producer's release of data_head (B) */
		head = smp_load_acquire(&w[i].pc->data_head);
		CHECK(head >= w[i].last,
		      "thread %d: data_head went back from %llu to %llu", i,
		      (unsigned long long)w[i].last, (unsigned long long)head);
		w[i].last = head;
	}
}

static void run(const char *mode, uint64_t per_thread, int nforks)
{
	struct app_session_cb cb = { .new_event = on_new_event,
				     .write = on_write };
	struct head_watch heads[THREADS] = { 0 };
	struct app_session_stats st;
	struct seen s = { 0 };
	struct app_session *sess;
	pthread_t t[THREADS];
	uint64_t expect_ticks = 3 * per_thread + per_thread / 3;
	int err;

	events_per_thread = per_thread;
	forks = nforks;
	for (int i = 0; i < THREADS; i++)
		atomic_store(&worker_tid[i], 0);
	cb.ctx = &s;
	CHECK(app_session_create(&cb, &sess) == 0, "session");
	session = app_session_dir(sess);
	{
		PERFRING_OPTS(perfring_app_opts, o,
			      .session = app_session_dir(sess),
			      .ring_size = nforks ? 1 << 20 : 256 << 10);
		shared_mode = !strncmp(mode, "shared", 6);
		o.flags = shared_mode ? PERFRING_APP_SHARED : 0;
		err = perfring_app_start(&o);
		CHECK(err == 0, "start: %d", err);
	}
	atomic_store(&go, 0);
	atomic_store(&finished, 0);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, emitter, (void *)(uintptr_t)i);
	atomic_store(&go, 1);
	while (atomic_load(&finished) < THREADS) {
		if (nforks)
			watch_heads(heads);
		if (!app_session_prepare(sess))
			nap_us(100);
		app_session_finish(sess);
		CHECK(app_session_drain(sess, false, false) == 0, "drain");
		/* on_write() has them all: the ring space may go (the
		 * recorder does this once the round is in the file). */
		app_session_release(sess);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	perfring_app_stop();
	CHECK(app_session_drain(sess, false, true) == 0, "final drain");
	app_session_release(sess);
	app_session_stats(sess, &st);
	printf("%s: %llu ticks, %llu msgs, %llu lost, %llu holes, %u rings, %llu damaged\n",
	       mode, (unsigned long long)s.ticks, (unsigned long long)s.msgs,
	       (unsigned long long)s.lost, (unsigned long long)s.holes,
	       st.rings, (unsigned long long)st.corrupt);
	CHECK(st.corrupt == 0, "damage reported");
	CHECK(s.holes <= s.lost, "%llu ticks missing, %llu lost",
	      (unsigned long long)s.holes, (unsigned long long)s.lost);
	CHECK(s.samples == st.events, "samples %llu, session says %llu",
	      (unsigned long long)s.samples, (unsigned long long)st.events);
	/* Every tick the threads wrote arrived or was counted lost. */
	CHECK(s.ticks + s.holes <= expect_ticks, "ticks");
	/* Thread rings go with their threads; the shared ring stays mapped
	 * by the process after perfring_app_stop() (a racing emitter may
	 * still hold it), drained but not released. */
	CHECK(st.live_rings == (shared_mode ? 1u : 0u), "%u rings not released",
	      st.live_rings);
	if (nforks) {
		watch_heads(heads);
		printf("%s: %d children, %llu child ticks\n", mode, nforks,
		       (unsigned long long)s.child_ticks);
		/* Nothing can drop here: every tick of the parent arrived,
		 * once, in order, and every child's, under its own pid. */
		CHECK(s.lost == 0 && s.holes == 0 && s.ticks == expect_ticks,
		      "parent: %llu ticks of %llu, %llu lost, %llu holes",
		      (unsigned long long)s.ticks,
		      (unsigned long long)expect_ticks,
		      (unsigned long long)s.lost, (unsigned long long)s.holes);
		for (int k = 0; k < nforks; k++)
			CHECK(s.child_pid[k] == fork_pids[k] &&
				      s.child_next[k] == CHILD_EVENTS,
			      "child %d (pid %d): %llu ticks under pid %d", k,
			      (int)fork_pids[k],
			      (unsigned long long)s.child_next[k],
			      (int)s.child_pid[k]);
		for (int i = 0; i < THREADS; i++)
			if (heads[i].pc)
				munmap((void *)heads[i].pc, 4096);
	}
	app_session_close(sess);
}

int main(void)
{
	struct perfring_event *bad;

	CHECK(perfring_event_declare("apptest", "tick",
				     "u64 seq, u64 thread, u64 value",
				     &ev_tick) == 0,
	      "declare tick");
	CHECK(perfring_event_declare("apptest", "msg",
				     "u32 seq, string text, bytes blob",
				     &ev_msg) == 0,
	      "declare msg");
	CHECK(perfring_event_fixed_size(ev_tick) == 24, "tick size");
	CHECK(perfring_event_fixed_size(ev_msg) == 4, "msg size");
	/* Refused declarations. */
	CHECK(perfring_event_declare("app test", "x", "", &bad) == -EINVAL,
	      "provider");
	CHECK(perfring_event_declare("a", "x", "u64 common_pid", &bad) ==
		      -EINVAL,
	      "reserved name");
	CHECK(perfring_event_declare("a", "x", "u64 a, u64 a", &bad) == -EINVAL,
	      "duplicate");
	CHECK(perfring_event_declare("a", "x", "double a", &bad) == -EINVAL,
	      "type");
	/* Names perf could not decode: libtraceevent rewrites the first
	 * three, and reads system "ftrace" as the kernel's. */
	CHECK(perfring_event_declare("a", "x", "u64 VIF_PR_FMT", &bad) ==
		      -EINVAL,
	      "field libtraceevent rewrites");
	CHECK(perfring_event_declare("a", "STA_PR_FMT", "", &bad) == -EINVAL,
	      "name libtraceevent rewrites");
	CHECK(perfring_event_declare("LOCAL_PR_FMT", "x", "", &bad) == -EINVAL,
	      "provider libtraceevent rewrites");
	CHECK(perfring_event_declare("ftrace", "bprint", "u64 a", &bad) ==
		      -EINVAL,
	      "provider ftrace");
	/* Not recording: emit is a no-op; wrong sizes are refused. */
	{
		struct tick t = { 0, 0, 0 };

		CHECK(perfring_emit(ev_tick, &t, sizeof(t)) == 0, "idle emit");
		CHECK(perfring_event_write(ev_tick, &t, 8, NULL, 0) == -EINVAL,
		      "size");
	}
	run("per-thread", EVENTS, 0);
	run("per-thread+fork", FORK_EVENTS, FORKS);
#ifndef __SANITIZE_THREAD__
	/*
	 * Not under TSan: producer threads and the in-process recorder map
	 * the shared ring at different addresses, so TSan cannot see that
	 * data_tail (released through the recorder's mapping, acquired
	 * through the producers') orders two producers' writes to one slot
	 * a lap apart, and reports a race that is not there.  The
	 * multi-producer protocol itself runs under TSan in stress_mpsc.
	 */
	run("shared", EVENTS, 0);
	run("shared+fork", FORK_EVENTS, FORKS);
#endif
	return 0;
}
