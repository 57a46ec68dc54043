/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The filters' decision graph as BPF sees it: what user space compiles
 * (lib/filter/ holds the graph, lib/lockheld/lh_compile.c and
 * lib/addrfilter/af_compile.c write its nodes) and the BPF filter
 * (lockheld.bpf.c) walks.  Included by both sides; the includer provides
 * __u8.. __u64 (BPF: ust_bpfu_kern.h, user space: <linux/types.h>).
 *
 * A filter expression is compiled into a small decision graph, one per
 * traced event, kept in an array map: each node tests one predicate (a
 * lock_held() leaf, an ftrace field term, an --addr-filter range) and
 * names the next node for "true" and for "false", or the final verdict.
 * Negation swaps the two exits and && / || become the exits' targets
 * (short-circuit), so evaluation needs no stack, one test per step, and
 * every jump goes forward: a walk ends within UST_FILTER_MAX_INSNS steps.
 * Why data and not one specialized program per expression: the object is
 * compiled once at build time (no compiler at record time, no
 * hand-emitted BPF), it is verified once however many events and
 * expressions there are, and the graph is what the unit tests check.
 */
#ifndef UST_FILTER_ABI_H
#define UST_FILTER_ABI_H

#define UST_FILTER_MAX_INSNS	32	/* nodes per event filter */

/* Exits of a node besides another node's index. */
#define UST_FILTER_ACCEPT	0xff
#define UST_FILTER_REJECT	0xfe

enum ust_filter_op {
	UST_FILTER_OP_OWNER = 1,	/* arg: lock address; owner inspection (mutex, rt_mutex, rwsem) */
	UST_FILTER_OP_MMAP,		/* current->mm->mmap_lock: write by owner, read by tracking */
	UST_FILTER_OP_RCU,		/* current->rcu_read_lock_nesting, less the runtime's own */
	UST_FILTER_OP_RCU_TRACE,	/* current->trc_reader_nesting */
	UST_FILTER_OP_TRACKED,		/* arg: lock address, slab cache or type tag; fentry/fexit map */
	UST_FILTER_OP_FIELD,		/* an ftrace term on the raw record: off, size, cmp, arg */
	UST_FILTER_OP_PID,		/* common_pid term: the current tid, cmp, arg */
	/* --- address filters (lib/addrfilter/af_compile.c) --- */
	UST_FILTER_OP_AF_FILE,		/* arg: range index; user IP at kernel entry in that file range */
	UST_FILTER_OP_AF_KERNEL,	/* arg: range index; sampled kernel IP in that range */
	UST_FILTER_OP_AF_SWITCH,	/* current's start/stop switch is on */
};

/* Lock modes (flags of lock ops). */
#define UST_FILTER_M_READ	(1U << 0)
#define UST_FILTER_M_WRITE	(1U << 1)
#define UST_FILTER_M_ANY	(UST_FILTER_M_READ | UST_FILTER_M_WRITE)
/* Field flags. */
#define UST_FILTER_F_SIGNED	(1U << 2)
/* The leaf counts as matched when its result is false (it sits under a !). */
#define UST_FILTER_F_NEGATED	(1U << 3)

enum ust_filter_cmp {
	UST_FILTER_EQ = 1,
	UST_FILTER_NE,
	UST_FILTER_LT,
	UST_FILTER_LE,
	UST_FILTER_GT,
	UST_FILTER_GE,
	UST_FILTER_BAND,	/* (field & arg) != 0, ftrace's "&" */
};

struct ust_filter_insn {
	__u8 op;		/* enum ust_filter_op */
	__u8 cmp;		/* enum ust_filter_cmp (fields) */
	__u8 size;		/* field size: 1, 2, 4 or 8 */
	__u8 flags;		/* UST_FILTER_M_*, UST_FILTER_F_* */
	__u16 off;		/* field offset in the record */
	__u8 t;			/* next node when true, or UST_FILTER_ACCEPT/REJECT */
	__u8 f;			/* next node when false */
	__u64 arg;		/* constant, lock address, cache or type tag */
	__u32 leaf;		/* lock leaves: bit index in the match mask */
	__u32 pad;
};

/* Program flags: kept events of this slot get a deferred user stack. */
#define UST_FILTER_P_STACKS	(1U << 0)
/* The graph tests the user IP's file: look its VMA up once, before the walk. */
#define UST_FILTER_P_AF_FILE	(1U << 1)

/* One event's graph: the value of the filter's program map. */
struct ust_filter_prog {
	__u32 nr;		/* nodes; 0: keep every event */
	__u32 flags;		/* UST_FILTER_P_* */
	struct ust_filter_insn insn[UST_FILTER_MAX_INSNS];
};

#endif /* UST_FILTER_ABI_H */
