// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the readers and the attach checks against hostile shared
 * memory and hostile ring files.
 *
 * One input is used two ways:
 *
 *  (a) As the state of a 4 KiB ring's shared memory: bytes 0..7 are
 *      data_head, 8..15 data_tail (where the consumer starts), the rest the
 *      data area (zero-filled past the input).  They are stored through a
 *      separate mapping of perfring_ring_fd(), as a hostile producer would,
 *      and the forward reader runs three ways (reader_next walk, a few
 *      records then reader_range, perfring_ring_consume); then the same
 *      words and bytes go into an overwrite-mode ring and the overwrite
 *      reader runs.
 *  (b) As a ring FILE: written into a directory made once, then
 *      perfring_ring_attachat() as consumer and perfring_ring_attach() as
 *      producer, which must refuse anything malformed cleanly; what they
 *      accept is read (and written); multi-producer files also go through
 *      perfring_ring_skip_dead() (hostile commit slots).
 *  (c) As the commit slots and data of a gathered multi-producer ring
 *      (docs/design.md, section 3 ("Gathered commits")): each 8 bytes from 16 on become a slot,
 *      either as they are or as an end near the consumer (so that chains
 *      of "commits" form), and the same bytes are the data; the consumer
 *      gathers and reads.
 *  (d) As in (a), read by a consumer with copied reads
 *      (perfring__ring_copy_reads(), docs/design.md section 6): records
 *      come from its private chunk, with the same oracles but the mapping
 *      check, and reader_range hands the batch out one piece per call.
 *
 * Oracles besides the sanitizers: reader_begin never reports more than a
 * ring; every record handed out is 8-aligned in size, >= 8 bytes, equal to
 * its header's size (nothing writes concurrently here), inside the data
 * mapping, and the records of a batch add up to at most what was announced
 * (exactly that when the walk ends cleanly).  Every byte handed out is read.
 *
 * The rings are made once and reused; the consumer is put back at
 * data_tail before each run through the public API only (see set_pos()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfring.h"
#include "ring/private.h"
#include "ring/private.h"

#define RING_DATA 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fring {
	struct perfring_ring *ring;
	struct perf_event_mmap_page *pc; /* our own writable view */
	unsigned char *data; /* data area through our view */
	const unsigned char *lib_data; /* data area as the library maps it */
	uint64_t size;
};

static struct fring fwd, ow, mp, cpy;
static size_t page_size;
static char dir[64], file_path[128], wake_path[160];
static volatile uint64_t sink;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_ring: %s\n", what);
	abort();
}

#define ORACLE(cond)                                  \
	do {                                          \
		if (!(cond))                          \
			die("oracle failed: " #cond); \
	} while (0)

static void discard_log(enum perfring_log_level level, const char *msg,
			void *ctx)
{
	(void)level;
	(void)ctx;
	sink += (unsigned char)msg[0]; /* the message was formatted */
}

static void cleanup(void)
{
	perfring_ring_destroy(fwd.ring);
	perfring_ring_destroy(ow.ring);
	perfring_ring_destroy(mp.ring);
	perfring_ring_destroy(cpy.ring);
	fwd.ring = ow.ring = mp.ring = cpy.ring = NULL;
	if (file_path[0])
		unlink(file_path);
	if (wake_path[0])
		unlink(wake_path);
	if (dir[0])
		rmdir(dir);
}

static void fring_make(struct fring *f, unsigned int flags)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = RING_DATA,
		      .flags = flags, .role = PERFRING_ROLE_BOTH, .id = 7);
	void *m;

	if (perfring_ring_create(&o, &f->ring))
		die("perfring_ring_create");
	f->size = perfring_ring_data_size(f->ring);
	/* With the commit slots after the data (multi-producer rings). */
	m = mmap(NULL,
		 page_size +
			 f->size *
				 (flags & PERFRING_MODE_MULTI_PRODUCER ? 2 : 1),
		 PROT_READ | PROT_WRITE, MAP_SHARED, perfring_ring_fd(f->ring),
		 0);
	if (m == MAP_FAILED)
		die("mmap of perfring_ring_fd()");
	f->pc = m;
	f->data = (unsigned char *)m + page_size;
	f->lib_data = (const unsigned char *)perfring_ring_control(f->ring) +
		      page_size;
}

