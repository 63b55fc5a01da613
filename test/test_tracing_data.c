// SPDX-License-Identifier: MIT
/*
 * The TRACING_DATA blob (src/format/tracing_data.c), checked three ways:
 *
 * 1. Built for sched:sched_switch + sched:sched_wakeup and parsed back by a
 *    bounded parser here: magic, version, header_page/header_event equal to
 *    the tracefs files, no ftrace formats, one "sched" system with both
 *    formats, empty kallsyms, printk formats, saved cmdlines, nothing left.
 * 2. Against perf itself: `perf record -e sched:sched_switch` writes a real
 *    file; its TRACING_DATA feature (bit 1, the first entry of the feature
 *    table after the data) must match ours section by section, and be
 *    byte-identical up to saved_cmdlines (which changes over time).  Then
 *    copies of perf's file with that payload replaced by our blobs (the
 *    feature sections after it moved and the table rewritten) must make
 *    `perf script` print exactly what it prints for the original, decoded
 *    sched_switch fields included; likewise for a pipe-mode stream
 *    (`perf record -o -`) with its PERF_RECORD_HEADER_TRACING_DATA
 *    payload replaced.  As a control, a blob lacking the sched_switch
 *    format must stop perf from decoding the fields.
 * 3. Errors: unknown event -ENOENT (logged with its name), malformed names
 *    -EINVAL, a tracefs path without tracefs -ENOENT.
 *
 * Mounts tracefs on /sys/kernel/tracing if it is not there; skips if that
 * fails or perf is not installed (after 1 and 3 passed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "format/tracing_data.h"
#include "harness.h"

#define TRACEFS "/sys/kernel/tracing"
#define MAX_FILE (256u << 20)
#define MAX_SYS 8
#define MAX_EV 16

/* ---- log capture ------------------------------------------------------ */

static char last_log[1024];

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* ---- temporary directory ---------------------------------------------- */

static char dir[] = "/tmp/perfring-test-td-XXXXXX";
static pid_t tmp_owner;

