// SPDX-License-Identifier: MIT
/*
 * AUX area trace records of perf.data: cs_etm AUXTRACE_INFO metadata,
 * AUXTRACE chunks and the HEADER_AUXTRACE index.  See auxtrace.h for the
 * layouts.  Nothing here trusts a length it reads: every block, count and
 * payload is checked against the bytes it lies in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/log.h"
#include "auxtrace.h"
#include "../common/load.h"
#include "perf_reader.h"

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

const char *cs_etm_kind_name(enum cs_etm_kind kind)
{
	switch (kind) {
	case CS_ETM_KIND_ETMV3:
		return "ETMv3/PTM";
	case CS_ETM_KIND_ETMV4:
		return "ETMv4";
	case CS_ETM_KIND_ETE:
		return "ETE";
	}
	return "unknown";
}

int auxtrace_info_parse(const void *rec, size_t len, uint32_t *type,
			const uint64_t **priv, size_t *nr_priv)
{
	const unsigned char *p = rec;
	const struct perf_event_header *h = rec;

	if (len < AUXTRACE_INFO_HDR_SIZE || h->type != AUXTRACE_REC_INFO ||
	    h->size < AUXTRACE_INFO_HDR_SIZE || h->size > len || h->size % 8) {
		pr_err("AUXTRACE_INFO: bad record (type %u, size %u, %zu bytes available)",
		       len >= 8 ? h->type : 0, len >= 8 ? h->size : 0, len);
		return -EBADMSG;
	}
	*type = ld32(p + 8);
	*priv = (const uint64_t *)(p + AUXTRACE_INFO_HDR_SIZE);
	*nr_priv = (h->size - AUXTRACE_INFO_HDR_SIZE) / 8;
	return 0;
}

static void cs_etm_cpu_views(struct cs_etm_cpu *c)
{
	const uint64_t *v = c->params;

	c->configr = v[0];
	c->traceidr = v[1];
	if (c->kind == CS_ETM_KIND_ETMV3) {
		c->etmccer = v[CS_ETMV3_ETMCCER];
		c->etmidr = v[CS_ETMV3_ETMIDR];
	} else {
		c->trcidr0 = v[CS_ETMV4_TRCIDR0];
		c->trcidr1 = v[CS_ETMV4_TRCIDR1];
		c->trcidr2 = v[CS_ETMV4_TRCIDR2];
		c->trcidr8 = v[CS_ETMV4_TRCIDR8];
		c->trcauthstatus = v[CS_ETMV4_TRCAUTHSTATUS];
		if (c->kind == CS_ETM_KIND_ETE)
			c->trcdevarch = v[CS_ETE_TRCDEVARCH];
	}
	c->trace_id = (uint8_t)(c->traceidr & CS_TRACE_ID_VAL_MASK);
}

void cs_etm_cpu_init(struct cs_etm_cpu *c, enum cs_etm_kind kind, uint32_t cpu)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->cpu = cpu;
	switch (kind) {
	case CS_ETM_KIND_ETMV3:
		c->magic = CS_ETMV3_MAGIC;
		c->nr_params = CS_ETMV3_NR_PARAMS;
		break;
	case CS_ETM_KIND_ETMV4:
		c->magic = CS_ETMV4_MAGIC;
		c->nr_params = CS_ETMV4_NR_PARAMS;
		break;
	case CS_ETM_KIND_ETE:
		c->magic = CS_ETE_MAGIC;
		c->nr_params = CS_ETE_NR_PARAMS;
		break;
	}
}

/* Copies the named views into params[] for writing. */
static void cs_etm_cpu_params(const struct cs_etm_cpu *c, uint64_t *v)
{
	memcpy(v, c->params, sizeof(c->params));
	v[0] = c->configr;
	v[1] = c->traceidr;
	if (c->kind == CS_ETM_KIND_ETMV3) {
		v[CS_ETMV3_ETMCCER] = c->etmccer;
		v[CS_ETMV3_ETMIDR] = c->etmidr;
	} else {
		v[CS_ETMV4_TRCIDR0] = c->trcidr0;
		v[CS_ETMV4_TRCIDR1] = c->trcidr1;
		v[CS_ETMV4_TRCIDR2] = c->trcidr2;
		v[CS_ETMV4_TRCIDR8] = c->trcidr8;
		v[CS_ETMV4_TRCAUTHSTATUS] = c->trcauthstatus;
		if (c->kind == CS_ETM_KIND_ETE)
			v[CS_ETE_TRCDEVARCH] = c->trcdevarch;
	}
}

