// SPDX-License-Identifier: MIT
/*
 * Typed views of perf records (perf_record.h): the one place that knows
 * where each record type keeps its fields.  The layouts are the kernel's
 * (include/uapi/linux/perf_event.h) and perf 6.1's for its own records
 * (tools/lib/perf/include/perf/event.h); sizes and counts were checked by
 * prd_record_min_size() and prd_record_check() before a view is decoded.
 */
#define _GNU_SOURCE
#include <string.h>
#include "perf_record.h"

/* The fixed fields of each type after the header (sample_id excluded). */
static const uint8_t min_body[128] = {
	[PERF_RECORD_MMAP] = 32,
	[PERF_RECORD_LOST] = 16,
	[PERF_RECORD_COMM] = 8,
	[PERF_RECORD_EXIT] = 24,
	[PERF_RECORD_THROTTLE] = 24,
	[PERF_RECORD_UNTHROTTLE] = 24,
	[PERF_RECORD_FORK] = 24,
	[PERF_RECORD_READ] = 16,
	[PERF_RECORD_MMAP2] = 64,
	[PERF_RECORD_AUX] = 24,
	[PERF_RECORD_ITRACE_START] = 8,
	[PERF_RECORD_LOST_SAMPLES] = 8,
	[PERF_RECORD_SWITCH_CPU_WIDE] = 8,
	[PERF_RECORD_NAMESPACES] = 16,
	[PERF_RECORD_KSYMBOL] = 16,
	[PERF_RECORD_BPF_EVENT] = 16,
	[PERF_RECORD_CGROUP] = 8,
	[PERF_RECORD_TEXT_POKE] = 12,
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = 8,
	[PRD_REC_HEADER_ATTR] = 64, /* PERF_ATTR_SIZE_VER0 */
	[PRD_REC_HEADER_EVENT_TYPE] = 72,
	[PRD_REC_HEADER_TRACING_DATA] = 4,
	[PRD_REC_HEADER_BUILD_ID] = 28,
	[PRD_REC_ID_INDEX] = 8,
	[PRD_REC_AUXTRACE_INFO] = 8,
	[PRD_REC_AUXTRACE] = 40,
	[PRD_REC_AUXTRACE_ERROR] = 96,
	[PRD_REC_THREAD_MAP] = 8,
	[PRD_REC_CPU_MAP] = 2,
	[PRD_REC_STAT_CONFIG] = 8,
	[PRD_REC_STAT] = 40,
	[PRD_REC_STAT_ROUND] = 16,
	[PRD_REC_EVENT_UPDATE] = 16,
	[PRD_REC_TIME_CONV] = 24,
	[PRD_REC_HEADER_FEATURE] = 8,
};

uint32_t prd_record_min_size(uint32_t type)
{
	return 8u + (type < 128 ? min_body[type] : 0);
}

const char *prd_record_check(const unsigned char *rec, uint32_t size)
{
	uint32_t body = size - 8;
	uint64_t n;

	switch (ld32(rec)) {
	case PERF_RECORD_NAMESPACES:
		n = ld64(rec + 16);
		if (n > (body - 16) / 16)
			return "nr_namespaces";
		break;
	case PERF_RECORD_TEXT_POKE:
		if (12u + ld16(rec + 16) + ld16(rec + 18) > body)
			return "old_len/new_len";
		break;
	case PRD_REC_ID_INDEX:
		n = ld64(rec + 8);
		if (n > (body - 8) / 32)
			return "nr";
		break;
	case PRD_REC_THREAD_MAP:
		n = ld64(rec + 8);
		if (n > (body - 8) / 24)
			return "nr";
		break;
	case PRD_REC_STAT_CONFIG:
		n = ld64(rec + 8);
		if (n > (body - 8) / 16)
			return "nr";
		break;
	default:
		break;
	}
	return NULL;
}

/* A string at @at of a record whose own fields end at @own: NULL when
 * nothing of it is there. */
static const char *str_at(const unsigned char *rec, uint32_t at, uint32_t own,
			  uint32_t *len)
{
	if (at >= own) {
		*len = 0;
		return NULL;
	}
	*len = (uint32_t)strnlen((const char *)rec + at, own - at);
	return (const char *)rec + at;
}

/* The same string to the end of the record (@size: its whole size). */
static struct prd_str_in_record str_in_record(const unsigned char *rec,
					      uint32_t at, uint32_t size)
{
	struct prd_str_in_record v;

	v.str = str_at(rec, at, size, &v.len);
	return v;
}

static uint32_t room_at(uint32_t at, uint32_t own)
{
	return at < own ? own - at : 0;
}

static void decode_mmap(const unsigned char *r, uint32_t own,
			struct prd_record_mmap *v)
{
	uint32_t name_at = 40;

