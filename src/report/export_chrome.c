// SPDX-License-Identifier: MIT
/*
 * `perfring export -f chrome`: the Chrome trace-event JSON (export.c says
 * how), the sched_switch layout its slices are read with, and a
 * trace.dat's ftrace events merged in by time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export_internal.h"

/* ---- sched_switch layout ------------------------------------------- */

struct cur {
	const unsigned char *p, *e;
};

static bool take(struct cur *c, size_t n, const unsigned char **at)
{
	if ((size_t)(c->e - c->p) < n)
		return false;
	if (at)
		*at = c->p;
	c->p += n;
	return true;
}

static bool get32(struct cur *c, uint32_t *v)
{
	const unsigned char *p;

	if (!take(c, 4, &p))
		return false;
	memcpy(v, p, 4);
	return true;
}

static bool get64(struct cur *c, uint64_t *v)
{
	const unsigned char *p;

	if (!take(c, 8, &p))
		return false;
	memcpy(v, p, 8);
	return true;
}

static bool take_str(struct cur *c, const unsigned char **s, size_t *len)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->e - c->p));

	if (!nul)
		return false;
	*s = c->p;
	*len = (size_t)(nul - c->p);
	c->p = nul + 1;
	return true;
}

/* The value after "@key" in a format text (up to the end of line). */
static bool fmt_value(const char *t, size_t n, const char *key, char *out,
		      size_t outsz)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i + kl <= n; i++) {
		size_t j, k = 0;

		if ((i && t[i - 1] != '\n') || memcmp(t + i, key, kl))
			continue;
		j = i + kl;
		while (j < n && (t[j] == ' ' || t[j] == '\t'))
			j++;
		while (j < n && t[j] != '\n' && t[j] != '\r' && k + 1 < outsz)
			out[k++] = t[j++];
		out[k] = 0;
		return true;
	}
	return false;
}

/* Reads an unsigned number after "@key" in @s..@e; false if absent. */
static bool num_after(const char *s, const char *e, const char *key,
		      uint32_t *v)
{
	size_t kl = strlen(key);
	unsigned long long x = 0;
	const char *p;

	for (p = s; p + kl <= e; p++)
		if (!memcmp(p, key, kl))
			break;
	if (p + kl > e)
		return false;
	p += kl;
	if (p >= e || *p < '0' || *p > '9')
		return false;
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned long long)(*p - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	return true;
}

/* The fields of one event format ("\tfield:TYPE NAME;\toffset:N;\tsize:N;"). */
static void parse_fields(struct ss_layout *ss, const char *t, size_t n)
{
	const char *e = t + n;

	for (const char *l = t; l < e;) {
		const char *nl = memchr(l, '\n', (size_t)(e - l));
		const char *le = nl ? nl : e, *fs, *semi, *ne, *nb;
		struct field fld, *dst = NULL;
		size_t nlen;

		fs = memmem(l, (size_t)(le - l), "field:", 6);
		if (!fs)
			goto next;
		semi = memchr(fs, ';', (size_t)(le - fs));
		if (!semi)
			goto next;
		/* The name: the last identifier before ';' (an array's
		 * "[16]" skipped). */
		ne = semi;
		if (ne > fs && ne[-1] == ']') {
			while (ne > fs && *ne != '[')
				ne--;
		}
		nb = ne;
		while (nb > fs + 6 &&
		       (nb[-1] == '_' || (nb[-1] >= 'a' && nb[-1] <= 'z') ||
			(nb[-1] >= 'A' && nb[-1] <= 'Z') ||
			(nb[-1] >= '0' && nb[-1] <= '9')))
			nb--;
		nlen = (size_t)(ne - nb);
		if (!num_after(semi, le, "offset:", &fld.off) ||
		    !num_after(semi, le, "size:", &fld.size))
			goto next;
#define IS(s) (nlen == sizeof(s) - 1 && !memcmp(nb, s, nlen))
		if (IS("prev_comm"))
			dst = &ss->prev_comm;
		else if (IS("prev_pid"))
			dst = &ss->prev_pid;
		else if (IS("prev_state"))
			dst = &ss->prev_state;
		else if (IS("next_comm"))
			dst = &ss->next_comm;
		else if (IS("next_pid"))
			dst = &ss->next_pid;
#undef IS
		if (dst)
			*dst = fld;
next:
		l = le + 1;
	}
}

/* Finds sched:sched_switch in a TRACING_DATA blob (layout: see
 * src/format/tracing_data.c). */
