// SPDX-License-Identifier: MIT
/*
 * Symbol tables, built the way perf 6.1 builds them (tools/perf/util/
 * symbol.c, symbol-elf.c) so that names and offsets agree with perf script
 * and perf report:
 *
 *  - ELF: the first of the debug files perf looks for that has a .symtab
 *    (.gnu_debuglink next to the object or under /usr/lib/debug, then
 *    /usr/lib/debug/<path>.debug, /usr/lib/debug/<path>, then
 *    /usr/lib/debug/.build-id/xx/yyy.debug), else the object's own .symtab,
 *    else its .dynsym.  Functions, objects and named labels in allocated
 *    sections; PLT entries become "name@plt".
 *  - Sizes: a symbol without one ends where the next begins
 *    (symbols__fixup_end); of symbols sharing a start one is kept
 *    (choose_best_symbol: sized, not weak, global, fewer leading
 *    underscores, longer name, first).
 *  - Samples give file offsets (map start + pgoff); the object's PT_LOAD
 *    headers turn them into the virtual addresses symbols use.
 *  - The kernel: /proc/kallsyms (text, weak, data and bss symbols), moved
 *    by the difference between the recorded _text and today's; modules
 *    ("name [mod]") get one dso each.  Only for files recorded here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/log.h"
#include "../format/buildid.h"
#include "../format/safe_open.h"
#include "perfmap.h"
#include "symbols.h"

#define DEBUG_DIR "/usr/lib/debug"

/* A symbol while a table is being built. */
struct rawsym {
	uint64_t start, end;
	const char *name;
	uint32_t idx; /* input order: ties keep it */
	uint8_t bind;
	bool dead;
};

struct symvec {
	struct rawsym *v;
	size_t nr, cap;
	/* Names that do not live in an open ELF (kallsyms, PLT): owned. */
	char **owned;
	size_t nr_owned, cap_owned;
	bool raw_names; /* --no-demangle */
};

static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* ---- C++ names ------------------------------------------------------- */

/*
 * perf shows C++ symbols demangled without parameters or return type
 * ("ns::K::spin", "run<int>"), as libiberty does with DMGL_NO_OPTS.  The
 * C++ runtime's __cxa_demangle() is used when libstdc++ can be loaded
 * (dlopen: no link-time dependency); its full text is cut back to the
 * name.  Without it names stay mangled.
 */
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void cxa_load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (h)
		cxa_demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

static bool has_word_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* "void run<int>(int)" -> "run<int>", "ns::K::m(int) const" -> "ns::K::m".
 * libiberty leaves out the parameters of the top-level name only: a
 * special name's (a thunk's, a guard variable's...) keeps them
 * ("virtual thunk to std::basic_ostream<...>::~basic_ostream()"). */
/* The last " [clone " in @d, NULL: none. */
static char *strrstr_clone(char *d)
{
	char *last = NULL;

	for (char *p = strstr(d, " [clone "); p; p = strstr(p + 1, " [clone "))
		last = p;
	return last;
}

static void strip_signature(char *d)
{
	static const char *const special[] = {
		"vtable for ",
		"typeinfo for ",
		"typeinfo name for ",
		"typeinfo fn for ",
		"VTT for ",
		"construction vtable for ",
		"guard variable for ",
		"TLS init function for ",
		"TLS wrapper function for ",
		"reference temporary ",
		"transaction clone for ",
		"non-transaction clone for ",
		"virtual thunk to ",
		"non-virtual thunk to ",
		"covariant return thunk to ",
		"hidden alias for ",
		"java Class for ",
		"template parameter object for ",
	};
	size_t n;
	char *close, *clone;
	int depth = 0;

	/* libiberty reads a clone suffix (".isra.0", ".cold") only when
	 * asked for the parameters: perf's names have neither */
	while ((n = strlen(d)) && d[n - 1] == ']' &&
	       (clone = strrstr_clone(d)) && clone > d)
		*clone = 0;
	close = strrchr(d, ')');
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (has_word_prefix(d, special[i]))
			return;
	if (close) {
		/* Only qualifiers may follow the parameter list. */
		for (const char *q = close + 1; *q; q++)
			if (!strchr(" &abcdefghijklmnopqrstuvwxyz", *q))
				close = NULL;
	}
	if (close) {
		for (char *p = close; p >= d; p--) {
			if (*p == ')')
				depth++;
			else if (*p == '(' && --depth == 0) {
				if (p > d)
					*p = 0;
				break;
			}
		}
	}
	n = strlen(d);
	/* A template function's name comes after its return type: the
	 * last space outside <>, () and [] (before an operator's name,
	 * which may hold spaces and brackets of its own). */
	if (n && d[n - 1] == '>') {
		char *last = NULL, *op = NULL, *end;

		for (char *p = strstr(d, "operator"); p;
		     p = strstr(p + 1, "operator"))
			op = p;
		end = op ? op : d + n;
		depth = 0;
		for (char *p = d; p < end; p++) {
			if (*p == '<' || *p == '(' || *p == '[')
				depth++;
			else if ((*p == '>' || *p == ')' || *p == ']') && depth)
				depth--;
			else if (*p == ' ' && !depth)
				last = p;
		}
		if (last)
			memmove(d, last + 1, strlen(last + 1) + 1);
	}
}

/* A demangled copy of a C++ name (malloc), or NULL. */
char *symbol_demangle(const char *name)
{
	char *d;
	int status = -1;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	pthread_once(&cxa_once, cxa_load);
	if (!cxa_demangle)
		return NULL;
	d = cxa_demangle(name, NULL, NULL, &status);
	if (!d || status) {
		free(d);
		return NULL;
	}
	strip_signature(d);
	if (!*d) {
		free(d);
		return NULL;
	}
	return d;
}

