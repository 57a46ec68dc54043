// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_flame: folded stacks -> a tree of frames (a node per distinct call
 * path, its count the samples through it) -> an SVG with its own script.
 * Every frame is written with its position in samples (data-x, data-n,
 * data-d: depth), so the script zooms and sums matches without knowing
 * how the file was laid out; frames narrower than a tenth of a pixel at
 * full width are left out, as flamegraph.pl leaves them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/flame.h"
#include "ustitch/fold.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"

#define IMAGE_W		1200
#define XPAD		10
#define FRAME_H		16
#define YPAD_TOP	56	/* title, subtitle, the controls' line */
#define YPAD_BOTTOM	34	/* the details line */
#define MIN_W_PX	0.1

struct node {
	char *name;
	unsigned long n;
	uint64_t x;		/* the samples before it at its depth */
	uint32_t depth;
	uint32_t *kids;
	size_t nr_kids, cap_kids;
};

struct tree {
	struct node *v;
	size_t nr, cap;
	struct ust_hmap idx;	/* (parent, name) -> node */
	uint32_t max_depth;
};

static uint64_t kid_key(uint32_t parent, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ULL;
	return ust_hmap_mix(h ^ ((uint64_t)parent << 32 | 0x9e37u));
}

static int add_node(struct tree *t, uint32_t parent, const char *name, size_t len, uint32_t *out)
{
	struct node *p, *n;
	uint32_t *k;

	if (t->nr == t->cap) {
		void *g = ust_grow(t->v, &t->cap, t->nr + 1, sizeof(*t->v), 256);

		if (!g)
			return -ENOMEM;
		t->v = g;
	}
	n = &t->v[t->nr];
	memset(n, 0, sizeof(*n));
	n->name = strndup(name, len);
	if (!n->name)
		return -ENOMEM;
	p = &t->v[parent];
	n->depth = p->depth + 1;
	k = ust_grow(p->kids, &p->cap_kids, p->nr_kids + 1, sizeof(*p->kids), 4);
	if (!k) {
		free(n->name);
		return -ENOMEM;
	}
	p->kids = k;
	p->kids[p->nr_kids++] = (uint32_t)t->nr;
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	*out = (uint32_t)t->nr++;
	return 0;
}

/* The child of @parent named name[0..len), made if new. */
static int child(struct tree *t, uint32_t parent, const char *name, size_t len, uint32_t *out)
{
	uint64_t key = kid_key(parent, name, len), v;
	size_t i;

	if (ust_hmap_get(&t->idx, key, &v)) {
		const struct node *n = &t->v[v];

		if (strlen(n->name) == len && !memcmp(n->name, name, len)) {
			*out = (uint32_t)v;
			return 0;
		}
		/* Another name under the same key: the parent's list decides. */
		for (i = 0; i < t->v[parent].nr_kids; i++) {
			n = &t->v[t->v[parent].kids[i]];
			if (strlen(n->name) == len && !memcmp(n->name, name, len)) {
				*out = t->v[parent].kids[i];
				return 0;
			}
		}
		return add_node(t, parent, name, len, out);
	}
	if (add_node(t, parent, name, len, out))
		return -ENOMEM;
	return ust_hmap_put(&t->idx, key, *out);
}

static int add_stack(struct tree *t, const char *stack, unsigned long count)
{
	const char *p = stack;
	uint32_t at = 0;

	t->v[0].n += count;
	while (*p) {
		size_t len = strcspn(p, ";");

		if (child(t, at, p, len, &at))
			return -ENOMEM;
		t->v[at].n += count;
		p += len;
		if (*p == ';')
			p++;
	}
	return 0;
}

static int cmp_kid(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;

	return strcmp(t->v[*(const uint32_t *)a].name, t->v[*(const uint32_t *)b].name);
}

/* Siblings in name order (flamegraph.pl's), each after the one before it. */
static void lay_out(struct tree *t)
{
	size_t i, k;

	/* Parents come before their children in v[]: one pass places all. */
	for (i = 0; i < t->nr; i++) {
		struct node *p = &t->v[i];
		uint64_t x = p->x;

		if (p->nr_kids > 1)
			qsort_r(p->kids, p->nr_kids, sizeof(*p->kids), cmp_kid, t);
		for (k = 0; k < p->nr_kids; k++) {
			t->v[p->kids[k]].x = x;
			x += t->v[p->kids[k]].n;
		}
	}
}

