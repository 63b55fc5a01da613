// SPDX-License-Identifier: MIT
/*
 * Symbol tables from ELF files, as perf 6.1's symbol-elf.c reads them
 * (symbols.c says which file and which symbols): the build id, the
 * PT_LOAD segments, .symtab or .dynsym, "name@plt" entries, the debug
 * files perf looks for, the vDSO.
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
/*
 * perf's build-id cache entry of @dso (PERF_BUILDID_DIR, else ~/.debug):
 * .build-id/XX/REST/@leaf ("elf" for an object, "vdso" for the vDSO) into
 * @path, if it is a regular file with the recorded build-id.
 */
static bool cached_object(struct dso *dso, const char *leaf, char *path)
{
	struct buildid disk;
	const char *dir = getenv("PERF_BUILDID_DIR"), *home;
	char hex[2 * BUILDID_MAX + 1], cache[PATH_MAX];
	size_t n = dso->build_id_size;

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
			     "/.build-id/%.2s/%s/%s", hex, hex + 2,
			     leaf) >= sizeof(cache) - n ||
	    !is_regular(cache) || buildid_from_file(cache, &disk) ||
	    disk.size < dso->build_id_size ||
	    memcmp(disk.data, dso->build_id, dso->build_id_size))
		return false;
	memcpy(path, cache, strlen(cache) + 1);
	return true;
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
	size_t n = dso->build_id_size;

	if (!buildid_from_file(path, &disk) && disk.size >= n &&
	    !memcmp(disk.data, dso->build_id, n))
		return true;
	/* under --symfs, the objects there only (perf 6.1 leaves an object
	 * missing there unresolved, cache or not) */
	if (dso->owner->symfs)
		return false;
	return cached_object(dso, "elf", path);
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

void dso_load_file(struct dso *dso)
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

bool dso_code_path(struct dso *dso, char *path)
{
	if (dso->kind != DSO_FILE || !symfs_path(dso->owner, dso->name, path))
		return false;
	if (dso->build_id_recorded)
		return recorded_object(dso, path);
	return is_regular(path);
}

/*
 * The vDSO.  With its build-id in the file, perf reads the copy its
 * build-id cache keeps (perf record stores it there) and shows addresses
 * without one: the same here.  Without a build-id, the vDSO of this
 * process: the kernel maps the same image everywhere.
 */
void dso_load_vdso(struct dso *dso)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	FILE *f;
	char line[512];
	size_t len = 0;
	struct elf_file ef;

	if (dso->build_id_recorded) {
		char path[PATH_MAX];
		const char *kind;

		if (!cached_object(dso, "vdso", path) ||
		    elf_file_open(&ef, path, &kind))
			return;
		if (load_elf(dso, &ef))
			pr_warn("[vdso]: cannot read its symbols from %s",
				path);
		elf_file_close(&ef);
		return;
	}
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