static int symvec_add(struct symvec *sv, uint64_t start, uint64_t size,
		      uint8_t bind, const char *name)
{
	if (sv->nr == sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 1024;
		struct rawsym *v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->nr] = (struct rawsym){ .start = start,
					 .end = start + size,
					 .name = name,
					 .idx = (uint32_t)sv->nr,
					 .bind = bind };
	sv->nr++;
	return 0;
}

static char *symvec_own(struct symvec *sv, const char *s)
{
	char *p;

	if (sv->nr_owned == sv->cap_owned) {
		size_t cap = sv->cap_owned ? sv->cap_owned * 2 : 64;
		char **v = realloc(sv->owned, cap * sizeof(*v));

		if (!v)
			return NULL;
		sv->owned = v;
		sv->cap_owned = cap;
	}
	p = strdup(s);
	if (p)
		sv->owned[sv->nr_owned++] = p;
	return p;
}

/* Keeps @p (malloc'ed) until the vec is freed. */
static char *symvec_keep(struct symvec *sv, char *p)
{
	if (sv->nr_owned == sv->cap_owned) {
		size_t cap = sv->cap_owned ? sv->cap_owned * 2 : 64;
		char **v = realloc(sv->owned, cap * sizeof(*v));

		if (!v) {
			free(p);
			return NULL;
		}
		sv->owned = v;
		sv->cap_owned = cap;
	}
	sv->owned[sv->nr_owned++] = p;
	return p;
}

