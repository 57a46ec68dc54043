/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lock_held() filters: what user space (lib/lockheld/, lib/record/lh_*.c) hands the BPF filter
 * (lockheld.bpf.c) and what comes back.  Included by both sides; the
 * includer provides __u8.. __u64 (BPF: ust_bpfu_kern.h, user space:
 * <linux/types.h>).
 *
 * The decision graph these filters evaluate, and its program map value,
 * are filter_abi.h's (shared with --addr-filter).
 */
#ifndef UST_LH_ABI_H
#define UST_LH_ABI_H

#define UST_LH_MAX_PROGS	64	/* events with a lock_held() filter */
#define UST_LH_MAX_LEAVES	32	/* lock_held() leaves per filter: bits of a mask */

/*
 * Tracked-lock keys for types (UST_FILTER_OP_TRACKED with a small arg): no
 * kernel address is that small, so one map serves addresses, slab caches
 * and types.
 */
enum ust_lh_type_tag {
	UST_LH_T_MUTEX = 1,
	UST_LH_T_SPINLOCK,
	UST_LH_T_RWSEM,
	UST_LH_T_RWLOCK,
	UST_LH_T_RTMUTEX,
	UST_LH_T_PERCPU_RWSEM,
	UST_LH_T_SEMAPHORE,
	UST_LH_T_SRCU,
	UST_LH_T_RCU_GP,	/* in synchronize_rcu() / rcu_barrier(): rcu:W */
	UST_LH_T_SRCU_GP,	/* in synchronize_srcu() / srcu_barrier(): srcu:W */
	UST_LH_T__COUNT,
};

/* UST_FILTER_OP_TRACKED args computed in BPF: the address of current's lock. */
#define UST_LH_WHAT_SIGLOCK	0x100	/* &current->sighand->siglock */

/*
 * One per kept event, through a BPF ring buffer: the perf sample that
 * follows on the same CPU carries the record, this says which locks made
 * it pass and which cookie it got.  User space pairs them by CPU, tid and
 * time (the sample's time is taken after the program ran).
 */
struct ust_lh_hit {
	__u64 ts;		/* bpf_ktime_get_ns() when the filter ran */
	__u64 cookie;		/* deferred user stack cookie, 0: none */
	__u32 cpu;
	__u32 tid;
	__u32 mask;		/* matched lock leaves */
	__u32 slot;		/* which event's filter */
	char comm[16];		/* for the file's command lines */
};

/* Held-lock tracking map (lockheld_track.bpf.c writes, the filter reads). */
struct ust_lh_held_key {
	__u32 tid;
	__u32 pad;
	__u64 what;		/* lock address, kmem_cache address or type tag */
};

struct ust_lh_held_val {
	__u32 read;		/* times held shared */
	__u32 write;		/* times held exclusive */
};

/*
 * Spinlocks are tracked per CPU (map ust_lh_spin), not in ust_lh_held: a
 * spinlock holder runs with preemption off until it releases (non-RT
 * kernels), so the spinlocks held on a CPU are those of the task running
 * there, plus those of interrupts nested in it (lockdep counts these as
 * the task's too).  A context switch hands the run-queue lock from one
 * task to the next on the same CPU, which per-task keys cannot follow.
 * And a slot array needs no lock: updating a hash map from the spinlock
 * hooks takes the map's bucket spinlock, whose own hook then updates
 * another bucket, and two CPUs doing that in opposite orders deadlock
 * with interrupts off (seen on 6.12).
 *
 * Each slot notes the context that took the lock (task, softirq, hardirq,
 * NMI).  An interrupt that arrives while a hook runs has its own calls to
 * that hook skipped (the trampoline's recursion check), so it can leave a
 * lock it released in a slot; but an interrupt releases everything before
 * it returns, so a slot of a context above the current one is stale: it
 * is free to take and never counts.  A few releases in a long run go
 * unseen in task context too, so a slot whose lock reads unlocked is
 * stale as well: the filter does not count it, and a take reuses it
 * (else such slots would pile up until no lock found one).  Nested contexts only ever
 * return to the slot state they found, so plain stores suffice.
 */
#define UST_LH_SPIN_SLOTS	16

enum ust_lh_ctx {
	UST_LH_CTX_TASK,
	UST_LH_CTX_SOFTIRQ,
	UST_LH_CTX_HARDIRQ,
	UST_LH_CTX_NMI,
};

struct ust_lh_spin_slot {
	__u64 lock;		/* 0: free */
	__u64 cache;		/* its kmem_cache, for slab specs; 0: unknown */
	__u32 ctx;		/* enum ust_lh_ctx that took it */
	__u32 pad;
};

struct ust_lh_spin_cpu {
	struct ust_lh_spin_slot slot[UST_LH_SPIN_SLOTS];
};

/* lockheld_slab.bpf.c: a cache name's room, and how many caches to walk. */
#define UST_LH_SLAB_NAME	64
#define UST_LH_SLAB_MAX		8192

/*
 * System-call events kept without perf (ust_lh_sys_enter, ust_lh_sys_exit:
 * raw tracepoint programs): no sample follows the hit, which carries the
 * event's record itself, laid out as ftrace's syscalls:sys_enter_* (the
 * number at 8, the arguments from 16) and sys_exit_* (the number, ret at
 * 16).  A perf tracepoint event costs about what ftrace's whole kept event
 * does before a filter runs; a raw tracepoint costs a call.
 */
#define UST_LH_NR_SC		1024	/* system call numbers the raw path serves */
#define UST_LH_RAW_MAX		64	/* record bytes: 16 + 6 arguments */

struct ust_lh_hit_raw {
	struct ust_lh_hit h;
	__u32 len;		/* bytes of rec */
	__u32 pad;
	__u8 rec[UST_LH_RAW_MAX];
};

/* Per system call number, [0] its sys_enter event, [1] its sys_exit. */
struct ust_lh_sc {
	__u32 slot1[2];		/* the event's filter slot + 1; 0: not kept raw */
	__u16 type[2];		/* the event's ftrace id */
	__u32 nargs;		/* sys_enter's arguments (at most 6) */
};

/* Per-CPU counters (map ust_lh_stats), summed by user space. */
struct ust_lh_counters {
	__u64 runs;		/* filter runs */
	__u64 kept;		/* events kept */
	__u64 hit_drops;	/* kept, but the hit record did not fit */
	__u64 bad_prog;		/* no program for the slot or a malformed one */
	__u64 read_fail;	/* kernel reads that failed (evaluated as false) */
	__u64 raw_drops;	/* kept without perf, lost: the hits ring was full */
};

#endif /* UST_LH_ABI_H */
