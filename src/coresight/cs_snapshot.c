// SPDX-License-Identifier: MIT
/*
 * OpenCSD snapshot directory reader: see cs_snapshot.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/log.h"
#include "cs_ini.h"
#include "cs_snapshot.h"

#define INI_MAX (1u << 20) /* bytes of one .ini file */
#define INI_MAX_ENTRIES 65536
#define INI_TOTAL_MAX (64u << 20) /* bytes of all .ini files */
#define MAX_DEVICES 1024
#define MAX_BUFFERS 64
#define MAX_DUMPS 256 /* per device */
#define TRACE_MAX (1ull << 32) /* bytes of one trace buffer */
#define DUMP_MAX (1ull << 30) /* bytes of one memory dump file */

struct reg {
	const char *name; /* before any "(...)" */
	const char *val;
	int line;
};

struct dump {
	const char *file, *space;
	uint64_t addr, offset, length;
	bool has_length;
};

struct device {
	struct cs_ini ini;
	const char *name, *cls, *type;
	struct reg *regs;
	int nregs;
	struct dump *dumps;
	int ndumps;
};

struct buffer {
	const char *name, *file, *format;
};

struct pair {
	const char *a, *b; /* source -> buffer, core -> source */
};

struct loaded {
	char *name;
	uint8_t *data;
	size_t len;
};

struct memreg {
	uint64_t addr, len;
	const uint8_t *p;
};

struct css {
	css_read_fn rd;
	void *ctx;
	char *label;
	struct cs_ini snap, trace;
	struct device *dev;
	int ndev;
	struct buffer buf[MAX_BUFFERS];
	int nbuf;
	struct pair *srcbuf, *coresrc;
	int nsrcbuf, ncoresrc;
	struct loaded *files; /* memory dumps read (kept for the decoder) */
	int nfiles;
	char *dir; /* css_open_dir() */
	int dirfd;
	struct memreg *mem; /* memory images given to the decoder */
	int nmem;
	size_t ini_bytes; /* read so far (INI_TOTAL_MAX) */
	enum css_framing framing; /* css_set_framing() */
};

/* Feeds trace bytes to a decode tree as the framing wants them. */
struct feeder {
	struct csd *d;
	bool dstream; /* drop the footer of every DSTREAM block */
	uint32_t pos; /* offset in the current DSTREAM block */
};

static int feed(struct feeder *f, const uint8_t *p, size_t len)
{
	const uint32_t data = CSS_DSTREAM_BLOCK - CSS_DSTREAM_FOOTER;
	int ret = 0;

	while (len && !ret) {
		size_t n;

		if (!f->dstream) {
			/* trc_pkt_lister's 1 KiB pieces: the same listing. */
			n = len > CSS_FEED_CHUNK ? CSS_FEED_CHUNK : len;
			ret = csd_feed(f->d, p, n);
		} else if (f->pos < data) {
			/* The trace of a block, in one piece as
			 * trc_pkt_lister -dstream_format feeds it. */
			n = data - f->pos < len ? data - f->pos : len;
			ret = csd_feed(f->d, p, n);
			f->pos += (uint32_t)n;
		} else {
			n = CSS_DSTREAM_BLOCK - f->pos < len ?
				    CSS_DSTREAM_BLOCK - f->pos :
				    len;
			f->pos = (f->pos + (uint32_t)n) % CSS_DSTREAM_BLOCK;
		}
		p += n;
		len -= n;
	}
	return ret;
}

int css_framing_parse(const char *name)
{
	static const char *const names[] = {
		[CSS_FRAMING_AUTO] = "auto",
		[CSS_FRAMING_FRAMES] = "frames",
		[CSS_FRAMING_TPIU] = "tpiu",
		[CSS_FRAMING_TPIU_HSYNC] = "tpiu-hsync",
		[CSS_FRAMING_DSTREAM] = "dstream",
		[CSS_FRAMING_RAW] = "raw",
	};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -EINVAL;
}

void css_set_framing(struct css *s, enum css_framing f)
{
	s->framing = f;
}

