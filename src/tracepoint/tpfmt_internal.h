/* SPDX-License-Identifier: MIT */
/*
 * What the files of the tracepoint printer share (tpfmt.h is its
 * interface): the compiled events, their expression and step lists, the
 * printer's state.
 *
 *   tpfmt.c          the TRACING_DATA blob read into libtraceevent and
 *                    our compiled events; tpfmt_new(), tpfmt_free(), fields
 *   tpfmt_compile.c  an event's print format compiled into steps
 *   tpfmt_print.c    a record printed by the steps (or libtraceevent)
 *   tpfmt_check.c    the format checks: what libtraceevent would misread
 */
#ifndef PERFRING_TRACEPOINT_TPFMT_INTERNAL_H
#define PERFRING_TRACEPOINT_TPFMT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <event-parse.h>
#include "tpfmt.h"

/* Fields ending past 64 KiB: a broken format, as a record is smaller (its
 * size is a u16).  Such an event would have every record padded to that
 * size and libtraceevent print all of it. */
#define TP_MAX_FIELD_END (1u << 16)

#define TP_MAX_ID 65536 /* common_type is a u16 */

/* Compiled events by id, in pages made on first use: a file names a few
 * ids, and a whole table would be 512 KiB to clear and scan per file. */
#define TP_ID_PAGE 256

/* Zeroes after a record handed to libtraceevent: strings end there, and
 * %pI6/%pU/%pISpc read up to a sockaddr_storage from a field's start. */
#define TP_PAD 256

/* ---- compiled formats ------------------------------------------------ */

enum en_kind {
	EN_CONST,
	EN_FIELD,
	EN_CAST,
	EN_TERN,
	EN_BIN,
	EN_DYNLEN,
	EN_FIELD_OP
};

enum en_op {
	OP_NOT, /* !r */
	OP_NE,
	OP_BNOT, /* ~r */
	OP_LOR,
	OP_OR,
	OP_LAND,
	OP_AND,
	OP_LT,
	OP_SHL,
	OP_LE,
	OP_GT,
	OP_SHR,
	OP_GE,
	OP_EQ,
	OP_SUB,
	OP_ADD,
	OP_DIV,
	OP_MOD,
	OP_MUL,
};

struct enode {
	uint8_t kind, op;
	uint16_t size; /* field bytes */
	uint32_t off; /* field offset */
	uint64_t k; /* constant, or cast mask */
	const struct enode *a, *b, *c;
};

enum sn_kind {
	SN_NONE,
	SN_LIT,
	SN_FIELD,
	SN_FLAGS,
	SN_SYMBOL,
	SN_DYNSTR,
	SN_TERN
};

struct flag_ent {
	long long v;
	const char *str;
	size_t len;
};

struct snode {
	uint8_t kind;
	bool relative; /* __rel_loc */
	uint32_t lit_len;
	uint16_t size; /* field bytes (SN_FIELD, SN_DYNSTR descriptor) */
	uint32_t off;
	const char *lit;
	const struct enode *val;
	const struct flag_ent *flags;
	uint32_t nflags;
	const char *delim;
	const struct snode *t, *f;
};

enum fop_kind { FOP_LIT, FOP_NUM, FOP_STR, FOP_NUM_FIELD, FOP_STR_FIELD };

struct fop {
	uint8_t kind;
	char conv; /* d i u x X o s */
	int8_t ls; /* -2 hh, -1 h, 0, 1 l, 2 ll */
	bool simple; /* no flags, width or precision */
	bool left; /* '-' (strings) */
	int width, prec; /* strings; prec -1: none */
	char spec[32]; /* the conversion, for snprintf */
	const char *lit;
	uint32_t lit_len;
	const char *pre; /* a literal printed first (merged) */
	uint32_t pre_len;
	const struct enode *num;
	const struct snode *str;
};

/* An array libtraceevent prints @len x @el bytes of, without checking. */
struct span_guard {
	const struct enode *len, *el; /* el NULL: bytes */
	uint32_t off; /* fixed field offset, or dynamic descriptor */
	uint16_t fsize; /* fixed field size, or descriptor size */
	bool dynamic, relative;
};

