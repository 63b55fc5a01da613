// SPDX-License-Identifier: MIT
/*
 * The report layer's pieces on their own (script.sh compares the commands
 * with perf):
 *
 *  - tpfmt: every tracepoint of this kernel, its format in a TRACING_DATA
 *    built by tracing_data_build(), printed from random records (valid
 *    __data_loc strings included) by the compiled formats and by
 *    libtraceevent: the text must be the same.  Short records and a
 *    damaged or cut blob must not crash.
 *  - threads: FORK/COMM/MMAP/MMAP2/EXIT as perf's machine does it (names,
 *    shared and copied maps, overlapping maps cut), malformed records.
 *  - symbols: a function of this program by the address it runs at, the
 *    kernel's _text from kallsyms.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <event-parse.h>
#include <event-utils.h>
#include <stdarg.h>
#include <perfring.h>
#include "format/tracing_data.h"
#include "machine/threads.h"
#include "tracepoint/tpfmt.h"
#include "harness.h"

#define TRACEFS "/sys/kernel/tracing"

/*
 * libtraceevent 1.7 leaks a few bytes parsing one or two of this kernel's
 * formats (in its own parser, on its error path); not ours to fix, so
 * LeakSanitizer is told to ignore allocations made inside it.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so";
}

/*
 * libtraceevent prints through tep_vprint(), a weak symbol: this program's
 * definition takes its messages, counted and not printed.
 */
static unsigned nr_tep_messages;

