// SPDX-License-Identifier: MIT
/*
 * API misuse and conventions: NULL arguments give -EINVAL (or a harmless
 * no-op where documented), bad record sizes and header/size mismatches
 * -EINVAL, bad ring sizes and mode flags -EINVAL, older (smaller) opts and
 * stats structs work, each handle does only its role, a second
 * reader_begin() without reader_end() is -EBUSY, perfring_version()
 * matches the header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "perfring.h"
#include "harness.h"

#define T_TYPE 76

static size_t page;
static int n_logs;
static char last_log[512];

static void log_cb(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	n_logs++;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static int cb_count(const struct perf_event_header *rec, size_t size, void *ctx)
{
	(void)rec;
	(void)size;
	++*(int *)ctx;
	return 0;
}

static int cb_stop(const struct perf_event_header *rec, size_t size, void *ctx)
{
	(void)rec;
	(void)size;
	return ++*(int *)ctx == 2 ? -ECANCELED : 0;
}

static struct perfring_ring *ring(uint64_t size, unsigned int flags,
				  enum perfring_role role)
{
	PERFRING_OPTS(perfring_ring_opts, o, .data_size = size, .flags = flags,
		      .role = role);
	struct perfring_ring *r = NULL;

	CHECK_EQ(perfring_ring_create(&o, &r), 0);
	CHECK(r != NULL, "NULL ring");
	return r;
}

static void version(void)
{
	char want[64];

	snprintf(want, sizeof(want), "%d.%d.%d", PERFRING_VERSION_MAJOR,
		 PERFRING_VERSION_MINOR, PERFRING_VERSION_PATCH);
	CHECK(perfring_version() != NULL, "no version");
	CHECK(strcmp(perfring_version(), want) == 0,
	      "version \"%s\", header says \"%s\"", perfring_version(), want);
}

static void null_args(void)
{
	struct perfring_ring *r = ring(page, 0, PERFRING_ROLE_BOTH);
	struct perfring_ring *out = (struct perfring_ring *)&out;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct perfring_output h;
	const struct perf_event_header *rec;
	struct perf_event_header hdr = { .type = T_TYPE, .size = 8 };
	const void *ptr[2];
	size_t len[2];
	int n = 0;

	PERFRING_OPTS(perfring_ring_opts, o, .data_size = page);
	CHECK_EQ(perfring_ring_create(&o, NULL), -EINVAL);
	CHECK_EQ(perfring_ring_attach(NULL, PERFRING_ROLE_CONSUMER, &out),
		 -EINVAL);
	CHECK_EQ(perfring_ring_attach("/nonexistent", PERFRING_ROLE_CONSUMER,
				      NULL),
		 -EINVAL);
	CHECK_EQ(perfring_ring_attach_fd(-1, -1, PERFRING_ROLE_CONSUMER, &out),
		 -EINVAL);
	CHECK_EQ(perfring_ring_wrap_kernel(NULL, 2 * page, -1, false, &out),
		 -EINVAL);
	CHECK_EQ(perfring_ring_wrap_kernel(&hdr, 2 * page, -1, false, NULL),
		 -EINVAL);
	CHECK_EQ(perfring_ring_remove(NULL), -EINVAL);
	CHECK_EQ(perfring_ring_fd(NULL), -EINVAL);
	CHECK_EQ(perfring_ring_data_size(NULL), 0);
	CHECK(perfring_ring_control(NULL) == NULL, "control(NULL)");
	CHECK_EQ(perfring_ring_pause(NULL, true), -EINVAL);
	CHECK_EQ(perfring_ring_stats(NULL, &st), -EINVAL);
	CHECK_EQ(perfring_ring_stats(r, NULL), -EINVAL);

	CHECK_EQ(perfring_output_begin(NULL, r, 8), -EINVAL);
	CHECK_EQ(perfring_output_begin(&h, NULL, 8), -EINVAL);
	CHECK_EQ(perfring_ring_emit(NULL, &hdr, 8), -EINVAL);
	CHECK_EQ(perfring_ring_emit(r, NULL, 8), -EINVAL);
	perfring_ring_flush(NULL);

	CHECK_EQ(perfring_read_begin(NULL), -EINVAL);
	CHECK_EQ(perfring_read_next(NULL, &rec), -EINVAL);
	CHECK_EQ(perfring_read_next(r, NULL), -EINVAL);
	CHECK_EQ(perfring_read_range(NULL, ptr, len), -EINVAL);
	CHECK_EQ(perfring_read_range(r, NULL, len), -EINVAL);
	CHECK_EQ(perfring_read_range(r, ptr, NULL), -EINVAL);
	perfring_read_end(NULL);
	CHECK_EQ(perfring_ring_consume(NULL, cb_count, &n), -EINVAL);
	CHECK_EQ(perfring_ring_consume(r, NULL, &n), -EINVAL);

	CHECK_EQ(perfring_ring_wait_fd(NULL), -EINVAL);
	CHECK_EQ(perfring_ring_wait_prepare(NULL), -EINVAL);
	CHECK_EQ(perfring_ring_wait(NULL, 0), -EINVAL);
	perfring_ring_wait_finish(NULL);
	CHECK_EQ(perfring_ring_space(NULL), -EINVAL);

	perfring_ring_destroy(NULL);
	perfring_set_log(NULL, NULL, PERFRING_LOG_DEBUG); /* silence is fine */
	CHECK_EQ(perfring_ring_attach("/nonexistent/ring",
				      PERFRING_ROLE_CONSUMER, &out),
		 -ENOENT);
	perfring_set_log(log_cb, NULL, PERFRING_LOG_DEBUG);
	/* The ring still works after all that. */
	CHECK_EQ(perfring_ring_emit(r, &hdr, 8), 0);
	CHECK_EQ(perfring_ring_consume(r, cb_count, &n), 1);
	CHECK_EQ(n, 1);
	CHECK_EQ(perfring_ring_stats(r, &st), 0);
	CHECK_EQ(st.lost_total, 0);
	perfring_ring_destroy(r);
}

