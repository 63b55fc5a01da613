// SPDX-License-Identifier: MIT
/*
 * perfring_record_aux() judged by the data it plays: the replay source
 * plays real CoreSight trace (the OpenCSD juno_r1_1 and a57_single_step
 * snapshots, simpleperf's perf_etm.data) through per-CPU AUX areas into a
 * perf.data, which is read back with the format layer's own AUXTRACE
 * reader:
 *   - the AUX bytes recorded equal the source trace buffer byte for byte,
 *     chunks contiguous in the AUX stream;
 *   - AUXTRACE_INFO (cs_etm) carries the snapshot's ETM registers and
 *     trace IDs, or exactly the input perf.data's metadata; header
 *     versions 1 and 2;
 *   - with a small area and a rate, hardware-like truncation: lost bytes
 *     and re-enables are counted and what was recorded is still a set of
 *     slices of the source;
 *   - snapshot mode: several 's' commands each give one chunk of the
 *     asked size that is a contiguous slice of the (looped) source;
 *   - beside other sources (perfring_record()'s AUX source): -S,
 *     --overwrite and a PMU event refused; the event's attr has
 *     PERF_SAMPLE_IDENTIFIER, read_format 0 and ids with bit 61 (a
 *     replayed perf.data: its own ids with bit 61), AUXTRACE_INFO follows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "coresight/aux_source.h"
#include "format/auxtrace.h"
#include "format/perf_data.h"
#include "format/perf_reader.h"
#include "sources/source.h"
#include "harness.h"

static char data_dir[512];

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	CHECK(f != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n, "read %s", path);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Concatenates the chunks of @cpu in file order, checking contiguity. */
static unsigned char *aux_stream(struct auxtrace_file *af, uint32_t cpu,
				 size_t *len, bool contiguous)
{
	size_t n = auxtrace_file_nr_chunks(af), total = 0;
	unsigned char *out = NULL;
	uint64_t next = 0;

	for (size_t i = 0; i < n; i++) {
		const struct auxtrace_chunk *c = auxtrace_file_chunk(af, i);

		if (c->cpu != cpu)
			continue;
		if (contiguous)
			CHECK(c->offset == next,
			      "chunk %zu at %llu, expected %llu", i,
			      (unsigned long long)c->offset,
			      (unsigned long long)next);
		out = realloc(out, total + c->size);
		CHECK(out != NULL, "realloc");
		CHECK_EQ(auxtrace_file_read(af, i, 0, out + total, c->size), 0);
		total += c->size;
		next = c->offset + c->size;
	}
	*len = total;
	return out;
}

static void record(struct perfring_record_aux_opts *o,
		   struct perfring_record_aux_stats *st)
{
	int ret;

	st->sz = sizeof(*st);
	ret = perfring_record_aux(o, st);
	CHECK(ret == 0, "perfring_record_aux: %d (%s)", ret, strerror(-ret));
}

