// SPDX-License-Identifier: MIT
/*
 * The perf.data reader (src/format/perf_reader.c) and the stats/dump
 * reports, judged by perf itself.
 *
 * 1. Synthetic files written with our writer: a sample with every
 *    sample_type bit perf 6.1 knows, decoded field by field; sample_id_all
 *    trailers; AUXTRACE payloads skipped; unknown record types counted;
 *    FINISHED_ROUND ordering on hand-made rounds, and the queue limit.
 * 2. Files written by the real `perf record` (a plain command, -g, -a
 *    with sched:sched_switch, several -e, --overwrite, pipe mode, -c 1 -e
 *    page-faults) and by `perfring record` (the same kinds, and a one-page
 *    ring that loses events): our per-type counts and per-event samples
 *    equal `perf report --stats`, through the reader and through the text
 *    of report_stats(); time-ordered delivery is non-decreasing; pipe
 *    format through prd_open("-") from a real pipe.
 * 3. Damaged copies: truncated at many offsets, bytes flipped in the
 *    header, the attrs and record sizes, huge sizes and counts: a negative
 *    return and a logged message naming the offset; never a crash (this
 *    runs under ASan+UBSan), and the CLI exits non-zero.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perfring.h"
#include "format/perf_data.h"
#include "format/perf_reader.h"
#include "report/dump.h"
#include "report/stats.h"
#include "harness.h"

static char dir[] = "/tmp/perfring-reader.XXXXXX";
static const char *cli, *wl;

/* ---- log capture ---- */

static char last_err[1024], last_warn[1024];
static int nr_err;

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PERFRING_LOG_ERROR) {
		snprintf(last_err, sizeof(last_err), "%s", msg);
		nr_err++;
	}
	if (level == PERFRING_LOG_WARN)
		snprintf(last_warn, sizeof(last_warn), "%s", msg);
	if (getenv("V"))
		fprintf(stderr, "log: %s\n", msg);
}

static void log_reset(void)
{
	last_err[0] = '\0';
	last_warn[0] = '\0';
	nr_err = 0;
}

static char *path_in(const char *name)
{
	static char p[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;

	CHECK(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(n > 0 ? (size_t)n : 1);
	CHECK(b && fread(b, 1, (size_t)n, f) == (size_t)n, "read %s", path);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void write_all(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");

	CHECK(f && fwrite(b, 1, len, f) == len, "write %s", path);
	fclose(f);
}

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* ---- 1. synthetic files ---- */

static struct perf_event_attr base_attr(uint64_t st)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = st;
	a.sample_period = 1000;
	a.sample_id_all = 1;
	return a;
}

/* A file (or pipe-format file) of one attr and the given records. */
static const char *write_file(const char *name, bool pipe,
			      const struct perf_event_attr *a,
			      const uint64_t *ids, uint32_t nr_ids,
			      const void *recs, size_t len)
{
	const char *p = path_in(name);
	struct pd_writer *w;
	int fd = open(p, O_CREAT | O_TRUNC | O_RDWR, 0600);

	CHECK(fd >= 0, "%s", p);
	CHECK_EQ(pd_writer_open(fd, pipe, 0, NULL, &w), 0);
	CHECK_EQ(pd_writer_add_attr(w, a, "test-event", ids, nr_ids), 0);
	CHECK_EQ(pd_writer_start(w), 0);
	if (len)
		CHECK_EQ(pd_writer_write(w, recs, len), 0);
	CHECK_EQ(pd_writer_finish_round(w), 0);
	CHECK_EQ(pd_writer_close(w, NULL), 0);
	close(fd);
	return p;
}

struct collect {
	int n;
	uint32_t types[64];
	uint64_t times[64];
	struct prd_sample s[8];
	int ns;
	uint32_t payload[64];
};

static int collect_cb(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 64) {
		c->types[c->n] = ev->hdr->type;
		c->times[c->n] = ev->sample ? ev->sample->time : 0;
		c->payload[c->n] = prd_payload_size(f, ev);
		c->n++;
	}
	if (ev->hdr->type == PERF_RECORD_SAMPLE && ev->sample && c->ns < 8)
		c->s[c->ns++] = *ev->sample; /* pointers: checked in the cb */
	return 0;
}

#define ALL_BITS                                                              \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |          \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ |             \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |           \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_RAW |       \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |                   \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | \
	 PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |                    \
	 PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX | PERF_SAMPLE_CGROUP |       \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE)

