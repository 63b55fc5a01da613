/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.1 client for the stores the fleet pushes to and reads
 * from (fleet layer): one request per connection ("Connection: close"),
 * plain TCP (no TLS), every step under one deadline.  What a server
 * answers is hostile input: the status line and headers are bounded
 * (HTTP_HEAD_MAX), the body goes to a callback as it comes, framed by
 * Content-Length, chunked transfer coding or the end of the connection,
 * and the parser (http_parse_*) is a state machine fed in pieces of any
 * size (fuzz/fuzz_http.c).
 */
#ifndef PERFRING_FLEET_HTTP_H
#define PERFRING_FLEET_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX (16u << 10) /* status line + headers */
#define HTTP_ERR_TEXT 200 /* of an error's body, kept for the message */

/* http://[user[:password]@]host[:port][/prefix] */
struct http_url {
	char host[256]; /* name, IPv4 or IPv6 (without brackets) */
	char port[8];
	char prefix[256]; /* path before the request's own ("" or "/x") */
	char auth[256]; /* "user:password" ("" : none) */
};

/* 0, or -EINVAL (not such a URL; https is refused: no TLS here). */
int http_url_parse(const char *text, struct http_url *u);

/* ---- the response parser ----------------------------------------------- */

enum http_state {
	HP_HEAD, /* status line and headers */
	HP_BODY_LEN, /* Content-Length bytes */
	HP_CHUNK_SIZE, /* a chunk's size line */
	HP_CHUNK_DATA,
	HP_CHUNK_END, /* the CRLF after a chunk */
	HP_TRAILER, /* trailer lines after the last chunk */
	HP_BODY_EOF, /* until the connection closes */
	HP_DONE,
	HP_ERROR,
};

typedef int (*http_body_fn)(void *ctx, const void *p, size_t n);

struct http_parser {
	enum http_state state;
	int status; /* the status code, once the head is read */
	char head[HTTP_HEAD_MAX];
	size_t head_len;
	char line[64]; /* a chunk size or trailer line */
	size_t line_len;
	uint64_t left; /* of the body or the chunk */
	uint64_t body_bytes; /* handed to the callback */
	bool chunked, has_length;
	const char *why; /* HP_ERROR: what was wrong */
	http_body_fn body;
	void *ctx;
	int cb_err; /* the callback's error: parsing stopped */
};

void http_parse_init(struct http_parser *hp, http_body_fn body, void *ctx);
/* Feeds @n bytes.  Returns 0 (more wanted or done: state), -EBADMSG
 * (hp->why says what), or the body callback's error. */
int http_parse_feed(struct http_parser *hp, const void *p, size_t n);
/* The connection closed: 0 if the response was complete, -EBADMSG. */
int http_parse_eof(struct http_parser *hp);

/* ---- requests ------------------------------------------------------------ */

struct http_request {
	const char *method; /* "POST", "GET" */
	const char *path; /* after the URL's prefix, with its query */
	const char *content_type; /* NULL: none */
	const char *headers; /* more header lines, each ending "\r\n" (or NULL) */
	const void *body;
	size_t body_len;
	int timeout_ms; /* the whole exchange */
	/* the body of a 2xx answer, as it comes (NULL: dropped) */
	http_body_fn on_body;
	void *ctx;
};

struct http_response {
	int status; /* 0: no answer */
	/* a non-2xx answer's body, its first line, printable (for messages) */
	char text[HTTP_ERR_TEXT];
	uint64_t body_bytes;
	uint64_t sent_bytes; /* request bytes written */
};

/*
 * Sends @rq to @u and reads the answer.  Returns 0 when an answer came
 * (rs->status says which: the caller judges it), or -errno: -ETIMEDOUT,
 * -ECONNREFUSED, -EHOSTUNREACH, -EBADMSG (not HTTP), -ENOENT (the host
 * name does not resolve), or the body callback's error.
 */
int http_exchange(const struct http_url *u, const struct http_request *rq,
		  struct http_response *rs);

/* "HTTP 500: Code: 60 ..." or the errno's text, for "SINK: ..." messages. */
void http_error_text(int err, const struct http_response *rs, char *buf,
		     size_t len);

/* @s percent-encoded for a query value into @out (room @len); false if it
 * does not fit. */
bool http_query_escape(const char *s, char *out, size_t len);

#endif
