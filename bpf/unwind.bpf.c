// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Deferred user-stack unwinding in BPF, for kernels without the ftrace
 * userstacktrace_delay option: the same cookies and stacks the kernel
 * series produces (seed 004, patches 6, 8, 9), built from a tracepoint
 * program and a BPF task_work.
 *
 * ust_bpfu_event (attached to any number of tracepoints) gives each event a
 * cookie.  The first event of a kernel entry allocates it exactly as the
 * kernel's get_cookie() does and schedules a task_work; later events of the
 * same entry reuse it.  The task_work runs in the task before it returns to
 * user space, where faulting is allowed: it walks the user stack by the
 * CFI tables user space loads, by frame pointers where a file has none
 * (unwind_walk.bpf.h), turns each address into file offset / inode / dev_t as
 * trace_user_unwind_callback() does, emits one STACK record and clears the
 * cookie, so that the next entry gets a new one.
 *
 * System-call events (syscalls:sys_enter_NAME, sys_exit_NAME) are served
 * by two raw programs instead, ust_bpfu_sys_enter and ust_bpfu_sys_exit,
 * which test the system call's number against a set: a tracepoint
 * program on a system-call event runs inside perf's probe, which first
 * builds the perf record of the event (its fields, a copy of the
 * arguments) only to hand it to the program, and each event is its own
 * program run: with the programs themselves, 30 % of an entry's time.
 *
 * ust_bpfu_event_imm is the fallback for kernels without the task_work
 * kfuncs: a cookie and an immediate (non-faulting) stack for every event.
 *
 * ust_bpfu_perf does the same for perf sampling events (the backport of
 * perf's defer_callchain, seed 002): the sample's kernel entry gets its
 * cookie, sent as a SAMPLE record with the sample's ip and period so that
 * user space can pair it with perf's own sample.  Without task_work,
 * samples take perf's own immediate callchain instead (rec_perf.c).
 */
#include "ust_bpfu_kern.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "ust_bpfu_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set before load by lib/record/bpfu.c. */
const volatile bool ust_leaf_ret = true;
const volatile __u32 ust_ignore_tgid;	/* while ust_filter_on == 0 */
const volatile __u64 ust_rb_wake_bytes;	/* see ust_bpfu_rb_flags() */
/* Set at run time: nonzero once a tgid is in ust_bpfu_tgids. */
volatile __u32 ust_filter_on;
/* Set at run time, once ust_bpfu_sys_exit runs after every event program. */
volatile __u32 ust_exit_armed;
/*
 * Set at run time by ust_bpfu_attach(): the system calls whose sys_enter_*
 * / sys_exit_* events get cookies here, a bit per number.
 */
#define UST_BPFU_SC_WORDS	(UST_BPFU_NR_SYSCALLS / 64)
volatile __u64 ust_bpfu_sc_enter[UST_BPFU_SC_WORDS];
volatile __u64 ust_bpfu_sc_exit[UST_BPFU_SC_WORDS];

struct ust_bpfu_work {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by user space */
} ust_bpfu_events SEC(".maps");

/*
 * Bytes this CPU wrote to the ring since it last woke the reader (a
 * record's submit wakes it when they pass ust_rb_wake_bytes, set by user
 * space to an eighth of the ring over the CPUs).  Every wakeup is an
 * irq_work, a self-IPI and so a VM exit here, which costs more than the
 * whole record; the reader polls with a short timeout anyway.  Counted
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

/* The flags of a record of @size bytes: a wakeup or none. */
static __always_inline __u64 ust_bpfu_rb_flags(__u64 size)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&ust_bpfu_unwoken, &k);

	if (!n)
		return BPF_RB_FORCE_WAKEUP;
	*n += size;
	if (*n < ust_rb_wake_bytes)
		return BPF_RB_NO_WAKEUP;
	*n = 0;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * The task_work slot.  Not in task storage: the kernel accepts struct
 * bpf_task_work only in hash and array map values.  Keyed by tid, deleted
 * when the thread exits (ust_bpfu_exit).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct ust_bpfu_work);
} ust_bpfu_works SEC(".maps");

