/* SPDX-License-Identifier: MIT */
/*
 * perfring: the Linux perf ring-buffer design as a library -- libperfring
 * (`pkg-config --cflags --libs perfring`), what a program links to trace
 * itself or to share rings: rings (create, attach, produce, consume, wake
 * up), AUX areas, sub-buffer rings, the clock and application events.
 * libc only.  Recording, readers, reports and exports are in
 * <perfring/tools.h> (libperfring-tools).
 *
 * Conventions: functions return int >= 0 on success (a count where it says
 * so) or -errno on failure; handles are opaque; the library never prints
 * (install a log callback with perfring_set_log()).  The wire layout shared
 * with other processes and the kernel is in <perfring/abi.h>.
 */
#ifndef PERFRING_H
#define PERFRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <perfring/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PERFRING_BUILD)
#define PERFRING_API __attribute__((visibility("default")))
#else
#define PERFRING_API
#endif

/* ---- version ---------------------------------------------------------- */

#define PERFRING_VERSION_MAJOR 0
#define PERFRING_VERSION_MINOR 2
#define PERFRING_VERSION_PATCH 0

/* Returns the library's version as "MAJOR.MINOR.PATCH". */
PERFRING_API const char *perfring_version(void);

/* ---- log -------------------------------------------------------------- */

enum perfring_log_level {
	PERFRING_LOG_ERROR = 0,
	PERFRING_LOG_WARN = 1,
	PERFRING_LOG_INFO = 2,
	PERFRING_LOG_DEBUG = 3,
};

typedef void (*perfring_log_fn)(enum perfring_log_level level, const char *msg,
				void *ctx);

/*
 * Installs the callback that receives the library's messages up to @max
 * level (NULL silences the library, the default).  Process-wide.
 */
PERFRING_API void perfring_set_log(perfring_log_fn fn, void *ctx,
				   enum perfring_log_level max);

/* ---- options ---------------------------------------------------------- */

/* Declares opts struct NAME of TYPE with .sz set and the given fields. */
#define PERFRING_OPTS(TYPE, NAME, ...) \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/* ---- ring ------------------------------------------------------------- */

struct perfring_ring;

/* Which side(s) a handle acts as; a ring has one consumer. */
enum perfring_role {
	PERFRING_ROLE_PRODUCER = 1,
	PERFRING_ROLE_CONSUMER = 2,
	PERFRING_ROLE_BOTH = 3,
};

struct perfring_ring_opts {
	size_t sz; /* sizeof(struct perfring_ring_opts) */
	/* Named ring file to create (0600, O_EXCL|O_NOFOLLOW); NULL: memfd. */
	const char *path;
	/* Data area bytes: a power of two, at least one page (default 1 MiB). */
	uint64_t data_size;
	/* PERFRING_MODE_OVERWRITE, PERFRING_MODE_MULTI_PRODUCER. */
	unsigned int flags;
	/* Roles this handle takes (default PERFRING_ROLE_BOTH). */
	enum perfring_role role;
	/* Wake the consumer when this many bytes wait (default data_size/2). */
	uint64_t watermark;
	/* If nonzero, wake every wakeup_events records instead. */
	uint32_t wakeup_events;
	/* Id written into PERF_RECORD_LOST records. */
	uint64_t id;
	/* Initial value of the head/tail counters, a multiple of 8 (default 0). */
	uint64_t start;
};

/*
 * Creates a ring and maps it.  Errors: -EINVAL (bad size or flags),
 * -EEXIST (path exists), -errno from memfd/open/mmap.
 */
PERFRING_API int perfring_ring_create(const struct perfring_ring_opts *opts,
				      struct perfring_ring **out);

/*
 * Attaches to the named ring at @path as @role.  The file's size, layout and
 * ABI version are checked first; anything else is refused with -EINVAL or
 * -EPROTO and a log message saying what is wrong.  -EBUSY: the ring already
 * has a live handle in that role.
 */
PERFRING_API int perfring_ring_attach(const char *path, enum perfring_role role,
				      struct perfring_ring **out);

/*
 * Attaches to the ring @name in the directory @dirfd (AT_FDCWD allowed) as
 * @role (enum perfring_role), for a directory another user may control:
 * @name (one path component) and "@name.wake" are never followed if they
 * are symbolic links, and their type, owner and link count are checked
 * before they are opened (so a FIFO or device planted under the name is
 * never opened and nothing blocks): the ring must be a regular file and
 * the wake-up descriptor a FIFO, both owned by @owner ((uid_t)-1: by the
 * caller's effective uid, or anyone if that is root) with one link.  Then
 * every check of perfring_ring_attach() applies.  -ELOOP (symlink),
 * -EISDIR, -EINVAL (wrong type or layout), -EPERM (owner), -EMLINK (hard
 * links), -EBUSY, -EPROTO; each refusal is logged with the name and why.
 * Mappings of an attached ring are covered by perfring_sigbus_guard().
 */
PERFRING_API int perfring_ring_attachat(int dirfd, const char *name,
					unsigned int role, uid_t owner,
					struct perfring_ring **out);

