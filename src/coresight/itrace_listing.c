// SPDX-License-Identifier: MIT
/*
 * perfring_cs_decode(): a CoreSight snapshot's or a perf.data's AUX trace
 * as packet and element listings (OpenCSD's, with --decode the
 * elements), with the counts of what the decoder met.
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/auxtrace.h"
#include "../format/out_file.h"
#include "../format/perf_reader.h"
#include "../format/safe_open.h"
#include "../machine/symbols.h"
#include "cs_decode.h"
#include "cs_snapshot.h"
#include "itrace_internal.h"

static unsigned itr_listing_flags(const struct perfring_cs_opts *o)
{
	if (o->elements_only)
		return CSD_DECODE | CSD_PRINT_ELEMS;
	if (o->decode)
		return CSD_DECODE | CSD_PRINT_ELEMS | CSD_PRINT_RAW_PKTS;
	return CSD_PRINT_PKTS;
}

static int itr_aux_decode(const struct perfring_cs_opts *o, struct outbuf *ob,
			  struct csd_stats *st);

int perfring_cs_decode(const struct perfring_cs_opts *o, FILE *out,
		       struct perfring_cs_stats *st)
{
	struct csd_stats cs = { 0 };
	struct perfring_cs_opts oc;
	struct outbuf ob;
	int ret, ret2, framing;

	if (!o || !OPTS_VALID(o))
		return -EINVAL;
	OPTS_COPY(&oc, o);
	o = &oc;
	if (!o->snapshot && !o->input)
		return -EINVAL;
	framing = o->framing ? css_framing_parse(o->framing) : 0;
	if (framing < 0 || (!o->snapshot && (o->framing || o->halt_on_error))) {
		pr_err("%s", framing < 0 ? "unknown framing (auto, frames, "
					   "tpiu, tpiu-hsync, dstream, raw)" :
					   "framing and halting on errors are "
					   "snapshot options");
		return -EINVAL;
	}
	ret = itr_ob_open(&ob, out);
	if (ret)
		return ret;
	if (o->snapshot) {
		struct css *s;
		unsigned flags = itr_listing_flags(o);

		if (o->halt_on_error)
			flags |= CSD_HALT_ON_ERROR;
		ret = css_open_dir(o->snapshot, &s);
		if (!ret) {
			css_set_framing(s, (enum css_framing)framing);
			ret = css_decode(s, o->buffer, flags, &ob, NULL, NULL,
					 &cs);
			css_free(s);
		}
	} else {
		ret = itr_aux_decode(o, &ob, &cs);
	}
	ret2 = itr_ob_close(&ob);
	itr_copy_stats(st, &cs);
	return ret ? ret : ret2;
}

static void put_reg(struct outbuf *ob, const char *name, uint64_t v)
{
	ob_putc(ob, ' ');
	ob_puts(ob, name);
	ob_puts(ob, "=0x");
	ob_x64(ob, v, 0);
}

/* The cs_etm metadata, as comment lines ahead of the listing. */
static void put_info(struct outbuf *ob, const struct cs_etm_info *info)
{
	ob_puts(ob, "# cs_etm AUXTRACE_INFO: header version ");
	ob_u64(ob, info->version, 0, ' ');
	ob_puts(ob, ", ");
	ob_u64(ob, info->nr_cpu, 0, ' ');
	ob_puts(ob, " CPUs, snapshot ");
	ob_u64(ob, info->snapshot, 0, ' ');
	ob_putc(ob, '\n');
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		const struct cs_etm_cpu *c = &info->cpus[i];

		ob_puts(ob, "# cpu ");
		ob_u64(ob, c->cpu, 0, ' ');
		ob_putc(ob, ' ');
		ob_puts(ob, cs_etm_kind_name(c->kind));
		ob_puts(ob, " trace ID 0x");
		ob_x64(ob, c->trace_id, 0);
		if (c->kind == CS_ETM_KIND_ETMV3) {
			put_reg(ob, "ETMCR", c->configr);
			put_reg(ob, "ETMTRACEIDR", c->traceidr);
			put_reg(ob, "ETMCCER", c->etmccer);
			put_reg(ob, "ETMIDR", c->etmidr);
		} else {
			put_reg(ob, "TRCCONFIGR", c->configr);
			put_reg(ob, "TRCTRACEIDR", c->traceidr);
			put_reg(ob, "TRCIDR0", c->trcidr0);
			put_reg(ob, "TRCIDR1", c->trcidr1);
			put_reg(ob, "TRCIDR2", c->trcidr2);
			put_reg(ob, "TRCIDR8", c->trcidr8);
			put_reg(ob, "TRCAUTHSTATUS", c->trcauthstatus);
			if (c->kind == CS_ETM_KIND_ETE)
				put_reg(ob, "TRCDEVARCH", c->trcdevarch);
		}
		ob_putc(ob, '\n');
		ob_line_done(ob);
	}
}

static int itr_aux_decode(const struct perfring_cs_opts *o, struct outbuf *ob,
			  struct csd_stats *st)
{
	struct itr it;
	int ret = itr_open(&it, o->input, o->symdir);

	if (!ret && ob)
		put_info(ob, it.info);
	if (!ret)
		ret = itr_decode(&it, itr_listing_flags(o), ob);
	*st = it.st;
	itr_free(&it);
	return ret;
}
