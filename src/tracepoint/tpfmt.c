// SPDX-License-Identifier: MIT
/*
 * Tracepoint payloads as text.
 *
 * The TRACING_DATA blob (layout in src/format/tracing_data.c) is fed to
 * libtraceevent the way perf's trace-event-read.c feeds it: header_page,
 * the ftrace and event formats, kallsyms, printk formats, saved cmdlines.
 *
 * Printing: perf script prints tep_print_event(.., "%s", TEP_PRINT_INFO).
 * libtraceevent evaluates the print format's argument tree for every
 * record and formats each conversion through vsnprintf into a temporary
 * trace_seq (a malloc per string argument), which is most of the cost of
 * a tracepoint line.  So each event's format is compiled once, following
 * libtraceevent's own rules (parse_args()/parse_arg_format() for the
 * format string, eval_num_arg() for numbers, print_str_arg() for strings,
 * print_arg_number() for the casts), into a list of literal, number and
 * string steps printed by hand.  Formats using anything else (pointers
 * %p, __print_hex, arrays, bitmasks, functions, bprint) and files of the
 * other endianness are printed by libtraceevent.  Both read a copy padded
 * with zeroes when the record is shorter than the format says, so a short
 * or damaged record never makes either read past it.
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

static void *arena_alloc(struct tpfmt *t, size_t n)
{
	struct arena_chunk *c = t->arena;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = t->arena;
		c->used = 0;
		c->cap = cap;
		t->arena = c;
	}
	c->used += n;
	memset(c->mem + c->used - n, 0, n);
	return c->mem + c->used - n;
}

/* eval_type_str() with pointer = 0, as a mask (0: none). */
static uint64_t cast_mask(const char *type)
{
	size_t len = strlen(type);

	if (len < 2 || type[len - 1] == '*' || !strncmp(type, "struct", 6))
		return 0;
	if (!strcmp(type, "u8") || !strcmp(type, "s8"))
		return 0xff;
	if (!strcmp(type, "u16") || !strcmp(type, "s16"))
		return 0xffff;
	if (!strcmp(type, "u32") || !strcmp(type, "s32"))
		return 0xffffffff;
	if (!strncmp(type, "unsigned ", 9))
		type += 9;
	if (!strcmp(type, "char"))
		return 0xff;
	if (!strcmp(type, "short"))
		return 0xffff;
	if (!strcmp(type, "int"))
		return 0xffffffff;
	return 0;
}

static struct tep_format_field *
find_field(struct tep_event *ev, struct tep_format_field *f, const char *name)
{
	if (f)
		return f;
	return name ? tep_find_any_field(ev, name) : NULL;
}

static const struct enode *compile_num(struct tpfmt *t, struct tep_event *ev,
				       struct tep_print_arg *arg);
static uint64_t eval(const struct enode *n, const unsigned char *data,
		     uint32_t size);

/* Constant subtrees (the masks formats spell out) become constants. */
static const struct enode *fold(struct enode *n)
{
	bool c;

	if (!n)
		return NULL;
	switch (n->kind) {
	case EN_CAST:
		c = n->a->kind == EN_CONST;
		break;
	case EN_TERN:
		c = n->a->kind == EN_CONST && n->b->kind == EN_CONST &&
		    n->c->kind == EN_CONST;
		break;
	case EN_BIN:
		c = n->a->kind == EN_CONST && n->b->kind == EN_CONST;
		break;
	default:
		return n;
	}
	if (c) {
		n->k = eval(n, NULL, 0);
		n->kind = EN_CONST;
		n->a = n->b = n->c = NULL;
	} else if (n->kind == EN_BIN && n->a->kind == EN_FIELD &&
		   n->b->kind == EN_CONST) {
		/* field OP constant: one step (REC->state & MASK). */
		n->kind = EN_FIELD_OP;
		n->off = n->a->off;
		n->size = n->a->size;
		n->k = n->b->k;
		n->a = n->b = NULL;
	}
	return n;
}

static struct enode *new_enode(struct tpfmt *t, uint8_t kind)
{
	struct enode *n = arena_alloc(t, sizeof(*n));

	if (n)
		n->kind = kind;
	return n;
}

static int binop_code(const char *op)
{
	switch (op[0]) {
	case '!':
		return op[1] == 0 ? OP_NOT : op[1] == '=' ? OP_NE : -1;
	case '~':
		return OP_BNOT;
	case '|':
		return op[1] ? OP_LOR : OP_OR;
	case '&':
		return op[1] ? OP_LAND : OP_AND;
	case '<':
		return op[1] == 0   ? OP_LT :
		       op[1] == '<' ? OP_SHL :
		       op[1] == '=' ? OP_LE :
				      -1;
	case '>':
		return op[1] == 0   ? OP_GT :
		       op[1] == '>' ? OP_SHR :
		       op[1] == '=' ? OP_GE :
				      -1;
	case '=':
		return op[1] == '=' ? OP_EQ : -1;
	case '-':
		return OP_SUB;
	case '+':
		return OP_ADD;
	case '/':
		return OP_DIV;
	case '%':
		return OP_MOD;
	case '*':
		return OP_MUL;
	default:
		return -1;
	}
}

/* eval_num_arg()'s cases we can do; NULL: leave the event to
 * libtraceevent. */
static const struct enode *compile_num(struct tpfmt *t, struct tep_event *ev,
				       struct tep_print_arg *arg)
{
	struct enode *n;
	struct tep_format_field *f;
	int op;

	if (!arg)
		return NULL;
	switch (arg->type) {
	case TEP_PRINT_NULL:
	case TEP_PRINT_FLAGS:
	case TEP_PRINT_SYMBOL:
	case TEP_PRINT_INT_ARRAY:
	case TEP_PRINT_HEX:
	case TEP_PRINT_HEX_STR:
	case TEP_PRINT_STRING:
	case TEP_PRINT_BSTRING:
	case TEP_PRINT_BITMASK:
	case TEP_PRINT_CPUMASK:
		return new_enode(t, EN_CONST); /* 0 */
	case TEP_PRINT_ATOM:
		if (!arg->atom.atom)
			return NULL;
		n = new_enode(t, EN_CONST);
		if (!n)
			return NULL;
		n->k = strtoull(arg->atom.atom, NULL, 0);
		/* A name (a kernel symbol) needs libtraceevent's lookup. */
		if (!n->k && !isdigit((unsigned char)arg->atom.atom[0]))
			return NULL;
		return n;
	case TEP_PRINT_FIELD:
		f = find_field(ev, arg->field.field, arg->field.name);
		if (!f || f->offset < 0 || f->size < 0)
			return NULL;
		n = new_enode(t, EN_FIELD);
		if (!n)
			return NULL;
		n->off = (uint32_t)f->offset;
		n->size = f->size > 0xffff ? 0xffff : (uint16_t)f->size;
		return n;
	case TEP_PRINT_TYPE:
		n = new_enode(t, EN_CAST);
		if (!n || !arg->typecast.type)
			return NULL;
		n->a = compile_num(t, ev, arg->typecast.item);
		n->k = cast_mask(arg->typecast.type);
		return n->a ? fold(n) : NULL;
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		f = arg->dynarray.field;
		if (!f || f->offset < 0 || (f->size != 2 && f->size != 4))
			return NULL;
		n = new_enode(t, EN_DYNLEN);
		if (!n)
			return NULL;
		n->off = (uint32_t)f->offset;
		n->size = (uint16_t)f->size;
		n->k = !!(f->flags & TEP_FIELD_IS_RELATIVE);
		return n;
	case TEP_PRINT_OP:
		if (!arg->op.op)
			return NULL;
		if (!strcmp(arg->op.op, "?")) {
			struct tep_print_arg *r = arg->op.right;

			if (!r || r->type != TEP_PRINT_OP || !r->op.op ||
			    strcmp(r->op.op, ":"))
				return NULL;
			n = new_enode(t, EN_TERN);
			if (!n)
				return NULL;
			n->a = compile_num(t, ev, arg->op.left);
			n->b = compile_num(t, ev, r->op.left);
			n->c = compile_num(t, ev, r->op.right);
			return n->a && n->b && n->c ? fold(n) : NULL;
		}
		op = binop_code(arg->op.op);
		if (op < 0 || !strcmp(arg->op.op, "["))
			return NULL;
		n = new_enode(t, EN_BIN);
		if (!n)
			return NULL;
		n->op = (uint8_t)op;
		n->a = compile_num(t, ev, arg->op.left);
		n->b = compile_num(t, ev, arg->op.right);
		return n->a && n->b ? fold(n) : NULL;
	default:
		/* functions, arrays by address: libtraceevent's */
		return NULL;
	}
}

