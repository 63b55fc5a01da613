// SPDX-License-Identifier: MIT
/*
 * The TRACING_DATA blob, laid out as perf 6.1 writes it
 * (tools/perf/util/trace-event-info.c, tracing_data_get()) and reads it
 * (trace-event-read.c, trace_report()).  All numbers are in host byte order;
 * the endianness byte tells the reader which that is.
 *
 *   "\027\010\104tracing" "0.6\0" u8 big_endian, u8 sizeof(long), u32 page
 *   "header_page\0"  u64 len + events/header_page
 *   "header_event\0" u64 len + events/header_event
 *   u32 n, n x { u64 len + events/ftrace/<e>/format }   (ftrace:<e> asked)
 *   u32 nr_systems, per system: "<sys>\0" u32 n, n x { u64 len + format }
 *   u32 0                                      (kallsyms: perf 6.1 writes
 *                                               none, its reader skips it)
 *   u32 len + printk_formats                   (0 if the file is absent)
 *   u64 len + saved_cmdlines                   (version 0.6; 0 if absent)
 *
 * tracefs files report size 0 to stat(), so each is read to EOF into the
 * growing output, within a per-file bound.  Nothing is written to tracefs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../common/log.h"
#include "tracing_data.h"

#define TD_VERSION "0.6"
#define TD_NAME_MAX 255 /* a tracefs directory name */
#define TD_MAX_EVENTS 16384 /* grouping is quadratic in this */
#define TD_FORMAT_MAX (1u << 20) /* header_page/header_event/format */
#define TD_TABLE_MAX (64u << 20) /* printk_formats, saved_cmdlines */
#define TD_READ_MIN 4096

struct td_buf {
	unsigned char *p;
	size_t len;
	size_t cap;
};

/* One requested tracepoint: pointers into the caller's "sys:name". */
struct td_event {
	const char *spec; /* as given: sys is its first sys_len bytes */
	const char *name; /* after the colon, NUL-terminated */
	size_t sys_len;
	bool done; /* already emitted (grouping, duplicates) */
};

static int buf_reserve(struct td_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 16384;
	unsigned char *p;

	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int buf_put(struct td_buf *b, const void *data, size_t n)
{
	int err = buf_reserve(b, n);

	if (err)
		return err;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

static int buf_u32(struct td_buf *b, uint32_t v)
{
	return buf_put(b, &v, sizeof(v));
}

static int buf_u64(struct td_buf *b, uint64_t v)
{
	return buf_put(b, &v, sizeof(v));
}

/* Patches a size field of @width (4 or 8) bytes at @at. */
static void buf_patch(struct td_buf *b, size_t at, size_t width, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (width == 4)
		memcpy(b->p + at, &v32, 4);
	else
		memcpy(b->p + at, &v, 8);
}

/*
 * Appends a size field of @width bytes and the contents of @path, read to
 * EOF (tracefs and procfs files have no size until read), at most @max
 * bytes.  -ENOENT/-ENOTDIR from open() are returned without a message when
 * @quiet (the caller explains); other failures are logged.
 * On error the buffer is left as it was.
 */
static int append_file(struct td_buf *b, const char *path, size_t width,
		       size_t max, bool quiet)
{
	size_t start = b->len, got = 0, want = TD_READ_MIN;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		if (!quiet || (err != -ENOENT && err != -ENOTDIR))
			pr_err("tracing data: cannot open %s: %s", path,
			       strerror(-err));
		return err;
	}
	err = width == 4 ? buf_u32(b, 0) : buf_u64(b, 0);
	if (err)
		goto fail;
	for (;;) {
		size_t room;
		ssize_t r;

		err = buf_reserve(b, want);
		if (err)
			goto fail;
		room = b->cap - b->len;
		/* One byte past @max tells "too big" from "exactly @max". */
		if (room > max - got + 1)
			room = max - got + 1;
		r = read(fd, b->p + b->len, room);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			pr_err("tracing data: cannot read %s: %s", path,
			       strerror(-err));
			goto fail;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		b->len += (size_t)r;
		if (got > max) {
			err = -EFBIG;
			pr_err("tracing data: %s is larger than %zu bytes",
			       path, max);
			goto fail;
		}
		if ((size_t)r == room && want < (1u << 20))
			want *= 2;
	}
	close(fd);
	buf_patch(b, start, width, got);
	return 0;
fail:
	close(fd);
	b->len = start;
	return err;
}

static int path_of(char *out, size_t size, const char *tracefs, const char *rel)
{
	int n = snprintf(out, size, "%s/%s", tracefs, rel);

	if (n < 0 || (size_t)n >= size) {
		pr_err("tracing data: path %s/%s is too long", tracefs, rel);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* A header file, format text or table that the blob needs. */
static int append_required(struct td_buf *b, const char *tracefs,
			   const char *rel, size_t width, size_t max)
{
	char path[PATH_MAX];
	size_t start = b->len;
	int err;

	err = path_of(path, sizeof(path), tracefs, rel);
	if (err)
		return err;
	err = append_file(b, path, width, max, false);
	if (err)
		return err;
	if (b->len == start + width) {
		pr_err("tracing data: %s is empty", path);
		b->len = start;
		return -ENODATA;
	}
	return 0;
}

/* printk_formats, saved_cmdlines: an absent file is recorded as size 0,
 * as perf does (tracefs without them is still usable). */
static int append_optional(struct td_buf *b, const char *tracefs,
			   const char *rel, size_t width)
{
	char path[PATH_MAX];
	int err;

	err = path_of(path, sizeof(path), tracefs, rel);
	if (err)
		return err;
	err = append_file(b, path, width, TD_TABLE_MAX, true);
	if (err == -ENOENT) {
		pr_warn("tracing data: %s does not exist, recorded as empty",
			path);
		err = width == 4 ? buf_u32(b, 0) : buf_u64(b, 0);
	}
	return err;
}

/* A tracefs directory name: printable, no '/', not "." or "..". */
static bool name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > TD_NAME_MAX)
		return false;
	if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c >= 0x7f || c == '/' || c == ':' || c == '\\')
			return false;
	}
	return true;
}

