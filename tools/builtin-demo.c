// SPDX-License-Identifier: MIT
/*
 * perfring demo: a producer process writes N checked records into a named
 * ring, this process consumes them and checks that every record arrived
 * intact and in order, or was counted lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "parse-options.h"

/* A demo record: the stream the producer writes and the consumer checks. */
#define DEMO_RECORD_TYPE 0x4000 /* in perf's "user" range, above 64 */
struct demo_record {
	struct perf_event_header header;
	uint64_t time; /* perfring_clock_fast_ns() */
	uint64_t seq;
	uint64_t check; /* seq ^ time ^ constant */
	uint64_t payload[]; /* seq repeated, to reach the requested size */
};
#define DEMO_KEY 0x9e3779b97f4a7c15ull

static uint64_t now_ns(void)
{
	return perfring_clock_ns();
}

/* Waits (politely) until @size bytes are free: the no-loss producer. */
static void wait_space(struct perfring_ring *ring, uint32_t size)
{
	for (int spins = 0; perfring_ring_space(ring) < (int64_t)size + 24;
	     spins++)
		if (spins > 64)
			usleep(50);
}

static int demo_producer(const char *path, uint64_t count, uint32_t size,
			 bool drop)
{
	struct perfring_ring *ring;
	struct perfring_output h;
	uint64_t seq, dropped = 0;
	int err;

	err = perfring_ring_attach(path, PERFRING_ROLE_PRODUCER, &ring);
	if (err) {
		fprintf(stderr, "%s: producer: cannot attach %s: %s\n", prog,
			path, strerror(-err));
		return 1;
	}
	for (seq = 0; seq < count; seq++) {
		struct demo_record *rec;

		if (!drop)
			wait_space(ring, size);
		err = perfring_output_begin(&h, ring, size);
		if (err) {
			/* Ring full: the record is counted as lost and the
			 * consumer gets a PERF_RECORD_LOST; go on. */
			dropped++;
			continue;
		}
		rec = h.data;
		rec->header.type = DEMO_RECORD_TYPE;
		rec->header.misc = 0;
		rec->header.size = (uint16_t)size;
		rec->time = perfring_clock_fast_ns();
		rec->seq = seq;
		rec->check = seq ^ rec->time ^ DEMO_KEY;
		for (uint32_t i = 0; i < (size - sizeof(*rec)) / 8; i++)
			rec->payload[i] = seq;
		perfring_output_end(&h);
	}
	/* A final record carries any pending lost count to the consumer. */
	struct perf_event_header end = { PERFRING_RECORD_FINISHED_ROUND, 0, 8 };

	wait_space(ring, sizeof(end));
	perfring_ring_emit(ring, &end, sizeof(end));
	perfring_ring_flush(ring);
	perfring_ring_destroy(ring);
	(void)dropped;
	return 0;
}

struct demo_state {
	uint64_t records, bytes, lost, next_seq, bad, last_time;
	uint64_t lost_unmatched; /* LOST count not yet matched by a seq gap */
	uint64_t mismatched; /* gaps that disagree with their LOST record */
	uint64_t time_backwards;
	int finished;
	uint32_t size;
};

static int demo_check(const struct perf_event_header *hdr, size_t size,
		      void *ctx)
{
	struct demo_state *st = ctx;
	const struct demo_record *rec = (const void *)hdr;

	st->bytes += size;
	if (hdr->type == PERF_RECORD_LOST) {
		const struct perfring_lost_record *l = (const void *)hdr;

		st->lost += l->lost;
		st->lost_unmatched += l->lost;
		return 0;
	}
	if (hdr->type == PERFRING_RECORD_FINISHED_ROUND) {
		st->finished = 1;
		return 0;
	}
	st->records++;
	if (hdr->type != DEMO_RECORD_TYPE || size != st->size ||
	    rec->check != (rec->seq ^ rec->time ^ DEMO_KEY)) {
		st->bad++;
		return 0;
	}
	for (uint32_t i = 0; i < (size - sizeof(*rec)) / 8; i++)
		if (rec->payload[i] != rec->seq) {
			st->bad++;
			return 0;
		}
	/* Every gap must be announced, exactly, by the LOST in front. */
	if (rec->seq - st->next_seq != st->lost_unmatched)
		st->mismatched++;
	st->lost_unmatched = 0;
	if (rec->time < st->last_time)
		st->time_backwards++;
	st->last_time = rec->time;
	st->next_seq = rec->seq + 1;
	return 0;
}

struct demo_args {
	uint64_t count, ring_size;
	uint32_t size;
	const char *producer_path; /* set in the producer process */
	bool drop;
};

static void opt_record_size(void *args, const char *arg)
{
	((struct demo_args *)args)->size =
		(uint32_t)parse_size(arg, "--record-size");
}

