// SPDX-License-Identifier: MIT
/*
 * The behaviours of the kernel selftest tools/testing/selftests/ring-buffer/
 * map_test.c, checked against the real kernel through our consumer
 * (src/sources/tracefs.c), in a private tracefs instance, for 4 KiB and
 * 8 KiB sub-buffers:
 *
 *  meta_page_check   fresh map all zero; GET_READER on empty keeps id 0;
 *                    16 markers: entries 16, overrun 0, read 16, reader id
 *                    1; a second GET_READER changes nothing
 *  data_mmap         whole data area maps (and one sub-buffer less); past
 *                    the end does not; meta page padding is zero
 *  snapshot          an armed snapshot trigger refuses the map (EBUSY);
 *                    a mapped buffer refuses the trigger and snapshot
 *
 * and what tracefs.md adds: writable or private maps refused, resize
 * refused while mapped (EBUSY), a blocking GET_READER on an empty buffer
 * interrupted by a signal (EINTR), a partial reader page growing under the
 * same id, missed-event marks on pages while reader.lost_events reads 0,
 * two mappers of one CPU buffer.  Skips only when tracefs or the mmap
 * interface is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include "sources/tracefs.h"
#include "harness.h"

static struct tfs_instance inst;
static int open_fds[16];
static int nr_open;

static void cleanup(void)
{
	for (int i = 0; i < nr_open; i++)
		close(open_fds[i]);
	nr_open = 0;
	tfs_instance_remove(&inst);
}

static int track(int fd)
{
	if (fd >= 0 && nr_open < 16)
		open_fds[nr_open++] = fd;
	return fd;
}

static void untrack(int fd)
{
	for (int i = 0; i < nr_open; i++)
		if (open_fds[i] == fd)
			open_fds[i] = open_fds[--nr_open];
	close(fd);
}

static void marker(int n, const char *tag)
{
	char path[PATH_MAX + 32], buf[64];
	int fd;

	snprintf(path, sizeof(path), "%s/trace_marker", inst.path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	for (int i = 0; i < n; i++) {
		int len = snprintf(buf, sizeof(buf), "%s %d", tag, i);

		CHECK(write(fd, buf, (size_t)len) == len, "trace_marker: %s",
		      strerror(errno));
	}
	close(fd);
}

static int open_raw(int flags)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/per_cpu/cpu0/trace_pipe_raw",
		 inst.path);
	return track(open(path, O_RDONLY | O_CLOEXEC | flags));
}

static void set_subbuf(unsigned int kb)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", kb);
	CHECK(!tfs_write(&inst, "buffer_subbuf_size_kb", v, true),
	      "subbuf size %u KiB", kb);
	CHECK(!tfs_write(&inst, "buffer_size_kb", "64", true), "buffer size");
	CHECK(!tfs_write(&inst, "trace", "", true), "clear");
}

static int nop_page_fn(void *ctx, int cpu, const void *page)
{
	(void)cpu;
	(void)page;
	(*(int *)ctx)++;
	return 0;
}

static void meta_page_check(unsigned int kb)
{
	struct tfs_cpu c;
	const struct subbuf_meta *m;
	long psz = sysconf(_SC_PAGESIZE);
	int err;

	set_subbuf(kb);
	err = tfs_cpu_open(&c, inst.path, 0, true, kb * 1024);
	CHECK(!err, "open cpu0: %s", strerror(-err));
	if (!c.mapped) {
		tfs_cpu_close(&c);
		cleanup();
		SKIP("trace_pipe_raw cannot be memory-mapped on this kernel");
	}
	m = c.meta;
	CHECK(m->subbuf_size == kb * 1024, "subbuf_size %u", m->subbuf_size);
	CHECK(m->meta_page_size ==
		      (kb * 1024 > (unsigned)psz ? kb * 1024 : (unsigned)psz),
	      "meta_page_size %u with %u KiB sub-buffers", m->meta_page_size,
	      kb);
	CHECK(m->meta_struct_len >= 80, "meta_struct_len %u",
	      m->meta_struct_len);
	CHECK(m->entries == 0 && m->overrun == 0 && m->read == 0,
	      "fresh map: entries %llu overrun %llu read %llu",
	      (unsigned long long)m->entries, (unsigned long long)m->overrun,
	      (unsigned long long)m->read);
	CHECK(m->reader.id == 0 && m->reader.read == 0,
	      "fresh map: reader id %u read %u", m->reader.id, m->reader.read);
	CHECK(ioctl(c.fd, TRACE_MMAP_IOCTL_GET_READER) == 0, "GET_READER: %s",
	      strerror(errno));
	CHECK_EQ(m->reader.id, 0);
	marker(16, "meta");
	CHECK(ioctl(c.fd, TRACE_MMAP_IOCTL_GET_READER) == 0, "GET_READER: %s",
	      strerror(errno));
	CHECK_EQ(m->entries, 16);
	CHECK_EQ(m->overrun, 0);
	CHECK_EQ(m->read, 16);
	CHECK_EQ(m->reader.id, 1);
	CHECK(ioctl(c.fd, TRACE_MMAP_IOCTL_GET_READER) == 0, "GET_READER: %s",
	      strerror(errno));
	CHECK_EQ(m->entries, 16);
	CHECK_EQ(m->overrun, 0);
	CHECK_EQ(m->read, 16);
	CHECK_EQ(m->reader.id, 1);

	/* data_mmap: the whole data area (our consumer mapped it), one
	 * sub-buffer less, and past the end. */
	{
		size_t sz = (size_t)m->subbuf_size * m->nr_subbufs;
		void *p;

		p = mmap(NULL, sz, PROT_READ, MAP_SHARED, c.fd,
			 m->meta_page_size);
		CHECK(p != MAP_FAILED, "map data: %s", strerror(errno));
		munmap(p, sz);
		p = mmap(NULL, sz - m->subbuf_size, PROT_READ, MAP_SHARED, c.fd,
			 m->meta_page_size);
		CHECK(p != MAP_FAILED, "map data - 1: %s", strerror(errno));
		munmap(p, sz - m->subbuf_size);
		p = mmap(NULL, sz, PROT_READ, MAP_SHARED, c.fd,
			 m->meta_page_size + 2 * (off_t)m->subbuf_size);
		CHECK(p == MAP_FAILED, "mapping past the end succeeded");
		if (p != MAP_FAILED)
			munmap(p, sz);
		for (uint32_t i = m->meta_struct_len; i < m->meta_page_size;
		     i++)
			CHECK(((const uint8_t *)m)[i] == 0,
			      "meta page byte %u is not zero", i);
		p = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_SHARED,
			 c.fd, 0);
		CHECK(p == MAP_FAILED && errno == EACCES, "writable map: %s",
		      strerror(errno));
		p = mmap(NULL, (size_t)psz, PROT_READ, MAP_PRIVATE, c.fd, 0);
		CHECK(p == MAP_FAILED, "private map accepted");
	}

	/* Resize refused while mapped. */
	CHECK(tfs_write(&inst, "buffer_size_kb", "128", false) == -EBUSY,
	      "resize while mapped not refused");
	CHECK(tfs_write(&inst, "buffer_subbuf_size_kb", "16", false) == -EBUSY,
	      "sub-buffer resize while mapped not refused");

	/* Our consumer drains what is left and agrees with the kernel. */
	{
		int pages = 0;

		c.events = 0;
		err = tfs_cpu_consume(&c, true, nop_page_fn, &pages);
		CHECK(err >= 0, "consume: %s", strerror(-err));
	}
	tfs_cpu_close(&c);
	printf("meta_page_check/data_mmap %u KiB: ok\n", kb);
}

