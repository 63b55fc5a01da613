// SPDX-License-Identifier: MIT
/*
 * Instruction trace reports over CoreSight trace: the listings of
 * perfring_cs_decode() (snapshot directories and perf.data AUX data).
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

/* ---- counts by address pair (AutoFDO ranges and branches) ---- */

struct cnt_ent {
	uint64_t a, b, n;
};

struct cnt_map {
	struct cnt_ent *e;
	size_t mask, nr;
};

static void cnt_free(struct cnt_map *m)
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

static void copy_stats(struct perfring_cs_stats *st, const struct csd_stats *c)
{
	struct perfring_cs_stats t = { .sz = sizeof(t) };

	if (!st)
		return;
	t.trace_bytes = c->bytes;
	t.packets = c->packets;
	t.elements = c->elements;
	t.ranges = c->ranges;
	t.instructions = c->instructions;
	t.nosync = c->nosync;
	t.nacc = c->nacc;
	t.resyncs = c->resyncs;
	t.errors = c->errors;
	t.decoders = c->decoders;
	/* These stats always took sz 0 for "all of it" (kept as it was). */
	if (!st->sz)
		st->sz = sizeof(*st);
	OPTS_FILL(st, &t);
}

static void add_stats(struct csd_stats *a, const struct csd_stats *b)
{
	a->bytes += b->bytes;
	a->packets += b->packets;
	a->elements += b->elements;
	a->ranges += b->ranges;
	a->instructions += b->instructions;
	a->nosync += b->nosync;
	a->nacc += b->nacc;
	a->resyncs += b->resyncs;
	a->errors += b->errors;
	if (b->decoders > a->decoders)
		a->decoders = b->decoders;
}

static int ob_open(struct outbuf *ob, FILE *f)
{
	memset(ob, 0, sizeof(*ob));
	ob->cap = OB_SIZE + OB_SLACK;
	ob->p = malloc(ob->cap);
	ob->f = f;
	return ob->p ? 0 : -ENOMEM;
}

static int ob_close(struct outbuf *ob)
{
	int err;

	ob_flush(ob);
	err = ob->err;
	if (!err && ob->f && fflush(ob->f))
		err = -errno;
	free(ob->p);
	ob->p = NULL;
	return err;
}

static unsigned listing_flags(const struct perfring_cs_opts *o)
{
	if (o->elements_only)
		return CSD_DECODE | CSD_PRINT_ELEMS;
	if (o->decode)
		return CSD_DECODE | CSD_PRINT_ELEMS | CSD_PRINT_RAW_PKTS;
	return CSD_PRINT_PKTS;
}

static int aux_decode(const struct perfring_cs_opts *o, struct outbuf *ob,
		      struct csd_stats *st);

int perfring_cs_decode(const struct perfring_cs_opts *o, FILE *out,
		       struct perfring_cs_stats *st)
{
	struct csd_stats cs = { 0 };
	struct perfring_cs_opts oc;
	struct outbuf ob;
	int ret, ret2, framing;

	if (!o || !OPTS_VALID(o))
		return -EINVAL;
	OPTS_COPY(&oc, o);
	o = &oc;
	if (!o->snapshot && !o->input)
		return -EINVAL;
	framing = o->framing ? css_framing_parse(o->framing) : 0;
	if (framing < 0 || (!o->snapshot && (o->framing || o->halt_on_error))) {
		pr_err("%s", framing < 0 ? "unknown framing (auto, frames, "
					   "tpiu, tpiu-hsync, dstream, raw)" :
					   "framing and halting on errors are "
					   "snapshot options");
		return -EINVAL;
	}
	ret = ob_open(&ob, out);
	if (ret)
		return ret;
	if (o->snapshot) {
		struct css *s;
		unsigned flags = listing_flags(o);

		if (o->halt_on_error)
			flags |= CSD_HALT_ON_ERROR;
		ret = css_open_dir(o->snapshot, &s);
		if (!ret) {
			css_set_framing(s, (enum css_framing)framing);
			ret = css_decode(s, o->buffer, flags, &ob, NULL, NULL,
					 &cs);
			css_free(s);
		}
	} else {
		ret = aux_decode(o, &ob, &cs);
	}
	ret2 = ob_close(&ob);
	copy_stats(st, &cs);
	return ret ? ret : ret2;
}

