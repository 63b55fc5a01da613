/* SPDX-License-Identifier: MIT */
/*
 * tracefs: a private instance (instances/<name>) and the consumer of its
 * per-CPU ring buffers through the memory-mapped trace_pipe_raw interface
 * (Documentation/trace/ring-buffer-map.rst), with a read() fallback.
 */
#ifndef PERFRING_SOURCES_TRACEFS_H
#define PERFRING_SOURCES_TRACEFS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include "../common/log.h"
#include "../ring/subbuf_page.h"

/* include/uapi/linux/trace_mmap.h (newer than the installed headers). */
#define TRACE_MMAP_IOCTL_GET_READER _IO('R', 0x20)

#define TFS_DEFAULT_ROOT "/sys/kernel/tracing"

struct tfs_instance {
	char root[PATH_MAX / 4]; /* tracefs mount */
	char path[PATH_MAX / 2]; /* root/instances/name */
	char name[64];
	bool created;
};

/* Makes root/instances/@name (it must not exist). */
PR_HIDDEN int tfs_instance_create(struct tfs_instance *ti, const char *root,
				  const char *name);
/* Disables the instance's events and tracing and removes it. */
PR_HIDDEN int tfs_instance_remove(struct tfs_instance *ti);
/* Writes @val to the instance file @rel; errors are returned, logged only
 * when @must. */
PR_HIDDEN int tfs_write(const struct tfs_instance *ti, const char *rel,
			const char *val, bool must);
/* Reads a whole file (any path) into a malloc()ed NUL-terminated buffer. */
PR_HIDDEN int tfs_read_file(const char *path, size_t max, char **out,
			    size_t *len);

/* A page handed to the sink: @len bytes (a whole sub-buffer). */
typedef int (*tfs_page_fn)(void *ctx, int cpu, const void *page);

struct tfs_cpu {
	int cpu;
	int fd;
	bool mapped;
	struct perfring_subbuf *ring; /* a user-space ring, not the kernel's */
	struct subbuf_meta *meta;
	size_t meta_len;
	uint8_t *data;
	size_t data_len;
	uint32_t subbuf_size;
	uint32_t nr_subbufs;
	uint8_t *copy; /* one sub-buffer, page aligned (partial pages, read) */

	/* Reader state: the page we own and how much of it is in the file. */
	bool have;
	uint32_t id;
	uint32_t read; /* bytes valid on it (meta reader.read) */
	uint32_t written; /* bytes of it already handed to the sink */
	uint64_t overrun_seen; /* meta overrun at the last GET_READER */

	/* Figures. */
	uint64_t events;
	uint64_t pages;
	uint64_t bytes; /* event bytes handed out */
	uint64_t lost_pages; /* pages marked with missed events */
	uint64_t lost_stored; /* sum of stored missed counts */
	uint64_t ioctls;
	uint64_t zero_copy_pages; /* handed out straight from the mapping */
	uint64_t unsaved_pages; /* taken from the kernel, refused by the sink */
	uint64_t entries, overrun, kread; /* meta page at the end */
};

/*
 * Opens @dir/per_cpu/cpu@cpu/trace_pipe_raw and maps it when @map (falls
 * back to read() when the kernel has no mmap interface: c->mapped says).
 * @subbuf_size is the instance's (read() needs it).
 */
PR_HIDDEN int tfs_cpu_open(struct tfs_cpu *c, const char *dir, int cpu,
			   bool map, uint32_t subbuf_size);

/*
 * Takes what the kernel has for this CPU and hands every completed page to
 * @fn before asking for the next one.  A page the writer is still on is
 * kept (owned) until it completes; with @final its valid part is copied
 * out as a page of its own.  Returns the pages handed out or -errno.
 */
PR_HIDDEN int tfs_cpu_consume(struct tfs_cpu *c, bool final, tfs_page_fn fn,
			      void *ctx);

/* Reads the meta page counters into c->entries/overrun/kread. */
PR_HIDDEN void tfs_cpu_update_counts(struct tfs_cpu *c);

PR_HIDDEN void tfs_cpu_close(struct tfs_cpu *c);

/*
 * Reads a user-space sub-buffer ring (src/ring/subbuf.c) with the same
 * consumer code, through its public API (GET_READER is
 * perfring_subbuf_get_reader()).  The ring stays the caller's.
 */
PR_HIDDEN int tfs_cpu_attach_ring(struct tfs_cpu *c, struct perfring_subbuf *r,
				  int cpu);

/* Counts the events of a page and its missed-events marks into @c. */
PR_HIDDEN int tfs_account_page(struct tfs_cpu *c, const void *page);

#endif
