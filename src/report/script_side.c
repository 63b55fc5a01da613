// SPDX-License-Identifier: MIT
/*
 * The side-band records among the samples (perf script's
 * --show-task-events, --show-mmap-events, ..., print_event_with_time()):
 * the sample-like start of the line, then perf_event__fprintf()'s text
 * of the record, from its typed view.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "../machine/inline.h"
#include "../machine/srcline.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tpfmt.h"
#include "../tracepoint/tracedat_lines.h"
#include "../machine/filter.h"
#include "../format/header_print.h"
#include "dump.h"
#include "../format/sample_read.h"
#include "script_internal.h"

void script_side_one(struct script *sc, const union prd_record *v)
{
	if (machine_process(&sc->m, v) == -ENOMEM && !sc->stop)
		sc->stop = -ENOMEM;
}

/* perf_sample__fprintf_start() of a side-band record: the fields before
 * the event name, no per-thread cache (the tid shown is the trailer's). */
static void put_start(struct script *sc, const struct attr_info *ai,
		      struct thread *t, int32_t pid, int32_t tid, uint32_t cpu,
		      uint64_t time)
{
	struct outbuf *ob = &sc->ob;
	unsigned fl = ai->fields;

	ob_room(ob, OB_SLACK);
	if (fl & F_COMM) {
		const char *comm = t ? t->comm : ":-1";
		size_t n = t ? t->comm_len : 3;

		if (!ai->chain && n < 16)
			ob_spaces(ob, 16 - n);
		ob_write(ob, comm, n < 1024 ? n : 1024);
		ob_putc(ob, ' ');
	}
	if ((fl & (F_PID | F_TID)) == (F_PID | F_TID)) {
		size_t at;

		ob_s64(ob, pid, 5);
		ob_putc(ob, '/');
		at = ob->len;
		ob_s64(ob, tid, 0);
		ob_spaces(ob, ob->len - at < 5 ? 5 - (ob->len - at) : 0);
		ob_putc(ob, ' ');
	} else if (fl & (F_PID | F_TID)) {
		ob_s64(ob, fl & F_PID ? pid : tid, 5);
		ob_putc(ob, ' ');
	}
	if (fl & F_CPU) {
		ob_putc(ob, '[');
		ob_u64(ob, cpu, 3, '0');
		ob_write(ob, "] ", 2);
	}
	if (fl & F_TIME)
		script_put_time(sc, time);
}

/* A formatted piece of a side-band line (short: numbers and words). */
__attribute__((format(printf, 2, 3))) static void
ob_printf(struct outbuf *ob, const char *fmt, ...)
{
	va_list ap;
	int n;

	ob_room(ob, 256);
	va_start(ap, fmt);
	n = vsnprintf(ob->p + ob->len, 256, fmt, ap);
	va_end(ap);
	if (n > 0)
		ob->len += n < 256 ? (size_t)n : 255;
}

/* A string field of a record (NULL: the record ends before it). */
static void put_rec_str(struct outbuf *ob, const char *str, uint32_t len)
{
	if (str)
		ob_write(ob, str, len);
}

/* perf 6.1's perf_ns__name() */
static const char *const ns_names[] = { "net",	"uts", "ipc",	"pid",
					"user", "mnt", "cgroup" };

/* perf_event__fprintf_text_poke()'s byte lines: 16 a line. */
static void put_poke_bytes(struct outbuf *ob, const unsigned char *b,
			   uint32_t n, const char *which)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!(i & 15))
			ob_printf(ob, "            %s bytes:", which);
		ob_printf(ob, " %02x", b[i]);
		if ((i & 15) == 15 || i == n - 1)
			ob_putc(ob, '\n');
	}
}