static bool check_all_bits_sample(const struct prd_sample *s,
				  const unsigned char *rec)
{
	const unsigned char *r = s->read;

	(void)rec;
	CHECK_EQ(s->id, 77);
	CHECK_EQ(s->ip, 0x1111);
	CHECK_EQ(s->pid, 12);
	CHECK_EQ(s->tid, 13);
	CHECK_EQ(s->time, 5000);
	CHECK_EQ(s->addr, 0x2222);
	CHECK_EQ(s->stream_id, 88);
	CHECK_EQ(s->cpu, 3);
	CHECK_EQ(s->period, 1000);
	/* group read: nr 2, enabled, running, {value, id, lost} x 2 */
	CHECK_EQ(s->read_size, 8 * (3 + 2 * 3));
	CHECK_EQ(get64(r), 2);
	CHECK_EQ(get64(r + 8 * 3), 500);
	CHECK_EQ(get64(r + 8 * 4), 77);
	CHECK_EQ(s->nr_callchain, 3);
	CHECK_EQ(s->callchain[0], (uint64_t)-512);
	CHECK_EQ(s->callchain[2], 0x3333);
	CHECK_EQ(s->raw_size, 12);
	CHECK(!memcmp(s->raw, "rawdata-0123", 12), "raw");
	CHECK_EQ(s->nr_branches, 2);
	CHECK_EQ(get64((const unsigned char *)s->branch_stack + 8),
		 1); /* hw_idx */
	CHECK_EQ(get64((const unsigned char *)s->branch_stack + 16 + 24 + 8),
		 0xb1);
	CHECK_EQ(s->regs_user_abi, 2);
	CHECK_EQ(s->nr_regs_user, 2);
	CHECK_EQ(s->regs_user[1], 0x4444);
	CHECK_EQ(s->stack_user_size, 16);
	CHECK_EQ(s->stack_user_dyn_size, 8);
	CHECK(!memcmp(s->stack_user, "stackstackstack!", 16), "stack");
	CHECK_EQ(s->weight, 99);
	CHECK_EQ(s->data_src, 0x5555);
	CHECK_EQ(s->transaction, 0x6666);
	CHECK_EQ(s->regs_intr_abi, 2);
	CHECK_EQ(s->nr_regs_intr, 3);
	CHECK_EQ(s->regs_intr[2], 0x7777);
	CHECK_EQ(s->phys_addr, 0x8888);
	CHECK_EQ(s->cgroup, 42);
	CHECK_EQ(s->data_page_size, 4096);
	CHECK_EQ(s->code_page_size, 2 << 20);
	CHECK_EQ(s->aux_size, 8);
	CHECK(!memcmp(s->aux, "auxbytes", 8), "aux");
	return true;
}

static int all_bits_cb(struct prd_file *f, const struct prd_event *ev,
		       void *ctx)
{
	int *n = ctx;

	(void)f;
	if (ev->hdr->type == PERF_RECORD_SAMPLE) {
		CHECK(ev->sample && ev->sample->attr, "sample decoded");
		check_all_bits_sample(ev->sample,
				      (const unsigned char *)ev->hdr);
		(*n)++;
	}
	return 0;
}

