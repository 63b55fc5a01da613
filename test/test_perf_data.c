// SPDX-License-Identifier: MIT
/*
 * The perf.data writer, judged by the real perf (/usr/bin/perf).
 *
 * Synthetic content: two software events (cpu-clock and page faults) with
 * sample_type IDENTIFIER|IP|TID|TIME|CPU|PERIOD, sample_id_all and
 * CLOCK_MONOTONIC; a COMM and an MMAP2 of this test program; samples whose
 * IPs are in this program's own functions, in rounds.  Each file must open
 * in perf without a warning, with every sample counted (perf report
 * --stats, perf report -D) and resolved to our symbols (perf script,
 * perf report --stdio), with the features we wrote (perf report
 * --header-only).  Written as a file, as a pipe-format file and through a
 * real pipe into perf.  Then the failure paths: writes that hit
 * RLIMIT_FSIZE in the middle of a round (with room for the features
 * afterwards, and without), a real ENOSPC on a small private tmpfs, and a
 * file read while it is still being written.  Tracepoints with a
 * TRACING_DATA blob that perf itself recorded (file and pipe), and
 * without one (perf refuses, as documented).  Checkpoints: a recording
 * that adds tracepoint events (attrs and formats, TRACING_DATA past 64
 * KiB) between rounds, cut at a dense sample of lengths of every round
 * (the last at every byte) as a killed recorder leaves it: each cut holds
 * exactly its last complete round, in our reader and in perf.  Also the
 * writer's own checks: malformed records, records split across calls,
 * mismatched attrs, EPIPE, O_APPEND, an empty recording.
 *
 * PD_TEST_KEEP=1 keeps the files for a look.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "format/perf_data.h"
#include "format/perf_reader.h"
#include "harness.h"

#define PERF "/usr/bin/perf"
#define ID_CLOCK0 101
#define ID_CLOCK1 102
#define ID_FAULTS 201
#define SAMPLE_TYPE                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define SAMPLE_SIZE 56 /* header + id, ip, pid/tid, time, cpu/res, period */
#define ID_ALL_SIZE 32 /* sample_id: pid/tid, time, cpu/res, identifier */

static char dir[] = "/tmp/perfring-test-pd-XXXXXX";
static pid_t tmp_owner;
static int g_argc;
static char **g_argv;

static void tmp_cleanup(void)
{
	DIR *d;
	struct dirent *e;
	char p[PATH_MAX];

	if (getpid() != tmp_owner)
		return;
	if (getenv("PD_TEST_KEEP")) {
		fprintf(stderr, "files kept in %s\n", dir);
		return;
	}
	d = opendir(dir);
	if (d) {
		while ((e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			remove(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* ---- the functions the samples point into ---- */

static volatile int sink;

__attribute__((noinline, used)) static int pd_hot_alpha(int x)
{
	int i;

	for (i = 0; i < x; i++)
		sink += i * 3;
	return sink;
}

__attribute__((noinline, used)) static int pd_hot_beta(int x)
{
	int i;

	for (i = 0; i < x; i++)
		sink ^= i * 7;
	return sink;
}

static uint64_t fn_addr(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn;
}

/* ---- this program's text mapping, for MMAP2 ---- */

struct exe_map {
	uint64_t start, len, pgoff, ino;
	unsigned maj, min;
	char path[PATH_MAX];
};

static void find_exe_map(struct exe_map *m)
{
	char exe[PATH_MAX], line[PATH_MAX + 256], perms[8], path[PATH_MAX];
	unsigned long long s, e, off, ino;
	uint64_t a = fn_addr(pd_hot_alpha), b = fn_addr(pd_hot_beta);
	unsigned maj, min;
	ssize_t n;
	FILE *f;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	f = fopen("/proc/self/maps", "r");
	CHECK(f, "/proc/self/maps: %s", strerror(errno));
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e,
			   perms, &off, &maj, &min, &ino, path) != 8)
			continue;
		if (strcmp(path, exe) || perms[2] != 'x')
			continue;
		if (a < s || a >= e || b < s || b >= e)
			continue;
		m->start = s;
		m->len = e - s;
		m->pgoff = off;
		m->maj = maj;
		m->min = min;
		m->ino = ino;
		snprintf(m->path, sizeof(m->path), "%s", exe);
		break;
	}
	fclose(f);
	CHECK(m->start, "no executable mapping of %s holds our functions", exe);
}

/* ---- record builders ---- */

struct rbuf {
	unsigned char *p;
	size_t len, cap;
};

static void *rb_add(struct rbuf *b, size_t len)
{
	void *p;

	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p, "out of memory");
	}
	p = b->p + b->len;
	memset(p, 0, len);
	b->len += len;
	return p;
}

static void put(unsigned char **pp, const void *v, size_t n)
{
	memcpy(*pp, v, n);
	*pp += n;
}

static void put32(unsigned char **pp, uint32_t v)
{
	put(pp, &v, 4);
}

static void put64(unsigned char **pp, uint64_t v)
{
	put(pp, &v, 8);
}

static void put_hdr(unsigned char **pp, uint32_t type, uint16_t misc,
		    uint16_t size)
{
	put32(pp, type);
	put(pp, &misc, 2);
	put(pp, &size, 2);
}

static void put_id_all(unsigned char **pp, uint64_t time)
{
	put32(pp, (uint32_t)getpid());
	put32(pp, (uint32_t)getpid());
	put64(pp, time);
	put32(pp, 0); /* cpu */
	put32(pp, 0);
	put64(pp, ID_CLOCK0);
}

static void add_comm(struct rbuf *b, uint64_t time)
{
	static const char comm[] = "pd-test";
	size_t clen = (sizeof(comm) + 7) & ~7ul;
	uint16_t size = (uint16_t)(8 + 8 + clen + ID_ALL_SIZE);
	unsigned char *p = rb_add(b, size);

	put_hdr(&p, PERF_RECORD_COMM, 0, size);
	put32(&p, (uint32_t)getpid());
	put32(&p, (uint32_t)getpid());
	memcpy(p, comm, sizeof(comm));
	p += clen;
	put_id_all(&p, time);
}

static void add_mmap2(struct rbuf *b, const struct exe_map *m, uint64_t time)
{
	size_t flen = (strlen(m->path) + 1 + 7) & ~7ul;
	uint16_t size = (uint16_t)(8 + 64 + flen + ID_ALL_SIZE);
	unsigned char *p = rb_add(b, size);

	put_hdr(&p, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, size);
	put32(&p, (uint32_t)getpid());
	put32(&p, (uint32_t)getpid());
	put64(&p, m->start);
	put64(&p, m->len);
	put64(&p, m->pgoff);
	put32(&p, m->maj);
	put32(&p, m->min);
	put64(&p, m->ino);
	put64(&p, 0); /* ino_generation */
	put32(&p, PROT_READ | PROT_EXEC);
	put32(&p, MAP_PRIVATE);
	memcpy(p, m->path, strlen(m->path));
	p += flen;
	put_id_all(&p, time);
}

struct counts {
	unsigned alpha, beta, clock, faults;
};

/* Sample i: even ones hit pd_hot_alpha, odd ones pd_hot_beta; every third
 * is a page fault, the others cpu-clock on cpu 0 or 1. */
