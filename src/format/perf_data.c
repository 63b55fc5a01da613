// SPDX-License-Identifier: MIT
/*
 * perf.data writer: the PERFILE2 file format and perf's pipe format, as
 * perf 6.1 reads them (tools/perf/util/header.c, session.c).
 *
 * File mode layout (all offsets absolute, little endian on x86-64):
 *
 *   0     struct perf_file_header (104 bytes)
 *   104   the u64 id arrays of every attr, one after the other
 *         the attrs: {perf_event_attr (128 bytes, size = 128), ids section}
 *   data  the records, as they were handed to pd_writer_write()
 *   feat  data.offset + data.size: one {offset, size} per feature bit set,
 *         in ascending bit order, then the feature payloads
 *
 * pd_writer_start() writes the header (data.size 0, no features), the ids
 * and the attrs.  Records are buffered and written at the end of the file;
 * every complete round (pd_writer_finish_round) also patches data.size in
 * the header, so a recorder that dies leaves a file perf reads up to its
 * last complete round.  pd_writer_close() writes the features and the
 * final header.
 *
 * Pipe mode is written strictly sequentially: {magic, size = 16}, one
 * PERF_RECORD_HEADER_ATTR per attr, one PERF_RECORD_HEADER_FEATURE per
 * feature (the ones perf itself synthesizes in pipe mode), one
 * PERF_RECORD_EVENT_UPDATE with the name of each event that has ids, then
 * PERF_RECORD_HEADER_TRACING_DATA when the tracing data was set, then the
 * records.  perf reads such a stream from a pipe or from a regular file.
 *
 * Write errors (ENOSPC, EIO, EFBIG, short writes) are sticky: the first
 * one is remembered and returned from every later call; nothing more is
 * written to the data.  At close, a file is cut back to the end of its
 * last complete round and gets its features and a valid header there; if
 * even the features do not fit, it gets only the ones perf cannot do
 * without (TRACING_DATA when there are tracepoint events), then none.
 * A file with tracepoint events whose TRACING_DATA could not be written
 * has a valid header but perf refuses to open it ("broken or missing
 * trace data"): nothing in the format can stand in for the formats.
 *
 * The writer never closes @fd and never changes signal dispositions: a
 * pipe whose reader went away raises SIGPIPE unless the caller ignores it
 * (then the writes fail with EPIPE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "perf_data.h"
#include "../ring/internal.h"

#define PD_MAGIC 0x32454c4946524550ull /* "PERFILE2" */
#define PD_FILE_HEADER_SIZE 104
#define PD_PIPE_HEADER_SIZE 16
#define PD_ATTR_SIZE 128 /* PERF_ATTR_SIZE_VER7, what perf 6.1 reads */
#define PD_FILE_ATTR_SIZE (PD_ATTR_SIZE + 16)
#define PD_NAME_ALIGN 64
#define PD_BUF_SIZE (256u << 10)
#define PD_MAX_RECORD 0xffffu
#define PD_FEAT_MAX 64 /* feature ids we may write are below this */
#define PD_RECORD_EVENT_UPDATE 78
#define PD_EVENT_UPDATE_NAME 2

/* Offsets in struct perf_file_header. */
#define PD_HDR_DATA_SIZE 48
#define PD_HDR_FEATURES 72

struct pd_attr {
	unsigned char attr[PD_ATTR_SIZE];
	char *name;
	uint64_t *ids;
	uint32_t nr_ids;
};

/* A growing byte buffer for feature payloads; an allocation failure is
 * remembered and turns the whole buffer invalid. */
struct pd_buf {
	unsigned char *p;
	size_t len;
	size_t cap;
	bool oom;
};

struct pd_feat {
	int id;
	struct pd_buf b;
};

struct pd_writer {
	int fd;
	bool pipe;
	bool regular; /* fd is a regular file (cut back on errors) */
	bool started;
	int err; /* first write error (sticky), 0 if none */

	struct pd_attr *attrs;
	uint32_t nr_attrs;
	uint32_t nr_start_attrs; /* file mode: attrs written at the start */

	int argc;
	char **argv; /* one allocation: pointers, then the strings */

	void *tdata;
	size_t tdata_len;
	bool has_tdata;

	bool has_clockid;
	int clockid;

	uint64_t first_time;
	uint64_t last_time;

	/*
	 * Output position.  File mode: absolute file offsets.  Pipe mode:
	 * bytes since the stream start; base is where the stream started in
	 * a regular file.
	 */
	uint64_t base;
	uint64_t off; /* end of what was handed to write()/pwrite() */
	uint64_t data_offset; /* where the data section starts */
	uint64_t round_end; /* end of the last complete round */
	unsigned char *buf;
	size_t used;

	/* Record framing across pd_writer_write() calls. */
	unsigned char hdr[8];
	uint32_t hdr_have;
	uint64_t rec_left;

	/* HEADER_AUXTRACE index: {file offset, header.size} per AUXTRACE. */
	uint64_t (*aux_idx)[2];
	size_t nr_aux_idx, cap_aux_idx;
};

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static void put_u16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_header(unsigned char *p, uint32_t type, uint16_t size)
{
	put_u32(p, type);
	put_u16(p + 4, 0);
	put_u16(p + 6, size);
}

/* ---- payload buffers ---- */

