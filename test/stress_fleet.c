// SPDX-License-Identifier: MIT
/*
 * Stress: record --push's threads (src/fleet/fleet.c) under ASan and TSan.
 * The test's thread plays the recorder: it feeds sample, COMM and EXIT
 * records as a ring's pieces (some split across the two pieces) and ticks
 * every few milliseconds, ending an interval every 20 ms, while one thread
 * per store (ClickHouse, Pyroscope, Parca) encodes, spools and sends to an
 * HTTP server in this process that refuses the first requests of each
 * store (503) and takes its time with others.  Each store must get every
 * interval exactly once in the end (retried, none dropped, nothing left
 * in the spool), run once with a spool directory and once in memory.
 * About 2 s (STRESS_SECS overrides).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "perfring.h"
#include "fleet/fleet.h"
#include "harness.h"
#include "stress.h"

#define REFUSE_FIRST 2 /* per store: answered 503 */

struct server {
	int fd;
	pthread_mutex_t mu;
	unsigned long taken[3], refused[3], other;
	uint64_t rng;
};

static int kind_of(const char *head)
{
	if (!strncmp(head, "POST /?query=INSERT", 19))
		return 0;
	if (!strncmp(head, "POST /ingest?", 13))
		return 1;
	if (!strncmp(head, "POST /parca.", 12))
		return 2;
	return -1; /* ClickHouse's CREATE statements */
}

