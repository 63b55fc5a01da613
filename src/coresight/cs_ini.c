// SPDX-License-Identifier: MIT
/*
 * OpenCSD snapshot .ini files: see cs_ini.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/log.h"
#include "cs_ini.h"

PR_HIDDEN int cs_read_file(int dirfd, const char *name, size_t max, char **data,
			   size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *p;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	*data = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	p = malloc((size_t)st.st_size + 1);
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, p + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	p[got] = 0;
	*data = p;
	*len = got;
	return 0;
}

PR_HIDDEN char *cs_ini_trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = 0;
	return s;
}

PR_HIDDEN int cs_ini_parse(struct cs_ini *ini, char *text, size_t len,
			   const char *label, int max_entries)
{
	const char *sect = "";
	const char *nul = memchr(text, 0, len);
	char *p = text, *end = text + len;
	int line = 0, cap = 0;

	ini->text = text;
	ini->e = NULL;
	ini->n = 0;
	if (nul) {
		pr_err("%s: a NUL byte at offset %zu: not an .ini file", label,
		       (size_t)(nul - text));
		return -EBADMSG;
	}
	text[len] = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *le = nl ? nl : end, *l, *eq;

		line++;
		l = cs_ini_trim(p, le);
		p = nl ? nl + 1 : end;
		if (!*l || *l == ';' || *l == '#')
			continue;
		if (*l == '[') {
			char *cb = strchr(l, ']');

			if (!cb) {
				pr_err("%s:%d: section name without ']'", label,
				       line);
				return -EBADMSG;
			}
			*cb = 0;
			sect = cs_ini_trim(l + 1, cb);
			continue;
		}
		eq = strchr(l, '=');
		if (!eq) {
			pr_err("%s:%d: neither [section] nor key=value", label,
			       line);
			return -EBADMSG;
		}
		if (ini->n == max_entries) {
			pr_err("%s: more than %d entries", label, max_entries);
			return -EBADMSG;
		}
		if (ini->n == cap) {
			int nc = cap ? cap * 2 : 64;
			struct cs_ini_ent *ne =
				realloc(ini->e, (size_t)nc * sizeof(*ne));

			if (!ne)
				return -ENOMEM;
			ini->e = ne;
			cap = nc;
		}
		*eq = 0;
		ini->e[ini->n].sect = sect;
		ini->e[ini->n].key = cs_ini_trim(l, eq);
		ini->e[ini->n].val =
			cs_ini_trim(eq + 1, eq + 1 + strlen(eq + 1));
		ini->e[ini->n].line = line;
		ini->n++;
	}
	return 0;
}

PR_HIDDEN void cs_ini_free(struct cs_ini *ini)
{
	free(ini->text);
	free(ini->e);
	free(ini->name);
	memset(ini, 0, sizeof(*ini));
}

PR_HIDDEN const struct cs_ini_ent *cs_ini_get(const struct cs_ini *ini,
					      const char *sect, const char *key)
{
	for (int i = 0; i < ini->n; i++)
		if (!strcasecmp(ini->e[i].sect, sect) &&
		    !strcasecmp(ini->e[i].key, key))
			return &ini->e[i];
	return NULL;
}

PR_HIDDEN const struct cs_ini_ent *cs_ini_get_at(const struct cs_ini *ini,
						 int i, const char *key)
{
	const char *sect = ini->e[i].sect;

	for (; i < ini->n && ini->e[i].sect == sect; i++)
		if (!strcasecmp(ini->e[i].key, key))
			return &ini->e[i];
	return NULL;
}

PR_HIDDEN const char *cs_ini_str(const struct cs_ini *ini, const char *sect,
				 const char *key)
{
	const struct cs_ini_ent *e = cs_ini_get(ini, sect, key);

	return e ? e->val : NULL;
}