static void *buf_grow(struct pd_buf *b, size_t len)
{
	unsigned char *p;
	size_t cap;

	if (b->oom)
		return NULL;
	if (len > b->cap - b->len) {
		cap = b->cap ? b->cap : 256;
		while (cap - b->len < len) {
			if (cap > SIZE_MAX / 2) {
				b->oom = true;
				return NULL;
			}
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	p = b->p + b->len;
	b->len += len;
	return p;
}

static void buf_add(struct pd_buf *b, const void *data, size_t len)
{
	void *p;

	if (!len)
		return;
	p = buf_grow(b, len);
	if (p)
		memcpy(p, data, len);
}

static void buf_zero(struct pd_buf *b, size_t len)
{
	void *p;

	if (!len)
		return;
	p = buf_grow(b, len);
	if (p)
		memset(p, 0, len);
}

static void buf_u32(struct pd_buf *b, uint32_t v)
{
	buf_add(b, &v, sizeof(v));
}

static void buf_u64(struct pd_buf *b, uint64_t v)
{
	buf_add(b, &v, sizeof(v));
}

/* perf's do_write_string(): u32 len = ALIGN(strlen + 1, 64), then the
 * string and NULs up to len. */
static void buf_str(struct pd_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t len = align_up(n, PD_NAME_ALIGN);

	buf_u32(b, (uint32_t)len);
	buf_add(b, s, n);
	buf_zero(b, len - n);
}

static void buf_free(struct pd_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- output ---- */

static int set_err(struct pd_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* Writes all of @len at the output position or fails; the position
 * advances by what the kernel took, also on failure. */
static int out_raw(struct pd_writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;
	ssize_t n;

	while (len) {
		if (w->pipe)
			n = write(w->fd, p, len);
		else
			n = pwrite(w->fd, p, len, (off_t)w->off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		w->off += (uint64_t)n;
	}
	return 0;
}

static int out(struct pd_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	ret = out_raw(w, data, len);
	if (ret < 0) {
		pr_err("perf.data: write failed at offset %llu: %s",
		       (unsigned long long)w->off, strerror(-ret));
		return set_err(w, ret);
	}
	return 0;
}

static int flush(struct pd_writer *w)
{
	int ret;

	if (w->err)
		return w->err;
	ret = w->used ? out(w, w->buf, w->used) : 0;
	w->used = 0;
	return ret;
}

static int append(struct pd_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	if (!len)
		return 0;
	if (len > PD_BUF_SIZE - w->used) {
		ret = flush(w);
		if (ret)
			return ret;
	}
	if (len >= PD_BUF_SIZE)
		return out(w, data, len);
	memcpy(w->buf + w->used, data, len);
	w->used += len;
	return 0;
}

/* pwrite() of all of @len at @off, without touching the stream state. */
static int pwrite_all(int fd, const void *data, size_t len, uint64_t off)
{
	const unsigned char *p = data;
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int truncate_to(struct pd_writer *w, uint64_t off)
{
	int ret;

	do {
		ret = ftruncate(w->fd, (off_t)off);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		ret = -errno;
		pr_err("perf.data: cannot cut the file back to %llu bytes: %s",
		       (unsigned long long)off, strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- host information (the features perf record writes) ---- */

/* The value of the first /proc/cpuinfo line that starts with @key, with
 * runs of white space squashed to one space like perf does; malloc()ed. */
static char *cpuinfo_value(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL, *val = NULL, *s, *d;
	size_t cap = 0, klen = strlen(key);
	bool space = false;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, key, klen))
			continue;
		s = strchr(line, ':');
		if (!s)
			continue;
		s++;
		while (*s == ' ' || *s == '\t')
			s++;
		/* squash white space in place; no trailing blank */
		for (d = line; *s; s++) {
			if (*s == ' ' || *s == '\t' || *s == '\n') {
				space = d != line;
				continue;
			}
			if (space)
				*d++ = ' ';
			space = false;
			*d++ = *s;
		}
		*d = '\0';
		if (line[0])
			val = strdup(line);
		break;
	}
	free(line);
	fclose(f);
	return val;
}

static void feat_cpudesc(struct pd_buf *b)
{
#if defined(__powerpc__) || defined(__sparc__)
	static const char *const keys[] = { "cpu" };
#elif defined(__s390__)
	static const char *const keys[] = { "vendor_id" };
#elif defined(__arm__)
	static const char *const keys[] = { "model name", "Processor" };
#elif defined(__loongarch__)
	static const char *const keys[] = { "Model Name" };
#else
	static const char *const keys[] = { "model name" };
#endif
	size_t i;
	char *v;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = cpuinfo_value(keys[i]);
		if (v) {
			buf_str(b, v);
			free(v);
			return;
		}
	}
}

/* perf's get_cpuid(): on x86 "vendor,family,model,stepping" (decimal,
 * with the extended family/model folded in, as /proc/cpuinfo shows them);
 * on arm64 the MIDR of cpu0.  perf uses it to pick its JSON event tables;
 * the feature is left out elsewhere. */
static void feat_cpuid(struct pd_buf *b)
{
#if defined(__x86_64__) || defined(__i386__)
	char *vendor = cpuinfo_value("vendor_id");
	char *family = cpuinfo_value("cpu family");
	char *model = cpuinfo_value("model\t");
	char *step = cpuinfo_value("stepping");
	char s[128];

	if (vendor && family && model && step) {
		snprintf(s, sizeof(s), "%s,%s,%s,%s", vendor, family, model,
			 step);
		buf_str(b, s);
	}
	free(vendor);
	free(family);
	free(model);
	free(step);
#elif defined(__aarch64__)
	FILE *f = fopen(
		"/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
		"re");
	char s[64];

	if (!f)
		return;
	if (fgets(s, sizeof(s), f)) {
		s[strcspn(s, "\n")] = '\0';
		if (s[0])
			buf_str(b, s);
	}
	fclose(f);
#else
	(void)b;
#endif
}

/* CPUs present (highest present cpu + 1, perf's cpu__max_present_cpu()) and
 * online. */
static void feat_nrcpus(struct pd_buf *b)
{
	FILE *f = fopen("/sys/devices/system/cpu/present", "re");
	long conf = -1, onln = sysconf(_SC_NPROCESSORS_ONLN);
	char s[4096], *p, *end;
	unsigned long v;

	if (f) {
		if (fgets(s, sizeof(s), f)) {
			/* "0-3,8-11": the last number is the highest cpu */
			for (p = s; *p; p = end) {
				if (*p < '0' || *p > '9') {
					end = p + 1;
					continue;
				}
				v = strtoul(p, &end, 10);
				if (v < INT_MAX && (long)v + 1 > conf)
					conf = (long)v + 1;
			}
		}
		fclose(f);
	}
	if (conf <= 0)
		conf = sysconf(_SC_NPROCESSORS_CONF);
	if (conf <= 0 || onln <= 0)
		return;
	buf_u32(b, (uint32_t)conf);
	buf_u32(b, (uint32_t)onln);
}

static void feat_total_mem(struct pd_buf *b)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu", &kb) == 1) {
			buf_u64(b, kb);
			break;
		}
	}
	fclose(f);
}

static void feat_cmdline(struct pd_writer *w, struct pd_buf *b)
{
	int i;

	buf_u32(b, (uint32_t)w->argc);
	for (i = 0; i < w->argc; i++)
		buf_str(b, w->argv[i]);
}

/* nr events, attr size, then per event: attr, nr ids, name, ids.  Only
 * when every event has a name; else perf names them from their attrs. */
static void feat_event_desc(struct pd_writer *w, struct pd_buf *b)
{
	uint32_t i;

	for (i = 0; i < w->nr_attrs; i++)
		if (!w->attrs[i].name)
			return;
	buf_u32(b, w->nr_attrs);
	buf_u32(b, PD_ATTR_SIZE);
	for (i = 0; i < w->nr_attrs; i++) {
		buf_add(b, w->attrs[i].attr, PD_ATTR_SIZE);
		buf_u32(b, w->attrs[i].nr_ids);
		buf_str(b, w->attrs[i].name);
		buf_add(b, w->attrs[i].ids,
			(size_t)w->attrs[i].nr_ids * sizeof(uint64_t));
	}
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* CLOCKID: the clock's resolution in ns (perf's clockid_res_ns). */
static void feat_clockid(struct pd_writer *w, struct pd_buf *b)
{
	struct timespec res;

	if (clock_getres(w->clockid, &res))
		return;
	buf_u64(b, ts_ns(&res));
}

/* CLOCK_DATA: version 1, clockid, then a wall-clock time and the events'
 * clock at the same moment, so perf can show times of day. */
static void feat_clock_data(struct pd_writer *w, struct pd_buf *b)
{
	struct timespec c0, tod, c1;

	if (clock_gettime(w->clockid, &c0) ||
	    clock_gettime(CLOCK_REALTIME, &tod) ||
	    clock_gettime(w->clockid, &c1))
		return;
	buf_u32(b, 1);
	buf_u32(b, (uint32_t)w->clockid);
	buf_u64(b, ts_ns(&tod));
	buf_u64(b, ts_ns(&c0) + (ts_ns(&c1) - ts_ns(&c0)) / 2);
}

static void feat_version(struct pd_buf *b)
{
	char s[64];

	snprintf(s, sizeof(s), "perfring-%d.%d.%d", PERFRING_VERSION_MAJOR,
		 PERFRING_VERSION_MINOR, PERFRING_VERSION_PATCH);
	buf_str(b, s);
}

/*
 * Builds the payloads of the features, ascending by id, into @f (room for
 * PD_FEAT_MAX); returns how many.  TRACING_DATA is not built here: its
 * payload is w->tdata as it is.  A feature whose information is not
 * available is left out, as perf does.
 */
/*
 * HEADER_AUXTRACE (perf's auxtrace_index__write): u64 nr, then nr x {u64
 * file_offset; u64 sz} with sz the record's header.size (48), which perf
 * checks.  Only chunks whose payload lies inside the data that stays
 * (after a write error the data is cut back to the last complete round).
 */
static void feat_auxtrace(struct pd_writer *w, struct pd_buf *b)
{
	uint64_t end = w->err ? w->round_end : w->off + w->used, nr = 0;

	for (size_t i = 0; i < w->nr_aux_idx; i++)
		if (w->aux_idx[i][0] < end)
			nr++;
	if (!nr)
		return;
	buf_u64(b, nr);
	for (size_t i = 0; i < w->nr_aux_idx; i++)
		if (w->aux_idx[i][0] < end) {
			buf_u64(b, w->aux_idx[i][0]);
			buf_u64(b, w->aux_idx[i][1]);
		}
}

static int build_features(struct pd_writer *w, struct pd_feat *f, bool pipe)
{
	struct utsname uts;
	bool have_uts = uname(&uts) == 0;
	int n = 0, id;

	for (id = PD_FEAT_HOSTNAME; id <= PD_FEAT_CLOCK_DATA; id++) {
		struct pd_buf *b = &f[n].b;

		memset(b, 0, sizeof(*b));
		switch (id) {
		case PD_FEAT_HOSTNAME:
			if (have_uts)
				buf_str(b, uts.nodename);
			break;
		case PD_FEAT_OSRELEASE:
			if (have_uts)
				buf_str(b, uts.release);
			break;
		case PD_FEAT_VERSION:
			feat_version(b);
			break;
		case PD_FEAT_ARCH:
			if (have_uts)
				buf_str(b, uts.machine);
			break;
		case PD_FEAT_NRCPUS:
			feat_nrcpus(b);
			break;
		case PD_FEAT_CPUDESC:
			feat_cpudesc(b);
			break;
		case PD_FEAT_CPUID:
			feat_cpuid(b);
			break;
		case PD_FEAT_TOTAL_MEM:
			feat_total_mem(b);
			break;
		case PD_FEAT_CMDLINE:
			feat_cmdline(w, b);
			break;
		case PD_FEAT_EVENT_DESC:
			feat_event_desc(w, b);
			break;
		case PD_FEAT_SAMPLE_TIME:
			/* unknown when a pipe starts */
			if (!pipe && (w->first_time || w->last_time)) {
				buf_u64(b, w->first_time);
				buf_u64(b, w->last_time);
			}
			break;
		case PD_FEAT_CLOCKID:
			if (w->has_clockid)
				feat_clockid(w, b);
			break;
		case PD_FEAT_CLOCK_DATA:
			if (w->has_clockid)
				feat_clock_data(w, b);
			break;
		case PD_FEAT_AUXTRACE:
			if (!pipe)
				feat_auxtrace(w, b);
			break;
		default:
			break;
		}
		if (b->oom) {
			pr_warn("perf.data: out of memory, feature %d left out",
				id);
			buf_free(b);
			continue;
		}
		if (!b->len) {
			buf_free(b);
			continue;
		}
		f[n++].id = id;
	}
	return n;
}

static void free_features(struct pd_feat *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		buf_free(&f[i].b);
}

/* ---- API ---- */

PR_HIDDEN int pd_writer_open(int fd, bool pipe, int argc, char *const *argv,
			     struct pd_writer **out_w)
{
	struct pd_writer *w;
	struct stat st;
	size_t len = 0;
	char *s;
	off_t pos;
	int i;

	if (!out_w || fd < 0 || argc < 0 || (argc && !argv))
		return -EINVAL;
	*out_w = NULL;
	if (fstat(fd, &st) < 0) {
		i = -errno;
		pr_err("perf.data: fstat: %s", strerror(-i));
		return i;
	}
	if (!pipe && !S_ISREG(st.st_mode)) {
		pr_err("perf.data: file mode needs a regular file (use the pipe format)");
		return -EINVAL;
	}
	/* pwrite() on an O_APPEND descriptor appends: no header patching */
	if (!pipe && (fcntl(fd, F_GETFL) & O_APPEND)) {
		pr_err("perf.data: file mode cannot write through O_APPEND");
		return -EINVAL;
	}
	for (i = 0; i < argc; i++) {
		if (!argv[i])
			return -EINVAL;
		len += strlen(argv[i]) + 1;
	}

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->buf = malloc(PD_BUF_SIZE);
	w->argv = malloc((size_t)(argc + 1) * sizeof(char *) + len);
	if (!w->buf || !w->argv) {
		free(w->buf);
		free(w->argv);
		free(w);
		return -ENOMEM;
	}
	s = (char *)(w->argv + argc + 1);
	for (i = 0; i < argc; i++) {
		len = strlen(argv[i]) + 1;
		memcpy(s, argv[i], len);
		w->argv[i] = s;
		s += len;
	}
	w->argv[argc] = NULL;
	w->argc = argc;
	w->fd = fd;
	w->pipe = pipe;
	w->regular = S_ISREG(st.st_mode);
	if (pipe && w->regular) {
		pos = lseek(fd, 0, SEEK_CUR);
		if (pos < 0)
			w->regular = false;
		else
			w->base = (uint64_t)pos;
	}
	*out_w = w;
	return 0;
}

static int check_attrs(const struct pd_writer *w);

PR_HIDDEN int pd_writer_add_attr(struct pd_writer *w,
				 const struct perf_event_attr *attr,
				 const char *name, const uint64_t *ids,
				 uint32_t nr_ids)
{
	struct pd_attr *a;
	size_t sz;
	uint32_t size = PD_ATTR_SIZE;
	size_t i;

	if (!w || !attr || (nr_ids && !ids))
		return -EINVAL;
	if (w->started && w->pipe) {
		pr_err("perf.data: a pipe needs its attrs before the start");
		return -EBUSY;
	}
	/* A HEADER_ATTR record (pipe mode) is at most 64 KiB. */
	if (nr_ids > (PD_MAX_RECORD - 8 - PD_ATTR_SIZE) / sizeof(uint64_t)) {
		pr_err("perf.data: %u ids for one event are too many", nr_ids);
		return -E2BIG;
	}
	a = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	w->attrs = a;
	a += w->nr_attrs;
	memset(a, 0, sizeof(*a));

	/* attr.size 0 means the first ABI (64 bytes), as for the kernel. */
	sz = attr->size ? attr->size : 64;
	if (sz > sizeof(*attr))
		sz = sizeof(*attr);
	if (sz > PD_ATTR_SIZE) {
		for (i = PD_ATTR_SIZE; i < sz; i++) {
			if (((const unsigned char *)attr)[i]) {
				pr_warn("perf.data: attr fields past %d bytes are dropped (perf 6.1 reads %d)",
					PD_ATTR_SIZE, PD_ATTR_SIZE);
				break;
			}
		}
		sz = PD_ATTR_SIZE;
	}
	memcpy(a->attr, attr, sz);
	memcpy(a->attr + 4, &size, sizeof(size));

	if (name) {
		a->name = strdup(name);
		if (!a->name)
			return -ENOMEM;
	}
	if (nr_ids) {
		a->ids = malloc(nr_ids * sizeof(uint64_t));
		if (!a->ids) {
			free(a->name);
			return -ENOMEM;
		}
		memcpy(a->ids, ids, nr_ids * sizeof(uint64_t));
	}
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	if (w->started && check_attrs(w)) {
		/* An event added while recording must fit the others. */
		w->nr_attrs--;
		free(a->name);
		free(a->ids);
		return -EINVAL;
	}
	return 0;
}

PR_HIDDEN int pd_writer_set_tracing_data(struct pd_writer *w, const void *data,
					 size_t len)
{
	void *p;

	if (!w || (len && !data))
		return -EINVAL;
	if (w->started && w->pipe) {
		pr_err("perf.data: a pipe needs the tracing data before the start");
		return -EBUSY;
	}
	if (len > UINT32_MAX - 8) {
		pr_err("perf.data: tracing data of %zu bytes is too big", len);
		return -E2BIG;
	}
	p = malloc(len ? len : 1);
	if (!p)
		return -ENOMEM;
	if (len)
		memcpy(p, data, len);
	free(w->tdata);
	w->tdata = p;
	w->tdata_len = len;
	w->has_tdata = true;
	return 0;
}

PR_HIDDEN void pd_writer_set_clockid(struct pd_writer *w, int clockid)
{
	if (!w)
		return;
	w->has_clockid = true;
	w->clockid = clockid;
}

PR_HIDDEN void pd_writer_note_time(struct pd_writer *w, uint64_t first,
				   uint64_t last)
{
	if (!w)
		return;
	if (first && (!w->first_time || first < w->first_time))
		w->first_time = first;
	if (last > w->last_time)
		w->last_time = last;
}

PR_HIDDEN uint64_t pd_writer_data_bytes(const struct pd_writer *w)
{
	if (!w || !w->started)
		return 0;
	return w->off + w->used - w->data_offset;
}

static uint64_t attr_u64(const struct pd_attr *a, size_t off)
{
	uint64_t v;

	memcpy(&v, a->attr + off, sizeof(v));
	return v;
}

/* perf's __evsel__calc_id_pos()/__evsel__calc_is_pos(). */
static int id_pos(uint64_t st)
{
	int idx = 0;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
	       !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
	return idx;
}

static int is_pos(uint64_t st)
{
	int idx = 1;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
	return idx;
}

/*
 * What perf checks before it reads anything (evlist__valid_sample_type,
 * _sample_id_all, _read_format): with several events, the id must be
 * findable at one position in every record, and all events must agree on
 * sample_id_all and read_format.  And with several events each needs ids:
 * perf 6.1 stops at the first sample whose id it does not know ("failed
 * to process type: 9").
 */
static int check_attrs(const struct pd_writer *w)
{
	const struct pd_attr *a0 = &w->attrs[0];
	uint64_t st0 = attr_u64(a0, 24), rf0 = attr_u64(a0, 32);
	uint64_t sia0 = attr_u64(a0, 40) & (1ull << 18);
	uint32_t i;
	uint64_t st;

	for (i = 0; i < w->nr_attrs; i++) {
		st = attr_u64(&w->attrs[i], 24);
		if ((attr_u64(&w->attrs[i], 40) & (1ull << 18)) != sia0 ||
		    attr_u64(&w->attrs[i], 32) != rf0) {
			pr_err("perf.data: events disagree on sample_id_all or read_format; perf refuses that");
			return -EINVAL;
		}
		if ((st & PERF_SAMPLE_READ) && !(rf0 & PERF_FORMAT_ID)) {
			pr_err("perf.data: PERF_SAMPLE_READ needs PERF_FORMAT_ID");
			return -EINVAL;
		}
		if (w->nr_attrs > 1 && !w->attrs[i].nr_ids) {
			pr_err("perf.data: with several events every event needs its ids (perf cannot tell the samples apart)");
			return -EINVAL;
		}
		if (w->nr_attrs > 1 &&
		    (id_pos(st) < 0 || is_pos(st) < 0 ||
		     id_pos(st) != id_pos(st0) || is_pos(st) != is_pos(st0))) {
			pr_err("perf.data: with several events every sample_type needs the id at the same place (use PERF_SAMPLE_IDENTIFIER)");
			return -EINVAL;
		}
	}
	return 0;
}

static bool has_tracepoints(const struct pd_writer *w)
{
	uint32_t i, type;

	for (i = 0; i < w->nr_attrs; i++) {
		memcpy(&type, w->attrs[i].attr, sizeof(type));
		if (type == PERF_TYPE_TRACEPOINT)
			return true;
	}
	return false;
}

/* The start's attrs section: the ids of its attrs, then the attrs. */
static uint64_t start_attrs_offset(const struct pd_writer *w)
{
	uint64_t ids = 0;

	for (uint32_t i = 0; i < w->nr_start_attrs; i++)
		ids += w->attrs[i].nr_ids;
	return PD_FILE_HEADER_SIZE + ids * 8;
}

static void file_header(const struct pd_writer *w, unsigned char *h,
			uint64_t data_size, const uint64_t *features,
			uint64_t attrs_off, uint32_t nr_attrs)
{
	memset(h, 0, PD_FILE_HEADER_SIZE);
	put_u64(h, PD_MAGIC);
	put_u64(h + 8, PD_FILE_HEADER_SIZE);
	put_u64(h + 16, PD_FILE_ATTR_SIZE);
	put_u64(h + 24, attrs_off); /* attrs.offset */
	put_u64(h + 32, (uint64_t)nr_attrs * PD_FILE_ATTR_SIZE);
	put_u64(h + 40, w->data_offset);
	put_u64(h + PD_HDR_DATA_SIZE, data_size);
	/* event_types: zero, perf ignores it */
	if (features)
		memcpy(h + PD_HDR_FEATURES, features, 32);
}

/* Header, id arrays and attrs, at offset 0. */
static int start_file(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE], fa[PD_FILE_ATTR_SIZE];
	uint64_t ids_off = PD_FILE_HEADER_SIZE, nids = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < w->nr_attrs; i++)
		nids += w->attrs[i].nr_ids;
	w->data_offset = PD_FILE_HEADER_SIZE + nids * 8 +
			 (uint64_t)w->nr_attrs * PD_FILE_ATTR_SIZE;
	w->off = 0;
	w->nr_start_attrs = w->nr_attrs;
	file_header(w, h, 0, NULL, start_attrs_offset(w), w->nr_attrs);
	ret = append(w, h, sizeof(h));
	for (i = 0; !ret && i < w->nr_attrs; i++)
		ret = append(w, w->attrs[i].ids, w->attrs[i].nr_ids * 8u);
	for (i = 0; !ret && i < w->nr_attrs; i++) {
		memcpy(fa, w->attrs[i].attr, PD_ATTR_SIZE);
		put_u64(fa + PD_ATTR_SIZE, ids_off);
		put_u64(fa + PD_ATTR_SIZE + 8, w->attrs[i].nr_ids * 8ull);
		ids_off += w->attrs[i].nr_ids * 8ull;
		ret = append(w, fa, sizeof(fa));
	}
	if (!ret)
		ret = flush(w);
	return ret;
}

