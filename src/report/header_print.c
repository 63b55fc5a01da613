// SPDX-License-Identifier: MIT
/*
 * perf.data's header block as perf 6.1 prints it (perf script --header,
 * perf report --header-only; -I for the topology in full).  perf report
 * -T's per-thread counter table is thread_stats.c.
 *
 * perf reads each feature section into its "env" when it opens the file
 * and prints from there; a section it could not read leaves the env at
 * its defaults (a NULL string prints "(null)", counts 0).  Here each
 * section is parsed while it is printed, bounded by its length, and a
 * short or malformed one prints those same defaults.  Nothing in a
 * section is trusted: counts are checked against the bytes left before
 * anything is allocated, strings end at their length.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "../common/load.h"
#include "../common/log.h"
#include "../format/perf_reader.h"
#include "header_print.h"

/* ---- a bounded cursor over one section ---- */

struct cur {
	const unsigned char *p;
	size_t len, off;
	bool bad; /* a read went past the end: every later read fails */
};

static bool rd(struct cur *c, void *dst, size_t n)
{
	if (c->bad || n > c->len - c->off) {
		c->bad = true;
		return false;
	}
	memcpy(dst, c->p + c->off, n);
	c->off += n;
	return true;
}

static bool rd32(struct cur *c, uint32_t *v)
{
	return rd(c, v, 4);
}

static bool rd64(struct cur *c, uint64_t *v)
{
	return rd(c, v, 8);
}

/* perf's do_read_string: a u32 length, then that many bytes (the string,
 * NUL-padded).  Returns a pointer into the section and the string's
 * length (up to its first NUL or the length), or NULL. */
static const char *rdstr(struct cur *c, size_t *slen)
{
	uint32_t len;
	const char *s;

	if (!rd32(c, &len))
		return NULL;
	if (len > c->len - c->off) {
		c->bad = true;
		return NULL;
	}
	s = (const char *)c->p + c->off;
	c->off += len;
	*slen = strnlen(s, len);
	return s;
}

/* perf's string_size(): how perf accounts a string in CPU_TOPOLOGY. */
static uint64_t string_size(size_t slen)
{
	return ((slen + 1 + 63) & ~(uint64_t)63) + 4;
}

/* ---- perf_event_attr as perf_event_attr__fprintf (6.1) ---- */

struct bit_name {
	uint64_t bit;
	const char *name;
};

static const struct bit_name sample_type_names[] = {
	{ 1u << 0, "IP" },
	{ 1u << 1, "TID" },
	{ 1u << 2, "TIME" },
	{ 1u << 3, "ADDR" },
	{ 1u << 4, "READ" },
	{ 1u << 5, "CALLCHAIN" },
	{ 1u << 6, "ID" },
	{ 1u << 7, "CPU" },
	{ 1u << 8, "PERIOD" },
	{ 1u << 9, "STREAM_ID" },
	{ 1u << 10, "RAW" },
	{ 1u << 11, "BRANCH_STACK" },
	{ 1u << 12, "REGS_USER" },
	{ 1u << 13, "STACK_USER" },
	{ 1u << 16, "IDENTIFIER" },
	{ 1u << 18, "REGS_INTR" },
	{ 1u << 15, "DATA_SRC" },
	{ 1u << 14, "WEIGHT" },
	{ 1u << 19, "PHYS_ADDR" },
	{ 1u << 20, "AUX" },
	{ 1u << 21, "CGROUP" },
	{ 1u << 22, "DATA_PAGE_SIZE" },
	{ 1u << 23, "CODE_PAGE_SIZE" },
	{ 1u << 24, "WEIGHT_STRUCT" },
	{ 0, NULL },
};

static const struct bit_name branch_type_names[] = {
	{ 1u << 0, "USER" },	   { 1u << 1, "KERNEL" },
	{ 1u << 2, "HV" },	   { 1u << 3, "ANY" },
	{ 1u << 4, "ANY_CALL" },   { 1u << 5, "ANY_RETURN" },
	{ 1u << 6, "IND_CALL" },   { 1u << 7, "ABORT_TX" },
	{ 1u << 8, "IN_TX" },	   { 1u << 9, "NO_TX" },
	{ 1u << 10, "COND" },	   { 1u << 11, "CALL_STACK" },
	{ 1u << 12, "IND_JUMP" },  { 1u << 13, "CALL" },
	{ 1u << 14, "NO_FLAGS" },  { 1u << 15, "NO_CYCLES" },
	{ 1u << 16, "TYPE_SAVE" }, { 1u << 17, "HW_INDEX" },
	{ 1u << 18, "PRIV_SAVE" }, { 0, NULL },
};

static const struct bit_name read_format_names[] = {
	{ 1u << 0, "TOTAL_TIME_ENABLED" },
	{ 1u << 1, "TOTAL_TIME_RUNNING" },
	{ 1u << 2, "ID" },
	{ 1u << 3, "GROUP" },
	{ 1u << 4, "LOST" },
	{ 0, NULL },
};

/* perf 6.1's limits: PERF_SAMPLE_MAX, PERF_FORMAT_MAX,
 * PERF_SAMPLE_BRANCH_MAX; the attr's flags word knows 38 bits. */
#define SAMPLE_MAX_61 (1ull << 25)
#define FORMAT_MAX_61 (1ull << 5)
#define BRANCH_MAX_61 (1ull << 19)
#define ATTR_SIZE_61 128

