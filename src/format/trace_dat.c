// SPDX-License-Identifier: MIT
/*
 * trace.dat version 6: writer and bounds-checked reader.  Layout in
 * trace_dat.h.  Numbers are in host byte order (the endian byte says so);
 * the reader accepts little-endian files with 8-byte longs, the format of
 * the 64-bit kernels this library records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "../ring/subbuf_page.h"
#include "out_file.h"
#include "trace_dat.h"

#define TDAT_MAX_CPUS 4096
#define TDAT_MAX_PAGE (1u << 27)
#define TDAT_MAX_SECTION (64u << 20) /* uncompressed section */
#define TDAT_MAX_CPU_DATA (1ull << 30) /* uncompressed CPU data */
#define TDAT_MAX_CHUNK (32u << 20) /* one compressed chunk, uncompressed */

/* ---- growable buffer ------------------------------------------------------ */

struct obuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void ob_put(struct obuf *b, const void *d, size_t n)
{
	if (b->err || !n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 65536;
		uint8_t *np;

		while (cap - b->len < n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void ob_u16(struct obuf *b, uint16_t v)
{
	ob_put(b, &v, 2);
}

static void ob_u32(struct obuf *b, uint32_t v)
{
	ob_put(b, &v, 4);
}

static void ob_u64(struct obuf *b, uint64_t v)
{
	ob_put(b, &v, 8);
}

static void ob_str(struct obuf *b, const char *s)
{
	ob_put(b, s, strlen(s) + 1);
}

/* ---- writer ----------------------------------------------------------------- */

/* Pieces the CPU data is moved in at the end (each freed in the temporary
 * file as it lands in the output). */
#define TDAT_JOIN_CHUNK (4u << 20)

struct tdat_wcpu {
	int fd;
	uint64_t size; /* complete pages in the temporary file */
	uint64_t kept; /* bytes in the output after finish */
	struct tdat_cut cut; /* left out by the join */
};

struct tdat_writer {
	char *path;
	int out_fd;
	int nr_cpus;
	uint32_t page_size;
	uint64_t bytes;
	uint64_t prefix_len; /* metadata written by tdat_writer_begin() */
	uint64_t reserved_end; /* the output's allocated bytes from the start */
	uint64_t file_bytes;
	int err; /* first failed page write (sticky) */
	struct tdat_wcpu *cpu;
};

static int make_temp(const char *path, int cpu, struct tdat_wcpu *wc)
{
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	int fd;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, n, "%s.cpu%d.XXXXXX", path, cpu);
	/* mkostemp: O_CREAT|O_EXCL, mode 0600, a name nobody can predict. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		pr_err("trace.dat: cannot create a temporary file %s: %s", tmp,
		       strerror(errno));
		free(tmp);
		return err;
	}
	/* Nobody needs its name: it goes away with its descriptor. */
	unlink(tmp);
	free(tmp);
	wc->fd = fd;
	return 0;
}

int tdat_writer_open(const char *path, uint32_t page_size, int nr_cpus,
		     unsigned int out_flags, struct tdat_writer **out)
{
	struct tdat_writer *w;
	int err;

	*out = NULL;
	if (nr_cpus <= 0 || nr_cpus > TDAT_MAX_CPUS || page_size < 4096 ||
	    page_size > TDAT_MAX_PAGE)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->out_fd = -1;
	w->nr_cpus = nr_cpus;
	w->page_size = page_size;
	w->path = strdup(path);
	w->cpu = calloc((size_t)nr_cpus, sizeof(*w->cpu));
	if (!w->path || !w->cpu) {
		err = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < nr_cpus; i++)
		w->cpu[i].fd = -1;
	w->out_fd = out_file_open(path, (out_flags & OUT_FILE_KEEP_OLD) |
						OUT_FILE_SEEKABLE);
	if (w->out_fd < 0) {
		err = w->out_fd;
		goto fail;
	}
	for (int i = 0; i < nr_cpus; i++) {
		err = make_temp(path, i, &w->cpu[i]);
		if (err)
			goto fail;
	}
	*out = w;
	return 0;
fail:
	tdat_writer_abort(w);
	return err;
}

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off,
		      size_t *done)
{
	const uint8_t *b = p;
	size_t got = 0;
	int err = 0;

	while (got < n) {
		ssize_t r = pwrite(fd, b + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0) {
			err = -EIO;
			break;
		}
		got += (size_t)r;
	}
	if (done)
		*done = got;
	return err;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = write(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

int tdat_writer_page(struct tdat_writer *w, int cpu, const void *page)
{
	struct tdat_wcpu *wc;
	int err;

	if (cpu < 0 || cpu >= w->nr_cpus)
		return -EINVAL;
	if (w->err)
		return w->err;
	wc = &w->cpu[cpu];
	/* Straight from the caller's memory (the kernel's mapping for
	 * completed sub-buffers): no copy in user space. */
	err = write_all(wc->fd, page, w->page_size);
	if (err) {
		/* A page written in part is dropped; every later page too,
		 * or the file would have a hole no mark tells of. */
		if (ftruncate(wc->fd, (off_t)wc->size) ||
		    lseek(wc->fd, (off_t)wc->size, SEEK_SET) < 0)
			pr_debug("trace.dat: cannot cut cpu%d's data back",
				 cpu);
		pr_err("trace.dat: writing cpu%d data (temporary file beside %s): %s: the data stops here, what was written is kept",
		       cpu, w->path, strerror(-err));
		w->err = err;
		return err;
	}
	wc->size += w->page_size;
	w->bytes += w->page_size;
	return 0;
}

int tdat_writer_error(const struct tdat_writer *w)
{
	return w->err;
}

uint64_t tdat_writer_bytes(const struct tdat_writer *w)
{
	return w->bytes;
}

static void put_blob64(struct obuf *b, const struct tdat_blob *bl)
{
	ob_u64(b, bl->len);
	ob_put(b, bl->data, bl->len);
}

static void put_option(struct obuf *b, uint16_t id, const void *d, uint32_t n)
{
	ob_u16(b, id);
	ob_u32(b, n);
	ob_put(b, d, n);
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static size_t opt_len(const char *s, size_t none)
{
	return s ? strlen(s) + 1 : none;
}

int tdat_writer_begin(struct tdat_writer *w, const struct tdat_meta *m)
{
	struct obuf b = { 0 };
	uint64_t tail;
	int err;

	ob_put(&b, TDAT_MAGIC, TDAT_MAGIC_LEN);
	ob_str(&b, "6");
	ob_put(&b, &(uint8_t){ 0 }, 1); /* little endian */
	ob_put(&b, &(uint8_t){ (uint8_t)sizeof(long) }, 1);
	ob_u32(&b, w->page_size);
	ob_str(&b, "header_page");
	put_blob64(&b, &m->header_page);
	ob_str(&b, "header_event");
	put_blob64(&b, &m->header_event);
	ob_u32(&b, (uint32_t)m->nr_ftrace);
	for (size_t i = 0; i < m->nr_ftrace; i++)
		put_blob64(&b, &m->ftrace[i]);
	ob_u32(&b, (uint32_t)m->nr_systems);
	for (size_t i = 0; i < m->nr_systems; i++) {
		ob_str(&b, m->systems[i].name);
		ob_u32(&b, (uint32_t)m->systems[i].nr_events);
		for (size_t j = 0; j < m->systems[i].nr_events; j++)
			put_blob64(&b, &m->systems[i].events[j]);
	}
	ob_u32(&b, (uint32_t)m->kallsyms.len);
	ob_put(&b, m->kallsyms.data, m->kallsyms.len);
	ob_u32(&b, (uint32_t)m->printk.len);
	ob_put(&b, m->printk.data, m->printk.len);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	err = pwrite_all(w->out_fd, b.p, b.len, 0, NULL);
	w->prefix_len = b.len;
	free(b.p);
	if (err)
		goto werr;
	/*
	 * Room for what finish writes in front of the data: saved_cmdlines
	 * at its largest, the options (the statistics' numbers grow: twice
	 * their length now), the table; and the padding to the first page.
	 */
	tail = 8 +
	       (m->cmdlines_max > m->cmdlines.len ? m->cmdlines_max :
						    m->cmdlines.len) +
	       4 + 10 + 8 * 6 + 4 + opt_len(m->trace_clock, 4096) +
	       opt_len(m->uname, 1024) +
	       2 * opt_len(m->cpustat, 1024 * (size_t)w->nr_cpus) + 9 + 2 + 10 +
	       16 * (uint64_t)w->nr_cpus;
	w->reserved_end = round_up(w->prefix_len + tail + 4096, w->page_size);
	err = -posix_fallocate(w->out_fd, (off_t)w->prefix_len,
			       (off_t)(w->reserved_end - w->prefix_len));
	if (err)
		goto werr;
	return 0;
werr:
	pr_err("trace.dat: writing the metadata to %s: %s", w->path,
	       strerror(-err));
	return err;
}

/* Everything finish writes in front of the data, with the table's
 * entries as @w says now.  Returns where the table starts in @b. */
static size_t build_tail(struct obuf *b, const struct tdat_writer *w,
			 const struct tdat_meta *m, size_t cmdlines_len)
{
	size_t table;

	ob_u64(b, cmdlines_len);
	ob_put(b, m->cmdlines.data, cmdlines_len);
	ob_u32(b, (uint32_t)w->nr_cpus);
	ob_put(b, "options  ", 10);
	{
		uint32_t n = (uint32_t)w->nr_cpus;

		put_option(b, TDAT_OPT_CPUCOUNT, &n, 4);
	}
	if (m->trace_clock)
		put_option(b, TDAT_OPT_TRACECLOCK, m->trace_clock,
			   (uint32_t)strlen(m->trace_clock) + 1);
	if (m->uname)
		put_option(b, TDAT_OPT_UNAME, m->uname,
			   (uint32_t)strlen(m->uname) + 1);
	if (m->cpustat)
		put_option(b, TDAT_OPT_CPUSTAT, m->cpustat,
			   (uint32_t)strlen(m->cpustat) + 1);
	put_option(b, TDAT_OPT_VERSION, "perfring", 9);
	ob_u16(b, TDAT_OPT_DONE);
	ob_put(b, "flyrecord", 10);
	table = b->len;
	for (int i = 0; i < w->nr_cpus; i++) {
		ob_u64(b, 0);
		ob_u64(b, 0);
	}
	return table;
}

/* Counts the events of whole pages (damaged pages count as pages). */
static void count_pages(const uint8_t *p, size_t len, uint32_t page_size,
			struct tdat_cut *c)
{
	for (size_t off = 0; off + page_size <= len; off += page_size) {
		struct subbuf_page_info pi;
		struct subbuf_iter it;
		struct subbuf_event ev;

		c->pages++;
		if (subbuf_page_info(p + off, page_size, &pi))
			continue;
		c->bytes += pi.commit;
		c->marked += pi.missed ? 1 : 0;
		subbuf_iter_init(&it, p + off + SUBBUF_HDR_SIZE, pi.commit,
				 pi.time_stamp);
		while (subbuf_iter_next(&it, &ev) > 0)
			c->events++;
	}
}

/* The pages of @wc from @from to its end, still in its temporary file,
 * counted as left out. */
static void count_cut(struct tdat_writer *w, struct tdat_wcpu *wc,
		      uint64_t from, uint8_t **bufp)
{
	if (!*bufp)
		*bufp = malloc(TDAT_JOIN_CHUNK);
	while (from < wc->size) {
		uint8_t *buf = *bufp;
		size_t n = wc->size - from > TDAT_JOIN_CHUNK ?
				   TDAT_JOIN_CHUNK :
				   (size_t)(wc->size - from);
		ssize_t r = buf ? pread(wc->fd, buf, n, (off_t)from) : -1;

		if (r < 0 && buf && errno == EINTR)
			continue;
		if (r <= 0 || (size_t)r < w->page_size) {
			/* unreadable: pages without their events */
			wc->cut.pages += (wc->size - from) / w->page_size;
			return;
		}
		r -= r % w->page_size;
		count_pages(buf, (size_t)r, w->page_size, &wc->cut);
		from += (uint64_t)r;
	}
}

/* Frees [from, to) of a temporary file already in the output. */
static void punch(int fd, uint64_t from, uint64_t to)
{
	if (to > from)
		fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  (off_t)from, (off_t)(to - from));
}

/*
 * Moves @wc's pages to @off in the output.  copy_file_range() first (a
 * copy in the kernel, or shared extents); when it cannot (a full disk),
 * each chunk is read, freed in the temporary file and written, which
 * needs no free space.  On failure the CPU is cut at its last complete
 * page and the rest counted.  Returns 0 or the error that cut it.
 */
static int join_cpu(struct tdat_writer *w, struct tdat_wcpu *wc, uint64_t off,
		    uint8_t **buf)
{
	uint64_t done = 0, freed = 0;
	int err = 0;

	while (done < wc->size) {
		size_t n = wc->size - done > TDAT_JOIN_CHUNK ?
				   TDAT_JOIN_CHUNK :
				   (size_t)(wc->size - done);
		loff_t in = (loff_t)done, o = (loff_t)(off + done);
		size_t wrote;
		ssize_t r;

		r = copy_file_range(wc->fd, &in, w->out_fd, &o, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0) {
			done += (uint64_t)r;
			punch(wc->fd, freed,
			      done / w->page_size * w->page_size);
			freed = done / w->page_size * w->page_size;
			continue;
		}
		/* Whole pages from here. */
		done = freed;
		n = wc->size - done > TDAT_JOIN_CHUNK ?
			    TDAT_JOIN_CHUNK :
			    (size_t)(wc->size - done);
		if (!*buf && !(*buf = malloc(TDAT_JOIN_CHUNK))) {
			err = -ENOMEM;
			break;
		}
		r = pread(wc->fd, *buf, n, (off_t)done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)n) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		punch(wc->fd, done, done + n);
		freed = done + n;
		err = pwrite_all(w->out_fd, *buf, n, off + done, &wrote);
		if (err) {
			/* What did not land is only in memory now. */
			wrote -= wrote % w->page_size;
			count_pages(*buf + wrote, n - wrote, w->page_size,
				    &wc->cut);
			done += wrote;
			count_cut(w, wc, freed, buf);
			wc->kept = done;
			return err;
		}
		done += n;
	}
	if (err) {
		count_cut(w, wc, done, buf);
		wc->kept = done;
		return err;
	}
	wc->kept = wc->size;
	return 0;
}

static bool no_space(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG;
}

int tdat_writer_finish(struct tdat_writer *w, const struct tdat_meta *m)
{
	struct obuf b = { 0 };
	size_t table, cmdl = m->cmdlines.len;
	uint64_t off, end;
	uint8_t *buf = NULL;
	int err, cut_err = 0;

	table = build_tail(&b, w, m, cmdl);
	if (b.err) {
		err = b.err;
		goto bad;
	}
	err = pwrite_all(w->out_fd, b.p, b.len, w->prefix_len, NULL);
	if (no_space(err) && w->prefix_len + b.len > w->reserved_end) {
		/* saved_cmdlines outgrew the room kept for it: only names
		 * of tasks are lost, at a line boundary. */
		size_t fixed = b.len - cmdl,
		       room = (size_t)(w->reserved_end - w->prefix_len);
		const char *c = m->cmdlines.data;

		cmdl = room > fixed ? room - fixed : 0;
		while (cmdl && c[cmdl - 1] != '\n')
			cmdl--;
		pr_warn("trace.dat: %s: no room for all of saved_cmdlines: %zu of %zu bytes kept (task names)",
			w->path, cmdl, m->cmdlines.len);
		b.len = 0;
		table = build_tail(&b, w, m, cmdl);
		err = b.err ? b.err :
			      pwrite_all(w->out_fd, b.p, b.len, w->prefix_len,
					 NULL);
	}
	if (err)
		goto bad;
	off = round_up(w->prefix_len + b.len, w->page_size);
	end = off;
	for (int i = 0; i < w->nr_cpus; i++) {
		struct tdat_wcpu *wc = &w->cpu[i];
		uint64_t o = wc->size ? off : 0;

		/* After a cut, the rest is not even tried: it would only
		 * fail again and lose more time. */
		if (cut_err) {
			count_cut(w, wc, 0, &buf);
			wc->kept = 0;
		} else {
			err = join_cpu(w, wc, off, &buf);
			if (err) {
				cut_err = err;
				pr_err("trace.dat: writing cpu%d data into %s: %s: %" PRIu64
				       " pages (%" PRIu64
				       " events) and the CPUs after it left out",
				       i, w->path, strerror(-err),
				       wc->cut.pages, wc->cut.events);
			}
		}
		o = wc->kept ? o : 0;
		memcpy(b.p + table + 16 * (size_t)i, &o, 8);
		memcpy(b.p + table + 16 * (size_t)i + 8, &wc->kept, 8);
		off += wc->kept;
		if (wc->kept)
			end = off;
	}
	free(buf);
	/* The table, last: it says what is there (in allocated room). */
	err = pwrite_all(w->out_fd, b.p + table, 16 * (size_t)w->nr_cpus,
			 w->prefix_len + table, NULL);
	if (err)
		goto bad;
	/* The last CPU may have no data: the file still ends page-aligned. */
	if (ftruncate(w->out_fd, (off_t)end)) {
		err = -errno;
		goto bad;
	}
	w->file_bytes = end;
	err = close(w->out_fd) ? -errno : 0;
	w->out_fd = -1;
	if (err)
		goto bad;
	free(b.p);
	for (int i = 0; i < w->nr_cpus; i++) {
		close(w->cpu[i].fd);
		w->cpu[i].fd = -1;
	}
	if (w->err)
		return w->err;
	return cut_err;
bad:
	pr_err("trace.dat: writing %s: %s: the file is removed", w->path,
	       strerror(-err));
	free(b.p);
	if (w->out_fd >= 0)
		close(w->out_fd);
	w->out_fd = -1;
	unlink(w->path);
	return err;
}

uint64_t tdat_writer_cpu_result(const struct tdat_writer *w, int cpu,
				struct tdat_cut *cut)
{
	const struct tdat_wcpu *wc = &w->cpu[cpu];

	*cut = wc->cut;
	return wc->kept / w->page_size;
}

uint64_t tdat_writer_file_bytes(const struct tdat_writer *w)
{
	return w->file_bytes;
}

void tdat_writer_free(struct tdat_writer *w)
{
	if (!w)
		return;
	for (int i = 0; w->cpu && i < w->nr_cpus; i++)
		if (w->cpu[i].fd >= 0)
			close(w->cpu[i].fd);
	if (w->out_fd >= 0)
		close(w->out_fd);
	free(w->cpu);
	free(w->path);
	free(w);
}

void tdat_writer_abort(struct tdat_writer *w)
{
	if (!w)
		return;
	if (w->out_fd >= 0) {
		close(w->out_fd);
		w->out_fd = -1;
		unlink(w->path);
	}
	tdat_writer_free(w);
}

/* ---- reader ----------------------------------------------------------------- */

struct cur {
	const uint8_t *p;
	size_t size, pos;
	int err;
};

static bool need(struct cur *c, uint64_t n, const char *what)
{
	if (c->err)
		return false;
	if (n > c->size - c->pos) {
		pr_err("trace.dat: %s at offset %zu: needs %" PRIu64
		       " bytes, %zu left",
		       what, c->pos, n, c->size - c->pos);
		c->err = -EBADMSG;
		return false;
	}
	return true;
}

static uint64_t get(struct cur *c, unsigned int w, const char *what)
{
	uint64_t v = 0;

	if (!need(c, w, what))
		return 0;
	switch (w) {
	case 1:
		v = c->p[c->pos];
		break;
	case 2: {
		uint16_t x;

		memcpy(&x, c->p + c->pos, 2);
		v = x;
		break;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, c->p + c->pos, 4);
		v = x;
		break;
	}
	default:
		memcpy(&v, c->p + c->pos, 8);
	}
	c->pos += w;
	return v;
}

/* A NUL-terminated string inside the file. */
static const char *get_str(struct cur *c, const char *what)
{
	const uint8_t *e;
	const char *s;

	if (c->err)
		return NULL;
	e = memchr(c->p + c->pos, 0, c->size - c->pos);
	if (!e) {
		pr_err("trace.dat: %s at offset %zu: no terminating NUL", what,
		       c->pos);
		c->err = -EBADMSG;
		return NULL;
	}
	s = (const char *)c->p + c->pos;
	c->pos = (size_t)(e - c->p) + 1;
	return s;
}

static void get_blob(struct cur *c, unsigned int w, const char *what,
		     struct tdat_blob *b)
{
	uint64_t len = get(c, w, what);

