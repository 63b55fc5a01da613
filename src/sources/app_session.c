// SPDX-License-Identifier: MIT
/*
 * Application tracing, the recorder side (see app.c for the directory
 * layout and app_session.h for the interface).
 *
 * Everything in the directory is written by the traced programs, which
 * may run as another user than the recorder (record -p as root), and is
 * untrusted:
 *
 *  - the directory is reached without following links and must belong to
 *    the program's uid with no group/other access (-p), or is ours
 *    (mkdtemp, held open and flock()ed); after that every file is opened
 *    through the directory descriptor, checked on an O_PATH descriptor
 *    first (type, owner, link count), so a planted symlink, FIFO or device
 *    is never followed or opened, and nothing the recorder did not make is
 *    ever removed from a session it did not make;
 *  - ring files are checked by the ring core when attached, a truncated
 *    one is dropped (perfring_ring_check() each round; the SIGBUS guard for
 *    a truncation in between), every record is copied out of shared memory
 *    once and only the copy is validated and converted;
 *  - events-file lines are parsed with bounds; an app record is converted
 *    only if its event is declared and its __data_loc words point inside it;
 *  - at most max_rings rings are attached at once; every ring never
 *    attached is reported with the reason.
 *
 * Damage is logged once per ring and cause, counted and skipped; the other
 * rings go on.  What the programs claim (LOST records) is kept apart from
 * what the recorder measured (damage, dead reservations, dropped and
 * unattached rings).
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
#include "stale.h"

#define NR_IDS (APP_LAST_ID + 1 - PERFRING_APP_FIRST_ID)
#define EVENTS_FILE_MAX (4u << 20) /* bytes read from one events file */
#define GONE_CHECK_NS (200 * 1000 * 1000ull)
#define SAMPLE_HDR 44 /* header .. raw_size of an app sample */
#define LOST_SIZE 56 /* PERF_RECORD_LOST + TID TIME CPU IDENTIFIER */
#define PENDING_MAX 65536 /* rings remembered while they wait */
#define REFUSALS_LOGGED 5 /* refused rings named in the log; then counted */
#define RECORDER_PID "recorder.pid"
/* Descriptors rings may not take: the recorder's own needs (events files,
 * /proc, the output's metadata at the end). */
#define FD_RESERVE 32

/* Per-ring causes of a warning: each is logged once per ring. */
enum app_warn {
	W_NO_DECL,
	W_PAYLOAD,
	W_TOO_LARGE,
	W_SHORT_LOST,
	W_TYPE,
	W_IMPLAUSIBLE,
	W_DEAD_RESERVATION,
	W_BATCH,
};

struct app_ring {
	struct perfring_ring *ring;
	char name[NAME_MAX + 1]; /* in the session directory */
	ino_t ino;
	pid_t pid, tid; /* tid 0: the process's shared ring */
	bool overwrite;
	bool gone; /* producer gone, drained: released after the round */
	uint64_t batch_done; /* bytes of the open batch already converted */
	uint64_t held; /* bytes read, not yet released */
	bool warming; /* read with pread() while its mapping is warmed */
	uint64_t lost_taken; /* lost_pending written, not yet released */
	uint64_t too_large_seen; /* its ext->too_large last read */
	uint64_t size; /* data bytes */
	uint32_t warned; /* 1 << enum app_warn */
	uint64_t last_time;
	uint32_t last_cpu;
	uint32_t last_tid;
	struct app_ring *next;
};

enum wait_reason { WAIT_CAP, WAIT_FD };

/* A ring not attached yet: over the cap, or no descriptor was left. */
struct pending_ring {
	char name[NAME_MAX + 1];
	ino_t ino;
	enum wait_reason why;
};

struct events_file {
	pid_t pid;
	uint64_t off; /* bytes parsed so far */
	bool warned_line, warned_redeclared, warned_refused;
	struct events_file *next;
};

/* Rings seen, by name and inode: attached, released or refused. */
enum seen_state { SEEN_NONE, SEEN_LIVE, SEEN_DONE, SEEN_PENDING };

struct seen_set {
	uint64_t *keys; /* 0: empty */
	uint8_t *state;
	size_t cap, n;
};

struct app_session {
	char dir[PATH_MAX];
	int dirfd; /* the session directory; every file is opened through it */
	bool own; /* we made the directory: remove it at close */
	uid_t owner; /* whose files we accept ((uid_t)-1: ours) */
	dev_t pid_dev; /* recorder.pid as we made it */
	ino_t pid_ino;
	bool pid_made;
	int epfd, ino_fd;
	uint32_t max_rings;
	struct app_ring *rings;
	struct pending_ring *pending;
	size_t nr_pending, pending_cap;
	uint64_t pending_dropped; /* beyond PENDING_MAX: only counted */
	bool warned_cap, warned_nofd, warned_refusals, warned_pending;
	uint32_t refusals_logged;
	struct seen_set seen;
	struct events_file *efiles;
	struct app_event_desc *ev[NR_IDS];
	uint64_t lost_id; /* sample id LOST records carry */
	struct app_session_cb cb;
	unsigned char *out;
	size_t out_len, out_cap;
	struct app_session_stats st;
	uint64_t next_gone_check;
	bool released_some; /* since the last retry of pending rings */
	bool ended; /* the final drain ran: no ring is attached after it */
	int err; /* first write error */
};

