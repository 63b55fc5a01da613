// SPDX-License-Identifier: MIT
/*
 * A session's rings (app_session.c says what is trusted): ring files found
 * by inotify and scans, named and checked, attached as consumers up to the
 * session's limit (the others wait), the events each program declared read
 * from its events file, and rings whose producer died, or that were
 * damaged or truncated, drained and dropped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../ring/barrier.h"
#include "../ring/private.h"
#include "app_session.h"
#include "app_session_internal.h"
#include "stale.h"

/* ---- the set of rings seen ---- */

static uint64_t seen_key(const char *name, ino_t ino)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	h ^= (uint64_t)ino * 0x9e3779b97f4a7c15ull;
	return h ? h : 1;
}

static size_t seen_slot(const struct seen_set *t, uint64_t key)
{
	size_t i = (size_t)(key ^ (key >> 29)) & (t->cap - 1);

	while (t->keys[i] && t->keys[i] != key)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static enum seen_state app_seen_get(const struct seen_set *t, uint64_t key)
{
	return t->cap ? (enum seen_state)t->state[seen_slot(t, key)] :
			SEEN_NONE;
}

static int app_seen_put(struct seen_set *t, uint64_t key, enum seen_state st)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		struct seen_set big = { .cap = t->cap ? 2 * t->cap : 256 };

		big.keys = calloc(big.cap, sizeof(*big.keys));
		big.state = calloc(big.cap, 1);
		if (!big.keys || !big.state) {
			free(big.keys);
			free(big.state);
			return -ENOMEM;
		}
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->keys[k])
				continue;
			i = seen_slot(&big, t->keys[k]);
			big.keys[i] = t->keys[k];
			big.state[i] = t->state[k];
			big.n++;
		}
		free(t->keys);
		free(t->state);
		*t = big;
	}
	i = seen_slot(t, key);
	if (!t->keys[i]) {
		t->keys[i] = key;
		t->n++;
	}
	t->state[i] = (uint8_t)st;
	return 0;
}

/* ---- names of programs, for messages ---- */

void app_program_name(pid_t pid, char *buf, size_t size)
{
	char path[64], comm[64] = "";
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
	}
	if (n > 0) {
		comm[n] = 0;
		comm[strcspn(comm, "\n")] = 0;
		snprintf(buf, size, "program %d (%s)", (int)pid, comm);
	} else {
		snprintf(buf, size, "program %d (exited)", (int)pid);
	}
}

/* ---- events ---- */

static struct events_file *efile(struct app_session *s, pid_t pid)
{
	struct events_file *e;

	for (e = s->efiles; e; e = e->next)
		if (e->pid == pid)
			return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->pid = pid;
	e->next = s->efiles;
	s->efiles = e;
	return e;
}

static int add_event(struct app_session *s, struct events_file *e,
		     const struct app_event_desc *d, const char *where)
{
	struct app_event_desc **slot = &s->ev[d->id - PERFRING_APP_FIRST_ID];
	int err;

	if (*slot) {
		if ((strcmp((*slot)->provider, d->provider) ||
		     strcmp((*slot)->name, d->name)) &&
		    !e->warned_redeclared) {
			e->warned_redeclared = true;
			pr_warn("app: %s: event id %u declared again as %s:%s (it is %s:%s): ignored (further ones are only counted)",
				where, d->id, d->provider, d->name,
				(*slot)->provider, (*slot)->name);
		}
		return 0;
	}
	*slot = malloc(sizeof(**slot));
	if (!*slot)
		return -ENOMEM;
	**slot = *d;
	if (!s->lost_id)
		s->lost_id = APP_SAMPLE_ID(d->id);
	err = s->cb.new_event ?
		      s->cb.new_event(s->cb.ctx, d, APP_SAMPLE_ID(d->id)) :
		      0;
	if (err) {
		free(*slot);
		*slot = NULL;
	}
	return err;
}