	b->len = 0;
	b->data = NULL;
	if (!need(c, len, what))
		return;
	b->data = c->p + c->pos;
	b->len = (size_t)len;
	c->pos += (size_t)len;
}

static void expect(struct cur *c, const char *tag, size_t n)
{
	if (!need(c, n, tag))
		return;
	if (memcmp(c->p + c->pos, tag, n)) {
		pr_err("trace.dat: expected \"%s\" at offset %zu", tag, c->pos);
		c->err = -EBADMSG;
		return;
	}
	c->pos += n;
}

static void parse_clock(struct tdat_file *f, const uint8_t *d, size_t n)
{
	const uint8_t *o = memchr(d, '[', n), *e;
	size_t len;

	if (!o)
		return;
	e = memchr(o, ']', n - (size_t)(o - d));
	if (!e)
		return;
	len = (size_t)(e - o - 1);
	if (len >= sizeof(f->trace_clock))
		len = sizeof(f->trace_clock) - 1;
	memcpy(f->trace_clock, o + 1, len);
	f->trace_clock[len] = 0;
}

/* Keeps a buffer the reader made (a decompressed section or CPU data). */
static int own(struct tdat_file *f, void *p)
{
	void **n = realloc(f->owned, (f->nr_owned + 1) * sizeof(*n));

	if (!n) {
		free(p);
		return -ENOMEM;
	}
	f->owned = n;
	n[f->nr_owned++] = p;
	return 0;
}

static int parse_header_info(struct tdat_file *f, struct cur *c)
{
	expect(c, "header_page", 12);
	get_blob(c, 8, "header_page", &f->header_page);
	expect(c, "header_event", 13);
	get_blob(c, 8, "header_event", &f->header_event);
	return c->err;
}

static int parse_ftrace(struct tdat_file *f, struct cur *c)
{
	uint32_t n = (uint32_t)get(c, 4, "ftrace format count");

	if (c->err)
		return c->err;
	if (n > (c->size - c->pos) / 8) {
		pr_err("trace.dat: %u ftrace formats at offset %zu do not fit the file",
		       n, c->pos - 4);
		return -EBADMSG;
	}
	free(f->ftrace);
	f->ftrace = calloc(n ? n : 1, sizeof(*f->ftrace));
	if (!f->ftrace)
		return -ENOMEM;
	f->nr_ftrace = n;
	for (uint32_t i = 0; i < n; i++) {
		f->ftrace[i].name = "ftrace";
		get_blob(c, 8, "ftrace format", &f->ftrace[i]);
	}
	return c->err;
}

static int parse_systems(struct tdat_file *f, struct cur *c)
{
	uint32_t n = (uint32_t)get(c, 4, "system count");

	if (c->err)
		return c->err;
	if (n > (c->size - c->pos) / 5) {
		pr_err("trace.dat: %u systems at offset %zu do not fit the file",
		       n, c->pos - 4);
		return -EBADMSG;
	}
	for (uint32_t s = 0; s < n && !c->err; s++) {
		const char *sys = get_str(c, "system name");
		uint32_t ne = (uint32_t)get(c, 4, "event count");
		struct tdat_blob *nb;

		if (c->err)
			break;
		if (ne > (c->size - c->pos) / 8) {
			pr_err("trace.dat: %u events of %s at offset %zu do not fit the file",
			       ne, sys, c->pos - 4);
			return -EBADMSG;
		}
		nb = realloc(f->events,
			     (f->nr_events + ne + 1) * sizeof(*f->events));
		if (!nb)
			return -ENOMEM;
		f->events = nb;
		for (uint32_t i = 0; i < ne; i++) {
			struct tdat_blob *b = &f->events[f->nr_events++];

			b->name = sys;
			get_blob(c, 8, "event format", b);
		}
	}
	return c->err;
}

static bool frame_size_ok(const uint8_t *p, uint32_t csz, uint32_t usz)
{
	unsigned long long fs = ZSTD_getFrameContentSize(p, csz);

	/* trace-cmd's frames do not record their size: then only the
	 * decompression can tell. */
	return fs == ZSTD_CONTENTSIZE_UNKNOWN || fs == usz;
}

/*
 * A version 7 section at @off with id @want: @out walks its content, in
 * the file (offsets in messages are file offsets) or, compressed,
 * decompressed into a buffer the file keeps.
 */
static int section(struct tdat_file *f, uint64_t off, uint16_t want,
		   struct cur *out)
{
	struct cur c = { .p = f->map, .size = f->size };
	uint16_t id, flags;
	uint64_t sz;