/* Bytes of a ring copied per pread() (perfring__ring_copy_reads): a
 * chunk stays in the L2 cache while it is converted. */
#define APP_READ_CHUNK (256u << 10)
/* Pages of a new ring's mapping warmed per idle moment: ~1-2 ms. */
#define APP_WARM_PAGES 256
/* Bytes of converted records per write() */
#define APP_OUT_CHUNK (2u << 20)

/* ---- output ---- */

static int out_flush(struct app_session *s)
{
	int err = 0;

	if (s->out_len && !s->err) {
		err = s->cb.write(s->cb.ctx, s->out, s->out_len);
		if (err)
			s->err = err;
	}
	s->out_len = 0;
	return s->err;
}

static unsigned char *out_reserve(struct app_session *s, size_t n)
{
	if (s->out_cap - s->out_len < n) {
		size_t ncap = s->out_cap ? s->out_cap : APP_OUT_CHUNK;
		unsigned char *p;

		if (s->out_len && out_flush(s))
			return NULL;
		while (ncap < n)
			ncap *= 2;
		if (ncap != s->out_cap) {
			p = realloc(s->out, ncap);
			if (!p)
				return NULL;
			s->out = p;
			s->out_cap = ncap;
		}
	}
	return s->out + s->out_len;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

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

static enum seen_state seen_get(const struct seen_set *t, uint64_t key)
{
	return t->cap ? (enum seen_state)t->state[seen_slot(t, key)] :
			SEEN_NONE;
}

static int seen_put(struct seen_set *t, uint64_t key, enum seen_state st)
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

static void program_name(pid_t pid, char *buf, size_t size)
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
static int load_events(struct app_session *s, pid_t pid)
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

static const struct app_event_desc *event_of(struct app_session *s,
					     struct app_ring *r, uint32_t id)
{
	if (id < PERFRING_APP_FIRST_ID || id > APP_LAST_ID)
		return NULL;
	if (!s->ev[id - PERFRING_APP_FIRST_ID])
		load_events(s, r->pid);
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

static void ring_warn(struct app_ring *r, enum app_warn cause)
{
	r->warned |= 1u << cause;
}

static bool ring_warned(const struct app_ring *r, enum app_warn cause)
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
		seen_put(&s->seen, seen_key(name, ino), SEEN_DONE);
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
	seen_put(&s->seen, seen_key(name, ino), SEEN_PENDING);
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
static bool attach_ring(struct app_session *s, const char *name, bool retry)
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
	state = seen_get(&s->seen, key);
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
		seen_put(&s->seen, key, SEEN_DONE);
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
	seen_put(&s->seen, key, SEEN_LIVE);
	load_events(s, pid);
	return true;
}

/* Rings that waited for a slot or a descriptor: another try. */
static void retry_pending(struct app_session *s)
{
	size_t keep = 0, n = s->nr_pending;

	for (size_t i = 0; i < n; i++) {
		struct pending_ring p = s->pending[i];

		if (!attach_ring(s, p.name, true)) {
			/* attach_ring may not tell why this time; keep it */
			s->pending[keep++] = p;
		}
	}
	s->nr_pending = keep;
}

static void scan_dir(struct app_session *s)
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
		attach_ring(s, de->d_name, false);
	closedir(d);
}

/* The producer's role lock is gone: the thread or process ended. */
static bool producer_gone(struct app_ring *r)
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
static uint64_t ring_corrupt_bytes(struct app_ring *r)
{
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };

	perfring_ring_stats(r->ring, &rs);
	return rs.corrupt_bytes;
}

/* Unlinks a ring's files: only in a session we made. */
static void remove_ring_files(struct app_session *s, const char *name)
{
	char wake[NAME_MAX + 8];

	if (!s->own)
		return;
	snprintf(wake, sizeof(wake), "%s.wake", name);
	unlinkat(s->dirfd, name, 0);
	unlinkat(s->dirfd, wake, 0);
}

static void free_ring(struct app_session *s, struct app_ring **link)
{
	struct app_ring *r = *link;

	s->st.corrupt_bytes += ring_corrupt_bytes(r);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, perfring_ring_wait_fd(r->ring), NULL);
	perfring_ring_destroy(r->ring);
	seen_put(&s->seen, seen_key(r->name, r->ino), SEEN_DONE);
	*link = r->next;
	free(r);
	s->st.live_rings--;
	s->released_some = true;
}

static void release_ring(struct app_session *s, struct app_ring **link)
{
	char name[NAME_MAX + 1];

	snprintf(name, sizeof(name), "%s", (*link)->name);
	free_ring(s, link);
	remove_ring_files(s, name);
}