/*
 * tgids to follow; unused while ust_filter_on == 0 (every user task).
 * Entries leave when their thread group dies (ust_bpfu_exit).
 */
#include "tgids.bpf.h"

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

typedef int (*ust_bpfu_tw_cb)(struct bpf_map *map, void *key, void *value);

/*
 * Weak: a kernel without them still loads the object (libbpf leaves the
 * extern unresolved); user space then loads ust_bpfu_event_imm instead.
 */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw,
					      void *map__map, ust_bpfu_tw_cb callback,
					      void *aux__prog) __ksym __weak;

#define UST_COUNT(field)						\
	do {								\
		__u32 __k = 0;						\
		struct ust_bpfu_counters *__c;				\
									\
		__c = bpf_map_lookup_elem(&ust_bpfu_stats, &__k);	\
		if (__c)						\
			__sync_fetch_and_add(&__c->field, 1);		\
	} while (0)

/* Whether @task's events are ones to give a cookie to. */
static __always_inline bool ust_bpfu_follows(struct task_struct *task, __u32 tgid)
{
	if (ust_filter_on ? !bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid) : tgid == ust_ignore_tgid)
		return false;
	/* As patch 4 of the series: kernel threads have no user stack. */
	return !(task->flags & PF_KTHREAD) && task->mm;
}

/*
 * Returns current if the event is one to give a cookie to, else NULL, and
 * *@id, bpf_get_current_pid_tgid()'s value, read from the task: a helper
 * call less.  Every call and return counts on this x86 hardware
 * (retpolines, the return thunk of "safe RET").
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
	/* Atomic: a sleepable callback on this CPU may be preempted by us. */
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
 * Per CPU: a perf sample of a followed task got no SAMPLE record (ring
 * full, no task storage).  User space pairs samples and records by CPU
 * and time; the next record says a gap precedes it, so that an older
 * record is never taken for the missing one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ust_bpfu_sgap SEC(".maps");

static __always_inline void ust_bpfu_sample_gap(void)
{
	__u32 k = 0, *gap = bpf_map_lookup_elem(&ust_bpfu_sgap, &k);

	if (gap)
		*gap = 1;
}

static __always_inline void ust_bpfu_emit_sample(__u64 ts, __u32 cpu, __u64 id, __u64 cookie,
						 __u64 ip, __u64 period)
{
	__u32 k = 0, *gap = bpf_map_lookup_elem(&ust_bpfu_sgap, &k);
	struct ust_bpfu_rec_sample *r;

	r = bpf_ringbuf_reserve(&ust_bpfu_events, sizeof(*r), 0);
	if (!r) {
		UST_COUNT(drops);
		if (gap)
			*gap = 1;
		return;
	}
	r->h.kind = UST_BPFU_REC_SAMPLE;
	r->h.cpu = cpu;
	r->h.ts = ts;
	r->h.tid = (__u32)id;
	r->h.tgid = id >> 32;
	r->h.cookie = cookie;
	r->ip = ip;
	r->period = period;
	r->flags = gap && *gap ? UST_BPFU_S_DROPPED_BEFORE : 0;
	r->pad = 0;
	if (gap)
		*gap = 0;
	bpf_ringbuf_submit(r, ust_bpfu_rb_flags(sizeof(*r)));
	UST_COUNT(samples);
}

/* The event's request: a cookie record, or for a perf sample (@sample) a
 * SAMPLE record carrying the sample's ip and period. */
static __always_inline void ust_bpfu_emit_request(__u64 ts, __u32 cpu, __u64 id, __u64 cookie,
						  __u32 sample, __u64 ip, __u64 period)
{
	if (sample)
		ust_bpfu_emit_sample(ts, cpu, id, cookie, ip, period);
	else
		ust_bpfu_emit_cookie(ts, cpu, id, cookie);
}

