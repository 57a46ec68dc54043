/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_near: the names nearest to a misspelled one, for "did you mean"
 * hints.  Distance: edits (insert, delete, substitute, swap two
 * neighbours); a name is near when at most about a third of it differs.
 */
#ifndef USTITCH_NEAR_H
#define USTITCH_NEAR_H

#include <stddef.h>

#define UST_NEAR_MAX		3	/* names kept (ties of the best distance) */
#define UST_NEAR_NAME_MAX	128

struct ust_near {
	const char *want;
	unsigned int limit;	/* farthest distance taken */
	unsigned int best;
	int nr;
	char names[UST_NEAR_MAX][UST_NEAR_NAME_MAX];
};

/* Edits between @a and @b (both shorter than UST_NEAR_NAME_MAX, else a large number). */
unsigned int ust_near_distance(const char *a, const char *b);
void ust_near_init(struct ust_near *n, const char *want);
/* Consider @name (copied when kept). */
void ust_near_add(struct ust_near *n, const char *name);
/* The names kept, "a", "a or b", "a, b or c" into @buf ("" when none).
 * Returns how many. */
int ust_near_format(const struct ust_near *n, char *buf, size_t size);

#endif
