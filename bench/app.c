// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

/*
 * emit-vs-lttng and app-sustained: application tracing against LTTng-UST.
 * The traced programs are bench/app_emit.c (perfring_emit of bench:ev
 * {u64 a, b, c}) and bench/lttng_emit.c (the same event through an
 * LTTng-UST tracepoint), built next to this program by `make bench`.
 * Recordings go to /dev/shm (tmpfs), as do the session's rings.
 */
#define APP_OUT "/dev/shm/perfring-bench-app.data"

static char *bench_prog(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		n = 0;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	if (snprintf(buf, len, "%s/%s", slash ? self : ".", name) >= (int)len)
		die("program path", ENAMETOOLONG);
	return buf;
}

/* environ without the variables that start or shape application tracing,
 * plus @add (NULL-terminated "NAME=value" strings). */
static char **app_env(char *const add[])
{
	static const char *const drop[] = {
		"PERFRING_SESSION=", "PERFRING_RING_SIZE=", "PERFRING_MODE=",
		"LTTNG_UST_REGISTER_TIMEOUT="
	};
	size_t n = 0, k = 0, j = 0;
	char **v;

	while (environ[n])
		n++;
	while (add && add[k])
		k++;
	v = calloc(n + k + 1, sizeof(*v));
	if (!v)
		die("calloc", ENOMEM);
	for (size_t i = 0; i < n; i++) {
		bool keep = true;

		for (size_t d = 0; d < sizeof(drop) / sizeof(drop[0]); d++)
			if (!strncmp(environ[i], drop[d], strlen(drop[d])))
				keep = false;
		if (keep)
			v[j++] = environ[i];
	}
	for (size_t i = 0; i < k; i++)
		v[j++] = add[i];
	return v;
}

/* CPU seconds of the last run_capture()'s process and its waited-for
 * children. */
static double capture_cpu_s;

/*
 * Runs @argv (PATH searched) with app_env(@add), its standard output into
 * @out (NUL-terminated, cut at @len), standard error to /dev/null, killed
 * after @timeout_s.  Returns the exit status, or -1.
 */
static int run_capture(char *const argv[], char *const add[], char *out,
		       size_t len, int timeout_s)
{
	posix_spawn_file_actions_t fa;
	uint64_t deadline = now_ns() + (uint64_t)timeout_s * 1000000000ull;
	char **env = app_env(add);
	struct rusage ru;
	size_t got = 0;
	int pfd[2], status, err;
	pid_t pid;

	out[0] = 0;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(env);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int64_t left = (int64_t)(deadline - now_ns()) / 1000000;
		ssize_t n;
		char junk[256];

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, (int)(left > 1000 ? 1000 : left)) <= 0)
			continue;
		if (got + 1 < len)
			n = read(pfd[0], out + got, len - 1 - got);
		else
			n = read(pfd[0], junk, sizeof(junk));
		if (n <= 0)
			break;
		if (got + 1 < len) {
			got += (size_t)n;
			out[got] = 0;
		}
	}
	close(pfd[0]);
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	capture_cpu_s =
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The number after "@key" in @text (-1 if absent). */
static double key_value(const char *text, const char *key)
{
	const char *p = text;
	size_t kl = strlen(key);

	while ((p = strstr(p, key))) {
		if (p == text || p[-1] == ' ' || p[-1] == '\n')
			return strtod(p + kl, NULL);
		p += kl;
	}
	return -1;
}

/* The 1-minute load average: this VM's 2 vCPUs are shared. */
static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static double app_out_bytes; /* size of the last app_record()'s file */

/* One `perfring record -o APP_OUT -- app_emit ARGS` with @ring bytes per
 * ring and PERFRING_MODE @mode (NULL: drop); the app's line into @out. */
static bool app_compress; /* record -z */

