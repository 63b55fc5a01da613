// SPDX-License-Identifier: MIT
/*
 * perfring annotate: perf annotate --stdio.  The samples' ips are read
 * through the sample reader (the same resolution as script and report),
 * grouped per event and symbol, and the symbol's code, read from the
 * object that was recorded (build-id checked, perf's cache otherwise), is
 * disassembled with capstone in AT&T syntax and printed the way perf
 * prints objdump's lines (docs/design.md: where capstone differs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../machine/srcline.h"
#include "annotate_text.h"
#include "reader_machine.h"

/* One sampled address of a symbol. */
struct hit {
	uint64_t addr; /* ELF vaddr */
	uint64_t period;
};

/* The samples of one symbol for one event. */
struct asym {
	struct dso *dso;
	const struct symbol *sym;
	uint32_t event;
	uint32_t seq; /* first seen: ties keep the file's order */
	char *event_name;
	uint64_t samples, period;
	struct hit *hits;
	size_t nr_hits, cap_hits;
};

struct annotate {
	struct perfring_annotate_opts o;
	struct perfring_data *r;
	struct asym *v;
	size_t nr, cap;
	size_t last; /* index of the last symbol hit: samples repeat */
};

static struct asym *asym_find(struct annotate *a, const struct symbol *sym,
			      struct dso *dso, uint32_t event)
{
	struct asym *s;