/* Pipe header, HEADER_ATTR, HEADER_FEATURE and HEADER_TRACING_DATA
 * records, in the order perf record -o - writes them. */
static int start_pipe(struct pd_writer *w)
{
	struct pd_feat f[PD_FEAT_MAX];
	unsigned char h[24];
	uint64_t size, pad;
	uint32_t i;
	int n, k, ret;

	w->off = 0;
	put_u64(h, PD_MAGIC);
	put_u64(h + 8, PD_PIPE_HEADER_SIZE);
	ret = append(w, h, PD_PIPE_HEADER_SIZE);

	for (i = 0; !ret && i < w->nr_attrs; i++) {
		size = 8 + PD_ATTR_SIZE + w->attrs[i].nr_ids * 8ull;
		put_header(h, PD_RECORD_HEADER_ATTR, (uint16_t)size);
		ret = append(w, h, 8);
		if (!ret)
			ret = append(w, w->attrs[i].attr, PD_ATTR_SIZE);
		if (!ret)
			ret = append(w, w->attrs[i].ids,
				     w->attrs[i].nr_ids * 8u);
	}
	if (ret)
		return ret;

	/*
	 * Features as records {header, u64 feat_id, payload}, padded to 8
	 * bytes (perf reads payloads by their own lengths).  No
	 * HEADER_LAST_FEATURE end mark: its id is 32 in perf 6.1 but a real
	 * feature in later perf versions, which would then fail to parse it.
	 */
	n = build_features(w, f, true);
	for (k = 0; !ret && k < n; k++) {
		size = align_up(16 + f[k].b.len, 8);
		if (size > PD_MAX_RECORD - 7) {
			pr_warn("perf.data: feature %d is too big for a pipe record, left out",
				f[k].id);
			continue;
		}
		put_header(h, PD_RECORD_HEADER_FEATURE, (uint16_t)size);
		put_u64(h + 8, (uint64_t)f[k].id);
		ret = append(w, h, 16);
		if (!ret)
			ret = append(w, f[k].b.p, f[k].b.len);
		pad = size - 16 - f[k].b.len;
		memset(h, 0, 8);
		if (!ret && pad)
			ret = append(w, h, pad);
	}
	free_features(f, n);

	/*
	 * Names again as PERF_RECORD_EVENT_UPDATE {header, u64 type = NAME,
	 * u64 id, name}: in pipe mode perf report names its events before
	 * EVENT_DESC arrives and only these records rename them.  perf finds
	 * the event by id, so only events with ids get one.
	 */
	for (i = 0; !ret && i < w->nr_attrs; i++) {
		const struct pd_attr *a = &w->attrs[i];
		size_t nlen;

		if (!a->name || !a->nr_ids)
			continue;
		nlen = strlen(a->name) + 1;
		if (nlen > PD_MAX_RECORD - 32)
			continue;
		size = align_up(24 + nlen, 8);
		put_header(h, PD_RECORD_EVENT_UPDATE, (uint16_t)size);
		put_u64(h + 8, PD_EVENT_UPDATE_NAME);
		put_u64(h + 16, a->ids[0]);
		ret = append(w, h, 24);
		if (!ret)
			ret = append(w, a->name, nlen);
		memset(h, 0, 8);
		if (!ret && size - 24 - nlen)
			ret = append(w, h, size - 24 - nlen);
	}

	/*
	 * {header (size 16), u32 size = data size rounded up to 8, u32 pad},
	 * then the data and its padding, which header.size does not count:
	 * perf reads header.size bytes, then the tracing data straight from
	 * the stream, and checks it against size.  perf 6.1 as shipped
	 * (Debian's 6.1.192) writes 16 here, older 6.1 builds wrote a 12 byte
	 * header; readers of either follow header.size.
	 */
	if (!ret && w->has_tdata) {
		size = align_up(w->tdata_len, 8);
		put_header(h, PD_RECORD_HEADER_TRACING_DATA, 16);
		put_u32(h + 8, (uint32_t)size);
		put_u32(h + 12, 0);
		ret = append(w, h, 16);
		if (!ret)
			ret = append(w, w->tdata, w->tdata_len);
		memset(h, 0, 8);
		if (!ret && size > w->tdata_len)
			ret = append(w, h, size - w->tdata_len);
	}
	if (!ret)
		ret = flush(w);
	return ret;
}