static void tmp_cleanup(void)
{
	DIR *d;
	struct dirent *e;
	char p[1024];

	if (getpid() != tmp_owner)
		return;
	d = opendir(dir);
	if (d) {
		while ((e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

static const char *tmp_path(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *p = bufs[next++ % 8];

	snprintf(p, sizeof(bufs[0]), "%s/%s", dir, name);
	return p;
}

/* ---- files and commands ----------------------------------------------- */

/* Whole file, at most @max bytes (fails the test beyond); NUL-terminated. */
static unsigned char *read_whole(const char *path, size_t max, size_t *len)
{
	size_t cap = 65536, n = 0;
	unsigned char *p = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	CHECK(p != NULL, "malloc");
	for (;;) {
		ssize_t r;

		if (n == cap) {
			CHECK(cap < max, "%s is larger than %zu bytes", path,
			      max);
			cap *= 2;
			p = realloc(p, cap + 1);
			CHECK(p != NULL, "realloc");
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		CHECK(r >= 0, "read %s: %s", path, strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	p[n] = '\0';
	*len = n;
	return p;
}

static void write_whole(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const unsigned char *p = buf;

	CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
	while (len) {
		ssize_t w = write(fd, p, len);

		CHECK(w > 0, "write %s: %s", path, strerror(errno));
		p += w;
		len -= (size_t)w;
	}
	CHECK(close(fd) == 0, "close %s: %s", path, strerror(errno));
}

/* Runs @argv with stdout to @out and stderr to @err; returns the exit
 * status, 127 if it could not be run, -1 if killed. */
static int run(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fi = open("/dev/null", O_RDONLY);

		if (fo < 0 || fe < 0 || fi < 0)
			_exit(126);
		dup2(fi, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void dump_file(const char *path)
{
	size_t len;
	unsigned char *p = read_whole(path, MAX_FILE, &len);

	fprintf(stderr, "---- %s (%zu bytes):\n%.4000s\n", path, len, p);
	free(p);
}

/* ---- a bounded parser of the blob ------------------------------------- */

struct span {
	const unsigned char *p;
	uint64_t len;
};

struct parsed {
	char version[16];
	unsigned endian, long_size;
	uint32_t page_size;
	struct span header_page, header_event;
	uint32_t nr_ftrace;
	struct span ftrace[MAX_EV];
	uint32_t nr_sys;
	struct {
		char name[64];
		uint32_t nr;
		struct span ev[MAX_EV];
	} sys[MAX_SYS];
	uint32_t kallsyms_len;
	struct span printk, cmdlines;
	size_t cmdlines_at; /* offset of the saved_cmdlines size field */
};

struct cursor {
	const unsigned char *p;
	size_t len, at;
	const char *what;
};

static const unsigned char *take(struct cursor *c, uint64_t n, const char *f)
{
	const unsigned char *p = c->p + c->at;

	CHECK(n <= c->len - c->at, "%s: %s: %llu bytes at %zu past the end %zu",
	      c->what, f, (unsigned long long)n, c->at, c->len);
	c->at += (size_t)n;
	return p;
}

static uint32_t take_u32(struct cursor *c, const char *f)
{
	uint32_t v;

	memcpy(&v, take(c, 4, f), 4);
	return v;
}

static uint64_t take_u64(struct cursor *c, const char *f)
{
	uint64_t v;

	memcpy(&v, take(c, 8, f), 8);
	return v;
}

static void take_str(struct cursor *c, char *out, size_t size, const char *f)
{
	const unsigned char *s = c->p + c->at;
	const unsigned char *nul = memchr(s, 0, c->len - c->at);

	CHECK(nul != NULL, "%s: %s: no NUL", c->what, f);
	CHECK((size_t)(nul - s) < size, "%s: %s: string too long", c->what, f);
	memcpy(out, s, (size_t)(nul - s) + 1);
	c->at += (size_t)(nul - s) + 1;
}

static struct span take_sized(struct cursor *c, size_t width, const char *f)
{
	struct span s;

	s.len = width == 4 ? take_u32(c, f) : take_u64(c, f);
	s.p = take(c, s.len, f);
	return s;
}

static void parse(const void *blob, size_t len, const char *what,
		  struct parsed *out)
{
	static const char magic[] = "\027\010\104tracing";
	struct cursor c = { blob, len, 0, what };
	char tag[16];
	uint32_t i, j;

	memset(out, 0, sizeof(*out));
	CHECK(!memcmp(take(&c, 10, "magic"), magic, 10), "%s: bad magic", what);
	take_str(&c, out->version, sizeof(out->version), "version");
	out->endian = *take(&c, 1, "endian");
	out->long_size = *take(&c, 1, "long size");
	out->page_size = take_u32(&c, "page size");
	take_str(&c, tag, sizeof(tag), "header_page tag");
	CHECK(!strcmp(tag, "header_page"), "%s: tag %s", what, tag);
	out->header_page = take_sized(&c, 8, "header_page");
	take_str(&c, tag, sizeof(tag), "header_event tag");
	CHECK(!strcmp(tag, "header_event"), "%s: tag %s", what, tag);
	out->header_event = take_sized(&c, 8, "header_event");
	out->nr_ftrace = take_u32(&c, "ftrace count");
	CHECK(out->nr_ftrace <= MAX_EV, "%s: %u ftrace formats", what,
	      out->nr_ftrace);
	for (i = 0; i < out->nr_ftrace; i++)
		out->ftrace[i] = take_sized(&c, 8, "ftrace format");
	out->nr_sys = take_u32(&c, "system count");
	CHECK(out->nr_sys <= MAX_SYS, "%s: %u systems", what, out->nr_sys);
	for (i = 0; i < out->nr_sys; i++) {
		take_str(&c, out->sys[i].name, sizeof(out->sys[i].name),
			 "system");
		out->sys[i].nr = take_u32(&c, "event count");
		CHECK(out->sys[i].nr <= MAX_EV, "%s: %u events", what,
		      out->sys[i].nr);
		for (j = 0; j < out->sys[i].nr; j++)
			out->sys[i].ev[j] = take_sized(&c, 8, "format");
	}
	out->kallsyms_len = take_sized(&c, 4, "kallsyms").len;
	out->printk = take_sized(&c, 4, "printk_formats");
	out->cmdlines_at = c.at;
	out->cmdlines = take_sized(&c, 8, "saved_cmdlines");
	CHECK(c.at == len, "%s: %zu bytes after saved_cmdlines", what,
	      len - c.at);
}

static bool span_eq(struct span a, struct span b)
{
	return a.len == b.len && !memcmp(a.p, b.p, a.len);
}

static bool span_starts(struct span a, const char *prefix)
{
	size_t n = strlen(prefix);

	return a.len >= n && !memcmp(a.p, prefix, n);
}

static bool span_is_file(struct span a, const char *path)
{
	size_t len;
	unsigned char *p = read_whole(path, MAX_FILE, &len);
	bool eq = a.len == len && !memcmp(a.p, p, len);

	free(p);
	return eq;
}

static void *build(const char *const *ev, size_t nr, size_t *len)
{
	void *blob = NULL;
	int err = tracing_data_build(TRACEFS, ev, nr, &blob, len);

	CHECK(err == 0, "tracing_data_build: %d (%s)", err, last_log);
	CHECK(blob != NULL && *len > 0, "empty blob");
	return blob;
}

/* ---- 1. structure ----------------------------------------------------- */

static void test_structure(void)
{
	static const char *const ev[] = { "sched:sched_switch",
					  "sched:sched_wakeup",
					  "sched:sched_switch" };
	const uint16_t probe = 1;
	struct parsed t;
	size_t len;
	void *blob = build(ev, 3, &len);

	parse(blob, len, "ours", &t);
	CHECK(!strcmp(t.version, "0.6"), "version %s", t.version);
	CHECK_EQ(t.endian, *(const unsigned char *)&probe == 1 ? 0 : 1);
	CHECK_EQ(t.long_size, sizeof(long));
	CHECK_EQ(t.page_size, sysconf(_SC_PAGESIZE));
	CHECK(span_starts(t.header_page, "\tfield: u64 timestamp;"),
	      "header_page: %.40s", (const char *)t.header_page.p);
	CHECK(span_is_file(t.header_page, TRACEFS "/events/header_page"),
	      "header_page differs from tracefs");
	CHECK(span_is_file(t.header_event, TRACEFS "/events/header_event"),
	      "header_event differs from tracefs");
	CHECK_EQ(t.nr_ftrace, 0);
	CHECK_EQ(t.nr_sys, 1);
	CHECK(!strcmp(t.sys[0].name, "sched"), "system %s", t.sys[0].name);
	CHECK_EQ(t.sys[0].nr, 2); /* the duplicate is emitted once */
	CHECK(span_starts(t.sys[0].ev[0], "name: sched_switch\nID: "),
	      "format 0: %.40s", (const char *)t.sys[0].ev[0].p);
	CHECK(span_starts(t.sys[0].ev[1], "name: sched_wakeup\nID: "),
	      "format 1: %.40s", (const char *)t.sys[0].ev[1].p);
	CHECK(span_is_file(t.sys[0].ev[0],
			   TRACEFS "/events/sched/sched_switch/format"),
	      "sched_switch format differs from tracefs");
	CHECK(span_is_file(t.sys[0].ev[1],
			   TRACEFS "/events/sched/sched_wakeup/format"),
	      "sched_wakeup format differs from tracefs");
	CHECK_EQ(t.kallsyms_len, 0);
	CHECK(span_is_file(t.printk, TRACEFS "/printk_formats"),
	      "printk_formats differs from tracefs");
	free(blob);

	/* Several systems and the ftrace section. */
	{
		static const char *const ev2[] = { "sched:sched_switch",
						   "ftrace:print",
						   "irq:irq_handler_entry",
						   "sched:sched_wakeup" };

		blob = build(ev2, 4, &len);
		parse(blob, len, "ours (3 systems)", &t);
		CHECK_EQ(t.nr_ftrace, 1);
		CHECK(span_starts(t.ftrace[0], "name: print\nID: "),
		      "ftrace format: %.40s", (const char *)t.ftrace[0].p);
		CHECK_EQ(t.nr_sys, 2);
		CHECK(!strcmp(t.sys[0].name, "sched") &&
			      !strcmp(t.sys[1].name, "irq"),
		      "systems %s %s", t.sys[0].name, t.sys[1].name);
		CHECK_EQ(t.sys[0].nr, 2);
		CHECK_EQ(t.sys[1].nr, 1);
		CHECK(span_starts(t.sys[0].ev[1], "name: sched_wakeup\n"),
		      "grouped format: %.40s", (const char *)t.sys[0].ev[1].p);
		CHECK(span_starts(t.sys[1].ev[0], "name: irq_handler_entry\n"),
		      "irq format: %.40s", (const char *)t.sys[1].ev[0].p);
		free(blob);
	}
}

/* ---- 3. errors -------------------------------------------------------- */

static void expect_err(const char *name, int want)
{
	const char *ev[] = { "sched:sched_switch", name };
	void *blob = (void *)&blob;
	size_t len = 12345;
	int err;

	last_log[0] = '\0';
	err = tracing_data_build(TRACEFS, ev, 2, &blob, &len);
	CHECK(err == want, "%s: got %d, want %d", name, err, want);
	CHECK(blob == (void *)&blob && len == 12345, "%s: outputs touched",
	      name);
	CHECK(last_log[0], "%s: nothing logged", name);
}

static void test_errors(void)
{
	static const char *const bad[] = {
		"sched", "../x:y", "a:b/c", ":x",    "x:",
		"..:x",	 "x:..",   ".:x",   "a:b:c", "sched:sched switch",
		"a\n:b", "",
	};
	char big[600];
	const char *ev[] = { "sched:sched_switch" };
	void *blob;
	size_t len, i;
	int err;

	expect_err("sched:nope", -ENOENT);
	CHECK(strstr(last_log, "sched:nope") != NULL, "log: %s", last_log);
	expect_err("nosuchsystem:x", -ENOENT);
	CHECK(strstr(last_log, "nosuchsystem:x") != NULL, "log: %s", last_log);
	expect_err("header_page:x", -ENOENT); /* a file, not a system */
	expect_err("ftrace:nope", -ENOENT);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_err(bad[i], -EINVAL);
		CHECK(strstr(last_log, "invalid") != NULL, "log: %s", last_log);
	}
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	big[10] = ':';
	expect_err(big, -EINVAL);

	err = tracing_data_build(TRACEFS, NULL, 1, &blob, &len);
	CHECK_EQ(err, -EINVAL);

	/* A directory without tracefs: names the missing file. */
	err = tracing_data_build(dir, ev, 1, &blob, &len);
	CHECK_EQ(err, -ENOENT);
	CHECK(strstr(last_log, "events/header_page") != NULL, "log: %s",
	      last_log);
}

/* ---- 2. against perf -------------------------------------------------- */

struct perf_file {
	unsigned char *p;
	size_t len;
	uint64_t data_off, data_size;
	uint64_t table; /* offset of the feature table */
	unsigned nr_feat; /* entries in it */
};

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void perf_file_load(const char *path, struct perf_file *f)
{
	const unsigned char *bits;
	unsigned i;

	f->p = read_whole(path, MAX_FILE, &f->len);
	CHECK(f->len >= 104 && !memcmp(f->p, "PERFILE2", 8),
	      "%s: not a PERFILE2 file", path);
	CHECK_EQ(get_u64(f->p + 8), 104); /* header size */
	f->data_off = get_u64(f->p + 40);
	f->data_size = get_u64(f->p + 48);
	bits = f->p + 72; /* adds_features[], 256 bits */
	CHECK(!(bits[0] & 1), "HEADER_RESERVED bit set");
	CHECK(bits[0] & 2, "perf wrote no TRACING_DATA feature");
	f->nr_feat = 0;
	for (i = 0; i < 256; i++)
		f->nr_feat += (bits[i / 8] >> (i % 8)) & 1;
	f->table = f->data_off + f->data_size;
	CHECK(f->table <= f->len && f->nr_feat * 16 <= f->len - f->table,
	      "feature table out of the file");
	for (i = 0; i < f->nr_feat; i++) {
		uint64_t off = get_u64(f->p + f->table + 16 * i);
		uint64_t size = get_u64(f->p + f->table + 16 * i + 8);

		CHECK(off <= f->len && size <= f->len - off,
		      "feature %u out of the file", i);
	}
}

/* TRACING_DATA is the first entry: bit 1 is the lowest bit perf sets. */
static struct span perf_tracing_data(const struct perf_file *f)
{
	struct span s;

	s.p = f->p + get_u64(f->p + f->table);
	s.len = get_u64(f->p + f->table + 8);
	return s;
}

/*
 * Writes @f with the TRACING_DATA payload replaced by @blob: the bytes
 * after the old payload move by the size difference, and every feature
 * section behind the old payload has its table offset moved with them.
 */
static void perf_file_replace(const struct perf_file *f, const void *blob,
			      size_t len, const char *path)
{
	uint64_t off = get_u64(f->p + f->table);
	uint64_t old = get_u64(f->p + f->table + 8);
	size_t out_len = f->len - (size_t)old + len, tail;
	unsigned char *out = malloc(out_len);
	unsigned i;

	CHECK(out != NULL, "malloc");
	CHECK(off >= f->table + 16ull * f->nr_feat,
	      "TRACING_DATA payload before the end of the feature table");
	tail = f->len - (size_t)(off + old);
	memcpy(out, f->p, (size_t)off);
	memcpy(out + off, blob, len);
	memcpy(out + off + len, f->p + off + old, tail);
	put_u64(out + f->table + 8, len);
	for (i = 1; i < f->nr_feat; i++) {
		unsigned char *e = out + f->table + 16 * i;

		if (get_u64(e) >= off + old)
			put_u64(e, get_u64(e) - old + len);
	}
	write_whole(path, out, out_len);
	free(out);
}

/*
 * Pipe mode: PERF_RECORD_HEADER_TRACING_DATA (66) is {header, u32 size,
 * ...} of header.size bytes, then @size bytes: the blob padded to 8.
 * Writes @path with that payload replaced by @blob; returns false if the
 * stream holds no such record.
 */
static bool perf_pipe_replace(const char *in, const void *blob, size_t len,
			      const char *path)
{
	static const unsigned char zero[8];
	size_t in_len, pos = 16, n = 0, pad = (8 - len % 8) % 8;
	unsigned char *p = read_whole(in, MAX_FILE, &in_len);
	unsigned char *out = malloc(in_len + len + 8);
	bool found = false;

	CHECK(out != NULL, "malloc");
	CHECK(in_len >= 16 && !memcmp(p, "PERFILE2", 8) && get_u64(p + 8) == 16,
	      "%s: not a perf pipe stream", in);
	memcpy(out, p, 16);
	n = 16;
	while (pos < in_len) {
		uint32_t type, size32;
		uint16_t size;

		CHECK(in_len - pos >= 8, "truncated record at %zu", pos);
		memcpy(&type, p + pos, 4);
		memcpy(&size, p + pos + 6, 2);
		CHECK(size >= 8 && size <= in_len - pos, "bad record at %zu",
		      pos);
		if (type != 66) {
			memcpy(out + n, p + pos, size);
			n += size;
			pos += size;
			continue;
		}
		CHECK(size >= 12, "short tracing data record");
		memcpy(&size32, p + pos + 8, 4);
		CHECK(size32 <= in_len - pos - size,
		      "tracing data past the end");
		CHECK(!found, "two tracing data records");
		found = true;
		memcpy(out + n, p + pos, size);
		size32 = (uint32_t)(len + pad);
		memcpy(out + n + 8, &size32, 4);
		n += size;
		memcpy(out + n, blob, len);
		memcpy(out + n + len, zero, pad);
		n += len + pad;
		memcpy(&size32, p + pos + 8, 4);
		pos += size + size32;
	}
	write_whole(path, out, n);
	free(out);
	free(p);
	return found;
}

static char *perf_bin;

static unsigned char *perf_script(const char *in, const char *tag, size_t *len)
{
	char out[512], err[520];
	char *argv[] = { perf_bin, "script", "-i", (char *)in, NULL };
	int st;

	snprintf(out, sizeof(out), "%s", tmp_path(tag));
	snprintf(err, sizeof(err), "%s.err", out);
	st = run(argv, out, err);
	if (st != 0)
		dump_file(err);
	CHECK(st == 0, "perf script -i %s: exit %d", in, st);
	return read_whole(out, MAX_FILE, len);
}

static void test_perf(void)
{
	static const char *const ev1[] = { "sched:sched_switch" };
	static const char *const ev2[] = { "sched:sched_wakeup",
					   "sched:sched_switch",
					   "irq:irq_handler_entry" };
	static const char *const ev_ctl[] = { "sched:sched_wakeup" };
	char orig[512];
	char *rec[] = { perf_bin, "record", "-q", "-e",	   "sched:sched_switch",
			"-o",	  orig,	    "--", "sleep", "0.01",
			NULL };
	struct perf_file f;
	struct parsed theirs, ours;
	struct span td;
	unsigned char *ref, *got;
	size_t ref_len, got_len, len;
	void *blob;
	int st;

	snprintf(orig, sizeof(orig), "%s", tmp_path("orig.data"));
	st = run(rec, tmp_path("record.out"), tmp_path("record.err"));
	if (st != 0)
		dump_file(tmp_path("record.err"));
	CHECK(st == 0, "perf record: exit %d", st);

	perf_file_load(orig, &f);
	td = perf_tracing_data(&f);
	parse(td.p, td.len, "perf's", &theirs);

	blob = build(ev1, 1, &len);
	parse(blob, len, "ours", &ours);
	CHECK(!strcmp(theirs.version, ours.version), "version %s vs %s",
	      theirs.version, ours.version);
	CHECK_EQ(theirs.endian, ours.endian);
	CHECK_EQ(theirs.long_size, ours.long_size);
	CHECK_EQ(theirs.page_size, ours.page_size);
	CHECK(span_eq(theirs.header_page, ours.header_page),
	      "header_page differs");
	CHECK(span_eq(theirs.header_event, ours.header_event),
	      "header_event differs");
	CHECK_EQ(theirs.nr_ftrace, ours.nr_ftrace);
	CHECK_EQ(theirs.nr_sys, 1);
	CHECK_EQ(ours.nr_sys, 1);
	CHECK(!strcmp(theirs.sys[0].name, "sched"), "perf's system %s",
	      theirs.sys[0].name);
	CHECK(!strcmp(ours.sys[0].name, "sched"), "our system %s",
	      ours.sys[0].name);
	CHECK_EQ(theirs.sys[0].nr, 1);
	CHECK_EQ(ours.sys[0].nr, 1);
	CHECK(span_eq(theirs.sys[0].ev[0], ours.sys[0].ev[0]),
	      "sched_switch format differs");
	CHECK_EQ(theirs.kallsyms_len, ours.kallsyms_len);
	CHECK(span_eq(theirs.printk, ours.printk), "printk_formats differ");
	/* Everything before saved_cmdlines, byte for byte. */
	CHECK_EQ(theirs.cmdlines_at, ours.cmdlines_at);
	CHECK(!memcmp(td.p, blob, ours.cmdlines_at),
	      "blobs differ before saved_cmdlines");

	/* perf decodes the events with our blob as with its own. */
	ref = perf_script(orig, "orig.txt", &ref_len);
	CHECK(strstr((char *)ref, "sched:sched_switch: prev_comm=") &&
		      strstr((char *)ref, " ==> next_comm="),
	      "perf script printed no decoded sched_switch:\n%.2000s", ref);
	perf_file_replace(&f, blob, len, tmp_path("ours1.data"));
	free(blob);
	got = perf_script(tmp_path("ours1.data"), "ours1.txt", &got_len);
	CHECK(got_len == ref_len && !memcmp(got, ref, ref_len),
	      "perf script differs with our blob:\n%.2000s\n--- vs ---\n%.2000s",
	      got, ref);
	free(got);

	/* More systems than recorded, a different order: the same. */
	blob = build(ev2, 3, &len);
	perf_file_replace(&f, blob, len, tmp_path("ours3.data"));
	free(blob);
	got = perf_script(tmp_path("ours3.data"), "ours3.txt", &got_len);
	CHECK(got_len == ref_len && !memcmp(got, ref, ref_len),
	      "perf script differs with a 3-event blob:\n%.2000s", got);
	free(got);

	/* Pipe mode (PERF_RECORD_HEADER_TRACING_DATA): the same. */
	{
		char pipe[512];
		char *argv[] = {
			perf_bin, "record", "-q", "-e",	   "sched:sched_switch",
			"-o",	  "-",	    "--", "sleep", "0.01",
			NULL
		};

		snprintf(pipe, sizeof(pipe), "%s", tmp_path("orig.pipe"));
		st = run(argv, pipe, tmp_path("pipe.err"));
		if (st != 0)
			dump_file(tmp_path("pipe.err"));
		CHECK(st == 0, "perf record -o -: exit %d", st);
		free(ref);
		ref = perf_script(pipe, "pipe.txt", &ref_len);
		CHECK(strstr((char *)ref, "prev_comm="),
		      "perf script printed no decoded sched_switch (pipe)");
		blob = build(ev2, 3, &len);
		CHECK(perf_pipe_replace(pipe, blob, len, tmp_path("ours.pipe")),
		      "no PERF_RECORD_HEADER_TRACING_DATA in the pipe stream");
		free(blob);
		got = perf_script(tmp_path("ours.pipe"), "ours.pipe.txt",
				  &got_len);
		CHECK(got_len == ref_len && !memcmp(got, ref, ref_len),
		      "perf script differs with our blob (pipe):\n%.2000s",
		      got);
		free(got);
	}

	/* Control: perf really reads the replaced payload. */
	blob = build(ev_ctl, 1, &len);
	perf_file_replace(&f, blob, len, tmp_path("ctl.data"));
	free(blob);
	{
		char *argv[] = { perf_bin, "script", "-i",
				 (char *)tmp_path("ctl.data"), NULL };

		run(argv, tmp_path("ctl.txt"), tmp_path("ctl.err"));
		got = read_whole(tmp_path("ctl.txt"), MAX_FILE, &got_len);
		CHECK(!strstr((char *)got, "prev_comm="),
		      "fields decoded without their format");
		free(got);
	}
	free(ref);
	free(f.p);
}

static bool find_perf(void)
{
	char *argv[] = { NULL, "--version", NULL };
	const char *env = getenv("PERF");

	perf_bin = (char *)(env && *env ? env : "perf");
	argv[0] = perf_bin;
	return run(argv, tmp_path("version.out"), tmp_path("version.err")) == 0;
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	tmp_owner = getpid();
	atexit(tmp_cleanup);
	perfring_set_log(log_cb, NULL, PERFRING_LOG_DEBUG);

	if (access(TRACEFS "/events/header_page", R_OK) != 0 &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL) != 0)
		SKIP("tracefs is not mounted on %s and mounting it failed: %s",
		     TRACEFS, strerror(errno));
	if (access(TRACEFS "/events/sched/sched_switch/format", R_OK) != 0)
		SKIP("%s/events/sched/sched_switch/format: %s", TRACEFS,
		     strerror(errno));

	test_structure();
	test_errors();
	CHECK(find_perf(),
	      "perf is not installed (.ci/run installs linux-perf; structure and error checks passed)");
	test_perf();
	return T_EXIT_PASS;
}
