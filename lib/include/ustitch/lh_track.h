/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_lh_track: the user-space side of held-lock tracking
 * (bpf/lockheld_track.bpf.c): which kernel functions each lock family
 * hooks, which families this kernel can hook (their functions must be in
 * BTF: inlined lock functions have no entry point), and which programs of
 * the tracking object to load for a set of families.
 */
#ifndef USTITCH_LH_TRACK_H
#define USTITCH_LH_TRACK_H

#include <stdbool.h>
#include <stddef.h>

enum ust_lh_hook {
	UST_LH_HOOK_ACQ,	/* fexit on an acquire function: program ust_lh_x_<func> */
	UST_LH_HOOK_REL,	/* fentry on a release function: program ust_lh_e_<func> */
	UST_LH_HOOK_WAIT,	/* both: "held" while inside (grace-period waits) */
};

struct ust_lh_hookfn {
	const char *func;
	enum ust_lh_hook hook;
};

struct ust_lh_family {
	unsigned int bit;		/* UST_LH_FAM_* (ustitch/lh.h) */
	const char *name;		/* "mutex" */
	const struct ust_lh_hookfn *fns;
	int nr_fns;
};

/* The table, in UST_LH_FAM_* bit order. */
const struct ust_lh_family *ust_lh_families(int *nr);
const struct ust_lh_family *ust_lh_family_of(unsigned int bit);

/*
 * The families whose hooks this kernel has: at least one acquire function
 * and every release function (an acquire without its release would leave
 * locks held forever).  @has_func answers for one function name.  For each
 * family left out, @why (if not NULL) gets "family: no <func>" lines.
 */
unsigned int ust_lh_track_available(bool (*has_func)(void *ctx, const char *func), void *ctx,
				    char *why, size_t whylen);

/*
 * The BPF program names to load for @families, those of functions
 * @has_func knows (NULL: all), each once, into @out (at most @max).
 * Returns how many, or -ENOSPC if @max is too small.
 */
int ust_lh_track_progs(unsigned int families, bool (*has_func)(void *ctx, const char *func),
		       void *ctx, const char **out, char (*names)[64], int max);

#endif
