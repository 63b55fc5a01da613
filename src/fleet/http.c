// SPDX-License-Identifier: MIT
/*
 * The fleet's HTTP/1.1 client (see http.h).  Requests are small and few
 * (one per sink per interval), so each has its own connection, closed
 * after the answer: no pooling, no pipelining, nothing kept between
 * requests that a misbehaving server could have left in a bad state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "http.h"

/* ---- URLs ---------------------------------------------------------------- */

static bool copy_part(char *dst, size_t room, const char *s, size_t n)
{
	if (n >= room)
		return false;
	memcpy(dst, s, n);
	dst[n] = 0;
	return true;
}

int http_url_parse(const char *text, struct http_url *u)
{
	const char *p, *end, *at, *host, *colon = NULL;
	size_t hlen;

	memset(u, 0, sizeof(*u));
	if (!text || strncasecmp(text, "http://", 7))
		return -EINVAL;
	p = text + 7;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at) {
		if (!copy_part(u->auth, sizeof(u->auth), p, (size_t)(at - p)))
			return -EINVAL;
		p = at + 1;
	}
	host = p;
	if (*p == '[') { /* [IPv6]:port */
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (!rb)
			return -EINVAL;
		host = p + 1;
		hlen = (size_t)(rb - host);
		if (rb + 1 < end) {
			if (rb[1] != ':')
				return -EINVAL;
			colon = rb + 1;
		}
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		hlen = (size_t)((colon ? colon : end) - p);
	}
	if (!hlen || !copy_part(u->host, sizeof(u->host), host, hlen))
		return -EINVAL;
	if (colon) {
		size_t plen = (size_t)(end - colon - 1);
		unsigned long port;
		char *e;

		if (!plen ||
		    !copy_part(u->port, sizeof(u->port), colon + 1, plen))
			return -EINVAL;
		errno = 0;
		port = strtoul(u->port, &e, 10);
		if (errno || *e || !port || port > 65535 || u->port[0] == '+' ||
		    u->port[0] == '-')
			return -EINVAL;
	} else {
		strcpy(u->port, "80");
	}
	if (*end == '/') {
		size_t n = strcspn(end, "?#");

		while (n && end[n - 1] == '/') /* "http://h:1/" */
			n--;
		if (!copy_part(u->prefix, sizeof(u->prefix), end, n))
			return -EINVAL;
	} else if (*end) {
		return -EINVAL; /* a query or fragment without a path */
	}
	for (const char *c = u->host; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == '/' || *c == '@')
			return -EINVAL;
	for (const char *c = u->prefix; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return -EINVAL;
	return 0;
}

bool http_query_escape(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '~') {
			if (o + 1 >= len)
				return false;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= len)
				return false;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (o >= len)
		return false;
	out[o] = 0;
	return true;
}

/* ---- the response parser ---------------------------------------------- */

void http_parse_init(struct http_parser *hp, http_body_fn body, void *ctx)
{
	memset(hp, 0, sizeof(*hp));
	hp->state = HP_HEAD;
	hp->body = body;
	hp->ctx = ctx;
}

static int fail(struct http_parser *hp, const char *why)
{
	hp->state = HP_ERROR;
	hp->why = why;
	return -EBADMSG;
}

/* Header @name's value in the head (case-insensitive name), its length in
 * *@vlen; NULL if absent.  -1 in *@dup if it appears twice. */
static const char *header_value(const char *head, size_t len, const char *name,
				size_t *vlen, int *dup)
{
	size_t nl = strlen(name);
	const char *found = NULL, *p = memchr(head, '\n', len), *end;

	*dup = 0;
	end = head + len;
	while (p && p + 1 < end) {
		const char *line = p + 1,
			   *eol = memchr(line, '\n', (size_t)(end - line));
		const char *v;

		if (!eol)
			break;
		if ((size_t)(eol - line) > nl && line[nl] == ':' &&
		    !strncasecmp(line, name, nl)) {
			const char *ve = eol;

			v = line + nl + 1;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' ||
					  ve[-1] == '\t'))
				ve--;
			if (found)
				*dup = -1;
			found = v;
			*vlen = (size_t)(ve - v);
		}
		p = eol;
	}
	return found;
}

