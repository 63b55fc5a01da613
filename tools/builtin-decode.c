// SPDX-License-Identifier: MIT
/*
 * CoreSight: perfring decode (an OpenCSD snapshot's packets and elements),
 * dump --aux (the same of a perf.data's AUX data), script/report --itrace
 * (executed instruction ranges) and inject (AutoFDO counts).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

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

/* Each command's own usage (perfring decode --help, inject --help, ...). */
static void cs_usage(enum cs_mode mode)
{
	static const char *const text[] = {
		[CS_DECODE] =
			"usage: %s decode --snapshot DIR [--pkts|--decode|--elements] [--buffer NAME]\n"
			"              [--framing auto|frames|tpiu|tpiu-hsync|dstream|raw] [--halt-on-error] [-q]\n"
			"  the packets (and with --decode the elements) of an OpenCSD snapshot directory,\n"
			"  lines as OpenCSD's trc_pkt_lister; --halt-on-error stops at the first data\n"
			"  error and exits 1\n",
		[CS_DUMP_AUX] =
			"usage: %s dump --aux [-i FILE] [--decode|--elements] [--symdir DIR] [-q]\n"
			"  the same listing of a cs_etm perf.data's AUX trace (FILE: perf.data)\n",
		[CS_SCRIPT] =
			"usage: %s script --itrace [-i FILE|--snapshot DIR] [--symdir DIR] [--no-disasm]\n"
			"              [--max-insns N] [-q]\n"
			"  each executed instruction range of the CoreSight trace, disassembled; the\n"
			"  code comes from the snapshot's memory images or the binaries under --symdir\n"
			"  (by path or build-id); nothing decoded is a warning and exit 1\n",
		[CS_REPORT] =
			"usage: %s report --itrace [-i FILE|--snapshot DIR] [--symdir DIR] [-q]\n"
			"  instructions executed per object and symbol, hottest first; nothing\n"
			"  decoded is a warning and exit 1\n",
		[CS_INJECT] =
			"usage: %s inject [-i FILE] [-o OUT|-] [--symdir DIR] [-q]\n"
			"  AutoFDO range and branch counts of a cs_etm perf.data, as simpleperf\n"
			"  inject writes them (OUT: perf_inject.data; FILE: perf.data); the traced\n"
			"  binaries come from --symdir (by path or build-id); nothing decoded\n"
			"  (an empty OUT) is a warning and exit 1\n",
	};

	printf(text[mode], prog);
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

static int cs_run(int argc, char **argv, enum cs_mode mode)
{
	enum {
		OPT_SNAP = 256,
		OPT_PKTS,
		OPT_DECODE,
		OPT_ELEMS,
		OPT_BUFFER,
		OPT_SYMDIR,
		OPT_ITRACE,
		OPT_AUX,
		OPT_NO_DISASM,
		OPT_MAX_INSNS,
		OPT_FRAMING,
		OPT_HALT,
	};
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "snapshot", required_argument, NULL, OPT_SNAP },
		{ "pkts", no_argument, NULL, OPT_PKTS },
		{ "decode", no_argument, NULL, OPT_DECODE },
		{ "elements", no_argument, NULL, OPT_ELEMS },
		{ "buffer", required_argument, NULL, OPT_BUFFER },
		{ "symdir", required_argument, NULL, OPT_SYMDIR },
		{ "itrace", optional_argument, NULL, OPT_ITRACE },
		{ "aux", no_argument, NULL, OPT_AUX },
		{ "no-disasm", no_argument, NULL, OPT_NO_DISASM },
		{ "max-insns", required_argument, NULL, OPT_MAX_INSNS },
		{ "framing", required_argument, NULL, OPT_FRAMING },
		{ "halt-on-error", no_argument, NULL, OPT_HALT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFRING_OPTS(perfring_cs_opts, co, .input = NULL);
	PERFRING_OPTS(perfring_itrace_opts, io, .input = NULL);
	struct perfring_cs_stats st = { .sz = sizeof(st) };
	const char *output = NULL;
	bool quiet = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "i:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			co.input = io.input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_SNAP:
			co.snapshot = io.snapshot = optarg;
			break;
		case OPT_PKTS:
			co.decode = false;
			break;
		case OPT_DECODE:
			co.decode = true;
			break;
		case OPT_ELEMS:
			co.elements_only = true;
			break;
		case OPT_BUFFER:
			co.buffer = optarg;
			break;
		case OPT_SYMDIR:
			co.symdir = io.symdir = optarg;
			break;
		case OPT_ITRACE:
		case OPT_AUX:
			break;
		case OPT_NO_DISASM:
			io.no_disasm = true;
			break;
		case OPT_MAX_INSNS:
			io.max_insns = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case OPT_FRAMING:
			co.framing = optarg;
			break;
		case OPT_HALT:
			co.halt_on_error = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			cs_usage(mode);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
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