static bool same_sys(const struct td_event *a, const struct td_event *b)
{
	return a->sys_len == b->sys_len &&
	       !memcmp(a->spec, b->spec, a->sys_len);
}

static bool is_sys(const struct td_event *ev, const char *sys)
{
	return ev->sys_len == strlen(sys) &&
	       !memcmp(ev->spec, sys, ev->sys_len);
}

/* Checks "system:name" and points @ev into it; -EINVAL (logged). */
static int parse_event(const char *spec, struct td_event *ev)
{
	const char *colon;
	size_t nn;

	if (!spec) {
		pr_err("tracing data: NULL tracepoint name");
		return -EINVAL;
	}
	colon = memchr(spec, ':', strnlen(spec, TD_NAME_MAX + 1));
	if (!colon)
		goto bad;
	nn = strnlen(colon + 1, TD_NAME_MAX + 1);
	if (!name_ok(spec, (size_t)(colon - spec)) || !name_ok(colon + 1, nn))
		goto bad;
	ev->spec = spec;
	ev->name = colon + 1;
	ev->sys_len = (size_t)(colon - spec);
	ev->done = false;
	return 0;
bad:
	pr_err("tracing data: invalid tracepoint name \"%.*s\" (want system:name)",
	       (int)strnlen(spec, 2 * TD_NAME_MAX + 2), spec);
	return -EINVAL;
}

/* Appends u64 size + events/<sys>/<name>/format; -ENOENT names the
 * unknown tracepoint. */
static int append_format(struct td_buf *b, const char *tracefs,
			 const struct td_event *ev)
{
	char rel[2 * TD_NAME_MAX + 32];
	char path[PATH_MAX];
	size_t start = b->len;
	int err;

	snprintf(rel, sizeof(rel), "events/%.*s/%s/format", (int)ev->sys_len,
		 ev->spec, ev->name);
	err = path_of(path, sizeof(path), tracefs, rel);
	if (err)
		return err;
	err = append_file(b, path, 8, TD_FORMAT_MAX, true);
	if (err == -ENOENT || err == -ENOTDIR) {
		/* ENOTDIR: the "system" is a file such as header_page */
		pr_err("tracing data: unknown tracepoint %s (no %s)", ev->spec,
		       path);
		return -ENOENT;
	}
	if (err)
		return err;
	if (b->len == start + 8) {
		pr_err("tracing data: %s is empty", path);
		b->len = start;
		return -ENODATA;
	}
	return 0;
}

