// SPDX-License-Identifier: MIT
/*
 * tracefs source: a private instance and the consumer of its per-CPU ring
 * buffers.
 *
 * Mapped consumer (kernel/trace/ring_buffer.c ring_buffer_map_get_reader,
 * Documentation/trace/ring-buffer-map.rst): the meta page at offset 0, the
 * sub-buffers at meta_page_size, sub-buffer i at i * subbuf_size.  Each
 * TRACE_MMAP_IOCTL_GET_READER either advances the reader page we own to the
 * writer's commit (same reader.id, larger reader.read) or swaps a new page
 * out of the ring (new id).  The page is ours until the next call: a page
 * the writer has left is handed to the sink straight from the mapping
 * before the next call; a page the writer is still on is kept, because the
 * kernel cannot swap it away while it is unfinished (the writer leaving it
 * grows its commit, so the next call reports the same id again).  At the
 * end the valid part of a partial page is copied into a page of its own.
 *
 * Loss comes from the pages' RB_MISSED_EVENTS/RB_MISSED_STORED marks and
 * from the meta page's overrun counter, never from reader.lost_events
 * (the kernel zeroes it before updating the meta page).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "tracefs.h"

int tfs_instance_create(struct tfs_instance *ti, const char *root,
			const char *name)
{
	int n;

	memset(ti, 0, sizeof(*ti));
	if (strlen(root) >= sizeof(ti->root) ||
	    strlen(name) >= sizeof(ti->name))
		return -ENAMETOOLONG;
	strcpy(ti->root, root);
	strcpy(ti->name, name);
	n = snprintf(ti->path, sizeof(ti->path), "%s/instances/%s", root, name);
	if (n < 0 || (size_t)n >= sizeof(ti->path))
		return -ENAMETOOLONG;
	{
		/* The recorder (root) makes and writes files under @root:
		 * only in the kernel's tracefs. */
		struct statfs sf;

		if (statfs(root, &sf) < 0 || sf.f_type != TRACEFS_MAGIC) {
			pr_err("tracefs: %s is not a tracefs mount", root);
			return -ENOTSUP;
		}
	}
	if (mkdir(ti->path, 0755)) {
		int err = -errno;

		pr_err("tracefs: cannot create instance %s: %s", ti->path,
		       strerror(errno));
		return err;
	}
	ti->created = true;
	return 0;
}

int tfs_write(const struct tfs_instance *ti, const char *rel, const char *val,
	      bool must)
{
	char path[PATH_MAX];
	size_t len = strlen(val);
	int fd, n, err = 0;

	n = snprintf(path, sizeof(path), "%s/%s", ti->path, rel);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	/* tracefs has no links: one here is not the kernel's file. */
	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		ssize_t w = write(fd, val, len);

		if (w < 0)
			err = -errno;
		else if ((size_t)w != len)
			err = -EIO;
		close(fd);
	}
	if (err && must)
		pr_err("tracefs: cannot write '%s' to %s: %s", val, path,
		       strerror(-err));
	return err;
}

int tfs_instance_remove(struct tfs_instance *ti)
{
	int err = 0;

	if (!ti->created)
		return 0;
	/* first: with tracing off, an instance that copies the top-level
	 * trace_marker makes the kernel fail everyone's marker writes */
	tfs_write(ti, "options/copy_trace_marker", "0", false);
	tfs_write(ti, "tracing_on", "0", false);
	tfs_write(ti, "events/enable", "0", false);
	tfs_write(ti, "set_event_pid", "", false);
	/* rmdir is refused while a file of the instance is still open
	 * (a descriptor closing on another thread): retry briefly. */
	for (int i = 0; i < 50; i++) {
		if (!rmdir(ti->path)) {
			ti->created = false;
			return 0;
		}
		err = -errno;
		if (err != -EBUSY)
			break;
		usleep(20000);
	}
	pr_err("tracefs: cannot remove instance %s: %s", ti->path,
	       strerror(-err));
	return err;
}