static void put_bits(FILE *out, const char *name, uint64_t v,
		     const struct bit_name *bits)
{
	bool first = true;

	if (!v)
		return;
	fprintf(out, ", %s = ", name);
	for (int i = 0; bits[i].name; i++) {
		if (v & bits[i].bit) {
			fprintf(out, "%s%s", first ? "" : "|", bits[i].name);
			first = false;
		}
	}
}

static void put_u(FILE *out, const char *name, uint64_t v)
{
	if (v)
		fprintf(out, ", %s = %" PRIu64, name, v);
}

static void put_x(FILE *out, const char *name, uint64_t v)
{
	if (v)
		fprintf(out, ", %s = %#" PRIx64, name, v);
}

/* The flag bits of the attr's u64 at offset 40, in perf's print order. */
static const char *const flag_names[] = {
	"disabled",
	"inherit",
	"pinned",
	"exclusive",
	"exclude_user",
	"exclude_kernel",
	"exclude_hv",
	"exclude_idle",
	"mmap",
	"comm",
	"freq",
	"inherit_stat",
	"enable_on_exec",
	"task",
	"watermark",
	"precise_ip", /* two bits */
	NULL,
	"mmap_data",
	"sample_id_all",
	"exclude_host",
	"exclude_guest",
	"exclude_callchain_kernel",
	"exclude_callchain_user",
	"mmap2",
	"comm_exec",
	"use_clockid",
	"context_switch",
	"write_backward",
	"namespaces",
	"ksymbol",
	"bpf_event",
	"aux_output",
	"cgroup",
	"text_poke",
	"build_id",
	"inherit_thread",
	"remove_on_exec",
	"sigtrap",
};

/* @a: ATTR_SIZE_61 bytes (the file's attr, zero-extended or cut). */
static void put_attr(FILE *out, const unsigned char *a)
{
	uint64_t flags = ld64(a + 40);

	put_u(out, "type", ld32(a + 0));
	put_u(out, "size", ld32(a + 4));
	put_x(out, "config", ld64(a + 8));
	put_u(out, "{ sample_period, sample_freq }", ld64(a + 16));
	put_bits(out, "sample_type", ld64(a + 24), sample_type_names);
	put_bits(out, "read_format", ld64(a + 32), read_format_names);
	for (int b = 0; b < 38; b++) {
		if (!flag_names[b])
			continue;
		if (b == 15)
			put_u(out, "precise_ip", (flags >> 15) & 3);
		else
			put_u(out, flag_names[b], (flags >> b) & 1);
	}
	put_u(out, "{ wakeup_events, wakeup_watermark }", ld32(a + 48));
	put_u(out, "bp_type", ld32(a + 52));
	put_x(out, "{ bp_addr, config1 }", ld64(a + 56));
	put_x(out, "{ bp_len, config2 }", ld64(a + 64));
	put_bits(out, "branch_sample_type", ld64(a + 72), branch_type_names);
	put_x(out, "sample_regs_user", ld64(a + 80));
	put_u(out, "sample_stack_user", ld32(a + 88));
	if (ld32(a + 92))
		fprintf(out, ", clockid = %" PRId32, (int32_t)ld32(a + 92));
	put_x(out, "sample_regs_intr", ld64(a + 96));
	put_u(out, "aux_watermark", ld32(a + 104));
	put_u(out, "sample_max_stack", ld16(a + 108));
	put_u(out, "aux_sample_size", ld32(a + 112));
	put_u(out, "sig_data", ld64(a + 120));
}

/* perf_attr_check(): what perf 6.1 refuses in an EVENT_DESC attr. */
static bool attr_known(const unsigned char *a)
{
	uint64_t st = ld64(a + 24);

	if ((ld64(a + 40) >> 38) || ld16(a + 110) || ld32(a + 116))
		return false;
	if (st & ~(SAMPLE_MAX_61 - 1))
		return false;
	if (ld64(a + 32) & ~(FORMAT_MAX_61 - 1))
		return false;
	if ((st & (1u << 11)) && (ld64(a + 72) & ~(BRANCH_MAX_61 - 1)))
		return false;
	return true;
}

/*
 * EVENT_DESC: u32 events, u32 attr size, then per event the attr, u32
 * ids, the name and the ids.  perf reads it whole before printing any
 * (a damaged one prints one line), and stops at an attr whose size
 * field is 0 (its list terminator).
 */
static void print_event_desc(struct cur *c, FILE *out)
{
	uint32_t nre, sz;
	size_t start;
	bool ok = rd32(c, &nre) && rd32(c, &sz);

	/* Pass 1: validate. */
	start = c->off;
	for (uint32_t i = 0; ok && i < nre; i++) {
		unsigned char a[ATTR_SIZE_61] = { 0 };
		uint32_t nr;
		size_t slen;

		if (sz > c->len - c->off) {
			ok = false;
			break;
		}
		memcpy(a, c->p + c->off, sz < sizeof(a) ? sz : sizeof(a));
		c->off += sz;
		ok = attr_known(a) && rd32(c, &nr) && rdstr(c, &slen) &&
		     (uint64_t)nr * 8 <= c->len - c->off;
		if (ok)
			c->off += (size_t)nr * 8;
	}
	if (!ok) {
		fprintf(out, "# event desc: not available or unable to read\n");
		return;
	}
	c->off = start;
	for (uint32_t i = 0; i < nre; i++) {
		unsigned char a[ATTR_SIZE_61] = { 0 };
		uint32_t nr = 0;
		size_t slen = 0;
		const char *name;

		memcpy(a, c->p + c->off, sz < sizeof(a) ? sz : sizeof(a));
		c->off += sz;
		rd32(c, &nr);
		name = rdstr(c, &slen);
		if (!ld32(a + 4))
			break;
		fprintf(out, "# event : name = %.*s, ", (int)slen, name);
		if (nr) {
			fprintf(out, ", id = {");
			for (uint32_t j = 0; j < nr; j++) {
				uint64_t id = 0;

				rd64(c, &id);
				fprintf(out, "%s %" PRIu64, j ? "," : "", id);
			}
			fprintf(out, " }");
		}
		put_attr(out, a);
		fputc('\n', out);
	}
}