void export_parse_sched_switch(struct ss_layout *ss, const void *blob,
			       size_t len)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r',
						 'a',  'c',  'i',  'n', 'g' };
	struct cur c = { blob, (const unsigned char *)blob + len };
	const unsigned char *s;
	size_t sl;
	uint32_t n, nsys;
	uint64_t sz;

	if (!take(&c, sizeof(magic), &s) || memcmp(s, magic, sizeof(magic)))
		return;
	if (!take_str(&c, &s, &sl) || !take(&c, 2 + 4, NULL))
		return;
	if (!take_str(&c, &s, &sl) || !get64(&c, &sz) ||
	    sz > (uint64_t)(c.e - c.p) || !take(&c, (size_t)sz, NULL))
		return; /* header_page */
	if (!take_str(&c, &s, &sl) || !get64(&c, &sz) ||
	    sz > (uint64_t)(c.e - c.p) || !take(&c, (size_t)sz, NULL))
		return; /* header_event */
	if (!get32(&c, &n))
		return;
	for (uint32_t i = 0; i < n; i++)
		if (!get64(&c, &sz) || sz > (uint64_t)(c.e - c.p) ||
		    !take(&c, (size_t)sz, NULL))
			return;
	if (!get32(&c, &nsys))
		return;
	for (uint32_t i = 0; i < nsys; i++) {
		const unsigned char *sys;
		size_t syslen;

		if (!take_str(&c, &sys, &syslen) || !get32(&c, &n))
			return;
		for (uint32_t k = 0; k < n; k++) {
			char name[64], id[32];
			struct ss_layout l;
			char *end;

			if (!get64(&c, &sz) || sz > (uint64_t)(c.e - c.p) ||
			    !take(&c, (size_t)sz, &s))
				return;
			if (syslen != 5 || memcmp(sys, "sched", 5))
				continue;
			if (!fmt_value((const char *)s, (size_t)sz,
				       "name:", name, sizeof(name)) ||
			    strcmp(name, "sched_switch") ||
			    !fmt_value((const char *)s, (size_t)sz, "ID:", id,
				       sizeof(id)))
				continue;
			memset(&l, 0, sizeof(l));
			l.id = strtoull(id, &end, 10);
			if (end == id)
				continue;
			parse_fields(&l, (const char *)s, (size_t)sz);
			if (!l.prev_pid.size || !l.next_pid.size)
				continue;
			l.have = true;
			*ss = l;
			return;
		}
	}
}

/* The layout of sched_switch on 64-bit kernels since 4.x. */
void export_ss_default(struct ss_layout *ss)
{
	ss->prev_comm = (struct field){ 8, 16 };
	ss->prev_pid = (struct field){ 24, 4 };
	ss->prev_state = (struct field){ 32, 8 };
	ss->next_comm = (struct field){ 40, 16 };
	ss->next_pid = (struct field){ 56, 4 };
}

static bool is_sched_switch(struct exp *e, const struct prd_sample *s)
{
	const struct prd_attr *a = s->attr;
	const char *name;

	if (!a || a->attr.type != PERF_TYPE_TRACEPOINT || !s->raw)
		return false;
	if (e->ss.have)
		return a->attr.config == e->ss.id;
	name = prd_tracepoint_name(e->f, a->attr.config);
	if (!name)
		name = a->name;
	return name && !strcmp(name, "sched:sched_switch");
}

static bool field_num(const struct prd_sample *s, struct field fl, int64_t *v)
{
	const unsigned char *p = s->raw;

	if (!fl.size || fl.off > s->raw_size || fl.size > s->raw_size - fl.off)
		return false;
	switch (fl.size) {
	case 1:
		*v = (int8_t)p[fl.off];
		return true;
	case 2: {
		int16_t x;

		memcpy(&x, p + fl.off, 2);
		*v = x;
		return true;
	}
	case 4: {
		int32_t x;

		memcpy(&x, p + fl.off, 4);
		*v = x;
		return true;
	}
	case 8:
		memcpy(v, p + fl.off, 8);
		return true;
	default:
		return false;
	}
}

/* A char[] field as a string (up to its first NUL). */
static size_t field_str(const struct prd_sample *s, struct field fl,
			const char **str)
{
	const char *p = s->raw;

	if (!fl.size || fl.off > s->raw_size || fl.size > s->raw_size - fl.off)
		return 0;
	*str = p + fl.off;
	return strnlen(p + fl.off, fl.size);
}

/* prev_state as perf's sched_switch print shows it. */
static void state_str(int64_t st, char *out)
{
	static const char letters[] = "SDTtXZPI";
	size_t k = 0;

	if (!(st & 0xff)) {
		out[k++] = 'R';
		if (st)
			out[k++] = '+';
	}
	for (int i = 0; i < 8; i++)
		if (st & (1 << i)) {
			if (k)
				out[k++] = '|';
			out[k++] = letters[i];
		}
	out[k] = 0;
}

/* ---- chrome ---------------------------------------------------------- */

static struct tstate *tstate_of(struct exp *e, struct thread *t)
{
	struct tstate *ts = t->priv;

	if (ts)
		return ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	ts->run_cpu = -1;
	ts->next = e->tstates;
	e->tstates = ts;
	t->priv = ts;
	return ts;
}

static const char *thread_name(struct thread *t)
{
	struct tstate *ts = t->priv;

	if (!t->comm_set && ts && ts->swcomm[0])
		return ts->swcomm;
	return t->comm;
}

static int32_t track_pid(struct thread *t)
{
	return t->pid >= 0 ? t->pid : t->tid;
}

static void ev_begin(struct exp *e)
{
	struct outbuf *ob = &e->ob;

	ob_line_done(ob);
	ob_puts(ob, e->any_event ? ",\n{" : "\n{");
	e->any_event = true;
}