static void add_sample(struct rbuf *b, unsigned i, uint64_t time,
		       struct counts *c)
{
	unsigned char *p = rb_add(b, SAMPLE_SIZE);
	bool fault = i % 3 == 2;
	uint32_t cpu = fault ? 0 : i % 2;
	uint64_t id = fault ? ID_FAULTS : (cpu ? ID_CLOCK1 : ID_CLOCK0);
	uint64_t ip =
		(i % 2 ? fn_addr(pd_hot_beta) : fn_addr(pd_hot_alpha)) + 1;

	put_hdr(&p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, SAMPLE_SIZE);
	put64(&p, id);
	put64(&p, ip);
	put32(&p, (uint32_t)getpid());
	put32(&p, (uint32_t)getpid());
	put64(&p, time);
	put32(&p, cpu);
	put32(&p, 0);
	put64(&p, fault ? 1 : 250000);
	if (i % 2)
		c->beta++;
	else
		c->alpha++;
	if (fault)
		c->faults++;
	else
		c->clock++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- a recording ---- */

struct rec {
	struct pd_writer *w;
	struct exe_map map;
	struct counts c;
	unsigned nsamples;
	unsigned rounds;
	/* file mode: a checkpoint's table record (a COMM of the checkpoint
	 * task) follows each round; 1 when the last lies past data.size */
	unsigned cut;
	uint64_t t, first, last;
};

static void attrs(struct perf_event_attr *a, struct perf_event_attr *b)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 250000;
	a->sample_type = SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->disabled = 1;
	a->exclude_kernel = 1; /* user samples only: no kernel map needed */
	*b = *a;
	b->config = PERF_COUNT_SW_PAGE_FAULTS;
	b->sample_period = 1;
	b->mmap = b->mmap2 = b->comm = 0;
}

static void rec_open(struct rec *r, int fd, bool pipe)
{
	static const uint64_t clock_ids[] = { ID_CLOCK0, ID_CLOCK1 };
	static const uint64_t fault_ids[] = { ID_FAULTS };
	struct perf_event_attr a, b;
	struct rbuf rb = { 0 };

	memset(r, 0, sizeof(*r));
	find_exe_map(&r->map);
	attrs(&a, &b);
	CHECK_EQ(pd_writer_open(fd, pipe, g_argc, g_argv, &r->w), 0);
	CHECK_EQ(pd_writer_add_attr(r->w, &a, "cpu-clock", clock_ids, 2), 0);
	CHECK_EQ(pd_writer_add_attr(r->w, &b, "pd-faults", fault_ids, 1), 0);
	pd_writer_set_clockid(r->w, CLOCK_MONOTONIC);
	CHECK_EQ(pd_writer_start(r->w), 0);
	/* a file starts with an empty round: its checkpoint's FINISHED_ROUND
	 * (then its table record) */
	r->rounds = pipe ? 0 : 1;

	r->t = now_ns();
	add_comm(&rb, r->t);
	add_mmap2(&rb, &r->map, r->t + 1);
	r->t += 1000;
	CHECK_EQ(pd_writer_write(r->w, rb.p, rb.len), 0);
	free(rb.p);
}

/* Writes @n samples (in chunks of @chunk records), then ends the round
 * when @finish.  Returns the first error. */
static int rec_round(struct rec *r, unsigned n, unsigned chunk, bool finish)
{
	struct rbuf rb = { 0 };
	struct counts c = r->c;
	unsigned i, k;
	int ret = 0;

	for (i = 0; i < n && !ret; i += k) {
		rb.len = 0;
		for (k = 0; k < chunk && i + k < n; k++) {
			if (!r->first)
				r->first = r->t;
			r->last = r->t;
			add_sample(&rb, r->nsamples + i + k, r->t, &c);
			r->t += 10000;
		}
		ret = pd_writer_write(r->w, rb.p, rb.len);
	}
	free(rb.p);
	if (!ret && finish)
		ret = pd_writer_finish_round(r->w);
	if (!ret) {
		r->c = c;
		r->nsamples += n;
		r->rounds += finish;
		pd_writer_note_time(r->w, r->first, r->last);
	}
	return ret;
}

/* ---- running perf ---- */

/* Runs @cmd with stderr folded into stdout; returns the output (malloc()ed)
 * and its exit status in *status, or checks that it is 0 when @status is
 * NULL. */
static char *vrun(int *status, const char *fmt, va_list ap)
{
	char cmd[PATH_MAX * 2 + 256], *out = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int st;

	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	strcat(cmd, " 2>&1");
	f = popen(cmd, "r");
	CHECK(f, "popen %s: %s", cmd, strerror(errno));
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			out = realloc(out, cap);
			CHECK(out, "out of memory");
		}
		n = fread(out + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	out[len] = '\0';
	st = pclose(f);
	if (status) {
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		return out;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "`%s` failed (status %d):\n%.4000s", cmd, st, out);
	return out;
}

static char *run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *run(const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	out = vrun(NULL, fmt, ap);
	va_end(ap);
	return out;
}

static char *run_status(int *status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *run_status(int *status, const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	out = vrun(status, fmt, ap);
	va_end(ap);
	return out;
}

static void no_complaints(const char *out, const char *what)
{
	static const char *const bad[] = {
		"WARNING",	"Warning",	"warning",     "failed",
		"incompatible", "Error",	"error",       "unsupported",
		"corrupt",	"out of order", "Can't",       "unexpected",
		"invalid",	"non matching", "not present", "lost",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!strstr(out, bad[i]), "%s: perf says \"%s\":\n%.4000s",
		      what, bad[i], out);
}

static unsigned count_lines(const char *out, const char *needle)
{
	const char *p = out, *nl;
	unsigned n = 0;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (memmem(p, (size_t)(nl - p), needle, strlen(needle)))
			n++;
		p = *nl ? nl + 1 : nl;
	}
	return n;
}

/* The number after the first "@key" in perf report --stats output (the
 * aggregated table), 0 if the key is not there. */
static unsigned long stat_of(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	return p ? strtoul(p + strlen(key), NULL, 10) : 0;
}

