// SPDX-License-Identifier: MIT
/* Source lines through libdw's dwfl (see srcline.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>
#include "../format/safe_open.h"
#include "srcline.h"

struct src_obj {
	struct src_obj *next;
	const struct dso *dso;
	Dwfl *dwfl; /* NULL: no line tables to be had */
	Dwfl_Module *mod;
};

struct srclines {
	struct src_obj *objs;
	struct src_obj *last;
	bool full_path; /* perf's --full-source-path */
	char path[4096]; /* srcline_path()'s last answer */
};

#define DEBUG_DIR "/usr/lib/debug"

/* @a @b @c into @out (PATH_MAX); false if too long. */
static bool join_path(char *out, const char *a, const char *b, const char *c)
{
	return snprintf(out, PATH_MAX, "%s%s%s", a, b, c) < PATH_MAX;
}

/* The candidate @path if it is a regular file whose build-id is @want's
 * (when the module has one): its descriptor, else -1. */
static int open_debug_candidate(const char *path, const void *want,
				int want_len)
{
	const void *bits;
	bool same = false;
	Elf *e;
	int fd = safe_open_regular(path, NULL, NULL);

	if (fd < 0)
		return -1;
	if (want_len <= 0)
		return fd;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		/* (bits points into e: compared before elf_end) */
		same = dwelf_elf_gnu_build_id(e, &bits) == want_len &&
		       !memcmp(bits, want, (size_t)want_len);
		elf_end(e);
	}
	if (same)
		return fd;
	close(fd);
	return -1;
}

/*
 * libdwfl's search for separate debug information (the build-id tree,
 * then the .gnu_debuglink name beside the object, in .debug/ and under
 * /usr/lib/debug), with every candidate opened as safe_open.h opens
 * paths another user may control: dwfl_standard_find_debuginfo() opens
 * them blocking, and a FIFO planted beside a binary would hang the reader.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const unsigned char *id = NULL;
	GElf_Addr id_vaddr;
	int id_len, fd;
	const char *slash;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)debuglink_crc;
	id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
	if (id_len > 1 && id_len <= 64) {
		char hex[130];

		for (int i = 0; i < id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		if (snprintf(path, sizeof(path),
			     DEBUG_DIR "/.build-id/%.2s/%s.debug", hex,
			     hex + 2) < (int)sizeof(path) &&
		    (fd = open_debug_candidate(path, id, id_len)) >= 0)
			goto found;
	}
	if (!file_name || !debuglink_file || strchr(debuglink_file, '/'))
		return -1;
	slash = strrchr(file_name, '/');
	if (!slash || (size_t)(slash - file_name) >= sizeof(dir))
		return -1;
	memcpy(dir, file_name, (size_t)(slash - file_name));
	dir[slash - file_name] = 0;
	const char *const where[3][2] = { { "", "/" },
					  { "", "/.debug/" },
					  { DEBUG_DIR, "/" } };
	for (int i = 0; i < 3; i++) {
		char sub[PATH_MAX];

		if (!join_path(sub, where[i][0], dir, where[i][1]) ||
		    !join_path(path, sub, debuglink_file, "") ||
		    !strcmp(path, file_name))
			continue;
		fd = open_debug_candidate(path, id, id_len);
		if (fd >= 0)
			goto found;
	}
	return -1;
found:
	*debuginfo_file_name = strdup(path);
	return fd;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct srclines *srclines_new(void)
{
	return calloc(1, sizeof(struct srclines));
}

static const char *base_name(const char *p)
{
	const char *slash = strrchr(p, '/');

	return slash ? slash + 1 : p;
}

void srclines_set_full_path(struct srclines *s, bool full)
{
	s->full_path = full;
}

bool srclines_full_path(const struct srclines *s)
{
	return s && s->full_path;
}

const char *srcline_path(struct srclines *s, void *cudie, const char *file)
{
	Dwarf_Attribute a;
	const char *dir;

	if (!s->full_path)
		return base_name(file);
	if (file[0] == '/' || !cudie)
		return file;
	/* addr2line's name of a relative one: under the CU's comp_dir */
	dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (!dir || !*dir)
		return file;
	snprintf(s->path, sizeof(s->path), "%s/%s", dir, file);
	return s->path;
}

