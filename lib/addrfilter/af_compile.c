// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_af_check / ust_af_prepend: --addr-filter as nodes of the lock_held()
 * decision graph (bpf/lockheld_abi.h).  The address tests go in front of
 * the event's own graph: they are cheap, and most events fail them, so the
 * lock and field tests after them rarely run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "ustitch/lh.h"
#include "lockheld_abi.h"

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

static uint8_t shift(uint8_t x, int k)
{
	return x == UST_LH_ACCEPT || x == UST_LH_REJECT ? x : (uint8_t)(x + k);
}

int ust_af_prepend(const struct ust_af *af, struct ust_lh_compiled *c, char *err, size_t errsz)
{
	struct ust_lh_insn_u in[UST_LH_MAX_INSNS];
	int nf = 0, sw = 0, k, i, j, after;

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
	if (k + c->nr_insn > UST_LH_MAX_INSNS) {
		snprintf(err, errsz, "too complex: with the address filters, more than %d tests for BPF to evaluate",
			 UST_LH_MAX_INSNS);
		return -E2BIG;
	}
	memset(in, 0, sizeof(in));
	/* The event's own graph, its node indexes moved past ours. */
	for (i = 0; i < c->nr_insn; i++) {
		in[k + i] = c->insn[i];
		in[k + i].t = shift(c->insn[i].t, k);
		in[k + i].f = shift(c->insn[i].f, k);
	}
	after = c->nr_insn ? nf + sw : UST_LH_ACCEPT;
	/* Filter ranges: any one of them (ORed, as perf does). */
	for (i = 0, j = 0; i < af->nr; i++) {
		if (af->r[i].kernel || af->r[i].action != UST_AF_FILTER)
			continue;
		in[j].op = UST_LH_OP_AF_FILE;
		in[j].arg = (uint64_t)i;
		in[j].t = (uint8_t)(sw ? nf : after);
		in[j].f = (uint8_t)(j + 1 < nf ? j + 1 : UST_LH_REJECT);
		j++;
	}
	if (sw) {
		in[nf].op = UST_LH_OP_AF_SWITCH;
		in[nf].t = (uint8_t)after;
		in[nf].f = UST_LH_REJECT;
	}
	c->nr_insn += k;
	memcpy(c->insn, in, (size_t)c->nr_insn * sizeof(in[0]));
	return 0;
}