static void test_all_bits(void)
{
	unsigned char rec[1024], *p = rec + 8;
	struct perf_event_attr a = base_attr(ALL_BITS);
	uint64_t ids[] = { 77, 78 };
	struct prd_file *f;
	const char *path;
	int n = 0;

#define P64(v) (put64(p, (uint64_t)(v)), p += 8)
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
			PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY |
			       PERF_SAMPLE_BRANCH_HW_INDEX;
	a.sample_regs_user = 0x5; /* 2 regs */
	a.sample_regs_intr = 0x70; /* 3 regs */
	a.sample_stack_user = 16;
	P64(77); /* identifier */
	P64(0x1111); /* ip */
	put32(p, 12), put32(p + 4, 13), p += 8; /* pid, tid */
	P64(5000); /* time */
	P64(0x2222); /* addr */
	P64(77); /* id */
	P64(88); /* stream_id */
	put32(p, 3), put32(p + 4, 0), p += 8; /* cpu */
	P64(1000); /* period */
	P64(2), P64(10), P64(9); /* read: nr, enabled, running */
	P64(500), P64(77), P64(0);
	P64(600), P64(78), P64(1);
	P64(3), P64(-512), P64(0x3000), P64(0x3333); /* callchain */
	put32(p, 12), memcpy(p + 4, "rawdata-0123", 12), p += 16; /* raw */
	P64(2), P64(1); /* branch nr, hw_idx */
	P64(0xa0), P64(0xa1), P64(0);
	P64(0xb0), P64(0xb1), P64(0);
	P64(2), P64(0x4443), P64(0x4444); /* regs_user */
	P64(16), memcpy(p, "stackstackstack!", 16), p += 16, P64(8); /* stack */
	P64(99); /* weight */
	P64(0x5555); /* data_src */
	P64(0x6666); /* transaction */
	P64(2), P64(0x7775), P64(0x7776), P64(0x7777); /* regs_intr */
	P64(0x8888); /* phys_addr */
	P64(42); /* cgroup */
	P64(4096); /* data page */
	P64(2 << 20); /* code page */
	P64(8), memcpy(p, "auxbytes", 8), p += 8; /* aux */
#undef P64
	put32(rec, PERF_RECORD_SAMPLE);
	put16(rec + 4, 0);
	put16(rec + 6, (uint16_t)(p - rec));

	for (int pipe = 0; pipe < 2; pipe++) {
		path = write_file(pipe ? "allbits.pipe" : "allbits", pipe, &a,
				  ids, 2, rec, (size_t)(p - rec));
		CHECK_EQ(prd_open(path, &f), 0);
		CHECK_EQ(prd_is_pipe(f), pipe);
		CHECK_EQ(prd_nr_attrs(f), 1);
		CHECK(!strcmp(prd_attr(f, 0)->name, "test-event") || pipe,
		      "name %s", prd_attr(f, 0)->name);
		n = 0;
		CHECK_EQ(prd_process(f, false, all_bits_cb, &n), 0);
		CHECK_EQ(n, 1);
		/* read values 500 (id 77) and 600 (id 78, same event): both
		 * moved from 0, so perf counts two samples */
		CHECK_EQ(prd_attr(f, 0)->nr_samples, 2);
		n = 0;
		CHECK_EQ(prd_process(f, true, all_bits_cb, &n), 0);
		CHECK_EQ(n, 1);
		CHECK(!strcmp(prd_attr(f, 0)->name, "test-event"), "name %s",
		      prd_attr(f, 0)->name);
		prd_close(f);
	}
	/* one byte short in the last field: that sample is skipped, named
	 * and counted (perf skips a sample it cannot parse), not an error */
	put16(rec + 6, (uint16_t)(p - rec - 8));
	path = write_file("allbits-short", false, &a, ids, 2, rec,
			  (size_t)(p - rec - 8));
	CHECK_EQ(prd_open(path, &f), 0);
	log_reset();
	n = 0;
	CHECK_EQ(prd_process(f, false, all_bits_cb, &n), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(prd_stats(f)->nr_bad_samples, 1);
	CHECK(strstr(last_warn, "offset 0x") && strstr(last_warn, "aux data") &&
		      strstr(last_warn, "skipped"),
	      "message: %s", last_warn);
	prd_close(f);
}

/* Records with sample_id_all trailers, an AUXTRACE with its payload, an
 * unknown type, LOST and LOST_SAMPLES. */
static void test_trailers_and_payloads(void)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
		      PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
	struct perf_event_attr a = base_attr(st);
	unsigned char b[512], *p = b;
	uint64_t ids[] = { 5 };
	struct collect c;
	struct prd_file *f;
	const char *path;
	const uint64_t *cnt;

	memset(b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	/* COMM: pid, tid, "cmd\0....", trailer (6 words) */
	put32(p, PERF_RECORD_COMM), put16(p + 6, 8 + 16 + 48);
	put32(p + 8, 100), put32(p + 12, 101), memcpy(p + 16, "cmd", 4);
	put32(p + 24, 100), put32(p + 28, 101); /* tid */
	put64(p + 32, 7000); /* time */
	put64(p + 40, 5); /* id */
	put64(p + 48, 6); /* stream */
	put32(p + 56, 1); /* cpu */
	put64(p + 64, 5); /* identifier */
	p += 72;
	/* AUXTRACE with 16 payload bytes after it (framed like a record for
	 * our writer, which knows nothing of payloads; the reader skips it) */
	put32(p, 71), put16(p + 6, 48), put64(p + 8, 16);
	memset(p + 48, 0xee, 16);
	put16(p + 48 + 6, 16);
	p += 64;
	/* unknown type 99 */
	put32(p, 99), put16(p + 6, 16);
	p += 16;
	/* LOST {id, lost} + trailer */
	put32(p, PERF_RECORD_LOST), put16(p + 6, 8 + 16 + 48);
	put64(p + 8, 5), put64(p + 16, 33), put64(p + 32, 7100);
	put64(p + 40, 5), put64(p + 64, 5);
	p += 72;
	/* LOST_SAMPLES {lost} + trailer */
	put32(p, PERF_RECORD_LOST_SAMPLES), put16(p + 6, 8 + 8 + 48);
	put64(p + 8, 44), put64(p + 24, 7200), put64(p + 32, 5);
	put64(p + 56, 5);
	p += 64;

	path = write_file("trailers", false, &a, ids, 1, b, (size_t)(p - b));
	CHECK_EQ(prd_open(path, &f), 0);
	CHECK_EQ(prd_process(f, false, collect_cb, &c), 0);
	/* the writer's first checkpoint (an empty round; its table record,
	 * a COMM of the checkpoint task, is not handed over), the records,
	 * the round that ends them (and its table, not handed over) */
	CHECK_EQ(c.n, 7);
	CHECK_EQ(c.types[0], PRD_REC_FINISHED_ROUND);
	CHECK_EQ(c.types[1], PERF_RECORD_COMM);
	CHECK_EQ(c.times[1], 7000);
	CHECK_EQ(c.payload[1], 24); /* COMM without its trailer */
	CHECK_EQ(c.types[2], 71);
	CHECK_EQ(c.types[3], 99);
	CHECK_EQ(c.types[6], PRD_REC_FINISHED_ROUND);
	cnt = prd_type_counts(f);
	CHECK_EQ(cnt[0], 1);
	CHECK_EQ(cnt[71], 1);
	/* counted as perf counts them: the two table records too */
	CHECK_EQ(cnt[PERF_RECORD_COMM], 3);
	CHECK_EQ(prd_stats(f)->nr_lost, 33);
	CHECK_EQ(prd_stats(f)->nr_lost_records, 1);
	CHECK_EQ(prd_stats(f)->nr_lost_samples, 44);
	CHECK_EQ(prd_attr_lost_samples(f, 0), 44);
	CHECK_EQ(prd_stats(f)->nr_unknown_type, 1);
	CHECK_EQ(prd_stats(f)->nr_records, 9);
	prd_close(f);

	/* dump's view: every record, the table records (time 0, pid and
	 * tid -2) included */
	CHECK_EQ(prd_open(path, &f), 0);
	prd_show_checkpoints(f);
	memset(&c, 0, sizeof(c));
	CHECK_EQ(prd_process(f, false, collect_cb, &c), 0);
	CHECK_EQ(c.n, 9);
	CHECK_EQ(c.types[1], PERF_RECORD_COMM);
	CHECK_EQ(c.types[8], PERF_RECORD_COMM);
	CHECK(c.times[1] == 0 && c.times[8] == 0, "table records' times");
	prd_close(f);

	/* The same stream, with the trailer fields checked in the callback. */
	path = write_file("trailers.pipe", true, &a, ids, 1, b,
			  (size_t)(p - b));
	CHECK_EQ(prd_open(path, &f), 0);
	memset(&c, 0, sizeof(c));
	CHECK_EQ(prd_process(f, true, collect_cb, &c), 0);
	CHECK(prd_feature_string(f, PRD_FEAT_OSRELEASE), "pipe feature");
	CHECK(prd_has_feature(f, PRD_FEAT_HOSTNAME), "pipe feature");
	prd_close(f);
}

/* Hand-made rounds: perf's two-round flush rule. */
static void test_rounds(void)
{
	struct perf_event_attr a = base_attr(PERF_SAMPLE_TIME);
	static const uint64_t t[] = { 10, 30, 20, 0, 25, 40, 5 };
	static const int round_after[] = { 3, 6 }; /* FINISHED_ROUND after */
	unsigned char b[512], *p = b;
	struct collect c;
	struct prd_file *f;
	const char *path;
	uint64_t id = 1;

	a.sample_id_all = 0;
	for (int i = 0; i < 7; i++) {
		put32(p, PERF_RECORD_SAMPLE), put16(p + 4, 0), put16(p + 6, 16);
		put64(p + 8, t[i]);
		p += 16;
		if (i + 1 == round_after[0] || i + 1 == round_after[1]) {
			put32(p, PRD_REC_FINISHED_ROUND), put16(p + 4, 0);
			put16(p + 6, 8);
			p += 8;
		}
	}
	path = write_file("rounds", false, &a, &id, 1, b, (size_t)(p - b));
	CHECK_EQ(prd_open(path, &f), 0);
	memset(&c, 0, sizeof(c));
	CHECK_EQ(prd_process(f, true, collect_cb, &c), 0);
	/*
	 * The writer's first checkpoint: a round with nothing in it (its
	 * table record is not handed over).  Round 1 (10 30 20): nothing flushed (limit 0), limit := 30.  Then
	 * 0 (no time) at once; round 2 (25 40): flush <= 30 -> 10 20 25 30,
	 * limit := 40.  Then 5 (late: out of order), the writer's final
	 * round: flush <= 40 -> 5 40.  End: nothing left.
	 */
	{
		static const uint64_t want[] = { 0,  0, 0, 10, 20, 25,
						 30, 0, 5, 40, 0 };
		static const uint32_t wtype[] = { 68, 68, 9, 9, 9, 9,
						  9,  68, 9, 9, 68 };

		CHECK_EQ(c.n, 11);
		for (int i = 0; i < 11; i++) {
			CHECK(c.times[i] == want[i] && c.types[i] == wtype[i],
			      "delivery %d: time %llu type %u", i,
			      (unsigned long long)c.times[i], c.types[i]);
		}
	}
	CHECK_EQ(prd_stats(f)->nr_unordered, 1);
	/* file order */
	memset(&c, 0, sizeof(c));
	CHECK_EQ(prd_process(f, false, collect_cb, &c), 0);
	CHECK_EQ(c.times[1], 10);
	CHECK_EQ(c.times[2], 30);
	prd_close(f);
}

static int order_cb(struct prd_file *f, const struct prd_event *ev, void *ctx);

/* A round bigger than the queue limit: flushed early, nothing lost. */
static void test_queue_limit(void)
{
	struct perf_event_attr a = base_attr(PERF_SAMPLE_TIME);
	size_t n = 40000, len = n * 16;
	unsigned char *b = malloc(len);
	uint64_t ord[3] = { 0, 0, 0 };
	struct prd_file *f;
	const char *path;
	uint64_t id = 1;

	a.sample_id_all = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = b + 16 * i;

		put32(p, PERF_RECORD_SAMPLE), put16(p + 4, 0), put16(p + 6, 16);
		put64(p + 8, 1000 + (i * 7919) % n);
	}
	path = write_file("biground", false, &a, &id, 1, b, len);
	free(b);
	CHECK_EQ(prd_open(path, &f), 0);
	prd_set_queue_limit(f, 64 << 10);
	CHECK_EQ(prd_process(f, true, order_cb, ord), 0);
	CHECK_EQ(prd_attr(f, 0)->nr_samples, n);
	CHECK_EQ(ord[2], n + 2); /* every sample, the round, the start's */
	CHECK(prd_stats(f)->nr_early_flushes > 0, "no early flush");
	prd_close(f);
}

