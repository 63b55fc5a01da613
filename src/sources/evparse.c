// SPDX-License-Identifier: MIT
/*
 * Event strings as perf record's -e takes them (see evparse.h): a pure
 * parser, then resolution against sysfs PMUs and tracefs.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include "evparse.h"
#include "perf_event.h"

static int fail(struct evp_error *err, int pos, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct evp_error *err, int pos, int ret, const char *fmt, ...)
{
	va_list ap;

	err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- the hardware and hardware-cache events (perf list hw, cache) ---- */

static const struct {
	const char *name, *alias;
	uint64_t config;
} hw_names[] = {
	{ "cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branches",
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend",
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend",
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_COUNT_HW_REF_CPU_CYCLES },
};

/* perf's cache names, and which operations each cache counts. */
static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};
static const unsigned cache_ops[PERF_COUNT_HW_CACHE_MAX] = {
	7, 5, 7, 7, 1, 1, 7, /* bit 0 read, 1 write, 2 prefetch */
};
static const char *const op_names[PERF_COUNT_HW_CACHE_OP_MAX][2] = {
	{ "load", "loads" },
	{ "store", "stores" },
	{ "prefetch", "prefetches" },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void cache_name(int c, int op, int res, char *buf, size_t len)
{
	if (res == PERF_COUNT_HW_CACHE_RESULT_MISS)
		snprintf(buf, len, "%s-%s-misses", cache_names[c],
			 op_names[op][0]);
	else
		snprintf(buf, len, "%s-%s", cache_names[c], op_names[op][1]);
}

void evp_hw_names(void (*fn)(const char *name, uint32_t type, uint64_t config,
			     void *ctx),
		  void *ctx)
{
	char name[64];

	/* as perf list names them: "cpu-cycles OR cycles" */
	for (size_t i = 0; i < ARRAY_LEN(hw_names); i++) {
		snprintf(name, sizeof(name), "%s%s%s", hw_names[i].name,
			 hw_names[i].alias ? " OR " : "",
			 hw_names[i].alias ? hw_names[i].alias : "");
		fn(name, PERF_TYPE_HARDWARE, hw_names[i].config, ctx);
	}
	for (int c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++)
		for (int op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (int r = 0; r < PERF_COUNT_HW_CACHE_RESULT_MAX;
			     r++) {
				if (!(cache_ops[c] & (1u << op)))
					continue;
				cache_name(c, op, r, name, sizeof(name));
				fn(name, PERF_TYPE_HW_CACHE,
				   (uint64_t)c | (uint64_t)op << 8 |
					   (uint64_t)r << 16,
				   ctx);
			}
}

int evp_hw_lookup(const char *name, uint32_t *type, uint64_t *config)
{
	char buf[64];

	for (size_t i = 0; i < ARRAY_LEN(hw_names); i++)
		if (!strcasecmp(name, hw_names[i].name) ||
		    (hw_names[i].alias &&
		     !strcasecmp(name, hw_names[i].alias))) {
			*type = PERF_TYPE_HARDWARE;
			*config = hw_names[i].config;
			return 0;
		}
	for (int c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++)
		for (int op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (int r = 0; r < PERF_COUNT_HW_CACHE_RESULT_MAX;
			     r++) {
				if (!(cache_ops[c] & (1u << op)))
					continue;
				cache_name(c, op, r, buf, sizeof(buf));
				if (strcasecmp(name, buf))
					continue;
				*type = PERF_TYPE_HW_CACHE;
				*config = (uint64_t)c | (uint64_t)op << 8 |
					  (uint64_t)r << 16;
				return 0;
			}
	return -ENOENT;
}

static bool sw_lookup(const char *name, uint64_t *config)
{
	for (const struct pe_sw_name *n = pe_sw_names; n->name; n++)
		if (!strcmp(name, n->name) ||
		    (n->alias && !strcmp(name, n->alias))) {
			*config = n->config;
			return true;
		}
	return false;
}

static bool is_symbol(const char *name)
{
	uint32_t type;
	uint64_t config;

	return sw_lookup(name, &config) ||
	       evp_hw_lookup(name, &type, &config) == 0;
}

/* ---- modifiers ---- */

int evp_apply_mods(const char *mods, bool group, struct perf_event_attr *a,
		   bool *sample_read, struct evp_error *err)
{
	/* As perf's get_event_modifier(): an event's own modifiers start
	 * from nothing, a group's from what its event has. */
	int eu = group ? a->exclude_user : 0,
	    ek = group ? a->exclude_kernel : 0;
	int eh = group ? a->exclude_hv : 0, eH = group ? a->exclude_host : 0;
	int eG = group ? a->exclude_guest : 0, eI = group ? a->exclude_idle : 0;
	int precise = group ? a->precise_ip : 0;
	int pinned = group ? a->pinned : 0,
	    exclusive = group ? a->exclusive : 0;
	int exclude = eu | ek | eh, exclude_GH = 0;
	bool precise_max = false, sread = false;
	size_t n = strlen(mods);

	if (n > strlen("ukhGHpppPSDIeW"))
		return fail(err, 0, -EINVAL, "too many modifiers '%s'", mods);
	for (size_t i = 0; i < n; i++) {
		char c = mods[i];

		if (c != 'p' && strchr(mods + i + 1, c))
			return fail(err, (int)i, -EINVAL,
				    "modifier '%c' given twice", c);
		switch (c) {
		case 'u':
			if (!exclude)
				exclude = eu = ek = eh = 1;
			if (!exclude_GH)
				eG = 1;
			eu = 0;
			break;
		case 'k':
			if (!exclude)
				exclude = eu = ek = eh = 1;
			ek = 0;
			break;
		case 'h':
			if (!exclude)
				exclude = eu = ek = eh = 1;
			eh = 0;
			break;
		case 'G':
			if (!exclude_GH)
				exclude_GH = eG = eH = 1;
			eG = 0;
			break;
		case 'H':
			if (!exclude_GH)
				exclude_GH = eG = eH = 1;
			eH = 0;
			break;
		case 'I':
			eI = 1;
			break;
		case 'p':
			precise++;
			if (!exclude_GH)
				eG = 1;
			break;
		case 'P':
			precise_max = true;
			break;
		case 'S':
			sread = true;
			break;
		case 'D':
			pinned = 1;
			break;
		case 'e':
			exclusive = 1;
			break;
		case 'W':
			break; /* weak group: only perf stat uses it */
		default:
			return fail(
				err, (int)i, -EINVAL,
				"unknown modifier '%c' (modifiers: u k h G H I p pp ppp P S D e W)",
				c);
		}
	}
	if (precise > 3)
		return fail(err, 0, -EINVAL,
			    "Bad modifier: at most 3 p (precise_ip 0..3)");
	a->exclude_user = eu & 1;
	a->exclude_kernel = ek & 1;
	a->exclude_hv = eh & 1;
	a->exclude_host = eH & 1;
	a->exclude_guest = eG & 1;
	a->exclude_idle = eI & 1;
	a->precise_ip = precise_max ? 3 : precise & 3;
	a->pinned = pinned & 1;
	a->exclusive = exclusive & 1;
	if (sample_read && sread)
		*sample_read = true;
	return 0;
}

void evp_attr_name(const char *base, const struct perf_event_attr *a, char *buf,
		   size_t len)
{
	char mods[16];
	size_t n = 0;
	bool guest_default = false;

	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		if (!a->exclude_kernel)
			mods[n++] = 'k';
		if (!a->exclude_user)
			mods[n++] = 'u';
		if (!a->exclude_hv)
			mods[n++] = 'h';
		guest_default = true;
	}
	for (unsigned i = 0; i < a->precise_ip; i++) {
		mods[n++] = 'p';
		guest_default = true;
	}
	if (a->exclude_host || a->exclude_guest == guest_default) {
		if (!a->exclude_host)
			mods[n++] = 'H';
		if (!a->exclude_guest)
			mods[n++] = 'G';
	}
	mods[n] = 0;
	snprintf(buf, len, "%s%s%s", base, n ? ":" : "", mods);
}

/* ---- the parser ---- */

struct scan {
	const char *s;
	struct evp_list *l;
	struct evp_error *err;
};

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static bool glob_char(char c)
{
	return name_char(c) || c == '*' || c == '?' || c == '[' || c == ']' ||
	       c == '!';
}

/* Copies s[a, b) into @dst (@len with its NUL). */
static int copy_part(struct scan *sc, char *dst, size_t len, int a, int b,
		     const char *what)
{
	if (b - a <= 0)
		return fail(sc->err, a, -EINVAL, "missing %s", what);
	if ((size_t)(b - a) >= len)
		return fail(sc->err, a, -EINVAL, "%s longer than %zu bytes",
			    what, len - 1);
	memcpy(dst, sc->s + a, (size_t)(b - a));
	dst[b - a] = 0;
	return 0;
}

/* Checks modifiers at s[a, b) and stores them. */
static int take_mods(struct scan *sc, char *dst, int *dst_pos, int a, int b)
{
	struct perf_event_attr probe = { 0 };
	int err;

	err = copy_part(sc, dst, EVP_MODS_MAX, a, b, "modifier");
	if (err) {
		sc->err->msg[0] = 0;
		return fail(sc->err, a, -EINVAL,
			    b <= a ? "missing modifier after ':'" :
				     "Bad modifier: too many");
	}
	*dst_pos = a;
	err = evp_apply_mods(dst, false, &probe, NULL, sc->err);
	if (err)
		sc->err->pos += a;
	return err;
}

/* The terms between the slashes of pmu/.../: s[a, b). */
static int take_terms(struct scan *sc, struct evp_event *ev, int a, int b)
{
	int i = a;

	while (i < b) {
		struct evp_term *t;
		int s0 = i, eq = -1, err;

		while (i < b && sc->s[i] != ',') {
			if (sc->s[i] == '=' && eq < 0)
				eq = i;
			i++;
		}
		if (i == s0)
			return fail(sc->err, s0, -EINVAL, "empty term");
		if (ev->nr_terms == EVP_MAX_TERMS)
			return fail(sc->err, s0, -E2BIG, "more than %d terms",
				    EVP_MAX_TERMS);
		t = &ev->terms[ev->nr_terms++];
		t->pos = s0;
		err = copy_part(sc, t->name, sizeof(t->name), s0,
				eq < 0 ? i : eq, "term name");
		if (err)
			return err;
		for (const char *p = t->name; *p; p++)
			if (!name_char(*p))
				return fail(sc->err, s0 + (int)(p - t->name),
					    -EINVAL,
					    "bad character in term '%s'",
					    t->name);
		if (eq >= 0) {
			err = copy_part(sc, t->value, sizeof(t->value), eq + 1,
					i, "term value");
			if (err)
				return err;
			t->has_value = true;
		}
		if (i < b)
			i++; /* the comma */
		if (i == b && sc->s[b - 1] == ',')
			return fail(sc->err, b, -EINVAL, "empty term");
	}
	return 0;
}

/* perf's mem:addr[/len][:access][[:]modifiers]: s[a, c2) the address
 * and length, s[c2 + 1, b) the access (rwx, default rw) and modifiers. */
static int take_breakpoint(struct scan *sc, struct evp_event *ev, int a, int c2,
			   int b)
{
	char num[40], *end;
	int e = c2 < 0 ? b : c2, i, err;

	ev->kind = EVP_BREAKPOINT;
	if (copy_part(sc, num, sizeof(num), a, e, "breakpoint address"))
		return -EINVAL;
	errno = 0;
	ev->raw_config = strtoull(num, &end, 0);
	if (end == num || errno || (*end && *end != '/'))
		return fail(sc->err, a + (int)(end - num), -EINVAL,
			    "bad breakpoint address (mem:ADDR[/LEN][:rwx])");
	if (*end == '/') {
		char *len = end + 1;

		ev->bp_len = strtoull(len, &end, 0);
		if (end == len || *end ||
		    (ev->bp_len != 1 && ev->bp_len != 2 && ev->bp_len != 4 &&
		     ev->bp_len != 8))
			return fail(sc->err, a + (int)(len - num), -EINVAL,
				    "breakpoint length must be 1, 2, 4 or 8");
	}
	if (c2 < 0) {
		ev->bp_type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
		sc->l->nr++;
		return 0;
	}
	if (c2 + 1 >= b)
		return fail(sc->err, c2 + 1, -EINVAL,
			    "missing breakpoint access after ':'");
	/* perf's lexer: the access is the run of r, w and x after the
	 * colon; event modifiers may follow it, directly ("wu") or after
	 * a second colon ("rw:u"), or stand alone ("mem:ADDR:ppp"). */
	for (i = c2 + 1; i < b; i++) {
		unsigned bit = sc->s[i] == 'r' ? HW_BREAKPOINT_R :
			       sc->s[i] == 'w' ? HW_BREAKPOINT_W :
			       sc->s[i] == 'x' ? HW_BREAKPOINT_X :
						 0;

		if (!bit)
			break;
		if (ev->bp_type & bit)
			return fail(
				sc->err, i, -EINVAL,
				"bad breakpoint access '%c' (r, w, x once each)",
				sc->s[i]);
		ev->bp_type |= bit;
	}
	if (!ev->bp_type)
		ev->bp_type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	if (i < b && sc->s[i] == ':' && i > c2 + 1)
		i++;
	if (i < b) {
		err = take_mods(sc, ev->mods, &ev->mods_pos, i, b);
		if (err)
			return err;
	}
	sc->l->nr++;
	return 0;
}

/* pmu/terms/[:mods], or symbol/terms/ (@slash: the first '/'). */
static int take_pmu_event(struct scan *sc, struct evp_event *ev, int a,
			  int slash, int b)
{
	const char *s = sc->s;
	int end = -1, err;

	for (int i = slash + 1; i < b; i++)
		if (s[i] == '/') {
			end = i;
			break;
		}
	if (end < 0)
		return fail(sc->err, slash, -EINVAL,
			    "no closing '/' for the terms");
	err = copy_part(sc, ev->sys, sizeof(ev->sys), a, slash, "PMU");
	if (err)
		return err;
	for (int i = a; i < slash; i++)
		if (!name_char(s[i]))
			return fail(sc->err, i, -EINVAL,
				    "bad character in PMU name");
	err = take_terms(sc, ev, slash + 1, end);
	if (err)
		return err;
	if (end + 1 < b) {
		/* pmu/terms/u and pmu/terms/:u both, as in perf */
		int m = end + 1 + (s[end + 1] == ':');

		err = take_mods(sc, ev->mods, &ev->mods_pos, m, b);
		if (err)
			return err;
	}
	if (is_symbol(ev->sys)) {
		ev->kind = EVP_SYMBOL;
		memcpy(ev->name, ev->sys, sizeof(ev->name));
		ev->sys[0] = 0;
	} else {
		ev->kind = EVP_PMU;
	}
	sc->l->nr++;
	return 0;
}

/* system:event[:mods] (@c1, @c2: its colons, @c2 < 0 when none). */
static int take_tracepoint(struct scan *sc, struct evp_event *ev, int a, int c1,
			   int c2, int b)
{
	const char *s = sc->s;
	int err;

	ev->kind = EVP_TRACEPOINT;
	memcpy(ev->sys, ev->name, sizeof(ev->sys));
	err = copy_part(sc, ev->name, sizeof(ev->name), c1 + 1, c2 < 0 ? b : c2,
			"tracepoint event");
	if (err)
		return err;
	for (int i = a; i < (c2 < 0 ? b : c2); i++)
		if (i != c1 && !glob_char(s[i]))
			return fail(sc->err, i, -EINVAL,
				    "bad character in tracepoint name");
	if (c2 >= 0) {
		err = take_mods(sc, ev->mods, &ev->mods_pos, c2 + 1, b);
		if (err)
			return err;
	}
	sc->l->nr++;
	return 0;
}

/* name[:mods] (a symbolic or raw event) or system:event[:mods]. */
static int take_named_event(struct scan *sc, struct evp_event *ev, int a, int b)
{
	const char *s = sc->s;
	int c1 = -1, c2 = -1, err;

	for (int i = a; i < b; i++)
		if (s[i] == ':') {
			if (c1 < 0)
				c1 = i;
			else if (c2 < 0)
				c2 = i;
			else
				return fail(sc->err, i, -EINVAL,
					    "parser error: too many ':'");
		}
	if (c1 < 0)
		c1 = b;
	err = copy_part(sc, ev->name, sizeof(ev->name), a, c1, "event name");
	if (err)
		return err;
	if (is_symbol(ev->name)) {
		ev->kind = EVP_SYMBOL;
		if (c2 >= 0)
			return fail(
				sc->err, c2, -EINVAL,
				"parser error: '%s' is not a tracepoint (system:event)",
				ev->name);
	} else if (ev->name[0] == 'r' && ev->name[1] &&
		   strspn(ev->name + 1, "0123456789abcdefABCDEF") ==
			   strlen(ev->name + 1) &&
		   strlen(ev->name + 1) <= 16) {
		ev->kind = EVP_RAW;
		ev->raw_config = strtoull(ev->name + 1, NULL, 16);
		if (c2 >= 0)
			return fail(sc->err, c2, -EINVAL,
				    "parser error: too many ':'");
	} else if (c1 < b) {
		return take_tracepoint(sc, ev, a, c1, c2, b);
	} else {
		return fail(
			sc->err, a, -ENOENT,
			"unknown event '%s': `perfring list` shows the events this machine has",
			ev->name);
	}
	if (c1 < b) {
		err = take_mods(sc, ev->mods, &ev->mods_pos, c1 + 1, b);
		if (err)
			return err;
	}
	sc->l->nr++;
	return 0;
}

/* One event at s[a, b) (no group braces, no top-level comma). */
static int take_event(struct scan *sc, int a, int b, int group)
{
	struct evp_event *ev;
	const char *s = sc->s;
	int err;

	if (sc->l->nr == EVP_MAX_EVENTS)
		return fail(sc->err, a, -E2BIG, "more than %d events",
			    EVP_MAX_EVENTS);
	ev = &sc->l->ev[sc->l->nr];
	memset(ev, 0, sizeof(*ev));
	ev->group = group;
	ev->pos = a;
	err = copy_part(sc, ev->text, sizeof(ev->text), a, b, "event");
	if (err)
		return err;
	if (b - a > 4 && !strncmp(s + a, "mem:", 4)) {
		const char *c2 = memchr(s + a + 4, ':', (size_t)(b - a - 4));

		return take_breakpoint(sc, ev, a + 4, c2 ? (int)(c2 - s) : -1,
				       b);
	}
	for (int i = a; i < b; i++)
		if (s[i] == '/')
			return take_pmu_event(sc, ev, a, i, b);
	return take_named_event(sc, ev, a, b);
}

/* The end of the item from @i: a top-level ',' or '}' or the NUL. */
static int item_end(const char *s, int i)
{
	bool in_terms = false, mem = !strncmp(s + i, "mem:", 4);

	for (; s[i]; i++) {
		if (s[i] == '/' && !mem) /* mem:addr/len has no terms */
			in_terms = !in_terms;
		else if (!in_terms &&
			 (s[i] == ',' || s[i] == '}' || s[i] == '{'))
			break;
	}
	return i;
}

int evp_parse(const char *str, struct evp_list *l, struct evp_error *err)
{
	struct scan sc = { .s = str, .l = l, .err = err };
	int i = 0, n, ret;

	memset(err, 0, sizeof(*err));
	l->nr = 0;
	l->nr_groups = 0;
	n = (int)strnlen(str, 4096);
	if (n >= 4096)
		return fail(err, 0, -E2BIG, "event string too long");
	if (!n)
		return fail(err, 0, -EINVAL, "empty event");
	while (i <= n) {
		if (str[i] == '{') {
			struct evp_group *g = &l->groups[l->nr_groups];
			int open = i;

			if (l->nr_groups == EVP_MAX_EVENTS)
				return fail(err, i, -E2BIG, "too many groups");
			memset(g, 0, sizeof(*g));
			g->first = l->nr;
			i++;
			for (;;) {
				int e = item_end(str, i);

				if (str[e] == '{')
					return fail(
						err, e, -EINVAL,
						"parser error: groups do not nest");
				ret = take_event(&sc, i, e, l->nr_groups);
				if (ret)
					return ret;
				i = e + 1;
				if (str[e] == '}')
					break;
				if (!str[e])
					return fail(
						err, open, -EINVAL,
						"parser error: no '}' for this '{'");
			}
			g->count = l->nr - g->first;
			l->nr_groups++;
			if (str[i] == ':') {
				int e = item_end(str, i + 1);

				ret = take_mods(&sc, g->mods, &g->mods_pos,
						i + 1, e);
				if (ret)
					return ret;
				i = e;
			}
			if (str[i] && str[i] != ',')
				return fail(
					err, i, -EINVAL,
					"parser error: expected ',' after the group");
			if (!str[i])
				break;
			i++;
			if (!str[i])
				return fail(
					err, i - 1, -EINVAL,
					"parser error: missing event after ','");
			continue;
		}
		{
			int e = item_end(str, i);

			if (str[e] == '}' || str[e] == '{')
				return fail(err, e, -EINVAL,
					    "parser error: unexpected '%c'",
					    str[e]);
			ret = take_event(&sc, i, e, -1);
			if (ret)
				return ret;
			if (!str[e])
				break;
			i = e + 1;
			if (!str[i])
				return fail(
					err, i - 1, -EINVAL,
					"parser error: missing event after ','");
		}
	}
	return 0;
}

void evp_error_format(const char *str, const struct evp_error *err, char *buf,
		      size_t len)
{
	int pos = err->pos < 0 ? 0 : err->pos;

	if (pos > (int)strlen(str))
		pos = (int)strlen(str);
	/* The string on a line of its own, so that the mark lines up under
	 * it whatever the log puts before the first line. */
	snprintf(buf, len, "event syntax error:\n  '%s'\n   %*s\\___ %s", str,
		 pos, "", err->msg);
}

/* ---- PMU formats ---- */

int evp_format_put(const char *format, uint64_t value,
		   struct perf_event_attr *a)
{
	__u64 *field;
	const char *p;
	int used = 0;

	if (!strncmp(format, "config:", 7)) {
		field = &a->config;
		p = format + 7;
	} else if (!strncmp(format, "config1:", 8)) {
		field = &a->config1;
		p = format + 8;
	} else if (!strncmp(format, "config2:", 8)) {
		field = &a->config2;
		p = format + 8;
	} else {
		return -EINVAL;
	}
	/* Ranges "lo-hi" or single bits, low bits of @value first. */
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi;

		if (end == p || lo > 63)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || hi > 63 || hi < lo)
				return -EINVAL;
			p = end;
		}
		for (unsigned long b = lo; b <= hi; b++, used++) {
			if (used < 64 && (value >> used & 1))
				*field |= 1ull << b;
			else
				*field &= ~(1ull << b);
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	if (!used || (used < 64 && value >> used))
		return -EINVAL;
	return 0;
}

/* ---- resolution ---- */

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return (int)n;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static char **matching_dirs(const char *path, const char *glob);
static void free_names(char **v);

struct resolve {
	const char *str, *sysfs, *tracefs;
	struct evp_resolved *out;
	int max, n;
	struct evp_error *err;
};

static struct evp_resolved *new_out(struct resolve *r, int pos)
{
	struct evp_resolved *o;

	if (r->n >= r->max) {
		fail(r->err, pos, -E2BIG, "more than %d events", r->max);
		return NULL;
	}
	o = &r->out[r->n++];
	memset(o, 0, sizeof(*o));
	o->attr.size = sizeof(o->attr);
	o->leader = -1;
	return o;
}

/* Terms every event takes (perf's config terms that apply here). */
static int common_term(struct evp_resolved *o, const struct evp_term *t,
		       struct evp_error *err, bool *taken)
{
	uint64_t v = 1;

	*taken = true;
	if (!strcmp(t->name, "name")) {
		if (!t->has_value)
			return fail(err, t->pos, -EINVAL,
				    "name= needs a value");
		snprintf(o->name, sizeof(o->name), "%s", t->value);
		return 0;
	}
	if (t->has_value && !parse_u64(t->value, &v) &&
	    (!strcmp(t->name, "period") || !strcmp(t->name, "freq") ||
	     !strncmp(t->name, "config", 6)))
		return fail(err, t->pos, -EINVAL,
			    "term '%s': '%s' is not a number", t->name,
			    t->value);
	if (!strcmp(t->name, "period")) {
		o->attr.sample_period = v;
		o->attr.freq = 0;
		o->has_period = true;
	} else if (!strcmp(t->name, "freq")) {
		o->attr.sample_freq = v;
		o->attr.freq = 1;
		o->has_freq = true;
	} else if (!strcmp(t->name, "config")) {
		o->attr.config = v;
	} else if (!strcmp(t->name, "config1")) {
		o->attr.config1 = v;
	} else if (!strcmp(t->name, "config2")) {
		o->attr.config2 = v;
	} else {
		*taken = false;
	}
	return 0;
}

/* The valid terms of @pmu, for the error message. */
static void valid_terms(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *d;
	size_t n;
	DIR *dp;

	n = (size_t)snprintf(buf, len,
			     "config,config1,config2,name,period,freq");
	if (snprintf(path, sizeof(path), "%s/format", dir) >= (int)sizeof(path))
		return;
	dp = opendir(path);
	if (!dp)
		return;
	while ((d = readdir(dp)) && n < len)
		if (d->d_name[0] != '.')
			n += (size_t)snprintf(buf + n, len - n, ",%s",
					      d->d_name);
	closedir(dp);
}

static bool safe_file_name(const char *s)
{
	return *s && s[0] != '.' && !strchr(s, '/');
}

/* A format term of the PMU in @dir: 1 if it was one. */
static int format_term(const char *dir, const char *name, const char *value,
		       struct perf_event_attr *a, int pos,
		       struct evp_error *err)
{
	char path[PATH_MAX], fmt[256];
	uint64_t v = 1;

	if (!safe_file_name(name))
		return 0;
	if (snprintf(path, sizeof(path), "%s/format/%s", dir, name) >=
		    (int)sizeof(path) ||
	    read_text(path, fmt, sizeof(fmt)) < 0)
		return 0;
	if (value && !parse_u64(value, &v))
		return fail(err, pos, -EINVAL,
			    "term '%s': '%s' is not a number", name, value);
	if (evp_format_put(fmt, v, a))
		return fail(err, pos, -EINVAL,
			    "value %s too big for term '%s' (format %s)",
			    value ? value : "1", name, fmt);
	return 1;
}

/* pmu/alias/: the events/ALIAS file's "event=0x3c,umask=0x00" terms. */
static int alias_term(const char *dir, const char *pmu, const char *name,
		      struct evp_resolved *o, int pos, struct evp_error *err)
{
	char path[PATH_MAX], text[512], *save = NULL, *tok;
	int ret;

	if (!safe_file_name(name))
		return 0;
	if (snprintf(path, sizeof(path), "%s/events/%s", dir, name) >=
		    (int)sizeof(path) ||
	    read_text(path, text, sizeof(text)) < 0)
		return 0;
	for (tok = strtok_r(text, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v = 1;

		if (eq)
			*eq++ = 0;
		while (*tok == ' ')
			tok++;
		if (!strncmp(tok, "config", 6) && eq) {
			struct evp_term t = { .has_value = true, .pos = pos };
			bool taken;

			snprintf(t.name, sizeof(t.name), "%s", tok);
			snprintf(t.value, sizeof(t.value), "%s", eq);
			ret = common_term(o, &t, err, &taken);
			if (ret)
				return ret;
			if (taken)
				continue;
		}
		ret = format_term(dir, tok, eq, &o->attr, pos, err);
		if (ret < 0)
			return ret;
		if (!ret && eq && parse_u64(eq, &v))
			return fail(
				err, pos, -EINVAL,
				"alias %s/%s/: term '%s' is not in the PMU's format",
				pmu, name, tok);
	}
	return 1;
}

static int resolve_pmu(struct resolve *r, const struct evp_event *ev,
		       struct evp_resolved *o)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[64];
	uint64_t type;
	int ret;

	if (!safe_file_name(ev->sys) ||
	    snprintf(dir, sizeof(dir), "%s/%s", r->sysfs, ev->sys) >=
		    (int)sizeof(dir))
		return fail(r->err, ev->pos, -ENOENT, "bad PMU name");
	if (snprintf(path, sizeof(path), "%s/type", dir) >= (int)sizeof(path) ||
	    read_text(path, buf, sizeof(buf)) < 0 || !parse_u64(buf, &type) ||
	    type > UINT32_MAX)
		return fail(
			r->err, ev->pos, -ENOENT,
			"Cannot find PMU `%s'. Missing kernel support? (`perfring list pmu` shows the PMUs)",
			ev->sys);
	o->attr.type = (uint32_t)type;
	for (int i = 0; i < ev->nr_terms; i++) {
		const struct evp_term *t = &ev->terms[i];
		bool taken;

		ret = common_term(o, t, r->err, &taken);
		if (ret)
			return ret;
		if (taken)
			continue;
		ret = format_term(dir, t->name, t->has_value ? t->value : NULL,
				  &o->attr, t->pos, r->err);
		if (ret < 0)
			return ret;
		if (!ret && !t->has_value)
			ret = alias_term(dir, ev->sys, t->name, o, t->pos,
					 r->err);
		if (ret < 0)
			return ret;
		if (!ret) {
			char terms[512];

			valid_terms(dir, terms, sizeof(terms));
			return fail(
				r->err, t->pos, -EINVAL,
				"unknown term '%s' for pmu '%s' (valid terms: %s%s)",
				t->name, ev->sys, terms,
				t->has_value ? "" :
					       ", or an event in its events/");
		}
	}
	return 0;
}

/* tracepoint/config=ID/: the tracepoint of that id, for its format. */
static int tracepoint_by_id(struct resolve *r, const struct evp_event *ev,
			    struct evp_resolved *o)
{
	char path[PATH_MAX], sub[PATH_MAX + 256], buf[32];
	char **systems, **events;
	uint64_t id;
	bool found = false;

	if (!r->tracefs)
		r->tracefs = pe_tracefs();
	if (!r->tracefs)
		return fail(
			r->err, ev->pos, -ENOENT,
			"tracepoint events need tracefs, which is not mounted");
	snprintf(path, sizeof(path), "%s/events", r->tracefs);
	systems = matching_dirs(path, "*");
	for (size_t i = 0; systems && systems[i] && !found; i++) {
		if (snprintf(sub, sizeof(sub), "%s/%s", path, systems[i]) >=
		    (int)sizeof(sub))
			continue;
		events = matching_dirs(sub, "*");
		for (size_t j = 0; events && events[j] && !found; j++) {
			char idp[sizeof(sub) + 300];

			if (snprintf(idp, sizeof(idp), "%s/%s/id", sub,
				     events[j]) >= (int)sizeof(idp) ||
			    read_text(idp, buf, sizeof(buf)) < 0 ||
			    !parse_u64(buf, &id) || id != o->attr.config)
				continue;
			snprintf(o->tp_name, sizeof(o->tp_name), "%s:%s",
				 systems[i], events[j]);
			found = true;
		}
		free_names(events);
	}
	free_names(systems);
	if (!found)
		return fail(r->err, ev->pos, -ENOENT,
			    "no tracepoint has id %llu",
			    (unsigned long long)o->attr.config);
	o->tracepoint = true;
	o->tp_pmu_syntax = true;
	return 0;
}

static int resolve_symbol(struct resolve *r, const struct evp_event *ev,
			  struct evp_resolved *o)
{
	uint64_t config;
	uint32_t type;

	if (sw_lookup(ev->name, &config)) {
		o->attr.type = PERF_TYPE_SOFTWARE;
		o->attr.config = config;
	} else if (!evp_hw_lookup(ev->name, &type, &config)) {
		o->attr.type = type;
		o->attr.config = config;
	} else {
		return fail(r->err, ev->pos, -ENOENT, "unknown event '%s'",
			    ev->name);
	}
	for (int i = 0; i < ev->nr_terms; i++) {
		bool taken;
		int ret = common_term(o, &ev->terms[i], r->err, &taken);

		if (ret)
			return ret;
		if (!taken || !strncmp(ev->terms[i].name, "config", 6))
			return fail(
				r->err, ev->terms[i].pos, -EINVAL,
				"unknown term '%s' for '%s' (valid terms: name,period,freq)",
				ev->terms[i].name, ev->name);
	}
	return 0;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int tracepoint_one(struct resolve *r, const struct evp_event *ev,
			  const char *sys, const char *name)
{
	char path[PATH_MAX], buf[32];
	struct evp_resolved *o;
	uint64_t id;

	if (snprintf(path, sizeof(path), "%s/events/%s/%s/id", r->tracefs, sys,
		     name) >= (int)sizeof(path))
		return fail(r->err, ev->pos, -ENAMETOOLONG,
			    "tracepoint name too long");
	if (read_text(path, buf, sizeof(buf)) < 0) {
		path[strlen(path) - 3] = 0;
		return fail(
			r->err, ev->pos, -ENOENT,
			"unknown tracepoint: %s not found (`perfring list %s:*` shows its tracepoints)",
			path, sys);
	}
	if (!parse_u64(buf, &id) || !id || id > UINT32_MAX)
		return fail(r->err, ev->pos, -EINVAL,
			    "%s: bad tracepoint id '%s'", path, buf);
	o = new_out(r, ev->pos);
	if (!o)
		return -E2BIG;
	o->attr.type = PERF_TYPE_TRACEPOINT;
	o->attr.config = id;
	o->tracepoint = true;
	snprintf(o->tp_name, sizeof(o->tp_name), "%s:%s", sys, name);
	if (has_glob(ev->sys) || has_glob(ev->name))
		snprintf(o->name, sizeof(o->name), "%s:%s%s%s", sys, name,
			 ev->mods[0] ? ":" : "", ev->mods);
	return 1;
}

static bool dir_entry_ok(const struct dirent *d)
{
	return d->d_name[0] != '.' &&
	       (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN);
}

/* Names of the directories in @path matching @glob, in directory order
 * as perf takes them; NULL-ended. */
static char **matching_dirs(const char *path, const char *glob)
{
	size_t n = 0, cap = 16;
	char **v = malloc(cap * sizeof(*v));
	struct dirent *d;
	DIR *dp = opendir(path);

	if (!v || !dp) {
		free(v);
		if (dp)
			closedir(dp);
		return NULL;
	}
	while ((d = readdir(dp))) {
		if (!dir_entry_ok(d) || fnmatch(glob, d->d_name, 0))
			continue;
		if (n + 1 >= cap) {
			char **nv = realloc(v, 2 * cap * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap *= 2;
		}
		v[n] = strdup(d->d_name);
		if (v[n])
			n++;
	}
	closedir(dp);
	v[n] = NULL;
	return v;
}

static void free_names(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int resolve_tracepoint(struct resolve *r, const struct evp_event *ev)
{
	char path[PATH_MAX];
	char **systems;
	int found = 0, ret = 0;

	if (!r->tracefs)
		return fail(
			r->err, ev->pos, -ENOENT,
			"tracepoint '%s' needs tracefs, which is not mounted and cannot be mounted",
			ev->text);
	if (!has_glob(ev->sys) && !has_glob(ev->name))
		return tracepoint_one(r, ev, ev->sys, ev->name);
	snprintf(path, sizeof(path), "%s/events", r->tracefs);
	systems = matching_dirs(path, ev->sys);
	for (size_t i = 0; systems && systems[i] && ret >= 0; i++) {
		char sub[PATH_MAX];
		char **events;

		if (!strcmp(systems[i], "ftrace"))
			continue; /* not perf events */
		if (snprintf(sub, sizeof(sub), "%s/%s", path, systems[i]) >=
		    (int)sizeof(sub))
			continue;
		events = matching_dirs(sub, ev->name);
		for (size_t j = 0; events && events[j] && ret >= 0; j++) {
			ret = tracepoint_one(r, ev, systems[i], events[j]);
			if (ret == -ENOENT)
				ret = 0; /* a directory without id */
			else if (ret > 0)
				found++;
		}
		free_names(events);
	}
	free_names(systems);
	if (ret < 0)
		return ret;
	if (!found)
		return fail(
			r->err, ev->pos, -ENOENT,
			"no tracepoint matches '%s:%s' (`perfring list` shows them)",
			ev->sys, ev->name);
	return found;
}

int evp_resolve(const struct evp_list *l, const char *str,
		const char *sysfs_pmus, const char *tracefs,
		struct evp_resolved *out, int max, struct evp_error *err)
{
	struct resolve r = { .str = str,
			     .sysfs = sysfs_pmus,
			     .tracefs = tracefs,
			     .out = out,
			     .max = max,
			     .err = err };

	memset(err, 0, sizeof(*err));
	for (int g = -1, leader = -1, i = 0; i < l->nr; i++) {
		const struct evp_event *ev = &l->ev[i];
		int first = r.n, ret = 0;

		if (ev->kind == EVP_TRACEPOINT) {
			ret = resolve_tracepoint(&r, ev);
			if (ret < 0)
				return ret;
		} else {
			struct evp_resolved *o = new_out(&r, ev->pos);

			if (!o)
				return -E2BIG;
			if (ev->kind == EVP_RAW) {
				o->attr.type = PERF_TYPE_RAW;
				o->attr.config = ev->raw_config;
			} else if (ev->kind == EVP_BREAKPOINT) {
				/* perf's: every hit sampled; an execute
				 * breakpoint is a long wide */
				o->attr.type = PERF_TYPE_BREAKPOINT;
				o->attr.bp_type = ev->bp_type;
				o->attr.bp_addr = ev->raw_config;
				o->attr.bp_len =
					ev->bp_len ? ev->bp_len :
					ev->bp_type == HW_BREAKPOINT_X ?
						     sizeof(long) :
						     HW_BREAKPOINT_LEN_4;
				o->attr.sample_period = 1;
				o->has_period = true;
				/* perf 6.1's name: as written, but only
				 * "mem:ADDR" once a length is given */
				if (strchr(ev->text, '/'))
					snprintf(o->name, sizeof(o->name),
						 "mem:%.*s",
						 (int)strcspn(ev->text + 4,
							      "/"),
						 ev->text + 4);
			} else if (ev->kind == EVP_PMU) {
				ret = resolve_pmu(&r, ev, o);
				if (!ret &&
				    o->attr.type == PERF_TYPE_TRACEPOINT)
					ret = tracepoint_by_id(&r, ev, o);
			} else {
				ret = resolve_symbol(&r, ev, o);
			}
			if (ret)
				return ret;
		}
		for (int k = first; k < r.n; k++) {
			struct evp_resolved *o = &out[k];

			if (!o->name[0])
				snprintf(o->name, sizeof(o->name), "%s",
					 ev->text);
			/* perf's event_attr_init(): the guest is excluded
			 * unless modifiers say otherwise. */
			o->attr.exclude_guest = 1;
			if (ev->mods[0]) {
				ret = evp_apply_mods(ev->mods, false, &o->attr,
						     NULL, err);
				if (ret) {
					err->pos += ev->mods_pos;
					return ret;
				}
			}
			if (ev->group >= 0) {
				const struct evp_group *gr =
					&l->groups[ev->group];

				if (ev->group != g) {
					g = ev->group;
					leader = k; /* the group's first */
				}
				o->leader = leader;
				ret = evp_apply_mods(gr->mods, true, &o->attr,
						     &o->sample_read, err);
				if (ret) {
					err->pos += gr->mods_pos;
					return ret;
				}
			}
		}
	}
	return r.n;
}