static void record_sizes(void)
{
	struct perfring_ring *r = ring(1 << 20, 0, PERFRING_ROLE_BOTH);
	struct perfring_ring *small = ring(page, 0, PERFRING_ROLE_BOTH);
	static const size_t bad[] = { 0,     4,		7,
				      9,     12,	65530,
				      65536, 65536 + 8, SIZE_MAX & ~(size_t)7 };
	static unsigned char buf[65536 + 16];
	struct perf_event_header *hdr = (struct perf_event_header *)buf;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct perfring_output h;
	const struct perf_event_header *rec;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(perfring_output_begin(&h, r, bad[i]) == -EINVAL,
		      "output_begin size %zu", bad[i]);
		hdr->type = T_TYPE;
		hdr->size = (uint16_t)bad[i];
		if (bad[i] <= sizeof(buf))
			CHECK(perfring_ring_emit(r, buf, bad[i]) == -EINVAL,
			      "emit size %zu", bad[i]);
	}
	/* header.size must say the size passed. */
	hdr->size = 16;
	CHECK_EQ(perfring_ring_emit(r, buf, 24), -EINVAL);
	CHECK_EQ(perfring_ring_emit(r, buf, 8), -EINVAL);
	hdr->size = 0;
	CHECK_EQ(perfring_ring_emit(r, buf, 0), -EINVAL);
	/* Refusals for bad arguments are not drops. */
	CHECK_EQ(perfring_ring_stats(r, &st), 0);
	CHECK_EQ(st.lost_total, 0);
	CHECK_EQ(st.head, 0);

	/* The largest record, and the smallest. */
	memset(buf, 0x5a, sizeof(buf));
	hdr->type = T_TYPE;
	hdr->misc = 0;
	hdr->size = PERFRING_RECORD_MAX;
	CHECK_EQ(perfring_ring_emit(r, buf, PERFRING_RECORD_MAX), 0);
	hdr->size = 8;
	CHECK_EQ(perfring_ring_emit(r, buf, 8), 0);
	CHECK_EQ(perfring_read_begin(r), PERFRING_RECORD_MAX + 8);
	CHECK_EQ(perfring_read_next(r, &rec), (int)PERFRING_RECORD_MAX);
	CHECK(memcmp((const unsigned char *)rec + 8, buf + 8,
		     PERFRING_RECORD_MAX - 8) == 0,
	      "big record bytes");
	CHECK_EQ(perfring_read_next(r, &rec), 8);
	perfring_read_end(r);

	/* A record that can never fit (with room for a LOST in front) is a
	 * bad size for this ring, not a drop. */
	hdr->size = (uint16_t)page;
	CHECK_EQ(perfring_ring_emit(small, buf, page), -EINVAL);
	hdr->size = (uint16_t)(page - PERFRING_LOST_RECORD_SIZE);
	CHECK_EQ(perfring_ring_emit(small, buf,
				    page - PERFRING_LOST_RECORD_SIZE),
		 0);
	CHECK_EQ(perfring_ring_stats(small, &st), 0);
	CHECK_EQ(st.lost_total, 0);
	perfring_ring_destroy(small);
	perfring_ring_destroy(r);
}

