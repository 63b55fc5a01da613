// SPDX-License-Identifier: MIT
/*
 * perfring_report(): perf report --stdio, after perf 6.1's builtin-report.c,
 * hist.c, callchain.c and ui/stdio/hist.c.
 *
 * This file: the records of the file into histogram entries (add_sample())
 * and perfring_report() itself; report_internal.h lists the others.
 *
 * Per event (attr) a table of entries keyed by the sort keys (default
 * comm,dso,sym): Overhead = the entry's share of the event's total period.
 * With callchains (and not --no-children) every distinct entry on a
 * sample's chain also gets the period as Children (perf's cumulative
 * entries, a sample counted once per entry), and Self is the leaf's.
 *
 * Call graphs: each entry keeps a tree of the chains that reached it (the
 * whole chain for its own samples, the part from it to the leaf for the
 * cumulative ones; caller order with children, callee order without),
 * nodes holding runs of entries that are split where chains diverge
 * (callchain.c's append_chain()).  Printed as perf's "graph,0.5,caller"
 * does: branches under 0.5% of the event's period are left out, a single
 * branch carrying the entry's whole period is printed as "---name", the
 * others as "--12.34%--name" with "|" rails.
 *
 * Event groups (HEADER_GROUP_DESC, or all events with --group): one table
 * per group, keyed as the leader's, whose rows are every entry of any
 * member (perf's hists__link(): a member's entry the leader lacks joins
 * the leader's table with no period) and whose Overhead has one column
 * per member, each against that member's total; rows sorted by the
 * leader's period, then the members' in order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/group_desc.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "../machine/inline.h"
#include "../machine/intern.h"
#include "../machine/srcline.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tpfmt.h"
#include "../tracepoint/tracedat_lines.h"
#include "../machine/filter.h"
#include "../fleet/fleet_report.h"
#include "../format/header_print.h"
#include "stats.h"
#include "../format/sample_read.h"
#include "../format/thread_stats.h"
#include "report_internal.h"

static void ensure_tp(struct report *r)
{
	size_t len;
	const void *td;

	if (r->tp || r->tp_tried)
		return;
	td = prd_feature(r->f, PD_FEAT_TRACING_DATA, &len);
	if (!td)
		return;
	r->tp_tried = true;
	if (tpfmt_new(td, len, &r->tp))
		pr_warn("tracepoint fields cannot be decoded: the TRACING_DATA is damaged");
	tpfmt_set_resolver(r->tp, machine_kernel_symbol, &r->m);
}

/* The text of id @id of report.src_text (NUL-terminated). */
const char *report_src_str(const struct report *r, uint32_t id)
{
	size_t len;

	return itab_key(&r->src_text, id, &len);
}

/*
 * perf's srcline and srcfile of an entry (sort.c's hist_entry__srcline(),
 * hist_entry__get_srcfile()) at @addr of @dso (NULL: no map, perf's
 * "??:0"), whose symbol @sym holds it at @sym_off: their ids in
 * report.src_text, looked up once per (dso, address).  0 or -ENOMEM.
 */
static int src_ids(struct report *r, struct dso *dso, const struct symbol *sym,
		   uint64_t addr, uint64_t sym_off, uint32_t *line_id,
		   uint32_t *file_id)
{
	const struct {
		uint64_t dso, addr;
	} k = { (uint64_t)(uintptr_t)dso, addr };
	char line[1024], file[1024];
	bool added, from_lines = false;
	uint32_t id;
	size_t n, fl;
	int err;

	err = itab_intern(&r->src_addr, &k, sizeof(k), &id, &added);
	if (err)
		return err;
	if (!added) {
		uint64_t v = r->src_ids.v[id - 1];

		*line_id = (uint32_t)v;
		*file_id = (uint32_t)(v >> 32);
		return 0;
	}
	if (!r->src && !(r->src = srclines_new()))
		return -ENOMEM;
	if (dso)
		n = srcline_report_text(r->src, dso, sym, addr, sym_off, line,
					sizeof(line), &from_lines);
	else
		n = (size_t)snprintf(line, sizeof(line), "??:0");
	/* srcfile: the line's file when the line tables gave it, else "" */
	fl = from_lines ? strcspn(line, ":") : 0;
	memcpy(file, line, fl);
	file[fl] = 0;
	err = itab_intern(&r->src_text, line, n + 1, line_id, NULL);
	if (!err)
		err = itab_intern(&r->src_text, file, fl + 1, file_id, NULL);
	if (!err)
		err = u64v_set(&r->src_ids, id - 1,
			       *line_id | (uint64_t)*file_id << 32);
	return err;
}

