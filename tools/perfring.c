// SPDX-License-Identifier: MIT
/*
 * perfring command-line tool.  Argument parsing and printing only: all the
 * work goes through the public API in <perfring.h>.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfring.h>
#include <perfring/tools.h>

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

static const char *prog = "perfring";
static int verbose;

static void log_to_stderr(enum perfring_log_level level, const char *msg,
			  void *ctx)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };

	(void)ctx;
	fprintf(stderr, "%s: %s: %s\n", prog, names[level], msg);
}

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s help'.\n", prog);
	exit(2);
}

/* Sizes like perf's -m: a number with an optional B/K/M/G suffix. */
/* --duration: seconds, more than 0. */
static double parse_seconds(const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > 0))
		die_usage("--duration takes seconds: %s", arg);
	return v;
}

static uint64_t parse_size(const char *s, const char *what)
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

static int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "record-size", required_argument, NULL, 's' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "producer", required_argument, NULL, 'P' },
		{ "drop", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t count = 10000000, ring_size = 1 << 20;
	uint32_t size = 32;
	const char *producer_path = NULL;
	bool drop = false;
	char dir[] = "/tmp/perfring-demo.XXXXXX", path[PATH_MAX];
	struct perfring_ring *ring;
	struct demo_state st = { 0 };
	uint64_t t0, t1, last_progress = 0;
	int c, err, status;
	bool tty = isatty(STDERR_FILENO);
	pid_t pid;

	while ((c = getopt_long(argc, argv, "n:s:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			count = parse_size(optarg, "--records");
			break;
		case 's':
			size = (uint32_t)parse_size(optarg, "--record-size");
			break;
		case 'm':
			ring_size = parse_size(optarg, "--mmap-pages");
			break;
		case 'P':
			producer_path = optarg;
			break;
		case 'D':
			drop = true;
			break;
		default:
			printf("usage: %s demo [-n RECORDS] [-s RECORD_BYTES] [-m RING_BYTES] [--drop]\n",
			       prog);
			return c == 'h' ? 0 : 2;
		}
	}
	if (size < sizeof(struct demo_record) || size % 8 ||
	    size > PERFRING_RECORD_MAX)
		die_usage(
			"record size must be a multiple of 8 from 32 to 65528 (%s)",
			"--record-size");
	/* -m takes pages like perf when it has no suffix and is small. */
	if (ring_size < 4096)
		ring_size *= (uint64_t)sysconf(_SC_PAGESIZE);
	if (producer_path)
		return demo_producer(producer_path, count, size, drop);

	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, dir,
			strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ring", dir);
	PERFRING_OPTS(perfring_ring_opts, ropts, .path = path,
		      .data_size = ring_size, .role = PERFRING_ROLE_CONSUMER,
		      .watermark = ring_size / 4, .id = 1);
	err = perfring_ring_create(&ropts, &ring);
	if (err) {
		fprintf(stderr, "%s: cannot create ring %s: %s\n", prog, path,
			strerror(-err));
		rmdir(dir);
		return 1;
	}
	st.size = size;
	printf("demo: ring %s, %" PRIu64 " KiB data, %" PRIu64
	       " records of %u bytes, producer in another process (%s)\n",
	       path, ring_size >> 10, count, size,
	       drop ? "drops when full" : "waits when full");
	fflush(stdout);
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		char n[32], s[32];

		snprintf(n, sizeof(n), "%" PRIu64, count);
		snprintf(s, sizeof(s), "%u", size);
		execl("/proc/self/exe", prog, "demo", "--producer", path, "-n",
		      n, "-s", s, drop ? "--drop" : "-n", drop ? "" : n,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		err = 1;
		goto out;
	}
	for (;;) {
		int n = perfring_ring_consume(ring, demo_check, &st);

		if (n < 0 && n != -EBADMSG) {
			fprintf(stderr, "%s: read: %s\n", prog, strerror(-n));
			break;
		}
		if (st.finished)
			break;
		if (tty && now_ns() - last_progress > 250000000ull) {
			last_progress = now_ns();
			fprintf(stderr,
				"\r[ %" PRIu64 " records, %" PRIu64 " lost ]",
				st.records, st.lost);
		}
		if (n == 0 && waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0; /* producer gone: drain once more and stop */
			perfring_ring_consume(ring, demo_check, &st);
			break;
		}
		if (n == 0)
			perfring_ring_wait(ring, 100);
	}
	t1 = now_ns();
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (pid > 0)
		waitpid(pid, &status, 0);
	{
		struct perfring_ring_stats rs = { .sz = sizeof(rs) };
		double secs = (double)(t1 - t0) / 1e9;

		perfring_ring_stats(ring, &rs);
		printf("demo: %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
		       " lost, %" PRIu64 " corrupt, %" PRIu64
		       " unaccounted gaps, %" PRIu64 " wake-ups\n",
		       st.records, st.bytes, st.lost, st.bad, st.mismatched,
		       rs.wakeups);
		printf("demo: %.3f s, %.2f M records/s, %.1f MB/s\n", secs,
		       (double)st.records / secs / 1e6,
		       (double)st.bytes / secs / 1e6);
		if (st.records + st.lost != count || st.bad || st.mismatched ||
		    st.lost_unmatched != count - st.next_seq ||
		    st.time_backwards) {
			printf("demo: FAILED: %" PRIu64 " + %" PRIu64
			       " lost != %" PRIu64 " sent, or bad records\n",
			       st.records, st.lost, count);
			err = 1;
		} else {
			printf("demo: ok: every record arrived intact and in order, or was counted lost\n");
		}
	}
out:
	perfring_ring_destroy(ring);
	perfring_ring_remove(path);
	rmdir(dir);
	return err ? 1 : 0;
}

static int cmd_ring_stat(int argc, char **argv)
{
	const struct perf_event_mmap_page *pc;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct perfring_ring *ring;
	int err;

	if (argc != 2) {
		printf("usage: %s ring-stat RING_PATH\n", prog);
		return 2;
	}
	/*
	 * Attach as a consumer only if nobody is consuming; a producer
	 * handle would be refused if one is live, so try consumer first.
	 */
	err = perfring_ring_attach(argv[1], PERFRING_ROLE_CONSUMER, &ring);
	if (err == -EBUSY)
		err = perfring_ring_attach(argv[1], PERFRING_ROLE_PRODUCER,
					   &ring);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[1], strerror(-err));
		return 1;
	}
	pc = perfring_ring_control(ring);
	perfring_ring_stats(ring, &st);
	printf("ring:         %s\n", argv[1]);
	printf("mode:         %s%s\n",
	       st.flags & PERFRING_MODE_OVERWRITE ? "overwrite (backward)" :
						    "forward",
	       st.flags & PERFRING_MODE_MULTI_PRODUCER ? ", multi-producer" :
							 "");
	printf("data_offset:  %llu\n", (unsigned long long)pc->data_offset);
	printf("data_size:    %" PRIu64 "\n", st.data_size);
	printf("data_head:    %" PRIu64 "\n", st.head);
	printf("data_tail:    %" PRIu64 "\n", st.tail);
	if (!(st.flags & PERFRING_MODE_OVERWRITE))
		printf("waiting:      %" PRIu64 " bytes\n", st.head - st.tail);
	printf("lost:         %" PRIu64 " (%" PRIu64 " not yet reported)\n",
	       st.lost_total, st.lost_pending);
	printf("wake-ups:     %" PRIu64 "\n", st.wakeups);
	printf("paused:       %s\n", st.paused ? "yes" : "no");
	perfring_ring_destroy(ring);
	return 0;
}

