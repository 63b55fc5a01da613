// SPDX-License-Identifier: MIT
/*
 * perfring_data_convert(): perf data convert --to-ctf / --to-json.  The
 * input is read once, in time order (perf's ordered events: the reader's
 * FINISHED_ROUND queue, bounded), and every sample goes to the writer as
 * perf's session hands it to its tool: a PERF_SAMPLE_READ group sample as
 * one sample per read value (deliver_sample_value()).  The JSON writer
 * resolves addresses, so the side-band records (COMM, MMAP, FORK, ...)
 * also build the threads and maps; the CTF writer resolves nothing and
 * takes the side-band records as events with --all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "../common/log.h"
#include "../common/opts.h"
#include "../format/sample_read.h"
#include "../machine/threads.h"
#include "convert.h"

/* The progress callback: time looked at every PROGRESS_RECORDS records,
 * a call every PROGRESS_NS. */
#define PROGRESS_RECORDS 1024
#define PROGRESS_NS 100000000ull

struct conv {
	struct perfring_convert_opts o;
	struct prd_file *f;
	struct machine m;
	bool have_machine;
	struct ctf_conv *ctf;
	struct json_conv *json;
	struct sread rd;
	struct perfring_convert_stats st;
	uint64_t records;
	uint64_t progress_at; /* when the callback was called last (ns) */
};

static void fill_stats(struct conv *c)
{
	const struct conv_counts *n = c->ctf  ? ctf_conv_counts(c->ctf) :
				      c->json ? json_conv_counts(c->json) :
						NULL;
	const struct prd_stats *ps = c->f ? prd_stats(c->f) : NULL;

	if (n) {
		c->st.samples = n->samples;
		c->st.non_samples = n->non_samples;
		c->st.bytes = n->bytes;
		c->st.streams = n->streams;
		c->st.dropped = n->dropped;
	}
	if (c->json)
		c->st.output_bytes = json_conv_bytes(c->json);
	if (ps) {
		c->st.input_done = ps->data_bytes;
		c->st.lost_records = ps->nr_lost_records;
		c->st.lost = ps->nr_lost;
	}
	if (c->f && !prd_is_pipe(c->f))
		c->st.input_total = prd_data_size(c->f);
}

static int deliver(struct conv *c, const struct prd_event *ev,
		   const struct prd_attr *a, uint64_t id, uint64_t period)
{
	struct conv_sample cs = {
		.ev = ev, .s = ev->sample, .attr = a, .id = id, .period = period
	};

	return c->ctf ? ctf_conv_sample(c->ctf, &cs) :
			json_conv_sample(c->json, &cs);
}

struct read_value {
	struct conv *c;
	const struct prd_event *ev;
};

static int read_value(void *ctx, const struct prd_attr *a, uint64_t id,
		      uint64_t delta)
{
	struct read_value *rv = ctx;

	return deliver(rv->c, rv->ev, a, id, delta);
}

static int on_event(struct prd_file *f, const struct prd_event *ev, void *ctx)
{
	struct conv *c = ctx;
	const struct prd_sample *s = ev->sample;

	if (++c->records % PROGRESS_RECORDS == 0 && c->o.progress) {
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull +
		      (uint64_t)ts.tv_nsec;
		if (now - c->progress_at >= PROGRESS_NS) {
			c->progress_at = now;
			fill_stats(c);
			c->o.progress(&c->st, c->o.progress_ctx);
		}
	}
	if (ev->hdr->type != PERF_RECORD_SAMPLE) {
		if (c->json)
			return machine_process(&c->m, ev->rec);
		return ctf_conv_side(c->ctf, ev);
	}
	if (!s || !s->attr)
		return 0; /* an id no event has: perf skips it too */
	if (s->attr->attr.sample_type & PERF_SAMPLE_READ) {
		struct read_value rv = { c, ev };

		return sread_each(&c->rd, f, s, read_value, &rv);
	}
	return deliver(c, ev, s->attr, s->id, s->period);
}