static int app_record(char *const app_args[], const char *ring,
		      const char *mode, char *out, size_t len)
{
	char *argv[17], rs[64], md[64], *add[3] = { NULL, NULL, NULL };
	int n = 0, a = 0, ret;
	struct stat st;

	argv[n++] = (char *)cli_path();
	argv[n++] = "record";
	argv[n++] = "-q";
	if (app_compress)
		argv[n++] = "-z";
	argv[n++] = "-o";
	argv[n++] = APP_OUT;
	argv[n++] = "--";
	while (app_args[a] && n < 15)
		argv[n++] = app_args[a++];
	argv[n] = NULL;
	snprintf(rs, sizeof(rs), "PERFRING_RING_SIZE=%s", ring);
	add[0] = rs;
	/* (the recorder's default for its command is block) */
	snprintf(md, sizeof(md), "PERFRING_MODE=%s", mode ? mode : "drop");
	add[1] = md;
	ret = run_capture(argv, add, out, len, 120);
	app_out_bytes = stat(APP_OUT, &st) == 0 ? (double)st.st_size : 0;
	unlink(APP_OUT);
	return ret;
}

/* ---- LTTng-UST: a private lttng-sessiond ---- */

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static uint64_t tree_bytes;

static int add_entry(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F)
		tree_bytes += (uint64_t)st->st_size;
	return 0;
}

static int lt_cmd(char *const argv[], char *out, size_t len)
{
	char junk[4096];

	return run_capture(argv, NULL, out ? out : junk,
			   out ? len : sizeof(junk), 60);
}

/*
 * In a child process: starts lttng-sessiond --daemonize with LTTNG_HOME in
 * a fresh directory on /dev/shm (as root, in a private mount namespace
 * with its own tmpfs on /run and /dev/shm, so that the daemon's
 * /run/lttng is not the system's), records @n events of bench_lttng_emit in a per-user UST
 * channel of 8 x 4 MiB sub-buffers (discard mode) into that directory,
 * reads the discarded count from `lttng list`, destroys the session and
 * stops the daemon.  Writes "ns= lost= events= trace_mb=" or "error=" to
 * @fd.
 */
static int lttng_child(const char *app, const char *n, int fd)
{
	char home[] = "/dev/shm/perfring-bench-lttng-XXXXXX";
	char trace[PATH_MAX], pidfile[PATH_MAX], arg_out[PATH_MAX + 16];
	char out[8192], res[512], buf[64];
	char *sess = "perfring-bench";
	char *c_daemon[] = { "lttng-sessiond", "--daemonize", "--no-kernel",
			     NULL };
	char *c_create[] = { "lttng", "create", sess, arg_out, NULL };
	char *c_chan[] = {
		"lttng", "enable-channel", "-u", "-s", sess, "--subbuf-size",
		"4M",	 "--num-subbuf",   "8",	 "ch", NULL
	};
	char *c_event[] = { "lttng", "enable-event", "-u", "-s",
			    sess,    "-c",	     "ch", "perfring_bench:ev",
			    NULL };
	char *c_start[] = { "lttng", "start", sess, NULL };
	char *c_stop[] = { "lttng", "stop", sess, NULL };
	char *c_list[] = { "lttng", "list", sess, "-c", "ch", NULL };
	char *c_destroy[] = { "lttng", "destroy", sess, NULL };
	char *c_app[] = { (char *)app, (char *)n, NULL };
	char *app_add[] = { "LTTNG_UST_REGISTER_TIMEOUT=-1", NULL };
	const char *err = NULL;
	double ns = -1, lost = -1, first = -1;
	pid_t daemon = 0;
	FILE *f;

	if (geteuid() == 0) {
		/* Private /run (the daemon's /run/lttng) and /dev/shm (the
		 * apps' lttng-ust-wait files, our trace): gone with us. */
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("perfring-bench", "/run", "tmpfs", 0, "mode=0755") ||
		    mount("perfring-bench", "/dev/shm", "tmpfs", 0,
			  "mode=1777")) {
			dprintf(fd, "error=cannot-isolate-lttng-sessiond(%s)",
				strerror(errno));
			return 1;
		}
		snprintf(pidfile, sizeof(pidfile),
			 "/run/lttng/lttng-sessiond.pid");
	}
	if (!mkdtemp(home)) {
		dprintf(fd, "error=mkdtemp");
		return 1;
	}
	if (geteuid() != 0)
		snprintf(pidfile, sizeof(pidfile),
			 "%s/.lttng/lttng-sessiond.pid", home);
	snprintf(trace, sizeof(trace), "%s/trace", home);
	snprintf(arg_out, sizeof(arg_out), "--output=%s", trace);
	setenv("LTTNG_HOME", home, 1);
	setenv("HOME", home, 1);
	/* the daemonized sessiond becomes our child: we reap it */
	prctl(PR_SET_CHILD_SUBREAPER, 1ul);
	if (lt_cmd(c_daemon, NULL, 0)) {
		err = "lttng-sessiond-failed(is lttng-tools installed?)";
		goto out;
	}
	f = fopen(pidfile, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			daemon = (pid_t)atoi(buf);
		fclose(f);
	}
	if (lt_cmd(c_create, NULL, 0) || lt_cmd(c_chan, NULL, 0) ||
	    lt_cmd(c_event, NULL, 0) || lt_cmd(c_start, NULL, 0)) {
		err = "lttng-session-setup-failed";
		goto out;
	}
	if (run_capture(c_app, app_add, out, sizeof(out), 300) == 0) {
		ns = key_value(out, "ns=");
		first = key_value(out, "first_ms=");
	}
	lt_cmd(c_stop, NULL, 0);
	if (lt_cmd(c_list, out, sizeof(out)) == 0 &&
	    strstr(out, "Discarded events:"))
		lost = strtod(strstr(out, "Discarded events:") + 17, NULL);
	tree_bytes = 0;
	nftw(trace, add_entry, 8, FTW_PHYS);
	lt_cmd(c_destroy, NULL, 0);
	if (ns < 0)
		err = "lttng-app-failed";
	else if (lost < 0)
		err = "no-discarded-count";
