// SPDX-License-Identifier: MIT
/*
 * Ring creation, attachment and mapping.
 *
 * A ring file is: control page | data (2^n pages) | commit slots (MP only).
 * Our own rings map the data area twice back to back so records never split;
 * kernel perf mmaps are wrapped as they are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/opts.h"
#include "internal.h"

#define DEFAULT_DATA_SIZE (1u << 20)
#define MAX_DATA_SIZE (1ull << 40)
#define WAKE_SUFFIX ".wake"

bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* Reads an opts field if the caller's struct is large enough to have it. */

static struct perfring_ring *ring_alloc(void)
{
	/* On a line boundary, as the struct's line-aligned sections need */
	struct perfring_ring *r =
		aligned_alloc(_Alignof(struct perfring_ring), sizeof(*r));

	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->wake_fd = -1;
	r->wake_wr = -1;
	r->perf_fd = -1;
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	return r;
}

static void ring_unmap(struct perfring_ring *r)
{
	/* Out of the SIGBUS guard's registry before the ranges go. */
	ring_guard_unregister(r);
	if (r->map_base)
		munmap(r->map_base, r->map_len);
	if (r->ctl_rw)
		munmap(r->ctl_rw, r->page_size);
	if (r->slots_map)
		munmap(r->slots_map, r->slots_len);
	r->map_base = r->ctl_rw = r->slots_map = NULL;
}

/*
 * Maps control page + data twice: reserve the whole range, then place the
 * file's [0, page+size) and [page, page+size) into it with MAP_FIXED.
 */
static int ring_map(struct perfring_ring *r, bool writable)
{
	size_t page = r->page_size, size = (size_t)r->size;
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	unsigned char *base, *p;

	r->map_len = page + 2 * size;
	base = mmap(NULL, r->map_len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	r->map_base = base;
	p = mmap(base, page + size, prot, MAP_SHARED | MAP_FIXED, r->fd, 0);
	if (p == MAP_FAILED)
		goto err;
	p = mmap(base + page + size, size, prot, MAP_SHARED | MAP_FIXED, r->fd,
		 (off_t)page);
	if (p == MAP_FAILED)
		goto err;
	r->pc = (struct perf_event_mmap_page *)base;
	r->data = base + page;
	r->double_mapped = true;
	if (writable) {
		r->ext = (struct perfring_ext *)(base + PERFRING_EXT_OFFSET);
	} else {
		/*
		 * A read-only consumer still needs to store to its own line
		 * (pause, waiting): a second, writable view of page 0 only.
		 */
		r->ctl_rw = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
				 r->fd, 0);
		if (r->ctl_rw == MAP_FAILED) {
			r->ctl_rw = NULL;
			goto err;
		}
		r->ext = (struct perfring_ext *)((char *)r->ctl_rw +
						 PERFRING_EXT_OFFSET);
	}
	if (r->mode & PERFRING_MODE_MULTI_PRODUCER) {
		r->slots_len = (size_t)size;
		r->slots_map = mmap(NULL, r->slots_len, PROT_READ | PROT_WRITE,
				    MAP_SHARED, r->fd, (off_t)(page + size));
		if (r->slots_map == MAP_FAILED) {
			r->slots_map = NULL;
			goto err;
		}
		r->slots = r->slots_map;
		r->nslots_mask = size / 8 - 1;
	}
	return 0;
err:;
	int err = -errno;
	ring_unmap(r);
	return err;
}

static void wake_setup(struct perfring_ring *r)
{
	if (r->wakeup_mode == PERFRING_WAKE_EVENTS)
		r->check_interval = UINT64_MAX / 4;
	else
		r->check_interval = r->watermark / 4 ? r->watermark / 4 : 8;
}

/* Producer and consumer private state from the shared counters. */
static void ring_init_private(struct perfring_ring *r)
{
	uint64_t head = READ_ONCE(r->pc->data_head);

	r->p_head = head;
	r->p_tail_cache = READ_ONCE(r->pc->data_tail);
	r->p_next_check = head + r->check_interval;
	if (r->ext) {
		r->p_seq = READ_ONCE(r->ext->write_seq) & ~1ull;
		r->p_lost = READ_ONCE(r->ext->lost_pending);
	}
	r->max_record =
		r->size - PERFRING_LOST_RECORD_SIZE < PERFRING_RECORD_MAX ?
			(uint32_t)(r->size - PERFRING_LOST_RECORD_SIZE) & ~7u :
			PERFRING_RECORD_MAX;
	r->sp_fast = !r->kernel && !r->mode &&
		     (r->role & PERFRING_ROLE_PRODUCER) &&
		     r->wakeup_mode == PERFRING_WAKE_WATERMARK;
	if (r->mode & PERFRING_MODE_OVERWRITE)
		r->c_tail = head + r->size; /* everything present is new */
	else
		r->c_tail = READ_ONCE(r->pc->data_tail);
	/* Gathering starts at the published prefix if it makes sense, else
	 * at the tail (the shared page is not to be trusted). */
	r->c_gathered = (head & 7) || head - r->c_tail > r->size ? r->c_tail :
								   head;
	if (r->mp_gather && (r->role & PERFRING_ROLE_PRODUCER))
		r->mp_fence = !ring_membarrier_register();
}