#define CLI_ARGS struct demo_args
static const struct cli_option demo_options[] = {
	OPT_SIZE('n', "records", count, "RECORDS",
		 "how many records the producer writes"),
	OPT_CALLBACK('s', "record-size", "RECORD_BYTES", opt_record_size,
		     "bytes a record (a multiple of 8 from 32 to 65528)"),
	OPT_SIZE('m', "mmap-pages", ring_size, "RING_BYTES",
		 "the ring's size (pages below 4096, as perf's -m)"),
	OPT_BOOLEAN(0, "drop", drop,
		    "the producer drops records when the ring is full\n"
		    "(and counts them) instead of waiting"),
	OPT_STRING(0, "producer", producer_path, "PATH",
		   "internal: the producer process", .hidden = true),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command demo_command = {
	.name = "demo",
	.usage =
		(const char *const[]){
			"[-n RECORDS] [-s RECORD_BYTES] [-m RING_BYTES] [--drop]",
			NULL },
	.options = demo_options,
	.notes =
		"Two processes and a ring: a producer process writes checked records,\n"
		"this one reads and checks them.\n",
};

/* Returns -1 to go on; usage errors exit(2). */
static int demo_parse(int argc, char **argv, struct demo_args *a)
{
	cli_parse(&demo_command, argc, argv, a, NULL);
	if (a->size < sizeof(struct demo_record) || a->size % 8 ||
	    a->size > PERFRING_RECORD_MAX)
		die_usage(
			"record size must be a multiple of 8 from 32 to 65528 (%s)",
			"--record-size");
	/* -m takes pages like perf when it has no suffix and is small. */
	if (a->ring_size < 4096)
		a->ring_size *= (uint64_t)sysconf(_SC_PAGESIZE);
	return -1;
}

/* The producer: this program again, in its own process. */
static pid_t demo_spawn(const char *path, const struct demo_args *a)
{
	pid_t pid = fork();

	if (pid == 0) {
		char n[32], s[32];

		snprintf(n, sizeof(n), "%" PRIu64, a->count);
		snprintf(s, sizeof(s), "%u", a->size);
		execl("/proc/self/exe", prog, "demo", "--producer", path, "-n",
		      n, "-s", s, a->drop ? "--drop" : "-n", a->drop ? "" : n,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Consumes until the producer's final record or its exit; returns its pid,
 * or 0 when it was reaped here.
 */
static pid_t demo_consume(struct perfring_ring *ring, pid_t pid,
			  struct demo_state *st, bool tty)
{
	uint64_t last_progress = 0;
	int status;

	for (;;) {
		int n = perfring_ring_consume(ring, demo_check, st);

		if (n < 0 && n != -EBADMSG) {
			fprintf(stderr, "%s: read: %s\n", prog, strerror(-n));
			break;
		}
		if (st->finished)
			break;
		if (tty && now_ns() - last_progress > 250000000ull) {
			last_progress = now_ns();
			fprintf(stderr,
				"\r[ %" PRIu64 " records, %" PRIu64 " lost ]",
				st->records, st->lost);
		}
		if (n == 0 && waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0; /* producer gone: drain once more and stop */
			perfring_ring_consume(ring, demo_check, st);
			break;
		}
		if (n == 0)
			perfring_ring_wait(ring, 100);
	}
	return pid;
}

/* The verdict: 0 when every record arrived or was counted lost. */
static int demo_report(struct perfring_ring *ring, const struct demo_state *st,
		       uint64_t count, uint64_t elapsed_ns)
{
	struct perfring_ring_stats rs = { .sz = sizeof(rs) };
	double secs = (double)elapsed_ns / 1e9;

	perfring_ring_stats(ring, &rs);
	printf("demo: %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
	       " lost, %" PRIu64 " corrupt, %" PRIu64
	       " unaccounted gaps, %" PRIu64 " wake-ups\n",
	       st->records, st->bytes, st->lost, st->bad, st->mismatched,
	       rs.wakeups);
	printf("demo: %.3f s, %.2f M records/s, %.1f MB/s\n", secs,
	       (double)st->records / secs / 1e6,
	       (double)st->bytes / secs / 1e6);
	if (st->records + st->lost != count || st->bad || st->mismatched ||
	    st->lost_unmatched != count - st->next_seq || st->time_backwards) {
		printf("demo: FAILED: %" PRIu64 " + %" PRIu64
		       " lost != %" PRIu64 " sent, or bad records\n",
		       st->records, st->lost, count);
		return 1;
	}
	printf("demo: ok: every record arrived intact and in order, or was counted lost\n");
	return 0;
}

int cmd_demo(int argc, char **argv)
{
	struct demo_args a = { .count = 10000000,
			       .ring_size = 1 << 20,
			       .size = 32 };
	char dir[] = "/tmp/perfring-demo.XXXXXX", path[PATH_MAX];
	struct perfring_ring *ring;
	struct demo_state st = { 0 };
	bool tty = isatty(STDERR_FILENO);
	uint64_t t0, t1;
	int err, status;
	pid_t pid;

	err = demo_parse(argc, argv, &a);
	if (err >= 0)
		return err;
	if (a.producer_path)
		return demo_producer(a.producer_path, a.count, a.size, a.drop);

	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, dir,
			strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ring", dir);
	PERFRING_OPTS(perfring_ring_opts, ropts, .path = path,
		      .data_size = a.ring_size, .role = PERFRING_ROLE_CONSUMER,
		      .watermark = a.ring_size / 4, .id = 1);
	err = perfring_ring_create(&ropts, &ring);
	if (err) {
		fprintf(stderr, "%s: cannot create ring %s: %s\n", prog, path,
			strerror(-err));
		rmdir(dir);
		return 1;
	}
	st.size = a.size;
	printf("demo: ring %s, %" PRIu64 " KiB data, %" PRIu64
	       " records of %u bytes, producer in another process (%s)\n",
	       path, a.ring_size >> 10, a.count, a.size,
	       a.drop ? "drops when full" : "waits when full");
	fflush(stdout);
	t0 = now_ns();
	pid = demo_spawn(path, &a);
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		err = 1;
	} else {
		pid = demo_consume(ring, pid, &st, tty);
		t1 = now_ns();
		if (tty)
			fprintf(stderr, "\r\033[K");
		if (pid > 0)
			waitpid(pid, &status, 0);
		err = demo_report(ring, &st, a.count, t1 - t0);
	}
	perfring_ring_destroy(ring);
	perfring_ring_remove(path);
	rmdir(dir);
	return err ? 1 : 0;
}
