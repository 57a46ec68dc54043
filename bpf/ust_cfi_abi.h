/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CFI unwind tables: the rows lib/cfi/ builds from an ELF file's
 * .eh_frame / .debug_frame and the BPF unwinder (bpfu.bpf.c) and the
 * LTTng provider walk with.  Included by both sides: the includer provides
 * __u32/__s32/__s16/__u8 (BPF: ust_bpfu_kern.h, user space: <linux/types.h>).
 *
 * x86-64 only.  A table is the rows of one file, sorted by @off, the FILE
 * OFFSET at which the row starts (not the vaddr): the BPF side knows a
 * frame's file offset from its VMA (addr - vm_start + vm_pgoff * 4096),
 * never the file's vaddrs.  A row holds until the next row's @off.  Ranges
 * that no FDE covers get a UST_CFI_CFA_NONE row, so a binary search for
 * "last row with off <= pc" always lands on the rule of pc's own range.
 *
 * The return address is always at CFA - 8 (the builder refuses, as
 * UNSUPPORTED, any other rule for it), and the caller's rsp is the CFA.
 */
#ifndef UST_CFI_ABI_H
#define UST_CFI_ABI_H

/* cfa_type */
#define UST_CFI_CFA_NONE	0	/* no CFI covers the range: use frame pointers */
#define UST_CFI_CFA_RSP		1	/* CFA = rsp + cfa_off */
#define UST_CFI_CFA_RBP		2	/* CFA = rbp + cfa_off */
/*
 * Lazy-binding PLT entries (binutils' .plt): CFA = rsp + cfa_off, plus 8
 * once rip & 15 >= rbp_off (the entry's push has run).  The DWARF is the
 * expression "breg7 N; breg16 0; lit15; and; litK; ge; lit3; shl; plus".
 */
#define UST_CFI_CFA_PLT		3
/* Stack realignment: CFA = *(rbp + cfa_off) (def_cfa_expression "breg6 N; deref"). */
#define UST_CFI_CFA_DEREF_RBP	4
/*
 * The rt_sigreturn trampoline (__restore_rt: an FDE with the 'S'
 * augmentation): rsp points at the ucontext; the interrupted rip, rsp and
 * rbp are read from its mcontext (UST_CFI_SIGFRAME_*), and the next frame's
 * rip is not a return address.
 */
#define UST_CFI_CFA_SIGNAL	5
/* The return address is undefined: the outermost frame (_start, clone's child). */
#define UST_CFI_CFA_END		6
/* A rule the walkers cannot follow (CFA in another register, other expressions). */
#define UST_CFI_CFA_UNSUPPORTED	7
/*
 * CFA = rbx + cfa_off: code that realigns the stack after copying rsp to
 * rbx (ld.so's _dl_runtime_resolve_xsave*, the lazy-binding entry).  The
 * walkers track rbx for it (rbx_type).
 */
#define UST_CFI_CFA_RBX		8

/* rbp_type */
#define UST_CFI_RBP_SAME	0	/* rbp keeps its value in the caller */
#define UST_CFI_RBP_CFA		1	/* the caller's rbp is saved at CFA + rbp_off */
#define UST_CFI_RBP_DEREF_RBP	2	/* the caller's rbp is at rbp + rbp_off (realigned frames) */
#define UST_CFI_RBP_UNSUPPORTED	3	/* another rule: rbp becomes unknown */

/* rbx_type: the same rules as rbp's (UST_CFI_RBP_*), for rbx. */

/*
 * 16 bytes: a BPF array map pads its elements to 8 bytes anyway, so the
 * rbx rule costs nothing there.
 */
struct ust_cfi_row {
	__u32 off;		/* file offset of the row's first instruction */
	__s32 cfa_off;		/* CFA offset (RSP, RBP, RBX, PLT) or deref offset (DEREF_RBP) */
	__s16 rbp_off;		/* RBP_CFA / RBP_DEREF_RBP offset; PLT: the threshold K */
	__s16 rbx_off;		/* rbx's rule offset, as rbp_off */
	__u8 cfa_type;		/* UST_CFI_CFA_* */
	__u8 rbp_type;		/* UST_CFI_RBP_* */
	__u8 rbx_type;		/* UST_CFI_RBP_*, for rbx */
	__u8 pad;
};

/* Offsets in the rt_sigframe, from the rsp __restore_rt runs with (x86-64:
 * struct ucontext, uc_mcontext at 40, then r8..r15, rdi, rsi, rbp, rbx,
 * rdx, rax, rcx, rsp, rip). */
#define UST_CFI_SIGFRAME_RBP	120
#define UST_CFI_SIGFRAME_RBX	128
#define UST_CFI_SIGFRAME_RSP	160
#define UST_CFI_SIGFRAME_RIP	168

#endif /* UST_CFI_ABI_H */