/* Where attach refusals go: the log, or a caller's buffer (quiet). */
struct attach_ctx {
	const char *what; /* the ring as messages name it */
	char *why;
	size_t why_len;
};

static PR_PRINTF(2, 3) void refuse(const struct attach_ctx *c, const char *fmt,
				   ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->why && c->why_len)
		snprintf(c->why, c->why_len, "%s", msg);
	else
		pr_err("%s: %s", c->what, msg);
}

/*
 * One live producer (exclusive, or shared in MP mode) and one live consumer
 * per ring: open-file-description locks on bytes 0 and 1 of the ring file.
 * They vanish with the process, so a crashed peer never blocks a new one.
 */
static int ring_lock_roles(struct perfring_ring *r, const struct attach_ctx *c)
{
	for (int i = 0; i < 2; i++) {
		int bit = i ? PERFRING_ROLE_CONSUMER : PERFRING_ROLE_PRODUCER;
		struct flock fl = { .l_whence = SEEK_SET,
				    .l_start = i,
				    .l_len = 1 };

		if (!(r->role & bit))
			continue;
		fl.l_type = (bit == PERFRING_ROLE_PRODUCER &&
			     (r->mode & PERFRING_MODE_MULTI_PRODUCER)) ?
				    F_RDLCK :
				    F_WRLCK;
		if (fcntl(r->fd, F_OFD_SETLK, &fl) < 0) {
			int err = errno;

			if (err == EAGAIN || err == EACCES) {
				refuse(c, "ring already has a live %s",
				       i ? "consumer" : "producer");
				return -EBUSY;
			}
			refuse(c, "cannot lock ring: %s", strerror(err));
			return -err;
		}
	}
	return 0;
}

/* The FIFO perfring_ring_create() just made beside the ring. */
static int wake_open_fifo(struct perfring_ring *r, const char *path)
{
	char wpath[PATH_MAX];
	struct stat st;
	int fd;

	if (snprintf(wpath, sizeof(wpath), "%s%s", path, WAKE_SUFFIX) >=
	    (int)sizeof(wpath))
		return -ENAMETOOLONG;
	fd = open(wpath, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		pr_err("%s: cannot open wake-up FIFO %s: %s", path, wpath,
		       strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		pr_err("%s: %s is not a FIFO", path, wpath);
		close(fd);
		return -EINVAL;
	}
	r->wake_fd = fd;
	return 0;
}

/* Whether a process that held a ring is still there (0: none named). */
static bool pid_alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

/*
 * perfring_ring_create() found @path taken.  A ring left behind by a
 * process that is gone (created and never removed; the process killed) is
 * removed, with its wake-up FIFO, so that the same program runs twice:
 * a regular file of the caller's with one link, a published ring page, no
 * live handle (the role locks vanish with their process) and neither the
 * creator nor the last consumer alive.  Anything else is left alone and
 * the message says what to remove.  Returns 0 (removed: create again) or
 * -EEXIST.
 */
static int remove_stale_ring(const char *path)
{
	struct perfring_ext ext;
	const char *why = "it is not a ring";
	char wpath[PATH_MAX];
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    pread(fd, &ext, sizeof(ext), PERFRING_EXT_OFFSET) ==
		    (ssize_t)sizeof(ext) &&
	    ext.magic == PERFRING_MAGIC) {
		why = "it is a ring in use";
		for (int i = 0; i < 2; i++) {
			struct flock fl = { .l_type = F_WRLCK,
					    .l_whence = SEEK_SET,
					    .l_start = i,
					    .l_len = 1 };

			if (fcntl(fd, F_OFD_GETLK, &fl) < 0 ||
			    fl.l_type != F_UNLCK)
				goto busy;
		}
		if (pid_alive(ext.producer_pid) ||
		    pid_alive(ext.consumer_pid)) {
			why = "it is a ring nobody holds, but the process that made it is alive";
			goto busy;
		}
		if (st.st_uid != geteuid() || st.st_nlink != 1) {
			why = "it is a stale ring of another user";
			goto busy;
		}
		close(fd);
		if (unlink(path) < 0 && errno != ENOENT)
			return -EEXIST;
		if (snprintf(wpath, sizeof(wpath), "%s%s", path, WAKE_SUFFIX) <
		    (int)sizeof(wpath))
			unlink(wpath);
		pr_info("ring: removed %s, a ring left by process %u, which is gone",
			path, ext.producer_pid);
		return 0;
	}
busy:
	if (fd >= 0)
		close(fd);
	pr_err("ring: cannot create %s: it exists and %s; remove %s and %s%s (perfring_ring_remove()) or choose another path",
	       path, why, path, path, WAKE_SUFFIX);
	return -EEXIST;
}

