// SPDX-License-Identifier: MIT
/*
 * CoreSight decoding with OpenCSD's C API: see cs_decode.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "cs_decode.h"

/*
 * OpenCSD 1.3.3's C API never frees the element output object that
 * ocsd_dt_set_gen_elem_outfn() allocates (32 bytes per decode tree): in
 * sanitizer builds that allocation is left out of leak checking.
 */
#if defined(__SANITIZE_ADDRESS__)
#define CSD_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CSD_LSAN 1
#endif
#endif
#ifdef CSD_LSAN
#include <sanitizer/lsan_interface.h>
#else
static inline void __lsan_disable(void)
{
}
static inline void __lsan_enable(void)
{
}
#endif

/*
 * TPIU streams: OpenCSD 1.3.3's deformatter reads up to 3 bytes past the
 * block it is given (4-byte FSYNC checks at 2-byte steps), and given a
 * block of under 4 bytes before its first FSYNC it scans on past it until
 * it meets one.  Each block is copied to a staging buffer and followed by
 * an FSYNC, where such a scan stops (a pattern no read that starts inside
 * the block can match: its fourth byte is 0xff, an FSYNC's 0x7f).
 */
#define CSD_STAGE (64u << 10)
static const uint8_t stage_tail[8] = { 0xff, 0xff, 0xff, 0x7f };

/* One decoder: what its callbacks need to know. */
struct csd_src {
	struct csd *d;
	ocsd_trace_protocol_t proto;
	uint8_t id;
};

struct csd {
	dcd_tree_handle_t tree;
	unsigned flags;
	bool formatted;
	uint32_t align; /* bytes fed in whole units: frame, word, halfword */
	bool has_mem; /* a memory image or callback was given */
	bool reset_due; /* a data error waits for its reset (csd_feed) */
	bool halted; /* CSD_HALT_ON_ERROR: a data error ended the decode */
	struct outbuf *ob;
	csd_elem_fn elem_fn;
	void *elem_ctx;
	int cb_err; /* first error of a callback, stops the feed */
	bool elem_attached; /* decoders see the element output */
	bool lib_printer; /* OpenCSD prints some packets (log callback) */
	uint8_t carry[16]; /* formatted: the start of a split unit */
	uint8_t *stage; /* TPIU: blocks as OpenCSD may read them (process) */
	uint32_t ncarry;
	uint64_t index; /* trace index of the next byte fed */
	struct csd_src *src[128]; /* by trace ID */
	struct csd_stats st;
	char str[2048]; /* packet / element strings */
};

/* OpenCSD's logger is process-wide: its messages go to the tree fed last. */
static struct csd *log_target;

static void csd_log_cb(const void *ctx, const char *msg, const int len)
{
	struct csd *d = log_target;
	int n = len;

	(void)ctx;
	if (!d)
		return;
	/* Lines of OpenCSD's own packet printer (protocols whose packets the
	 * C API does not hand out: ETE) belong to the listing. */
	if (d->lib_printer &&
	    (!strncmp(msg, "Idx:", 4) || !strncmp(msg, "ID:", 3))) {
		if (!strncmp(msg, "Idx:", 4))
			d->st.packets++;
		if (d->ob) {
			ob_write(d->ob, msg, (size_t)len);
			ob_line_done(d->ob);
		}
		return;
	}
	d->st.errors++;
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		n--;
	/* Bad trace can produce an error a packet: tell about the first few. */
	if (d->st.errors <= 10)
		pr_warn("cs decode: %.*s", n, msg);
	else if (d->st.errors == 11)
		pr_warn("cs decode: more errors (counted in the summary)");
}

static void put_idx_id(struct outbuf *ob, uint64_t idx, uint8_t id)
{
	ob_puts(ob, "Idx:");
	ob_u64(ob, idx, 0, ' ');
	ob_puts(ob, "; ID:");
	ob_x64(ob, id, 0);
}

