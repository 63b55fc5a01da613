/* SPDX-License-Identifier: MIT */
/*
 * An output buffer for text written a line at a time at high rates: bytes
 * go into one big buffer that is handed to the FILE with fwrite() when it
 * fills (or at the end), numbers are formatted by hand.
 */
#ifndef PERFRING_COMMON_OUTBUF_H
#define PERFRING_COMMON_OUTBUF_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OB_SIZE (1u << 20)
#define OB_SLACK 4096 /* room a single append may use without a check */

struct outbuf {
	char *p;
	size_t len;
	size_t cap; /* OB_SIZE + OB_SLACK */
	FILE *f;
	int err; /* sticky -errno of the first failed write */
	uint64_t flushed; /* bytes handed to @f so far */
};

/* Allocates the buffer for @f (NULL: a scratch buffer never flushed to a
 * file).  Returns 0 or -ENOMEM. */
static inline int ob_init(struct outbuf *ob, FILE *f)
{
	ob->cap = OB_SIZE + OB_SLACK;
	ob->p = malloc(ob->cap);
	ob->f = f;
	ob->flushed = 0;
	return ob->p ? 0 : -ENOMEM;
}

static inline void ob_flush(struct outbuf *ob)
{
	if (!ob->f) {
		/* A string buffer: what does not fit is cut. */
		ob->err = -E2BIG;
	} else if (ob->len && !ob->err) {
		if (fwrite(ob->p, 1, ob->len, ob->f) != ob->len)
			ob->err = errno ? -errno : -EIO;
		ob->flushed += ob->len;
	}
	ob->len = 0;
}

/* Makes room for @n more bytes (n <= OB_SLACK always fits after a flush). */
static inline void ob_room(struct outbuf *ob, size_t n)
{
	if (ob->len + n > ob->cap)
		ob_flush(ob);
}

/* Flushes when past the soft limit; call once per line. */
static inline void ob_line_done(struct outbuf *ob)
{
	if (ob->len >= OB_SIZE)
		ob_flush(ob);
}

static inline void ob_putc(struct outbuf *ob, char c)
{
	ob_room(ob, 1);
	ob->p[ob->len++] = c;
}

/* Copies @n bytes with fixed-size moves for short strings (a call to
 * memcpy costs more than the copy), never reading past @s + @n. */
static inline void ob_copy(char *d, const char *s, size_t n)
{
	if (n >= 8) {
		uint64_t a, b;

		if (n > 16) {
			if (n > 32) {
				memcpy(d, s, n);
				return;
			}
			memcpy(&a, s, 8);
			memcpy(&b, s + 8, 8);
			memcpy(d, &a, 8);
			memcpy(d + 8, &b, 8);
			d += 16;
			s += 16;
			n -= 16;
			if (n < 8) {
				memcpy(&a, s + n - 8, 8);
				memcpy(d + n - 8, &a, 8);
				return;
			}
		}
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

static inline void ob_write_slow(struct outbuf *ob, const void *s, size_t n)
{
	while (n > ob->cap - ob->len) {
		size_t k = ob->cap - ob->len;

		memcpy(ob->p + ob->len, s, k);
		ob->len += k;
		s = (const char *)s + k;
		n -= k;
		ob_flush(ob);
	}
	memcpy(ob->p + ob->len, s, n);
	ob->len += n;
}

__attribute__((always_inline)) static inline void
ob_write(struct outbuf *ob, const void *s, size_t n)
{
	if (n <= 32 && ob->len + 32 <= ob->cap) {
		ob_copy(ob->p + ob->len, s, n);
		ob->len += n;
		return;
	}
	ob_write_slow(ob, s, n);
}

static inline void ob_puts(struct outbuf *ob, const char *s)
{
	ob_write(ob, s, strlen(s));
}

static inline void ob_spaces(struct outbuf *ob, size_t n)
{
	while (n) {
		size_t k = n > 64 ? 64 : n;

		ob_room(ob, k);
		memset(ob->p + ob->len, ' ', k);
		ob->len += k;
		n -= k;
	}
}

/* Digits of @v in base 10 into the end of @buf; returns the start. */
static inline char *ob_utoa(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static inline char *ob_xtoa(char *end, uint64_t v, bool upper)
{
	const char *d = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	do {
		*--end = d[v & 15];
		v >>= 4;
	} while (v);
	return end;
}

static inline int ob_ndigits(uint64_t v)
{
	int n = 1;

	if (v < 10)
		return 1;
	if (v < 100)
		return 2;
	if (v < 1000)
		return 3;
	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	if (v >= 10)
		n++;
	if (v >= 100)
		n++;
	if (v >= 1000)
		n++;
	return n;
}

/* Writes @v in decimal, @nd digits, ending at @end. */
static inline void ob_digits(char *end, uint64_t v, int nd)
{
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324"
		"25262728293031323334353637383940414243444546474849"
		"50515253545556575859606162636465666768697071727374"
		"75767778798081828384858687888990919293949596979899";

	while (nd >= 2 && v > 0xffffffffull) {
		const char *p = pairs + 2 * (v % 100);

		end -= 2;
		end[0] = p[0];
		end[1] = p[1];
		v /= 100;
		nd -= 2;
	}
	{
		uint32_t w = (uint32_t)v; /* cheaper division */

		while (nd >= 2) {
			const char *p = pairs + 2 * (w % 100);

			end -= 2;
			end[0] = p[0];
			end[1] = p[1];
			w /= 100;
			nd -= 2;
		}
		if (nd)
			*--end = (char)('0' + w % 10);
	}
}

/* strnlen() for short fields, without a call. */
static inline size_t ob_strnlen(const char *s, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull)
			break;
	}
	while (i < n && s[i])
		i++;
	return i;
}

/* printf("%*llu") with @pad ' ' or '0' (%0*llu), @width >= 0. */
__attribute__((always_inline)) static inline void
ob_u64(struct outbuf *ob, uint64_t v, int width, char pad)
{
	int nd = ob_ndigits(v);
	int w = width > nd ? width : nd;
	char *d;

	ob_room(ob, (size_t)w);
	d = ob->p + ob->len;
	for (int i = 0; i < w - nd; i++)
		d[i] = pad;
	ob_digits(d + w, v, nd);
	ob->len += (size_t)w;
}

/* printf("%*lld"). */
__attribute__((always_inline)) static inline void ob_s64(struct outbuf *ob,
							 int64_t v, int width)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int nd = ob_ndigits(u), len = nd + (v < 0);
	int w = width > len ? width : len;
	char *d;

	ob_room(ob, (size_t)w);
	d = ob->p + ob->len;
	for (int i = 0; i < w - len; i++)
		d[i] = ' ';
	if (v < 0)
		d[w - len] = '-';
	ob_digits(d + w, u, nd);
	ob->len += (size_t)w;
}

