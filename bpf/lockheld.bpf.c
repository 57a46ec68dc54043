// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lock_held() as a perf sample filter (ustitch record -f '... lock_held(X)').
 *
 * ust_lh_filter is a tracepoint program attached (with a BPF cookie naming
 * the event's slot) to the perf tracepoint events of the filtered events:
 * returning 0 drops the sample.  It walks the event's decision graph (see
 * filter_abi.h for why a graph in a map), and for a kept event sends a
 * ust_lh_hit (which lock leaves matched, the deferred-stack cookie) to user
 * space, which pairs it with the perf sample.
 *
 * Mechanisms, none with hooks on the lock functions:
 *  - owner inspection: a mutex, an rt_mutex or a write-locked rw_semaphore
 *    stores its owning task in ->owner (flag bits below the pointer);
 *  - mmap_lock: write side by owner inspection of current->mm->mmap_lock,
 *    read side counted per task from the mmap_lock:* tracepoints;
 *  - rcu: current->rcu_read_lock_nesting (CONFIG_PREEMPT_RCU) less what the
 *    BPF runtime itself holds (measured by ust_lh_calib at start);
 *    rcu-trace: current->trc_reader_nesting;
 *  - tracked locks: ust_lh_held, filled by lockheld_track.bpf.c (fentry /
 *    fexit on the lock functions) where the kernel allows tracing programs.
 *
 * User stacks of kept events: the cookie rules are the unwinder's
 * (bpfu_cookie.bpf.h), and so are its maps (user space reuses their fds),
 * so cookies and stacks are one sequence; the unwinder's own program takes
 * the stack, at the system call's exit or, through a tail call into its
 * ust_bpfu_later, on the way back to user space.  The unwinder itself is
 * not in this object: a filter that needs no stacks loads no walk.
 */
#include "ust_bpfu_kern.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bpfu_cookie.bpf.h"
#include "addrfilter.bpf.h"
#include "filter_abi.h"
#include "lockheld_abi.h"
#include "lockheld_kern.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Kept events get user stacks (the unwinder is loaded, ust_lh_stack set). */
const volatile bool ust_lh_stacks;
/* The mmap_lock read trackers are attached. */
const volatile bool ust_lh_mmap_track;
/*
 * The mmap_lock tracepoints' arguments are (mm, write, success) since
 * 6.13; before, a memcg_path string came second: 1 skips it (user space
 * reads the prototype from BTF).
 */
const volatile __u32 ust_lh_mmap_argoff;
/* lockheld_track.bpf.c fills ust_lh_held, and ust_lh_spin. */
const volatile bool ust_lh_tracking;
const volatile bool ust_lh_spin_tracking;

/* What the runtime's own rcu_read_lock() adds, set after ust_lh_calib. */
volatile __s32 ust_lh_rcu_bias = 1;
/* Calibration: the tid whose event to measure, and what it saw. */
volatile __u32 ust_lh_calib_tid;
volatile __s32 ust_lh_calib_rcu = -1000;
volatile __s32 ust_lh_calib_trc = -1000;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UST_LH_MAX_PROGS);
	__type(key, __u32);
	__type(value, struct ust_filter_prog);
} ust_lh_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* resized by user space */
} ust_lh_hits SEC(".maps");

#include "lockheld_maps.h"

struct ust_lh_mmap_state {
	__u64 mm;		/* the mm whose read holds are counted */
	__s32 read;		/* mmap_read_lock()s held */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ust_lh_mmap_state);
} ust_lh_mmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_lh_counters);
} ust_lh_stats SEC(".maps");

#define UST_LH_COUNT(field)						\
	do {								\
		__u32 __k = 0;						\
		struct ust_lh_counters *__c;				\
									\
		__c = bpf_map_lookup_elem(&ust_lh_stats, &__k);		\
		if (__c)						\
			__sync_fetch_and_add(&__c->field, 1);		\
	} while (0)

/*
 * What a node's test reads, numbers only: ust_lh_eval() is a global
 * function, and the verifier forgets any pointer kept in memory passed to
 * one.
 */
