// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of recorded user stacks with libunwind's remote
 * interface, as perf 6.1 does it (util/unwind-libunwind-local.c: the
 * unwinder Debian's perf is built with), so that the frames are perf's:
 *
 *  - The first frame is the user IP register; each further one is
 *    unw_step()'s IP minus one unless the frame is a signal frame; zero
 *    addresses are dropped; at most UNWIND_MAX_FRAMES (perf's 127).
 *  - Registers: the sample's REGS_USER values, packed by the attr's
 *    sample_regs_user bits (perf_regs.h numbering).
 *  - Memory: the recorded stack copy, which starts at the user SP and
 *    holds dyn_size bytes; an 8-byte read must end before its last byte
 *    (perf's bound), anything else is read from the ELF file of the map
 *    holding the address (file offset = address - start + pgoff), as perf
 *    reads dso data.  Nothing outside the copy or the file is ever read.
 *  - Unwind tables: each file's .eh_frame_hdr binary search table (found
 *    by its PT_GNU_EH_FRAME), searched by dwarf_search_unwind_table() as a
 *    remote table; no .debug_frame (perf on x86_64 has none either).
 *
 * The ELF files are mapped read-only once and kept until the machine
 * goes.  The [vdso] is this process's when the file was recorded here.
 * libunwind's per-address cache is off: one address space serves every
 * process of the file, whose maps differ and change.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <asm/perf_regs.h>
#include <libunwind.h>
#include "../common/log.h"
#include "../format/safe_open.h"
#include "unwind.h"

/* libunwind exports it for remote tables but declares it in no header. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as,
					      unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define MAX_IMAGES 4096 /* ELF files mapped at once */
#define EH_TABLE_ENC 0x3b /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */

/* One ELF file as the unwinder reads it. */
struct image {
	const struct dso *dso; /* key */
	const uint8_t *data;
	size_t size;
	bool mapped; /* munmap() it */
	bool has_table;
	uint64_t hdr_vaddr, table_vaddr, fde_count;
	uint64_t elf_base; /* first PT_LOAD's page-aligned vaddr (perf's) */
};

struct unwinder {
	unw_addr_space_t as;
	struct image *tab; /* open addressing by dso pointer */
	uint32_t mask, nr;
};

/* One unwind: what the accessors see through libunwind's @arg. */
struct unwind_ctx {
	struct machine *m;
	struct thread *t;
	struct unwinder *u;
	const uint64_t *regs;
	uint64_t regs_mask;
	const uint8_t *stack;
	uint64_t stack_size, sp;
};

bool unwind_sample_has_stack(const struct prd_sample *s)
{
	uint64_t st = s->attr ? s->attr->attr.sample_type : 0;

	/* as perf: bytes copied (dyn_size), not only asked for; a copy
	 * that failed (the old image gone in exec) shows no user frame */
	return (st & PERF_SAMPLE_REGS_USER) && (st & PERF_SAMPLE_STACK_USER) &&
	       s->regs_user && s->stack_user_dyn_size;
}

/* perf_reg_value(): the value of perf register @id, if recorded. */
static int reg_value(const struct unwind_ctx *c, int id, uint64_t *val)
{
	uint64_t bit = 1ull << id;

	if (id < 0 || id >= 64 || !(c->regs_mask & bit))
		return -ENOENT;
	*val = c->regs[__builtin_popcountll(c->regs_mask & (bit - 1))];
	return 0;
}

/* ---- ELF images --------------------------------------------------------- */

static bool elf_ok(const uint8_t *d, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)d;

	return size >= sizeof(*eh) && !memcmp(d, ELFMAG, SELFMAG) &&
	       d[EI_CLASS] == ELFCLASS64 && d[EI_DATA] == ELFDATA2LSB &&
	       eh->e_machine == EM_X86_64;
}

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);
	return v;
}

