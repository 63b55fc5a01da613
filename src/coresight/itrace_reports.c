// SPDX-License-Identifier: MIT
/*
 * What the decoded instruction ranges become: perf script --itrace's
 * lines (ranges disassembled), perf report --itrace's hot spots by object
 * and symbol, and simpleperf inject's AutoFDO branch and range counts.
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/auxtrace.h"
#include "../format/out_file.h"
#include "../format/perf_reader.h"
#include "../format/safe_open.h"
#include "../machine/symbols.h"
#include "cs_decode.h"
#include "cs_snapshot.h"
#include "itrace_internal.h"

void itr_cnt_free(struct cnt_map *m)
{
	if (m) {
		free(m->e);
		free(m);
	}
}

static size_t cnt_hash(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 32));
}

/* Adds @n to the count of (@a, @b); the map is created on first use. */
static int cnt_add(struct cnt_map **mp, uint64_t a, uint64_t b, uint64_t n)
{
	struct cnt_map *m = *mp;
	size_t i;

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->mask = 63;
		m->e = calloc(64, sizeof(*m->e));
		if (!m->e) {
			free(m);
			return -ENOMEM;
		}
		*mp = m;
	}
	if ((m->nr + 1) * 2 > m->mask) {
		size_t nmask = m->mask * 2 + 1;
		struct cnt_ent *ne = calloc(nmask + 1, sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		for (size_t j = 0; j <= m->mask; j++) {
			if (!m->e[j].n)
				continue;
			i = cnt_hash(m->e[j].a, m->e[j].b) & nmask;
			while (ne[i].n)
				i = (i + 1) & nmask;
			ne[i] = m->e[j];
		}
		free(m->e);
		m->e = ne;
		m->mask = nmask;
	}
	i = cnt_hash(a, b) & m->mask;
	while (m->e[i].n && (m->e[i].a != a || m->e[i].b != b))
		i = (i + 1) & m->mask;
	if (!m->e[i].n) {
		m->e[i].a = a;
		m->e[i].b = b;
		m->nr++;
	}
	m->e[i].n = m->e[i].n + n < m->e[i].n ? UINT64_MAX : m->e[i].n + n;
	return 0;
}

static int cnt_cmp(const void *x, const void *y)
{
	const struct cnt_ent *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return 0;
}

/* The entries sorted by (a, b); caller frees; NULL when empty. */
static struct cnt_ent *cnt_sorted(const struct cnt_map *m, size_t *nr)
{
	struct cnt_ent *v;
	size_t k = 0;

	*nr = 0;
	if (!m || !m->nr)
		return NULL;
	v = malloc(m->nr * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t j = 0; j <= m->mask; j++)
		if (m->e[j].n)
			v[k++] = m->e[j];
	qsort(v, k, sizeof(*v), cnt_cmp);
	*nr = k;
	return v;
}

/* ---- consumers of the instruction ranges ---- */

static int cpu_of(struct itr *it, uint8_t id)
{
	const struct cs_etm_cpu *c;

	if (!it->info)
		return -1;
	c = cs_etm_info_by_trace_id(it->info, id);
	return c ? (int)c->cpu : -1;
}

/* The file offset of @addr in map @m as a binary virtual address. */
static uint64_t map_vaddr(const struct map *m, uint64_t addr)
{
	uint64_t off = addr - m->start + m->pgoff;

	for (uint32_t i = 0; i < m->bin->nr_segs; i++) {
		const struct load_seg *sg = &m->bin->segs[i];

		if (off >= sg->off && off - sg->off < sg->len)
			return off - sg->off + sg->vaddr;
	}
	return off;
}

/* Target of the A64 direct branch at @pc (B, BL, B.cond, CB(N)Z,
 * TB(N)Z); false when @w is none of them. */
static bool a64_branch_target(uint32_t w, uint64_t pc, uint64_t *to)
{
	int64_t off;

	if ((w & 0x7c000000) == 0x14000000) /* B, BL: imm26 */
		off = (int64_t)((uint64_t)(w & 0x03ffffff) << 38) >> 36;
	else if ((w & 0xff000010) == 0x54000000 || /* B.cond: imm19 */
		 (w & 0x7e000000) == 0x34000000) /* CBZ, CBNZ */
		off = (int64_t)((uint64_t)((w >> 5) & 0x7ffff) << 45) >> 43;
	else if ((w & 0x7e000000) == 0x36000000) /* TBZ, TBNZ: imm14 */
		off = (int64_t)((uint64_t)((w >> 5) & 0x3fff) << 50) >> 48;
	else
		return false;
	*to = pc + (uint64_t)off;
	return true;
}

