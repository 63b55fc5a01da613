// SPDX-License-Identifier: MIT
/*
 * Application tracing, the producer side: event declarations, per-thread
 * rings in a session directory, and the emit path.
 *
 * Session directory (0700, made by perfring record or by the program):
 *   ids                 u32 next event id, under flock (shared by every
 *                       process of the session)
 *   <pid>.events        one line per declared event, appended before any
 *                       record of it is published:
 *                       "<id> <provider>:<name> <fields>\n"
 *   <pid>-<tid>.ring    a thread's ring (+ .wake FIFO), created under a
 *                       temporary name and renamed into place once
 *                       initialised, so a recorder watching the directory
 *                       only ever sees whole rings
 *   <pid>-shared.ring   the process's multi-producer ring (PERFRING_APP_SHARED)
 *   recorder.pid        the recorder's pid (perfring_app_snapshot())
 *
 * A thread's ring is released when the thread exits (its producer lock goes
 * with the descriptor), which tells the recorder to drain it and remove it.
 *
 * fork(): the child drops every ring and descriptor it inherited without
 * writing to them (fork_child()) and makes its own on its first event
 * (fork_resume()); see docs/design.md section 10, "fork and exec".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../common/opts.h"
#include "../ring/clock_fast.h"
#include "../ring/output_fast.h"
#include "app_format.h"

#define DEFAULT_RING_SIZE (1u << 20)
#define MAX_EVENTS 4096

struct perfring_event {
	struct app_event_desc d;
	uint32_t hdr_size; /* record bytes without string/bytes contents */
	/* the len the fast path takes: fixed_size while ready and with no
	 * string/bytes fields, else UINT32_MAX (READ_ONCE/WRITE_ONCE) */
	uint32_t fast_len;
	bool ready; /* has its id (session started) */
	struct perfring_event *next;
};

struct app_thread {
	struct perfring_ring *ring;
	/* ring when the fast path may write to it (forward, single
	 * producer, TSC clock), else NULL */
	struct perfring_ring *fast_ring;
	pid_t tid;
	bool failed; /* ring creation failed: do not retry on every event */
	bool listed; /* in the threads list (its counts are summed) */
	uint64_t gen; /* session generation the ring belongs to */
	/* Written by the thread only (WRITE_ONCE), summed by app_stats: no
	 * shared counter line bouncing between emitting threads. */
	uint64_t events, lost, too_large;
	/* PERFRING_APP_BLOCK: the ring whose recorder freed nothing for
	 * block_timeout_ms, and the room it had then (wait_for_room()) */
	struct perfring_ring *stalled_ring;
	int64_t stalled_space;
	struct app_thread *next;
};

static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perfring_event *events; /* every declaration, newest first */
static char session_dir[PATH_MAX];
static bool self_session;
static int events_fd = -1;
static uint64_t ring_size = DEFAULT_RING_SIZE;
static unsigned int app_flags;
static int block_timeout_ms = 250;
static uint64_t generation; /* bumped by every start and stop */
static struct perfring_ring *shared_ring;
static char shared_dir[PATH_MAX]; /* the session it was made in */
static pthread_key_t thread_key;
static bool key_made;
static struct app_thread *threads; /* live threads that emitted */
static uint64_t retired_events, retired_lost, retired_too_large; /* gone */
static uint32_t st_rings;

/*
 * Every ring handle the process holds, on the heap: a fork child finds
 * them here (the parent's other threads' TLS is not theirs to walk once
 * the child creates threads of its own).  Under app_lock.
 */
struct held_ring {
	struct perfring_ring *ring;
	struct held_ring *next;
};
static struct held_ring *held_rings;

/*
 * FORK_PENDING: a fork child that has dropped what it inherited and makes
 * its own events file and shared ring at its next event or declaration;
 * FORK_FAILED: that failed (logged), its events are counted lost.
 * Written under app_lock, read by write_slow() without it (pair T).
 */
enum { FORK_NONE, FORK_PENDING, FORK_FAILED };
static int fork_state;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_err;

PERFRING_API volatile int perfring_app_active;

static __thread struct app_thread me __attribute__((tls_model("initial-exec")));

static inline void count_event(void)
{
	WRITE_ONCE(me.events, me.events + 1);
}

static void count_lost(void)
{
	WRITE_ONCE(me.lost, me.lost + 1);
}

/* Lists the calling thread so its counts are summed; app_lock held. */
static void list_thread(void)
{
	if (me.listed)
		return;
	me.next = threads;
	threads = &me;
	me.listed = true;
	pthread_setspecific(thread_key, &me); /* thread_exit() unlists it */
}

/* ---- options ---- */

static uint64_t parse_bytes(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return 0;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	return *end ? 0 : v;
}