int tep_vprint(const char *name, enum tep_loglevel level, bool print_err,
	       const char *fmt, va_list ap)
{
	(void)name;
	(void)level;
	(void)print_err;
	(void)fmt;
	(void)ap;
	nr_tep_messages++;
	return errno;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- tpfmt ------------------------------------------------------------- */

struct ev_list {
	char **names; /* "sys:name" */
	size_t nr, cap;
};

static void list_events(struct ev_list *l)
{
	DIR *sd = opendir(TRACEFS "/events");
	struct dirent *s;

	if (!sd)
		return;
	while ((s = readdir(sd))) {
		char path[512];
		DIR *ed;
		struct dirent *e;

		if (s->d_name[0] == '.' || !strcmp(s->d_name, "ftrace"))
			continue;
		snprintf(path, sizeof(path), TRACEFS "/events/%s", s->d_name);
		ed = opendir(path);
		if (!ed)
			continue;
		while ((e = readdir(ed))) {
			char fmt[1024];

			if (e->d_name[0] == '.')
				continue;
			snprintf(fmt, sizeof(fmt), "%s/%s/format", path,
				 e->d_name);
			if (access(fmt, R_OK))
				continue;
			if (l->nr == l->cap) {
				l->cap = l->cap ? l->cap * 2 : 256;
				l->names = realloc(l->names,
						   l->cap * sizeof(*l->names));
				CHECK(l->names, "out of memory");
			}
			CHECK(asprintf(&l->names[l->nr], "%s:%s", s->d_name,
				       e->d_name) > 0,
			      "asprintf");
			l->nr++;
		}
		closedir(ed);
	}
	closedir(sd);
}

static unsigned nr_logged;
static char first_logged[512];

static void count_log(enum perfring_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	if (!nr_logged++)
		snprintf(first_logged, sizeof(first_logged), "%s", msg);
}

static char *print_one(struct tpfmt *t, bool slow, const void *raw,
		       uint32_t size, size_t *len)
{
	static char buf[1 << 20];
	struct outbuf ob = { .p = buf, .cap = sizeof(buf) };

	tpfmt_set_slow(t, slow);
	tpfmt_print(t, raw, size, 1, &ob);
	*len = ob.len;
	return buf;
}

/* A random record for @ev: common_type set, __data_loc fields pointing
 * at NUL-terminated random strings after the fixed part. */
static uint32_t make_record(struct tep_event *ev, unsigned char *rec,
			    size_t cap)
{
	struct tep_format_field *f;
	uint32_t end = 0, size;

	for (int pass = 0; pass < 2; pass++)
		for (f = pass ? ev->format.fields : ev->format.common_fields; f;
		     f = f->next)
			if ((uint32_t)(f->offset + f->size) > end)
				end = (uint32_t)(f->offset + f->size);
	if (end + 256 > cap)
		return 0;
	for (uint32_t i = 0; i < end + 256; i++)
		rec[i] = (unsigned char)rnd();
	/* Small values often, so that flags and symbols match. */
	for (uint32_t i = 0; i < end; i++)
		if (rnd() % 3 == 0)
			rec[i] = (unsigned char)(rnd() % 4);
	size = end;
	for (f = ev->format.fields; f; f = f->next) {
		uint32_t slen, desc;

		if (!(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4)
			continue;
		slen = 1 + (uint32_t)(rnd() % 24);
		for (uint32_t i = 0; i < slen - 1; i++)
			rec[size + i] = (unsigned char)('a' + rnd() % 26);
		rec[size + slen - 1] = 0;
		desc = (slen << 16) |
		       ((f->flags & TEP_FIELD_IS_RELATIVE) ?
				size - (uint32_t)(f->offset + f->size) :
				size);
		memcpy(rec + f->offset, &desc, 4);
		size += slen;
		if (size + 32 > end + 256)
			break;
	}
	memcpy(rec, &ev->id, 2); /* common_type, u16 at 0 */
	return (size + 7) & ~7u;
}

static void test_tpfmt(void)
{
	struct ev_list l = { 0 };
	void *blob;
	size_t len, checked = 0, differ = 0, n_ev = 0;
	struct tpfmt *t;
	struct tep_handle *tep;
	static unsigned char rec[65536];
	char *fmt_buf;
	int err;

	if (access(TRACEFS "/events/header_page", R_OK) != 0 &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL) != 0)
		SKIP("tpfmt: no tracefs at %s and the kernel refuses to mount it: %s",
		     TRACEFS, strerror(errno));
	CHECK(access(TRACEFS "/events/header_page", R_OK) == 0,
	      "tracefs mounted at %s has no events/header_page: %s", TRACEFS,
	      strerror(errno));
	list_events(&l);
	CHECK(l.nr > 10, "only %zu tracepoints in %s", l.nr, TRACEFS);
	err = tracing_data_build(TRACEFS, (const char *const *)l.names, l.nr,
				 &blob, &len);
	CHECK(err == 0, "tracing_data_build: %d", err);
	/* Every format of this kernel passes the checks made before
	 * libtraceevent sees one: nothing is left out, nothing logged. */
	perfring_set_log(count_log, NULL, PERFRING_LOG_WARN);
	err = tpfmt_new(blob, len, &t);
	perfring_set_log(NULL, NULL, PERFRING_LOG_ERROR);
	CHECK(err == 0, "tpfmt_new on %zu events: %d", l.nr, err);
	CHECK(nr_logged == 0,
	      "parsing this kernel's %zu formats logged %u messages, the first: %s",
	      l.nr, nr_logged, first_logged);

	/* The same formats through libtraceevent, to know the fields. */
	tep = tep_alloc();
	CHECK(tep, "tep_alloc");
	/* One buffer for all the files: a fresh 1 MiB per file costs an mmap
	 * and a munmap each under ASan. */
	fmt_buf = malloc(1 << 20);
	CHECK(fmt_buf, "malloc");
	for (size_t i = 0; i < l.nr; i++) {
		char path[1024];
		char *colon = strchr(l.names[i], ':');
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), TRACEFS "/events/%.*s/%s/format",
			 (int)(colon - l.names[i]), l.names[i], colon + 1);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(fmt_buf, 1, (1 << 20) - 1, f);
		fclose(f);
		*colon = 0;
		tep_parse_event(tep, fmt_buf, n, l.names[i]);
		*colon = ':';
	}
	free(fmt_buf);
	for (int i = 0; i < tep_get_events_count(tep); i++) {
		struct tep_event *ev = tep_get_event(tep, i);

		if (!ev || (ev->flags & TEP_EVENT_FL_FAILED))
			continue;
		n_ev++;
		for (int k = 0; k < 24; k++) {
			uint32_t size = make_record(ev, rec, sizeof(rec));
			size_t la, lb;
			char *a, *b;

			if (!size)
				break;
			a = print_one(t, true, rec, size, &la);
			a = strndup(a, la);
			b = print_one(t, false, rec, size, &lb);
			CHECK(a, "strndup");
			checked++;
			/* Empty slow output: a divisor was zero, libtraceevent
			 * is not called. */
			if (la && (la != lb || memcmp(a, b, la))) {
				if (differ++ < 5)
					fprintf(stderr,
						"%s:%s differs:\n  libtraceevent: %s\n  compiled:      %.*s\n",
						ev->system, ev->name, a,
						(int)lb, b);
			}
			free(a);
			/* Every shorter record: no read past it. */
			if (k == 0)
				for (uint32_t s = 0; s < size; s += 1 + s / 4) {
					print_one(t, false, rec, s, &lb);
					print_one(t, true, rec, s, &lb);
				}
		}
	}
	CHECK(differ == 0,
	      "%zu of %zu records print differently from libtraceevent", differ,
	      checked);
	printf("tpfmt: %zu events, %zu random records: compiled formats print as libtraceevent\n",
	       n_ev, checked);
	tep_free(tep);
	tpfmt_free(t);

	/* A cut or damaged blob: an error or a usable (partial) set. */
	free(blob);
	err = tracing_data_build(TRACEFS, (const char *const *)l.names,
				 l.nr < 16 ? l.nr : 16, &blob, &len);
	CHECK(err == 0, "tracing_data_build: %d", err);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 3) {
		err = tpfmt_new(blob, cut, &t);
		CHECK(err == 0 || err == -EBADMSG, "cut at %zu: %d", cut, err);
		if (!err) {
			size_t n;

			memset(rec, 0, 64);
			print_one(t, false, rec, 64, &n);
			print_one(t, true, rec, 64, &n);
			tpfmt_free(t);
		}
	}
	((unsigned char *)blob)[0] ^= 0xff;
	CHECK(tpfmt_new(blob, len, &t) == -EBADMSG, "bad magic accepted");
	((unsigned char *)blob)[0] ^= 0xff;
	/* A huge size for header_page. */
	{
		unsigned char *p = memmem(blob, len, "header_page", 12);

		CHECK(p, "no header_page in the blob");
		memset(p + 12, 0x7f, 8);
		CHECK(tpfmt_new(blob, len, &t) == -EBADMSG,
		      "header_page size past the end accepted");
	}
	CHECK(tpfmt_new(NULL, 0, &t) == -EINVAL, "NULL accepted");
	printf("tpfmt: cut and damaged TRACING_DATA refused or read in part\n");
	free(blob);
	for (size_t i = 0; i < l.nr; i++)
		free(l.names[i]);
	free(l.names);
}