/* The options into @r (size, mode, roles, wake-ups); *@start: the counter
 * the ring starts at.  0 or -EINVAL. */
static int create_config(struct perfring_ring *r,
			 const struct perfring_ring_opts *opts, uint64_t *start)
{
	uint64_t size = OPTS_GET(opts, data_size, 0);
	unsigned int flags = OPTS_GET(opts, flags, 0);

	if (!size)
		size = DEFAULT_DATA_SIZE;
	if (!is_pow2(size) || size < r->page_size || size > MAX_DATA_SIZE) {
		pr_err("ring: data size %llu is not a power of two between the page size and 2^40",
		       (unsigned long long)size);
		return -EINVAL;
	}
	if (flags & ~PERFRING_MODE_MASK ||
	    flags == (PERFRING_MODE_OVERWRITE | PERFRING_MODE_MULTI_PRODUCER)) {
		pr_err("ring: unsupported mode flags %#x", flags);
		return -EINVAL;
	}
	r->size = size;
	r->mask = size - 1;
	r->mode = flags;
	r->role = OPTS_GET(opts, role, 0);
	if (!r->role)
		r->role = PERFRING_ROLE_BOTH;
	if (r->role & ~PERFRING_ROLE_BOTH)
		return -EINVAL;
	r->watermark = OPTS_GET(opts, watermark, 0);
	if (!r->watermark || r->watermark > size)
		r->watermark = r->watermark ? size : size / 2;
	r->wakeup_events = OPTS_GET(opts, wakeup_events, 0);
	r->wakeup_mode = r->wakeup_events ? PERFRING_WAKE_EVENTS :
					    PERFRING_WAKE_WATERMARK;
	r->id = OPTS_GET(opts, id, 0);
	*start = OPTS_GET(opts, start, 0);
	if (*start & 7) {
		pr_err("ring: start counter %llu is not a multiple of 8",
		       (unsigned long long)*start);
		return -EINVAL;
	}
	return 0;
}

/*
 * The ring's file: @path with its wake-up FIFO beside it, or (no path) a
 * memfd and an eventfd.  *@made: what to remove if creation fails later
 * (1: the file, 2: the file and the FIFO).
 */
static int create_file(struct perfring_ring *r, const char *path, int *made)
{
	char wpath[PATH_MAX];
	int err;

	if (!path) {
		r->fd = memfd_create("perfring", MFD_CLOEXEC);
		if (r->fd < 0)
			return -errno;
		r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		return r->wake_fd < 0 ? -errno : 0;
	}
	r->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (r->fd < 0 && errno == EEXIST) {
		err = remove_stale_ring(path);
		if (err)
			return err;
		r->fd = open(path,
			     O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			     0600);
	}
	if (r->fd < 0) {
		err = -errno;
		pr_err("ring: cannot create %s: %s", path, strerror(-err));
		return err;
	}
	*made = 1;
	if (snprintf(wpath, sizeof(wpath), "%s%s", path, WAKE_SUFFIX) >=
	    (int)sizeof(wpath))
		return -ENAMETOOLONG;
	if (mkfifo(wpath, 0600) < 0) {
		err = -errno;
		/* (a FIFO without its ring is not ours to remove) */
		pr_err("ring: cannot create wake-up FIFO %s: %s%s", wpath,
		       strerror(-err),
		       err == -EEXIST ? ": remove it, or choose another path" :
					"");
		return err;
	}
	*made = 2;
	return wake_open_fifo(r, path);
}

/* The zero-filled control page: the kernel's fields, then ours (but the
 * magic, published last). */
