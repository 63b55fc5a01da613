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
#include "../format/perf_record.h"
#include "../format/safe_open.h"
#include "perfmap.h"
#include "symbols.h"
#include "symbols_internal.h"

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

int symvec_add(struct symvec *sv, uint64_t start, uint64_t size, uint8_t bind,
	       const char *name)
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

char *symvec_own(struct symvec *sv, const char *s)
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
char *symvec_keep(struct symvec *sv, char *p)
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

void symvec_free(struct symvec *sv)
{
	for (size_t i = 0; i < sv->nr_owned; i++)
		free(sv->owned[i]);
	free(sv->owned);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

int rawsym_cmp(const void *a, const void *b)
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
void symvec_fixup(struct symvec *sv)
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
int symvec_install(struct symvec *sv, struct dso *dso)
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

/* @x's build-id from the file's table, if it names @x. */
static void recorded_build_id(struct dsos *d, struct dso *x)
{
	size_t off = 0, len = d->bid_len;
	const unsigned char *p = d->bid_table;
	struct prd_record_header_build_id e;
	uint32_t rsz;

	while (p && (rsz = prd_build_id_entry(p + off, len - off, &e))) {
		if (e.filename_len == strlen(x->name) &&
		    !memcmp(e.filename ? e.filename : "", x->name,
			    e.filename_len)) {
			size_t n = prd_build_id_size(&e);

			if (n && n <= 20) {
				dso_set_build_id(x, e.build_id, n);
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
		if ((x->kind == DSO_FILE || x->kind == DSO_VDSO) &&
		    !x->build_id_size)
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
	if (x->kind == DSO_FILE || x->kind == DSO_VDSO)
		recorded_build_id(d, x); /* the vDSO: perf's cache copy */
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
		dso_load_file(dso);
		break;
	case DSO_PERFMAP:
		load_perfmap(dso);
		break;
	case DSO_VDSO:
		/* Only a file recorded here has our vDSO; perf looks for it
		 * in its build-id cache, which --symfs leaves out */
		if (dso->owner->host && !dso->owner->symfs)
			dso_load_vdso(dso);
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
