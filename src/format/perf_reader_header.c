// SPDX-License-Identifier: MIT
/*
 * Opening a perf.data (perf_reader.c's overview says how it is read): the
 * file header or the pipe header, the attrs with their ids, the events'
 * names (recorded, or derived as perf's evsel__name() does), the feature
 * sections checked and kept, and the accessors of what was read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/log.h"
#include "../common/load.h"
#include "perf_reader.h"
#include "perf_reader_internal.h"

const char *const prd_feat_names[PRD_FEAT_LAST] = {
	[PRD_FEAT_TRACING_DATA] = "tracing_data",
	[PRD_FEAT_BUILD_ID] = "build_id",
	[PRD_FEAT_HOSTNAME] = "hostname",
	[PRD_FEAT_OSRELEASE] = "osrelease",
	[PRD_FEAT_VERSION] = "version",
	[PRD_FEAT_ARCH] = "arch",
	[PRD_FEAT_NRCPUS] = "nrcpus",
	[PRD_FEAT_CPUDESC] = "cpudesc",
	[PRD_FEAT_CPUID] = "cpuid",
	[PRD_FEAT_TOTAL_MEM] = "total_mem",
	[PRD_FEAT_CMDLINE] = "cmdline",
	[PRD_FEAT_EVENT_DESC] = "event_desc",
	[PRD_FEAT_CPU_TOPOLOGY] = "cpu_topology",
	[PRD_FEAT_NUMA_TOPOLOGY] = "numa_topology",
	[PRD_FEAT_BRANCH_STACK] = "branch_stack",
	[PRD_FEAT_PMU_MAPPINGS] = "pmu_mappings",
	[PRD_FEAT_GROUP_DESC] = "group_desc",
	[PRD_FEAT_AUXTRACE] = "auxtrace",
	[PRD_FEAT_STAT] = "stat",
	[PRD_FEAT_CACHE] = "cache",
	[PRD_FEAT_SAMPLE_TIME] = "sample_time",
	[PRD_FEAT_MEM_TOPOLOGY] = "mem_topology",
	[PRD_FEAT_CLOCKID] = "clockid",
	[PRD_FEAT_DIR_FORMAT] = "dir_format",
	[PRD_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
	[PRD_FEAT_BPF_BTF] = "bpf_btf",
	[PRD_FEAT_COMPRESSED] = "compressed",
	[PRD_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps",
	[PRD_FEAT_CLOCK_DATA] = "clock_data",
	[PRD_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology",
	[PRD_FEAT_PMU_CAPS] = "pmu_caps",
};

PR_HIDDEN const char *prd_feature_name(int feat)
{
	return feat > 0 && feat < PRD_FEAT_LAST ? prd_feat_names[feat] : NULL;
}

/* ---- attrs, ids, names ---- */

/* perf's __evsel__calc_id_pos() and __evsel__calc_is_pos(). */
static int prd_calc_id_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
	       !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
}

static int calc_is_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

static const char *const hw_names[] = {
	"cycles",
	"instructions",
	"cache-references",
	"cache-misses",
	"branches",
	"branch-misses",
	"bus-cycles",
	"stalled-cycles-frontend",
	"stalled-cycles-backend",
	"ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock",	    "task-clock",   "page-faults",  "context-switches",
	"cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy",	    "bpf-output",   "cgroup-switches",
};

static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC",
					   "dTLB",	"iTLB",	     "branch",
					   "node" };

static const char *const cache_ops[][2] = { { "load", "loads" },
					    { "store", "stores" },
					    { "prefetch", "prefetches" } };

/* perf's evsel__add_modifiers(). */
static void add_modifiers(const struct perf_event_attr *a, char *s, size_t n)
{
	size_t r = strlen(s), colon = 0;
	bool guest_default = false;

#define MOD(cond, c)                          \
	do {                                  \
		if (!(cond) && r + 2 < n) {   \
			if (!colon) {         \
				s[r++] = ':'; \
				colon = r;    \
			}                     \
			s[r++] = (c);         \
			s[r] = '\0';          \
		}                             \
	} while (0)
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		MOD(a->exclude_kernel, 'k');
		MOD(a->exclude_user, 'u');
		MOD(a->exclude_hv, 'h');
		guest_default = true;
	}
	for (unsigned int i = 0; i < a->precise_ip && i < 3; i++)
		MOD(0, 'p');
	if (a->precise_ip)
		guest_default = true;
	if (a->exclude_host || a->exclude_guest == guest_default) {
		MOD(a->exclude_host, 'H');
		MOD(a->exclude_guest, 'G');
	}
#undef MOD
}

