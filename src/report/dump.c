// SPDX-License-Identifier: MIT
/*
 * `perfring dump`: every record of a perf.data, like perf report -D.
 *
 * A header block ("# ..." lines) describes the file: its format, the data
 * section, each event (attr) with its name, sample_type and ids, and the
 * features.  Then one line per record in file order:
 *
 *   [cpu ]time 0xOFFSET [0xSIZE]: PERF_RECORD_TYPE fields
 *
 * The cpu and time come from the sample or the sample_id_all trailer and
 * are there only when the record has them.  The fields follow perf's
 * wording; samples add " ... " lines for the callchain, id, raw data,
 * branch stack, registers, stack and read values.  On damage the records
 * before it are printed, then a "# stopped" line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/opts.h"
#include "../format/group_desc.h"
#include "../format/load.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "dump.h"

struct dump {
	FILE *out;
	uint64_t records;
	const char *path; /* --hex: as perf names the file */
	bool hex;
};

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* perf report -D's raw block before a record: its offset, type and bytes,
 * 16 a line with their characters (perf's trace_event_printer()). */
static void put_hex(FILE *out, const char *path, uint64_t off,
		    const unsigned char *r, uint32_t size)
{
	fprintf(out,
		"\n%#llx@%s [%#x]: event: %u\n.\n. ... raw event: size %u bytes\n",
		ull(off), path, size, ld32(r), size);
	for (uint32_t i = 0; i < size; i += 16) {
		char text[17];
		uint32_t n = size - i < 16 ? size - i : 16;

		fprintf(out, ".  %04x:  ", i);
		for (uint32_t k = 0; k < 16; k++) {
			if (k < n) {
				fprintf(out, "%02x ", r[i + k]);
				text[k] = r[i + k] >= 0x20 && r[i + k] < 0x7f ?
						  (char)r[i + k] :
						  '.';
			} else {
				fputs("   ", out);
				text[k] = ' ';
			}
		}
		text[16] = '\0';
		fprintf(out, " %s\n", text);
	}
	fputc('\n', out);
}

/* A string field at @at of a record whose own fields end at @end. */
static void put_str(FILE *out, const unsigned char *r, uint32_t at,
		    uint32_t end)
{
	if (at >= end) {
		fputs("?", out);
		return;
	}
	fprintf(out, "%.*s", (int)strnlen((const char *)r + at, end - at),
		(const char *)r + at);
}

static const char *const sample_bits[] = {
	"IP",
	"TID",
	"TIME",
	"ADDR",
	"READ",
	"CALLCHAIN",
	"ID",
	"CPU",
	"PERIOD",
	"STREAM_ID",
	"RAW",
	"BRANCH_STACK",
	"REGS_USER",
	"STACK_USER",
	"WEIGHT",
	"DATA_SRC",
	"IDENTIFIER",
	"TRANSACTION",
	"REGS_INTR",
	"PHYS_ADDR",
	"AUX",
	"CGROUP",
	"DATA_PAGE_SIZE",
	"CODE_PAGE_SIZE",
	"WEIGHT_STRUCT",
};

static void put_sample_type(FILE *out, uint64_t st)
{
	const char *sep = "";

	for (unsigned int b = 0; b < 64; b++) {
		if (!(st & (1ull << b)))
			continue;
		if (b < sizeof(sample_bits) / sizeof(sample_bits[0]))
			fprintf(out, "%s%s", sep, sample_bits[b]);
		else
			fprintf(out, "%sbit%u", sep, b);
		sep = "|";
	}
	if (!*sep)
		fputs("0", out);
}

static void put_attr(FILE *out, const struct perf_event_attr *a)
{
	fprintf(out, "type %u, config %#llx, size %u, sample_type ", a->type,
		ull(a->config), a->size);
	put_sample_type(out, a->sample_type);
	fprintf(out, ", read_format %#llx, %s %llu, sample_id_all %u",
		ull(a->read_format), a->freq ? "freq" : "period",
		ull(a->sample_period), (unsigned int)a->sample_id_all);
}

/* CMDLINE: u32 nr, then nr strings {u32 len; char[len]} (checked by the
 * reader when it loaded the feature). */
/* GROUP_DESC as perf report --header prints it: "{a,b}" per group. */
static void put_groups(FILE *out, const struct prd_file *f,
		       const unsigned char *p, size_t len)
{
	uint32_t nattrs = prd_nr_attrs(f), dropped = 0;
	struct gdesc_group *g = calloc(nattrs ? nattrs : 1, sizeof(*g));
	int n = g ? gdesc_parse(p, len, nattrs, g, nattrs, &dropped) : -ENOMEM;

	fprintf(out, ": %zu bytes", len);
	if (n < 0)
		fputs(n == -ENOMEM ? "" : " (malformed)", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s%s{", i ? " " : ": ", g[i].name);
		for (uint32_t m = 0; m < g[i].nr_members; m++) {
			const struct prd_attr *a = prd_attr(f, g[i].leader + m);

			fprintf(out, "%s%s", m ? "," : "",
				a && a->name ? a->name : "?");
		}
		fputc('}', out);
	}
	if (dropped)
		fprintf(out, " (%u naming events the file has not)", dropped);
	fputc('\n', out);
	free(g);
}

static void put_cmdline(FILE *out, const unsigned char *p, size_t len)
{
	uint32_t n = ld32(p);
	size_t at = 4;

	fputc(':', out);
	for (uint32_t i = 0; i < n && at + 4 <= len; i++) {
		uint32_t l = ld32(p + at);

		if (l > len - at - 4)
			break;
		fprintf(out, " %.*s", (int)strnlen((const char *)p + at + 4, l),
			(const char *)p + at + 4);
		at += 4 + (size_t)l;
	}
	fputc('\n', out);
}

static void put_header(const struct prd_file *f, const char *path, FILE *out)
{
	size_t len;

	if (prd_is_pipe(f))
		fprintf(out,
			"# %s: perf.data in pipe format (offsets: from the first record after the 16-byte header)\n",
			path);
	else
		fprintf(out,
			"# %s: perf.data in file format, data at %#llx (%llu bytes)\n",
			path, ull(prd_data_offset(f)), ull(prd_data_size(f)));
	for (uint32_t i = 0; i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);

		fprintf(out, "# event %u: %s: ", i, a->name ? a->name : "?");
		put_attr(out, &a->attr);
		fprintf(out, ", %u ids", a->nr_ids);
		for (uint32_t k = 0; k < a->nr_ids && k < 16; k++)
			fprintf(out, "%s%llu", k ? " " : ": ", ull(a->ids[k]));
		if (a->nr_ids > 16)
			fputs(" ...", out);
		fputc('\n', out);
	}
	if (!prd_is_pipe(f) && prd_has_feature(f, 0))
		fprintf(out,
			"# checkpoint: written while recording, as of its last complete round (the feature table is the FINISHED_ROUND at the data end)\n");
	for (int feat = 1; feat < PRD_FEAT_LAST; feat++) {
		const unsigned char *p;
		const char *s;

		if (!prd_has_feature(f, feat))
			continue;
		p = prd_feature(f, feat, &len);
		fprintf(out, "# feature %s", prd_feature_name(feat));
		if (!p) {
			fputs(": not loaded\n", out);
			continue;
		}
		s = prd_feature_string(f, feat);
		if (s &&
		    (feat == PRD_FEAT_HOSTNAME || feat == PRD_FEAT_OSRELEASE ||
		     feat == PRD_FEAT_VERSION || feat == PRD_FEAT_ARCH ||
		     feat == PRD_FEAT_CPUDESC || feat == PRD_FEAT_CPUID))
			fprintf(out, ": %s\n", s);
		else if (feat == PRD_FEAT_NRCPUS && len >= 8)
			fprintf(out, ": %u available, %u online\n", ld32(p),
				ld32(p + 4));
		else if (feat == PRD_FEAT_TOTAL_MEM && len >= 8)
			fprintf(out, ": %llu kB\n", ull(ld64(p)));
		else if (feat == PRD_FEAT_SAMPLE_TIME && len >= 16)
			fprintf(out, ": first %llu last %llu\n", ull(ld64(p)),
				ull(ld64(p + 8)));
		else if (feat == PRD_FEAT_CMDLINE && len >= 4)
			put_cmdline(out, p, len);
		else if (feat == PRD_FEAT_CLOCKID && len >= 8)
			fprintf(out, ": resolution %llu ns\n", ull(ld64(p)));
		else if (feat == PD_FEAT_GROUP_DESC)
			put_groups(out, f, p, len);
		else
			fprintf(out, ": %zu bytes\n", len);
	}
	fputc('\n', out);
}

static void put_callchain(FILE *out, const struct prd_sample *s)
{
	fprintf(out, "... FP chain: nr:%llu\n", ull(s->nr_callchain));
	for (uint64_t i = 0; i < s->nr_callchain; i++)
		fprintf(out, "..... %2llu: %016llx\n", ull(i),
			ull(s->callchain[i]));
}

static void put_regs(FILE *out, const char *what, uint64_t abi,
		     const uint64_t *regs, uint32_t nr, uint64_t mask)
{
	uint32_t k = 0;

	fprintf(out, "... %s regs: mask %#llx ABI %s\n", what, ull(mask),
		abi == 2 ? "64-bit" :
		abi == 1 ? "32-bit" :
			   "none");
	for (unsigned int b = 0; b < 64 && k < nr; b++)
		if (mask & (1ull << b))
			fprintf(out, ".... reg%-5u 0x%016llx\n", b,
				ull(regs[k++]));
}

static void put_read(FILE *out, const struct prd_sample *s, uint64_t rf)
{
	const unsigned char *p = s->read;
	size_t i = 0, n = s->read_size / 8;
	uint64_t nr = 1;

	if (rf & PERF_FORMAT_GROUP)
		nr = n ? ld64(p + 8 * i++) : 0;
	fprintf(out, "... sample_read:%s\n",
		rf & PERF_FORMAT_GROUP ? " group" : "");
	if (!(rf & PERF_FORMAT_GROUP)) {
		if (i < n)
			fprintf(out, "...... value %llu\n",
				ull(ld64(p + 8 * i++)));
	}
	if ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) && i < n)
		fprintf(out, "...... time enabled %016llx\n",
			ull(ld64(p + 8 * i++)));
	if ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) && i < n)
		fprintf(out, "...... time running %016llx\n",
			ull(ld64(p + 8 * i++)));
	if (!(rf & PERF_FORMAT_GROUP)) {
		if ((rf & PERF_FORMAT_ID) && i < n)
			fprintf(out, "...... id %016llx\n",
				ull(ld64(p + 8 * i++)));
		if ((rf & PERF_FORMAT_LOST) && i < n)
			fprintf(out, "...... lost %llu\n",
				ull(ld64(p + 8 * i++)));
		return;
	}
	for (uint64_t k = 0; k < nr && i < n; k++) {
		fprintf(out, "...... value %llu", ull(ld64(p + 8 * i++)));
		if ((rf & PERF_FORMAT_ID) && i < n)
			fprintf(out, " id %016llx", ull(ld64(p + 8 * i++)));
		if ((rf & PERF_FORMAT_LOST) && i < n)
			fprintf(out, " lost %llu", ull(ld64(p + 8 * i++)));
		fputc('\n', out);
	}
}

