// SPDX-License-Identifier: MIT
/* Synthesized COMM/MMAP2/FORK/kernel MMAP records from /proc. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../common/log.h"
#include "synth.h"

#define REC_MAX 8192

/*
 * The sample_id trailer of non-sample records (sample_id_all): TID, TIME,
 * ID, STREAM_ID, CPU, IDENTIFIER in that order, as the attr asks.  Time 0:
 * perf delivers such records before any sample, unordered.
 */
static size_t put_trailer(const struct synth *s, unsigned char *p, pid_t pid,
			  pid_t tid)
{
	size_t n = 0;
	uint64_t st = s->sample_type, zero = 0;

	if (st & PERF_SAMPLE_TID) {
		uint32_t v[2] = { (uint32_t)pid, (uint32_t)tid };

		memcpy(p + n, v, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(p + n, &zero, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(p + n, &s->id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		memcpy(p + n, &zero, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		memcpy(p + n, &zero, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		memcpy(p + n, &s->id, 8);
		n += 8;
	}
	return n;
}

static int emit(struct synth *s, unsigned char *rec, size_t body, pid_t pid,
		pid_t tid, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t size = body + put_trailer(s, rec + body, pid, tid);

	h.size = (uint16_t)size;
	memcpy(rec, &h, sizeof(h));
	s->records++;
	if (!s->w)
		return s->sink(s->sink_ctx, rec, size);
	return pd_writer_write(s->w, rec, size);
}

/* A NUL-terminated string padded with zeros to a multiple of 8. */
static size_t put_string(unsigned char *p, const char *str, size_t max)
{
	size_t len = strnlen(str, max - 1) + 1, padded = (len + 7) & ~7ul;

	memset(p, 0, padded);
	memcpy(p, str, len - 1);
	return padded;
}

static int read_comm(pid_t pid, pid_t tid, char *comm, size_t len)
{
	char path[64];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = (int)read(fd, comm, len - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
	return 0;
}

static int synth_comm(struct synth *s, pid_t pid, pid_t tid, const char *comm)
{
	unsigned char rec[128];
	uint32_t v[2] = { (uint32_t)pid, (uint32_t)tid };
	size_t n = 8;

	memcpy(rec + n, v, 8);
	n += 8;
	n += put_string(rec + n, comm, 16);
	return emit(s, rec, n, pid, tid, PERF_RECORD_COMM, 0);
}

static int synth_fork(struct synth *s, pid_t pid, pid_t tid)
{
	unsigned char rec[128];
	uint32_t v[4] = { (uint32_t)pid, (uint32_t)pid, (uint32_t)tid,
			  (uint32_t)pid };
	uint64_t time = 0;

	memcpy(rec + 8, v, 16);
	memcpy(rec + 24, &time, 8);
	return emit(s, rec, 32, pid, tid, PERF_RECORD_FORK, 0);
}

static int synth_maps(struct synth *s, pid_t pid)
{
	char path[64], line[PATH_MAX + 256];
	unsigned char rec[REC_MAX];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8], name[PATH_MAX];
		uint32_t ids[2] = { (uint32_t)pid, (uint32_t)pid };
		uint64_t u[3];
		uint32_t mm[2];
		uint64_t inos[2];
		uint32_t pf[2];
		size_t n = 8;
		int fields;

		name[0] = 0;
		fields = sscanf(line,
				"%llx-%llx %7s %llx %x:%x %llu %4095[^\n]",
				&start, &end, perms, &pgoff, &maj, &min, &ino,
				name);
		if (fields < 7 || perms[2] != 'x')
			continue; /* executable mappings only, like perf */
		if (!name[0])
			strcpy(name, "//anon");
		memcpy(rec + n, ids, 8);
		n += 8;
		u[0] = start;
		u[1] = end - start;
		u[2] = pgoff;
		memcpy(rec + n, u, 24);
		n += 24;
		mm[0] = maj;
		mm[1] = min;
		memcpy(rec + n, mm, 8);
		n += 8;
		inos[0] = ino;
		inos[1] = 0;
		memcpy(rec + n, inos, 16);
		n += 16;
		pf[0] = (perms[0] == 'r' ? PROT_READ : 0) |
			(perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		pf[1] = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		memcpy(rec + n, pf, 8);
		n += 8;
		n += put_string(rec + n, name, PATH_MAX);
		err = emit(s, rec, n, pid, pid, PERF_RECORD_MMAP2,
			   PERF_RECORD_MISC_USER);
		if (err)
			break;
	}
	fclose(f);
	return err;
}

int synth_process(struct synth *s, pid_t pid)
{
	char path[64], comm[32];
	struct dirent *d;
	DIR *dir;
	int err;

	if (read_comm(pid, pid, comm, sizeof(comm)))
		return 0; /* gone, or a kernel thread that just exited */
	err = synth_comm(s, pid, pid, comm);
	if (!err)
		err = synth_maps(s, pid);
	if (err == -ENOENT || err == -ESRCH || err == -EACCES)
		err = 0; /* exited meanwhile, or not ours to read */
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0 || tid == pid ||
		    read_comm(pid, tid, comm, sizeof(comm)))
			continue;
		err = synth_fork(s, pid, tid);
		if (!err)
			err = synth_comm(s, pid, tid, comm);
		if (err)
			break;
	}
	closedir(dir);
	return err;
}

int synth_all(struct synth *s)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int err = 0;

	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		pid_t pid;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = (pid_t)atoi(d->d_name);
		err = synth_process(s, pid);
	}
	closedir(dir);
	return err;
}

int synth_kernel(struct synth *s)
{
	unsigned char rec[256];
	char line[256];
	unsigned long long addr = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	uint32_t ids[2] = { (uint32_t)-1, 0 };
	uint64_t u[3];
	size_t n = 8;

	if (!f)
		return 0; /* no kernel symbols: perf falls back */
	/* _text comes early in kallsyms; stop there instead of reading MBs. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[128];

		if (sscanf(line, "%llx %c %127s", &a, &type, name) == 3 &&
		    (!strcmp(name, "_text") || !strcmp(name, "_stext"))) {
			addr = a;
			break;
		}
	}
	fclose(f);
	if (!addr)
		return 0; /* kptr_restrict hides addresses */
	memcpy(rec + n, ids, 8);
	n += 8;
	u[0] = addr;
	u[1] = ~0ull - addr;
	u[2] = addr;
	memcpy(rec + n, u, 24);
	n += 24;
	n += put_string(rec + n, "[kernel.kallsyms]_text", 64);
	return emit(s, rec, n, -1, 0, PERF_RECORD_MMAP,
		    PERF_RECORD_MISC_KERNEL);
}
