// SPDX-License-Identifier: MIT
/*
 * perf script's fields: -F (FIELDS, TYPE:FIELDS, +F, -F) over perf's
 * defaults per output type (hw, sw, trace, ...), the fields an event
 * prints worked out at the first sample (a field it does not sample is
 * dropped, or refused when -F asked for it), and each attr's facts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../common/outbuf.h"
#include "../format/perf_data.h"
#include "../format/perf_reader.h"
#include "../machine/inline.h"
#include "../machine/srcline.h"
#include "../machine/threads.h"
#include "../machine/unwind.h"
#include "../tracepoint/tpfmt.h"
#include "../tracepoint/tracedat_lines.h"
#include "../machine/filter.h"
#include "../format/header_print.h"
#include "dump.h"
#include "../format/sample_read.h"
#include "script_internal.h"

static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{ "comm", F_COMM },
	{ "tid", F_TID },
	{ "pid", F_PID },
	{ "time", F_TIME },
	{ "cpu", F_CPU },
	{ "event", F_EVNAME },
	{ "trace", F_TRACE },
	{ "ip", F_IP },
	{ "sym", F_SYM },
	{ "dso", F_DSO },
	{ "addr", F_ADDR },
	{ "symoff", F_SYMOFFSET },
	{ "period", F_PERIOD },
	{ "srcline", F_SRCLINE },
	{ "callindent", F_CALLINDENT },
};

static const char *const type_names[OT_MAX] = { "hw",  "sw",	"trace", "hwc",
						"raw", "break", "other" };

static int script_out_type(uint32_t attr_type)
{
	return attr_type < OT_OTHER ? (int)attr_type : OT_OTHER;
}

static bool is_dummy(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       a->config == PERF_COUNT_SW_DUMMY;
}

/* ---- -F ---------------------------------------------------------------- */

static int field_bit(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]);
	     i++)
		if (strlen(field_names[i].name) == n &&
		    !memcmp(field_names[i].name, s, n))
			return (int)field_names[i].bit;
	return -1;
}

static int parse_one_spec(struct script *sc, const char *spec);

/* Several -F (perf takes one per event type) arrive joined with ';'. */
int script_parse_fields(struct script *sc, const char *specs)
{
	char *copy = strdup(specs), *save = NULL, *one;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (one = strtok_r(copy, ";", &save); one && !err;
	     one = strtok_r(NULL, ";", &save))
		err = parse_one_spec(sc, one);
	free(copy);
	return err;
}