static uint64_t read_num(const unsigned char *p, unsigned size)
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
static void dyn_field(const unsigned char *data, uint32_t size, uint32_t off,
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
	v = read_num(data + off, fsize);
	o = (uint32_t)(v & 0xffff);
	l = fsize == 2 ? size - o : (uint32_t)((v >> 16) & 0xffff);
	*o_out = o > size ? 0 : o;
	*l_out = (uint64_t)o + l > size ? 0 : l;
	if (relative)
		*o_out += off + fsize;
}

static uint64_t eval(const struct enode *n, const unsigned char *data,
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
		return read_num(data + n->off, n->size);
	case EN_CAST:
		l = eval(n->a, data, size);
		return n->k ? l & n->k : l;
	case EN_TERN:
		return eval(n->a, data, size) ? eval(n->b, data, size) :
						eval(n->c, data, size);
	case EN_DYNLEN:
		dyn_field(data, size, n->off, n->size, n->k, &o, &len);
		return len;
	case EN_FIELD_OP:
		l = (uint64_t)n->off + n->size > size ?
			    0 :
			    read_num(data + n->off, n->size);
		r = n->k;
		goto op;
	default:
		break;
	}
	l = eval(n->a, data, size);
	r = eval(n->b, data, size);
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

/* eval_flag(): numbers, or the few names libtraceevent knows. */
static long long flag_value(const char *s)
{
	static const struct {
		const char *name;
		long long v;
	} names[] = {
		{ "HI_SOFTIRQ", 0 },	    { "TIMER_SOFTIRQ", 1 },
		{ "NET_TX_SOFTIRQ", 2 },    { "NET_RX_SOFTIRQ", 3 },
		{ "BLOCK_SOFTIRQ", 4 },	    { "IRQ_POLL_SOFTIRQ", 5 },
		{ "TASKLET_SOFTIRQ", 6 },   { "SCHED_SOFTIRQ", 7 },
		{ "HRTIMER_SOFTIRQ", 8 },   { "RCU_SOFTIRQ", 9 },
		{ "HRTIMER_NORESTART", 0 }, { "HRTIMER_RESTART", 1 },
	};

	if (isdigit((unsigned char)s[0]))
		return (long long)strtoull(s, NULL, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, s))
			return names[i].v;
	return -1;
}

static const struct snode *compile_str(struct tpfmt *t, struct tep_event *ev,
				       struct tep_print_arg *arg)
{
	struct snode *n = arena_alloc(t, sizeof(*n));
	struct tep_format_field *f;
	struct tep_print_flag_sym *fs;
	struct flag_ent *fl;
	uint32_t k = 0;

	if (!n || !arg)
		return NULL;
	switch (arg->type) {
	case TEP_PRINT_NULL:
	case TEP_PRINT_TYPE:
		n->kind = SN_NONE;
		return n;
	case TEP_PRINT_ATOM:
		n->kind = SN_LIT;
		n->lit = arg->atom.atom ? arg->atom.atom : "";
		n->lit_len = (uint32_t)strlen(n->lit);
		return n;
	case TEP_PRINT_BSTRING:
		n->kind = SN_LIT;
		n->lit = arg->string.string ? arg->string.string : "";
		n->lit_len = (uint32_t)strlen(n->lit);
		return n;
	case TEP_PRINT_FIELD:
		f = find_field(ev, arg->field.field, arg->field.name);
		if (!f || f->offset < 0 || f->size <= 0 || f->size > 0xffff)
			return NULL;
		/* A long-sized non-array is a pointer, maybe to a printk
		 * string: libtraceevent's lookup. */
		if (!(f->flags & TEP_FIELD_IS_ARRAY) && f->size == t->long_size)
			return NULL;
		n->kind = SN_FIELD;
		n->off = (uint32_t)f->offset;
		n->size = (uint16_t)f->size;
		return n;
	case TEP_PRINT_FLAGS:
	case TEP_PRINT_SYMBOL: {
		struct tep_print_arg *field = arg->type == TEP_PRINT_FLAGS ?
						      arg->flags.field :
						      arg->symbol.field;

		fs = arg->type == TEP_PRINT_FLAGS ? arg->flags.flags :
						    arg->symbol.symbols;
		n->kind = arg->type == TEP_PRINT_FLAGS ? SN_FLAGS : SN_SYMBOL;
		n->val = compile_num(t, ev, field);
		if (!n->val)
			return NULL;
		for (struct tep_print_flag_sym *x = fs; x; x = x->next)
			k++;
		fl = arena_alloc(t, (k ? k : 1) * sizeof(*fl));
		if (!fl)
			return NULL;
		k = 0;
		for (; fs; fs = fs->next) {
			if (!fs->value || !fs->str)
				return NULL;
			fl[k].v = flag_value(fs->value);
			fl[k].str = fs->str;
			fl[k].len = strlen(fs->str);
			k++;
		}
		n->flags = fl;
		n->nflags = k;
		if (arg->type == TEP_PRINT_FLAGS)
			n->delim = arg->flags.delim;
		return n;
	}
	case TEP_PRINT_STRING:
		f = find_field(ev, arg->string.field, arg->string.string);
		if (!f) {
			n->kind = SN_NONE;
			return n;
		}
		if (f->offset < 0 || (f->size != 2 && f->size != 4))
			return NULL;
		n->kind = SN_DYNSTR;
		n->off = (uint32_t)f->offset;
		n->size = (uint16_t)f->size;
		n->relative = !!(f->flags & TEP_FIELD_IS_RELATIVE);
		return n;
	case TEP_PRINT_OP:
		if (!arg->op.op || strcmp(arg->op.op, "?")) {
			n->kind = SN_NONE;
			return n;
		}
		if (!arg->op.right || arg->op.right->type != TEP_PRINT_OP)
			return NULL;
		n->kind = SN_TERN;
		n->val = compile_num(t, ev, arg->op.left);
		n->t = compile_str(t, ev, arg->op.right->op.left);
		n->f = compile_str(t, ev, arg->op.right->op.right);
		return n->val && n->t && n->f ? n : NULL;
	default:
		return NULL;
	}
}

struct fops {
	struct fop *v;
	uint32_t nr, cap;
};

