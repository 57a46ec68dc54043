// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_compile: split a resolved lock_held() expression and compile the
 * part BPF evaluates into the decision graph of ustitch/filter.h.
 *
 * Splitting.  The top-level && chain is cut into conjuncts.  One without
 * lock_held() stays ftrace text, handed to the kernel unchanged
 * (PERF_EVENT_IOC_SET_FILTER).  One with lock_held() cannot be split
 * further: in "A || lock_held(x)" the ftrace term A decides only together
 * with the lock, so BPF evaluates it too, from the raw record at the
 * offsets of the event's format.  We chose that over refusing such
 * filters because numeric terms, the usual ones (gfp_flags & 0x400,
 * order > 2, common_pid == N), cost BPF one bounded read each; what BPF
 * cannot do (string and glob comparisons) is refused with the term's
 * column and the way out (keep it in a top-level && term).
 *
 * Graph.  compile(node, T, F) returns the entry of the code that goes to T
 * when the node is true and F when false: a leaf is one test with those
 * exits, && and || chain their operands' exits (short-circuit), ! swaps
 * them.  A node is emitted after the nodes it jumps to, so reversing the
 * emission order makes every jump go forward, which lets the BPF walk stop
 * after UST_FILTER_MAX_INSNS steps.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/lh.h"
#include "ustitch/sb.h"
#include "lockheld_abi.h"	/* the type tags */

_Static_assert((int)UST_LH_TYPE_MUTEX == UST_LH_T_MUTEX && (int)UST_LH_TYPE_SEMAPHORE == UST_LH_T_SEMAPHORE,
	       "lock types are the BPF type tags");

/* Exits while emitting: node indexes in emission order, or these. */
#define X_ACCEPT	(-1)
#define X_REJECT	(-2)

struct cc {
	const struct ust_lh_expr *e;
	const struct ust_lh_format *fmt;
	struct ust_lh_compiled *out;
	struct ust_filter_insn tmp[UST_FILTER_MAX_INSNS];
	int n;
	char *err;
	size_t errlen;
	bool failed;
	int code;		/* the first error's errno */
};

__attribute__((format(printf, 4, 5)))
static int cerr(struct cc *c, unsigned int col0, int code, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (c->failed)
		return -1;
	c->failed = true;
	c->code = code;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "column %u: %s", col0 + 1, msg);
	return -1;
}

static bool has_lock(const struct ust_lh_expr *e, int n)
{
	const struct ust_lh_node *nd = &e->nodes[n];

	switch (nd->kind) {
	case UST_LH_N_LOCK:
		return true;
	case UST_LH_N_TERM:
		return false;
	case UST_LH_N_NOT:
		return has_lock(e, nd->a);
	default:
		return has_lock(e, nd->a) || has_lock(e, nd->b);
	}
}

static int new_insn(struct cc *c, unsigned int col, int t, int f)
{
	struct ust_filter_insn *in;

	if (c->n >= UST_FILTER_MAX_INSNS)
		return cerr(c, col, E2BIG, "too complex: more than %d tests for BPF to evaluate",
			    UST_FILTER_MAX_INSNS);
	in = &c->tmp[c->n];
	memset(in, 0, sizeof(*in));
	/* Exits as emission indexes for now (fixed up in reverse()). */
	in->t = (uint8_t)(t < 0 ? (t == X_ACCEPT ? UST_FILTER_ACCEPT : UST_FILTER_REJECT) : t);
	in->f = (uint8_t)(f < 0 ? (f == X_ACCEPT ? UST_FILTER_ACCEPT : UST_FILTER_REJECT) : f);
	return c->n++;
}

static uint8_t mode_bits(enum ust_lh_mode m)
{
	return m == UST_LH_MODE_READ ? UST_FILTER_M_READ : m == UST_LH_MODE_WRITE ? UST_FILTER_M_WRITE :
	       UST_FILTER_M_ANY;
}

static int lock_insn(struct cc *c, const struct ust_lh_node *nd, uint8_t op, uint64_t arg,
		     uint8_t mode, bool neg, int t, int f)
{
	int i = new_insn(c, nd->start, t, f);

	if (i < 0)
		return -1;
	c->tmp[i].op = op;
	c->tmp[i].arg = arg;
	c->tmp[i].flags = (uint8_t)(mode | (neg ? UST_FILTER_F_NEGATED : 0));
	c->tmp[i].leaf = (uint32_t)nd->spec;
	return i;
}

