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
#include "../common/load.h"
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

/* A string field of a record (NULL: the record ends before it). */
static void put_str(FILE *out, const char *str, uint32_t len)
{
	if (!str) {
		fputs("?", out);
		return;
	}
	fprintf(out, "%.*s", (int)len, str);
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
			"# checkpoint: written while recording, as of its last complete round (the feature table is the COMM of task -2 at the data end)\n");
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

static void put_cpu_map(FILE *out, const struct prd_cpu_map_data *d)
{
	struct prd_cpu_map m;

	if (!prd_cpu_map_decode(d, &m))
		return;
	if (m.valid && m.type == PRD_CPU_MAP_CPUS) {
		fputs(":", out);
		for (uint32_t i = 0; i < m.nr_fit; i++)
			fprintf(out, "%s%u", i ? "," : " ",
				prd_cpu_map_cpu(&m, i));
	} else if (m.valid && m.type == PRD_CPU_MAP_RANGE) {
		fprintf(out, ": %s%u-%u", m.any_cpu ? "-1," : "", m.start_cpu,
			m.end_cpu);
	} else {
		fprintf(out, ": type %u", m.type);
	}
}

static void put_mmap(FILE *out, const struct prd_record_mmap *r)
{
	uint16_t misc = r->header.misc;

	if (r->header.type == PERF_RECORD_MMAP) {
		fprintf(out, " %d/%d: [%#llx(%#llx) @ %#llx]: %c ", (int)r->pid,
			(int)r->tid, ull(r->start), ull(r->len), ull(r->pgoff),
			misc & PERF_RECORD_MISC_MMAP_DATA ? 'r' : 'x');
		put_str(out, r->filename, r->filename_len);
		return;
	}
	fprintf(out, " %d/%d: [%#llx(%#llx) @ %#llx ", (int)r->pid, (int)r->tid,
		ull(r->start), ull(r->len), ull(r->pgoff));
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		unsigned int n = r->build_id_size < 20 ? r->build_id_size : 20;

		for (unsigned int i = 0; i < n; i++)
			fprintf(out, "%02x", r->build_id[i]);
	} else {
		fprintf(out, "%02x:%02x %llu %llu", r->maj, r->min, ull(r->ino),
			ull(r->ino_generation));
	}
	fprintf(out, "]: %c%c%c%c ", r->prot & 1 ? 'r' : '-',
		r->prot & 2 ? 'w' : '-', r->prot & 4 ? 'x' : '-',
		r->flags & 1 /* MAP_SHARED */ ? 's' : 'p');
	put_str(out, r->filename, r->filename_len);
}

