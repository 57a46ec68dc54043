/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel types lockheld*.bpf.c read, declared by hand as
 * ust_bpfu_kern.h does (see there why: no vmlinux.h at build time).  The
 * ___lh suffix keeps them apart from that header's declarations of the
 * same structs; libbpf drops it when it matches names against the running
 * kernel's BTF, so every field below is a CO-RE relocation.
 */
#ifndef UST_LH_KERN_H
#define UST_LH_KERN_H

typedef struct {
	long counter;
} atomic_long_t___lh;

struct mutex___lh {
	atomic_long_t___lh owner;	/* task_struct * | MUTEX_FLAGS (0x07) */
} __attribute__((preserve_access_index));

struct rw_semaphore___lh {
	atomic_long_t___lh count;
	atomic_long_t___lh owner;	/* writer, or last reader | RWSEM_READER_OWNED */
} __attribute__((preserve_access_index));

struct rt_mutex_base___lh {
	struct task_struct *owner;	/* | RT_MUTEX_HAS_WAITERS (0x01) */
} __attribute__((preserve_access_index));

struct mm_struct___lh {
	struct rw_semaphore___lh mmap_lock;
} __attribute__((preserve_access_index));

struct spinlock___lh {
	int unused;			/* only addresses of spinlocks are used */
};

struct sighand_struct___lh {
	struct spinlock___lh siglock;
} __attribute__((preserve_access_index));

struct task_struct___lh {
	struct mm_struct___lh *mm;
	struct sighand_struct___lh *sighand;
	int rcu_read_lock_nesting;	/* CONFIG_PREEMPT_RCU */
	int trc_reader_nesting;		/* CONFIG_TASKS_TRACE_RCU */
	char comm[16];
} __attribute__((preserve_access_index));

/*
 * preempt_count() of this CPU: x86 keeps it in the per-CPU pcpu_hot
 * (6.2 to 6.14), then in __preempt_count.  Untyped and weak: libbpf takes
 * the addresses from /proc/kallsyms (a per-CPU symbol's is its offset in
 * each CPU's area), so a kernel whose kallsyms lacks data symbols still
 * loads the program (a typed ksym would fail the load there); every
 * context then reads as the task's.
 */
struct pcpu_hot___lh {
	int preempt_count;
} __attribute__((preserve_access_index));

extern const void __per_cpu_offset __ksym __weak;
extern const void pcpu_hot __ksym __weak;
extern const void __preempt_count __ksym __weak;

/* include/linux/preempt.h */
#define UST_LH_SOFTIRQ_OFFSET	0x00000100
#define UST_LH_HARDIRQ_MASK	0x000f0000
#define UST_LH_NMI_MASK		0x00f00000

/* enum ust_lh_ctx (lockheld_abi.h) of the running code. */
static __always_inline __u32 ust_lh_ctx(void)
{
	__u64 base = 0, var = 0;
	__u32 pc = 0;

	if (!&__per_cpu_offset)
		return UST_LH_CTX_TASK;
	if (&__preempt_count)
		var = (__u64)&__preempt_count;
	else if (&pcpu_hot && bpf_core_type_exists(struct pcpu_hot___lh))
		var = (__u64)&pcpu_hot + bpf_core_field_offset(struct pcpu_hot___lh, preempt_count);
	if (!var || bpf_probe_read_kernel(&base, sizeof(base),
					  (const char *)&__per_cpu_offset +
					  bpf_get_smp_processor_id() * sizeof(__u64)) ||
	    bpf_probe_read_kernel(&pc, sizeof(pc), (const void *)(base + var)))
		return UST_LH_CTX_TASK;
	if (pc & UST_LH_NMI_MASK)
		return UST_LH_CTX_NMI;
	if (pc & UST_LH_HARDIRQ_MASK)
		return UST_LH_CTX_HARDIRQ;
	if (pc & UST_LH_SOFTIRQ_OFFSET)	/* serving softirqs, not just bh disabled */
		return UST_LH_CTX_SOFTIRQ;
	return UST_LH_CTX_TASK;
}

/*
 * A slot of ust_lh_spin whose lock reads unlocked (or cannot be read) is
 * stale: its release went unseen (lockheld_abi.h).  The filter does not
 * count it, and a take reuses it.
 */
static __always_inline bool ust_lh_spin_unlocked(__u64 lock)
{
	__u32 word = 0;

	return bpf_probe_read_kernel(&word, sizeof(word), (void *)lock) || !word;
}

/* kernel/locking/mutex.h, rwsem.c, rtmutex_common.h */
#define UST_LH_MUTEX_FLAGS		0x07ULL
#define UST_LH_RWSEM_READER_OWNED	0x01ULL
#define UST_LH_RWSEM_FLAGS		0x03ULL
#define UST_LH_RTMUTEX_FLAGS		0x01ULL

#endif /* UST_LH_KERN_H */
