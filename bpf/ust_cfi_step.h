/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One unwind step by a CFI row (ust_cfi_abi.h), from a frame's registers
 * to its caller's: the rules, written once for the walkers that follow
 * them, the BPF unwinder (bpfu_walk.bpf.h, clang -target bpf), the LTTng
 * provider (plugins/lttng-ust/ust_lttng_walk.c, user space) and the
 * recorder finishing a walk the BPF unwinder parked
 * (lib/record/bpfu_park.c, over a copy of the stack), and
 * for the unit test that holds them against readelf's reading of the CFI
 * (tests/unit/cfi/test_cfi.c).  x86-64 only.
 *
 * Pure computations on a row and a register set; the only effect is
 * reading a stack word, which each side does its own way (the BPF walk
 * through its window with bpf_probe_read_user(), the provider directly
 * within the thread's stack, else with process_vm_readv()).  The includer
 * defines, before including this file:
 *
 *   UST_CFI_STEP_CTX           the type of what its read needs (a pointer
 *                              to it is passed through)
 *   UST_CFI_STEP_READ(c, a, v) the 8 bytes at user address @a (__u64)
 *                              into *@v (a __u64 *): 0, or nonzero when
 *                              they cannot be read
 *   UST_CFI_STEP_FN            optional: the functions' storage and
 *                              attributes (default static inline; BPF
 *                              wants them inlined where it calls them:
 *                              the verifier then sees one function, as
 *                              before)
 *
 * and the __u64/__s64/__u32/__s32/__s16/__u8 types (BPF: ust_bpfu_kern.h,
 * user space: <linux/types.h>).
 *
 * Where a rule saved the caller's rbp or rbx, the step only notes the
 * address (bp_at, bx_at): most frames need the return address alone, and
 * the saved value is read when a later rule uses it (ust_cfi_regs_bp()).
 *
 * Frame 0 and the choice between a row and frame pointers are the
 * walkers' own (which object holds the pc, whether its table is loaded,
 * the BPF walk's look at the instruction at a leaf's ip): a walker asks
 * ust_cfi_row_fp() whether the row gives a rule, then takes
 * ust_cfi_step_row() or ust_cfi_step_norule() (frame pointers).
 */
#ifndef UST_CFI_STEP_H
#define UST_CFI_STEP_H

#include "ust_cfi_abi.h"

#ifndef UST_CFI_STEP_FN
#define UST_CFI_STEP_FN static inline
#endif

/* A frame's registers, as far as the walk knows them. */
struct ust_cfi_regs {
	__u64 ip, sp, bp, bx;
	/* Where the caller's rbp (rbx) is saved, not read yet; 0: bp (bx) holds it. */
	__u64 bp_at, bx_at;
	__u32 bp_ok;		/* rbp is known (every rule so far told it) */
	__u32 bx_ok;		/* rbx likewise (only a CFA defined by rbx needs it) */
	__u32 ip_exact;		/* ip is not a return address: frame 0, after a signal frame */
	/*
	 * bp (bx) still holds the value the walk started with, and whether a
	 * rule used that value: the BPF walk's memo compares a register only
	 * then (rbx is often a loop's counter, and the walk rarely needs it).
	 */
	__u32 bp_reg, bx_reg;
	__u32 bp_used, bx_used;
};

/* What a step did. */
#define UST_CFI_STEP_NEXT	0	/* the registers are the caller's */
#define UST_CFI_STEP_END	1	/* the return address is 0: the walk ends there */
#define UST_CFI_STEP_BOTTOM	2	/* the outermost frame (an END row, rbp 0) */
/* Cut: a CFA not above rsp, or a register the rule needs is unknown (by
 * frame pointers: no frame pointer either). */
#define UST_CFI_STEP_BAD	3
#define UST_CFI_STEP_FAULT	4	/* cut: a stack word could not be read */

/* The frame's regs at the start of a walk: every register known, ip exact. */
UST_CFI_STEP_FN void ust_cfi_regs_init(struct ust_cfi_regs *r, __u64 ip, __u64 sp, __u64 bp,
				       __u64 bx)
{
	r->ip = ip;
	r->sp = sp;
	r->bp = bp;
	r->bx = bx;
	r->bp_at = 0;
	r->bx_at = 0;
	r->bp_ok = 1;
	r->bx_ok = 1;
	r->ip_exact = 1;
	r->bp_reg = 1;
	r->bx_reg = 1;
	r->bp_used = 0;
	r->bx_used = 0;
}

/* The pc whose row rules the frame: a return address is after the call, the call at ip - 1. */
UST_CFI_STEP_FN __u64 ust_cfi_regs_pc(const struct ust_cfi_regs *r)
{
	return r->ip - (r->ip_exact ? 0 : 1);
}