struct ust_bpfu_vma {
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	__u32 dev;
	__u32 found;
};

static long ust_bpfu_vma_cb(struct task_struct *task __ust_unused, struct vm_area_struct *vma,
			    void *data)
{
	struct ust_bpfu_vma *v = data;
	struct file *file = vma->vm_file;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->ino = 0;
	v->dev = 0;
	if (file && file->f_inode) {
		v->ino = file->f_inode->i_ino;
		v->dev = file->f_inode->i_sb->s_dev;
	}
	v->found = 1;
	return 0;
}

/*
 * Whether VMAs found earlier are still the task's: the mm's mmap_lock write
 * sequence (mm->mm_lock_seq, 6.13+) is bumped by every write lock and
 * unlock and is odd while write-locked, and every change of the VMAs
 * happens under that lock.  A VMA found while the sequence was even, and
 * equal to now, still stands.  false: no such sequence (older kernels; an
 * int mm_lock_seq, or none) or locked now: look up again.
 */
struct seqcount___ust {
	unsigned int sequence;
} __attribute__((preserve_access_index));

struct mm_struct___ust {
	struct seqcount___ust mm_lock_seq;
} __attribute__((preserve_access_index));

static __always_inline bool ust_bpfu_mm_seq(struct task_struct *task, __u64 *mmp, __u32 *seq)
{
	struct mm_struct___ust *mm = (struct mm_struct___ust *)task->mm;

	if (!mm || !bpf_core_field_exists(mm->mm_lock_seq.sequence))
		return false;
	/* A plain load (of a BTF pointer): not a bpf_probe_read_kernel() call. */
	*seq = mm->mm_lock_seq.sequence;
	*mmp = (__u64)mm;
	return !(*seq & 1);
}

/* --addr-filter (uses ust_bpfu_vma_cb, ust_bpfu_mm_seq) */
#include "addrfilter.bpf.h"

/* The walk: CFI tables, frame pointers where a file has none. */
#include "unwind_walk.bpf.h"

struct ust_bpfu_task {
	__u64 cookie;		/* 0: no cookie in this entry yet */
	__u64 sp;		/* user sp and ip of the entry that got it */
	__u64 ip;
	__u64 sysnr;		/* and its system call number (orig_ax) */
	__u32 pending;		/* a work is scheduled and has not run yet */
	__u32 in_work;		/* the work runs: events now are of its entry */
	__u32 at_exit;		/* the system call's exit takes this entry's stack */
	__u32 pad;
	/* Where the task's walks build their records (unwind_walk.bpf.h). */
	struct ust_walk_task walk;
};

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

/*
 * The cookie lives with the task, like current->unwind_info.cookie, and so
 * does the walk's record: one storage lookup for both.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ust_bpfu_task);
} ust_bpfu_tasks SEC(".maps");

static __always_inline void ust_bpfu_fill_hdr(struct ust_bpfu_rec_stack *r, __u64 ts,
					      __u64 id, __u64 cookie)
{
	r->h.kind = UST_BPFU_REC_STACK;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.ts = ts;
	r->h.tid = (__u32)id;
	r->h.tgid = id >> 32;
	r->h.cookie = cookie;
}

/*
 * The walk storage of @task (@st, or looked up) for a walk starting now;
 * NULL if it cannot be had, or a walk of the task is under way (this is
 * an interrupt's).
 */
static __always_inline struct ust_walk_task *ust_bpfu_walk_begin(struct task_struct *task,
								struct ust_bpfu_task *st)
{
	if (!st)
		st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st || st->walk.busy)
		return NULL;
	st->walk.busy = 1;
	return &st->walk;
}