static const char *tp_lookup(const struct prd_file *f, uint64_t id)
{
	size_t lo = 0, hi = f->nr_tp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->tp[mid].id == id)
			return f->tp[mid].name;
		if (f->tp[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* perf's evsel__name() for an attr without a recorded name. */
static void derive_name(const struct prd_file *f,
			const struct perf_event_attr *a, char *s, size_t n)
{
	uint64_t c = a->config;
	const char *tp;

	s[0] = '\0';
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		snprintf(s, n, "%s",
			 c < sizeof(hw_names) / sizeof(hw_names[0]) ?
				 hw_names[c] :
				 "unknown-hardware");
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_SOFTWARE:
		snprintf(s, n, "%s",
			 c < sizeof(sw_names) / sizeof(sw_names[0]) ?
				 sw_names[c] :
				 "unknown-software");
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_HW_CACHE: {
		uint64_t t = c & 0xff, op = (c >> 8) & 0xff,
			 res = (c >> 16) & 0xff;

		if (t < 7 && op < 3 && res < 2)
			snprintf(s, n, "%s-%s%s", cache_names[t],
				 cache_ops[op][!res], res ? "-misses" : "");
		else
			snprintf(s, n, "invalid-cache");
		add_modifiers(a, s, n);
		break;
	}
	case PERF_TYPE_RAW:
		snprintf(s, n, "raw 0x%llx", ull(c));
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_BREAKPOINT:
		snprintf(s, n, "mem:0x%llx:%s%s%s", ull(a->bp_addr),
			 a->bp_type & 1 ? "r" : "", a->bp_type & 2 ? "w" : "",
			 a->bp_type & 4 ? "x" : "");
		add_modifiers(a, s, n);
		break;
	case PERF_TYPE_TRACEPOINT:
		tp = tp_lookup(f, c);
		snprintf(s, n, "%s", tp ? tp : "unknown tracepoint");
		break;
	default:
		snprintf(s, n, "unknown attr type: %u", a->type);
		break;
	}
}

int prd_set_name(struct attr_priv *ap, const char *name, bool expl)
{
	char *s = strdup(name);

	if (!s)
		return -ENOMEM;
	free(ap->pub.name);
	ap->pub.name = s;
	ap->name_explicit = expl;
	return 0;
}

void prd_rename_derived(struct prd_file *f)
{
	char s[PRD_NAME_MAX];

	for (uint32_t i = 0; i < f->nr_attrs; i++) {
		struct attr_priv *ap = f->attrs[i];

		if (ap->name_explicit)
			continue;
		derive_name(f, &ap->pub.attr, s, sizeof(s));
		if (!ap->pub.name || strcmp(ap->pub.name, s))
			prd_set_name(ap, s, false);
	}
}

/* With several attrs, perf needs the id at one place in every record
 * (evlist__valid_sample_type) and one sample_id_all. */
static const char *attrs_consistent(const struct prd_file *f)
{
	const struct attr_priv *a0;

	if (f->nr_attrs < 2)
		return NULL;
	a0 = f->attrs[0];
	if (a0->id_pos < 0 || a0->is_pos < 0)
		return "several events but the first has no sample id";
	for (uint32_t i = 1; i < f->nr_attrs; i++) {
		const struct attr_priv *a = f->attrs[i];

		if (a->id_pos != a0->id_pos || a->is_pos != a0->is_pos)
			return "events disagree on where the sample id is (non matching sample_type)";
		if (a->pub.attr.sample_id_all != a0->pub.attr.sample_id_all)
			return "events disagree on sample_id_all";
	}
	return NULL;
}

/* Whether one more attr (its first 64 bytes at @attr) keeps the file
 * readable (see attrs_consistent()); NULL or why not. */
const char *prd_attr_fits(const struct prd_file *f, const unsigned char *attr)
{
	uint64_t st = ld64(attr + 24);
	bool sia = (ld64(attr + 40) >> 18) & 1;
	const struct attr_priv *a0;

	if (!f->nr_attrs)
		return NULL;
	a0 = f->attrs[0];
	if (a0->id_pos < 0 || a0->is_pos < 0 || prd_calc_id_pos(st) < 0 ||
	    calc_is_pos(st) < 0)
		return "several events but not all have a sample id";
	if (prd_calc_id_pos(st) != a0->id_pos || calc_is_pos(st) != a0->is_pos)
		return "events disagree on where the sample id is (non matching sample_type)";
	if (sia != a0->pub.attr.sample_id_all)
		return "events disagree on sample_id_all";
	return NULL;
}

/* Adds an attr of @asz bytes (64..sizeof) with @nr_ids ids at @ids. */
int prd_add_attr(struct prd_file *f, const unsigned char *attr, size_t asz,
		 const unsigned char *ids, uint32_t nr_ids)
{
	struct attr_priv *ap;
	char s[PRD_NAME_MAX];
	int ret;

	if (f->nr_attrs >= PRD_MAX_ATTRS)
		return -E2BIG;
	if (f->nr_attrs == f->cap_attrs) {
		uint32_t ncap = f->cap_attrs ? f->cap_attrs * 2 : 8;
		struct attr_priv **na = realloc(f->attrs, ncap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		f->attrs = na;
		f->cap_attrs = ncap;
	}
	ap = calloc(1, sizeof(*ap));
	if (!ap)
		return -ENOMEM;
	memcpy(&ap->pub.attr, attr, asz);
	if (!ap->pub.attr.size)
		ap->pub.attr.size = PRD_ATTR_VER0;
	if (nr_ids) {
		ap->pub.ids = malloc(nr_ids * sizeof(uint64_t));
		if (!ap->pub.ids) {
			free(ap);
			return -ENOMEM;
		}
		memcpy(ap->pub.ids, ids, nr_ids * sizeof(uint64_t));
	}
	ap->pub.nr_ids = nr_ids;
	ap->pub.index = f->nr_attrs;
	ap->id_pos = prd_calc_id_pos(ap->pub.attr.sample_type);
	ap->is_pos = calc_is_pos(ap->pub.attr.sample_type);
	derive_name(f, &ap->pub.attr, s, sizeof(s));
	if (prd_set_name(ap, s, false)) {
		free(ap->pub.ids);
		free(ap);
		return -ENOMEM;
	}
	f->attrs[f->nr_attrs++] = ap;
	for (uint32_t i = 0; i < nr_ids; i++) {
		ret = prd_ids_insert(f, ap->pub.ids[i], ap->pub.index);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- features ---- */

static bool valid_strings(struct cur *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!get_string(c))
			return false;
	return true;
}

/* EVENT_DESC: nr, attr size, then per event attr, nr_ids, name, ids.
 * Names the attrs by position unless they have a name already. */
static bool apply_event_desc(struct prd_file *f, const unsigned char *p,
			     size_t len)
{
	struct cur c = { p, p + len };
	uint32_t nr, asz, nids;
	const char *name;

	if (!get32(&c, &nr) || !get32(&c, &asz) || asz < PRD_ATTR_VER0)
		return false;
	for (uint32_t i = 0; i < nr; i++) {
		if (!take(&c, asz, NULL) || !get32(&c, &nids) ||
		    !(name = get_string(&c)) ||
		    !take(&c, (uint64_t)nids * 8, NULL))
			return false;
		if (i < f->nr_attrs && !f->attrs[i]->name_explicit)
			prd_set_name(f->attrs[i], name, true);
	}
	return true;
}

/* BUILD_ID: records {header, pid, build_id[24], filename}. */
static bool valid_build_ids(const unsigned char *p, size_t len)
{
	struct cur c = { p, p + len };

	while (left(&c)) {
		uint16_t size;

		if (left(&c) < 8)
			return false;
		size = ld16(c.p + 6);
		if (size < 8 + 4 + 24 || !take(&c, size, NULL))
			return false;
	}
	return true;
}

/* Tracepoint names from the formats in TRACING_DATA (trace-event-read.c). */
static int cmp_tp(const void *a, const void *b)
{
	const struct tp_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The value after "key" at a line start in @fmt, as a bounded string. */
static bool fmt_field(const unsigned char *fmt, size_t len, const char *key,
		      char *out, size_t n)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen <= len; i++) {
		size_t j = 0;

		if (i && fmt[i - 1] != '\n')
			continue;
		if (memcmp(fmt + i, key, klen))
			continue;
		i += klen;
		while (i < len && fmt[i] == ' ')
			i++;
		while (i < len && fmt[i] != '\n' && fmt[i] && j + 1 < n)
			out[j++] = (char)fmt[i++];
		out[j] = '\0';
		return j > 0;
	}
	return false;
}

static void clear_tp(struct prd_file *f)
{
	for (size_t i = 0; i < f->nr_tp; i++)
		free(f->tp[i].name);
	free(f->tp);
	f->tp = NULL;
	f->nr_tp = 0;
}

bool prd_parse_tracing_data(struct prd_file *f, const unsigned char *p,
			    size_t len)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r',
						 'a',  'c',  'i',  'n', 'g' };
	struct cur c = { p, p + len };
	const unsigned char *s;
	uint32_t n, nsys;
	uint64_t sz;
	size_t cap = 0;

	clear_tp(f);
	if (!take(&c, sizeof(magic), &s) || memcmp(s, magic, sizeof(magic)))
		return false;
	s = memchr(c.p, 0, left(&c) < 16 ? left(&c) : 16);
	if (!s || !take(&c, (size_t)(s - c.p) + 1, NULL))
		return false;
	if (!take(&c, 2, &s) || s[0] /* big endian */ || !take(&c, 4, NULL))
		return false;
	if (!take(&c, 12, &s) || memcmp(s, "header_page", 12) ||
	    !get64(&c, &sz) || !take(&c, sz, NULL))
		return false;
	if (!take(&c, 13, &s) || memcmp(s, "header_event", 13) ||
	    !get64(&c, &sz) || !take(&c, sz, NULL))
		return false;
	if (!get32(&c, &n))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!get64(&c, &sz) || !take(&c, sz, NULL))
			return false;
	if (!get32(&c, &nsys))
		return false;
	for (uint32_t i = 0; i < nsys; i++) {
		const unsigned char *sys = c.p, *nul;

		nul = memchr(c.p, 0, left(&c));
		if (!nul || !take(&c, (size_t)(nul - c.p) + 1, NULL) ||
		    !get32(&c, &n))
			return false;
		for (uint32_t k = 0; k < n; k++) {
			char name[PRD_NAME_MAX / 2], id[32], full[PRD_NAME_MAX];
			struct tp_name *t;

			if (!get64(&c, &sz) || !take(&c, sz, &s))
				return false;
			if (!fmt_field(s, sz, "name:", name, sizeof(name)) ||
			    !fmt_field(s, sz, "ID:", id, sizeof(id)))
				continue;
			if (f->nr_tp >= PRD_MAX_TP)
				continue;
			if (f->nr_tp == cap) {
				cap = cap ? cap * 2 : 64;
				t = realloc(f->tp, cap * sizeof(*t));
				if (!t)
					return true; /* names only */
				f->tp = t;
			}
			snprintf(full, sizeof(full), "%.*s:%s",
				 (int)(nul - sys) < 100 ? (int)(nul - sys) :
							  100,
				 (const char *)sys, name);
			t = &f->tp[f->nr_tp];
			t->id = strtoull(id, NULL, 10);
			t->name = strdup(full);
			if (t->name)
				f->nr_tp++;
		}
	}
	if (f->nr_tp)
		qsort(f->tp, f->nr_tp, sizeof(*f->tp), cmp_tp);
	return true;
}

