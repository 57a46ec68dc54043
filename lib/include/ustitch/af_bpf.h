/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * --addr-filter in BPF (issue 7): the address tests of the lock_held()
 * decision graph (bpf/lockheld_abi.h UST_LH_OP_AF_*), their ranges and the
 * start/stop uprobes.
 *
 * Every kept event passes, before the graph of its own -f filter:
 *   (user IP in filter range 0 || ... || in filter range n)   if any file: filter
 *   && the task's start/stop switch is on                     if any start/stop
 * Perf ORs its filter ranges the same way, and a task is off until its
 * first start.
 */
#ifndef USTITCH_AF_BPF_H
#define USTITCH_AF_BPF_H

#include <stdbool.h>
#include <stddef.h>

struct ust_af;
struct ust_lh_compiled;
struct ust_lh_bpf;
struct bpf_object;
struct bpf_link;

/*
 * Can this run honour @af?  -1 with the reason in @err and the range's
 * index in @bad (-1 for the whole) for what needs what this kernel or
 * this version lacks: start/stop on kernel: addresses (kprobes), filter
 * on kernel: addresses (sampled kernel IPs: only perf samples have one).
 */
int ust_af_check(const struct ust_af *af, int *bad, char *err, size_t errlen);

/* Put the address tests of @af in front of @c's graph.  0, or -1 (too many nodes). */
int ust_af_prepend(const struct ust_af *af, struct ust_lh_compiled *c, char *err, size_t errlen);

/* Fill the range map and attach the start/stop uprobes.  0, or -1 with @err. */
int ust_af_bpf_setup(struct ust_lh_bpf *b, const struct ust_af *af, char *err, size_t errlen);

/* lib/lh_bpf.c, for the above. */
struct bpf_object *ust_lh_bpf_obj(struct ust_lh_bpf *b);
int ust_lh_bpf_keep_link(struct ust_lh_bpf *b, struct bpf_link *l);

#endif