static void put_sample(FILE *out, const unsigned char *r,
		       const struct prd_sample *s)
{
	const struct perf_event_attr *a = s->attr ? &s->attr->attr : NULL;
	uint64_t st = a ? a->sample_type : 0;

	fprintf(out, "(IP, 0x%x): %d/%d: %#llx period: %llu addr: %#llx\n",
		ld16(r + 4), (int)s->pid, (int)s->tid, ull(s->ip),
		ull(s->period), ull(s->addr));
	if (!a) {
		fprintf(out,
			" ... id: %llu: no event has this id (not decoded)\n",
			ull(s->id));
		return;
	}
	fprintf(out, " ... id: %llu  event: %s", ull(s->id),
		s->attr->name ? s->attr->name : "?");
	if (st & PERF_SAMPLE_STREAM_ID)
		fprintf(out, "  stream_id: %llu", ull(s->stream_id));
	fputc('\n', out);
	if (st & PERF_SAMPLE_CALLCHAIN)
		put_callchain(out, s);
	if (st & PERF_SAMPLE_RAW)
		fprintf(out, " ... raw size: %u\n", s->raw_size);
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		const unsigned char *b = s->branch_stack;
		size_t at = 8;

		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			fprintf(out, "... branch stack: nr:%llu hw_idx:%lld\n",
				ull(s->nr_branches), (long long)ld64(b + 8));
			at = 16;
		} else {
			fprintf(out, "... branch stack: nr:%llu\n",
				ull(s->nr_branches));
		}
		for (uint64_t i = 0; i < s->nr_branches; i++, at += 24)
			fprintf(out,
				"..... %2llu: %016llx -> %016llx flags %#llx\n",
				ull(i), ull(ld64(b + at)),
				ull(ld64(b + at + 8)), ull(ld64(b + at + 16)));
	}
	if (st & PERF_SAMPLE_REGS_USER)
		put_regs(out, "user", s->regs_user_abi, s->regs_user,
			 s->nr_regs_user, a->sample_regs_user);
	if (st & PERF_SAMPLE_STACK_USER)
		fprintf(out, "... ustack: size %llu, offset %#llx\n",
			ull(s->stack_user_size), ull(s->stack_user_dyn_size));
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		fprintf(out, "... weight: %llu\n", ull(s->weight));
	if (st & PERF_SAMPLE_DATA_SRC)
		fprintf(out, " . data_src: 0x%llx\n", ull(s->data_src));
	if (st & PERF_SAMPLE_PHYS_ADDR)
		fprintf(out, " .. phys_addr: 0x%llx\n", ull(s->phys_addr));
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		fprintf(out, " .. data page size: %llu\n",
			ull(s->data_page_size));
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		fprintf(out, " .. code page size: %llu\n",
			ull(s->code_page_size));
	if (st & PERF_SAMPLE_TRANSACTION)
		fprintf(out, "... transaction: %llx\n", ull(s->transaction));
	if (st & PERF_SAMPLE_REGS_INTR)
		put_regs(out, "intr", s->regs_intr_abi, s->regs_intr,
			 s->nr_regs_intr, a->sample_regs_intr);
	if (st & PERF_SAMPLE_CGROUP)
		fprintf(out, " .. cgroup: %llu\n", ull(s->cgroup));
	if (st & PERF_SAMPLE_AUX)
		fprintf(out, " .. aux: %llu bytes\n", ull(s->aux_size));
	if (st & PERF_SAMPLE_READ)
		put_read(out, s, a->read_format);
}