/* Checks (and applies) a feature's payload; false if it is malformed. */
bool prd_check_feature(struct prd_file *f, int feat, const unsigned char *p,
		       size_t len)
{
	struct cur c = { p, p + len };
	uint32_t n, k;

	switch (feat) {
	case PRD_FEAT_HOSTNAME:
	case PRD_FEAT_OSRELEASE:
	case PRD_FEAT_VERSION:
	case PRD_FEAT_ARCH:
	case PRD_FEAT_CPUDESC:
	case PRD_FEAT_CPUID:
		return get_string(&c) != NULL;
	case PRD_FEAT_NRCPUS:
	case PRD_FEAT_TOTAL_MEM:
	case PRD_FEAT_CLOCKID:
		return len >= 8;
	case PRD_FEAT_SAMPLE_TIME:
		return len >= 16;
	case PRD_FEAT_CLOCK_DATA:
		return len >= 24;
	case PRD_FEAT_CMDLINE:
		return get32(&c, &n) && valid_strings(&c, n);
	case PRD_FEAT_EVENT_DESC:
		return apply_event_desc(f, p, len);
	case PRD_FEAT_BUILD_ID:
		return valid_build_ids(p, len);
	case PRD_FEAT_PMU_MAPPINGS:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get32(&c, &k) || !get_string(&c))
				return false;
		return true;
	case PRD_FEAT_GROUP_DESC:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get_string(&c) || !get32(&c, &k) || !get32(&c, &k))
				return false;
		return true;
	case PRD_FEAT_CPU_TOPOLOGY:
		/* core and thread sibling lists; the per-cpu ids and the die
		 * lists after them are optional (older perf) */
		return get32(&c, &n) && valid_strings(&c, n) && get32(&c, &n) &&
		       valid_strings(&c, n);
	case PRD_FEAT_NUMA_TOPOLOGY:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get32(&c, &k) || !take(&c, 16, NULL) ||
			    !get_string(&c))
				return false;
		return true;
	case PRD_FEAT_CACHE:
		/* version, count, {level, line, sets, ways, type, size, map} */
		if (!get32(&c, &k) || !get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!take(&c, 16, NULL) || !valid_strings(&c, 3))
				return false;
		return true;
	case PRD_FEAT_MEM_TOPOLOGY: {
		/* version, block size, count, {node, size, bitmap (size, u64
		 * words)} */
		uint64_t nr, bits;

		if (!take(&c, 16, NULL) || !get64(&c, &nr))
			return false;
		for (uint64_t i = 0; i < nr; i++)
			if (!take(&c, 16, NULL) || !get64(&c, &bits) ||
			    !take(&c, (bits / 64 + !!(bits % 64)) * 8, NULL))
				return false;
		return true;
	}
	case PRD_FEAT_CPU_PMU_CAPS:
	case PRD_FEAT_HYBRID_TOPOLOGY:
		/* count, then name/value (or pmu/cpus) string pairs */
		return get32(&c, &n) && n <= UINT32_MAX / 2 &&
		       valid_strings(&c, 2 * n);
	case PRD_FEAT_PMU_CAPS:
		if (!get32(&c, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!get32(&c, &k) || k > UINT32_MAX / 2 ||
			    !valid_strings(&c, 2 * k) || !get_string(&c))
				return false;
		return true;
	case PRD_FEAT_COMPRESSED:
		return len >= 20; /* version, type, level, ratio, mmap_len */
	case PRD_FEAT_DIR_FORMAT:
		return len >= 8;
	case PRD_FEAT_TRACING_DATA: {
		bool ok = prd_parse_tracing_data(f, p, len);

		prd_rename_derived(f);
		return ok;
	}
	default:
		return true;
	}
}

