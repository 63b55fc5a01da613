// SPDX-License-Identifier: MIT
/*
 * tracefs capture: the mmap recorder vs read() vs perf record, and what
 * one sub-buffer costs the consumer in the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

/* ---- tracefs capture: mmap recorder vs read() vs perf record ------------ */

/* A marker writer: bursts of trace_marker writes with short sleeps. */
static pid_t tc_marker_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY);
		char buf[64];

		if (fd < 0)
			_exit(1);
		for (unsigned long i = 0;; i++) {
			int n = snprintf(buf, sizeof(buf), "bench-mark %lu", i);

			if (write(fd, buf, (size_t)n) < 0)
				_exit(1);
			if (i % 20 == 19)
				usleep(1000);
		}
	}
	return pid;
}

struct tc_res {
	double cpu_s, mb;
	uint64_t events, lost;
};

/* perfring record --tracefs in this process: its CPU time, data, loss. */
static uint32_t tc_subbuf; /* BENCH_SUBBUF bytes; 0: instance default */

static int tc_ours(bool no_mmap, double secs, struct tc_res *r)
{
	static const char *const ev[] = { "sched:sched_switch",
					  "ftrace:print" };
	static struct perfring_tracefs_stats st = { .sz = sizeof(st) };
	PERFRING_OPTS(perfring_tracefs_opts, o, .events = ev, .nr_events = 2,
		      .output = "/dev/shm/perfring-bench-tc.dat",
		      .all_cpus = true, .duration = secs, .control_fd = -1,
		      .buffer_percent = -1, .no_mmap = no_mmap,
		      .subbuf_bytes = tc_subbuf);
	int err = perfring_record_tracefs(&o, &st);

	/* the capture's own CPU (drain loop and last drains), as the
	 * recorder measured it: set-up and file headers left out */
	r->cpu_s = (double)st.capture_cpu_ns / 1e9;
	unlink("/dev/shm/perfring-bench-tc.dat");
	r->mb = (double)st.bytes / 1e6;
	r->events = st.events;
	r->lost = st.lost;
	return err;
}

static int tc_perf(double secs, struct tc_res *r)
{
	char f[] = "/dev/shm/perfring-bench-tc-perf.data", s[32];
	char *argv[] = { "perf",  "record", "-q",
			 "-a",	  "-e",	    "sched:sched_switch",
			 "-o",	  f,	    "--",
			 "sleep", s,	    NULL };
	struct stat sb;
	int rc;

	snprintf(s, sizeof(s), "%.2f", secs);
	rc = run_measured(argv, &r->cpu_s, NULL);
	perf_counts(f, &r->events, &r->lost);
	r->mb = stat(f, &sb) ? 0 : (double)sb.st_size / 1e6;
	unlink(f);
	return rc;
}

/* Marginal cost: a long run minus a short one (start-up, metadata). */
static void tc_diff(struct tc_res *l, const struct tc_res *s)
{
	l->cpu_s -= s->cpu_s;
	l->mb -= s->mb;
	l->events -= l->events > s->events ? s->events : l->events;
}

static double tc_med3(double a, double b, double c)
{
	double v[3] = { a, b, c };

	qsort(v, 3, sizeof(v[0]), cmp_double);
	return v[1];
}

/* ms of recorder CPU per MB of events, and us per event. */
static double tc_ms_mb(const struct tc_res *r)
{
	return r->mb > 0 ? r->cpu_s * 1e3 / r->mb : 0.0;
}

static double tc_us_ev(const struct tc_res *r)
{
	return r->events ? r->cpu_s * 1e6 / (double)r->events : 0.0;
}

/*
 * The same load (pingpong context switches and a trace_marker writer) for
 * each recorder in turn, three rounds, medians: the mmap recorder, the
 * read() recorder (same code, trace_pipe_raw read() page by page as
 * trace-cmd's classic path), perf record of sched_switch.  Our two: the
 * CPU time of the capture as the recorder measures it (drain loop and
 * last drains; set-up and trace.dat headers left out).  perf: the
 * marginal cost, a 3 s run minus a 0.3 s run (start-up, metadata).
 */