/* Send @t's record, as far as its frames go, and end the walk.  0 or -1. */
static __always_inline int ust_bpfu_walk_send(struct ust_walk_task *t, __u64 ts, __u64 id,
					      __u64 cookie)
{
	struct ust_bpfu_rec_stack *r = &t->r;
	__u32 nr = r->nr;
	__u64 size;
	long err;

	if (nr > UST_BPFU_MAX_FRAMES)
		nr = UST_BPFU_MAX_FRAMES;
	size = UST_BPFU_STACK_REC_SIZE(nr);
	ust_bpfu_fill_hdr(r, ts, id, cookie);
	err = bpf_ringbuf_output(&ust_bpfu_events, r, size, ust_bpfu_rb_flags(size));
	t->busy = 0;
	if (err) {
		UST_COUNT(drops);
		return -1;
	}
	UST_COUNT(stacks);
	return 0;
}

/*
 * The non-faulting stack of the event's own context (no task_work on this
 * kernel, deferral refused, task exit): the same walk as the deferred one,
 * with page faults disabled.
 */
static __always_inline void ust_bpfu_emit_immediate(void *ctx __ust_unused, struct task_struct *task,
						    __u64 id, __u64 cookie, __u32 flags)
{
	__u64 ts = bpf_ktime_get_ns();
	struct ust_walk_task *t = ust_bpfu_walk_begin(task, NULL);

	if (!t) {
		UST_COUNT(drops);
		return;
	}
	t->r.flags = flags | UST_BPFU_F_IMMEDIATE;
	ust_walk(t, task, (struct pt_regs *)bpf_task_pt_regs(task), false, false);
	ust_bpfu_walk_send(t, ts, id, cookie);
}

static __always_inline void ust_bpfu_emit_deferred(struct task_struct *task, __u64 id,
						   struct ust_bpfu_task *st, __u64 cookie)
{
	__u64 ts = bpf_ktime_get_ns();
	struct ust_walk_task *t = ust_bpfu_walk_begin(task, st);
	struct pt_regs *regs;

	if (!t) {
		UST_COUNT(drops);
		return;
	}
	t->r.flags = 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	/*
	 * The work was queued after the task had left (its irq_work ran too
	 * late) and runs at the end of a later entry with no event: these
	 * are that entry's frames.  (An execve() returns to the new
	 * program's first instruction: that is its entry's stack.)
	 */
	if (!ust_bpfu_same_entry(st, regs)) {
		t->r.flags |= UST_BPFU_F_LATE;
		UST_COUNT(late);
	}
	ust_walk(t, task, regs, true, false);
	ust_bpfu_walk_send(t, ts, id, cookie);
}

/* The task_work: in the task, after the event's kernel work, before user space. */
static int ust_bpfu_work_cb(struct bpf_map *map __ust_unused, void *key __ust_unused,
			    void *value __ust_unused)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_task *st;
	__u64 cookie;

	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	if (st)
		st->pending = 0;
	if (!st || !st->cookie) {
		UST_COUNT(orphan);
		return 0;
	}
	/*
	 * The walk may fault, and the fault's events are of this same entry:
	 * they must get this cookie, not make a new one (in_work).
	 */
	cookie = st->cookie;
	st->in_work = 1;
	ust_bpfu_emit_deferred(task, bpf_get_current_pid_tgid(), st, cookie);
	st->in_work = 0;
	/* unwind_exit_to_user_mode(): the next entry gets a new cookie. */
	if (st->cookie == cookie)
		st->cookie = 0;
	return 0;
}