/* Reads the lines of <pid>.events not read yet. */
static int app_load_events(struct app_session *s, pid_t pid)
{
	struct events_file *e = efile(s, pid);
	char name[32], where[PATH_MAX + 96], why[256];
	struct stat st;
	char *buf;
	ssize_t n;
	size_t pos = 0, line;
	int fd, err = 0;

	if (!e)
		return -ENOMEM;
	if (e->off >= EVENTS_FILE_MAX)
		return 0;
	snprintf(name, sizeof(name), "%d.events", (int)pid);
	fd = perfring__ring_openat_checked(s->dirfd, name,
					   O_RDONLY | O_NONBLOCK, S_IFREG,
					   s->owner, &st, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT && !e->warned_refused) {
			e->warned_refused = true;
			pr_warn("app: %s/%s refused: %s; events of program %d are not decoded",
				s->dir, name, why, (int)pid);
		}
		return fd == -ENOENT ? 0 : fd;
	}
	buf = malloc(EVENTS_FILE_MAX - e->off + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, EVENTS_FILE_MAX - e->off, (off_t)e->off);
	close(fd);
	if (n < 0) {
		free(buf);
		return -errno;
	}
	while (pos < (size_t)n) {
		struct app_event_desc d;
		const char *bad;
		char *nl = memchr(buf + pos, '\n', (size_t)n - pos);

		if (!nl)
			break; /* a line still being written */
		line = (size_t)(nl - (buf + pos)) + 1;
		snprintf(where, sizeof(where), "%s/%s offset %llu", s->dir,
			 name, (unsigned long long)(e->off + pos));
		bad = app_desc_parse_line(buf + pos, line, &d);
		if (bad) {
			s->st.corrupt++;
			if (!e->warned_line) {
				e->warned_line = true;
				pr_warn("app: %s: %s: line skipped (further bad lines are only counted)",
					where, bad);
			}
		} else {
			err = add_event(s, e, &d, where);
		}
		pos += line;
		if (err)
			break;
	}
	e->off += pos;
	free(buf);
	if (e->off >= EVENTS_FILE_MAX)
		pr_warn("app: %s/%s is over %u bytes: later declarations are ignored",
			s->dir, name, EVENTS_FILE_MAX);
	return err;
}

const struct app_event_desc *app_event_of(struct app_session *s,
					  struct app_ring *r, uint32_t id)
{
	if (id < PERFRING_APP_FIRST_ID || id > APP_LAST_ID)
		return NULL;
	if (!s->ev[id - PERFRING_APP_FIRST_ID])
		app_load_events(s, r->pid);
	return s->ev[id - PERFRING_APP_FIRST_ID];
}

/* ---- rings ---- */

static bool parse_ring_name(const char *name, pid_t *pid, pid_t *tid)
{
	char *end;
	long p, t = 0;
	size_t n = strlen(name);

	if (n < 6 || n > NAME_MAX || strcmp(name + n - 5, ".ring") ||
	    name[0] == '.')
		return false;
	p = strtol(name, &end, 10);
	if (end == name || *end != '-' || p <= 0 || p > INT32_MAX)
		return false;
	if (!strncmp(end + 1, "shared.ring", 11)) {
		t = 0;
		end += 7;
	} else {
		t = strtol(end + 1, &end, 10);
		if (t <= 0 || t > INT32_MAX)
			return false;
	}
	if (strcmp(end, ".ring"))
		return false;
	*pid = (pid_t)p;
	*tid = (pid_t)t;
	return true;
}

void app_ring_warn(struct app_ring *r, enum app_warn cause)
{
	r->warned |= 1u << cause;
}

bool app_ring_warned(const struct app_ring *r, enum app_warn cause)
{
	return r->warned & (1u << cause);
}

static void add_pending(struct app_session *s, const char *name, ino_t ino,
			enum wait_reason why)
{
	struct pending_ring *p;

