// SPDX-License-Identifier: MIT
/* The off-CPU samples' names and the offcpu-waker payload
 * (offcpu_format.h). */
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>
#include "offcpu_format.h"

enum offcpu_kind offcpu_kind_of(uint32_t type, uint64_t config,
				const char *name)
{
	if (type != PERF_TYPE_SOFTWARE || config != PERF_COUNT_SW_BPF_OUTPUT ||
	    !name)
		return OFFCPU_NONE;
	if (!strcmp(name, OFFCPU_EVENT))
		return OFFCPU_BLOCKED;
	if (!strcmp(name, OFFCPU_PREEMPT_EVENT))
		return OFFCPU_PREEMPTED;
	if (!strcmp(name, OFFCPU_WAKER_EVENT))
		return OFFCPU_WAKER;
	return OFFCPU_NONE;
}

int offcpu_waker_parse(const void *raw, uint32_t size,
		       struct offcpu_waker_raw *w, const void **chain)
{
	if (!raw || size < sizeof(*w))
		return -EBADMSG;
	memcpy(w, raw, sizeof(*w));
	if (w->version != OFFCPU_WAKER_RAW_VERSION ||
	    w->nr > (size - sizeof(*w)) / sizeof(uint64_t))
		return -EBADMSG;
	*chain = (const unsigned char *)raw + sizeof(*w);
	return 0;
}