/* What a file with @r's content must look like in perf. */
static void check_perf(const char *path, const struct rec *r, bool pipe,
		       bool features)
{
	const char *faults_name = features ? "pd-faults" : "page-faults";
	char *out;

	out = run(PERF " report --stats -i %s", path);
	no_complaints(out, "perf report --stats");
	CHECK_EQ(stat_of(out, "SAMPLE events:"), r->nsamples);
	/* pd-test's, then one table record per round (in file mode) */
	CHECK_EQ(stat_of(out, "COMM events:"),
		 1 + (pipe ? 0 : r->rounds - r->cut));
	CHECK_EQ(stat_of(out, "MMAP2 events:"), 1);
	CHECK_EQ(stat_of(out, "FINISHED_ROUND events:"), r->rounds);
	/* (perf 6.1 report --stats ignores features and EVENT_UPDATE in pipe
	 * mode: names there come from the attrs, "page-faults:uh") */
	if (!pipe)
		CHECK(strstr(out, features ? "pd-faults stats:" :
					     "page-faults:uh stats:"),
		      "event names:\n%s", out);
	if (pipe) {
		CHECK_EQ(stat_of(out, "ATTR events:"), 2);
		CHECK_EQ(stat_of(out, "EVENT_UPDATE events:"), 2);
		CHECK(stat_of(out, "FEATURE events:") >= 8, "%s", out);
	}
	free(out);

	out = run(PERF " report -D -i %s", path);
	no_complaints(out, "perf report -D");
	CHECK_EQ(count_lines(out, "PERF_RECORD_SAMPLE("), r->nsamples);
	CHECK_EQ(count_lines(out, "PERF_RECORD_FINISHED_ROUND"), r->rounds);
	CHECK_EQ(count_lines(out, "PERF_RECORD_COMM: pd-test"), 1);
	free(out);

	out = run(PERF " script -i %s -F comm,pid,tid,cpu,time,event,ip,sym",
		  path);
	no_complaints(out, "perf script");
	CHECK_EQ(count_lines(out, "pd_hot_alpha"), r->c.alpha);
	CHECK_EQ(count_lines(out, "pd_hot_beta"), r->c.beta);
	CHECK_EQ(count_lines(out, "cpu-clock"), r->c.clock);
	CHECK_EQ(count_lines(out, faults_name), r->c.faults);
	CHECK_EQ(count_lines(out, "pd-test"), r->nsamples);
	free(out);

	out = run(PERF " report --stdio --sort sym -i %s", path);
	no_complaints(out, "perf report --stdio");
	CHECK(strstr(out, "pd_hot_alpha") && strstr(out, "pd_hot_beta"),
	      "symbols not resolved:\n%.4000s", out);
	free(out);

	out = run(PERF " report --header-only -i %s", path);
	no_complaints(out, "perf report --header-only");
	if (features) {
		CHECK(strstr(out, "# hostname : "), "%s", out);
		CHECK(strstr(out, "# os release : "), "%s", out);
		CHECK(strstr(out, "# perf version : perfring-"), "%s", out);
		CHECK(strstr(out, "# arch : "), "%s", out);
		CHECK(strstr(out, "# nrcpus online : "), "%s", out);
		CHECK(strstr(out, "# total memory : "), "%s", out);
		CHECK(strstr(out, "# cmdline : "), "%s", out);
		CHECK(strstr(out, g_argv[0]), "%s", out);
		CHECK(strstr(out,
			     "# event : name = cpu-clock, , id = { 101, 102 }"),
		      "%s", out);
		CHECK(strstr(out, "# event : name = pd-faults, , id = { 201 }"),
		      "%s", out);
		CHECK(strstr(out, "# clockid frequency: "), "%s", out);
		CHECK(strstr(out, "# clockid: monotonic (1)"), "%s", out);
		if (!pipe)
			CHECK(strstr(out, "# sample duration : "), "%s", out);
	} else {
		CHECK(strstr(out,
			     "# missing features: TRACING_DATA BUILD_ID HOSTNAME"),
		      "%s", out);
	}
	free(out);
}

static int open_new(const char *name, char *path)
{
	int fd;

	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	return fd;
}

static off_t file_size(int fd)
{
	struct stat st;

	CHECK(fstat(fd, &st) == 0, "fstat: %s", strerror(errno));
	return st.st_size;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The size of the checkpoint's table record at the data end (header @h). */
static uint64_t table_record_size(int fd, const unsigned char *h)
{
	unsigned char r[16];
	uint16_t size;

	CHECK(pread(fd, r, 16, (off_t)(get64(h + 40) + get64(h + 48))) == 16,
	      "no table record at the data end");
	CHECK_EQ(r[0], PERF_RECORD_COMM); /* of the checkpoint task */
	CHECK_EQ(get64(r + 8), 0xfffffffefffffffeull); /* pid, tid -2 */
	memcpy(&size, r + 6, 2);
	return size;
}

/* ---- the cases ---- */

/* A normal file: rounds bigger than the write buffer, a record split over
 * two calls, and perf reading the file while it is still being written. */
static void test_file(void)
{
	char path[PATH_MAX];
	unsigned char one[SAMPLE_SIZE];
	struct rbuf rb = { 0 };
	struct rec r;
	int fd = open_new("file.data", path);
	uint64_t bytes;
	char *out;

	rec_open(&r, fd, false);
	CHECK_EQ(rec_round(&r, 6000, 1000, true), 0); /* > 256 KiB */
	CHECK_EQ(rec_round(&r, 700, 7, true), 0);

	/* the file is readable up to the last complete round right now */
	out = run(PERF " report --stats -i %s", path);
	no_complaints(out, "perf report --stats (still recording)");
	CHECK_EQ(stat_of(out, "SAMPLE events:"), r.nsamples);
	free(out);

	/* one record split over three calls */
	add_sample(&rb, r.nsamples, r.t, &r.c);
	r.last = r.t;
	r.t += 10000;
	memcpy(one, rb.p, SAMPLE_SIZE);
	CHECK_EQ(pd_writer_write(r.w, one, 5), 0);
	CHECK_EQ(pd_writer_finish_round(r.w), -EINVAL); /* inside a record */
	CHECK_EQ(pd_writer_write(r.w, one + 5, 20), 0);
	CHECK_EQ(pd_writer_write(r.w, one + 25, SAMPLE_SIZE - 25), 0);
	r.nsamples++;
	free(rb.p);
	CHECK_EQ(rec_round(&r, 1, 1, true), 0);
	CHECK_EQ(rec_round(&r, 300, 300, false), 0); /* no final round */
	CHECK_EQ(pd_writer_finish_round(NULL), -EINVAL);
	CHECK_EQ(pd_writer_close(r.w, &bytes), 0);
	r.rounds++; /* close ends the last round with a checkpoint */
	CHECK(bytes > (uint64_t)r.nsamples * SAMPLE_SIZE, "data size %llu",
	      (unsigned long long)bytes);
	close(fd);

	check_perf(path, &r, false, true);
	printf("file: %u samples in %u rounds: perf agrees\n", r.nsamples,
	       r.rounds);
}

/* The pipe format, in a regular file. */
static void test_pipe_file(void)
{
	char path[PATH_MAX];
	struct rec r;
	int fd = open_new("pipe.data", path);

	rec_open(&r, fd, true);
	CHECK_EQ(rec_round(&r, 5000, 5000, true), 0);
	CHECK_EQ(rec_round(&r, 123, 10, true), 0);
	CHECK_EQ(pd_writer_close(r.w, NULL), 0);
	close(fd);
	check_perf(path, &r, true, true);
	printf("pipe format file: %u samples: perf agrees\n", r.nsamples);
}

/* The pipe format through a real pipe into `perf script -i -` and
 * `perf report --stats -i -`. */
static void test_real_pipe(void)
{
	char path[PATH_MAX], cmd[PATH_MAX * 2];
	struct rec r;
	char *out;
	FILE *f;
	int st, i;

	snprintf(path, sizeof(path), "%s/pipe.out", dir);
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "%s > %s 2>&1",
			 i ? PERF " report --stats -i -" :
			     PERF " script -i - -F comm,tid,event,ip,sym",
			 path);
		f = popen(cmd, "w");
		CHECK(f, "popen %s: %s", cmd, strerror(errno));
		rec_open(&r, fileno(f), true);
		CHECK_EQ(rec_round(&r, 3000, 100, true), 0);
		CHECK_EQ(rec_round(&r, 3000, 3000, true), 0);
		CHECK_EQ(pd_writer_close(r.w, NULL), 0);
		st = pclose(f);
		out = run("cat %s", path);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "`%s` failed (%d):\n%.4000s", cmd, st, out);
		no_complaints(out, cmd);
		if (i) {
			CHECK_EQ(stat_of(out, "SAMPLE events:"), r.nsamples);
			CHECK_EQ(stat_of(out, "COMM events:"), 1);
		} else {
			CHECK_EQ(count_lines(out, "pd_hot_alpha"), r.c.alpha);
			CHECK_EQ(count_lines(out, "pd_hot_beta"), r.c.beta);
			CHECK_EQ(count_lines(out, "pd-faults"), r.c.faults);
		}
		free(out);
	}
	printf("real pipe: perf script and perf report read %u samples\n",
	       r.nsamples);
}