/* The head is complete (hp->head, hp->head_len): status and framing. */
static int head_done(struct http_parser *hp)
{
	const char *h = hp->head, *v;
	size_t vlen = 0;
	int dup, status = 0;

	if (hp->head_len < 12 || memcmp(h, "HTTP/1.", 7) ||
	    (h[7] != '0' && h[7] != '1') || h[8] != ' ')
		return fail(hp, "not an HTTP/1.x status line");
	for (int i = 9; i < 12; i++) {
		if (h[i] < '0' || h[i] > '9')
			return fail(hp, "bad status code");
		status = status * 10 + (h[i] - '0');
	}
	if (status < 100 || (hp->head_len > 12 && h[12] != ' ' &&
			     h[12] != '\r' && h[12] != '\n'))
		return fail(hp, "bad status code");
	if (status < 200) { /* 100 Continue and the like: the next head */
		hp->head_len = 0;
		return 0;
	}
	hp->status = status;
	v = header_value(h, hp->head_len, "Transfer-Encoding", &vlen, &dup);
	if (v) {
		/* chunked must be the last coding; nothing else is decoded */
		if (vlen < 7 || strncasecmp(v + vlen - 7, "chunked", 7) ||
		    vlen != 7)
			return fail(hp, "unsupported Transfer-Encoding");
		hp->chunked = true;
	}
	v = header_value(h, hp->head_len, "Content-Length", &vlen, &dup);
	if (v && !hp->chunked) {
		uint64_t n = 0;

		if (dup || !vlen || vlen > 19)
			return fail(hp, "bad Content-Length");
		for (size_t i = 0; i < vlen; i++) {
			if (v[i] < '0' || v[i] > '9')
				return fail(hp, "bad Content-Length");
			n = n * 10 + (uint64_t)(v[i] - '0');
		}
		hp->has_length = true;
		hp->left = n;
	}
	if (status == 204 || status == 304 || (hp->has_length && !hp->left))
		hp->state = HP_DONE;
	else if (hp->chunked)
		hp->state = HP_CHUNK_SIZE;
	else if (hp->has_length)
		hp->state = HP_BODY_LEN;
	else
		hp->state = HP_BODY_EOF;
	return 0;
}

static int give_body(struct http_parser *hp, const unsigned char *p, size_t n)
{
	int err = 0;

	hp->body_bytes += n;
	if (hp->body && n)
		err = hp->body(hp->ctx, p, n);
	if (err) {
		hp->cb_err = err;
		hp->state = HP_ERROR;
		hp->why = "stopped by the reader";
	}
	return err;
}

/* A chunk size line ("1a;ext=v"). */
static int chunk_size(struct http_parser *hp)
{
	uint64_t n = 0;
	size_t i = 0, digits = 0;

	for (; i < hp->line_len; i++, digits++) {
		char c = hp->line[i];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 :
					       -1;

		if (d < 0)
			break;
		if (n >> 60)
			return fail(hp, "chunk size too large");
		n = n << 4 | (uint64_t)d;
	}
	if (!digits || (i < hp->line_len && hp->line[i] != ';' &&
			hp->line[i] != ' ' && hp->line[i] != '\t'))
		return fail(hp, "bad chunk size");
	hp->left = n;
	hp->state = n ? HP_CHUNK_DATA : HP_TRAILER;
	return 0;
}

/* Collects a line (without CR LF) into hp->line; 1 when complete. */
static int line_byte(struct http_parser *hp, unsigned char c)
{
	if (c == '\n') {
		if (hp->line_len && hp->line[hp->line_len - 1] == '\r')
			hp->line_len--;
		return 1;
	}
	if (hp->line_len + 1 >= sizeof(hp->line)) {
		/* chunk extensions and trailers are skipped past the room */
		if (hp->state == HP_CHUNK_SIZE &&
		    !memchr(hp->line, ';', hp->line_len))
			return fail(hp, "chunk size line too long");
		return 0;
	}
	hp->line[hp->line_len++] = (char)c;
	return 0;
}