static int kind_of_magic(uint64_t magic, enum cs_etm_kind *kind)
{
	if (magic == CS_ETMV3_MAGIC)
		*kind = CS_ETM_KIND_ETMV3;
	else if (magic == CS_ETMV4_MAGIC)
		*kind = CS_ETM_KIND_ETMV4;
	else if (magic == CS_ETE_MAGIC)
		*kind = CS_ETM_KIND_ETE;
	else
		return -1;
	return 0;
}

static uint32_t min_params(enum cs_etm_kind kind)
{
	return kind == CS_ETM_KIND_ETMV3 ? CS_ETMV3_NR_PARAMS :
	       kind == CS_ETM_KIND_ETMV4 ? CS_ETMV4_NR_PARAMS_V0 :
					   CS_ETE_NR_PARAMS;
}

int cs_etm_info_parse(const void *rec, size_t len, struct cs_etm_info *out)
{
	const uint64_t *priv;
	size_t nr, pos;
	uint32_t type, i = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = auxtrace_info_parse(rec, len, &type, &priv, &nr);
	if (ret)
		return ret;
	if (type != AUXTRACE_TYPE_CS_ETM) {
		pr_err("AUXTRACE_INFO: type %u is not cs_etm (%u)", type,
		       AUXTRACE_TYPE_CS_ETM);
		return -EINVAL;
	}
	/* priv[] is 8-aligned inside the record but not necessarily in
	 * memory: read it bytewise. */
	const unsigned char *pb = (const unsigned char *)priv;
#define PRIV(i) ld64(pb + 8 * (i))
#define OFF(i) (AUXTRACE_INFO_HDR_SIZE + 8 * (size_t)(i))
	if (nr < CS_ETM_HEADER_U64S) {
		pr_err("AUXTRACE_INFO cs_etm: %zu bytes of metadata, the header alone needs %u",
		       nr * 8, CS_ETM_HEADER_U64S * 8);
		return -EBADMSG;
	}
	out->version = PRIV(0);
	out->pmu_type = (uint32_t)(PRIV(1) >> 32);
	out->nr_cpu = (uint32_t)PRIV(1);
	out->snapshot = PRIV(2);
	if (out->version > CS_ETM_HEADER_VERSION_MAX) {
		pr_err("AUXTRACE_INFO cs_etm: header version %llu unknown (this reader knows 0 to %d)",
		       ull(out->version), CS_ETM_HEADER_VERSION_MAX);
		return -EBADMSG;
	}
	/* Each block is at least 3 u64s: bound nr_cpu by the record. */
	if (out->nr_cpu == 0 ||
	    out->nr_cpu > (nr - CS_ETM_HEADER_U64S) / CS_ETM_HEADER_U64S) {
		pr_err("AUXTRACE_INFO cs_etm: %u CPUs do not fit in %zu bytes of metadata (record offset %u)",
		       out->nr_cpu, nr * 8, (unsigned)OFF(1));
		out->nr_cpu = 0;
		return -EBADMSG;
	}
	out->cpus = calloc(out->nr_cpu, sizeof(*out->cpus));
	if (!out->cpus) {
		out->nr_cpu = 0;
		return -ENOMEM;
	}
	pos = CS_ETM_HEADER_U64S;
	for (i = 0; i < out->nr_cpu; i++) {
		struct cs_etm_cpu *c = &out->cpus[i];
		uint64_t n;
		size_t first;

		if (nr - pos < 2)
			goto short_block;
		c->magic = PRIV(pos);
		if (kind_of_magic(c->magic, &c->kind)) {
			pr_err("AUXTRACE_INFO cs_etm: CPU block %u at record offset %zu: unknown magic %#llx",
			       i, OFF(pos), ull(c->magic));
			goto bad;
		}
		c->cpu = (uint32_t)PRIV(pos + 1);
		if (out->version == 0) {
			if (c->kind == CS_ETM_KIND_ETE) {
				pr_err("AUXTRACE_INFO cs_etm: CPU block %u at record offset %zu: ETE in a version 0 header",
				       i, OFF(pos));
				goto bad;
			}
			n = c->kind == CS_ETM_KIND_ETMV3 ?
				    CS_ETMV3_NR_PARAMS_V0 :
				    CS_ETMV4_NR_PARAMS_V0;
			first = pos + 2;
		} else {
			if (nr - pos < 3)
				goto short_block;
			n = PRIV(pos + 2);
			first = pos + 3;
			if (n < min_params(c->kind)) {
				pr_err("AUXTRACE_INFO cs_etm: CPU block %u at record offset %zu: %llu %s parameters, at least %u expected",
				       i, OFF(pos), ull(n),
				       cs_etm_kind_name(c->kind),
				       min_params(c->kind));
				goto bad;
			}
		}
		if (n > nr - first) {
			pr_err("AUXTRACE_INFO cs_etm: CPU block %u at record offset %zu: %llu parameters run past the record (%zu bytes)",
			       i, OFF(pos), ull(n), OFF(nr));
			goto bad;
		}
		c->nr_params = (uint32_t)n;
		for (uint64_t k = 0; k < n && k < CS_ETM_MAX_PARAMS; k++)
			c->params[k] = PRIV(first + k);
		cs_etm_cpu_views(c);
		c->trace_id_from_hw_id =
			out->version >= 2 &&
			(c->traceidr & CS_TRACE_ID_UNUSED_FLAG);
		pos = first + n;
	}
	if (pos != nr)
		pr_debug(
			"AUXTRACE_INFO cs_etm: %zu bytes after the last CPU block ignored",
			(nr - pos) * 8);
	return 0;
#undef PRIV
#undef OFF
short_block:
	pr_err("AUXTRACE_INFO cs_etm: CPU block %u of %u runs past the end of the record (%zu bytes)",
	       i, out->nr_cpu, AUXTRACE_INFO_HDR_SIZE + nr * 8);
bad:
	cs_etm_info_free(out);
	return -EBADMSG;
}

