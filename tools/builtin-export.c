// SPDX-License-Identifier: MIT
/* perfring export: Chrome trace JSON, folded stacks, a flame graph SVG or a
 * pprof profile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "parse-options.h"

struct export_args {
	struct perfring_export_opts eo;
	const char *outpath;
	bool no_trace_dat;
	bool diff; /* --diff [OLD [NEW]] */
};

/* export -f svg --diff [OLD [NEW]]: NEW's flame graph coloured by the
 * change from OLD (defaults perf.data.old and perf.data, as diff). */
static int export_diff(int argc, char **argv, const char *format,
		       const char *outpath)
{
	PERFRING_OPTS(perfring_diff_opts, dopt, .baseline = "perf.data.old",
		      .input = "perf.data");
	FILE *out = stdout;
	int err, fd;

	if (!format || strcmp(format, "svg"))
		die_usage("--diff draws -f svg only%s", "");
	if (argc > 0)
		dopt.baseline = argv[0];
	if (argc > 1)
		dopt.input = argv[1];
	if (argc > 2)
		die_usage("unexpected argument '%s'", argv[2]);
	if (strcmp(outpath, "-")) {
		fd = perfring_file_create(outpath, 0);
		out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!out) {
			if (fd >= 0)
				close(fd);
			return 1;
		}
	}
	err = perfring_diff_svg(&dopt, out);
	if (out != stdout && fclose(out) && !err)
		err = -errno;
	if (err) {
		fprintf(stderr, "%s: export --diff %s %s: %s\n", prog,
			dopt.baseline, dopt.input, strerror(-err));
		return 1;
	}
	return 0;
}

static void opt_width(void *args, const char *arg)
{
	char *end;
	unsigned long w;

	errno = 0;
	w = strtoul(arg, &end, 10);
	if (errno || *end || w < 100 || w > 1000000)
		die_usage("--width takes 100 to 1000000 pixels: %s", arg);
	((struct export_args *)args)->eo.width = (unsigned int)w;
}

#define CLI_ARGS struct export_args
static const struct cli_option export_options[] = {
	OPT_STRING('i', "input", eo.input, "FILE|-",
		   "perf.data (or trace.dat) to read (default perf.data)"),
	OPT_STRING('f', "format", eo.format, "chrome|folded|svg|pprof",
		   "what to write (default chrome; see below)"),
	OPT_STRING('o', "output", outpath, "OUT|-",
		   "where (default -: standard output)"),
	OPT_STRING(0, "title", eo.title, "TEXT",
		   "svg: the flame graph's title"),
	OPT_CALLBACK(0, "width", "PX", opt_width,
		     "svg: the flame graph's width"),
	OPT_STRING(0, "trace-dat", eo.trace_dat, "FILE",
		   "chrome: ftrace events on the same timeline (default:\n"
		   "FILE.trace.dat beside the perf.data)"),
	OPT_BOOLEAN(0, "no-trace-dat", no_trace_dat,
		    "not the trace.dat beside the perf.data"),
	OPT_STRING('e', "event", eo.event, "EVENT",
		   "that event's samples only (record --off-cpu's\n"
		   "offcpu-time counts ns)"),
	OPT_BOOLEAN(0, "wakers", eo.wakers,
		    "folded: blocked stack;--;waker stack lines (bcc's\n"
		    "offwaketime)"),
	OPT_STRING(0, "from", eo.from, "clickhouse=URL",
		   "a fleet's samples (record --push) instead of a file:\n"
		   "folded, svg or pprof"),
	OPT_STRING(0, "where", eo.where, "SQL",
		   "with --from: only the samples of this condition"),
	OPT_BOOLEAN(0, "diff", diff,
		    "-f svg --diff [OLD [NEW]]: a differential flame graph of\n"
		    "NEW (red grew, blue shrank; default perf.data.old,\n"
		    "perf.data)"),
	OPT_END(),
};
#undef CLI_ARGS

static const struct cli_command export_command = {
	.name = "export",
	.usage =
		(const char *const[]){
			"[-i FILE|-] [-f chrome|folded|svg|pprof] [-o OUT|-] [OPTIONS]",
			"-f svg --diff [OLD [NEW]] [-o OUT]", NULL },
	.options = export_options,
	.notes =
		"chrome: trace-event JSON (Perfetto UI, chrome://tracing, speedscope): samples with\n"
		"        call stacks, sched_switch slices per thread and per CPU, counters;\n"
		"        ftrace events of FILE.trace.dat beside the perf.data (record\n"
		"        --tracefs-event) on the same timeline, fields as args; -i a trace.dat:\n"
		"        its events alone\n"
		"folded: collapsed stacks for flame graph tools; svg: an interactive flame graph\n"
		"pprof:  gzipped pprof profile (go tool pprof, Pyroscope, Parca)\n",
};

int cmd_export(int argc, char **argv)
{
	struct export_args ea = {
		.eo = { .sz = sizeof(ea.eo),
			.input = "perf.data",
			.format = "chrome" },
		.outpath = "-",
	};
	struct perfring_export_opts eo;
	const char *outpath;
	bool no_trace_dat;
	char beside[4096];
	int first = cli_parse(&export_command, argc, argv, &ea, NULL);

	if (ea.diff)
		return export_diff(argc - first, argv + first, ea.eo.format,
				   ea.outpath);
	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	eo = ea.eo;
	outpath = ea.outpath;
	no_trace_dat = ea.no_trace_dat;
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
