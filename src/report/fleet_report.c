// SPDX-License-Identifier: MIT
/*
 * report and export --from a store (see fleet_report.h).
 *
 * report: per event, the samples' leaf frames summed by the sort keys
 * (comm, pid, dso, sym, host) in perf report --stdio's layout (Overhead,
 * -n's Samples, the keys; "[.] name" or "[k] name"; widths from the
 * entries), so that the fleet's table reads as a file's
 * report --no-children -g none does, and compares line by line with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "../common/log.h"
#include "../common/opts.h"
#include "../fleet/clickhouse.h"
#include "../fleet/profile.h"
#include "../machine/intern.h"
#include "fleet_report.h"

enum fkey { FK_COMM, FK_PID, FK_DSO, FK_SYM, FK_HOST, FK_MAX };

static const char *const fkey_names[FK_MAX] = { "comm", "pid", "dso", "sym",
						"host" };
static const char *const fkey_heads[FK_MAX] = { "Command", "Pid:Command",
						"Shared Object", "Symbol",
						"Host" };

static int read_store(const char *from, const char *where,
		      struct fleet_profile *p)
{
	int err = fleet_profile_init(p, NULL);

	if (!err)
		err = ch_read(from, where, p);
	return err;
}

/* The object's short name as perf shows it (its base name). */
static void dso_short(const struct fleet_profile *p, const struct fleet_loc *l,
		      char *buf, size_t len)
{
	size_t n;
	const char *s = fleet_str_of(p, l->dso, &n), *slash;

	if (!l->dso || !n) {
		snprintf(buf, len, "[unknown]");
		return;
	}
	slash = memrchr(s, '/', n);
	if (slash && s[0] != '[') {
		n -= (size_t)(slash + 1 - s);
		s = slash + 1;
	}
	snprintf(buf, len, "%.*s", (int)n, s);
}

static size_t key_text(const struct fleet_profile *p,
		       const struct fleet_sample *s, enum fkey k, char *buf,
		       size_t len)
{
	uint32_t n;
	const uint32_t *locs = fleet_stack_of(p, s->stack, &n);
	const struct fleet_loc *l = n ? fleet_loc_of(p, locs[0]) : NULL;
	size_t sl;
	const char *str;
	char name[1024];

	switch (k) {
	case FK_COMM:
		str = fleet_str_of(p, s->comm, &sl);
		return (size_t)snprintf(buf, len, "%.*s", (int)sl, str);
	case FK_PID:
		str = fleet_str_of(p, s->comm, &sl);
		return (size_t)snprintf(buf, len, "%7u:%.*s", s->pid, (int)sl,
					str);
	case FK_HOST:
		str = fleet_str_of(p, s->host, &sl);
		return (size_t)snprintf(buf, len, "%.*s", (int)sl, str);
	case FK_DSO:
		if (!l)
			return (size_t)snprintf(buf, len, "[unknown]");
		dso_short(p, l, buf, len);
		return strlen(buf);
	default:
		if (!l)
			return (size_t)snprintf(buf, len, "[.] [unknown]");
		fleet_frame_name(p, l, name, sizeof(name));
		return (size_t)snprintf(buf, len, "[%c] %s",
					l->kernel ? 'k' : '.', name);
	}
}

struct rentry {
	uint32_t id; /* in the entries' table */
	uint64_t period, samples;
};

struct freport {
	const struct perfring_report_opts *o;
	struct fleet_profile p;
	enum fkey keys[FK_MAX];
	int nkeys;
	struct itab ents; /* event index, then the keys' texts */
	struct u64v period, samples;
};

static int parse_keys(struct freport *r, const char *sort)
{
	char *copy = strdup(sort && *sort ? sort : "comm,dso,sym"), *save, *tok;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < FK_MAX && strcmp(tok, fkey_names[k]); k++)
			;
		if (k == FK_MAX || r->nkeys == FK_MAX) {
			pr_err("report --from: sort key '%s' (comm, pid, dso, sym, host)",
			       tok);
			free(copy);
			return -EINVAL;
		}
		r->keys[r->nkeys++] = (enum fkey)k;
	}
	free(copy);
	return r->nkeys ? 0 : -EINVAL;
}