static struct dso *bin_dso(struct itr *it, struct bin *b)
{
	const char *n;

	if (b->dso)
		return b->dso;
	if (!it->dsos_ok) {
		if (dsos_init(&it->dsos, false) < 0)
			return NULL;
		it->dsos_ok = true;
	}
	itr_bin_find(it, b);
	if (!b->path || !b->has_syms)
		return NULL; /* not found, or stripped of every symbol */
	n = b->path;
	b->dso = dsos_findnew(&it->dsos, n, strlen(n));
	return b->dso;
}

/* Object name and symbol+offset of runtime address @addr. */
static void describe(struct itr *it, uint8_t id, uint64_t addr,
		     const char **obj, const char **sym, uint64_t *symoff,
		     struct bin **bp, uint64_t *vaddr)
{
	struct map *m = it->snap ? NULL : itr_find_map(it, addr, id);

	*obj = it->snap ? "[snapshot memory]" : "[unknown]";
	*sym = NULL;
	*symoff = 0;
	*bp = NULL;
	*vaddr = addr;
	if (!m)
		return;
	*bp = m->bin;
	*obj = m->bin->name;
	*vaddr = map_vaddr(m, addr);
	if (m->bin->name[0] != '[') {
		struct dso *d = bin_dso(it, m->bin);
		const struct symbol *sy = d ? dso_find_symbol(d, *vaddr) : NULL;

		if (sy) {
			*sym = sy->name;
			*symoff = *vaddr - sy->start;
		}
	}
}

/* script: a line per range, its instructions below. */
static int script_elem(struct itr *it, uint64_t idx, uint8_t id,
		       const ocsd_generic_trace_elem *el)
{
	struct outbuf *ob = it->ob;
	const char *obj, *sym;
	uint64_t symoff, vaddr, len;
	struct bin *b;
	int cpu;

	(void)idx;
	if (el->elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE)
		return 0;
	describe(it, id, el->st_addr, &obj, &sym, &symoff, &b, &vaddr);
	cpu = cpu_of(it, id);
	ob_puts(ob, "FILE: ");
	ob_puts(ob, obj);
	if (cpu >= 0) {
		ob_puts(ob, " CPU: ");
		ob_s64(ob, cpu, 0);
	} else if (it->snap && css_core_of(it->snap, id)) {
		ob_puts(ob, " CPU: ");
		ob_puts(ob, css_core_of(it->snap, id));
	}
	ob_puts(ob, " ID: ");
	ob_x64(ob, id, 0);
	ob_puts(ob, " range 0x");
	ob_x64(ob, el->st_addr, 0);
	ob_puts(ob, "-0x");
	ob_x64(ob, el->en_addr, 0);
	ob_puts(ob, " insns ");
	ob_u64(ob, el->num_instr_range, 0, ' ');
	if (sym) {
		ob_puts(ob, " <");
		ob_puts(ob, sym);
		ob_puts(ob, "+0x");
		ob_x64(ob, symoff, 0);
		ob_putc(ob, '>');
	}
	ob_putc(ob, '\n');
	ob_line_done(ob);
	if (it->io->no_disasm || el->en_addr <= el->st_addr)
		return ob->err;
	len = el->en_addr - el->st_addr;
	if (len > 65536)
		len = 65536;
	{
		uint8_t code[65536];
		size_t got =
			itr_read_code(it, id, el->st_addr, code, (size_t)len);
		const uint8_t *p = code;
		uint64_t pc = el->st_addr;
		unsigned shown = 0;
		cs_insn *ins = it->cs_ok ? cs_malloc(it->cs) : NULL;

		while (got >= 4 &&
		       (!it->io->max_insns || shown < it->io->max_insns)) {
			uint32_t w;
			size_t sz = got;
			uint64_t a = pc;

			memcpy(&w, p, 4);
			ob_x64(ob, pc, 18);
			ob_puts(ob, ":   ");
			ob_x64(ob, w, 0);
			ob_room(ob, 16);
			ob_puts(ob, "        ");
			if (ins && el->isa == ocsd_isa_aarch64 &&
			    cs_disasm_iter(it->cs, &p, &sz, &a, ins)) {
				ob_puts(ob, ins->mnemonic);
				if (ins->op_str[0]) {
					ob_putc(ob, '\t');
					ob_puts(ob, ins->op_str);
				}
				got = sz;
				pc = a;
			} else {
				ob_puts(ob, "(undecoded)");
				p += 4;
				got -= 4;
				pc += 4;
			}
			ob_putc(ob, '\n');
			ob_line_done(ob);
			shown++;
		}
		if (ins)
			cs_free(ins, 1);
		if (!got && pc < el->en_addr) {
			ob_puts(ob, "        (code not available)\n");
			ob_line_done(ob);
		}
	}
	return ob->err;
}