void case_tracefs_capture(void)
{
	const double secs = 3, short_secs = 0.3;
	struct tc_res m[3], rd[3], p[3], s;
	uint64_t lost[3] = { 0 };
	char pp[PATH_MAX];
	char *gen[] = { workload("pingpong", pp, sizeof(pp)), "0", NULL };
	const char *sb = getenv("BENCH_SUBBUF");
	pid_t g, mk;

	tc_subbuf = sb ? (uint32_t)strtoul(sb, NULL, 0) : 0;
	if (access("/sys/kernel/tracing/instances", W_OK)) {
		printf("bench tracefs-capture error=no-tracefs\n");
		return;
	}
	if (posix_spawn(&g, gen[0], NULL, NULL, gen, environ)) {
		printf("bench tracefs-capture error=no-generator path=%s\n",
		       gen[0]);
		return;
	}
	mk = tc_marker_child();
	usleep(200000);
	for (int i = 0; i < 3; i++) {
		/* ours: the capture's own CPU, no set-up in it */
		if (tc_ours(false, secs, &m[i])) {
			printf("bench tracefs-capture error=record-failed\n");
			goto out;
		}
		lost[0] += m[i].lost;
		if (tc_ours(true, secs, &rd[i])) {
			printf("bench tracefs-capture error=record-failed\n");
			goto out;
		}
		lost[1] += rd[i].lost;
		tc_perf(short_secs, &s);
		tc_perf(secs, &p[i]);
		tc_diff(&p[i], &s);
		lost[2] += p[i].lost;
	}
	{
		double mm = tc_med3(tc_ms_mb(&m[0]), tc_ms_mb(&m[1]),
				    tc_ms_mb(&m[2]));
		double rm = tc_med3(tc_ms_mb(&rd[0]), tc_ms_mb(&rd[1]),
				    tc_ms_mb(&rd[2]));
		double pm = tc_med3(tc_ms_mb(&p[0]), tc_ms_mb(&p[1]),
				    tc_ms_mb(&p[2]));

		printf("bench tracefs-capture mmap_ms_per_mb=%.3f read_ms_per_mb=%.3f perf_ms_per_mb=%.3f ratio_read=%.2f ratio_perf=%.2f mmap_us_per_ev=%.3f read_us_per_ev=%.3f perf_us_per_ev=%.3f mmap_lost=%llu read_lost=%llu perf_lost=%llu mmap_events=%llu read_events=%llu perf_events=%llu subbuf=%u secs=%.0f rounds=3\n",
		       mm, rm, pm, rm > 0 ? mm / rm : 0.0,
		       pm > 0 ? mm / pm : 0.0,
		       tc_med3(tc_us_ev(&m[0]), tc_us_ev(&m[1]),
			       tc_us_ev(&m[2])),
		       tc_med3(tc_us_ev(&rd[0]), tc_us_ev(&rd[1]),
			       tc_us_ev(&rd[2])),
		       tc_med3(tc_us_ev(&p[0]), tc_us_ev(&p[1]),
			       tc_us_ev(&p[2])),
		       (unsigned long long)lost[0], (unsigned long long)lost[1],
		       (unsigned long long)lost[2],
		       (unsigned long long)(m[0].events + m[1].events +
					    m[2].events),
		       (unsigned long long)(rd[0].events + rd[1].events +
					    rd[2].events),
		       (unsigned long long)(p[0].events + p[1].events +
					    p[2].events),
		       tc_subbuf ? tc_subbuf : 4096, secs);
	}
out:
	kill(mk, SIGKILL);
	waitpid(mk, NULL, 0);
	kill(g, SIGKILL);
	waitpid(g, NULL, 0);
}

/*
 * tracefs-get-reader: what one 4 KiB sub-buffer costs the consumer in the
 * kernel, by the two ways of taking it, with the writer idle: the
 * instance's CPU 0 buffer is filled with trace_marker events of PAYLOAD
 * bytes, then drained by TRACE_MMAP_IOCTL_GET_READER on the mapping
 * (get_reader_us: CPU per call) and, refilled, by read() of
 * trace_pipe_raw (read_us: CPU per 4 KiB read, the copy included);
 * write_us: write() of one sub-buffer into a new /dev/shm file.
 * Kernel 6.x's GET_READER advances the reader over every event of the
 * page it hands out (rb_advance_reader), read() swaps a full page out
 * whole: the first grows with events_per_page.  ratio_floor =
 * (get_reader + write) / (read + write): the lowest ratio_read an mmap
 * recorder can reach against a read() recorder here, both writing their
 * pages to a file.  Thread CPU time, median of 3.
 */
#define GR_INST "/sys/kernel/tracing/instances/perfring-bench-gr"