out:
	if (daemon > 0) {
		uint64_t t0 = now_ns();

		kill(daemon, SIGTERM);
		while (waitpid(daemon, NULL, WNOHANG) == 0 &&
		       now_ns() - t0 < 5000000000ull)
			usleep(10000);
		if (kill(daemon, 0) == 0) {
			kill(daemon, SIGKILL);
			waitpid(daemon, NULL, 0);
		}
	}
	while (waitpid(-1, NULL, WNOHANG) > 0) /* its consumer daemons */
		;
	nftw(home, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	if (err)
		snprintf(res, sizeof(res), "error=%s", err);
	else
		snprintf(
			res, sizeof(res),
			"ns=%.3f first_ms=%.3f lost=%.0f trace_mb=%.1f daemon=%d",
			ns, first, lost, (double)tree_bytes / 1e6, daemon > 0);
	if (write(fd, res, strlen(res)) < 0)
		return 1;
	return err ? 1 : 0;
}

static int lttng_once(const char *app, const char *n, char *res, size_t len)
{
	size_t got = 0;
	int pfd[2];
	ssize_t r;
	pid_t pid;

	res[0] = 0;
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(pfd[0]);
		_exit(lttng_child(app, n, pfd[1]));
	}
	close(pfd[1]);
	while (got + 1 < len &&
	       (r = read(pfd[0], res + got, len - 1 - got)) > 0)
		got += (size_t)r;
	res[got] = 0;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return strstr(res, "error=") ? -1 : 0;
}