int http_parse_feed(struct http_parser *hp, const void *data, size_t n)
{
	const unsigned char *p = data, *end = p + n;
	int r;

	while (p < end) {
		switch (hp->state) {
		case HP_HEAD:
			while (p < end) {
				if (hp->head_len >= sizeof(hp->head))
					return fail(hp, "headers too long");
				hp->head[hp->head_len++] = (char)*p++;
				if (hp->head_len >= 2 &&
				    hp->head[hp->head_len - 1] == '\n' &&
				    (hp->head[hp->head_len - 2] == '\n' ||
				     (hp->head_len >= 4 &&
				      !memcmp(hp->head + hp->head_len - 4,
					      "\r\n\r\n", 4)))) {
					r = head_done(hp);
					if (r)
						return r;
					break;
				}
			}
			break;
		case HP_BODY_LEN:
		case HP_CHUNK_DATA: {
			size_t k = (size_t)(end - p);

			if (k > hp->left)
				k = (size_t)hp->left;
			r = give_body(hp, p, k);
			if (r)
				return r;
			p += k;
			hp->left -= k;
			if (!hp->left)
				hp->state = hp->state == HP_BODY_LEN ?
						    HP_DONE :
						    HP_CHUNK_END;
			hp->line_len = 0;
			break;
		}
		case HP_CHUNK_END:
			r = line_byte(hp, *p++);
			if (r < 0)
				return r;
			if (r) {
				if (hp->line_len)
					return fail(hp,
						    "no CRLF after a chunk");
				hp->state = HP_CHUNK_SIZE;
			}
			break;
		case HP_CHUNK_SIZE:
			r = line_byte(hp, *p++);
			if (r < 0)
				return r;
			if (r) {
				r = chunk_size(hp);
				hp->line_len = 0;
				if (r)
					return r;
			}
			break;
		case HP_TRAILER:
			r = line_byte(hp, *p++);
			if (r < 0)
				return r;
			if (r) {
				if (!hp->line_len)
					hp->state = HP_DONE;
				hp->line_len = 0;
			}
			break;
		case HP_BODY_EOF:
			r = give_body(hp, p, (size_t)(end - p));
			if (r)
				return r;
			p = end;
			break;
		case HP_DONE:
			return 0; /* what follows the answer is ignored */
		case HP_ERROR:
			return hp->cb_err ? hp->cb_err : -EBADMSG;
		}
	}
	return 0;
}

int http_parse_eof(struct http_parser *hp)
{
	if (hp->state == HP_BODY_EOF)
		hp->state = HP_DONE;
	if (hp->state == HP_DONE)
		return 0;
	if (hp->state != HP_ERROR)
		return fail(hp, "connection closed before the answer ended");
	return hp->cb_err ? hp->cb_err : -EBADMSG;
}

/* ---- the exchange ------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left_ms(int64_t deadline)
{
	int64_t l = deadline - now_ms();

	return l <= 0 ? 0 : l > 60000 ? 60000 : (int)l;
}

/* Waits for @events on @fd until @deadline: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd pf = { .fd = fd, .events = events };
		int ms = left_ms(deadline), r;

		if (!ms)
			return -ETIMEDOUT;
		r = poll(&pf, 1, ms);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_to(const struct http_url *u, int64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV },
			*res = NULL;
	int err = -ENOENT, r;

	r = getaddrinfo(u->host, u->port, &hints, &res);
	if (r)
		return r == EAI_SYSTEM ? -errno : -ENOENT;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family,
				ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
				ai->ai_protocol);
		socklen_t sl = sizeof(err);
		int one = 1;

		if (fd < 0) {
			err = -errno;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			freeaddrinfo(res);
			return fd;
		}
		err = -errno;
		if (err == -EINPROGRESS) {
			err = wait_fd(fd, POLLOUT, deadline);
			if (!err &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &r, &sl) == 0)
				err = -r;
			if (!err) {
				freeaddrinfo(res);
				return fd;
			}
		}
		close(fd);
		if (err == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	return err;
}

static int send_all(int fd, const void *p, size_t n, int64_t deadline,
		    uint64_t *sent)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w > 0) {
			c += w;
			n -= (size_t)w;
			*sent += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int err = wait_fd(fd, POLLOUT, deadline);

			if (err)
				return err;
			continue;
		}
		return w < 0 ? -errno : -EIO;
	}
	return 0;
}

static void base64(const char *s, char *out, size_t room)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0;

	for (size_t i = 0; i < n && o + 5 < room; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = 0;
}

struct exch {
	struct http_parser hp;
	const struct http_request *rq;
	struct http_response *rs;
	size_t text_len;
};

/* The body: the caller's for a 2xx answer, else the start of the text. */
static int exch_body(void *ctx, const void *p, size_t n)
{
	struct exch *x = ctx;

	if (x->hp.status >= 200 && x->hp.status < 300)
		return x->rq->on_body ? x->rq->on_body(x->rq->ctx, p, n) : 0;
	for (size_t i = 0; i < n && x->text_len + 1 < sizeof(x->rs->text);
	     i++) {
		unsigned char c = ((const unsigned char *)p)[i];

		if (c == '\n' && x->text_len)
			x->text_len = sizeof(x->rs->text); /* first line only */
		else if (c >= ' ' && c < 0x7f)
			x->rs->text[x->text_len++] = (char)c;
	}
	if (x->text_len < sizeof(x->rs->text))
		x->rs->text[x->text_len] = 0;
	return 0;
}