/* Reads and parses one .ini file. */
static int ini_load(struct css *s, const char *name, struct cs_ini *ini)
{
	uint8_t *data = NULL;
	size_t len = 0;
	char label[PATH_MAX + 256], *text;
	int ret;

	memset(ini, 0, sizeof(*ini));
	ini->name = strdup(name);
	if (!ini->name)
		return -ENOMEM;
	ret = s->rd(s->ctx, name, INI_MAX, &data, &len);
	if (ret < 0) {
		pr_err("%s: cannot read %s: %s", s->label, name,
		       ret == -EFBIG ? "larger than 1 MiB" : strerror(-ret));
		return ret;
	}
	if (len > INI_TOTAL_MAX - s->ini_bytes) {
		pr_err("%s: %s: the .ini files pass %u MiB together", s->label,
		       name, INI_TOTAL_MAX >> 20);
		free(data);
		return -EBADMSG;
	}
	s->ini_bytes += len;
	text = realloc(data, len + 1);
	if (!text) {
		free(data);
		return -ENOMEM;
	}
	snprintf(label, sizeof(label), "%s: %s", s->label, name);
	return cs_ini_parse(ini, text, len, label, INI_MAX_ENTRIES);
}

static int parse_u64(const struct css *s, const char *file, int line,
		     const char *what, const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	if (!v || !*v || *v == '-')
		goto bad;
	*out = strtoull(v, &end, 0);
	if (errno || *end)
		goto bad;
	return 0;
bad:
	pr_err("%s: %s:%d: %s: '%s' is not a number", s->label, file, line,
	       what, v ? v : "");
	return -EBADMSG;
}

/* A file name from the snapshot: relative, no "..". */
static bool safe_name(const char *n)
{
	const char *p = n;

	if (!*n || *n == '/')
		return false;
	while (*p) {
		const char *sl = strchr(p, '/');
		size_t l = sl ? (size_t)(sl - p) : strlen(p);

		if (l == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += l;
		if (*p)
			p++;
	}
	return true;
}

static int device_load(struct css *s, const char *file, struct device *d)
{
	struct cs_ini *ini = &d->ini;
	int ret = ini_load(s, file, ini), cap = 0;

	if (ret < 0)
		return ret;
	d->name = cs_ini_str(ini, "device", "name");
	d->cls = cs_ini_str(ini, "device", "class");
	d->type = cs_ini_str(ini, "device", "type");
	if (!d->name || !*d->name) {
		pr_err("%s: %s: no [device] name", s->label, file);
		return -EBADMSG;
	}
	if (!d->type)
		d->type = "";
	d->regs = calloc(ini->n ? ini->n : 1, sizeof(*d->regs));
	if (!d->regs)
		return -ENOMEM;
	for (int i = 0; i < ini->n; i++) {
		const struct cs_ini_ent *e = &ini->e[i];

		if (!strcasecmp(e->sect, "regs")) {
			char *par = strchr(e->key, '(');

			if (par)
				*par = 0; /* "TRCIDR0(0x078)" */
			d->regs[d->nregs].name = e->key;
			d->regs[d->nregs].val = e->val;
			d->regs[d->nregs].line = e->line;
			d->nregs++;
		}
	}
	/* [dumpN] sections, in file order: each section header starts one
	 * (its entries share the section string). */
	for (int i = 0; i < ini->n; i++) {
		const char *sect = ini->e[i].sect;
		struct dump *dp;
		const struct cs_ini_ent *e;

		if (strncasecmp(sect, "dump", 4) ||
		    (i && ini->e[i - 1].sect == sect))
			continue;
		if (d->ndumps == MAX_DUMPS) {
			pr_err("%s: %s: more than %d memory dumps", s->label,
			       file, MAX_DUMPS);
			return -EBADMSG;
		}
		if (d->ndumps == cap) {
			int nc = cap ? cap * 2 : 4;
			struct dump *nd = realloc(d->dumps, nc * sizeof(*nd));

			if (!nd)
				return -ENOMEM;
			d->dumps = nd;
			cap = nc;
		}
		dp = &d->dumps[d->ndumps];
		memset(dp, 0, sizeof(*dp));
		e = cs_ini_get_at(ini, i, "file");
		dp->file = e ? e->val : NULL;
		e = cs_ini_get_at(ini, i, "space");
		dp->space = e ? e->val : NULL;
		if (!dp->file || !safe_name(dp->file)) {
			pr_err("%s: %s: [%s]: %s file name '%s'", s->label,
			       file, sect, dp->file ? "unsafe" : "no",
			       dp->file ? dp->file : "");
			return -EBADMSG;
		}
		e = cs_ini_get_at(ini, i, "address");
		if (!e) {
			pr_err("%s: %s: [%s]: no address", s->label, file,
			       sect);
			return -EBADMSG;
		}
		if (parse_u64(s, file, e->line, "address", e->val, &dp->addr))
			return -EBADMSG;
		e = cs_ini_get_at(ini, i, "offset");
		if (e &&
		    parse_u64(s, file, e->line, "offset", e->val, &dp->offset))
			return -EBADMSG;
		e = cs_ini_get_at(ini, i, "length");
		if (e) {
			if (parse_u64(s, file, e->line, "length", e->val,
				      &dp->length))
				return -EBADMSG;
			dp->has_length = true;
		}
		d->ndumps++;
	}
	return 0;
}

void css_free(struct css *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->ndev; i++) {
		cs_ini_free(&s->dev[i].ini);
		free(s->dev[i].regs);
		free(s->dev[i].dumps);
	}
	free(s->dev);
	cs_ini_free(&s->snap);
	cs_ini_free(&s->trace);
	free(s->srcbuf);
	free(s->coresrc);
	for (int i = 0; i < s->nfiles; i++) {
		free(s->files[i].name);
		free(s->files[i].data);
	}
	free(s->files);
	free(s->mem);
	free(s->label);
	free(s->dir);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
}