PR_HIDDEN int pd_writer_start(struct pd_writer *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	if (w->started)
		return -EBUSY;
	if (w->err)
		return w->err;
	if (!w->nr_attrs) {
		pr_err("perf.data: no events");
		return -EINVAL;
	}
	ret = check_attrs(w);
	if (ret)
		return ret;
	if (w->pipe && has_tracepoints(w) && !w->has_tdata) {
		pr_err("perf.data: tracepoint events need the tracing data before the start");
		return -EINVAL;
	}
	ret = w->pipe ? start_pipe(w) : start_file(w);
	if (ret) {
		w->used = 0;
		return ret;
	}
	w->data_offset = w->off;
	w->round_end = w->off;
	w->started = true;
	return 0;
}

/*
 * Checks that @len bytes continue the record stream: every header has a
 * size of at least 8 bytes.  Records may be split across calls.  The
 * framing state is only updated when the whole buffer is good, so a bad
 * buffer is refused without changing anything.
 */
static int check_records(struct pd_writer *w, const unsigned char *p,
			 size_t len)
{
	unsigned char hdr[8];
	uint32_t have = w->hdr_have;
	uint64_t left = w->rec_left, take;
	uint16_t size;
	size_t pos = 0;

	memcpy(hdr, w->hdr, sizeof(hdr));
	while (pos < len) {
		if (left) {
			take = len - pos < left ? len - pos : left;
			pos += take;
			left -= take;
			continue;
		}
		take = len - pos < 8 - have ? len - pos : 8 - have;
		memcpy(hdr + have, p + pos, take);
		have += (uint32_t)take;
		pos += take;
		if (have < 8)
			break;
		memcpy(&size, hdr + 6, sizeof(size));
		if (size < 8) {
			pr_err("perf.data: record of type %u with size %u refused",
			       (unsigned)(hdr[0] | hdr[1] << 8), size);
			return -EINVAL;
		}
		left = size - 8u;
		have = 0;
	}
	memcpy(w->hdr, hdr, sizeof(hdr));
	w->hdr_have = have;
	w->rec_left = left;
	return 0;
}