void cs_etm_info_free(struct cs_etm_info *info)
{
	free(info->cpus);
	info->cpus = NULL;
	info->nr_cpu = 0;
}

const struct cs_etm_cpu *cs_etm_info_cpu(const struct cs_etm_info *info,
					 uint32_t cpu)
{
	for (uint32_t i = 0; i < info->nr_cpu; i++)
		if (info->cpus[i].cpu == cpu)
			return &info->cpus[i];
	return NULL;
}

const struct cs_etm_cpu *cs_etm_info_by_trace_id(const struct cs_etm_info *info,
						 uint8_t trace_id)
{
	for (uint32_t i = 0; i < info->nr_cpu; i++)
		if (info->cpus[i].trace_id == trace_id)
			return &info->cpus[i];
	return NULL;
}

long cs_etm_info_build(const struct cs_etm_info *info, void *buf, size_t cap)
{
	size_t need = AUXTRACE_INFO_HDR_SIZE + 8 * CS_ETM_HEADER_U64S;
	struct perf_event_header h;
	unsigned char *p = buf;
	uint64_t v[CS_ETM_MAX_PARAMS];
	uint64_t hdr[CS_ETM_HEADER_U64S];
	uint32_t type = AUXTRACE_TYPE_CS_ETM, zero = 0;

	if (info->version < 1 || info->version > CS_ETM_HEADER_VERSION_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		const struct cs_etm_cpu *c = &info->cpus[i];
		enum cs_etm_kind k;

		if (kind_of_magic(c->magic, &k) || k != c->kind ||
		    c->nr_params > CS_ETM_MAX_PARAMS ||
		    c->nr_params < min_params(c->kind))
			return -EINVAL;
		need += 8 * (3 + (size_t)c->nr_params);
	}
	if (need > PERFRING_RECORD_MAX)
		return -EINVAL;
	if (!buf || cap < need)
		return (long)need;
	h.type = AUXTRACE_REC_INFO;
	h.misc = 0;
	h.size = (uint16_t)need;
	memcpy(p, &h, 8);
	memcpy(p + 8, &type, 4);
	memcpy(p + 12, &zero, 4);
	p += AUXTRACE_INFO_HDR_SIZE;
	hdr[0] = info->version;
	hdr[1] = ((uint64_t)info->pmu_type << 32) | info->nr_cpu;
	hdr[2] = info->snapshot;
	memcpy(p, hdr, sizeof(hdr));
	p += sizeof(hdr);
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		const struct cs_etm_cpu *c = &info->cpus[i];
		uint64_t b[3] = { c->magic, c->cpu, c->nr_params };

		memcpy(p, b, sizeof(b));
		p += sizeof(b);
		cs_etm_cpu_params(c, v);
		memcpy(p, v, 8 * (size_t)c->nr_params);
		p += 8 * (size_t)c->nr_params;
	}
	return (long)need;
}