/*
 * Writes fail (RLIMIT_FSIZE, EFBIG) part-way through a round that is bigger
 * than the write buffer, @room bytes after the last complete round.  The
 * file must keep every complete round and open in perf; with enough room
 * the features are there too.
 */
static void test_write_error(const char *name, off_t room, bool pipe,
			     bool features)
{
	struct rlimit old, lim;
	char path[PATH_MAX];
	struct rec r;
	int fd = open_new(name, path), ret;
	uint64_t bytes, kept;

	rec_open(&r, fd, pipe);
	CHECK_EQ(rec_round(&r, 1000, 100, true), 0);
	CHECK_EQ(rec_round(&r, 1000, 1000, true), 0);
	bytes = pd_writer_data_bytes(r.w);

	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
	lim = old;
	lim.rlim_cur = (rlim_t)(file_size(fd) + room);
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit: %s",
	      strerror(errno));
	ret = rec_round(&r, 8000, 500, true); /* 448 KB */
	CHECK_EQ(ret, -EFBIG);
	CHECK_EQ(pd_writer_write(r.w, "12345678", 8), -EFBIG); /* sticky */
	CHECK_EQ(pd_writer_finish_round(r.w), -EFBIG);
	CHECK(pd_writer_data_bytes(r.w) > bytes, "nothing was written");
	CHECK_EQ(pd_writer_close(r.w, &kept), -EFBIG);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit: %s",
	      strerror(errno));
	/* the file keeps the complete rounds: their data, whole */
	CHECK(kept > 0 && kept <= bytes, "kept %llu of %llu bytes",
	      (unsigned long long)kept, (unsigned long long)bytes);
	if (!pipe) {
		unsigned char h[104];

		CHECK(pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h),
		      "pread");
		/* ... and ends with the table record at the data end */
		CHECK_EQ(get64(h + 48), kept);
		CHECK_EQ((uint64_t)file_size(fd),
			 get64(h + 40) + kept + table_record_size(fd, h));
		/* which lies past data.size (its FINISHED_ROUND does not) */
		r.cut = 1;
	}
	close(fd);

	check_perf(path, &r, pipe, features);
	printf("%s: EFBIG with %lld bytes of room: close returned it, perf reads the %u samples of the complete rounds%s\n",
	       name, (long long)room, r.nsamples,
	       features ? " and the features" : " (no room for the features)");
}

/*
 * Tracepoints: the TRACING_DATA blob, the tracepoint's id and the raw data
 * of one sched:sched_switch sample come from a file perf itself records
 * here (independent of our tracing data builder).  false when perf cannot
 * record tracepoints on this machine.
 */
struct tp_src {
	unsigned char *file;
	const unsigned char *tdata;
	size_t tlen;
	uint64_t config;
	const unsigned char *raw; /* u32 raw_size, then the raw data */
	uint32_t raw_len; /* 4 + raw_size */
};

static bool tp_source(struct tp_src *t)
{
	char path[PATH_MAX];
	uint64_t attrs, data, dsize, tab, st, pos;
	size_t len = 0;
	char *out;
	FILE *f;
	int status;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/tp-src.data", dir);
	out = run_status(
		&status,
		PERF
		" record -q -B -N -e sched:sched_switch -c 1 -o %s -- sleep 0.01",
		path);
	if (status) {
		REFUSED("tracepoints: perf cannot record sched:sched_switch here (exit %d): %.300s",
			status, out ? out : "");
		free(out);
		return false;
	}
	free(out);
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	t->file = malloc(1 << 20);
	CHECK(t->file, "out of memory");
	len = fread(t->file, 1, 1 << 20, f);
	fclose(f);
	unlink(path);
	CHECK(len > 104 && get64(t->file) == 0x32454c4946524550ull,
	      "perf wrote no PERFILE2 file");
	attrs = get64(t->file + 24);
	data = get64(t->file + 40);
	dsize = get64(t->file + 48);
	CHECK(get64(t->file + 32) == get64(t->file + 16), "one attr expected");
	CHECK(get64(t->file + 72) & 2, "no TRACING_DATA in perf's own file");
	/* TRACING_DATA is bit 1, the lowest: the first table entry */
	tab = data + dsize;
	CHECK(tab + 16 <= len &&
		      get64(t->file + tab) + get64(t->file + tab + 8) <= len,
	      "bad feature table");
	t->tdata = t->file + get64(t->file + tab);
	t->tlen = get64(t->file + tab + 8);
	t->config = get64(t->file + attrs + 8);
	st = get64(t->file + attrs + 24);
	CHECK(st == (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		     PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW),
	      "tracepoints: perf's sample_type 0x%llx is not perf 6.1's",
	      (unsigned long long)st);
	for (pos = data; pos + 8 <= data + dsize;) {
		uint16_t size;
		uint32_t type, raw_size;

		memcpy(&type, t->file + pos, 4);
		memcpy(&size, t->file + pos + 6, 2);
		CHECK(size >= 8, "bad record in perf's own file");
		if (type == PERF_RECORD_SAMPLE) {
			memcpy(&raw_size, t->file + pos + 48, 4);
			t->raw = t->file + pos + 48;
			t->raw_len = 4 + raw_size;
			CHECK(48 + t->raw_len <= size && t->raw_len % 8 == 0,
			      "odd raw sample");
			return true;
		}
		pos += size;
	}
	CHECK(false,
	      "tracepoints: perf recorded no sched_switch sample (sleep 0.01 switches at least once)");
	return false;
}