static void setup(void)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	perfring_set_log(discard_log, NULL, PERFRING_LOG_DEBUG);
	fring_make(&fwd, 0);
	fring_make(&ow, PERFRING_MODE_OVERWRITE);
	fring_make(&mp, PERFRING_MODE_MULTI_PRODUCER);
	fring_make(&cpy, 0);
	if (perfring__ring_copy_reads(cpy.ring, PERFRING_RECORD_MAX))
		die("perfring__ring_copy_reads");
	/*
	 * One directory per process, on tmpfs if there is one (the file is
	 * rewritten for every input).  It exists only while an input runs
	 * (see file_dir()): libFuzzer may end without running atexit().
	 */
	snprintf(dir, sizeof(dir), "/dev/shm/perfring-fuzz-%ld",
		 (long)getpid());
	if (mkdir(dir, 0700) && errno != EEXIST)
		snprintf(dir, sizeof(dir), "/tmp/perfring-fuzz-%ld",
			 (long)getpid());
	else
		rmdir(dir);
	snprintf(file_path, sizeof(file_path), "%s/ring", dir);
	snprintf(wake_path, sizeof(wake_path), "%s.wake", file_path);
	atexit(cleanup);
}

/* Makes (@make) or removes the ring file's directory and wake-up FIFO. */
static void file_dir(bool make)
{
	unlink(file_path);
	unlink(wake_path);
	if (!make) {
		rmdir(dir);
		return;
	}
	if (mkdir(dir, 0700) && errno != EEXIST)
		die("mkdir");
	if (mkfifo(wake_path, 0600))
		die("mkfifo");
}

static uint64_t get64(const uint8_t *p, size_t size, size_t off)
{
	uint64_t v = 0;

	if (off + 8 <= size)
		memcpy(&v, p + off, 8);
	return v;
}

static void set_head(struct fring *f, uint64_t head)
{
	__atomic_store_n(&f->pc->data_head, head, __ATOMIC_RELEASE);
}

/*
 * The header's size, read without assuming alignment: hostile counters
 * that are not multiples of 8 make the library hand out unaligned records
 * (reported as a library issue; FUZZ_CHECK_ALIGN turns it into a crash).
 */
static unsigned int hdr_size(const void *rec)
{
	struct perf_event_header h;

#ifdef FUZZ_CHECK_ALIGN
	ORACLE(((uintptr_t)rec & 7) == 0);
#endif
	memcpy(&h, rec, sizeof(h));
	return h.size;
}

/* Reads every byte of what the reader handed out. */
static void touch(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < len; i++)
		s = s * 31 + b[i];
	sink += s;
}

/* A forward ring hands out pointers into its double mapping. */
static void check_in_mapping(const struct fring *f, const void *p, size_t len)
{
	const unsigned char *b = p;

	ORACLE(b >= f->lib_data && len <= 2 * f->size &&
	       b + len <= f->lib_data + 2 * f->size);
}

/*
 * Puts the forward consumer at @tail with public calls only: whatever its
 * position, a batch at X that is read to the end (reader_range) or refused
 * as out of range (-EBADMSG: resynchronise at data_head) leaves it at X;
 * then X + 2 rings is never within one ring of @tail, so the second batch
 * is refused and leaves it at @tail.
 */
static void set_pos(struct fring *f, uint64_t tail)
{
	uint64_t x = tail + 2 * f->size;
	const void *ptr[2];
	size_t len[2];

	set_head(f, x);
	if (perfring_read_begin(f->ring) >= 0) {
		while (perfring_read_range(f->ring, ptr, len) > 0)
			; /* a copied batch comes a chunk per call */
		perfring_read_end(f->ring);
	}
	set_head(f, tail);
	if (perfring_read_begin(f->ring) >= 0) {
		while (perfring_read_range(f->ring, ptr, len) > 0)
			;
		perfring_read_end(f->ring);
	}
}

