// SPDX-License-Identifier: MIT
/*
 * A tracepoint record printed: by the event's compiled steps (numbers,
 * strings, flags and symbols evaluated against the record padded to its
 * format's size), or by libtraceevent for the events we do not compile.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "../common/log.h"
#include "tpfmt.h"
#include "tpfmt_internal.h"

uint64_t tp_read_num(const unsigned char *p, unsigned size)
{
	switch (size) {
	case 1:
		return p[0];
	case 2: {
		uint16_t v;

		memcpy(&v, p, 2);
		return v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, p, 4);
		return v;
	}
	case 8: {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	default:
		return 0;
	}
}

/* dynamic_offset_field(): offset and length of a __data_loc field. */
void tp_dyn_field(const unsigned char *data, uint32_t size, uint32_t off,
		  unsigned fsize, bool relative, uint32_t *o_out,
		  uint32_t *l_out)
{
	uint64_t v;
	uint32_t o, l;

	if ((uint64_t)off + fsize > size) {
		*o_out = 0;
		*l_out = 0;
		return;
	}
	v = tp_read_num(data + off, fsize);
	o = (uint32_t)(v & 0xffff);
	l = fsize == 2 ? size - o : (uint32_t)((v >> 16) & 0xffff);
	*o_out = o > size ? 0 : o;
	*l_out = (uint64_t)o + l > size ? 0 : l;
	if (relative)
		*o_out += off + fsize;
}

uint64_t tp_eval(const struct enode *n, const unsigned char *data,
		 uint32_t size)
{
	uint64_t l, r;
	uint32_t o, len;

	switch (n->kind) {
	case EN_CONST:
		return n->k;
	case EN_FIELD:
		if ((uint64_t)n->off + n->size > size)
			return 0;
		return tp_read_num(data + n->off, n->size);
	case EN_CAST:
		l = tp_eval(n->a, data, size);
		return n->k ? l & n->k : l;
	case EN_TERN:
		return tp_eval(n->a, data, size) ? tp_eval(n->b, data, size) :
						   tp_eval(n->c, data, size);
	case EN_DYNLEN:
		tp_dyn_field(data, size, n->off, n->size, n->k, &o, &len);
		return len;
	case EN_FIELD_OP:
		l = (uint64_t)n->off + n->size > size ?
			    0 :
			    tp_read_num(data + n->off, n->size);
		r = n->k;
		goto op;
	default:
		break;
	}
	l = tp_eval(n->a, data, size);
	r = tp_eval(n->b, data, size);
op:
	switch (n->op) {
	case OP_NOT:
		return !r;
	case OP_NE:
		return l != r;
	case OP_BNOT:
		return ~r;
	case OP_LOR:
		return l || r;
	case OP_OR:
		return l | r;
	case OP_LAND:
		return l && r;
	case OP_AND:
		return l & r;
	case OP_LT:
		return l < r;
	case OP_SHL:
		return l << (r & 63); /* what libtraceevent gets on x86 */
	case OP_LE:
		return l <= r;
	case OP_GT:
		return l > r;
	case OP_SHR:
		return l >> (r & 63);
	case OP_GE:
		return l >= r;
	case OP_EQ:
		return l == r;
	case OP_SUB:
		return l - r;
	case OP_ADD:
		return l + r;
	case OP_DIV:
		return r ? l / r : 0;
	case OP_MOD:
		return r ? l % r : 0;
	case OP_MUL:
		return l * r;
	default:
		return 0;
	}
}

/* ---- printing -------------------------------------------------------- */

static void put_str(struct outbuf *ob, const struct fop *op, const char *s,
		    size_t n)
{
	if (op->simple) {
		ob_write(ob, s, n);
		return;
	}
	if (op->prec >= 0 && n > (size_t)op->prec)
		n = (size_t)op->prec;
	ob_str_w(ob, s, n, op->width, op->left);
}

static void put_hex_ll(struct outbuf *ob, uint64_t v)
{
	ob_write(ob, "0x", 2);
	ob_x64(ob, v, 0);
}

static void print_snode(const struct snode *n, const struct fop *op,
			const unsigned char *data, uint32_t size,
			struct outbuf *ob)
{
	long long val;
	uint32_t o, l;
	bool printed = false;