/*
 * emit-vs-lttng: one thread, 10 million events {u64 a, b, c}, the time
 * per event inside the emitting loop (clock_gettime around it / N), with
 * a recorder draining while the program emits, in two configurations:
 *
 *   config=equal  the same buffer memory on both sides: one ring of
 *                 BENCH_APP_RING_EQ (32M) for our thread against LTTng's
 *                 channel of 8 x 4 MiB sub-buffers.  Ours twice: in block
 *                 mode (PERFRING_MODE=block: the producer waits for room,
 *                 nothing is lost, so the time is what the recorder
 *                 sustains) and in the default drop mode (full speed, the
 *                 drops counted).
 *   config=large  our ring as large as it takes to lose nothing without
 *                 waiting (the smallest of 64, 128, ... 1024 MiB, or
 *                 BENCH_APP_RING), as the case measured before: every
 *                 event lands in memory not touched for a long time.
 *
 * Both sides record to /dev/shm (tmpfs; LTTng in a private mount, see
 * lttng_child).  Five runs, all configurations and LTTng interleaved so
 * they see the same machine, each after settle_memory() so that neither
 * side is charged for memory the host has not backed yet; medians, and
 * the worst lost count of each side (ours: perfring_app_stats(); LTTng:
 * `lttng list`'s "Discarded events").  Also on the large line: tsc_ns
 * (perfring_clock_fast_ns() alone), idle_ns (perfring_emit() with no
 * recorder), nodrain_ns (into a session no recorder reads, the ring large
 * enough for every event: the emit path alone), the first event
 * (first_ms: ours makes and prefaults the thread's ring), load1.
 */
#define EVL_RUNS 5

static double ring_bytes(const char *ring)
{
	char *end;
	double v = strtod(ring, &end);

	if (*end == 'K' || *end == 'k')
		v *= 1024;
	else if (*end == 'M' || *end == 'm')
		v *= 1048576;
	else if (*end == 'G' || *end == 'g')
		v *= 1073741824.0;
	return v;
}

struct evl_side {
	const char *ring, *mode;
	double ns[EVL_RUNS], lost;
};

static int evl_ours(struct evl_side *s, int run, char *const emit_args[],
		    double settle)
{
	char out[4096];

	settle_memory((size_t)settle);
	if (app_record(emit_args, s->ring, s->mode, out, sizeof(out)) ||
	    key_value(out, "active=") != 1)
		return -1;
	s->ns[run] = key_value(out, "ns=");
	if (key_value(out, "lost=") > s->lost)
		s->lost = key_value(out, "lost=");
	return 0;
}

static void evl_print(const char *config, const struct evl_side *s, double lm,
		      double ll, double c2c, const char *extra)
{
	double v[EVL_RUNS], om;

	memcpy(v, s->ns, sizeof(v));
	om = median_of(v, EVL_RUNS);
	printf("bench emit-vs-lttng config=%s ours_mode=%s ours_ns=%.2f lttng_ns=%.2f ratio=%.3f ours_lost=%.0f lttng_lost=%.0f ours_ring=%s lttng_subbuf=8x4M c2c_ns=%.0f runs=%d%s stat=median\n",
	       config, s->mode ? s->mode : "drop", om, lm, om / lm, s->lost, ll,
	       s->ring, c2c, EVL_RUNS, extra);
}

