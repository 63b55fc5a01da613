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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

#define DEFAULT_DATA_SIZE (1u << 20)
#define MAX_DATA_SIZE (1ull << 40)
#define WAKE_SUFFIX ".wake"

bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* Reads an opts field if the caller's struct is large enough to have it. */
#define OPTS_HAS(o, f) \
	((o) && (o)->sz >= offsetof(__typeof__(*(o)), f) + sizeof((o)->f))
#define OPTS_GET(o, f, def) (OPTS_HAS(o, f) ? (o)->f : (def))

static struct perfring_ring *ring_alloc(void)
{
	struct perfring_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	r->wake_fd = -1;
	r->wake_wr = -1;
	r->perf_fd = -1;
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	return r;
}

static void ring_unmap(struct perfring_ring *r)
{
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
}

/*
 * One live producer (exclusive, or shared in MP mode) and one live consumer
 * per ring: open-file-description locks on bytes 0 and 1 of the ring file.
 * They vanish with the process, so a crashed peer never blocks a new one.
 */
static int ring_lock_roles(struct perfring_ring *r, const char *what)
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
				pr_err("%s: ring already has a live %s", what,
				       i ? "consumer" : "producer");
				return -EBUSY;
			}
			pr_err("%s: cannot lock ring: %s", what, strerror(err));
			return -err;
		}
	}
	return 0;
}

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

PERFRING_API int perfring_ring_create(const struct perfring_ring_opts *opts,
				      struct perfring_ring **out)
{
	const char *path = OPTS_GET(opts, path, NULL);
	uint64_t size = OPTS_GET(opts, data_size, 0);
	unsigned int flags = OPTS_GET(opts, flags, 0);
	struct perfring_ring *r;
	struct perfring_ext *ext;
	bool fifo_made = false;
	uint64_t start, commit_size;
	int err;

	if (!out || (opts && opts->sz < sizeof(size_t)))
		return -EINVAL;
	*out = NULL;
	r = ring_alloc();
	if (!r)
		return -ENOMEM;
	if (!size)
		size = DEFAULT_DATA_SIZE;
	if (!is_pow2(size) || size < r->page_size || size > MAX_DATA_SIZE) {
		pr_err("ring: data size %llu is not a power of two between the page size and 2^40",
		       (unsigned long long)size);
		err = -EINVAL;
		goto err_free;
	}
	if (flags & ~PERFRING_MODE_MASK ||
	    flags == (PERFRING_MODE_OVERWRITE | PERFRING_MODE_MULTI_PRODUCER)) {
		pr_err("ring: unsupported mode flags %#x", flags);
		err = -EINVAL;
		goto err_free;
	}
	r->size = size;
	r->mask = size - 1;
	r->mode = flags;
	r->role = OPTS_GET(opts, role, 0);
	if (!r->role)
		r->role = PERFRING_ROLE_BOTH;
	if (r->role & ~PERFRING_ROLE_BOTH) {
		err = -EINVAL;
		goto err_free;
	}
	r->watermark = OPTS_GET(opts, watermark, 0);
	if (!r->watermark || r->watermark > size)
		r->watermark = r->watermark ? size : size / 2;
	r->wakeup_events = OPTS_GET(opts, wakeup_events, 0);
	r->wakeup_mode = r->wakeup_events ? PERFRING_WAKE_EVENTS :
					    PERFRING_WAKE_WATERMARK;
	r->id = OPTS_GET(opts, id, 0);
	start = OPTS_GET(opts, start, 0);
	if (start & 7) {
		pr_err("ring: start counter %llu is not a multiple of 8",
		       (unsigned long long)start);
		err = -EINVAL;
		goto err_free;
	}
	commit_size = (flags & PERFRING_MODE_MULTI_PRODUCER) ? size : 0;

	if (path) {
		r->fd = open(path,
			     O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			     0600);
		if (r->fd < 0) {
			err = -errno;
			pr_err("ring: cannot create %s: %s", path,
			       strerror(-err));
			goto err_free;
		}
		char wpath[PATH_MAX];
		if (snprintf(wpath, sizeof(wpath), "%s%s", path, WAKE_SUFFIX) >=
		    (int)sizeof(wpath)) {
			err = -ENAMETOOLONG;
			goto err_unlink;
		}
		if (mkfifo(wpath, 0600) < 0) {
			err = -errno;
			pr_err("ring: cannot create wake-up FIFO %s: %s", wpath,
			       strerror(-err));
			goto err_unlink;
		}
		fifo_made = true;
		err = wake_open_fifo(r, path);
		if (err)
			goto err_unlink;
	} else {
		r->fd = memfd_create("perfring", MFD_CLOEXEC);
		if (r->fd < 0) {
			err = -errno;
			goto err_free;
		}
		r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (r->wake_fd < 0) {
			err = -errno;
			goto err_free;
		}
	}
	if (ftruncate(r->fd, (off_t)(r->page_size + size + commit_size)) < 0) {
		err = -errno;
		goto err_unlink;
	}
	err = ring_map(r, true);
	if (err)
		goto err_unlink;