	/* ?: first, then its literal arms, without an indirect jump (the
	 * arms vary from record to record and would defeat its prediction). */
	while (n->kind == SN_TERN)
		n = tp_eval(n->val, data, size) ? n->t : n->f;
	if (n->kind == SN_LIT) {
		put_str(ob, op, n->lit, n->lit_len);
		return;
	}
	switch (n->kind) {
	case SN_NONE:
		return;
	case SN_LIT:
		put_str(ob, op, n->lit, n->lit_len);
		return;
	case SN_FIELD:
		/* The bytes are there: the record was padded to min_size. */
		put_str(ob, op, (const char *)data + n->off,
			ob_strnlen((const char *)data + n->off, n->size));
		return;
	case SN_FLAGS:
		val = (long long)tp_eval(n->val, data, size);
		for (uint32_t i = 0; i < n->nflags; i++) {
			long long fv = n->flags[i].v;

			if (!val && fv < 0) {
				put_str(ob, op, n->flags[i].str,
					n->flags[i].len);
				break;
			}
			if (fv > 0 && (val & fv) == fv) {
				if (printed && n->delim)
					ob_puts(ob, n->delim);
				put_str(ob, op, n->flags[i].str,
					n->flags[i].len);
				printed = true;
				val &= ~fv;
			}
		}
		if (val) {
			if (printed && n->delim)
				ob_puts(ob, n->delim);
			put_hex_ll(ob, (uint64_t)val);
		}
		return;
	case SN_SYMBOL:
		val = (long long)tp_eval(n->val, data, size);
		for (uint32_t i = 0; i < n->nflags; i++) {
			if (val == n->flags[i].v) {
				put_str(ob, op, n->flags[i].str,
					n->flags[i].len);
				return;
			}
		}
		put_hex_ll(ob, (uint64_t)val);
		return;
	case SN_DYNSTR:
		tp_dyn_field(data, size, n->off, n->size, n->relative, &o, &l);
		if (!l || o >= size)
			return;
		put_str(ob, op, (const char *)data + o,
			strnlen((const char *)data + o, size - o));
		return;
	case SN_TERN:
		print_snode(tp_eval(n->val, data, size) ? n->t : n->f, op, data,
			    size, ob);
		return;
	default:
		return;
	}
}

/* A simple conversion (no flags, width or precision) of d i u x. */
__attribute__((always_inline)) static inline void
print_simple(const struct fop *op, uint64_t v, struct outbuf *ob)
{
	bool sign = op->conv == 'd' || op->conv == 'i';

	switch (op->ls) {
	case -2:
		v = sign ? (uint64_t)(int64_t)(signed char)v : (unsigned char)v;
		break;
	case -1:
		v = sign ? (uint64_t)(int64_t)(short)v : (unsigned short)v;
		break;
	case 0:
		v = sign ? (uint64_t)(int64_t)(int)v : (unsigned int)v;
		break;
	default:
		break;
	}
	if (sign)
		ob_s64(ob, (int64_t)v, 0);
	else if (op->conv == 'u')
		ob_u64(ob, v, 0, ' ');
	else
		ob_x64(ob, v, 0);
}