	if (a->last < a->nr && a->v[a->last].sym == sym &&
	    a->v[a->last].event == event)
		return &a->v[a->last];
	for (size_t i = 0; i < a->nr; i++) {
		if (a->v[i].sym == sym && a->v[i].event == event) {
			a->last = i;
			return &a->v[i];
		}
	}
	if (a->nr == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct asym *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	s = &a->v[a->nr];
	memset(s, 0, sizeof(*s));
	s->sym = sym;
	s->dso = dso;
	s->event = event;
	s->seq = (uint32_t)a->nr;
	a->last = a->nr++;
	return s;
}

static int on_sample(struct perfring_data *r, const struct perfring_sample *s,
		     void *ctx)
{
	struct annotate *a = ctx;
	struct machine *m = reader_machine(r);
	const struct perfring_frame *fr = &s->ip;
	const struct symbol *sym;
	struct asym *as;
	struct dso *dso;
	uint64_t addr;

	if (!fr->dso || !fr->sym || fr->kernel)
		return 0;
	if (a->o.event && strcmp(a->o.event, s->event))
		return 0;
	if (a->o.symbol && strcmp(a->o.symbol, fr->sym))
		return 0;
	dso = dsos_findnew(&m->dsos, fr->dso, strlen(fr->dso));
	if (!dso || dso->kind != DSO_FILE)
		return 0;
	addr = dso_addr(dso, fr->addr);
	sym = dso_find_symbol(dso, addr);
	if (!sym)
		return 0;
	as = asym_find(a, sym, dso, s->event_index);
	if (!as)
		return -ENOMEM;
	if (!as->event_name) {
		as->event_name = strdup(s->event ? s->event : "");
		if (!as->event_name)
			return -ENOMEM;
	}
	if (as->nr_hits == as->cap_hits) {
		size_t cap = as->cap_hits ? 2 * as->cap_hits : 16;
		struct hit *v = realloc(as->hits, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		as->hits = v;
		as->cap_hits = cap;
	}
	as->hits[as->nr_hits++] = (struct hit){ addr, s->period };
	as->samples++;
	as->period += s->period;
	return 0;
}

static int hit_cmp(const void *x, const void *y)
{
	const struct hit *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int asym_cmp(const void *x, const void *y)
{
	const struct asym *a = x, *b = y;

	if (a->event != b->event)
		return a->event < b->event ? -1 : 1;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The bytes of [start, end) of the ELF file @path into *@code (malloc'd). */
static int read_code(const char *path, uint64_t start, uint64_t end,
		     unsigned char **code, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || start < sh.sh_addr ||
		    start - sh.sh_addr >= sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			break;
		n = end > start ? end - start : 1;
		if (n > sh.sh_size - (start - sh.sh_addr))
			n = sh.sh_size - (start - sh.sh_addr);
		*code = malloc(n);
		if (!*code) {
			err = -ENOMEM;
			break;
		}
		memcpy(*code, (const char *)d->d_buf + (start - sh.sh_addr), n);
		*len = n;
		err = 0;
		break;
	}
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

/* One source file's lines, read once. */
struct srcfile {
	char *path;
	char *text;
	char **lines;
	int nr;
};

static void srcfile_load(struct srcfile *f, const char *path)
{
	FILE *in;
	size_t cap = 0, n;
	char *p;

	free(f->text);
	free(f->lines);
	free(f->path);
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	in = fopen(path, "re");
	if (!in)
		return;
	f->text = malloc(1 << 20);
	n = f->text ? fread(f->text, 1, (1 << 20) - 1, in) : 0;
	fclose(in);
	if (!f->text)
		return;
	f->text[n] = 0;
	for (p = f->text; *p;) {
		char *nl = strchr(p, '\n');

		if (f->nr == (int)cap) {
			char **v;

			cap = cap ? 2 * cap : 256;
			v = realloc(f->lines, cap * sizeof(*v));
			if (!v)
				return;
			f->lines = v;
		}
		f->lines[f->nr++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
}

static const char *srcfile_line(struct srcfile *f, const char *path, int line)
{
	if (!f->path || strcmp(f->path, path))
		srcfile_load(f, path);
	if (line < 1 || line > f->nr)
		return NULL;
	return f->lines[line - 1];
}

/* The source line before the instruction at @addr when it changed. */
static void put_source(FILE *out, struct srclines *src, struct srcfile *sf,
		       struct dso *dso, uint64_t addr, char *last, size_t len)
{
	const char *file, *text;
	char key[PATH_MAX + 16];
	int line;

	if (srcline_line(src, dso, addr, &file, &line) != 1)
		return;
	snprintf(key, sizeof(key), "%s:%d", file, line);
	if (!strcmp(key, last))
		return;
	snprintf(last, len, "%s", key);
	text = srcfile_line(sf, file, line);
	if (!text) {
		fprintf(out, "         : %-4d %s\n", line, key);
		return;
	}
	while (*text == ' ' || *text == '\t')
		text++;
	fprintf(out, "         : %-4d %s\n", line, text);
}

static int annotate_one(struct annotate *a, struct asym *as, csh cs,
			struct srclines *src, struct srcfile *sf, FILE *out)
{
	char path[PATH_MAX], head[512], last[PATH_MAX + 16] = "";
	unsigned char *code = NULL;
	size_t len = 0, h = 0;
	cs_insn *insn;
	int n, err;

	if (!dso_code_path(as->dso, path)) {
		pr_warn("annotate %s: no object code for %s (not the recorded build-id, or gone)",
			as->sym->name, as->dso->name);
		return -ENOENT;
	}
	err = read_code(path, as->sym->start, as->sym->end, &code, &len);
	if (err) {
		pr_warn("annotate %s: cannot read its code from %s: %s",
			as->sym->name, path, strerror(-err));
		return err;
	}
	qsort(as->hits, as->nr_hits, sizeof(*as->hits), hit_cmp);
	n = snprintf(
		head, sizeof(head),
		" Percent |\tSource code & Disassembly of %s for %s (%" PRIu64
		" samples, percent: local period)",
		as->dso->short_name, as->event_name, as->samples);
	fprintf(out, "%s\n", head);
	for (int i = 0; i < n + 5 && i < (int)sizeof(head); i++)
		fputc('-', out);
	fputs("\n         :\n", out);
	fprintf(out, "         : %016" PRIx64 " <%s>:\n", as->sym->start,
		as->sym->name);
	insn = cs_malloc(cs);
	if (!insn) {
		free(code);
		return -ENOMEM;
	}
	for (const uint8_t *p = code; p < code + len;) {
		uint64_t at = as->sym->start + (uint64_t)(p - code), period = 0;
		size_t left = len - (size_t)(p - code);
		const uint8_t *was = p;
		char text[256];
		size_t isz;

		if (cs_disasm_iter(cs, &p, &left, &at, insn)) {
			at = insn->address;
			annotate_insn_text(cs, insn, as->dso, text,
					   sizeof(text));
			isz = insn->size;
		} else {
			/* what capstone 4 does not know (AVX-512 mask
			 * instructions): its bytes, as objdump's .byte */
			isz = annotate_unknown_len(was,
						   len - (size_t)(was - code));
			annotate_bytes_text(at, was, isz, text, sizeof(text));
			p = was + isz;
		}
		while (h < as->nr_hits && as->hits[h].addr < at)
			h++;
		/* a sample inside an instruction (not on its first byte)
		 * counts for the instruction, as perf's offsets do */
		while (h < as->nr_hits && as->hits[h].addr < at + isz)
			period += as->hits[h++].period;
		if (!a->o.no_source)
			put_source(out, src, sf, as->dso, at, last,
				   sizeof(last));
		fprintf(out, " %7.2f :   %s\n",
			as->period ?
				100.0 * (double)period / (double)as->period :
				0.0,
			text);
	}
	cs_free(insn, 1);
	free(code);
	return 0;
}

PERFRING_API int perfring_annotate(const struct perfring_annotate_opts *opts,
				   FILE *out)
{
	PERFRING_OPTS(perfring_script_opts, so);
	struct annotate a = { 0 };
	struct srclines *src = NULL;
	struct srcfile sf = { 0 };
	size_t done = 0;
	csh cs = 0;
	int err;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	OPTS_COPY(&a.o, opts);
	so.input = a.o.input ? a.o.input : "perf.data";
	so.symfs = a.o.symfs;
	err = perfring_data_open(&so, &a.r);
	if (err)
		return err;
	err = perfring_data_run(a.r, on_sample, &a);
	if (err && err != -EBADMSG)
		goto out;
	if (!a.nr) {
		pr_warn("annotate: %s%s has no samples%s%s", so.input,
			a.o.symbol ? ": symbol" : "", a.o.symbol ? " " : "",
			a.o.symbol ? a.o.symbol : "");
		err = a.o.symbol ? -ENOENT : 0;
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		err = -ENOMEM;
		goto out;
	}
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	src = srclines_new();
	if (src)
		srclines_set_full_path(src, true);
	qsort(a.v, a.nr, sizeof(*a.v), asym_cmp);
	err = 0;
	for (size_t i = 0; i < a.nr && !ferror(out); i++) {
		if (!annotate_one(&a, &a.v[i], cs, src, &sf, out))
			done++;
	}
	if (!done)
		err = -ENOENT;
	if (ferror(out))
		err = errno == EPIPE ? -EPIPE : -EIO;
out:
	for (size_t i = 0; i < a.nr; i++) {
		free(a.v[i].hits);
		free(a.v[i].event_name);
	}
	free(a.v);
	free(sf.path);
	free(sf.text);
	free(sf.lines);
	if (src)
		srclines_free(src);
	if (cs)
		cs_close(&cs);
	perfring_data_close(a.r);
	return err;
}