static void test_snapshot_dir(const char *tmp)
{
	char dir[600], out[600], buf_path[700];
	struct perfring_record_aux_stats st;
	struct auxtrace_file *af;
	const struct cs_etm_info *ci;
	unsigned char *src, *rec;
	size_t slen, rlen;

	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/juno_r1_1", data_dir);
	snprintf(buf_path, sizeof(buf_path), "%s/cstrace.bin", dir);
	snprintf(out, sizeof(out), "%s/juno.data", tmp);
	PERFRING_OPTS(perfring_record_aux_opts, o, .replay = dir, .output = out,
		      .control_fd = -1, .replay_cpu = -1, .chunk = 3000,
		      .aux_bytes = 16384);
	record(&o, &st);
	CHECK_EQ(auxtrace_file_open(out, &af), 0);
	src = slurp(buf_path, &slen);
	rec = aux_stream(af, 0, &rlen, true);
	CHECK_EQ(rlen, slen);
	CHECK(!memcmp(rec, src, slen),
	      "juno AUX bytes differ from cstrace.bin");
	CHECK_EQ(st.aux_bytes, slen);
	CHECK_EQ(st.lost_bytes, 0);
	/* One PERF_RECORD_AUX per 3000-byte chunk, or more when a chunk
	 * met the end of the free space and went in two pieces. */
	CHECK(st.aux_records >= (slen + 2999) / 3000, "%llu AUX records",
	      (unsigned long long)st.aux_records);
	/* Several chunks: the 16 KiB area was drained while playing. */
	CHECK(auxtrace_file_nr_chunks(af) >= 4, "%zu chunks",
	      auxtrace_file_nr_chunks(af));
	ci = auxtrace_file_cs_etm(af);
	CHECK(ci != NULL, "no cs_etm AUXTRACE_INFO");
	CHECK_EQ(ci->version, 1);
	CHECK_EQ(ci->nr_cpu, 6);
	CHECK_EQ(ci->snapshot, 0);
	for (uint32_t i = 0; i < 6; i++) {
		const struct cs_etm_cpu *c = &ci->cpus[i];

		CHECK_EQ(c->kind, CS_ETM_KIND_ETMV4);
		CHECK_EQ(c->cpu, i);
		CHECK_EQ(c->nr_params, CS_ETMV4_NR_PARAMS);
		CHECK_EQ(c->trace_id, 0x10 + i); /* device_6..11.ini */
		CHECK_EQ(c->configr, 0xC1);
		CHECK_EQ(c->trcidr0, 0x28000EA1);
		CHECK_EQ(c->trcauthstatus, 0xCC);
	}
	free(rec);
	free(src);
	auxtrace_file_close(af);

	/* a57_single_step: ETM4.1 with id:0x.. register names, v2 header. */
	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/a57_single_step",
		 data_dir);
	snprintf(buf_path, sizeof(buf_path), "%s/CSTMC_TRACE_FIFO.bin", dir);
	o.replay = dir;
	o.cs_header_version = 2;
	record(&o, &st);
	CHECK_EQ(auxtrace_file_open(out, &af), 0);
	src = slurp(buf_path, &slen);
	rec = aux_stream(af, 0, &rlen, true);
	CHECK(rlen == slen && !memcmp(rec, src, slen), "a57 bytes");
	ci = auxtrace_file_cs_etm(af);
	CHECK(ci && ci->version == 2 && ci->nr_cpu == 1, "a57 metadata");
	CHECK_EQ(ci->cpus[0].trace_id, 0x10);
	CHECK_EQ(ci->cpus[0].trcidr1, 0x4200F410);
	CHECK(!ci->cpus[0].trace_id_from_hw_id, "real trace ID in v2");
	free(rec);
	free(src);
	auxtrace_file_close(af);
}

static void test_perf_data(const char *tmp)
{
	char in[600], out[600];
	struct perfring_record_aux_stats st;
	struct auxtrace_file *a, *b;
	const struct cs_etm_info *ca, *cb;
	unsigned char *sa, *sb;
	size_t la, lb;
	size_t il, ol;
	const void *ii, *oi;

	snprintf(in, sizeof(in), "%s/simpleperf-etm/perf_etm.data", data_dir);
	snprintf(out, sizeof(out), "%s/sp.data", tmp);
	PERFRING_OPTS(perfring_record_aux_opts, o, .replay = in, .output = out,
		      .control_fd = -1, .replay_cpu = -1);
	record(&o, &st);
	CHECK_EQ(auxtrace_file_open(in, &a), 0);
	CHECK_EQ(auxtrace_file_open(out, &b), 0);
	sa = aux_stream(a, 7, &la, true);
	sb = aux_stream(b, 7, &lb, true);
	CHECK(la > 0 && la == lb && !memcmp(sa, sb, la),
	      "perf_etm.data trace not replayed byte for byte (%zu/%zu)", la,
	      lb);
	/* Same metadata, byte for byte (perf 6.1 layout, version 1). */
	ii = auxtrace_file_info(a, &il, NULL);
	oi = auxtrace_file_info(b, &ol, NULL);
	CHECK(il == ol && !memcmp(ii, oi, il), "AUXTRACE_INFO differs");
	ca = auxtrace_file_cs_etm(a);
	cb = auxtrace_file_cs_etm(b);
	CHECK(ca && cb && ca->nr_cpu == 8 && cb->nr_cpu == 8, "metadata");
	/* The original's four AUX records, then the rest of the trace. */
	CHECK(st.aux_records >= 4, "%llu AUX records",
	      (unsigned long long)st.aux_records);
	free(sa);
	free(sb);
	auxtrace_file_close(a);
	auxtrace_file_close(b);
}

