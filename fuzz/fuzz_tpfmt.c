// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the tracepoint formatter (src/report/tpfmt.c) over damaged
 * event formats, and printing records with what it accepted.
 *
 * An input that starts with the TRACING_DATA magic is a whole blob.  Any
 * other input is one event's format file, optionally followed by a NUL and
 * the bytes of a record: the format is put in a blob once as an ftrace
 * event and once as an event of system "fuzz" (libtraceevent parses the
 * two differently), and the record (its common_type set to the format's
 * "ID:") is printed by the compiled formats and by libtraceevent, whole
 * and cut, and some fields are read by name.  Inputs are exactly their size on the heap, so ASan sees any
 * read past them.  Seeds: fuzz/corpus/tpfmt/ (this kernel's formats, one
 * of each kind of print argument, and TRACING_DATA blobs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "tracepoint/tpfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * libtraceevent 1.7 leaks a few bytes on its parser's error paths (a token
 * it was building): not ours to fix, and no crash; LeakSanitizer is told
 * to ignore allocations made inside it.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so";
}

static const unsigned char magic[10] = { 23,  8,   68,	't', 'r',
					 'a', 'c', 'i', 'n', 'g' };

/* Linux 6.18 x86_64's header_page and header_event. */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char header_event[] = "# compressed entry header\n"
				   "\ttype_len    :    5 bits\n"
				   "\ttime_delta  :   27 bits\n"
				   "\tarray       :   32 bits\n";

struct blob {
	unsigned char *p;
	size_t len, cap;
};

static void put(struct blob *b, const void *p, size_t n)
{
	if (b->cap - b->len < n) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_u32(struct blob *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_u64(struct blob *b, uint64_t v)
{
	put(b, &v, 8);
}

/* A blob holding @fmt as an ftrace event, or as the event of "fuzz". */
static void make_blob(struct blob *b, const char *fmt, size_t len, bool ftrace)
{
	static const unsigned char endian_long[2] = { 0, 8 };

	b->len = 0;
	put(b, magic, sizeof(magic));
	put(b, "0.6", 4);
	put(b, endian_long, 2);
	put_u32(b, 4096);
	put(b, "header_page", 12);
	put_u64(b, sizeof(header_page) - 1);
	put(b, header_page, sizeof(header_page) - 1);
	put(b, "header_event", 13);
	put_u64(b, sizeof(header_event) - 1);
	put(b, header_event, sizeof(header_event) - 1);
	put_u32(b, ftrace ? 1 : 0);
	if (ftrace) {
		put_u64(b, len);
		put(b, fmt, len);
	}
	put_u32(b, ftrace ? 0 : 1);
	if (!ftrace) {
		put(b, "fuzz", 5);
		put_u32(b, 1);
		put_u64(b, len);
		put(b, fmt, len);
	}
	put_u32(b, 0); /* kallsyms */
	put_u32(b, 0); /* printk formats */
	put_u64(b, 0); /* saved cmdlines */
}

static void print_all(struct tpfmt *t, const unsigned char *rec, size_t len)
{
	static char out[1 << 16];
	struct outbuf ob = { .p = out, .cap = sizeof(out) };

	for (int slow = 0; slow < 2; slow++) {
		tpfmt_set_slow(t, slow);
		ob.len = 0;
		tpfmt_print(t, rec, (uint32_t)len, 0, &ob);
		if (ob.len > ob.cap)
			abort();
	}
	/* Fields by name (perfring_data_field()): numbers, char arrays,
	 * __data_loc strings of the seeds' events, and a missing one. */
	static const char *const names[] = {
		"common_type", "common_pid", "prev_comm", "prev_state",
		"next_pid",    "comm",	     "filename",  "name",
		"msg",	       "buf",	     "ip",	  "no_such_field",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char text[64];
		uint64_t num;
		int r = tpfmt_field(t, rec, (uint32_t)len, names[i], &num, text,
				    sizeof(text));

		if (r == 1 && strlen(text) >= sizeof(text))
			abort();
	}
}

/* The record whole and cut, each in a buffer of exactly its size. */
static void print_record(struct tpfmt *t, const uint8_t *rec, size_t len,
			 long id)
{
	for (size_t cut = len;; cut = cut / 2) {
		unsigned char *copy = malloc(cut ? cut : 1);

		if (!copy)
			abort();
		memcpy(copy, rec, cut);
		if (cut >= 2 && id >= 0) {
			uint16_t type = (uint16_t)id;

			memcpy(copy, &type, 2);
		}
		print_all(t, copy, cut);
		free(copy);
		if (!cut)
			break;
	}
}

static void discard_log(enum perfring_log_level level, const char *msg,
			void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct blob b;
	struct tpfmt *t;
	const uint8_t *nul, *rec = NULL;
	size_t fmt_len = size, rec_len = 0;
	const char *id_line;
	char *fmt;
	long id = -1;

	perfring_set_log(discard_log, NULL, PERFRING_LOG_DEBUG);
	if (size >= sizeof(magic) && !memcmp(data, magic, sizeof(magic))) {
		unsigned char *copy = malloc(size);

		if (!copy)
			abort();
		memcpy(copy, data, size);
		if (tpfmt_new(copy, size, &t) == 0) {
			static const unsigned char zeroes[64];

			print_record(t, zeroes, sizeof(zeroes), -1);
			print_record(t, copy, size < 4096 ? size : 4096, -1);
			tpfmt_free(t);
		}
		free(copy);
		return 0;
	}
	nul = memchr(data, 0, size);
	if (nul) {
		fmt_len = (size_t)(nul - data);
		rec = nul + 1;
		rec_len = size - fmt_len - 1;
		if (rec_len > 65535)
			rec_len = 65535;
	}
	fmt = strndup((const char *)data, fmt_len);
	if (!fmt)
		abort();
	id_line = strstr(fmt, "\nID: ");
	if (id_line)
		id = strtol(id_line + 5, NULL, 10);
	for (int ftrace = 0; ftrace < 2; ftrace++) {
		make_blob(&b, fmt, fmt_len, ftrace);
		if (tpfmt_new(b.p, b.len, &t) != 0)
			continue;
		if (rec)
			print_record(t, rec, rec_len, id);
		tpfmt_free(t);
	}
	free(fmt);
	return 0;
}
