/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_probe: what the running kernel offers for user-stack unwinding, each
 * answer with a one-line reason, for `ustitch probe` and for choosing the
 * recording path (native ftrace events, else BPF task_work, else BPF
 * immediate stacks).
 *
 * Probing loads nothing that stays: perf events and BPF programs opened to
 * ask are closed again; nothing in tracefs is written.
 */
#ifndef USTITCH_PROBE_H
#define USTITCH_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ust_probe_id {
	UST_PROBE_FTRACE_DEFERRED,	/* options/userstacktrace_delay + ftrace/user_unwind_* */
	UST_PROBE_PERF_DEFER,		/* perf_event_attr.defer_callchain */
	UST_PROBE_BTF,			/* /sys/kernel/btf/vmlinux */
	UST_PROBE_BPF_TRACEPOINT,	/* the unwinder's tracepoint programs load */
	UST_PROBE_BPF_TASK_WORK,	/* ... and its BPF task_work variant */
	UST_PROBE_BPF_FIND_VMA,		/* bpf_find_vma helper */
	UST_PROBE_BPF_TRACING,		/* fentry/fexit programs load */
	UST_PROBE_KPROBES,
	UST_PROBE_UPROBES,
	UST_PROBE__COUNT
};

#define UST_PROBE_REASON_MAX	256

struct ust_probe_item {
	const char *name;		/* stable, lower-case, no spaces */
	bool available;
	char reason[UST_PROBE_REASON_MAX];
};

struct ust_probe_report {
	struct ust_probe_item items[UST_PROBE__COUNT];
};

/* Run every probe.  Never fails: what cannot be probed is "no" with why. */
void ust_probe_run(struct ust_probe_report *r);

/* One probe on its own (@reason may be NULL). */
bool ust_probe_one(enum ust_probe_id id, char *reason, size_t len);

/*
 * Where UST_PROBE_PERF_DEFER is available: does the kernel also take
 * attr.defer_output (mainline 6.19+, where the deferred callchains go to
 * the events that set it), or is it the seed's interface (to the sampling
 * event itself)?
 */
bool ust_probe_perf_defer_output(void);

/* "name: yes|no — reason", one line each, in enum order.  Returns the
 * number of lines, or -EIO on a write error. */
int ust_probe_print(const struct ust_probe_report *r, FILE *out);

#endif