static int compile_lock(struct cc *c, const struct ust_lh_node *nd, bool neg, int t, int f)
{
	struct ust_lh_spec *s = &c->e->specs[nd->spec];
	uint8_t m = mode_bits(s->mode);
	int second;

	if (nd->spec >= UST_LH_MAX_LEAVES)
		return cerr(c, nd->start, E2BIG, "more than %d lock_held() tests", UST_LH_MAX_LEAVES);
	c->out->families |= s->families;
	if (s->kind == UST_LH_S_SLAB)
		c->out->needs_track_slab = true;
	switch (s->mech) {
	case UST_LH_MECH_OWNER:
		return lock_insn(c, nd, UST_FILTER_OP_OWNER, s->addr, m, neg, t, f);
	case UST_LH_MECH_MMAP:
		if (s->mode != UST_LH_MODE_WRITE)
			c->out->mmap_read = true;
		return lock_insn(c, nd, UST_FILTER_OP_MMAP, 0, m, neg, t, f);
	case UST_LH_MECH_RCU:
		c->out->rcu = true;
		return lock_insn(c, nd, UST_FILTER_OP_RCU, 0, m, neg, t, f);
	case UST_LH_MECH_RCU_TRACE:
		return lock_insn(c, nd, UST_FILTER_OP_RCU_TRACE, 0, m, neg, t, f);
	case UST_LH_MECH_TRACK:
		break;
	case UST_LH_MECH_NONE:
		return cerr(c, nd->start, EINVAL, "%s is not resolved", s->text);
	}
	switch (s->kind) {
	case UST_LH_S_TYPE:
		return lock_insn(c, nd, UST_FILTER_OP_TRACKED, s->type, m, neg, t, f);
	case UST_LH_S_SIGLOCK:
		return lock_insn(c, nd, UST_FILTER_OP_TRACKED, UST_LH_WHAT_SIGLOCK, m, neg, t, f);
	case UST_LH_S_RCU:
		return lock_insn(c, nd, UST_FILTER_OP_TRACKED, UST_LH_T_RCU_GP, UST_FILTER_M_WRITE, neg, t, f);
	case UST_LH_S_SRCU:
		if (s->mode == UST_LH_MODE_READ)
			return lock_insn(c, nd, UST_FILTER_OP_TRACKED, UST_LH_T_SRCU, UST_FILTER_M_READ, neg, t, f);
		if (s->mode == UST_LH_MODE_WRITE)
			return lock_insn(c, nd, UST_FILTER_OP_TRACKED, UST_LH_T_SRCU_GP, UST_FILTER_M_WRITE,
					 neg, t, f);
		/* In a read section or in a grace-period wait: two tests, one leaf. */
		second = lock_insn(c, nd, UST_FILTER_OP_TRACKED, UST_LH_T_SRCU_GP, UST_FILTER_M_WRITE, neg, t, f);
		if (second < 0)
			return -1;
		return lock_insn(c, nd, UST_FILTER_OP_TRACKED, UST_LH_T_SRCU, UST_FILTER_M_READ, neg, t, second);
	default:
		return lock_insn(c, nd, UST_FILTER_OP_TRACKED, s->addr, m, neg, t, f);
	}
}

static int term_cmp(enum ust_lh_term_op op)
{
	switch (op) {
	case UST_LH_T_EQ:
		return UST_FILTER_EQ;
	case UST_LH_T_NE:
		return UST_FILTER_NE;
	case UST_LH_T_LT:
		return UST_FILTER_LT;
	case UST_LH_T_LE:
		return UST_FILTER_LE;
	case UST_LH_T_GT:
		return UST_FILTER_GT;
	case UST_LH_T_GE:
		return UST_FILTER_GE;
	case UST_LH_T_BAND:
		return UST_FILTER_BAND;
	case UST_LH_T_GLOB:
		break;
	}
	return 0;
}