struct ust_lh_env {
	__u64 ctx;		/* the raw record (the program's context) */
	__u64 me;		/* current, as a number */
	__u32 tid;
	__u32 pad;
	struct ust_bpfu_vma af;	/* address filters: the user IP's VMA (af.found) */
	__u64 af_off;		/* its file offset */
};

struct ust_lh_run {
	struct ust_filter_prog *p;
	__u32 pc;
	__u32 mask;
	__u32 verdict;		/* 0: running, else UST_FILTER_ACCEPT or UST_FILTER_REJECT */
	__u32 pad;
	struct ust_lh_env e;
};

/*
 * The unwinder's ust_bpfu_later, put here by user space: the stack of a
 * kept event's entry, on the way back to user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ust_lh_stack SEC(".maps");

/* --- address filters (addrfilter.bpf.h) --------------------------------- */

/*
 * The user IP saved at kernel entry, as (dev, inode, file offset): looked
 * up once per event, before the walk, because bpf_find_vma() takes a
 * callback and the walk is one already.  A kernel thread has no user IP:
 * no file range holds it.
 */
static __always_inline void ust_af_user_ip(struct ust_lh_env *r)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ip = ust_af_entry_ip(task);

	if (ip)
		ust_af_locate(task, ip, &r->af, &r->af_off);
}

static __always_inline bool ust_af_file(struct ust_lh_env *r, __u64 idx)
{
	__u32 k = (__u32)idx;
	struct ust_af_krange *g = bpf_map_lookup_elem(&ust_af_ranges, &k);

	return g && ust_af_in_file(g, &r->af, r->af_off);
}


static __always_inline bool ust_lh_read8(__u64 addr, __u64 *v)
{
	if (bpf_probe_read_kernel(v, sizeof(*v), (void *)addr)) {
		UST_LH_COUNT(read_fail);
		return false;
	}
	return true;
}

/* The owner word of the rw_semaphore at @addr; 0 if it cannot be read. */
static __always_inline __u64 ust_lh_rwsem_owner(__u64 addr)
{
	__u64 w = 0;

	if (bpf_rdonly_cast)
		return UST_KCAST(struct rw_semaphore___lh, addr)->owner.counter;
	ust_lh_read8(addr + bpf_core_field_offset(struct rw_semaphore___lh, owner), &w);
	return w;
}

/* Owner word @w of a write-locked rw_semaphore owned by @me. */
static __always_inline bool ust_lh_rwsem_writer(__u64 w, __u64 me)
{
	return !(w & UST_LH_RWSEM_READER_OWNED) && (w & ~UST_LH_RWSEM_FLAGS) == me;
}

/* Whether the rt_mutex at @addr is owned by @me (its owner: a task | HAS_WAITERS). */
static __always_inline bool ust_lh_rtmutex_owned(__u64 addr, __u64 me)
{
	__u64 w;

	if (bpf_rdonly_cast) {
		/* A task pointer to the verifier: compared whole, never masked. */
		struct task_struct *o = UST_KCAST(struct rt_mutex_base___lh, addr)->owner;

		return o == (void *)me || o == (void *)(me | UST_LH_RTMUTEX_FLAGS);
	}
	return ust_lh_read8(addr + bpf_core_field_offset(struct rt_mutex_base___lh, owner), &w) &&
	       (w & ~UST_LH_RTMUTEX_FLAGS) == me;
}

/*
 * Is the lock at @addr owned by @me, as a mutex, an rt_mutex or a
 * write-locked rwsem?  The address does not say which it is: each layout's
 * owner word is read.  At the other layouts' owner offsets these locks keep
 * small counters or list and tree pointers, never a task pointer, so only
 * the right reading can equal current.
 */
static __always_inline bool ust_lh_owned(__u64 addr, __u64 me)
{
	__u64 w = 0;

	if (bpf_rdonly_cast)
		w = UST_KCAST(struct mutex___lh, addr)->owner.counter;
	else
		ust_lh_read8(addr + bpf_core_field_offset(struct mutex___lh, owner), &w);
	if ((w & ~UST_LH_MUTEX_FLAGS) == me)
		return true;
	if (ust_lh_rwsem_writer(ust_lh_rwsem_owner(addr), me))
		return true;
	return bpf_core_type_exists(struct rt_mutex_base___lh) && ust_lh_rtmutex_owned(addr, me);
}

