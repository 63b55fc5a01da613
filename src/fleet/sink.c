// SPDX-License-Identifier: MIT
/*
 * Requests for ClickHouse, Pyroscope and Parca, their delivery and the
 * spool (see sink.h; docs/design.md "Fleet profiling" says why each
 * store gets the format it gets).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../common/log.h"
#include "../format/safe_open.h"
#include "sink.h"

#define SPOOL_MAGIC "perfring-spool 1\n"
#define SPOOL_HEAD_MAX 8192

const char *const sink_kind_names[SINK_KINDS] = { "clickhouse", "pyroscope",
						  "parca" };

int sink_parse(const char *text, int timeout_ms, struct sink *s)
{
	const char *eq = strchr(text, '=');

	memset(s, 0, sizeof(*s));
	s->timeout_ms = timeout_ms;
	snprintf(s->name, sizeof(s->name), "%s", text);
	for (int k = 0; eq && k < SINK_KINDS; k++) {
		size_t n = strlen(sink_kind_names[k]);

		if ((size_t)(eq - text) != n ||
		    strncmp(text, sink_kind_names[k], n))
			continue;
		s->kind = (enum sink_kind)k;
		if (http_url_parse(eq + 1, &s->url)) {
			pr_err("--push %s: not an http://HOST[:PORT] URL (no TLS: a local proxy can add it)",
			       text);
			return -EINVAL;
		}
		return 0;
	}
	pr_err("--push %s: takes clickhouse=URL, pyroscope=URL or parca=URL",
	       text);
	return -EINVAL;
}

void sink_req_free(struct sink_req *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->ctype);
	free(r->headers);
	free(r->file);
	pb_free(&r->body);
	free(r);
}

static struct sink_req *req_new(const char *path, const char *ctype,
				const char *headers)
{
	struct sink_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->path = strdup(path);
	r->ctype = strdup(ctype);
	r->headers = strdup(headers);
	if (!r->path || !r->ctype || !r->headers) {
		sink_req_free(r);
		return NULL;
	}
	return r;
}

/* ---- ClickHouse ------------------------------------------------------- */

