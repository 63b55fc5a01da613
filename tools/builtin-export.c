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
	enum { OPT_TITLE = 256, OPT_WIDTH };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_export_opts, eo, .input = "perf.data",
		      .format = "chrome");
	const char *outpath = "-";
	char *end;
	unsigned long w;
	int c;

	while ((c = getopt_long(argc, argv, "i:f:o:h", opts, NULL)) != -1) {
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
			       "  chrome: trace-event JSON (Perfetto UI, chrome://tracing, speedscope): samples with\n"
			       "          call stacks, sched_switch slices per thread and per CPU, counters\n"
			       "  folded: collapsed stacks for flame graph tools; svg: an interactive flame graph\n"
			       "  pprof: gzipped pprof profile (go tool pprof, Pyroscope, Parca)\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
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