static void free_tree(struct tree *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		free(t->v[i].name);
		free(t->v[i].kids);
	}
	free(t->v);
	ust_hmap_fini(&t->idx);
}

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not XML. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

/*
 * As much of @name as fits @w pixels (7 a character at 12 px), ".." where
 * cut; nothing under three characters.  Written here too, not only by the
 * script: viewers without scripts (an image converter, a chat preview)
 * show the names.
 */
static void put_label(FILE *out, const char *name, double w)
{
	long c = (long)((w - 6) / 7);
	size_t len = strlen(name);
	char buf[512];

	if (c < 3)
		return;
	if ((size_t)c >= len) {
		put_escaped(out, name);
		return;
	}
	if ((size_t)c > sizeof(buf) - 1)
		c = (long)sizeof(buf) - 1;
	memcpy(buf, name, (size_t)c - 2);
	strcpy(buf + c - 2, "..");
	put_escaped(out, buf);
}

/* The frame's colour: by whose code it is, varied by its name (stable from run to run). */
static void colour(const struct ust_fold *f, const char *name, int *r, int *g, int *b)
{
	uint64_t h = ust_hmap_str(name);
	double v1 = (double)(h & 0xff) / 255, v2 = (double)((h >> 8) & 0xff) / 255;
	double v3 = (double)((h >> 16) & 0xff) / 255;

	switch (f ? ust_fold_kind(f, name) : UST_FOLD_OTHER) {
	case UST_FOLD_PROGRAM:
		*r = 205 + (int)(50 * v3), *g = (int)(150 * v1), *b = (int)(55 * v2);
		break;
	case UST_FOLD_LIBRARY:
		*r = 175 + (int)(55 * v2), *g = 175 + (int)(55 * v2), *b = 50 + (int)(20 * v1);
		break;
	case UST_FOLD_KERNEL:
		*r = 50 + (int)(60 * v1), *g = 165 + (int)(55 * v1), *b = 165 + (int)(55 * v1);
		break;
	default:
		*r = *g = *b = 165 + (int)(40 * v1);
	}
}

/*
 * The script: zoom (click a frame; "Reset Zoom"), search ("Search" or
 * Ctrl-F; again to clear; ?s=REGEX in the URL), the details line.  Positions are read from
 * each frame's data-x/-n/-d, the original ones from data-px/-pw.
 */