/*
 * Appends u32 count + the formats of every not yet emitted event of the
 * system of evs[@from] from there on (of system "ftrace" if @from == nr),
 * marking them done.  Duplicates of an event are emitted once.
 */
static int append_system(struct td_buf *b, const char *tracefs,
			 struct td_event *evs, size_t nr, size_t from)
{
	size_t count_at = b->len, i, j;
	uint32_t count = 0;
	int err;

	err = buf_u32(b, 0);
	if (err)
		return err;
	for (i = from < nr ? from : 0; i < nr; i++) {
		if (evs[i].done || (from < nr ? !same_sys(&evs[i], &evs[from]) :
						!is_sys(&evs[i], "ftrace")))
			continue;
		err = append_format(b, tracefs, &evs[i]);
		if (err)
			return err;
		count++;
		for (j = i; j < nr; j++)
			if (same_sys(&evs[j], &evs[i]) &&
			    !strcmp(evs[j].name, evs[i].name))
				evs[j].done = true;
	}
	buf_patch(b, count_at, 4, count);
	return 0;
}

static int append_preamble(struct td_buf *b)
{
	static const char magic[] = "\027\010\104tracing"; /* 10 bytes */
	const uint16_t probe = 1;
	unsigned char misc[2];
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (page <= 0 || page > (long)UINT32_MAX) {
		pr_err("tracing data: cannot get the page size");
		return -EINVAL;
	}
	err = buf_put(b, magic, sizeof(magic) - 1);
	if (!err)
		err = buf_put(b, TD_VERSION, sizeof(TD_VERSION));
	misc[0] = *(const unsigned char *)&probe == 1 ? 0 : 1; /* big endian */
	misc[1] = sizeof(long);
	if (!err)
		err = buf_put(b, misc, sizeof(misc));
	if (!err)
		err = buf_u32(b, (uint32_t)page);
	return err;
}

/* Formats that do not come from tracefs (application events), grouped
 * by system in order of first appearance. */
static int append_extra(struct td_buf *b, const struct td_extra *extra,
			size_t nr_extra, uint32_t *systems)
{
	for (size_t i = 0; i < nr_extra; i++) {
		size_t count_at;
		uint32_t count = 0;
		bool seen = false;
		int err;

		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(extra[k].system, extra[i].system);
		if (seen)
			continue;
		err = buf_put(b, extra[i].system, strlen(extra[i].system) + 1);
		count_at = b->len;
		if (!err)
			err = buf_u32(b, 0);
		for (size_t k = i; !err && k < nr_extra; k++) {
			if (strcmp(extra[k].system, extra[i].system))
				continue;
			err = buf_u64(b, extra[k].len);
			if (!err)
				err = buf_put(b, extra[k].format, extra[k].len);
			count++;
		}
		if (err)
			return err;
		buf_patch(b, count_at, 4, count);
		(*systems)++;
	}
	return 0;
}

/* u64 size + @text */
static int append_text(struct td_buf *b, const char *text)
{
	size_t n = strlen(text);
	int err = buf_u64(b, n);

	return err ? err : buf_put(b, text, n);
}