/* ---- perf.data with cs_etm AUX trace ---------------------------------- */

#define MAX_BINS 4096
#define MAX_MAPS (1u << 20)
#define MAX_SYMDIR_FILES 200000

/* A file the trace ran in: its bytes (mapped) and PT_LOAD segments. */
struct bin {
	char *name; /* as the MMAP record names it */
	char *path; /* where it was found, or NULL */
	const uint8_t *data;
	size_t size;
	struct load_seg *segs;
	uint32_t nr_segs;
	uint8_t build_id[20];
	uint8_t build_id_size; /* from the perf.data */
	bool looked_up;
	bool has_syms; /* the file defines symbols */
	struct dso *dso; /* symbols (report) */
	/* inject */
	struct cnt_map *ranges, *branches;
	uint64_t insns, nranges; /* report */
};

struct map {
	uint64_t start, end, pgoff;
	uint32_t pid;
	struct bin *bin;
};

/* Per trace ID state of the instruction range consumers. */
struct tid_state {
	bool pending; /* inject: a range waits for its successor */
	bool fix_target; /* ... whose start is its branch target */
	struct bin *bin;
	uint64_t start, end, target;
	bool taken;
	int cpu;
};

struct itr {
	const char *symdir;
	struct prd_file *pf;
	struct auxtrace_file *af;
	const struct cs_etm_info *info;
	struct bin *bins[MAX_BINS];
	uint32_t nr_bins;
	struct map *maps;
	uint32_t nr_maps, cap_maps;
	uint32_t last_map; /* cache */
	bool raw_cpu[1024]; /* AUX records flagged CORESIGHT_FORMAT_RAW */
	int16_t hw_id[1024]; /* AUX_OUTPUT_HW_ID trace IDs per CPU + 1 */
	int64_t cur_pid[128]; /* context ID per trace ID (-1: unknown) */
	unsigned search_budget; /* directory entries --symdir searches may
				   read, for all binaries together */
	struct dsos dsos;
	bool dsos_ok;
	struct tid_state ts[128];
	/* the consumer */
	int (*elem)(struct itr *it, uint64_t idx, uint8_t id,
		    const ocsd_generic_trace_elem *el);
	int (*chunk_fn)(struct itr *it, size_t i,
			const struct auxtrace_chunk *c);
	struct outbuf *ob;
	const struct perfring_itrace_opts *io;
	csh cs; /* capstone */
	bool cs_ok;
	struct css *snap; /* snapshot input instead of a perf.data */
	struct csd_stats st;
	bool damaged; /* the perf.data is: -EBADMSG after decoding */
};

static struct bin *bin_get(struct itr *it, const char *name, size_t len)
{
	struct bin *b;

	for (uint32_t i = 0; i < it->nr_bins; i++)
		if (strlen(it->bins[i]->name) == len &&
		    !memcmp(it->bins[i]->name, name, len))
			return it->bins[i];
	if (it->nr_bins == MAX_BINS)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->name = strndup(name, len);
	if (!b->name) {
		free(b);
		return NULL;
	}
	it->bins[it->nr_bins++] = b;
	return b;
}

/* Build-id note of an ELF image in memory (0: none). */
static size_t elf_build_id_of(Elf *e, uint8_t *id)
{
	size_t n = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, no, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &no, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + no, "GNU", 4)) {
				n = nh.n_descsz > 20 ? 20 : nh.n_descsz;
				memcpy(id, (char *)d->d_buf + doff, n);
				return n;
			}
		}
	}
	return 0;
}

/* Whether .symtab or .dynsym define any symbol (a stripped binary may
 * have none: then no symbol table is loaded for it). */
static bool elf_has_defined_syms(Elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_name &&
			    sym.st_shndx != SHN_UNDEF &&
			    sym.st_shndx < SHN_LORESERVE)
				return true;
		}
	}
	return false;
}