/* ---- CPU lists (NUMA_TOPOLOGY): parsed and printed as perf's map ---- */

#define CPU_LIST_MAX 65536

/* Sets bits @lo..@hi, a word at a time where it can. */
static void set_range(uint64_t *bits, uint64_t lo, uint64_t hi)
{
	while (lo <= hi) {
		if (lo % 64 == 0 && hi - lo >= 63) {
			bits[lo / 64] = ~0ull;
			lo += 64;
		} else {
			bits[lo / 64] |= 1ull << (lo % 64);
			lo++;
		}
	}
}

/* "0-3,8" into @bits (zeroed below *@top, the highest CPU + 1 set);
 * false on anything perf_cpu_map__new() refuses. */
static bool parse_cpu_list(const char *s, size_t len, uint64_t *bits,
			   uint64_t *top)
{
	size_t i = 0;

	*top = 0;

	while (i < len) {
		unsigned long lo = 0, hi;
		size_t d = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9' && d < 7) {
			lo = lo * 10 + (unsigned long)(s[i++] - '0');
			d++;
		}
		if (!d || lo >= CPU_LIST_MAX)
			return false;
		hi = lo;
		if (i < len && s[i] == '-') {
			i++;
			hi = 0;
			d = 0;
			while (i < len && s[i] >= '0' && s[i] <= '9' && d < 7) {
				hi = hi * 10 + (unsigned long)(s[i++] - '0');
				d++;
			}
			if (!d || hi >= CPU_LIST_MAX || hi < lo)
				return false;
		}
		set_range(bits, lo, hi);
		if (hi + 1 > *top)
			*top = hi + 1;
		if (i < len && s[i] != ',')
			return false;
		i++;
	}
	return true;
}

/* perf's bitmap_scnprintf: runs as "a-b", singles as "a", comma between,
 * cut at @size - 1 characters. */
static void bits_to_ranges(const uint64_t *bits, uint64_t nbits, char *buf,
			   size_t size)
{
	size_t n = 0;
	bool first = true;
	uint64_t cur = 0;

	buf[0] = '\0';
	while (cur < nbits) {
		uint64_t lo, hi;

		if (cur % 64 == 0 && !bits[cur / 64]) {
			cur += 64; /* a word of clear bits */
			continue;
		}
		if (!(bits[cur / 64] >> (cur % 64) & 1)) {
			cur++;
			continue;
		}
		lo = hi = cur;
		while (hi + 1 < nbits) {
			uint64_t nx = hi + 1;

			if (nx % 64 == 0 && nbits - nx >= 64 &&
			    bits[nx / 64] == ~0ull)
				hi += 64; /* a word of set bits */
			else if (bits[nx / 64] >> (nx % 64) & 1)
				hi++;
			else
				break;
		}
		if (n < size) {
			int w = lo == hi ? snprintf(buf + n, size - n,
						    "%s%" PRIu64,
						    first ? "" : ",", lo) :
					   snprintf(buf + n, size - n,
						    "%s%" PRIu64 "-%" PRIu64,
						    first ? "" : ",", lo, hi);
			n += w > 0 ? (size_t)w : 0;
			if (n >= size)
				n = size - 1;
		}
		first = false;
		cur = hi + 1;
	}
}

/* ---- the sections ---- */

static const char *str_or_null(struct cur *c, size_t *slen)
{
	const char *s = rdstr(c, slen);

	if (!s) {
		*slen = 6;
		return "(null)";
	}
	return s;
}

/* NRCPUS' avail count and ARCH, which CPU_TOPOLOGY reads. */
static uint32_t nr_cpus_avail(const struct prd_file *f)
{
	size_t len;
	const unsigned char *p = f ? prd_feature(f, PRD_FEAT_NRCPUS, &len) :
				     NULL;
	uint32_t v;

	if (!p || len < 8)
		return 0;
	memcpy(&v, p, 4);
	return v;
}

static bool arch_skips_socket_check(const struct prd_file *f)
{
	size_t len, slen;
	const unsigned char *p = f ? prd_feature(f, PRD_FEAT_ARCH, &len) : NULL;
	struct cur c = { p, p ? len : 0, 0, false };
	const char *a = p ? rdstr(&c, &slen) : NULL;

	return a && ((slen >= 4 && !strncmp(a, "s390", 4)) ||
		     (slen >= 7 && !strncmp(a, "aarch64", 7)));
}