/*
 * The ring file was truncated under us (or faulted): what it held cannot
 * be read.  One warning naming the program and the ring; the bytes it held
 * unread when last seen count as lost.
 */
static void drop_ring(struct app_session *s, struct app_ring **link)
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
	program_name(r->pid, who, sizeof(who));
	pr_warn("app: %s truncated its ring %s/%s under the recorder (%s): the ring is dropped; %llu bytes it held unread are lost, the other rings and events go on",
		who, s->dir, r->name,
		perfring__ring_dead_cause(r->ring) == RING_DEAD_FAULT ?
			"a read of it faulted" :
			"the file is shorter than its mapping",
		(unsigned long long)unread);
	s->st.rings_dropped++;
	s->st.dropped_bytes += unread;
	free_ring(s, link);
}

static void handle_inotify(struct app_session *s);
static void report_unattached(struct app_session *s);

/* ---- conversion ---- */

static void corrupt(struct app_session *s, struct app_ring *r,
		    enum app_warn cause, uint32_t bytes, const char *why)
{
	s->st.corrupt++;
	s->st.corrupt_bytes += bytes;
	if (!ring_warned(r, cause)) {
		ring_warn(r, cause);
		pr_warn("app: ring %s/%s: %s: record skipped (further ones are only counted)",
			s->dir, r->name, why);
	}
}