/* reader_next until the end or an error; returns bytes walked. */
static uint64_t walk(struct fring *f, int max_records, bool in_mapping,
		     int *last)
{
	const struct perf_event_header *rec;
	uint64_t seen = 0;
	int sz = 0;

	for (int i = 0; max_records < 0 || i < max_records; i++) {
		sz = perfring_read_next(f->ring, &rec);
		if (sz <= 0)
			break;
		ORACLE(sz >= 8 && sz % 8 == 0);
		ORACLE((unsigned int)sz == hdr_size(rec));
		if (in_mapping)
			check_in_mapping(f, rec, (size_t)sz);
		touch(rec, (size_t)sz);
		seen += (uint64_t)sz;
	}
	*last = sz;
	return seen;
}

/* perfring__read_peek() spans walked header by header as the recorder
 * does (app_session_convert.c), each stop handed to read_next; returns the
 * bytes walked, *last the final read_next's return. */
static uint64_t peek_walk(struct fring *f, bool in_mapping, int *last)
{
	const struct perf_event_header *rec;
	uint64_t seen = 0;
	int sz;

	for (;;) {
		const unsigned char *p;
		const uint32_t *dead;
		size_t span = perfring__read_peek(f->ring, &p, &dead), off = 0;

		if (span && in_mapping)
			check_in_mapping(f, p, span);
		while (span - off >= 8) {
			struct perf_event_header h;

			memcpy(&h, p + off, sizeof(h));
			if (h.size < 8 || (h.size & 7) || h.size > span - off)
				break;
			touch(p + off, h.size);
			off += h.size;
		}
		ORACLE(!dead || !span || *dead == 0);
		perfring__read_skip(f->ring, off);
		seen += off;
		sz = perfring_read_next(f->ring, &rec);
		if (sz <= 0)
			break;
		ORACLE(sz >= 8 && sz % 8 == 0);
		ORACLE((unsigned int)sz == hdr_size(rec));
		touch(rec, (size_t)sz);
		seen += (uint64_t)sz;
	}
	*last = sz;
	return seen;
}

static int consume_cb(const struct perf_event_header *rec, size_t size,
		      void *ctx)
{
	uint64_t *bytes = ctx;

	ORACLE(size >= 8 && size % 8 == 0 && size == hdr_size(rec));
	check_in_mapping(&fwd, rec, size);
	touch(rec, size);
	*bytes += size;
	return 0;
}

static void forward_runs(struct fring *f, uint64_t head, uint64_t tail,
			 unsigned int sel)
{
	bool copied = f == &cpy;

	for (int mode = 0; mode < 4; mode++) {
		int64_t avail;
		uint64_t seen = 0;
		int last;

		set_pos(f, tail);
		set_head(f, head);
		if (mode == 2 && !copied) {
			int n = perfring_ring_consume(f->ring, consume_cb,
						      &seen);

			ORACLE(n >= 0 || n == -EBADMSG);
			ORACLE(seen <= f->size);
			continue;
		}
		avail = perfring_read_begin(f->ring);
		if (avail < 0) {
			ORACLE(avail == -EBADMSG);
			continue;
		}
		ORACLE((uint64_t)avail <= f->size);
		if (mode == 3) {
			/* the recorder's block walk: spans walked by their
			 * headers, the rest record by record */
			seen = peek_walk(f, !copied, &last);
			ORACLE(last == 0 || last == -EBADMSG);
			ORACLE(seen <= (uint64_t)avail);
			if (last == 0)
				ORACLE(seen == (uint64_t)avail);
		} else if (mode != 1) {
			seen = walk(f, -1, !copied, &last);
			ORACLE(last == 0 || last == -EBADMSG);
			ORACLE(seen <= (uint64_t)avail);
			if (last == 0)
				ORACLE(seen == (uint64_t)avail);
		} else {
			const void *ptr[2];
			size_t len[2];
			int pieces;

			seen = walk(f, (int)(sel % 4), !copied, &last);
			do {
				pieces = perfring_read_range(f->ring, ptr, len);
				ORACLE(pieces >= 0 && pieces <= 2);
				ORACLE(!copied || pieces <= 1);
				for (int i = 0; i < pieces; i++) {
					if (!copied)
						check_in_mapping(f, ptr[i],
								 len[i]);
					touch(ptr[i], len[i]);
					seen += len[i];
				}
			} while (copied && pieces > 0);
			ORACLE(seen <= (uint64_t)avail);
			if (last >= 0)
				ORACLE(seen == (uint64_t)avail);
		}
		perfring_read_end(f->ring);
	}
}