static void test_tracepoint(const struct tp_src *t, bool pipe, bool tdata)
{
	static const uint64_t clock_ids[] = { ID_CLOCK0, ID_CLOCK1 };
	static const uint64_t tp_ids[] = { 301 };
	struct perf_event_attr a, b;
	struct exe_map m;
	struct rbuf rb = { 0 };
	struct counts c = { 0 };
	char path[PATH_MAX];
	uint64_t time = now_ns();
	unsigned i, ntp = 0;
	unsigned char *p;
	struct pd_writer *w;
	char *out;
	int fd, status;

	fd = open_new(pipe ? "tp-pipe.data" : "tp.data", path);
	find_exe_map(&m);
	attrs(&a, &b);
	b.type = PERF_TYPE_TRACEPOINT;
	b.config = t->config;
	b.sample_type = SAMPLE_TYPE | PERF_SAMPLE_RAW;
	CHECK_EQ(pd_writer_open(fd, pipe, g_argc, g_argv, &w), 0);
	CHECK_EQ(pd_writer_add_attr(w, &a, "cpu-clock", clock_ids, 2), 0);
	CHECK_EQ(pd_writer_add_attr(w, &b, "sched:sched_switch", tp_ids, 1), 0);
	if (tdata)
		CHECK_EQ(pd_writer_set_tracing_data(w, t->tdata, t->tlen), 0);
	pd_writer_set_clockid(w, CLOCK_MONOTONIC);
	CHECK_EQ(pd_writer_start(w), 0);
	add_comm(&rb, time);
	add_mmap2(&rb, &m, time);
	for (i = 0; i < 300; i++) {
		time += 1000;
		if (i % 3) {
			add_sample(&rb, i * 3, time, &c); /* cpu-clock only */
			continue;
		}
		p = rb_add(&rb, SAMPLE_SIZE + t->raw_len);
		put_hdr(&p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
			(uint16_t)(SAMPLE_SIZE + t->raw_len));
		put64(&p, tp_ids[0]);
		put64(&p, fn_addr(pd_hot_alpha) + 1);
		put32(&p, (uint32_t)getpid());
		put32(&p, (uint32_t)getpid());
		put64(&p, time);
		put32(&p, 1);
		put32(&p, 0);
		put64(&p, 1);
		memcpy(p, t->raw, t->raw_len);
		ntp++;
	}
	CHECK_EQ(pd_writer_write(w, rb.p, rb.len), 0);
	CHECK_EQ(pd_writer_finish_round(w), 0);
	free(rb.p);
	CHECK_EQ(pd_writer_close(w, NULL), 0);
	close(fd);

	if (!tdata) {
		/* the documented dead end: perf needs the formats */
		out = run_status(&status, PERF " report --stats -i %s", path);
		CHECK(status != 0,
		      "perf opened tracepoints without formats:\n%s", out);
		free(out);
		printf("tracepoints without TRACING_DATA: perf refuses the file, as documented\n");
		return;
	}
	/*
	 * perf 6.1 report --stats cannot read tracing data in a pipe (its
	 * stats tool leaves the data in the stream; perf's own `perf record
	 * -o -` output fails the same way): count with -D there.
	 */
	if (pipe) {
		out = run(PERF " report -D -i %s", path);
		no_complaints(out, "perf report -D (tracepoints)");
		CHECK_EQ(count_lines(out, "PERF_RECORD_SAMPLE("),
			 ntp + c.clock);
		CHECK_EQ(count_lines(out, "PERF_RECORD_TRACING_DATA"), 1);
	} else {
		out = run(PERF " report --stats -i %s", path);
		no_complaints(out, "perf report --stats (tracepoints)");
		CHECK_EQ(stat_of(out, "SAMPLE events:"), ntp + c.clock);
	}
	free(out);
	out = run(PERF " script -i %s", path);
	no_complaints(out, "perf script (tracepoints)");
	CHECK_EQ(count_lines(out, "sched:sched_switch:"), ntp);
	CHECK_EQ(count_lines(out, "prev_comm="), ntp);
	CHECK_EQ(count_lines(out, "next_pid="), ntp);
	CHECK_EQ(count_lines(out, "pd_hot_alpha"),
		 c.alpha); /* tracepoint lines show no ip */
	free(out);
	printf("tracepoints (%s): %zu bytes of tracing data; perf script decodes %u sched_switch samples\n",
	       pipe ? "pipe" : "file", t->tlen, ntp);
}

/*
 * ---- checkpoints: the file cut at any byte ----
 *
 * A recording whose rounds add tracepoint events of a system "pdtest"
 * (attr and format, as application events come) between samples: one
 * event, then CK_BIG at once (TRACING_DATA past 64 KiB: it goes to a slot),
 * then one more twice (the other slot, then the first again).  After each
 * round the file is kept as it is.  A recorder killed at an instant of
 * round k+1 leaves the bytes written so far with the header of round k:
 * the file of round k+1 cut at any length between the two rounds' ends,
 * with round k's header -- the slot written in round k+1 either already
 * there (variant "slot written") or not (variant "slot not written").
 * Each such file must open in our reader and hold exactly the records,
 * attrs and names of round k; two of them go to the real perf as well.
 */
#define CK_BIG 200
#define CK_ID0 60000
#define CK_APP_ID0 1000
#define CK_MAX_ATTRS (2 + CK_BIG + 8)
#define CK_ROUNDS 8
#define CK_TP_SAMPLE 64 /* header, id, tid, time, cpu, raw u32 + 20 */
#define CK_TP_TYPE                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

struct ck_state {
	unsigned char *img; /* the file after the round */
	uint64_t len;
	uint64_t end; /* end of its table record: where its checkpoint ends */
	uint32_t nattrs;
	unsigned nsamples, rounds;
	unsigned per_attr[CK_MAX_ATTRS];
};

struct ck {
	struct pd_writer *w;
	int fd;
	struct exe_map map;
	uint64_t t;
	uint32_t nattrs;
	unsigned nsamples, rounds, nstd;
	unsigned per_attr[CK_MAX_ATTRS];
	char names[CK_MAX_ATTRS][32];
	struct ck_state st[CK_ROUNDS + 1];
	int nst;
	struct rbuf rb;
};

static void ck_add_event(struct ck *c)
{
	unsigned j = c->nattrs - 2;
	struct perf_event_attr a;
	uint64_t id = CK_APP_ID0 + j;
	char fmt[1024];
	int n;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = CK_ID0 + j;
	a.sample_type = CK_TP_TYPE;
	a.sample_period = 1;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	CHECK(c->nattrs < CK_MAX_ATTRS, "too many events");
	snprintf(c->names[c->nattrs], sizeof(c->names[0]), "pdtest:ev%u", j);
	CHECK_EQ(pd_writer_add_attr(c->w, &a, c->names[c->nattrs], &id, 1), 0);
	n = snprintf(
		fmt, sizeof(fmt),
		"name: ev%u\nID: %u\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:u64 value;\toffset:8;\tsize:8;\tsigned:0;\n\n"
		"print fmt: \"value=%%llu\", REC->value\n",
		j, CK_ID0 + j);
	CHECK_EQ(pd_writer_add_format(c->w, "pdtest", fmt, (size_t)n), 0);
	c->nattrs++;
}

/* A sample of pdtest:ev@j. */
static void ck_tp_sample(struct ck *c, unsigned j, uint64_t value)
{
	unsigned char *p = rb_add(&c->rb, CK_TP_SAMPLE);
	uint16_t type = (uint16_t)(CK_ID0 + j);

	put_hdr(&p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, CK_TP_SAMPLE);
	put64(&p, CK_APP_ID0 + j);
	put32(&p, (uint32_t)getpid());
	put32(&p, (uint32_t)getpid());
	put64(&p, c->t);
	put32(&p, 1);
	put32(&p, 0);
	put32(&p, 20);
	put(&p, &type, 2);
	put32(&p, 0); /* flags, preempt_count, half of common_pid */
	p -= 2;
	put32(&p, (uint32_t)getpid());
	put64(&p, value);
	c->t += 1000;
	c->nsamples++;
	c->per_attr[2 + j]++;
}

static void ck_std_samples(struct ck *c, unsigned n)
{
	struct counts dummy = { 0 };

	for (unsigned i = 0; i < n; i++, c->nstd++) {
		add_sample(&c->rb, c->nstd, c->t, &dummy);
		c->t += 1000;
		c->nsamples++;
		c->per_attr[c->nstd % 3 == 2 ? 1 : 0]++;
	}
}

/* Ends the round and keeps the file as it is now. */
static void ck_round(struct ck *c)
{
	struct ck_state *s = &c->st[c->nst];
	unsigned char h[104], r[8];
	uint16_t size;

	CHECK_EQ(pd_writer_write(c->w, c->rb.p, c->rb.len), 0);
	c->rb.len = 0;
	pd_writer_note_time(c->w, 1, c->t);
	CHECK_EQ(pd_writer_finish_round(c->w), 0);
	c->rounds++;
	CHECK(c->nst < CK_ROUNDS + 1, "too many rounds");
	s->len = (uint64_t)file_size(c->fd);
	s->img = malloc(s->len);
	CHECK(s->img, "out of memory");
	CHECK(pread(c->fd, s->img, s->len, 0) == (ssize_t)s->len, "pread");
	memcpy(h, s->img, sizeof(h));
	memcpy(r, s->img + get64(h + 40) + get64(h + 48), 8);
	memcpy(&size, r + 6, 2);
	s->end = get64(h + 40) + get64(h + 48) + size;
	CHECK_EQ(s->end, s->len); /* nothing after the table record */
	s->nattrs = c->nattrs;
	s->nsamples = c->nsamples;
	s->rounds = c->rounds; /* the table record follows the last one */
	memcpy(s->per_attr, c->per_attr, sizeof(s->per_attr));
	c->nst++;
}

