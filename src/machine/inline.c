// SPDX-License-Identifier: MIT
/*
 * Inlined frames through libdw (see inline.h).  For an address,
 * dwarf_getscopes() finds the innermost scope DIE that holds it and
 * dwarf_getscopes_die() its lexical parents; every inlined subroutine
 * among them, then the subprogram that holds them, is one frame, named
 * as addr2line names it: the linkage name first, else DW_AT_name, both
 * through DW_AT_abstract_origin / DW_AT_specification.  perf demangles
 * the name and compares it with the symbol's: the same name is the
 * symbol's own frame, any other (an inlined callee, or "scaled" for the
 * clone scaled.constprop.0) is printed "name+0x.. (inlined)".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include "inline.h"
#include "intern.h"

/* Bounds on what one lookup reads of a (perhaps hostile) object. */
#define INLINE_MAX_DEPTH 256u /* DIE nesting */
#define INLINE_MAX_DIES (1u << 22) /* DIEs visited */
#define INLINE_MAX_RANGES 4096u /* ranges of one DIE */

/* One looked-up address: frames[first .. first + nr). */
struct inline_entry {
	const struct dso *dso; /* NULL: empty slot */
	uint64_t addr;
	uint32_t first, nr;
};

/* A function DIE addr2line renamed after its ELF symbol (see
 * innermost_name()), by the DIE's offset. */
struct renamed {
	const struct dso *dso; /* NULL: empty slot */
	uint64_t die;
	uint32_t name; /* itab id */
};

struct inline_frame {
	uint32_t name; /* itab id; 0: the symbol's own frame */
	uint32_t src; /* itab id of its "file.c:12" */
};

struct inlines {
	struct srclines *src;
	struct inline_entry *tab;
	uint32_t mask, used;
	struct inline_frame *frames;
	uint32_t nr_frames, cap_frames;
	struct itab names;
	struct renamed *ren;
	uint32_t ren_mask, ren_used;
	/* find_chain(): the DIEs from the CU down, and its answer */
	Dwarf_Die path[INLINE_MAX_DEPTH];
	Dwarf_Die chain[INLINE_MAX_DEPTH];
	unsigned nr_chain;
};

struct inlines *inlines_new(struct srclines *src)
{
	struct inlines *in = calloc(1, sizeof(*in));

	if (in)
		in->src = src;
	return in;
}

void inlines_free(struct inlines *in)
{
	if (!in)
		return;
	free(in->tab);
	free(in->frames);
	free(in->ren);
	itab_free(&in->names);
	free(in);
}

static uint32_t slot_of(const struct inlines *in, const struct dso *dso,
			uint64_t addr)
{
	uint64_t k[2] = { (uint64_t)(uintptr_t)dso, addr };

	return (uint32_t)itab_hash(k, sizeof(k)) & in->mask;
}

static int grow_table(struct inlines *in)
{
	uint32_t n = in->mask ? (in->mask + 1) * 2 : 1024;
	struct inline_entry *old = in->tab, *t;
	uint32_t old_n = in->mask ? in->mask + 1 : 0;

	if (n < old_n)
		return -ENOMEM;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	in->tab = t;
	in->mask = n - 1;
	for (uint32_t i = 0; i < old_n; i++) {
		uint32_t j;

		if (!old[i].dso)
			continue;
		j = slot_of(in, old[i].dso, old[i].addr);
		while (t[j].dso)
			j = (j + 1) & in->mask;
		t[j] = old[i];
	}
	free(old);
	return 0;
}

