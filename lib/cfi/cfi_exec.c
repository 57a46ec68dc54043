// SPDX-License-Identifier: LGPL-2.1
/*
 * The one CFI interpreter: an FDE's program, run once, -> its rows.
 *
 * Why not libdw's (which the builder used before): libdw answers "the
 * frame state at pc", each answer running the FDE's program again from
 * its start into a freshly allocated frame, and finding the FDE in a
 * search tree.  A table wants every row of every FDE, so that is
 * quadratic in an FDE's rows and a malloc per row: cc1plus's 518k rows
 * took 585 ms, while the table is what a recording waits for when a
 * compiler is exec'd (issue 36: every sample before it is parked).
 * Running each program once, in order, is the same answer in one pass
 * (cc1plus: see bench/cfi).  libdw stays the reference: with
 * ust_cfi_opts.check the builder builds the table both ways and fails
 * on the first row that differs (the unit tests do, on Debian's files).
 *
 * Only what a row can hold is tracked: the CFA rule and the rules of the
 * return address (DWARF 16), rbp (6) and rbx (3); every other register's
 * instruction is parsed and dropped.  Their mapping to a row is the one
 * cfi_rule.c gives libdw's answer, case for case: the forms the walkers
 * can follow map to a type, anything else is UNSUPPORTED, never a guess.
 * The x86-64 ABI's defaults are libdw's: rbx and rbp keep their value
 * unless a rule says otherwise, the return address is undefined until
 * the CIE saves it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cfi_internal.h"

#define REG_RBX	3
#define REG_RBP	6
#define REG_RSP	7
#define REG_RA	16

/* remember_state nesting; gcc nests one or two deep. */
#define STATE_DEPTH	32

enum { R_UNSPEC, R_UNDEF, R_SAME, R_OFFSET, R_VAL_OFFSET, R_REG, R_EXPR, R_VAL_EXPR };
/* CFA_INVALID: a register or offset changed on a CFA that had none (an
 * expression's): libdw's answer is then no CFA, until one is defined. */
enum { CFA_UNSET, CFA_REG, CFA_EXPR, CFA_INVALID };
enum { S_RBX, S_RBP, S_RA, NR_SLOTS };

struct reg_rule {
	uint8_t kind;			/* R_* */
	int64_t off;			/* R_OFFSET, R_VAL_OFFSET: CFA + off */
	const uint8_t *e;		/* R_EXPR, R_VAL_EXPR */
	uint64_t len;
};

struct state {
	uint8_t cfa;			/* CFA_* */
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_e;
	uint64_t cfa_len;
	struct reg_rule r[NR_SLOTS];
};

struct exec {
	const struct ust_cfi_fdes *l;
	const struct ust_cfi_fde *f;
	struct state cur, init;		/* init: after the CIE's instructions */
	struct state saved[STATE_DEPTH];
	int depth;
	uint64_t loc, lo, hi;
	ust_cfi_row_fn fn;
	void *ctx;
	char *err;
	size_t errsz;
};

static int slot(uint64_t reg)
{
	switch (reg) {
	case REG_RBX:
		return S_RBX;
	case REG_RBP:
		return S_RBP;
	case REG_RA:
		return S_RA;
	default:
		return -1;
	}
}

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* --- a row's rule (as cfi_rule.c maps libdw's frame state) -------------- */

/* One operation of a DWARF expression: the few the patterns below name. */
struct op {
	uint8_t atom;
	uint64_t reg;			/* DW_OP_breg*: its register */
	int64_t num;			/* its offset, or DW_OP_litN's N */
};

#define OP_BREG		0x70	/* DW_OP_breg0 .. 0x8f */
#define OP_BREGX	0x92
#define OP_LIT		0x30	/* DW_OP_lit0 .. 0x4f */
#define OP_DEREF	0x06
#define OP_AND		0x1a
#define OP_PLUS		0x22
#define OP_SHL		0x24
#define OP_GE		0x2a

/* Up to @max operations of @e; -1 for one outside the patterns' set. */
static int ops_of(const uint8_t *e, uint64_t len, struct op *ops, int max)
{
	const uint8_t *p = e, *end = e + len;
	int n = 0;

	while (p < end) {
		struct op o = { .atom = *p++ };

		if (n == max)
			return -1;
		if (o.atom >= OP_BREG && o.atom <= OP_BREG + 31) {
			o.reg = o.atom - OP_BREG;
			o.atom = OP_BREG;
			if (ust_cfi_read_sleb(&p, end, &o.num))
				return -1;
		} else if (o.atom == OP_BREGX) {
			o.atom = OP_BREG;
			if (ust_cfi_read_uleb(&p, end, &o.reg) || ust_cfi_read_sleb(&p, end, &o.num))
				return -1;
		} else if (o.atom >= OP_LIT && o.atom <= OP_LIT + 31) {
			o.num = o.atom - OP_LIT;
			o.atom = OP_LIT;
		} else if (o.atom != OP_DEREF && o.atom != OP_AND && o.atom != OP_PLUS &&
			   o.atom != OP_SHL && o.atom != OP_GE) {
			return -1;
		}
		ops[n++] = o;
	}
	return n;
}