static struct device *find_device(struct css *s, const char *name)
{
	for (int i = 0; i < s->ndev; i++)
		if (!strcmp(s->dev[i].name, name))
			return &s->dev[i];
	return NULL;
}

/* snapshot.ini's [device_list]: each device's ini, names unique. */
static int parse_devices(struct css *s)
{
	int ret;

	for (int i = 0; i < s->snap.n; i++) {
		const struct cs_ini_ent *e = &s->snap.e[i];
		struct device *nd;

		if (strcasecmp(e->sect, "device_list"))
			continue;
		if (s->ndev == MAX_DEVICES) {
			pr_err("%s: snapshot.ini: more than %d devices",
			       s->label, MAX_DEVICES);
			return -EBADMSG;
		}
		if (!safe_name(e->val)) {
			pr_err("%s: snapshot.ini:%d: unsafe file name '%s'",
			       s->label, e->line, e->val);
			return -EBADMSG;
		}
		nd = realloc(s->dev, (s->ndev + 1) * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		s->dev = nd;
		memset(&s->dev[s->ndev], 0, sizeof(s->dev[0]));
		s->ndev++;
		ret = device_load(s, e->val, &s->dev[s->ndev - 1]);
		if (ret < 0)
			return ret;
		for (int j = 0; j < s->ndev - 1; j++) {
			if (!strcmp(s->dev[j].name, s->dev[s->ndev - 1].name)) {
				pr_err("%s: %s: device name '%s' used twice",
				       s->label, e->val, s->dev[j].name);
				return -EBADMSG;
			}
		}
	}
	return 0;
}

/* One [bufferN] section named in [trace_buffers] buffers= (@meta: the
 * metadata file, for messages). */
static int parse_buffer(struct css *s, const char *meta, const char *t)
{
	struct buffer *b;

	if (s->nbuf == MAX_BUFFERS) {
		pr_err("%s: %s: more than %d buffers", s->label, meta,
		       MAX_BUFFERS);
		return -EBADMSG;
	}
	b = &s->buf[s->nbuf];
	b->name = cs_ini_str(&s->trace, t, "name");
	b->file = cs_ini_str(&s->trace, t, "file");
	b->format = cs_ini_str(&s->trace, t, "format");
	if (!b->name || !b->file || !safe_name(b->file)) {
		pr_err("%s: %s: buffer section [%s]: %s", s->label, meta, t,
		       !b->name ? "no name" :
		       !b->file ? "no file" :
				  "unsafe file name");
		return -EBADMSG;
	}
	if (!b->format)
		b->format = "coresight";
	s->nbuf++;
	return 0;
}

/* The trace metadata's [trace_buffers] buffers=, each a section. */
static int parse_buffers(struct css *s, const char *meta)
{
	const char *list = cs_ini_str(&s->trace, "trace_buffers", "buffers");
	char *copy, *tok, *save = NULL;
	int ret = 0;

	if (!list) {
		pr_err("%s: %s: no [trace_buffers] buffers", s->label, meta);
		return -EBADMSG;
	}
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *t = cs_ini_trim(tok, tok + strlen(tok));

		if (!*t)
			continue;
		ret = parse_buffer(s, meta, t);
		if (ret < 0)
			break;
	}
	free(copy);
	if (ret < 0)
		return ret;
	if (!s->nbuf) {
		pr_err("%s: %s: no trace buffers", s->label, meta);
		return -EBADMSG;
	}
	return 0;
}