static void put_cpu_map(FILE *out, const unsigned char *d, uint32_t len)
{
	uint16_t type, nr;

	if (len < 2)
		return;
	type = ld16(d);
	if (type == 0 && len >= 4) {
		nr = ld16(d + 2);
		fputs(":", out);
		for (uint32_t i = 0; i < nr && 4 + 2 * i + 2 <= len; i++)
			fprintf(out, "%s%u", i ? "," : " ",
				ld16(d + 4 + 2 * i));
	} else if (type == 2 && len >= 8) {
		/* range: u8 any_cpu, u8 pad, u16 start_cpu, u16 end_cpu */
		fprintf(out, ": %s%u-%u", d[2] ? "-1," : "", ld16(d + 4),
			ld16(d + 6));
	} else {
		fprintf(out, ": type %u", type);
	}
}

/* The fields of the kernel's records (types below 64), perf's wording. */
static void put_kernel_fields(FILE *out, const unsigned char *r, uint32_t type,
			      uint32_t end)
{
	uint16_t misc = ld16(r + 4);

	switch (type) {
	case PERF_RECORD_MMAP:
		fprintf(out, " %d/%d: [%#llx(%#llx) @ %#llx]: %c ",
			(int)ld32(r + 8), (int)ld32(r + 12), ull(ld64(r + 16)),
			ull(ld64(r + 24)), ull(ld64(r + 32)),
			misc & PERF_RECORD_MISC_MMAP_DATA ? 'r' : 'x');
		put_str(out, r, 40, end);
		break;
	case PERF_RECORD_MMAP2: {
		uint32_t prot = ld32(r + 64), flags = ld32(r + 68);

		fprintf(out, " %d/%d: [%#llx(%#llx) @ %#llx ", (int)ld32(r + 8),
			(int)ld32(r + 12), ull(ld64(r + 16)), ull(ld64(r + 24)),
			ull(ld64(r + 32)));
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			unsigned int n = r[40] < 20 ? r[40] : 20;

			for (unsigned int i = 0; i < n; i++)
				fprintf(out, "%02x", r[44 + i]);
		} else {
			fprintf(out, "%02x:%02x %llu %llu", ld32(r + 40),
				ld32(r + 44), ull(ld64(r + 48)),
				ull(ld64(r + 56)));
		}
		fprintf(out, "]: %c%c%c%c ", prot & 1 ? 'r' : '-',
			prot & 2 ? 'w' : '-', prot & 4 ? 'x' : '-',
			flags & 1 /* MAP_SHARED */ ? 's' : 'p');
		put_str(out, r, 72, end);
		break;
	}
	case PERF_RECORD_COMM:
		fprintf(out, "%s: ",
			misc & PERF_RECORD_MISC_COMM_EXEC ? " exec" : "");
		put_str(out, r, 16, end);
		fprintf(out, ":%d/%d", (int)ld32(r + 8), (int)ld32(r + 12));
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fprintf(out, "(%d:%d):(%d:%d)", (int)ld32(r + 8),
			(int)ld32(r + 16), (int)ld32(r + 12),
			(int)ld32(r + 20));
		break;
	case PERF_RECORD_LOST:
		fprintf(out, ": id:%llu: lost:%llu", ull(ld64(r + 8)),
			ull(ld64(r + 16)));
		break;
	case PERF_RECORD_LOST_SAMPLES:
		fprintf(out, " lost: %llu", ull(ld64(r + 8)));
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		fprintf(out, ": time %llu id %llu stream_id %llu",
			ull(ld64(r + 8)), ull(ld64(r + 16)), ull(ld64(r + 24)));
		break;
	case PERF_RECORD_READ:
		fprintf(out, ": %d %d value %llu", (int)ld32(r + 8),
			(int)ld32(r + 12), ull(ld64(r + 16)));
		break;
	case PERF_RECORD_AUX: {
		uint64_t fl = ld64(r + 24);

		fprintf(out, " offset: %#llx size: %#llx flags: %#llx [%s%s%s]",
			ull(ld64(r + 8)), ull(ld64(r + 16)), ull(fl),
			fl & 1 ? "T" : "", fl & 2 ? "O" : "",
			fl & 4 ? "P" : "");
		break;
	}
	case PERF_RECORD_ITRACE_START:
		fprintf(out, " pid: %u tid: %u", ld32(r + 8), ld32(r + 12));
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		bool out_ = misc & PERF_RECORD_MISC_SWITCH_OUT;

		fprintf(out, " %s%s", out_ ? "OUT" : "IN",
			out_ && (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ?
				" preempt" :
				"");
		if (type == PERF_RECORD_SWITCH_CPU_WIDE)
			fprintf(out, "  %s pid/tid: %5d/%-5d",
				out_ ? "next" : "prev", (int)ld32(r + 8),
				(int)ld32(r + 12));
		break;
	}
	case PERF_RECORD_NAMESPACES: {
		uint64_t nr = ld64(r + 16);

		fprintf(out, " %d/%d - nr_namespaces: %llu", (int)ld32(r + 8),
			(int)ld32(r + 12), ull(nr));
		for (uint64_t i = 0; i < nr && 24 + 16 * i + 16 <= end; i++)
			fprintf(out, "%s%llu/%#llx", i ? ", " : "\n\t\t[",
				ull(ld64(r + 24 + 16 * i)),
				ull(ld64(r + 32 + 16 * i)));
		if (nr)
			fputs("]", out);
		break;
	}
	case PERF_RECORD_KSYMBOL:
		fprintf(out, " addr %llx len %u type %u flags 0x%x name ",
			ull(ld64(r + 8)), ld32(r + 16), ld16(r + 20),
			ld16(r + 22));
		put_str(out, r, 24, end);
		break;
	case PERF_RECORD_BPF_EVENT:
		fprintf(out, " type %u, flags %u, id %u", ld16(r + 8),
			ld16(r + 10), ld32(r + 12));
		break;
	case PERF_RECORD_CGROUP:
		fprintf(out, " cgroup: %llu ", ull(ld64(r + 8)));
		put_str(out, r, 16, end);
		break;
	case PERF_RECORD_TEXT_POKE:
		fprintf(out, " %#llx old len %u new len %u", ull(ld64(r + 8)),
			ld16(r + 16), ld16(r + 18));
		break;
	case 21: /* AUX_OUTPUT_HW_ID */
		fprintf(out, " hw_id: %#llx", ull(ld64(r + 8)));
		break;
	default:
		break;
	}
}