static __always_inline int ust_bpfu_schedule(struct task_struct *task, __u32 tid)
{
	struct ust_bpfu_work zero = {}, *w;

	w = bpf_map_lookup_elem(&ust_bpfu_works, &tid);
	if (!w) {
		bpf_map_update_elem(&ust_bpfu_works, &tid, &zero, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&ust_bpfu_works, &tid);
		if (!w)
			return -1;
	}
	return bpf_task_work_schedule_resume_impl(task, &w->tw, &ust_bpfu_works,
						  ust_bpfu_work_cb, 0);
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

/*
 * The cookie of @task's current kernel entry: the first event of an entry
 * allocates it and schedules the task_work, later ones reuse it.  0 when
 * none can be had.  Shared with lockheld.bpf.c, whose filter calls it only
 * for the events it keeps.  *@now: in, the event is a sample of user code;
 * out, the caller is to take the new entry's stack now (ust_bpfu_walk_now()).
 */
static __always_inline __u64 ust_bpfu_take_cookie(void *ctx, struct task_struct *task,
						  __u64 id, __u32 cpu, __u32 *now)
{
	struct ust_bpfu_task *st;
	struct pt_regs *regs;
	__u64 cookie, sp, ip;
	__u32 user = *now;

	*now = 0;	/* 1 only where the caller is to walk the new entry's stack */
	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		UST_COUNT(no_storage);
		return 0;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	sp = regs->sp;
	ip = regs->ip;
	/*
	 * A cookie from an entry that went back to user space without its
	 * work having run (the work was queued too late): this is a new
	 * entry.  The work still pending will report this entry's stack,
	 * and the old cookie gets none.
	 */
	if (st->cookie && !st->in_work && !ust_bpfu_same_entry(st, regs)) {
		UST_COUNT(stale);
		st->cookie = 0;
	}
	if (st->cookie)
		return st->cookie;
	cookie = ust_bpfu_new_cookie(cpu);
	if (!cookie)
		return 0;
	UST_COUNT(cookies);
	st->cookie = cookie;
	st->sp = sp;
	st->ip = ip;
	st->sysnr = regs->orig_ax;
	st->at_exit = 0;
	if (st->pending)
		return cookie;
	/*
	 * In a system call's body, the stack is the same at its exit: the
	 * sys_exit program takes it there, after every event of the entry,
	 * with no task_work (an irq_work, a self-IPI: a VM exit here).
	 * Anything else (interrupts, faults, events after the system call's
	 * return value is set) goes by task_work.
	 */
	if (ust_exit_armed && ust_bpfu_in_syscall_body(regs)) {
		st->at_exit = 1;
		return cookie;
	}
	/*
	 * A sample that interrupted user code: the interrupt is the entry,
	 * and the stack at its return to user space is the one interrupted.
	 * The caller walks it now, after the request (ust_bpfu_walk_now()),
	 * with no task_work either.
	 */
	if (user && ust_exit_armed) {
		*now = 1;
		return cookie;
	}
	if (ust_bpfu_schedule(task, (__u32)id) == 0) {
		st->pending = 1;
		return cookie;
	}
	/* No work will clear it: this entry's stack now, then forget it. */
	UST_COUNT(sched_fail);
	st->cookie = 0;
	ust_bpfu_emit_immediate(ctx, task, id, cookie, UST_BPFU_F_SCHED_FAIL);
	return cookie;
}

/*
 * The stack of an entry, walked now without faulting: at its system call's
 * exit (the event's semantics: once per entry, after all its events, the
 * full user stack), or at a sample that interrupted user code.  0: emitted;
 * -1: a read would have faulted (or the mmap lock was busy, or this
 * interrupts a walk of the task), nothing emitted.
 */
static __always_inline int ust_bpfu_emit_now(struct task_struct *task, struct ust_bpfu_task *st,
					     struct pt_regs *regs, __u64 id, __u64 cookie,
					     __u32 flags)
{
	__u64 ts = bpf_ktime_get_ns();
	struct ust_walk_task *t = ust_bpfu_walk_begin(task, st);

	if (!t)
		return -1;	/* the task_work's walk, later */
	t->r.flags = flags;
	ust_walk(t, task, regs, false, true);
	/*
	 * A VMA not found because another thread held the mmap lock for
	 * writing (bpf_find_vma() only tries the lock) is a frame with no
	 * file, then a frame-pointer guess: the task_work, later, does
	 * better.
	 */
	if (t->r.flags & (UST_BPFU_F_FAULT | UST_BPFU_F_RAW)) {
		t->busy = 0;
		return -1;
	}
	ust_bpfu_walk_send(t, ts, id, cookie);
	return 0;	/* a drop included: user space sees it, no second try */
}

/*
 * @st's entry's stack now (ust_bpfu_stack_now()); where a read would fault
 * (or the mmap lock was busy), the task_work takes it, on the way back to
 * user space, as for any other entry (and without task_work, the
 * immediate walk): ust_bpfu_stack_later().  0: walked now; -1: left to the
 * task_work.
 */
static __always_inline int ust_bpfu_stack_later(void *ctx, struct task_struct *task,
						struct ust_bpfu_task *st, __u64 id, __u64 cookie)
{
	if (st->pending)
		return -1;
	if (ust_bpfu_schedule(task, (__u32)id) == 0) {
		st->pending = 1;
		return -1;
	}
	UST_COUNT(sched_fail);
	st->cookie = 0;
	ust_bpfu_emit_immediate(ctx, task, id, cookie, UST_BPFU_F_SCHED_FAIL);
	return -1;
}

static __always_inline int ust_bpfu_stack_now(void *ctx, struct task_struct *task,
					      struct ust_bpfu_task *st, __u64 id, __u64 cookie)
{
	if (ust_bpfu_emit_now(task, st, (struct pt_regs *)bpf_task_pt_regs(task), id, cookie, 0) == 0) {
		st->cookie = 0;		/* the next entry gets a new one */
		return 0;
	}
	return ust_bpfu_stack_later(ctx, task, st, id, cookie);
}

/* The stack of a sample that interrupted user code (ust_bpfu_take_cookie()). */
static __always_inline void ust_bpfu_walk_now(void *ctx, struct task_struct *task, __u64 id,
					      __u64 cookie)
{
	struct ust_bpfu_task *st;

	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	if (!st)
		return;
	if (ust_bpfu_stack_now(ctx, task, st, id, cookie) == 0)
		UST_COUNT(sample_walks);
	else
		UST_COUNT(sample_faults);
}

/*
 * One event's request: @sample says it is a perf sample, with its @ip and
 * @period (ust_bpfu_sample), and @user that it interrupted user code.
 * @imm: the fallback without task_work, where every event gets its own
 * cookie and stack, taken now.
 */
static __always_inline int ust_bpfu_request(void *ctx, struct task_struct *task, __u64 id,
					    __u32 sample, __u64 ip, __u64 period, __u32 imm,
					    __u32 user)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 cookie, ts = bpf_ktime_get_ns();

	UST_COUNT(events);
	if (imm) {
		cookie = ust_bpfu_new_cookie(cpu);
		if (cookie)
			UST_COUNT(cookies);
	} else {
		cookie = ust_bpfu_take_cookie(ctx, task, id, cpu, &user);
	}
	if (!cookie) {
		if (sample)
			ust_bpfu_sample_gap();
		return 0;
	}
	ust_bpfu_emit_request(ts, cpu, id, cookie, sample, ip, period);
	if (imm)
		ust_bpfu_emit_immediate(ctx, task, id, cookie, 0);
	else if (user)
		ust_bpfu_walk_now(ctx, task, id, cookie);
	return 0;
}