static void put_switch(FILE *out, const struct prd_record_switch *r)
{
	uint16_t misc = r->header.misc;
	bool out_ = misc & PERF_RECORD_MISC_SWITCH_OUT;

	fprintf(out, " %s%s", out_ ? "OUT" : "IN",
		out_ && (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ?
			" preempt" :
			"");
	if (r->header.type == PERF_RECORD_SWITCH_CPU_WIDE)
		fprintf(out, "  %s pid/tid: %5d/%-5d", out_ ? "next" : "prev",
			(int)r->next_prev_pid, (int)r->next_prev_tid);
}

static void put_namespaces(FILE *out, const struct prd_record_namespaces *r)
{
	fprintf(out, " %d/%d - nr_namespaces: %llu", (int)r->pid, (int)r->tid,
		ull(r->nr_namespaces));
	for (uint64_t i = 0; i < r->nr_link_info; i++) {
		struct prd_ns_link_info e = prd_ns_link_info(r, i);

		fprintf(out, "%s%llu/%#llx", i ? ", " : "\n\t\t[", ull(e.dev),
			ull(e.ino));
	}
	if (r->nr_namespaces)
		fputs("]", out);
}

/* The fields of the kernel's records (types below 64), perf's wording. */
static void put_kernel_fields(FILE *out, const union prd_record *v)
{
	uint16_t misc = v->header.misc;

	switch (v->header.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		put_mmap(out, &v->mmap);
		break;
	case PERF_RECORD_COMM:
		/* perfring's checkpoint records: no thread, binary payload */
		if ((int32_t)v->comm.pid == PRD_CKPT_TID &&
		    (int32_t)v->comm.tid == PRD_CKPT_TID) {
			fprintf(out, " (checkpoint, %u bytes)", v->header.size);
			break;
		}
		fprintf(out, "%s: ",
			misc & PERF_RECORD_MISC_COMM_EXEC ? " exec" : "");
		put_str(out, v->comm.comm, v->comm.comm_len);
		fprintf(out, ":%d/%d", (int)v->comm.pid, (int)v->comm.tid);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fprintf(out, "(%d:%d):(%d:%d)", (int)v->fork.pid,
			(int)v->fork.tid, (int)v->fork.ppid, (int)v->fork.ptid);
		break;
	case PERF_RECORD_LOST:
		fprintf(out, ": id:%llu: lost:%llu", ull(v->lost.id),
			ull(v->lost.lost));
		break;
	case PERF_RECORD_LOST_SAMPLES:
		fprintf(out, " lost: %llu", ull(v->lost_samples.lost));
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		fprintf(out, ": time %llu id %llu stream_id %llu",
			ull(v->throttle.time), ull(v->throttle.id),
			ull(v->throttle.stream_id));
		break;
	case PERF_RECORD_READ:
		fprintf(out, ": %d %d value %llu", (int)v->read.pid,
			(int)v->read.tid, ull(v->read.value));
		break;
	case PERF_RECORD_AUX: {
		uint64_t fl = v->aux.flags;

		fprintf(out, " offset: %#llx size: %#llx flags: %#llx [%s%s%s]",
			ull(v->aux.aux_offset), ull(v->aux.aux_size), ull(fl),
			fl & 1 ? "T" : "", fl & 2 ? "O" : "",
			fl & 4 ? "P" : "");
		break;
	}
	case PERF_RECORD_ITRACE_START:
		fprintf(out, " pid: %u tid: %u", v->itrace_start.pid,
			v->itrace_start.tid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		put_switch(out, &v->context_switch);
		break;
	case PERF_RECORD_NAMESPACES:
		put_namespaces(out, &v->namespaces);
		break;
	case PERF_RECORD_KSYMBOL:
		fprintf(out, " addr %llx len %u type %u flags 0x%x name ",
			ull(v->ksymbol.addr), v->ksymbol.len,
			v->ksymbol.ksym_type, v->ksymbol.flags);
		put_str(out, v->ksymbol.name, v->ksymbol.name_len);
		break;
	case PERF_RECORD_BPF_EVENT:
		fprintf(out, " type %u, flags %u, id %u", v->bpf.type,
			v->bpf.flags, v->bpf.id);
		break;
	case PERF_RECORD_CGROUP:
		fprintf(out, " cgroup: %llu ", ull(v->cgroup.id));
		put_str(out, v->cgroup.path, v->cgroup.path_len);
		break;
	case PERF_RECORD_TEXT_POKE:
		fprintf(out, " %#llx old len %u new len %u",
			ull(v->text_poke.addr), v->text_poke.old_len,
			v->text_poke.new_len);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		fprintf(out, " hw_id: %#llx", ull(v->aux_output_hw_id.hw_id));
		break;
	default:
		break;
	}
}

static void put_header_attr(FILE *out, const struct prd_record_header_attr *r)
{
	if (!r->attr_fits)
		return;
	fputs(": ", out);
	put_attr(out, &r->attr);
	fprintf(out, ", %u ids", r->nr_ids);
	for (uint32_t k = 0; k < r->nr_ids && k < 16; k++)
		fprintf(out, "%s%llu", k ? " " : ": ",
			ull(prd_header_attr_id(r, k)));
}

static void put_build_id(FILE *out, const struct prd_record_header_build_id *r)
{
	unsigned int n = prd_build_id_size(r);

	if (n > 20)
		n = 20;
	fprintf(out, ": pid %d build id ", (int)r->pid);
	for (unsigned int i = 0; i < n; i++)
		fprintf(out, "%02x", r->build_id[i]);
	fputc(' ', out);
	put_str(out, r->filename, r->filename_len);
}

static void put_event_update(FILE *out, const struct prd_record_event_update *r)
{
	uint64_t t = r->type;
	double d;

	fprintf(out, "\n... id:    %llu", ull(r->id));
	if (t == PRD_EVENT_UPDATE_NAME && r->data_size) {
		fputs("\n... name:  ", out);
		fprintf(out, "%.*s",
			(int)strnlen((const char *)r->data, r->data_size),
			(const char *)r->data);
	} else if (t == PRD_EVENT_UPDATE_UNIT && r->data_size) {
		fputs("\n... unit:  ", out);
		fprintf(out, "%.*s",
			(int)strnlen((const char *)r->data, r->data_size),
			(const char *)r->data);
	} else if (t == PRD_EVENT_UPDATE_SCALE &&
		   prd_event_update_scale(r, &d)) {
		fprintf(out, "\n... scale: %f", d);
	} else if (t == PRD_EVENT_UPDATE_CPUS) {
		struct prd_cpu_map_data cpus = { r->data, r->data_size };

		fputs("\n... cpus", out);
		put_cpu_map(out, &cpus);
	} else {
		fprintf(out, "\n... type:  %llu", ull(t));
	}
}

static void put_id_index(FILE *out, const struct prd_record_id_index *r)
{
	fprintf(out, " nr: %llu", ull(r->nr));
	for (uint64_t i = 0; i < r->nr; i++) {
		struct prd_id_index_entry e = prd_id_index_entry(r, i);

		fprintf(out, "\n ... id: %llu  idx: %llu  cpu: %lld  tid: %lld",
			ull(e.id), ull(e.idx), (long long)e.cpu,
			(long long)e.tid);
	}
}

/* The records of perf's for its own use (types from 64): their fields
 * and counts (the stat ones). */
static void put_user_misc(FILE *out, const union prd_record *v)
{
	switch (v->header.type) {
	case PRD_REC_THREAD_MAP:
		fprintf(out, " nr: %llu thread:", ull(v->thread_map.nr));
		for (uint64_t i = 0; i < v->thread_map.nr; i++)
			fprintf(out, "%s%lld", i ? "," : " ",
				(long long)prd_thread_map_pid(&v->thread_map,
							      i));
		break;
	case PRD_REC_CPU_MAP:
		put_cpu_map(out, &v->cpu_map.data);
		break;
	case PRD_REC_STAT_CONFIG:
		fprintf(out, " nr: %llu", ull(v->stat_config.nr));
		for (uint64_t i = 0; i < v->stat_config.nr; i++) {
			struct prd_stat_config_entry e =
				prd_stat_config_entry(&v->stat_config, i);

			fprintf(out, "\n ... tag %llu val %llu", ull(e.tag),
				ull(e.val));
		}
		break;
	case PRD_REC_STAT:
		fprintf(out,
			" id %llu cpu %d thread %d val %llu ena %llu run %llu",
			ull(v->stat.id), (int)v->stat.cpu, (int)v->stat.thread,
			ull(v->stat.val), ull(v->stat.ena), ull(v->stat.run));
		break;
	case PRD_REC_STAT_ROUND:
		fprintf(out, " type %llu time %llu", ull(v->stat_round.type),
			ull(v->stat_round.time));
		break;
	case PRD_REC_TIME_CONV:
		fprintf(out, " time_shift %llu time_mult %llu time_zero %llu",
			ull(v->time_conv.time_shift),
			ull(v->time_conv.time_mult),
			ull(v->time_conv.time_zero));
		break;
	default:
		break;
	}
}

/* The fields of the records perf itself writes (types from 64). */
static void put_user_fields(FILE *out, const union prd_record *v)
{
	switch (v->header.type) {
	case PRD_REC_HEADER_ATTR:
		put_header_attr(out, &v->attr);
		break;
	case PRD_REC_HEADER_EVENT_TYPE:
		if (v->event_type.event_id == PRD_CARRIER_TAG) {
			fprintf(out, " (checkpoint carrier, %u bytes)",
				v->event_type.payload_size);
			break;
		}
		fprintf(out, ": id %llu name ", ull(v->event_type.event_id));
		put_str(out, v->event_type.name, v->event_type.name_len);
		break;
	case PRD_REC_FINISHED_ROUND:
		/* the feature table of a file written while recording */
		if (v->finished_round.payload_size)
			fprintf(out, " (checkpoint, %u bytes)",
				v->finished_round.payload_size);
		break;
	case PRD_REC_HEADER_TRACING_DATA:
		fprintf(out, ": %u bytes follow", v->tracing_data.size);
		break;
	case PRD_REC_HEADER_BUILD_ID:
		put_build_id(out, &v->build_id);
		break;
	case PRD_REC_ID_INDEX:
		put_id_index(out, &v->id_index);
		break;
	case PRD_REC_AUXTRACE_INFO:
		fprintf(out, " type: %u", v->auxtrace_info.type);
		break;
	case PRD_REC_AUXTRACE:
		fprintf(out,
			" size: %#llx offset: %#llx ref: %#llx idx: %u tid: %d cpu: %d",
			ull(v->auxtrace.size), ull(v->auxtrace.offset),
			ull(v->auxtrace.reference), v->auxtrace.idx,
			(int)v->auxtrace.tid, (int)v->auxtrace.cpu);
		break;
	case PRD_REC_AUXTRACE_ERROR: {
		const struct prd_record_auxtrace_error *e = &v->auxtrace_error;

		fprintf(out, " type %u code %u cpu %d pid %d tid %d ip %#llx: ",
			e->type, e->code, (int)e->cpu, (int)e->pid, (int)e->tid,
			ull(e->ip));
		put_str(out, e->msg, e->msg_len);
		break;
	}
	case PRD_REC_EVENT_UPDATE:
		put_event_update(out, &v->event_update);
		break;
	case PRD_REC_HEADER_FEATURE: {
		uint64_t feat = v->feat.feat_id;
		const char *n = feat < 256 ? prd_feature_name((int)feat) : NULL;

		fprintf(out, " %s (%llu), %u bytes", n ? n : "unknown",
			ull(feat), v->feat.data_size);
		break;
	}
	case PRD_REC_COMPRESSED:
		fprintf(out, " %u bytes of zstd data (not decoded)",
			v->pack.data_size);
		break;
	default:
		put_user_misc(out, v);
		break;
	}
}

/* The fields of records other than samples, perf's wording. */
static void put_fields(FILE *out, const union prd_record *v)
{
	if (v->header.type < PRD_REC_HEADER_ATTR)
		put_kernel_fields(out, v);
	else
		put_user_fields(out, v);
}

int report_record_text(FILE *out, const struct prd_event *ev)
{
	const char *name = prd_type_name(ev->hdr->type);

	if (!name || ev->hdr->type == PERF_RECORD_SAMPLE)
		return 0;
	fprintf(out, "PERF_RECORD_%s", name);
	put_fields(out, ev->rec);
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
	put_fields(out, ev->rec);
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
	prd_show_checkpoints(f);
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