static bool locs_ok(const struct app_event_desc *d, const unsigned char *pl,
		    uint32_t plen)
{
	for (uint32_t k = 0; k < d->nr_dyn; k++) {
		uint32_t loc, off, len;

		memcpy(&loc, pl + d->fields[d->dyn[k]].offset, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (off < APP_COMMON_SIZE + d->dyn_data_off ||
		    off - APP_COMMON_SIZE + (uint64_t)len > plen)
			return false;
	}
	return true;
}

/*
 * One app record of @size bytes (the size the reader checked) at @rec in
 * shared memory: copied once, straight into the output buffer, where the
 * sample is built around it; only the copy is looked at.  -EFAULT: the
 * ring died during the copy (it may hold zeros), nothing was output.
 */
static int convert_event(struct app_session *s, struct app_ring *r,
			 const void *rec, uint32_t size)
{
	struct perfring_app_record h;
	const struct app_event_desc *d;
	uint32_t plen = size - (uint32_t)sizeof(h), raw, total;
	unsigned char *o, *pl;

	/* raw: common header + payload, padded so the sample stays 8-aligned */
	raw = APP_COMMON_SIZE + plen + 4;
	total = SAMPLE_HDR + raw;
	if (total > PERFRING_RECORD_MAX) {
		corrupt(s, r, W_TOO_LARGE, size, "record too large to convert");
		return 0;
	}
	o = out_reserve(s, total);
	if (!o)
		return s->err ? s->err : -ENOMEM;
	/* The record's header lands on bytes 28..51 of the sample, which
	 * are written last; the payload at 52 is where the sample wants it. */
	memcpy(o + 28, rec, size);
	if (perfring__ring_dead_cause(r->ring))
		return -EFAULT;
	memcpy(&h, o + 28, sizeof(h));
	pl = o + 52;
	d = event_of(s, r, h.event_id);
	if (!d) {
		corrupt(s, r, W_NO_DECL, size, "event id no declaration names");
		return 0;
	}
	if (plen < d->payload_fixed || !locs_ok(d, pl, plen)) {
		corrupt(s, r, W_PAYLOAD, size,
			"payload does not match the declaration");
		return 0;
	}
	{
		struct perf_event_header ph = { .type = PERF_RECORD_SAMPLE,
						.misc = PERF_RECORD_MISC_USER,
						.size = (uint16_t)total };
		uint16_t common_type = (uint16_t)d->id;

		memcpy(o, &ph, 8);
		put64(o + 8, APP_SAMPLE_ID(d->id)); /* IDENTIFIER */
		put32(o + 16, (uint32_t)r->pid); /* TID: pid, tid */
		put32(o + 20, h.tid);
		put64(o + 24, h.time); /* TIME */
		put32(o + 32, h.cpu); /* CPU, res */
		put32(o + 36, 0);
		put32(o + 40, raw); /* RAW size, then the raw data */
		memcpy(o + 44, &common_type, 2);
		o[46] = 0; /* common_flags */
		o[47] = 0; /* common_preempt_count */
		put32(o + 48, h.tid); /* common_pid */
		put32(o + 52 + plen, 0);
	}
	s->out_len += total;
	s->st.events++;
	if (!s->st.first_time || h.time < s->st.first_time)
		s->st.first_time = h.time;
	if (h.time > s->st.last_time)
		s->st.last_time = h.time;
	r->last_time = h.time;
	r->last_cpu = h.cpu;
	r->last_tid = h.tid;
	return 0;
}

/* A program's claim of @lost dropped events, into the file as it is. */
static int put_lost(struct app_session *s, struct app_ring *r, uint64_t lost)
{
	struct perf_event_header ph = { .type = PERF_RECORD_LOST,
					.size = LOST_SIZE };
	unsigned char *o;

	s->st.lost = lost > UINT64_MAX - s->st.lost ? UINT64_MAX :
						      s->st.lost + lost;
	s->st.lost_records++;
	if (lost > APP_LOST_PLAUSIBLE) {
		s->st.lost_implausible++;
		if (!ring_warned(r, W_IMPLAUSIBLE)) {
			ring_warn(r, W_IMPLAUSIBLE);
			pr_warn("app: ring %s/%s: a LOST record claims %llu dropped events, more than any program could emit: reported as the program's claim (further ones are only counted)",
				s->dir, r->name, (unsigned long long)lost);
		}
	}
	if (!s->lost_id)
		return 0; /* nothing declared: nothing for perf to name */
	o = out_reserve(s, LOST_SIZE);
	if (!o)
		return s->err ? s->err : -ENOMEM;
	memcpy(o, &ph, 8);
	put64(o + 8, s->lost_id);
	put64(o + 16, lost);
	put32(o + 24, (uint32_t)r->pid); /* trailer: TID TIME CPU IDENTIFIER */
	put32(o + 28, r->last_tid);
	put64(o + 32, r->last_time);
	put32(o + 40, r->last_cpu);
	put32(o + 44, 0);
	put64(o + 48, s->lost_id);
	s->out_len += LOST_SIZE;
	return 0;
}

static int convert_lost(struct app_session *s, struct app_ring *r,
			const void *rec, uint32_t size)
{
	struct perfring_lost_record l;

	if (size < PERFRING_LOST_RECORD_SIZE) {
		corrupt(s, r, W_SHORT_LOST, size, "short PERF_RECORD_LOST");
		return 0;
	}
	memcpy(&l, rec, sizeof(l)); /* the one read */
	if (perfring__ring_dead_cause(r->ring))
		return -EFAULT;
	return l.lost ? put_lost(s, r, l.lost) : 0; /* 0: padding */
}

/* Converts what the ring holds; its space stays taken until
 * app_session_release().  -EFAULT: the ring died. */
/* The producer's count of events too large for its ring (each one also in
 * its LOST records): why some of its loss happened.  A claim of the
 * program's, as its LOST records are; only growth is taken. */
static void note_too_large(struct app_session *s, struct app_ring *r)
{
	struct perfring_ext *ext = perfring__ring_ext(r->ring);
	uint64_t v;

	if (!ext || perfring__ring_dead_cause(r->ring))
		return;
	v = READ_ONCE(ext->too_large);
	if (v <= r->too_large_seen)
		return;
	s->st.too_large += v - r->too_large_seen;
	r->too_large_seen = v;
}

static int drain_ring(struct app_session *s, struct app_ring *r)
{
	const struct perf_event_header *rec;
	int64_t avail;
	int n, err = 0;

	note_too_large(s, r);
	r->batch_done = 0;
	avail = perfring_read_begin(r->ring);
	if (avail <= 0) {
		if (avail == -EBADMSG)
			s->st.corrupt++; /* the ring core logged it */
		return avail == -EFAULT ? -EFAULT : 0;
	}
	while ((n = perfring_read_next(r->ring, &rec)) != 0) {
		struct perf_event_header hdr;

		if (n < 0) {
			if (n == -EFAULT) {
				err = -EFAULT;
			} else {
				/* The reader logged where (once per cause);
				 * the rest of the batch is skipped and
				 * counted by the ring. */
				s->st.corrupt++;
			}
			break;
		}
		/* the producer's lines come from the other CPU: ask for
		 * them a few records ahead (a hint; never dereferenced) */
		__builtin_prefetch((const char *)rec + 2048);
		memcpy(&hdr, rec, sizeof(hdr)); /* its type, read once */
		if (hdr.type == PERFRING_RECORD_APP_EVENT &&
		    (uint32_t)n >= sizeof(struct perfring_app_record))
			err = convert_event(s, r, rec, (uint32_t)n);
		else if (hdr.type == PERF_RECORD_LOST)
			err = convert_lost(s, r, rec, (uint32_t)n);
		else if (perfring__ring_dead_cause(r->ring))
			err = -EFAULT;
		else
			corrupt(s, r, W_TYPE, (uint32_t)n,
				"record of a type programs do not write");
		if (err)
			break;
		r->batch_done += (uint64_t)n;
	}
	if (err == -EFAULT) {
		perfring_read_end(r->ring); /* batch_done stays for drop_ring */
		return err;
	}
	if (r->overwrite) {
		perfring_read_end(r->ring);
	} else {
		perfring__ring_reader_end_hold(r->ring);
		r->held += r->batch_done;
	}
	r->batch_done = 0;
	return err;
}

/*
 * The producer is gone.  A shared ring's dead producer may have reserved
 * space it never committed, which stops data_head for good: skip it (a
 * LOST record of 1 each) and read what was committed behind it.  Drops
 * after the last record are still pending (a ring writes the LOST record
 * in front of the next record): report them, taking the count so that a
 * second look never counts it twice.
 */
static int note_gone(struct app_session *s, struct app_ring *r)
{
	struct perfring_ext *ext = perfring__ring_ext(r->ring);
	uint64_t pending;
	int err = 0;

	if (r->tid == 0 && !r->overwrite) {
		int64_t dead = perfring_ring_skip_dead(r->ring);

		if (dead > 0) {
			s->st.dead_reservations += (uint64_t)dead;
			if (!ring_warned(r, W_DEAD_RESERVATION)) {
				char who[128];

				ring_warn(r, W_DEAD_RESERVATION);
				program_name(r->pid, who, sizeof(who));
				pr_warn("app: ring %s/%s: %s died with %lld reservations it never committed: each counted as 1 lost, the records committed after them are read",
					s->dir, r->name, who, (long long)dead);
			}
			err = drain_ring(s, r);
			if (err)
				return err;
		}
	}
	if (perfring__ring_dead_cause(r->ring) || !ext)
		return 0;
	/* Taken from the ring only once the round holding its LOST record
	 * is written (app_session_release): a recorder killed before that
	 * leaves the count for the next one, as it leaves the records. */
	pending = READ_ONCE(ext->lost_pending);
	if (perfring__ring_dead_cause(r->ring))
		return -EFAULT;
	if (!pending)
		return 0;
	r->lost_taken = pending;
	return put_lost(s, r, pending);
}

PR_HIDDEN int app_session_drain(struct app_session *s, bool snapshot,
				bool final)
{
	uint64_t now = perfring_clock_ns();
	bool check = final || now >= s->next_gone_check;
	struct app_ring **link = &s->rings;
	int err = 0;

	if (final) {
		handle_inotify(s); /* rings that just appeared */
		scan_dir(s);
		snapshot = true;
	}
	if (check) {
		s->next_gone_check = now + GONE_CHECK_NS;
		if (s->nr_pending)
			retry_pending(s);
	}
	while (*link && !err) {
		struct app_ring *r = *link;
		bool gone;

		if (r->gone) {
			link = &r->next;
			continue; /* drained; released after the round */
		}
		/* A truncated file is found before anything touches it. */
		if (perfring_ring_check(r->ring)) {
			drop_ring(s, link);
			continue;
		}
		/* Gone first, drain second: nothing can arrive after. */
		gone = check && producer_gone(r);
		if (!r->overwrite || snapshot || gone)
			err = drain_ring(s, r);
		if (!err && gone)
			err = note_gone(s, r);
		if (err == -EFAULT) {
			err = 0;
			drop_ring(s, link);
			continue;
		}
		if (!err && gone)
			r->gone = true;
		link = &r->next;
	}
	if (!err)
		err = out_flush(s);
	if (final) {
		/* Whatever still waits now never gets a turn: say so. */
		report_unattached(s);
		s->ended = true;
	}
	return err;
}

PR_HIDDEN void app_session_release(struct app_session *s)
{
	struct app_ring **link = &s->rings;

	while (*link) {
		struct app_ring *r = *link;
		struct perfring_ext *ext = perfring__ring_ext(r->ring);

		perfring__ring_reader_release(r->ring);
		r->held = 0;

		if (r->lost_taken && !perfring__ring_dead_cause(r->ring) &&
		    ext) {
			/* The producer is gone: nobody else moves the count. */
			atomic_add_relaxed(&ext->lost_pending, -r->lost_taken);
			r->lost_taken = 0;
		}
		if (r->gone) {
			release_ring(s, link);
			continue;
		}
		link = &r->next;
	}
	/* Slots and descriptors came free: the waiting rings' turn. */
	if (s->released_some && s->nr_pending && !s->ended) {
		s->released_some = false;
		retry_pending(s);
	}
}

PR_HIDDEN bool app_session_pressed(const struct app_session *s)
{
	for (const struct app_ring *r = s->rings; r; r = r->next)
		if (r->held >= r->size / 4)
			return true;
	return false;
}

/* ---- waiting ---- */

PR_HIDDEN int app_session_prepare(struct app_session *s)
{
	bool warming = false;

	/* Idle time warms the new rings' mappings (docs/design.md 4c); a
	 * warm one is read through its mapping from then on. */
	for (struct app_ring *r = s->rings; r; r = r->next) {
		int64_t left;

		if (!r->warming)
			continue;
		left = perfring__ring_warm(r->ring, APP_WARM_PAGES);
		if (left == 0 && !perfring__ring_copy_reads(r->ring, 0))
			r->warming = false;
		else if (left < 0)
			r->warming = false; /* dead: the next drain says so */
		else
			warming = true;
	}
	if (warming)
		return 1; /* no sleep until every mapping is warm */
	for (struct app_ring *r = s->rings; r; r = r->next)
		if (!r->overwrite && !r->gone &&
		    perfring_ring_wait_prepare(r->ring) > 0)
			return 1;
	return 0;
}

static void handle_inotify(struct app_session *s)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(s->ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ie = (const void *)p;

			if (ie->len && (ie->mask & (IN_MOVED_TO | IN_CREATE)))
				attach_ring(s, ie->name, false);
			if (ie->mask & IN_Q_OVERFLOW)
				scan_dir(s); /* events were lost: look */
			p += sizeof(*ie) + ie->len;
		}
	}
}

