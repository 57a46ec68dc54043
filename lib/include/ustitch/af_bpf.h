/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * --addr-filter in BPF: the ranges and start/stop probes of
 * bpf/addrfilter.bpf.h, for tracepoint events (as the UST_FILTER_OP_AF_* nodes
 * in front of each event's decision graph, bpf/filter_abi.h)
 * and for perf samples (the perf_event programs of bpf/bpfu.bpf.c).
 *
 * A tracepoint event passes, before the graph of its own -f filter:
 *   (user IP in filter range 0 || ... || in filter range n)   if any file: filter
 *   && the task's start/stop switch is on                     if any start/stop
 * A perf sample passes the same way, except that its IPs are the sampled
 * ones and kernel: filter ranges test its kernel IP (a tracepoint event has
 * none: such runs are refused, ust_af_kernel_filter()).  Perf ORs its
 * filter ranges the same way, and a task is off until its first start.
 */
#ifndef USTITCH_AF_BPF_H
#define USTITCH_AF_BPF_H

#include <stdbool.h>
#include <stddef.h>

struct ust_af;
struct bpf_object;
struct bpf_link;

/*
 * Can this kernel honour @af?  0, or a negative errno with the reason in
 * @err and the range's index in @bad (-1 for the whole) when not: -E2BIG
 * (too many ranges), -EOPNOTSUPP (start/stop on kernel: addresses need
 * kprobes).
 */
int ust_af_bpf_check(const struct ust_af *af, int *bad, char *err, size_t errsz);

/*
 * Takes a probe's link (NULL: attaching failed, errno says why); returns 0
 * or a negative errno, and then has destroyed the link.
 */
typedef int (*ust_af_keep_fn)(void *arg, struct bpf_link *l);

/*
 * Fill @obj's range map (bpf/addrfilter.bpf.h) and attach its start/stop
 * probes, handing each link to @keep.  0, or a negative errno with @err
 * (-ENOTSUP when built without BPF).
 */
int ust_af_bpf_setup(struct bpf_object *obj, ust_af_keep_fn keep, void *arg,
		     const struct ust_af *af, char *err, size_t errsz);

#endif