static void put_meta(struct exp *e, const char *what, int32_t pid, int32_t tid,
		     const char *name)
{
	struct outbuf *ob = &e->ob;

	ev_begin(e);
	ob_puts(ob, "\"name\":\"");
	ob_puts(ob, what);
	ob_puts(ob, "\",\"ph\":\"M\",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, tid, 0);
	ob_puts(ob, ",\"args\":{\"name\":");
	export_json_cstr(ob, name);
	ob_puts(ob, "}}");
}

/* Names @t's track (pid, tid) and its process, if not done yet. */
static void ensure_named(struct exp *e, struct thread *t, int32_t pid)
{
	struct tstate *ts = tstate_of(e, t);
	struct thread *leader;
	struct tstate *ls;
	const char *name = thread_name(t);

	if (!ts)
		return;
	if (!ts->named || ts->named_pid != pid) {
		put_meta(e, "thread_name", pid, t->tid, name);
		ts->named = true;
		ts->named_pid = pid;
		ts->named_comm = name;
	}
	leader = pid == t->tid ? t : machine_findnew_thread(&e->m, pid, pid);
	if (!leader)
		return;
	ls = tstate_of(e, leader);
	if (ls && !ls->proc_named) {
		ls->proc_comm = thread_name(leader);
		put_meta(e, "process_name", pid, pid, ls->proc_comm);
		ls->proc_named = true;
	}
}

/* Names the CPU tracks' process (first, above the others) and CPU @cpu's
 * track, if not done yet. */
static void name_cpu_track(struct exp *e, struct cpu_run *r, uint32_t cpu)
{
	struct outbuf *ob = &e->ob;
	char name[24];

	if (!e->cpu_proc_named) {
		e->cpu_proc_named = true;
		put_meta(e, "process_name", CPU_TRACK_PID, CPU_TRACK_PID,
			 "CPUs");
		ev_begin(e);
		ob_puts(ob,
			"\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
		ob_s64(ob, CPU_TRACK_PID, 0);
		ob_puts(ob, ",\"tid\":");
		ob_s64(ob, CPU_TRACK_PID, 0);
		ob_puts(ob, ",\"args\":{\"sort_index\":-1}}");
	}
	if (r->track_named)
		return;
	r->track_named = true;
	snprintf(name, sizeof(name), "CPU %u", cpu);
	put_meta(e, "thread_name", CPU_TRACK_PID, CPU_TRACK_PID + (int32_t)cpu,
		 name);
	ev_begin(e);
	ob_puts(ob, "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":");
	ob_s64(ob, CPU_TRACK_PID, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, CPU_TRACK_PID + (int32_t)cpu, 0);
	ob_puts(ob, ",\"args\":{\"sort_index\":");
	ob_u64(ob, cpu, 0, ' ');
	ob_puts(ob, "}}");
}

/* The same run on its CPU's track, named by the thread that ran. */
static void put_cpu_slice(struct exp *e, struct cpu_run *r, uint32_t cpu,
			  uint64_t end, const char *state)
{
	struct outbuf *ob = &e->ob;

	name_cpu_track(e, r, cpu);
	ev_begin(e);
	ob_puts(ob, "\"name\":");
	export_json_cstr(ob, thread_name(r->t));
	ob_puts(ob, ",\"cat\":\"cpu\",\"ph\":\"X\",\"ts\":");
	export_put_us(ob, r->start);
	ob_puts(ob, ",\"dur\":");
	export_put_us(ob, end - r->start);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, CPU_TRACK_PID, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, CPU_TRACK_PID + (int32_t)cpu, 0);
	ob_puts(ob, ",\"args\":{\"pid\":");
	ob_s64(ob, track_pid(r->t), 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, r->t->tid, 0);
	if (state) {
		ob_puts(ob, ",\"end_state\":");
		export_json_cstr(ob, state);
	}
	ob_puts(ob, "}}");
	e->nr_cpu_slices++;
}

static void put_slice(struct exp *e, struct cpu_run *r, uint32_t cpu,
		      uint64_t end, const char *state, const char *next,
		      size_t next_len)
{
	struct outbuf *ob = &e->ob;
	struct tstate *ts = r->t->priv;
	int32_t pid = track_pid(r->t);

	r->active = false;
	if (ts && ts->run_cpu == (int32_t)cpu)
		ts->run_cpu = -1;
	if (end < r->start)
		return;
	ensure_named(e, r->t, pid);
	ev_begin(e);
	ob_puts(ob, "\"name\":\"running on CPU ");
	ob_u64(ob, cpu, 0, ' ');
	ob_puts(ob, "\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":");
	export_put_us(ob, r->start);
	ob_puts(ob, ",\"dur\":");
	export_put_us(ob, end - r->start);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, r->t->tid, 0);
	ob_puts(ob, ",\"args\":{\"cpu\":");
	ob_u64(ob, cpu, 0, ' ');
	ob_puts(ob, ",\"comm\":");
	export_json_cstr(ob, thread_name(r->t));
	if (state) {
		ob_puts(ob, ",\"end_state\":");
		export_json_cstr(ob, state);
	}
	if (next) {
		ob_puts(ob, ",\"next_comm\":");
		ob_json_str(ob, next, next_len);
	}
	ob_puts(ob, "}}");
	e->nr_slices++;
	put_cpu_slice(e, r, cpu, end, state);
}

static struct cpu_run *cpu_run(struct exp *e, uint32_t cpu)
{
	if (cpu >= MAX_CPUS)
		return NULL;
	if (cpu >= e->nr_cpus) {
		uint32_t n = e->nr_cpus ? e->nr_cpus : 64;
		struct cpu_run *v;

		while (n <= cpu)
			n *= 2;
		v = realloc(e->cpus, (size_t)n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + e->nr_cpus, 0,
		       (size_t)(n - e->nr_cpus) * sizeof(*v));
		e->cpus = v;
		e->nr_cpus = n;
	}
	return &e->cpus[cpu];
}

static void set_swcomm(struct exp *e, struct thread *t, const char *s, size_t n)
{
	struct tstate *ts;

	if (t->comm_set || !n)
		return;
	ts = tstate_of(e, t);
	if (!ts)
		return;
	if (n > sizeof(ts->swcomm) - 1)
		n = sizeof(ts->swcomm) - 1;
	memcpy(ts->swcomm, s, n);
	ts->swcomm[n] = 0;
}

static int do_switch(struct exp *e, const struct prd_sample *s,
		     const struct ss_layout *ss)
{
	int64_t prev_pid, next_pid, state = 0;
	const char *prev_comm = NULL, *next_comm = NULL;
	size_t prev_len, next_len;
	struct cpu_run *r = cpu_run(e, s->cpu);
	struct thread *prev, *next;
	char st[24];

	if (!ss->have && !e->ss_fallback_warned) {
		e->ss_fallback_warned = true;
		pr_info("export: no sched_switch format in the tracing data: assuming the 64-bit layout");
	}
	if (!field_num(s, ss->prev_pid, &prev_pid) ||
	    !field_num(s, ss->next_pid, &next_pid) || !r)
		return 0;
	field_num(s, ss->prev_state, &state);
	prev_len = field_str(s, ss->prev_comm, &prev_comm);
	next_len = field_str(s, ss->next_comm, &next_comm);
	state_str(state, st);

	prev = (int32_t)prev_pid == (int32_t)s->tid ?
		       machine_findnew_thread(&e->m, (int32_t)s->pid,
					      (int32_t)s->tid) :
		       machine_findnew_thread(&e->m, -1, (int32_t)prev_pid);
	if (!prev)
		return -ENOMEM;
	set_swcomm(e, prev, prev_comm, prev_len);
	if (r->active)
		put_slice(e, r, s->cpu, s->time,
			  r->t->tid == prev->tid ? st : NULL, next_comm,
			  next_len);
	if (next_pid <= 0)
		return 0;
	next = machine_findnew_thread(&e->m, -1, (int32_t)next_pid);
	if (!next)
		return -ENOMEM;
	set_swcomm(e, next, next_comm, next_len);
	{
		struct tstate *ts = tstate_of(e, next);

		if (!ts)
			return -ENOMEM;
		/* Still running elsewhere (a lost switch): it ends there. */
		if (ts->run_cpu >= 0 && (uint32_t)ts->run_cpu < e->nr_cpus &&
		    (uint32_t)ts->run_cpu != s->cpu) {
			struct cpu_run *o = &e->cpus[ts->run_cpu];

			if (o->active && o->t == next)
				put_slice(e, o, (uint32_t)ts->run_cpu, s->time,
					  NULL, NULL, 0);
		}
		r->t = next;
		r->start = s->time;
		r->active = true;
		ts->run_cpu = (int32_t)s->cpu;
	}
	return 0;
}

static void sample_name(struct exp *e, const struct prd_sample *s,
			struct thread *t, uint8_t cpumode, struct addr_loc *al,
			const char **name)
{
	const char *ev = s->attr && s->attr->name ? s->attr->name : "sample";

	machine_resolve(&e->m, t, cpumode, s->ip, true, al);
	*name = ev;
	if (al->sym && !(s->attr && s->attr->attr.type == PERF_TYPE_TRACEPOINT))
		*name = al->sym->name;
}

/* {"name":..,"cat":..,"ph":<ph>,"ts":..,"pid":..,"tid":.. of a sample. */
static void put_event_head(struct exp *e, const char *name, const char *cat,
			   const char *ph, const struct prd_sample *s,
			   int32_t pid)
{
	struct outbuf *ob = &e->ob;

	ev_begin(e);
	ob_puts(ob, "\"name\":");
	export_json_cstr(ob, name);
	ob_puts(ob, ",\"cat\":");
	export_json_cstr(ob, cat);
	ob_puts(ob, ",\"ph\":");
	ob_puts(ob, ph);
	ob_puts(ob, ",\"ts\":");
	export_put_us(ob, s->time);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, (int32_t)s->tid, 0);
}

/*
 * Tracepoint-like events named *_begin / *_end (application events mark
 * slices so) become "B"/"E" events named by the stem: a slice on the
 * thread's track.  Returns 'B', 'E' or 0; *stem_len: the stem's length.
 */
static char slice_phase(const struct prd_sample *s, const char *evname,
			size_t *stem_len)
{
	size_t n = strlen(evname);

	if (!s->attr || s->attr->attr.type != PERF_TYPE_TRACEPOINT)
		return 0;
	if (n > 6 && !strcmp(evname + n - 6, "_begin")) {
		*stem_len = n - 6;
		return 'B';
	}
	if (n > 4 && !strcmp(evname + n - 4, "_end")) {
		*stem_len = n - 4;
		return 'E';
	}
	return 0;
}

static void chrome_slice_mark(struct exp *e, const struct prd_sample *s,
			      int32_t pid, const char *evname, size_t stem,
			      char phase)
{
	struct outbuf *ob = &e->ob;
	char name[256];

	snprintf(name, sizeof(name), "%.*s", (int)stem, evname);
	put_event_head(e, name, "app", phase == 'B' ? "\"B\"" : "\"E\"", s,
		       pid);
	ob_puts(ob, ",\"args\":{\"event\":");
	export_json_cstr(ob, evname);
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, "}}");
	e->nr_slices++;
}