/* ---- 2. real files against perf report --stats ---- */

struct counts {
	uint64_t type[128];
	uint64_t total;
	int nev;
	char ev[16][128];
	uint64_t samples[16], lost_samples[16];
};

static int type_of(const char *name)
{
	for (int t = 1; t < 128; t++)
		if (prd_type_name(t) && !strcmp(prd_type_name(t), name))
			return t;
	return -1;
}

/* Parses perf report --stats text (or ours, which prints the same). */
static void parse_stats(FILE *in, struct counts *c)
{
	char line[512], name[128];
	unsigned long long v;
	int cur = -1;
	bool agg = false;

	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), in)) {
		size_t l = strlen(line);

		if (l && line[l - 1] == '\n')
			line[--l] = '\0';
		if (!strcmp(line, "Aggregated stats:") ||
		    !strncmp(line, "Aggregated stats: ", 18)) {
			agg = true;
			continue;
		}
		if (l > 7 && !strcmp(line + l - 7, " stats:") && c->nev < 16) {
			cur = c->nev++;
			snprintf(c->ev[cur], sizeof(c->ev[cur]), "%.*s",
				 (int)(l - 7), line);
			agg = false;
			continue;
		}
		if (sscanf(line, " %127s events: %llu", name, &v) != 2)
			continue;
		if (agg) {
			int t = type_of(name);

			if (!strcmp(name, "TOTAL"))
				c->total = v;
			else if (t > 0)
				c->type[t] = v;
		} else if (cur >= 0 && !strcmp(name, "SAMPLE")) {
			c->samples[cur] = v;
		} else if (cur >= 0 && !strcmp(name, "LOST_SAMPLES")) {
			c->lost_samples[cur] = v;
		}
	}
}