static void init_control_page(struct perfring_ring *r, uint64_t start,
			      uint64_t commit_size)
{
	struct perfring_ext *ext = r->ext;
	unsigned int flags = r->mode;

	r->pc->size = offsetof(struct perf_event_mmap_page, __reserved);
	r->pc->data_offset = r->page_size;
	r->pc->data_size = r->size;
	r->pc->data_head = start;
	r->pc->data_tail = start;
	ext->abi_version = PERFRING_ABI_VERSION;
	ext->ext_size = sizeof(*ext);
	/* PERFRING_MP_NO_GATHER builds rings with the producers publishing
	 * data_head, as before section 4b, for `make bench`'s A/B. */
#ifndef PERFRING_MP_NO_GATHER
	ext->flags = flags | ((flags & PERFRING_MODE_MULTI_PRODUCER) ?
				      PERFRING_FLAG_MP_GATHER :
				      0);
#else
	ext->flags = flags;
#endif
	r->mp_gather = !!(ext->flags & PERFRING_FLAG_MP_GATHER);
	ext->page_size = (uint32_t)r->page_size;
	ext->commit_offset = commit_size ? r->page_size + r->size : 0;
	ext->commit_size = commit_size;
	ext->id = r->id;
	ext->watermark = r->watermark;
	ext->wakeup_events = r->wakeup_events;
	ext->wakeup_mode = r->wakeup_mode;
	ext->reserve_head = start;
	ext->producer_pid = (uint32_t)getpid();
	ext->consumer_pid = (uint32_t)getpid();
	wake_setup(r);
	ext->next_check = start + r->check_interval;
	/* Slots hold the end counter of a committed reservation; "start" is
	 * never the end of a reservation that starts at or after start. */
	for (uint64_t i = 0; i < commit_size / 8; i++)
		r->slots[i] = start;
}

PERFRING_API int perfring_ring_create(const struct perfring_ring_opts *opts,
				      struct perfring_ring **out)
{
	const char *path = OPTS_GET(opts, path, NULL);
	struct perfring_ring *r;
	uint64_t start, commit_size;
	int err, made = 0;

	if (!out || !OPTS_VALID(opts))
		return -EINVAL;
	*out = NULL;
	r = ring_alloc();
	if (!r)
		return -ENOMEM;
	err = create_config(r, opts, &start);
	if (err)
		goto err_free;
	commit_size = (r->mode & PERFRING_MODE_MULTI_PRODUCER) ? r->size : 0;
	err = create_file(r, path, &made);
	if (err)
		goto err_unlink;
	if (ftruncate(r->fd, (off_t)(r->page_size + r->size + commit_size)) <
	    0) {
		err = -errno;
		goto err_unlink;
	}
	err = ring_map(r, true);
	if (err)
		goto err_unlink;
	init_control_page(r, start, commit_size);
	{
		const struct attach_ctx c = { .what = path ? path : "ring" };

		err = ring_lock_roles(r, &c);
	}
	if (err)
		goto err_unmap;
	r->file_len = r->page_size + r->size + commit_size;
	if (path && !(r->name = strdup(path))) {
		err = -ENOMEM;
		goto err_unmap;
	}
	/*
	 * Publishing the magic last: an attacher that reads it sees a fully
	 * initialised page.  Pairs with smp_load_acquire in ring_check().
	 */
	smp_store_release(&r->ext->magic, PERFRING_MAGIC);
	ring_init_private(r);
	*out = r;
	return 0;

err_unmap:
	ring_unmap(r);
err_unlink:
	if (path && made) {
		char wpath[PATH_MAX];

		unlink(path);
		if (made == 2 && snprintf(wpath, sizeof(wpath), "%s%s", path,
					  WAKE_SUFFIX) < (int)sizeof(wpath))
			unlink(wpath);
	}
err_free:
	perfring_ring_destroy(r);
	return err;
}

static bool owner_ok(uid_t file_uid, uid_t owner)
{
	if (owner == (uid_t)-1)
		return file_uid == geteuid() || geteuid() == 0;
	return file_uid == owner;
}