/*
 * Damage that made libtraceevent 1.7 crash in fuzzing (the inputs are
 * fuzz/corpus/tpfmt/crash-*): each damaged format is refused before
 * libtraceevent sees it, with a warning naming the event and what is
 * wrong, and only that event is left out.
 */
#define VICTIM_FIELDS                                                                  \
	"format:\n"                                                                    \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"                   \
	"\tfield:unsigned long state;\toffset:8;\tsize:8;\tsigned:0;\n"                \
	"\tfield:int arr[4];\toffset:16;\tsize:16;\tsigned:1;\n\n"

static void test_damaged_formats(void)
{
	static const char intact[] =
		"name: fine\nID: 900\n" VICTIM_FIELDS
		"print fmt: \"state=%s v=%d q=%lu\", __print_flags(REC->state, \"|\", { 1, \"A\" }, { 2, \"B\" }), REC->arr[1], REC->state / 1000";
	static const struct {
		const char *print, *why;
	} cases[] = {
		/* NULL dereference flagging a field it did not find */
		{ "__print_flags(REC->stat, \"|\", { 1, \"A\" }), 1, 2",
		  "names a field it does not have (\"stat\"" },
		/* SIGFPE folding constants while parsing */
		{ "\"s\", 7 / 0, 2", "divides by a zero constant (\"0\"" },
		{ "\"s\", 7 % (3 - 3), 2", "divides by a constant expression" },
		{ "\"s\", 7 / nothing, 2",
		  "divides by something that is not a number" },
		/* process_op() recursing on NULL */
		{ "\"s\", REC->arr[1] = 3, 2",
		  "a subscript is followed by an operator libtraceevent does not know (\"[1] =\"" },
		{ "\"s\", REC->arr[1];, 2", "a subscript is followed" },
		{ "\"s\", REC->arr[1] ? 1 : 2;, 2",
		  "an operator libtraceevent does not know follows a '?' (\";\"" },
		/* strcmp() of NULL reading a field's dimension */
		{ "\"s\", 1, 2\n\tfield:int x[", "it ends with a '['" },
	};
	struct tpfmt *t;
	unsigned char rec[32] = { 0 };
	char victim[2048];
	void *blob;
	size_t len, n;
	uint16_t id;
	int err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct td_extra ex[2] = {
			{ "damaged", victim, 0 },
			{ "damaged", intact, sizeof(intact) - 1 },
		};
		char *out;

		snprintf(victim, sizeof(victim),
			 "name: victim\nID: 901\n" VICTIM_FIELDS
			 "print fmt: \"state=%%s v=%%d q=%%lu\", %s\n",
			 cases[i].print);
		ex[0].len = strlen(victim);
		err = tracing_data_build_ext(TRACEFS, NULL, 0, ex, 2, &blob,
					     &len);
		CHECK(err == 0, "tracing_data_build_ext: %d", err);
		nr_logged = 0;
		perfring_set_log(count_log, NULL, PERFRING_LOG_WARN);
		err = tpfmt_new(blob, len, &t);
		perfring_set_log(NULL, NULL, PERFRING_LOG_ERROR);
		CHECK(err == 0, "case %zu: tpfmt_new: %d", i, err);
		CHECK(nr_logged == 1, "case %zu: %u messages", i, nr_logged);
		CHECK(strstr(first_logged, "event damaged:victim") &&
			      strstr(first_logged, cases[i].why),
		      "case %zu (%s): the message is: %s", i, cases[i].print,
		      first_logged);
		if (i == 0)
			printf("tpfmt: e.g. %s\n", first_logged);
		/* The damaged event prints nothing, the intact one as ever. */
		id = 901;
		memcpy(rec, &id, 2);
		print_one(t, true, rec, sizeof(rec), &n);
		CHECK(n == 0, "case %zu: the refused event printed", i);
		id = 900;
		memcpy(rec, &id, 2);
		rec[8] = 3;
		rec[20] = 42;
		out = print_one(t, true, rec, sizeof(rec), &n);
		CHECK(n == strlen("state=A|B v=42 q=0") &&
			      !memcmp(out, "state=A|B v=42 q=0", n),
		      "case %zu: the intact event prints %.*s", i, (int)n, out);
		tpfmt_free(t);
		free(blob);
	}
	printf("tpfmt: %zu damaged formats refused with the event and the reason named\n",
	       sizeof(cases) / sizeof(cases[0]));
}