static void print_cpu_topology(const struct prd_file *f, struct cur *c,
			       FILE *out)
{
	uint32_t cpu_nr = nr_cpus_avail(f), nr_cores = 0, nr_threads = 0,
		 nr_dies = 0, v;
	size_t cores_at = 0, threads_at = 0, dies_at = 0, slen;
	uint64_t size = 4;
	bool have_cpu = false, have_dies = false, dies_named = false, ok;
	size_t cpus_at = 0, die_ids_at = 0;

	/* Pass 1: what perf's process_cpu_topology() keeps. */
	ok = rd32(c, &nr_cores);
	cores_at = c->off;
	for (uint32_t i = 0; ok && i < nr_cores; i++) {
		ok = rdstr(c, &slen) != NULL;
		size += string_size(slen);
	}
	if (!ok)
		nr_cores = 0;
	ok = ok && rd32(c, &nr_threads);
	size += 4;
	threads_at = c->off;
	for (uint32_t i = 0; ok && i < nr_threads; i++) {
		ok = rdstr(c, &slen) != NULL;
		size += string_size(slen);
	}
	if (!ok)
		nr_threads = 0;
	if (ok && c->len > size) {
		bool check = !arch_skips_socket_check(f);

		have_cpu = true;
		cpus_at = c->off;
		for (uint32_t i = 0; have_cpu && i < cpu_nr; i++) {
			uint32_t socket;

			have_cpu = rd32(c, &v) && rd32(c, &socket) &&
				   !(check && socket != UINT32_MAX &&
				     socket > cpu_nr);
			size += 8;
		}
		if (have_cpu && c->len > size && rd32(c, &nr_dies)) {
			have_dies = true;
			dies_at = c->off;
			for (uint32_t i = 0; have_dies && i < nr_dies; i++)
				have_dies = rdstr(c, &slen) != NULL;
			dies_named = have_dies;
			die_ids_at = c->off;
			for (uint32_t i = 0; have_dies && i < cpu_nr; i++)
				have_dies = rd32(c, &v);
			if (!have_dies)
				have_cpu = false;
		}
	}
	/* Pass 2: print. */
	c->bad = false;
	c->off = cores_at;
	for (uint32_t i = 0; i < nr_cores; i++) {
		const char *s = rdstr(c, &slen);

		fprintf(out, "# sibling sockets : %.*s\n", (int)slen, s);
	}
	if (nr_dies) {
		c->off = dies_at;
		for (uint32_t i = 0; i < nr_dies && dies_named; i++) {
			const char *s = rdstr(c, &slen);

			fprintf(out, "# sibling dies    : %.*s\n", (int)slen,
				s);
		}
	}
	c->off = threads_at;
	for (uint32_t i = 0; i < nr_threads; i++) {
		const char *s = rdstr(c, &slen);

		fprintf(out, "# sibling threads : %.*s\n", (int)slen, s);
	}
	if (!have_cpu) {
		fprintf(out,
			nr_dies ?
				"# Core ID, Die ID and Socket ID information is not available\n" :
				"# Core ID and Socket ID information is not available\n");
		return;
	}
	for (uint32_t i = 0; i < cpu_nr; i++) {
		uint32_t core = 0, socket = 0, die = 0;

		c->off = cpus_at + (size_t)i * 8;
		rd32(c, &core);
		rd32(c, &socket);
		if (nr_dies) {
			c->off = die_ids_at + (size_t)i * 4;
			rd32(c, &die);
			fprintf(out,
				"# CPU %d: Core ID %d, Die ID %d, Socket ID %d\n",
				(int)i, (int)core, (int)die, (int)socket);
		} else {
			fprintf(out, "# CPU %d: Core ID %d, Socket ID %d\n",
				(int)i, (int)core, (int)socket);
		}
	}
}

static void print_numa_topology(struct cur *c, FILE *out)
{
	uint32_t nr;
	size_t start, slen;
	bool ok = rd32(c, &nr);
	uint64_t *bits = calloc(CPU_LIST_MAX / 64, 8);

	if (!bits)
		return;
	start = c->off;
	/* 24 bytes at least per node: counts are checked before printing. */
	for (uint32_t i = 0; ok && i < nr; i++) {
		uint32_t node = 0;
		uint64_t total = 0, free_kb = 0;
		const char *s;
		uint64_t top = 0;

		ok = rd32(c, &node) && rd64(c, &total) && rd64(c, &free_kb) &&
		     (s = rdstr(c, &slen)) != NULL && slen &&
		     parse_cpu_list(s, slen, bits, &top);
		memset(bits, 0, (size_t)(top + 63) / 64 * 8);
	}
	c->off = start;
	for (uint32_t i = 0; ok && i < nr; i++) {
		uint32_t node = 0;
		uint64_t total = 0, free_kb = 0;
		const char *s;
		char buf[1024];
		uint64_t top = 0;

		rd32(c, &node);
		rd64(c, &total);
		rd64(c, &free_kb);
		s = rdstr(c, &slen);
		parse_cpu_list(s, slen, bits, &top);
		bits_to_ranges(bits, top, buf, sizeof(buf));
		memset(bits, 0, (size_t)(top + 63) / 64 * 8);
		fprintf(out,
			"# node%u meminfo  : total = %" PRIu64
			" kB, free = %" PRIu64 " kB\n",
			node, total, free_kb);
		fprintf(out, "# node%u cpu list : %s\n", node, buf);
	}
	free(bits);
}

static void print_pmu_mappings(struct cur *c, FILE *out)
{
	uint32_t n, type = 0;
	size_t start, slen;
	bool ok;

	if (!rd32(c, &n) || !n) {
		fprintf(out, "# pmu mappings: not available\n");
		return;
	}
	start = c->off;
	ok = true;
	for (uint32_t i = 0; ok && i < n; i++)
		ok = rd32(c, &type) && rdstr(c, &slen);
	if (!ok) {
		fprintf(out, "# pmu mappings: unable to read\n");
		return;
	}
	c->off = start;
	for (uint32_t i = 0; i < n; i++) {
		const char *s;

		rd32(c, &type);
		s = rdstr(c, &slen);
		fprintf(out, "%s%.*s = %" PRIu32,
			i ? ", " : "# pmu mappings: ", (int)slen, s, type);
	}
	fputc('\n', out);
}

