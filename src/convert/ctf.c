// SPDX-License-Identifier: MIT
/*
 * perfring data convert --to-ctf: a perf.data as the CTF 1.8 trace perf
 * 6.1's data-convert-bt.c writes, through the same writer
 * (libbabeltrace-ctf, babeltrace 1.5's CTF writer), so that babeltrace2
 * and Trace Compass read the same trace from either tool:
 *
 *   - one clock "perf_clock" (1 GHz, the file's times; --tod: offset by
 *     CLOCK_DATA's wall-clock reference, described by the clock's name);
 *   - the environment host, sysname, release, version, machine, domain
 *     "kernel", tracer_name "perf";
 *   - one stream class "perf_stream" whose packet context has cpu_id, and
 *     one stream per CPU the events came from (a file perf_stream_N per
 *     stream, N in order of first use);
 *   - one event class per event of the file, named as perf names it,
 *     with perf's fields: perf_ip (hex), perf_tid, perf_pid, perf_id,
 *     perf_stream_id, perf_period, perf_weight, perf_data_src,
 *     perf_transaction as the event samples them, perf_callchain_size and
 *     the sequence perf_callchain (hex), then a tracepoint's (or an
 *     application event's) fields, common ones first, as its format
 *     declares them: strings (char arrays, __data_loc strings), 64-bit
 *     hex for unsigned longs and pointers, s32/s64/u32/u64 by size and
 *     sign, arrays of those; a field name CTF reserves gets a '_' before
 *     it, a second field of one name "_dupl_N" after it, as perf does;
 *     BPF output events: raw_len and raw_data;
 *   - with --all, perf_comm, perf_exit, perf_fork, perf_mmap and
 *     perf_mmap2 events (their records' fields) on CPU 0's stream.
 *
 * Strings are escaped as perf escapes them: "\xNN" for every byte that
 * is not printable ASCII.  (perf's isprint() is the kernel's, which takes
 * 0xa0-0xff as printable and keeps them; libbabeltrace-ctf then fails to
 * write the packet holding such a string, and every event in it is lost:
 * here they are escaped too.)  Where perf reads past a record (a string without its NUL,
 * a field beyond the record), this reads up to the record's end and no
 * further: the same text for every well-formed record.  A __data_loc
 * array that is not a string (perf fails on it: an array of length 0) is
 * written as a sequence, its length in "<name>_len" before it.
 *
 * Memory: a stream keeps the events appended to it until its packet is
 * written out; perf does that every 100,000 events of a stream, this at
 * 32 KiB of events (PACKET_MAP_BYTES) and for every stream once
 * PENDING_EVENTS are held in all: the memory does not grow with the
 * input or the number of CPUs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <babeltrace/ctf-ir/utils.h>
#include <babeltrace/ctf-writer/clock.h>
#include <babeltrace/ctf-writer/event-fields.h>
#include <babeltrace/ctf-writer/event-types.h>
#include <babeltrace/ctf-writer/event.h>
#include <babeltrace/ctf-writer/stream.h>
#include <babeltrace/ctf-writer/writer.h>
#include <traceevent/event-parse.h>
#include "../common/log.h"
#include "../report/header_print.h"
#include "../tracepoint/tpfmt.h"
#include "convert.h"

#define MAX_CPUS 4096 /* perf's streams when the file does not say */
/*
 * A stream's packet is written out before its events outgrow one
 * PACKET_MAP_BYTES mapping: libbabeltrace-ctf maps a packet 32 KiB at a
 * time and maps it whole again each time it grows, so packets that fit in
 * one mapping cost the least (perf's 100,000-event packets take twice the
 * time and ten times the memory).  Every stream is written out once
 * PENDING_EVENTS are held in all.
 */
#define PENDING_EVENTS 65536u
#define BPF_OUTPUT_CONFIG 10 /* PERF_COUNT_SW_BPF_OUTPUT */

/* perf's data types (ctf_writer__init_data()), and their bytes in an
 * event (strings: their own). */
enum { T_S64, T_U64, T_S32, T_U32, T_U32_HEX, T_U64_HEX, T_STRING, T_NR };
static const uint8_t type_bytes[T_NR] = { 8, 8, 4, 4, 4, 8, 0 };

/* An event's header (id, timestamp) and a packet's header and context
 * (magic, uuid, stream_id; timestamp_begin/end, content and packet size,
 * events_discarded, cpu_id), every field byte-packed as perf's are. */
#define EVENT_HEADER_BYTES 12u
#define PACKET_OVERHEAD_BYTES 68u
#define PACKET_MAP_BYTES 32768u /* libbabeltrace-ctf's mapping step */

/* One tracepoint field of an event class. */
struct tp_field {
	char *name; /* its CTF name (perf's alias) */
	char *len_name; /* a dynamic array's length field, or NULL */
	uint32_t offset, size; /* in the record (dynamic: the loc word) */
	uint32_t item_size, nr_items; /* fixed arrays; 1 item otherwise */
	unsigned long flags; /* TEP_FIELD_* (STRING clears ARRAY) */
	int type; /* T_* of one item */
};

struct ev_class {
	const struct prd_attr *attr; /* what it was made for */
	struct bt_ctf_event_class *ec;
	uint64_t sample_type;
	bool tracepoint, bpf_output;
	struct tp_field *tp;
	uint32_t nr_tp;
};

struct cstream {
	struct bt_ctf_stream *s; /* NULL until the CPU's first event */
	uint32_t pending; /* events in its open packet */
	uint32_t pending_bytes; /* their bytes in CTF */
};

enum { SIDE_COMM, SIDE_EXIT, SIDE_FORK, SIDE_MMAP, SIDE_MMAP2, SIDE_NR };

struct ctf_conv {
	char *dir;
	struct prd_file *f;
	bool all, tod, started;
	struct bt_ctf_writer *w;
	struct bt_ctf_clock *clock;
	struct bt_ctf_stream_class *sc;
	struct bt_ctf_field_type *t[T_NR];
	struct ev_class **cls; /* by attr index */
	uint32_t nr_cls;
	struct bt_ctf_event_class *side[SIDE_NR];
	struct cstream *streams; /* by CPU */
	uint32_t nr_cpus;
	uint32_t pending; /* events held by all streams */
	struct tpfmt *tp;
	bool tp_tried, warned_cpu, warned_late;
	uint32_t ev_bytes; /* the event being made, in CTF */
	struct conv_counts n;
	char *esc; /* conv_escape()'s buffer */
	size_t esc_cap;
};