static int push_frame(struct inlines *in, uint32_t name, uint32_t src)
{
	if (in->nr_frames == in->cap_frames) {
		uint32_t cap = in->cap_frames ? in->cap_frames * 2 : 1024;
		struct inline_frame *v;

		if (cap < in->cap_frames)
			return -ENOMEM;
		v = realloc(in->frames, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		in->frames = v;
		in->cap_frames = cap;
	}
	in->frames[in->nr_frames].name = name;
	in->frames[in->nr_frames++].src = src;
	return 0;
}

/* addr2line's name of a function DIE: linkage name, else DW_AT_name. */
static const char *die_function_name(Dwarf_Die *die)
{
	static const unsigned attrs[] = { DW_AT_linkage_name,
					  DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute a;

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		const char *s;

		if (!dwarf_attr_integrate(die, attrs[i], &a))
			continue;
		s = dwarf_formstring(&a);
		if (s && *s)
			return s;
	}
	return "??";
}

static int intern_text(struct inlines *in, const char *text, uint32_t *id)
{
	/* kept with its NUL */
	return itab_intern(&in->names, text, strlen(text) + 1, id, NULL);
}

/* Appends a frame: @raw's name (0 for the symbol itself) and @src. */
static int add_frame(struct inlines *in, const char *raw, const char *src,
		     const struct symbol *sym, bool demangle)
{
	char *dm = demangle ? symbol_demangle(raw) : NULL;
	const char *name = dm ? dm : raw;
	uint32_t id = 0, src_id = 0;
	int err = 0;

	if (strcmp(name, sym->name))
		err = intern_text(in, name, &id);
	free(dm);
	if (!err)
		err = intern_text(in, src, &src_id);
	return err ? err : push_frame(in, id, src_id);
}

/* addr2line's "file.c:12" of the call an inlined subroutine stands for
 * (its DW_AT_call_file, DW_AT_call_line); "??:0" without them. */
static void call_site(struct srclines *src, Dwarf_Die *cudie,
		      Dwarf_Die *inlined, char *buf, size_t len)
{
	Dwarf_Attribute a;
	Dwarf_Word file = 0, line = 0;
	Dwarf_Files *files;
	size_t nfiles = 0;
	const char *name = NULL;

	if (dwarf_attr(inlined, DW_AT_call_file, &a) &&
	    !dwarf_formudata(&a, &file) &&
	    !dwarf_getsrcfiles(cudie, &files, &nfiles) && file < nfiles)
		name = dwarf_filesrc(files, file, NULL, NULL);
	if (dwarf_attr(inlined, DW_AT_call_line, &a))
		dwarf_formudata(&a, &line);
	snprintf(buf, len, "%s:%u",
		 name ? srcline_path(src, cudie, name) : "??", (unsigned)line);
}

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* The length of @die's address range holding @pc; 0: none holds it. */
static uint64_t range_holding(Dwarf_Die *die, Dwarf_Addr pc)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	for (unsigned i = 0; i < INLINE_MAX_RANGES; i++) {
		off = dwarf_ranges(die, off, &base, &lo, &hi);
		if (off <= 0)
			break;
		if (lo <= pc && pc < hi)
			return hi - lo;
	}
	return 0;
}

/*
 * The functions holding @pc in the CU, as binutils' addr2line picks
 * them: of every subprogram and inlined subroutine whose range holds it
 * the one with the smallest range, the last in DIE order on a tie (the
 * assembler's aliases of one symbol: gas gives each a DIE); then the
 * functions its DIE is nested in, up to the first that is not an inlined
 * subroutine.  Depth-first over the CU's DIEs, skipping types and the
 * children of scopes that do not hold @pc; bounded in DIEs, depth and
 * ranges.
 */