int perfring__ring_openat_checked(int dirfd, const char *name, int flags,
				  unsigned int type, uid_t owner,
				  struct stat *st, char *why, size_t why_len)
{
	struct stat st2;
	char proc[64];
	int pfd, fd, err;

	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, "..")) {
		snprintf(why, why_len, "not a file name in the directory");
		return -EINVAL;
	}
	/*
	 * O_PATH opens nothing (no FIFO open that blocks, no device driver's
	 * open) and, with O_NOFOLLOW, gives the link itself for a symlink:
	 * everything is decided on the inode before it is really opened.
	 */
	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		snprintf(why, why_len, "%s", strerror(-err));
		return err;
	}
	if (fstat(pfd, st) < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot stat it: %s", strerror(-err));
		goto out_path;
	}
	if ((st->st_mode & S_IFMT) != type) {
		if (S_ISLNK(st->st_mode)) {
			snprintf(why, why_len,
				 "it is a symbolic link (not followed)");
			err = -ELOOP;
		} else if (S_ISDIR(st->st_mode)) {
			snprintf(why, why_len, "it is a directory");
			err = -EISDIR;
		} else {
			snprintf(why, why_len, "%s",
				 type == S_IFREG ? "not a regular file" :
						   "not a FIFO");
			err = -EINVAL;
		}
		goto out_path;
	}
	if (!owner_ok(st->st_uid, owner)) {
		snprintf(why, why_len, "owned by uid %u, not by uid %u",
			 (unsigned int)st->st_uid,
			 (unsigned int)(owner == (uid_t)-1 ? geteuid() :
							     owner));
		err = -EPERM;
		goto out_path;
	}
	if (st->st_nlink != 1) {
		/* A hard link would let someone else's file pass for one in
		 * this directory. */
		snprintf(why, why_len, "it has %lu links, not 1",
			 (unsigned long)st->st_nlink);
		err = -EMLINK;
		goto out_path;
	}
	/* The same inode, whatever the name points at by now. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, flags | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT && access("/proc/self/fd", F_OK))
		/* No /proc: by name, then compared with what was checked. */
		fd = openat(dirfd, name,
			    flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
				    O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_len, "%s", strerror(-err));
		goto out_path;
	}
	if (fstat(fd, &st2) < 0 || st2.st_dev != st->st_dev ||
	    st2.st_ino != st->st_ino) {
		snprintf(why, why_len, "it was replaced while being opened");
		close(fd);
		err = -EAGAIN;
		goto out_path;
	}
	close(pfd);
	return fd;
out_path:
	close(pfd);
	return err;
}

/*
 * Validates a ring file before mapping it: everything the mapping code and
 * the hot paths rely on comes from here, copied into private fields.
 */