int prd_store_feature(struct prd_file *f, int feat, const unsigned char *p,
		      size_t len)
{
	unsigned char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, p, len);
	f->feat_total -= f->feat[feat].len;
	free(f->feat[feat].p);
	f->feat[feat].p = copy;
	f->feat[feat].len = len;
	f->feat[feat].have = true;
	f->feat_total += len;
	return 0;
}

/* ---- open ---- */

static int read_attrs(struct prd_file *f, uint64_t attr_size,
		      uint64_t attrs_off, uint64_t attrs_size)
{
	uint64_t nr = attrs_size / attr_size, cur = attrs_off;
	unsigned char buf[sizeof(struct perf_event_attr) + 16];

	if (nr > PRD_MAX_ATTRS)
		return prd_damage(f, 24, "%llu attrs (more than %u)", ull(nr),
				  PRD_MAX_ATTRS);
	if (!nr)
		return prd_damage(f, 24, "the attr section holds no event");
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ids_off, ids_size;
		unsigned char *ids = NULL;
		uint32_t asz;
		int ret;

		if (cur > f->file_size || f->file_size - cur < PRD_ATTR_VER0)
			return prd_damage(
				f, cur,
				"attr %llu lies past the end of the file",
				ull(i));
		ret = prd_pread_full(f, buf, PRD_ATTR_VER0, cur);
		if (ret)
			return ret;
		asz = ld32(buf + 4);
		if (!asz)
			asz = PRD_ATTR_VER0;
		if (asz > sizeof(struct perf_event_attr)) {
			pr_err("%s: file offset %#llx: attr %llu has size %u: unsupported attr size (a newer perf ABI; this reader knows up to %zu bytes)",
			       f->name, ull(cur), ull(i), asz,
			       sizeof(struct perf_event_attr));
			return -EPROTO;
		}
		if (asz < PRD_ATTR_VER0)
			return prd_damage(
				f, cur, "attr %llu has size %u (less than %u)",
				ull(i), asz, PRD_ATTR_VER0);
		if (f->file_size - cur < asz + 16u)
			return prd_damage(
				f, cur,
				"attr %llu runs past the end of the file",
				ull(i));
		ret = prd_pread_full(f, buf, asz + 16u, cur);
		if (ret)
			return ret;
		ids_off = ld64(buf + asz);
		ids_size = ld64(buf + asz + 8);
		if (ids_off > f->file_size || ids_size > f->file_size - ids_off)
			return prd_damage(
				f, cur + asz,
				"the ids of attr %llu [%#llx, +%llu bytes) lie past the end of the file (%llu bytes)",
				ull(i), ull(ids_off), ull(ids_size),
				ull(f->file_size));
		if (ids_size / 8 > PRD_MAX_IDS)
			return prd_damage(f, cur + asz,
					  "attr %llu claims %llu ids", ull(i),
					  ull(ids_size / 8));
		if (ids_size / 8) {
			ids = malloc(ids_size / 8 * 8);
			if (!ids)
				return -ENOMEM;
			ret = prd_pread_full(f, ids, ids_size / 8 * 8, ids_off);
			if (!ret)
				ret = prd_add_attr(f, buf, asz, ids,
						   (uint32_t)(ids_size / 8));
		} else {
			ret = prd_add_attr(f, buf, asz, NULL, 0);
		}
		free(ids);
		if (ret)
			return ret;
		cur += asz + 16u;
	}
	return 0;
}