static struct fop *fops_add(struct fops *fo)
{
	if (fo->nr == fo->cap) {
		uint32_t cap = fo->cap ? fo->cap * 2 : 16;
		struct fop *v = realloc(fo->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		fo->v = v;
		fo->cap = cap;
	}
	memset(&fo->v[fo->nr], 0, sizeof(fo->v[0]));
	return &fo->v[fo->nr++];
}

/* A literal run as parse_arg_string() unescapes it; returns its length in
 * the format. */
static int lit_step(struct tpfmt *t, struct fops *fo, const char *fmt)
{
	size_t n = strlen(fmt), i = 0, o = 0;
	char *buf = arena_alloc(t, n + 1);
	struct fop *op;

	if (!buf)
		return -1;
	while (fmt[i]) {
		if (fmt[i] == '\\' && fmt[i + 1]) {
			char c = fmt[i + 1];

			buf[o++] = c == 'n' ? '\n' :
				   c == 't' ? '\t' :
				   c == 'r' ? '\r' :
					      c;
			i += 2;
			continue;
		}
		if (fmt[i] == '\\') {
			i++; /* libtraceevent puts the NUL after it */
			break;
		}
		if (fmt[i] == '%') {
			if (fmt[i + 1] == '%') {
				buf[o++] = '%';
				i += 2;
				continue;
			}
			break;
		}
		buf[o++] = fmt[i++];
	}
	op = fops_add(fo);
	if (!op)
		return -1;
	op->kind = FOP_LIT;
	op->lit = buf;
	op->lit_len = (uint32_t)o;
	return (int)i;
}

/* Width/precision/'-' of a string conversion; false if anything else. */
static bool parse_str_spec(struct fop *op)
{
	const char *s = op->spec + 1;

	op->width = 0;
	op->prec = -1;
	if (*s == '-') {
		op->left = true;
		s++;
	}
	while (isdigit((unsigned char)*s))
		op->width = op->width * 10 + (*s++ - '0');
	if (*s == '.') {
		op->prec = 0;
		s++;
		while (isdigit((unsigned char)*s))
			op->prec = op->prec * 10 + (*s++ - '0');
	}
	if (op->width > 4096 || op->prec > 65536)
		return false;
	return s[0] == 's' && !s[1];
}

/* parse_arg_format(): one conversion at @fmt ('%'); returns the format
 * bytes it used, 0 on something we leave to libtraceevent. */
static int conv_step(struct tpfmt *t, struct tep_event *ev, struct fops *fo,
		     const char *fmt, struct tep_print_arg **arg)
{
	const char *start = fmt;
	int ls = 0;
	struct fop *op;

	for (fmt++; *fmt; fmt++) {
		size_t len;

		switch (*fmt) {
		case '#':
		case '.':
		case '-':
			continue;
		case 'h':
			ls--;
			continue;
		case 'l':
			ls++;
			continue;
		case 'L':
			ls = 2;
			continue;
		case 'z':
		case 'Z':
			ls = 1;
			continue;
		default:
			if (*fmt >= '0' && *fmt <= '9')
				continue;
			break;
		}
		if (*fmt == '*' || *fmt == 'p')
			return 0;
		len = (size_t)(fmt + 1 - start);
		op = fops_add(fo);
		if (!op)
			return 0;
		switch (*fmt) {
		case 'd':
		case 'u':
		case 'i':
		case 'x':
		case 'X':
		case 'o':
			if (!*arg || len > 30 || ls < -2 || ls > 2)
				return 0;
			op->kind = FOP_NUM;
			op->conv = *fmt;
			op->ls = (int8_t)ls;
			memcpy(op->spec, start, len);
			op->spec[len] = 0;
			op->simple = true;
			for (const char *c = start + 1; c < fmt; c++)
				if (!strchr("hlLzZ", *c))
					op->simple = false;
			for (const char *c = start + 1; c < fmt; c++)
				if (isdigit((unsigned char)*c) && atoi(c) > 200)
					return 0;
			op->num = compile_num(t, ev, *arg);
			if (!op->num)
				return 0;
			if (op->simple && op->num->kind == EN_FIELD &&
			    op->conv != 'o' && op->conv != 'X')
				op->kind = FOP_NUM_FIELD;
			*arg = (*arg)->next;
			return (int)len;
		case 's':
			if (!*arg || len > 31)
				return 0;
			op->kind = FOP_STR;
			op->conv = 's';
			memcpy(op->spec, start, len);
			op->spec[len] = 0;
			if (!parse_str_spec(op))
				return 0;
			op->simple = len == 2;
			op->str = compile_str(t, ev, *arg);
			if (!op->str)
				return 0;
			if (op->simple && op->str->kind == SN_FIELD)
				op->kind = FOP_STR_FIELD;
			*arg = (*arg)->next;
			return (int)len;
		default: {
			/* Unknown conversion: libtraceevent prints ">c<". */
			char *b = arena_alloc(t, 4);

			if (!b)
				return 0;
			b[0] = '>';
			b[1] = *fmt;
			b[2] = '<';
			op->kind = FOP_LIT;
			op->lit = b;
			op->lit_len = 3;
			return (int)len;
		}
		}
	}
	return -1; /* the format ends inside a conversion: nothing printed */
}

static uint32_t event_min_size(struct tep_event *ev)
{
	struct tep_format_field *lists[2] = { ev->format.common_fields,
					      ev->format.fields };
	uint64_t end = 0;

	for (int i = 0; i < 2; i++)
		for (struct tep_format_field *f = lists[i]; f; f = f->next) {
			uint64_t e;

			if (f->offset < 0 || f->size < 0)
				return UINT32_MAX;
			e = (uint64_t)f->offset + (uint64_t)f->size;
			if (e > end)
				end = e;
		}
	return end > TP_MAX_FIELD_END ? UINT32_MAX : (uint32_t)end;
}

static void add_span(struct tpfmt *t, struct tp_ev *te,
		     struct tep_print_arg *field, struct tep_print_arg *len,
		     struct tep_print_arg *el)
{
	struct span_guard g = { 0 }, *v;
	struct tep_format_field *f = NULL;

	if (field && field->type == TEP_PRINT_DYNAMIC_ARRAY) {
		f = field->dynarray.field;
		g.dynamic = true;
		g.relative = f && (f->flags & TEP_FIELD_IS_RELATIVE);
	} else if (field && field->type == TEP_PRINT_FIELD) {
		f = find_field(te->ev, field->field.field, field->field.name);
	}
	g.len = compile_num(t, te->ev, len);
	g.el = el ? compile_num(t, te->ev, el) : NULL;
	if (!f || f->offset < 0 || f->size < 0 || f->size > 0xffff || !g.len ||
	    (el && !g.el) || (g.dynamic && f->size != 2 && f->size != 4)) {
		te->unsafe = true;
		return;
	}
	g.off = (uint32_t)f->offset;
	g.fsize = (uint16_t)f->size;
	v = arena_alloc(t, (te->nr_spans + 1) * sizeof(*v));
	if (!v) {
		te->unsafe = true;
		return;
	}
	if (te->nr_spans)
		memcpy(v, te->spans, te->nr_spans * sizeof(*v));
	v[te->nr_spans++] = g;
	te->spans = v;
}

/*
 * libtraceevent 1.7 sizes its buffer for an empty cpumask from
 * (unsigned)0 - 1 bits: a 3 GB malloc per record (and a field it cannot
 * find is a NULL dereference).  The kernel never writes an empty one, so a
 * record that has one is damaged and is not handed to libtraceevent.
 */
static void add_cpumask(struct tpfmt *t, struct tp_ev *te,
			struct tep_print_arg *arg)
{
	struct span_guard g = { 0 }, *v;
	struct tep_format_field *f = arg->bitmask.field;