static bool mid_record(const struct pd_writer *w)
{
	return w->hdr_have || w->rec_left;
}

PR_HIDDEN int pd_writer_write_whole(struct pd_writer *w, const void *buf,
				    size_t len)
{
	if (!w || (len && !buf) || !w->started || mid_record(w))
		return -EINVAL;
	if (w->err)
		return w->err;
	return len ? append(w, buf, len) : 0;
}

PR_HIDDEN int pd_writer_write(struct pd_writer *w, const void *buf, size_t len)
{
	int ret;

	if (!w || (len && !buf))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started)
		return -EINVAL;
	if (!len)
		return 0;
	ret = check_records(w, buf, len);
	if (ret)
		return ret;
	return append(w, buf, len);
}

PR_HIDDEN int pd_writer_write_auxtrace(struct pd_writer *w, const void *rec,
				       const void *data1, size_t len1,
				       const void *data2, size_t len2)
{
	static const unsigned char zero[8];
	const struct perf_event_header *h = rec;
	uint64_t size, at;
	size_t pad;
	int ret;

	if (!w || !rec || (len1 && !data1) || (len2 && !data2))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started || mid_record(w) || h->type != PD_RECORD_AUXTRACE ||
	    h->size != 48)
		return -EINVAL;
	memcpy(&size, (const unsigned char *)rec + 8, sizeof(size));
	pad = (size_t)(size - len1 - len2);
	if (size < len1 + len2 || pad >= 8)
		return -EINVAL;
	if (!w->pipe && w->nr_aux_idx == w->cap_aux_idx) {
		size_t cap = w->cap_aux_idx ? 2 * w->cap_aux_idx : 64;
		void *n = realloc(w->aux_idx, cap * sizeof(*w->aux_idx));

		if (!n)
			return -ENOMEM;
		w->aux_idx = n;
		w->cap_aux_idx = cap;
	}
	at = w->off + w->used;
	ret = append(w, rec, 48);
	if (!ret)
		ret = append(w, data1, len1);
	if (!ret)
		ret = append(w, data2, len2);
	if (!ret)
		ret = append(w, zero, pad);
	if (ret)
		return ret;
	if (!w->pipe) {
		w->aux_idx[w->nr_aux_idx][0] = at;
		w->aux_idx[w->nr_aux_idx][1] = 48; /* perf: header.size */
		w->nr_aux_idx++;
	}
	return 0;
}