void srclines_free(struct srclines *s)
{
	struct src_obj *o, *n;

	if (!s)
		return;
	for (o = s->objs; o; o = n) {
		n = o->next;
		if (o->dwfl)
			dwfl_end(o->dwfl);
		free(o);
	}
	free(s);
}

static struct src_obj *obj_for(struct srclines *s, const struct dso *dso)
{
	struct src_obj *o;

	if (s->last && s->last->dso == dso)
		return s->last;
	for (o = s->objs; o; o = o->next)
		if (o->dso == dso)
			return s->last = o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->dso = dso;
	o->next = s->objs;
	s->objs = o;
	s->last = o;
	/* The path the MMAP record names: a hostile file is only parsed by
	 * libdw, which checks what it reads. */
	if (dso->kind == DSO_FILE && dso->name[0] == '/') {
		/* opened as any path the traced program's owner controls;
		 * dwfl takes the descriptor (and closes it on failure) */
		int fd = safe_open_regular(dso->name, NULL, NULL);

		o->dwfl = fd >= 0 ? dwfl_begin(&offline_callbacks) : NULL;
		if (!o->dwfl && fd >= 0)
			close(fd);
		if (o->dwfl) {
			o->mod = dwfl_report_offline(o->dwfl, dso->short_name,
						     dso->name, fd);
			dwfl_report_end(o->dwfl, NULL, NULL);
			if (!o->mod) {
				dwfl_end(o->dwfl);
				o->dwfl = NULL;
			}
		}
	}
	return o;
}

struct Dwfl_Module *srcline_module(struct srclines *s, struct dso *dso,
				   uint64_t *bias)
{
	struct src_obj *o = s ? obj_for(s, dso) : NULL;
	Dwarf_Addr b = 0;

	if (!o || !o->dwfl || !dwfl_module_getdwarf(o->mod, &b))
		return NULL;
	*bias = b;
	return o->mod;
}

/* How far back one lookup scans a sequence's rows (hostile tables). */
#define SRC_MAX_SCAN (1u << 20)

/*
 * The file binutils' addr2line (2.40, which perf 6.1 runs) names for line
 * row @dl of @cudie.  DWARF 5 starts each sequence with file register 1,
 * and gas sets the file only when it changes; binutils begins a sequence
 * with file 0's name instead (the CU's primary source), so the rows of a
 * sequence before its first change of file are named by file 0: a
 * function of an included header (libc's libc_start_call_main.h) shows as
 * the .c file including it.  libdw names file 1 (the header).
 */
static const char *binutils_file(Dwarf_Die *cudie, Dwarf_Line *dl,
				 const char *file)
{
	Dwarf_Die cu;
	Dwarf_Half version = 0;
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines = 0, nfiles = 0, lo = 0, hi, at;
	const char *file0, *file1;
	Dwarf_Addr addr;

	if (!dwarf_cu_die(cudie->cu, &cu, &version, NULL, NULL, NULL, NULL,
			  NULL) ||
	    version < 5)
		return file;
	if (dwarf_getsrcfiles(cudie, &files, &nfiles) || nfiles < 2)
		return file;
	file0 = dwarf_filesrc(files, 0, NULL, NULL);
	file1 = dwarf_filesrc(files, 1, NULL, NULL);
	if (!file0 || !file1 || strcmp(file, file1) || !strcmp(file0, file1))
		return file;
	if (dwarf_getsrclines(cudie, &lines, &nlines) || !nlines ||
	    dwarf_lineaddr(dl, &addr))
		return file;
	/* the row: the first at its address (rows are sorted), then on */
	hi = nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a = 0;

		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a);
		if (a < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (at = lo; at < nlines && dwarf_onesrcline(lines, at) != dl; at++) {
		Dwarf_Addr a = 0;

		dwarf_lineaddr(dwarf_onesrcline(lines, at), &a);
		if (a != addr || at - lo > SRC_MAX_SCAN)
			return file;
	}
	if (at == nlines)
		return file;
	/* back to the sequence's start: every row on the way in file 1 */
	for (size_t i = at, n = 0; i-- > 0 && n < SRC_MAX_SCAN; n++) {
		Dwarf_Line *row = dwarf_onesrcline(lines, i);
		const char *f;
		bool end = false;

		if (!row || dwarf_lineendsequence(row, &end) || end)
			break;
		f = dwarf_linesrc(row, NULL, NULL);
		if (!f || strcmp(f, file1))
			return file;
	}
	return file0;
}