/*
 * The entry key of a sample's own location, in @key (its thread in *@tp):
 * 0, 1 when a filter drops the sample before it counts anywhere, or
 * -ENOMEM.
 */
static int sample_key(struct report *r, const struct prd_sample *s,
		      uint8_t cpumode, struct hentry *key, struct thread **tp)
{
	const struct perf_event_attr *pa = &s->attr->attr;
	bool has_tid = pa->sample_type & PERF_SAMPLE_TID;
	struct thread *t;
	struct addr_loc al;

	/* perf report's --time and --cpu drop the sample before it counts
	 * anywhere; -U drops it when its ip has no symbol */
	if (!filter_time(&r->filt, s->time))
		return 1;
	t = machine_findnew_thread(&r->m, has_tid ? (int32_t)s->pid : -1,
				   has_tid ? (int32_t)s->tid : -1);
	if (!t)
		return -ENOMEM;
	machine_resolve(&r->m, t, cpumode, s->ip, true, &al);
	if (r->o.hide_unresolved && !al.sym)
		return 1;
	if (!filter_cpu(&r->filt, (pa->sample_type & PERF_SAMPLE_CPU) ?
					  s->cpu :
					  UINT32_MAX))
		return 1;
	*tp = t;
	memset(key, 0, sizeof(*key));
	key->comm = t->comm;
	key->comm_len = t->comm_len;
	key->tid = t->tid;
	key->thread = t;
	key->dso = al.map ? al.dso : NULL;
	key->sym = al.sym;
	key->ip = al.addr;
	key->level = cpumode == PERF_RECORD_MISC_KERNEL ? 'k' : '.';
	/* perf: -1 when the event does not sample the CPU */
	key->cpu = (pa->sample_type & PERF_SAMPLE_CPU) ? s->cpu : UINT32_MAX;
	/* --comm, --dsos, --symbols: perf counts the sample in the total
	 * (percentages stay absolute) and adds it to its entries as any
	 * other, but the entries it makes (its own and its callchain's)
	 * are hidden. */
	key->filtered = !filter_thread(&r->filt, t) ||
			!filter_location(&r->filt, &al, s->ip);
	if (report_has_key(r, K_TRACE) && pa->type != PERF_TYPE_TRACEPOINT) {
		/* perf's sort__trace: no trace text for other events */
		key->trace = (char *)"N/A";
		key->trace_len = 3;
	} else if (report_has_key(r, K_TRACE) && s->raw) {
		ensure_tp(r);
		r->tb.len = 0;
		tpfmt_print(r->tp, s->raw, s->raw_size, (int)s->cpu, &r->tb);
		key->trace = r->tb.p;
		key->trace_len = (uint32_t)r->tb.len;
	}
	if ((report_has_key(r, K_SRCLINE) || report_has_key(r, K_SRCFILE)) &&
	    src_ids(r, key->dso, al.sym,
		    al.kernel || !key->dso ? s->ip : dso_addr(al.dso, al.addr),
		    al.sym_off, &key->srcline, &key->srcfile))
		return -ENOMEM;
	return 0;
}

/*
 * perf's cumulative entries: every distinct entry of the resolved chain
 * (r->cursor, @n entries, in the order of the trees) gets the sample's
 * @period as Children, once per sample (@he, the sample's own entry,
 * counts as seen), and the part of the chain from it on.
 */
static int add_cumulative(struct report *r, struct hists *h, struct hentry *he,
			  struct hentry *key, uint32_t n, uint64_t period)
{
	uint32_t ncache = 0;

