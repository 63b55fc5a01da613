// SPDX-License-Identifier: MIT
/*
 * The -e string parser (src/sources/evparse.c): syntax and errors with
 * their offsets, modifiers as perf 6.1 applies them (test/events.sh checks
 * the same against perf record on this kernel), PMU format bits, perf's
 * names after the cycles fallback, and resolution against this machine's
 * sysfs PMUs and tracefs (the expected values read from sysfs and tracefs
 * here, independently of the parser).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources/evparse.h"
#include "sources/perf_event.h"
#include "harness.h"

static struct evp_list list;
static struct evp_resolved res[EVP_MAX_EVENTS];

static int parse(const char *s, struct evp_error *err)
{
	return evp_parse(s, &list, err);
}

/* @s fails at offset @pos with @what in the message. */
static void bad(const char *s, int pos, const char *what)
{
	struct evp_error err;
	char buf[1024];

	CHECK(parse(s, &err) < 0, "'%s' parsed", s);
	CHECK(err.pos == pos, "'%s': error at %d, expected %d (%s)", s, err.pos,
	      pos, err.msg);
	CHECK(strstr(err.msg, what), "'%s': '%s' lacks '%s'", s, err.msg, what);
	evp_error_format(s, &err, buf, sizeof(buf));
	CHECK(strstr(buf, s) && strstr(buf, "\\___"), "%s", buf);
}

static struct perf_event_attr mods(const char *m, bool *sread)
{
	struct perf_event_attr a = { 0 };
	struct evp_error err;

	CHECK(evp_apply_mods(m, false, &a, sread, &err) == 0, "%s: %s", m,
	      err.msg);
	return a;
}

static void test_syntax(void)
{
	struct evp_error err;

	CHECK_EQ(parse("cpu-clock", &err), 0);
	CHECK_EQ(list.nr, 1);
	CHECK_EQ(list.ev[0].kind, EVP_SYMBOL);
	CHECK_EQ(parse("cpu-clock:u", &err), 0);
	CHECK(!strcmp(list.ev[0].mods, "u"), "%s", list.ev[0].mods);
	CHECK(!strcmp(list.ev[0].text, "cpu-clock:u"), "%s", list.ev[0].text);
	CHECK_EQ(parse("sched:sched_sw*:k", &err), 0);
	CHECK_EQ(list.ev[0].kind, EVP_TRACEPOINT);
	CHECK(!strcmp(list.ev[0].sys, "sched") &&
		      !strcmp(list.ev[0].name, "sched_sw*"),
	      "%s %s", list.ev[0].sys, list.ev[0].name);
	CHECK_EQ(parse("r1a3", &err), 0);
	CHECK_EQ(list.ev[0].kind, EVP_RAW);
	CHECK_EQ(list.ev[0].raw_config, 0x1a3);
	CHECK_EQ(parse("cpu/event=0x3c,umask=0x0,any/u", &err), 0);
	CHECK_EQ(list.ev[0].kind, EVP_PMU);
	CHECK_EQ(list.ev[0].nr_terms, 3);
	CHECK(!strcmp(list.ev[0].terms[1].name, "umask") &&
		      !strcmp(list.ev[0].terms[1].value, "0x0"),
	      "term");
	CHECK(!list.ev[0].terms[2].has_value, "any has no value");
	CHECK_EQ(parse("cpu-clock/period=10/", &err), 0);
	CHECK_EQ(list.ev[0].kind, EVP_SYMBOL);
	CHECK_EQ(parse("{cpu-clock,page-faults:k}:S,cs,{a/config=1/,b:c}",
		       &err),
		 0);
	CHECK_EQ(list.nr, 5);
	CHECK_EQ(list.nr_groups, 2);
	CHECK_EQ(list.groups[0].count, 2);
	CHECK(!strcmp(list.groups[0].mods, "S"), "%s", list.groups[0].mods);
	CHECK_EQ(list.ev[2].group, -1);
	CHECK_EQ(list.ev[3].group, 1);
	CHECK_EQ(list.ev[4].kind, EVP_TRACEPOINT);

	CHECK_EQ(parse("mem:0x1000/8:rw,cpu-clock", &err), 0);
	CHECK_EQ(list.nr, 2);
	CHECK(list.ev[0].kind == EVP_BREAKPOINT &&
		      list.ev[0].raw_config == 0x1000 &&
		      list.ev[0].bp_len == 8 && list.ev[0].bp_type == 3,
	      "mem");
	bad("mem:0x1000/3", 11, "length must be");
	/* perf's lexer: the rwx run, then event modifiers, joined or after
	 * a second colon */
	bad("mem:0x1000:rq", 12, "unknown modifier 'q'");
	bad("mem:0x1000:rr", 12, "bad breakpoint access 'r'");
	CHECK_EQ(parse("mem:0x1000:wu,mem:0x2000:ppp,mem:0x3000:rw:k", &err),
		 0);
	CHECK(list.nr == 3 && list.ev[0].bp_type == 2 &&
		      !strcmp(list.ev[0].mods, "u") &&
		      list.ev[1].bp_type == 3 &&
		      !strcmp(list.ev[1].mods, "ppp") &&
		      list.ev[2].bp_type == 3 && !strcmp(list.ev[2].mods, "k"),
	      "mem access and modifiers");
	bad("mem:zz", 4, "bad breakpoint address");
	bad("", 0, "empty");
	bad("cpu-clock:x", 10, "unknown modifier 'x'");
	bad("cpu-clock:upx", 12, "unknown modifier 'x'");
	bad("cpu-clock:pppp", 10, "at most 3 p");
	bad("cpu-clock:kuk", 10, "given twice");
	bad("cpu-clock:", 10, "missing modifier");
	bad("nosuch", 0, "unknown event 'nosuch'");
	bad("cpu-clock,", 9, "missing event");
	bad("{cpu-clock,page-faults", 0, "no '}'");
	bad("{cpu-clock,{page-faults}}", 11, "do not nest");
	bad("cpu-clock}", 9, "unexpected '}'");
	bad("pmu/config=1", 3, "no closing '/'");
	bad("pmu/a,,b/", 6, "empty term");
	bad("sched:sw$", 8, "bad character");
	bad("a:b:c:d", 5, "too many ':'");
	bad("cpu-clock:u:k", 11, "not a tracepoint");
}

