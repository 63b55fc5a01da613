/* SPDX-License-Identifier: MIT */
/*
 * perf's --control: commands read from a FIFO or a pipe (or a socket),
 * "ack\n" written back.  Both descriptors come from the caller and their
 * other ends from whoever may write there: nothing in them may stop the
 * recording.  Commands are whole lines however the writes split them, an
 * ack nobody reads is dropped (counted) instead of blocking, and a command
 * pipe whose writers are gone is no longer watched.
 */
#ifndef PERFRING_RECORD_CONTROL_H
#define PERFRING_RECORD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONTROL_LINE_MAX 4096

struct rec_control {
	int ctl_fd, ack_fd; /* ours (reopened non-blocking), or -1 */
	bool ctl_sock, ack_sock; /* sockets: MSG_DONTWAIT instead */
	bool hup; /* the command pipe's writers are gone */
	bool discarding; /* inside a line longer than CONTROL_LINE_MAX */
	size_t len; /* bytes of the current line in buf */
	uint64_t acks_dropped;
	char buf[CONTROL_LINE_MAX];
};

/* Takes the caller's @ctl_fd and @ack_fd (-1: none; the caller keeps its
 * own descriptors): refuses what cannot carry commands (a regular file,
 * /dev/zero: -EINVAL, said).  0 or -errno. */
int control_open(struct rec_control *c, int ctl_fd, int ack_fd);

/* Runs @fn on every whole command that has arrived (each ended by a
 * newline or a NUL), then acks it; at the end of the pipe a last
 * unterminated command too.  Stops at the first error @fn returns.
 * Returns 0, @fn's error, or -errno of the read. */
int control_read(struct rec_control *c,
		 int (*fn)(void *ctx, const char *cmd, size_t len), void *ctx);

/* The command pipe only (its writers are gone); acks stay possible. */
void control_close_commands(struct rec_control *c);
void control_close(struct rec_control *c);

#endif /* PERFRING_RECORD_CONTROL_H */