/*
 * An ftrace event named bprint is a binary printk to libtraceevent: one
 * without the kernel's ip, fmt and buf fields made it strlen() a NULL
 * format (fuzz/corpus/tpfmt/crash-bprint-without-fmt-field), and it reads
 * every bprint event with the fields of the first one it printed.  Such
 * an event is left out with one warning, and so is a second bprint event.
 */
#define BPRINT_WHOLE(id)                                              \
	"name: bprint\nID: " id "\n" BPRINT_COMMON                    \
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"  \
	"\tfield:const char * fmt;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;\n\n"      \
	"print fmt: \"%ps: %s\", (void *)REC->ip, REC->fmt\n"
#define BPRINT_COMMON                                                                  \
	"format:\n"                                                                    \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static void test_bprint_formats(void)
{
	static const char no_fmt[] =
		"name: bprint\nID: 902\n" BPRINT_COMMON
		"\tfield:void * mm;\toffset:8;\tsize:8;\tsigned:0;\n\n"
		"print fmt: \"mm %p\", REC->mm\n";
	static const struct {
		const char *first, *second, *why;
		uint16_t id; /* the one refused */
	} cases[] = {
		{ no_fmt, NULL, "without its ip, fmt and buf fields", 902 },
		{ BPRINT_WHOLE("903"), BPRINT_WHOLE("904"),
		  "a second binary printk", 904 },
	};
	unsigned char rec[64] = { 0 };
	struct tpfmt *t;
	void *blob;
	size_t len, n;
	int err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct td_extra ex[2] = {
			{ "ftrace", cases[i].first, strlen(cases[i].first) },
			{ "ftrace", cases[i].second,
			  cases[i].second ? strlen(cases[i].second) : 0 },
		};

		err = tracing_data_build_ext(TRACEFS, NULL, 0, ex,
					     cases[i].second ? 2 : 1, &blob,
					     &len);
		CHECK(err == 0, "tracing_data_build_ext: %d", err);
		nr_logged = 0;
		perfring_set_log(count_log, NULL, PERFRING_LOG_WARN);
		err = tpfmt_new(blob, len, &t);
		perfring_set_log(NULL, NULL, PERFRING_LOG_ERROR);
		CHECK(err == 0, "bprint case %zu: tpfmt_new: %d", i, err);
		CHECK(nr_logged == 1, "bprint case %zu: %u messages", i,
		      nr_logged);
		CHECK(strstr(first_logged, "event ftrace:bprint") &&
			      strstr(first_logged, cases[i].why),
		      "bprint case %zu: the message is: %s", i, first_logged);
		memcpy(rec, &cases[i].id, 2);
		print_one(t, true, rec, sizeof(rec), &n);
		CHECK(n == 0, "bprint case %zu: the refused event printed", i);
		tpfmt_free(t);
		free(blob);
	}
	printf("tpfmt: ftrace bprint events libtraceevent cannot print are left out (%s)\n",
	       first_logged);
}

