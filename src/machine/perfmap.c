// SPDX-License-Identifier: MIT
/* perf's JIT symbol maps (perfmap.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfmap.h"

#define NAME_MAX_LEN 4096

/* A hex number (optional 0x) at *@p below @end; false if none or too
 * long. */
static bool hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	for (; s < end; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	*p = s;
	return digits > 0;
}

static int parse_line(const char *s, const char *end, perfmap_sym_fn fn,
		      void *ctx)
{
	char name[NAME_MAX_LEN];
	uint64_t start, size;
	size_t n;

	if (!hex(&s, end, &start) || s == end || (*s != ' ' && *s != '\t'))
		return 1;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (!hex(&s, end, &size) || s == end || (*s != ' ' && *s != '\t'))
		return 1;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	n = (size_t)(end - s);
	if (!n || n >= sizeof(name) || memchr(s, 0, n) || !size ||
	    start + size < start)
		return 1;
	memcpy(name, s, n);
	name[n] = 0;
	return fn(start, size, name, ctx);
}

int perfmap_parse(const char *buf, size_t len, perfmap_sym_fn fn, void *ctx)
{
	const char *p = buf, *end = buf + len;
	int bad = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		int r;

		if (le > p) {
			r = parse_line(p, le, fn, ctx);
			if (r < 0)
				return r;
			bad += r;
		}
		p = nl ? nl + 1 : end;
	}
	return bad;
}

int perfmap_read(const char *path, char **buf, size_t *len)
{
	struct stat st;
	size_t cap, n = 0;
	char *b;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
				    O_NOCTTY);

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	/* perf: "not owned by current user or root, ignoring it" */
	if (st.st_uid && st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	cap = st.st_size > 0 && (uint64_t)st.st_size < PERFMAP_MAX_BYTES ?
		      (size_t)st.st_size + 1 :
		      PERFMAP_MAX_BYTES;
	b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	/* It may grow while we read (a JIT still running): up to cap. */
	while (n < cap) {
		ssize_t r = read(fd, b + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = n;
	return 0;
}