static unsigned int parse_mode(const char *s)
{
	unsigned int f = 0;

	if (!s)
		return 0;
	if (strstr(s, "shared"))
		f |= PERFRING_APP_SHARED;
	if (strstr(s, "overwrite"))
		f |= PERFRING_APP_OVERWRITE;
	if (strstr(s, "block"))
		f |= PERFRING_APP_BLOCK;
	return f;
}

/* ---- ids and the events file ---- */

/* Takes the next event id of the session (flock on <dir>/ids). */
static int alloc_id(uint32_t *id)
{
	char path[PATH_MAX + 8];
	uint32_t next = PERFRING_APP_FIRST_ID;
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/ids", session_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	n = pread(fd, &next, sizeof(next), 0);
	if (n != (ssize_t)sizeof(next) || next < PERFRING_APP_FIRST_ID)
		next = PERFRING_APP_FIRST_ID;
	if (next > APP_LAST_ID) {
		pr_err("app: session %s has no event ids left", session_dir);
		err = -ENOSPC;
	} else {
		*id = next++;
		if (pwrite(fd, &next, sizeof(next), 0) != (ssize_t)sizeof(next))
			err = errno ? -errno : -EIO;
	}
	flock(fd, LOCK_UN);
	close(fd);
	return err;
}

/* Appends @ev's line to events_fd (one write: O_APPEND keeps the lines of
 * concurrent writers whole).  Called with app_lock held. */
static int write_event_line(const struct perfring_event *ev)
{
	char line[APP_LINE_MAX];
	int len;

	len = app_desc_format(&ev->d, line, sizeof(line));
	if (len < 0)
		return len;
	if (write(events_fd, line, (size_t)len) != len)
		return errno ? -errno : -EIO;
	return 0;
}

/* Gives @ev its id and appends its line.  Called with app_lock held. */
static int publish_event(struct perfring_event *ev)
{
	int err;

	err = alloc_id(&ev->d.id);
	if (!err)
		err = write_event_line(ev);
	if (err)
		return err;
	ev->ready = true;
	WRITE_ONCE(ev->fast_len,
		   ev->d.nr_dyn ? UINT32_MAX : (uint32_t)ev->d.fixed_size);
	return 0;
}

/* ---- rings ---- */

/* Closes a ring this process made (app_lock held). */
static void release_ring(struct perfring_ring *r)
{
	for (struct held_ring **l = &held_rings; *l; l = &(*l)->next) {
		if ((*l)->ring == r) {
			struct held_ring *h = *l;

			*l = h->next;
			free(h);
			break;
		}
	}
	perfring_ring_destroy(r);
}

static void thread_exit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&app_lock);
	me.fast_ring = NULL;
	if (me.ring) {
		release_ring(me.ring);
		me.ring = NULL;
	}
	if (me.listed) {
		for (struct app_thread **l = &threads; *l; l = &(*l)->next) {
			if (*l == &me) {
				*l = me.next;
				break;
			}
		}
		retired_events += me.events;
		retired_lost += me.lost;
		retired_too_large += me.too_large;
		me.listed = false;
	}
	pthread_mutex_unlock(&app_lock);
}