static int find_chain(struct inlines *in, Dwarf_Die *cudie, Dwarf_Addr pc)
{
	Dwarf_Die *path = in->path;
	uint64_t best_len = 0;
	unsigned depth = 0, budget = INLINE_MAX_DIES;
	int r;

	in->nr_chain = 0;
	if (dwarf_child(cudie, &path[0]) != 0)
		return 0;
	for (;;) {
		Dwarf_Die *d = &path[depth];
		int tag = dwarf_tag(d);
		/* Functions are defined at the CU's level, in namespaces and
		 * modules, and nested in the scopes that hold @pc: types and
		 * the rest are not walked. */
		bool descend = tag == DW_TAG_namespace || tag == DW_TAG_module;

		if (!budget--)
			break;
		if (is_function(tag) || tag == DW_TAG_lexical_block) {
			uint64_t len = range_holding(d, pc);

			descend = len > 0;
			if (len && is_function(tag) &&
			    (!best_len || len <= best_len)) {
				unsigned n = 0;

				best_len = len;
				for (unsigned i = depth + 1; i-- > 0;) {
					int t = dwarf_tag(&path[i]);

					if (!is_function(t))
						continue;
					in->chain[n++] = path[i];
					if (t != DW_TAG_inlined_subroutine)
						break;
				}
				in->nr_chain = n;
			}
		}
		if (descend && depth + 1 < INLINE_MAX_DEPTH &&
		    dwarf_haschildren(d) &&
		    dwarf_child(d, &path[depth + 1]) == 0) {
			depth++;
			continue;
		}
		/* the next sibling, here or up the path */
		while ((r = dwarf_siblingof(&path[depth], &path[depth])) != 0) {
			if (r < 0 || !depth)
				return 0;
			depth--;
		}
	}
	return 0;
}

/* The slot of (@dso, @die) in the renamed table: its entry or where it
 * goes; NULL when the table cannot grow. */
static struct renamed *renamed_slot(struct inlines *in, const struct dso *dso,
				    uint64_t die, bool adding)
{
	uint64_t k[2] = { (uint64_t)(uintptr_t)dso, die };
	uint32_t j;

	if (adding && (in->ren_used + 1) * 2 > (in->ren_mask + 1)) {
		uint32_t n = in->ren_mask ? (in->ren_mask + 1) * 2 : 256;
		uint32_t old_n = in->ren_mask ? in->ren_mask + 1 : 0;
		struct renamed *t = n > old_n ? calloc(n, sizeof(*t)) : NULL;

		if (!t)
			return NULL;
		for (uint32_t i = 0; i < old_n; i++) {
			uint64_t ok[2] = { (uint64_t)(uintptr_t)in->ren[i].dso,
					   in->ren[i].die };

			if (!in->ren[i].dso)
				continue;
			j = (uint32_t)itab_hash(ok, sizeof(ok)) & (n - 1);
			while (t[j].dso)
				j = (j + 1) & (n - 1);
			t[j] = in->ren[i];
		}
		free(in->ren);
		in->ren = t;
		in->ren_mask = n - 1;
	}
	if (!in->ren)
		return NULL;
	j = (uint32_t)itab_hash(k, sizeof(k)) & in->ren_mask;
	while (in->ren[j].dso &&
	       (in->ren[j].dso != dso || in->ren[j].die != die))
		j = (j + 1) & in->ren_mask;
	return &in->ren[j];
}

/* Languages whose DW_AT_name is the symbol's name (binutils'
 * non_mangled()). */
static bool lang_unmangled(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_Ada83:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_C99:
	case DW_LANG_Ada95:
	case DW_LANG_PLI:
	case DW_LANG_UPC:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return true;
	default:
		return false;
	}
}

static bool has_linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	       dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a);
}

/*
 * The name addr2line gives the innermost function @die (a function of
 * C++ or another mangling language without a linkage name, such as a
 * static function or its clone): binutils takes the ELF symbol holding
 * the address (@sym, as perf's), and when that symbol starts where the
 * function's first range does, renames the function after it for every
 * later lookup in this object (as a caller in an inline chain too).
 * NULL: the DWARF name stands.
 */