/* ---- record ----------------------------------------------------------- */

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

/*
 * The recorders' control pipe: SIGINT/SIGTERM/SIGHUP write 'q' (stop: the
 * recording ends and its file is completed), SIGUSR2 's' (snapshot) when
 * @snapshots.  SIGHUP stays ignored when it was (nohup: a recording that
 * must outlive its terminal).  Returns the read end, or -1.
 */
static int control_setup(bool snapshots)
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

static void record_progress(const struct perfring_record_stats *st, void *ctx)
{
	(void)ctx;
	if (st->app_rings)
		fprintf(stderr,
			"\r[ recording: %" PRIu64 " samples, %" PRIu64
			" application events, %.2f MB, %" PRIu64
			" lost ]\033[K",
			st->samples, st->app_events, (double)st->bytes / 1e6,
			st->lost + st->app_lost);
	else
		fprintf(stderr,
			"\r[ recording: %" PRIu64 " samples, %.2f MB, %" PRIu64
			" lost ]\033[K",
			st->samples, (double)st->bytes / 1e6, st->lost);
}

/* -m: pages (a power of two) like perf, or a size with a B/K/M/G suffix. */
static uint64_t parse_mmap(const char *arg)
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

/* ---- record --tracefs (trace.dat through the mapped ftrace buffers) ---- */

static void tracefs_progress(const struct perfring_tracefs_stats *st, void *ctx)
{
	(void)ctx;
	fprintf(stderr,
		"\r[ recording: %" PRIu64 " events, %" PRIu64
		" pages, %.2f MB ]\033[K",
		st->events, st->pages, (double)st->bytes / 1e6);
}