/*
 * The stackFrames id of the sample's stack (0: none), its frames interned
 * root first: a frame is its parent's id, its category (the object it is
 * in, "kernel" for the kernel's) and its name (the symbol, else "[dso]"
 * or "[unknown]", as folded names them).
 */
static int chrome_stack(struct exp *e, const struct prd_event *ev,
			struct thread *t, uint32_t *sf)
{
	uint32_t parent = 0;
	size_t n;
	int err;

	*sf = 0;
	if (!e->key) {
		e->key = malloc(MAX_KEY);
		if (!e->key)
			return -ENOMEM;
	}
	err = export_resolve_stack(e, ev, t, &n);
	if (err)
		return err;
	for (size_t i = n; i-- > 0;) {
		const struct addr_loc *al = &e->locs[i];
		const char *cat = al->kernel ? "kernel" :
				  al->dso    ? (al->dso->short_name ?
							al->dso->short_name :
							al->dso->name) :
					       "[unknown]";
		uint32_t id;

		memcpy(e->key, &parent, sizeof(parent));
		e->key_len = sizeof(parent);
		export_key_puts(e, cat);
		if (e->key_len < MAX_KEY)
			e->key[e->key_len++] = 0;
		export_key_frame_name(e, al);
		err = itab_intern(&e->frames, e->key, e->key_len, &id, NULL);
		if (err == -E2BIG)
			break; /* over 1 GiB of frames: the stack stops here */
		if (err)
			return err;
		parent = id;
	}
	*sf = parent;
	return 0;
}

