// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_top: each folded stack adds its count to its innermost frame's self
 * and to the total of every function in it (once, however often it
 * recurses: a stamp per function says which stack counted it last).  The
 * root (the task) is not a function.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/fold.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/top.h"

struct fn {
	char *name;
	unsigned long self, total;
	size_t stamp;		/* the stack that counted it last, + 1 */
};

struct fns {
	struct fn *v;
	size_t nr, cap;
	struct ust_hmap idx;	/* name's key -> v[] */
};

static struct fn *fn_of(struct fns *t, const char *name, size_t len)
{
	uint64_t key = 1469598103934665603ULL, i;
	size_t k;

	for (k = 0; k < len; k++)
		key = (key ^ (unsigned char)name[k]) * 1099511628211ULL;
	key = ust_hmap_mix(key);
	/* Open chain on a mismatch: the next key, until the name or a free one. */
	while (ust_hmap_get(&t->idx, key, &i)) {
		if (strlen(t->v[i].name) == len && !memcmp(t->v[i].name, name, len))
			return &t->v[i];
		key = ust_hmap_mix(key + 1);
	}
	if (t->nr == t->cap) {
		void *n = ust_grow(t->v, &t->cap, t->nr + 1, sizeof(*t->v), 256);

		if (!n)
			return NULL;
		t->v = n;
	}
	t->v[t->nr] = (struct fn){ .name = strndup(name, len) };
	if (!t->v[t->nr].name || ust_hmap_put(&t->idx, key, t->nr)) {
		free(t->v[t->nr].name);
		return NULL;
	}
	return &t->v[t->nr++];
}

static int count(struct fns *t, const struct ust_fold *f)
{
	size_t i;

	for (i = 0; i < ust_fold_nr(f); i++) {
		unsigned long n;
		const char *p = ust_fold_stack(f, i, &n);
		struct fn *last = NULL;

		p += strcspn(p, ";");	/* the root: the task */
		while (*p == ';') {
			size_t len;

			p++;
			len = strcspn(p, ";");
			last = fn_of(t, p, len);
			if (!last)
				return -ENOMEM;
			if (last->stamp != i + 1) {
				last->stamp = i + 1;
				last->total += n;
			}
			p += len;
		}
		if (last)
			last->self += n;
	}
	return 0;
}

static int by_self(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->name, y->name);
}

static double pct(unsigned long n, unsigned long total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

static void table(const struct ust_fold *f, struct fns *t, unsigned int n, bool self_first,
		  const char *what, FILE *out)
{
	unsigned long all = ust_fold_total(f);
	size_t i;

	if (t->nr > 1)
		qsort(t->v, t->nr, sizeof(*t->v), self_first ? by_self : by_total);
	fprintf(out, "# ustitch top %u by %s, of %lu %s:\n#\n", n,
		self_first ? "self" : "children (self and callees)", all, what);
	fprintf(out, "# %8s  %8s  %-20s  %s\n", self_first ? "Self" : "Children",
		self_first ? "Children" : "Self", "Object", "Function");
	for (i = 0; i < t->nr && i < n; i++) {
		const struct fn *e = &t->v[i];
		const char *obj = ust_fold_object(f, e->name);
		unsigned long a = self_first ? e->self : e->total, b = self_first ? e->total : e->self;

		if (!a)
			break;
		size_t len = strlen(e->name);
		bool k = len > 4 && !strcmp(e->name + len - 4, "_[k]");

		/* A kernel function as perf names it: "[k] name". */
		fprintf(out, "  %7.2f%%  %7.2f%%  %-20s  %s%.*s\n", pct(a, all), pct(b, all),
			obj ? obj : "[unknown]", k ? "[k] " : "", (int)(k ? len - 4 : len), e->name);
	}
	fputs("#\n", out);
}

int ust_top_print(const struct ust_fold *f, unsigned int n, const char *what, FILE *out)
{
	struct fns t = { 0 };
	size_t i;
	int ret;

	ust_hmap_init(&t.idx);
	ret = count(&t, f);
	if (!ret) {
		table(f, &t, n, true, what, out);
		table(f, &t, n, false, what, out);
		if (ferror(out))
			ret = -EIO;
	}
	for (i = 0; i < t.nr; i++)
		free(t.v[i].name);
	free(t.v);
	ust_hmap_fini(&t.idx);
	return ret;
}