int tfs_read_file(const char *path, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, got = 0;
	char *buf = malloc(cap + 1), *nb;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	for (;;) {
		ssize_t r;

		if (got == cap) {
			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = 0;
	*out = buf;
	*len = got;
	return 0;
}

/* ---- per-CPU consumer ---------------------------------------------------- */

static int map_meta(struct tfs_cpu *c)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	struct subbuf_meta m;
	void *p;

	p = mmap(NULL, psz, PROT_READ, MAP_SHARED, c->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	memcpy(&m, p, sizeof(m));
	if (m.meta_struct_len < offsetof(struct subbuf_meta, reserved1) ||
	    m.meta_page_size < psz || m.meta_page_size % psz ||
	    m.subbuf_size < psz || (m.subbuf_size & (m.subbuf_size - 1)) ||
	    m.nr_subbufs < 2 || m.nr_subbufs > (1u << 24) ||
	    m.subbuf_size > (1u << 27)) {
		pr_err("tracefs: cpu%d: unexpected meta page (size %u, struct %u, subbuf %u x %u)",
		       c->cpu, m.meta_page_size, m.meta_struct_len,
		       m.subbuf_size, m.nr_subbufs);
		munmap(p, psz);
		return -EPROTO;
	}
	c->meta_len = psz;
	if (m.meta_page_size > psz) {
		munmap(p, psz);
		p = mmap(NULL, m.meta_page_size, PROT_READ, MAP_SHARED, c->fd,
			 0);
		if (p == MAP_FAILED)
			return -errno;
		c->meta_len = m.meta_page_size;
	}
	c->meta = p;
	c->subbuf_size = m.subbuf_size;
	c->nr_subbufs = m.nr_subbufs;
	c->data_len = (size_t)m.subbuf_size * m.nr_subbufs;
	p = mmap(NULL, c->data_len, PROT_READ, MAP_SHARED, c->fd,
		 m.meta_page_size);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(c->meta, c->meta_len);
		c->meta = NULL;
		return err;
	}
	c->data = p;
	c->mapped = true;
	c->overrun_seen = READ_ONCE(c->meta->overrun);
	return 0;
}

int tfs_cpu_open(struct tfs_cpu *c, const char *dir, int cpu, bool map,
		 uint32_t subbuf_size)
{
	char path[PATH_MAX];
	int n, err;

	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->fd = -1;
	n = snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", dir,
		     cpu);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0) {
		err = -errno;
		pr_err("tracefs: cannot open %s: %s", path, strerror(errno));
		return err;
	}
	c->subbuf_size = subbuf_size;
	if (map) {
		err = map_meta(c);
		if (err == -EPROTO) {
			tfs_cpu_close(c);
			return err;
		}
		if (err)
			pr_warn("tracefs: %s cannot be memory-mapped (%s): reading it with read()",
				path, strerror(-err));
	}
	if (c->subbuf_size < 4096 || c->subbuf_size > (1u << 27)) {
		tfs_cpu_close(c);
		return -EINVAL;
	}
	c->copy = aligned_alloc(4096, c->subbuf_size);
	if (!c->copy) {
		tfs_cpu_close(c);
		return -ENOMEM;
	}
	return 0;
}

int tfs_cpu_attach_ring(struct tfs_cpu *c, struct perfring_subbuf *r, int cpu)
{
	/* Laid out as the kernel's meta page (subbuf_page.h asserts it). */
	const struct subbuf_meta *m =
		(const struct subbuf_meta *)(const void *)perfring_subbuf_meta(
			r);

	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->fd = -1;
	c->ring = r;
	c->mapped = true;
	c->meta = (struct subbuf_meta *)m;
	c->subbuf_size = m->subbuf_size;
	c->nr_subbufs = m->nr_subbufs;
	c->data = (uint8_t *)perfring_subbuf_page(r, 0);
	c->data_len = (size_t)m->subbuf_size * m->nr_subbufs;
	c->copy = aligned_alloc(4096, c->subbuf_size);
	return c->copy ? 0 : -ENOMEM;
}

void tfs_cpu_close(struct tfs_cpu *c)
{
	if (c->ring) {
		c->data = NULL;
		c->meta = NULL;
	}
	if (c->data)
		munmap(c->data, c->data_len);
	if (c->meta)
		munmap(c->meta, c->meta_len);
	if (c->fd >= 0)
		close(c->fd);
	free(c->copy);
	c->data = NULL;
	c->meta = NULL;
	c->copy = NULL;
	c->fd = -1;
}

void tfs_cpu_update_counts(struct tfs_cpu *c)
{
	if (!c->meta)
		return;
	c->entries = READ_ONCE(c->meta->entries);
	c->overrun = READ_ONCE(c->meta->overrun);
	c->kread = READ_ONCE(c->meta->read);
}

int tfs_account_page(struct tfs_cpu *c, const void *page)
{
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	int r;

	if (subbuf_page_info(page, c->subbuf_size, &pi)) {
		pr_warn("tracefs: cpu%d: page with a bad commit length",
			c->cpu);
		return -EBADMSG;
	}
	c->pages++;
	c->bytes += pi.commit;
	if (pi.missed) {
		c->lost_pages++;
		c->lost_stored += pi.missed_count;
	}
	subbuf_iter_init(&it, (const uint8_t *)page + SUBBUF_HDR_SIZE,
			 pi.commit, pi.time_stamp);
	while ((r = subbuf_iter_next(&it, &ev)) > 0)
		c->events++;
	if (r < 0) {
		pr_warn("tracefs: cpu%d: %s at page offset %u", c->cpu,
			it.bad_what, it.bad_offset + SUBBUF_HDR_SIZE);
		return r;
	}
	return 0;
}

/* A page counts once the sink took it: the figures say what is in the
 * file, never what failed to get there. */
static int hand_out(struct tfs_cpu *c, const void *page, tfs_page_fn fn,
		    void *ctx)
{
	int err = fn(ctx, c->cpu, page);

	if (err < 0) {
		c->unsaved_pages++;
		return err;
	}
	tfs_account_page(c, page);
	return err;
}

