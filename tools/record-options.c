// SPDX-License-Identifier: MIT
/*
 * perfring record's options: one parser for every mode.  An option means
 * what it means in perf record (-e, -a, -C, -p, -t, -m, -F, -c, -g, -o,
 * -S, --overwrite...) whatever the mode; the mode comes from what is asked
 * for: --replay-cs alone or an AUX PMU event (cs_etm//, intel_pt//,
 * arm_spe//) is AUX recording, --tracefs the ftrace-only recorder (where
 * -e names ftrace events, as trace-cmd's -e does), anything else the one
 * recorder of kernel perf events, application rings, with --tracefs-event
 * ftrace events and with --replay-cs (beside a command, -e, ftrace events
 * or targets) AUX trace in the same run.  An option the mode has no use
 * for is a usage error, as an unknown option always was.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#include "cli.h"

enum {
	OPT_PER_THREAD = 256,
	OPT_OVERWRITE,
	OPT_NO_APP,
	OPT_APP_MAX_RINGS,
	OPT_TRACEFS,
	OPT_TRACEFS_EVENT,
	OPT_TRACEFS_OUTPUT,
	OPT_BUFFER_SIZE,
	OPT_SUBBUF,
	OPT_PERCENT,
	OPT_NO_MMAP,
	OPT_REPLAY,
	OPT_RATE,
	OPT_LOOPS,
	OPT_CHUNK,
	OPT_REPLAY_CPU,
	OPT_CS_HEADER,
	OPT_DURATION,
	OPT_NO_INHERIT,
	OPT_MAX_SIZE,
	OPT_SWITCH_OUTPUT,
	OPT_NO_BUILDID_CACHE,
	OPT_CALL_GRAPH,
	OPT_USER_REGS,
	OPT_FILTER,
	OPT_PPROF,
	OPT_PHYS_DATA,
	OPT_DATA_PAGE_SIZE,
	OPT_CODE_PAGE_SIZE,
	OPT_SAMPLE_CPU,
	OPT_SAMPLE_IDENTIFIER,
	OPT_SWITCH_EVENTS,
	OPT_USER_CALLCHAINS,
	OPT_KERNEL_CALLCHAINS,
	OPT_TIMESTAMP_FILENAME,
	OPT_CONTROL,
	OPT_OFF_CPU,
	OPT_OFF_CPU_THRESH,
	OPT_PUSH,
	OPT_PUSH_EVERY,
	OPT_LABEL,
	OPT_SPOOL,
	OPT_SPOOL_SIZE,
	OPT_MAX
};

static const struct option record_longopts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "user-regs", optional_argument, NULL, OPT_USER_REGS },
	{ "output", required_argument, NULL, 'o' },
	{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "snapshot", optional_argument, NULL, 'S' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "delay", required_argument, NULL, 'D' },
	{ "timestamp", no_argument, NULL, 'T' },
	{ "data", no_argument, NULL, 'd' },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "stat", no_argument, NULL, 's' },
	{ "clockid", required_argument, NULL, 'k' },
	{ "compression-level", optional_argument, NULL, 'z' },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
	{ "no-buildid-cache", no_argument, NULL, 'N' },
	{ "help", no_argument, NULL, 'h' },
	{ "no-app", no_argument, NULL, OPT_NO_APP },
	{ "app-max-rings", required_argument, NULL, OPT_APP_MAX_RINGS },
	{ "tracefs", no_argument, NULL, OPT_TRACEFS },
	{ "tracefs-event", required_argument, NULL, OPT_TRACEFS_EVENT },
	{ "tracefs-output", required_argument, NULL, OPT_TRACEFS_OUTPUT },
	{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
	{ "subbuf-size", required_argument, NULL, OPT_SUBBUF },
	{ "buffer-percent", required_argument, NULL, OPT_PERCENT },
	{ "no-mmap", no_argument, NULL, OPT_NO_MMAP },
	{ "replay-cs", required_argument, NULL, OPT_REPLAY },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "loops", required_argument, NULL, OPT_LOOPS },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "replay-cpu", required_argument, NULL, OPT_REPLAY_CPU },
	{ "cs-header-version", required_argument, NULL, OPT_CS_HEADER },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "raw-samples", no_argument, NULL, 'R' },
	{ "weight", no_argument, NULL, 'W' },
	{ "period", no_argument, NULL, 'P' },
	{ "phys-data", no_argument, NULL, OPT_PHYS_DATA },
	{ "data-page-size", no_argument, NULL, OPT_DATA_PAGE_SIZE },
	{ "code-page-size", no_argument, NULL, OPT_CODE_PAGE_SIZE },
	{ "sample-cpu", no_argument, NULL, OPT_SAMPLE_CPU },
	{ "sample-identifier", no_argument, NULL, OPT_SAMPLE_IDENTIFIER },
	{ "switch-events", no_argument, NULL, OPT_SWITCH_EVENTS },
	{ "user-callchains", no_argument, NULL, OPT_USER_CALLCHAINS },
	{ "kernel-callchains", no_argument, NULL, OPT_KERNEL_CALLCHAINS },
	{ "no-buildid", no_argument, NULL, 'B' },
	{ "timestamp-filename", no_argument, NULL, OPT_TIMESTAMP_FILENAME },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-thresh", required_argument, NULL, OPT_OFF_CPU_THRESH },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-every", required_argument, NULL, OPT_PUSH_EVERY },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "spool", required_argument, NULL, OPT_SPOOL },
	{ "spool-size", required_argument, NULL, OPT_SPOOL_SIZE },
	{ NULL, 0, NULL, 0 },
};

/* What each mode takes (0-terminated). */
static const int perf_takes[] = { 'e',
				  'a',
				  'C',
				  'p',
				  't',
				  OPT_PER_THREAD,
				  'm',
				  'F',
				  'c',
				  'g',
				  OPT_CALL_GRAPH,
				  OPT_USER_REGS,
				  'o',
				  OPT_OVERWRITE,
				  'q',
				  OPT_DURATION,
				  'D',
				  'T',
				  'd',
				  OPT_NO_INHERIT,
				  's',
				  'k',
				  'z',
				  OPT_MAX_SIZE,
				  OPT_SWITCH_OUTPUT,
				  'N',
				  OPT_NO_APP,
				  OPT_APP_MAX_RINGS,
				  OPT_TRACEFS_EVENT,
				  OPT_TRACEFS_OUTPUT,
				  OPT_BUFFER_SIZE,
				  OPT_SUBBUF,
				  OPT_PERCENT,
				  OPT_NO_MMAP,
				  OPT_FILTER,
				  OPT_PPROF,
				  'R',
				  'W',
				  'P',
				  OPT_PHYS_DATA,
				  OPT_DATA_PAGE_SIZE,
				  OPT_CODE_PAGE_SIZE,
				  OPT_SAMPLE_CPU,
				  OPT_SAMPLE_IDENTIFIER,
				  OPT_SWITCH_EVENTS,
				  OPT_USER_CALLCHAINS,
				  OPT_KERNEL_CALLCHAINS,
				  'B',
				  OPT_TIMESTAMP_FILENAME,
				  OPT_CONTROL,
				  OPT_OFF_CPU,
				  OPT_OFF_CPU_THRESH,
				  OPT_PUSH,
				  OPT_PUSH_EVERY,
				  OPT_LABEL,
				  OPT_SPOOL,
				  OPT_SPOOL_SIZE,
				  0 };
