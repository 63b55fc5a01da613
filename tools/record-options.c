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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#include "cli.h"
#include "parse-options.h"

/*
 * Which modes take an option (a row's flags): a mode's own options, and
 * in a perf recording the AUX replay's with --replay-cs beside the other
 * sources and the ftrace buffer's, which need --tracefs-event.
 */
enum {
	M_PERF = 1,
	M_TRACEFS = 2,
	M_AUX = 4,
	M_AUX_PART = 8, /* perf mode, with --replay-cs */
	M_TRACEFS_PART = 16, /* perf mode: needs --tracefs-event */
	M_ALL = M_PERF | M_TRACEFS | M_AUX,
};
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
static void parse_mmap_arg(void *args, const char *arg)
{
	struct record_args *ra = args;
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
static void parse_delay(void *args, const char *arg)
{
	struct record_args *ra = args;
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
static void parse_control(void *args, const char *arg)
{
	struct record_args *ra = args;
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
static void parse_call_graph(void *args, const char *arg)
{
	struct record_args *ra = args;
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
static void parse_user_regs(void *args, const char *arg)
{
	struct record_args *ra = args;
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

/* The rows' callbacks: options with more to do than store a value. */
static void add_event(const char **list, int *nr, const char *arg,
		      const char *fmt)
{
	if (*nr == RECORD_MAX_EVENTS)
		die_usage(fmt, arg);
	list[(*nr)++] = arg;
}

static void opt_event(void *args, const char *arg)
{
	struct record_args *ra = args;

	add_event(ra->events, &ra->nr_events, arg, "at most 64 events (%s)");
}

/* perf: the filter of the -e before it */
static void opt_filter(void *args, const char *arg)
{
	struct record_args *ra = args;

	if (!ra->nr_events)
		die_usage(
			"--filter option should follow a -e tracepoint option: %s",
			arg);
	ra->filters[ra->nr_events - 1] = arg;
}

static void opt_tracefs_event(void *args, const char *arg)
{
	struct record_args *ra = args;

	add_event(ra->tracefs_events, &ra->nr_tracefs_events, arg,
		  "at most 64 tracefs events (%s)");
}

static void opt_freq(void *args, const char *arg)
{
	((struct record_args *)args)->freq = parse_freq(arg);
}

static void opt_count(void *args, const char *arg)
{
	((struct record_args *)args)->period =
		parse_count(arg, "-c takes a period (events per sample): %s");
}

/* -S[size], --snapshot[=[e][size]] */
static void opt_snapshot(void *args, const char *arg)
{
	struct record_args *ra = args;

	ra->snapshot = true;
	if (arg && *arg == 'e') {
		ra->snapshot_on_exit = true;
		arg++;
	}
	if (arg && *arg)
		ra->snapshot_size = parse_size(arg, "-S");
}

static void opt_clockid(void *args, const char *arg)
{
	struct record_args *ra = args;

	ra->clockid = parse_clockid(arg);
	ra->set_clockid = true;
}

static void opt_compression(void *args, const char *arg)
{
	((struct record_args *)args)->compression_level =
		arg ? (int)parse_level(arg) : 1;
}

static void opt_switch_output(void *args, const char *arg)
{
	((struct record_args *)args)->switch_output = arg ? arg : "signal";
}

static void opt_app_max_rings(void *args, const char *arg)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);

	if (*end || !v || v > UINT32_MAX)
		die_usage("--app-max-rings takes a count: %s", arg);
	((struct record_args *)args)->app_max_rings = (uint32_t)v;
}

static void opt_buffer_size(void *args, const char *arg)
{
	((struct record_args *)args)->buffer_bytes = parse_mmap(arg);
}

static void opt_subbuf_size(void *args, const char *arg)
{
	((struct record_args *)args)->subbuf_bytes = parse_subbuf(arg);
}

static void opt_buffer_percent(void *args, const char *arg)
{
	struct record_args *ra = args;
	char *end;

	ra->buffer_percent = (int)strtol(arg, &end, 10);
	if (*end || ra->buffer_percent < 0 || ra->buffer_percent > 100)
		die_usage("--buffer-percent takes 0..100: %s", arg);
}

static void opt_loops(void *args, const char *arg)
{
	((struct record_args *)args)->loops =
		parse_count(arg, "--loops takes a count: %s");
}

static void opt_replay_cpu(void *args, const char *arg)
{
	struct record_args *ra = args;
	char *end;

	ra->replay_cpu = (int)strtol(arg, &end, 10);
	if (*end || ra->replay_cpu < 0)
		die_usage("--replay-cpu takes a CPU: %s", arg);
}

static void opt_cs_header(void *args, const char *arg)
{
	((struct record_args *)args)->cs_header_version = atoi(arg);
}

/* perf's --off-cpu-thresh: milliseconds */
static void opt_off_cpu_thresh(void *args, const char *arg)
{
	struct record_args *ra = args;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v > UINT64_MAX / 1000000)
		die_usage("--off-cpu-thresh takes milliseconds: %s", arg);
	ra->off_cpu_thresh_ms = v;
	ra->off_cpu_thresh_set = true;
}

/* --off-cpu-mode bpf|events */
static void opt_off_cpu_mode(void *args, const char *arg)
{
	struct record_args *ra = args;

	if (!strcmp(arg, "bpf"))
		ra->off_cpu_mode = PERFRING_OFF_CPU_BPF;
	else if (!strcmp(arg, "events"))
		ra->off_cpu_mode = PERFRING_OFF_CPU_EVENTS;
	else
		die_usage("--off-cpu-mode is bpf or events: %s", arg);
}

/* fleet profiling: SINK=URL, more than one */
static void opt_push(void *args, const char *arg)
{
	struct record_args *ra = args;

	if (ra->nr_push >= PERFRING_PUSH_MAX_SINKS)
		die_usage("--push: at most 8 sinks: %s", arg);
	ra->push[ra->nr_push++] = arg;
}

static void opt_label(void *args, const char *arg)
{
	struct record_args *ra = args;

	if (ra->nr_labels >= RECORD_MAX_EVENTS || !strchr(arg, '=') ||
	    arg[0] == '=')
		die_usage("--label takes KEY=VALUE (at most 64): %s", arg);
	ra->labels[ra->nr_labels++] = arg;
}

#define CLI_ARGS struct record_args
/* Every option record takes, grouped as perf record -h lists them, each
 * with the modes it applies to. */
static const struct cli_option record_options[] = {
	OPT_GROUP("What to record (as perf record):"),
	OPT_CALLBACK('e', "event", "EVENT", opt_event,
		     "an event (perfring list), repeatable; default cpu-clock",
		     .flags = M_ALL),
	OPT_CALLBACK(0, "filter", "FILTER", opt_filter,
		     "kernel filter on the tracepoint -e before it",
		     .flags = M_PERF),
	OPT_BOOLEAN('a', "all-cpus", all_cpus, "system wide",
		    .flags = M_PERF | M_TRACEFS),
	OPT_STRING('C', "cpu", cpu_list, "CPUS", "only these CPUs (0-1,3)",
		   .flags = M_PERF | M_TRACEFS),
	OPT_STRING('p', "pid", pid_list, "PIDS",
		   "attach to processes (with a COMMAND: while it runs)",
		   .flags = M_PERF),
	OPT_STRING('t', "tid", tid_list, "TIDS", "attach to threads",
		   .flags = M_PERF),
	OPT_BOOLEAN(0, "per-thread", per_thread,
		    "a ring per thread instead of one per CPU",
		    .flags = M_PERF),
	OPT_BOOLEAN(0, "no-inherit", no_inherit, "not the command's children",
		    .flags = M_PERF),
	OPT_CALLBACK('F', "freq", "HZ|max", opt_freq,
		     "sampling frequency (default 4000)", .flags = M_PERF),
	OPT_CALLBACK('c', "count", "PERIOD", opt_count,
		     "a sample every PERIOD events", .flags = M_PERF),
	/* as perf: fp unless --call-graph chose a mode */
	OPT_BOOLEAN('g', NULL, callchain, "call chains (frame pointers)",
		    .flags = M_PERF),
	OPT_CALLBACK(0, "call-graph", "fp|dwarf[,SIZE]", parse_call_graph,
		     "call chains; dwarf copies SIZE bytes of user stack",
		     .flags = M_PERF),
	OPT_CALLBACK_OPTARG(0, "user-regs", "REGS", parse_user_regs,
			    "sample user registers (=? lists them)",
			    .flags = M_PERF),
	OPT_BOOLEAN(0, "user-callchains", user_callchains,
		    "user call chains only", .flags = M_PERF),
	OPT_BOOLEAN(0, "kernel-callchains", kernel_callchains,
		    "kernel call chains only", .flags = M_PERF),
	OPT_BOOLEAN('d', "data", sample_addr, "sample addresses",
		    .flags = M_PERF),
	OPT_BIT('R', "raw-samples", sample_bits, PERF_SAMPLE_RAW, "raw data",
		.flags = M_PERF),
	/* as perf 6.1 sets it */
	OPT_BIT('W', "weight", sample_bits, PERF_SAMPLE_WEIGHT_STRUCT,
		"the sample weight", .flags = M_PERF),
	OPT_BIT(0, "phys-data", sample_bits, PERF_SAMPLE_PHYS_ADDR,
		"physical data addresses", .flags = M_PERF),
	OPT_BIT(0, "data-page-size", sample_bits, PERF_SAMPLE_DATA_PAGE_SIZE,
		"the data addresses' page sizes", .flags = M_PERF),
	OPT_BIT(0, "code-page-size", sample_bits, PERF_SAMPLE_CODE_PAGE_SIZE,
		"the code addresses' page sizes", .flags = M_PERF),
	OPT_NOOP('T', "timestamp", "accepted: every sample has its time",
		 .flags = M_PERF),
	OPT_NOOP('P', "period", "accepted: every sample has its period",
		 .flags = M_PERF),
	OPT_NOOP(0, "sample-cpu", "accepted: every sample has its CPU",
		 .flags = M_PERF),
	OPT_NOOP(0, "sample-identifier",
		 "accepted: every sample has its id (PERF_SAMPLE_IDENTIFIER)",
		 .flags = M_PERF),
	OPT_BOOLEAN(0, "switch-events", switch_events, "context switch records",
		    .flags = M_PERF),
	OPT_BOOLEAN(0, "off-cpu", off_cpu,
		    "where threads wait: offcpu-time samples (period: ns\n"
		    "off the CPU) at the stacks where they blocked, with\n"
		    "offcpu-preempted and offcpu-waker (who woke them)",
		    .flags = M_PERF),
	OPT_CALLBACK(0, "off-cpu-thresh", "MSEC", opt_off_cpu_thresh,
		     "blocks longer keep their own time (default 500);\n"
		     "shorter ones are summed per thread and stack",
		     .flags = M_PERF),
	OPT_CALLBACK(0, "off-cpu-mode", "bpf|events", opt_off_cpu_mode,
		     "bpf: measured and summed in the kernel (root);\n"
		     "events: every sched switch read here (default:\n"
		     "bpf when the kernel takes it, else events)",
		     .flags = M_PERF),
	OPT_BOOLEAN('s', "stat", inherit_stat, "per-thread counts (report -T)",
		    .flags = M_PERF),
	OPT_CALLBACK('k', "clockid", "CLOCK", opt_clockid,
		     "clock of the perf events (monotonic_raw, ...)",
		     .flags = M_PERF),
	OPT_CALLBACK('D', "delay", "MSECS|-1|START-END,...", parse_delay,
		     "enable late, only in windows, or on --control",
		     .flags = M_PERF),
	OPT_CALLBACK(0, "control", "fifo:CTL[,ACK]|fd:CTL[,ACK]", parse_control,
		     "enable/disable/snapshot commands", .flags = M_PERF),
	OPT_SECONDS(0, "duration", duration, "SECS",
		    "stop after SECS (or when the command ends; Ctrl-C)",
		    .flags = M_ALL),

	OPT_GROUP("Output:"),
	OPT_STRING('o', "output", output, "FILE|-",
		   "default perf.data (the old one becomes perf.data.old);\n"
		   "-: perf's pipe format on standard output",
		   .flags = M_ALL),
	OPT_CALLBACK('m', "mmap-pages", "PAGES|SIZE[,AUX]", parse_mmap_arg,
		     "ring size per CPU (AUX: the AUX area's)", .flags = M_ALL),
	OPT_BOOLEAN(0, "overwrite", overwrite,
		    "flight recorder: newest kept, SIGUSR2 and exit snapshot",
		    .flags = M_PERF | M_AUX),
	OPT_CALLBACK_OPTARG('z', "compression-level", "N", opt_compression,
			    "zstd-compressed records (N 1..22, default 1)",
			    .flags = M_PERF),
	OPT_SIZE(0, "max-size", max_size, "SIZE",
		 "stop when SIZE of data is written (says so)",
		 .flags = M_PERF),
	OPT_CALLBACK_OPTARG(
		0, "switch-output", "signal|SIZE|TIME", opt_switch_output,
		"a new perf.data.<time> on SIGUSR2, per SIZE or TIME",
		.flags = M_PERF),
	OPT_BOOLEAN(0, "timestamp-filename", timestamp_filename,
		    "perf.data.<time> as the output name", .flags = M_PERF),
	OPT_NOOP('N', "no-buildid-cache", "accepted (no cache is kept)",
		 .flags = M_PERF),
	OPT_BOOLEAN('B', "no-buildid", no_buildid, "no build-ids",
		    .flags = M_PERF),
	OPT_STRING(0, "pprof", pprof, "FILE.pb.gz",
		   "also write a pprof profile of the recording at the end",
		   .flags = M_PERF),
	OPT_BOOLEAN('q', "quiet", quiet, "no summary", .flags = M_ALL),
	OPT_BOOLEAN('h', "help", help, "this text", .flags = M_ALL),

	OPT_GROUP(
		"Fleet (symbolized samples to profile stores while recording):"),
	OPT_CALLBACK(0, "push", "clickhouse|pyroscope|parca=http://HOST:PORT",
		     opt_push,
		     "a store, repeatable\n(-o /dev/null: nothing kept locally)",
		     .flags = M_PERF),
	OPT_SECONDS(0, "push-every", push_every, "SECS",
		    "an interval's samples per push (default 10)",
		    .flags = M_PERF),
	OPT_CALLBACK(0, "label", "KEY=VALUE", opt_label,
		     "a label on every pushed profile, repeatable",
		     .flags = M_PERF),
	OPT_STRING(0, "spool", spool, "DIR",
		   "keep what a store refused, for perfring push",
		   .flags = M_PERF),
	OPT_SIZE(0, "spool-size", spool_bytes, "SIZE",
		 "at most SIZE in the spool (oldest dropped first)",
		 .flags = M_PERF),

	OPT_GROUP(
		"Programs that link libperfring (application events, same file):"),
	OPT_BOOLEAN(0, "no-app", no_app, "do not record them", .flags = M_PERF),
	OPT_CALLBACK(0, "app-max-rings", "N", opt_app_max_rings,
		     "read at most N of their rings at once (default 4096)",
		     .flags = M_PERF),

	OPT_GROUP("ftrace (tracefs per-CPU buffers):"),
	OPT_BOOLEAN(
		0, "tracefs", tracefs,
		"record ftrace events only, into a trace.dat (-e names them,\n"
		"-m is the per-CPU buffer size)",
		.flags = M_TRACEFS),
	OPT_CALLBACK(0, "tracefs-event", "SYS:EVENT", opt_tracefs_event,
		     "ftrace events beside the perf events, into\n"
		     "OUTPUT.trace.dat (perfring script merges the two)",
		     .flags = M_PERF),
	OPT_STRING(0, "tracefs-output", tracefs_output, "FILE",
		   "that file instead", .flags = M_PERF | M_TRACEFS_PART),
	OPT_CALLBACK(0, "buffer-size", "SIZE", opt_buffer_size,
		     "per-CPU ftrace buffer size",
		     .flags = M_PERF | M_TRACEFS | M_TRACEFS_PART),
	OPT_CALLBACK(0, "subbuf-size", "SIZE", opt_subbuf_size,
		     "ftrace sub-buffer size (4K, 8K, ...)",
		     .flags = M_PERF | M_TRACEFS | M_TRACEFS_PART),
	OPT_CALLBACK(0, "buffer-percent", "N", opt_buffer_percent,
		     "wake when N% of a buffer is full",
		     .flags = M_PERF | M_TRACEFS | M_TRACEFS_PART),
	OPT_BOOLEAN(0, "no-mmap", no_mmap,
		    "read() trace_pipe_raw instead of mapping it",
		    .flags = M_PERF | M_TRACEFS | M_TRACEFS_PART),

	OPT_GROUP(
		"AUX trace (CoreSight, replayed: no machine here has a trace unit):"),
	OPT_STRING(0, "replay-cs", replay, "DIR|PERF_DATA",
		   "play an OpenCSD snapshot or a cs_etm perf.data\n"
		   "through AUX areas (alone, or beside a COMMAND/-e)",
		   .flags = M_AUX | M_AUX_PART),
	OPT_SIZE(0, "rate", rate, "BYTES/S", "how fast it is played",
		 .flags = M_AUX | M_AUX_PART),
	OPT_CALLBACK(0, "loops", "N", opt_loops, "how many times",
		     .flags = M_AUX | M_AUX_PART),
	OPT_SIZE(0, "chunk", chunk, "SIZE", "in chunks of SIZE",
		 .flags = M_AUX | M_AUX_PART),
	OPT_CALLBACK(0, "replay-cpu", "CPU", opt_replay_cpu, "on which CPU",
		     .flags = M_AUX | M_AUX_PART),
	OPT_CALLBACK(0, "cs-header-version", "1|2", opt_cs_header,
		     "the cs_etm header's version",
		     .flags = M_AUX | M_AUX_PART),
	OPT_CALLBACK_OPTARG('S', "snapshot", "[e]SIZE", opt_snapshot,
			    "snapshot mode: SIGUSR2 takes one (e: at exit too)",
			    .flags = M_AUX),
	OPT_END(),
};
#undef CLI_ARGS

/* Each mode's usage lines; perf mode's help lists every option. */
static const char *const usage_perf[] = {
	"[OPTIONS] [-- COMMAND [ARGS]]",
	"--tracefs -e SYS:EVENT... [OPTIONS] [-- COMMAND [ARGS]]",
	"--replay-cs DIR|PERF_DATA [OPTIONS]",
	NULL,
};
static const char *const usage_tracefs[] = {
	"--tracefs -e SYS:EVENT... [OPTIONS] [-- COMMAND [ARGS]]",
	NULL,
};
static const char *const usage_aux[] = {
	"--replay-cs DIR|PERF_DATA [OPTIONS]",
	"-e cs_etm// | intel_pt// | arm_spe// ... [OPTIONS]",
	NULL,
};

static const struct cli_command record_command = {
	.name = "record",
	.usage = usage_perf,
	.options = record_options,
	.notes =
		"See perfring(1) (man -l docs/perfring.1 in the source tree).\n",
	.in_order = true,
};

void record_help(enum record_mode mode)
{
	struct cli_command c = record_command;

	if (mode == RECORD_TRACEFS)
		c.usage = usage_tracefs;
	else if (mode == RECORD_AUX)
		c.usage = usage_aux;
	c.help_flags = mode == RECORD_TRACEFS ? M_TRACEFS :
		       mode == RECORD_AUX     ? M_AUX :
						0;
	cli_help(&c);
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

/* Whether @mode takes the option of row @i. */
static bool mode_takes(const struct record_args *ra, size_t i)
{
	unsigned f = record_options[i].flags;

	if (ra->mode == RECORD_AUX)
		return f & M_AUX;
	if (ra->mode == RECORD_TRACEFS)
		return f & M_TRACEFS;
	return (f & M_PERF) || (ra->replay && (f & M_AUX_PART));
}

static const char *not_for_mode(const struct record_args *ra)
{
	return ra->mode == RECORD_AUX ?
		       "--%s does not apply to AUX area recording (--replay-cs, cs_etm//...)" :
	       ra->mode == RECORD_TRACEFS ?
		       "--%s does not apply to record --tracefs (use --tracefs-event in a perf recording)" :
	       ra->replay ?
		       "--%s does not apply to AUX trace beside other sources (--replay-cs with a command, -e, --tracefs-event...)" :
		       "--%s does not apply to record of perf events";
}

/* The options given that the mode has no use for: usage errors. */
static void check_mode(const struct record_args *ra, const bool *seen)
{
	for (size_t i = 0; record_options[i].kind != CLI_OPT_END; i++) {
		const struct cli_option *o = &record_options[i];

		if (!seen[i])
			continue;
		if (!mode_takes(ra, i))
			die_usage(not_for_mode(ra), cli_option_name(o));
		if (ra->mode == RECORD_PERF && (o->flags & M_TRACEFS_PART) &&
		    !ra->nr_tracefs_events)
			die_usage("--%s needs --tracefs-event",
				  cli_option_name(o));
	}
}

static bool seen_named(const bool *seen, const char *name)
{
	for (size_t i = 0; record_options[i].kind != CLI_OPT_END; i++)
		if (seen[i] && record_options[i].long_name &&
		    !strcmp(record_options[i].long_name, name))
			return true;
	return false;
}

int record_parse_args(int argc, char **argv, struct record_args *ra)
{
	bool seen[sizeof(record_options) / sizeof(record_options[0])] = {
		false
	};
	int first;

	memset(ra, 0, sizeof(*ra));
	ra->buffer_percent = -1;
	ra->replay_cpu = -1;
	first = cli_parse(&record_command, argc, argv, ra, seen);
	ra->mode = pick_mode(ra, first < argc);
	if (ra->help)
		return -1;
	if (ra->mode == RECORD_PERF && ra->replay)
		for (int i = 0; i < ra->nr_events; i++)
			if (record_aux_event(ra->events[i]))
				die_usage(
					"-e %s: an AUX PMU event is recorded alone; beside other sources the AUX trace is --replay-cs's",
					ra->events[i]);
	check_mode(ra, seen);
	if (ra->mode != RECORD_AUX && !ra->replay && ra->mmap_has_aux)
		die_usage(
			"-m DATA,AUX: the AUX size is for AUX area recording: %s",
			"-m");
	ra->argv = first < argc ? &argv[first] : NULL;
	if (ra->off_cpu_thresh_set && !ra->off_cpu)
		die_usage("--off-cpu-thresh needs --off-cpu%s", "");
	if (ra->off_cpu_mode && !ra->off_cpu)
		die_usage("--off-cpu-mode needs --off-cpu%s", "");
	if (ra->pprof && ra->output && !strcmp(ra->output, "-"))
		die_usage("--pprof reads the recording back: not with -o %s",
			  ra->output);
	if (!ra->nr_push &&
	    (seen_named(seen, "push-every") || seen_named(seen, "label") ||
	     seen_named(seen, "spool") || seen_named(seen, "spool-size")))
		die_usage("--push-every, --label and --spool need --push: %s",
			  "--push");
	if (ra->argv && ra->mode == RECORD_AUX)
		die_usage("record --replay-cs runs no command: %s",
			  argv[first]);
	return -1;
}