static void perf_stats(const char *file, struct counts *c)
{
	char cmd[1024];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf report --stats -i '%s' 2>/dev/null",
		 file);
	p = popen(cmd, "r");
	CHECK(p, "popen");
	parse_stats(p, c);
	pclose(p);
}

static int order_cb(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	uint64_t *st = ctx; /* [0] last time, [1] decreases, [2] records */

	(void)f;
	st[2]++;
	if (ev->hdr->type == PERF_RECORD_SAMPLE && ev->sample &&
	    ev->sample->time) {
		if (ev->sample->time < st[0])
			st[1]++;
		st[0] = ev->sample->time;
	}
	return 0;
}

/* Counts perfring's checkpoint records (a file perfring recorded). */
static int ckpt_cb(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	(void)f;
	*(uint64_t *)ctx += prd_is_checkpoint_record(ev->hdr, ev->hdr->size);
	return 0;
}

/* Our counts (reader and report_stats text) equal perf's for @file. */
static void compare_with_perf(const char *file, bool expect_lost)
{
	struct counts pc, oc;
	struct prd_file *f;
	const uint64_t *cnt;
	uint64_t ord[3] = { 0, 0, 0 }, sum = 0, nckpt = 0;
	char *text = NULL;
	size_t tlen = 0;
	FILE *m;
	int ret;

	perf_stats(file, &pc);
	CHECK(pc.total > 0, "%s: perf report --stats printed nothing", file);

	CHECK_EQ(prd_open(file, &f), 0);
	CHECK_EQ(prd_process(f, false, NULL, NULL), 0);
	cnt = prd_type_counts(f);
	CHECK(prd_stats(f)->nr_records == pc.total, "%s: total %llu, perf %llu",
	      file, (unsigned long long)prd_stats(f)->nr_records,
	      (unsigned long long)pc.total);
	for (int t = 1; t < 128; t++)
		CHECK(cnt[t] == pc.type[t], "%s: %s: %llu, perf %llu", file,
		      prd_type_name(t) ? prd_type_name(t) : "?",
		      (unsigned long long)cnt[t],
		      (unsigned long long)pc.type[t]);
	for (int i = 0; i < pc.nev; i++) {
		bool found = false;

		for (uint32_t k = 0; k < prd_nr_attrs(f); k++) {
			const struct prd_attr *a = prd_attr(f, k);

			if (strcmp(a->name, pc.ev[i]))
				continue;
			found = true;
			CHECK(a->nr_samples == pc.samples[i] &&
				      prd_attr_lost_samples(f, k) ==
					      pc.lost_samples[i],
			      "%s: %s: %llu samples %llu lost, perf %llu %llu",
			      file, a->name, (unsigned long long)a->nr_samples,
			      (unsigned long long)prd_attr_lost_samples(f, k),
			      (unsigned long long)pc.samples[i],
			      (unsigned long long)pc.lost_samples[i]);
		}
		CHECK(found, "%s: perf's event %s not among ours", file,
		      pc.ev[i]);
		sum += pc.samples[i];
	}
	CHECK(sum > 0, "%s: no samples", file);
	if (expect_lost && !pc.type[PERF_RECORD_LOST])
		fprintf(stderr, "note: %s: no LOST records this time\n", file);
	CHECK(prd_stats(f)->nr_lost_records == pc.type[PERF_RECORD_LOST],
	      "%s: LOST records", file);

	/* time order: samples never go back unless counted out of order */
	CHECK_EQ(prd_process(f, true, order_cb, ord), 0);
	CHECK(ord[1] <= prd_stats(f)->nr_unordered,
	      "%s: %llu samples went back in time, %llu counted out of order",
	      file, (unsigned long long)ord[1],
	      (unsigned long long)prd_stats(f)->nr_unordered);
	/* every record but the checkpoint's (perf counts those too) */
	prd_show_checkpoints(f);
	CHECK_EQ(prd_process(f, false, ckpt_cb, &nckpt), 0);
	CHECK_EQ(ord[2] + nckpt, pc.total);
	prd_close(f);

	/* the text of report_stats() says the same */
	m = open_memstream(&text, &tlen);
	ret = report_stats(file, m);
	fclose(m);
	CHECK_EQ(ret, 0);
	m = fmemopen(text, tlen, "r");
	parse_stats(m, &oc);
	fclose(m);
	CHECK(!memcmp(oc.type, pc.type, sizeof(oc.type)) &&
		      oc.total == pc.total && oc.nev == pc.nev,
	      "%s: report_stats text differs from perf's:\n%s", file, text);
	for (int i = 0; i < pc.nev; i++)
		CHECK(!strcmp(oc.ev[i], pc.ev[i]) &&
			      oc.samples[i] == pc.samples[i],
		      "%s: event %s", file, pc.ev[i]);
	free(text);
	fprintf(stderr, "ok: %s: %llu records, %llu samples, as perf\n", file,
		(unsigned long long)pc.total, (unsigned long long)sum);
}

