// SPDX-License-Identifier: MIT
/*
 * Stress: the whole AUX path with its threads (the replay source's writer
 * thread, the recorder, a thread sending commands), also under TSan.
 *
 *  1. No rate, a 16 KiB area, the juno_r1_1 trace played 200 times in
 *     chunks of 5000 bytes: the recorder must keep every byte; the AUX
 *     stream read back equals the source repeated, byte for byte.
 *  2. Snapshot mode with a writer running flat out (no rate, free-running
 *     64 KiB area) and a snapshot every few milliseconds for about a
 *     second: each snapshot stops the writer (stop() waits until no write
 *     is in flight), copies the newest 24000 bytes and restarts it; every
 *     snapshot must be a contiguous slice of the repeated source, none
 *     older than the one before.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "format/auxtrace.h"
#include "harness.h"
#include "stress.h"

static char dir[600], buf_path[700];
static unsigned char *src;
static size_t slen;

static void load_source(void)
{
	FILE *f = fopen(buf_path, "rb");

	CHECK(f != NULL, "%s", buf_path);
	src = malloc(1 << 20);
	CHECK(src != NULL, "malloc");
	slen = fread(src, 1, 1 << 20, f);
	fclose(f);
	CHECK(slen > 0, "empty source");
}

static void check_slices(const char *path, bool contiguous, uint64_t *bytes,
			 size_t *chunks)
{
	struct auxtrace_file *af;
	unsigned char *b = malloc(1 << 20);
	uint64_t next = 0;

	CHECK(b != NULL, "malloc");
	CHECK_EQ(auxtrace_file_open(path, &af), 0);
	*bytes = 0;
	*chunks = auxtrace_file_nr_chunks(af);
	for (size_t i = 0; i < *chunks; i++) {
		const struct auxtrace_chunk *c = auxtrace_file_chunk(af, i);

		CHECK(c->size <= (1 << 20), "chunk of %llu",
		      (unsigned long long)c->size);
		/* Snapshots are the newest bytes: they may overlap the
		 * previous one (a starved writer), never go back. */
		if (contiguous)
			CHECK_EQ(c->offset, next);
		else
			CHECK(c->offset + c->size >= next,
			      "snapshot %zu goes back", i);
		CHECK_EQ(auxtrace_file_read(af, i, 0, b, c->size), 0);
		for (uint64_t k = 0; k < c->size; k++)
			CHECK(b[k] == src[(c->offset + k) % slen],
			      "chunk %zu byte %llu", i, (unsigned long long)k);
		next = c->offset + c->size;
		*bytes += c->size;
	}
	auxtrace_file_close(af);
	free(b);
}

struct cmds {
	int fd;
	double secs;
	int sent;
};

static void *commander(void *arg)
{
	struct cmds *c = arg;
	uint64_t end = now_ns() + (uint64_t)(c->secs * 1e9), rng = 7;

	while (now_ns() < end) {
		nap_us(2000 + (unsigned int)(rng_next(&rng) % 8000));
		CHECK(write(c->fd, "s", 1) == 1, "write");
		c->sent++;
	}
	CHECK(write(c->fd, "q", 1) == 1, "write");
	return NULL;
}

int main(void)
{
	const char *d = getenv("CS_DATA"), *tmp = test_tmpdir("stress_aux");
	struct perfring_record_aux_stats st;
	char out[700];
	uint64_t bytes;
	size_t chunks;
	struct cmds c = { .secs = 1.0 };
	pthread_t th;
	int p[2];

	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/juno_r1_1",
		 d ? d : "test/data");
	snprintf(buf_path, sizeof(buf_path), "%s/cstrace.bin", dir);
	load_source();

	/* 1. Backpressure, no loss. */
	snprintf(out, sizeof(out), "%s/full.data", tmp);
	{
		PERFRING_OPTS(perfring_record_aux_opts, o, .replay = dir,
			      .output = out, .control_fd = -1, .replay_cpu = -1,
			      .chunk = 5000, .aux_bytes = 16384, .loops = 200);
		st.sz = sizeof(st);
		CHECK_EQ(perfring_record_aux(&o, &st), 0);
	}
	CHECK_EQ(st.lost_bytes, 0);
	CHECK_EQ(st.aux_bytes, 200 * slen);
	check_slices(out, true, &bytes, &chunks);
	CHECK_EQ(bytes, 200 * slen);
	printf("no rate: %llu bytes in %zu chunks, none lost\n",
	       (unsigned long long)bytes, chunks);

	/* 2. Snapshots of a writer running flat out. */
	snprintf(out, sizeof(out), "%s/snap.data", tmp);
	CHECK_EQ(pipe(p), 0);
	c.fd = p[1];
	{
		PERFRING_OPTS(perfring_record_aux_opts, o, .replay = dir,
			      .output = out, .control_fd = p[0],
			      .replay_cpu = -1, .chunk = 4096,
			      .aux_bytes = 65536, .loops = 1u << 30,
			      .snapshot = true, .snapshot_size = 24000);
		CHECK_EQ(pthread_create(&th, NULL, commander, &c), 0);
		st.sz = sizeof(st);
		CHECK_EQ(perfring_record_aux(&o, &st), 0);
		pthread_join(th, NULL);
	}
	CHECK_EQ(st.snapshots, (uint64_t)c.sent);
	check_slices(out, false, &bytes, &chunks);
	CHECK(chunks > 10 && chunks <= (size_t)c.sent, "%zu snapshots of %d",
	      chunks, c.sent);
	printf("snapshots: %zu of %d taken (%llu bytes), every one a slice of the source; %llu bytes played\n",
	       chunks, c.sent, (unsigned long long)bytes,
	       (unsigned long long)st.played);
	close(p[0]);
	close(p[1]);
	free(src);
	return 0;
}