static void ring_sizes_and_flags(void)
{
	static const uint64_t bad[] = { 3,
					100,
					4096 + 4096 / 2,
					3 * 4096,
					(1ull << 20) + 4096,
					1ull << 41,
					UINT64_MAX };
	struct perfring_ring *r = (struct perfring_ring *)&r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = bad[i]);

		n_logs = 0;
		CHECK(perfring_ring_create(&o, &r) == -EINVAL,
		      "data_size %llu accepted", (unsigned long long)bad[i]);
		CHECK(r == NULL, "*out not NULL");
		CHECK(n_logs > 0 && strstr(last_log, "size"), "log: %s",
		      last_log);
	}
	/* Powers of two smaller than a page. */
	for (uint64_t s = 1; s < page; s <<= 1) {
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = s);

		CHECK(perfring_ring_create(&o, &r) == -EINVAL,
		      "data_size %llu < page accepted", (unsigned long long)s);
	}
	/* A page, and the default (data_size 0: 1 MiB). */
	{
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = page);

		CHECK_EQ(perfring_ring_create(&o, &r), 0);
		CHECK_EQ(perfring_ring_data_size(r), page);
		perfring_ring_destroy(r);
		CHECK_EQ(perfring_ring_create(NULL, &r), 0);
		CHECK_EQ(perfring_ring_data_size(r), 1u << 20);
		perfring_ring_destroy(r);
	}
	/* Mode flags. */
	{
		static const unsigned int bad_flags[] = {
			PERFRING_MODE_OVERWRITE | PERFRING_MODE_MULTI_PRODUCER,
			0x4, 0x8 | PERFRING_MODE_OVERWRITE, 0x80000000u
		};

		for (size_t i = 0; i < 4; i++) {
			PERFRING_OPTS(perfring_ring_opts, o, .data_size = page,
				      .flags = bad_flags[i]);

			n_logs = 0;
			CHECK(perfring_ring_create(&o, &r) == -EINVAL,
			      "flags %#x accepted", bad_flags[i]);
			CHECK(n_logs > 0 && strstr(last_log, "flags"),
			      "log: %s", last_log);
		}
	}
	/* Roles. */
	{
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = page,
			      .role = (enum perfring_role)4);

		CHECK_EQ(perfring_ring_create(&o, &r), -EINVAL);
		o.role = (enum perfring_role)7;
		CHECK_EQ(perfring_ring_create(&o, &r), -EINVAL);
	}
	/* An opts struct too small to hold even its size. */
	{
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = page);

		o.sz = 4;
		CHECK_EQ(perfring_ring_create(&o, &r), -EINVAL);
		o.sz = 0;
		CHECK_EQ(perfring_ring_create(&o, &r), -EINVAL);
	}
}

