/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_top: a profile's summary, as `perf report --stdio --children` gives
 * it: the functions with the largest self share (samples in the function
 * itself) and with the largest total share (samples in it or in what it
 * called: perf's "Children"), each with its object, out of folded stacks
 * (ust_fold).  A function recursing counts once per stack in its total.
 */
#ifndef USTITCH_TOP_H
#define USTITCH_TOP_H

#include <stddef.h>
#include <stdio.h>

struct ust_fold;
struct ust_fold_names;
struct ust_scan;

/* The @n largest of each, as two tables on @out, of @f's @what ("samples").  0, -ENOMEM or -EIO. */
int ust_top_print(const struct ust_fold *f, unsigned int n, const char *what, FILE *out);

#endif
