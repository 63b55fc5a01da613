// SPDX-License-Identifier: MIT
/*
 * CoreSight: perfring decode (an OpenCSD snapshot's packets and elements),
 * dump --aux (the same of a perf.data's AUX data), script/report --itrace
 * (executed instruction ranges) and inject (AutoFDO counts).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

enum cs_mode { CS_DECODE, CS_DUMP_AUX, CS_SCRIPT, CS_REPORT, CS_INJECT };

static void cs_summary(const char *what, const struct perfring_cs_stats *st)
{
	fprintf(stderr,
		"%s: %s: %" PRIu64 " trace bytes, %u decoders, %" PRIu64
		" packets, %" PRIu64 " elements, %" PRIu64
		" instruction ranges (%" PRIu64 " instructions)",
		prog, what, st->trace_bytes, st->decoders, st->packets,
		st->elements, st->ranges, st->instructions);
	fprintf(stderr,
		"; %" PRIu64 " no-sync, %" PRIu64 " resyncs, %" PRIu64
		" errors, %" PRIu64 " inaccessible\n",
		st->nosync, st->resyncs, st->errors, st->nacc);
}

/*
 * Nothing decoded where instructions were asked for: the output is empty,
 * which perf and simpleperf do not pass over in silence either.  Says why
 * as far as the counts tell.
 */
static bool nothing_decoded(const char *what, enum cs_mode mode,
			    const struct perfring_cs_stats *st)
{
	if (mode == CS_DECODE || mode == CS_DUMP_AUX || st->ranges)
		return false;
	fprintf(stderr,
		"%s: warning: %s: no instruction was decoded from %" PRIu64
		" trace bytes%s\n",
		prog, what, st->trace_bytes,
		!st->trace_bytes ?
			" (the file holds no CoreSight trace)" :
		st->nacc ?
			": the traced code is not there; give the binaries with --symdir DIR, or decode a snapshot with its memory images (--snapshot DIR)" :
			"");
	return true;
}

/* What the options set, for every mode (each takes them all). */
struct cs_args {
	struct perfring_cs_opts co;
	struct perfring_itrace_opts io;
	const char *output;
	bool quiet;
};

static void opt_input(void *args, const char *arg)
{
	struct cs_args *ca = args;

	ca->co.input = ca->io.input = arg;
}

static void opt_snapshot(void *args, const char *arg)
{
	struct cs_args *ca = args;

	ca->co.snapshot = ca->io.snapshot = arg;
}

static void opt_symdir(void *args, const char *arg)
{
	struct cs_args *ca = args;

	ca->co.symdir = ca->io.symdir = arg;
}

static void opt_max_insns(void *args, const char *arg)
{
	((struct cs_args *)args)->io.max_insns =
		(unsigned int)strtoul(arg, NULL, 0);
}

/* The modes a row's help is shown in. */
#define M(mode) (1u << (mode))
#define M_ITRACE (M(CS_SCRIPT) | M(CS_REPORT))
#define M_FILE (M(CS_DUMP_AUX) | M_ITRACE | M(CS_INJECT))

#define CLI_ARGS struct cs_args
static const struct cli_option cs_options[] = {
	OPT_CALLBACK('i', "input", "FILE", opt_input,
		     "a cs_etm perf.data (default perf.data)",
		     .flags = M_FILE | M(CS_DECODE)),
	OPT_CALLBACK(0, "snapshot", "DIR", opt_snapshot,
		     "an OpenCSD snapshot directory instead",
		     .flags = M(CS_DECODE) | M_ITRACE),
	OPT_STRING('o', "output", output, "OUT|-",
		   "the AutoFDO counts (default perf_inject.data)",
		   .flags = M(CS_INJECT)),
	OPT_SET_BOOL(0, "pkts", co.decode, false, "packets only (the default)",
		     .flags = M(CS_DECODE)),
	OPT_SET_BOOL(0, "decode", co.decode, true, "packets and elements",
		     .flags = M(CS_DECODE) | M(CS_DUMP_AUX)),
	OPT_BOOLEAN(0, "elements", co.elements_only, "elements only",
		    .flags = M(CS_DECODE) | M(CS_DUMP_AUX)),
	OPT_STRING(0, "buffer", co.buffer, "NAME",
		   "only the snapshot's buffer NAME", .flags = M(CS_DECODE)),
	OPT_STRING(0, "framing", co.framing,
		   "auto|frames|tpiu|tpiu-hsync|dstream|raw",
		   "how the snapshot's trace is framed", .flags = M(CS_DECODE)),
	OPT_BOOLEAN(0, "halt-on-error", co.halt_on_error,
		    "stop at the first data error and exit 1",
		    .flags = M(CS_DECODE)),
	OPT_CALLBACK(0, "symdir", "DIR", opt_symdir,
		     "the traced binaries (by path or build-id)",
		     .flags = M_FILE),
	OPT_BOOLEAN(0, "no-disasm", io.no_disasm,
		    "instruction ranges without their disassembly",
		    .flags = M(CS_SCRIPT)),
	OPT_CALLBACK(0, "max-insns", "N", opt_max_insns,
		     "at most N instructions of a range disassembled",
		     .flags = M(CS_SCRIPT)),
	OPT_NOOP(0, "itrace", "instruction trace decoding (this command)",
		 .arg = CLI_ARG_OPTIONAL, .argh = "OPTS", .flags = M_ITRACE),
	OPT_NOOP(0, "aux", "the AUX data (this command)",
		 .flags = M(CS_DUMP_AUX)),
	OPT_BOOLEAN('q', "quiet", quiet, "no summary",
		    .flags = M(CS_DECODE) | M_FILE),
	OPT_END(),
};
#undef CLI_ARGS

