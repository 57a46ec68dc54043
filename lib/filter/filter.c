// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_filter: the decision graph of bpf/filter_abi.h, as the two filter
 * languages build it.  Prepending is how they compose: the address tests
 * of --addr-filter go in front of an event's lock_held() graph (cheap
 * tests first, most events fail them), so the tests after them rarely run.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ustitch/filter.h"
#include "ustitch/sb.h"

static uint8_t shift(uint8_t x, int k)
{
	return x == UST_FILTER_ACCEPT || x == UST_FILTER_REJECT ? x : (uint8_t)(x + k);
}

int ust_filter_prepend(struct ust_filter_graph *g, const struct ust_filter_insn *pre, int k)
{
	struct ust_filter_insn in[UST_FILTER_MAX_INSNS];
	uint8_t next = g->nr ? (uint8_t)k : UST_FILTER_ACCEPT;
	int i;

	if (k < 0 || k + g->nr > UST_FILTER_MAX_INSNS)
		return -E2BIG;
	memset(in, 0, sizeof(in));
	for (i = 0; i < k; i++) {
		in[i] = pre[i];
		if (in[i].t == UST_FILTER_NEXT)
			in[i].t = next;
		if (in[i].f == UST_FILTER_NEXT)
			in[i].f = next;
	}
	/* The graph's own nodes, their indexes moved past ours. */
	for (i = 0; i < g->nr; i++) {
		in[k + i] = g->insn[i];
		in[k + i].t = shift(g->insn[i].t, k);
		in[k + i].f = shift(g->insn[i].f, k);
	}
	g->nr += k;
	memcpy(g->insn, in, (size_t)g->nr * sizeof(in[0]));
	return 0;
}

bool ust_filter_has_op(const struct ust_filter_graph *g, unsigned int op)
{
	int i;

	for (i = 0; i < g->nr; i++)
		if (g->insn[i].op == op)
			return true;
	return false;
}

static void put_exit(struct ust_sb *sb, uint8_t x)
{
	if (x == UST_FILTER_ACCEPT)
		ust_sb_puts(sb, "accept");
	else if (x == UST_FILTER_REJECT)
		ust_sb_puts(sb, "reject");
	else
		ust_sb_printf(sb, "%u", x);
}

char *ust_filter_dump(const struct ust_filter_graph *g)
{
	static const char *const cmps[] = { "?", "==", "!=", "<", "<=", ">", ">=", "&" };
	static const char *const modes[] = { "", ":R", ":W", "" };
	struct ust_sb sb;
	int i;

	ust_sb_init(&sb);
	for (i = 0; i < g->nr; i++) {
		const struct ust_filter_insn *in = &g->insn[i];
		const char *m = modes[in->flags & UST_FILTER_M_ANY];

		ust_sb_printf(&sb, "%d: ", i);
		switch (in->op) {
		case UST_FILTER_OP_OWNER:
			ust_sb_printf(&sb, "owner 0x%" PRIx64 "%s", (uint64_t)in->arg, m);
			break;
		case UST_FILTER_OP_MMAP:
			ust_sb_printf(&sb, "mmap_lock%s", m);
			break;
		case UST_FILTER_OP_RCU:
			ust_sb_puts(&sb, "rcu");
			break;
		case UST_FILTER_OP_RCU_TRACE:
			ust_sb_puts(&sb, "rcu-trace");
			break;
		case UST_FILTER_OP_TRACKED:
			ust_sb_printf(&sb, "tracked 0x%" PRIx64 "%s", (uint64_t)in->arg, m);
			break;
		case UST_FILTER_OP_FIELD:
			ust_sb_printf(&sb, "field@%u/%u%s %s %" PRId64, in->off, in->size,
				      in->flags & UST_FILTER_F_SIGNED ? "s" : "",
				      cmps[in->cmp < 8 ? in->cmp : 0], (int64_t)in->arg);
			break;
		case UST_FILTER_OP_PID:
			ust_sb_printf(&sb, "pid %s %" PRId64, cmps[in->cmp < 8 ? in->cmp : 0],
				      (int64_t)in->arg);
			break;
		case UST_FILTER_OP_AF_FILE:		/* --addr-filter */
			ust_sb_printf(&sb, "user ip in range %" PRIu64, (uint64_t)in->arg);
			break;
		case UST_FILTER_OP_AF_KERNEL:
			ust_sb_printf(&sb, "kernel ip in range %" PRIu64, (uint64_t)in->arg);
			break;
		case UST_FILTER_OP_AF_SWITCH:
			ust_sb_puts(&sb, "switch on");
			break;
		}
		if (in->op < UST_FILTER_OP_FIELD)
			ust_sb_printf(&sb, " leaf %u%s", in->leaf,
				      in->flags & UST_FILTER_F_NEGATED ? " negated" : "");
		ust_sb_puts(&sb, " ? ");
		put_exit(&sb, in->t);
		ust_sb_puts(&sb, " : ");
		put_exit(&sb, in->f);
		ust_sb_puts(&sb, "\n");
	}
	return ust_sb_steal(&sb);
}