/* ---- the output directory -------------------------------------------- */

/* A name the CTF writer writes: "metadata" or "perf_stream_<digits>". */
static bool ctf_file_name(const char *n)
{
	const char *p = "perf_stream_";

	if (!strcmp(n, "metadata"))
		return true;
	if (strncmp(n, p, strlen(p)))
		return false;
	n += strlen(p);
	if (!*n)
		return false;
	for (; *n; n++)
		if (*n < '0' || *n > '9')
			return false;
	return true;
}

static int prepare_dir(const char *dir)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd;

	if (!*dir) {
		pr_err("data convert: --to-ctf needs a directory name");
		return -EINVAL;
	}
	if (lstat(dir, &st)) {
		if (errno != ENOENT || mkdir(dir, 0755)) {
			int err = -errno;

			pr_err("data convert: %s: %s", dir, strerror(-err));
			return err;
		}
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		pr_err("data convert: %s is a symbolic link: not written through",
		       dir);
		return -ELOOP;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("data convert: %s exists and is not a directory", dir);
		return -ENOTDIR;
	}
	/* Files are made in it without O_EXCL (by libbabeltrace): nobody
	 * else may be able to plant links there. */
	if ((st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		pr_err("data convert: %s: another user %s write in it: not used",
		       dir,
		       st.st_uid != geteuid() && st.st_uid ? "owns it" : "may");
		return -EPERM;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		pr_err("data convert: %s: %s", dir, strerror(-err));
		return err;
	}
	/* An earlier trace's streams would be read with ours. */
	while ((de = readdir(d)))
		if (ctf_file_name(de->d_name) &&
		    unlinkat(dirfd(d), de->d_name, 0) && errno != ENOENT) {
			int err = -errno;

			pr_err("data convert: %s/%s: %s", dir, de->d_name,
			       strerror(-err));
			closedir(d);
			return err;
		}
	closedir(d);
	return 0;
}

/* ---- writer set-up (ctf_writer__init() and friends) ------------------- */

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BYTE_ORDER_HERE BT_CTF_BYTE_ORDER_BIG_ENDIAN
#else
#define BYTE_ORDER_HERE BT_CTF_BYTE_ORDER_LITTLE_ENDIAN
#endif

static struct bt_ctf_field_type *int_type(unsigned size, bool sign, bool hex)
{
	struct bt_ctf_field_type *t = bt_ctf_field_type_integer_create(size);

	if (!t)
		return NULL;
	if ((sign && bt_ctf_field_type_integer_set_signed(t, 1)) ||
	    (hex && bt_ctf_field_type_integer_set_base(
			    t, BT_CTF_INTEGER_BASE_HEXADECIMAL)) ||
	    bt_ctf_field_type_set_byte_order(t, BYTE_ORDER_HERE)) {
		bt_ctf_field_type_put(t);
		return NULL;
	}
	return t;
}

static int init_types(struct ctf_conv *c)
{
	c->t[T_S64] = int_type(64, true, false);
	c->t[T_U64] = int_type(64, false, false);
	c->t[T_S32] = int_type(32, true, false);
	c->t[T_U32] = int_type(32, false, false);
	c->t[T_U32_HEX] = int_type(32, false, true);
	c->t[T_U64_HEX] = int_type(64, false, true);
	c->t[T_STRING] = bt_ctf_field_type_string_create();
	for (int i = 0; i < T_NR; i++)
		if (!c->t[i])
			return -ENOMEM;
	return 0;
}

/* CLOCK_DATA: version 1, clockid, wall-clock ns, the clock's ns then. */
static bool clock_data(struct prd_file *f, uint32_t *clockid, int64_t *offset)
{
	size_t len;
	const unsigned char *p = prd_feature(f, PRD_FEAT_CLOCK_DATA, &len);
	uint32_t ver;
	uint64_t tod, cns;

	if (!p || len < 24)
		return false;
	memcpy(&ver, p, 4);
	memcpy(clockid, p + 4, 4);
	memcpy(&tod, p + 8, 8);
	memcpy(&cns, p + 16, 8);
	if (ver != 1)
		return false;
	*offset = (int64_t)(tod - cns);
	return true;
}

static int setup_clock(struct ctf_conv *c)
{
	const char *desc = "perf clock";
	int64_t offset = 0;
	uint32_t clockid;

	if (c->tod) {
		if (!clock_data(c->f, &clockid, &offset)) {
			pr_err("data convert: --tod: the file has no clock data (record it with -k/--clockid)");
			return -EINVAL;
		}
		desc = clockid_name(clockid);
	}
	if (bt_ctf_clock_set_frequency(c->clock, 1000000000) ||
	    bt_ctf_clock_set_offset(c->clock, offset) ||
	    bt_ctf_clock_set_description(c->clock, desc) ||
	    bt_ctf_clock_set_precision(c->clock, 10) ||
	    bt_ctf_clock_set_is_absolute(c->clock, 0))
		return -ENOMEM;
	return 0;
}

static int setup_env(struct ctf_conv *c)
{
	static const struct {
		const char *name;
		int feat;
	} from_file[] = {
		{ "host", PRD_FEAT_HOSTNAME },
		{ "sysname", -1 },
		{ "release", PRD_FEAT_OSRELEASE },
		{ "version", PRD_FEAT_VERSION },
		{ "machine", PRD_FEAT_ARCH },
	};

	for (size_t i = 0; i < sizeof(from_file) / sizeof(from_file[0]); i++) {
		const char *v =
			from_file[i].feat < 0 ?
				"Linux" :
				prd_feature_string(c->f, from_file[i].feat);

		/* perf fails without the feature; the field is optional */
		if (v && bt_ctf_writer_add_environment_field(
				 c->w, from_file[i].name, v))
			return -ENOMEM;
	}
	if (bt_ctf_writer_add_environment_field(c->w, "domain", "kernel") ||
	    bt_ctf_writer_add_environment_field(c->w, "tracer_name", "perf"))
		return -ENOMEM;
	return 0;
}

