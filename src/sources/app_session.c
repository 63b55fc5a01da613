// SPDX-License-Identifier: MIT
/*
 * Application tracing, the recorder side (see app.c for the directory
 * layout and app_session.h for the interface).
 *
 * Everything in the directory is untrusted: ring files are checked by the
 * ring core when attached and every record by its reader; events-file lines
 * are parsed with bounds; an app record is converted only if its event is
 * declared and its __data_loc words point inside it.  Damage is logged,
 * counted and skipped; the other rings go on.
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
#include <sys/inotify.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "app_session.h"
#include "stale.h"

#define NR_IDS (APP_LAST_ID + 1 - PERFRING_APP_FIRST_ID)
#define EVENTS_FILE_MAX (4u << 20) /* bytes read from one events file */
#define GONE_CHECK_NS (200 * 1000 * 1000ull)
#define SAMPLE_HDR 44 /* header .. raw_size of an app sample */
#define LOST_SIZE 56 /* PERF_RECORD_LOST + TID TIME CPU IDENTIFIER */

struct app_ring {
	struct perfring_ring *ring;
	char *path;
	pid_t pid, tid; /* tid 0: the process's shared ring */
	bool overwrite;
	bool warned;
	uint64_t last_time;
	uint32_t last_cpu;
	uint32_t last_tid;
	struct app_ring *next;
};

struct events_file {
	pid_t pid;
	uint64_t off; /* bytes parsed so far */
	struct events_file *next;
};

struct app_session {
	char dir[PATH_MAX];
	bool own; /* we made the directory: remove it at close */
	int lock_fd; /* own: the directory, flock(LOCK_EX) while we live */
	int epfd, ino_fd;
	struct app_ring *rings;
	struct events_file *efiles;
	struct app_event_desc *ev[NR_IDS];
	uint64_t lost_id; /* sample id LOST records carry */
	struct app_session_cb cb;
	unsigned char *out;
	size_t out_len, out_cap;
	struct app_session_stats st;
	uint64_t next_gone_check;
	int err; /* first write error */
};

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
		size_t ncap = s->out_cap ? s->out_cap : (2u << 20);
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

static int add_event(struct app_session *s, const struct app_event_desc *d,
		     const char *where)
{
	struct app_event_desc **slot = &s->ev[d->id - PERFRING_APP_FIRST_ID];
	int err;

	if (*slot) {
		if (strcmp((*slot)->provider, d->provider) ||
		    strcmp((*slot)->name, d->name))
			pr_warn("app: %s: event id %u declared again as %s:%s (it is %s:%s): ignored",
				where, d->id, d->provider, d->name,
				(*slot)->provider, (*slot)->name);
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
	char path[PATH_MAX + 32], where[PATH_MAX + 64];
	char *buf;
	ssize_t n;
	size_t pos = 0, line;
	int fd, err = 0;

	if (!e)
		return -ENOMEM;
	if (e->off >= EVENTS_FILE_MAX)
		return 0;
	snprintf(path, sizeof(path), "%s/%d.events", s->dir, (int)pid);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
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
		const char *why;
		char *nl = memchr(buf + pos, '\n', (size_t)n - pos);

		if (!nl)
			break; /* a line still being written */
		line = (size_t)(nl - (buf + pos)) + 1;
		snprintf(where, sizeof(where), "%s offset %llu", path,
			 (unsigned long long)(e->off + pos));
		why = app_desc_parse_line(buf + pos, line, &d);
		if (why)
			pr_warn("app: %s: %s: line skipped", where, why);
		else
			err = add_event(s, &d, where);
		pos += line;
		if (err)
			break;
	}
	e->off += pos;
	free(buf);
	if (e->off >= EVENTS_FILE_MAX)
		pr_warn("app: %s is over %u bytes: later declarations are ignored",
			path, EVENTS_FILE_MAX);
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

	if (n < 6 || strcmp(name + n - 5, ".ring") || name[0] == '.')
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

static void attach_ring(struct app_session *s, const char *name)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };
	char path[PATH_MAX + NAME_MAX + 2];
	struct app_ring *r;
	pid_t pid, tid;
	int err;

	if (!parse_ring_name(name, &pid, &tid))
		return;
	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	for (r = s->rings; r; r = r->next)
		if (!strcmp(r->path, path))
			return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->path = strdup(path);
	if (!r->path) {
		free(r);
		return;
	}
	err = perfring_ring_attach(path, PERFRING_ROLE_CONSUMER, &r->ring);
	if (err) {
		/* The log says why (another recorder, damage, ...). */
		free(r->path);
		free(r);
		return;
	}
	perfring_ring_stats(r->ring, &rs);
	r->overwrite = rs.flags & PERFRING_MODE_OVERWRITE;
	r->pid = pid;
	r->tid = tid;
	r->last_tid = (uint32_t)tid;
	ev.data.ptr = r;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, perfring_ring_wait_fd(r->ring), &ev);
	r->next = s->rings;
	s->rings = r;
	s->st.rings++;
	s->st.live_rings++;
	load_events(s, pid);
}