/*
 * libtraceevent's log level is process-wide: the library leaves it as the
 * application set it (it used to set TEP_LOG_NONE behind its back).
 */
static void test_loglevel(void)
{
	struct tpfmt *t;
	void *blob;
	size_t len;
	int err;

	err = tracing_data_build(TRACEFS,
				 (const char *const[]){ "sched:sched_switch" },
				 1, &blob, &len);
	CHECK(err == 0, "tracing_data_build: %d", err);
	tep_set_loglevel(TEP_LOG_WARNING);
	CHECK_EQ(tpfmt_new(blob, len, &t), 0);
	nr_tep_messages = 0;
	tep_warning("probe");
	CHECK(nr_tep_messages == 1,
	      "tpfmt_new() changed libtraceevent's log level: the application's warning was not printed");
	tep_set_loglevel(TEP_LOG_CRITICAL); /* libtraceevent's default */
	tpfmt_free(t);
	free(blob);
	printf("tpfmt: libtraceevent's log level left as the application set it\n");
}

/* ---- threads ------------------------------------------------------------- */

static size_t rec_comm(unsigned char *b, uint32_t pid, uint32_t tid,
		       const char *comm, bool exec)
{
	struct perf_event_header h = { PERF_RECORD_COMM,
				       exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
				       0 };
	size_t n = 16 + ((strlen(comm) + 8) & ~7u);

	memset(b, 0, n);
	h.size = (uint16_t)n;
	memcpy(b, &h, 8);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &tid, 4);
	memcpy(b + 16, comm, strlen(comm));
	return n;
}

static size_t rec_fork(unsigned char *b, uint32_t type, uint32_t pid,
		       uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct perf_event_header h = { type, 0, 40 };
	uint32_t u[4] = { pid, ppid, tid, ptid };

	memset(b, 0, 40);
	memcpy(b, &h, 8);
	memcpy(b + 8, u, 16);
	return 40;
}

static size_t rec_mmap2(unsigned char *b, uint32_t pid, uint32_t tid,
			uint64_t start, uint64_t len, uint64_t pgoff,
			const char *name)
{
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
				       0 };
	size_t n = 72 + ((strlen(name) + 8) & ~7u);

	memset(b, 0, n);
	h.size = (uint16_t)n;
	memcpy(b, &h, 8);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &tid, 4);
	memcpy(b + 16, &start, 8);
	memcpy(b + 24, &len, 8);
	memcpy(b + 32, &pgoff, 8);
	memcpy(b + 72, name, strlen(name));
	return n;
}

