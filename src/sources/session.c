// SPDX-License-Identifier: MIT
/* One recording's loop over its sources (session.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session.h"

/* epoll tags: source n (from 1) in the top byte, its index below. */
#define TAG_SHIFT 24
#define TAG_INDEX_MAX ((1u << TAG_SHIFT) - 1)
#define TAG_CONTROL 1u /* source 0: the loop's own descriptors */
#define TAG_COMMAND 2u
#define PROGRESS_MS 250

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void rec_session_init(struct rec_session *s)
{
	memset(s, 0, sizeof(*s));
	s->epfd = -1;
	s->control_fd = -1;
	s->poll_ms = 100;
}

int rec_session_add(struct rec_session *s, const struct rec_source_ops *ops,
		    void *ctx)
{
	if (s->nr_src == REC_MAX_SOURCES)
		return -E2BIG;
	s->src[s->nr_src].ops = ops;
	s->src[s->nr_src++].ctx = ctx;
	return 0;
}

static int watch_tag(struct rec_session *s, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int rec_session_watch(struct rec_session *s, int fd, uint32_t index)
{
	if (index > TAG_INDEX_MAX)
		return -E2BIG;
	return watch_tag(s, fd, (uint32_t)(s->adding + 1) << TAG_SHIFT | index);
}

void rec_session_unwatch(struct rec_session *s, int fd)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static int open_set(struct rec_session *s)
{
	int err;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	if (s->control_fd >= 0) {
		err = watch_tag(s, s->control_fd, TAG_CONTROL);
		if (err)
			return err;
	}
	if (s->cmd && s->cmd->pidfd >= 0) {
		err = watch_tag(s, s->cmd->pidfd, TAG_COMMAND);
		if (err)
			return err;
	}
	for (s->adding = 0; s->adding < s->nr_src; s->adding++) {
		const struct rec_source *src = &s->src[s->adding];

		if (src->ops->watch) {
			err = src->ops->watch(src->ctx, s);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The control pipe's keys: true to stop. */
static bool control(struct rec_session *s)
{
	char keys[16];
	ssize_t r = read(s->control_fd, keys, sizeof(keys));

	if (r <= 0)
		return true;
	for (ssize_t j = 0; j < r; j++) {
		if (keys[j] == 'q')
			return true;
		if (keys[j] == 's' && s->snapshot &&
		    s->snapshot(s->snapshot_ctx))
			return true;
	}
	return false;
}

/* Without a pidfd (an old kernel) the command is watched by waitpid. */
static bool command_ended(struct rec_session *s)
{
	int status;

	if (!s->cmd || s->cmd->pid <= 0 || s->cmd->pidfd >= 0)
		return false;
	if (waitpid(s->cmd->pid, &status, WNOHANG) != s->cmd->pid)
		return false;
	if (s->child_status)
		*s->child_status = status;
	s->cmd->pid = 0;
	return true;
}

static int wait_once(struct rec_session *s, bool *stop, bool *woke)
{
	struct epoll_event evs[64];
	int timeout = s->poll_ms, n;

	for (int i = 0; i < s->nr_src; i++)
		if (s->src[i].ops->prepare &&
		    s->src[i].ops->prepare(s->src[i].ctx))
			timeout = 0;
	n = epoll_wait(s->epfd, evs, 64, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++) {
		uint32_t tag = evs[i].data.u32, k = tag >> TAG_SHIFT;
		const struct rec_source *src;
		int r;

		if (tag == TAG_CONTROL) {
			*stop |= control(s);
			continue;
		}
		if (tag == TAG_COMMAND) {
			*stop = true; /* the command exited */
			continue;
		}
		if (k < 1 || k > (uint32_t)s->nr_src)
			continue;
		src = &s->src[k - 1];
		r = src->ops->ready ?
			    src->ops->ready(src->ctx, tag & TAG_INDEX_MAX,
					    evs[i].events) :
			    1;
		if (r < 0)
			return r;
		*woke |= r > 0;
	}
	return 0;
}

int rec_session_loop(struct rec_session *s)
{
	uint64_t start = now_ms(), last_progress = start;
	bool stop = false;
	int err = open_set(s);

	while (!err && !stop) {
		bool woke = false;

		err = wait_once(s, &stop, &woke);
		/* Every pass: sparse data below a watermark is flushed too. */
		for (int i = 0; i < s->nr_src && !err; i++) {
			int r = s->src[i].ops->pass ?
					s->src[i].ops->pass(s->src[i].ctx) :
					0;

			if (r < 0)
				err = r;
			else if (r > 0)
				stop = true; /* its input ended */
		}
		if (err)
			break;
		if (woke)
			s->wakeups++;
		if (command_ended(s))
			stop = true;
		if (s->duration > 0 && now_ms() - start >= s->duration * 1000)
			stop = true;
		if (now_ms() - last_progress >= PROGRESS_MS) {
			last_progress = now_ms();
			for (int i = 0; i < s->nr_src; i++)
				if (s->src[i].ops->progress)
					s->src[i].ops->progress(s->src[i].ctx);
		}
	}
	return err;
}

void rec_session_close(struct rec_session *s)
{
	if (s->epfd >= 0)
		close(s->epfd);
	s->epfd = -1;
}