static void symvec_free(struct symvec *sv)
{
	for (size_t i = 0; i < sv->nr_owned; i++)
		free(sv->owned[i]);
	free(sv->owned);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

static int rawsym_cmp(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol(): true to keep @a over @b. */
static bool keep_first(const struct rawsym *a, const struct rawsym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	size_t na, nb;

	if (lb == 0 && la > 0)
		return true;
	if (la == 0 && lb > 0)
		return false;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	na = leading_underscores(a->name);
	nb = leading_underscores(b->name);
	if (na != nb)
		return na < nb;
	na = strlen(a->name);
	nb = strlen(b->name);
	return na >= nb;
}

static uint64_t page_roundup(uint64_t x)
{
	return (x + 4095) & ~4095ull;
}

/* symbols__fixup_end() then symbols__fixup_duplicate(), on a sorted vec. */
static void symvec_fixup(struct symvec *sv)
{
	size_t i, cur;

	if (!sv->nr)
		return;
	qsort(sv->v, sv->nr, sizeof(*sv->v), rawsym_cmp);
	for (i = 1; i < sv->nr; i++) {
		struct rawsym *prev = &sv->v[i - 1];

		if (prev->end == prev->start)
			prev->end = sv->v[i].start;
	}
	if (sv->v[sv->nr - 1].end == sv->v[sv->nr - 1].start)
		sv->v[sv->nr - 1].end =
			page_roundup(sv->v[sv->nr - 1].start) + 4096;
	/* Among equal starts keep one, pairwise from the first as perf. */
	cur = 0;
	for (i = 1; i < sv->nr; i++) {
		if (sv->v[i].start != sv->v[cur].start) {
			cur = i;
			continue;
		}
		if (keep_first(&sv->v[cur], &sv->v[i])) {
			sv->v[i].dead = true;
		} else {
			sv->v[cur].dead = true;
			cur = i;
		}
	}
}

/* Moves the live symbols of @sv (and their names) into @dso. */
static int symvec_install(struct symvec *sv, struct dso *dso)
{
	size_t n = 0, bytes = 0, i, j = 0;
	char *p;

	for (i = 0; i < sv->nr; i++) {
		if (sv->v[i].dead)
			continue;
		n++;
		bytes += strlen(sv->v[i].name) + 1;
	}
	if (!n)
		return 0;
	if (n > UINT32_MAX)
		return -E2BIG;
	dso->syms = malloc(n * sizeof(*dso->syms));
	dso->strs = malloc(bytes);
	if (!dso->syms || !dso->strs) {
		free(dso->syms);
		free(dso->strs);
		dso->syms = NULL;
		dso->strs = NULL;
		return -ENOMEM;
	}
	p = dso->strs;
	for (i = 0; i < sv->nr; i++) {
		size_t len;

		if (sv->v[i].dead)
			continue;
		len = strlen(sv->v[i].name) + 1;
		memcpy(p, sv->v[i].name, len);
		dso->syms[j].start = sv->v[i].start;
		dso->syms[j].end = sv->v[i].end;
		dso->syms[j].name = p;
		p += len;
		j++;
	}
	dso->nr_syms = (uint32_t)n;
	return 0;
}

/* ---- ELF ------------------------------------------------------------- */

struct elf_file {
	int fd;
	Elf *e;
	GElf_Ehdr eh;
	size_t shstrndx;
	void *mem; /* elf_memory() image */
};

static void elf_file_close(struct elf_file *ef)
{
	if (ef->e)
		elf_end(ef->e);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->mem);
	ef->e = NULL;
	ef->fd = -1;
	ef->mem = NULL;
}

static int elf_file_init(struct elf_file *ef)
{
	if (elf_kind(ef->e) != ELF_K_ELF || !gelf_getehdr(ef->e, &ef->eh) ||
	    elf_getshdrstrndx(ef->e, &ef->shstrndx)) {
		elf_file_close(ef);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * @path is named by the recorded file or lies where the traced program's
 * owner can write: opened only if it is a regular file, without blocking
 * (safe_open.h).  *@kind names what it is otherwise.
 */
static int elf_file_open(struct elf_file *ef, const char *path,
			 const char **kind)
{
	memset(ef, 0, sizeof(*ef));
	ef->fd = safe_open_regular(path, NULL, kind);
	if (ef->fd < 0)
		return ef->fd;
	ef->e = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->e) {
		close(ef->fd);
		ef->fd = -1;
		return -ENOEXEC;
	}
	return elf_file_init(ef);
}

static int elf_file_memory(struct elf_file *ef, const void *img, size_t len)
{
	memset(ef, 0, sizeof(*ef));
	ef->fd = -1;
	ef->mem = malloc(len);
	if (!ef->mem)
		return -ENOMEM;
	memcpy(ef->mem, img, len);
	ef->e = elf_memory(ef->mem, len);
	if (!ef->e) {
		free(ef->mem);
		ef->mem = NULL;
		return -ENOEXEC;
	}
	return elf_file_init(ef);
}

static Elf_Scn *elf_section(struct elf_file *ef, const char *name,
			    Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		if (type != SHT_NULL && sh->sh_type != type)
			continue;
		if (!name)
			return scn;
		n = elf_strptr(ef->e, ef->shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static void elf_build_id(struct elf_file *ef, struct dso *dso)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->e, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		while (off < d->d_size &&
		       (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) &&
			    nh.n_descsz > 0) {
				size_t n = nh.n_descsz > 20 ? 20 : nh.n_descsz;

				if (!dso->build_id_size) {
					memcpy(dso->build_id,
					       (char *)d->d_buf + doff, n);
					dso->build_id_size = (uint8_t)n;
				}
				return;
			}
		}
	}
}

/* PT_LOAD segments: file offsets of samples to virtual addresses. */
static int elf_segments(struct elf_file *ef, struct dso *dso)
{
	size_t n, i, k = 0;

	if (elf_getphdrnum(ef->e, &n) || !n || n > 4096)
		return 0;
	dso->segs = calloc(n, sizeof(*dso->segs));
	if (!dso->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		dso->segs[k].off = ph.p_offset;
		dso->segs[k].len = ph.p_filesz;
		dso->segs[k].vaddr = ph.p_vaddr;
		k++;
	}
	dso->nr_segs = (uint32_t)k;
	return 0;
}

static bool elf_has_symtab(struct elf_file *ef)
{
	GElf_Shdr sh;

	return elf_section(ef, NULL, SHT_SYMTAB, &sh) && sh.sh_size > 0;
}

/* Symbols of one table (SHT_SYMTAB or SHT_DYNSYM) as perf filters them. */
static int elf_read_symbols(struct elf_file *ef, Elf64_Word type,
			    struct symvec *sv)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section(ef, NULL, type, &sh);
	Elf_Data *d;
	size_t nsec, n, i;
	uint64_t *secflags;
	int err = 0;

	if (!scn || !sh.sh_entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return 0;
	if (elf_getshdrnum(ef->e, &nsec) || nsec > (1u << 20))
		return 0;
	secflags = calloc(nsec ? nsec : 1, sizeof(*secflags));
	if (!secflags)
		return -ENOMEM;
	for (i = 1; i < nsec; i++) {
		GElf_Shdr s;
		Elf_Scn *x = elf_getscn(ef->e, i);

		if (x && gelf_getshdr(x, &s))
			secflags[i] = s.sh_flags | (1ull << 63);
	}
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n && !err; i++) {
		GElf_Sym s;
		const char *name;
		int st;
		uint64_t fl;

		if (!gelf_getsym(d, (int)i, &s) || !s.st_name ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    s.st_shndx >= nsec)
			continue;
		st = GELF_ST_TYPE(s.st_info);
		fl = secflags[s.st_shndx];
		if (!(fl & SHF_ALLOC))
			continue;
		if (st == STT_NOTYPE) {
			int vis = GELF_ST_VISIBILITY(s.st_other);

			/* Labels: only in code, not hidden. */
			if (vis == STV_HIDDEN || vis == STV_INTERNAL ||
			    !(fl & SHF_EXECINSTR))
				continue;
		} else if (st != STT_FUNC && st != STT_GNU_IFUNC &&
			   st != STT_OBJECT) {
			continue;
		}
		name = elf_strptr(ef->e, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (name[0] == '_' && name[1] == 'Z' && !sv->raw_names) {
			char *dm = symbol_demangle(name);

			if (dm && !(name = symvec_keep(sv, dm))) {
				err = -ENOMEM;
				break;
			}
		}
		err = symvec_add(sv, s.st_value, s.st_size,
				 (uint8_t)GELF_ST_BIND(s.st_info), name);
	}
	free(secflags);
	return err;
}

/*
 * perf's symbol tree (an rb-tree by start, an equal start going right),
 * rebuilt to learn which of two overlapping symbols its search finds:
 * symbols__find() stops at the first node on the path holding the
 * address, so of a symbol and one inside it, the ancestor wins.
 */
#define RB_NONE UINT32_MAX

struct symtree {
	struct symnode {
		uint64_t start;
		uint32_t left, right, parent;
		bool red;
	} * n;
	uint32_t nr, root;
};

static void symtree_rotate(struct symtree *t, uint32_t x, bool to_left)
{
	struct symnode *v = t->n;
	uint32_t y = to_left ? v[x].right : v[x].left;
	uint32_t mid = to_left ? v[y].left : v[y].right;

	if (to_left) {
		v[x].right = mid;
		v[y].left = x;
	} else {
		v[x].left = mid;
		v[y].right = x;
	}
	if (mid != RB_NONE)
		v[mid].parent = x;
	v[y].parent = v[x].parent;
	if (v[x].parent == RB_NONE)
		t->root = y;
	else if (v[v[x].parent].left == x)
		v[v[x].parent].left = y;
	else
		v[v[x].parent].right = y;
	v[x].parent = y;
}

/* Node t->nr (its start set) goes in, as lib/rbtree.c inserts. */
static void symtree_insert(struct symtree *t)
{
	struct symnode *v = t->n;
	uint32_t x = t->nr++, at = t->root, parent = RB_NONE;
	bool left = false;

	while (at != RB_NONE) {
		parent = at;
		left = v[x].start < v[at].start;
		at = left ? v[at].left : v[at].right;
	}
	v[x].left = v[x].right = RB_NONE;
	v[x].parent = parent;
	v[x].red = true;
	if (parent == RB_NONE)
		t->root = x;
	else if (left)
		v[parent].left = x;
	else
		v[parent].right = x;
	while (v[x].parent != RB_NONE && v[v[x].parent].red) {
		uint32_t p = v[x].parent, g = v[p].parent;
		bool pl = v[g].left == p;
		uint32_t u = pl ? v[g].right : v[g].left;

		if (u != RB_NONE && v[u].red) {
			v[p].red = v[u].red = false;
			v[g].red = true;
			x = g;
			continue;
		}
		if (x == (pl ? v[p].right : v[p].left)) {
			symtree_rotate(t, p, pl);
			x = p;
			p = v[x].parent;
		}
		v[p].red = false;
		v[g].red = true;
		symtree_rotate(t, g, !pl);
	}
	v[t->root].red = false;
}

static bool symtree_is_ancestor(const struct symtree *t, uint32_t a, uint32_t x)
{
	for (uint32_t at = t->n[x].parent; at != RB_NONE; at = t->n[at].parent)
		if (at == a)
			return true;
	return false;
}

static int by_idx(const void *a, const void *b)
{
	const struct rawsym *x = *(const struct rawsym *const *)a;
	const struct rawsym *y = *(const struct rawsym *const *)b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The PLT entries @plt join @sv as perf inserts them: after the fixups,
 * no resizing, no dedup.  A symbol the fixups stretched over the PLT
 * (_init, sized 0, ends where .text begins) overlaps them; perf's search
 * finds, for an address in an entry, whichever of the two is the other's
 * ancestor in its tree (the symbols in table order, then the entries), so
 * an entry under the stretched symbol is left out (the lookup finds the
 * stretched one), the others kept.  (perf's removal of duplicates, after
 * the insertions, is not replayed: its rebalancing rarely matters here.)
 */
#define PLT_LOOKBACK 64

static int plt_place(struct symvec *sv, const struct symvec *plt)
{
	struct symtree t = { 0 };
	const struct rawsym **order;
	uint32_t *node_of; /* sv->v[k]'s node */
	size_t i, n = sv->nr;
	int err = 0;

	if (!plt->nr)
		return 0;
	if (n + plt->nr >= RB_NONE)
		return -E2BIG;
	order = calloc(n ? n : 1, sizeof(*order));
	node_of = calloc(n ? n : 1, sizeof(*node_of));
	t.n = calloc(n + plt->nr, sizeof(*t.n));
	if (!order || !node_of || !t.n) {
		err = -ENOMEM;
		goto out;
	}
	t.root = RB_NONE;
	for (i = 0; i < n; i++)
		order[i] = &sv->v[i];
	if (n)
		qsort(order, n, sizeof(*order), by_idx);
	for (i = 0; i < n; i++) {
		node_of[order[i] - sv->v] = t.nr;
		t.n[t.nr].start = order[i]->start;
		symtree_insert(&t);
	}
	for (i = 0; i < plt->nr; i++) {
		t.n[t.nr].start = plt->v[i].start;
		symtree_insert(&t);
	}
	for (i = 0; i < plt->nr && !err; i++) {
		const struct rawsym *e = &plt->v[i];
		size_t lo = 0, hi = n;
		bool under = false;

		/* @sv is sorted by start: the symbols starting at or before
		 * the entry, the nearest PLT_LOOKBACK (a hostile table's
		 * thousands of overlaps are not searched) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (sv->v[mid].start <= e->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo;
		     k-- > 0 && lo - k <= PLT_LOOKBACK && !under;)
			under = !sv->v[k].dead && sv->v[k].end > e->start &&
				symtree_is_ancestor(&t, node_of[k],
						    (uint32_t)(n + i));
		if (!under)
			err = symvec_add(sv, e->start, e->end - e->start,
					 STB_GLOBAL, e->name);
	}
out:
	free(order);
	free(node_of);
	free(t.n);
	return err;
}

/* dso__synthesize_plt_symbols() of perf 6.1 for x86: "name@plt". */
static int elf_plt_symbols(struct elf_file *ef, struct dso *dso,
			   struct symvec *sv)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel = elf_section(ef, ".rela.plt", SHT_RELA, &rsh);
	Elf_Scn *dyn, *plt;
	Elf_Data *rd, *dd;
	uint64_t addr, ent;
	size_t n, i;
	struct symvec plt_sv = { 0 };
	int err = 0;

	if (!rel || !rsh.sh_entsize)
		return 0;
	dyn = elf_getscn(ef->e, rsh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh) || dsh.sh_type != SHT_DYNSYM ||
	    !dsh.sh_entsize)
		return 0;
	plt = elf_section(ef, ".plt", SHT_NULL, &psh);
	if (!plt || !psh.sh_entsize)
		return 0;
	rd = elf_getdata(rel, NULL);
	dd = elf_getdata(dyn, NULL);
	if (!rd || !dd)
		return 0;
	ent = psh.sh_entsize;
	addr = psh.sh_addr + ent; /* past the PLT header */
	n = rsh.sh_size / rsh.sh_entsize;
	for (i = 0; i < n && !err; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name;
		char buf[512];
		char *own;

		if (!gelf_getrela(rd, (int)i, &r))
			break;
		if (!gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(ef->e, dsh.sh_link, s.st_name);
		{
			char *d = name && !sv->raw_names ?
					  symbol_demangle(name) :
					  NULL;

			snprintf(buf, sizeof(buf), "%s@plt",
				 d    ? d :
				 name ? name :
					"");
			free(d);
		}
		own = symvec_own(sv, buf);
		if (!own)
			return -ENOMEM;
		err = symvec_add(&plt_sv, addr, ent, STB_GLOBAL, own);
		addr += ent;
	}
	(void)dso;
	err = err ? err : plt_place(sv, &plt_sv);
	free(plt_sv.v);
	return err;
}

static bool is_regular(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* @a @b @c joined into @out (PATH_MAX); false if too long. */
static bool join3(char *out, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	if (la + lb + lc >= PATH_MAX)
		return false;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc + 1);
	return true;
}

/* @path under --symfs into @out (PATH_MAX), as perf prefixes every
 * lookup; false if too long. */
static bool symfs_path(const struct dsos *d, const char *path, char *out)
{
	return join3(out, d->symfs ? d->symfs : "", path, "");
}

/* Separate debug files, in perf's order; the first with a .symtab wins. */
static bool open_debug_file(struct elf_file *run, struct dso *dso,
			    struct elf_file *out)
{
	char cand[6][PATH_MAX];
	char dir[PATH_MAX];
	const char *slash = strrchr(dso->name, '/');
	size_t nc = 0, i, dl = slash ? (size_t)(slash - dso->name) : 0;
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (dl >= PATH_MAX)
		return false;
	memcpy(dir, dso->name, dl);
	dir[dl] = 0;
	scn = elf_section(run, ".gnu_debuglink", SHT_NULL, &sh);
	if (scn) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (d && d->d_buf && d->d_size > 1 &&
		    memchr(d->d_buf, 0, d->d_size)) {
			const char *link = d->d_buf;
			char sub[PATH_MAX];

			nc += join3(cand[nc], dir, "/", link);
			if (join3(sub, dir, "/.debug/", ""))
				nc += join3(cand[nc], sub, link, "");
			if (join3(sub, DEBUG_DIR, dir, "/"))
				nc += join3(cand[nc], sub, link, "");
		}
	}
	nc += join3(cand[nc], DEBUG_DIR, dso->name, ".debug");
	nc += join3(cand[nc], DEBUG_DIR, dso->name, "");
	if (dso->build_id_size) {
		char hex[41], sub[64];

		for (i = 0; i < dso->build_id_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", dso->build_id[i]);
		snprintf(sub, sizeof(sub), "/.build-id/%.2s/%s.debug", hex,
			 hex + 2);
		nc += join3(cand[nc], DEBUG_DIR, sub, "");
	}
	for (i = 0; i < nc; i++) {
		char path[PATH_MAX];

		if (!strcmp(cand[i], dso->name) ||
		    !symfs_path(dso->owner, cand[i], path) || !is_regular(path))
			continue;
		if (elf_file_open(out, path, NULL))
			continue;
		if (elf_has_symtab(out))
			return true;
		elf_file_close(out);
	}
	return false;
}

static int load_elf(struct dso *dso, struct elf_file *run)
{
	struct elf_file dbg = { .fd = -1 };
	struct symvec sv = { .raw_names = dso->owner &&
					  dso->owner->no_demangle };
	int err;

	err = elf_segments(run, dso);
	if (err)
		return err;
	elf_build_id(run, dso);
	if (dso->kind == DSO_FILE && open_debug_file(run, dso, &dbg)) {
		err = elf_read_symbols(&dbg, SHT_SYMTAB, &sv);
	} else if (elf_has_symtab(run)) {
		err = elf_read_symbols(run, SHT_SYMTAB, &sv);
	} else {
		err = elf_read_symbols(run, SHT_DYNSYM, &sv);
	}
	/* perf's dso__load() synthesizes PLT entries only when the symbol
	 * table gave it some (a stripped program whose .dynsym defines
	 * nothing keeps its PLT addresses unresolved) */
	if (!err && sv.nr) {
		symvec_fixup(&sv);
		err = elf_plt_symbols(run, dso, &sv);
	}
	if (!err) {
		/* PLT entries went in unsorted, after the fixups. */
		for (size_t i = 0; i < sv.nr; i++)
			sv.v[i].idx = (uint32_t)i;
		if (sv.nr) /* qsort(NULL, 0) is undefined */
			qsort(sv.v, sv.nr, sizeof(*sv.v), rawsym_cmp);
		err = symvec_install(&sv, dso);
	}
	symvec_free(&sv);
	elf_file_close(&dbg);
	return err;
}

/*
 * An object named in the file's build-id table: the path of a file with
 * the recorded build-id into @path: the object if it still has it, else
 * perf's build-id cache entry.  False if neither (perf rejects an object
 * whose build-id differs, and shows addresses).
 */
static bool recorded_object(struct dso *dso, char *path)
{
	struct buildid disk;
	const char *dir = getenv("PERF_BUILDID_DIR"), *home;
	char hex[2 * BUILDID_MAX + 1], cache[PATH_MAX];
	size_t n = dso->build_id_size;

	if (!buildid_from_file(path, &disk) && disk.size >= n &&
	    !memcmp(disk.data, dso->build_id, n))
		return true;
	/* under --symfs, the objects there only (perf 6.1 leaves an object
	 * missing there unresolved, cache or not) */
	if (dso->owner->symfs)
		return false;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", dso->build_id[i]);
	home = getenv("HOME");
	if (dir && *dir)
		n = (size_t)snprintf(cache, sizeof(cache), "%s", dir);
	else if (home && *home)
		n = (size_t)snprintf(cache, sizeof(cache), "%s/.debug", home);
	else
		return false;
	if (n >= sizeof(cache) ||
	    (size_t)snprintf(cache + n, sizeof(cache) - n,
			     "/.build-id/%.2s/%s/elf", hex,
			     hex + 2) >= sizeof(cache) - n ||
	    !is_regular(cache) || buildid_from_file(cache, &disk) ||
	    disk.size < dso->build_id_size ||
	    memcmp(disk.data, dso->build_id, dso->build_id_size))
		return false;
	memcpy(path, cache, strlen(cache) + 1);
	return true;
}

/* True if @path exists and is not a regular file (symlinks followed);
 * *@kind says what it is. */
static bool path_not_regular(const char *path, const char **kind)
{
	struct stat st;

	if (stat(path, &st) || S_ISREG(st.st_mode))
		return false;
	*kind = safe_file_kind(st.st_mode);
	return true;
}

/* Once per object: a reader that meets it in every sample says so once. */
static void dso_warn_not_regular(struct dso *dso, const char *path,
				 const char *kind)
{
	if (dso->warned_not_regular)
		return;
	dso->warned_not_regular = true;
	pr_warn("%s is %s, not a regular file: not opened, its samples show addresses",
		path, kind);
}

static void load_file(struct dso *dso)
{
	struct elf_file ef;
	char path[PATH_MAX];
	const char *kind;

	/* only under --symfs when given, as perf */
	if (!symfs_path(dso->owner, dso->name, path))
		return;
	if (path_not_regular(path, &kind)) {
		/* a FIFO or a device where the object was: not opened */
		dso_warn_not_regular(dso, path, kind);
		return;
	}
	if (dso->build_id_recorded && !recorded_object(dso, path)) {
		/* (a file that is not there at all: no symbols, as before) */
		if (!dso->owner->warned_bid && is_regular(path)) {
			dso->owner->warned_bid = true;
			pr_warn("%s is not the object that was recorded (its build-id differs) and perf's build-id cache has no copy: its samples show addresses, as perf shows them (further ones are not reported)",
				dso->name);
		}
		return;
	}
	if (elf_file_open(&ef, path, &kind)) {
		/* gone or not ELF: no symbols, as perf; a FIFO or a device
		 * (swapped in since) is not even opened */
		if (kind)
			dso_warn_not_regular(dso, path, kind);
		return;
	}
	if (load_elf(dso, &ef))
		pr_warn("%s: cannot read its symbols", dso->name);
	elf_file_close(&ef);
}

/* The vDSO of this process: the kernel maps the same image everywhere. */
static void load_vdso(struct dso *dso)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	FILE *f;
	char line[512];
	size_t len = 0;
	struct elf_file ef;

	if (!base)
		return;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2 && a == base &&
		    b > a) {
			len = b - a;
			break;
		}
	}
	fclose(f);
	if (!len || len > (64u << 20))
		return;
	if (elf_file_memory(&ef, (const void *)base, len))
		return;
	if (load_elf(dso, &ef))
		pr_warn("[vdso]: cannot read its symbols");
	elf_file_close(&ef);
}