static const char script[] =
	"\"use strict\";\n"
	"var W, XP, TOTAL, frames, details, matched, unzoom, searching = null;\n"
	"function num(g, a) { return +g.getAttribute(a); }\n"
	"function rect(g) { return g.getElementsByTagName('rect')[0]; }\n"
	"function fit(g) {\n"
	"  var r = rect(g), t = g.getElementsByTagName('text')[0], w = +r.getAttribute('width');\n"
	"  var name = g.getAttribute('data-name'), c = Math.floor((w - 6) / 7);\n"
	"  t.setAttribute('x', +r.getAttribute('x') + 3);\n"
	"  t.textContent = c < 3 ? '' : name.length <= c ? name : name.slice(0, c - 2) + '..';\n"
	"}\n"
	"function pct(n) { return (100 * n / TOTAL).toFixed(2); }\n"
	"function zoom(z) {\n"
	"  var zx = num(z, 'data-x'), zn = num(z, 'data-n'), zd = num(z, 'data-d');\n"
	"  var scale = (W - 2 * XP) / zn;\n"
	"  frames.forEach(function (g) {\n"
	"    var x = num(g, 'data-x'), n = num(g, 'data-n'), d = num(g, 'data-d'), r = rect(g);\n"
	"    if (x + n <= zx || x >= zx + zn) { g.style.display = 'none'; return; }\n"
	"    g.style.display = '';\n"
	"    if (d < zd) {\n"
	"      r.setAttribute('x', XP); r.setAttribute('width', W - 2 * XP); g.style.opacity = '0.5';\n"
	"    } else {\n"
	"      var a = Math.max(x, zx), e = Math.min(x + n, zx + zn);\n"
	"      r.setAttribute('x', XP + (a - zx) * scale); r.setAttribute('width', (e - a) * scale);\n"
	"      g.style.opacity = '';\n"
	"      if ((e - a) * scale < 0.1) g.style.display = 'none';\n"
	"    }\n"
	"    fit(g);\n"
	"  });\n"
	"  unzoom.style.opacity = '1';\n"
	"}\n"
	"function reset() {\n"
	"  frames.forEach(function (g) {\n"
	"    var r = rect(g);\n"
	"    g.style.display = ''; g.style.opacity = '';\n"
	"    r.setAttribute('x', g.getAttribute('data-px')); r.setAttribute('width', g.getAttribute('data-pw'));\n"
	"    fit(g);\n"
	"  });\n"
	"  unzoom.style.opacity = '0';\n"
	"}\n"
	"function clear_search() {\n"
	"  frames.forEach(function (g) {\n"
	"    var r = rect(g);\n"
	"    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill'));\n"
	"  });\n"
	"  searching = null; matched.textContent = ' ';\n"
	"}\n"
	"function search(term) {\n"
	"  var re, hits = [], sum = 0, end = -1;\n"
	"  try { re = new RegExp(term); } catch (e) { matched.textContent = 'Not a regular expression: ' + term; return; }\n"
	"  clear_search();\n"
	"  frames.forEach(function (g) {\n"
	"    var r = rect(g);\n"
	"    if (!re.test(g.getAttribute('data-name'))) return;\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    r.setAttribute('fill', 'rgb(230,0,230)'); hits.push(g);\n"
	"  });\n"
	"  /* A match inside a match already counted is the same samples. */\n"
	"  hits.sort(function (a, b) { return num(a, 'data-x') - num(b, 'data-x') || num(a, 'data-d') - num(b, 'data-d'); });\n"
	"  hits.forEach(function (g) {\n"
	"    var x = num(g, 'data-x'), n = num(g, 'data-n');\n"
	"    if (x >= end) { sum += n; end = x + n; }\n"
	"  });\n"
	"  searching = term;\n"
	"  matched.textContent = 'Matched: ' + pct(sum) + '% (' + sum + ')';\n"
	"  document.documentElement.setAttribute('data-matched', sum);\n"
	"}\n"
	"function ask() {\n"
	"  if (searching !== null) { clear_search(); return; }\n"
	"  var t = window.prompt('Search (a regular expression):', '');\n"
	"  if (t) search(t);\n"
	"}\n"
	"function init() {\n"
	"  var svg = document.documentElement;\n"
	"  W = num(svg, 'data-w'); XP = num(svg, 'data-xpad'); TOTAL = num(svg, 'data-total');\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  details = document.getElementById('details'); matched = document.getElementById('matched');\n"
	"  unzoom = document.getElementById('unzoom');\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.textContent = g.getElementsByTagName('title')[0].textContent;\n"
	"    });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"    fit(g);\n"
	"  });\n"
	"  unzoom.addEventListener('click', reset);\n"
	"  document.getElementById('search').addEventListener('click', ask);\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if (e.ctrlKey && e.key === 'f') { e.preventDefault(); ask(); }\n"
	"    if (e.key === 'Escape') { reset(); clear_search(); }\n"
	"  });\n"
	"  /* ?s=REGEX searches at once, as flamegraph.pl's links do. */\n"
	"  var m = /[?&]s=([^&]*)/.exec(window.location.search);\n"
	"  if (m) search(decodeURIComponent(m[1]));\n"
	"  svg.setAttribute('data-ready', '1');\n"
	"}\n"
	"window.addEventListener('load', init);\n";