/* Maps @path; fills the segments and build-id.  0 or -errno. */
static int bin_load_file(struct bin *b, const char *path, uint8_t *id,
			 size_t *id_len)
{
	struct stat st;
	void *p;
	Elf *e;
	size_t n;
	const char *kind;
	/* a path the recording names: a FIFO or a device is not opened */
	int fd = safe_open_regular(path, &st, &kind);

	*id_len = 0;
	if (fd < 0) {
		if (kind)
			pr_warn("%s is %s, not a regular file: not opened, its code is not decoded",
				path, kind);
		return fd;
	}
	if (!st.st_size) {
		close(fd);
		return -EINVAL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_memory(p, (size_t)st.st_size);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n) ||
	    n > 4096) {
		if (e)
			elf_end(e);
		munmap(p, (size_t)st.st_size);
		return -ENOEXEC;
	}
	free(b->segs);
	b->segs = calloc(n ? n : 1, sizeof(*b->segs));
	b->nr_segs = 0;
	for (size_t i = 0; b->segs && i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b->segs[b->nr_segs].off = ph.p_offset;
		b->segs[b->nr_segs].len = ph.p_filesz;
		b->segs[b->nr_segs].vaddr = ph.p_vaddr;
		b->nr_segs++;
	}
	*id_len = elf_build_id_of(e, id);
	b->has_syms = elf_has_defined_syms(e);
	elf_end(e);
	if (b->data)
		munmap((void *)b->data, b->size);
	b->data = p;
	b->size = (size_t)st.st_size;
	return 0;
}

static void bin_unload(struct bin *b)
{
	if (b->data)
		munmap((void *)b->data, b->size);
	b->data = NULL;
	b->size = 0;
}

/* Tries @path for @b: right build-id (when the perf.data gives one). */
static bool bin_try(struct bin *b, const char *path)
{
	uint8_t id[20];
	size_t n;

	if (bin_load_file(b, path, id, &n) < 0)
		return false;
	if (b->build_id_size && (n < b->build_id_size ||
				 memcmp(id, b->build_id, b->build_id_size))) {
		/* simpleperf pads short ids with zeros: compare what the
		 * file has, the rest must be zero. */
		bool ok = n && !memcmp(id, b->build_id, n);

		for (size_t i = n; ok && i < b->build_id_size; i++)
			ok = !b->build_id[i];
		if (!ok) {
			pr_debug("itrace: %s: build-id differs from %s's", path,
				 b->name);
			bin_unload(b);
			return false;
		}
	}
	if (!b->build_id_size && n) {
		/* None recorded: the file's own (inject prints it). */
		memcpy(b->build_id, id, n);
		b->build_id_size = (uint8_t)n;
	}
	/* Absolute: the symbol tables take only absolute file names. */
	b->path = realpath(path, NULL);
	if (!b->path)
		b->path = strdup(path);
	return b->path != NULL;
}

/* Recursive search of @dir for a file named @base with the right id. */
static bool symdir_search(struct bin *b, const char *dir, const char *base,
			  int depth, unsigned *budget)
{
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (depth > 8 || !(d = opendir(dir)))
		return false;
	while (!found && *budget && (de = readdir(d)) != NULL) {
		char path[PATH_MAX];

		(*budget)--;
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (de->d_type == DT_DIR)
			found = symdir_search(b, path, base, depth + 1, budget);
		else if (!strcmp(de->d_name, base))
			found = bin_try(b, path);
	}
	closedir(d);
	return found;
}

/*
 * The build-id as a file name in @dir: the 20 bytes in hex, the id
 * without simpleperf's zero padding, and perf's cache layout
 * .build-id/<first byte>/<the rest>.
 */
static bool bin_try_build_id(struct bin *b, const char *dir)
{
	char hex[41], path[PATH_MAX];
	int len = b->build_id_size;

	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b->build_id[i]);
	hex[2 * len] = 0;
	if (snprintf(path, sizeof(path), "%s/%s", dir, hex) <
		    (int)sizeof(path) &&
	    bin_try(b, path))
		return true;
	while (len > 1 && !b->build_id[len - 1])
		len--;
	hex[2 * len] = 0;
	if (len != b->build_id_size &&
	    snprintf(path, sizeof(path), "%s/%s", dir, hex) <
		    (int)sizeof(path) &&
	    bin_try(b, path))
		return true;
	return snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", dir, hex,
			hex + 2) < (int)sizeof(path) &&
	       bin_try(b, path);
}