/* A caller built against an older, smaller perfring_ring_opts. */
static void older_opts(void)
{
	struct perfring_ring *r;
	struct perfring_ring_stats st = { .sz = sizeof(st) };
	struct perf_event_header hdr = { .type = T_TYPE, .size = 8 };

	/* Only up to data_size: flags, role, ... are ignored even if the
	 * bytes behind hold garbage. */
	{
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = 2 * page,
			      .flags = 0xdead, .role = (enum perfring_role)99,
			      .watermark = 3, .start = 12345);

		o.sz = offsetof(struct perfring_ring_opts, data_size) +
		       sizeof(o.data_size);
		CHECK_EQ(perfring_ring_create(&o, &r), 0);
		CHECK_EQ(perfring_ring_data_size(r), 2 * page);
		CHECK_EQ(perfring_ring_stats(r, &st), 0);
		CHECK_EQ(st.flags, 0);
		CHECK_EQ(st.head, 0);
		CHECK_EQ(perfring_ring_emit(r, &hdr, 8), 0); /* role BOTH */
		CHECK_EQ(perfring_read_begin(r), 8);
		perfring_read_end(r);
		perfring_ring_destroy(r);
	}
	/* Up to role: start ignored. */
	{
		PERFRING_OPTS(perfring_ring_opts, o, .data_size = page,
			      .flags = PERFRING_MODE_MULTI_PRODUCER,
			      .role = PERFRING_ROLE_BOTH, .start = 4096 * 5);

		o.sz = offsetof(struct perfring_ring_opts, watermark);
		CHECK_EQ(perfring_ring_create(&o, &r), 0);
		CHECK_EQ(perfring_ring_stats(r, &st), 0);
		CHECK_EQ(st.flags, PERFRING_MODE_MULTI_PRODUCER);
		CHECK_EQ(st.head, 0);
		perfring_ring_destroy(r);
	}
	/* Only sz itself: all defaults. */
	{
		struct perfring_ring_opts o;

		memset(&o, 0xff, sizeof(o));
		o.sz = sizeof(size_t);
		CHECK_EQ(perfring_ring_create(&o, &r), 0);
		CHECK_EQ(perfring_ring_data_size(r), 1u << 20);
		perfring_ring_destroy(r);
	}
	/* A newer caller's larger struct: the tail it knows nothing of is
	 * zero. */
	{
		struct {
			struct perfring_ring_opts o;
			uint64_t future[4];
		} big;

		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		big.o.data_size = page;
		big.o.start = 64;
		CHECK_EQ(perfring_ring_create(&big.o, &r), 0);
		CHECK_EQ(perfring_ring_stats(r, &st), 0);
		CHECK_EQ(st.head, 64);
		perfring_ring_destroy(r);
		/* A setting this library does not know: refused, not dropped. */
		big.future[2] = 1;
		CHECK_EQ(perfring_ring_create(&big.o, &r), -EINVAL);
	}
	/* The same convention for every opts struct (src/common/opts.h). */
	{
		struct {
			struct perfring_app_opts o;
			uint32_t future;
		} big;

		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		big.future = 7;
		CHECK_EQ(perfring_app_start(&big.o), -EINVAL);
		CHECK(!perfring_app_active, "tracing started");
		big.o.sz = 1; /* does not even cover sz */
		big.future = 0;
		CHECK_EQ(perfring_app_start(&big.o), -EINVAL);
	}
}

/* Stats: an older, smaller struct is filled only as far as it goes. */
static void older_stats(void)
{
	struct perfring_ring *r = ring(page, 0, PERFRING_ROLE_BOTH);
	struct {
		struct perfring_ring_stats st;
		unsigned char canary[32];
	} s;
	size_t small = offsetof(struct perfring_ring_stats, paused);

	CHECK_EQ(perfring_ring_pause(r, true), 0);
	memset(&s, 0xcc, sizeof(s));
	s.st.sz = small;
	CHECK_EQ(perfring_ring_stats(r, &s.st), 0);
	CHECK(s.st.sz == small,
	      "stats with sz %zu came back with sz %zu: the caller is told "
	      "fields beyond its struct were filled",
	      small, s.st.sz);
	CHECK_EQ(s.st.data_size, page);
	CHECK_EQ(s.st.paused, 0xcccccccc); /* beyond its size: untouched */
	for (size_t i = 0; i < sizeof(s.canary); i++)
		CHECK_EQ(s.canary[i], 0xcc);

	memset(&s, 0xcc, sizeof(s));
	s.st.sz = sizeof(s); /* newer caller: gets what we have */
	CHECK_EQ(perfring_ring_stats(r, &s.st), 0);
	CHECK_EQ(s.st.sz, sizeof(s.st));
	CHECK_EQ(s.st.paused, 1);
	for (size_t i = 0; i < sizeof(s.canary); i++)
		CHECK_EQ(s.canary[i], 0xcc);
	perfring_ring_destroy(r);
}