/* script: a comment line where each AUXTRACE chunk (a snapshot) starts. */
static int script_chunk(struct itr *it, size_t i,
			const struct auxtrace_chunk *c)
{
	struct outbuf *ob = it->ob;

	ob_puts(ob, "# AUXTRACE chunk ");
	ob_u64(ob, i, 0, ' ');
	ob_puts(ob, ": offset 0x");
	ob_x64(ob, c->offset, 0);
	ob_puts(ob, " size 0x");
	ob_x64(ob, c->size, 0);
	ob_puts(ob, " cpu ");
	ob_s64(ob, (int32_t)c->cpu, 0);
	ob_putc(ob, '\n');
	ob_line_done(ob);
	return ob->err;
}

/* report: instructions per object and symbol (or start address). */
struct hot {
	struct bin *bin;
	const char *obj, *sym;
	uint64_t key; /* symbol start or range start (vaddr) */
	uint64_t insns, ranges;
};

struct hot_tab {
	struct hot *v;
	size_t nr, cap;
	struct cnt_map *idx; /* (bin ptr, key) -> index + 1 */
};

static struct hot_tab *hot_tab_of(struct itr *it)
{
	return (struct hot_tab *)(void *)it->ob; /* set by report */
}

static int report_elem(struct itr *it, uint64_t idx, uint8_t id,
		       const ocsd_generic_trace_elem *el)
{
	struct hot_tab *t = hot_tab_of(it);
	const char *obj, *sym;
	uint64_t symoff, vaddr, key, slot;
	struct bin *b;
	size_t i;

	(void)idx;
	(void)id;
	if (el->elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE)
		return 0;
	describe(it, id, el->st_addr, &obj, &sym, &symoff, &b, &vaddr);
	key = sym ? vaddr - symoff : vaddr;
	/* find (bin, key, sym?) */
	slot = (uint64_t)(uintptr_t)b ^ (sym ? 1 : 0);
	for (i = 0; t->idx && i <= t->idx->mask; i = t->idx->mask + 1) {
		size_t h = cnt_hash(slot, key) & t->idx->mask;

		while (t->idx->e[h].n &&
		       (t->idx->e[h].a != slot || t->idx->e[h].b != key))
			h = (h + 1) & t->idx->mask;
		i = t->idx->e[h].n ? t->idx->e[h].n : 0;
		break;
	}
	if (!t->idx || !i) {
		struct hot *h;

		if (t->nr == t->cap) {
			size_t nc = t->cap ? t->cap * 2 : 256;
			struct hot *nv = realloc(t->v, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			t->v = nv;
			t->cap = nc;
		}
		h = &t->v[t->nr++];
		*h = (struct hot){ b, obj, sym, key, 0, 0 };
		if (cnt_add(&t->idx, slot, key, t->nr) < 0)
			return -ENOMEM;
		i = t->nr;
	}
	t->v[i - 1].insns += el->num_instr_range;
	t->v[i - 1].ranges++;
	return 0;
}

static int hot_cmp(const void *x, const void *y)
{
	const struct hot *p = x, *q = y;

	if (p->insns != q->insns)
		return p->insns > q->insns ? -1 : 1;
	return p->key < q->key ? -1 : p->key > q->key;
}

/* inject: simpleperf's AutoFDO counting (see perfring_inject()). */
static int inject_flush(struct tid_state *ts)
{
	int ret = 0;

	if (ts->pending && ts->bin) {
		ret = cnt_add(&ts->bin->ranges, ts->start, ts->end, 1);
		if (!ret && ts->taken)
			ret = cnt_add(&ts->bin->branches, ts->end, ts->target,
				      1);
	}
	ts->pending = false;
	ts->fix_target = false;
	return ret;
}

static int inject_elem(struct itr *it, uint64_t idx, uint8_t id,
		       const ocsd_generic_trace_elem *el)
{
	struct tid_state *ts = &it->ts[id & 0x7f];
	struct map *m;
	uint64_t start, last;
	bool br;
	int ret;

	(void)idx;
	if (el->elem_type == OCSD_GEN_TRC_ELEM_TRACE_ON)
		return inject_flush(ts); /* a discontinuity */
	if (el->elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE)
		return 0;
	m = itr_find_map(it, el->st_addr, id);
	if (!m)
		return inject_flush(ts);
	start = map_vaddr(m, el->st_addr);
	/* The next range's start is where a taken branch went. */
	if (ts->pending && ts->fix_target)
		ts->target = start;
	ret = inject_flush(ts);
	if (ret)
		return ret;
	last = el->en_addr - el->last_instr_sz;
	br = el->last_i_type == OCSD_INSTR_BR ||
	     el->last_i_type == OCSD_INSTR_BR_INDIRECT;
	ts->pending = true;
	ts->bin = m->bin;
	ts->start = start;
	ts->end = map_vaddr(m, last);
	ts->taken = br && el->last_instr_exec;
	ts->target = 0;
	if (ts->taken && el->last_i_type == OCSD_INSTR_BR) {
		uint8_t code[4];
		uint32_t w;
		uint64_t to;

		/* Until the next range shows it: the encoded target. */
		if (itr_read_code(it, id, last, code, 4) == 4) {
			memcpy(&w, code, 4);
			if (a64_branch_target(w, last, &to))
				ts->target = map_vaddr(m, to);
		}
		ts->fix_target = true;
	}
	return 0;
}

int perfring_itrace_script(const struct perfring_itrace_opts *o, FILE *out,
			   struct perfring_cs_stats *st)
{
	struct perfring_itrace_opts oc;
	struct itr it;
	struct outbuf ob;
	int ret, ret2;

	if (!o || !OPTS_VALID(o))
		return -EINVAL;
	OPTS_COPY(&oc, o);
	o = &oc;
	ret = itr_ob_open(&ob, out);
	if (ret)
		return ret;
	ret = itr_begin(&it, o);
	if (!ret) {
		it.ob = &ob;
		it.elem = script_elem;
		it.chunk_fn = script_chunk;
		if (!o->no_disasm &&
		    cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &it.cs) == CS_ERR_OK)
			it.cs_ok = true;
		ret = itr_run(&it, &ob);
	}
	ret2 = itr_ob_close(&ob);
	itr_copy_stats(st, &it.st);
	itr_free(&it);
	return ret ? ret : ret2;
}