static const int tracefs_takes[] = { OPT_TRACEFS,
				     'e',
				     'a',
				     'C',
				     'm',
				     'o',
				     'q',
				     OPT_DURATION,
				     OPT_BUFFER_SIZE,
				     OPT_SUBBUF,
				     OPT_PERCENT,
				     OPT_NO_MMAP,
				     0 };
static const int aux_takes[] = { OPT_REPLAY,
				 'e',
				 'o',
				 OPT_RATE,
				 OPT_LOOPS,
				 OPT_CHUNK,
				 OPT_REPLAY_CPU,
				 'm',
				 'S',
				 OPT_OVERWRITE,
				 OPT_CS_HEADER,
				 OPT_DURATION,
				 'q',
				 0 };
/* The AUX replay's options a perf recording takes with --replay-cs
 * beside its other sources. */
static const int aux_part[] = { OPT_REPLAY, OPT_RATE,	    OPT_LOOPS,
				OPT_CHUNK,  OPT_REPLAY_CPU, OPT_CS_HEADER,
				0 };
/* Options of the ftrace part that need ftrace events in perf mode. */
static const int tracefs_part[] = { OPT_TRACEFS_OUTPUT, OPT_BUFFER_SIZE,
				    OPT_SUBBUF,		OPT_PERCENT,
				    OPT_NO_MMAP,	0 };

