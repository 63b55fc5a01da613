// SPDX-License-Identifier: MIT
/*
 * An event's print format compiled (tpfmt.c says why): its arguments into
 * expression trees folded where constant, its format string into literal,
 * number and string steps, as libtraceevent's parse_args() and
 * eval_num_arg() read them, and the checks that decide whether the
 * compiled steps print it (fields in bounds, dynamic arrays, divisors).
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

static void *tp_arena_alloc(struct tpfmt *t, size_t n)
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
static uint64_t tp_cast_mask(const char *type)
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

static struct tep_format_field *tp_find_field(struct tep_event *ev,
					      struct tep_format_field *f,
					      const char *name)
{
	if (f)
		return f;
	return name ? tep_find_any_field(ev, name) : NULL;
}

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
		n->k = tp_eval(n, NULL, 0);
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
	struct enode *n = tp_arena_alloc(t, sizeof(*n));

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

static const struct enode *tp_compile_num(struct tpfmt *t, struct tep_event *ev,
					  struct tep_print_arg *arg);

/* eval_num_arg()'s cases we can do; NULL: leave the event to
 * libtraceevent. */
static const struct enode *tp_compile_num(struct tpfmt *t, struct tep_event *ev,
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
		f = tp_find_field(ev, arg->field.field, arg->field.name);
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
		n->a = tp_compile_num(t, ev, arg->typecast.item);
		n->k = tp_cast_mask(arg->typecast.type);
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
			n->a = tp_compile_num(t, ev, arg->op.left);
			n->b = tp_compile_num(t, ev, r->op.left);
			n->c = tp_compile_num(t, ev, r->op.right);
			return n->a && n->b && n->c ? fold(n) : NULL;
		}
		op = binop_code(arg->op.op);
		if (op < 0 || !strcmp(arg->op.op, "["))
			return NULL;
		n = new_enode(t, EN_BIN);
		if (!n)
			return NULL;
		n->op = (uint8_t)op;
		n->a = tp_compile_num(t, ev, arg->op.left);
		n->b = tp_compile_num(t, ev, arg->op.right);
		return n->a && n->b ? fold(n) : NULL;
	default:
		/* functions, arrays by address: libtraceevent's */
		return NULL;
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
	struct snode *n = tp_arena_alloc(t, sizeof(*n));
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
		f = tp_find_field(ev, arg->field.field, arg->field.name);
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
		n->val = tp_compile_num(t, ev, field);
		if (!n->val)
			return NULL;
		for (struct tep_print_flag_sym *x = fs; x; x = x->next)
			k++;
		fl = tp_arena_alloc(t, (k ? k : 1) * sizeof(*fl));
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
		f = tp_find_field(ev, arg->string.field, arg->string.string);
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
		n->val = tp_compile_num(t, ev, arg->op.left);
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
	char *buf = tp_arena_alloc(t, n + 1);
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
			op->num = tp_compile_num(t, ev, *arg);
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
			char *b = tp_arena_alloc(t, 4);

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

uint32_t tp_event_min_size(struct tep_event *ev)
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
		f = tp_find_field(te->ev, field->field.field,
				  field->field.name);
	}
	g.len = tp_compile_num(t, te->ev, len);
	g.el = el ? tp_compile_num(t, te->ev, el) : NULL;
	if (!f || f->offset < 0 || f->size < 0 || f->size > 0xffff || !g.len ||
	    (el && !g.el) || (g.dynamic && f->size != 2 && f->size != 4)) {
		te->unsafe = true;
		return;
	}
	g.off = (uint32_t)f->offset;
	g.fsize = (uint16_t)f->size;
	v = tp_arena_alloc(t, (te->nr_spans + 1) * sizeof(*v));
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
	v = tp_arena_alloc(t, (te->nr_cpumasks + 1) * sizeof(*v));
	if (!v) {
		te->unsafe = true;
		return;
	}
	if (te->nr_cpumasks)
		memcpy(v, te->cpumasks, te->nr_cpumasks * sizeof(*v));
	v[te->nr_cpumasks++] = g;
	te->cpumasks = v;
}

bool tp_cpumasks_ok(const struct tp_ev *te, const unsigned char *data,
		    uint32_t size)
{
	for (uint32_t i = 0; i < te->nr_cpumasks; i++) {
		const struct span_guard *g = &te->cpumasks[i];
		uint32_t o, l;

		tp_dyn_field(data, size, g->off, g->fsize, g->relative, &o, &l);
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
	te->dyns = tp_arena_alloc(t, n * sizeof(*te->dyns));
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

bool tp_dyns_ok(const struct tp_ev *te, const unsigned char *data,
		uint32_t size)
{
	for (uint32_t i = 0; i < te->nr_dyns; i++) {
		const struct span_guard *g = &te->dyns[i];
		uint64_t v, o, l;

		if ((uint64_t)g->off + g->fsize > size)
			return false;
		v = tp_read_num(data + g->off, g->fsize);
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
bool tp_spans_ok(const struct tp_ev *te, const unsigned char *data,
		 uint32_t size, uint32_t limit)
{
	for (uint32_t i = 0; i < te->nr_spans; i++) {
		const struct span_guard *g = &te->spans[i];
		uint64_t n = tp_eval(g->len, data, size) & 0xffffffffull;
		uint64_t el = g->el ? tp_eval(g->el, data, size) : 1;
		uint32_t o, l;

		if (g->dynamic)
			tp_dyn_field(data, size, g->off, g->fsize, g->relative,
				     &o, &l);
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
				const struct enode *d = tp_compile_num(
					t, te->ev, arg->op.right);
				const struct enode **v;

				v = d ? tp_arena_alloc(t, (te->nr_divisors +
							   1) * sizeof(*v)) :
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

void tp_compile_event(struct tpfmt *t, struct tp_ev *te)
{
	struct tep_event *ev = te->ev;
	struct tep_print_arg *arg = ev->print_fmt.args;
	const char *fmt = ev->print_fmt.format;
	struct fops fo = { 0 };
	int n;

	te->compiled = true;
	te->min_size = tp_event_min_size(ev);
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
