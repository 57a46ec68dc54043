// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_tdw_kallsyms_cut: a trace.dat's kallsyms reduced to what its kernel
 * addresses need.  /proc/kallsyms is some 5 MB; a recording whose only
 * kernel addresses are those its recorder wrote (perf samples' ips and
 * kernel callchains) names a few hundred functions.
 *
 * What "needs" means is what the reader does: libtracecmd registers every
 * line but absolute symbols ('A', 'a') and ARM's '$' mapping symbols, and
 * libtraceevent names an address by the registered symbol at or below it,
 * bounded by the next one above.  Keeping, for each address, every line at
 * those two addresses gives each the same name, offset and module as the
 * whole file does.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/tdw.h"

struct line {
	uint64_t addr;
	size_t start, len;	/* in the text, the newline included */
	bool keep;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = *(const struct line *const *)a, *y = *(const struct line *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* "ADDR TYPE NAME[\t[MODULE]]": whether libtracecmd registers it, and ADDR. */
static bool registered(const char *s, size_t n, uint64_t *addr)
{
	size_t i = 0;
	uint64_t v = 0;
	int digits = 0;

	for (; i < n && digits < 16; i++, digits++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || i + 3 >= n || s[i] != ' ' || s[i + 2] != ' ')
		return false;
	if (s[i + 1] == 'A' || s[i + 1] == 'a' || s[i + 3] == '$')
		return false;
	*addr = v;
	return true;
}

/* Keep every line at the address of sorted[@k] (and its equals). */
static void keep_group(struct line **sorted, size_t nr, size_t k)
{
	uint64_t a = sorted[k]->addr;

	while (k > 0 && sorted[k - 1]->addr == a)
		k--;
	for (; k < nr && sorted[k]->addr == a; k++)
		sorted[k]->keep = true;
}

size_t ust_tdw_kallsyms_cut(char *text, size_t len, const uint64_t *addrs, size_t nr_addrs)
{
	struct line *lines = NULL, **sorted = NULL;
	uint64_t *want = NULL;
	size_t nr = 0, cap = 0, pos = 0, out = 0, i;

	/* The registered lines; the rest (absolute symbols) go. */
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) + 1 : len - pos;
		uint64_t a;

		if (registered(text + pos, n, &a)) {
			if (nr == cap) {
				struct line *nl2 = realloc(lines, (cap = cap ? cap * 2 : 4096) * sizeof(*lines));

				if (!nl2)
					goto whole;
				lines = nl2;
			}
			lines[nr++] = (struct line){ .addr = a, .start = pos, .len = n };
		}
		pos += n;
	}
	sorted = malloc((nr ? nr : 1) * sizeof(*sorted));
	want = malloc((nr_addrs ? nr_addrs : 1) * sizeof(*want));
	if (!sorted || !want)
		goto whole;
	for (i = 0; i < nr; i++)
		sorted[i] = &lines[i];
	qsort(sorted, nr, sizeof(*sorted), cmp_line);
	memcpy(want, addrs, nr_addrs * sizeof(*want));
	qsort(want, nr_addrs, sizeof(*want), cmp_u64);
	for (i = 0; i < nr_addrs; i++) {
		size_t lo = 0, hi = nr;

		if (i && want[i] == want[i - 1])
			continue;
		/* The first line above the address: its bound. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (sorted[mid]->addr <= want[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0)
			keep_group(sorted, nr, lo - 1);
		if (lo < nr)
			keep_group(sorted, nr, lo);
	}
	/* In the file's order, moved down in place. */
	for (i = 0; i < nr; i++) {
		if (!lines[i].keep)
			continue;
		memmove(text + out, text + lines[i].start, lines[i].len);
		out += lines[i].len;
	}
	free(lines);
	free(sorted);
	free(want);
	return out;
whole:
	/* Out of memory: the file whole, as before. */
	free(lines);
	free(sorted);
	free(want);
	return len;
}