static void test_mods(void)
{
	struct perf_event_attr a;
	struct evp_error err;
	bool sread = false;

	/* The values perf 6.1 records (perf evlist -v), as events.sh
	 * checks against perf itself. */
	a = mods("u", NULL);
	CHECK(!a.exclude_user && a.exclude_kernel && a.exclude_hv &&
		      a.exclude_guest,
	      "u");
	a = mods("k", NULL);
	CHECK(a.exclude_user && !a.exclude_kernel && a.exclude_hv &&
		      !a.exclude_guest,
	      "k");
	a = mods("uk", NULL);
	CHECK(!a.exclude_user && !a.exclude_kernel && a.exclude_hv, "uk");
	a = mods("ppp", NULL);
	CHECK(a.precise_ip == 3 && a.exclude_guest, "ppp");
	a = mods("P", NULL);
	CHECK(a.precise_ip == 3 && !a.exclude_guest, "P");
	a = mods("G", NULL);
	CHECK(a.exclude_host && !a.exclude_guest, "G");
	a = mods("H", NULL);
	CHECK(!a.exclude_host && a.exclude_guest, "H");
	a = mods("IDe", NULL);
	CHECK(a.exclude_idle && a.pinned && a.exclusive, "IDe");
	a = mods("S", &sread);
	CHECK(sread, "S");
	/* A group's modifiers start from what its event has. */
	a = mods("k", NULL);
	CHECK_EQ(evp_apply_mods("u", true, &a, NULL, &err), 0);
	CHECK(!a.exclude_user && !a.exclude_kernel && a.exclude_hv, "{k}:u");
}

static void test_format(void)
{
	struct perf_event_attr a = { 0 };
	char name[64];

	CHECK_EQ(evp_format_put("config:0-7", 0x3c, &a), 0);
	CHECK_EQ(evp_format_put("config:8-15", 0x01, &a), 0);
	CHECK_EQ(a.config, 0x13c);
	CHECK_EQ(evp_format_put("config1:0-3,8-11", 0xab, &a), 0);
	CHECK_EQ(a.config1, 0xa0b);
	CHECK_EQ(evp_format_put("config2:63", 1, &a), 0);
	CHECK_EQ(a.config2, 1ull << 63);
	CHECK_EQ(evp_format_put("config:0-63", ~0ull, &a), 0);
	CHECK_EQ(evp_format_put("config:0-7", 0x100, &a), -EINVAL);
	CHECK_EQ(evp_format_put("config:7-0", 1, &a), -EINVAL);
	CHECK_EQ(evp_format_put("config:64", 1, &a), -EINVAL);
	CHECK_EQ(evp_format_put("config3:1", 1, &a), -EINVAL);
	CHECK_EQ(evp_format_put("config:", 1, &a), -EINVAL);

	memset(&a, 0, sizeof(a));
	a.exclude_guest = 1;
	evp_attr_name("cpu-clock", &a, name, sizeof(name));
	CHECK(!strcmp(name, "cpu-clock"), "%s", name);
	a.exclude_kernel = a.exclude_hv = 1;
	evp_attr_name("cpu-clock", &a, name, sizeof(name));
	CHECK(!strcmp(name, "cpu-clock:uH"), "%s", name); /* perf's */
}