static bool takes(const int *list, int c)
{
	for (; *list; list++)
		if (*list == c)
			return true;
	return false;
}

static const char *opt_name(int c)
{
	static char s[4];

	for (const struct option *o = record_longopts; o->name; o++)
		if (o->val == c)
			return o->name;
	snprintf(s, sizeof(s), "%c", c);
	return s;
}

bool record_aux_event(const char *e)
{
	static const char *const pmus[] = { "cs_etm", "cs-etm", "intel_pt",
					    "arm_spe" };

	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++)
		if (!strncmp(e, pmus[i], strlen(pmus[i])))
			return true;
	return false;
}

/* --subbuf-size: a power of two from 4K; no suffix means kilobytes. */
static uint32_t parse_subbuf(const char *arg)
{
	uint64_t v = parse_size(arg, "--subbuf-size");

	if (isdigit((unsigned char)arg[strlen(arg) - 1]))
		v *= 1024; /* trace-cmd: kilobytes */
	if (v < 4096 || (v & (v - 1)) || v > (1u << 27))
		die_usage("--subbuf-size must be a power of two from 4K: %s",
			  arg);
	return (uint32_t)v;
}

static uint64_t parse_count(const char *arg, const char *fmt)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);

	if (*end || !v)
		die_usage(fmt, arg);
	return v;
}

/* The kernel's highest sampling rate, which only root may change. */
static uint64_t max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* -F HZ or -F max, lowered to the kernel's limit as perf does. */
static uint64_t parse_freq(const char *arg)
{
	uint64_t max = max_sample_rate(), v;

	if (!strcmp(arg, "max")) {
		if (!max)
			die_usage(
				"-F max: cannot read /proc/sys/kernel/perf_event_max_sample_rate%s",
				"");
		fprintf(stderr,
			"info: Using a maximum frequency rate of %llu Hz\n",
			(unsigned long long)max);
		return max;
	}
	v = parse_count(arg, "-F takes a frequency in Hz, or max: %s");
	if (max && v > max) {
		fprintf(stderr,
			"warning: Maximum frequency rate (%llu Hz) exceeded, throttling from %llu Hz to %llu Hz.\n"
			"         The limit can be raised via /proc/sys/kernel/perf_event_max_sample_rate.\n"
			"         The kernel will lower it when perf's interrupts take too long.\n",
			(unsigned long long)max, (unsigned long long)v,
			(unsigned long long)max);
		v = max;
	}
	return v;
}

/* perf's -m: pages, or a size (B/K/M/G) in whole pages; not a power of
 * two of pages is rounded up, with perf's message. */
static uint64_t parse_mmap_pages(const char *arg)
{
	static const char units[] = "BKMGT";
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), v, pages, p = 1, shown;
	int unit = 0;

	v = parse_size(arg, "-m");
	pages = arg[0] && !isdigit((unsigned char)arg[strlen(arg) - 1]) ?
			(v + page - 1) / page :
			v;
	if (!pages || pages > (1ull << 40))
		die_usage("-m takes pages or a size like 512K or 4M: %s", arg);
	while (p < pages)
		p <<= 1;
	if (p != pages) {
		for (shown = p * page;
		     shown >= 1024 && !(shown % 1024) && unit < 4; unit++)
			shown /= 1024;
		fprintf(stderr,
			"rounding mmap pages size to %llu%c (%llu pages)\n",
			(unsigned long long)shown, units[unit],
			(unsigned long long)p);
	}
	return p * page;
}

/* perf's -m pages[,auxpages]: the AUX part only in AUX mode. */
static void parse_mmap_arg(struct record_args *ra, const char *arg)
{
	char *copy = strdup(arg), *comma;

	if (!copy)
		die_usage("out of memory: %s", arg);
	comma = strchr(copy, ',');
	if (comma) {
		*comma = 0;
		ra->aux_bytes = parse_mmap_pages(comma + 1);
	}
	if (*copy)
		ra->mmap_bytes = parse_mmap_pages(copy);
	ra->mmap_has_aux = comma != NULL;
	free(copy);
}