	/* The file is zero-filled; fill in the kernel's fields, then ours. */
	r->pc->size = offsetof(struct perf_event_mmap_page, __reserved);
	r->pc->data_offset = r->page_size;
	r->pc->data_size = size;
	r->pc->data_head = start;
	r->pc->data_tail = start;
	ext = r->ext;
	ext->abi_version = PERFRING_ABI_VERSION;
	ext->ext_size = sizeof(*ext);
	ext->flags = flags;
	ext->page_size = (uint32_t)r->page_size;
	ext->commit_offset = commit_size ? r->page_size + size : 0;
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
	err = ring_lock_roles(r, path ? path : "ring");
	if (err)
		goto err_unmap;
	/*
	 * Publishing the magic last: an attacher that reads it sees a fully
	 * initialised page.  Pairs with smp_load_acquire in ring_check().
	 */
	smp_store_release(&ext->magic, PERFRING_MAGIC);
	ring_init_private(r);
	*out = r;
	return 0;

err_unmap:
	ring_unmap(r);
err_unlink:
	if (path) {
		char wpath[PATH_MAX];

		unlink(path);
		if (fifo_made && snprintf(wpath, sizeof(wpath), "%s%s", path,
					  WAKE_SUFFIX) < (int)sizeof(wpath))
			unlink(wpath);
	}
err_free:
	perfring_ring_destroy(r);
	return err;
}

/*
 * Validates a ring file before mapping it: everything the mapping code and
 * the hot paths rely on comes from here, copied into private fields.
 */
