// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the fleet's HTTP response parser (src/fleet/http.c), which
 * reads what any store, or anything listening where one should be,
 * answers.  The first byte (mod 16, plus 1) says in how many pieces the
 * rest is fed, the next bytes their lengths, so that a status line, a
 * header, a chunk size or a CRLF may straddle any boundary.  The body
 * handed over must never exceed the bytes fed, a chunked body must equal
 * the same answer fed at once, and the parser must end in a state it
 * can say something of.  The URL parser gets the input as a string too.
 * Seeds: fuzz/corpus/http/.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
	unsigned char *p;
	size_t len, cap;
};

static int keep(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	if (s->len + n > s->cap) {
		size_t c = (s->len + n) * 2;
		unsigned char *v = realloc(s->p, c);

		if (!v)
			return -12;
		s->p = v;
		s->cap = c;
	}
	memcpy(s->p + s->len, p, n);
	s->len += n;
	return 0;
}

/* Feeds @data in @pieces pieces; the body into @s.  Returns the result. */
static int run(const uint8_t *data, size_t size, const uint8_t *lens,
	       size_t nlens, size_t pieces, struct sink *s,
	       struct http_parser *hp)
{
	size_t at = 0;
	int err = 0;

	http_parse_init(hp, keep, s);
	for (size_t i = 0; i < pieces && !err && at <= size; i++) {
		size_t len = i + 1 == pieces ? size - at :
			     i < nlens	     ? lens[i] :
					       0;

		if (len > size - at)
			len = size - at;
		err = http_parse_feed(hp, data + at, len);
		at += len;
	}
	if (!err)
		err = http_parse_eof(hp);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_parser a, b;
	struct sink sa = { 0 }, sb = { 0 };
	struct http_url u;
	size_t pieces, skip;
	int ea, eb;
	char *s;

	if (!size)
		return 0;
	pieces = (size_t)(data[0] % 16) + 1;
	skip = 1 + (pieces < size ? pieces : size - 1);
	ea = run(data + skip, size - skip, data + 1, skip - 1, pieces, &sa, &a);
	eb = run(data + skip, size - skip, NULL, 0, 1, &sb, &b);
	if (sa.len > size || sb.len > size)
		abort();
	/* the same bytes: the same answer, however they were cut */
	if (ea != eb || a.state != b.state || a.status != b.status ||
	    (!ea &&
	     (sa.len != sb.len || (sa.len && memcmp(sa.p, sb.p, sa.len)))))
		abort();
	if (a.state == HP_ERROR && !a.why)
		abort();
	free(sa.p);
	free(sb.p);
	s = strndup((const char *)data, size);
	if (s) {
		if (!http_url_parse(s, &u) &&
		    (!u.host[0] || !u.port[0] ||
		     strlen(u.host) >= sizeof(u.host)))
			abort();
		free(s);
	}
	return 0;
}
