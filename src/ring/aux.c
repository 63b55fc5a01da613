// SPDX-License-Identifier: MIT
/*
 * The AUX area: a second buffer beside a ring's data area for bulk trace
 * (hardware instruction trace), the design of kernel/events/ring_buffer.c
 * (rb_alloc_aux, perf_aux_output_begin/end/skip) on perfring's shared
 * memory.
 *
 * Layout: the ring file grows by aux_size bytes at aux_offset (after the
 * data area and MP commit slots, page aligned); the control page's
 * aux_offset/aux_size say where, as user space tells the kernel before it
 * maps the AUX area.  Our areas are mapped twice back to back, so the
 * writer always gets contiguous free space and the reader one piece.
 *
 * Counters: aux_head (writer) and aux_tail (reader) are free-running u64
 * byte counts, as data_head/data_tail.  Non-overwrite: the writer gets
 * aux_size - (head - tail) bytes; with none it disables itself (a
 * truncation, the kernel's pending_disable) until the reader re-enables it.
 * Overwrite (snapshot) areas run free: the writer never reads aux_tail,
 * every PERF_RECORD_AUX carries PERF_AUX_FLAG_OVERWRITE, and the reader
 * copies the newest bytes on demand.
 *
 * Ordering (pairs in docs/design.md):
 *   L    writer smp_load_acquire(aux_tail) in begin / reader
 *        smp_store_release(aux_tail) in read_end: the reader's copy of
 *        the bytes happens before the writer reuses them.
 *   M    writer smp_store_release(aux_head) in end/skip / reader
 *        smp_load_acquire(aux_head) in read_begin, snapshot, wait_prepare:
 *        trace bytes are visible before the head that covers them.  end()
 *        publishes aux_head before it writes PERF_RECORD_AUX (release of
 *        data_head, B), so a reader that saw the record sees the bytes.
 *   N    creator smp_store_release(aux_size) after the aux ext and
 *        aux_offset / attacher smp_load_acquire(aux_size).
 *   O    overwrite writer: release of aux_head after the bytes; snapshot
 *        reader (writer stopped): acquire aux_head, copy, smp_rmb(),
 *        re-read aux_head; a head that moved fails the snapshot (-EAGAIN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/opts.h"
#include "internal.h"

#define DEFAULT_AUX_SIZE (1u << 20)
#define MAX_AUX_SIZE (1ull << 40)

struct perfring_aux {
	struct perfring_ring *ring;
	struct perf_event_mmap_page *pc; /* writable view when we may write */
	struct perfring_aux_ext *ext; /* NULL for kernel rings */
	unsigned char *data;
	uint64_t size, mask;
	uint64_t watermark;
	bool overwrite;
	bool kernel;
	bool double_mapped;
	void *map_base;
	size_t map_len;
	/* Writer private state (one writer). */
	uint64_t w_head;
	uint64_t w_disable_seq;
	/* Reader private state. */
	uint64_t r_tail;
	uint64_t r_disabled_seen;
};

static struct perf_event_mmap_page *writable_pc(struct perfring_ring *r)
{
	return r->ctl_rw ? (struct perf_event_mmap_page *)r->ctl_rw : r->pc;
}

static struct perfring_aux_ext *aux_ext(struct perf_event_mmap_page *pc)
{
	return (struct perfring_aux_ext *)((char *)pc +
					   PERFRING_AUX_EXT_OFFSET);
}

/* Where the AUX area of a perfring ring file starts. */
static uint64_t aux_offset_of(const struct perfring_ring *r)
{
	uint64_t commit = (r->mode & PERFRING_MODE_MULTI_PRODUCER) ? r->size :
								     0;

	return r->page_size + r->size + commit;
}

static int aux_map_twice(struct perfring_aux *a, int fd, uint64_t off,
			 bool writable)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	size_t size = (size_t)a->size;
	unsigned char *base, *p;

	a->map_len = 2 * size;
	base = mmap(NULL, a->map_len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	a->map_base = base;
	for (int i = 0; i < 2; i++) {
		p = mmap(base + i * size, size, prot, MAP_SHARED | MAP_FIXED,
			 fd, (off_t)off);
		if (p == MAP_FAILED) {
			int err = -errno;

			munmap(base, a->map_len);
			a->map_base = NULL;
			return err;
		}
	}
	a->data = base;
	a->double_mapped = true;
	return 0;
}