	v->pid = ld32(r + 8);
	v->tid = ld32(r + 12);
	v->start = ld64(r + 16);
	v->len = ld64(r + 24);
	v->pgoff = ld64(r + 32);
	if (v->header.type == PERF_RECORD_MMAP2) {
		v->maj = ld32(r + 40);
		v->min = ld32(r + 44);
		v->ino = ld64(r + 48);
		v->ino_generation = ld64(r + 56);
		v->build_id_size = r[40];
		memcpy(v->build_id, r + 44, sizeof(v->build_id));
		v->prot = ld32(r + 64);
		v->flags = ld32(r + 68);
		name_at = 72;
	}
	v->filename = str_at(r, name_at, own, &v->filename_len);
	v->filename_in_record = str_in_record(r, name_at, v->header.size);
}

static void decode_namespaces(const unsigned char *r, uint32_t own,
			      struct prd_record_namespaces *v)
{
	uint64_t fits = room_at(24, own) / 16;

	v->pid = ld32(r + 8);
	v->tid = ld32(r + 12);
	v->nr_namespaces = ld64(r + 16);
	v->link_info = r + 24;
	v->nr_link_info = v->nr_namespaces < fits ? v->nr_namespaces : fits;
}

static void decode_text_poke(const unsigned char *r, uint32_t own,
			     struct prd_record_text_poke *v)
{
	v->addr = ld64(r + 8);
	v->old_len = ld16(r + 16);
	v->new_len = ld16(r + 18);
	v->bytes = r + 20;
	v->bytes_size = room_at(20, own);
}

/* The kernel's records (types below 64). */
static void decode_kernel(const unsigned char *r, uint32_t own,
			  union prd_record *v)
{
	switch (v->header.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		decode_mmap(r, own, &v->mmap);
		break;
	case PERF_RECORD_COMM:
		v->comm.pid = ld32(r + 8);
		v->comm.tid = ld32(r + 12);
		v->comm.comm = str_at(r, 16, own, &v->comm.comm_len);
		v->comm.comm_in_record = str_in_record(r, 16, v->header.size);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		v->fork.pid = ld32(r + 8);
		v->fork.ppid = ld32(r + 12);
		v->fork.tid = ld32(r + 16);
		v->fork.ptid = ld32(r + 20);
		v->fork.time = ld64(r + 24);
		break;
	case PERF_RECORD_LOST:
		v->lost.id = ld64(r + 8);
		v->lost.lost = ld64(r + 16);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		v->lost_samples.lost = ld64(r + 8);
		break;
	case PERF_RECORD_READ:
		v->read.pid = ld32(r + 8);
		v->read.tid = ld32(r + 12);
		v->read.value = ld64(r + 16);
		v->read.values = r + 16;
		v->read.values_size = room_at(16, own);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		v->throttle.time = ld64(r + 8);
		v->throttle.id = ld64(r + 16);
		v->throttle.stream_id = ld64(r + 24);
		break;
	case PERF_RECORD_AUX:
		v->aux.aux_offset = ld64(r + 8);
		v->aux.aux_size = ld64(r + 16);
		v->aux.flags = ld64(r + 24);
		break;
	case PERF_RECORD_ITRACE_START:
		v->itrace_start.pid = ld32(r + 8);
		v->itrace_start.tid = ld32(r + 12);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		v->context_switch.next_prev_pid = ld32(r + 8);
		v->context_switch.next_prev_tid = ld32(r + 12);
		break;
	case PERF_RECORD_NAMESPACES:
		decode_namespaces(r, own, &v->namespaces);
		break;
	case PERF_RECORD_KSYMBOL:
		v->ksymbol.addr = ld64(r + 8);
		v->ksymbol.len = ld32(r + 16);
		v->ksymbol.ksym_type = ld16(r + 20);
		v->ksymbol.flags = ld16(r + 22);
		v->ksymbol.name = str_at(r, 24, own, &v->ksymbol.name_len);
		break;
	case PERF_RECORD_BPF_EVENT:
		v->bpf.type = ld16(r + 8);
		v->bpf.flags = ld16(r + 10);
		v->bpf.id = ld32(r + 12);
		break;
	case PERF_RECORD_CGROUP:
		v->cgroup.id = ld64(r + 8);
		v->cgroup.path = str_at(r, 16, own, &v->cgroup.path_len);
		break;
	case PERF_RECORD_TEXT_POKE:
		decode_text_poke(r, own, &v->text_poke);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		v->aux_output_hw_id.hw_id = ld64(r + 8);
		break;
	default:
		break;
	}
}

static void decode_header_attr(const unsigned char *r, uint32_t size,
			       struct prd_record_header_attr *v)
{
	uint32_t asz = ld32(r + 12) ? ld32(r + 12) : 64;