static void put_op_line(struct outbuf *ob, ocsd_datapath_op_t op, uint8_t id)
{
	ob_puts(ob, "ID:");
	ob_x64(ob, id, 0);
	switch (op) {
	case OCSD_OP_EOT:
		ob_puts(ob, "\tEND OF TRACE DATA\n");
		break;
	case OCSD_OP_FLUSH:
		ob_puts(ob, "\tFLUSH operation on trace decode path\n");
		break;
	case OCSD_OP_RESET:
		ob_puts(ob, "\tRESET operation on trace decode path\n");
		break;
	default:
		ob_puts(ob, "\tunknown operation on trace decode path\n");
		break;
	}
	ob_line_done(ob);
}

static void put_pkt_str(struct csd_src *s, const void *pkt)
{
	struct csd *d = s->d;

	d->str[0] = 0;
	if (ocsd_pkt_str(s->proto, pkt, d->str, (int)sizeof(d->str)) != OCSD_OK)
		snprintf(d->str, sizeof(d->str), "(packet of protocol %d)",
			 (int)s->proto);
	ob_puts(d->ob, d->str);
	ob_putc(d->ob, '\n');
	ob_line_done(d->ob);
}

/* Packet processor output when only packets are listed. */
static ocsd_datapath_resp_t pkt_sink(const void *ctx, ocsd_datapath_op_t op,
				     ocsd_trc_index_t idx, const void *pkt)
{
	struct csd_src *s = (struct csd_src *)ctx;
	struct csd *d = s->d;

	if (op == OCSD_OP_DATA) {
		d->st.packets++;
		if (d->ob) {
			put_idx_id(d->ob, idx, s->id);
			ob_puts(d->ob, ";\t");
			put_pkt_str(s, pkt);
		}
	} else if (d->ob) {
		put_op_line(d->ob, op, s->id);
	}
	if (d->ob && d->ob->err && !d->cb_err)
		d->cb_err = d->ob->err;
	return OCSD_RESP_CONT;
}

/* Packet monitor when decoding: the packet with its raw bytes. */
static void pkt_mon(const void *ctx, ocsd_datapath_op_t op,
		    ocsd_trc_index_t idx, const void *pkt, uint32_t size,
		    const uint8_t *data)
{
	static const char hex[] = "0123456789abcdef";
	struct csd_src *s = (struct csd_src *)ctx;
	struct csd *d = s->d;
	struct outbuf *ob = d->ob;

	if (op != OCSD_OP_DATA) {
		if (ob)
			put_op_line(ob, op, s->id);
		return;
	}
	d->st.packets++;
	if (!ob)
		return;
	put_idx_id(ob, idx, s->id);
	ob_puts(ob, "; [");
	for (uint32_t i = 0; data && i < size; i++) {
		char b[5] = { '0', 'x', hex[data[i] >> 4], hex[data[i] & 15],
			      ' ' };

		ob_write(ob, b, 5);
		ob_room(ob, 8);
	}
	ob_puts(ob, "];\t");
	put_pkt_str(s, pkt);
	if (ob->err && !d->cb_err)
		d->cb_err = ob->err;
}

/*
 * The element as OpenCSD's printer may safely index its name tables with:
 * its decoders can hand out fields they never set (the ETMv3 decoder's PE
 * context ISA on bad trace), which its own toString() then uses as array
 * indexes.  Valid elements are returned as they are (same text).
 */
static const ocsd_generic_trace_elem *
elem_for_str(const ocsd_generic_trace_elem *el, ocsd_generic_trace_elem *safe)
{
	bool isa_bad = (unsigned)el->isa > (unsigned)ocsd_isa_unknown;
	bool on_bad = el->elem_type == OCSD_GEN_TRC_ELEM_TRACE_ON &&
		      (unsigned)el->trace_on_reason > TRACE_ON_EX_DEBUG;
	bool mark_bad = el->elem_type == OCSD_GEN_TRC_ELEM_SYNC_MARKER &&
			el->sync_marker.type != ELEM_MARKER_TS;
	bool sw_bad = el->elem_type == OCSD_GEN_TRC_ELEM_SWTRACE &&
		      el->sw_trace_info.swt_payload_pkt_bitsize &&
		      !el->ptr_extended_data;

	if (!isa_bad && !on_bad && !mark_bad && !sw_bad)
		return el;
	*safe = *el;
	if (isa_bad)
		safe->isa = ocsd_isa_unknown;
	if (on_bad)
		safe->trace_on_reason = TRACE_ON_NORMAL;
	if (mark_bad)
		safe->sync_marker.type = ELEM_MARKER_TS;
	if (sw_bad)
		safe->sw_trace_info.swt_payload_pkt_bitsize = 0;
	return safe;
}

