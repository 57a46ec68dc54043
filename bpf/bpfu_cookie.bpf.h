/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cookie of a kernel entry, as the kernel's unwind_deferred_request()
 * gives one (seed 004): the first event of an entry allocates it, later
 * events of the same entry reuse it, and the entry's user stack is taken
 * once, when the task goes back to user space.  The rules and their maps,
 * shared by the two objects that hand out cookies: the unwinder
 * (bpfu.bpf.c) and the lock_held() filter (lockheld.bpf.c), which shares
 * the unwinder's maps by fd, so that both draw from one sequence and one
 * task state.  Where the stack is taken is the unwinder's business
 * (ust_bpfu_take_cookie() says what the entry needs).
 */
#ifndef UST_BPFU_COOKIE_BPF_H
#define UST_BPFU_COOKIE_BPF_H

#include "ust_bpfu_abi.h"

/* Set before load by user space. */
const volatile __u32 ust_ignore_tgid;	/* while filter_on == 0: the recorder itself */
const volatile __u64 ust_rb_wake_bytes;	/* see ust_bpfu_rb_flags() */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_bpfu_run);
} ust_bpfu_run SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by user space */
} ust_bpfu_events SEC(".maps");

/*
 * Bytes this CPU wrote to the ring since it last woke the reader (a
 * record's submit wakes it when they pass ust_rb_wake_bytes, set by user
 * space to an eighth of the ring over the CPUs).  Every wakeup is an
 * irq_work, a self-IPI and so a VM exit in a guest, which costs more than
 * the whole record; the reader polls with a short timeout anyway.  Counted
 * per CPU and not by the ring's fill level: asking the ring for that is a
 * helper call per record, and a reader that fell behind kept the level
 * above every threshold (waking at every record, as once happened: 7.5 %
 * of a syscall-heavy workload's time went to the IPIs).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ust_bpfu_unwoken SEC(".maps");

/* The kernel's per-CPU unwind_ctx_ctr. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ust_bpfu_ctr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_bpfu_counters);
} ust_bpfu_stats SEC(".maps");

/*
 * tgids to follow; unused while filter_on == 0 (every user task).
 * Entries leave when their thread group dies.
 */
#include "tgids.bpf.h"

#define UST_COUNT(field)						\
	do {								\
		__u32 __k = 0;						\
		struct ust_bpfu_counters *__c;				\
									\
		__c = bpf_map_lookup_elem(&ust_bpfu_stats, &__k);	\
		if (__c)						\
			__sync_fetch_and_add(&__c->field, 1);		\
	} while (0)

/*
 * Kernel memory read by plain loads where the kernel can type a number as
 * a read-only pointer: bpf_rdonly_cast() (6.2+) is no call at all (the
 * verifier makes it a move), and a load through its pointer is one
 * instruction whose fault the JIT's exception table turns into 0, where
 * bpf_probe_read_kernel() is a helper call, and each costs 15 to 25 ns
 * where the kernel guards calls and returns (retpolines, return thunks).
 * Weak: on 6.1, which has no such kfunc, the callers read through the
 * helper (test bpf_rdonly_cast first).
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#define UST_KCAST(type, addr) \
	((type *)bpf_rdonly_cast((const void *)(addr), bpf_core_type_id_kernel(type)))

/*
 * System-call tracepoints may take page faults since 6.14: programs on
 * them run preemptible (migration off), and a PREEMPT kernel (Debian's
 * 7.x boots preempt=full) preempts them.  The kernel runs no program a
 * second time on a CPU while it is still running there, so another task
 * reaching it meanwhile is skipped: an event without its cookie, an entry
 * whose exit takes no stack, a lock_held() sample dropped.  So those
 * programs turn preemption off first, where the kernel has faultable
 * system-call tracepoints (user space sets ust_preempt_off: BTF's struct
 * tracepoint_ext) and the kfuncs (6.10+).  Only there: 6.10 to 6.12 (at
 * least) refuse a call of a global function with preemption off, and
 * their tracepoints never run a program preemptible anyway.
 */
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;
const volatile bool ust_preempt_off;

