/* SPDX-License-Identifier: MIT */
/*
 * trace.dat, version 6 (trace-cmd's Documentation/trace-cmd/
 * trace-cmd.dat.v6.5.txt): writer and reader; the reader also reads
 * version 7 (trace-cmd.dat.v7.5.txt: sections found through options,
 * uncompressed or zstd, the BUFFER option with trace-cmd 3.1's page size).
 *
 *   "\027\010\104tracing" "6\0" u8 endian (0 LE), u8 sizeof(long), u32 page
 *   "header_page\0" u64 len + text, "header_event\0" u64 len + text
 *   u32 n, n x { u64 len + ftrace format }
 *   u32 nr_systems, per system "<sys>\0" u32 n, n x { u64 len + format }
 *   u32 len + kallsyms, u32 len + printk_formats, u64 len + saved_cmdlines
 *   u32 nr_cpus, "options  \0", { u16 id, u32 size, data }..., u16 0
 *   "flyrecord\0", nr_cpus x { u64 offset, u64 size }
 *   per-CPU data: whole pages of `page` bytes at page-aligned offsets.
 *
 * The file page size is the sub-buffer size.  The writer collects each
 * CPU's pages in an unlinked temporary file next to the output (written
 * with write() straight from the kernel's mapping: no copy in user space)
 * and joins them with copy_file_range() at the end (a copy inside the
 * kernel).  O_DIRECT was measured: each 4 KiB write became a synchronous
 * disk request and the recorder used 3x the CPU and lost events.
 *
 * Order of writes, so that a full disk cuts the data but never the
 * metadata: tdat_writer_begin() writes everything up to printk_formats
 * into the output at the start and allocates room for the rest
 * (saved_cmdlines, options, the flyrecord table: their size is bounded).
 * A failed page write stops the data there (sticky; the partial page is
 * dropped).  tdat_writer_finish() writes the rest into the allocated room,
 * then moves each CPU's pages into the file chunk by chunk, freeing the
 * temporary file's chunk as it goes (FALLOC_FL_PUNCH_HOLE) and, when the
 * disk is full, reading the chunk, freeing it and writing it: the move
 * needs no free space.  A CPU whose pages cannot all be moved is cut at
 * its last complete page, the table says what is there, and the pages
 * and events left out are counted (tdat_writer_cpu_result()).
 */
#ifndef PERFRING_FORMAT_TRACE_DAT_H
#define PERFRING_FORMAT_TRACE_DAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../common/log.h"

#define TDAT_MAGIC "\027\010\104tracing"
#define TDAT_MAGIC_LEN 10

enum {
	TDAT_OPT_DONE = 0,
	TDAT_OPT_DATE = 1,
	TDAT_OPT_CPUSTAT = 2,
	TDAT_OPT_BUFFER = 3,
	TDAT_OPT_TRACECLOCK = 4,
	TDAT_OPT_UNAME = 5,
	TDAT_OPT_CPUCOUNT = 8,
	TDAT_OPT_VERSION = 9,
};

struct tdat_blob {
	const char *name; /* event or system name where that applies */
	const void *data;
	size_t len;
};

struct tdat_system {
	const char *name;
	struct tdat_blob *events;
	size_t nr_events;
};

/* What goes in front of the data. */
struct tdat_meta {
	struct tdat_blob header_page, header_event;
	struct tdat_blob *ftrace; /* events/ftrace/<e>/format */
	size_t nr_ftrace;
	struct tdat_system *systems;
	size_t nr_systems;
	struct tdat_blob kallsyms, printk, cmdlines;
	const char *trace_clock; /* contents of trace_clock, or NULL */
	const char *uname; /* or NULL */
	const char *cpustat; /* per_cpu stats text for all CPUs, or NULL */
	/* Bytes saved_cmdlines may grow to by the end (room is kept for
	 * them at the start; 0: its length at the start). */
	size_t cmdlines_max;
};

struct tdat_writer;

/*
 * Creates @path (out_file_open() with @out_flags: OUT_FILE_KEEP_OLD or 0)
 * with per-CPU temporary files beside it.
 */