/* Same as perfring_ring_attach() for a ring passed by descriptor (memfd);
 * @wake_fd is the ring's wake-up descriptor (perfring_ring_wait_fd()). */
PERFRING_API int perfring_ring_attach_fd(int ring_fd, int wake_fd,
					 enum perfring_role role,
					 struct perfring_ring **out);

/*
 * Wraps a kernel perf mmap (1 + 2^n pages at @base, @len bytes) for reading.
 * @perf_fd is the event's descriptor (poll, PAUSE_OUTPUT); @overwrite says
 * the mapping is read-only (write_backward).  The caller keeps the mapping.
 */
PERFRING_API int perfring_ring_wrap_kernel(void *base, size_t len, int perf_fd,
					   bool overwrite,
					   struct perfring_ring **out);

/* Unmaps and frees; NULL is a no-op.  A named ring's file is kept. */
PERFRING_API void perfring_ring_destroy(struct perfring_ring *ring);

/* Removes a named ring's file and its wake-up FIFO (mapped handles stay
 * valid until destroyed). */
PERFRING_API int perfring_ring_remove(const char *path);

/* The ring's memory descriptor (memfd or file), -EINVAL for kernel rings. */
PERFRING_API int perfring_ring_fd(const struct perfring_ring *ring);

/* Data area bytes. */
PERFRING_API uint64_t perfring_ring_data_size(const struct perfring_ring *ring);

/* The control page (read-only view for everybody but the library). */
PERFRING_API const struct perf_event_mmap_page *
perfring_ring_control(const struct perfring_ring *ring);

/*
 * Pauses (true) or resumes output, the analogue of PERF_EVENT_IOC_PAUSE_OUTPUT:
 * records offered while paused are dropped and counted as lost.
 */
PERFRING_API int perfring_ring_pause(struct perfring_ring *ring, bool pause);

struct perfring_ring_stats {
	size_t sz;
	uint64_t data_size;
	uint64_t head; /* data_head */
	uint64_t tail; /* data_tail */
	uint64_t lost_total; /* records dropped since creation */
	uint64_t lost_pending; /* dropped, LOST record not yet written */
	uint64_t wakeups; /* wake-ups sent by producers */
	uint64_t corrupt_bytes; /* bytes this reader skipped as corrupt */
	uint64_t corrupt_events; /* times this reader found corruption */
	uint32_t flags; /* PERFRING_MODE_* */
	uint32_t paused;
	/* Reader warnings: each cause is logged once per ring, then only
	 * counted here. */
	uint64_t bad_head_events; /* data_head misaligned or over a ring
				     from data_tail (reader resynchronised) */
	uint64_t bad_header_events; /* batches cut at a bad record header */
	uint64_t unfinished_events; /* overwrite: a writer died mid-record */
	uint64_t dead_reservations; /* skipped by perfring_ring_skip_dead() */
	uint64_t read_pos; /* counter this reader has read up to */
	uint32_t dead; /* 1: the ring file was truncated under the mapping */
};

/*
 * Fills @st (st->sz must be set).  -EFAULT for a dead ring (see
 * perfring_sigbus_guard()): @st is still filled, with dead = 1 and head
 * the data_head this reader saw last.
 */
PERFRING_API int perfring_ring_stats(const struct perfring_ring *ring,
				     struct perfring_ring_stats *st);

/*
 * Protects this process from rings other processes write: a producer that
 * truncates a ring file (ftruncate) makes every access to the pages past
 * the new end raise SIGBUS, which kills a reader by default.  Installs,
 * once for the process (later calls return 0 at once; thread-safe), a
 * SIGBUS handler that recognises faults in the mappings of rings (and AUX
 * areas) this process attached with perfring_ring_attach(),
 * perfring_ring_attachat() or perfring_ring_attach_fd(): it puts
 * anonymous zero pages over all the ring's mappings and returns, so the
 * access reads zeros (even through a record pointer the caller holds), and
 * the ring is dead: every call on it returns -EFAULT and logs once what
 * happened.  A SIGBUS anywhere else goes to the handler installed before
 * (or kills the process as the default action does).  The library never
 * installs it by itself; any consumer of rings that other processes write
 * must call it (perfring record does).  Under AddressSanitizer run with
 * ASAN_OPTIONS=allow_user_segv_handler=1 (the default in current
 * compilers).  Returns 0 or -errno from sigaction().
 */
PERFRING_API int perfring_sigbus_guard(void);

/*
 * Cheap health check for a consumer's round: 0 if the ring file still
 * covers the mapping; -ENODATA if it shrank (the ring is made dead at once,
 * before any access can fault; logged); -EFAULT if it is already dead.
 * Kernel rings: always 0.
 */
PERFRING_API int perfring_ring_check(struct perfring_ring *ring);

/*
 * For the consumer of a PERFRING_MODE_MULTI_PRODUCER ring whose producers
 * have all gone (no producer lock is held; else -EBUSY): every reservation
 * between data_head and the reservation head that nobody committed, which
 * stalls the ring for good, is overwritten with a PERF_RECORD_LOST (lost =
 * 1; the rest of a larger reservation as LOST records with lost = 0) and
 * committed, and data_head moves over it, so the committed records after it
 * become readable.  Adjacent dead reservations with no committed record
 * between them cannot be told apart and count as one.  Returns the number
 * of dead reservations skipped (0: none), -EBADMSG if the reservation head
 * is not within one ring of data_head, -EINVAL (not an MP consumer-only
 * handle), -EFAULT (dead ring).  Consumer side.
 */