static void test_hw(void)
{
	uint32_t type;
	uint64_t config;

	CHECK_EQ(evp_hw_lookup("cycles", &type, &config), 0);
	CHECK(type == PERF_TYPE_HARDWARE && config == PERF_COUNT_HW_CPU_CYCLES,
	      "cycles");
	CHECK_EQ(evp_hw_lookup("L1-dcache-load-misses", &type, &config), 0);
	CHECK(type == PERF_TYPE_HW_CACHE &&
		      config == (PERF_COUNT_HW_CACHE_L1D |
				 PERF_COUNT_HW_CACHE_OP_READ << 8 |
				 PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
	      "L1-dcache-load-misses %llx", (unsigned long long)config);
	CHECK_EQ(evp_hw_lookup("iTLB-stores", &type, &config), -ENOENT);
	CHECK_EQ(evp_hw_lookup("branch-misses", &type, &config), 0);
}

/* Resolution against this machine's sysfs and tracefs. */
static void test_resolve(void)
{
	const char *pmus = "/sys/bus/event_source/devices";
	const char *tracefs = pe_tracefs();
	struct evp_error err;
	char path[512];
	glob_t g;
	int n;

	CHECK_EQ(parse("software/config=2,period=1000/u", &err), 0);
	n = evp_resolve(&list, "", pmus, tracefs, res, EVP_MAX_EVENTS, &err);
	CHECK(n == 1, "%d: %s", n, err.msg);
	CHECK(res[0].attr.type == PERF_TYPE_SOFTWARE &&
		      res[0].attr.config == 2 &&
		      res[0].attr.sample_period == 1000 && res[0].has_period &&
		      res[0].attr.exclude_kernel,
	      "software PMU");
	CHECK_EQ(parse("software/nosuch/", &err), 0);
	CHECK(evp_resolve(&list, "", pmus, tracefs, res, EVP_MAX_EVENTS, &err) <
		      0,
	      "unknown term resolved");
	CHECK(strstr(err.msg, "unknown term 'nosuch'") && err.pos == 9, "%d %s",
	      err.pos, err.msg);
	CHECK_EQ(parse("nosuch_pmu/config=1/", &err), 0);
	CHECK(evp_resolve(&list, "", pmus, tracefs, res, EVP_MAX_EVENTS,
			  &err) == -ENOENT,
	      "unknown PMU");
	CHECK_EQ(parse("{cpu-clock,cs}:S,page-faults", &err), 0);
	n = evp_resolve(&list, "", pmus, tracefs, res, EVP_MAX_EVENTS, &err);
	CHECK_EQ(n, 3);
	CHECK(res[0].leader == 0 && res[1].leader == 0 && res[2].leader == -1,
	      "leaders %d %d %d", res[0].leader, res[1].leader, res[2].leader);
	CHECK(res[0].sample_read && res[1].sample_read && !res[2].sample_read,
	      "S");

	if (!tracefs) {
		REFUSED("no tracefs: tracepoint resolution not tested");
		return;
	}
	/* A glob expands to what tracefs has, as glob(3) finds it. */
	snprintf(path, sizeof(path), "%s/events/sched/sched_sw*/id", tracefs);
	CHECK_EQ(glob(path, 0, NULL, &g), 0);
	CHECK_EQ(parse("sched:sched_sw*", &err), 0);
	n = evp_resolve(&list, "", pmus, tracefs, res, EVP_MAX_EVENTS, &err);
	CHECK(n == (int)g.gl_pathc, "%d events, %zu in tracefs (%s)", n,
	      g.gl_pathc, err.msg);
	globfree(&g);
	for (int i = 0; i < n; i++)
		CHECK(res[i].tracepoint &&
			      res[i].attr.type == PERF_TYPE_TRACEPOINT &&
			      !strncmp(res[i].tp_name, "sched:sched_sw", 14),
		      "%s", res[i].tp_name);
	CHECK_EQ(parse("sched:no_such_event", &err), 0);
	CHECK(evp_resolve(&list, "", pmus, tracefs, res, EVP_MAX_EVENTS,
			  &err) == -ENOENT &&
		      strstr(err.msg, "unknown tracepoint"),
	      "%s", err.msg);
	CHECK_EQ(parse("sched:*", &err), 0);
	CHECK(evp_resolve(&list, "", pmus, tracefs, res, 3, &err) == -E2BIG,
	      "more events than room");
}

int main(void)
{
	test_syntax();
	test_mods();
	test_format();
	test_hw();
	test_resolve();
	printf("evparse: ok\n");
	return test_exit();
}
