// SPDX-License-Identifier: LGPL-2.1
/*
 * One libdw frame state -> one row rule (bpf/ust_cfi_abi.h).
 *
 * libdw hands rules back as DWARF operations: a CFA "reg+N" is one
 * DW_OP_bregx (reg, N), a def_cfa_expression its own operations; a
 * register saved at CFA+N is "DW_OP_call_frame_cfa; DW_OP_plus_uconst N"
 * (N negative as a wrapped unsigned), same-value is no operations and a
 * NULL pointer, undefined no operations and the caller's ops_mem.  Only
 * the forms the walkers can follow map to a type; anything else is
 * UNSUPPORTED (CFA) or RBP_UNSUPPORTED, never a guess.
 *
 * Two callee-saved registers are tracked, rbp and rbx (DWARF 6 and 3),
 * with the same rule types: rbx defines the CFA where code realigns the
 * stack after "mov %rsp,%rbx" (ld.so's _dl_runtime_resolve_xsave*), so
 * the walkers need its value one frame up (_dl_fixup saves it).
 */
#include <dwarf.h>

#include "cfi_internal.h"

#define REG_RBX	3
#define REG_RBP	6
#define REG_RSP	7
#define REG_RA	16

/* "reg + off" as one operation: DW_OP_bregx or DW_OP_bregN. */
static bool breg(const Dwarf_Op *op, unsigned int *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		*reg = op->number > 0xffff ? 0xffff : (unsigned int)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	return false;
}

/* DW_OP_litN: its N, or -1. */
static int lit(const Dwarf_Op *op)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31)
		return op->atom - DW_OP_lit0;
	return -1;
}

/* The caller's register is saved at CFA + *@off (the DW_CFA_offset family). */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void cfa_rule(Dwarf_Frame *frame, struct ust_cfi_rule *r)
{
	unsigned int reg;
	Dwarf_Op *ops;
	size_t nops;
	int64_t off;
	int k;

	r->cfa_type = UST_CFI_CFA_UNSUPPORTED;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || !nops)
		return;

	if (nops == 1 && breg(&ops[0], &reg, &off) &&
	    (reg == REG_RSP || reg == REG_RBP || reg == REG_RBX)) {
		if (!fits_s32(off)) {
			r->overflow = true;
			return;
		}
		r->cfa_type = reg == REG_RSP ? UST_CFI_CFA_RSP :
			      reg == REG_RBP ? UST_CFI_CFA_RBP : UST_CFI_CFA_RBX;
		r->cfa_off = (int32_t)off;
		return;
	}
	/* Stack realignment: CFA = *(rbp + N). */
	if (nops == 2 && breg(&ops[0], &reg, &off) && reg == REG_RBP &&
	    ops[1].atom == DW_OP_deref) {
		if (!fits_s32(off)) {
			r->overflow = true;
			return;
		}
		r->cfa_type = UST_CFI_CFA_DEREF_RBP;
		r->cfa_off = (int32_t)off;
		return;
	}
	/* binutils' lazy PLT: breg7 N; breg16 0; lit15; and; litK; ge; lit3; shl; plus. */
	if (nops == 9 && breg(&ops[0], &reg, &off) && reg == REG_RSP) {
		unsigned int reg2;
		int64_t off2;

		if (breg(&ops[1], &reg2, &off2) && reg2 == REG_RA && off2 == 0 &&
		    lit(&ops[2]) == 15 && ops[3].atom == DW_OP_and &&
		    (k = lit(&ops[4])) >= 0 && ops[5].atom == DW_OP_ge &&
		    lit(&ops[6]) == 3 && ops[7].atom == DW_OP_shl &&
		    ops[8].atom == DW_OP_plus) {
			if (!fits_s32(off)) {
				r->overflow = true;
				return;
			}
			r->cfa_type = UST_CFI_CFA_PLT;
			r->cfa_off = (int32_t)off;
			r->rbp_off = (int16_t)k;
		}
	}
}

/*
 * The rule of a callee-saved register (rbp, rbx) into *@type / *@roff
 * (UST_CFI_RBP_*).  "Saved at rbp + N" (DW_CFA_expression breg6 N) is
 * DEREF_RBP for both: gcc's realigned frames (CFA = *(rbp - N)) save rbp
 * at rbp + 0 and the other callee-saved registers, rbx among them, below
 * it (cfitest-prog's realigned(): rbx at rbp - 32).
 */
static void saved_rule(Dwarf_Frame *frame, int regno, struct ust_cfi_rule *r,
		       uint8_t *type, int16_t *roff)
{
	Dwarf_Op mem[3], *ops;
	unsigned int reg;
	size_t nops;
	int64_t off;

	*type = UST_CFI_RBP_UNSUPPORTED;
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
		return;
	/* Same value, and "undefined" (no rule at all for a callee-saved register). */
	if (nops == 0) {
		*type = UST_CFI_RBP_SAME;
		return;
	}
	if (at_cfa(ops, nops, &off)) {
		if (off < INT16_MIN || off > INT16_MAX) {
			r->overflow = true;
			return;
		}
		*type = UST_CFI_RBP_CFA;
		*roff = (int16_t)off;
		return;
	}
	/*
	 * DW_CFA_expression REG: "breg6 N", the address the caller's value is
	 * at.  libdw puts the DW_OP_call_frame_cfa the expression starts with
	 * (DWARF pushes the CFA first) in front; the breg hides it.
	 */
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa) {
		ops++;
		nops--;
	}
	if (nops == 1 && breg(&ops[0], &reg, &off) && reg == REG_RBP) {
		if (off < INT16_MIN || off > INT16_MAX) {
			r->overflow = true;
			return;
		}
		*type = UST_CFI_RBP_DEREF_RBP;
		*roff = (int16_t)off;
	}
}

void ust_cfi_rule_of(Dwarf_Frame *frame, bool signal, struct ust_cfi_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	*r = (struct ust_cfi_rule){ .cfa_type = UST_CFI_CFA_UNSUPPORTED };
	/* Registers come from the sigframe: nothing else to describe. */
	if (signal) {
		r->cfa_type = UST_CFI_CFA_SIGNAL;
		return;
	}
	if (dwarf_frame_register(frame, REG_RA, mem, &ops, &nops) != 0)
		return;
	if (nops == 0 && ops == mem) {
		r->cfa_type = UST_CFI_CFA_END;
		return;
	}
	if (!at_cfa(ops, nops, &off) || off != -8)
		return;
	cfa_rule(frame, r);
	if (ust_cfi_rule_cfa_only(r))
		return;
	saved_rule(frame, REG_RBP, r, &r->rbp_type, &r->rbp_off);
	saved_rule(frame, REG_RBX, r, &r->rbx_type, &r->rbx_off);
}