/* Size of a DW_EH_PE value of encoding @enc (0: unsupported). */
static unsigned eh_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		return 8;
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		return 4;
	case 0x02: /* udata2 */
	case 0x0a: /* sdata2 */
		return 2;
	default:
		return 0;
	}
}

/* Finds the .eh_frame_hdr search table and the PT_LOAD segments. */
static void image_parse(struct image *im)
{
	const uint8_t *d = im->data;
	const Elf64_Ehdr *eh = (const void *)d;
	uint64_t hdr_off = 0, hdr_size = 0, hdr_vaddr = 0;
	bool have_hdr = false, have_load = false;

	if (!elf_ok(d, im->size) || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > im->size ||
	    eh->e_phnum > (im->size - eh->e_phoff) / sizeof(Elf64_Phdr))
		return;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, d + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && !have_load) {
			im->elf_base = ph.p_vaddr & ~(uint64_t)4095;
			have_load = true;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			hdr_off = ph.p_offset;
			hdr_size = ph.p_filesz;
			hdr_vaddr = ph.p_vaddr;
			have_hdr = true;
		}
	}
	if (!have_hdr || hdr_off > im->size || hdr_size > im->size - hdr_off ||
	    hdr_size < 4)
		return;
	{
		const uint8_t *h = d + hdr_off;
		unsigned ptr_n = eh_size(h[1]), cnt_n = eh_size(h[2]);
		uint64_t pos = 4, count;

		/* version 1, a known eh_frame_ptr and fde_count encoding, and
		 * the one table encoding libunwind's remote search reads */
		if (h[0] != 1 || !ptr_n || !cnt_n || h[2] == 0xff ||
		    h[3] != EH_TABLE_ENC || pos + ptr_n + cnt_n > hdr_size)
			return;
		pos += ptr_n;
		count = rd(h + pos, cnt_n);
		pos += cnt_n;
		if (count > (hdr_size - pos) / 8)
			return;
		im->hdr_vaddr = hdr_vaddr;
		im->table_vaddr = hdr_vaddr + pos;
		im->fde_count = count;
		im->has_table = true;
	}
}