	if (off > f->size) {
		pr_err("trace.dat: section offset %" PRIu64
		       " is past the end of the file (%zu bytes)",
		       off, f->size);
		return -EBADMSG;
	}
	c.pos = (size_t)off;
	id = (uint16_t)get(&c, 2, "section id");
	flags = (uint16_t)get(&c, 2, "section flags");
	get(&c, 4, "section description");
	sz = get(&c, 8, "section size");
	if (c.err)
		return c.err;
	if (id != want) {
		pr_err("trace.dat: section at offset %" PRIu64
		       " has id %u, expected %u",
		       off, id, want);
		return -EBADMSG;
	}
	if (!need(&c, sz, "section data"))
		return c.err;
	if (flags & 1) {
		uint32_t csz, usz;
		size_t r;
		void *buf;

		if (!f->compressed) {
			pr_err("trace.dat: section at offset %" PRIu64
			       " is compressed in a file without compression",
			       off);
			return -EBADMSG;
		}
		c.size = c.pos + (size_t)sz;
		csz = (uint32_t)get(&c, 4, "compressed size");
		usz = (uint32_t)get(&c, 4, "uncompressed size");
		if (!need(&c, csz, "compressed section"))
			return c.err;
		if (usz > TDAT_MAX_SECTION ||
		    !frame_size_ok(c.p + c.pos, csz, usz)) {
			pr_err("trace.dat: section at offset %" PRIu64
			       ": %u bytes uncompressed claimed, not what its zstd frame holds",
			       off, usz);
			return -EBADMSG;
		}
		buf = malloc(usz ? usz : 1);
		if (!buf || own(f, buf))
			return -ENOMEM;
		r = ZSTD_decompress(buf, usz, c.p + c.pos, csz);
		if (ZSTD_isError(r) || r != usz) {
			pr_err("trace.dat: section at offset %" PRIu64
			       " does not decompress to %u bytes (%s)",
			       off, usz,
			       ZSTD_isError(r) ? ZSTD_getErrorName(r) :
						 "short");
			return -EBADMSG;
		}
		*out = (struct cur){ .p = buf, .size = usz };
		return 0;
	}
	*out = (struct cur){ .p = f->map,
			     .size = c.pos + (size_t)sz,
			     .pos = c.pos };
	return 0;
}

/* CPU data of a compressed file: chunks of { u32 csize, u32 usize, data }. */

/* CPU data of a compressed file: u32 count, then chunks of { u32 csize,
 * u32 usize, data }, decompressed one after the other into a buffer that
 * grows only by what did decompress. */
static int cpu_chunks(struct tdat_file *f, uint32_t cpu)
{
	struct tdat_cpu *tc = &f->cpus[cpu];
	/* trace-cmd 3.1 records the size after the u32 chunk count. */
	uint64_t end = tc->offset + tc->size + 4 < f->size ?
			       tc->offset + tc->size + 4 :
			       f->size;
	struct cur c = { .p = f->map,
			 .size = (size_t)end,
			 .pos = (size_t)tc->offset };
	uint32_t n = (uint32_t)get(&c, 4, "chunk count");
	size_t total = 0, cap = 0;
	uint8_t *buf = NULL, *nb;
	int err;

	if (c.err)
		return c.err;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t csz = (uint32_t)get(&c, 4, "chunk compressed size");
		uint32_t usz = (uint32_t)get(&c, 4, "chunk size");
		size_t r;

		if (!need(&c, csz, "chunk data")) {
			err = c.err;
			goto fail;
		}
		if (usz > TDAT_MAX_CHUNK ||
		    !frame_size_ok(c.p + c.pos, csz, usz) ||
		    total + usz > TDAT_MAX_CPU_DATA) {
			pr_err("trace.dat: cpu%u chunk at offset %zu: %u bytes claimed, not what it holds or too many",
			       cpu, c.pos - 8, usz);
			err = -EBADMSG;
			goto fail;
		}
		if (total + usz > cap) {
			cap = (total + usz) * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		r = ZSTD_decompress(buf + total, usz, c.p + c.pos, csz);
		if (ZSTD_isError(r) || r != usz) {
			pr_err("trace.dat: cpu%u chunk at offset %zu does not decompress to %u bytes",
			       cpu, c.pos - 8, usz);
			err = -EBADMSG;
			goto fail;
		}
		c.pos += csz;
		total += usz;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	err = own(f, buf);
	if (err)
		return err;
	tc->data = buf;
	tc->size = total;
	return 0;
fail:
	free(buf);
	return err;
}

/* Options (both versions): the ones the reader uses. */
static int parse_options(struct tdat_file *f, struct cur *c, uint64_t *next,
			 uint64_t sec[22], const uint8_t **buffer,
			 uint32_t *buffer_len)
{
	*next = 0;
	for (;;) {
		uint16_t id;
		uint32_t sz;
		size_t at;

		if (f->version == 7 && c->pos == c->size)
			return 0; /* a section may end without DONE */
		id = (uint16_t)get(c, 2, "option id");
		if (c->err)
			return c->err;
		if (id == TDAT_OPT_DONE && f->version == 6)
			return 0;
		sz = (uint32_t)get(c, 4, "option size");
		if (!need(c, sz, "option data"))
			return c->err;
		at = c->pos;
		c->pos += sz;
		if (id == TDAT_OPT_DONE) {
			if (sz >= 8)
				memcpy(next, c->p + at, 8);
			return 0;
		}
		if (id == TDAT_OPT_TRACECLOCK)
			parse_clock(f, c->p + at, sz);
		if (id == TDAT_OPT_CPUCOUNT && sz >= 4) {
			memcpy(&f->cpucount, c->p + at, 4);
			f->have_cpucount = true;
		}
		if (id >= 16 && id <= 21 && sz >= 8)
			memcpy(&sec[id], c->p + at, 8);
		/* The top instance's buffer (name ""), else the first. */
		if (id == TDAT_OPT_BUFFER && sz > 9 &&
		    (!*buffer || c->p[at + 8] == 0)) {
			*buffer = c->p + at;
			*buffer_len = sz;
		}
	}
}

/* BUFFER: u64 section, name, clock, [u32 page size,] u32 n, n x
 * { u32 cpu, u64 offset, u64 size }. */
static int parse_buffer(struct tdat_file *f, const uint8_t *d, uint32_t len)
{
	struct cur c = { .p = d, .size = len };
	const char *clock;
	uint32_t n, max = 0;
	size_t left;

	get(&c, 8, "buffer section");
	get_str(&c, "buffer name");
	clock = get_str(&c, "buffer clock");
	if (c.err)
		return c.err;
	if (!f->trace_clock[0] && strlen(clock) < sizeof(f->trace_clock))
		strcpy(f->trace_clock, clock);
	left = c.size - c.pos;
	if (left >= 8 && (left - 8) % 20 == 0) {
		uint32_t ps = (uint32_t)get(&c, 4, "buffer page size");

		if (ps != f->page_size) {
			pr_err("trace.dat: buffer page size %u differs from the file's %u",
			       ps, f->page_size);
			return -EBADMSG;
		}
	}
	n = (uint32_t)get(&c, 4, "buffer cpu count");
	if (c.err)
		return c.err;
	if (n > TDAT_MAX_CPUS || n > (c.size - c.pos) / 20) {
		pr_err("trace.dat: buffer option with %u CPUs does not fit", n);
		return -EBADMSG;
	}
	f->nr_cpus = f->have_cpucount && f->cpucount <= TDAT_MAX_CPUS &&
				     f->cpucount > 0 ?
			     f->cpucount :
			     1;
	for (uint32_t i = 0, p = (uint32_t)c.pos; i < n; i++, p += 20) {
		uint32_t cpu;

		memcpy(&cpu, d + p, 4);
		if (cpu >= TDAT_MAX_CPUS) {
			pr_err("trace.dat: buffer option names cpu %u", cpu);
			return -EBADMSG;
		}
		if (cpu + 1 > max)
			max = cpu + 1;
	}
	if (max > f->nr_cpus)
		f->nr_cpus = max;
	f->cpus = calloc(f->nr_cpus, sizeof(*f->cpus));
	if (!f->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cpu = (uint32_t)get(&c, 4, "cpu id");
		uint64_t off = get(&c, 8, "cpu data offset");
		uint64_t sz = get(&c, 8, "cpu data size");

		if (c.err)
			return c.err;
		f->cpus[cpu].offset = off;
		f->cpus[cpu].size = sz;
	}
	return 0;
}

static int check_cpus(struct tdat_file *f)
{
	for (uint32_t i = 0; i < f->nr_cpus; i++) {
		struct tdat_cpu *tc = &f->cpus[i];
		int err;

		if (!tc->size)
			continue;
		if (tc->offset > f->size || tc->size > f->size - tc->offset) {
			pr_err("trace.dat: cpu%u data (%" PRIu64
			       " bytes at %" PRIu64
			       ") is past the end of the file (%zu bytes)",
			       i, tc->size, tc->offset, f->size);
			return -EBADMSG;
		}
		tc->data = f->map + tc->offset;
		if (f->compressed) {
			err = cpu_chunks(f, i);
			if (err)
				return err;
		}
	}
	return 0;
}

static int parse_v7(struct tdat_file *f, struct cur *c)
{
	const char *comp = get_str(c, "compression name");
	const uint8_t *buffer = NULL;
	uint64_t sec[22] = { 0 }, off;
	uint32_t buffer_len = 0;
	struct cur s;
	int err, n = 0;

	get_str(c, "compression version");
	off = get(c, 8, "options offset");
	if (c->err)
		return c->err;
	if (strcmp(comp, "none") && strcmp(comp, "zstd")) {
		pr_err("trace.dat: compression %s is not supported (none, zstd)",
		       comp);
		return -EPROTO;
	}
	f->compressed = strcmp(comp, "none") != 0;
	f->options_offset = off;
	while (off) {
		if (++n > 64) {
			pr_err("trace.dat: more than 64 options sections (a loop?)");
			return -EBADMSG;
		}
		err = section(f, off, 0, &s);
		if (!err)
			err = parse_options(f, &s, &off, sec, &buffer,
					    &buffer_len);
		if (err)
			return err;
	}
	if (!sec[16] || !buffer) {
		pr_err("trace.dat: version 7 file without %s",
		       !sec[16] ? "a header info section" : "a BUFFER option");
		return -EBADMSG;
	}
	err = section(f, sec[16], 16, &s);
	if (!err)
		err = parse_header_info(f, &s);
	if (!err && sec[17] && !(err = section(f, sec[17], 17, &s)))
		err = parse_ftrace(f, &s);
	if (!err && sec[18] && !(err = section(f, sec[18], 18, &s)))
		err = parse_systems(f, &s);
	if (!err && sec[19] && !(err = section(f, sec[19], 19, &s))) {
		get_blob(&s, 4, "kallsyms", &f->kallsyms);
		err = s.err;
	}
	if (!err && sec[20] && !(err = section(f, sec[20], 20, &s))) {
		get_blob(&s, 4, "printk formats", &f->printk);
		err = s.err;
	}
	if (!err && sec[21] && !(err = section(f, sec[21], 21, &s))) {
		get_blob(&s, 8, "saved cmdlines", &f->cmdlines);
		err = s.err;
	}
	if (!err)
		err = parse_buffer(f, buffer, buffer_len);
	if (!err)
		err = check_cpus(f);
	return err;
}

static int parse(struct tdat_file *f)
{
	struct cur c = { .p = f->map, .size = f->size };
	uint64_t next, sec[22];
	const uint8_t *buffer = NULL;
	uint32_t buffer_len;
	const char *ver;
	int err;

	expect(&c, TDAT_MAGIC, TDAT_MAGIC_LEN);
	ver = get_str(&c, "version");
	if (c.err)
		return c.err;
	f->version = atoi(ver);
	if (f->version != 6 && f->version != 7) {
		pr_err("trace.dat: version %s is not supported (6 and 7 are)",
		       ver);
		return -EPROTO;
	}
	if (get(&c, 1, "endian byte") != 0 || c.err) {
		if (!c.err)
			pr_err("trace.dat: big-endian file (offset %zu): not supported",
			       c.pos - 1);
		return c.err ? c.err : -EPROTO;
	}
	f->long_size = (int)get(&c, 1, "long size");
	if (!c.err && f->long_size != 8) {
		pr_err("trace.dat: long size %d at offset %zu: only 8 is supported",
		       f->long_size, c.pos - 1);
		return -EPROTO;
	}
	f->page_size = (uint32_t)get(&c, 4, "page size");
	if (!c.err && (f->page_size < 64 || f->page_size > TDAT_MAX_PAGE)) {
		pr_err("trace.dat: page size %u at offset %zu out of range",
		       f->page_size, c.pos - 4);
		return -EBADMSG;
	}
	if (c.err)
		return c.err;
	if (f->version == 7)
		return parse_v7(f, &c);
	err = parse_header_info(f, &c);
	if (!err)
		err = parse_ftrace(f, &c);
	if (!err)
		err = parse_systems(f, &c);
	if (err)
		return err;
	get_blob(&c, 4, "kallsyms", &f->kallsyms);
	get_blob(&c, 4, "printk formats", &f->printk);
	get_blob(&c, 8, "saved cmdlines", &f->cmdlines);
	f->nr_cpus = (uint32_t)get(&c, 4, "cpu count");
	if (c.err)
		return c.err;
	if (f->nr_cpus == 0 || f->nr_cpus > TDAT_MAX_CPUS) {
		pr_err("trace.dat: cpu count %u at offset %zu out of range",
		       f->nr_cpus, c.pos - 4);
		return -EBADMSG;
	}
	f->options_offset = c.pos;
	expect(&c, "options  ", 10);
	err = parse_options(f, &c, &next, sec, &buffer, &buffer_len);
	if (err)
		return err;
	f->data_offset = c.pos;
	if (need(&c, 10, "data kind") &&
	    !memcmp(c.p + c.pos, "latency  ", 10)) {
		pr_err("trace.dat: latency-format data at offset %zu is not supported",
		       c.pos);
		return -EPROTO;
	}
	expect(&c, "flyrecord", 10);
	if (c.err)
		return c.err;
	if (f->nr_cpus > (c.size - c.pos) / 16) {
		pr_err("trace.dat: %u cpu entries at offset %zu do not fit the file",
		       f->nr_cpus, c.pos);
		return -EBADMSG;
	}
	f->cpus = calloc(f->nr_cpus, sizeof(*f->cpus));
	if (!f->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->nr_cpus; i++) {
		f->cpus[i].offset = get(&c, 8, "cpu data offset");
		f->cpus[i].size = get(&c, 8, "cpu data size");
		if (c.err)
			return c.err;
	}
	return check_cpus(f);
}

int tdat_open_mem(const void *buf, size_t size, struct tdat_file **out)
{
	struct tdat_file *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->map = buf;
	f->size = size;
	err = parse(f);
	if (err) {
		f->map = NULL;
		tdat_close(f);
		return err;
	}
	*out = f;
	return 0;
}

int tdat_open(const char *path, struct tdat_file **out)
{
	struct stat st;
	void *p;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		err = S_ISREG(st.st_mode) ? -EBADMSG : -EINVAL;
		if (err == -EBADMSG)
			pr_err("trace.dat: %s is empty", path);
		close(fd);
		return err;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	err = tdat_open_mem(p, (size_t)st.st_size, out);
	if (err) {
		munmap(p, (size_t)st.st_size);
		return err;
	}
	(*out)->owned_map = true;
	return 0;
}

void tdat_close(struct tdat_file *f)
{
	if (!f)
		return;
	if (f->map && f->owned_map)
		munmap((void *)f->map, f->size);
	free(f->ftrace);
	free(f->events);
	free(f->cpus);
	for (size_t i = 0; i < f->nr_owned; i++)
		free(f->owned[i]);
	free(f->owned);
	free(f);
}

int tdat_probe(const char *path)
{
	char buf[TDAT_MAGIC_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf));
	close(fd);
	return r == (ssize_t)sizeof(buf) &&
	       !memcmp(buf, TDAT_MAGIC, sizeof(buf));
}