	if (!f && arg->bitmask.bitmask)
		f = tep_find_any_field(te->ev, arg->bitmask.bitmask);
	if (!f || f->offset < 0 || (f->size != 2 && f->size != 4)) {
		te->unsafe = true;
		return;
	}
	g.off = (uint32_t)f->offset;
	g.fsize = (uint16_t)f->size;
	g.dynamic = true;
	g.relative = f->flags & TEP_FIELD_IS_RELATIVE;
	v = arena_alloc(t, (te->nr_cpumasks + 1) * sizeof(*v));
	if (!v) {
		te->unsafe = true;
		return;
	}
	if (te->nr_cpumasks)
		memcpy(v, te->cpumasks, te->nr_cpumasks * sizeof(*v));
	v[te->nr_cpumasks++] = g;
	te->cpumasks = v;
}

static bool cpumasks_ok(const struct tp_ev *te, const unsigned char *data,
			uint32_t size)
{
	for (uint32_t i = 0; i < te->nr_cpumasks; i++) {
		const struct span_guard *g = &te->cpumasks[i];
		uint32_t o, l;

		dyn_field(data, size, g->off, g->fsize, g->relative, &o, &l);
		if (!l)
			return false;
	}
	return true;
}

/*
 * libtraceevent prints every field of an event whose print format it could
 * not parse, and takes a 2-byte __data_loc's length as "record size -
 * offset": an offset past the record is a length of about 4 G, read until
 * it faults.  So each dynamic field of the event, printed or not, must
 * point within the record; the kernel writes no other.
 */
static void find_dyns(struct tpfmt *t, struct tp_ev *te)
{
	uint32_t n = 0, i = 0;
	struct tep_format_field *f;

	for (f = te->ev->format.fields; f; f = f->next)
		if (f->flags & TEP_FIELD_IS_DYNAMIC)
			n++;
	if (!n)
		return;
	te->dyns = arena_alloc(t, n * sizeof(*te->dyns));
	if (!te->dyns) {
		te->unsafe = true;
		return;
	}
	for (f = te->ev->format.fields; f; f = f->next) {
		struct span_guard *g = &te->dyns[i];

		if (!(f->flags & TEP_FIELD_IS_DYNAMIC))
			continue;
		if (f->offset < 0 || (f->size != 2 && f->size != 4)) {
			te->unsafe = true;
			return;
		}
		memset(g, 0, sizeof(*g));
		g->off = (uint32_t)f->offset;
		g->fsize = (uint16_t)f->size;
		g->dynamic = true;
		g->relative = f->flags & TEP_FIELD_IS_RELATIVE;
		i++;
	}
	te->nr_dyns = i;
}

static bool dyns_ok(const struct tp_ev *te, const unsigned char *data,
		    uint32_t size)
{
	for (uint32_t i = 0; i < te->nr_dyns; i++) {
		const struct span_guard *g = &te->dyns[i];
		uint64_t v, o, l;

		if ((uint64_t)g->off + g->fsize > size)
			return false;
		v = read_num(data + g->off, g->fsize);
		o = v & 0xffff;
		if (g->relative)
			o += (uint64_t)g->off + g->fsize;
		l = g->fsize == 2 ? 0 : (v >> 16) & 0xffff;
		if (o > size || o + l > size)
			return false;
	}
	return true;
}

/* Whether every array libtraceevent will print lies within @limit bytes
 * (the record, padded to its fixed fields). */
static bool spans_ok(const struct tp_ev *te, const unsigned char *data,
		     uint32_t size, uint32_t limit)
{
	for (uint32_t i = 0; i < te->nr_spans; i++) {
		const struct span_guard *g = &te->spans[i];
		uint64_t n = eval(g->len, data, size) & 0xffffffffull;
		uint64_t el = g->el ? eval(g->el, data, size) : 1;
		uint32_t o, l;

		if (g->dynamic)
			dyn_field(data, size, g->off, g->fsize, g->relative, &o,
				  &l);
		else
			o = g->off;
		if (el > 8 || (uint64_t)o + n * (el ? el : 1) > limit)
			return false;
	}
	return true;
}

/*
 * libtraceevent divides without a check (SIGFPE on a zero divisor).  For
 * the events it prints, every divisor of the format is compiled here and
 * evaluated before each call; one we cannot evaluate makes the event
 * unprintable rather than risk it.
 */
static void find_divisors(struct tpfmt *t, struct tp_ev *te,
			  struct tep_print_arg *arg, int depth)
{
	for (; arg && !te->unsafe; arg = depth ? NULL : arg->next) {
		if (depth > 64) {
			te->unsafe = true;
			return;
		}
		switch (arg->type) {
		case TEP_PRINT_OP:
			if (arg->op.op && (!strcmp(arg->op.op, "/") ||
					   !strcmp(arg->op.op, "%"))) {
				const struct enode *d =
					compile_num(t, te->ev, arg->op.right);
				const struct enode **v;

				v = d ? arena_alloc(t, (te->nr_divisors + 1) *
							       sizeof(*v)) :
					NULL;
				if (!v) {
					te->unsafe = true;
					return;
				}
				if (te->nr_divisors)
					memcpy(v, te->divisors,
					       te->nr_divisors * sizeof(*v));
				v[te->nr_divisors++] = d;
				te->divisors = v;
			}
			find_divisors(t, te, arg->op.left, depth + 1);
			find_divisors(t, te, arg->op.right, depth + 1);
			break;
		case TEP_PRINT_TYPE:
			find_divisors(t, te, arg->typecast.item, depth + 1);
			break;
		case TEP_PRINT_FLAGS:
			find_divisors(t, te, arg->flags.field, depth + 1);
			break;
		case TEP_PRINT_SYMBOL:
			find_divisors(t, te, arg->symbol.field, depth + 1);
			break;
		case TEP_PRINT_HEX:
		case TEP_PRINT_HEX_STR:
			add_span(t, te, arg->hex.field, arg->hex.size, NULL);
			find_divisors(t, te, arg->hex.field, depth + 1);
			find_divisors(t, te, arg->hex.size, depth + 1);
			break;
		case TEP_PRINT_INT_ARRAY:
			add_span(t, te, arg->int_array.field,
				 arg->int_array.count, arg->int_array.el_size);
			find_divisors(t, te, arg->int_array.field, depth + 1);
			find_divisors(t, te, arg->int_array.count, depth + 1);
			find_divisors(t, te, arg->int_array.el_size, depth + 1);
			break;
		case TEP_PRINT_CPUMASK:
			add_cpumask(t, te, arg);
			break;
		case TEP_PRINT_FUNC:
			for (struct tep_print_arg *a = arg->func.args; a;
			     a = a->next)
				find_divisors(t, te, a, depth + 1);
			break;
		default:
			break;
		}
	}
}

static void compile_event(struct tpfmt *t, struct tp_ev *te)
{
	struct tep_event *ev = te->ev;
	struct tep_print_arg *arg = ev->print_fmt.args;
	const char *fmt = ev->print_fmt.format;
	struct fops fo = { 0 };
	int n;

	te->compiled = true;
	te->min_size = event_min_size(ev);
	find_divisors(t, te, ev->print_fmt.args, 0);
	find_dyns(t, te);
	if (t->swap || !fmt || ev->handler ||
	    (ev->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT |
			  TEP_EVENT_FL_ISPRINT | TEP_EVENT_FL_PRINTRAW |
			  TEP_EVENT_FL_ISFTRACE)))
		return;
	while (*fmt) {
		if (*fmt == '%' && fmt[1] != '%')
			n = conv_step(t, ev, &fo, fmt, &arg);
		else
			n = lit_step(t, &fo, fmt);
		if (n == 0) {
			free(fo.v);
			return;
		}
		if (n < 0)
			break;
		fmt += n;
	}
	/* A literal before a conversion goes with it: one step, not two. */
	{
		uint32_t o = 0;

		for (uint32_t i = 0; i < fo.nr; i++) {
			if (fo.v[i].kind == FOP_LIT && i + 1 < fo.nr &&
			    fo.v[i + 1].kind != FOP_LIT) {
				fo.v[i + 1].pre = fo.v[i].lit;
				fo.v[i + 1].pre_len = fo.v[i].lit_len;
				continue;
			}
			fo.v[o++] = fo.v[i];
		}
		fo.nr = o;
	}
	te->ops = fo.v;
	te->nr_ops = fo.nr;
	te->fast = true;
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
		n = eval(n->val, data, size) ? n->t : n->f;
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
		val = (long long)eval(n->val, data, size);
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
		val = (long long)eval(n->val, data, size);
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
		dyn_field(data, size, n->off, n->size, n->relative, &o, &l);
		if (!l || o >= size)
			return;
		put_str(ob, op, (const char *)data + o,
			strnlen((const char *)data + o, size - o));
		return;
	case SN_TERN:
		print_snode(eval(n->val, data, size) ? n->t : n->f, op, data,
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

static struct tp_ev *lookup(struct tpfmt *t, const unsigned char *data,
			    uint32_t size)
{
	uint64_t id;
	struct tp_ev *te, ***page;
	struct tep_event *ev;

	if (t->type_size <= 0 ||
	    (uint64_t)t->type_off + (uint64_t)t->type_size > size)
		return NULL;
	id = read_num(data + t->type_off, (unsigned)t->type_size);
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
	compile_event(t, te);
	(*page)[id % TP_ID_PAGE] = te;
	return te;
}

static void print_slow(struct tpfmt *t, const unsigned char *data,
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
	te = lookup(t, data, size);
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
					v = read_num(data + n->off, n->size);
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
				print_num(op, eval(op->num, data, size), ob);
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
		if (!eval(te->divisors[i], t->scratch, need))
			return; /* libtraceevent would divide by zero */
	if (!spans_ok(te, t->scratch, need, need))
		return; /* it would print bytes past the record */
	if (!cpumasks_ok(te, t->scratch, need))
		return;
	if (!dyns_ok(te, t->scratch, need))
		return; /* a dynamic field points past the record */
	print_slow(t, t->scratch, need, cpu, ob);
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

/* ---- TRACING_DATA ---------------------------------------------------- */

struct rd {
	const unsigned char *p;
	size_t len, off;
	bool swap;
};

static const void *rd_take(struct rd *r, uint64_t n)
{
	const void *p;

	if (n > r->len - r->off)
		return NULL;
	p = r->p + r->off;
	r->off += (size_t)n;
	return p;
}

static bool rd_u32(struct rd *r, uint32_t *v)
{
	const void *p = rd_take(r, 4);

	if (!p)
		return false;
	memcpy(v, p, 4);
	if (r->swap)
		*v = __builtin_bswap32(*v);
	return true;
}

static bool rd_u64(struct rd *r, uint64_t *v)
{
	const void *p = rd_take(r, 8);

	if (!p)
		return false;
	memcpy(v, p, 8);
	if (r->swap)
		*v = __builtin_bswap64(*v);
	return true;
}

static const char *rd_str(struct rd *r)
{
	const char *s = (const char *)r->p + r->off;
	const char *nul = memchr(s, 0, r->len - r->off);

	if (!nul)
		return NULL;
	r->off += (size_t)(nul - s) + 1;
	return s;
}

/* A NUL-terminated, writable copy (libtraceevent wants char *). */
static char *dup_bytes(const void *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/* tracefs writes formats in printable ASCII; anything else is damage that
 * libtraceevent's parser is not made to survive. */
static bool text_ok(const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		if ((s[i] < 0x20 && s[i] != '\t' && s[i] != '\n') ||
		    s[i] > 0x7e)
			return false;
	return true;
}

/* Lines "0x<hex> : \"text\"", the only shape tep_parse_printk_formats()
 * and tep_register_print_string() read without running off the string. */
static bool printk_ok(const void *p, size_t n)
{
	const char *s = p, *e = s + n;

	if (!text_ok(p, n))
		return false;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *end = nl ? nl : e;
		const char *c = s;

		if (end > s) {
			if (end - c < 3 || c[0] != '0' || c[1] != 'x')
				return false;
			c += 2;
			while (c < end && isxdigit((unsigned char)*c))
				c++;
			if (end - c < 7 || memcmp(c, " : \"", 4) ||
			    end[-1] != '"')
				return false;
		}
		s = end + 1;
	}
	return true;
}

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

/* A token of a print format's argument list. */
enum fmt_tok { FT_END, FT_IDENT, FT_NUM, FT_ARROW, FT_CHAR };

struct fmt_lex {
	const char *p, *end;
	const char *tok; /* the last token */
	size_t len;
};

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* The next token; string and character literals are skipped. */
static enum fmt_tok fmt_next(struct fmt_lex *x)
{
	for (;;) {
		char quote;

		while (x->p < x->end && isspace((unsigned char)*x->p))
			x->p++;
		if (x->p >= x->end)
			return FT_END;
		if (*x->p != '"' && *x->p != '\'')
			break;
		quote = *x->p++;
		while (x->p < x->end && *x->p != quote)
			x->p += *x->p == '\\' ? 2 : 1;
		x->p++;
	}
	x->tok = x->p;
	if (is_ident((unsigned char)*x->p)) {
		bool num = isdigit((unsigned char)*x->p);

		while (x->p < x->end && is_ident((unsigned char)*x->p))
			x->p++;
		x->len = (size_t)(x->p - x->tok);
		return num ? FT_NUM : FT_IDENT;
	}
	if (x->p + 1 < x->end && x->p[0] == '-' && x->p[1] == '>') {
		x->p += 2;
		x->len = 2;
		return FT_ARROW;
	}
	x->p++;
	x->len = 1;
	return FT_CHAR;
}

static bool tok_is(const struct fmt_lex *x, const char *s)
{
	return x->len == strlen(s) && !memcmp(x->tok, s, x->len);
}

static const struct fmt_field *fmt_field(const struct fmt_view *v,
					 const char *name, size_t len)
{
	for (size_t i = 0; i < v->nr_fields; i++)
		if (v->fields[i].len == len &&
		    !memcmp(v->fields[i].name, name, len))
			return &v->fields[i];
	return NULL;
}

/* The field a "\tfield:...;" line declares: the last word before the
 * first ';', after any [dimension], and its "size:". */
static int fmt_add_field(struct fmt_view *v, const char *line, const char *eol)
{
	const char *semi = memchr(line, ';', (size_t)(eol - line));
	const char *e, *b, *sz;
	struct fmt_field *f;

	if (!semi)
		return 0; /* libtraceevent refuses the event itself */
	e = semi;
	while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	while (e > line && e[-1] == ']') {
		while (e > line && e[-1] != '[')
			e--;
		if (e > line)
			e--;
		while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
	}
	b = e;
	while (b > line && is_ident((unsigned char)b[-1]))
		b--;
	if (b == e)
		return 0;
	if (v->nr_fields % 32 == 0) {
		f = realloc(v->fields, (v->nr_fields + 32) * sizeof(*f));
		if (!f)
			return -ENOMEM;
		v->fields = f;
	}
	f = &v->fields[v->nr_fields++];
	f->name = b;
	f->len = (size_t)(e - b);
	f->size = -1;
	sz = memmem(semi, (size_t)(eol - semi), "size:", 5);
	if (sz && sz + 5 < eol && isdigit((unsigned char)sz[5]))
		f->size = strtol(sz + 5, NULL, 10);
	return 0;
}

static bool fmt_refuse(struct fmt_view *v, const char *what,
		       const struct fmt_lex *x)
{
	snprintf(v->why, sizeof(v->why),
		 "%s (\"%.*s\" at byte %zu of the print format)", what,
		 (int)(x->len > 32 ? 32 : x->len), x->tok,
		 (size_t)(x->tok - v->print));
	return false;
}

/*
 * The divisor after a '/' or '%'.  libtraceevent computes an operation of
 * two constants while it parses (consolidate_op_arg()), so a constant
 * divisor of zero is a SIGFPE in the parser: a literal 0 or a word it
 * reads as 0, sizeof of a field of size 0, a parenthesised constant.
 * Kernel formats divide by a nonzero literal, a field, or sizeof(type).
 */
static bool fmt_check_divisor(struct fmt_view *v, struct fmt_lex *x)
{
	enum fmt_tok t = fmt_next(x);
	const struct fmt_field *f;
	struct fmt_lex save;
	int depth = 1;

	if (t == FT_NUM) {
		if (!strtoull(x->tok, NULL, 0))
			return fmt_refuse(v, "it divides by a zero constant",
					  x);
		return true;
	}
	if (t == FT_IDENT && tok_is(x, "REC"))
		return true; /* a field: checked when printing */
	if (t == FT_IDENT && tok_is(x, "sizeof")) {
		save = *x;
		if (fmt_next(x) == FT_CHAR && tok_is(x, "(") &&
		    fmt_next(x) == FT_IDENT && tok_is(x, "REC") &&
		    fmt_next(x) == FT_ARROW && fmt_next(x) == FT_IDENT &&
		    (f = fmt_field(v, x->tok, x->len)) && f->size == 0)
			return fmt_refuse(
				v,
				"it divides by the size of a field of size 0",
				x);
		*x = save;
		return true;
	}
	if (t == FT_CHAR && tok_is(x, "(")) {
		const char *open = x->tok;

		/* Not constant if it reads a field. */
		while (depth && (t = fmt_next(x)) != FT_END) {
			if (t == FT_IDENT && tok_is(x, "REC")) {
				x->p = open + 1;
				return true;
			}
			if (t == FT_CHAR && tok_is(x, "("))
				depth++;
			else if (t == FT_CHAR && tok_is(x, ")"))
				depth--;
		}
		x->tok = open;
		x->len = 1;
		return fmt_refuse(v, "it divides by a constant expression", x);
	}
	if (t == FT_END)
		return true; /* libtraceevent refuses the event itself */
	return fmt_refuse(
		v,
		"it divides by something that is not a number, a field or a sizeof",
		x);
}

/*
 * The operator libtraceevent's tokenizer reads at @p (it joins "->", "++",
 * "<<=", "!=" and the like), and whether it has a priority there
 * (get_op_prio() > 0, or ":").  Anything that is not an operator passes.
 */
static bool fmt_op_known(const char *p, const char *end, size_t *len)
{
	static const char *const known[] = {
		"~",  "!",  "*",  "/",	"%",  "+",  "-",  "<",
		">",  "&",  "^",  "|",	"?",  ":",  "++", "--",
		">>", "<<", ">=", "<=", "==", "!=", "&&", "||"
	};
	char op[4] = { 0 };
	size_t n = 0;

	*len = 0;
	if (p >= end || is_ident((unsigned char)*p) || *p == '"' ||
	    *p == '\'' || *p == '(' || *p == ')' || *p == ',' ||
	    !isprint((unsigned char)*p))
		return true;
	op[n++] = *p;
	if (*p == '-' && p + 1 < end && p[1] == '>') {
		op[n++] = '>';
	} else if (strchr("-+|&><", *p) && p + 1 < end && p[1] == *p) {
		op[n++] = *p;
		if ((*p == '>' || *p == '<') && p + 2 < end && p[2] == '=')
			op[n++] = '=';
	} else if (strchr("-+|&><!=", *p) && p + 1 < end && p[1] == '=') {
		op[n++] = '=';
	}
	*len = n;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(op, known[i]))
			return true;
	return false;
}

/*
 * After a subscript "x[i]", libtraceevent's process_op() goes on with the
 * operator that follows, and one it gives no priority ("=", ";", "[",
 * "->" ...) makes it recurse on a NULL argument.  Kernel formats follow a
 * subscript with ",", ")", "?" or the end.
 */
static bool fmt_check_subscript(struct fmt_view *v, struct fmt_lex *x)
{
	const char *open = x->tok, *p;
	enum fmt_tok t;
	size_t len;
	int depth = 1;

	t = fmt_next(x);
	if (t == FT_CHAR && tok_is(x, "]"))
		return true; /* "[]": libtraceevent refuses the event itself */
	while (t != FT_END) {
		if (t == FT_CHAR && tok_is(x, "["))
			depth++;
		else if (t == FT_CHAR && tok_is(x, "]") && !--depth)
			break;
		t = fmt_next(x);
	}
	if (t == FT_END)
		return true;
	p = x->p;
	while (p < x->end && isspace((unsigned char)*p))
		p++;
	if (fmt_op_known(p, x->end, &len))
		return true;
	x->tok = open;
	x->len = (size_t)(p + len - open);
	return fmt_refuse(
		v,
		"a subscript is followed by an operator libtraceevent does not know",
		x);
}

/*
 * After a '?', libtraceevent's process_op() goes on with the operator that
 * follows the condition's branches, and one it gives no priority (";",
 * "=", "->" after a number ...) makes it recurse on a NULL argument, as
 * after a subscript.  Every operator from the '?' to the ',' or ')' that
 * ends its expression must be one it knows.  Kernel formats use only those.
 */
static bool fmt_check_ternary(struct fmt_view *v, const struct fmt_lex *at)
{
	struct fmt_lex x = *at;
	enum fmt_tok t, prev = FT_CHAR;
	bool prev_rec = false;
	size_t len;
	int depth = 0;

	while ((t = fmt_next(&x)) != FT_END) {
		if (t == FT_CHAR &&
		    (tok_is(&x, "(") || tok_is(&x, "[") || tok_is(&x, "{"))) {
			depth++;
		} else if (t == FT_CHAR &&
			   (tok_is(&x, ")") || tok_is(&x, "]") ||
			    tok_is(&x, "}"))) {
			if (--depth < 0)
				break;
		} else if (t == FT_CHAR && tok_is(&x, ",")) {
			if (!depth)
				break;
		} else if (t == FT_ARROW) {
			/* "REC->f" and "(REC)->f" name a field */
			if (!prev_rec && prev != FT_CHAR)
				return fmt_refuse(
					v,
					"an operator libtraceevent does not know follows a '?'",
					&x);
		} else if (t == FT_CHAR && !depth) {
			if (!fmt_op_known(x.tok, x.end, &len)) {
				x.len = len;
				return fmt_refuse(
					v,
					"an operator libtraceevent does not know follows a '?'",
					&x);
			}
			if (len > 1)
				x.p = x.tok + len;
		}
		prev_rec = t == FT_IDENT && tok_is(&x, "REC");
		prev = t;
	}
	return true;
}

/*
 * The print format's arguments:
 *  - "REC->x" where the event has no field x: libtraceevent flags the field
 *    it did not find when the reference is an argument of __print_flags()
 *    or __print_symbolic() (a NULL dereference).  Kernel formats only name
 *    their own fields, and use "->" for nothing else.
 *  - a constant divisor of zero (fmt_check_divisor());
 *  - a subscript followed by an unknown operator (fmt_check_subscript());
 *  - an unknown operator after a '?' (fmt_check_ternary()).
 */
static bool fmt_check_args(struct fmt_view *v, const char *p, const char *end)
{
	struct fmt_lex x = { .p = p, .end = end };
	enum fmt_tok t;

	while ((t = fmt_next(&x)) != FT_END) {
		if (t == FT_ARROW) {
			if (fmt_next(&x) != FT_IDENT ||
			    !fmt_field(v, x.tok, x.len))
				return fmt_refuse(
					v,
					"its print format names a field it does not have",
					&x);
		} else if (t == FT_CHAR &&
			   (tok_is(&x, "/") || tok_is(&x, "%")) &&
			   !(x.p < end && *x.p == '=')) {
			if (!fmt_check_divisor(v, &x))
				return false;
		} else if (t == FT_CHAR && tok_is(&x, "[")) {
			if (!fmt_check_subscript(v, &x))
				return false;
		} else if (t == FT_CHAR && tok_is(&x, "?")) {
			if (!fmt_check_ternary(v, &x))
				return false;
		}
	}
	return true;
}

/*
 * libtraceevent reads a field's dimension as tokens up to the ']', across
 * lines: an unclosed '[' swallows the lines after it, so that its fields
 * differ from the ones seen here and a print format naming one of them
 * slips past fmt_check_args().  Kernel formats close it on the line.
 */
static bool fmt_brackets_closed(const char *p, const char *eol)
{
	int depth = 0;

	for (; p < eol; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && --depth < 0)
			return false;
	}
	return depth == 0;
}

/* Returns 1 when the text may go to libtraceevent, 0 when not (v->why
 * says why), -ENOMEM. */
static int fmt_check(struct fmt_view *v, const char *s, size_t n)
{
	const char *p = s, *end = s + n, *print = NULL;
	int err;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if (!v->name && (size_t)(eol - p) > 6 &&
		    !memcmp(p, "name: ", 6)) {
			v->name = p + 6;
			v->name_len = (size_t)(eol - p - 6);
		} else if ((size_t)(eol - p) > 7 && !memcmp(p, "\tfield:", 7)) {
			if (!fmt_brackets_closed(p, eol)) {
				snprintf(
					v->why, sizeof(v->why),
					"a field's '[' at byte %zu is not closed on its line",
					(size_t)(p - s));
				return 0;
			}
			err = fmt_add_field(v, p + 7, eol);
			if (err)
				return err;
		} else if ((size_t)(eol - p) >= 10 &&
			   !memcmp(p, "print fmt:", 10)) {
			print = p + 10;
			break;
		}
		p = eol + 1;
	}
	v->print = print;
	/* event_read_fields() reads the token after a '[' without looking
	 * for the end of the text (strcmp() of NULL). */
	for (p = end; p > s && isspace((unsigned char)p[-1]); p--)
		;
	if (p > s && p[-1] == '[') {
		snprintf(v->why, sizeof(v->why),
			 "it ends with a '[' (cut short at byte %zu?)", n);
		return 0;
	}
	if (print && !fmt_check_args(v, print, end))
		return 0;
	return 1;
}

