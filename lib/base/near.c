// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_near: "did you mean" for names given on a command line (events,
 * plugin options).  Restricted Damerau-Levenshtein distance: a swap of two
 * neighbours ("clokc") is one edit, as a typist makes it.
 */
#include <stdio.h>
#include <string.h>

#include "ustitch/near.h"

#define FAR	(UST_NEAR_NAME_MAX * 2)

static unsigned int min3(unsigned int a, unsigned int b, unsigned int c)
{
	unsigned int m = a < b ? a : b;

	return m < c ? m : c;
}

unsigned int ust_near_distance(const char *a, const char *b)
{
	/* Three rows of the table: the swap looks two rows back. */
	unsigned int rows[3][UST_NEAR_NAME_MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la >= UST_NEAR_NAME_MAX || lb >= UST_NEAR_NAME_MAX)
		return FAR;
	for (j = 0; j <= lb; j++)
		rows[0][j] = (unsigned int)j;
	for (i = 1; i <= la; i++) {
		unsigned int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *pp = rows[(i + 1) % 3];

		cur[0] = (unsigned int)i;
		for (j = 1; j <= lb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1];

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
		}
	}
	return rows[la % 3][lb];
}

void ust_near_init(struct ust_near *n, const char *want)
{
	size_t len = strlen(want);

	memset(n, 0, sizeof(*n));
	n->want = want;
	/* One edit in a short name, up to a third of a long one. */
	n->limit = len < 6 ? 1 : len < 12 ? 2 : 3;
	n->best = n->limit + 1;
}

void ust_near_add(struct ust_near *n, const char *name)
{
	unsigned int d = ust_near_distance(n->want, name);
	int i;

	if (d > n->limit || d > n->best || !d || strlen(name) >= UST_NEAR_NAME_MAX)
		return;
	if (d < n->best) {
		n->best = d;
		n->nr = 0;
	}
	for (i = 0; i < n->nr; i++)
		if (!strcmp(n->names[i], name))
			return;
	if (n->nr < UST_NEAR_MAX)
		snprintf(n->names[n->nr++], UST_NEAR_NAME_MAX, "%s", name);
}

int ust_near_format(const struct ust_near *n, char *buf, size_t size)
{
	size_t len = 0;
	int i;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < n->nr && len < size; i++) {
		const char *sep = !i ? "" : i == n->nr - 1 ? " or " : ", ";
		int w = snprintf(buf + len, size - len, "%s%s", sep, n->names[i]);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	return n->nr;
}