/* ust_bpfu_request() for the current task, if it is one to follow. */
static __attribute__((noinline)) int ust_bpfu_event_body(void *ctx, __u32 sample, __u64 ip,
							 __u64 period, __u32 imm, __u32 user)
{
	struct task_struct *task;
	__u64 id;

	task = ust_bpfu_current(&id);
	return task ? ust_bpfu_request(ctx, task, id, sample, ip, period, imm, user) : 0;
}

/*
 * A tracepoint program's return value decides whether perf records the
 * event for the perf users of that tracepoint: 1 leaves them unaffected.
 */
SEC("tracepoint")
int ust_bpfu_event(void *ctx)
{
	ust_bpfu_event_body(ctx, 0, 0, 0, 0, 0);
	return 1;
}

/*
 * A tracepoint program's return value decides whether perf records the
 * event for the perf users of that tracepoint: 1 leaves them unaffected.
 */
SEC("tracepoint")
int ust_bpfu_event_imm(void *ctx)
{
	ust_bpfu_event_body(ctx, 0, 0, 0, 1, 0);
	return 1;
}

/*
 * Perf sampling events (ust_bpfu_attach_perf()): the sample's kernel
 * entry gets a cookie like any event's, the task_work unwinds the user
 * stack before the return to user space.  A sample of a CPU-bound task
 * interrupts user mode: the entry is the interrupt itself, and the work
 * runs on its way out.  Returning 1 keeps perf's own sample.
 */
