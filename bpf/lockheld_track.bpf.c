// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Held-lock tracking for lock_held() specs that owner inspection cannot
 * decide: lock types and flags (mutex, spinlock, rwsem:R, ...), slab caches
 * (&dentry), read-held rwsems and the locks without an owner field
 * (spinlocks, rwlocks, semaphores, SRCU), and the grace-period waits
 * (rcu:W, srcu:W).
 *
 * fexit on each acquire function (after it succeeded), fentry on each
 * release function: ust_lh_held counts, per task, each lock address, its
 * type tag and, for slab specs, its kmem_cache, read and write apart;
 * spinlocks go to slots per CPU instead (ust_lh_spin, lockheld_abi.h says
 * why).  The filter (lockheld.bpf.c, same maps by fd) looks them up.  Limits, as in the
 * kernel series this follows: locks taken before the programs were
 * attached are unknown until released and taken again; inlined lock
 * functions (CONFIG_INLINE_SPIN_LOCK and friends) have no entry point, so
 * user space (lib/lockheld/lh_track.c) enables a family only when the kernel's BTF
 * has its acquire functions and every release function.
 *
 * Every program is loaded only on demand: kernels that refuse tracing
 * programs (EPERM before the verifier) never see them, and the specs that
 * need them are refused before recording starts.
 */
#include "ust_bpfu_kern.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lockheld_abi.h"
#include "lockheld_kern.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* BPF_PROG() passes ctx to every body; most do not need it. */
#pragma clang diagnostic ignored "-Wunused-parameter"

/*
 * Defined, if empty, not only declared: libbpf matches a kfunc's prototype
 * against the kernel's, and a forward declaration is another kind of type
 * than the kernel's struct (the object then did not load at all).
 */
struct kmem_cache {
	int unused___ust;
} __attribute__((preserve_access_index));

/* Count slab caches too (a slab spec is in the filter). */
const volatile bool ust_lh_track_slab;

/* 6.13+: the cache an object belongs to; weak so older kernels load. */
extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

/*
 * Before it, the same walk by hand: the direct map's address to its
 * struct page in the vmemmap, to the head page, which a slab overlays
 * with its struct slab.  x86-64's layout variables come from kallsyms
 * (untyped, weak: user space refuses slab specs where they are missing).
 */
extern const void page_offset_base __ksym __weak;
extern const void vmemmap_base __ksym __weak;
extern const void max_pfn __ksym __weak;

struct page___lh {
	unsigned long compound_head;	/* bit 0: a tail page, the rest its head */
} __attribute__((preserve_access_index));

struct slab___lh {
	struct kmem_cache *slab_cache;
} __attribute__((preserve_access_index));

/*
 * The kmem_cache of the slab object at @addr, or 0.  The page is not
 * checked to be a slab (how a page says so changed across versions): in
 * any other page that word is some other pointer or counter, and the
 * filter only compares it with the address of the cache a spec names.
 */
static __always_inline __u64 ust_lh_slab_cache(__u64 addr)
{
	__u64 pob = 0, vmb = 0, maxpfn = 0, pfn, page, head = 0, cache = 0;

	/*
	 * The hooked functions' lock argument is a typed kernel pointer to
	 * the verifier, which allows no arithmetic on it, nor passing it
	 * where a number goes (bpf_get_kmem_cache()'s u64): a copy through a
	 * helper is a plain number.
	 */
	if (bpf_probe_read_kernel(&addr, sizeof(addr), &addr))
		return 0;
	if (bpf_get_kmem_cache)
		return (__u64)bpf_get_kmem_cache(addr);
	if (!&page_offset_base || !&vmemmap_base || !&max_pfn ||
	    bpf_probe_read_kernel(&pob, sizeof(pob), &page_offset_base) ||
	    bpf_probe_read_kernel(&vmb, sizeof(vmb), &vmemmap_base) ||
	    bpf_probe_read_kernel(&maxpfn, sizeof(maxpfn), &max_pfn) ||
	    addr < pob)
		return 0;
	pfn = (addr - pob) >> 12;
	if (pfn >= maxpfn)	/* not in the direct map: static data, vmalloc, stacks */
		return 0;
	page = vmb + pfn * bpf_core_type_size(struct page___lh);
	if (bpf_probe_read_kernel(&head, sizeof(head), (void *)(page +
				  bpf_core_field_offset(struct page___lh, compound_head))))
		return 0;
	if (head & 1)
		page = head - 1;
	if (bpf_probe_read_kernel(&cache, sizeof(cache), (void *)(page +
				  bpf_core_field_offset(struct slab___lh, slab_cache))))
		return 0;
	return cache;
}