static ocsd_datapath_resp_t elem_in(const void *ctx, ocsd_trc_index_t idx,
				    uint8_t id,
				    const ocsd_generic_trace_elem *el)
{
	struct csd *d = (struct csd *)ctx;

	d->st.elements++;
	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		d->st.ranges++;
		d->st.instructions += el->num_instr_range;
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		d->st.nosync++;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		d->st.nacc++;
		break;
	default:
		break;
	}
	if (d->ob && (d->flags & CSD_PRINT_ELEMS)) {
		struct outbuf *ob = d->ob;
		ocsd_generic_trace_elem safe;

		put_idx_id(ob, idx, id);
		ob_puts(ob, "; ");
		d->str[0] = 0;
		if (ocsd_gen_elem_str(elem_for_str(el, &safe), d->str,
				      (int)sizeof(d->str)) != OCSD_OK)
			snprintf(d->str, sizeof(d->str), "(element type %d)",
				 (int)el->elem_type);
		ob_puts(ob, d->str);
		ob_putc(ob, '\n');
		ob_line_done(ob);
		if (ob->err && !d->cb_err)
			d->cb_err = ob->err;
	}
	if (d->elem_fn && !d->cb_err) {
		int ret = d->elem_fn(d->elem_ctx, idx, id, el);

		if (ret < 0)
			d->cb_err = ret;
	}
	/* A callback error stops the tree; csd_feed() returns it. */
	return d->cb_err ? OCSD_RESP_FATAL_SYS_ERR : OCSD_RESP_CONT;
}

struct csd *csd_new(bool formatted, uint32_t frame_flags, unsigned flags,
		    struct outbuf *ob)
{
	static bool log_init;
	struct csd *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (!log_init) {
		ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1);
		ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL);
		log_init = true;
	}
	d->tree = ocsd_create_dcd_tree(
		formatted ? OCSD_TRC_SRC_FRAME_FORMATTED : OCSD_TRC_SRC_SINGLE,
		formatted ? frame_flags : 0);
	if (d->tree == C_API_INVALID_TREE_HANDLE) {
		pr_err("cs decode: OpenCSD could not create a decode tree");
		free(d);
		return NULL;
	}
	ocsd_def_errlog_set_strprint_cb(d->tree, d, csd_log_cb);
	d->formatted = formatted;
	/* The deformatter's input unit: memory-aligned frames take whole
	 * 16-byte frames; TPIU streams 2-byte (HSYNCs) or 4-byte (FSYNCs)
	 * units; a raw stream any byte count. */
	if (!formatted)
		d->align = 1;
	else if (frame_flags & OCSD_DFRMTR_FRAME_MEM_ALIGN)
		d->align = 16;
	else if (frame_flags & OCSD_DFRMTR_HAS_HSYNCS)
		d->align = 2;
	else if (frame_flags & OCSD_DFRMTR_HAS_FSYNCS)
		d->align = 4;
	else
		d->align = 16;
	if (d->align < 16) {
		d->stage = malloc(CSD_STAGE + sizeof(stage_tail));
		if (!d->stage) {
			csd_free(d);
			return NULL;
		}
	}
	d->flags = flags;
	d->ob = ob;
	return d;
}

void csd_free(struct csd *d)
{
	if (!d)
		return;
	if (log_target == d)
		log_target = NULL;
	ocsd_destroy_dcd_tree(d->tree);
	for (int i = 0; i < 128; i++)
		free(d->src[i]);
	free(d->stage);
	free(d);
}

void csd_set_elem_fn(struct csd *d, csd_elem_fn fn, void *ctx)
{
	d->elem_fn = fn;
	d->elem_ctx = ctx;
}