static int cmd_record_tracefs(int argc, char **argv)
{
	enum { OPT_TRACEFS = 256, OPT_SUBBUF, OPT_PERCENT, OPT_NO_MMAP };
	static const struct option opts[] = {
		{ "tracefs", no_argument, NULL, OPT_TRACEFS },
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "buffer-size", required_argument, NULL, 'm' },
		{ "subbuf-size", required_argument, NULL, OPT_SUBBUF },
		{ "buffer-percent", required_argument, NULL, OPT_PERCENT },
		{ "no-mmap", no_argument, NULL, OPT_NO_MMAP },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *events[64];
	static struct perfring_tracefs_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_tracefs_opts, to, .control_fd = -1,
		      .buffer_percent = -1);
	bool quiet = false;
	int c, err, nev = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "+e:aC:m:o:qD:h", opts, NULL)) !=
	       -1) {
		switch (c) {
		case OPT_TRACEFS:
			break;
		case 'e':
			if (nev == 64)
				die_usage("at most 64 events (%s)", optarg);
			events[nev++] = optarg;
			break;
		case 'a':
			to.all_cpus = true;
			break;
		case 'C':
			to.cpu_list = optarg;
			break;
		case 'm':
			to.buffer_bytes = parse_mmap(optarg);
			break;
		case OPT_SUBBUF: {
			uint64_t v = parse_size(optarg, "--subbuf-size");

			if (isdigit((unsigned char)optarg[strlen(optarg) - 1]))
				v *= 1024; /* trace-cmd: kilobytes */
			if (v < 4096 || (v & (v - 1)) || v > (1u << 27))
				die_usage(
					"--subbuf-size must be a power of two from 4K: %s",
					optarg);
			to.subbuf_bytes = (uint32_t)v;
			break;
		}
		case OPT_PERCENT:
			to.buffer_percent = (int)strtol(optarg, &end, 10);
			if (*end || to.buffer_percent < 0 ||
			    to.buffer_percent > 100)
				die_usage("--buffer-percent takes 0..100: %s",
					  optarg);
			break;
		case OPT_NO_MMAP:
			to.no_mmap = true;
			break;
		case 'o':
			to.output = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'D':
			to.duration = parse_seconds(optarg);
			break;
		case 'h':
			printf("usage: %s record --tracefs -e SYS:EVENT [-e ...] [-a] [-C CPUS] [-m SIZE]\n"
			       "                [--subbuf-size SIZE] [--buffer-percent N] [--no-mmap]\n"
			       "                [-o trace.dat] [-q] [--duration SECS] [-- COMMAND [ARGS]]\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	to.events = events;
	to.nr_events = nev;
	to.argv = optind < argc ? &argv[optind] : NULL;
	to.control_fd = control_setup(false);
	if (to.control_fd < 0)
		return 1;
	if (!quiet && isatty(STDERR_FILENO))
		to.progress = tracefs_progress;
	err = perfring_record_tracefs(&to, &st);
	if (to.progress)
		fprintf(stderr, "\r\033[K");
	/* A failed write (a full disk) kept the file up to its last page:
	 * the figures say what is in it. */
	if (!quiet && (!err || (st.write_error && st.file_bytes))) {
		fprintf(stderr,
			"[ perfring record: instance %s, %s consumer, %u-byte sub-buffers, woken up %" PRIu64
			" times ]\n",
			st.instance, st.mapped ? "mmap" : "read()",
			st.subbuf_size, st.wakeups);
		fprintf(stderr,
			"  cpu     events      pages        bytes       lost  lost-pages   kernel-entries\n");
		for (uint32_t i = 0; i < st.nr_cpus; i++)
			fprintf(stderr,
				"  %3u %10" PRIu64 " %10" PRIu64 " %12" PRIu64
				" %10" PRIu64 " %11" PRIu64 " %16" PRIu64 "\n",
				i, st.cpu[i].events, st.cpu[i].pages,
				st.cpu[i].bytes, st.cpu[i].lost,
				st.cpu[i].lost_pages, st.cpu[i].entries);
		fprintf(stderr,
			"[ perfring record: wrote %.3f MB %s: events=%" PRIu64
			" pages=%" PRIu64 " lost=%" PRIu64
			" kernel_entries=%" PRIu64 " kernel_read=%" PRIu64
			" zero_copy_pages=%" PRIu64 " ]\n",
			(double)st.file_bytes / 1e6,
			to.output ? to.output : "trace.dat", st.events,
			st.pages, st.lost, st.entries, st.kernel_read,
			st.zero_copy_pages);
		if (st.lost)
			fprintf(stderr,
				"Warning: the kernel dropped %" PRIu64
				" events (%" PRIu64
				" pages marked): use a larger -m or a lower --buffer-percent.\n",
				st.lost, st.lost_pages);
	}
	if (err && st.write_error && st.file_bytes) {
		fprintf(stderr,
			"%s: record --tracefs: writing %s failed (%s): recording stopped; it keeps %" PRIu64
			" events in %" PRIu64 " pages (%.3f MB); %" PRIu64
			" events the kernel recorded are not in it (%" PRIu64
			" pages could not be written)\n",
			prog, to.output ? to.output : "trace.dat",
			strerror(-st.write_error), st.events, st.pages,
			(double)st.file_bytes / 1e6, st.unsaved_events,
			st.unsaved_pages);
		return 1;
	}
	if (err) {
		fprintf(stderr, "%s: record --tracefs: %s\n", prog,
			strerror(-err));
		return 1;
	}
	if (st.child_status >= 0 && WIFEXITED(st.child_status))
		return WEXITSTATUS(st.child_status);
	return 0;
}

static bool wants_tracefs(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--tracefs"))
			return true;
	return false;
}

/* ---- record --replay-cs / -e cs_etm// (AUX area trace) ---------------- */

static bool aux_pmu_event(const char *e)
{
	static const char *const pmus[] = { "cs_etm", "cs-etm", "intel_pt",
					    "arm_spe" };

	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++)
		if (!strncmp(e, pmus[i], strlen(pmus[i])))
			return true;
	return false;
}

static bool wants_aux(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strncmp(argv[i], "--replay-cs", 11))
			return true;
		if ((!strcmp(argv[i], "-e") || !strcmp(argv[i], "--event")) &&
		    i + 1 < argc && aux_pmu_event(argv[i + 1]))
			return true;
		if (!strncmp(argv[i], "-e", 2) && aux_pmu_event(argv[i] + 2))
			return true;
	}
	return false;
}

static void aux_progress(const struct perfring_record_aux_stats *st, void *ctx)
{
	(void)ctx;
	fprintf(stderr,
		"\r[ recording AUX: %.2f MB trace in %" PRIu64
		" chunks, %" PRIu64 " snapshots, %" PRIu64
		" bytes lost ]\033[K",
		(double)st->aux_bytes / 1e6, st->aux_chunks, st->snapshots,
		st->lost_bytes);
}

