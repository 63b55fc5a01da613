// SPDX-License-Identifier: MIT
/* What the perfring commands share (see cli.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

const char *prog = "perfring";
int cli_cmdline_argc;
char **cli_cmdline_argv;

void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s help'.\n", prog);
	exit(2);
}

double parse_seconds(const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > 0))
		die_usage("--duration takes seconds: %s", arg);
	return v;
}

uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		die_usage("bad size for %s", what);
	switch (*end) {
	case 'G':
	case 'g':
		v <<= 10; /* fall through */
	case 'M':
	case 'm':
		v <<= 10; /* fall through */
	case 'K':
	case 'k':
		v <<= 10;
		end++;
		break;
	case 'B':
	case 'b':
		end++;
		break;
	default:
		break;
	}
	if (*end)
		die_usage("bad size suffix for %s", what);
	return v;
}

uint64_t parse_mmap(const char *arg)
{
	uint64_t v = parse_size(arg, "-m");
	bool has_suffix = arg[0] &&
			  !isdigit((unsigned char)arg[strlen(arg) - 1]);

	if (!has_suffix)
		v *= (uint64_t)sysconf(_SC_PAGESIZE);
	if (!v || (v & (v - 1)))
		die_usage(
			"-m must be a power of two (pages, or a size like 512K or 4M): %s",
			arg);
	return v;
}

bool has_arg(int argc, char **argv, const char *a)
{
	size_t n = strlen(a);

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], a, n) &&
		    (argv[i][n] == 0 || argv[i][n] == '='))
			return true;
	return false;
}

bool input_given(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-i") || !strncmp(argv[i], "-i", 2) ||
		    !strncmp(argv[i], "--input", 7))
			return true;
	return false;
}

const char *symfs_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		fprintf(stderr,
			"%s: warning: --symfs %s: %s: no object or debug file will be found under it\n",
			prog, dir, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		fprintf(stderr,
			"%s: warning: --symfs %s: not a directory: no object or debug file will be found under it\n",
			prog, dir);
	return dir;
}

bool stdin_is_fifo(void)
{
	struct stat st;

	return !fstat(STDIN_FILENO, &st) && S_ISFIFO(st.st_mode);
}

static int control_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	char c = sig == SIGUSR2 ? 's' : 'q';
	int saved = errno;

	if (write(control_pipe[1], &c, 1) < 0) {
		/* nothing to do: the pipe is full of commands already */
	}
	errno = saved;
}

void control_stop(void)
{
	on_signal(SIGTERM);
}

/*
 * 'q' stops: the recording ends and its file is completed; 's' asks for a
 * snapshot.  SIGHUP stays ignored when it was (nohup: a recording that
 * must outlive its terminal).
 */
int control_setup(bool snapshots)
{
	struct sigaction sa = { .sa_handler = on_signal }, old;

	if (pipe2(control_pipe, O_CLOEXEC | O_NONBLOCK)) {
		perror("pipe");
		return -1;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!sigaction(SIGHUP, NULL, &old) && old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	if (snapshots)
		sigaction(SIGUSR2, &sa, NULL);
	return control_pipe[0];
}