SEC("perf_event")
int ust_bpfu_perf(struct bpf_perf_event_data *ctx)
{
	/* A sample --addr-filter drops needs no stack: no cookie either. */
	if (!ust_af_keep_sample(ctx))
		return 0;
	/* cs's privilege level: 3 is user code. */
	ust_bpfu_event_body(ctx, 1, ctx->regs.ip, ctx->sample_period, 0, (ctx->regs.cs & 3) == 3);
	return 1;
}

/* --addr-filter alone, for samples whose stacks BPF does not make. */
SEC("perf_event")
int ust_bpfu_perf_af(struct bpf_perf_event_data *ctx)
{
	return ust_af_keep_sample(ctx);
}

/*
 * A system call ftrace gives syscalls:* events: the 64-bit ones only
 * (trace_get_syscall_nr(): a 32-bit task's numbers are another table's,
 * and x32's have bit 30 set, beyond any set here).
 */
struct thread_info___ust {
	__u32 status;
} __attribute__((preserve_access_index));

struct task_struct___ust {
	struct thread_info___ust thread_info;
} __attribute__((preserve_access_index));

#define UST_TS_COMPAT	0x0002	/* x86: in a 32-bit system call */

static __always_inline bool ust_bpfu_sc_in(volatile __u64 *set, __u64 nr)
{
	return nr < UST_BPFU_NR_SYSCALLS && ((set[nr >> 6] >> (nr & 63)) & 1);
}

static __always_inline bool ust_bpfu_compat(struct task_struct *t)
{
	struct task_struct___ust *task = (void *)t;

	return bpf_core_field_exists(task->thread_info.status) &&
	       (task->thread_info.status & UST_TS_COMPAT);
}

/*
 * The sys_enter_* events of the set: attached after ftrace enabled its
 * events, so that ftrace's probe on this tracepoint runs first and each
 * event's record is written before its cookie, as the kernel writes them.
 * raw_tp sys_enter's arguments: the user registers, the number.
 */
SEC("raw_tp/sys_enter")
int ust_bpfu_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task;
	__u64 id;

	if (!ust_bpfu_sc_in(ust_bpfu_sc_enter, ctx->args[1]))
		return 0;
	task = ust_bpfu_current(&id);
	if (task && !ust_bpfu_compat(task))
		ust_bpfu_request(ctx, task, id, 0, 0, 0, 0, 0);
	return 0;
}

/*
 * ftrace's event-fork for the tgid filter: a followed process's new child
 * processes are followed from their first instruction (the tracepoint
 * fires before the child is woken).  raw_tp because the format of
 * sched_process_fork changed (comm became __data_loc).
 */
SEC("raw_tp/sched_process_fork")
int ust_bpfu_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, ctgid;
	__u8 one = 1;

	if (!ust_filter_on || !bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid))
		return 0;
	ctgid = BPF_CORE_READ(child, tgid);
	if (ctgid == tgid)	/* a thread: its group is followed already */
		return 0;
	if (bpf_map_update_elem(&ust_bpfu_tgids, &ctgid, &one, BPF_ANY))
		UST_COUNT(filter_full);
	else
		UST_COUNT(children);
	return 0;
}

/*
 * Every system call's exit, attached after every event program (so it
 * runs after the sys_exit events of the entry): first the cookie of this
 * system call's own sys_exit_* event if it is in the set, then the stack
 * of the entries that asked for it (at_exit).  Where a read would fault,
 * the task_work takes it, on the way to user space, as before.
 */
