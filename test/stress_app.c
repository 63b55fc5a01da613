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
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "harness.h"
#include "stress.h"
#include "sources/app_session.h"

#define THREADS 4
#define EVENTS 60000

struct tick {
	uint64_t seq, thread, value;
};

struct seen {
	uint64_t next_seq[THREADS];
	uint64_t ticks, msgs, holes, lost, samples;
	uint32_t tick_id, msg_id;
	pid_t tids[THREADS];
};

static struct perfring_event *ev_tick, *ev_msg;
static atomic_int go;
static _Atomic pid_t worker_tid[THREADS];
static atomic_int finished;

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
			CHECK(pid == (uint32_t)getpid(), "pid %u", pid);
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

static void *emitter(void *arg)
{
	uint64_t thread = (uint64_t)(uintptr_t)arg;
	uint64_t n = thread == 3 ? EVENTS / 3 : EVENTS; /* 3 exits early */
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
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static void run(const char *mode)
{
	struct app_session_cb cb = { .new_event = on_new_event,
				     .write = on_write };
	struct app_session_stats st;
	struct seen s = { 0 };
	struct app_session *sess;
	pthread_t t[THREADS];
	uint64_t expect_ticks = 3 * EVENTS + EVENTS / 3;
	int err;

	cb.ctx = &s;
	CHECK(app_session_create(&cb, &sess) == 0, "session");
	{
		PERFRING_OPTS(perfring_app_opts, o,
			      .session = app_session_dir(sess),
			      .ring_size = 256 << 10);
		o.flags = !strcmp(mode, "shared") ? PERFRING_APP_SHARED : 0;
		err = perfring_app_start(&o);
		CHECK(err == 0, "start: %d", err);
	}
	atomic_store(&go, 0);
	atomic_store(&finished, 0);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, emitter, (void *)(uintptr_t)i);
	atomic_store(&go, 1);
	while (atomic_load(&finished) < THREADS) {
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
	CHECK(st.live_rings == (strcmp(mode, "shared") ? 0u : 1u),
	      "%u rings not released", st.live_rings);
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
	/* Not recording: emit is a no-op; wrong sizes are refused. */
	{
		struct tick t = { 0, 0, 0 };

		CHECK(perfring_emit(ev_tick, &t, sizeof(t)) == 0, "idle emit");
		CHECK(perfring_event_write(ev_tick, &t, 8, NULL, 0) == -EINVAL,
		      "size");
	}
	run("per-thread");
#ifndef __SANITIZE_THREAD__
	/*
	 * Not under TSan: producer threads and the in-process recorder map
	 * the shared ring at different addresses, so TSan cannot see that
	 * data_tail (released through the recorder's mapping, acquired
	 * through the producers') orders two producers' writes to one slot
	 * a lap apart, and reports a race that is not there.  The
	 * multi-producer protocol itself runs under TSan in stress_mpsc.
	 */
	run("shared");
#endif
	return 0;
}