static __always_inline bool ust_lh_mmap_held(struct ust_lh_env *r, __u8 mode)
{
	struct task_struct___lh *t = (void *)r->me;
	struct ust_lh_mmap_state *st;
	__u64 mm, lock;

	if (bpf_rdonly_cast) {
		struct mm_struct___lh *m = UST_KCAST(struct task_struct___lh, r->me)->mm;

		if (!m)
			return false;
		if ((mode & UST_FILTER_M_WRITE) &&
		    ust_lh_rwsem_writer(m->mmap_lock.owner.counter, r->me))
			return true;
		mm = (__u64)m;
	} else {
		mm = (__u64)BPF_CORE_READ(t, mm);
		if (!mm)
			return false;
		lock = mm + bpf_core_field_offset(struct mm_struct___lh, mmap_lock);
		if ((mode & UST_FILTER_M_WRITE) && ust_lh_rwsem_writer(ust_lh_rwsem_owner(lock), r->me))
			return true;
	}
	if (!(mode & UST_FILTER_M_READ) || !ust_lh_mmap_track)
		return false;
	st = bpf_task_storage_get(&ust_lh_mmap, bpf_get_current_task_btf(), 0, 0);
	return st && st->mm == mm && st->read > 0;
}

/*
 * A spinlock held on this CPU (always exclusive), by type, address or
 * slab cache.  Slots of a context above this one are stale
 * (lockheld_abi.h), and so is a slot whose lock is free now: its release
 * was not seen (the trampolines skip a hook that nests in itself, and a
 * few in a long run do).  The lock word of a spinlock_t or raw_spinlock_t
 * comes first (a qspinlock's, non-RT kernels): 0 is unlocked.  The stale
 * slot is freed on the way.
 */
static __always_inline bool ust_lh_spin_held(__u64 what)
{
	struct ust_lh_spin_cpu *c;
	__u32 k = 0, ctx;
	int i;

	if (!ust_lh_spin_tracking)
		return false;
	c = bpf_map_lookup_elem(&ust_lh_spin, &k);
	if (!c)
		return false;
	ctx = ust_lh_ctx();
	for (i = 0; i < UST_LH_SPIN_SLOTS; i++) {
		struct ust_lh_spin_slot *sl = &c->slot[i];
		__u64 lock = *(volatile __u64 *)&sl->lock;

		if (!lock || sl->ctx > ctx)
			continue;
		if (what != UST_LH_T_SPINLOCK && lock != what && sl->cache != what)
			continue;
		if (!ust_lh_spin_unlocked(lock))
			return true;
		*(volatile __u64 *)&sl->lock = 0;
	}
	return false;
}

static __always_inline bool ust_lh_tracked(struct ust_lh_env *r, __u64 what, __u8 mode)
{
	struct ust_lh_held_key k = { .tid = r->tid, .what = what };
	struct ust_lh_held_val *v;

	if (!ust_lh_tracking)
		return false;
	v = bpf_map_lookup_elem(&ust_lh_held, &k);
	if (v && (((mode & UST_FILTER_M_READ) && v->read) || ((mode & UST_FILTER_M_WRITE) && v->write)))
		return true;
	return (mode & UST_FILTER_M_WRITE) && ust_lh_spin_held(what);
}

static __always_inline bool ust_filter_cmp(__u64 v, const struct ust_filter_insn *in)
{
	bool sgn = in->flags & UST_FILTER_F_SIGNED;
	__s64 sv = (__s64)v, sa = (__s64)in->arg;

	switch (in->cmp) {
	case UST_FILTER_EQ:
		return v == in->arg;
	case UST_FILTER_NE:
		return v != in->arg;
	case UST_FILTER_LT:
		return sgn ? sv < sa : v < in->arg;
	case UST_FILTER_LE:
		return sgn ? sv <= sa : v <= in->arg;
	case UST_FILTER_GT:
		return sgn ? sv > sa : v > in->arg;
	case UST_FILTER_GE:
		return sgn ? sv >= sa : v >= in->arg;
	case UST_FILTER_BAND:
		return (v & in->arg) != 0;
	}
	return false;
}