static int process(struct machine *m, const unsigned char *b)
{
	union prd_record v;
	uint16_t size;

	/* as perfring top feeds ring records: a record too short for its
	 * type's fields has no view and is ignored */
	memcpy(&size, b + 6, 2);
	if (!prd_record_view(b, size, &v))
		return 0;
	return machine_process(m, &v);
}

__attribute__((noinline)) int test_target_function(int x);
__attribute__((noinline)) int test_target_function(int x)
{
	return x * 3 + 1;
}

static void test_threads(void)
{
	struct machine m;
	unsigned char b[8192];
	struct thread *t, *c;
	struct addr_loc al;
	FILE *maps;
	char line[4096];

	CHECK(machine_init(&m) == 0, "machine_init");
	t = machine_findnew_thread(&m, 0, 0);
	CHECK(t && !strcmp(t->comm, "swapper"), "thread 0 is not swapper");
	t = machine_findnew_thread(&m, 100, 100);
	CHECK(!strcmp(t->comm, ":100"), "new thread named %s", t->comm);
	rec_comm(b, 100, 100, "parent", false);
	CHECK(process(&m, b) == 0, "comm");
	CHECK(!strcmp(t->comm, "parent") && t->comm_len == 6, "comm not set");
	rec_mmap2(b, 100, 100, 0x10000, 0x10000, 0, "/bin/one");
	CHECK(process(&m, b) == 0, "mmap2");
	/* A thread of the process shares its maps and takes its comm. */
	rec_fork(b, PERF_RECORD_FORK, 100, 100, 101, 100);
	CHECK(process(&m, b) == 0, "fork thread");
	c = machine_findnew_thread(&m, 100, 101);
	CHECK(!strcmp(c->comm, "parent") && c->maps == t->maps,
	      "thread: comm %s, maps shared %d", c->comm, c->maps == t->maps);
	/* A new process gets a copy. */
	rec_fork(b, PERF_RECORD_FORK, 200, 100, 200, 100);
	CHECK(process(&m, b) == 0, "fork process");
	c = machine_findnew_thread(&m, 200, 200);
	CHECK(c->maps != t->maps && c->maps->nr == 1,
	      "process maps not copied");
	machine_resolve(&m, c, PERF_RECORD_MISC_USER, 0x10010, false, &al);
	CHECK(al.map && !strcmp(al.dso->name, "/bin/one") && al.addr == 0x10,
	      "copied map does not resolve");
	/* An overlapping map cuts the old one in two. */
	rec_mmap2(b, 200, 200, 0x14000, 0x1000, 0x5000, "/bin/two");
	CHECK(process(&m, b) == 0, "mmap2 over");
	CHECK(c->maps->nr == 3, "%u maps after an overlap", c->maps->nr);
	machine_resolve(&m, c, PERF_RECORD_MISC_USER, 0x15010, false, &al);
	CHECK(al.map && !strcmp(al.dso->name, "/bin/one") && al.addr == 0x5010,
	      "the part after the new map: %s 0x%llx",
	      al.map ? al.dso->name : "-", (unsigned long long)al.addr);
	machine_resolve(&m, c, PERF_RECORD_MISC_USER, 0x14010, false, &al);
	CHECK(al.map && !strcmp(al.dso->name, "/bin/two") && al.addr == 0x5010,
	      "the new map");
	machine_resolve(&m, t, PERF_RECORD_MISC_USER, 0x14010, false, &al);
	CHECK(al.map && !strcmp(al.dso->name, "/bin/one"),
	      "the parent's maps changed");
	machine_resolve(&m, c, PERF_RECORD_MISC_USER, 0x90000, false, &al);
	CHECK(!al.map, "an unmapped address resolved");
	/* exec renames; a FORK reusing a tid replaces the thread. */
	rec_comm(b, 200, 200, "child", true);
	CHECK(process(&m, b) == 0, "comm exec");
	CHECK(!strcmp(c->comm, "child"), "exec comm");
	rec_fork(b, PERF_RECORD_EXIT, 200, 100, 200, 100);
	CHECK(process(&m, b) == 0, "exit");
	rec_fork(b, PERF_RECORD_FORK, 200, 100, 200, 100);
	CHECK(process(&m, b) == 0, "tid reuse");
	c = machine_findnew_thread(&m, 200, 200);
	CHECK(!strcmp(c->comm, "parent"), "reused tid kept the old comm %s",
	      c->comm);
	/* Malformed records: ignored, no read past them. */
	{
		struct perf_event_header *h = (void *)b;
		uint16_t sizes[] = { 8, 12, 16, 17, 24, 39, 40, 41, 71, 72, 73 };
		uint32_t types[] = { PERF_RECORD_COMM, PERF_RECORD_MMAP,
				     PERF_RECORD_MMAP2, PERF_RECORD_FORK,
				     PERF_RECORD_EXIT };

		for (size_t ti = 0; ti < 5; ti++)
			for (size_t si = 0; si < sizeof(sizes) / 2; si++) {
				unsigned char *r = malloc(sizes[si]);

				CHECK(r, "malloc");
				memset(r, 'x', sizes[si]); /* no NUL anywhere */
				h = (void *)r;
				h->type = types[ti];
				h->misc = 0;
				h->size = sizes[si];
				CHECK(process(&m, r) == 0, "type %u size %u",
				      types[ti], sizes[si]);
				free(r);
			}
		/* A thread forking itself. */
		rec_fork(b, PERF_RECORD_FORK, 300, 300, 300, 300);
		CHECK(process(&m, b) == 0, "self fork");
	}
	printf("threads: comm, fork (thread and process), exec, overlapping maps, malformed records\n");

	/* Symbols: this program's function at the address it runs at. */
	maps = fopen("/proc/self/maps", "r");
	CHECK(maps, "/proc/self/maps");
	t = machine_findnew_thread(&m, 4242, 4242);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long a, e, off;
		char perm[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &a, &e,
			   perm, &off, path) < 4 ||
		    path[0] != '/')
			continue;
		rec_mmap2(b, 4242, 4242, a, e - a, off, path);
		CHECK(process(&m, b) == 0, "mmap2 of %s", path);
	}
	fclose(maps);
	machine_set_host(&m, true);
	machine_resolve(&m, t, PERF_RECORD_MISC_USER,
			(uintptr_t)test_target_function + 3, true, &al);
	CHECK(al.sym && !strcmp(al.sym->name, "test_target_function") &&
		      al.sym_off == 3,
	      "resolved to %s+0x%llx", al.sym ? al.sym->name : "[unknown]",
	      (unsigned long long)al.sym_off);
	machine_resolve(&m, t, PERF_RECORD_MISC_USER, (uintptr_t)getpid, true,
			&al);
	CHECK(al.map && strstr(al.dso->name, "libc"), "getpid not in libc");
	/* The kernel: kallsyms when addresses are shown. */
	{
		FILE *k = fopen("/proc/kallsyms", "r");
		unsigned long long text = 0;

		while (k && fgets(line, sizeof(line), k))
			if (strstr(line, " T _text\n") ||
			    strstr(line, " T _stext\n")) {
				text = strtoull(line, NULL, 16);
				break;
			}
		if (k)
			fclose(k);
		if (text) {
			machine_resolve(&m, t, PERF_RECORD_MISC_KERNEL, text,
					true, &al);
			CHECK(al.kernel && al.sym && al.sym_off == 0 &&
				      !strcmp(al.dso->name,
					      "[kernel.kallsyms]"),
			      "kernel _text resolved to %s",
			      al.sym ? al.sym->name : "[unknown]");
			printf("symbols: this program's function, libc, the kernel's %s\n",
			       al.sym->name);
		} else {
			printf("symbols: this program's function, libc (kallsyms shows no addresses)\n");
		}
	}
	machine_exit(&m);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_threads();
	test_tpfmt();
	test_damaged_formats();
	test_bprint_formats();
	test_loglevel();
	return T_EXIT_PASS;
}