/* The feature table at the end of the data and the payloads it points
 * to.  Damage here is noted (f->features_damaged) but does not stop the open. */
static int read_features(struct prd_file *f)
{
	unsigned int nsec = 0, k = 0;
	uint64_t tbl = f->data_end;
	unsigned char *t;
	int ret = 0;

	for (int i = 0; i < 4; i++)
		nsec += popcount64(f->feat_bits[i]);
	if (!nsec)
		return 0;
	if (tbl > f->file_size || (uint64_t)nsec * 16 > f->file_size - tbl) {
		pr_warn("%s: file offset %#llx: the table of %u feature sections lies past the end of the file (%llu bytes): truncated? The features are ignored, as perf ignores them",
			f->name, ull(tbl), nsec, ull(f->file_size));
		f->features_damaged = true;
		return 0;
	}
	t = malloc((size_t)nsec * 16);
	if (!t)
		return -ENOMEM;
	ret = prd_pread_full(f, t, (size_t)nsec * 16, tbl);
	if (ret) {
		free(t);
		return ret == -EBADMSG ? 0 : ret;
	}
	for (int bit = 0; bit < PRD_FEAT_BITS && !ret; bit++) {
		uint64_t off, size;
		unsigned char *p;

		if (!(f->feat_bits[bit / 64] & (1ull << (bit % 64))))
			continue;
		off = ld64(t + 16 * k);
		size = ld64(t + 16 * k + 8);
		k++;
		if (!bit || bit >= PRD_FEAT_LAST) {
			pr_debug("%s: feature bit %d unknown, skipped", f->name,
				 bit);
			continue;
		}
		if (off > f->file_size || size > f->file_size - off) {
			pr_warn("%s: file offset %#llx: feature %s [%#llx, +%llu bytes) lies past the end of the file (%llu bytes): ignored, as perf ignores it",
				f->name, ull(tbl + 16 * (k - 1)),
				prd_feat_names[bit], ull(off), ull(size),
				ull(f->file_size));
			f->features_damaged = true;
			continue;
		}
		if (size > PRD_FEAT_MAX_LEN ||
		    f->feat_total + size > PRD_FEAT_TOTAL_MAX) {
			pr_warn("%s: feature %s of %llu bytes not loaded (too big)",
				f->name, prd_feat_names[bit], ull(size));
			continue;
		}
		p = malloc(size ? (size_t)size : 1);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ret = prd_pread_full(f, p, (size_t)size, off);
		if (ret) {
			free(p);
			break;
		}
		if (!prd_check_feature(f, bit, p, (size_t)size)) {
			pr_warn("%s: file offset %#llx: feature %s (%llu bytes) is malformed: ignored, as perf ignores it",
				f->name, ull(off), prd_feat_names[bit],
				ull(size));
			f->features_damaged = true;
			free(p);
			continue;
		}
		f->feat[bit].p = p;
		f->feat[bit].len = (size_t)size;
		f->feat[bit].have = true;
		f->feat_total += (size_t)size;
	}
	free(t);
	return ret;
}

