// SPDX-License-Identifier: MIT
/* Source lines through libdw's dwfl (see srcline.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include "srcline.h"

struct src_obj {
	struct src_obj *next;
	const struct dso *dso;
	Dwfl *dwfl; /* NULL: no line tables to be had */
	Dwfl_Module *mod;
};

struct srclines {
	struct src_obj *objs;
	struct src_obj *last;
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct srclines *srclines_new(void)
{
	return calloc(1, sizeof(struct srclines));
}

void srclines_free(struct srclines *s)
{
	struct src_obj *o, *n;

	if (!s)
		return;
	for (o = s->objs; o; o = n) {
		n = o->next;
		if (o->dwfl)
			dwfl_end(o->dwfl);
		free(o);
	}
	free(s);
}

static struct src_obj *obj_for(struct srclines *s, const struct dso *dso)
{
	struct src_obj *o;

	if (s->last && s->last->dso == dso)
		return s->last;
	for (o = s->objs; o; o = o->next)
		if (o->dso == dso)
			return s->last = o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->dso = dso;
	o->next = s->objs;
	s->objs = o;
	s->last = o;
	/* The path the MMAP record names: a hostile file is only parsed by
	 * libdw, which checks what it reads. */
	if (dso->kind == DSO_FILE && dso->name[0] == '/') {
		o->dwfl = dwfl_begin(&offline_callbacks);
		if (o->dwfl) {
			o->mod = dwfl_report_offline(o->dwfl, dso->short_name,
						     dso->name, -1);
			dwfl_report_end(o->dwfl, NULL, NULL);
			if (!o->mod) {
				dwfl_end(o->dwfl);
				o->dwfl = NULL;
			}
		}
	}
	return o;
}

struct Dwfl_Module *srcline_module(struct srclines *s, struct dso *dso,
				   uint64_t *bias)
{
	struct src_obj *o = s ? obj_for(s, dso) : NULL;
	Dwarf_Addr b = 0;

	if (!o || !o->dwfl || !dwfl_module_getdwarf(o->mod, &b))
		return NULL;
	*bias = b;
	return o->mod;
}

static const char *base_name(const char *p)
{
	const char *slash = strrchr(p, '/');

	return slash ? slash + 1 : p;
}

size_t srcline_text(struct srclines *s, struct dso *dso, uint64_t addr,
		    uint64_t ip, char *buf, size_t len)
{
	struct src_obj *o = s ? obj_for(s, dso) : NULL;
	int n = -1;

	if (!len)
		return 0;
	if (o && o->dwfl) {
		Dwarf_Addr bias = 0;
		Dwfl_Line *line;

		/* vaddr + bias: where libdwfl placed the object */
		if (dwfl_module_getelf(o->mod, &bias)) {
			line = dwfl_module_getsrc(o->mod, addr + bias);
			if (line) {
				int lineno = 0;
				const char *file = dwfl_lineinfo(
					line, NULL, &lineno, NULL, NULL, NULL);

				n = snprintf(buf, len, "%s:%d",
					     file ? base_name(file) : "",
					     lineno);
			} else if (dwfl_module_getdwarf(o->mod, &bias)) {
				/* DWARF without a line for it (assembly):
				 * addr2line's "??:0", which perf prints so */
				n = snprintf(buf, len, ":0");
			}
		}
	}
	if (n < 0) /* perf's fallback: object[address] */
		n = snprintf(buf, len, "%s[%llx]", dso->short_name,
			     (unsigned long long)(dso->kernel ? ip : addr));
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}