PR_HIDDEN int tdat_writer_open(const char *path, uint32_t page_size,
			       int nr_cpus, unsigned int out_flags,
			       struct tdat_writer **out);
/*
 * Writes the metadata up to printk_formats (the fields that do not change
 * while recording) and allocates room for the rest, sized from @meta's
 * cmdlines (cmdlines_max), trace_clock, uname and cpustat.
 */
PR_HIDDEN int tdat_writer_begin(struct tdat_writer *w,
				const struct tdat_meta *meta);
/* Appends one page (page_size bytes) of @cpu.  After a failed write every
 * later call returns that error without writing. */
PR_HIDDEN int tdat_writer_page(struct tdat_writer *w, int cpu,
			       const void *page);
/* The first failed page write, or 0. */
PR_HIDDEN int tdat_writer_error(const struct tdat_writer *w);
/*
 * Writes the rest of the metadata (cmdlines, options: the fields of @meta
 * that tdat_writer_begin() did not write) and the CPU data into the output
 * and closes it.  Returns 0, or the first write error when data had to be
 * left out (the file is kept, complete up to its last page: see
 * tdat_writer_cpu_result()), or an error after which the file could not
 * be made readable (it is removed).  @w stays valid: free it with
 * tdat_writer_free().
 */
PR_HIDDEN int tdat_writer_finish(struct tdat_writer *w,
				 const struct tdat_meta *meta);
/* What the join left out of a CPU's data (whole pages). */
struct tdat_cut {
	uint64_t pages, events, bytes; /* bytes: the pages' event data */
	uint64_t marked; /* pages marked "events missed before this" */
};
/* After finish: the pages of @cpu in the file; @cut gets what of it the
 * join could not write (a failed page write counts in neither). */
PR_HIDDEN uint64_t tdat_writer_cpu_result(const struct tdat_writer *w, int cpu,
					  struct tdat_cut *cut);
/* After finish: the size of the file. */
PR_HIDDEN uint64_t tdat_writer_file_bytes(const struct tdat_writer *w);
PR_HIDDEN void tdat_writer_free(struct tdat_writer *w);
/* Drops everything (temporary files and output); frees @w. */
PR_HIDDEN void tdat_writer_abort(struct tdat_writer *w);
/* Bytes of page data written so far. */
PR_HIDDEN uint64_t tdat_writer_bytes(const struct tdat_writer *w);

/* ---- reader ---------------------------------------------------------- */

struct tdat_cpu {
	uint64_t offset; /* in the file */
	uint64_t size; /* bytes at data (uncompressed) */
	const uint8_t *data; /* in the mapping, or decompressed */
};

struct tdat_file {
	const uint8_t *map;
	size_t size;
	int version;
	int long_size;
	uint32_t page_size;
	struct tdat_blob header_page, header_event;
	struct tdat_blob *ftrace;
	size_t nr_ftrace;
	struct tdat_blob *events; /* name = system */
	size_t nr_events;
	struct tdat_blob kallsyms, printk, cmdlines;
	uint32_t nr_cpus;
	struct tdat_cpu *cpus;
	char trace_clock[64]; /* the selected clock, "" if not recorded */
	uint64_t options_offset;
	uint64_t data_offset; /* "flyrecord" */
	bool have_cpucount;
	uint32_t cpucount;
	bool owned_map; /* tdat_close() unmaps */
	bool compressed; /* version 7 with zstd */
	void **owned; /* decompressed buffers */
	size_t nr_owned;
};

/*
 * Maps and checks a trace.dat: every length and offset is checked against
 * the file; errors are logged with the offset of the bad field and
 * returned as -EBADMSG (damaged), -EPROTO (version, byte order or long
 * size this reader does not handle) or -errno.
 */
PR_HIDDEN int tdat_open(const char *path, struct tdat_file **out);
/* The same on a buffer the caller keeps (fuzzing). */
PR_HIDDEN int tdat_open_mem(const void *buf, size_t size,
			    struct tdat_file **out);
PR_HIDDEN void tdat_close(struct tdat_file *f);
/* 1 if the file at @path starts with the trace.dat magic, 0 if not. */
PR_HIDDEN int tdat_probe(const char *path);

#endif
