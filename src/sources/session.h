/* SPDX-License-Identifier: MIT */
/*
 * One recording's loop: the sources' descriptors in one epoll set with the
 * command's pidfd and the caller's control pipe; when one wakes, its
 * source's ready(); after every wait (and at least every poll_ms), each
 * source's pass().  perfring_record() runs its sources in it (the kernel
 * perf rings and application rings into perf.data, the tracefs per-CPU
 * buffers into trace.dat), perfring_record_tracefs() its one, and
 * perfring_record_aux() its AUX source (data rings and AUX areas).
 */
#ifndef PERFRING_SOURCES_SESSION_H
#define PERFRING_SOURCES_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "child.h"

#define REC_MAX_SOURCES 4

struct rec_session;

/* What a source gives the loop (any may be NULL). */
struct rec_source_ops {
	const char *name;
	/* Its descriptors into the set: rec_session_watch(s, fd, index). */
	int (*watch)(void *ctx, struct rec_session *s);
	/* Its descriptor @index woke with @events (EPOLLIN, EPOLLHUP...).
	 * Returns 1 if it had data (a wake-up), 0, or -errno: recording
	 * stops with that error. */
	int (*ready)(void *ctx, uint32_t index, uint32_t events);
	/* Before the wait: true if it has work already (no sleeping). */
	bool (*prepare)(void *ctx);
	/* After every wait: 0; 1 when its input has ended (the loop
	 * stops; the caller's final drain follows); -errno to stop with
	 * that error. */
	int (*pass)(void *ctx);
	/* About 4 times a second: figures for a progress callback. */
	void (*progress)(void *ctx);
};

struct rec_session {
	int epfd;
	int control_fd; /* 'q' (or EOF) stops; 's' calls snapshot */
	struct held_child *cmd; /* the command (pid 0: none), or NULL */
	int *child_status; /* where its wait status goes if reaped here */
	double duration; /* seconds (0: until the command ends or 'q') */
	int poll_ms; /* longest wait */
	/* 's' on the control pipe: 0, or nonzero to stop. */
	int (*snapshot)(void *ctx);
	void *snapshot_ctx;
	uint64_t wakeups; /* waits that brought data */
	struct rec_source {
		const struct rec_source_ops *ops;
		void *ctx;
	} src[REC_MAX_SOURCES];
	int nr_src;
	int adding; /* the source whose watch() runs */
};

/* An empty session (no epoll yet). */
void rec_session_init(struct rec_session *s);
int rec_session_add(struct rec_session *s, const struct rec_source_ops *ops,
		    void *ctx);
/* From a source's watch(): @fd wakes its ready(@index). */
int rec_session_watch(struct rec_session *s, int fd, uint32_t index);
/* From a source's ready(): stop watching @fd (its task exited). */
void rec_session_unwatch(struct rec_session *s, int fd);
/* Until the command exits, 'q', the duration or an error.  Returns 0 or
 * the first -errno of a source or of epoll. */
int rec_session_loop(struct rec_session *s);
void rec_session_close(struct rec_session *s);

#endif
