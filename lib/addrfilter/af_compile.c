// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_af_kernel_filter / ust_af_prepend: --addr-filter as nodes of the filters'
 * decision graph (ustitch/filter.h).  The address tests go in front of
 * the event's own graph: they are cheap, and most events fail them, so the
 * lock and field tests after them rarely run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/addrfilter.h"
#include "ustitch/filter.h"

int ust_af_kernel_filter(const struct ust_af *af)
{
	int i;

	for (i = 0; i < af->nr; i++)
		if (af->r[i].kernel && af->r[i].action == UST_AF_FILTER)
			return i;
	return -ENOENT;
}

int ust_af_prepend(const struct ust_af *af, struct ust_filter_graph *g, char *err, size_t errsz)
{
	struct ust_filter_insn in[UST_FILTER_MAX_INSNS];
	int nf = 0, sw = 0, k, i, j;

	/* Kernel filter ranges never hold an event's IP: refused before. */
	for (i = 0; i < af->nr; i++) {
		if (af->r[i].action != UST_AF_FILTER)
			sw = 1;
		else if (!af->r[i].kernel)
			nf++;
	}
	k = nf + sw;
	if (!k)
		return 0;
	if (k + g->nr > UST_FILTER_MAX_INSNS) {
		snprintf(err, errsz, "too complex: with the address filters, more than %d tests for BPF to evaluate",
			 UST_FILTER_MAX_INSNS);
		return -E2BIG;
	}
	memset(in, 0, sizeof(in));
	/* Filter ranges: any one of them (ORed, as perf does). */
	for (i = 0, j = 0; i < af->nr; i++) {
		if (af->r[i].kernel || af->r[i].action != UST_AF_FILTER)
			continue;
		in[j].op = UST_FILTER_OP_AF_FILE;
		in[j].arg = (uint64_t)i;
		in[j].t = (uint8_t)(sw ? nf : UST_FILTER_NEXT);
		in[j].f = (uint8_t)(j + 1 < nf ? j + 1 : UST_FILTER_REJECT);
		j++;
	}
	if (sw) {
		in[nf].op = UST_FILTER_OP_AF_SWITCH;
		in[nf].t = UST_FILTER_NEXT;
		in[nf].f = UST_FILTER_REJECT;
	}
	return ust_filter_prepend(g, in, k);
}