int srcline_line(struct srclines *s, struct dso *dso, uint64_t addr,
		 const char **file, int *lineno)
{
	struct src_obj *o = s ? obj_for(s, dso) : NULL;
	Dwarf_Addr bias = 0;
	Dwfl_Line *line;
	Dwarf_Line *dl;
	Dwarf_Die *cudie;
	const char *f;

	if (!o || !o->dwfl || !dwfl_module_getelf(o->mod, &bias))
		return -ENOENT;
	line = dwfl_module_getsrc(o->mod, addr + bias);
	if (!line) {
		Dwarf_Addr cubias = 0;

		if (!dwfl_module_getdwarf(o->mod, &bias))
			return -ENOENT;
		/* libdwfl gives the CU of the last range starting before
		 * @addr: whether it holds it is dwarf_haspc()'s */
		cudie = dwfl_module_addrdie(o->mod, addr + bias, &cubias);
		return cudie && dwarf_haspc(cudie, addr + bias - cubias) > 0 ?
			       0 :
			       -ENODATA;
	}
	*lineno = 0;
	f = dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL);
	if (!f)
		f = "";
	cudie = dwfl_linecu(line);
	dl = dwfl_dwarf_line(line, &bias);
	if (cudie && dl)
		f = binutils_file(cudie, dl, f);
	*file = srcline_path(s, cudie, f);
	return 1;
}

/* How many symbols a no-DWARF lookup scans (hostile tables). */
#define SRC_MAX_SYMS (1u << 22)

/*
 * Without DWARF, binutils' addr2line names the file from the symbol
 * table (elf_find_function()): the STT_FILE symbol last seen before the
 * function holding @addr, for a local function, or for any while no
 * STT_FILE has followed another symbol (past the locals, an empty one
 * marks the globals'); the line is 0.  Returns that name or NULL.
 */
static const char *symtab_file(struct src_obj *o, uint64_t addr)
{
	const char *file = NULL, *best_file = NULL;
	uint64_t best = 0, best_size = 0;
	Dwarf_Addr bias = 0;
	bool found = false, symbol_seen = false, file_after = false;
	int n;

	if (!o->mod || !dwfl_module_getelf(o->mod, &bias))
		return NULL;
	n = dwfl_module_getsymtab(o->mod);
	if (n <= 0 || (unsigned)n > SRC_MAX_SYMS)
		return NULL;
	addr += bias;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a = 0;
		GElf_Word shndx = 0;
		const char *name = dwfl_module_getsym_info(o->mod, i, &sym, &a,
							   &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name)
			continue;
		if (type == STT_FILE) {
			file = name;
			if (symbol_seen)
				file_after = true;
			continue;
		}
		symbol_seen = true;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    shndx == SHN_UNDEF || !sym.st_size || a > addr ||
		    addr - a >= sym.st_size)
			continue;
		if (found &&
		    (a < best || (a == best && sym.st_size <= best_size)))
			continue;
		found = true;
		best = a;
		best_size = sym.st_size;
		best_file = file && (GELF_ST_BIND(sym.st_info) == STB_LOCAL ||
				     !file_after) ?
				    file :
				    NULL;
	}
	return best_file && *best_file ? best_file : NULL;
}