static int ring_check(struct perfring_ring *r, const struct attach_ctx *c,
		      uid_t owner)
{
	struct perf_event_mmap_page pc;
	struct perfring_ext ext;
	uint64_t size, commit;
	struct stat st;
	ssize_t n;

	if (fstat(r->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		refuse(c, "not a regular file");
		return -EINVAL;
	}
	if (!owner_ok(st.st_uid, owner)) {
		refuse(c, "owned by uid %u, not by us",
		       (unsigned int)st.st_uid);
		return -EPERM;
	}
	if ((uint64_t)st.st_size < sizeof(pc)) {
		refuse(c, "%lld bytes is too small for a ring control page",
		       (long long)st.st_size);
		return -EINVAL;
	}
	n = pread(r->fd, &pc, sizeof(pc), 0);
	if (n != (ssize_t)sizeof(pc))
		return n < 0 ? -errno : -EINVAL;
	memcpy(&ext, (char *)&pc + PERFRING_EXT_OFFSET, sizeof(ext));
	/* Pairs with smp_store_release(&ext->magic) in perfring_ring_create. */
	smp_rmb();
	if (ext.magic != PERFRING_MAGIC) {
		if (ext.magic == 0)
			refuse(c,
			       "no perfring magic (not a ring, or still being created)");
		else
			refuse(c,
			       "not a perfring ring (magic %#llx at offset %d)",
			       (unsigned long long)ext.magic,
			       PERFRING_EXT_OFFSET);
		return ext.magic ? -EINVAL : -EAGAIN;
	}
	if (ext.abi_version != PERFRING_ABI_VERSION ||
	    ext.ext_size != sizeof(ext)) {
		refuse(c,
		       "ring ABI version %u (ext %u bytes), this library speaks %u (%zu bytes)",
		       ext.abi_version, ext.ext_size, PERFRING_ABI_VERSION,
		       sizeof(ext));
		return -EPROTO;
	}
	if (ext.page_size != r->page_size || pc.data_offset != r->page_size) {
		refuse(c, "page size %u / data_offset %llu, expected %zu",
		       ext.page_size, (unsigned long long)pc.data_offset,
		       r->page_size);
		return -EINVAL;
	}
	size = pc.data_size;
	if (!is_pow2(size) || size < r->page_size || size > MAX_DATA_SIZE) {
		refuse(c,
		       "data_size %llu is not a power of two of at least one page",
		       (unsigned long long)size);
		return -EINVAL;
	}
	if (ext.flags & ~(PERFRING_MODE_MASK | PERFRING_FLAG_MP_GATHER) ||
	    (ext.flags & PERFRING_MODE_MASK) == PERFRING_MODE_MASK ||
	    (ext.flags & PERFRING_FLAG_MP_GATHER &&
	     !(ext.flags & PERFRING_MODE_MULTI_PRODUCER))) {
		refuse(c, "unknown mode flags %#x", ext.flags);
		return -EINVAL;
	}
	commit = (ext.flags & PERFRING_MODE_MULTI_PRODUCER) ? size : 0;
	if (ext.commit_size != commit ||
	    ext.commit_offset != (commit ? r->page_size + size : 0)) {
		refuse(c, "commit area %llu@%llu does not match the mode",
		       (unsigned long long)ext.commit_size,
		       (unsigned long long)ext.commit_offset);
		return -EINVAL;
	}
	if ((pc.data_head | pc.data_tail | ext.reserve_head) & 7) {
		refuse(c,
		       "data_head %llu / data_tail %llu / reserve_head %llu not 8-byte aligned",
		       (unsigned long long)pc.data_head,
		       (unsigned long long)pc.data_tail,
		       (unsigned long long)ext.reserve_head);
		return -EINVAL;
	}
	/* An AUX area (aux.c) follows at aux_offset; perfring_aux_attach()
	 * checks it. */
	if ((uint64_t)st.st_size != r->page_size + size + commit &&
	    !(pc.aux_size && pc.aux_offset == r->page_size + size + commit &&
	      (uint64_t)st.st_size == pc.aux_offset + pc.aux_size)) {
		refuse(c, "file is %lld bytes, the ring needs %llu",
		       (long long)st.st_size,
		       (unsigned long long)(r->page_size + size + commit));
		return -EINVAL;
	}
	if (ext.wakeup_mode > PERFRING_WAKE_EVENTS || !ext.watermark ||
	    ext.watermark > size ||
	    (ext.wakeup_mode == PERFRING_WAKE_EVENTS && !ext.wakeup_events)) {
		refuse(c, "bad wake-up settings (mode %u, watermark %llu)",
		       ext.wakeup_mode, (unsigned long long)ext.watermark);
		return -EINVAL;
	}
	r->size = size;
	r->mask = size - 1;
	r->mode = ext.flags & PERFRING_MODE_MASK;
	r->mp_gather = !!(ext.flags & PERFRING_FLAG_MP_GATHER);
	r->id = ext.id;
	r->watermark = ext.watermark;
	r->wakeup_mode = ext.wakeup_mode;
	r->wakeup_events = ext.wakeup_events;
	r->file_len = (uint64_t)st.st_size;
	wake_setup(r);
	return 0;
}

/* Locks the roles and maps a ring ring_check() accepted. */
static int ring_attach_map(struct perfring_ring *r, const struct attach_ctx *c)
{
	bool writable;
	int err;

	err = ring_lock_roles(r, c);
	if (err)
		return err;
	/* The overwrite reader maps the ring read-only, as perf does. */
	writable = !(r->role == PERFRING_ROLE_CONSUMER &&
		     (r->mode & PERFRING_MODE_OVERWRITE));
	err = ring_map(r, writable);
	if (err) {
		refuse(c, "cannot map ring: %s", strerror(-err));
		return err;
	}
	/* Another process writes this file: a truncation must not kill us. */
	err = ring_guard_register(r);
	if (err)
		return err;
	ring_init_private(r);
	/* ring_check() looked at a copy; the mapping may have changed since. */
	if ((r->p_head | r->c_tail | r->p_tail_cache) & 7) {
		refuse(c, "data_head/data_tail not 8-byte aligned");
		return -EINVAL;
	}
	if ((r->role & PERFRING_ROLE_CONSUMER) && READ_ONCE(r->ext->paused)) {
		/*
		 * We hold the consumer lock, so the consumer that paused the
		 * ring is gone (killed between reader_begin and reader_end):
		 * left paused, the producers would drop everything for good.
		 */
		pr_warn("%s: resumed the ring: consumer %u left it paused when it went away",
			c->what, READ_ONCE(r->ext->consumer_pid));
		WRITE_ONCE(r->ext->paused, 0u);
		smp_mb(); /* as perfring_ring_pause() */
	}
	if (r->role & PERFRING_ROLE_PRODUCER)
		WRITE_ONCE(r->ext->producer_pid, (uint32_t)getpid());
	if (r->role & PERFRING_ROLE_CONSUMER)
		WRITE_ONCE(r->ext->consumer_pid, (uint32_t)getpid());
	return 0;
}

static bool role_ok(unsigned int role)
{
	return role >= PERFRING_ROLE_PRODUCER && role <= PERFRING_ROLE_BOTH;
}

int perfring__ring_attachat(int dirfd, const char *name, unsigned int role,
			    uid_t owner, const char *display, char *why,
			    size_t why_len, struct perfring_ring **out)
{
	const struct attach_ctx c = { .what = display ? display : name,
				      .why = why,
				      .why_len = why_len };
	char reason[256], wname[NAME_MAX + 2];
	struct perfring_ring *r;
	struct stat st;
	int err, fd;

	*out = NULL;
	if (!role_ok(role))
		return -EINVAL;
	r = ring_alloc();
	if (!r)
		return -ENOMEM;
	r->role = role;
	r->name = strdup(c.what);
	if (!r->name) {
		err = -ENOMEM;
		goto err;
	}
	fd = perfring__ring_openat_checked(dirfd, name, O_RDWR | O_NONBLOCK,
					   S_IFREG, owner, &st, reason,
					   sizeof(reason));
	if (fd < 0) {
		err = fd;
		refuse(&c, "cannot open ring: %s", reason);
		goto err;
	}
	r->fd = fd;
	err = ring_check(r, &c, owner);
	if (err)
		goto err;
	if (snprintf(wname, sizeof(wname), "%s%s", name, WAKE_SUFFIX) >=
	    (int)sizeof(wname)) {
		err = -ENAMETOOLONG;
		refuse(&c, "name too long for its wake-up FIFO");
		goto err;
	}
	fd = perfring__ring_openat_checked(dirfd, wname, O_RDWR | O_NONBLOCK,
					   S_IFIFO, owner, &st, reason,
					   sizeof(reason));
	if (fd < 0) {
		err = fd;
		refuse(&c, "cannot use wake-up FIFO %s%s: %s", c.what,
		       WAKE_SUFFIX, reason);
		goto err;
	}
	r->wake_fd = fd;
	err = ring_attach_map(r, &c);
	if (err)
		goto err;
	/* A quiet caller reports the ring's death in its own words. */
	r->dead_logged = why != NULL;
	*out = r;
	return 0;
err:
	perfring_ring_destroy(r);
	return err;
}

PERFRING_API int perfring_ring_attachat(int dirfd, const char *name,
					unsigned int role, uid_t owner,
					struct perfring_ring **out)
{
	if (!name || !out)
		return -EINVAL;
	return perfring__ring_attachat(dirfd, name, role, owner, NULL, NULL, 0,
				       out);
}

PERFRING_API int perfring_ring_attach(const char *path, enum perfring_role role,
				      struct perfring_ring **out)
{
	const char *slash, *base = path;
	int dirfd = AT_FDCWD, err;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	/* The directory as the caller names it (links and all, as open()
	 * would), the ring itself without following a link. */
	slash = strrchr(path, '/');
	if (slash) {
		char dir[PATH_MAX];
		size_t n = (size_t)(slash - path);

		if (n >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, n);
		dir[n ? n : 1] = 0;
		if (!n)
			dir[0] = '/';
		dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0) {
			err = -errno;
			pr_err("%s: cannot open ring: %s", path,
			       strerror(-err));
			return err;
		}
		base = slash + 1;
	}
	err = perfring__ring_attachat(dirfd, base, role, (uid_t)-1, path, NULL,
				      0, out);
	if (dirfd >= 0)
		close(dirfd);
	return err;
}