/* The fields of the records perf itself writes (types from 64). */
static void put_user_fields(FILE *out, const unsigned char *r, uint32_t type,
			    uint32_t size)
{
	uint16_t misc = ld16(r + 4);

	switch (type) {
	case PRD_REC_HEADER_ATTR: {
		struct perf_event_attr a;
		uint32_t asz = ld32(r + 12) ? ld32(r + 12) : 64;

		if (asz > sizeof(a) || asz > size - 8)
			break;
		memset(&a, 0, sizeof(a));
		memcpy(&a, r + 8, asz);
		fputs(": ", out);
		put_attr(out, &a);
		fprintf(out, ", %u ids", (size - 8 - asz) / 8);
		for (uint32_t k = 0; k < (size - 8 - asz) / 8 && k < 16; k++)
			fprintf(out, "%s%llu", k ? " " : ": ",
				ull(ld64(r + 8 + asz + 8 * k)));
		break;
	}
	case PRD_REC_HEADER_EVENT_TYPE:
		if (ld64(r + 8) == PRD_CARRIER_TAG) {
			fprintf(out, " (checkpoint carrier, %u bytes)",
				size - 16);
			break;
		}
		fprintf(out, ": id %llu name ", ull(ld64(r + 8)));
		put_str(out, r, 16, size < 80 ? size : 80);
		break;
	case PRD_REC_FINISHED_ROUND:
		/* the feature table of a file written while recording */
		if (size > 8)
			fprintf(out, " (checkpoint, %u bytes)", size - 8);
		break;
	case PRD_REC_HEADER_TRACING_DATA:
		fprintf(out, ": %u bytes follow", ld32(r + 8));
		break;
	case PRD_REC_HEADER_BUILD_ID: {
		unsigned int n = misc & (1 << 15) /* BUILD_ID_SIZE */ ?
					 (r[32] < 20 ? r[32] : 20) :
					 20;

		fprintf(out, ": pid %d build id ", (int)ld32(r + 8));
		for (unsigned int i = 0; i < n; i++)
			fprintf(out, "%02x", r[12 + i]);
		fputc(' ', out);
		put_str(out, r, 36, size);
		break;
	}
	case PRD_REC_ID_INDEX: {
		uint64_t nr = ld64(r + 8);

		fprintf(out, " nr: %llu", ull(nr));
		for (uint64_t i = 0; i < nr; i++) {
			const unsigned char *e = r + 16 + 32 * i;

			fprintf(out,
				"\n ... id: %llu  idx: %llu  cpu: %lld  tid: %lld",
				ull(ld64(e)), ull(ld64(e + 8)),
				(long long)ld64(e + 16),
				(long long)ld64(e + 24));
		}
		break;
	}
	case PRD_REC_AUXTRACE_INFO:
		fprintf(out, " type: %u", ld32(r + 8));
		break;
	case PRD_REC_AUXTRACE:
		fprintf(out,
			" size: %#llx offset: %#llx ref: %#llx idx: %u tid: %d cpu: %d",
			ull(ld64(r + 8)), ull(ld64(r + 16)), ull(ld64(r + 24)),
			ld32(r + 32), (int)ld32(r + 36), (int)ld32(r + 40));
		break;
	case PRD_REC_AUXTRACE_ERROR:
		fprintf(out, " type %u code %u cpu %d pid %d tid %d ip %#llx: ",
			ld32(r + 8), ld32(r + 12), (int)ld32(r + 16),
			(int)ld32(r + 20), (int)ld32(r + 24),
			ull(ld64(r + 32)));
		put_str(out, r, 40, 104);
		break;
	case PRD_REC_THREAD_MAP: {
		uint64_t nr = ld64(r + 8);

		fprintf(out, " nr: %llu thread:", ull(nr));
		for (uint64_t i = 0; i < nr; i++)
			fprintf(out, "%s%lld", i ? "," : " ",
				(long long)ld64(r + 16 + 24 * i));
		break;
	}
	case PRD_REC_CPU_MAP:
		put_cpu_map(out, r + 8, size - 8);
		break;
	case PRD_REC_STAT_CONFIG: {
		uint64_t nr = ld64(r + 8);

		fprintf(out, " nr: %llu", ull(nr));
		for (uint64_t i = 0; i < nr; i++)
			fprintf(out, "\n ... tag %llu val %llu",
				ull(ld64(r + 16 + 16 * i)),
				ull(ld64(r + 24 + 16 * i)));
		break;
	}
	case PRD_REC_STAT:
		fprintf(out,
			" id %llu cpu %d thread %d val %llu ena %llu run %llu",
			ull(ld64(r + 8)), (int)ld32(r + 16), (int)ld32(r + 20),
			ull(ld64(r + 24)), ull(ld64(r + 32)),
			ull(ld64(r + 40)));
		break;
	case PRD_REC_STAT_ROUND:
		fprintf(out, " type %llu time %llu", ull(ld64(r + 8)),
			ull(ld64(r + 16)));
		break;
	case PRD_REC_EVENT_UPDATE: {
		uint64_t t = ld64(r + 8);

		fprintf(out, "\n... id:    %llu", ull(ld64(r + 16)));
		if (t == 2 /* NAME */ && size > 24) {
			fputs("\n... name:  ", out);
			put_str(out, r, 24, size);
		} else if (t == 0 /* UNIT */ && size > 24) {
			fputs("\n... unit:  ", out);
			put_str(out, r, 24, size);
		} else if (t == 1 /* SCALE */ && size >= 32) {
			double d;

			memcpy(&d, r + 24, sizeof(d));
			fprintf(out, "\n... scale: %f", d);
		} else if (t == 3 /* CPUS */) {
			fputs("\n... cpus", out);
			put_cpu_map(out, r + 24, size - 24);
		} else {
			fprintf(out, "\n... type:  %llu", ull(t));
		}
		break;
	}
	case PRD_REC_TIME_CONV:
		fprintf(out, " time_shift %llu time_mult %llu time_zero %llu",
			ull(ld64(r + 8)), ull(ld64(r + 16)), ull(ld64(r + 24)));
		break;
	case PRD_REC_HEADER_FEATURE: {
		uint64_t feat = ld64(r + 8);
		const char *n = feat < 256 ? prd_feature_name((int)feat) : NULL;

		fprintf(out, " %s (%llu), %u bytes", n ? n : "unknown",
			ull(feat), size - 16);
		break;
	}
	case PRD_REC_COMPRESSED:
		fprintf(out, " %u bytes of zstd data (not decoded)", size - 8);
		break;
	default:
		break;
	}
}