/* [source_buffers] and [core_trace_sources]: the pairs they list. */
static int parse_pairs(struct css *s)
{
	s->srcbuf = calloc(s->trace.n ? s->trace.n : 1, sizeof(struct pair));
	s->coresrc = calloc(s->trace.n ? s->trace.n : 1, sizeof(struct pair));
	if (!s->srcbuf || !s->coresrc)
		return -ENOMEM;
	for (int i = 0; i < s->trace.n; i++) {
		const struct cs_ini_ent *e = &s->trace.e[i];

		if (!strcasecmp(e->sect, "source_buffers")) {
			s->srcbuf[s->nsrcbuf].a = e->key;
			s->srcbuf[s->nsrcbuf++].b = e->val;
		} else if (!strcasecmp(e->sect, "core_trace_sources")) {
			s->coresrc[s->ncoresrc].a = e->key;
			s->coresrc[s->ncoresrc++].b = e->val;
		}
	}
	return 0;
}

int css_parse(css_read_fn rd, void *ctx, const char *label, struct css **out)
{
	struct css *s = calloc(1, sizeof(*s));
	const char *meta;
	int ret;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->dirfd = -1;
	s->rd = rd;
	s->ctx = ctx;
	s->label = strdup(label);
	if (!s->label) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = ini_load(s, "snapshot.ini", &s->snap);
	if (ret >= 0)
		ret = parse_devices(s);
	if (ret < 0)
		goto fail;
	/* Trace metadata. */
	meta = cs_ini_str(&s->snap, "trace", "metadata");
	if (!meta) {
		pr_err("%s: snapshot.ini: no [trace] metadata: no trace",
		       s->label);
		ret = -EBADMSG;
		goto fail;
	}
	if (!safe_name(meta)) {
		pr_err("%s: snapshot.ini: unsafe metadata file name '%s'",
		       s->label, meta);
		ret = -EBADMSG;
		goto fail;
	}
	ret = ini_load(s, meta, &s->trace);
	if (ret >= 0)
		ret = parse_buffers(s, meta);
	if (ret >= 0)
		ret = parse_pairs(s);
	if (ret < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	css_free(s);
	return ret;
}

int css_nr_buffers(const struct css *s)
{
	return s->nbuf;
}

const char *css_buffer_name(const struct css *s, int i)
{
	return i >= 0 && i < s->nbuf ? s->buf[i].name : NULL;
}

/* ---- reading files from a directory ---- */

static int dir_read(void *ctx, const char *name, size_t max, uint8_t **data,
		    size_t *len)
{
	struct css *s = ctx;

	return cs_read_file(s->dirfd, name, max, (char **)data, len);
}

int css_open_dir(const char *dir, struct css **out)
{
	/* The reader needs the directory before the snapshot exists: a
	 * small holder passed as the context. */
	struct css *holder = calloc(1, sizeof(*holder));
	int ret;

	*out = NULL;
	if (!holder)
		return -ENOMEM;
	holder->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (holder->dirfd < 0) {
		ret = -errno;
		pr_err("%s: %s", dir, strerror(errno));
		free(holder);
		return ret;
	}
	ret = css_parse(dir_read, holder, dir, out);
	if (ret == 0) {
		(*out)->ctx = *out;
		(*out)->dirfd = holder->dirfd;
		holder->dirfd = -1;
	}
	if (holder->dirfd >= 0)
		close(holder->dirfd);
	free(holder);
	return ret;
}

/* ---- decoding ---- */

static const struct reg *find_reg(const struct device *d, const char *name)
{
	for (int i = 0; i < d->nregs; i++)
		if (!strcasecmp(d->regs[i].name, name))
			return &d->regs[i];
	return NULL;
}

/* Register @name of @d into @v (32 bits); @def when missing and not
 * @required. */
static int get_reg(const struct css *s, const struct device *d,
		   const char *name, bool required, uint32_t def, uint32_t *v)
{
	const struct reg *r = find_reg(d, name);
	uint64_t x;

	if (!r) {
		if (required) {
			pr_err("%s: %s: register %s missing", s->label,
			       d->ini.name, name);
			return -EBADMSG;
		}
		*v = def;
		return 0;
	}
	if (parse_u64(s, d->ini.name, r->line, name, r->val, &x))
		return -EBADMSG;
	*v = (uint32_t)x; /* "size:64" registers: the low word */
	return 0;
}

static int get_profile(const struct css *s, const struct device *core,
		       ocsd_arch_version_t *arch, ocsd_core_profile_t *prof)
{
	if (!core) {
		*arch = ARCH_V8;
		*prof = profile_CortexA;
		return 0;
	}
	if (!csd_core_profile(core->type, arch, prof)) {
		pr_err("%s: %s: unknown core type '%s': cannot tell its "
		       "architecture",
		       s->label, core->ini.name, core->type);
		return -EBADMSG;
	}
	return 0;
}

/* A protocol name without its ".x" version suffix. */
static bool proto_is(const char *type, const char *p)
{
	size_t n = strlen(p);

	return !strncasecmp(type, p, n) && (type[n] == 0 || type[n] == '.');
}

static int add_source(struct css *s, struct csd *d, const struct device *src,
		      const struct device *core)
{
	int ret = 0;

	if (proto_is(src->type, "ETM4") || proto_is(src->type, "ETE")) {
		bool ete = proto_is(src->type, "ETE");
		ocsd_etmv4_cfg c4;
		ocsd_ete_cfg ce;
		uint32_t devarch = 0;

		memset(&c4, 0, sizeof(c4));
		memset(&ce, 0, sizeof(ce));
		ret = get_reg(s, src, "TRCCONFIGR", true, 0, &c4.reg_configr);
		ret = ret   ?:
			      get_reg(s, src, "TRCTRACEIDR", true, 0,
				      &c4.reg_traceidr);
		ret = ret ?: get_reg(s, src, "TRCIDR0", true, 0, &c4.reg_idr0);
		ret = ret   ?:
			      get_reg(s, src, "TRCIDR1", false, 0x4100F403,
				      &c4.reg_idr1);
		ret = ret ?: get_reg(s, src, "TRCIDR2", true, 0, &c4.reg_idr2);
		ret = ret ?: get_reg(s, src, "TRCIDR8", false, 0, &c4.reg_idr8);
		ret = ret ?: get_reg(s, src, "TRCIDR9", false, 0, &c4.reg_idr9);
		ret = ret   ?:
			      get_reg(s, src, "TRCIDR10", false, 0,
				      &c4.reg_idr10);
		ret = ret   ?:
			      get_reg(s, src, "TRCIDR11", false, 0,
				      &c4.reg_idr11);
		ret = ret   ?:
			      get_reg(s, src, "TRCIDR12", false, 0,
				      &c4.reg_idr12);
		ret = ret   ?:
			      get_reg(s, src, "TRCIDR13", false, 0,
				      &c4.reg_idr13);
		if (ete)
			ret = ret   ?:
				      get_reg(s, src, "TRCDEVARCH", false,
					      0x47705A13, &devarch);
		ret = ret ?: get_profile(s, core, &c4.arch_ver, &c4.core_prof);
		if (ret)
			return ret;
		if (!ete)
			return csd_add_etmv4(d, &c4);
		ce.reg_configr = c4.reg_configr;
		ce.reg_traceidr = c4.reg_traceidr;
		ce.reg_idr0 = c4.reg_idr0;
		ce.reg_idr1 = c4.reg_idr1;
		ce.reg_idr2 = c4.reg_idr2;
		ce.reg_idr8 = c4.reg_idr8;
		ce.reg_devarch = devarch;
		ce.arch_ver = c4.arch_ver;
		ce.core_prof = c4.core_prof;
		return csd_add_ete(d, &ce);
	}
	if (proto_is(src->type, "ETM3") || proto_is(src->type, "PTM1") ||
	    proto_is(src->type, "PFT1")) {
		ocsd_etmv3_cfg c3;

		memset(&c3, 0, sizeof(c3));
		ret = get_reg(s, src, "ETMIDR", true, 0, &c3.reg_idr);
		ret = ret ?: get_reg(s, src, "ETMCR", true, 0, &c3.reg_ctrl);
		ret = ret ?: get_reg(s, src, "ETMCCER", true, 0, &c3.reg_ccer);
		ret = ret   ?:
			      get_reg(s, src, "ETMTRACEIDR", true, 0,
				      &c3.reg_trc_id);
		ret = ret ?: get_profile(s, core, &c3.arch_ver, &c3.core_prof);
		if (ret)
			return ret;
		if (proto_is(src->type, "ETM3"))
			return csd_add_etmv3(d, &c3);
		{
			ocsd_ptm_cfg cp = {
				.reg_idr = c3.reg_idr,
				.reg_ctrl = c3.reg_ctrl,
				.reg_ccer = c3.reg_ccer,
				.reg_trc_id = c3.reg_trc_id,
				.arch_ver = c3.arch_ver,
				.core_prof = c3.core_prof,
			};

			return csd_add_ptm(d, &cp);
		}
	}
	if (proto_is(src->type, "STM")) {
		ocsd_stm_cfg cs;

		memset(&cs, 0, sizeof(cs));
		ret = get_reg(s, src, "STMTCSR", true, 0, &cs.reg_tcsr);
		if (ret)
			return ret;
		return csd_add_stm(d, &cs);
	}
	if (proto_is(src->type, "ITM")) {
		/* trc_pkt_lister 1.3.3 fails the same way ("Failed to create
		 * decoder for none core source"). */
		pr_warn("%s: %s: ITM trace source %s is not decoded: OpenCSD "
			"%s has no ITM decoder",
			s->label, src->ini.name, src->name,
			ocsd_get_version_str());
		return -EOPNOTSUPP;
	}
	pr_warn("%s: %s: trace source type '%s' is not decoded", s->label,
		src->ini.name, src->type);
	return -EOPNOTSUPP;
}

/* A snapshot file, read once; NULL (logged) if it cannot be: an error for
 * the trace, a warning for a memory dump (@dump: its code is then
 * inaccessible, as OpenCSD's snapshot reader goes on without it). */
static const struct loaded *load_file(struct css *s, const char *name,
				      uint64_t max, bool dump)
{
	struct loaded *nf;
	uint8_t *data;
	size_t len;
	int ret;

	for (int i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].name, name))
			return &s->files[i];
	ret = s->rd(s->ctx, name, (size_t)max, &data, &len);
	if (ret < 0 && dump) {
		pr_warn("%s: cannot read memory dump %s: %s; its code is "
			"inaccessible",
			s->label, name,
			ret == -EFBIG ? "too large" : strerror(-ret));
		return NULL;
	}
	if (ret < 0) {
		pr_err("%s: cannot read %s: %s", s->label, name,
		       ret == -EFBIG ? "too large" : strerror(-ret));
		return NULL;
	}
	nf = realloc(s->files, (s->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		free(data);
		return NULL;
	}
	s->files = nf;
	nf = &s->files[s->nfiles];
	nf->name = strdup(name);
	if (!nf->name) {
		free(data);
		return NULL;
	}
	nf->data = data;
	nf->len = len;
	s->nfiles++;
	return nf;
}