PR_HIDDEN int pd_writer_finish_round(struct pd_writer *w)
{
	unsigned char r[8];
	int ret;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started)
		return -EINVAL;
	if (mid_record(w)) {
		pr_err("perf.data: a round cannot end inside a record");
		return -EINVAL;
	}
	if (w->off + w->used == w->round_end)
		return 0; /* nothing new: no empty rounds */
	put_header(r, PD_RECORD_FINISHED_ROUND, 8);
	ret = append(w, r, sizeof(r));
	if (!ret)
		ret = flush(w);
	if (ret)
		return ret;
	w->round_end = w->off;
	/*
	 * Keep data.size current, so that a recorder that dies leaves a file
	 * perf reads up to here.  Advisory: a real problem with the file
	 * shows up on the next data write.
	 */
	if (!w->pipe) {
		unsigned char v[8];

		put_u64(v, w->round_end - w->data_offset);
		(void)pwrite_all(w->fd, v, sizeof(v), PD_HDR_DATA_SIZE);
	}
	return 0;
}

/*
 * Writes the feature table at @at and the payloads after it.  @only_needed:
 * only what perf cannot open the file without (TRACING_DATA with
 * tracepoint events).  Sets the bits of what was written in @bits and the
 * end of the file in *end.
 */
static int write_features(struct pd_writer *w, uint64_t at, bool only_needed,
			  uint64_t bits[4], uint64_t *end)
{
	struct pd_feat f[PD_FEAT_MAX];
	bool tdata = w->has_tdata && (!only_needed || has_tracepoints(w));
	unsigned char *table;
	uint64_t pos;
	int n = 0, nsec, k, ret;

	memset(bits, 0, 4 * sizeof(uint64_t));
	if (!only_needed)
		n = build_features(w, f, false);
	nsec = n + tdata;
	*end = at;
	if (!nsec) {
		free_features(f, n);
		return 0;
	}
	table = calloc((size_t)nsec, 16);
	if (!table) {
		free_features(f, n);
		return -ENOMEM;
	}
	pos = at + (uint64_t)nsec * 16;
	k = 0;
	if (tdata) {
		put_u64(table, pos);
		put_u64(table + 8, w->tdata_len);
		pos += w->tdata_len;
		bits[0] |= 1ull << PD_FEAT_TRACING_DATA;
		k = 1;
	}
	for (int i = 0; i < n; i++, k++) {
		put_u64(table + 16 * k, pos);
		put_u64(table + 16 * k + 8, f[i].b.len);
		pos += f[i].b.len;
		bits[f[i].id / 64] |= 1ull << (f[i].id % 64);
	}

	ret = pwrite_all(w->fd, table, (size_t)nsec * 16, at);
	pos = at + (uint64_t)nsec * 16;
	if (!ret && tdata) {
		ret = pwrite_all(w->fd, w->tdata, w->tdata_len, pos);
		pos += w->tdata_len;
	}
	for (int i = 0; !ret && i < n; i++) {
		ret = pwrite_all(w->fd, f[i].b.p, f[i].b.len, pos);
		pos += f[i].b.len;
	}
	free(table);
	free_features(f, n);
	if (ret)
		return ret;
	*end = pos;
	return 0;
}

