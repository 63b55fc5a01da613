/* SPDX-License-Identifier: MIT */
/*
 * CoreSight trace decoding with OpenCSD (the report layer): one decode tree
 * per trace buffer, one decoder per trace ID (ETMv4, ETMv3, PTM, ETE, STM)
 * configured from register values, frame deformatter for CoreSight
 * formatted buffers or a single raw stream (TRBE), memory images from
 * buffers or a callback.  Decode errors are resync points: a fatal data
 * path response resets the tree and decoding goes on after the byte that
 * failed; they are counted, never fatal.
 *
 * Listings: the packet lines (and, decoding, the raw bytes of each packet
 * and the generic elements) are printed in the format of OpenCSD's
 * trc_pkt_lister, so the lines starting "Idx:" or "ID:" can be compared
 * with its output.
 */
#ifndef PERFRING_CORESIGHT_CS_DECODE_H
#define PERFRING_CORESIGHT_CS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <opencsd/c_api/opencsd_c_api.h>

#include "../common/outbuf.h"

struct csd;

/* What a decode tree prints (into an outbuf) or hands out. */
enum {
	CSD_PRINT_PKTS = 1u << 0, /* packet lines (packet processors only) */
	CSD_DECODE = 1u << 1, /* full decode: elements */
	CSD_PRINT_ELEMS = 1u << 2, /* element lines (with CSD_DECODE) */
	CSD_PRINT_RAW_PKTS = 1u << 3, /* packet lines with raw bytes (mon) */
	/* A data error ends the decode (no reset, no end of trace), as in
	 * OpenCSD 1.3.3's trc_pkt_lister; else it is a resync point. */
	CSD_HALT_ON_ERROR = 1u << 4,
};

/* Called for every generic element when decoding; return 0 or -errno
 * (a negative return stops csd_feed() with it). */
typedef int (*csd_elem_fn)(void *ctx, uint64_t index, uint8_t trace_id,
			   const ocsd_generic_trace_elem *elem);

struct csd_stats {
	uint64_t bytes; /* trace bytes fed */
	uint64_t packets; /* packets seen (printing or monitoring) */
	uint64_t elements; /* generic elements */
	uint64_t ranges; /* INSTR_RANGE elements */
	uint64_t instructions; /* instructions in them */
	uint64_t nosync; /* NO_SYNC elements (start, overflow, bad data) */
	uint64_t nacc; /* ADDR_NACC: code the memory image lacked */
	uint64_t resyncs; /* fatal data path responses reset and skipped */
	uint64_t errors; /* errors OpenCSD logged */
	uint32_t decoders;
};

/*
 * A decode tree.  @formatted: CoreSight frames (deformatter with
 * @frame_flags, OCSD_DFRMTR_*), else one raw stream (TRBE, ETE sink) whose
 * only decoder is the first created.  @flags: CSD_*.  @ob receives the
 * listing (may be NULL when nothing is printed).  NULL on failure.
 */
struct csd *csd_new(bool formatted, uint32_t frame_flags, unsigned flags,
		    struct outbuf *ob);
void csd_free(struct csd *d);

void csd_set_elem_fn(struct csd *d, csd_elem_fn fn, void *ctx);

/* Decoders, one per trace ID; -EEXIST for an ID already decoded, -EINVAL
 * for a configuration OpenCSD refuses (logged). */
int csd_add_etmv4(struct csd *d, const ocsd_etmv4_cfg *cfg);
int csd_add_ete(struct csd *d, const ocsd_ete_cfg *cfg);
int csd_add_etmv3(struct csd *d, const ocsd_etmv3_cfg *cfg);
int csd_add_ptm(struct csd *d, const ocsd_ptm_cfg *cfg);
int csd_add_stm(struct csd *d, const ocsd_stm_cfg *cfg);

/* Memory image: @len bytes at @addr (the bytes must outlive the tree). */
int csd_add_mem(struct csd *d, uint64_t addr, const void *p, size_t len,
		ocsd_mem_space_acc_t space);
/* Memory from a callback over [@start, @end] (inclusive). */
int csd_add_mem_cb(struct csd *d, uint64_t start, uint64_t end,
		   Fn_MemAccID_CB fn, void *ctx);

/*
 * Feeds @len trace bytes (their index in the buffer continues from the
 * bytes fed before).  Errors in the data are resynced and counted; returns
 * 0, or the negative return of the element callback / an output error.
 */
int csd_feed(struct csd *d, const uint8_t *p, size_t len);
/* End of trace: flushes the decoders (EO_TRACE elements, END lines). */
int csd_eot(struct csd *d);
/* Resets the decoders (a discontinuity: the next data starts afresh). */
int csd_reset(struct csd *d);

const struct csd_stats *csd_stats(const struct csd *d);

/* Architecture and profile of a core name ("Cortex-A57", "ARMv8.2-A",
 * "ARM-AA64"); false when unknown. */
bool csd_core_profile(const char *name, ocsd_arch_version_t *arch,
		      ocsd_core_profile_t *prof);

#endif
