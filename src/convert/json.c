// SPDX-License-Identifier: MIT
/*
 * perfring data convert --to-json: perf 6.1's data-convert-json.c format,
 * "linux-perf-json-version": 1, byte for byte:
 *
 *   {"linux-perf-json-version": 1, "headers": {header-version,
 *   captured-on (the input's mtime, UTC), data-offset, data-size,
 *   feat-offset, hostname, os-release, arch, cpu-desc, cpuid,
 *   nrcpus-online, nrcpus-avail, [clockid, clock-time, real-time when the
 *   file has CLOCK_DATA], perf-version, cmdline[]}, "samples": [...]}
 *
 * one object per sample in time order: timestamp, pid and tid (of the
 * sample's thread), cpu (when an event of the file samples it), comm (the
 * thread's name then), and its callchain as {ip, symbol, dso} entries
 * (context markers left out; symbol and dso only where a symbol was
 * found), or its ip alone without a callchain.  Tab-indented as perf
 * writes it.  perf 6.1 writes no tracepoint fields here.
 *
 * Strings are escaped as perf escapes them (\" \\ \b \f \n \r \t, other
 * control characters as \u00XX), except bytes that are not UTF-8, which
 * perf writes as "\uffffff.." (its char is signed): here \u00XX, the
 * Latin-1 character, so that the file stays JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "../common/log.h"
#include "../common/outbuf.h"
#include "../machine/threads.h"
#include "convert.h"

struct json_conv {
	struct outbuf ob;
	struct prd_file *f;
	struct machine *m;
	bool started, first, host_set;
	uint64_t combined_sample_type; /* of every event: is cpu printed */
	struct conv_counts n;
};

/* perf's output_json_string(): up to the first NUL of @s's @n bytes. */
static void put_str(struct outbuf *ob, const char *s, size_t n)
{
	ob_json_str_as(ob, s, strnlen(s, n), true);
}

static void put_cstr(struct outbuf *ob, const char *s)
{
	put_str(ob, s ? s : "", s ? strlen(s) : 0);
}

/* output_json_delimiters(): [","] "\n" and @depth tabs. */
static void delim(struct outbuf *ob, bool comma, int depth)
{
	ob_room(ob, (size_t)depth + 2);
	if (comma)
		ob->p[ob->len++] = ',';
	ob->p[ob->len++] = '\n';
	for (int i = 0; i < depth; i++)
		ob->p[ob->len++] = '\t';
}

/* A key and the ": " after it. */
static void key(struct outbuf *ob, bool comma, int depth, const char *k)
{
	delim(ob, comma, depth);
	put_cstr(ob, k);
	ob_write(ob, ": ", 2);
}

static void key_u64(struct outbuf *ob, bool comma, int depth, const char *k,
		    uint64_t v)
{
	key(ob, comma, depth, k);
	ob_u64(ob, v, 0, ' ');
}

static void key_s64(struct outbuf *ob, bool comma, int depth, const char *k,
		    int64_t v)
{
	key(ob, comma, depth, k);
	ob_s64(ob, v, 0);
}

static void key_str(struct outbuf *ob, bool comma, int depth, const char *k,
		    const char *v)
{
	key(ob, comma, depth, k);
	put_cstr(ob, v);
}

/* perf's do_read_string() list: a u32 count, then u32-length strings. */
static void put_cmdline(struct json_conv *j)
{
	size_t len, at = 4;
	const unsigned char *p = prd_feature(j->f, PRD_FEAT_CMDLINE, &len);
	uint32_t nr = 0;

	key(&j->ob, true, 2, "cmdline");
	ob_putc(&j->ob, '[');
	if (p && len >= 4)
		memcpy(&nr, p, 4);
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t slen;

		if (len - at < 4)
			break;
		memcpy(&slen, p + at, 4);
		at += 4;
		if (slen > len - at)
			break;
		delim(&j->ob, i != 0, 3);
		put_str(&j->ob, (const char *)p + at, slen);
		at += slen;
	}
	delim(&j->ob, false, 2);
	ob_putc(&j->ob, ']');
}

