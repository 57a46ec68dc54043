/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What unwind.bpf.c sends to user space (lib/record/bpfu.c) through its ring
 * buffer.  Included by both sides: the includer provides __u32/__u64 (BPF:
 * ust_bpfu_kern.h, user space: <linux/types.h>).
 *
 * These records are not the ftrace records: lib/record/bpfu.c turns them
 * into the kernel's user_unwind_cookie / user_unwind_stack bytes.  They
 * carry what the ftrace records cannot (flags, tgid, the CPU of the
 * callback) and keep one fixed size per kind, because a BPF ring-buffer
 * reservation must have a constant size.
 */
#ifndef UST_BPFU_ABI_H
#define UST_BPFU_ABI_H

/* The kernel's deferred unwinder keeps up to 512; ftrace's old userstack
 * and bpf_get_stack() default to 127 (perf_event_max_stack). */
#define UST_BPFU_MAX_FRAMES	127
/* One spare slot: the immediate path inserts a frame after bpf_get_stack(). */
#define UST_BPFU_SLOTS		(UST_BPFU_MAX_FRAMES + 1)

enum ust_bpfu_rec_kind {
	UST_BPFU_REC_COOKIE = 1,
	UST_BPFU_REC_STACK = 2,
	UST_BPFU_REC_SAMPLE = 3,	/* the cookie of a perf sample (ust_bpfu_sample) */
};

/* STACK record flags. */
#define UST_BPFU_F_IMMEDIATE	(1U << 0)	/* taken in the event's context: no task_work */
#define UST_BPFU_F_SCHED_FAIL	(1U << 1)	/* task_work could not be scheduled (with IMMEDIATE) */
#define UST_BPFU_F_EXIT		(1U << 2)	/* task exited with the work pending (with IMMEDIATE) */
#define UST_BPFU_F_TRUNCATED	(1U << 3)	/* more than UST_BPFU_MAX_FRAMES frames */
#define UST_BPFU_F_RAW		(1U << 4)	/* some address left unresolved (mmap lock busy) */
#define UST_BPFU_F_LEAF_RET	(1U << 5)	/* frame 1 read at [sp]: frame 0 on a ret/entry */
#define UST_BPFU_F_LATE		(1U << 6)	/* work ran in a later entry: maybe not this stack */

struct ust_bpfu_rec_hdr {
	__u32 kind;		/* enum ust_bpfu_rec_kind */
	__u32 cpu;		/* bpf_get_smp_processor_id() when emitted */
	__u64 ts;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 tid;		/* the kernel's common_pid */
	__u32 tgid;
	__u64 cookie;
};

struct ust_bpfu_rec_cookie {
	struct ust_bpfu_rec_hdr h;
};

/* SAMPLE record flags. */
#define UST_BPFU_S_DROPPED_BEFORE (1U << 0)	/* a sample before this one on its CPU got no record */

/*
 * A perf sample's cookie.  The program runs in the sample's overflow
 * handler, so ip and period are the sample's own: user space pairs the
 * two by CPU, task, ip and period.
 */
struct ust_bpfu_rec_sample {
	struct ust_bpfu_rec_hdr h;
	__u64 ip;		/* the interrupted ip (PERF_SAMPLE_IP) */
	__u64 period;		/* PERF_SAMPLE_PERIOD */
	__u32 flags;		/* UST_BPFU_S_* */
	__u32 pad;
};

struct ust_bpfu_rec_stack {
	struct ust_bpfu_rec_hdr h;
	__u32 flags;		/* UST_BPFU_F_* */
	__u32 nr;		/* frames, <= UST_BPFU_MAX_FRAMES */
	__u64 offs[UST_BPFU_SLOTS];	/* file offset, or the address when no VMA */
	__u64 inodes[UST_BPFU_SLOTS];	/* 0: no VMA or anonymous */
	__u32 devs[UST_BPFU_SLOTS];	/* kernel dev_t, 0 likewise */
};

/* Per-CPU counters (map ust_bpfu_stats), summed by user space. */
struct ust_bpfu_counters {
	__u64 events;		/* events seen for followed user tasks */
	__u64 cookies;		/* cookies allocated (first event of an entry) */
	__u64 stacks;		/* STACK records emitted */
	__u64 drops;		/* ring-buffer reservations that failed */
	__u64 no_storage;	/* task storage unavailable: event ignored */
	__u64 sched_fail;	/* task_work not scheduled: immediate stack instead */
	__u64 late;		/* works that ran in a later kernel entry */
	__u64 stale;		/* cookies dropped: their work had not run by the next entry */
	__u64 orphan;		/* callback found no cookie */
	__u64 truncated;	/* stacks cut at UST_BPFU_MAX_FRAMES */
	__u64 vma_fail;		/* bpf_find_vma() errors other than "no VMA" */
	__u64 exit_stacks;	/* immediate stacks taken at task exit */
	__u64 children;		/* child processes followed (fork of a followed tgid) */
	__u64 filter_full;	/* child processes not followed: tgid map full */
	__u64 samples;		/* perf samples given a cookie (SAMPLE records) */
};

#endif /* UST_BPFU_ABI_H */
