// SPDX-License-Identifier: MIT
/*
 * HEADER_GROUP_DESC: u32 nr_groups, then per group a string (u32 length
 * with the NUL and padding, the bytes), u32 leader's attr index, u32
 * nr_members.  perf writes "{anon_group}" for a group without a name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "../common/log.h"
#include "group_desc.h"

static int take_u32(const unsigned char *p, size_t len, size_t *pos,
		    uint32_t *v)
{
	if (len - *pos < 4)
		return -EBADMSG;
	memcpy(v, p + *pos, 4);
	*pos += 4;
	return 0;
}

PR_HIDDEN int gdesc_parse(const void *payload, size_t len, uint32_t nr_attrs,
			  struct gdesc_group *out, uint32_t max,
			  uint32_t *dropped)
{
	const unsigned char *p = payload;
	uint32_t nr, slen, leader, members, kept = 0, next_free = 0;
	size_t pos = 0;

	*dropped = 0;
	if (take_u32(p, len, &pos, &nr))
		return -EBADMSG;
	for (uint32_t i = 0; i < nr; i++) {
		const char *name;
		size_t nlen;

		if (take_u32(p, len, &pos, &slen) || slen > len - pos)
			return -EBADMSG;
		name = (const char *)p + pos;
		nlen = strnlen(name, slen);
		if (nlen == slen)
			return -EBADMSG; /* no NUL inside its length */
		pos += slen;
		if (take_u32(p, len, &pos, &leader) ||
		    take_u32(p, len, &pos, &members))
			return -EBADMSG;
		if (members < 2 || leader < next_free || leader >= nr_attrs ||
		    members > nr_attrs - leader || kept >= max) {
			(*dropped)++;
			continue;
		}
		out[kept].leader = leader;
		out[kept].nr_members = members;
		out[kept].name[0] = '\0';
		if (strcmp(name, "{anon_group}")) {
			if (nlen >= GDESC_NAME_MAX)
				nlen = GDESC_NAME_MAX - 1;
			memcpy(out[kept].name, name, nlen);
			out[kept].name[nlen] = '\0';
		}
		next_free = leader + members;
		kept++;
	}
	return (int)kept;
}