static void snapshot(void)
{
	struct tfs_cpu c;
	void *p;
	int fd, err;

	set_subbuf(4);
	err = tfs_write(&inst, "events/sched/sched_switch/trigger", "snapshot",
			false);
	if (err) {
		printf("snapshot: no snapshot trigger (%s): not checked\n",
		       strerror(-err));
		return;
	}
	fd = open_raw(O_NONBLOCK);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd,
		 0);
	CHECK(p == MAP_FAILED && errno == EBUSY,
	      "map with a snapshot trigger armed: %s",
	      p == MAP_FAILED ? strerror(errno) : "succeeded");
	untrack(fd);
	CHECK(!tfs_write(&inst, "events/sched/sched_switch/trigger",
			 "!snapshot", true),
	      "remove trigger");
	/* Through our consumer: mapped, then the trigger is refused. */
	err = tfs_cpu_open(&c, inst.path, 0, true, 4096);
	CHECK(!err && c.mapped, "map after the trigger went: %s",
	      strerror(-err));
	CHECK(tfs_write(&inst, "events/sched/sched_switch/trigger", "snapshot",
			false) == -EBUSY,
	      "snapshot trigger accepted while mapped");
	CHECK(tfs_write(&inst, "snapshot", "1", false) == -EBUSY,
	      "snapshot accepted while mapped");
	tfs_cpu_close(&c);
	printf("snapshot excludes map / excluded by map: ok\n");
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void blocking_eintr(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 200000 } };
	void *meta;
	int fd, r, e;

	set_subbuf(4);
	fd = open_raw(0); /* blocking */
	CHECK(fd >= 0, "open: %s", strerror(errno));
	meta = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
		    fd, 0);
	CHECK(meta != MAP_FAILED, "map: %s", strerror(errno));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
	setitimer(ITIMER_REAL, &it, NULL);
	r = ioctl(fd, TRACE_MMAP_IOCTL_GET_READER);
	e = errno;
	CHECK(r < 0 && e == EINTR, "blocking GET_READER on empty: %d (%s)", r,
	      strerror(e));
	munmap(meta, (size_t)sysconf(_SC_PAGESIZE));
	untrack(fd);
	printf("blocking GET_READER interrupted: EINTR ok\n");
}