/* -D/--delay as perf 6.1 takes it: MSECS, the events enabled that many
 * milliseconds after the command starts; -1, the events start disabled
 * (perf enables them through --control, which perfring has not); or
 * windows, "10-20,30-40": enabled from 10 to 20 ms and from 30 to 40 ms
 * after the start, then the recording stops. */
static void parse_delay(struct record_args *ra, const char *arg)
{
	const char *p = arg;
	char *end;
	double v;

	if (!strchr(arg + 1, '-')) {
		v = strtod(arg, &end);
		if (*end || end == arg || (v < 0 && v != -1) || v > 1e9)
			die_usage(
				"-D/--delay takes milliseconds (0 or more, -1: start disabled) or windows (10-20,30-40): %s",
				arg);
		ra->delay_ms = v;
		return;
	}
	free(ra->enable_ranges);
	ra->enable_ranges = NULL;
	ra->nr_enable_ranges = 0;
	while (*p) {
		double a, b, *grown;

		a = strtod(p, &end);
		if (end == p || *end != '-' || a < 0)
			goto bad;
		p = end + 1;
		b = strtod(p, &end);
		if (end == p || (*end && *end != ',') || !(b > a) || b > 1e9 ||
		    (ra->nr_enable_ranges &&
		     !(a > ra->enable_ranges[2 * ra->nr_enable_ranges - 1])))
			goto bad;
		p = *end ? end + 1 : end;
		if (ra->nr_enable_ranges == 1024)
			goto bad;
		grown = realloc(ra->enable_ranges,
				sizeof(double) * 2 *
					(ra->nr_enable_ranges + 1));
		if (!grown)
			die_usage("-D: out of memory: %s", arg);
		ra->enable_ranges = grown;
		grown[2 * ra->nr_enable_ranges] = a;
		grown[2 * ra->nr_enable_ranges + 1] = b;
		ra->nr_enable_ranges++;
	}
	if (ra->nr_enable_ranges)
		return;
bad:
	die_usage(
		"-D/--delay windows are ascending start-end milliseconds, at most 1024 (10-20,30-40): %s",
		arg);
}

/*
 * A FIFO of --control fifo:: opened read-write and non-blocking, as perf
 * opens both (a writer closing is no end, and acks nobody reads never
 * block), but neither through a symlink nor if it is not a FIFO (a
 * regular file or /dev/zero would be accepted and never read): the paths
 * may lie where others write, as -o's does.
 */
static int open_control_fifo(const char *path)
{
	char why[PATH_MAX + 128];
	struct stat st;
	int fd;

	if (lstat(path, &st)) {
		snprintf(why, sizeof(why), "%s: %s (mkfifo it first)", path,
			 strerror(errno));
		die_usage("--control: %s", why);
	}
	if (!S_ISFIFO(st.st_mode)) {
		snprintf(why, sizeof(why), "%s is %s (not a FIFO)", path,
			 S_ISLNK(st.st_mode) ? "a symbolic link" :
			 S_ISREG(st.st_mode) ? "a regular file" :
			 S_ISCHR(st.st_mode) ? "a character device" :
			 S_ISDIR(st.st_mode) ? "a directory" :
					       "not a FIFO");
		die_usage("--control: %s", why);
	}
	fd = open(path,
		  O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		snprintf(why, sizeof(why), "cannot open the FIFO %s: %s", path,
			 fd < 0 ? strerror(errno) : "not a FIFO");
		die_usage("--control: %s", why);
	}
	return fd;
}

/* --control as perf 6.1 takes it: fifo:CTL[,ACK] or fd:CTL[,ACK]
 * (descriptors the caller opened: a pipe, a FIFO or a socket; the
 * recorder reads and writes them without blocking). */