static ocsd_mem_space_acc_t mem_space(const char *sp)
{
	static const struct {
		const char *n;
		ocsd_mem_space_acc_t v;
	} map[] = {
		{ "EL1S", OCSD_MEM_SPACE_EL1S },
		{ "EL1N", OCSD_MEM_SPACE_EL1N },
		{ "EL2", OCSD_MEM_SPACE_EL2 },
		{ "EL2N", OCSD_MEM_SPACE_EL2 },
		{ "EL3", OCSD_MEM_SPACE_EL3 },
		{ "S", OCSD_MEM_SPACE_S },
		{ "N", OCSD_MEM_SPACE_N },
		{ "ANY", OCSD_MEM_SPACE_ANY },
		{ "H", OCSD_MEM_SPACE_EL2 },
		{ "P", OCSD_MEM_SPACE_EL1N },
		{ "NP", OCSD_MEM_SPACE_EL1N },
		{ "SP", OCSD_MEM_SPACE_EL1S },
	};

	if (!sp || !*sp)
		return OCSD_MEM_SPACE_ANY;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcasecmp(sp, map[i].n))
			return map[i].v;
	return OCSD_MEM_SPACE_ANY;
}

static int add_dumps(struct css *s, struct csd *d, const struct device *core)
{
	for (int i = 0; i < core->ndumps; i++) {
		const struct dump *dp = &core->dumps[i];
		const struct loaded *f = load_file(s, dp->file, DUMP_MAX, true);
		uint64_t len;
		bool dup = false;
		struct memreg *na;

		if (!f)
			continue; /* decode what the other dumps allow */
		if (dp->offset >= f->len) {
			pr_warn("%s: %s: dump %s: offset 0x%llx past its %zu "
				"bytes; ignored",
				s->label, core->ini.name, dp->file,
				(unsigned long long)dp->offset, f->len);
			continue;
		}
		len = f->len - dp->offset;
		if (dp->has_length) {
			if (dp->length > len)
				pr_warn("%s: %s: dump %s: length 0x%llx past "
					"the end of the file; 0x%llx used",
					s->label, core->ini.name, dp->file,
					(unsigned long long)dp->length,
					(unsigned long long)len);
			else
				len = dp->length;
		}
		if (!len)
			continue;
		/* The same image is often named by every core. */
		for (int j = 0; j < s->nmem; j++)
			if (s->mem[j].addr == dp->addr && s->mem[j].len == len)
				dup = true;
		if (dup)
			continue;
		if (csd_add_mem(d, dp->addr, f->data + dp->offset, len,
				mem_space(dp->space)) < 0)
			continue;
		na = realloc(s->mem, (s->nmem + 1) * sizeof(*na));
		if (!na)
			return -ENOMEM;
		s->mem = na;
		na[s->nmem].addr = dp->addr;
		na[s->nmem].len = len;
		na[s->nmem].p = f->data + dp->offset;
		s->nmem++;
	}
	return 0;
}

