// SPDX-License-Identifier: MIT
/* perfring ring-stat: a named ring's control page and counters. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

static const struct cli_option ring_stat_options[] = {
	OPT_END(),
};

static const struct cli_command ring_stat_command = {
	.name = "ring-stat",
	.usage = (const char *const[]){ "RING_PATH", NULL },
	.options = ring_stat_options,
	.notes = "A named ring's control page and counters.\n",
};

int cmd_ring_stat(int argc, char **argv)
{
	const struct perf_event_mmap_page *pc;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct perfring_ring *ring;
	int err;

	int first = cli_parse(&ring_stat_command, argc, argv, NULL, NULL);

	if (argc - first != 1) {
		fprintf(stderr, "usage: %s ring-stat RING_PATH\n", prog);
		return 2;
	}
	/*
	 * Attach as a consumer only if nobody is consuming; a producer
	 * handle would be refused if one is live, so try consumer first.
	 */
	err = perfring_ring_attach(argv[first], PERFRING_ROLE_CONSUMER, &ring);
	if (err == -EBUSY)
		err = perfring_ring_attach(argv[first], PERFRING_ROLE_PRODUCER,
					   &ring);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[first],
			strerror(-err));
		return 1;
	}
	pc = perfring_ring_control(ring);
	perfring_ring_stats(ring, &st);
	printf("ring:         %s\n", argv[first]);
	printf("mode:         %s%s\n",
	       st.flags & PERFRING_MODE_OVERWRITE ? "overwrite (backward)" :
						    "forward",
	       st.flags & PERFRING_MODE_MULTI_PRODUCER ? ", multi-producer" :
							 "");
	printf("data_offset:  %llu\n", (unsigned long long)pc->data_offset);
	printf("data_size:    %" PRIu64 "\n", st.data_size);
	printf("data_head:    %" PRIu64 "\n", st.head);
	printf("data_tail:    %" PRIu64 "\n", st.tail);
	if (!(st.flags & PERFRING_MODE_OVERWRITE))
		printf("waiting:      %" PRIu64 " bytes\n", st.head - st.tail);
	printf("lost:         %" PRIu64 " (%" PRIu64 " not yet reported)\n",
	       st.lost_total, st.lost_pending);
	printf("wake-ups:     %" PRIu64 "\n", st.wakeups);
	printf("paused:       %s\n", st.paused ? "yes" : "no");
	perfring_ring_destroy(ring);
	return 0;
}