/* The file in @fd must hold exactly what round @s held. */
static void ck_expect(struct ck *c, int fd, const struct ck_state *s,
		      uint64_t cut, const char *variant)
{
	const struct prd_stats *st;
	const uint64_t *n;
	struct prd_file *f;
	int ret;

	ret = prd_open_fd(fd, "cut", false, &f);
	CHECK(ret == 0, "cut at %llu (%s): open: %d", (unsigned long long)cut,
	      variant, ret);
	CHECK(prd_nr_attrs(f) == s->nattrs,
	      "cut at %llu (%s): %u attrs, not %u", (unsigned long long)cut,
	      variant, prd_nr_attrs(f), s->nattrs);
	for (uint32_t i = 0; i < s->nattrs; i++) {
		const struct prd_attr *a = prd_attr(f, i);

		CHECK(a->name && !strcmp(a->name, c->names[i]),
		      "cut at %llu (%s): attr %u is %s, not %s",
		      (unsigned long long)cut, variant, i,
		      a->name ? a->name : "unnamed", c->names[i]);
		if (i >= 2) {
			const char *tp = prd_tracepoint_name(f, a->attr.config);

			CHECK(tp && !strcmp(tp, c->names[i]),
			      "cut at %llu (%s): no format for %s",
			      (unsigned long long)cut, variant, c->names[i]);
		}
	}
	ret = prd_process(f, false, NULL, NULL);
	st = prd_stats(f);
	n = prd_type_counts(f);
	CHECK(ret == 0 && !st->damaged && !st->nr_unknown_id &&
		      !st->nr_unknown_type,
	      "cut at %llu (%s): process %d, damage at %#llx, %llu unknown ids",
	      (unsigned long long)cut, variant, ret,
	      (unsigned long long)st->damage_offset,
	      (unsigned long long)st->nr_unknown_id);
	CHECK(n[PERF_RECORD_SAMPLE] == s->nsamples &&
		      n[PRD_REC_FINISHED_ROUND] == s->rounds,
	      "cut at %llu (%s): %llu samples in %llu rounds, not %u in %u",
	      (unsigned long long)cut, variant,
	      (unsigned long long)n[PERF_RECORD_SAMPLE],
	      (unsigned long long)n[PRD_REC_FINISHED_ROUND], s->nsamples,
	      s->rounds);
	for (uint32_t i = 0; i < s->nattrs; i++)
		CHECK(prd_attr(f, i)->nr_samples == s->per_attr[i],
		      "cut at %llu (%s): %s has %llu samples, not %u",
		      (unsigned long long)cut, variant, c->names[i],
		      (unsigned long long)prd_attr(f, i)->nr_samples,
		      s->per_attr[i]);
	prd_close(f);
}

static void ck_fill(int fd, const unsigned char *p, uint64_t len)
{
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	CHECK(pwrite(fd, p, len, 0) == (ssize_t)len, "pwrite: %s",
	      strerror(errno));
}

/* A cut file in the real perf: round @k's samples, names, fields. */
static void ck_perf(struct ck *c, int k, const unsigned char *img, uint64_t x,
		    uint64_t into)
{
	const struct ck_state *a = &c->st[k];
	char path[PATH_MAX], *out;
	int pfd = open_new("cut.data", path);

	CHECK(pwrite(pfd, img, x, 0) == (ssize_t)x, "pwrite");
	close(pfd);
	out = run(PERF " report --stats -i %s", path);
	no_complaints(out, "perf report --stats (cut)");
	CHECK_EQ(stat_of(out, "SAMPLE events:"), a->nsamples);
	CHECK_EQ(stat_of(out, "FINISHED_ROUND events:"), a->rounds);
	for (uint32_t i = 2; i < a->nattrs; i += 50) {
		char key[64];

		snprintf(key, sizeof(key),
			 "%s stats:\n          SAMPLE events:", c->names[i]);
		CHECK_EQ(stat_of(out, key), a->per_attr[i]);
	}
	free(out);
	out = run(PERF " script -i %s", path);
	no_complaints(out, "perf script (cut)");
	CHECK_EQ(count_lines(out, "pdtest:ev0: value="), a->per_attr[2]);
	CHECK_EQ(count_lines(out, "value="),
		 a->nsamples - a->per_attr[0] - a->per_attr[1]);
	free(out);
	printf("checkpoints: a cut %llu bytes into round %d (%u events) opens in perf with round %d's %u samples\n",
	       (unsigned long long)into, k + 1, c->st[k + 1].nattrs, k,
	       a->nsamples);
}

/* Whether a cut at @x of the round after @a is one of the sample: every
 * byte at @every, else the bytes around the previous end and the end,
 * around each record that is not a sample, and every 4093rd. */
static bool ck_sampled(const struct ck_state *a, const unsigned char *img,
		       uint64_t len, uint64_t x, bool every)
{
	uint64_t r = a->end;

	if (every || x - a->end <= 16 || len - x <= 32 ||
	    (x - a->end) % 4093 == 0)
		return true;
	while (r + 8 <= len && r <= x + 1) {
		uint16_t size;
		uint32_t type;

		memcpy(&type, img + r, 4);
		memcpy(&size, img + r + 6, 2);
		if (size < 8)
			return true; /* not ours: look everywhere */
		if (type != PERF_RECORD_SAMPLE && x + 1 >= r && x <= r + 8)
			return true;
		r += size;
	}
	return false;
}

/* Cuts of the round after @k, both variants (ck_sampled()); @perf_at: one
 * cut (from the end of round k) that also goes to perf, or 0. */
static unsigned ck_cuts(struct ck *c, int k, bool every, uint64_t perf_at)
{
	const struct ck_state *a = &c->st[k], *b = &c->st[k + 1];
	unsigned char *img = malloc(b->len);
	int fd = memfd_create("pd-cut", MFD_CLOEXEC);
	unsigned cuts = 0;

	CHECK(img && fd >= 0, "memfd: %s", strerror(errno));
	for (int v = 0; v < 2; v++) {
		/* v 0: round k+1's slot bytes not written yet; 1: written */
		memcpy(img, b->img, b->len);
		if (v == 0)
			memcpy(img, a->img, a->end);
		else
			memcpy(img, a->img, 104);
		/* without a slot write the two are the same file */
		if (v == 1 && !memcmp(img, a->img, a->end))
			break;
		ck_fill(fd, img, b->len);
		for (uint64_t x = b->len; x >= a->end; x--) {
			if (!ck_sampled(a, img, b->len, x, every) &&
			    x != a->end + perf_at)
				continue;
			CHECK(ftruncate(fd, (off_t)x) == 0, "ftruncate");
			ck_expect(c, fd, a, x,
				  v ? "slot written" : "slot not written");
			cuts++;
			if (v == 1 && x == a->end + perf_at && perf_at)
				ck_perf(c, k, img, x, perf_at);
		}
	}
	free(img);
	close(fd);
	return cuts;
}

