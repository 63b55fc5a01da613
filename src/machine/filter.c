// SPDX-License-Identifier: MIT
/* Sample filters with perf's meanings (see filter.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "../common/log.h"
#include "filter.h"

#define MAX_CPUS 4096 /* perf's MAX_NR_CPUS */

/* Splits @list at commas into a NULL-terminated array of copies. */
static int split(const char *list, char ***out)
{
	size_t n = 1, i = 0;
	char **v, *copy, *save = NULL;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	copy = strdup(list);
	v = calloc(n + 1, sizeof(*v));
	if (!copy || !v) {
		free(copy);
		free(v);
		return -ENOMEM;
	}
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		v[i] = strdup(s);
		if (!v[i]) {
			for (size_t k = 0; k < i; k++)
				free(v[k]);
			free(v);
			free(copy);
			return -ENOMEM;
		}
		i++;
	}
	free(copy);
	*out = v;
	return 0;
}

static void free_strs(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static bool has_str(char *const *v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static int set_ints(const char *list, const char *what, int32_t **out,
		    uint32_t *nr)
{
	char **v;
	int err;
	uint32_t n = 0;

	if (!list || !*list)
		return 0;
	err = split(list, &v);
	if (err)
		return err;
	while (v[n])
		n++;
	free(*out);
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out) {
		free_strs(v);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		char *end;
		long x = strtol(v[i], &end, 10);

		if (*end || end == v[i] || x < INT_MIN || x > INT_MAX) {
			pr_err("--%s: not a number: '%s'", what, v[i]);
			free_strs(v);
			return -EINVAL;
		}
		(*out)[i] = (int32_t)x;
	}
	*nr = n;
	free_strs(v);
	return 0;
}

int filter_set_pids(struct sample_filter *f, const char *list)
{
	int err = set_ints(list, "pid", &f->pids, &f->nr_pids);

	f->any_thread |= f->nr_pids > 0;
	return err;
}

int filter_set_tids(struct sample_filter *f, const char *list)
{
	int err = set_ints(list, "tid", &f->tids, &f->nr_tids);

	f->any_thread |= f->nr_tids > 0;
	return err;
}

static int set_strs(const char *list, char ***out)
{
	if (!list || !*list)
		return 0;
	free_strs(*out);
	*out = NULL;
	return split(list, out);
}

int filter_set_comms(struct sample_filter *f, const char *list)
{
	int err = set_strs(list, &f->comms);

	f->any_thread |= f->comms != NULL;
	return err;
}

int filter_set_syms(struct sample_filter *f, const char *list)
{
	return set_strs(list, &f->syms);
}

int filter_set_dsos(struct sample_filter *f, const char *list)
{
	return set_strs(list, &f->dsos);
}

/* "0-3,8": perf_cpu_map__new()'s syntax. */
int filter_set_cpus(struct sample_filter *f, const char *list)
{
	const char *p = list;

	if (!list || !*list)
		return 0;
	free(f->cpus);
	f->cpu_words = MAX_CPUS / 64;
	f->cpus = calloc(f->cpu_words, sizeof(*f->cpus));
	if (!f->cpus)
		return -ENOMEM;
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			goto bad;
		p = end;
		if (*p == '-') {
			b = strtoul(++p, &end, 10);
			if (end == p)
				goto bad;
			p = end;
		}
		if (a > b || b >= MAX_CPUS)
			goto bad;
		for (unsigned long c = a; c <= b; c++)
			f->cpus[c / 64] |= 1ull << (c % 64);
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	pr_err("--cpu: bad CPU list '%s' (as 0-3,8; CPUs below %d)", list,
	       MAX_CPUS);
	return -EINVAL;
}

/* "sec[.fraction]" (up to 9 fraction digits) in ns; "" is 0 (open). */
static int parse_ts(const char *s, size_t n, uint64_t *out)
{
	uint64_t sec = 0, ns = 0;
	size_t i = 0, digits = 0;

	*out = 0;
	if (!n)
		return 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (sec > UINT64_MAX / 10 / 1000000000ull)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (digits == 9)
				return -EINVAL;
			ns = ns * 10 + (uint64_t)(s[i] - '0');
		}
		for (; digits < 9; digits++)
			ns *= 10;
	}
	if (i != n)
		return -EINVAL;
	*out = sec * 1000000000ull + ns;
	return 0;
}

