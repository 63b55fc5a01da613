// SPDX-License-Identifier: MIT
/* perfring list: the events record accepts. */
#include <stdio.h>
#include "cli.h"

static void list_one(const char *name, const char *kind, void *ctx)
{
	(void)ctx;
	printf("  %-48s [%s]\n", name, kind);
}

int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return perfring_event_list(list_one, NULL) < 0 ? 1 : 0;
}
