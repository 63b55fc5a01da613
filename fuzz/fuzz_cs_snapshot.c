// SPDX-License-Identifier: MIT
/*
 * Fuzz target: OpenCSD snapshot directories (src/report/cs_snapshot.c) and
 * the decoding they drive (cs_decode.c, OpenCSD's decoders).
 *
 * The input is a packed set of files: one byte of options (bits 0-1: the
 * listing, bits 2-4: the framing, css_framing modulo 6, bit 5: halting on
 * data errors), then
 * entries {u8 name_len; name; u32 le data_len; data} (snapshot.ini,
 * trace.ini, device .ini files, the trace buffer, memory dumps).  The
 * snapshot is parsed from them, every trace buffer decoded with packet
 * and element listings into memory.  Seeds: fuzz/corpus/cs_snapshot/ (the
 * OpenCSD test snapshots packed, trace and dumps cut to keep each seed
 * under 64 KiB, damaged copies, and TPIU / DSTREAM framed traces).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coresight/cs_decode.h"
#include "coresight/cs_snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 64

struct pack {
	const char *name[MAX_FILES];
	size_t name_len[MAX_FILES];
	const uint8_t *data[MAX_FILES];
	size_t len[MAX_FILES];
	int n;
};

static int pack_read(void *ctx, const char *name, size_t max, uint8_t **out,
		     size_t *len)
{
	struct pack *p = ctx;

	for (int i = 0; i < p->n; i++) {
		if (p->name_len[i] != strlen(name) ||
		    memcmp(p->name[i], name, p->name_len[i]))
			continue;
		if (p->len[i] > max)
			return -EFBIG;
		*out = malloc(p->len[i] ? p->len[i] : 1);
		if (!*out)
			return -ENOMEM;
		memcpy(*out, p->data[i], p->len[i]);
		*len = p->len[i];
		return 0;
	}
	return -ENOENT;
}

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = {
		CSD_PRINT_PKTS,
		CSD_DECODE | CSD_PRINT_ELEMS | CSD_PRINT_RAW_PKTS,
		CSD_DECODE | CSD_PRINT_ELEMS,
		CSD_DECODE,
	};
	struct pack p = { .n = 0 };
	struct css *s;
	size_t off = 1;
	unsigned flags;

	if (size < 1)
		return 0;
	flags = modes[data[0] % 4];
	if (data[0] & 0x20)
		flags |= CSD_HALT_ON_ERROR;
	while (off < size && p.n < MAX_FILES) {
		size_t nl = data[off++], dl;
		uint32_t l32;

		if (size - off < nl + 4)
			break;
		p.name[p.n] = (const char *)data + off;
		p.name_len[p.n] = nl;
		off += nl;
		memcpy(&l32, data + off, 4);
		off += 4;
		dl = l32;
		if (dl > size - off)
			dl = size - off;
		p.data[p.n] = data + off;
		p.len[p.n] = dl;
		off += dl;
		p.n++;
	}
	if (css_parse(pack_read, &p, "fuzz", &s))
		return 0;
	css_set_framing(s, (enum css_framing)(((data[0] >> 2) & 7) % 6));
	for (int b = 0; b < css_nr_buffers(s); b++) {
		struct outbuf ob = { 0 };
		struct csd_stats st;
		FILE *f = fopen("/dev/null", "w");

		ob.cap = OB_SIZE + OB_SLACK;
		ob.p = malloc(ob.cap);
		ob.f = f;
		if (ob.p && f &&
		    css_decode(s, css_buffer_name(s, b), flags, &ob, NULL, NULL,
			       &st) == 0)
			sink += st.packets + st.elements + st.resyncs;
		if (ob.p)
			ob_flush(&ob);
		free(ob.p);
		if (f)
			fclose(f);
		for (int id = 0; id < 128; id++)
			sink += css_core_of(s, (uint8_t)id) != NULL;
	}
	css_free(s);
	return 0;
}
