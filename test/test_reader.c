// SPDX-License-Identifier: MIT
/*
 * The per-sample reader API (perfring_data_*) under ASan/UBSan on files
 * perfring_record() writes here: every sample perfring_script() prints
 * reaches the callback once, with the same thread and time; filters cut
 * what they say; tracepoint fields are read by name (sched_switch's
 * prev_pid is the switching thread); misuse is refused.  The Python
 * bindings over the same calls are tested by test/reader_api.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfring/tools.h>
#include "harness.h"

struct count {
	unsigned long samples, switches, bad_prev_pid, chains;
	uint64_t last_time;
	bool unordered;
	int stop_after;
};

static int on_sample(struct perfring_data *r, const struct perfring_sample *s,
		     void *ctx)
{
	struct count *c = ctx;
	uint64_t v = 0;
	char text[64];

	CHECK(s->sz >= sizeof(*s), "sz %zu", s->sz);
	CHECK(s->event && s->comm, "no event or comm");
	if (s->time < c->last_time)
		c->unordered = true;
	c->last_time = s->time;
	c->samples++;
	c->chains += s->nr_callchain > 0;
	for (uint32_t i = 0; i < s->nr_callchain; i++)
		CHECK(!s->callchain[i].sym || s->callchain[i].sym[0],
		      "empty symbol name");
	if (!strcmp(s->event, "sched:sched_switch")) {
		c->switches++;
		CHECK_EQ(perfring_data_field(r, s, "prev_pid", &v, NULL, 0), 0);
		if ((int32_t)v != s->tid)
			c->bad_prev_pid++;
		CHECK_EQ(perfring_data_field(r, s, "prev_comm", NULL, text,
					     sizeof(text)),
			 1);
		CHECK_EQ(perfring_data_field(r, s, "no_such_field", &v, text,
					     sizeof(text)),
			 -ENOENT);
	} else {
		CHECK_EQ(perfring_data_field(r, s, "prev_pid", &v, NULL, 0),
			 -ENOENT);
	}
	if (c->stop_after && c->samples == (unsigned long)c->stop_after)
		return 42;
	return 0;
}

static unsigned long count_lines(const char *path, const char *fields)
{
	PERFRING_OPTS(perfring_script_opts, so, .input = path, .fields = fields,
		      .hide_callchain = true);
	FILE *f = tmpfile();
	unsigned long n = 0;
	int ch;

	CHECK(f, "tmpfile");
	CHECK_EQ(perfring_script(&so, f), 0);
	rewind(f);
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

static int read_all(const struct perfring_script_opts *o, struct count *c)
{
	struct perfring_data *r;
	int err = perfring_data_open(o, &r);

	CHECK_EQ(err, 0);
	err = perfring_data_run(r, on_sample, c);
	CHECK_EQ(perfring_data_run(r, on_sample, c), -EALREADY);
	perfring_data_close(r);
	return err;
}

static int record(const char *out, const char *event, bool all_cpus)
{
	const char *events[] = { event };
	char *const argv[] = {
		"sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done",
		NULL
	};
	PERFRING_OPTS(perfring_record_opts, ro, .events = events,
		      .nr_events = 1, .output = out, .argv = argv,
		      .callchain = true, .all_cpus = all_cpus,
		      .control_fd = -1);
	PERFRING_OPTS(perfring_record_stats, st);

	return perfring_record(&ro, &st);
}

int main(void)
{
	const char *dir = test_tmpdir("reader");
	char clock_data[512], sw_data[512];
	struct count c = { 0 };
	int err;

	snprintf(clock_data, sizeof(clock_data), "%s/clock.data", dir);
	snprintf(sw_data, sizeof(sw_data), "%s/sw.data", dir);
	err = record(clock_data, "cpu-clock", false);
	if (err == -EACCES || err == -EPERM || err == -ENOSYS)
		SKIP("the kernel refuses perf_event_open: %s", strerror(-err));
	CHECK_EQ(err, 0);

	/* Every sample script prints, once, in time order, with chains. */
	{
		PERFRING_OPTS(perfring_script_opts, o, .input = clock_data);
		unsigned long lines = count_lines(clock_data, "comm,tid,time");

		CHECK_EQ(read_all(&o, &c), 0);
		CHECK(c.samples > 0, "no samples");
		CHECK_EQ(c.samples, lines);
		CHECK(!c.unordered, "samples out of time order");
		CHECK(c.chains > 0, "no callchains");
		printf("cpu-clock: %lu samples, as perfring script\n",
		       c.samples);
	}
	/* Filters: a thread name, a time window, what script keeps. */
	{
		PERFRING_OPTS(perfring_script_opts, o, .input = clock_data,
			      .comm_list = "sh", .hide_callchain = true);
		PERFRING_OPTS(perfring_script_opts, so, .input = clock_data,
			      .comm_list = "sh", .hide_callchain = true,
			      .fields = "comm");
		FILE *f = tmpfile();
		unsigned long lines = 0;
		struct count d = { 0 };
		int ch;

		CHECK(f, "tmpfile");
		CHECK_EQ(perfring_script(&so, f), 0);
		rewind(f);
		while ((ch = fgetc(f)) != EOF)
			lines += ch == '\n';
		fclose(f);
		CHECK_EQ(read_all(&o, &d), 0);
		CHECK_EQ(d.samples, lines);
		CHECK(d.samples > 0 && d.samples <= c.samples,
		      "--comm sh kept %lu of %lu", d.samples, c.samples);
		CHECK_EQ(d.chains, 0);
		o.comm_list = "no-such-comm";
		memset(&d, 0, sizeof(d));
		CHECK_EQ(read_all(&o, &d), 0);
		CHECK_EQ(d.samples, 0);
	}
	/* A nonzero return stops the run and comes back. */
	{
		PERFRING_OPTS(perfring_script_opts, o, .input = clock_data);
		struct count d = { .stop_after = 3 };

		CHECK_EQ(read_all(&o, &d), 42);
		CHECK_EQ(d.samples, 3);
	}
	/* Misuse. */
	{
		PERFRING_OPTS(perfring_script_opts, o, .input = clock_data,
			      .time_range = "5,1");
		struct perfring_data *r = NULL;

		CHECK_EQ(perfring_data_open(&o, &r), -EINVAL);
		o.time_range = NULL;
		o.input = "/nonexistent/perf.data";
		CHECK(perfring_data_open(&o, &r) < 0, "a missing file");
		CHECK_EQ(perfring_data_open(NULL, &r), -EINVAL);
		CHECK_EQ(perfring_data_run(NULL, on_sample, NULL), -EINVAL);
		perfring_data_close(NULL);
	}
	/* Tracepoint fields by name. */
	err = record(sw_data, "sched:sched_switch", true);
	if (err == -EACCES || err == -EPERM || err == -ENOENT) {
		REFUSED("sched:sched_switch refused: %s", strerror(-err));
	} else {
		PERFRING_OPTS(perfring_script_opts, o, .input = sw_data);
		struct count d = { 0 };

		CHECK_EQ(err, 0);
		CHECK_EQ(read_all(&o, &d), 0);
		CHECK(d.switches > 0, "no sched_switch samples");
		CHECK_EQ(d.bad_prev_pid, 0);
		printf("sched_switch: %lu samples, prev_pid by name = the thread\n",
		       d.switches);
	}
	return test_exit();
}