static struct perfring_aux *aux_alloc(struct perfring_ring *r)
{
	struct perfring_aux *a = calloc(1, sizeof(*a));

	if (a)
		a->ring = r;
	return a;
}

PERFRING_API int perfring_aux_create(struct perfring_ring *r,
				     const struct perfring_aux_opts *opts,
				     struct perfring_aux **out)
{
	uint64_t size = 0, wm = 0, off;
	struct perfring_aux_ext *ext;
	struct perfring_aux *a;
	bool ow = false;
	int err;

	if (!r || !out || r->kernel || !r->ext)
		return -EINVAL;
	*out = NULL;
	if (!OPTS_VALID(opts))
		return -EINVAL;
	size = OPTS_GET(opts, aux_size, size);
	ow = OPTS_GET(opts, overwrite, ow);
	wm = OPTS_GET(opts, watermark, wm);
	if (!size)
		size = DEFAULT_AUX_SIZE;
	if (!is_pow2(size) || size < r->page_size || size > MAX_AUX_SIZE) {
		pr_err("aux: size %llu is not a power of two between the page size and 2^40",
		       (unsigned long long)size);
		return -EINVAL;
	}
	if (READ_ONCE(r->pc->aux_size)) {
		pr_err("aux: the ring already has an AUX area");
		return -EINVAL;
	}
	if (!wm || wm > size)
		wm = size / 2;
	a = aux_alloc(r);
	if (!a)
		return -ENOMEM;
	a->size = size;
	a->mask = size - 1;
	a->overwrite = ow;
	a->watermark = wm;
	off = aux_offset_of(r);
	if (ftruncate(r->fd, (off_t)(off + size)) < 0) {
		err = -errno;
		pr_err("aux: cannot grow the ring file: %s", strerror(-err));
		free(a);
		return err;
	}
	err = aux_map_twice(a, r->fd, off, true);
	if (err) {
		pr_err("aux: cannot map %llu bytes: %s",
		       (unsigned long long)size, strerror(-err));
		free(a);
		return err;
	}
	a->pc = writable_pc(r);
	r->file_len = off + size;
	ext = a->ext = aux_ext(a->pc);
	memset(ext, 0, sizeof(*ext));
	ext->magic = PERFRING_AUX_MAGIC;
	ext->flags = ow ? PERFRING_AUX_OVERWRITE : 0;
	ext->watermark = wm;
	WRITE_ONCE(a->pc->aux_head, 0);
	WRITE_ONCE(a->pc->aux_tail, 0);
	WRITE_ONCE(a->pc->aux_offset, off);
	/* (N): publishes the area; pairs with the acquire in aux_attach. */
	smp_store_release(&a->pc->aux_size, size);
	*out = a;
	return 0;
}

PERFRING_API int perfring_aux_attach(struct perfring_ring *r,
				     struct perfring_aux **out)
{
	struct perfring_aux_ext *ext;
	struct perfring_aux *a;
	uint64_t size, off;
	struct stat st;
	bool writable;
	int err;

