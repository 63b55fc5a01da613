// SPDX-License-Identifier: MIT
/*
 * perfring push --spool DIR SINK=URL...: what recordings with --push left
 * in their spool (a store was down) delivered now; and the push part of
 * record's summary (push_summary()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

/* Per sink: what went, what waits, what was lost, the last failure. */
void push_summary(const struct perfring_push_stats *ps)
{
	if (ps->intervals || ps->samples)
		fprintf(stderr,
			"[ perfring record: push: %" PRIu64
			" intervals, %" PRIu64 " samples%s",
			ps->intervals, ps->samples, ps->resets ? ", " : " ]\n");
	if (ps->resets)
		fprintf(stderr,
			"%" PRIu64
			" times the thread and object tables rebuilt (processes came and went) ]\n",
			ps->resets);
	if (ps->bad_samples)
		fprintf(stderr,
			"Warning: push: %" PRIu64
			" samples not decodable were left out\n",
			ps->bad_samples);
	for (uint32_t i = 0; i < ps->nr_sinks; i++) {
		const struct perfring_push_sink_stats *k = &ps->sink[i];

		fprintf(stderr,
			"[ perfring push: %s: %" PRIu64
			" delivered (%.3f MB), %" PRIu64
			" waiting in the spool, %" PRIu64 " dropped, %" PRIu64
			" failed attempts ]\n",
			k->name, k->sent, (double)k->sent_bytes / 1e6,
			k->pending, k->dropped, k->failures);
		if (k->last_error[0] && (k->pending || k->dropped))
			fprintf(stderr, "%s: push: %s: %s\n", prog, k->name,
				k->last_error);
	}
}

#define CLI_ARGS struct perfring_push_opts
static const struct cli_option push_options[] = {
	OPT_STRING('s', "spool", spool, "DIR",
		   "the spool record --push --spool DIR left"),
	OPT_SECONDS(0, "timeout", timeout, "SECS",
		    "a request to a store gives up after SECS (default 10)"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command push_command = {
	.name = "push",
	.usage =
		(const char *const[]){
			"--spool DIR [--timeout SECS] SINK=URL...", NULL },
	.options = push_options,
	.notes =
		"Delivers what record --push --spool DIR left there, oldest first:\n"
		"SINK is clickhouse, pyroscope or parca, URL http://HOST:PORT.\n",
};

int cmd_push(int argc, char **argv)
{
	PERFRING_OPTS(perfring_push_opts, po);
	struct perfring_push_stats ps = { .sz = sizeof(ps) };
	int first = cli_parse(&push_command, argc, argv, &po, NULL), err;

	if (!po.spool)
		die_usage("push: --spool DIR is needed%s", "");
	if (first >= argc)
		die_usage("push: which store? SINK=URL%s", "");
	if (argc - first > PERFRING_PUSH_MAX_SINKS)
		die_usage("push: at most 8 sinks: %s", argv[first]);
	po.sinks = (const char *const *)&argv[first];
	po.nr_sinks = argc - first;
	err = perfring_push(&po, &ps);
	for (uint32_t i = 0; (!err || err == -EAGAIN) && i < ps.nr_sinks; i++) {
		const struct perfring_push_sink_stats *k = &ps.sink[i];

		fprintf(stderr,
			"[ perfring push: %s: %" PRIu64
			" delivered (%.3f MB), %" PRIu64
			" left in the spool, %" PRIu64 " refused ]\n",
			k->name, k->sent, (double)k->sent_bytes / 1e6,
			k->pending, k->dropped);
		if (k->pending && k->last_error[0])
			fprintf(stderr, "%s: push: %s: %s\n", prog, k->name,
				k->last_error);
	}
	if (err && err != -EAGAIN)
		fprintf(stderr, "%s: push: %s\n", prog, strerror(-err));
	return err ? 1 : 0;
}