/* GROUP_DESC: {name, leader index, members} per group, printed over the
 * file's events as perf rebuilds its groups (nothing if inconsistent). */
static void print_group_desc(const struct prd_file *f, struct cur *c, FILE *out)
{
	uint32_t nr_groups, nattr = f ? prd_nr_attrs(f) : 0;
	size_t start, slen;
	bool ok = rd32(c, &nr_groups);
	uint32_t g = 0, left = 0;

	if (!ok || !nr_groups || !nattr)
		return;
	start = c->off;
	for (uint32_t i = 0; ok && i < nr_groups; i++) {
		uint32_t v;

		ok = rdstr(c, &slen) && rd32(c, &v) && rd32(c, &v);
	}
	if (!ok)
		return;
	/* Validate the way perf does before printing. */
	c->off = start;
	for (uint32_t i = 0; i < nattr; i++) {
		uint32_t lead = 0, members = 0;
		size_t save = c->off;

		if (g < nr_groups) {
			rdstr(c, &slen);
			rd32(c, &lead);
			rd32(c, &members);
			if (lead == i) {
				if (left)
					return;
				left = members ? members - 1 : UINT32_MAX;
				g++;
				continue;
			}
			c->off = save;
		}
		if (left)
			left--;
	}
	if (g != nr_groups || left)
		return;
	c->off = start;
	g = 0;
	left = 0;
	for (uint32_t i = 0; i < nattr; i++) {
		const struct prd_attr *a = prd_attr(f, i);
		const char *name = a && a->name ? a->name : "";
		uint32_t lead = UINT32_MAX, members = 0;
		const char *gname = NULL;
		size_t save = c->off;

		if (g < nr_groups) {
			gname = rdstr(c, &slen);
			rd32(c, &lead);
			rd32(c, &members);
			if (lead != i)
				c->off = save;
		}
		if (lead == i) {
			g++;
			if (members > 1) {
				bool anon = slen == 12 &&
					    !memcmp(gname, "{anon_group}", 12);

				fprintf(out, "# group: %.*s{%s",
					anon ? 0 : (int)slen, gname, name);
				left = members - 1;
			}
		} else if (left) {
			fprintf(out, ",%s", name);
			if (--left == 0)
				fprintf(out, "}\n");
		}
	}
}

static void print_cache(struct cur *c, FILE *out)
{
	uint32_t ver, cnt;
	size_t start, slen;
	bool ok = rd32(c, &ver) && ver == 1 && rd32(c, &cnt);

	fprintf(out, "# CPU cache info:\n");
	start = c->off;
	for (uint32_t i = 0; ok && i < cnt; i++) {
		uint32_t v;

		ok = rd32(c, &v) && rd32(c, &v) && rd32(c, &v) && rd32(c, &v) &&
		     rdstr(c, &slen) && rdstr(c, &slen) && rdstr(c, &slen);
	}
	if (!ok)
		return;
	c->off = start;
	for (uint32_t i = 0; i < cnt; i++) {
		uint32_t level = 0, v;
		size_t tl, sl, ml;
		const char *type, *size, *map;

		rd32(c, &level);
		rd32(c, &v);
		rd32(c, &v);
		rd32(c, &v);
		type = rdstr(c, &tl);
		size = rdstr(c, &sl);
		map = rdstr(c, &ml);
		/* perf's "L%d %-15s %8s [%s]" with bounded strings. */
		fprintf(out, "#  L%d %-15.*s %8.*s [%.*s]\n", (int)level,
			(int)tl, type, (int)sl, size, (int)ml, map);
	}
}

/* perf's timestamp__scnprintf_usec. */
static void put_usec(FILE *out, const char *what, uint64_t ns)
{
	fprintf(out, "# %s : %" PRIu64 ".%06" PRIu64 "\n", what,
		ns / 1000000000, ns % 1000000000 / 1000);
}

static void print_sample_time(struct cur *c, FILE *out)
{
	uint64_t first = 0, last = 0;

	if (!rd64(c, &first) || !rd64(c, &last))
		first = last = 0;
	put_usec(out, "time of first sample", first);
	put_usec(out, "time of last sample", last);
	fprintf(out, "# sample duration : %10.3f ms\n",
		(double)(last - first) / 1000000);
}

/* u64 words of a bitmap of @nbits (no overflow near 2^64). */
static uint64_t bitmap_words(uint64_t nbits)
{
	return nbits / 64 + (nbits % 64 != 0);
}

/* perf's unit_number__scnprintf. */
static void unit_number(char *buf, size_t size, uint64_t n)
{
	const char unit[] = "BKMG";
	int i = 0;

	while (n / 1024 > 1 && i < 3) {
		n /= 1024;
		i++;
	}
	snprintf(buf, size, "%" PRIu64 "%c", n, unit[i]);
}

