// SPDX-License-Identifier: MIT
/* perfring export: Chrome trace JSON, folded stacks, a flame graph SVG or a
 * pprof profile. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

int cmd_export(int argc, char **argv)
{
	enum {
		OPT_TITLE = 256,
		OPT_WIDTH,
		OPT_TRACE_DAT,
		OPT_NO_TRACE_DAT,
		OPT_WAKERS,
		OPT_FROM,
		OPT_WHERE
	};
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "trace-dat", required_argument, NULL, OPT_TRACE_DAT },
		{ "no-trace-dat", no_argument, NULL, OPT_NO_TRACE_DAT },
		{ "event", required_argument, NULL, 'e' },
		{ "wakers", no_argument, NULL, OPT_WAKERS },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "where", required_argument, NULL, OPT_WHERE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_export_opts, eo, .input = "perf.data",
		      .format = "chrome");
	const char *outpath = "-";
	bool no_trace_dat = false;
	char beside[4096];
	char *end;
	unsigned long w;
	int c;

	while ((c = getopt_long(argc, argv, "i:f:o:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			eo.input = optarg;
			break;
		case 'f':
			eo.format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_TITLE:
			eo.title = optarg;
			break;
		case 'e':
			eo.event = optarg;
			break;
		case OPT_WAKERS:
			eo.wakers = true;
			break;
		case OPT_TRACE_DAT:
			eo.trace_dat = optarg;
			break;
		case OPT_NO_TRACE_DAT:
			no_trace_dat = true;
			break;
		case OPT_FROM: /* a fleet's samples in a store */
			eo.from = optarg;
			break;
		case OPT_WHERE:
			eo.where = optarg;
			break;
		case OPT_WIDTH:
			errno = 0;
			w = strtoul(optarg, &end, 10);
			if (errno || *end || w < 100 || w > 1000000)
				die_usage(
					"--width takes 100 to 1000000 pixels: %s",
					optarg);
			eo.width = (unsigned int)w;
			break;
		case 'h':
			printf("usage: %s export [-i FILE|-] [-f chrome|folded|svg|pprof] [-o OUT|-] [--title TEXT] [--width PX]\n"
			       "                [--trace-dat FILE | --no-trace-dat] [-e EVENT] [--wakers]\n"
			       "  chrome: trace-event JSON (Perfetto UI, chrome://tracing, speedscope): samples with\n"
			       "          call stacks, sched_switch slices per thread and per CPU, counters;\n"
			       "          ftrace events of FILE.trace.dat beside the perf.data (record\n"
			       "          --tracefs-event) on the same timeline, fields as args; -i a trace.dat:\n"
			       "          its events alone\n"
			       "  folded: collapsed stacks for flame graph tools; svg: an interactive flame graph\n"
			       "  pprof: gzipped pprof profile (go tool pprof, Pyroscope, Parca)\n"
			       "  -e EVENT: that event's samples only (record --off-cpu's offcpu-time counts ns);\n"
			       "  --wakers: folded blocked stack;--;waker stack lines (bcc's offwaketime)\n"
			       "  --from clickhouse=URL [--where SQL]: a fleet's samples (record --push) instead\n"
			       "          of a file: folded, svg or pprof\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (eo.where && !eo.from)
		die_usage("--where needs --from: %s", eo.where);
	if (eo.from) {
		eo.input = eo.from; /* for the messages */
		return export_to(&eo, outpath);
	}
	/* As script: the trace.dat record --tracefs-event wrote beside the
	 * perf.data joins the timeline (chrome; the others have no use for
	 * events without call stacks). */
	if (!eo.trace_dat && !no_trace_dat && strcmp(eo.input, "-") &&
	    (!eo.format || !strcmp(eo.format, "chrome") ||
	     !strcmp(eo.format, "json")) &&
	    perfring_trace_dat_probe(eo.input) != 1 &&
	    snprintf(beside, sizeof(beside), "%s.trace.dat", eo.input) <
		    (int)sizeof(beside) &&
	    perfring_trace_dat_probe(beside) == 1)
		eo.trace_dat = beside;
	if (no_trace_dat)
		eo.trace_dat = NULL;
	return export_to(&eo, outpath);
}

int export_to(const struct perfring_export_opts *eo, const char *outpath)
{
	FILE *out = stdout;
	bool made_file = false;
	int err;

	if (strcmp(outpath, "-")) {
		/* A new file (0600), never through a symbolic link; a FIFO
		 * or /dev/null as it is.  The library says why it refuses. */
		int fd = perfring_file_create(outpath, 0);
		struct stat st;

		out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!out) {
			if (fd >= 0) {
				fprintf(stderr, "%s: export: %s: %s\n", prog,
					outpath, strerror(errno));
				close(fd);
			}
			return 1;
		}
		made_file = !fstat(fd, &st) && S_ISREG(st.st_mode);
	}
	err = perfring_export(eo, out);
	if (out != stdout && fclose(out) && !err)
		err = -errno;
	/* Nothing usable was written (damage keeps what came before it). */
	if (err && err != -EBADMSG && made_file)
		unlink(outpath);
	if (err == -EPIPE && out == stdout)
		return 0; /* the reader went away (| head) */
	if (err) {
		fprintf(stderr, "%s: export %s: %s\n", prog, eo->input,
			strerror(-err));
		return 1;
	}
	return 0;
}
