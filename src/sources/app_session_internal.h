/* SPDX-License-Identifier: MIT */
/*
 * What the files of the application-tracing recorder share
 * (app_session.h is its interface): the session, its rings and the
 * events their programs declared.
 *
 *   app_session.c          the session: its directory found or made, drained,
 *                          released, closed, its counts
 *   app_session_rings.c    rings found in the directory (inotify, scans),
 *                          checked and attached, the events files read,
 *                          dead and damaged rings dropped
 *   app_session_convert.c  a ring's records copied out, validated and
 *                          turned into perf samples and LOST records
 */
#ifndef PERFRING_SOURCES_APP_SESSION_INTERNAL_H
#define PERFRING_SOURCES_APP_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "app_session.h"

#define NR_IDS (APP_LAST_ID + 1 - PERFRING_APP_FIRST_ID)

#define EVENTS_FILE_MAX (4u << 20) /* bytes read from one events file */

#define GONE_CHECK_NS (200 * 1000 * 1000ull)

#define SAMPLE_HDR 44 /* header .. raw_size of an app sample */

#define LOST_SIZE 56 /* PERF_RECORD_LOST + TID TIME CPU IDENTIFIER */

#define PENDING_MAX 65536 /* rings remembered while they wait */

#define REFUSALS_LOGGED 5 /* refused rings named in the log; then counted */

#define RECORDER_PID "recorder.pid"

/* Descriptors rings may not take: the recorder's own needs (events files,
 * /proc, the output's metadata at the end). */
#define FD_RESERVE 32

/* Per-ring causes of a warning: each is logged once per ring. */
enum app_warn {
	W_NO_DECL,
	W_PAYLOAD,
	W_TOO_LARGE,
	W_SHORT_LOST,
	W_TYPE,
	W_IMPLAUSIBLE,
	W_DEAD_RESERVATION,
	W_BATCH,
};

struct app_ring {
	struct perfring_ring *ring;
	char name[NAME_MAX + 1]; /* in the session directory */
	ino_t ino;
	pid_t pid, tid; /* tid 0: the process's shared ring */
	bool overwrite;
	bool gone; /* producer gone, drained: released after the round */
	uint64_t batch_done; /* bytes of the open batch already converted */
	uint64_t held; /* bytes read, not yet released */
	bool warming; /* read with pread() while its mapping is warmed */
	uint64_t lost_taken; /* lost_pending written, not yet released */
	uint64_t too_large_seen; /* its ext->too_large last read */
	uint64_t size; /* data bytes */
	uint32_t warned; /* 1 << enum app_warn */
	/* the event the block walk (convert_span) takes: the last one
	 * convert_event() found declared; declarations are never replaced */
	uint32_t walk_id;
	const struct app_event_desc *walk_desc;
	uint64_t last_time;
	uint32_t last_cpu;
	uint32_t last_tid;
	struct app_ring *next;
};

enum wait_reason { WAIT_CAP, WAIT_FD };

/* A ring not attached yet: over the cap, or no descriptor was left. */
struct pending_ring {
	char name[NAME_MAX + 1];
	ino_t ino;
	enum wait_reason why;
};

struct events_file {
	pid_t pid;
	uint64_t off; /* bytes parsed so far */
	bool warned_line, warned_redeclared, warned_refused;
	struct events_file *next;
};

/* Rings seen, by name and inode: attached, released or refused. */
enum seen_state { SEEN_NONE, SEEN_LIVE, SEEN_DONE, SEEN_PENDING };

struct seen_set {
	uint64_t *keys; /* 0: empty */
	uint8_t *state;
	size_t cap, n;
};

struct app_session {
	char dir[PATH_MAX];
	int dirfd; /* the session directory; every file is opened through it */
	bool own; /* we made the directory: remove it at close */
	uid_t owner; /* whose files we accept ((uid_t)-1: ours) */
	dev_t pid_dev; /* recorder.pid as we made it */
	ino_t pid_ino;
	bool pid_made;
	int epfd, ino_fd;
	uint32_t max_rings;
	struct app_ring *rings;
	struct pending_ring *pending;
	size_t nr_pending, pending_cap;
	uint64_t pending_dropped; /* beyond PENDING_MAX: only counted */
	bool warned_cap, warned_nofd, warned_refusals, warned_pending;
	uint32_t refusals_logged;
	struct seen_set seen;
	struct events_file *efiles;
	struct app_event_desc *ev[NR_IDS];
	uint64_t lost_id; /* sample id LOST records carry */
	struct app_session_cb cb;
	unsigned char *out;
	size_t out_len, out_cap;
	struct app_session_stats st;
	uint64_t next_gone_check;
	bool released_some; /* since the last retry of pending rings */
	bool ended; /* the final drain ran: no ring is attached after it */
	int err; /* first write error */
};

/* Bytes of a ring copied per pread() (perfring__ring_copy_reads): a
 * chunk stays in the L2 cache while it is converted. */
#define APP_READ_CHUNK (256u << 10)

/* Pages of a new ring's mapping warmed per idle moment: ~1-2 ms. */
#define APP_WARM_PAGES 256

/* Bytes of converted records per write() */
#define APP_OUT_CHUNK (2u << 20)

/* ---- output ---- */
int app_out_flush(struct app_session *s);

/* ---- names of programs, for messages ---- */
void app_program_name(pid_t pid, char *buf, size_t size);

const struct app_event_desc *app_event_of(struct app_session *s,
					  struct app_ring *r, uint32_t id);

void app_ring_warn(struct app_ring *r, enum app_warn cause);

bool app_ring_warned(const struct app_ring *r, enum app_warn cause);

/* Rings that waited for a slot or a descriptor: another try. */
void app_retry_pending(struct app_session *s);

void app_scan_dir(struct app_session *s);

/* The producer's role lock is gone: the thread or process ended. */
bool app_producer_gone(struct app_ring *r);

/* Damage the ring core counted in this ring (bytes). */
uint64_t app_ring_corrupt_bytes(struct app_ring *r);

void app_release_ring(struct app_session *s, struct app_ring **link);

/*
 * The ring file was truncated under us (or faulted): what it held cannot
 * be read.  One warning naming the program and the ring; the bytes it held
 * unread when last seen count as lost.
 */
void app_drop_ring(struct app_session *s, struct app_ring **link);

/* ---- conversion ---- */
void app_corrupt(struct app_session *s, struct app_ring *r, enum app_warn cause,
		 uint32_t bytes, const char *why);

int app_drain_ring(struct app_session *s, struct app_ring *r);

/*
 * The producer is gone.  A shared ring's dead producer may have reserved
 * space it never committed, which stops data_head for good: skip it (a
 * LOST record of 1 each) and read what was committed behind it.  Drops
 * after the last record are still pending (a ring writes the LOST record
 * in front of the next record): report them, taking the count so that a
 * second look never counts it twice.
 */
int app_note_gone(struct app_session *s, struct app_ring *r);

void app_handle_inotify(struct app_session *s);

#endif