/* The recorder's pid from recorder.pid, or 0. */
static pid_t recorder_pid(void)
{
	char path[PATH_MAX + 16], buf[32];
	ssize_t n;
	long pid;
	int fd;

	snprintf(path, sizeof(path), "%s/recorder.pid", session_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	pid = strtol(buf, NULL, 10);
	return pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
}

#define NAME_WAIT_MS 2000

/*
 * A ring of the same name may still be there, its producer gone but not
 * yet drained: an earlier image of this process (exec keeps the pid, so
 * the main thread's ring and the shared ring get the same names again), or
 * an earlier owner of the pid or tid.  Renaming over it would hide the new
 * ring from the recorder (it knows the name already, and removes it when
 * it lets the old ring go), so while a recorder is there to drain and
 * remove the old one (it looks every 200 ms), wait for that, a bounded
 * time.  Only we create these names (tids are unique among live threads).
 */
static void wait_for_name(const char *fin, const char *finw)
{
	struct timespec nap = { 0, 1000 * 1000 };
	uint64_t deadline = 0;
	struct stat st;
	pid_t rec = 0;

	while (lstat(fin, &st) == 0 || lstat(finw, &st) == 0) {
		if (!deadline) {
			rec = recorder_pid();
			if (!rec || (kill(rec, 0) < 0 && errno == ESRCH))
				return; /* nobody will take it away */
			deadline =
				perfring_clock_ns() + NAME_WAIT_MS * 1000000ull;
		} else if (perfring_clock_ns() >= deadline) {
			pr_warn("app: %s is still there after %d ms (not yet drained by recorder %d): replacing it",
				fin, NAME_WAIT_MS, (int)rec);
			return;
		}
		nanosleep(&nap, NULL);
	}
}

/* Creates <dir>/<name>.ring under a temporary name, then renames the wake
 * FIFO and the ring into place (the recorder reacts to the ring's rename). */
static int create_ring(const char *name, unsigned int mode,
		       struct perfring_ring **out)
{
	char tmp[PATH_MAX + 64], fin[PATH_MAX + 64];
	char tmpw[PATH_MAX + 80], finw[PATH_MAX + 80];
	PERFRING_OPTS(perfring_ring_opts, ro, .data_size = ring_size,
		      .flags = mode, .role = PERFRING_ROLE_PRODUCER);
	struct held_ring *held = malloc(sizeof(*held));
	int err;

	if (!held)
		return -ENOMEM;
	ro.watermark = ring_size / 4;
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", session_dir, name);
	snprintf(fin, sizeof(fin), "%s/%s.ring", session_dir, name);
	snprintf(tmpw, sizeof(tmpw), "%s.wake", tmp);
	snprintf(finw, sizeof(finw), "%s.wake", fin);
	unlink(tmp);
	unlink(tmpw);
	ro.path = tmp;
	err = perfring_ring_create(&ro, out);
	if (err) {
		free(held);
		return err;
	}
	wait_for_name(fin, finw);
	if (rename(tmpw, finw) < 0 || rename(tmp, fin) < 0) {
		err = -errno;
		perfring_ring_destroy(*out);
		*out = NULL;
		unlink(tmp);
		unlink(tmpw);
		unlink(finw);
		free(held);
		return err;
	}
	/*
	 * Fault the pages in now, not one per 4 KiB of events later; and
	 * find out now if the file system cannot hold the ring (a full
	 * tmpfs would raise SIGBUS at a later write).  EINVAL: a kernel
	 * without MADV_POPULATE_WRITE (before 5.14), nothing to learn.
	 */
#ifdef MADV_POPULATE_WRITE
	if (madvise((*out)->data,
		    (*out)->double_mapped ? 2 * (*out)->size : (*out)->size,
		    MADV_POPULATE_WRITE) < 0 &&
	    errno != EINVAL) {
		err = -errno;
		perfring_ring_destroy(*out);
		*out = NULL;
		unlink(fin);
		unlink(finw);
		free(held);
		return err;
	}
#endif
	held->ring = *out;
	held->next = held_rings;
	held_rings = held;
	atomic_add_relaxed(&st_rings, 1);
	return 0;
}

/* The calling thread's first event of this session: make its ring. */
static __attribute__((noinline, cold)) struct perfring_ring *thread_ring(void)
{
	char name[64];
	uint64_t gen;
	int err;

	pthread_mutex_lock(&app_lock);
	gen = generation;
	if (!perfring_app_active) {
		pthread_mutex_unlock(&app_lock);
		return NULL;
	}
	if (me.ring && me.gen != gen) {
		/* A ring of an earlier session (stop, then start again). */
		me.fast_ring = NULL;
		release_ring(me.ring);
		me.ring = NULL;
		me.failed = false;
	}
	list_thread();
	if (me.ring || me.failed) {
		pthread_mutex_unlock(&app_lock);
		return me.ring;
	}
	if (app_flags & PERFRING_APP_SHARED) {
		pthread_mutex_unlock(&app_lock);
		return NULL; /* the shared ring serves every thread */
	}
	me.tid = (pid_t)syscall(SYS_gettid);
	snprintf(name, sizeof(name), "%d-%d", (int)getpid(), (int)me.tid);
	err = create_ring(name,
			  (app_flags & PERFRING_APP_OVERWRITE) ?
				  PERFRING_MODE_OVERWRITE :
				  0,
			  &me.ring);
	if (err) {
		pr_warn("app: cannot create the ring of thread %d in %s: %s; its events are dropped",
			(int)me.tid, session_dir, strerror(-err));
		me.failed = true;
	} else {
		me.gen = gen;
		/* the clock was set up before tracing started (K) */
		if (me.ring->sp_fast &&
		    ring_clk.source != PERFRING_CLOCK_SYSCALL)
			me.fast_ring = me.ring;
	}
	pthread_mutex_unlock(&app_lock);
	return me.ring;
}

/* ---- fork ---- */

/*
 * In a fork child, a ring inherited from the parent: unmapped and closed,
 * nothing written to it (no flush, no LOST record, no head or tail store:
 * it is the parent's, and the parent's thread may still be writing it).
 * Closing matters as much as unmapping: the recorder learns that a
 * producer is gone when the OFD lock of its ring file goes, and a child
 * holding a copy of the descriptor would keep the parent's ring alive.
 * munmap and close only (async-signal-safe); the handle is freed later by
 * reap_forgotten_rings().
 */
static void forget_ring(struct perfring_ring *r)
{
	if (r->map_base)
		munmap(r->map_base, r->map_len);
	if (r->ctl_rw)
		munmap(r->ctl_rw, r->page_size);
	if (r->slots_map)
		munmap(r->slots_map, r->slots_len);
	r->map_base = r->ctl_rw = r->slots_map = NULL;
	r->pc = NULL;
	r->ext = NULL;
	r->data = NULL;
	r->slots = NULL;
	if (r->fd >= 0)
		close(r->fd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	if (r->wake_wr >= 0)
		close(r->wake_wr);
	r->fd = r->wake_fd = r->wake_wr = -1;
}

/* Frees the handles forget_ring() emptied (app_lock held). */
static void reap_forgotten_rings(void)
{
	for (struct held_ring **l = &held_rings; *l;) {
		struct held_ring *h = *l;

		if (h->ring->fd >= 0) {
			l = &h->next;
			continue;
		}
		*l = h->next;
		perfring_ring_destroy(h->ring); /* nothing left but memory */
		free(h);
	}
}

/*
 * pthread_atfork handlers.  prepare takes app_lock so that the child gets
 * the lists whole and no other thread's lock; parent gives it back.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&app_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&app_lock);
}

/*
 * The child of a multithreaded parent may only do async-signal-safe work
 * here: forget every inherited ring and descriptor, reset the state that
 * describes the parent (threads, tid, counters) and leave the rest (events
 * file, rings of its own: files, locks, memory) to fork_resume() at the
 * child's first event.  The calling thread's fast ring goes with its ring,
 * so the fast path needs no check of its own.
 */
static void fork_child(void)
{
	for (struct held_ring *h = held_rings; h; h = h->next)
		forget_ring(h->ring);
	shared_ring = NULL;
	shared_dir[0] = 0;
	/* The other threads do not exist here; their app_thread is in TLS
	 * glibc hands to the child's next threads. */
	threads = NULL;
	me.ring = NULL;
	me.fast_ring = NULL;
	me.tid = 0;
	me.failed = false;
	me.listed = false;
	me.gen = 0;
	me.next = NULL;
	WRITE_ONCE(me.events, 0);
	WRITE_ONCE(me.lost, 0);
	retired_events = 0;
	retired_lost = 0;
	retired_too_large = 0;
	WRITE_ONCE(st_rings, 0);
	if (events_fd >= 0)
		close(events_fd);
	events_fd = -1;
	WRITE_ONCE(fork_state, FORK_PENDING);
	pthread_mutex_unlock(&app_lock);
}

/* The one process-wide registration the library makes (from the first
 * perfring_app_start()). */
static void register_atfork(void)
{
	atfork_err = -pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/*
 * A fork child's first event or declaration while tracing: its own
 * <pid>.events with every event it inherited, under the same ids (they are
 * the session's), before any record of it is published; and its own shared
 * ring.  Called with app_lock held, tracing active, FORK_PENDING.
 */
static void fork_resume(void)
{
	char path[PATH_MAX + 32];
	int err = 0;

	reap_forgotten_rings();
	snprintf(path, sizeof(path), "%s/%d.events", session_dir,
		 (int)getpid());
	events_fd = open(path,
			 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
			 0600);
	if (events_fd < 0)
		err = -errno;
	for (struct perfring_event *ev = events; !err && ev; ev = ev->next)
		if (ev->ready)
			err = write_event_line(ev);
	if (!err && (app_flags & PERFRING_APP_SHARED)) {
		snprintf(path, sizeof(path), "%d-shared", (int)getpid());
		err = create_ring(path, PERFRING_MODE_MULTI_PRODUCER,
				  &shared_ring);
		if (!err)
			strcpy(shared_dir, session_dir);
	}
	if (err) {
		pr_err("app: forked process %d cannot trace into %s: %s; its events are dropped",
		       (int)getpid(), session_dir, strerror(-err));
		WRITE_ONCE(fork_state, FORK_FAILED);
		return;
	}
	/* T: the events file and the shared ring before the state; pairs
	 * with the acquire in write_slow() (threads the child made before
	 * this take no lock on the way to the shared ring). */
	smp_store_release(&fork_state, FORK_NONE);
}

/* write_slow() in a fork child: 0 to go on, or the events are dropped. */
static __attribute__((noinline, cold)) int fork_first_event(void)
{
	int state;

	pthread_mutex_lock(&app_lock);
	if (fork_state == FORK_PENDING && perfring_app_active)
		fork_resume();
	state = fork_state;
	pthread_mutex_unlock(&app_lock);
	return state == FORK_FAILED ? -ENOSPC : 0;
}

/* ---- the emit path ---- */

static inline uint16_t current_cpu(void)
{
#if defined(__GLIBC__) && defined(RSEQ_SIG)
	if (likely(__rseq_size >= 8)) {
		const struct rseq *rs =
			(const struct rseq
				 *)(void *)((char *)__builtin_thread_pointer() +
					    __rseq_offset);

		return (uint16_t)READ_ONCE(rs->cpu_id);
	}
#endif
	return (uint16_t)sched_getcpu();
}

static inline void fill_header(unsigned char *p,
			       const struct perfring_event *ev, uint32_t size,
			       pid_t tid)
{
	struct perfring_app_record r = {
		.header = { .type = PERFRING_RECORD_APP_EVENT,
			    .size = (uint16_t)size },
		.time = ring_clock_fast(),
		.event_id = (uint16_t)ev->d.id,
		.cpu = current_cpu(),
		.tid = (uint32_t)tid,
	};

	memcpy(p, &r, sizeof(r));
}

/* Bytes of string/bytes contents, or -1 if @vars do not match @ev. */
static int64_t var_bytes(const struct perfring_event *ev,
			 const struct perfring_var *vars, unsigned int nvars)
{
	uint64_t total = 0;

	if (nvars != ev->d.nr_dyn || (nvars && !vars))
		return -1;
	for (unsigned int i = 0; i < nvars; i++) {
		const struct app_field *f = &ev->d.fields[ev->d.dyn[i]];
		uint64_t n;

		if (!vars[i].ptr)
			n = f->type == APP_STRING ? 1 : 0;
		else if (f->type == APP_STRING)
			n = strnlen(vars[i].ptr, APP_STRING_MAX) + 1;
		else
			n = vars[i].len;
		total += n;
	}
	return (int64_t)total;
}

static void fill_vars(unsigned char *payload, const struct perfring_event *ev,
		      const struct perfring_var *vars)
{
	uint32_t at = ev->d.dyn_data_off;

	for (unsigned int i = 0; i < ev->d.nr_dyn; i++) {
		const struct app_field *f = &ev->d.fields[ev->d.dyn[i]];
		uint32_t n, loc;

		if (f->type == APP_STRING) {
			n = vars[i].ptr ? (uint32_t)strnlen(vars[i].ptr,
							    APP_STRING_MAX) :
					  0;
			if (n)
				memcpy(payload + at, vars[i].ptr, n);
			payload[at + n] = 0;
			n++;
		} else {
			n = vars[i].ptr ? vars[i].len : 0;
			if (n)
				memcpy(payload + at, vars[i].ptr, n);
		}
		/* __data_loc: length << 16 | offset from the raw data start */
		loc = (n << 16) | (APP_COMMON_SIZE + at);
		memcpy(payload + f->offset, &loc, sizeof(loc));
		at += n;
	}
}

/*
 * PERFRING_APP_BLOCK: waits until the recorder has made room for @size
 * bytes.  The recorder is woken first (it may be asleep below its
 * watermark).  The wait ends with room, with the session, or after
 * block_timeout_ms in which the recorder freed nothing; then the thread
 * drops (and counts) on this ring without waiting until the recorder
 * frees something again, so a recorder that stopped or died costs one
 * timeout, not one per event.
 */
static bool wait_for_room(struct perfring_ring *r, uint64_t size)
{
	struct timespec nap = { 0, 50 * 1000 };
	const uint64_t quiet_ns = (uint64_t)block_timeout_ms * 1000000ull;
	int64_t space = perfring_ring_space(r), seen = space;
	uint64_t deadline;

	if (space >= (int64_t)size)
		return true;
	if (me.stalled_ring == r && space <= me.stalled_space)
		return false; /* the recorder has freed nothing since */
	me.stalled_ring = NULL;
	perfring_ring_flush(r);
	deadline = perfring_clock_ns() + quiet_ns;
	while ((space = perfring_ring_space(r)) < (int64_t)size) {
		if (space < 0 || !perfring_app_active)
			return false;
		if (space > seen) {
			seen = space;
			deadline = perfring_clock_ns() + quiet_ns;
		} else if (perfring_clock_ns() >= deadline) {
			me.stalled_ring = r;
			me.stalled_space = space;
			return false;
		}
		nanosleep(&nap, NULL);
	}
	return true;
}

static __attribute__((noinline)) int
write_slow(struct perfring_event *ev, const void *fixed,
	   const struct perfring_var *vars, unsigned int nvars, uint32_t size)
{
	struct perfring_ring *r;
	struct perfring_output h;
	pid_t tid;
	int err;

	if (!ev->ready)
		return -EAGAIN; /* declared while the session was starting */
	/* T: pairs with the release in fork_resume(). */
	if (unlikely(smp_load_acquire(&fork_state)) && fork_first_event()) {
		count_lost();
		return -ENOSPC;
	}
	if (app_flags & PERFRING_APP_SHARED) {
		r = shared_ring;
		if (unlikely(!me.listed)) {
			me.tid = (pid_t)syscall(SYS_gettid);
			pthread_mutex_lock(&app_lock);
			list_thread();
			pthread_mutex_unlock(&app_lock);
		}
	} else {
		r = me.ring && me.gen == READ_ONCE(generation) ? me.ring :
								 thread_ring();
	}
	if (!r) {
		count_lost();
		return -ENOSPC;
	}
	tid = me.tid;
	if (unlikely(size > APP_RECORD_MAX || size > r->max_record)) {
		/* Larger than a record of this ring (APP_RECORD_MAX, or a
		 * small ring): lost, and the recorder is told why. */
		ring_drop_too_large(r);
		count_lost();
		WRITE_ONCE(me.too_large, me.too_large + 1);
		return -E2BIG;
	}
	if ((app_flags & PERFRING_APP_BLOCK) &&
	    !(app_flags & PERFRING_APP_OVERWRITE))
		wait_for_room(r, size + PERFRING_LOST_RECORD_SIZE);
	err = perfring_output_begin(&h, r, size);
	if (err) {
		count_lost();
		return err == -EAGAIN ? -ENOSPC : err;
	}
	fill_header(h.data, ev, size, tid);
	memcpy((unsigned char *)h.data + sizeof(struct perfring_app_record),
	       fixed, ev->d.fixed_size);
	if (nvars)
		fill_vars((unsigned char *)h.data +
				  sizeof(struct perfring_app_record),
			  ev, vars);
	perfring_output_end(&h);
	count_event();
	return 0;
}

/* Integer fields are a few words: copied inline, no memcpy call. */
static inline void copy_fields(unsigned char *dst, const unsigned char *src,
			       size_t n)
{
	for (; n >= 8; n -= 8, dst += 8, src += 8)
		memcpy(dst, src, 8);
	if (n >= 4) {
		memcpy(dst, src, 4);
		n -= 4, dst += 4, src += 4;
	}
	for (; n; n--)
		*dst++ = *src++;
}

/* Everything but the fast path: checks, strings, first events, full or
 * shared or overwrite rings. */
static __attribute__((noinline)) int
event_write_slow(struct perfring_event *ev, const void *fixed, size_t len,
		 const struct perfring_var *vars, unsigned int nvars)
{
	uint32_t size;

	if (!ev || len != ev->d.fixed_size || (len && !fixed))
		return -EINVAL;
	/* K: pairs with the release in perfring_app_start(). */
	if (!smp_load_acquire(&perfring_app_active))
		return 0;
	size = ev->hdr_size;
	if (nvars || ev->d.nr_dyn) {
		int64_t extra = var_bytes(ev, vars, nvars);

		if (extra < 0)
			return -EINVAL;
		/* Over APP_RECORD_MAX: no ring takes it (the recorder adds
		 * the sample's fields); write_slow() counts it. */
		if ((uint64_t)extra > APP_RECORD_MAX - size)
			size = UINT32_MAX;
		else
			size = (uint32_t)((size + (uint64_t)extra + 7) & ~7ull);
	}
	return write_slow(ev, fixed, vars, nvars, size);
}

PERFRING_API int perfring_event_write(struct perfring_event *ev,
				      const void *fixed, size_t len,
				      const struct perfring_var *vars,
				      unsigned int nvars)
{
	struct perfring_ring *r = me.fast_ring;

	/*
	 * Fast path: integers only, this thread's forward ring of this
	 * session (me.fast_ring is set only with the TSC clock; the
	 * generation changes at every stop) with room by the cached tail.
	 * It loads few values so that it stays short; anything else is
	 * event_write_slow(), which also takes perfring_app_active (K).
	 */
	if (likely(r && ev && len == READ_ONCE(ev->fast_len) && !nvars &&
		   me.gen == READ_ONCE(generation))) {
		uint32_t size = ev->hdr_size;
		uint64_t head = r->p_head;

		if (likely(size <= r->max_record &&
			   ring_sp_room(r, head, size))) {
			struct perfring_app_record *rec =
				(void *)(r->data + (head & r->mask));

			ring_prefetch_write_span((unsigned char *)rec, size);
			rec->header.type = PERFRING_RECORD_APP_EVENT;
			rec->header.misc = 0;
			rec->header.size = (uint16_t)size;
			rec->time = tsc_to_ns(read_tsc(), ring_clk.mult,
					      ring_clk.shift, ring_clk.zero) +
				    (uint64_t)ring_clk.mono_offset;
			rec->event_id = (uint16_t)ev->d.id;
			rec->cpu = current_cpu();
			rec->tid = (uint32_t)me.tid;
			copy_fields((unsigned char *)(rec + 1), fixed, len);
			ring_sp_publish(r, head + size); /* (B) */
			count_event();
			return 0;
		}
	}
	return event_write_slow(ev, fixed, len, vars, nvars);
}

/* ---- declarations ---- */

PERFRING_API int perfring_event_declare(const char *provider, const char *name,
					const char *fields,
					struct perfring_event **out)
{
	struct perfring_event *ev;
	const char *why;
	int err = 0;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->fast_len = UINT32_MAX; /* not ready: the slow path */
	why = app_desc_parse_decl(provider, name, fields ? fields : "", &ev->d);
	if (why) {
		pr_err("app: event %s:%s: %s", provider ? provider : "(null)",
		       name ? name : "(null)", why);
		free(ev);
		return -EINVAL;
	}
	ev->hdr_size = (uint32_t)((sizeof(struct perfring_app_record) +
				   ev->d.payload_fixed + 7) &
				  ~7ull);
	pthread_mutex_lock(&app_lock);
	if (perfring_app_active && fork_state == FORK_PENDING)
		fork_resume();
	/* A fork child that cannot trace keeps it unpublished (-EAGAIN). */
	if (perfring_app_active && fork_state == FORK_NONE)
		err = publish_event(ev);
	if (err) {
		pthread_mutex_unlock(&app_lock);
		pr_err("app: cannot publish event %s:%s in %s: %s", provider,
		       name, session_dir, strerror(-err));
		free(ev);
		return err;
	}
	ev->next = events;
	events = ev;
	pthread_mutex_unlock(&app_lock);
	*out = ev;
	return 0;
}

PERFRING_API size_t perfring_event_fixed_size(const struct perfring_event *ev)
{
	return ev ? ev->d.fixed_size : 0;
}

/* ---- sessions ---- */

static int make_self_dir(char *out, size_t size)
{
	char base[64];

	snprintf(base, sizeof(base), "%s/perfring-%u", app_runtime_dir(),
		 (unsigned)getuid());
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return -errno;
	{
		struct stat st;

		/* Refuse a directory someone else planted for us. */
		if (lstat(base, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
		    (st.st_mode & 077)) {
			pr_err("app: %s is not a private directory of ours",
			       base);
			return -EPERM;
		}
	}
	if (snprintf(out, size, "%s/%d", base, (int)getpid()) >= (int)size)
		return -ENAMETOOLONG;
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

PERFRING_API int perfring_app_start(const struct perfring_app_opts *o)
{
	const char *dir = NULL, *env;
	char path[PATH_MAX + 32];
	struct stat st;
	uint64_t rs = 0;
	unsigned int flags = 0;
	int err = 0;

	if (!OPTS_VALID(o))
		return -EINVAL;
	dir = OPTS_GET(o, session, dir);
	rs = OPTS_GET(o, ring_size, rs);
	flags = OPTS_GET(o, flags, flags);
	if (OPTS_GET(o, block_timeout_ms, 0) > 0)
		block_timeout_ms = o->block_timeout_ms;
	if (!dir)
		dir = secure_getenv(PERFRING_SESSION_ENV);
	if (!dir || !*dir)
		return -ENOENT;
	if (!rs && (env = secure_getenv("PERFRING_RING_SIZE")))
		rs = parse_bytes(env);
	if (!rs)
		rs = DEFAULT_RING_SIZE;
	if (!is_pow2(rs) || rs < (uint64_t)sysconf(_SC_PAGESIZE)) {
		pr_err("app: ring size %llu is not a power of two of at least a page",
		       (unsigned long long)rs);
		return -EINVAL;
	}
	flags |= parse_mode(secure_getenv("PERFRING_MODE"));
	if ((flags & PERFRING_APP_SHARED) && (flags & PERFRING_APP_OVERWRITE)) {
		pr_err("app: a shared ring cannot be an overwrite ring");
		return -EINVAL;
	}

	pthread_once(&atfork_once, register_atfork);
	if (atfork_err)
		return atfork_err;
	pthread_mutex_lock(&app_lock);
	if (perfring_app_active) {
		pthread_mutex_unlock(&app_lock);
		return -EALREADY;
	}
	/* A fork child starting anew: what it inherited is gone already. */
	reap_forgotten_rings();
	WRITE_ONCE(fork_state, FORK_NONE);
	if (!key_made) {
		err = -pthread_key_create(&thread_key, thread_exit);
		key_made = !err;
	}
	self_session = !strcmp(dir, "self");
	if (!err && self_session)
		err = make_self_dir(session_dir, sizeof(session_dir));
	else if (!err && snprintf(session_dir, sizeof(session_dir), "%s",
				  dir) >= (int)sizeof(session_dir))
		err = -ENAMETOOLONG;
	if (!err && (stat(session_dir, &st) < 0 || !S_ISDIR(st.st_mode)))
		err = -ENOTDIR;
	ring_size = rs;
	app_flags = flags;
	if (!err) {
		snprintf(path, sizeof(path), "%s/%d.events", session_dir,
			 (int)getpid());
		events_fd = open(path,
				 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
					 O_NOFOLLOW,
				 0600);
		if (events_fd < 0)
			err = -errno;
	}
	for (struct perfring_event *ev = events; !err && ev; ev = ev->next)
		if (!ev->ready)
			err = publish_event(ev);
	/* A shared ring of an earlier start in this session is reused; one
	 * of another session stays mapped (see perfring_app_stop()). */
	if (!err && (flags & PERFRING_APP_SHARED) &&
	    !(shared_ring && !strcmp(shared_dir, session_dir))) {
		snprintf(path, sizeof(path), "%d-shared", (int)getpid());
		err = create_ring(path, PERFRING_MODE_MULTI_PRODUCER,
				  &shared_ring);
		if (!err)
			strcpy(shared_dir, session_dir);
	}
	if (err) {
		if (events_fd >= 0)
			close(events_fd);
		events_fd = -1;
		pthread_mutex_unlock(&app_lock);
		pr_err("app: cannot start tracing into %s: %s", session_dir,
		       strerror(-err));
		return err;
	}
	WRITE_ONCE(generation, generation + 1);
	perfring_clock_init(NULL);
	/* K: session, events file and ids before the flag; pairs with the
	 * acquire in perfring_event_write(). */
	smp_store_release(&perfring_app_active, 1);
	pthread_mutex_unlock(&app_lock);
	return 0;
}

PERFRING_API void perfring_app_stop(void)
{
	pthread_mutex_lock(&app_lock);
	if (!perfring_app_active) {
		pthread_mutex_unlock(&app_lock);
		return;
	}
	WRITE_ONCE(perfring_app_active, 0);
	WRITE_ONCE(generation, generation + 1);
	/* Other threads' rings go when they exit or emit next; ours now. */
	me.fast_ring = NULL;
	if (me.ring) {
		release_ring(me.ring);
		me.ring = NULL;
	}
	/*
	 * The shared ring stays mapped: another thread may be inside an
	 * emit that passed the active check just before this stop.  A later
	 * start in the same session reuses it.
	 */
	if (shared_ring)
		perfring_ring_flush(shared_ring);
	for (struct perfring_event *ev = events; ev; ev = ev->next) {
		ev->ready = false;
		WRITE_ONCE(ev->fast_len, UINT32_MAX);
	}
	if (events_fd >= 0)
		close(events_fd);
	events_fd = -1;
	pthread_mutex_unlock(&app_lock);
}

PERFRING_API int perfring_app_snapshot(void)
{
	char path[PATH_MAX + 16], buf[32];
	ssize_t n;
	long pid;
	int fd;

	if (!perfring_app_active)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/recorder.pid", session_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	pid = strtol(buf, NULL, 10);
	if (pid <= 0)
		return -ESRCH;
	return kill((pid_t)pid, SIGUSR2) ? -errno : 0;
}

PERFRING_API int perfring_app_stats(struct perfring_app_stats *st)
{
	struct perfring_app_stats s = {
		.sz = sizeof(s),
		.rings = READ_ONCE(st_rings),
	};

	if (!st || st->sz < sizeof(size_t))
		return -EINVAL;
	pthread_mutex_lock(&app_lock);
	s.events = retired_events;
	s.lost = retired_lost;
	s.too_large = retired_too_large;
	for (struct app_thread *t = threads; t; t = t->next) {
		s.events += READ_ONCE(t->events);
		s.lost += READ_ONCE(t->lost);
		s.too_large += READ_ONCE(t->too_large);
	}
	pthread_mutex_unlock(&app_lock);
	OPTS_FILL(st, &s);
	return 0;
}

/*
 * `perfring record -- ./app` sets PERFRING_SESSION: trace from the start.
 * Not in a setuid or setgid program (AT_SECURE; secure_getenv() answers
 * NULL there, as for PERFRING_RING_SIZE and PERFRING_MODE): its invoker
 * would choose where root creates files and how large its rings are, as
 * LTTng-UST ignores its environment there too.
 */
static __attribute__((constructor)) void app_autostart(void)
{
	const char *dir = secure_getenv(PERFRING_SESSION_ENV);

	if (dir && *dir)
		perfring_app_start(NULL);
}