/*
 * A field of the raw record.  The context is the record itself (its first
 * 8 bytes, the common fields, hold the pt_regs pointer while the program
 * runs), read through a helper because the offset is data.
 */
static __always_inline bool ust_lh_field(struct ust_lh_env *r, const struct ust_filter_insn *in)
{
	__u64 v = 0;
	__u8 sz = in->size;

	if (bpf_probe_read_kernel(&v, sizeof(v), (char *)r->ctx + in->off)) {
		UST_LH_COUNT(read_fail);
		return false;
	}
	/* Little-endian: the field is the low bytes; then sign-extend. */
	if (sz == 1)
		v = (in->flags & UST_FILTER_F_SIGNED) ? (__u64)(__s64)(__s8)v : (__u8)v;
	else if (sz == 2)
		v = (in->flags & UST_FILTER_F_SIGNED) ? (__u64)(__s64)(__s16)v : (__u16)v;
	else if (sz == 4)
		v = (in->flags & UST_FILTER_F_SIGNED) ? (__u64)(__s64)(__s32)v : (__u32)v;
	return ust_filter_cmp(v, in);
}

static __always_inline bool ust_lh_test(struct ust_lh_env *r, const struct ust_filter_insn *in)
{
	struct task_struct___lh *t = (void *)r->me;
	__u8 mode = in->flags & UST_FILTER_M_ANY;

	switch (in->op) {
	case UST_FILTER_OP_OWNER:
		if ((mode & UST_FILTER_M_WRITE) && ust_lh_owned(in->arg, r->me))
			return true;
		return ust_lh_tracked(r, in->arg, mode);
	case UST_FILTER_OP_MMAP:
		return ust_lh_mmap_held(r, mode);
	case UST_FILTER_OP_RCU:
		if (!bpf_core_field_exists(t->rcu_read_lock_nesting))
			return false;
		if (bpf_rdonly_cast)
			return UST_KCAST(struct task_struct___lh, r->me)->rcu_read_lock_nesting -
			       ust_lh_rcu_bias > 0;
		return BPF_CORE_READ(t, rcu_read_lock_nesting) - ust_lh_rcu_bias > 0;
	case UST_FILTER_OP_RCU_TRACE:
		if (!bpf_core_field_exists(t->trc_reader_nesting))
			return false;
		if (bpf_rdonly_cast)
			return UST_KCAST(struct task_struct___lh, r->me)->trc_reader_nesting > 0;
		return BPF_CORE_READ(t, trc_reader_nesting) > 0;
	case UST_FILTER_OP_TRACKED:
		if (in->arg == UST_LH_WHAT_SIGLOCK) {
			__u64 sh = (__u64)BPF_CORE_READ(t, sighand);

			return sh && ust_lh_tracked(r, sh + bpf_core_field_offset(struct sighand_struct___lh, siglock), mode);
		}
		return ust_lh_tracked(r, in->arg, mode);
	case UST_FILTER_OP_FIELD:
		return ust_lh_field(r, in);
	case UST_FILTER_OP_PID:
		return ust_filter_cmp(r->tid, in);
	case UST_FILTER_OP_AF_FILE:
		return ust_af_file(r, in->arg);
	case UST_FILTER_OP_AF_SWITCH:
		return ust_af_switch();
	case UST_FILTER_OP_AF_KERNEL:	/* tracepoint events have no sampled kernel IP */
		return false;
	}
	UST_LH_COUNT(bad_prog);
	return false;
}

/*
 * One node's test.  A global function, verified once on its own: as a
 * static one, inlined into the bpf_loop() callback, its branches were
 * explored anew with the callback's states (18k instructions on 6.18).
 */
__noinline int ust_lh_eval(struct ust_lh_env *r, const struct ust_filter_insn *in)
{
	if (!r || !in)
		return 0;
	return ust_lh_test(r, in);
}

