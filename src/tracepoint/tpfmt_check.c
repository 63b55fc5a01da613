// SPDX-License-Identifier: MIT
/*
 * The format checks made before an event is handed to libtraceevent: its
 * fields, print format and arguments read by a small lexer, and what
 * libtraceevent would misread or crash on (unknown fields, divisors that
 * may be zero, subscripts, ternaries, unbalanced brackets) refused with
 * the reason, as are events it cannot print (an id clash, a second
 * bprint).
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
int tp_fmt_check(struct fmt_view *v, const char *s, size_t n)
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

/* Records of event @id are not printed (tp_lookup() finds this entry). */
int tp_leave_out_id(struct tpfmt *t, int id)
{
	struct tp_ev ***page, *te;

	if (id < 0 || id >= TP_MAX_ID)
		return 0; /* tp_lookup() never reaches it */
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
const char *tp_event_unprintable(struct tpfmt *t, struct tep_event *ev)
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