PR_HIDDEN void app_session_finish(struct app_session *s)
{
	struct epoll_event evs[64];
	int n;

	do {
		n = epoll_wait(s->epfd, evs, 64, 0);
		for (int i = 0; i < n; i++) {
			struct app_ring *r = evs[i].data.ptr;

			if (!r)
				handle_inotify(s);
			else
				perfring_ring_wait_finish(r->ring);
		}
	} while (n == 64);
}

/* ---- setup ---- */

/* recorder.pid: made new (O_EXCL), or one a recorder of ours left (a
 * regular file of ours, one link) taken over; nothing else is touched. */
static void write_recorder_pid(struct app_session *s)
{
	char pid[24], why[256];
	int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	struct stat st;
	int fd;

	fd = openat(s->dirfd, RECORDER_PID,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && !s->own) {
		fd = perfring__ring_openat_checked(s->dirfd, RECORDER_PID,
						   O_WRONLY | O_NONBLOCK,
						   S_IFREG, geteuid(), &st, why,
						   sizeof(why));
		if (fd < 0) {
			pr_warn("app: %s/%s is there and not ours to replace (%s): perfring_app_snapshot() will not reach this recorder",
				s->dir, RECORDER_PID, why);
			return;
		}
		if (ftruncate(fd, 0) < 0)
			pr_debug("app: cannot truncate %s/%s", s->dir,
				 RECORDER_PID);
	} else if (fd < 0) {
		pr_warn("app: cannot create %s/%s: %s", s->dir, RECORDER_PID,
			strerror(errno));
		return;
	}
	if (write(fd, pid, (size_t)len) != len)
		pr_debug("app: cannot write %s/%s", s->dir, RECORDER_PID);
	if (fstat(fd, &st) == 0) {
		s->pid_dev = st.st_dev;
		s->pid_ino = st.st_ino;
		s->pid_made = true;
	}
	close(fd);
}