/* Finds the file of @b: in --symdir by path, build-id, base name, then
 * the recorded path itself. */
static void bin_find(struct itr *it, struct bin *b)
{
	const char *base = strrchr(b->name, '/');
	char path[PATH_MAX];

	if (b->looked_up)
		return;
	b->looked_up = true;
	base = base ? base + 1 : b->name;
	if (b->name[0] == '[' || !*base)
		return; /* [vdso], [kernel.kallsyms]: no file */
	if (it->symdir) {
		if (snprintf(path, sizeof(path), "%s/%s", it->symdir, b->name) <
			    (int)sizeof(path) &&
		    bin_try(b, path))
			return;
		if (b->build_id_size && bin_try_build_id(b, it->symdir))
			return;
		if (snprintf(path, sizeof(path), "%s/%s", it->symdir, base) <
			    (int)sizeof(path) &&
		    bin_try(b, path))
			return;
		if (symdir_search(b, it->symdir, base, 0, &it->search_budget))
			return;
	}
	if (bin_try(b, b->name))
		return;
	pr_warn("itrace: %s not found%s%s: its code is not decoded", b->name,
		it->symdir ? " in " : "", it->symdir ? it->symdir : "");
}

static int add_map(struct itr *it, uint32_t pid, uint64_t start, uint64_t len,
		   uint64_t pgoff, const char *name, size_t name_len,
		   const uint8_t *id, size_t id_len)
{
	struct bin *b;

	if (!len || start + len < start)
		return 0;
	if (it->nr_maps == it->cap_maps) {
		uint32_t nc = it->cap_maps ? it->cap_maps * 2 : 256;
		struct map *nm;

		if (nc > MAX_MAPS)
			return 0;
		nm = realloc(it->maps, nc * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		it->maps = nm;
		it->cap_maps = nc;
	}
	b = bin_get(it, name, name_len);
	if (!b)
		return -ENOMEM;
	if (id_len && !b->build_id_size) {
		memcpy(b->build_id, id, id_len > 20 ? 20 : id_len);
		b->build_id_size = (uint8_t)(id_len > 20 ? 20 : id_len);
	}
	it->maps[it->nr_maps++] =
		(struct map){ start, start + len, pgoff, pid, b };
	return 0;
}

/* The map holding @addr: the newest one (a later mmap replaces). */
static bool map_of_pid(const struct map *m, int64_t pid)
{
	/* pid -1: kernel maps, for everyone; pid < 0: not known yet */
	return pid < 0 || m->pid == (uint32_t)-1 || m->pid == (uint64_t)pid;
}

/*
 * The map holding @addr for the process trace ID @id is running (its
 * context ID, once a PE context element gave one): the newest such map (a
 * later mmap replaces); failing that the newest map of anyone.
 */
static struct map *find_map(struct itr *it, uint64_t addr, uint8_t id)
{
	int64_t pid = it->cur_pid[id & 0x7f];
	struct map *m, *any = NULL;

	if (it->last_map < it->nr_maps) {
		m = &it->maps[it->last_map];
		if (addr >= m->start && addr < m->end && map_of_pid(m, pid))
			return m;
	}
	for (uint32_t i = it->nr_maps; i-- > 0;) {
		m = &it->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		if (!map_of_pid(m, pid)) {
			if (!any)
				any = m;
			continue;
		}
		it->last_map = i;
		bin_find(it, m->bin);
		return m;
	}
	if (any)
		bin_find(it, any->bin);
	return any;
}

static uint32_t mem_cb(const void *ctx, const ocsd_vaddr_t addr,
		       const ocsd_mem_space_acc_t space, const uint8_t trc_id,
		       const uint32_t req, uint8_t *buf)
{
	struct itr *it = (struct itr *)ctx;
	struct map *m = find_map(it, addr, trc_id);
	uint64_t off, n;

	(void)space;
	if (!m || !m->bin->data)
		return 0;
	off = addr - m->start + m->pgoff;
	if (off < m->pgoff || off >= m->bin->size)
		return 0;
	n = m->bin->size - off;
	if (n > m->end - addr)
		n = m->end - addr;
	if (n > req)
		n = req;
	memcpy(buf, m->bin->data + off, n);
	return (uint32_t)n;
}

/* Reads code for disassembly: perf.data files or snapshot dumps. */
static size_t read_code(struct itr *it, uint8_t id, uint64_t addr, uint8_t *buf,
			size_t n)
{
	if (it->snap)
		return css_read_mem(it->snap, addr, buf, n);
	return mem_cb(it, addr, OCSD_MEM_SPACE_ANY, id,
		      n > UINT32_MAX ? UINT32_MAX : (uint32_t)n, buf);
}

static int scan_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct itr *it = ctx;
	const union prd_record *v = ev->rec;
	const struct prd_record_mmap *mm = &v->mmap;

	(void)f;
	switch (v->header.type) {
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_MMAP:
		if (!mm->filename)
			return 0;
		if (v->header.type == PERF_RECORD_MMAP2 &&
		    (v->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			return add_map(it, mm->pid, mm->start, mm->len,
				       mm->pgoff, mm->filename,
				       mm->filename_len, mm->build_id,
				       mm->build_id_size);
		return add_map(it, mm->pid, mm->start, mm->len, mm->pgoff,
			       mm->filename, mm->filename_len, NULL, 0);
	case PERF_RECORD_AUX:
		/* raw (TRBE) trace? */
		if ((v->aux.flags & 0x100) && ev->sample &&
		    ev->sample->cpu < 1024)
			it->raw_cpu[ev->sample->cpu] = true;
		return 0;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		/* Header version 2: the CPU's trace ID (bits 7:0 of hw_id,
		 * format version 0 in bits 63:56). */
		if (ev->sample && ev->sample->cpu < 1024 &&
		    !(v->aux_output_hw_id.hw_id >> 56))
			it->hw_id[ev->sample->cpu] =
				(int16_t)((v->aux_output_hw_id.hw_id & 0x7f) +
					  1);
		return 0;
	default:
		return 0;
	}
}

/* Build-ids of the HEADER_BUILD_ID feature. */
static void read_build_ids(struct itr *it)
{
	size_t len = 0, off = 0;
	const uint8_t *p = prd_feature(it->pf, PRD_FEAT_BUILD_ID, &len);
	struct prd_record_header_build_id e;
	uint32_t rsz;

	while (p && (rsz = prd_build_id_entry(p + off, len - off, &e))) {
		struct bin *b = bin_get(it, e.filename ? e.filename : "",
					e.filename_len);
		size_t n = prd_build_id_size(&e);

		if (b && !b->build_id_size && n) {
			if (n > 20)
				n = 20;
			memcpy(b->build_id, e.build_id, n);
			b->build_id_size = (uint8_t)n;
		}
		off += rsz;
	}
}

static void itr_free(struct itr *it)
{
	for (uint32_t i = 0; i < it->nr_bins; i++) {
		struct bin *b = it->bins[i];

		bin_unload(b);
		free(b->name);
		free(b->path);
		free(b->segs);
		cnt_free(b->ranges);
		cnt_free(b->branches);
		free(b);
	}
	free(it->maps);
	if (it->af)
		auxtrace_file_close(it->af);
	if (it->pf)
		prd_close(it->pf);
	if (it->dsos_ok)
		dsos_exit(&it->dsos);
	if (it->cs_ok)
		cs_close(&it->cs);
	if (it->snap)
		css_free(it->snap);
}

static int itr_open(struct itr *it, const char *path, const char *symdir)
{
	int ret;

	memset(it, 0, sizeof(*it));
	for (int i = 0; i < 128; i++)
		it->cur_pid[i] = -1;
	it->search_budget = MAX_SYMDIR_FILES;
	it->symdir = symdir;
	ret = prd_open(path, &it->pf);
	if (ret < 0)
		return ret;
	if (prd_is_pipe(it->pf)) {
		pr_err("%s: pipe-format perf.data: its AUX data cannot be read "
		       "back",
		       path);
		return -EOPNOTSUPP;
	}
	read_build_ids(it);
	ret = prd_process(it->pf, false, scan_event, it);
	if (ret < 0 && ret != -EBADMSG)
		return ret;
	if (ret == -EBADMSG) {
		pr_warn("%s: damaged; the AUX data before the damage is "
			"decoded",
			path);
		it->damaged = true;
	}
	ret = auxtrace_file_open(path, &it->af);
	if (ret < 0)
		return ret;
	it->info = auxtrace_file_cs_etm(it->af);
	if (!it->info) {
		pr_err("%s: no cs_etm AUXTRACE_INFO: not a CoreSight trace",
		       path);
		return it->damaged ? -EBADMSG : -ENODATA;
	}
	if (!auxtrace_file_nr_chunks(it->af)) {
		pr_err("%s: no AUXTRACE data", path);
		return it->damaged ? -EBADMSG : -ENODATA;
	}
	return 0;
}

/* One decode tree over the chunks of AUX buffer (queue) @idx. */
static struct csd *tree_for(struct itr *it, uint32_t cpu, bool raw,
			    unsigned flags, struct outbuf *ob)
{
	struct csd *d = csd_new(!raw, OCSD_DFRMTR_FRAME_MEM_ALIGN, flags, ob);

	if (!d)
		return NULL;
	for (uint32_t i = 0; i < it->info->nr_cpu; i++) {
		struct cs_etm_cpu *c = &it->info->cpus[i];

		/* Version 2: the ID the kernel gave the CPU at run time. */
		if (c->trace_id_from_hw_id && c->cpu < 1024 &&
		    it->hw_id[c->cpu])
			c->trace_id = (uint8_t)(it->hw_id[c->cpu] - 1);

		/* Raw (TRBE) data holds one CPU's trace: only its decoder. */
		if (raw && c->cpu != cpu)
			continue;
		if (c->kind == CS_ETM_KIND_ETMV4) {
			ocsd_etmv4_cfg cfg = {
				.reg_configr = (uint32_t)c->configr,
				.reg_traceidr = c->trace_id,
				.reg_idr0 = (uint32_t)c->trcidr0,
				.reg_idr1 = (uint32_t)c->trcidr1,
				.reg_idr2 = (uint32_t)c->trcidr2,
				.reg_idr8 = (uint32_t)c->trcidr8,
				.arch_ver = ARCH_V8,
				.core_prof = profile_CortexA,
			};

			csd_add_etmv4(d, &cfg);
		} else if (c->kind == CS_ETM_KIND_ETE) {
			ocsd_ete_cfg cfg = {
				.reg_configr = (uint32_t)c->configr,
				.reg_traceidr = c->trace_id,
				.reg_idr0 = (uint32_t)c->trcidr0,
				.reg_idr1 = (uint32_t)c->trcidr1,
				.reg_idr2 = (uint32_t)c->trcidr2,
				.reg_idr8 = (uint32_t)c->trcidr8,
				.reg_devarch = (uint32_t)c->trcdevarch,
				.arch_ver = ARCH_AA64,
				.core_prof = profile_CortexA,
			};

			csd_add_ete(d, &cfg);
		} else if ((c->etmidr & 0xf00) == 0x300) {
			/* ETMIDR architecture 0x3x: PTM (program flow) */
			ocsd_ptm_cfg cfg = {
				.reg_idr = (uint32_t)c->etmidr,
				.reg_ctrl = (uint32_t)c->configr,
				.reg_ccer = (uint32_t)c->etmccer,
				.reg_trc_id = c->trace_id,
				.arch_ver = ARCH_V7,
				.core_prof = profile_CortexA,
			};

			csd_add_ptm(d, &cfg);
		} else {
			ocsd_etmv3_cfg cfg = {
				.reg_idr = (uint32_t)c->etmidr,
				.reg_ctrl = (uint32_t)c->configr,
				.reg_ccer = (uint32_t)c->etmccer,
				.reg_trc_id = c->trace_id,
				.arch_ver = ARCH_V7,
				.core_prof = profile_CortexA,
			};

			csd_add_etmv3(d, &cfg);
		}
	}
	if (!csd_stats(d)->decoders) {
		pr_err("itrace: no decoder for the trace of CPU %u", cpu);
		csd_free(d);
		return NULL;
	}
	if (flags & CSD_DECODE)
		csd_add_mem_cb(d, 0, ~0ull, mem_cb, it);
	return d;
}

static int itr_elem(void *ctx, uint64_t idx, uint8_t id,
		    const ocsd_generic_trace_elem *el)
{
	struct itr *it = ctx;

	/* The process a trace ID runs: its maps serve the code. */
	if (el->elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT &&
	    el->context.ctxt_id_valid)
		it->cur_pid[id & 0x7f] = el->context.context_id;
	return it->elem ? it->elem(it, idx, id, el) : 0;
}

/*
 * Decodes every AUX buffer (one per mmap index: per CPU, or per thread),
 * its chunks in file order, a tree for each; a gap between chunks of one
 * buffer resets its decoders.
 */
static int itr_decode(struct itr *it, unsigned flags, struct outbuf *ob)
{
	size_t n = auxtrace_file_nr_chunks(it->af);
	uint8_t *buf;
	int ret = 0;
	bool *done = calloc(n ? n : 1, sizeof(*done));

	buf = malloc(1 << 20);
	if (!buf || !done) {
		free(buf);
		free(done);
		return -ENOMEM;
	}
	for (size_t first = 0; first < n && !ret; first++) {
		const struct auxtrace_chunk *c0 =
			auxtrace_file_chunk(it->af, first);
		struct csd *d;
		uint64_t next = c0->offset;
		bool raw;

		if (done[first])
			continue;
		raw = c0->cpu < 1024 && it->raw_cpu[c0->cpu];
		d = tree_for(it, c0->cpu, raw, flags, ob);
		if (!d) {
			ret = -EINVAL;
			break;
		}
		csd_set_elem_fn(d, itr_elem, it);
		for (size_t i = first; i < n && !ret; i++) {
			const struct auxtrace_chunk *c =
				auxtrace_file_chunk(it->af, i);

			if (c->idx != c0->idx)
				continue;
			done[i] = true;
			if (c->offset != next) {
				/*
				 * A discontinuity (snapshots, lost data): what
				 * the decoders hold is flushed, then they
				 * start afresh and resync.
				 */
				if (it->info->snapshot)
					pr_debug("itrace: AUX buffer %u: "
						 "snapshot at 0x%llx",
						 c->idx,
						 (unsigned long long)c->offset);
				else
					pr_warn("itrace: AUX buffer %u: gap "
						"before offset 0x%llx: decoders "
						"reset",
						c->idx,
						(unsigned long long)c->offset);
				ret = csd_eot(d);
				if (!ret)
					ret = csd_reset(d);
				if (ret)
					break;
			}
			if (it->chunk_fn) {
				ret = it->chunk_fn(it, i, c);
				if (ret)
					break;
			}
			if (ob) {
				ob_puts(ob, "\n. ... CoreSight ");
				ob_puts(ob, raw ? "raw" : "formatted");
				ob_puts(ob, " trace data: size 0x");
				ob_x64(ob, c->size, 0);
				ob_puts(ob, " offset 0x");
				ob_x64(ob, c->offset, 0);
				ob_puts(ob, " idx ");
				ob_u64(ob, c->idx, 0, ' ');
				ob_puts(ob, " cpu ");
				ob_s64(ob, (int32_t)c->cpu, 0);
				ob_puts(ob, " (file offset 0x");
				ob_x64(ob, c->file_offset, 0);
				ob_puts(ob, ")\n");
			}
			next = c->offset + c->size;
			for (uint64_t off = 0; off < c->size && !ret;) {
				size_t k = c->size - off > (1 << 20) ?
						   (1 << 20) :
						   (size_t)(c->size - off);

				ret = auxtrace_file_read(it->af, i, off, buf,
							 k);
				if (ret < 0) {
					pr_err("itrace: AUX chunk %zu: data "
					       "unreadable",
					       i);
					break;
				}
				ret = csd_feed(d, buf, k);
				off += k;
			}
		}
		if (!ret)
			ret = csd_eot(d);
		add_stats(&it->st, csd_stats(d));
		csd_free(d);
	}
	free(buf);
	free(done);
	return ret ? ret : it->damaged ? -EBADMSG : 0;
}

static void put_reg(struct outbuf *ob, const char *name, uint64_t v)
{
	ob_putc(ob, ' ');
	ob_puts(ob, name);
	ob_puts(ob, "=0x");
	ob_x64(ob, v, 0);
}

/* The cs_etm metadata, as comment lines ahead of the listing. */
static void put_info(struct outbuf *ob, const struct cs_etm_info *info)
{
	ob_puts(ob, "# cs_etm AUXTRACE_INFO: header version ");
	ob_u64(ob, info->version, 0, ' ');
	ob_puts(ob, ", ");
	ob_u64(ob, info->nr_cpu, 0, ' ');
	ob_puts(ob, " CPUs, snapshot ");
	ob_u64(ob, info->snapshot, 0, ' ');
	ob_putc(ob, '\n');
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		const struct cs_etm_cpu *c = &info->cpus[i];

		ob_puts(ob, "# cpu ");
		ob_u64(ob, c->cpu, 0, ' ');
		ob_putc(ob, ' ');
		ob_puts(ob, cs_etm_kind_name(c->kind));
		ob_puts(ob, " trace ID 0x");
		ob_x64(ob, c->trace_id, 0);
		if (c->kind == CS_ETM_KIND_ETMV3) {
			put_reg(ob, "ETMCR", c->configr);
			put_reg(ob, "ETMTRACEIDR", c->traceidr);
			put_reg(ob, "ETMCCER", c->etmccer);
			put_reg(ob, "ETMIDR", c->etmidr);
		} else {
			put_reg(ob, "TRCCONFIGR", c->configr);
			put_reg(ob, "TRCTRACEIDR", c->traceidr);
			put_reg(ob, "TRCIDR0", c->trcidr0);
			put_reg(ob, "TRCIDR1", c->trcidr1);
			put_reg(ob, "TRCIDR2", c->trcidr2);
			put_reg(ob, "TRCIDR8", c->trcidr8);
			put_reg(ob, "TRCAUTHSTATUS", c->trcauthstatus);
			if (c->kind == CS_ETM_KIND_ETE)
				put_reg(ob, "TRCDEVARCH", c->trcdevarch);
		}
		ob_putc(ob, '\n');
		ob_line_done(ob);
	}
}

static int aux_decode(const struct perfring_cs_opts *o, struct outbuf *ob,
		      struct csd_stats *st)
{
	struct itr it;
	int ret = itr_open(&it, o->input, o->symdir);

	if (!ret && ob)
		put_info(ob, it.info);
	if (!ret)
		ret = itr_decode(&it, listing_flags(o), ob);
	*st = it.st;
	itr_free(&it);
	return ret;
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
	bin_find(it, b);
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
	struct map *m = it->snap ? NULL : find_map(it, addr, id);

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
		size_t got = read_code(it, id, el->st_addr, code, (size_t)len);
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
	m = find_map(it, el->st_addr, id);
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
		if (read_code(it, id, last, code, 4) == 4) {
			memcpy(&w, code, 4);
			if (a64_branch_target(w, last, &to))
				ts->target = map_vaddr(m, to);
		}
		ts->fix_target = true;
	}
	return 0;
}

/* ---- the public entry points ---- */

static int itr_begin(struct itr *it, const struct perfring_itrace_opts *o)
{
	int ret;

	if (o->snapshot) {
		memset(it, 0, sizeof(*it));
		ret = css_open_dir(o->snapshot, &it->snap);
	} else {
		ret = itr_open(it, o->input ? o->input : "perf.data",
			       o->symdir);
	}
	it->io = o;
	return ret;
}

static int itr_run(struct itr *it, struct outbuf *ob)
{
	if (it->snap) {
		struct csd_stats cs = { 0 };
		int ret = css_decode(it->snap, NULL, CSD_DECODE, NULL, itr_elem,
				     it, &cs);

		add_stats(&it->st, &cs);
		return ret;
	}
	(void)ob;
	return itr_decode(it, CSD_DECODE, NULL);
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
	ret = ob_open(&ob, out);
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
	ret2 = ob_close(&ob);
	copy_stats(st, &it.st);
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
	ret = ob_open(&ob, out);
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
	cnt_free(t.idx);
	ret2 = ob_close(&ob);
	copy_stats(st, &it.st);
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
	copy_stats(st, &it.st);
	itr_free(&it);
	return ret;
}