PR_HIDDEN const char td_header_page_fmt[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n";
PR_HIDDEN const char td_header_event[] = "# compressed entry header\n"
					 "\ttype_len    :    5 bits\n"
					 "\ttime_delta  :   27 bits\n"
					 "\tarray       :   32 bits\n"
					 "\n"
					 "\tpadding     : type == 29\n"
					 "\ttime_extend : type == 30\n"
					 "\ttime_stamp : type == 31\n"
					 "\tdata max type_len  == 28\n";

/*
 * The headers for a blob built without tracefs (application events only,
 * recorded by a user who cannot read tracefs): libtraceevent reads the
 * field sizes from them, which is all the application formats need; the
 * data size is a page less its 16-byte header, as the kernel's.
 */
static int append_builtin_headers(struct td_buf *b)
{
	char page[512];
	long ps = sysconf(_SC_PAGESIZE);
	int err;

	snprintf(page, sizeof(page), td_header_page_fmt,
		 (unsigned int)((ps > 16 ? ps : 4096) - 16));
	err = buf_put(b, "header_page", sizeof("header_page"));
	if (!err)
		err = append_text(b, page);
	if (!err)
		err = buf_put(b, "header_event", sizeof("header_event"));
	if (!err)
		err = append_text(b, td_header_event);
	return err;
}

static int build(struct td_buf *b, const char *tracefs, struct td_event *evs,
		 size_t nr, const struct td_extra *extra, size_t nr_extra)
{
	size_t count_at, i;
	uint32_t systems = 0;
	int err;

	err = append_preamble(b);
	if (err)
		return err;

	if (!tracefs) {
		err = append_builtin_headers(b);
	} else {
		err = buf_put(b, "header_page", sizeof("header_page"));
		if (!err)
			err = append_required(b, tracefs, "events/header_page",
					      8, TD_FORMAT_MAX);
		if (!err)
			err = buf_put(b, "header_event",
				      sizeof("header_event"));
		if (!err)
			err = append_required(b, tracefs, "events/header_event",
					      8, TD_FORMAT_MAX);
	}
	if (err)
		return err;

	/* ftrace:<e> events go to the ftrace section, as perf puts them. */
	err = append_system(b, tracefs, evs, nr, nr);
	if (err)
		return err;

	/* Systems in order of first mention, each with all its events. */
	count_at = b->len;
	err = buf_u32(b, 0);
	if (err)
		return err;
	for (i = 0; i < nr; i++) {
		if (evs[i].done)
			continue;
		err = buf_put(b, evs[i].spec, evs[i].sys_len);
		if (!err)
			err = buf_put(b, "", 1);
		if (!err)
			err = append_system(b, tracefs, evs, nr, i);
		if (err)
			return err;
		systems++;
	}
	err = append_extra(b, extra, nr_extra, &systems);
	if (err)
		return err;
	buf_patch(b, count_at, 4, systems);

	/* kallsyms: perf 6.1 records none (u32 0) and its reader skips it. */
	err = buf_u32(b, 0);
	if (!tracefs) { /* printk_formats and saved_cmdlines: empty */
		if (!err)
			err = buf_u32(b, 0);
		return err ? err : buf_u64(b, 0);
	}
	if (!err)
		err = append_optional(b, tracefs, "printk_formats", 4);
	if (!err)
		err = append_optional(b, tracefs, "saved_cmdlines", 8);
	return err;
}

int tracing_data_build_ext(const char *tracefs, const char *const *events,
			   size_t nr, const struct td_extra *extra,
			   size_t nr_extra, void **out, size_t *len)
{
	struct td_buf b = { 0 };
	struct td_event *evs;
	size_t i;
	int err;

	if ((tracefs && !*tracefs) || (!tracefs && nr) || (nr && !events) ||
	    !out || !len) {
		pr_err("tracing data: invalid arguments");
		return -EINVAL;
	}
	if (nr > TD_MAX_EVENTS) {
		pr_err("tracing data: %zu tracepoints (at most %d)", nr,
		       TD_MAX_EVENTS);
		return -E2BIG;
	}
	evs = calloc(nr ? nr : 1, sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		err = parse_event(events[i], &evs[i]);
		if (err)
			goto out;
	}
	for (i = 0; i < nr_extra; i++) {
		if (!extra[i].system ||
		    !name_ok(extra[i].system, strlen(extra[i].system)) ||
		    !extra[i].format) {
			pr_err("tracing data: bad extra format %zu", i);
			err = -EINVAL;
			goto out;
		}
	}
	err = build(&b, tracefs, evs, nr, extra, nr_extra);
out:
	free(evs);
	if (err) {
		free(b.p);
		return err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

int tracing_data_build(const char *tracefs, const char *const *events,
		       size_t nr, void **out, size_t *len)
{
	return tracing_data_build_ext(tracefs, events, nr, NULL, 0, out, len);
}