/* Can BPF evaluate this term?  With @c->failed set and @c->err if not. */
static int check_term(struct cc *c, const struct ust_lh_node *nd, const struct ust_lh_field **fp,
		      uint64_t *val)
{
	const struct ust_lh_field *fl;
	char *end;

	*fp = NULL;
	if (nd->op == UST_LH_T_GLOB && !strcmp(nd->field, "common_pid"))
		return cerr(c, nd->start, EINVAL, "'common_pid ~ ...': BPF cannot evaluate glob matches");
	if (!strcmp(nd->field, "common_pid")) {
		*fp = NULL;
	} else {
		fl = c->fmt ? ust_lh_format_field(c->fmt, nd->field) : NULL;
		if (!fl)
			return cerr(c, nd->start, EINVAL, "event %s has no field '%s'",
				    c->fmt && c->fmt->name ? c->fmt->name : "?", nd->field);
		if (nd->op == UST_LH_T_GLOB)
			return cerr(c, nd->start, EINVAL, "'%s ~ ...': BPF cannot evaluate glob matches; keep the term outside the part with lock_held() (as its own && term it stays an ftrace filter)",
				    nd->field);
		if (fl->is_string || fl->is_array)
			return cerr(c, nd->start, EINVAL, "'%s' is %s: BPF compares numbers only; keep the term outside the part with lock_held() (as its own && term it stays an ftrace filter)",
				    nd->field, fl->is_string ? "a string" : "an array");
		if (fl->off < 8)
			return cerr(c, nd->start, EINVAL, "'%s': of the common fields BPF can test only common_pid",
				    nd->field);
		if (fl->size != 1 && fl->size != 2 && fl->size != 4 && fl->size != 8)
			return cerr(c, nd->start, EINVAL, "'%s' has size %u: not a number", nd->field, fl->size);
		*fp = fl;
	}
	if (nd->quoted)
		return cerr(c, nd->start, EINVAL, "'%s' is a number: compare it with a number, not \"%s\"",
			    nd->field, nd->value);
	errno = 0;
	*val = nd->value[0] == '-' ? (uint64_t)strtoll(nd->value, &end, 0) : strtoull(nd->value, &end, 0);
	if (errno || *end || end == nd->value)
		return cerr(c, nd->start, EINVAL, "'%s' is not a number", nd->value);
	return 0;
}

static int compile_term(struct cc *c, const struct ust_lh_node *nd, int t, int f)
{
	const struct ust_lh_field *fl;
	uint64_t val;
	int i;

	if (check_term(c, nd, &fl, &val))
		return -1;
	i = new_insn(c, nd->start, t, f);
	if (i < 0)
		return -1;
	c->tmp[i].cmp = (uint8_t)term_cmp(nd->op);
	c->tmp[i].arg = val;
	if (!fl) {
		c->tmp[i].op = UST_FILTER_OP_PID;
		c->tmp[i].size = 4;
		c->tmp[i].flags = UST_FILTER_F_SIGNED;
		return i;
	}
	c->tmp[i].op = UST_FILTER_OP_FIELD;
	c->tmp[i].off = (uint16_t)fl->off;
	c->tmp[i].size = (uint8_t)fl->size;
	c->tmp[i].flags = fl->is_signed ? UST_FILTER_F_SIGNED : 0;
	return i;
}

static int compile(struct cc *c, int n, bool neg, int t, int f)
{
	const struct ust_lh_node *nd = &c->e->nodes[n];
	int b;

	switch (nd->kind) {
	case UST_LH_N_AND:
		b = compile(c, nd->b, neg, t, f);
		return b < 0 ? -1 : compile(c, nd->a, neg, b, f);
	case UST_LH_N_OR:
		b = compile(c, nd->b, neg, t, f);
		return b < 0 ? -1 : compile(c, nd->a, neg, t, b);
	case UST_LH_N_NOT:
		return compile(c, nd->a, !neg, f, t);
	case UST_LH_N_LOCK:
		return compile_lock(c, nd, neg, t, f);
	case UST_LH_N_TERM:
		return compile_term(c, nd, t, f);
	}
	return -1;
}