/*
 * Hands out bytes [from, to) of the data of the page we own as a page of
 * its own: its time stamp is the running time after the events before
 * @from, so the deltas stay right.
 */
static int hand_out_part(struct tfs_cpu *c, const uint8_t *page, uint32_t from,
			 uint32_t to, tfs_page_fn fn, void *ctx)
{
	struct subbuf_page_info pi;
	struct subbuf_iter it;
	struct subbuf_event ev;
	uint64_t ts, commit;
	int r;

	if (subbuf_page_info_live(page, c->subbuf_size, &pi))
		return -EBADMSG;
	if (to > c->subbuf_size - SUBBUF_HDR_SIZE || from >= to)
		return -EBADMSG;
	subbuf_iter_init(&it, page + SUBBUF_HDR_SIZE, from, pi.time_stamp);
	while ((r = subbuf_iter_next(&it, &ev)) > 0)
		;
	ts = it.ts;
	commit = to - from;
	memcpy(c->copy, &ts, 8);
	memcpy(c->copy + 8, &commit, 8);
	memcpy(c->copy + SUBBUF_HDR_SIZE, page + SUBBUF_HDR_SIZE + from,
	       to - from);
	memset(c->copy + SUBBUF_HDR_SIZE + (to - from), 0,
	       c->subbuf_size - SUBBUF_HDR_SIZE - (to - from));
	return hand_out(c, c->copy, fn, ctx);
}

static int consume_read(struct tfs_cpu *c, tfs_page_fn fn, void *ctx)
{
	int pages = 0, err;

	for (;;) {
		ssize_t r = read(c->fd, c->copy, c->subbuf_size);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		if ((size_t)r < SUBBUF_HDR_SIZE)
			return -EBADMSG;
		memset(c->copy + r, 0, c->subbuf_size - (size_t)r);
		err = hand_out(c, c->copy, fn, ctx);
		if (err < 0)
			return err;
		pages++;
	}
	return pages;
}

int tfs_cpu_consume(struct tfs_cpu *c, bool final, tfs_page_fn fn, void *ctx)
{
	int pages = 0, err;

	if (!c->mapped)
		return consume_read(c, fn, ctx);
	for (;;) {
		struct subbuf_page_info pi;
		const uint8_t *page;
		uint32_t id, rd;

		if (c->ring) {
			perfring_subbuf_get_reader(c->ring);
		} else if (ioctl(c->fd, TRACE_MMAP_IOCTL_GET_READER) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			pr_err("tracefs: cpu%d: GET_READER: %s", c->cpu,
			       strerror(errno));
			return err;
		}
		c->ioctls++;
		/* The ioctl updated the meta page before returning: plain
		 * loads after the system call see it. */
		id = READ_ONCE(c->meta->reader.id);
		rd = READ_ONCE(c->meta->reader.read);
		c->overrun_seen = READ_ONCE(c->meta->overrun);
		if (id >= c->nr_subbufs ||
		    rd > c->subbuf_size - SUBBUF_HDR_SIZE) {
			pr_err("tracefs: cpu%d: reader id %u read %u out of range",
			       c->cpu, id, rd);
			return -EPROTO;
		}
		if (c->have && id == c->id) {
			if (rd <= c->written || rd == c->read) {
				if (rd > c->read)
					c->read = rd;
				break; /* nothing new */
			}
			c->read = rd;
		} else {
			if (c->have && c->written < c->read)
				pr_warn("tracefs: cpu%d: page %u swapped away with %u bytes unsaved",
					c->cpu, c->id, c->read - c->written);
			c->have = true;
			c->id = id;
			c->read = rd;
			c->written = 0;
			if (!rd)
				break;
		}
		page = c->data + (size_t)id * c->subbuf_size;
		if (subbuf_page_info_live(page, c->subbuf_size, &pi)) {
			pr_err("tracefs: cpu%d: sub-buffer %u has a bad commit length",
			       c->cpu, id);
			return -EBADMSG;
		}
		if (subbuf_page_full(&pi, c->subbuf_size)) {
			/* Final: the writer left it.  Events past rd (added
			 * since the ioctl) are final too; the next call only
			 * moves the kernel's read position over them. */
			if (c->written == 0) {
				err = hand_out(c, page, fn, ctx);
				c->zero_copy_pages += err >= 0;
			} else {
				err = hand_out_part(c, page, c->written,
						    pi.commit, fn, ctx);
			}
			if (err < 0)
				return err;
			c->written = pi.commit;
			if (c->read < pi.commit)
				c->read = pi.commit;
			pages++;
			continue;
		}
		/* The writer is still on it: keep it until it completes. */
		break;
	}
	if (final && c->have && c->read > c->written) {
		/* The end: what the writer left on its page goes out as a
		 * page of its own. */
		err = hand_out_part(c, c->data + (size_t)c->id * c->subbuf_size,
				    c->written, c->read, fn, ctx);
		if (err < 0)
			return err;
		c->written = c->read;
		pages++;
	}
	return pages;
}
