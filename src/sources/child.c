// SPDX-License-Identifier: MIT
/* The command a recorder runs, held before exec (see child.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../common/log.h"
#include "child.h"

PR_HIDDEN int held_child_start(struct held_child *c, char *const *argv,
			       const char *env_name, const char *env_value)
{
	int go[2], errp[2], err;

	c->pid = 0;
	c->go_fd = c->err_fd = c->pidfd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		goto close_go;
	}
	c->pid = fork();
	if (c->pid < 0) {
		err = -errno;
		c->pid = 0;
		close(errp[0]);
		close(errp[1]);
		goto close_go;
	}
	if (c->pid == 0) {
		char b;
		int e;

		close(go[1]);
		close(errp[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* the recorder gave up */
		if (env_name && env_value) {
			setenv(env_name, env_value, 1);
			/* The recorder promises the command's events whole:
			 * a full ring waits for it unless the user chose
			 * (PERFRING_MODE=drop, shared, ...; design.md 10). */
			setenv("PERFRING_MODE", "block", 0);
		}
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	c->go_fd = go[1];
	c->err_fd = errp[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	return 0;
close_go:
	close(go[0]);
	close(go[1]);
	return err;
}

PR_HIDDEN int held_child_release(struct held_child *c, char *const *argv)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	n = read(c->err_fd, &e, sizeof(e)); /* EOF: exec worked */
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		pr_err("cannot run '%s': %s", argv[0], strerror(e));
		return -e;
	}
	return 0;
}