static void print_num(const struct fop *op, uint64_t v, struct outbuf *ob)
{
	char buf[256];
	int n;

	if (op->simple && op->conv != 'o' && op->conv != 'X') {
		print_simple(op, v, ob);
		return;
	}
	/* The printf libtraceevent does, with the argument type it passes. */
	switch (op->ls) {
	case -2:
		n = snprintf(buf, sizeof(buf), op->spec, (char)v);
		break;
	case -1:
		n = snprintf(buf, sizeof(buf), op->spec, (short)v);
		break;
	case 0:
		n = snprintf(buf, sizeof(buf), op->spec, (int)v);
		break;
	case 1:
		n = snprintf(buf, sizeof(buf), op->spec, (long)v);
		break;
	default:
		n = snprintf(buf, sizeof(buf), op->spec, (long long)v);
		break;
	}
	if (n > 0)
		ob_write(ob, buf,
			 (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

struct tp_ev *tp_lookup(struct tpfmt *t, const unsigned char *data,
			uint32_t size)
{
	uint64_t id;
	struct tp_ev *te, ***page;
	struct tep_event *ev;

	if (t->type_size <= 0 ||
	    (uint64_t)t->type_off + (uint64_t)t->type_size > size)
		return NULL;
	id = tp_read_num(data + t->type_off, (unsigned)t->type_size);
	if (id >= TP_MAX_ID)
		return NULL;
	page = &t->byid[id / TP_ID_PAGE];
	if (*page && (*page)[id % TP_ID_PAGE])
		return (*page)[id % TP_ID_PAGE];
	ev = tep_find_event(t->tep, (int)id);
	if (!ev)
		return NULL;
	if (!*page && !(*page = calloc(TP_ID_PAGE, sizeof(**page))))
		return NULL;
	te = calloc(1, sizeof(*te));
	if (!te)
		return NULL;
	te->ev = ev;
	tp_compile_event(t, te);
	(*page)[id % TP_ID_PAGE] = te;
	return te;
}

static void tp_print_slow(struct tpfmt *t, const unsigned char *data,
			  uint32_t size, int cpu, struct outbuf *ob)
{
	struct tep_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.cpu = cpu;
	rec.size = (int)size;
	rec.data = (void *)data;
	if (!t->seq_init) {
		trace_seq_init(&t->seq);
		t->seq_init = true;
	} else {
		trace_seq_reset(&t->seq);
	}
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	if (t->seq.buffer)
		ob_write(ob, t->seq.buffer, strnlen(t->seq.buffer, t->seq.len));
}

void tpfmt_print(struct tpfmt *t, const void *raw, uint32_t size, int cpu,
		 struct outbuf *ob)
{
	const unsigned char *data = raw;
	struct tp_ev *te;
	uint32_t need;

	if (!t || !raw)
		return;
	/* Read the type from a padded copy if the record is that short. */
	if ((uint64_t)t->type_off + (uint64_t)t->type_size > size)
		return;
	te = tp_lookup(t, data, size);
	if (!te || te->min_size == UINT32_MAX)
		return;
	need = te->min_size > size ? te->min_size : size;
	if ((size_t)need + TP_PAD > t->scratch_len)
		return; /* records are < 64 KiB: a damaged size */
	if (te->fast && !t->slow) {
		if (need > size) {
			memcpy(t->scratch, data, size);
			memset(t->scratch + size, 0, need - size);
			data = t->scratch;
		}
		for (uint32_t i = 0; i < te->nr_ops; i++) {
			const struct fop *op = &te->ops[i];

			if (op->pre_len)
				ob_write(ob, op->pre, op->pre_len);
			switch (op->kind) {
			case FOP_LIT:
				ob_write(ob, op->lit, op->lit_len);
				break;
			case FOP_NUM_FIELD: {
				const struct enode *n = op->num;
				uint64_t v = 0;

				if ((uint64_t)n->off + n->size <= size)
					v = tp_read_num(data + n->off, n->size);
				print_simple(op, v, ob);
				break;
			}
			case FOP_STR_FIELD: {
				const struct snode *n = op->str;
				const char *f = (const char *)data + n->off;

				ob_write(ob, f, ob_strnlen(f, n->size));
				break;
			}
			case FOP_NUM:
				print_num(op, tp_eval(op->num, data, size), ob);
				break;
			default:
				print_snode(op->str, op, data, size, ob);
				break;
			}
		}
		return;
	}
	/* libtraceevent reads fixed fields without checks and strings up to
	 * a NUL: give it a copy with room and a terminator.  It is told the
	 * padded size: from a record shorter than its fixed fields it would
	 * compute "size - offset" for a field of size 0 (char buf[]) and
	 * malloc and copy 4 GB. */
	memcpy(t->scratch, data, size);
	memset(t->scratch + size, 0, need - size + TP_PAD);
	if (te->unsafe)
		return;
	for (uint32_t i = 0; i < te->nr_divisors; i++)
		if (!tp_eval(te->divisors[i], t->scratch, need))
			return; /* libtraceevent would divide by zero */
	if (!tp_spans_ok(te, t->scratch, need, need))
		return; /* it would print bytes past the record */
	if (!tp_cpumasks_ok(te, t->scratch, need))
		return;
	if (!tp_dyns_ok(te, t->scratch, need))
		return; /* a dynamic field points past the record */
	tp_print_slow(t, t->scratch, need, cpu, ob);
}

static char *tep_resolver(void *priv, unsigned long long *addrp, char **modp)
{
	struct tpfmt *t = priv;
	uint64_t a = *addrp;
	const char *mod = NULL, *name = t->resolve(t->resolve_ctx, &a, &mod);

	if (!name)
		return NULL;
	*addrp = a;
	*modp = (char *)mod;
	return (char *)name;
}

void tpfmt_set_resolver(struct tpfmt *t, tpfmt_resolve_fn fn, void *ctx)
{
	if (!t)
		return;
	t->resolve = fn;
	t->resolve_ctx = ctx;
	if (fn)
		tep_set_function_resolver(t->tep, tep_resolver, t);
	else
		tep_reset_function_resolver(t->tep);
}

struct tep_event *tpfmt_event(struct tpfmt *t, int id)
{
	return t ? tep_find_event(t->tep, id) : NULL;
}

void tpfmt_set_slow(struct tpfmt *t, bool slow)
{
	if (t)
		t->slow = slow;
}