/*
 * Seekable input: a read window for @bytes of records, between the
 * smallest one (any record fits) and the largest; a small file keeps the
 * small one.  Only before any record is buffered.
 */
static int window_for(struct prd_file *f, uint64_t bytes)
{
	size_t want = bytes < PRD_BUF_MIN  ? PRD_BUF_MIN :
		      bytes > PRD_BUF_SIZE ? PRD_BUF_SIZE :
					     (size_t)bytes;
	unsigned char *p;

	if (f->stream || want + 8 <= f->cap)
		return 0;
	p = malloc(want + 8);
	if (!p)
		return -ENOMEM;
	memcpy(p, f->buf, f->end);
	free(f->buf);
	f->buf = p;
	f->cap = want + 8;
	return 0;
}

static int open_file_format(struct prd_file *f, uint64_t hdr_size)
{
	unsigned char h[PRD_FILE_HEADER_SIZE];
	uint64_t attr_size, attrs_off, attrs_size;
	const char *bad;
	int ret;

	if (f->stream) {
		pr_err("%s: a perf.data in file format cannot be read from a pipe (it needs seeking); record with -o - for the pipe format",
		       f->name);
		return -ESPIPE;
	}
	if (hdr_size != PRD_FILE_HEADER_SIZE && hdr_size != PRD_FILE_HEADER_V0)
		return prd_damage(f, 8, "header size %llu (expected %u)",
				  ull(hdr_size), PRD_FILE_HEADER_SIZE);
	if (f->file_size < hdr_size)
		return prd_damage(
			f, 0,
			"the file (%llu bytes) is shorter than its header",
			ull(f->file_size));
	ret = prd_pread_full(f, h, (size_t)hdr_size, 0);
	if (ret)
		return ret;
	attr_size = ld64(h + 16);
	attrs_off = ld64(h + 24);
	attrs_size = ld64(h + 32);
	f->data_offset = ld64(h + 40);
	f->data_size = ld64(h + 48);
	if (hdr_size == PRD_FILE_HEADER_SIZE)
		memcpy(f->feat_bits, h + 72, sizeof(f->feat_bits));
	if (!attr_size)
		return prd_damage(
			f, 16,
			"attr_size is 0 (was perf record terminated properly?)");
	if (attrs_off > f->file_size || attrs_size > f->file_size - attrs_off)
		return prd_damage(
			f, 24,
			"the attr section [%#llx, +%llu bytes) lies past the end of the file (%llu bytes)",
			ull(attrs_off), ull(attrs_size), ull(f->file_size));
	if (f->data_offset > f->file_size)
		return prd_damage(
			f, 40,
			"the data section starts at %#llx, past the end of the file (%llu bytes)",
			ull(f->data_offset), ull(f->file_size));
	if (f->data_size > UINT64_MAX - f->data_offset)
		return prd_damage(f, 48, "data size %llu overflows",
				  ull(f->data_size));
	f->data_end = f->data_offset + f->data_size;
	ret = read_attrs(f, attr_size, attrs_off, attrs_size);
	if (ret)
		return ret;
	bad = attrs_consistent(f);
	if (bad) {
		pr_err("%s: %s; perf refuses such a file too", f->name, bad);
		return -EPROTO;
	}
	ret = read_features(f);
	if (ret)
		return ret;
	if (!f->data_size)
		pr_warn("%s: the data size is 0 (was perf record terminated properly?)",
			f->name);
	ret = window_for(f, f->data_size);
	if (ret)
		return ret;
	f->start_off = f->data_offset;
	f->off = f->rd_off = f->data_offset;
	f->limit = f->data_end < f->file_size ? f->data_end : f->file_size;
	f->pos = f->end = (size_t)(f->data_offset & 7);
	f->eof = false;
	return 0;
}