static bool is_lit(const struct op *o, int64_t n)
{
	return o->atom == OP_LIT && (n < 0 || o->num == n);
}

static void cfa_rule(const struct state *s, struct ust_cfi_rule *r)
{
	struct op ops[10];
	int n;

	r->cfa_type = UST_CFI_CFA_UNSUPPORTED;
	if (s->cfa == CFA_REG) {
		if (s->cfa_reg != REG_RSP && s->cfa_reg != REG_RBP && s->cfa_reg != REG_RBX)
			return;
		if (!fits_s32(s->cfa_off)) {
			r->overflow = true;
			return;
		}
		r->cfa_type = s->cfa_reg == REG_RSP ? UST_CFI_CFA_RSP :
			      s->cfa_reg == REG_RBP ? UST_CFI_CFA_RBP : UST_CFI_CFA_RBX;
		r->cfa_off = (int32_t)s->cfa_off;
		return;
	}
	if (s->cfa != CFA_EXPR)
		return;
	n = ops_of(s->cfa_e, s->cfa_len, ops, 10);
	/* Stack realignment: CFA = *(rbp + N). */
	if (n == 2 && ops[0].atom == OP_BREG && ops[0].reg == REG_RBP && ops[1].atom == OP_DEREF) {
		if (!fits_s32(ops[0].num)) {
			r->overflow = true;
			return;
		}
		r->cfa_type = UST_CFI_CFA_DEREF_RBP;
		r->cfa_off = (int32_t)ops[0].num;
		return;
	}
	/* binutils' lazy PLT: breg7 N; breg16 0; lit15; and; litK; ge; lit3; shl; plus. */
	if (n == 9 && ops[0].atom == OP_BREG && ops[0].reg == REG_RSP &&
	    ops[1].atom == OP_BREG && ops[1].reg == REG_RA && ops[1].num == 0 &&
	    is_lit(&ops[2], 15) && ops[3].atom == OP_AND && is_lit(&ops[4], -1) &&
	    ops[5].atom == OP_GE && is_lit(&ops[6], 3) && ops[7].atom == OP_SHL &&
	    ops[8].atom == OP_PLUS) {
		if (!fits_s32(ops[0].num)) {
			r->overflow = true;
			return;
		}
		r->cfa_type = UST_CFI_CFA_PLT;
		r->cfa_off = (int32_t)ops[0].num;
		r->rbp_off = (int16_t)ops[4].num;
	}
}

/* The rule of a callee-saved register (rbp, rbx): see cfi_rule.c's saved_rule(). */
static void saved_rule(const struct reg_rule *g, struct ust_cfi_rule *r, uint8_t *type,
		       int16_t *roff)
{
	struct op ops[2];

	*type = UST_CFI_RBP_UNSUPPORTED;
	switch (g->kind) {
	case R_UNSPEC:
	case R_UNDEF:
	case R_SAME:
		*type = UST_CFI_RBP_SAME;
		return;
	case R_OFFSET:
		if (g->off < INT16_MIN || g->off > INT16_MAX) {
			r->overflow = true;
			return;
		}
		*type = UST_CFI_RBP_CFA;
		*roff = (int16_t)g->off;
		return;
	case R_EXPR:
		/* "Saved at rbp + N". */
		if (ops_of(g->e, g->len, ops, 2) == 1 && ops[0].atom == OP_BREG &&
		    ops[0].reg == REG_RBP) {
			if (ops[0].num < INT16_MIN || ops[0].num > INT16_MAX) {
				r->overflow = true;
				return;
			}
			*type = UST_CFI_RBP_DEREF_RBP;
			*roff = (int16_t)ops[0].num;
		}
		return;
	default:
		return;
	}
}

static void rule_of(const struct exec *x, struct ust_cfi_rule *r)
{
	const struct reg_rule *ra = &x->cur.r[S_RA];

	*r = (struct ust_cfi_rule){ .cfa_type = UST_CFI_CFA_UNSUPPORTED };
	/* Registers come from the sigframe: nothing else to describe. */
	if (x->f->cie->signal) {
		r->cfa_type = UST_CFI_CFA_SIGNAL;
		return;
	}
	if (ra->kind == R_UNDEF || ra->kind == R_UNSPEC) {
		r->cfa_type = UST_CFI_CFA_END;
		return;
	}
	if (ra->kind != R_OFFSET || ra->off != -8)
		return;
	cfa_rule(&x->cur, r);
	if (ust_cfi_rule_cfa_only(r))
		return;
	saved_rule(&x->cur.r[S_RBP], r, &r->rbp_type, &r->rbp_off);
	saved_rule(&x->cur.r[S_RBX], r, &r->rbx_type, &r->rbx_off);
}