static __always_inline void ust_bpfu_preempt_off(void)
{
	if (ust_preempt_off && bpf_preempt_disable)
		bpf_preempt_disable();
}

static __always_inline void ust_bpfu_preempt_on(void)
{
	if (ust_preempt_off && bpf_preempt_enable)
		bpf_preempt_enable();
}

/* The walk's frame counts: a locked add each per walk, not one per frame. */
static __always_inline void ust_bpfu_walk_count(__u32 cfi_frames, __u32 fp_frames)
{
	__u32 k = 0;
	struct ust_bpfu_counters *c = bpf_map_lookup_elem(&ust_bpfu_stats, &k);

	if (!c)
		return;
	if (cfi_frames)
		__sync_fetch_and_add(&c->cfi_frames, cfi_frames);
	if (fp_frames)
		__sync_fetch_and_add(&c->fp_frames, fp_frames);
}

static __always_inline struct ust_bpfu_run *ust_bpfu_run_state(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&ust_bpfu_run, &k);
}

/*
 * ftrace's event-fork for the tgid filter: a followed process's new
 * child process is followed from its first instruction (sched_process_fork
 * fires before the child is woken).
 */
static __always_inline void ust_bpfu_follow_child(struct task_struct *child)
{
	struct ust_bpfu_run *run = ust_bpfu_run_state();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, ctgid;
	__u8 one = 1;

	if (!run || !run->filter_on || !bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid))
		return;
	ctgid = BPF_CORE_READ(child, tgid);
	if (ctgid == tgid)	/* a thread: its group is followed already */
		return;
	if (bpf_map_update_elem(&ust_bpfu_tgids, &ctgid, &one, BPF_ANY))
		UST_COUNT(filter_full);
	else
		UST_COUNT(children);
}

/*
 * The last thread of a group takes its tgid out of the filter: the number
 * may come back as another process.  do_exit() decrements signal->live
 * before sched_process_exit.
 */
static __always_inline void ust_bpfu_unfollow_exiting(struct task_struct *task)
{
	struct ust_bpfu_run *run = ust_bpfu_run_state();
	__u32 tgid = task->tgid;

	if (run && run->filter_on && task->signal->live.counter == 0)
		bpf_map_delete_elem(&ust_bpfu_tgids, &tgid);
}

/*
 * The flags of a record of @size bytes into a ring whose reader is woken
 * every @wake_bytes, counted per CPU in @unwoken (a one-entry per-CPU
 * array of __u64): a wakeup or none.
 */
static __always_inline __u64 ust_rb_flags(void *unwoken, __u64 wake_bytes, __u64 size)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(unwoken, &k);

	if (!n)
		return BPF_RB_FORCE_WAKEUP;
	*n += size;
	if (*n < wake_bytes)
		return BPF_RB_NO_WAKEUP;
	*n = 0;
	return BPF_RB_FORCE_WAKEUP;
}

/* The same for the unwinder's ring. */
static __always_inline __u64 ust_bpfu_rb_flags(__u64 size)
{
	return ust_rb_flags(&ust_bpfu_unwoken, ust_rb_wake_bytes, size);
}

/*
 * Whether @t is in a 32-bit system call (x86's TS_COMPAT): ftrace gives
 * syscalls:* events to the 64-bit ones only (trace_get_syscall_nr(): a
 * 32-bit task's numbers are another table's).
 */
struct thread_info___ust {
	__u32 status;
} __attribute__((preserve_access_index));

struct task_struct___ust {
	struct thread_info___ust thread_info;
} __attribute__((preserve_access_index));

#define UST_TS_COMPAT	0x0002

static __always_inline bool ust_bpfu_compat(struct task_struct *t)
{
	struct task_struct___ust *task = (void *)t;

	return bpf_core_field_exists(task->thread_info.status) &&
	       (task->thread_info.status & UST_TS_COMPAT);
}

/* Whether @task's events are ones to give a cookie to. */
static __always_inline bool ust_bpfu_follows(struct task_struct *task, __u32 tgid)
{
	struct ust_bpfu_run *run = ust_bpfu_run_state();

	if (!run)
		return false;
	if (run->filter_on ? !bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid) : tgid == ust_ignore_tgid)
		return false;
	/* As patch 4 of the series: kernel threads have no user stack. */
	return !(task->flags & PF_KTHREAD) && task->mm;
}

