// SPDX-License-Identifier: MIT
/*
 * perfring list [CLASS|PATTERN]...: the events record accepts on this
 * machine, filtered as perf list filters: a class (hw, sw, cache, pmu,
 * tracepoint), SYS:EVENT globs on tracepoints, or any other word as
 * "*WORD*" on event names (a tracepoint's event part).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

struct list_filter {
	char **pats;
	int nr;
};

static const struct {
	const char *word, *alias, *kind;
} classes[] = {
	{ "hw", "hardware", "Hardware event" },
	{ "sw", "software", "Software event" },
	{ "cache", "hwcache", "Hardware cache event" },
	{ "pmu", NULL, "Kernel PMU event" },
	{ "tracepoint", NULL, "Tracepoint event" },
};

/* @kind is @class, or @class marked refused (PERFRING_KIND_REFUSED). */
static bool of_class(const char *kind, const char *class)
{
	size_t n = strlen(class);

	return !strncmp(kind, class, n) &&
	       (!kind[n] || !strcmp(kind + n, PERFRING_KIND_REFUSED));
}

static bool matches(const char *pat, const char *name, const char *kind)
{
	const char *colon = strchr(pat, ':');
	bool tp = !strcmp(kind, "Tracepoint event");
	char glob[512];

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(pat, classes[i].word) ||
		    (classes[i].alias && !strcmp(pat, classes[i].alias)))
			return of_class(kind, classes[i].kind);
	if (colon) {
		/* perf list 'sched:*wak*': system and event globs */
		const char *ncolon = strchr(name, ':');
		char sys[256], nsys[256];

		if (!tp || !ncolon)
			return false;
		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - pat), pat);
		snprintf(nsys, sizeof(nsys), "%.*s", (int)(ncolon - name),
			 name);
		return !fnmatch(sys, nsys, 0) &&
		       !fnmatch(colon + 1, ncolon + 1, 0);
	}
	snprintf(glob, sizeof(glob), "*%s*", pat);
	if (tp && strchr(name, ':'))
		name = strchr(name, ':') + 1;
	return !fnmatch(glob, name, 0);
}

/* The whole list shows what this machine opens; hardware events it
 * refuses show when asked for (list hw, list cache, a word), marked. */
static void list_one(const char *name, const char *kind, void *ctx)
{
	const struct list_filter *f = ctx;
	bool refused = strstr(kind, PERFRING_KIND_REFUSED) != NULL;
	bool show = !f->nr && !refused;

	for (int i = 0; i < f->nr && !show; i++)
		show = matches(f->pats[i], name, kind);
	if (show)
		printf("  %-48s [%s]\n", name, kind);
}

static const struct cli_option list_options[] = {
	OPT_END(),
};

static const struct cli_command list_command = {
	.name = "list",
	.usage =
		(const char *const[]){
			"[hw|sw|cache|pmu|tracepoint|SYS:EVENT|WORD]...",
			NULL },
	.options = list_options,
	.notes =
		"The events record -e accepts on this machine; SYS:EVENT are globs\n"
		"on tracepoints, a WORD matches names containing it, as perf list;\n"
		"hw, cache and words also show the hardware events this machine\n"
		"refuses (no PMU), marked \"not supported here\".\n",
};

int cmd_list(int argc, char **argv)
{
	int first = cli_parse(&list_command, argc, argv, NULL, NULL);
	struct list_filter f = { .pats = argv + first, .nr = argc - first };

	return perfring_event_list(list_one, &f) < 0 ? 1 : 0;
}