/* output_headers() */
static void put_headers(struct json_conv *j)
{
	struct outbuf *ob = &j->ob;
	bool pipe = prd_is_pipe(j->f);
	uint64_t doff = pipe ? 0 : prd_data_offset(j->f);
	uint64_t dsize = pipe ? 0 : prd_data_size(j->f);
	uint32_t avail = 0, online = 0, ver, clockid;
	uint64_t tod, cns;
	const unsigned char *p;
	struct stat st;
	size_t len;

	key_u64(ob, false, 2, "header-version", 1);
	if (!fstat(prd_fd(j->f), &st)) {
		time_t t = st.st_mtime;
		struct tm tm;
		char when[64];

		if (gmtime_r(&t, &tm) &&
		    strftime(when, sizeof(when), "%FT%TZ", &tm))
			key_str(ob, true, 2, "captured-on", when);
	}
	key_u64(ob, true, 2, "data-offset", doff);
	key_u64(ob, true, 2, "data-size", dsize);
	key_u64(ob, true, 2, "feat-offset", pipe ? 0 : doff + dsize);
	key_str(ob, true, 2, "hostname",
		prd_feature_string(j->f, PRD_FEAT_HOSTNAME));
	key_str(ob, true, 2, "os-release",
		prd_feature_string(j->f, PRD_FEAT_OSRELEASE));
	key_str(ob, true, 2, "arch", prd_feature_string(j->f, PRD_FEAT_ARCH));
	key_str(ob, true, 2, "cpu-desc",
		prd_feature_string(j->f, PRD_FEAT_CPUDESC));
	key_str(ob, true, 2, "cpuid", prd_feature_string(j->f, PRD_FEAT_CPUID));
	p = prd_feature(j->f, PRD_FEAT_NRCPUS, &len);
	if (p && len >= 8) {
		memcpy(&avail, p, 4);
		memcpy(&online, p + 4, 4);
	}
	key_u64(ob, true, 2, "nrcpus-online", online);
	key_u64(ob, true, 2, "nrcpus-avail", avail);
	p = prd_feature(j->f, PRD_FEAT_CLOCK_DATA, &len);
	if (p && len >= 24) {
		memcpy(&ver, p, 4);
		memcpy(&clockid, p + 4, 4);
		memcpy(&tod, p + 8, 8);
		memcpy(&cns, p + 16, 8);
		if (ver == 1) {
			key_u64(ob, true, 2, "clockid", clockid);
			key_u64(ob, true, 2, "clock-time", cns);
			key_u64(ob, true, 2, "real-time", tod);
		}
	}
	key_str(ob, true, 2, "perf-version",
		prd_feature_string(j->f, PRD_FEAT_VERSION));
	put_cmdline(j);
}

static void start(struct json_conv *j)
{
	struct outbuf *ob = &j->ob;

	j->started = true;
	ob_putc(ob, '{');
	delim(ob, false, 1);
	ob_puts(ob, "\"linux-perf-json-version\": 1");
	delim(ob, true, 1);
	ob_puts(ob, "\"headers\": {");
	put_headers(j);
	delim(ob, false, 1);
	ob_putc(ob, '}');
	delim(ob, true, 1);
	ob_puts(ob, "\"samples\": [");
}

/* output_sample_callchain_entry() */
static void put_entry(struct json_conv *j, uint64_t ip,
		      const struct addr_loc *al)
{
	struct outbuf *ob = &j->ob;

	delim(ob, false, 4);
	ob_putc(ob, '{');
	key(ob, false, 5, "ip");
	ob_write(ob, "\"0x", 3);
	ob_x64(ob, ip, 0);
	ob_putc(ob, '"');
	if (al && al->sym && al->sym->name && *al->sym->name) {
		key_str(ob, true, 5, "symbol", al->sym->name);
		if (al->dso && al->dso->short_name && *al->dso->short_name)
			key_str(ob, true, 5, "dso", al->dso->short_name);
	}
	delim(ob, false, 4);
	ob_putc(ob, '}');
}

