/* SPDX-License-Identifier: MIT */
/*
 * The stores a fleet pushes to (fleet layer): what each takes and how it
 * is sent, and the spool where requests wait for a store that is down.
 *
 *  - clickhouse: rows into perfring.samples (created if missing) through
 *    ClickHouse's HTTP interface, "INSERT ... FORMAT RowBinary", gzip;
 *  - pyroscope: POST /ingest?name=SERVICE.cpu{LABELS}&from=&until=
 *    &format=pprof&sampleRate=, the gzip pprof as the body;
 *  - parca: POST /parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw
 *    in the Connect protocol (a unary call: the protobuf message is the
 *    body, application/proto), a WriteRawRequest with the labels and the
 *    gzip pprof.
 *
 * A request is encoded once per interval and kept, in memory or as a
 * spool file, until its store answers 2xx.  Spool files
 * (DIR/KIND-HOST-PORT/TIME-SEQ.req) start with a text head (the path, the
 * content type, extra header lines), then the body; a file is written
 * under a temporary name and renamed, so a reader never sees half of one.
 * What a spool file holds is checked as hostile input when read back.
 */
#ifndef PERFRING_FLEET_SINK_H
#define PERFRING_FLEET_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include "../format/pbuf.h"
#include "http.h"
#include "profile.h"

enum sink_kind { SINK_CLICKHOUSE, SINK_PYROSCOPE, SINK_PARCA, SINK_KINDS };

#define SPOOL_FILE_MAX (256u << 20) /* one request, read back */

struct sink_req {
	struct sink_req *next;
	char *path; /* after the URL's prefix, with the query */
	char *ctype;
	char *headers; /* "" or lines ending in CRLF */
	struct pb body; /* in memory (no spool) */
	char *file; /* the spool file holding it (body not loaded) */
	uint64_t bytes; /* body bytes */
	uint64_t samples;
};

struct sink {
	enum sink_kind kind;
	char name[128]; /* "clickhouse=http://h:p" as given */
	struct http_url url;
	int timeout_ms;
	bool schema_ok; /* clickhouse: the table exists (this run) */
};

extern const char *const sink_kind_names[SINK_KINDS];

/* "KIND=URL" into @s.  0 or -EINVAL (the log says why). */
int sink_parse(const char *text, int timeout_ms, struct sink *s);
/* The request carrying @p for @s.  0 or -ENOMEM. */
int sink_encode(const struct sink *s, const struct fleet_profile *p,
		struct sink_req **out);
void sink_req_free(struct sink_req *r);
/*
 * Sends @r (read from its spool file if it has one) to @s.  0 when the
 * store took it; else -errno, and @why says what failed ("HTTP 500: ...",
 * "Connection refused").  @rs gets the answer.
 */
int sink_deliver(struct sink *s, const struct sink_req *r,
		 struct http_response *rs, char *why, size_t len);

/* The spool directory of @s under @dir ("DIR/KIND-HOST-PORT"). */
void spool_dir_of(const struct sink *s, const char *dir, char *out, size_t len);
/* @r into a new file of @sdir (made if missing); r->file set, the body
 * freed.  0 or -errno. */
int spool_put(const char *sdir, uint64_t seq, struct sink_req *r);
/* A spool file as a request (file set, body not loaded).  0, -EBADMSG
 * (not a spool file, or damaged), -errno. */
int spool_get(const char *path, struct sink_req **out);
/*
 * The spool files for @kind, oldest first: those of every directory of
 * @dir named "KIND-...", or of directory @only if not NULL.  They are
 * appended to the list at *@head (last: *@tail), their bytes added to
 * *@bytes, their number to *@nr.  Damaged files are skipped with a
 * warning.  0 or -errno.
 */
int spool_scan(const char *dir, enum sink_kind kind, const char *only,
	       struct sink_req **head, struct sink_req **tail, uint64_t *bytes,
	       uint32_t *nr);

#endif