SEC("raw_tp/sys_exit")
int ust_bpfu_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task;
	struct ust_bpfu_task *st;
	struct pt_regs *regs;
	__u64 cookie, id;
	bool event, both;

	task = ust_bpfu_current(&id);
	if (!task)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	/* syscall_get_nr(), as ftrace's own sys_exit probe takes it. */
	event = ust_bpfu_sc_in(ust_bpfu_sc_exit, regs->orig_ax) && !ust_bpfu_compat(task);
	/*
	 * This system call's sys_exit_* event, and its entry's stack due
	 * here: one record says both, the cookie record and the stack record
	 * the kernel writes one after the other (UST_BPFU_F_REQUEST).
	 * Otherwise the event's request first, then the stack.
	 */
	both = event && st && st->cookie && st->at_exit && !st->in_work &&
	       ust_bpfu_same_entry(st, regs);
	if (event && !both) {
		ust_bpfu_request(ctx, task, id, 0, 0, 0, 0, 0);
		if (!st)	/* the request may have made it */
			st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	}
	if (!st || !st->cookie || !st->at_exit)
		return 0;
	cookie = st->cookie;
	st->at_exit = 0;
	if (both)
		UST_COUNT(events);
	if (ust_bpfu_emit_now(task, st, regs, id, cookie, both ? UST_BPFU_F_REQUEST : 0) == 0) {
		st->cookie = 0;		/* the next entry gets a new one */
		UST_COUNT(exit_walks);
		return 0;
	}
	/* Not now: the request alone, the stack by task_work later. */
	if (both)
		ust_bpfu_emit_cookie(bpf_ktime_get_ns(), bpf_get_smp_processor_id(), id, cookie);
	ust_bpfu_stack_later(ctx, task, st, id, cookie);
	UST_COUNT(exit_faults);
	return 0;
}

/*
 * A followed process runs a new program: user space loads the tables of
 * the program and the libraries ld.so will map for it while ld.so does
 * so, before the program's own first events, instead of when the walk
 * first meets each file.
 */
SEC("tracepoint/sched/sched_process_exec")
int ust_bpfu_exec(void *ctx __ust_unused)
{
	struct ust_bpfu_rec_hdr *r;
	__u64 id;

	if (!ust_cfi_on || !ust_bpfu_current(&id))
		return 0;
	r = bpf_ringbuf_reserve(&ust_bpfu_events, sizeof(*r), 0);
	if (!r) {
		UST_COUNT(drops);
		return 0;
	}
	r->kind = UST_BPFU_REC_EXEC;
	r->cpu = bpf_get_smp_processor_id();
	r->ts = bpf_ktime_get_ns();
	r->tid = (__u32)id;
	r->tgid = id >> 32;
	r->cookie = 0;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * A thread exiting with its work pending (exit_group, exit) never returns
 * to user space: deleting the slot cancels the work, so report that
 * entry's stack now (empty if the mm is already gone).  The last thread
 * of a group also takes its tgid out of the filter: the number may come
 * back as another process.
 */
SEC("tracepoint/sched/sched_process_exit")
int ust_bpfu_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_task *st;
	__u32 tid = (__u32)id, tgid = id >> 32;

	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	if (st)
		st->pending = 0;	/* cancelled by the delete below */
	if (st && st->cookie) {
		__u64 cookie = st->cookie;

		st->cookie = 0;
		UST_COUNT(exit_stacks);
		ust_bpfu_emit_immediate(ctx, task, id, cookie, UST_BPFU_F_EXIT);
	}
	bpf_map_delete_elem(&ust_bpfu_works, &tid);
	/* do_exit() decrements signal->live before this tracepoint. */
	if (ust_filter_on && task->signal->live.counter == 0)
		bpf_map_delete_elem(&ust_bpfu_tgids, &tgid);
	return 0;
}