/* perf_data__open()'s check: another user's file only when forced. */
static int check_owner(struct conv *c, const char *in)
{
	struct stat st;

	if (c->o.force || prd_is_pipe(c->f) || fstat(prd_fd(c->f), &st))
		return 0;
	if (st.st_uid && st.st_uid != geteuid()) {
		pr_err("data convert: %s is not owned by the current user or root (-f converts it anyway)",
		       in);
		return -EPERM;
	}
	return 0;
}

/* The JSON file: perf refuses an existing one unless forced. */
static int open_json(struct conv *c, FILE **out, bool *made)
{
	const char *path = c->o.to_json;
	struct stat st;
	int fd;

	*made = false;
	if (!strcmp(path, "-")) {
		*out = stdout;
		return 0;
	}
	if (!c->o.force && !lstat(path, &st)) {
		pr_err("data convert: %s exists (-f overwrites it)", path);
		return -EEXIST;
	}
	fd = perfring_file_create(path, 0);
	if (fd < 0)
		return fd;
	*made = !fstat(fd, &st) && S_ISREG(st.st_mode);
	*out = fdopen(fd, "w");
	if (!*out) {
		int err = -errno;

		close(fd);
		if (*made)
			unlink(path);
		return err;
	}
	return 0;
}

static int run(struct conv *c, const char *in)
{
	FILE *out = NULL;
	bool made = false;
	int err, perr, ferr;

	err = prd_open(in, &c->f);
	if (!err)
		err = check_owner(c, in);
	if (err)
		return err;
	if (c->o.to_ctf) {
		err = ctf_conv_new(c->o.to_ctf, c->f, c->o.all, c->o.tod,
				   &c->ctf);
	} else {
		err = machine_init(&c->m);
		c->have_machine = !err;
		if (!err)
			err = machine_use_build_ids(&c->m, c->f);
		if (!err)
			err = open_json(c, &out, &made);
		if (!err)
			err = json_conv_new(out, c->f, &c->m, &c->json);
	}
	if (err)
		goto out;
	perr = prd_process(c->f, true, on_event, c);
	/* Damage: what came before it is written out, completely. */
	if (perr && perr != -EBADMSG) {
		err = perr;
		goto out;
	}
	ferr = c->ctf ? ctf_conv_finish(c->ctf) : json_conv_finish(c->json);
	err = ferr ? ferr : perr;
out:
	fill_stats(c);
	if (out && out != stdout && fclose(out) && !err)
		err = -errno;
	if (err && err != -EBADMSG && made)
		unlink(c->o.to_json);
	return err;
}

PERFRING_API int perfring_data_convert(const struct perfring_convert_opts *opts,
				       struct perfring_convert_stats *st)
{
	struct conv *c;
	const char *in;
	int err;

	if (!opts || !OPTS_VALID(opts) || (st && !OPTS_VALID(st)))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	OPTS_COPY(&c->o, opts);
	c->st.sz = sizeof(c->st);
	in = c->o.input && *c->o.input ? c->o.input : "perf.data";
	if (!c->o.to_ctf == !c->o.to_json) {
		pr_err(c->o.to_ctf ?
			       "data convert: --to-ctf and --to-json cannot be given together" :
			       "data convert: --to-ctf DIR or --to-json FILE is needed");
		err = -EINVAL;
	} else if (c->o.to_json && (c->o.all || c->o.tod)) {
		pr_err("data convert: %s is not supported for JSON output (perf's neither)",
		       c->o.all ? "--all" : "--tod");
		err = -EINVAL;
	} else {
		err = run(c, in);
	}
	if (st)
		OPTS_FILL(st, &c->st);
	if (c->o.progress && !err)
		c->o.progress(&c->st, c->o.progress_ctx);
	ctf_conv_free(c->ctf);
	json_conv_free(c->json);
	sread_free(&c->rd);
	if (c->have_machine)
		machine_exit(&c->m);
	if (c->f)
		prd_close(c->f);
	free(c);
	return err;
}
