/* SPDX-License-Identifier: MIT */
/*
 * Application tracing, the recorder side: a session directory watched with
 * inotify, the rings programs create in it attached as consumers, their
 * records turned into perf samples of tracepoint-like events.
 */
#ifndef PERFRING_SOURCES_APP_SESSION_H
#define PERFRING_SOURCES_APP_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "../app/app_format.h"

struct app_session;

/* sample_type of the samples an app session produces: no IP or PERIOD
 * (nothing to say there; the attr's sample_period stands for it), so a
 * 3 x u64 event is an 80-byte sample.  The recorder's kernel events use
 * the same trailer (TID TIME CPU IDENTIFIER), as perf requires. */
#define APP_SAMPLE_TYPE                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)
/* The sample id of event id n (perf's ids from the kernel are small). */
#define APP_SAMPLE_ID(n) ((1ull << 62) | (n))

struct app_session_cb {
	/* A new event type: the recorder adds its attr. */
	int (*new_event)(void *ctx, const struct app_event_desc *d,
			 uint64_t sample_id);
	/* Converted records (whole perf records) for the output. */
	int (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
	/* Most rings attached at once (0: APP_MAX_RINGS_DEFAULT); the
	 * others wait, and are reported lost if they never get a turn. */
	uint32_t max_rings;
};

#define APP_MAX_RINGS_DEFAULT 4096u
/* A LOST record claiming more events than this is flagged implausible
 * (2^40: a thousand events a nanosecond for twenty minutes). */
#define APP_LOST_PLAUSIBLE (1ull << 40)

struct app_session_stats {
	uint64_t events; /* samples written */
	/* What the programs claim: the sum of their LOST records
	 * (saturating at 2^64-1), and the records over APP_LOST_PLAUSIBLE. */
	uint64_t lost;
	uint64_t lost_records;
	uint64_t lost_implausible;
	uint64_t too_large; /* of lost: events larger than a ring record */
	/* What the recorder measured itself: */
	uint64_t corrupt; /* records or ranges skipped as damaged */
	uint64_t corrupt_bytes; /* ... their bytes */
	uint64_t dead_reservations; /* reservations of dead producers */
	uint32_t rings_dropped; /* truncated under the recorder */
	uint64_t dropped_bytes; /* what they held unread */
	uint32_t rings_refused; /* not attached: unsafe or not a ring */
	uint32_t rings_over_cap; /* never attached: over max_rings */
	uint32_t rings_no_fd; /* never attached: too many open files */
	uint64_t unattached_bytes; /* those held, by their control pages */
	uint64_t first_time, last_time;
	uint32_t rings; /* rings attached over the session */
	uint32_t live_rings;
};

/* Makes a private session directory (0700) under $PERFRING_TMPDIR, else
 * /dev/shm (tmpfs), else /tmp, holds it open and flock()ed for the whole
 * session (a stale-session reclaimer leaves a locked directory alone) and
 * watches it; the recorder's pid goes into recorder.pid. */
int app_session_create(const struct app_session_cb *cb,
		       struct app_session **out);

/*
 * Watches an existing session directory (perfring record -p PID): the one
 * named in the process's environment ($PERFRING_SESSION), else its own
 * /dev/shm/perfring-<uid>/<pid> (/tmp/... without a tmpfs /dev/shm).  The
 * directory is reached from / one component at a time without following
 * a link, and must be owned by the process's uid with no group or other
 * access; everything in it is then opened through the directory
 * descriptor, never following links, never opening FIFOs or devices, and
 * nothing there is removed but the recorder's own recorder.pid.  -ENOENT
 * when the process has none or it is refused (logged), -ESRCH.
 */
int app_session_find(pid_t pid, const struct app_session_cb *cb,
		     struct app_session **out);

const char *app_session_dir(const struct app_session *s);

/* Readable when a ring woke the recorder or the directory changed
 * (epoll-able). */
int app_session_fd(const struct app_session *s);

/* Before the recorder sleeps: marks every forward ring's consumer as
 * waiting.  Returns 1 if one already has enough data (do not sleep). */
int app_session_prepare(struct app_session *s);

/* After waking: takes the wake-ups, attaches rings that appeared. */
void app_session_finish(struct app_session *s);

/*
 * Converts what the forward rings hold (all rings, overwrite ones
 * included, if @snapshot) into perf records through cb->write.  The space
 * they took in the rings is not freed yet (see app_session_release()).
 * Rings whose producer is gone are drained to the end; a ring whose file
 * was truncated (perfring_ring_check()) is dropped with one warning and
 * what it held counted as lost.  @final: the last drain (rings that just
 * appeared too, overwrite rings read, every producer checked).  Returns 0
 * or the first error of cb->write (damage in a ring is logged once per
 * ring and cause, counted and skipped, never returned).
 */
int app_session_drain(struct app_session *s, bool snapshot, bool final);

/*
 * After the records of app_session_drain() are safe in the output (the
 * round is written): frees their space in the rings (data_tail) and
 * releases the rings whose producers are gone.  A recorder that dies
 * between the two leaves the records in the rings for the next one to
 * read again: at least once, never lost.
 */
void app_session_release(struct app_session *s);

/* True when a ring holds a quarter of its space or more read but not yet
 * released: its producer may soon find it full, so the recorder should end
 * the round (and release) early. */
bool app_session_pressed(const struct app_session *s);

/* Every event type seen, with its format text, for TRACING_DATA. */
int app_session_formats(struct app_session *s,
			int (*fn)(void *ctx, const struct app_event_desc *d,
				  const char *format, size_t len),
			void *ctx);

void app_session_stats(const struct app_session *s,
		       struct app_session_stats *st);

/* Detaches every ring; removes the directory if this session made it. */
void app_session_close(struct app_session *s);

#endif