PERFRING_API int64_t perfring_ring_skip_dead(struct perfring_ring *ring);

/* ---- producer --------------------------------------------------------- */

/*
 * A reservation, like the kernel's perf_output_handle.  Lives on the
 * producer's stack between perfring_output_begin() and perfring_output_end().
 */
struct perfring_output {
	struct perfring_ring *ring;
	void *data; /* write the record here: header first */
	uint64_t start; /* counter where the reservation starts */
	uint64_t end; /* counter just past it */
	uint32_t size; /* record bytes requested */
	uint32_t seq; /* overwrite mode: write_seq while writing */
};

/*
 * Reserves @size bytes (8-aligned, 8..PERFRING_RECORD_MAX) for one record and
 * points h->data at them; the record is contiguous even across the end of the
 * data area.  Returns 0; -ENOSPC (ring full) or -EAGAIN (paused): the record
 * is dropped and counted, and a PERF_RECORD_LOST goes in front of the next
 * record that fits; -EINVAL: bad size.  Producer side.
 */
PERFRING_API int perfring_output_begin(struct perfring_output *h,
				       struct perfring_ring *ring, size_t size);

/* Publishes the record reserved by perfring_output_begin().  Producer side. */
PERFRING_API void perfring_output_end(struct perfring_output *h);

/*
 * Copies one whole record (perf_event_header first, @size bytes, 8-aligned)
 * into the ring.  Same returns as perfring_output_begin().
 */
PERFRING_API int perfring_ring_emit(struct perfring_ring *ring, const void *rec,
				    size_t size);

/*
 * Free bytes as the producer sees them now (data_tail is re-read): a producer
 * that prefers to wait rather than drop checks this before
 * perfring_output_begin(), which counts every refusal as lost.  Overwrite
 * rings always return the data size.  Producer side.
 */
PERFRING_API int64_t perfring_ring_space(struct perfring_ring *ring);

/* Runs the wake-up check now (e.g. before a producer goes idle). */
PERFRING_API void perfring_ring_flush(struct perfring_ring *ring);

/* ---- consumer --------------------------------------------------------- */

/*
 * Starts a read batch: loads data_head and returns the bytes waiting.  0
 * means empty and opens no batch (perfring_read_end() is then harmless).
 * Overwrite rings are paused and the newest-to-oldest range is located and
 * copied out; perfring_read_end() resumes them.  -EBUSY: a batch is open;
 * -EBADMSG: data_head is not within one ring of data_tail (logged; the
 * reader resynchronised at data_head).  Consumer side.
 */
PERFRING_API int64_t perfring_read_begin(struct perfring_ring *ring);

/*
 * Returns the next record of the batch: its size (> 0) with *rec pointing at
 * it, 0 at the end of the batch, or -EBADMSG for a corrupt header (logged
 * with its ring offset; the rest of the batch is skipped and counted, and
 * the next batch starts at the producer's head).  The record stays valid
 * until perfring_read_end(); use the returned size, not rec->size.
 */
PERFRING_API int perfring_read_next(struct perfring_ring *ring,
				    const struct perf_event_header **rec);

/*
 * Hands the rest of the batch out as raw bytes without parsing: up to two
 * pieces (two when the range wraps).  Returns the number of pieces.
 */
PERFRING_API int perfring_read_range(struct perfring_ring *ring,
				     const void *ptr[2], size_t len[2]);

/* Ends the batch: frees what was read (stores data_tail) or resumes. */
PERFRING_API void perfring_read_end(struct perfring_ring *ring);

typedef int (*perfring_record_fn)(const struct perf_event_header *rec,
				  size_t size, void *ctx);

/*
 * Reads every record waiting and calls @fn on each (a negative return from
 * @fn stops early and is returned).  Returns records read or -errno.
 */
PERFRING_API int perfring_ring_consume(struct perfring_ring *ring,
				       perfring_record_fn fn, void *ctx);

/* ---- wake-ups --------------------------------------------------------- */

/* Descriptor that becomes readable on wake-up (poll/epoll). */
PERFRING_API int perfring_ring_wait_fd(const struct perfring_ring *ring);

/*
 * Before sleeping on the wait fd: returns 1 if enough data already waits
 * (do not sleep), 0 if the consumer is now marked waiting and may sleep.
 */
PERFRING_API int perfring_ring_wait_prepare(struct perfring_ring *ring);

/* After waking (or timing out): drains the wait fd, clears the mark. */
PERFRING_API void perfring_ring_wait_finish(struct perfring_ring *ring);

/*
 * prepare + poll + finish: sleeps until woken (watermark crossed) or
 * @timeout_ms passes (< 0: no timeout).  Returns 1 if any data waits
 * afterwards (possibly less than the watermark, after a timeout), 0 if none,
 * -errno on error.
 */
PERFRING_API int perfring_ring_wait(struct perfring_ring *ring, int timeout_ms);