/* Streams trace file @name of a snapshot directory into @f. */
static int feed_file(struct css *s, struct feeder *f, const char *name)
{
	uint8_t *buf = malloc(1 << 20);
	struct stat st;
	/* The name comes from the snapshot's .ini: a FIFO or a device there
	 * is refused before it is opened, and the open cannot block. */
	int fd = fstatat(s->dirfd, name, &st, 0) || !S_ISREG(st.st_mode) ?
			 (errno = EINVAL, -1) :
			 openat(s->dirfd, name,
				O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY),
	    ret = 0;

	if (fd < 0 || !buf || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = fd < 0 || !buf ? -errno : -EINVAL;
		pr_err("%s: cannot read %s: %s", s->label, name,
		       ret == -EINVAL ? "not a regular file" : strerror(-ret));
		if (fd >= 0)
			close(fd);
		free(buf);
		return ret ? ret : -EIO;
	}
	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			pr_err("%s: %s: %s", s->label, name, strerror(errno));
			break;
		}
		if (!n)
			break;
		ret = feed(f, buf, (size_t)n);
		if (ret)
			break;
	}
	close(fd);
	free(buf);
	return ret;
}

/* How buffer @b is framed: --framing, else by its format= (*@flags gets
 * CSD_HALT_ON_ERROR for dstream_coresight, as trc_pkt_lister reads it). */