int json_conv_sample(struct json_conv *j, const struct conv_sample *cs)
{
	const struct prd_sample *s = cs->s;
	uint64_t st = cs->attr->attr.sample_type;
	struct outbuf *ob = &j->ob;
	int32_t pid = -1, tid = -1;
	struct addr_loc al;
	struct thread *t;

	if (!j->started)
		start(j);
	if (!j->host_set) {
		j->host_set = true;
		machine_set_host(j->m, file_recorded_here(j->f));
	}
	/* perf's absent fields are -1 */
	if (st & PERF_SAMPLE_TID) {
		pid = (int32_t)s->pid;
		tid = (int32_t)s->tid;
	}
	t = machine_findnew_thread(j->m, pid, tid);
	if (!t)
		return -ENOMEM;
	j->n.samples++;
	j->n.bytes += cs->ev->hdr->size;
	if (!j->first)
		ob_putc(ob, ',');
	j->first = false;
	delim(ob, false, 2);
	ob_putc(ob, '{');
	key_s64(ob, false, 3, "timestamp",
		st & PERF_SAMPLE_TIME ? (int64_t)s->time : -1);
	key_s64(ob, true, 3, "pid", t->pid);
	key_s64(ob, true, 3, "tid", t->tid);
	if (j->combined_sample_type & PERF_SAMPLE_CPU)
		key_s64(ob, true, 3, "cpu",
			st & PERF_SAMPLE_CPU ? (int32_t)s->cpu : -1);
	key(ob, true, 3, "comm");
	put_str(ob, t->comm, t->comm_len);
	key(ob, true, 3, "callchain");
	ob_putc(ob, '[');
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint8_t mode = PERF_RECORD_MISC_USER;
		bool first = true;

		for (uint64_t i = 0; s->callchain && i < s->nr_callchain; i++) {
			uint64_t ip = s->callchain[i];

			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				/* perf follows these three, skips others */
				if (ip == (uint64_t)PERF_CONTEXT_HV)
					mode = PERF_RECORD_MISC_HYPERVISOR;
				else if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
					mode = PERF_RECORD_MISC_KERNEL;
				else if (ip == (uint64_t)PERF_CONTEXT_USER)
					mode = PERF_RECORD_MISC_USER;
				continue;
			}
			if (!first)
				ob_putc(ob, ',');
			first = false;
			machine_resolve(j->m, t, mode, ip, true, &al);
			put_entry(j, ip, &al);
		}
	} else {
		machine_resolve(j->m, t,
				cs->ev->hdr->misc &
					PERF_RECORD_MISC_CPUMODE_MASK,
				s->ip, true, &al);
		put_entry(j, s->ip, &al);
	}
	delim(ob, false, 3);
	ob_putc(ob, ']');
	delim(ob, false, 2);
	ob_putc(ob, '}');
	ob_line_done(ob);
	return ob->err;
}

int json_conv_new(FILE *out, struct prd_file *f, struct machine *m,
		  struct json_conv **out_conv)
{
	struct json_conv *j = calloc(1, sizeof(*j));

	*out_conv = NULL;
	if (!j || ob_init(&j->ob, out)) {
		free(j);
		return -ENOMEM;
	}
	j->f = f;
	j->m = m;
	j->first = true;
	for (uint32_t i = 0; i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);

		if (a)
			j->combined_sample_type |= a->attr.sample_type;
	}
	*out_conv = j;
	return 0;
}

int json_conv_finish(struct json_conv *j)
{
	struct outbuf *ob = &j->ob;

	if (!j->started)
		start(j);
	delim(ob, false, 1);
	ob_putc(ob, ']');
	delim(ob, false, 0);
	ob_write(ob, "}\n", 2);
	ob_flush(ob);
	if (!ob->err && fflush(ob->f))
		ob->err = errno ? -errno : -EIO;
	if (ob->err)
		pr_err("data convert: writing the JSON: %s",
		       strerror(-ob->err));
	return ob->err;
}

const struct conv_counts *json_conv_counts(const struct json_conv *j)
{
	return &j->n;
}

uint64_t json_conv_bytes(const struct json_conv *j)
{
	return j->ob.flushed + j->ob.len;
}

void json_conv_free(struct json_conv *j)
{
	if (!j)
		return;
	free(j->ob.p);
	free(j);
}