/* ---- kallsyms -------------------------------------------------------- */

static bool kallsyms_type_ok(char t)
{
	switch (t) {
	case 'T':
	case 't':
	case 'W':
	case 'w':
	case 'D':
	case 'd':
	case 'B':
	case 'b':
		return true;
	default:
		return false;
	}
}

static struct dso *module_dso(struct dsos *d, const char *mod, size_t len,
			      struct symvec **vecs)
{
	char name[128];
	struct dso *m;
	uint32_t i;

	snprintf(name, sizeof(name), "[%.*s]", (int)(len > 100 ? 100 : len),
		 mod);
	/* kallsyms lists a module's symbols together: the last one first. */
	for (i = d->nr_modules; i-- > 0;)
		if (!strcmp(d->modules[i]->name, name))
			return d->modules[i];
	if (d->nr_modules >= 4096)
		return NULL;
	m = dsos_findnew(d, name, strlen(name));
	if (!m)
		return NULL;
	{
		struct dso **v =
			realloc(d->modules, (d->nr_modules + 1) * sizeof(*v));
		struct symvec *sv =
			realloc(*vecs, (d->nr_modules + 1) * sizeof(**vecs));

		if (!v || !sv) {
			if (v)
				d->modules = v;
			if (sv)
				*vecs = sv;
			return NULL;
		}
		d->modules = v;
		*vecs = sv;
		memset(&sv[d->nr_modules], 0, sizeof(*sv));
	}
	m->kind = DSO_KMODULE;
	m->kernel = true;
	m->loaded = true;
	m->kmin = UINT64_MAX;
	d->modules[d->nr_modules++] = m;
	return m;
}

