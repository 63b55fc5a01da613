// SPDX-License-Identifier: MIT
/*
 * Application tracing, the recorder side (see app.c for the directory
 * layout and app_session.h for the interface).  This file holds the
 * session; app_session_internal.h lists the others.
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../ring/barrier.h"
#include "../ring/private.h"
#include "app_session.h"
#include "app_session_internal.h"
#include "stale.h"

static void app_report_unattached(struct app_session *s);

PR_HIDDEN int app_session_drain(struct app_session *s, bool snapshot,
				bool final)
{
	uint64_t now = perfring_clock_ns();
	bool check = final || now >= s->next_gone_check;
	struct app_ring **link = &s->rings;
	int err = 0;

	if (final) {
		app_handle_inotify(s); /* rings that just appeared */
		app_scan_dir(s);
		snapshot = true;
	}
	if (check) {
		s->next_gone_check = now + GONE_CHECK_NS;
		if (s->nr_pending)
			app_retry_pending(s);
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
			app_drop_ring(s, link);
			continue;
		}
		/* Gone first, drain second: nothing can arrive after. */
		gone = check && app_producer_gone(r);
		if (!r->overwrite || snapshot || gone)
			err = app_drain_ring(s, r);
		if (!err && gone)
			err = app_note_gone(s, r);
		if (err == -EFAULT) {
			err = 0;
			app_drop_ring(s, link);
			continue;
		}
		if (!err && gone)
			r->gone = true;
		link = &r->next;
	}
	if (!err)
		err = app_out_flush(s);
	if (final) {
		/* Whatever still waits now never gets a turn: say so. */
		app_report_unattached(s);
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
			app_release_ring(s, link);
			continue;
		}
		link = &r->next;
	}
	/* Slots and descriptors came free: the waiting rings' turn. */
	if (s->released_some && s->nr_pending && !s->ended) {
		s->released_some = false;
		app_retry_pending(s);
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

PR_HIDDEN void app_session_finish(struct app_session *s)
{
	struct epoll_event evs[64];
	int n;

	do {
		n = epoll_wait(s->epfd, evs, 64, 0);
		for (int i = 0; i < n; i++) {
			struct app_ring *r = evs[i].data.ptr;

			if (!r)
				app_handle_inotify(s);
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
	/*
	 * The output buffer, touched now: on a guest with shadow page tables
	 * each first touch of a page costs microseconds (docs/design.md 6),
	 * which the first drain would pay while a program's ring fills.  Its
	 * own mapping, left out of the command the recorder forks next
	 * (MADV_DONTFORK): shared with the child, every page would be
	 * copy-on-write and the first drain would fault on each again.  A
	 * store per page through a volatile pointer: a memset(0) of new
	 * memory the compiler may turn into calloc(), which touches nothing.
	 */
	s->out = mmap(NULL, APP_OUT_CHUNK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->out == MAP_FAILED) {
		s->out = NULL;
		return -ENOMEM;
	}
	madvise(s->out, APP_OUT_CHUNK, MADV_DONTFORK); /* a hint: may fail */
	for (size_t off = 0; off < APP_OUT_CHUNK; off += 4096)
		((volatile unsigned char *)s->out)[off] = 0;
	s->out_cap = APP_OUT_CHUNK;
	write_recorder_pid(s);
	app_scan_dir(s); /* rings made before the watch */
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
		st->corrupt_bytes +=
			app_ring_corrupt_bytes((struct app_ring *)r);
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
static void app_report_unattached(struct app_session *s)
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
	if (s->out)
		munmap(s->out, s->out_cap);
	free(s);
}