/* One node; a bpf_loop() callback, so the verifier sees it once. */
static long ust_lh_step(__u32 i __ust_unused, void *data)
{
	struct ust_lh_run *r = data;
	const struct ust_filter_insn *in;
	__u32 pc = r->pc;
	__u8 next;
	bool res;

	if (pc >= UST_FILTER_MAX_INSNS) {
		r->verdict = UST_FILTER_REJECT;
		return 1;
	}
	in = &r->p->insn[pc];
	res = ust_lh_eval(&r->e, in);
	if (in->op < UST_FILTER_OP_FIELD &&	/* lock leaves only */
	    res == !(in->flags & UST_FILTER_F_NEGATED))
		r->mask |= 1U << (in->leaf & (UST_LH_MAX_LEAVES - 1));
	next = res ? in->t : in->f;
	if (next == UST_FILTER_ACCEPT || next == UST_FILTER_REJECT) {
		r->verdict = next;
		return 1;
	}
	if (next <= pc) {	/* only forward: the compiler never emits this */
		UST_LH_COUNT(bad_prog);
		r->verdict = UST_FILTER_REJECT;
		return 1;
	}
	r->pc = next;
	return 0;
}

static __always_inline bool ust_lh_followed(__u64 id)
{
	struct ust_bpfu_run *run = ust_bpfu_run_state();
	__u32 tgid = id >> 32;

	return run && (!run->filter_on || bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid));
}

/*
 * The cookie of a kept event's entry, by the unwinder's rules; *@later:
 * the stack is to be arranged by ust_bpfu_later (the caller tail-calls it).
 */
static __always_inline __u64 ust_lh_cookie(__u32 cpu, bool *later)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_task *st;
	__u32 act = UST_BPFU_ACT_NONE;	/* events: never "a sample in user code" */
	__u64 cookie;

	if (!ust_lh_stacks || (task->flags & PF_KTHREAD) || !task->mm)
		return 0;
	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return 0;
	cookie = ust_bpfu_take_cookie(task, st, cpu, 0, &act);
	*later = act == UST_BPFU_ACT_LATER;
	return cookie;
}

/*
 * Event @slot's filter on its record at @rec, in task @id at @me
 * (bpf_get_current_pid_tgid()'s and bpf_get_current_task()'s, which the
 * callers have): 0 dropped; 1 kept, *@hit filled; 2 kept, and its stack
 * is for ust_bpfu_later (a tail call).
 */
static __attribute__((noinline)) int ust_lh_filter_body(__u64 rec, __u32 slot, __u64 id, __u64 me,
							 struct ust_lh_hit *hit)
{
	struct ust_lh_run r = { .e.ctx = rec, .e.me = me };
	bool later = false;

	UST_LH_COUNT(runs);
	if (!ust_lh_followed(id))
		return 0;
	r.p = bpf_map_lookup_elem(&ust_lh_progs, &slot);
	if (!r.p) {
		UST_LH_COUNT(bad_prog);
		return 0;
	}
	r.e.tid = (__u32)id;
	if (r.p->flags & UST_FILTER_P_AF_FILE)
		ust_af_user_ip(&r.e);
	if (r.p->nr)
		bpf_loop(UST_FILTER_MAX_INSNS, ust_lh_step, &r, 0);
	else
		r.verdict = UST_FILTER_ACCEPT;
	if (r.verdict != UST_FILTER_ACCEPT)
		return 0;
	/*
	 * The clock and the CPU only now: most events a filter sees it drops
	 * (in a guest the clock is a paravirtual clock read).
	 * Perf takes the sample's time after the program: still not earlier.
	 */
	hit->ts = bpf_ktime_get_ns();
	hit->cpu = bpf_get_smp_processor_id();
	UST_LH_COUNT(kept);
	hit->tid = r.e.tid;
	hit->mask = r.mask;
	hit->slot = slot;
	if (bpf_rdonly_cast)	/* as the helper copies it, without a call */
		__builtin_memcpy(hit->comm, UST_KCAST(struct task_struct___lh, r.e.me)->comm,
				 sizeof(hit->comm));
	else
		bpf_get_current_comm(hit->comm, sizeof(hit->comm));
	hit->cookie = (r.p->flags & UST_FILTER_P_STACKS) ? ust_lh_cookie(hit->cpu, &later) : 0;
	return later ? 2 : 1;
}