	if (!r || !out || r->kernel || !r->ext)
		return -EINVAL;
	*out = NULL;
	/* (N): pairs with smp_store_release(aux_size) in perfring_aux_create. */
	size = smp_load_acquire(&r->pc->aux_size);
	if (!size)
		return -ENOENT;
	off = READ_ONCE(r->pc->aux_offset);
	ext = aux_ext(writable_pc(r));
	if (!is_pow2(size) || size < r->page_size || size > MAX_AUX_SIZE ||
	    off != aux_offset_of(r) ||
	    READ_ONCE(ext->magic) != PERFRING_AUX_MAGIC ||
	    (READ_ONCE(ext->flags) & ~PERFRING_AUX_OVERWRITE) ||
	    !READ_ONCE(ext->watermark) || READ_ONCE(ext->watermark) > size) {
		pr_err("aux: bad AUX area in the control page (aux_offset %llu, aux_size %llu)",
		       (unsigned long long)off, (unsigned long long)size);
		return -EINVAL;
	}
	if (fstat(r->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size != off + size) {
		pr_err("aux: ring file is %lld bytes, the AUX area needs %llu",
		       (long long)st.st_size, (unsigned long long)(off + size));
		return -EINVAL;
	}
	a = aux_alloc(r);
	if (!a)
		return -ENOMEM;
	a->size = size;
	a->mask = size - 1;
	a->overwrite = READ_ONCE(ext->flags) & PERFRING_AUX_OVERWRITE;
	a->watermark = READ_ONCE(ext->watermark);
	/* As perf: a read-only consumer maps an overwrite area read-only. */
	writable = (r->role & PERFRING_ROLE_PRODUCER) || !a->overwrite;
	err = aux_map_twice(a, r->fd, off, writable);
	if (err) {
		free(a);
		return err;
	}
	/* Covered by the SIGBUS guard like the ring's own mappings. */
	ring_guard_add(r, a->map_base, a->map_len);
	a->pc = writable_pc(r);
	a->ext = ext;
	a->w_head = READ_ONCE(a->pc->aux_head);
	a->w_disable_seq = READ_ONCE(ext->disable_seq);
	a->r_tail = READ_ONCE(a->pc->aux_tail);
	if ((a->w_head | a->r_tail) & 7 && !a->overwrite)
		pr_debug("aux: head/tail not 8-byte aligned (allowed)");
	*out = a;
	return 0;
}

PERFRING_API int perfring_aux_map_kernel(struct perfring_ring *r, uint64_t size,
					 bool overwrite,
					 struct perfring_aux **out)
{
	struct perfring_aux *a;
	uint64_t off;
	void *p;

	if (!r || !out || !r->kernel || r->perf_fd < 0 ||
	    (r->mode & PERFRING_MODE_OVERWRITE) || !is_pow2(size) ||
	    size < r->page_size)
		return -EINVAL;
	*out = NULL;
	a = aux_alloc(r);
	if (!a)
		return -ENOMEM;
	/* As perf: the AUX area right after the data area. */
	off = r->page_size + r->size;
	a->pc = r->pc;
	a->kernel = true;
	a->size = size;
	a->mask = size - 1;
	a->overwrite = overwrite;
	WRITE_ONCE(a->pc->aux_offset, off);
	WRITE_ONCE(a->pc->aux_size, size);
	p = mmap(NULL, (size_t)size, PROT_READ | (overwrite ? 0 : PROT_WRITE),
		 MAP_SHARED, r->perf_fd, (off_t)off);
	if (p == MAP_FAILED) {
		int err = -errno;

		pr_err("aux: cannot map the kernel AUX area (%llu bytes at %llu): %s",
		       (unsigned long long)size, (unsigned long long)off,
		       strerror(-err));
		free(a);
		return err;
	}
	a->map_base = a->data = p;
	a->map_len = (size_t)size;
	a->r_tail = READ_ONCE(a->pc->aux_tail);
	*out = a;
	return 0;
}

PERFRING_API void perfring_aux_destroy(struct perfring_aux *a)
{
	if (!a)
		return;
	if (!a->kernel)
		ring_guard_remove(a->ring, a->map_base);
	if (a->map_base)
		munmap(a->map_base, a->map_len);
	free(a);
}

PERFRING_API uint64_t perfring_aux_size(const struct perfring_aux *a)
{
	return a ? a->size : 0;
}

/* ---- writer ---- */

static bool writer_disabled(struct perfring_aux *a)
{
	return READ_ONCE(a->ext->enable_seq) != a->w_disable_seq;
}

static void aux_wake(struct perfring_aux *a)
{
	static const uint64_t one = 1;
	struct perfring_ring *r = a->ring;

	WRITE_ONCE(a->ext->wakeups, READ_ONCE(a->ext->wakeups) + 1);
	/* Level-triggered descriptor: a wake-up before the reader polls is
	 * seen by its poll; EAGAIN means one is already pending. */
	if (r->wake_fd >= 0 && write(r->wake_fd, &one, sizeof(one)) < 0 &&
	    errno != EAGAIN)
		pr_debug("aux: wake-up write failed: %s", strerror(errno));
}

static void writer_disable(struct perfring_aux *a)
{
	a->w_disable_seq++;
	WRITE_ONCE(a->ext->disable_seq, a->w_disable_seq);
}

PERFRING_API int perfring_aux_output_begin(struct perfring_aux_output *h,
					   struct perfring_aux *a)
{
	uint64_t head, tail, used;