static int cmd_record_aux(int argc, char **argv, int full_argc,
			  char **full_argv)
{
	enum {
		OPT_REPLAY = 256,
		OPT_RATE,
		OPT_LOOPS,
		OPT_CHUNK,
		OPT_CPU,
		OPT_OVERWRITE,
		OPT_CSV
	};
	static const struct option opts[] = {
		{ "replay-cs", required_argument, NULL, OPT_REPLAY },
		{ "event", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "loops", required_argument, NULL, OPT_LOOPS },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "replay-cpu", required_argument, NULL, OPT_CPU },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "snapshot", optional_argument, NULL, 'S' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "cs-header-version", required_argument, NULL, OPT_CSV },
		{ "duration", required_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_record_aux_opts, o, .control_fd = -1,
		      .replay_cpu = -1);
	struct perfring_record_aux_stats st = { .sz = sizeof(st) };
	bool quiet = false;
	char *end, *comma;
	int c, err;

	while ((c = getopt_long(argc, argv, "+e:o:m:S::D:qh", opts, NULL)) !=
	       -1) {
		switch (c) {
		case OPT_REPLAY:
			o.replay = optarg;
			break;
		case 'e':
			o.event = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case OPT_RATE:
			o.rate = parse_size(optarg, "--rate");
			break;
		case OPT_LOOPS:
			o.loops = strtoull(optarg, &end, 10);
			if (*end || !o.loops)
				die_usage("--loops takes a count: %s", optarg);
			break;
		case OPT_CHUNK:
			o.chunk = parse_size(optarg, "--chunk");
			break;
		case OPT_CPU:
			o.replay_cpu = (int)strtol(optarg, &end, 10);
			if (*end || o.replay_cpu < 0)
				die_usage("--replay-cpu takes a CPU: %s",
					  optarg);
			break;
		case 'm': /* perf's -m pages[,auxpages] */
			comma = strchr(optarg, ',');
			if (comma) {
				*comma = 0;
				o.aux_bytes = parse_mmap(comma + 1);
			}
			if (*optarg)
				o.data_bytes = parse_mmap(optarg);
			break;
		case 'S': /* -S[size], --snapshot[=[e][size]] */
			o.snapshot = true;
			if (optarg && *optarg == 'e') {
				o.snapshot_on_exit = true;
				optarg++;
			}
			if (optarg && *optarg)
				o.snapshot_size = parse_size(optarg, "-S");
			break;
		case OPT_OVERWRITE:
			o.overwrite = true;
			break;
		case OPT_CSV:
			o.cs_header_version = atoi(optarg);
			break;
		case 'D':
			o.duration = parse_seconds(optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			printf("usage: %s record --replay-cs SNAPSHOT_DIR|PERF_DATA [-o FILE] [--rate BYTES/S]\n"
			       "                [--loops N] [--chunk SIZE] [--replay-cpu CPU] [-m DATA[,AUX]]\n"
			       "                [-S[SIZE] | --snapshot[=e][SIZE]] [--overwrite]\n"
			       "                [--cs-header-version 1|2] [--duration SECS] [-q]\n"
			       "       %s record -e cs_etm// | intel_pt// | arm_spe// ...\n",
			       prog, prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc && o.replay)
		die_usage("record --replay-cs runs no command: %s",
			  argv[optind]);
	o.cmdline_argc = full_argc;
	o.cmdline_argv = full_argv;
	o.control_fd = control_setup(true);
	if (o.control_fd < 0)
		return 1;
	if (!quiet && isatty(STDERR_FILENO))
		o.progress = aux_progress;
	err = perfring_record_aux(&o, &st);
	if (o.progress)
		fprintf(stderr, "\r\033[K");
	if (!quiet && st.sz >= sizeof(st) && !err) {
		fprintf(stderr,
			"[ perfring record: Woken up %" PRIu64
			" times to write data ]\n"
			"[ perfring record: Captured and wrote %.3f MB %s (%.3f MB AUX trace in %" PRIu64
			" AUXTRACE chunks, %" PRIu64
			" PERF_RECORD_AUX, %" PRIu64 " truncated, %" PRIu64
			" bytes lost, %" PRIu64 " snapshots) ]\n",
			st.wakeups, (double)st.bytes / 1e6,
			o.output ? o.output : "perf.data",
			(double)st.aux_bytes / 1e6, st.aux_chunks,
			st.aux_records, st.truncated, st.lost_bytes,
			st.snapshots);
	}
	return err ? 1 : 0;
}

static int cmd_record_perf(int argc, char **argv, int full_argc,
			   char **full_argv);

/*
 * What the recorder needs before it reads rings that traced programs
 * write (process-wide, so here and not in the library): the SIGBUS guard,
 * so a program that truncates its ring file cannot kill us, and every
 * descriptor the hard limit allows, one ring taking two.
 */
static void record_prepare(void)
{
	struct rlimit rl;
	int err = perfring_sigbus_guard();

	if (err)
		fprintf(stderr,
			"%s: warning: cannot install the SIGBUS guard: %s\n",
			prog, strerror(-err));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			fprintf(stderr,
				"%s: warning: cannot raise the open-file limit: %s\n",
				prog, strerror(errno));
	}
}

/* The application part of the summary: what the programs claim apart
 * from what the recorder measured, in words. */
static void app_summary(const struct perfring_record_stats *st)
{
	uint64_t unattached =
		(uint64_t)st->app_rings_over_cap + st->app_rings_no_fd;
	bool rings_lost = unattached || st->app_rings_dropped;
	char lost[160];

	if (!st->app_rings && !unattached && !st->app_rings_refused &&
	    !st->app_rings_dropped)
		return;
	if (st->app_lost_implausible)
		snprintf(lost, sizeof(lost),
			 "lost: the programs claim %" PRIu64 " (implausible)",
			 st->app_lost);
	else if (rings_lost)
		snprintf(
			lost, sizeof(lost),
			"%" PRIu64
			" lost by the programs' count, more in rings the recorder could not read (below)",
			st->app_lost);
	else
		snprintf(lost, sizeof(lost), "%" PRIu64 " lost", st->app_lost);
	fprintf(stderr,
		"[ perfring record: application: %" PRIu64
		" events of %u types from %u rings, %s, %" PRIu64
		" damaged ]\n",
		st->app_events, st->app_event_types, st->app_rings, lost,
		st->app_corrupt);
	if (st->app_corrupt || st->app_dead_reservations || rings_lost ||
	    st->app_rings_refused) {
		fprintf(stderr,
			"[ perfring record: application loss the recorder measured:");
		if (st->app_corrupt)
			fprintf(stderr,
				" %" PRIu64
				" damaged records or ranges (%" PRIu64
				" bytes) skipped;",
				st->app_corrupt, st->app_corrupt_bytes);
		if (st->app_dead_reservations)
			fprintf(stderr,
				" %" PRIu64
				" records reserved and never written by dead producers (1 lost event each, counted above);",
				st->app_dead_reservations);
		if (st->app_rings_dropped)
			fprintf(stderr,
				" %u rings dropped after their program truncated them (%" PRIu64
				" bytes unread);",
				st->app_rings_dropped, st->app_dropped_bytes);
		if (unattached)
			fprintf(stderr,
				" %" PRIu64
				" rings never read, their events all lost (%u over --app-max-rings, %u for want of file descriptors; %" PRIu64
				" bytes by their control pages);",
				unattached, st->app_rings_over_cap,
				st->app_rings_no_fd, st->app_unattached_bytes);
		if (st->app_rings_refused)
			fprintf(stderr,
				" %u files named like rings refused (unsafe or not rings);",
				st->app_rings_refused);
		fprintf(stderr, " ]\n");
	}
	if (st->app_lost_implausible)
		fprintf(stderr,
			"Warning: %" PRIu64
			" LOST records claim more events (over 2^40) than a program can emit: the application's loss count is a claim, not a measurement.\n",
			st->app_lost_implausible);
	else if (st->app_lost)
		fprintf(stderr,
			"Warning: the application dropped %" PRIu64
			" events (its rings were full): set PERFRING_RING_SIZE larger.\n",
			st->app_lost);
	if (rings_lost)
		fprintf(stderr,
			"Warning: application events were lost in rings the recorder could not read (see above).\n");
}

static int cmd_record(int argc, char **argv, int full_argc, char **full_argv)
{
	if (wants_aux(argc, argv))
		return cmd_record_aux(argc, argv, full_argc, full_argv);
	if (wants_tracefs(argc, argv))
		return cmd_record_tracefs(argc, argv);
	return cmd_record_perf(argc, argv, full_argc, full_argv);
}

static int cmd_record_perf(int argc, char **argv, int full_argc,
			   char **full_argv)
{
	enum {
		OPT_PER_THREAD = 256,
		OPT_OVERWRITE,
		OPT_NO_APP,
		OPT_APP_MAX_RINGS
	};
	static const struct option opts[] = {
		{ "no-app", no_argument, NULL, OPT_NO_APP },
		{ "app-max-rings", required_argument, NULL, OPT_APP_MAX_RINGS },
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *events[64];
	struct perfring_record_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_record_opts, ro, .control_fd = -1);
	bool quiet = false;
	int c, err, nev = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "+e:aC:p:t:m:F:c:go:qD:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'e':
			if (nev == 64)
				die_usage("at most 64 events (%s)", optarg);
			events[nev++] = optarg;
			break;
		case 'a':
			ro.all_cpus = true;
			break;
		case 'C':
			ro.cpu_list = optarg;
			break;
		case 'p':
			ro.pid_list = optarg;
			break;
		case 't':
			ro.tid_list = optarg;
			break;
		case OPT_PER_THREAD:
			ro.per_thread = true;
			break;
		case 'm':
			ro.mmap_bytes = parse_mmap(optarg);
			break;
		case 'F':
			ro.freq = strtoull(optarg, &end, 10);
			if (*end || !ro.freq)
				die_usage("-F takes a frequency in Hz: %s",
					  optarg);
			break;
		case 'c':
			ro.period = strtoull(optarg, &end, 10);
			if (*end || !ro.period)
				die_usage(
					"-c takes a period (events per sample): %s",
					optarg);
			break;
		case 'g':
			ro.callchain = true;
			break;
		case 'o':
			ro.output = optarg;
			break;
		case OPT_OVERWRITE:
			ro.overwrite = true;
			break;
		case OPT_NO_APP:
			ro.no_app = true;
			break;
		case OPT_APP_MAX_RINGS: {
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !v || v > UINT32_MAX)
				die_usage("--app-max-rings takes a count: %s",
					  optarg);
			ro.app_max_rings = (uint32_t)v;
			break;
		}
		case 'q':
			quiet = true;
			break;
		case 'D':
			ro.duration = parse_seconds(optarg);
			break;
		case 'h':
			printf("usage: %s record [-e EVENT]... [-a] [-C CPUS] [-p PID] [-t TID] [--per-thread]\n"
			       "                [-m PAGES|SIZE] [-F HZ | -c PERIOD] [-g] [-o FILE|-] [--overwrite]\n"
			       "                [-q] [--duration SECS] [--no-app] [--app-max-rings N]\n"
			       "                [-- COMMAND [ARGS]]\n"
			       "  a COMMAND (or -p PID) that links libperfring records its own events too;\n"
			       "  at most N of its rings (default 4096) are read at once\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	ro.events = events;
	ro.nr_events = nev;
	ro.argv = optind < argc ? &argv[optind] : NULL;
	ro.cmdline_argc = full_argc;
	ro.cmdline_argv = full_argv;
	ro.control_fd = control_setup(true);
	if (ro.control_fd < 0)
		return 1;
	record_prepare();
	if (!quiet && isatty(STDERR_FILENO) && ro.output &&
	    strcmp(ro.output, "-")) {
		ro.progress = record_progress;
	} else if (!quiet && isatty(STDERR_FILENO) && !ro.output) {
		ro.progress = record_progress;
	}
	err = perfring_record(&ro, &st);
	if (ro.progress)
		fprintf(stderr, "\r\033[K");
	if (!quiet && st.sz >= sizeof(st) && (!err || st.bytes)) {
		const char *out = ro.output ? ro.output : "perf.data";

		fprintf(stderr,
			"[ perfring record: Woken up %" PRIu64
			" times to write data ]\n",
			st.wakeups);
		fprintf(stderr,
			"[ perfring record: Captured and wrote %.3f MB %s (%" PRIu64
			" samples, %" PRIu64 " lost in %" PRIu64
			" LOST records, %" PRIu64 " lost samples) ]\n",
			(double)st.bytes / 1e6,
			!strcmp(out, "-") ? "<stdout>" : out, st.samples,
			st.lost, st.lost_records, st.lost_samples);
		if (st.lost)
			fprintf(stderr,
				"Warning: the kernel dropped %" PRIu64
				" events in %" PRIu64
				" chunks: use a larger -m or fewer events.\n",
				st.lost, st.lost_records);
		app_summary(&st);
	}
	if (err)
		return 1;
	if (st.child_status >= 0 && WIFEXITED(st.child_status))
		return WEXITSTATUS(st.child_status);
	return 0;
}

static void list_one(const char *name, const char *kind, void *ctx)
{
	(void)ctx;
	printf("  %-48s [%s]\n", name, kind);
}

static int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return perfring_event_list(list_one, NULL) < 0 ? 1 : 0;
}

