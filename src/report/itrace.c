// SPDX-License-Identifier: MIT
/*
 * Instruction trace reports over CoreSight trace: the listings of
 * perfring_cs_decode() (snapshot directories and perf.data AUX data).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../ring/internal.h"
#include "cs_decode.h"
#include "cs_snapshot.h"
#include "outbuf.h"

static void copy_stats(struct perfring_cs_stats *st, const struct csd_stats *c)
{
	size_t sz;
	struct perfring_cs_stats t = { 0 };

	if (!st)
		return;
	sz = st->sz && st->sz < sizeof(t) ? st->sz : sizeof(t);
	t.sz = sz;
	t.trace_bytes = c->bytes;
	t.packets = c->packets;
	t.elements = c->elements;
	t.ranges = c->ranges;
	t.instructions = c->instructions;
	t.nosync = c->nosync;
	t.nacc = c->nacc;
	t.resyncs = c->resyncs;
	t.errors = c->errors;
	t.decoders = c->decoders;
	memcpy(st, &t, sz);
}

static void add_stats(struct csd_stats *a, const struct csd_stats *b)
{
	a->bytes += b->bytes;
	a->packets += b->packets;
	a->elements += b->elements;
	a->ranges += b->ranges;
	a->instructions += b->instructions;
	a->nosync += b->nosync;
	a->nacc += b->nacc;
	a->resyncs += b->resyncs;
	a->errors += b->errors;
	if (b->decoders > a->decoders)
		a->decoders = b->decoders;
}

static int ob_open(struct outbuf *ob, FILE *f)
{
	memset(ob, 0, sizeof(*ob));
	ob->cap = OB_SIZE + OB_SLACK;
	ob->p = malloc(ob->cap);
	ob->f = f;
	return ob->p ? 0 : -ENOMEM;
}

static int ob_close(struct outbuf *ob)
{
	int err;

	ob_flush(ob);
	err = ob->err;
	if (!err && ob->f && fflush(ob->f))
		err = -errno;
	free(ob->p);
	ob->p = NULL;
	return err;
}

static unsigned listing_flags(const struct perfring_cs_opts *o)
{
	if (o->elements_only)
		return CSD_DECODE | CSD_PRINT_ELEMS;
	if (o->decode)
		return CSD_DECODE | CSD_PRINT_ELEMS | CSD_PRINT_RAW_PKTS;
	return CSD_PRINT_PKTS;
}

static int aux_decode(const struct perfring_cs_opts *o, struct outbuf *ob,
		      struct csd_stats *st);

int perfring_cs_decode(const struct perfring_cs_opts *o, FILE *out,
		       struct perfring_cs_stats *st)
{
	struct csd_stats cs = { 0 };
	struct outbuf ob;
	int ret, ret2;

	if (!o || (!o->snapshot && !o->input))
		return -EINVAL;
	ret = ob_open(&ob, out);
	if (ret)
		return ret;
	if (o->snapshot) {
		struct css *s;

		ret = css_open_dir(o->snapshot, &s);
		if (!ret) {
			ret = css_decode(s, o->buffer, listing_flags(o), &ob,
					 NULL, NULL, &cs);
			css_free(s);
		}
	} else {
		ret = aux_decode(o, &ob, &cs);
	}
	ret2 = ob_close(&ob);
	copy_stats(st, &cs);
	return ret ? ret : ret2;
}

static int aux_decode(const struct perfring_cs_opts *o, struct outbuf *ob,
		      struct csd_stats *st)
{
	(void)o;
	(void)ob;
	(void)st;
	(void)add_stats;
	return -ENOSYS;
}

int perfring_itrace_script(const struct perfring_itrace_opts *o, FILE *out,
			   struct perfring_cs_stats *st)
{
	(void)o;
	(void)out;
	(void)st;
	return -ENOSYS;
}

int perfring_itrace_report(const struct perfring_itrace_opts *o, FILE *out,
			   struct perfring_cs_stats *st)
{
	(void)o;
	(void)out;
	(void)st;
	return -ENOSYS;
}

int perfring_inject(const struct perfring_itrace_opts *o, const char *output,
		    struct perfring_cs_stats *st)
{
	(void)o;
	(void)output;
	(void)st;
	return -ENOSYS;
}