static const char *symtab_file_of(struct srclines *s, struct dso *dso,
				  uint64_t addr)
{
	struct src_obj *o = s ? obj_for(s, dso) : NULL;

	return o && o->dwfl ? symtab_file(o, addr) : NULL;
}

bool srcline_is_plt(const struct symbol *sym)
{
	size_t n = strlen(sym->name);

	return n >= 4 && !strcmp(sym->name + n - 4, "@plt");
}

/* Whether addr2line finds a function at @addr in the object's symbol
 * table: any symbol but the PLT entries perf makes up. */
static bool has_function(struct dso *dso, uint64_t addr)
{
	const struct symbol *sym = dso_find_symbol(dso, addr);

	return sym && *sym->name && !srcline_is_plt(sym);
}

const char *srcline_symtab_file(struct srclines *s, struct dso *dso,
				uint64_t addr)
{
	const char *file = symtab_file_of(s, dso, addr);

	return file && !s->full_path ? base_name(file) : file;
}

size_t srcline_text(struct srclines *s, struct dso *dso, uint64_t addr,
		    uint64_t ip, char *buf, size_t len)
{
	const char *file = NULL;
	int lineno = 0, n = -1, r;

	if (!len)
		return 0;
	r = srcline_line(s, dso, addr, &file, &lineno);
	if (r > 0)
		n = snprintf(buf, len, "%s:%d", file, lineno);
	else if (r == 0)
		/* a CU without the line (assembly): addr2line's empty file
		 * name, which perf prints ":0" */
		n = snprintf(buf, len, ":0");
	else if (r < 0 && (file = symtab_file_of(s, dso, addr)))
		/* no DWARF, or none covering @addr (crtstuff's functions in
		 * a -g build): addr2line's file from the symbol table */
		n = snprintf(buf, len, "%s:0",
			     s->full_path ? file : base_name(file));
	else if (dso->kind == DSO_FILE && dso->name[0] == '/' &&
		 has_function(dso, addr))
		/* addr2line names the function from the symbol table, no
		 * file: perf's "??:0", which it does not print */
		n = 0;
	if (n < 0) /* perf's fallback: object[address] */
		n = snprintf(buf, len, "%s[%llx]", dso->short_name,
			     (unsigned long long)(dso->kernel ? ip : addr));
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

size_t srcline_report_text(struct srclines *s, struct dso *dso,
			   const struct symbol *sym, uint64_t addr,
			   uint64_t sym_off, char *buf, size_t len,
			   bool *from_lines)
{
	const char *file = NULL;
	int lineno = 0, n, r;

	*from_lines = false;
	if (!len)
		return 0;
	r = srcline_line(s, dso, addr, &file, &lineno);
	if (r > 0) {
		n = snprintf(buf, len, "%s:%d", file, lineno);
		*from_lines = true;
	} else if (r == 0) {
		n = snprintf(buf, len, ":0");
		*from_lines = true;
	} else if (r < 0 && (file = symtab_file_of(s, dso, addr))) {
		n = snprintf(buf, len, "%s:0", base_name(file));
		*from_lines = true;
	} else if (dso->kind == DSO_FILE && dso->name[0] == '/' &&
		   has_function(dso, addr)) {
		/* perf's SRCLINE_UNKNOWN, which has no file */
		n = snprintf(buf, len, "??:0");
	} else if (sym) { /* __get_srcline()'s fallback */
		n = snprintf(buf, len, "%s+%llu", sym->name,
			     (unsigned long long)sym_off);
	} else {
		n = snprintf(buf, len, "%s[%llx]", dso->short_name,
			     (unsigned long long)addr);
	}
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}