/* ==== consumer object: many rings, one callback, one epoll ============== */
/*
 * Reads many rings (perfring rings and kernel perf event mmaps) with one
 * epoll set, as libbpf's ring_buffer__poll() and libperf's mmap reading do,
 * so a caller does not build its own loop over wait descriptors.  Each
 * source has a callback and a context; records arrive in order per source
 * (no order across sources), LOST records included.  One thread at a time
 * uses a consumer; producers run anywhere.  See docs/design.md "The
 * consumer object".
 */
struct perfring_consumer;

/* Records of perfring rings are handed in place, not copied: only for
 * producers this program trusts (its own threads).  Default: a copy. */
#define PERFRING_CONSUMER_ZERO_COPY 0x1u

struct perfring_consumer_opts {
	size_t sz; /* sizeof(struct perfring_consumer_opts) */
	unsigned int flags; /* PERFRING_CONSUMER_* */
};

/*
 * Creates an empty consumer; @opts may be NULL.  -EINVAL (unknown flags, a
 * bad sz, or non-zero bytes past the fields this library knows), -ENOMEM,
 * -errno from epoll_create1/eventfd.
 */
PERFRING_API int
perfring_consumer_create(const struct perfring_consumer_opts *opts,
			 struct perfring_consumer **out);

/*
 * Adds @ring (consumer role; a forward ring: overwrite rings are read on
 * demand, -EOPNOTSUPP) with @fn and @ctx.  @fn gets each record and its
 * checked size; the record is contiguous and stays valid only during the
 * call.  From a perfring ring it is a private copy (unless
 * PERFRING_CONSUMER_ZERO_COPY), so a producer cannot change it under @fn;
 * from a kernel ring (perfring_ring_wrap_kernel()) it points into the
 * mapping, or a copy when it wraps.  @fn returns 0 to go on; a negative
 * value stops the call and is returned by it; a positive value stops the
 * call, which returns the records handed out so far.  Either way that
 * record is consumed.  The consumer does not own @ring: it must outlive
 * the consumer.  Returns the source's index (>= 0), -EINVAL, -EEXIST (its
 * wait descriptor is in the set already), -EFAULT (dead ring), -ENOMEM.
 */
PERFRING_API int perfring_consumer_add_ring(struct perfring_consumer *c,
					    struct perfring_ring *ring,
					    perfring_record_fn fn, void *ctx);

/*
 * Maps the kernel perf event @perf_fd itself (1 + @pages pages, @pages a
 * power of two, read-write: the kernel's non-overwrite mode), wraps it and
 * adds it as perfring_consumer_add_ring() does.  The mapping is the
 * consumer's (unmapped by perfring_consumer_destroy()); @perf_fd stays the
 * caller's and must stay open until then.  Returns the source's index or
 * -EINVAL, -errno from mmap (EPERM: over perf_event_mlock_kb).
 */
PERFRING_API int perfring_consumer_add_perf_fd(struct perfring_consumer *c,
					       int perf_fd, size_t pages,
					       perfring_record_fn fn,
					       void *ctx);

/*
 * Sleeps until a source's wake-up (the watermark or wakeup_events of each
 * ring, as perfring_ring_wait() defines them) or @timeout_ms (< 0: none),
 * then reads one batch of every source (below-watermark data included, so
 * the timeout bounds the latency of a slow producer).  A signal ends the
 * sleep early.  Returns the records handed out (capped at INT_MAX), the
 * negative value a callback stopped with, or -errno (epoll_wait, -ENOMEM).
 * A source whose ring dies (its file truncated, see perfring_sigbus_guard())
 * is dropped: logged, counted (stats.dropped),
 * perfring_consumer_source_error() says why, and the others go on.  A
 * kernel event whose descriptor hangs up (its task exited) is read to the
 * end and leaves the epoll set (-EPIPE).
 */
PERFRING_API int perfring_consumer_poll(struct perfring_consumer *c,
					int timeout_ms);

/* Reads one batch of every source without sleeping; returns as
 * perfring_consumer_poll(). */
PERFRING_API int perfring_consumer_consume(struct perfring_consumer *c);

/*
 * The consumer's epoll descriptor, to nest in the caller's own poll/epoll
 * loop: it becomes readable when a source crosses its wake-up point (or a
 * batch was left unread), then call perfring_consumer_consume().  Every
 * call leaves the sources armed for the next wake-up.  As with any
 * watermark, data below it waits for the next call: call consume on a
 * timeout too.
 */
PERFRING_API int perfring_consumer_epoll_fd(const struct perfring_consumer *c);

/*
 * 0 while source @idx is read; -EPIPE when its kernel event hung up (read
 * to the end); else the error it was dropped with (-EFAULT: dead ring).
 * -EINVAL: no such source.
 */
PERFRING_API int
perfring_consumer_source_error(const struct perfring_consumer *c,
			       unsigned int idx);