static void image_load_file(struct image *im, const char *path)
{
	struct stat st;
	void *p;
	int fd;

	/* The name comes from the file: only a regular file is opened
	 * (safe_open.h). */
	fd = safe_open_regular(path, &st, NULL);
	if (fd < 0)
		return;
	if (st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	im->data = p;
	im->size = (size_t)st.st_size;
	im->mapped = true;
}

/* The vDSO of this process: the recorded one when the file was recorded
 * on this machine (the kernel's image is the same). */
static void image_load_vdso(struct image *im)
{
	const uint8_t *d = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)d;
	size_t size = 0;

	if (!d || !elf_ok(d, sizeof(*eh)))
		return;
	/* Its size: the end of its headers and loaded bytes (all mapped). */
	for (unsigned i = 0; i < eh->e_phnum && i < 64; i++) {
		const Elf64_Phdr *ph =
			(const void *)(d + eh->e_phoff + i * sizeof(*ph));

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	im->data = d;
	im->size = size;
}

static int unwinder_grow(struct unwinder *u)
{
	uint32_t cap = u->mask ? (u->mask + 1) * 2 : 64;
	struct image *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (uint32_t i = 0; u->tab && i <= u->mask; i++) {
		uint32_t h;

		if (!u->tab[i].dso)
			continue;
		h = (uint32_t)(((uintptr_t)u->tab[i].dso >> 4) * 2654435761u);
		while (tab[h & (cap - 1)].dso)
			h++;
		tab[h & (cap - 1)] = u->tab[i];
	}
	free(u->tab);
	u->tab = tab;
	u->mask = cap - 1;
	return 0;
}

/* The image of @dso (loaded on first use), or NULL. */
static const struct image *image_get(struct unwind_ctx *c, struct dso *dso)
{
	struct unwinder *u = c->u;
	struct image *im;
	uint32_t h;

	if (dso->kind != DSO_FILE && dso->kind != DSO_VDSO)
		return NULL;
	if (u->tab) {
		h = (uint32_t)(((uintptr_t)dso >> 4) * 2654435761u);
		for (;; h++) {
			im = &u->tab[h & u->mask];
			if (!im->dso)
				break;
			if (im->dso == dso)
				return im->data ? im : NULL;
		}
	}
	if (u->nr >= MAX_IMAGES)
		return NULL;
	if ((u->nr + 1) * 2 > u->mask && unwinder_grow(u))
		return NULL;
	h = (uint32_t)(((uintptr_t)dso >> 4) * 2654435761u);
	while (u->tab[h & u->mask].dso)
		h++;
	im = &u->tab[h & u->mask];
	im->dso = dso;
	u->nr++;
	if (dso->kind == DSO_VDSO) {
		if (c->m->dsos.host)
			image_load_vdso(im);
	} else {
		image_load_file(im, dso->name);
	}
	if (im->data)
		image_parse(im);
	return im->data ? im : NULL;
}

/* The map and image holding user address @addr in the thread. */
static const struct image *image_at(struct unwind_ctx *c, uint64_t addr,
				    struct addr_loc *al)
{
	machine_resolve(c->m, c->t, PERF_RECORD_MISC_USER, addr, false, al);
	if (!al->map || !al->dso || al->dso->identity)
		return NULL;
	return image_get(c, al->dso);
}

/* ---- libunwind accessors ------------------------------------------------ */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip,
			  unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	struct unwind_ctx *c = arg;
	struct addr_loc al;
	const struct image *im = image_at(c, ip, &al);
	unw_dyn_info_t di;
	uint64_t base;

	/* perf's -EINVAL, whatever the reason */
	if (!im || !im->has_table)
		return -EINVAL;
	/*
	 * perf's load address: the lowest start of the thread's maps of this
	 * file, less the first PT_LOAD's vaddr.  The thread's maps keep those
	 * of its image before exec that the new image's maps did not cover
	 * (perf's and ours), so a file the process mapped at a lower address
	 * before exec gives a wrong table address and no further frames, in
	 * perf and here alike.
	 */
	base = UINT64_MAX;
	for (uint32_t i = 0; i < c->t->maps->nr; i++)
		if (c->t->maps->v[i].dso == al.dso &&
		    c->t->maps->v[i].start < base)
			base = c->t->maps->v[i].start;
	base -= im->elf_base;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = al.map->start;
	di.end_ip = al.map->end;
	di.u.rti.segbase = base + im->hdr_vaddr;
	di.u.rti.table_data = base + im->table_vaddr;
	/* in unw_word_t units: one entry is two int32 */
	di.u.rti.table_len = im->fde_count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi,
						  need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr,
				  void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp,
		      int write, void *arg)
{
	struct unwind_ctx *c = arg;
	struct addr_loc al;
	const struct image *im;

	(void)as;
	if (write) {
		*valp = 0;
		return 0;
	}
	if (addr + sizeof(*valp) < addr)
		return -UNW_EINVAL;
	/* perf's bound: the word must end before the copy's last byte */
	if (addr >= c->sp && addr - c->sp < c->stack_size &&
	    addr - c->sp + sizeof(*valp) < c->stack_size) {
		memcpy(valp, c->stack + (addr - c->sp), sizeof(*valp));
		return 0;
	}
	/* perf's return codes, which steer libunwind: no map is an error;
	 * a map whose bytes cannot be read (anonymous memory, [stack], past
	 * the file's end) reads as 0, successfully */
	*valp = 0;
	im = image_at(c, addr, &al);
	if (!al.map)
		return -1;
	if (!im || al.addr > im->size || im->size - al.addr < sizeof(*valp))
		return 1;
	memcpy(valp, im->data + al.addr, sizeof(*valp));
	return 0;
}