static void roles(void)
{
	struct perfring_ring *p = ring(page, 0, PERFRING_ROLE_PRODUCER);
	struct perfring_ring *c;
	struct perf_event_header hdr = { .type = T_TYPE, .size = 8 };
	const struct perf_event_header *rec;
	struct perfring_output h;
	const void *ptr[2];
	size_t len[2];
	int n = 0;

	CHECK_EQ(perfring_ring_attach_fd(perfring_ring_fd(p),
					 perfring_ring_wait_fd(p),
					 PERFRING_ROLE_CONSUMER, &c),
		 0);
	/* Reader calls on the producer-only handle. */
	CHECK_EQ(perfring_ring_emit(p, &hdr, 8), 0);
	CHECK_EQ(perfring_read_begin(p), -EINVAL);
	CHECK_EQ(perfring_ring_consume(p, cb_count, &n), -EINVAL);
	CHECK_EQ(perfring_ring_wait_prepare(p), -EINVAL);
	CHECK_EQ(perfring_ring_wait(p, 0), -EINVAL);
	CHECK_EQ(perfring_read_next(p, &rec), 0); /* no batch */
	CHECK_EQ(perfring_read_range(p, ptr, len), 0);
	perfring_read_end(p);
	/* Producer calls on the consumer-only handle. */
	CHECK_EQ(perfring_ring_emit(c, &hdr, 8), -EINVAL);
	CHECK_EQ(perfring_output_begin(&h, c, 8), -EINVAL);
	CHECK_EQ(perfring_ring_space(c), -EINVAL);
	perfring_ring_flush(c);
	/* The record the producer wrote is still there, once. */
	CHECK_EQ(perfring_ring_consume(c, cb_count, &n), 1);
	CHECK_EQ(n, 1);
	perfring_ring_destroy(c);
	perfring_ring_destroy(p);

	/* A kernel ring is read-only for us. */
	{
		unsigned char *base = mmap(NULL, 2 * page,
					   PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct perf_event_mmap_page *pc = (void *)base;
		struct perfring_ring *k;

		CHECK(base != MAP_FAILED, "mmap");
		pc->data_offset = page;
		pc->data_size = page;
		CHECK_EQ(perfring_ring_wrap_kernel(base, 2 * page, -1, false,
						   &k),
			 0);
		CHECK_EQ(perfring_ring_emit(k, &hdr, 8), -EINVAL);
		CHECK_EQ(perfring_output_begin(&h, k, 8), -EINVAL);
		CHECK_EQ(perfring_ring_space(k), -EINVAL);
		CHECK_EQ(perfring_ring_fd(k), -EINVAL);
		CHECK_EQ(perfring_ring_pause(k, true),
			 -EINVAL); /* no perf fd */
		CHECK_EQ(perfring_read_begin(k), 0);
		perfring_read_end(k);
		perfring_ring_destroy(k);
		munmap(base, 2 * page);
	}
}

static void batches(void)
{
	struct perfring_ring *r = ring(page, 0, PERFRING_ROLE_BOTH);
	struct perf_event_header hdr = { .type = T_TYPE, .size = 8 };
	const struct perf_event_header *rec;
	int n = 0;

	/* Empty: 0 opens no batch; end is harmless. */
	CHECK_EQ(perfring_read_begin(r), 0);
	CHECK_EQ(perfring_read_begin(r), 0);
	perfring_read_end(r);
	perfring_read_end(r);

	for (int i = 0; i < 3; i++)
		CHECK_EQ(perfring_ring_emit(r, &hdr, 8), 0);
	CHECK_EQ(perfring_read_begin(r), 24);
	CHECK_EQ(perfring_read_begin(r), -EBUSY);
	CHECK_EQ(perfring_ring_consume(r, cb_count, &n), -EBUSY);
	CHECK_EQ(n, 0);
	CHECK_EQ(perfring_read_next(r, &rec), 8);
	perfring_read_end(r);
	perfring_read_end(r); /* twice: no-op */
	CHECK_EQ(perfring_ring_control(r)->data_tail, 8);
	/* Emitting during a batch is fine; the batch ends at its head. */
	CHECK_EQ(perfring_read_begin(r), 16);
	CHECK_EQ(perfring_ring_emit(r, &hdr, 8), 0);
	CHECK_EQ(perfring_read_next(r, &rec), 8);
	CHECK_EQ(perfring_read_next(r, &rec), 8);
	CHECK_EQ(perfring_read_next(r, &rec), 0);
	perfring_read_end(r);
	CHECK_EQ(perfring_read_begin(r), 8);
	perfring_read_end(r); /* nothing read: nothing freed */
	CHECK_EQ(perfring_ring_control(r)->data_tail, 24);

	/* consume: stops early on a negative return and passes it on. */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(perfring_ring_emit(r, &hdr, 8), 0);
	n = 0;
	CHECK_EQ(perfring_ring_consume(r, cb_stop, &n), -ECANCELED);
	CHECK_EQ(n, 2);
	/* The record whose callback failed counts as read (as in libbpf's
	 * ring_buffer__consume): two of the four are left. */
	n = 0;
	CHECK_EQ(perfring_ring_consume(r, cb_count, &n), 2);
	CHECK_EQ(n, 2);
	perfring_ring_destroy(r);
}

static void misc(void)
{
	struct perfring_ring *r = ring(2 * page, 0, PERFRING_ROLE_BOTH);
	const struct perf_event_mmap_page *pc = perfring_ring_control(r);
	const struct perfring_ext *ext =
		(const void *)((const char *)pc + PERFRING_EXT_OFFSET);
	struct perf_event_header hdr = { .type = T_TYPE, .size = 64 };
	static unsigned char buf[64];

	/* The control page says what a kernel one would. */
	CHECK_EQ(pc->data_offset, page);
	CHECK_EQ(pc->data_size, 2 * page);
	CHECK_EQ(pc->size, offsetof(struct perf_event_mmap_page, __reserved));
	CHECK_EQ(ext->magic, PERFRING_MAGIC);
	CHECK_EQ(ext->abi_version, PERFRING_ABI_VERSION);
	CHECK_EQ(ext->ext_size, sizeof(struct perfring_ext));
	CHECK_EQ(ext->page_size, page);
	CHECK(perfring_ring_fd(r) >= 0, "ring fd");
	CHECK(perfring_ring_wait_fd(r) >= 0, "wait fd");

	/* perfring_ring_space: free bytes as the producer sees them. */
	memcpy(buf, &hdr, sizeof(hdr));
	CHECK_EQ(perfring_ring_space(r), (int64_t)(2 * page));
	CHECK_EQ(perfring_ring_emit(r, buf, 64), 0);
	CHECK_EQ(perfring_ring_space(r), (int64_t)(2 * page - 64));
	while (perfring_ring_emit(r, buf, 64) == 0)
		;
	CHECK_EQ(perfring_ring_space(r), 0);
	{
		struct perfring_ring *o =
			ring(page, PERFRING_MODE_OVERWRITE, PERFRING_ROLE_BOTH);

		CHECK_EQ(perfring_ring_space(o), (int64_t)page);
		perfring_ring_destroy(o);
	}
	/* Pausing twice / resuming twice is fine. */
	CHECK_EQ(perfring_ring_pause(r, true), 0);
	CHECK_EQ(perfring_ring_pause(r, true), 0);
	CHECK_EQ(perfring_ring_pause(r, false), 0);
	CHECK_EQ(perfring_ring_pause(r, false), 0);
	perfring_ring_destroy(r);
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	perfring_set_log(log_cb, NULL, PERFRING_LOG_DEBUG);
	version();
	null_args();
	record_sizes();
	ring_sizes_and_flags();
	older_opts();
	roles();
	batches();
	misc();
	older_stats();
	return T_EXIT_PASS;
}