/* Lines of @cmd's output that hold @what. */
static uint64_t count_lines(const char *cmd, const char *what)
{
	char line[4096];
	uint64_t n = 0;
	FILE *p = popen(cmd, "r");

	CHECK(p, "popen %s", cmd);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, what))
			n++;
	pclose(p);
	return n;
}

/* `perfring dump` prints a line per record, and the samples perf report
 * -D prints. */
static void compare_dump(const char *file, uint64_t records)
{
	char cmd[1024];
	uint64_t ours, theirs;

	snprintf(cmd, sizeof(cmd), "%s dump -i '%s'", cli, file);
	CHECK_EQ(count_lines(cmd, "]: PERF_RECORD_"), records);
	ours = count_lines(cmd, "PERF_RECORD_SAMPLE(");
	snprintf(cmd, sizeof(cmd), "perf report -D -i '%s' 2>/dev/null", file);
	theirs = count_lines(cmd, "PERF_RECORD_SAMPLE(");
	CHECK(ours == theirs && ours > 0,
	      "%s: dump has %llu samples, perf -D %llu", file,
	      (unsigned long long)ours, (unsigned long long)theirs);
}

/* prd_open("-") on a pipe that a child fills from @file. */
static void read_from_pipe(const char *file, uint64_t want_records)
{
	int fds[2], saved = dup(0);
	struct prd_file *f;
	pid_t pid;
	int st;

	CHECK_EQ(pipe(fds), 0);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		size_t len;
		unsigned char *b = read_all(file, &len);
		size_t off = 0;

		close(fds[0]);
		while (off < len) {
			ssize_t n = write(fds[1], b + off, len - off);

			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	CHECK_EQ(dup2(fds[0], 0), 0);
	close(fds[0]);
	CHECK_EQ(prd_open("-", &f), 0);
	CHECK(prd_is_pipe(f), "pipe format");
	CHECK_EQ(prd_process(f, true, NULL, NULL), 0);
	CHECK_EQ(prd_stats(f)->nr_records, want_records);
	CHECK_EQ(prd_process(f, false, NULL, NULL), -EINVAL); /* once */
	prd_close(f);
	CHECK_EQ(dup2(saved, 0), 0);
	close(saved);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "writer");
}

/* ---- 3. damage ---- */

/* Opens and processes @path both ways: returns the first error (0 if
 * none) and checks that any error logged names an offset or says what is
 * unsupported. */
static int try_read(const char *path)
{
	struct prd_file *f;
	int ret, r2;

	log_reset();
	ret = prd_open(path, &f);
	if (!ret) {
		ret = prd_process(f, false, NULL, NULL);
		r2 = prd_process(f, true, order_cb, (uint64_t[3]){ 0, 0, 0 });
		CHECK(r2 == ret, "%s: ordered %d, unordered %d", path, r2, ret);
		prd_close(f);
	}
	if (ret) {
		CHECK(nr_err > 0, "%s: error %d without a message", path, ret);
		CHECK(strstr(last_err, "offset") || ret == -EPROTO ||
			      strstr(last_err, "magic") ||
			      strstr(last_err, "too short") ||
			      strstr(last_err, "empty"),
		      "%s: message names no offset: %s", path, last_err);
	}
	return ret;
}

static void test_truncations(const char *file, bool pipe)
{
	size_t len, step;
	unsigned char *b = read_all(file, &len);
	const char *t = path_in("trunc");
	int bad = 0, runs = 0;
	/* a file cut after its data keeps every record: only its feature
	 * sections are gone, which perf (and we) warn about and ignore */
	uint64_t data_end = pipe ? len : get64(b + 40) + get64(b + 48);

	step = len / 97 + 1;
	for (size_t cut = 0; cut < len; cut += step) {
		int ret;

		write_all(t, b, cut);
		ret = try_read(t);
		runs += cut < data_end;
		if (ret)
			bad++;
		else
			CHECK(pipe || cut >= data_end,
			      "%s cut at %zu: no error", file, cut);
	}
	/* a pipe stream cut at a record boundary is complete as far as
	 * anyone can tell; cut inside one, it is an error */
	CHECK(bad >= runs * 3 / 4, "%s: only %d of %d truncations failed", file,
	      bad, runs);
	free(b);
}

