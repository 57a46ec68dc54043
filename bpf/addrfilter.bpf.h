/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --addr-filter in BPF: perf's address-filter language (seed
 * 001_a69da2a8da120d5b.txt) applied in software, to tracepoint events
 * (lockheld.bpf.c: the UST_FILTER_OP_AF_* nodes of an event's decision graph)
 * and to perf samples (bpfu.bpf.c: ust_af_keep_sample() in front of the
 * perf_event programs).
 *
 * A file range holds an instruction pointer when the VMA that maps it is
 * that file (dev, inode) at that file offset: the test works in every
 * process that maps the file, at any address, as the kernel's own filters
 * do (they are re-resolved on mmap and exec; ours are never resolved).
 *
 * start/stop: a uprobe (file: ranges) or kprobe (kernel: ranges) at the
 * range's start flips the current task's switch; a task is off until its
 * first start, and so is each new thread (task storage is per thread).
 */
#ifndef UST_ADDRFILTER_BPF_H
#define UST_ADDRFILTER_BPF_H

#include "addrfilter_abi.h"
#include "bpfu_vma.bpf.h"

/* Set before load by lib/record/bpfu.c, for perf samples only. */
const volatile __u32 ust_af_nr;			/* ranges in ust_af_ranges */
const volatile bool ust_af_samples;		/* filter the perf samples */
const volatile bool ust_af_sample_filters;	/* ... by their filter ranges */
const volatile bool ust_af_sample_files;	/* ... some of them file: ranges */
const volatile bool ust_af_sample_switch;	/* ... and by the start/stop switch */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UST_AF_MAX_RANGES);
	__type(key, __u32);
	__type(value, struct ust_af_krange);
} ust_af_ranges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} ust_af_on SEC(".maps");

/* Where @ip lies in @task's address space: its VMA in @v, file offset in *@off. */
static __always_inline void ust_af_locate(struct task_struct *task, __u64 ip,
					  struct ust_bpfu_vma *v, __u64 *off)
{
	bpf_find_vma(task, ip, ust_bpfu_vma_cb, v, 0);
	if (v->found)
		*off = ip - v->start + (v->pgoff << 12);
}

/*
 * A perf sample interrupts with interrupts off, where bpf_find_vma() must
 * release the mmap lock through an irq_work: a self-IPI per sample, which
 * in a VM costs a VM exit (measured: about 15 us a sample).  So samples
 * keep the last VMA found per task while it stands (ust_bpfu_mm_seq()).
 */
struct ust_af_vcache {
	__u64 mm;
	__u32 seq;
	__u32 pad;
	struct ust_bpfu_vma v;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ust_af_vcache);
} ust_af_vcache SEC(".maps");

static __always_inline void ust_af_locate_cached(struct task_struct *task, __u64 ip,
						 struct ust_bpfu_vma *v, __u64 *off)
{
	struct ust_af_vcache *c;
	__u64 mm = 0;
	__u32 seq = 0;

	if (!ust_bpfu_mm_seq(task, &mm, &seq)) {
		ust_af_locate(task, ip, v, off);
		return;
	}
	c = bpf_task_storage_get(&ust_af_vcache, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (c && c->mm == mm && c->seq == seq && c->v.found &&
	    ip >= c->v.start && ip < c->v.end) {
		*v = c->v;
		*off = ip - v->start + (v->pgoff << 12);
		return;
	}
	ust_af_locate(task, ip, v, off);
	if (c && v->found) {
		c->mm = mm;
		c->seq = seq;
		c->v = *v;
	}
}

/* The user IP saved at kernel entry; 0 for a kernel thread. */
static __always_inline __u64 ust_af_entry_ip(struct task_struct *task)
{
	struct pt_regs *regs;

	if ((task->flags & PF_KTHREAD) || !task->mm)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	return regs ? BPF_CORE_READ(regs, ip) : 0;
}

/* Does file range @g hold the location (@v, @off)?  Anonymous memory: never. */
static __always_inline bool ust_af_in_file(const struct ust_af_krange *g,
					   const struct ust_bpfu_vma *v, __u64 off)
{
	return v->found && v->ino && !g->kernel && g->ino == v->ino && g->dev == v->dev &&
	       off >= g->start && off < g->end;
}

static __always_inline bool ust_af_switch(void)
{
	__u32 *on = bpf_task_storage_get(&ust_af_on, bpf_get_current_task_btf(), 0, 0);

	return on && *on;
}

/* Attached by lib/record/af_bpf.c as uprobes or, for kernel: ranges, kprobes. */
SEC("kprobe")
int ust_af_start(void *ctx __ust_unused)
{
	__u32 *on = bpf_task_storage_get(&ust_af_on, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (on)
		*on = 1;
	return 0;
}

SEC("kprobe")
int ust_af_stop(void *ctx __ust_unused)
{
	__u32 *on = bpf_task_storage_get(&ust_af_on, bpf_get_current_task_btf(), 0, 0);

	if (on)
		*on = 0;
	return 0;
}

/*
 * A perf sample passes when one filter range holds its IP (ORed, as perf
 * does) and its task's switch is on (when there are start/stop ranges).
 * The IP of a file: range is the sampled IP when the sample interrupted
 * user mode, else the user IP saved at the kernel entry the sample
 * interrupted; the IP of a kernel: range is the sampled IP in kernel mode.
 * The VMA lookup is a trylock of the mmap lock: a sample taken while it is
 * write-held elsewhere finds no file and fails the file ranges.
 */
static __always_inline bool ust_af_keep_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task;
	struct ust_bpfu_vma v = {};
	__u64 ip = ctx->regs.ip, uip, off = 0;
	bool user = (ctx->regs.cs & 3) == 3;
	__u32 i;

	if (!ust_af_samples)
		return true;
	if (ust_af_sample_switch && !ust_af_switch())
		return false;
	if (!ust_af_sample_filters)
		return true;
	if (ust_af_sample_files) {
		task = bpf_get_current_task_btf();
		uip = user ? ip : ust_af_entry_ip(task);
		if (uip)
			ust_af_locate_cached(task, uip, &v, &off);
	}
	for (i = 0; i < UST_AF_MAX_RANGES && i < ust_af_nr; i++) {
		__u32 k = i;
		struct ust_af_krange *g = bpf_map_lookup_elem(&ust_af_ranges, &k);

		if (!g || g->action != UST_AF_KR_FILTER)
			continue;
		if (g->kernel ? !user && ip >= g->start && ip < g->end : ust_af_in_file(g, &v, off))
			return true;
	}
	return false;
}

#endif /* UST_ADDRFILTER_BPF_H */