static int add_decoder(struct csd *d, const char *name,
		       ocsd_trace_protocol_t proto, uint32_t id,
		       const void *cfg)
{
	struct csd_src *s;
	unsigned char csid = 0;
	ocsd_err_t err;
	int flags;

	id &= 0x7f;
	if (d->src[id]) {
		pr_err("cs decode: two %s sources with trace ID 0x%x", name,
		       id);
		return -EEXIST;
	}
	if (!d->formatted && d->st.decoders) {
		pr_err("cs decode: a raw (unformatted) trace has one source; "
		       "trace ID 0x%x ignored",
		       id);
		return -EEXIST;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->d = d;
	s->proto = proto;
	flags = (d->flags & CSD_DECODE) ? OCSD_CREATE_FLG_FULL_DECODER :
					  OCSD_CREATE_FLG_PACKET_PROC;
	log_target = d;
	err = ocsd_dt_create_decoder(d->tree, name, flags, cfg, &csid);
	if (err != OCSD_OK) {
		char msg[128];

		ocsd_err_str(err, msg, sizeof(msg));
		pr_err("cs decode: OpenCSD refuses the %s configuration of "
		       "trace ID 0x%x: %s",
		       name, id, msg);
		free(s);
		return -EINVAL;
	}
	/* Packet lines name the tree slot, as trc_pkt_lister prints them: the
	 * trace ID, or 0 for the one source of a raw (unformatted) tree. */
	s->id = d->formatted ? csid : 0;
	d->src[csid & 0x7f] = s;
	d->st.decoders++;
	if (d->flags & CSD_DECODE) {
		/* The element output is attached (to every decoder) when the
		 * first data comes: OpenCSD allocates it on each call. */
		d->elem_attached = false;
		if (d->flags & (CSD_PRINT_PKTS | CSD_PRINT_RAW_PKTS))
			err = ocsd_dt_attach_packet_callback(
				d->tree, csid, OCSD_C_API_CB_PKT_MON,
				(void *)pkt_mon, s);
	} else {
		err = ocsd_dt_attach_packet_callback(d->tree, csid,
						     OCSD_C_API_CB_PKT_SINK,
						     (void *)pkt_sink, s);
	}
	if (err == OCSD_ERR_NO_PROTOCOL && d->ob) {
		/* OpenCSD 1.3.3's C API has no packet callback for ETE: its
		 * own printer (same line format) writes through the log. */
		if (ocsd_dt_set_pkt_protocol_printer(
			    d->tree, csid, (d->flags & CSD_DECODE) ? 1 : 0) ==
		    OCSD_OK)
			d->lib_printer = true;
	}
	return 0;
}

int csd_add_etmv4(struct csd *d, const ocsd_etmv4_cfg *cfg)
{
	return add_decoder(d, OCSD_BUILTIN_DCD_ETMV4I, OCSD_PROTOCOL_ETMV4I,
			   cfg->reg_traceidr, cfg);
}

int csd_add_ete(struct csd *d, const ocsd_ete_cfg *cfg)
{
	return add_decoder(d, OCSD_BUILTIN_DCD_ETE, OCSD_PROTOCOL_ETE,
			   cfg->reg_traceidr, cfg);
}

int csd_add_etmv3(struct csd *d, const ocsd_etmv3_cfg *cfg)
{
	return add_decoder(d, OCSD_BUILTIN_DCD_ETMV3, OCSD_PROTOCOL_ETMV3,
			   cfg->reg_trc_id, cfg);
}

int csd_add_ptm(struct csd *d, const ocsd_ptm_cfg *cfg)
{
	return add_decoder(d, OCSD_BUILTIN_DCD_PTM, OCSD_PROTOCOL_PTM,
			   cfg->reg_trc_id, cfg);
}

int csd_add_stm(struct csd *d, const ocsd_stm_cfg *cfg)
{
	return add_decoder(d, OCSD_BUILTIN_DCD_STM, OCSD_PROTOCOL_STM,
			   cfg->reg_tcsr >> 16, cfg);
}

int csd_add_mem(struct csd *d, uint64_t addr, const void *p, size_t len,
		ocsd_mem_space_acc_t space)
{
	ocsd_err_t err;

	if (!len || len > UINT32_MAX || addr + len - 1 < addr) {
		pr_err("cs decode: memory image of %zu bytes at 0x%llx does "
		       "not fit the address space",
		       len, (unsigned long long)addr);
		return -EINVAL;
	}
	err = ocsd_dt_add_buffer_mem_acc(d->tree, addr, space, p,
					 (uint32_t)len);
	if (err != OCSD_OK) {
		char msg[128];

		ocsd_err_str(err, msg, sizeof(msg));
		pr_warn("cs decode: memory image at 0x%llx (%zu bytes) not "
			"added: %s",
			(unsigned long long)addr, len, msg);
		return -EINVAL;
	}
	d->has_mem = true;
	return 0;
}

int csd_add_mem_cb(struct csd *d, uint64_t start, uint64_t end,
		   Fn_MemAccID_CB fn, void *ctx)
{
	if (ocsd_dt_add_callback_trcid_mem_acc(d->tree, start, end,
					       OCSD_MEM_SPACE_ANY, fn,
					       ctx) != OCSD_OK)
		return -EINVAL;
	d->has_mem = true;
	return 0;
}

static uint32_t no_mem(const void *ctx, const ocsd_vaddr_t addr,
		       const ocsd_mem_space_acc_t space, const uint32_t len,
		       uint8_t *buf)
{
	(void)ctx;
	(void)addr;
	(void)space;
	(void)len;
	(void)buf;
	return 0;
}

static void attach_elem(struct csd *d)
{
	if ((d->flags & CSD_DECODE) && !d->elem_attached) {
		__lsan_disable();
		ocsd_dt_set_gen_elem_outfn(d->tree, elem_in, d);
		__lsan_enable();
		d->elem_attached = true;
	}
	/*
	 * Decoding without any memory image: OpenCSD's decoders then fail
	 * (OCSD_ERR_NOT_INIT, a fatal data path error) at the first address,
	 * where trc_pkt_lister, whose tree always has a memory map, lists
	 * the code as inaccessible (ADDR_NACC) and goes on.  An accessor
	 * that has no bytes gives the same.
	 */
	if ((d->flags & CSD_DECODE) && !d->has_mem) {
		if (ocsd_dt_add_callback_mem_acc(d->tree, 0, ~(ocsd_vaddr_t)0,
						 OCSD_MEM_SPACE_ANY, no_mem,
						 NULL) == OCSD_OK)
			d->has_mem = true;
	}
}

/* The reset of a data error, once data follows it (see process()). */
static int reset_if_due(struct csd *d)
{
	uint32_t used = 0;

	if (!d->reset_due)
		return 0;
	d->reset_due = false;
	ocsd_dt_process_data(d->tree, OCSD_OP_RESET, 0, 0, NULL, &used);
	return d->cb_err;
}

static int op_all(struct csd *d, ocsd_datapath_op_t op)
{
	uint32_t used = 0;
	ocsd_datapath_resp_t r;

	log_target = d;
	attach_elem(d);
	r = ocsd_dt_process_data(d->tree, op, 0, 0, NULL, &used);
	if (d->cb_err)
		return d->cb_err;
	if (OCSD_DATA_RESP_IS_FATAL(r) && !(d->flags & CSD_HALT_ON_ERROR)) {
		d->st.resyncs++;
		ocsd_dt_process_data(d->tree, OCSD_OP_RESET, 0, 0, NULL, &used);
	}
	return 0;
}

/* Feeds @len bytes (a whole number of d->align units) at d->index. */
static int process_block(struct csd *d, const uint8_t *p, size_t len)
{
	int ret = len ? reset_if_due(d) : 0;

	while (len && !ret && !d->halted) {
		uint32_t chunk = len > (1u << 30) ? (1u << 30) : (uint32_t)len;
		uint32_t used = 0, dummy = 0;
		ocsd_datapath_resp_t r;

		r = ocsd_dt_process_data(d->tree, OCSD_OP_DATA, d->index, chunk,
					 p, &used);
		if (d->cb_err)
			return d->cb_err;
		if (OCSD_DATA_RESP_IS_WAIT(r)) {
			/* Our callbacks never wait; flush to be safe. */
			op_all(d, OCSD_OP_FLUSH);
		} else if (OCSD_DATA_RESP_IS_FATAL(r)) {
			d->st.resyncs++;
			if (d->flags & CSD_HALT_ON_ERROR) {
				/* trc_pkt_lister's way: the decode ends here,
				 * without a reset or an end of trace. */
				pr_warn("cs decode: trace data error at index "
					"%llu; decoding stopped",
					(unsigned long long)(d->index + used));
				d->halted = true;
			} else if (d->st.resyncs <= 10) {
				pr_warn("cs decode: trace data error at index "
					"%llu; decoders reset, resyncing",
					(unsigned long long)(d->index + used));
			}
			/*
			 * Bad data: every decoder is reset and decoding goes
			 * on after the unit it stopped in (the byte of a raw
			 * stream, the frame of memory-aligned frames); the
			 * decoders resync at the next sync packet (NO_SYNC).
			 * With the error on the last byte fed, the reset waits
			 * for more data: at the end of the trace nothing is
			 * left to resync on, and the listing ends as
			 * trc_pkt_lister's does (no reset, no end of trace).
			 */
			if (!d->halted && used >= chunk) {
				d->reset_due = true;
			} else if (!d->halted) {
				ocsd_dt_process_data(d->tree, OCSD_OP_RESET, 0,
						     0, NULL, &dummy);
				if (d->cb_err)
					return d->cb_err;
				used = (used + d->align) & ~(d->align - 1);
			}
		}
		if (used > chunk)
			used = chunk;
		p += used;
		len -= used;
		d->index += used;
		d->st.bytes += used;
	}
	return ret;
}

static int process(struct csd *d, const uint8_t *p, size_t len)
{
	int ret = 0;

	if (!d->stage)
		return process_block(d, p, len);
	while (len && !ret && !d->halted) {
		size_t n = len > CSD_STAGE ? CSD_STAGE : len;

		memcpy(d->stage, p, n);
		memcpy(d->stage + n, stage_tail, sizeof(stage_tail));
		ret = process_block(d, d->stage, n);
		p += n;
		len -= n;
	}
	return ret;
}

int csd_feed(struct csd *d, const uint8_t *p, size_t len)
{
	size_t whole;
	uint32_t a = d->align;
	int ret;

	log_target = d;
	attach_elem(d);
	if (d->halted)
		return 0;
	if (a == 1)
		return process(d, p, len);
	/*
	 * OpenCSD's deformatter takes whole units (16-byte memory-aligned
	 * frames, TPIU words or halfwords); a unit split between two calls
	 * waits in carry[].
	 */
	if (d->ncarry) {
		size_t k = a - d->ncarry < len ? a - d->ncarry : len;

		memcpy(d->carry + d->ncarry, p, k);
		d->ncarry += (uint32_t)k;
		p += k;
		len -= k;
		if (d->ncarry < a)
			return 0;
		d->ncarry = 0;
		ret = process(d, d->carry, a);
		if (ret)
			return ret;
	}
	whole = len & ~(size_t)(a - 1);
	ret = process(d, p, whole);
	if (ret)
		return ret;
	if (d->halted)
		return 0;
	memcpy(d->carry, p + whole, len - whole);
	d->ncarry = (uint32_t)(len - whole);
	return 0;
}

int csd_eot(struct csd *d)
{
	if (d->ncarry) {
		pr_warn("cs decode: trace ends inside a %s: %u bytes ignored",
			d->align == 16 ? "frame" : "TPIU unit", d->ncarry);
		d->ncarry = 0;
	}
	if (d->halted || d->reset_due) {
		/* The trace ended in a data error: no end of trace. */
		d->reset_due = false;
		return 0;
	}
	return op_all(d, OCSD_OP_EOT);
}

int csd_reset(struct csd *d)
{
	uint32_t used = 0;

	log_target = d;
	attach_elem(d);
	d->ncarry = 0;
	d->reset_due = false;
	d->halted = false;
	ocsd_dt_process_data(d->tree, OCSD_OP_RESET, 0, 0, NULL, &used);
	return d->cb_err;
}

const struct csd_stats *csd_stats(const struct csd *d)
{
	return &d->st;
}

/* Known core names (OpenCSD's own table, as its snapshot reader uses). */
static const struct {
	const char *name;
	ocsd_arch_version_t arch;
	ocsd_core_profile_t prof;
} cores[] = {
	{ "Cortex-A78", ARCH_V8, profile_CortexA },
	{ "Cortex-A77", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A76", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A75", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A73", ARCH_V8, profile_CortexA },
	{ "Cortex-A72", ARCH_V8, profile_CortexA },
	{ "Cortex-A65", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A57", ARCH_V8, profile_CortexA },
	{ "Cortex-A55", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A53", ARCH_V8, profile_CortexA },
	{ "Cortex-A35", ARCH_V8, profile_CortexA },
	{ "Cortex-A32", ARCH_V8, profile_CortexA },
	{ "Cortex-A17", ARCH_V7, profile_CortexA },
	{ "Cortex-A15", ARCH_V7, profile_CortexA },
	{ "Cortex-A12", ARCH_V7, profile_CortexA },
	{ "Cortex-A9", ARCH_V7, profile_CortexA },
	{ "Cortex-A8", ARCH_V7, profile_CortexA },
	{ "Cortex-A7", ARCH_V7, profile_CortexA },
	{ "Cortex-A5", ARCH_V7, profile_CortexA },
	{ "Cortex-R52", ARCH_V8, profile_CortexR },
	{ "Cortex-R8", ARCH_V7, profile_CortexR },
	{ "Cortex-R7", ARCH_V7, profile_CortexR },
	{ "Cortex-R5", ARCH_V7, profile_CortexR },
	{ "Cortex-R4", ARCH_V7, profile_CortexR },
	{ "Cortex-M33", ARCH_V8, profile_CortexM },
	{ "Cortex-M23", ARCH_V8, profile_CortexM },
	{ "Cortex-M0", ARCH_V7, profile_CortexM },
	{ "Cortex-M0+", ARCH_V7, profile_CortexM },
	{ "Cortex-M3", ARCH_V7, profile_CortexM },
	{ "Cortex-M4", ARCH_V7, profile_CortexM },
};

static ocsd_core_profile_t profile_letter(char c)
{
	switch (c) {
	case 'A':
		return profile_CortexA;
	case 'R':
		return profile_CortexR;
	case 'M':
		return profile_CortexM;
	default:
		return profile_Unknown;
	}
}

bool csd_core_profile(const char *name, ocsd_arch_version_t *arch,
		      ocsd_core_profile_t *prof)
{
	for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		if (!strcmp(name, cores[i].name)) {
			*arch = cores[i].arch;
			*prof = cores[i].prof;
			return true;
		}
	}
	/* ARMvM[.m]-P */
	if (!strncmp(name, "ARMv", 4) && name[4] >= '0' && name[4] <= '9') {
		int maj = name[4] - '0', min = 0;
		const char *q = name + 5;

		if (*q == '.') {
			if (q[1] < '0' || q[1] > '9')
				return false;
			min = q[1] - '0';
			q += 2;
		}
		if (*q != '-' || profile_letter(q[1]) == profile_Unknown)
			return false;
		if (maj == 7)
			*arch = ARCH_V7;
		else if (maj == 8 && min < 3)
			*arch = ARCH_V8;
		else if (maj == 8 && min == 3)
			*arch = ARCH_V8r3;
		else if (maj >= 8)
			*arch = ARCH_AA64;
		else
			return false;
		*prof = profile_letter(q[1]);
		return true;
	}
	/* ARM-AA64[-P] */
	if (!strncmp(name, "ARM-aa64", 8) || !strncmp(name, "ARM-AA64", 8)) {
		*arch = ARCH_AA64;
		*prof = profile_CortexA;
		if (name[8] == '-' && (name[9] == 'R' || name[9] == 'M'))
			*prof = profile_letter(name[9]);
		return true;
	}
	return false;
}