static const char *innermost_name(struct inlines *in, struct dso *dso,
				  Dwarf_Die *cudie, Dwarf_Die *die,
				  const struct symbol *sym, uint64_t sym_pc)
{
	Dwarf_Addr base, lo, hi;
	struct renamed *r;

	if (lang_unmangled(dwarf_srclang(cudie)) || has_linkage_name(die))
		return NULL;
	if (dwarf_ranges(die, 0, &base, &lo, &hi) > 0 && lo == sym_pc &&
	    (r = renamed_slot(in, dso, dwarf_dieoffset(die), true)) &&
	    !r->dso && !intern_text(in, sym->name, &r->name)) {
		r->dso = dso;
		r->die = dwarf_dieoffset(die);
		in->ren_used++;
	}
	return sym->name;
}

/* A function renamed by an earlier lookup: its name, else NULL. */
static const char *renamed_name(struct inlines *in, struct dso *dso,
				Dwarf_Die *die)
{
	struct renamed *r;
	size_t len;

	if (!in->ren_used)
		return NULL;
	r = renamed_slot(in, dso, dwarf_dieoffset(die), false);
	return r && r->dso ? itab_key(&in->names, r->name, &len) : NULL;
}

/* Looks @addr up in the DWARF: frames appended, e->nr set. */
static int resolve(struct inlines *in, struct dso *dso, uint64_t addr,
		   const struct symbol *sym, struct inline_entry *e)
{
	Dwarf_Die *cudie;
	Dwarf_Addr cubias = 0;
	uint64_t bias = 0;
	Dwfl_Module *mod = srcline_module(in->src, dso, &bias);
	int err = 0;

	if (!mod)
		return 0;
	cudie = dwfl_module_addrdie(mod, addr + bias, &cubias);
	if (!cudie)
		return 0;
	find_chain(in, cudie, addr + bias - cubias);
	for (unsigned i = 0; i < in->nr_chain; i++) {
		char src[512], copy[1024];
		const char *name;

		if (i) {
			call_site(in->src, cudie, &in->chain[i - 1], src,
				  sizeof(src));
		} else {
			const char *file = NULL;
			int line = 0;

			if (srcline_line(in->src, dso, addr, &file, &line) > 0)
				snprintf(src, sizeof(src), "%s:%d", file, line);
			else
				snprintf(src, sizeof(src), "??:0");
		}
		name = renamed_name(in, dso, &in->chain[i]);
		if (!name && !i)
			name = innermost_name(in, dso, cudie, &in->chain[0],
					      sym, sym->start + bias - cubias);
		if (!name)
			name = die_function_name(&in->chain[i]);
		/* a copy: interning may move the names it points into */
		snprintf(copy, sizeof(copy), "%s", name);
		err = add_frame(in, copy, src, sym,
				!dso->owner || !dso->owner->no_demangle);
		if (err)
			break;
		e->nr++;
	}
	return err;
}

unsigned inlines_at(struct inlines *in, struct dso *dso, uint64_t addr,
		    const struct symbol *sym, const char **names,
		    const char **srcs, unsigned max)
{
	struct inline_entry *e;
	uint32_t j;
	unsigned n;

	if (!in || !dso || !sym || !max)
		return 0;
	if ((in->used + 1) * 4 > (in->mask + 1) * 3 && grow_table(in))
		return 0;
	j = slot_of(in, dso, addr);
	while (in->tab[j].dso &&
	       (in->tab[j].dso != dso || in->tab[j].addr != addr))
		j = (j + 1) & in->mask;
	e = &in->tab[j];
	if (!e->dso) {
		e->dso = dso;
		e->addr = addr;
		e->first = in->nr_frames;
		e->nr = 0;
		in->used++;
		if (resolve(in, dso, addr, sym, e)) {
			/* Out of memory: this address without inlines. */
			in->nr_frames = e->first;
			e->nr = 0;
		}
	}
	n = e->nr < max ? e->nr : max;
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = in->frames[e->first + i].name;
		size_t len;

		names[i] = id ? itab_key(&in->names, id, &len) : NULL;
		srcs[i] = itab_key(&in->names, in->frames[e->first + i].src,
				   &len);
	}
	return n;
}