struct perfring_consumer_stats {
	size_t sz;
	uint64_t records; /* handed to callbacks */
	uint64_t lost_records; /* PERF_RECORD_LOST records among them */
	uint64_t lost; /* the sum of their lost counts */
	uint64_t corrupt; /* batches the reader cut (see the ring's stats) */
	uint64_t rounds; /* reads of every source (poll and consume) */
	uint64_t wakeups; /* rounds a source's descriptor had signalled */
	uint32_t sources; /* added */
	uint32_t dropped; /* dropped with an error */
	uint32_t hung_up; /* kernel events that hung up */
};

/* Fills @st (st->sz set; fields up to it), sets st->sz to what it filled. */
PERFRING_API int perfring_consumer_stats(const struct perfring_consumer *c,
					 struct perfring_consumer_stats *st);

/* Frees the consumer and the mappings it made; the rings given to
 * perfring_consumer_add_ring() are the caller's.  NULL is a no-op. */
PERFRING_API void perfring_consumer_destroy(struct perfring_consumer *c);
/* ==== end of consumer object ============================================ */

/* ---- AUX area ---------------------------------------------------------- */

/*
 * An AUX area beside a ring's data area, as a kernel perf mmap has for
 * hardware trace (Intel PT, CoreSight, SPE): aux_offset/aux_size in the
 * control page, 2^n pages in the ring file after the data area, aux_head
 * and aux_tail with the data ring's ordering protocol.  The writer (a trace
 * source, playing the PMU driver) reports each piece it wrote with a
 * PERF_RECORD_AUX in the data ring.
 */
struct perfring_aux;

struct perfring_aux_opts {
	size_t sz; /* sizeof(struct perfring_aux_opts) */
	/* AUX bytes: a power of two, at least one page (default 1 MiB). */
	uint64_t aux_size;
	/* Free-running (snapshot) area: the writer overwrites the oldest
	 * trace and every PERF_RECORD_AUX has PERF_AUX_FLAG_OVERWRITE. */
	bool overwrite;
	/* Wake the reader every this many bytes (default aux_size / 2). */
	uint64_t watermark;
};

/*
 * Adds an AUX area to a ring this process created (before others attach):
 * sets aux_offset/aux_size in its control page, grows the ring file and
 * maps the area.  -EINVAL (bad size, kernel ring, area already there).
 */
PERFRING_API int perfring_aux_create(struct perfring_ring *ring,
				     const struct perfring_aux_opts *opts,
				     struct perfring_aux **out);

/* Maps the AUX area of an attached ring (the handle's roles apply);
 * -ENOENT if the ring has none; the control page's values are checked. */
PERFRING_API int perfring_aux_attach(struct perfring_ring *ring,
				     struct perfring_aux **out);

/*
 * Maps the AUX area of a kernel perf ring (perfring_ring_wrap_kernel() of
 * an event of an AUX-capable PMU, data mapped read-write): writes
 * aux_offset/aux_size into its control page and mmaps the event's
 * descriptor there, read-write (the kernel's non-overwrite mode) or
 * read-only (@overwrite: snapshot mode), as perf does.
 */
PERFRING_API int perfring_aux_map_kernel(struct perfring_ring *ring,
					 uint64_t aux_size, bool overwrite,
					 struct perfring_aux **out);

/* Unmaps; NULL is a no-op.  The ring must outlive it. */
PERFRING_API void perfring_aux_destroy(struct perfring_aux *aux);

PERFRING_API uint64_t perfring_aux_size(const struct perfring_aux *aux);

/* A writer's handle, like the kernel's perf_output_handle for AUX. */
struct perfring_aux_output {
	struct perfring_aux *aux;
	void *data; /* free space: @size bytes, contiguous */
	uint64_t head; /* aux_head at begin: PERF_RECORD_AUX aux_offset */
	uint64_t size; /* bytes free (overwrite: the whole area) */
	uint64_t flags; /* PERF_AUX_FLAG_* for the record */
	/* Optional sample_id trailer appended to PERF_RECORD_AUX. */
	const void *sample_id;
	uint32_t sample_id_size; /* multiple of 8 */
};

/*
 * perf_aux_output_begin(): hands out the free space.  0, or -EAGAIN (the
 * area is disabled after a truncation until the reader calls
 * perfring_aux_enable()), -ENOSPC (no free byte: the area is disabled now
 * and the reader woken, as the kernel does), -EINVAL.  Writer side, one
 * writer at a time.
 */
PERFRING_API int perfring_aux_output_begin(struct perfring_aux_output *h,
					   struct perfring_aux *aux);

/*
 * Free AUX bytes as the writer sees them now, without the side effects of
 * perfring_aux_output_begin() (which disables a full area): for a writer
 * that prefers to wait rather than lose trace.  Overwrite areas: the
 * area's size.  Writer side.
 */
PERFRING_API int64_t perfring_aux_space(struct perfring_aux *aux);

/* perf_aux_output_flag(): ORs PERF_AUX_FLAG_* (TRUNCATED, PARTIAL,
 * COLLISION) into the record end() writes. */
PERFRING_API void perfring_aux_output_flag(struct perfring_aux_output *h,
					   uint64_t flags);

/* perf_aux_output_skip(): publishes @size bytes of padding at once
 * (aux_head moves, no record).  -ENOSPC if over the space left. */
PERFRING_API int perfring_aux_output_skip(struct perfring_aux_output *h,
					  uint64_t size);