int perfring_itrace_report(const struct perfring_itrace_opts *o, FILE *out,
			   struct perfring_cs_stats *st)
{
	struct itr it;
	struct hot_tab t = { 0 };
	struct perfring_itrace_opts oc;
	struct outbuf ob;
	int ret, ret2;

	if (!o || !OPTS_VALID(o))
		return -EINVAL;
	OPTS_COPY(&oc, o);
	o = &oc;
	ret = itr_ob_open(&ob, out);
	if (ret)
		return ret;
	ret = itr_begin(&it, o);
	if (!ret) {
		uint64_t total = 0;

		it.ob = (struct outbuf *)(void *)&t;
		it.elem = report_elem;
		ret = itr_run(&it, &ob);
		for (size_t i = 0; i < t.nr; i++)
			total += t.v[i].insns;
		if (t.nr)
			qsort(t.v, t.nr, sizeof(*t.v), hot_cmp);
		fprintf(out,
			"# Instructions executed: %llu in %llu ranges "
			"(%llu trace bytes decoded)\n"
			"#\n"
			"# Overhead  Instructions    Ranges  Shared Object  "
			"Symbol\n"
			"# ........  ............  ........  .............  "
			"......\n"
			"#\n",
			(unsigned long long)total,
			(unsigned long long)it.st.ranges,
			(unsigned long long)it.st.bytes);
		for (size_t i = 0; i < t.nr; i++) {
			const struct hot *h = &t.v[i];
			const char *base = strrchr(h->obj, '/');
			char sym[64];

			if (!h->sym)
				snprintf(sym, sizeof(sym), "0x%016llx",
					 (unsigned long long)h->key);
			fprintf(out, "%9.2f%%  %12llu  %8llu  %-13s  [.] %s\n",
				total ? 100.0 * (double)h->insns /
						(double)total :
					0.0,
				(unsigned long long)h->insns,
				(unsigned long long)h->ranges,
				base ? base + 1 : h->obj,
				h->sym ? h->sym : sym);
		}
		if (ferror(out) || fflush(out))
			ret = errno == EPIPE ? -EPIPE : -EIO;
	}
	free(t.v);
	itr_cnt_free(t.idx);
	ret2 = itr_ob_close(&ob);
	itr_copy_stats(st, &it.st);
	itr_free(&it);
	return ret ? ret : ret2;
}