/* dump / stats: -i FILE (default perf.data, "-" standard input). */
static int cmd_read(int argc, char **argv, bool stats)
{
	const char *in = "perf.data";
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-i") && i + 1 < argc)
			in = argv[++i];
		else if (!strncmp(argv[i], "--input=", 8))
			in = argv[i] + 8;
		else
			die_usage("unknown option '%s'", argv[i]);
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (strcmp(in, "-") && perfring_trace_dat_probe(in) == 1)
		err = stats ? perfring_trace_dat_stats(in, stdout) :
			      perfring_trace_dat_dump(in, stdout);
	else
		err = stats ? perfring_stats(in, stdout) :
			      perfring_dump(in, stdout);
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (err) {
		fflush(stdout);
		fprintf(stderr, "%s: %s: %s\n", prog, in, strerror(-err));
		return 1;
	}
	return 0;
}

/* perf reads a pipe on stdin when no -i is given. */
static bool stdin_is_fifo(void)
{
	struct stat st;

	return !fstat(STDIN_FILENO, &st) && S_ISFIFO(st.st_mode);
}

static bool input_given(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-i") || !strncmp(argv[i], "-i", 2) ||
		    !strncmp(argv[i], "--input", 7))
			return true;
	return false;
}

/* script: perf script's text, one line per sample. */
static int cmd_script(int argc, char **argv)
{
	enum { OPT_NS = 256, OPT_SLOW_TP };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "ns", no_argument, NULL, OPT_NS },
		{ "slow-tracepoints", no_argument, NULL, OPT_SLOW_TP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_script_opts, so, .input = "perf.data");
	char fields[4096] = "";
	int c, err;

	while ((c = getopt_long(argc, argv, "i:F:Gh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			so.input = optarg;
			break;
		case 'F':
			/* perf takes one -F per event type: join them. */
			if (strlen(fields) + strlen(optarg) + 2 >
			    sizeof(fields))
				die_usage("-F lists too long: %s", optarg);
			if (fields[0])
				strcat(fields, ";");
			strcat(fields, optarg);
			so.fields = fields;
			break;
		case 'G':
			so.hide_callchain = true;
			break;
		case OPT_NS:
			so.ns = true;
			break;
		case OPT_SLOW_TP:
			so.slow_tracepoints = true;
			break;
		case 'h':
			printf("usage: %s script [-i FILE|-] [-F FIELDS] [-G] [--ns]\n"
			       "  -F comm,pid,tid,cpu,time,event,period,ip,sym,symoff,dso,addr,trace\n"
			       "     (TYPE:FIELDS for one type: hw sw trace raw break; +F/-F edit the defaults)\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!input_given(argc, argv) && stdin_is_fifo())
		so.input = "-"; /* as perf: a pipe on stdin is the input */
	if (strcmp(so.input, "-") && perfring_trace_dat_probe(so.input) == 1)
		err = perfring_trace_dat_script(so.input, stdout);
	else
		err = perfring_script(&so, stdout);
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (err) {
		fprintf(stderr, "%s: script %s: %s\n", prog, so.input,
			strerror(-err));
		return 1;
	}
	return 0;
}

/* report: perf report --stdio's overhead table. */
static int cmd_report(int argc, char **argv)
{
	enum { OPT_CHILDREN = 256, OPT_NO_CHILDREN, OPT_STDIO, OPT_PLIMIT };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "show-nr-samples", no_argument, NULL, 'n' },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "percent-limit", required_argument, NULL, OPT_PLIMIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_report_opts, ro, .input = "perf.data");
	char *end;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:s:g:nh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ro.input = optarg;
			break;
		case 's':
			ro.sort = optarg;
			break;
		case OPT_CHILDREN:
			ro.children = true;
			ro.no_children = false;
			break;
		case OPT_NO_CHILDREN:
			ro.no_children = true;
			ro.children = false;
			break;
		case 'g':
			if (!strcmp(optarg, "none"))
				ro.no_callgraph = true;
			else if (strncmp(optarg, "graph", 5))
				die_usage("-g takes none or graph: %s", optarg);
			break;
		case 'n':
			ro.show_nr_samples = true;
			break;
		case OPT_STDIO:
			break; /* the only output there is */
		case OPT_PLIMIT:
			ro.percent_limit = strtod(optarg, &end);
			if (*end || ro.percent_limit < 0)
				die_usage(
					"--percent-limit takes a percentage: %s",
					optarg);
			break;
		case 'h':
			printf("usage: %s report [-i FILE|-] [--sort comm,pid,dso,sym] [--children|--no-children]\n"
			       "                [-g none] [-n] [--percent-limit PCT] [--stdio]\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!input_given(argc, argv) && stdin_is_fifo())
		ro.input = "-";
	err = perfring_report(&ro, stdout);
	if (err == -EPIPE)
		return 0;
	if (err) {
		fprintf(stderr, "%s: report %s: %s\n", prog, ro.input,
			strerror(-err));
		return 1;
	}
	return 0;
}

/* export: Chrome trace JSON, folded stacks or a flame graph SVG. */
static int cmd_export(int argc, char **argv)
{
	enum { OPT_TITLE = 256, OPT_WIDTH };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_export_opts, eo, .input = "perf.data",
		      .format = "chrome");
	const char *outpath = "-";
	FILE *out = stdout;
	bool made_file = false;
	char *end;
	unsigned long w;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			eo.input = optarg;
			break;
		case 'f':
			eo.format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_TITLE:
			eo.title = optarg;
			break;
		case OPT_WIDTH:
			errno = 0;
			w = strtoul(optarg, &end, 10);
			if (errno || *end || w < 100 || w > 1000000)
				die_usage(
					"--width takes 100 to 1000000 pixels: %s",
					optarg);
			eo.width = (unsigned int)w;
			break;
		case 'h':
			printf("usage: %s export [-i FILE|-] [-f chrome|folded|svg] [-o OUT|-] [--title TEXT] [--width PX]\n"
			       "  chrome: trace-event JSON (Perfetto UI, chrome://tracing): samples, sched_switch slices\n"
			       "  folded: collapsed stacks for flame graph tools; svg: an interactive flame graph\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (strcmp(outpath, "-")) {
		/* A new file (0600), never through a symbolic link; a FIFO
		 * or /dev/null as it is.  The library says why it refuses. */
		int fd = perfring_file_create(outpath, 0);
		struct stat st;

		out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!out) {
			if (fd >= 0) {
				fprintf(stderr, "%s: export: %s: %s\n", prog,
					outpath, strerror(errno));
				close(fd);
			}
			return 1;
		}
		made_file = !fstat(fd, &st) && S_ISREG(st.st_mode);
	}
	err = perfring_export(&eo, out);
	if (out != stdout && fclose(out) && !err)
		err = -errno;
	/* Nothing usable was written (damage keeps what came before it). */
	if (err && err != -EBADMSG && made_file)
		unlink(outpath);
	if (err == -EPIPE && out == stdout)
		return 0; /* the reader went away (| head) */
	if (err) {
		fprintf(stderr, "%s: export %s: %s\n", prog, eo.input,
			strerror(-err));
		return 1;
	}
	return 0;
}