/* Records of event @id are not printed (lookup() finds this entry). */
static int leave_out_id(struct tpfmt *t, int id)
{
	struct tp_ev ***page, *te;

	if (id < 0 || id >= TP_MAX_ID)
		return 0; /* lookup() never reaches it */
	page = &t->byid[id / TP_ID_PAGE];
	if (!*page && !(*page = calloc(TP_ID_PAGE, sizeof(**page))))
		return -ENOMEM;
	te = (*page)[id % TP_ID_PAGE];
	if (!te) {
		te = calloc(1, sizeof(*te));
		if (!te)
			return -ENOMEM;
		(*page)[id % TP_ID_PAGE] = te;
	}
	te->compiled = true;
	te->min_size = UINT32_MAX;
	return 0;
}

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
static const char *event_unprintable(struct tpfmt *t, struct tep_event *ev)
{
	static const char *const bprint_fields[] = { "ip", "fmt", "buf" };

	if (!(ev->flags & TEP_EVENT_FL_ISBPRINT) ||
	    (ev->flags & TEP_EVENT_FL_FAILED))
		return NULL;
	for (size_t i = 0; i < 3; i++)
		if (!tep_find_field(ev, bprint_fields[i]))
			return "a binary printk (ftrace bprint) without its ip, fmt and buf fields";
	if (t->have_bprint)
		return "a second binary printk (ftrace bprint) event: libtraceevent would read it with the first one's fields";
	t->have_bprint = true;
	return NULL;
}

