/* SPDX-License-Identifier: MIT */
/*
 * Threads and address spaces as the side-band records of a perf.data
 * describe them (the report layer): COMM names threads, MMAP/MMAP2 add
 * maps to a process, FORK starts a thread (sharing its process's maps) or
 * a process (a copy of the parent's), EXIT ends one.  Sample addresses are
 * resolved to map, dso and symbol from here, the way perf's machine.c
 * does.  Lookups allocate nothing.
 */
#ifndef PERFRING_MACHINE_THREADS_H
#define PERFRING_MACHINE_THREADS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "../format/perf_record.h"
#include "symbols.h"

struct unwinder;

struct map {
	uint64_t start, end, pgoff;
	struct dso *dso;
	/* From the record (what perf report --mmaps prints): PROT_* and
	 * MAP_* bits (an MMAP's: PROT_EXEC unless a data map), inode. */
	uint32_t prot, flags;
	uint64_t ino;
};

/* One address space, shared by the threads of a process. */
struct maps {
	struct map *v; /* sorted by start, not overlapping */
	uint32_t nr, cap;
	uint32_t refs;
	uint32_t last; /* index of the last hit */
};

struct thread {
	struct thread *next; /* hash chain */
	struct thread *all_next;
	int32_t pid, tid;
	const char *comm; /* ":tid" until a COMM or FORK names it */
	uint32_t comm_len;
	bool comm_set;
	bool exited;
	bool removed; /* replaced by a FORK of its tid: no longer looked up */
	int32_t ppid; /* the parent's tid from its FORK, or -1 (perf's) */
	struct maps *maps;
	void *priv; /* for the user */
	/* For the user: text made from comm (and tid), and what it was
	 * made for. */
	const char *text_for;
	uint32_t text_len;
	char text[44];
};

/* A resolved address. */
struct addr_loc {
	const struct map *map; /* NULL: no map holds the address */
	struct dso *dso;
	const struct symbol *sym;
	uint64_t addr; /* map-relative (perf's al->addr): what +0x.. is from */
	uint64_t sym_off;
	bool kernel;
};

struct machine {
	struct thread **tab;
	uint32_t mask, nr;
	struct thread *all;
	struct thread *last; /* lookup cache */
	struct dsos dsos;
	struct maps kmaps; /* pid -1 maps (kernel, modules) */
	char **strs; /* comm strings, owned */
	uint32_t nr_strs, cap_strs;
	bool host_decided;
	/* unwind.c's state, made on first use, with what frees it at
	 * machine_exit() (unwind.c sets both: threads.c knows nothing of
	 * unwinding) */
	struct unwinder *unwinder;
	void (*unwinder_free)(struct machine *m);
};

int machine_init(struct machine *m);
struct prd_file;
/* The objects' build-ids as @f recorded them (its HEADER_BUILD_ID table,
 * dsos_set_build_ids()).  0 or -ENOMEM. */
int machine_use_build_ids(struct machine *m, struct prd_file *f);
void machine_exit(struct machine *m);
/* Whether the file was recorded on this machine (kallsyms and the vDSO
 * apply); decided once, before the first kernel lookup. */
void machine_set_host(struct machine *m, bool host);
/* Whether @f was recorded on this machine: its HOSTNAME and OSRELEASE
 * (those it has) are this machine's. */
bool file_recorded_here(struct prd_file *f);

/*
 * Updates the state from a side-band record's view (COMM, MMAP, MMAP2,
 * FORK, EXIT; other types are ignored).  Returns 0 or -ENOMEM.
 */
int machine_process(struct machine *m, const union prd_record *rec);

struct thread *machine_findnew_thread(struct machine *m, int32_t pid,
				      int32_t tid);
/* Every thread, in creation order. */
static inline struct thread *machine_threads(struct machine *m)
{
	return m->all;
}

/*
 * Resolves @ip as @cpumode (PERF_RECORD_MISC_KERNEL, _USER, ...; 0 tries
 * the kernel for kernel addresses, then the thread) in @t's address space.
 * @want_sym false leaves al->sym NULL (no symbol table is loaded).
 */
void machine_resolve(struct machine *m, struct thread *t, uint8_t cpumode,
		     uint64_t ip, bool want_sym, struct addr_loc *al);

/* The kernel symbol holding @addr, for formats' %pS (tpfmt_resolve_fn). */
const char *machine_kernel_symbol(void *machine, uint64_t *addr,
				  const char **mod);

/* Whether perf would keep a callchain (known context markers only). */
bool callchain_valid(const uint64_t *ips, uint64_t nr, unsigned max_entries);

/* The cpumode of the entries after a callchain context marker
 * (PERF_CONTEXT_KERNEL, _USER, _HV: what callchain_valid() accepts). */
static inline uint8_t callchain_context_cpumode(uint64_t marker)
{
	return marker == PERF_CONTEXT_KERNEL ? PERF_RECORD_MISC_KERNEL :
	       marker == PERF_CONTEXT_USER   ? PERF_RECORD_MISC_USER :
					       PERF_RECORD_MISC_HYPERVISOR;
}

/* At a callchain context marker, the cpumode of the entries after it into
 * @mode and true (an unknown marker leaves @mode); false for an address.
 * The exports' stack walks share it. */
static inline bool callchain_marker(uint64_t ip, uint8_t *mode)
{
	if (ip < (uint64_t)PERF_CONTEXT_MAX)
		return false;
	switch (ip) {
	case (uint64_t)PERF_CONTEXT_KERNEL:
		*mode = PERF_RECORD_MISC_KERNEL;
		break;
	case (uint64_t)PERF_CONTEXT_USER:
		*mode = PERF_RECORD_MISC_USER;
		break;
	case (uint64_t)PERF_CONTEXT_HV:
		*mode = PERF_RECORD_MISC_HYPERVISOR;
		break;
	case (uint64_t)PERF_CONTEXT_GUEST_KERNEL:
		*mode = PERF_RECORD_MISC_GUEST_KERNEL;
		break;
	case (uint64_t)PERF_CONTEXT_GUEST_USER:
		*mode = PERF_RECORD_MISC_GUEST_USER;
		break;
	default:
		break;
	}
	return true;
}

#endif