static void load_kallsyms(struct dsos *d, struct dso *kernel)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	struct symvec sv = { 0 }, *mvec = NULL;
	char line[1024];
	bool any_addr = false;
	uint32_t i;

	if (!f) {
		pr_warn("cannot read /proc/kallsyms: kernel symbols unresolved");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *end, *name, *mod, *nl;
		unsigned long long a = strtoull(line, &end, 16);
		char t;
		struct symvec *dst = &sv;
		const char *own;

		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		t = end[1];
		name = end + 3;
		nl = strchr(name, '\n');
		if (nl)
			*nl = 0;
		if (a)
			any_addr = true;
		if (!kallsyms_type_ok(t) || !*name)
			continue;
		mod = strchr(name, '\t');
		if (mod) {
			char *close;
			struct dso *m;

			*mod++ = 0;
			if (*mod == '[')
				mod++;
			close = strchr(mod, ']');
			m = module_dso(d, mod,
				       close ? (size_t)(close - mod) :
					       strlen(mod),
				       &mvec);
			if (!m)
				continue;
			for (i = d->nr_modules; i-- > 0;)
				if (d->modules[i] == m)
					break;
			dst = &mvec[i];
			if (a < m->kmin)
				m->kmin = a;
			if (a > m->kmax)
				m->kmax = a;
		}
		own = symvec_own(dst, name);
		if (!own || symvec_add(dst, a, 0,
				       t == 'W' || t == 'w'   ? STB_WEAK :
				       (t >= 'A' && t <= 'Z') ? STB_GLOBAL :
								STB_LOCAL,
				       own))
			break;
	}
	fclose(f);
	if (!any_addr)
		pr_warn("/proc/kallsyms shows no addresses (kptr_restrict): kernel symbols unresolved");
	else {
		symvec_fixup(&sv);
		if (symvec_install(&sv, kernel))
			pr_warn("out of memory reading kallsyms");
		for (i = 0; i < d->nr_modules; i++) {
			struct dso *m = d->modules[i];

			symvec_fixup(&mvec[i]);
			symvec_install(&mvec[i], m);
			if (m->nr_syms)
				m->kmax = m->syms[m->nr_syms - 1].end;
		}
	}
	for (i = 0; i < d->nr_modules; i++)
		symvec_free(&mvec[i]);
	free(mvec);
	symvec_free(&sv);
}

