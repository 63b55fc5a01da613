// SPDX-License-Identifier: MIT
/*
 * Tracepoint payloads as text.  This file reads the TRACING_DATA blob
 * and holds the printer's life cycle; tpfmt_internal.h lists the others.
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
#include "tpfmt_internal.h"

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
	ok = tp_fmt_check(&v, p, (size_t)size);
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
	why = tp_event_unprintable(t, ev);
	if (!why)
		return 0;
	pr_warn("TRACING_DATA: event %s:%.64s (format at byte %zu) is left out: %s",
		sys, ev->name ? ev->name : "?", r->off - (size_t)size, why);
	return tp_leave_out_id(t, ev->id);
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
		ms = tp_event_min_size(ev);
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
	te = tp_lookup(t, data, size);
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