/* The entries: the key "EVENT\x1fTEXT\x1fTEXT..." per sample. */
static int aggregate(struct freport *r)
{
	char key[8192], buf[2048];

	for (size_t i = 0; i < r->p.nr_samples; i++) {
		const struct fleet_sample *s = &r->p.samples[i];
		size_t o = (size_t)snprintf(key, sizeof(key), "%u", s->event);
		uint32_t id;
		int err;

		for (int k = 0; k < r->nkeys; k++) {
			size_t n = key_text(&r->p, s, r->keys[k], buf,
					    sizeof(buf));

			if (n >= sizeof(buf))
				n = sizeof(buf) - 1;
			if (o + n + 2 > sizeof(key))
				break;
			key[o++] = '\x1f';
			memcpy(key + o, buf, n);
			o += n;
		}
		err = itab_intern(&r->ents, key, o, &id, NULL);
		if (!err)
			err = u64v_set(&r->period, id - 1, s->value);
		if (!err)
			err = u64v_set(&r->samples, id - 1, s->count);
		if (err)
			return err;
	}
	return 0;
}

/* Field @k (0: the event) of entry @id: its text and length. */
static const char *field(const struct freport *r, uint32_t id, int k,
			 size_t *len)
{
	size_t kl;
	const char *s = itab_key(&r->ents, id, &kl), *end = s + kl;

	for (; k > 0 && s < end; k--) {
		const char *sep = memchr(s, '\x1f', (size_t)(end - s));

		s = sep ? sep + 1 : end;
	}
	*len = (size_t)((const char *)(memchr(s, '\x1f', (size_t)(end - s)) ?:
					       end) -
			s);
	return s;
}

static const struct freport *sort_r;

static int entry_cmp(const void *pa, const void *pb)
{
	const struct rentry *a = pa, *b = pb;
	size_t al, bl;
	const char *as, *bs;
	int c;

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	as = itab_key(&sort_r->ents, a->id, &al);
	bs = itab_key(&sort_r->ents, b->id, &bl);
	c = memcmp(as, bs, al < bl ? al : bl);
	return c ? c : al < bl ? -1 : al > bl;
}

static void print_event(struct freport *r, FILE *out, uint32_t ev, bool first)
{
	const struct perfring_report_opts *o = r->o;
	struct rentry *v = calloc(r->ents.nr + 1, sizeof(*v));
	size_t nv = 0, width[FK_MAX], len;
	uint64_t total = 0, samples = 0, ns;
	const char *sep = OPTS_GET(o, field_sep, NULL);
	bool show_n = OPTS_GET(o, show_nr_samples, false);
	bool quiet = OPTS_GET(o, quiet, false);
	double limit = OPTS_GET(o, percent_limit, 0.0);
	int nw = 12;
	char unit = ' ', evs[16];

	if (!v)
		return;
	snprintf(evs, sizeof(evs), "%u", ev);
	for (uint32_t id = 1; id <= r->ents.nr; id++) {
		const char *s = field(r, id, 0, &len);

		if (len != strlen(evs) || memcmp(s, evs, len))
			continue;
		v[nv].id = id;
		v[nv].period = r->period.v[id - 1];
		v[nv].samples = r->samples.v[id - 1];
		total += v[nv].period;
		samples += v[nv].samples;
		nv++;
	}
	sort_r = r;
	qsort(v, nv, sizeof(*v), entry_cmp);
	for (int k = 0; k < r->nkeys; k++)
		width[k] = strlen(fkey_heads[r->keys[k]]);
	for (size_t i = 0; i < nv; i++) {
		char d[24];
		int n = snprintf(d, sizeof(d), "%" PRIu64, v[i].samples);

		if (n > nw)
			nw = n;
		for (int k = 0; k < r->nkeys; k++) {
			field(r, v[i].id, k + 1, &len);
			if (len > width[k])
				width[k] = len;
		}
	}
	if (!first)
		fputs("\n\n", out);
	ns = samples;
	for (const char *u = "KMG"; *u && ns > 1000; u++) {
		ns /= 1000;
		unit = *u;
	}
	if (!quiet) {
		fprintf(out,
			"# Samples: %" PRIu64 "%c of event '%s'\n"
			"# Event count (approx.): %" PRIu64 "\n#\n# ",
			ns, unit, r->p.events[ev].name, total);
		fputs("Overhead", out);
		if (show_n)
			fprintf(out, "%s%*s", sep ? sep : "  ", nw, "Samples");
		for (int k = 0; k < r->nkeys; k++)
			fprintf(out, "%s%-*s", sep ? sep : "  ", (int)width[k],
				fkey_heads[r->keys[k]]);
		fputs("\n", out);
		if (!sep) {
			fputs("# ........", out);
			if (show_n)
				fprintf(out, "  %.*s", nw,
					"........................");
			for (int k = 0; k < r->nkeys; k++) {
				fputs("  ", out);
				for (size_t j = 0; j < width[k]; j++)
					fputc('.', out);
			}
			fputs("\n", out);
		}
		fputs("#\n", out);
	}
	for (size_t i = 0; i < nv; i++) {
		double pct =
			total ? (double)v[i].period * 100.0 / (double)total : 0;

		if (pct < limit)
			continue;
		if (sep)
			fprintf(out, "%.2f%%", pct);
		else
			fprintf(out, "  %7.2f%%", pct);
		if (show_n)
			fprintf(out, "%s%*" PRIu64, sep ? sep : "  ",
				sep ? 0 : nw, v[i].samples);
		for (int k = 0; k < r->nkeys; k++) {
			const char *s = field(r, v[i].id, k + 1, &len);
			bool last = k + 1 == r->nkeys && r->keys[k] == FK_SYM;

			fprintf(out, "%s%-*.*s", sep ? sep : "  ",
				sep || last ? 0 : (int)width[k], (int)len, s);
		}
		fputc('\n', out);
	}
	free(v);
}