	if (s->nr_pending == PENDING_MAX) {
		/* Not remembered: reported as lost at the end all the same. */
		s->pending_dropped++;
		if (!s->warned_pending) {
			s->warned_pending = true;
			pr_warn("app: %s: over %d rings wait to be attached: the others are only counted (as lost)",
				s->dir, PENDING_MAX);
		}
		app_seen_put(&s->seen, seen_key(name, ino), SEEN_DONE);
		return;
	}
	if (s->nr_pending == s->pending_cap) {
		size_t cap = s->pending_cap ? 2 * s->pending_cap : 64;
		struct pending_ring *n = realloc(s->pending, cap * sizeof(*n));

		if (!n)
			return;
		s->pending = n;
		s->pending_cap = cap;
	}
	p = &s->pending[s->nr_pending++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->ino = ino;
	p->why = why;
	app_seen_put(&s->seen, seen_key(name, ino), SEEN_PENDING);
}

static void note_refusal(struct app_session *s, const char *name,
			 const char *why)
{
	s->st.rings_refused++;
	if (s->refusals_logged < REFUSALS_LOGGED) {
		s->refusals_logged++;
		pr_warn("app: ring %s/%s not attached: %s", s->dir, name, why);
	} else if (!s->warned_refusals) {
		s->warned_refusals = true;
		pr_warn("app: %s: more rings refused; they are only counted",
			s->dir);
	}
}

/* The ring's descriptors are among the last FD_RESERVE the limit allows
 * (descriptors are handed out lowest first, so the rest are taken). */
static bool fds_short(const struct perfring_ring *ring)
{
	int hi = perfring_ring_fd(ring), w = perfring_ring_wait_fd(ring);
	struct rlimit rl;

	if (w > hi)
		hi = w;
	return getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	       rl.rlim_cur != RLIM_INFINITY &&
	       (rlim_t)hi + FD_RESERVE >= rl.rlim_cur;
}

/* Attaches @name if it is a ring file we have not seen; @retry: it waited
 * in the pending list.  Returns false if it has to wait (again). */
static bool app_attach_ring(struct app_session *s, const char *name, bool retry)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };
	char display[PATH_MAX + NAME_MAX + 2], why[320];
	enum seen_state state;
	struct app_ring *r;
	struct stat st;
	uint64_t key;
	pid_t pid, tid;
	int err;

	if (!parse_ring_name(name, &pid, &tid))
		return true;
	if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return true; /* gone */
	key = seen_key(name, st.st_ino);
	state = app_seen_get(&s->seen, key);
	if (state == SEEN_LIVE || state == SEEN_DONE ||
	    (state == SEEN_PENDING && !retry))
		return true;
	if (s->st.live_rings >= s->max_rings) {
		if (!s->warned_cap) {
			s->warned_cap = true;
			pr_warn("app: %s: %u rings attached, the most allowed (--app-max-rings): %s and later rings wait for a free slot, and count as lost if they never get one",
				s->dir, s->max_rings, name);
		}
		if (!retry)
			add_pending(s, name, st.st_ino, WAIT_CAP);
		return false;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return true;
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(display, sizeof(display), "%s/%s", s->dir, name);
	err = perfring__ring_attachat(s->dirfd, name, PERFRING_ROLE_CONSUMER,
				      s->owner, display, why, sizeof(why),
				      &r->ring);
	if (!err && fds_short(r->ring)) {
		perfring_ring_destroy(r->ring);
		err = -EMFILE;
	}
	if (err == -EMFILE || err == -ENFILE || err == -ENOMEM) {
		free(r);
		if (!s->warned_nofd) {
			s->warned_nofd = true;
			pr_warn("app: ring %s not attached: %s (%d kept for the recorder); it and later ones wait for a descriptor, and count as lost if they never get one",
				display,
				err == -ENOMEM ? strerror(ENOMEM) :
						 "too many open files",
				FD_RESERVE);
		}
		if (!retry)
			add_pending(s, name, st.st_ino, WAIT_FD);
		return false;
	}
	if (err) {
		free(r);
		note_refusal(s, name, why);
		app_seen_put(&s->seen, key, SEEN_DONE);
		return true;
	}
	/* The drop is reported below in our words, naming the program (the
	 * quiet attach above keeps the ring from logging it). */
	perfring_ring_stats(r->ring, &rs);
	r->overwrite = rs.flags & PERFRING_MODE_OVERWRITE;
	r->size = rs.data_size;
	/* Read forward rings with pread(), not through our mapping, until
	 * the mapping is warm (app_session_prepare()): the first read of
	 * each page of a new mapping costs microseconds on a guest with
	 * shadow page tables (docs/design.md 4c), and a second copy costs a
	 * few ns per event for good.  Without memory the mapping is read. */
#ifndef PERFRING_APP_MAP_READS /* a build for A/B measurements */
	if (!r->overwrite)
		r->warming =
			!perfring__ring_copy_reads(r->ring, APP_READ_CHUNK);
#endif
	r->ino = st.st_ino;
	r->pid = pid;
	r->tid = tid;
	r->last_tid = (uint32_t)tid;
	ev.data.ptr = r;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, perfring_ring_wait_fd(r->ring), &ev);
	r->next = s->rings;
	s->rings = r;
	s->st.rings++;
	s->st.live_rings++;
	app_seen_put(&s->seen, key, SEEN_LIVE);
	app_load_events(s, pid);
	return true;
}

