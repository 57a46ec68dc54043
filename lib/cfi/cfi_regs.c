// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_cfi_regs_here(): the registers a CFI walk of the caller's own stack
 * starts from.  C cannot read rsp, rbp and rbx as they are at a call, so
 * a stub does: it runs with the caller's frame untouched and stores the
 * return address (the caller's ip after the call), rsp as it is after the
 * return, rbp and rbx.  The LTTng provider walks its own process from
 * here; the unit tests capture a stack to finish as the recorder does.
 */
#include <stdint.h>

#include "ustitch/cfi.h"

__asm__(".text\n"
	"\t.p2align 4\n"
	"\t.globl ust_cfi_regs_here\n"
	"\t.hidden ust_cfi_regs_here\n"
	"\t.type ust_cfi_regs_here, @function\n"
	"ust_cfi_regs_here:\n"
	"\t.cfi_startproc\n"
	"\tmovq (%rsp), %rax\n"
	"\tmovq %rax, (%rdi)\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tmovq %rax, 8(%rdi)\n"
	"\tmovq %rbp, 16(%rdi)\n"
	"\tmovq %rbx, 24(%rdi)\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"\t.size ust_cfi_regs_here, .-ust_cfi_regs_here\n");
