/* SPDX-License-Identifier: MIT */
/*
 * OpenCSD snapshot directories (the report layer): snapshot.ini with its
 * device list, device_*.ini / cpu_*.ini register values and memory dumps,
 * trace.ini with the trace buffers and which source writes to which
 * buffer.  Everything read is untrusted: sizes are bounded, numbers
 * checked, damage reported with the file and line.
 */
#ifndef PERFRING_CORESIGHT_CS_SNAPSHOT_H
#define PERFRING_CORESIGHT_CS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "cs_decode.h"

struct css;

/*
 * Reads snapshot file @name (relative to the snapshot) into a malloc'ed
 * buffer of at most @max bytes: 0, -ENOENT, -EFBIG or -errno.
 */
typedef int (*css_read_fn)(void *ctx, const char *name, size_t max,
			   uint8_t **data, size_t *len);

/* Parses a snapshot whose files @rd reads (@label names it in messages).
 * Returns 0 or -errno (-EBADMSG: malformed, the log says where). */
int css_parse(css_read_fn rd, void *ctx, const char *label, struct css **out);
/* The snapshot in directory @dir. */
int css_open_dir(const char *dir, struct css **out);
void css_free(struct css *s);

/*
 * How a trace buffer's bytes are framed.  A snapshot's buffer "format"
 * names three: "coresight" (16-byte frames, memory aligned: ETB, ETF,
 * ETR), "dstream_coresight" (a DSTREAM probe's capture: blocks of 512
 * bytes, 504 of TPIU trace with its frame syncs and an 8-byte footer) and
 * "source_data" (one unframed source: TRBE).  A TPIU capture (frame syncs
 * between frames, with or without halfword syncs) is no snapshot format:
 * it is chosen as trc_pkt_lister's -tpiu / -tpiu_hsync choose it.
 */
enum css_framing {
	/* The buffer's format, read as OpenCSD's snapshot reader reads it
	 * (trc_pkt_lister's listing): "dstream_coresight" as TPIU,
	 * stopping at the first data error (the first footer). */
	CSS_FRAMING_AUTO,
	CSS_FRAMING_FRAMES,
	CSS_FRAMING_TPIU, /* FSYNCs */
	CSS_FRAMING_TPIU_HSYNC, /* FSYNCs and HSYNCs */
	CSS_FRAMING_DSTREAM,
	CSS_FRAMING_RAW,
};

/* The framing named @name ("auto", "frames", "tpiu", "tpiu-hsync",
 * "dstream", "raw"), or -EINVAL. */
int css_framing_parse(const char *name);
/* Framing used for every buffer decoded from now on (default AUTO). */
void css_set_framing(struct css *s, enum css_framing f);

int css_nr_buffers(const struct css *s);
const char *css_buffer_name(const struct css *s, int i);

/*
 * Decodes trace buffer @buffer (NULL: the first, as trc_pkt_lister does)
 * with one decoder per source writing to it, configured from its
 * registers, and the memory dumps of their cores.  @flags, @ob: as
 * csd_new(); @fn gets the elements when decoding.  @st (may be NULL) gets
 * the counts.  Returns 0 or -errno.
 */
int css_decode(struct css *s, const char *buffer, unsigned flags,
	       struct outbuf *ob, csd_elem_fn fn, void *ctx,
	       struct csd_stats *st);

/* Reads up to @n bytes at @addr from the memory dumps the last
 * css_decode() used; returns the bytes copied (0: not in a dump). */
size_t css_read_mem(const struct css *s, uint64_t addr, void *buf, size_t n);
/* The core (or source) name whose source has trace ID @trace_id. */
const char *css_core_of(const struct css *s, uint8_t trace_id);

/* Trace chunk size fed to the decoders at a time (trc_pkt_lister's). */
#define CSS_FEED_CHUNK 1024
/* DSTREAM capture blocks: trace bytes, then a footer. */
#define CSS_DSTREAM_BLOCK 512
#define CSS_DSTREAM_FOOTER 8

#endif