static void print_mem_topology(struct cur *c, FILE *out)
{
	uint64_t ver, bsize, nr;
	size_t start;
	bool ok = rd64(c, &ver) && ver == 1 && rd64(c, &bsize) && rd64(c, &nr);

	start = c->off;
	for (uint64_t i = 0; ok && i < nr; i++) {
		uint64_t node = 0, size = 0, nbits = 0;

		ok = rd64(c, &node) && rd64(c, &size) && rd64(c, &nbits) &&
		     bitmap_words(nbits) <= (c->len - c->off) / 8;
		if (ok)
			c->off += (size_t)bitmap_words(nbits) * 8;
	}
	if (!ok) {
		fprintf(out, "# memory nodes (nr 0, block size 0x0):\n");
		return;
	}
	fprintf(out, "# memory nodes (nr %d, block size 0x%" PRIx64 "):\n",
		(int)nr, bsize);
	c->off = start;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t node = 0, size = 0, nbits = 0, weight = 0;
		size_t words;
		uint64_t *bits;
		char map[100], sz[50];

		rd64(c, &node);
		rd64(c, &size);
		rd64(c, &nbits);
		words = (size_t)bitmap_words(nbits);
		bits = malloc(words ? words * 8 : 8);
		if (!bits)
			return;
		memcpy(bits, c->p + c->off, words * 8);
		c->off += words * 8;
		for (size_t w = 0; w < words; w++) {
			uint64_t m = bits[w];

			if (w == words - 1 && nbits % 64)
				m &= (1ull << (nbits % 64)) - 1;
			bits[w] = m;
			weight += (uint64_t)__builtin_popcountll(m);
		}
		unit_number(sz, sizeof(sz), bsize * weight);
		bits_to_ranges(bits, nbits, map, sizeof(map));
		fprintf(out, "#  %3" PRIu64 " [%s]: %s\n", node, sz, map);
		free(bits);
	}
}

/* perf's clockid names (util/clockid.c), first match. */
const char *clockid_name(uint32_t id)
{
	switch (id) {
	case 1:
		return "monotonic";
	case 4:
		return "monotonic_raw";
	case 0:
		return "realtime";
	case 7:
		return "boottime";
	case 11:
		return "tai";
	default:
		return "(not found)";
	}
}

static void print_clock_data(struct cur *c, FILE *out)
{
	uint32_t ver, clockid;
	uint64_t tod, cns;
	char date[64], tstr[96];
	struct tm tm;
	time_t sec;

	if (!rd32(c, &ver) || ver != 1 || !rd32(c, &clockid) ||
	    !rd64(c, &tod) || !rd64(c, &cns)) {
		fprintf(out, "# reference time disabled\n");
		return;
	}
	sec = (time_t)(tod / 1000000000);
	if (!localtime_r(&sec, &tm)) {
		snprintf(tstr, sizeof(tstr), "<error>");
	} else {
		strftime(date, sizeof(date), "%F %T", &tm);
		snprintf(tstr, sizeof(tstr), "%s.%06d", date,
			 (int)(tod % 1000000000 / 1000));
	}
	fprintf(out, "# clockid: %s (%u)\n", clockid_name(clockid), clockid);
	fprintf(out, "# reference time: %s = %ld.%06d (TOD) = %ld.%09ld (%s)\n",
		tstr, (long)(tod / 1000000000), (int)(tod % 1000000000 / 1000),
		(long)(cns / 1000000000), (long)(cns % 1000000000),
		clockid_name(clockid));
}

static void print_hybrid_topology(struct cur *c, FILE *out)
{
	uint32_t nr;
	size_t start, slen;
	bool ok = rd32(c, &nr);

	fprintf(out, "# hybrid cpu system:\n");
	start = c->off;
	for (uint32_t i = 0; ok && i < nr; i++)
		ok = rdstr(c, &slen) && rdstr(c, &slen);
	if (!ok)
		return;
	c->off = start;
	for (uint32_t i = 0; i < nr; i++) {
		size_t nl, cl;
		const char *name = rdstr(c, &nl), *cpus = rdstr(c, &cl);

		fprintf(out, "# %.*s cpu list : %.*s\n", (int)nl, name, (int)cl,
			cpus);
	}
}

/* One PMU's capabilities (perf's __process_pmu_caps + __print_pmu_caps):
 * false if unreadable.  @print: print them for @pmu (@plen bytes). */
static bool pmu_caps(struct cur *c, bool print, const char *pmu, size_t plen,
		     FILE *out)
{
	uint32_t n;
	size_t nl, vl;

	if (!rd32(c, &n))
		return false;
	if (!print) {
		for (uint32_t i = 0; i < n; i++)
			if (!rdstr(c, &nl) || !rdstr(c, &vl))
				return false;
		return true;
	}
	if (!n) {
		fprintf(out, "# %.*s pmu capabilities: not available\n",
			(int)plen, pmu);
		return true;
	}
	fprintf(out, "# %.*s pmu capabilities: ", (int)plen, pmu);
	for (uint32_t i = 0; i < n; i++) {
		const char *name = rdstr(c, &nl), *val = rdstr(c, &vl);

		fprintf(out, "%s%.*s=%.*s", i ? ", " : "", (int)nl, name,
			(int)vl, val);
	}
	fputc('\n', out);
	return true;
}

static void print_cpu_pmu_caps(struct cur *c, FILE *out)
{
	size_t start = c->off;

	if (!pmu_caps(c, false, NULL, 0, out)) {
		fprintf(out, "# cpu pmu capabilities: not available\n");
		return;
	}
	c->off = start;
	pmu_caps(c, true, "cpu", 3, out);
}

static void print_pmu_caps(struct cur *c, FILE *out)
{
	uint32_t nr;
	size_t start, slen;
	bool ok = rd32(c, &nr);

	start = c->off;
	for (uint32_t i = 0; ok && i < nr; i++)
		ok = pmu_caps(c, false, NULL, 0, out) && rdstr(c, &slen);
	if (!ok)
		return;
	c->off = start;
	for (uint32_t i = 0; i < nr; i++) {
		size_t at = c->off;
		const char *name;

		pmu_caps(c, false, NULL, 0, out);
		name = rdstr(c, &slen);
		c->off = at;
		pmu_caps(c, true, name, slen, out);
		rdstr(c, &slen);
	}
}

