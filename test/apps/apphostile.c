// SPDX-License-Identifier: MIT
/*
 * A traced program that misbehaves, for test/app_trust.sh.  It emits
 * hostile:tick {u64 seq, u64 thread} events and then does one bad thing:
 *
 *   apphostile truncate LEN     thread 1 emits for 0.3 s, then its ring
 *                               file is truncated to LEN bytes (4096, 0)
 *                               while thread 2 emits for 0.3 s more
 *   apphostile lostmax          thread 1 emits 100 events, then publishes a
 *                               PERF_RECORD_LOST claiming 2^64-1 in its ring
 *   apphostile scribble SECS    thread 1 emits, then scribbles over its
 *                               ring for SECS seconds: random data_head
 *                               (backwards, far ahead, misaligned), random
 *                               bytes, sizes 0, huge and unaligned; thread
 *                               2 emits properly all along
 *   apphostile threads N EVENTS thread 1..N each emit EVENTS, say "ready"
 *                               on stdout when all have, and stay alive
 *                               (rings held) until killed
 *   apphostile soak SECS        for SECS seconds, thread 2 emits properly
 *                               while one hostile thread after another
 *                               (threads 100, 101, ...: each a new ring)
 *                               emits 200 events, waits until they are
 *                               read, then for about a second scribbles
 *                               random words over its control page and
 *                               random bytes over its data, moves
 *                               data_head backwards, far ahead and
 *                               misaligned, publishes records of size 0,
 *                               huge and unaligned, and at the end
 *                               truncates its ring (to 0, 4096 or a
 *                               random length) or just exits; prints
 *                               "soak: R rings, T truncated, S scribbles"
 *
 * At exit it prints "thread T emitted N" for each emitting thread.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <perfring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct tick {
	uint64_t seq, thread;
};

static struct perfring_event *ev_tick;
static atomic_int stop_healthy;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* The calling thread's ring file, opened read-write (the library keeps
 * its own handle; this is the program doing what it should not). */
static int own_ring_fd(void)
{
	const char *dir = getenv("PERFRING_SESSION");
	char path[4096];

	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/%d-%ld.ring", dir, (int)getpid(),
		 (long)syscall(SYS_gettid));
	return open(path, O_RDWR | O_CLOEXEC);
}

static unsigned char *map_ring(int fd, size_t *len,
			       struct perf_event_mmap_page **pc)
{
	struct perf_event_mmap_page pc0;
	unsigned char *m;

	if (pread(fd, &pc0, sizeof(pc0), 0) != sizeof(pc0))
		return NULL;
	*len = pc0.data_offset + pc0.data_size;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	*pc = (void *)m;
	return m;
}

static uint64_t emit_for(uint64_t thread, uint64_t ns, uint64_t max)
{
	uint64_t t0 = now_ns(), seq = 0;

	while ((!ns || now_ns() - t0 < ns) && (!max || seq < max)) {
		struct tick t = { seq, thread };

		if (perfring_emit(ev_tick, &t, sizeof(t)) == 0)
			seq++;
		if (seq % 64 == 0)
			nap_us(100); /* steady, not a flood */
	}
	return seq;
}

struct soak;

struct job {
	uint64_t thread, emitted;
	long arg;
	pthread_barrier_t *barrier;
	struct soak *soak;
};

/* ---- truncate ---- */