/* No rule in @row (none at all, none covers the pc, or one we cannot follow): frame pointers. */
UST_CFI_STEP_FN int ust_cfi_row_fp(const struct ust_cfi_row *row)
{
	return !row || row->cfa_type == UST_CFI_CFA_NONE ||
	       row->cfa_type == UST_CFI_CFA_UNSUPPORTED;
}

/* rbp's value, read from where it was saved if not yet; 0: unknown. */
UST_CFI_STEP_FN int ust_cfi_regs_bp(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r)
{
	if (r->bp_ok && r->bp_at) {
		r->bp_ok = !UST_CFI_STEP_READ(c, r->bp_at, &r->bp);
		r->bp_at = 0;
	}
	if (r->bp_reg)
		r->bp_used = 1;
	return r->bp_ok;
}

UST_CFI_STEP_FN int ust_cfi_regs_bx(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r)
{
	if (r->bx_ok && r->bx_at) {
		r->bx_ok = !UST_CFI_STEP_READ(c, r->bx_at, &r->bx);
		r->bx_at = 0;
	}
	if (r->bx_reg)
		r->bx_used = 1;
	return r->bx_ok;
}

/*
 * One frame-pointer step, the kernel's unwind_user walk: CFA = rbp + 16,
 * the return address at CFA - 8, the caller's rbp at CFA - 16.  rbp 0
 * marks the outermost frame (the x86-64 ABI: the kernel starts a program
 * with it and _start clears it; ld.so's own _start has no CFI, and this is
 * how its stacks end).  A CFA that does not grow, or is misaligned: no
 * frame pointer here.
 */
UST_CFI_STEP_FN int ust_cfi_step_fp(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r)
{
	__u64 cfa, bp = 0, ra = 0;

	ust_cfi_regs_bp(c, r);
	if (r->bp_ok && !r->bp)
		return UST_CFI_STEP_BOTTOM;
	cfa = r->bp + 16;
	if (!r->bp_ok || cfa <= r->sp || (cfa & 7))
		return UST_CFI_STEP_BAD;
	if (UST_CFI_STEP_READ(c, r->bp, &bp) || UST_CFI_STEP_READ(c, r->bp + 8, &ra))
		return UST_CFI_STEP_FAULT;
	if (!ra)
		return UST_CFI_STEP_END;
	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	r->bp_at = 0;
	r->bp_reg = 0;
	r->bx_ok = 0;		/* whatever the callee did with it, nothing tells */
	r->bx_reg = 0;
	r->ip_exact = 0;
	return UST_CFI_STEP_NEXT;
}

/*
 * The step of a frame ust_cfi_row_fp() sends to frame pointers; @row: the
 * row a loaded table has for the pc (NONE or UNSUPPORTED), NULL when no
 * table covers it.  rbp 0 ends the stack only where no table does: a file
 * with CFI has END rows at its outermost frames (its own, or the
 * builder's at the entry point), so rbp 0 at a pc it has no rule for is a
 * register holding 0 in code built without frame pointers (busybox's
 * applets, between FDEs), not the end: no CFI and no frame pointer, and
 * the stack says it was cut there rather than complete.
 */
UST_CFI_STEP_FN int ust_cfi_step_norule(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r,
					const struct ust_cfi_row *row)
{
	int ret = ust_cfi_step_fp(c, r);

	return ret == UST_CFI_STEP_BOTTOM && row ? UST_CFI_STEP_BAD : ret;
}

/* The rt_sigreturn trampoline: the interrupted registers, from the ucontext at rsp. */
UST_CFI_STEP_FN int ust_cfi_step_signal(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r)
{
	__u64 ip = 0, sp = 0, bp = 0, bx = 0, uc = r->sp;

	if (UST_CFI_STEP_READ(c, uc + UST_CFI_SIGFRAME_RIP, &ip) ||
	    UST_CFI_STEP_READ(c, uc + UST_CFI_SIGFRAME_RSP, &sp) ||
	    UST_CFI_STEP_READ(c, uc + UST_CFI_SIGFRAME_RBP, &bp) ||
	    UST_CFI_STEP_READ(c, uc + UST_CFI_SIGFRAME_RBX, &bx))
		return UST_CFI_STEP_FAULT;
	if (!ip)
		return UST_CFI_STEP_END;
	r->ip = ip;
	r->sp = sp;
	r->bp = bp;
	r->bx = bx;
	r->bp_at = 0;
	r->bx_at = 0;
	r->bp_reg = 0;
	r->bx_reg = 0;
	r->bp_ok = 1;
	r->bx_ok = 1;
	r->ip_exact = 1;	/* the interrupted instruction itself */
	return UST_CFI_STEP_NEXT;
}

