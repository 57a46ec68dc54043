/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_filter: the decision graph both filter languages compile into
 * (lock_held() in lib/lockheld/, --addr-filter in lib/addrfilter/) and the
 * BPF filter walks: nodes of bpf/filter_abi.h, each a test with a "true"
 * and a "false" exit, every jump forward.  This module knows the graph,
 * not the languages: composing graphs, asking what a graph tests, and
 * printing it for tests and -v.
 */
#ifndef USTITCH_FILTER_H
#define USTITCH_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "filter_abi.h"

/* One event's compiled graph; nr == 0 keeps every event. */
struct ust_filter_graph {
	struct ust_filter_insn insn[UST_FILTER_MAX_INSNS];
	int nr;
};

/*
 * An exit of a node given to ust_filter_prepend(): "go on to the graph
 * prepended to" (its entry, or accept when it is empty).  Never in a
 * finished graph.
 */
#define UST_FILTER_NEXT		0xfd

/*
 * Put @k nodes @pre in front of @g: @pre's node indexes are its own
 * (0..k-1), its exits may be UST_FILTER_NEXT, and @g's nodes move past
 * them.  0, or -E2BIG (more than UST_FILTER_MAX_INSNS nodes in all: @g
 * unchanged).
 */
int ust_filter_prepend(struct ust_filter_graph *g, const struct ust_filter_insn *pre, int k);

/* Does some node of @g test @op (enum ust_filter_op)? */
bool ust_filter_has_op(const struct ust_filter_graph *g, unsigned int op);

/* One line per node, for tests and -v: "0: mmap_lock:W leaf 0 ? 1 : reject" (malloc'ed). */
char *ust_filter_dump(const struct ust_filter_graph *g);

#endif