static void *truncate_victim(void *arg)
{
	struct job *j = arg;
	int fd;

	j->emitted = emit_for(j->thread, 300000000ull, 0);
	fd = own_ring_fd();
	/* This thread never emits again: its ring would fault under it. */
	if (fd < 0 || ftruncate(fd, (off_t)j->arg) < 0)
		perror("apphostile: truncate");
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Emits until told to stop, 64 events every j->arg us (100 if 0). */
static void *healthy(void *arg)
{
	struct job *j = arg;
	uint64_t seq = 0;

	while (!atomic_load(&stop_healthy)) {
		struct tick t = { seq, j->thread };

		if (perfring_emit(ev_tick, &t, sizeof(t)) == 0)
			seq++;
		if (seq % 64 == 0)
			nap_us(j->arg ? j->arg : 100);
	}
	j->emitted = seq;
	return NULL;
}

/* ---- lostmax ---- */

static void *lostmax(void *arg)
{
	struct job *j = arg;
	struct perf_event_mmap_page *pc;
	size_t len;
	unsigned char *m;
	int fd;

	j->emitted = emit_for(j->thread, 0, 100);
	fd = own_ring_fd();
	m = fd >= 0 ? map_ring(fd, &len, &pc) : NULL;
	if (m) {
		uint64_t head =
			__atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
		struct perfring_lost_record l = {
			.header = { .type = PERF_RECORD_LOST,
				    .size = sizeof(l) },
			.id = 1,
			.lost = UINT64_MAX,
		};

		for (size_t i = 0; i < sizeof(l); i++)
			m[pc->data_offset + (head + i) % pc->data_size] =
				((unsigned char *)&l)[i];
		__atomic_store_n(&pc->data_head, head + sizeof(l),
				 __ATOMIC_RELEASE);
		munmap(m, len);
	}
	if (fd >= 0)
		close(fd);
	/* No more events from this thread: the library's head is stale. */
	return NULL;
}

/* ---- scribble ---- */

static void *scribbler(void *arg)
{
	struct job *j = arg;
	struct perf_event_mmap_page *pc;
	uint64_t t0, s = 0x9e3779b97f4a7c15ull, base;
	size_t len;
	unsigned char *m;
	int fd;

	j->emitted = emit_for(j->thread, 0, 1000);
	nap_us(200000); /* the recorder reads the good part */
	fd = own_ring_fd();
	m = fd >= 0 ? map_ring(fd, &len, &pc) : NULL;
	if (!m)
		return NULL;
	base = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	t0 = now_ns();
	while (now_ns() - t0 < (uint64_t)j->arg * 1000000000ull) {
		uint64_t head, r;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		r = s;
		/* Records with sizes 0, tiny, huge, unaligned, or random. */
		for (int i = 0; i < 64; i++) {
			struct perf_event_header h = {
				.type = (uint32_t)(r >> 8),
				.size = (uint16_t)((i % 4) == 0 ? 0 :
						   (i % 4) == 1 ? 65535 :
						   (i % 4) == 2 ? 12 :
								  (r >> 16)),
			};
			uint64_t off = (r + (uint64_t)i * 8) % pc->data_size;

			memcpy(m + pc->data_offset + (off & ~7ull), &h,
			       sizeof(h));
			r = r * 6364136223846793005ull + 1;
		}
		switch (s % 4) {
		case 0: /* backwards */
			head = base - (s % 4096) * 8;
			break;
		case 1: /* far ahead */
			head = base + pc->data_size * 3;
			break;
		case 2: /* misaligned */
			head = base + 4 + (s % 64) * 8;
			break;
		default: /* plausible, over garbage */
			head = base + (s % 512) * 8;
			break;
		}
		__atomic_store_n(&pc->data_head, head, __ATOMIC_RELEASE);
		base = head & ~7ull;
		nap_us(1000);
	}
	munmap(m, len);
	close(fd);
	return NULL;
}

/* ---- soak ---- */

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct soak {
	uint64_t deadline, seed, rings, truncated, scribbles;
};

/* Waits (at most 10 s) until the recorder has read what the ring holds:
 * it has the ring attached when the abuse starts. */
static void wait_read(struct perf_event_mmap_page *pc)
{
	uint64_t t0 = now_ns();

	while (__atomic_load_n(&pc->data_tail, __ATOMIC_ACQUIRE) !=
		       __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE) &&
	       now_ns() - t0 < 10000000000ull)
		nap_us(1000);
}

/* One hostile thread's life: a ring of its own, read once, then abused. */
static void *soak_generation(void *arg)
{
	struct job *j = arg;
	struct soak *sk = j->soak;
	struct perf_event_mmap_page *pc;
	uint64_t s = sk->seed + j->thread * 0x9e3779b97f4a7c15ull, t0, base,
		 size;
	unsigned char *m, *data;
	size_t len;
	int fd;

	j->emitted = emit_for(j->thread, 0, 200);
	fd = own_ring_fd();
	m = fd >= 0 ? map_ring(fd, &len, &pc) : NULL;
	if (!m) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	wait_read(pc);
	/* Our own copies: the control page is about to be scribbled on. */
	size = pc->data_size;
	data = m + pc->data_offset;
	base = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	t0 = now_ns();
	while (now_ns() - t0 < 1000000000ull && now_ns() < sk->deadline) {
		uint64_t r = xorshift(&s), head;

		switch (r % 8) {
		case 0: /* random words anywhere in the control page */
			for (int i = 0; i < 4; i++) {
				uint64_t v = xorshift(&s),
					 off = (v >> 40) % (4096 / 8) * 8;

				memcpy(m + off, &v, sizeof(v));
			}
			break;
		case 1: /* random bytes over the data */
			for (int i = 0; i < 256; i++)
				data[(r + (uint64_t)i * 131) % size] =
					(unsigned char)xorshift(&s);
			break;
		case 2: /* data_head backwards */
			head = base - (r >> 8) % (size * 2);
			__atomic_store_n(&pc->data_head, head,
					 __ATOMIC_RELEASE);
			break;
		case 3: /* data_head far ahead */
			head = base + size * (1 + (r >> 8) % 1000);
			__atomic_store_n(&pc->data_head, head,
					 __ATOMIC_RELEASE);
			break;
		case 4: /* misaligned */
			head = base + 1 + (r >> 8) % 63;
			__atomic_store_n(&pc->data_head, head,
					 __ATOMIC_RELEASE);
			break;
		default: { /* records of size 0, huge, unaligned, random */
			uint64_t tail = __atomic_load_n(&pc->data_tail,
							__ATOMIC_ACQUIRE) &
					~7ull,
				 at = tail;

			for (int i = 0; i < 16; i++) {
				uint64_t v = xorshift(&s);
				struct perf_event_header h = {
					.type = (uint32_t)(v % 3 ? 0x4001 :
								   v >> 32),
					.size = (uint16_t)((i % 4) == 0 ?
								   0 :
							   (i % 4) == 1 ?
								   65535 :
							   (i % 4) == 2 ?
								   8 + 4 :
								   v >> 16),
				};

				memcpy(data + (at % size), &h, sizeof(h));
				at += 8 + (v >> 8) % 8 * 8;
			}
			__atomic_store_n(&pc->data_head, at, __ATOMIC_RELEASE);
			break;
		}
		}
		sk->scribbles++;
		base = __atomic_load_n(&pc->data_head, __ATOMIC_RELAXED) &
		       ~7ull;
		nap_us(500 + (long)(r >> 20) % 2000);
	}
	munmap(m, len);
	/* This thread never emits again: its ring may be gone under it. */
	if (xorshift(&s) % 3) {
		static const off_t lens[] = { 0, 4096, 777 };

		if (ftruncate(fd, lens[s % 3]) == 0)
			sk->truncated++;
	}
	close(fd);
	return NULL;
}