static void free_writer(struct pd_writer *w)
{
	uint32_t i;

	for (i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	free(w->aux_idx);
	free(w->argv);
	free(w->tdata);
	free(w->buf);
	free(w);
}

static int close_file(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE];
	uint64_t bits[4], data_end, end, attrs_off = start_attrs_offset(w);
	uint32_t nr_attrs = w->nr_start_attrs;
	int ret;

	if (w->err) {
		/* Cut the partial round; the file holds the complete ones. */
		data_end = w->round_end;
		if (truncate_to(w, data_end) < 0)
			pr_warn("perf.data: the data after the last complete round stays in the file but outside data.size");
	} else {
		data_end = w->off;
	}

	ret = write_features(w, data_end, false, bits, &end);
	if (ret) {
		pr_warn("perf.data: cannot write the features: %s; trying without them",
			strerror(-ret));
		set_err(w, ret);
		truncate_to(w, data_end);
		ret = write_features(w, data_end, true, bits, &end);
		if (ret) {
			truncate_to(w, data_end);
			memset(bits, 0, sizeof(bits));
			end = data_end;
			if (has_tracepoints(w))
				pr_err("perf.data: no room for the tracing data: perf will not open this file (tracepoint events need it)");
		}
	} else if (has_tracepoints(w) && !w->has_tdata) {
		pr_warn("perf.data: tracepoint events but no tracing data: perf will not open this file");
	}
	/*
	 * Events added while recording (application events): all attrs
	 * again after the features, with their ids; the header points there
	 * and the start's section stays unused.  perf reads the attrs
	 * wherever the header says.
	 */
	if (w->nr_attrs > w->nr_start_attrs && !w->err) {
		uint64_t at = (end + 7) & ~7ull, ids_off = at;
		unsigned char fa[PD_FILE_ATTR_SIZE];
		uint64_t pos;
		int werr = 0;

		for (uint32_t i = 0; i < w->nr_attrs; i++)
			ids_off += w->attrs[i].nr_ids * 8ull;
		attrs_off = ids_off;
		pos = at;
		for (uint32_t i = 0; !werr && i < w->nr_attrs; i++) {
			werr = pwrite_all(w->fd, w->attrs[i].ids,
					  w->attrs[i].nr_ids * 8u, pos);
			pos += w->attrs[i].nr_ids * 8ull;
		}
		ids_off = at;
		for (uint32_t i = 0; !werr && i < w->nr_attrs; i++) {
			memcpy(fa, w->attrs[i].attr, PD_ATTR_SIZE);
			put_u64(fa + PD_ATTR_SIZE, ids_off);
			put_u64(fa + PD_ATTR_SIZE + 8,
				w->attrs[i].nr_ids * 8ull);
			ids_off += w->attrs[i].nr_ids * 8ull;
			werr = pwrite_all(w->fd, fa, sizeof(fa), pos);
			pos += sizeof(fa);
		}
		if (werr) {
			pr_err("perf.data: cannot write the attrs of the events added while recording: %s",
			       strerror(-werr));
			set_err(w, werr);
			attrs_off = start_attrs_offset(w);
			nr_attrs = w->nr_start_attrs;
		} else {
			end = pos;
			nr_attrs = w->nr_attrs;
		}
	}
	/* Drop whatever the file held past our end. */
	truncate_to(w, end);

	file_header(w, h, data_end - w->data_offset, bits, attrs_off, nr_attrs);
	ret = pwrite_all(w->fd, h, sizeof(h), 0);
	if (ret) {
		pr_err("perf.data: cannot write the file header: %s",
		       strerror(-ret));
		set_err(w, ret);
	}
	return w->err;
}

PR_HIDDEN int pd_writer_close(struct pd_writer *w)
{
	unsigned char r[8];
	int ret;

	if (!w)
		return 0;
	if (!w->started) {
		ret = w->err;
		free_writer(w);
		return ret;
	}
	if (!w->err && mid_record(w)) {
		pr_err("perf.data: the data ends inside a record; cut back to the last complete round");
		set_err(w, -EINVAL);
	}
	if (!w->err) {
		/*
		 * An empty data section makes perf warn that the recording was
		 * not terminated properly: end it with one empty round.
		 */
		if (w->off + w->used == w->data_offset) {
			put_header(r, PD_RECORD_FINISHED_ROUND, 8);
			append(w, r, sizeof(r));
		}
		flush(w);
	}
	w->used = 0;

	if (w->pipe) {
		if (w->err && w->regular &&
		    truncate_to(w, w->base + w->round_end) == 0)
			pr_warn("perf.data: stream cut back to the last complete round");
		ret = w->err;
	} else {
		ret = close_file(w);
	}
	free_writer(w);
	return ret;
}