/* ---- dsos ------------------------------------------------------------ */

int dsos_init(struct dsos *d, bool host)
{
	memset(d, 0, sizeof(*d));
	d->mask = 255;
	d->tab = calloc(d->mask + 1, sizeof(*d->tab));
	if (!d->tab)
		return -ENOMEM;
	d->all_tail = &d->all;
	d->host = host;
	if (elf_version(EV_CURRENT) == EV_NONE)
		pr_warn("libelf: %s", elf_errmsg(-1));
	return 0;
}

void dsos_exit(struct dsos *d)
{
	struct dso *x = d->all, *n;

	for (; x; x = n) {
		n = x->all_next;
		free(x->name);
		free(x->syms);
		free(x->strs);
		free(x->segs);
		free(x);
	}
	free(d->tab);
	free(d->modules);
	free(d->bid_table);
	memset(d, 0, sizeof(*d));
}

static int perfmap_sym(uint64_t start, uint64_t size, const char *name,
		       void *ctx)
{
	struct symvec *sv = ctx;
	const char *own = symvec_own(sv, name);

	return own ? symvec_add(sv, start, size, STB_GLOBAL, own) : -ENOMEM;
}

/* A JIT's symbols for its anonymous code, as perf reads them: the map
 * file named after the process (addresses are the code's own). */