/* ---- CoreSight: decode, dump --aux, script/report --itrace, inject ---- */

enum cs_mode { CS_DECODE, CS_DUMP_AUX, CS_SCRIPT, CS_REPORT, CS_INJECT };

static bool has_arg(int argc, char **argv, const char *a)
{
	size_t n = strlen(a);

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], a, n) &&
		    (argv[i][n] == 0 || argv[i][n] == '='))
			return true;
	return false;
}

static void cs_summary(const char *what, const struct perfring_cs_stats *st)
{
	fprintf(stderr,
		"%s: %s: %" PRIu64 " trace bytes, %u decoders, %" PRIu64
		" packets, %" PRIu64 " elements, %" PRIu64
		" instruction ranges (%" PRIu64 " instructions)",
		prog, what, st->trace_bytes, st->decoders, st->packets,
		st->elements, st->ranges, st->instructions);
	fprintf(stderr,
		"; %" PRIu64 " no-sync, %" PRIu64 " resyncs, %" PRIu64
		" errors, %" PRIu64 " inaccessible\n",
		st->nosync, st->resyncs, st->errors, st->nacc);
}

static int cmd_cs(int argc, char **argv, enum cs_mode mode)
{
	enum {
		OPT_SNAP = 256,
		OPT_PKTS,
		OPT_DECODE,
		OPT_ELEMS,
		OPT_BUFFER,
		OPT_SYMDIR,
		OPT_ITRACE,
		OPT_AUX,
		OPT_NO_DISASM,
		OPT_MAX_INSNS,
	};
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "snapshot", required_argument, NULL, OPT_SNAP },
		{ "pkts", no_argument, NULL, OPT_PKTS },
		{ "decode", no_argument, NULL, OPT_DECODE },
		{ "elements", no_argument, NULL, OPT_ELEMS },
		{ "buffer", required_argument, NULL, OPT_BUFFER },
		{ "symdir", required_argument, NULL, OPT_SYMDIR },
		{ "itrace", optional_argument, NULL, OPT_ITRACE },
		{ "aux", no_argument, NULL, OPT_AUX },
		{ "no-disasm", no_argument, NULL, OPT_NO_DISASM },
		{ "max-insns", required_argument, NULL, OPT_MAX_INSNS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_cs_opts, co, .input = NULL);
	PERFRING_OPTS(perfring_itrace_opts, io, .input = NULL);
	struct perfring_cs_stats st = { .sz = sizeof(st) };
	const char *output = NULL;
	bool quiet = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			co.input = io.input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_SNAP:
			co.snapshot = io.snapshot = optarg;
			break;
		case OPT_PKTS:
			co.decode = false;
			break;
		case OPT_DECODE:
			co.decode = true;
			break;
		case OPT_ELEMS:
			co.elements_only = true;
			break;
		case OPT_BUFFER:
			co.buffer = optarg;
			break;
		case OPT_SYMDIR:
			co.symdir = io.symdir = optarg;
			break;
		case OPT_ITRACE:
		case OPT_AUX:
			break;
		case OPT_NO_DISASM:
			io.no_disasm = true;
			break;
		case OPT_MAX_INSNS:
			io.max_insns = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			printf("usage: %s decode --snapshot DIR [--pkts|--decode|--elements] [--buffer NAME]\n"
			       "       %s dump --aux [-i FILE] [--decode|--elements] [--symdir DIR]\n"
			       "       %s script --itrace [-i FILE|--snapshot DIR] [--symdir DIR] [--no-disasm]\n"
			       "       %s report --itrace [-i FILE|--snapshot DIR] [--symdir DIR]\n"
			       "       %s inject [-i FILE] [-o OUT] [--symdir DIR]\n",
			       prog, prog, prog, prog, prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (mode == CS_DECODE && !co.snapshot && !co.input)
		die_usage("%s", "decode needs --snapshot DIR or -i FILE");
	if (!co.snapshot && !co.input)
		co.input = io.input = "perf.data";
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	switch (mode) {
	case CS_DECODE:
	case CS_DUMP_AUX:
		err = perfring_cs_decode(&co, stdout, &st);
		break;
	case CS_SCRIPT:
		err = perfring_itrace_script(&io, stdout, &st);
		break;
	case CS_REPORT:
		err = perfring_itrace_report(&io, stdout, &st);
		break;
	default:
		err = perfring_inject(&io, output ? output : "perf_inject.data",
				      &st);
		break;
	}
	fflush(stdout);
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (!quiet && st.sz && (!err || st.trace_bytes))
		cs_summary(co.snapshot ? co.snapshot : co.input, &st);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", prog,
			co.snapshot ? co.snapshot : co.input, strerror(-err));
		return 1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [ARGS]\n"
		"\n"
		"commands:\n"
		"  record [OPTIONS] [-- COMMAND]     record kernel perf events into perf.data\n"
		"  record --tracefs -e SYS:EVENT...  ftrace's mapped buffers into trace.dat\n"
		"  list                               events record accepts\n"
		"  demo [-n N] [-s BYTES] [-m SIZE] [--drop]\n"
		"                                     two-process ring demo: a producer\n"
		"                                     process writes N checked records\n"
		"  ring-stat RING_PATH                show a named ring's control page\n"
		"  script [-i FILE|-] [-F FIELDS]     one line per sample (perf script)\n"
		"  report [-i FILE|-] [--sort KEYS]   overhead table (perf report --stdio)\n"
		"  dump [-i FILE|-]                   every record of a perf.data (perf report -D)\n"
		"  stats [-i FILE|-]                  record counts (perf report --stats)\n"
		"  export [-i FILE|-] -f chrome|folded|svg [-o OUT]\n"
		"                                     Chrome trace JSON, folded stacks, flame graph\n"
		"  decode --snapshot DIR [--decode]   CoreSight packets/elements of an OpenCSD snapshot\n"
		"  dump --aux [-i FILE] [--decode]    CoreSight packets/elements of the AUX data\n"
		"  script --itrace [-i FILE]          executed instruction ranges, disassembled\n"
		"  report --itrace [-i FILE]          instruction hot spots by object and symbol\n"
		"  inject [-i FILE] [-o OUT] [--symdir DIR]\n"
		"                                     AutoFDO branch/range counts (simpleperf inject)\n"
		"  version                            print the version\n"
		"  help                               this text\n"
		"\n"
		"Options: -v (before the command) prints the library's log.\n"
		"See perfring(1).\n",
		prog);
}

