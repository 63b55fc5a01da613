// SPDX-License-Identifier: MIT
/*
 * record --push against perf record: the recorder's CPU at 99 Hz
 * system-wide with -g, pushing every second to ClickHouse's and
 * Pyroscope's formats (a receiver in this process stands for both:
 * it reads each request whole and answers 200, so the encoding, the
 * gzip and the sending are all paid), against perf record -a -F 99 -g
 * writing its perf.data, in the same run, each for BENCH_PUSH_SECS
 * (default 10) with the hot workload busy beside it and short processes
 * (true) coming and going 20 times a second.  cpu_s= is wait4()'s
 * user+sys of the whole run (start-up, kallsyms and symbol tables
 * included); bytes_per_interval= what the receiver got per request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

struct receiver {
	int fd;
	unsigned long long requests, bytes;
};

/* Reads one request (head, then Content-Length bytes), answers 200. */
static void serve(struct receiver *r, int c)
{
	static char buf[1 << 16];
	size_t have = 0, body = 0;
	char *end = NULL, *cl;
	ssize_t n;

	while (!end && have < sizeof(buf) - 1) {
		n = read(c, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
	}
	if (!end)
		return;
	cl = strcasestr(buf, "Content-Length:");
	if (cl)
		body = strtoull(cl + 15, NULL, 10);
	have -= (size_t)(end + 4 - buf);
	while (have < body) {
		n = read(c, buf, sizeof(buf));
		if (n <= 0)
			return;
		have += (size_t)n;
	}
	if (strncmp(buf, "POST /?query=INSERT", 19) == 0 ||
	    strncmp(buf, "POST /ingest", 12) == 0 || body > 1000) {
		__atomic_add_fetch(&r->requests, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->bytes, body, __ATOMIC_RELAXED);
	}
	if (write(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38) < 0)
		return;
}

static void *receiver_main(void *arg)
{
	struct receiver *r = arg;

	for (;;) {
		int c = accept(r->fd, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		serve(r, c);
		close(c);
	}
}

/* Short processes, 20 a second, until killed. */
static pid_t churn(void)
{
	pid_t p = fork();

	if (p == 0) {
		for (;;) {
			pid_t t = fork();

			if (t == 0) {
				execlp("true", "true", (char *)NULL);
				_exit(127);
			}
			waitpid(t, NULL, 0);
			usleep(50000);
		}
	}
	return p;
}

void case_record_push(void)
{
	const char *s = getenv("BENCH_PUSH_SECS");
	int secs = s ? atoi(s) : 10;
	char hp[PATH_MAX], dur[16], ch[64], py[64],
		perf_f[] = "/tmp/perfring-bench-push-perf.data";
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct receiver r = { 0 };
	double ours = 0, perf = 0;
	pthread_t th;
	pid_t hot, ch_pid;
	char *hot_argv[] = { workload("hot", hp, sizeof(hp)), dur, NULL };

	if (secs < 2)
		secs = 2;
	r.fd = socket(AF_INET, SOCK_STREAM, 0);
	if (r.fd < 0 || bind(r.fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(r.fd, 64) || getsockname(r.fd, (struct sockaddr *)&a, &al) ||
	    pthread_create(&th, NULL, receiver_main, &r)) {
		printf("bench record-push error=no-receiver\n");
		return;
	}
	snprintf(ch, sizeof(ch), "clickhouse=http://127.0.0.1:%u",
		 ntohs(a.sin_port));
	snprintf(py, sizeof(py), "pyroscope=http://127.0.0.1:%u",
		 ntohs(a.sin_port));
	snprintf(dur, sizeof(dur), "%d", 3 * secs + 10);
	if (posix_spawn(&hot, hot_argv[0], NULL, NULL, hot_argv, environ)) {
		printf("bench record-push error=no-workload path=%s\n",
		       hot_argv[0]);
		return;
	}
	ch_pid = churn();
	snprintf(dur, sizeof(dur), "%d", secs);
	{
		char *o[] = { (char *)cli_path(),
			      "record",
			      "-q",
			      "-a",
			      "-F",
			      "99",
			      "-g",
			      "-o",
			      "/dev/null",
			      "--push",
			      ch,
			      "--push",
			      py,
			      "--push-every",
			      "1",
			      "--label",
			      "host=bench",
			      "--duration",
			      dur,
			      NULL };
		char *p[] = { "perf", "record", "-q", "-a",    "-F", "99", "-g",
			      "-o",   perf_f,	"--", "sleep", dur,  NULL };

		run_measured(o, &ours, NULL);
		run_measured(p, &perf, NULL);
	}
	kill(ch_pid, SIGKILL);
	kill(hot, SIGKILL);
	waitpid(ch_pid, NULL, 0);
	waitpid(hot, NULL, 0);
	unlink(perf_f);
	printf("bench record-push ours_cpu_s=%.3f perf_cpu_s=%.3f ratio=%.2f ours_cpu_pct=%.2f requests=%llu bytes_per_interval=%.0f secs=%d\n",
	       ours, perf, perf > 0 ? ours / perf : 0.0, ours * 100.0 / secs,
	       __atomic_load_n(&r.requests, __ATOMIC_RELAXED),
	       r.requests ? (double)r.bytes / (double)r.requests : 0.0, secs);
	shutdown(r.fd, SHUT_RDWR);
	close(r.fd);
	pthread_join(th, NULL);
}