	r->he_cache[ncache++] = he;
	for (uint32_t i = 0; i < n; i++) {
		const struct cent *c = &r->cursor[i];
		struct hentry *ce;
		bool dup = false;

		key->dso = c->dso;
		key->sym = c->sym;
		key->inl = c->inl;
		key->ip = c->ip;
		key->level = c->level;
		/* perf's cumulative entries keep the chain's raw address
		 * (fill_callchain_info()), which their srcline looks up */
		if ((report_has_key(r, K_SRCLINE) ||
		     report_has_key(r, K_SRCFILE)) &&
		    src_ids(r, c->dso, c->sym, c->ip,
			    c->sym ? c->ip - c->sym->start : 0, &key->srcline,
			    &key->srcfile))
			return -ENOMEM;
		for (uint32_t k = 0; k < ncache && !dup; k++)
			dup = hentry_eq(r, r->he_cache[k], key);
		if (dup)
			continue; /* recursion: once per sample */
		ce = hists_findnew_entry(r, h, key);
		if (!ce)
			return -ENOMEM;
		r->he_cache[ncache++] = ce;
		ce->children += period;
		if (callchain_append(&ce->chain, r->cursor + i, n - i, period))
			return -ENOMEM;
		if (n - i > ce->max_depth)
			ce->max_depth = n - i;
	}
	return 0;
}

static int add_sample(struct report *r, const struct prd_sample *s,
		      uint16_t misc)
{
	const struct perf_event_attr *pa = &s->attr->attr;
	struct hists *h = hists_of(r, s->attr);
	struct thread *t = NULL;
	struct hentry key, *he;
	uint64_t period = (pa->sample_type & PERF_SAMPLE_PERIOD) ?
				  s->period :
				  pa->sample_period;
	uint8_t cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint32_t n = 0;
	bool chain = r->use_callchain &&
		     (pa->sample_type & PERF_SAMPLE_CALLCHAIN) && s->callchain;
	int ret;

	if (!h)
		return -ENOMEM;
	ret = sample_key(r, s, cpumode, &key, &t);
	if (ret)
		return ret > 0 ? 0 : ret;
	he = hists_findnew_entry(r, h, &key);
	if (!he)
		return -ENOMEM;
	he->self += period;
	he->nr_samples++;
	h->total += period;
	h->nr_samples++;
	if (r->children)
		he->children += period;
	if (!chain)
		return 0;
	n = callchain_resolve(r, t, s);
	if (r->caller)
		cents_reverse(r->cursor, n); /* caller order */
	/* perf's fill_callchain_info() updates one addr_location entry by
	 * entry: one without a map keeps the level of the mapped one before
	 * it (the sample's at first). */
	for (uint32_t i = 0, lvl = (uint32_t)key.level; i < n; i++) {
		if (r->cursor[i].dso)
			lvl = (uint32_t)r->cursor[i].level;
		else
			r->cursor[i].level = (char)lvl;
	}
	if (n) {
		if (callchain_append(&he->chain, r->cursor, n, period))
			return -ENOMEM;
		if (n > he->max_depth)
			he->max_depth = n;
	}
	if (!r->children)
		return 0;
	return add_cumulative(r, h, he, &key, n, period);
}

static void setup(struct report *r)
{
	uint32_t n = prd_nr_attrs(r->f);
	bool any_chain = false;
	const char *host, *rel;
	struct utsname u;

	bool all_tp = n > 0;

	r->setup = true;
	for (uint32_t i = 0; i < n; i++) {
		const struct prd_attr *a = prd_attr(r->f, i);

		if (a && (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN))
			any_chain = true;
		if (!a || a->attr.type != PERF_TYPE_TRACEPOINT)
			all_tp = false;
	}
	/* perf's default for files of tracepoints only: the trace text. */
	if (!r->sort_given && all_tp) {
		r->keys[0] = K_TRACE;
		r->nkeys = 1;
		/* nothing left to elide */
		free(r->elided);
		r->elided = NULL;
		memset(r->hidden, 0, sizeof(r->hidden));
	}
	r->use_callchain = any_chain;
	/* perf: --children is the default, and means nothing (is dropped
	 * silently) when the file has no callchains */
	r->children = any_chain && !r->o.no_children;
	r->children_col = r->children && !r->fields;
	/* perf: caller order with children, callee order without, unless
	 * -g says which */
	r->caller = r->o.callchain_order ? r->o.callchain_order == 1 :
					   r->children;
	host = prd_feature_string(r->f, PD_FEAT_HOSTNAME);
	rel = prd_feature_string(r->f, PD_FEAT_OSRELEASE);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	machine_set_host(&r->m, (!host || !strcmp(host, u.nodename)) &&
					(!rel || !strcmp(rel, u.release)));
}