/*
 * Returns current if the event is one to give a cookie to, else NULL, and
 * *@id, bpf_get_current_pid_tgid()'s value, read from the task: a helper
 * call less.  Every call and return counts on x86 hardware with
 * retpolines and the return thunk of "safe RET".
 */
static __always_inline struct task_struct *ust_bpfu_current(__u64 *id)
{
	struct task_struct *task = bpf_get_current_task_btf();

	*id = (__u64)(__u32)task->tgid << 32 | (__u32)task->pid;
	return ust_bpfu_follows(task, task->tgid) ? task : NULL;
}

/* get_cookie(): CPU in the top 16 bits, the counter << 1, lowest bit 1. */
static __always_inline __u64 ust_bpfu_new_cookie(__u32 cpu)
{
	__u32 k = 0;
	__u64 *ctr, n;

	ctr = bpf_map_lookup_elem(&ust_bpfu_ctr, &k);
	if (!ctr)
		return 0;
	/* Atomic: a task_work's walk on this CPU may be preempted by us. */
	n = __sync_fetch_and_add(ctr, 1) + 1;
	return ((n << 1) & ((1ULL << 48) - 1)) | ((__u64)cpu << 48) | 1;
}

/* Built on the stack and copied: one helper call, not reserve and submit. */
static __always_inline void ust_bpfu_emit_cookie(__u64 ts, __u32 cpu, __u64 id, __u64 cookie)
{
	struct ust_bpfu_rec_cookie r = {
		.h.kind = UST_BPFU_REC_COOKIE,
		.h.cpu = cpu,
		.h.ts = ts,
		.h.tid = (__u32)id,
		.h.tgid = id >> 32,
		.h.cookie = cookie,
	};

	if (bpf_ringbuf_output(&ust_bpfu_events, &r, sizeof(r), ust_bpfu_rb_flags(sizeof(r))))
		UST_COUNT(drops);
}

/*
 * Where a task walks: the record it builds (only its frames are copied
 * to the ring) and the walk's own state in r.walk[] (bpfu_walk.bpf.h).
 */
struct ust_bpfu_walk_task {
	__u64 mm;		/* the VMA slots are this mm's, at this */
	__u32 seq;		/* mmap_lock sequence; mm 0: they are not */
	/*
	 * A walk of this task is using r.  Only an interrupt can start
	 * another (a perf sample's program), and it ends before the one it
	 * interrupted goes on: a plain flag is enough.
	 */
	__u32 busy;
	/*
	 * The last record could not go (the ring was full): user space has
	 * not got this task's last frames, so the next stack goes whole even
	 * where the memo served it, or a task whose stack never changes
	 * would lose every stack after one lost record.
	 */
	__u32 resend;
	__u64 sent;		/* stacks sent (r.seq of the last) */
	struct ust_bpfu_rec_stack r;
};

struct ust_bpfu_task {
	__u64 cookie;		/* 0: no cookie in this entry yet */
	__u64 sp;		/* user sp and ip of the entry that got it */
	__u64 ip;
	__u64 sysnr;		/* and its system call number (orig_ax) */
	__u32 pending;		/* a task_work is scheduled and has not run yet */
	__u32 in_work;		/* the task_work runs: events now are of its entry */
	__u32 at_exit;		/* the system call's exit takes this entry's stack */
	__u32 pad;
	struct ust_bpfu_walk_task walk;
};

/*
 * The cookie lives with the task, like current->unwind_info.cookie, and so
 * does the walk's record: one storage lookup for both.  Per task, not per
 * CPU: the task_work's walk may sleep.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ust_bpfu_task);
} ust_bpfu_tasks SEC(".maps");

#define UST_NR_EXECVE	59	/* x86-64 */
#define UST_NR_EXECVEAT	322

/*
 * Is @regs still the entry that took @st's cookie?  Its user registers
 * tell, except in execve(), which replaces them within the entry (from
 * start_thread() on) and leaves orig_ax alone.
 */