int http_exchange(const struct http_url *u, const struct http_request *rq,
		  struct http_response *rs)
{
	int64_t deadline =
		now_ms() + (rq->timeout_ms > 0 ? rq->timeout_ms : 10000);
	struct exch *x = malloc(sizeof(*x));
	char *head = NULL, auth[400] = "", buf[1 << 14];
	int fd, err, n;

	memset(rs, 0, sizeof(*rs));
	if (!x)
		return -ENOMEM;
	x->rq = rq;
	x->rs = rs;
	x->text_len = 0;
	http_parse_init(&x->hp, exch_body, x);
	if (u->auth[0]) {
		char b64[360];

		base64(u->auth, b64, sizeof(b64));
		snprintf(auth, sizeof(auth), "Authorization: Basic %s\r\n",
			 b64);
	}
	n = asprintf(&head,
		     "%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\n"
		     "User-Agent: perfring\r\nConnection: close\r\n"
		     "Content-Length: %zu\r\n%s%s%s%s%s\r\n",
		     rq->method, u->prefix, rq->path,
		     strchr(u->host, ':') ? "[" : "", u->host,
		     strchr(u->host, ':') ? "]" : "", u->port, rq->body_len,
		     rq->content_type ? "Content-Type: " : "",
		     rq->content_type ? rq->content_type : "",
		     rq->content_type ? "\r\n" : "", auth,
		     rq->headers ? rq->headers : "");
	if (n < 0) {
		free(x);
		return -ENOMEM;
	}
	fd = connect_to(u, deadline);
	if (fd < 0) {
		free(head);
		free(x);
		return fd;
	}
	err = send_all(fd, head, (size_t)n, deadline, &rs->sent_bytes);
	free(head);
	if (!err && rq->body_len)
		err = send_all(fd, rq->body, rq->body_len, deadline,
			       &rs->sent_bytes);
	/* A server that answers early (an error) and closes: read it. */
	if (err == -EPIPE || err == -ECONNRESET)
		err = 0;
	while (!err && x->hp.state != HP_DONE) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);

		if (r > 0) {
			err = http_parse_feed(&x->hp, buf, (size_t)r);
		} else if (r == 0) {
			err = http_parse_eof(&x->hp);
		} else if (errno == EINTR) {
			continue;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			err = wait_fd(fd, POLLIN, deadline);
		} else {
			err = -errno;
			if (err == -ECONNRESET && x->hp.state == HP_BODY_EOF)
				err = http_parse_eof(&x->hp);
		}
	}
	close(fd);
	rs->status = x->hp.status;
	rs->body_bytes = x->hp.body_bytes;
	if (err && x->hp.state == HP_ERROR && x->hp.cb_err)
		err = x->hp.cb_err;
	free(x);
	return err;
}

void http_error_text(int err, const struct http_response *rs, char *buf,
		     size_t len)
{
	if (err == -EBADMSG && rs->status)
		snprintf(buf, len, "HTTP %d, then a broken answer", rs->status);
	else if (err == -EBADMSG)
		snprintf(buf, len, "not an HTTP answer");
	else if (err)
		snprintf(buf, len, "%s", strerror(-err));
	else if (rs->text[0])
		snprintf(buf, len, "HTTP %d: %s", rs->status, rs->text);
	else
		snprintf(buf, len, "HTTP %d", rs->status);
}