static void side_namespaces(struct outbuf *ob,
			    const struct prd_record_namespaces *r)
{
	uint64_t nr = r->nr_namespaces;

	ob_printf(ob, " %d/%d - nr_namespaces: %u\n\t\t[", (int)r->pid,
		  (int)r->tid, (unsigned)nr);
	for (uint64_t i = 0; i < r->nr_link_info; i++) {
		struct prd_ns_link_info e = prd_ns_link_info(r, i);

		if (i && !(i % 4))
			ob_write(ob, "\n\t\t ", 4);
		ob_printf(ob, "%u/%s: %llu/%#llx%s", (unsigned)i,
			  i < 7 ? ns_names[i] : "UNKNOWN",
			  (unsigned long long)e.dev, (unsigned long long)e.ino,
			  i + 1 != nr ? ", " : "]\n");
	}
}

static void side_text_poke(struct script *sc, struct thread *t,
			   const struct prd_record_text_poke *r)
{
	struct outbuf *ob = &sc->ob;
	uint32_t old_len = r->old_len, new_len = r->new_len;
	struct addr_loc al;

	ob_printf(ob, " %llx ", (unsigned long long)r->addr);
	/* the kernel symbol at the address, when known */
	machine_resolve(&sc->m, t, PERF_RECORD_MISC_KERNEL, r->addr, true, &al);
	if (al.kernel && al.sym) {
		ob_puts(ob, al.sym->name);
		ob_printf(ob, "+0x%llx", (unsigned long long)al.sym_off);
	}
	ob_printf(ob, " old len %u new len %u\n", old_len, new_len);
	if (old_len > r->bytes_size)
		old_len = r->bytes_size;
	if (new_len > r->bytes_size - old_len)
		new_len = r->bytes_size - old_len;
	put_poke_bytes(ob, r->bytes, old_len, "Old");
	put_poke_bytes(ob, r->bytes + old_len, new_len, "New");
}

/*
 * perf_event__fprintf() of the records the --show-*-events options added
 * here print (the others go through report_record_text()).  Fields a
 * record is too short for are left out, never read.
 */
static void side_text(struct script *sc, struct thread *t,
		      const union prd_record *v)
{
	struct outbuf *ob = &sc->ob;
	uint32_t type = v->header.type;
	uint16_t misc = v->header.misc;

	ob_printf(ob, "PERF_RECORD_%s", prd_type_name(type));
	switch (type) {
	case PERF_RECORD_LOST:
		ob_printf(ob, " lost %llu\n", (unsigned long long)v->lost.lost);
		return;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		bool out = misc & PERF_RECORD_MISC_SWITCH_OUT;
		const char *io = !out ? "IN         " :
				 !(misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ?
					"OUT        " :
					"OUT preempt";

		if (type == PERF_RECORD_SWITCH)
			ob_printf(ob, " %s\n", io);
		else
			ob_printf(ob, " %s  %s pid/tid: %5d/%-5d\n", io,
				  out ? "next" : "prev",
				  (int)v->context_switch.next_prev_pid,
				  (int)v->context_switch.next_prev_tid);
		return;
	}
	case PERF_RECORD_NAMESPACES:
		side_namespaces(ob, &v->namespaces);
		return;
	case PERF_RECORD_CGROUP:
		ob_printf(ob, " cgroup: %llu ",
			  (unsigned long long)v->cgroup.id);
		put_rec_str(ob, v->cgroup.path, v->cgroup.path_len);
		ob_putc(ob, '\n');
		return;
	case PERF_RECORD_KSYMBOL:
		ob_printf(ob, " addr %llx len %u type %u flags 0x%x name ",
			  (unsigned long long)v->ksymbol.addr, v->ksymbol.len,
			  v->ksymbol.ksym_type, v->ksymbol.flags);
		put_rec_str(ob, v->ksymbol.name, v->ksymbol.name_len);
		ob_putc(ob, '\n');
		return;
	case PERF_RECORD_BPF_EVENT:
		ob_printf(ob, " type %u, flags %u, id %u\n", v->bpf.type,
			  v->bpf.flags, v->bpf.id);
		return;
	case PERF_RECORD_TEXT_POKE:
		side_text_poke(sc, t, &v->text_poke);
		return;
	default:
		ob_putc(ob, '\n');
		return;
	}
}

