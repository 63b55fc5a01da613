/* SPDX-License-Identifier: MIT */
/*
 * GNU build-ids (NT_GNU_BUILD_ID notes) of ELF files, the running kernel
 * and the vDSO, and perf's HEADER_BUILD_ID table entries.  Files are
 * hostile input: notes are walked with bounds checked, nothing is mapped
 * (a file truncated under us cannot raise SIGBUS).
 */
#ifndef PERFRING_FORMAT_BUILDID_H
#define PERFRING_FORMAT_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAX 20 /* perf's BUILD_ID_SIZE: SHA-1 */

struct buildid {
	unsigned char data[BUILDID_MAX];
	size_t size; /* 0: none */
};

/* The first GNU build-id in a run of ELF notes (@p, @len, 4-byte aligned
 * entries as in a SHT_NOTE section or PT_NOTE segment).  Returns 0,
 * -ENOENT (none) or -EBADMSG (a note that runs past the end). */
int buildid_from_notes(const void *p, size_t len, struct buildid *id);

/* Of an ELF image in memory (@len bytes): its note sections, or its
 * PT_NOTE segments when it has no section headers. */
int buildid_from_elf_mem(const void *p, size_t len, struct buildid *id);

/* Of the ELF file at @path.  Returns 0 or -errno (-ENOENT: no build-id). */
int buildid_from_file(const char *path, struct buildid *id);

/* Of the running kernel (/sys/kernel/notes) and of this process's vDSO
 * (the same image in every process of the machine). */
int buildid_kernel(struct buildid *id);
int buildid_vdso(struct buildid *id);

/* Lower-case hex into @out (2 * BUILDID_MAX + 1 bytes). */
void buildid_hex(const struct buildid *id, char *out);

/*
 * One HEADER_BUILD_ID entry as perf writes it (header.c write_buildid):
 * {header {type 0, misc @misc | PERF_RECORD_MISC_BUILD_ID_SIZE, size},
 * pid, build-id in 20 bytes + its size, name padded to 64}, appended to
 * *@buf (realloc'ed; *@len grows).  Returns 0 or -ENOMEM/-E2BIG.
 */
int buildid_entry_add(unsigned char **buf, size_t *len, int32_t pid,
		      uint16_t misc, const struct buildid *id,
		      const char *name);

#endif