static int gr_put(const char *file, const char *val)
{
	char path[PATH_MAX];
	int fd, ret = 0;

	snprintf(path, sizeof(path), GR_INST "/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Fills CPU 0's buffer (this thread is pinned there) with markers. */
static int gr_fill(size_t payload, unsigned long count)
{
	char buf[2048];
	int fd;

	if (gr_put("tracing_on", "1"))
		return -1;
	fd = open(GR_INST "/trace_marker", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	for (unsigned long i = 0; i < count; i++) {
		int n = snprintf(buf, 24, "m%lu", i);

		buf[n] = 'x';
		if (write(fd, buf, payload) < 0)
			break;
	}
	close(fd);
	return gr_put("tracing_on", "0");
}

struct gr_res {
	double get_reader_us, read_us, write_us, events_per_page;
};

static int gr_once(size_t payload, struct gr_res *r)
{
	const char *pipe = GR_INST "/per_cpu/cpu0/trace_pipe_raw";
	const char *file = "/dev/shm/perfring-bench-gr";
	unsigned long count = (8ul << 20) / (payload + 16) + 1000;
	uint64_t io = 0, wr = 0, t, pages = 0, rpages = 0, entries;
	unsigned char *page = malloc(4096);
	uint32_t last = UINT32_MAX;
	int fd, out;

	if (!page || gr_fill(payload, count))
		goto fail;
	fd = open(pipe, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || out < 0)
		goto fail;
	{
		/* struct trace_buffer_meta: meta_page_size@0, subbuf_size@8,
		 * nr_subbufs@12, reader.id@24, reader.read@28, read@56 */
		const volatile unsigned char *meta =
			mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		uint32_t mps, sbs, nr, id, rd;
		const unsigned char *data;
		uint64_t read0;

		if (meta == MAP_FAILED)
			goto fail;
		memcpy(&mps, (const void *)meta, 4);
		memcpy(&sbs, (const void *)(meta + 8), 4);
		memcpy(&nr, (const void *)(meta + 12), 4);
		memcpy(&read0, (const void *)(meta + 56), 8);
		data = mmap(NULL, (size_t)sbs * nr, PROT_READ, MAP_SHARED, fd,
			    mps);
		if (data == MAP_FAILED || sbs != 4096)
			goto fail;
		for (;;) {
			t = thread_cpu_ns();
			if (ioctl(fd, 0x5220 /* TRACE_MMAP_IOCTL_GET_READER */))
				break;
			io += thread_cpu_ns() - t;
			memcpy(&id, (const void *)(meta + 24), 4);
			memcpy(&rd, (const void *)(meta + 28), 4);
			if (!rd || id == last || id >= nr)
				break;
			last = id;
			t = thread_cpu_ns();
			if (write(out, data + (size_t)id * sbs, sbs) != sbs)
				break;
			wr += thread_cpu_ns() - t;
			pages++;
		}
		/* meta->read: events consumed, counted since the instance
		 * was made */
		memcpy(&entries, (const void *)(meta + 56), 8);
		entries -= read0;
		munmap((void *)data, (size_t)sbs * nr);
		munmap((void *)meta, 4096);
	}
	close(fd);
	close(out);
	unlink(file);
	r->get_reader_us = pages ? (double)io / 1e3 / (double)pages : 0;
	r->write_us = pages ? (double)wr / 1e3 / (double)pages : 0;
	r->events_per_page = pages ? (double)entries / (double)pages : 0;
	/* the same events again, taken by read() */
	if (gr_fill(payload, count))
		goto fail;
	fd = open(pipe, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	io = 0;
	for (;;) {
		ssize_t n;

		t = thread_cpu_ns();
		n = read(fd, page, 4096);
		io += thread_cpu_ns() - t;
		if (n <= 0)
			break;
		rpages++;
	}
	close(fd);
	free(page);
	r->read_us = rpages ? (double)io / 1e3 / (double)rpages : 0;
	return pages && rpages ? 0 : -1;
fail:
	free(page);
	return -1;
}

void case_tracefs_get_reader(void)
{
	static const size_t payloads[] = { 12, 100, 1000 };
	cpu_set_t old;

	if (mkdir(GR_INST, 0755) && errno != EEXIST) {
		printf("bench tracefs-get-reader error=no-tracefs-instance\n");
		return;
	}
	sched_getaffinity(0, sizeof(old), &old);
	pin(0);
	if (gr_put("buffer_size_kb", "8192") ||
	    gr_put("buffer_subbuf_size_kb", "4"))
		printf("bench tracefs-get-reader error=instance-setup\n");
	else
		for (size_t k = 0; k < sizeof(payloads) / sizeof(*payloads);
		     k++) {
			struct gr_res r[REPS];
			double g[REPS], rd[REPS], w[REPS], e[REPS];
			int i;

			for (i = 0; i < REPS; i++) {
				if (gr_once(payloads[k], &r[i]))
					break;
				g[i] = r[i].get_reader_us;
				rd[i] = r[i].read_us;
				w[i] = r[i].write_us;
				e[i] = r[i].events_per_page;
			}
			if (i < REPS) {
				printf("bench tracefs-get-reader payload=%zu error=drain-failed\n",
				       payloads[k]);
				continue;
			}
			printf("bench tracefs-get-reader payload=%zu events_per_page=%.0f get_reader_us=%.2f read_us=%.2f write_us=%.2f ratio_floor=%.2f subbuf=4096 stat=median\n",
			       payloads[k], median3(e), median3(g), median3(rd),
			       median3(w),
			       (median3(g) + median3(w)) /
				       (median3(rd) + median3(w)));
		}
	rmdir(GR_INST);
	sched_setaffinity(0, sizeof(old), &old);
}