struct report_read {
	struct report *r;
	const struct prd_sample *s;
	uint16_t misc;
};

/* One read value of a PERF_SAMPLE_READ sample, as its event's sample
 * (perf's deliver_sample_value()). */
static int add_read_value(void *ctx, const struct prd_attr *a, uint64_t id,
			  uint64_t delta)
{
	struct report_read *rr = ctx;
	struct prd_sample one = *rr->s;

	one.attr = a;
	one.id = id;
	one.period = delta;
	return add_sample(rr->r, &one, rr->misc);
}

/* Whether the build-id table's @name (a path for a module's .ko) names
 * @dso ("[kernel.kallsyms]", "[vdso]", a path, "[module_name]"). */
static bool buildid_names(const struct dso *dso, const char *name, size_t n)
{
	const char *base = memrchr(name, '/', n), *ko;
	size_t len;

	if (strlen(dso->name) == n && !memcmp(dso->name, name, n))
		return true;
	if (dso->kind != DSO_KMODULE || !base)
		return false;
	base++;
	ko = memmem(base, n - (size_t)(base - name), ".ko", 3);
	len = ko ? (size_t)(ko - base) : 0;
	if (!len || strlen(dso->name) != len + 2)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = base[i] == '-' ? '_' : base[i];

		if (dso->name[i + 1] != c)
			return false;
	}
	return true;
}

/* perf report creates the DSOs of the file's build-id table first (in
 * its order), the others as the records name them: that is the order of
 * its struct dso addresses, which break ties between call-graph
 * branches, and place the branches in its trees as they come (cent_cmp()).
 * Set once per DSO, when a chain first names it: 1 + its place in the
 * table, or, for one the table does not name, after every table entry in
 * creation order. */
uint32_t report_dso_order(const struct report *r, struct dso *d)
{
	struct prd_record_header_build_id e;
	size_t len = 0, off = 0;
	const uint8_t *p;
	uint32_t i = 0, rsz;

	if (!d || d->order)
		return d ? d->order : 0;
	p = prd_feature(r->f, PRD_FEAT_BUILD_ID, &len);
	while (p && (rsz = prd_build_id_entry(p + off, len - off, &e))) {
		if (buildid_names(d, e.filename ? e.filename : "",
				  e.filename_len))
			return d->order = 1 + i;
		off += rsz;
		i++;
	}
	/* past any table: at most one entry per 36 bytes */
	return d->order = 1 + (uint32_t)(len / 36) + 1 + d->serial;
}

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct report *r = ctx;
	const struct perf_event_header *h = ev->hdr;

	if (r->o.header && h->type == PRD_REC_HEADER_FEATURE)
		header_print_feature_record(f, ev, r->o.show_info, r->out);
	if (r->tstats && h->type == PERF_RECORD_READ)
		return thread_stats_add(r->tstats, f, ev);
	if (r->o.header_only)
		return 0;
	if (h->type == PERF_RECORD_LOST_SAMPLES) {
		r->lost_samples += ev->rec->lost_samples.lost;
		return 0;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return machine_process(&r->m, ev->rec) == -ENOMEM ? -ENOMEM : 0;
	if (!ev->sample || !ev->sample->attr)
		return 0;
	if (r->o.tasks || r->o.mmaps)
		return 0;
	if (!r->setup)
		setup(r);
	if (ev->sample->attr->attr.sample_type & PERF_SAMPLE_READ) {
		struct report_read rr = { r, ev->sample, h->misc };

		return sread_each(&r->rd, f, ev->sample, add_read_value, &rr);
	}
	return add_sample(r, ev->sample, h->misc);
}

/* The one-entry filter lists: their key leaves the columns and a
 * "# comm: bash" line says what it is, in the order of the sort keys. */