static void test_corruptions(const char *file)
{
	size_t len;
	unsigned char *b = read_all(file, &len), *x = malloc(len);
	const char *t = path_in("corrupt");
	uint64_t aoff = get64(b + 24), doff = get64(b + 40);
	uint64_t dsize = get64(b + 48);
	uint32_t asz = 0;
	unsigned int seed = 1;

	memcpy(&asz, b + aoff + 4, 4);
	struct {
		size_t off;
		int width;
		uint64_t val;
		const char *what;
	} cases[] = {
		{ 0, 8, 0x5045524649464c45ull, "byte-swapped magic" },
		{ 8, 8, 99, "header size" },
		{ 16, 8, 0, "attr_size 0" },
		{ 24, 8, 1ull << 62, "attrs offset" },
		{ 32, 8, 1ull << 40, "attrs size" },
		{ 40, 8, 1ull << 50, "data offset" },
		{ 48, 8, 1ull << 50, "data size" },
		{ 48, 8, ~0ull, "data size overflow" },
		{ aoff + 4, 4, 4096, "attr size" },
		{ aoff + 4, 4, 8, "attr size small" },
		{ aoff + asz, 8, 1ull << 60, "ids offset" },
		{ aoff + asz + 8, 8, ~0ull - 7, "ids size" },
		{ doff + 6, 2, 0, "first record size 0" },
		{ doff + 6, 2, dsize + 8 <= 0xffff ? dsize + 8 : 7,
		  "first record size past the end" },
		{ doff + 6, 2, 4, "first record size 4" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(x, b, len);
		if (cases[i].width == 8)
			put64(x + cases[i].off, cases[i].val);
		else if (cases[i].width == 4)
			put32(x + cases[i].off, (uint32_t)cases[i].val);
		else
			put16(x + cases[i].off, (uint16_t)cases[i].val);
		write_all(t, x, len);
		CHECK(try_read(t) < 0, "%s: %s: no error", file, cases[i].what);
	}
	/* record sizes through the data: 0, 3, 7, or past the end */
	for (size_t o = doff, k = 0; o + 8 <= doff + dsize && k < 40; k++) {
		uint64_t rest = doff + dsize - o;
		uint16_t sz;

		memcpy(&sz, b + o + 6, 2);
		if (sz < 8)
			break;
		memcpy(x, b, len);
		put16(x + o + 6, k % 4 == 0 ? 0 :
				 k % 4 == 1 ? 3 :
				 k % 4 == 2 || rest + 8 > 0xffff ?
					      7 :
					      (uint16_t)(rest + 8));
		write_all(t, x, len);
		CHECK(try_read(t) < 0, "%s: record size at %zu: no error", file,
		      o);
		o += sz;
	}
	/* random flips anywhere: whatever happens, no crash and a message
	 * with any error */
	for (int k = 0; k < 150; k++) {
		memcpy(x, b, len);
		for (int j = 0; j < 4; j++)
			x[rand_r(&seed) % len] ^=
				(unsigned char)(1 + rand_r(&seed) % 255);
		write_all(t, x, len);
		try_read(t);
	}
	/* report_dump and report_stats print what was read, then fail */
	memcpy(x, b, len);
	write_all(t, x, doff + (get64(b + 48) * 2) / 3);
	{
		char *text = NULL;
		size_t tlen = 0;
		FILE *m = open_memstream(&text, &tlen);

		CHECK_EQ(report_dump(t, m, false), -EBADMSG);
		fclose(m);
		CHECK(strstr(text, "PERF_RECORD_") && strstr(text, "# stopped"),
		      "dump of a truncated file:\n%.2000s", text);
		free(text);
		text = NULL;
		m = open_memstream(&text, &tlen);
		CHECK_EQ(report_stats(t, m), -EBADMSG);
		fclose(m);
		CHECK(strstr(text, "TOTAL events:") && strstr(text, "damage"),
		      "stats of a truncated file:\n%s", text);
		free(text);
	}
	CHECK(sh("%s stats -i %s >/dev/null 2>%s", cli, t,
		 path_in("cli.err")) == 1,
	      "CLI exit status on a truncated file");
	{
		size_t elen;
		char *e = read_all(path_in("cli.err"), &elen);

		CHECK(elen > 0 && memmem(e, elen, "offset 0x", 9),
		      "CLI message: %.*s", (int)elen, e);
		free(e);
	}
	free(x);
	free(b);
}

/* ---- main ---- */

int main(void)
{
	const char *perf_files[] = { "p-plain", "p-g",	       "p-sw-a",
				     "p-multi", "p-overwrite", "p-pipe",
				     "p-pf" };
	const char *our_files[] = { "o-plain", "o-g",	      "o-sw-a",
				    "o-multi", "o-overwrite", "o-pipe",
				    "o-pf",    "o-lost" };
	struct stat st;
	char lost_excerpt[1024];

	perfring_set_log(log_cb, NULL, PERFRING_LOG_WARN);
	cli = getenv("PERFRING_CLI");
	if (!cli)
		cli = "build/perfring";
	wl = getenv("WORKLOADS");
	if (!wl)
		wl = "build/workloads";
	CHECK(mkdtemp(dir), "mkdtemp");
	CHECK(access(cli, X_OK) == 0, "%s missing: run make all first", cli);
	CHECK(access(wl, X_OK) == 0, "%s missing: make build/workloads/...",
	      wl);
	/* the recordings run in the temporary directory */
	cli = realpath(cli, NULL);
	wl = realpath(wl, NULL);
	CHECK(cli && wl, "realpath");

	test_all_bits();
	test_trailers_and_payloads();
	test_rounds();
	test_queue_limit();
	fprintf(stderr, "ok: synthetic files\n");

	CHECK(sh("command -v perf >/dev/null") == 0,
	      "perf is not installed (the oracle; .ci/run installs linux-perf)");
	if (sh("perf record -q -o %s -- true >/dev/null 2>&1",
	       path_in("probe")) != 0)
		SKIP("perf record -- true fails here: the kernel refuses perf_event_open");

	/* All recordings at once: perf record starts slowly. */
	CHECK(sh("cd %s && W=%s && C=%s && ("
		 "perf record -q -o p-plain -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "perf record -q -g -o p-g -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "perf record -q -a -e sched:sched_switch -o p-sw-a -- $W/pingpong 2000 >/dev/null 2>&1 & "
		 "perf record -q -e cpu-clock,page-faults,context-switches -o p-multi -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "perf record -q --overwrite -o p-overwrite -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "perf record -q -o - -- $W/hot 0.1 >p-pipe 2>/dev/null & "
		 "perf record -q -c 1 -e page-faults -o p-pf -- $W/faults 1000 >/dev/null 2>&1 & "
		 "$C record -q -o o-plain -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "$C record -q -g -o o-g -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "$C record -q -a -e sched:sched_switch -o o-sw-a -- $W/pingpong 2000 >/dev/null 2>&1 & "
		 "$C record -q -e cpu-clock -e page-faults -o o-multi -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "$C record -q --overwrite -o o-overwrite -- $W/hot 0.1 >/dev/null 2>&1 & "
		 "$C record -q -o - -- $W/hot 0.1 >o-pipe 2>/dev/null & "
		 "$C record -q -c 1 -e page-faults -o o-pf -- $W/faults 1000 >/dev/null 2>&1 & "
		 "$C record -q -c 1 -e page-faults -m 1 -o o-lost -- $W/faults 100000 >/dev/null 2>&1 & "
		 "wait)",
		 dir, wl, cli) == 0,
	      "recording");
	for (size_t i = 0; i < sizeof(perf_files) / sizeof(*perf_files); i++)
		compare_with_perf(path_in(perf_files[i]), false);
	for (size_t i = 0; i < sizeof(our_files) / sizeof(*our_files); i++)
		compare_with_perf(path_in(our_files[i]),
				  !strcmp(our_files[i], "o-lost"));
	/* perf's LOST and LOST_SAMPLES, deterministically: a corpus file */
	snprintf(lost_excerpt, sizeof(lost_excerpt),
		 "%s/perf_data/perf-lost-excerpt",
		 getenv("FUZZ_CORPUS_DIR") ? getenv("FUZZ_CORPUS_DIR") :
					     "fuzz/corpus");
	CHECK(stat(lost_excerpt, &st) == 0, "%s missing", lost_excerpt);
	compare_with_perf(lost_excerpt, true);
	{
		struct prd_file *f;

		CHECK_EQ(prd_open(lost_excerpt, &f), 0);
		CHECK_EQ(prd_process(f, false, NULL, NULL), 0);
		CHECK(prd_stats(f)->nr_lost == 18 &&
			      prd_stats(f)->nr_lost_samples == 2461 &&
			      prd_attr_lost_samples(f, 0) == 2461,
		      "lost %llu, lost samples %llu",
		      (unsigned long long)prd_stats(f)->nr_lost,
		      (unsigned long long)prd_stats(f)->nr_lost_samples);
		prd_close(f);
	}

	{
		struct prd_file *f;
		uint64_t n;

		CHECK_EQ(prd_open(path_in("p-pipe"), &f), 0);
		CHECK_EQ(prd_process(f, false, NULL, NULL), 0);
		n = prd_stats(f)->nr_records;
		prd_close(f);
		read_from_pipe(path_in("p-pipe"), n);
		CHECK_EQ(prd_open(path_in("o-pipe"), &f), 0);
		CHECK_EQ(prd_process(f, false, NULL, NULL), 0);
		n = prd_stats(f)->nr_records;
		prd_close(f);
		read_from_pipe(path_in("o-pipe"), n);
		compare_dump(path_in("o-pipe"), n);
		fprintf(stderr, "ok: pipe format through prd_open(\"-\")\n");
		CHECK_EQ(prd_open(path_in("p-sw-a"), &f), 0);
		CHECK_EQ(prd_process(f, false, NULL, NULL), 0);
		n = prd_stats(f)->nr_records;
		prd_close(f);
		compare_dump(path_in("p-sw-a"), n);
		fprintf(stderr, "ok: dump against perf report -D\n");
	}

	test_truncations(path_in("p-plain"), false);
	test_truncations(path_in("o-sw-a"), false);
	test_truncations(path_in("p-pipe"), true);
	test_corruptions(path_in("p-plain"));
	test_corruptions(path_in("o-multi"));
	fprintf(stderr, "ok: damaged copies\n");

	sh("rm -rf %s", dir);
	return T_EXIT_PASS;
}