static void load_perfmap(struct dso *dso)
{
	struct symvec sv = { 0 };
	char *buf;
	size_t len;
	int bad, err = perfmap_read(dso->name, &buf, &len);

	if (err) {
		if (err == -EPERM)
			pr_warn("%s: not owned by us or root, ignored (as perf does)",
				dso->name);
		return;
	}
	bad = perfmap_parse(buf, len, perfmap_sym, &sv);
	if (bad > 0)
		pr_warn("%s: %d malformed lines skipped", dso->name, bad);
	if (bad >= 0) {
		symvec_fixup(&sv);
		if (symvec_install(&sv, dso))
			pr_warn("%s: cannot keep its symbols", dso->name);
	}
	symvec_free(&sv);
	free(buf);
}

static bool has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && !memcmp(s, p, n);
}

static enum dso_kind kind_of(const char *name, size_t len)
{
	if (has_prefix(name, len, "[kernel.kallsyms]"))
		return DSO_KERNEL;
	if (len == 6 && !memcmp(name, "[vdso]", 6))
		return DSO_VDSO;
	if (name[0] != '/' || has_prefix(name, len, "//anon") ||
	    has_prefix(name, len, "/dev/zero") ||
	    has_prefix(name, len, "/anon_hugepage") ||
	    has_prefix(name, len, "/SYSV"))
		return DSO_NONE;
	return DSO_FILE;
}

/* perf's is_anon_memory() and is_no_dso_memory(): maps whose addresses
 * are not offsets into a file. */
static bool identity_of(const char *name, size_t len)
{
	return has_prefix(name, len, "//anon") ||
	       has_prefix(name, len, "/dev/zero") ||
	       has_prefix(name, len, "/anon_hugepage") ||
	       has_prefix(name, len, "[stack") ||
	       has_prefix(name, len, "/SYSV") ||
	       (len == 6 && !memcmp(name, "[heap]", 6));
}

static int dsos_grow(struct dsos *d)
{
	uint32_t nmask = d->mask * 2 + 1;
	struct dso **t = calloc((size_t)nmask + 1, sizeof(*t));
	struct dso *x;

	if (!t)
		return -ENOMEM;
	for (x = d->all; x; x = x->all_next) {
		x->next = t[x->hash & nmask];
		t[x->hash & nmask] = x;
	}
	free(d->tab);
	d->tab = t;
	d->mask = nmask;
	return 0;
}

/* perf's HEADER_BUILD_ID entry: header (8), pid (4), build-id (20),
 * its size (1; with PERF_RECORD_MISC_BUILD_ID_SIZE), 3 reserved, name. */
#define BID_ENTRY_NAME 36
#define BID_MISC_SIZE (1u << 15)

/* @x's build-id from the file's table, if it names @x. */
static void recorded_build_id(struct dsos *d, struct dso *x)
{
	size_t off = 0, len = d->bid_len;
	const unsigned char *p = d->bid_table;

	while (p && off + BID_ENTRY_NAME <= len) {
		uint16_t misc, rsz;
		size_t nl;

		memcpy(&misc, p + off + 4, 2);
		memcpy(&rsz, p + off + 6, 2);
		if (rsz < BID_ENTRY_NAME || rsz > len - off)
			return;
		nl = strnlen((const char *)p + off + BID_ENTRY_NAME,
			     rsz - BID_ENTRY_NAME);
		if (nl == strlen(x->name) &&
		    !memcmp(p + off + BID_ENTRY_NAME, x->name, nl)) {
			size_t n = misc & BID_MISC_SIZE ? p[off + 32] : 20;

			if (n && n <= 20) {
				dso_set_build_id(x, p + off + 12, n);
				x->build_id_recorded = true;
			}
			return;
		}
		off += rsz;
	}
}