SEC("tracepoint")
int ust_lh_filter(void *ctx)
{
	struct ust_lh_hit h, *hit;
	int ret;

	/* As the unwinder's programs, for the same reason (bpfu_cookie.bpf.h). */
	ust_bpfu_preempt_off();
	ret = ust_lh_filter_body((__u64)ctx, (__u32)bpf_get_attach_cookie(ctx),
				 bpf_get_current_pid_tgid(), (__u64)bpf_get_current_task(), &h);
	if (ret) {
		hit = bpf_ringbuf_reserve(&ust_lh_hits, sizeof(*hit), 0);
		if (hit) {
			*hit = h;
			bpf_ringbuf_submit(hit, 0);
		} else {
			/* The sample is still kept: user space shows it without the match. */
			UST_LH_COUNT(hit_drops);
		}
	}
	ust_bpfu_preempt_on();
	/* The hit is out, its cookie in it: the unwinder arranges the stack. */
	if (ret == 2)
		bpf_tail_call(ctx, &ust_lh_stack, 0);
	return ret != 0;
}

/* --- system-call events kept without perf (lockheld_abi.h) ------------ */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UST_LH_NR_SC);
	__type(key, __u32);
	__type(value, struct ust_lh_sc);
} ust_lh_sc SEC(".maps");

/* The record is built here before the filter runs: its fields are the filter's too. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_lh_hit_raw);
} ust_lh_scratch SEC(".maps");

/* The hits ring's reader is woken every ust_lh_wake_bytes a CPU wrote (ust_rb_flags()). */
const volatile __u64 ust_lh_wake_bytes;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ust_lh_unwoken SEC(".maps");

/*
 * @exit: 0 at sys_enter (@v the number), 1 at sys_exit (@v the return
 * value).  A kept event goes out whole in its hit; one the ring cannot
 * take is lost, and counted (raw_drops).
 */