static void serve(struct server *s, int c)
{
	static char buf[1 << 16];
	size_t have = 0, body = 0;
	char *end = NULL, *cl;
	const char *answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	ssize_t n;
	int k;

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
	body = cl ? strtoull(cl + 15, NULL, 10) : 0;
	k = kind_of(buf);
	for (have -= (size_t)(end + 4 - buf); have < body; have += (size_t)n) {
		n = read(c, buf, sizeof(buf));
		if (n <= 0)
			return;
	}
	pthread_mutex_lock(&s->mu);
	if (k < 0)
		s->other++;
	else if (s->refused[k] < REFUSE_FIRST) {
		s->refused[k]++;
		answer =
			"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nbusy\n";
	} else {
		s->taken[k]++;
	}
	if (rng_next(&s->rng) % 8 == 0)
		nap_us(20000); /* slow now and then */
	pthread_mutex_unlock(&s->mu);
	if (write(c, answer, strlen(answer)) < 0)
		return;
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	for (;;) {
		int c = accept(s->fd, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		serve(s, c);
		close(c);
	}
}

static void quiet_log(enum perfring_log_level l, const char *m, void *ctx)
{
	(void)l;
	(void)m;
	(void)ctx;
}

/* A record laid into a ring-like pair of pieces, split at @cut. */
static void feed(struct fleet *f, const void *rec, size_t size, size_t cut)
{
	static unsigned char ring[2][256];
	const void *ptr[2] = { ring[0], ring[1] };
	size_t len[2];

	if (cut > size)
		cut = size;
	memcpy(ring[0], rec, cut);
	memcpy(ring[1], (const char *)rec + cut, size - cut);
	len[0] = cut;
	len[1] = size - cut;
	fleet_feed_pieces(f, ptr, len, cut < size ? 2 : 1, 0, size);
}

static void run(uint64_t secs, const char *spool, unsigned short port)
{
	char urls[3][64];
	const char *sinks[3] = { urls[0], urls[1], urls[2] };
	const char *labels[] = { "host=stress", "service=s" };
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			       PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.sample_id_all = 1,
		.freq = 1,
		.sample_freq = 1000
	};
	uint64_t id = 42, rng = 7, t0 = now_ns(), fed = 0;
	struct perfring_push_opts o = { .sz = sizeof(o),
					.sinks = sinks,
					.nr_sinks = 3,
					.every = 0.02,
					.labels = labels,
					.nr_labels = 2,
					.spool = spool,
					.timeout = 5 };
	struct perfring_push_stats st = { .sz = sizeof(st) };
	struct fleet *f;

	snprintf(urls[0], sizeof(urls[0]), "clickhouse=http://127.0.0.1:%u",
		 port);
	snprintf(urls[1], sizeof(urls[1]), "pyroscope=http://127.0.0.1:%u",
		 port);
	snprintf(urls[2], sizeof(urls[2]), "parca=http://127.0.0.1:%u", port);
	CHECK_EQ(fleet_open(&o, CLOCK_MONOTONIC, &f), 0);
	CHECK_EQ(fleet_add_event(f, &a, "cpu-clock", &id, 1), 0);
	while (now_ns() - t0 < secs * 1000000000ull) {
		for (int i = 0; i < 50; i++) {
			uint32_t pid = 1000 + (uint32_t)(rng_next(&rng) % 64);
			uint64_t smp[7] = { 0,
					    id,
					    0x400000 + rng % 4096,
					    (uint64_t)pid << 32 | pid,
					    now_ns(),
					    0,
					    1000000 };
			struct perf_event_header *h = (void *)smp;

			h->type = PERF_RECORD_SAMPLE;
			h->misc = PERF_RECORD_MISC_USER;
			h->size = sizeof(smp);
			feed(f, smp, sizeof(smp), rng_next(&rng) % 80);
			fed++;
			if (rng % 16 == 0) {
				/* the thread's name, then (sometimes) its exit */
				uint64_t comm[6] = { 0 };

				h = (void *)comm;
				h->type = PERF_RECORD_COMM;
				h->size = sizeof(comm);
				comm[1] = (uint64_t)pid << 32 | pid;
				memcpy(&comm[2], "worker", 7);
				feed(f, comm, sizeof(comm), 24);
			}
		}
		fleet_tick(f);
		nap_us(2000);
	}
	fleet_close(f, &st);
	CHECK(st.samples == fed, "%llu samples of %llu",
	      (unsigned long long)st.samples, (unsigned long long)fed);
	CHECK_EQ(st.nr_sinks, 3);
	for (int k = 0; k < 3; k++) {
		const struct perfring_push_sink_stats *s = &st.sink[k];

		CHECK(s->sent == s->intervals && s->intervals == st.intervals &&
			      !s->dropped && !s->pending && s->failures >= 1,
		      "%s: %llu of %llu intervals sent, %llu dropped, %llu pending, %llu failures (%s)",
		      s->name, (unsigned long long)s->sent,
		      (unsigned long long)s->intervals,
		      (unsigned long long)s->dropped,
		      (unsigned long long)s->pending,
		      (unsigned long long)s->failures, s->last_error);
	}
	printf("stress_fleet: %s: %llu intervals, %llu samples, each store retried and took all\n",
	       spool ? "spool" : "memory", (unsigned long long)st.intervals,
	       (unsigned long long)st.samples);
}

int main(void)
{
	struct server s = { .rng = 99 };
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	const char *env = getenv("STRESS_SECS");
	uint64_t secs = env ? strtoull(env, NULL, 10) : 1;
	pthread_t th;
	char spool[4200];

	perfring_set_log(quiet_log, NULL, PERFRING_LOG_WARN);
	pthread_mutex_init(&s.mu, NULL);
	s.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(s.fd >= 0 && !bind(s.fd, (struct sockaddr *)&a, sizeof(a)) &&
		      !listen(s.fd, 64) &&
		      !getsockname(s.fd, (struct sockaddr *)&a, &al),
	      "a local listening socket: %s", strerror(errno));
	CHECK_EQ(pthread_create(&th, NULL, server_main, &s), 0);
	snprintf(spool, sizeof(spool), "%s/spool", test_tmpdir("stress-fleet"));
	run(secs ? secs : 1, spool, ntohs(a.sin_port));
	memset(s.refused, 0, sizeof(s.refused));
	run(secs ? secs : 1, NULL, ntohs(a.sin_port));
	shutdown(s.fd, SHUT_RDWR);
	close(s.fd);
	pthread_join(th, NULL);
	return 0;
}