static void soak(uint64_t secs, struct job *healthy_job)
{
	struct soak sk = { .deadline = now_ns() + secs * 1000000000ull,
			   .seed = now_ns() };
	pthread_t h;

	pthread_create(&h, NULL, healthy, healthy_job);
	for (uint64_t g = 0; now_ns() < sk.deadline; g++) {
		struct job j = { .thread = 100 + g, .soak = &sk };
		pthread_t t;

		pthread_create(&t, NULL, soak_generation, &j);
		pthread_join(t, NULL);
		sk.rings++;
	}
	atomic_store(&stop_healthy, 1);
	pthread_join(h, NULL);
	printf("soak: %llu rings, %llu truncated, %llu scribbles\n",
	       (unsigned long long)sk.rings, (unsigned long long)sk.truncated,
	       (unsigned long long)sk.scribbles);
}

/* ---- threads ---- */

static void *holder(void *arg)
{
	struct job *j = arg;

	j->emitted = emit_for(j->thread, 0, (uint64_t)j->arg);
	pthread_barrier_wait(j->barrier);
	for (;;)
		pause();
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: apphostile truncate LEN | lostmax | scribble SECS | threads N EVENTS | soak SECS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct job j[2] = { { .thread = 1 }, { .thread = 2 } };
	pthread_t t[2];

	if (argc < 2)
		usage();
	if (perfring_event_declare("hostile", "tick", "u64 seq, u64 thread",
				   &ev_tick)) {
		fprintf(stderr, "apphostile: declare failed\n");
		return 1;
	}
	if (!strcmp(argv[1], "truncate") && argc == 3) {
		j[0].arg = atol(argv[2]);
		pthread_create(&t[1], NULL, healthy, &j[1]);
		pthread_create(&t[0], NULL, truncate_victim, &j[0]);
		pthread_join(t[0], NULL);
		nap_us(300000);
		atomic_store(&stop_healthy, 1);
		pthread_join(t[1], NULL);
	} else if (!strcmp(argv[1], "lostmax")) {
		pthread_create(&t[0], NULL, lostmax, &j[0]);
		pthread_join(t[0], NULL);
		j[1].emitted = emit_for(2, 0, 100);
	} else if (!strcmp(argv[1], "scribble") && argc == 3) {
		j[0].arg = atol(argv[2]);
		pthread_create(&t[1], NULL, healthy, &j[1]);
		pthread_create(&t[0], NULL, scribbler, &j[0]);
		pthread_join(t[0], NULL);
		atomic_store(&stop_healthy, 1);
		pthread_join(t[1], NULL);
	} else if (!strcmp(argv[1], "soak") && argc == 3) {
		j[1].arg =
			5000; /* 12,800 events/s: a file perf reads quickly */
		soak(strtoull(argv[2], NULL, 10), &j[1]);
	} else if (!strcmp(argv[1], "threads") && argc == 4) {
		int n = atoi(argv[2]);
		pthread_barrier_t b;
		struct job *js = calloc((size_t)n, sizeof(*js));
		pthread_t *ts = calloc((size_t)n, sizeof(*ts));

		if (n <= 0 || !js || !ts)
			usage();
		pthread_barrier_init(&b, NULL, (unsigned)n + 1);
		for (int i = 0; i < n; i++) {
			js[i] = (struct job){ .thread = (uint64_t)i + 1,
					      .arg = atol(argv[3]),
					      .barrier = &b };
			pthread_create(&ts[i], NULL, holder, &js[i]);
		}
		pthread_barrier_wait(&b);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	} else {
		usage();
	}
	for (int i = 0; i < 2; i++)
		if (j[i].emitted)
			printf("thread %llu emitted %llu\n",
			       (unsigned long long)j[i].thread,
			       (unsigned long long)j[i].emitted);
	return 0;
}
