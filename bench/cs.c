// SPDX-License-Identifier: MIT
/* AUX and CoreSight: the AUX path's bytes/s, OpenCSD decode vs trc_pkt_lister. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"

/*
 * aux-replay: sustained AUX trace bytes/s through the whole AUX path with
 * no loss: the replay source plays the juno_r1_1 CoreSight trace (64 KiB)
 * 16384 times (1 GiB) in 64 KiB PERF_RECORD_AUX pieces into a 16 MiB AUX
 * area; the recorder drains it into AUXTRACE chunks of a perf.data on
 * tmpfs (/dev/shm).  gb_s: the file is rewritten in place (its tmpfs
 * pages reused, as when recording to the same perf.data again);
 * fresh_gb_s: a new file each run (tmpfs allocates and zeroes every
 * page).  Baseline, same run: memcpy GB/s.  Median of 3.
 */
static double aux_replay_once(const char *out, const char *dir, bool fresh)
{
	struct perfring_record_aux_stats st = { .sz = sizeof(st) };
	struct perfring_record_aux_opts o = {
		.sz = sizeof(o),
		.replay = dir,
		.output = out,
		.loops = 16384,
		.chunk = 65536,
		.aux_bytes = 16u << 20,
		.data_bytes = 1u << 20,
		.control_fd = -1,
		.replay_cpu = -1,
	};
	uint64_t t0;
	int ret;

	if (fresh)
		unlink(out);
	t0 = now_ns();
	ret = perfring_record_aux(&o, &st);
	if (ret)
		die("perfring_record_aux", -ret);
	if (st.lost_bytes || st.aux_bytes != 16384ull * 65536)
		die("aux-replay lost trace", EIO);
	return (double)st.aux_bytes / (double)(now_ns() - t0);
}

void case_aux_replay(void)
{
	const char *data = getenv("CS_DATA");
	const char *out = "/dev/shm/perfring-bench-aux.data";
	double g[REPS], f[REPS], m[REPS];
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/juno_r1_1",
		 data ? data : "test/data");
	for (int i = 0; i < REPS; i++) {
		f[i] = aux_replay_once(out, dir, true);
		g[i] = aux_replay_once(out, dir, false);
		m[i] = memcpy_gbs(0.2);
	}
	unlink(out);
	qsort(g, REPS, sizeof(double), cmp_double);
	qsort(f, REPS, sizeof(double), cmp_double);
	qsort(m, REPS, sizeof(double), cmp_double);
	printf("bench aux-replay gb_s=%.2f fresh_gb_s=%.2f memcpy_gb_s=%.2f bytes=%llu lost=0 aux_mib=16 stat=median\n",
	       g[1], f[1], m[1], 16384ull * 65536);
}

/*
 * cs-decode: the juno_r1_1 OpenCSD snapshot (ETMv4, 6 trace IDs, 64 KiB of
 * CoreSight frames) decoded with its packet and element listing by
 * `perfring decode --snapshot --decode` and by OpenCSD's own
 * `trc_pkt_lister -decode` (same lines), output to /dev/null; wall
 * seconds, best of 3 each; MB/s of trace, instruction ranges per second;
 * ratio = ours / theirs (time).  lib_*: perfring_cs_decode() in this
 * process, without the start-up of a program.
 */
void case_cs_decode(void)
{
	const char *data = getenv("CS_DATA");
	char dir[PATH_MAX];
	char *ours[] = { (char *)cli_path(), "decode", "--snapshot", dir,
			 "--decode",	     "-q",     NULL };
	/* Its listing to one stream only, the log file (it always writes
	 * one; -logstdout alone still writes ./trc_pkt_lister.ppl). */
	char *ref[] = { "trc_pkt_lister", "-ss_dir",   dir, "-decode",
			"-logfilename",	  "/dev/null", NULL };
	struct perfring_cs_stats st = { .sz = sizeof(st) };
	struct perfring_cs_opts co = { .sz = sizeof(co),
				       .snapshot = dir,
				       .decode = true };
	double o = 1e9, r = 1e9, lib = 1e9, w;
	FILE *out;

	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/juno_r1_1",
		 data ? data : "test/data");
	out = fopen("/dev/null", "w");
	if (!out || perfring_cs_decode(&co, out, &st) != 0) {
		printf("bench cs-decode error=decode-failed dir=%s\n", dir);
		if (out)
			fclose(out);
		return;
	}
	/* The library alone, in this process (no start-up): best of 3. */
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = now_ns();

		if (perfring_cs_decode(&co, out, &st) != 0)
			break;
		w = (double)(now_ns() - t0) / 1e9;
		if (w < lib)
			lib = w;
	}
	fclose(out);
	for (int i = 0; i < 3; i++) {
		if (run_measured(ours, NULL, &w) == 0 && w < o)
			o = w;
		if (run_measured(ref, NULL, &w) == 0 && w < r)
			r = w;
	}
	if (o >= 1e9) {
		printf("bench cs-decode error=perfring-decode-failed\n");
		return;
	}
	if (r >= 1e9) {
		printf("bench cs-decode ours_mb_s=%.2f ours_ranges_s=%.0f error=trc_pkt_lister-not-installed\n",
		       (double)st.trace_bytes / 1e6 / o, (double)st.ranges / o);
		return;
	}
	printf("bench cs-decode ours_mb_s=%.2f ref_mb_s=%.2f ratio=%.3f ours_ranges_s=%.0f ref_ranges_s=%.0f ours_s=%.4f ref_s=%.4f lib_mb_s=%.2f lib_s=%.4f trace_bytes=%llu ranges=%llu stat=best\n",
	       (double)st.trace_bytes / 1e6 / o,
	       (double)st.trace_bytes / 1e6 / r, o / r, (double)st.ranges / o,
	       (double)st.ranges / r, o, r, (double)st.trace_bytes / 1e6 / lib,
	       lib, (unsigned long long)st.trace_bytes,
	       (unsigned long long)st.ranges);
}
