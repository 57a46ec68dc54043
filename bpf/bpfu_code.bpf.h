/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A followed process's code, as BPF itself keeps it: the executable file
 * mappings its exec() and its mmap()s made, per tgid.
 *
 * Why: a walk in a perf sample's interrupt gets one bpf_find_vma() (the
 * mmap lock's release then waits in an irq_work); a process that maps
 * anything (an allocator's mmap, a dlopen) moves the mm's sequence, its
 * walks' VMA slots must be looked up again, and every lookup after the
 * first is refused.  Such a walk parked, copying the stack for the
 * recorder to finish (python3 warm, every table cached: 258 parks, 1 MB
 * copied in a 0.7 s run).  Here the walk finds the mapping instead, with
 * no lock: a table of at most UST_BPFU_CODE_VMAS mappings, filled by
 * each lookup a walk made (ust_bpfu_walk_vma()) and at each
 * mmap(PROT_EXEC) of a file (ust_bpfu_mmap_exec()), emptied of
 * whatever any mmap, munmap, mremap or mprotect without PROT_EXEC covers
 * (their exits, in ust_bpfu_sys_exit_body()), copied to a child at fork,
 * dropped with the last thread, reset at exec.  An entry is what
 * bpf_find_vma() said at the time, vm_area_struct included: a walk's slot
 * filled from it is rechecked as any other (ust_bpfu_walk_recheck_vma()).
 * Only a lookup that was refused uses it: bpf_find_vma()'s answer stays
 * the truth.  Not filled at exec from the exec's own lookups: in the vm
 * lane's guests (9p root) the program's file read at sched_process_exec
 * is not the one later lookups and the recorder see (every deep40 stack
 * of live-cfi-script parked for a table keyed by the other).
 */
#ifndef UST_BPFU_CODE_BPF_H
#define UST_BPFU_CODE_BPF_H

/* Mappings kept per process: a program, ld.so, libc and a few dozen
 * libraries (python3 with six extension modules maps 19). */
#define UST_BPFU_CODE_VMAS	32	/* a power of two */

struct ust_bpfu_code {
	struct ust_bpfu_vma v[UST_BPFU_CODE_VMAS];	/* found 0: a free slot */
	__u32 next;			/* the slot taken when none is free */
	__u32 pad;
};

/*
 * 2 KiB a process, preallocated (a perf sample's program may only use
 * preallocated hash maps before 6.1's BPF allocator); least recently used
 * first out when a system-wide recording meets more processes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ust_bpfu_code);
} ust_bpfu_code SEC(".maps");

/* All zeros: what a process's table starts as (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_bpfu_code);
} ust_bpfu_code_zero SEC(".maps");

/* @tgid's table, made empty first when @create and there is none. */
static __always_inline struct ust_bpfu_code *ust_bpfu_code_of(__u32 tgid, bool create)
{
	struct ust_bpfu_code *c = bpf_map_lookup_elem(&ust_bpfu_code, &tgid);
	__u32 zero = 0;
	void *z;

	if (c || !create)
		return c;
	z = bpf_map_lookup_elem(&ust_bpfu_code_zero, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&ust_bpfu_code, &tgid, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&ust_bpfu_code, &tgid);
}

/*
 * The loops over a table are bpf_loop() callbacks: verified once, where a
 * bounded loop of 32 with a branch in it was verified 32 times over in
 * every program calling it (sys_exit: 488k instructions processed).
 */
struct ust_bpfu_code_loop {
	struct ust_bpfu_code *c;
	__u64 lo, hi;			/* the range looked for: overlaps, or [addr, addr + 1) */
	__u32 free;			/* a free slot seen (UST_BPFU_CODE_VMAS: none) */
	__u32 hit;			/* the slot holding lo (UST_BPFU_CODE_VMAS: none) */
};

/* Slot @k of the loop's table, or NULL past the end. */
static __always_inline struct ust_bpfu_vma *ust_bpfu_code_slot(struct ust_bpfu_code_loop *l, __u32 k)
{
	if (k >= UST_BPFU_CODE_VMAS || !l->c)
		return NULL;
	/* The mask bounds k for the verifier, which the compare above does
	 * not when the compiler indexes by a fresh copy of it. */
	barrier_var(k);
	k &= UST_BPFU_CODE_VMAS - 1;
	return &l->c->v[k];
}

/* Slot @i: emptied if it overlaps [lo, hi); the first free one noted. */
static long ust_bpfu_code_forget_cb(__u32 i, void *data)
{
	struct ust_bpfu_code_loop *l = data;
	struct ust_bpfu_vma *v = ust_bpfu_code_slot(l, i);
	__u32 k = i;

	if (!v)
		return 1;
	if (v->found && v->start < l->hi && l->lo < v->end)
		v->found = 0;
	if (!v->found && l->free == UST_BPFU_CODE_VMAS)
		l->free = k;
	return 0;
}

/* Slot @i: the one holding lo ends the loop. */
static long ust_bpfu_code_find_cb(__u32 i, void *data)
{
	struct ust_bpfu_code_loop *l = data;
	struct ust_bpfu_vma *v = ust_bpfu_code_slot(l, i);
	__u32 k = i;

	if (!v)
		return 1;
	if (v->found && l->lo >= v->start && l->lo < v->end) {
		l->hit = k;
		return 1;
	}
	return 0;
}

/* [@lo, @lo + @len) is no longer what @tgid's table says it is. */
__noinline int ust_bpfu_code_forget(__u32 tgid, __u64 lo, __u64 len)
{
	struct ust_bpfu_code_loop l = {
		.c = ust_bpfu_code_of(tgid, false), .lo = lo, .hi = lo + len,
		.free = UST_BPFU_CODE_VMAS,
	};

	if (l.c && l.hi > lo)
		bpf_loop(UST_BPFU_CODE_VMAS, ust_bpfu_code_forget_cb, &l, 0);
	return 0;
}

/* @v (found, executable, a file's) into @tgid's table, over what it overlaps. */
__noinline int ust_bpfu_code_add(__u32 tgid, const struct ust_bpfu_vma *v)
{
	struct ust_bpfu_code_loop l = { .free = UST_BPFU_CODE_VMAS };
	__u32 k;

	if (!v || !v->found || !v->exec || !v->ino || v->end <= v->start)
		return 0;
	l.c = ust_bpfu_code_of(tgid, true);
	if (!l.c)
		return 0;
	l.lo = v->start;
	l.hi = v->end;
	bpf_loop(UST_BPFU_CODE_VMAS, ust_bpfu_code_forget_cb, &l, 0);
	k = l.free < UST_BPFU_CODE_VMAS ? l.free : l.c->next++;
	/* The mask, not a compare: what the verifier bounds k by (a power of two). */
	k &= UST_BPFU_CODE_VMAS - 1;
	__builtin_memcpy(&l.c->v[k], v, sizeof(*v));
	return 0;
}

/* The mapping of @tgid's table holding @addr into *@out: 1, or 0 (none). */
__noinline int ust_bpfu_code_find(__u32 tgid, __u64 addr, struct ust_bpfu_vma *out)
{
	struct ust_bpfu_code_loop l = {
		.c = bpf_map_lookup_elem(&ust_bpfu_code, &tgid), .lo = addr,
		.hit = UST_BPFU_CODE_VMAS,
	};
	__u32 k;

	if (!l.c || !out)
		return 0;
	bpf_loop(UST_BPFU_CODE_VMAS, ust_bpfu_code_find_cb, &l, 0);
	k = l.hit;
	if (k >= UST_BPFU_CODE_VMAS)
		return 0;
	k &= UST_BPFU_CODE_VMAS - 1;
	__builtin_memcpy(out, &l.c->v[k], sizeof(*out));
	return 1;
}

/* A new process (not a thread) has its parent's mappings until it execs. */
static __always_inline void ust_bpfu_code_fork(struct task_struct *child)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, ctgid = BPF_CORE_READ(child, tgid);
	struct ust_bpfu_code *c;

	if (ctgid == tgid)
		return;
	c = bpf_map_lookup_elem(&ust_bpfu_code, &tgid);
	if (c)
		bpf_map_update_elem(&ust_bpfu_code, &ctgid, c, BPF_ANY);
}

#endif