	v->attr_size = asz;
	v->attr_fits = asz <= sizeof(v->attr) && asz <= size - 8;
	memset(&v->attr, 0, sizeof(v->attr));
	v->ids = NULL;
	v->nr_ids = 0;
	if (!v->attr_fits)
		return;
	memcpy(&v->attr, r + 8, asz);
	v->ids = r + 8 + asz;
	v->nr_ids = (size - 8 - asz) / 8;
}

static void decode_auxtrace_error(const unsigned char *r,
				  struct prd_record_auxtrace_error *v)
{
	v->type = ld32(r + 8);
	v->code = ld32(r + 12);
	v->cpu = ld32(r + 16);
	v->pid = ld32(r + 20);
	v->tid = ld32(r + 24);
	v->fmt = ld32(r + 28);
	v->ip = ld64(r + 32);
	v->time = ld64(r + 40);
	/* format 0's message, where later formats keep the time */
	v->msg = str_at(r, 40, 104, &v->msg_len);
}

/* perf's own records (types from 64): no sample_id_all trailer. */
static void decode_user(const unsigned char *r, uint32_t size,
			union prd_record *v)
{
	switch (v->header.type) {
	case PRD_REC_HEADER_ATTR:
		decode_header_attr(r, size, &v->attr);
		break;
	case PRD_REC_HEADER_EVENT_TYPE:
		v->event_type.event_id = ld64(r + 8);
		v->event_type.name = str_at(r, 16, size < 80 ? size : 80,
					    &v->event_type.name_len);
		v->event_type.payload_size = size - 16;
		break;
	case PRD_REC_HEADER_TRACING_DATA:
		v->tracing_data.size = ld32(r + 8);
		break;
	case PRD_REC_HEADER_BUILD_ID:
		prd_build_id_entry(r, size, &v->build_id);
		break;
	case PRD_REC_FINISHED_ROUND:
		v->finished_round.payload_size = size - 8;
		break;
	case PRD_REC_ID_INDEX:
		v->id_index.nr = ld64(r + 8);
		v->id_index.entries = r + 16;
		break;
	case PRD_REC_AUXTRACE_INFO:
		v->auxtrace_info.type = ld32(r + 8);
		v->auxtrace_info.priv = r + 16;
		v->auxtrace_info.nr_priv = (size - 16) / 8;
		break;
	case PRD_REC_AUXTRACE:
		v->auxtrace.size = ld64(r + 8);
		v->auxtrace.offset = ld64(r + 16);
		v->auxtrace.reference = ld64(r + 24);
		v->auxtrace.idx = ld32(r + 32);
		v->auxtrace.tid = ld32(r + 36);
		v->auxtrace.cpu = ld32(r + 40);
		break;
	case PRD_REC_AUXTRACE_ERROR:
		decode_auxtrace_error(r, &v->auxtrace_error);
		break;
	case PRD_REC_THREAD_MAP:
		v->thread_map.nr = ld64(r + 8);
		v->thread_map.entries = r + 16;
		break;
	case PRD_REC_CPU_MAP:
		v->cpu_map.data.data = r + 8;
		v->cpu_map.data.size = size - 8;
		break;
	case PRD_REC_STAT_CONFIG:
		v->stat_config.nr = ld64(r + 8);
		v->stat_config.data = r + 16;
		break;
	case PRD_REC_STAT:
		v->stat.id = ld64(r + 8);
		v->stat.cpu = ld32(r + 16);
		v->stat.thread = ld32(r + 20);
		v->stat.val = ld64(r + 24);
		v->stat.ena = ld64(r + 32);
		v->stat.run = ld64(r + 40);
		break;
	case PRD_REC_STAT_ROUND:
		v->stat_round.type = ld64(r + 8);
		v->stat_round.time = ld64(r + 16);
		break;
	case PRD_REC_EVENT_UPDATE:
		v->event_update.type = ld64(r + 8);
		v->event_update.id = ld64(r + 16);
		v->event_update.data = r + 24;
		v->event_update.data_size = size - 24;
		break;
	case PRD_REC_TIME_CONV:
		v->time_conv.time_shift = ld64(r + 8);
		v->time_conv.time_mult = ld64(r + 16);
		v->time_conv.time_zero = ld64(r + 24);
		break;
	case PRD_REC_HEADER_FEATURE:
		v->feat.feat_id = ld64(r + 8);
		v->feat.data = r + 16;
		v->feat.data_size = size - 16;
		break;
	case PRD_REC_COMPRESSED:
		v->pack.data = r + 8;
		v->pack.data_size = size - 8;
		break;
	default:
		break;
	}
}