static int session_init(struct app_session *s, const struct app_session_cb *cb)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	char self[64];

	s->cb = *cb;
	s->max_rings = cb->max_rings ? cb->max_rings : APP_MAX_RINGS_DEFAULT;
	if (!perfring__ring_guard_installed())
		pr_warn("app: perfring_sigbus_guard() was not called: a program that truncates its ring file can crash this process");
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	s->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ino_fd < 0)
		return -errno;
	/* The directory we hold, not whatever its path names by now. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", s->dirfd);
	if (inotify_add_watch(s->ino_fd, self,
			      IN_MOVED_TO | IN_CREATE | IN_ONLYDIR) < 0)
		return -errno;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->ino_fd, &ev) < 0)
		return -errno;
	/* The output buffer, touched now: on a guest with shadow page tables
	 * each first touch of a page costs microseconds (docs/design.md 4c),
	 * which the first drain would pay while a program's ring fills. */
	s->out = malloc(APP_OUT_CHUNK);
	if (!s->out)
		return -ENOMEM;
	memset(s->out, 0, APP_OUT_CHUNK);
	s->out_cap = APP_OUT_CHUNK;
	write_recorder_pid(s);
	scan_dir(s); /* rings made before the watch */
	return 0;
}

/* Watches s->dir; frees @s on failure. */
static int session_start(struct app_session *s, const struct app_session_cb *cb,
			 struct app_session **out)
{
	int err = session_init(s, cb);

	if (err) {
		pr_err("app: cannot watch %s: %s", s->dir, strerror(-err));
		app_session_close(s);
		return err;
	}
	*out = s;
	return 0;
}

static struct app_session *session_alloc(void)
{
	struct app_session *s = calloc(1, sizeof(*s));

	if (s)
		s->epfd = s->ino_fd = s->dirfd = -1;
	return s;
}

PR_HIDDEN int app_session_create(const struct app_session_cb *cb,
				 struct app_session **out)
{
	struct app_session *s = session_alloc();
	const char *tmp = getenv("PERFRING_TMPDIR");
	int err;

	if (!s)
		return -ENOMEM;
	if (!tmp || !*tmp || strlen(tmp) > PATH_MAX - 32)
		tmp = app_runtime_dir();
	app_session_reclaim_stale(tmp); /* killed recorders' directories */
	snprintf(s->dir, sizeof(s->dir), "%s/perfring-XXXXXX", tmp);
	if (!mkdtemp(s->dir)) {
		err = -errno;
		pr_err("app: cannot make a session directory in %s: %s", tmp,
		       strerror(-err));
		free(s);
		return err;
	}
	s->own = true;
	s->owner = (uid_t)-1;
	/* Held for the whole session: the lock says it is in use. */
	s->dirfd =
		open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dirfd < 0 || flock(s->dirfd, LOCK_EX | LOCK_NB) < 0) {
		err = -errno;
		pr_err("app: cannot hold the session directory %s: %s", s->dir,
		       strerror(-err));
		app_session_close(s);
		return err;
	}
	return session_start(s, cb, out);
}