/*
 * AutoFDO counts as simpleperf inject computes them: each instruction
 * range (start, address of its last instruction) counts once; a range
 * ending with a taken branch counts the branch (last instruction, start
 * of the next range of that trace ID; for an indirect branch or when no
 * range follows, the encoded target of a direct branch, else 0).  A
 * TRACE_ON or a range outside every mapping cuts the chain.  Addresses
 * are binary virtual addresses minus the first PT_LOAD's.
 */
int perfring_inject(const struct perfring_itrace_opts *o, const char *output,
		    struct perfring_cs_stats *st)
{
	struct perfring_itrace_opts oc;
	struct itr it;
	FILE *f = NULL;
	int ret, nbins = 0;

	if (!o || !output || !OPTS_VALID(o))
		return -EINVAL;
	OPTS_COPY(&oc, o);
	o = &oc;
	if (o->snapshot) {
		pr_err("inject: needs a perf.data (binaries come from its "
		       "MMAP records)");
		return -EINVAL;
	}
	ret = itr_begin(&it, o);
	if (!ret) {
		it.elem = inject_elem;
		ret = itr_run(&it, NULL);
		for (int i = 0; i < 128 && !ret; i++)
			ret = inject_flush(&it.ts[i]);
	}
	if (!ret) {
		int fd = -1;

		if (!strcmp(output, "-"))
			f = stdout;
		else if ((fd = out_file_open(output, 0)) < 0)
			ret = fd;
		else if (!(f = fdopen(fd, "w"))) {
			ret = -errno;
			close(fd);
		}
	}
	/* Binaries in path order, as simpleperf sorts them. */
	for (uint32_t i = 0; !ret && i < it.nr_bins; i++)
		if (it.bins[i]->ranges)
			nbins++;
	if (!ret && nbins > 1)
		fprintf(f, "// Please split this file. AutoFDO only accepts "
			   "profile for one binary.\n");
	for (int done = 0; !ret && done < nbins; done++) {
		struct bin *b = NULL;
		struct cnt_ent *v;
		size_t nr;
		uint64_t base;

		for (uint32_t i = 0; i < it.nr_bins; i++) {
			struct bin *c = it.bins[i];

			if (c->ranges && c->ranges->nr != (size_t)-1 &&
			    (!b || strcmp(c->name, b->name) < 0))
				b = c;
		}
		if (!b)
			break;
		base = b->nr_segs ? b->segs[0].vaddr : 0;
		for (uint32_t k = 1; k < b->nr_segs; k++)
			if (b->segs[k].vaddr < base)
				base = b->segs[k].vaddr;
		v = cnt_sorted(b->ranges, &nr);
		fprintf(f, "%zu\n", nr);
		for (size_t k = 0; k < nr; k++)
			fprintf(f, "%llx-%llx:%llu\n",
				(unsigned long long)(v[k].a ? v[k].a - base :
							      0),
				(unsigned long long)(v[k].b ? v[k].b - base :
							      0),
				(unsigned long long)v[k].n);
		free(v);
		fprintf(f, "0\n");
		v = cnt_sorted(b->branches, &nr);
		fprintf(f, "%zu\n", nr);
		for (size_t k = 0; k < nr; k++)
			fprintf(f, "%llx->%llx:%llu\n",
				(unsigned long long)(v[k].a ? v[k].a - base :
							      0),
				(unsigned long long)(v[k].b ? v[k].b - base :
							      0),
				(unsigned long long)v[k].n);
		free(v);
		fprintf(f, "// build_id: 0x");
		for (int k = 0; k < 20; k++)
			fprintf(f, "%02x",
				k < b->build_id_size ? b->build_id[k] : 0);
		fprintf(f, "\n// %s\n\n", b->name);
		b->ranges->nr = (size_t)-1; /* written */
	}
	if (f && f != stdout && fclose(f) && !ret)
		ret = -errno;
	else if (f == stdout && fflush(f) && !ret)
		ret = -errno;
	itr_copy_stats(st, &it.st);
	itr_free(&it);
	return ret;
}