static void parse_control(struct record_args *ra, const char *arg)
{
	char *copy = strdup(arg), *ack, *end;
	bool fifo = !strncmp(arg, "fifo:", 5);

	if (!copy || (!fifo && strncmp(arg, "fd:", 3)))
		die_usage("--control takes fifo:CTL[,ACK] or fd:CTL[,ACK]: %s",
			  arg);
	ack = strchr(copy, ',');
	if (ack)
		*ack++ = '\0';
	if (fifo) {
		ra->ctl_fd = open_control_fifo(copy + 5);
		ra->ack_fd = ack ? open_control_fifo(ack) : -1;
	} else {
		long c = strtol(copy + 3, &end, 10), a = -1;

		if (*end || end == copy + 3 || c < 0 || c > INT_MAX)
			ra->ctl_fd = -1;
		else
			ra->ctl_fd = (int)c;
		if (ack) {
			a = strtol(ack, &end, 10);
			if (*end || end == ack || a < 0 || a > INT_MAX)
				die_usage("--control: not a descriptor: %s",
					  arg);
		}
		ra->ack_fd = (int)a;
		if (ra->ctl_fd >= 0 && fcntl(ra->ctl_fd, F_GETFD) < 0)
			ra->ctl_fd = -1;
	}
	if (ra->ctl_fd < 0 || (ack && ra->ack_fd < 0))
		die_usage(
			"--control: cannot open (or use) its FIFOs or descriptors: %s",
			arg);
	ra->has_control = true;
	free(copy);
}

/* -z's level: zstd's 1..22, as perf takes it. */
static unsigned long parse_level(const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || end == arg || v < 1 || v > 22)
		die_usage("-z/--compression-level takes 1..22: %s", arg);
	return v;
}

/* -k: perf's clock names (and their short forms) or a number. */
static int parse_clockid(const char *arg)
{
	static const struct {
		const char *name;
		int id;
	} clocks[] = {
		{ "monotonic", 1 }, { "mono", 1 },     { "monotonic_raw", 4 },
		{ "raw", 4 },	    { "realtime", 0 }, { "real", 0 },
		{ "boottime", 7 },  { "boot", 7 },     { "tai", 11 },
	};
	const char *name = arg;
	char *end;
	long v;

	if (!strncasecmp(name, "CLOCK_", 6))
		name += 6;
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (!strcasecmp(name, clocks[i].name))
			return clocks[i].id;
	v = strtol(arg, &end, 10);
	if (*end || end == arg || v < 0 || v > 15)
		die_usage("-k/--clockid: unknown clock %s", arg);
	return (int)v;
}

/*
 * perf's --call-graph MODE[,SIZE]: "fp[,DEPTH]" (frame pointers; DEPTH:
 * deepest callchain, sample_max_stack) or "dwarf[,BYTES]" (user registers
 * and BYTES of user stack a sample, rounded up to 8, at most 65528;
 * default 8192).  -g is "fp".
 */
static void parse_call_graph(struct record_args *ra, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	unsigned long long v = 0;
	char *end;

	if (comma) {
		v = strtoull(comma + 1, &end, 0);
		if (*end || comma[1] == '-' || !comma[1])
			die_usage("--call-graph: MODE,SIZE takes a number: %s",
				  arg);
	}
	ra->callchain = true;
	if (len == 2 && !strncmp(arg, "fp", 2)) {
		ra->callchain_dwarf_size = 0;
		/* perf keeps a depth below its limit (127), ignores others */
		if (comma && v < 127)
			ra->callchain_max_stack = (uint16_t)v;
	} else if (len == 5 && !strncmp(arg, "dwarf", 5)) {
		if (comma)
			v = (v + 7) & ~7ull;
		else
			v = 8192;
		if (!v || v > 65528)
			die_usage(
				"--call-graph: incorrect stack dump size (max 65528): %s",
				arg);
		ra->callchain_dwarf_size = (uint32_t)v;
	} else {
		die_usage(
			"--call-graph takes fp[,DEPTH] or dwarf[,SIZE] (no LBR here): %s",
			arg);
	}
}

/* perf's x86_64 register names, by perf_regs.h number. */
static const char *const user_reg_names[] = {
	"AX", "BX",    "CX",  "DX",  "SI",  "DI",  "BP",  "SP",
	"IP", "FLAGS", "CS",  "SS",  NULL,  NULL,  NULL,  NULL,
	"R8", "R9",    "R10", "R11", "R12", "R13", "R14", "R15",
};
#define NR_USER_REGS (sizeof(user_reg_names) / sizeof(user_reg_names[0]))