/* --- running the program ------------------------------------------------ */

static int bad(struct exec *x, const char *what)
{
	return ust_cfi_fail(x->err, x->errsz, -EBADMSG, "corrupt %s: FDE at offset %#llx: %s",
			    x->l->name, (unsigned long long)x->f->sec_off, what);
}

/* The row [x->loc, to) ends: its part inside [lo, hi) to the callback. */
static int row_end(struct exec *x, uint64_t to)
{
	uint64_t a = x->loc > x->lo ? x->loc : x->lo;
	uint64_t b = to < x->hi ? to : x->hi;
	struct ust_cfi_rule r;

	if (a >= b)
		return 0;
	rule_of(x, &r);
	return x->fn(x->ctx, a, b, &r);
}

/* The location moves on by @delta code units (or to @to when @delta is ~0). */
static int advance(struct exec *x, uint64_t to, bool in_cie)
{
	int ret;

	if (in_cie)
		return 0;	/* a CIE's rows start where its FDE does: libdw ignores them too */
	if (to < x->loc)
		return bad(x, "its location moves backwards");
	if (to == x->loc)
		return 0;
	ret = row_end(x, to);
	x->loc = to;
	return ret;
}

static void set_reg(struct exec *x, uint64_t reg, uint8_t kind, int64_t off,
		    const uint8_t *e, uint64_t len)
{
	int k = slot(reg);

	if (k >= 0)
		x->cur.r[k] = (struct reg_rule){ .kind = kind, .off = off, .e = e, .len = len };
}

#define U(v)	do { if (ust_cfi_read_uleb(&p, end, &(v))) goto trunc; } while (0)
#define S(v)	do { if (ust_cfi_read_sleb(&p, end, &(v))) goto trunc; } while (0)