static enum css_framing buffer_framing(const struct css *s,
				       const struct buffer *b, unsigned *flags)
{
	enum css_framing framing = s->framing;

	if (framing != CSS_FRAMING_AUTO)
		return framing;
	if (!strcasecmp(b->format, "source_data"))
		framing = CSS_FRAMING_RAW;
	else if (!strcasecmp(b->format, "dstream_coresight")) {
		/*
		 * As OpenCSD's snapshot reader (trc_pkt_lister without
		 * -dstream_format) reads it: TPIU frames found by their
		 * FSYNCs, the block footers taken for trace.  The first
		 * footer breaks the decode and, as trc_pkt_lister, decoding
		 * stops there: resyncing past every footer would give a
		 * listing nobody else does.
		 */
		framing = CSS_FRAMING_TPIU;
		*flags |= CSD_HALT_ON_ERROR;
		pr_warn("%s: buffer %s: format dstream_coresight read "
			"as trc_pkt_lister 1.3.3 reads it (TPIU "
			"frames, stopping at the first error); "
			"--framing dstream reads its blocks",
			s->label, b->name);
	} else
		framing = CSS_FRAMING_FRAMES;
	if (framing == CSS_FRAMING_FRAMES && strcasecmp(b->format, "coresight"))
		pr_warn("%s: buffer %s: unknown format '%s', read as "
			"CoreSight frames",
			s->label, b->name, b->format);
	return framing;
}

/* The decoder for buffer @b's sources (their cores' memory dumps with
 * CSD_DECODE); *@nsrc: how many. */