int dsos_set_build_ids(struct dsos *d, const void *table, size_t len)
{
	unsigned char *c = NULL;

	if (len) {
		c = malloc(len);
		if (!c)
			return -ENOMEM;
		memcpy(c, table, len);
	}
	free(d->bid_table);
	d->bid_table = c;
	d->bid_len = len;
	/* objects named before the table came */
	for (struct dso *x = d->all; x; x = x->all_next)
		if (x->kind == DSO_FILE && !x->build_id_size)
			recorded_build_id(d, x);
	return 0;
}

struct dso *dsos_findnew(struct dsos *d, const char *name, size_t len)
{
	uint32_t h = name_hash(name, len);
	struct dso *x;
	const char *slash;

	for (x = d->tab[h & d->mask]; x; x = x->next)
		if (x->hash == h && !strncmp(x->name, name, len) &&
		    !x->name[len])
			return x;
	if (d->nr >= d->mask && dsos_grow(d))
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->name = strndup(name, len);
	if (!x->name) {
		free(x);
		return NULL;
	}
	x->hash = h;
	x->owner = d;
	x->kind = len ? kind_of(x->name, len) : DSO_NONE;
	x->identity = len ? identity_of(x->name, len) : false;
	if (x->kind == DSO_KERNEL) {
		/* "[kernel.kallsyms]_text" and the like: one kernel dso. */
		free(x->name);
		x->name = strdup("[kernel.kallsyms]");
		if (!x->name) {
			free(x);
			return NULL;
		}
		if (d->kernel) {
			free(x->name);
			free(x);
			return d->kernel;
		}
		x->hash = name_hash(x->name, strlen(x->name));
		x->kernel = true;
		d->kernel = x;
	}
	if (x->kind == DSO_FILE)
		recorded_build_id(d, x);
	slash = strrchr(x->name, '/');
	x->short_name = slash && x->name[0] != '[' ? slash + 1 : x->name;
	x->next = d->tab[x->hash & d->mask];
	d->tab[x->hash & d->mask] = x;
	*d->all_tail = x;
	d->all_tail = &x->all_next;
	x->serial = d->nr++;
	return x;
}

void dsos_set_kernel_text(struct dsos *d, uint64_t text)
{
	d->recorded_text = text;
}

static void kernel_load(struct dsos *d)
{
	struct dso *k = d->kernel;

	d->kernel_loaded = true;
	if (!k) {
		k = dsos_findnew(d, "[kernel.kallsyms]", 17);
		if (!k)
			return;
	}
	k->loaded = true;
	if (!d->host)
		return;
	load_kallsyms(d, k);
	d->kernel_delta = 0;
	if (d->recorded_text && k->nr_syms) {
		for (uint32_t i = 0; i < k->nr_syms; i++) {
			if (!strcmp(k->syms[i].name, "_text") ||
			    !strcmp(k->syms[i].name, "_stext")) {
				d->kernel_delta = (int64_t)(d->recorded_text -
							    k->syms[i].start);
				break;
			}
		}
	}
}

struct dso *dsos_kernel_for(struct dsos *d, uint64_t addr)
{
	if (!d->kernel_loaded)
		kernel_load(d);
	for (uint32_t i = 0; i < d->nr_modules; i++) {
		struct dso *m = d->modules[i];

		if (addr >= m->kmin && addr < m->kmax)
			return m;
	}
	return d->kernel;
}

static void dso_load(struct dso *dso);

uint64_t dso_addr(struct dso *dso, uint64_t map_ip)
{
	uint32_t i;

	if (!dso->loaded)
		dso_load(dso);
	if (dso->kind == DSO_KERNEL)
		return map_ip - (uint64_t)dso->owner->kernel_delta;
	for (i = 0; i < dso->nr_segs; i++) {
		const struct load_seg *s = &dso->segs[i];

		if (map_ip >= s->off && map_ip - s->off < s->len)
			return map_ip - s->off + s->vaddr;
	}
	return map_ip;
}

static void dso_load(struct dso *dso)
{
	dso->loaded = true;
	switch (dso->kind) {
	case DSO_FILE:
		load_file(dso);
		break;
	case DSO_PERFMAP:
		load_perfmap(dso);
		break;
	case DSO_VDSO:
		/* Only a file recorded here has our vDSO; perf looks for it
		 * in its build-id cache, which --symfs leaves out */
		if (dso->owner->host && !dso->owner->symfs)
			load_vdso(dso);
		break;
	default:
		break;
	}
}

void dso_set_perfmap(struct dso *dso, int32_t pid)
{
	dso->kind = DSO_PERFMAP;
	dso->identity = true;
	snprintf(dso->jit_name, sizeof(dso->jit_name), "[JIT] tid %d",
		 (int)pid);
	dso->short_name = dso->jit_name;
}

void dso_set_build_id(struct dso *dso, const void *id, size_t len)
{
	if (len > sizeof(dso->build_id))
		len = sizeof(dso->build_id);
	memcpy(dso->build_id, id, len);
	dso->build_id_size = (uint8_t)len;
}

const struct symbol *dso_find_symbol(struct dso *dso, uint64_t addr)
{
	const struct symbol *s;
	uint32_t lo, hi;

	if (!dso->loaded)
		dso_load(dso);
	if (!dso->nr_syms)
		return NULL;
	s = &dso->syms[dso->last];
	/* (not when a symbol inside it, a PLT entry, holds the address) */
	if (addr >= s->start && addr < s->end &&
	    (dso->last + 1 == dso->nr_syms ||
	     dso->syms[dso->last + 1].start > addr))
		return s;
	lo = 0;
	hi = dso->nr_syms;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (dso->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* The nearest start below, or an enclosing one a little before
	 * (past PLT entries, within a page, for one stretched over them) */
	for (uint32_t k = 0;
	     k <= lo && (k < 4 || addr - dso->syms[lo - k].start < 4096); k++) {
		s = &dso->syms[lo - k];
		if (addr >= s->start && addr < s->end) {
			dso->last = lo - k;
			return s;
		}
	}
	return NULL;
}