static void partial_and_mappers(void)
{
	struct tfs_cpu c;
	const struct subbuf_meta *m;
	uint32_t id, rd;
	int fd2, pages = 0, err;
	struct subbuf_meta *m2;

	set_subbuf(4);
	err = tfs_cpu_open(&c, inst.path, 0, true, 4096);
	CHECK(!err && c.mapped, "open: %s", strerror(-err));
	m = c.meta;
	marker(3, "partial");
	CHECK(!ioctl(c.fd, TRACE_MMAP_IOCTL_GET_READER), "%s", strerror(errno));
	id = m->reader.id;
	rd = m->reader.read;
	CHECK(rd > 0, "no data after 3 markers");
	marker(3, "partial");
	/* A second mapper of the same buffer: it sees the same meta page
	 * and its ioctl moves the shared reader. */
	fd2 = open_raw(O_NONBLOCK);
	m2 = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
		  fd2, 0);
	CHECK(m2 != MAP_FAILED, "second mapper: %s", strerror(errno));
	CHECK(!ioctl(fd2, TRACE_MMAP_IOCTL_GET_READER), "second ioctl: %s",
	      strerror(errno));
	CHECK(m->reader.id == id && m->reader.read > rd,
	      "partial page: id %u->%u read %u->%u", id, m->reader.id, rd,
	      m->reader.read);
	CHECK(m2->reader.id == m->reader.id && m2->read == m->read &&
		      m2->read == 6,
	      "the mappers disagree: read %llu/%llu",
	      (unsigned long long)m->read, (unsigned long long)m2->read);
	munmap(m2, (size_t)sysconf(_SC_PAGESIZE));
	untrack(fd2);
	/* Our consumer: the 6 events of the partial page come out at the
	 * end as one page. */
	c.have = false;
	err = tfs_cpu_consume(&c, true, nop_page_fn, &pages);
	CHECK(err >= 0, "consume: %s", strerror(-err));
	CHECK(c.events == 6 && pages == 1, "consumer: %llu events in %d pages",
	      (unsigned long long)c.events, pages);
	tfs_cpu_close(&c);
	printf("partial page grows under one id; two mappers: ok\n");
}

static void missed_marks(void)
{
	struct tfs_cpu c;
	int pages = 0, err;

	CHECK(!tfs_write(&inst, "buffer_subbuf_size_kb", "4", true), "subbuf");
	CHECK(!tfs_write(&inst, "buffer_size_kb", "8", true), "size");
	CHECK(!tfs_write(&inst, "trace", "", true), "clear");
	err = tfs_cpu_open(&c, inst.path, 0, true, 4096);
	CHECK(!err && c.mapped, "open: %s", strerror(-err));
	/* Swap a first page out so the next swap reports loss. */
	marker(1, "first");
	CHECK(!ioctl(c.fd, TRACE_MMAP_IOCTL_GET_READER), "%s", strerror(errno));
	err = tfs_cpu_consume(&c, false, nop_page_fn, &pages);
	CHECK(err >= 0, "consume: %s", strerror(-err));
	marker(2000, "overflow-the-ring");
	err = tfs_cpu_consume(&c, true, nop_page_fn, &pages);
	CHECK(err >= 0, "consume: %s", strerror(-err));
	tfs_cpu_update_counts(&c);
	CHECK(c.overrun > 0, "no overrun after 2000 markers in 8 KiB");
	CHECK(c.lost_pages > 0, "no page marked with missed events");
	CHECK(c.meta->reader.lost_events == 0,
	      "reader.lost_events %llu (the kernel zeroes it)",
	      (unsigned long long)c.meta->reader.lost_events);
	CHECK(c.events + c.overrun == c.entries,
	      "%llu events + %llu overrun != %llu entries",
	      (unsigned long long)c.events, (unsigned long long)c.overrun,
	      (unsigned long long)c.entries);
	tfs_cpu_close(&c);
	printf("missed marks: %llu overrun, %llu pages marked, lost_events 0: ok\n",
	       (unsigned long long)c.overrun, (unsigned long long)c.lost_pages);
}

int main(void)
{
	char name[64];
	cpu_set_t set;
	struct stat st;
	int err;

	if (stat(TFS_DEFAULT_ROOT "/instances", &st))
		SKIP("no tracefs at %s", TFS_DEFAULT_ROOT);
	/* Everything on CPU 0, whose buffer is mapped. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CHECK(!sched_setaffinity(0, sizeof(set), &set), "affinity: %s",
	      strerror(errno));
	snprintf(name, sizeof(name), "perfring-maptest-%d", (int)getpid());
	err = tfs_instance_create(&inst, TFS_DEFAULT_ROOT, name);
	if (err == -EACCES || err == -EPERM)
		SKIP("cannot create a tracefs instance: %s", strerror(-err));
	CHECK(!err, "instance: %s", strerror(-err));
	atexit(cleanup);
	meta_page_check(4);
	meta_page_check(8);
	snapshot();
	blocking_eintr();
	partial_and_mappers();
	missed_marks();
	return 0;
}