/* A small area, a rate and a slow reader: truncations happen. */
static void test_truncation(const char *tmp)
{
	char dir[600], out[600], buf_path[700];
	struct perfring_record_aux_stats st;
	struct auxtrace_file *af;
	unsigned char *src, *buf;
	size_t slen;

	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/juno_r1_1", data_dir);
	snprintf(buf_path, sizeof(buf_path), "%s/cstrace.bin", dir);
	snprintf(out, sizeof(out), "%s/trunc.data", tmp);
	PERFRING_OPTS(perfring_record_aux_opts, o, .replay = dir, .output = out,
		      .control_fd = -1, .replay_cpu = -1, .chunk = 3000,
		      .aux_bytes = 8192, .rate = 256u << 20, .loops = 64);
	record(&o, &st);
	src = slurp(buf_path, &slen);
	CHECK_EQ(st.played + st.lost_bytes, 64 * slen);
	CHECK(st.aux_bytes == st.played, "recorded %llu of %llu played",
	      (unsigned long long)st.aux_bytes, (unsigned long long)st.played);
	/* Every TRUNCATED (and every begin on a full area) disabled the
	 * area, and the recorder re-enabled it: nothing stays disabled.  At
	 * this rate an 8 KiB area overflows in practice, but a fast enough
	 * recorder may keep up, so only the accounting is required. */
	CHECK(st.enables >= st.truncated, "%llu truncations, %llu re-enables",
	      (unsigned long long)st.truncated, (unsigned long long)st.enables);
	CHECK(!st.lost_bytes || st.enables > 0, "lost but never re-enabled");
	CHECK_EQ(auxtrace_file_open(out, &af), 0);
	buf = malloc(1 << 20);
	CHECK(buf != NULL, "malloc");
	/* No chunk can be larger than the area. */
	for (size_t i = 0; i < auxtrace_file_nr_chunks(af); i++) {
		const struct auxtrace_chunk *c = auxtrace_file_chunk(af, i);

		CHECK(c->size <= 8192 + 7 && c->size > 0, "chunk size %llu",
		      (unsigned long long)c->size);
	}
	printf("truncation: played %llu, lost %llu, %llu truncated, %llu re-enables\n",
	       (unsigned long long)st.played, (unsigned long long)st.lost_bytes,
	       (unsigned long long)st.truncated,
	       (unsigned long long)st.enables);
	free(buf);
	free(src);
	auxtrace_file_close(af);
}

struct trigger {
	int fd;
	int n;
};

static void *snapper(void *arg)
{
	struct trigger *t = arg;
	struct timespec ts = { 0, 150 * 1000 * 1000 };

	for (int i = 0; i < t->n; i++) {
		nanosleep(&ts, NULL);
		CHECK(write(t->fd, "s", 1) == 1, "write");
	}
	nanosleep(&ts, NULL);
	CHECK(write(t->fd, "q", 1) == 1, "write");
	return NULL;
}

static void test_snapshots(const char *tmp)
{
	char dir[600], out[600], buf_path[700];
	struct perfring_record_aux_stats st;
	struct auxtrace_file *af;
	unsigned char *src, *buf;
	size_t slen, n;
	uint64_t prev_end = 0;
	struct trigger t = { .n = 4 };
	pthread_t th;
	int p[2];

	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/juno_r1_1", data_dir);
	snprintf(buf_path, sizeof(buf_path), "%s/cstrace.bin", dir);
	snprintf(out, sizeof(out), "%s/snap.data", tmp);
	CHECK_EQ(pipe(p), 0);
	t.fd = p[1];
	PERFRING_OPTS(perfring_record_aux_opts, o, .replay = dir, .output = out,
		      .control_fd = p[0], .replay_cpu = -1, .chunk = 4096,
		      .aux_bytes = 65536, .rate = 8u << 20, .loops = 1000,
		      .snapshot = true, .snapshot_size = 20000,
		      .snapshot_on_exit = true);
	CHECK_EQ(pthread_create(&th, NULL, snapper, &t), 0);
	record(&o, &st);
	pthread_join(th, NULL);
	CHECK_EQ(st.snapshots, 5); /* four 's' and the exit */
	src = slurp(buf_path, &slen);
	CHECK_EQ(auxtrace_file_open(out, &af), 0);
	CHECK(auxtrace_file_cs_etm(af) && auxtrace_file_cs_etm(af)->snapshot,
	      "snapshot flag in AUXTRACE_INFO");
	n = auxtrace_file_nr_chunks(af);
	CHECK_EQ(n, 5);
	buf = malloc(65536);
	CHECK(buf != NULL, "malloc");
	for (size_t i = 0; i < n; i++) {
		const struct auxtrace_chunk *c = auxtrace_file_chunk(af, i);

		/* 20000 bytes asked: 20000 taken (the area is 64 KiB and
		 * more than that was played), padded to 20000 (8-aligned). */
		CHECK_EQ(c->size, 20000);
		CHECK(c->offset >= prev_end, "snapshot %zu overlaps", i);
		prev_end = c->offset + c->size;
		CHECK_EQ(auxtrace_file_read(af, i, 0, buf, c->size), 0);
		for (uint64_t k = 0; k < c->size; k++)
			CHECK(buf[k] == src[(c->offset + k) % slen],
			      "snapshot %zu byte %llu is not the source's", i,
			      (unsigned long long)k);
	}
	free(buf);
	free(src);
	auxtrace_file_close(af);
	close(p[0]);
	close(p[1]);
}

