/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The held-lock state both lock_held() objects declare: the trackers
 * (lockheld_track.bpf.c) write it, the filter (lockheld.bpf.c) reads it,
 * and user space hands the trackers' maps to the filter by fd, so one
 * definition keeps the two in step.  Layouts: lockheld_abi.h.
 */
#ifndef UST_LH_MAPS_H
#define UST_LH_MAPS_H

/*
 * Every tracked lock but spinlocks (sleeping locks, rwlocks, SRCU), per
 * task and lock address, slab cache or type tag.  Not preallocated: a
 * preallocated hash takes a per-CPU freelist spinlock in update and
 * delete, and the spinlock hooks run inside those calls (on the bucket and
 * freelist locks): a nested update would take the freelist lock its caller
 * holds and hang the CPU.  The allocator of the other kind takes no lock,
 * and the bucket locks are guarded by the map's own recursion counter (a
 * nested update fails with -EBUSY; it only ever concerns the map's own
 * locks).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct ust_lh_held_key);
	__type(value, struct ust_lh_held_val);
} ust_lh_held SEC(".maps");

/* Spinlocks: slots per CPU (see lockheld_abi.h), never a hash map. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_lh_spin_cpu);
} ust_lh_spin SEC(".maps");

#endif /* UST_LH_MAPS_H */
