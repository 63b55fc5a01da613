// SPDX-License-Identifier: MIT
/*
 * Application event descriptions: declaration parsing, the events-file
 * line, the payload layout and the format text (see app_format.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "app_format.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

PR_HIDDEN const char *app_runtime_dir(void)
{
	struct statfs sf;

	/* A container's /dev/shm may be small (64 MiB): want room. */
	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize >= (512ull << 20) &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

static const struct {
	const char *name;
	uint32_t size;
	bool is_signed;
	const char *c_type; /* as the format file names it */
	const char *printf_conv;
} types[] = {
	[APP_U8] = { "u8", 1, false, "u8", "%u" },
	[APP_U16] = { "u16", 2, false, "u16", "%u" },
	[APP_U32] = { "u32", 4, false, "u32", "%u" },
	[APP_U64] = { "u64", 8, false, "u64", "%llu" },
	[APP_S8] = { "s8", 1, true, "s8", "%d" },
	[APP_S16] = { "s16", 2, true, "s16", "%d" },
	[APP_S32] = { "s32", 4, true, "s32", "%d" },
	[APP_S64] = { "s64", 8, true, "s64", "%lld" },
	[APP_STRING] = { "string", 4, true, "__data_loc char[]", "%s" },
	[APP_BYTES] = { "bytes", 4, false, "__data_loc u8[]", "%s" },
};

#define NR_TYPES (sizeof(types) / sizeof(types[0]))

static bool ident_ok(const char *s, size_t n)
{
	if (!n || n > APP_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '_' || (i && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

static bool reserved(const char *name)
{
	return !strncmp(name, "common_", 7);
}

/*
 * Words libtraceevent (1.7 to 1.8) rewrites wherever its tokenizer meets
 * them in a format, an old mac80211 workaround: as an event or field name
 * they turn into a string and perf cannot parse the format.
 */
static bool tep_rewrites(const char *name)
{
	return !strcmp(name, "LOCAL_PR_FMT") || !strcmp(name, "STA_PR_FMT") ||
	       !strcmp(name, "VIF_PR_FMT");
}

/*
 * Why @provider and @name cannot name an event perf decodes, or NULL.
 * The provider becomes the event's system in TRACING_DATA, and system
 * "ftrace" is the kernel's own: libtraceevent reads its events as ftrace
 * events (a "bprint" as a binary printk, whose printing crashes without
 * the kernel's fields).
 */
static const char *names_refused(const char *provider, const char *name)
{
	if (!strcmp(provider, "ftrace"))
		return "the provider \"ftrace\" is the kernel's own system";
	if (tep_rewrites(provider) || tep_rewrites(name))
		return "LOCAL_PR_FMT, STA_PR_FMT and VIF_PR_FMT are rewritten by libtraceevent";
	return NULL;
}

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* Offsets: integers as a C struct, then one __data_loc word per
 * string/bytes field, then their contents. */
static void layout(struct app_event_desc *d)
{
	uint32_t off = 0, max_align = 1, loc;

	d->nr_dyn = 0;
	for (uint32_t i = 0; i < d->nr_fields; i++) {
		struct app_field *f = &d->fields[i];

		if (f->type >= APP_STRING) {
			d->dyn[d->nr_dyn++] = (uint8_t)i;
			continue;
		}
		f->size = types[f->type].size;
		off = align_up(off, f->size);
		f->offset = off;
		off += f->size;
		if (f->size > max_align)
			max_align = f->size;
	}
	d->fixed_size = off ? align_up(off, max_align) : 0;
	loc = align_up(d->fixed_size, 4);
	for (uint32_t k = 0; k < d->nr_dyn; k++) {
		struct app_field *f = &d->fields[d->dyn[k]];

		f->size = 4;
		f->offset = loc + 4 * k;
	}
	d->dyn_data_off = loc + 4 * d->nr_dyn;
	d->payload_fixed = d->dyn_data_off;
}

/* "type name, type name" (also the events-file form "type name,..."). */
static const char *parse_fields(const char *s, size_t n,
				struct app_event_desc *d)
{
	size_t i = 0;

	d->nr_fields = 0;
	while (i < n) {
		size_t ts, te, ns, ne;
		struct app_field *f;
		uint32_t t;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		ts = i;
		while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != ',')
			i++;
		te = i;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		ns = i;
		while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != ',')
			i++;
		ne = i;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i < n && s[i] != ',')
			return "fields: expected ',' between fields";
		if (i < n)
			i++;
		if (te == ts || ne == ns)
			return "fields: each field is \"type name\"";
		if (d->nr_fields == APP_MAX_FIELDS)
			return "fields: more than 32";
		for (t = 0; t < NR_TYPES; t++)
			if (strlen(types[t].name) == te - ts &&
			    !memcmp(types[t].name, s + ts, te - ts))
				break;
		if (t == NR_TYPES)
			return "fields: unknown type (u8 u16 u32 u64 s8 s16 s32 s64 string bytes)";
		if (!ident_ok(s + ns, ne - ns))
			return "fields: a field name is not a C identifier of at most 63 characters";
		f = &d->fields[d->nr_fields++];
		memcpy(f->name, s + ns, ne - ns);
		f->name[ne - ns] = 0;
		f->type = (uint8_t)t;
		if (reserved(f->name))
			return "fields: names starting with common_ are the format's own";
		if (tep_rewrites(f->name))
			return "fields: LOCAL_PR_FMT, STA_PR_FMT and VIF_PR_FMT are rewritten by libtraceevent";
		for (uint32_t k = 0; k + 1 < d->nr_fields; k++)
			if (!strcmp(d->fields[k].name, f->name))
				return "fields: a name is used twice";
	}
	layout(d);
	return NULL;
}