/* $PERFRING_SESSION from the process's environ, if it has it. */
static bool env_session(int procfd, char *out, size_t size)
{
	const size_t key = sizeof(PERFRING_SESSION_ENV "=") - 1;
	bool found = false;
	char *buf;
	ssize_t n;
	int fd;

	fd = openat(procfd, "environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	buf = malloc(1u << 20);
	n = buf ? read(fd, buf, (1u << 20) - 1) : -1;
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
			if (strncmp(p, PERFRING_SESSION_ENV "=", key))
				continue;
			if (strlen(p + key) < size) {
				strcpy(out, p + key);
				found = true;
			}
			break;
		}
	}
	free(buf);
	return found;
}

/* The real and file-system uids of the process, and its thread group
 * (the process a thread id belongs to), from its status. */
static int proc_uids(int procfd, uid_t *ruid, uid_t *fsuid, pid_t *tgid)
{
	char buf[4096], *p;
	unsigned int r, e, sv, fs;
	int tg;
	ssize_t n;
	int fd = openat(procfd, "status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%u %u %u %u", &r, &e, &sv, &fs) != 4)
		return -ESRCH;
	*ruid = r;
	*fsuid = fs;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%d", &tg) != 1)
		return -ESRCH;
	*tgid = tg;
	return 0;
}

/*
 * Opens the directory @path from / one component at a time, never
 * following a link (each component O_NOFOLLOW|O_DIRECTORY).  Returns the
 * descriptor or -errno with the reason in @why.
 */
static int open_dir_nofollow(const char *path, char *why, size_t why_len)
{
	char buf[PATH_MAX], *comp, *save = NULL;
	int fd, next;

	if (path[0] != '/') {
		snprintf(why, why_len, "not an absolute path");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(buf)) {
		snprintf(why, why_len, "path too long");
		return -ENAMETOOLONG;
	}
	strcpy(buf, path);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "cannot open /: %s", strerror(errno));
		return -errno;
	}
	for (comp = strtok_r(buf, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		next = openat(fd, comp,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int err = -errno;
			struct stat st;

			if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				snprintf(
					why, why_len,
					"\"%s\" is a symbolic link (not followed)",
					comp);
			else
				snprintf(why, why_len, "\"%s\": %s", comp,
					 strerror(-err));
			close(fd);
			return err == -ENOTDIR ? -ELOOP : err;
		}
		close(fd);
		fd = next;
	}
	return fd;
}

/* The session directory of a process running as @uid: refused (logged,
 * -EPERM) unless it is a directory of @uid with no group/other access. */
static int open_session_dir(struct app_session *s, pid_t pid, uid_t uid)
{
	char why[PATH_MAX + 64];
	struct stat st;
	int fd = open_dir_nofollow(s->dir, why, sizeof(why));

	if (fd < 0) {
		if (fd != -ENOENT)
			pr_warn("app: session directory %s of process %d refused: %s; its application events are not recorded",
				s->dir, (int)pid, why);
		return fd;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	if (st.st_uid != uid || (st.st_mode & 077)) {
		pr_warn("app: session directory %s of process %d refused: %s; its application events are not recorded",
			s->dir, (int)pid,
			st.st_uid != uid ?
				"it is not owned by the process's uid" :
				"group or others have access to it (mode not 0700)");
		pr_info("app: %s is owned by uid %u with mode %04o; process %d runs as uid %u",
			s->dir, (unsigned int)st.st_uid,
			(unsigned int)(st.st_mode & 07777), (int)pid,
			(unsigned int)uid);
		close(fd);
		return -EPERM;
	}
	s->dirfd = fd;
	s->owner = uid;
	return 0;
}

PR_HIDDEN int app_session_find(pid_t pid, const struct app_session_cb *cb,
			       struct app_session **out)
{
	struct app_session *s = session_alloc();
	uid_t ruid, fsuid;
	pid_t tgid;
	char proc[64];
	int procfd, err;

	if (!s)
		return -ENOMEM;
	/* One handle on the process: its uid and environment are the same
	 * process's, even if the pid is reused meanwhile. */
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	procfd = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0 || proc_uids(procfd, &ruid, &fsuid, &tgid)) {
		if (procfd >= 0)
			close(procfd);
		free(s);
		return -ESRCH;
	}
	if (tgid != pid) {
		/* Another thread of a process: its session is the
		 * process's, looked at once, for the process's id. */
		close(procfd);
		free(s);
		return -ENOENT;
	}
	if (!env_session(procfd, s->dir, sizeof(s->dir)) ||
	    !strcmp(s->dir, "self")) {
		/* The program's own session: where app_runtime_dir() put it
		 * then (it may have chosen /tmp if /dev/shm was short). */
		static const char *const bases[] = { "/dev/shm", "/tmp" };

		err = -ENOENT;
		for (size_t i = 0; i < 2 && err == -ENOENT; i++) {
			snprintf(s->dir, sizeof(s->dir), "%s/perfring-%u/%d",
				 bases[i], (unsigned)ruid, (int)pid);
			err = open_session_dir(s, pid, fsuid);
		}
	} else {
		err = open_session_dir(s, pid, fsuid);
	}
	close(procfd);
	if (err) {
		free(s);
		/* Refused or absent: the kernel events are still recorded. */
		return -ENOENT;
	}
	return session_start(s, cb, out);
}