static __always_inline bool ust_bpfu_same_entry(const struct ust_bpfu_task *st,
						struct pt_regs *regs)
{
	__u64 nr = regs->orig_ax;

	if (st->sp == regs->sp && st->ip == regs->ip)
		return true;
	return nr == st->sysnr && (nr == UST_NR_EXECVE || nr == UST_NR_EXECVEAT);
}

#define UST_ENOSYS	38

/*
 * In a system call's body: entered by `syscall` (orig_ax is its number;
 * interrupts and exceptions leave a negative one) and its return value
 * not set yet (the entry code fills ax with -ENOSYS until then).
 */
static __always_inline bool ust_bpfu_in_syscall_body(struct pt_regs *regs)
{
	return (long)regs->orig_ax >= 0 && regs->ax == (__u64)-UST_ENOSYS;
}

/* What the entry of a new cookie needs (ust_bpfu_take_cookie()). */
enum ust_bpfu_act {
	UST_BPFU_ACT_NONE,	/* nothing: its stack is arranged already */
	UST_BPFU_ACT_EXIT,	/* the system call's exit takes it (ust_bpfu_sys_exit) */
	UST_BPFU_ACT_NOW,	/* walk it now: a sample that interrupted user code */
	UST_BPFU_ACT_LATER,	/* on the way back to user space: task_work, or now */
};

/* ust_bpfu_take_cookie()'s @how: what the event is. */
#define UST_BPFU_TC_USER	1	/* a sample that interrupted user code */
#define UST_BPFU_TC_ENTRY	2	/* the entry itself (raw sys_enter): no cookie can be its */

/*
 * The cookie of @task's current kernel entry (@st, its storage): the first
 * event of an entry allocates it, later ones reuse it.  0 when none can
 * be had.  @how: UST_BPFU_TC_* bits.  *@act: what the entry's stack
 * needs, for a new cookie.
 */
static __always_inline __u64 ust_bpfu_take_cookie(struct task_struct *task, struct ust_bpfu_task *st,
						  __u32 cpu, __u32 how, __u32 *act)
{
	struct ust_bpfu_run *run = ust_bpfu_run_state();
	struct pt_regs *regs;
	__u64 cookie;

	*act = UST_BPFU_ACT_NONE;
	if (!run)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	/*
	 * A cookie from an entry that went back to user space without its
	 * stack (a task_work queued too late): this is a new entry.  The
	 * work still pending will report this entry's stack, and the old
	 * cookie gets none.
	 */
	if (st->cookie && !st->in_work &&
	    ((how & UST_BPFU_TC_ENTRY) || !ust_bpfu_same_entry(st, regs))) {
		/*
		 * (At a system call's entry every cookie is an earlier entry's,
		 * whose exit was skipped by the kernel: the registers would not
		 * tell, a loop makes the same call from the same place.)
		 */
		UST_COUNT(stale);
		st->cookie = 0;
		st->at_exit = 0;
	}
	if (st->cookie)
		return st->cookie;
	cookie = ust_bpfu_new_cookie(cpu);
	if (!cookie)
		return 0;
	UST_COUNT(cookies);
	st->cookie = cookie;
	st->sp = regs->sp;
	st->ip = regs->ip;
	st->sysnr = regs->orig_ax;
	st->at_exit = 0;
	if (st->pending)
		return cookie;
	/*
	 * In a system call's body, the stack is the same at its exit: the
	 * sys_exit program takes it there, after every event of the entry,
	 * with no task_work (an irq_work, a self-IPI: a VM exit in a guest).
	 * Anything else (interrupts, faults, events after the system call's
	 * return value is set) goes later.
	 */
	if (run->exit_armed && ust_bpfu_in_syscall_body(regs)) {
		st->at_exit = 1;
		*act = UST_BPFU_ACT_EXIT;
		return cookie;
	}
	/*
	 * A sample that interrupted user code: the interrupt is the entry,
	 * and the stack at its return to user space is the one interrupted.
	 */
	*act = (how & UST_BPFU_TC_USER) && run->exit_armed ? UST_BPFU_ACT_NOW : UST_BPFU_ACT_LATER;
	return cookie;
}

#endif /* UST_BPFU_COOKIE_BPF_H */
