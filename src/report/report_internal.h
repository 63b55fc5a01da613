/* SPDX-License-Identifier: MIT */
/*
 * What the files of perfring_report() share (perf report --stdio, after
 * perf 6.1's builtin-report.c, hist.c, callchain.c and ui/stdio/hist.c):
 * the report's state, its histogram entries and their callchain trees.
 *
 *   report.c            the file's records into the entries, perfring_report()
 *   report_hists.c      sort keys, the entries (their hashing, collapse and
 *                       output order)
 *   report_callchain.c  a sample's chain resolved, the call-graph trees, and
 *                       their printing
 *   report_stdio.c      the tables (perf's ui/stdio/hist.c), groups, --tasks
 */
#ifndef PERFRING_REPORT_REPORT_INTERNAL_H
#define PERFRING_REPORT_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "perfring/tools.h"
#include "../common/outbuf.h"
#include "../format/perf_reader.h"
#include "../machine/intern.h"
#include "../machine/threads.h"
#include "../machine/filter.h"
#include "../format/sample_read.h"

#define MAX_STACK 127

/* the kernel part and a DWARF-unwound user part, MAX_STACK each (perf) */
#define MAX_CURSOR (2 * MAX_STACK + 1)

#define MIN_PERCENT 0.5 /* callchain_param.min_percent */

enum sort_key {
	K_COMM,
	K_PID,
	K_DSO,
	K_SYM,
	K_TRACE,
	K_CPU,
	K_SRCLINE,
	K_SRCFILE,
	K_MAX
};

/* One resolved callchain entry. */
struct cent {
	const struct symbol *sym;
	struct dso *dso; /* NULL: no map */
	uint64_t ip; /* raw address */
	char level; /* 'k' or '.' */
	bool inl; /* @sym is an inlined function's (inline_sym()) */
};

/* perf's trees (rb_insert_color()): see rbn_link_fix() */
struct rbn {
	struct rbn *left, *right, *parent;
	bool red;
	struct hentry *e;
};

struct cnode {
	struct cnode *parent, *child, *sibling;
	struct cent *val;
	uint32_t nval;
	uint64_t hit, children_hit;
	/* perf's rb_root_in: the children in a tree searched with
	 * match_chain() (cent_cmp()), whose order breaks ties of weight */
	struct rbn rb; /* this node in its parent's */
	struct rbn *kids;
};

struct hentry {
	struct hentry *next; /* hash chain */
	uint32_t hash;
	const char *comm;
	uint32_t comm_len;
	int32_t tid;
	const struct thread *thread; /* the first sample's */
	uint32_t cpu;
	struct dso *dso;
	const struct symbol *sym;
	uint64_t ip;
	char level;
	bool inl; /* @sym is an inlined function's (inline_sym()) */
	char *trace; /* "Trace output" */
	uint32_t trace_len;
	/* --sort srcline, srcfile: ids of their texts in report.src_text */
	uint32_t srcline, srcfile;
	/* perf computes them lazily, the first time a comparison of the
	 * collapse or output trees reaches their key (bit 0: srcline, bit
	 * 1: srcfile); an entry's text widens the column only if known
	 * when it entered the output tree (hists__calc_col_len()) */
	uint8_t src_known, src_sized;
	uint64_t self, children, nr_samples;
	uint32_t max_depth;
	uint32_t serial; /* creation order in its hists */
	/* made by a sample that --comm, --dsos or --symbols leave out: as
	 * perf, kept (in the totals and trees, and gathering the periods
	 * of later samples of its keys) but not shown */
	bool filtered;
	struct cnode chain; /* root: no entries */
	struct rbn in_rb; /* this entry in its hists' entries_in tree */
};

struct hists {
	struct hentry **tab; /* every entry (perf may keep two equal ones) */
	/* perf's entries_in: an entry is found by walking this tree with
	 * hist_entry__cmp(), whose comparisons are not transitive, so an
	 * equal entry off the path is missed and a second one made */
	struct rbn *in_root;
	uint32_t mask, nr;
	uint64_t total, nr_samples;
};

struct report {
	struct perfring_report_opts o;
	struct prd_file *f;
	struct machine m;
	struct hists *h;
	uint32_t nr_h;
	enum sort_key keys[K_MAX];
	int nkeys;
	bool setup;
	bool sort_given;
	struct tpfmt *tp;
	bool tp_tried;
	struct outbuf tb; /* one sample's trace text */
	bool use_callchain;
	bool children;
	/* the Children column shown and sorted on (not with -F, whose
	 * overhead is the Self one) */
	bool children_col;
	bool caller; /* graphs from the outermost caller down (-g caller) */
	uint64_t lost_samples;
	struct sample_filter filt;
	uint32_t max_stack; /* --max-stack, at most MAX_STACK */
	bool fields; /* -F given */
	/* the columns in order and the output sort's (perf's hpp_list
	 * fields and sorts): an enum sort_key or a COL_*; with -F only */
	int cols[K_MAX + 5], ncols;
	int sorts[K_MAX + 5], nsorts;
	/* perf report adds ipc_null to a --sort naming "symbol" */
	bool ipc_col;
	/* the graph's single root leaves out its first entry (the entry's
	 * own symbol): perf's callchain__fprintf_graph() */
	bool sort_sym_first;
	/* perf's need_collapse: a sort key with a collapse of its own
	 * (comm) was set up as a sort dimension; -F's keys are not */
	bool need_collapse;
	const char *sep; /* -t, NULL: columns padded with spaces */
	/* perf's sort__setup_elide(): a filter naming one comm, dso or
	 * symbol hides that column and says so in the header. */
	char *elided; /* "# comm: bash\n" lines */
	struct thread_stats *tstats; /* -T */
	FILE *out;
	bool hidden[K_MAX]; /* their columns */
	struct sread rd; /* PERF_SAMPLE_READ: each id's last value */
	/* While a group's table is ordered: its hists (leader first) */
	struct hists **grp_mem;
	uint32_t grp_n;
	struct cent cursor[MAX_CURSOR];
	struct hentry *he_cache[MAX_CURSOR + 1];
	struct outbuf ob;
	/* --sort srcline, srcfile: the texts (NUL-terminated), and per
	 * (dso, address) looked up the ids of both (srcline | srcfile << 32) */
	struct srclines *src;
	struct itab src_text;
	struct itab src_addr;
	struct u64v src_ids;
	/* DWARF-unwound frames: the inlined functions at each (perf's
	 * append_inlines()), one symbol per (function it is inlined in,
	 * name): isyms[id - 1] for id in isym_ids */
	struct inlines *inl;
	struct itab isym_ids;
	struct symbol **isyms;
	uint32_t nr_isyms;
};