int auxtrace_chunk_parse(const void *rec, size_t len,
			 struct auxtrace_chunk *out)
{
	const unsigned char *p = rec;
	const struct perf_event_header *h = rec;

	if (len < AUXTRACE_CHUNK_HDR_SIZE || h->type != AUXTRACE_REC_AUXTRACE ||
	    h->size < AUXTRACE_CHUNK_HDR_SIZE) {
		pr_err("AUXTRACE: bad record (type %u, size %u, %zu bytes available; 48 needed)",
		       len >= 8 ? h->type : 0, len >= 8 ? h->size : 0, len);
		return -EBADMSG;
	}
	out->size = ld64(p + 8);
	out->offset = ld64(p + 16);
	out->reference = ld64(p + 24);
	out->idx = ld32(p + 32);
	out->tid = ld32(p + 36);
	out->cpu = ld32(p + 40);
	return 0;
}

void auxtrace_chunk_build(const struct auxtrace_chunk *c, void *buf)
{
	unsigned char *p = buf;
	struct perf_event_header h = { AUXTRACE_REC_AUXTRACE, 0,
				       AUXTRACE_CHUNK_HDR_SIZE };
	uint32_t zero = 0;

	memcpy(p, &h, 8);
	memcpy(p + 8, &c->size, 8);
	memcpy(p + 16, &c->offset, 8);
	memcpy(p + 24, &c->reference, 8);
	memcpy(p + 32, &c->idx, 4);
	memcpy(p + 36, &c->tid, 4);
	memcpy(p + 40, &c->cpu, 4);
	memcpy(p + 44, &zero, 4);
}

int auxtrace_index_parse(const void *sec, size_t len,
			 struct auxtrace_index_entry **entries, size_t *nr)
{
	const unsigned char *p = sec;
	uint64_t n;

	*entries = NULL;
	*nr = 0;
	if (len < 8) {
		pr_err("auxtrace index: %zu bytes, the count alone needs 8",
		       len);
		return -EBADMSG;
	}
	n = ld64(p);
	if (n > (len - 8) / 16) {
		pr_err("auxtrace index: %llu entries do not fit in %zu bytes",
		       ull(n), len);
		return -EBADMSG;
	}
	if (!n)
		return 0;
	*entries = malloc(n * sizeof(**entries));
	if (!*entries)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		(*entries)[i].file_offset = ld64(p + 8 + 16 * i);
		(*entries)[i].sz = ld64(p + 16 + 16 * i);
	}
	*nr = n;
	return 0;
}

/* ---- perf.data reading ---- */

struct auxtrace_file {
	int fd;
	uint64_t file_size;
	void *info;
	size_t info_len;
	uint32_t info_type;
	bool have_cs;
	struct cs_etm_info cs;
	struct auxtrace_chunk *chunks;
	size_t nr_chunks, cap_chunks;
	int err;
};