static int parse_one_format(struct tpfmt *t, struct rd *r, const char *sys)
{
	struct tep_event *ev = NULL;
	const char *why;
	struct fmt_view v = { 0 };
	uint64_t size;
	const void *p;
	char *buf;
	int ok;

	if (!rd_u64(r, &size) || !(p = rd_take(r, size)))
		return -EBADMSG;
	if (!text_ok(p, (size_t)size) || !text_ok(sys, strlen(sys))) {
		pr_warn("TRACING_DATA: a damaged %s event format (at byte %zu) is left out: it is not printable text",
			text_ok(sys, strlen(sys)) ? sys : "(unprintable)",
			r->off - (size_t)size);
		return 0;
	}
	ok = fmt_check(&v, p, (size_t)size);
	if (!ok) {
		int name_len =
			v.name ? (int)(v.name_len < 64 ? v.name_len : 64) : 1;

		pr_warn("TRACING_DATA: event %s:%.*s (format at byte %zu) is left out: %s",
			sys, name_len, v.name ? v.name : "?",
			r->off - (size_t)size, v.why);
	}
	if (ok <= 0) {
		free(v.fields);
		return ok;
	}
	free(v.fields);
	buf = dup_bytes(p, (size_t)size);
	if (!buf)
		return -ENOMEM;
	/* A format libtraceevent cannot parse leaves that event unprinted,
	 * as in perf.  It holds the event it returns (only on success). */
	if (tep_parse_format(t->tep, &ev, buf, (unsigned long)size, sys) !=
		    TEP_ERRNO__SUCCESS ||
	    !ev) {
		free(buf);
		return 0;
	}
	free(buf);
	why = event_unprintable(t, ev);
	if (!why)
		return 0;
	pr_warn("TRACING_DATA: event %s:%.64s (format at byte %zu) is left out: %s",
		sys, ev->name ? ev->name : "?", r->off - (size_t)size, why);
	return leave_out_id(t, ev->id);
}