static void overwrite_run(uint64_t head, uint64_t prev_head, unsigned int sel)
{
	int64_t n;
	uint64_t seen = 0;
	int last;

	/* The overwrite reader's position is the previous batch's head. */
	set_head(&ow, prev_head);
	if (perfring_read_begin(ow.ring) >= 0)
		perfring_read_end(ow.ring);
	set_head(&ow, head);
	n = perfring_read_begin(ow.ring);
	if (n < 0) {
		ORACLE(n != -EBUSY && n != -EINVAL);
		return;
	}
	ORACLE((uint64_t)n <= ow.size);
	if (sel & 4) {
		const void *ptr[2];
		size_t len[2];
		int pieces = perfring_read_range(ow.ring, ptr, len);

		ORACLE(pieces == (n ? 1 : 0));
		if (pieces) {
			ORACLE(len[0] == (size_t)n);
			touch(ptr[0], len[0]);
		}
	} else {
		seen = walk(&ow, -1, false, &last);
		ORACLE(last == 0 || last == -EBADMSG);
		ORACLE(seen <= (uint64_t)n);
	}
	perfring_read_end(ow.ring);
}

/* (c): hostile slots of a gathered multi-producer ring. */
static void gather_run(const uint8_t *data, size_t size)
{
	uint64_t *slots = (uint64_t *)(void *)(mp.data + mp.size);
	uint64_t tail = __atomic_load_n(&mp.pc->data_tail, __ATOMIC_ACQUIRE);
	int64_t n;
	uint64_t seen;
	int last;

	for (size_t i = 0; i < mp.size / 8; i++) {
		uint64_t v = get64(data, size, 16 + 8 * i);

		slots[i] = (v & 1) ? v : tail + ((v >> 1) % (2 * mp.size));
	}
	memset(mp.data, 0, mp.size);
	if (size > 16)
		memcpy(mp.data, data + 16,
		       size - 16 < mp.size ? size - 16 : mp.size);
	n = perfring_read_begin(mp.ring);
	if (n < 0) {
		ORACLE(n == -EBADMSG);
		return;
	}
	ORACLE((uint64_t)n <= mp.size);
	seen = walk(&mp, -1, true, &last);
	ORACLE(last == 0 || last == -EBADMSG);
	ORACLE(seen <= (uint64_t)n);
	perfring_read_end(mp.ring);
	ORACLE(perfring_ring_wait_prepare(mp.ring) >= 0);
	perfring_ring_wait_finish(mp.ring);
}

/* (b): the input as a ring file. */
static bool write_file(const uint8_t *data, size_t size)
{
	int fd =
		open(file_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd < 0)
		die("open ring file");
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0)
			die("write ring file");
		off += (size_t)w;
	}
	close(fd);
	return true;
}

static int file_cb(const struct perf_event_header *rec, size_t size, void *ctx)
{
	(void)ctx;
	ORACLE(size >= 8 && size % 8 == 0 && size == hdr_size(rec));
	touch(rec, size);
	return 0;
}

