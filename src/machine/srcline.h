/* SPDX-License-Identifier: MIT */
/*
 * Source lines of code addresses (perf's srcline), from the DWARF line
 * tables of an object or its separate debug file (libdw's dwfl: the
 * .gnu_debuglink and /usr/lib/debug/.build-id lookups), without running
 * addr2line.  One dwfl per object, made on first use and kept.
 */
#ifndef PERFRING_MACHINE_SRCLINE_H
#define PERFRING_MACHINE_SRCLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbols.h"

struct srclines;

struct srclines *srclines_new(void);
void srclines_free(struct srclines *s);
/* perf's --full-source-path: files by their full path, not base name
 * (set before the first lookup). */
void srclines_set_full_path(struct srclines *s, bool full);
bool srclines_full_path(const struct srclines *s);
/* A source file as perf names it: its base name, or with
 * --full-source-path the full path (a relative one under the comp_dir of
 * @cudie, a Dwarf_Die *).  Valid until the next call. */
const char *srcline_path(struct srclines *s, void *cudie, const char *file);

/*
 * perf's srcline of @addr (an address as the object's symbols use it,
 * dso_addr()) in @dso, as map__fprintf_srcline() prints it: "file.c:123"
 * (the file's base name, named as addr2line 2.40 names it),
 * "[kernel.kallsyms][ffffffff81000000]" for the kernel and where addr2line
 * finds nothing (a PLT entry); nothing (0) where addr2line finds the
 * function but no file (perf does not print its "??:0").  Writes it
 * NUL-terminated to @buf and returns its length (cut to @len - 1).
 */
/* The file symbol (STT_FILE) of the .symtab holding @addr, as addr2line
 * names a function without DWARF ("crtstuff.c"); base name unless the full
 * path was asked for; NULL if none. */
const char *srcline_symtab_file(struct srclines *s, struct dso *dso,
				uint64_t addr);
size_t srcline_text(struct srclines *s, struct dso *dso, uint64_t addr,
		    uint64_t ip, char *buf, size_t len);

/*
 * perf report's srcline of an entry (sort.c's hist_entry__srcline(),
 * get_srcline() with the symbol): "file.c:123" or ":0" from the line
 * tables (*from_lines set), "??:0" where addr2line finds the function but
 * no file (*from_lines set: perf's srcfile of it is empty), else
 * "name+OFFSET" (@sym_off in decimal) or, without @sym,
 * "object[address]".  @addr as srcline_text() takes it.  Writes it
 * NUL-terminated to @buf and returns its length (cut to @len - 1).
 */
size_t srcline_report_text(struct srclines *s, struct dso *dso,
			   const struct symbol *sym, uint64_t addr,
			   uint64_t sym_off, char *buf, size_t len,
			   bool *from_lines);

/*
 * The source line of @addr as addr2line (binutils 2.40) names it: 1 with
 * *file (its base name, valid while @s lives) and *lineno; 0: a CU holds
 * @addr but no line does; -ENODATA: the object has DWARF but no CU holds
 * @addr; -ENOENT: no DWARF.
 */
int srcline_line(struct srclines *s, struct dso *dso, uint64_t addr,
		 const char **file, int *lineno);

/* A PLT entry's symbol, which perf makes up ("name@plt") and addr2line
 * does not know. */
bool srcline_is_plt(const struct symbol *sym);

/*
 * The libdw module of @dso (NULL: no DWARF to be had, or a kernel or
 * anonymous object) and the bias to add to its addresses; the module is
 * made on first use and kept (inline.c reads its DIEs).
 */
struct Dwfl_Module;
struct Dwfl_Module *srcline_module(struct srclines *s, struct dso *dso,
				   uint64_t *bias);

#endif