static __always_inline int ust_lh_sys(struct pt_regs *regs, __u64 v, __u32 exit)
{
	struct ust_lh_hit_raw *x, *out;
	struct ust_lh_sc *sc;
	__u32 k = 0, nr, n;
	__u64 *a, id, me;
	int ret;

	nr = exit ? (__u32)regs->orig_ax : (__u32)v;
	if (nr >= UST_LH_NR_SC)
		return 0;
	sc = bpf_map_lookup_elem(&ust_lh_sc, &nr);
	if (!sc || !sc->slot1[exit])
		return 0;
	me = (__u64)bpf_get_current_task();
	if (bpf_rdonly_cast ? ust_bpfu_compat(UST_KCAST(struct task_struct, me)) :
			      ust_bpfu_compat(bpf_get_current_task_btf()))
		return 0;
	x = bpf_map_lookup_elem(&ust_lh_scratch, &k);
	if (!x)
		return 0;
	/* ftrace's syscall_trace_enter / syscall_trace_exit, common fields first. */
	*(__u16 *)x->rec = sc->type[exit];
	x->rec[2] = 0;		/* flags: the system call's context has interrupts on */
	x->rec[3] = 0;		/* preempt count */
	id = bpf_get_current_pid_tgid();
	*(__s32 *)(x->rec + 4) = (__s32)id;
	*(__s32 *)(x->rec + 8) = (__s32)nr;
	*(__u32 *)(x->rec + 12) = 0;
	a = (__u64 *)(x->rec + 16);
	if (exit) {
		a[0] = v;
		x->len = 24;
	} else {
		n = sc->nargs;
		if (n > 6)
			n = 6;
		/* x86-64's argument registers, as syscall_get_arguments() reads them. */
		a[0] = regs->di;
		a[1] = regs->si;
		a[2] = regs->dx;
		a[3] = regs->r10;
		a[4] = regs->r8;
		a[5] = regs->r9;
		x->len = 16 + 8 * n;
	}
	ust_bpfu_preempt_off();
	ret = ust_lh_filter_body((__u64)x->rec, sc->slot1[exit] - 1, id, me, &x->h);
	if (ret) {
		out = bpf_ringbuf_reserve(&ust_lh_hits, sizeof(*out), 0);
		if (out) {
			__builtin_memcpy(out, x, sizeof(*out));
			bpf_ringbuf_submit(out, ust_rb_flags(&ust_lh_unwoken, ust_lh_wake_bytes, sizeof(*out)));
		} else {
			UST_LH_COUNT(raw_drops);
		}
	}
	ust_bpfu_preempt_on();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ust_lh_sys_enter, struct pt_regs *regs, long id)
{
	(void)ctx;	/* BPF_PROG()'s */
	return ust_lh_sys(regs, (__u64)id, 0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ust_lh_sys_exit, struct pt_regs *regs, long ret)
{
	(void)ctx;
	return ust_lh_sys(regs, (__u64)ret, 1);
}

/*
 * The process followers of a recording without the unwinder (no stacks):
 * its children followed, its tgid forgotten when it dies, as the
 * unwinder's ust_bpfu_fork and ust_bpfu_exit do.
 */
SEC("raw_tp/sched_process_fork")
int ust_lh_fork(struct bpf_raw_tracepoint_args *ctx)
{
	ust_bpfu_follow_child((struct task_struct *)ctx->args[1]);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int ust_lh_exit(void *ctx __ust_unused)
{
	ust_bpfu_unfollow_exiting(bpf_get_current_task_btf());
	return 1;	/* 0 would drop the event for every perf user */
}

/*
 * Read side of current->mm->mmap_lock: mmap_read_lock() and friends trace
 * acquire_returned(mm, write=false, success) after taking it and released
 * (mm, false) before letting go; a downgrade traces a read acquire.  Only
 * the task's own mm counts: lock_held(mmap_lock) means current's.
 */
SEC("raw_tp/mmap_lock_acquire_returned")
int ust_lh_mmap_acquired(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___lh *t = (void *)bpf_get_current_task();
	__u64 mm = ctx->args[0];
	struct ust_lh_mmap_state *st;

	__u8 a1 = (__u8)ctx->args[1], a2 = (__u8)ctx->args[2], w = a1, ok = a2;

	/*
	 * Constant offsets only (the verifier refuses variable ones into
	 * ctx): args 1 and 2 exist either way, args[3] only with memcg_path.
	 */
	if (ust_lh_mmap_argoff) {
		w = a2;
		ok = (__u8)ctx->args[3];
	}
	if (w || !ok || mm != (__u64)BPF_CORE_READ(t, mm))
		return 0;
	st = bpf_task_storage_get(&ust_lh_mmap, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return 0;
	if (st->mm != mm) {
		st->mm = mm;
		st->read = 0;
	}
	st->read++;
	return 0;
}

SEC("raw_tp/mmap_lock_released")
int ust_lh_mmap_released(struct bpf_raw_tracepoint_args *ctx)
{
	struct ust_lh_mmap_state *st;

	/* (mm, write), or (mm, memcg_path, write): as in the acquire. */
	__u8 w = (__u8)ctx->args[1];

	if (ust_lh_mmap_argoff)
		w = (__u8)ctx->args[2];

	if (w)
		return 0;
	st = bpf_task_storage_get(&ust_lh_mmap, bpf_get_current_task_btf(), 0, 0);
	/* A hold taken before we attached ends here: never below zero. */
	if (st && st->mm == ctx->args[0] && st->read > 0)
		st->read--;
	return 0;
}

/*
 * Calibration: attached like the filter to an event the recorder itself
 * causes outside any RCU read side (sys_enter_getppid), it sees only what
 * the runtime holds.
 */
SEC("tracepoint")
int ust_lh_calib(void *ctx __ust_unused)
{
	struct task_struct___lh *t = (void *)bpf_get_current_task();

	if ((__u32)bpf_get_current_pid_tgid() != ust_lh_calib_tid)
		return 0;
	if (bpf_core_field_exists(t->rcu_read_lock_nesting))
		ust_lh_calib_rcu = BPF_CORE_READ(t, rcu_read_lock_nesting);
	if (bpf_core_field_exists(t->trc_reader_nesting))
		ust_lh_calib_trc = BPF_CORE_READ(t, trc_reader_nesting);
	return 1;	/* other perf users of the tracepoint keep their samples */
}