static int collect(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct auxtrace_file *af = ctx;
	const struct perf_event_header *h = ev->hdr;

	(void)f;
	if (h->type == AUXTRACE_REC_INFO && !af->info) {
		af->info = malloc(h->size);
		if (!af->info)
			return -ENOMEM;
		memcpy(af->info, h, h->size);
		af->info_len = h->size;
	} else if (h->type == AUXTRACE_REC_AUXTRACE) {
		struct auxtrace_chunk c;

		if (auxtrace_chunk_parse(h, h->size, &c)) {
			pr_err("file offset %#llx: malformed AUXTRACE record",
			       ull(ev->offset));
			return -EBADMSG;
		}
		c.file_offset = ev->offset;
		if (c.size > af->file_size ||
		    ev->offset + h->size > af->file_size - c.size) {
			pr_err("file offset %#llx: AUXTRACE data of %llu bytes runs past the end of the file (%llu bytes)",
			       ull(ev->offset), ull(c.size),
			       ull(af->file_size));
			return -EBADMSG;
		}
		if (af->nr_chunks == af->cap_chunks) {
			size_t ncap = af->cap_chunks ? 2 * af->cap_chunks : 16;
			void *n = realloc(af->chunks, ncap * sizeof(c));

			if (!n)
				return -ENOMEM;
			af->chunks = n;
			af->cap_chunks = ncap;
		}
		af->chunks[af->nr_chunks++] = c;
	}
	return 0;
}

int auxtrace_file_open(const char *path, struct auxtrace_file **out)
{
	struct auxtrace_file *af;
	struct prd_file *f;
	struct stat st;
	int ret;

	*out = NULL;
	af = calloc(1, sizeof(*af));
	if (!af)
		return -ENOMEM;
	af->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (af->fd < 0) {
		ret = -errno;
		pr_err("%s: %s", path, strerror(errno));
		free(af);
		return ret;
	}
	if (fstat(af->fd, &st) || !S_ISREG(st.st_mode)) {
		pr_err("%s: not a regular file (AUX trace is read from the file format only)",
		       path);
		close(af->fd);
		free(af);
		return -EOPNOTSUPP;
	}
	af->file_size = (uint64_t)st.st_size;
	ret = prd_open(path, &f);
	if (ret)
		goto fail;
	if (prd_is_pipe(f)) {
		pr_err("%s: pipe-format perf.data: AUX trace payloads cannot be read back",
		       path);
		prd_close(f);
		ret = -EOPNOTSUPP;
		goto fail;
	}
	ret = prd_process(f, false, collect, af);
	prd_close(f);
	if (ret < 0 && ret != -EBADMSG)
		goto fail;
	if (ret == -EBADMSG)
		pr_warn("%s: damaged; %zu AUXTRACE chunks read before the damage",
			path, af->nr_chunks);
	if (af->info) {
		const uint64_t *priv;
		size_t nr;

		if (auxtrace_info_parse(af->info, af->info_len, &af->info_type,
					&priv, &nr) == 0 &&
		    af->info_type == AUXTRACE_TYPE_CS_ETM)
			af->have_cs = cs_etm_info_parse(af->info, af->info_len,
							&af->cs) == 0;
	}
	*out = af;
	return 0;
fail:
	auxtrace_file_close(af);
	return ret;
}

void auxtrace_file_close(struct auxtrace_file *af)
{
	if (!af)
		return;
	if (af->fd >= 0)
		close(af->fd);
	free(af->info);
	cs_etm_info_free(&af->cs);
	free(af->chunks);
	free(af);
}

const void *auxtrace_file_info(const struct auxtrace_file *af, size_t *len,
			       uint32_t *type)
{
	if (len)
		*len = af->info_len;
	if (type)
		*type = af->info_type;
	return af->info;
}

const struct cs_etm_info *auxtrace_file_cs_etm(const struct auxtrace_file *af)
{
	return af->have_cs ? &af->cs : NULL;
}

size_t auxtrace_file_nr_chunks(const struct auxtrace_file *af)
{
	return af->nr_chunks;
}

const struct auxtrace_chunk *auxtrace_file_chunk(const struct auxtrace_file *af,
						 size_t i)
{
	return i < af->nr_chunks ? &af->chunks[i] : NULL;
}

int auxtrace_file_read(const struct auxtrace_file *af, size_t i, uint64_t off,
		       void *buf, size_t len)
{
	const struct auxtrace_chunk *c = auxtrace_file_chunk(af, i);
	unsigned char *p = buf;
	uint64_t pos;

	if (!c || off > c->size || len > c->size - off)
		return -EBADMSG;
	pos = c->file_offset + AUXTRACE_CHUNK_HDR_SIZE + off;
	while (len) {
		ssize_t n = pread(af->fd, p, len, (off_t)pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EBADMSG;
		p += n;
		pos += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}
