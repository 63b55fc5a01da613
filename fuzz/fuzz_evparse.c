// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the -e string parser (src/sources/evparse.c).  The input is
 * an event string (up to its first NUL); what follows a NUL, if anything,
 * is a PMU format line ("config:0-7,32-35") and 8 bytes of value for
 * evp_format_put().  Each parsed event's modifiers are applied as an
 * event's and as a group's, the error is formatted, and perf's fallback
 * name is made: nothing may read outside the input (it is exactly its size
 * on the heap) or the lists.  Resolution, which reads sysfs and tracefs,
 * is left to test_evparse and test/events.sh.  Seeds: fuzz/corpus/evparse/.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sources/evparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct evp_list l;
	const uint8_t *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - data) : size;
	char *s = malloc(n + 1), buf[8192];
	struct evp_error err;

	if (!s)
		return 0;
	memcpy(s, data, n);
	s[n] = 0;
	if (evp_parse(s, &l, &err) < 0) {
		evp_error_format(s, &err, buf, sizeof(buf));
	} else {
		for (int i = 0; i < l.nr; i++) {
			struct perf_event_attr a = { 0 };
			bool sread = false;

			if (evp_apply_mods(l.ev[i].mods, false, &a, &sread,
					   &err) < 0)
				abort(); /* the parser checked them */
			if (l.ev[i].group >= 0 &&
			    evp_apply_mods(l.groups[l.ev[i].group].mods, true,
					   &a, &sread, &err) < 0)
				abort();
			evp_attr_name(l.ev[i].text, &a, buf, sizeof(buf));
		}
	}
	free(s);
	if (nul) {
		const uint8_t *rest = nul + 1;
		size_t left = size - n - 1;
		const uint8_t *nul2 = memchr(rest, 0, left);
		size_t fl = nul2 ? (size_t)(nul2 - rest) : left;
		char *fmt = malloc(fl + 1);
		struct perf_event_attr a = { 0 };
		uint64_t v = 0;

		if (!fmt)
			return 0;
		memcpy(fmt, rest, fl);
		fmt[fl] = 0;
		if (nul2 && left - fl - 1 >= sizeof(v))
			memcpy(&v, nul2 + 1, sizeof(v));
		evp_format_put(fmt, v, &a);
		free(fmt);
	}
	return 0;
}