void prd_record_decode(const unsigned char *rec, uint32_t own,
		       union prd_record *v)
{
	memcpy(&v->header, rec, sizeof(v->header));
	if (v->header.type < PRD_REC_HEADER_ATTR)
		decode_kernel(rec, own, v);
	else
		decode_user(rec, v->header.size, v);
}

bool prd_record_view(const void *rec, size_t size, union prd_record *v)
{
	struct perf_event_header h;

	if (size < sizeof(h))
		return false;
	memcpy(&h, rec, sizeof(h));
	if (h.size > size || h.size < prd_record_min_size(h.type) ||
	    prd_record_check(rec, h.size))
		return false;
	prd_record_decode(rec, h.size, v);
	return true;
}

bool prd_record_read_id(const struct prd_record_read *r, uint64_t read_format,
			uint64_t *id)
{
	/* {value; time_enabled?; time_running?; id?; ...} */
	uint32_t at = 8 +
		      (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED ? 8 : 0) +
		      (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING ? 8 : 0);

	if (!(read_format & PERF_FORMAT_ID) ||
	    (read_format & PERF_FORMAT_GROUP) || at + 8 > r->values_size)
		return false;
	*id = ld64(r->values + at);
	return true;
}

bool prd_event_update_scale(const struct prd_record_event_update *r,
			    double *scale)
{
	if (r->data_size < sizeof(*scale))
		return false;
	memcpy(scale, r->data, sizeof(*scale));
	return true;
}

bool prd_cpu_map_decode(const struct prd_cpu_map_data *d, struct prd_cpu_map *m)
{
	const unsigned char *p = d->data;

	memset(m, 0, sizeof(*m));
	if (d->size < 2)
		return false;
	m->type = ld16(p);
	if (m->type == PRD_CPU_MAP_CPUS && d->size >= 4) {
		uint32_t fit = (d->size - 4) / 2;

		m->valid = true;
		m->nr = ld16(p + 2);
		m->nr_fit = m->nr < fit ? m->nr : (uint16_t)fit;
		m->cpus = p + 4;
	} else if (m->type == PRD_CPU_MAP_RANGE && d->size >= 8) {
		/* u8 any_cpu, u8 pad, u16 start_cpu, u16 end_cpu */
		m->valid = true;
		m->any_cpu = p[2];
		m->start_cpu = ld16(p + 4);
		m->end_cpu = ld16(p + 6);
	}
	return true;
}

uint32_t prd_build_id_entry(const unsigned char *p, size_t len,
			    struct prd_record_header_build_id *v)
{
	/* {header; pid; build_id[20], size, 3 reserved; filename} */
	if (len < 36)
		return 0;
	memcpy(&v->header, p, sizeof(v->header));
	if (v->header.size < 36 || v->header.size > len)
		return 0;
	v->pid = (int32_t)ld32(p + 8);
	memcpy(v->build_id, p + 12, sizeof(v->build_id));
	v->size = p[32];
	v->filename = str_at(p, 36, v->header.size, &v->filename_len);
	return v->header.size;
}

unsigned int prd_build_id_size(const struct prd_record_header_build_id *v)
{
	return v->header.misc & PRD_MISC_BUILD_ID_SIZE ? v->size : 20;
}

void prd_sample_positions(uint64_t sample_type, struct prd_sample_pos *p)
{
	/* perf_event_open(2)'s order of the sample fields */
	static const struct {
		uint64_t bit;
		size_t field;
	} order[] = {
		{ PERF_SAMPLE_IDENTIFIER, offsetof(struct prd_sample_pos, id) },
		{ PERF_SAMPLE_IP, offsetof(struct prd_sample_pos, ip) },
		{ PERF_SAMPLE_TID, offsetof(struct prd_sample_pos, tid) },
		{ PERF_SAMPLE_TIME, offsetof(struct prd_sample_pos, time) },
		{ PERF_SAMPLE_ADDR, offsetof(struct prd_sample_pos, addr) },
		{ PERF_SAMPLE_ID, offsetof(struct prd_sample_pos, id) },
		{ PERF_SAMPLE_STREAM_ID,
		  offsetof(struct prd_sample_pos, stream_id) },
		{ PERF_SAMPLE_CPU, offsetof(struct prd_sample_pos, cpu) },
		{ PERF_SAMPLE_PERIOD, offsetof(struct prd_sample_pos, period) },
	};
	uint16_t at = sizeof(struct perf_event_header);

	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint16_t *slot = (uint16_t *)((char *)p + order[i].field);

		if (!(sample_type & order[i].bit))
			continue;
		if (!*slot) /* ID after IDENTIFIER: the same value */
			*slot = at;
		at += 8;
	}
	p->fixed_end = at;
	if ((sample_type & PERF_SAMPLE_CALLCHAIN) &&
	    !(sample_type & PERF_SAMPLE_READ))
		p->callchain = at;
}