/* The records the --show-*-events options print (task and mmap ones go
 * through report_record_text(), as before). */
static bool side_new_kind(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_TEXT_POKE:
		return true;
	default:
		return false;
	}
}

/*
 * The --show-*-events lines: perf 6.1's print_event_with_time().  The
 * event is the trailer's (the first one for records without
 * sample_id_all, whose time is 0 or the FORK/EXIT's own); the thread
 * whose comm is shown: the record's pid/tid for task, mmap and namespace
 * records, the trailer's for the others (perf's print_event() callers).
 */
void script_side_print(struct script *sc, struct prd_file *f,
		       const struct prd_event *ev)
{
	const union prd_record *v = ev->rec;
	uint32_t type = ev->hdr->type, size = ev->hdr->size;
	const struct prd_sample *s = ev->sample;
	const struct prd_attr *a = s ? s->attr : prd_attr(f, 0);
	bool s_tid = s && a && (a->attr.sample_type & PERF_SAMPLE_TID);
	int32_t pid = -1, tid = -1;
	uint64_t time = 0;
	uint32_t cpu = 0;
	const struct attr_info *ai;
	struct thread *t = NULL;

	if (!a || size < 16)
		return;
	if (type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT) {
		pid = (int32_t)v->fork.pid;
		tid = (int32_t)v->fork.tid;
		time = v->fork.time;
	} else if (type == PERF_RECORD_COMM) {
		pid = (int32_t)v->comm.pid;
		tid = (int32_t)v->comm.tid;
	} else if (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2) {
		pid = (int32_t)v->mmap.pid;
		tid = (int32_t)v->mmap.tid;
	} else if (type == PERF_RECORD_NAMESPACES) {
		pid = (int32_t)v->namespaces.pid;
		tid = (int32_t)v->namespaces.tid;
	} else if (s_tid) {
		pid = (int32_t)s->pid;
		tid = (int32_t)s->tid;
	}
	if (s) {
		cpu = s->cpu;
		time = s->time;
	}
	if (!filter_cpu(&sc->filt, cpu))
		return;
	if (!sc->setup && script_setup(sc)) {
		sc->stop = -EINVAL;
		return;
	}
	ai = script_attr_info(sc, a);
	if (!ai) {
		sc->stop = -ENOMEM;
		return;
	}
	if (!sc->m.host_decided)
		machine_set_host(&sc->m, sc->host);
	if (tid != -1)
		t = machine_findnew_thread(&sc->m, pid, tid);
	script_merged_put_until(sc, time);
	put_start(sc, ai, t, s ? (s_tid ? (int32_t)s->pid : -1) : pid,
		  s ? (s_tid ? (int32_t)s->tid : -1) : tid, cpu, time);
	if (side_new_kind(type)) {
		side_text(sc, t, v);
		ob_line_done(&sc->ob);
	} else {
		/* perf_event__fprintf(): the text perf report -D shows too. */
		ob_flush(&sc->ob);
		if (!sc->ob.err && report_record_text(sc->out, ev) < 0 &&
		    !sc->stop)
			sc->stop = -EIO;
	}
	if (sc->ob.err && !sc->stop)
		sc->stop = sc->ob.err;
}

/* Whether a --show-*-events option prints records of @type. */
bool script_side_shown(const struct script *sc, uint32_t type)
{
	const struct perfring_script_opts *o = &sc->o;

	switch (type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return o->show_task_events;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return o->show_mmap_events;
	case PERF_RECORD_LOST:
		return o->show_lost_events;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return o->show_switch_events;
	case PERF_RECORD_NAMESPACES:
		return o->show_namespace_events;
	case PERF_RECORD_CGROUP:
		return o->show_cgroup_events;
	case PERF_RECORD_KSYMBOL:
		return o->show_bpf_events || o->show_text_poke_events;
	case PERF_RECORD_BPF_EVENT:
		return o->show_bpf_events;
	case PERF_RECORD_TEXT_POKE:
		return o->show_text_poke_events;
	default:
		return false;
	}
}