	if (!h || !a || a->kernel || !a->ext)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	if (writer_disabled(a))
		return -EAGAIN;
	head = a->w_head;
	h->aux = a;
	h->head = head;
	h->data = a->data + (head & a->mask);
	if (a->overwrite) {
		h->size = a->size;
		return 0;
	}
	/* (L): pairs with the reader's smp_store_release(aux_tail). */
	tail = smp_load_acquire(&a->pc->aux_tail);
	used = head - tail;
	if (used >= a->size) {
		/* No space (or a reader that ran ahead: treat as full). */
		writer_disable(a);
		aux_wake(a);
		h->aux = NULL;
		return -ENOSPC;
	}
	h->size = a->size - used;
	return 0;
}

PERFRING_API int64_t perfring_aux_space(struct perfring_aux *a)
{
	uint64_t used;

	if (!a || a->kernel || !a->ext)
		return -EINVAL;
	if (a->overwrite)
		return (int64_t)a->size;
	/* (L): as in perfring_aux_output_begin. */
	used = a->w_head - smp_load_acquire(&a->pc->aux_tail);
	return used >= a->size ? 0 : (int64_t)(a->size - used);
}

PERFRING_API void perfring_aux_output_flag(struct perfring_aux_output *h,
					   uint64_t flags)
{
	if (h)
		h->flags |= flags & ~(uint64_t)PERF_AUX_FLAG_OVERWRITE;
}

static bool need_wakeup(struct perfring_aux *a, uint64_t head)
{
	struct perfring_aux_ext *ext = a->ext;

	if (a->overwrite)
		return false;
	if (head - READ_ONCE(ext->aux_wakeup) >= a->watermark) {
		WRITE_ONCE(ext->aux_wakeup, head - head % a->watermark);
		return true;
	}
	return false;
}

PERFRING_API int perfring_aux_output_skip(struct perfring_aux_output *h,
					  uint64_t size)
{
	struct perfring_aux *a;

	if (!h || !h->aux)
		return -EINVAL;
	a = h->aux;
	if (size > h->size)
		return -ENOSPC;
	a->w_head += size;
	/* (M): pairs with the reader's smp_load_acquire(aux_head). */
	smp_store_release(&a->pc->aux_head, a->w_head);
	if (need_wakeup(a, a->w_head))
		aux_wake(a);
	h->head = a->w_head;
	h->data = a->data + (a->w_head & a->mask);
	h->size -= size;
	return 0;
}

PERFRING_API int perfring_aux_output_end(struct perfring_aux_output *h,
					 uint64_t size)
{
	struct perfring_aux_record *rec;
	unsigned char buf[sizeof(*rec) + 256];
	struct perfring_aux *a;
	struct perfring_aux_ext *ext;
	uint64_t flags;
	bool wake;
	int ret = 0;

	if (!h || !h->aux)
		return -EINVAL;
	a = h->aux;
	ext = a->ext;
	if (size > h->size || h->sample_id_size > 256 ||
	    h->sample_id_size % 8) {
		h->aux = NULL;
		return -EINVAL;
	}
	flags = h->flags;
	if (a->overwrite)
		flags |= PERF_AUX_FLAG_OVERWRITE;
	else
		flags &= ~(uint64_t)PERF_AUX_FLAG_OVERWRITE;
	wake = flags & PERF_AUX_FLAG_TRUNCATED;
	a->w_head = h->head + size;
	/* (M)/(O): the bytes before the head that covers them. */
	smp_store_release(&a->pc->aux_head, a->w_head);
	if (size || (flags & ~(uint64_t)PERF_AUX_FLAG_OVERWRITE)) {
		size_t len = sizeof(*rec) + h->sample_id_size;

		rec = (struct perfring_aux_record *)buf;
		rec->header.type = PERF_RECORD_AUX;
		rec->header.misc = 0;
		rec->header.size = (uint16_t)len;
		/* As the kernel: in overwrite mode the driver's head, the
		 * end of the data (perf subtracts aux_size). */
		rec->aux_offset = a->overwrite ? a->w_head : h->head;
		rec->aux_size = size;
		rec->flags = flags;
		if (h->sample_id_size)
			memcpy(buf + sizeof(*rec), h->sample_id,
			       h->sample_id_size);
		ret = perfring_ring_emit(a->ring, buf, len);
		WRITE_ONCE(ext->records, READ_ONCE(ext->records) + 1);
		if (flags & PERF_AUX_FLAG_TRUNCATED)
			WRITE_ONCE(ext->truncated,
				   READ_ONCE(ext->truncated) + 1);
		if (ret)
			WRITE_ONCE(ext->aux_records_lost,
				   READ_ONCE(ext->aux_records_lost) + 1);
	}
	if (need_wakeup(a, a->w_head))
		wake = true;
	if (wake) {
		if (flags & PERF_AUX_FLAG_TRUNCATED)
			writer_disable(a);
		aux_wake(a);
	}
	h->aux = NULL;
	return ret;
}

PERFRING_API void perfring_aux_note_lost(struct perfring_aux *a, uint64_t bytes)
{
	if (a && a->ext)
		WRITE_ONCE(a->ext->lost_bytes,
			   READ_ONCE(a->ext->lost_bytes) + bytes);
}

PERFRING_API int perfring_aux_itrace_start(struct perfring_aux *a, uint32_t pid,
					   uint32_t tid, const void *sample_id,
					   uint32_t sample_id_size)
{
	unsigned char buf[16 + 256];
	struct perf_event_header hdr;

	if (!a || a->kernel || sample_id_size > 256 || sample_id_size % 8 ||
	    (sample_id_size && !sample_id))
		return -EINVAL;
	hdr.type = PERF_RECORD_ITRACE_START;
	hdr.misc = 0;
	hdr.size = (uint16_t)(16 + sample_id_size);
	memcpy(buf, &hdr, 8);
	memcpy(buf + 8, &pid, 4);
	memcpy(buf + 12, &tid, 4);
	if (sample_id_size)
		memcpy(buf + 16, sample_id, sample_id_size);
	return perfring_ring_emit(a->ring, buf, hdr.size);
}

/* ---- reader ---- */

PERFRING_API int64_t perfring_aux_read_begin(struct perfring_aux *a,
					     const void *ptr[2], size_t len[2],
					     uint64_t *pos)
{
	uint64_t head, avail, off;

	if (!a || !ptr || !len)
		return -EINVAL;
	if (ring_dead(a->ring))
		return ring_dead_error(a->ring);
	ptr[0] = ptr[1] = NULL;
	len[0] = len[1] = 0;
	if (a->overwrite)
		return -EINVAL;
	/* (M): pairs with the writer's smp_store_release(aux_head). */
	head = smp_load_acquire(&a->pc->aux_head);
	avail = head - a->r_tail;
	if (pos)
		*pos = a->r_tail;
	if (avail > a->size) {
		pr_err("aux: aux_head %llu is %llu bytes ahead of aux_tail %llu, more than the area (%llu): resynchronised at aux_head",
		       (unsigned long long)head, (unsigned long long)avail,
		       (unsigned long long)a->r_tail,
		       (unsigned long long)a->size);
		a->r_tail = head;
		/* (L): see perfring_aux_read_end. */
		smp_store_release(&a->pc->aux_tail, head);
		return -EBADMSG;
	}
	if (!avail)
		return 0;
	off = a->r_tail & a->mask;
	ptr[0] = a->data + off;
	if (a->double_mapped || off + avail <= a->size) {
		len[0] = (size_t)avail;
	} else {
		len[0] = (size_t)(a->size - off);
		ptr[1] = a->data;
		len[1] = (size_t)(avail - len[0]);
	}
	return (int64_t)avail;
}

PERFRING_API int perfring_aux_read_end(struct perfring_aux *a, uint64_t bytes)
{
	if (!a || a->overwrite)
		return -EINVAL;
	if (ring_dead(a->ring))
		return ring_dead_error(a->ring);
	if (bytes > READ_ONCE(a->pc->aux_head) - a->r_tail)
		return -EINVAL;
	a->r_tail += bytes;
	/*
	 * (L): our reads of the bytes happen before the writer may reuse
	 * them; pairs with smp_load_acquire(aux_tail) in output_begin.  (perf
	 * uses smp_mb() then a plain store for the kernel's aux_tail: this
	 * release orders the same earlier loads.)
	 */
	smp_store_release(&a->pc->aux_tail, a->r_tail);
	return 0;
}

PERFRING_API int perfring_aux_enable(struct perfring_aux *a)
{
	if (!a)
		return -EINVAL;
	if (a->kernel) {
		if (ioctl(a->ring->perf_fd, PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
		return 0;
	}
	WRITE_ONCE(a->ext->enable_seq, READ_ONCE(a->ext->disable_seq));
	return 0;
}

PERFRING_API bool perfring_aux_disabled(const struct perfring_aux *a)
{
	if (!a || !a->ext)
		return false;
	return READ_ONCE(a->ext->enable_seq) != READ_ONCE(a->ext->disable_seq);
}

PERFRING_API int64_t perfring_aux_snapshot(struct perfring_aux *a, void *buf,
					   size_t size, uint64_t *pos)
{
	uint64_t head, head2, n, start, off;
	unsigned char *out = buf;

	if (!a || (!buf && size))
		return -EINVAL;
	if (ring_dead(a->ring))
		return ring_dead_error(a->ring);
	/* (O): pairs with the writer's release of aux_head. */
	head = smp_load_acquire(&a->pc->aux_head);
	n = head < a->size ? head : a->size;
	if (n > size)
		n = size;
	start = head - n;
	off = start & a->mask;
	if (a->double_mapped || off + n <= a->size) {
		memcpy(out, a->data + off, (size_t)n);
	} else {
		memcpy(out, a->data + off, (size_t)(a->size - off));
		memcpy(out + (a->size - off), a->data,
		       (size_t)(n - (a->size - off)));
	}
	/* (O): the copy before the re-read of the head. */
	smp_rmb();
	head2 = READ_ONCE(a->pc->aux_head);
	/*
	 * A snapshot is taken with the writer stopped (snapshot_start), as
	 * perf disables the event first.  A head that moved means it was not:
	 * any byte of the copy may have been overwritten.
	 */
	if (head2 != head)
		return -EAGAIN;
	if (ring_dead(a->ring)) /* the copy read the guard's zero pages */
		return ring_dead_error(a->ring);
	if (pos)
		*pos = start;
	return (int64_t)n;
}

PERFRING_API int perfring_aux_wait_prepare(struct perfring_aux *a)
{
	uint64_t head;

	if (!a)
		return -EINVAL;
	if (ring_dead(a->ring))
		return ring_dead_error(a->ring);
	if (a->overwrite)
		return 0;
	if (perfring_aux_disabled(a))
		return 1;
	/* (M) */
	head = smp_load_acquire(&a->pc->aux_head);
	return head - a->r_tail >= (a->watermark ? a->watermark : 1) ? 1 : 0;
}

PERFRING_API int perfring_aux_stats(const struct perfring_aux *a,
				    struct perfring_aux_stats *st)
{
	struct perfring_aux_stats s = { .sz = sizeof(s) };

	if (!a || !st || st->sz < offsetof(struct perfring_aux_stats, tail))
		return -EINVAL;
	s.aux_size = a->size;
	s.head = smp_load_acquire(&a->pc->aux_head); /* (M) */
	s.tail = READ_ONCE(a->pc->aux_tail);
	s.overwrite = a->overwrite;
	if (a->ext) {
		s.records = READ_ONCE(a->ext->records);
		s.truncated = READ_ONCE(a->ext->truncated);
		s.lost_bytes = READ_ONCE(a->ext->lost_bytes);
		s.wakeups = READ_ONCE(a->ext->wakeups);
		s.aux_records_lost = READ_ONCE(a->ext->aux_records_lost);
		s.disabled = perfring_aux_disabled(a);
	}
	OPTS_FILL(st, &s);
	return 0;
}