int filter_set_time(struct sample_filter *f, const char *range)
{
	const char *comma;

	if (!range || !*range)
		return 0;
	comma = strchr(range, ',');
	if (!comma ||
	    parse_ts(range, (size_t)(comma - range), &f->time_start) ||
	    parse_ts(comma + 1, strlen(comma + 1), &f->time_end) ||
	    (f->time_start && f->time_end && f->time_end < f->time_start)) {
		pr_err("--time: bad range '%s' (start,end in seconds, as 1234.5,1236)",
		       range);
		return -EINVAL;
	}
	return 0;
}

/* "12.5%": 0.125 into @out; false if not a percentage. */
static bool parse_pct(const char *s, size_t n, double *out)
{
	char buf[32], *end;

	if (n < 2 || n >= sizeof(buf) || s[n - 1] != '%')
		return false;
	memcpy(buf, s, n - 1);
	buf[n - 1] = 0;
	*out = strtod(buf, &end) / 100.0;
	return end != buf && !*end;
}

/* perf_time__percent_parse_str() for one range: [a, b] of the span,
 * the end one short of the next slice's start (but the file's last). */
static bool set_pct_range(struct sample_filter *f, double a, double b,
			  uint64_t first, uint64_t last)
{
	double span = (double)(last - first);

	if (a < 0.0 || a > 1.0 || b < 0.0 || b > 1.0 || last < first)
		return false;
	f->time_start = first + (uint64_t)(a * span + 0.5);
	f->time_end = first + (uint64_t)(b * span + 0.5);
	if (f->time_end > f->time_start && f->time_end != last)
		f->time_end--;
	return true;
}

int filter_set_time_pct(struct sample_filter *f, const char *range,
			uint64_t first, uint64_t last)
{
	const char *slash, *dash;
	double a, b;
	bool ok = false;

	if (!range || !strchr(range, '%'))
		return filter_set_time(f, range);
	slash = strchr(range, '/');
	dash = strchr(range, '-');
	if (strchr(range, ',')) {
		ok = false; /* several ranges: perf's, not ours */
	} else if (slash) {
		char *end;
		long nth = strtol(slash + 1, &end, 10);

		ok = !*end && end != slash + 1 &&
		     parse_pct(range, (size_t)(slash - range), &a) && a > 0 &&
		     set_pct_range(f, a * (double)(nth - 1), a * (double)nth,
				   first, last);
	} else if (dash) {
		ok = parse_pct(range, (size_t)(dash - range), &a) &&
		     parse_pct(dash + 1, strlen(dash + 1), &b) &&
		     set_pct_range(f, a, b, first, last);
	} else {
		ok = parse_pct(range, strlen(range), &a) && a > 0 &&
		     set_pct_range(f, 0.0, a, first, last);
	}
	if (!ok) {
		pr_err("--time: bad range '%s' (start,end in seconds; or one of perf's percent forms: 10%%/2, 10%%-20%%, 50%%)",
		       range);
		return -EINVAL;
	}
	return 0;
}

void filter_free(struct sample_filter *f)
{
	free(f->pids);
	free(f->tids);
	free_strs(f->comms);
	free_strs(f->syms);
	free_strs(f->dsos);
	free(f->cpus);
	memset(f, 0, sizeof(*f));
}

static bool has_int(const int32_t *v, uint32_t n, int32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool filter_thread(const struct sample_filter *f, const struct thread *t)
{
	if (!f->any_thread)
		return true;
	if (!t)
		return false;
	if (f->comms && !has_str(f->comms, t->comm))
		return false;
	if (f->nr_pids && !has_int(f->pids, f->nr_pids, t->pid))
		return false;
	if (f->nr_tids && !has_int(f->tids, f->nr_tids, t->tid))
		return false;
	return true;
}

bool filter_location(const struct sample_filter *f, const struct addr_loc *al,
		     uint64_t ip)
{
	if (f->dsos) {
		const struct dso *d = al->map ? al->dso : NULL;

		if (!d ||
		    !(has_str(f->dsos, d->short_name) ||
		      (d->short_name != d->name && has_str(f->dsos, d->name))))
			return false;
	}
	if (f->syms) {
		char addr[32];

		if (!al->sym)
			return false;
		if (has_str(f->syms, al->sym->name))
			return true;
		/* perf also takes the symbol's start address, "0x..". */
		snprintf(addr, sizeof(addr), "0x%llx",
			 (unsigned long long)(ip - al->sym_off));
		return has_str(f->syms, addr);
	}
	return true;
}
