// SPDX-License-Identifier: MIT
/* GNU build-ids and HEADER_BUILD_ID entries (buildid.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buildid.h"
#include "safe_open.h"

#define NT_GNU_BUILD_ID_TYPE 3
#define NAME_ALIGN 64 /* perf's padding of the names */
#define BUILD_ID_SIZE_MISC (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define KERNEL_NOTES_MAX (64u << 10)
#define VDSO_MAX (1u << 20)

static size_t align4(size_t x)
{
	return (x + 3) & ~(size_t)3;
}

int buildid_from_notes(const void *p, size_t len, struct buildid *id)
{
	const unsigned char *b = p;
	size_t pos = 0;

	id->size = 0;
	while (len - pos >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_end, desc_end;

		memcpy(&namesz, b + pos, 4);
		memcpy(&descsz, b + pos + 4, 4);
		memcpy(&type, b + pos + 8, 4);
		pos += 12;
		if (namesz > len - pos)
			return -EBADMSG;
		name_end = pos + align4(namesz);
		if (name_end > len || descsz > len - name_end)
			return -EBADMSG;
		desc_end = name_end + align4(descsz);
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(b + pos, "GNU", 4) && descsz) {
			id->size = descsz < BUILDID_MAX ? descsz : BUILDID_MAX;
			memcpy(id->data, b + name_end, id->size);
			return 0;
		}
		if (desc_end > len)
			break;
		pos = desc_end;
	}
	return -ENOENT;
}

/* The notes of an open ELF handle: note sections, else PT_NOTE. */
static int elf_buildid(Elf *elf, struct buildid *id)
{
	Elf_Scn *scn = NULL;
	size_t nphdr;
	bool sections = false;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		sections = true;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf &&
		    !buildid_from_notes(d->d_buf, d->d_size, id))
			return 0;
	}
	if (sections || elf_getphdrnum(elf, &nphdr))
		return -ENOENT;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
					 (size_t)ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_buf &&
		    !buildid_from_notes(d->d_buf, d->d_size, id))
			return 0;
	}
	return -ENOENT;
}

int buildid_from_elf_mem(const void *p, size_t len, struct buildid *id)
{
	Elf *elf;
	int err;

	id->size = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	/* the image must be writable: libelf may convert it in place */
	elf = elf_memory((char *)p, len);
	if (!elf)
		return -ENOEXEC;
	err = elf_buildid(elf, id);
	elf_end(elf);
	return err;
}

int buildid_from_file(const char *path, struct buildid *id)
{
	Elf *elf;
	int fd, err;

	id->size = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	/* a path the traced program's owner may control (safe_open.h) */
	fd = safe_open_regular(path, NULL, NULL);
	if (fd < 0)
		return fd;
	/* read, not mapped: a file cut short under us is an error, not a
	 * SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = elf ? elf_buildid(elf, id) : -ENOEXEC;
	elf_end(elf);
	close(fd);
	return err;
}

int buildid_kernel(struct buildid *id)
{
	unsigned char *buf = malloc(KERNEL_NOTES_MAX);
	ssize_t n = -1;
	int fd, err;

	id->size = 0;
	if (!buf)
		return -ENOMEM;
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, KERNEL_NOTES_MAX);
		close(fd);
	}
	err = n > 0 ? buildid_from_notes(buf, (size_t)n, id) : -ENOENT;
	free(buf);
	return err;
}

int buildid_vdso(struct buildid *id)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long long start = 0, end = 0;
	int err = -ENOENT;

	id->size = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2)
			break;
	fclose(f);
	if (end > start && end - start <= VDSO_MAX) {
		size_t len = (size_t)(end - start);
		void *copy = malloc(len);

		if (!copy)
			return -ENOMEM;
		memcpy(copy, (const void *)(uintptr_t)start, len);
		err = buildid_from_elf_mem(copy, len, id);
		free(copy);
	}
	return err;
}

void buildid_hex(const struct buildid *id, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < id->size && i < BUILDID_MAX; i++) {
		*out++ = hex[id->data[i] >> 4];
		*out++ = hex[id->data[i] & 15];
	}
	*out = 0;
}

int buildid_entry_add(unsigned char **buf, size_t *len, int32_t pid,
		      uint16_t misc, const struct buildid *id, const char *name)
{
	size_t name_len = strlen(name) + 1;
	size_t padded = (name_len + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	size_t size = 36 + padded; /* header, pid, 24 bytes of build-id */
	uint16_t m = misc | BUILD_ID_SIZE_MISC, sz;
	uint32_t type = 0;
	unsigned char *p;

	if (size > UINT16_MAX || id->size > BUILDID_MAX)
		return -E2BIG;
	p = realloc(*buf, *len + size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	p += *len;
	memset(p, 0, size);
	sz = (uint16_t)size;
	memcpy(p, &type, 4);
	memcpy(p + 4, &m, 2);
	memcpy(p + 6, &sz, 2);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, id->data, id->size);
	p[12 + 20] = (unsigned char)id->size;
	memcpy(p + 36, name, name_len);
	*len += size;
	return 0;
}