/* Rings that waited for a slot or a descriptor: another try. */
void app_retry_pending(struct app_session *s)
{
	size_t keep = 0, n = s->nr_pending;

	for (size_t i = 0; i < n; i++) {
		struct pending_ring p = s->pending[i];

		if (!app_attach_ring(s, p.name, true)) {
			/* attach_ring may not tell why this time; keep it */
			s->pending[keep++] = p;
		}
	}
	s->nr_pending = keep;
}

void app_scan_dir(struct app_session *s)
{
	struct dirent *de;
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		app_attach_ring(s, de->d_name, false);
	closedir(d);
}

/* The producer's role lock is gone: the thread or process ended. */
bool app_producer_gone(struct app_ring *r)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 1 };

	if (fcntl(perfring_ring_fd(r->ring), F_OFD_GETLK, &fl) < 0)
		return false;
	return fl.l_type == F_UNLCK;
}

/* Damage the ring core counted in this ring (bytes). */
uint64_t app_ring_corrupt_bytes(struct app_ring *r)
{
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };

	perfring_ring_stats(r->ring, &rs);
	return rs.corrupt_bytes;
}

/* Unlinks a ring's files: only in a session we made. */
static void app_remove_ring_files(struct app_session *s, const char *name)
{
	char wake[NAME_MAX + 8];

	if (!s->own)
		return;
	snprintf(wake, sizeof(wake), "%s.wake", name);
	unlinkat(s->dirfd, name, 0);
	unlinkat(s->dirfd, wake, 0);
}

static void app_free_ring(struct app_session *s, struct app_ring **link)
{
	struct app_ring *r = *link;

	s->st.corrupt_bytes += app_ring_corrupt_bytes(r);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, perfring_ring_wait_fd(r->ring), NULL);
	perfring_ring_destroy(r->ring);
	app_seen_put(&s->seen, seen_key(r->name, r->ino), SEEN_DONE);
	*link = r->next;
	free(r);
	s->st.live_rings--;
	s->released_some = true;
}

void app_release_ring(struct app_session *s, struct app_ring **link)
{
	char name[NAME_MAX + 1];

	snprintf(name, sizeof(name), "%s", (*link)->name);
	app_free_ring(s, link);
	app_remove_ring_files(s, name);
}

/*
 * The ring file was truncated under us (or faulted): what it held cannot
 * be read.  One warning naming the program and the ring; the bytes it held
 * unread when last seen count as lost.
 */
void app_drop_ring(struct app_session *s, struct app_ring **link)
{
	struct app_ring *r = *link;
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };
	uint64_t unread;
	char who[128];

	perfring_ring_stats(r->ring, &rs);
	/* A control page still in the file (cut to a page or more) says
	 * where the program got to (pread: nothing to fault). */
	{
		struct perf_event_mmap_page pc;
		const struct perfring_ext *ext =
			(const void *)((const char *)&pc + PERFRING_EXT_OFFSET);
		uint64_t head;

		if (pread(perfring_ring_fd(r->ring), &pc, sizeof(pc), 0) ==
		    (ssize_t)sizeof(pc)) {
			/* A gathered MP ring's data_head is ours; how far
			 * its producers got is the reservation head. */
			head = ext->flags & PERFRING_FLAG_MP_GATHER ?
				       ext->reserve_head :
				       pc.data_head;
			if (head - rs.read_pos <= rs.data_size &&
			    head - rs.head <= rs.data_size)
				rs.head = head;
		}
	}
	/* From where this reader stood, less what it converted of the batch
	 * that faulted (already in the output). */
	unread = rs.head - rs.read_pos;
	if (unread > rs.data_size)
		unread = rs.data_size;
	unread -= unread > r->batch_done ? r->batch_done : unread;
	app_program_name(r->pid, who, sizeof(who));
	pr_warn("app: %s truncated its ring %s/%s under the recorder (%s): the ring is dropped; %llu bytes it held unread are lost, the other rings and events go on",
		who, s->dir, r->name,
		perfring__ring_dead_cause(r->ring) == RING_DEAD_FAULT ?
			"a read of it faulted" :
			"the file is shorter than its mapping",
		(unsigned long long)unread);
	s->st.rings_dropped++;
	s->st.dropped_bytes += unread;
	app_free_ring(s, link);
}

void app_handle_inotify(struct app_session *s)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(s->ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ie = (const void *)p;

			if (ie->len && (ie->mask & (IN_MOVED_TO | IN_CREATE)))
				app_attach_ring(s, ie->name, false);
			if (ie->mask & IN_Q_OVERFLOW)
				app_scan_dir(s); /* events were lost: look */
			p += sizeof(*ie) + ie->len;
		}
	}
}