static int clickhouse_req(const struct fleet_profile *p, struct sink_req **out)
{
	char q[512], path[1024];
	struct sink_req *r;
	struct pb rows = { 0 };
	int err;

	snprintf(q, sizeof(q),
		 "INSERT INTO perfring.samples (%s) FORMAT RowBinary",
		 fleet_ch_columns);
	memcpy(path, "/?query=", 8);
	if (!http_query_escape(q, path + 8, sizeof(path) - 8))
		return -E2BIG;
	/* gzip: the rows' stacks repeat; ClickHouse (18.16 on) inflates a
	 * request body it is told is gzip */
	r = req_new(path, "application/octet-stream",
		    "Content-Encoding: gzip\r\n");
	if (!r)
		return -ENOMEM;
	err = fleet_rowbinary(p, &rows);
	if (!err)
		err = gzip_pb(rows.p, rows.len, &r->body);
	pb_free(&rows);
	if (err) {
		sink_req_free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* One statement, its text as the body (ClickHouse takes a POST's body as
 * the query). */
static int clickhouse_exec(struct sink *s, const char *sql,
			   struct http_response *rs, char *why, size_t len)
{
	struct http_request rq = { .method = "POST",
				   .path = "/",
				   .content_type = "text/plain",
				   .body = sql,
				   .body_len = strlen(sql),
				   .timeout_ms = s->timeout_ms };
	int err = http_exchange(&s->url, &rq, rs);

	if (!err && (rs->status < 200 || rs->status > 299))
		err = -EPROTO;
	if (err)
		http_error_text(err == -EPROTO ? 0 : err, rs, why, len);
	return err;
}

/* ---- Pyroscope --------------------------------------------------------- */

/* A label name or value as Pyroscope's name syntax takes it: its
 * separators ({},=) and spaces become '_'. */
static void label_text(const char *s, char *out, size_t room)
{
	size_t o = 0;

	for (; *s && o + 1 < room; s++)
		out[o++] = strchr("{},= \t\r\n\"", *s) ? '_' : *s;
	out[o] = 0;
}

static const char *service_of(const struct fleet_meta *m)
{
	return m && m->service && *m->service ? m->service : "perfring";
}

/* "cpu" for the clocks (Pyroscope's CPU profile type), else the event. */
static void event_suffix(const struct fleet_profile *p, char *out, size_t room)
{
	if (!p->nr_events || p->events[0].clock)
		snprintf(out, room, "cpu");
	else
		label_text(p->events[0].name, out, room);
}

static int pyroscope_req(const struct fleet_profile *p, struct sink_req **out)
{
	const struct fleet_meta *m = p->meta;
	char name[2048], ev[64], esc[6144], path[8192], t[256];
	size_t o;
	uint64_t from = p->start_ns / 1000000000u,
		 until = (p->end_ns + 999999999u) / 1000000000u;
	uint64_t rate = p->nr_events && p->events[0].freq ? p->events[0].freq :
							    100;
	struct sink_req *r;
	int err;

	label_text(service_of(m), t, sizeof(t));
	event_suffix(p, ev, sizeof(ev));
	o = (size_t)snprintf(name, sizeof(name), "%s.%s{host=", t, ev);
	label_text(m && m->host ? m->host : "", t, sizeof(t));
	o += (size_t)snprintf(name + o, sizeof(name) - o, "%s", t);
	for (int i = 0; m && i < m->nr_labels && o < sizeof(name); i++) {
		if (!strcmp(m->keys[i], "service") ||
		    !strcmp(m->keys[i], "host"))
			continue;
		label_text(m->keys[i], t, sizeof(t));
		o += (size_t)snprintf(name + o, sizeof(name) - o, ",%s=", t);
		if (o >= sizeof(name))
			break;
		label_text(m->values[i], t, sizeof(t));
		o += (size_t)snprintf(name + o, sizeof(name) - o, "%s", t);
	}
	if (o + 2 > sizeof(name) ||
	    !http_query_escape(strcat(name, "}"), esc, sizeof(esc)))
		return -E2BIG;
	if (until <= from)
		until = from + 1;
	snprintf(path, sizeof(path),
		 "/ingest?name=%s&from=%" PRIu64 "&until=%" PRIu64
		 "&format=pprof&sampleRate=%" PRIu64
		 "&spyName=perfring&units=samples&aggregationType=sum",
		 esc, from, until, rate);
	r = req_new(path, "binary/octet-stream", "");
	if (!r)
		return -ENOMEM;
	err = fleet_pprof(p, false, &r->body);
	if (err) {
		sink_req_free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* ---- Parca ----------------------------------------------------------- */

static void put_pair(struct pb *set, struct pb *lab, const char *k,
		     const char *v)
{
	pb_str(lab, 1, k);
	pb_str(lab, 2, v);
	pb_msg(set, 1, lab); /* LabelSet.labels */
}

static int parca_req(const struct fleet_profile *p, struct sink_req **out)
{
	const struct fleet_meta *m = p->meta;
	struct pb gz = { 0 }, set = { 0 }, lab = { 0 }, series = { 0 },
		  smp = { 0 };
	struct sink_req *r;
	char name[80], ev[64];
	int err;

	r = req_new("/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw",
		    "application/proto", "Connect-Protocol-Version: 1\r\n");
	if (!r)
		return -ENOMEM;
	err = fleet_pprof(p, false, &gz);
	if (err)
		goto out;
	event_suffix(p, ev, sizeof(ev));
	snprintf(name, sizeof(name), "%s_%s",
		 strcmp(ev, "cpu") ? "perfring" : "process", ev);
	put_pair(&set, &lab, "__name__", name);
	put_pair(&set, &lab, "host", m && m->host ? m->host : "");
	for (int i = 0; m && i < m->nr_labels; i++)
		if (strcmp(m->keys[i], "host"))
			put_pair(&set, &lab, m->keys[i], m->values[i]);
	pb_msg(&series, 1, &set); /* RawProfileSeries.labels */
	pb_bytes(&smp, 1, gz.p, gz.len); /* RawSample.raw_profile */
	pb_msg(&series, 2, &smp); /* RawProfileSeries.samples */
	pb_msg(&r->body, 2, &series); /* WriteRawRequest.series */
	err = r->body.err ? r->body.err : series.err ? series.err : lab.err;
out:
	pb_free(&gz);
	pb_free(&set);
	pb_free(&lab);
	pb_free(&series);
	pb_free(&smp);
	if (err) {
		sink_req_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int sink_encode(const struct sink *s, const struct fleet_profile *p,
		struct sink_req **out)
{
	int err;

	switch (s->kind) {
	case SINK_CLICKHOUSE:
		err = clickhouse_req(p, out);
		break;
	case SINK_PYROSCOPE:
		err = pyroscope_req(p, out);
		break;
	default:
		err = parca_req(p, out);
		break;
	}
	if (!err) {
		(*out)->bytes = (*out)->body.len;
		(*out)->samples = p->nr_samples;
	}
	return err;
}

/* ---- delivery ---------------------------------------------------------- */

/* A spool file's body (after its head), malloc'd. */
static int spool_body(const char *file, void **body, size_t *len)
{
	int fd = safe_open_regular(file, NULL, NULL);
	struct stat st;
	char *buf, *sep;
	size_t done = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || st.st_size > SPOOL_FILE_MAX) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	buf[done] = 0;
	sep = memmem(buf, done < SPOOL_HEAD_MAX ? done : SPOOL_HEAD_MAX, "\n\n",
		     2);
	if (!sep) {
		free(buf);
		return -EBADMSG;
	}
	*len = done - (size_t)(sep + 2 - buf);
	memmove(buf, sep + 2, *len);
	*body = buf;
	return 0;
}

int sink_deliver(struct sink *s, const struct sink_req *r,
		 struct http_response *rs, char *why, size_t len)
{
	struct http_request rq = { .method = "POST",
				   .path = r->path,
				   .content_type = r->ctype,
				   .headers = r->headers,
				   .body = r->body.p,
				   .body_len = r->body.len,
				   .timeout_ms = s->timeout_ms };
	void *body = NULL;
	int err = 0;

	memset(rs, 0, sizeof(*rs));
	if (s->kind == SINK_CLICKHOUSE && !s->schema_ok) {
		err = clickhouse_exec(s,
				      "CREATE DATABASE IF NOT EXISTS perfring",
				      rs, why, len);
		if (!err)
			err = clickhouse_exec(s, fleet_ch_schema, rs, why, len);
		if (err)
			return err;
		s->schema_ok = true;
	}
	if (r->file) {
		err = spool_body(r->file, &body, &rq.body_len);
		if (err) {
			snprintf(why, len, "spool file %s: %s", r->file,
				 err == -EBADMSG ? "damaged" : strerror(-err));
			return err;
		}
		rq.body = body;
	}
	err = http_exchange(&s->url, &rq, rs);
	free(body);
	if (!err && (rs->status < 200 || rs->status > 299))
		err = -EPROTO;
	if (err) {
		http_error_text(err == -EPROTO ? 0 : err, rs, why, len);
		if (err != -EPROTO)
			s->schema_ok = false; /* a server restarted: again */
	}
	return err;
}

/* ---- spool --------------------------------------------------------------- */

void spool_dir_of(const struct sink *s, const char *dir, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "%s/%s-", dir,
				    sink_kind_names[s->kind]);

	for (const char *c = s->url.host; *c && o + 1 < len; c++)
		out[o++] = (*c >= 'a' && *c <= 'z') ||
					   (*c >= 'A' && *c <= 'Z') ||
					   (*c >= '0' && *c <= '9') ||
					   *c == '.' || *c == '-' ?
				   *c :
				   '_';
	if (o < len)
		snprintf(out + o, len - o, "-%s", s->url.port);
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int spool_put(const char *sdir, uint64_t seq, struct sink_req *r)
{
	char tmp[4300], path[4200], head[SPOOL_HEAD_MAX];
	struct timespec ts;
	int fd, err, n;

	if (mkdir(sdir, 0700) && errno != EEXIST)
		return -errno;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(path, sizeof(path), "%s/%020" PRIu64 "-%06" PRIu64 ".req",
		 sdir, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
		 seq % 1000000);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(head, sizeof(head),
		     SPOOL_MAGIC "path %s\ntype %s\nsamples %" PRIu64 "\n",
		     r->path, r->ctype, r->samples);
	for (const char *h = r->headers;
	     *h && n > 0 && (size_t)n < sizeof(head);) {
		size_t l = strcspn(h, "\r\n");

		n += snprintf(head + n, sizeof(head) - (size_t)n,
			      "header %.*s\n", (int)l, h);
		h += l;
		h += strspn(h, "\r\n");
	}
	if (n < 0 || (size_t)n + 1 >= sizeof(head))
		return -E2BIG;
	head[n++] = '\n';
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, head, (size_t)n);
	if (!err)
		err = write_all(fd, r->body.p, r->body.len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	r->file = strdup(path);
	if (!r->file) {
		unlink(path);
		return -ENOMEM;
	}
	pb_free(&r->body);
	return 0;
}

/* The head's line "@key VALUE" (@p..@end), VALUE malloc'd into *@out. */
static int head_value(const char *line, size_t n, const char *key, char **out)
{
	size_t k = strlen(key);

	if (n <= k || memcmp(line, key, k) || line[k] != ' ')
		return 0;
	for (size_t i = k + 1; i < n; i++)
		if ((unsigned char)line[i] < ' ' || line[i] == 0x7f)
			return -EBADMSG;
	*out = strndup(line + k + 1, n - k - 1);
	return *out ? 1 : -ENOMEM;
}

int spool_get(const char *path, struct sink_req **out)
{
	int fd = safe_open_regular(path, NULL, NULL);
	char head[SPOOL_HEAD_MAX + 1], hdrs[SPOOL_HEAD_MAX] = "";
	struct sink_req *r;
	struct stat st;
	ssize_t n;
	const char *p, *end, *sep;
	size_t ho = 0;
	int err = 0;

	if (fd < 0)
		return fd;
	n = pread(fd, head, SPOOL_HEAD_MAX, 0);
	if (fstat(fd, &st) || n < 0) {
		close(fd);
		return -EIO;
	}
	close(fd);
	head[n] = 0;
	sep = memmem(head, (size_t)n, "\n\n", 2);
	if (n < (ssize_t)sizeof(SPOOL_MAGIC) - 1 || !sep ||
	    memcmp(head, SPOOL_MAGIC, sizeof(SPOOL_MAGIC) - 1) ||
	    st.st_size > SPOOL_FILE_MAX)
		return -EBADMSG;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->bytes = (uint64_t)st.st_size - (uint64_t)(sep + 2 - head);
	for (p = head + sizeof(SPOOL_MAGIC) - 1; p < sep && err >= 0;
	     p = end + 1) {
		size_t ln;
		char *v = NULL;

		end = memchr(p, '\n', (size_t)(sep + 1 - p));
		if (!end)
			break;
		ln = (size_t)(end - p);
		if (!r->path && (err = head_value(p, ln, "path", &r->path)))
			continue;
		if (!r->ctype && (err = head_value(p, ln, "type", &r->ctype)))
			continue;
		err = head_value(p, ln, "header", &v);
		if (err == 1) {
			if (ho + strlen(v) + 3 < sizeof(hdrs) && strchr(v, ':'))
				ho += (size_t)snprintf(hdrs + ho,
						       sizeof(hdrs) - ho,
						       "%s\r\n", v);
			free(v);
			continue;
		}
		if (!err && ln > 8 && !strncmp(p, "samples ", 8))
			r->samples = strtoull(p + 8, NULL, 10);
	}
	if (err > 0)
		err = 0;
	r->headers = strdup(hdrs);
	r->file = strdup(path);
	if (!err && (!r->path || !r->ctype || r->path[0] != '/'))
		err = -EBADMSG;
	if (!err && (!r->headers || !r->file))
		err = -ENOMEM;
	if (err) {
		sink_req_free(r);
		return err;
	}
	*out = r;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(strrchr(*(char *const *)a, '/'),
		      strrchr(*(char *const *)b, '/'));
}

/* The "*.req" files of directory @sdir into @v (grown). */
static int list_dir(const char *sdir, char ***v, size_t *nr, size_t *cap)
{
	DIR *d = opendir(sdir);
	struct dirent *de;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char *p;

		if (l < 5 || strcmp(de->d_name + l - 4, ".req"))
			continue;
		if (*nr == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			char **n = realloc(*v, c * sizeof(*n));

			if (!n)
				break;
			*v = n;
			*cap = c;
		}
		if (asprintf(&p, "%s/%s", sdir, de->d_name) < 0)
			break;
		(*v)[(*nr)++] = p;
	}
	closedir(d);
	return 0;
}

int spool_scan(const char *dir, enum sink_kind kind, const char *only,
	       struct sink_req **head, struct sink_req **tail, uint64_t *bytes,
	       uint32_t *nr)
{
	char **v = NULL;
	size_t n = 0, cap = 0, kl = strlen(sink_kind_names[kind]);
	int err = 0;

	if (only) {
		err = list_dir(only, &v, &n, &cap);
	} else {
		DIR *d = opendir(dir);
		struct dirent *de;

		if (!d)
			return -errno;
		while ((de = readdir(d)) && !err) {
			char sub[4200];

			if (strncmp(de->d_name, sink_kind_names[kind], kl) ||
			    de->d_name[kl] != '-')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			err = list_dir(sub, &v, &n, &cap);
		}
		closedir(d);
	}
	if (n)
		qsort(v, n, sizeof(*v), name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct sink_req *r = NULL;
		int e = err ? err : spool_get(v[i], &r);

		if (e == -EBADMSG)
			pr_warn("spool: %s: not a perfring spool file (or damaged): left alone",
				v[i]);
		if (!e) {
			if (*tail)
				(*tail)->next = r;
			else
				*head = r;
			*tail = r;
			*bytes += r->bytes;
			(*nr)++;
		}
		free(v[i]);
	}
	free(v);
	return err;
}