static int parse_blob(struct tpfmt *t, struct rd *r)
{
	static const unsigned char magic[] = { 23,  8,	 68,  't', 'r',
					       'a', 'c', 'i', 'n', 'g' };
	const unsigned char *m = rd_take(r, sizeof(magic));
	const char *version, *name;
	const unsigned char *b;
	uint32_t page_size, n, nsys, size32;
	uint64_t size;
	const void *p;
	char *buf;
	int err;
	bool big_host = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	if (!m || memcmp(m, magic, sizeof(magic))) {
		pr_err("TRACING_DATA: bad magic");
		return -EBADMSG;
	}
	version = rd_str(r);
	b = rd_take(r, 2);
	if (!version || !b)
		goto short_data;
	r->swap = (bool)b[0] != big_host;
	t->swap = r->swap;
	t->long_size = b[1];
	if (t->long_size != 4 && t->long_size != 8) {
		pr_err("TRACING_DATA: long size %d", t->long_size);
		return -EBADMSG;
	}
	if (!rd_u32(r, &page_size))
		goto short_data;
	tep_set_file_bigendian(t->tep,
			       b[0] ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t->tep,
				big_host ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(t->tep, t->long_size);
	tep_set_page_size(t->tep, (int)page_size);

	name = rd_str(r);
	if (!name || strcmp(name, "header_page") || !rd_u64(r, &size) ||
	    !(p = rd_take(r, size)))
		goto short_data;
	if (text_ok(p, (size_t)size)) {
		buf = dup_bytes(p, (size_t)size);
		if (!buf)
			return -ENOMEM;
		tep_parse_header_page(t->tep, buf, (unsigned long)size,
				      t->long_size);
		free(buf);
	}
	name = rd_str(r);
	if (!name || strcmp(name, "header_event") || !rd_u64(r, &size) ||
	    !rd_take(r, size))
		goto short_data;

	if (!rd_u32(r, &n))
		goto short_data;
	for (uint32_t i = 0; i < n; i++) {
		err = parse_one_format(t, r, "ftrace");
		if (err == -ENOMEM)
			return err;
		if (err)
			goto short_data;
	}
	if (!rd_u32(r, &nsys))
		goto short_data;
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = rd_str(r);

		if (!sys || !rd_u32(r, &n))
			goto short_data;
		for (uint32_t i = 0; i < n; i++) {
			err = parse_one_format(t, r, sys);
			if (err == -ENOMEM)
				return err;
			if (err)
				goto short_data;
		}
	}
	/* The tables after the formats only help printing: a file cut
	 * short there is still usable. */
	if (rd_u32(r, &size32) && (p = rd_take(r, size32))) {
		/* kallsyms: perf 6.1 writes none and its reader skips it. */
		if (rd_u32(r, &size32) && (p = rd_take(r, size32))) {
			if (size32 && printk_ok(p, size32)) {
				buf = dup_bytes(p, size32);
				if (buf)
					tep_parse_printk_formats(t->tep, buf);
				free(buf);
			}
			if (strtod(version, NULL) >= 0.6 && rd_u64(r, &size) &&
			    (p = rd_take(r, size)) && size) {
				buf = dup_bytes(p, (size_t)size);
				if (buf)
					tep_parse_saved_cmdlines(t->tep, buf);
				free(buf);
			}
		}
	}
	return 0;

short_data:
	pr_err("TRACING_DATA: truncated or damaged at byte %zu of %zu", r->off,
	       r->len);
	return -EBADMSG;
}