static void scan_dir(struct app_session *s)
{
	struct dirent *de;
	DIR *d = opendir(s->dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		attach_ring(s, de->d_name);
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

static void release_ring(struct app_session *s, struct app_ring **link)
{
	struct app_ring *r = *link;
	char wake[PATH_MAX + NAME_MAX + 8];

	epoll_ctl(s->epfd, EPOLL_CTL_DEL, perfring_ring_wait_fd(r->ring), NULL);
	perfring_ring_destroy(r->ring);
	snprintf(wake, sizeof(wake), "%s.wake", r->path);
	unlink(r->path);
	unlink(wake);
	*link = r->next;
	free(r->path);
	free(r);
	s->st.live_rings--;
}

static void handle_inotify(struct app_session *s);

/* ---- conversion ---- */

static void corrupt(struct app_session *s, struct app_ring *r, const char *why)
{
	s->st.corrupt++;
	if (!r->warned) {
		pr_warn("app: ring %s: %s: record skipped (more are only counted)",
			r->path, why);
		r->warned = true;
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

static int convert_event(struct app_session *s, struct app_ring *r,
			 const unsigned char *rec, uint32_t size)
{
	struct perfring_app_record h;
	const struct app_event_desc *d;
	const unsigned char *pl = rec + sizeof(h);
	uint32_t plen = size - (uint32_t)sizeof(h), raw, total;
	unsigned char *o;

	memcpy(&h, rec, sizeof(h));
	d = event_of(s, r, h.event_id);
	if (!d) {
		corrupt(s, r, "event id no declaration names");
		return 0;
	}
	if (plen < d->payload_fixed || !locs_ok(d, pl, plen)) {
		corrupt(s, r, "payload does not match the declaration");
		return 0;
	}
	/* raw: common header + payload, padded so the sample stays 8-aligned */
	raw = APP_COMMON_SIZE + plen + 4;
	total = SAMPLE_HDR + raw;
	if (total > PERFRING_RECORD_MAX) {
		corrupt(s, r, "record too large to convert");
		return 0;
	}
	o = out_reserve(s, total);
	if (!o)
		return s->err ? s->err : -ENOMEM;
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
		memcpy(o + 52, pl, plen);
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

static int convert_lost(struct app_session *s, struct app_ring *r,
			const unsigned char *rec, uint32_t size)
{
	struct perf_event_header ph = { .type = PERF_RECORD_LOST,
					.size = LOST_SIZE };
	uint64_t lost;
	unsigned char *o;

	if (size < PERFRING_LOST_RECORD_SIZE) {
		corrupt(s, r, "short PERF_RECORD_LOST");
		return 0;
	}
	memcpy(&lost, rec + 16, 8);
	s->st.lost += lost;
	s->st.lost_records++;
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

static int drain_ring(struct app_session *s, struct app_ring *r)
{
	const struct perf_event_header *rec;
	int64_t avail;
	int n, err = 0;

	avail = perfring_reader_begin(r->ring);
	if (avail <= 0) {
		if (avail == -EBADMSG)
			s->st.corrupt++;
		return 0;
	}
	while ((n = perfring_reader_next(r->ring, &rec)) != 0) {
		if (n < 0) {
			/* The reader logged where; the rest of the batch is
			 * skipped and counted by the ring. */
			s->st.corrupt++;
			break;
		}
		/* the producer's lines come from the other CPU: ask for
		 * them a few records ahead (a hint; never dereferenced) */
		__builtin_prefetch((const char *)rec + 2048);
		if (rec->type == PERFRING_RECORD_APP_EVENT &&
		    (uint32_t)n >= sizeof(struct perfring_app_record))
			err = convert_event(s, r, (const void *)rec,
					    (uint32_t)n);
		else if (rec->type == PERF_RECORD_LOST)
			err = convert_lost(s, r, (const void *)rec,
					   (uint32_t)n);
		else
			corrupt(s, r, "record of a type programs do not write");
		if (err)
			break;
	}
	perfring_reader_end(r->ring);
	return err;
}

/*
 * The producer is gone.  Drops after its last record are still pending
 * (a ring writes the LOST record in front of the next record): report
 * them.  A dead producer of a shared ring may also have reserved space it
 * never committed: data_head stops there; count it and let the ring go.
 */
static int note_gone(struct app_session *s, struct app_ring *r)
{
	const struct perf_event_mmap_page *pc = perfring_ring_control(r->ring);
	const struct perfring_ext *ext =
		(const void *)((const char *)pc + PERFRING_EXT_OFFSET);
	uint64_t head = READ_ONCE(pc->data_head),
		 reserved = READ_ONCE(ext->reserve_head),
		 pending = READ_ONCE(ext->lost_pending);

	if (r->tid == 0 && reserved != head) {
		pending++;
		pr_warn("app: ring %s: its producer died with %llu bytes reserved and not all committed: dropped and counted as lost",
			r->path, (unsigned long long)(reserved - head));
	}
	if (pending) {
		struct perfring_lost_record l = {
			.header = { .type = PERF_RECORD_LOST,
				    .size = PERFRING_LOST_RECORD_SIZE },
			.lost = pending,
		};

		return convert_lost(s, r, (const void *)&l, sizeof(l));
	}
	return 0;
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
	if (check)
		s->next_gone_check = now + GONE_CHECK_NS;
	while (*link && !err) {
		struct app_ring *r = *link;
		/* Gone first, drain second: nothing can arrive after. */
		bool gone = check && producer_gone(r);

		if (!r->overwrite || snapshot || gone)
			err = drain_ring(s, r);
		if (!err && gone) {
			err = note_gone(s, r);
			release_ring(s, link);
			continue;
		}
		link = &r->next;
	}
	if (!err)
		err = out_flush(s);
	return err;
}

/* ---- waiting ---- */

PR_HIDDEN int app_session_prepare(struct app_session *s)
{
	for (struct app_ring *r = s->rings; r; r = r->next)
		if (!r->overwrite && perfring_ring_wait_prepare(r->ring) > 0)
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
				attach_ring(s, ie->name);
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

static int session_init(struct app_session *s, const struct app_session_cb *cb)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	s->cb = *cb;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	s->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ino_fd < 0)
		return -errno;
	if (inotify_add_watch(s->ino_fd, s->dir,
			      IN_MOVED_TO | IN_CREATE | IN_ONLYDIR) < 0)
		return -errno;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->ino_fd, &ev) < 0)
		return -errno;
	{
		char path[PATH_MAX + 16], pid[24];
		int fd, len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		snprintf(path, sizeof(path), "%s/recorder.pid", s->dir);
		fd = open(path,
			  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			  0600);
		if (fd >= 0) {
			if (write(fd, pid, (size_t)len) != len)
				pr_debug("app: cannot write %s", path);
			close(fd);
		}
	}
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
		s->epfd = s->ino_fd = s->lock_fd = -1;
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
	/* Held for the whole session: a directory nobody holds is stale
	 * (app_session_reclaim_stale()). */
	s->lock_fd =
		open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->lock_fd < 0 || flock(s->lock_fd, LOCK_EX) < 0)
		pr_warn("app: cannot lock %s: %s", s->dir, strerror(errno));
	return session_start(s, cb, out);
}

/* $PERFRING_SESSION from /proc/<pid>/environ, if the process has it. */
static bool env_session(pid_t pid, char *out, size_t size)
{
	char path[64], *buf;
	const size_t key = sizeof(PERFRING_SESSION_ENV "=") - 1;
	bool found = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
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

PR_HIDDEN int app_session_find(pid_t pid, const struct app_session_cb *cb,
			       struct app_session **out)
{
	struct app_session *s = session_alloc();
	struct stat st;
	char proc[64];

	if (!s)
		return -ENOMEM;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &st) < 0) {
		free(s);
		return -ESRCH;
	}
	if (!env_session(pid, s->dir, sizeof(s->dir)) ||
	    !strcmp(s->dir, "self")) {
		/* The program's own session: where app_runtime_dir() put it
		 * then (it may have chosen /tmp if /dev/shm was short). */
		static const char *const bases[] = { "/dev/shm", "/tmp" };
		struct stat ds;

		for (size_t i = 0; i < 2; i++) {
			snprintf(s->dir, sizeof(s->dir), "%s/perfring-%u/%d",
				 bases[i], (unsigned)st.st_uid, (int)pid);
			if (lstat(s->dir, &ds) == 0 && S_ISDIR(ds.st_mode))
				return session_start(s, cb, out);
		}
		free(s);
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

PR_HIDDEN void app_session_stats(const struct app_session *s,
				 struct app_session_stats *st)
{
	*st = s->st;
}

PR_HIDDEN void app_session_close(struct app_session *s)
{
	char path[PATH_MAX + NAME_MAX + 2];

	if (!s)
		return;
	while (s->rings) {
		struct app_ring *r = s->rings;

		s->rings = r->next;
		perfring_ring_destroy(r->ring);
		free(r->path);
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
	if (s->dir[0]) {
		snprintf(path, sizeof(path), "%s/recorder.pid", s->dir);
		unlink(path);
	}
	if (s->own) {
		/* Everything the programs left: rings of live threads (the
		 * command is gone), events files, the id counter. */
		DIR *d = opendir(s->dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.' &&
			    (!de->d_name[1] ||
			     (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			snprintf(path, sizeof(path), "%s/%s", s->dir,
				 de->d_name);
			unlink(path);
		}
		if (d)
			closedir(d);
		rmdir(s->dir);
	}
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->out);
	free(s);
}