PERFRING_API int perfring_ring_attach_fd(int ring_fd, int wake_fd,
					 enum perfring_role role,
					 struct perfring_ring **out)
{
	const struct attach_ctx c = { .what = "ring fd" };
	struct perfring_ring *r;
	char proc[64];
	int err;

	if (ring_fd < 0 || wake_fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
	if (!role_ok(role))
		return -EINVAL;
	r = ring_alloc();
	if (!r)
		return -ENOMEM;
	r->role = role;
	/* A fresh open file description, so the role locks apply to us. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ring_fd);
	r->fd = open(proc, O_RDWR | O_CLOEXEC);
	if (r->fd < 0)
		r->fd = fcntl(ring_fd, F_DUPFD_CLOEXEC, 0);
	r->wake_fd = fcntl(wake_fd, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0 || r->wake_fd < 0) {
		err = -errno;
		goto err;
	}
	err = ring_check(r, &c, (uid_t)-1);
	if (!err)
		err = ring_attach_map(r, &c);
	if (err)
		goto err;
	*out = r;
	return 0;
err:
	perfring_ring_destroy(r);
	return err;
}

PERFRING_API int perfring_ring_wrap_kernel(void *base, size_t len, int perf_fd,
					   bool overwrite,
					   struct perfring_ring **out)
{
	struct perf_event_mmap_page *pc = base;
	struct perfring_ring *r;
	uint64_t size;

	if (!base || !out)
		return -EINVAL;
	*out = NULL;
	r = ring_alloc();
	if (!r)
		return -ENOMEM;
	size = len > r->page_size ? len - r->page_size : 0;
	/* The kernel fills data_offset/data_size; trust them only if they
	 * agree with the mapping we were given. */
	if (!is_pow2(size) || READ_ONCE(pc->data_size) != size ||
	    READ_ONCE(pc->data_offset) != r->page_size) {
		pr_err("kernel ring: mapping of %zu bytes does not match data_offset %llu data_size %llu",
		       len, (unsigned long long)READ_ONCE(pc->data_offset),
		       (unsigned long long)READ_ONCE(pc->data_size));
		free(r);
		return -EINVAL;
	}
	r->pc = pc;
	r->data = (unsigned char *)base + r->page_size;
	r->size = size;
	r->mask = size - 1;
	r->kernel = true;
	r->perf_fd = perf_fd;
	r->role = PERFRING_ROLE_CONSUMER;
	r->mode = overwrite ? PERFRING_MODE_OVERWRITE : 0;
	ring_init_private(r);
	if (overwrite)
		r->c_tail = READ_ONCE(pc->data_head) + size;
	*out = r;
	return 0;
}

PERFRING_API void perfring_ring_destroy(struct perfring_ring *r)
{
	if (!r)
		return;
	/* A dead ring's pages are private zeros now: nothing to resume. */
	if (r->c_paused_by_us && !ring_dead(r))
		perfring_ring_pause(r, false);
	if (!r->kernel)
		ring_unmap(r);
	free(r->name);
	if (r->fd >= 0)
		close(r->fd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	if (r->wake_wr >= 0)
		close(r->wake_wr);
	free(r->bounce);
	free(r->copy);
	free(r->rd_buf);
	free(r);
}

uint32_t perfring__ring_dead_cause(const struct perfring_ring *r)
{
	return ring_dead_cause(r);
}

struct perfring_ext *perfring__ring_ext(struct perfring_ring *r)
{
	return r->ext;
}

PERFRING_API int perfring_ring_fd(const struct perfring_ring *r)
{
	return (!r || r->kernel) ? -EINVAL : r->fd;
}

PERFRING_API uint64_t perfring_ring_data_size(const struct perfring_ring *r)
{
	return r ? r->size : 0;
}

PERFRING_API const struct perf_event_mmap_page *
perfring_ring_control(const struct perfring_ring *r)
{
	return r ? r->pc : NULL;
}

PERFRING_API int perfring_ring_pause(struct perfring_ring *r, bool pause)
{
	if (!r)
		return -EINVAL;
	if (r->kernel) {
		if (r->perf_fd < 0)
			return -EINVAL;
		if (ioctl(r->perf_fd, PERF_EVENT_IOC_PAUSE_OUTPUT,
			  pause ? 1 : 0))
			return -errno;
		return 0;
	}
	if (ring_dead(r))
		return ring_dead_error(r);
	/*
	 * Seen by producers in their next perfring_output_begin().  The full
	 * barrier orders it before the overwrite reader's loads of write_seq
	 * and data_head (see reader.c).
	 */
	WRITE_ONCE(r->ext->paused, pause ? 1u : 0u);
	smp_mb();
	return 0;
}

PERFRING_API int perfring_ring_stats(const struct perfring_ring *r,
				     struct perfring_ring_stats *st)
{
	struct perfring_ring_stats s = { .sz = sizeof(s) };
	bool dead;

	if (!r || !st || st->sz < offsetof(struct perfring_ring_stats, paused))
		return -EINVAL;
	dead = ring_dead(r);
	s.data_size = r->size;
	if (dead) {
		/* The shared page is zeros now: what this reader last saw. */
		s.head = r->c_seen_head;
		s.tail = r->c_tail;
	} else {
		s.head = smp_load_acquire(
			&r->pc->data_head); /* pairs with (B) */
		s.tail = READ_ONCE(r->pc->data_tail);
		if (r->mp_gather)
			s.head = ring_mp_committed(r, s.head, s.tail);
		if (r->ext) {
			s.lost_total = READ_ONCE(r->ext->lost_total);
			s.lost_pending = READ_ONCE(r->ext->lost_pending);
			s.wakeups = READ_ONCE(r->ext->wakeups);
			s.paused = READ_ONCE(r->ext->paused);
		}
	}
	s.corrupt_bytes = r->corrupt_bytes;
	s.corrupt_events = r->corrupt_events;
	s.flags = r->mode;
	s.bad_head_events = r->bad_head_events;
	s.bad_header_events = r->bad_header_events;
	s.unfinished_events = r->unfinished_events;
	s.dead_reservations = r->dead_reservations;
	s.dead = dead;
	s.read_pos = r->c_tail;
	OPTS_FILL(st, &s);
	return dead ? -EFAULT : 0;
}

PERFRING_API int perfring_ring_remove(const char *path)
{
	char wpath[PATH_MAX];
	int err = 0;

	if (!path)
		return -EINVAL;
	if (unlink(path) < 0)
		err = -errno;
	if (snprintf(wpath, sizeof(wpath), "%s%s", path, WAKE_SUFFIX) <
		    (int)sizeof(wpath) &&
	    unlink(wpath) < 0 && !err)
		err = -errno;
	return err;
}