/*
 * The CFA of @row's rule in frame @r, into *@cfa: UST_CFI_STEP_NEXT, or
 * _BAD (the register it needs is unknown, or a rule of another kind),
 * _FAULT (DEREF_RBP's word).
 */
UST_CFI_STEP_FN int ust_cfi_step_cfa(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r,
				     const struct ust_cfi_row *row, __u64 *cfa)
{
	__s64 off = row->cfa_off;

	switch (row->cfa_type) {
	case UST_CFI_CFA_RSP:
		*cfa = r->sp + off;
		return UST_CFI_STEP_NEXT;
	case UST_CFI_CFA_RBP:
		if (!ust_cfi_regs_bp(c, r))
			return UST_CFI_STEP_BAD;
		*cfa = r->bp + off;
		return UST_CFI_STEP_NEXT;
	case UST_CFI_CFA_RBX:
		if (!ust_cfi_regs_bx(c, r))
			return UST_CFI_STEP_BAD;
		*cfa = r->bx + off;
		return UST_CFI_STEP_NEXT;
	case UST_CFI_CFA_PLT:
		/* rip, not the pc: a PLT entry is never a return address's frame. */
		*cfa = r->sp + off + ((__s64)(r->ip & 15) >= row->rbp_off ? 8 : 0);
		return UST_CFI_STEP_NEXT;
	case UST_CFI_CFA_DEREF_RBP:
		if (!ust_cfi_regs_bp(c, r))
			return UST_CFI_STEP_BAD;
		if (UST_CFI_STEP_READ(c, r->bp + off, cfa))
			return UST_CFI_STEP_FAULT;
		return UST_CFI_STEP_NEXT;
	default:
		return UST_CFI_STEP_BAD;
	}
}

/*
 * One step by a rule row (ust_cfi_row_fp() false): the CFA, the return
 * address at CFA - 8, rsp = CFA, and where the caller's rbp and rbx are.
 */
UST_CFI_STEP_FN int ust_cfi_step_rule(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r,
				      const struct ust_cfi_row *row)
{
	__u64 cfa = 0, ra = 0;
	int ret;

	ret = ust_cfi_step_cfa(c, r, row, &cfa);
	if (ret != UST_CFI_STEP_NEXT)
		return ret;
	/* The caller's frame is above this one: anything else is garbage. */
	if (cfa <= r->sp || cfa - r->sp > (1ULL << 30))
		return UST_CFI_STEP_BAD;
	if (UST_CFI_STEP_READ(c, cfa - 8, &ra))
		return UST_CFI_STEP_FAULT;
	/*
	 * Where the caller's rbx and rbp are, read when a rule needs them.
	 * rbx first: its rule may name this frame's rbp, which rbp's changes.
	 */
	if (row->rbx_type == UST_CFI_RBP_CFA) {
		r->bx_at = cfa + row->rbx_off;
		r->bx_ok = 1;
		r->bx_reg = 0;
	} else if (row->rbx_type == UST_CFI_RBP_DEREF_RBP) {
		if (ust_cfi_regs_bp(c, r))
			r->bx_at = r->bp + row->rbx_off;
		else
			r->bx_ok = 0;
		r->bx_reg = 0;
	} else if (row->rbx_type != UST_CFI_RBP_SAME) {
		r->bx_ok = 0;
		r->bx_reg = 0;
	}
	if (row->rbp_type == UST_CFI_RBP_CFA) {
		r->bp_at = cfa + row->rbp_off;
		r->bp_ok = 1;
		r->bp_reg = 0;
	} else if (row->rbp_type == UST_CFI_RBP_DEREF_RBP) {
		if (ust_cfi_regs_bp(c, r))
			r->bp_at = r->bp + row->rbp_off;
		r->bp_reg = 0;
	} else if (row->rbp_type != UST_CFI_RBP_SAME) {
		r->bp_ok = 0;
		r->bp_reg = 0;
	}
	if (!ra)
		return UST_CFI_STEP_END;
	r->ip = ra;
	r->sp = cfa;
	r->ip_exact = 0;
	return UST_CFI_STEP_NEXT;
}

/*
 * One step by a row that gives a rule (ust_cfi_row_fp() false): END is
 * the outermost frame, SIGNAL the interrupted registers, the others a
 * CFA rule.
 */
UST_CFI_STEP_FN int ust_cfi_step_row(UST_CFI_STEP_CTX *c, struct ust_cfi_regs *r,
				     const struct ust_cfi_row *row)
{
	if (row->cfa_type == UST_CFI_CFA_END)
		return UST_CFI_STEP_BOTTOM;
	if (row->cfa_type == UST_CFI_CFA_SIGNAL)
		return ust_cfi_step_signal(c, r);
	return ust_cfi_step_rule(c, r, row);
}

#endif /* UST_CFI_STEP_H */