/* ---- keys -------------------------------------------------------------- */

/* Output columns beside the keys (perf's hpp fields). */
enum {
	COL_OVERHEAD = K_MAX,
	COL_SAMPLE,
	COL_PERIOD,
	COL_CHILDREN,
	COL_IPC, /* perf's ipc_null: "-" without branch stacks */
	MAX_COLS,
	COL_UNIMPLEMENTED = -1,
	COL_UNKNOWN = -2,
};

/* The value columns of a row. */
enum value_col { V_CHILDREN, V_SELF, V_SAMPLES, V_PERIOD };

/*
 * -s and -F as perf's setup_sorting() takes them: with -F its fields are
 * the columns in order, then the -s keys it has not; the -s keys sort
 * first, then the fields (a strict -F puts no overhead before them).
 * The keys (the entries' identity) are the sort's, in its order.
 */
int report_parse_sort(struct report *r);

bool report_has_key(const struct report *r, enum sort_key k);

bool hentry_eq(const struct report *r, const struct hentry *a,
	       const struct hentry *b);

struct hists *hists_of(struct report *r, const struct prd_attr *a);

/* The entry for @key in @h, created with zero counts: perf's
 * hists__findnew_entry(), a walk down entries_in. */
struct hentry *hists_findnew_entry(struct report *r, struct hists *h,
				   const struct hentry *key);

/* The entry for @key in @h, or NULL. */
struct hentry *hists_find_entry(const struct report *r, const struct hists *h,
				const struct hentry *key);

/* perf's append_chain_children(): down the children's tree, left where
 * the child's first entry is below the new chain's (match_chain()'s
 * MATCH_LT), right otherwise. */
int callchain_append(struct cnode *root, const struct cent *cur, uint32_t n,
		     uint64_t period);

void cnode_free_children(struct cnode *root);

/* The sample's callchain, resolved, in callee order; returns its length. */
uint32_t callchain_resolve(struct report *r, struct thread *t,
			   const struct prd_sample *s);

void cents_reverse(struct cent *v, uint32_t n);

/* The text of id @id of report.src_text (NUL-terminated). */
const char *report_src_str(const struct report *r, uint32_t id);

/* perf report creates the DSOs of the file's build-id table first (in
 * its order), the others as the records name them: that is the order of
 * its struct dso addresses, which break ties between call-graph
 * branches, and place the branches in its trees as they come (cent_cmp()).
 * Set once per DSO, when a chain first names it: 1 + its place in the
 * table, or, for one the table does not name, after every table entry in
 * creation order. */
uint32_t report_dso_order(const struct report *r, struct dso *d);

uint64_t hentry_value(const struct hentry *e, enum value_col c);

/* rb_link_node() at @link under @parent, then rb_insert_color() */
void rbn_link_fix(struct rbn **root, struct rbn *n, struct rbn *parent,
		  struct rbn **link);

struct rbn *rbn_first(struct rbn *n);

struct rbn *rbn_next(struct rbn *n);

/* perf's callchain_merge(): each node of @src with hits, by its path from
 * the root (@path, @len so far), appended to @dst; children in their
 * tree's order. */
int callchain_merge(struct cnode *dst, const struct cnode *src,
		    struct cent **path, uint32_t *cap, uint32_t len);

/* @v's @k entries in perf's output order, *@k less those the collapse
 * merged; 0 or -ENOMEM.  perf's key comparisons are not all transitive
 * (addresses compared by a wrapping difference; Children ties by depth
 * only within a thread), so its order is that of its trees: entries_in,
 * built as the entries were first made (hists_findnew_entry(), which may have
 * missed an equal entry off its path and made a second), read in order
 * into @v (room for every entry of @h); the collapsed
 * tree (when a sort dimension collapses: comm from -s or the default
 * keys, not from -F alone), built in entries_in's order, merging what it
 * finds equal; the output tree, built in that order. */
int hists_output_order(const struct report *r, const struct hists *h,
		       struct hentry **v, uint32_t *k);

void report_put_pct(struct outbuf *ob, uint64_t v, uint64_t total, int width);

void callchain_print(struct report *r, const struct hentry *e, uint64_t total,
		     uint64_t parent);

/*
 * Every table, in the attrs' order: a group's where its leader is, its
 * members side by side (not with --no-group: each alone, the leader's
 * still titled "events" as perf has it).
 */
int report_print_all(struct report *r, bool *first);

/*
 * perf report --tasks: every thread under its parent (its FORK's), the
 * roots in the order of perf's thread table, each child list in the
 * order perf's walk up from every thread (in that order) reached it.
 * perf's idle thread (0, "swapper") is always there.
 */
int report_print_tasks(struct report *r);

#endif