/* cs_etm.c's AUXTRACE_INFO for ETMv3/PTM, ETMv4 and ETE blocks, read back
 * by the format layer's independent parser. */
static void test_info_kinds(void)
{
	struct pr_cs_etm_cpu cpus[3] = {
		{ .kind = PR_CS_ETMV3,
		  .cpu = 4,
		  .nr_regs = 4,
		  .regs = { 0x1000, 0x12, 0x8c802000, 0x4114f250 } },
		{ .kind = PR_CS_ETMV4,
		  .cpu = 5,
		  .nr_regs = 7,
		  .regs = { 0xc1, 0x14, 0x28000ea1, 0x4100f403, 0x488, 0,
			    0xcc } },
		{ .kind = PR_CS_ETE,
		  .cpu = 6,
		  .nr_regs = 8,
		  .regs = { 0x1, 0x80000016, 0x28000ea1, 0x4100fd03, 0x20001088,
			    0, 0xcc, 0x47705a13 } },
	};
	struct pr_source src = { 0 };
	struct pr_auxtrace_rec *itr;
	struct cs_etm_info ci;
	unsigned char buf[1024];
	size_t n;

	for (uint32_t v = 1; v <= 2; v++) {
		CHECK_EQ(pr_cs_etm_record_new(&src, cpus, 3, 11, v, &itr), 0);
		n = itr->ops->info_priv_size(itr);
		CHECK_EQ(n, 3 + (3 + 4) + (3 + 7) + (3 + 8));
		memset(buf, 0, sizeof(buf));
		struct perf_event_header h = { 70, 0, (uint16_t)(16 + 8 * n) };
		memcpy(buf, &h, 8);
		buf[8] = 3;
		CHECK_EQ(itr->ops->info_fill(itr, (uint64_t *)(buf + 16), n),
			 0);
		CHECK_EQ(cs_etm_info_parse(buf, h.size, &ci), 0);
		CHECK_EQ(ci.version, v);
		CHECK_EQ(ci.pmu_type, 11);
		CHECK_EQ(ci.nr_cpu, 3);
		CHECK_EQ(ci.cpus[0].kind, CS_ETM_KIND_ETMV3);
		CHECK_EQ(ci.cpus[0].magic, CS_ETMV3_MAGIC);
		CHECK_EQ(ci.cpus[0].cpu, 4);
		CHECK_EQ(ci.cpus[0].trace_id, 0x12);
		CHECK_EQ(ci.cpus[0].etmidr, 0x4114f250);
		CHECK_EQ(ci.cpus[1].kind, CS_ETM_KIND_ETMV4);
		CHECK_EQ(ci.cpus[1].magic, CS_ETMV4_MAGIC);
		CHECK_EQ(ci.cpus[1].trace_id, 0x14);
		CHECK_EQ(ci.cpus[1].trcauthstatus, 0xcc);
		CHECK_EQ(ci.cpus[2].kind, CS_ETM_KIND_ETE);
		CHECK_EQ(ci.cpus[2].magic, CS_ETE_MAGIC);
		CHECK_EQ(ci.cpus[2].nr_params, CS_ETE_NR_PARAMS);
		CHECK_EQ(ci.cpus[2].trcdevarch, 0x47705a13);
		CHECK_EQ(ci.cpus[2].trace_id, 0x16);
		/* Bit 31 of TRCTRACEIDR means "from AUX_OUTPUT_HW_ID" in v2. */
		CHECK_EQ(ci.cpus[2].trace_id_from_hw_id, v == 2);
		CHECK(cs_etm_info_by_trace_id(&ci, 0x14) == &ci.cpus[1],
		      "by id");
		cs_etm_info_free(&ci);
		itr->ops->free(itr);
	}
	CHECK_EQ(pr_cs_etm_record_new(&src, cpus, 3, 11, 3, &itr), -EINVAL);
}