static int ring_check(struct perfring_ring *r, const char *what)
{
	struct perf_event_mmap_page pc;
	struct perfring_ext ext;
	uint64_t size, commit;
	struct stat st;
	ssize_t n;

	if (fstat(r->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		pr_err("%s: not a regular file", what);
		return -EINVAL;
	}
	if (st.st_uid != geteuid() && geteuid() != 0) {
		pr_err("%s: owned by uid %u, not by us", what,
		       (unsigned int)st.st_uid);
		return -EPERM;
	}
	if ((uint64_t)st.st_size < sizeof(pc)) {
		pr_err("%s: %lld bytes is too small for a ring control page",
		       what, (long long)st.st_size);
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
			pr_err("%s: no perfring magic (not a ring, or still being created)",
			       what);
		else
			pr_err("%s: not a perfring ring (magic %#llx at offset %d)",
			       what, (unsigned long long)ext.magic,
			       PERFRING_EXT_OFFSET);
		return ext.magic ? -EINVAL : -EAGAIN;
	}
	if (ext.abi_version != PERFRING_ABI_VERSION ||
	    ext.ext_size != sizeof(ext)) {
		pr_err("%s: ring ABI version %u (ext %u bytes), this library speaks %u (%zu bytes)",
		       what, ext.abi_version, ext.ext_size,
		       PERFRING_ABI_VERSION, sizeof(ext));
		return -EPROTO;
	}
	if (ext.page_size != r->page_size || pc.data_offset != r->page_size) {
		pr_err("%s: page size %u / data_offset %llu, expected %zu",
		       what, ext.page_size, (unsigned long long)pc.data_offset,
		       r->page_size);
		return -EINVAL;
	}
	size = pc.data_size;
	if (!is_pow2(size) || size < r->page_size || size > MAX_DATA_SIZE) {
		pr_err("%s: data_size %llu is not a power of two of at least one page",
		       what, (unsigned long long)size);
		return -EINVAL;
	}
	if (ext.flags & ~PERFRING_MODE_MASK ||
	    ext.flags == PERFRING_MODE_MASK) {
		pr_err("%s: unknown mode flags %#x", what, ext.flags);
		return -EINVAL;
	}
	commit = (ext.flags & PERFRING_MODE_MULTI_PRODUCER) ? size : 0;
	if (ext.commit_size != commit ||
	    ext.commit_offset != (commit ? r->page_size + size : 0)) {
		pr_err("%s: commit area %llu@%llu does not match the mode",
		       what, (unsigned long long)ext.commit_size,
		       (unsigned long long)ext.commit_offset);
		return -EINVAL;
	}
	if ((pc.data_head | pc.data_tail | ext.reserve_head) & 7) {
		pr_err("%s: data_head %llu / data_tail %llu / reserve_head %llu not 8-byte aligned",
		       what, (unsigned long long)pc.data_head,
		       (unsigned long long)pc.data_tail,
		       (unsigned long long)ext.reserve_head);
		return -EINVAL;
	}
	/* An AUX area (aux.c) follows at aux_offset; perfring_aux_attach()
	 * checks it. */
	if ((uint64_t)st.st_size != r->page_size + size + commit &&
	    !(pc.aux_size && pc.aux_offset == r->page_size + size + commit &&
	      (uint64_t)st.st_size == pc.aux_offset + pc.aux_size)) {
		pr_err("%s: file is %lld bytes, the ring needs %llu", what,
		       (long long)st.st_size,
		       (unsigned long long)(r->page_size + size + commit));
		return -EINVAL;
	}
	if (ext.wakeup_mode > PERFRING_WAKE_EVENTS || !ext.watermark ||
	    ext.watermark > size ||
	    (ext.wakeup_mode == PERFRING_WAKE_EVENTS && !ext.wakeup_events)) {
		pr_err("%s: bad wake-up settings (mode %u, watermark %llu)",
		       what, ext.wakeup_mode,
		       (unsigned long long)ext.watermark);
		return -EINVAL;
	}
	r->size = size;
	r->mask = size - 1;
	r->mode = ext.flags;
	r->id = ext.id;
	r->watermark = ext.watermark;
	r->wakeup_mode = ext.wakeup_mode;
	r->wakeup_events = ext.wakeup_events;
	wake_setup(r);
	return 0;
}

static int ring_attach_common(struct perfring_ring *r, const char *what)
{
	bool writable;
	int err;

	if (r->role < PERFRING_ROLE_PRODUCER || r->role > PERFRING_ROLE_BOTH)
		return -EINVAL;
	err = ring_check(r, what);
	if (err)
		return err;
	err = ring_lock_roles(r, what);
	if (err)
		return err;
	/* The overwrite reader maps the ring read-only, as perf does. */
	writable = !(r->role == PERFRING_ROLE_CONSUMER &&
		     (r->mode & PERFRING_MODE_OVERWRITE));
	err = ring_map(r, writable);
	if (err) {
		pr_err("%s: cannot map ring: %s", what, strerror(-err));
		return err;
	}
	ring_init_private(r);
	/* ring_check() looked at a copy; the mapping may have changed since. */
	if ((r->p_head | r->c_tail | r->p_tail_cache) & 7) {
		pr_err("%s: data_head/data_tail not 8-byte aligned", what);
		return -EINVAL;
	}
	if (r->role & PERFRING_ROLE_PRODUCER)
		WRITE_ONCE(r->ext->producer_pid, (uint32_t)getpid());
	if (r->role & PERFRING_ROLE_CONSUMER)
		WRITE_ONCE(r->ext->consumer_pid, (uint32_t)getpid());
	return 0;
}

PERFRING_API int perfring_ring_attach(const char *path, enum perfring_role role,
				      struct perfring_ring **out)
{
	struct perfring_ring *r;
	int err;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	r = ring_alloc();
	if (!r)
		return -ENOMEM;
	r->role = role;
	r->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		pr_err("%s: cannot open ring: %s", path, strerror(-err));
		goto err;
	}
	err = ring_attach_common(r, path);
	if (err)
		goto err;
	err = wake_open_fifo(r, path);
	if (err)
		goto err;
	*out = r;
	return 0;
err:
	perfring_ring_destroy(r);
	return err;
}

PERFRING_API int perfring_ring_attach_fd(int ring_fd, int wake_fd,
					 enum perfring_role role,
					 struct perfring_ring **out)
{
	struct perfring_ring *r;
	char proc[64];
	int err;

	if (ring_fd < 0 || wake_fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
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
	err = ring_attach_common(r, "ring fd");
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
	if (r->c_paused_by_us)
		perfring_ring_pause(r, false);
	if (!r->kernel)
		ring_unmap(r);
	if (r->fd >= 0)
		close(r->fd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	if (r->wake_wr >= 0)
		close(r->wake_wr);
	free(r->bounce);
	free(r->copy);
	free(r);
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
	size_t len;

	if (!r || !st || st->sz < offsetof(struct perfring_ring_stats, paused))
		return -EINVAL;
	s.data_size = r->size;
	s.head = smp_load_acquire(&r->pc->data_head); /* pairs with (B) */
	s.tail = READ_ONCE(r->pc->data_tail);
	if (r->ext) {
		s.lost_total = READ_ONCE(r->ext->lost_total);
		s.lost_pending = READ_ONCE(r->ext->lost_pending);
		s.wakeups = READ_ONCE(r->ext->wakeups);
		s.paused = READ_ONCE(r->ext->paused);
	}
	s.corrupt_bytes = r->corrupt_bytes;
	s.corrupt_events = r->corrupt_events;
	s.flags = r->mode;
	len = st->sz < sizeof(s) ? st->sz : sizeof(s);
	memcpy(st, &s, len);
	st->sz = len; /* what we filled in */
	return 0;
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