static int parse_one_spec(struct script *sc, const char *spec)
{
	const char *colon = strchr(spec, ':');
	const char *p = spec;
	int type = -1;
	bool edit = spec[0] == '+' || spec[0] == '-';

	if (colon) {
		size_t n = (size_t)(colon - spec);

		for (int i = 0; i < OT_MAX; i++)
			if (strlen(type_names[i]) == n &&
			    !memcmp(type_names[i], spec, n))
				type = i;
		if (type < 0) {
			pr_err("-F: unknown event type '%.*s' (hw, sw, trace, raw, break)",
			       (int)n, spec);
			return -EINVAL;
		}
		p = colon + 1;
		sc->ot[type].fields = 0;
		sc->ot[type].user_set = true;
	} else if (!edit) {
		for (int i = 0; i < OT_MAX; i++) {
			sc->ot[i].fields = 0;
			sc->ot[i].user_set = true;
			sc->ot[i].wildcard = true;
		}
	}
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char sign = 0;
		int bit;

		if (*p == '+' || *p == '-') {
			if (!edit) {
				pr_err("-F: cannot mix +field/-field with a field list");
				return -EINVAL;
			}
			sign = *p++;
			n--;
		} else if (edit) {
			pr_err("-F: '%.*s': every field needs + or - here",
			       (int)n, p);
			return -EINVAL;
		}
		bit = field_bit(p, n);
		if (bit < 0) {
			pr_err("-F: invalid field '%.*s' (comm pid tid cpu time event period ip sym symoff dso addr trace srcline callindent)",
			       (int)n, p);
			return -EINVAL;
		}
		for (int i = 0; i < OT_MAX; i++) {
			if (type >= 0 && i != type)
				continue;
			/* trace only means something for tracepoints. */
			if (bit == F_TRACE && i != OT_TRACE && type < 0)
				continue;
			if (sign == '-') {
				sc->ot[i].fields &= ~(unsigned)bit;
				sc->ot[i].user_unset |= (unsigned)bit;
			} else {
				sc->ot[i].fields |= (unsigned)bit;
			}
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* ---- set-up at the first sample (pipe mode: all attrs are known) ------ */

static const struct {
	unsigned field;
	uint64_t stype;
	const char *what;
} needs[] = {
	{ F_IP, PERF_SAMPLE_IP, "IP" },
	{ F_TID | F_PID, PERF_SAMPLE_TID, "TID" },
	{ F_TIME, PERF_SAMPLE_TIME, "TIME" },
	{ F_CPU, PERF_SAMPLE_CPU, "CPU" },
	{ F_ADDR, PERF_SAMPLE_ADDR, "ADDR" },
};

int script_setup(struct script *sc)
{
	uint32_t n = prd_nr_attrs(sc->f);
	bool any_chain = false, trace_chain = false;
	const char *host, *rel;
	struct utsname u;

	sc->setup = true;
	for (uint32_t i = 0; i < n; i++) {
		const struct prd_attr *a = prd_attr(sc->f, i);
		size_t len;

		if (!a)
			continue;
		len = strlen(a->name ? a->name : "[unknown]");
		if ((int)len > sc->name_width)
			sc->name_width = (int)len;
		if (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
			any_chain = true;
			if (a->attr.type == PERF_TYPE_TRACEPOINT)
				trace_chain = true;
		}
	}
	sc->use_callchain = !sc->o.hide_callchain &&
			    (any_chain || prd_is_pipe(sc->f));
	if (sc->use_callchain && trace_chain && !sc->ot[OT_TRACE].user_set)
		sc->ot[OT_TRACE].fields |= F_IP | F_SYM | F_SYMOFFSET | F_DSO;
	/* Check each type's fields against its first (non-dummy) event. */
	for (int t = 0; t < OT_MAX; t++) {
		const struct prd_attr *first = NULL;

		for (uint32_t i = 0; i < n && !first; i++) {
			const struct prd_attr *a = prd_attr(sc->f, i);

			if (a && script_out_type(a->attr.type) == t)
				first = a;
		}
		if (!first) {
			if (sc->ot[t].user_set && !sc->ot[t].wildcard) {
				pr_err("-F: the file has no %s events",
				       type_names[t]);
				return -EINVAL;
			}
			continue;
		}
		if (is_dummy(&first->attr))
			continue;
		if (prd_is_pipe(sc->f) && !sc->o.hide_callchain &&
		    (first->attr.sample_type & PERF_SAMPLE_CALLCHAIN)) {
			if (!(sc->ot[t].user_unset & F_IP))
				sc->ot[t].fields |= F_IP;
			if (!(sc->ot[t].user_unset & F_SYM))
				sc->ot[t].fields |= F_SYM;
		}
		for (size_t k = 0; k < sizeof(needs) / sizeof(needs[0]); k++) {
			if (!(sc->ot[t].fields & needs[k].field) ||
			    (first->attr.sample_type & needs[k].stype))
				continue;
			if (sc->ot[t].user_set) {
				pr_err("samples for '%s' do not have %s: cannot print that field",
				       first->name ? first->name : "?",
				       needs[k].what);
				return -EINVAL;
			}
			sc->ot[t].fields &= ~needs[k].field;
		}
	}
	/* Kernel symbols and the vDSO only for a file recorded here. */
	host = prd_feature_string(sc->f, PD_FEAT_HOSTNAME);
	rel = prd_feature_string(sc->f, PD_FEAT_OSRELEASE);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	/* The printing side applies it (it owns the machine). */
	sc->host = (!host || !strcmp(host, u.nodename)) &&
		   (!rel || !strcmp(rel, u.release));
	return 0;
}

static int attr_info_fill(struct script *sc, struct attr_info *ai,
			  const struct prd_attr *a)
{
	const char *name = a->name ? a->name : "[unknown]";
	size_t n = strlen(name);
	size_t w = (size_t)sc->name_width > n ? (size_t)sc->name_width : n;

	ai->evname = malloc(w + 3);
	if (!ai->evname)
		return -ENOMEM;
	memset(ai->evname, ' ', w - n);
	memcpy(ai->evname + w - n, name, n);
	memcpy(ai->evname + w, ": ", 3);
	ai->evname_len = (uint32_t)w + 2;
	ai->fields = sc->ot[script_out_type(a->attr.type)].fields;
	ai->chain = (ai->fields & F_IP) && sc->use_callchain &&
		    (a->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	ai->type = a->attr.type;
	ai->sample_type = a->attr.sample_type;
	ai->sample_period = a->attr.sample_period;
	ai->a = a;
	return 0;
}

/* The attr_info of @a: by its index, made on first use. */
struct attr_info *script_attr_info(struct script *sc, const struct prd_attr *a)
{
	struct attr_info *ai;

	if (a->index >= sc->nr_ai) {
		uint32_t n = a->index + 1;
		struct attr_info **v = realloc(sc->ai, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + sc->nr_ai, 0, (n - sc->nr_ai) * sizeof(*v));
		sc->ai = v;
		sc->nr_ai = n;
	}
	ai = sc->ai[a->index];
	if (ai && ai->a == a)
		return ai;
	/* New, or another attr at this index: a new object (the old one is
	 * kept until the end, with the others). */
	ai = calloc(1, sizeof(*ai));
	if (!ai || attr_info_fill(sc, ai, a)) {
		free(ai);
		return NULL;
	}
	ai->next_old = sc->ai[a->index];
	sc->ai[a->index] = ai;
	return ai;
}