void case_emit_vs_lttng(void)
{
	const char *nenv = getenv("BENCH_APP_EVENTS");
	const char *ring_env = getenv("BENCH_APP_RING");
	const char *eq_env = getenv("BENCH_APP_RING_EQ");
	char app[PATH_MAX], lt[PATH_MAX], out[4096], res[512], ring[32];
	char n[32], extra[512];
	char *emit_args[] = { app, "emit", n, NULL };
	double idle[REPS], tsc[EVL_RUNS], lns[EVL_RUNS], c2c[EVL_RUNS];
	double ofirst[EVL_RUNS], lfirst[EVL_RUNS], nodrain[REPS], ll = 0;
	double naive_ns[EVL_RUNS], naive_mev[EVL_RUNS];
	double load = load1(), settle, trace_mb = 0, lm;
	struct evl_side block = { .ring = eq_env && *eq_env ? eq_env : "32M",
				  .mode = "block" };
	struct evl_side drop = { .ring = block.ring };
	struct evl_side large = { .ring = ring };
	unsigned int mib = 64;

	snprintf(n, sizeof(n), "%s",
		 nenv && atoll(nenv) > 0 ? nenv : "10000000");
	bench_prog("bench_app_emit", app, sizeof(app));
	bench_prog("bench_lttng_emit", lt, sizeof(lt));
	for (int i = 0; i < REPS; i++) {
		if (run_capture(emit_args, NULL, out, sizeof(out), 60) ||
		    key_value(out, "active=") != 0) {
			printf("bench emit-vs-lttng error=app-failed app=%s\n",
			       app);
			return;
		}
		idle[i] = key_value(out, "ns=");
	}
	/* the large ring: the smallest that loses nothing */
	if (ring_env && *ring_env) {
		snprintf(ring, sizeof(ring), "%s", ring_env);
	} else {
		for (;; mib *= 2) {
			snprintf(ring, sizeof(ring), "%uM", mib);
			if (app_record(emit_args, ring, NULL, out,
				       sizeof(out)) ||
			    key_value(out, "active=") != 1) {
				printf("bench emit-vs-lttng error=record-failed\n");
				return;
			}
			if (key_value(out, "lost=") == 0 || mib >= 1024)
				break;
		}
	}
	/* what both sides will write: the file (~96 bytes an event in
	 * either format) and the buffers */
	settle = atof(n) * 96 + 2 * ring_bytes(ring);
	if (settle > 6e9)
		settle = 6e9;
	/* a session no recorder reads: the emit path alone (the ring holds
	 * every event) */
	for (int i = 0; i < REPS; i++) {
		char sdir[] = "/dev/shm/perfring-bench-session-XXXXXX";
		char senv[PATH_MAX + 32], renv[64];
		char *add[] = { senv, renv, NULL };

		if (!mkdtemp(sdir)) {
			printf("bench emit-vs-lttng error=mkdtemp\n");
			return;
		}
		snprintf(senv, sizeof(senv), "PERFRING_SESSION=%s", sdir);
		snprintf(renv, sizeof(renv), "PERFRING_RING_SIZE=%s", ring);
		settle_memory((size_t)settle);
		if (run_capture(emit_args, add, out, sizeof(out), 120) ||
		    key_value(out, "active=") != 1)
			nodrain[i] = -1;
		else
			nodrain[i] = key_value(out, "ns=");
		nftw(sdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	}
	/* interleaved, so that every side sees the same machine */
	for (int i = 0; i < EVL_RUNS; i++) {
		c2c[i] = c2c_ns();
		if (evl_ours(&block, i, emit_args, settle) ||
		    evl_ours(&drop, i, emit_args, settle)) {
			printf("bench emit-vs-lttng error=record-failed\n");
			return;
		}
		settle_memory((size_t)settle);
		if (app_record(emit_args, ring, NULL, out, sizeof(out)) ||
		    key_value(out, "active=") != 1) {
			printf("bench emit-vs-lttng error=record-failed\n");
			return;
		}
		large.ns[i] = key_value(out, "ns=");
		tsc[i] = key_value(out, "tsc_ns=");
		ofirst[i] = key_value(out, "first_ms=");
		if (key_value(out, "lost=") > large.lost)
			large.lost = key_value(out, "lost=");
		settle_memory((size_t)settle);
		if (lttng_once(lt, n, res, sizeof(res))) {
			printf("bench emit-vs-lttng ours_ns=%.2f ours_lost=%.0f ring=%s error=%s\n",
			       large.ns[i], large.lost, ring,
			       strstr(res, "error=") ?
				       strstr(res, "error=") + 6 :
				       "lttng-failed");
			return;
		}
		lns[i] = key_value(res, "ns=");
		lfirst[i] = key_value(res, "first_ms=");
		/* the floor: the naive pipeline, same events, same memory */
		settle_memory((size_t)settle);
		if (naive_pipe_run(1, strtoull(n, NULL, 0),
				   (uint64_t)ring_bytes(block.ring),
				   &naive_mev[i], &naive_ns[i])) {
			printf("bench emit-vs-lttng error=naive-pipe-failed\n");
			return;
		}
		trace_mb = key_value(res, "trace_mb=");
		if (key_value(res, "lost=") > ll)
			ll = key_value(res, "lost=");
	}
	lm = median_of(lns, EVL_RUNS);
	{
		double c = median_of(c2c, EVL_RUNS);
		double nv = median_of(naive_ns, EVL_RUNS);

		snprintf(extra, sizeof(extra),
			 " naive_ns=%.2f naive_vs_lttng=%.3f", nv, nv / lm);
		evl_print("equal", &block, lm, ll, c, extra);
		evl_print("equal", &drop, lm, ll, c, extra);
		snprintf(
			extra, sizeof(extra),
			" tsc_ns=%.2f idle_ns=%.2f nodrain_ns=%.2f ours_first_ms=%.1f lttng_first_ms=%.3f events=%s lttng_trace_mb=%.0f out=/dev/shm load1=%.2f",
			median_of(tsc, EVL_RUNS), median3(idle),
			median3(nodrain), median_of(ofirst, EVL_RUNS),
			median_of(lfirst, EVL_RUNS), n, trace_mb, load);
		evl_print("large", &large, lm, ll, c, extra);
	}
}

/*
 * app-sustained: the highest rate at which THREADS producer threads of
 * bench_app_emit emit (each checking the clock every 1024 events and
 * sleeping when ahead) with perfring record writing to /dev/shm and not
 * one event lost (perfring_app_stats), in trials of BENCH_APP_SECS (1 s):
 * a bisection between 0 and max_mev_s, the rate of the whole pipeline with
 * PERFRING_MODE=block (the producers wait for room instead of dropping),
 * measured first.  mev_s is the achieved rate of the best lossless trial;
 * free_mev_s/free_lost_pct: unlimited producers that drop when full;
 * recorder_cpu_ns_per_ev: the recorder's CPU time per event written in the
 * block trial (what bounds mev_s when the recorder has a CPU to itself);
 * tmpfs_write_gb_s: plain write()s of as many bytes as the block trial's
 * file into a new /dev/shm file, and write_bound_mev_s: that divided by
 * the perf.data bytes per event, the ceiling for any recorder writing
 * this format there; vs_write_bound = mev_s / write_bound_mev_s.  Every
 * trial and the write() baseline start after settle_memory(), so that
 * neither is charged for guest memory the host has not backed yet (the
 * write() baseline used to run on memory just freed, at up to 6 GB/s,
 * while a new file on fresh memory measured 0.24 GB/s here).
 * vs_naive = mev_s / the naive pipeline's rate (pipe.c); block_vs_naive =
 * max_mev_s / it: like for like, as the naive producers wait for room too
 * (neither loses an event); naive_consumer_cpu_ns_per_ev: the naive
 * consumer's CPU time per event, the floor under recorder_cpu_ns_per_ev
 * (the same 80 bytes written per event, none of the checks).
 * Rings of BENCH_APP_RING (16M) per thread.
 */
static double sustained_settle; /* bytes settle_memory() touches first */

static double sustained_trial(unsigned int threads, double rate,
			      const char *mode, const char *ring,
			      const char *secs, double *lost, double *attempted,
			      double *rec_ns)
{
	char app[PATH_MAX], t[16], r[32], out[4096];
	char *args[] = { app, "rate", t, r, (char *)secs, NULL };

	bench_prog("bench_app_emit", app, sizeof(app));
	snprintf(t, sizeof(t), "%u", threads);
	snprintf(r, sizeof(r), "%.3f", rate);
	settle_memory((size_t)sustained_settle);
	if (app_record(args, ring, mode, out, sizeof(out)) ||
	    key_value(out, "active=") != 1)
		return -1;
	*lost = key_value(out, "lost=");
	*attempted = key_value(out, "attempted=");
	/* the recorder's CPU: its process and the app's, less the app's */
	*rec_ns = (capture_cpu_s - key_value(out, "cpu_s=")) * 1e9 /
		  key_value(out, "events=");
	return key_value(out, "mev_s=");
}

/* GB/s of write() of @total bytes in 2 MiB pieces into a new file on
 * /dev/shm (what the recorder does), after settle_memory() as every trial:
 * the ceiling of any recorder writing there. */
static double tmpfs_write_gbs(size_t total, double settle)
{
	const char *f = "/dev/shm/perfring-bench-write";
	const size_t chunk = 2u << 20;
	char *buf = malloc(chunk);
	uint64_t t0;
	size_t done = 0;
	int fd;

	if (!buf)
		return 0;
	total = (total + chunk - 1) / chunk * chunk;
	memset(buf, 0x5a, chunk);
	unlink(f);
	settle_memory((size_t)settle);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	t0 = now_ns();
	while (fd >= 0 && done < total &&
	       write(fd, buf, chunk) == (ssize_t)chunk)
		done += chunk;
	t0 = now_ns() - t0;
	if (fd >= 0)
		close(fd);
	unlink(f);
	free(buf);
	return done == total ? (double)total / (double)t0 : 0;
}

void case_app_sustained(void)
{
	const char *ring_env = getenv("BENCH_APP_RING");
	const char *secs_env = getenv("BENCH_APP_SECS");
	const char *ring = ring_env && *ring_env ? ring_env : "16M";
	const char *secs = secs_env && atof(secs_env) > 0 ? secs_env : "1";
	double load = load1();

	for (unsigned int threads = 1; threads <= 2; threads++) {
		double lost, att, max, fr, flost, fatt, lo = 0, hi, rns, fns;
		double sample, wr, c2c = c2c_ns(), file_bytes;
		int trials = 0;

		/* at most ~100 bytes an event at up to 100 M/s, and the
		 * rings */
		sustained_settle = 1e8 * atof(secs) * 100 * threads +
				   2 * threads * ring_bytes(ring);
		if (sustained_settle > 3e9)
			sustained_settle = 3e9;
		max = sustained_trial(threads, 0, "block", ring, secs, &lost,
				      &att, &rns);
		sample = max > 0 && att > 0 ? app_out_bytes / att : 0;
		file_bytes = app_out_bytes;
		fr = sustained_trial(threads, 0, NULL, ring, secs, &flost,
				     &fatt, &fns);
		if (max <= 0 || fr <= 0) {
			printf("bench app-sustained threads=%u error=record-failed\n",
			       threads);
			continue;
		}
		if (flost == 0)
			lo = fr; /* nothing lost at full speed */
		hi = (max > fr ? max : fr) * 1.05;
		for (; trials < 7 && hi - lo > 0.02 * hi; trials++) {
			double mid = (lo + hi) / 2, got;

			got = sustained_trial(threads, mid, NULL, ring, secs,
					      &lost, &att, &fns);
			if (got < 0)
				break;
			if (lost == 0 && got >= 0.97 * mid)
				lo = got > lo ? got : lo;
			else
				hi = mid;
		}
		/* the same bytes as the block trial's file, new memory
		 * settled the same way */
		wr = tmpfs_write_gbs(file_bytes > (64 << 20) ?
					     (size_t)file_bytes :
					     (size_t)64 << 20,
				     sustained_settle);
		/* the floor: the naive pipeline (pipe.c) with as many
		 * producers, rings of the same size, 16 M events in all */
		double nv_mev[REPS], nv_ns[REPS], nv_cons[REPS], bound = 0;

		for (int i = 0; i < REPS; i++) {
			settle_memory((size_t)sustained_settle);
			nv_cons[i] = 0;
			if (naive_pipe_run(threads, 16000000 / threads,
					   (uint64_t)ring_bytes(ring),
					   &nv_mev[i], &nv_ns[i]))
				nv_mev[i] = 0;
			else
				nv_cons[i] = naive_consumer_ns;
		}
		if (sample > 0)
			bound = wr * 1e3 / sample;
		printf("bench app-sustained threads=%u mev_s=%.1f max_mev_s=%.1f free_mev_s=%.1f free_lost_pct=%.1f recorder_cpu_ns_per_ev=%.0f file_bytes_per_ev=%.1f tmpfs_write_gb_s=%.2f write_bound_mev_s=%.1f vs_write_bound=%.2f naive_mev_s=%.1f naive_vs_write_bound=%.2f vs_naive=%.2f block_vs_naive=%.2f naive_consumer_cpu_ns_per_ev=%.1f ring=%s trial_s=%s trials=%d c2c_ns=%.0f out=/dev/shm load1=%.2f baseline=block\n",
		       threads, lo, max, fr,
		       fatt > 0 ? 100.0 * flost / fatt : 0.0, rns, sample, wr,
		       bound, bound > 0 ? lo / bound : 0.0, median3(nv_mev),
		       bound > 0 ? median3(nv_mev) / bound : 0.0,
		       median3(nv_mev) > 0 ? lo / median3(nv_mev) : 0.0,
		       median3(nv_mev) > 0 ? max / median3(nv_mev) : 0.0,
		       median3(nv_cons), ring, secs, trials + 2, c2c, load);
	}
}

/*
 * app-sustained-z: the block-mode pipeline (app-sustained's max_mev_s: the
 * producers wait for room, nothing is lost) with `perfring record -z` and
 * without, one trial each per thread count, then plain write()s into
 * /dev/shm (tmpfs_write_gbs) for the uncompressed write bound:
 * write_bound_mev_s = that / the plain file's bytes per event.  z_mev_s,
 * z_recorder_cpu_ns_per_ev and z_file_bytes_per_ev are the -z trial's;
 * z_vs_write_bound = z_mev_s / write_bound_mev_s.  bench_app_emit's events
 * ({i, thread, i ^ 0x55}) compress far better than most programs' would.
 */
void case_app_sustained_z(void)
{
	const char *ring_env = getenv("BENCH_APP_RING");
	const char *secs_env = getenv("BENCH_APP_SECS");
	const char *ring = ring_env && *ring_env ? ring_env : "16M";
	const char *secs = secs_env && atof(secs_env) > 0 ? secs_env : "1";

	for (unsigned int threads = 1; threads <= 2; threads++) {
		double lost, att, zlost, zatt, rns, zrns, plain, z, wr, bound;
		double plain_bytes, z_bytes, c2c = c2c_ns();

		sustained_settle = 1e8 * atof(secs) * 100 * threads +
				   2 * threads * ring_bytes(ring);
		if (sustained_settle > 3e9)
			sustained_settle = 3e9;
		app_compress = false;
		plain = sustained_trial(threads, 0, "block", ring, secs, &lost,
					&att, &rns);
		plain_bytes = att > 0 ? app_out_bytes / att : 0;
		app_compress = true;
		z = sustained_trial(threads, 0, "block", ring, secs, &zlost,
				    &zatt, &zrns);
		z_bytes = zatt > 0 ? app_out_bytes / zatt : 0;
		app_compress = false;
		if (plain <= 0 || z <= 0 || plain_bytes <= 0) {
			printf("bench app-sustained-z threads=%u error=record-failed\n",
			       threads);
			continue;
		}
		wr = tmpfs_write_gbs(app_out_bytes > (64 << 20) ?
					     (size_t)app_out_bytes :
					     (size_t)64 << 20,
				     sustained_settle);
		bound = wr * 1e3 / plain_bytes;
		printf("bench app-sustained-z threads=%u z_mev_s=%.1f plain_mev_s=%.1f z_lost=%.0f plain_lost=%.0f z_recorder_cpu_ns_per_ev=%.0f plain_recorder_cpu_ns_per_ev=%.0f z_file_bytes_per_ev=%.2f plain_file_bytes_per_ev=%.1f tmpfs_write_gb_s=%.2f write_bound_mev_s=%.1f z_vs_write_bound=%.2f plain_vs_write_bound=%.2f ring=%s trial_s=%s c2c_ns=%.0f out=/dev/shm mode=block\n",
		       threads, z, plain, zlost, lost, zrns, rns, z_bytes,
		       plain_bytes, wr, bound, bound > 0 ? z / bound : 0.0,
		       bound > 0 ? plain / bound : 0.0, ring, secs, c2c);
	}
}