/* One program: a CIE's initial instructions (@in_cie) or an FDE's. */
static int run(struct exec *x, const uint8_t *p, const uint8_t *end, bool in_cie)
{
	const struct ust_cfi_cie *cie = x->f->cie;
	uint64_t reg, u, len, ca = cie->code_align;
	int64_t da = cie->data_align, sv;
	int ret = 0, k;

	while (p < end && x->loc < x->hi) {
		uint8_t op = *p++;

		switch (op & 0xc0) {
		case 0x40:		/* DW_CFA_advance_loc */
			ret = advance(x, x->loc + (op & 0x3f) * ca, in_cie);
			break;
		case 0x80:		/* DW_CFA_offset */
			U(u);
			set_reg(x, op & 0x3f, R_OFFSET, (int64_t)u * da, NULL, 0);
			break;
		case 0xc0:		/* DW_CFA_restore */
			if ((k = slot(op & 0x3f)) >= 0)
				x->cur.r[k] = x->init.r[k];
			break;
		default:
			switch (op) {
			case 0x00:	/* DW_CFA_nop */
				break;
			case 0x01: {	/* DW_CFA_set_loc */
				uint64_t field = x->l->sec_vaddr + (uint64_t)(p - x->l->sec_base);

				if (ust_cfi_read_encoded(&p, end, x->l->eh ? cie->enc : 0, field,
							 true, &u))
					goto trunc;
				ret = advance(x, u, in_cie);
				break;
			}
			case 0x02:	/* DW_CFA_advance_loc1 */
				if (end - p < 1)
					goto trunc;
				ret = advance(x, x->loc + p[0] * ca, in_cie);
				p += 1;
				break;
			case 0x03:	/* DW_CFA_advance_loc2 */
				if (end - p < 2)
					goto trunc;
				ret = advance(x, x->loc + (uint64_t)(p[0] | p[1] << 8) * ca, in_cie);
				p += 2;
				break;
			case 0x04:	/* DW_CFA_advance_loc4 */
				if (end - p < 4)
					goto trunc;
				u = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
				    (uint64_t)p[3] << 24;
				ret = advance(x, x->loc + u * ca, in_cie);
				p += 4;
				break;
			case 0x05:	/* DW_CFA_offset_extended */
				U(reg);
				U(u);
				set_reg(x, reg, R_OFFSET, (int64_t)u * da, NULL, 0);
				break;
			case 0x06:	/* DW_CFA_restore_extended */
				U(reg);
				if ((k = slot(reg)) >= 0)
					x->cur.r[k] = x->init.r[k];
				break;
			case 0x07:	/* DW_CFA_undefined */
				U(reg);
				set_reg(x, reg, R_UNDEF, 0, NULL, 0);
				break;
			case 0x08:	/* DW_CFA_same_value */
				U(reg);
				set_reg(x, reg, R_SAME, 0, NULL, 0);
				break;
			case 0x09:	/* DW_CFA_register */
				U(reg);
				U(u);
				set_reg(x, reg, R_REG, (int64_t)u, NULL, 0);
				break;
			case 0x0a:	/* DW_CFA_remember_state */
				if (x->depth == STATE_DEPTH)
					return bad(x, "DW_CFA_remember_state nested too deep");
				x->saved[x->depth++] = x->cur;
				break;
			case 0x0b:	/* DW_CFA_restore_state */
				if (!x->depth)
					return bad(x, "DW_CFA_restore_state without a remembered state");
				x->cur = x->saved[--x->depth];
				break;
			case 0x0c:	/* DW_CFA_def_cfa */
				U(reg);
				U(u);
				x->cur.cfa = CFA_REG;
				x->cur.cfa_reg = reg;
				x->cur.cfa_off = (int64_t)u;
				break;
			case 0x0d:	/* DW_CFA_def_cfa_register */
				U(reg);
				if (x->cur.cfa != CFA_REG)
					x->cur.cfa = CFA_INVALID;
				x->cur.cfa_reg = reg;
				break;
			case 0x0e:	/* DW_CFA_def_cfa_offset */
				U(u);
				if (x->cur.cfa != CFA_REG)
					x->cur.cfa = CFA_INVALID;
				x->cur.cfa_off = (int64_t)u;
				break;
			case 0x0f:	/* DW_CFA_def_cfa_expression */
				U(len);
				if (len > (uint64_t)(end - p))
					goto trunc;
				x->cur.cfa = CFA_EXPR;
				x->cur.cfa_e = p;
				x->cur.cfa_len = len;
				p += len;
				break;
			case 0x10:	/* DW_CFA_expression */
			case 0x16:	/* DW_CFA_val_expression */
				U(reg);
				U(len);
				if (len > (uint64_t)(end - p))
					goto trunc;
				set_reg(x, reg, op == 0x10 ? R_EXPR : R_VAL_EXPR, 0, p, len);
				p += len;
				break;
			case 0x11:	/* DW_CFA_offset_extended_sf */
				U(reg);
				S(sv);
				set_reg(x, reg, R_OFFSET, sv * da, NULL, 0);
				break;
			case 0x12:	/* DW_CFA_def_cfa_sf */
				U(reg);
				S(sv);
				x->cur.cfa = CFA_REG;
				x->cur.cfa_reg = reg;
				x->cur.cfa_off = sv * da;
				break;
			case 0x13:	/* DW_CFA_def_cfa_offset_sf */
				S(sv);
				if (x->cur.cfa != CFA_REG)
					x->cur.cfa = CFA_INVALID;
				x->cur.cfa_off = sv * da;
				break;
			case 0x14:	/* DW_CFA_val_offset */
				U(reg);
				U(u);
				set_reg(x, reg, R_VAL_OFFSET, (int64_t)u * da, NULL, 0);
				break;
			case 0x15:	/* DW_CFA_val_offset_sf */
				U(reg);
				S(sv);
				set_reg(x, reg, R_VAL_OFFSET, sv * da, NULL, 0);
				break;
			case 0x2e:	/* DW_CFA_GNU_args_size: not a rule */
				U(u);
				break;
			case 0x2f:	/* DW_CFA_GNU_negative_offset_extended */
				U(reg);
				U(u);
				set_reg(x, reg, R_OFFSET, -(int64_t)u * da, NULL, 0);
				break;
			default: {
				char what[64];

				snprintf(what, sizeof(what), "unknown instruction %#x", op);
				return bad(x, what);
			}
			}
		}
		if (ret)
			return ret;
	}
	return 0;
trunc:
	return bad(x, "an instruction runs past its end");
}

int ust_cfi_exec(const struct ust_cfi_fdes *l, const struct ust_cfi_fde *f, uint64_t lo,
		 uint64_t hi, ust_cfi_row_fn fn, void *ctx, char *err, size_t errsz)
{
	struct exec x = {
		.l = l, .f = f, .loc = f->start, .lo = lo, .hi = hi,
		.fn = fn, .ctx = ctx, .err = err, .errsz = errsz,
	};
	int ret;

	ret = run(&x, f->cie->insns, f->cie->insns_end, true);
	if (ret)
		return ret;
	if (x.depth)
		x.depth = 0;	/* a CIE's remembered states are not its FDEs' */
	x.init = x.cur;
	ret = run(&x, f->insns, f->insns_end, false);
	if (ret)
		return ret;
	return row_end(&x, f->end);
}