/* A sample of the catapult "samples" array (speedscope and the legacy
 * trace viewer draw its stack), into the temporary file. */
static int put_stack_sample(struct exp *e, const struct prd_sample *s,
			    int32_t pid, const char *evname, uint32_t sf)
{
	struct outbuf *ob = &e->sob;

	if (!e->samples_tmp) {
		e->samples_tmp = tmpfile();
		if (!e->samples_tmp)
			return errno ? -errno : -EIO;
		if (ob_init(ob, e->samples_tmp))
			return -ENOMEM;
	}
	ob_puts(ob, e->nr_stack_samples ? ",\n{\"pid\":" : "\n{\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, (int32_t)s->tid, 0);
	ob_puts(ob, ",\"ts\":");
	export_put_us(ob, s->time);
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, ",\"name\":");
	export_json_cstr(ob, evname);
	ob_puts(ob, ",\"sf\":\"");
	ob_u64(ob, sf, 0, ' ');
	ob_puts(ob, "\"}");
	ob_line_done(ob);
	e->nr_stack_samples++;
	return ob->err;
}

/* A trace event's ,"pid":P,"tid":T and its stack frame (,"sf":"N") if
 * it has one. */
static void ob_pid_tid_sf(struct outbuf *ob, int64_t pid, int32_t tid,
			  uint64_t sf)
{
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, tid, 0);
	if (sf) {
		ob_puts(ob, ",\"sf\":\"");
		ob_u64(ob, sf, 0, ' ');
		ob_putc(ob, '"');
	}
}

/* Events that count something (page-faults, cycles, ...): not the clocks,
 * whose samples are the time itself, nor tracepoints and breakpoints,
 * which are instants. */
static bool counting_event(const struct prd_attr *a)
{
	if (!a)
		return false;
	switch (a->attr.type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return true;
	case PERF_TYPE_SOFTWARE:
		return a->attr.config != PERF_COUNT_SW_CPU_CLOCK &&
		       a->attr.config != PERF_COUNT_SW_TASK_CLOCK &&
		       a->attr.config != PERF_COUNT_SW_DUMMY &&
		       a->attr.config != PERF_COUNT_SW_BPF_OUTPUT;
	default:
		return false;
	}
}

/* A counter track per process and counting event: the running total of
 * the samples' periods (what perf stat would have counted by then). */
static int put_counter(struct exp *e, const struct prd_sample *s, int32_t pid,
		       const char *evname)
{
	struct outbuf *ob = &e->ob;
	uint32_t key[2] = { (uint32_t)pid, s->attr->index }, id;
	int err = itab_intern(&e->counters, key, sizeof(key), &id, NULL);

	if (!err)
		err = u64v_set(&e->counter_val, id - 1, s->period);
	if (err)
		return err;
	put_event_head(e, evname, "counter", "\"C\"", s, pid);
	ob_puts(ob, ",\"args\":{");
	export_json_cstr(ob, evname);
	ob_putc(ob, ':');
	ob_u64(ob, e->counter_val.v[id - 1], 0, ' ');
	ob_puts(ob, "}}");
	e->nr_counters++;
	return 0;
}

/* A wake-up (offcpu-waker): an instant slice on the waker's track with
 * its stack, a flow from there to the end of the block it ended. */
static int chrome_wakeup(struct exp *e, const struct prd_sample *s, int32_t pid,
			 uint32_t sf)
{
	struct outbuf *ob = &e->ob;
	struct offcpu_waker_raw w;
	struct thread *wakee;
	const void *chain;
	char name[64];
	int32_t wpid;

	if (offcpu_waker_parse(s->raw, s->raw_size, &w, &chain) ||
	    !w.block_end || w.wake_time > w.block_end)
		return 0;
	wakee = machine_findnew_thread(&e->m, w.wakee_pid, w.wakee_tid);
	if (!wakee)
		return -ENOMEM;
	wpid = track_pid(wakee);
	ensure_named(e, wakee, wpid);
	snprintf(name, sizeof(name), "wakes %s", thread_name(wakee));
	ev_begin(e);
	ob_puts(ob, "\"name\":");
	export_json_cstr(ob, name);
	ob_puts(ob, ",\"cat\":\"offcpu\",\"ph\":\"X\",\"ts\":");
	export_put_us(ob, w.wake_time);
	ob_puts(ob, ",\"dur\":0");
	ob_pid_tid_sf(ob, pid, (int32_t)s->tid, sf);
	ob_puts(ob, ",\"args\":{\"wakee_tid\":");
	ob_s64(ob, w.wakee_tid, 0);
	ob_puts(ob, ",\"blocked_ns\":");
	ob_u64(ob, w.block_end - w.block_start, 0, ' ');
	ob_puts(ob, "}}");
	/* the flow: from the waker, into the blocked slice at its end */
	e->nr_flows++;
	ev_begin(e);
	ob_puts(ob,
		"\"name\":\"wakeup\",\"cat\":\"offcpu\",\"ph\":\"s\",\"id\":");
	ob_u64(ob, e->nr_flows, 0, ' ');
	ob_puts(ob, ",\"ts\":");
	export_put_us(ob, w.wake_time);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, (int32_t)s->tid, 0);
	ob_puts(ob, "}");
	ev_begin(e);
	ob_puts(ob,
		"\"name\":\"wakeup\",\"cat\":\"offcpu\",\"ph\":\"f\",\"bp\":\"e\",\"id\":");
	ob_u64(ob, e->nr_flows, 0, ' ');
	ob_puts(ob, ",\"ts\":");
	export_put_us(ob, w.block_end > w.block_start ? w.block_end - 1 :
							w.block_end);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, wpid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, w.wakee_tid, 0);
	ob_puts(ob, "}");
	return 0;
}