/*
 * perf_aux_output_end(): publishes @size written bytes (aux_head moves),
 * then writes PERF_RECORD_AUX {aux_offset, aux_size, flags} into the data
 * ring when @size or a flag other than OVERWRITE is set (aux_offset: where
 * the bytes start; in overwrite mode where they end, as the kernel).
 * TRUNCATED disables the area and wakes the reader; crossing the watermark
 * wakes it.
 * Returns 0, -ENOSPC/-EAGAIN if the data ring dropped the record (counted
 * there as lost and in aux_records_lost), -EINVAL (@size over the space).
 */
PERFRING_API int perfring_aux_output_end(struct perfring_aux_output *h,
					 uint64_t size);

/* Counts trace bytes a writer had to throw away (no space, disabled). */
PERFRING_API void perfring_aux_note_lost(struct perfring_aux *aux,
					 uint64_t bytes);

/* Writes PERF_RECORD_ITRACE_START {pid, tid} (+ @sample_id trailer) into
 * the data ring: a trace source starts.  Returns as perfring_ring_emit(). */
PERFRING_API int perfring_aux_itrace_start(struct perfring_aux *aux,
					   uint32_t pid, uint32_t tid,
					   const void *sample_id,
					   uint32_t sample_id_size);

/*
 * Reader: the bytes between aux_tail and aux_head in up to two pieces
 * (one for our double-mapped areas).  Returns the bytes waiting, or
 * -EBADMSG (aux_head more than the area ahead of aux_tail: logged, the
 * reader resynchronised at aux_head), -EINVAL (overwrite area: use
 * perfring_aux_snapshot()).  @pos, if not NULL, gets aux_tail.
 */
PERFRING_API int64_t perfring_aux_read_begin(struct perfring_aux *aux,
					     const void *ptr[2], size_t len[2],
					     uint64_t *pos);

/* Frees @bytes read (aux_tail moves).  Reader side. */
PERFRING_API int perfring_aux_read_end(struct perfring_aux *aux,
				       uint64_t bytes);

/* Re-enables a writer disabled by a truncation (PERF_EVENT_IOC_ENABLE for
 * kernel events).  Reader side. */
PERFRING_API int perfring_aux_enable(struct perfring_aux *aux);

/* Whether the writer is disabled after a truncation. */
PERFRING_API bool perfring_aux_disabled(const struct perfring_aux *aux);

/*
 * Overwrite areas: copies the newest min(@size, written, aux_size) bytes
 * into @buf; *@pos gets the stream position (aux_head counter) of the first
 * byte.  Take it with the writer stopped (as perf disables the event):
 * -EAGAIN if aux_head moved during the copy.  Returns the bytes copied or
 * -errno.
 */
PERFRING_API int64_t perfring_aux_snapshot(struct perfring_aux *aux, void *buf,
					   size_t size, uint64_t *pos);

/*
 * Before sleeping on perfring_ring_wait_fd(): 1 if at least the watermark
 * waits or the writer is disabled (do not sleep), else 0.  AUX wake-ups
 * write the ring's wait descriptor.
 */
PERFRING_API int perfring_aux_wait_prepare(struct perfring_aux *aux);

struct perfring_aux_stats {
	size_t sz;
	uint64_t aux_size;
	uint64_t head; /* aux_head */
	uint64_t tail; /* aux_tail */
	uint64_t records; /* PERF_RECORD_AUX written */
	uint64_t truncated; /* ... flagged TRUNCATED */
	uint64_t lost_bytes; /* trace bytes writers could not store */
	uint64_t wakeups;
	uint64_t aux_records_lost; /* PERF_RECORD_AUX the data ring dropped */
	bool overwrite;
	bool disabled;
};

PERFRING_API int perfring_aux_stats(const struct perfring_aux *aux,
				    struct perfring_aux_stats *st);

/* ---- clock ------------------------------------------------------------ */

/* CLOCK_MONOTONIC in ns: the clock of perf events with use_clockid set. */
PERFRING_API uint64_t perfring_clock_ns(void);

/* Where perfring_clock_fast_ns() gets its TSC conversion from. */
enum perfring_clock_source {
	PERFRING_CLOCK_SYSCALL = 0, /* no usable TSC: clock_gettime */
	PERFRING_CLOCK_KERNEL = 1, /* perf mmap page time_zero/mult/shift */
	PERFRING_CLOCK_CALIBRATED = 2, /* perfring's own TSC calibration */
};

struct perfring_clock_info {
	size_t sz;
	enum perfring_clock_source source;
	uint32_t time_mult;
	uint16_t time_shift;
	uint64_t time_zero;
	int64_t mono_offset; /* added to the converted TSC to get MONOTONIC */
};

/*
 * Sets up the fast clock: uses the time_zero/time_mult/time_shift of a kernel
 * perf mmap page when cap_user_time_zero is set, else calibrates the TSC
 * against CLOCK_MONOTONIC itself.  Runs once (on first use of the fast
 * clock if not called); fills @info (info->sz set) if not NULL.
 */
PERFRING_API int perfring_clock_init(struct perfring_clock_info *info);

