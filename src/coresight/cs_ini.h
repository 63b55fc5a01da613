/* SPDX-License-Identifier: MIT */
/*
 * The .ini files of an OpenCSD snapshot directory (snapshot.ini, the
 * device files, trace.ini): "[section]" and "key=value" lines, ';' and
 * '#' comments.  Read by the replay source and by the snapshot decoder.
 */
#ifndef PERFRING_CORESIGHT_CS_INI_H
#define PERFRING_CORESIGHT_CS_INI_H

#include <stddef.h>

/* One "key=value" line, with its section.  Entries of one [section]
 * share the same sect pointer (a repeated section name is a new one). */
struct cs_ini_ent {
	const char *sect, *key, *val;
	int line;
};

struct cs_ini {
	char *text; /* the file, cut into strings */
	struct cs_ini_ent *e;
	int n;
	char *name; /* for messages; the caller's (freed by cs_ini_free) */
};

/*
 * Reads the regular file @name (relative to @dirfd, or AT_FDCWD) of at
 * most @max bytes into a malloc()ed block of *len + 1 bytes, NUL-ended.
 * Returns 0, -EINVAL (not a regular file), -EFBIG (larger than @max),
 * -ENOMEM or open()'s -errno; logs nothing.
 */
int cs_read_file(int dirfd, const char *name, size_t max, char **data,
		 size_t *len);

/*
 * Parses @text (@len bytes in a malloc()ed block of @len + 1, taken over
 * even on failure) into @ini.  @label names the file in messages; at most
 * @max_entries keys.  Returns 0, -EBADMSG (a NUL byte, a line that is
 * neither a section nor key=value, too many keys: logged with the line)
 * or -ENOMEM.
 */
int cs_ini_parse(struct cs_ini *ini, char *text, size_t len, const char *label,
		 int max_entries);

void cs_ini_free(struct cs_ini *ini);

/* [s, end) without blanks (space, tab, CR) at either end; writes a NUL at
 * the new end. */
char *cs_ini_trim(char *s, char *end);

/* The first @key of @sect (case-insensitive), or NULL. */
const struct cs_ini_ent *cs_ini_get(const struct cs_ini *ini, const char *sect,
				    const char *key);

/* @key among the entries of the section instance that starts at entry
 * @i, or NULL. */
const struct cs_ini_ent *cs_ini_get_at(const struct cs_ini *ini, int i,
				       const char *key);

/* The value of cs_ini_get(), or NULL. */
const char *cs_ini_str(const struct cs_ini *ini, const char *sect,
		       const char *key);

#endif