int fleet_report_run(const struct perfring_report_opts *o, FILE *out)
{
	struct freport r = { .o = o };
	const char *from = OPTS_GET(o, from, NULL);
	const char *where = OPTS_GET(o, where, NULL);
	int err;

	err = parse_keys(&r, OPTS_GET(o, sort, NULL));
	if (!err)
		err = read_store(from, where, &r.p);
	if (!err)
		err = aggregate(&r);
	if (!err) {
		if (!OPTS_GET(o, quiet, false))
			fprintf(out, "# perfring.samples of %s%s%s\n#\n#\n",
				from, where && *where ? " where " : "",
				where && *where ? where : "");
		for (uint32_t ev = 0; ev < r.p.nr_events; ev++)
			print_event(&r, out, ev, ev == 0);
		if (!r.p.nr_events && !OPTS_GET(o, quiet, false))
			fputs("# no samples\n", out);
		fputs("\n\n", out); /* as perf report ends its tables */
		if (fflush(out) || ferror(out))
			err = -EIO;
	}
	fleet_profile_free(&r.p);
	itab_free(&r.ents);
	free(r.period.v);
	free(r.samples.v);
	return err;
}

int fleet_export_pprof(const char *from, const char *where, FILE *out)
{
	struct fleet_profile p;
	struct pb gz = { 0 };
	int err = read_store(from, where, &p);

	if (!err)
		err = fleet_pprof(&p, true, &gz);
	if (!err && gz.len && fwrite(gz.p, 1, gz.len, out) != gz.len)
		err = -EIO;
	pb_free(&gz);
	fleet_profile_free(&p);
	return err;
}

/* A name into the folded key: ';' is the separator (':' instead),
 * control characters '?', spaces in comms '_' (as export.c). */
static size_t key_put(char *key, size_t o, size_t room, const char *s, size_t n,
		      bool comm)
{
	for (size_t i = 0; i < n && o < room; i++) {
		char c = s[i];

		key[o++] = c == ';'				? ':' :
			   (unsigned char)c < 0x20 || c == 0x7f ? '?' :
			   comm && c == ' '			? '_' :
								  c;
	}
	return o;
}

int fleet_export_stacks(const char *from, const char *where, fleet_stack_fn fn,
			void *ctx)
{
	struct fleet_profile p;
	size_t room = 1 << 20;
	char *key = malloc(room), buf[1024];
	int err = key ? read_store(from, where, &p) : -ENOMEM;

	for (size_t i = 0; !err && i < p.nr_samples; i++) {
		const struct fleet_sample *s = &p.samples[i];
		uint32_t n;
		const uint32_t *locs = fleet_stack_of(&p, s->stack, &n);
		size_t sl, o;
		const char *comm = fleet_str_of(&p, s->comm, &sl);

		o = key_put(key, 0, room, comm, sl, true);
		for (uint32_t k = n; k-- > 0 && o < room;) {
			const struct fleet_loc *l = fleet_loc_of(&p, locs[k]);

			key[o++] = ';';
			if (l->func) {
				const char *f = fleet_str_of(&p, l->func, &sl);

				o = key_put(key, o, room, f, sl, false);
			} else if (l->dso) {
				dso_short(&p, l, buf + 1, sizeof(buf) - 2);
				buf[0] = '[';
				strcat(buf, "]");
				o = key_put(key, o, room, buf, strlen(buf),
					    false);
			} else {
				o = key_put(key, o, room, "[unknown]", 9,
					    false);
			}
			if (l->kernel && (l->func || l->dso))
				o = key_put(key, o, room, "_[k]", 4, false);
		}
		err = fn(ctx, key, o, s->count);
	}
	if (key)
		fleet_profile_free(&p);
	free(key);
	return err;
}
