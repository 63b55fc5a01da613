// SPDX-License-Identifier: MIT
/*
 * What a perf.data written here says about itself (perf_data.c has the
 * layout): the feature sections perf record writes, built at open from
 * /proc and uname (cpudesc, cpuid, nrcpus, ...) and later from the attrs
 * and the tracing data (EVENT_DESC, TRACING_DATA, GROUP_DESC, ...), the
 * file header and the attr section, and how a file or a stream starts.
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
#include "../common/log.h"
#include "perf_data.h"
#include "perf_reader.h"
#include "perf_data_internal.h"

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
			pd_buf_str(b, v);
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
		pd_buf_str(b, s);
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
			pd_buf_str(b, s);
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
	pd_buf_u32(b, (uint32_t)conf);
	pd_buf_u32(b, (uint32_t)onln);
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
			pd_buf_u64(b, kb);
			break;
		}
	}
	fclose(f);
}

static void feat_cmdline(struct pd_writer *w, struct pd_buf *b)
{
	int i;

	pd_buf_u32(b, (uint32_t)w->argc);
	for (i = 0; i < w->argc; i++)
		pd_buf_str(b, w->argv[i]);
}

/* nr events, attr size, then per event: attr, nr ids, name, ids.  Only
 * when every event has a name; else perf names them from their attrs. */