#include "lockheld_maps.h"

/*
 * The recorder's tgids (the filter's ust_bpfu_tgids, by fd), and whether
 * to look at them: when recording a command or pids, only their locks are
 * counted.  Every other task then costs one lookup per lock call, and
 * its lock calls never reach ust_lh_held.
 */
#include "tgids.bpf.h"

volatile __u32 ust_lh_track_follow;

static __always_inline void ust_lh_count(__u32 tid, __u64 what, bool write, int delta)
{
	struct ust_lh_held_key k = { .tid = tid, .what = what };
	struct ust_lh_held_val *v, zero = {};
	__u32 *c;

	v = bpf_map_lookup_elem(&ust_lh_held, &k);
	if (!v) {
		if (delta < 0)	/* taken before we attached */
			return;
		bpf_map_update_elem(&ust_lh_held, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&ust_lh_held, &k);
		if (!v)
			return;
	}
	c = write ? &v->write : &v->read;
	if (delta > 0)
		__sync_fetch_and_add(c, 1);
	else if (*c)
		__sync_fetch_and_add(c, -1);
	if (!v->read && !v->write)
		bpf_map_delete_elem(&ust_lh_held, &k);
}

static __always_inline void ust_lh_note(void *lock, __u32 type, bool write, int delta)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = (__u32)(id >> 32);

	if (ust_lh_track_follow && !bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid))
		return;
	ust_lh_count(tid, (__u64)lock, write, delta);
	ust_lh_count(tid, type, write, delta);
	if (ust_lh_track_slab) {
		__u64 cache = ust_lh_slab_cache((__u64)lock);

		if (cache)
			ust_lh_count(tid, cache, write, delta);
	}
}

/*
 * A spinlock taken: into a free slot of this CPU, or a stale one: left
 * behind by a context above this one, or naming a lock that is unlocked
 * (lockheld_abi.h).  Reusing the latter keeps releases missed in this
 * context from filling the slots for the rest of the run.  Only the followed tasks' locks
 * go in (as for ust_lh_held), but every release is looked for: the task
 * releasing a lock is not always the one that took it (the run-queue lock
 * across a context switch).  No map update, so no lock is taken here.
 * Beyond UST_LH_SPIN_SLOTS nested spinlocks, the innermost are not seen.
 */
static __always_inline void ust_lh_spin_take(void *lock)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 k = 0, tgid = (__u32)(id >> 32), ctx;
	struct ust_lh_spin_cpu *c;
	__u64 cache = 0;
	int i;

	if (ust_lh_track_follow && !bpf_map_lookup_elem(&ust_bpfu_tgids, &tgid))
		return;
	c = bpf_map_lookup_elem(&ust_lh_spin, &k);
	if (!c)
		return;
	ctx = ust_lh_ctx();
	if (ust_lh_track_slab)
		cache = ust_lh_slab_cache((__u64)lock);
	for (i = 0; i < UST_LH_SPIN_SLOTS; i++) {
		struct ust_lh_spin_slot *sl = &c->slot[i];
		__u64 held = *(volatile __u64 *)&sl->lock;

		if (held && sl->ctx <= ctx && !ust_lh_spin_unlocked(held))
			continue;
		*(volatile __u64 *)&sl->lock = 0;	/* a stale one: free it first */
		barrier();
		sl->cache = cache;
		sl->ctx = ctx;
		barrier();	/* the lock last: the filter reads it first */
		*(volatile __u64 *)&sl->lock = (__u64)lock;
		/*
		 * Again: an interrupt between the stores above may have taken
		 * and freed this slot, leaving its own context in it.  From
		 * here on it sees the slot in use and leaves it alone.
		 */
		barrier();
		sl->cache = cache;
		sl->ctx = ctx;
		return;
	}
}

static __always_inline void ust_lh_spin_drop(void *lock)
{
	struct ust_lh_spin_cpu *c;
	__u32 k = 0;
	int i;

	c = bpf_map_lookup_elem(&ust_lh_spin, &k);
	if (!c)
		return;
	for (i = UST_LH_SPIN_SLOTS - 1; i >= 0; i--) {
		if (c->slot[i].lock == (__u64)lock) {
			*(volatile __u64 *)&c->slot[i].lock = 0;
			return;
		}
	}
}