static void test_no_pmu(void)
{
	struct perfring_record_aux_stats st = { .sz = sizeof(st) };
	struct stat sb;
	PERFRING_OPTS(perfring_record_aux_opts, o, .event = "cs_etm//",
		      .control_fd = -1, .output = "/nonexistent/x");

	if (stat("/sys/bus/event_source/devices/cs_etm", &sb) == 0)
		return; /* hardware here: not this test's business */
	CHECK_EQ(perfring_record_aux(&o, &st), -ENODEV);
}

/* The attr and AUXTRACE_INFO the source beside others writes: read back. */
static void beside_attr(const char *tmp, const char *replay, uint64_t want_id)
{
	PERFRING_OPTS(perfring_record_aux_opts, o, .replay = replay,
		      .control_fd = -1, .replay_cpu = -1,
		      .aux_bytes = 64 << 10);
	struct auxtrace_file *af;
	struct aux_source *a = NULL;
	struct prd_file *f;
	struct pd_writer *w;
	const struct prd_attr *pa;
	char out[600];
	uint64_t kept;
	int fd;

	snprintf(out, sizeof(out), "%s/beside.data", tmp);
	unlink(out);
	fd = open(out, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "%s: %s", out, strerror(errno));
	CHECK_EQ(aux_source_open(&o, true, &a), 0);
	CHECK_EQ(pd_writer_open(fd, false, 0, NULL, &w), 0);
	CHECK_EQ(aux_source_add_attr(a, w), 0);
	CHECK_EQ(pd_writer_start(w), 0);
	CHECK_EQ(aux_source_write_info(a), 0);
	CHECK_EQ(pd_writer_close(w, &kept), 0);
	aux_source_close(a);
	close(fd);
	CHECK_EQ(prd_open(out, &f), 0);
	CHECK_EQ(prd_nr_attrs(f), 1);
	pa = prd_attr(f, 0);
	CHECK(pa->attr.sample_type & PERF_SAMPLE_IDENTIFIER,
	      "no IDENTIFIER: %llx", (unsigned long long)pa->attr.sample_type);
	CHECK_EQ(pa->attr.read_format, 0);
	CHECK_EQ(pa->attr.sample_id_all, 1);
	CHECK(pa->nr_ids >= 1, "no ids");
	CHECK_EQ(pa->ids[0], want_id);
	prd_close(f);
	CHECK_EQ(auxtrace_file_open(out, &af), 0);
	CHECK(auxtrace_file_cs_etm(af) != NULL, "no cs_etm AUXTRACE_INFO");
	auxtrace_file_close(af);
}

static void test_beside(const char *tmp)
{
	char snap[600], pd[600];
	struct aux_source *a = NULL;
	PERFRING_OPTS(perfring_record_aux_opts, o, .control_fd = -1,
		      .replay_cpu = -1, .replay = snap);

	snprintf(snap, sizeof(snap), "%s/opencsd/snapshots/juno_r1_1",
		 data_dir);
	snprintf(pd, sizeof(pd), "%s/simpleperf-etm/perf_etm.data", data_dir);
	o.snapshot = true;
	CHECK_EQ(aux_source_open(&o, true, &a), -EINVAL);
	aux_source_close(a);
	o.snapshot = false;
	o.overwrite = true;
	CHECK_EQ(aux_source_open(&o, true, &a), -EINVAL);
	aux_source_close(a);
	o.overwrite = false;
	o.replay = NULL;
	o.event = "cs_etm//";
	CHECK_EQ(aux_source_open(&o, true, &a), -EINVAL);
	aux_source_close(a);
	/* Ours: bit 61 + ring; simpleperf's first id, bit 61 set. */
	beside_attr(tmp, snap, 1ull << 61);
	{
		struct prd_file *f;
		uint64_t id;

		CHECK_EQ(prd_open(pd, &f), 0);
		id = prd_attr(f, 0)->ids[0];
		prd_close(f);
		CHECK(!(id >> 61), "simpleperf's id %llx",
		      (unsigned long long)id);
		beside_attr(tmp, pd, id | 1ull << 61);
	}
}

int main(void)
{
	const char *d = getenv("CS_DATA"), *tmp;

	snprintf(data_dir, sizeof(data_dir), "%s", d ? d : "test/data");
	tmp = test_tmpdir("record_aux");
	test_no_pmu();
	test_info_kinds();
	test_snapshot_dir(tmp);
	test_perf_data(tmp);
	test_truncation(tmp);
	test_snapshots(tmp);
	test_beside(tmp);
	printf("test_record_aux: ok\n");
	return 0;
}