void pd_feat_event_desc(struct pd_writer *w, struct pd_buf *b)
{
	uint32_t i;

	for (i = 0; i < w->nr_attrs; i++)
		if (!w->attrs[i].name)
			return;
	pd_buf_u32(b, w->nr_attrs);
	pd_buf_u32(b, PD_ATTR_SIZE);
	for (i = 0; i < w->nr_attrs; i++) {
		pd_buf_add(b, w->attrs[i].attr, PD_ATTR_SIZE);
		pd_buf_u32(b, w->attrs[i].nr_ids);
		pd_buf_str(b, w->attrs[i].name);
		pd_buf_add(b, w->attrs[i].ids,
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
	pd_buf_u64(b, ts_ns(&res));
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
	pd_buf_u32(b, 1);
	pd_buf_u32(b, (uint32_t)w->clockid);
	pd_buf_u64(b, ts_ns(&tod));
	pd_buf_u64(b, ts_ns(&c0) + (ts_ns(&c1) - ts_ns(&c0)) / 2);
}

static void feat_version(struct pd_buf *b)
{
	char s[64];

	snprintf(s, sizeof(s), "perfring-%d.%d.%d", PERFRING_VERSION_MAJOR,
		 PERFRING_VERSION_MINOR, PERFRING_VERSION_PATCH);
	pd_buf_str(b, s);
}

/*
 * GROUP_DESC (perf's write_group_desc): u32 nr_groups, then per group its
 * name as a string ("{anon_group}" for {a,b}: perf reads that back as no
 * name), u32 leader's attr index, u32 nr_members.
 */
static void pd_feat_group_desc(struct pd_writer *w, struct pd_buf *b)
{
	if (!w->nr_groups)
		return;
	pd_buf_u32(b, w->nr_groups);
	for (uint32_t i = 0; i < w->nr_groups; i++) {
		pd_buf_str(b, "{anon_group}");
		pd_buf_u32(b, w->groups[i][0]);
		pd_buf_u32(b, w->groups[i][1]);
	}
}

/*
 * HEADER_AUXTRACE (perf's auxtrace_index__write): u64 nr, then nr x {u64
 * file_offset; u64 sz} with sz the record's header.size (48), which perf
 * checks.  Written at close only: a file cut before has no index and perf
 * queues the AUXTRACE records as it meets them in the data.
 */
static void pd_feat_auxtrace(struct pd_writer *w, struct pd_buf *b)
{
	if (!w->nr_aux_idx)
		return;
	pd_buf_u64(b, w->nr_aux_idx);
	for (size_t i = 0; i < w->nr_aux_idx; i++) {
		pd_buf_u64(b, w->aux_idx[i][0]);
		pd_buf_u64(b, w->aux_idx[i][1]);
	}
}

/*
 * Builds the payloads of the features in @want (a mask of ids), ascending
 * by id, into @f (room for PD_FEAT_MAX); returns how many.  TRACING_DATA
 * is not built here (pd_td_bytes()).  A feature whose information is not
 * available is left out, as perf does.
 */
static int pd_build_features(struct pd_writer *w, struct pd_feat *f, bool pipe,
			     uint64_t want)
{
	struct utsname uts;
	bool have_uts = uname(&uts) == 0;
	int n = 0, id;

	for (id = PD_FEAT_BUILD_ID; id <= PD_FEAT_CLOCK_DATA; id++) {
		struct pd_buf *b = &f[n].b;

		if (!(want & FEAT_BIT(id)))
			continue;
		memset(b, 0, sizeof(*b));
		switch (id) {
		case PD_FEAT_BUILD_ID:
			if (!pipe && w->build_ids_len)
				pd_buf_add(b, w->build_ids, w->build_ids_len);
			break;
		case PD_FEAT_COMPRESSED:
			/* version 0, type 1 (zstd), level, ratio, mmap_len */
			if (w->compressed) {
				pd_buf_u32(b, 0);
				pd_buf_u32(b, 1);
				pd_buf_u32(b, w->comp_level);
				pd_buf_u32(b, w->comp_ratio);
				pd_buf_u32(b, w->comp_mmap_len);
			}
			break;
		case PD_FEAT_HOSTNAME:
			if (have_uts)
				pd_buf_str(b, uts.nodename);
			break;
		case PD_FEAT_OSRELEASE:
			if (have_uts)
				pd_buf_str(b, uts.release);
			break;
		case PD_FEAT_VERSION:
			feat_version(b);
			break;
		case PD_FEAT_ARCH:
			if (have_uts)
				pd_buf_str(b, uts.machine);
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
			pd_feat_event_desc(w, b);
			break;
		case PD_FEAT_GROUP_DESC:
			pd_feat_group_desc(w, b);
			break;
		case PD_FEAT_SAMPLE_TIME:
			/* unknown when a pipe starts */
			if (!pipe && (w->first_time || w->last_time)) {
				pd_buf_u64(b, w->first_time);
				pd_buf_u64(b, w->last_time);
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
				pd_feat_auxtrace(w, b);
			break;
		default:
			break;
		}
		if (b->oom) {
			pr_warn("perf.data: out of memory, feature %d left out",
				id);
			pd_buf_free(b);
			continue;
		}
		if (!b->len) {
			pd_buf_free(b);
			continue;
		}
		f[n++].id = id;
	}
	return n;
}

static void pd_free_features(struct pd_feat *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pd_buf_free(&f[i].b);
}

/* ---- TRACING_DATA: the blob set plus formats of other systems ---- */

static bool td_take(size_t len, size_t *pos, uint64_t n)
{
	if (n > len - *pos)
		return false;
	*pos += (size_t)n;
	return true;
}

static bool td_u32(const unsigned char *p, size_t len, size_t *pos, uint32_t *v)
{
	if (4 > len - *pos)
		return false;
	memcpy(v, p + *pos, 4);
	*pos += 4;
	return true;
}

static bool td_u64(const unsigned char *p, size_t len, size_t *pos, uint64_t *v)
{
	if (8 > len - *pos)
		return false;
	memcpy(v, p + *pos, 8);
	*pos += 8;
	return true;
}

static bool td_str(const unsigned char *p, size_t len, size_t *pos)
{
	const unsigned char *nul = memchr(p + *pos, 0, len - *pos);

	if (!nul)
		return false;
	*pos = (size_t)(nul - p) + 1;
	return true;
}

/*
 * Finds, in a tracing data blob (format/tracing_data.c, perf's
 * trace-event-info.c), the u32 count of event systems and the end of the
 * systems (where kallsyms, printk formats and cmdlines follow): formats of
 * other systems are spliced in there.  false if the blob is malformed.
 */
bool pd_td_parse(struct pd_writer *w)
{
	const unsigned char *p = w->tdata;
	size_t len = w->tdata_len, pos = 0;
	uint32_t n, nsys;
	uint64_t sz;

	if (len < 10 || memcmp(p, "\027\010\104tracing", 10))
		return false;
	pos = 10;
	if (!td_str(p, len, &pos) || !td_take(len, &pos, 2 + 4))
		return false;
	if (!td_str(p, len, &pos) || !td_u64(p, len, &pos, &sz) ||
	    !td_take(len, &pos, sz)) /* header_page */
		return false;
	if (!td_str(p, len, &pos) || !td_u64(p, len, &pos, &sz) ||
	    !td_take(len, &pos, sz)) /* header_event */
		return false;
	if (!td_u32(p, len, &pos, &n)) /* ftrace formats */
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!td_u64(p, len, &pos, &sz) || !td_take(len, &pos, sz))
			return false;
	w->td_nsys_at = pos;
	if (!td_u32(p, len, &pos, &nsys))
		return false;
	for (uint32_t i = 0; i < nsys; i++) {
		if (!td_str(p, len, &pos) || !td_u32(p, len, &pos, &n))
			return false;
		for (uint32_t k = 0; k < n; k++)
			if (!td_u64(p, len, &pos, &sz) ||
			    !td_take(len, &pos, sz))
				return false;
	}
	w->td_tail_at = pos;
	w->td_nsys = nsys;
	return true;
}

/* The blob with the added systems after its own ones, as
 * tracing_data_build_ext() lays out its extra formats. */
static int pd_td_compose(struct pd_writer *w)
{
	const unsigned char *p = w->tdata;
	struct pd_buf b = { 0 };

	pd_buf_add(&b, p, w->td_nsys_at);
	pd_buf_u32(&b, w->td_nsys + (uint32_t)w->nr_tpsys);
	pd_buf_add(&b, p + w->td_nsys_at + 4,
		   w->td_tail_at - w->td_nsys_at - 4);
	for (size_t i = 0; i < w->nr_tpsys; i++) {
		const struct pd_tpsys *s = &w->tpsys[i];

		pd_buf_add(&b, s->name, strlen(s->name) + 1);
		pd_buf_u32(&b, (uint32_t)s->nr);
		for (size_t k = 0; k < s->nr; k++) {
			pd_buf_u64(&b, s->len[k]);
			pd_buf_add(&b, s->text[k], s->len[k]);
		}
	}
	pd_buf_add(&b, p + w->td_tail_at, w->tdata_len - w->td_tail_at);
	if (b.oom) {
		pd_buf_free(&b);
		return -ENOMEM;
	}
	free(w->td_full);
	w->td_full = b.p;
	w->td_full_len = b.len;
	return 0;
}

/* TRACING_DATA as it stands (NULL with *len 0 if none; -ENOMEM). */
int pd_td_bytes(struct pd_writer *w, const unsigned char **out, size_t *len)
{
	int ret;

	*out = NULL;
	*len = 0;
	if (!w->has_tdata)
		return 0;
	if (!w->nr_formats) {
		*out = w->tdata;
		*len = w->tdata_len;
		return 0;
	}
	if (!w->td_full) {
		ret = pd_td_compose(w);
		if (ret)
			return ret;
	}
	*out = w->td_full;
	*len = w->td_full_len;
	return 0;
}

void pd_td_stale(struct pd_writer *w)
{
	free(w->td_full);
	w->td_full = NULL;
	w->td_full_len = 0;
}

/* ---- the attr section ---- */

uint64_t pd_attrs_blob_size(const struct pd_writer *w, uint32_t nr)
{
	uint64_t ids = 0;

	for (uint32_t i = 0; i < nr; i++)
		ids += w->attrs[i].nr_ids;
	return ids * 8 + (uint64_t)nr * PD_FILE_ATTR_SIZE;
}

/*
 * The first @nr attrs as an attr section that will lie at file offset
 * @at: their id arrays, then the attrs pointing at them.  @out has
 * pd_attrs_blob_size() bytes; returns the offset of the attrs (the header's
 * attrs.offset).
 */
uint64_t pd_attrs_blob(const struct pd_writer *w, uint32_t nr, uint64_t at,
		       unsigned char *out)
{
	uint64_t ids_off = at;
	unsigned char *p = out;

	for (uint32_t i = 0; i < nr; i++) {
		if (!w->attrs[i].nr_ids)
			continue;
		memcpy(p, w->attrs[i].ids, w->attrs[i].nr_ids * 8u);
		p += w->attrs[i].nr_ids * 8u;
	}
	for (uint32_t i = 0; i < nr; i++) {
		memcpy(p, w->attrs[i].attr, PD_ATTR_SIZE);
		put_u64(p + PD_ATTR_SIZE, ids_off);
		put_u64(p + PD_ATTR_SIZE + 8, w->attrs[i].nr_ids * 8ull);
		ids_off += w->attrs[i].nr_ids * 8ull;
		p += PD_FILE_ATTR_SIZE;
	}
	return at + (uint64_t)(p - out) - (uint64_t)nr * PD_FILE_ATTR_SIZE;
}

bool pd_has_tracepoints(const struct pd_writer *w)
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
uint64_t pd_start_attrs_offset(const struct pd_writer *w)
{
	uint64_t ids = 0;

	for (uint32_t i = 0; i < w->nr_start_attrs; i++)
		ids += w->attrs[i].nr_ids;
	return PD_FILE_HEADER_SIZE + ids * 8;
}

void pd_file_header(const struct pd_writer *w, unsigned char *h,
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

/* Header, the start's attrs with their ids, the front region with every
 * section known now, and the slots (holes); the data starts after them. */
int pd_start_file(struct pd_writer *w)
{
	unsigned char h[PD_FILE_HEADER_SIZE];
	struct pd_feat f[PD_FEAT_MAX];
	const unsigned char *td;
	unsigned char *blob;
	size_t td_len = 0;
	uint64_t blob_len, pos, desc_len = 0, data_off;
	int n, k, ret;

	w->off = 0;
	w->nr_start_attrs = w->nr_attrs;
	blob_len = pd_attrs_blob_size(w, w->nr_attrs);
	blob = malloc(blob_len);
	if (!blob)
		return -ENOMEM;
	w->ck.attrs.off =
		pd_attrs_blob(w, w->nr_attrs, PD_FILE_HEADER_SIZE, blob);
	w->ck.attrs.len = (uint64_t)w->nr_attrs * PD_FILE_ATTR_SIZE;
	w->ck.nr_attrs = w->nr_attrs;
	/* Until the first checkpoint: no data, no features. */
	pd_file_header(w, h, 0, NULL, w->ck.attrs.off, w->nr_attrs);
	ret = pd_append(w, h, sizeof(h));
	if (!ret)
		ret = pd_append(w, blob, blob_len);
	free(blob);
	if (ret)
		return ret;

	/* The front: whatever its size, written once; its first section and
	 * TRACING_DATA at PD_TABLE_ALIGN. */
	ret = pd_append_zeros(w, PD_TABLE_ALIGN);
	if (ret)
		return ret;
	w->front_off = pos = w->off + w->used;
	n = pd_build_features(w, f, false, FEATS_START);
	for (k = 0; k < n && !ret; k++) {
		w->ck.loc[f[k].id] = (struct pd_loc){ pos, f[k].b.len };
		w->ck.bits |= FEAT_BIT(f[k].id);
		if (f[k].id == PD_FEAT_EVENT_DESC)
			desc_len = f[k].b.len;
		ret = pd_append(w, f[k].b.p, f[k].b.len);
		pos += f[k].b.len;
	}
	pd_free_features(f, n);
	if (!ret)
		ret = pd_td_bytes(w, &td, &td_len);
	if (!ret && td_len)
		ret = pd_append_zeros(w, PD_TABLE_ALIGN);
	if (!ret && td_len) {
		pos = w->off + w->used;
		w->ck.loc[PD_FEAT_TRACING_DATA] =
			(struct pd_loc){ pos, td_len };
		w->ck.bits |= FEAT_BIT(PD_FEAT_TRACING_DATA);
		ret = pd_append(w, td, td_len);
		pos += td_len;
	}
	if (!ret)
		ret = pd_flush(w);
	if (ret)
		return ret;
	w->front_end = pos;
	if (w->growth) {
		w->slot_cap = align_up(blob_len + desc_len + td_len +
					       3 * PD_TABLE_ALIGN + w->growth,
				       PD_PAGE);
		w->slot_off[0] = align_up(pos, PD_PAGE);
		w->slot_off[1] = w->slot_off[0] + w->slot_cap;
		data_off = w->slot_off[1] + w->slot_cap;
	} else {
		data_off = align_up(pos, 8);
	}
	/* Holes up to the data: a file system without them gets zeros. */
	w->off = data_off;
	w->desc_dirty = false;
	return 0;
}

/* Pipe header, HEADER_ATTR, HEADER_FEATURE and HEADER_TRACING_DATA
 * records, in the order perf record -o - writes them. */
int pd_start_pipe(struct pd_writer *w)
{
	struct pd_feat f[PD_FEAT_MAX];
	unsigned char h[24];
	uint64_t size, pad;
	uint32_t i;
	int n, k, ret;

	w->off = 0;
	put_u64(h, PD_MAGIC);
	put_u64(h + 8, PD_PIPE_HEADER_SIZE);
	ret = pd_append(w, h, PD_PIPE_HEADER_SIZE);

	for (i = 0; !ret && i < w->nr_attrs; i++) {
		size = 8 + PD_ATTR_SIZE + w->attrs[i].nr_ids * 8ull;
		put_header(h, PD_RECORD_HEADER_ATTR, (uint16_t)size);
		ret = pd_append(w, h, 8);
		if (!ret)
			ret = pd_append(w, w->attrs[i].attr, PD_ATTR_SIZE);
		if (!ret)
			ret = pd_append(w, w->attrs[i].ids,
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
	n = pd_build_features(w, f, true, FEATS_ALL);
	for (k = 0; !ret && k < n; k++) {
		size = align_up(16 + f[k].b.len, 8);
		if (size > PD_MAX_RECORD - 7) {
			pr_warn("perf.data: feature %d is too big for a pipe record, left out",
				f[k].id);
			continue;
		}
		put_header(h, PD_RECORD_HEADER_FEATURE, (uint16_t)size);
		put_u64(h + 8, (uint64_t)f[k].id);
		ret = pd_append(w, h, 16);
		if (!ret)
			ret = pd_append(w, f[k].b.p, f[k].b.len);
		pad = size - 16 - f[k].b.len;
		memset(h, 0, 8);
		if (!ret && pad)
			ret = pd_append(w, h, pad);
	}
	pd_free_features(f, n);

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
		ret = pd_append(w, h, 24);
		if (!ret)
			ret = pd_append(w, a->name, nlen);
		memset(h, 0, 8);
		if (!ret && size - 24 - nlen)
			ret = pd_append(w, h, size - 24 - nlen);
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
		const unsigned char *td;
		size_t td_len;

		ret = pd_td_bytes(w, &td, &td_len);
		size = align_up(td_len, 8);
		put_header(h, PD_RECORD_HEADER_TRACING_DATA, 16);
		put_u32(h + 8, (uint32_t)size);
		put_u32(h + 12, 0);
		if (!ret)
			ret = pd_append(w, h, 16);
		if (!ret)
			ret = pd_append(w, td, td_len);
		memset(h, 0, 8);
		if (!ret && size > td_len)
			ret = pd_append(w, h, size - td_len);
	}
	if (!ret)
		ret = pd_flush(w);
	return ret;
}

/*
 * Writes perf's layout of the features at @at (the end of the data): the
 * table, then the sections.  Sets the bits of what was written in @bits and
 * the end in *end.
 */
int pd_write_features(struct pd_writer *w, uint64_t at, bool write,
		      uint64_t bits[4], uint64_t *end)
{
	struct pd_feat f[PD_FEAT_MAX];
	const unsigned char *td;
	unsigned char *table;
	size_t td_len;
	uint64_t pos;
	/* no tracepoint in the file (a command that emitted no application
	 * event): no tracing data, as perf */
	bool tdata = w->has_tdata && pd_has_tracepoints(w);
	int n, nsec, k, ret;

	memset(bits, 0, 4 * sizeof(uint64_t));
	*end = at;
	ret = pd_td_bytes(w, &td, &td_len);
	if (ret)
		return ret;
	n = pd_build_features(w, f, false, FEATS_ALL);
	nsec = n + (tdata ? 1 : 0);
	if (!nsec) {
		pd_free_features(f, n);
		return 0;
	}
	table = calloc((size_t)nsec, 16);
	if (!table) {
		pd_free_features(f, n);
		return -ENOMEM;
	}
	pos = at + (uint64_t)nsec * 16;
	k = 0;
	if (tdata) {
		put_u64(table, pos);
		put_u64(table + 8, td_len);
		pos += td_len;
		bits[0] |= FEAT_BIT(PD_FEAT_TRACING_DATA);
		k = 1;
	}
	for (int i = 0; i < n; i++, k++) {
		put_u64(table + 16 * k, pos);
		put_u64(table + 16 * k + 8, f[i].b.len);
		pos += f[i].b.len;
		bits[f[i].id / 64] |= 1ull << (f[i].id % 64);
	}

	ret = write ? pd_pwrite_all(w->fd, table, (size_t)nsec * 16, at) : 0;
	pos = at + (uint64_t)nsec * 16;
	if (!write) {
		pos += tdata ? td_len : 0;
		for (int i = 0; i < n; i++)
			pos += f[i].b.len;
	} else if (!ret && tdata) {
		ret = pd_pwrite_all(w->fd, td, td_len, pos);
		pos += td_len;
	}
	for (int i = 0; write && !ret && i < n; i++) {
		ret = pd_pwrite_all(w->fd, f[i].b.p, f[i].b.len, pos);
		pos += f[i].b.len;
	}
	free(table);
	pd_free_features(f, n);
	if (ret)
		return ret;
	*end = pos;
	return 0;
}
