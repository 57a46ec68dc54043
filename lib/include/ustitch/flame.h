/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_flame: a flame graph of folded stacks (ust_fold) as one
 * self-contained SVG file, written here in C: no flamegraph.pl, which
 * Debian does not package.  As people know it from flamegraph.pl and
 * inferno: a frame's width is its share of the samples, its callers below
 * it (or above, as an icicle), siblings in name order; a title per frame
 * with its count and share; click to zoom into a frame, search (a regular
 * expression) to highlight the frames it matches and sum their share.
 * Colours say whose code a frame is: the program's (red to orange), a
 * library's (yellow), the kernel's (aqua), other (the task, unknown or
 * lost frames: grey).
 */
#ifndef USTITCH_FLAME_H
#define USTITCH_FLAME_H

#include <stdbool.h>
#include <stdio.h>

struct ust_fold;
struct ust_fold_names;
struct ust_scan;

struct ust_flame_opts {
	const char *title;	/* NULL: "Flame Graph" (or "Icicle Graph") */
	const char *subtitle;	/* NULL: none (say the trace and the event) */
	bool icicle;		/* roots at the top, callees below */
	bool per_thread;	/* one root per thread (comm-TID), not per comm */
	const char *unit;	/* "samples" unless said */
};

/* Write @f's flame graph to @out.  0, or -EIO / -ENOMEM. */
int ust_flame_svg(const struct ust_fold *f, const struct ust_flame_opts *o, FILE *out);

/* @f's flame graph into the file @dest, a line on stdout saying where.  0, or a negative errno with @err. */
int ust_flame_write(const struct ust_fold *f, const char *dest, const struct ust_flame_opts *o,
		    char *err, size_t errsz);

#endif