/* CLOCK_MONOTONIC ns from the TSC; same timeline as perfring_clock_ns(). */
PERFRING_API uint64_t perfring_clock_fast_ns(void);

/* ---- application tracing ----------------------------------------------- */

/*
 * A program declares its events and emits them into per-thread rings (the
 * core's single-producer fast path).  `perfring record -- ./app` passes a
 * private session directory in $PERFRING_SESSION; the library creates its
 * rings there on each thread's first event, and the recorder drains them
 * into the same perf.data as the kernel's events, on one clock, as
 * tracepoint-like events named "provider:name" that perf script decodes.
 * With no session nothing is written and perfring_emit() costs one
 * predictable branch.  See docs/design.md and examples/app_trace.c.
 * In a setuid or setgid program (AT_SECURE) the environment is ignored
 * ($PERFRING_SESSION, $PERFRING_RING_SIZE, $PERFRING_MODE): no automatic
 * start; perfring_app_start() with an explicit session still works.
 */
struct perfring_event;

/* The largest application event record (perfring_event_write()): its perf
 * sample, 48 bytes longer, must fit perf_event_header.size. */
#define PERFRING_APP_EVENT_MAX (PERFRING_RECORD_MAX - 48u)

/* perfring_app_opts.flags (also $PERFRING_MODE: "shared", "overwrite",
 * "block", comma separated; "drop" or "" for none).  `perfring record --
 * COMMAND` runs the command with PERFRING_MODE=block unless it is set. */
#define PERFRING_APP_SHARED 0x1u /* one multi-producer ring per process */
#define PERFRING_APP_OVERWRITE 0x2u /* flight recorder: newest events kept */
#define PERFRING_APP_BLOCK 0x4u /* full ring: wait for the recorder */

struct perfring_app_opts {
	size_t sz;
	/* Session directory; NULL: $PERFRING_SESSION; "self": the program's
	 * own session /dev/shm/perfring-<uid>/<pid> (perfring record -p finds
	 * it; /tmp without a tmpfs /dev/shm). */
	const char *session;
	/* Data bytes per ring, a power of two (default $PERFRING_RING_SIZE
	 * as bytes or with K/M suffix, else 1 MiB). */
	uint64_t ring_size;
	unsigned int flags; /* PERFRING_APP_* */
	/* PERFRING_APP_BLOCK: a full ring waits for the recorder to free
	 * room for as long as it frees some at least every this many ms
	 * (default 250); past that the thread drops (counted) on that ring
	 * without waiting until the recorder frees something again. */
	int block_timeout_ms;
};

/*
 * Starts tracing into a session (runs by itself at program start when
 * $PERFRING_SESSION is set).  Returns 0, -EALREADY if already started, or
 * -errno (the log says what failed; the program runs on untraced).
 */
PERFRING_API int perfring_app_start(const struct perfring_app_opts *opts);

/* Stops: this process's rings are closed (the recorder drains what they
 * hold) and later events are not recorded. */
PERFRING_API void perfring_app_stop(void);

/* Nonzero while events are being recorded; read by perfring_emit(). */
PERFRING_API extern volatile int perfring_app_active;

/*
 * Declares an event "@provider:@name" with @fields, a comma-separated list
 * of "type name" with type one of u8 u16 u32 u64 s8 s16 s32 s64 string
 * bytes ("u64 id, u32 len, string path").  Names are C identifiers; a
 * few cannot name an event perf decodes and are refused: the provider
 * "ftrace" (the kernel's own system), fields starting with common_, and
 * LOCAL_PR_FMT, STA_PR_FMT, VIF_PR_FMT anywhere (libtraceevent rewrites
 * them).  May be called before or after perfring_app_start(), from any
 * thread.
 * Events whose name ends in _begin or _end mark the two ends of a slice
 * (exports pair them per thread).  Returns 0 or -EINVAL (the log says
 * what is wrong), -ENOSPC when the session has no event ids left.
 */
PERFRING_API int perfring_event_declare(const char *provider, const char *name,
					const char *fields,
					struct perfring_event **out);

/* The integer fields as laid out in a C struct with the same members in
 * declaration order: what perfring_emit() takes. */
PERFRING_API size_t perfring_event_fixed_size(const struct perfring_event *ev);

/* Contents of the string and bytes fields, in declaration order; a string
 * is copied up to its NUL (@len ignored when @ptr is a string field). */
struct perfring_var {
	const void *ptr;
	uint32_t len;
};

/*
 * Writes one event: @fixed points at the integer fields (@len bytes, as
 * perfring_event_fixed_size() says), @vars at @nvars string/bytes values.
 * Returns 0; -ENOSPC: the ring was full (counted as lost, a
 * PERF_RECORD_LOST tells the recorder); -E2BIG: the event is larger than
 * a record takes, PERFRING_APP_EVENT_MAX bytes: the 24-byte record header,
 * the integer fields and a 4-byte location per string or bytes field, then
 * their contents (a string up to 4095 bytes and its NUL, bytes as given),
 * rounded up to 8 (a ring of under 64 KiB takes less: its size less a LOST
 * record).  Such an event is lost: counted as lost and in
 * perfring_app_stats().too_large, and the recorder says how many were too
 * large.  -EINVAL: @len or @nvars do not match the declaration.  Use
 * perfring_emit()/perfring_emitv().
 */