/* An off-CPU sample: a block as a slice on its thread's track, from its
 * switch-out to its switch-in, with the stack where it blocked; a waker
 * as above.  Summed blocks have no time of their own: left out. */
static int chrome_offcpu(struct exp *e, const struct prd_event *ev,
			 struct thread *t, int32_t pid, enum offcpu_kind kind)
{
	const struct prd_sample *s = ev->sample;
	struct outbuf *ob = &e->ob;
	uint32_t sf = 0;
	int err;

	if (offcpu_summed_time(s->time) || s->period > s->time)
		return 0;
	err = chrome_stack(e, ev, t, &sf);
	if (err)
		return err;
	if (kind == OFFCPU_WAKER)
		return chrome_wakeup(e, s, pid, sf);
	ev_begin(e);
	ob_puts(ob, kind == OFFCPU_BLOCKED ?
			    "\"name\":\"off-CPU (blocked)\"" :
			    "\"name\":\"off-CPU (preempted)\"");
	ob_puts(ob, ",\"cat\":\"offcpu\",\"ph\":\"X\",\"ts\":");
	export_put_us(ob, s->time - s->period);
	ob_puts(ob, ",\"dur\":");
	export_put_us(ob, s->period);
	ob_pid_tid_sf(ob, pid, (int32_t)s->tid, sf);
	ob_puts(ob, ",\"args\":{\"ns\":");
	ob_u64(ob, s->period, 0, ' ');
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, "}}");
	e->nr_slices++;
	return 0;
}

int export_chrome_sample(struct exp *e, const struct prd_event *ev)
{
	const struct prd_sample *s = ev->sample;
	struct outbuf *ob = &e->ob;
	uint8_t cpumode = ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct thread *t;
	struct addr_loc al;
	const char *name, *evname;
	int32_t pid = (int32_t)s->pid;
	uint32_t sf = 0;

	t = machine_findnew_thread(&e->m, pid, (int32_t)s->tid);
	if (!t)
		return -ENOMEM;
	if (is_sched_switch(e, s)) {
		int err = do_switch(e, s, &e->ss);

		if (err)
			return err;
	}
	if (pid < 0)
		pid = track_pid(t);
	ensure_named(e, t, pid);
	if (export_sample_offcpu(s))
		return chrome_offcpu(e, ev, t, pid, export_sample_offcpu(s));
	evname = s->attr && s->attr->name ? s->attr->name : "sample";
	{
		size_t stem;
		char phase = slice_phase(s, evname, &stem);

		if (phase) {
			chrome_slice_mark(e, s, pid, evname, stem, phase);
			e->nr_samples++;
			return 0;
		}
	}
	if (counting_event(s->attr)) {
		int err = put_counter(e, s, pid, evname);

		if (err)
			return err;
	}
	{
		int err = chrome_stack(e, ev, t, &sf);

		if (!err && sf)
			err = put_stack_sample(e, s, pid, evname, sf);
		if (err)
			return err;
	}
	sample_name(e, s, t, cpumode, &al, &name);
	put_event_head(e, name, evname, "\"i\",\"s\":\"t\"", s, pid);
	if (sf) {
		ob_puts(ob, ",\"sf\":\"");
		ob_u64(ob, sf, 0, ' ');
		ob_putc(ob, '"');
	}
	ob_puts(ob, ",\"args\":{\"ip\":\"0x");
	ob_x64(ob, s->ip, 0);
	ob_puts(ob, "\"");
	if (al.sym) {
		ob_puts(ob, ",\"sym\":");
		export_json_cstr(ob, al.sym->name);
	}
	ob_puts(ob, ",\"dso\":");
	export_json_cstr(ob, al.dso ? al.dso->name : "[unknown]");
	ob_puts(ob, ",\"period\":");
	ob_u64(ob, s->period, 0, ' ');
	ob_puts(ob, ",\"cpu\":");
	ob_u64(ob, s->cpu, 0, ' ');
	ob_puts(ob, ",\"event\":");
	export_json_cstr(ob, evname);
	ob_puts(ob, "}}");
	e->nr_samples++;
	return 0;
}

/* ---- chrome: the ftrace events of a trace.dat ------------------------ */