/* The fields of records other than samples, perf's wording. */
static void put_fields(FILE *out, const unsigned char *r, uint32_t type,
		       uint32_t size, uint32_t end)
{
	if (type < PRD_REC_HEADER_ATTR)
		put_kernel_fields(out, r, type, end);
	else
		put_user_fields(out, r, type, size);
}

int report_record_text(FILE *out, struct prd_file *f,
		       const struct prd_event *ev)
{
	const char *name = prd_type_name(ev->hdr->type);

	if (!name || ev->hdr->type == PERF_RECORD_SAMPLE)
		return 0;
	fprintf(out, "PERF_RECORD_%s", name);
	put_fields(out, (const unsigned char *)ev->hdr, ev->hdr->type,
		   ev->hdr->size, prd_payload_size(f, ev));
	if (fputc('\n', out) == EOF || ferror(out))
		return errno == EPIPE ? -EPIPE : -EIO;
	return 1;
}

static int dump_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct dump *d = ctx;
	FILE *out = d->out;
	const unsigned char *r = (const unsigned char *)ev->hdr;
	uint32_t type = ev->hdr->type, size = ev->hdr->size;
	const struct prd_sample *s = ev->sample;
	const char *name = prd_type_name(type);

	d->records++;
	if (d->hex)
		put_hex(out, d->path, ev->offset, r, size);
	if (s) {
		const struct prd_attr *a = s->attr;
		uint64_t st;

		if (!a && prd_nr_attrs(f))
			a = prd_attr(f, 0);
		st = a ? a->attr.sample_type : 0;
		if (type == PERF_RECORD_SAMPLE && !s->attr)
			st = 0;
		if (st & PERF_SAMPLE_CPU)
			fprintf(out, "%u ", s->cpu);
		if (st & PERF_SAMPLE_TIME)
			fprintf(out, "%llu ", ull(s->time));
	}
	fprintf(out, "%#llx [%#x]: ", ull(ev->offset), size);
	if (!name) {
		fprintf(out, "unknown record type %u (skipped)\n", type);
		return 0;
	}
	fprintf(out, "PERF_RECORD_%s", name);
	if (type == PERF_RECORD_SAMPLE && s) {
		put_sample(out, r, s);
		if (ferror(out))
			return errno == EPIPE ? -EPIPE : -EIO;
		return 0;
	}
	put_fields(out, r, type, size, prd_payload_size(f, ev));
	if (fputc('\n', out) == EOF || ferror(out))
		return errno == EPIPE ? -EPIPE : -EIO;
	return 0;
}

int report_dump(const char *path, FILE *out, bool hex)
{
	struct dump d = { out, 0, strcmp(path, "-") ? path : "pipe", hex };
	const struct prd_stats *st;
	struct prd_file *f;
	int ret;

	ret = prd_open(path, &f);
	if (ret)
		return ret;
	put_header(f, path, out);
	ret = prd_process(f, false, dump_event, &d);
	st = prd_stats(f);
	if (st->features_damaged)
		fprintf(out,
			"# the file's feature sections are damaged (see the warning): ignored\n");
	if (ret == -EBADMSG)
		fprintf(out,
			"# stopped: damage at offset %#llx (see the error); %llu records before it\n",
			ull(st->damage_offset), ull(d.records));
	if (fflush(out) && !ret)
		ret = -errno;
	prd_close(f);
	return ret;
}

PERFRING_API int perfring_dump(const char *path, FILE *out)
{
	if (!path || !out)
		return -EINVAL;
	return report_dump(path, out, false);
}

PERFRING_API int perfring_dump_opts(const struct perfring_dump_opts *opts,
				    FILE *out)
{
	struct perfring_dump_opts o;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	OPTS_COPY(&o, opts);
	return report_dump(o.input ? o.input : "perf.data", out, o.hex);
}
