// SPDX-License-Identifier: MIT
/* perf's --control, safe against whoever writes its pipes (control.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/log.h"
#include "control.h"

/*
 * A descriptor of our own on the pipe @fd names, with our own flags: the
 * caller's may block, and changing its flags would change them for the
 * caller too (the open file description is shared).  Reopening the pipe
 * through /proc gives a new description on the same pipe.  Without /proc
 * the caller's descriptor is duplicated and made non-blocking.
 */
static int own_pipe_fd(int fd, int flags)
{
	char proc[48];
	int own;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	own = open(proc, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (own >= 0)
		return own;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0)
		return -errno;
	if (fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK)) {
		close(own);
		return -errno;
	}
	return own;
}

static int take(int fd, bool ack, int *own, bool *sock)
{
	const char *what = ack ? "acknowledgement" : "command";
	struct stat st;

	if (fstat(fd, &st)) {
		pr_err("--control: %s descriptor %d: %s", what, fd,
		       strerror(errno));
		return -EBADF;
	}
	if (S_ISSOCK(st.st_mode)) {
		*sock = true;
		*own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		return *own < 0 ? -errno : 0;
	}
	if (!S_ISFIFO(st.st_mode)) {
		/* A regular file or /dev/zero would be accepted and never
		 * read (epoll refuses it), or read for ever. */
		pr_err("--control: the %s descriptor %d is not a FIFO, a pipe or a socket",
		       what, fd);
		return -EINVAL;
	}
	/* The ack end read-write: opening a FIFO write-only fails while no
	 * one reads it, and nobody reading must not stop anything. */
	*own = own_pipe_fd(fd, ack ? O_RDWR : O_RDONLY);
	return *own < 0 ? *own : 0;
}

int control_open(struct rec_control *c, int ctl_fd, int ack_fd)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->ctl_fd = c->ack_fd = -1;
	err = take(ctl_fd, false, &c->ctl_fd, &c->ctl_sock);
	if (!err && ack_fd >= 0)
		err = take(ack_fd, true, &c->ack_fd, &c->ack_sock);
	if (err)
		control_close(c);
	return err;
}

void control_close(struct rec_control *c)
{
	if (c->ctl_fd >= 0)
		close(c->ctl_fd);
	if (c->ack_fd >= 0)
		close(c->ack_fd);
	c->ctl_fd = c->ack_fd = -1;
}

void control_close_commands(struct rec_control *c)
{
	if (c->ctl_fd >= 0)
		close(c->ctl_fd);
	c->ctl_fd = -1;
}

static void ack(struct rec_control *c)
{
	ssize_t n;

	if (c->ack_fd < 0)
		return;
	n = c->ack_sock ?
		    send(c->ack_fd, "ack\n", 4, MSG_DONTWAIT | MSG_NOSIGNAL) :
		    write(c->ack_fd, "ack\n", 4);
	if (n == 4)
		return;
	/* Full (nobody reads the acks) or gone: perf goes on too. */
	if (!c->acks_dropped++)
		pr_warn("--control: acknowledgement not written (%s): nobody reads them; the recording goes on, further ones are counted",
			n < 0 ? strerror(errno) : "short write");
}

static int run_line(struct rec_control *c,
		    int (*fn)(void *ctx, const char *cmd, size_t len),
		    void *ctx)
{
	size_t n = c->len;

	c->len = 0;
	if (!n)
		return 0;
	int err = fn(ctx, c->buf, n);

	ack(c);
	return err;
}

int control_read(struct rec_control *c,
		 int (*fn)(void *ctx, const char *cmd, size_t len), void *ctx)
{
	char in[1024];

	if (c->ctl_fd < 0 || c->hup)
		return 0;
	/* At most 64 KiB a call: a writer that never stops is read again
	 * at the next pass, after the rings. */
	for (int reads = 0; reads < 64; reads++) {
		ssize_t r = c->ctl_sock ? recv(c->ctl_fd, in, sizeof(in),
					       MSG_DONTWAIT) :
					  read(c->ctl_fd, in, sizeof(in));
		int err = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (!r) {
			/* Every writer closed: what is left is a command,
			 * and the pipe is not watched any more (it would
			 * report its hang-up for ever). */
			c->hup = true;
			if (!c->discarding)
				err = run_line(c, fn, ctx);
			return err;
		}
		for (ssize_t i = 0; i < r && !err; i++) {
			char ch = in[i];

			if (ch == '\n' || ch == '\0') {
				if (c->discarding)
					c->discarding = false;
				else
					err = run_line(c, fn, ctx);
				continue;
			}
			if (c->discarding)
				continue;
			if (c->len == sizeof(c->buf)) {
				pr_warn("--control: a command of over %d bytes ignored",
					CONTROL_LINE_MAX);
				c->len = 0;
				c->discarding = true;
				continue;
			}
			c->buf[c->len++] = ch;
		}
		if (err)
			return err;
	}
	return 0;
}