static int put_ftrace_field(void *ctx, const struct tdat_field *fl)
{
	struct exp *e = ctx;
	struct outbuf *ob = &e->ob;

	char key[128];

	/* The keys every event has come first; a field of the same name
	 * is renamed so that no key repeats. */
	snprintf(key, sizeof(key), "%s%s",
		 !strcmp(fl->name, "cpu") || !strcmp(fl->name, "event") ||
				 !strcmp(fl->name, "dropped_before") ?
			 "field_" :
			 "",
		 fl->name);
	ob_putc(ob, ',');
	export_json_cstr(ob, key);
	ob_putc(ob, ':');
	if (fl->is_str)
		ob_json_str(ob, fl->str, fl->len);
	else if (fl->is_signed)
		ob_s64(ob, (int64_t)fl->num, 0);
	else if (fl->num >> 53) {
		/* Past a double's exact integers (addresses): hex text. */
		ob_puts(ob, "\"0x");
		ob_x64(ob, fl->num, 0);
		ob_putc(ob, '"');
	} else
		ob_u64(ob, fl->num, 0, ' ');
	ob_line_done(ob);
	return e->ob.err;
}

/* One ftrace event: an instant on its thread's track with its fields as
 * args (sched_switch also moves the slices when the trace.dat has them). */