static const struct {
	const char *name, *usage, *notes;
} cs_modes[] = {
	[CS_DECODE] = { "decode",
			"--snapshot DIR [--pkts|--decode|--elements] [OPTIONS]",
			"The packets (and with --decode the elements) of an OpenCSD snapshot\n"
			"directory, lines as OpenCSD's trc_pkt_lister.\n" },
	[CS_DUMP_AUX] = { "dump",
			  "--aux [-i FILE] [--decode|--elements] [OPTIONS]",
			  "The same listing of a cs_etm perf.data's AUX trace.\n" },
	[CS_SCRIPT] = { "script", "--itrace [-i FILE|--snapshot DIR] [OPTIONS]",
			"Each executed instruction range of the CoreSight trace, disassembled;\n"
			"the code comes from the snapshot's memory images or the binaries under\n"
			"--symdir; nothing decoded is a warning and exit 1.\n" },
	[CS_REPORT] = { "report", "--itrace [-i FILE|--snapshot DIR] [OPTIONS]",
			"Instructions executed per object and symbol, hottest first; nothing\n"
			"decoded is a warning and exit 1.\n" },
	[CS_INJECT] = { "inject", "[-i FILE] [-o OUT|-] [OPTIONS]",
			"AutoFDO range and branch counts of a cs_etm perf.data, as simpleperf\n"
			"inject writes them; nothing decoded (an empty OUT) is a warning and\n"
			"exit 1.\n" },
};

static int cs_run(int argc, char **argv, enum cs_mode mode)
{
	struct cs_args ca = {
		.co = { .sz = sizeof(ca.co) },
		.io = { .sz = sizeof(ca.io) },
	};
	const struct cli_command cmd = {
		.name = cs_modes[mode].name,
		.usage = (const char *const[]){ cs_modes[mode].usage, NULL },
		.options = cs_options,
		.notes = cs_modes[mode].notes,
		.help_flags = M(mode),
	};
	struct perfring_cs_stats st = { .sz = sizeof(st) };
	struct perfring_cs_opts co;
	struct perfring_itrace_opts io;
	const char *output;
	bool quiet;
	int first = cli_parse(&cmd, argc, argv, &ca, NULL);
	int err;

	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
	co = ca.co;
	io = ca.io;
	output = ca.output;
	quiet = ca.quiet;
	if (mode == CS_DECODE && !co.snapshot && !co.input)
		die_usage("%s", "decode needs --snapshot DIR or -i FILE");
	if ((co.framing || co.halt_on_error) &&
	    (mode != CS_DECODE || !co.snapshot))
		die_usage(
			"%s",
			"--framing and --halt-on-error go with decode --snapshot");
	if (!co.snapshot && !co.input)
		co.input = io.input = "perf.data";
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	switch (mode) {
	case CS_DECODE:
	case CS_DUMP_AUX:
		err = perfring_cs_decode(&co, stdout, &st);
		break;
	case CS_SCRIPT:
		err = perfring_itrace_script(&io, stdout, &st);
		break;
	case CS_REPORT:
		err = perfring_itrace_report(&io, stdout, &st);
		break;
	default:
		err = perfring_inject(&io, output ? output : "perf_inject.data",
				      &st);
		break;
	}
	fflush(stdout);
	if (err == -EPIPE)
		return 0; /* the reader went away (| head) */
	if (!quiet && st.sz && (!err || st.trace_bytes))
		cs_summary(co.snapshot ? co.snapshot : co.input, &st);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", prog,
			co.snapshot ? co.snapshot : co.input, strerror(-err));
		return 1;
	}
	if (nothing_decoded(co.snapshot ? co.snapshot : co.input, mode, &st))
		return 1;
	if (co.halt_on_error && st.errors) {
		fprintf(stderr,
			"%s: %s: stopped at a data error (--halt-on-error)\n",
			prog, co.snapshot);
		return 1;
	}
	return 0;
}

int cmd_decode(int argc, char **argv)
{
	return cs_run(argc, argv, CS_DECODE);
}

int cmd_inject(int argc, char **argv)
{
	return cs_run(argc, argv, CS_INJECT);
}

int cmd_dump_aux(int argc, char **argv)
{
	return cs_run(argc, argv, CS_DUMP_AUX);
}

int cmd_script_itrace(int argc, char **argv)
{
	return cs_run(argc, argv, CS_SCRIPT);
}

int cmd_report_itrace(int argc, char **argv)
{
	return cs_run(argc, argv, CS_REPORT);
}