/* printf("%*llx"). */
static inline void ob_x64(struct outbuf *ob, uint64_t v, int width)
{
	static const char hex[] = "0123456789abcdef";
	int nd = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
	int w = width > nd ? width : nd;
	char *d;

	ob_room(ob, (size_t)w);
	d = ob->p + ob->len;
	for (int i = 0; i < w - nd; i++)
		d[i] = ' ';
	for (int i = w - 1; i >= w - nd; i--) {
		d[i] = hex[v & 15];
		v >>= 4;
	}
	ob->len += (size_t)w;
}

/* %*s: right-aligned in @width (left-aligned when @left). */
static inline void ob_str_w(struct outbuf *ob, const char *s, size_t n,
			    int width, bool left)
{
	size_t pad = width > (int)n ? (size_t)width - n : 0;

	if (!left)
		ob_spaces(ob, pad);
	ob_write(ob, s, n);
	if (left)
		ob_spaces(ob, pad);
}

/* Length of the valid UTF-8 sequence at @p (at most @n bytes), 0 if the
 * bytes there are not one (overlong forms and surrogates included). */
static inline size_t ob_utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp == 0xfffe || cp == 0xffff)
		return 0; /* not XML characters */
	return len;
}

/*
 * A JSON string of @n bytes: quotes, backslashes and control characters
 * escaped (\u00XX; with @perf_escapes as perf's JSON writes them: \b \f
 * \n \r \t, DEL as it is), bytes that are not UTF-8 as the Latin-1
 * characters they would be.
 */
static inline void ob_json_str_as(struct outbuf *ob, const char *s, size_t n,
				  bool perf_escapes)
{
	static const char hex[] = "0123456789abcdef";
	static const char short_esc[32] = {
		['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'
	};
	const unsigned char *p = (const unsigned char *)s;

	ob_putc(ob, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t k;

		if (c == '"' || c == '\\' ||
		    (perf_escapes && c < 32 && short_esc[c])) {
			ob_room(ob, 2);
			ob->p[ob->len++] = '\\';
			ob->p[ob->len++] = c < 32 ? short_esc[c] : (char)c;
			i++;
			continue;
		}
		if (c >= 0x20 && (c < 0x7f || (c == 0x7f && perf_escapes))) {
			ob_putc(ob, (char)c);
			i++;
			continue;
		}
		k = c < 0x80 ? 1 : ob_utf8_seq(p + i, n - i);
		if (k > 1) {
			ob_write(ob, p + i, k);
			i += k;
			continue;
		}
		ob_room(ob, 6);
		memcpy(ob->p + ob->len, "\\u00", 4);
		ob->p[ob->len + 4] = hex[c >> 4];
		ob->p[ob->len + 5] = hex[c & 15];
		ob->len += 6;
		i++;
	}
	ob_putc(ob, '"');
}

static inline void ob_json_str(struct outbuf *ob, const char *s, size_t n)
{
	ob_json_str_as(ob, s, n, false);
}

#endif
