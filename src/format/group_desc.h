/* SPDX-License-Identifier: MIT */
/*
 * HEADER_GROUP_DESC reader (perf's process_group_desc()): the event groups
 * ({a,b} of -e) of a perf.data.  Format layer: libc only.
 */
#ifndef PERFRING_FORMAT_GROUP_DESC_H
#define PERFRING_FORMAT_GROUP_DESC_H

#include <stddef.h>
#include <stdint.h>

#define GDESC_NAME_MAX 64

/* Attrs leader .. leader + nr_members - 1 form a group. */
struct gdesc_group {
	uint32_t leader, nr_members;
	char name[GDESC_NAME_MAX]; /* "" for an anonymous group */
};

/*
 * Parses the payload @p (@len bytes, hostile) of a file with @nr_attrs
 * attrs into @out (room for @max).  A group that names attrs the file does
 * not have, overlaps an earlier one or has fewer than two members is left
 * out and counted in *@dropped.  Returns the number of groups kept, or
 * -EBADMSG when the payload is cut short or its strings are malformed.
 */
int gdesc_parse(const void *p, size_t len, uint32_t nr_attrs,
		struct gdesc_group *out, uint32_t max, uint32_t *dropped);

#endif