static void test_checkpoints(const struct tp_src *tp)
{
	static const uint64_t clock_ids[] = { ID_CLOCK0, ID_CLOCK1 };
	static const uint64_t fault_ids[] = { ID_FAULTS };
	struct perf_event_attr a, b;
	char path[PATH_MAX], *out;
	struct ck *c = calloc(1, sizeof(*c));
	unsigned cuts = 0;
	uint64_t kept;

	CHECK(c, "out of memory");
	c->fd = open_new("ckpt.data", path);
	find_exe_map(&c->map);
	attrs(&a, &b);
	CHECK_EQ(pd_writer_open(c->fd, false, g_argc, g_argv, &c->w), 0);
	CHECK_EQ(pd_writer_add_attr(c->w, &a, "cpu-clock", clock_ids, 2), 0);
	CHECK_EQ(pd_writer_add_attr(c->w, &b, "pd-faults", fault_ids, 1), 0);
	snprintf(c->names[0], sizeof(c->names[0]), "cpu-clock");
	snprintf(c->names[1], sizeof(c->names[1]), "pd-faults");
	c->nattrs = 2;
	/* perf's own blob: the added formats are spliced into it */
	CHECK_EQ(pd_writer_set_tracing_data(c->w, tp->tdata, tp->tlen), 0);
	pd_writer_set_clockid(c->w, CLOCK_MONOTONIC);
	pd_writer_set_growth(c->w, 128 << 10);
	CHECK_EQ(pd_writer_start(c->w), 0);
	c->t = now_ns();
	c->rounds = 1; /* the start's empty round */
	c->st[0].len = c->st[0].end = (uint64_t)file_size(c->fd);
	c->st[0].img = malloc(c->st[0].len);
	CHECK(c->st[0].img && pread(c->fd, c->st[0].img, c->st[0].len, 0) ==
				      (ssize_t)c->st[0].len,
	      "pread");
	c->st[0].nattrs = 2;
	c->st[0].rounds = 1;
	c->nst = 1;

	add_comm(&c->rb, c->t);
	add_mmap2(&c->rb, &c->map, c->t + 1);
	ck_std_samples(c, 100);
	ck_round(c); /* 1 */
	ck_add_event(c);
	ck_std_samples(c, 50);
	for (unsigned i = 0; i < 50; i++)
		ck_tp_sample(c, 0, i);
	ck_round(c); /* 2: one event, in carriers */
	ck_std_samples(c, 100);
	for (unsigned i = 0; i < 20; i++)
		ck_tp_sample(c, 0, 100 + i);
	ck_round(c); /* 3 */
	for (unsigned i = 0; i < CK_BIG; i++)
		ck_add_event(c);
	for (unsigned i = 1; i <= CK_BIG; i++)
		ck_tp_sample(c, i, i);
	ck_std_samples(c, 50);
	ck_round(c); /* 4: TRACING_DATA over 64 KiB: slot 0 */
	ck_std_samples(c, 100);
	ck_round(c); /* 5 */
	ck_add_event(c);
	for (unsigned i = 0; i < 10; i++)
		ck_tp_sample(c, CK_BIG + 1, i);
	ck_round(c); /* 6: slot 1 */
	ck_std_samples(c, 50);
	ck_add_event(c);
	for (unsigned i = 0; i < 5; i++)
		ck_tp_sample(c, CK_BIG + 2, i);
	ck_round(c); /* 7: slot 0 again */
	ck_std_samples(c, 1);
	ck_round(c); /* 8: cut at every byte */

	/* the last round at every byte; the slot rounds 4 and 7 in perf */
	for (int k = 0; k < c->nst - 1; k++)
		cuts += ck_cuts(c, k, k == c->nst - 2,
				k == 3 ? 4000 :
				k == 6 ? 1000 :
					 0);
	printf("checkpoints: %u cut files over %d rounds (attrs, formats and a TRACING_DATA over 64 KiB added between them) each hold exactly their last round\n",
	       cuts, c->nst - 1);

	/* the finished file: perf's layout, every event named */
	ck_std_samples(c, 10);
	CHECK_EQ(pd_writer_write(c->w, c->rb.p, c->rb.len), 0);
	CHECK_EQ(pd_writer_close(c->w, &kept), 0);
	close(c->fd);
	out = run(PERF " report --stats -i %s", path);
	no_complaints(out, "perf report --stats (checkpoints, closed)");
	CHECK_EQ(stat_of(out, "SAMPLE events:"), c->nsamples);
	CHECK(strstr(out, "pdtest:ev202 stats:"), "%s", out);
	free(out);
	out = run(PERF " script -i %s", path);
	no_complaints(out, "perf script (checkpoints, closed)");
	CHECK_EQ(count_lines(out, "pdtest:ev0: value="), c->per_attr[2]);
	CHECK_EQ(count_lines(out, "pdtest:ev202: value="),
		 c->per_attr[2 + CK_BIG + 2]);
	free(out);
	/* the checkpoint task's COMMs (carriers, tables with TRACING_DATA
	 * in the front, carriers and slots): named PRFRCKPT or nothing, not
	 * bytes of an offset (a newline would split the line) */
	out = run(PERF " script --show-task-events -i %s", path);
	CHECK_EQ(count_lines(out, ":-2/-2"),
		 count_lines(out, "PERF_RECORD_COMM: :-2/-2") +
			 count_lines(out, "PERF_RECORD_COMM: PRFRCKPT:-2/-2"));
	CHECK(count_lines(out, "PERF_RECORD_COMM: :-2/-2") >= CK_ROUNDS,
	      "%.4000s", out);
	free(out);
	for (int k = 0; k < c->nst; k++)
		free(c->st[k].img);
	free(c->rb.p);
	free(c);
	printf("checkpoints: the closed file (%llu bytes of data) reads in perf with all %u events\n",
	       (unsigned long long)kept, CK_BIG + 5);
}

/*
 * A real ENOSPC: a 256 KiB tmpfs in a private mount namespace, in a child
 * process so that the mount is nobody else's.  Skipped where unshare() or
 * mount() is not allowed (unprivileged, seccomp).
 */