static int setup_elide(struct report *r)
{
	size_t len = 0;

	if (r->nkeys == 1)
		return 0; /* perf keeps the last column */
	for (int i = 0; i < r->nkeys; i++) {
		enum sort_key k = r->keys[i];
		char **list = k == K_DSO  ? r->filt.dsos :
			      k == K_COMM ? r->filt.comms :
			      k == K_SYM  ? r->filt.syms :
					    NULL;
		const char *name = k == K_DSO  ? "dso" :
				   k == K_COMM ? "comm" :
						 "symbol";
		char *more;

		if (!list || !list[0] || list[1])
			continue;
		more = realloc(r->elided, len + strlen(list[0]) + 16);
		if (!more)
			return -ENOMEM;
		r->elided = more;
		len += (size_t)sprintf(more + len, "# %s: %s\n", name, list[0]);
		r->hidden[k] = true;
	}
	return 0;
}

static void free_hists(struct report *r)
{
	for (uint32_t i = 0; i < r->nr_h; i++) {
		struct hists *h = &r->h[i];

		for (uint32_t j = 0; h->tab && j <= h->mask; j++) {
			struct hentry *e = h->tab[j], *n;

			for (; e; e = n) {
				n = e->next;
				cnode_free_children(&e->chain);
				free(e->trace);
				free(e);
			}
		}
		free(h->tab);
	}
	free(r->h);
}

/* @word among @list's comma-separated words */
/* --time (its percent forms over the file's SAMPLE_TIME), --cpu (every
 * event must sample the CPU, as perf_session__cpu_bitmap() wants),
 * --max-stack, -t. */
static int setup_filters(struct report *r)
{
	const char *range = r->o.time_range;

	if (range && strchr(range, '%')) {
		size_t len;
		const unsigned char *st =
			prd_feature(r->f, PD_FEAT_SAMPLE_TIME, &len);
		uint64_t first = 0, last = 0;

		if (st && len >= 16) {
			memcpy(&first, st, 8);
			memcpy(&last, st + 8, 8);
		}
		if (!first && !last) {
			pr_err("--time %s: the file has no first and last sample time (SAMPLE_TIME)",
			       range);
			return -EINVAL;
		}
		if (filter_set_time_pct(&r->filt, range, first, last))
			return -EINVAL;
	} else if (filter_set_time(&r->filt, range)) {
		return -EINVAL;
	}
	for (uint32_t i = 0; r->filt.cpus && i < prd_nr_attrs(r->f); i++) {
		const struct prd_attr *a = prd_attr(r->f, i);

		if (a && !(a->attr.sample_type & PERF_SAMPLE_CPU)) {
			pr_err("--cpu: the file's events do not sample the CPU");
			return -EINVAL;
		}
	}
	r->max_stack = r->o.has_max_stack && r->o.max_stack < MAX_STACK ?
			       r->o.max_stack :
			       MAX_STACK;
	r->sep = r->o.field_sep && *r->o.field_sep ? r->o.field_sep : NULL;
	return 0;
}

/* The options into the report's keys, filters and elided columns. */
static int setup_options(struct report *r)
{
	int err = report_parse_sort(r);

	if (!err)
		err = filter_set_comms(&r->filt, r->o.comm_list);
	if (!err)
		err = filter_set_dsos(&r->filt, r->o.dso_list);
	if (!err)
		err = filter_set_syms(&r->filt, r->o.symbols);
	if (!err)
		err = filter_set_pids(&r->filt,
				      OPTS_GET(&r->o, pid_list, NULL));
	if (!err)
		err = filter_set_tids(&r->filt,
				      OPTS_GET(&r->o, tid_list, NULL));
	if (!err)
		err = filter_set_cpus(&r->filt,
				      OPTS_GET(&r->o, cpu_list, NULL));
	if (!err)
		err = setup_elide(r);
	return err;
}

/*
 * After the records: the header lines and every table (@saved:
 * -EBADMSG for a damaged file, whose records before the damage are
 * reported), then -T's.
 */