struct tp_ev {
	struct tep_event *ev;
	bool compiled;
	bool fast;
	bool unsafe; /* libtraceevent could divide by something unknown */
	const struct enode **divisors; /* checked before libtraceevent runs */
	uint32_t nr_divisors;
	struct span_guard *spans; /* __print_hex() and arrays: their length */
	uint32_t nr_spans;
	struct span_guard *cpumasks; /* __get_cpumask(): never empty */
	uint32_t nr_cpumasks;
	struct span_guard *dyns; /* every __data_loc/__rel_loc field */
	uint32_t nr_dyns;
	uint32_t min_size; /* bytes the fixed fields cover */
	struct fop *ops;
	uint32_t nr_ops;
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

struct tpfmt {
	struct tep_handle *tep;
	int long_size;
	bool swap; /* file of the other endianness: libtraceevent only */
	bool slow;
	int type_off, type_size; /* common_type */
	struct tp_ev **byid[TP_MAX_ID / TP_ID_PAGE];
	struct arena_chunk *arena;
	unsigned char *scratch; /* padded copy of a record */
	size_t scratch_len;
	struct trace_seq seq;
	bool seq_init;
	bool have_bprint; /* an ftrace bprint event went to libtraceevent */
	tpfmt_resolve_fn resolve;
	void *resolve_ctx;
};

/* ---- format checks --------------------------------------------------- */

/*
 * libtraceevent 1.7's format parser trusts the text it is given, and some
 * damaged formats make it crash.  Each check here refuses one shape that
 * did so in fuzzing (fuzz/fuzz_tpfmt.c; the inputs are kept as
 * fuzz/corpus/tpfmt/crash-*), and no more: every format of the running
 * kernel passes them all (test/test_script.c checks that).
 */
struct fmt_field {
	const char *name; /* in the text */
	size_t len;
	long size; /* "size:", -1 if absent */
};

struct fmt_view {
	const char *name; /* "name: " value */
	size_t name_len;
	const char *print; /* after "print fmt:" */
	struct fmt_field *fields;
	size_t nr_fields;
	char why[160];
};

uint64_t tp_read_num(const unsigned char *p, unsigned size);

/* dynamic_offset_field(): offset and length of a __data_loc field. */
void tp_dyn_field(const unsigned char *data, uint32_t size, uint32_t off,
		  unsigned fsize, bool relative, uint32_t *o_out,
		  uint32_t *l_out);

uint64_t tp_eval(const struct enode *n, const unsigned char *data,
		 uint32_t size);

uint32_t tp_event_min_size(struct tep_event *ev);

bool tp_cpumasks_ok(const struct tp_ev *te, const unsigned char *data,
		    uint32_t size);

bool tp_dyns_ok(const struct tp_ev *te, const unsigned char *data,
		uint32_t size);

/* Whether every array libtraceevent will print lies within @limit bytes
 * (the record, padded to its fixed fields). */
bool tp_spans_ok(const struct tp_ev *te, const unsigned char *data,
		 uint32_t size, uint32_t limit);

void tp_compile_event(struct tpfmt *t, struct tp_ev *te);

struct tp_ev *tp_lookup(struct tpfmt *t, const unsigned char *data,
			uint32_t size);

/* Returns 1 when the text may go to libtraceevent, 0 when not (v->why
 * says why), -ENOMEM. */
int tp_fmt_check(struct fmt_view *v, const char *s, size_t n);

/* Records of event @id are not printed (tp_lookup() finds this entry). */
int tp_leave_out_id(struct tpfmt *t, int id);

/*
 * Why libtraceevent cannot print @ev, as it parsed it, or NULL.
 *
 * An ftrace event named "bprint" is a binary printk to libtraceevent: it
 * prints it from the printk format its "fmt" field points to and the
 * words of its "buf" field, after its "ip", and without such a field it
 * hands a NULL format to strlen().  It looks the three fields up in the
 * first bprint event it prints and keeps them for every other one, whose
 * records it would then read with another event's offsets.  Where the
 * text says the name does not matter: this is libtraceevent's own verdict
 * (TEP_EVENT_FL_ISBPRINT), whatever the spelling.
 */
const char *tp_event_unprintable(struct tpfmt *t, struct tep_event *ev);

#endif