int main(int argc, char **argv)
{
	const char *cmd;

	signal(SIGPIPE, SIG_IGN);
	while (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose++;
		argc--;
		argv++;
	}
	perfring_set_log(log_to_stderr, NULL,
			 verbose ? PERFRING_LOG_DEBUG : PERFRING_LOG_WARN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	argc--;
	argv++;
	if (!strcmp(cmd, "record"))
		return cmd_record(argc, argv, argc + 1, argv - 1);
	if (!strcmp(cmd, "list"))
		return cmd_list(argc, argv);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(argc, argv);
	if (!strcmp(cmd, "ring-stat"))
		return cmd_ring_stat(argc, argv);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("perfring %s\n", perfring_version());
		return 0;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "decode"))
		return cmd_cs(argc, argv, CS_DECODE);
	if (!strcmp(cmd, "inject"))
		return cmd_cs(argc, argv, CS_INJECT);
	if (!strcmp(cmd, "dump") && has_arg(argc, argv, "--aux"))
		return cmd_cs(argc, argv, CS_DUMP_AUX);
	if (!strcmp(cmd, "script") && has_arg(argc, argv, "--itrace"))
		return cmd_cs(argc, argv, CS_SCRIPT);
	if (!strcmp(cmd, "report") && has_arg(argc, argv, "--itrace"))
		return cmd_cs(argc, argv, CS_REPORT);
	if (!strcmp(cmd, "dump"))
		return cmd_read(argc, argv, false);
	if (!strcmp(cmd, "stats"))
		return cmd_read(argc, argv, true);
	if (!strcmp(cmd, "script"))
		return cmd_script(argc, argv);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc, argv);
	if (!strcmp(cmd, "export"))
		return cmd_export(argc, argv);
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	usage(stderr);
	return 2;
}