#define UST_LH_SPIN_ACQ(fn)							\
	SEC("fexit/" #fn)							\
	int BPF_PROG(ust_lh_x_##fn, void *lock)				\
	{									\
		ust_lh_spin_take(lock);						\
		return 0;							\
	}
#define UST_LH_SPIN_REL(fn)							\
	SEC("fentry/" #fn)							\
	int BPF_PROG(ust_lh_e_##fn, void *lock)				\
	{									\
		ust_lh_spin_drop(lock);						\
		return 0;							\
	}

/* Acquired unconditionally / when the return value says so / released. */
#define UST_LH_ACQ(fn, type, write)						\
	SEC("fexit/" #fn)							\
	int BPF_PROG(ust_lh_x_##fn, void *lock)				\
	{									\
		ust_lh_note(lock, type, write, 1);				\
		return 0;							\
	}
#define UST_LH_ACQ_IF(fn, type, write, ok)					\
	SEC("fexit/" #fn)							\
	int BPF_PROG(ust_lh_x_##fn, void *lock, long ret)			\
	{									\
		if ((int)ret == (ok))						\
			ust_lh_note(lock, type, write, 1);			\
		return 0;							\
	}
#define UST_LH_REL(fn, type, write)						\
	SEC("fentry/" #fn)							\
	int BPF_PROG(ust_lh_e_##fn, void *lock)				\
	{									\
		ust_lh_note(lock, type, write, -1);				\
		return 0;							\
	}

/* mutex */
UST_LH_ACQ(mutex_lock, UST_LH_T_MUTEX, true)
UST_LH_ACQ(mutex_lock_io, UST_LH_T_MUTEX, true)
UST_LH_ACQ_IF(mutex_lock_interruptible, UST_LH_T_MUTEX, true, 0)
UST_LH_ACQ_IF(mutex_lock_killable, UST_LH_T_MUTEX, true, 0)
UST_LH_ACQ_IF(mutex_trylock, UST_LH_T_MUTEX, true, 1)
UST_LH_REL(mutex_unlock, UST_LH_T_MUTEX, true)

/* rw_semaphore */
UST_LH_ACQ(down_read, UST_LH_T_RWSEM, false)
UST_LH_ACQ_IF(down_read_interruptible, UST_LH_T_RWSEM, false, 0)
UST_LH_ACQ_IF(down_read_killable, UST_LH_T_RWSEM, false, 0)
UST_LH_ACQ_IF(down_read_trylock, UST_LH_T_RWSEM, false, 1)
UST_LH_ACQ(down_write, UST_LH_T_RWSEM, true)
UST_LH_ACQ_IF(down_write_killable, UST_LH_T_RWSEM, true, 0)
UST_LH_ACQ_IF(down_write_trylock, UST_LH_T_RWSEM, true, 1)
UST_LH_REL(up_read, UST_LH_T_RWSEM, false)
UST_LH_REL(up_write, UST_LH_T_RWSEM, true)

SEC("fentry/downgrade_write")
int BPF_PROG(ust_lh_e_downgrade_write, void *lock)
{
	ust_lh_note(lock, UST_LH_T_RWSEM, true, -1);
	ust_lh_note(lock, UST_LH_T_RWSEM, false, 1);
	return 0;
}

/* spinlock_t / raw_spinlock_t (out of line only) */
UST_LH_SPIN_ACQ(_raw_spin_lock)
UST_LH_SPIN_ACQ(_raw_spin_lock_irq)
UST_LH_SPIN_ACQ(_raw_spin_lock_bh)
UST_LH_SPIN_ACQ(_raw_spin_lock_irqsave)
SEC("fexit/_raw_spin_trylock")
int BPF_PROG(ust_lh_x__raw_spin_trylock, void *lock, long ret)
{
	if ((int)ret == 1)
		ust_lh_spin_take(lock);
	return 0;
}
UST_LH_SPIN_REL(_raw_spin_unlock)
UST_LH_SPIN_REL(_raw_spin_unlock_irq)
UST_LH_SPIN_REL(_raw_spin_unlock_bh)
UST_LH_SPIN_REL(_raw_spin_unlock_irqrestore)

/* rwlock_t */
UST_LH_ACQ(_raw_read_lock, UST_LH_T_RWLOCK, false)
UST_LH_ACQ(_raw_read_lock_irq, UST_LH_T_RWLOCK, false)
UST_LH_ACQ(_raw_read_lock_bh, UST_LH_T_RWLOCK, false)
UST_LH_ACQ(_raw_read_lock_irqsave, UST_LH_T_RWLOCK, false)
UST_LH_ACQ_IF(_raw_read_trylock, UST_LH_T_RWLOCK, false, 1)
UST_LH_ACQ(_raw_write_lock, UST_LH_T_RWLOCK, true)
UST_LH_ACQ(_raw_write_lock_irq, UST_LH_T_RWLOCK, true)
UST_LH_ACQ(_raw_write_lock_bh, UST_LH_T_RWLOCK, true)
UST_LH_ACQ(_raw_write_lock_irqsave, UST_LH_T_RWLOCK, true)
UST_LH_ACQ_IF(_raw_write_trylock, UST_LH_T_RWLOCK, true, 1)
UST_LH_REL(_raw_read_unlock, UST_LH_T_RWLOCK, false)
UST_LH_REL(_raw_read_unlock_irq, UST_LH_T_RWLOCK, false)
UST_LH_REL(_raw_read_unlock_bh, UST_LH_T_RWLOCK, false)
UST_LH_REL(_raw_read_unlock_irqrestore, UST_LH_T_RWLOCK, false)
UST_LH_REL(_raw_write_unlock, UST_LH_T_RWLOCK, true)
UST_LH_REL(_raw_write_unlock_irq, UST_LH_T_RWLOCK, true)
UST_LH_REL(_raw_write_unlock_bh, UST_LH_T_RWLOCK, true)
UST_LH_REL(_raw_write_unlock_irqrestore, UST_LH_T_RWLOCK, true)

/* rt_mutex */
UST_LH_ACQ(rt_mutex_lock, UST_LH_T_RTMUTEX, true)
UST_LH_ACQ_IF(rt_mutex_lock_interruptible, UST_LH_T_RTMUTEX, true, 0)
UST_LH_ACQ_IF(rt_mutex_lock_killable, UST_LH_T_RTMUTEX, true, 0)
UST_LH_ACQ_IF(rt_mutex_trylock, UST_LH_T_RTMUTEX, true, 1)
UST_LH_REL(rt_mutex_unlock, UST_LH_T_RTMUTEX, true)

/* percpu_rw_semaphore: the write side (the read fast path is inline) */
UST_LH_ACQ(percpu_down_write, UST_LH_T_PERCPU_RWSEM, true)
UST_LH_REL(percpu_up_write, UST_LH_T_PERCPU_RWSEM, true)

/* semaphore: down_trylock() returns 0 on success */
UST_LH_ACQ(down, UST_LH_T_SEMAPHORE, true)
UST_LH_ACQ_IF(down_interruptible, UST_LH_T_SEMAPHORE, true, 0)
UST_LH_ACQ_IF(down_killable, UST_LH_T_SEMAPHORE, true, 0)
UST_LH_ACQ_IF(down_trylock, UST_LH_T_SEMAPHORE, true, 0)
UST_LH_REL(up, UST_LH_T_SEMAPHORE, true)

SEC("fexit/down_timeout")
int BPF_PROG(ust_lh_x_down_timeout, void *lock, long timeout, long ret)
{
	if ((int)ret == 0)
		ust_lh_note(lock, UST_LH_T_SEMAPHORE, true, 1);
	return 0;
}

/* SRCU read side: the out-of-line entry points */
UST_LH_ACQ(__srcu_read_lock, UST_LH_T_SRCU, false)
UST_LH_REL(__srcu_read_unlock, UST_LH_T_SRCU, false)

/* Grace-period waits: "held" while inside (rcu:W, srcu:W). */
#define UST_LH_WAIT(fn, type, arg)						\
	SEC("fentry/" #fn)							\
	int BPF_PROG(ust_lh_e_##fn)						\
	{									\
		ust_lh_note((void *)(arg), type, true, 1);			\
		return 0;							\
	}									\
	SEC("fexit/" #fn)							\
	int BPF_PROG(ust_lh_x_##fn)						\
	{									\
		ust_lh_note((void *)(arg), type, true, -1);			\
		return 0;							\
	}

UST_LH_WAIT(synchronize_rcu, UST_LH_T_RCU_GP, UST_LH_T_RCU_GP)
UST_LH_WAIT(synchronize_rcu_expedited, UST_LH_T_RCU_GP, UST_LH_T_RCU_GP)
UST_LH_WAIT(rcu_barrier, UST_LH_T_RCU_GP, UST_LH_T_RCU_GP)

SEC("fentry/synchronize_srcu")
int BPF_PROG(ust_lh_e_synchronize_srcu, void *ssp)
{
	ust_lh_note(ssp, UST_LH_T_SRCU_GP, true, 1);
	return 0;
}

SEC("fexit/synchronize_srcu")
int BPF_PROG(ust_lh_x_synchronize_srcu, void *ssp)
{
	ust_lh_note(ssp, UST_LH_T_SRCU_GP, true, -1);
	return 0;
}