PR_HIDDEN const char *app_session_dir(const struct app_session *s)
{
	return s->dir;
}

PR_HIDDEN int app_session_fd(const struct app_session *s)
{
	return s->epfd;
}

PR_HIDDEN int app_session_formats(struct app_session *s,
				  int (*fn)(void *ctx,
					    const struct app_event_desc *d,
					    const char *format, size_t len),
				  void *ctx)
{
	for (uint32_t i = 0; i < NR_IDS; i++) {
		char *text;
		size_t len;
		int err;

		if (!s->ev[i])
			continue;
		err = app_desc_format_file(s->ev[i], &text, &len);
		if (!err)
			err = fn(ctx, s->ev[i], text, len);
		free(text);
		if (err)
			return err;
	}
	return 0;
}

/* What a ring that was never attached claims to hold, from a copy of its
 * control page (pread: no mapping, nothing to fault). */
static uint64_t unattached_bytes(struct app_session *s, const char *name)
{
	struct perf_event_mmap_page pc;
	char why[256];
	struct stat st;
	uint64_t n;
	int fd = perfring__ring_openat_checked(s->dirfd, name,
					       O_RDONLY | O_NONBLOCK, S_IFREG,
					       s->owner, &st, why, sizeof(why));

	if (fd < 0)
		return 0;
	n = pread(fd, &pc, sizeof(pc), 0) == (ssize_t)sizeof(pc) ?
		    pc.data_head - pc.data_tail :
		    0;
	close(fd);
	return n <= (uint64_t)st.st_size ? n : 0;
}

PR_HIDDEN void app_session_stats(const struct app_session *s,
				 struct app_session_stats *st)
{
	*st = s->st;
	for (const struct app_ring *r = s->rings; r; r = r->next)
		st->corrupt_bytes += ring_corrupt_bytes((struct app_ring *)r);
	for (size_t i = 0; i < s->nr_pending; i++) {
		if (s->pending[i].why == WAIT_CAP)
			st->rings_over_cap++;
		else
			st->rings_no_fd++;
	}
	st->rings_over_cap += (uint32_t)s->pending_dropped;
}

/* The rings still waiting when the session ends: said once, with what
 * they held. */
static void report_unattached(struct app_session *s)
{
	uint32_t cap = 0, nofd = 0;
	uint64_t bytes = 0;

	for (size_t i = 0; i < s->nr_pending; i++) {
		if (s->pending[i].why == WAIT_CAP)
			cap++;
		else
			nofd++;
		bytes += unattached_bytes(s, s->pending[i].name);
	}
	s->st.unattached_bytes = bytes;
	if (!cap && !nofd && !s->pending_dropped)
		return;
	pr_warn("app: %s: %llu rings were never attached (%u over the limit of %u rings, %u for want of file descriptors): their events are lost (%llu bytes by their control pages)",
		s->dir, (unsigned long long)(cap + nofd + s->pending_dropped),
		cap + (uint32_t)s->pending_dropped, s->max_rings, nofd,
		(unsigned long long)bytes);
}

/* A -p session: our recorder.pid goes, if it is still the one we made. */
static void remove_recorder_pid(struct app_session *s)
{
	struct stat st;

	if (!s->pid_made ||
	    fstatat(s->dirfd, RECORDER_PID, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != s->pid_dev || st.st_ino != s->pid_ino)
		return;
	unlinkat(s->dirfd, RECORDER_PID, 0);
}

/* Our own session: everything in it goes, then the directory. */
static void remove_own_dir(struct app_session *s)
{
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(s->dirfd, de->d_name, 0) < 0 && errno == EISDIR)
			unlinkat(s->dirfd, de->d_name, AT_REMOVEDIR);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	rmdir(s->dir);
}

PR_HIDDEN void app_session_close(struct app_session *s)
{
	if (!s)
		return;
	while (s->rings) {
		struct app_ring *r = s->rings;

		s->rings = r->next;
		perfring_ring_destroy(r->ring);
		free(r);
	}
	while (s->efiles) {
		struct events_file *e = s->efiles;

		s->efiles = e->next;
		free(e);
	}
	for (uint32_t i = 0; i < NR_IDS; i++)
		free(s->ev[i]);
	if (s->ino_fd >= 0)
		close(s->ino_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->dirfd >= 0) {
		if (s->own)
			remove_own_dir(s); /* the programs' files, ours */
		else
			remove_recorder_pid(s);
		close(s->dirfd); /* and the lock with it */
	}
	free(s->pending);
	free(s->seen.keys);
	free(s->seen.state);
	free(s->out);
	free(s);
}
