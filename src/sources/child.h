/* SPDX-License-Identifier: MIT */
/*
 * The command a recorder runs: forked first and held before exec until
 * the recorder is ready (so its very first instructions are recorded),
 * then released; an exec failure comes back through a pipe.
 */
#ifndef PERFRING_SOURCES_CHILD_H
#define PERFRING_SOURCES_CHILD_H

#include <sys/types.h>

struct held_child {
	pid_t pid;
	int go_fd; /* write end: one byte releases the command */
	int err_fd; /* read end: the exec errno, EOF when exec worked */
	int pidfd; /* readable when it exits, or -1 */
};

/* Forks @argv held before exec; @env_name=@env_value (if not NULL) is set
 * in its environment.  Returns 0 or -errno. */
int held_child_start(struct held_child *c, char *const *argv,
		     const char *env_name, const char *env_value);

/* Lets it exec.  Returns 0, or -errno of a failed exec (logged). */
int held_child_release(struct held_child *c, char *const *argv);

#endif
