/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables of the objects samples hit (the report layer): ELF
 * .symtab/.dynsym read with libelf (separate debug files first, as perf
 * does), the vDSO of this process, /proc/kallsyms for the kernel, and a
 * JIT's /tmp/perf-PID.map for its anonymous code (perfmap.h).
 * Tables are loaded on first use, kept as arrays sorted by address and
 * searched by bisection; no allocation on the lookup path.
 */
#ifndef PERFRING_MACHINE_SYMBOLS_H
#define PERFRING_MACHINE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* [start, end) in the object's own addresses (ELF vaddr, kernel address). */
struct symbol {
	uint64_t start, end;
	const char *name;
};

enum dso_kind {
	DSO_FILE, /* an ELF file named by its path */
	DSO_KERNEL, /* [kernel.kallsyms] */
	DSO_KMODULE, /* [module] symbols out of kallsyms */
	DSO_VDSO, /* [vdso] */
	DSO_NONE, /* [heap], //anon, ...: no symbols */
	DSO_PERFMAP, /* anonymous code: a JIT's /tmp/perf-PID.map */
};

struct load_seg {
	uint64_t off, len, vaddr;
};

struct dso {
	struct dso *next; /* hash chain */
	struct dso *all_next; /* every dso, in creation order */
	char *name; /* as in the MMAP record, "[kernel.kallsyms]" */
	const char *short_name; /* basename, or name for [..] */
	char jit_name[32]; /* perf's "[JIT] tid PID" for a perf-PID.map */
	uint32_t hash;
	enum dso_kind kind;
	bool loaded;
	bool kernel; /* kernel or module: addresses are printed as they are */
	bool identity; /* anon, heap, stack: map address = ip, as perf */
	struct symbol *syms; /* sorted by start, no two with one start */
	uint32_t nr_syms;
	uint32_t last; /* index of the last hit */
	char *strs; /* names */
	struct load_seg *segs; /* file offset -> vaddr (PT_LOAD) */
	uint32_t nr_segs;
	uint64_t kmin, kmax; /* modules: address range */
	unsigned char build_id[20];
	uint8_t build_id_size;
	bool build_id_recorded; /* from the file's table: symbols must match */
	bool warned_not_regular; /* its path is a FIFO, a device...: said */
	struct dsos *owner;
	void *priv; /* for the user (report) */
	uint32_t serial; /* creation order in its dsos */
	/* perf compares callchain entries of different DSOs by their
	 * struct dso addresses, which follow its creation order: report
	 * sets this to that order (the build-id table first). */
	uint32_t order;
};

struct dsos {
	struct dso **tab;
	uint32_t mask;
	uint32_t nr;
	struct dso *all; /* list head */
	struct dso **all_tail;
	struct dso *kernel; /* [kernel.kallsyms] */
	struct dso **modules; /* from kallsyms */
	uint32_t nr_modules;
	bool host; /* the file was recorded here: kallsyms, vdso usable */
	/* --symfs: objects and debug files looked up under it only (not
	 * owned; NULL: none) */
	const char *symfs;
	bool no_demangle; /* perf's --no-demangle: C++ names as in the ELF */
	bool kernel_loaded;
	/* the file's HEADER_BUILD_ID table (a copy): each object's build-id
	 * as recorded (dsos_set_build_ids()) */
	unsigned char *bid_table;
	size_t bid_len;
	bool warned_bid; /* an object's build-id differed: said once */
	uint64_t recorded_text; /* _text as the kernel MMAP gives it */
	int64_t kernel_delta; /* recorded _text - today's _text */
};

int dsos_init(struct dsos *d, bool host);
void dsos_exit(struct dsos *d);
/* The dso named @name (len bytes, not necessarily NUL-terminated), created
 * on first use; NULL only when out of memory. */
struct dso *dsos_findnew(struct dsos *d, const char *name, size_t len);
/* The kernel's _text when the file was recorded (its MMAP's pgoff). */
void dsos_set_kernel_text(struct dsos *d, uint64_t text);
/* The kernel dso, or the module whose kallsyms range holds @addr. */
struct dso *dsos_kernel_for(struct dsos *d, uint64_t addr);

/* Converts a map address (file offset for ELF files, address for the
 * kernel) into the address symbols use. */
uint64_t dso_addr(struct dso *dso, uint64_t map_ip);
/* The symbol holding @addr (from dso_addr()), or NULL; loads the table on
 * first use. */
const struct symbol *dso_find_symbol(struct dso *dso, uint64_t addr);
/* Anonymous code of process @pid: symbols from its perf-PID.map (the
 * dso's name), addresses its own, named "[JIT] tid PID" as perf does. */
void dso_set_perfmap(struct dso *dso, int32_t pid);
/* The file holding @dso's code as the symbols were read for it: the
 * object (under --symfs) if it has the recorded build-id, else perf's
 * build-id cache copy; into @path (PATH_MAX).  False: none (the kernel,
 * anonymous code, an object gone or rebuilt). */
bool dso_code_path(struct dso *dso, char *path);
/* Sets the build-id a perf.data BUILD_ID feature gives for the dso. */
void dso_set_build_id(struct dso *dso, const void *id, size_t len);

/*
 * The file's HEADER_BUILD_ID table (@len bytes, copied; hostile input,
 * walked with bounds): an object it names gets its recorded build-id, and
 * its symbols come, as perf's, from a file with that build-id: the object
 * itself if it still has it, else perf's build-id cache
 * ($PERF_BUILDID_DIR or ~/.debug: .build-id/xx/rest/elf, which perf record
 * fills); none if neither has it (perf shows the addresses then).
 * 0 or -ENOMEM.
 */
int dsos_set_build_ids(struct dsos *d, const void *table, size_t len);

/* @name demangled as perf shows C++ names ("ns::K::run", no parameters),
 * malloc'd; NULL: not a C++ name, or no demangler. */
char *symbol_demangle(const char *name);

#endif