static int print_tables(struct report *r, FILE *out, int saved)
{
	bool first = true;
	int err;

	/* perf's first line points at its --header options; ours have
	 * perfring dump and stats instead (the header block ends as those
	 * two lines do). */
	if (!r->o.header && !r->o.quiet) {
		ob_puts(&r->ob, "# ");
		ob_puts(&r->ob, r->o.input ? r->o.input : "perf.data");
		ob_puts(&r->ob,
			" (header and records: perfring dump, perfring stats)\n#\n");
	}
	if (r->elided)
		ob_puts(&r->ob, r->elided);
	if (!r->o.quiet) {
		ob_puts(&r->ob, "#\n# Total Lost Samples: ");
		ob_u64(&r->ob, r->lost_samples, 0, ' ');
		ob_puts(&r->ob, "\n#\n");
	}
	err = report_print_all(r, &first);
	if (err)
		return err;
	if (first)
		pr_warn("%s has no samples",
			r->o.input ? r->o.input : "perf.data");
	ob_puts(&r->ob, "\n\n");
	ob_flush(&r->ob);
	if (r->tstats)
		thread_stats_print(r->tstats, r->f, out);
	err = saved ? saved : r->ob.err;
	if (!err && fflush(out))
		err = -errno;
	return err;
}

/* What the records built: threads, entries, the caches. */
static void free_model(struct report *r)
{
	thread_stats_free(r->tstats);
	free_hists(r);
	sread_free(&r->rd);
	machine_exit(&r->m);
	inlines_free(r->inl);
	srclines_free(r->src);
	for (uint32_t i = 0; i < r->nr_isyms; i++)
		free(r->isyms[i]);
	free(r->isyms);
	itab_free(&r->isym_ids);
	itab_free(&r->src_text);
	itab_free(&r->src_addr);
	free(r->src_ids.v);
}

static void free_report(struct report *r)
{
	filter_free(&r->filt);
	free(r->elided);
	tpfmt_free(r->tp);
	free(r->tb.p);
	free(r->ob.p);
	free(r);
}

/* The records, in time order, into the model; --tasks and --mmaps
 * print it. */
static int read_records(struct report *r, FILE *out)
{
	int err = 0, saved;

	if (r->o.show_threads && !r->o.header_only)
		err = thread_stats_new(&r->tstats);
	if (!err)
		err = prd_process(r->f, true, on_event, r);
	if ((r->o.tasks || r->o.mmaps) && (!err || err == -EBADMSG)) {
		saved = err;
		err = report_print_tasks(r);
		if (!err && fflush(out))
			err = -errno;
		if (!err)
			err = saved;
	}
	return err;
}

PERFRING_API int perfring_report(const struct perfring_report_opts *opts,
				 FILE *out)
{
	struct report *r;
	int err;

	if (!opts || !out || !OPTS_VALID(opts) ||
	    opts->sz < offsetof(struct perfring_report_opts, sort))
		return -EINVAL;
	/* --from clickhouse=URL: a fleet's samples (fleet_report.c). */
	if (OPTS_GET(opts, from, NULL))
		return fleet_report_run(opts, out);
	/* A trace.dat (perfring record --tracefs-event): its events as
	 * trace-cmd report lists them. */
	if (opts->input && strcmp(opts->input, "-") &&
	    perfring_trace_dat_probe(opts->input) == 1)
		return tdat_report(opts->input, out);
	if (OPTS_GET(opts, stats, false))
		return report_stats_perf(
			opts->input ? opts->input : "perf.data", out);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	OPTS_COPY(&r->o, opts);
	err = setup_options(r);
	if (!err)
		err = ob_init(&r->tb, NULL);
	if (err)
		goto out_free;
	err = ob_init(&r->ob, out);
	if (!err)
		err = machine_init(&r->m);
	if (err)
		goto out_free;
	r->m.dsos.symfs = OPTS_GET(&r->o, symfs, NULL);
	err = prd_open(r->o.input ? r->o.input : "perf.data", &r->f);
	if (err)
		goto out_machine;
	err = machine_use_build_ids(&r->m, r->f);
	if (err)
		goto out_close;
	r->out = out;
	err = setup_filters(r);
	if (err)
		goto out_close;
	if (r->o.header_only)
		r->o.header = true;
	if (r->o.header) {
		err = header_print(r->f, r->o.show_info, out);
		/* A pipe's features come as records: read on to print them. */
		if (err || (r->o.header_only && !prd_is_pipe(r->f)))
			goto out_close;
	}
	err = read_records(r, out);
	if (r->o.tasks || r->o.mmaps || r->o.header_only ||
	    (err && err != -EBADMSG))
		goto out_close;
	/* A damaged file: report what was read before the damage. */
	err = print_tables(r, out, err);
out_close:
	prd_close(r->f);
out_machine:
	free_model(r);
out_free:
	free_report(r);
	return err;
}