static void test_enospc(void)
{
	char mnt[PATH_MAX - 64], path[PATH_MAX];
	struct rec r;
	pid_t pid;
	int st, fd, ret = 0, i;

	snprintf(mnt, sizeof(mnt), "%s/tmpfs", dir);
	CHECK(mkdir(mnt, 0700) == 0, "mkdir %s: %s", mnt, strerror(errno));
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", mnt, "tmpfs", 0, "size=256k,mode=0700"))
			_exit(T_EXIT_SKIP);
		snprintf(path, sizeof(path), "%s/enospc.data", mnt);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
		rec_open(&r, fd, false);
		for (i = 0; i < 100 && !ret; i++)
			ret = rec_round(&r, 1000, 250, true); /* 56 KB each */
		CHECK_EQ(ret, -ENOSPC);
		CHECK(r.rounds >= 2, "only %u rounds fit", r.rounds);
		CHECK_EQ(pd_writer_write(r.w, "12345678", 8), -ENOSPC);
		CHECK_EQ(pd_writer_close(r.w, NULL), -ENOSPC);
		close(fd);
		r.cut = 1; /* the last table record lies past data.size */
		check_perf(path, &r, false, true);
		printf("ENOSPC on a 256 KiB tmpfs after %u rounds: close returned it, perf reads the %u samples and the features\n",
		       r.rounds, r.nsamples);
		exit(T_EXIT_PASS);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	rmdir(mnt);
	if (WIFEXITED(st) && WEXITSTATUS(st) == T_EXIT_SKIP) {
		REFUSED("ENOSPC case: the kernel allows no private tmpfs mount here");
		return;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the ENOSPC case failed (status %d)", st);
}

/* The writer's own checks. */
static void test_misuse(void)
{
	static const uint64_t ids[] = { 1, 2 };
	struct perf_event_attr a, b;
	char path[PATH_MAX];
	unsigned char bad[16] = { 9, 0, 0, 0, 0, 0, 4, 0 }; /* size 4 */
	struct pd_writer *w;
	uint64_t bytes;
	char *out;
	int fd = open_new("misuse.data", path);
	int p[2];

	attrs(&a, &b);
	CHECK_EQ(pd_writer_open(-1, false, 0, NULL, &w), -EINVAL);
	CHECK(pipe(p) == 0, "pipe");
	CHECK_EQ(pd_writer_open(p[1], false, 0, NULL, &w), -EINVAL);

	/* a pipe whose reader is gone: EPIPE (SIGPIPE is ignored here) */
	close(p[0]);
	CHECK_EQ(pd_writer_open(p[1], true, 0, NULL, &w), 0);
	CHECK_EQ(pd_writer_add_attr(w, &a, NULL, NULL, 0), 0);
	CHECK_EQ(pd_writer_start(w), -EPIPE);
	CHECK_EQ(pd_writer_close(w, NULL), -EPIPE);
	close(p[1]);

	/* file mode patches the header in place: no O_APPEND */
	snprintf(path, sizeof(path), "%s/misuse.data", dir);
	p[0] = open(path, O_WRONLY | O_APPEND);
	CHECK(p[0] >= 0, "open: %s", strerror(errno));
	CHECK_EQ(pd_writer_open(p[0], false, 0, NULL, &w), -EINVAL);
	close(p[0]);

	/* several events need the id at the same place in every record */
	a.sample_type = b.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
	CHECK_EQ(pd_writer_open(fd, false, 0, NULL, &w), 0);
	CHECK_EQ(pd_writer_add_attr(w, &a, NULL, ids, 1), 0);
	CHECK_EQ(pd_writer_add_attr(w, &b, NULL, ids + 1, 1), 0);
	CHECK_EQ(pd_writer_start(w), -EINVAL);
	CHECK_EQ(pd_writer_close(w, NULL), 0);

	/* several events: each needs ids */
	attrs(&a, &b);
	CHECK_EQ(pd_writer_open(fd, false, 0, NULL, &w), 0);
	CHECK_EQ(pd_writer_add_attr(w, &a, NULL, ids, 1), 0);
	CHECK_EQ(pd_writer_add_attr(w, &b, NULL, NULL, 0), 0);
	CHECK_EQ(pd_writer_start(w), -EINVAL);
	CHECK_EQ(pd_writer_close(w, NULL), 0);

	/* tracepoints in a pipe need the tracing data first */
	a.type = PERF_TYPE_TRACEPOINT;
	CHECK_EQ(pd_writer_open(fd, true, 0, NULL, &w), 0);
	CHECK_EQ(pd_writer_add_attr(w, &a, NULL, ids, 1), 0);
	CHECK_EQ(pd_writer_start(w), -EINVAL);
	CHECK_EQ(pd_writer_close(w, NULL), 0);

	/* an empty recording (one attr, no names, no ids) still opens
	 * cleanly; a malformed record is refused and changes nothing */
	attrs(&a, &b);
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	CHECK_EQ(pd_writer_open(fd, false, 0, NULL, &w), 0);
	CHECK_EQ(pd_writer_write(w, bad, 8), -EINVAL); /* not started */
	CHECK_EQ(pd_writer_add_attr(w, &a, NULL, NULL, 0), 0);
	CHECK_EQ(pd_writer_start(w), 0);
	bytes = pd_writer_data_bytes(w); /* the first checkpoint */
	/* an event added while recording must have ids (two events) */
	CHECK_EQ(pd_writer_add_attr(w, &b, NULL, NULL, 0), -EINVAL);
	CHECK_EQ(pd_writer_write(w, bad, 8), -EINVAL);
	CHECK_EQ(pd_writer_data_bytes(w), bytes);
	CHECK_EQ(pd_writer_finish_round(w), 0); /* nothing to end */
	CHECK_EQ(pd_writer_close(w, NULL), 0);
	close(fd);
	out = run(PERF " report --stats -i %s", path);
	no_complaints(out, "perf report --stats (empty)");
	CHECK_EQ(stat_of(out, "SAMPLE events:"), 0);
	free(out);
	out = run(PERF " report --header-only -i %s", path);
	no_complaints(out, "perf report --header-only (empty)");
	CHECK(strstr(out, "# hostname : "), "%s", out);
	free(out);
	printf("misuse: refused as expected; an empty recording opens cleanly\n");

	/* events added while recording (application events): written with
	 * the others after the features, perf finds them by name */
	fd = open_new("late.data", path);
	{
		static const uint64_t clock_ids[] = { ID_CLOCK0 };
		static const uint64_t late_ids[] = { ID_FAULTS };

		CHECK_EQ(pd_writer_open(fd, false, 0, NULL, &w), 0);
		CHECK_EQ(pd_writer_add_attr(w, &a, "early-clock", clock_ids, 1),
			 0);
		CHECK_EQ(pd_writer_start(w), 0);
		b.sample_id_all = 0; /* must match the first: refused */
		CHECK_EQ(pd_writer_add_attr(w, &b, "bad", late_ids, 1),
			 -EINVAL);
		b.sample_id_all = 1;
		CHECK_EQ(pd_writer_add_attr(w, &b, "late-faults", late_ids, 1),
			 0);
		CHECK_EQ(pd_writer_finish_round(w), 0);
		CHECK_EQ(pd_writer_close(w, NULL), 0);
	}
	close(fd);
	out = run(PERF " report --header-only -i %s", path);
	no_complaints(out, "perf report --header-only (late event)");
	CHECK(strstr(out, "name = early-clock") &&
		      strstr(out, "name = late-faults"),
	      "late event missing: %s", out);
	free(out);
	out = run(PERF " report --stats -i %s", path);
	no_complaints(out, "perf report --stats (late event)");
	free(out);
	printf("an event added while recording: perf reads both attrs\n");
}

int main(int argc, char **argv)
{
	struct tp_src tp;

	CHECK(access(PERF, X_OK) == 0,
	      "%s is not installed (.ci/run installs linux-perf)", PERF);
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	g_argc = argc;
	g_argv = argv;
	CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	tmp_owner = getpid();
	atexit(tmp_cleanup);
	/* perf must not look at anything of the caller's */
	setenv("PERF_PAGER", "cat", 1);
	setenv("HOME", dir, 1);

	test_file();
	test_pipe_file();
	test_real_pipe();
	test_write_error("efbig-room.data", 64 << 10, false, true);
	test_write_error("efbig-tight.data", 200, false, true);
	test_write_error("efbig-pipe.data", 64 << 10, true, true);
	test_enospc();
	test_misuse();
	if (tp_source(&tp)) {
		test_tracepoint(&tp, false, true);
		test_tracepoint(&tp, true, true);
		test_tracepoint(&tp, false, false);
		test_checkpoints(&tp);
	}
	free(tp.file);
	return test_exit();
}