static void file_runs_in_dir(const uint8_t *data, size_t size)
{
	struct perfring_ring *r;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	uint32_t flags = 0;
	uint64_t wseq = 0;
	int err;

	write_file(data, size);
	/* Where perfring_ext says the mode and the overwrite seqcount are. */
	if (size >= PERFRING_EXT_OFFSET + sizeof(struct perfring_ext)) {
		memcpy(&flags,
		       data + PERFRING_EXT_OFFSET +
			       offsetof(struct perfring_ext, flags),
		       sizeof(flags));
		memcpy(&wseq,
		       data + PERFRING_EXT_OFFSET +
			       offsetof(struct perfring_ext, write_seq),
		       sizeof(wseq));
	}

	{
		/* The consumer through a directory descriptor, as a recorder
		 * attaches a program's rings. */
		int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0)
			die("open dir");
		err = perfring_ring_attachat(
			dfd, "ring", PERFRING_ROLE_CONSUMER, (uid_t)-1, &r);
		close(dfd);
	}
	if (err) {
		ORACLE(err < 0 && !r);
	} else {
		uint64_t dsize = perfring_ring_data_size(r);

		ORACLE(perfring_ring_stats(r, &st) == 0);
		ORACLE(st.data_size == dsize);
		ORACLE(perfring_ring_check(r) == 0);
		/* Hostile slots and reservation head: bounded, in bounds. */
		if (flags & PERFRING_MODE_MULTI_PRODUCER) {
			int64_t k = perfring_ring_skip_dead(r);

			ORACLE((k >= 0 && (uint64_t)k <= dsize / 8) ||
			       k == -EBADMSG);
		}
		/*
		 * An odd write_seq reads as a writer in the middle of a record:
		 * the overwrite reader waits 200 ms for it before giving up,
		 * which is correct but too slow to fuzz.
		 */
		if (!((flags & PERFRING_MODE_OVERWRITE) && (wseq & 1))) {
			int64_t n = perfring_read_begin(r);
			int nrec;

			ORACLE(n < 0 || (uint64_t)n <= dsize);
			if (n >= 0) {
				const struct perf_event_header *rec;
				int sz;

				while ((sz = perfring_read_next(r, &rec)) > 0) {
					ORACLE(sz % 8 == 0 &&
					       (unsigned int)sz ==
						       hdr_size(rec));
					touch(rec, (size_t)sz);
				}
				perfring_read_end(r);
			}
			nrec = perfring_ring_consume(r, file_cb, NULL);
			ORACLE(nrec >= 0 || nrec == -EBADMSG ||
			       nrec == -ENOMEM);
		}
		ORACLE(perfring_ring_wait_prepare(r) >= 0);
		perfring_ring_wait_finish(r);
		perfring_ring_destroy(r);
	}

	err = perfring_ring_attach(file_path, PERFRING_ROLE_PRODUCER, &r);
	if (err) {
		ORACLE(err < 0 && !r);
		return;
	}
	for (int i = 0; i < 3; i++) {
		_Alignas(8) unsigned char rec[64] = { 0 };
		struct perf_event_header *h = (void *)rec;
		struct perfring_output o;

		h->type = 0x4e00;
		h->size = (uint16_t)(16 + 16 * i);
		err = perfring_ring_emit(r, rec, h->size);
		ORACLE(err == 0 || err == -ENOSPC || err == -EAGAIN);
		err = perfring_output_begin(&o, r, 24);
		ORACLE(err == 0 || err == -ENOSPC || err == -EAGAIN);
		if (!err) {
			struct perf_event_header oh = { .type = 0x4e01,
							.size = 24 };

			memset(o.data, 0, 24);
			memcpy(o.data, &oh, sizeof(oh)); /* may be unaligned */
			perfring_output_end(&o);
		}
	}
	perfring_ring_flush(r);
	ORACLE(perfring_ring_stats(r, &st) == 0);
	perfring_ring_destroy(r);
}

static void file_runs(const uint8_t *data, size_t size)
{
	file_dir(true);
	file_runs_in_dir(data, size);
	file_dir(false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t head, tail;
	size_t n;
	unsigned int sel;

	if (!fwd.ring)
		setup();
	head = get64(data, size, 0);
	tail = get64(data, size, 8);
	n = size > 16 ? size - 16 : 0;
	if (n > RING_DATA)
		n = RING_DATA;
	sel = size > 16 ? data[16] : 0;

	/* (a) forward ring. */
	if (n)
		memcpy(fwd.data, data + 16, n);
	memset(fwd.data + n, 0, RING_DATA - n);
	forward_runs(&fwd, head, tail, sel);

	/* (d) the same, read by a consumer with copied reads. */
	if (n)
		memcpy(cpy.data, data + 16, n);
	memset(cpy.data + n, 0, RING_DATA - n);
	forward_runs(&cpy, head, tail, sel);

	/* (a) overwrite ring: same bytes, head, and the previous head. */
	if (n)
		memcpy(ow.data, data + 16, n);
	memset(ow.data + n, 0, RING_DATA - n);
	overwrite_run(head, tail, sel);

	/* (c) gathered multi-producer ring. */
	gather_run(data, size);

	/* (b) the input as a ring file. */
	file_runs(data, size);
	return 0;
}