/* libunwind's x86_64 register numbers to perf's (perf_regs.h). */
static int perf_reg_of(unw_regnum_t r)
{
	switch (r) {
	case UNW_X86_64_RAX:
		return PERF_REG_X86_AX;
	case UNW_X86_64_RDX:
		return PERF_REG_X86_DX;
	case UNW_X86_64_RCX:
		return PERF_REG_X86_CX;
	case UNW_X86_64_RBX:
		return PERF_REG_X86_BX;
	case UNW_X86_64_RSI:
		return PERF_REG_X86_SI;
	case UNW_X86_64_RDI:
		return PERF_REG_X86_DI;
	case UNW_X86_64_RBP:
		return PERF_REG_X86_BP;
	case UNW_X86_64_RSP:
		return PERF_REG_X86_SP;
	case UNW_X86_64_RIP:
		return PERF_REG_X86_IP;
	default:
		if (r >= UNW_X86_64_R8 && r <= UNW_X86_64_R15)
			return PERF_REG_X86_R8 + (r - UNW_X86_64_R8);
		return -1;
	}
}

static int access_reg(unw_addr_space_t as, unw_regnum_t regnum,
		      unw_word_t *valp, int write, void *arg)
{
	struct unwind_ctx *c = arg;
	uint64_t v;

	(void)as;
	if (write)
		return 0;
	if (reg_value(c, perf_reg_of(regnum), &v))
		return -UNW_EBADREG;
	*valp = v;
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t num, unw_fpreg_t *val,
			int write, void *arg)
{
	(void)as;
	(void)num;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	(void)as;
	(void)cu;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *offp, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)offp;
	(void)arg;
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

/* ---- entry points ------------------------------------------------------- */

/* The machine's exit hook: frees what unwinder_of() made. */
static void unwinder_free(struct machine *m)
{
	struct unwinder *u = m->unwinder;

	if (!u)
		return;
	for (uint32_t i = 0; u->tab && i <= u->mask; i++)
		if (u->tab[i].mapped)
			munmap((void *)u->tab[i].data, u->tab[i].size);
	free(u->tab);
	unw_destroy_addr_space(u->as);
	free(u);
	m->unwinder = NULL;
}

static struct unwinder *unwinder_of(struct machine *m)
{
	struct unwinder *u = m->unwinder;

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_NONE);
	m->unwinder = u;
	m->unwinder_free = unwinder_free;
	return u;
}

unsigned unwind_user_stack(struct machine *m, struct thread *t,
			   const struct prd_sample *s, uint64_t *ips,
			   unsigned max)
{
	struct unwind_ctx c = { .m = m, .t = t };
	unw_cursor_t cur;
	uint64_t ip;
	unsigned n = 0, i;

	if (!max || !t || !t->maps || !t->maps->nr ||
	    !unwind_sample_has_stack(s))
		return 0;
	c.u = unwinder_of(m);
	if (!c.u)
		return 0;
	c.regs = s->regs_user;
	c.regs_mask = s->attr->attr.sample_regs_user;
	c.stack = s->stack_user;
	/* the bytes the kernel copied (dyn_size, clamped by the reader) */
	c.stack_size = s->stack_user_dyn_size;
	if (reg_value(&c, PERF_REG_X86_IP, &ip))
		return 0;
	if (reg_value(&c, PERF_REG_X86_SP, &c.sp))
		c.stack_size = 0;
	/* As perf, @i counts zero addresses too, which are not shown. */
	i = 1;
	if (ip)
		ips[n++] = ip;
	/* As perf: a cursor that cannot start shows no frame at all. */
	if (unw_init_remote(&cur, c.u->as, &c))
		return 0;
	while (i < max && unw_step(&cur) > 0) {
		unw_word_t pc;

		if (unw_get_reg(&cur, UNW_REG_IP, &pc) < 0)
			break;
		if (unw_is_signal_frame(&cur) <= 0)
			pc--;
		i++;
		if (pc)
			ips[n++] = pc;
	}
	return n;
}