/* Would BPF accept every term under @n?  (No error is kept.) */
static bool bpf_can(struct cc *c, int n)
{
	const struct ust_lh_node *nd = &c->e->nodes[n];
	const struct ust_lh_field *fl;
	bool failed = c->failed;
	uint64_t v;
	int r;

	switch (nd->kind) {
	case UST_LH_N_TERM:
		r = check_term(c, nd, &fl, &v);
		c->failed = failed;
		return r == 0;
	case UST_LH_N_NOT:
		return bpf_can(c, nd->a);
	case UST_LH_N_AND:
	case UST_LH_N_OR:
		return bpf_can(c, nd->a) && bpf_can(c, nd->b);
	case UST_LH_N_LOCK:
		return true;
	}
	return false;
}

static void conjuncts(const struct ust_lh_expr *e, int n, int *out, int *nr, int max)
{
	if (e->nodes[n].kind == UST_LH_N_AND) {
		conjuncts(e, e->nodes[n].a, out, nr, max);
		conjuncts(e, e->nodes[n].b, out, nr, max);
	} else if (*nr < max) {
		out[(*nr)++] = n;
	}
}

int ust_lh_compile(const struct ust_lh_expr *e, const struct ust_lh_format *fmt, bool bpf_all,
		   struct ust_lh_compiled *out, char *err, size_t errsz)
{
	struct cc c = { .e = e, .fmt = fmt, .out = out, .err = err, .errlen = errsz };
	int conj[256], nconj = 0, bpf[256], nbpf = 0, i, entry = X_ACCEPT;
	struct ust_sb ft;

	memset(out, 0, sizeof(*out));
	conjuncts(e, e->root, conj, &nconj, 256);
	ust_sb_init(&ft);
	for (i = 0; i < nconj; i++) {
		const struct ust_lh_node *nd = &e->nodes[conj[i]];

		if (has_lock(e, conj[i])) {
			bpf[nbpf++] = conj[i];
			continue;
		}
		ust_sb_printf(&ft, "%s%.*s", ft.len ? " && " : "", (int)(nd->end - nd->start),
			      e->src + nd->start);
		if (bpf_all && bpf_can(&c, conj[i]))
			bpf[nbpf++] = conj[i];
	}
	/* Last conjunct first: each one's "true" exit is the next one's entry. */
	for (i = nbpf - 1; i >= 0 && entry != -3; i--) {
		entry = compile(&c, bpf[i], false, entry, X_REJECT);
		if (entry < 0)
			entry = -3;
	}
	if (c.failed || ft.oom) {
		if (!c.failed)
			snprintf(err, errsz, "out of memory");
		ust_sb_fini(&ft);
		return c.failed ? -c.code : -ENOMEM;
	}
	out->ftrace = ft.len ? ust_sb_steal(&ft) : NULL;
	ust_sb_fini(&ft);
	/* Reverse: emission index k becomes n-1-k, so jumps go forward. */
	out->graph.nr = c.n;
	for (i = 0; i < c.n; i++) {
		struct ust_filter_insn in = c.tmp[i];

		if (in.t < UST_FILTER_MAX_INSNS)
			in.t = (uint8_t)(c.n - 1 - in.t);
		if (in.f < UST_FILTER_MAX_INSNS)
			in.f = (uint8_t)(c.n - 1 - in.f);
		out->graph.insn[c.n - 1 - i] = in;
	}
	out->nr_leaves = e->nr_specs;
	out->leaf_text = calloc((size_t)e->nr_specs + 1, sizeof(char *));
	out->leaf_negated = calloc((size_t)e->nr_specs + 1, sizeof(bool));
	if (!out->leaf_text || !out->leaf_negated) {
		ust_lh_compiled_free(out);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < e->nr_specs; i++)
		out->leaf_text[i] = ust_lh_leaf_text(e, i);
	for (i = 0; i < out->graph.nr; i++)
		if (out->graph.insn[i].op != UST_FILTER_OP_FIELD && out->graph.insn[i].op != UST_FILTER_OP_PID &&
		    (out->graph.insn[i].flags & UST_FILTER_F_NEGATED))
			out->leaf_negated[out->graph.insn[i].leaf] = true;
	return 0;
}

void ust_lh_compiled_free(struct ust_lh_compiled *c)
{
	int i;

	if (c->leaf_text)
		for (i = 0; i < c->nr_leaves; i++)
			free(c->leaf_text[i]);
	free(c->leaf_text);
	free(c->leaf_negated);
	free(c->ftrace);
	memset(c, 0, sizeof(*c));
}