int ust_flame_svg(const struct ust_fold *f, const struct ust_flame_opts *o, FILE *out)
{
	static const struct ust_flame_opts none = { 0 };
	struct tree t = { 0 };
	const char *unit, *title;
	unsigned long total;
	double usable = IMAGE_W - 2 * XPAD;
	int ret = 0, height;
	size_t i;

	if (!o)
		o = &none;
	unit = o->unit ? o->unit : "samples";
	title = o->title ? o->title : o->icicle ? "Icicle Graph" : "Flame Graph";
	ust_hmap_init(&t.idx);
	t.v = calloc(1, sizeof(*t.v));
	if (!t.v)
		return -ENOMEM;
	t.cap = t.nr = 1;
	t.v[0].name = strdup("all");
	if (!t.v[0].name) {
		free_tree(&t);
		return -ENOMEM;
	}
	for (i = 0; i < ust_fold_nr(f) && !ret; i++) {
		unsigned long n;
		const char *s = ust_fold_stack(f, i, &n);

		ret = add_stack(&t, s, n);
	}
	if (ret) {
		free_tree(&t);
		return ret;
	}
	lay_out(&t);
	total = t.v[0].n;
	height = (int)(t.max_depth + 1) * FRAME_H + YPAD_TOP + YPAD_BOTTOM;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" data-w=\"%d\" data-xpad=\"%d\" data-total=\"%lu\">\n",
		IMAGE_W, height, IMAGE_W, height, IMAGE_W, XPAD, total);
	fputs("<style type=\"text/css\">\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	      "#title { text-anchor: middle; font-size: 17px; }\n"
	      "#subtitle { text-anchor: middle; fill: rgb(120,120,120); }\n"
	      "#unzoom, #search { cursor: pointer; }\n"
	      "g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
	      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(script, out);
	fputs("]]></script>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(248,248,248)\"/>\n",
		IMAGE_W, height);
	fputs("<text id=\"title\" x=\"600\" y=\"24\">", out);
	put_escaped(out, title);
	fputs("</text>\n", out);
	if (o->subtitle) {
		fputs("<text id=\"subtitle\" x=\"600\" y=\"42\">", out);
		put_escaped(out, o->subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"unzoom\" x=\"%d\" y=\"24\" style=\"opacity: 0\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		XPAD, IMAGE_W - XPAD, IMAGE_W - XPAD, height - 12, XPAD, height - 12);
	fputs("<g id=\"frames\">\n", out);
	for (i = 0; i < t.nr; i++) {
		const struct node *n = &t.v[i];
		double px = XPAD + (double)n->x / (double)(total ? total : 1) * usable;
		double pw = (double)n->n / (double)(total ? total : 1) * usable;
		int y = o->icicle ? YPAD_TOP + (int)n->depth * FRAME_H
				  : height - YPAD_BOTTOM - (int)(n->depth + 1) * FRAME_H;
		int r, g, b;

		if (pw < MIN_W_PX)
			continue;
		colour(i ? f : NULL, n->name, &r, &g, &b);
		fprintf(out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-n=\"%lu\" data-d=\"%u\" "
			"data-px=\"%.2f\" data-pw=\"%.2f\" data-name=\"", n->x, n->n, n->depth, px, pw);
		put_escaped(out, n->name);
		fputs("\"><title>", out);
		put_escaped(out, n->name);
		fprintf(out, " (%lu %s, %.2f%%)</title>"
			"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>"
			"<text x=\"%.2f\" y=\"%d\">",
			n->n, unit, 100.0 * (double)n->n / (double)(total ? total : 1),
			px, y, pw, FRAME_H - 1, r, g, b, px + 3, y + FRAME_H - 5);
		put_label(out, n->name, pw);
		fputs("</text></g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
	free_tree(&t);
	return ferror(out) ? -EIO : 0;
}

int ust_flame_write(const struct ust_fold *f, const char *dest, const struct ust_flame_opts *o,
		    char *err, size_t errsz)
{
	FILE *out = fopen(dest, "we");
	int ret;

	if (!out) {
		int e = errno;

		snprintf(err, errsz, "cannot write %s: %s", dest, strerror(e));
		return -e;
	}
	ret = ust_flame_svg(f, o, out);
	if (fclose(out) && !ret)
		ret = -EIO;
	if (ret) {
		snprintf(err, errsz, "writing %s failed", dest);
		return ret;
	}
	fflush(stdout);
	printf("# ustitch flame graph: %lu %s, %zu distinct stacks, written to %s\n",
	       ust_fold_total(f), o && o->unit ? o->unit : "samples", ust_fold_nr(f), dest);
	fflush(stdout);
	return 0;
}
