// SPDX-License-Identifier: MIT
/*
 * The pager, as perf, git and man page their output: on a terminal only,
 * $PERFRING_PAGER, then $PAGER, else "less" with LESS=FRSX (quit when it
 * fits, colours, no wrapping, no screen clearing) unless LESS is set;
 * "" or "cat" pages nothing.  The command's stdout becomes a pipe to it,
 * and the command waits for it before exiting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

static pid_t pager_pid = -1;

static void pager_wait(void)
{
	int status;

	if (pager_pid < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	/* the pager reads until our end closes */
	close(STDOUT_FILENO);
	while (waitpid(pager_pid, &status, 0) < 0 && errno == EINTR)
		;
	pager_pid = -1;
}

const char *pager_command(void)
{
	const char *p = getenv("PERFRING_PAGER");

	if (!p)
		p = getenv("PAGER");
	if (!p)
		p = "less";
	if (!*p || !strcmp(p, "cat"))
		return NULL;
	return p;
}

bool pager_start(bool no_pager)
{
	const char *cmd;
	int fds[2];
	pid_t pid;

	if (no_pager || pager_pid >= 0 || !isatty(STDOUT_FILENO))
		return false;
	cmd = pager_command();
	if (!cmd || pipe(fds))
		return false;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return false;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRSX", 1);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		fprintf(stderr, "%s: pager %s: %s\n", prog, cmd,
			strerror(errno));
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	close(fds[0]);
	close(fds[1]);
	pager_pid = pid;
	atexit(pager_wait);
	/* the pager owns the terminal: no progress line over it */
	perfring_set_read_progress(NULL, NULL);
	return true;
}

bool no_pager_arg(int *argc, char **argv)
{
	bool found = false;
	int j = 1;

	/* --no-pager, before "--" (a recorded command's own is its own) */
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[j++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--no-pager")) {
			found = true;
			continue;
		}
		argv[j++] = argv[i];
	}
	*argc = j;
	argv[j] = NULL;
	return found;
}