/* Pipe format: the leading HEADER_ATTR records are applied now (peeked,
 * not consumed), so the attrs are known after open as in file mode. */
static int open_pipe_format(struct prd_file *f)
{
	size_t at = 0;
	int ret;

	ret = window_for(f, f->file_size);
	if (ret)
		return ret;
	prd_consume(f, PRD_PIPE_HEADER_SIZE);
	f->start_off = 0;
	f->off = 0;
	f->data_end = UINT64_MAX;
	for (;;) {
		const unsigned char *rec;
		uint32_t size, asz;

		if (prd_fill(f, at + 8))
			break;
		rec = f->buf + f->pos + at;
		size = ld16(rec + 6);
		if (ld32(rec) != PRD_REC_HEADER_ATTR ||
		    size < 8 + PRD_ATTR_VER0 || at + size > f->cap / 2 ||
		    prd_fill(f, at + size))
			break;
		rec = f->buf + f->pos + at;
		asz = ld32(rec + 12);
		if (asz > sizeof(struct perf_event_attr)) {
			pr_err("%s: stream offset %#llx: HEADER_ATTR with attr size %u: unsupported attr size (this reader knows up to %zu bytes)",
			       f->name, ull(at), asz,
			       sizeof(struct perf_event_attr));
			return -EPROTO;
		}
		if ((uintptr_t)rec & 7) {
			memcpy(f->scratch, rec, size);
			rec = f->scratch;
		}
		f->quiet = true;
		ret = prd_apply_header_attr(f, rec, size, at);
		f->quiet = false;
		if (ret)
			break;
		at += size;
		f->attr_applied_end = at;
	}
	memset(&f->st, 0, sizeof(f->st));
	return 0;
}

static void free_file(struct prd_file *f)
{
	if (!f)
		return;
	prd_queue_reset(f);
	free(f->cur_chunk);
	while (f->spare) {
		struct chunk *c = f->spare;

		f->spare = c->next;
		free(c);
	}
	free(f->q);
	free(f->qtmp);
	free(f->zbuf);
	ZSTD_freeDStream(f->zstream);
	for (uint32_t i = 0; i < f->nr_attrs; i++) {
		free(f->attrs[i]->pub.name);
		free(f->attrs[i]->pub.ids);
		free(f->attrs[i]);
	}
	free(f->attrs);
	free(f->ht_id);
	free(f->ht_val);
	free(f->ht_period);
	for (int i = 0; i < PRD_FEAT_BITS; i++)
		free(f->feat[i].p);
	free(f->tdata);
	clear_tp(f);
	free(f->buf);
	free(f->scratch);
	if (f->own_fd && f->fd >= 0)
		close(f->fd);
	free(f->name);
	free(f);
}

PR_HIDDEN int prd_open_fd(int fd, const char *name, bool stream,
			  struct prd_file **out)
{
	struct prd_file *f;
	struct stat st;
	uint64_t magic, hsize;
	int ret;

	if (!out || fd < 0)
		return -EINVAL;
	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->name = strdup(name ? name : "perf.data");
	f->scratch = aligned_alloc(8, PRD_MAX_RECORD + 1);
	f->qlimit = PRD_QUEUE_DEFAULT;
	f->qmax = PRD_QUEUE_DEFAULT / 64;
	f->q_sorted = true;
	if (!f->name || !f->scratch) {
		free_file(f);
		return -ENOMEM;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		pr_err("%s: %s", f->name, strerror(-ret));
		free_file(f);
		return ret;
	}
	f->stream = stream || !S_ISREG(st.st_mode);
	/* A file's window grows to what it holds (window_for()). */
	f->cap = (f->stream ? PRD_BUF_SIZE : PRD_BUF_MIN) + 8;
	if (!f->stream) {
		f->file_size = (uint64_t)st.st_size;
		f->limit = f->file_size;
	}
	f->buf = malloc(f->cap);
	if (!f->buf) {
		free_file(f);
		return -ENOMEM;
	}

