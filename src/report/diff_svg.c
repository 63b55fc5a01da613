// SPDX-License-Identifier: MIT
/*
 * A differential flame graph (flamegraph.pl's difffolded view): the new
 * profile's stacks drawn as a flame graph, each frame coloured by how its
 * share of the samples changed from the baseline's: red grew, blue
 * shrank, white the same.  Both profiles' stacks come from
 * perfring_export()'s folded text ("comm;outer;...;leaf count").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfring/tools.h"
#include "../common/opts.h"

struct fnode {
	char *name;
	double new_n, old_n; /* samples through the frame */
	struct fnode *child, *next;
};

static struct fnode *fnode_child(struct fnode *p, const char *name, size_t len)
{
	struct fnode *c;

	for (c = p->child; c; c = c->next)
		if (strlen(c->name) == len && !memcmp(c->name, name, len))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = strndup(name, len);
	if (!c->name) {
		free(c);
		return NULL;
	}
	c->next = p->child;
	p->child = c;
	return c;
}

static void fnode_free(struct fnode *n)
{
	while (n) {
		struct fnode *next = n->next;

		fnode_free(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

/* @path's folded stacks added into @root (new or old counts). */
static int add_folded(struct fnode *root, const char *path, const char *symfs,
		      bool is_new, double *total)
{
	PERFRING_OPTS(perfring_export_opts, eo, .input = path,
		      .format = "folded");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	(void)symfs;
	if (!f)
		return -ENOMEM;
	err = perfring_export(&eo, f);
	fclose(f);
	if (err && err != -EBADMSG) {
		free(text);
		return err;
	}
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n'), *sp;
		double count;

		if (nl)
			*nl = 0;
		sp = strrchr(line, ' ');
		if (sp && (count = strtod(sp + 1, NULL)) > 0) {
			struct fnode *n = root;

			*total += count;
			for (char *p = line; p < sp && n;) {
				size_t l = strcspn(p, ";");

				if (p + l > sp)
					l = (size_t)(sp - p);
				n = fnode_child(n, p, l);
				if (n && is_new)
					n->new_n += count;
				else if (n)
					n->old_n += count;
				p += l + 1;
			}
			if (is_new)
				root->new_n += count;
			else
				root->old_n += count;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return 0;
}

struct draw {
	FILE *out;
	double new_total, old_total;
	double width, scale; /* pixels per sample */
	int depth_max;
};

static int max_depth(const struct fnode *n, int d)
{
	int m = d;

	for (const struct fnode *c = n->child; c; c = c->next) {
		int x = max_depth(c, d + 1);

		if (x > m)
			m = x;
	}
	return m;
}

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else
			fputc(*s, out);
	}
}

static void draw_node(struct draw *g, const struct fnode *n, int depth,
		      double x)
{
	double w = n->new_n * g->scale;
	double np = g->new_total ? 100.0 * n->new_n / g->new_total : 0;
	double op = g->old_total ? 100.0 * n->old_n / g->old_total : 0;
	double d = np - op, k = d / 5.0; /* 5 points: full colour */
	int y = (g->depth_max - depth) * 16 + 40, r = 255, gr = 255, b = 255;

	if (w < 0.1)
		return;
	if (k > 1)
		k = 1;
	if (k < -1)
		k = -1;
	if (k > 0) /* grew: red */
		gr = b = (int)(255 - 200 * k);
	else if (k < 0) /* shrank: blue */
		r = gr = (int)(255 + 200 * k);
	fprintf(g->out, "<g><title>");
	put_escaped(g->out, n->name);
	fprintf(g->out,
		" (%.0f samples, %.2f%%; baseline %.2f%%, %+.2f points)</title>",
		n->new_n, np, op, d);
	fprintf(g->out,
		"<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"15\" fill=\"rgb(%d,%d,%d)\" stroke=\"#ccc\" stroke-width=\"0.5\"/>",
		x + 10, y, w, r, gr, b);
	if (w > 30) {
		size_t fit = (size_t)(w / 7), l = strlen(n->name);
		char *t = strndup(n->name, fit < l ? fit : l);

		fprintf(g->out, "<text x=\"%.1f\" y=\"%d\">", x + 13, y + 11);
		if (t)
			put_escaped(g->out, t);
		if (fit < l)
			fputs("..", g->out);
		free(t);
		fputs("</text>", g->out);
	}
	fputs("</g>\n", g->out);
	for (const struct fnode *c = n->child; c; c = c->next) {
		draw_node(g, c, depth + 1, x);
		x += c->new_n * g->scale;
	}
}

PERFRING_API int perfring_diff_svg(const struct perfring_diff_opts *opts,
				   FILE *out)
{
	struct perfring_diff_opts o;
	struct fnode root = { .name = "all" };
	struct draw g = { .out = out, .width = 1200 };
	int err, height;

	if (!opts || !out || !OPTS_VALID(opts))
		return -EINVAL;
	OPTS_COPY(&o, opts);
	err = add_folded(&root, o.baseline ? o.baseline : "perf.data.old",
			 o.symfs, false, &g.old_total);
	if (!err)
		err = add_folded(&root, o.input ? o.input : "perf.data",
				 o.symfs, true, &g.new_total);
	if (err) {
		fnode_free(root.child);
		return err;
	}
	g.depth_max = max_depth(&root, 0);
	g.scale = g.new_total ? (g.width - 20) / g.new_total : 0;
	height = (g.depth_max + 1) * 16 + 60;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana\" font-size=\"11\">\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n"
		"<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">Differential flame graph: ",
		g.width, height, g.width / 2);
	put_escaped(out, o.input ? o.input : "perf.data");
	fputs(" against ", out);
	put_escaped(out, o.baseline ? o.baseline : "perf.data.old");
	fputs(" (red grew, blue shrank)</text>\n", out);
	draw_node(&g, &root, 0, 0);
	fputs("</svg>\n", out);
	fnode_free(root.child);
	return ferror(out) ? -EIO : 0;
}