/* BPF_BTF: "# btf info of id N" by id, a repeated id once (perf keeps
 * them in a tree by id; what came before damage stays). */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void print_bpf_btf(struct cur *c, FILE *out)
{
	uint32_t count, *ids, n = 0;

	if (!rd32(c, &count))
		return;
	/* Every entry takes 8 bytes at least. */
	if (count > (c->len - c->off) / 8)
		count = (uint32_t)((c->len - c->off) / 8);
	ids = malloc((count ? count : 1) * sizeof(*ids));
	if (!ids)
		return;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t id, size;

		if (!rd32(c, &id) || !rd32(c, &size) || size > c->len - c->off)
			break;
		c->off += size;
		ids[n++] = id;
	}
	qsort(ids, n, sizeof(*ids), cmp_u32);
	for (uint32_t i = 0; i < n; i++)
		if (!i || ids[i] != ids[i - 1])
			fprintf(out, "# btf info of id %u\n", ids[i]);
	free(ids);
}

/*
 * BPF_PROG_INFO: perf prints each program's name, address and size from
 * struct bpf_prog_info and its arrays; without programs nothing.  The
 * programs' lines need BTF names and the kernel's struct layout: not
 * decoded here, a count instead (see docs/perfring.1).
 */
static void print_bpf_prog_info(struct cur *c, FILE *out)
{
	uint32_t count;

	if (rd32(c, &count) && count)
		fprintf(out, "# bpf_prog_info: %u programs (not decoded)\n",
			count);
}

static void print_compressed(struct cur *c, FILE *out)
{
	uint32_t v[5] = { 0 };

	for (int i = 0; i < 5 && rd32(c, &v[i]); i++)
		;
	fprintf(out, "# compressed : %s, level = %d, ratio = %d\n",
		v[1] == 1 ? "Zstd" : "Unknown", (int)v[2], (int)v[3]);
}

static void print_cmdline(struct cur *c, FILE *out)
{
	uint32_t nr;

	fprintf(out, "# cmdline : ");
	if (rd32(c, &nr)) {
		for (uint32_t i = 0; i < nr; i++) {
			size_t slen;
			const char *s = rdstr(c, &slen);

			if (!s)
				break;
			/* perf escapes each ' as \' */
			for (size_t k = 0; k < slen; k++) {
				if (s[k] == '\'')
					fputs("\\'", out);
				else
					fputc(s[k], out);
			}
			fputc(' ', out);
		}
	}
	fputc('\n', out);
}