static int add_field(struct bt_ctf_event_class *ec, struct bt_ctf_field_type *t,
		     const char *name)
{
	if (!t || bt_ctf_event_class_add_field(ec, t, name)) {
		pr_err("data convert: cannot add the CTF field '%s'", name);
		return -ENOMEM;
	}
	return 0;
}

/* add_generic_types(): the sample's own fields, in perf's order. */
static int add_generic(struct ctf_conv *c, struct ev_class *k)
{
	uint64_t st = k->sample_type;
	int err = 0;

	if (st & PERF_SAMPLE_IP)
		err = add_field(k->ec, c->t[T_U64_HEX], "perf_ip");
	if (!err && (st & PERF_SAMPLE_TID)) {
		err = add_field(k->ec, c->t[T_S32], "perf_tid");
		if (!err)
			err = add_field(k->ec, c->t[T_S32], "perf_pid");
	}
	if (!err && (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
		err = add_field(k->ec, c->t[T_U64], "perf_id");
	if (!err && (st & PERF_SAMPLE_STREAM_ID))
		err = add_field(k->ec, c->t[T_U64], "perf_stream_id");
	if (!err && (st & PERF_SAMPLE_PERIOD))
		err = add_field(k->ec, c->t[T_U64], "perf_period");
	if (!err && (st & PERF_SAMPLE_WEIGHT))
		err = add_field(k->ec, c->t[T_U64], "perf_weight");
	if (!err && (st & PERF_SAMPLE_DATA_SRC))
		err = add_field(k->ec, c->t[T_U64], "perf_data_src");
	if (!err && (st & PERF_SAMPLE_TRANSACTION))
		err = add_field(k->ec, c->t[T_U64], "perf_transaction");
	if (!err && (st & PERF_SAMPLE_CALLCHAIN)) {
		struct bt_ctf_field_type *seq;

		err = add_field(k->ec, c->t[T_U32], "perf_callchain_size");
		seq = err ? NULL :
			    bt_ctf_field_type_sequence_create(
				    c->t[T_U64_HEX], "perf_callchain_size");
		if (!err)
			err = add_field(k->ec, seq, "perf_callchain");
		bt_ctf_field_type_put(seq);
	}
	return err;
}

/* get_tracepoint_field_type(): unsigned longs and pointers in hex. */
/* get_tracepoint_field_type(): unsigned longs and pointers in hex; the
 * items of an array of 8-byte numbers 64-bit too (perf sizes them by the
 * whole array, and then fails on a value past 32 bits). */
static int tp_type(const struct tep_format_field *tf)
{
	unsigned long fl = tf->flags;
	bool wide = tf->size == 8 ||
		    ((fl & TEP_FIELD_IS_ARRAY) &&
		     !(fl & TEP_FIELD_IS_DYNAMIC) && tf->arraylen &&
		     tf->size / (int)tf->arraylen == 8) ||
		    ((fl & TEP_FIELD_IS_ARRAY) && (fl & TEP_FIELD_IS_DYNAMIC) &&
		     tf->elementsize == 8);

	if (fl & TEP_FIELD_IS_STRING)
		return T_STRING;
	if (!(fl & TEP_FIELD_IS_SIGNED) &&
	    (fl & (TEP_FIELD_IS_LONG | TEP_FIELD_IS_POINTER)))
		return T_U64_HEX;
	if (fl & TEP_FIELD_IS_SIGNED)
		return wide ? T_S64 : T_S32;
	return wide ? T_U64 : T_U32;
}

static bool class_has(struct bt_ctf_event_class *ec, const char *name)
{
	struct bt_ctf_field_type *t =
		bt_ctf_event_class_get_field_by_name(ec, name);

	if (!t)
		return false;
	bt_ctf_field_type_put(t);
	return true;
}

/* perf's event_class_add_field() naming: a '_' before a name CTF
 * reserves, "<name>_dupl_N" (N < 10) for a name the class has. */
static char *field_name(struct bt_ctf_event_class *ec, const char *orig)
{
	char *name = bt_ctf_validate_identifier(orig) ?
			     (asprintf(&name, "_%s", orig) < 0 ? NULL : name) :
			     strdup(orig);

	for (int dup = 1; name && class_has(ec, name); dup++) {
		free(name);
		if (dup >= 10 || asprintf(&name, "%s_dupl_%d", orig, dup) < 0)
			return NULL;
	}
	return name;
}

static int add_tp_field(struct ctf_conv *c, struct ev_class *k,
			const struct tep_format_field *tf)
{
	struct tp_field *fd = &k->tp[k->nr_tp];
	struct bt_ctf_field_type *t;
	int err;

	memset(fd, 0, sizeof(*fd));
	fd->flags = tf->flags;
	if (fd->flags & TEP_FIELD_IS_STRING)
		fd->flags &= ~(unsigned long)TEP_FIELD_IS_ARRAY;
	fd->type = tp_type(tf);
	fd->offset = tf->offset < 0 ? UINT32_MAX : (uint32_t)tf->offset;
	fd->size = tf->size < 0 ? 0 : (uint32_t)tf->size;
	fd->item_size = fd->size;
	fd->nr_items = 1;
	fd->name = field_name(k->ec, tf->name);
	if (!fd->name) {
		pr_err("data convert: %s: no CTF name for the field '%s'",
		       k->attr->name ? k->attr->name : "?", tf->name);
		return -EINVAL;
	}
	if ((fd->flags & TEP_FIELD_IS_ARRAY) &&
	    (fd->flags & TEP_FIELD_IS_DYNAMIC)) {
		/* A sequence: perf cannot convert it (an array of 0). */
		fd->item_size = tf->elementsize;
		if (fd->item_size != 1 && fd->item_size != 2 &&
		    fd->item_size != 4 && fd->item_size != 8)
			fd->item_size = 4;
		if (asprintf(&fd->len_name, "%s_len", fd->name) < 0) {
			fd->len_name = NULL;
			return -ENOMEM;
		}
		err = add_field(k->ec, c->t[T_U32], fd->len_name);
		t = err ? NULL :
			  bt_ctf_field_type_sequence_create(c->t[fd->type],
							    fd->len_name);
	} else if (fd->flags & TEP_FIELD_IS_ARRAY) {
		if (!tf->arraylen) {
			pr_err("data convert: %s: the array '%s' has no length",
			       k->attr->name ? k->attr->name : "?", tf->name);
			return -EINVAL;
		}
		fd->nr_items = tf->arraylen;
		fd->item_size = fd->size / tf->arraylen;
		err = 0;
		t = bt_ctf_field_type_array_create(c->t[fd->type],
						   tf->arraylen);
	} else {
		err = 0;
		t = c->t[fd->type];
		bt_ctf_field_type_get(t);
	}
	if (!err)
		err = add_field(k->ec, t, fd->name);
	bt_ctf_field_type_put(t);
	if (!err)
		k->nr_tp++;
	return err;
}

static struct tpfmt *tracing_formats(struct ctf_conv *c)
{
	const void *td;
	size_t len;

	if (c->tp || c->tp_tried)
		return c->tp;
	td = prd_feature(c->f, PRD_FEAT_TRACING_DATA, &len);
	if (!td)
		return NULL; /* a pipe's may come later */
	c->tp_tried = true;
	if (tpfmt_new(td, len, &c->tp))
		pr_warn("data convert: the TRACING_DATA is damaged: tracepoint fields left out");
	return c->tp;
}

static int add_tp_fields(struct ctf_conv *c, struct ev_class *k)
{
	struct tpfmt *tp = tracing_formats(c);
	struct tep_event *te;
	struct tep_format_field *lists[2], *tf;
	uint32_t n = 0;

	te = tp && k->attr->attr.config <= INT32_MAX ?
		     tpfmt_event(tp, (int)k->attr->attr.config) :
		     NULL;
	if (!te) {
		pr_warn("data convert: %s: no format in the file: its fields are left out",
			k->attr->name ? k->attr->name : "?");
		return 0;
	}
	lists[0] = te->format.common_fields;
	lists[1] = te->format.fields;
	for (int l = 0; l < 2; l++)
		for (tf = lists[l]; tf; tf = tf->next)
			n++;
	/* one more: the entry an error leaves half made is freed too */
	k->tp = calloc((size_t)n + 1, sizeof(*k->tp));
	if (!k->tp)
		return -ENOMEM;
	for (int l = 0; l < 2; l++)
		for (tf = lists[l]; tf; tf = tf->next) {
			int err = add_tp_field(c, k, tf);

			if (err)
				return err;
		}
	return 0;
}

static void class_free(struct ev_class *k)
{
	if (!k)
		return;
	for (uint32_t i = 0; i < k->nr_tp; i++) {
		free(k->tp[i].name);
		free(k->tp[i].len_name);
	}
	if (k->tp) {
		/* the one being made when an error stopped it */
		free(k->tp[k->nr_tp].name);
		free(k->tp[k->nr_tp].len_name);
	}
	free(k->tp);
	bt_ctf_event_class_put(k->ec);
	free(k);
}

/* add_event(): the class of one event of the file. */
static int add_class(struct ctf_conv *c, const struct prd_attr *a)
{
	struct ev_class *k;
	int err;

	if (a->index >= c->nr_cls) {
		uint32_t n = a->index + 1;
		struct ev_class **v = realloc(c->cls, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->nr_cls, 0, (n - c->nr_cls) * sizeof(*v));
		c->cls = v;
		c->nr_cls = n;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->attr = a;
	k->sample_type = a->attr.sample_type;
	k->tracepoint = a->attr.type == PERF_TYPE_TRACEPOINT;
	k->bpf_output = a->attr.type == PERF_TYPE_SOFTWARE &&
			a->attr.config == BPF_OUTPUT_CONFIG;
	k->ec = bt_ctf_event_class_create(a->name ? a->name : "[unknown]");
	err = k->ec ? add_generic(c, k) : -ENOMEM;
	if (!err && k->tracepoint)
		err = add_tp_fields(c, k);
	if (!err && k->bpf_output) {
		struct bt_ctf_field_type *seq;

		err = add_field(k->ec, c->t[T_U32], "raw_len");
		seq = err ? NULL :
			    bt_ctf_field_type_sequence_create(c->t[T_U32_HEX],
							      "raw_len");
		if (!err)
			err = add_field(k->ec, seq, "raw_data");
		bt_ctf_field_type_put(seq);
	}
	if (!err && bt_ctf_stream_class_add_event_class(c->sc, k->ec)) {
		pr_err("data convert: cannot add the event class '%s'",
		       a->name ? a->name : "?");
		err = -EINVAL;
	}
	if (err) {
		class_free(k);
		return err;
	}
	class_free(c->cls[a->index]); /* another attr at this index */
	c->cls[a->index] = k;
	return 0;
}

static int add_side_classes(struct ctf_conv *c)
{
	/* setup_non_sample_events(): comm, exit, fork, mmap, mmap2 */
	static const char *const names[SIDE_NR] = { "perf_comm", "perf_exit",
						    "perf_fork", "perf_mmap",
						    "perf_mmap2" };

	for (int i = 0; i < SIDE_NR; i++) {
		struct bt_ctf_event_class *ec =
			bt_ctf_event_class_create(names[i]);
		int err = ec ? 0 : -ENOMEM;

		c->side[i] = ec;
		if (!err)
			err = add_field(ec, c->t[T_U32], "pid");
		if (!err && (i == SIDE_EXIT || i == SIDE_FORK))
			err = add_field(ec, c->t[T_U32], "ppid");
		if (!err)
			err = add_field(ec, c->t[T_U32], "tid");
		if (!err && (i == SIDE_EXIT || i == SIDE_FORK)) {
			err = add_field(ec, c->t[T_U32], "ptid");
			if (!err)
				err = add_field(ec, c->t[T_U64], "time");
		}
		if (!err && i == SIDE_COMM)
			err = add_field(ec, c->t[T_STRING], "comm");
		if (!err && (i == SIDE_MMAP || i == SIDE_MMAP2)) {
			err = add_field(ec, c->t[T_U64_HEX], "start");
			if (!err)
				err = add_field(ec, c->t[T_STRING], "filename");
		}
		if (!err && bt_ctf_stream_class_add_event_class(c->sc, ec))
			err = -EINVAL;
		if (err)
			return err;
	}
	return 0;
}

/* The writer, as perf sets it up before reading the events. */
static int start(struct ctf_conv *c)
{
	struct bt_ctf_field_type *pctx;
	size_t len;
	const unsigned char *nrcpus;
	uint32_t n = prd_nr_attrs(c->f);
	int err;

	c->started = true;
	c->w = bt_ctf_writer_create(c->dir);
	if (!c->w) {
		pr_err("data convert: cannot create the CTF writer in %s",
		       c->dir);
		return -EIO;
	}

	c->clock = bt_ctf_clock_create("perf_clock");
	if (!c->clock)
		return -ENOMEM;
	err = setup_clock(c);
	if (err)
		return err;
	c->sc = bt_ctf_stream_class_create("perf_stream");
	if (!c->sc || bt_ctf_stream_class_set_clock(c->sc, c->clock))
		return -ENOMEM;
	err = init_types(c);
	if (err)
		return err;
	pctx = bt_ctf_stream_class_get_packet_context_type(c->sc);
	err = pctx && !bt_ctf_field_type_structure_add_field(pctx, c->t[T_U32],
							     "cpu_id") ?
		      0 :
		      -ENOMEM;
	bt_ctf_field_type_put(pctx);
	if (!err && bt_ctf_writer_add_clock(c->w, c->clock))
		err = -ENOMEM;
	if (!err)
		err = setup_env(c);
	for (uint32_t i = 0; !err && i < n; i++) {
		const struct prd_attr *a = prd_attr(c->f, i);

		if (a)
			err = add_class(c, a);
	}
	if (!err && c->all)
		err = add_side_classes(c);
	if (err)
		return err;
	/* setup_streams(): as many as the file's CPUs */
	nrcpus = prd_feature(c->f, PRD_FEAT_NRCPUS, &len);
	if (nrcpus && len >= 4)
		memcpy(&c->nr_cpus, nrcpus, 4);
	if (!c->nr_cpus || c->nr_cpus > MAX_CPUS)
		c->nr_cpus = MAX_CPUS;
	c->streams = calloc(c->nr_cpus, sizeof(*c->streams));
	return c->streams ? 0 : -ENOMEM;
}

/* ---- events ------------------------------------------------------------ */

static int flush_stream(struct ctf_conv *c, uint32_t cpu)
{
	struct cstream *cs = &c->streams[cpu];

	if (!cs->s || !cs->pending)
		return 0;
	c->pending -= cs->pending;
	cs->pending = 0;
	cs->pending_bytes = 0;
	if (bt_ctf_stream_flush(cs->s)) {
		pr_err("data convert: writing the CTF stream of CPU %u to %s failed",
		       cpu, c->dir);
		return -EIO;
	}
	return 0;
}

static int flush_all(struct ctf_conv *c)
{
	int err = 0;

	for (uint32_t cpu = 0; c->streams && cpu < c->nr_cpus; cpu++) {
		int e = flush_stream(c, cpu);

		if (!err)
			err = e;
	}
	return err;
}

/* ctf_stream(): the CPU's stream, made on its first event. */
static struct cstream *stream_of(struct ctf_conv *c, uint32_t cpu)
{
	struct cstream *cs = &c->streams[cpu];
	struct bt_ctf_field *pctx, *id;
	int err;

	if (cs->s)
		return cs;
	cs->s = bt_ctf_writer_create_stream(c->w, c->sc);
	if (!cs->s)
		return NULL;
	pctx = bt_ctf_stream_get_packet_context(cs->s);
	id = pctx ? bt_ctf_field_structure_get_field(pctx, "cpu_id") : NULL;
	err = !id || bt_ctf_field_unsigned_integer_set_value(id, cpu);
	bt_ctf_field_put(id);
	bt_ctf_field_put(pctx);
	if (err) {
		bt_ctf_stream_put(cs->s);
		cs->s = NULL;
		return NULL;
	}
	c->n.streams++;
	return cs;
}

/* Appends @ev (c->ev_bytes in CTF) to @cpu's stream, its packet written
 * out first when it would not fit. */
static int append(struct ctf_conv *c, uint32_t cpu, struct bt_ctf_event *ev)
{
	uint32_t bytes = c->ev_bytes;
	struct cstream *cs = stream_of(c, cpu);
	int err = 0;

	if (!cs) {
		pr_err("data convert: cannot create the CTF stream of CPU %u",
		       cpu);
		return -ENOMEM;
	}
	if (cs->pending && PACKET_OVERHEAD_BYTES + cs->pending_bytes + bytes >
				   PACKET_MAP_BYTES)
		err = flush_stream(c, cpu);
	else if (c->pending >= PENDING_EVENTS)
		err = flush_all(c);
	if (err)
		return err;
	if (bt_ctf_stream_append_event(cs->s, ev)) {
		/* perf ignores it; the event is not in the trace */
		if (!c->n.dropped++)
			pr_warn("data convert: the CTF writer refused an event of CPU %u: left out (the others are counted)",
				cpu);
		return 0;
	}
	cs->pending++;
	cs->pending_bytes += bytes;
	c->pending++;
	return 0;
}

/* The payload field @name of type @t set to @v. */
static int set_u(struct ctf_conv *c, struct bt_ctf_event *ev, const char *name,
		 int t, uint64_t v)
{
	struct bt_ctf_field *fl = bt_ctf_event_get_payload(ev, name);
	int err = !fl || bt_ctf_field_unsigned_integer_set_value(fl, v);

	bt_ctf_field_put(fl);
	c->ev_bytes += type_bytes[t];
	return err ? -EINVAL : 0;
}

static int set_s(struct ctf_conv *c, struct bt_ctf_event *ev, const char *name,
		 int64_t v)
{
	struct bt_ctf_field *fl = bt_ctf_event_get_payload(ev, name);
	int err = !fl || bt_ctf_field_signed_integer_set_value(fl, v);

	bt_ctf_field_put(fl);
	c->ev_bytes += type_bytes[T_S32];
	return err ? -EINVAL : 0;
}

/* string_set_value(): @s (@len bytes, up to its first NUL), every byte
 * that is not printable ASCII as "\xNN". */
static int set_string(struct ctf_conv *c, struct bt_ctf_field *fl,
		      const char *s, size_t len)
{
	size_t n = strnlen(s, len), o = 0;

	if (n * 4 + 1 > c->esc_cap) {
		size_t cap = n * 4 + 64;
		char *p = realloc(c->esc, cap);

		if (!p)
			return -ENOMEM;
		c->esc = p;
		c->esc_cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x20 && ch < 0x7f) {
			c->esc[o++] = (char)ch;
		} else {
			static const char hex[] = "0123456789abcdef";

			c->esc[o++] = '\\';
			c->esc[o++] = 'x';
			c->esc[o++] = hex[ch >> 4];
			c->esc[o++] = hex[ch & 15];
		}
	}
	c->esc[o] = 0;
	c->ev_bytes += (uint32_t)o + 1;
	return bt_ctf_field_string_set_value(fl, c->esc) ? -EINVAL : 0;
}

static int set_str(struct ctf_conv *c, struct bt_ctf_event *ev,
		   const char *name, const char *s, size_t len)
{
	struct bt_ctf_field *fl = bt_ctf_event_get_payload(ev, name);
	int err = fl ? set_string(c, fl, s, len) : -EINVAL;

	bt_ctf_field_put(fl);
	return err;
}

/* A number of 1, 2, 4 or 8 bytes in the record (tep_read_number()),
 * 0 for other sizes and for bytes beyond the record. */
static uint64_t rd_num(const unsigned char *raw, uint32_t raw_size,
		       uint64_t off, uint32_t size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (!raw || off + size > raw_size)
		return 0;
	switch (size) {
	case 1:
		memcpy(&v8, raw + off, 1);
		return v8;
	case 2:
		memcpy(&v16, raw + off, 2);
		return v16;
	case 4:
		memcpy(&v32, raw + off, 4);
		return v32;
	case 8:
		memcpy(&v64, raw + off, 8);
		return v64;
	default:
		return 0;
	}
}

/* adjust_signedness(): an item of @size bytes, sign-extended. */
static int64_t sign_extend(uint64_t v, uint32_t size)
{
	if (size == 1)
		return (int8_t)v;
	if (size == 2)
		return (int16_t)v;
	if (size == 4)
		return (int32_t)v;
	return (int64_t)v;
}

static int set_item(struct ctf_conv *c, struct bt_ctf_field *fl,
		    const struct tp_field *fd, const unsigned char *raw,
		    uint32_t raw_size, uint64_t off, uint64_t str_end)
{
	uint64_t v;

	if (fd->flags & TEP_FIELD_IS_STRING) {
		if (!raw || off >= str_end)
			return set_string(c, fl, "", 0);
		return set_string(c, fl, (const char *)raw + off,
				  (size_t)(str_end - off));
	}
	v = rd_num(raw, raw_size, off, fd->item_size);
	c->ev_bytes += type_bytes[fd->type];
	if (fd->flags & TEP_FIELD_IS_SIGNED)
		return bt_ctf_field_signed_integer_set_value(
			       fl, sign_extend(v, fd->item_size)) ?
			       -EINVAL :
			       0;
	return bt_ctf_field_unsigned_integer_set_value(fl, v) ? -EINVAL : 0;
}

/* add_tracepoint_field_value(), every offset checked against the record. */
static int set_tp_field(struct ctf_conv *c, struct bt_ctf_event *ev,
			const struct tp_field *fd, const unsigned char *raw,
			uint32_t raw_size)
{
	uint64_t off = fd->offset, str_end = raw_size, len = 0;
	struct bt_ctf_field *fl;
	int err = 0;

	if (fd->flags & TEP_FIELD_IS_DYNAMIC) {
		uint64_t loc = rd_num(raw, raw_size, fd->offset, fd->size);

		len = loc >> 16;
		off = loc & 0xffff;
		if (fd->flags & TEP_FIELD_IS_RELATIVE)
			off += (uint64_t)fd->offset + fd->size;
		if (off + len < str_end)
			str_end = off + len;
	}
	if (fd->len_name) {
		/* a __data_loc array: its items, as many as fit */
		uint64_t nr = 0;
		struct bt_ctf_field *lf;

		if (off <= raw_size && off + len <= raw_size)
			nr = len / fd->item_size;
		lf = bt_ctf_event_get_payload(ev, fd->len_name);
		fl = bt_ctf_event_get_payload(ev, fd->name);
		c->ev_bytes += type_bytes[T_U32];
		err = !lf || !fl ||
		      bt_ctf_field_unsigned_integer_set_value(lf, nr) ||
		      bt_ctf_field_sequence_set_length(fl, lf);
		for (uint64_t i = 0; !err && i < nr; i++) {
			struct bt_ctf_field *it =
				bt_ctf_field_sequence_get_field(fl, i);

			err = !it || set_item(c, it, fd, raw, raw_size,
					      off + i * fd->item_size, str_end);
			bt_ctf_field_put(it);
		}
		bt_ctf_field_put(lf);
		bt_ctf_field_put(fl);
		return err ? -EINVAL : 0;
	}
	fl = bt_ctf_event_get_payload(ev, fd->name);
	if (!fl)
		return -EINVAL;
	if (fd->flags & TEP_FIELD_IS_ARRAY) {
		for (uint32_t i = 0; !err && i < fd->nr_items; i++) {
			struct bt_ctf_field *it =
				bt_ctf_field_array_get_field(fl, i);

			err = !it ? -EINVAL :
				    set_item(c, it, fd, raw, raw_size,
					     off + (uint64_t)i * fd->item_size,
					     str_end);
			bt_ctf_field_put(it);
		}
	} else {
		err = set_item(c, fl, fd, raw, raw_size, off, str_end);
	}
	bt_ctf_field_put(fl);
	return err;
}

/* A sequence of @nr items of @item_size bytes (its type's) at @items,
 * its length in @len_name. */
static int set_seq(struct ctf_conv *c, struct bt_ctf_event *ev,
		   const char *len_name, const char *name, const void *items,
		   uint64_t nr, unsigned item_size)
{
	struct bt_ctf_field *lf = bt_ctf_event_get_payload(ev, len_name);
	struct bt_ctf_field *fl = bt_ctf_event_get_payload(ev, name);
	int err = !lf || !fl ||
		  bt_ctf_field_unsigned_integer_set_value(lf, nr) ||
		  bt_ctf_field_sequence_set_length(fl, lf);

	c->ev_bytes += type_bytes[T_U32] + (uint32_t)(nr * item_size);
	for (uint64_t i = 0; !err && i < nr; i++) {
		struct bt_ctf_field *it =
			bt_ctf_field_sequence_get_field(fl, i);
		uint64_t v = 0;

		memcpy(&v, (const unsigned char *)items + i * item_size,
		       item_size);
		err = !it || bt_ctf_field_unsigned_integer_set_value(it, v);
		bt_ctf_field_put(it);
	}
	bt_ctf_field_put(lf);
	bt_ctf_field_put(fl);
	return err ? -EINVAL : 0;
}

static int fill_sample(struct ctf_conv *c, const struct ev_class *k,
		       struct bt_ctf_event *ev, const struct conv_sample *cs)
{
	const struct prd_sample *s = cs->s;
	uint64_t st = k->sample_type;
	int err = 0;

	if (st & PERF_SAMPLE_IP)
		err = set_u(c, ev, "perf_ip", T_U64_HEX, s->ip);
	if (!err && (st & PERF_SAMPLE_TID)) {
		err = set_s(c, ev, "perf_tid", (int32_t)s->tid);
		if (!err)
			err = set_s(c, ev, "perf_pid", (int32_t)s->pid);
	}
	if (!err && (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
		err = set_u(c, ev, "perf_id", T_U64, cs->id);
	if (!err && (st & PERF_SAMPLE_STREAM_ID))
		err = set_u(c, ev, "perf_stream_id", T_U64, s->stream_id);
	if (!err && (st & PERF_SAMPLE_PERIOD))
		err = set_u(c, ev, "perf_period", T_U64, cs->period);
	if (!err && (st & PERF_SAMPLE_WEIGHT))
		err = set_u(c, ev, "perf_weight", T_U64, s->weight);
	if (!err && (st & PERF_SAMPLE_DATA_SRC))
		err = set_u(c, ev, "perf_data_src", T_U64, s->data_src);
	if (!err && (st & PERF_SAMPLE_TRANSACTION))
		err = set_u(c, ev, "perf_transaction", T_U64, s->transaction);
	for (uint32_t i = 0; !err && i < k->nr_tp; i++)
		err = set_tp_field(c, ev, &k->tp[i], s->raw, s->raw_size);
	if (!err && (st & PERF_SAMPLE_CALLCHAIN))
		err = set_seq(c, ev, "perf_callchain_size", "perf_callchain",
			      s->callchain, s->callchain ? s->nr_callchain : 0,
			      8);
	if (!err && k->bpf_output)
		err = set_seq(c, ev, "raw_len", "raw_data", s->raw,
			      s->raw ? s->raw_size / 4 : 0, 4);
	return err;
}

/* An event the writer refused a field of (a value its type cannot
 * hold): left out, counted, said once. */
static void drop(struct ctf_conv *c, const char *what, uint64_t offset)
{
	if (!c->n.dropped++)
		pr_warn("data convert: %s at offset %#llx: a field the CTF writer refuses: the event is left out (the others are counted)",
			what ? what : "?", (unsigned long long)offset);
}

static struct ev_class *class_of(struct ctf_conv *c, const struct prd_attr *a)
{
	struct ev_class *k = a->index < c->nr_cls ? c->cls[a->index] : NULL;

	if (k && k->attr == a)
		return k;
	/* A pipe's attr announced after the first sample: a class added
	 * late (the metadata is written at the end). */
	if (add_class(c, a)) {
		if (!c->warned_late)
			pr_warn("data convert: the event '%s' cannot be added: its samples are left out",
				a->name ? a->name : "?");
		c->warned_late = true;
		return NULL;
	}
	return c->cls[a->index];
}

static void set_clock(struct ctf_conv *c, uint64_t t)
{
	/* Refused when it would go back: the event then gets the clock's
	 * last value, as perf's do. */
	bt_ctf_clock_set_time(c->clock, (int64_t)t);
}

int ctf_conv_sample(struct ctf_conv *c, const struct conv_sample *cs)
{
	const struct prd_sample *s = cs->s;
	struct ev_class *k;
	struct bt_ctf_event *ev;
	uint32_t cpu = 0;
	int err;

	if (!c->started && (err = start(c)))
		return err;
	k = class_of(c, cs->attr);
	if (!k)
		return 0;
	ev = bt_ctf_event_create(k->ec);
	if (!ev)
		return -ENOMEM;
	c->ev_bytes = EVENT_HEADER_BYTES;
	if (k->sample_type & PERF_SAMPLE_TIME)
		set_clock(c, s->time);
	if (fill_sample(c, k, ev, cs)) {
		/* perf stops there; one event is left out here */
		drop(c, cs->attr->name, cs->ev->offset);
		bt_ctf_event_put(ev);
		return 0;
	}
	c->n.samples++;
	c->n.bytes += cs->ev->hdr->size;
	if (k->sample_type & PERF_SAMPLE_CPU)
		cpu = s->cpu;
	if (cpu >= c->nr_cpus) {
		if (!c->warned_cpu)
			pr_warn("data convert: an event was recorded on CPU %u, the file has %u: put on CPU 0's stream",
				cpu, c->nr_cpus);
		c->warned_cpu = true;
		cpu = 0;
	}
	err = append(c, cpu, ev);
	bt_ctf_event_put(ev);
	return err;
}

int ctf_conv_side(struct ctf_conv *c, const struct prd_event *pe)
{
	const struct perf_event_header *h = pe->hdr;
	const union prd_record *v = pe->rec;
	uint32_t payload = prd_payload_size(c->f, pe), pid, tid, ppid, ptid;
	uint64_t t, start_addr;
	struct bt_ctf_event *ev;
	int kind, err;
	const char *name;
	uint32_t name_len;

	switch (h->type) {
	case PERF_RECORD_COMM:
		kind = SIDE_COMM;
		break;
	case PERF_RECORD_EXIT:
		kind = SIDE_EXIT;
		break;
	case PERF_RECORD_FORK:
		kind = SIDE_FORK;
		break;
	case PERF_RECORD_MMAP:
		kind = SIDE_MMAP;
		break;
	case PERF_RECORD_MMAP2:
		kind = SIDE_MMAP2;
		break;
	default:
		return 0;
	}
	if (!c->all)
		return 0;
	if (!c->started && (err = start(c)))
		return err;
	if (payload < 16)
		return 0; /* too short: the reader has said so */
	/* pid and tid (FORK, EXIT: pid and ppid) lead every one of them */
	pid = kind == SIDE_COMM			     ? v->comm.pid :
	      kind == SIDE_FORK || kind == SIDE_EXIT ? v->fork.pid :
						       v->mmap.pid;
	tid = kind == SIDE_COMM			     ? v->comm.tid :
	      kind == SIDE_FORK || kind == SIDE_EXIT ? v->fork.ppid :
						       v->mmap.tid;
	ev = bt_ctf_event_create(c->side[kind]);
	if (!ev)
		return -ENOMEM;
	c->ev_bytes = EVENT_HEADER_BYTES;
	/* perf's sample->time: the sample_id_all trailer's, if any */
	if (pe->sample &&
	    (pe->sample->attr ?
		     (pe->sample->attr->attr.sample_type & PERF_SAMPLE_TIME) :
		     pe->sample->time))
		set_clock(c, pe->sample->time);
	err = set_u(c, ev, "pid", T_U32, pid);
	switch (kind) {
	case SIDE_COMM:
		if (!err)
			err = set_u(c, ev, "tid", T_U32, tid);
		if (!err)
			err = set_str(c, ev, "comm",
				      v->comm.comm ? v->comm.comm : "",
				      v->comm.comm_len);
		break;
	case SIDE_EXIT:
	case SIDE_FORK:
		/* pid, ppid, tid, ptid, time */
		ppid = tid;
		if (payload >= 32)
			tid = v->fork.tid, ptid = v->fork.ptid,
			t = v->fork.time;
		else
			tid = ptid = 0, t = 0;
		if (!err)
			err = set_u(c, ev, "ppid", T_U32, ppid);
		if (!err)
			err = set_u(c, ev, "tid", T_U32, tid);
		if (!err)
			err = set_u(c, ev, "ptid", T_U32, ptid);
		if (!err)
			err = set_u(c, ev, "time", T_U64, t);
		break;
	default:
		start_addr = payload >= 24 ? v->mmap.start : 0;
		name = v->mmap.filename;
		name_len = v->mmap.filename_len;
		if (!err)
			err = set_u(c, ev, "tid", T_U32, tid);
		if (!err)
			err = set_u(c, ev, "start", T_U64_HEX, start_addr);
		if (!err)
			err = set_str(c, ev, "filename", name ? name : "",
				      name_len);
		break;
	}
	if (err) {
		drop(c, prd_type_name(h->type), pe->offset);
		err = 0;
	} else {
		c->n.non_samples++;
		c->n.bytes += h->size;
		err = append(c, 0, ev);
	}
	bt_ctf_event_put(ev);
	return err;
}

int ctf_conv_new(const char *dir, struct prd_file *f, bool all, bool tod,
		 struct ctf_conv **out)
{
	struct ctf_conv *c;
	int err;

	*out = NULL;
	err = prepare_dir(dir);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return -ENOMEM;
	}
	c->f = f;
	c->all = all;
	c->tod = tod;
	/* A file has its attrs, features and formats now; a pipe's come
	 * as records, before the first event written. */
	if (!prd_is_pipe(f) && (err = start(c))) {
		ctf_conv_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int ctf_conv_finish(struct ctf_conv *c)
{
	int err = c->started ? 0 : start(c);

	/* The writer learns its byte order from its first stream: without
	 * one (no events) the metadata says "unknown", which nothing reads
	 * (perf's then). An empty stream of CPU 0 settles it. */
	if (!err && !c->n.streams && !stream_of(c, 0))
		err = -ENOMEM;
	if (!err)
		err = flush_all(c);
	if (!err) {
		struct stat st;
		int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		bt_ctf_writer_flush_metadata(c->w);
		/* it says nothing of a failed write: look at the file */
		if (dfd < 0 || fstatat(dfd, "metadata", &st, 0) ||
		    st.st_size == 0) {
			pr_err("data convert: the CTF metadata was not written to %s",
			       c->dir);
			err = -EIO;
		}
		if (dfd >= 0)
			close(dfd);
	}
	return err;
}

const struct conv_counts *ctf_conv_counts(const struct ctf_conv *c)
{
	return &c->n;
}

void ctf_conv_free(struct ctf_conv *c)
{
	if (!c)
		return;
	for (uint32_t cpu = 0; c->streams && cpu < c->nr_cpus; cpu++)
		bt_ctf_stream_put(c->streams[cpu].s);
	free(c->streams);
	for (uint32_t i = 0; i < c->nr_cls; i++)
		class_free(c->cls[i]);
	free(c->cls);
	for (int i = 0; i < SIDE_NR; i++)
		bt_ctf_event_class_put(c->side[i]);
	for (int i = 0; i < T_NR; i++)
		bt_ctf_field_type_put(c->t[i]);
	bt_ctf_stream_class_put(c->sc);
	bt_ctf_clock_put(c->clock);
	bt_ctf_writer_put(c->w);
	tpfmt_free(c->tp);
	free(c->esc);
	free(c->dir);
	free(c);
}
