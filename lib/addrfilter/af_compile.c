// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_af_check / ust_af_prepend: --addr-filter as nodes of the filters'
 * decision graph (ustitch/filter.h).  The address tests go in front of
 * the event's own graph: they are cheap, and most events fail them, so the
 * lock and field tests after them rarely run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "ustitch/addrfilter.h"
#include "ustitch/filter.h"
#include "addrfilter_abi.h"

/* BPF can attach kprobes: the kprobe PMU exists (what libbpf uses). */
static bool have_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe/type", F_OK);
}

int ust_af_check(const struct ust_af *af, int *bad, char *err, size_t errsz)
{
	int i;

	*bad = -1;
	if (af->nr > UST_AF_MAX_RANGES) {
		snprintf(err, errsz, "more than %d ranges", UST_AF_MAX_RANGES);
		return -E2BIG;
	}
	for (i = 0; i < af->nr; i++) {
		const struct ust_af_range *r = &af->r[i];

		/* A switch at a kernel address needs a probe there. */
		if (r->kernel && r->action != UST_AF_FILTER && !have_kprobes()) {
			*bad = i;
			snprintf(err, errsz, "start/stop at kernel addresses need kprobes: this kernel has none (no kprobe PMU in /sys/bus/event_source/devices)");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

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