static int chrome_ftrace(struct exp *e, const struct tdat_ev *ev)
{
	struct outbuf *ob = &e->ob;
	struct thread *t;
	int32_t pid;
	int err;

	if (ev->ts > e->last_time)
		e->last_time = ev->ts;
	t = machine_findnew_thread(&e->m, -1, ev->tid);
	if (!t)
		return -ENOMEM;
	if (ev->comm)
		set_swcomm(e, t, ev->comm, strlen(ev->comm));
	if (e->td_slices && !strcmp(ev->name, "sched_switch") &&
	    !strcmp(ev->system, "sched")) {
		struct prd_sample s;

		memset(&s, 0, sizeof(s));
		s.time = ev->ts;
		s.cpu = ev->cpu;
		s.pid = UINT32_MAX;
		s.tid = (uint32_t)ev->tid;
		s.raw = ev->raw;
		s.raw_size = ev->raw_size;
		err = do_switch(e, &s, &e->tss);
		if (err)
			return err;
	}
	pid = track_pid(t);
	ensure_named(e, t, pid);
	ev_begin(e);
	ob_puts(ob, "\"name\":");
	export_json_cstr(ob, ev->name);
	ob_puts(ob, ",\"cat\":\"ftrace\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	export_put_us(ob, ev->ts);
	ob_puts(ob, ",\"pid\":");
	ob_s64(ob, pid, 0);
	ob_puts(ob, ",\"tid\":");
	ob_s64(ob, ev->tid, 0);
	ob_puts(ob, ",\"args\":{\"cpu\":");
	ob_u64(ob, ev->cpu, 0, ' ');
	{
		char full[160];

		snprintf(full, sizeof(full), "%s:%s", ev->system, ev->name);
		ob_puts(ob, ",\"event\":");
		export_json_cstr(ob, full);
	}
	if (ev->missed_mark) {
		/* The kernel's mark: events lost before this one here. */
		ob_puts(ob, ",\"dropped_before\":");
		if (ev->missed)
			ob_u64(ob, ev->missed, 0, ' ');
		else
			ob_puts(ob, "\"unknown\"");
		e->nr_ftrace_dropped++;
	}
	err = tdat_ev_fields(e->td, put_ftrace_field, e);
	ob_puts(ob, "}}");
	e->nr_ftrace++;
	return err ? err : e->ob.err;
}

static void td_pull(struct exp *e)
{
	int r = tdat_lines_next_ev(e->td, &e->td_ev);

	e->td_have = r > 0;
	if (r < 0)
		e->td_err = r;
}

/* The trace.dat's events before @ts (UINT64_MAX: every one left) out. */
int export_td_until(struct exp *e, uint64_t ts)
{
	while (e->td && e->td_have && e->td_ev.ts < ts) {
		int err = chrome_ftrace(e, &e->td_ev);

		if (err)
			return err;
		td_pull(e);
	}
	return 0;
}

/* Whether the perf.data records sched:sched_switch itself (then its
 * samples make the slices, not the trace.dat's copy). */
static bool perf_has_switch(struct prd_file *f)
{
	for (uint32_t i = 0; f && i < prd_nr_attrs(f); i++) {
		const struct prd_attr *a = prd_attr(f, i);
		const char *name;

		if (!a || a->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		name = prd_tracepoint_name(f, a->attr.config);
		if (!name)
			name = a->name;
		if (name && !strcmp(name, "sched:sched_switch"))
			return true;
	}
	return false;
}

/* The trace clock that reads as the perf.data's clock. */
static const char *perf_trace_clock(struct prd_file *f)
{
	const struct prd_attr *a = prd_nr_attrs(f) ? prd_attr(f, 0) : NULL;

	if (!a || !a->attr.use_clockid)
		return "local";
	switch (a->attr.clockid) {
	case 1: /* CLOCK_MONOTONIC */
		return "mono";
	case 4: /* CLOCK_MONOTONIC_RAW */
		return "mono_raw";
	case 7: /* CLOCK_BOOTTIME */
		return "boot";
	default:
		return NULL;
	}
}

int export_td_open(struct exp *e, const char *path)
{
	const char *fmt;
	size_t len;
	int err = tdat_lines_open(path, &e->td);

	if (err) {
		pr_err("export: %s: %s", path, strerror(-err));
		return err;
	}
	e->td_path = path;
	fmt = tdat_lines_format(e->td, "sched", "sched_switch", &len);
	if (fmt && !perf_has_switch(e->f)) {
		parse_fields(&e->tss, fmt, len);
		e->tss.have = e->tss.prev_pid.size && e->tss.next_pid.size;
		e->td_slices = e->tss.have;
	}
	if (e->f) {
		const char *want = perf_trace_clock(e->f);
		const char *have = tdat_lines_clock(e->td);

		/* perf's default clock is local_clock(), what ftrace's
		 * "local" and "perf" clocks read. */
		if (!want || (strcmp(have, want) && !(!strcmp(want, "local") &&
						      !strcmp(have, "perf"))))
			pr_warn("export: %s was recorded with the %s trace clock, the perf.data with %s: their times do not line up",
				path, have[0] ? have : "(unknown)",
				want ? want : "another clock");
	}
	td_pull(e);
	return 0;
}

void export_chrome_begin(struct exp *e)
{
	ob_puts(&e->ob, "{\"traceEvents\":[");
}

/* "samples" (copied from the temporary file) and "stackFrames". */
static void chrome_stacks_out(struct exp *e)
{
	struct outbuf *ob = &e->ob;
	char buf[1 << 16];
	size_t n;

	ob_flush(&e->sob);
	if (e->sob.err || fflush(e->samples_tmp) ||
	    fseek(e->samples_tmp, 0, SEEK_SET)) {
		pr_err("export: the samples' temporary file: %s",
		       strerror(e->sob.err ? -e->sob.err : errno));
		return;
	}
	ob_puts(ob, "\"samples\":[");
	while ((n = fread(buf, 1, sizeof(buf), e->samples_tmp)) > 0) {
		ob_write(ob, buf, n);
		ob_line_done(ob);
	}
	ob_puts(ob, "\n],\n\"stackFrames\":{");
	for (uint32_t id = 1; id <= e->frames.nr; id++) {
		size_t len, cl;
		const char *k = itab_key(&e->frames, id, &len);
		uint32_t parent;

		memcpy(&parent, k, sizeof(parent));
		k += sizeof(parent);
		len -= sizeof(parent);
		cl = strnlen(k, len);
		ob_puts(ob, id > 1 ? ",\n\"" : "\n\"");
		ob_u64(ob, id, 0, ' ');
		ob_puts(ob, "\":{\"name\":");
		ob_json_str(ob, k + cl + 1, len - cl - 1);
		ob_puts(ob, ",\"category\":");
		ob_json_str(ob, k, cl);
		if (parent) {
			ob_puts(ob, ",\"parent\":\"");
			ob_u64(ob, parent, 0, ' ');
			ob_putc(ob, '"');
		}
		ob_putc(ob, '}');
		ob_line_done(ob);
	}
	ob_puts(ob, "\n},\n");
}

void export_chrome_end(struct exp *e)
{
	struct outbuf *ob = &e->ob;

	/* Still running at the end: up to the last time seen. */
	for (uint32_t c = 0; c < e->nr_cpus; c++)
		if (e->cpus[c].active && e->last_time > e->cpus[c].start)
			put_slice(e, &e->cpus[c], c, e->last_time, NULL, NULL,
				  0);
	/* Names that changed after they were first written (exec). */
	for (struct thread *t = machine_threads(&e->m); t; t = t->all_next) {
		struct tstate *ts = t->priv;
		const char *name = thread_name(t);

		if (!ts)
			continue;
		if (ts->named && strcmp(ts->named_comm, name)) {
			put_meta(e, "thread_name", ts->named_pid, t->tid, name);
			ts->named_comm = name;
		}
		if (ts->proc_named && strcmp(ts->proc_comm, name)) {
			put_meta(e, "process_name", t->tid, t->tid, name);
			ts->proc_comm = name;
		}
	}
	ob_puts(ob, "\n],\n");
	if (e->nr_stack_samples)
		chrome_stacks_out(e);
	ob_puts(ob, "\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"title\":");
	export_json_cstr(ob, e->title ? e->title : "perfring");
	ob_puts(ob, ",\"generator\":\"perfring export\",\"samples\":");
	ob_u64(ob, e->nr_samples, 0, ' ');
	ob_puts(ob, ",\"slices\":");
	ob_u64(ob, e->nr_slices, 0, ' ');
	ob_puts(ob, ",\"cpu_slices\":");
	ob_u64(ob, e->nr_cpu_slices, 0, ' ');
	ob_puts(ob, ",\"counter_events\":");
	ob_u64(ob, e->nr_counters, 0, ' ');
	ob_puts(ob, ",\"stack_samples\":");
	ob_u64(ob, e->nr_stack_samples, 0, ' ');
	ob_puts(ob, ",\"stack_frames\":");
	ob_u64(ob, e->frames.nr, 0, ' ');
	if (e->td) {
		ob_puts(ob, ",\"trace_dat\":");
		export_json_cstr(ob, e->td_path);
		ob_puts(ob, ",\"ftrace_events\":");
		ob_u64(ob, e->nr_ftrace, 0, ' ');
		ob_puts(ob, ",\"ftrace_dropped_marks\":");
		ob_u64(ob, e->nr_ftrace_dropped, 0, ' ');
	}
	if (e->f) {
		const char *s = prd_feature_string(e->f, PRD_FEAT_HOSTNAME);

		if (s) {
			ob_puts(ob, ",\"hostname\":");
			export_json_cstr(ob, s);
		}
		s = prd_feature_string(e->f, PRD_FEAT_OSRELEASE);
		if (s) {
			ob_puts(ob, ",\"os-release\":");
			export_json_cstr(ob, s);
		}
	}
	ob_puts(ob, "}}\n");
}