	ret = prd_fill(f, 16);
	if (ret) {
		if (ret > 0) {
			pr_err("%s: %s (%zu bytes): not a perf.data file",
			       f->name,
			       f->end == f->pos ? "empty input" : "too short",
			       f->end - f->pos);
			ret = -EBADMSG;
		} else {
			ret = prd_io_error(f, 0, ret);
		}
		free_file(f);
		return ret;
	}
	magic = ld64(f->buf + f->pos);
	hsize = ld64(f->buf + f->pos + 8);
	if (magic != PRD_MAGIC) {
		if (magic == PRD_MAGIC_SWAPPED) {
			pr_err("%s: a perf.data of the other byte order (big endian): not supported",
			       f->name);
			ret = -EPROTO;
		} else if (magic == PRD_MAGIC_V1) {
			pr_err("%s: a version 1 perf.data (\"PERFFILE\"): not supported, only version 2 (\"PERFILE2\")",
			       f->name);
			ret = -EPROTO;
		} else if (!memcmp(f->buf + f->pos, "PERFILE", 7)) {
			pr_err("%s: perf.data version '%c' (\"PERFILE%c\"): unknown, only version 2 (\"PERFILE2\")",
			       f->name, f->buf[f->pos + 7], f->buf[f->pos + 7]);
			ret = -EPROTO;
		} else {
			pr_err("%s: not a perf.data file (bad magic %#llx)",
			       f->name, ull(magic));
			ret = -EBADMSG;
		}
		free_file(f);
		return ret;
	}
	if (hsize == PRD_PIPE_HEADER_SIZE) {
		f->pipe = true;
		ret = open_pipe_format(f);
	} else {
		ret = open_file_format(f, hsize);
	}
	if (ret) {
		free_file(f);
		return ret;
	}
	memset(&f->st, 0, sizeof(f->st));
	*out = f;
	return 0;
}

PR_HIDDEN int prd_open(const char *path, struct prd_file **out)
{
	struct prd_file *f;
	int fd, ret;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	if (!strcmp(path, "-"))
		return prd_open_fd(STDIN_FILENO, "stdin", false, out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno; /* the caller says which file */
	ret = prd_open_fd(fd, path, false, &f);
	if (ret) {
		close(fd);
		return ret;
	}
	f->own_fd = true;
	*out = f;
	return 0;
}

PR_HIDDEN void prd_close(struct prd_file *f)
{
	free_file(f);
}

/* ---- accessors ---- */

PR_HIDDEN bool prd_is_pipe(const struct prd_file *f)
{
	return f && f->pipe;
}

PR_HIDDEN uint32_t prd_nr_attrs(const struct prd_file *f)
{
	return f ? f->nr_attrs : 0;
}

PR_HIDDEN const struct prd_attr *prd_attr(const struct prd_file *f, uint32_t i)
{
	return f && i < f->nr_attrs ? &f->attrs[i]->pub : NULL;
}

PR_HIDDEN const struct prd_attr *prd_attr_by_id(const struct prd_file *f,
						uint64_t id)
{
	struct attr_priv *a;

	if (!f || !f->nr_attrs)
		return NULL;
	if (f->nr_attrs == 1)
		return &f->attrs[0]->pub;
	a = prd_ids_find(f, id);
	return a ? &a->pub : NULL;
}

PR_HIDDEN uint64_t prd_attr_lost_samples(const struct prd_file *f, uint32_t i)
{
	return f && i < f->nr_attrs ? f->attrs[i]->lost_samples : 0;
}

PR_HIDDEN const void *prd_feature(const struct prd_file *f, int feat,
				  size_t *len)
{
	if (!f || feat < 0 || feat >= PRD_FEAT_BITS)
		return NULL;
	/* Pipe mode carries tracing data as a record, not a feature. */
	if (feat == PRD_FEAT_TRACING_DATA && !f->feat[feat].have && f->tdata) {
		if (len)
			*len = f->tdata_len;
		return f->tdata;
	}
	if (!f->feat[feat].have)
		return NULL;
	if (len)
		*len = f->feat[feat].len;
	return f->feat[feat].p;
}

PR_HIDDEN const char *prd_feature_string(const struct prd_file *f, int feat)
{
	size_t len;
	const unsigned char *p = prd_feature(f, feat, &len);
	struct cur c;

	if (!p)
		return NULL;
	c.p = p;
	c.e = p + len;
	return get_string(&c);
}

PR_HIDDEN bool prd_has_feature(const struct prd_file *f, int feat)
{
	if (!f || feat < 0 || feat >= PRD_FEAT_BITS)
		return false;
	if (f->feat[feat].have)
		return true;
	return !f->pipe && (f->feat_bits[feat / 64] >> (feat % 64)) & 1;
}

PR_HIDDEN int prd_fd(const struct prd_file *f)
{
	return f ? f->fd : -1;
}

PR_HIDDEN uint64_t prd_data_offset(const struct prd_file *f)
{
	return f && !f->pipe ? f->data_offset : 0;
}

PR_HIDDEN const char *prd_tracepoint_name(const struct prd_file *f, uint64_t id)
{
	return f ? tp_lookup(f, id) : NULL;
}

PR_HIDDEN void prd_set_queue_limit(struct prd_file *f, size_t bytes)
{
	if (!f)
		return;
	if (bytes < PRD_MAX_RECORD)
		bytes = PRD_MAX_RECORD;
	f->qlimit = bytes;
	f->qmax = bytes / 64 > 1024 ? bytes / 64 : 1024;
}
