// SPDX-License-Identifier: MIT
/*
 * Instruction trace reports over CoreSight trace: the listings of
 * perfring_cs_decode() (snapshot directories and perf.data AUX data).
 * This file decodes; itrace_internal.h lists the others.
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

void itr_copy_stats(struct perfring_cs_stats *st, const struct csd_stats *c)
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

static void itr_add_stats(struct csd_stats *a, const struct csd_stats *b)
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

int itr_ob_open(struct outbuf *ob, FILE *f)
{
	memset(ob, 0, sizeof(*ob));
	ob->cap = OB_SIZE + OB_SLACK;
	ob->p = malloc(ob->cap);
	ob->f = f;
	return ob->p ? 0 : -ENOMEM;
}

int itr_ob_close(struct outbuf *ob)
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

static struct bin *itr_bin_get(struct itr *it, const char *name, size_t len)
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
void itr_bin_find(struct itr *it, struct bin *b)
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
	b = itr_bin_get(it, name, name_len);
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
struct map *itr_find_map(struct itr *it, uint64_t addr, uint8_t id)
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
		itr_bin_find(it, m->bin);
		return m;
	}
	if (any)
		itr_bin_find(it, any->bin);
	return any;
}

static uint32_t mem_cb(const void *ctx, const ocsd_vaddr_t addr,
		       const ocsd_mem_space_acc_t space, const uint8_t trc_id,
		       const uint32_t req, uint8_t *buf)
{
	struct itr *it = (struct itr *)ctx;
	struct map *m = itr_find_map(it, addr, trc_id);
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
size_t itr_read_code(struct itr *it, uint8_t id, uint64_t addr, uint8_t *buf,
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
		struct bin *b = itr_bin_get(it, e.filename ? e.filename : "",
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

void itr_free(struct itr *it)
{
	for (uint32_t i = 0; i < it->nr_bins; i++) {
		struct bin *b = it->bins[i];

		bin_unload(b);
		free(b->name);
		free(b->path);
		free(b->segs);
		itr_cnt_free(b->ranges);
		itr_cnt_free(b->branches);
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

int itr_open(struct itr *it, const char *path, const char *symdir)
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
int itr_decode(struct itr *it, unsigned flags, struct outbuf *ob)
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
		itr_add_stats(&it->st, csd_stats(d));
		csd_free(d);
	}
	free(buf);
	free(done);
	return ret ? ret : it->damaged ? -EBADMSG : 0;
}

/* ---- the public entry points ---- */

int itr_begin(struct itr *it, const struct perfring_itrace_opts *o)
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

int itr_run(struct itr *it, struct outbuf *ob)
{
	if (it->snap) {
		struct csd_stats cs = { 0 };
		int ret = css_decode(it->snap, NULL, CSD_DECODE, NULL, itr_elem,
				     it, &cs);

		itr_add_stats(&it->st, &cs);
		return ret;
	}
	(void)ob;
	return itr_decode(it, CSD_DECODE, NULL);
}