/* perf's --user-regs[=REG,...]: none named means all of them; "?" lists. */
static void parse_user_regs(struct record_args *ra, const char *arg)
{
	char *copy, *tok, *save = NULL;

	if (!arg || !*arg) {
		for (unsigned i = 0; i < NR_USER_REGS; i++)
			if (user_reg_names[i])
				ra->user_regs |= 1ull << i;
		return;
	}
	if (!strcmp(arg, "?")) {
		printf("available registers:");
		for (unsigned i = 0; i < NR_USER_REGS; i++)
			if (user_reg_names[i])
				printf(" %s", user_reg_names[i]);
		printf("\n");
		exit(0);
	}
	copy = strdup(arg);
	if (!copy)
		die_usage("out of memory: %s", arg);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned i;

		for (i = 0; i < NR_USER_REGS; i++)
			if (user_reg_names[i] &&
			    !strcasecmp(tok, user_reg_names[i]))
				break;
		if (i == NR_USER_REGS)
			die_usage(
				"--user-regs: unknown register (--user-regs=? lists them): %s",
				tok);
		ra->user_regs |= 1ull << i;
	}
	free(copy);
}

/* One option into @ra.  Returns false for an unknown one. */
static bool record_option(struct record_args *ra, int c, char *arg)
{
	char *end;
	unsigned long long v;

	switch (c) {
	case 'e':
		if (ra->nr_events == RECORD_MAX_EVENTS)
			die_usage("at most 64 events (%s)", arg);
		ra->events[ra->nr_events++] = arg;
		break;
	case OPT_FILTER: /* perf: the filter of the -e before it */
		if (!ra->nr_events)
			die_usage(
				"--filter option should follow a -e tracepoint option: %s",
				arg);
		ra->filters[ra->nr_events - 1] = arg;
		break;
	case OPT_TRACEFS_EVENT:
		if (ra->nr_tracefs_events == RECORD_MAX_EVENTS)
			die_usage("at most 64 tracefs events (%s)", arg);
		ra->tracefs_events[ra->nr_tracefs_events++] = arg;
		break;
	case 'a':
		ra->all_cpus = true;
		break;
	case 'C':
		ra->cpu_list = arg;
		break;
	case 'p':
		ra->pid_list = arg;
		break;
	case 't':
		ra->tid_list = arg;
		break;
	case OPT_PER_THREAD:
		ra->per_thread = true;
		break;
	case 'm':
		parse_mmap_arg(ra, arg);
		break;
	case 'F':
		ra->freq = parse_freq(arg);
		break;
	case 'c':
		ra->period = parse_count(
			arg, "-c takes a period (events per sample): %s");
		break;
	case 'g': /* as perf: fp unless --call-graph chose a mode */
		ra->callchain = true;
		break;
	case OPT_CALL_GRAPH:
		parse_call_graph(ra, arg);
		break;
	case OPT_USER_REGS:
		parse_user_regs(ra, arg);
		break;
	case 'o':
		ra->output = arg;
		break;
	case OPT_OVERWRITE:
		ra->overwrite = true;
		break;
	case 'S': /* -S[size], --snapshot[=[e][size]] */
		ra->snapshot = true;
		if (arg && *arg == 'e') {
			ra->snapshot_on_exit = true;
			arg++;
		}
		if (arg && *arg)
			ra->snapshot_size = parse_size(arg, "-S");
		break;
	case 'q':
		ra->quiet = true;
		break;
	case OPT_DURATION:
		ra->duration = parse_seconds(arg);
		break;
	case 'D':
		parse_delay(ra, arg);
		break;
	case OPT_CONTROL:
		parse_control(ra, arg);
		break;
	case 'T': /* every sample has its time already */
	case 'N': /* no build-id cache is kept */
		break;
	case 'd':
		ra->sample_addr = true;
		break;
	case 'R':
		ra->sample_bits |= PERF_SAMPLE_RAW;
		break;
	case 'W':
		ra->sample_bits |=
			PERF_SAMPLE_WEIGHT_STRUCT; /* as perf 6.1 sets it */
		break;
	case OPT_PHYS_DATA:
		ra->sample_bits |= PERF_SAMPLE_PHYS_ADDR;
		break;
	case OPT_DATA_PAGE_SIZE:
		ra->sample_bits |= PERF_SAMPLE_DATA_PAGE_SIZE;
		break;
	case OPT_CODE_PAGE_SIZE:
		ra->sample_bits |= PERF_SAMPLE_CODE_PAGE_SIZE;
		break;
	case 'P': /* every sample has its period already */
	case OPT_SAMPLE_CPU: /* ... its CPU */
	case OPT_SAMPLE_IDENTIFIER: /* ... and PERF_SAMPLE_IDENTIFIER */
		break;
	case OPT_SWITCH_EVENTS:
		ra->switch_events = true;
		break;
	case OPT_USER_CALLCHAINS:
		ra->user_callchains = true;
		break;
	case OPT_KERNEL_CALLCHAINS:
		ra->kernel_callchains = true;
		break;
	case 'B':
		ra->no_buildid = true;
		break;
	case OPT_TIMESTAMP_FILENAME:
		ra->timestamp_filename = true;
		break;
	case OPT_NO_INHERIT:
		ra->no_inherit = true;
		break;
	case 's':
		ra->inherit_stat = true;
		break;
	case 'k':
		ra->clockid = parse_clockid(arg);
		ra->set_clockid = true;
		break;
	case 'z':
		ra->compression_level = arg ? (int)parse_level(arg) : 1;
		break;
	case OPT_MAX_SIZE:
		ra->max_size = parse_size(arg, "--max-size");
		break;
	case OPT_SWITCH_OUTPUT:
		ra->switch_output = arg ? arg : "signal";
		break;
	case OPT_NO_APP:
		ra->no_app = true;
		break;
	case OPT_APP_MAX_RINGS:
		v = strtoull(arg, &end, 10);
		if (*end || !v || v > UINT32_MAX)
			die_usage("--app-max-rings takes a count: %s", arg);
		ra->app_max_rings = (uint32_t)v;
		break;
	case OPT_TRACEFS:
		ra->tracefs = true;
		break;
	case OPT_TRACEFS_OUTPUT:
		ra->tracefs_output = arg;
		break;
	case OPT_BUFFER_SIZE:
		ra->buffer_bytes = parse_mmap(arg);
		break;
	case OPT_SUBBUF:
		ra->subbuf_bytes = parse_subbuf(arg);
		break;
	case OPT_PERCENT:
		ra->buffer_percent = (int)strtol(arg, &end, 10);
		if (*end || ra->buffer_percent < 0 || ra->buffer_percent > 100)
			die_usage("--buffer-percent takes 0..100: %s", arg);
		break;
	case OPT_NO_MMAP:
		ra->no_mmap = true;
		break;
	case OPT_REPLAY:
		ra->replay = arg;
		break;
	case OPT_RATE:
		ra->rate = parse_size(arg, "--rate");
		break;
	case OPT_LOOPS:
		ra->loops = parse_count(arg, "--loops takes a count: %s");
		break;
	case OPT_CHUNK:
		ra->chunk = parse_size(arg, "--chunk");
		break;
	case OPT_REPLAY_CPU:
		ra->replay_cpu = (int)strtol(arg, &end, 10);
		if (*end || ra->replay_cpu < 0)
			die_usage("--replay-cpu takes a CPU: %s", arg);
		break;
	case OPT_CS_HEADER:
		ra->cs_header_version = atoi(arg);
		break;
	case OPT_PPROF:
		ra->pprof = arg;
		break;
	case OPT_OFF_CPU:
		ra->off_cpu = true;
		break;
	case OPT_OFF_CPU_THRESH: /* perf: milliseconds */
		v = strtoull(arg, &end, 10);
		if (end == arg || *end || v > UINT64_MAX / 1000000)
			die_usage("--off-cpu-thresh takes milliseconds: %s",
				  arg);
		ra->off_cpu_thresh_ms = v;
		ra->off_cpu_thresh_set = true;
		break;
	case OPT_PUSH: /* fleet profiling: SINK=URL, more than one */
		if (ra->nr_push >= PERFRING_PUSH_MAX_SINKS)
			die_usage("--push: at most 8 sinks: %s", arg);
		ra->push[ra->nr_push++] = arg;
		break;
	case OPT_PUSH_EVERY:
		ra->push_every = parse_seconds(arg);
		break;
	case OPT_LABEL:
		if (ra->nr_labels >= RECORD_MAX_EVENTS || !strchr(arg, '=') ||
		    arg[0] == '=')
			die_usage("--label takes KEY=VALUE (at most 64): %s",
				  arg);
		ra->labels[ra->nr_labels++] = arg;
		break;
	case OPT_SPOOL:
		ra->spool = arg;
		break;
	case OPT_SPOOL_SIZE:
		ra->spool_bytes = parse_size(arg, "--spool-size");
		break;
	default:
		return false;
	}
	return true;
}