int tpfmt_new(const void *data, size_t len, struct tpfmt **out)
{
	struct tpfmt *t;
	struct rd r = { .p = data, .len = len };
	uint32_t max_min = 0;
	int err, nr;

	*out = NULL;
	if (!data)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->tep = tep_alloc();
	if (!t->tep) {
		tpfmt_free(t);
		return -ENOMEM;
	}
	/*
	 * libtraceevent's log level is process-wide and the application's
	 * to set (tep_set_loglevel()): at its default it prints nothing,
	 * and a damaged format is reported through our log callback.
	 */
	err = parse_blob(t, &r);
	if (err) {
		tpfmt_free(t);
		return err;
	}
	nr = tep_get_events_count(t->tep);
	for (int i = 0; i < nr; i++) {
		struct tep_event *ev = tep_get_event(t->tep, i);
		struct tep_format_field *f;
		uint32_t ms;

		if (!ev)
			continue;
		ms = event_min_size(ev);
		if (ms != UINT32_MAX && ms > max_min)
			max_min = ms;
		f = tep_find_common_field(ev, "common_type");
		if (f && !t->type_size && f->offset >= 0 &&
		    (f->size == 1 || f->size == 2 || f->size == 4 ||
		     f->size == 8)) {
			t->type_off = f->offset;
			t->type_size = f->size;
		}
	}
	t->scratch_len = 65536 + (size_t)max_min + TP_PAD;
	t->scratch = malloc(t->scratch_len);
	if (!t->scratch) {
		tpfmt_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void tpfmt_free(struct tpfmt *t)
{
	if (!t)
		return;
	for (size_t p = 0; p < TP_MAX_ID / TP_ID_PAGE; p++) {
		if (!t->byid[p])
			continue;
		for (size_t i = 0; i < TP_ID_PAGE; i++) {
			if (t->byid[p][i]) {
				free(t->byid[p][i]->ops);
				free(t->byid[p][i]);
			}
		}
		free(t->byid[p]);
	}
	while (t->arena) {
		struct arena_chunk *n = t->arena->next;

		free(t->arena);
		t->arena = n;
	}
	if (t->seq_init)
		trace_seq_destroy(&t->seq);
	if (t->tep)
		tep_free(t->tep);
	free(t->scratch);
	free(t);
}

/* tep_find_any_field(), but a damaged format can leave a field without a
 * name, which libtraceevent's lookup would pass to strcmp(). */
static struct tep_format_field *field_named(struct tep_event *ev,
					    const char *name)
{
	struct tep_format_field *lists[2] = { ev->format.common_fields,
					      ev->format.fields };

	for (int i = 0; i < 2; i++)
		for (struct tep_format_field *f = lists[i]; f; f = f->next)
			if (f->name && !strcmp(f->name, name))
				return f;
	return NULL;
}

int tpfmt_field_layout(struct tpfmt *t, int id, const char *name, uint32_t *off,
		       uint32_t *size)
{
	struct tep_event *ev = t ? tep_find_event(t->tep, id) : NULL;
	struct tep_format_field *f = ev ? field_named(ev, name) : NULL;

	if (!f || (f->flags & (TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_RELATIVE)))
		return -ENOENT;
	*off = (uint32_t)f->offset;
	*size = (uint32_t)f->size;
	return 0;
}

int tpfmt_field(struct tpfmt *t, const void *raw, uint32_t size,
		const char *name, uint64_t *num, char *buf, size_t len)
{
	const unsigned char *data = raw;
	struct tep_format_field *f;
	struct tp_ev *te;
	uint32_t off, flen;

	if (!t || !raw || !name)
		return -ENOENT;
	te = lookup(t, data, size);
	if (!te || !te->ev)
		return -ENOENT;
	f = field_named(te->ev, name);
	if (!f)
		return -ENOENT;
	if ((uint64_t)f->offset + (uint64_t)f->size > size)
		return -EBADMSG;
	off = (uint32_t)f->offset;
	flen = (uint32_t)f->size;
	if (f->flags & (TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_RELATIVE)) {
		uint64_t v;

		if (flen != 4 && flen != 2)
			return -EBADMSG;
		v = tep_read_number(t->tep, data + off, (int)flen);
		if (flen == 4) {
			flen = (uint32_t)(v >> 16) & 0xffff;
			off = (f->flags & TEP_FIELD_IS_RELATIVE ? off + 4 : 0) +
			      ((uint32_t)v & 0xffff);
		} else {
			off = (uint32_t)v;
			flen = off <= size ? size - off : 0;
		}
		if ((uint64_t)off + flen > size)
			return -EBADMSG;
	} else if (!(f->flags & TEP_FIELD_IS_STRING) &&
		   !(f->flags & TEP_FIELD_IS_ARRAY) &&
		   (flen == 1 || flen == 2 || flen == 4 || flen == 8)) {
		uint64_t v = tep_read_number(t->tep, data + off, (int)flen);

		/* signed fields sign-extended */
		if ((f->flags & TEP_FIELD_IS_SIGNED) && flen < 8 &&
		    (v >> (flen * 8 - 1) & 1))
			v |= ~0ull << (flen * 8);
		if (num)
			*num = v;
		return 0;
	}
	/* Text: up to the first NUL of the field. */
	if (buf && len) {
		size_t n = strnlen((const char *)data + off, flen);

		if (n >= len)
			n = len - 1;
		memcpy(buf, data + off, n);
		buf[n] = '\0';
	}
	return 1;
}