PERFRING_API int perfring_event_write(struct perfring_event *ev,
				      const void *fixed, size_t len,
				      const struct perfring_var *vars,
				      unsigned int nvars);

static inline int perfring_emit(struct perfring_event *ev, const void *fixed,
				size_t len)
{
	if (__builtin_expect(!perfring_app_active, 1))
		return 0;
	return perfring_event_write(ev, fixed, len, NULL, 0);
}

static inline int perfring_emitv(struct perfring_event *ev, const void *fixed,
				 size_t len, const struct perfring_var *vars,
				 unsigned int nvars)
{
	if (__builtin_expect(!perfring_app_active, 1))
		return 0;
	return perfring_event_write(ev, fixed, len, vars, nvars);
}

/* Flight recorder: asks the recorder of the session for a snapshot of the
 * overwrite rings (as SIGUSR2 to perfring record does). */
PERFRING_API int perfring_app_snapshot(void);

struct perfring_app_stats {
	size_t sz;
	uint64_t events; /* written */
	uint64_t lost; /* dropped: ring full, paused, too large, refused */
	uint32_t rings; /* rings this process created */
	/* of lost: events larger than a ring record takes (-E2BIG) */
	uint64_t too_large;
};

PERFRING_API int perfring_app_stats(struct perfring_app_stats *st);

/* ---- sub-buffer rings (the ftrace ring design in a program) ---------- */
/* (The kernel's memory-mapped ftrace ring buffers are recorded by
 * perfring_record_tracefs() in <perfring/tools.h>; see docs/design.md
 * "Sub-buffer rings".) */

/* struct trace_buffer_meta (linux/trace_mmap.h), 80 bytes. */
struct perfring_subbuf_meta {
	uint32_t meta_page_size, meta_struct_len, subbuf_size, nr_subbufs;
	struct {
		uint64_t lost_events; /* always 0, as the kernel's */
		uint32_t id; /* the sub-buffer the reader owns */
		uint32_t read; /* bytes of it consumed */
	} reader;
	uint64_t flags, entries, overrun, read, reserved1, reserved2;
};

/* Event id of perfring_subbuf_message() events ("perfring:message"). */
#define PERFRING_SUBBUF_MESSAGE_ID 60000

struct perfring_subbuf;

/*
 * A ring of @nr_subbufs (>= 3) sub-buffers of @subbuf_size bytes (a power
 * of two, 4 KiB..1 MiB) in the kernel's ftrace page format, with a meta
 * page; one writer (thread) per ring.  @overwrite: a full ring overwrites
 * its oldest page (counted in overrun) instead of dropping new events.
 */
PERFRING_API int perfring_subbuf_create(uint32_t subbuf_size,
					uint32_t nr_subbufs, bool overwrite,
					struct perfring_subbuf **out);
PERFRING_API void perfring_subbuf_destroy(struct perfring_subbuf *r);
/* One event of @size payload bytes at time @ts (ns, not decreasing).
 * -ENOSPC: dropped (ring full, no overwrite); -E2BIG: too large. */
PERFRING_API int perfring_subbuf_write(struct perfring_subbuf *r, uint64_t ts,
				       const void *data, uint32_t size);
/* A text event "perfring:message" (trace-cmd report prints it). */
PERFRING_API int perfring_subbuf_message(struct perfring_subbuf *r, uint64_t ts,
					 int pid, const char *msg);
/* The GET_READER operation: afterwards meta->reader says which sub-buffer
 * the reader owns and how many bytes of it are valid. */
PERFRING_API int perfring_subbuf_get_reader(struct perfring_subbuf *r);
PERFRING_API const struct perfring_subbuf_meta *
perfring_subbuf_meta(const struct perfring_subbuf *r);
PERFRING_API const void *perfring_subbuf_page(const struct perfring_subbuf *r,
					      uint32_t id);
/* Events refused because the ring was full (producer/consumer mode). */
PERFRING_API uint64_t perfring_subbuf_dropped(const struct perfring_subbuf *r);

/*
 * Names of 0.2, kept for one release (0.3) as aliases of the new ones
 * (NEWS.md): the ring's read cycle was perfring_reader_begin/next/range/end
 * (now perfring_read_*), the consumer's constructor and destructor
 * perfring_consumer_new/free (now _create/_destroy, as the ring's).
 */
PERFRING_API int64_t perfring_reader_begin(struct perfring_ring *ring);
PERFRING_API int perfring_reader_next(struct perfring_ring *ring,
				      const struct perf_event_header **rec);
PERFRING_API int perfring_reader_range(struct perfring_ring *ring,
				       const void *ptr[2], size_t len[2]);
PERFRING_API void perfring_reader_end(struct perfring_ring *ring);
PERFRING_API int
perfring_consumer_new(const struct perfring_consumer_opts *opts,
		      struct perfring_consumer **out);
PERFRING_API void perfring_consumer_free(struct perfring_consumer *c);

#ifdef __cplusplus
}
#endif
#endif /* PERFRING_H */