/* --replay-cs with anything else to record (a command, perf events,
 * ftrace events, targets): AUX trace as one source of the perf recording. */
static bool replay_beside(const struct record_args *ra, bool command)
{
	bool perf_events = false;

	for (int i = 0; i < ra->nr_events; i++)
		perf_events |= !record_aux_event(ra->events[i]);
	return ra->replay && !ra->tracefs &&
	       (command || perf_events || ra->nr_tracefs_events ||
		ra->all_cpus || ra->cpu_list || ra->pid_list || ra->tid_list);
}

static enum record_mode pick_mode(const struct record_args *ra, bool command)
{
	if (replay_beside(ra, command))
		return RECORD_PERF;
	if (ra->replay)
		return RECORD_AUX;
	for (int i = 0; i < ra->nr_events; i++)
		if (record_aux_event(ra->events[i]))
			return RECORD_AUX;
	return ra->tracefs ? RECORD_TRACEFS : RECORD_PERF;
}

int record_parse_args(int argc, char **argv, struct record_args *ra)
{
	bool seen[OPT_MAX] = { false };
	const int *ok;
	int c;

	memset(ra, 0, sizeof(*ra));
	ra->buffer_percent = -1;
	ra->replay_cpu = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv,
				"+e:aC:p:t:m:F:c:go:S::qD:hTdk:z::NsRWPB",
				record_longopts, NULL)) != -1) {
		if (c == 'h') {
			ra->help = true;
			continue;
		}
		if (c < 0 || c >= OPT_MAX || !record_option(ra, c, optarg))
			return 2;
		seen[c] = true;
	}
	ra->mode = pick_mode(ra, optind < argc);
	if (ra->help)
		return -1;
	if (ra->mode == RECORD_PERF && ra->replay)
		for (int i = 0; i < ra->nr_events; i++)
			if (record_aux_event(ra->events[i]))
				die_usage(
					"-e %s: an AUX PMU event is recorded alone; beside other sources the AUX trace is --replay-cs's",
					ra->events[i]);
	ok = ra->mode == RECORD_AUX	? aux_takes :
	     ra->mode == RECORD_TRACEFS ? tracefs_takes :
					  perf_takes;
	for (c = 0; c < OPT_MAX; c++) {
		if (!seen[c])
			continue;
		if (!takes(ok, c) && !(ra->mode == RECORD_PERF && ra->replay &&
				       takes(aux_part, c)))
			die_usage(
				ra->mode == RECORD_AUX ?
					"--%s does not apply to AUX area recording (--replay-cs, cs_etm//...)" :
				ra->mode == RECORD_TRACEFS ?
					"--%s does not apply to record --tracefs (use --tracefs-event in a perf recording)" :
				ra->replay ?
					"--%s does not apply to AUX trace beside other sources (--replay-cs with a command, -e, --tracefs-event...)" :
					"--%s does not apply to record of perf events",
				opt_name(c));
		if (ra->mode == RECORD_PERF && takes(tracefs_part, c) &&
		    !ra->nr_tracefs_events)
			die_usage("--%s needs --tracefs-event", opt_name(c));
	}
	if (ra->mode != RECORD_AUX && !ra->replay && ra->mmap_has_aux)
		die_usage(
			"-m DATA,AUX: the AUX size is for AUX area recording: %s",
			"-m");
	ra->argv = optind < argc ? &argv[optind] : NULL;
	if (ra->off_cpu_thresh_set && !ra->off_cpu)
		die_usage("--off-cpu-thresh needs --off-cpu%s", "");
	if (ra->pprof && ra->output && !strcmp(ra->output, "-"))
		die_usage("--pprof reads the recording back: not with -o %s",
			  ra->output);
	if (!ra->nr_push && (seen[OPT_PUSH_EVERY] || seen[OPT_LABEL] ||
			     seen[OPT_SPOOL] || seen[OPT_SPOOL_SIZE]))
		die_usage("--push-every, --label and --spool need --push: %s",
			  "--push");
	if (ra->argv && ra->mode == RECORD_AUX)
		die_usage("record --replay-cs runs no command: %s",
			  argv[optind]);
	return -1;
}