static int add_sources(struct css *s, struct csd *d, const struct buffer *b,
		       unsigned flags, bool raw, int *nsrc)
{
	int ret;

	for (int i = 0; i < s->nsrcbuf; i++) {
		const struct device *src, *core = NULL;
		const char *core_name = NULL;

		if (strcmp(s->srcbuf[i].b, b->name))
			continue;
		src = find_device(s, s->srcbuf[i].a);
		if (!src) {
			pr_warn("%s: source %s of buffer %s: no such device",
				s->label, s->srcbuf[i].a, b->name);
			continue;
		}
		for (int j = 0; j < s->ncoresrc; j++)
			if (!strcmp(s->coresrc[j].b, src->name))
				core_name = s->coresrc[j].a;
		if (core_name) {
			core = find_device(s, core_name);
			if (!core) {
				pr_warn("%s: core %s of source %s: no such "
					"device",
					s->label, core_name, src->name);
				continue;
			}
		}
		if (add_source(s, d, src, core) < 0)
			continue;
		(*nsrc)++;
		if (core && (flags & CSD_DECODE)) {
			ret = add_dumps(s, d, core);
			if (ret < 0)
				return ret;
		}
		if (raw)
			break; /* a raw buffer holds one source */
	}
	return 0;
}

int css_decode(struct css *s, const char *buffer, unsigned flags,
	       struct outbuf *ob, csd_elem_fn fn, void *ctx,
	       struct csd_stats *st)
{
	const struct buffer *b = NULL;
	const struct loaded *data;
	int ret = 0, nsrc = 0;
	bool formatted, raw;
	uint32_t frame_flags = OCSD_DFRMTR_FRAME_MEM_ALIGN;
	enum css_framing framing;
	struct feeder feeder = { 0 };
	struct csd *d;

	for (int i = 0; i < s->nbuf; i++)
		if (!buffer || !strcmp(buffer, s->buf[i].name)) {
			b = &s->buf[i];
			break;
		}
	if (!b) {
		pr_err("%s: no trace buffer named '%s'", s->label, buffer);
		return -ENOENT;
	}
	s->nmem = 0; /* memory images are given to each tree anew */
	framing = buffer_framing(s, b, &flags);
	raw = framing == CSS_FRAMING_RAW;
	formatted = !raw;
	switch (framing) {
	case CSS_FRAMING_TPIU:
	case CSS_FRAMING_DSTREAM:
		/* TPIU output: frames found by their FSYNCs, anywhere. */
		frame_flags = OCSD_DFRMTR_HAS_FSYNCS;
		break;
	case CSS_FRAMING_TPIU_HSYNC:
		frame_flags = OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS;
		break;
	default:
		break;
	}
	feeder.dstream = framing == CSS_FRAMING_DSTREAM;
	d = csd_new(formatted, frame_flags, flags, ob);
	if (!d)
		return -ENOMEM;
	if (fn)
		csd_set_elem_fn(d, fn, ctx);
	feeder.d = d;
	ret = add_sources(s, d, b, flags, raw, &nsrc);
	if (ret < 0)
		goto out;
	if (!nsrc) {
		pr_err("%s: no decodable trace source writes to buffer %s",
		       s->label, b->name);
		ret = -ENOENT;
		goto out;
	}
	if (s->dirfd >= 0 && s->rd == dir_read) {
		/* A directory: the buffer streamed, any size. */
		ret = feed_file(s, &feeder, b->file);
	} else {
		data = load_file(s, b->file, TRACE_MAX, false);
		if (!data) {
			ret = -EIO;
			goto out;
		}
		ret = feed(&feeder, data->data, data->len);
	}
	if (!ret)
		ret = csd_eot(d);
out:
	if (st)
		*st = *csd_stats(d);
	csd_free(d);
	return ret;
}

size_t css_read_mem(const struct css *s, uint64_t addr, void *buf, size_t n)
{
	for (int i = 0; i < s->nmem; i++) {
		const struct memreg *m = &s->mem[i];

		if (addr >= m->addr && addr - m->addr < m->len) {
			uint64_t avail = m->len - (addr - m->addr);

			if (n > avail)
				n = (size_t)avail;
			memcpy(buf, m->p + (addr - m->addr), n);
			return n;
		}
	}
	return 0;
}

const char *css_core_of(const struct css *s, uint8_t trace_id)
{
	for (int i = 0; i < s->ndev; i++) {
		const struct device *d = &s->dev[i];
		const struct reg *r = find_reg(d, "TRCTRACEIDR");
		uint64_t v;

		if (!r)
			r = find_reg(d, "ETMTRACEIDR");
		if (!r ||
		    parse_u64(s, d->ini.name, r->line, r->name, r->val, &v) ||
		    (v & 0x7f) != trace_id)
			continue;
		for (int j = 0; j < s->ncoresrc; j++)
			if (!strcmp(s->coresrc[j].b, d->name))
				return s->coresrc[j].a;
		return d->name;
	}
	return NULL;
}