static const char *const upper_names[PRD_FEAT_LAST] = {
	[PRD_FEAT_TRACING_DATA] = "TRACING_DATA",
	[PRD_FEAT_BUILD_ID] = "BUILD_ID",
	[PRD_FEAT_HOSTNAME] = "HOSTNAME",
	[PRD_FEAT_OSRELEASE] = "OSRELEASE",
	[PRD_FEAT_VERSION] = "VERSION",
	[PRD_FEAT_ARCH] = "ARCH",
	[PRD_FEAT_NRCPUS] = "NRCPUS",
	[PRD_FEAT_CPUDESC] = "CPUDESC",
	[PRD_FEAT_CPUID] = "CPUID",
	[PRD_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PRD_FEAT_CMDLINE] = "CMDLINE",
	[PRD_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PRD_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
	[PRD_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PRD_FEAT_BRANCH_STACK] = "BRANCH_STACK",
	[PRD_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PRD_FEAT_GROUP_DESC] = "GROUP_DESC",
	[PRD_FEAT_AUXTRACE] = "AUXTRACE",
	[PRD_FEAT_STAT] = "STAT",
	[PRD_FEAT_CACHE] = "CACHE",
	[PRD_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
	[PRD_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
	[PRD_FEAT_CLOCKID] = "CLOCKID",
	[PRD_FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[PRD_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
	[PRD_FEAT_BPF_BTF] = "BPF_BTF",
	[PRD_FEAT_COMPRESSED] = "COMPRESSED",
	[PRD_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[PRD_FEAT_CLOCK_DATA] = "CLOCK_DATA",
	[PRD_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[PRD_FEAT_PMU_CAPS] = "PMU_CAPS",
};

/* perf's full_only sections: "info available, use -I" without -I. */
static bool full_only(int feat)
{
	return feat == PRD_FEAT_CPU_TOPOLOGY ||
	       feat == PRD_FEAT_NUMA_TOPOLOGY || feat == PRD_FEAT_CACHE ||
	       feat == PRD_FEAT_MEM_TOPOLOGY ||
	       feat == PRD_FEAT_HYBRID_TOPOLOGY;
}

void header_print_section(const struct prd_file *f, int feat,
			  const unsigned char *p, size_t len, bool full,
			  FILE *out)
{
	struct cur c = { p, p ? len : 0, 0, false };
	const char *s;
	size_t slen;
	uint32_t a, b;
	uint64_t v;

	if (feat <= 0 || feat >= PRD_FEAT_LAST ||
	    feat == PRD_FEAT_TRACING_DATA || feat == PRD_FEAT_BUILD_ID)
		return; /* perf prints neither */
	if (full_only(feat) && !full) {
		fprintf(out, "# %s info available, use -I to display\n",
			upper_names[feat]);
		return;
	}
	switch (feat) {
	case PRD_FEAT_HOSTNAME:
	case PRD_FEAT_OSRELEASE:
	case PRD_FEAT_VERSION:
	case PRD_FEAT_ARCH:
	case PRD_FEAT_CPUDESC:
	case PRD_FEAT_CPUID:
		s = str_or_null(&c, &slen);
		fprintf(out, "# %s : %.*s\n",
			feat == PRD_FEAT_HOSTNAME  ? "hostname" :
			feat == PRD_FEAT_OSRELEASE ? "os release" :
			feat == PRD_FEAT_VERSION   ? "perf version" :
			feat == PRD_FEAT_ARCH	   ? "arch" :
			feat == PRD_FEAT_CPUDESC   ? "cpudesc" :
						     "cpuid",
			(int)slen, s);
		break;
	case PRD_FEAT_NRCPUS:
		if (!rd32(&c, &a) || !rd32(&c, &b))
			a = b = 0;
		fprintf(out, "# nrcpus online : %u\n# nrcpus avail : %u\n", b,
			a);
		break;
	case PRD_FEAT_TOTAL_MEM:
		if (!rd64(&c, &v))
			v = 0;
		fprintf(out, "# total memory : %" PRIu64 " kB\n", v);
		break;
	case PRD_FEAT_CMDLINE:
		print_cmdline(&c, out);
		break;
	case PRD_FEAT_EVENT_DESC:
		print_event_desc(&c, out);
		break;
	case PRD_FEAT_CPU_TOPOLOGY:
		print_cpu_topology(f, &c, out);
		break;
	case PRD_FEAT_NUMA_TOPOLOGY:
		print_numa_topology(&c, out);
		break;
	case PRD_FEAT_BRANCH_STACK:
		fprintf(out, "# contains samples with branch stack\n");
		break;
	case PRD_FEAT_PMU_MAPPINGS:
		print_pmu_mappings(&c, out);
		break;
	case PRD_FEAT_GROUP_DESC:
		print_group_desc(f, &c, out);
		break;
	case PRD_FEAT_AUXTRACE:
		fprintf(out,
			"# contains AUX area data (e.g. instruction trace)\n");
		break;
	case PRD_FEAT_STAT:
		fprintf(out, "# contains stat data\n");
		break;
	case PRD_FEAT_CACHE:
		print_cache(&c, out);
		break;
	case PRD_FEAT_SAMPLE_TIME:
		print_sample_time(&c, out);
		break;
	case PRD_FEAT_MEM_TOPOLOGY:
		print_mem_topology(&c, out);
		break;
	case PRD_FEAT_CLOCKID:
		if (!rd64(&c, &v))
			v = 0;
		fprintf(out, "# clockid frequency: %" PRIu64 " MHz\n",
			v * 1000);
		break;
	case PRD_FEAT_DIR_FORMAT:
		if (!rd64(&c, &v))
			v = 0;
		fprintf(out, "# directory data version : %" PRIu64 "\n", v);
		break;
	case PRD_FEAT_BPF_PROG_INFO:
		print_bpf_prog_info(&c, out);
		break;
	case PRD_FEAT_BPF_BTF:
		print_bpf_btf(&c, out);
		break;
	case PRD_FEAT_COMPRESSED:
		print_compressed(&c, out);
		break;
	case PRD_FEAT_CPU_PMU_CAPS:
		print_cpu_pmu_caps(&c, out);
		break;
	case PRD_FEAT_CLOCK_DATA:
		print_clock_data(&c, out);
		break;
	case PRD_FEAT_HYBRID_TOPOLOGY:
		print_hybrid_topology(&c, out);
		break;
	case PRD_FEAT_PMU_CAPS:
		print_pmu_caps(&c, out);
		break;
	default:
		break;
	}
}

int header_print(const struct prd_file *f, bool full, FILE *out)
{
	struct stat st;
	struct tm tm;
	time_t mt;
	char when[64] = "";
	bool pipe = prd_is_pipe(f);
	uint64_t doff = pipe ? 0 : prd_data_offset(f);
	uint64_t dsize = pipe ? 0 : prd_data_size(f);

	/* perf: the input's mtime (fstat of the file, or of the pipe). */
	if (fstat(prd_fd(f), &st))
		return -errno;
	mt = st.st_mtime;
	if (localtime_r(&mt, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(out, "# ========\n");
	fprintf(out, "# captured on    : %s\n", when);
	fprintf(out, "# header version : 1\n");
	fprintf(out, "# data offset    : %" PRIu64 "\n", doff);
	fprintf(out, "# data size      : %" PRIu64 "\n", dsize);
	fprintf(out, "# feat offset    : %" PRIu64 "\n", doff + dsize);
	if (!pipe) {
		for (int feat = 1; feat < PRD_FEAT_LAST; feat++) {
			const void *p;
			size_t len = 0;

			if (!prd_has_feature(f, feat))
				continue;
			p = prd_feature(f, feat, &len);
			header_print_section(f, feat, p, len, full, out);
		}
		fprintf(out, "# missing features: ");
		for (int feat = 1; feat < PRD_FEAT_LAST; feat++)
			if (!prd_has_feature(f, feat))
				fprintf(out, "%s ", upper_names[feat]);
		fputc('\n', out);
	}
	fprintf(out, "# ========\n#\n");
	if (fflush(out))
		return -errno;
	return ferror(out) ? -EIO : 0;
}

void header_print_feature_record(const struct prd_file *f,
				 const struct prd_event *ev, bool full,
				 FILE *out)
{
	const struct prd_record_header_feature *r = &ev->rec->feat;

	if (ev->hdr->type != PRD_REC_HEADER_FEATURE || !r->feat_id ||
	    r->feat_id >= PRD_FEAT_LAST)
		return;
	header_print_section(f, (int)r->feat_id, r->data, r->data_size, full,
			     out);
}