PR_HIDDEN const char *app_desc_parse_decl(const char *provider,
					  const char *name, const char *fields,
					  struct app_event_desc *d)
{
	const char *why;

	memset(d, 0, sizeof(*d));
	if (!provider || !ident_ok(provider, strlen(provider)))
		return "the provider is not a C identifier of at most 63 characters";
	if (!name || !ident_ok(name, strlen(name)))
		return "the name is not a C identifier of at most 63 characters";
	strcpy(d->provider, provider);
	strcpy(d->name, name);
	why = names_refused(provider, name);
	if (why)
		return why;
	return parse_fields(fields, strlen(fields), d);
}

PR_HIDDEN int app_desc_format(const struct app_event_desc *d, char *buf,
			      size_t size)
{
	size_t len;
	int n;

	n = snprintf(buf, size, "%u %s:%s ", d->id, d->provider, d->name);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	len = (size_t)n;
	for (uint32_t i = 0; i < d->nr_fields; i++) {
		n = snprintf(buf + len, size - len, "%s%s %s", i ? "," : "",
			     types[d->fields[i].type].name, d->fields[i].name);
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)n;
	}
	if (len + 2 > size)
		return -ENAMETOOLONG;
	buf[len++] = '\n';
	buf[len] = 0;
	return (int)len;
}

PR_HIDDEN const char *app_desc_parse_line(const char *line, size_t len,
					  struct app_event_desc *d)
{
	size_t i = 0, ps, pe, ns, ne;
	unsigned long id = 0;
	const char *why;

	memset(d, 0, sizeof(*d));
	if (len && line[len - 1] == '\n')
		len--;
	if (len > APP_LINE_MAX)
		return "line too long";
	while (i < len && line[i] >= '0' && line[i] <= '9' && id <= APP_LAST_ID)
		id = id * 10 + (unsigned long)(line[i++] - '0');
	if (!i || id < PERFRING_APP_FIRST_ID || id > APP_LAST_ID)
		return "event id out of range";
	if (i == len || line[i++] != ' ')
		return "expected a space after the id";
	ps = i;
	while (i < len && line[i] != ':' && line[i] != ' ')
		i++;
	pe = i;
	if (i == len || line[i++] != ':')
		return "expected provider:name";
	ns = i;
	while (i < len && line[i] != ' ')
		i++;
	ne = i;
	if (!ident_ok(line + ps, pe - ps) || !ident_ok(line + ns, ne - ns))
		return "provider or name is not a C identifier";
	memcpy(d->provider, line + ps, pe - ps);
	memcpy(d->name, line + ns, ne - ns);
	d->id = (uint32_t)id;
	why = names_refused(d->provider, d->name);
	if (why)
		return why;
	if (i < len)
		i++; /* the space before the fields */
	why = parse_fields(line + i, len - i, d);
	return why;
}

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t ncap = (b->cap + (size_t)n + 1) * 2;
			char *np = realloc(b->p, ncap);

			if (!np) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = ncap;
		}
	}
}

PR_HIDDEN int app_desc_format_file(const struct app_event_desc *d, char **out,
				   size_t *len)
{
	struct sbuf b = { 0 };

	b.p = malloc(1024);
	if (!b.p)
		return -ENOMEM;
	b.cap = 1024;
	b.p[0] = 0;
	sb_printf(&b, "name: %s\nID: %u\nformat:\n", d->name, d->id);
	sb_printf(
		&b,
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	/* Fields in layout order (integers, then the __data_loc words). */
	for (uint32_t pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < d->nr_fields; i++) {
			const struct app_field *f = &d->fields[i];

			if ((f->type >= APP_STRING) != (pass == 1))
				continue;
			sb_printf(
				&b,
				"\tfield:%s %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
				types[f->type].c_type, f->name,
				APP_COMMON_SIZE + f->offset, f->size,
				types[f->type].is_signed);
		}
	}
	sb_printf(&b, "\nprint fmt: \"");
	for (uint32_t i = 0; i < d->nr_fields; i++)
		sb_printf(&b, "%s%s=%s", i ? " " : "", d->fields[i].name,
			  types[d->fields[i].type].printf_conv);
	sb_printf(&b, "\"");
	for (uint32_t i = 0; i < d->nr_fields; i++) {
		const struct app_field *f = &d->fields[i];

		if (f->type == APP_STRING)
			sb_printf(&b, ", __get_str(%s)", f->name);
		else if (f->type == APP_BYTES)
			sb_printf(
				&b,
				", __print_hex(__get_dynamic_array(%s), __get_dynamic_array_len(%s))",
				f->name, f->name);
		else
			sb_printf(&b, ", REC->%s", f->name);
	}
	sb_printf(&b, "\n");
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
